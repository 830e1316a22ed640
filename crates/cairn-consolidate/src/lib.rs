//! Phase 2: consolidation of what phase 1 and the agents proposed into cairn's memories.
//!
//! This crate owns `cairn consolidate`: one run at a time under a global lock (a second run
//! reports busy), the diff of its inputs (phase-1 outputs, Codex ad-hoc notes) against a
//! content-hash manifest of the last successful run (added / updated / removed), the merge of
//! their proposed memories into the memory store (deterministic similarity dedupe with newest
//! winning, or decisions made by a model under the token budget, falling back to the
//! deterministic merge), withdrawal of memories whose only source changed or vanished (a
//! phase-1 output of a Codex thread whose memory generation is off is dropped), aging
//! (memories not recalled for `max_unused_days` unless pinned, the pins mirrored in the views
//! directory so a rebuilt database keeps them; phase-1 outputs unused for
//! `stage1_retention_days`), the Claude Code views, and, when `[codex] write_workspace` is on,
//! the Codex memory workspace (`memory_summary.md`, `MEMORY.md`, `rollout_summaries/`) under
//! the workspace lock, validated before anything replaces the previous file. It must not read
//! transcripts (phase 1 did), call the network except through `cairn-llm`, or write anywhere
//! but cairn's data dir and the Codex memory roots it is given.

mod inputs;
mod merge;
pub mod pins;
mod schema;
mod workspace;

use std::collections::{BTreeSet, HashSet};
use std::fs::File;
use std::path::{Path, PathBuf};

use cairn_config::Config;
use cairn_llm::LlmClient;
use cairn_memory::{Directive, MemoryStore, MergeAction};
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

pub use inputs::{Diff, Input};
pub use schema::{COMPONENT as SCHEMA_COMPONENT, VERSION as SCHEMA_VERSION};
pub use workspace::WorkspaceReport;

/// The lock file of consolidation runs, in the data dir.
pub const LOCK_FILE: &str = "consolidate.lock";

/// What went wrong in consolidation.
#[derive(Debug, thiserror::Error)]
pub enum ConsolidateError {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Memory(#[from] cairn_memory::MemoryError),
    #[error(transparent)]
    Stage1(#[from] cairn_stage1::Stage1Error),
    #[error(transparent)]
    Store(#[from] cairn_store::StoreError),
    #[error(
        "cairn's database has a newer consolidation layout (version {found}; this cairn knows {known}); upgrade cairn"
    )]
    TooNew { found: i64, known: i64 },
    #[error("cannot use the lock file {path}: {source}")]
    Lock {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = ConsolidateError> = std::result::Result<T, E>;

/// What a run did.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ConsolidateReport {
    /// Another consolidation held the lock; this one did nothing.
    pub busy: bool,
    pub diff: Diff,
    /// `deterministic` or `model`.
    pub merge: String,
    /// Why the model was not used although configured.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub merge_note: Option<String>,
    pub created: usize,
    pub updated: usize,
    pub unchanged: usize,
    pub superseded: usize,
    pub skipped: usize,
    pub forgotten_skipped: usize,
    /// Memories whose only source changed or was removed.
    pub withdrawn: Vec<String>,
    /// Memories aged out (not recalled for `max_unused_days`, not pinned).
    pub aged_out: Vec<String>,
    /// Phase-1 outputs pruned for retention.
    pub stage1_pruned: usize,
    /// Phase-1 outputs of Codex threads whose memory generation is off (sent by an older
    /// build, or before the mode was set): dropped, with the memories they alone supported
    /// and their rollout summaries in Codex's workspace.
    pub memory_disabled: usize,
    pub tokens: u64,
    pub views_written: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workspace: Option<WorkspaceReport>,
    pub problems: Vec<String>,
}

/// The last run, for `cairn status`.
#[derive(Debug, Clone, Serialize)]
pub struct LastRun {
    pub started_at: i64,
    pub finished_at: Option<i64>,
    pub status: String,
    pub error: Option<String>,
}

/// One consolidation over a memory store.
pub struct Consolidator<'a> {
    pub mem: &'a mut MemoryStore,
    pub config: &'a Config,
    /// The model for merge decisions (none: deterministic).
    pub client: Option<&'a LlmClient>,
    pub data_dir: &'a Path,
    /// The Codex home: ad-hoc notes are read from it, and the workspace is written into it
    /// when `[codex] write_workspace` is on.
    pub codex_home: Option<&'a Path>,
}

impl Consolidator<'_> {
    fn conn(&self) -> &Connection {
        self.mem.store().connection()
    }

