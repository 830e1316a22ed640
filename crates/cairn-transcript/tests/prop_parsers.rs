//! Property tests of both transcript parsers and the line reader: arbitrary bytes, real records
//! (the sample home's and this crate's Codex fixtures) mutated (cut, spliced with bytes, any JSON node replaced by a value of
//! another type or by deep nesting), and resuming from a serialized state at any line.
//! Properties: no panic; every kept text stays within its cap; a parse resumed from the
//! serialized state gives the same turns as one pass.
//!
//! Cases per property: `PROPTEST_CASES` (default 64 here, so the normal test run stays fast);
//! `scripts/proptest-long.sh` runs them long.

use std::path::{Path, PathBuf};

use cairn_transcript::reader::{LineItem, read_lines};
use cairn_transcript::{Agent, Event, Parser, ParserState, Turn};
use proptest::prelude::*;
use serde_json::Value;

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64)
}

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

fn sample_files(dir: &str, out: &mut Vec<PathBuf>) {
    // Fails loudly: an unreadable sample directory once showed up only as "no sample
    // files", with its cause swallowed.
    let rd = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("reading {dir}: {e}"));
    for e in rd {
        let p = e.unwrap_or_else(|e| panic!("listing {dir}: {e}")).path();
        if p.is_dir() {
            sample_files(p.to_str().unwrap(), out);
        } else if p.extension().is_some_and(|x| x == "jsonl") {
            out.push(p);
        }
    }
}

/// The lines of every sample transcript of `agent`, file by file (for Codex, the crate's own
/// rollout fixtures too).
fn seeds(agent: Agent) -> Vec<Vec<String>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/sample-home");
    let sub = match agent {
        Agent::Claude => ".claude/projects",
        Agent::Codex => ".codex",
    };
    let mut files = Vec::new();
    sample_files(root.join(sub).to_str().unwrap(), &mut files);
    if agent == Agent::Codex {
        let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex");
        sample_files(fixtures.to_str().unwrap(), &mut files);
    }
    files.sort();
    let out: Vec<Vec<String>> = files
        .iter()
        .map(|f| {
            std::fs::read_to_string(f)
                .unwrap()
                .lines()
                .map(str::to_owned)
                .collect()
        })
        .collect();
    assert!(!out.is_empty());
    out
}

/// Marks the turns a rollback dropped after they were handed out, and gives them the
/// thread's memory mode when it changed, as a caller does.
fn mark_rolled_back(turns: &mut [Turn], p: &mut Parser) {
    if p.take_memory_mode_change() {
        let mode = p.state().effective_memory_mode().map(str::to_owned);
        for t in turns.iter_mut() {
            t.memory_mode.clone_from(&mode);
        }
    }
    for key in p.take_rolled_back() {
        if let Some(t) = turns
            .iter_mut()
            .rev()
            .find(|t| t.key == key && !t.rolled_back)
        {
            t.rolled_back = true;
        }
    }
}

fn parse_all(agent: Agent, lines: &[Vec<u8>]) -> Vec<Turn> {
    let mut p = Parser::new(agent, "hint");
    let mut turns = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let _ = p.feed_bytes(l, i as u64 + 1);
        turns.extend(p.take_closed());
        mark_rolled_back(&mut turns, &mut p);
    }
    let (rest, _) = p.finish();
    turns.extend(rest);
    turns
}

/// Stops after `k` lines, serializes the state as ingest stores it, resumes, goes on.
fn parse_resumed(agent: Agent, lines: &[Vec<u8>], k: usize) -> Vec<Turn> {
    let mut p = Parser::new(agent, "hint");
    let mut turns = Vec::new();
    for (i, l) in lines[..k].iter().enumerate() {
        let _ = p.feed_bytes(l, i as u64 + 1);
    }
    turns.extend(p.take_closed());
    mark_rolled_back(&mut turns, &mut p);
    let state = p.state().clone();
    let json = serde_json::to_string(&state).expect("state serializes");
    let state: ParserState = serde_json::from_str(&json).expect("state deserializes");
    let mut p = Parser::resume(agent, state);
    for (i, l) in lines[k..].iter().enumerate() {
        let _ = p.feed_bytes(l, (k + i) as u64 + 1);
        turns.extend(p.take_closed());
        mark_rolled_back(&mut turns, &mut p);
    }
    let (rest, _) = p.finish();
    turns.extend(rest);
    turns
}

fn check_caps(turns: &[Turn]) {
    use cairn_transcript::text::*;
    // A cap keeps `max` bytes plus its omission marker.
    let slack = 64;
    for t in turns {
        assert!(
            t.prompt.len() <= MAX_PROMPT + slack,
            "prompt {}",
            t.prompt.len()
        );
        for e in &t.events {
            match e {
                Event::AssistantText { text, .. } => {
                    assert!(text.len() <= MAX_ASSISTANT_TEXT + slack)
                }
                Event::ToolCall { command, args, .. } => {
                    assert!(
                        command
                            .as_ref()
                            .is_none_or(|c| c.len() <= MAX_COMMAND + slack)
                    );
                    assert!(args.as_ref().is_none_or(|a| a.len() <= MAX_ARGS + slack));
                }
                Event::ToolResult { output, .. } => {
                    assert!(output.len() <= OUTPUT_HEAD + OUTPUT_TAIL + slack)
                }
                _ => {}
            }
        }
    }
}

