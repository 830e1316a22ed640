//! Where the agents keep their files, and what can be learned without parsing turns:
//! transcript discovery, a Claude Code project's working directory, memory-file counts.
//!
//! Everything here only reads. Symlinks are never followed while walking (a symlink loop or a
//! link out of the tree is reported, not entered), except a transcript root itself
//! (`projects/`, `sessions/`, `archived_sessions/` moved elsewhere and linked back). A
//! transcript whose path below its root is not valid UTF-8 is reported, not read: cairn keys
//! transcripts by their path as text, and such a path has no text of its own.

use std::fs;
use std::io::{self, BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

use crate::lenient::{Bool, Int, Str};
use crate::model::Agent;

/// A problem met while discovering or reading files: reported with a count, never fatal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Problem {
    pub path: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub message: String,
}

impl Problem {
    pub fn new(path: &Path, line: Option<u64>, message: impl Into<String>) -> Problem {
        Problem {
            path: path.display().to_string(),
            line,
            message: message.into(),
        }
    }
}

/// What a transcript file is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FileKind {
    /// A Claude Code main-session transcript.
    Session,
    /// A Claude Code subagent sidechain.
    Subagent,
    /// A Codex rollout.
    Rollout,
}

impl FileKind {
    pub fn as_str(self) -> &'static str {
        match self {
            FileKind::Session => "session",
            FileKind::Subagent => "subagent",
            FileKind::Rollout => "rollout",
        }
    }
}

/// A transcript file found on disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TranscriptFile {
    pub path: PathBuf,
    pub agent: Agent,
    pub kind: FileKind,
    /// The session id the file name implies (Claude Code `<sessionId>.jsonl`, Codex the uuid
    /// at the end of `rollout-<time>-<uuid>.jsonl`).
    pub session_hint: String,
    /// `.jsonl.zst`
    pub compressed: bool,
    /// Claude Code: the project key directory the file lives in.
    pub project_key: Option<String>,
}

/// Opens a transcript for reading, decompressing `.zst` rollouts on the fly. A damaged
/// compressed file gives every byte that decodes, then an error carrying a
/// [`crate::zst::Damaged`].
pub fn open_transcript(path: &Path, compressed: bool) -> io::Result<Box<dyn Read>> {
    let f = fs::File::open(path)?;
    if compressed {
        let dec = crate::zst::ZstdReader::new(BufReader::with_capacity(256 * 1024, f))?;
        Ok(Box::new(dec))
    } else {
        Ok(Box::new(f))
    }
}

