//! Claude Code session transcripts (`<root>/projects/<key>/<sessionId>.jsonl` and
//! `<sessionId>/subagents/agent-<id>.jsonl`).
//!
//! A turn starts at a real user prompt (not a tool result, not a meta record, not a compact
//! summary) and runs to the next one. `system` records `turn_duration` / `stop_hook_summary`
//! mark the end of a turn; "[Request interrupted by user…]" aborts it.
//!
//! Claude Code writes much that is not the user's words as user-role records: a `!` shell
//! command and its output, local slash commands and their output, background-task notices,
//! hook output, messages from agent teammates, a skill the model loads (those records carry
//! the tool call's `sourceToolUseID`). They are told by how their text starts and never open a
//! turn nor become a prompt. Context Claude Code puts in front of the typed text
//! (`<system-reminder>`, the IDE's `<ide_selection>` / `<ide_opened_file>`), in a block of its
//! own or at the start of the text, is dropped and the typed text kept. A slash command that
//! asks the model (a custom command, a skill, `/review`) is a prompt: `/name args`.
//!
//! What the user types while rejecting a tool call comes inside the tool result, after Claude
//! Code's rejection text (and before the note on memory it may append). The result is kept as
//! it is; the words follow it as an [`Event::UserPrompt`] of the turn, as a Codex steering
//! message does, so what reads the turn's user texts reads the correction too.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::lenient::{Bool, Obj, ObjList, Str, StrList};
use crate::model::{Event, TurnStatus};
use crate::parse::{LineError, ParserCore};
use crate::text::{
    self, MAX_ARGS, MAX_ASSISTANT_TEXT, MAX_COMMAND, MAX_PROMPT, OUTPUT_HEAD, OUTPUT_TAIL,
    json_string_head_tail,
};

#[derive(Deserialize)]
struct Record<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    subtype: Str<'a>,
    #[serde(borrow, default)]
    uuid: Str<'a>,
    #[serde(borrow, default)]
    timestamp: Str<'a>,
    #[serde(borrow, default)]
    cwd: Str<'a>,
    #[serde(rename = "sessionId", borrow, default)]
    session_id: Str<'a>,
    #[serde(rename = "gitBranch", borrow, default)]
    git_branch: Str<'a>,
    #[serde(borrow, default)]
    version: Str<'a>,
    #[serde(rename = "isSidechain", default)]
    is_sidechain: Bool,
    #[serde(rename = "isMeta", default)]
    is_meta: Bool,
    #[serde(rename = "isCompactSummary", default)]
    is_compact_summary: Bool,
    #[serde(rename = "agentId", borrow, default)]
    agent_id: Str<'a>,
    #[serde(rename = "continuedInSessionId", borrow, default)]
    continued_in: Str<'a>,
    /// `system` / `memory_saved`: the memory files Claude Code's background extraction wrote.
    #[serde(rename = "writtenPaths", default)]
    written_paths: StrList,
    /// Set on the user records a tool adds (a skill's loading message and content).
    #[serde(rename = "sourceToolUseID", borrow, default)]
    source_tool_use_id: Str<'a>,
    #[serde(borrow, default)]
    message: Obj<Message<'a>>,
}

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow, default)]
    content: Content<'a>,
}

#[derive(Deserialize)]
struct Block<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Str<'a>,
    #[serde(borrow, default)]
    text: Str<'a>,
    #[serde(borrow, default)]
    id: Str<'a>,
    #[serde(borrow, default)]
    name: Str<'a>,
    #[serde(borrow, default)]
    input: Option<&'a RawValue>,
    #[serde(borrow, default)]
    tool_use_id: Str<'a>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    is_error: Bool,
}

