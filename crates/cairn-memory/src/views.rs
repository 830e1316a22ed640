//! The markdown views: `<views dir>/<scope slug>/` holds one file per live memory (frontmatter
//! `name`, `description`, `type` as Claude Code writes them, plus `id`, `scope`, `updated`,
//! `source`) and a `MEMORY.md` index (`- [name](file.md) — description`, most useful first,
//! at most 200 lines and 25,000 characters).
//!
//! The database is the truth and the views are regenerated from it after every change, each
//! file written atomically through `cairn_atomic` (temporary file, fsync, rename; new ones 0600 in
//! 0700 directories, one given another mode keeps it) and only
//! when its content changes. They are also human-editable: cairn remembers the hash (and
//! size and mtime) of every file it wrote, and on the next run a file whose content changed
//! is read back into the memory it shows before anything is regenerated (the file keeps its
//! path whatever the edit changes, see `refresh_views`' regeneration step, but for its
//! `scope` line: a project's path or `global` there moves the memory, and its file follows
//! into that scope's folder), and a memory file
//! deleted by hand forgets its memory (not a folder wiped whole: that is written again). A
//! new `*.md` file
//! dropped into a scope's directory becomes a new memory of that scope (a directory the
//! database does not know, after the database was lost, is the scope the file's own `scope`
//! field names when the two agree: the views bring the memories back, each under the id its file names). An unparsable edit, or
//! a file that cannot be placed, is left alone (and reported), never overwritten. Nothing is read back, written or removed
//! through a symbolic link below the views directory (a scope dir swapped for one is left as
//! it is).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};

use rusqlite::params;
use serde::Serialize;

use crate::error::{MemoryError, Result};
use crate::extract::classify;
use crate::keywords::keywords_for;
use crate::model::{Memory, MemoryType, NewMemory, Source, format_time, parse_body, render_body};
use crate::scope::{GLOBAL, scope_slug};
use crate::store::{
    Action, MemoryStore, clean, derive_description, derive_name, ensure_scope, forget_in,
    get_memory, scope_slugs, update_fields, write_new_in,
};
use crate::text::{one_line, truncate_chars};

/// Claude Code loads at most this many lines of `MEMORY.md`.
pub const INDEX_MAX_LINES: usize = 200;
/// ... and at most this many characters (UTF-16 units, as Claude Code counts).
pub const INDEX_MAX_CHARS: usize = 25_000;
/// An index line is kept under this many characters.
pub const INDEX_LINE_MAX: usize = 150;
/// The index file's name.
pub const INDEX_FILE: &str = "MEMORY.md";

/// What a refresh of the views did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ViewReport {
    /// Files written (created or changed).
    pub written: usize,
    /// Files removed (forgotten or superseded memories, renamed files).
    pub removed: usize,
    /// Hand edits read back into their memories.
    pub edits: usize,
    /// Hand-written new files that became memories.
    pub imported: usize,
    /// Memory files deleted by hand, whose memories were forgotten.
    pub forgotten: usize,
    /// Files that could not be read back (left untouched).
    pub problems: Vec<String>,
}

fn yaml_value(v: &str) -> String {
    let plain_ok = !v.is_empty()
        && v.trim() == v
        && !v.contains(": ")
        && !v.contains(" #")
        && !v.ends_with(':')
        && !v.contains('\n')
        && !v.starts_with([
            '-', '?', ':', ',', '[', ']', '{', '}', '#', '&', '*', '!', '|', '>', '\'', '"', '%',
            '@', '`',
        ])
        && !matches!(
            v.to_ascii_lowercase().as_str(),
            "true" | "false" | "yes" | "no" | "null" | "~" | "on" | "off"
        )
        && v.parse::<f64>().is_err();
    if plain_ok {
        v.to_string()
    } else {
        serde_json::to_string(v).unwrap_or_else(|_| format!("\"{}\"", v.replace('"', "'")))
    }
}

fn yaml_parse(v: &str) -> String {
    let v = v.trim();
    if v.starts_with('"') {
        if let Ok(s) = serde_json::from_str::<String>(v) {
            return s;
        }
        return v.trim_matches('"').to_string();
    }
    if let Some(inner) = v.strip_prefix('\'').and_then(|x| x.strip_suffix('\'')) {
        return inner.replace("''", "'");
    }
    // An unquoted value ends at an inline comment.
    match v.find(" #") {
        Some(i) => v[..i].trim_end().to_string(),
        None => v.to_string(),
    }
}

/// The frontmatter fields cairn writes.
const FIELDS: &[&str] = &[
    "name",
    "description",
    "type",
    "id",
    "scope",
    "updated",
    "source",
];

/// What an edit whose frontmatter lost its closing line is told.
const UNCLOSED: &str =
    "its frontmatter opens with --- but no --- line closes it (add the closing --- line)";
/// What an edit whose frontmatter lost its opening line is told.
const UNOPENED: &str = "its frontmatter fields (name:, type: …) are not opened by a --- line \
     (put --- alone on the first line, and another after the fields)";

/// A memory's view file.
pub fn render_view(m: &Memory) -> String {
    format!(
        "---\nname: {}\ndescription: {}\ntype: {}\nid: {}\nscope: {}\nupdated: {}\nsource: {}\n---\n\n{}\n",
        yaml_value(&one_line(&m.name)),
        yaml_value(&one_line(&m.description)),
        m.memory_type,
        m.id,
        yaml_value(&m.scope),
        format_time(m.updated_at),
        yaml_value(&m.source.describe()),
        m.body.trim()
    )
}

/// A parsed view file: frontmatter fields (lowercased keys) and body.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ViewFile {
    /// Frontmatter.
    pub fields: HashMap<String, String>,
    /// Everything after the frontmatter.
    pub body: String,
    /// The file opens a frontmatter (`---` then fields such as `name:`) that no `---` line
    /// closes: its fields cannot be told from its body, so it is not read back. A note that
    /// only opens with a `---` rule is read as a body.
    pub unclosed: bool,
    /// The file opens with frontmatter fields (`name:`, `type:` …) closed by a `---` line
    /// that nothing opened: the opening line was lost, so it is not read back either.
    pub unopened: bool,
}