    /// Runs one consolidation (see the crate doc).
    pub fn run(&mut self, now: i64) -> Result<ConsolidateReport> {
        let mut report = ConsolidateReport::default();
        let Some(_lock) = try_lock(&self.data_dir.join(LOCK_FILE))? else {
            report.busy = true;
            return Ok(report);
        };
        schema::ensure(self.conn())?;
        cairn_stage1::ensure_schema(self.conn())?;
        // Before aging reads them: the pins of a database rebuilt since.
        pins::restore(self.conn(), self.mem.views_dir())?;
        self.conn().execute(
            "INSERT INTO consolidation_runs(started_at, status) VALUES (?1, 'running')",
            [now],
        )?;
        let run_id = self.conn().last_insert_rowid();
        let result = self.run_locked(now, &mut report);
        let (status, error) = match &result {
            Ok(()) => match report.workspace.as_ref().and_then(|w| w.error.clone()) {
                Some(e) => ("workspace_failed".to_string(), Some(e)),
                None => ("succeeded".to_string(), None),
            },
            Err(e) => ("failed".to_string(), Some(e.to_string())),
        };
        self.conn().execute(
            "UPDATE consolidation_runs SET finished_at = ?2, status = ?3, error = ?4, report = ?5
             WHERE id = ?1",
            params![
                run_id,
                now,
                status,
                error,
                serde_json::to_string(&report).ok()
            ],
        )?;
        result.map(|()| report)
    }

