//! Codex → Claude Code: Codex's memory for a project becomes Claude Code topic files in that
//! project's auto-memory dir, with index lines in its `MEMORY.md`.
//!
//! The project key is derived from the canonical git root of each Codex scope exactly as
//! Claude Code derives its auto-memory key. Each file cairn writes carries frontmatter
//! `source: codex`, a `cairn_id` and a `cairn_hash` of the content it wrote: a re-run finds
//! its own files by id, rewrites them only when the content changed, and leaves alone any file
//! whose hash no longer matches (someone edited it) and every file without those marks.
//! Index lines live between two HTML-comment markers in `MEMORY.md`; the lines outside them
//! are never changed, and the whole file is kept within 200 lines and 25,000 characters
//! (Claude Code silently truncates past that): when one line per topic does not fit, a single
//! line points to an index topic file; when not even that fits, no line is added and the
//! report says so. Every text written passes through `cairn_redact::redact`, always before it
//! is cut (a secret cut short is no longer recognised). Temp files a killed export left (exactly
//! cairn's temp-name shape, older than five minutes) are removed first.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use cairn_transcript::{ClaudeRoot, Problem, claude_project_key};
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64;

use crate::codex_config::{MemoryVersion, read_config};
use crate::codex_source::{self, ItemKind, MemoryItem, Scope, slug, truncate_chars};
use crate::error::{InteropError, Result};
use crate::fsutil;
use crate::import::Operation;
use crate::workspace::WorkspaceLock;

/// Claude Code loads the first 200 lines of `MEMORY.md`…
pub const INDEX_MAX_LINES: usize = 200;
/// …or the first 25,000 characters (UTF-16 units), whichever comes first.
pub const INDEX_MAX_CHARS: usize = 25_000;

const BEGIN: &str =
    "<!-- cairn:codex begin (managed by `cairn import --from codex --to claude`) -->";
const BEGIN_PREFIX: &str = "<!-- cairn:codex begin";
const END: &str = "<!-- cairn:codex end -->";

#[derive(Debug, Clone, Default)]
pub struct ExportRequest {
    pub claude_root: PathBuf,
    pub home: Option<PathBuf>,
    pub codex_home: PathBuf,
    /// `--project DIR`: only these projects (matched by canonical git root).
    pub projects: Vec<PathBuf>,
    pub dry_run: bool,
    /// A cairn-owned lock file that serialises exports.
    pub lock_path: Option<PathBuf>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ExportStatus {
    /// Dry run: nothing of cairn's there yet.
    New,
    /// Dry run: files would change.
    Changed,
    Unchanged,
    Skipped,
    Exported,
    Failed,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExportTarget {
    /// The project directory (canonical git root, or the directory itself outside git).
    pub cwd: Option<String>,
    pub key: Option<String>,
    pub memory_dir: Option<String>,
    pub status: ExportStatus,
    /// Topic files cairn manages here.
    pub files: usize,
    pub written: usize,
    pub removed: usize,
    /// Files of cairn's that were edited since, left untouched.
    pub kept: Vec<String>,
    /// `lines` (one per topic), `collapsed` (one line to an index topic) or `none`.
    pub index: &'static str,
    pub reason: Option<String>,
    /// Temp files a killed earlier export left in the memory dir, removed by this run.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub cleaned: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub operations: Vec<Operation>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ExportReport {
    pub mode: &'static str,
    /// The Codex workspace roots read.
    pub sources: Vec<String>,
    pub projects: Vec<ExportTarget>,
    pub warnings: Vec<String>,
    pub skipped: Vec<Problem>,
}

/// `findCanonicalGitRoot`: walk up to `.git`; for a worktree (`.git` file → `gitdir: X`
/// with `X/commondir`, validated both ways) return the main checkout; a submodule or
/// anything unvalidated keeps its own root. Outside git, the directory itself.
pub fn canonical_git_root(dir: &Path) -> PathBuf {
    let mut cur = dir.to_path_buf();
    loop {
        let dotgit = cur.join(".git");
        match fs::symlink_metadata(&dotgit) {
            Ok(m) if m.is_dir() => return cur,
            Ok(m) if m.is_file() => return worktree_main(&cur, &dotgit).unwrap_or(cur),
            _ => {}
        }
        if !cur.pop() {
            return dir.to_path_buf();
        }
    }
}

fn worktree_main(root: &Path, dotgit: &Path) -> Option<PathBuf> {
    let text = fs::read_to_string(dotgit).ok()?;
    let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
    let gitdir = fs::canonicalize(root.join(gitdir)).ok()?;
    let common = fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = fs::canonicalize(gitdir.join(common.trim())).ok()?;
    if gitdir.parent()? != common.join("worktrees") {
        return None;
    }
    let back = fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let back = fs::canonicalize(gitdir.join(back.trim())).ok()?;
    if back != fs::canonicalize(dotgit).ok()? {
        return None;
    }
    if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf)
    } else {
        Some(common)
    }
}

