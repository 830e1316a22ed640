//! The consolidation tables, versioned in `schema_versions` as component `consolidate`.

use rusqlite::Connection;

use crate::{ConsolidateError, Result};

pub const COMPONENT: &str = "consolidate";
pub const VERSION: i64 = 1;

const V1: &str = "
-- The inputs as of the last successful consolidation: kind (`stage1`, `note`), key, content hash.
CREATE TABLE IF NOT EXISTS consolidation_manifest (
    kind TEXT NOT NULL,
    key TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
-- Every run: when, how it ended, what it did (JSON).
CREATE TABLE IF NOT EXISTS consolidation_runs (
    id INTEGER PRIMARY KEY,
    started_at INTEGER NOT NULL,
    finished_at INTEGER,
    status TEXT NOT NULL,
    error TEXT,
    report TEXT
);
-- Memories the user pinned: never aged out.
CREATE TABLE IF NOT EXISTS memory_pins (
    memory_id TEXT PRIMARY KEY,
    pinned_at INTEGER NOT NULL
);
-- Memories retired by consolidation, and why (`aged`, `withdrawn`).
CREATE TABLE IF NOT EXISTS memory_retired (
    memory_id TEXT PRIMARY KEY,
    retired_at INTEGER NOT NULL,
    reason TEXT NOT NULL
);
-- When consolidation first saw each memory: the aging clock never starts before it (a memory
-- extracted today from an old transcript is not old).
CREATE TABLE IF NOT EXISTS memory_seen (
    memory_id TEXT PRIMARY KEY,
    first_seen_at INTEGER NOT NULL
);
-- Files cairn wrote into a Codex memory workspace (only these are ever removed).
CREATE TABLE IF NOT EXISTS workspace_files (
    root TEXT NOT NULL,
    name TEXT NOT NULL,
    hash TEXT NOT NULL,
    PRIMARY KEY (root, name)
);
";

pub fn ensure(conn: &Connection) -> Result<()> {
    match cairn_store::ensure_component(conn, COMPONENT, VERSION, V1)? {
        cairn_store::ComponentState::Ready => Ok(()),
        cairn_store::ComponentState::TooNew { found } => Err(ConsolidateError::TooNew {
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
        Some(cairn_store::ComponentState::TooNew { found }) => Err(ConsolidateError::TooNew {
            found,
            known: VERSION,
        }),
    }
}
