//! Codex rollouts (`<home>/sessions/YYYY/MM/DD/rollout-*.jsonl`).
//!
//! A turn runs from `event_msg` `task_started` / `turn_started` (with its `turn_id`) to
//! `task_complete` / `turn_complete` or `turn_aborted`. Old rollouts without those events fall
//! back to `turn_context` boundaries.
//!
//! The file's session is its first `session_meta`. A fork's rollout goes on with a copy of its
//! parent's rollout, the parent's `session_meta` included: a later `session_meta` changes
//! nothing. That copy carries no marker of where it ends, so its turns (under the parent's
//! turn ids) are read as the fork's; only a thread whose `session_meta` gives
//! `subagent_history_start_ordinal` tells which lines (by `ordinal`) are replayed history,
//! and those are skipped.
//!
//! A rollback (the user backtracks with Esc Esc, or a client calls `thread/rollback`) leaves
//! the turns it drops in the file and appends `event_msg` `thread_rolled_back` with
//! `num_turns`: the newest that many user turns still in the thread are dropped, with every
//! turn after the oldest of them (codex-rs/core `rollout_reconstruction.rs`, whose reverse
//! replay skips them, and `drop_last_n_user_turns`). Turns an earlier rollback dropped are
//! not counted again; turns without a user message are not counted; a count beyond the
//! thread's user turns drops them all. Dropped turns are marked `rolled_back`; a rollback
//! read in a later pass than its turns names them through `Parser::take_rolled_back`.
//!
//! `session_meta.source` says who drives the thread. A subagent thread
//! (`{"subagent": "review" | "compact" | "memory_consolidation" | {"thread_spawn": {…}} |
//! {"other": …}}`, `{"internal": …}`, or `thread_source` `subagent`) gets its prompts from
//! another agent: its turns are sidechain turns, like Claude Code's. A session that is not
//! interactive (`"exec"`: `codex exec` run by a script or CI job; `"mcp"`: Codex as an MCP
//! server, driven by another program) is the user's own session, but its prompts are a
//! program's: its turns are marked `non_interactive`. Codex's own memory pipeline reads only
//! interactive sessions (`INTERACTIVE_SESSION_SOURCES` in codex-rs/rollout: `cli`,
//! `vscode`, `atlas`, `chatgpt`); a source this parser does not know, or none (older
//! builds), counts as interactive.
//!
//! `session_meta.memory_mode` says whether the thread may give memories: Codex writes
//! `"disabled"` into the first `session_meta` of a thread started with `[memories]
//! generate_memories = false`, and `thread/memoryMode/set` appends a copy of that line with
//! the new mode (`"enabled"` or `"disabled"`); Codex's memory pipeline reads only threads whose
//! last stated mode is `enabled` (none stated: `enabled`). Every turn of such a file carries
//! the thread's mode as the file last states it (`Turn::memory_mode`, any value but
//! `enabled`); a mode stated after turns were handed out is told through
//! `Parser::take_memory_mode_change`. A fork that copies the history of a thread whose mode is
//! not `enabled` carries that mode too: the copied turns cannot be told from its own.
//!
//! Early rollouts (codex-rs 2025, before `RolloutLine`) have no envelope: the first line is
//! the bare `SessionMeta` (`{"id","timestamp","instructions","git"}`), `{"record_type":
//! "state"}` lines snapshot the session, and every other line is a bare `ResponseItem`, with
//! no timestamp and no turn boundary. Each bare record is read as the envelope kind it stands
//! for (its items dated by the session's start, each new prompt opening a turn, the cwd taken
//! from the `<environment_context>` message). Lines of neither format are counted in
//! `ParserState::unknown_format_lines`.
//!
//! Codex writes context as user-role messages too (AGENTS.md, `<environment_context>`,
//! `<skill>`, `<plugins>`, a `!command`'s output, a Stop hook's `<hook_prompt>`…): those are
//! recognised by their start and end markers, in any case, and are never a prompt.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::lenient::{Bool, Int, Obj, Str};
use crate::model::{Event, TurnStatus};
use crate::parse::{LineError, ParserCore};
use crate::patch::summarize_patch;
use crate::text::{self, MAX_ARGS, MAX_ASSISTANT_TEXT, MAX_COMMAND, MAX_PROMPT};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    timestamp: Str<'a>,
    /// Early rollouts: `state` marks a session-state snapshot line.
    #[serde(borrow, default)]
    record_type: Str<'a>,
    /// Early rollouts: the bare `SessionMeta` of the first line has an `id` and no `type`.
    #[serde(borrow, default)]
    id: Str<'a>,
    /// The line's position in the thread's history (newer rollouts).
    #[serde(default)]
    ordinal: Int,
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    payload: Obj<Payload<'a>>,
}

