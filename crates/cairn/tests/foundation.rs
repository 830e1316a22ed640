//! `cairn scan` and `cairn ingest` against temp homes laid out like the agents' own.

mod common;

use std::path::Path;

use common::*;
use serde_json::Value;

fn project<'a>(scan: &'a Value, suffix: &str) -> &'a Value {
    scan["claude"]["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .find(|p| p["key"].as_str().is_some_and(|k| k.ends_with(suffix)))
        .unwrap_or_else(|| panic!("no project ending in {suffix}: {scan}"))
}

#[test]
fn scan_reports_projects_cwds_memory_and_rollouts() {
    let h = TestHome::sample();
    let scan = h.json(&["scan"]);
    let root = h.root();
    assert_eq!(scan["claude"]["root"], h.claude().display().to_string());

    let web = project(&scan, "-work-webshop");
    assert_eq!(web["cwd"], root.join("work/webshop").display().to_string());
    assert_eq!(web["memory_files"], 7);
    assert_eq!(web["sessions"], 2);

    let infra = project(&scan, "-work-infra");
    assert_eq!(infra["cwd"], root.join("work/infra").display().to_string());
    assert_eq!(infra["memory_files"], 4);
    assert_eq!(infra["sessions"], 1);

    let old = project(&scan, "-work-oldproject");
    assert!(old["cwd"].is_null());
    assert_eq!(old["sessions"], 0);
    assert_eq!(old["memory_files"], 4);
    assert!(
        old["reason"]
            .as_str()
            .unwrap()
            .contains("no session transcripts")
    );

    let moved = project(&scan, "-work-moved");
    assert!(moved["cwd"].is_null());
    assert!(
        moved["reason"]
            .as_str()
            .unwrap()
            .contains("no longer exists")
    );

    assert_eq!(scan["codex"]["home"], h.codex().display().to_string());
    assert_eq!(scan["codex"]["rollouts"], 5);
    let cwds = scan["codex"]["cwds"].as_array().unwrap();
    let count = |d: &str| {
        cwds.iter()
            .find(|c| c["cwd"] == root.join(d).display().to_string())
            .map(|c| c["rollouts"].as_u64().unwrap())
    };
    assert_eq!(count("work/infra"), Some(3));
    assert_eq!(count("work/webshop"), Some(2));

    // Human output marks each project.
    let out = h.cairn(&["scan"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("CWD FOUND") && text.contains("NO CWD"),
        "{text}"
    );

    // Scan is read-only: nothing in the data dir.
    assert!(!h.data().exists());
}

#[test]
fn memory_files_count_only_regular_markdown() {
    let h = TestHome::sample();
    let mem = h
        .claude()
        .join("projects")
        .join(cairn_transcript::claude_project_key(
            &h.root().join("work/infra").to_string_lossy(),
        ));
    let mem = mem.join("memory");
    std::fs::write(mem.join("UPPER.MD"), "x").unwrap();
    std::fs::write(mem.join("notes.txt"), "x").unwrap();
    std::os::unix::fs::symlink(mem.join("MEMORY.md"), mem.join("linked.md")).unwrap();
    std::os::unix::fs::symlink(&mem, mem.join("loop")).unwrap();
    let scan = h.json(&["scan"]);
    assert_eq!(project(&scan, "-work-infra")["memory_files"], 5);
}

/// Writes a Claude Code session file with the given lines and mtime.
fn session(dir: &Path, id: &str, body: &str, mtime: i64) {
    std::fs::create_dir_all(dir).unwrap();
    let p = dir.join(format!("{id}.jsonl"));
    std::fs::write(&p, body).unwrap();
    set_mtime(&p, mtime);
}

#[test]
fn cwd_resolution_follows_the_importer_rule() {
    let h = TestHome::empty();
    let root = h.root();
    let a = root.join("work/a");
    let b = root.join("work/b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let a_s = a.to_str().unwrap();
    let b_s = b.to_str().unwrap();
    let ts = "2026-11-20T10:00:00.000Z";

    // Project 1: the newest session was continued elsewhere → the older one's cwd (b) wins.
    let p1 = h.claude().join("projects/-p1");
    session(&p1, "old", &claude_prompt("u1", b_s, "hi", ts), 1_000);
    let continued = claude_prompt("u2", a_s, "hi", ts)
        + &serde_json::json!({"type": "continued-in", "continuedInSessionId": "next"}).to_string()
        + "\n";
    session(&p1, "new", &continued, 2_000);

    // Project 2: newest session is meta-only → older usable one (a) wins.
    let p2 = h.claude().join("projects/-p2");
    session(&p2, "s1", &claude_reply("u3", a_s, "hello", ts), 1_000);
    let meta = serde_json::json!({"type": "user", "isMeta": true, "cwd": b_s, "timestamp": ts,
        "message": {"role": "user", "content": "<local-command-caveat>x</local-command-caveat>"}})
    .to_string()
        + "\n";
    session(&p2, "s2", &meta, 2_000);

    // Project 3: only a meta-only session → NO CWD with the reason.
    let p3 = h.claude().join("projects/-p3");
    session(&p3, "s", &meta, 1_000);

    // Project 4: newest first by mtime: two usable sessions, the newer (b) wins.
    let p4 = h.claude().join("projects/-p4");
    session(&p4, "s1", &claude_prompt("u4", a_s, "x", ts), 1_000);
    session(&p4, "s2", &claude_prompt("u5", b_s, "x", ts), 3_000);

    // Project 5: relative cwd and untimestamped messages are not usable.
    let p5 = h.claude().join("projects/-p5");
    let no_ts = serde_json::json!({"type": "user", "cwd": a_s,
        "message": {"role": "user", "content": "no timestamp"}})
    .to_string()
        + "\n";
    session(&p5, "s1", &no_ts, 1_000);
    session(&p5, "s2", &claude_prompt("u6", "work/a", "x", ts), 2_000);

    // Project 6: a sidechain-only conversation is not usable.
    let p6 = h.claude().join("projects/-p6");
    let side = serde_json::json!({"type": "user", "isSidechain": true, "cwd": a_s, "timestamp": ts,
        "message": {"role": "user", "content": "task"}})
    .to_string()
        + "\n";
    session(&p6, "s1", &side, 1_000);

    let scan = h.json(&["scan"]);
    let cwd = |k: &str| project(&scan, k)["cwd"].clone();
    assert_eq!(cwd("-p1"), Value::from(b_s));
    assert_eq!(cwd("-p2"), Value::from(a_s));
    assert!(cwd("-p3").is_null());
    assert!(
        project(&scan, "-p3")["reason"]
            .as_str()
            .unwrap()
            .contains("meta-only")
    );
    assert_eq!(cwd("-p4"), Value::from(b_s));
    assert!(cwd("-p5").is_null());
    assert!(cwd("-p6").is_null());
}

#[test]
fn ingest_is_incremental_and_never_duplicates() {
    let h = TestHome::sample();
    let first = h.json(&["ingest"]);
    assert_eq!(first["files"], 10);
    assert_eq!(first["turns"], 22);
    assert_eq!(first["new_turns"], 22);
    assert_eq!(first["skipped_lines"], 0);
    assert!(first["bytes"].as_u64().unwrap() > 100_000);
    assert_eq!(first["errors"], Value::Array(vec![]));

    let second = h.json(&["ingest"]);
    assert_eq!(second["bytes"], 0);
    assert_eq!(second["new_turns"], 0);
    assert_eq!(second["turns"], 22);

    // `sync` is scan + ingest and finds nothing new either.
    let sync = h.json(&["sync"]);
    assert_eq!(sync["ingest"]["new_turns"], 0);
    assert_eq!(sync["scan"]["codex"]["rollouts"], 5);
}

#[test]
fn a_half_written_last_line_is_ingested_exactly_once() {
    let h = TestHome::empty();
    let dir = h.codex().join("sessions/2026/11/20");
    std::fs::create_dir_all(&dir).unwrap();
    let id = "0192f3a4-1b2c-7d3e-8f40-123456789abc";
    let path = dir.join(format!("rollout-2026-11-20T10-00-00-{id}.jsonl"));
    let cwd = h.root().display().to_string();
    let t1 = codex_turn("t1", "first prompt", "cargo build", 0);
    let t2 = codex_turn("t2", "second prompt", "cargo test", 101);
    let whole = codex_meta(id, &cwd) + &t1 + &t2;
    // Cut in the middle of a line of the second turn.
    let cut = codex_meta(id, &cwd).len() + t1.len() + 150;
    std::fs::write(&path, &whole.as_bytes()[..cut]).unwrap();

    let r1 = h.json(&["ingest"]);
    assert_eq!(
        r1["skipped_lines"], 0,
        "the partial line is not an error: {r1}"
    );
    assert_eq!(r1["turns"], 2, "t1 complete, t2 open: {r1}");
    let consumed = r1["bytes"].as_u64().unwrap() as usize;
    assert!(consumed < cut, "the partial line is left for later");

    append(&path, &whole.as_bytes()[cut..]);
    let r2 = h.json(&["ingest"]);
    assert_eq!(r2["skipped_lines"], 0);
    assert_eq!(r2["new_turns"], 0);
    assert_eq!(r2["turns"], 2);
    assert_eq!(
        consumed + r2["bytes"].as_u64().unwrap() as usize,
        whole.len()
    );

    // The completed turn has every event once.
    let db = rusqlite_dump(&h, "t2");
    assert_eq!(db.matches("\"kind\":\"tool_call\"").count(), 1, "{db}");
    assert_eq!(db.matches("\"kind\":\"tool_result\"").count(), 1, "{db}");
    assert_eq!(db.matches("\"kind\":\"user_prompt\"").count(), 1, "{db}");
    assert!(db.contains("\"status\":\"complete\""), "{db}");
}

/// The stored body of a turn, via the sqlite3 file read as text (no extra test deps).
fn rusqlite_dump(h: &TestHome, turn_key: &str) -> String {
    let out = std::process::Command::new("sqlite3")
        .arg(h.data().join("cairn.db"))
        .arg(format!(
            "SELECT body FROM turns WHERE turn_key = '{turn_key}'"
        ))
        .output();
    match out {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).into_owned(),
        _ => {
            // Fall back to the store API through a tiny query over the file.
            let store = cairn_store::Store::open(&h.data().join("cairn.db")).unwrap();
            store
                .all_turns()
                .unwrap()
                .into_iter()
                .filter(|t| t.turn.key == turn_key)
                .map(|t| serde_json::to_string(&t.turn).unwrap())
                .collect()
        }
    }
}

#[test]
fn truncated_or_replaced_files_are_read_again() {
    let h = TestHome::empty();
    let dir = h.codex().join("sessions/2026/11/20");
    std::fs::create_dir_all(&dir).unwrap();
    let id = "0192f3a4-1b2c-7d3e-8f40-123456789abd";
    let path = dir.join(format!("rollout-2026-11-20T10-00-00-{id}.jsonl"));
    let cwd = h.root().display().to_string();
    let meta = codex_meta(id, &cwd);
    std::fs::write(
        &path,
        meta.clone() + &codex_turn("a", "p", "ls", 0) + &codex_turn("b", "q", "ls", 0),
    )
    .unwrap();
    assert_eq!(h.json(&["ingest"])["turns"], 2);

    // Truncated: the agent rewrote a shorter file.
    std::fs::write(&path, meta.clone() + &codex_turn("a", "p", "ls", 0)).unwrap();
    let r = h.json(&["ingest"]);
    assert_eq!(r["restarted_files"], 1);
    assert_eq!(
        r["turns"], 2,
        "nothing already stored is lost, nothing duplicated"
    );

    // Replaced by a different file of a greater size (new inode, new head).
    let tmp = dir.join("tmp");
    std::fs::write(
        &tmp,
        codex_meta(id, "/elsewhere")
            + &codex_turn("c", "r", "make", 0)
            + &codex_turn("d", "s", "make", 0)
            + &codex_turn("e", "t", "make", 0),
    )
    .unwrap();
    std::fs::rename(&tmp, &path).unwrap();
    let r = h.json(&["ingest"]);
    assert_eq!(r["restarted_files"], 1);
    assert_eq!(r["new_turns"], 3);
    assert_eq!(r["turns"], 5);
}

#[test]
fn bad_input_is_counted_and_good_data_kept() {
    let h = TestHome::empty();
    let cwd = h.root().join("work/p");
    std::fs::create_dir_all(&cwd).unwrap();
    let cwd_s = cwd.to_str().unwrap();
    let proj = h.claude_project(&cwd);
    std::fs::create_dir_all(&proj).unwrap();
    let ts = "2026-11-20T10:00:00.000Z";

    let mut body = Vec::new();
    body.extend(claude_prompt("p1", cwd_s, "first good prompt", ts).as_bytes());
    body.extend(b"{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"trunc\n"); // malformed
    body.extend(b"not json at all\n");
    body.extend(b"[1,2,3]\n"); // JSON but not a record
    body.extend(b"\0\0\0\n"); // NUL bytes
    // Invalid UTF-8 inside a string: replaced, line kept.
    body.extend(b"{\"type\":\"user\",\"uuid\":\"p2\",\"cwd\":\"x\",\"timestamp\":\"2026-11-20T10:00:01.000Z\",\"message\":{\"role\":\"user\",\"content\":\"caf\xff\xfe prompt\"}}\n");
    // Wrong types for every field the parser reads: no error, fields read as absent.
    body.extend(br#"{"type":"assistant","uuid":7,"cwd":[],"timestamp":{},"isSidechain":"yes","message":{"content":[{"type":"tool_use","id":1,"name":2,"input":"x"},{"type":"text","text":5}]}}"#);
    body.extend(b"\r\n");
    // A 50 MB single line (valid JSON).
    let big = format!(
        "{{\"type\":\"user\",\"uuid\":\"big\",\"timestamp\":\"{ts}\",\"message\":{{\"role\":\"user\",\"content\":[{{\"type\":\"tool_result\",\"tool_use_id\":\"x\",\"content\":\"{}\"}}]}}}}\n",
        "a".repeat(50 * 1024 * 1024)
    );
    body.extend(big.as_bytes());
    // Deeply nested JSON (beyond serde_json's recursion limit).
    body.extend("[".repeat(100_000).as_bytes());
    body.push(b'\n');
    body.extend(claude_prompt("p3", cwd_s, "last good prompt", ts).as_bytes());
    std::fs::write(
        proj.join("aaaaaaaa-0000-4000-8000-000000000001.jsonl"),
        &body,
    )
    .unwrap();
    // Empty and zero-length files.
    std::fs::write(proj.join("aaaaaaaa-0000-4000-8000-000000000002.jsonl"), b"").unwrap();
    std::fs::write(
        proj.join("aaaaaaaa-0000-4000-8000-000000000003.jsonl"),
        b"\n\n\n",
    )
    .unwrap();
    // A symlink loop in the projects dir and in the Codex sessions tree.
    std::os::unix::fs::symlink(
        h.claude().join("projects"),
        h.claude().join("projects/loop"),
    )
    .unwrap();
    std::fs::create_dir_all(h.codex().join("sessions/2026")).unwrap();
    std::os::unix::fs::symlink(
        h.codex().join("sessions"),
        h.codex().join("sessions/2026/loop"),
    )
    .unwrap();
    // A directory named like a transcript.
    std::fs::create_dir_all(proj.join("dir.jsonl")).unwrap();

    let r = h.json(&["ingest"]);
    assert_eq!(r["skipped_lines"], 5, "{r}");
    assert_eq!(r["turns"], 3, "p1, p2 (lossy) and p3 are kept: {r}");
    let errors = r["errors"].as_array().unwrap();
    let with_line = |n: u64| {
        errors
            .iter()
            .any(|e| e["line"] == n && e["path"].as_str().unwrap().ends_with("0001.jsonl"))
    };
    assert!(
        with_line(2) && with_line(3) && with_line(4) && with_line(5),
        "{r}"
    );
    assert!(with_line(6), "invalid UTF-8 is reported: {r}");
    assert!(
        errors
            .iter()
            .any(|e| e["message"].as_str().unwrap().contains("symlink")),
        "{r}"
    );

    // Nothing good was lost and a re-run changes nothing.
    let r2 = h.json(&["ingest"]);
    assert_eq!(r2["bytes"], 0);
    assert_eq!(r2["turns"], 3);
}

#[test]
fn unreadable_files_are_reported_not_fatal() {
    let h = TestHome::sample();
    let dir = h.codex().join("sessions/2026/11/23");
    let f = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&f, std::fs::Permissions::from_mode(0o000)).unwrap();
    if std::fs::read(&f).is_ok() {
        // Running as root: permissions do not stop reads; nothing to prove here.
        return;
    }
    let r = h.json(&["ingest"]);
    assert!(
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["path"] == f.display().to_string())
    );
    assert!(r["turns"].as_u64().unwrap() >= 19);
}

#[test]
fn planted_secrets_never_reach_the_data_dir() {
    let h = TestHome::sample();
    h.json(&["sync"]);
    let planted = [
        "AKIAFAKECAIRNSAMPLE0",
        "cairnFAKEsecretKeyDoNotUse/0123456789ABC",
        "ghp_cairnFAKEtokenDoNotUse00000000000000",
    ];
    let files = all_bytes_under(&h.data());
    assert!(files.iter().any(|(p, _)| p.ends_with("cairn.db")));
    for (path, bytes) in files {
        for s in planted {
            assert!(
                memchr_find(&bytes, s.as_bytes()).is_none(),
                "{s} found in {}",
                path.display()
            );
        }
    }
}

fn memchr_find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

#[test]
fn homes_come_from_flags_then_environment() {
    let h = TestHome::sample();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["scan", "--json"])
        .env("HOME", "/nonexistent-home")
        .env("CLAUDE_CONFIG_DIR", h.claude())
        .env("CODEX_HOME", h.codex())
        .env("CAIRN_HOME", h.data())
        .output()
        .unwrap();
    assert!(out.status.success());
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["claude"]["root"], h.claude().display().to_string());
    assert_eq!(v["codex"]["rollouts"], 5);
}

