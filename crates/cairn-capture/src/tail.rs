//! Finding the turn that just ended from the end of a transcript, without reading the file.
//!
//! The file is read backwards in chunks from its end to the line that starts the turn (Codex: the
//! `task_started`/`turn_started` event with the hook's `turn_id`; Claude Code: the last real user
//! prompt), then parsed forward from there with the shared [`Parser`]. When the store already has
//! a cursor inside the file, the backward scan stops at it: a turn that began before the cursor is
//! resumed from the parser state saved there, so no byte before the cursor is ever read again.
//!
//! Time is linear in the bytes read: each byte is read once, and a line that spans read steps is
//! kept as its pieces and put together once. The hook searches within [`Limits::HOOK`] (one line
//! of at most 8 MiB held, at most 64 MiB read); past them the search gives up
//! ([`Lookup::TooLarge`]) and the turn is left to the worker, which searches with
//! [`Limits::WORKER`] (no line over the 256 MiB ingest keeps) within the bytes the file had
//! at the Stop.

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};

use memchr::memmem;
use serde::Deserialize;

use cairn_transcript::reader::{LineItem, read_lines};
use cairn_transcript::{Agent, Event, Parser, ParserState, TranscriptFile, Turn};

use crate::CaptureError;

/// Bytes read by the first step of the backward scan; each further step doubles, up to
/// [`MAX_CHUNK`] (most turns end within the first step).
const CHUNK: u64 = 64 * 1024;
const MAX_CHUNK: u64 = 1024 * 1024;

/// How much of the file a search may hold and read. The hook is on the agent's clock: it looks
/// at most [`Limits::HOOK`] and leaves anything bigger to the worker (which ingests the file
/// and finds the turn with [`Limits::WORKER`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// The longest line assembled in memory; a longer line stops the search.
    pub max_line: u64,
    /// The most bytes read backwards from the end; reaching it stops the search.
    pub max_scan: u64,
}

impl Limits {
    /// The Stop hook's: a line up to 8 MiB, 64 MiB of tail.
    pub const HOOK: Limits = Limits {
        max_line: 8 * 1024 * 1024,
        max_scan: 64 * 1024 * 1024,
    };
    /// No limit: time stays linear in the bytes read and memory in the longest line.
    pub const NONE: Limits = Limits {
        max_line: u64::MAX,
        max_scan: u64::MAX,
    };
    /// The worker's, off the agent's clock: the whole file, but no line longer than ingest
    /// keeps (a multi-gigabyte file without a newline is not held in memory).
    pub const WORKER: Limits = Limits {
        max_line: cairn_transcript::reader::MAX_LINE_BYTES as u64,
        max_scan: u64::MAX,
    };
}

/// Where an earlier read of the file stopped: a byte offset at a line boundary and the parser
/// state there (the store's cursor).
#[derive(Debug, Clone)]
pub struct ResumePoint {
    pub offset: u64,
    /// Lines before `offset`.
    pub line: u64,
    pub state: ParserState,
}

/// The turn found, with the session key the parser saw.
#[derive(Debug, Clone)]
pub struct FoundTurn {
    pub turn: Turn,
    pub session_key: String,
    /// Bytes of the file read to find and parse it (some twice: scanned, then parsed).
    pub bytes_read: u64,
    /// The lowest file offset read: nothing before it was touched.
    pub read_from: u64,
    /// Bytes copied to put together lines that spanned read steps (each such byte once).
    pub bytes_copied: u64,
}

/// What a search found.
#[derive(Debug, Clone)]
pub enum Lookup {
    /// (Boxed: a turn is far larger than what the other answers hold.)
    Found(Box<FoundTurn>),
    /// No such turn in the file.
    NotFound,
    /// The search hit its [`Limits`] before the turn's first line: the turn is left to a search
    /// without limits.
    TooLarge {
        /// File length when the search began: the turn ended within these bytes.
        len: u64,
        /// Bytes read before giving up.
        bytes_read: u64,
        /// The most bytes held at once for one line.
        peak_line: u64,
        /// What stopped it (for the log).
        why: String,
    },
}

impl Lookup {
    pub fn found(self) -> Option<FoundTurn> {
        match self {
            Lookup::Found(f) => Some(*f),
            _ => None,
        }
    }
}