    fn run_locked(&mut self, now: i64, report: &mut ConsolidateReport) -> Result<()> {
        let cc = &self.config.consolidate;
        // Retention first, so a pruned output shows as removed in this run's diff; and what a
        // thread kept out of memory gave goes before anything reads the outputs.
        report.stage1_pruned = self.prune_stage1(now)?;
        let memory_disabled = self.drop_memory_disabled_stage1()?;
        report.memory_disabled = memory_disabled.len();
        let outputs = cairn_stage1::outputs(self.conn())?;
        let mut all: Vec<Input> = inputs::stage1_inputs(&outputs);
        if let Some(h) = self.codex_home {
            all.extend(inputs::note_inputs(h, &mut report.problems));
            inputs::scope_notes(self.conn(), &mut all)?;
        }
        let old = inputs::manifest(self.conn())?;
        report.diff = inputs::diff(&old, &all);

        let changed: BTreeSet<&str> = report
            .diff
            .added
            .iter()
            .chain(&report.diff.updated)
            .map(String::as_str)
            .collect();
        let todo: Vec<&Input> = all
            .iter()
            .filter(|i| changed.contains(i.key.as_str()))
            .collect();
        let candidates: Vec<&inputs::Candidate> =
            todo.iter().flat_map(|i| i.candidates.iter()).collect();
        let directives = match self.client {
            Some(client) if !candidates.is_empty() => {
                match merge::model_directives(self.mem, self.config, client, &candidates, now) {
                    Ok((d, tokens)) => {
                        report.merge = "model".into();
                        report.tokens += tokens;
                        d
                    }
                    Err(note) => {
                        report.merge = "deterministic".into();
                        report.merge_note = Some(note);
                        vec![Directive::Auto; candidates.len()]
                    }
                }
            }
            _ => {
                report.merge = "deterministic".into();
                vec![Directive::Auto; candidates.len()]
            }
        };
        let mut new_origins: HashSet<&str> = HashSet::new();
        for (c, d) in candidates.iter().zip(&directives) {
            new_origins.insert(c.origin.as_str());
            let out = self.mem.merge(c.new.clone(), &c.origin, d, now)?;
            match out.action {
                MergeAction::Created => report.created += 1,
                MergeAction::Updated => report.updated += 1,
                MergeAction::Unchanged | MergeAction::Known => report.unchanged += 1,
                MergeAction::Superseded => report.superseded += 1,
                MergeAction::Skipped => report.skipped += 1,
                MergeAction::Forgotten => report.forgotten_skipped += 1,
            }
        }

        // Withdrawal: an updated input no longer proposes some memories; a removed note (the
        // user deleted it), or a phase-1 output of a thread whose memory is off, no longer
        // supports its memory. A memory goes only when every one of its origins is withdrawn.
        // Phase-1 outputs removed for retention do not withdraw: their memories age on their
        // own.
        let mut withdrawn_prefixes: Vec<String> = todo
            .iter()
            .filter(|i| report.diff.updated.contains(&i.key))
            .map(|i| i.origin_prefix())
            .collect();
        withdrawn_prefixes.extend(
            report
                .diff
                .removed
                .iter()
                .filter(|(k, _)| k == "note")
                .map(|(k, key)| inputs::origin_prefix(k, key)),
        );
        withdrawn_prefixes.extend(
            memory_disabled
                .iter()
                .map(|(key, _)| inputs::origin_prefix("stage1", key)),
        );
        // What offline extraction took from such a thread is no support either (it withdraws
        // what those turns alone gave; a memory phase 1 gave as well goes here).
        let kept_out: Vec<&str> = memory_disabled.iter().map(|(_, s)| s.as_str()).collect();
        let mut withdraw = Vec::new();
        for p in &withdrawn_prefixes {
            for (origin, id) in self.mem.origins_with_prefix(p)? {
                if new_origins.contains(origin.as_str()) {
                    continue;
                }
                let all_gone = self.mem.origins_of(&id)?.iter().all(|o| {
                    !new_origins.contains(o.as_str())
                        && (withdrawn_prefixes.iter().any(|w| o.starts_with(w.as_str()))
                            || kept_out.iter().any(|k| o.starts_with(k)))
                });
                let live = self.mem.get(&id)?.is_some_and(|m| m.is_live());
                if all_gone && live && !self.is_pinned(&id)? && !withdraw.contains(&id) {
                    withdraw.push(id);
                }
            }
        }
        self.mem.retire(&withdraw, now)?;
        self.mark_retired(&withdraw, "withdrawn", now)?;
        report.withdrawn = withdraw;

        // Aging.
        self.conn().execute(
            "INSERT OR IGNORE INTO memory_seen(memory_id, first_seen_at)
             SELECT id, ?1 FROM memories WHERE forgotten_at IS NULL AND superseded_by IS NULL",
            [now],
        )?;
        let cutoff = now - i64::try_from(cc.max_unused_days).unwrap_or(i64::MAX / 4) * 86_400;
        let aged = self.aged_memories(cutoff)?;
        self.mem.retire(&aged, now)?;
        self.mark_retired(&aged, "aged", now)?;
        report.aged_out = aged;

        inputs::save_manifest(self.conn(), &all)?;
        let views = self.mem.refresh_views(now)?;
        report.views_written = views.written;
        report.problems.extend(views.problems);

        if self.config.codex.write_workspace
            && let Some(h) = self.codex_home
        {
            report.workspace = Some(workspace::write(
                self.mem,
                &outputs,
                h,
                &self.data_dir.join(workspace::KEPT_ASIDE_DIR),
                now,
            ));
        }
        Ok(())
    }

    fn is_pinned(&self, id: &str) -> Result<bool> {
        is_pinned(self.conn(), id)
    }

    fn mark_retired(&self, ids: &[String], reason: &str, now: i64) -> Result<()> {
        for id in ids {
            self.conn().execute(
                "INSERT OR REPLACE INTO memory_retired(memory_id, retired_at, reason) VALUES (?1, ?2, ?3)",
                params![id, now, reason],
            )?;
        }
        Ok(())
    }