fn is_real_dir(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Directory entries sorted by name; errors become problems.
fn entries(dir: &Path, problems: &mut Vec<Problem>) -> Vec<(PathBuf, fs::FileType)> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Vec::new(),
        Err(e) => {
            // "Not a directory" under a path that is a file: name the file, once.
            let file = dir.ancestors().find(|a| a.is_file());
            match file {
                Some(f) if e.kind() == io::ErrorKind::NotADirectory => {
                    if !problems.iter().any(|p| Path::new(&p.path) == f) {
                        problems.push(Problem::new(
                            f,
                            None,
                            "is a file, not a directory: nothing under it can be read (move it \
                             aside, or point cairn at the agent's directory with --claude-dir or \
                             --codex-home)"
                                .to_string(),
                        ));
                    }
                }
                _ => problems.push(Problem::new(
                    dir,
                    None,
                    format!("cannot list directory: {e}"),
                )),
            }
            return Vec::new();
        }
    };
    let mut out = Vec::new();
    for ent in rd {
        match ent {
            Ok(ent) => match ent.file_type() {
                Ok(t) => out.push((ent.path(), t)),
                Err(e) => problems.push(Problem::new(&ent.path(), None, e.to_string())),
            },
            Err(e) => problems.push(Problem::new(
                dir,
                None,
                format!("cannot list directory: {e}"),
            )),
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// Whether `path` is text below `root`: every name on the way from the transcript root to the
/// file is valid UTF-8. cairn keys a transcript by its path as text (its cursor, its turns'
/// source); two names that differ only in bytes that are not UTF-8 would read as the same
/// text, so such a file is reported and not read.
fn utf8_below(root: &Path, path: &Path, problems: &mut Vec<Problem>) -> bool {
    let below = path.strip_prefix(root).unwrap_or(path);
    if below.to_str().is_some() {
        return true;
    }
    problems.push(Problem::new(
        path,
        None,
        "transcript skipped: its path is not valid UTF-8 (cairn keys transcripts by their \
         path as text); rename it to have it read",
    ));
    false
}

/// A file name's bytes (on Unix, what the file system holds; elsewhere, an encoding that
/// keeps ASCII as it is), so that a name that is not UTF-8 is still recognised by its
/// ASCII prefix and extension.
fn name_bytes(path: &Path) -> &[u8] {
    path.file_name().map_or(&[], |n| n.as_encoded_bytes())
}

fn symlink_skipped(p: &Path, problems: &mut Vec<Problem>) {
    problems.push(Problem::new(
        p,
        None,
        "symlink skipped (cairn never follows links in agent dirs)",
    ));
}

/// Whether a transcript root (`<claude root>/projects`, `<codex home>/sessions`) can be
/// walked. One the user moved to another disk and linked back is followed, as the agents
/// follow it (and as a linked `~/.claude` is); links below it never are. A link to nothing
/// or to a file is reported.
fn linked_root_usable(dir: &Path, problems: &mut Vec<Problem>) -> bool {
    if !fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return true;
    }
    match fs::metadata(dir) {
        Ok(m) if m.is_dir() => true,
        Ok(_) => {
            problems.push(Problem::new(
                dir,
                None,
                "symlink to something that is not a directory; skipped",
            ));
            false
        }
        Err(e) => {
            problems.push(Problem::new(
                dir,
                None,
                format!("symlink that cannot be followed ({e}); skipped"),
            ));
            false
        }
    }
}

// ---------------------------------------------------------------- Claude Code

/// A Claude Code config root (`~/.claude` or `$CLAUDE_CONFIG_DIR`).
#[derive(Debug, Clone)]
pub struct ClaudeRoot {
    pub root: PathBuf,
}

/// One `<root>/projects/<key>/` directory.
#[derive(Debug, Clone)]
pub struct ClaudeProject {
    pub key: String,
    pub dir: PathBuf,
}

impl ClaudeRoot {
    pub fn new(root: impl Into<PathBuf>) -> ClaudeRoot {
        ClaudeRoot { root: root.into() }
    }

    pub fn projects_dir(&self) -> PathBuf {
        self.root.join("projects")
    }

    /// Every project key directory (symlinked ones are reported and skipped).
    pub fn projects(&self, problems: &mut Vec<Problem>) -> Vec<ClaudeProject> {
        let dir = self.projects_dir();
        if !linked_root_usable(&dir, problems) {
            return Vec::new();
        }
        let mut out = Vec::new();
        for (path, t) in entries(&dir, problems) {
            if t.is_symlink() {
                symlink_skipped(&path, problems);
                continue;
            }
            if !t.is_dir() {
                continue;
            }
            let Some(key) = path.file_name().and_then(|n| n.to_str()).map(str::to_owned) else {
                problems.push(Problem::new(
                    &path,
                    None,
                    "project directory name is not UTF-8",
                ));
                continue;
            };
            out.push(ClaudeProject { key, dir: path });
        }
        out
    }

    /// The user-level `autoMemoryDirectory` from `<root>/settings.json`, validated as Claude
    /// Code does (absolute or `~/…`; `~`, relative, too short, NUL rejected). Project-level
    /// (repo-checked-in) settings are never read: a repository must not be able to choose
    /// where memory is read or written.
    pub fn auto_memory_override(&self, home: Option<&Path>) -> Option<PathBuf> {
        #[derive(Deserialize)]
        struct Settings<'a> {
            #[serde(rename = "autoMemoryDirectory", borrow, default)]
            dir: Str<'a>,
        }
        let text = fs::read_to_string(self.root.join("settings.json")).ok()?;
        let s: Settings = serde_json::from_str(&text).ok()?;
        let raw = s.dir.get()?.trim();
        validate_memory_dir(raw, home)
    }

    /// A project's auto-memory directory.
    pub fn memory_dir(&self, project: &ClaudeProject, over: Option<&Path>) -> PathBuf {
        match over {
            Some(p) => p.to_path_buf(),
            None => project.dir.join("memory"),
        }
    }
}

