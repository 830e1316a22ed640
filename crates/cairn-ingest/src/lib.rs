//! Incremental ingest: agent transcript files → the store.
//!
//! This crate owns the loop that keeps cairn's database in step with the agents' files: find
//! every transcript (via `cairn-transcript`'s layout), compare each with its stored cursor
//! (device/inode, size, mtime, a hash of its first bytes and of the bytes just before the
//! cursor), read only the appended complete lines, resume the parser where it stopped, redact
//! every kept text with `cairn-redact`, and upsert sessions and turns by their stable keys, so a
//! re-run never duplicates anything (a file Codex archived, moved to `archived_sessions/`, gives
//! the same turns: they are counted as moved, not updated, and name the new file). A truncated or replaced file (also one rewritten in place
//! to a greater size) is read again from the start, and so is a file read by an older version
//! of the parser (`PARSER_REVISION`, stored with the cursor); a last line still being written is
//! left for the next run. A Codex rollback read in a later pass than the turns it drops marks
//! their stored copies `rolled_back`, and a Codex thread's memory mode stated after its turns
//! were stored (`thread/memoryMode/set`) is given to all of them, in the same transaction as the
//! new cursor. A compressed rollout (`.jsonl.zst`) is read whole, and only when its compressed
//! bytes changed; a damaged one keeps the lines that decode before the damage. One full pass
//! runs at a time (`ingest.lock` in the data dir; a second one waits). Bad input is counted and
//! reported, never fatal; a Codex rollout none of whose lines is of a known rollout format is
//! reported as such (`unrecognised_files`), not read as an empty one. Once per version of the
//! redaction rules a full pass redacts the stored turns and digests again. It must not decide where files live (callers pass the roots), print
//! anything, or extract memories.

use std::borrow::Cow;
use std::cell::RefCell;
use std::fs;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::Serialize;

use cairn_redact::SeenSecrets;
use cairn_store::{FileCursor, Store, StoreError, TurnWritten};
use cairn_transcript::reader::{LineItem, StopAtError, read_lines_sized};
use cairn_transcript::zst::Damaged;
use cairn_transcript::{
    Agent, ClaudeRoot, CodexHome, FileKind, Parser, ParserState, Problem, Session, TranscriptFile,
    Turn,
};

/// How many bytes of a file's head identify it.
const HEAD_BYTES: u64 = 4096;
/// How many bytes just before the cursor identify what was read (a Codex `session_meta` line
/// alone is often longer than the head, so two versions of a session share their head).
const TAIL_BYTES: u64 = 4096;
/// Opens every parser state ingest stores: `{"parser_revision":<n>,…`. A state without it
/// was stored before revisions were recorded (revision 0).
const REVISION_PREFIX: &str = "{\"parser_revision\":";
/// Follows the revision in the parser state of a plain file: `"ingest_tail":[<len>,<hash>],…`
/// (the parser and the hook ignore both fields).
const TAIL_FIELD: &str = "\"ingest_tail\":[";
/// Follows the tail (or the revision) when the file held secrets: `"ingest_seen":[<seed>,<tag>…]`,
/// what [`SeenSecrets`] needs to mask their later copies in the turns read next time.
const SEEN_FIELD: &str = "\"ingest_seen\":[";
/// The lock file, in the database's directory, that one full pass holds.
pub const LOCK_FILE: &str = "ingest.lock";
/// A pass waits this long for another to finish, then runs anyway (nothing is lost when two
/// run at once; they only read the same bytes twice).
const LOCK_WAIT: Duration = Duration::from_secs(600);
/// Per file, at most this many problems are listed (all are counted).
const MAX_PROBLEMS_PER_FILE: usize = 20;
/// A write transaction covers parsed files until they add up to this many bytes read...
const BATCH_BYTES: u64 = 32 * 1024 * 1024;
/// ...or this many files.
const BATCH_FILES: usize = 256;

/// Ingest errors that stop the run (per-file problems never do).
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// The agent roots to read.
#[derive(Debug, Clone, Default)]
pub struct Sources {
    pub claude_root: Option<PathBuf>,
    pub codex_home: Option<PathBuf>,
}

impl Sources {
    /// Every transcript file under the roots, with the problems met while looking.
    pub fn discover(&self, problems: &mut Vec<Problem>) -> Vec<TranscriptFile> {
        let mut files = Vec::new();
        if let Some(root) = &self.claude_root {
            let root = ClaudeRoot::new(root);
            for p in root.projects(problems) {
                files.extend(p.session_files(problems));
                files.extend(p.subagent_files(problems));
            }
        }
        if let Some(home) = &self.codex_home {
            files.extend(CodexHome::new(home).rollouts(problems));
        }
        files
    }
}

/// Told about progress in bytes (a terminal bar, or nothing).
pub trait Progress {
    /// Another ingest holds the data dir's lock; this one waits for it (called once).
    fn waiting(&self) {}
    fn start(&self, _total_bytes: u64) {}
    fn advance(&self, _bytes: u64) {}
    fn finish(&self) {}
}

