//! Codex → Claude Code: Codex's memory for a project becomes Claude Code topic files in that
//! project's auto-memory dir, with index lines in its `MEMORY.md`.
//!
//! The project key is derived from the canonical git root of each Codex scope exactly as
//! Claude Code derives its auto-memory key. Codex keeps its ad-hoc notes for the user as a
//! whole, but a note written in a session in one project ("black line length is 100 here") is
//! that project's: the caller names those ([`ExportRequest::note_scopes`], from cairn's store)
//! and each goes into its project's memory only, like every other project-scoped item. Each file cairn writes carries frontmatter
//! `source: codex`, a `cairn_id` and a `cairn_hash` of the content it wrote: a re-run finds
//! its own files by id, rewrites them only when the content changed, and leaves alone any file
//! whose hash no longer matches (someone edited it) and every file without those marks.
//! A file cairn wrote that is gone (the user, or Claude asked to forget, deleted it) is not
//! written again while its Codex source is unchanged: which files cairn wrote, and from which
//! source, is kept in cairn's data dir ([`crate::export_state`]), and the report lists them.
//!
//! cairn adds its index lines to `MEMORY.md` between two HTML-comment markers, but Claude
//! Code's loader strips comments, so its model never sees them and may rewrite the index
//! without them. cairn's lines are therefore recognised by what they link to (a file carrying
//! cairn's mark, or a missing file cairn wrote or with exactly its file-name shape), wherever
//! they are: updated in place, removed when their topic is gone, never added twice; every other
//! line is kept as it is. Each line is at most [`INDEX_LINE_MAX_CHARS`] long (the title and
//! description are cut, never the link), and the whole file is kept within 200 lines and 25,000
//! characters (Claude Code silently truncates past that): when one line per topic does not fit,
//! a single line points to an index topic file; when not even that fits, no line is added and
//! the report says so. In a memory dir every project shares (`autoMemoryDirectory`), each
//! project-scoped entry names its project. Every text written passes through
//! `cairn_redact::redact`, always before it is cut (a secret cut short is no longer
//! recognised). Temp files a killed export left (exactly cairn's temp-name shape, older than
//! five minutes) are removed first.

use std::collections::{BTreeMap, BTreeSet};
use std::fs::{self, File, OpenOptions, TryLockError};
use std::path::{Path, PathBuf};

use cairn_transcript::{ClaudeRoot, Problem, claude_project_key};
use serde::Serialize;
use xxhash_rust::xxh3::xxh3_64;

use crate::codex_config::{MemoryVersion, read_config};
use crate::codex_source::{self, ItemKind, MemoryItem, Scope, THIS_PROJECT, slug, truncate_chars};
use crate::error::{InteropError, Result};
use crate::export_state::{ExportState, WrittenTopic, WrittenTopics, state_path_beside};
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
    /// A cairn-owned lock file that serialises exports, in cairn's data dir. The export's
    /// state (which topic files it wrote where, [`crate::export_state`]) is kept beside it;
    /// without a lock file nothing is remembered, and a deleted topic file is written again.
    pub lock_path: Option<PathBuf>,
    /// The files cairn wrote into Codex's memory workspace (`[codex] write_workspace`), as
    /// it recorded them: their content is cairn's own memory, so an unchanged one is not
    /// exported back into Claude Code as Codex's.
    pub written_by_cairn: Vec<crate::codex_source::WrittenByCairn>,
    /// The ad-hoc notes that belong to one project (written in a Codex session there): each
    /// goes into that project's memory only, never into every project's as a global note.
    pub note_scopes: Vec<crate::codex_source::NoteScope>,
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
    /// Files cairn wrote here that were deleted since (by the user, or by Claude asked to
    /// forget) while their Codex source is unchanged: left deleted, not written again.
    pub left_deleted: Vec<String>,
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
    /// Workspace files left out because they hold exactly what cairn wrote there (its own
    /// memories, which would otherwise come back as Codex's).
    pub cairn_written: Vec<String>,
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
    /// What its `MEMORY.md` line says after the link.
    index_description: String,
    content: String,
    /// The hash of the Codex source it is made from ([`source_hash`]).
    source_hash: String,
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

/// True when `file` has the shape of a name cairn gives the topic files it exports
/// ([`base_name`]: `codex_user_profile`, `codex_feedback_…`, `codex_project_…`,
/// `codex_reference_…`, then an optional `_<suffix>`, `.md`; lowercase ASCII, digits, `_`).
fn has_export_file_name(file: &str) -> bool {
    let Some(stem) = file.strip_suffix(".md") else {
        return false;
    };
    if !stem
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_')
    {
        return false;
    }
    const WHOLE: [&str; 5] = [
        "codex_user_profile",
        "codex_feedback_preferences",
        "codex_feedback_general_tips",
        "codex_reference_routes",
        "codex_reference_index",
    ];
    const PREFIX: [&str; 2] = ["codex_feedback_note_", "codex_project_"];
    WHOLE
        .iter()
        .any(|w| stem == *w || stem.strip_prefix(w).is_some_and(|r| r.starts_with('_')))
        || PREFIX
            .iter()
            .any(|p| stem.strip_prefix(p).is_some_and(|r| !r.is_empty()))
}