/// The union of the payload fields the parser reads; every payload kind parses into it.
#[derive(Deserialize, Default)]
struct Payload<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    // session_meta
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    cwd: Str<'a>,
    #[serde(borrow, default)]
    cli_version: Str<'a>,
    #[serde(borrow, default)]
    forked_from_id: Str<'a>,
    #[serde(borrow, default)]
    git: Option<&'a RawValue>,
    #[serde(borrow, default)]
    source: Option<&'a RawValue>,
    #[serde(borrow, default)]
    thread_source: Str<'a>,
    #[serde(borrow, default)]
    parent_thread_id: Str<'a>,
    #[serde(default)]
    subagent_history_start_ordinal: Int,
    #[serde(borrow, default)]
    memory_mode: Str<'a>,
    // turn events
    #[serde(borrow, default)]
    turn_id: Str<'a>,
    #[serde(borrow, default)]
    reason: Str<'a>,
    // thread_rolled_back
    #[serde(default)]
    num_turns: Int,
    // messages
    #[serde(borrow, default)]
    role: Str<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(borrow, default)]
    message: Str<'a>,
    // tools
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(borrow, default)]
    arguments: Str<'a>,
    #[serde(borrow, default)]
    call_id: Str<'a>,
    #[serde(borrow, default)]
    output: Option<&'a RawValue>,
    #[serde(borrow, default)]
    input: Str<'a>,
    #[serde(borrow, default)]
    action: Option<&'a RawValue>,
    #[serde(default)]
    success: Bool,
    #[serde(borrow, default)]
    changes: Option<&'a RawValue>,
    #[serde(default)]
    exit_code: Int,
}

#[derive(Deserialize, Default)]
struct Git<'a> {
    #[serde(borrow, default)]
    branch: Str<'a>,
}

#[derive(Deserialize)]
struct ContentItem<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
}

#[derive(Deserialize, Default)]
struct ShellArgs<'a> {
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
    #[serde(borrow, default)]
    cmd: Str<'a>,
    #[serde(borrow, default)]
    input: Str<'a>,
    #[serde(borrow, default)]
    patch: Str<'a>,
}

#[derive(Deserialize, Default)]
struct LocalShellAction<'a> {
    #[serde(borrow, default)]
    command: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct OutputEnvelope<'a> {
    #[serde(borrow, default)]
    output: Str<'a>,
    #[serde(borrow, default)]
    metadata: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct OutputMeta {
    #[serde(default)]
    exit_code: Int,
}

/// A command given as a string or an argv array (`["bash","-lc","cargo test"]`).
fn command_text(raw: Option<&RawValue>) -> Option<String> {
    let raw = raw?;
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'"') => serde_json::from_str::<String>(s).ok(),
        Some(b'[') => {
            let argv: Vec<String> = serde_json::from_str::<Vec<serde_json::Value>>(s)
                .ok()?
                .into_iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect();
            // `bash -lc "<script>"` is the script.
            if argv.len() == 3
                && matches!(
                    argv[0].as_str(),
                    "bash" | "sh" | "zsh" | "/bin/bash" | "/bin/sh"
                )
                && matches!(argv[1].as_str(), "-lc" | "-c")
            {
                return Some(argv[2].clone());
            }
            Some(argv.join(" "))
        }
        _ => None,
    }
}

/// Message text parts joined, skipping images.
fn content_text(raw: Option<&RawValue>) -> Vec<String> {
    let Some(raw) = raw else { return Vec::new() };
    let Ok(items) = serde_json::from_str::<Vec<&RawValue>>(raw.get()) else {
        return Vec::new();
    };
    items
        .into_iter()
        .filter_map(|i| serde_json::from_str::<ContentItem>(i.get()).ok())
        .filter(|i| matches!(i.kind.get(), Some("input_text" | "output_text" | "text")))
        .filter_map(|i| i.text.0.map(|t| t.into_owned()))
        .collect()
}

/// The start and end markers of the context fragments Codex writes as user-role messages
/// (codex-rs/core `contextual_user_message.rs`, `model_visible_context.rs` and
/// `model_visible_fragments.rs` across versions; `<subagents>` is developer-role in the versions
/// seen, kept in case one writes it as user). A Stop hook's continuation is
/// `<hook_prompt hook_run_id="…">reason</hook_prompt>` (codex-rs/protocol `items.rs`,
/// `build_hook_prompt_message`), matched by [`is_hook_prompt`].
const CONTEXT_FRAGMENT_MARKERS: &[(&str, &str)] = &[
    ("# AGENTS.md instructions for ", "</INSTRUCTIONS>"),
    ("<INSTRUCTIONS>", "</INSTRUCTIONS>"),
    ("<user_instructions>", "</user_instructions>"),
    ("<environment_context>", "</environment_context>"),
    ("<skill>", "</skill>"),
    ("<skills_section>", "</skills_section>"),
    ("<plugins>", "</plugins>"),
    ("<subagents>", "</subagents>"),
    ("<subagent_notification>", "</subagent_notification>"),
    ("<user_shell_command>", "</user_shell_command>"),
    ("<turn_aborted>", "</turn_aborted>"),
    ("<additional_context>", "</additional_context>"),
    ("<js_repl_instructions>", "</js_repl_instructions>"),
    (
        "<child_agents_instructions>",
        "</child_agents_instructions>",
    ),
];