/// Counters of one search.
#[derive(Debug, Default)]
struct Stats {
    read: u64,
    lowest: u64,
    copied: u64,
    /// The longest partial line held so far.
    peak_line: u64,
    limits: Option<Limits>,
}

/// What a backward scan found.
enum Scan {
    Found(u64),
    NotFound,
    /// A limit was reached (the reason).
    Limit(String),
}

/// Finds the turn that just ended. Codex: `turn_id` names it (without one, the last turn);
/// Claude Code: the last turn that starts with a user prompt. Only the file's first `len` bytes
/// as found when the search begins are read (`end` narrows them further: the file as it was
/// when the turn ended).
pub fn find_turn(
    file: &TranscriptFile,
    turn_id: Option<&str>,
    resume: Option<ResumePoint>,
    limits: Limits,
) -> Result<Lookup, CaptureError> {
    find_turn_before(file, turn_id, resume, limits, None)
}

/// [`find_turn`] within the file's first `end` bytes (`None`: all of it).
pub fn find_turn_before(
    file: &TranscriptFile,
    turn_id: Option<&str>,
    resume: Option<ResumePoint>,
    limits: Limits,
    end: Option<u64>,
) -> Result<Lookup, CaptureError> {
    if file.compressed {
        return Err(CaptureError::Transcript(format!(
            "{} is compressed; a live transcript is never compressed",
            file.path.display()
        )));
    }
    let io_err = |e: io::Error| {
        CaptureError::Transcript(format!("cannot read {}: {e}", file.path.display()))
    };
    let mut f = File::open(&file.path).map_err(io_err)?;
    let file_len = f.metadata().map_err(io_err)?.len();
    let len = end.map_or(file_len, |e| e.min(file_len));
    let resume = resume.filter(|r| r.offset <= len);
    let floor = resume.as_ref().map_or(0, |r| r.offset);
    let mut st = Stats {
        lowest: len,
        limits: Some(limits),
        ..Stats::default()
    };
    let too_large = |st: &Stats, why: String| Lookup::TooLarge {
        len,
        bytes_read: st.read,
        peak_line: st.peak_line,
        why,
    };
    let codex_id = turn_id.map(|t| format!("\"{t}\""));
    let mut is_start = |line: &[u8]| match file.agent {
        Agent::Codex => is_codex_turn_start(line, codex_id.as_deref()),
        Agent::Claude => says_type_user(line) && is_claude_prompt(line),
    };

    let start = match scan_back(&mut f, len, floor, &mut st, &mut is_start).map_err(io_err)? {
        Scan::Found(at) => Some(at),
        Scan::NotFound => None,
        Scan::Limit(why) => return Ok(too_large(&st, why)),
    };

    // Not after the cursor: the turn began before it. Resume from the saved state when that
    // state is inside the turn; otherwise the turn ended before the cursor (already ingested,
    // e.g. a repeated Stop): keep scanning backwards below it.
    let start = match (start, &resume) {
        (None, Some(r)) if !state_holds_turn(&r.state, file.agent, turn_id) => {
            match scan_back(&mut f, r.offset, 0, &mut st, &mut is_start).map_err(io_err)? {
                Scan::Found(at) => Some(at),
                Scan::NotFound => return Ok(Lookup::NotFound),
                Scan::Limit(why) => return Ok(too_large(&st, why)),
            }
        }
        _ => start,
    };
    let (mut parser, from, first_line) = match (start, resume) {
        (Some(off), _) => (Parser::new(file.agent, &file.session_hint), off, 0),
        (None, Some(r)) => (Parser::resume(file.agent, r.state), r.offset, r.line),
        (None, None) => return Ok(Lookup::NotFound),
    };
    st.lowest = st.lowest.min(from);
    f.seek(SeekFrom::Start(from)).map_err(io_err)?;
    // Only the bytes the scan looked at: a line appended since may be of any length.
    let mut turns = Vec::new();
    let summary = read_lines(f.take(len - from), first_line, |item| {
        if let LineItem::Line { bytes, number } = item {
            let _ = parser.feed_bytes(bytes, number);
            turns.extend(parser.take_closed());
        }
    })
    .map_err(io_err)?;
    st.read += summary.consumed + summary.pending;
    let session_key = parser.session().key();
    let (rest, _) = parser.finish();
    turns.extend(rest);

    let turn = match (file.agent, turn_id) {
        (Agent::Codex, Some(id)) => turns.into_iter().rev().find(|t| t.key == id),
        (Agent::Codex, None) => turns.pop(),
        (Agent::Claude, _) => match start {
            Some(_) => turns.into_iter().next(),
            None => turns
                .into_iter()
                .rev()
                .find(|t| matches!(t.events.first(), Some(Event::UserPrompt { .. }))),
        },
    };
    Ok(match turn {
        Some(turn) => Lookup::Found(Box::new(FoundTurn {
            turn,
            session_key,
            bytes_read: st.read,
            read_from: st.lowest,
            bytes_copied: st.copied,
        })),
        None => Lookup::NotFound,
    })
}

