//! Finding the turn that just ended from the end of a transcript, without reading the file.
//!
//! The file is read backwards in chunks from its end to the line that starts the turn (Codex: the
//! `task_started`/`turn_started` event with the hook's `turn_id`; Claude Code: the last real user
//! prompt), then parsed forward from there with the shared [`Parser`]. When the store already has
//! a cursor inside the file, the backward scan stops at it: a turn that began before the cursor is
//! resumed from the parser state saved there, so no byte before the cursor is ever read again.

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
}

/// Finds the turn that just ended. Codex: `turn_id` names it (without one, the last turn);
/// Claude Code: the last turn that starts with a user prompt.
pub fn find_turn(
    file: &TranscriptFile,
    turn_id: Option<&str>,
    resume: Option<ResumePoint>,
) -> Result<Option<FoundTurn>, CaptureError> {
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
    let len = f.metadata().map_err(io_err)?.len();
    let resume = resume.filter(|r| r.offset <= len);
    let floor = resume.as_ref().map_or(0, |r| r.offset);
    let mut read = 0u64;
    let mut lowest = len;

    let start = match file.agent {
        Agent::Codex => {
            let id = turn_id.map(|t| format!("\"{t}\""));
            scan_back(&mut f, len, floor, &mut read, &mut lowest, |line| {
                is_codex_turn_start(line, id.as_deref())
            })
        }
        Agent::Claude => scan_back(&mut f, len, floor, &mut read, &mut lowest, |line| {
            memmem::find(line, b"\"type\":\"user\"").is_some() && is_claude_prompt(line)
        }),
    }
    .map_err(io_err)?;

    // Not after the cursor: the turn began before it. Resume from the saved state when that
    // state is inside the turn; otherwise the turn ended before the cursor (already ingested,
    // e.g. a repeated Stop): keep scanning backwards below it.
    let start = match (start, &resume) {
        (None, Some(r)) if !state_holds_turn(&r.state, file.agent, turn_id) => {
            let mut below = |line: &[u8]| match file.agent {
                Agent::Codex => {
                    is_codex_turn_start(line, turn_id.map(|t| format!("\"{t}\"")).as_deref())
                }
                Agent::Claude => {
                    memmem::find(line, b"\"type\":\"user\"").is_some() && is_claude_prompt(line)
                }
            };
            let found = scan_back(&mut f, r.offset, 0, &mut read, &mut lowest, &mut below)
                .map_err(io_err)?;
            if found.is_none() {
                return Ok(None);
            }
            found
        }
        _ => start,
    };
    let (mut parser, from, first_line) = match (start, resume) {
        (Some(off), _) => (Parser::new(file.agent, &file.session_hint), off, 0),
        (None, Some(r)) => (Parser::resume(file.agent, r.state), r.offset, r.line),
        (None, None) => return Ok(None),
    };
    lowest = lowest.min(from);
    f.seek(SeekFrom::Start(from)).map_err(io_err)?;
    let mut turns = Vec::new();
    let summary = read_lines(f, first_line, |item| {
        if let LineItem::Line { bytes, number } = item {
            let _ = parser.feed_bytes(bytes, number);
            turns.extend(parser.take_closed());
        }
    })
    .map_err(io_err)?;
    read += summary.consumed + summary.pending;
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
    Ok(turn.map(|turn| FoundTurn {
        turn,
        session_key,
        bytes_read: read,
        read_from: lowest,
    }))
}

/// Scans complete lines from `len` down to `floor`, newest first; returns the start offset of
/// the first line `pred` accepts.
fn scan_back(
    f: &mut File,
    len: u64,
    floor: u64,
    read: &mut u64,
    lowest: &mut u64,
    mut pred: impl FnMut(&[u8]) -> bool,
) -> io::Result<Option<u64>> {
    let mut pos = len;
    // The beginning of a line that started before `pos` (its bytes from `pos` on).
    let mut carry: Vec<u8> = Vec::new();
    let mut chunk = CHUNK;
    while pos > floor {
        let start = pos.saturating_sub(chunk).max(floor);
        chunk = (chunk * 2).min(MAX_CHUNK);
        let n = (pos - start) as usize;
        let mut buf = vec![0u8; n];
        f.seek(SeekFrom::Start(start))?;
        f.read_exact(&mut buf)?;
        *read += n as u64;
        *lowest = start;
        buf.extend_from_slice(&carry);
        let mut end = buf.len();
        loop {
            match memchr::memrchr(b'\n', &buf[..end]) {
                Some(nl) => {
                    let line = &buf[nl + 1..end];
                    if !line.is_empty() && pred(line) {
                        return Ok(Some(start + nl as u64 + 1));
                    }
                    end = nl;
                }
                None => {
                    if start == floor {
                        let line = &buf[..end];
                        if !line.is_empty() && pred(line) {
                            return Ok(Some(start));
                        }
                        return Ok(None);
                    }
                    buf.truncate(end);
                    carry = buf;
                    break;
                }
            }
        }
        pos = start;
    }
    Ok(None)
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
        let found = find_turn(&f, Some("t1"), None).unwrap().unwrap();
        assert_eq!(found.turn.key, "t1");
        assert_eq!(found.turn.prompt, "prompt t1");
        assert!(found.bytes_read < 600_000, "read {}", found.bytes_read);
        assert!(found.read_from > 1_500_000, "read from {}", found.read_from);
        let found = find_turn(&f, Some("t0"), None).unwrap().unwrap();
        assert_eq!(found.turn.key, "t0");
        assert!(find_turn(&f, Some("nope"), None).unwrap().is_none());
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
        let found = find_turn(&f, Some("t1"), Some(r)).unwrap().unwrap();
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
        let found = find_turn(&f, Some("t1"), Some(r.clone())).unwrap().unwrap();
        assert_eq!(found.turn.key, "t1");
        assert_eq!(found.turn.prompt, "prompt t1");
        let found = find_turn(&f, Some("t2"), Some(r)).unwrap().unwrap();
        assert_eq!(found.turn.key, "t2");
    }
}