#[derive(Deserialize, Default)]
struct ToolInput<'a> {
    #[serde(borrow, default)]
    command: Str<'a>,
    #[serde(borrow, default)]
    file_path: Str<'a>,
    #[serde(borrow, default)]
    notebook_path: Str<'a>,
    #[serde(borrow, default)]
    content: Str<'a>,
    #[serde(borrow, default)]
    new_source: Str<'a>,
    #[serde(borrow, default)]
    old_string: Str<'a>,
    #[serde(borrow, default)]
    new_string: Str<'a>,
    #[serde(borrow, default)]
    edits: Option<Vec<&'a RawValue>>,
}

#[derive(Deserialize, Default)]
struct EditPart<'a> {
    #[serde(borrow, default)]
    old_string: Str<'a>,
    #[serde(borrow, default)]
    new_string: Str<'a>,
}

/// Content is either a plain string or a list of blocks, parsed in the same pass as the
/// record; blocks that are not objects are dropped.
#[derive(Default)]
enum Content<'a> {
    Text(String),
    Blocks(Vec<Block<'a>>),
    #[default]
    None,
}

impl<'de: 'a, 'a> Deserialize<'de> for Content<'a> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::{IgnoredAny, MapAccess, SeqAccess, Visitor};
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Content<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("message content")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Self::Value, E> {
                Ok(Content::Text(v.to_owned()))
            }
            fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some(Obj(b)) = s.next_element::<Obj<Block<'de>>>()? {
                    out.extend(b);
                }
                Ok(Content::Blocks(out))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
                while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Content::None)
            }
            fn visit_bool<E: serde::de::Error>(self, _: bool) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_i64<E: serde::de::Error>(self, _: i64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_u64<E: serde::de::Error>(self, _: u64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_f64<E: serde::de::Error>(self, _: f64) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
            fn visit_unit<E: serde::de::Error>(self) -> Result<Self::Value, E> {
                Ok(Content::None)
            }
        }
        d.deserialize_any(V)
    }
}

#[derive(Deserialize)]
struct RawTextBlock<'a> {
    #[serde(borrow, default)]
    text: Option<&'a RawValue>,
}

/// Text of a tool_result `content` (a string or a list of text blocks), `head` and `tail`
/// bytes of it, without decoding the middle of long outputs.
fn tool_result_text(raw: Option<&RawValue>, head: usize, tail: usize) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'"') => json_text(s, head, tail).unwrap_or_default(),
        Some(b'[') => {
            let blocks: ObjList<RawTextBlock> = serde_json::from_str(s).unwrap_or_default();
            let mut out = String::new();
            for b in blocks.0 {
                let Some(t) = b.text.filter(|t| t.get().starts_with('"')) else {
                    continue;
                };
                if let Some(t) = json_text(t.get(), head, tail) {
                    if !out.is_empty() {
                        out.push('\n');
                    }
                    out.push_str(&t);
                }
            }
            out
        }
        _ => String::new(),
    }
}

/// A raw JSON string's text, `head` and `tail` bytes of it. A tool's output is not decoded
/// with its record, so a lone surrogate escape in it is replaced here.
fn json_text(raw: &str, head: usize, tail: usize) -> Option<String> {
    json_string_head_tail(raw, head, tail).or_else(|| {
        let paired = crate::lone_surrogates::replace_in_json_str(raw)?;
        json_string_head_tail(&paired, head, tail)
    })
}

fn count_lines(s: Option<&str>) -> u32 {
    match s {
        None | Some("") => 0,
        Some(s) => u32::try_from(s.lines().count()).unwrap_or(u32::MAX),
    }
}

/// Starts of the user-role records Claude Code writes for itself: never a prompt, never the
/// start of a turn, never what extraction reads.
const HARNESS_RECORD_STARTS: &[&str] = &[
    // `!` shell mode: the command the user ran, then its output. The command is the user's,
    // but it is a command for the shell, not a request to the model nor a statement to
    // remember; like Codex's `<user_shell_command>`, it is not kept.
    "<bash-input>",
    "<bash-stdout>",
    "<bash-stderr>",
    // A local slash command (`/model sonnet`): Claude Code writes its record `<command-name>`
    // first (`formatCommandInputTags`), a command that asks the model `<command-message>`
    // first (see [`slash_command`]). Then the command's output, and the caveat it writes
    // before local commands (`isMeta` in the versions seen; older ones wrote it untagged).
    "<command-name>",
    "<local-command-stdout>",
    "<local-command-stderr>",
    "<local-command-caveat>",
    "Caveat: The messages below were generated by the user while running local commands",
    // A background task (a shell command or an agent run in the background) finished.
    "<task-notification>",
    // A UserPromptSubmit hook's output, as older versions wrote it.
    "<user-prompt-submit-hook>",
    // A message from another agent of an agent team.
    "<teammate-message",
];