/// Which file names of one Claude Code memory dir are topic files cairn exported from Codex,
/// to recognise cairn's index lines wherever they are in `MEMORY.md`: Claude Code's loader
/// strips HTML comments, so its model never sees cairn's markers, and when it rewrites the
/// index it keeps the lines without them.
#[derive(Debug, Default)]
pub(crate) struct ExportedFiles {
    /// Files carrying cairn's mark (`source: codex` and a `cairn_id: codex:…`), edited or not.
    marked: BTreeSet<String>,
    /// Every name in the dir.
    present: BTreeSet<String>,
    /// Names cairn wrote or is about to write there (its state, this run's plan).
    known: BTreeSet<String>,
}

impl ExportedFiles {
    /// The exported files of `dir` as it is now.
    pub(crate) fn scan(dir: &Path) -> ExportedFiles {
        ExportedFiles::from_existing(&scan_dir(dir))
    }

    fn from_existing(existing: &[Existing]) -> ExportedFiles {
        ExportedFiles {
            marked: existing
                .iter()
                .filter(|e| e.id.is_some())
                .map(|e| e.name.clone())
                .collect(),
            present: existing.iter().map(|e| e.name.clone()).collect(),
            known: BTreeSet::new(),
        }
    }

    /// True for a file carrying cairn's mark, and for a missing file that cairn wrote, is
    /// about to write, or whose name has exactly cairn's shape: a line to it is cairn's own.
    /// A file of the user's (present, without the mark) never is, whatever its name.
    pub(crate) fn contains(&self, file: &str) -> bool {
        self.marked.contains(file)
            || (!self.present.contains(file)
                && (self.known.contains(file) || has_export_file_name(file)))
    }
}

/// The file a `MEMORY.md` list item links to first (`- [Title](file.md) — …`, also with `*`,
/// `+` or `1.` bullets, `./file.md`, `<file.md>`, a link title or a `#fragment`), when it is
/// a file at the top of the memory dir. `None` for any other line.
fn index_link(line: &str) -> Option<&str> {
    let item = line.trim_start();
    let rest = ["- ", "* ", "+ "]
        .iter()
        .find_map(|b| item.strip_prefix(b))
        .or_else(|| {
            let digits = item.bytes().take_while(u8::is_ascii_digit).count();
            let after = item.get(digits..)?;
            (digits > 0).then_some(())?;
            after
                .strip_prefix(". ")
                .or_else(|| after.strip_prefix(") "))
        })?;
    let open = rest.find("](")?;
    let inside = &rest[open + 2..];
    let inside = &inside[..inside.find(')')?];
    let target = inside.trim();
    let target = match target.strip_prefix('<') {
        Some(t) => t.split('>').next()?,
        None => target.split_whitespace().next()?,
    };
    let target = target.strip_prefix("./").unwrap_or(target);
    let target = target.split('#').next()?;
    (!target.is_empty() && !target.contains('/') && !target.contains('\\')).then_some(target)
}

/// One line of a `MEMORY.md` as [`rewrite_index`] sees it.
enum IndexLine<'a> {
    /// A line that is not cairn's: kept as it is.
    Other(&'a str),
    /// A list item linking to one of cairn's exported files.
    Exported {
        file: &'a str,
        indent: &'a str,
        inside_block: bool,
    },
    /// Where cairn's block began (its first begin marker).
    BlockStart,
    /// A marker or a blank line inside cairn's block: dropped.
    Dropped,
}

