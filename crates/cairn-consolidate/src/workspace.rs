//! Writing the Codex memory workspace: one rollout summary per session, `MEMORY.md` task
//! groups (v1 roots), `memory_summary.md`, all validated, under the workspace lock. Only files
//! cairn wrote are ever removed.

use std::collections::BTreeMap;
use std::path::Path;

use cairn_interop::codex_config::{MemoryVersion, plan_versions, read_config};
use cairn_interop::workspace::WorkspaceLock;
use cairn_memory::{GLOBAL, Memory, MemoryStore, MemoryType, neutralise};
use cairn_stage1::Stage1Output;
use cairn_workspace::merge::{
    has_cairn_blocks, merge_summary, merge_task_groups, without_cairn_blocks,
};
use cairn_workspace::{
    GroupTask, NewMode, RolloutSummary, SummaryItem, TaskGroup, install_file, install_file_with,
    install_summary, remove_file, render_memory_summary, render_task_groups, validate_task_groups,
};
use serde::Serialize;

/// Rollout summaries kept in the workspace (newest sessions).
const MAX_ROLLOUT_SUMMARIES: usize = 200;

/// What was written.
#[derive(Debug, Clone, Default, Serialize)]
pub struct WorkspaceReport {
    pub roots: Vec<String>,
    pub written: usize,
    pub removed: usize,
    pub unchanged: usize,
    /// Copies of files cairn did not write (Codex's own `MEMORY.md` or `memory_summary.md`),
    /// kept in cairn's data dir before cairn's version replaced them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kept_aside: Vec<String>,
    /// Files Codex keeps itself (its own `memory_summary.md` or `MEMORY.md`) that cairn's
    /// memories were added to, in marked blocks, instead of replacing them.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    /// Why the workspace (or part of it) was not written; the previous files stay.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn ts(secs: i64) -> jiff::Timestamp {
    jiff::Timestamp::from_second(secs).unwrap_or(jiff::Timestamp::UNIX_EPOCH)
}

/// One session's outputs merged into one rollout summary (Codex keeps one per thread).
fn by_session(outputs: &[Stage1Output]) -> Vec<(RolloutSummary, Vec<&Stage1Output>)> {
    let mut groups: BTreeMap<(String, String), Vec<&Stage1Output>> = BTreeMap::new();
    for o in outputs
        .iter()
        .filter(|o| !o.rollout_summary.trim().is_empty())
    {
        groups
            .entry((o.agent.clone(), o.session_key.clone()))
            .or_default()
            .push(o);
    }
    let mut out: Vec<(RolloutSummary, Vec<&Stage1Output>)> = groups
        .into_values()
        .filter_map(|mut os| {
            os.sort_by_key(|o| (o.source_updated_at, o.generated_at));
            let last = *os.last()?;
            // Model text: Codex reads these files as instructions, so tags and steering
            // phrases are defused as in the hooks' output.
            let summary = neutralise(
                &os.iter()
                    .map(|o| o.rollout_summary.trim())
                    .collect::<Vec<_>>()
                    .join("\n\n"),
            );
            Some((
                RolloutSummary {
                    thread_id: last.session_id.clone(),
                    updated_at: ts(last.source_updated_at),
                    rollout_path: last.source_path.clone(),
                    cwd: last.cwd.clone().unwrap_or_else(|| "unknown".into()),
                    git_branch: last.git_branch.clone(),
                    slug: os.iter().find_map(|o| o.rollout_slug.clone()),
                    summary,
                },
                os,
            ))
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.0.updated_at));
    out.truncate(MAX_ROLLOUT_SUMMARIES);
    out
}

fn title(summary: &str) -> String {
    summary
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| l.trim_start_matches('#').trim().to_string())
        .unwrap_or_else(|| "session".into())
}

fn item(m: &Memory) -> SummaryItem {
    SummaryItem {
        kind: m.memory_type.as_str().into(),
        scope: m.scope.clone(),
        name: neutralise(&m.name),
        description: neutralise(&m.description),
        keywords: m.keywords.iter().map(|k| neutralise(k)).collect(),
        updated_at: ts(m.updated_at),
    }
}

/// Where, under cairn's data dir, the workspace files cairn did not write are kept before
/// cairn replaces them.
pub const KEPT_ASIDE_DIR: &str = "codex-workspace-kept";