/// No progress display.
pub struct Quiet;
impl Progress for Quiet {}

/// What a run did. `turns` is the number of turns in the store after the run.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
pub struct IngestReport {
    pub files: u64,
    pub bytes: u64,
    pub turns: u64,
    pub new_turns: u64,
    /// Stored turns whose content changed (a turn read again unchanged is not counted).
    pub updated_turns: u64,
    /// Stored turns read again, unchanged, from a file at another path (Codex moved the
    /// rollout to `archived_sessions/`): they name the new file now.
    pub moved_turns: u64,
    pub skipped_lines: u64,
    /// Files read again from the start because they were truncated or replaced (or, for a
    /// compressed rollout, because its bytes changed).
    pub restarted_files: u64,
    /// Files read again from the start because an older version of cairn's transcript parser
    /// read them (`PARSER_REVISION`): what is stored from them is brought up to date.
    pub reparsed_files: u64,
    /// Of the new and updated turns, those of Codex threads whose memory generation is off
    /// (`memory_mode` `disabled`, …): stored like any turn, and never extracted.
    pub memory_disabled_turns: u64,
    /// Codex rollouts none of whose lines is of a rollout format cairn knows (each also in
    /// `errors`): nothing could be read from them.
    pub unrecognised_files: u64,
    /// Stored turns and turn digests whose text was redacted again because the redaction
    /// rules improved since they were stored (once per [`cairn_redact::RULES_VERSION`]).
    pub redacted_again: u64,
    pub errors: Vec<Problem>,
}

/// Ingests every transcript under `sources`.
pub fn ingest(
    store: &mut Store,
    sources: &Sources,
    progress: &dyn Progress,
) -> Result<IngestReport, IngestError> {
    let _lock = lock(store, progress);
    let mut report = IngestReport::default();
    let redaction_due = redaction_due(store)?;
    let files = sources.discover(&mut report.errors);
    let cursors = store.cursors()?;
    let seed = secrets_seed(store)?;
    // The secrets each file read in this run met (a subagent's transcript adopts its
    // session's main transcript's, read before it).
    let mut seen_now: std::collections::HashMap<String, Vec<u64>> = Default::default();

    // Plan: stat everything first so progress knows the total.
    let mut plan = Vec::new();
    let mut total = 0u64;
    for f in files {
        report.files += 1;
        let key = path_key(&f.path);
        let meta = match fs::symlink_metadata(&f.path) {
            Ok(m) => m,
            Err(e) => {
                report.errors.push(unreadable(&f.path, &e));
                continue;
            }
        };
        let id = Identity::of(&meta);
        let cursor = cursors.get(&key);
        if let Some(c) = cursor
            && id.same_as(c)
            && parsed_by_this_revision(c)
        {
            continue; // unchanged since the last run: not even opened
        }
        total += match cursor {
            Some(c) if !f.compressed && parsed_by_this_revision(c) => {
                id.size.saturating_sub(c.offset)
            }
            _ => id.size,
        };
        plan.push((f, cursor.cloned(), id));
    }
    progress.start(total);
    // Parsed files are written in batches, one transaction each: fewer commits (and WAL
    // frames for the pages every commit touches), while the write lock is held only for the
    // writing, never while parsing.
    let mut batch = Vec::new();
    let mut batch_bytes = 0u64;
    for (file, cursor, id) in plan {
        let parent = main_transcript_key(&file).and_then(|k| {
            seen_now
                .get(&k)
                .cloned()
                .or_else(|| cursors.get(&k).map(|c| stored_seen(c.state.as_deref())))
        });
        let secrets = FileSecrets {
            seed,
            parent: parent.unwrap_or_default(),
        };
        if let Some(parsed) = read_one(&file, cursor, id, &secrets, &mut report, progress) {
            let tags = stored_seen(parsed.cursor.state.as_deref());
            if !tags.is_empty() {
                seen_now.insert(parsed.cursor.path.clone(), tags);
            }
            batch_bytes += parsed.consumed;
            batch.push(parsed);
        }
        if batch_bytes >= BATCH_BYTES || batch.len() >= BATCH_FILES {
            write_batch(store, std::mem::take(&mut batch), &mut report)?;
            batch_bytes = 0;
        }
    }
    write_batch(store, batch, &mut report)?;
    if redaction_due {
        report.redacted_again = redact_stored_again(store)?;
    }
    progress.finish();
    report.turns = store.turn_count()?;
    Ok(report)
}

/// The store `meta` key holding the [`cairn_redact::RULES_VERSION`] the stored turns and
/// digests were last redacted with.
pub const REDACTION_MARK: &str = "turns_redaction_mark";

/// Whether the stored turns were redacted by older rules than this build's. A store with no
/// turns yet is marked as redacted by these rules (whatever is stored next is).
fn redaction_due(store: &Store) -> Result<bool, IngestError> {
    let version = cairn_redact::RULES_VERSION.to_string();
    if store.meta(REDACTION_MARK)?.as_deref() == Some(version.as_str()) {
        return Ok(false);
    }
    if store.turn_count()? == 0 {
        store.set_meta(REDACTION_MARK, &version)?;
        return Ok(false);
    }
    Ok(true)
}

