//! `cairn hook --agent claude|codex`: what the agents' hooks run.
//!
//! Reads the hook's JSON on stdin. Stop: find the turn that just ended, enqueue it when it is to
//! be recorded, start the detached worker if none runs. SessionStart / UserPromptSubmit: print
//! additional context (failure notices now, recall later) in the agents' JSON shape. It never
//! fails the agent: whatever goes wrong is logged and recorded, and the process exits 0 with
//! nothing on stdout.

use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use cairn_capture::context::{
    self, ConfigProblemNotice, ContextProvider, ContextRequest, FailedJobsNotice, HookErrorNotice,
};
use cairn_capture::{CaptureLog, Decision, HookEvent, HookPayload, INSIDE_ENV, WorkerLock};
use cairn_store::Store;
use cairn_transcript::Agent;

use crate::homes::Homes;

/// Which agent's hook is calling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentArg {
    Claude,
    Codex,
}

impl AgentArg {
    pub fn agent(self) -> Agent {
        match self {
            AgentArg::Claude => Agent::Claude,
            AgentArg::Codex => Agent::Codex,
        }
    }
}

/// Hook input larger than this is not read (no agent sends that much).
const MAX_INPUT: u64 = 16 * 1024 * 1024;

pub fn run(homes: &Homes, agent: AgentArg) -> Result<ExitCode> {
    if std::env::var_os(INSIDE_ENV).is_some_and(|v| !v.is_empty()) {
        // Drain the input anyway: an agent writing to a closed pipe may report an error.
        let _ = std::io::copy(&mut std::io::stdin().take(MAX_INPUT), &mut std::io::sink());
        return Ok(ExitCode::SUCCESS);
    }
    // The hook path is latency-critical: never load the full transformer here (a
    // full-tier store is searched through a static copy of its vectors).
    cairn_embed::tier::set_model_loading(false);
    let log = CaptureLog::new(&homes.data_dir, "hook");
    let result = std::panic::catch_unwind(|| handle(homes, agent.agent(), &log));
    let err = match result {
        Ok(Ok(Some(out))) => {
            outln!("{out}");
            return Ok(ExitCode::SUCCESS);
        }
        Ok(Ok(None)) => return Ok(ExitCode::SUCCESS),
        Ok(Err(e)) => crate::output::error_text(e.as_ref()),
        Err(_) => "the hook panicked".to_owned(),
    };
    log.error(&format!("{} hook failed: {err}", agent.agent()));
    record_error(homes, &err);
    Ok(ExitCode::SUCCESS)
}

fn now() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64)
}