/// `text` (trimmed) starts with `start` and ends with `end`, ASCII case ignored, as Codex
/// matches its own fragments.
fn wrapped_in(text: &str, start: &str, end: &str) -> bool {
    let starts = text
        .get(..start.len())
        .is_some_and(|head| head.eq_ignore_ascii_case(start));
    let ends = text
        .len()
        .checked_sub(end.len())
        .and_then(|at| text.get(at..))
        .is_some_and(|tail| tail.eq_ignore_ascii_case(end));
    starts && ends
}

/// A Stop hook's reason Codex feeds back as a user-role message:
/// `<hook_prompt hook_run_id="…">…</hook_prompt>`.
fn is_hook_prompt(text: &str) -> bool {
    const OPEN: &str = "<hook_prompt";
    let after_open = text.get(OPEN.len()..).and_then(|rest| rest.chars().next());
    wrapped_in(text, OPEN, "</hook_prompt>")
        && after_open.is_some_and(|c| c == '>' || c.is_ascii_whitespace())
}

/// Longest working directory taken from an `<environment_context>` block.
const MAX_ENVIRONMENT_CWD: usize = 4096;

/// The `<cwd>` of an `<environment_context>` block Codex writes as a user-role message
/// (`EnvironmentContext`, codex-rs/core `environment_context.rs`), when it is an absolute path.
pub(crate) fn environment_cwd(text: &str) -> Option<&str> {
    let text = text.trim();
    if !wrapped_in(text, "<environment_context>", "</environment_context>") {
        return None;
    }
    let start = text.find("<cwd>")? + "<cwd>".len();
    let len = text.get(start..)?.find("</cwd>")?;
    let cwd = text.get(start..start + len)?.trim();
    (cwd.starts_with('/') || cwd.get(1..3) == Some(":\\"))
        .then_some(cwd)
        .filter(|c| c.len() <= MAX_ENVIRONMENT_CWD && !c.contains(['\n', '\r']))
}

/// Context Codex writes as a user-role message: not the user's words.
fn is_injected(text: &str) -> bool {
    let text = text.trim();
    is_hook_prompt(text)
        || CONTEXT_FRAGMENT_MARKERS
            .iter()
            .any(|(start, end)| wrapped_in(text, start, end))
}

/// Longest subagent kind kept; the kind is part of the session key.
const MAX_SUBAGENT_KIND: usize = 64;

/// A Codex thread that another agent drives, from its `session_meta`.
#[derive(Debug, PartialEq)]
struct SubagentThread {
    /// `thread_spawn`, `review`, `compact`, `memory_consolidation`, or the name Codex gives
    /// another kind.
    kind: String,
    /// The spawning thread (`thread_spawn.parent_thread_id`).
    parent: Option<String>,
}

/// Who drives a thread, from `SessionSource` (codex-rs/protocol `protocol.rs`; serialised as
/// a lowercase string for the user's own sessions, `{"subagent": …}` or `{"internal": …}`
/// otherwise) and, on newer rollouts, `thread_source`. `None`: the user's own thread.
fn subagent_thread(
    source: Option<&RawValue>,
    thread_source: Option<&str>,
) -> Option<SubagentThread> {
    use serde_json::Value;
    let kind_of = |name: &str| -> String {
        let name = if name.is_empty() { "subagent" } else { name };
        name.chars().take(MAX_SUBAGENT_KIND).collect()
    };
    let source: Option<Value> = source.and_then(|raw| serde_json::from_str(raw.get()).ok());
    let from_source = match source.as_ref().and_then(Value::as_object) {
        Some(map) => match (map.get("subagent"), map.get("internal")) {
            (Some(Value::String(kind)), _) => Some(SubagentThread {
                kind: kind_of(kind),
                parent: None,
            }),
            (Some(Value::Object(variant)), _) => {
                let (name, body) = variant
                    .iter()
                    .next()
                    .map_or(("subagent", &Value::Null), |(k, v)| (k.as_str(), v));
                let parent = body
                    .get("parent_thread_id")
                    .and_then(Value::as_str)
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned);
                let kind = match (name, body) {
                    ("other", Value::String(other)) => kind_of(other),
                    _ => kind_of(name),
                };
                Some(SubagentThread { kind, parent })
            }
            (Some(_), _) => Some(SubagentThread {
                kind: kind_of("subagent"),
                parent: None,
            }),
            (None, Some(internal)) => Some(SubagentThread {
                kind: kind_of(internal.as_str().unwrap_or("internal")),
                parent: None,
            }),
            (None, None) => None,
        },
        None => None,
    };
    from_source.or_else(|| match thread_source {
        Some(kind @ ("subagent" | "memory_consolidation")) => Some(SubagentThread {
            kind: kind_of(kind),
            parent: None,
        }),
        _ => None,
    })
}

/// Whether `SessionSource` names a session no person types in: `exec` (`codex exec`) or
/// `mcp` (Codex as an MCP server), serialised lowercase (codex-rs/protocol `protocol.rs`).
fn non_interactive_source(source: Option<&RawValue>) -> bool {
    source
        .and_then(|raw| serde_json::from_str::<&str>(raw.get()).ok())
        .is_some_and(|s| matches!(s, "exec" | "mcp"))
}