/// Redacts every stored turn and digest again with this build's rules, and then marks the
/// store as redacted by them; returns how many rows changed. The transcripts themselves may
/// be gone (Claude Code deletes old ones), so the stored text is what is redacted: each
/// session's turns in file order, with the repeated-secret masking of ingest, so a value the
/// improved rules find is masked in every later turn of the session that repeats it too.
/// (What was masked before stays masked: the rules only add.)
fn redact_stored_again(store: &mut Store) -> Result<u64, IngestError> {
    let seed = secrets_seed(store)?;
    let mut changed = 0u64;
    for (agent, session_key) in store.sessions_with_turns()? {
        let mut seen = SeenSecrets::with_seed(seed);
        let mut fixed = Vec::new();
        for mut t in store.session_turns(agent, &session_key)? {
            let masked = t.turn.map_texts(|text| match seen.redact(text) {
                Cow::Owned(o) => Some(o),
                Cow::Borrowed(_) => None,
            });
            if masked {
                fixed.push(t);
            }
        }
        if fixed.is_empty() {
            continue;
        }
        let w = store.write()?;
        for t in &fixed {
            if w.upsert_turn(agent, &session_key, &t.turn, &t.source_path)? == TurnWritten::Changed
            {
                changed += 1;
            }
        }
        w.commit()?;
    }
    changed += store.rewrite_digests(|body| {
        let mut value: serde_json::Value = serde_json::from_str(body).ok()?;
        redact_strings(&mut value).then(|| value.to_string())
    })?;
    store.set_meta(REDACTION_MARK, &cairn_redact::RULES_VERSION.to_string())?;
    Ok(changed)
}

/// Redacts every string in `v` (not the keys of its objects); returns whether any changed.
fn redact_strings(v: &mut serde_json::Value) -> bool {
    match v {
        serde_json::Value::String(s) => match cairn_redact::redact(s) {
            Cow::Owned(o) if o != *s => {
                *s = o;
                true
            }
            _ => false,
        },
        serde_json::Value::Array(items) => {
            items.iter_mut().fold(false, |c, i| redact_strings(i) | c)
        }
        serde_json::Value::Object(map) => {
            map.values_mut().fold(false, |c, i| redact_strings(i) | c)
        }
        _ => false,
    }
}

/// Ingests one file (the hook path uses this for the transcript it is told about).
pub fn ingest_file(store: &mut Store, file: &TranscriptFile) -> Result<IngestReport, IngestError> {
    let mut report = IngestReport {
        files: 1,
        ..IngestReport::default()
    };
    let meta = match fs::symlink_metadata(&file.path) {
        Ok(m) => m,
        Err(e) => {
            report.errors.push(unreadable(&file.path, &e));
            return Ok(report);
        }
    };
    let id = Identity::of(&meta);
    let cursor = store.cursor(&path_key(&file.path))?;
    if cursor
        .as_ref()
        .is_some_and(|c| id.same_as(c) && parsed_by_this_revision(c))
    {
        report.turns = store.turn_count()?;
        return Ok(report);
    }
    let parent = match main_transcript_key(file) {
        Some(k) => store.cursor(&k)?.map(|c| stored_seen(c.state.as_deref())),
        None => None,
    };
    let secrets = FileSecrets {
        seed: secrets_seed(store)?,
        parent: parent.unwrap_or_default(),
    };
    if let Some(parsed) = read_one(file, cursor, id, &secrets, &mut report, &Quiet) {
        write_batch(store, vec![parsed], &mut report)?;
    }
    report.turns = store.turn_count()?;
    Ok(report)
}

/// The store's meta key of the seed every file's [`SeenSecrets`] starts with.
const SECRETS_SEED: &str = "seen_secrets_seed";

/// The seed of this store's secret tags, made once (random) and kept.
fn secrets_seed(store: &Store) -> Result<u64, IngestError> {
    if let Some(seed) = store.meta(SECRETS_SEED)?.and_then(|s| s.parse().ok()) {
        return Ok(seed);
    }
    let seed = SeenSecrets::new().seed();
    store.set_meta(SECRETS_SEED, &seed.to_string())?;
    Ok(seed)
}

/// What a file's secret masking starts from besides its own cursor.
struct FileSecrets {
    /// The store's seed ([`secrets_seed`]).
    seed: u64,
    /// The tags of the session's main transcript, for a subagent's transcript.
    parent: Vec<u64>,
}

/// The cursor key of the main transcript of a Claude Code subagent's session:
/// `<key>/<session>/subagents/…/agent-x.jsonl` → `<key>/<session>.jsonl`.
fn main_transcript_key(file: &TranscriptFile) -> Option<String> {
    if file.kind != FileKind::Subagent || file.session_hint.is_empty() {
        return None;
    }
    let session_dir = file.path.ancestors().find(|a| {
        a.file_name()
            .is_some_and(|n| n == file.session_hint.as_str())
    })?;
    Some(path_key(
        &session_dir
            .parent()?
            .join(format!("{}.jsonl", file.session_hint)),
    ))
}