impl ViewFile {
    /// Why the file cannot be read back, when it cannot.
    fn broken(&self) -> Option<&'static str> {
        if self.unclosed {
            Some(UNCLOSED)
        } else if self.unopened {
            Some(UNOPENED)
        } else {
            None
        }
    }
}

/// Parses a view file (frontmatter optional).
pub fn parse_view(text: &str) -> ViewFile {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // Blank lines an editor left above the frontmatter do not hide it.
    let text = skip_blank_lines(text);
    // Lines with their terminators, so the body starts exactly after the closing `---` line
    // whatever the line endings (`\r\n` included).
    let mut lines = text.split_inclusive('\n');
    let mut fields = HashMap::new();
    let first = lines.next().unwrap_or("");
    if first.trim_end() == "---" {
        let mut consumed = first.len();
        let mut closed = false;
        for raw in lines.by_ref() {
            consumed += raw.len();
            let line = raw.trim_end_matches(['\n', '\r']);
            if line.trim_end() == "---" {
                closed = true;
                break;
            }
            if let Some((k, v)) = line.split_once(':') {
                fields.insert(k.trim().to_ascii_lowercase(), yaml_parse(v));
            }
        }
        if closed {
            let body = text.get(consumed.min(text.len())..).unwrap_or("");
            return ViewFile {
                fields,
                body: body.trim().to_string(),
                ..ViewFile::default()
            };
        }
        // A `---` rule that opens a note is no frontmatter; one followed by fields is.
        let unclosed = FIELDS.iter().any(|f| fields.contains_key(*f));
        return ViewFile {
            fields: HashMap::new(),
            body: text.trim().to_string(),
            unclosed,
            unopened: false,
        };
    }
    // Two of cairn's fields, then a `---` line: a frontmatter that lost its opening line.
    // Three, then a blank line or the end: one that lost both.
    let mut seen = 0;
    let mut unopened = false;
    let mut ended = true;
    for raw in text.split_inclusive('\n') {
        let line = raw.trim_end_matches(['\n', '\r']);
        if line.trim_end() == "---" {
            unopened = seen >= 2;
            ended = false;
            break;
        }
        match line.split_once(':') {
            Some((k, _)) if FIELDS.contains(&k.trim().to_ascii_lowercase().as_str()) => seen += 1,
            _ => {
                ended = line.trim().is_empty();
                break;
            }
        }
    }
    let unopened = unopened || (ended && seen >= 3);
    ViewFile {
        fields,
        body: text.trim().to_string(),
        unclosed: false,
        unopened,
    }
}

/// `text` from its first line that is not blank.
fn skip_blank_lines(text: &str) -> &str {
    let mut rest = text;
    while let Some((line, after)) = rest.split_once('\n') {
        if !line.trim().is_empty() {
            break;
        }
        rest = after;
    }
    rest
}

/// How useful a memory is for the index order: type first (user, feedback, project,
/// reference), then how often it was recalled, then how recent it is.
fn usefulness(m: &Memory, now: i64) -> f64 {
    usefulness_of(m.memory_type, m.updated_at, m.recall_count, now)
}

/// [`usefulness`] from the three fields it reads.
pub(crate) fn usefulness_of(t: MemoryType, updated_at: i64, recall_count: i64, now: i64) -> f64 {
    let t = match t {
        MemoryType::User => 4.0,
        MemoryType::Feedback => 3.0,
        MemoryType::Project => 2.0,
        MemoryType::Reference => 1.0,
    };
    let age = (now - updated_at).max(0) as f64 / 86_400.0;
    t + 1.5 * (recall_count.max(0) as f64).ln_1p() + (-age / 30.0).exp2()
}

/// Orders memories most useful first.
pub fn by_usefulness(mems: &mut [&Memory], now: i64) {
    mems.sort_by(|a, b| {
        usefulness(b, now)
            .total_cmp(&usefulness(a, now))
            .then(b.updated_at.cmp(&a.updated_at))
            .then(a.id.cmp(&b.id))
    });
}

/// A memory named on one line of a list, `name — description`, the way every list cairn
/// writes names one (the views' `MEMORY.md`, Codex's task groups): the description without
/// what it repeats of the name ([`beyond_name`]), and the name alone when the description
/// says nothing more ("Never commit to main directly", not "Never commit to main directly —
/// Never commit to main directly").
pub fn name_and_description(name: &str, desc: &str) -> String {
    let name = one_line(name);
    let desc = one_line(desc);
    match beyond_name(&name, &desc) {
        "" => name,
        tail => format!("{name} — {tail}"),
    }
}

/// What a description says beyond the name an index line links it by: a description that
/// opens with the name (a name is cut from the rule's first clause, and the description is
/// the rule's first line) would say it twice. Empty when it says nothing more. The words
/// that joined the name to a link ("The staging dashboard is https://…") go with the name.
pub fn beyond_name<'a>(name: &str, desc: &'a str) -> &'a str {
    let stem = name.trim_end_matches('…').trim_end();
    let Some(rest) = desc.strip_prefix(stem) else {
        return desc;
    };
    // The name ends mid-word of the description ("Use pnpm" of "Use pnpmfile"): other words.
    // Scripts written without spaces (CJK, kana) have no word boundary to check.
    let spaced_letter = |c: char| c.is_alphanumeric() && u32::from(c) < 0x2E80;
    if stem.is_empty()
        || (stem.chars().next_back().is_some_and(spaced_letter)
            && rest.chars().next().is_some_and(spaced_letter))
    {
        return desc;
    }
    const JOINS: [&str; 13] = [
        "—", "–", "--", ":", "：", ";", "；", ",", "，", "、", "。", ".", "-",
    ];
    const COPULAS: [&str; 10] = [
        "is at", "are at", "is in", "are in", "is", "are", "は", "是", "在", "が",
    ];
    let mut t = rest.trim_start();
    loop {
        let before = t;
        for j in JOINS {
            t = t.strip_prefix(j).unwrap_or(t).trim_start();
        }
        if t.contains("://") {
            for c in COPULAS {
                if let Some(after) = t.strip_prefix(c)
                    && (after.starts_with(char::is_whitespace) || !c.is_ascii())
                {
                    t = after.trim_start();
                    break;
                }
            }
        }
        if t == before {
            return t;
        }
    }
}