/// Writes the workspace for every namespace Codex reads under `codex_home`; a file there
/// that cairn did not write is copied to `kept_aside` first.
pub fn write(
    mem: &mut MemoryStore,
    outputs: &[Stage1Output],
    codex_home: &Path,
    kept_aside: &Path,
    now: i64,
) -> WorkspaceReport {
    let mut r = WorkspaceReport::default();
    if let Err(e) = write_inner(mem, outputs, codex_home, kept_aside, now, &mut r) {
        r.error = Some(e);
    }
    r
}

fn write_inner(
    mem: &mut MemoryStore,
    outputs: &[Stage1Output],
    codex_home: &Path,
    kept_aside: &Path,
    now: i64,
    r: &mut WorkspaceReport,
) -> Result<(), String> {
    let cfg = read_config(codex_home).map_err(|e| e.to_string())?;
    let plan = plan_versions(&cfg, codex_home, None);
    let _lock = WorkspaceLock::acquire(codex_home, &plan.namespaces).map_err(|e| e.to_string())?;

    let mut live: Vec<Memory> = mem
        .list(&cairn_memory::ListFilter::default())
        .map_err(|e| e.to_string())?;
    {
        let mut refs: Vec<&Memory> = live.iter().collect();
        cairn_memory::views::by_usefulness(&mut refs, now);
        let order: Vec<String> = refs.iter().map(|m| m.id.clone()).collect();
        live.sort_by_key(|m| order.iter().position(|id| *id == m.id));
    }
    let summary = render_memory_summary(&live.iter().map(item).collect::<Vec<_>>());
    let sessions = by_session(outputs);

    // Task groups by project.
    let mut groups: BTreeMap<String, TaskGroup> = BTreeMap::new();
    for (rs, os) in &sessions {
        let scope = os
            .iter()
            .rev()
            .find_map(|o| {
                o.memories
                    .iter()
                    .find(|m| m.scope != GLOBAL)
                    .map(|m| m.scope.clone())
            })
            .or_else(|| os.last().and_then(|o| o.cwd.clone()))
            .unwrap_or_else(|| GLOBAL.to_string());
        let mut keywords: Vec<String> = rs
            .slug
            .as_deref()
            .unwrap_or("")
            .split(['-', '_'])
            .filter(|w| w.len() > 2)
            .map(str::to_string)
            .collect();
        for o in os {
            for m in &o.memories {
                keywords.push(neutralise(&m.name));
            }
        }
        keywords.dedup();
        keywords.truncate(12);
        groups
            .entry(scope.clone())
            .or_insert_with(|| empty_group(&scope))
            .tasks
            .push(GroupTask {
                title: title(&rs.summary),
                file_name: rs.file_name(),
                cwd: rs.cwd.clone(),
                rollout_path: rs.rollout_path.clone(),
                updated_at: rs.updated_at,
                thread_id: rs.thread_id.clone(),
                keywords,
            });
    }
    for m in &live {
        let g = groups
            .entry(m.scope.clone())
            .or_insert_with(|| empty_group(&m.scope));
        // Named as the views name it: a description that repeats the name says it once.
        let line = neutralise(&cairn_memory::views::name_and_description(
            &m.name,
            &m.description,
        ));
        match m.memory_type {
            MemoryType::Feedback | MemoryType::User => g.preferences.push(line),
            _ => g.knowledge.push(line),
        }
    }
    let memory_md = render_task_groups(&groups.into_values().collect::<Vec<_>>());
    validate_task_groups(&memory_md).map_err(|e| e.to_string())?;
    cairn_workspace::validate_summary_v2(&summary).map_err(|e| e.to_string())?;

    let conn = mem.store().connection();
    for v in &plan.namespaces {
        let root = codex_home.join(v.dir_name());
        // As Codex: a symlinked memory root is refused (never written through).
        if std::fs::symlink_metadata(&root).is_ok_and(|m| m.file_type().is_symlink()) {
            return Err(format!(
                "memory root cannot be a symbolic link: {}",
                root.display()
            ));
        }
        r.roots.push(root.display().to_string());
        let root_key = root.display().to_string();
        let dir = root.join("rollout_summaries");
        let mut current = Vec::new();
        for (rs, _) in &sessions {
            let name = rs.file_name();
            let body = rs.render();
            count(
                install_file(&dir, &name, &body).map_err(|e| e.to_string())?,
                r,
            );
            remember_file(conn, &root_key, &format!("rollout_summaries/{name}"), &body)?;
            current.push(format!("rollout_summaries/{name}"));
        }
        // Remove summaries cairn wrote before that are no longer current.
        for old in written_files(conn, &root_key)? {
            if old.starts_with("rollout_summaries/") && !current.contains(&old) {
                let name = old.trim_start_matches("rollout_summaries/");
                if remove_file(&dir, name).map_err(|e| e.to_string())? {
                    r.removed += 1;
                }
                forget_file(conn, &root_key, &old)?;
            }
        }
        let place = Place {
            conn,
            root: &root,
            root_key: &root_key,
            kept_aside,
            now,
        };
        if *v == MemoryVersion::V1 {
            let (memory_md, pure) =
                place.with_theirs("MEMORY.md", &memory_md, merge_task_groups, r)?;
            count(
                install_file(&root, "MEMORY.md", &memory_md).map_err(|e| e.to_string())?,
                r,
            );
            place.record("MEMORY.md", &memory_md, pure)?;
        }
        let (summary, pure) = place.with_theirs("memory_summary.md", &summary, merge_summary, r)?;
        count(
            install_summary(&root, &summary).map_err(|e| e.to_string())?,
            r,
        );
        place.record("memory_summary.md", &summary, pure)?;
    }
    Ok(())
}

