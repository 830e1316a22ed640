//! Secrets: a corpus of fake credentials in the formats of real ones
//! (`tests/fixtures/secrets/corpus.jsonl`) is planted in prompts, commands, tool outputs,
//! file edits and assistant text of both agents' transcripts, in Codex's memory files, in hook
//! payloads and in a broken config; after the hooks, the worker, `sync` (extraction),
//! `remember`, `recall`, the MCP tools, both imports and `status`, not one fragment of a
//! planted value is in any file cairn wrote (data dir with `cairn.db` and its WAL read as raw
//! bytes, every table row read through SQL, every FTS5 term, logs, memo journal, exported and
//! imported memory files, and the names of all these files) or in anything a command, hook or
//! MCP call printed. Plus a corpus of ordinary code and logs: its false positives are counted.

mod common;

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::{Value, json};

const SID: &str = "11111111-2222-4333-8444-555555555555";
const CODEX_ID: &str = "01a1f7e6-e126-7f26-9493-6114a06f30dd";
/// A leak is any run of this many bytes of a planted value.
const WINDOW: usize = 12;

struct Planted {
    kind: String,
    text: String,
    needles: Vec<String>,
}

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/secrets")
}

fn corpus() -> Vec<Planted> {
    let text = std::fs::read_to_string(fixtures().join("corpus.jsonl")).expect("corpus");
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).expect("corpus line");
            Planted {
                kind: v["kind"].as_str().unwrap().to_string(),
                text: v["text"].as_str().unwrap().to_string(),
                needles: v["needles"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|n| n.as_str().unwrap().to_string())
                    .collect(),
            }
        })
        .collect()
}

/// Every `WINDOW`-byte run of every needle: finding one of them anywhere is a leak (also of a
/// fragment, e.g. a value cut in half by a length cap).
struct Needles {
    windows: HashSet<Vec<u8>>,
    lower: HashSet<Vec<u8>>,
    /// The runs of every needle as a file name would spell it ([`slug_form`]).
    slugs: HashSet<Vec<u8>>,
}

/// ASCII letters and digits lower-cased, every run of anything else one `_`: how a memory's
/// words become its file's name.
fn slug_form(b: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(b.len());
    for &c in b {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if out.last() != Some(&b'_') {
            out.push(b'_');
        }
    }
    out
}

impl Needles {
    fn new(corpus: &[Planted]) -> Needles {
        let mut windows = HashSet::new();
        let mut lower = HashSet::new();
        let mut slugs = HashSet::new();
        for p in corpus {
            for n in &p.needles {
                assert!(n.len() >= WINDOW, "needle too short: {n}");
                for w in n.as_bytes().windows(WINDOW) {
                    windows.insert(w.to_vec());
                    lower.insert(w.to_ascii_lowercase());
                }
                for w in slug_form(n.as_bytes()).windows(WINDOW) {
                    slugs.insert(w.to_vec());
                }
            }
        }
        Needles {
            windows,
            lower,
            slugs,
        }
    }

    /// Whether a file's path spells a needle, the way file names are made from words.
    fn in_name(&self, path: &Path) -> bool {
        slug_form(path.to_string_lossy().as_bytes())
            .windows(WINDOW)
            .any(|w| self.slugs.contains(w))
    }

    /// The first leaked window in `hay`, with some context.
    fn find(&self, hay: &[u8]) -> Option<String> {
        hay.windows(WINDOW)
            .position(|w| self.windows.contains(w))
            .map(|i| {
                let a = i.saturating_sub(40);
                let b = (i + WINDOW + 40).min(hay.len());
                String::from_utf8_lossy(&hay[a..b]).into_owned()
            })
    }
}