/// A project's Claude Code memory directory from its canonical root.
fn memory_dir_for(
    claude: &ClaudeRoot,
    over: Option<&Path>,
    root: &Path,
) -> std::result::Result<(String, PathBuf), String> {
    let root_s = root.to_str().ok_or("the project path is not valid UTF-8")?;
    let key = claude_project_key(root_s);
    if let Some(o) = over {
        return Ok((key, o.to_path_buf()));
    }
    let projects = claude.projects_dir();
    if key.len() <= 200 {
        return Ok((key.clone(), projects.join(&key).join("memory")));
    }
    let prefix = format!("{}-", &key[..200]);
    let found = fs::read_dir(&projects).ok().and_then(|rd| {
        rd.flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with(&prefix))
            .min()
    });
    match found {
        Some(name) => Ok((name.clone(), projects.join(name).join("memory"))),
        None => Err("the project path is longer than 200 characters: Claude Code names its directory with a hash cairn cannot reproduce; open the project in Claude Code once, then re-run".into()),
    }
}

/// One topic file cairn wants in a memory dir.
#[derive(Debug, Clone)]
struct Topic {
    id: String,
    base: String,
    name: String,
    description: String,
    content: String,
}

fn yaml_str(s: &str) -> String {
    let one: String = s
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    format!("\"{}\"", one.replace('\\', "\\\\").replace('"', "\\\""))
}

fn content_hash(text: &str) -> String {
    format!("{:016x}", xxh3_64(text.as_bytes()))
}

/// `text` without its first `cairn_hash:` line, and that line's value.
fn split_hash(text: &str) -> (String, Option<String>) {
    let mut out = String::with_capacity(text.len());
    let mut value = None;
    for line in text.split_inclusive('\n') {
        if value.is_none()
            && let Some(v) = line.strip_prefix("cairn_hash:")
        {
            value = Some(v.trim().to_string());
            continue;
        }
        out.push_str(line);
    }
    (out, value)
}

/// `text` redacted, then cut to `max` characters. Never the other way round: a secret cut
/// short is no longer recognised and its first characters would be written.
fn redact_then_cut(text: &str, max: usize) -> String {
    truncate_chars(&cairn_redact::redact(text), max)
}

