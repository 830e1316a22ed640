//! Claude Code → Codex memory import: the plan (every candidate, with its status), a dry run
//! (the exact file operations) and the import itself.
//!
//! The semantics are those of Codex 0.165's importer (seed 000): a selected project's resource
//! directory is replaced as a whole; a project whose copy is already identical is not a
//! candidate; a copy whose Claude Code project is gone is a candidate and importing it deletes
//! the copy; a project that lost its transcripts keeps its copy; selecting a project without a
//! usable cwd fails with `selected memory was not found: <key>`. On top: `--map KEY=DIR` gives
//! such a project its directory, what cairn exported from Codex is not copied back and a
//! symlinked memory dir keeps its copy ([`crate::claude_source`]), the v1 trap is avoided
//! ([`crate::codex_config`]), every
//! change happens under the workspace locks, and each copy is staged and renamed into place,
//! so a crash leaves the old or the new copy, never a mix.

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use cairn_transcript::Problem;
use serde::Serialize;

use crate::claude_source::{self, ClaudeMemory, SourceFile, valid_key};
use crate::codex_config::{MemoryVersion, plan_versions, read_config};
use crate::error::{InteropError, Result};
use crate::fsutil;
use crate::workspace::{SCOPE_FILE, TargetState, Workspace, WorkspaceLock, scope_json};

/// The `instructions.md` written beside the imported resources.
pub const INSTRUCTIONS: &str = include_str!("instructions.md");

/// What to import and how.
#[derive(Debug, Clone, Default)]
pub struct ImportRequest {
    pub claude_root: PathBuf,
    /// The user's home, to expand `~/` in `autoMemoryDirectory`.
    pub home: Option<PathBuf>,
    pub codex_home: PathBuf,
    /// `--project KEY`, repeatable.
    pub projects: Vec<String>,
    /// `--all`: every candidate.
    pub all: bool,
    /// `--map KEY=DIR`, repeatable.
    pub maps: Vec<String>,
    /// `--codex-version v1|v2`.
    pub codex_version: Option<MemoryVersion>,
    pub dry_run: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Mode {
    /// No selection: list the candidates, change nothing.
    Plan,
    /// A selection with `--dry-run`: the exact file operations, change nothing.
    DryRun,
    Import,
}

/// A project's status: `new|changed|delete|unchanged|skipped` in a plan,
/// `imported|deleted|unchanged|skipped|failed` after a run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    New,
    Changed,
    Delete,
    Unchanged,
    Skipped,
    Imported,
    Deleted,
    Failed,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::New => "new",
            Status::Changed => "changed",
            Status::Delete => "delete",
            Status::Unchanged => "unchanged",
            Status::Skipped => "skipped",
            Status::Imported => "imported",
            Status::Deleted => "deleted",
            Status::Failed => "failed",
        }
    }

    fn is_candidate(self) -> bool {
        matches!(self, Status::New | Status::Changed | Status::Delete)
    }
}

/// One file operation of a dry run.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Operation {
    /// `remove`, `write`, `copy`
    pub op: &'static str,
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