fn utf16_len(s: &str) -> usize {
    s.encode_utf16().count()
}

/// The `MEMORY.md` index of one scope: `entries` are `(name, file, description)`, already in
/// order. Lines past the limits are dropped for one closing line that says how many more
/// there are and how to find them.
pub fn render_index(entries: &[(String, String, String)]) -> String {
    let lines: Vec<String> = entries
        .iter()
        .map(|(name, file, desc)| {
            let name = truncate_chars(&one_line(name).replace(['[', ']'], ""), 80);
            let desc = one_line(desc);
            let tail = beyond_name(&name, &desc);
            if tail.is_empty() {
                return format!("- [{name}]({file})");
            }
            let head = format!("- [{name}]({file}) — ");
            let room = INDEX_LINE_MAX.saturating_sub(head.chars().count()).max(10);
            format!("{head}{}", truncate_chars(tail, room))
        })
        .collect();
    let total = lines.len();
    let mut out = String::new();
    let mut used_chars = 0usize;
    let mut kept = 0usize;
    // The closing line says at most `total` more: its length with that many digits bounds it.
    let closing_room = utf16_len(&closing_line(total));
    for (i, l) in lines.iter().enumerate() {
        let rest = total - i - 1;
        // Room for this line, and, if more follow, for the closing line.
        let closing = if rest > 0 { closing_room } else { 0 };
        let lines_needed = kept + 1 + usize::from(rest > 0);
        if lines_needed > INDEX_MAX_LINES
            || used_chars + utf16_len(l) + 1 + closing > INDEX_MAX_CHARS
        {
            break;
        }
        out.push_str(l);
        out.push('\n');
        used_chars += utf16_len(l) + 1;
        kept += 1;
    }
    if kept < total {
        out.push_str(&closing_line(total - kept));
    }
    out
}

/// The index's last line when `more` memories did not fit.
fn closing_line(more: usize) -> String {
    format!(
        "- … and {more} more memories in this directory, not listed here: search them with `cairn recall \"QUERY\"` or the memory_search tool\n"
    )
}

/// A file name for a memory: `<type>_<slug of the name>.md` (`<type>_<id>.md` when the name
/// has no ASCII word).
fn file_stem(m: &Memory) -> String {
    let mut slug = String::new();
    for c in m.name.chars() {
        if c == '\'' || c == '’' {
            continue;
        }
        if c.is_ascii_alphanumeric() {
            slug.push(c.to_ascii_lowercase());
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
        if slug.len() >= 40 {
            break;
        }
    }
    let slug = slug.trim_end_matches('-');
    if slug.len() < 3 {
        format!("{}_{}", m.memory_type, m.id)
    } else {
        format!("{}_{slug}", m.memory_type)
    }
}

fn content_hash(b: &[u8]) -> String {
    format!("{:016x}", xxhash_rust::xxh3::xxh3_64(b))
}

fn mtime_ns(md: &std::fs::Metadata) -> i64 {
    md.modified()
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos() as i64)
}

/// Whether `path` or a component between `root` and it is a symbolic link.
fn linked_in(root: &Path, path: &Path) -> bool {
    let Ok(rel) = path.strip_prefix(root) else {
        return true;
    };
    let mut cur = root.to_path_buf();
    rel.components().any(|c| {
        cur.push(c);
        std::fs::symlink_metadata(&cur).is_ok_and(|m| m.file_type().is_symlink())
    })
}

fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    cairn_atomic::create_dir_all(dir, cairn_atomic::NewMode::Private)
        .map_err(|e| MemoryError::io(dir, e))
}

/// Whether `name` is one of [`write_atomic`]'s temporary files (`cairn_atomic`'s shape, or
/// `.NAME.tmp-PID` as earlier builds named them).
fn is_temp_file(name: &str) -> bool {
    cairn_atomic::is_temp_name(name)
        || (name.starts_with('.')
            && name
                .rsplit_once(".tmp-")
                .is_some_and(|(_, pid)| !pid.is_empty() && pid.bytes().all(|b| b.is_ascii_digit())))
}

/// Writes a file atomically (temporary file in the same directory, fsync, rename): a file
/// that exists keeps its mode, a new one is private, in a private directory.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    create_private_dir(dir)?;
    cairn_atomic::write_atomic(path, bytes, cairn_atomic::NewMode::Private)
        .map_err(|e| MemoryError::io(path, e))
}

struct Tracked {
    memory_id: Option<String>,
    hash: String,
    size: i64,
    mtime_ns: i64,
}

