//! The Stop hook's work: find the turn that just ended, decide whether to record it, and
//! enqueue one job for it (keyed by agent, session and turn, so a second Stop adds nothing).

use std::path::Path;

use serde::{Deserialize, Serialize};

use cairn_store::{NewJob, Store};
use cairn_transcript::{Agent, ParserState};

use crate::classify::{Decision, decide};
use crate::payload::HookPayload;
use crate::tail::{FoundTurn, ResumePoint, find_turn};
use crate::{CaptureError, JOB_KIND, project_root};

/// What a job carries from the hook to the worker (stored redacted).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct JobPayload {
    pub transcript_path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub project: Option<String>,
    /// Claude Code: the final message as the hook saw it (the file may lag behind).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_assistant_message: Option<String>,
    /// Recorded because of `#memo` although read-only.
    #[serde(default)]
    pub forced: bool,
}

/// What the Stop hook did.
#[derive(Debug, Clone, PartialEq)]
pub struct StopOutcome {
    pub decision: Decision,
    pub session_key: String,
    pub turn_key: String,
    /// A new job was queued (false when skipped or already queued).
    pub enqueued: bool,
    pub bytes_read: u64,
}

/// Handles a Stop payload against the store.
pub fn on_stop(
    store: &Store,
    agent: Agent,
    payload: &HookPayload,
    now: i64,
) -> Result<StopOutcome, CaptureError> {
    let path = payload
        .transcript_path
        .as_deref()
        .ok_or(CaptureError::NoTranscript)?;
    let file = cairn_ingest::transcript_for_path(agent, Path::new(path));
    let resume = resume_point(store, &file.path)?;
    let turn_id = match agent {
        Agent::Codex => payload.turn_id.as_deref(),
        Agent::Claude => None,
    };
    let FoundTurn {
        turn,
        session_key,
        bytes_read,
        ..
    } = find_turn(&file, turn_id, resume)?.ok_or_else(|| CaptureError::TurnNotFound {
        turn: turn_id.unwrap_or("(last)").to_owned(),
        path: path.to_owned(),
    })?;
    let session_key = if payload.session_id.is_empty() {
        session_key
    } else {
        payload.session_id.clone()
    };
    let decision = decide(&turn);
    let mut outcome = StopOutcome {
        decision: decision.clone(),
        session_key,
        turn_key: turn.key.clone(),
        enqueued: false,
        bytes_read,
    };
    let Decision::Record { forced, .. } = decision else {
        return Ok(outcome);
    };
    let cwd = payload.cwd.clone().or(turn.cwd.clone());
    let project = cwd
        .as_deref()
        .map(|c| project_root(Path::new(c)).to_string_lossy().into_owned());
    // Only free text is redacted (paths are stored as file cursors store them), and the final
    // message is kept only when the file lags behind it: the common case never builds the
    // redaction engine, which would cost the agent milliseconds.
    let lagging = payload
        .last_assistant_message
        .as_deref()
        .filter(|m| !m.trim().is_empty())
        .filter(|m| turn.last_assistant_text().map(str::trim) != Some(m.trim()));
    let job = JobPayload {
        transcript_path: path.to_owned(),
        cwd: cwd.clone(),
        project: project.clone(),
        last_assistant_message: lagging.map(crate::kept_assistant_text),
        forced,
    };
    let body = serde_json::to_string(&job).map_err(|e| CaptureError::Payload(e.to_string()))?;
    outcome.enqueued = store.enqueue(
        &NewJob {
            kind: JOB_KIND,
            agent: agent.as_str(),
            session_key: &outcome.session_key,
            turn_key: &outcome.turn_key,
            payload: Some(&body),
            project: job.project.as_deref(),
        },
        now,
    )?;
    Ok(outcome)
}

/// The store's cursor for a file, when it still describes the same file.
fn resume_point(store: &Store, path: &Path) -> Result<Option<ResumePoint>, CaptureError> {
    let Some(c) = store.cursor(&path.to_string_lossy())? else {
        return Ok(None);
    };
    let Some(state) = c
        .state
        .as_deref()
        .and_then(|s| serde_json::from_str::<ParserState>(s).ok())
    else {
        return Ok(None);
    };
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        match std::fs::metadata(path) {
            Ok(m) if m.dev() == c.dev && m.ino() == c.ino && m.size() >= c.offset => {}
            _ => return Ok(None),
        }
    }
    Ok(Some(ResumePoint {
        offset: c.offset,
        line: c.line,
        state,
    }))
}
