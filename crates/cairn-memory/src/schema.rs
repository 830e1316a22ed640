//! The memory tables, created in cairn's database next to the transcript tables.
//!
//! They are owned here, not in `cairn-store`'s migration list: each component that keeps
//! tables in the shared database records its own version in `schema_versions(component,
//! version)`. This component is `memory`.

use rusqlite::Connection;

use crate::error::{MemoryError, Result};

/// This component's name in `schema_versions`.
pub const COMPONENT: &str = "memory";
/// The version this build writes.
pub const VERSION: i64 = 1;

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
-- (Plus ADDED_INDEXES below.)
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

/// Indexes added since version 1, by name. An index changes nothing a version reads or
/// writes (SQLite maintains it on every write, whichever build writes), so adding one keeps
/// the version: earlier builds still open the database.
const ADDED_INDEXES: [(&str, &str); 5] = [
    (
        // What ordering a scope's live memories by usefulness reads (the session-start
        // summary), without visiting the table.
        "memories_live_rank",
        "CREATE INDEX IF NOT EXISTS memories_live_rank
             ON memories(scope, type, updated_at, recall_count, id)
             WHERE forgotten_at IS NULL AND superseded_by IS NULL",
    ),
    (
        // The live memories that ranking takes whatever their age: recalled ones, and ones
        // of a type this build does not know (the condition is repeated word for word by
        // the query that reads it, so that SQLite can use it).
        "memories_live_recalled",
        "CREATE INDEX IF NOT EXISTS memories_live_recalled
             ON memories(scope, type, updated_at, recall_count, id)
             WHERE forgotten_at IS NULL AND superseded_by IS NULL
               AND (recall_count != 0 OR type NOT IN ('user', 'feedback', 'project', 'reference'))",
    ),
    (
        // The memories a turn gave, by its provenance: what follows a turn read from a file
        // that moved (an archived Codex rollout) to its new path.
        "memories_source_turn",
        "CREATE INDEX IF NOT EXISTS memories_source_turn
             ON memories(source_agent, source_session, source_turn)",
    ),
    (
        // What the person forgot (their text erased), which every view refresh keeps beside
        // the views: read without visiting the table (the condition is repeated word for word
        // by `tombstones::from_db`).
        "memories_forgotten",
        "CREATE INDEX IF NOT EXISTS memories_forgotten
             ON memories(forgotten_at, id)
             WHERE forgotten_at IS NOT NULL AND rule = ''",
    ),
    (
        // The statements a memory came from: read for the tombstones and for a memory's
        // own origins, which a scan of every statement would otherwise find.
        "memory_origins_memory",
        "CREATE INDEX IF NOT EXISTS memory_origins_memory ON memory_origins(memory_id)",
    ),
];

/// Tables added since version 1, by name: like [`ADDED_INDEXES`], they change nothing an
/// earlier build reads or writes, so adding one keeps the version.
const ADDED_TABLES: [(&str, &str); 2] = [
    (
        // Memories an agent's own memory holds already for a project (Claude Code's background
        // extraction saved the statement): not given to that agent there a second time.
        "memory_held",
        "CREATE TABLE IF NOT EXISTS memory_held (
             memory_id TEXT NOT NULL,
             agent TEXT NOT NULL,
             scope TEXT NOT NULL,
             PRIMARY KEY (memory_id, agent, scope)
         )",
    ),
    (
        // What a forgotten memory said, as a hash of its words (its text is erased): the
        // same statement in a turn from before the forget, read only later (another session,
        // a rollout synced late), stays forgotten.
        "memory_forgotten_texts",
        "CREATE TABLE IF NOT EXISTS memory_forgotten_texts (
             scope TEXT NOT NULL,
             fingerprint TEXT NOT NULL,
             memory_id TEXT NOT NULL,
             forgotten_at INTEGER NOT NULL,
             PRIMARY KEY (scope, fingerprint)
         )",
    ),
];

/// Creates the tables and indexes if needed and records the version; refuses a newer
/// layout.
pub fn ensure(conn: &Connection) -> Result<()> {
    match cairn_store::ensure_component(conn, COMPONENT, VERSION, DDL)? {
        cairn_store::ComponentState::Ready => {}
        cairn_store::ComponentState::TooNew { found } => {
            return Err(MemoryError::TooNew {
                found,
                known: VERSION,
            });
        }
    }
    let mut st = conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE type = 'index' AND name = ?1)",
    )?;
    let mut tables = conn.prepare_cached(
        "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1)",
    )?;
    // (Read-only, nothing can be added: readers do without.)
    let writable = !conn.is_readonly(rusqlite::MAIN_DB)?;
    for (name, ddl) in ADDED_TABLES {
        if writable && !tables.query_row([name], |r| r.get::<_, bool>(0))? {
            conn.execute_batch(ddl)?;
        }
    }
    for (name, ddl) in ADDED_INDEXES {
        // Read first: opening a database that has them takes no write lock (hooks).
        if writable && !st.query_row([name], |r| r.get::<_, bool>(0))? {
            conn.execute_batch(ddl)?;
        }
    }
    Ok(())
}
