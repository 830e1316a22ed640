//! Broken input (`tests/fixtures/broken/`, plus large cases generated here): truncated JSON,
//! wrong JSON types for every field the parsers read, NUL bytes, invalid UTF-8, CRLF, empty
//! files, deep nesting, corrupt compressed rollouts, 100 MB lines, files growing while read.
//! Every case: `cairn ingest` exits 0 without a panic, reports a count and a message with the
//! file and line, and keeps the good turns around the damage, exactly once.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/broken")
}

/// The broken transcripts copied into a home like the agents' own; returns the cases
/// (agent → case → session id) and the project dir.
fn broken_home(h: &TestHome) -> (Value, PathBuf) {
    let proj = h.project("broken");
    let claude_dir = h.claude_project(&proj);
    let codex_dir = h.codex().join("sessions/2026/11/20");
    for (sub, dst) in [("claude", &claude_dir), ("codex", &codex_dir)] {
        std::fs::create_dir_all(dst).unwrap();
        for e in std::fs::read_dir(fixtures().join(sub)).unwrap() {
            let p = e.unwrap().path();
            let bytes = std::fs::read(&p).unwrap();
            let fixed = replace_bytes(
                &bytes,
                b"/SAMPLE_HOME",
                h.root().to_str().unwrap().as_bytes(),
            );
            std::fs::write(dst.join(p.file_name().unwrap()), fixed).unwrap();
        }
    }
    let cases =
        serde_json::from_str(&std::fs::read_to_string(fixtures().join("cases.json")).unwrap())
            .unwrap();
    (cases, proj)
}

fn replace_bytes(hay: &[u8], from: &[u8], to: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(hay.len());
    let mut i = 0;
    while i < hay.len() {
        if hay[i..].starts_with(from) {
            out.extend_from_slice(to);
            i += from.len();
        } else {
            out.push(hay[i]);
            i += 1;
        }
    }
    out
}

/// Prompts of the stored turns (agent, prompt) → how many times.
fn prompts(h: &TestHome) -> BTreeMap<(String, String), usize> {
    let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
    let mut st = db.prepare("SELECT agent, prompt FROM turns").unwrap();
    let mut out = BTreeMap::new();
    let rows = st
        .query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))
        .unwrap();
    for r in rows {
        *out.entry(r.unwrap()).or_insert(0) += 1;
    }
    out
}

/// `cairn ingest --json`, asserting exit 0 and no panic.
fn ingest(h: &TestHome) -> Value {
    let out = h.cairn(&["ingest", "--json"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "ingest failed: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    serde_json::from_slice(&out.stdout).expect("ingest JSON")
}

fn errors_for<'a>(report: &'a Value, name: &str) -> Vec<&'a Value> {
    report["errors"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["path"].as_str().unwrap_or("").contains(name))
        .collect()
}

