//! `cairn worker`: drains the background job queue (started by the hook; safe by hand).

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use cairn_capture::{CaptureLog, Worker, WorkerLock};
use cairn_config::Config;

use crate::cmd::ingest::open_store;
use crate::homes::Homes;
use crate::output;

#[derive(Debug, Default, Serialize)]
struct Report {
    /// Another worker held the lock; this one did nothing.
    busy: bool,
    done: u64,
    retried: u64,
    failed: u64,
    recovered: u64,
    memo_blocks: u64,
    /// Phase-1 outputs stored (with a model provider).
    phase1_stored: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_error: Option<String>,
}

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let log = CaptureLog::new(&homes.data_dir, "worker");
    let (config, config_error) = match Config::load(&homes.data_dir) {
        Ok(c) => (c, None),
        Err(e) => {
            let msg = format!("{e} (using the defaults)");
            log.error(&msg);
            (Config::default(), Some(msg))
        }
    };
    let mut store = open_store(homes)?;
    let mut total = Report {
        config_error,
        ..Report::default()
    };
    let mut rounds = 0;
    loop {
        let Some(lock) = acquire(homes, rounds == 0)? else {
            total.busy = rounds == 0;
            break;
        };
        rounds += 1;
        let r = Worker {
            store: &mut store,
            config: &config,
            data_dir: &homes.data_dir,
            home: homes.home.as_deref(),
            log: &log,
        }
        .drain();
        let r = match r {
            Ok(r) => r,
            Err(e) => {
                log.error(&format!("worker stopped: {e}"));
                return Err(e.into());
            }
        };
        // Turns ingested by the jobs: extract their memory statements. Still under the lock, so
        // a worker is alive, and seen alive, until all of its work is done.
        if r.done > 0
            && let Err(e) =
                crate::cmd::memories::extract(homes, crate::cmd::memories::Follow::Now, true)
        {
            log.error(&format!(
                "memory extraction failed: {}",
                crate::output::error_text(e.as_ref())
            ));
        }
        // With a model: phase 1 over the sessions whose turns ended (Stops that arrive while
        // it runs coalesce into its follow-up round), then consolidation of what it stored.
        if r.done > 0 && config.llm.provider != cairn_llm::ProviderKind::None {
            match crate::cmd::extract::phase1(homes, &config, config.extract.mode, true) {
                Ok(Some(p)) => {
                    total.phase1_stored += p.stored as u64;
                    for u in &p.units {
                        if u.memories_dropped > 0 {
                            log.line("warn", &format!(
                                "phase 1: {} session {}: {} memories beyond the {} kept per session were not stored",
                                u.agent,
                                u.session,
                                u.memories_dropped,
                                cairn_stage1::MAX_PROPOSED_MEMORIES
                            ));
                        }
                        if let Some(e) = &u.error {
                            log.error(&format!(
                                "phase 1: {} session {}: {e} (retried later; `cairn status` lists failures)",
                                u.agent, u.session
                            ));
                        }
                    }
                    if let Some(e) = &p.error {
                        log.error(&format!("phase 1: {e}"));
                    }
                    if let Some(stop) = p.budget_stop {
                        log.error(&format!("phase 1 stopped: {stop}"));
                    }
                    if p.stored > 0
                        && let Err(e) = crate::cmd::consolidate::consolidate(homes, &config)
                    {
                        log.error(&format!(
                            "consolidation failed: {}",
                            crate::output::error_text(e.as_ref())
                        ));
                    }
                }
                Ok(None) => {}
                Err(e) => log.error(&format!(
                    "phase 1 failed: {}",
                    crate::output::error_text(e.as_ref())
                )),
            }
        }
        drop(lock);
        total.done += r.done;
        total.retried += r.retried;
        total.failed += r.failed;
        total.recovered += r.recovered;
        total.memo_blocks += r.memo_blocks;
        // A job queued while the lock was being released would wait for the next hook: look.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs() as i64);
        if store.next_pending_at()?.is_none_or(|t| t > now) {
            break;
        }
    }
    if json {
        output::json(&total)?;
    } else if total.busy {
        outln!("another worker is running; nothing to do");
    } else {
        outln!(
            "worker: {} job(s) done, {} to retry, {} failed, {} memo block(s) written",
            total.done,
            total.retried,
            total.failed,
            total.memo_blocks
        );
    }
    Ok(ExitCode::SUCCESS)
}

/// Takes the worker lock. At start, a few short retries: `cairn status` probes the lock for
/// microseconds, and a worker starting at that instant must not give up its job.
fn acquire(homes: &Homes, patient: bool) -> Result<Option<WorkerLock>> {
    let tries = if patient { 10 } else { 1 };
    for i in 0..tries {
        if let Some(l) = WorkerLock::try_acquire(&homes.data_dir)? {
            return Ok(Some(l));
        }
        if i + 1 < tries {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }
    Ok(None)
}
