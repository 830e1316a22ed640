//! cairn's embedded database: one SQLite file (bundled SQLite, WAL, FTS5 available) holding
//! the ingested transcripts (sessions and turns), the per-file read cursors that make ingest
//! incremental, the background job queue, and small key/value facts (last ingest, ...).
//!
//! This crate owns the schema and its migrations, and every SQL statement about those tables;
//! it also versions the tables other crates keep in the same file ([`ensure_component`]) and
//! provides the data dir's non-blocking lock files ([`lockfile`]). It must not read agent files, parse transcripts, redact, or decide policy: callers hand it
//! values that are already redacted. The API is the seam a second backend (e.g. PostgreSQL for
//! a team server) would implement.

mod components;
mod digests;
mod jobs;
pub mod lockfile;
mod schema;

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use cairn_transcript::{Agent, Session, Turn};

pub use components::{ComponentState, component_for_reading, ensure_component};
pub use digests::StoredDigest;
pub use jobs::{Job, JobCounts, JobStatus, NewJob};

/// Errors from the store.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    #[error("cannot write to {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("stored data is corrupt: {0}")]
    Corrupt(String),
    #[error(
        "the database was written by a newer cairn (schema {found}, this build knows {known}); upgrade cairn"
    )]
    TooNew { found: i64, known: i64 },
}

pub type Result<T, E = StoreError> = std::result::Result<T, E>;

/// Where ingest stopped in one transcript file, and how to recognise the same file next time.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FileCursor {
    pub path: String,
    pub agent: String,
    pub kind: String,
    pub session_key: Option<String>,
    pub dev: u64,
    pub ino: u64,
    pub size: u64,
    pub mtime_ns: i64,
    /// Hash of the first `head_len` bytes: a replaced file with the same inode is noticed.
    pub head_len: u64,
    pub head_hash: u64,
    /// Bytes consumed (always at a line boundary).
    pub offset: u64,
    /// Lines consumed.
    pub line: u64,
    /// The parser's state at `offset` (JSON), so reading resumes mid-turn.
    pub state: Option<String>,
    pub skipped_lines: u64,
}

/// A turn as stored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredTurn {
    pub id: i64,
    pub agent: String,
    pub session_key: String,
    pub turn: Turn,
    pub source_path: String,
}

/// What [`Write::upsert_turn`] did to a turn's row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnWritten {
    /// A new row.
    New,
    /// The row's content changed (what was said and done, the turn's status or marks).
    Changed,
    /// Only the file it is read from changed (Codex moved the rollout to
    /// `archived_sessions/`): the row names the new path and its revision is raised, so the
    /// readers that follow the turns see the move, but nothing in the turn changed.
    Moved,
    /// The row was left as it was.
    Same,
}

impl TurnWritten {
    pub fn is_new(self) -> bool {
        self == TurnWritten::New
    }
}

/// What [`Write::set_session_memory_mode`] did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MemoryModeMarked {
    /// Stored turns whose memory mode changed.
    pub changed: u64,
    /// Keys of stored turns whose body could not be decoded (left as they were).
    pub unreadable: Vec<String>,
}

/// What [`Store::turns_changed_since`] found.
#[derive(Debug, Clone, Default)]
pub struct ChangedTurns {
    /// The turns, each with its revision, oldest first.
    pub turns: Vec<(i64, StoredTurn)>,
    /// Revisions of rows whose stored body could not be decoded.
    pub unreadable: Vec<i64>,
}

/// cairn's database.
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    read_only: bool,
}

impl StoreError {
    /// Whether the error says that the database or its directory may not be written here
    /// (a read-only file system, a sandbox that denies writes outside the workspace, a
    /// directory without write permission), as opposed to a damaged or newer database: the
    /// case where [`Store::open_read_only`] can still serve reads.
    pub fn is_write_denied(&self) -> bool {
        match self {
            StoreError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::ReadOnlyFilesystem
            ),
            StoreError::Sqlite(e) => matches!(
                e.sqlite_error_code(),
                Some(
                    rusqlite::ErrorCode::ReadOnly
                        | rusqlite::ErrorCode::CannotOpen
                        | rusqlite::ErrorCode::PermissionDenied
                )
            ),
            StoreError::Corrupt(_) | StoreError::TooNew { .. } => false,
        }
    }
}