#[test]
fn demo_runs_the_main_job_on_the_sample_home() {
    let h = TestHome::empty();
    let v = h.json(&["demo"]);
    assert_eq!(v["sync"]["ingest"]["new_turns"], 22);
    assert!(
        !std::path::Path::new(v["home"].as_str().unwrap()).exists(),
        "temp dir removed"
    );
}

#[test]
fn compressed_rollouts_are_read() {
    let h = TestHome::empty();
    let dir = h.codex().join("sessions/2026/11/21");
    std::fs::create_dir_all(&dir).unwrap();
    let id = "0192f3a4-1b2c-7d3e-8f40-123456789abe";
    let cwd = h.root().display().to_string();
    let text = codex_meta(id, &cwd) + &codex_turn("z1", "compressed prompt", "ls", 0);
    let packed = ruzstd::encoding::compress_to_vec(
        text.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    std::fs::write(
        dir.join(format!("rollout-2026-11-21T10-00-00-{id}.jsonl.zst")),
        packed,
    )
    .unwrap();
    let scan = h.json(&["scan"]);
    assert_eq!(scan["codex"]["rollouts"], 1);
    assert_eq!(scan["codex"]["cwds"][0]["cwd"], Value::from(cwd));
    let r = h.json(&["ingest"]);
    assert_eq!(r["turns"], 1, "{r}");
    assert_eq!(h.json(&["ingest"])["new_turns"], 0);
}

/// A compressed rollout cut short is reported by `sync` the same way wherever the cut falls:
/// in the ingest report, with what was kept; cut before its first complete line, the scan's
/// look at its first lines fails too, and the problem is still said once, by ingest.
#[test]
fn a_compressed_rollout_cut_anywhere_is_reported_by_ingest() {
    let h = TestHome::empty();
    let dir = h.codex().join("sessions/2026/11/21");
    std::fs::create_dir_all(&dir).unwrap();
    let cwd = h.root().display().to_string();
    let pack = |text: &str| {
        ruzstd::encoding::compress_to_vec(
            text.as_bytes(),
            ruzstd::encoding::CompressionLevel::Fastest,
        )
    };
    let early = "0192f3a4-1b2c-7d3e-8f40-123456789ab1";
    let whole = pack(&(codex_meta(early, &cwd) + &codex_turn("z1", "a prompt", "ls", 0)));
    let early_path = dir.join(format!("rollout-2026-11-21T10-00-00-{early}.jsonl.zst"));
    std::fs::write(&early_path, &whole[..100]).unwrap();
    let late = "0192f3a4-1b2c-7d3e-8f40-123456789ab2";
    let mut text = codex_meta(late, &cwd);
    for i in 0..600 {
        let noise: String = (0..60)
            .map(|k| format!("{:x}", (i * 7919 + k * 104_729) % 65_521))
            .collect();
        text += &codex_turn(&format!("t{i}"), &format!("prompt {i} {noise}"), "ls", 0);
    }
    let packed = pack(&text);
    let late_path = dir.join(format!("rollout-2026-11-21T11-00-00-{late}.jsonl.zst"));
    std::fs::write(&late_path, &packed[..packed.len() * 9 / 10]).unwrap();

    let scan = h.json(&["scan"]);
    assert!(
        scan["errors"].to_string().contains("cannot read rollout"),
        "the scan alone says what it met: {scan}"
    );
    let r = h.json(&["sync"]);
    let about = |v: &Value, path: &Path| -> Vec<String> {
        v.as_array()
            .unwrap()
            .iter()
            .filter(|e| e["path"] == path.display().to_string())
            .map(|e| e["message"].as_str().unwrap_or("").to_owned())
            .collect()
    };
    let early_said = about(&r["ingest"]["errors"], &early_path);
    assert_eq!(early_said.len(), 1, "{r}");
    assert!(
        early_said[0]
            .starts_with("compressed file is truncated or damaged before its first complete line"),
        "{early_said:?}"
    );
    assert!(
        about(&r["scan"]["errors"], &early_path).is_empty(),
        "said once: {r}"
    );
    let late_said = about(&r["ingest"]["errors"], &late_path);
    assert_eq!(late_said.len(), 1, "{r}");
    assert!(
        late_said[0].starts_with("compressed file is truncated or damaged after ")
            && late_said[0].ends_with("the lines before were kept"),
        "{late_said:?}"
    );
    assert!(r["ingest"]["new_turns"].as_u64().unwrap() > 0, "{r}");
    let out = h.cairn(&["sync"]);
    assert!(out.status.success());
}

/// Transcript roots moved to another disk and linked back are read, as the agents read
/// them; links below a root are still never followed.
#[test]
fn transcript_roots_moved_elsewhere_and_linked_back_are_read() {
    let h = TestHome::empty();
    let elsewhere = h.root().join("bigdisk");
    // Codex sessions.
    let day = elsewhere.join("codex-sessions/2026/11/21");
    std::fs::create_dir_all(&day).unwrap();
    let id = "0192f3a4-1b2c-7d3e-8f40-123456789abf";
    let cwd = h.root().display().to_string();
    std::fs::write(
        day.join(format!("rollout-2026-11-21T10-00-00-{id}.jsonl")),
        codex_meta(id, &cwd) + &codex_turn("z1", "linked prompt", "ls", 0),
    )
    .unwrap();
    std::fs::create_dir_all(h.codex()).unwrap();
    std::os::unix::fs::symlink(elsewhere.join("codex-sessions"), h.codex().join("sessions"))
        .unwrap();
    // Claude Code projects.
    let proj = elsewhere.join("claude-projects/-w-shop");
    std::fs::create_dir_all(&proj).unwrap();
    std::fs::write(
        proj.join("aaaaaaaa-0000-4000-8000-000000000009.jsonl"),
        claude_prompt(
            "p1",
            "/w/shop",
            "a prompt on the other disk",
            "2026-11-21T10:00:00.000Z",
        ),
    )
    .unwrap();
    std::fs::create_dir_all(h.claude()).unwrap();
    std::os::unix::fs::symlink(
        elsewhere.join("claude-projects"),
        h.claude().join("projects"),
    )
    .unwrap();
    // A link inside a root is still skipped.
    std::os::unix::fs::symlink(&proj, elsewhere.join("claude-projects/-w-linked")).unwrap();

    let scan = h.json(&["scan"]);
    assert_eq!(scan["codex"]["rollouts"], 1, "{scan}");
    let r = h.json(&["ingest"]);
    assert_eq!(r["turns"], 2, "{r}");
    assert!(
        r["errors"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["path"].as_str().unwrap().ends_with("-w-linked")),
        "{r}"
    );
    // A root linked to nothing is said, not fatal.
    std::fs::remove_file(h.codex().join("sessions")).unwrap();
    std::os::unix::fs::symlink(h.root().join("gone"), h.codex().join("sessions")).unwrap();
    let r = h.json(&["ingest"]);
    assert!(
        r["errors"].as_array().unwrap().iter().any(|e| e["message"]
            .as_str()
            .unwrap()
            .contains("cannot be followed")),
        "{r}"
    );
}

#[test]
fn no_progress_output_when_not_a_terminal() {
    let h = TestHome::sample();
    let out = h.cairn(&["ingest"]);
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("new turn(s)"));
}

