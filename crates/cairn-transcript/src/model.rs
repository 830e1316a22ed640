//! The normalized transcript model shared by both agents.

use serde::{Deserialize, Serialize};

/// Which coding agent wrote a transcript.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Agent {
    Claude,
    Codex,
}

impl Agent {
    pub fn as_str(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
        }
    }

    pub fn parse(s: &str) -> Option<Agent> {
        match s {
            "claude" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            _ => None,
        }
    }
}

impl std::fmt::Display for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is known about the session a transcript file belongs to.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Session {
    /// The agent's own session id (Claude Code `sessionId`, Codex thread id).
    pub id: String,
    /// Set for a subagent's transcript, whose turns are sidechain turns: Claude Code, the
    /// subagent id (the session id is then the main session's); Codex, the kind of subagent
    /// thread (`thread_spawn`, `review`, `compact`, `memory_consolidation`, or the name Codex
    /// gives another kind; the session id is the thread's own). Such a session is stored as
    /// its own session, keyed `<session id>/<subagent>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subagent: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cli_version: Option<String>,
    /// Codex: the thread that spawned this one (`source.subagent.thread_spawn.parent_thread_id`),
    /// else the thread it was forked from (`forked_from_id`); Claude Code: the parent session
    /// of a subagent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<String>,
    /// Claude Code: the session was continued in another one (`continued-in`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub continued_in: Option<String>,
}

impl Session {
    /// The key a session is stored under: the session id, plus `/<subagent>` for a subagent's
    /// transcript.
    pub fn key(&self) -> String {
        match &self.subagent {
            Some(a) => format!("{}/{}", self.id, a),
            None => self.id.clone(),
        }
    }
}

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TurnStatus {
    /// Still running, or the file has not shown its end yet.
    Open,
    Complete,
    Aborted,
}

impl TurnStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            TurnStatus::Open => "open",
            TurnStatus::Complete => "complete",
            TurnStatus::Aborted => "aborted",
        }
    }
}

/// One user request and everything the agent did for it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Turn {
    /// Stable within its session: Codex `turn_id` (or `ctx-<n>` for old rollouts),
    /// Claude Code the `uuid` of the prompt record.
    pub key: String,
    /// 0-based position of the turn in its transcript file.
    pub seq: u32,
    pub status: TurnStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub started_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cwd: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_branch: Option<String>,
    /// A subagent's turn (Claude Code sidechain, Codex subagent thread): its prompt was
    /// written by another agent, not by the user.
    #[serde(default)]
    pub sidechain: bool,
    /// Codex: a `thread_rolled_back` later in the rollout dropped this turn from the thread
    /// (the user backtracked, or a client rolled the thread back): what was said in it is no
    /// longer part of the conversation, though its lines stay in the file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub rolled_back: bool,
    /// Codex: the turn's session is not interactive (`session_meta.source` `exec`: a
    /// `codex exec` run, from a script or a CI job; `mcp`: another program drives Codex as
    /// an MCP server). Its prompts are that program's, not typed by the user.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub non_interactive: bool,
    /// Codex: the thread's `memory_mode` when it is not `enabled` (`None`): `disabled` (the
    /// user set `[memories] generate_memories = false`, or turned memory off for the thread
    /// with `thread/memoryMode/set`), `polluted`, or a value this build does not know. Codex's
    /// own memory pipeline reads only `enabled` threads; such a turn gives no memory. It is
    /// the thread's mode as its rollout last states it, so every turn of a file carries the
    /// same.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_mode: Option<String>,
    /// The user's prompt text (empty when the file shows none, e.g. a resumed turn).
    pub prompt: String,
    /// 1-based line numbers of the first and last record of the turn in its file.
    pub first_line: u64,
    pub last_line: u64,
    pub events: Vec<Event>,
    /// Events not kept because the turn exceeded [`crate::MAX_EVENTS_PER_TURN`].
    #[serde(default)]
    pub dropped_events: u32,
}