impl Store {
    /// Opens (creating if needed) the database at `path`. The file is created private to the
    /// user (0600), in a directory created 0700.
    pub fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent() {
            create_private_dir(dir)?;
        }
        create_private_file(path)?;
        let conn = Connection::open(path)?;
        let mut s = Store {
            conn,
            path: Some(path.to_path_buf()),
            read_only: false,
        };
        s.configure()?;
        Ok(s)
    }

    /// Opens an existing database for reading only, for commands that only read (a search,
    /// a list, the context hooks) where the data dir may not be written: a read-only mount,
    /// or an agent's sandbox that denies writes outside the workspace. Nothing is created
    /// or migrated; a database another version left unmigrated is refused (a writable run
    /// migrates it). SQLite reads a WAL database read-only through its `-shm` file when
    /// that exists; when it does not and cannot be created, a database whose WAL is empty
    /// or absent (every change is in the main file) is opened as immutable, and one whose
    /// WAL holds changes is refused rather than read without them.
    pub fn open_read_only(path: &Path) -> Result<Store> {
        use rusqlite::OpenFlags;
        if !path.is_file() {
            return Err(StoreError::Io {
                path: path.to_path_buf(),
                source: std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    "no database there yet (a first writable run creates it)",
                ),
            });
        }
        let flags = OpenFlags::SQLITE_OPEN_READ_ONLY
            | OpenFlags::SQLITE_OPEN_NO_MUTEX
            | OpenFlags::SQLITE_OPEN_URI;
        let readable = |conn: Connection| -> rusqlite::Result<Connection> {
            conn.query_row("SELECT count(*) FROM sqlite_schema", [], |r| {
                r.get::<_, i64>(0)
            })?;
            Ok(conn)
        };
        let conn = match Connection::open_with_flags(path, flags).and_then(readable) {
            Ok(c) => c,
            Err(e) => {
                let wal = PathBuf::from(format!("{}-wal", path.display()));
                let wal_empty = std::fs::metadata(&wal).map_or(true, |m| m.len() == 0);
                if !wal_empty {
                    return Err(e.into());
                }
                Connection::open_with_flags(immutable_uri(path), flags).and_then(readable)?
            }
        };
        let s = Store {
            conn,
            path: Some(path.to_path_buf()),
            read_only: true,
        };
        s.conn.busy_timeout(std::time::Duration::from_secs(10))?;
        s.conn.pragma_update(None, "foreign_keys", "ON")?;
        let current: i64 = s.conn.query_row("PRAGMA user_version", [], |r| r.get(0))?;
        if current > schema::VERSION {
            return Err(StoreError::TooNew {
                found: current,
                known: schema::VERSION,
            });
        }
        if current < schema::VERSION {
            return Err(StoreError::Sqlite(rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_READONLY),
                Some(format!(
                    "the database needs an upgrade (layout {current}, this build writes {}) and cannot be written here",
                    schema::VERSION
                )),
            )));
        }
        Ok(s)
    }

    /// An empty store in memory that stands in, read-only, for a database that does not exist
    /// in a data dir this process may not write (nothing was ever stored there): reads find
    /// nothing, and nothing is kept.
    pub fn empty_stand_in() -> Result<Store> {
        let mut s = Store::open_in_memory()?;
        s.read_only = true;
        Ok(s)
    }

    /// Whether this store was opened by [`Store::open_read_only`] (or stands in for a missing
    /// one, [`Store::empty_stand_in`]): what is written is not kept.
    pub fn is_read_only(&self) -> bool {
        self.read_only
    }

    /// A private in-memory database (tests, evaluation).
    pub fn open_in_memory() -> Result<Store> {
        let conn = Connection::open_in_memory()?;
        let mut s = Store {
            conn,
            path: None,
            read_only: false,
        };
        s.configure()?;
        Ok(s)
    }

    fn configure(&mut self) -> Result<()> {
        const WAIT: std::time::Duration = std::time::Duration::from_secs(10);
        self.conn.busy_timeout(WAIT)?;
        self.conn.pragma_update(None, "synchronous", "NORMAL")?;
        self.conn.pragma_update(None, "foreign_keys", "ON")?;
        // Setting the journal mode and migrating can meet SQLITE_BUSY at once, without the
        // busy handler being consulted (a journal-mode change wants the database to itself,
        // and another process may be closing the last connection, checkpointing and resetting
        // the WAL): such an open is retried, with a short pause, for as long as the busy
        // timeout would have waited.
        let start = std::time::Instant::now();
        let mut pause = std::time::Duration::from_millis(5);
        loop {
            match self.journal_mode_and_schema() {
                Err(StoreError::Sqlite(e))
                    if e.sqlite_error_code() == Some(rusqlite::ErrorCode::DatabaseBusy)
                        && start.elapsed() < WAIT =>
                {
                    std::thread::sleep(pause);
                    pause = (pause * 2).min(std::time::Duration::from_millis(200));
                }
                other => return other,
            }
        }
    }

    fn journal_mode_and_schema(&mut self) -> Result<()> {
        // Only a database not yet in WAL mode needs the change (and its exclusive access).
        let mode: String = self
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))?;
        if !mode.eq_ignore_ascii_case("wal") {
            self.conn.pragma_update(None, "journal_mode", "WAL")?;
        }
        schema::migrate(&mut self.conn)
    }

    /// Leaves the WAL checkpoint to other connections when this one closes: for short-lived
    /// processes (hooks) that must not wait for a checkpoint's fsyncs. A later long-lived
    /// connection (the worker, ingest) checkpoints as usual.
    pub fn defer_checkpoint_on_close(&self) -> Result<()> {
        self.conn.set_db_config(
            rusqlite::config::DbConfig::SQLITE_DBCONFIG_NO_CKPT_ON_CLOSE,
            true,
        )?;
        Ok(())
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The underlying connection, for crates that own their own tables in this database
    /// (e.g. the recall index).
    pub fn connection(&self) -> &Connection {
        &self.conn
    }

    pub fn connection_mut(&mut self) -> &mut Connection {
        &mut self.conn
    }

    /// All file cursors, keyed by path.
    pub fn cursors(&self) -> Result<HashMap<String, FileCursor>> {
        let mut st = self.conn.prepare(
            "SELECT path, agent, kind, session_key, dev, ino, size, mtime_ns, head_len, head_hash,
                    offset, line, state, skipped_lines FROM files",
        )?;
        let rows = st.query_map([], cursor_row)?;
        let mut out = HashMap::new();
        for c in rows {
            let c = c?;
            out.insert(c.path.clone(), c);
        }
        Ok(out)
    }

    /// What SQLite's quick check finds wrong in the database file (`None`: nothing). It reads
    /// the whole file: for a diagnosis, never on a hot path.
    pub fn quick_check(&self) -> Result<Option<String>> {
        let first: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |r| r.get(0))?;
        Ok((first != "ok").then_some(first))
    }

    /// Codex rollouts none of whose lines was of a rollout format the parser knows (so
    /// nothing was read from them), as their cursors say: how many, and the first `limit`
    /// paths. They stay so until the file changes, however many runs pass.
    pub fn unrecognised_files(&self, limit: usize) -> Result<(u64, Vec<String>)> {
        let mut st = self.conn.prepare_cached(
            "SELECT path FROM files
             WHERE agent = 'codex' AND state IS NOT NULL AND json_valid(state)
               AND coalesce(json_extract(state, '$.unknown_format_lines'), 0) > 0
               AND coalesce(json_extract(state, '$.known_format_lines'), 0) = 0
             ORDER BY path",
        )?;
        let paths = st
            .query_map([], |r| r.get::<_, String>(0))?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let count = paths.len() as u64;
        Ok((count, paths.into_iter().take(limit).collect()))
    }

    /// The cursor of one file.
    pub fn cursor(&self, path: &str) -> Result<Option<FileCursor>> {
        Ok(self.cursors_where(path)?.pop())
    }

    fn cursors_where(&self, path: &str) -> Result<Vec<FileCursor>> {
        let mut st = self.conn.prepare_cached(
            "SELECT path, agent, kind, session_key, dev, ino, size, mtime_ns, head_len, head_hash,
                    offset, line, state, skipped_lines FROM files WHERE path = ?1",
        )?;
        let rows = st.query_map([path], cursor_row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(Into::into)
    }

    /// Starts a write transaction (IMMEDIATE: concurrent writers queue on the busy timeout
    /// instead of failing mid-transaction).
    pub fn write(&mut self) -> Result<Write<'_>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        Ok(Write { tx })
    }

    /// Number of stored turns.
    pub fn turn_count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM turns", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Number of stored sessions.
    pub fn session_count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))?;
        Ok(n as u64)
    }

    /// Turns of one session, in file order.
    pub fn session_turns(&self, agent: Agent, session_key: &str) -> Result<Vec<StoredTurn>> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, agent, session_key, body, source_path FROM turns
             WHERE agent = ?1 AND session_key = ?2 ORDER BY seq, id",
        )?;
        let rows = st.query_map(params![agent.as_str(), session_key], read_turn_row)?;
        collect_turns(rows)
    }

    /// Every session that has stored turns, as (agent, session key), in a stable order. A
    /// row of an agent this build does not know is left out.
    pub fn sessions_with_turns(&self) -> Result<Vec<(Agent, String)>> {
        let mut st = self
            .conn
            .prepare("SELECT DISTINCT agent, session_key FROM turns ORDER BY agent, session_key")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
        let mut out = Vec::new();
        for row in rows {
            let (agent, key) = row?;
            if let Some(agent) = Agent::parse(&agent) {
                out.push((agent, key));
            }
        }
        Ok(out)
    }

    /// Whether a stored turn of the session belongs to a Codex thread whose memory generation
    /// is off ([`Turn::memory_mode`]; every turn of a session carries the same mode). A body
    /// that is not JSON counts as not saying so.
    pub fn session_memory_generation_off(&self, agent: Agent, session_key: &str) -> Result<bool> {
        let mut st = self.conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM turns WHERE agent = ?1 AND session_key = ?2
               AND CASE WHEN json_valid(body) THEN json_extract(body, '$.memory_mode') END
                   IS NOT NULL)",
        )?;
        Ok(st.query_row(params![agent.as_str(), session_key], |r| r.get(0))?)
    }

    /// One turn by its key.
    pub fn turn(
        &self,
        agent: Agent,
        session_key: &str,
        turn_key: &str,
    ) -> Result<Option<StoredTurn>> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, agent, session_key, body, source_path FROM turns
             WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
        )?;
        let row = st
            .query_row(
                params![agent.as_str(), session_key, turn_key],
                read_turn_row,
            )
            .optional()?;
        match row {
            Some(r) => Ok(Some(decode_turn(r)?)),
            None => Ok(None),
        }
    }

    /// The turns inserted or changed after `revision`, each with its own revision, oldest
    /// turn first. Revisions only grow: a reader that remembers the highest one it has
    /// seen reads each change once (`0` reads every turn). A row whose stored body cannot
    /// be decoded is not returned: its revision comes back in the second list, for the
    /// caller to count and move past.
    pub fn turns_changed_since(&self, revision: i64) -> Result<ChangedTurns> {
        let mut st = self.conn.prepare_cached(
            "SELECT id, agent, session_key, body, source_path, revision FROM turns
             WHERE revision > ?1 ORDER BY id",
        )?;
        let rows = st.query_map([revision], |r| Ok((read_turn_row(r)?, r.get::<_, i64>(5)?)))?;
        let mut out = ChangedTurns::default();
        for row in rows {
            let (turn, rev) = row?;
            match decode_turn(turn) {
                Ok(t) => out.turns.push((rev, t)),
                Err(_) => out.unreadable.push(rev),
            }
        }
        Ok(out)
    }

    /// The highest turn revision (0 without turns).
    pub fn max_turn_revision(&self) -> Result<i64> {
        Ok(self
            .conn
            .query_row("SELECT COALESCE(MAX(revision), 0) FROM turns", [], |r| {
                r.get(0)
            })?)
    }

    /// All turns, oldest first by id (for export and tests).
    pub fn all_turns(&self) -> Result<Vec<StoredTurn>> {
        let mut st = self
            .conn
            .prepare("SELECT id, agent, session_key, body, source_path FROM turns ORDER BY id")?;
        let rows = st.query_map([], read_turn_row)?;
        collect_turns(rows)
    }

    pub fn meta(&self, key: &str) -> Result<Option<String>> {
        Ok(self
            .conn
            .query_row("SELECT value FROM meta WHERE key = ?1", [key], |r| r.get(0))
            .optional()?)
    }

    pub fn set_meta(&self, key: &str, value: &str) -> Result<()> {
        self.conn.execute(
            "INSERT INTO meta(key, value) VALUES (?1, ?2)
             ON CONFLICT(key) DO UPDATE SET value = excluded.value",
            params![key, value],
        )?;
        Ok(())
    }

    /// `PRAGMA integrity_check` ("ok" when healthy).
    pub fn integrity_check(&self) -> Result<String> {
        Ok(self
            .conn
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))?)
    }
}