/// `MEMORY.md` with cairn's index lines set to `wanted` (file name, line), and every other
/// line kept as it is. A line of cairn's is one linking to a file `is_exported` recognises,
/// wherever it is: outside cairn's block (Claude Code rewrote the index without the markers
/// it never sees) the first line for a wanted file is updated where it is, and every other
/// one (a repeat, a file no longer wanted) is removed. The wanted lines found nowhere outside
/// go into cairn's marked block, where the old block began, else at the end after a blank line;
/// the block is left out when it would be empty.
fn rewrite_index(
    existing: &str,
    is_exported: &dyn Fn(&str) -> bool,
    wanted: &[(String, String)],
) -> String {
    let mut lines = Vec::new();
    let mut inside_block = false;
    let mut had_block = false;
    for line in existing.split_inclusive('\n') {
        let trimmed = line.trim_start();
        if trimmed.starts_with(BEGIN_PREFIX) {
            lines.push(if had_block {
                IndexLine::Dropped
            } else {
                IndexLine::BlockStart
            });
            had_block = true;
            inside_block = true;
        } else if trimmed.starts_with(END) {
            lines.push(IndexLine::Dropped);
            inside_block = false;
        } else if let Some(file) = index_link(line).filter(|f| is_exported(f)) {
            lines.push(IndexLine::Exported {
                file,
                indent: &line[..line.len() - trimmed.len()],
                inside_block,
            });
        } else if inside_block && line.trim().is_empty() {
            lines.push(IndexLine::Dropped);
        } else {
            lines.push(IndexLine::Other(line));
        }
    }

    let wanted_line: BTreeMap<&str, &str> = wanted
        .iter()
        .map(|(file, line)| (file.as_str(), line.as_str()))
        .collect();
    let in_place: BTreeSet<&str> = lines
        .iter()
        .filter_map(|l| match l {
            IndexLine::Exported {
                file,
                inside_block: false,
                ..
            } if wanted_line.contains_key(file) => Some(*file),
            _ => None,
        })
        .collect();
    let block_lines: Vec<&str> = wanted
        .iter()
        .filter(|(file, _)| !in_place.contains(file.as_str()))
        .map(|(_, line)| line.as_str())
        .collect();
    let block =
        (!block_lines.is_empty()).then(|| format!("{BEGIN}\n{}\n{END}\n", block_lines.join("\n")));

    let mut out = String::with_capacity(existing.len());
    let mut block_placed = false;
    let mut updated: BTreeSet<&str> = BTreeSet::new();
    for l in &lines {
        match l {
            IndexLine::Other(text) => out.push_str(text),
            IndexLine::BlockStart => {
                if let Some(b) = &block {
                    out.push_str(b);
                    block_placed = true;
                }
            }
            IndexLine::Exported {
                file,
                indent,
                inside_block: false,
            } => {
                if let Some(line) = wanted_line.get(file)
                    && updated.insert(file)
                {
                    out.push_str(indent);
                    out.push_str(line);
                    out.push('\n');
                }
            }
            IndexLine::Exported { .. } | IndexLine::Dropped => {}
        }
    }
    match block {
        Some(b) if !block_placed => {
            if out.trim().is_empty() {
                b
            } else {
                format!("{}\n\n{b}", out.trim_end())
            }
        }
        // The block is gone: so are the blank lines cairn put before it at the end.
        None if had_block => tidy_end(&out),
        _ => out,
    }
}

/// `text` with its trailing blank lines and spaces dropped, ending in one newline (empty stays
/// empty).
fn tidy_end(text: &str) -> String {
    let t = text.trim_end();
    if t.is_empty() {
        String::new()
    } else {
        format!("{t}\n")
    }
}

/// `MEMORY.md` without cairn's index lines (marked or not; `is_exported` says which files are
/// cairn's) and its markers, and without the blank lines left at its end. Unchanged when it
/// has none of them.
pub(crate) fn without_exported_lines(text: &str, is_exported: &dyn Fn(&str) -> bool) -> String {
    let rest = rewrite_index(text, is_exported, &[]);
    if rest == text {
        return rest;
    }
    tidy_end(&rest)
}

/// The files cairn exported that `text` (a `MEMORY.md`) has index lines for, and whether it
/// holds cairn's markers: what [`without_exported_lines`] leaves out of it.
pub(crate) fn exported_lines_in(text: &str, exported: &ExportedFiles) -> (BTreeSet<String>, bool) {
    let files = text
        .lines()
        .filter_map(index_link)
        .filter(|f| exported.contains(f))
        .map(str::to_owned)
        .collect();
    let markers = text.lines().any(|l| {
        let t = l.trim_start();
        t.starts_with(BEGIN_PREFIX) || t.starts_with(END)
    });
    (files, markers)
}

/// Claude Code's memory prompt asks for index entries of "one line, under ~150 characters"
/// (its loader warns past ~200): no line cairn writes is longer, in UTF-16 units as Claude
/// Code counts. The link is never cut; the title and the description are.
pub const INDEX_LINE_MAX_CHARS: usize = 150;

/// The most of an index line's room its title takes when the description needs the rest.
const INDEX_TITLE_MAX_CHARS: usize = 60;

fn utf16_len(text: &str) -> usize {
    text.encode_utf16().count()
}

/// `text` within `max` UTF-16 units: whole when it fits, else cut and ended with `…`.
fn cut_utf16(text: &str, max: usize) -> String {
    if utf16_len(text) <= max {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        if used + c.len_utf16() > max.saturating_sub(1) {
            break;
        }
        used += c.len_utf16();
        out.push(c);
    }
    let mut out = out.trim_end().to_string();
    out.push('…');
    out
}

/// One `MEMORY.md` line (`- [Title](file.md) — description`), at most
/// [`INDEX_LINE_MAX_CHARS`] long; the texts are redacted before they are cut, and put on one
/// line.
fn index_line(name: &str, file: &str, description: &str) -> String {
    let one_line = |text: &str| -> String {
        cairn_redact::redact(text)
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect()
    };
    let name = one_line(name).replace(['[', ']'], "");
    let name = name.trim();
    let description = one_line(description);
    let description = description.trim();
    let frame = utf16_len("- [](") + utf16_len(file) + utf16_len(") — ");
    let room = INDEX_LINE_MAX_CHARS.saturating_sub(frame);
    let name_room = INDEX_TITLE_MAX_CHARS
        .min(room.saturating_sub(utf16_len(description)).max(room / 2))
        .max(1);
    let name = cut_utf16(name, name_room);
    let description = cut_utf16(description, room.saturating_sub(utf16_len(&name)));
    format!("- [{name}]({file}) — {description}")
}

