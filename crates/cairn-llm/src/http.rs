//! The HTTP providers: request bodies and answer extraction.

use serde_json::{Value, json};

use crate::config::{LlmConfig, ProviderKind};
use crate::{JsonRequest, LlmError, RawAnswer, Usage};

fn agent(cfg: &LlmConfig) -> ureq::Agent {
    ureq::Agent::config_builder()
        .timeout_global(Some(cfg.timeout()))
        .http_status_as_error(false)
        .build()
        .into()
}

fn key(cfg: &LlmConfig) -> Result<Option<String>, LlmError> {
    match cfg.key_env() {
        None => Ok(None),
        Some(var) => match std::env::var(&var) {
            Ok(v) if !v.is_empty() => Ok(Some(v)),
            // Local compatible servers often need no key.
            _ if cfg.base_url.is_some() => Ok(None),
            _ => Err(LlmError::MissingKey(var)),
        },
    }
}

/// The request (URL, headers, body) a provider gets. Public within the crate for tests.
pub(crate) fn build(
    cfg: &LlmConfig,
    req: &JsonRequest,
    key: Option<&str>,
) -> (String, Vec<(String, String)>, Value) {
    let model = cfg.model.clone().unwrap_or_default();
    let base = cfg.base();
    let mut headers = vec![("content-type".to_owned(), "application/json".to_owned())];
    match cfg.provider {
        ProviderKind::Anthropic => {
            if let Some(k) = key {
                headers.push(("x-api-key".into(), k.into()));
            }
            headers.push(("anthropic-version".into(), "2023-06-01".into()));
            let body = json!({
                "model": model,
                "max_tokens": req.max_output_tokens,
                "system": req.system,
                "messages": [{"role": "user", "content": req.prompt}],
                "tools": [{
                    "name": req.schema_name,
                    "description": "Record the answer. Call this exactly once with the complete answer.",
                    "input_schema": req.schema,
                }],
                "tool_choice": {"type": "tool", "name": req.schema_name},
            });
            (format!("{base}/v1/messages"), headers, body)
        }
        ProviderKind::Ollama => {
            let body = json!({
                "model": model,
                "stream": false,
                "format": req.schema,
                "messages": [
                    {"role": "system", "content": req.system},
                    {"role": "user", "content": req.prompt},
                ],
                "options": {"temperature": 0, "num_predict": req.max_output_tokens},
            });
            (format!("{base}/api/chat"), headers, body)
        }
        _ => {
            if let Some(k) = key {
                headers.push(("authorization".into(), format!("Bearer {k}")));
            }
            let body = json!({
                "model": model,
                "input": [
                    {"role": "system", "content": req.system},
                    {"role": "user", "content": req.prompt},
                ],
                "max_output_tokens": req.max_output_tokens,
                "store": false,
                "text": {"format": {
                    "type": "json_schema",
                    "name": req.schema_name,
                    "schema": req.schema,
                    "strict": true,
                }},
            });
            (format!("{base}/responses"), headers, body)
        }
    }
}

pub(crate) fn call(cfg: &LlmConfig, req: &JsonRequest) -> Result<RawAnswer, LlmError> {
    let key = key(cfg)?;
    let (url, headers, body) = build(cfg, req, key.as_deref());
    let mut rb = agent(cfg).post(&url);
    for (k, v) in &headers {
        rb = rb.header(k, v);
    }
    let payload = serde_json::to_vec(&body).map_err(|e| LlmError::Invalid(e.to_string()))?;
    let mut resp = match rb.send(&payload[..]) {
        Ok(r) => r,
        Err(ureq::Error::Timeout(_)) => return Err(LlmError::Timeout(cfg.timeout())),
        Err(e) => {
            return Err(LlmError::Transport {
                url,
                message: e.to_string(),
            });
        }
    };
    let status = resp.status().as_u16();
    let retry_after = resp
        .headers()
        .get("retry-after")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(std::time::Duration::from_secs);
    let text = match resp.body_mut().read_to_string() {
        Ok(t) => t,
        Err(ureq::Error::Timeout(_)) => return Err(LlmError::Timeout(cfg.timeout())),
        // A runaway answer: asking again would bill another one.
        Err(ureq::Error::BodyExceedsLimit(limit)) => {
            return Err(LlmError::Invalid(format!(
                "the provider's reply is larger than {} MiB; not retried (lower [llm] max_output_tokens)",
                limit >> 20
            )));
        }
        Err(e) => {
            return Err(LlmError::Transport {
                url,
                message: e.to_string(),
            });
        }
    };
    if !(200..300).contains(&status) {
        let mut body: String = text.chars().take(500).collect();
        if let Some(k) = &key {
            body = body.replace(k.as_str(), "[REDACTED]");
        }
        return Err(LlmError::Status {
            url,
            status,
            body,
            retry_after,
        });
    }
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| LlmError::Invalid(format!("the provider's reply is not JSON: {e}")))?;
    extract(cfg.provider, &v)
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or(0)
}

/// The model's text and usage out of a provider reply.
pub(crate) fn extract(provider: ProviderKind, v: &Value) -> Result<RawAnswer, LlmError> {
    match provider {
        ProviderKind::Anthropic => {
            let usage = Usage {
                input_tokens: u(&v["usage"]["input_tokens"]),
                output_tokens: u(&v["usage"]["output_tokens"]),
            };
            let content = v["content"].as_array().cloned().unwrap_or_default();
            if let Some(tool) = content.iter().find(|b| b["type"] == "tool_use") {
                return Ok(RawAnswer {
                    text: tool["input"].to_string(),
                    usage,
                });
            }
            let text: String = content
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            Ok(RawAnswer { text, usage })
        }
        ProviderKind::Ollama => Ok(RawAnswer {
            text: v["message"]["content"].as_str().unwrap_or("").to_owned(),
            usage: Usage {
                input_tokens: u(&v["prompt_eval_count"]),
                output_tokens: u(&v["eval_count"]),
            },
        }),
        _ => {
            let usage = Usage {
                input_tokens: u(&v["usage"]["input_tokens"]),
                output_tokens: u(&v["usage"]["output_tokens"]),
            };
            if let Some(t) = v["output_text"].as_str() {
                return Ok(RawAnswer {
                    text: t.to_owned(),
                    usage,
                });
            }
            let mut text = String::new();
            for item in v["output"].as_array().into_iter().flatten() {
                if item["type"] != "message" {
                    continue;
                }
                for c in item["content"].as_array().into_iter().flatten() {
                    if c["type"] == "output_text" {
                        text.push_str(c["text"].as_str().unwrap_or(""));
                    } else if c["type"] == "refusal" {
                        return Err(LlmError::Invalid(format!(
                            "the model refused: {}",
                            c["refusal"].as_str().unwrap_or("")
                        )));
                    }
                }
            }
            Ok(RawAnswer { text, usage })
        }
    }
}
