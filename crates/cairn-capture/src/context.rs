//! What SessionStart and UserPromptSubmit hooks give the agent (and the user) to see.
//!
//! Each piece of context comes from a [`ContextProvider`]; the hook asks every provider in turn
//! and joins what they return. This issue has notices (failed background jobs, a broken
//! configuration file, hook errors); recall content plugs in later as another provider.
//! [`render_output`] writes the JSON both agents accept:
//! `{"systemMessage":…,"hookSpecificOutput":{"hookEventName":…,"additionalContext":…}}`
//! (Claude Code `hooks.md`; Codex `session-start.command.output.schema.json` and
//! `user-prompt-submit.command.output.schema.json`).

use std::path::Path;

use serde_json::json;

use cairn_store::Store;
use cairn_transcript::Agent;

use crate::CaptureError;
use crate::payload::HookEvent;

/// Claude Code spills additional context over 10,000 characters to a file; stay below.
pub const MAX_CONTEXT_CHARS: usize = 9_000;

/// What a provider is told about the hook call.
#[derive(Debug, Clone)]
pub struct ContextRequest<'a> {
    pub agent: Agent,
    pub event: &'a HookEvent,
    pub session_id: &'a str,
    pub cwd: Option<&'a Path>,
    /// The project root (git root, else the working directory).
    pub project: Option<&'a str>,
    /// UserPromptSubmit: the prompt.
    pub prompt: Option<&'a str>,
    /// Unix seconds.
    pub now: i64,
}

/// One provider's contribution.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ContextPiece {
    /// Text for the model (becomes `additionalContext`).
    pub for_agent: String,
    /// A line to show the user too (becomes `systemMessage`).
    pub for_user: Option<String>,
}

/// A source of additional context.
pub trait ContextProvider {
    fn name(&self) -> &'static str;
    fn provide(
        &self,
        store: &Store,
        req: &ContextRequest<'_>,
    ) -> Result<Option<ContextPiece>, CaptureError>;
}

/// Background jobs of this project that failed for good since they were last surfaced here.
pub struct FailedJobsNotice;

impl ContextProvider for FailedJobsNotice {
    fn name(&self) -> &'static str {
        "failed-jobs"
    }

    fn provide(
        &self,
        store: &Store,
        req: &ContextRequest<'_>,
    ) -> Result<Option<ContextPiece>, CaptureError> {
        let key = format!("failure_notice:{}", req.project.unwrap_or(""));
        let since = store
            .meta(&key)?
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0);
        let failed = store.failed_jobs(since, req.project)?;
        let Some(newest) = failed.first() else {
            return Ok(None);
        };
        store.set_meta(&key, &newest.updated_at.to_string())?;
        let first = failed.last().unwrap_or(newest);
        let error =
            crate::text::one_line(first.last_error.as_deref().unwrap_or("unknown error"), 300);
        let n = failed.len();
        let line = format!(
            "cairn: {n} background job{} failed{}; first error: {error}. Run `cairn status` to see more.",
            if n == 1 { "" } else { "s" },
            if since > 0 {
                " since the last notice in this project"
            } else {
                " in this project"
            }
        );
        Ok(Some(ContextPiece {
            for_agent: line.clone(),
            for_user: Some(line),
        }))
    }
}

/// Hook failures (recorded by the hook itself) since they were last surfaced.
pub struct HookErrorNotice;

/// Meta keys the hook records its own failures under.
pub const HOOK_ERROR_COUNT: &str = "hook_error_count";
pub const LAST_HOOK_ERROR: &str = "last_hook_error";
pub const LAST_HOOK_ERROR_AT: &str = "last_hook_error_at";
const HOOK_ERROR_NOTICE: &str = "hook_error_notice";

impl ContextProvider for HookErrorNotice {
    fn name(&self) -> &'static str {
        "hook-errors"
    }

    fn provide(
        &self,
        store: &Store,
        _req: &ContextRequest<'_>,
    ) -> Result<Option<ContextPiece>, CaptureError> {
        let count = |k: &str| -> Result<i64, CaptureError> {
            Ok(store.meta(k)?.and_then(|v| v.parse().ok()).unwrap_or(0))
        };
        let total = count(HOOK_ERROR_COUNT)?;
        let shown = count(HOOK_ERROR_NOTICE)?;
        if total <= shown {
            return Ok(None);
        }
        store.set_meta(HOOK_ERROR_NOTICE, &total.to_string())?;
        let last = store.meta(LAST_HOOK_ERROR)?.unwrap_or_default();
        let n = total - shown;
        let line = format!(
            "cairn: its hook failed {n} time{} (last: {}); some turns may not be recorded. Run `cairn status` to see more.",
            if n == 1 { "" } else { "s" },
            crate::text::one_line(&last, 300)
        );
        Ok(Some(ContextPiece {
            for_agent: line.clone(),
            for_user: Some(line),
        }))
    }
}

/// A broken configuration file, told once per session start.
pub struct ConfigProblemNotice(pub Option<String>);