/// Exit code of a function_call_output: a JSON envelope with `metadata.exit_code`, or the
/// "Exit code: N" / "Process exited with code N" header of newer shell tools.
fn output_text_and_code(raw: Option<&RawValue>) -> (String, Option<i64>) {
    use crate::text::{OUTPUT_HEAD, OUTPUT_TAIL, cap_head_tail, json_string_head_tail};
    let Some(raw) = raw else {
        return (String::new(), None);
    };
    let s = raw.get();
    let text = match s.as_bytes().first() {
        // Old shell tools wrapped output in a JSON envelope (a string holding an object whose
        // exit code sits at the end): decode those whole, they are bounded by the tool.
        Some(b'"') if s.starts_with("\"{\\\"output\\\"") && s.len() < (8 << 20) => {
            let full: String = serde_json::from_str(s).unwrap_or_default();
            let (t, c) = envelope(&full);
            return (cap_head_tail(&t, OUTPUT_HEAD, OUTPUT_TAIL).into_owned(), c);
        }
        Some(b'"') => json_string_head_tail(s, OUTPUT_HEAD, OUTPUT_TAIL).unwrap_or_default(),
        Some(b'[') => cap_head_tail(
            &content_text(Some(raw)).join("\n"),
            OUTPUT_HEAD,
            OUTPUT_TAIL,
        )
        .into_owned(),
        Some(b'{') => {
            // Some versions store the envelope as an object.
            let (t, c) = envelope(s);
            return (cap_head_tail(&t, OUTPUT_HEAD, OUTPUT_TAIL).into_owned(), c);
        }
        _ => String::new(),
    };
    let code = header_exit_code(&text);
    (text, code)
}

fn envelope(s: &str) -> (String, Option<i64>) {
    match serde_json::from_str::<OutputEnvelope>(s) {
        Ok(env) => {
            let code = env
                .metadata
                .and_then(|m| serde_json::from_str::<OutputMeta>(m.get()).ok())
                .and_then(|m| m.exit_code.0);
            let text = env.output.get().unwrap_or("").to_owned();
            (text, code)
        }
        Err(_) => (s.to_owned(), None),
    }
}

fn header_exit_code(text: &str) -> Option<i64> {
    let mut end = text.len().min(600);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let head = &text[..end];
    for pat in [
        "Process exited with code ",
        "Exit code: ",
        "exit code: ",
        "Exit code ",
    ] {
        if let Some(i) = head.find(pat) {
            let rest = &head[i + pat.len()..];
            let end = rest
                .char_indices()
                .find(|&(j, c)| !(c.is_ascii_digit() || (j == 0 && c == '-')))
                .map(|(j, _)| j)
                .unwrap_or(rest.len());
            if let Ok(n) = rest[..end].parse::<i64>() {
                return Some(n);
            }
        }
    }
    None
}

/// The `type`s of a `ResponseItem` (codex-rs/protocol `models.rs`), which early rollouts
/// wrote as bare lines.
const RESPONSE_ITEM_KINDS: &[&str] = &[
    "message",
    "reasoning",
    "function_call",
    "function_call_output",
    "local_shell_call",
    "custom_tool_call",
    "custom_tool_call_output",
    "web_search_call",
    "tool_search_call",
    "tool_search_output",
    "image_generation_call",
    "compaction",
    "context_compaction",
];