/// Scans complete lines from `len` down to `floor`, newest first; returns the start offset of
/// the first line `pred` accepts.
///
/// Each byte is read once. A line that spans read steps is kept as the list of its pieces and
/// put together once, when its start is found, so a huge line costs its length, not its length
/// times the number of steps; past [`Limits::max_line`] it is not kept at all.
fn scan_back(
    f: &mut File,
    len: u64,
    floor: u64,
    st: &mut Stats,
    pred: &mut impl FnMut(&[u8]) -> bool,
) -> io::Result<Scan> {
    let limits = st.limits.unwrap_or(Limits::NONE);
    let mut pos = len;
    // The line that continues past `pos`: its pieces, highest offset first, and their length.
    let mut pieces: Vec<Vec<u8>> = Vec::new();
    let mut carried = 0u64;
    let mut chunk = CHUNK;
    while pos > floor {
        if st.read >= limits.max_scan {
            return Ok(Scan::Limit(format!(
                "the turn starts more than {} MiB before the end of the file",
                limits.max_scan >> 20
            )));
        }
        let start = pos.saturating_sub(chunk).max(floor);
        chunk = (chunk * 2).min(MAX_CHUNK);
        let n = (pos - start) as usize;
        let mut buf = vec![0u8; n];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf)?;
        st.read += n as u64;
        st.lowest = start;
        let mut end = n;
        loop {
            let nl = memchr::memrchr(b'\n', &buf[..end]);
            let line_start = nl.map_or(0, |i| i + 1);
            if nl.is_none() && start > floor {
                // The beginning of this line is further back.
                if end > 0 {
                    buf.truncate(end);
                    carried += end as u64;
                    pieces.push(buf);
                }
                st.peak_line = st.peak_line.max(carried);
                if carried > limits.max_line {
                    return Ok(Scan::Limit(format!(
                        "a line of the turn is longer than {} MiB",
                        limits.max_line >> 20
                    )));
                }
                break;
            }
            let at = start + line_start as u64;
            let hit = if end == n && !pieces.is_empty() {
                // The line that continued past `pos`: put it together once.
                let total = (end - line_start) as u64 + carried;
                st.peak_line = st.peak_line.max(total);
                if total > limits.max_line {
                    return Ok(Scan::Limit(format!(
                        "a line of the turn is longer than {} MiB",
                        limits.max_line >> 20
                    )));
                }
                let mut line = Vec::with_capacity(total as usize);
                line.extend_from_slice(&buf[line_start..end]);
                for p in pieces.drain(..).rev() {
                    line.extend_from_slice(&p);
                }
                st.copied += total;
                carried = 0;
                pred(&line)
            } else {
                let line = &buf[line_start..end];
                st.peak_line = st.peak_line.max(line.len() as u64);
                !line.is_empty() && pred(line)
            };
            if hit {
                return Ok(Scan::Found(at));
            }
            match nl {
                Some(i) => end = i,
                None => return Ok(Scan::NotFound),
            }
        }
        pos = start;
    }
    Ok(Scan::NotFound)
}

/// Whether a saved parser state is inside the wanted turn.
fn state_holds_turn(state: &ParserState, agent: Agent, turn_id: Option<&str>) -> bool {
    let Some(t) = &state.current else {
        return false;
    };
    match agent {
        Agent::Codex => turn_id.is_none_or(|id| t.key == id),
        Agent::Claude => matches!(t.events.first(), Some(Event::UserPrompt { .. })),
    }
}

