//! Schema and migrations, versioned with `PRAGMA user_version`.

use rusqlite::Connection;

use crate::{Result, StoreError};

/// Each entry migrates from version `i` to `i + 1`.
const MIGRATIONS: &[&str] = &[
    // 1: transcripts, cursors, jobs, facts.
    "CREATE TABLE files (
        path TEXT PRIMARY KEY,
        agent TEXT NOT NULL,
        kind TEXT NOT NULL,
        session_key TEXT,
        dev INTEGER NOT NULL DEFAULT 0,
        ino INTEGER NOT NULL DEFAULT 0,
        size INTEGER NOT NULL DEFAULT 0,
        mtime_ns INTEGER NOT NULL DEFAULT 0,
        head_len INTEGER NOT NULL DEFAULT 0,
        head_hash INTEGER NOT NULL DEFAULT 0,
        offset INTEGER NOT NULL DEFAULT 0,
        line INTEGER NOT NULL DEFAULT 0,
        state TEXT,
        skipped_lines INTEGER NOT NULL DEFAULT 0,
        updated_at INTEGER
    );
    CREATE TABLE sessions (
        agent TEXT NOT NULL,
        session_key TEXT NOT NULL,
        session_id TEXT NOT NULL,
        subagent TEXT,
        project_key TEXT,
        cwd TEXT,
        git_branch TEXT,
        started_at TEXT,
        cli_version TEXT,
        parent TEXT,
        continued_in TEXT,
        path TEXT,
        updated_at INTEGER,
        PRIMARY KEY (agent, session_key)
    );
    CREATE TABLE turns (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        session_key TEXT NOT NULL,
        turn_key TEXT NOT NULL,
        seq INTEGER NOT NULL,
        status TEXT NOT NULL,
        started_at TEXT,
        ended_at TEXT,
        cwd TEXT,
        sidechain INTEGER NOT NULL DEFAULT 0,
        prompt TEXT NOT NULL,
        body TEXT NOT NULL,
        source_path TEXT NOT NULL,
        event_count INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER,
        updated_at INTEGER,
        UNIQUE (agent, session_key, turn_key)
    );
    CREATE INDEX turns_started ON turns(started_at);
    CREATE TABLE jobs (
        id INTEGER PRIMARY KEY,
        kind TEXT NOT NULL,
        agent TEXT NOT NULL,
        session_key TEXT NOT NULL,
        turn_key TEXT NOT NULL,
        payload TEXT,
        status TEXT NOT NULL DEFAULT 'pending',
        attempts INTEGER NOT NULL DEFAULT 0,
        next_run_at INTEGER NOT NULL DEFAULT 0,
        last_error TEXT,
        project TEXT,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (kind, agent, session_key, turn_key)
    );
    CREATE INDEX jobs_runnable ON jobs(status, next_run_at);
    CREATE TABLE meta (
        key TEXT PRIMARY KEY,
        value TEXT NOT NULL
    );",
    // 2: turn digests (one per recorded turn; the body is the digest as JSON).
    "CREATE TABLE digests (
        id INTEGER PRIMARY KEY,
        agent TEXT NOT NULL,
        session_key TEXT NOT NULL,
        turn_key TEXT NOT NULL,
        project TEXT,
        body TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (agent, session_key, turn_key)
    );
    CREATE INDEX digests_project ON digests(project, updated_at);",
    // 3: a revision per turn, raised whenever the turn is inserted or changes, so that
    // readers that follow the turns (memory extraction) read only what changed.
    "ALTER TABLE turns ADD COLUMN revision INTEGER NOT NULL DEFAULT 0;
    UPDATE turns SET revision = id;
    CREATE INDEX turns_revision ON turns(revision);",
];

pub(crate) const VERSION: i64 = MIGRATIONS.len() as i64;

pub(crate) fn migrate(conn: &mut Connection) -> Result<()> {
    let current: i64 = conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    if current > VERSION {
        return Err(StoreError::TooNew {
            found: current,
            known: VERSION,
        });
    }
    if current == VERSION {
        return Ok(());
    }
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Exclusive)?;
    // Another process may have migrated while we waited for the lock.
    let current: i64 = tx.query_row("PRAGMA user_version", [], |r| r.get(0))?;
    for (i, sql) in MIGRATIONS.iter().enumerate().skip(current.max(0) as usize) {
        tx.execute_batch(sql)?;
        tx.pragma_update(None, "user_version", (i + 1) as i64)?;
    }
    tx.commit()?;
    Ok(())
}