/// The topic file for `item` (every text redacted before it is cut), its name and its
/// description as written.
fn render(item: &MemoryItem, id: &str) -> (String, String, String) {
    let name = redact_then_cut(&item.title, 100);
    let description = redact_then_cut(&item.description, 150);
    let mut prov = format!("`{}`", item.source);
    if !item.provenance.is_empty() {
        prov.push_str(&format!(" ({})", item.provenance));
    }
    let body = format!(
        "> Imported from Codex by cairn: {prov}. `cairn import --from codex --to claude` updates this file in place; once you edit it, cairn leaves it alone.\n\n{}\n",
        item.body.trim_end()
    );
    let body = cairn_redact::redact(&body).into_owned();
    let unhashed = format!(
        "---\nname: {}\ndescription: {}\ntype: {}\nsource: codex\ncairn_id: {id}\n---\n\n{body}",
        yaml_str(&name),
        yaml_str(&description),
        item.kind.memory_type(),
    );
    let h = content_hash(&unhashed);
    let full = unhashed.replacen(
        &format!("cairn_id: {id}\n"),
        &format!("cairn_id: {id}\ncairn_hash: {h}\n"),
        1,
    );
    (full, name, description)
}

fn base_name(item: &MemoryItem, suffix: &str) -> String {
    let tail = |p: &str| {
        slug(&cairn_redact::redact(
            item.id.strip_prefix(p).unwrap_or(&item.id),
        ))
    };
    let base = match item.kind {
        ItemKind::Profile => "codex_user_profile".to_string(),
        ItemKind::Preferences => "codex_feedback_preferences".to_string(),
        ItemKind::Tips => "codex_feedback_general_tips".to_string(),
        ItemKind::Note => format!("codex_feedback_note_{}", tail("note:")),
        ItemKind::TaskGroup => format!("codex_project_{}", tail("task:")),
        ItemKind::Rollout => format!("codex_project_rollout_{}", tail("rollout:")),
        ItemKind::Routes => "codex_reference_routes".to_string(),
    };
    if item.scope == Scope::Global {
        base
    } else {
        format!("{base}{suffix}")
    }
}

/// A file already in the memory dir.
#[derive(Debug)]
struct Existing {
    path: PathBuf,
    name: String,
    /// `cairn_id` when the file is cairn's (`source: codex`).
    id: Option<String>,
    edited: bool,
    content: String,
}

