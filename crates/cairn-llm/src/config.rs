//! The `[llm]` section of `config.toml`.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::LlmError;

/// Which provider answers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ProviderKind {
    /// Everything works offline (the default).
    #[default]
    None,
    /// The OpenAI Responses API, or any compatible server (`base_url`).
    Openai,
    /// The Anthropic Messages API.
    Anthropic,
    /// Ollama's native chat API.
    Ollama,
    /// A command that reads the prompt on stdin and prints JSON on stdout.
    Command,
}

/// `[llm]` settings. Unknown keys are ignored.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(default)]
pub struct LlmConfig {
    pub provider: ProviderKind,
    /// API base, e.g. `https://api.openai.com/v1`, `https://api.anthropic.com`,
    /// `http://127.0.0.1:11434`.
    pub base_url: Option<String>,
    pub model: Option<String>,
    /// The environment variable that holds the API key (never the key itself).
    pub api_key_env: Option<String>,
    /// For `provider = "command"`: the argv. `{schema_file}` is replaced by a file holding the
    /// JSON schema, `{schema}` by the schema itself.
    pub command: Vec<String>,
    /// Seconds before a call is abandoned.
    pub timeout_secs: u64,
    /// Retries on 429 / 5xx / connection errors.
    pub max_retries: u32,
    /// First backoff delay in milliseconds (doubles each retry).
    pub backoff_ms: u64,
    pub max_output_tokens: u32,
    /// Budgets (0 = unlimited). Enforced by the callers that own the usage records.
    pub max_tokens_per_day: u64,
    pub max_tokens_per_run: u64,
    /// Prices in USD per million tokens, for estimates.
    pub input_price_per_mtok: f64,
    pub output_price_per_mtok: f64,
}

impl Default for LlmConfig {
    fn default() -> Self {
        LlmConfig {
            provider: ProviderKind::None,
            base_url: None,
            model: None,
            api_key_env: None,
            command: Vec::new(),
            timeout_secs: 120,
            max_retries: 3,
            backoff_ms: 1000,
            max_output_tokens: 4096,
            max_tokens_per_day: 2_000_000,
            max_tokens_per_run: 200_000,
            input_price_per_mtok: 0.0,
            output_price_per_mtok: 0.0,
        }
    }
}

impl LlmConfig {
    pub fn timeout(&self) -> Duration {
        Duration::from_secs(self.timeout_secs.max(1))
    }

    pub(crate) fn backoff_base(&self) -> Duration {
        Duration::from_millis(self.backoff_ms)
    }

    /// The base URL with the provider's default.
    pub fn base(&self) -> String {
        let d = match self.provider {
            ProviderKind::Openai => "https://api.openai.com/v1",
            ProviderKind::Anthropic => "https://api.anthropic.com",
            ProviderKind::Ollama => "http://127.0.0.1:11434",
            _ => "",
        };
        self.base_url
            .clone()
            .unwrap_or_else(|| d.to_owned())
            .trim_end_matches('/')
            .to_owned()
    }

    /// The key env var with the provider's default.
    pub fn key_env(&self) -> Option<String> {
        self.api_key_env.clone().or(match self.provider {
            ProviderKind::Openai => Some("OPENAI_API_KEY".into()),
            ProviderKind::Anthropic => Some("ANTHROPIC_API_KEY".into()),
            _ => None,
        })
    }

    /// Checks that the settings can work; says what is missing.
    pub fn check(&self) -> Result<(), LlmError> {
        match self.provider {
            ProviderKind::None => Ok(()),
            ProviderKind::Command if self.command.is_empty() => Err(LlmError::Config(
                "provider = \"command\" needs `command = [\"program\", \"arg\", ...]`".into(),
            )),
            ProviderKind::Command => Ok(()),
            _ if self.model.as_deref().is_none_or(str::is_empty) => Err(LlmError::Config(
                "set `model` in [llm] (e.g. model = \"gpt-5-mini\")".into(),
            )),
            _ => Ok(()),
        }
    }

    /// Estimated cost in USD of a number of input and output tokens.
    pub fn cost_usd(&self, input: u64, output: u64) -> f64 {
        (input as f64 * self.input_price_per_mtok + output as f64 * self.output_price_per_mtok)
            / 1_000_000.0
    }
}

/// Documented argv presets for `provider = "command"`.
pub mod presets {
    /// `codex exec`: read-only sandbox, ephemeral (no session file), no git check, hooks off,
    /// the answer constrained by `--output-schema`, prompt read from stdin (`-`).
    pub const CODEX_EXEC: &[&str] = &[
        "codex",
        "exec",
        "--sandbox",
        "read-only",
        "--ephemeral",
        "--skip-git-repo-check",
        "-c",
        "features.hooks=false",
        "--output-schema",
        "{schema_file}",
        "-",
    ];
    /// `claude -p` printing JSON (the model's text is in the `result` field, which cairn unwraps).
    pub const CLAUDE_PRINT: &[&str] = &["claude", "-p", "--output-format", "json"];
}