#[test]
fn every_corpus_value_is_redacted_by_the_redactor() {
    let corpus = corpus();
    assert!(corpus.len() >= 40);
    let needles = Needles::new(&corpus);
    let mut leaks = Vec::new();
    for p in &corpus {
        let r = cairn_redact::redact(&p.text);
        if let Some(l) = needles.find(r.as_bytes()) {
            leaks.push(format!("{}: {l}", p.kind));
        }
        // A block cut at a line boundary (a length cap keeps only its head or its tail).
        let cuts: Vec<usize> = p.text.match_indices('\n').map(|(i, _)| i + 1).collect();
        for &k in cuts.iter().filter(|&&k| k < p.text.len()) {
            for part in [&p.text[..k], &p.text[k..]] {
                if let Some(l) = needles.find(cairn_redact::redact(part).as_bytes()) {
                    leaks.push(format!("{} (cut at byte {k}): {l}", p.kind));
                }
            }
        }
        // Also inside a JSON string (how tool arguments are kept: raw JSON, `\n` escaped).
        let raw = json!({"file_path": "config.env", "content": p.text}).to_string();
        if let Some(l) = needles.find(cairn_redact::redact(&raw).as_bytes()) {
            leaks.push(format!("{} (as JSON): {l}", p.kind));
        }
    }
    assert!(
        leaks.is_empty(),
        "{} leaks:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}

/// Ordinary code, configs and logs: every marker the redactor writes there is a false positive.
/// The figure is printed and recorded in RELIABILITY.md; the assertion keeps it from growing
/// (it is 0 today).
#[test]
fn clean_code_and_logs_count_their_false_positives() {
    let mut total = 0;
    let mut lines = 0;
    let mut report = Vec::new();
    let mut dir: Vec<_> = std::fs::read_dir(fixtures().join("clean"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    dir.sort();
    for p in dir {
        let text = std::fs::read_to_string(&p).unwrap();
        lines += text.lines().count();
        for line in text.lines() {
            let r = cairn_redact::redact_detailed(line);
            if r.count > 0 {
                total += r.count;
                report.push(format!(
                    "{}: {line:?} -> {:?}",
                    p.file_name().unwrap().to_string_lossy(),
                    r.text
                ));
            }
        }
    }
    eprintln!(
        "false positives: {total} in {lines} lines\n{}",
        report.join("\n")
    );
    assert!(
        total == 0,
        "false positives grew to {total}:\n{}",
        report.join("\n")
    );
}

fn claude_turn(cwd: &str, i: usize, p: &Planted) -> String {
    let u = |s: &str| format!("c{i}-{s}");
    let ts = format!("2026-11-25T14:{:02}:00.000Z", i % 60);
    let file = format!("{cwd}/config/secrets-{i}.env");
    claude_prompt(
        &u("p"),
        cwd,
        &format!("remember that we deploy with {}", p.text),
        &ts,
    ) + &claude_tool_use(
        &u("a1"),
        cwd,
        &u("t1"),
        "Bash",
        json!({"command": format!("cat > .env <<'EOF'\n{}\nEOF", p.text)}),
    ) + &claude_tool_result(
        &u("r1"),
        cwd,
        &u("t1"),
        &format!("Exit code 1\n{}\nerror: rejected", p.text),
        true,
    ) + &claude_tool_use(
        &u("a2"),
        cwd,
        &u("t2"),
        "Edit",
        json!({"file_path": file, "old_string": "TOKEN=", "new_string": p.text}),
    ) + &claude_tool_result(&u("r2"), cwd, &u("t2"), "ok", false)
        + &claude_tool_use(
            &u("a3"),
            cwd,
            &u("t3"),
            "Write",
            json!({"file_path": file, "content": p.text}),
        )
        + &claude_tool_result(&u("r3"), cwd, &u("t3"), "ok", false)
        + &claude_reply(&u("z"), cwd, &format!("Configured: {}", p.text), &ts)
}

fn codex_turn_with(turn: &str, p: &Planted) -> String {
    let call = format!("call_{turn}");
    let patch = format!(
        "*** Begin Patch\n*** Add File: config/{turn}.env\n{}\n*** End Patch\n",
        p.text
            .lines()
            .map(|l| format!("+{l}"))
            .collect::<Vec<_>>()
            .join("\n")
    );
    [
        codex_line(
            "event_msg",
            json!({"type": "task_started", "turn_id": turn}),
        ),
        codex_line(
            "response_item",
            json!({"type": "message", "role": "user",
                   "content": [{"type": "input_text", "text": format!("always deploy with {}", p.text)}]}),
        ),
        codex_line(
            "response_item",
            json!({"type": "function_call", "name": "exec_command", "call_id": call,
                   "arguments": json!({"cmd": format!("printf '%s' '{}' > .env", p.text)}).to_string()}),
        ),
        codex_line(
            "response_item",
            json!({"type": "function_call_output", "call_id": call,
                   "output": format!("Process exited with code 1\nOutput:\n{}\n", p.text)}),
        ),
        codex_line(
            "response_item",
            json!({"type": "custom_tool_call", "name": "apply_patch", "call_id": format!("{call}p"),
                   "input": patch}),
        ),
        codex_line(
            "response_item",
            json!({"type": "custom_tool_call_output", "call_id": format!("{call}p"),
                   "output": format!("Success. Updated the following files:\nA config/{turn}.env\n{}", p.text)}),
        ),
        codex_line(
            "response_item",
            json!({"type": "message", "role": "assistant",
                   "content": [{"type": "output_text", "text": format!("Set {}", p.text)}]}),
        ),
        codex_line(
            "event_msg",
            json!({"type": "task_complete", "turn_id": turn, "last_agent_message": format!("Set {}", p.text)}),
        ),
    ]
    .concat()
}

/// A tool output with one secret across the head cut and one across the tail cut of the
/// head+tail cap (1 KiB + 2 KiB), and a prompt with one across the prompt cap (16 KiB).
fn straddling(corpus: &[Planted]) -> (String, String) {
    let tok = |kind: &str| {
        corpus
            .iter()
            .find(|p| p.kind == kind)
            .map(|p| p.needles[0].clone())
            .unwrap()
    };
    let gh = tok("github-token");
    let oa = tok("aws-access-key");
    let mut out = "x".repeat(1024 - 10);
    out.push(' ');
    out.push_str(&gh);
    out.push(' ');
    out.push_str(&"y".repeat(6000));
    out.push(' ');
    out.push_str(&oa);
    out.push(' ');
    out.push_str(&"z".repeat(2048 - 20));
    let mut prompt = "remember ".to_string();
    prompt.push_str(&"w ".repeat((16 * 1024 - 30) / 2));
    prompt.push_str(&tok("slack-token"));
    prompt.push_str(" done");
    (out, prompt)
}

struct Run<'a> {
    h: &'a TestHome,
    outputs: Vec<(String, Vec<u8>)>,
}

impl Run<'_> {
    fn record(&mut self, what: &str, out: Output) -> Output {
        self.outputs
            .push((format!("{what} stdout"), out.stdout.clone()));
        self.outputs
            .push((format!("{what} stderr"), out.stderr.clone()));
        out
    }

    fn cairn(&mut self, args: &[&str]) -> Output {
        let out = self.h.cairn(args);
        assert!(
            out.status.success(),
            "cairn {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        self.record(&format!("cairn {args:?}"), out)
    }

    fn hook(&mut self, agent: &str, input: &str) -> Output {
        let out = self.h.cairn_input(&["hook", "--agent", agent], input, &[]);
        assert!(out.status.success(), "hook exited {:?}", out.status);
        self.record(
            &format!("hook {agent} {}", &input[..input.len().min(80)]),
            out,
        )
    }
}

fn codex_memory(h: &TestHome, cwd: &str, corpus: &[Planted]) {
    let m = h.codex().join("memories_v2");
    std::fs::create_dir_all(m.join("rollout_summaries")).unwrap();
    std::fs::create_dir_all(m.join("extensions/ad_hoc/notes")).unwrap();
    let pick = |i: usize| corpus[i % corpus.len()].text.replace('\n', " ");
    std::fs::write(
        m.join("memory_summary.md"),
        format!(
            "v1\n\n## User Profile\n\nThe user deploys with {}.\n\n## User preferences\n\n- always pass {}\n\n## General Tips\n\n- {}\n\n## What's in Memory\n\n### {cwd}\n\n#### 2026-11-20\n\n- rollout_summaries/2026-11-20T10-15-02-Ab3x-deploy.md — deployed with {}; thread_id=0192f3a4-1b2c-7d3e-8f40-123456789abc\n  - keywords: deploy\n",
            pick(0),
            pick(5),
            pick(9),
            pick(14)
        ),
    )
    .unwrap();
    let body: String = corpus
        .iter()
        .map(|p| format!("- {}\n", p.text.replace('\n', "\n  ")))
        .collect();
    std::fs::write(
        m.join("rollout_summaries/2026-11-20T10-15-02-Ab3x-deploy.md"),
        format!(
            "thread_id: 0192f3a4-1b2c-7d3e-8f40-123456789abc\nupdated_at: 2026-11-20T10:40:11+00:00\nrollout_path: {}/.codex/sessions/2026/11/20/rollout.jsonl\ncwd: {cwd}\n\n# Deployed the service with the credentials below.\n\nRollout context: deploy.\n\n## Task 1: deploy\n\nOutcome: success\n\nReusable knowledge:\n{body}",
            h.root().display()
        ),
    )
    .unwrap();
    std::fs::write(m.join("extensions/ad_hoc/instructions.md"), "notes\n").unwrap();
    std::fs::write(
        m.join("extensions/ad_hoc/notes/2026-11-21T09-30-00-creds.md"),
        format!("From now on deploy with these:\n{body}"),
    )
    .unwrap();
}

#[test]
fn no_planted_secret_reaches_anything_cairn_writes_or_prints() {
    let corpus = corpus();
    let needles = Needles::new(&corpus);
    let h = TestHome::empty();
    let proj = h.project("shop");
    let cwd = proj.to_str().unwrap().to_string();
    let mut run = Run {
        h: &h,
        outputs: Vec::new(),
    };

    // A config with a secret on its broken line: the hook and `status` name the line, not it.
    std::fs::create_dir_all(h.data()).unwrap();
    let cfg = h.data().join("config.toml");
    std::fs::write(
        &cfg,
        format!("[memo]\nenabled = {}\n", corpus[3].needles[0]),
    )
    .unwrap();
    let start = hook_payload(
        "codex-session-start.json",
        &[("SESSION", "s0"), ("TRANSCRIPT", "/x.jsonl"), ("CWD", &cwd)],
    );
    run.hook("codex", &start);
    run.cairn(&["status", "--json"]);
    std::fs::write(&cfg, "[memo]\nenabled = true\n").unwrap();
    // Broken hook input that carries a secret: logged as an error, without it.
    run.hook(
        "claude",
        &format!("{{\"prompt\": \"{}", corpus[6].needles[0]),
    );

    // Both transcripts grow turn by turn; the Stop hook fires after each turn.
    let transcript = h.claude_project(&proj).join(format!("{SID}.jsonl"));
    std::fs::create_dir_all(transcript.parent().unwrap()).unwrap();
    let rollout = h.codex_rollout_path(CODEX_ID);
    append(&rollout, codex_meta(CODEX_ID, &cwd).as_bytes());
    let mut keep_open = None;
    for (i, p) in corpus.iter().enumerate() {
        append(&transcript, claude_turn(&cwd, i, p).as_bytes());
        let stop = hook_payload(
            "claude-stop.json",
            &[
                ("SESSION", SID),
                ("TRANSCRIPT", transcript.to_str().unwrap()),
                ("CWD", &cwd),
                ("LAST", &format!("Configured: {}", p.text)),
            ],
        );
        run.hook("claude", &stop);
        let turn = format!("t{i}");
        append(&rollout, codex_turn_with(&turn, p).as_bytes());
        let stop = hook_payload(
            "codex-stop.json",
            &[
                ("SESSION", CODEX_ID),
                ("TURN", &turn),
                ("TRANSCRIPT", rollout.to_str().unwrap()),
                ("CWD", &cwd),
                ("LAST", &format!("Set {}", p.text)),
            ],
        );
        run.hook("codex", &stop);
        if keep_open.is_none() && h.data().join("cairn.db").exists() {
            // Held open to the end, so the WAL is never checkpointed away: its raw bytes are
            // checked too.
            let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
            let _: i64 = db
                .query_row("SELECT count(*) FROM sqlite_master", [], |r| r.get(0))
                .unwrap();
            keep_open = Some(db);
        }
    }
    let (output, prompt) = straddling(&corpus);
    let n = corpus.len();
    append(
        &transcript,
        (claude_prompt("cap-p", &cwd, &prompt, "2026-11-25T15:00:00.000Z")
            + &claude_tool_use(
                "cap-a",
                &cwd,
                "cap-t",
                "Bash",
                json!({"command": "cat big.log"}),
            )
            + &claude_tool_result("cap-r", &cwd, "cap-t", &output, false)
            + &claude_reply("cap-z", &cwd, "Read it.", "2026-11-25T15:00:05.000Z"))
            .as_bytes(),
    );
    append(
        &rollout,
        codex_turn_with(
            &format!("t{n}"),
            &Planted {
                kind: "cap".into(),
                text: output.clone(),
                needles: vec![],
            },
        )
        .as_bytes(),
    );
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["failed"], 0, "{st}");

    // Prompts carrying secrets, and the memory context both agents get.
    for (agent, fixture) in [
        ("claude", "claude-user-prompt-submit.json"),
        ("codex", "codex-user-prompt-submit.json"),
    ] {
        for p in corpus.iter().step_by(7) {
            let mut v: Value = serde_json::from_str(&hook_payload(
                fixture,
                &[
                    ("SESSION", &format!("{agent}-q")),
                    ("TURN", "q"),
                    ("TRANSCRIPT", "/x.jsonl"),
                    ("CWD", &cwd),
                ],
            ))
            .unwrap();
            v["prompt"] = Value::String(format!("how do we deploy? {}", p.text));
            run.hook(agent, &v.to_string());
        }
    }

    // Extraction, hand-saved memories, recall, listing.
    let out = run.cairn(&["sync", "--json"]);
    let sync: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        sync["memories"]["total"].as_u64().unwrap() > 10,
        "extraction made no memories: {sync}"
    );
    for p in corpus.iter().skip(1).step_by(5) {
        run.cairn(&[
            "remember",
            &format!("deploy with {}", p.text),
            "--cwd",
            &cwd,
            "--json",
        ]);
    }
    run.cairn(&["recall", "deploy with the key", "--cwd", &cwd, "--json"]);
    run.cairn(&["recall", "password token", "--cwd", &cwd]);
    let out = run.cairn(&["list", "--scope", "all", "--json"]);
    let list: Value = serde_json::from_slice(&out.stdout).unwrap();
    let memories = list["memories"].as_array().unwrap();
    assert!(memories.len() > 10, "{list}");
    assert!(list.to_string().contains("[REDACTED:"), "{list}");
    let first = memories[0]["id"].as_str().unwrap().to_string();
    run.cairn(&["show", &first]);
    let mut context = String::new();
    for agent in ["claude", "codex"] {
        let start = json!({"hook_event_name": "SessionStart", "session_id": format!("{agent}-s2"),
                           "cwd": cwd, "source": "startup", "transcript_path": null});
        let out = run.hook(agent, &start.to_string());
        context.push_str(&String::from_utf8_lossy(&out.stdout));
        for prompt in [
            "which key do we deploy with?",
            "always deploy with the password",
        ] {
            let submit = json!({"hook_event_name": "UserPromptSubmit", "session_id": format!("{agent}-s3"),
                                "cwd": cwd, "prompt": prompt, "transcript_path": null});
            let out = run.hook(agent, &submit.to_string());
            context.push_str(&String::from_utf8_lossy(&out.stdout));
        }
    }
    // The memories that reached the agents carried (masked) secrets.
    assert!(
        context.contains("[REDACTED:"),
        "no memory reached the hooks: {context}"
    );

    // What the MCP server returns to an agent.
    {
        use std::io::{BufRead, BufReader, Write};
        let mut child = h.cairn_spawn(&["mcp"], &proj);
        let mut stdin = child.stdin.take().unwrap();
        let mut rd = BufReader::new(child.stdout.take().unwrap());
        let calls = [
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "0"}}}),
            json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "memory_search", "arguments": {"query": "deploy with the key token password", "k": 20}}}),
            json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "memory_list", "arguments": {}}}),
            json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "memory_get", "arguments": {"id": first}}}),
        ];
        let mut mcp_out = Vec::new();
        for c in &calls {
            writeln!(stdin, "{c}").unwrap();
            let mut line = String::new();
            rd.read_line(&mut line).unwrap();
            mcp_out.extend_from_slice(line.as_bytes());
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
        assert!(
            String::from_utf8_lossy(&mcp_out).contains("REDACTED:"),
            "MCP returned no memory"
        );
        run.outputs.push(("cairn mcp".into(), mcp_out));
    }

    // Codex memory with secrets → Claude Code topic files; then Claude Code memory → Codex.
    codex_memory(&h, &cwd, &corpus);
    let out = run.cairn(&["import", "--from", "codex", "--to", "claude", "--json"]);
    let exp: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(exp.to_string().contains("exported"), "{exp}");
    let out = run.cairn(&[
        "import", "--from", "claude", "--to", "codex", "--all", "--json",
    ]);
    let imp: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(imp.to_string().contains("imported"), "{imp}");
    run.cairn(&["status", "--json"]);
    run.cairn(&["doctor", "--json"]);
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["failed"], 0, "{st}");

    // What cairn wrote: its data dir (db, WAL, logs, views, locks), the memo journal, the
    // exported topic files, the imported workspace copy.
    let mut files = all_bytes_under(&h.data());
    assert!(files.iter().any(|(p, _)| p.ends_with("cairn.db-wal")));
    let claude_memory = h.claude_project(&proj).join("memory");
    assert!(claude_memory.join("MEMORY.md").exists());
    files.extend(all_bytes_under(&claude_memory));
    // cairn's own exports do not travel back to Codex (the project holds nothing else): the
    // workspace copy is checked when there is one.
    let imported = h
        .codex()
        .join("memories_v2/extensions/external_agent_import");
    if imported.exists() {
        files.extend(all_bytes_under(&imported));
    }
    let memo = proj.join("memo.md");
    assert!(memo.exists());
    files.push((memo.clone(), std::fs::read(&memo).unwrap()));
    let mut leaks = Vec::new();
    for (p, bytes) in &files {
        if let Some(l) = needles.find(bytes) {
            leaks.push(format!("{}: …{l}…", p.display()));
        }
        if needles.in_name(p) {
            leaks.push(format!("file name {}", p.display()));
        }
    }
    for (what, bytes) in &run.outputs {
        if let Some(l) = needles.find(bytes) {
            leaks.push(format!("{what}: …{l}…"));
        }
    }
    // Every row of every table through SQL (values split across overflow pages are whole
    // here), and every FTS5 term.
    let db = keep_open.expect("database opened");
    let tables: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    let mut rows = 0;
    for t in &tables {
        let Ok(mut stmt) = db.prepare(&format!("SELECT * FROM \"{t}\"")) else {
            continue;
        };
        let cols = stmt.column_count();
        let mut q = stmt.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            rows += 1;
            for c in 0..cols {
                let bytes: Vec<u8> = match r.get_ref(c).unwrap() {
                    rusqlite::types::ValueRef::Text(b) | rusqlite::types::ValueRef::Blob(b) => {
                        b.to_vec()
                    }
                    _ => continue,
                };
                if let Some(l) = needles.find(&bytes) {
                    leaks.push(format!("table {t} column {c}: …{l}…"));
                }
            }
        }
    }
    let fts: Vec<String> = db
        .prepare("SELECT name FROM sqlite_master WHERE sql LIKE '%USING fts5%'")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert!(!fts.is_empty(), "no FTS5 table found");
    let mut terms = 0;
    for t in &fts {
        db.execute_batch(&format!(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.\"v_{t}\" USING fts5vocab(main, \"{t}\", 'row')"
        ))
        .unwrap();
        let mut stmt = db
            .prepare(&format!("SELECT term FROM temp.\"v_{t}\""))
            .unwrap();
        let mut q = stmt.query([]).unwrap();
        while let Some(r) = q.next().unwrap() {
            terms += 1;
            let term: String = r.get(0).unwrap();
            let b = term.as_bytes();
            if b.len() >= WINDOW && b.windows(WINDOW).any(|w| needles.lower.contains(w)) {
                leaks.push(format!("FTS5 term of {t}: {term}"));
            }
        }
    }
    let wal = std::fs::read(h.data().join("cairn.db-wal")).unwrap_or_default();
    eprintln!(
        "planted {} values ({} needles) in {} Claude + {} Codex turns; checked {} files ({} bytes, WAL {} bytes), {} outputs, {} rows in {} tables, {} FTS5 terms",
        corpus.len(),
        corpus.iter().map(|p| p.needles.len()).sum::<usize>(),
        corpus.len() + 1,
        corpus.len() + 1,
        files.len(),
        files.iter().map(|(_, b)| b.len()).sum::<usize>(),
        wal.len(),
        run.outputs.len(),
        rows,
        tables.len(),
        terms
    );
    assert!(
        leaks.is_empty(),
        "{} leaks:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
}
