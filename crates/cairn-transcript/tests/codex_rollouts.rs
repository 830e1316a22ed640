//! Codex rollouts whose turns are not all the user's own: subagent threads (spawned agents,
//! `/review`), contextual fragments Codex writes as user-role messages, forks that carry
//! their parent's history, turns a thread rollback dropped, and sessions a program drives
//! (`codex exec`, Codex as an MCP server). The files are in `tests/fixtures/codex/` (see the
//! README there).

use std::path::PathBuf;

use cairn_transcript::reader::{LineItem, read_lines};
use cairn_transcript::{Agent, Event, Parser, ParserState, Session, Turn};

const PARENT: &str = "019ad3f1-6c2e-7b40-9a51-3e8f2c7d1a01";
const SPAWNED: &str = "019ad402-1b7c-7e21-8c3d-5f60a9b4e202";
const REVIEW: &str = "019ad40e-93a1-7c55-b2e4-0d1f7a6c3303";
const FORK: &str = "019ad5a0-44f2-7a19-9e07-c2b83d5f1404";
const INHERITING: &str = "019ad61b-7d03-7b88-8f15-a3c4e6b09606";
const ROLLED_BACK: &str = "019ad6c2-5e10-7a3b-9c21-4b7d8e0f1707";
const EXEC: &str = "019ad7d0-1a2b-7c3d-8e4f-5a6b7c8d1808";
const MCP: &str = "019ad7d4-9f8e-7d6c-8b5a-4c3d2e1f1909";
const MEMORY_OFF: &str = "019ad8e1-3c4d-7e5f-8a6b-7c8d9e0f2010";
const MEMORY_SET_OFF: &str = "019ad8f2-4d5e-7f60-9b7c-8d9e0f1a2111";
const LEGACY: &str = "0198ab00-3f1e-7a2b-9c4d-5e6f7a8b0c01";

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/codex")
        .join(name)
}

/// Parses a fixture whole, the way ingest does: the session id hint is the id in the name a
/// rollout would have (`rollout-<time>-<id>.jsonl`).
fn parse(name: &str, id_from_file_name: &str) -> (Vec<Turn>, ParserState) {
    let file = std::fs::File::open(fixture(name)).expect("fixture");
    let mut parser = Parser::new(Agent::Codex, id_from_file_name);
    let mut turns = Vec::new();
    read_lines(file, 0, |item| {
        if let LineItem::Line { bytes, number } = item {
            let (result, lossy) = parser.feed_bytes(bytes, number);
            assert!(result.is_ok(), "{name} line {number}: {result:?}");
            assert!(!lossy);
            turns.extend(parser.take_closed());
            mark_rolled_back(&mut turns, parser.take_rolled_back());
            follow_memory_mode(&mut turns, &mut parser);
        }
    })
    .expect("read");
    let (rest, state) = parser.finish();
    turns.extend(rest);
    (turns, state)
}

/// What a caller does after [`Parser::take_memory_mode_change`]: gives its copies of the
/// turns handed out before the thread's memory mode.
fn follow_memory_mode(turns: &mut [Turn], parser: &mut Parser) {
    if parser.take_memory_mode_change() {
        let mode = parser.state().effective_memory_mode().map(str::to_owned);
        for t in turns {
            t.memory_mode.clone_from(&mode);
        }
    }
}

/// What a caller does with [`Parser::take_rolled_back`]: marks its copies of those turns.
fn mark_rolled_back(turns: &mut [Turn], keys: Vec<String>) {
    for key in keys {
        let turn = turns
            .iter_mut()
            .rev()
            .find(|t| t.key == key && !t.rolled_back)
            .expect("a rollback names a turn handed out before");
        turn.rolled_back = true;
    }
}

/// Parses a fixture in two parts, saving and restoring the parser state after `cut` lines, as
/// ingest does when a file grows between two passes.
fn parse_resumed(name: &str, id_from_file_name: &str, cut: usize) -> (Vec<Turn>, Session) {
    let data = std::fs::read(fixture(name)).expect("fixture");
    let lines: Vec<&[u8]> = data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .collect();
    let mut parser = Parser::new(Agent::Codex, id_from_file_name);
    let mut turns = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i == cut {
            let saved = serde_json::to_string(parser.state()).expect("state serializes");
            let state: ParserState = serde_json::from_str(&saved).expect("state deserializes");
            turns.extend(parser.take_closed());
            mark_rolled_back(&mut turns, parser.take_rolled_back());
            follow_memory_mode(&mut turns, &mut parser);
            parser = Parser::resume(Agent::Codex, state);
        }
        parser
            .feed_bytes(line, i as u64 + 1)
            .0
            .expect("line parses");
        turns.extend(parser.take_closed());
        mark_rolled_back(&mut turns, parser.take_rolled_back());
        follow_memory_mode(&mut turns, &mut parser);
    }
    let (rest, state) = parser.finish();
    turns.extend(rest);
    (turns, state.session)
}

