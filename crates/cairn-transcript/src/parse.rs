//! The incremental parser shared by both formats: feed it lines, take the turns it closes.
//!
//! A parser's whole state is a [`ParserState`] (serializable), so ingest can stop at any
//! complete line, store the state beside its byte cursor, and resume later with only the
//! appended bytes.

use std::borrow::Cow;

use serde::{Deserialize, Serialize};

use crate::model::{Agent, Session, Turn, TurnStatus};
use crate::text::{TextFilter, no_filter};

/// Why a line was skipped. The rest of the file is unaffected.
#[derive(Debug, thiserror::Error)]
pub enum LineError {
    #[error("malformed JSON: {0}")]
    Json(String),
    #[error("line is not a JSON object")]
    NotObject,
}

impl LineError {
    pub(crate) fn json(e: serde_json::Error) -> LineError {
        LineError::Json(e.to_string())
    }
}

/// The version of what the parser makes of lines. Raise it with every change that turns the
/// same lines into different turns or texts (a record newly recognised as harness output, a
/// turn boundary moved, a field read differently): ingest reads every file stored under an
/// older revision again from the start, so that an upgrade corrects what is already stored.
pub const PARSER_REVISION: u32 = 6;

/// Everything a parser carries between lines.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ParserState {
    pub session: Session,
    /// The turn still accumulating events (its status may already be `complete` when the file
    /// showed its end but no next prompt yet).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub current: Option<Turn>,
    #[serde(default)]
    pub next_seq: u32,
    /// This file is a subagent's, whose prompts come from another agent, not from the user:
    /// a Claude Code sidechain, or a Codex subagent thread (spawned agent, `/review`,
    /// compaction, memory consolidation). Every turn of the file is a sidechain turn.
    #[serde(default)]
    pub sidechain: bool,
    /// Codex: the session is not interactive (`session_meta.source` `exec` or `mcp`): every
    /// turn of the file is a `non_interactive` turn.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub non_interactive: bool,
    /// Codex: the thread's `memory_mode` when not `enabled`, as the last of the file's own
    /// `session_meta` lines states it (Codex writes one at the start and appends another each
    /// time `thread/memoryMode/set` changes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mode: Option<String>,
    /// Codex: the `memory_mode` (not `enabled`) of another thread whose history the file
    /// copies (a fork goes on with its parent's rollout, `session_meta` included). The copied
    /// turns cannot be told from the fork's own, so the whole file stays out of memory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub copied_memory_mode: Option<String>,
    /// Codex: lines read in a shape of a rollout format this parser knows (the
    /// `{"timestamp","type","payload"}` envelope, or the bare records of early rollouts).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub known_format_lines: u64,
    /// Codex: JSON object lines of no rollout format this parser knows. A file with such lines
    /// and no [`ParserState::known_format_lines`] is not a rollout cairn can read.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub unknown_format_lines: u64,
    /// Codex: the rollout uses `task_started` / `task_complete` events (else `turn_context`
    /// boundaries are used, as in old rollouts).
    #[serde(default)]
    pub task_events: bool,
    /// Codex: the current turn was opened by a `turn_context`, not by `task_started`.
    #[serde(default)]
    pub current_from_context: bool,
    /// Codex: the file's own `session_meta` (its first) was read. A later one belongs to the
    /// history the file carries (a fork's copy of its parent's rollout) and changes nothing.
    #[serde(default)]
    pub own_session_meta_seen: bool,
    /// Codex: the first line `ordinal` that is the thread's own
    /// (`session_meta.subagent_history_start_ordinal`); lines below it replay the parent's
    /// history and are skipped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub own_lines_from_ordinal: Option<i64>,
    /// Codex: the closed turns of the thread that no rollback dropped, oldest first: what a
    /// later `thread_rolled_back` counts back from, whichever pass reads it.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub thread_turns: Vec<ThreadTurn>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A closed turn still part of a Codex thread, as [`ParserState::thread_turns`] keeps it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThreadTurn {
    pub key: String,
    /// The turn holds a user message (a prompt): the kind of turn a rollback counts.
    #[serde(default)]
    pub user: bool,
}

pub(crate) struct ParserCore {
    pub(crate) agent: Agent,
    pub(crate) state: ParserState,
    pub(crate) closed: Vec<Turn>,
    /// Keys of turns handed out before (closed and taken) that a rollback read since dropped.
    pub(crate) rolled_back_earlier: Vec<String>,
    /// The thread's memory mode changed since [`Parser::take_memory_mode_change`] was last
    /// called: turns handed out before carry the old one.
    pub(crate) memory_mode_changed: bool,
    pub(crate) filter: TextFilter,
}

impl ParserState {
    /// Codex: the memory mode every turn of the file carries ([`Turn::memory_mode`]): the
    /// thread's own when it is not `enabled`, else that of a thread whose history it copies.
    pub fn effective_memory_mode(&self) -> Option<&str> {
        self.memory_mode
            .as_deref()
            .or(self.copied_memory_mode.as_deref())
    }
}

