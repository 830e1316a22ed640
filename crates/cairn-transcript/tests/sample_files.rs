//! Parsing the hand-written sample home (examples/sample-home) file by file: turn slicing,
//! statuses, sidechains, compaction, commands and exit codes, patches.

use std::path::{Path, PathBuf};

use cairn_transcript::reader::{LineItem, read_lines};
use cairn_transcript::{Agent, Event, Parser, Turn, TurnStatus};

fn sample(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../examples/sample-home")
        .join(rel)
}

fn parse(agent: Agent, rel: &str) -> Vec<Turn> {
    let f = std::fs::File::open(sample(rel)).expect("sample file");
    let mut p = Parser::new(agent, "hint");
    let mut turns = Vec::new();
    read_lines(f, 0, |item| {
        if let LineItem::Line { bytes, number } = item {
            let (r, lossy) = p.feed_bytes(bytes, number);
            assert!(r.is_ok(), "line {number}: {r:?}");
            assert!(!lossy);
            turns.extend(p.take_closed());
        }
    })
    .expect("read");
    let (rest, _) = p.finish();
    turns.extend(rest);
    turns
}

fn commands(t: &Turn) -> Vec<String> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::ToolCall {
                command: Some(c), ..
            } => Some(c.clone()),
            _ => None,
        })
        .collect()
}

const S1: &str =
    ".claude/projects/-SAMPLE-HOME-work-webshop/5f3c9a2e-8b1d-4e7a-9c64-2d0b7f18e3a1.jsonl";
const S2: &str =
    ".claude/projects/-SAMPLE-HOME-work-webshop/b81e4d07-3c2a-4f59-a6e8-91d7c05b2f4c.jsonl";
const SUB: &str = ".claude/projects/-SAMPLE-HOME-work-webshop/5f3c9a2e-8b1d-4e7a-9c64-2d0b7f18e3a1/subagents/agent-a7c41e9.jsonl";
const C_OLD: &str = ".codex/sessions/2026/11/20/rollout-2026-11-20T08-41-05-01a1f7e6-e126-7f26-9493-6114a06f30dd.jsonl";
const C1: &str = ".codex/sessions/2026/11/23/rollout-2026-11-23T13-47-10-01a20872-2d99-772e-8ca9-396e307a2f75.jsonl";
const C2: &str = ".codex/sessions/2026/11/24/rollout-2026-11-24T18-10-22-01a20e89-8397-7310-a5da-79850a208d49.jsonl";
const C3: &str = ".codex/sessions/2026/11/25/rollout-2026-11-25T10-02-41-01a211f1-616f-72d1-a41e-1e4d4cc5e082.jsonl";

#[test]
fn claude_turns_start_at_real_prompts() {
    let turns = parse(Agent::Claude, S1);
    assert_eq!(turns.len(), 3, "three typed prompts");
    assert!(turns[0].prompt.starts_with("Customers are being charged"));
    // The first turn ends with "[Request interrupted by user for tool use]".
    assert_eq!(turns[0].status, TurnStatus::Aborted);
    assert!(turns[1].prompt.starts_with("from now on use pnpm"));
    assert!(turns.iter().all(|t| !t.sidechain));
    // Tool results are events, not prompts; Bash commands and edits are captured.
    let all: Vec<&Event> = turns.iter().flat_map(|t| &t.events).collect();
    assert!(
        all.iter()
            .any(|e| matches!(e, Event::ToolResult { is_error: true, .. }))
    );
    assert!(
        all.iter()
            .any(|e| matches!(e, Event::FileEdit { tool, .. } if tool == "MultiEdit"))
    );
    assert!(
        turns
            .iter()
            .any(|t| commands(t).iter().any(|c| c.contains("test")))
    );
    // Line numbers point into the file.
    assert!(
        turns
            .iter()
            .all(|t| t.first_line >= 1 && t.last_line >= t.first_line)
    );
}

#[test]
fn claude_compaction_and_local_commands_do_not_start_turns() {
    let turns = parse(Agent::Claude, S2);
    assert_eq!(turns.len(), 4, "four prompts; /compact is a local command");
    assert!(turns.iter().any(|t| {
        t.events
            .iter()
            .any(|e| matches!(e, Event::Compacted { .. }))
    }));
    assert!(turns.iter().all(|t| !t.prompt.contains("<command-name>")));
    assert!(turns[3].prompt.contains("コミットメッセージ"));
}

