//! Calling a language model for strict-JSON answers, with bounded, visible cost.
//!
//! This crate owns the provider layer of cairn: the `[llm]` configuration, one request shape
//! per provider (OpenAI Responses API with `text.format` json_schema, Anthropic Messages API with
//! a forced tool call, Ollama's chat API with a JSON-schema `format`, or any command that reads
//! the prompt on stdin and prints JSON), validation of the answer against the schema with one
//! retry that quotes the validation error, timeouts, exponential backoff on 429/5xx, and token
//! usage reporting. Every process it starts carries `CAIRN_INSIDE=1`, so cairn's own hooks inside
//! it do nothing. It must not decide what to ask (prompts are built by the extraction and
//! consolidation code), touch the database, or read transcripts; it never runs on the hook or
//! recall paths.

mod command;
mod config;
mod http;
mod schema;

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

pub use config::{LlmConfig, ProviderKind, presets};
pub use schema::validate;

/// The environment marker set on every process cairn starts.
pub const INSIDE_ENV: &str = "CAIRN_INSIDE";

/// What went wrong talking to a model.
#[derive(Debug, thiserror::Error)]
pub enum LlmError {
    #[error("no LLM provider is configured (set [llm] provider in config.toml)")]
    NotConfigured,
    #[error("configuration: {0}")]
    Config(String),
    #[error("the API key variable {0} is not set")]
    MissingKey(String),
    #[error("request to {url} failed: {message}")]
    Transport { url: String, message: String },
    #[error("{url} answered HTTP {status}: {body}")]
    Status {
        url: String,
        status: u16,
        body: String,
        /// The wait the provider asked for (`Retry-After`, in seconds), if any.
        retry_after: Option<Duration>,
    },
    #[error("timed out after {0:?}")]
    Timeout(Duration),
    #[error("the model's answer is not valid: {0}")]
    Invalid(String),
    /// Every answer was invalid; the provider billed them all the same (`usage`).
    #[error("the model's answer is not valid: {reason}")]
    InvalidAnswer { reason: String, usage: Usage },
    #[error("command failed: {0}")]
    Command(String),
}

impl LlmError {
    /// The tokens the failed request was billed for (invalid answers are paid for too).
    pub fn usage(&self) -> Usage {
        match self {
            LlmError::InvalidAnswer { usage, .. } => *usage,
            _ => Usage::default(),
        }
    }
}

/// A request for one JSON object matching `schema`.
#[derive(Debug, Clone)]
pub struct JsonRequest {
    pub system: String,
    pub prompt: String,
    /// A short identifier for the schema (`[a-zA-Z0-9_-]`).
    pub schema_name: String,
    pub schema: Value,
    pub max_output_tokens: u32,
}

/// Tokens a call used, as the provider reported them (0 when it did not).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct Usage {
    pub input_tokens: u64,
    pub output_tokens: u64,
}

impl Usage {
    pub fn total(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }
    fn add(&mut self, o: Usage) {
        self.input_tokens += o.input_tokens;
        self.output_tokens += o.output_tokens;
    }
}

/// A validated answer.
#[derive(Debug, Clone)]
pub struct JsonAnswer {
    pub value: Value,
    /// All attempts together (a retry costs tokens too).
    pub usage: Usage,
    pub attempts: u32,
}

/// One provider call: the raw text the model produced and its usage.
pub(crate) struct RawAnswer {
    pub text: String,
    pub usage: Usage,
}

/// A configured model client.
pub struct LlmClient {
    config: LlmConfig,
}

impl LlmClient {
    pub fn new(config: LlmConfig) -> Result<LlmClient, LlmError> {
        config.check()?;
        Ok(LlmClient { config })
    }

    pub fn config(&self) -> &LlmConfig {
        &self.config
    }