fn validate_memory_dir(raw: &str, home: Option<&Path>) -> Option<PathBuf> {
    if raw.len() < 3 || raw.contains('\0') {
        return None;
    }
    let path = if let Some(rest) = raw.strip_prefix("~/") {
        let rest = rest.trim_start_matches('/');
        if rest.is_empty() || rest == ".." || rest.starts_with("../") {
            return None;
        }
        home?.join(rest)
    } else {
        PathBuf::from(raw)
    };
    if !path.is_absolute() || path.parent().is_none() {
        return None;
    }
    Some(path)
}

impl ClaudeProject {
    /// Main-session transcripts (`<key>/*.jsonl`), regular files only.
    pub fn session_files(&self, problems: &mut Vec<Problem>) -> Vec<TranscriptFile> {
        let mut out = Vec::new();
        for (path, t) in entries(&self.dir, problems) {
            if path.extension().is_none_or(|e| e != "jsonl") {
                continue;
            }
            if t.is_symlink() {
                symlink_skipped(&path, problems);
                continue;
            }
            if !t.is_file() || !utf8_below(&self.dir, &path, problems) {
                continue;
            }
            let hint = stem(&path);
            out.push(TranscriptFile {
                path,
                agent: Agent::Claude,
                kind: FileKind::Session,
                session_hint: hint,
                compressed: false,
                project_key: Some(self.key.clone()),
            });
        }
        out
    }

    /// Subagent transcripts (`<key>/<sessionId>/subagents/**/*.jsonl`).
    pub fn subagent_files(&self, problems: &mut Vec<Problem>) -> Vec<TranscriptFile> {
        let mut out = Vec::new();
        for (path, t) in entries(&self.dir, problems) {
            if !t.is_dir() || path.file_name().is_some_and(|n| n == "memory") {
                continue;
            }
            let sub = path.join("subagents");
            if !is_real_dir(&sub) {
                continue;
            }
            let session = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned();
            let mut files = Vec::new();
            walk_jsonl(&sub, 0, 4, &mut files, problems);
            for p in files {
                if !utf8_below(&self.dir, &p, problems) {
                    continue;
                }
                out.push(TranscriptFile {
                    path: p,
                    agent: Agent::Claude,
                    kind: FileKind::Subagent,
                    session_hint: session.clone(),
                    compressed: false,
                    project_key: Some(self.key.clone()),
                });
            }
        }
        out
    }
}

fn stem(path: &Path) -> String {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    name.trim_end_matches(".zst")
        .trim_end_matches(".jsonl")
        .to_owned()
}

fn walk_jsonl(
    dir: &Path,
    depth: usize,
    max_depth: usize,
    out: &mut Vec<PathBuf>,
    problems: &mut Vec<Problem>,
) {
    for (path, t) in entries(dir, problems) {
        if t.is_symlink() {
            symlink_skipped(&path, problems);
        } else if t.is_dir() {
            if depth < max_depth {
                walk_jsonl(&path, depth + 1, max_depth, out, problems);
            }
        } else if t.is_file() {
            let name = name_bytes(&path);
            if name.ends_with(b".jsonl") || name.ends_with(b".jsonl.zst") {
                out.push(path);
            }
        }
    }
}

