//! The background worker: drains the job queue, one worker at a time.
//!
//! Only the holder of `<data dir>/worker.lock` works. Holding it, a worker knows that jobs still
//! marked running belong to a worker that died, and puts them back in the queue first. A job is
//! processed by ingesting its transcript (incrementally), building the turn digest from the
//! stored (redacted) turn, storing it, and appending the memo block when the journal is on. A
//! failing job is retried with a doubling delay and marked failed, with its error, after
//! `[worker] max_attempts`.
//!
//! The Stop hook reported the job's turn as ended, so the stored turn is marked complete (the
//! file shows a Claude Code turn's end only when the next prompt or the end-of-turn record
//! comes): memory extraction, which leaves open turns for later while the agent may still be
//! writing them, takes it in this run. A job the hook queued for its memory statement only gets
//! no digest; a job the hook could not resolve (`end`) has its turn found here, without the
//! hook's limits, and recorded when the rule says so.

use std::borrow::Cow;
use std::fs::File;
use std::path::{Path, PathBuf};

use cairn_config::Config;
use cairn_store::{Job, Store, StoredTurn};
use cairn_transcript::{Agent, Event, Turn, TurnStatus};

use crate::classify::{Decision, decide};
use crate::digest::TurnDigest;
use crate::log::CaptureLog;
use crate::memo::{self, Appended, MemoKey};
use crate::stop::{JobPayload, UNRESOLVED_PREFIX, positional_key};
use crate::tail::{Limits, Lookup, find_turn_before};
use crate::{CaptureError, JOB_KIND, project_root};

/// The single-worker lock file's name in the data dir.
pub const WORKER_LOCK: &str = "worker.lock";
/// The memo journal lock file's name in the data dir.
pub const MEMO_LOCK: &str = "memo.lock";
/// A claimed job's lease, in seconds (only matters if a worker hangs while holding the lock).
const LEASE_SECS: i64 = 600;
/// Test-only fault injection: `CAIRN_FAULT=abort-after-memo` makes the worker abort right after
/// writing a memo block and before marking its job done (a crash at the worst moment).
pub const FAULT_ENV: &str = "CAIRN_FAULT";

/// The single-worker lock, held while alive.
pub struct WorkerLock {
    _file: File,
}

impl WorkerLock {
    pub fn path(data_dir: &Path) -> PathBuf {
        data_dir.join(WORKER_LOCK)
    }

    /// Takes the lock unless another worker holds it.
    pub fn try_acquire(data_dir: &Path) -> Result<Option<WorkerLock>, CaptureError> {
        let path = WorkerLock::path(data_dir);
        let f = crate::private_file(&path)
            .map_err(|e| CaptureError::Io(format!("cannot open {}: {e}", path.display())))?;
        match f.try_lock() {
            Ok(()) => Ok(Some(WorkerLock { _file: f })),
            Err(std::fs::TryLockError::WouldBlock) => Ok(None),
            Err(std::fs::TryLockError::Error(e)) => Err(CaptureError::Io(format!(
                "cannot lock {}: {e}",
                path.display()
            ))),
        }
    }

    /// Whether a worker is running now (someone holds the lock).
    pub fn is_held(data_dir: &Path) -> bool {
        matches!(WorkerLock::try_acquire(data_dir), Ok(None))
    }
}

/// What a drain did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WorkerReport {
    pub done: u64,
    pub retried: u64,
    pub failed: u64,
    /// Jobs found running at start (their worker died) and queued again.
    pub recovered: u64,
    pub memo_blocks: u64,
}

/// What the worker needs.
pub struct Worker<'a> {
    pub store: &'a mut Store,
    pub config: &'a Config,
    pub data_dir: &'a Path,
    pub home: Option<&'a Path>,
    pub log: &'a CaptureLog,
}

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

