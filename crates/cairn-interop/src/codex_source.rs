//! Codex's memory workspace as an export source: what each file means for a project.
//!
//! Shapes (from Codex's consolidation prompt and memory writer; see
//! `tests/fixtures/codex-memory/README.md`):
//! - v1 `MEMORY.md`: blocks opened by `# Task Group: <title>`, then `scope: …` and
//!   `applies_to: cwd=<dir>; reuse_rule=…`, then `## Task <n>` sections and block-level
//!   `## User preferences` / `## Reusable knowledge` / `## Failures and how to do differently`.
//!   The `cwd=` value may name several directories (`cwd=/a and cwd=/b`, `cwd=/a and /b`,
//!   `cwd=/a, /b`); a directory's name may hold spaces ([`applies_to_cwds`]).
//! - `memory_summary.md` (both versions): first line `v1`, then `## User Profile`,
//!   `## User preferences`, `## General Tips`, `## What's in Memory`; the latter has
//!   `### <cwd / project scope>` route sections and `### Older Memory Topics` with
//!   `#### <scope>` subsections.
//! - `rollout_summaries/<stem>.md`: `thread_id:`, `updated_at:`, `rollout_path:`, `cwd:`,
//!   optional `git_branch:` lines, a blank line, then the summary.
//! - `extensions/ad_hoc/notes/<YYYY-MM-DDTHH-MM-SS>-<slug>.md`: user-requested notes.
//!
//! Everything here only reads, and never follows a symlink out of the workspace. Every file's
//! text passes through `cairn_redact::redact` as it is read, before anything cuts it into a
//! title, a description or a capped body: a secret cut short is no longer recognised, and
//! its first characters would reach Claude Code's memory.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use cairn_transcript::Problem;

use crate::codex_config::MemoryVersion;

/// Where an item applies.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Scope {
    /// The user as a whole (profile, preferences, tips, ad-hoc notes not written in a
    /// project).
    Global,
    /// One working directory (absolute, as Codex wrote it).
    Cwd(String),
}

/// What kind of memory an item is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemKind {
    Profile,
    Preferences,
    Tips,
    Note,
    TaskGroup,
    Rollout,
    Routes,
}

impl ItemKind {
    /// The Claude Code memory type it becomes.
    pub fn memory_type(self) -> &'static str {
        match self {
            ItemKind::Profile => "user",
            ItemKind::Preferences | ItemKind::Tips | ItemKind::Note => "feedback",
            ItemKind::TaskGroup | ItemKind::Rollout => "project",
            ItemKind::Routes => "reference",
        }
    }
}

/// How a project-scoped item's title and description name its project. An export into a
/// memory dir several projects share puts the project's name in its place.
pub const THIS_PROJECT: &str = "this project";

/// One piece of Codex memory.
#[derive(Debug, Clone)]
pub struct MemoryItem {
    /// Stable within its scope (`task:<slug>`, `rollout:<stem>`, `profile`, …).
    pub id: String,
    pub kind: ItemKind,
    pub scope: Scope,
    pub title: String,
    pub description: String,
    pub body: String,
    /// The file it came from, relative to the Codex home.
    pub source: String,
    /// Extra provenance (`cwd=…, updated_at=…`).
    pub provenance: String,
}

/// An ad-hoc note that belongs to one project: the Codex session that wrote it ran there
/// (cairn's store knows which; `cairn_consolidate::note_scopes`). A note without one is
/// global, as Codex keeps it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoteScope {
    /// The note, relative to the Codex home (`memories/extensions/ad_hoc/notes/<name>.md`).
    pub path: String,
    /// The project directory (its canonical git root).
    pub project: String,
}

/// Scopes the notes among `items` that `scopes` names to their project; the others stay
/// global.
pub fn scope_notes(items: &mut [MemoryItem], scopes: &[NoteScope]) {
    for it in items.iter_mut().filter(|i| i.kind == ItemKind::Note) {
        if let Some(s) = scopes.iter().find(|s| s.path == it.source) {
            it.scope = Scope::Cwd(s.project.clone());
            it.provenance
                .push_str(&format!(", in a Codex session in {}", s.project));
        }
    }
}

/// Everything read from a Codex home's memory workspaces.
#[derive(Debug, Clone, Default)]
pub struct CodexMemory {
    /// The workspace roots read.
    pub roots: Vec<PathBuf>,
    pub items: Vec<MemoryItem>,
    pub problems: Vec<Problem>,
    /// Files left unread because they hold exactly what cairn wrote there (relative to the
    /// Codex home).
    pub cairn_written: Vec<String>,
}