#[derive(Deserialize)]
struct CodexLine<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    payload: Option<CodexPayload<'a>>,
}

#[derive(Deserialize)]
struct CodexPayload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    turn_id: Option<&'a str>,
}

fn is_codex_turn_start(line: &[u8], quoted_id: Option<&str>) -> bool {
    let started = memmem::find(line, b"task_started").is_some()
        || memmem::find(line, b"turn_started").is_some();
    if !started {
        return false;
    }
    if let Some(q) = quoted_id
        && memmem::find(line, q.as_bytes()).is_none()
    {
        return false;
    }
    let Ok(l) = serde_json::from_slice::<CodexLine>(line) else {
        return false;
    };
    let Some(p) = l.payload else { return false };
    l.kind == Some("event_msg")
        && matches!(p.kind, Some("task_started" | "turn_started"))
        && quoted_id.is_none_or(|q| p.turn_id.is_some_and(|id| q.trim_matches('"') == id))
}

/// Whether a line holds `"type":"user"`, spaces allowed around the colon (a transcript
/// rewritten by a tool that pretty-prints JSON separators is still a transcript).
fn says_type_user(line: &[u8]) -> bool {
    let skip_spaces =
        |s: &[u8]| -> usize { s.iter().take_while(|b| b.is_ascii_whitespace()).count() };
    memmem::find_iter(line, b"\"type\"").any(|at| {
        let rest = &line[at + b"\"type\"".len()..];
        let rest = &rest[skip_spaces(rest)..];
        rest.strip_prefix(b":")
            .is_some_and(|r| r[skip_spaces(r)..].starts_with(b"\"user\""))
    })
}