impl Operation {
    fn new(op: &'static str, path: &Path, from: Option<&Path>) -> Operation {
        Operation {
            op,
            path: path.display().to_string(),
            from: from.map(|p| p.display().to_string()),
        }
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectEntry {
    pub key: String,
    pub cwd: Option<String>,
    pub status: Status,
    /// Memory files (source files; for a deletion, the files in the copy).
    pub files: usize,
    /// Why it is skipped, failed or deleted; where its cwd came from.
    pub reason: Option<String>,
    /// What the user can do about it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<Operation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ImportReport {
    pub mode: Mode,
    /// The pipeline imported for.
    pub version: MemoryVersion,
    /// What Codex resolves from its configuration today.
    pub codex_resolves: MemoryVersion,
    /// The resource roots written (v2 first).
    pub targets: Vec<String>,
    pub projects: Vec<ProjectEntry>,
    pub warnings: Vec<String>,
    /// Symlinks and unreadable directories skipped in the Claude Code memory dirs.
    pub skipped: Vec<Problem>,
    /// Operations not tied to one project (`instructions.md`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<Operation>,
}

impl ImportReport {
    pub fn failed(&self) -> usize {
        self.projects
            .iter()
            .filter(|p| p.status == Status::Failed)
            .count()
    }
}

/// What an import would do to one project.
#[derive(Debug, Clone)]
enum Action {
    Replace {
        scope: Vec<u8>,
        files: Vec<SourceFile>,
        namespaces: Vec<MemoryVersion>,
    },
    Remove {
        namespaces: Vec<MemoryVersion>,
    },
    Nothing,
}

#[derive(Debug, Clone)]
struct Planned {
    entry: ProjectEntry,
    action: Action,
    /// Writing this project would go through this symlink.
    refused: Option<PathBuf>,
}

fn not_found(key: &str) -> String {
    format!("selected memory was not found: {key}")
}

fn parse_maps(maps: &[String]) -> Result<Vec<(String, PathBuf)>> {
    let mut out = Vec::new();
    for arg in maps {
        let Some((key, dir)) = arg.split_once('=') else {
            return Err(InteropError::Map {
                arg: arg.clone(),
                message: "expected KEY=DIR".into(),
            });
        };
        if !valid_key(key) {
            return Err(InteropError::InvalidKey(key.into()));
        }
        let dir = Path::new(dir);
        if !dir.is_absolute() {
            return Err(InteropError::Map {
                arg: arg.clone(),
                message: "DIR must be an absolute path".into(),
            });
        }
        let canon = fs::canonicalize(dir)
            .ok()
            .filter(|c| c.is_dir())
            .ok_or_else(|| InteropError::Map {
                arg: arg.clone(),
                message: "DIR is not an existing directory".into(),
            })?;
        out.push((key.to_string(), canon));
    }
    Ok(out)
}

fn count_copy_files(dir: &Path) -> usize {
    fsutil::relative_entries(dir)
        .map(|(e, _)| e.iter().filter(|p| p.as_os_str() != SCOPE_FILE).count())
        .unwrap_or(0)
}

/// Plans every project: the Claude Code sources and the owned copies in every target.
fn plan_projects(
    ws: &Workspace,
    source: &ClaudeMemory,
    namespaces: &[MemoryVersion],
) -> Result<BTreeMap<String, Planned>> {
    let mut keys: BTreeSet<String> = source.projects.iter().map(|p| p.key.clone()).collect();
    keys.extend(source.linked.iter().map(|l| l.key.clone()));
    for &v in namespaces {
        keys.extend(ws.owned_keys(v)?);
    }
    let mut out = BTreeMap::new();
    for key in keys {
        let planned = match plan_one(ws, source, namespaces, &key) {
            Ok(p) => p,
            Err(InteropError::Symlink(path)) => Planned {
                refused: Some(path.clone()),
                entry: ProjectEntry {
                    key: key.clone(),
                    cwd: None,
                    status: Status::Skipped,
                    files: 0,
                    reason: Some(format!(
                        "refusing to write through a symbolic link: {}",
                        path.display()
                    )),
                    hint: Some("replace the symlink with a real directory".into()),
                    operations: Vec::new(),
                },
                action: Action::Nothing,
            },
            Err(e) => return Err(e),
        };
        out.insert(key, planned);
    }
    Ok(out)
}

fn plan_one(
    ws: &Workspace,
    source: &ClaudeMemory,
    namespaces: &[MemoryVersion],
    key: &str,
) -> Result<Planned> {
    if let Some(l) = source.linked.iter().find(|l| l.key == key) {
        // Not followed, like Codex's importer; but the memory is still there, so a copy
        // imported before the link was made is kept, never deleted as "gone".
        let kept = namespaces
            .iter()
            .any(|&v| fs::symlink_metadata(ws.project_dir(v, key)).is_ok());
        let mut reason = format!(
            "{} ({} is a link to {})",
            claude_source::LINKED_REASON,
            l.memory_dir.display(),
            fs::read_link(&l.memory_dir)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into())
        );
        if kept {
            reason.push_str("; its existing copy is kept");
        }
        return Ok(Planned {
            entry: ProjectEntry {
                key: key.into(),
                cwd: None,
                status: Status::Skipped,
                files: 0,
                reason: Some(reason),
                hint: Some(format!(
                    "to import it, make {} a real directory (move the linked files into it)",
                    l.memory_dir.display()
                )),
                operations: Vec::new(),
            },
            action: Action::Nothing,
            refused: None,
        });
    }
    let Some(p) = source.project(key) else {
        // An owned copy whose Claude Code project is gone.
        let mut present = Vec::new();
        let mut files = 0;
        for &v in namespaces {
            if ws.owned_keys(v)?.contains(key) {
                if present.is_empty() {
                    files = count_copy_files(&ws.project_dir(v, key));
                }
                present.push(v);
            }
        }
        return Ok(Planned {
            entry: ProjectEntry {
                key: key.into(),
                cwd: None,
                status: Status::Delete,
                files,
                reason: Some(
                    "the Claude Code project has no memory any more; importing deletes the copy"
                        .into(),
                ),
                hint: None,
                operations: Vec::new(),
            },
            action: Action::Remove {
                namespaces: present,
            },
            refused: None,
        });
    };
    let files = p.files.len();
    let Some(cwd) = &p.cwd else {
        let mut unscoped = Vec::new();
        let mut scoped = false;
        for &v in namespaces {
            match ws.target_state(v, key, None)? {
                TargetState::Unscoped => unscoped.push(v),
                TargetState::Differs | TargetState::Same => scoped = true,
                TargetState::Missing => {}
            }
        }
        let why = p
            .reason
            .clone()
            .unwrap_or_else(|| "no usable session".into());
        if !unscoped.is_empty() {
            return Ok(Planned {
                entry: ProjectEntry {
                    key: key.into(),
                    cwd: None,
                    status: Status::Delete,
                    files,
                    reason: Some(format!(
                        "NO CWD ({why}); the copy without scope.json is removed"
                    )),
                    hint: None,
                    operations: Vec::new(),
                },
                action: Action::Remove {
                    namespaces: unscoped,
                },
                refused: None,
            });
        }
        let mut reason = format!("NO CWD: {why}");
        if scoped {
            reason.push_str("; its existing copy is kept");
        }
        return Ok(Planned {
            entry: ProjectEntry {
                key: key.into(),
                cwd: None,
                status: Status::Skipped,
                files,
                reason: Some(reason),
                hint: Some(format!(
                    "open the project in Claude Code once (a new transcript records its directory), or pass --map {key}=DIR"
                )),
                operations: Vec::new(),
            },
            action: Action::Nothing,
            refused: None,
        });
    };
    let cwd_s = cwd.display().to_string();
    let Some(scope) = scope_json(cwd) else {
        return Ok(Planned {
            entry: ProjectEntry {
                key: key.into(),
                cwd: Some(cwd_s),
                status: Status::Skipped,
                files,
                reason: Some("the working directory is not valid UTF-8".into()),
                hint: None,
                operations: Vec::new(),
            },
            action: Action::Nothing,
            refused: None,
        });
    };
    let mut need = Vec::new();
    let mut all_missing = true;
    for &v in namespaces {
        let st = ws.target_state(v, key, Some((&scope, &p.files)))?;
        if st != TargetState::Missing {
            all_missing = false;
        }
        if st != TargetState::Same {
            need.push(v);
        }
    }
    let status = if need.is_empty() {
        Status::Unchanged
    } else if all_missing {
        Status::New
    } else {
        Status::Changed
    };
    Ok(Planned {
        entry: ProjectEntry {
            key: key.into(),
            cwd: Some(cwd_s),
            status,
            files,
            reason: p.mapped.then(|| "cwd given by --map".to_string()),
            hint: None,
            operations: Vec::new(),
        },
        action: Action::Replace {
            scope,
            files: p.files.clone(),
            namespaces: need,
        },
        refused: None,
    })
}

/// Plans, dry-runs or runs an import (see [`Mode`]).
pub fn run(req: &ImportRequest) -> Result<ImportReport> {
    for k in &req.projects {
        if !valid_key(k) {
            return Err(InteropError::InvalidKey(k.clone()));
        }
    }
    let maps = parse_maps(&req.maps)?;
    let cfg = read_config(&req.codex_home)?;
    let versions = plan_versions(&cfg, &req.codex_home, req.codex_version);
    let namespaces = versions.namespaces.clone();
    let mode = if req.projects.is_empty() && !req.all {
        Mode::Plan
    } else if req.dry_run {
        Mode::DryRun
    } else {
        Mode::Import
    };
    let ws = Workspace::new(&req.codex_home);
    // Nothing is created in a Codex home that is not there (not installed, or a typo), and
    // nothing planned for it either: a plan would advise edits of a config that is not there.
    if !req.codex_home.is_dir() {
        return Err(InteropError::NoCodexHome(req.codex_home.clone()));
    }
    // Every lock first, before any change (and before reading the workspace state).
    let _lock = match mode {
        Mode::Import => Some(WorkspaceLock::acquire(&req.codex_home, &namespaces)?),
        _ => None,
    };
    if mode == Mode::Import {
        recover_staging(&ws)?;
    }

    let mut source = claude_source::discover(&req.claude_root, req.home.as_deref());
    let mut warnings = versions.warnings.clone();
    for (key, dir) in &maps {
        match source.projects.iter_mut().find(|p| &p.key == key) {
            Some(p) => {
                p.cwd = Some(dir.clone());
                p.reason = None;
                p.mapped = true;
            }
            None => warnings.push(format!(
                "--map {key}: no Claude Code project with memory has this key"
            )),
        }
    }
    let mut planned = plan_projects(&ws, &source, &namespaces)?;

    let mut report = ImportReport {
        mode,
        version: versions.import_version,
        codex_resolves: versions.codex_resolves,
        targets: namespaces
            .iter()
            .map(|&v| ws.resources_dir(v).display().to_string())
            .collect(),
        projects: Vec::new(),
        warnings,
        skipped: source.skipped.clone(),
        operations: Vec::new(),
    };
    if mode == Mode::Plan {
        report.projects = planned.into_values().map(|p| p.entry).collect();
        return Ok(report);
    }

    // The selection.
    let mut selected: BTreeSet<String> = req.projects.iter().cloned().collect();
    if req.all {
        selected.extend(
            planned
                .iter()
                .filter(|(_, p)| p.entry.status.is_candidate())
                .map(|(k, _)| k.clone()),
        );
    }
    for key in &selected {
        let p = planned.entry(key.clone()).or_insert_with(|| Planned {
            entry: ProjectEntry {
                key: key.clone(),
                cwd: None,
                status: Status::Failed,
                files: 0,
                reason: Some(not_found(key)),
                hint: None,
                operations: Vec::new(),
            },
            action: Action::Nothing,
            refused: None,
        });
        if let Some(path) = &p.refused {
            return Err(InteropError::Symlink(path.clone()));
        }
        if p.entry.status == Status::Skipped {
            let hint = [p.entry.reason.take(), p.entry.hint.take()]
                .into_iter()
                .flatten()
                .collect::<Vec<_>>()
                .join("; ");
            p.entry.status = Status::Failed;
            p.entry.reason = Some(not_found(key));
            p.entry.hint = (!hint.is_empty()).then_some(hint);
        }
    }
    // Refuse symlinked targets before anything is written.
    for key in &selected {
        if let Some(Planned { action, .. }) = planned.get(key) {
            let nss = match action {
                Action::Replace { namespaces, .. } | Action::Remove { namespaces } => namespaces,
                Action::Nothing => continue,
            };
            for &v in nss {
                ws.check_writable(v, key)?;
            }
        }
    }
    for &v in &namespaces {
        fsutil::ensure_no_symlink(&ws.codex_home, &ws.instructions_path(v))?;
    }
    fsutil::ensure_no_symlink(&ws.codex_home, &ws.staging_dir().join("x"))?;

    let staging = ws.staging_dir().join(fsutil::unique_suffix());
    let mut synced = false;
    for key in &selected {
        let Some(p) = planned.get_mut(key) else {
            continue;
        };
        if p.entry.status == Status::Failed || p.entry.status == Status::Unchanged {
            continue;
        }
        match (&p.action, mode) {
            (
                Action::Replace {
                    files, namespaces, ..
                },
                Mode::DryRun,
            ) => {
                for &v in namespaces {
                    let dir = ws.project_dir(v, key);
                    if fs::symlink_metadata(&dir).is_ok() {
                        p.entry
                            .operations
                            .push(Operation::new("remove", &dir, None));
                    }
                    p.entry
                        .operations
                        .push(Operation::new("write", &dir.join(SCOPE_FILE), None));
                    for f in files {
                        p.entry.operations.push(Operation::new(
                            "copy",
                            &dir.join(&f.relative),
                            Some(&f.path),
                        ));
                    }
                }
                synced = true;
            }
            (Action::Remove { namespaces }, Mode::DryRun) => {
                for &v in namespaces {
                    p.entry.operations.push(Operation::new(
                        "remove",
                        &ws.project_dir(v, key),
                        None,
                    ));
                }
                synced = true;
            }
            (
                Action::Replace {
                    scope,
                    files,
                    namespaces,
                },
                _,
            ) => {
                let res = namespaces
                    .iter()
                    .try_for_each(|&v| replace_copy(&ws, &staging, v, key, scope, files));
                synced |= settle(&mut p.entry, key, res, Status::Imported);
            }
            (Action::Remove { namespaces }, _) => {
                let res = namespaces
                    .iter()
                    .try_for_each(|&v| remove_copy(&ws, &staging, v, key));
                synced |= settle(&mut p.entry, key, res, Status::Deleted);
            }
            (Action::Nothing, _) => {}
        }
    }
    if synced {
        for &v in &namespaces {
            let path = ws.instructions_path(v);
            if fs::read_to_string(&path).ok().as_deref() == Some(INSTRUCTIONS) {
                continue;
            }
            if mode == Mode::DryRun {
                report.operations.push(Operation::new("write", &path, None));
            } else {
                // Held by descriptor from the Codex home down: a link swapped in for
                // `memories_v2` or `extensions` meanwhile is refused, never written through.
                // What is created in Codex's workspace gets the mode Codex gives its own.
                let dir = fsutil::Dir::open_beneath(
                    &ws.codex_home,
                    &ws.extension_dir(v),
                    true,
                    fsutil::NewMode::Umask,
                )?;
                dir.replace_file(
                    std::ffi::OsStr::new("instructions.md"),
                    INSTRUCTIONS.as_bytes(),
                )?;
            }
        }
    }
    if mode == Mode::Import {
        remove_any(&staging).map_err(|e| InteropError::io(&staging, e))?;
        let _ = fs::remove_dir(ws.staging_dir());
    }
    // The selection (with --all: every project, the untouched ones unchanged or skipped).
    report.projects = planned
        .into_iter()
        .filter(|(k, _)| req.all || selected.contains(k))
        .map(|(_, p)| p.entry)
        .collect();
    Ok(report)
}

fn remove_any(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.is_dir() => fs::remove_dir_all(path),
        Ok(_) => fs::remove_file(path),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Builds the new copy in the staging dir, then swaps it into place. Every directory is held
/// open by descriptor (`fsutil::Dir`), so a symlink swapped in meanwhile fails the copy
/// instead of redirecting it out of the workspace.
/// Records how one project's synchronization ended; returns whether it succeeded.
fn settle(entry: &mut ProjectEntry, key: &str, res: Result<()>, done: Status) -> bool {
    match res {
        Ok(()) => {
            entry.status = done;
            true
        }
        Err(e) => {
            entry.status = Status::Failed;
            entry.reason = Some(format!("failed to synchronize selected memory {key}: {e}"));
            false
        }
    }
}

fn replace_copy(
    ws: &Workspace,
    staging: &Path,
    v: MemoryVersion,
    key: &str,
    scope: &[u8],
    files: &[SourceFile],
) -> Result<()> {
    use std::ffi::OsStr;
    let res = fsutil::Dir::open_beneath(
        &ws.codex_home,
        &ws.resources_dir(v),
        true,
        fsutil::NewMode::Umask,
    )?;
    let stage = fsutil::Dir::open_beneath(&ws.codex_home, staging, true, fsutil::NewMode::Umask)?;
    let new_name = format!("{v}-new-{key}");
    let new_path = stage.path().join(&new_name);
    remove_any(&new_path).map_err(|e| InteropError::io(&new_path, e))?;
    let new = stage.open_rel(Path::new(&new_name), true)?;
    new.create_file(OsStr::new(SCOPE_FILE), scope)?;
    for f in files {
        let bytes = f.bytes().map_err(|e| InteropError::io(&f.path, e))?;
        let Some(name) = f.relative.file_name() else {
            continue;
        };
        let parent = f.relative.parent().unwrap_or(Path::new(""));
        new.open_rel(parent, true)?.create_file(name, &bytes)?;
    }
    let target = res.path().join(key);
    // A copy made again keeps the modes its files were given since (`chmod 640` on the
    // imported memory stays); new ones have the umask's, as Codex gives its own files.
    keep_modes(
        &target,
        &new_path,
        files.iter().map(|f| f.relative.as_path()),
    )?;
    new.sync();
    let key_os = OsStr::new(key);
    let new_os = OsStr::new(&new_name);
    match res.entry_is_symlink(key_os) {
        Ok(Some(true)) => return Err(InteropError::Symlink(target)),
        Ok(Some(false)) => {
            if stage
                .exchange(new_os, &res, key_os)
                .map_err(|e| InteropError::io(&target, e))?
            {
                // `new` now holds the old copy.
                remove_any(&new_path).map_err(|e| InteropError::io(&new_path, e))?;
            } else {
                let old_name = format!("{v}-old-{key}");
                let old_os = OsStr::new(&old_name);
                res.rename(key_os, &stage, old_os)
                    .map_err(|e| InteropError::io(&target, e))?;
                stage
                    .rename(new_os, &res, key_os)
                    .map_err(|e| InteropError::io(&target, e))?;
                let old = stage.path().join(&old_name);
                remove_any(&old).map_err(|e| InteropError::io(&old, e))?;
            }
        }
        Ok(None) => {
            stage
                .rename(new_os, &res, key_os)
                .map_err(|e| InteropError::io(&target, e))?;
        }
        Err(e) => return Err(InteropError::io(&target, e)),
    }
    res.sync();
    Ok(())
}

/// Gives each file of the fresh copy at `fresh` the permission bits the same file has in the
/// copy it replaces at `old` (the scope file too); a file the old copy lacks keeps its own.
fn keep_modes<'a>(old: &Path, fresh: &Path, files: impl Iterator<Item = &'a Path>) -> Result<()> {
    let names = files.chain(std::iter::once(Path::new(SCOPE_FILE)));
    for rel in names {
        let Ok(md) = fs::symlink_metadata(old.join(rel)) else {
            continue;
        };
        if !md.file_type().is_file() {
            continue;
        }
        let path = fresh.join(rel);
        fs::set_permissions(&path, md.permissions()).map_err(|e| InteropError::io(&path, e))?;
    }
    Ok(())
}

/// Moves a copy out of the workspace in one rename (by descriptor, see [`replace_copy`]), then
/// deletes it.
fn remove_copy(ws: &Workspace, staging: &Path, v: MemoryVersion, key: &str) -> Result<()> {
    use std::ffi::OsStr;
    let target = ws.project_dir(v, key);
    if fs::symlink_metadata(&target).is_err() {
        return Ok(());
    }
    let res = fsutil::Dir::open_beneath(
        &ws.codex_home,
        &ws.resources_dir(v),
        false,
        fsutil::NewMode::Umask,
    )?;
    let stage = fsutil::Dir::open_beneath(&ws.codex_home, staging, true, fsutil::NewMode::Umask)?;
    let gone_name = format!("{v}-del-{key}");
    let gone = stage.path().join(&gone_name);
    remove_any(&gone).map_err(|e| InteropError::io(&gone, e))?;
    res.rename(OsStr::new(key), &stage, OsStr::new(&gone_name))
        .map_err(|e| InteropError::io(&target, e))?;
    res.sync();
    remove_any(&gone).map_err(|e| InteropError::io(&gone, e))
}

/// Finishes what an interrupted import left in the staging dir (called with the locks
/// held, so no other import is running): an old copy moved aside but not yet replaced goes
/// back into place; everything else is deleted.
fn recover_staging(ws: &Workspace) -> Result<()> {
    let dir = ws.staging_dir();
    if fsutil::is_symlink(&dir) {
        return Err(InteropError::Symlink(dir));
    }
    let Ok(runs) = fs::read_dir(&dir) else {
        return Ok(());
    };
    for run in runs.flatten() {
        if let Ok(ents) = fs::read_dir(run.path()) {
            for ent in ents.flatten() {
                let name = ent.file_name().to_string_lossy().into_owned();
                let (v, rest) = if let Some(r) = name.strip_prefix("v1-") {
                    (MemoryVersion::V1, r)
                } else if let Some(r) = name.strip_prefix("v2-") {
                    (MemoryVersion::V2, r)
                } else {
                    continue;
                };
                if let Some(key) = rest.strip_prefix("old-")
                    && valid_key(key)
                {
                    let target = ws.project_dir(v, key);
                    if fs::symlink_metadata(&target).is_err() {
                        let _ = fs::rename(ent.path(), &target);
                    }
                }
            }
        }
        remove_any(&run.path()).map_err(|e| InteropError::io(run.path(), e))?;
    }
    let _ = fs::remove_dir(&dir);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_interrupted_swap_is_put_back() {
        let t = tempfile::tempdir().unwrap();
        let ws = Workspace::new(t.path());
        let res = ws.resources_dir(MemoryVersion::V2);
        fs::create_dir_all(&res).unwrap();
        // A crash between "move the old copy aside" and "move the new one in".
        let run = ws.staging_dir().join("123-0-0");
        fs::create_dir_all(run.join("v2-old--w-app/notes")).unwrap();
        fs::write(run.join("v2-old--w-app/scope.json"), "{}").unwrap();
        fs::create_dir_all(run.join("v2-new--w-app")).unwrap();
        // A crash in the middle of a deletion.
        fs::create_dir_all(run.join("v2-del--w-gone")).unwrap();
        recover_staging(&ws).unwrap();
        assert!(res.join("-w-app/scope.json").exists());
        assert!(!res.join("-w-gone").exists());
        assert!(!ws.staging_dir().exists());
    }
}