/// Reads a `files` row (the columns in the order `cursors` selects them).
fn cursor_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<FileCursor> {
    Ok(FileCursor {
        path: r.get(0)?,
        agent: r.get(1)?,
        kind: r.get(2)?,
        session_key: r.get(3)?,
        dev: r.get::<_, i64>(4)? as u64,
        ino: r.get::<_, i64>(5)? as u64,
        size: r.get::<_, i64>(6)? as u64,
        mtime_ns: r.get(7)?,
        head_len: r.get::<_, i64>(8)? as u64,
        head_hash: r.get::<_, i64>(9)? as u64,
        offset: r.get::<_, i64>(10)? as u64,
        line: r.get::<_, i64>(11)? as u64,
        state: r.get(12)?,
        skipped_lines: r.get::<_, i64>(13)? as u64,
    })
}

type TurnRow = (i64, String, String, String, String);

fn read_turn_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<TurnRow> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn decode_turn((id, agent, session_key, body, source_path): TurnRow) -> Result<StoredTurn> {
    let turn: Turn =
        serde_json::from_str(&body).map_err(|e| StoreError::Corrupt(format!("turn {id}: {e}")))?;
    Ok(StoredTurn {
        id,
        agent,
        session_key,
        turn,
        source_path,
    })
}

fn collect_turns(rows: impl Iterator<Item = rusqlite::Result<TurnRow>>) -> Result<Vec<StoredTurn>> {
    let mut out = Vec::new();
    for r in rows {
        out.push(decode_turn(r?)?);
    }
    Ok(out)
}

