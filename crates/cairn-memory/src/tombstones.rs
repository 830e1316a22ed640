//! What the person forgot, kept beside the views as well as in the database
//! (`<views>/.forgotten.jsonl`, one line per forgotten memory: its id, type, scope, when, and
//! the statements it came from). A store rebuilt from the agents' transcripts — the way out of
//! a damaged database — reads every statement again; without this file each forgotten memory
//! would come back with it, a secret or a wrong rule the person had removed among them.
//!
//! The database's tombstones are added to the file under the views lock whenever the views
//! are regenerated ([`write`]; a tombstone never leaves it), and the file is read back before
//! each extraction run and full refresh ([`missing`], [`restore`]; reads only, unless
//! something is missing): a tombstone the database lacks is put back, and a live
//! memory made since from one of its statements is forgotten again. Only what the person forgot is kept here (`cairn forget`, a deleted view file, a
//! retraction, MCP `memory_forget`), not what aged out or was replaced.

use std::collections::{HashMap, HashSet};
use std::path::Path;

use rusqlite::{Connection, OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::error::{MemoryError, Result};

/// The file's name in the views directory.
pub const FILE: &str = ".forgotten.jsonl";

/// One forgotten memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Tombstone {
    id: String,
    #[serde(rename = "type")]
    memory_type: String,
    scope: String,
    forgotten_at: i64,
    /// The statements it came from (`agent:session:turn:hash`); none for a manual memory.
    #[serde(default)]
    origins: Vec<String>,
}

/// Every memory the person forgot, with its origins, oldest first.
fn from_db(conn: &Connection) -> Result<Vec<Tombstone>> {
    let mut st = conn.prepare(
        "SELECT m.id, m.type, m.scope, m.forgotten_at, o.origin FROM memories m
         LEFT JOIN memory_origins o ON o.memory_id = m.id
         WHERE m.forgotten_at IS NOT NULL AND m.rule = ''
         ORDER BY m.forgotten_at, m.id, o.origin",
    )?;
    let rows = st.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<String>>(4)?,
        ))
    })?;
    let mut out: Vec<Tombstone> = Vec::new();
    for row in rows {
        let (id, memory_type, scope, forgotten_at, origin) = row?;
        match out.last_mut() {
            Some(t) if t.id == id => t.origins.extend(origin),
            _ => out.push(Tombstone {
                id,
                memory_type,
                scope,
                forgotten_at,
                origins: origin.into_iter().collect(),
            }),
        }
    }
    Ok(out)
}

fn render(tombstones: &[Tombstone]) -> String {
    let mut out = String::new();
    for t in tombstones {
        if let Ok(line) = serde_json::to_string(t) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Rewrites `<root>/.forgotten.jsonl` when the database forgot something it does not hold:
/// the file keeps every tombstone it had (a store rebuilt and not yet extracted lacks them)
/// and adds the database's. The caller holds the views lock.
pub(crate) fn write(conn: &Connection, root: &Path) -> Result<()> {
    let path = root.join(FILE);
    let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
    let mut all: Vec<Tombstone> = on_disk
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    let mut at: HashMap<String, usize> = all
        .iter()
        .enumerate()
        .map(|(i, t)| (t.id.clone(), i))
        .collect();
    for t in from_db(conn)? {
        match at.get(&t.id) {
            Some(&i) => {
                let kept = &mut all[i];
                for o in t.origins {
                    if !kept.origins.contains(&o) {
                        kept.origins.push(o);
                    }
                }
            }
            None => {
                at.insert(t.id.clone(), all.len());
                all.push(t);
            }
        }
    }
    if all.is_empty() {
        return Ok(());
    }
    let text = render(&all);
    if text == on_disk {
        return Ok(());
    }
    crate::views::write_atomic(&path, text.as_bytes())
}

/// What the database lacks of the file (see [`missing`]); empty when it holds it all.
#[derive(Debug, Default)]
pub(crate) struct Missing {
    /// Tombstones to put back.
    rows: Vec<Tombstone>,
    /// Origins to put back, with the tombstone they lead to.
    origins: Vec<(String, String)>,
    /// Live memories made again from a forgotten statement: the caller forgets them (it
    /// holds the recall index).
    pub forget_again: Vec<String>,
}

impl Missing {
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty() && self.origins.is_empty() && self.forget_again.is_empty()
    }
}

/// Reads `<root>/.forgotten.jsonl` against the database, without writing: each tombstone it
/// lacks, each origin it lacks, and each live memory one of them already gave again. Lines
/// that do not parse are skipped (the file is rewritten whole on the next refresh).
pub(crate) fn missing(conn: &Connection, root: &Path) -> Result<Missing> {
    let path = root.join(FILE);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Missing::default()),
        Err(e) => return Err(MemoryError::io(&path, e)),
    };
    let mut out = Missing::default();
    let mut again: HashSet<String> = HashSet::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(t) = serde_json::from_str::<Tombstone>(line) else {
            continue;
        };
        let known: Option<(Option<i64>, String)> = conn
            .query_row(
                "SELECT forgotten_at, rule FROM memories WHERE id = ?1",
                [&t.id],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        match known {
            // Forgotten here too.
            Some((Some(_), rule)) if rule.is_empty() => {}
            // Made again from the same statement (ids follow what made them).
            Some(_) => {
                if again.insert(t.id.clone()) {
                    out.forget_again.push(t.id.clone());
                }
            }
            None => out.rows.push(t.clone()),
        }
        for origin in &t.origins {
            let holder: Option<String> = conn
                .query_row(
                    "SELECT memory_id FROM memory_origins WHERE origin = ?1",
                    [origin],
                    |r| r.get(0),
                )
                .optional()?;
            match holder {
                None => out.origins.push((origin.clone(), t.id.clone())),
                Some(id) if id != t.id => {
                    let live: bool = conn
                        .query_row(
                            "SELECT forgotten_at IS NULL AND superseded_by IS NULL
                             FROM memories WHERE id = ?1",
                            [&id],
                            |r| r.get(0),
                        )
                        .optional()?
                        .unwrap_or(false);
                    if live && again.insert(id.clone()) {
                        out.forget_again.push(id);
                    }
                }
                Some(_) => {}
            }
        }
    }
    Ok(out)
}

/// Puts back the tombstones and origins of `m` inside the caller's write transaction (what
/// another process put back meanwhile is left as it is).
pub(crate) fn restore(conn: &Connection, m: &Missing) -> Result<()> {
    for t in &m.rows {
        conn.execute(
            "INSERT OR IGNORE INTO memories(id, type, scope, name, description, rule, keywords,
                source_kind, created_at, updated_at, forgotten_at)
             VALUES (?1, ?2, ?3, '(forgotten)', '', '', '', 'forgotten', ?4, ?4, ?4)",
            params![t.id, t.memory_type, t.scope, t.forgotten_at],
        )?;
    }
    for (origin, id) in &m.origins {
        conn.execute(
            "INSERT OR IGNORE INTO memory_origins(origin, memory_id) VALUES (?1, ?2)",
            params![origin, id],
        )?;
    }
    Ok(())
}