/// The views directory lock: refreshes by concurrent processes queue on it.
struct ViewsLock(#[allow(dead_code)] std::fs::File);

fn lock_views(root: &Path) -> Result<ViewsLock> {
    let p = root.join(".lock");
    let mut o = std::fs::OpenOptions::new();
    o.create(true).truncate(false).write(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(&p).map_err(|e| MemoryError::io(&p, e))?;
    f.lock().map_err(|e| MemoryError::io(&p, e))?;
    Ok(ViewsLock(f))
}

impl MemoryStore {
    /// Reads hand edits back, then regenerates every scope's files and index (see the module
    /// docs). A no-op without a views directory.
    pub fn refresh_views(&mut self, now: i64) -> Result<ViewReport> {
        self.refresh_views_of(None, now)
    }

    /// [`MemoryStore::refresh_views`] for the folders of `scopes` alone: what one write
    /// changed (`remember`, `forget`, an MCP call). Its cost follows those folders, not every
    /// project's files; hand edits elsewhere are read on the next full refresh (`sync`).
    pub(crate) fn refresh_scope_views(&mut self, scopes: &[&str], now: i64) -> Result<ViewReport> {
        self.refresh_views_of(Some(scopes), now)
    }

    fn refresh_views_of(&mut self, scopes: Option<&[&str]>, now: i64) -> Result<ViewReport> {
        let Some(root) = self.views.clone() else {
            return Ok(ViewReport::default());
        };
        if scopes.is_none() {
            // What was forgotten before the database was rebuilt stays out of the views.
            self.adopt_tombstones(now)?;
        }
        let slugs: Option<HashSet<String>> =
            scopes.map(|s| s.iter().map(|s| scope_slug(s)).collect());
        let only = slugs.as_ref();
        let in_scope = |rel: &str| {
            only.is_none_or(|o| rel.split_once('/').is_some_and(|(d, _)| o.contains(d)))
        };
        create_private_dir(&root)?;
        let _lock = lock_views(&root)?;
        let mut report = ViewReport::default();
        let tracked: HashMap<String, Tracked> = {
            let conn = self.store.connection();
            let mut st =
                conn.prepare("SELECT path, memory_id, hash, size, mtime_ns FROM memory_views")?;
            let rows = st.query_map([], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    Tracked {
                        memory_id: r.get(1)?,
                        hash: r.get(2)?,
                        size: r.get(3)?,
                        mtime_ns: r.get(4)?,
                    },
                ))
            })?;
            rows.collect::<rusqlite::Result<HashMap<String, Tracked>>>()?
                .into_iter()
                .filter(|(rel, _)| in_scope(rel))
                .collect()
        };
        // Paths whose user content must not be overwritten, and paths already read back.
        let mut keep: HashSet<String> = HashSet::new();
        let mut absorbed: HashSet<String> = HashSet::new();

        // 1. Hand edits of the files cairn wrote, and files deleted by hand.
        let mut edits: Vec<(String, String, String)> = Vec::new();
        let mut missing: Vec<(&str, &str)> = Vec::new();
        // One check per scope dir, one `lstat` per file (thousands of files per run).
        let mut linked_dirs: HashMap<PathBuf, bool> = HashMap::new();
        for (rel, t) in &tracked {
            let Some(id) = &t.memory_id else { continue };
            let path = root.join(rel);
            // A link (the file, or its scope dir swapped for one) is never read through.
            let dir_linked = path.parent().is_none_or(|d| {
                *linked_dirs
                    .entry(d.to_path_buf())
                    .or_insert_with(|| linked_in(&root, d))
            });
            if dir_linked {
                continue;
            }
            let md = match std::fs::symlink_metadata(&path) {
                Ok(md) => md,
                Err(e) => {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        missing.push((rel.as_str(), id.as_str()));
                    }
                    continue;
                }
            };
            if !md.file_type().is_file() {
                continue;
            }
            if md.len() as i64 == t.size && mtime_ns(&md) == t.mtime_ns {
                continue;
            }
            let Ok(bytes) = std::fs::read(&path) else {
                continue;
            };
            if content_hash(&bytes) == t.hash {
                continue;
            }
            match String::from_utf8(bytes) {
                Ok(text) => edits.push((rel.clone(), id.clone(), text)),
                Err(_) => {
                    report.problems.push(format!(
                        "{rel}: not UTF-8 text; file left as it is (save it as UTF-8)"
                    ));
                    keep.insert(rel.clone());
                }
            }
        }
        // 2. New files written by hand.
        let mut new_files: Vec<(String, String, String)> = Vec::new();
        if let Ok(rd) = std::fs::read_dir(&root) {
            let mut dirs: Vec<_> = rd.flatten().collect();
            dirs.sort_by_key(|e| e.file_name());
            for d in dirs {
                let slug = d.file_name().to_string_lossy().into_owned();
                if slug.starts_with('.')
                    || only.is_some_and(|o| !o.contains(&slug))
                    || !d.file_type().is_ok_and(|t| t.is_dir())
                {
                    continue;
                }
                let Ok(files) = std::fs::read_dir(d.path()) else {
                    continue;
                };
                let mut files: Vec<_> = files.flatten().collect();
                files.sort_by_key(|e| e.file_name());
                for f in files {
                    let name = f.file_name().to_string_lossy().into_owned();
                    // Every view write holds the lock we hold: a temp file here is what a
                    // killed writer left.
                    if is_temp_file(&name) {
                        let _ = std::fs::remove_file(f.path());
                        continue;
                    }
                    if name.starts_with('.')
                        || name == INDEX_FILE
                        || !name.to_ascii_lowercase().ends_with(".md")
                        || !f.file_type().is_ok_and(|t| t.is_file())
                    {
                        continue;
                    }
                    let rel = format!("{slug}/{name}");
                    if tracked.contains_key(&rel) {
                        continue;
                    }
                    match std::fs::read(f.path()).map(String::from_utf8) {
                        Ok(Ok(text)) => new_files.push((rel, slug.clone(), text)),
                        Ok(Err(_)) => report.problems.push(format!(
                            "{rel}: not UTF-8 text; file left as it is (save it as UTF-8)"
                        )),
                        Err(e) => report
                            .problems
                            .push(format!("{rel}: cannot be read ({e}); file left as it is")),
                    }
                }
            }
        }
        // A memory whose file was renamed by hand lives on in the new file.
        let claimed: HashSet<String> = new_files
            .iter()
            .filter_map(|(_, _, text)| parse_view(text).fields.get("id").cloned())
            .collect();
        if !edits.is_empty() || !new_files.is_empty() {
            self.recall_index()?;
            let slugs = scope_slugs(self.store.connection())?;
            let (tx, recall) = self.begin_write()?;
            for (rel, id, text) in edits {
                match apply_edit(&tx, recall, &id, &text, now) {
                    Ok(true) => {
                        report.edits += 1;
                        absorbed.insert(rel);
                    }
                    Ok(false) => {
                        absorbed.insert(rel);
                    }
                    Err(msg) => {
                        report
                            .problems
                            .push(format!("{rel}: {msg}; file left as it is"));
                        keep.insert(rel);
                    }
                }
            }
            for (rel, slug, text) in new_files {
                let view = parse_view(&text);
                if let Some(why) = view.broken() {
                    report
                        .problems
                        .push(format!("{rel}: {why}; file left as it is"));
                    keep.insert(rel);
                    continue;
                }
                // A known memory's file under another name is an edit of it (a renamed file);
                // beside the memory's own file, it is a copy made to start a new memory.
                let beside_its_original = |id: &str| {
                    tracked
                        .iter()
                        .any(|(r, t)| t.memory_id.as_deref() == Some(id) && root.join(r).is_file())
                };
                if let Some(id) = view.fields.get("id")
                    && !beside_its_original(id)
                    && get_memory(&tx, id)?.is_some_and(|m| m.is_live())
                {
                    match apply_edit(&tx, recall, id, &text, now) {
                        Ok(changed) => {
                            report.edits += usize::from(changed);
                            absorbed.insert(rel.clone());
                            remove_file(&root.join(&rel), &mut report);
                        }
                        Err(msg) => {
                            report
                                .problems
                                .push(format!("{rel}: {msg}; file left as it is"));
                        }
                    }
                    continue;
                }
                // A directory the database does not know (a database lost or replaced): the
                // file's own `scope` says, when its directory is that scope's.
                let scope = slugs.get(&slug).cloned().or_else(|| {
                    view.fields
                        .get("scope")
                        .filter(|s| scope_slug(s) == slug)
                        .cloned()
                        .or_else(|| (slug == scope_slug(GLOBAL)).then(|| GLOBAL.to_string()))
                });
                let Some(scope) = scope else {
                    report.problems.push(format!(
                        "{rel}: the directory {slug} belongs to no known project; file left as it is"
                    ));
                    keep.insert(rel);
                    continue;
                };
                let (rule, why, how) = parse_body(&view.body);
                if rule.is_empty() {
                    report
                        .problems
                        .push(format!("{rel}: no text to remember; file left as it is"));
                    keep.insert(rel);
                    continue;
                }
                let memory_type = view
                    .fields
                    .get("type")
                    .and_then(|t| MemoryType::parse(t))
                    .unwrap_or_else(|| classify(&rule));
                // A copy of a memory's file given other text: the name and description cairn
                // had derived from the original's text are not the copy's.
                let original = match view.fields.get("id") {
                    Some(id) => get_memory(&tx, id)?.filter(|m| m.is_live()),
                    None => None,
                };
                let derived_from_original =
                    |field: &str, stored: &dyn Fn(&Memory) -> (String, String)| {
                        original.as_ref().is_some_and(|o| {
                            let (value, derived) = stored(o);
                            view.fields.get(field) == Some(&value)
                                && value == derived
                                && o.rule != clean(&rule)
                        })
                    };
                let name = view.fields.get("name").cloned().filter(|_| {
                    !derived_from_original("name", &|o: &Memory| {
                        (o.name.clone(), derive_name(&o.rule))
                    })
                });
                let description = view.fields.get("description").cloned().filter(|_| {
                    !derived_from_original("description", &|o: &Memory| {
                        (
                            o.description.clone(),
                            derive_description(&o.rule, o.why.as_deref()),
                        )
                    })
                });
                // The file of a memory the database lost (moved aside and rebuilt) says
                // where the memory came from and when it was last changed: it keeps both, so
                // it is not "hand-written, saved today".
                let lost = match view.fields.get("id").filter(|id| is_memory_id(id)) {
                    Some(id) => get_memory(&tx, id)?.is_none(),
                    None => false,
                };
                let restored_source = view
                    .fields
                    .get("source")
                    .filter(|_| lost)
                    .and_then(|s| Source::from_description(s));
                let restored_at = view
                    .fields
                    .get("updated")
                    .filter(|_| lost)
                    .and_then(|t| crate::model::parse_time(t))
                    .filter(|&t| t > 0)
                    .map(|t| t.min(now));
                let new = NewMemory {
                    memory_type,
                    scope: scope.clone(),
                    rule,
                    why,
                    how,
                    name,
                    description,
                    source: restored_source.unwrap_or_else(|| Source {
                        kind: "view".into(),
                        path: Some(rel.clone()),
                        ..Source::default()
                    }),
                    at: restored_at.unwrap_or(now),
                };
                let out = write_new_in(&tx, recall, new, None, now)?;
                // A file the views kept of a memory the database lost (it was moved aside
                // and rebuilt): the memory keeps its id, so what names it still finds it.
                if out.action == Action::Created
                    && let Some(id) = view.fields.get("id").filter(|id| is_memory_id(id))
                    && get_memory(&tx, id)?.is_none()
                {
                    tx.execute(
                        "UPDATE memories SET id = ?2 WHERE id = ?1",
                        params![out.memory.id, id],
                    )?;
                    recall.remove(&tx, &out.memory.id)?;
                    if let Some(m) = get_memory(&tx, id)? {
                        recall.upsert(&tx, &crate::store::document(&m))?;
                    }
                }
                report.imported += 1;
                if matches!(out.action, Action::Unchanged | Action::Updated) {
                    report.problems.push(format!(
                        "{rel}: says what memory {} says; merged into it and the file removed",
                        out.memory.id
                    ));
                }
                remove_file(&root.join(&rel), &mut report);
            }
            tx.commit()?;
        }

        // 2b. A memory's file deleted by hand forgets the memory, as deleting a memory file
        // does for the agents. Only a deletion among its siblings counts: a scope directory
        // that lost its index or every memory file was wiped or moved, not edited, and is
        // written again (and said).
        let missing: Vec<(&str, &str)> = missing
            .into_iter()
            .filter(|(_, id)| !claimed.contains(*id))
            .collect();
        if !missing.is_empty() {
            let mut by_dir: BTreeMap<&str, Vec<(&str, &str)>> = BTreeMap::new();
            for (rel, id) in missing {
                by_dir
                    .entry(rel.split_once('/').map_or("", |(d, _)| d))
                    .or_default()
                    .push((rel, id));
            }
            let mut deleted: Vec<(&str, &str)> = Vec::new();
            for (dir, gone) in by_dir {
                let files_left = tracked.iter().any(|(rel, t)| {
                    t.memory_id.is_some()
                        && rel.split_once('/').is_some_and(|(d, _)| d == dir)
                        && root.join(rel).is_file()
                });
                // (A folder's only memory file deleted, its index left: that file.)
                if (files_left || gone.len() == 1) && root.join(dir).join(INDEX_FILE).is_file() {
                    deleted.extend(gone);
                } else {
                    report.problems.push(format!(
                        "{dir}: {} memory file(s) missing with the rest of the folder; written again (delete a single file to forget its memory, or use `cairn forget ID`)",
                        gone.len()
                    ));
                }
            }
            if !deleted.is_empty() {
                // An editor that saves by renaming the old file away and writing a new one
                // leaves the name empty for an instant: look again before believing it.
                std::thread::sleep(std::time::Duration::from_millis(150));
                deleted.retain(|(rel, _)| {
                    std::fs::symlink_metadata(root.join(rel))
                        .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
                });
            }
            if !deleted.is_empty() {
                let (tx, recall) = self.begin_write()?;
                for (rel, id) in deleted {
                    if get_memory(&tx, id)?.is_some_and(|m| m.is_live()) {
                        forget_in(&tx, recall, id, now)?;
                        report.forgotten += 1;
                        report
                            .problems
                            .push(format!("{rel}: deleted by hand; memory {id} forgotten"));
                    }
                }
                tx.commit()?;
            }
        }

        // 3. Regenerate.
        let conn = self.store.connection();
        let live = self.list(&crate::store::ListFilter {
            scopes: scopes.map_or_else(Vec::new, |s| s.iter().map(|s| (*s).to_string()).collect()),
            ..crate::store::ListFilter::default()
        })?;
        let mut by_scope: BTreeMap<&str, Vec<&Memory>> = BTreeMap::new();
        for m in &live {
            by_scope.entry(m.scope.as_str()).or_default().push(m);
        }
        let mut desired: BTreeMap<String, (String, Option<String>, String)> = BTreeMap::new();
        // Each memory's file as tracked (one left alone for its unreadable edit included: it
        // stays that memory's file).
        let current_file: HashMap<&str, &str> = tracked
            .iter()
            .filter(|(rel, _)| !rel.ends_with(INDEX_FILE))
            .filter_map(|(rel, t)| Some((t.memory_id.as_deref()?, rel.as_str())))
            .collect();
        for (scope, mems) in &by_scope {
            ensure_scope(conn, scope)?;
            let slug = scope_slug(scope);
            let mut ordered = mems.clone();
            ordered.sort_by(|a, b| a.created_at.cmp(&b.created_at).then(a.id.cmp(&b.id)));
            let mut files: HashMap<&str, String> = HashMap::new();
            let mut taken: HashSet<String> = HashSet::new();
            // A memory keeps the file it has: a file being edited does not move when the
            // edit changes the name or the type (saved again from the editor at the old
            // path, it would come back as a copy, a second memory).
            for m in &ordered {
                if let Some(name) = current_file.get(m.id.as_str())
                    && let Some((dir, file)) = name.split_once('/')
                    && dir == slug
                    && taken.insert(file.trim_end_matches(".md").to_owned())
                {
                    files.insert(m.id.as_str(), file.to_owned());
                }
            }
            for m in &ordered {
                if let Some(name) = files.get(m.id.as_str()) {
                    desired.insert(
                        format!("{slug}/{name}"),
                        (render_view(m), Some(m.id.clone()), (*scope).to_string()),
                    );
                    continue;
                }
                let stem = file_stem(m);
                let name = if taken.contains(&stem) {
                    format!("{stem}-{}.md", m.id)
                } else {
                    format!("{stem}.md")
                };
                taken.insert(stem);
                files.insert(m.id.as_str(), name.clone());
                desired.insert(
                    format!("{slug}/{name}"),
                    (render_view(m), Some(m.id.clone()), (*scope).to_string()),
                );
            }
            let mut useful = mems.clone();
            by_usefulness(&mut useful, now);
            let entries: Vec<(String, String, String)> = useful
                .iter()
                .map(|m| {
                    (
                        m.name.clone(),
                        files.get(m.id.as_str()).cloned().unwrap_or_default(),
                        m.description.clone(),
                    )
                })
                .collect();
            desired.insert(
                format!("{slug}/{INDEX_FILE}"),
                (render_index(&entries), None, (*scope).to_string()),
            );
        }
        for (rel, (content, id, scope)) in &desired {
            if keep.contains(rel) {
                continue;
            }
            let path = root.join(rel);
            // Never written through a link: a scope dir replaced by one is left as it is.
            // (Checked once per scope dir, as in step 1.)
            if path.parent().is_some_and(|d| {
                *linked_dirs
                    .entry(d.to_path_buf())
                    .or_insert_with(|| linked_in(&root, d))
            }) {
                continue;
            }
            let h = content_hash(content.as_bytes());
            let on_disk = std::fs::metadata(&path).ok();
            if let (Some(t), Some(md)) = (tracked.get(rel), &on_disk)
                && t.hash == h
                && md.len() as i64 == t.size
                && mtime_ns(md) == t.mtime_ns
            {
                continue;
            }
            let current = on_disk.as_ref().and_then(|_| std::fs::read(&path).ok());
            let same = current.as_deref() == Some(content.as_bytes());
            // The index is generated: a hand edit of it cannot be read back. It is kept beside
            // it, and said, instead of vanishing.
            if !same
                && rel.ends_with(INDEX_FILE)
                && let (Some(t), Some(bytes)) = (tracked.get(rel), current.as_deref())
                && content_hash(bytes) != t.hash
            {
                // A name not taken yet: an earlier kept edit is not overwritten.
                let kept = (1..)
                    .map(|n| match n {
                        1 => format!("{INDEX_FILE}.edited"),
                        n => format!("{INDEX_FILE}.edited-{n}"),
                    })
                    .map(|name| path.with_file_name(name))
                    .find(|p| std::fs::symlink_metadata(p).is_err())
                    .unwrap_or_else(|| path.with_file_name(format!("{INDEX_FILE}.edited")));
                write_atomic(&kept, bytes)?;
                report.problems.push(format!(
                    "{rel}: edited by hand; the index is generated from the memory files, so it was written again (your version is kept as {}). Add a memory as a new .md file in that folder instead.",
                    kept.file_name().map(|n| n.to_string_lossy()).unwrap_or_default()
                ));
            }
            if !same {
                write_atomic(&path, content.as_bytes())?;
                report.written += 1;
            }
            let md = std::fs::metadata(&path).map_err(|e| MemoryError::io(&path, e))?;
            conn.prepare_cached(
                "INSERT INTO memory_views(path, memory_id, scope, hash, size, mtime_ns, written_at)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT(path) DO UPDATE SET memory_id = excluded.memory_id, scope = excluded.scope,
                    hash = excluded.hash, size = excluded.size, mtime_ns = excluded.mtime_ns,
                    written_at = excluded.written_at",
            )?
            .execute(params![rel, id, scope, h, md.len() as i64, mtime_ns(&md), now])?;
        }
        // 4. Files of memories that are gone (forgotten, superseded, renamed).
        for (rel, t) in &tracked {
            if desired.contains_key(rel) {
                continue;
            }
            let path = root.join(rel);
            if linked_in(&root, &path) {
                // Not cairn's file any more: nothing is removed through a link.
            } else if std::fs::read(&path).is_ok_and(|b| content_hash(&b) == t.hash)
                || absorbed.contains(rel)
                || t.memory_id.is_none()
            {
                remove_file(&path, &mut report);
            } else if path.exists() {
                report.problems.push(format!(
                    "{rel}: edited by hand but its memory is gone; file left as it is"
                ));
            }
            conn.execute("DELETE FROM memory_views WHERE path = ?1", [rel])?;
            if let Some(dir) = path.parent() {
                let _ = std::fs::remove_dir(dir); // only succeeds when empty
            }
        }
        // What was forgotten, kept where a rebuilt database finds it.
        crate::tombstones::write(conn, &root)?;
        Ok(report)
    }
}