/// A write transaction. Dropped without [`Write::commit`], it rolls back.
pub struct Write<'a> {
    tx: rusqlite::Transaction<'a>,
}

impl Write<'_> {
    pub fn save_cursor(&self, c: &FileCursor) -> Result<()> {
        let mut st = self.tx.prepare_cached(
            "INSERT INTO files(path, agent, kind, session_key, dev, ino, size, mtime_ns, head_len,
                               head_hash, offset, line, state, skipped_lines, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, unixepoch())
             ON CONFLICT(path) DO UPDATE SET agent = excluded.agent, kind = excluded.kind,
               session_key = excluded.session_key, dev = excluded.dev, ino = excluded.ino,
               size = excluded.size, mtime_ns = excluded.mtime_ns, head_len = excluded.head_len,
               head_hash = excluded.head_hash, offset = excluded.offset, line = excluded.line,
               state = excluded.state, skipped_lines = excluded.skipped_lines,
               updated_at = excluded.updated_at",
        )?;
        st.execute(params![
            c.path,
            c.agent,
            c.kind,
            c.session_key,
            c.dev as i64,
            c.ino as i64,
            c.size as i64,
            c.mtime_ns,
            c.head_len as i64,
            c.head_hash as i64,
            c.offset as i64,
            c.line as i64,
            c.state,
            c.skipped_lines as i64,
        ])?;
        Ok(())
    }

    /// Records what is known about a session (later facts fill gaps, never erase).
    pub fn upsert_session(
        &self,
        agent: Agent,
        session: &Session,
        project_key: Option<&str>,
        path: &str,
    ) -> Result<()> {
        let mut st = self.tx.prepare_cached(
            "INSERT INTO sessions(agent, session_key, session_id, subagent, project_key, cwd,
                                  git_branch, started_at, cli_version, parent, continued_in, path,
                                  updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, unixepoch())
             ON CONFLICT(agent, session_key) DO UPDATE SET
               project_key = coalesce(excluded.project_key, project_key),
               cwd = coalesce(excluded.cwd, cwd),
               git_branch = coalesce(excluded.git_branch, git_branch),
               started_at = coalesce(started_at, excluded.started_at),
               cli_version = coalesce(excluded.cli_version, cli_version),
               parent = coalesce(excluded.parent, parent),
               continued_in = coalesce(excluded.continued_in, continued_in),
               path = excluded.path, updated_at = excluded.updated_at",
        )?;
        st.execute(params![
            agent.as_str(),
            session.key(),
            session.id,
            session.subagent,
            project_key,
            session.cwd,
            session.git_branch,
            session.started_at,
            session.cli_version,
            session.parent,
            session.continued_in,
            path,
        ])?;
        Ok(())
    }

    /// Inserts or updates a turn; returns what it did to the turn's row.
    pub fn upsert_turn(
        &self,
        agent: Agent,
        session_key: &str,
        turn: &Turn,
        source_path: &str,
    ) -> Result<TurnWritten> {
        let body = serde_json::to_string(turn)
            .map_err(|e| StoreError::Corrupt(format!("cannot encode turn: {e}")))?;
        self.upsert_turn_body(agent, session_key, turn, &body, source_path)
    }

    /// [`Write::upsert_turn`] with the turn's JSON already encoded (`body` must be
    /// `serde_json::to_string(turn)`), for callers that need the encoding themselves too.
    pub fn upsert_turn_body(
        &self,
        agent: Agent,
        session_key: &str,
        turn: &Turn,
        body: &str,
        source_path: &str,
    ) -> Result<TurnWritten> {
        let existing: Option<i64> = self
            .tx
            .prepare_cached(
                "SELECT id FROM turns WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
            )?
            .query_row(params![agent.as_str(), session_key, turn.key], |r| r.get(0))
            .optional()?;
        match existing {
            Some(id) => {
                let changed = self
                    .tx
                    .prepare_cached(
                        "UPDATE turns SET seq = ?2, status = ?3, started_at = ?4, ended_at = ?5,
                           cwd = ?6, sidechain = ?7, prompt = ?8, body = ?9, source_path = ?10,
                           event_count = ?11, updated_at = unixepoch(),
                           revision = (SELECT COALESCE(MAX(revision), 0) + 1 FROM turns)
                         WHERE id = ?1 AND body IS NOT ?9",
                    )?
                    .execute(params![
                        id,
                        turn.seq,
                        turn.status.as_str(),
                        turn.started_at,
                        turn.ended_at,
                        turn.cwd,
                        turn.sidechain,
                        turn.prompt,
                        body,
                        source_path,
                        turn.events.len() as i64,
                    ])?;
                if changed > 0 {
                    return Ok(TurnWritten::Changed);
                }
                // The same turn read from another file: the row follows the file.
                let moved = self
                    .tx
                    .prepare_cached(
                        "UPDATE turns SET source_path = ?2, updated_at = unixepoch(),
                           revision = (SELECT COALESCE(MAX(revision), 0) + 1 FROM turns)
                         WHERE id = ?1 AND source_path IS NOT ?2",
                    )?
                    .execute(params![id, source_path])?;
                Ok(if moved > 0 {
                    TurnWritten::Moved
                } else {
                    TurnWritten::Same
                })
            }
            None => {
                self.tx
                    .prepare_cached(
                        "INSERT INTO turns(agent, session_key, turn_key, seq, status, started_at,
                           ended_at, cwd, sidechain, prompt, body, source_path, event_count,
                           created_at, updated_at, revision)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13,
                                 unixepoch(), unixepoch(),
                                 (SELECT COALESCE(MAX(revision), 0) + 1 FROM turns))",
                    )?
                    .execute(params![
                        agent.as_str(),
                        session_key,
                        turn.key,
                        turn.seq,
                        turn.status.as_str(),
                        turn.started_at,
                        turn.ended_at,
                        turn.cwd,
                        turn.sidechain,
                        turn.prompt,
                        body,
                        source_path,
                        turn.events.len() as i64,
                    ])?;
                Ok(TurnWritten::New)
            }
        }
    }

    /// Marks a stored turn as dropped from its thread by a rollback ([`Turn::rolled_back`]),
    /// raising its revision. Returns whether it changed (`false`: no such turn, or marked
    /// already); a stored body that cannot be decoded is [`StoreError::Corrupt`], nothing
    /// written.
    pub fn mark_turn_rolled_back(
        &self,
        agent: Agent,
        session_key: &str,
        turn_key: &str,
    ) -> Result<bool> {
        let row: Option<(String, String)> = self
            .tx
            .prepare_cached(
                "SELECT body, source_path FROM turns
                 WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
            )?
            .query_row(params![agent.as_str(), session_key, turn_key], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .optional()?;
        let Some((body, source_path)) = row else {
            return Ok(false);
        };
        let mut turn: Turn = serde_json::from_str(&body)
            .map_err(|e| StoreError::Corrupt(format!("turn {turn_key}: {e}")))?;
        if turn.rolled_back {
            return Ok(false);
        }
        turn.rolled_back = true;
        self.upsert_turn(agent, session_key, &turn, &source_path)?;
        Ok(true)
    }

    /// Gives every stored turn of a session the Codex thread's memory mode
    /// ([`Turn::memory_mode`]; `None`: enabled), raising the revision of each that changes: a
    /// mode the rollout states after turns were stored holds for them too. A stored body that
    /// cannot be decoded is left as it is and named in [`MemoryModeMarked::unreadable`].
    pub fn set_session_memory_mode(
        &self,
        agent: Agent,
        session_key: &str,
        mode: Option<&str>,
    ) -> Result<MemoryModeMarked> {
        let rows: Vec<(String, String, String)> = self
            .tx
            .prepare_cached(
                "SELECT turn_key, body, source_path FROM turns
                 WHERE agent = ?1 AND session_key = ?2 ORDER BY id",
            )?
            .query_map(params![agent.as_str(), session_key], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut marked = MemoryModeMarked::default();
        for (turn_key, body, source_path) in rows {
            let mut turn: Turn = match serde_json::from_str(&body) {
                Ok(t) => t,
                Err(_) => {
                    marked.unreadable.push(turn_key);
                    continue;
                }
            };
            if turn.memory_mode.as_deref() == mode {
                continue;
            }
            turn.memory_mode = mode.map(str::to_owned);
            self.upsert_turn(agent, session_key, &turn, &source_path)?;
            marked.changed += 1;
        }
        Ok(marked)
    }

    /// The transaction, for sibling modules (jobs) that write in the same unit.
    pub fn transaction(&self) -> &rusqlite::Transaction<'_> {
        &self.tx
    }

    pub fn commit(self) -> Result<()> {
        self.tx.commit()?;
        Ok(())
    }
}

/// The `file:` URI that opens `path` as immutable (no locks, no WAL index): for a
/// read-only open whose WAL index cannot be created. `?`, `#` and `%` are escaped.
fn immutable_uri(path: &Path) -> String {
    let mut uri = String::from("file:");
    for c in path.to_string_lossy().chars() {
        match c {
            '?' => uri.push_str("%3f"),
            '#' => uri.push_str("%23"),
            '%' => uri.push_str("%25"),
            c => uri.push(c),
        }
    }
    uri.push_str("?immutable=1");
    uri
}

fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.as_os_str().is_empty() || dir.is_dir() {
        return Ok(());
    }
    cairn_atomic::create_dir_all(dir, cairn_atomic::NewMode::Private).map_err(|source| {
        StoreError::Io {
            path: dir.to_path_buf(),
            source,
        }
    })
}

fn create_private_file(path: &Path) -> Result<()> {
    let mut o = std::fs::OpenOptions::new();
    o.create(true).append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path).map(|_| ()).map_err(|source| StoreError::Io {
        path: path.to_path_buf(),
        source,
    })
}