/// A mistyped or missing agent directory is named, with the flag that points cairn elsewhere:
/// `scan` warns; `doctor` tells (a warning when neither agent is there).
/// Commands that only read make no data dir and no database to say nothing is remembered.
#[test]
fn reading_before_the_first_write_makes_nothing() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    let cwd = proj.to_str().unwrap();
    for args in [
        &["list"][..],
        &["list", "--json"],
        &["recall", "which package manager", "--cwd", cwd],
        &["recall", "x", "--json", "--cwd", cwd],
        &["status"],
    ] {
        let out = h.cairn(args);
        assert!(out.status.success(), "{args:?}: {out:?}");
        assert!(!h.data().exists(), "{args:?} made the data dir");
    }
    let out = h.cairn(&["list", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(v["memories"], serde_json::json!([]));
    // The first write makes it.
    h.json(&["remember", "Use pnpm, not npm.", "--cwd", cwd]);
    assert!(h.data().join("cairn.db").is_file());
}

/// A file where Claude Code keeps its sessions is an error doctor names, with the fix.
#[test]
fn a_claude_projects_file_is_named_by_doctor() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.claude()).unwrap();
    std::fs::create_dir_all(h.codex()).unwrap();
    std::fs::write(h.claude().join("projects"), "").unwrap();
    let check = failed_doctor_check(&h, "claude.projects");
    assert_eq!(check["status"], "error", "{check}");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .contains("is not a directory"),
        "{check}"
    );
    assert!(
        check["fix"].as_str().unwrap().contains("move it aside"),
        "{check}"
    );

    // A Codex home that is a file is named as such, not as a config that cannot be read.
    std::fs::remove_dir_all(h.codex()).unwrap();
    std::fs::write(h.codex(), "").unwrap();
    let out = h.cairn(&["doctor", "--json"]);
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = d["checks"].as_array().unwrap();
    let home = checks
        .iter()
        .find(|c| c["id"] == "codex.home")
        .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(home["status"], "error", "{home}");
    assert!(
        home["message"]
            .as_str()
            .unwrap()
            .contains("is a file, not a directory")
    );
    assert!(!checks.iter().any(|c| c["id"] == "codex.config"), "{d}");
    // A scan says it once per file (here `projects` and the Codex home), not of each
    // directory below it.
    let out = h.cairn(&["scan", "--json"]);
    let said = String::from_utf8_lossy(&out.stdout).into_owned();
    assert_eq!(
        said.matches("is a file, not a directory").count(),
        2,
        "{said}"
    );
    assert!(!said.contains("cannot list directory"), "{said}");
}