fn handle(homes: &Homes, agent: Agent, log: &CaptureLog) -> Result<Option<String>> {
    let mut input = String::new();
    let mut stdin = std::io::stdin();
    (&mut stdin)
        .take(MAX_INPUT + 1)
        .read_to_string(&mut input)
        .context("cannot read the hook input on stdin")?;
    if input.len() as u64 > MAX_INPUT {
        // Drained, so that the agent's write does not fail on a closed pipe.
        let _ = std::io::copy(&mut stdin, &mut std::io::sink());
        anyhow::bail!(
            "the hook input is larger than {} MiB: not read (no agent sends that much)",
            MAX_INPUT >> 20
        );
    }
    let payload = HookPayload::parse(&input)?;
    match payload.event {
        HookEvent::Stop if payload.transcript_path.is_none() => {
            // Codex sends null for sessions it does not persist (`--ephemeral`).
            log.info(&format!(
                "{agent} Stop without a transcript (ephemeral session): nothing to record"
            ));
            Ok(None)
        }
        HookEvent::Stop => {
            let store = open_store(homes)?;
            let out = cairn_capture::on_stop(&store, agent, &payload, now(), &states_memory)?;
            // Decisions are logged only on request: the log redacts, and building the
            // redaction engine would cost the waiting agent milliseconds on every turn.
            let verbose = std::env::var_os("CAIRN_DEBUG").is_some();
            let what = match (&out.deferred, &out.decision) {
                (Some(why), _) => format!("left to the worker ({why})"),
                (None, _) if out.memory_only => "recorded (memory statement)".to_owned(),
                (None, Decision::Record { forced: true, .. }) => "recorded (#memo)".to_owned(),
                (None, Decision::Record { .. }) => "recorded (changed)".to_owned(),
                (None, Decision::SkipNoMemo) => "skipped (#nomemo)".to_owned(),
                (None, Decision::SkipReadOnly) => "skipped (read-only)".to_owned(),
            };
            if verbose {
                log.info(&format!(
                    "{agent} turn {} of session {}: {what}{}",
                    out.turn_key,
                    out.session_key,
                    if out.queued && !out.enqueued {
                        ", already queued"
                    } else {
                        ""
                    }
                ));
            }
            if out.queued {
                drop(store);
                ensure_worker(homes, log)?;
            }
            Ok(None)
        }
        // "ignore memory" in a prompt: nothing of cairn's reaches the agent for it, not even a
        // notice (the notices wait for the next prompt).
        HookEvent::UserPromptSubmit
            if payload
                .prompt
                .as_deref()
                .is_some_and(cairn_memory::ignores_memory) =>
        {
            Ok(None)
        }
        HookEvent::SessionStart | HookEvent::UserPromptSubmit => {
            // Loaded once for every provider (the memory budget comes from it too).
            let config = cairn_config::Config::load(&homes.data_dir);
            let config_error = config.as_ref().err().map(|e| e.to_string());
            if let Some(e) = &config_error {
                log.error(e);
            }
            let store = match open_store_for_reading(homes) {
                Ok(s) => s,
                // Memory that cannot be opened (a full data dir, a damaged
                // database) is said at session start, once per session, so that its absence
                // is not silent; prompts stay quiet.
                Err(e) if payload.event == HookEvent::SessionStart => {
                    let why = crate::output::error_text(e.as_ref());
                    log.error(&format!("{agent} SessionStart: {why}"));
                    let piece = cairn_capture::ContextPiece {
                        for_agent: format!(
                            "cairn could not open its memory store, so no memories are available in this session: {why}"
                        ),
                        for_user: Some(format!(
                            "cairn: memory unavailable this session ({why}); run `cairn status` for details"
                        )),
                    };
                    return Ok(Some(context::render_output(&payload.event, &piece)));
                }
                Err(e) => return Err(e),
            };
            let cwd = payload.cwd.as_deref().map(Path::new);
            let project = cwd.map(|c| {
                cairn_capture::project_root(c)
                    .to_string_lossy()
                    .into_owned()
            });
            let req = ContextRequest {
                agent,
                event: &payload.event,
                session_id: &payload.session_id,
                cwd,
                project: project.as_deref(),
                prompt: payload.prompt.as_deref(),
                now: now(),
            };
            let config_notice = ConfigProblemNotice(config_error);
            let memory = crate::cmd::memories::MemoryContext::new(homes, config.as_ref().ok());
            let providers: [&dyn ContextProvider; 4] =
                [&FailedJobsNotice, &HookErrorNotice, &config_notice, &memory];
            let (piece, errors) = context::gather(&providers, &store, &req);
            for e in errors {
                log.error(&format!("context provider failed: {e}"));
            }
            // A history no sync has read for hours (sessions from before the hooks, turns
            // whose hooks did not run): a sync in the background reads it.
            if payload.event == HookEvent::SessionStart {
                let hours = config
                    .as_ref()
                    .map_or(cairn_config::WorkerConfig::default().catch_up_hours, |c| {
                        c.worker.catch_up_hours
                    });
                if let Err(e) = catch_up(homes, &store, hours, log) {
                    log.error(&format!("cannot start the catch-up sync: {e}"));
                }
            }
            // Jobs left waiting (a retry, or a worker that died): pick them up now.
            if payload.event == HookEvent::SessionStart
                && store.next_pending_at()?.is_some_and(|t| t <= now())
            {
                drop(store);
                ensure_worker(homes, log)?;
            }
            Ok(piece.map(|p| context::render_output(&payload.event, &p)))
        }
        HookEvent::Other(_) => Ok(None),
    }
}

/// Whether a prompt states a memory by the extractor's rules, or asks to forget one (a
/// read-only turn that does is queued so that the next session knows it).
fn states_memory(prompt: &str) -> bool {
    !prompt.trim().is_empty()
        && (!cairn_memory::extract::candidates(prompt).is_empty()
            || !cairn_memory::retractions(prompt).is_empty())
}