fn remove_file(path: &Path, report: &mut ViewReport) {
    if std::fs::remove_file(path).is_ok() {
        report.removed += 1;
    }
}

/// Whether some memory cairn keeps has `scope`.
fn known_scope(conn: &rusqlite::Connection, scope: &str) -> bool {
    conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM memories WHERE scope = ?1)",
        [scope],
        |r| r.get::<_, bool>(0),
    )
    .unwrap_or(false)
}

/// Reads an edited view file back into memory `id`. `Ok(false)`: nothing to change.
fn apply_edit(
    conn: &rusqlite::Connection,
    recall: &mut cairn_recall::Recall,
    id: &str,
    text: &str,
    now: i64,
) -> std::result::Result<bool, String> {
    let Ok(Some(mut m)) = get_memory(conn, id) else {
        return Err(format!("memory {id} is unknown"));
    };
    if !m.is_live() {
        return Err(format!("memory {id} was forgotten or replaced"));
    }
    let view = parse_view(text);
    if let Some(why) = view.broken() {
        return Err(why.into());
    }
    let (rule, why, how) = parse_body(&view.body);
    if rule.is_empty() {
        return Err("the body is empty (use `cairn forget` to drop a memory)".into());
    }
    let memory_type = match view.fields.get("type") {
        Some(t) => MemoryType::parse(t).ok_or_else(|| {
            format!("unknown type {t:?} (use user, feedback, project or reference)")
        })?,
        None => m.memory_type,
    };
    // The memory moved to another project, or made global, by its `scope` line: a project's
    // directory (any path in it: its git root is the scope) or `global`.
    let scope = match view.fields.get("scope").map(|s| s.trim()) {
        Some(s) if !s.is_empty() && s != m.scope => {
            if s == GLOBAL {
                GLOBAL.to_string()
            } else if Path::new(s).is_absolute() {
                let s = s.trim_end_matches('/');
                if Path::new(s).is_dir() {
                    crate::scope::project_scope(Path::new(s))
                } else if known_scope(conn, s) {
                    // A project cairn keeps memories of, whose directory is not here now.
                    s.to_string()
                } else {
                    return Err(format!(
                        "scope {s:?} is no directory here and no project cairn knows (a typo? \
                         give an existing project directory, or `global`)"
                    ));
                }
            } else {
                return Err(format!(
                    "scope {s:?} is neither `global` nor a project's absolute path"
                ));
            }
        }
        _ => m.scope.clone(),
    };
    let rule = clean(&rule);
    let why = why.map(|w| clean(&w));
    let how = how.map(|h| clean(&h));
    // A name or description left as it was, when cairn had derived it from the text that
    // changed, follows the new text (an edited body must not keep announcing the old rule in
    // the index and the session-start summary). One the user wrote, or changed now, stays.
    let text_changed = rule != m.rule || why != m.why;
    let kept_derived = |given: &str, stored: &str, derived: String| {
        text_changed && given == stored && stored == derived
    };
    let name = view
        .fields
        .get("name")
        .map(|n| clean(&one_line(n)))
        .filter(|n| !n.is_empty() && !kept_derived(n, &m.name, derive_name(&m.rule)))
        .unwrap_or_else(|| derive_name(&rule));
    let description = view
        .fields
        .get("description")
        .map(|d| clean(&one_line(d)))
        .filter(|d| {
            !d.is_empty()
                && !kept_derived(
                    d,
                    &m.description,
                    derive_description(&m.rule, m.why.as_deref()),
                )
        })
        .unwrap_or_else(|| derive_description(&rule, why.as_deref()));
    if rule == m.rule
        && why == m.why
        && how == m.how
        && name == m.name
        && description == m.description
        && memory_type == m.memory_type
        && scope == m.scope
    {
        return Ok(false);
    }
    let moved = scope != m.scope;
    m.scope = scope;
    m.memory_type = memory_type;
    m.keywords = keywords_for(memory_type, &format!("{name} {rule}"));
    m.name = name;
    m.description = description;
    m.body = render_body(&rule, why.as_deref(), how.as_deref());
    m.rule = rule;
    m.why = why;
    m.how = how;
    m.updated_at = now;
    update_fields(conn, recall, &m).map_err(|e| e.to_string())?;
    if moved {
        // Its file follows: the regeneration writes it in the new scope's folder and removes
        // the one read here.
        conn.execute(
            "UPDATE memories SET scope = ?2 WHERE id = ?1",
            params![m.id, m.scope],
        )
        .map_err(|e| e.to_string())?;
        ensure_scope(conn, &m.scope).map_err(|e| e.to_string())?;
    }
    Ok(true)
}