/// Context Claude Code puts in front of the text the user typed, in a text block of its own
/// or at the start of the text: dropped, the rest kept.
const CONTEXT_FRAGMENTS: &[(&str, &str)] = &[
    ("<system-reminder>", "</system-reminder>"),
    ("<ide_selection>", "</ide_selection>"),
    ("<ide_opened_file>", "</ide_opened_file>"),
];

/// What the user typed in a piece of a user record's text: `None` when it is a record the
/// harness writes ([`HARNESS_RECORD_STARTS`]) or only context ([`CONTEXT_FRAGMENTS`]);
/// otherwise the text after the context in front of it (the text as it is when there is
/// none).
fn typed_part(text: &str) -> Option<&str> {
    let mut typed = text;
    let mut rest = text.trim_start();
    while let Some((_, end)) = CONTEXT_FRAGMENTS
        .iter()
        .find(|(start, _)| rest.starts_with(start))
    {
        // An unclosed fragment is context to the end.
        let (_, after) = rest.split_once(end)?;
        rest = after.trim_start();
        typed = rest;
        if rest.is_empty() {
            return None;
        }
    }
    let harness = HARNESS_RECORD_STARTS.iter().any(|s| rest.starts_with(s));
    (!harness).then_some(typed)
}

/// Built-in slash commands that run locally and are not requests to the model, for a record
/// written `<command-message>` first (the way of commands that ask the model) that names one.
const LOCAL_COMMANDS: &[&str] = &[
    "add-dir",
    "agents",
    "clear",
    "compact",
    "config",
    "context",
    "cost",
    "doctor",
    "exit",
    "export",
    "help",
    "hooks",
    "ide",
    "login",
    "logout",
    "mcp",
    "memory",
    "model",
    "permissions",
    "plugin",
    "privacy-settings",
    "release-notes",
    "resume",
    "rewind",
    "status",
    "statusline",
    "terminal-setup",
    "theme",
    "usage",
    "vim",
];

/// A slash command's record, `<command-message>` first (`formatSlashCommandLoadingMetadata`,
/// a command that asks the model: a custom command, a skill, a built-in prompt like
/// `/review`): `None` if it is not one, `Some(None)` for a command [`LOCAL_COMMANDS`] names
/// (not a prompt), `Some(Some(text))` otherwise (the prompt is `/name args`). A record
/// `<command-name>` first is a local command's, never a prompt ([`HARNESS_RECORD_STARTS`]).
fn slash_command(t: &str) -> Option<Option<String>> {
    let t = t.trim_start();
    let rest = t
        .strip_prefix("<command-message>")
        .map(|r| {
            r.split_once("</command-message>")
                .map_or("", |x| x.1)
                .trim_start()
        })
        .unwrap_or(t);
    let name = rest
        .strip_prefix("<command-name>")?
        .split_once("</command-name>")?
        .0;
    let name = name.trim().trim_start_matches('/');
    if LOCAL_COMMANDS.contains(&name) {
        return Some(None);
    }
    let args = t
        .split_once("<command-args>")
        .and_then(|x| x.1.split_once("</command-args>"))
        .map_or("", |x| x.0.trim());
    Some(Some(if args.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {args}")
    }))
}

fn is_interrupt(t: &str) -> bool {
    t.trim_start().starts_with("[Request interrupted by user")
}

