//! Codex hook trust, as far as it can be checked from files: which command hooks are
//! configured in the user layer (`<codex home>/config.toml` `[hooks]` and
//! `<codex home>/hooks.json`), their state key, and whether `[hooks.state."<key>"]
//! trusted_hash` matches the hook's current hash.
//!
//! Codex runs a non-managed hook only when its recorded `trusted_hash` equals the hash of the
//! hook's normalized identity, and skips it silently otherwise. The hash, as Codex's hooks
//! discovery computes it: the object `{event_name, matcher?, hooks: [handler]}` where the
//! handler is `{type: "command", command, timeout, async, statusMessage?}` with `timeout`
//! defaulted to 600 (at least 1), the matcher dropped for `UserPromptSubmit` and `Stop`, and
//! absent optional fields omitted; serialized as JSON with every object's keys sorted and no
//! whitespace; SHA-256, lowercase hex, prefixed `sha256:`. The key is
//! `<absolute path of the file>:<event label>:<group index>:<handler index>`. Codex versions
//! have added handler fields over time, so a mismatch means "modified since trusted, or a
//! Codex version whose hash cairn cannot reproduce" — reported as such, never as certain.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;
use sha2::{Digest, Sha256};
use toml_edit::{DocumentMut, Item};

use crate::fsutil::hex;

/// How a hook's trust compares.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum HookTrust {
    /// `trusted_hash` equals the hash cairn computes.
    Trusted,
    /// No `trusted_hash`: Codex never runs it until the user trusts it.
    Untrusted,
    /// A `trusted_hash` that differs: modified since it was trusted, or cairn cannot reproduce
    /// this Codex version's hash.
    Mismatch,
}

/// One configured command hook.
#[derive(Debug, Clone, Serialize)]
pub struct HookEntry {
    pub key: String,
    pub source: String,
    pub event: String,
    pub command: String,
    pub current_hash: String,
    pub trusted_hash: Option<String>,
    pub enabled: bool,
    pub trust: HookTrust,
}

impl HookEntry {
    /// A hook installed by cairn: the command shape `cairn install` writes, whatever the
    /// binary is called (`cairn_install::is_cairn_command`).
    pub fn is_cairn(&self) -> bool {
        cairn_install::is_cairn_command(&self.command, cairn_install::Target::Codex)
    }
}

/// `PreToolUse` → `pre_tool_use` (the label in trust keys; shared with `cairn install`, which
/// moves or removes the entries of the handlers it removes).
pub use cairn_install::event_label;

/// Compact JSON with every object's keys sorted (independent of serde_json's map order).
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let sorted: BTreeMap<&String, &Value> = m.iter().collect();
            out.push('{');
            for (i, (k, v)) in sorted.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The normalized identity of a command hook, as canonical JSON (what is hashed).
pub fn hook_identity(
    event: &str,
    matcher: Option<&str>,
    command: &str,
    timeout: Option<u64>,
    is_async: bool,
    status_message: Option<&str>,
) -> String {
    let label = event_label(event);
    let timeout = if event == "SessionEnd" {
        timeout.unwrap_or(1).clamp(1, 3)
    } else {
        timeout.unwrap_or(600).max(1)
    };
    let matcher = match event {
        "UserPromptSubmit" | "Stop" => None,
        _ => matcher,
    };
    let mut handler = serde_json::Map::new();
    handler.insert("type".into(), Value::from("command"));
    handler.insert("command".into(), Value::from(command));
    handler.insert("timeout".into(), Value::from(timeout));
    handler.insert("async".into(), Value::from(is_async));
    if let Some(s) = status_message {
        handler.insert("statusMessage".into(), Value::from(s));
    }
    let mut ident = serde_json::Map::new();
    ident.insert("event_name".into(), Value::from(label));
    if let Some(m) = matcher {
        ident.insert("matcher".into(), Value::from(m));
    }
    ident.insert("hooks".into(), Value::Array(vec![Value::Object(handler)]));
    let mut s = String::new();
    canonical(&Value::Object(ident), &mut s);
    s
}