/// What a line without a `payload` is in the rollouts Codex wrote before every line became a
/// `{"timestamp","type","payload"}` envelope (codex-rs/core `rollout.rs`, 2025): the first
/// line is the bare `SessionMeta` (`id`, `timestamp`, `instructions`, in later versions `cwd`,
/// `originator`, `cli_version`, with `git` beside them: `SessionMetaWithGit`), lines
/// `{"record_type":"state",…}` snapshot the session's state (`SessionStateSnapshot`), and
/// every other line is a bare `ResponseItem` (no timestamp, no turn boundaries: the cwd is in
/// the `<environment_context>` user message). A recorder of the transition tagged its lines
/// with `record_type` `session_meta` or `response` instead. `None`: not of these shapes.
enum Bare {
    /// A line of the format that says nothing cairn keeps (a state snapshot).
    Nothing,
    /// A line read as the envelope kind it stands for, from its own fields.
    As(&'static str),
}

fn bare_record(record_type: Option<&str>, kind: Option<&str>, id: Option<&str>) -> Option<Bare> {
    match (record_type, kind) {
        (Some("state" | "event"), _) => Some(Bare::Nothing),
        (Some("session_meta" | "prev_session_meta"), _) => Some(Bare::As("session_meta")),
        (Some("response"), _) => Some(Bare::As("response_item")),
        (Some(_), _) => None,
        (None, Some(k)) if RESPONSE_ITEM_KINDS.contains(&k) => Some(Bare::As("response_item")),
        (None, None) if id.is_some() => Some(Bare::As("session_meta")),
        (None, _) => None,
    }
}

/// The Codex half of [`crate::Parser`].
pub(crate) fn feed(core: &mut ParserCore, line: &[u8], line_no: u64) -> Result<(), LineError> {
    let l: Line = serde_json::from_slice(line).map_err(LineError::json)?;
    let mut ts = l.timestamp.non_empty().map(str::to_owned);
    let (kind, p) = match l.payload.0 {
        Some(p) => (l.kind.get().unwrap_or(""), p),
        None => match bare_record(
            l.record_type.non_empty(),
            l.kind.non_empty(),
            l.id.non_empty(),
        ) {
            Some(Bare::As(kind)) => {
                // An early rollout's record: its fields are the payload's. Its items carry no
                // time; the session's start is the best known.
                let p: Payload = serde_json::from_slice(line).map_err(LineError::json)?;
                if ts.is_none() {
                    ts.clone_from(&core.state.session.started_at);
                }
                (kind, p)
            }
            Some(Bare::Nothing) => {
                core.state.known_format_lines += 1;
                return Ok(());
            }
            None => {
                core.state.unknown_format_lines += 1;
                return Ok(());
            }
        },
    };
    if kind.is_empty() {
        core.state.unknown_format_lines += 1;
        return Ok(());
    }
    core.state.known_format_lines += 1;
    let filter = core.filter;
    if let (Some(own_from), Some(ordinal)) = (core.state.own_lines_from_ordinal, l.ordinal.0)
        && ordinal < own_from
    {
        // The parent's history, replayed so a subagent thread has its context.
        return Ok(());
    }
    match kind {
        "session_meta" if core.state.own_session_meta_seen => {
            // The thread's own again: `thread/memoryMode/set` appends a copy of the first
            // with the new `memory_mode`. Another thread's: the start of the history this
            // file copies, which changes nothing but a memory mode that keeps it out.
            if let (Some(id), Some(mode)) = (p.id.non_empty(), p.memory_mode.get()) {
                let copied = id != core.state.session.id;
                core.set_memory_mode(memory_mode_off(mode), copied);
            }
        }
        "session_meta" => own_session_meta(core, &p, ts),
        "turn_context" => {
            let cwd = p.cwd.non_empty().map(str::to_owned);
            if let Some(c) = &cwd {
                core.state.session.cwd.get_or_insert_with(|| c.clone());
            }
            let turn_id = p.turn_id.non_empty();
            let same = match (core.state.current.as_ref(), turn_id) {
                (Some(t), Some(id)) => t.key == id,
                (Some(_), None) => core.state.task_events,
                (None, _) => false,
            };
            let open_task_turn = core.state.task_events
                && core
                    .state
                    .current
                    .as_ref()
                    .is_some_and(|t| t.status == TurnStatus::Open && turn_id.is_none());
            if same || open_task_turn {
                if let (Some(t), Some(c)) = (core.current_mut(line_no), cwd) {
                    t.cwd = Some(c);
                }
            } else if !core.state.task_events
                || core
                    .state
                    .current
                    .as_ref()
                    .is_none_or(|t| t.status != TurnStatus::Open)
            {
                let key = turn_id
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("ctx-{}", core.state.next_seq));
                let t = core.start_turn(key, line_no);
                t.started_at = ts;
                if cwd.is_some() {
                    t.cwd = cwd;
                }
                core.state.current_from_context = true;
            }
        }
        "event_msg" => match p.kind.get().unwrap_or("") {
            "task_started" | "turn_started" => {
                core.state.task_events = true;
                let id = p
                    .turn_id
                    .non_empty()
                    .map(str::to_owned)
                    .unwrap_or_else(|| format!("task-{}", core.state.next_seq));
                let adopt = core.state.current.as_ref().is_some_and(|t| {
                    t.key == id
                        || (core.state.current_from_context
                            && t.prompt.is_empty()
                            && t.key.starts_with("ctx-"))
                });
                if adopt {
                    if let Some(t) = core.current_mut(line_no) {
                        t.key = id;
                        if t.started_at.is_none() {
                            t.started_at = ts;
                        }
                    }
                    core.state.current_from_context = false;
                } else {
                    let t = core.start_turn(id, line_no);
                    t.started_at = ts;
                }
            }
            "task_complete" | "turn_complete" => {
                if let Some(t) = core.current_mut(line_no)
                    && p.turn_id.non_empty().is_none_or(|id| id == t.key)
                {
                    t.status = TurnStatus::Complete;
                    t.ended_at = ts;
                }
                core.close_current();
            }
            "turn_aborted" => {
                if let Some(t) = core.current_mut(line_no) {
                    t.status = TurnStatus::Aborted;
                    t.ended_at = ts.clone();
                    t.push(Event::Aborted {
                        reason: p.reason.get().unwrap_or("aborted").to_owned(),
                        at: ts,
                    });
                }
                core.close_current();
            }
            "user_message" => {
                if let Some(msg) = p.message.non_empty()
                    && !is_injected(msg)
                {
                    user_prompt(core, msg, ts, line_no);
                }
            }
            "patch_apply_end" => {
                let paths: Vec<String> = p
                    .changes
                    .and_then(|c| {
                        serde_json::from_str::<std::collections::BTreeMap<String, &RawValue>>(
                            c.get(),
                        )
                        .ok()
                    })
                    .map(|m| m.into_keys().map(|k| filter(&k).into_owned()).collect())
                    .unwrap_or_default();
                let turn = core.current_or_implicit(p.turn_id.get(), line_no);
                turn.push(Event::PatchApplied {
                    call_id: p.call_id.get().unwrap_or("").to_owned(),
                    success: p.success.is_true(),
                    paths,
                    at: ts,
                });
            }
            "exec_command_end" => {
                let call_id = p.call_id.get().unwrap_or("").to_owned();
                let turn = core.current_or_implicit(p.turn_id.get(), line_no);
                let seen = turn
                    .events
                    .iter()
                    .any(|e| matches!(e, Event::ToolResult { call_id: c, .. } if *c == call_id));
                if !seen {
                    turn.push(Event::ToolResult {
                        call_id,
                        exit_code: p.exit_code.0,
                        is_error: p.exit_code.0.is_some_and(|c| c != 0),
                        output: String::new(),
                        at: ts,
                    });
                }
            }
            "thread_rolled_back" => {
                // A count Codex never writes (negative) drops nothing; one too large, all.
                let n = p.num_turns.0.unwrap_or(0).max(0);
                core.roll_back(usize::try_from(n).unwrap_or(usize::MAX));
            }
            "context_compacted" => {
                if let Some(t) = core.current_mut(line_no)
                    && !matches!(t.events.last(), Some(Event::Compacted { .. }))
                {
                    t.push(Event::Compacted { at: ts });
                }
            }
            _ => {}
        },
        "compacted" => {
            if let Some(t) = core.current_mut(line_no)
                && !matches!(t.events.last(), Some(Event::Compacted { .. }))
            {
                t.push(Event::Compacted { at: ts });
            }
        }
        "response_item" => response_item(core, &p, ts, line_no),
        _ => {}
    }
    Ok(())
}

