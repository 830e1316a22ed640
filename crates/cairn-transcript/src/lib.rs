//! Reading the coding agents' own files into one normalized model.
//!
//! This crate owns the knowledge of both agents' on-disk formats: where Claude Code keeps its
//! session transcripts and auto memory (`~/.claude/projects/<key>/…`) and where Codex keeps its
//! rollouts (`~/.codex/sessions/YYYY/MM/DD/rollout-*.jsonl`), how their JSONL records look, and
//! how to slice them into [`Turn`]s made of [`Event`]s (prompts, assistant text, tool calls with
//! their commands, results with exit codes, file edits with paths). Turns whose prompt another
//! agent wrote (Claude Code sidechains, Codex subagent threads) are marked `sidechain`; context
//! and harness output an agent writes as a user message (AGENTS.md, environment, skills, hook
//! feedback, reminders, `!` shell commands and their output, local slash commands,
//! background-task notices) is never a prompt; what the user says besides the prompt (a Codex
//! steering message, a correction typed while rejecting a Claude Code tool call) is a
//! [`Event::UserPrompt`] inside the turn; a Codex fork is filed under its own id, not under the
//! parent it copies; Codex turns a thread rollback dropped are marked `rolled_back`, those
//! of sessions a program drives (`codex exec`, Codex over MCP) `non_interactive`, and those of
//! threads whose memory generation is off carry the thread's `memory_mode` (`disabled`, …). Parsing is incremental and resumable ([`Parser`] + [`ParserState`]),
//! tolerant (unknown record types and fields are skipped; a field of the wrong type reads as
//! absent; a bad line costs only itself; a line with invalid UTF-8 or lone UTF-16 surrogate
//! escapes is read again repaired, see [`lone_surrogates`]), and bounded (long texts are
//! capped, head and tail). It must not write anything, open a database, or know about
//! memories: it only reads files and returns values.
//!
//! ```
//! use cairn_transcript::{Agent, Parser};
//! let mut p = Parser::new(Agent::Codex, "demo");
//! p.feed(r#"{"timestamp":"2026-11-20T10:00:00.000Z","type":"event_msg","payload":{"type":"task_started","turn_id":"t1"}}"#, 1).unwrap();
//! p.feed(r#"{"timestamp":"2026-11-20T10:00:01.000Z","type":"event_msg","payload":{"type":"task_complete","turn_id":"t1"}}"#, 2).unwrap();
//! assert_eq!(p.take_closed()[0].key, "t1");
//! ```

mod claude;
mod codex;
pub mod layout;
mod lenient;
pub mod lone_surrogates;
mod model;
mod parse;
pub mod patch;
pub mod reader;
pub mod scan;
pub mod text;
pub mod zst;

pub use layout::{
    ClaudeProject, ClaudeRoot, CodexHome, FileKind, Problem, ProjectCwd, TranscriptFile,
    claude_project_key, count_memory_files, open_transcript, resolve_project_cwd, rollout_cwd,
};
pub use model::{Agent, Event, Session, Turn, TurnStatus};
pub use parse::{LineError, PARSER_REVISION, Parser, ParserState, ThreadTurn};

/// A turn keeps at most this many events; the rest are counted in `Turn::dropped_events`.
pub const MAX_EVENTS_PER_TURN: usize = 4000;

/// `s` without a leading UTF-8 byte order mark.
pub(crate) fn strip_bom(s: &str) -> &str {
    s.strip_prefix('\u{feff}').unwrap_or(s)
}
