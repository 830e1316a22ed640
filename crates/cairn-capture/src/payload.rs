//! The JSON both agents send a command hook on stdin.
//!
//! Claude Code (`hooks.md`): `session_id`, `transcript_path`, `cwd`, `hook_event_name`, plus
//! `prompt` (UserPromptSubmit), `source` (SessionStart), `stop_hook_active` and
//! `last_assistant_message` (Stop). Codex (`codex-rs/hooks/schema/generated/*.input.schema.json`):
//! the same names, plus `turn_id` on Stop and UserPromptSubmit, and `transcript_path` may be null.
//! Fields are read leniently: a field of the wrong type reads as absent.

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
    /// Parses stdin. Only a missing `hook_event_name` or non-object JSON is an error.
    pub fn parse(input: &str) -> Result<HookPayload, CaptureError> {
        let v: Value = serde_json::from_str(input)
            .map_err(|e| CaptureError::Payload(format!("not JSON: {e}")))?;
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
            transcript_path: s("transcript_path"),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_stop() {
        let p = HookPayload::parse(r#"{"session_id":"s","turn_id":"t","transcript_path":null,"cwd":"/w","hook_event_name":"Stop","model":"m","permission_mode":"default","stop_hook_active":false,"last_assistant_message":"done"}"#).unwrap();
        assert_eq!(p.event, HookEvent::Stop);
        assert_eq!(p.turn_id.as_deref(), Some("t"));
        assert_eq!(p.transcript_path, None);
        assert_eq!(p.last_assistant_message.as_deref(), Some("done"));
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
