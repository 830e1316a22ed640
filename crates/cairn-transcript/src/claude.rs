//! Claude Code session transcripts (`<root>/projects/<key>/<sessionId>.jsonl` and
//! `<sessionId>/subagents/agent-<id>.jsonl`).
//!
//! A turn starts at a real user prompt (not a tool result, not a meta record, not a compact
//! summary) and runs to the next one. `system` records `turn_duration` / `stop_hook_summary`
//! mark the end of a turn; "[Request interrupted by user…]" aborts it.

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::lenient::{Bool, Obj, ObjList, Str};
use crate::model::{Event, TurnStatus};
use crate::parse::{LineError, ParserCore};
use crate::text::{self, MAX_ARGS, MAX_ASSISTANT_TEXT, MAX_COMMAND, MAX_PROMPT};

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

/// Text of a tool_result `content` (a string or a list of text blocks), capped head and
/// tail without decoding the middle of long outputs.
fn tool_result_text(raw: Option<&RawValue>) -> String {
    use crate::text::{OUTPUT_HEAD, OUTPUT_TAIL, json_string_head_tail};
    let Some(raw) = raw else {
        return String::new();
    };
    let s = raw.get();
    match s.as_bytes().first() {
        Some(b'"') => json_string_head_tail(s, OUTPUT_HEAD, OUTPUT_TAIL).unwrap_or_default(),
        Some(b'[') => {
            let blocks: ObjList<RawTextBlock> = serde_json::from_str(s).unwrap_or_default();
            let mut out = String::new();
            for b in blocks.0 {
                let Some(t) = b.text.filter(|t| t.get().starts_with('"')) else {
                    continue;
                };
                if let Some(t) = json_string_head_tail(t.get(), OUTPUT_HEAD, OUTPUT_TAIL) {
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

fn count_lines(s: Option<&str>) -> u32 {
    match s {
        None | Some("") => 0,
        Some(s) => u32::try_from(s.lines().count()).unwrap_or(u32::MAX),
    }
}

/// Markers of records that look like prompts but are the harness talking.
fn is_harness_text(t: &str) -> bool {
    let t = t.trim_start();
    t.starts_with("<local-command-stdout>")
        || t.starts_with("<local-command-stderr>")
        || t.starts_with("<local-command-caveat>")
        || t.starts_with("<system-reminder>")
}

/// Built-in slash commands that run locally and are not requests to the model.
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

/// A `<command-name>/x</command-name>` record: `None` if it is not one, `Some(None)` for a
/// local command (not a prompt), `Some(Some(text))` for a command that asks the model (the
/// prompt is `/name args`).
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
    let filter = core.filter;

    // Tool results are events of the current turn, never prompts.
    if let Content::Blocks(blocks) = &content
        && blocks.iter().any(|b| b.kind.get() == Some("tool_result"))
    {
        let Some(turn) = core.current_mut(line_no) else {
            return Ok(());
        };
        for b in blocks {
            if b.kind.get() != Some("tool_result") {
                continue;
            }
            let out = tool_result_text(b.content);
            let exit_code = out
                .strip_prefix("Exit code ")
                .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next())
                .and_then(|d| d.parse::<i64>().ok());
            turn.push(Event::ToolResult {
                call_id: b.tool_use_id.get().unwrap_or("").to_owned(),
                exit_code,
                is_error: b.is_error.is_true(),
                output: filter(&out).into_owned(),
                at: ts.clone(),
            });
        }
        turn.last_line = line_no;
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
    if rec.is_meta.is_true() {
        return Ok(());
    }
    let text = match content {
        Content::Text(t) => t,
        Content::Blocks(bs) => {
            let mut out = String::new();
            for b in &bs {
                match b.kind.get() {
                    Some("text") => {
                        if let Some(t) = b.text.get() {
                            if !out.is_empty() {
                                out.push('\n');
                            }
                            out.push_str(t);
                        }
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
            out
        }
        Content::None => return Ok(()),
    };
    if is_harness_text(&text) {
        return Ok(());
    }
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
    let prompt = text::keep(filter, &text, MAX_PROMPT);
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
}