/// Waits for the data dir's ingest lock (an in-memory store has none). `None` when there is
/// no lock to hold: no data dir, the lock file cannot be made, or the wait ran out.
fn lock(store: &Store, progress: &dyn Progress) -> Option<fs::File> {
    let path = store.path()?.parent()?.join(LOCK_FILE);
    let deadline = Instant::now() + LOCK_WAIT;
    let mut told = false;
    loop {
        match cairn_store::lockfile::try_lock_file(&path) {
            Ok(Some(f)) => return Some(f),
            Ok(None) if Instant::now() < deadline => {
                if !told {
                    progress.waiting();
                    told = true;
                }
                std::thread::sleep(Duration::from_millis(100));
            }
            Ok(None) | Err(_) => return None,
        }
    }
}

fn path_key(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// What identifies a file's content between runs.
#[derive(Debug, Clone, Copy)]
struct Identity {
    dev: u64,
    ino: u64,
    size: u64,
    mtime_ns: i64,
}

impl Identity {
    fn of(m: &fs::Metadata) -> Identity {
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            Identity {
                dev: m.dev(),
                ino: m.ino(),
                size: m.size(),
                mtime_ns: m.mtime().saturating_mul(1_000_000_000) + m.mtime_nsec(),
            }
        }
        #[cfg(not(unix))]
        {
            let mtime_ns = m
                .modified()
                .ok()
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos() as i64);
            Identity {
                dev: 0,
                ino: 0,
                size: m.len(),
                mtime_ns,
            }
        }
    }

    fn same_as(&self, c: &FileCursor) -> bool {
        self.dev == c.dev && self.ino == c.ino && self.size == c.size && self.mtime_ns == c.mtime_ns
    }
}

/// The problem of a file that cannot be opened or read.
fn unreadable(path: &Path, e: &dyn std::fmt::Display) -> Problem {
    Problem::new(path, None, format!("cannot read file: {e}"))
}

/// The hash of a file's first `head_len` bytes, and the `tail_len` bytes that end at `offset`.
fn head_and_tail(
    path: &Path,
    head_len: u64,
    offset: u64,
    tail_len: u64,
) -> io::Result<(u64, Vec<u8>)> {
    let mut f = fs::File::open(path)?;
    let mut buf = vec![0u8; head_len.min(HEAD_BYTES) as usize];
    f.read_exact(&mut buf)?;
    let head = xxhash_rust::xxh3::xxh3_64(&buf);
    let tail_len = tail_len.min(offset).min(TAIL_BYTES);
    buf.resize(tail_len as usize, 0);
    f.seek(SeekFrom::Start(offset - tail_len))?;
    f.read_exact(&mut buf)?;
    Ok((head, buf))
}