#[test]
fn each_broken_file_costs_only_itself() {
    let h = TestHome::empty();
    let (cases, proj) = broken_home(&h);
    let r = ingest(&h);
    let got = prompts(&h);
    let has = |agent: &str, p: &str| got.get(&(agent.to_string(), p.to_string())) == Some(&1);

    let mut summary = Vec::new();
    for agent in ["claude", "codex"] {
        for (case, id) in cases[agent].as_object().unwrap() {
            let id = id.as_str().unwrap();
            let errs = errors_for(&r, id);
            summary.push(format!("{agent}/{case}: {} errors", errs.len()));
            for e in &errs {
                assert!(
                    !e["message"].as_str().unwrap_or("").is_empty(),
                    "{agent}/{case}: error without a message: {e}"
                );
            }
            if matches!(case.as_str(), "empty" | "blank") {
                continue;
            }
            // The good turns around the damage are kept, exactly once.
            for n in ["one", "two"] {
                let p = format!("good {case} {n}");
                assert!(has(agent, &p), "{agent}/{case}: {p:?} lost or duplicated");
            }
            // Malformed lines are counted and named with their line. (Deep nesting is either
            // read leniently, a wrongly typed field reading as absent, or counted.)
            if matches!(case.as_str(), "truncated" | "nul" | "invalid-utf8") {
                assert!(!errs.is_empty(), "{agent}/{case}: no error reported: {r}");
                assert!(
                    errs.iter()
                        .all(|e| e["line"].as_u64().is_some_and(|l| l > 0)),
                    "{agent}/{case}: {errs:?}"
                );
            }
        }
    }
    eprintln!("{}", summary.join("\n"));
    assert!(has("claude", "good crlf middle"));
    // Invalid UTF-8 is replaced and the prompt kept; NUL escapes are kept as text.
    assert!(
        got.keys()
            .any(|(a, p)| a == "claude" && p.starts_with("café \u{FFFD}")),
        "{got:?}"
    );
    // Corrupt compressed rollouts are reported, not fatal.
    for id in ["0000000000fd", "0000000000fc"] {
        assert!(!errors_for(&r, id).is_empty(), "{id}: {r}");
    }
    // The half-written last line waits for its newline.
    assert!(!got.keys().any(|(_, p)| p == "not finished yet"));
    let tail_id = cases["claude"]["partial-tail"].as_str().unwrap();
    let tail = h.claude_project(&proj).join(format!("{tail_id}.jsonl"));
    let line = claude_prompt(
        "pt-last",
        proj.to_str().unwrap(),
        "not finished yet",
        "2026-11-25T14:00:00.000Z",
    );
    let mut bytes = std::fs::read(&tail).unwrap();
    let cut = bytes.iter().rposition(|&b| b == b'\n').unwrap() + 1;
    bytes.truncate(cut);
    bytes.extend_from_slice(line.as_bytes());
    std::fs::write(&tail, bytes).unwrap();

    // A second run reads only what changed: nothing lost, nothing doubled.
    let r2 = ingest(&h);
    let got2 = prompts(&h);
    assert_eq!(r2["new_turns"], 1, "{r2}");
    assert!(
        got2.iter()
            .all(|((_, p), &n)| n == 1 || !p.starts_with("good ")),
        "duplicated turns: {got2:?}"
    );
    let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
    let dups: i64 = db
        .query_row(
            "SELECT count(*) FROM (SELECT 1 FROM turns GROUP BY agent, session_key, turn_key HAVING count(*) > 1)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(dups, 0);
    assert_eq!(got2.len(), got.len() + 1);
    eprintln!(
        "broken corpus: {} files, first run {} errors, {} skipped lines, {} turns kept",
        cases["claude"].as_object().unwrap().len() + cases["codex"].as_object().unwrap().len() + 4,
        r["errors"].as_array().unwrap().len(),
        r["skipped_lines"],
        r["turns"]
    );

    // The Stop hook on every broken transcript: exit 0, nothing printed.
    for (case, id) in cases["claude"].as_object().unwrap() {
        let t = h
            .claude_project(&proj)
            .join(format!("{}.jsonl", id.as_str().unwrap()));
        let input = hook_payload(
            "claude-stop.json",
            &[
                ("SESSION", id.as_str().unwrap()),
                ("TRANSCRIPT", t.to_str().unwrap()),
                ("CWD", proj.to_str().unwrap()),
                ("LAST", "Done."),
            ],
        );
        let out = h.cairn_input(&["hook", "--agent", "claude"], &input, &[]);
        assert!(out.status.success(), "{case}: {:?}", out.status);
        assert!(out.stdout.is_empty(), "{case}");
    }
    h.wait_for_worker();
}

/// Size of the generated huge lines in MB (`CAIRN_HUGE_LINE_MB`, default 100).
fn huge_mb() -> usize {
    std::env::var("CAIRN_HUGE_LINE_MB")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100)
}

