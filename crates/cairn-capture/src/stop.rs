//! The Stop hook's work: find the turn that just ended, decide whether to record it, and
//! enqueue one job for it (keyed by agent, session and turn, so a second Stop adds nothing).
//!
//! Three kinds of job come out of it: a turn that changed something (or has `#memo`) gets a
//! digest (and a memo block); a turn that did not, but whose prompt states a memory ("from now
//! on …", "remember that …", as the caller's test says), is queued for extraction only
//! (`memory_only`); and a turn the hook could not look at within [`Limits::HOOK`] (a huge line,
//! a very long turn) or, for Codex, not yet in the rollout is queued unresolved (`end`): the
//! worker finds it in the file, unhurried, and decides. Whatever the kind, the worker treats the turn as ended: the Stop said so.

use std::path::Path;

use serde::{Deserialize, Serialize};

use cairn_store::{NewJob, Store};
use cairn_transcript::{Agent, ParserState};

use crate::classify::{Decision, decide};
use crate::payload::HookPayload;
use crate::tail::{FoundTurn, Limits, Lookup, ResumePoint, find_turn};
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
    /// Queued only so that the memory its prompt states is extracted now: no digest, no memo.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub memory_only: bool,
    /// The hook did not find the turn (it was too large to look at on the agent's clock, or
    /// not written yet): the turn is the one that ended within the file's first `end` bytes
    /// ([`WHOLE_FILE`]: anywhere in it), and the worker decides whether to record it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<u64>,
}

/// [`JobPayload::end`] of a Codex turn the hook did not find in the rollout: Codex writes it
/// asynchronously, so the worker looks through the whole file as it is by then.
pub const WHOLE_FILE: u64 = u64::MAX;

/// The turn key of a job the hook queued without finding its turn (Claude Code's turn keys
/// are record uuids, known only once the turn's first line is found).
pub fn unresolved_turn_key(end: u64) -> String {
    format!("{UNRESOLVED_PREFIX}{end}")
}

/// Prefix of [`unresolved_turn_key`].
pub const UNRESOLVED_PREFIX: &str = "@end:";

/// A Codex turn key the parser made up from the turn's position (`task-3`, `ctx-0`: the
/// rollout gave no `turn_id`). It depends on where parsing began.
pub fn positional_key(key: &str) -> bool {
    ["task-", "ctx-"].iter().any(|p| {
        key.strip_prefix(p)
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|c| c.is_ascii_digit()))
    })
}

/// What the Stop hook did.
#[derive(Debug, Clone, PartialEq)]
pub struct StopOutcome {
    /// The rule's decision (`SkipReadOnly` when `deferred`: the hook did not look).
    pub decision: Decision,
    pub session_key: String,
    pub turn_key: String,
    /// A new job was queued (false when skipped or already queued).
    pub enqueued: bool,
    /// A job for this turn exists (new or queued before): the worker has work.
    pub queued: bool,
    /// Queued for its memory statement only (read-only or `#nomemo`).
    pub memory_only: bool,
    /// Queued without being looked at (why): the worker finds and decides it.
    pub deferred: Option<String>,
    pub bytes_read: u64,
}