/// `sha256:<hex>` of [`hook_identity`].
pub fn hook_hash(
    event: &str,
    matcher: Option<&str>,
    command: &str,
    timeout: Option<u64>,
    is_async: bool,
    status_message: Option<&str>,
) -> String {
    let ident = hook_identity(event, matcher, command, timeout, is_async, status_message);
    format!("sha256:{}", hex(&Sha256::digest(ident.as_bytes())))
}

/// A TOML item as JSON (datetimes as strings).
fn item_json(item: &Item) -> Value {
    match item {
        Item::None => Value::Null,
        Item::Value(v) => value_json(v),
        Item::Table(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), item_json(v)))
                .collect(),
        ),
        Item::ArrayOfTables(a) => Value::Array(
            a.iter()
                .map(|t| {
                    Value::Object(
                        t.iter()
                            .map(|(k, v)| (k.to_string(), item_json(v)))
                            .collect(),
                    )
                })
                .collect(),
        ),
    }
}

fn value_json(v: &toml_edit::Value) -> Value {
    use toml_edit::Value as V;
    match v {
        V::String(s) => Value::from(s.value().as_str()),
        V::Integer(i) => Value::from(*i.value()),
        V::Float(f) => Value::from(*f.value()),
        V::Boolean(b) => Value::from(*b.value()),
        V::Datetime(d) => Value::from(d.value().to_string()),
        V::Array(a) => Value::Array(a.iter().map(value_json).collect()),
        V::InlineTable(t) => Value::Object(
            t.iter()
                .map(|(k, v)| (k.to_string(), value_json(v)))
                .collect(),
        ),
    }
}

#[derive(Debug, Default)]
struct HookState {
    enabled: Option<bool>,
    trusted_hash: Option<String>,
}

fn hook_states(doc: Option<&DocumentMut>) -> BTreeMap<String, HookState> {
    let mut out = BTreeMap::new();
    let Some(state) = doc
        .and_then(|d| d.get("hooks"))
        .and_then(|h| h.get("state"))
    else {
        return out;
    };
    if let Value::Object(m) = item_json(state) {
        for (k, v) in m {
            out.insert(
                k,
                HookState {
                    enabled: v.get("enabled").and_then(Value::as_bool),
                    trusted_hash: v
                        .get("trusted_hash")
                        .and_then(Value::as_str)
                        .map(str::to_owned),
                },
            );
        }
    }
    out
}

fn collect(
    events: &Value,
    key_sources: &[String],
    states: &BTreeMap<String, HookState>,
    out: &mut Vec<HookEntry>,
) {
    let Some(events) = events.as_object() else {
        return;
    };
    for (event, groups) in events {
        if event == "state" {
            continue;
        }
        let Some(groups) = groups.as_array() else {
            continue;
        };
        let label = event_label(event);
        for (gi, group) in groups.iter().enumerate() {
            let matcher = group.get("matcher").and_then(Value::as_str);
            let Some(handlers) = group.get("hooks").and_then(Value::as_array) else {
                continue;
            };
            for (hi, h) in handlers.iter().enumerate() {
                if h.get("type").and_then(Value::as_str) != Some("command") {
                    continue;
                }
                let Some(command) = h.get("command").and_then(Value::as_str) else {
                    continue;
                };
                let hash = hook_hash(
                    event,
                    matcher,
                    command,
                    h.get("timeout").and_then(Value::as_u64),
                    h.get("async").and_then(Value::as_bool).unwrap_or(false),
                    h.get("statusMessage").and_then(Value::as_str),
                );
                let keys: Vec<String> = key_sources
                    .iter()
                    .map(|s| format!("{s}:{label}:{gi}:{hi}"))
                    .collect();
                let state = keys.iter().find_map(|k| states.get(k));
                let trusted = state.and_then(|s| s.trusted_hash.clone());
                let trust = match &trusted {
                    None => HookTrust::Untrusted,
                    Some(t) if *t == hash => HookTrust::Trusted,
                    Some(_) => HookTrust::Mismatch,
                };
                out.push(HookEntry {
                    key: keys.first().cloned().unwrap_or_default(),
                    source: key_sources.first().cloned().unwrap_or_default(),
                    event: event.clone(),
                    command: command.to_owned(),
                    current_hash: hash,
                    trusted_hash: trusted,
                    enabled: state.and_then(|s| s.enabled) != Some(false),
                    trust,
                });
            }
        }
    }
}