#[test]
fn a_100_mb_line_is_read_capped_and_the_rest_kept() {
    let h = TestHome::empty();
    let proj = h.project("huge");
    let cwd = proj.to_str().unwrap();
    let mb = huge_mb();
    let big: String = "0123456789abcdef\n".repeat(mb * 1024 * 1024 / 17);
    let dir = h.claude_project(&proj);
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("11111111-2222-4333-8444-555555555555.jsonl");
    append(
        &t,
        (claude_prompt("h1", cwd, "good huge one", "2026-11-25T14:00:00.000Z")
            + &claude_tool_use("h2", cwd, "th", "Bash", json!({"command": "cat big.log"}))
            + &claude_tool_result("h3", cwd, "th", &big, false)
            + &claude_reply("h4", cwd, "Read.", "2026-11-25T14:00:01.000Z"))
            .as_bytes(),
    );
    // A huge line that is not JSON at all.
    append(&t, &vec![b'x'; mb * 1024 * 1024]);
    append(&t, b"\n");
    append(
        &t,
        claude_prompt("h5", cwd, "good huge two", "2026-11-25T14:00:02.000Z").as_bytes(),
    );
    let rollout = h.codex_rollout_path("01a1f7e6-e126-7f26-9493-6114a06f30dd");
    append(
        &rollout,
        codex_meta("01a1f7e6-e126-7f26-9493-6114a06f30dd", cwd).as_bytes(),
    );
    append(
        &rollout,
        codex_line(
            "response_item",
            json!({"type": "function_call_output", "call_id": "c", "output": big}),
        )
        .as_bytes(),
    );
    drop(big);
    append(
        &rollout,
        codex_turn("t2", "good huge codex", "ls", 0).as_bytes(),
    );

    let r = ingest(&h);
    let got = prompts(&h);
    for p in ["good huge one", "good huge two", "good huge codex"] {
        assert!(got.keys().any(|(_, q)| q == p), "{p} lost: {got:?} / {r}");
    }
    assert!(!errors_for(&r, ".jsonl").is_empty(), "{r}");
    // What is stored of the 100 MB output is capped.
    let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
    let longest: i64 = db
        .query_row("SELECT max(length(body)) FROM turns", [], |r| r.get(0))
        .unwrap();
    assert!(longest < 1024 * 1024, "a turn body of {longest} bytes");
    let size = std::fs::metadata(h.data().join("cairn.db")).unwrap().len();
    assert!(size < 20 * 1024 * 1024, "cairn.db is {size} bytes");
    eprintln!("{mb} MB lines: ingest report {r}");
}

#[test]
fn a_file_growing_while_read_loses_and_duplicates_nothing() {
    let h = TestHome::empty();
    let proj = h.project("growing");
    let cwd = proj.to_str().unwrap().to_string();
    let dir = h.claude_project(&proj);
    std::fs::create_dir_all(&dir).unwrap();
    let t = dir.join("11111111-2222-4333-8444-555555555555.jsonl");
    let rollout = h.codex_rollout_path("01a1f7e6-e126-7f26-9493-6114a06f30dd");
    append(
        &rollout,
        codex_meta("01a1f7e6-e126-7f26-9493-6114a06f30dd", &cwd).as_bytes(),
    );
    let n = 60;
    let writer = {
        let (t, rollout, cwd) = (t.clone(), rollout.clone(), cwd.clone());
        std::thread::spawn(move || {
            for i in 0..n {
                let ts = format!("2026-11-25T14:{:02}:{:02}.000Z", i / 60, i % 60);
                let lines = claude_prompt(&format!("g{i}"), &cwd, &format!("grow {i}"), &ts)
                    + &claude_reply(&format!("g{i}r"), &cwd, "ok", &ts);
                // Each record arrives in two writes, so readers see half lines.
                let (a, b) = lines.as_bytes().split_at(lines.len() / 3);
                append(&t, a);
                std::thread::sleep(std::time::Duration::from_millis(3));
                append(&t, b);
                let c = codex_turn(&format!("t{i}"), &format!("grow codex {i}"), "ls", 0);
                let (a, b) = c.as_bytes().split_at(c.len() / 2);
                append(&rollout, a);
                std::thread::sleep(std::time::Duration::from_millis(3));
                append(&rollout, b);
            }
        })
    };
    let mut runs = 0;
    while !writer.is_finished() {
        ingest(&h);
        runs += 1;
    }
    writer.join().unwrap();
    let r = ingest(&h);
    assert!(r["errors"].as_array().unwrap().is_empty(), "{r}");
    let got = prompts(&h);
    for i in 0..n {
        for (agent, p) in [
            ("claude", format!("grow {i}")),
            ("codex", format!("grow codex {i}")),
        ] {
            assert_eq!(
                got.get(&(agent.to_string(), p.clone())),
                Some(&1),
                "{p}: {got:?}"
            );
        }
    }
    assert_eq!(got.len(), 2 * n);
    eprintln!(
        "growing files: {runs} concurrent ingest runs, {} turns each once",
        2 * n
    );
}