#[test]
fn claude_subagent_turns_are_marked() {
    let turns = parse(Agent::Claude, SUB);
    assert_eq!(turns.len(), 1);
    assert!(turns[0].sidechain);
}

#[test]
fn codex_task_events_slice_turns() {
    let turns = parse(Agent::Codex, C1);
    assert_eq!(turns.len(), 2);
    let t = &turns[0];
    assert_eq!(t.status, TurnStatus::Complete);
    assert!(t.prompt.starts_with("Add a unit test"), "{}", t.prompt);
    // Injected AGENTS.md / environment context is not the prompt.
    assert!(!t.prompt.contains("<environment_context>"));
    let cmds = commands(t);
    assert_eq!(cmds.len(), 4, "{cmds:?}");
    let codes: Vec<Option<i64>> = t
        .events
        .iter()
        .filter_map(|e| match e {
            Event::ToolResult { exit_code, .. } => Some(*exit_code),
            _ => None,
        })
        .collect();
    assert!(
        codes.contains(&Some(1)) && codes.contains(&Some(0)),
        "{codes:?}"
    );
    let edits: Vec<&Event> = t
        .events
        .iter()
        .filter(|e| matches!(e, Event::FileEdit { .. } | Event::PatchApplied { .. }))
        .collect();
    assert_eq!(edits.len(), 4, "two patches, each with its apply result");
    assert!(
        turns[1]
            .events
            .iter()
            .all(|e| !matches!(e, Event::FileEdit { .. }))
    );
}

#[test]
fn codex_aborted_turn() {
    let turns = parse(Agent::Codex, C2);
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0].status, TurnStatus::Aborted);
    assert!(
        turns[0]
            .events
            .iter()
            .any(|e| matches!(e, Event::Aborted { reason, .. } if reason == "interrupted"))
    );
    assert_eq!(turns[1].status, TurnStatus::Complete);
    assert!(turns[1].prompt.contains("don't run anything against prod"));
}

#[test]
fn codex_compacted_session() {
    let turns = parse(Agent::Codex, C3);
    // Three user turns plus the /compact task, which has no prompt.
    assert_eq!(turns.len(), 4);
    assert_eq!(turns.iter().filter(|t| t.prompt.is_empty()).count(), 1);
    assert!(turns.iter().any(|t| {
        t.events
            .iter()
            .any(|e| matches!(e, Event::Compacted { .. }))
    }));
    // Replacement history does not resurrect old prompts as new turns.
    let keys: std::collections::HashSet<_> = turns.iter().map(|t| &t.key).collect();
    assert_eq!(keys.len(), 4);
}

#[test]
fn codex_old_rollouts_fall_back_to_turn_context() {
    let turns = parse(Agent::Codex, C_OLD);
    assert_eq!(turns.len(), 2);
    assert!(turns[0].key.starts_with("ctx-"));
    assert!(turns[0].prompt.contains("flaky"));
    assert!(
        !commands(&turns[0]).is_empty(),
        "old `shell` tool argv is read"
    );
}

#[test]
fn resuming_from_saved_state_gives_the_same_turns() {
    // Parse C1 in two halves, saving and restoring the state between them.
    let data = std::fs::read(sample(C1)).unwrap();
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    for cut in 1..lines.len() {
        let mut p = Parser::new(Agent::Codex, "x");
        let mut turns = Vec::new();
        for (i, l) in lines[..cut].iter().enumerate() {
            p.feed_bytes(l, i as u64 + 1).0.unwrap();
        }
        turns.extend(p.take_closed());
        let state = serde_json::to_string(p.state()).unwrap();
        let mut p = Parser::resume(Agent::Codex, serde_json::from_str(&state).unwrap());
        for (i, l) in lines[cut..].iter().enumerate() {
            p.feed_bytes(l, (cut + i) as u64 + 1).0.unwrap();
        }
        let (rest, _) = p.finish();
        turns.extend(rest);
        let whole = parse(Agent::Codex, C1);
        assert_eq!(turns, whole, "cut at line {cut}");
    }
}