impl ContextProvider for ConfigProblemNotice {
    fn name(&self) -> &'static str {
        "config"
    }

    fn provide(
        &self,
        _store: &Store,
        req: &ContextRequest<'_>,
    ) -> Result<Option<ContextPiece>, CaptureError> {
        match (&self.0, req.event) {
            (Some(e), HookEvent::SessionStart) => {
                let line =
                    format!("cairn: its configuration is broken and defaults are in use: {e}");
                Ok(Some(ContextPiece {
                    for_agent: line.clone(),
                    for_user: Some(line),
                }))
            }
            _ => Ok(None),
        }
    }
}

/// Asks every provider; a failing provider is reported in the second value and skipped.
pub fn gather(
    providers: &[&dyn ContextProvider],
    store: &Store,
    req: &ContextRequest<'_>,
) -> (Option<ContextPiece>, Vec<String>) {
    let mut agent = Vec::new();
    let mut user = Vec::new();
    let mut errors = Vec::new();
    for p in providers {
        match p.provide(store, req) {
            Ok(Some(piece)) => {
                if !piece.for_agent.trim().is_empty() {
                    agent.push(piece.for_agent);
                }
                user.extend(piece.for_user);
            }
            Ok(None) => {}
            Err(e) => errors.push(format!("{}: {e}", p.name())),
        }
    }
    if agent.is_empty() && user.is_empty() {
        return (None, errors);
    }
    let mut for_agent = cairn_redact::redact(&agent.join("\n\n")).into_owned();
    if for_agent.chars().count() > MAX_CONTEXT_CHARS {
        for_agent = crate::text::one_line(&for_agent, MAX_CONTEXT_CHARS);
    }
    let for_user = (!user.is_empty()).then(|| cairn_redact::redact(&user.join(" ")).into_owned());
    (
        Some(ContextPiece {
            for_agent,
            for_user,
        }),
        errors,
    )
}

/// The hook's stdout for a piece of context, in the shape both agents read. Control
/// characters other than line breaks and tabs become `�`: the agent shows `systemMessage` on
/// the user's terminal, and error or memory text must not drive it.
pub fn render_output(event: &HookEvent, piece: &ContextPiece) -> String {
    let mut v = json!({
        "hookSpecificOutput": {
            "hookEventName": event.as_str(),
            "additionalContext": without_controls(&piece.for_agent),
        }
    });
    if let (Some(m), Some(obj)) = (&piece.for_user, v.as_object_mut()) {
        obj.insert("systemMessage".into(), json!(without_controls(m)));
    }
    v.to_string()
}

fn without_controls(s: &str) -> std::borrow::Cow<'_, str> {
    let control = |c: char| c.is_control() && c != '\n' && c != '\t';
    if s.chars().any(control) {
        s.chars()
            .map(|c| if control(c) { '\u{FFFD}' } else { c })
            .collect::<String>()
            .into()
    } else {
        s.into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_store::NewJob;

    #[test]
    fn failed_jobs_are_told_once() {
        let mut s = Store::open_in_memory().unwrap();
        let job = NewJob {
            kind: "turn-digest",
            agent: "codex",
            session_key: "s",
            turn_key: "t",
            payload: None,
            project: Some("/p"),
        };
        s.enqueue(&job, 100).unwrap();
        let j = s.claim_job(100, 60).unwrap().unwrap();
        s.fail_job(j.id, "transcript vanished", None, 101).unwrap();
        let ev = HookEvent::SessionStart;
        let req = ContextRequest {
            agent: Agent::Codex,
            event: &ev,
            session_id: "s2",
            cwd: None,
            project: Some("/p"),
            prompt: None,
            now: 200,
        };
        let (piece, errs) = gather(&[&FailedJobsNotice], &s, &req);
        assert!(errs.is_empty());
        let piece = piece.unwrap();
        assert!(
            piece.for_agent.contains("1 background job failed"),
            "{piece:?}"
        );
        assert!(piece.for_agent.contains("transcript vanished"));
        assert!(piece.for_agent.contains("cairn status"));
        let out: serde_json::Value = serde_json::from_str(&render_output(&ev, &piece)).unwrap();
        assert_eq!(out["hookSpecificOutput"]["hookEventName"], "SessionStart");
        assert!(out["systemMessage"].as_str().unwrap().contains("failed"));
        // Escape sequences in the text never reach the agent's terminal.
        let piece = ContextPiece {
            for_agent: "a \u{1b}[31mred\u{1b}[0m error".into(),
            for_user: Some("b \u{1b}]0;title\u{7}".into()),
        };
        let raw = render_output(&HookEvent::SessionStart, &piece);
        let out: serde_json::Value = serde_json::from_str(&raw).unwrap();
        for text in [
            out["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap(),
            out["systemMessage"].as_str().unwrap(),
        ] {
            assert!(!text.chars().any(|c| c.is_control()), "{text:?}");
        }
        // Told once.
        assert!(gather(&[&FailedJobsNotice], &s, &req).0.is_none());
        // Another project does not see it.
        let req2 = ContextRequest {
            project: Some("/other"),
            ..req
        };
        assert!(gather(&[&FailedJobsNotice], &s, &req2).0.is_none());
    }
}