/// The file's first `session_meta`: the session the whole file is filed under.
fn own_session_meta(core: &mut ParserCore, p: &Payload, ts: Option<String>) {
    let st = &mut core.state;
    st.own_session_meta_seen = true;
    let s = &mut st.session;
    if let Some(id) = p.id.non_empty() {
        s.id = id.to_owned();
    }
    if let Some(cwd) = p.cwd.non_empty() {
        s.cwd = Some(cwd.to_owned());
    }
    if let Some(v) = p.cli_version.non_empty() {
        s.cli_version = Some(v.to_owned());
    }
    if ts.is_some() {
        s.started_at = ts;
    }
    if let Some(g) = p
        .git
        .and_then(|g| serde_json::from_str::<Git>(g.get()).ok())
        && let Some(b) = g.branch.non_empty()
    {
        s.git_branch = Some(b.to_owned());
    }
    let subagent = subagent_thread(p.source, p.thread_source.non_empty());
    let spawned_by = subagent.as_ref().and_then(|t| t.parent.clone());
    s.parent = spawned_by
        .or_else(|| p.forked_from_id.non_empty().map(str::to_owned))
        .or_else(|| p.parent_thread_id.non_empty().map(str::to_owned))
        .or_else(|| s.parent.take());
    if let Some(thread) = subagent {
        s.subagent = Some(thread.kind);
        st.sidechain = true;
        if let Some(t) = st.current.as_mut() {
            t.sidechain = true;
        }
    }
    if non_interactive_source(p.source) {
        st.non_interactive = true;
        if let Some(t) = st.current.as_mut() {
            t.non_interactive = true;
        }
    }
    st.own_lines_from_ordinal = p.subagent_history_start_ordinal.0.filter(|&n| n > 0);
    core.set_memory_mode(p.memory_mode.get().and_then(memory_mode_off), false);
}

/// Longest `memory_mode` value kept (Codex writes `enabled`, `disabled`, `polluted`).
const MAX_MEMORY_MODE: usize = 32;

/// A thread's `memory_mode` (codex-rs/protocol `SessionMeta.memory_mode`), when it keeps the
/// thread out of memory generation: every value but `enabled`, since Codex's phase 1 and 2
/// read only threads whose mode is `enabled` (codex-rs/state `memories.rs`). Codex writes
/// `disabled` for a thread started with `[memories] generate_memories = false` (the rollout
/// recorder) or turned off with `thread/memoryMode/set`; `polluted` is kept in Codex's state
/// database, but is read here too should a rollout carry it.
fn memory_mode_off(mode: &str) -> Option<String> {
    let mode = mode.trim();
    (!mode.eq_ignore_ascii_case("enabled")).then(|| mode.chars().take(MAX_MEMORY_MODE).collect())
}

fn user_prompt(core: &mut ParserCore, msg: &str, ts: Option<String>, line_no: u64) {
    let filter = core.filter;
    let prompt = text::keep(filter, msg, MAX_PROMPT);
    let needs_turn = match core.state.current.as_ref() {
        None => true,
        // Old rollouts: a second prompt without a turn boundary starts a new turn.
        Some(t) => !t.prompt.is_empty() && t.prompt != prompt && !core.state.task_events,
    };
    if needs_turn {
        let key = format!("ctx-{}", core.state.next_seq);
        let t = core.start_turn(key, line_no);
        t.started_at = ts.clone();
    }
    let Some(turn) = core.current_mut(line_no) else {
        return;
    };
    if turn.prompt.is_empty() {
        turn.prompt = prompt.clone();
        turn.push(Event::UserPrompt {
            text: prompt,
            at: ts,
        });
    } else if turn.prompt != prompt {
        // A follow-up message inside the same turn (steering): keep it as an event.
        turn.push(Event::UserPrompt {
            text: prompt,
            at: ts,
        });
    }
}

