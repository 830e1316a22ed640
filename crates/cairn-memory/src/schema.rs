//! The memory tables, created in cairn's database next to the transcript tables.
//!
//! They are owned here, not in `cairn-store`'s migration list: each component that keeps
//! tables in the shared database records its own version in `schema_versions(component,
//! version)`. This component is `memory`.

use rusqlite::Connection;

use crate::error::{MemoryError, Result};

/// This component's name in `schema_versions`.
pub const COMPONENT: &str = "memory";
/// The version this build writes. 2 added `memories_live_rank`.
pub const VERSION: i64 = 2;

/// Every table and index of the current version, as idempotent statements: an earlier
/// version's database gains what it lacks.
const DDL: &str = "
CREATE TABLE IF NOT EXISTS memories (
    id TEXT PRIMARY KEY,
    type TEXT NOT NULL,
    scope TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    rule TEXT NOT NULL,
    why TEXT,
    how TEXT,
    keywords TEXT NOT NULL DEFAULT '',
    source_kind TEXT NOT NULL,
    source_agent TEXT,
    source_session TEXT,
    source_turn TEXT,
    source_path TEXT,
    source_line INTEGER,
    source_at TEXT,
    created_at INTEGER NOT NULL,
    updated_at INTEGER NOT NULL,
    last_recalled_at INTEGER,
    recall_count INTEGER NOT NULL DEFAULT 0,
    superseded_by TEXT,
    forgotten_at INTEGER
);
CREATE INDEX IF NOT EXISTS memories_scope ON memories(scope, type);
-- What ordering a scope's live memories by usefulness reads (the session-start summary),
-- without visiting the table.
CREATE INDEX IF NOT EXISTS memories_live_rank ON memories(scope, type, updated_at, recall_count, id)
    WHERE forgotten_at IS NULL AND superseded_by IS NULL;
-- What produced a memory: one row per (turn, statement); survives a forget (tombstone).
CREATE TABLE IF NOT EXISTS memory_origins (
    origin TEXT PRIMARY KEY,
    memory_id TEXT NOT NULL
);
-- Which turns were extracted, and from what (prompt fingerprint), so re-runs are idempotent.
CREATE TABLE IF NOT EXISTS memory_extractions (
    agent TEXT NOT NULL,
    session_key TEXT NOT NULL,
    turn_key TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    outcome TEXT NOT NULL,
    memory_ids TEXT NOT NULL DEFAULT '',
    extracted_at INTEGER NOT NULL,
    PRIMARY KEY (agent, session_key, turn_key)
);
-- The markdown view files cairn wrote, to notice hand edits.
CREATE TABLE IF NOT EXISTS memory_views (
    path TEXT PRIMARY KEY,
    memory_id TEXT,
    scope TEXT NOT NULL,
    hash TEXT NOT NULL,
    size INTEGER NOT NULL,
    mtime_ns INTEGER NOT NULL,
    written_at INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS memory_scopes (
    slug TEXT PRIMARY KEY,
    scope TEXT NOT NULL UNIQUE
);
-- Memories already put in front of the agent in a session (not injected twice).
CREATE TABLE IF NOT EXISTS memory_shown (
    session TEXT NOT NULL,
    memory_id TEXT NOT NULL,
    shown_at INTEGER NOT NULL,
    PRIMARY KEY (session, memory_id)
);
";

/// Creates the tables if needed and records the version; refuses a newer layout.
pub fn ensure(conn: &Connection) -> Result<()> {
    match cairn_store::ensure_component(conn, COMPONENT, VERSION, DDL)? {
        cairn_store::ComponentState::Ready => Ok(()),
        cairn_store::ComponentState::TooNew { found } => Err(MemoryError::TooNew {
            found,
            known: VERSION,
        }),
    }
}