/// The Claude Code half of [`crate::Parser`].
pub(crate) fn feed(core: &mut ParserCore, line: &[u8], line_no: u64) -> Result<(), LineError> {
    let rec: Record = serde_json::from_slice(line).map_err(LineError::json)?;
    let kind = rec.kind.get().unwrap_or("");
    let ts = rec.timestamp.non_empty().map(str::to_owned);

    // Session facts, from whichever record carries them first.
    let st = &mut core.state;
    if st.session.id.is_empty()
        && let Some(id) = rec.session_id.non_empty()
    {
        st.session.id = id.to_owned();
    }
    if st.session.cwd.is_none() {
        st.session.cwd = rec.cwd.non_empty().map(str::to_owned);
    }
    if st.session.git_branch.is_none() {
        st.session.git_branch = rec.git_branch.non_empty().map(str::to_owned);
    }
    if st.session.cli_version.is_none() {
        st.session.cli_version = rec.version.non_empty().map(str::to_owned);
    }
    if rec.is_sidechain.is_true() {
        st.sidechain = true;
        if st.session.subagent.is_none() {
            st.session.subagent = rec.agent_id.non_empty().map(str::to_owned);
        }
    }
    if st.session.started_at.is_none() && ts.is_some() && kind != "file-history-snapshot" {
        st.session.started_at = ts.clone();
    }

    match kind {
        "user" => user_record(core, rec, ts, line_no),
        "assistant" => assistant_record(core, rec, ts, line_no),
        "system" => {
            match rec.subtype.get() {
                Some("compact_boundary") => {
                    if let Some(t) = core.current_mut(line_no) {
                        t.push(Event::Compacted { at: ts });
                    }
                }
                // Claude Code's background extraction saved memories of the turn that just
                // ended: written by the agent, like an Edit into its memory dir.
                Some("memory_saved") if !rec.written_paths.0.is_empty() => {
                    if let Some(t) = core.current_mut(line_no) {
                        t.push(Event::FileEdit {
                            call_id: rec.uuid.get().unwrap_or("memory_saved").to_owned(),
                            tool: "memory_saved".to_owned(),
                            paths: rec.written_paths.0.clone(),
                            added: 0,
                            removed: 0,
                            at: ts,
                        });
                    }
                }
                Some("turn_duration") | Some("stop_hook_summary") => {
                    if let Some(t) = core.current_mut(line_no) {
                        if t.status == TurnStatus::Open {
                            t.status = TurnStatus::Complete;
                        }
                        t.ended_at = ts.or_else(|| t.ended_at.take());
                    }
                }
                _ => {}
            }
            Ok(())
        }
        "continued-in" => {
            if let Some(next) = rec.continued_in.non_empty() {
                core.state.session.continued_in = Some(next.to_owned());
            }
            Ok(())
        }
        _ => Ok(()),
    }
}