fn response_item(core: &mut ParserCore, p: &Payload, ts: Option<String>, line_no: u64) {
    let filter = core.filter;
    match p.kind.get().unwrap_or("") {
        "message" => match p.role.get().unwrap_or("") {
            "user" => {
                let texts = content_text(p.content);
                if let Some(cwd) = texts.iter().find_map(|t| environment_cwd(t)) {
                    // Where the session runs, when nothing else said so (early rollouts
                    // state it only here); kept as a `session_meta` cwd is.
                    let cwd = cwd.to_owned();
                    if let Some(t) = core.state.current.as_mut()
                        && t.cwd.is_none()
                    {
                        t.cwd = Some(cwd.clone());
                    }
                    core.state.session.cwd.get_or_insert(cwd);
                }
                let parts: Vec<String> = texts
                    .into_iter()
                    .filter(|t| !is_injected(t) && !t.trim().is_empty())
                    .collect();
                if !parts.is_empty() {
                    user_prompt(core, &parts.join("\n"), ts, line_no);
                }
            }
            "assistant" => {
                let text = content_text(p.content).join("\n");
                if !text.trim().is_empty() {
                    let turn = core.current_or_implicit(None, line_no);
                    turn.push(Event::AssistantText {
                        text: text::keep(filter, &text, MAX_ASSISTANT_TEXT),
                        at: ts,
                    });
                }
            }
            _ => {}
        },
        "function_call" => {
            let name = p.name.get().unwrap_or("").to_owned();
            let call_id = p.call_id.get().unwrap_or("").to_owned();
            let raw_args = p.arguments.get().unwrap_or("");
            let args: ShellArgs = serde_json::from_str(raw_args).unwrap_or_default();
            let turn = core.current_or_implicit(None, line_no);
            if name == "apply_patch" {
                let patch = args.input.get().or(args.patch.get()).unwrap_or("");
                push_patch(turn, filter, call_id, name, patch, ts);
                return;
            }
            let command = match name.as_str() {
                "shell" | "shell_command" | "exec_command" | "container.exec" | "local_shell" => {
                    args.cmd
                        .get()
                        .map(str::to_owned)
                        .or_else(|| command_text(args.command))
                }
                _ => None,
            };
            turn.push(Event::ToolCall {
                call_id,
                tool: name,
                command: command.map(|c| text::keep(filter, &c, MAX_COMMAND)),
                args: Some(text::keep(filter, raw_args, MAX_ARGS)),
                at: ts,
            });
        }
        "local_shell_call" => {
            let call_id = p.call_id.get().unwrap_or("").to_owned();
            let action: LocalShellAction = p
                .action
                .and_then(|a| serde_json::from_str(a.get()).ok())
                .unwrap_or_default();
            let command = command_text(action.command);
            let turn = core.current_or_implicit(None, line_no);
            turn.push(Event::ToolCall {
                call_id,
                tool: "local_shell".into(),
                command: command.map(|c| text::keep(filter, &c, MAX_COMMAND)),
                args: None,
                at: ts,
            });
        }
        "custom_tool_call" => {
            let name = p.name.get().unwrap_or("").to_owned();
            let call_id = p.call_id.get().unwrap_or("").to_owned();
            let input = p.input.get().unwrap_or("");
            let turn = core.current_or_implicit(None, line_no);
            if name == "apply_patch" {
                push_patch(turn, filter, call_id, name, input, ts);
            } else {
                turn.push(Event::ToolCall {
                    call_id,
                    tool: name,
                    command: None,
                    args: Some(text::keep(filter, input, MAX_ARGS)),
                    at: ts,
                });
            }
        }
        "function_call_output" | "custom_tool_call_output" => {
            let call_id = p.call_id.get().unwrap_or("").to_owned();
            let (out, code) = output_text_and_code(p.output);
            let turn = core.current_or_implicit(None, line_no);
            turn.push(Event::ToolResult {
                call_id,
                exit_code: code,
                is_error: code.is_some_and(|c| c != 0),
                output: filter(&out).into_owned(),
                at: ts,
            });
        }
        _ => {}
    }
}