/// Counts regular `*.md` files (any case) under `dir`, recursively, symlinks skipped.
pub fn count_memory_files(dir: &Path) -> usize {
    fn walk(dir: &Path, depth: usize, n: &mut usize) {
        let Ok(rd) = fs::read_dir(dir) else { return };
        for ent in rd.flatten() {
            let Ok(t) = ent.file_type() else { continue };
            let p = ent.path();
            if t.is_dir() && depth < 32 {
                walk(&p, depth + 1, n);
            } else if t.is_file()
                && p.extension()
                    .and_then(|e| e.to_str())
                    .is_some_and(|e| e.eq_ignore_ascii_case("md"))
            {
                *n += 1;
            }
        }
    }
    if !is_real_dir(dir) {
        return 0;
    }
    let mut n = 0;
    walk(dir, 0, &mut n);
    n
}

/// The outcome of resolving a Claude Code project's working directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectCwd {
    /// Absolute and canonical, when a usable session was found.
    pub cwd: Option<PathBuf>,
    /// Why there is none.
    pub reason: Option<String>,
}

#[derive(Deserialize)]
struct CwdRecord<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    cwd: Str<'a>,
    #[serde(borrow, default)]
    timestamp: Str<'a>,
    #[serde(default)]
    timestamp_ms: Int,
    #[serde(rename = "isMeta", default)]
    is_meta: Bool,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Bool,
    #[serde(rename = "continuedInSessionId", borrow, default)]
    continued_in: Str<'a>,
    #[serde(borrow, default)]
    message: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct CwdMessage<'a> {
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct TextBlock<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
}

fn has_text_content(raw: Option<&RawValue>) -> bool {
    let Some(raw) = raw else { return false };
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(s).is_ok_and(|t| !t.trim().is_empty()),
        Some(b'[') => serde_json::from_str::<Vec<&RawValue>>(s).is_ok_and(|items| {
            items.iter().any(|b| {
                serde_json::from_str::<TextBlock>(b.get()).is_ok_and(|b| {
                    b.kind.get() == Some("text")
                        && b.text.get().is_some_and(|t| !t.trim().is_empty())
                })
            })
        }),
        _ => false,
    }
}

/// What one session file says about its working directory.
#[derive(Debug, Default)]
struct SessionSummary {
    cwd: Option<String>,
    has_message: bool,
    continued: bool,
}

/// The longest line [`summarize_session`] reads: the records it looks for are small.
const SUMMARY_LINE_MAX: usize = 8 << 20;