#[test]
fn a_missing_agent_directory_is_named() {
    let h = TestHome::empty();
    let r = h.json(&["scan"]);
    let warnings: Vec<&str> = r["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("Claude Code installed") && w.contains("--claude-dir")),
        "{r}"
    );
    assert!(warnings.iter().any(|w| w.contains("--codex-home")), "{r}");
    let out = h.cairn(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1), "neither agent is there");
    let d: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        d["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "claude.home" && c["status"] == "warn"),
        "{d}"
    );
    // With Codex there, a missing Claude Code directory is information only, and a scan
    // with the default directories does not warn about it (many use one agent).
    std::fs::create_dir_all(h.codex()).unwrap();
    let out = h
        .bare_command()
        .args(["scan", "--json"])
        .env("CAIRN_HOME", h.data())
        .output()
        .unwrap();
    let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(r["warnings"], serde_json::json!([]), "{r}");
    let d = h.json(&["doctor"]);
    assert!(
        d["checks"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["id"] == "claude.home" && c["status"] == "info"),
        "{d}"
    );
}

/// An import into a Codex home that does not exist creates nothing there and says why.
#[test]
fn an_import_into_a_missing_codex_home_creates_nothing() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.claude().join("projects")).unwrap();
    // Neither an import nor a dry run nor the plan: no advice about a config that is not there.
    for args in [
        &["import", "--from", "claude", "--to", "codex", "--all"][..],
        &[
            "import",
            "--from",
            "claude",
            "--to",
            "codex",
            "--all",
            "--dry-run",
        ],
        &["import", "--from", "claude", "--to", "codex"],
    ] {
        let out = h.cairn(args);
        assert_eq!(out.status.code(), Some(1), "{args:?}");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("is Codex installed"), "{args:?}: {said}");
        assert!(
            !String::from_utf8_lossy(&out.stdout).contains("config.toml"),
            "{args:?}"
        );
    }
    assert!(!h.codex().exists());
}

