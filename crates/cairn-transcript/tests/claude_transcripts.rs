//! Claude Code transcripts whose user-role records are not all prompts: the harness writes
//! shell-mode commands and their output, local slash commands, background-task notices and
//! hook output as user records; a correction typed while rejecting a tool call arrives inside a
//! tool result; context blocks come in front of the typed text; and Node writes a string cut in
//! the middle of an emoji as a lone surrogate escape. The files are in
//! `tests/fixtures/claude/` (see the README there).

use std::path::PathBuf;

use cairn_transcript::reader::{LineItem, read_lines};
use cairn_transcript::{Agent, Event, Parser, Turn, TurnStatus};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude")
        .join(name)
}

/// A fixture parsed whole, the way ingest reads it, with the number of lines that were kept
/// only after their text was repaired.
fn parse_counting_repairs(name: &str) -> (Vec<Turn>, usize) {
    let file = std::fs::File::open(fixture(name)).expect("fixture");
    let mut parser = Parser::new(Agent::Claude, "from-file-name");
    let mut turns = Vec::new();
    let mut repaired = 0;
    read_lines(file, 0, |item| {
        if let LineItem::Line { bytes, number } = item {
            let (result, text_replaced) = parser.feed_bytes(bytes, number);
            assert!(result.is_ok(), "{name} line {number}: {result:?}");
            repaired += usize::from(text_replaced);
            turns.extend(parser.take_closed());
        }
    })
    .expect("read");
    let (rest, _) = parser.finish();
    turns.extend(rest);
    (turns, repaired)
}

fn parse(name: &str) -> Vec<Turn> {
    let (turns, repaired) = parse_counting_repairs(name);
    assert_eq!(repaired, 0, "{name}: no line needs a repair");
    turns
}

fn prompts(turns: &[Turn]) -> Vec<&str> {
    turns.iter().map(|t| t.prompt.as_str()).collect()
}