fn fits(text: &str) -> bool {
    let t = text.trim();
    t.split('\n').count() <= INDEX_MAX_LINES && t.encode_utf16().count() <= INDEX_MAX_CHARS
}

fn take_lock(path: &Path) -> Result<File> {
    if let Some(parent) = path.parent() {
        fsutil::create_dir(parent, parent, fsutil::NewMode::Private)?;
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

/// A project an item belongs to, in a memory dir several projects share.
#[derive(Debug, Clone)]
struct SharedProject {
    /// Its Claude Code project key.
    key: String,
    /// How titles and descriptions name it ([`project_labels`]).
    label: String,
}

/// One Codex memory item to export into a memory dir.
#[derive(Debug, Clone)]
struct TargetItem {
    item: MemoryItem,
    /// Set for a project-scoped item in a shared (`autoMemoryDirectory`) dir.
    shared_project: Option<SharedProject>,
    /// The hash of what Codex holds for it, taken before any renaming: a topic file deleted
    /// from Claude Code's memory is written again only when this changes.
    source_hash: String,
    /// The description its `MEMORY.md` line shows: the item's own, except that one whose
    /// title already names the project does not name it twice in a short line.
    index_description: String,
}

impl TargetItem {
    fn new(item: MemoryItem, shared_project: Option<SharedProject>) -> TargetItem {
        let source_hash = source_hash(&item);
        let (item, index_description) = match &shared_project {
            Some(p) => with_project_named(item, &p.label),
            None => {
                let description = item.description.clone();
                (item, description)
            }
        };
        TargetItem {
            item,
            shared_project,
            source_hash,
            index_description,
        }
    }

    /// The id within its memory dir: in a shared dir, prefixed with the project's key so that
    /// two projects' items stay apart.
    fn id(&self) -> String {
        match &self.shared_project {
            Some(p) => format!("{}:{}", p.key, self.item.id),
            None => self.item.id.clone(),
        }
    }
}

/// The hash of an item's Codex source: its kind, the file it came from, its provenance and
/// its body (the title and description are made from these).
fn source_hash(item: &MemoryItem) -> String {
    let mut text = String::new();
    for part in [
        item.kind.memory_type(),
        &item.source,
        &item.provenance,
        &item.body,
    ] {
        text.push_str(part);
        text.push('\0');
    }
    content_hash(&text)
}

/// `item` with its project named in its title and description, in place of "this project"
/// or added to them, and the description its index line shows: in a memory dir every project
/// shares, a session in one project must tell another project's notes from its own. The
/// topic file's description (what Claude Code reads to pick a memory) always names the
/// project; the index line's names it once, in the title.
fn with_project_named(mut item: MemoryItem, project: &str) -> (MemoryItem, String) {
    if item.title.contains(THIS_PROJECT) || item.description.contains(THIS_PROJECT) {
        item.title = item.title.replace(THIS_PROJECT, project);
        item.description = item.description.replace(THIS_PROJECT, project);
        let index_description = item.description.clone();
        return (item, index_description);
    }
    let index_description = item.description.clone();
    item.title = match item.title.split_once(": ") {
        Some((kind, rest)) => format!("{kind} ({project}): {rest}"),
        None => format!("{} ({project})", item.title),
    };
    item.description = format!("{project}: {}", item.description);
    (item, index_description)
}

/// How each project in a shared memory dir is named: its directory's name, or, when two
/// projects' directories have the same name, its path (`~/…` under the home).
fn project_labels(roots: &BTreeSet<PathBuf>, home: Option<&Path>) -> BTreeMap<PathBuf, String> {
    let base = |root: &Path| {
        root.file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| root.display().to_string())
    };
    let mut same_name: BTreeMap<String, usize> = BTreeMap::new();
    for root in roots {
        *same_name.entry(base(root)).or_default() += 1;
    }
    roots
        .iter()
        .map(|root| {
            let name = base(root);
            let label = if same_name.get(&name).copied().unwrap_or(0) > 1 {
                match home.and_then(|h| root.strip_prefix(h).ok()) {
                    Some(rel) => format!("~/{}", rel.display()),
                    None => root.display().to_string(),
                }
            } else {
                name
            };
            (root.clone(), label)
        })
        .collect()
}

/// The 6-hex-digit file-name suffix of a project in a shared memory dir.
fn shared_suffix(key: &str) -> String {
    format!("_{:06x}", xxh3_64(key.as_bytes()) & 0xff_ffff)
}

struct Target {
    key: String,
    root: PathBuf,
    memory_dir: PathBuf,
    items: Vec<TargetItem>,
}

fn empty_entry(cwd: Option<String>, status: ExportStatus) -> ExportTarget {
    ExportTarget {
        cwd,
        key: None,
        memory_dir: None,
        status,
        files: 0,
        written: 0,
        removed: 0,
        kept: Vec::new(),
        left_deleted: Vec::new(),
        index: "none",
        reason: None,
        cleaned: Vec::new(),
        operations: Vec::new(),
    }
}

/// Runs (or dry-runs) the export.
pub fn run(req: &ExportRequest) -> Result<ExportReport> {
    let _lock = match (&req.lock_path, req.dry_run) {
        (Some(p), false) => Some(take_lock(p)?),
        _ => None,
    };
    let mut warnings = Vec::new();
    let state_path = req.lock_path.as_deref().map(state_path_beside);
    let mut state = match &state_path {
        Some(path) => {
            let (state, warning) = ExportState::load(path)?;
            warnings.extend(warning);
            state
        }
        None => ExportState::default(),
    };
    let state_as_loaded = state.clone();
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
    let mut mem = codex_source::read_workspace(&req.codex_home, &order, &req.written_by_cairn);
    codex_source::scope_notes(&mut mem.items, &req.note_scopes);
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
        cairn_written: mem.cairn_written.clone(),
    };

    // Where each scoped item goes: (memory dir, project key, canonical root, item).
    let mut placed: Vec<(PathBuf, String, PathBuf, MemoryItem)> = Vec::new();
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
            Ok((key, dir)) => placed.push((dir, key, root, item.clone())),
            Err(reason) => {
                unresolved.entry(cwd.clone()).or_insert(reason);
            }
        }
    }
    // A shared (autoMemoryDirectory) dir holds several projects: each item names its own.
    let labels = if over.is_some() {
        let roots = placed.iter().map(|(_, _, root, _)| root.clone()).collect();
        project_labels(&roots, req.home.as_deref())
    } else {
        BTreeMap::new()
    };
    let mut targets: BTreeMap<PathBuf, Target> = BTreeMap::new();
    for (dir, key, root, item) in placed {
        let shared_project = labels.get(&root).map(|label| SharedProject {
            key: claude_project_key(&root.to_string_lossy()),
            label: label.clone(),
        });
        let t = targets.entry(dir.clone()).or_insert_with(|| Target {
            key,
            root: root.clone(),
            memory_dir: dir,
            items: Vec::new(),
        });
        t.items.push(TargetItem::new(item, shared_project));
    }
    for (cwd, reason) in unresolved {
        let mut entry = empty_entry(Some(cwd), ExportStatus::Skipped);
        entry.reason = Some(reason);
        report.projects.push(entry);
    }
    if let Some(w) = &wanted {
        for root in w {
            if !targets.values().any(|t| &t.root == root) {
                let mut entry =
                    empty_entry(Some(root.display().to_string()), ExportStatus::Skipped);
                entry.reason = Some("no Codex memory is scoped to this project".into());
                report.projects.push(entry);
            }
        }
    }

    for (_, mut t) in targets {
        t.items.extend(
            globals
                .iter()
                .map(|item| TargetItem::new(item.clone(), None)),
        );
        let mut entry = empty_entry(Some(t.root.display().to_string()), ExportStatus::Unchanged);
        entry.key = Some(t.key.clone());
        entry.memory_dir = Some(t.memory_dir.display().to_string());
        let base = if t.memory_dir.starts_with(&req.claude_root) {
            req.claude_root.clone()
        } else {
            t.memory_dir
                .parent()
                .map(Path::to_path_buf)
                .unwrap_or_default()
        };
        let mut written = state.written_in(&t.memory_dir);
        match sync_target(
            &base,
            &t,
            over.is_some(),
            req.dry_run,
            &mut entry,
            &mut written,
        ) {
            Ok(()) => {}
            Err(e) => {
                entry.status = ExportStatus::Failed;
                entry.reason = Some(e.to_string());
            }
        }
        if !req.dry_run {
            state.set_written_in(&t.memory_dir, written);
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
    if let Some(path) = &state_path
        && !req.dry_run
        && state != state_as_loaded
        && let Err(e) = state.save(path)
    {
        report.warnings.push(format!(
            "cannot record which topic files were exported ({e}): one deleted from Claude Code's memory before the next export may be written again"
        ));
    }
    Ok(report)
}

/// Writes one memory dir's topic files and index. `written` is what cairn wrote there before
/// (from its state); it is brought up to date as files are written, so a failure part way
/// keeps what was done.
fn sync_target(
    base: &Path,
    t: &Target,
    shared_dir: bool,
    dry_run: bool,
    entry: &mut ExportTarget,
    written: &mut WrittenTopics,
) -> Result<()> {
    fsutil::ensure_no_symlink(base, &t.memory_dir.join("MEMORY.md"))?;
    let existing = scan_dir(&t.memory_dir);
    let dir_suffix = if shared_dir {
        shared_suffix(&t.key)
    } else {
        String::new()
    };
    let id_scope = |it: &MemoryItem| match it.scope {
        Scope::Global => "global".to_string(),
        Scope::Cwd(_) => t.key.clone(),
    };
    let mut topics: Vec<Topic> = Vec::new();
    for ti in &t.items {
        let it = &ti.item;
        // The id is written into the file too: redacted like every other text.
        let id = cairn_redact::redact(&format!("codex:{}:{}", id_scope(it), ti.id())).into_owned();
        if topics.iter().any(|x| x.id == id) {
            continue;
        }
        let suffix = match &ti.shared_project {
            Some(p) => shared_suffix(&p.key),
            None => dir_suffix.clone(),
        };
        let (content, name, _) = render(it, &id);
        topics.push(Topic {
            id,
            base: base_name(it, &suffix),
            name,
            index_description: ti.index_description.clone(),
            content,
            source_hash: ti.source_hash.clone(),
        });
    }
    // Every id Codex still has: what cairn remembers about the others is forgotten.
    let mut current_ids: BTreeSet<String> = topics.iter().map(|tp| tp.id.clone()).collect();

    // A file cairn wrote that is gone while its source is unchanged was deleted by the user
    // or by Claude: it stays deleted.
    let present_ids: BTreeSet<&str> = existing.iter().filter_map(|e| e.id.as_deref()).collect();
    let deleted_since = |tp: &Topic| -> Option<String> {
        if present_ids.contains(tp.id.as_str()) {
            return None;
        }
        written
            .get(&tp.id)
            .filter(|w| w.source_hash == tp.source_hash)
            .map(|w| w.file.clone())
    };
    let mut left_deleted = Vec::new();
    topics.retain(|tp| match deleted_since(tp) {
        Some(file) => {
            left_deleted.push(file);
            false
        }
        None => true,
    });

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

    // The index lines, within Claude Code's limits, wherever cairn's lines now are.
    let index_path = t.memory_dir.join("MEMORY.md");
    let old_index = match fs::read(&index_path) {
        Ok(b) => Some(String::from_utf8_lossy(&b).into_owned()),
        Err(_) => None,
    };
    let old_text = old_index.clone().unwrap_or_default();
    let mut exported = ExportedFiles::from_existing(&existing);
    exported
        .known
        .extend(written.values().map(|w| w.file.clone()));
    let lines: Vec<(String, String)> = topics
        .iter()
        .map(|tp| {
            let file = names[&tp.id].clone();
            let line = index_line(&tp.name, &file, &tp.index_description);
            (file, line)
        })
        .collect();
    let index_id = format!("codex:{}:index", t.key);
    exported.known.extend(names.values().cloned());
    let mut new_text = rewrite_index(&old_text, &|f| exported.contains(f), &lines);
    entry.index = "lines";
    if !fits(&new_text) {
        let listing = lines
            .iter()
            .map(|(_, line)| line.as_str())
            .collect::<Vec<_>>()
            .join("\n");
        let item = MemoryItem {
            id: "index".into(),
            kind: ItemKind::Routes,
            scope: Scope::Cwd(t.root.display().to_string()),
            title: "Codex: index of imported Codex memory".into(),
            description: format!(
                "List of the {} topic files imported from Codex for {}",
                topics.len(),
                if shared_dir {
                    "the projects sharing this memory directory"
                } else {
                    THIS_PROJECT
                }
            ),
            body: listing,
            source: "memory workspace".into(),
            provenance: String::new(),
        };
        let (content, name, index_description) = render(&item, &index_id);
        let tp = Topic {
            id: index_id.clone(),
            base: format!("codex_reference_index{dir_suffix}"),
            name,
            index_description,
            content,
            source_hash: source_hash(&item),
        };
        current_ids.insert(index_id.clone());
        if let Some(file) = deleted_since(&tp) {
            left_deleted.push(file);
            new_text = rewrite_index(&old_text, &|f| exported.contains(f), &[]);
            entry.index = "none";
            entry.reason = Some(format!(
                "{} is over Claude Code's limit (200 lines / 25,000 characters) with one line per topic, and the index topic file that lists them was deleted: no index line added; the topic files are still there",
                index_path.display()
            ));
        } else {
            let name = assign(&tp, &mut taken);
            names.insert(index_id.clone(), name.clone());
            exported.known.insert(name.clone());
            let one = [(
                name.clone(),
                index_line(&tp.name, &name, &tp.index_description),
            )];
            topics.push(tp);
            new_text = rewrite_index(&old_text, &|f| exported.contains(f), &one);
            entry.index = "collapsed";
            if !fits(&new_text) {
                new_text = rewrite_index(&old_text, &|f| exported.contains(f), &[]);
                entry.index = "none";
                entry.reason = Some(format!(
                    "{} is already at Claude Code's limit (200 lines / 25,000 characters): no index line added; the topic files are still there",
                    index_path.display()
                ));
            }
        }
    }
    entry.files = topics.len();
    left_deleted.sort();
    entry.left_deleted = left_deleted;

    // Topic files first, the index last (it never points to a missing file).
    // Held by descriptor from `base` down: a link swapped in for a directory on the way is
    // refused, never written through.
    let dir = if dry_run {
        None
    } else {
        // Claude Code's memory dir: what cairn creates there gets the mode Claude Code
        // gives its own files, the umask's default.
        Some(fsutil::Dir::open_beneath(
            base,
            &t.memory_dir,
            true,
            fsutil::NewMode::Umask,
        )?)
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
    written.retain(|id, _| current_ids.contains(id));
    let mut changed = false;
    let wanted_ids: BTreeSet<&str> = topics.iter().map(|tp| tp.id.as_str()).collect();
    for tp in &topics {
        let name = &names[&tp.id];
        let path = t.memory_dir.join(name);
        let record = WrittenTopic {
            file: name.clone(),
            source_hash: tp.source_hash.clone(),
        };
        match existing
            .iter()
            .find(|e| e.id.as_deref() == Some(tp.id.as_str()))
        {
            // Edited since: what cairn wrote last is still what it remembers.
            Some(e) if e.edited => {
                entry.kept.push(e.name.clone());
                written.entry(tp.id.clone()).or_insert(record);
            }
            Some(e) if e.content == tp.content => {
                written.insert(tp.id.clone(), record);
            }
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
                written.insert(tp.id.clone(), record);
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
        written.remove(id);
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

    fn lines(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(f, l)| (f.to_string(), l.to_string()))
            .collect()
    }

    fn codex_named(file: &str) -> bool {
        file.starts_with("codex_")
    }

    #[test]
    fn block_is_replaced_in_place_and_user_lines_kept() {
        let user = "# Index\n- [A](a.md) — mine\n";
        let x = lines(&[("codex_x.md", "- [X](codex_x.md) — x")]);
        let y = lines(&[("codex_y.md", "- [Y](codex_y.md) — y")]);
        let one = rewrite_index(user, &codex_named, &x);
        assert!(one.starts_with(user.trim_end()));
        assert!(one.contains("- [X](codex_x.md) — x"));
        let two = rewrite_index(&one, &codex_named, &y);
        assert!(!two.contains("codex_x.md") && two.contains("codex_y.md"));
        assert!(two.starts_with("# Index\n- [A](a.md) — mine\n"));
        assert_eq!(rewrite_index(&two, &codex_named, &y), two);
        let gone = rewrite_index(&two, &codex_named, &[]);
        assert!(!gone.contains("cairn:codex"));
        assert_eq!(gone, user);
    }

    /// Claude Code's model rewrites `MEMORY.md` without cairn's markers (its loader strips
    /// comments): the next export must not add every line again.
    #[test]
    fn lines_without_markers_are_updated_where_they_are() {
        let rewritten = "- [A](a.md) — mine\n- [Old X](codex_x.md) — old\n- [Z](z.md) — mine\n  * [Old Y](./codex_y.md) — nested\n- [X again](codex_x.md) — dup\n";
        let wanted = lines(&[
            ("codex_x.md", "- [X](codex_x.md) — x"),
            ("codex_y.md", "- [Y](codex_y.md) — y"),
            ("codex_new.md", "- [N](codex_new.md) — n"),
        ]);
        let out = rewrite_index(rewritten, &codex_named, &wanted);
        assert_eq!(
            out,
            format!(
                "- [A](a.md) — mine\n- [X](codex_x.md) — x\n- [Z](z.md) — mine\n  - [Y](codex_y.md) — y\n\n{BEGIN}\n- [N](codex_new.md) — n\n{END}\n"
            )
        );
        assert_eq!(rewrite_index(&out, &codex_named, &wanted), out);
        // A file no longer wanted loses its line wherever it is; the user's lines stay.
        let fewer = rewrite_index(&out, &codex_named, &wanted[..1]);
        assert_eq!(
            fewer,
            "- [A](a.md) — mine\n- [X](codex_x.md) — x\n- [Z](z.md) — mine\n"
        );
    }

    /// A line the user (or Claude) put inside cairn's block is theirs: kept, after the block.
    #[test]
    fn a_users_line_inside_the_block_is_kept() {
        let x = lines(&[("codex_x.md", "- [X](codex_x.md) — x")]);
        let one = rewrite_index("- [A](a.md) — mine\n", &codex_named, &x);
        let edited = one.replace(
            "- [X](codex_x.md) — x\n",
            "- [X](codex_x.md) — x\n- [B](b.md) — added by Claude\n",
        );
        let two = rewrite_index(&edited, &codex_named, &x);
        assert!(two.contains("- [B](b.md) — added by Claude\n"), "{two}");
        assert_eq!(two.matches("codex_x.md").count(), 1, "{two}");
        assert_eq!(rewrite_index(&two, &codex_named, &x), two);
    }

    #[test]
    fn index_links_are_read_from_list_items_only() {
        assert_eq!(index_link("- [T](codex_a.md) — d"), Some("codex_a.md"));
        assert_eq!(
            index_link("  * [T](./codex_a.md#x) — d"),
            Some("codex_a.md")
        );
        assert_eq!(index_link("12. [T](<codex a.md>)"), Some("codex a.md"));
        assert_eq!(
            index_link("- **[T](codex_a.md \"t\")**"),
            Some("codex_a.md")
        );
        assert_eq!(index_link("See [T](codex_a.md) for more"), None);
        assert_eq!(index_link("- [T](sub/codex_a.md)"), None);
        assert_eq!(index_link("- plain text"), None);
    }

    #[test]
    fn exported_names_have_exactly_cairns_shape() {
        for name in [
            "codex_user_profile.md",
            "codex_user_profile_2.md",
            "codex_reference_routes_04a914_3.md",
            "codex_feedback_note_2026_11_21t09_30_00_use_pnpm.md",
            "codex_project_rollout_2026_11_20t10_15_02_ab3x_fix_flaky_vitest.md",
        ] {
            assert!(has_export_file_name(name), "{name}");
        }
        for name in [
            "codex_notes.md",
            "codex_user_profiles.md",
            "codex_project_.md",
            "Codex_user_profile.md",
            "codex_user_profile.txt",
            "user_role.md",
        ] {
            assert!(!has_export_file_name(name), "{name}");
        }
    }

    /// A rollout's index line could reach 215 characters; Claude Code asks for "under ~150"
    /// and warns past ~200.
    #[test]
    fn index_lines_are_cut_in_their_texts_never_in_their_link() {
        let file = "codex_project_rollout_2026_11_20t10_15_02_ab3x_fix_flaky_vitest_0a1b2c_12.md";
        let long =
            "Fixed the flaky vitest e2e run in app-a's CI by running e2e tests with --pool=forks "
                .repeat(3);
        let line = index_line(&format!("Codex session: {long}"), file, &long);
        assert!(
            utf16_len(&line) <= INDEX_LINE_MAX_CHARS,
            "{}: {line}",
            utf16_len(&line)
        );
        assert!(
            line.contains(&format!("]({file}) — Fixed the flaky")),
            "{line}"
        );
        assert!(line.starts_with("- [Codex session: Fixed"), "{line}");
        // Short texts are whole; one line, whatever the texts hold.
        assert_eq!(
            index_line("Codex: user profile", "codex_user_profile.md", "a\nb"),
            "- [Codex: user profile](codex_user_profile.md) — a b"
        );
        let wide = index_line(&"界".repeat(100), file, &"😀".repeat(100));
        assert!(utf16_len(&wide) <= INDEX_LINE_MAX_CHARS, "{wide}");
    }

    #[test]
    fn a_shared_dir_item_names_its_project() {
        let routes = MemoryItem {
            id: "routes".into(),
            kind: ItemKind::Routes,
            scope: Scope::Cwd("/w/app-a".into()),
            title: format!("Codex: what's in Codex memory for {THIS_PROJECT}"),
            description: format!("Where Codex's memory about {THIS_PROJECT} lives, e.g. x"),
            body: "b".into(),
            source: "memories_v2/memory_summary.md".into(),
            provenance: String::new(),
        };
        let (named, index_description) = with_project_named(routes.clone(), "app-a");
        assert_eq!(named.title, "Codex: what's in Codex memory for app-a");
        assert_eq!(
            named.description,
            "Where Codex's memory about app-a lives, e.g. x"
        );
        assert_eq!(index_description, named.description);
        assert_eq!(source_hash(&named), source_hash(&routes));
        let rollout = MemoryItem {
            kind: ItemKind::Rollout,
            title: "Codex session: Rolled the chart".into(),
            description: "Rolled the chart".into(),
            ..routes
        };
        let (named, index_description) = with_project_named(rollout, "app-b");
        assert_eq!(named.title, "Codex session (app-b): Rolled the chart");
        assert_eq!(named.description, "app-b: Rolled the chart");
        assert_eq!(index_description, "Rolled the chart");

        let roots: BTreeSet<PathBuf> = ["/h/work/app-a", "/h/work/api", "/h/old/api"]
            .iter()
            .map(PathBuf::from)
            .collect();
        let labels = project_labels(&roots, Some(Path::new("/h")));
        assert_eq!(labels[Path::new("/h/work/app-a")], "app-a");
        assert_eq!(labels[Path::new("/h/work/api")], "~/work/api");
        assert_eq!(labels[Path::new("/h/old/api")], "~/old/api");
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

    /// Titles were cut to 100/60 characters before redaction, so a token cut short
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
    fn the_codex_lines_are_stripped_from_an_index() {
        let user = "# Index\n- [A](a.md) — mine\n";
        let x = lines(&[("codex_x.md", "- [X](codex_x.md) — x")]);
        let with = rewrite_index(user, &codex_named, &x);
        assert_eq!(without_exported_lines(&with, &codex_named), user);
        assert_eq!(without_exported_lines(user, &codex_named), user);
        let only = rewrite_index("", &codex_named, &x);
        assert_eq!(without_exported_lines(&only, &codex_named), "");
        // Without the markers, as Claude Code's model leaves the index.
        let unmarked = "- [X](codex_x.md) — x\n- [A](a.md) — mine\n";
        assert_eq!(
            without_exported_lines(unmarked, &codex_named),
            "- [A](a.md) — mine\n"
        );
        let files = ExportedFiles {
            marked: ["codex_x.md".to_string()].into(),
            present: ["codex_x.md".to_string(), "codex_mine.md".to_string()].into(),
            known: BTreeSet::new(),
        };
        let (found, markers) = exported_lines_in(unmarked, &files);
        assert_eq!(found, BTreeSet::from(["codex_x.md".to_string()]));
        assert!(!markers);
        // A user's own file is never cairn's, whatever its name.
        assert!(!files.contains("codex_mine.md"));
        assert!(files.contains("codex_user_profile.md"));
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