fn user_prompts(t: &Turn) -> Vec<&str> {
    t.events
        .iter()
        .filter_map(|e| match e {
            Event::UserPrompt { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect()
}

// A subagent thread's prompts are written by the parent agent, not by the user.

#[test]
fn the_users_own_session_is_not_a_sidechain() {
    let (turns, state) = parse("parent-cli.jsonl", PARENT);
    assert_eq!(turns.len(), 2);
    assert!(turns.iter().all(|t| !t.sidechain && !t.non_interactive));
    assert_eq!(state.session.id, PARENT);
    assert_eq!(state.session.subagent, None);
    assert_eq!(state.session.parent, None);
    assert_eq!(state.session.key(), PARENT);
}

#[test]
fn a_spawned_agents_turns_are_sidechain_turns_of_its_parent() {
    let (turns, state) = parse("subagent-thread-spawn.jsonl", SPAWNED);
    assert_eq!(turns.len(), 1);
    let turn = &turns[0];
    assert!(
        turn.prompt.starts_with("You are a read-only explorer"),
        "{}",
        turn.prompt
    );
    assert!(
        turn.sidechain,
        "the parent model's instructions are not the user's"
    );
    let session = &state.session;
    assert_eq!(session.id, SPAWNED);
    assert_eq!(session.parent.as_deref(), Some(PARENT));
    assert_eq!(session.subagent.as_deref(), Some("thread_spawn"));
    assert_eq!(session.key(), format!("{SPAWNED}/thread_spawn"));
}

#[test]
fn a_review_thread_is_a_sidechain_without_a_parent() {
    let (turns, state) = parse("subagent-review.jsonl", REVIEW);
    assert_eq!(turns.len(), 1);
    assert!(turns[0].prompt.starts_with("Review the current changes"));
    assert!(turns[0].sidechain);
    assert_eq!(state.session.subagent.as_deref(), Some("review"));
    assert_eq!(state.session.parent, None);
}

#[test]
fn a_subagent_thread_stays_a_sidechain_across_a_resumed_parse() {
    for cut in 1..14 {
        let (turns, session) = parse_resumed("subagent-thread-spawn.jsonl", SPAWNED, cut);
        assert_eq!(turns.len(), 1, "cut {cut}");
        assert!(turns[0].sidechain, "cut {cut}");
        assert_eq!(
            session.key(),
            format!("{SPAWNED}/thread_spawn"),
            "cut {cut}"
        );
    }
}

// Context Codex writes as user-role messages is not what the user said.

#[test]
fn injected_context_opens_no_turn_and_is_no_prompt() {
    let (turns, _) = parse(
        "injected-context.jsonl",
        "019ad4c7-2e90-7f3a-a1b6-48e9d0c27505",
    );
    let keys: Vec<&str> = turns.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(
        keys,
        [
            "7c8d9e0f-0000-4d00-8000-000000000001",
            "7c8d9e0f-0000-4d00-8000-000000000002",
            "7c8d9e0f-0000-4d00-8000-000000000003",
        ],
        "the <plugins> message before the first turn opens no turn of its own"
    );
    // The skill text sent with the prompt, and the Stop hook's continuation, are not prompts.
    assert_eq!(turns[0].prompt, "add a health endpoint");
    assert_eq!(user_prompts(&turns[0]), ["add a health endpoint"]);
    // `!git log` typed in the TUI: Codex records its output as context, the turn has no prompt.
    assert_eq!(turns[1].prompt, "");
    assert!(user_prompts(&turns[1]).is_empty());
    assert_eq!(
        turns[2].prompt,
        "from now on keep endpoints under src/routes"
    );
    for t in &turns {
        for text in user_prompts(t) {
            for injected in ["figma", "make lint", "openapi.yaml", "git log", "AGENTS.md"] {
                assert!(!text.contains(injected), "{injected:?} in {text:?}");
            }
        }
    }
}

// A fork is its own session; the history it copies is its parent's.

#[test]
fn a_fork_keeps_its_own_id_cwd_and_branch_and_names_its_parent() {
    let (turns, state) = parse("fork-copied-history.jsonl", FORK);
    let session = &state.session;
    assert_eq!(
        session.id, FORK,
        "the parent's session_meta does not take over"
    );
    assert_eq!(session.key(), FORK);
    assert_eq!(session.parent.as_deref(), Some(PARENT));
    assert_eq!(session.cwd.as_deref(), Some("/home/dev/work/webshop-flags"));
    assert_eq!(session.git_branch.as_deref(), Some("flags"));
    assert_eq!(
        session.started_at.as_deref(),
        Some("2026-11-29T11:00:02.274Z")
    );
    let own = turns.last().expect("the fork's own turn");
    assert_eq!(
        own.prompt,
        "remember that the feature flag service is flagd on port 8013"
    );
    assert_eq!(own.cwd.as_deref(), Some("/home/dev/work/webshop-flags"));
    assert!(!own.sidechain);
    // The copied history carries no marker of where it ends; its turns keep the parent's
    // turn ids, so a reader holding the parent's turns can tell them apart.
    let parent_turns: Vec<String> = parse("parent-cli.jsonl", PARENT)
        .0
        .into_iter()
        .map(|t| t.key)
        .collect();
    let copied: Vec<&String> = turns
        .iter()
        .map(|t| &t.key)
        .filter(|k| parent_turns.contains(k))
        .collect();
    assert_eq!(copied.len(), turns.len() - 1, "every other turn is a copy");
}

#[test]
fn a_fork_resumed_after_the_parents_session_meta_stays_itself() {
    let lines = std::fs::read_to_string(fixture("fork-copied-history.jsonl"))
        .expect("fixture")
        .lines()
        .count();
    for cut in 1..lines {
        let (turns, session) = parse_resumed("fork-copied-history.jsonl", FORK, cut);
        assert_eq!(session.id, FORK, "cut {cut}");
        assert_eq!(session.parent.as_deref(), Some(PARENT), "cut {cut}");
        assert_eq!(
            session.cwd.as_deref(),
            Some("/home/dev/work/webshop-flags"),
            "cut {cut}"
        );
        assert!(turns.last().is_some_and(|t| t.prompt.contains("flagd")));
    }
}

#[test]
fn history_before_the_subagent_start_ordinal_is_not_the_threads_own() {
    let (turns, state) = parse("subagent-inherited-history.jsonl", INHERITING);
    assert_eq!(state.session.id, INHERITING);
    assert_eq!(state.session.parent.as_deref(), Some(PARENT));
    let keys: Vec<&str> = turns.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(
        keys,
        ["9e0f1a2b-0000-4f00-8000-000000000001"],
        "the parent's two turns, replayed as context, are not this thread's"
    );
    assert_eq!(turns[0].prompt, "Add a test for the router.");
    assert!(turns[0].sidechain);
}

// A rollback drops turns from the thread; their lines stay in the file.

/// `rollback.jsonl`: a user turn that stays, a rule the user rolls back with the compaction
/// turn after it (`num_turns` 1), two more user turns rolled back together (`num_turns` 2:
/// the turns dropped before are not counted again), then the turn the thread goes on with.
fn rollback_fixture_keys() -> (Vec<String>, Vec<String>) {
    let key = |n: u32| format!("0c1d2e3f-0000-4a00-8000-0000000007{n:02}");
    (vec![key(1), key(6)], vec![key(2), key(3), key(4), key(5)])
}

fn split_by_rollback(turns: &[Turn]) -> (Vec<String>, Vec<String>) {
    let (dropped, kept): (Vec<&Turn>, Vec<&Turn>) = turns.iter().partition(|t| t.rolled_back);
    let keys = |ts: Vec<&Turn>| ts.into_iter().map(|t| t.key.clone()).collect();
    (keys(kept), keys(dropped))
}

#[test]
fn turns_a_rollback_dropped_are_marked_and_the_rest_kept() {
    let (turns, state) = parse("rollback.jsonl", ROLLED_BACK);
    assert_eq!(turns.len(), 6);
    assert_eq!(split_by_rollback(&turns), rollback_fixture_keys());
    let said = |key: &str| {
        turns
            .iter()
            .find(|t| t.key == key)
            .map(|t| t.prompt.clone())
            .unwrap_or_default()
    };
    let (kept, dropped) = rollback_fixture_keys();
    assert_eq!(said(&dropped[0]), "From now on always use npm, never pnpm.");
    assert_eq!(said(&dropped[1]), "", "the compaction turn has no prompt");
    assert_eq!(said(&kept[1]), "Write the changelog entry for 2.3.");
    // Only the turns still in the thread are left to count a later rollback from.
    let left: Vec<&str> = state.thread_turns.iter().map(|t| t.key.as_str()).collect();
    assert_eq!(left, kept.iter().map(String::as_str).collect::<Vec<_>>());
}

#[test]
fn a_parser_that_still_holds_the_turns_hands_them_out_marked() {
    let data = std::fs::read(fixture("rollback.jsonl")).expect("fixture");
    let mut parser = Parser::new(Agent::Codex, ROLLED_BACK);
    for (i, line) in data
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .enumerate()
    {
        parser
            .feed_bytes(line, i as u64 + 1)
            .0
            .expect("line parses");
    }
    assert!(
        parser.take_rolled_back().is_empty(),
        "nothing was handed out before the rollbacks"
    );
    let (turns, _) = parser.finish();
    assert_eq!(split_by_rollback(&turns), rollback_fixture_keys());
}

/// Ingest reads a growing rollout in passes: a rollback read in a later pass than the turns
/// it drops names them, whatever line the first pass stopped at.
#[test]
fn a_rollback_read_in_a_later_pass_names_the_turns_it_drops() {
    let lines = std::fs::read_to_string(fixture("rollback.jsonl"))
        .expect("fixture")
        .lines()
        .count();
    for cut in 1..lines {
        let (turns, _) = parse_resumed("rollback.jsonl", ROLLED_BACK, cut);
        assert_eq!(
            split_by_rollback(&turns),
            rollback_fixture_keys(),
            "cut {cut}"
        );
    }
}

/// Rollback counts as Codex rebuilds a thread: user turns only, from the newest; one
/// without a user message before the first user turn stays; more than the thread holds
/// drops every user turn; a count of 0 (refused by Codex) or below drops nothing.
#[test]
fn a_rollback_counts_user_turns_from_the_newest() {
    let line = |kind: &str, payload: serde_json::Value| {
        serde_json::json!({"timestamp": "2026-11-30T15:00:00.000Z", "type": kind, "payload": payload})
            .to_string()
    };
    let turn = |id: &str, prompt: Option<&str>| {
        let mut out = vec![line(
            "event_msg",
            serde_json::json!({"type": "task_started", "turn_id": id}),
        )];
        if let Some(p) = prompt {
            out.push(line(
                "event_msg",
                serde_json::json!({"type": "user_message", "message": p}),
            ));
        }
        out.push(line(
            "event_msg",
            serde_json::json!({"type": "task_complete", "turn_id": id}),
        ));
        out
    };
    let rollback = |n: i64| {
        line(
            "event_msg",
            serde_json::json!({"type": "thread_rolled_back", "num_turns": n}),
        )
    };
    let dropped = |rollbacks: &[i64]| -> Vec<String> {
        let mut lines = turn("review", None);
        lines.extend(turn("a", Some("first")));
        lines.extend(turn("b", Some("second")));
        lines.extend(turn("c", Some("third")));
        lines.extend(rollbacks.iter().map(|&n| rollback(n)));
        let mut parser = Parser::new(Agent::Codex, "s");
        for (i, l) in lines.iter().enumerate() {
            parser.feed(l, i as u64 + 1).expect("line parses");
        }
        let (turns, _) = parser.finish();
        turns
            .into_iter()
            .filter(|t| t.rolled_back)
            .map(|t| t.key)
            .collect()
    };
    assert_eq!(dropped(&[1]), ["c"]);
    assert_eq!(dropped(&[2]), ["b", "c"]);
    assert_eq!(
        dropped(&[1, 1]),
        ["b", "c"],
        "a dropped turn is not counted again"
    );
    assert_eq!(
        dropped(&[99]),
        ["a", "b", "c"],
        "the turn before the first user turn stays"
    );
    assert_eq!(dropped(&[3, 1]), ["a", "b", "c"], "nothing left to drop");
    assert!(dropped(&[0]).is_empty());
    assert!(dropped(&[-2]).is_empty());
}

// A session a program drives is the user's own, but its prompts are the program's.

#[test]
fn exec_and_mcp_sessions_are_not_interactive() {
    for (name, id, said) in [
        ("exec-ci.jsonl", EXEC, "Always answer in JSON"),
        ("mcp-driven.jsonl", MCP, "From now on use yarn"),
    ] {
        let (turns, state) = parse(name, id);
        assert_eq!(turns.len(), 1, "{name}");
        assert!(
            turns[0].prompt.contains(said),
            "{name}: {}",
            turns[0].prompt
        );
        assert!(turns[0].non_interactive, "{name}");
        assert!(!turns[0].sidechain, "{name}: no other agent's thread");
        assert_eq!(
            state.session.key(),
            id,
            "{name}: filed as the session itself"
        );
        let lines = std::fs::read_to_string(fixture(name))
            .expect("fixture")
            .lines()
            .count();
        for cut in 1..lines {
            let (turns, _) = parse_resumed(name, id, cut);
            assert!(turns.iter().all(|t| t.non_interactive), "{name} cut {cut}");
        }
    }
}

// A thread whose memory is off (`memory_mode` other than `enabled`) gives no memory, as Codex's
// own memory pipeline skips it.

#[test]
fn a_thread_started_with_memory_off_marks_every_turn() {
    let (turns, state) = parse("memory-disabled.jsonl", MEMORY_OFF);
    assert_eq!(turns.len(), 2);
    assert!(
        turns
            .iter()
            .all(|t| t.memory_mode.as_deref() == Some("disabled") && t.memory_generation_off()),
        "{turns:#?}"
    );
    assert!(
        turns[0].prompt.contains("ledger-stg-3"),
        "still read: {turns:#?}"
    );
    assert!(!turns[0].non_interactive && !turns[0].sidechain);
    assert_eq!(state.session.key(), MEMORY_OFF);
    let lines = std::fs::read_to_string(fixture("memory-disabled.jsonl"))
        .expect("fixture")
        .lines()
        .count();
    for cut in 1..lines {
        let (turns, _) = parse_resumed("memory-disabled.jsonl", MEMORY_OFF, cut);
        assert!(turns.iter().all(Turn::memory_generation_off), "cut {cut}");
    }
}

/// `thread/memoryMode/set` appends the thread's `session_meta` again with the new mode: the
/// thread's mode is the last one stated, for the turns before it too (Codex's pipeline decides
/// per thread), whichever pass reads it.
#[test]
fn a_memory_mode_set_later_holds_for_the_whole_thread() {
    let (turns, state) = parse("memory-mode-set.jsonl", MEMORY_SET_OFF);
    assert_eq!(turns.len(), 2);
    assert!(turns.iter().all(Turn::memory_generation_off), "{turns:#?}");
    assert_eq!(state.effective_memory_mode(), Some("disabled"));
    assert_eq!(state.session.key(), MEMORY_SET_OFF, "not taken for a copy");
    let lines = std::fs::read_to_string(fixture("memory-mode-set.jsonl"))
        .expect("fixture")
        .lines()
        .count();
    for cut in 1..lines {
        let (turns, _) = parse_resumed("memory-mode-set.jsonl", MEMORY_SET_OFF, cut);
        assert!(turns.iter().all(Turn::memory_generation_off), "cut {cut}");
    }

    // Turned on again: the thread gives memories again, the turns before included.
    let text = std::fs::read_to_string(fixture("memory-mode-set.jsonl")).expect("fixture");
    let set = text
        .lines()
        .find(|l| l.contains(r#""memory_mode":"disabled""#))
        .expect("the appended session_meta");
    let on = format!("{text}{}\n", set.replace(r#""disabled""#, r#""enabled""#));
    let mut parser = Parser::new(Agent::Codex, MEMORY_SET_OFF);
    let mut turns = Vec::new();
    for (i, line) in on.lines().enumerate() {
        parser.feed(line, i as u64 + 1).expect("line parses");
        turns.extend(parser.take_closed());
        follow_memory_mode(&mut turns, &mut parser);
    }
    assert_eq!(turns.len(), 2);
    assert!(turns.iter().all(|t| t.memory_mode.is_none()), "{turns:#?}");
}

/// A fork goes on with its parent's rollout, the parent's `session_meta` included: a parent
/// whose memory was off keeps the fork out too (its copied turns are the parent's words, and
/// cannot be told from the fork's own); a parent with memory on changes nothing.
#[test]
fn a_fork_of_a_thread_with_memory_off_gives_no_memory() {
    let text = std::fs::read_to_string(fixture("fork-copied-history.jsonl")).expect("fixture");
    let parents_meta = format!(r#""id":"{PARENT}","timestamp""#);
    assert!(text.contains(&parents_meta));
    for (parent_mode, off) in [("disabled", true), ("enabled", false)] {
        let copied = text.replacen(
            &parents_meta,
            &format!(r#""id":"{PARENT}","memory_mode":"{parent_mode}","timestamp""#),
            1,
        );
        let mut parser = Parser::new(Agent::Codex, FORK);
        for (i, line) in copied.lines().enumerate() {
            parser.feed(line, i as u64 + 1).expect("line parses");
        }
        let (turns, state) = parser.finish();
        assert!(!turns.is_empty());
        assert!(
            turns.iter().all(|t| t.memory_generation_off() == off),
            "{parent_mode}: {turns:#?}"
        );
        assert_eq!(state.session.key(), FORK, "filed as the fork");
        assert_eq!(state.memory_mode, None, "the fork's own mode is on");
    }
}

// Rollouts of the early format (before the `{"timestamp","type","payload"}` envelope) are
// read too; a file of no known format says so.

#[test]
fn an_early_rollout_of_bare_records_gives_its_turns() {
    let (turns, state) = parse("legacy-bare-records.jsonl", LEGACY);
    let prompts: Vec<&str> = turns.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(
        prompts,
        [
            "remember that the api uses uv for dependency management, not poetry",
            "add httpx as a dependency"
        ]
    );
    assert_eq!(state.session.id, LEGACY);
    assert_eq!(
        state.session.cwd.as_deref(),
        Some("/home/dev/work/legacy-api")
    );
    assert_eq!(state.session.git_branch.as_deref(), Some("main"));
    assert_eq!(
        state.session.started_at.as_deref(),
        Some("2025-08-10T08:00:00.412Z")
    );
    for t in &turns {
        assert_eq!(
            t.cwd.as_deref(),
            Some("/home/dev/work/legacy-api"),
            "{t:#?}"
        );
        assert_eq!(
            t.started_at.as_deref(),
            Some("2025-08-10T08:00:00.412Z"),
            "no time of its own: the session's start"
        );
        assert!(!t.sidechain && !t.non_interactive && !t.memory_generation_off());
    }
    assert_eq!(turns[0].status, cairn_transcript::TurnStatus::Complete);
    let commands: Vec<(&str, Option<i64>)> = turns
        .iter()
        .flat_map(|t| &t.events)
        .filter_map(|e| match e {
            Event::ToolCall {
                command: Some(c), ..
            } => Some((c.as_str(), None)),
            Event::ToolResult { exit_code, .. } => Some(("result", *exit_code)),
            _ => None,
        })
        .collect();
    assert_eq!(
        commands,
        [
            ("ls", None),
            ("result", Some(0)),
            ("uv add httpx", None),
            ("result", Some(0))
        ]
    );
    assert!(
        turns[1]
            .last_assistant_text()
            .is_some_and(|a| a.contains("httpx"))
    );
    assert_eq!(
        (state.known_format_lines, state.unknown_format_lines),
        (14, 0)
    );
    let lines = std::fs::read_to_string(fixture("legacy-bare-records.jsonl"))
        .expect("fixture")
        .lines()
        .count();
    for cut in 1..lines {
        let (again, session) = parse_resumed("legacy-bare-records.jsonl", LEGACY, cut);
        assert_eq!(again, turns, "cut {cut}");
        assert_eq!(session, state.session, "cut {cut}");
    }
}

#[test]
fn lines_of_no_known_rollout_format_are_counted() {
    let mut parser = Parser::new(Agent::Codex, "x");
    for (i, line) in [
        r#"{"kind":"chat","text":"hello"}"#,
        r#"{"role":"user","content":"a Claude-like line"}"#,
        r#"{"record_type":"checkpoint"}"#,
        r#"{"type":"mystery","value":1}"#,
    ]
    .iter()
    .enumerate()
    {
        parser.feed(line, i as u64 + 1).expect("JSON objects");
    }
    let (turns, state) = parser.finish();
    assert!(turns.is_empty());
    assert_eq!(
        (state.known_format_lines, state.unknown_format_lines),
        (0, 4)
    );
    // An envelope of a kind this parser does not know is still the format it knows.
    let mut parser = Parser::new(Agent::Codex, "x");
    parser
        .feed(
            r#"{"timestamp":"2026-11-30T10:00:00.000Z","type":"world_state","payload":{"full":true}}"#,
            1,
        )
        .expect("parses");
    assert_eq!(parser.state().known_format_lines, 1);
}