fn scan_dir(dir: &Path) -> Vec<Existing> {
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for e in rd.flatten() {
        let name = e.file_name().to_string_lossy().into_owned();
        let path = e.path();
        let regular = e.file_type().is_ok_and(|t| t.is_file());
        let content = if regular && name.to_ascii_lowercase().ends_with(".md") {
            fs::read(&path)
                .map(|b| String::from_utf8_lossy(&b).into_owned())
                .unwrap_or_default()
        } else {
            String::new()
        };
        let id = codex_mark(&content);
        let edited = id.is_some() && {
            let (unhashed, h) = split_hash(&content);
            h.as_deref() != Some(content_hash(&unhashed).as_str())
        };
        out.push(Existing {
            path,
            name,
            id,
            edited,
            content,
        });
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// One `MEMORY.md` line; the texts are redacted before they are cut.
/// The `cairn_id` of a topic file cairn exported from Codex: frontmatter with
/// `source: codex` and a `cairn_id: codex:…` (edited or not). `None` for any other text.
pub(crate) fn codex_mark(content: &str) -> Option<String> {
    let rest = content.strip_prefix("---\n")?;
    let mut id = None;
    let mut source_codex = false;
    for line in rest.lines() {
        if line == "---" {
            break;
        }
        if let Some(v) = line.strip_prefix("cairn_id:") {
            id = Some(v.trim().to_string());
        }
        if line
            .strip_prefix("source:")
            .is_some_and(|v| v.trim() == "codex")
        {
            source_codex = true;
        }
    }
    id.filter(|i| source_codex && i.starts_with("codex:"))
}

/// `MEMORY.md` without the block of index lines cairn added for Codex memory, and without the
/// blank lines cairn put before it (unchanged when it has none).
pub(crate) fn without_codex_block(text: &str) -> String {
    if !has_codex_block(text) {
        return text.to_string();
    }
    let rest = with_block(text, None);
    let rest = rest.trim_end();
    if rest.is_empty() {
        String::new()
    } else {
        format!("{rest}\n")
    }
}

/// True when `text` holds cairn's block of Codex index lines.
pub(crate) fn has_codex_block(text: &str) -> bool {
    text.lines()
        .any(|l| l.trim_start().starts_with(BEGIN_PREFIX))
}

fn index_line(name: &str, file: &str, description: &str) -> String {
    let name = redact_then_cut(name, 60).replace(['[', ']'], "");
    let desc = redact_then_cut(description, 80);
    format!("- [{name}]({file}) — {desc}")
}

fn fits(text: &str) -> bool {
    let t = text.trim();
    t.split('\n').count() <= INDEX_MAX_LINES && t.encode_utf16().count() <= INDEX_MAX_CHARS
}

/// `MEMORY.md` with cairn's block replaced by `lines` (or removed when `None`).
fn with_block(existing: &str, lines: Option<&[String]>) -> String {
    let mut before = String::new();
    let mut after = String::new();
    let mut state = 0; // 0 before, 1 inside, 2 after
    let mut had = false;
    for line in existing.split_inclusive('\n') {
        match state {
            0 if line.trim_start().starts_with(BEGIN_PREFIX) => {
                state = 1;
                had = true;
            }
            0 => before.push_str(line),
            1 if line.trim_start().starts_with(END) => state = 2,
            1 => {}
            _ => after.push_str(line),
        }
    }
    let block = lines.map(|l| format!("{BEGIN}\n{}\n{END}\n", l.join("\n")));
    if had {
        return format!("{before}{}{after}", block.unwrap_or_default());
    }
    match block {
        None => existing.to_string(),
        Some(b) if existing.trim().is_empty() => b,
        Some(b) => format!("{}\n\n{b}", existing.trim_end()),
    }
}

fn take_lock(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent() {
        fsutil::create_dir_private(parent, parent)?;
    }
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(path).map_err(|e| InteropError::io(path, e))?;
    match f.try_lock() {
        Ok(()) => Ok(f),
        Err(TryLockError::WouldBlock) => Err(InteropError::io(
            path,
            std::io::Error::new(
                std::io::ErrorKind::WouldBlock,
                "another cairn export into Claude Code is running; retry when it finishes",
            ),
        )),
        Err(TryLockError::Error(e)) => Err(InteropError::io(path, e)),
    }
}

struct Target {
    key: String,
    root: PathBuf,
    memory_dir: PathBuf,
    items: Vec<MemoryItem>,
}

/// Runs (or dry-runs) the export.
pub fn run(req: &ExportRequest) -> Result<ExportReport> {
    let _lock = match (&req.lock_path, req.dry_run) {
        (Some(p), false) => Some(take_lock(p)?),
        _ => None,
    };
    let mut warnings = Vec::new();
    let order = match read_config(&req.codex_home) {
        Ok(cfg) => {
            let v = crate::codex_config::plan_versions(&cfg, &req.codex_home, None).codex_resolves;
            if v == MemoryVersion::V1 {
                vec![MemoryVersion::V1, MemoryVersion::V2]
            } else {
                vec![MemoryVersion::V2, MemoryVersion::V1]
            }
        }
        Err(e) => {
            warnings.push(format!("{e}; reading both memory workspaces, v2 first"));
            vec![MemoryVersion::V2, MemoryVersion::V1]
        }
    };
    let _shared = WorkspaceLock::acquire_shared(&req.codex_home, &order)?;
    let mem = codex_source::read_workspace(&req.codex_home, &order);
    let claude = ClaudeRoot::new(&req.claude_root);
    let over = claude.auto_memory_override(req.home.as_deref());

    let wanted: Option<BTreeSet<PathBuf>> = if req.projects.is_empty() {
        None
    } else {
        let mut s = BTreeSet::new();
        for p in &req.projects {
            let c = fs::canonicalize(p).map_err(|e| InteropError::io(p, e))?;
            s.insert(canonical_git_root(&c));
        }
        Some(s)
    };

    let mut report = ExportReport {
        mode: if req.dry_run { "dry-run" } else { "export" },
        sources: mem.roots.iter().map(|p| p.display().to_string()).collect(),
        projects: Vec::new(),
        warnings,
        skipped: mem.problems.clone(),
    };

    // Group scoped items by target memory dir.
    let mut targets: BTreeMap<PathBuf, Target> = BTreeMap::new();
    let mut unresolved: BTreeMap<String, String> = BTreeMap::new();
    let mut globals = Vec::new();
    for item in &mem.items {
        let cwd = match &item.scope {
            Scope::Global => {
                globals.push(item.clone());
                continue;
            }
            Scope::Cwd(c) => c,
        };
        let Some(canon) = fs::canonicalize(cwd).ok().filter(|c| c.is_dir()) else {
            unresolved
                .entry(cwd.clone())
                .or_insert_with(|| "the directory no longer exists (moved or deleted)".into());
            continue;
        };
        let root = canonical_git_root(&canon);
        if wanted.as_ref().is_some_and(|w| !w.contains(&root)) {
            continue;
        }
        match memory_dir_for(&claude, over.as_deref(), &root) {
            Ok((key, dir)) => {
                let t = targets.entry(dir.clone()).or_insert_with(|| Target {
                    key,
                    root: root.clone(),
                    memory_dir: dir,
                    items: Vec::new(),
                });
                let mut it = item.clone();
                // A shared (autoMemoryDirectory) dir holds several projects: keep ids apart.
                if over.is_some() {
                    it.id = format!("{}:{}", claude_project_key(&root.to_string_lossy()), it.id);
                }
                t.items.push(it);
            }
            Err(reason) => {
                unresolved.entry(cwd.clone()).or_insert(reason);
            }
        }
    }
    for (cwd, reason) in unresolved {
        report.projects.push(ExportTarget {
            cwd: Some(cwd),
            key: None,
            memory_dir: None,
            status: ExportStatus::Skipped,
            files: 0,
            written: 0,
            removed: 0,
            kept: Vec::new(),
            index: "none",
            reason: Some(reason),
            cleaned: Vec::new(),
            operations: Vec::new(),
        });
    }
    if let Some(w) = &wanted {
        for root in w {
            if !targets.values().any(|t| &t.root == root) {
                report.projects.push(ExportTarget {
                    cwd: Some(root.display().to_string()),
                    key: None,
                    memory_dir: None,
                    status: ExportStatus::Skipped,
                    files: 0,
                    written: 0,
                    removed: 0,
                    kept: Vec::new(),
                    index: "none",
                    reason: Some("no Codex memory is scoped to this project".into()),
                    cleaned: Vec::new(),
                    operations: Vec::new(),
                });
            }
        }
    }

    for (_, mut t) in targets {
        t.items.extend(globals.iter().cloned());
        let mut entry = ExportTarget {
            cwd: Some(t.root.display().to_string()),
            key: Some(t.key.clone()),
            memory_dir: Some(t.memory_dir.display().to_string()),
            status: ExportStatus::Unchanged,
            files: 0,
            written: 0,
            removed: 0,
            kept: Vec::new(),
            index: "none",
            reason: None,
            cleaned: Vec::new(),
            operations: Vec::new(),
        };
        let base = if t.memory_dir.starts_with(&req.claude_root) {
            req.claude_root.clone()
        } else {
            t.memory_dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        match sync_target(&base, &t, over.is_some(), req.dry_run, &mut entry) {
            Ok(()) => {}
            Err(e) => {
                entry.status = ExportStatus::Failed;
                entry.reason = Some(e.to_string());
            }
        }
        if !entry.cleaned.is_empty() {
            report.warnings.push(format!(
                "removed {} temp file(s) an interrupted export left in {}",
                entry.cleaned.len(),
                t.memory_dir.display()
            ));
        }
        report.projects.push(entry);
    }
    if report.projects.is_empty() {
        report
            .warnings
            .push("no Codex memory scoped to a project was found".into());
    }
    Ok(report)
}

fn sync_target(
    base: &Path,
    t: &Target,
    shared_dir: bool,
    dry_run: bool,
    entry: &mut ExportTarget,
) -> Result<()> {
    fsutil::ensure_no_symlink(base, &t.memory_dir.join("MEMORY.md"))?;
    let existing = scan_dir(&t.memory_dir);
    let suffix = if shared_dir {
        format!("_{:06x}", xxh3_64(t.key.as_bytes()) & 0xff_ffff)
    } else {
        String::new()
    };
    let id_scope = |it: &MemoryItem| match it.scope {
        Scope::Global => "global".to_string(),
        Scope::Cwd(_) => t.key.clone(),
    };
    let mut topics: Vec<Topic> = Vec::new();
    for it in &t.items {
        // The id is written into the file too: redacted like every other text.
        let id = cairn_redact::redact(&format!("codex:{}:{}", id_scope(it), it.id)).into_owned();
        if topics.iter().any(|x| x.id == id) {
            continue;
        }
        let (content, name, description) = render(it, &id);
        topics.push(Topic {
            id,
            base: base_name(it, &suffix),
            name,
            description,
            content,
        });
    }

    // File names: an id keeps its file; a new topic takes a free name.
    let mut taken: BTreeSet<String> = existing
        .iter()
        .map(|e| e.name.to_ascii_lowercase())
        .collect();
    let mut names: BTreeMap<String, String> = BTreeMap::new();
    let assign = |topic: &Topic, taken: &mut BTreeSet<String>| -> String {
        if let Some(e) = existing
            .iter()
            .find(|e| e.id.as_deref() == Some(topic.id.as_str()))
        {
            return e.name.clone();
        }
        let mut n = 1;
        loop {
            let cand = if n == 1 {
                format!("{}.md", topic.base)
            } else {
                format!("{}_{n}.md", topic.base)
            };
            if taken.insert(cand.to_ascii_lowercase()) {
                return cand;
            }
            n += 1;
        }
    };
    for tp in &topics {
        let name = assign(tp, &mut taken);
        names.insert(tp.id.clone(), name);
    }

    // The index block, within Claude Code's limits.
    let index_path = t.memory_dir.join("MEMORY.md");
    let old_index = match fs::read(&index_path) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(_) => None,
    };
    let old_text = old_index.clone().unwrap_or_default();
    let lines: Vec<String> = topics
        .iter()
        .map(|tp| index_line(&tp.name, &names[&tp.id], &tp.description))
        .collect();
    let mut new_text = with_block(&old_text, Some(&lines));
    entry.index = "lines";
    if !fits(&new_text) {
        let id = format!("codex:{}:index", t.key);
        let listing = lines.join("\n");
        let item = MemoryItem {
            id: "index".into(),
            kind: ItemKind::Routes,
            scope: Scope::Cwd(t.root.display().to_string()),
            title: "Codex: index of imported Codex memory".into(),
            description: format!(
                "List of the {} topic files imported from Codex for this project",
                topics.len()
            ),
            body: listing,
            source: "memory workspace".into(),
            provenance: String::new(),
        };
        let (content, name, description) = render(&item, &id);
        let tp = Topic {
            id: id.clone(),
            base: format!("codex_reference_index{suffix}"),
            name,
            description,
            content,
        };
        let name = assign(&tp, &mut taken);
        names.insert(id, name.clone());
        let one = vec![index_line(&tp.name, &name, &tp.description)];
        topics.push(tp);
        new_text = with_block(&old_text, Some(&one));
        entry.index = "collapsed";
        if !fits(&new_text) {
            new_text = with_block(&old_text, None);
            entry.index = "none";
            entry.reason = Some(format!(
                "{} is already at Claude Code's limit (200 lines / 25,000 characters): no index line added; the topic files are still there",
                index_path.display()
            ));
        }
    }
    entry.files = topics.len();

    // Topic files first, the index last (it never points to a missing file).
    // Held by descriptor from `base` down: a link swapped in for a directory on the way is
    // refused, never written through.
    let dir = if dry_run {
        None
    } else {
        Some(fsutil::Dir::open_beneath(base, &t.memory_dir, true)?)
    };
    // Before anything is written: the temp files of an export killed mid-write (only names
    // of exactly cairn's temp shape, old enough that no live writer owns them).
    match &dir {
        Some(d) => entry.cleaned = d.remove_stale_temps(fsutil::STALE_TEMP_AGE)?,
        None => {
            for name in fsutil::stale_temps(&t.memory_dir) {
                entry.operations.push(Operation {
                    op: "remove",
                    path: t.memory_dir.join(name).display().to_string(),
                    from: None,
                });
            }
        }
    }
    let mut changed = false;
    let wanted_ids: BTreeSet<&str> = topics.iter().map(|tp| tp.id.as_str()).collect();
    for tp in &topics {
        let name = &names[&tp.id];
        let path = t.memory_dir.join(name);
        match existing
            .iter()
            .find(|e| e.id.as_deref() == Some(tp.id.as_str()))
        {
            Some(e) if e.edited => entry.kept.push(e.name.clone()),
            Some(e) if e.content == tp.content => {}
            found => {
                let op = if found.is_some() { "write" } else { "create" };
                entry.operations.push(Operation {
                    op,
                    path: path.display().to_string(),
                    from: None,
                });
                if let Some(d) = &dir {
                    d.replace_file(std::ffi::OsStr::new(name), tp.content.as_bytes())?;
                }
                entry.written += 1;
                changed = true;
            }
        }
    }
    for e in &existing {
        let Some(id) = e.id.as_deref() else { continue };
        if wanted_ids.contains(id) {
            continue;
        }
        if e.edited {
            entry.kept.push(e.name.clone());
            continue;
        }
        entry.operations.push(Operation {
            op: "remove",
            path: e.path.display().to_string(),
            from: None,
        });
        if let Some(d) = &dir {
            let name = e.path.file_name().unwrap_or_default();
            d.remove_file(name)
                .map_err(|err| InteropError::io(&e.path, err))?;
        }
        entry.removed += 1;
        changed = true;
    }
    if new_text != old_text && !(old_index.is_none() && new_text.is_empty()) {
        entry.operations.push(Operation {
            op: "write",
            path: index_path.display().to_string(),
            from: None,
        });
        if let Some(d) = &dir {
            d.replace_file(std::ffi::OsStr::new("MEMORY.md"), new_text.as_bytes())?;
        }
        changed = true;
    }
    entry.status = match (changed, dry_run) {
        (false, _) => ExportStatus::Unchanged,
        (true, false) => ExportStatus::Exported,
        (true, true) if existing.iter().all(|e| e.id.is_none()) => ExportStatus::New,
        (true, true) => ExportStatus::Changed,
    };
    if !dry_run {
        entry.operations.clear();
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn block_is_replaced_in_place_and_user_lines_kept() {
        let user = "# Index\n- [A](a.md) — mine\n";
        let one = with_block(user, Some(&["- [X](x.md) — x".to_string()]));
        assert!(one.starts_with(user.trim_end()));
        assert!(one.contains("- [X](x.md) — x"));
        let two = with_block(&one, Some(&["- [Y](y.md) — y".to_string()]));
        assert!(!two.contains("x.md") && two.contains("y.md"));
        assert!(two.starts_with("# Index\n- [A](a.md) — mine\n"));
        assert_eq!(
            with_block(&two, Some(&["- [Y](y.md) — y".to_string()])),
            two
        );
        let gone = with_block(&two, None);
        assert!(!gone.contains("cairn:codex"));
    }

    #[test]
    fn limits_are_lines_and_utf16_units() {
        let ok = "x\n".repeat(200);
        assert!(fits(&ok));
        assert!(!fits(&"x\n".repeat(201)));
        assert!(fits(&"a".repeat(25_000)));
        assert!(!fits(&"😀".repeat(12_501)));
    }

    #[test]
    fn hash_detects_edits() {
        let item = MemoryItem {
            id: "profile".into(),
            kind: ItemKind::Profile,
            scope: Scope::Global,
            title: "Codex: user profile".into(),
            description: "d \"q\" # x".into(),
            body: "body".into(),
            source: "memories_v2/memory_summary.md".into(),
            provenance: String::new(),
        };
        let (c, _, _) = render(&item, "codex:global:profile");
        assert!(c.contains("description: \"d \\\"q\\\" # x\""));
        let (unhashed, h) = split_hash(&c);
        assert_eq!(h.unwrap(), content_hash(&unhashed));
        let edited = c.replace("body", "my edit");
        let (unhashed, h) = split_hash(&edited);
        assert_ne!(h.unwrap(), content_hash(&unhashed));
    }

    /// Audit: titles were cut to 100/60 characters before redaction, so a token cut short
    /// (`ghp_…` at 33 of 36 characters, `AKIAIOS…`) was no longer recognised and written.
    #[test]
    fn secrets_are_redacted_before_any_cut() {
        let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
        // The token straddles every cut: 60 (index), 80 and 100 (name), 150 (description).
        for pad in [40, 55, 75, 95, 140] {
            let text = format!("{} {token} and AKIAIOSFODNN7EXAMPLE tail", "x".repeat(pad));
            let item = MemoryItem {
                id: "note:n".into(),
                kind: ItemKind::Note,
                scope: Scope::Global,
                title: format!("Codex session: {text}"),
                description: text.clone(),
                body: text.clone(),
                source: "memories_v2/x.md".into(),
                provenance: String::new(),
            };
            let (content, name, description) = render(&item, "codex:global:note:n");
            let line = index_line(&item.title, "x.md", &item.description);
            for written in [&content, &name, &description, &line] {
                assert!(
                    !written.contains("ghp_") && !written.contains("AKIA"),
                    "pad {pad}: {written}"
                );
            }
        }
    }

    #[test]
    fn the_codex_block_is_stripped_from_an_index() {
        let user = "# Index\n- [A](a.md) — mine\n";
        let with = with_block(user, Some(&["- [X](codex_x.md) — x".to_string()]));
        assert!(has_codex_block(&with) && !has_codex_block(user));
        assert_eq!(without_codex_block(&with), user);
        assert_eq!(without_codex_block(user), user);
        let only = with_block("", Some(&["- [X](codex_x.md) — x".to_string()]));
        assert_eq!(without_codex_block(&only), "");
    }

    #[test]
    fn git_root_of_worktree_is_main_checkout() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let main = base.join("repo");
        fs::create_dir_all(main.join(".git/worktrees/wt")).unwrap();
        fs::create_dir_all(main.join("sub/dir")).unwrap();
        assert_eq!(canonical_git_root(&main.join("sub/dir")), main);
        let wt = base.join("wt");
        fs::create_dir_all(&wt).unwrap();
        fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", main.join(".git/worktrees/wt").display()),
        )
        .unwrap();
        fs::write(main.join(".git/worktrees/wt/commondir"), "../..\n").unwrap();
        fs::write(
            main.join(".git/worktrees/wt/gitdir"),
            format!("{}\n", wt.join(".git").display()),
        )
        .unwrap();
        assert_eq!(canonical_git_root(&wt), main);
        let plain = base.join("plain");
        fs::create_dir_all(&plain).unwrap();
        assert_eq!(canonical_git_root(&plain), plain);
    }
}