/// An empty filtered list says nothing matches, not that there are no memories.
#[test]
fn an_empty_filtered_list_says_nothing_matches() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    h.json(&["remember", "I prefer short answers.", "--type", "user"]);
    let out = h.cairn(&[
        "list",
        "--scope",
        "project",
        "--cwd",
        proj.to_str().unwrap(),
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("no memories match"), "{text}");
}

/// A rollout whose file name is not valid UTF-8 (renamed, or copied from a system with
/// another encoding) cannot be keyed by cairn, which keys transcripts by their path as text:
/// `scan`, `ingest` and `sync` name it as a problem instead of counting nothing.
#[cfg(unix)]
#[test]
fn a_rollout_whose_name_is_not_utf8_is_reported_not_dropped() {
    use std::os::unix::ffi::OsStrExt;
    let h = TestHome::empty();
    let id = "01a1f000-0000-7000-8000-000000000001";
    let day = h.codex().join("sessions/2026/11/20");
    std::fs::create_dir_all(&day).unwrap();
    let name = [
        b"rollout-\xff\xfe-".as_slice(),
        format!("2026-11-20T10-00-00-{id}.jsonl").as_bytes(),
    ]
    .concat();
    let cwd = h.root().display().to_string();
    std::fs::write(
        day.join(std::ffi::OsStr::from_bytes(&name)),
        codex_meta(id, &cwd) + &codex_turn("t1", "From now on use pnpm, never npm.", "ls", 0),
    )
    .unwrap();
    let said = |r: &Value| -> Vec<String> {
        r.as_array()
            .unwrap()
            .iter()
            .map(|e| format!("{}: {}", e["path"], e["message"]))
            .collect()
    };

    let scan = h.json(&["scan"]);
    assert_eq!(scan["codex"]["rollouts"], 0, "{scan}");
    let problems = said(&scan["errors"]);
    assert_eq!(problems.len(), 1, "{scan}");
    assert!(problems[0].contains("rollout-"), "{problems:?}");
    assert!(problems[0].contains("not valid UTF-8"), "{problems:?}");
    let out = h.cairn(&["scan"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("1 problem(s):"), "{text}");
    assert!(text.contains("not valid UTF-8"), "{text}");

    let r = h.json(&["ingest"]);
    assert_eq!(r["files"], 0, "{r}");
    assert_eq!(said(&r["errors"]).len(), 1, "{r}");
    // `sync` says it once, with the scan.
    let r = h.json(&["sync"]);
    assert_eq!(said(&r["scan"]["errors"]).len(), 1, "{r}");
    assert!(said(&r["ingest"]["errors"]).is_empty(), "{r}");
}

/// A rollout Codex wrote before the `{"timestamp","type","payload"}` envelope (a bare
/// `SessionMeta`, `{"record_type":"state"}` lines, bare response items, the cwd only in the
/// `<environment_context>` message) is scanned with its cwd, ingested with its turns, and
/// what was said there is kept; a file there of no rollout shape is named and counted.
#[test]
fn an_early_codex_rollout_is_read_and_an_unknown_one_reported() {
    let h = TestHome::empty();
    let repo = h.root().join("code/legacy-api");
    std::fs::create_dir_all(&repo).unwrap();
    let cwd = repo.display().to_string();
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cairn-transcript/tests/fixtures/codex/legacy-bare-records.jsonl");
    let text = std::fs::read_to_string(fixture)
        .unwrap()
        .replace("/home/dev/work/legacy-api", &cwd);
    let dir = h.codex().join("sessions/2025/08/10");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("rollout-2025-08-10T08-00-00-0198ab00-3f1e-7a2b-9c4d-5e6f7a8b0c01.jsonl"),
        text,
    )
    .unwrap();
    let scan = h.json(&["scan"]);
    assert_eq!(scan["codex"]["cwds"][0]["cwd"], cwd.as_str(), "{scan}");

    let r = h.json(&["sync"]);
    assert_eq!(r["ingest"]["new_turns"], 2, "{r}");
    assert_eq!(r["ingest"]["unrecognised_files"], 0, "{r}");
    assert!(r["ingest"]["errors"].as_array().unwrap().is_empty(), "{r}");
    let list = h.json(&["list", "--cwd", &cwd])["memories"].to_string();
    assert!(list.contains("uv for dependency management"), "{list}");

    let odd = dir.join("rollout-2025-08-10T09-00-00-0198ab00-3f1e-7a2b-9c4d-5e6f7a8b0c02.jsonl");
    std::fs::write(
        &odd,
        "{\"event\":\"start\"}\n{\"event\":\"chunk\",\"text\":\"hi\"}\n",
    )
    .unwrap();
    let out = h.cairn(&["ingest"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.contains("1 file(s) not read: no line of a Codex rollout format cairn knows"),
        "{said}"
    );
    assert!(
        said.contains("not a Codex rollout format cairn knows"),
        "{said}"
    );
    std::fs::write(
        &odd,
        "{\"event\":\"start\"}\n{\"event\":\"chunk\",\"text\":\"hi!\"}\n",
    )
    .unwrap();
    let r = h.json(&["ingest"]);
    assert_eq!(r["unrecognised_files"], 1, "{r}");
    assert!(
        r["errors"][0]["message"]
            .as_str()
            .is_some_and(|m| m.contains("none of its 2 JSON line(s)")),
        "{r}"
    );
    // A run that finds the file unchanged reads nothing of it, but status still says it was
    // never read, and which it is.
    let again = h.json(&["ingest"]);
    assert_eq!(again["unrecognised_files"], 0, "{again}");
    let st = h.json(&["status"]);
    assert_eq!(st["unrecognised_rollouts"]["count"], 1, "{st}");
    assert!(
        st["unrecognised_rollouts"]["paths"][0]
            .as_str()
            .is_some_and(|p| p.ends_with("0c02.jsonl")),
        "{st}"
    );
    let human = String::from_utf8_lossy(&h.cairn(&["status"]).stdout).into_owned();
    assert!(
        human.contains("1 Codex rollout(s) of a format cairn cannot read"),
        "{human}"
    );
    let check = failed_doctor_check(&h, "codex-rollouts");
    assert_eq!(check["status"], "warn", "{check}");
    assert!(
        check["message"]
            .as_str()
            .is_some_and(|m| m.contains("0c02.jsonl")),
        "{check}"
    );
}