impl Turn {
    pub fn new(key: String, seq: u32, line: u64) -> Turn {
        Turn {
            key,
            seq,
            status: TurnStatus::Open,
            started_at: None,
            ended_at: None,
            cwd: None,
            git_branch: None,
            sidechain: false,
            rolled_back: false,
            non_interactive: false,
            memory_mode: None,
            prompt: String::new(),
            first_line: line,
            last_line: line,
            events: Vec::new(),
            dropped_events: 0,
        }
    }

    pub(crate) fn push(&mut self, ev: Event) {
        if self.events.len() >= crate::MAX_EVENTS_PER_TURN {
            self.dropped_events = self.dropped_events.saturating_add(1);
        } else {
            self.events.push(ev);
        }
    }

    /// Codex: the turn's thread is kept out of memory generation ([`Turn::memory_mode`] is
    /// `disabled`, `polluted` or another value than `enabled`).
    pub fn memory_generation_off(&self) -> bool {
        self.memory_mode.is_some()
    }

    /// What the user said in the turn, each text once: the prompt, then what they added while
    /// it ran (a Codex steering message, a correction given while rejecting a tool call).
    pub fn user_texts(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        let said = std::iter::once(self.prompt.as_str()).chain(self.events.iter().filter_map(
            |e| match e {
                Event::UserPrompt { text, .. } => Some(text.as_str()),
                _ => None,
            },
        ));
        for text in said {
            if !text.trim().is_empty() && !out.contains(&text) {
                out.push(text);
            }
        }
        out
    }

    /// Passes every text the parser's filter saw when it read the turn (the prompt, what
    /// the user and the agent said, commands, tool arguments and outputs, edited paths) through
    /// `f`, in file order, prompt first; returns whether any changed. Keys, times and
    /// identifiers are left alone. (A store redacts turns it kept again with this when its
    /// redaction rules improve.)
    pub fn map_texts(&mut self, mut f: impl FnMut(&str) -> Option<String>) -> bool {
        let mut changed = false;
        let mut apply = |s: &mut String| {
            if let Some(new) = f(s).filter(|n| n != s) {
                *s = new;
                changed = true;
            }
        };
        apply(&mut self.prompt);
        for ev in &mut self.events {
            match ev {
                Event::UserPrompt { text, .. } | Event::AssistantText { text, .. } => apply(text),
                Event::ToolCall { command, args, .. } => command
                    .iter_mut()
                    .chain(args.iter_mut())
                    .for_each(&mut apply),
                Event::ToolResult { output, .. } => apply(output),
                Event::FileEdit { paths, .. } | Event::PatchApplied { paths, .. } => {
                    paths.iter_mut().for_each(&mut apply)
                }
                Event::Compacted { .. } | Event::Aborted { .. } => {}
            }
        }
        changed
    }

    /// The last assistant text of the turn, if any.
    pub fn last_assistant_text(&self) -> Option<&str> {
        self.events.iter().rev().find_map(|e| match e {
            Event::AssistantText { text, .. } => Some(text.as_str()),
            _ => None,
        })
    }
}

/// Something that happened inside a turn, in file order.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Event {
    UserPrompt {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    AssistantText {
        text: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// A tool invocation. `command` is set for shell tools (the command line as a string).
    ToolCall {
        call_id: String,
        tool: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        command: Option<String>,
        /// The tool's arguments as compact JSON, capped.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        args: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// The result of a tool call. `output` keeps the head and the tail of long outputs.
    ToolResult {
        call_id: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        exit_code: Option<i64>,
        is_error: bool,
        output: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// A file edit or patch requested by the agent (Claude Code Edit/Write/MultiEdit/NotebookEdit,
    /// Codex apply_patch), with the paths it touches and line counts when known.
    FileEdit {
        call_id: String,
        tool: String,
        paths: Vec<String>,
        added: u32,
        removed: u32,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// Codex `patch_apply_end`: the outcome of a patch.
    PatchApplied {
        call_id: String,
        success: bool,
        paths: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// The conversation was compacted (Claude Code compact boundary, Codex `compacted`).
    Compacted {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
    /// The turn was interrupted (Codex `turn_aborted`, Claude Code "[Request interrupted by user]").
    Aborted {
        reason: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        at: Option<String>,
    },
}