/// Reads one line (with its `\n`) into `buf`, at most `cap` bytes of it; the rest of a longer
/// line is consumed without being kept. Returns the line's length in bytes and whether all of
/// it is in `buf`.
fn read_line_capped<R: BufRead>(
    r: &mut R,
    buf: &mut Vec<u8>,
    cap: usize,
) -> io::Result<(usize, bool)> {
    let mut total = 0;
    loop {
        let chunk = match r.fill_buf() {
            Ok(c) => c,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if chunk.is_empty() {
            return Ok((total, total <= cap));
        }
        let (take, done) = match memchr::memchr(b'\n', chunk) {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        if total + take <= cap {
            buf.extend_from_slice(&chunk[..take]);
        } else if total < cap {
            buf.extend_from_slice(&chunk[..cap - total]);
        }
        total += take;
        r.consume(take);
        if done {
            return Ok((total, total <= cap));
        }
    }
}

fn summarize_session(path: &Path) -> io::Result<SessionSummary> {
    let mut s = SessionSummary::default();
    let f = fs::File::open(path)?;
    let mut r = BufReader::with_capacity(1 << 20, f);
    let mut line = Vec::new();
    let finder = memchr::memmem::Finder::new(b"continued-in");
    loop {
        line.clear();
        let (n, whole) = read_line_capped(&mut r, &mut line, SUMMARY_LINE_MAX)?;
        if n == 0 {
            break;
        }
        // A line too long to hold (a pasted file, a huge tool output) is no record that says
        // where a session ran: skipped, never read into memory whole.
        if !whole {
            continue;
        }
        let interesting = s.cwd.is_none() || !s.has_message || finder.find(&line).is_some();
        if !interesting {
            continue;
        }
        let text = String::from_utf8_lossy(&line);
        let text = crate::strip_bom(text.trim()).trim();
        if text.is_empty() {
            continue;
        }
        let Ok(rec) = serde_json::from_str::<CwdRecord>(text) else {
            continue;
        };
        if rec.kind.get() == Some("continued-in") && rec.continued_in.non_empty().is_some() {
            s.continued = true;
            break;
        }
        if s.cwd.is_none() {
            s.cwd = rec.cwd.get().map(str::to_owned);
        }
        if !s.has_message && !rec.is_meta.is_true() && !rec.is_sidechain.is_true() {
            let msg = rec
                .message
                .and_then(|m| serde_json::from_str::<CwdMessage>(m.get()).ok());
            let role_ok = |r: Option<&str>| matches!(r, Some("user" | "assistant"));
            let is_conv = role_ok(rec.kind.get())
                || role_ok(rec.role.get())
                || msg.as_ref().is_some_and(|m| role_ok(m.role.get()));
            let timestamped = rec
                .timestamp
                .get()
                .is_some_and(|t| t.parse::<jiff::Timestamp>().is_ok())
                || rec.timestamp_ms.0.is_some();
            if is_conv && timestamped && msg.is_some_and(|m| has_text_content(m.content)) {
                s.has_message = true;
            }
        }
    }
    Ok(s)
}

/// Resolves a project's working directory the way Codex's importer does: session transcripts
/// newest first by mtime; the first one with a `cwd`, a timestamped user/assistant message
/// (not meta, not sidechain), not replaced by a continuation, whose cwd is absolute and an
/// existing directory, wins (canonicalized).
pub fn resolve_project_cwd(project: &ClaudeProject) -> ProjectCwd {
    let mut problems = Vec::new();
    let mut files: Vec<(SystemTime, PathBuf)> = project
        .session_files(&mut problems)
        .into_iter()
        .map(|f| {
            let m = fs::metadata(&f.path)
                .and_then(|m| m.modified())
                .unwrap_or(SystemTime::UNIX_EPOCH);
            (m, f.path)
        })
        .collect();
    if files.is_empty() {
        return ProjectCwd {
            cwd: None,
            reason: Some(
                "no session transcripts (deleted after cleanupPeriodDays, or never recorded)"
                    .into(),
            ),
        };
    }
    files.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    let (mut missing, mut continued, mut no_message, mut no_cwd, mut relative, mut unreadable) =
        (None::<String>, 0, 0, 0, 0, 0);
    for (_, path) in &files {
        let s = match summarize_session(path) {
            Ok(s) => s,
            Err(_) => {
                unreadable += 1;
                continue;
            }
        };
        if s.continued {
            continued += 1;
            continue;
        }
        let Some(cwd) = s.cwd else {
            no_cwd += 1;
            continue;
        };
        if !s.has_message {
            no_message += 1;
            continue;
        }
        let p = PathBuf::from(&cwd);
        if !p.is_absolute() {
            relative += 1;
            continue;
        }
        match fs::canonicalize(&p) {
            Ok(c) if c.is_dir() => {
                return ProjectCwd {
                    cwd: Some(c),
                    reason: None,
                };
            }
            _ => {
                missing.get_or_insert(cwd);
            }
        }
    }
    let reason = if let Some(m) = missing {
        format!("recorded cwd {m} no longer exists (directory moved or deleted)")
    } else if no_message > 0 {
        "no session has a timestamped user or assistant message (meta-only or empty)".into()
    } else if continued > 0 {
        "every session was continued in another session".into()
    } else if relative > 0 {
        "recorded cwd is not an absolute path".into()
    } else if no_cwd > 0 {
        "no session records a cwd".into()
    } else if unreadable > 0 {
        "session transcripts are unreadable".into()
    } else {
        "no usable session".into()
    };
    ProjectCwd {
        cwd: None,
        reason: Some(reason),
    }
}

// ---------------------------------------------------------------- Codex

/// A Codex home (`~/.codex` or `$CODEX_HOME`).
#[derive(Debug, Clone)]
pub struct CodexHome {
    pub home: PathBuf,
}

impl CodexHome {
    pub fn new(home: impl Into<PathBuf>) -> CodexHome {
        CodexHome { home: home.into() }
    }

    /// Rollouts under `sessions/` and `archived_sessions/` (`rollout-*.jsonl[.zst]`).
    pub fn rollouts(&self, problems: &mut Vec<Problem>) -> Vec<TranscriptFile> {
        let mut out = Vec::new();
        for sub in ["sessions", "archived_sessions"] {
            let dir = self.home.join(sub);
            if !linked_root_usable(&dir, problems) {
                continue;
            }
            let mut files = Vec::new();
            walk_jsonl(&dir, 0, 5, &mut files, problems);
            for path in files {
                let name = name_bytes(&path);
                if !name.starts_with(b"rollout-") || !utf8_below(&dir, &path, problems) {
                    continue;
                }
                let compressed = name.ends_with(b".zst");
                let st = stem(&path);
                out.push(TranscriptFile {
                    session_hint: rollout_uuid(&st).unwrap_or(&st).to_owned(),
                    path,
                    agent: Agent::Codex,
                    kind: FileKind::Rollout,
                    compressed,
                    project_key: None,
                });
            }
        }
        out
    }
}

/// The trailing uuid of `rollout-YYYY-MM-DDThh-mm-ss-<uuid>`.
fn rollout_uuid(stem: &str) -> Option<&str> {
    if stem.len() < 36 {
        return None;
    }
    let cand = &stem[stem.len() - 36..];
    let ok = cand.bytes().enumerate().all(|(i, b)| match i {
        8 | 13 | 18 | 23 => b == b'-',
        _ => b.is_ascii_hexdigit(),
    });
    ok.then_some(cand)
}

/// The `cwd` of a rollout's `session_meta` (its first record), reading at most 16 MiB. An
/// early rollout (bare records, no envelope) gives the `cwd` of its bare `SessionMeta`, or
/// that of the `<environment_context>` message among its first lines.
pub fn rollout_cwd(file: &TranscriptFile) -> io::Result<Option<String>> {
    #[derive(Deserialize)]
    struct Line<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Str<'a>,
        #[serde(borrow, default)]
        payload: Option<&'a RawValue>,
        // Early rollouts: the bare `SessionMeta`'s `id` and `cwd`, a bare message's content.
        #[serde(borrow, default)]
        id: Str<'a>,
        #[serde(borrow, default)]
        cwd: Str<'a>,
        #[serde(borrow, default)]
        role: Str<'a>,
        #[serde(borrow, default)]
        content: Option<&'a RawValue>,
    }
    #[derive(Deserialize)]
    struct Meta<'a> {
        #[serde(borrow, default)]
        cwd: Str<'a>,
    }
    #[derive(Deserialize)]
    struct Part<'a> {
        #[serde(borrow, default)]
        text: Str<'a>,
    }
    let r = open_transcript(&file.path, file.compressed)?;
    let mut r = BufReader::new(r.take(16 << 20));
    let mut buf = Vec::new();
    for _ in 0..4 {
        buf.clear();
        if r.read_until(b'\n', &mut buf)? == 0 {
            break;
        }
        let text = String::from_utf8_lossy(&buf);
        let Ok(l) = serde_json::from_str::<Line>(crate::strip_bom(text.trim()).trim()) else {
            continue;
        };
        if l.kind.get() == Some("session_meta") {
            let cwd = l
                .payload
                .and_then(|p| serde_json::from_str::<Meta>(p.get()).ok())
                .and_then(|m| m.cwd.non_empty().map(str::to_owned));
            return Ok(cwd);
        }
        if l.payload.is_none() {
            if l.kind.get().is_none() && l.id.non_empty().is_some() {
                if let Some(cwd) = l.cwd.non_empty() {
                    return Ok(Some(cwd.to_owned()));
                }
            } else if l.kind.get() == Some("message") && l.role.get() == Some("user") {
                let parts: Vec<Part> = l
                    .content
                    .and_then(|c| serde_json::from_str(c.get()).ok())
                    .unwrap_or_default();
                if let Some(cwd) = parts
                    .iter()
                    .find_map(|p| p.text.get().and_then(crate::codex::environment_cwd))
                {
                    return Ok(Some(cwd.to_owned()));
                }
            }
        }
    }
    Ok(None)
}