/// ASCII alphanumerics lowercased, runs of anything else → `_`, at most 60 characters.
pub fn slug(s: &str) -> String {
    let mut out = String::new();
    for ch in s.chars() {
        if ch.is_ascii_alphanumeric() {
            out.push(ch.to_ascii_lowercase());
        } else if !out.ends_with('_') {
            out.push('_');
        }
        if out.len() >= 60 {
            break;
        }
    }
    let t = out.trim_matches('_');
    if t.is_empty() {
        "memory".into()
    } else {
        t.into()
    }
}

/// The first sentence-ish line of `text`, at most `max` characters, on one line.
pub fn one_line(text: &str, max: usize) -> String {
    let line = text
        .lines()
        .map(|l| {
            l.trim()
                .trim_start_matches(['#', '-', '*', '>', ' '])
                .trim()
        })
        .find(|l| !l.is_empty())
        .unwrap_or("");
    truncate_chars(line, max)
}

/// At most `max` characters, with `…` when cut; a redaction marker that would be cut in half
/// is left out whole.
pub(crate) fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max.saturating_sub(1)).collect();
    if let Some(open) = t.rfind('[')
        && !t[open..].contains(']')
        && s[open..].starts_with(cairn_redact::MARKER_PREFIX)
    {
        t.truncate(open);
        t.truncate(t.trim_end().len());
    }
    t.push('…');
    t
}

/// The first `- ` bullet of `text` (else its first line), on one line.
fn first_bullet(text: &str, max: usize) -> String {
    match text.lines().find_map(|l| l.trim().strip_prefix("- ")) {
        Some(b) => truncate_chars(b.trim(), max),
        None => one_line(text, max),
    }
}

/// A scope heading or `cwd=` value without its decoration: backticks, a `cwd=` prefix.
fn bare_scope(text: &str) -> &str {
    let t = text.trim().trim_matches('`').trim();
    t.strip_prefix("cwd=").unwrap_or(t).trim().trim_matches('`')
}

/// `text` as an absolute directory that exists (trailing `/` dropped).
fn existing_dir(text: &str) -> Option<String> {
    let t = bare_scope(text);
    let t = t.trim_end_matches('/');
    (t.starts_with('/') && Path::new(t).is_dir()).then(|| t.to_string())
}

/// A scope heading or `cwd=` value as an absolute directory, when it names one.
///
/// The whole text, spaces included, when it is a directory; else the longest existing
/// directory before an annotation (`/w/app (main)`, `/w/app, branch x`); else the text up to
/// a `,`, without a trailing parenthesised note (a directory that no longer exists is still
/// named, spaces included, so it can be reported).
pub fn scope_cwd(heading: &str) -> Option<String> {
    let h = bare_scope(heading);
    if !h.starts_with('/') {
        return None;
    }
    if let Some(dir) = existing_dir(h) {
        return Some(dir);
    }
    // Where an annotation may start: a `,`, or a `(` after a space.
    let cuts: Vec<usize> = h
        .char_indices()
        .filter(|&(i, c)| c == ',' || (c == '(' && h[..i].ends_with(char::is_whitespace)))
        .map(|(i, _)| i)
        .collect();
    if let Some(dir) = cuts.iter().rev().find_map(|&i| existing_dir(&h[..i])) {
        return Some(dir);
    }
    let h = h.split(',').next().unwrap_or(h).trim_end();
    let h = match h.rfind(" (") {
        Some(i) if h.ends_with(')') => &h[..i],
        _ => h,
    };
    let h = h.trim_end().trim_end_matches('/');
    (!h.is_empty()).then(|| h.to_string())
}

/// How far a run of list items is joined back together when looking for a directory whose
/// name holds a separator.
const MAX_JOINED_ITEMS: usize = 8;