fn user_record(
    core: &mut ParserCore,
    rec: Record,
    ts: Option<String>,
    line_no: u64,
) -> Result<(), LineError> {
    let Some(msg) = rec.message.0 else {
        return Ok(());
    };
    let content = msg.content;

    // Tool results are events of the current turn, never prompts.
    if let Content::Blocks(blocks) = &content
        && blocks.iter().any(|b| b.kind.get() == Some("tool_result"))
    {
        tool_results(core, blocks, rec.uuid.get(), ts, line_no);
        return Ok(());
    }
    if rec.is_compact_summary.is_true() {
        if let Some(t) = core.current_mut(line_no)
            && !matches!(t.events.last(), Some(Event::Compacted { .. }))
        {
            t.push(Event::Compacted { at: ts });
        }
        return Ok(());
    }
    // `isMeta`: context Claude Code adds (a command's expanded prompt, a caveat); a record
    // from a tool (a skill the model loaded) carries the tool call's id.
    if rec.is_meta.is_true() || rec.source_tool_use_id.non_empty().is_some() {
        return Ok(());
    }
    let text = match content {
        Content::Text(t) => match typed_part(&t) {
            Some(typed) if typed.len() == t.len() => t,
            Some(typed) => typed.to_owned(),
            None => return Ok(()),
        },
        Content::Blocks(bs) => {
            let mut out = String::new();
            let mut harness = false;
            for b in &bs {
                match b.kind.get() {
                    Some("text") => {
                        let Some(t) = b.text.get() else { continue };
                        let Some(typed) = typed_part(t) else {
                            harness = true;
                            continue;
                        };
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str(typed);
                    }
                    Some("image") => {
                        if !out.is_empty() {
                            out.push('\n');
                        }
                        out.push_str("[image]");
                    }
                    _ => {}
                }
            }
            if harness && out.is_empty() {
                return Ok(());
            }
            out
        }
        Content::None => return Ok(()),
    };
    let text = match slash_command(&text) {
        None => text,
        Some(None) => return Ok(()),
        Some(Some(cmd)) => cmd,
    };
    if is_interrupt(&text) {
        if let Some(t) = core.current_mut(line_no) {
            t.status = TurnStatus::Aborted;
            t.ended_at = ts.clone();
            t.push(Event::Aborted {
                reason: "interrupted".into(),
                at: ts,
            });
        }
        return Ok(());
    }
    let key = rec
        .uuid
        .non_empty()
        .map(str::to_owned)
        .unwrap_or_else(|| format!("line-{line_no}"));
    let prompt = text::keep(core.filter, &text, MAX_PROMPT);
    let sidechain = core.state.sidechain;
    let turn = core.start_turn(key, line_no);
    turn.started_at = ts.clone();
    turn.cwd = rec.cwd.non_empty().map(str::to_owned);
    turn.git_branch = rec.git_branch.non_empty().map(str::to_owned);
    turn.sidechain = sidechain;
    turn.prompt = prompt.clone();
    turn.push(Event::UserPrompt {
        text: prompt,
        at: ts,
    });
    Ok(())
}

/// The tool results of a user record, as events of the current turn; a correction the user
/// typed while rejecting a tool call follows its result as a [`Event::UserPrompt`].
fn tool_results(
    core: &mut ParserCore,
    blocks: &[Block],
    record_uuid: Option<&str>,
    ts: Option<String>,
    line_no: u64,
) {
    let filter = core.filter;
    let mut events = Vec::new();
    let mut user_said_something = false;
    for b in blocks {
        if b.kind.get() != Some("tool_result") {
            continue;
        }
        let out = tool_result_text(b.content, OUTPUT_HEAD, OUTPUT_TAIL);
        let exit_code = out
            .strip_prefix("Exit code ")
            .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
            .and_then(|d| d.parse::<i64>().ok());
        let is_error = b.is_error.is_true();
        // Detected on the capped output (the preamble is far shorter than its head), read
        // again longer for the words.
        let correction = (is_error && rejection_words(&out).is_some())
            .then(|| tool_result_text(b.content, REJECTION_TEXT_READ, 0))
            .and_then(|whole| rejection_words(&whole).map(|w| text::keep(filter, w, MAX_PROMPT)));
        events.push(Event::ToolResult {
            call_id: b.tool_use_id.get().unwrap_or("").to_owned(),
            exit_code,
            is_error,
            output: filter(&out).into_owned(),
            at: ts.clone(),
        });
        if let Some(text) = correction {
            user_said_something = true;
            events.push(Event::UserPrompt {
                text,
                at: ts.clone(),
            });
        }
    }
    // What the user said is kept even when the file shows no turn before it.
    let turn = if user_said_something {
        Some(core.current_or_implicit(record_uuid, line_no))
    } else {
        core.current_mut(line_no)
    };
    if let Some(turn) = turn {
        for e in events {
            turn.push(e);
        }
        turn.last_line = line_no;
    }
}