/// Claude Code's project key for a path: every UTF-16 unit outside `[A-Za-z0-9]` becomes `-`.
/// (Keys longer than 200 units get a hash suffix that cannot be reproduced exactly; readers
/// match such keys by their 200-unit prefix.)
pub fn claude_project_key(path: &str) -> String {
    path.encode_utf16()
        .map(|u| match u {
            0x30..=0x39 | 0x41..=0x5a | 0x61..=0x7a => u as u8 as char,
            _ => '-',
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A line longer than the cap is consumed but not kept, and the next line is read whole.
    #[test]
    fn long_lines_are_skipped_without_being_held() {
        let text = format!("{}\nshort\n", "x".repeat(100));
        let mut r = io::BufReader::with_capacity(7, text.as_bytes());
        let mut buf = Vec::new();
        assert_eq!(
            read_line_capped(&mut r, &mut buf, 10).unwrap(),
            (101, false)
        );
        assert_eq!(buf.len(), 10);
        buf.clear();
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), (6, true));
        assert_eq!(buf, b"short\n");
        buf.clear();
        assert_eq!(read_line_capped(&mut r, &mut buf, 10).unwrap(), (0, true));
    }

    /// A session whose first record is a huge line still gives the directory of the next.
    #[test]
    fn a_huge_first_line_does_not_hide_the_working_directory() {
        let dir = std::env::temp_dir().join(format!("cairn-huge-line-{}", std::process::id()));
        fs::create_dir_all(&dir).unwrap();
        let path = dir.join("s.jsonl");
        let huge = format!(
            "{{\"type\":\"user\",\"pad\":\"{}\"}}\n",
            "y".repeat(SUMMARY_LINE_MAX + 10)
        );
        let rec = r#"{"type":"user","cwd":"/home/dev/app","timestamp":"2026-11-20T10:00:00Z","message":{"role":"user","content":"hi"}}"#;
        fs::write(&path, format!("{huge}{rec}\n")).unwrap();
        let s = summarize_session(&path).unwrap();
        assert_eq!(s.cwd.as_deref(), Some("/home/dev/app"));
        assert!(s.has_message);
        let _ = fs::remove_dir_all(&dir);
    }

    #[test]
    fn project_keys_follow_claude_code() {
        assert_eq!(
            claude_project_key("/home/user/work/my-repo"),
            "-home-user-work-my-repo"
        );
        assert_eq!(claude_project_key("/a/.b_c"), "-a--b-c");
        assert_eq!(claude_project_key("/x/😀"), "-x---");
        assert_eq!(claude_project_key("/x/é"), "-x--");
    }

    #[test]
    fn rollout_uuid_from_name() {
        assert_eq!(
            rollout_uuid("rollout-2026-11-20T10-00-00-0192f3a4-1b2c-7d3e-8f40-123456789abc"),
            Some("0192f3a4-1b2c-7d3e-8f40-123456789abc")
        );
        assert_eq!(rollout_uuid("rollout-x"), None);
    }

    #[test]
    fn memory_dir_validation() {
        let home = Path::new("/home/u");
        assert_eq!(
            validate_memory_dir("~/mem", Some(home)),
            Some(PathBuf::from("/home/u/mem"))
        );
        assert_eq!(validate_memory_dir("~", Some(home)), None);
        assert_eq!(validate_memory_dir("~/", Some(home)), None);
        assert_eq!(validate_memory_dir("~/..", Some(home)), None);
        assert_eq!(validate_memory_dir("rel/dir", Some(home)), None);
        assert_eq!(validate_memory_dir("/", Some(home)), None);
        assert_eq!(
            validate_memory_dir("/ok/dir", Some(home)),
            Some(PathBuf::from("/ok/dir"))
        );
    }
}