/// A line that starts a Claude Code turn: the shared parser, fed this line alone, opens a turn
/// with a prompt (tool results, meta records, local commands and interrupts do not).
fn is_claude_prompt(line: &[u8]) -> bool {
    let mut p = Parser::new(Agent::Claude, "");
    let (res, _) = p.feed_bytes(line, 1);
    res.is_ok()
        && p.current()
            .is_some_and(|t| matches!(t.events.first(), Some(Event::UserPrompt { .. })))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cairn_transcript::FileKind;
    use std::io::Write;

    fn codex_turn(id: &str, cmd: &str) -> String {
        let mut s = String::new();
        s += &format!(
            "{{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"task_started\",\"turn_id\":\"{id}\"}}}}\n"
        );
        s += &format!(
            "{{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"user\",\"content\":[{{\"type\":\"input_text\",\"text\":\"prompt {id}\"}}]}}}}\n"
        );
        s += &format!(
            "{{\"timestamp\":\"t\",\"type\":\"response_item\",\"payload\":{{\"type\":\"function_call\",\"name\":\"exec_command\",\"arguments\":\"{{\\\"cmd\\\":\\\"{cmd}\\\"}}\",\"call_id\":\"c-{id}\"}}}}\n"
        );
        s += &format!(
            "{{\"timestamp\":\"t\",\"type\":\"event_msg\",\"payload\":{{\"type\":\"task_complete\",\"turn_id\":\"{id}\"}}}}\n"
        );
        s
    }

    fn file(dir: &std::path::Path, agent: Agent, body: &str) -> TranscriptFile {
        let path =
            dir.join("rollout-2026-11-20T10-00-00-01a1f7e6-e126-7f26-9493-6114a06f30dd.jsonl");
        let mut f = File::create(&path).unwrap();
        f.write_all(body.as_bytes()).unwrap();
        TranscriptFile {
            path,
            agent,
            kind: FileKind::Rollout,
            session_hint: "s".into(),
            compressed: false,
            project_key: None,
        }
    }

    #[test]
    fn codex_by_turn_id_reads_only_the_tail() {
        let dir = tempfile::tempdir().unwrap();
        let mut body = String::new();
        // A large history before the turn.
        let filler = format!(
            "{{\"type\":\"response_item\",\"payload\":{{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{{\"type\":\"output_text\",\"text\":\"{}\"}}]}}}}\n",
            "x".repeat(10_000)
        );
        body += &codex_turn("t0", "rm a");
        for _ in 0..200 {
            body += &filler;
        }
        body += &codex_turn("t1", "ls");
        body += &codex_turn("t2", "rg foo");
        let f = file(dir.path(), Agent::Codex, &body);
        let found = find_turn(&f, Some("t1"), None, Limits::HOOK)
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "t1");
        assert_eq!(found.turn.prompt, "prompt t1");
        assert!(found.bytes_read < 600_000, "read {}", found.bytes_read);
        assert!(found.read_from > 1_500_000, "read from {}", found.read_from);
        let found = find_turn(&f, Some("t0"), None, Limits::HOOK)
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "t0");
        assert!(matches!(
            find_turn(&f, Some("nope"), None, Limits::HOOK).unwrap(),
            Lookup::NotFound
        ));
    }

    #[test]
    fn resumes_from_a_cursor_inside_the_turn() {
        let dir = tempfile::tempdir().unwrap();
        let body = codex_turn("t1", "ls");
        let first_line_len = body.find('\n').unwrap() as u64 + 1;
        let f = file(dir.path(), Agent::Codex, &body);
        // Parse the first line as ingest would have, and resume after it.
        let mut p = Parser::new(Agent::Codex, "s");
        p.feed(&body[..first_line_len as usize - 1], 1).unwrap();
        let r = ResumePoint {
            offset: first_line_len,
            line: 1,
            state: p.state().clone(),
        };
        let found = find_turn(&f, Some("t1"), Some(r), Limits::HOOK)
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "t1");
        assert_eq!(found.turn.prompt, "prompt t1");
        assert_eq!(found.read_from, first_line_len);
    }

    #[test]
    fn finds_a_turn_that_ended_before_the_cursor() {
        let dir = tempfile::tempdir().unwrap();
        let body = codex_turn("t1", "rm x") + &codex_turn("t2", "ls");
        let f = file(dir.path(), Agent::Codex, &body);
        // Everything was ingested: the cursor is at the end, no turn open.
        let mut p = Parser::new(Agent::Codex, "s");
        for (i, l) in body.lines().enumerate() {
            p.feed(l, i as u64 + 1).unwrap();
        }
        let r = ResumePoint {
            offset: body.len() as u64,
            line: body.lines().count() as u64,
            state: p.state().clone(),
        };
        let found = find_turn(&f, Some("t1"), Some(r.clone()), Limits::HOOK)
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "t1");
        assert_eq!(found.turn.prompt, "prompt t1");
        let found = find_turn(&f, Some("t2"), Some(r), Limits::HOOK)
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "t2");
    }

    /// A Claude Code turn whose tool output is one `mb`-MiB line, as Claude Code writes it.
    fn claude_huge_turn(mb: usize) -> String {
        let line = |rec: serde_json::Value| rec.to_string() + "\n";
        let mut s = String::new();
        s += &line(
            serde_json::json!({"type":"user","uuid":"u-1","sessionId":"s","cwd":"/w","timestamp":"2026-11-30T10:00:00Z","message":{"role":"user","content":"list the logs"}}),
        );
        s += &line(
            serde_json::json!({"type":"assistant","uuid":"a-1","sessionId":"s","cwd":"/w","message":{"role":"assistant","content":[{"type":"text","text":"ok"}]}}),
        );
        s += &line(
            serde_json::json!({"type":"user","uuid":"u-2","sessionId":"s","cwd":"/w","timestamp":"2026-11-30T10:01:00Z","message":{"role":"user","content":"dump the big log"}}),
        );
        s += &line(
            serde_json::json!({"type":"assistant","uuid":"a-2","sessionId":"s","cwd":"/w","message":{"role":"assistant","content":[{"type":"tool_use","id":"t-1","name":"Bash","input":{"command":"cat big.log"}}]}}),
        );
        s += &line(
            serde_json::json!({"type":"user","uuid":"r-2","sessionId":"s","cwd":"/w","message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t-1","content":"x".repeat(mb << 20)}]}}),
        );
        s += &line(
            serde_json::json!({"type":"assistant","uuid":"z-2","sessionId":"s","cwd":"/w","message":{"role":"assistant","content":[{"type":"text","text":"done"}]}}),
        );
        s
    }

    #[test]
    fn a_huge_line_is_not_assembled_past_the_hook_limit() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), Agent::Claude, &claude_huge_turn(12));
        let limits = Limits {
            max_line: 2 << 20,
            max_scan: 64 << 20,
        };
        match find_turn(&f, None, None, limits).unwrap() {
            Lookup::TooLarge {
                bytes_read,
                peak_line,
                len,
                ..
            } => {
                assert_eq!(len, std::fs::metadata(&f.path).unwrap().len());
                // It stopped within one read step of the limit: the rest was never read or held.
                assert!(peak_line <= (2 << 20) + MAX_CHUNK, "held {peak_line}");
                assert!(bytes_read <= (2 << 20) + 2 * MAX_CHUNK, "read {bytes_read}");
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
        // How far back it may read is bounded too.
        let limits = Limits {
            max_line: 64 << 20,
            max_scan: 3 << 20,
        };
        match find_turn(&f, None, None, limits).unwrap() {
            Lookup::TooLarge { bytes_read, .. } => {
                assert!(bytes_read <= (3 << 20) + MAX_CHUNK, "read {bytes_read}")
            }
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }

    /// A file that is one line longer than ingest keeps (sparse here: no disk used) is given
    /// up on by the worker's search instead of being held in memory.
    #[test]
    fn the_worker_does_not_hold_a_line_longer_than_ingest_keeps() {
        let dir = tempfile::tempdir().unwrap();
        let f = file(dir.path(), Agent::Claude, "");
        File::options()
            .write(true)
            .open(&f.path)
            .unwrap()
            .set_len(Limits::WORKER.max_line + (1 << 20))
            .unwrap();
        match find_turn(&f, None, None, Limits::WORKER).unwrap() {
            Lookup::TooLarge { .. } => {}
            other => panic!("expected TooLarge, got {other:?}"),
        }
    }

    /// A transcript rewritten with `", "` / `": "` separators is found all the same.
    #[test]
    fn a_turn_in_spaced_json_is_found() {
        let dir = tempfile::tempdir().unwrap();
        let body = concat!(
            r#"{"type": "user", "uuid": "u-1", "timestamp": "2026-11-20T10:00:00Z", "#,
            r#""message": {"role": "user", "content": "remember that deploys happen on Mondays"}}"#,
            "\n",
            r#"{"type": "assistant", "uuid": "a-1", "timestamp": "2026-11-20T10:00:05Z", "#,
            r#""message": {"role": "assistant", "content": [{"type": "text", "text": "Noted."}]}}"#,
            "\n"
        );
        let f = file(dir.path(), Agent::Claude, body);
        let found = find_turn(&f, None, None, Limits::HOOK)
            .unwrap()
            .found()
            .expect("turn");
        assert_eq!(found.turn.key, "u-1");
        assert!(says_type_user(br#"{"type" :  "user"}"#));
        assert!(!says_type_user(br#"{"type":"assistant","x":"user"}"#));
    }

    #[test]
    fn without_limits_a_huge_line_is_copied_once() {
        let dir = tempfile::tempdir().unwrap();
        let body = claude_huge_turn(12);
        let f = file(dir.path(), Agent::Claude, &body);
        let found = find_turn(&f, None, None, Limits::NONE)
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "u-2");
        assert_eq!(found.turn.prompt, "dump the big log");
        // Each byte read once backwards and once forwards, the long line copied once (the old
        // scan copied it again on every 1 MiB step: ~12 times its length).
        let huge = body.lines().map(str::len).max().unwrap() as u64;
        assert!(
            found.bytes_copied <= huge + 1,
            "copied {}",
            found.bytes_copied
        );
        assert!(
            found.bytes_read <= 2 * body.len() as u64,
            "read {}",
            found.bytes_read
        );
        // The hook's own limits leave this one to the worker.
        assert!(matches!(
            find_turn(&f, None, None, Limits::HOOK).unwrap(),
            Lookup::TooLarge { .. }
        ));
    }

    #[test]
    fn a_search_stops_at_the_given_end() {
        let dir = tempfile::tempdir().unwrap();
        let body = codex_turn("t1", "rm x") + &codex_turn("t2", "ls");
        let f = file(dir.path(), Agent::Codex, &body);
        let end = codex_turn("t1", "rm x").len() as u64;
        let found = find_turn_before(&f, None, None, Limits::NONE, Some(end))
            .unwrap()
            .found()
            .unwrap();
        assert_eq!(found.turn.key, "t1");
    }
}