/// A reader that goes away (`cairn scan --json | head -c0`) is not an error: every command
/// that prints ends quietly with status 0 instead of panicking on the broken pipe, and what
/// it stored stays stored.
#[test]
fn a_closed_stdout_ends_quietly() {
    let h = TestHome::sample();
    for args in [
        &["scan", "--json"][..],
        &["ingest", "--json"],
        &["status"],
        &[
            "remember",
            "always run the linter before committing",
            "--scope",
            "global",
            "--json",
        ],
        &["list", "--json"],
    ] {
        let mut child = h.cairn_spawn(args, &h.root());
        drop(child.stdin.take());
        // Close the read end of stdout before the command prints.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("wait for cairn");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            out.status.success(),
            "cairn {args:?}: {:?} {stderr}",
            out.status
        );
        assert!(
            !stderr.contains("panicked"),
            "cairn {args:?} panicked: {stderr}"
        );
    }
    let listed = h.json(&["list"]);
    assert!(
        listed
            .to_string()
            .contains("always run the linter before committing"),
        "the memory stored by the command whose output nobody read is kept: {listed}"
    );
}

/// An error report with stderr closed (the reader went away) ends with the error's status,
/// not a panic.
#[test]
fn a_closed_stderr_does_not_panic() {
    let h = TestHome::sample();
    for args in [&["show", "no-such-id"][..], &["forget", "no-such-id"]] {
        let mut child = h.cairn_spawn(args, &h.root());
        drop(child.stdin.take());
        drop(child.stderr.take());
        let out = child.wait_with_output().expect("wait for cairn");
        assert_eq!(
            out.status.code(),
            Some(1),
            "cairn {args:?} should fail with status 1, not panic (101): {:?}",
            out.status
        );
    }
}

/// A memory stored while its views cannot be written (the views dir is a file) is reported
/// stored, with a warning that says what is wrong, not as a failed write.
#[test]
fn a_stored_memory_whose_view_cannot_be_written_is_not_a_failure() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    h.json(&[
        "remember",
        "Use pnpm, not npm.",
        "--cwd",
        proj.to_str().unwrap(),
    ]);
    let views = h.data().join("memory");
    std::fs::remove_dir_all(&views).unwrap();
    std::fs::write(&views, "").unwrap();
    let out = h.cairn(&[
        "remember",
        "Use ruff for linting.",
        "--cwd",
        proj.to_str().unwrap(),
        "--json",
    ]);
    assert!(out.status.success(), "{out:?}");
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["action"], "created", "{v}");
    assert!(
        v["views_error"]
            .as_str()
            .is_some_and(|e| e.contains("is a file, not a directory")),
        "{v}"
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("the memory is stored"), "{err}");
    let listed = h.json(&["list", "--cwd", proj.to_str().unwrap()]);
    assert_eq!(
        listed["memories"].as_array().map(Vec::len),
        Some(2),
        "{listed}"
    );
}