fn user_prompt_events(t: &Turn) -> Vec<&str> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::UserPrompt { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

fn fixture_lines(name: &str) -> Vec<String> {
    std::fs::read_to_string(fixture(name))
        .expect("fixture")
        .lines()
        .map(str::to_owned)
        .collect()
}

// `!` shell mode, local commands, task notices and hook output are the
// harness's records, not the user's words.
#[test]
fn shell_mode_local_commands_and_notices_open_no_turn() {
    let turns = parse("harness-records.jsonl");
    assert_eq!(
        prompts(&turns),
        [
            "run the unit tests and tell me what fails",
            "/review PR 12",
            "thanks, that's all"
        ]
    );
    // Nothing the harness wrote reaches what extraction reads.
    for t in &turns {
        for said in t.user_texts() {
            for harness in [
                "squash",
                "force push",
                "cat CONTRIBUTING.md",
                "sonnet",
                "weekly",
                "deploy nightly",
                "hook output",
                "/pdf",
                "<",
            ] {
                assert!(
                    !said.contains(harness),
                    "turn {:?} holds {harness:?} in {said:?}",
                    t.key
                );
            }
        }
    }
    // The model's reply to the background-task notice stays with the turn before it.
    assert!(
        turns[0]
            .events
            .iter()
            .any(|e| matches!(e, Event::AssistantText { text, .. } if text.contains("background")))
    );
    // A skill the model loaded is part of the turn that loaded it.
    assert!(turns[1].events.iter().any(
        |e| matches!(e, Event::AssistantText { text, .. } if text.starts_with("PR 12 looks good"))
    ));
    // Turns keep their positions in the file.
    let seqs: Vec<u32> = turns.iter().map(|t| t.seq).collect();
    assert_eq!(seqs, [0, 1, 2]);
}

/// The Stop hook tells a turn's first line by feeding that line alone to a fresh parser.
#[test]
fn a_harness_line_fed_alone_opens_no_turn() {
    let lines = fixture_lines("harness-records.jsonl");
    let opens_a_turn = |line: &str| {
        let mut p = Parser::new(Agent::Claude, "");
        p.feed(line, 1).expect("line parses");
        p.current().is_some()
    };
    let harness: Vec<&String> = lines
        .iter()
        .filter(|l| {
            [
                "<bash-",
                "<command-name>",
                "<local-command-stdout>",
                "<task-notification>",
                "<user-prompt-submit-hook>",
            ]
            .iter()
            .any(|m| l.contains(&format!(r#""content":"{m}"#)))
        })
        .collect();
    assert_eq!(harness.len(), 8);
    for line in harness {
        assert!(!opens_a_turn(line), "{line}");
    }
    assert!(opens_a_turn(&lines[0]), "a typed prompt does");
}

// What the user types while rejecting a tool call is their correction.
#[test]
fn a_correction_typed_while_rejecting_a_tool_call_is_a_user_prompt_of_the_turn() {
    let turns = parse("tool-rejection.jsonl");
    assert_eq!(
        prompts(&turns),
        [
            "install the dependencies",
            "fix the typo in README.md",
            "delete the build directory"
        ]
    );

    let npm = &turns[0];
    assert_eq!(
        npm.user_texts(),
        [
            "install the dependencies",
            "no, never use npm in this repo, always use bun because the lockfile is bun.lockb"
        ]
    );
    // The tool result is kept as Claude Code recorded it, the correction right after it.
    let at = npm
        .events
        .iter()
        .position(|e| {
            matches!(e, Event::ToolResult { call_id, is_error: true, output, .. }
                if call_id == "toolu_01RejectNpm"
                    && output.starts_with("The user doesn't want to proceed")
                    && output.contains("consider saving that to memory"))
        })
        .expect("the rejected call's result");
    assert!(matches!(
        &npm.events[at + 1],
        Event::UserPrompt { text, at: Some(_) } if text.starts_with("no, never use npm")
    ));
    assert_eq!(npm.status, TurnStatus::Complete);

    // Content given as text blocks, without the memory hint.
    assert_eq!(
        user_prompt_events(&turns[1])[1..],
        ["that spelling is intended, it is a quote; leave quotes as they are"]
    );

    // A rejection without words adds nothing the user said; the interrupt aborts the turn.
    let rm = &turns[2];
    assert_eq!(rm.user_texts(), ["delete the build directory"]);
    assert_eq!(rm.status, TurnStatus::Aborted);
    assert!(
        rm.events
            .iter()
            .any(|e| matches!(e, Event::ToolResult { is_error: true, .. }))
    );
}

/// A tool result that only quotes the rejection text (the output of `cat` on a file holding
/// it) is not the user's correction.
#[test]
fn rejection_text_in_a_successful_tool_result_is_not_a_correction() {
    let mut p = Parser::new(Agent::Claude, "s");
    let lines = fixture_lines("tool-rejection.jsonl");
    p.feed(&lines[0], 1).expect("prompt");
    p.feed(&lines[1], 2).expect("tool call");
    let quoted = lines[2].replace(r#""is_error":true"#, r#""is_error":false"#);
    p.feed(&quoted, 3).expect("tool result");
    let turn = p.current().expect("turn");
    assert_eq!(turn.user_texts(), ["install the dependencies"]);
}

// Context blocks in front of the typed text are dropped, the text kept.
#[test]
fn context_blocks_in_front_of_a_prompt_are_dropped_and_the_prompt_kept() {
    let turns = parse("context-blocks.jsonl");
    assert_eq!(
        prompts(&turns),
        [
            "remember that deploys happen on Mondays",
            "explain what this function does",
            "summarize it"
        ]
    );
    for t in &turns {
        assert_eq!(user_prompt_events(t), [t.prompt.as_str()]);
    }
}

#[test]
fn a_reminder_and_the_typed_text_in_one_string_keep_the_typed_text() {
    let mut p = Parser::new(Agent::Claude, "s");
    let line = fixture_lines("context-blocks.jsonl")[0].replace(
        r#"[{"type":"text","text":"<system-reminder>"#,
        r#""<system-reminder>"#,
    );
    let line = line.replace(
        r#"</system-reminder>"},{"type":"text","text":"remember that deploys happen on Mondays"}]"#,
        r#"</system-reminder>\nremember that deploys happen on Mondays""#,
    );
    assert!(line.contains(r#""content":"<system-reminder>"#), "{line}");
    p.feed(&line, 1).expect("line parses");
    assert_eq!(
        p.current().map(|t| t.prompt.as_str()),
        Some("remember that deploys happen on Mondays")
    );
}

// A lone surrogate escape costs only itself, not the line.
#[test]
fn a_lone_surrogate_escape_is_replaced_and_the_line_kept() {
    let (turns, repaired) = parse_counting_repairs("lone-surrogates.jsonl");
    assert_eq!(repaired, 2, "the prompt line and the reply line");
    assert_eq!(
        prompts(&turns),
        [
            "remember that we use pnpm, not npm",
            "from now on always run cargo fmt before committing \u{fffd}",
            "remember that the staging DB is on port 6543"
        ]
    );
    assert_eq!(
        turns[1].last_assistant_text(),
        Some("\u{fffd} will do: cargo fmt before each commit.")
    );
}

/// A tool's output is read apart from its record: a lone surrogate in it is replaced there,
/// and the output kept.
#[test]
fn a_lone_surrogate_in_a_tool_output_keeps_the_output() {
    let lines = fixture_lines("harness-records.jsonl");
    let result_line = lines[2].replace(
        r#""content":"test result: ok. 12 passed; 0 failed""#,
        r#""content":"test result: ok. 12 passed; 0 failed \ud83d""#,
    );
    assert_ne!(result_line, lines[2]);
    let mut p = Parser::new(Agent::Claude, "s");
    for (i, line) in [&lines[0], &lines[1], &result_line].into_iter().enumerate() {
        let (result, repaired) = p.feed_bytes(line.as_bytes(), i as u64 + 1);
        assert!(result.is_ok(), "line {}: {result:?}", i + 1);
        assert!(!repaired, "the record itself parses");
    }
    let turn = p.current().expect("turn");
    assert!(turn.events.iter().any(|e| matches!(e,
        Event::ToolResult { output, .. } if output == "test result: ok. 12 passed; 0 failed \u{fffd}")));
}

#[test]
fn a_line_that_is_broken_otherwise_is_still_skipped() {
    let line = &fixture_lines("lone-surrogates.jsonl")[3];
    let cut = &line[..line.len() - 20];
    let mut p = Parser::new(Agent::Claude, "s");
    let (result, _) = p.feed_bytes(cut.as_bytes(), 1);
    assert!(result.is_err());
    assert!(p.current().is_none());
}
