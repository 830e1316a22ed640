//! Per-turn capture: from an agent's hook to a stored turn digest and, opt-in, a memo block.
//!
//! This crate owns the hook payloads of both agents ([`payload`]), finding the turn that just
//! ended from the transcript's tail or the stored cursor without reading the whole file
//! ([`tail`]), deciding whether a turn changed anything and whether the user asked for or
//! against a record with `#memo`/`#nomemo` ([`classify`], over the small shell reader in
//! [`shell`]), enqueuing one job per turn ([`stop`]: a turn that changed something, a read-only
//! turn whose prompt states a memory, or a turn too large for the hook to look at), the
//! background worker that marks the Stop-reported turn ended and turns jobs into digests
//! ([`worker`], [`digest`]), the memo journal and its validator ([`memo`]), the context
//! hooks hand back to the agent ([`context`]), cairn's log ([`log`]), and starting the worker
//! detached ([`detach`]). It must not decide where files live (callers pass the data dir, the
//! transcript comes from the hook), print to stdout (the binary owns the hook's output), or call
//! a model: digests are built from structured events alone. Every text it writes (store, log,
//! memo, hook output) passes through `cairn_redact`.

pub mod classify;
pub mod context;
pub mod detach;
pub mod digest;
pub mod log;
pub mod memo;
pub mod payload;
pub mod shell;
pub mod stop;
pub mod tail;
pub mod text;
pub mod worker;

use std::fs::{File, OpenOptions};
use std::path::{Path, PathBuf};

pub use classify::{Decision, Effect, classify_command, classify_turn, decide};
pub use context::{ContextPiece, ContextProvider, ContextRequest};
pub use digest::TurnDigest;
pub use log::CaptureLog;
pub use payload::{HookEvent, HookPayload};
pub use stop::{JobPayload, StopOutcome, on_stop};
pub use worker::{Worker, WorkerLock, WorkerReport};

/// Set on every process cairn starts; a hook that sees it does nothing (no recursion through
/// cairn's own agent runs).
pub const INSIDE_ENV: &str = "CAIRN_INSIDE";

/// The job kind the Stop hook enqueues.
pub const JOB_KIND: &str = "turn-digest";

/// Errors of the capture pipeline.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error("bad hook input: {0}")]
    Payload(String),
    #[error("the hook input names no transcript (transcript_path is null)")]
    NoTranscript,
    #[error("{0}")]
    Transcript(String),
    #[error("turn {turn} not found in {path}")]
    TurnNotFound { turn: String, path: String },
    #[error("{0}")]
    Job(String),
    #[error("memo journal: {0}")]
    Memo(String),
    #[error("{0}")]
    Io(String),
    #[error(transparent)]
    Store(#[from] cairn_store::StoreError),
}

/// The project a working directory belongs to: the nearest ancestor with `.git`, else the
/// directory itself.
pub fn project_root(cwd: &Path) -> PathBuf {
    let mut d = Some(cwd);
    while let Some(dir) = d {
        if dir.join(".git").exists() {
            return dir.to_path_buf();
        }
        d = dir.parent();
    }
    cwd.to_path_buf()
}

/// An assistant's final message as the store keeps it: capped like the parser caps it, and
/// redacted, also of the secrets met before in the transcript (`seen`, from its cursor) and in
/// the turn itself: "logged in with …" repeats a password only the prompt named. (The Stop
/// hook calls this when the file lags behind the message: the turn's words and commands are
/// read for secrets, not its tool outputs; the worker masks the message again after its
/// ingest, with all of them.)
pub fn kept_final_message(
    mut seen: cairn_redact::SeenSecrets,
    turn: &cairn_transcript::Turn,
    s: &str,
) -> String {
    use cairn_transcript::Event;
    for text in turn.user_texts() {
        let _ = seen.redact(text);
    }
    for e in &turn.events {
        match e {
            Event::AssistantText { text, .. } => {
                let _ = seen.redact(text);
            }
            Event::ToolCall { command, args, .. } => {
                for t in command.iter().chain(args) {
                    let _ = seen.redact(t);
                }
            }
            _ => {}
        }
    }
    let capped = cairn_transcript::text::cap_head(s, cairn_transcript::text::MAX_ASSISTANT_TEXT);
    seen.redact(&capped).into_owned()
}

/// Creates `dir` (0700) if missing.
pub(crate) fn private_dir(dir: &Path) -> std::io::Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
}

/// Opens (creating 0600) a file for locking.
pub(crate) fn private_file(path: &Path) -> std::io::Result<File> {
    if let Some(d) = path.parent() {
        private_dir(d)?;
    }
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

/// Opens (creating 0600) a file for appending.
pub(crate) fn private_append(path: &Path) -> std::io::Result<File> {
    if let Some(d) = path.parent() {
        private_dir(d)?;
    }
    let mut o = OpenOptions::new();
    o.append(true).create(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn project_root_is_the_git_root() {
        let d = tempfile::tempdir().unwrap();
        let root = d.path().join("repo");
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("src/deep")).unwrap();
        assert_eq!(project_root(&root.join("src/deep")), root);
        let plain = d.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        // Without a .git anywhere above the temp dir, the cwd itself.
        if !d.path().ancestors().any(|a| a.join(".git").exists()) {
            assert_eq!(project_root(&plain), plain);
        }
    }
}