/// The working directories an `applies_to:` value names, in order, each once.
///
/// The value is `cwd=<list>; reuse_rule=…`: the list ends at the first `;`, and its items
/// are separated by ` and ` or `, ` (each may repeat `cwd=`). A directory's name may hold
/// spaces, and even a separator: items are joined back together when the joined text is an
/// existing directory (the longest such run wins). Items that are not absolute paths
/// (`any Rust repository`) are left out.
pub fn applies_to_cwds(applies_to: &str) -> Vec<String> {
    let value = applies_to.trim();
    let Some(value) = value.strip_prefix("cwd=") else {
        return Vec::new();
    };
    let list = value.split(';').next().unwrap_or("").trim();
    // Separators as (start, end), the longest first where two start together.
    let mut seps: Vec<(usize, usize)> = [", and ", " and ", ", "]
        .iter()
        .flat_map(|sep| list.match_indices(sep).map(|(i, m)| (i, i + m.len())))
        .collect();
    seps.sort_by_key(|&(start, end)| (start, std::cmp::Reverse(end)));
    let mut items: Vec<(usize, usize)> = Vec::new();
    let mut start = 0;
    for (sep_start, sep_end) in seps {
        if sep_start < start {
            continue;
        }
        items.push((start, sep_start));
        start = sep_end;
    }
    items.push((start, list.len()));

    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < items.len() {
        let last = (i + MAX_JOINED_ITEMS).min(items.len()) - 1;
        let joined = (i + 1..=last)
            .rev()
            .find_map(|j| existing_dir(&list[items[i].0..items[j].1]).map(|d| (d, j)));
        let (dir, next) = match joined {
            Some((dir, j)) => (Some(dir), j + 1),
            None => (scope_cwd(&list[items[i].0..items[i].1]), i + 1),
        };
        if let Some(dir) = dir
            && !out.contains(&dir)
        {
            out.push(dir);
        }
        i = next;
    }
    out
}

/// A `# Task Group` block of a v1 `MEMORY.md`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskGroup {
    pub title: String,
    pub scope_line: Option<String>,
    /// The directories of its `applies_to:` line ([`applies_to_cwds`]).
    pub cwds: Vec<String>,
    /// The whole block, header included.
    pub text: String,
}

/// Splits a v1 `MEMORY.md` into its task groups.
pub fn parse_task_groups(text: &str) -> Vec<TaskGroup> {
    let mut out: Vec<TaskGroup> = Vec::new();
    let mut cur: Option<(String, Vec<&str>)> = None;
    let finish = |cur: Option<(String, Vec<&str>)>, out: &mut Vec<TaskGroup>| {
        if let Some((title, lines)) = cur {
            let mut scope_line = None;
            let mut cwds = Vec::new();
            for l in &lines {
                let t = l.trim();
                if let Some(s) = t.strip_prefix("scope:") {
                    scope_line.get_or_insert_with(|| s.trim().to_string());
                }
                if let Some(a) = t.strip_prefix("applies_to:")
                    && cwds.is_empty()
                {
                    cwds = applies_to_cwds(a);
                }
            }
            out.push(TaskGroup {
                title,
                scope_line,
                cwds,
                text: lines.join("\n").trim_end().to_string() + "\n",
            });
        }
    };
    for line in text.lines() {
        if let Some(t) = line.strip_prefix("# Task Group:") {
            finish(cur.take(), &mut out);
            cur = Some((t.trim().to_string(), vec![line]));
        } else if let Some((_, lines)) = cur.as_mut() {
            lines.push(line);
        }
    }
    finish(cur, &mut out);
    out
}

/// The sections of a `memory_summary.md`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub profile: String,
    pub preferences: String,
    pub tips: String,
    /// `(scope heading, lines)` from `## What's in Memory`, recent and older alike.
    pub routes: Vec<(String, String)>,
}

/// Splits `text` at lines starting with `marker` (e.g. `"## "`), returning
/// `(heading, body)` pairs; text before the first heading is dropped.
fn sections<'a>(text: &'a str, marker: &str) -> Vec<(&'a str, String)> {
    let mut out: Vec<(&str, String)> = Vec::new();
    for line in text.lines() {
        if let Some(h) = line.strip_prefix(marker) {
            out.push((h.trim(), String::new()));
        } else if let Some((_, body)) = out.last_mut() {
            body.push_str(line);
            body.push('\n');
        }
    }
    out
}