/// How Claude Code's tool result starts, and the words just before what the user typed, when
/// the user rejects a tool call and says why (`REJECT_MESSAGE_WITH_REASON_PREFIX`; in a
/// subagent, `SUBAGENT_REJECT_MESSAGE_WITH_REASON_PREFIX`; `src/utils/messages.ts`).
const REJECTION_PREAMBLES: &[(&str, &str)] = &[
    (
        "The user doesn't want to proceed with this tool use.",
        "To tell you how to proceed, the user said:\n",
    ),
    (
        "Permission for this tool use was denied.",
        "The user said:\n",
    ),
];

/// The start of the note Claude Code may append to a rejection (`withMemoryCorrectionHint`).
const MEMORY_CORRECTION_HINT: &str =
    "\n\nNote: The user's next message may contain a correction or preference.";

/// How much of a rejection's text is read for the user's words: a prompt's worth past the
/// preamble.
const REJECTION_TEXT_READ: usize = MAX_PROMPT + 1024;

/// What the user typed when rejecting a tool call, from the tool result's text; `None` for
/// any other result, and for a rejection without words.
fn rejection_words(result: &str) -> Option<&str> {
    let said = REJECTION_PREAMBLES
        .iter()
        .find_map(|(start, before_words)| {
            let rest = result.strip_prefix(start)?;
            let preamble_end = rest.find(before_words)? + before_words.len();
            rest.get(preamble_end..)
        })?;
    let said = said
        .rfind(MEMORY_CORRECTION_HINT)
        .and_then(|hint| said.get(..hint))
        .unwrap_or(said)
        .trim();
    (!said.is_empty()).then_some(said)
}