    /// Asks for a JSON object matching `req.schema`. An answer that is not JSON or does not
    /// match is retried once with the validation error appended to the prompt; 429 and 5xx
    /// answers are retried with exponential backoff.
    pub fn complete_json(&self, req: &JsonRequest) -> Result<JsonAnswer, LlmError> {
        let mut usage = Usage::default();
        let mut prompt = req.prompt.clone();
        let mut last_err = String::new();
        for attempt in 1..=2u32 {
            let r = JsonRequest {
                prompt: prompt.clone(),
                ..req.clone()
            };
            let raw = self.call_with_backoff(&r)?;
            usage.add(raw.usage);
            match parse_json_answer(&raw.text).and_then(|v| {
                schema::validate(&req.schema, &v)
                    .map(|()| v)
                    .map_err(|e| e.to_string())
            }) {
                Ok(value) => {
                    return Ok(JsonAnswer {
                        value,
                        usage,
                        attempts: attempt,
                    });
                }
                Err(e) => {
                    last_err = e;
                    prompt = format!(
                        "{}\n\nYour previous answer was rejected: {last_err}\nAnswer again with one JSON object that matches the schema exactly, and nothing else.",
                        req.prompt
                    );
                }
            }
        }
        Err(LlmError::InvalidAnswer {
            reason: last_err,
            usage,
        })
    }

    fn call_with_backoff(&self, req: &JsonRequest) -> Result<RawAnswer, LlmError> {
        let mut delay = self.config.backoff_base();
        let retries = self.config.max_retries;
        let mut n = 0;
        loop {
            let r = match self.config.provider {
                ProviderKind::None => Err(LlmError::NotConfigured),
                ProviderKind::Command => command::call(&self.config, req),
                _ => http::call(&self.config, req),
            };
            // The provider's own Retry-After is honoured (up to a minute) when it asks longer.
            let asked = match &r {
                Err(LlmError::Status {
                    status,
                    retry_after,
                    ..
                }) if retryable(*status) && n < retries => *retry_after,
                Err(LlmError::Transport { .. }) if n < retries => None,
                _ => return r,
            };
            n += 1;
            std::thread::sleep(asked.map_or(delay, |a| a.min(Duration::from_secs(60)).max(delay)));
            delay = (delay * 2).min(Duration::from_secs(60));
        }
    }
}

fn retryable(status: u16) -> bool {
    status == 429 || (500..600).contains(&status)
}

/// The JSON object in a model's text: the whole text, or a fenced ```json block, or the outermost
/// `{…}` span (models sometimes add prose around it).
fn parse_json_answer(text: &str) -> Result<Value, String> {
    let t = text.trim();
    if let Ok(v) = serde_json::from_str::<Value>(t) {
        return Ok(v);
    }
    let unfenced = t
        .strip_prefix("```json")
        .or_else(|| t.strip_prefix("```"))
        .and_then(|r| r.trim_end().strip_suffix("```"));
    if let Some(u) = unfenced
        && let Ok(v) = serde_json::from_str::<Value>(u.trim())
    {
        return Ok(v);
    }
    if let (Some(a), Some(b)) = (t.find('{'), t.rfind('}'))
        && a < b
        && let Ok(v) = serde_json::from_str::<Value>(&t[a..=b])
    {
        return Ok(v);
    }
    let mut preview: String = t.chars().take(200).collect();
    if t.chars().count() > 200 {
        preview.push('…');
    }
    Err(format!("not a JSON object: {preview:?}"))
}

/// A rough token count for budgeting and estimates (about 4 bytes per token for English and
/// code; CJK text counts one token per character).
pub fn estimate_tokens(text: &str) -> u64 {
    let mut ascii = 0u64;
    let mut other = 0u64;
    for c in text.chars() {
        if c.is_ascii() {
            ascii += 1;
        } else {
            other += 1;
        }
    }
    ascii.div_ceil(4) + other
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_is_found_in_fences_and_prose() {
        assert_eq!(parse_json_answer(" {\"a\":1} ").unwrap()["a"], 1);
        assert_eq!(
            parse_json_answer("```json\n{\"a\":2}\n```").unwrap()["a"],
            2
        );
        assert_eq!(parse_json_answer("Sure! {\"a\":3} Done.").unwrap()["a"], 3);
        assert!(parse_json_answer("no json").is_err());
    }

    #[test]
    fn token_estimates() {
        assert_eq!(estimate_tokens("abcd"), 1);
        assert_eq!(estimate_tokens("記憶"), 2);
    }
}