fn push_patch(
    turn: &mut crate::model::Turn,
    filter: text::TextFilter,
    call_id: String,
    name: String,
    patch: &str,
    ts: Option<String>,
) {
    let s = summarize_patch(patch);
    turn.push(Event::ToolCall {
        call_id: call_id.clone(),
        tool: name.clone(),
        command: None,
        args: Some(text::keep(filter, patch, MAX_ARGS)),
        at: ts.clone(),
    });
    turn.push(Event::FileEdit {
        call_id,
        tool: name,
        paths: s.paths.iter().map(|p| filter(p).into_owned()).collect(),
        added: s.added,
        removed: s.removed,
        at: ts,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_from_output_headers() {
        assert_eq!(
            header_exit_code("Process exited with code 2\n\nOutput:\nx"),
            Some(2)
        );
        assert_eq!(header_exit_code("Exit code: 0\nWall time: 1s"), Some(0));
        assert_eq!(header_exit_code("nothing here"), None);
        let (t, c) =
            envelope(r#"{"output":"ok\n","metadata":{"exit_code":1,"duration_seconds":0.2}}"#);
        assert_eq!((t.as_str(), c), ("ok\n", Some(1)));
    }

    #[test]
    fn context_fragments_need_both_markers_in_any_case() {
        for injected in [
            "# AGENTS.md instructions for /w\n\n<INSTRUCTIONS>\nbody\n</INSTRUCTIONS>",
            "  <environment_context>\n  <cwd>/w</cwd>\n</environment_context>\n",
            "<PLUGINS>\nAlways use the figma plugin.\n</Plugins>",
            "<Subagent_Notification>{\"agent_id\":\"a\"}</subagent_notification>",
            "<user_shell_command>\n<command>ls</command>\n</user_shell_command>",
            r#"<hook_prompt hook_run_id="stop:0:/h/hooks.json">run make lint</hook_prompt>"#,
            "<HOOK_PROMPT hook_run_id=\"x\">again</HOOK_PROMPT>",
        ] {
            assert!(is_injected(injected), "{injected:?}");
        }
        for typed in [
            "what does <skill> do in codex?",
            "<plugins> are loaded from where?",
            "<hook_promptly>hi</hook_prompt>",
            "fix the </environment_context> parser",
            "remember to use pnpm",
            "",
        ] {
            assert!(!is_injected(typed), "{typed:?}");
        }
    }

    #[test]
    fn every_memory_mode_but_enabled_keeps_a_thread_out() {
        assert_eq!(memory_mode_off("enabled"), None);
        assert_eq!(memory_mode_off(" Enabled "), None);
        assert_eq!(memory_mode_off("disabled").as_deref(), Some("disabled"));
        assert_eq!(memory_mode_off("polluted").as_deref(), Some("polluted"));
        assert_eq!(
            memory_mode_off("").as_deref(),
            Some(""),
            "not `enabled` either"
        );
        let long = "x".repeat(500);
        assert_eq!(
            memory_mode_off(&long).map(|m| m.len()),
            Some(MAX_MEMORY_MODE)
        );
    }

    fn source_of(json: &str) -> Option<SubagentThread> {
        let raw: Box<RawValue> = serde_json::from_str(json).expect("test JSON");
        subagent_thread(Some(&raw), None)
    }

    #[test]
    fn only_exec_and_mcp_sessions_are_not_interactive() {
        let of = |json: &str| {
            let raw: Box<RawValue> = serde_json::from_str(json).expect("test JSON");
            non_interactive_source(Some(&raw))
        };
        assert!(of(r#""exec""#) && of(r#""mcp""#));
        for interactive in [
            r#""cli""#,
            r#""vscode""#,
            r#""atlas""#,
            r#""chatgpt""#,
            r#""unknown""#,
            r#""a-source-of-a-newer-codex""#,
            r#"{"subagent":"review"}"#,
            "null",
            "7",
        ] {
            assert!(!of(interactive), "{interactive}");
        }
        assert!(!non_interactive_source(None), "no source: an older Codex");
    }

    #[test]
    fn session_sources_tell_subagent_threads() {
        for user in [
            r#""cli""#,
            r#""vscode""#,
            r#""exec""#,
            r#""mcp""#,
            r#""unknown""#,
            r#"{"custom":"atlas"}"#,
            "null",
            "7",
        ] {
            assert_eq!(source_of(user), None, "{user}");
        }
        let kind = |json: &str| source_of(json).map(|t| t.kind);
        assert_eq!(kind(r#"{"subagent":"review"}"#).as_deref(), Some("review"));
        assert_eq!(
            kind(r#"{"subagent":"compact"}"#).as_deref(),
            Some("compact")
        );
        assert_eq!(
            kind(r#"{"subagent":"memory_consolidation"}"#).as_deref(),
            Some("memory_consolidation")
        );
        assert_eq!(
            kind(r#"{"internal":"memory_consolidation"}"#).as_deref(),
            Some("memory_consolidation")
        );
        assert_eq!(
            kind(r#"{"subagent":{"other":"guardian"}}"#).as_deref(),
            Some("guardian")
        );
        assert_eq!(
            source_of(
                r#"{"subagent":{"thread_spawn":{"parent_thread_id":"p1","depth":1,"agent_nickname":"Euclid","agent_role":"explorer"}}}"#
            ),
            Some(SubagentThread {
                kind: "thread_spawn".into(),
                parent: Some("p1".into())
            })
        );
        // A kind this parser does not know yet is still another agent's thread.
        assert_eq!(
            kind(r#"{"subagent":{"batch_job":{"depth":2}}}"#).as_deref(),
            Some("batch_job")
        );
        assert_eq!(
            subagent_thread(None, Some("subagent"))
                .map(|t| t.kind)
                .as_deref(),
            Some("subagent")
        );
        assert_eq!(subagent_thread(None, Some("user")), None);
        let long = format!(r#"{{"subagent":{{"other":"{}"}}}}"#, "x".repeat(500));
        assert_eq!(kind(&long).map(|k| k.len()), Some(MAX_SUBAGENT_KIND));
    }
}
