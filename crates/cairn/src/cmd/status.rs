//! `cairn status`: the background jobs (pending, running, failed with their errors), the last
//! ingest and worker run, hook errors, the store's size and the configuration in effect.

use std::process::ExitCode;

use anyhow::{Context, Result};
use serde::Serialize;
use serde_json::Value;

use cairn_capture::context::{HOOK_ERROR_COUNT, LAST_HOOK_ERROR, LAST_HOOK_ERROR_AT};
use cairn_capture::{CaptureLog, WorkerLock};
use cairn_config::Config;
use cairn_store::{JobCounts, Store};

use crate::homes::Homes;
use crate::output;

#[derive(Serialize, Default)]
struct Jobs {
    pending: u64,
    running: u64,
    failed: u64,
    done: u64,
}

#[derive(Serialize)]
struct JobError {
    id: i64,
    status: String,
    agent: String,
    session: String,
    turn: String,
    attempts: i64,
    error: String,
    at: String,
}

#[derive(Serialize, Default)]
struct Unrecognised {
    count: u64,
    /// The first few, by path.
    paths: Vec<String>,
}

#[derive(Serialize)]
struct HookErrors {
    count: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    last: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    at: Option<String>,
}

#[derive(Serialize)]
struct Status {
    data_dir: String,
    database: String,
    /// The data dir may not be written by this process (a read-only mount, an agent's
    /// sandbox): the store was opened read-only, and memory can be read, not changed.
    read_only: bool,
    /// Why the database could not be read (the rest of the report stands).
    #[serde(skip_serializing_if = "Option::is_none")]
    database_error: Option<String>,
    store_bytes: u64,
    jobs: Jobs,
    job_errors: Vec<JobError>,
    worker_running: bool,
    last_ingest: Option<String>,
    /// Codex rollouts of a format cairn cannot read: nothing of them is in the store.
    unrecognised_rollouts: Unrecognised,
    last_worker_run: Option<String>,
    hook_errors: HookErrors,
    digests: u64,
    turns: u64,
    config_file: String,
    config: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    config_error: Option<String>,
    log: String,
    /// The active embedding tier and why.
    embeddings: crate::cmd::model::TierReport,
    /// The model provider, its budgets and the tokens spent.
    llm: Llm,
    /// The last consolidation (a failed workspace write is reported here).
    #[serde(skip_serializing_if = "Option::is_none")]
    consolidation: Option<cairn_consolidate::LastRun>,
    /// The files hooks and `cairn recall` map instead of reading the recall index (absent
    /// without a database).
    #[serde(skip_serializing_if = "Option::is_none")]
    search_files: Option<cairn_recall::SearchFiles>,
}

#[derive(Serialize, Default)]
struct Llm {
    provider: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    extract_mode: String,
    max_tokens_per_day: u64,
    max_tokens_per_run: u64,
    usage: cairn_stage1::UsageTotals,
    /// Sessions whose phase-1 extraction failed and waits for a retry.
    phase1_failures: Vec<String>,
}