impl Worker<'_> {
    /// Drains the queue; the caller holds the [`WorkerLock`].
    pub fn drain(&mut self) -> Result<WorkerReport, CaptureError> {
        let mut report = WorkerReport {
            recovered: self.store.requeue_running_jobs(now())? as u64,
            ..WorkerReport::default()
        };
        if report.recovered > 0 {
            self.log.info(&format!(
                "{} job(s) of a worker that died were queued again",
                report.recovered
            ));
        }
        loop {
            let t = now();
            let Some(job) = self.store.claim_job(t, LEASE_SECS)? else {
                // Wait for a retry that is due soon; otherwise stop.
                match self.store.next_pending_at()? {
                    Some(at) if at - t <= self.config.worker.max_wait_secs as i64 => {
                        let secs = (at - t).clamp(1, 60) as u64;
                        std::thread::sleep(std::time::Duration::from_secs(secs));
                        continue;
                    }
                    _ => break,
                }
            };
            match self.process(&job) {
                Ok((wrote_memo, turn_key)) => {
                    self.store.complete_job(job.id, now())?;
                    report.done += 1;
                    report.memo_blocks += u64::from(wrote_memo);
                    self.log.info(&format!(
                        "job {} done: {} turn {} of session {}",
                        job.id, job.agent, turn_key, job.session_key
                    ));
                }
                Err(e) => {
                    let msg = cairn_redact::redact(&e.to_string()).into_owned();
                    let max = i64::from(self.config.worker.max_attempts);
                    let retry_at = (job.attempts < max).then(|| {
                        let delay = self.config.worker.retry_delay_secs as i64;
                        now() + delay.saturating_mul(1 << (job.attempts - 1).clamp(0, 10))
                    });
                    self.store.fail_job(job.id, &msg, retry_at, now())?;
                    if retry_at.is_some() {
                        report.retried += 1;
                        self.log.error(&format!(
                            "job {} attempt {}/{max} failed, will retry: {msg}",
                            job.id, job.attempts
                        ));
                    } else {
                        report.failed += 1;
                        self.log.error(&format!(
                            "job {} failed after {} attempt(s): {msg}",
                            job.id, job.attempts
                        ));
                    }
                }
            }
        }
        self.store.set_meta("last_worker_run", &now().to_string())?;
        Ok(report)
    }

    /// Processes one job; returns whether a memo block was written, and the turn's key.
    fn process(&mut self, job: &Job) -> Result<(bool, String), CaptureError> {
        if job.kind != JOB_KIND {
            return Err(CaptureError::Job(format!(
                "unknown job kind `{}` (queued by a newer cairn?)",
                job.kind
            )));
        }
        let agent = Agent::parse(&job.agent)
            .ok_or_else(|| CaptureError::Job(format!("unknown agent `{}`", job.agent)))?;
        let payload: JobPayload = job
            .payload
            .as_deref()
            .and_then(|p| serde_json::from_str(p).ok())
            .ok_or_else(|| CaptureError::Job("job has no readable payload".into()))?;
        let path = Path::new(&payload.transcript_path);
        if !path.is_file() {
            return Err(CaptureError::Transcript(format!(
                "transcript {} is gone",
                path.display()
            )));
        }
        let file = cairn_ingest::transcript_for_path(agent, path);
        let report = cairn_ingest::ingest_file(self.store, &file)
            .map_err(|e| CaptureError::Job(format!("ingest failed: {e}")))?;
        if let Some(p) = report.errors.iter().find(|p| p.line.is_none()) {
            return Err(CaptureError::Transcript(p.message.clone()));
        }
        self.store.set_meta("last_ingest", &now().to_string())?;

        // The hook could not look at the turn: find it in the file as it was at the Stop.
        let mut found = None;
        let turn_key = match payload.end {
            Some(end) => {
                let id = (agent == Agent::Codex && !job.turn_key.starts_with(UNRESOLVED_PREFIX))
                    .then_some(job.turn_key.as_str());
                match find_turn_before(&file, id, None, Limits::WORKER, Some(end))? {
                    Lookup::Found(f) => {
                        let key = f.turn.key.clone();
                        found = Some(f.turn);
                        key
                    }
                    Lookup::TooLarge { why, .. } => {
                        return Err(CaptureError::Transcript(format!(
                            "{}: {why}; the turn cannot be read (ingest skips such lines too)",
                            payload.transcript_path
                        )));
                    }
                    Lookup::NotFound => {
                        return Err(CaptureError::TurnNotFound {
                            turn: id.unwrap_or("(last)").to_owned(),
                            path: payload.transcript_path.clone(),
                        });
                    }
                }
            }
            None => job.turn_key.clone(),
        };
        let cursor = self.store.cursor(&path.to_string_lossy())?;
        let cursor_session = cursor.as_ref().and_then(|c| c.session_key.clone());
        // The secrets ingest met in the file, to mask their copies in what the hook handed over.
        let mut seen = cursor
            .as_ref()
            .map(cairn_ingest::seen_secrets)
            .unwrap_or_default();
        // A turn named by its position ("task-0" counted from where the search began
        // reading) is not the stored turn of that name, but the one that started when it did
        // (or, without a time, that says what it said).
        let by_position = found.as_ref().filter(|t| positional_key(&t.key));
        let mut stored = None;
        for key in cursor_session
            .iter()
            .chain(std::iter::once(&job.session_key))
            .filter(|_| by_position.is_none())
        {
            stored = self.store.turn(agent, key, &turn_key)?;
            if stored.is_some() {
                break;
            }
        }
        if let Some(t) = by_position {
            for key in cursor_session
                .iter()
                .chain(std::iter::once(&job.session_key))
            {
                stored = self
                    .store
                    .session_turns(agent, key)?
                    .into_iter()
                    .rev()
                    .find(|s| match &t.started_at {
                        Some(at) => s.turn.started_at.as_deref() == Some(at.as_str()),
                        // (The stored prompt is redacted, the file's is not.)
                        None => {
                            s.turn.prompt == cairn_redact::redact(&t.prompt)
                                || s.turn.prompt == seen.redact(&t.prompt)
                        }
                    });
                if stored.is_some() {
                    break;
                }
            }
        }
        let stored = stored.ok_or_else(|| CaptureError::TurnNotFound {
            turn: turn_key.clone(),
            path: payload.transcript_path.clone(),
        })?;
        let turn_key = stored.turn.key.clone();
        close_turn(self.store, agent, &stored)?;
        let record = if payload.end.is_some() {
            matches!(decide(&stored.turn), Decision::Record { .. })
        } else {
            !payload.memory_only
        };
        if !record {
            // Kept for its memory statements (extracted after the drain), nothing to digest.
            return Ok((false, turn_key));
        }
        let mut turn = stored.turn;
        let last = payload
            .last_assistant_message
            .as_deref()
            .map(|m| seen.redact(m));
        if let Some(masked) = last.as_ref().filter(|m| matches!(m, Cow::Owned(_))) {
            let kept = JobPayload {
                last_assistant_message: Some(masked.to_string()),
                ..payload.clone()
            };
            if let Ok(text) = serde_json::to_string(&kept) {
                self.store.set_job_payload(job.id, &text)?;
            }
        }
        apply_last_message(&mut turn, last.as_deref());
        let digest = TurnDigest::build(&turn);
        let body = serde_json::to_string(&digest).map_err(|e| CaptureError::Job(e.to_string()))?;
        let project = payload.project.clone().or_else(|| {
            payload
                .cwd
                .as_deref()
                .or(turn.cwd.as_deref())
                .map(|c| project_root(Path::new(c)).to_string_lossy().into_owned())
        });
        self.store.upsert_digest(
            agent.as_str(),
            &stored.session_key,
            &turn_key,
            project.as_deref(),
            &body,
            now(),
        )?;

        if !self.config.memo.enabled {
            return Ok((false, turn_key));
        }
        let Some(root) = project.as_deref() else {
            return Err(CaptureError::Memo(
                "the memo journal is on but the turn has no working directory".into(),
            ));
        };
        let memo_path = self.config.memo.file_for(Path::new(root), self.home);
        if let Some(link) = memo::linked_component(Path::new(root), &memo_path) {
            return Err(CaptureError::Memo(format!(
                "{} is a symbolic link inside the repository; the memo journal is not written through it",
                link.display()
            )));
        }
        let key = MemoKey {
            agent: agent.as_str().to_owned(),
            session: stored.session_key.clone(),
            turn: turn_key.clone(),
        };
        let when = memo_time(turn.ended_at.as_deref().or(turn.started_at.as_deref()));
        let block = memo::render_block(&key, &when, &digest);
        let outcome = memo::append_block(&memo_path, &self.data_dir.join(MEMO_LOCK), &key, &block)?;
        if std::env::var_os(FAULT_ENV).is_some_and(|v| v == "abort-after-memo") {
            std::process::abort();
        }
        Ok((outcome == Appended::Written, turn_key))
    }
}