fn open_store(homes: &Homes) -> Result<Store> {
    let path = homes.db_path();
    let store = Store::open(&path).map_err(|e| {
        let advice = crate::cmd::ingest::store_advice(&e.to_string());
        anyhow::Error::new(e).context(format!(
            "cannot open cairn's database {} ({advice})",
            path.display()
        ))
    })?;
    // The agent waits for this process: leave the checkpoint's fsyncs to the worker.
    store.defer_checkpoint_on_close()?;
    Ok(store)
}

/// The store for the context hooks, which only read memory: read-only where the data dir
/// may not be written (see `ingest::open_store_for_reading`).
fn open_store_for_reading(homes: &Homes) -> Result<Store> {
    let store = crate::cmd::ingest::open_store_for_reading(homes)?;
    if !store.is_read_only() {
        // The agent waits for this process: leave the checkpoint's fsyncs to the worker.
        store.defer_checkpoint_on_close()?;
    }
    Ok(store)
}

/// Starts `cairn <command>` detached, with this process's homes, its output to the log.
fn spawn_cairn(homes: &Homes, log: &CaptureLog, command: &str) -> Result<u32> {
    let exe = std::env::current_exe().context("cannot locate the cairn binary")?;
    let args = [
        "--claude-dir".as_ref(),
        homes.claude_root()?.as_os_str(),
        "--codex-home".as_ref(),
        homes.codex_home()?.as_os_str(),
        "--data-dir".as_ref(),
        homes.data_dir.as_os_str(),
        command.as_ref(),
    ];
    Ok(cairn_capture::detach::spawn_detached(
        &exe,
        &args,
        &homes.data_dir,
        log.path(),
    )?)
}

/// The store meta key of the last catch-up sync a session start began.
const CATCH_UP_STARTED: &str = "catch_up_started";

/// Starts `cairn sync` in the background when none has run for `hours` (`last_ingest`), and
/// no catch-up began within the hour (one may still be running); 0 hours: never. Not in a
/// data dir this process may not write.
fn catch_up(homes: &Homes, store: &Store, hours: u64, log: &CaptureLog) -> Result<()> {
    if hours == 0 || store.is_read_only() {
        return Ok(());
    }
    let now = now();
    let at = |key: &str| -> Result<Option<i64>> {
        Ok(store.meta(key)?.and_then(|v| v.parse::<i64>().ok()))
    };
    let stale = at("last_ingest")?
        .is_none_or(|t| now.saturating_sub(t) >= i64::try_from(hours * 3600).unwrap_or(i64::MAX));
    let begun = at(CATCH_UP_STARTED)?.is_some_and(|t| now.saturating_sub(t) < 3600);
    if !stale || begun {
        return Ok(());
    }
    store.set_meta(CATCH_UP_STARTED, &now.to_string())?;
    let pid = spawn_cairn(homes, log, "sync").context("cannot start the catch-up sync")?;
    log.info(&format!(
        "session start: no sync for {hours} hour(s) or more; started one in the background ({pid})"
    ));
    Ok(())
}

/// Starts the detached worker unless one holds the worker lock.
fn ensure_worker(homes: &Homes, log: &CaptureLog) -> Result<()> {
    if WorkerLock::is_held(&homes.data_dir) {
        return Ok(());
    }
    let pid = spawn_cairn(homes, log, "worker").context("cannot start the background worker")?;
    if std::env::var_os("CAIRN_DEBUG").is_some() {
        log.info(&format!("started worker {pid}"));
    }
    Ok(())
}

/// Records a hook failure in the store (best effort: the store may be what failed).
fn record_error(homes: &Homes, err: &str) {
    let Ok(store) = Store::open(&homes.db_path()) else {
        return;
    };
    let count = store
        .meta(context::HOOK_ERROR_COUNT)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<i64>().ok())
        .unwrap_or(0);
    let _ = store.set_meta(context::HOOK_ERROR_COUNT, &(count + 1).to_string());
    let _ = store.set_meta(context::LAST_HOOK_ERROR, &cairn_redact::redact(err));
    let _ = store.set_meta(context::LAST_HOOK_ERROR_AT, &now().to_string());
}
