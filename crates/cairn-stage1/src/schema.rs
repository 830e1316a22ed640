//! The phase-1 tables, in cairn's database, versioned in `schema_versions` as component
//! `stage1`.

use rusqlite::Connection;

use crate::{Result, Stage1Error};

pub const COMPONENT: &str = "stage1";
pub const VERSION: i64 = 1;

const V1: &str = "
-- One model extraction of a run of turns of one session, keyed by its last turn (Codex's
-- stage1_outputs, per turn instead of per thread).
CREATE TABLE IF NOT EXISTS stage1_outputs (
    agent TEXT NOT NULL,
    session_key TEXT NOT NULL,
    turn_key TEXT NOT NULL,
    session_id TEXT NOT NULL,
    cwd TEXT,
    git_branch TEXT,
    source_path TEXT NOT NULL,
    first_seq INTEGER NOT NULL,
    last_seq INTEGER NOT NULL,
    source_updated_at INTEGER NOT NULL,
    rollout_summary TEXT NOT NULL,
    rollout_slug TEXT,
    raw_memory TEXT NOT NULL,
    memories TEXT NOT NULL,
    generated_at INTEGER NOT NULL,
    input_tokens INTEGER NOT NULL DEFAULT 0,
    output_tokens INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (agent, session_key, turn_key)
);
CREATE INDEX IF NOT EXISTS stage1_outputs_updated ON stage1_outputs(source_updated_at DESC);
-- How far phase 1 has read each session, and its failures (retried with backoff).
CREATE TABLE IF NOT EXISTS stage1_cursors (
    agent TEXT NOT NULL,
    session_key TEXT NOT NULL,
    last_seq INTEGER NOT NULL DEFAULT -1,
    last_turn_key TEXT,
    attempts INTEGER NOT NULL DEFAULT 0,
    retry_at INTEGER,
    last_error TEXT,
    updated_at INTEGER NOT NULL,
    PRIMARY KEY (agent, session_key)
);
-- Every model call: what it was for and what it cost.
CREATE TABLE IF NOT EXISTS llm_usage (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    purpose TEXT NOT NULL,
    agent TEXT,
    session_key TEXT,
    turn_key TEXT,
    provider TEXT NOT NULL,
    model TEXT,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    outcome TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS llm_usage_at ON llm_usage(at);
";

/// Creates the tables if needed and records the version; refuses a newer layout.
pub fn ensure(conn: &Connection) -> Result<()> {
    match cairn_store::ensure_component(conn, COMPONENT, VERSION, V1)? {
        cairn_store::ComponentState::Ready => Ok(()),
        cairn_store::ComponentState::TooNew { found } => Err(Stage1Error::TooNew {
            found,
            known: VERSION,
        }),
    }
}

/// For code that only reads these tables: whether there is anything to read (see
/// `cairn_store::component_for_reading`: false on a read-only connection to a database
/// where they were never created); refuses a newer layout.
pub fn readable(conn: &Connection) -> Result<bool> {
    match cairn_store::component_for_reading(conn, COMPONENT, VERSION, V1)? {
        None => Ok(false),
        Some(cairn_store::ComponentState::Ready) => Ok(true),
        Some(cairn_store::ComponentState::TooNew { found }) => Err(Stage1Error::TooNew {
            found,
            known: VERSION,
        }),
    }
}