/// Whether `s` has the shape of the ids cairn gives memories (`m` and seven of
/// `23456789abcdefghjkmnpqrstuvwxyz`).
fn is_memory_id(s: &str) -> bool {
    s.len() == 8
        && s.starts_with('m')
        && s[1..]
            .bytes()
            .all(|b| b"23456789abcdefghjkmnpqrstuvwxyz".contains(&b))
}

/// Where a memory's view file is (relative to the views directory), once written.
pub fn view_path(conn: &rusqlite::Connection, id: &str) -> Result<Option<PathBuf>> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .query_row(
            "SELECT path FROM memory_views WHERE memory_id = ?1",
            [id],
            |r| r.get::<_, String>(0),
        )
        .optional()?
        .map(PathBuf::from))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_line_never_says_its_name_twice() {
        for (name, desc, tail) in [
            ("Use pnpm, not npm", "Use pnpm, not npm", ""),
            (
                "Use pnpm, not npm",
                "Use pnpm, not npm — this repo has a pnpm-lock.yaml",
                "this repo has a pnpm-lock.yaml",
            ),
            (
                "The staging dashboard",
                "The staging dashboard is https://grafana.example/d/staging: check it",
                "https://grafana.example/d/staging: check it",
            ),
            (
                "管理画面",
                "管理画面は https://admin.example/",
                "https://admin.example/",
            ),
            ("テストは英語で", "テストは英語で", ""),
            (
                "Deploys are frozen from Dec 20…",
                "Deploys are frozen from Dec 20 to Jan 3",
                "to Jan 3",
            ),
            // Other words, or more of the same word: the description as it is.
            ("Use pnpm", "Use pnpmfile hooks", "Use pnpmfile hooks"),
            (
                "Staging",
                "The staging DB resets nightly",
                "The staging DB resets nightly",
            ),
            // Words joined to a name without a link are kept ("is" says something).
            ("Friday", "Friday is release day", "is release day"),
        ] {
            assert_eq!(beyond_name(name, desc), tail, "{name:?} / {desc:?}");
        }
        let index = render_index(&[
            ("Use pnpm".into(), "a.md".into(), "Use pnpm".into()),
            ("Tabs".into(), "b.md".into(), "Tabs, not spaces".into()),
        ]);
        assert_eq!(index, "- [Use pnpm](a.md)\n- [Tabs](b.md) — not spaces\n");
        assert_eq!(
            name_and_description(
                "Never commit to main directly",
                "Never commit to main directly"
            ),
            "Never commit to main directly"
        );
        assert_eq!(
            name_and_description("Tabs", "Tabs, not spaces"),
            "Tabs — not spaces"
        );
        assert_eq!(
            name_and_description("Deploy freeze", "No deploys on Fridays"),
            "Deploy freeze — No deploys on Fridays"
        );
    }

    #[test]
    fn yaml_quoting_round_trips() {
        for v in [
            "plain words",
            "a: b",
            "has #hash",
            "#start",
            "true",
            "12",
            "it's \"quoted\"",
            "日本語",
        ] {
            let line = format!("k: {}", yaml_value(v));
            let view = parse_view(&format!("---\n{line}\n---\nbody"));
            assert_eq!(view.fields.get("k").map(String::as_str), Some(v), "{line}");
            assert_eq!(view.body, "body");
        }
    }

    /// A frontmatter that lost a `---` line, or both, is told apart from a body (and so is
    /// not read back as one); blank lines above a whole one do not hide it.
    #[test]
    fn a_frontmatter_missing_its_lines_is_no_body() {
        let fields =
            "name: Use pnpm\ndescription: Use pnpm, not npm\ntype: feedback\nid: m1234567\n";
        for text in [
            format!("{fields}---\n\nUse pnpm, not npm."),
            format!("\n{fields}---\n\nUse pnpm, not npm."),
            format!("  \n\n{fields}---\n\nUse pnpm, not npm."),
            format!("{fields}\nUse pnpm, not npm."),
            fields.to_string(),
        ] {
            let v = parse_view(&text);
            assert_eq!(v.broken(), Some(UNOPENED), "{text:?}");
        }
        let v = parse_view(&format!("\n\n---\n{fields}---\n\nUse pnpm, not npm."));
        assert_eq!(v.broken(), None);
        assert_eq!(v.fields.get("name").map(String::as_str), Some("Use pnpm"));
        assert_eq!(v.body, "Use pnpm, not npm.");
        // A note that only mentions a field or two is a note.
        let v = parse_view("Name: the ledger service\n\nOwned by payments.");
        assert_eq!(v.broken(), None);
    }

    #[test]
    fn no_frontmatter_is_all_body() {
        let v = parse_view("just text\n---\nmore");
        assert!(v.fields.is_empty());
        assert_eq!(v.body, "just text\n---\nmore");
    }

    #[test]
    fn index_respects_limits() {
        let entries: Vec<(String, String, String)> = (0..500)
            .map(|i| {
                (
                    format!("Memory {i}"),
                    format!("project_m{i}.md"),
                    "x".repeat(300),
                )
            })
            .collect();
        let idx = render_index(&entries);
        assert!(idx.lines().count() <= INDEX_MAX_LINES);
        assert!(idx.encode_utf16().count() <= INDEX_MAX_CHARS);
        assert!(idx.lines().all(|l| l.chars().count() <= 200));
        assert!(
            idx.lines()
                .last()
                .is_some_and(|l| l.contains("more memories"))
        );
        let long: Vec<(String, String, String)> = (0..190)
            .map(|i| (format!("M{i}"), format!("f{i}.md"), "日本語".repeat(60)))
            .collect();
        let idx = render_index(&long);
        assert!(idx.encode_utf16().count() <= INDEX_MAX_CHARS);
        // Whatever the last line that fits leaves, the closing line fits too.
        for width in 40..200 {
            let entries: Vec<(String, String, String)> = (0..400)
                .map(|i| {
                    (
                        format!("Note {i}"),
                        format!("project_note_{i}.md"),
                        "y".repeat(width + i % 7),
                    )
                })
                .collect();
            let idx = render_index(&entries);
            assert!(idx.encode_utf16().count() <= INDEX_MAX_CHARS, "{width}");
            assert!(idx.lines().count() <= INDEX_MAX_LINES, "{width}");
        }
    }
}