/// A database damaged inside (a page overwritten, its header intact) is reported by status
/// once, with what to do.
#[test]
fn a_database_damaged_inside_is_reported_with_the_remedy() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    for i in 0..8 {
        h.json(&[
            "remember",
            &format!("Rule {i}: always run the linter number {i} before pushing."),
            "--cwd",
            proj.to_str().unwrap(),
        ]);
    }
    let db = h.data().join("cairn.db");
    let mut bytes = std::fs::read(&db).unwrap();
    for b in bytes.iter_mut().skip(4096) {
        *b = 0xff;
    }
    std::fs::write(&db, &bytes).unwrap();
    let out = h.cairn(&["status", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let e = st["database_error"]
        .as_str()
        .unwrap_or_else(|| panic!("{st}"));
    assert!(e.contains("move it aside and run `cairn sync`"), "{e}");
    assert!(e.matches("malformed").count() <= 1, "{e}");
    // What it cannot read it does not report as zero.
    let human = String::from_utf8_lossy(&h.cairn(&["status"]).stdout).into_owned();
    assert!(human.contains("contents unknown"), "{human}");
    assert!(human.contains("jobs:         unknown"), "{human}");
    assert!(
        !human.contains("0 turns") && !human.contains("never"),
        "{human}"
    );
    // doctor names it too, as an error with the remedy.
    let check = failed_doctor_check(&h, "cairn.store");
    assert_eq!(check["status"], "error", "{check}");
    assert!(
        check["fix"].as_str().unwrap().contains("move it aside"),
        "{check}"
    );
}

/// A database file that is not one (damaged, or something else's) is named as such, with
/// what to do; nothing else is touched.
#[test]
fn a_damaged_database_says_what_to_do() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.data()).unwrap();
    std::fs::write(h.data().join("cairn.db"), vec![0x5au8; 64 * 1024]).unwrap();
    for args in [&["sync"][..], &["list"], &["recall", "x"]] {
        let out = h.cairn(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("damaged or not cairn's") && err.contains("move it aside"),
            "{args:?}: {err}"
        );
    }
    // Session start says memory is unavailable, to the agent and the user, and exits 0; a
    // prompt stays quiet.
    let start = serde_json::json!({"session_id": "s", "hook_event_name": "SessionStart",
        "cwd": h.root().to_str().unwrap(), "source": "startup"})
    .to_string();
    let out = h.cairn_input(&["hook", "--agent", "claude"], &start, &[]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    assert!(
        ctx.contains("could not open its memory store") && ctx.contains("damaged"),
        "{ctx}"
    );
    assert!(
        v["systemMessage"]
            .as_str()
            .unwrap()
            .contains("cairn status"),
        "{v}"
    );
    let prompt = serde_json::json!({"session_id": "s", "hook_event_name": "UserPromptSubmit",
        "cwd": h.root().to_str().unwrap(), "prompt": "hi"})
    .to_string();
    let out = h.cairn_input(&["hook", "--agent", "claude"], &prompt, &[]);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    // `cairn status`, where the hook sends the user, reports the damage beside everything
    // else it knows (configuration, embeddings, the log), and exits 1.
    let out = h.cairn(&["status", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let st: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        st["database_error"]
            .as_str()
            .unwrap()
            .contains("damaged or not cairn's"),
        "{st}"
    );
    assert!(
        st["embeddings"].is_object() && st["log"].is_string(),
        "{st}"
    );
    let out = h.cairn(&["status"]);
    assert_eq!(out.status.code(), Some(1));
    let human = String::from_utf8_lossy(&out.stdout);
    assert!(
        human.contains("cannot read it:") && human.contains("move it aside"),
        "{human}"
    );
    assert_eq!(
        std::fs::read(h.data().join("cairn.db")).unwrap(),
        vec![0x5au8; 64 * 1024]
    );
}

/// A data directory that cannot be made (a file is in the way) is named once, with its
/// reason once: the causes of an error are not printed twice.
#[test]
fn an_unusable_data_dir_is_reported_once() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.data().parent().unwrap()).unwrap();
    std::fs::write(h.data(), "not a directory").unwrap();
    // Said once, as what it is ("File exists" said nothing of it).
    let what = "is a file, not a directory";
    for args in [
        &["list"][..],
        &["recall", "x"],
        &["list", "--json"],
        &["remember", "Use pnpm, not npm."],
    ] {
        let out = h.cairn(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("pass --data-dir"), "{args:?}: {err}");
        assert_eq!(err.matches(what).count(), 1, "{args:?}: {err}");
        assert!(!err.contains("File exists"), "{args:?}: {err}");
    }
    let out = h.cairn(&["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["error"].as_str().unwrap().matches(what).count(), 1);
    assert_eq!(
        std::fs::read_to_string(h.data()).unwrap(),
        "not a directory"
    );
    // `status`, the command for finding out what is wrong, says it too.
    let out = h.cairn(&["status"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("is a file, not a directory"),
        "{out:?}"
    );
}