fn iso(secs: Option<String>) -> Option<String> {
    let s: i64 = secs?.parse().ok()?;
    jiff::Timestamp::from_second(s).ok().map(|t| t.to_string())
}

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    // (A missing data dir is a fresh install, reported as such below; a file in its place
    // is a mistake to name.)
    if homes.data_dir.exists() && !homes.data_dir.is_dir() {
        anyhow::bail!(
            "the data dir {} is a file, not a directory: pass a directory to --data-dir (or CAIRN_HOME)",
            homes.data_dir.display()
        );
    }
    let db = homes.db_path();
    let store_bytes = ["", "-wal"]
        .iter()
        .filter_map(|suffix| {
            std::fs::metadata(format!("{}{suffix}", db.display()))
                .ok()
                .map(|m| m.len())
        })
        .sum();
    let (config, config_error) = match Config::load(&homes.data_dir) {
        Ok(c) => (Some(c), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let mut st = Status {
        data_dir: homes.data_dir.display().to_string(),
        database: db.display().to_string(),
        read_only: false,
        database_error: None,
        store_bytes,
        jobs: Jobs::default(),
        job_errors: Vec::new(),
        worker_running: false,
        last_ingest: None,
        unrecognised_rollouts: Unrecognised::default(),
        last_worker_run: None,
        hook_errors: HookErrors {
            count: 0,
            last: None,
            at: None,
        },
        digests: 0,
        turns: 0,
        config_file: Config::path_in(&homes.data_dir).display().to_string(),
        config: config.map(serde_json::to_value).transpose()?,
        config_error,
        log: CaptureLog::new(&homes.data_dir, "status")
            .path()
            .display()
            .to_string(),
        embeddings: crate::cmd::model::tier_report(homes),
        llm: Llm::default(),
        consolidation: None,
        search_files: None,
    };
    {
        let c = config_for_llm(homes);
        st.llm.provider = format!("{:?}", c.llm.provider).to_lowercase();
        st.llm.model = c.llm.model.clone();
        st.llm.extract_mode = format!("{:?}", c.extract.mode).to_lowercase();
        st.llm.max_tokens_per_day = c.llm.max_tokens_per_day;
        st.llm.max_tokens_per_run = c.llm.max_tokens_per_run;
    }
    // Do not create a database just to report that there is none.
    if db.is_file() {
        // A database this process cannot read (another user's file, a damaged one) is
        // reported with everything else status knows, not instead of it.
        let read = crate::cmd::ingest::open_store_for_reading(homes).and_then(|store| {
            st.read_only = store.is_read_only();
            fill(&store, &mut st)?;
            st.search_files = Some(
                cairn_recall::search_files(store.connection())
                    .context("cannot read the state of the search files")?,
            );
            Ok(())
        });
        if let Err(e) = read {
            st.database_error = Some(database_error(&e));
            st.read_only = st.read_only || may_not_write(&homes.data_dir);
        }
    } else {
        st.read_only = may_not_write(&homes.data_dir);
    }
    // After reading the jobs: a job seen running while no worker holds the lock is really
    // abandoned (probing first could miss a worker that started and claimed in between).
    st.worker_running = homes.data_dir.is_dir() && WorkerLock::is_held(&homes.data_dir);
    if json {
        output::json(&st)?;
    } else {
        print_human(&st);
    }
    Ok(if st.database_error.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// What went wrong reading the database, each cause once, and what to do.
fn database_error(e: &anyhow::Error) -> String {
    let said = crate::output::error_text(e.as_ref());
    let advice = crate::cmd::ingest::store_advice(&said);
    if said.contains(advice) {
        said
    } else {
        format!("{said} ({advice})")
    }
}

/// Whether this process may not create files in `dir`, or, when it is not made yet, make it
/// in the nearest directory that exists (permission bits, a read-only mount): asked of the
/// system, nothing is created.
fn may_not_write(dir: &std::path::Path) -> bool {
    dir.ancestors()
        .find(|a| a.is_dir())
        .is_some_and(|a| !may_create_in(a))
}

/// Whether this process may create entries in the existing directory `dir`.
#[cfg(unix)]
fn may_create_in(dir: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(c) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return true;
    };
    // SAFETY: `c` is a valid NUL-terminated path that outlives the call; access(2) only
    // reads it.
    unsafe { libc::access(c.as_ptr(), libc::W_OK | libc::X_OK) == 0 }
}

#[cfg(not(unix))]
fn may_create_in(_dir: &std::path::Path) -> bool {
    true
}

fn fill(store: &Store, st: &mut Status) -> Result<()> {
    let JobCounts {
        pending,
        running,
        done,
        failed,
    } = store.job_counts()?;
    st.jobs = Jobs {
        pending,
        running,
        failed,
        done,
    };
    st.job_errors = store
        .jobs_with_errors(10)?
        .into_iter()
        .map(|j| JobError {
            id: j.id,
            status: j.status.as_str().to_owned(),
            agent: j.agent,
            session: j.session_key,
            turn: j.turn_key,
            attempts: j.attempts,
            error: j.last_error.unwrap_or_default(),
            at: iso(Some(j.updated_at.to_string())).unwrap_or_default(),
        })
        .collect();
    st.last_ingest = iso(store.meta("last_ingest")?);
    let (count, paths) = store.unrecognised_files(5)?;
    st.unrecognised_rollouts = Unrecognised { count, paths };
    st.last_worker_run = iso(store.meta("last_worker_run")?);
    st.hook_errors = HookErrors {
        count: store
            .meta(HOOK_ERROR_COUNT)?
            .and_then(|v| v.parse().ok())
            .unwrap_or(0),
        last: store.meta(LAST_HOOK_ERROR)?,
        at: iso(store.meta(LAST_HOOK_ERROR_AT)?),
    };
    st.digests = store.digest_count()?;
    st.turns = store.turn_count()?;
    let conn = store.connection();
    st.llm.usage = cairn_stage1::Ledger::totals(conn, crate::cmd::extract::clock())?;
    st.consolidation = cairn_consolidate::last_run(conn)?;
    if !cairn_stage1::schema_readable(conn)? {
        return Ok(());
    }
    let mut q = conn.prepare(
        "SELECT agent, session_key, attempts, coalesce(last_error, '') FROM stage1_cursors
         WHERE last_error IS NOT NULL ORDER BY updated_at DESC LIMIT 5",
    )?;
    let rows = q.query_map([], |r| {
        Ok(format!(
            "{} {} (attempt {}): {}",
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?
        ))
    })?;
    st.llm.phase1_failures = rows.collect::<rusqlite::Result<_>>()?;
    Ok(())
}

fn config_for_llm(homes: &Homes) -> Config {
    Config::load(&homes.data_dir).unwrap_or_default()
}

fn print_human(st: &Status) {
    // What the store holds is not known when it cannot be read: no zeros for it.
    let unread = st.database_error.is_some();
    outln!("data dir:     {}", st.data_dir);
    if unread {
        outln!(
            "store:        {} ({}; contents unknown)",
            st.database,
            output::bytes(st.store_bytes)
        );
    } else {
        outln!(
            "store:        {} ({}; {} turns, {} digests)",
            st.database,
            output::bytes(st.store_bytes),
            st.turns,
            st.digests
        );
    }
    if let Some(e) = &st.database_error {
        outln!("              cannot read it: {e}");
    }
    if st.read_only {
        outln!(
            "              read-only here: this process may not write cairn's data dir, so memory \
             can be searched and listed but not changed (the hooks, the worker and `cairn sync` \
             need to write it: run them where the data dir is writable)"
        );
    }
    if unread {
        outln!("jobs:         unknown (the store cannot be read)");
    } else {
        outln!(
            "jobs:         {} pending, {} running, {} failed, {} done{}",
            st.jobs.pending,
            st.jobs.running,
            st.jobs.failed,
            st.jobs.done,
            if st.worker_running {
                " (worker running)"
            } else {
                ""
            }
        );
    }
    for e in &st.job_errors {
        outln!(
            "  job {} {} after {} attempt(s) ({} turn {}, {}): {}",
            e.id,
            e.status,
            e.attempts,
            e.agent,
            e.turn,
            e.at,
            e.error
        );
    }
    outln!(
        "last ingest:  {}",
        st.last_ingest
            .as_deref()
            .unwrap_or(if unread { "unknown" } else { "never" })
    );
    if st.unrecognised_rollouts.count > 0 {
        outln!(
            "unread:       {} Codex rollout(s) of a format cairn cannot read, so nothing of them \
             is stored (a newer Codex? update cairn; another tool's JSONL? move it out of sessions/):",
            st.unrecognised_rollouts.count
        );
        for p in &st.unrecognised_rollouts.paths {
            outln!("                {p}");
        }
    }
    outln!(
        "last worker:  {}",
        st.last_worker_run
            .as_deref()
            .unwrap_or(if unread { "unknown" } else { "never" })
    );
    if st.hook_errors.count > 0 {
        outln!(
            "hook errors:  {} (last at {}: {})",
            st.hook_errors.count,
            st.hook_errors.at.as_deref().unwrap_or("?"),
            st.hook_errors.last.as_deref().unwrap_or("")
        );
    }
    match (&st.config, &st.config_error) {
        (_, Some(e)) => outln!("config:       BROKEN, defaults in use: {e}"),
        (Some(c), None) => outln!(
            "config:       {} (memo journal {}, {} attempt(s) per job)",
            st.config_file,
            if c["memo"]["enabled"] == Value::Bool(true) {
                "on"
            } else {
                "off"
            },
            c["worker"]["max_attempts"]
        ),
        (None, None) => {}
    }
    outln!(
        "embeddings:   {}",
        crate::cmd::model::describe(&st.embeddings)
    );
    if let Some(f) = &st.search_files {
        outln!(
            "search files: vectors {}; word index {}",
            describe_file(f.vectors),
            describe_file(f.lexicon)
        );
    }
    outln!("log:          {}", st.log);
    let u = &st.llm.usage;
    if st.llm.provider == "none" {
        outln!("llm:          none (offline extraction only; set [llm] in config.toml)");
    } else {
        outln!(
            "llm:          {}{} ({} mode); today {} tokens in {} call(s) of {} per day; total {} in, {} out",
            st.llm.provider,
            st.llm
                .model
                .as_deref()
                .map(|m| format!(" {m}"))
                .unwrap_or_default(),
            st.llm.extract_mode,
            u.tokens_today,
            u.calls_today,
            if st.llm.max_tokens_per_day == 0 {
                "unlimited".to_string()
            } else {
                st.llm.max_tokens_per_day.to_string()
            },
            u.input_tokens_total,
            u.output_tokens_total
        );
    }
    for f in &st.llm.phase1_failures {
        outln!("  phase 1 failed: {f}");
    }
    if let Some(c) = &st.consolidation {
        let at = iso(Some(c.finished_at.unwrap_or(c.started_at).to_string())).unwrap_or_default();
        match &c.error {
            Some(e) => outln!("consolidate:  {} at {at}: {e}", c.status),
            None => outln!("consolidate:  {} at {at}", c.status),
        }
    }
}

/// A search file's state, for people.
fn describe_file(state: cairn_recall::FileState) -> String {
    use cairn_recall::FileState;
    match state {
        FileState::Current => "current".into(),
        FileState::Behind { changes } => {
            format!(
                "{changes} changed memor{} read on top",
                if changes == 1 { "y" } else { "ies" }
            )
        }
        FileState::Stale => {
            "out of date (searches read the database until the next sync or memory write)".into()
        }
        FileState::Missing => {
            "not written yet (searches read the database until the next sync or memory write)"
                .into()
        }
        FileState::NotUsed => "none (no memories indexed yet)".into(),
    }
}