impl ParserCore {
    /// Sets the thread's own memory mode, or that of the history it copies (`copied`), and
    /// gives the turns still held the mode that results. A change is noted for the caller,
    /// whose copies of turns handed out before carry the old one.
    pub(crate) fn set_memory_mode(&mut self, mode: Option<String>, copied: bool) {
        let before = self.state.effective_memory_mode().map(str::to_owned);
        if copied {
            if mode.is_none() {
                return;
            }
            self.state.copied_memory_mode = mode;
        } else {
            self.state.memory_mode = mode;
        }
        let now = self.state.effective_memory_mode().map(str::to_owned);
        if now == before {
            return;
        }
        self.memory_mode_changed = true;
        for t in self.closed.iter_mut().chain(self.state.current.as_mut()) {
            t.memory_mode.clone_from(&now);
        }
    }

    /// Closes the current turn (an open one becomes complete: the next one has begun).
    pub(crate) fn close_current(&mut self) {
        if let Some(mut t) = self.state.current.take() {
            if t.status == TurnStatus::Open {
                t.status = TurnStatus::Complete;
            }
            if self.agent == Agent::Codex && !t.rolled_back {
                self.state.thread_turns.push(ThreadTurn {
                    key: t.key.clone(),
                    user: !t.prompt.is_empty(),
                });
            }
            self.closed.push(t);
        }
    }

    /// A Codex `thread_rolled_back`: drops the newest `num_turns` user turns of the thread
    /// and every turn after the oldest of them, as Codex rebuilds the thread's history
    /// (codex-rs/core `rollout_reconstruction.rs`, `drop_last_n_user_turns`). Only turns a
    /// rollback has not dropped yet count; a turn without a user message is not counted (one
    /// before the first user turn stays); more than the thread holds drops every user turn.
    /// The current turn is closed first (a rollback never comes while a turn runs). Turns
    /// still held are marked [`Turn::rolled_back`]; the keys of those handed out already
    /// wait in [`ParserCore::rolled_back_earlier`].
    pub(crate) fn roll_back(&mut self, num_turns: usize) {
        self.close_current();
        if num_turns == 0 {
            return;
        }
        let users: Vec<usize> = (0..self.state.thread_turns.len())
            .filter(|&i| self.state.thread_turns[i].user)
            .collect();
        let Some(&first_user) = users.first() else {
            return;
        };
        let cut = match users.len().checked_sub(num_turns) {
            Some(i) => users[i],
            None => first_user,
        };
        for dropped in self.state.thread_turns.split_off(cut) {
            match self
                .closed
                .iter_mut()
                .rev()
                .find(|t| t.key == dropped.key && !t.rolled_back)
            {
                Some(t) => t.rolled_back = true,
                None => self.rolled_back_earlier.push(dropped.key),
            }
        }
    }

    pub(crate) fn start_turn(&mut self, key: String, line: u64) -> &mut Turn {
        self.close_current();
        let seq = self.state.next_seq;
        self.state.next_seq = self.state.next_seq.saturating_add(1);
        let mut t = Turn::new(key, seq, line);
        t.sidechain = self.state.sidechain;
        t.non_interactive = self.state.non_interactive;
        t.memory_mode = self.state.effective_memory_mode().map(str::to_owned);
        t.cwd = self.state.session.cwd.clone();
        t.git_branch = self.state.session.git_branch.clone();
        self.state.current_from_context = false;
        self.state.current.insert(t)
    }

    pub(crate) fn current_mut(&mut self, line: u64) -> Option<&mut Turn> {
        let t = self.state.current.as_mut()?;
        t.last_line = line;
        Some(t)
    }

    /// The current turn, or a new prompt-less one when the file starts mid-conversation.
    pub(crate) fn current_or_implicit(&mut self, key: Option<&str>, line: u64) -> &mut Turn {
        if self.state.current.is_none() {
            let key = key
                .filter(|k| !k.is_empty())
                .map(str::to_owned)
                .unwrap_or_else(|| format!("line-{line}"));
            self.start_turn(key, line);
        }
        match self.state.current.as_mut() {
            Some(t) => {
                t.last_line = line;
                t
            }
            None => unreachable!("a turn was just started"),
        }
    }
}

/// An incremental transcript parser for one file.
pub struct Parser {
    agent: Agent,
    core: ParserCore,
}

impl Parser {
    /// A parser for a new file. `session_hint` is the id taken from the file name, used when
    /// the records do not carry one.
    pub fn new(agent: Agent, session_hint: &str) -> Parser {
        let state = ParserState {
            session: Session {
                id: session_hint.to_owned(),
                ..Session::default()
            },
            ..ParserState::default()
        };
        Parser::resume(agent, state)
    }

    /// A parser that continues where a previous one stopped.
    pub fn resume(agent: Agent, state: ParserState) -> Parser {
        Parser {
            agent,
            core: ParserCore {
                agent,
                state,
                closed: Vec::new(),
                rolled_back_earlier: Vec::new(),
                memory_mode_changed: false,
                filter: no_filter,
            },
        }
    }

    /// Applies `filter` to every piece of text kept from now on.
    pub fn with_filter(mut self, filter: TextFilter) -> Parser {
        self.core.filter = filter;
        self
    }