pub fn parse_summary(text: &str) -> Summary {
    let mut s = Summary::default();
    for (h, body) in sections(text, "## ") {
        match h {
            "User Profile" => s.profile = body.trim().to_string(),
            "User preferences" => s.preferences = body.trim().to_string(),
            "General Tips" => s.tips = body.trim().to_string(),
            "What's in Memory" => {
                for (scope, body) in sections(&body, "### ") {
                    if scope == "Older Memory Topics" {
                        for (scope, body) in sections(&body, "#### ") {
                            if !body.trim().is_empty() {
                                s.routes.push((scope.to_string(), body.trim().to_string()));
                            }
                        }
                    } else if !body.trim().is_empty() {
                        s.routes.push((scope.to_string(), body.trim().to_string()));
                    }
                }
            }
            _ => {}
        }
    }
    s
}

/// The header of a rollout summary file and its body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RolloutSummary {
    pub thread_id: Option<String>,
    pub updated_at: Option<String>,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub body: String,
}

pub fn parse_rollout_summary(text: &str) -> RolloutSummary {
    let mut r = RolloutSummary::default();
    let mut lines = text.lines();
    let mut consumed = 0;
    for line in lines.by_ref() {
        consumed += line.len() + 1;
        if line.trim().is_empty() {
            break;
        }
        let Some((k, v)) = line.split_once(':') else {
            continue;
        };
        let v = v.trim().to_string();
        match k.trim() {
            "thread_id" => r.thread_id = Some(v),
            "updated_at" => r.updated_at = Some(v),
            "cwd" => r.cwd = Some(v),
            "git_branch" => r.git_branch = Some(v),
            _ => {}
        }
    }
    r.body = text
        .get(consumed.min(text.len())..)
        .unwrap_or("")
        .trim()
        .to_string();
    r
}

/// Caps a body (topic files are read on demand, but not without bound).
const MAX_BODY: usize = 16_000;

fn capped(body: &str, source: &str) -> String {
    if body.len() <= MAX_BODY {
        return body.to_string();
    }
    let mut cut = MAX_BODY;
    while !body.is_char_boundary(cut) {
        cut -= 1;
    }
    format!(
        "{}\n\n[… truncated; the full text is in the Codex file `{source}`]",
        &body[..cut]
    )
}

/// The redacted text of the regular file `path` (see the module docs).
fn read_text(path: &Path, problems: &mut Vec<Problem>) -> Option<String> {
    match fs::symlink_metadata(path) {
        Ok(m) if m.file_type().is_symlink() => {
            problems.push(Problem::new(path, None, "symlink skipped"));
            return None;
        }
        Ok(m) if m.is_file() => {}
        _ => return None,
    }
    match fs::read(path) {
        Ok(b) => Some(cairn_redact::redact(&String::from_utf8_lossy(&b)).into_owned()),
        Err(e) => {
            problems.push(Problem::new(path, None, format!("cannot read: {e}")));
            None
        }
    }
}

fn md_files(dir: &Path, problems: &mut Vec<Problem>) -> Vec<PathBuf> {
    if fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        problems.push(Problem::new(dir, None, "symlinked directory skipped"));
        return Vec::new();
    }
    let Ok(rd) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<PathBuf> = rd
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    out.sort();
    out
}

/// A file cairn wrote into a Codex memory workspace (`[codex] write_workspace`): its path and
/// the xxh3 hash (16 hex digits) of what was written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WrittenByCairn {
    pub path: PathBuf,
    pub hash: String,
}

/// Whether `path` holds exactly what cairn wrote there, and nothing of Codex's: cairn's own
/// rendering of its memories, which must not come back as Codex's. (A file of Codex's that
/// cairn added its blocks to is read, without those blocks.)
fn is_cairns(path: &Path, own: &[WrittenByCairn]) -> bool {
    own.iter().any(|w| {
        w.path == path
            && fs::read(path).is_ok_and(|b| {
                format!("{:016x}", xxhash_rust::xxh3::xxh3_64(&b)) == w.hash
                    && !cairn_workspace::merge::has_cairn_blocks(&String::from_utf8_lossy(&b))
            })
    })
}

/// What of a workspace file (`memory_summary.md`, `MEMORY.md`) is Codex's: nothing when it
/// holds exactly what cairn wrote there (listed in `mem.cairn_written`), else its text without
/// the blocks cairn added to it (cairn's memories, not Codex's).
fn read_codex_part(
    path: &Path,
    own: &[WrittenByCairn],
    rel: &dyn Fn(&Path) -> String,
    mem: &mut CodexMemory,
) -> Option<String> {
    if is_cairns(path, own) {
        mem.cairn_written.push(rel(path));
        return None;
    }
    read_text(path, &mut mem.problems).map(|t| cairn_workspace::merge::without_cairn_blocks(&t))
}