/// Any JSON value, nesting included.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_map(|f| serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)),
        ".{0,40}".prop_map(Value::String),
        Just(Value::String("Exit code 1\n".into())),
    ];
    leaf.prop_recursive(6, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec(("[a-z_]{1,12}", inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Every node of `v` (paths as indices into objects/arrays).
fn node_count(v: &Value) -> usize {
    1 + match v {
        Value::Array(a) => a.iter().map(node_count).sum(),
        Value::Object(o) => o.values().map(node_count).sum(),
        _ => 0,
    }
}

fn replace_node(v: &mut Value, mut n: usize, with: &Value) -> usize {
    if n == 0 {
        *v = with.clone();
        return usize::MAX;
    }
    n -= 1;
    let children: Vec<&mut Value> = match v {
        Value::Array(a) => a.iter_mut().collect(),
        Value::Object(o) => o.values_mut().collect(),
        _ => return n,
    };
    for c in children {
        n = replace_node(c, n, with);
        if n == usize::MAX {
            return n;
        }
    }
    n
}

#[derive(Debug, Clone)]
enum Mutation {
    Cut(usize),
    Splice(usize, Vec<u8>),
    Replace(usize, Value),
    Nest(usize, usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        any::<usize>().prop_map(Mutation::Cut),
        (any::<usize>(), prop::collection::vec(any::<u8>(), 1..16))
            .prop_map(|(a, b)| Mutation::Splice(a, b)),
        (any::<usize>(), any_json()).prop_map(|(a, v)| Mutation::Replace(a, v)),
        (any::<usize>(), 1usize..3000).prop_map(|(a, d)| Mutation::Nest(a, d)),
    ]
}

fn mutate(line: &str, m: &Mutation) -> Vec<u8> {
    let b = line.as_bytes();
    match m {
        Mutation::Cut(at) => b[..at % (b.len() + 1)].to_vec(),
        Mutation::Splice(at, bytes) => {
            let at = at % (b.len() + 1);
            [&b[..at], bytes.as_slice(), &b[at..]].concat()
        }
        Mutation::Replace(at, with) => {
            let Ok(mut v) = serde_json::from_str::<Value>(line) else {
                return b.to_vec();
            };
            let n = at % node_count(&v);
            replace_node(&mut v, n, with);
            v.to_string().into_bytes()
        }
        Mutation::Nest(at, depth) => {
            let Ok(mut v) = serde_json::from_str::<Value>(line) else {
                return b.to_vec();
            };
            let n = at % node_count(&v);
            let marker = Value::String("\u{1}NEST\u{1}".into());
            replace_node(&mut v, n, &marker);
            let deep = "[".repeat(*depth) + &"]".repeat(*depth);
            v.to_string()
                .replace("\"\\u0001NEST\\u0001\"", &deep)
                .into_bytes()
        }
    }
}

fn agent() -> impl Strategy<Value = Agent> {
    prop_oneof![Just(Agent::Claude), Just(Agent::Codex)]
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_bytes_never_panic(agent in agent(),
                                   lines in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..300), 0..20)) {
        let turns = parse_all(agent, &lines);
        check_caps(&turns);
    }

    #[test]
    fn mutated_real_records_never_panic_and_keep_the_rest(
        agent in agent(),
        file in any::<usize>(),
        muts in prop::collection::vec((any::<usize>(), mutation()), 1..6),
    ) {
        let files = seeds(agent);
        let lines = &files[file % files.len()];
        let mut bytes: Vec<Vec<u8>> = lines.iter().map(|l| l.clone().into_bytes()).collect();
        for (at, m) in &muts {
            let i = at % bytes.len();
            bytes[i] = mutate(lines[i].as_str(), m);
        }
        let turns = parse_all(agent, &bytes);
        check_caps(&turns);
        // Resuming at any line gives the same turns as one pass, damaged lines included.
        let k = muts[0].0 % (bytes.len() + 1);
        prop_assert_eq!(parse_resumed(agent, &bytes, k), turns);
    }

    #[test]
    fn resuming_at_any_line_gives_the_same_turns(agent in agent(), file in any::<usize>(), k in any::<usize>()) {
        let files = seeds(agent);
        let lines = &files[file % files.len()];
        let bytes: Vec<Vec<u8>> = lines.iter().map(|l| l.clone().into_bytes()).collect();
        let whole = parse_all(agent, &bytes);
        prop_assert_eq!(parse_resumed(agent, &bytes, k % (bytes.len() + 1)), whole);
    }

    #[test]
    fn the_line_reader_returns_every_complete_line(chunks in prop::collection::vec(prop::collection::vec(any::<u8>(), 0..64), 0..20)) {
        let data: Vec<u8> = chunks.concat();
        let mut got = Vec::new();
        read_lines(&data[..], 0, |item| {
            if let LineItem::Line { bytes, .. } = item {
                got.push(bytes.to_vec());
            }
        })
        .unwrap();
        // Complete lines only, without `\n` (and a trailing `\r`), in order.
        let complete = data.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        let want: Vec<Vec<u8>> = data[..complete]
            .split(|&b| b == b'\n')
            .take(data[..complete].iter().filter(|&&b| b == b'\n').count())
            .map(|l| l.strip_suffix(b"\r").unwrap_or(l).to_vec())
            .collect();
        prop_assert_eq!(got, want);
    }
}