    pub fn agent(&self) -> Agent {
        self.agent
    }

    /// Feeds one line (without its newline). Blank lines are ignored. An error means the line
    /// was skipped; the parser is still usable. A line kept only after a repair is not told
    /// apart (see [`Parser::feed_bytes`]).
    pub fn feed(&mut self, line: &str, line_no: u64) -> Result<(), LineError> {
        self.feed_bytes(line.as_bytes(), line_no).0
    }

    fn feed_utf8_checked(&mut self, line: &[u8], line_no: u64) -> Result<(), LineError> {
        let trimmed = line.trim_ascii();
        // A byte order mark (an editor's, before the first record) is never part of JSON.
        let trimmed = match trimmed.strip_prefix(b"\xEF\xBB\xBF") {
            Some(rest) => rest.trim_ascii(),
            None => trimmed,
        };
        if trimmed.is_empty() {
            return Ok(());
        }
        if trimmed[0] != b'{' {
            // Either garbage or a JSON value that is not a record.
            return match serde_json::from_slice::<serde::de::IgnoredAny>(trimmed) {
                Ok(_) => Err(LineError::NotObject),
                Err(e) => Err(LineError::json(e)),
            };
        }
        match self.agent {
            Agent::Claude => crate::claude::feed(&mut self.core, trimmed, line_no),
            Agent::Codex => crate::codex::feed(&mut self.core, trimmed, line_no),
        }
    }

    /// Feeds raw bytes. Strings the parser keeps are validated as they are read (fields it
    /// skips cost no validation). A line that fails to parse is read again repaired when it
    /// holds text serde_json rejects: invalid UTF-8 (the bad bytes replaced) or lone UTF-16
    /// surrogate escapes (`"\ud83d"`, replaced by `\ufffd`, see [`crate::lone_surrogates`]).
    /// The `bool` is `true` when the line was read repaired (it is kept unless the second
    /// read fails too). A line that parses pays for none of this.
    pub fn feed_bytes(&mut self, line: &[u8], line_no: u64) -> (Result<(), LineError>, bool) {
        let first = self.feed_utf8_checked(line, line_no);
        if !matches!(first, Err(LineError::Json(_))) {
            return (first, false);
        }
        let valid_utf8: Cow<[u8]> = match std::str::from_utf8(line) {
            Ok(_) => Cow::Borrowed(line),
            Err(_) => Cow::Owned(String::from_utf8_lossy(line).into_owned().into_bytes()),
        };
        let repaired = match crate::lone_surrogates::replace_in_json(&valid_utf8) {
            Some(paired) => Cow::Owned(paired),
            None => valid_utf8,
        };
        match repaired {
            Cow::Borrowed(_) => (first, false),
            Cow::Owned(repaired) => (self.feed_utf8_checked(&repaired, line_no), true),
        }
    }

    /// Turns closed since the last call, in file order.
    pub fn take_closed(&mut self) -> Vec<Turn> {
        std::mem::take(&mut self.core.closed)
    }

    /// Keys of turns handed out before (by [`Parser::take_closed`] or [`Parser::into_parts`],
    /// in this parser's life or, resumed from a saved state, an earlier one) that a Codex
    /// `thread_rolled_back` read since dropped from the thread: the caller marks its copies
    /// [`Turn::rolled_back`]. Turns not handed out yet come marked.
    pub fn take_rolled_back(&mut self) -> Vec<String> {
        std::mem::take(&mut self.core.rolled_back_earlier)
    }

    /// Whether the Codex thread's memory mode changed since the last call (a
    /// `thread/memoryMode/set` appended to the rollout, or the first `session_meta` read):
    /// turns handed out before (by [`Parser::take_closed`] or [`Parser::into_parts`], in this
    /// parser's life or, resumed from a saved state, an earlier one) carry the old mode, and
    /// the caller gives its copies [`ParserState::effective_memory_mode`]. Turns not handed
    /// out yet come with the new one.
    pub fn take_memory_mode_change(&mut self) -> bool {
        std::mem::take(&mut self.core.memory_mode_changed)
    }

    /// The turn still accumulating events.
    pub fn current(&self) -> Option<&Turn> {
        self.core.state.current.as_ref()
    }

    pub fn session(&self) -> &Session {
        &self.core.state.session
    }

    pub fn state(&self) -> &ParserState {
        &self.core.state
    }

    /// Takes the parser apart without copying: the turns closed since the last
    /// [`Parser::take_closed`] and the state (the open turn, if any, is still in it).
    pub fn into_parts(mut self) -> (Vec<Turn>, ParserState) {
        (std::mem::take(&mut self.core.closed), self.core.state)
    }

    /// Ends the file: returns every remaining turn, the current one included (still `open`
    /// unless the file showed its end).
    pub fn finish(mut self) -> (Vec<Turn>, ParserState) {
        let mut turns = std::mem::take(&mut self.core.closed);
        if let Some(t) = self.core.state.current.clone() {
            turns.push(t);
        }
        (turns, self.core.state)
    }
}