fn assistant_record(
    core: &mut ParserCore,
    rec: Record,
    ts: Option<String>,
    line_no: u64,
) -> Result<(), LineError> {
    let Some(msg) = rec.message.0 else {
        return Ok(());
    };
    let blocks = match msg.content {
        Content::Blocks(b) => b,
        Content::Text(t) => {
            if t.trim().is_empty() {
                return Ok(());
            }
            let filter = core.filter;
            let turn = core.current_or_implicit(rec.uuid.get(), line_no);
            turn.push(Event::AssistantText {
                text: text::keep(filter, &t, MAX_ASSISTANT_TEXT),
                at: ts,
            });
            return Ok(());
        }
        Content::None => return Ok(()),
    };
    let filter = core.filter;
    let sidechain = core.state.sidechain;
    let turn = core.current_or_implicit(rec.uuid.get(), line_no);
    turn.sidechain |= sidechain;
    if turn.cwd.is_none() {
        turn.cwd = rec.cwd.non_empty().map(str::to_owned);
    }
    for b in blocks {
        match b.kind.get() {
            Some("text") => {
                if let Some(t) = b.text.get().filter(|t| !t.trim().is_empty()) {
                    turn.push(Event::AssistantText {
                        text: text::keep(filter, t, MAX_ASSISTANT_TEXT),
                        at: ts.clone(),
                    });
                }
            }
            Some("tool_use") => {
                let tool = b.name.get().unwrap_or("").to_owned();
                let call_id = b.id.get().unwrap_or("").to_owned();
                let input: ToolInput = b
                    .input
                    .and_then(|r| serde_json::from_str(r.get()).ok())
                    .unwrap_or_default();
                let command = match tool.as_str() {
                    "Bash" | "BashOutput" | "PowerShell" => input
                        .command
                        .get()
                        .map(|c| text::keep(filter, c, MAX_COMMAND)),
                    _ => None,
                };
                let args = b.input.map(|r| text::keep(filter, r.get(), MAX_ARGS));
                let edit = match tool.as_str() {
                    "Write" => Some((input.file_path.get(), count_lines(input.content.get()), 0)),
                    "Edit" => Some((
                        input.file_path.get(),
                        count_lines(input.new_string.get()),
                        count_lines(input.old_string.get()),
                    )),
                    "MultiEdit" => {
                        let (mut a, mut r) = (0u32, 0u32);
                        for e in input.edits.iter().flatten() {
                            if let Ok(p) = serde_json::from_str::<EditPart>(e.get()) {
                                a = a.saturating_add(count_lines(p.new_string.get()));
                                r = r.saturating_add(count_lines(p.old_string.get()));
                            }
                        }
                        Some((input.file_path.get(), a, r))
                    }
                    "NotebookEdit" => Some((
                        input.notebook_path.get().or(input.file_path.get()),
                        count_lines(input.new_source.get()),
                        0,
                    )),
                    _ => None,
                };
                turn.push(Event::ToolCall {
                    call_id: call_id.clone(),
                    tool: tool.clone(),
                    command,
                    args,
                    at: ts.clone(),
                });
                if let Some((path, added, removed)) = edit {
                    turn.push(Event::FileEdit {
                        call_id,
                        tool,
                        paths: path
                            .map(|p| vec![filter(p).into_owned()])
                            .unwrap_or_default(),
                        added,
                        removed,
                        at: ts.clone(),
                    });
                }
            }
            _ => {}
        }
    }
    turn.last_line = line_no;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slash_commands() {
        assert_eq!(slash_command("hello"), None);
        assert_eq!(
            slash_command(
                "<command-name>/compact</command-name>\n<command-message>compact</command-message>"
            ),
            Some(None)
        );
        assert_eq!(
            slash_command(
                "<command-message>review</command-message>\n<command-name>/review</command-name>\n<command-args>PR 12</command-args>"
            ),
            Some(Some("/review PR 12".into()))
        );
    }

    #[test]
    fn what_the_user_typed_is_told_from_the_harness_and_context() {
        // Local commands, by the order of the tags, whatever their name.
        for harness in [
            "<command-name>/release-notes</command-name>\n            <command-message>release-notes</command-message>\n            <command-args></command-args>",
            "<command-name>/a-command-newer-than-cairn</command-name>\n            <command-message>a-command-newer-than-cairn</command-message>\n            <command-args>remember that x</command-args>",
            "<bash-input>git status</bash-input>",
            "<bash-stdout></bash-stdout><bash-stderr>fatal: not a git repository</bash-stderr>",
            "  <task-notification>\n<task-id>b1</task-id>\n<status>completed</status>\n</task-notification>",
            "<system-reminder>only context</system-reminder>",
            "<system-reminder>unclosed context, remember that x",
            "<system-reminder>a</system-reminder>\n<local-command-stdout>b</local-command-stdout>",
        ] {
            assert_eq!(typed_part(harness), None, "{harness:?}");
        }
        for (text, typed) in [
            ("fix the <bash-input> parser", "fix the <bash-input> parser"),
            ("  indented prompt", "  indented prompt"),
            ("", ""),
            (
                "<system-reminder>a</system-reminder>\n<ide_opened_file>b</ide_opened_file> go on",
                "go on",
            ),
        ] {
            assert_eq!(typed_part(text), Some(typed), "{text:?}");
        }
    }

    #[test]
    fn the_words_of_a_rejection_are_what_the_user_typed() {
        let with_words = "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n  use bun  \n\nNote: The user's next message may contain a correction or preference. Pay close attention.";
        assert_eq!(rejection_words(with_words), Some("use bun"));
        let subagent = "Permission for this tool use was denied. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). The user said:\nnot in this directory";
        assert_eq!(rejection_words(subagent), Some("not in this directory"));
        for no_words in [
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). STOP what you are doing and wait for the user to tell you how to proceed.",
            "The user doesn't want to take this action right now. STOP what you are doing and wait for the user to tell you how to proceed.",
            "The user doesn't want to proceed with this tool use. The tool use was rejected (eg. if it was a file edit, the new_string was NOT written to the file). To tell you how to proceed, the user said:\n\n\nNote: The user's next message may contain a correction or preference.",
            "[Request interrupted by user for tool use]",
            "Permission to use Bash has been denied.",
            "test result: ok",
        ] {
            assert_eq!(rejection_words(no_words), None, "{no_words:?}");
        }
    }
}