fn empty_group(scope: &str) -> TaskGroup {
    TaskGroup {
        scope: scope.to_string(),
        tasks: Vec::new(),
        preferences: Vec::new(),
        knowledge: Vec::new(),
        failures: Vec::new(),
    }
}

fn count(changed: bool, r: &mut WorkspaceReport) {
    if changed {
        r.written += 1;
    } else {
        r.unchanged += 1;
    }
}

/// One workspace root being written.
struct Place<'a> {
    conn: &'a rusqlite::Connection,
    root: &'a Path,
    root_key: &'a str,
    kept_aside: &'a Path,
    now: i64,
}

/// Suffix of the `workspace_files` row that records a file cairn wrote from its memories
/// alone (nothing of Codex's in it): `<name>#pure`.
pub(crate) const PURE: &str = "#pure";
/// The `workspace_files` row of a root written by a build that records [`PURE`] rows (before
/// it, every recorded file was cairn's alone).
pub(crate) const PURE_AWARE: &str = "#pure-aware";

impl Place<'_> {
    fn recorded(&self, name: &str) -> Option<String> {
        self.conn
            .query_row(
                "SELECT hash FROM workspace_files WHERE root = ?1 AND name = ?2",
                rusqlite::params![self.root_key, name],
                |row| row.get(0),
            )
            .ok()
    }

    /// What to write at `root/name` for cairn's rendering `ours`, and whether it is cairn's
    /// alone: merged into the file Codex keeps there (`merge`, cairn's lines in marked blocks)
    /// when there is one, found by taking cairn's blocks out of the file, unless the file is
    /// what cairn last wrote from its memories alone. A file there that is not a valid one of
    /// its kind is kept aside (see [`keep_theirs`]) and replaced.
    fn with_theirs(
        &self,
        name: &str,
        ours: &str,
        merge: fn(&str, &str) -> Option<String>,
        r: &mut WorkspaceReport,
    ) -> Result<(String, bool), String> {
        let path = self.root.join(name);
        let Ok(current) = std::fs::read_to_string(&path) else {
            return Ok((ours.to_string(), true));
        };
        let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(current.as_bytes()));
        let recorded = self.recorded(name);
        let ours_last = recorded.as_deref() == Some(hash.as_str());
        // cairn's own rendering, written last: recorded as such (or, by a build before the
        // record, any file it wrote without blocks).
        let pure_last = match self.recorded(PURE_AWARE) {
            Some(_) => self.recorded(&format!("{name}{PURE}")).as_deref() == Some(hash.as_str()),
            None => ours_last && !has_cairn_blocks(&current),
        };
        if pure_last {
            return Ok((ours.to_string(), true));
        }
        let base = without_cairn_blocks(&current);
        if base.trim().is_empty() {
            return Ok((ours.to_string(), true));
        }
        match merge(&base, ours) {
            Some(merged) => {
                if !ours_last {
                    r.merged.push(path.display().to_string());
                }
                Ok((merged, false))
            }
            None => {
                keep_theirs(
                    self.conn,
                    self.root,
                    self.root_key,
                    name,
                    ours,
                    self.kept_aside,
                    self.now,
                    r,
                )?;
                Ok((ours.to_string(), true))
            }
        }
    }

    /// Records what was written at `root/name`: its hash, and whether it is cairn's alone.
    fn record(&self, name: &str, text: &str, pure: bool) -> Result<(), String> {
        remember_file(self.conn, self.root_key, name, text)?;
        let pure_name = format!("{name}{PURE}");
        if pure {
            remember_file(self.conn, self.root_key, &pure_name, text)?;
        } else {
            forget_file(self.conn, self.root_key, &pure_name)?;
        }
        remember_file(self.conn, self.root_key, PURE_AWARE, "")
    }
}