/// Marks a turn the Stop hook reported as ended complete in the store (the file may not show
/// its end yet). A turn that goes on after all (another Stop hook kept the agent working) is
/// stored open again by the next ingest; extraction then reads it again only if what decides
/// its memories (its prompt, whether the agent wrote memory itself) changed.
fn close_turn(store: &mut Store, agent: Agent, stored: &StoredTurn) -> Result<(), CaptureError> {
    if stored.turn.status != TurnStatus::Open {
        return Ok(());
    }
    let mut turn = stored.turn.clone();
    turn.status = TurnStatus::Complete;
    let w = store.write()?;
    w.upsert_turn(agent, &stored.session_key, &turn, &stored.source_path)?;
    w.commit()?;
    Ok(())
}

/// When the file lags behind the hook, the hook's `last_assistant_message` is the real end of
/// the turn: add it unless the turn already ends with it.
pub fn apply_last_message(turn: &mut Turn, last: Option<&str>) {
    let Some(last) = last.filter(|m| !m.trim().is_empty()) else {
        return;
    };
    if turn.last_assistant_text().map(str::trim) == Some(last.trim()) {
        return;
    }
    turn.events.push(Event::AssistantText {
        text: last.to_owned(),
        at: None,
    });
}

/// `YYYY-MM-DD HH:MM` in the local time zone (the turn's end, else now).
fn memo_time(at: Option<&str>) -> String {
    let ts = at
        .and_then(|s| s.parse::<jiff::Timestamp>().ok())
        .unwrap_or_else(jiff::Timestamp::now);
    let zoned = ts.to_zoned_datetime(jiff::tz::TimeZone::system());
    zoned.strftime("%Y-%m-%d %H:%M").to_string()
}
