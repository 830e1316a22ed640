//! Pins kept beside the views as well as in the database (`<views>/.pinned.jsonl`, one line
//! per pinned memory: its id and when it was pinned). The way out of a damaged database is to
//! move it aside and sync, which rebuilds the store from the transcripts and the view files
//! with the same memory ids; without this file every pin would be lost with it, and a memory
//! the person pinned would age out like any other.
//!
//! The file mirrors the `memory_pins` table: every pin and unpin rewrites it from the table
//! under SQLite's write lock (so two processes pinning at once leave the last state on disk,
//! never an older one). A database that has not read the file yet (the meta key [`MARK`]) adds
//! its pins before anything else touches them, then writes the union back.

use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::Result;

/// The file's name in the views directory.
pub const FILE: &str = ".pinned.jsonl";

/// The meta key set once this database has read the file.
pub const MARK: &str = "pins_file_read";

#[derive(Debug, Serialize, Deserialize)]
struct Pin {
    id: String,
    pinned_at: i64,
}

/// Reads the file into a database that has not read it yet (one rebuilt, or made before the
/// file existed), then writes the union back. Cheap once done: one meta lookup.
pub(crate) fn restore(conn: &Connection, views: Option<&Path>) -> Result<()> {
    let Some(root) = views else {
        return Ok(());
    };
    if read_mark(conn)? {
        return Ok(());
    }
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = (|| -> Result<()> {
        if read_mark(conn)? {
            return Ok(());
        }
        for pin in on_disk(root) {
            conn.execute(
                "INSERT OR IGNORE INTO memory_pins(memory_id, pinned_at) VALUES (?1, ?2)",
                params![pin.id, pin.pinned_at],
            )?;
        }
        write_locked(conn, root)?;
        conn.execute(
            "INSERT OR REPLACE INTO meta(key, value) VALUES (?1, '1')",
            [MARK],
        )?;
        Ok(())
    })();
    finish(conn, done)
}

/// Rewrites the file from the table (after a pin or unpin).
pub(crate) fn write(conn: &Connection, views: Option<&Path>) -> Result<()> {
    let Some(root) = views else {
        return Ok(());
    };
    conn.execute_batch("BEGIN IMMEDIATE")?;
    let done = write_locked(conn, root);
    finish(conn, done)
}

fn finish(conn: &Connection, done: Result<()>) -> Result<()> {
    match done {
        Ok(()) => {
            conn.execute_batch("COMMIT")?;
            Ok(())
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK");
            Err(e)
        }
    }
}

fn read_mark(conn: &Connection) -> Result<bool> {
    Ok(conn
        .query_row("SELECT 1 FROM meta WHERE key = ?1", [MARK], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The pins the file holds; a line that does not parse is skipped (the table is the truth
/// while the database lives).
fn on_disk(root: &Path) -> Vec<Pin> {
    std::fs::read_to_string(root.join(FILE))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// Writes the table to the file; the caller holds the write lock. No file is made while
/// nothing was ever pinned.
fn write_locked(conn: &Connection, root: &Path) -> Result<()> {
    let mut st =
        conn.prepare("SELECT memory_id, pinned_at FROM memory_pins ORDER BY pinned_at, memory_id")?;
    let pins: Vec<Pin> = st
        .query_map([], |r| {
            Ok(Pin {
                id: r.get(0)?,
                pinned_at: r.get(1)?,
            })
        })?
        .collect::<rusqlite::Result<_>>()?;
    let path = root.join(FILE);
    if pins.is_empty() && !path.exists() {
        return Ok(());
    }
    let mut text = String::new();
    for p in &pins {
        if let Ok(line) = serde_json::to_string(p) {
            text.push_str(&line);
            text.push('\n');
        }
    }
    cairn_memory::views::write_atomic(&path, text.as_bytes())?;
    Ok(())
}