/// Before cairn's version replaces `root/name`: a file there that is not what cairn last
/// wrote (Codex's own, or edited since) is copied to `kept_aside/<root dir>/<name>.<time>`.
#[allow(clippy::too_many_arguments)]
fn keep_theirs(
    conn: &rusqlite::Connection,
    root: &Path,
    root_key: &str,
    name: &str,
    ours: &str,
    kept_aside: &Path,
    now: i64,
    r: &mut WorkspaceReport,
) -> Result<(), String> {
    let Ok(theirs) = std::fs::read(root.join(name)) else {
        return Ok(());
    };
    if theirs == ours.as_bytes() {
        return Ok(());
    }
    let hash = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&theirs));
    let recorded: Option<String> = conn
        .query_row(
            "SELECT hash FROM workspace_files WHERE root = ?1 AND name = ?2",
            rusqlite::params![root_key, name],
            |row| row.get(0),
        )
        .ok();
    if recorded.as_deref() == Some(hash.as_str()) {
        return Ok(());
    }
    let dir_name = root
        .file_name()
        .map_or_else(|| "memories".into(), |n| n.to_string_lossy().into_owned());
    let dir = kept_aside.join(dir_name);
    let stamp = jiff::Timestamp::from_second(now)
        .map(|t| t.strftime("%Y%m%dT%H%M%SZ").to_string())
        .unwrap_or_else(|_| now.to_string());
    let text = String::from_utf8_lossy(&theirs);
    // In cairn's own data dir: private, like everything there.
    install_file_with(&dir, &format!("{name}.{stamp}"), &text, NewMode::Private).map_err(|e| {
        format!(
            "{} is not cairn's and could not be kept aside before replacing it ({e}); it was not replaced",
            root.join(name).display()
        )
    })?;
    r.kept_aside
        .push(dir.join(format!("{name}.{stamp}")).display().to_string());
    Ok(())
}

fn remember_file(
    conn: &rusqlite::Connection,
    root: &str,
    name: &str,
    body: &str,
) -> Result<(), String> {
    let h = format!("{:016x}", xxhash_rust::xxh3::xxh3_64(body.as_bytes()));
    conn.execute(
        "INSERT OR REPLACE INTO workspace_files(root, name, hash) VALUES (?1, ?2, ?3)",
        rusqlite::params![root, name, h],
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

fn forget_file(conn: &rusqlite::Connection, root: &str, name: &str) -> Result<(), String> {
    conn.execute(
        "DELETE FROM workspace_files WHERE root = ?1 AND name = ?2",
        rusqlite::params![root, name],
    )
    .map(|_| ())
    .map_err(|e| e.to_string())
}

fn written_files(conn: &rusqlite::Connection, root: &str) -> Result<Vec<String>, String> {
    let mut st = conn
        .prepare("SELECT name FROM workspace_files WHERE root = ?1 ORDER BY name")
        .map_err(|e| e.to_string())?;
    let rows = st
        .query_map([root], |r| r.get(0))
        .map_err(|e| e.to_string())?;
    rows.collect::<rusqlite::Result<Vec<String>>>()
        .map_err(|e| e.to_string())
}