/// Handles a Stop payload against the store. `states_memory` tells whether a prompt states a
/// memory (the extractor's rules); it is asked only about turns that would not be recorded.
pub fn on_stop(
    store: &Store,
    agent: Agent,
    payload: &HookPayload,
    now: i64,
    states_memory: &dyn Fn(&str) -> bool,
) -> Result<StopOutcome, CaptureError> {
    let path = payload
        .transcript_path
        .as_deref()
        .ok_or(CaptureError::NoTranscript)?;
    // A FIFO would block the agent's hook forever, a device never end.
    match std::fs::metadata(path) {
        Ok(md) if md.is_file() => {}
        Ok(_) => {
            return Err(CaptureError::Transcript(format!(
                "{path} is not a regular file"
            )));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(CaptureError::Transcript(format!(
                "{path} does not exist (moved or deleted before the hook read it)"
            )));
        }
        Err(e) => {
            return Err(CaptureError::Transcript(format!("cannot read {path}: {e}")));
        }
    }
    let file = cairn_ingest::transcript_for_path(agent, Path::new(path));
    let resume = resume_point(store, &file.path)?;
    let turn_id = match agent {
        Agent::Codex => payload.turn_id.as_deref(),
        Agent::Claude => None,
    };
    let cwd = payload.cwd.clone();
    let not_found = || CaptureError::TurnNotFound {
        turn: turn_id.unwrap_or("(last)").to_owned(),
        path: path.to_owned(),
    };
    // Left to the worker, keyed by what the hook knows of the turn.
    let leave_to_worker = |end: u64, why: String, bytes_read: u64| {
        let session_key = if payload.session_id.is_empty() {
            file.session_hint.clone()
        } else {
            payload.session_id.clone()
        };
        let turn_key = turn_id.map_or_else(|| unresolved_turn_key(end), str::to_owned);
        let project = cwd
            .as_deref()
            .map(|c| project_root(Path::new(c)).to_string_lossy().into_owned());
        let job = JobPayload {
            transcript_path: path.to_owned(),
            cwd: cwd.clone(),
            project,
            end: Some(end),
            ..JobPayload::default()
        };
        let enqueued = enqueue(store, agent, &session_key, &turn_key, &job, now)?;
        Ok(StopOutcome {
            decision: Decision::SkipReadOnly,
            session_key,
            turn_key,
            enqueued,
            queued: true,
            memory_only: false,
            deferred: Some(why),
            bytes_read,
        })
    };
    let (turn, session_key, bytes_read) = match find_turn(&file, turn_id, resume, Limits::HOOK)? {
        Lookup::Found(found) => {
            let FoundTurn {
                turn,
                session_key,
                bytes_read,
                ..
            } = *found;
            (turn, session_key, bytes_read)
        }
        // Codex names the turn that ended, but its rollout writer is asynchronous: the turn
        // may not be in the file yet. The worker looks again (and retries while it is not).
        Lookup::NotFound if turn_id.is_some() => {
            return leave_to_worker(
                WHOLE_FILE,
                "the turn is not in the rollout yet".to_owned(),
                0,
            );
        }
        Lookup::NotFound => return Err(not_found()),
        Lookup::TooLarge {
            len,
            bytes_read,
            why,
            ..
        } => return leave_to_worker(len, why, bytes_read),
    };
    // An old rollout names its turns by position ("task-3"), and a position counted from
    // where the hook began reading is not the one ingest counts from the file's start: the
    // worker finds the turn in the file as it is now, and the stored turn by its content.
    if agent == Agent::Codex && turn_id.is_none() && positional_key(&turn.key) {
        let len = std::fs::metadata(path).map_or(WHOLE_FILE, |m| m.len());
        return leave_to_worker(
            len,
            "the rollout names its turns by position".to_owned(),
            bytes_read,
        );
    }
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
        queued: false,
        memory_only: false,
        deferred: None,
        bytes_read,
    };
    let forced = match decision {
        Decision::Record { forced, .. } => forced,
        // Not recorded, but what the user said there is to be remembered: the next session
        // must know it, so it is extracted now rather than at the next `cairn sync`.
        Decision::SkipReadOnly | Decision::SkipNoMemo
            if !turn.sidechain && turn.user_texts().into_iter().any(states_memory) =>
        {
            outcome.memory_only = true;
            false
        }
        Decision::SkipReadOnly | Decision::SkipNoMemo => return Ok(outcome),
    };
    let cwd = cwd.or(turn.cwd.clone());
    let project = cwd
        .as_deref()
        .map(|c| project_root(Path::new(c)).to_string_lossy().into_owned());
    // Only free text is redacted (paths are stored as file cursors store them), and the final
    // message is kept only when the file lags behind it: the common case never builds the
    // redaction engine, which would cost the agent milliseconds.
    let lagging = payload
        .last_assistant_message
        .as_deref()
        .filter(|_| !outcome.memory_only)
        .filter(|m| !m.trim().is_empty())
        .filter(|m| turn.last_assistant_text().map(str::trim) != Some(m.trim()));
    let job = JobPayload {
        transcript_path: path.to_owned(),
        cwd,
        project,
        last_assistant_message: match lagging {
            Some(m) => {
                let seen = store
                    .cursor(&file.path.to_string_lossy())?
                    .map(|c| cairn_ingest::seen_secrets(&c))
                    .unwrap_or_default();
                Some(crate::kept_final_message(seen, &turn, m))
            }
            None => None,
        },
        forced,
        memory_only: outcome.memory_only,
        end: None,
    };
    outcome.enqueued = enqueue(
        store,
        agent,
        &outcome.session_key,
        &outcome.turn_key,
        &job,
        now,
    )?;
    outcome.queued = true;
    Ok(outcome)
}

fn enqueue(
    store: &Store,
    agent: Agent,
    session_key: &str,
    turn_key: &str,
    job: &JobPayload,
    now: i64,
) -> Result<bool, CaptureError> {
    let body = serde_json::to_string(job).map_err(|e| CaptureError::Payload(e.to_string()))?;
    Ok(store.enqueue(
        &NewJob {
            kind: JOB_KIND,
            agent: agent.as_str(),
            session_key,
            turn_key,
            payload: Some(&body),
            project: job.project.as_deref(),
        },
        now,
    )?)
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
    // The same file, holding what was read before the cursor (one read of the window before
    // it): a file rewritten in place is scanned from its tail instead.
    if !cairn_ingest::cursor_still_valid(path, &c) {
        return Ok(None);
    }
    Ok(Some(ResumePoint {
        offset: c.offset,
        line: c.line,
        state,
    }))
}
