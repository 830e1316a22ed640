//! The JSON both agents send a command hook on stdin.
//!
//! Claude Code (`hooks.md`): `session_id`, `transcript_path`, `cwd`, `hook_event_name`, plus
//! `prompt` (UserPromptSubmit), `source` (SessionStart), `stop_hook_active` and
//! `last_assistant_message` (Stop). Codex (`codex-rs/hooks/schema/generated/*.input.schema.json`):
//! the same names, plus `turn_id` on Stop and UserPromptSubmit, and `transcript_path` may be null.
//! Fields are read leniently: a field of the wrong type reads as absent. A lone UTF-16
//! surrogate escape, which serde_json rejects, is replaced by U+FFFD
//! (`cairn_transcript::lone_surrogates`) rather than costing the whole payload.

use serde_json::Value;

use crate::CaptureError;

/// The hook events cairn acts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum HookEvent {
    Stop,
    SessionStart,
    UserPromptSubmit,
    /// Anything else (ignored, exit 0).
    Other(String),
}

impl HookEvent {
    pub fn parse(name: &str) -> HookEvent {
        match name {
            "Stop" => HookEvent::Stop,
            "SessionStart" => HookEvent::SessionStart,
            "UserPromptSubmit" => HookEvent::UserPromptSubmit,
            other => HookEvent::Other(other.to_owned()),
        }
    }

    /// The name the agents use (`hookEventName` in the output).
    pub fn as_str(&self) -> &str {
        match self {
            HookEvent::Stop => "Stop",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::Other(s) => s,
        }
    }
}

/// A hook's input.
#[derive(Debug, Clone, PartialEq)]
pub struct HookPayload {
    pub event: HookEvent,
    pub session_id: String,
    pub transcript_path: Option<String>,
    pub cwd: Option<String>,
    /// Codex: the turn that just ended (Stop) or starts (UserPromptSubmit).
    pub turn_id: Option<String>,
    pub last_assistant_message: Option<String>,
    pub stop_hook_active: bool,
    pub prompt: Option<String>,
    /// SessionStart: `startup`, `resume`, `clear`, `compact`, `fork`.
    pub source: Option<String>,
}

impl HookPayload {
    /// Parses stdin. Only a missing `hook_event_name` or non-object JSON is an error. A lone
    /// UTF-16 surrogate escape (Node writes one for a prompt cut in the middle of an emoji)
    /// is replaced by U+FFFD instead of failing the payload.
    pub fn parse(input: &str) -> Result<HookPayload, CaptureError> {
        let v: Value = match serde_json::from_str(input) {
            Ok(v) => v,
            Err(e) => cairn_transcript::lone_surrogates::replace_in_json_str(input)
                .and_then(|repaired| serde_json::from_str(&repaired).ok())
                .ok_or_else(|| CaptureError::Payload(format!("not JSON: {e}")))?,
        };
        let Value::Object(m) = v else {
            return Err(CaptureError::Payload("not a JSON object".into()));
        };
        let s = |k: &str| -> Option<String> {
            m.get(k)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_owned)
        };
        let event = s("hook_event_name")
            .map(|n| HookEvent::parse(&n))
            .ok_or_else(|| CaptureError::Payload("no hook_event_name".into()))?;
        Ok(HookPayload {
            event,
            session_id: s("session_id").unwrap_or_default(),
            transcript_path: s("transcript_path").map(|t| absolute(t, s("cwd").as_deref())),
            cwd: s("cwd"),
            turn_id: s("turn_id"),
            last_assistant_message: s("last_assistant_message"),
            stop_hook_active: m
                .get("stop_hook_active")
                .and_then(Value::as_bool)
                .unwrap_or(false),
            prompt: s("prompt"),
            source: s("source"),
        })
    }
}

/// A relative transcript path (a hand-run hook, a wrapper script) is made absolute where the
/// hook runs: the background worker runs elsewhere and would not find it.
fn absolute(path: String, cwd: Option<&str>) -> String {
    let p = std::path::Path::new(&path);
    if p.is_absolute() || path.is_empty() {
        return path;
    }
    let base = std::env::current_dir()
        .ok()
        .or_else(|| cwd.map(std::path::PathBuf::from));
    base.map_or(path.clone(), |b| b.join(p).to_string_lossy().into_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A relative transcript path is made absolute where the hook runs (the worker runs in
    /// another directory).
    #[test]
    fn a_relative_transcript_path_is_made_absolute() {
        let p = HookPayload::parse(r#"{"session_id":"s","transcript_path":"big/s.jsonl","cwd":"/w","hook_event_name":"Stop"}"#).unwrap();
        let t = p.transcript_path.unwrap();
        assert!(std::path::Path::new(&t).is_absolute(), "{t}");
        assert!(t.ends_with("big/s.jsonl"), "{t}");
    }

    #[test]
    fn codex_stop() {
        let p = HookPayload::parse(r#"{"session_id":"s","turn_id":"t","transcript_path":null,"cwd":"/w","hook_event_name":"Stop","model":"m","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"done"}"#).unwrap();
        assert_eq!(p.event, HookEvent::Stop);
        assert_eq!(p.turn_id.as_deref(), Some("t"));
        assert_eq!(p.transcript_path, None);
        assert_eq!(p.last_assistant_message.as_deref(), Some("done"));
    }

    /// Node's `JSON.stringify` writes a prompt cut in the middle of an emoji with a lone
    /// surrogate escape; the payload is still read, the surrogate replaced.
    #[test]
    fn a_lone_surrogate_costs_only_itself() {
        let p = HookPayload::parse(r#"{"session_id":"3f9c2d1e-7a4b-4c8d-9e2f-1a6b5c4d3e2f","transcript_path":"/home/u/.claude/projects/-work-alpha/3f9c2d1e-7a4b-4c8d-9e2f-1a6b5c4d3e2f.jsonl","cwd":"/work/alpha","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"from now on always run cargo fmt \ud83d"}"#).unwrap();
        assert_eq!(p.event, HookEvent::UserPromptSubmit);
        assert_eq!(p.session_id, "3f9c2d1e-7a4b-4c8d-9e2f-1a6b5c4d3e2f");
        assert_eq!(
            p.prompt.as_deref(),
            Some("from now on always run cargo fmt \u{fffd}")
        );

        let p = HookPayload::parse(r#"{"session_id":"s","transcript_path":"/t.jsonl","cwd":"/w","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"\ude00 done, and C:\\ud83d stays text"}"#).unwrap();
        assert_eq!(p.event, HookEvent::Stop);
        assert_eq!(
            p.last_assistant_message.as_deref(),
            Some("\u{fffd} done, and C:\\ud83d stays text")
        );

        // Other damage is still an error, named as before.
        let err = HookPayload::parse(r#"{"hook_event_name":"Stop","prompt":"\ud83d"#).unwrap_err();
        assert!(err.to_string().contains("not JSON"), "{err}");
    }

    #[test]
    fn lenient_and_errors() {
        let p = HookPayload::parse(r#"{"hook_event_name":"PreToolUse","cwd":5}"#).unwrap();
        assert_eq!(p.event, HookEvent::Other("PreToolUse".into()));
        assert_eq!(p.cwd, None);
        assert!(HookPayload::parse("[]").is_err());
        assert!(HookPayload::parse("{}").is_err());
        assert!(HookPayload::parse("nope").is_err());
    }
}