/// A compressed file's length and the hash of all its bytes (cheap next to decompressing it).
fn whole_hash(path: &Path) -> io::Result<(u64, u64)> {
    let mut f = fs::File::open(path)?;
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    let mut buf = vec![0u8; 256 * 1024];
    let mut len = 0u64;
    loop {
        match f.read(&mut buf) {
            Ok(0) => return Ok((len, h.digest())),
            Ok(n) => {
                h.update(&buf[..n]);
                len += n as u64;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// The parser revision a stored state was written by (0: before revisions were recorded).
fn stored_revision(state: Option<&str>) -> u32 {
    state
        .and_then(|s| s.strip_prefix(REVISION_PREFIX))
        .and_then(|rest| rest.split_once([',', '}']))
        .and_then(|(n, _)| n.parse().ok())
        .unwrap_or(0)
}

/// Whether the file behind cursor `c` was read by this version of the parser.
fn parsed_by_this_revision(c: &FileCursor) -> bool {
    stored_revision(c.state.as_deref()) == cairn_transcript::PARSER_REVISION
}

/// The (length, hash) of the bytes before the cursor, kept in front of its parser state.
fn stored_tail(state: Option<&str>) -> Option<(u64, u64)> {
    let rest = state?.strip_prefix(REVISION_PREFIX)?.split_once(',')?.1;
    let rest = rest.strip_prefix(TAIL_FIELD)?;
    let (nums, _) = rest.split_once(']')?;
    let (len, hash) = nums.split_once(',')?;
    Some((len.parse().ok()?, hash.parse().ok()?))
}

/// The tags of the secrets seen in the file before cursor `c` (none for a state without them).
fn stored_seen(state: Option<&str>) -> Vec<u64> {
    let Some(rest) = state.and_then(|s| s.strip_prefix(REVISION_PREFIX)) else {
        return Vec::new();
    };
    let rest = rest.trim_start_matches(|c: char| c.is_ascii_digit());
    let rest = match rest
        .strip_prefix(',')
        .and_then(|r| r.strip_prefix(TAIL_FIELD))
    {
        Some(tail) => tail.split_once(']').map_or("", |(_, r)| r),
        None => rest,
    };
    rest.strip_prefix(',')
        .and_then(|r| r.strip_prefix(SEEN_FIELD))
        .and_then(|r| r.split_once(']'))
        .map(|(nums, _)| nums.split(',').filter_map(|n| n.parse().ok()).collect())
        .unwrap_or_default()
}

/// What masks, in text of the transcript behind cursor `c` not read yet (an agent's last
/// message handed to a hook), the secrets ingest met in the file before the cursor.
pub fn seen_secrets(c: &FileCursor) -> SeenSecrets {
    SeenSecrets::from_tags(&stored_seen(c.state.as_deref()))
}

thread_local! {
    /// The secrets met so far in the file this thread is parsing ([`SeenScope`]).
    static SEEN: RefCell<Option<SeenSecrets>> = const { RefCell::new(None) };
}

/// The parser's text filter: the redactor's rules, and every later copy of a secret they
/// found before in the same file. (The parser takes a plain function; the file's secrets are
/// this thread's while [`SeenScope`] lasts.)
fn redact_seen(text: &str) -> Cow<'_, str> {
    SEEN.with_borrow_mut(|seen| match seen {
        Some(seen) => seen.redact(text),
        None => cairn_redact::redact(text),
    })
}

/// The secrets of the file being parsed on this thread, from `enter` to `finish` (or drop).
struct SeenScope;

impl SeenScope {
    fn enter(seen: SeenSecrets) -> SeenScope {
        SEEN.set(Some(seen));
        SeenScope
    }

    fn finish(self) -> SeenSecrets {
        SEEN.take().unwrap_or_default()
    }
}

impl Drop for SeenScope {
    fn drop(&mut self) {
        SEEN.set(None);
    }
}

/// Whether the plain transcript at `path` can still be read on from its stored cursor (see
/// `can_resume`): the Stop hook asks before it resumes its parser there.
pub fn cursor_still_valid(path: &Path, c: &FileCursor) -> bool {
    fs::metadata(path).is_ok_and(|m| can_resume(path, c, Identity::of(&m)))
}

/// Whether reading can go on from cursor `c`: the same file (device, inode, the head it had),
/// no shorter than what was read, and still holding, just before the cursor, the bytes read
/// there (a line end; for cursors that stored it, the hash of the window before it), read by
/// this version of the parser. A file rewritten in place to a greater size fails this and is
/// read again from the start.
fn can_resume(path: &Path, c: &FileCursor, id: Identity) -> bool {
    if c.dev != id.dev || c.ino != id.ino || id.size < c.offset || !parsed_by_this_revision(c) {
        return false;
    }
    let tail = stored_tail(c.state.as_deref());
    let tail_len = tail.map_or(1, |(len, _)| len);
    if tail_len > TAIL_BYTES || tail_len > c.offset || (c.offset > 0 && tail_len == 0) {
        return false; // not a window this crate wrote
    }
    let Ok((head, window)) = head_and_tail(path, c.head_len, c.offset, tail_len) else {
        return false;
    };
    head == c.head_hash
        && (c.offset == 0 || window.last() == Some(&b'\n'))
        && tail.is_none_or(|(_, hash)| xxhash_rust::xxh3::xxh3_64(&window) == hash)
}

/// One file read and parsed, waiting to be written.
struct ParsedFile {
    agent: Agent,
    project_key: Option<String>,
    /// Turns closed in this read, in file order.
    closed: Vec<Turn>,
    /// The turn still open at the end of the read, with its encoded body.
    current: Option<(Turn, Option<String>)>,
    /// Keys of turns stored by an earlier pass that a rollback read in this one dropped.
    rolled_back: Vec<String>,
    /// The Codex thread's memory mode, when this pass read a change of it: every stored turn
    /// of the session takes it (`Some(None)`: enabled again).
    memory_mode_change: Option<Option<String>>,
    session: Session,
    /// The cursor to save; its `state` already holds the parser state.
    cursor: FileCursor,
    consumed: u64,
}

/// Reads the new part of one file and parses it; `None` when nothing can be stored from this
/// pass (the file could not be read; the problem is in the report).
fn read_one(
    file: &TranscriptFile,
    cursor: Option<FileCursor>,
    id: Identity,
    secrets: &FileSecrets,
    report: &mut IngestReport,
    progress: &dyn Progress,
) -> Option<ParsedFile> {
    let key = path_key(&file.path);
    // A compressed rollout is written whole: it is read whole, and only when its bytes changed.
    let mut compressed_identity = None;
    if file.compressed {
        let (len, hash) = match whole_hash(&file.path) {
            Ok(h) => h,
            Err(e) => {
                report.errors.push(unreadable(&file.path, &e));
                return None;
            }
        };
        if let Some(c) = cursor.as_ref().filter(|c| c.head_len > 0) {
            if !parsed_by_this_revision(c) {
                report.reparsed_files += 1;
            } else if c.head_len == len && c.head_hash == hash {
                // The same bytes (copied, touched, restored): remember its new identity only.
                return Some(ParsedFile {
                    agent: file.agent,
                    project_key: file.project_key.clone(),
                    closed: Vec::new(),
                    current: None,
                    rolled_back: Vec::new(),
                    memory_mode_change: None,
                    session: Session::default(),
                    cursor: FileCursor {
                        dev: id.dev,
                        ino: id.ino,
                        size: if len == id.size { id.size } else { 0 },
                        mtime_ns: id.mtime_ns,
                        ..c.clone()
                    },
                    consumed: 0,
                });
            } else {
                report.restarted_files += 1;
            }
        }
        compressed_identity = Some((len, hash));
    }
    // Decide where to start: continue from the cursor when the file is the same file, grown.
    // `Some(current revision?)` when there is a cursor.
    let cursor_revision = cursor.as_ref().map(parsed_by_this_revision);
    let resume = cursor.filter(|c| !file.compressed && can_resume(&file.path, c, id));
    // Counted once the file opens: one that cannot be read is an error, not a restart (on
    // every run it stays unreadable).
    let read_again = if resume.is_none() && !file.compressed {
        cursor_revision
    } else {
        None
    };
    let mut seen = match &resume {
        Some(c) => match stored_seen(c.state.as_deref()) {
            own if own.is_empty() => SeenSecrets::with_seed(secrets.seed),
            own => SeenSecrets::from_tags(&own),
        },
        None => SeenSecrets::with_seed(secrets.seed),
    };
    seen.adopt(&secrets.parent);
    let seen = SeenScope::enter(seen);
    let (offset, first_line, state, prior_skipped) = match &resume {
        Some(c) => (
            c.offset,
            c.line,
            c.state
                .as_deref()
                .and_then(|s| serde_json::from_str::<ParserState>(s).ok()),
            c.skipped_lines,
        ),
        None => (0, 0, None, 0),
    };
    let mut parser = match state {
        Some(s) => Parser::resume(file.agent, s),
        None => Parser::resume(file.agent, initial_state(file)),
    }
    .with_filter(redact_seen);

    // Only plain files resume (see above): one of those is opened at the cursor.
    let opened = if offset > 0 {
        fs::File::open(&file.path)
            .and_then(|mut f| {
                f.seek(SeekFrom::Start(offset))?;
                Ok(f)
            })
            .map(|f| Box::new(f) as Box<dyn Read>)
    } else {
        cairn_transcript::open_transcript(&file.path, file.compressed)
    };
    let reader = match opened {
        Ok(r) => r,
        Err(e) => {
            report.errors.push(unreadable(&file.path, &e));
            return None;
        }
    };
    match read_again {
        Some(false) => report.reparsed_files += 1,
        Some(true) => report.restarted_files += 1,
        None => {}
    }

    let mut skipped = 0u64;
    let mut listed = 0usize;
    let mut closed: Vec<Turn> = Vec::new();
    let mut rolled_back = Vec::new();
    let mut memory_mode_changed = false;
    let mut problems = Vec::new();
    let expected = (!file.compressed).then(|| id.size.saturating_sub(offset));
    // A damaged compressed file ends the reading where the damage starts; the lines before it
    // are kept.
    let mut reader = StopAtError::new(reader);
    let read = read_lines_sized(&mut reader, first_line, expected, |item| match item {
        LineItem::Line { bytes, number } => {
            let (res, lossy) = parser.feed_bytes(bytes, number);
            if let Err(e) = res {
                skipped += 1;
                if listed < MAX_PROBLEMS_PER_FILE {
                    listed += 1;
                    problems.push(Problem::new(
                        &file.path,
                        Some(number),
                        format!("skipped: {e}"),
                    ));
                }
            } else if lossy && listed < MAX_PROBLEMS_PER_FILE {
                listed += 1;
                problems.push(Problem::new(
                    &file.path,
                    Some(number),
                    "text replaced (invalid UTF-8 or a lone surrogate), line kept",
                ));
            }
            closed.extend(parser.take_closed());
            // A rollback drops turns: those of this pass are marked here, those stored by an
            // earlier pass in the write.
            for key in parser.take_rolled_back() {
                match closed
                    .iter_mut()
                    .rev()
                    .find(|t| t.key == key && !t.rolled_back)
                {
                    Some(t) => t.rolled_back = true,
                    None => rolled_back.push(key),
                }
            }
            // The thread's memory mode holds for all its turns: those of this pass take it
            // here, those stored by an earlier pass in the write.
            if parser.take_memory_mode_change() {
                memory_mode_changed = true;
                let mode = parser.state().effective_memory_mode().map(str::to_owned);
                for t in &mut closed {
                    t.memory_mode.clone_from(&mode);
                }
            }
        }
        LineItem::TooLong { number, len } => {
            skipped += 1;
            if listed < MAX_PROBLEMS_PER_FILE {
                listed += 1;
                problems.push(Problem::new(
                    &file.path,
                    Some(number),
                    format!("skipped: line of {len} bytes exceeds the limit"),
                ));
            }
        }
    });
    let read = match (read.as_ref(), reader.error()) {
        (Ok(r), None) => *r,
        (Ok(r), Some(e)) if Damaged::of(e).is_some() => {
            let damage = Damaged::of(e).map(ToString::to_string).unwrap_or_default();
            let what = if r.lines == 0 {
                format!(
                    "compressed file is truncated or damaged before its first complete line \
                     ({damage}); nothing could be read from it"
                )
            } else {
                format!(
                    "compressed file is truncated or damaged after {} line(s) ({damage}); \
                     the lines before were kept",
                    r.lines
                )
            };
            problems.push(Problem::new(&file.path, None, what));
            *r
        }
        (Err(e), _) | (Ok(_), Some(e)) => {
            // An I/O error: store nothing from this pass; the next run retries.
            let e = e.to_string();
            report
                .errors
                .push(Problem::new(&file.path, None, format!("read failed: {e}")));
            return None;
        }
    };
    if skipped > MAX_PROBLEMS_PER_FILE as u64 {
        problems.push(Problem::new(
            &file.path,
            None,
            format!("{skipped} lines skipped in total"),
        ));
    }
    // A file whose every record is of a shape no Codex rollout has (another tool's JSONL, a
    // format newer or older than any this parser knows) would otherwise read as empty.
    let state = parser.state();
    if file.agent == Agent::Codex
        && read.consumed > 0
        && state.known_format_lines == 0
        && state.unknown_format_lines > 0
    {
        report.unrecognised_files += 1;
        problems.push(Problem::new(
            &file.path,
            None,
            format!(
                "not a Codex rollout format cairn knows: none of its {} JSON line(s) has the \
                 shape of a rollout record, so nothing was read from it",
                state.unknown_format_lines
            ),
        ));
    }
    report.errors.extend(problems);
    report.skipped_lines += skipped;
    report.bytes += read.consumed;
    progress.advance(read.consumed);

    let new_offset = offset + read.consumed;
    // What identifies the content read: for a compressed file its bytes; for a plain one its
    // head and the window before the new cursor.
    let (head_len, head, tail) = match compressed_identity {
        Some((len, hash)) => (len, hash, None),
        None => {
            let len = new_offset.min(HEAD_BYTES);
            let tail_len = new_offset.min(TAIL_BYTES);
            match head_and_tail(&file.path, len, new_offset, tail_len) {
                Ok((h, window)) => (
                    len,
                    h,
                    Some((tail_len, xxhash_rust::xxh3::xxh3_64(&window))),
                ),
                Err(_) => (0, 0, None),
            }
        }
    };
    let session = parser.session().clone();
    let memory_mode_change =
        memory_mode_changed.then(|| parser.state().effective_memory_mode().map(str::to_owned));
    let (closed_now, mut state) = parser.into_parts();
    let seen = seen.finish();
    let seen_field = if seen.is_empty() {
        String::new()
    } else {
        let tags: Vec<String> = seen.tags().iter().map(u64::to_string).collect();
        format!(",{SEEN_FIELD}{}]", tags.join(","))
    };
    closed.extend(closed_now);
    // The open turn is encoded once: as its row's body, and spliced into the parser state
    // (the state without it, plus a `current` field; JSON objects do not care about order).
    let current = state.current.take().map(|t| {
        let body = serde_json::to_string(&t).ok();
        (t, body)
    });
    let state = match &current {
        Some((_, Some(body))) => serde_json::to_string(&state).ok().map(|rest| {
            if rest.len() > 2 {
                format!("{{\"current\":{body},{}", &rest[1..])
            } else {
                format!("{{\"current\":{body}}}")
            }
        }),
        Some((t, None)) => {
            // Cannot happen for a `Turn`; keep the state whole anyway (the turn's own
            // write below reports the encoding error).
            state.current = Some(t.clone());
            serde_json::to_string(&state).ok()
        }
        None => serde_json::to_string(&state).ok(),
    };
    let revision = cairn_transcript::PARSER_REVISION;
    let state = state.map(|s| {
        let fields = s.get(1..s.len().saturating_sub(1)).unwrap_or_default();
        let sep = if fields.is_empty() { "" } else { "," };
        match tail {
            Some((len, hash)) => format!(
                "{REVISION_PREFIX}{revision},{TAIL_FIELD}{len},{hash}]{seen_field}{sep}{fields}}}"
            ),
            None => format!("{REVISION_PREFIX}{revision}{seen_field}{sep}{fields}}}"),
        }
    });
    Some(ParsedFile {
        agent: file.agent,
        project_key: file.project_key.clone(),
        closed,
        current,
        rolled_back,
        memory_mode_change,
        cursor: FileCursor {
            path: key,
            agent: file.agent.as_str().to_owned(),
            kind: file.kind.as_str().to_owned(),
            session_key: Some(session.key()),
            dev: id.dev,
            ino: id.ino,
            // When the file changed while we read it, remember a size that forces a look next
            // time.
            size: match compressed_identity {
                Some((len, _)) if len == id.size => id.size,
                Some(_) => 0,
                None if new_offset + read.pending > id.size => 0,
                None => id.size,
            },
            mtime_ns: id.mtime_ns,
            head_len,
            head_hash: head,
            offset: new_offset,
            line: first_line + read.lines,
            state,
            skipped_lines: prior_skipped + skipped,
        },
        session,
        consumed: read.consumed,
    })
}

/// Writes parsed files in one transaction.
fn write_batch(
    store: &mut Store,
    batch: Vec<ParsedFile>,
    report: &mut IngestReport,
) -> Result<(), IngestError> {
    if batch.is_empty() {
        return Ok(());
    }
    let w = store.write()?;
    for p in batch {
        let session_key = p.cursor.session_key.as_deref().unwrap_or_default();
        let path = p.cursor.path.as_str();
        // A stored turn read again counts as updated only when its content changed; read
        // unchanged from a file at another path (an archived rollout), as moved.
        let mut count = |t: &Turn, written: TurnWritten| {
            match written {
                TurnWritten::New => report.new_turns += 1,
                TurnWritten::Changed => report.updated_turns += 1,
                TurnWritten::Moved => report.moved_turns += 1,
                TurnWritten::Same => {}
            }
            if matches!(written, TurnWritten::New | TurnWritten::Changed)
                && t.memory_generation_off()
            {
                report.memory_disabled_turns += 1;
            }
        };
        for t in &p.closed {
            count(t, w.upsert_turn(p.agent, session_key, t, path)?);
        }
        if let Some((t, body)) = &p.current {
            let written = match body {
                Some(body) => w.upsert_turn_body(p.agent, session_key, t, body, path)?,
                None => w.upsert_turn(p.agent, session_key, t, path)?,
            };
            count(t, written);
        }
        if let Some(mode) = &p.memory_mode_change {
            let marked = w.set_session_memory_mode(p.agent, session_key, mode.as_deref())?;
            report.updated_turns += marked.changed;
            if mode.is_some() {
                report.memory_disabled_turns += marked.changed;
            }
            if !marked.unreadable.is_empty() {
                report.errors.push(Problem::new(
                    Path::new(path),
                    None,
                    format!(
                        "cannot give {} stored turn(s) the thread's memory mode: their stored \
                         data cannot be read",
                        marked.unreadable.len()
                    ),
                ));
            }
        }
        for key in &p.rolled_back {
            match w.mark_turn_rolled_back(p.agent, session_key, key) {
                Ok(true) => report.updated_turns += 1,
                Ok(false) => {}
                Err(StoreError::Corrupt(why)) => report.errors.push(Problem::new(
                    Path::new(path),
                    None,
                    format!("cannot mark a rolled-back turn: {why}"),
                )),
                Err(e) => return Err(e.into()),
            }
        }
        if !p.session.id.is_empty() {
            w.upsert_session(p.agent, &p.session, p.project_key.as_deref(), path)?;
        }
        w.save_cursor(&p.cursor)?;
    }
    w.commit()?;
    Ok(())
}

/// A new file's parser state: the session id its name implies; subagent files are sidechain
/// sessions of their own (`<session>/<agent id>`) even before a record says so.
fn initial_state(file: &TranscriptFile) -> ParserState {
    let mut st = ParserState::default();
    st.session.id = file.session_hint.clone();
    if file.kind == FileKind::Subagent {
        st.sidechain = true;
        let stem = file
            .path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("")
            .trim_end_matches(".jsonl");
        let agent = stem.strip_prefix("agent-").unwrap_or(stem);
        st.session.subagent = Some(agent.to_owned());
    }
    st
}

/// Convenience for callers that only know an agent and a path (e.g. a hook payload).
pub fn transcript_for_path(agent: Agent, path: &Path) -> TranscriptFile {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
    let compressed = name.ends_with(".zst");
    let stem = name.trim_end_matches(".zst").trim_end_matches(".jsonl");
    let is_sub = path
        .parent()
        .and_then(|p| p.file_name())
        .is_some_and(|n| n == "subagents");
    let (kind, hint) = match agent {
        Agent::Codex => (
            FileKind::Rollout,
            stem.get(stem.len().saturating_sub(36)..)
                .unwrap_or(stem)
                .to_owned(),
        ),
        Agent::Claude if is_sub => (
            FileKind::Subagent,
            path.parent()
                .and_then(|p| p.parent())
                .and_then(|p| p.file_name())
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_owned(),
        ),
        Agent::Claude => (FileKind::Session, stem.to_owned()),
    };
    let project_key = match (agent, kind) {
        (Agent::Claude, FileKind::Session) => path.parent(),
        (Agent::Claude, _) => path
            .parent()
            .and_then(|p| p.parent())
            .and_then(|p| p.parent()),
        _ => None,
    }
    .and_then(|p| p.file_name())
    .and_then(|n| n.to_str())
    .map(str::to_owned);
    TranscriptFile {
        path: path.to_path_buf(),
        agent,
        kind,
        session_hint: hint,
        compressed,
        project_key,
    }
}