    /// Live memories whose last use (recall, update, creation, first sight by consolidation)
    /// is before `cutoff`, except
    /// pinned ones and the ones the user wrote by hand (`cairn remember`, MCP, a view file).
    fn aged_memories(&self, cutoff: i64) -> Result<Vec<String>> {
        let mut st = self.conn().prepare(
            "SELECT m.id FROM memories m
             LEFT JOIN memory_seen s ON s.memory_id = m.id
             WHERE m.forgotten_at IS NULL AND m.superseded_by IS NULL
               AND m.source_kind NOT IN ('manual', 'view')
               AND max(m.updated_at, m.created_at, coalesce(m.last_recalled_at, 0),
                       coalesce(s.first_seen_at, ?2)) < ?1
               AND NOT EXISTS (SELECT 1 FROM memory_pins p WHERE p.memory_id = m.id)
             ORDER BY m.id",
        )?;
        let rows = st.query_map([cutoff, i64::MAX], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Deletes the phase-1 outputs of Codex threads whose memory generation is off (a stored
    /// turn of the session carries a `memory_mode`): Codex drops such a thread's stage-1 output
    /// from its consolidation too. Returns their keys, each with the prefix of the origins
    /// offline extraction gives the session's statements (`<agent>:<session>:`).
    fn drop_memory_disabled_stage1(&self) -> Result<Vec<(String, String)>> {
        let outputs = cairn_stage1::outputs(self.conn())?;
        let mut gone = Vec::new();
        let mut keys = Vec::new();
        for o in outputs {
            let Some(agent) = cairn_transcript::Agent::parse(&o.agent) else {
                continue;
            };
            if self
                .mem
                .store()
                .session_memory_generation_off(agent, &o.session_key)?
            {
                keys.push((o.key(), format!("{}:{}:", o.agent, o.session_key)));
                gone.push((o.agent, o.session_key, o.turn_key));
            }
        }
        cairn_stage1::delete_outputs(self.conn(), &gone)?;
        Ok(keys)
    }

    /// Deletes phase-1 outputs older than the retention whose memories were not recalled
    /// within it (Codex's "unused" rule).
    fn prune_stage1(&self, now: i64) -> Result<usize> {
        let days = self.config.consolidate.stage1_retention_days;
        let cutoff = now - i64::try_from(days).unwrap_or(i64::MAX / 4) * 86_400;
        let outputs = cairn_stage1::outputs(self.conn())?;
        let mut gone = Vec::new();
        for o in outputs
            .iter()
            .filter(|o| o.generated_at.max(o.source_updated_at) < cutoff)
        {
            let prefix = inputs::origin_prefix("stage1", &o.key());
            let used: Option<i64> = self.conn().query_row(
                "SELECT max(m.last_recalled_at) FROM memory_origins g
                 JOIN memories m ON m.id = g.memory_id
                 WHERE substr(g.origin, 1, length(?1)) = ?1",
                [&prefix],
                |r| r.get(0),
            )?;
            if used.is_none_or(|u| u < cutoff) {
                gone.push((o.agent.clone(), o.session_key.clone(), o.turn_key.clone()));
            }
        }
        Ok(cairn_stage1::delete_outputs(self.conn(), &gone)?)
    }
}

/// Pins a memory (never aged out); a memory that was aged out comes back.
pub fn pin(mem: &mut MemoryStore, id: &str, now: i64) -> Result<cairn_memory::Memory> {
    schema::ensure(mem.store().connection())?;
    pins::restore(mem.store().connection(), mem.views_dir())?;
    let m = mem
        .get(id)?
        .ok_or_else(|| cairn_memory::MemoryError::NotFound(id.to_string()))?;
    let retired: Option<String> = mem
        .store()
        .connection()
        .query_row(
            "SELECT reason FROM memory_retired WHERE memory_id = ?1",
            [&m.id],
            |r| r.get(0),
        )
        .optional()?;
    let m = if retired.is_some() && !m.is_live() {
        let back = mem.restore(&m.id, now)?;
        mem.store()
            .connection()
            .execute("DELETE FROM memory_retired WHERE memory_id = ?1", [&m.id])?;
        back
    } else {
        m
    };
    mem.store().connection().execute(
        "INSERT OR IGNORE INTO memory_pins(memory_id, pinned_at) VALUES (?1, ?2)",
        params![m.id, now],
    )?;
    pins::write(mem.store().connection(), mem.views_dir())?;
    Ok(m)
}

/// Unpins a memory.
pub fn unpin(mem: &mut MemoryStore, id: &str) -> Result<bool> {
    schema::ensure(mem.store().connection())?;
    pins::restore(mem.store().connection(), mem.views_dir())?;
    let was = mem
        .store()
        .connection()
        .execute("DELETE FROM memory_pins WHERE memory_id = ?1", [id])?
        > 0;
    pins::write(mem.store().connection(), mem.views_dir())?;
    Ok(was)
}

/// Why and when consolidation retired a memory (`aged` or `withdrawn`), if it did.
pub fn retirement(conn: &Connection, id: &str) -> Result<Option<(String, i64)>> {
    if !schema::readable(conn)? {
        return Ok(None);
    }
    Ok(conn
        .query_row(
            "SELECT reason, retired_at FROM memory_retired WHERE memory_id = ?1",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// Whether a memory is pinned.
pub fn is_pinned(conn: &Connection, id: &str) -> Result<bool> {
    if !schema::readable(conn)? {
        return Ok(false);
    }
    Ok(conn
        .query_row(
            "SELECT 1 FROM memory_pins WHERE memory_id = ?1",
            [id],
            |_| Ok(()),
        )
        .optional()?
        .is_some())
}

/// The model tokens spent on the phase-1 outputs that proposed a memory.
pub fn model_tokens(conn: &Connection, id: &str) -> Result<u64> {
    if !cairn_stage1::schema_readable(conn)? {
        return Ok(0);
    }
    let n: i64 = conn.query_row(
        "SELECT coalesce(sum(s.input_tokens + s.output_tokens), 0) FROM stage1_outputs s
         WHERE EXISTS (SELECT 1 FROM memory_origins o WHERE o.memory_id = ?1
             AND substr(o.origin, 1, length('s1:' || s.agent || ':' || s.session_key || ':'
                 || s.turn_key || ':')) = 's1:' || s.agent || ':' || s.session_key || ':'
                 || s.turn_key || ':')",
        [id],
        |r| r.get(0),
    )?;
    Ok(n.max(0) as u64)
}

/// The files consolidation wrote into Codex's memory workspaces (`[codex] write_workspace`)
/// from cairn's memories alone, with the xxh3 hash (16 hex digits) of what it wrote: `(path,
/// hash)`. A summary or task-group file of Codex's that cairn added its blocks to is Codex's,
/// and is not listed.
pub fn workspace_files(conn: &Connection) -> Result<Vec<(std::path::PathBuf, String)>> {
    if !schema::readable(conn)? {
        return Ok(Vec::new());
    }
    let mut st =
        conn.prepare("SELECT root, name, hash FROM workspace_files ORDER BY root, name")?;
    let rows: Vec<(String, String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let has = |root: &str, name: &str, hash: Option<&str>| {
        rows.iter()
            .any(|(r, n, h)| r == root && n == name && hash.is_none_or(|x| x == h))
    };
    Ok(rows
        .iter()
        .filter(|(_, name, _)| !name.contains('#'))
        .filter(|(root, name, hash)| {
            // Rollout summaries are cairn's alone; the two shared files only when recorded so
            // (by a build that records it; before, every file it wrote was).
            name.starts_with("rollout_summaries/")
                || !has(root, workspace::PURE_AWARE, None)
                || has(root, &format!("{name}{}", workspace::PURE), Some(hash))
        })
        .map(|(root, name, hash)| (std::path::Path::new(root).join(name), hash.clone()))
        .collect())
}

/// Where each of Codex's ad-hoc notes belongs, as consolidation scopes it
/// ([`inputs::scope_notes`]): `(path of the note relative to the Codex home, project scope)`
/// for every note a stored Codex turn wrote in a project, unless it is about the person. A
/// note not listed is global. `cairn import --from codex --to claude` exports a listed note
/// into that project's memory only.
pub fn note_scopes(
    conn: &Connection,
    codex_home: &std::path::Path,
) -> Result<Vec<(String, String)>> {
    let mut problems = Vec::new();
    let mut notes = inputs::note_inputs(codex_home, &mut problems);
    inputs::scope_notes(conn, &mut notes)?;
    Ok(notes
        .iter()
        .filter_map(|n| {
            let scope = &n.candidates.first()?.new.scope;
            if scope == cairn_memory::GLOBAL {
                return None;
            }
            let (root, name) = n.key.split_once('/')?;
            Some((
                format!("{root}/extensions/ad_hoc/notes/{name}"),
                scope.clone(),
            ))
        })
        .collect())
}

/// The last consolidation run, if any.
pub fn last_run(conn: &Connection) -> Result<Option<LastRun>> {
    if !schema::readable(conn)? {
        return Ok(None);
    }
    Ok(conn
        .query_row(
            "SELECT started_at, finished_at, status, error FROM consolidation_runs
             ORDER BY id DESC LIMIT 1",
            [],
            |r| {
                Ok(LastRun {
                    started_at: r.get(0)?,
                    finished_at: r.get(1)?,
                    status: r.get(2)?,
                    error: r.get(3)?,
                })
            },
        )
        .optional()?)
}

fn try_lock(path: &Path) -> Result<Option<File>> {
    cairn_store::lockfile::try_lock_file(path).map_err(|source| ConsolidateError::Lock {
        path: path.to_path_buf(),
        source,
    })
}