/// Reads the workspaces of `order` (the active pipeline first); an item id seen in an
/// earlier workspace is not read again from a later one. A file that holds exactly what
/// cairn wrote there (`own`) is not read: it is cairn's memory, not Codex's, and is listed
/// in [`CodexMemory::cairn_written`].
pub fn read_workspace(
    codex_home: &Path,
    order: &[MemoryVersion],
    own: &[WrittenByCairn],
) -> CodexMemory {
    let mut mem = CodexMemory::default();
    let mut seen: BTreeSet<(String, String)> = BTreeSet::new();
    for &v in order {
        let root = codex_home.join(v.dir_name());
        if fs::symlink_metadata(&root).is_ok_and(|m| m.file_type().is_symlink()) {
            mem.problems
                .push(Problem::new(&root, None, "symlinked memory root skipped"));
            continue;
        }
        if !root.is_dir() {
            continue;
        }
        mem.roots.push(root.clone());
        let rel = |p: &Path| {
            p.strip_prefix(codex_home)
                .unwrap_or(p)
                .display()
                .to_string()
        };
        let mut items = Vec::new();

        let summary_path = root.join("memory_summary.md");
        if let Some(text) = read_codex_part(&summary_path, own, &rel, &mut mem) {
            let src = rel(&summary_path);
            let s = parse_summary(&text);
            let globals = [
                (
                    ItemKind::Profile,
                    "profile",
                    "Codex: user profile",
                    s.profile,
                ),
                (
                    ItemKind::Preferences,
                    "preferences",
                    "Codex: user preferences",
                    s.preferences,
                ),
                (ItemKind::Tips, "tips", "Codex: general tips", s.tips),
            ];
            for (kind, id, title, body) in globals {
                if body.trim().is_empty() {
                    continue;
                }
                items.push(MemoryItem {
                    id: id.into(),
                    kind,
                    scope: Scope::Global,
                    title: title.into(),
                    description: format!(
                        "{title}, from Codex's memory summary: {}",
                        one_line(&body, 90)
                    ),
                    body: capped(&body, &src),
                    source: src.clone(),
                    provenance: String::new(),
                });
            }
            let mut by_scope: Vec<(String, String)> = Vec::new();
            for (scope, lines) in s.routes {
                let Some(cwd) = scope_cwd(&scope) else {
                    continue;
                };
                match by_scope.iter_mut().find(|(c, _)| *c == cwd) {
                    Some((_, b)) => {
                        b.push('\n');
                        b.push_str(&lines);
                    }
                    None => by_scope.push((cwd, lines)),
                }
            }
            for (cwd, lines) in by_scope {
                items.push(MemoryItem {
                    id: "routes".into(),
                    kind: ItemKind::Routes,
                    scope: Scope::Cwd(cwd.clone()),
                    title: format!("Codex: what's in Codex memory for {THIS_PROJECT}"),
                    description: format!(
                        "Where Codex's memory about {THIS_PROJECT} lives, e.g. {}",
                        first_bullet(&lines, 80)
                    ),
                    body: capped(&lines, &src),
                    source: src.clone(),
                    provenance: format!("scope {cwd}"),
                });
            }
        }

        let memory_md = root.join("MEMORY.md");
        if let Some(text) = read_codex_part(&memory_md, own, &rel, &mut mem) {
            let src = rel(&memory_md);
            let mut slugs: BTreeSet<String> = BTreeSet::new();
            for g in parse_task_groups(&text) {
                if g.cwds.is_empty() {
                    mem.problems.push(Problem::new(
                        &memory_md,
                        None,
                        format!(
                            "task group \"{}\" has no absolute `applies_to: cwd=`; not exported",
                            g.title
                        ),
                    ));
                    continue;
                }
                let applies_to = g
                    .cwds
                    .iter()
                    .map(|c| format!("cwd={c}"))
                    .collect::<Vec<_>>()
                    .join(" and ");
                // Every directory the group applies to gets it.
                for cwd in &g.cwds {
                    let mut id = slug(&g.title);
                    let mut n = 2;
                    while !slugs.insert(format!("{cwd}\0{id}")) {
                        id = format!("{}_{n}", slug(&g.title));
                        n += 1;
                    }
                    items.push(MemoryItem {
                        id: format!("task:{id}"),
                        kind: ItemKind::TaskGroup,
                        scope: Scope::Cwd(cwd.clone()),
                        title: format!("Codex: {}", g.title),
                        description: truncate_chars(
                            &g.scope_line
                                .clone()
                                .unwrap_or_else(|| format!("Codex task group {}", g.title)),
                            150,
                        ),
                        body: capped(&g.text, &src),
                        source: src.clone(),
                        provenance: format!("task group \"{}\", applies_to {applies_to}", g.title),
                    });
                }
            }
        }

        for path in md_files(&root.join("rollout_summaries"), &mut mem.problems) {
            if is_cairns(&path, own) {
                mem.cairn_written.push(rel(&path));
                continue;
            }
            let Some(text) = read_text(&path, &mut mem.problems) else {
                continue;
            };
            let src = rel(&path);
            let r = parse_rollout_summary(&text);
            let Some(cwd) = r.cwd.as_deref().and_then(scope_cwd) else {
                continue;
            };
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            let mut prov = vec![format!("cwd={cwd}")];
            if let Some(u) = &r.updated_at {
                prov.push(format!("updated_at={u}"));
            }
            if let Some(t) = &r.thread_id {
                prov.push(format!("thread_id={t}"));
            }
            if let Some(b) = &r.git_branch {
                prov.push(format!("git_branch={b}"));
            }
            let headline = one_line(&r.body, 120);
            items.push(MemoryItem {
                id: format!("rollout:{stem}"),
                kind: ItemKind::Rollout,
                scope: Scope::Cwd(cwd),
                title: format!("Codex session: {}", one_line(&r.body, 60)),
                description: if headline.is_empty() {
                    format!("Codex rollout summary {stem}")
                } else {
                    headline
                },
                body: capped(&r.body, &src),
                source: src,
                provenance: prov.join(", "),
            });
        }

        let notes = root.join("extensions").join("ad_hoc").join("notes");
        for path in md_files(&notes, &mut mem.problems) {
            let Some(text) = read_text(&path, &mut mem.problems) else {
                continue;
            };
            let stem = path
                .file_stem()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default();
            // Codex names a note `<YYYY-MM-DDTHH-MM-SS>-<slug>.md`; a note named otherwise
            // (written by hand) is all slug, and its date is the file's.
            let stamped = stem.len() > 20
                && stem.as_bytes()[19] == b'-'
                && stem[..19].bytes().enumerate().all(|(i, b)| match i {
                    4 | 7 | 13 | 16 => b == b'-',
                    10 => b == b'T',
                    _ => b.is_ascii_digit(),
                });
            let (name, written) = if stamped {
                (&stem[20..], stem[..19].to_owned())
            } else {
                let modified = std::fs::metadata(&path)
                    .and_then(|m| m.modified())
                    .ok()
                    .and_then(|t| jiff::Timestamp::try_from(t).ok())
                    .map(|t| t.strftime("%Y-%m-%dT%H-%M-%S").to_string())
                    .unwrap_or_default();
                (stem.as_str(), modified)
            };
            let src = rel(&path);
            items.push(MemoryItem {
                id: format!("note:{stem}"),
                kind: ItemKind::Note,
                scope: Scope::Global,
                title: format!("Codex note: {}", name.replace(['-', '_'], " ")),
                description: format!("Asked to be remembered in Codex: {}", one_line(&text, 100)),
                body: capped(text.trim(), &src),
                source: src,
                provenance: if written.is_empty() {
                    "ad-hoc note".to_owned()
                } else {
                    format!("ad-hoc note written {written}")
                },
            });
        }

        for it in items {
            let scope = match &it.scope {
                Scope::Global => String::new(),
                Scope::Cwd(c) => c.clone(),
            };
            if seen.insert((scope, it.id.clone())) {
                mem.items.push(it);
            }
        }
    }
    mem
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_never_splits_a_redaction_marker() {
        let s = "the release token [REDACTED:github-token] lives in the vault";
        assert_eq!(truncate_chars(s, 24), "the release token…");
        assert_eq!(
            truncate_chars(s, 42),
            "the release token [REDACTED:github-token]…"
        );
        assert_eq!(truncate_chars(s, 41), "the release token…");
    }

    #[test]
    fn task_groups_and_their_cwd() {
        let text = "# Task Group: app-a build\n\nscope: building app-a\napplies_to: cwd=/w/app-a; reuse_rule=safe\n\n## Task 1: x\n\n# Task Group: misc family\nscope: s\napplies_to: cwd=any repo; reuse_rule=r\n";
        let g = parse_task_groups(text);
        assert_eq!(g.len(), 2);
        assert_eq!(g[0].title, "app-a build");
        assert_eq!(g[0].cwds, ["/w/app-a"]);
        assert_eq!(g[0].scope_line.as_deref(), Some("building app-a"));
        assert!(g[0].text.starts_with("# Task Group: app-a build\n"));
        assert!(g[1].cwds.is_empty());
    }

    #[test]
    fn summary_sections_and_routes() {
        let text = "v1\n\n## User Profile\nA dev.\n\n## User preferences\n- use pnpm\n\n## General Tips\n- tip\n\n## What's in Memory\n\n### /w/app-a\n\n#### 2026-11-20\n\n- rollout_summaries/x.md — fixed build; thread_id=1\n\n### Older Memory Topics\n\n#### /w/app-b\n\n- deploy: k8s, helm\n  - desc: how app-b deploys\n";
        let s = parse_summary(text);
        assert_eq!(s.profile, "A dev.");
        assert_eq!(s.preferences, "- use pnpm");
        assert_eq!(s.routes.len(), 2);
        assert_eq!(s.routes[0].0, "/w/app-a");
        assert!(s.routes[0].1.contains("#### 2026-11-20"));
        assert_eq!(s.routes[1].0, "/w/app-b");
    }

    #[test]
    fn rollout_header() {
        let r = parse_rollout_summary(
            "thread_id: t1\nupdated_at: 2026-11-20T10:00:00Z\nrollout_path: /r.jsonl\ncwd: /w/a\n\n# Fixed it\nbody\n",
        );
        assert_eq!(r.cwd.as_deref(), Some("/w/a"));
        assert_eq!(r.thread_id.as_deref(), Some("t1"));
        assert_eq!(r.body, "# Fixed it\nbody");
    }

    #[test]
    fn slugs_and_scopes() {
        assert_eq!(slug("App-A: build & test!"), "app_a_build_test");
        assert_eq!(slug("***"), "memory");
        // Not a directory here: named whole, spaces kept, the note in parentheses dropped.
        assert_eq!(scope_cwd("`/w/app a (main)`").as_deref(), Some("/w/app a"));
        assert_eq!(scope_cwd("cwd=/w/x/"), Some("/w/x".into()));
        assert_eq!(scope_cwd("web shop"), None);
        assert_eq!(scope_cwd("/w/a, /w/b").as_deref(), Some("/w/a"));
    }

    #[test]
    fn applies_to_lists() {
        let cwds = |s: &str| applies_to_cwds(s);
        assert_eq!(
            cwds(" cwd=/a/projB and cwd=/a/projC; reuse_rule=verify per repo"),
            ["/a/projB", "/a/projC"]
        );
        assert_eq!(
            cwds("cwd=/x/other and /x/repo/.claude/worktrees/feature-a; reuse_rule=x"),
            ["/x/other", "/x/repo/.claude/worktrees/feature-a"]
        );
        assert_eq!(
            cwds("cwd=/Users/me/20260407 My Project; reuse_rule=a; b"),
            ["/Users/me/20260407 My Project"]
        );
        assert_eq!(cwds("cwd=/a, /b, and cwd=`/c/`"), ["/a", "/b", "/c"]);
        assert_eq!(cwds("cwd=/x/repo and its worktrees; r"), ["/x/repo"]);
        assert_eq!(cwds("cwd=/a and /a/; r"), ["/a"]);
        assert!(cwds("cwd=any repo; reuse_rule=r").is_empty());
        assert!(cwds("workflow scope /a").is_empty());
    }

    #[test]
    fn an_existing_directory_keeps_a_separator_in_its_name() {
        let t = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(t.path()).unwrap();
        let tom = base.join("Tom and Jerry");
        fs::create_dir_all(&tom).unwrap();
        fs::create_dir_all(base.join("Tom")).unwrap();
        let b = base.display();
        assert_eq!(
            applies_to_cwds(&format!("cwd={b}/Tom and Jerry and {b}/x; r")),
            [tom.display().to_string(), format!("{b}/x")]
        );
        assert_eq!(
            scope_cwd(&format!("{b}/Tom and Jerry (main)")),
            Some(tom.display().to_string())
        );
    }
}