fn key_sources(path: &Path) -> Vec<String> {
    let mut v = vec![path.display().to_string()];
    if let Some(c) = path
        .parent()
        .and_then(|p| fs::canonicalize(p).ok())
        .and_then(|p| path.file_name().map(|n| p.join(n)))
    {
        let c = c.display().to_string();
        if !v.contains(&c) {
            v.push(c);
        }
    }
    v
}

/// Every command hook of the user layer: `config.toml` `[hooks]` and `hooks.json`.
pub fn codex_hooks(codex_home: &Path, doc: Option<&DocumentMut>) -> Vec<HookEntry> {
    let states = hook_states(doc);
    let mut out = Vec::new();
    if let Some(hooks) = doc.and_then(|d| d.get("hooks")) {
        let path: PathBuf = codex_home.join("config.toml");
        collect(&item_json(hooks), &key_sources(&path), &states, &mut out);
    }
    let json_path = codex_home.join("hooks.json");
    if let Ok(text) = fs::read_to_string(&json_path)
        && let Ok(v) = serde_json::from_str::<Value>(&text)
        && let Some(hooks) = v.get("hooks")
    {
        collect(hooks, &key_sources(&json_path), &states, &mut out);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identity_is_normalized_and_sorted() {
        assert_eq!(
            hook_identity(
                "Stop",
                Some("ignored"),
                "cairn hook --agent codex",
                None,
                false,
                None
            ),
            r#"{"event_name":"stop","hooks":[{"async":false,"command":"cairn hook --agent codex","timeout":600,"type":"command"}]}"#
        );
        assert_eq!(
            hook_identity("PreToolUse", Some("^Bash$"), "x", Some(0), true, Some("s")),
            r#"{"event_name":"pre_tool_use","hooks":[{"async":true,"command":"x","statusMessage":"s","timeout":1,"type":"command"}],"matcher":"^Bash$"}"#
        );
        assert!(hook_hash("Stop", None, "x", None, false, None).starts_with("sha256:"));
        assert_eq!(event_label("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn trust_states_from_config() {
        let t = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(t.path()).unwrap();
        let cfg = home.join("config.toml");
        let stop_hash = hook_hash(
            "Stop",
            None,
            "cairn hook --agent codex",
            Some(30),
            false,
            None,
        );
        let key = |ev: &str| format!("{}:{ev}:0:0", cfg.display());
        let text = format!(
            r#"[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "cairn hook --agent codex"
timeout = 30

[[hooks.SessionStart]]
matcher = "startup"
[[hooks.SessionStart.hooks]]
type = "command"
command = "cairn hook --agent codex"

[[hooks.UserPromptSubmit]]
hooks = [{{ type = "command", command = "cairn hook --agent codex" }}]

[hooks.state."{stop}"]
trusted_hash = "{stop_hash}"

[hooks.state."{start}"]
trusted_hash = "sha256:0000"
"#,
            stop = key("stop"),
            start = key("session_start"),
        );
        fs::write(&cfg, text).unwrap();
        let doc: DocumentMut = fs::read_to_string(&cfg).unwrap().parse().unwrap();
        let hooks = codex_hooks(&home, Some(&doc));
        let by = |e: &str| hooks.iter().find(|h| h.event == e).unwrap();
        assert_eq!(by("Stop").trust, HookTrust::Trusted);
        assert_eq!(by("SessionStart").trust, HookTrust::Mismatch);
        assert_eq!(by("UserPromptSubmit").trust, HookTrust::Untrusted);
        assert!(hooks.iter().all(HookEntry::is_cairn));
    }
}
