//! Per-turn capture with real processes: recorded hook payloads fed to the built binary against
//! temp homes, the detached worker, the memo journal, `cairn status` and `cairn install`.

mod common;

use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

const SID: &str = "11111111-2222-4333-8444-555555555555";
const CODEX_ID: &str = "01a1f7e6-e126-7f26-9493-6114a06f30dd";

/// A fixture payload with its placeholders filled (values JSON-escaped).
fn payload(name: &str, vars: &[(&str, &str)]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(name);
    let mut s = std::fs::read_to_string(&path).expect("fixture");
    for (k, v) in vars {
        let esc = serde_json::to_string(v).unwrap();
        s = s.replace(&format!("@{k}@"), &esc[1..esc.len() - 1]);
    }
    s
}

/// A project checkout (with `.git`) under the home.
fn project(h: &TestHome, name: &str) -> PathBuf {
    let p = h.root().join("work").join(name);
    std::fs::create_dir_all(p.join(".git")).unwrap();
    std::fs::create_dir_all(p.join("src")).unwrap();
    p
}

fn enable_memo(h: &TestHome, extra: &str) {
    std::fs::create_dir_all(h.data()).unwrap();
    std::fs::write(
        h.data().join("config.toml"),
        format!("# test config\n[memo]\nenabled = true\n{extra}"),
    )
    .unwrap();
}

/// Runs the hook; asserts exit 0 and returns stdout.
fn hook(h: &TestHome, agent: &str, input: &str, env: &[(&str, &str)]) -> String {
    let out = h.cairn_input(&["hook", "--agent", agent], input, env);
    assert!(
        out.status.success(),
        "hook exited {:?}: {}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn claude_transcript(h: &TestHome, cwd: &Path) -> PathBuf {
    let dir = h.claude_project(cwd);
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("{SID}.jsonl"))
}

fn cwd_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A read-only Claude Code turn: a question answered with `rg`.
fn claude_read_only_turn(cwd: &str, uuid: &str, prompt: &str) -> String {
    claude_prompt(uuid, cwd, prompt, "2026-11-25T14:00:00.000Z")
        + &claude_tool_use(
            &format!("{uuid}-a"),
            cwd,
            &format!("{uuid}-t"),
            "Bash",
            json!({"command": "rg -n shipping src"}),
        )
        + &claude_tool_result(
            &format!("{uuid}-r"),
            cwd,
            &format!("{uuid}-t"),
            "src/shipping.ts:3",
            false,
        )
        + &claude_reply(
            &format!("{uuid}-z"),
            cwd,
            "Shipping is computed in src/shipping.ts.",
            "2026-11-25T14:00:05.000Z",
        )
}

/// A Claude Code turn that edits a file and runs the tests.
fn claude_changing_turn(cwd: &str, uuid: &str, prompt: &str) -> String {
    let file = format!("{cwd}/src/shipping.ts");
    claude_prompt(uuid, cwd, prompt, "2026-11-25T14:02:17.310Z")
        + &claude_tool_use(
            &format!("{uuid}-a1"),
            cwd,
            &format!("{uuid}-t1"),
            "Read",
            json!({"file_path": file}),
        )
        + &claude_tool_result(
            &format!("{uuid}-r1"),
            cwd,
            &format!("{uuid}-t1"),
            "…",
            false,
        )
        + &claude_reply(
            &format!("{uuid}-x"),
            cwd,
            "The average divides by zero when there are no physical items, so guard it.",
            "2026-11-25T14:02:30.000Z",
        )
        + &claude_tool_use(
            &format!("{uuid}-a2"),
            cwd,
            &format!("{uuid}-t2"),
            "Edit",
            json!({"file_path": file, "old_string": "a / b", "new_string": "b ? a / b : 0"}),
        )
        + &claude_tool_result(
            &format!("{uuid}-r2"),
            cwd,
            &format!("{uuid}-t2"),
            "ok",
            false,
        )
        + &claude_tool_use(
            &format!("{uuid}-a3"),
            cwd,
            &format!("{uuid}-t3"),
            "Bash",
            json!({"command": "cargo test -p shop"}),
        )
        + &claude_tool_result(
            &format!("{uuid}-r3"),
            cwd,
            &format!("{uuid}-t3"),
            "running 3 tests\ntest result: ok. 3 passed; 0 failed; 0 ignored; 0 measured",
            false,
        )
        + &claude_reply(
            &format!("{uuid}-z"),
            cwd,
            "Fixed the NaN. The docs still describe the old formula.",
            "2026-11-25T14:03:00.000Z",
        )
}

fn memo_blocks(p: &Path) -> usize {
    std::fs::read_to_string(p)
        .unwrap_or_default()
        .matches("<!-- cairn:memo ")
        .count()
}

#[test]
fn claude_stop_records_changed_turns_and_skips_questions() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    enable_memo(&h, "");
    let t = claude_transcript(&h, &proj);
    let vars = |last: &'static str| {
        vec![
            ("SESSION", SID.to_owned()),
            ("TRANSCRIPT", t.display().to_string()),
            ("CWD", cwd.to_owned()),
            ("LAST", last.to_owned()),
        ]
    };
    let fill = |v: &[(&str, String)]| {
        let v: Vec<(&str, &str)> = v.iter().map(|(k, x)| (*k, x.as_str())).collect();
        payload("claude-stop.json", &v)
    };

    // A question: nothing queued, nothing written.
    append(
        &t,
        claude_read_only_turn(cwd, "u-a", "where is shipping computed?").as_bytes(),
    );
    assert_eq!(
        hook(
            &h,
            "claude",
            &fill(&vars("Shipping is computed in src/shipping.ts.")),
            &[]
        ),
        ""
    );
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 0, "{st}");
    assert!(!proj.join("memo.md").exists());

    // A change: one job, one digest, one memo block.
    append(
        &t,
        claude_changing_turn(cwd, "u-b", "fix NaN shipping for digital carts").as_bytes(),
    );
    assert_eq!(
        hook(
            &h,
            "claude",
            &fill(&vars(
                "Fixed the NaN. The docs still describe the old formula."
            )),
            &[]
        ),
        ""
    );
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 1, "{st}");
    assert_eq!(st["digests"], 1, "{st}");
    let memo = std::fs::read_to_string(proj.join("memo.md")).unwrap();
    assert!(
        memo.contains(&format!(
            "<!-- cairn:memo agent=claude session={SID} turn=u-b -->"
        )),
        "{memo}"
    );
    assert!(
        memo.contains("## ") && memo.contains(" - Claude Code turn u-b\n"),
        "{memo}"
    );
    assert!(
        memo.contains("- Requirements: fix NaN shipping for digital carts\n"),
        "{memo}"
    );
    assert!(memo.contains("- Investigation: read "), "{memo}");
    assert!(
        memo.contains("- Decision: The average divides by zero"),
        "{memo}"
    );
    assert!(
        memo.contains("- Changes: src/shipping.ts (+1 −1)\n"),
        "{memo}"
    );
    assert!(
        memo.contains("- Verification: `cargo test -p shop` → ok, 3 passed, 0 failed\n"),
        "{memo}"
    );
    assert!(
        memo.contains("- Open issues: The docs still describe the old formula.\n"),
        "{memo}"
    );
    // The block is valid for the pre-commit check.
    let out = h.cairn_input(
        &["memo", "check", proj.join("memo.md").to_str().unwrap()],
        "",
        &[],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn claude_stop_uses_last_assistant_message_when_the_file_lags() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    enable_memo(&h, "");
    let t = claude_transcript(&h, &proj);
    // The transcript has the edit but not yet the final message.
    let turn = claude_changing_turn(cwd, "u-c", "fix it");
    let cut = turn.trim_end().rfind('\n').unwrap() + 1;
    append(&t, &turn.as_bytes()[..cut]);
    let input = payload(
        "claude-stop.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
            ("LAST", "Done. A follow-up is needed for the tax rounding."),
        ],
    );
    hook(&h, "claude", &input, &[]);
    h.wait_for_worker();
    let memo = std::fs::read_to_string(proj.join("memo.md")).unwrap();
    assert!(
        memo.contains("- Open issues: A follow-up is needed for the tax rounding.\n"),
        "{memo}"
    );
}

fn codex_rollout(h: &TestHome, cwd: &str) -> PathBuf {
    let dir = h.codex().join("sessions/2026/11/20");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(format!("rollout-2026-11-20T10-00-00-{CODEX_ID}.jsonl"));
    append(&p, codex_meta(CODEX_ID, cwd).as_bytes());
    p
}

fn codex_stop(h: &TestHome, rollout: &Path, cwd: &str, turn: &str, env: &[(&str, &str)]) -> String {
    let input = payload(
        "codex-stop.json",
        &[
            ("SESSION", CODEX_ID),
            ("TURN", turn),
            ("TRANSCRIPT", rollout.to_str().unwrap()),
            ("CWD", cwd),
            ("LAST", "Done."),
        ],
    );
    hook(h, "codex", &input, env)
}

/// Jobs ever queued (done, pending, running or failed).
fn jobs_total(st: &Value) -> u64 {
    ["done", "pending", "running", "failed"]
        .iter()
        .map(|k| st["jobs"][k].as_u64().unwrap())
        .sum()
}

#[test]
fn codex_stop_classifies_a_table_of_commands_and_honours_memo_tags() {
    let h = TestHome::empty();
    let proj = project(&h, "infra");
    let cwd = cwd_str(&proj);
    let rollout = codex_rollout(&h, cwd);
    // (turn, prompt, command, recorded?)
    let table: &[(&str, &str, &str, bool)] = &[
        (
            "t01",
            "where is the timeout?",
            "rg -n DEFAULT_TIMEOUT src tests",
            false,
        ),
        (
            "t02",
            "show it",
            "sed -n '1,40p' src/config.py | head -20",
            false,
        ),
        ("t03", "status?", "git status && git diff HEAD~1", false),
        ("t04", "list", "find . -name '*.py' -type f", false),
        (
            "t05",
            "count",
            "awk '{print $1}' log.txt | sort | uniq -c",
            false,
        ),
        ("t06", "save the list", "ls > files.txt", true),
        ("t07", "bump it", "sed -i 's/30/60/' src/config.py", true),
        ("t08", "clean", "find . -name '*.pyc' -delete", true),
        ("t09", "log it", "rg TODO | tee todos.txt", true),
        ("t10", "tidy", "rm -rf build && mv a b", true),
        ("t11", "run it", "./deploy.sh --prod", true),
        ("t12", "pipe", "rg -l foo | xargs rm", true),
        // #memo records a read-only turn; #nomemo skips a changing one; both: skip.
        ("t13", "explain the layout #memo", "ls -la", true),
        ("t14", "fix it quietly #nomemo", "rm stale.lock", false),
        ("t15", "#memo and #nomemo", "rm other.lock", false),
    ];
    let mut expected = 0;
    for (turn, prompt, cmd, recorded) in table {
        append(&rollout, codex_turn(turn, prompt, cmd, 0).as_bytes());
        assert_eq!(codex_stop(&h, &rollout, cwd, turn, &[]), "");
        let st = h.wait_for_worker();
        expected += u64::from(*recorded);
        assert_eq!(jobs_total(&st), expected, "turn {turn} `{cmd}`: {st}");
    }
    let st = h.json(&["status"]);
    assert_eq!(st["jobs"]["done"], expected);
    assert_eq!(st["jobs"]["failed"], 0);
    assert_eq!(st["hook_errors"]["count"], 0, "{st}");
}

/// Codex writes its rollout asynchronously: a Stop can name a turn the file does not hold
/// yet. The hook leaves it to the worker, which finds it once written (retrying until then),
/// and what the user said in it is remembered; no hook error is recorded.
#[test]
fn a_codex_stop_ahead_of_its_rollout_is_left_to_the_worker() {
    let h = TestHome::empty();
    let proj = project(&h, "infra");
    let cwd = cwd_str(&proj);
    std::fs::create_dir_all(h.data()).unwrap();
    std::fs::write(
        h.data().join("config.toml"),
        "[worker]\nretry_delay_secs = 1\n",
    )
    .unwrap();
    let rollout = codex_rollout(&h, cwd);
    assert_eq!(codex_stop(&h, &rollout, cwd, "t1", &[]), "");
    // The rollout writer catches up.
    append(
        &rollout,
        codex_turn(
            "t1",
            "remember that the build server is build01.internal",
            "cat Makefile",
            0,
        )
        .as_bytes(),
    );
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 1, "{st}");
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    assert_eq!(st["hook_errors"]["count"], 0, "{st}");
    let bodies = memory_bodies(&h);
    assert!(
        bodies.iter().any(|b| b.contains("build01.internal")),
        "{bodies:?}"
    );
}

/// Rollouts of older Codex builds carry no `turn_id`, and neither does the Stop payload: the
/// turns are named by position, which the hook (reading back from the end) and ingest
/// (reading from the start) count differently. Every turn is still found and recorded.
#[test]
fn a_codex_rollout_without_turn_ids_is_recorded_turn_by_turn() {
    let h = TestHome::empty();
    let proj = project(&h, "legacy");
    let cwd = cwd_str(&proj);
    let rollout = codex_rollout(&h, cwd);
    let turns = [
        ("rm stale.lock", "delete the stale lock"),
        ("mv a.txt b.txt", "rename a to b"),
        (
            "touch notes.md",
            "from now on always run make lint before pushing",
        ),
    ];
    for (i, (command, prompt)) in turns.iter().enumerate() {
        let old: String = codex_turn("", prompt, command, 0)
            .lines()
            .map(|l| {
                let mut v: Value = serde_json::from_str(l).unwrap();
                v["timestamp"] = Value::from(format!("2026-11-20T10:0{i}:00.000Z"));
                if let Some(p) = v["payload"].as_object_mut() {
                    p.remove("turn_id");
                }
                v.to_string() + "\n"
            })
            .collect();
        append(&rollout, old.as_bytes());
        let input = serde_json::json!({
            "session_id": CODEX_ID,
            "transcript_path": rollout.to_str().unwrap(),
            "cwd": cwd,
            "hook_event_name": "Stop",
            "last_assistant_message": "Done.",
        })
        .to_string();
        assert_eq!(hook(&h, "codex", &input, &[]), "");
        let st = h.wait_for_worker();
        assert_eq!(st["jobs"]["failed"], 0, "turn {i}: {st}");
        assert_eq!(st["jobs"]["done"], (i + 1) as u64, "turn {i}: {st}");
        assert_eq!(st["digests"], (i + 1) as u64, "turn {i}: {st}");
    }
    let bodies = memory_bodies(&h);
    assert!(bodies.iter().any(|b| b.contains("make lint")), "{bodies:?}");
}

#[test]
fn double_stop_gives_one_job_and_one_memo_block() {
    let h = TestHome::empty();
    let proj = project(&h, "infra");
    let cwd = cwd_str(&proj);
    enable_memo(&h, "");
    let rollout = codex_rollout(&h, cwd);
    append(
        &rollout,
        codex_turn("t1", "remove the lock", "rm -f terraform.lock", 0).as_bytes(),
    );
    codex_stop(&h, &rollout, cwd, "t1", &[]);
    codex_stop(&h, &rollout, cwd, "t1", &[]);
    let st = h.wait_for_worker();
    codex_stop(&h, &rollout, cwd, "t1", &[]);
    let st2 = h.wait_for_worker();
    assert_eq!(jobs_total(&st), 1, "{st}");
    assert_eq!(jobs_total(&st2), 1, "{st2}");
    // The Stop after the worker ingested the turn found it too (below the cursor).
    assert_eq!(st2["hook_errors"]["count"], 0, "{st2}");
    // Running the worker by hand changes nothing either.
    h.json(&["worker"]);
    assert_eq!(memo_blocks(&proj.join("memo.md")), 1);
}

#[test]
fn a_worker_killed_mid_job_is_retried_and_the_memo_keeps_one_block() {
    let h = TestHome::empty();
    let proj = project(&h, "infra");
    let cwd = cwd_str(&proj);
    enable_memo(&h, "");
    let rollout = codex_rollout(&h, cwd);
    append(
        &rollout,
        codex_turn("t1", "apply it", "terraform apply", 0).as_bytes(),
    );
    // The worker the hook starts inherits the fault: it dies right after writing the block.
    codex_stop(
        &h,
        &rollout,
        cwd,
        "t1",
        &[("CAIRN_FAULT", "abort-after-memo")],
    );
    let st = h.wait_for_worker_exit();
    let log = std::fs::read_to_string(h.data().join("cairn.log")).unwrap_or_default();
    assert_eq!(
        st["jobs"]["running"], 1,
        "the job was left running: {st}\n{log}"
    );
    assert_eq!(memo_blocks(&proj.join("memo.md")), 1, "{st}\n{log}");
    // The next worker takes the job back and finishes it without a second block.
    let w = h.json(&["worker"]);
    assert_eq!(w["recovered"], 1, "{w}");
    assert_eq!(w["done"], 1, "{w}");
    assert_eq!(w["memo_blocks"], 0, "{w}");
    let st = h.json(&["status"]);
    assert_eq!(
        (st["jobs"]["done"].as_u64(), st["jobs"]["running"].as_u64()),
        (Some(1), Some(0))
    );
    assert_eq!(memo_blocks(&proj.join("memo.md")), 1);
}

trait WaitExit {
    fn wait_for_worker_exit(&self) -> Value;
}

impl WaitExit for TestHome {
    /// Waits until no worker holds the lock (jobs may be left in any state).
    fn wait_for_worker_exit(&self) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let st = self.json(&["status"]);
            // The job is claimed before the worker can die: wait for that too.
            let started = st["jobs"]["pending"] == 0;
            if (st["worker_running"] == false && started) || std::time::Instant::now() > deadline {
                return st;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

#[test]
fn a_failed_job_shows_in_the_next_session_start_and_in_status() {
    let h = TestHome::empty();
    let proj = project(&h, "infra");
    let cwd = cwd_str(&proj);
    // The memo path runs through a regular file: every attempt fails.
    std::fs::write(proj.join("notes"), "a file, not a directory").unwrap();
    enable_memo(&h, "path = \"notes/memo.md\"\n[worker]\nmax_attempts = 1\n");
    let rollout = codex_rollout(&h, cwd);
    append(
        &rollout,
        codex_turn("t1", "apply it", "terraform apply", 0).as_bytes(),
    );
    codex_stop(&h, &rollout, cwd, "t1", &[]);
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["failed"], 1, "{st}");
    let err = st["job_errors"][0]["error"].as_str().unwrap();
    assert!(
        err.contains("memo journal") && err.contains("notes/memo.md"),
        "{err}"
    );

    for agent in ["codex", "claude"] {
        let start = payload(
            &format!("{agent}-session-start.json"),
            &[
                ("SESSION", "s2"),
                ("TRANSCRIPT", rollout.to_str().unwrap()),
                ("CWD", cwd),
            ],
        );
        let out = hook(&h, agent, &start, &[]);
        if agent == "claude" {
            // Told once per project: the Codex session start already showed it.
            assert_eq!(out, "", "{out}");
            continue;
        }
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        assert_eq!(v["hookSpecificOutput"]["hookEventName"], "SessionStart");
        let ctx = v["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap();
        assert!(ctx.contains("1 background job failed"), "{ctx}");
        assert!(
            ctx.contains("notes/memo.md") && ctx.contains("`cairn status`"),
            "{ctx}"
        );
        assert_eq!(
            v["systemMessage"],
            v["hookSpecificOutput"]["additionalContext"]
        );
    }
    // Human status names the failure too.
    let out = h.cairn(&["status"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("1 failed") && text.contains("memo journal"),
        "{text}"
    );
    // Another project is not told about this one's failure.
    let other = project(&h, "other");
    let start = payload(
        "claude-session-start.json",
        &[
            ("SESSION", "s3"),
            ("TRANSCRIPT", "/nowhere.jsonl"),
            ("CWD", cwd_str(&other)),
        ],
    );
    assert_eq!(hook(&h, "claude", &start, &[]), "");
}

#[test]
fn a_planted_secret_is_nowhere_in_the_data_dir_or_the_memo() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    enable_memo(&h, "");
    let aws = "AKIAQWERTYUIOPASDFGH";
    let gh = "ghp_0123456789abcdefghijABCDEFGHIJ012345";
    let t = claude_transcript(&h, &proj);
    append(
        &t,
        (claude_prompt(
            "u-s",
            cwd,
            &format!("deploy with key {aws} please"),
            "2026-11-25T14:00:00.000Z",
        ) + &claude_tool_use(
            "u-s1",
            cwd,
            "ts1",
            "Bash",
            json!({"command": format!("GITHUB_TOKEN={gh} ./deploy.sh > out.log")}),
        ) + &claude_tool_result(
            "u-s2",
            cwd,
            "ts1",
            &format!("using token {gh}\nFAILED"),
            true,
        ) + &claude_reply(
            "u-s3",
            cwd,
            &format!("Deploy failed; the key {aws} was rejected."),
            "2026-11-25T14:00:09.000Z",
        ))
            .as_bytes(),
    );
    let input = payload(
        "claude-stop.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
            (
                "LAST",
                &format!("Deploy failed; the key {aws} was rejected. Token {gh}."),
            ),
        ],
    );
    hook(&h, "claude", &input, &[]);
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 1, "{st}");
    let memo = proj.join("memo.md");
    assert!(memo.exists());
    let mut files = all_bytes_under(&h.data());
    files.push((memo.clone(), std::fs::read(&memo).unwrap()));
    assert!(files.iter().any(|(p, _)| p.ends_with("cairn.db")));
    for (p, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        for secret in [aws, gh] {
            assert!(!text.contains(secret), "{secret} found in {}", p.display());
        }
    }
    let memo = std::fs::read_to_string(&memo).unwrap();
    assert!(memo.contains("[REDACTED:"), "{memo}");
}

/// A password the person states once is masked where the agent reuses it: in the same turn's
/// command and reply, in the reply the Stop hook hands over, and in a later turn read by a
/// later pass (which sees only the tags the first pass left in the cursor).
#[test]
fn a_stated_password_is_masked_wherever_the_session_reuses_it() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    enable_memo(&h, "");
    let pw = "Wq7Lm3Np9Xz2";
    let t = claude_transcript(&h, &proj);
    append(
        &t,
        (claude_prompt(
            "u-p",
            cwd,
            &format!("my password for the registry is {pw}, log in and push the image"),
            "2026-11-25T14:00:00.000Z",
        ) + &claude_tool_use(
            "u-p1",
            cwd,
            "tp1",
            "Bash",
            json!({"command": format!("echo '{pw}' | docker login registry.example.com -u ci --password-stdin && docker push registry.example.com/shop:1")}),
        ) + &claude_tool_result("u-p2", cwd, "tp1", "Login Succeeded\npushed", false)
            + &claude_reply(
                "u-p3",
                cwd,
                &format!("Logged in as ci (with {pw}) and pushed shop:1."),
                "2026-11-25T14:00:09.000Z",
            ))
        .as_bytes(),
    );
    let stop = |last: &str| {
        payload(
            "claude-stop.json",
            &[
                ("SESSION", SID),
                ("TRANSCRIPT", t.to_str().unwrap()),
                ("CWD", cwd),
                ("LAST", last),
            ],
        )
    };
    // The file lags behind the final message: the hook hands it over itself.
    hook(
        &h,
        "claude",
        &stop(&format!("Done. For next time: the login used {pw}.")),
        &[],
    );
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 1, "{st}");

    append(
        &t,
        (claude_prompt(
            "u-q",
            cwd,
            "save it for the CI job too",
            "2026-11-25T14:05:00.000Z",
        ) + &claude_tool_use(
            "u-q1",
            cwd,
            "tq1",
            "Bash",
            json!({"command": format!("printf %s {pw} > .ci/registry-pass && git status")}),
        ) + &claude_tool_result("u-q2", cwd, "tq1", "?? .ci/registry-pass", false)
            + &claude_reply(
                "u-q3",
                cwd,
                &format!("Wrote {pw} to .ci/registry-pass (untracked)."),
                "2026-11-25T14:05:07.000Z",
            ))
            .as_bytes(),
    );
    // The worker is held off: what the hook itself queued (the final message the file lags
    // behind, known only from the cursor's tags and glued to other text) is masked already.
    let lock = std::fs::File::create(h.data().join("worker.lock")).unwrap();
    lock.lock().unwrap();
    hook(
        &h,
        "claude",
        &stop(&format!("Wrote it; the login is ci:{pw} (untracked).")),
        &[],
    );
    for (p, bytes) in all_bytes_under(&h.data()) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(
            !text.contains(pw),
            "the queued job holds the password: {}",
            p.display()
        );
    }
    drop(lock);
    assert!(h.cairn(&["worker"]).status.success());
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 2, "{st}");

    let memo = proj.join("memo.md");
    let mut files = all_bytes_under(&h.data());
    files.push((memo.clone(), std::fs::read(&memo).unwrap()));
    for (p, bytes) in &files {
        let text = String::from_utf8_lossy(bytes);
        assert!(!text.contains(pw), "the password is in {}", p.display());
    }
    // What was around it is kept: the turns still say what happened.
    let db = files
        .iter()
        .find(|(p, _)| p.ends_with("cairn.db"))
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();
    for kept in [
        "echo '[REDACTED:password]' | docker login registry.example.com -u ci",
        "printf %s [REDACTED:password] > .ci/registry-pass",
        "Wrote [REDACTED:password] to .ci/registry-pass",
    ] {
        assert!(db.contains(kept), "{kept} not in the store");
    }
}

/// A subagent's transcript of the session is masked with what the session's main transcript
/// met: read in the same run, and in a later one.
#[test]
fn a_subagent_reusing_the_sessions_password_is_masked() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    let pw = "Zr8mQ2vLx5Kp";
    let t = claude_transcript(&h, &proj);
    append(
        &t,
        claude_prompt(
            "u-m",
            cwd,
            &format!("the staging password is {pw}, have a subagent push the image"),
            "2026-11-25T14:00:00.000Z",
        )
        .as_bytes(),
    );
    let sub = t
        .with_extension("")
        .join("subagents")
        .join("agent-b1c2d3e.jsonl");
    std::fs::create_dir_all(sub.parent().unwrap()).unwrap();
    let push = |uuid: &str, n: &str| {
        claude_tool_use(
            uuid,
            cwd,
            &format!("ts{n}"),
            "Bash",
            json!({"command": format!("echo {pw} | docker login -u ci --password-stdin # {n}")}),
        ) + &claude_reply(
            &format!("{uuid}-r"),
            cwd,
            &format!("Pushed using {pw} ({n})."),
            "2026-11-25T14:00:05.000Z",
        )
    };
    append(&sub, push("u-s1", "one").as_bytes());
    assert!(h.cairn(&["sync"]).status.success());
    append(&sub, push("u-s2", "two").as_bytes());
    assert!(h.cairn(&["sync"]).status.success());
    let mut stored = String::new();
    for (p, bytes) in all_bytes_under(&h.data()) {
        let text = String::from_utf8_lossy(&bytes);
        assert!(!text.contains(pw), "the password is in {}", p.display());
        stored.push_str(&text);
    }
    for n in ["one", "two"] {
        let kept = format!("echo [REDACTED:password] | docker login -u ci --password-stdin # {n}");
        assert!(stored.contains(&kept), "{kept} not stored");
    }
}

#[test]
fn other_events_bad_input_and_recursion_do_nothing_but_errors_are_recorded() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    let t = claude_transcript(&h, &proj);
    append(&t, claude_changing_turn(cwd, "u-r", "fix").as_bytes());
    let stop = payload(
        "claude-stop.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
            ("LAST", "ok"),
        ],
    );
    // Inside a process cairn started: nothing at all, not even a database.
    assert_eq!(hook(&h, "claude", &stop, &[("CAIRN_INSIDE", "1")]), "");
    assert!(!h.data().join("cairn.db").exists());
    // Events cairn does not handle.
    let pre = payload(
        "claude-pre-tool-use.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
        ],
    );
    assert_eq!(hook(&h, "claude", &pre, &[]), "");
    // Broken input and a vanished transcript: exit 0, no stdout, recorded.
    assert_eq!(hook(&h, "claude", "{not json", &[]), "");
    let gone = payload(
        "codex-stop.json",
        &[
            ("SESSION", "s"),
            ("TURN", "t9"),
            ("TRANSCRIPT", "/nowhere/rollout.jsonl"),
            ("CWD", cwd),
            ("LAST", ""),
        ],
    );
    assert_eq!(hook(&h, "codex", &gone, &[]), "");
    // A named pipe in place of the transcript: refused at once (opening it would block the
    // agent's hook forever); recorded like the others.
    #[cfg(unix)]
    {
        let fifo = h.root().join("pipe.jsonl");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        let mut piped: Value = serde_json::from_str(&gone).unwrap();
        piped["transcript_path"] = Value::String(fifo.to_string_lossy().into_owned());
        assert_eq!(hook(&h, "codex", &piped.to_string(), &[]), "");
    }
    // A Codex session that is not persisted sends a null transcript: nothing to do, no error.
    let mut ephemeral: Value = serde_json::from_str(&gone).unwrap();
    ephemeral["transcript_path"] = Value::Null;
    assert_eq!(hook(&h, "codex", &ephemeral.to_string(), &[]), "");
    let st = h.json(&["status"]);
    let errors = if cfg!(unix) { 3 } else { 2 };
    assert_eq!(st["hook_errors"]["count"], errors, "{st}");
    let last = st["hook_errors"]["last"].as_str().unwrap();
    assert!(
        last.contains("/nowhere/rollout.jsonl") || last.contains("not a regular file"),
        "{st}"
    );
    let log = std::fs::read_to_string(h.data().join("cairn.log")).unwrap();
    assert!(log.contains("bad hook input"), "{log}");
    // A transcript that is gone is named as gone, not as some other kind of file.
    assert!(
        log.contains("/nowhere/rollout.jsonl does not exist"),
        "{log}"
    );
    // A prompt that asks to leave memory out gets nothing, not even the notice.
    let submit = payload(
        "claude-user-prompt-submit.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
        ],
    );
    let mut ignoring: Value = serde_json::from_str(&submit).unwrap();
    ignoring["prompt"] = "ignore memory, just fix the typo in the README".into();
    assert_eq!(hook(&h, "claude", &ignoring.to_string(), &[]), "");
    // The next prompt tells the agent and the user.
    let out = hook(&h, "claude", &submit, &[]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    assert_eq!(v["hookSpecificOutput"]["hookEventName"], "UserPromptSubmit");
    assert!(
        v["systemMessage"]
            .as_str()
            .unwrap()
            .contains(&format!("hook failed {errors} times")),
        "{v}"
    );
}

/// Hook input over 16 MiB is refused as too large (not as broken JSON), and the hook exits 0.
#[test]
fn oversized_hook_input_is_named_as_such() {
    let h = TestHome::empty();
    let prompt = "x".repeat(17 << 20);
    let input = json!({"session_id": "s", "hook_event_name": "UserPromptSubmit", "prompt": prompt})
        .to_string();
    assert_eq!(hook(&h, "claude", &input, &[]), "");
    let st = h.json(&["status"]);
    let last = st["hook_errors"]["last"].as_str().unwrap_or_default();
    assert!(last.contains("larger than 16 MiB"), "{st}");
}

/// A hook command cairn cannot parse (an unknown agent, a missing or unknown flag) exits 0
/// and says why on stderr: exit 2 would block the prompt or the turn. Other commands keep
/// their usage error.
#[test]
fn a_hook_command_with_bad_arguments_exits_0() {
    let h = TestHome::empty();
    for args in [
        &["hook", "--agent", "gemini"][..],
        &["hook"][..],
        &["hook", "--agent", "claude", "--bogus"][..],
    ] {
        let out = h.cairn_input(args, "{}", &[]);
        assert_eq!(out.status.code(), Some(0), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            err.contains("cairn hook:") && err.contains("cairn install"),
            "{err}"
        );
        assert!(out.stdout.is_empty(), "{args:?}");
    }
    assert_eq!(h.cairn_input(&["remember"], "", &[]).status.code(), Some(2));
}

#[test]
fn a_broken_config_is_named_with_its_line_and_the_hook_still_exits_0() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    std::fs::create_dir_all(h.data()).unwrap();
    std::fs::write(h.data().join("config.toml"), "[memo]\nenabled = yes\n").unwrap();
    let start = payload(
        "codex-session-start.json",
        &[("SESSION", "s"), ("TRANSCRIPT", "/x.jsonl"), ("CWD", cwd)],
    );
    let out = hook(&h, "codex", &start, &[]);
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    let ctx = v["hookSpecificOutput"]["additionalContext"]
        .as_str()
        .unwrap();
    let cfg = h.data().join("config.toml");
    assert!(ctx.contains(&format!("{}:2:", cfg.display())), "{ctx}");
    let st = h.json(&["status"]);
    assert!(st["config_error"].as_str().unwrap().contains(":2:"), "{st}");
    assert!(st["config"].is_null());
    // The main job goes on with the defaults too, and says why.
    let r = h.json(&["sync"]);
    assert!(
        r["config_error"].as_str().unwrap().contains("defaults"),
        "{r}"
    );
    assert!(r["consolidate"].is_object(), "{r}");
    let out = h.cairn(&["sync"]);
    assert!(out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("warning: cannot read config.toml"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn memo_check_reports_broken_blocks_with_line_numbers() {
    let h = TestHome::empty();
    let dir = h.root();
    let good = "## 2026-11-25 14:05 - Codex turn t1\n<!-- cairn:memo agent=codex session=s turn=t1 -->\n- Requirements: a\n- Investigation: b\n- Decision: c\n- Changes: d\n- Verification: e\n- Open issues: f\n<!-- /cairn:memo -->\n";
    let file = dir.join("memo.md");
    std::fs::write(&file, format!("# Memo\n\n{good}")).unwrap();
    let out = h.cairn(&["memo", "check", file.to_str().unwrap()]);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("1 block(s), all valid"));
    std::fs::write(
        &file,
        format!("# Memo\n\n{}", good.replace("<!-- /cairn:memo -->\n", "")),
    )
    .unwrap();
    let out = h.cairn(&["memo", "check", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("{}:4: block is not closed", file.display())),
        "{text}"
    );
    let v = {
        let out = h.cairn(&["memo", "check", file.to_str().unwrap(), "--json"]);
        serde_json::from_slice::<Value>(&out.stdout).unwrap()
    };
    assert_eq!(v["problems"][0]["line"], 4);
}

#[test]
fn install_and_uninstall_round_trip_byte_identical() {
    let h = TestHome::sample();
    for (agent, file) in [
        ("claude", h.claude().join("settings.json")),
        ("codex", h.codex().join("config.toml")),
    ] {
        let original = std::fs::read(&file).unwrap();
        // Dry run: a diff, nothing written.
        let dry = h.cairn(&["install", agent, "--dry-run"]);
        assert!(
            dry.status.success(),
            "{}",
            String::from_utf8_lossy(&dry.stderr)
        );
        let diff = String::from_utf8_lossy(&dry.stdout);
        assert!(
            diff.starts_with("--- ") && diff.contains(&format!(" hook --agent {agent}")),
            "{diff}"
        );
        assert_eq!(std::fs::read(&file).unwrap(), original);

        let out = h.cairn(&["install", agent]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let said = String::from_utf8_lossy(&out.stdout);
        if agent == "codex" {
            assert!(said.contains("/hooks") && said.contains("trust"), "{said}");
        }
        let installed = std::fs::read_to_string(&file).unwrap();
        let exe = std::fs::canonicalize(env!("CARGO_BIN_EXE_cairn")).unwrap();
        assert!(
            installed.contains(&format!("{} hook --agent {agent}", exe.display())),
            "{installed}"
        );
        if agent == "claude" {
            assert!(
                installed.contains("notify-send"),
                "the user's own hook is kept"
            );
            let v: Value = serde_json::from_str(&installed).unwrap();
            for e in ["SessionStart", "UserPromptSubmit", "Stop"] {
                assert!(v["hooks"][e].is_array(), "{e}");
            }
        } else {
            assert!(installed.contains("[projects.\""), "{installed}");
            assert!(
                installed.contains("[[hooks.UserPromptSubmit.hooks]]"),
                "{installed}"
            );
        }
        // Idempotent.
        let again = h.json(&["install", agent]);
        assert_eq!(again["changed"], false, "{again}");
        assert_eq!(std::fs::read_to_string(&file).unwrap(), installed);
        // Uninstall: byte-identical.
        let un = h.json(&["install", agent, "--uninstall"]);
        assert_eq!(un["changed"], true);
        assert_eq!(std::fs::read(&file).unwrap(), original, "{agent}");
        let un = h.json(&["install", agent, "--uninstall"]);
        assert_eq!(un["changed"], false);
    }
}

/// The live memories' bodies (`cairn list --json`).
fn memory_bodies(h: &TestHome) -> Vec<String> {
    let list = h.json(&["list"]);
    let mems = list["memories"]
        .as_array()
        .or_else(|| list.as_array())
        .cloned()
        .unwrap_or_default();
    mems.iter()
        .filter_map(|m| m["body"].as_str().map(str::to_owned))
        .collect()
}

/// A Claude Code Stop for the transcript `t`.
fn claude_stop(h: &TestHome, t: &Path, cwd: &str, last: &str) {
    let input = payload(
        "claude-stop.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
            ("LAST", last),
        ],
    );
    assert_eq!(hook(h, "claude", &input, &[("CAIRN_DEBUG", "1")]), "");
}

/// A turn that edits a file, whose prompt was sent at `ts`.
fn claude_edit_turn(cwd: &str, uuid: &str, prompt: &str, ts: &str) -> String {
    let file = format!("{cwd}/src/shipping.ts");
    claude_prompt(uuid, cwd, prompt, ts)
        + &claude_tool_use(
            &format!("{uuid}-a"),
            cwd,
            &format!("{uuid}-t"),
            "Edit",
            json!({"file_path": file, "old_string": "a / b", "new_string": "b ? a / b : 0"}),
        )
        + &claude_tool_result(&format!("{uuid}-r"), cwd, &format!("{uuid}-t"), "ok", false)
        + &claude_reply(&format!("{uuid}-z"), cwd, "Done.", ts)
}

#[test]
fn a_memory_said_in_any_turn_reaches_the_next_session_through_the_hooks_alone() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    let t = claude_transcript(&h, &proj);
    // Seconds ago: the turns are young enough for extraction's grace period for open turns.
    let now = jiff::Timestamp::now().to_string();

    // A read-only question: skipped as before (no job, no worker).
    append(
        &t,
        claude_read_only_turn(cwd, "u-q", "where is shipping computed?").as_bytes(),
    );
    claude_stop(&h, &t, cwd, "Shipping is computed in src/shipping.ts.");
    let st = h.wait_for_worker();
    assert_eq!(jobs_total(&st), 0, "{st}");

    // A read-only turn that states a memory: queued for extraction, no digest.
    append(
        &t,
        (claude_prompt(
            "u-r",
            cwd,
            "from now on, always answer me in British English",
            &now,
        ) + &claude_reply("u-r-z", cwd, "Noted.", &now))
            .as_bytes(),
    );
    claude_stop(&h, &t, cwd, "Noted.");
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 1, "{st}");
    assert_eq!(st["digests"], 0, "{st}");
    let bodies = memory_bodies(&h);
    assert!(
        bodies.iter().any(|b| b.contains("British English")),
        "{bodies:?}"
    );

    // The session's last turn changes a file and states a rule: the worker the Stop started
    // extracts it although the file does not show the turn's end yet.
    append(
        &t,
        claude_edit_turn(
            cwd,
            "u-e",
            "guard the division. Remember that we always deploy through the blue-green pipeline, never directly.",
            &now,
        )
        .as_bytes(),
    );
    claude_stop(&h, &t, cwd, "Done.");
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 2, "{st}");
    assert_eq!(st["digests"], 1, "{st}");
    let bodies = memory_bodies(&h);
    assert!(
        bodies.iter().any(|b| b.contains("blue-green")),
        "{bodies:?}"
    );

    // The next session is told both.
    let start = payload(
        "claude-session-start.json",
        &[
            ("SESSION", "22222222-2222-4333-8444-555555555555"),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
        ],
    );
    let out = hook(&h, "claude", &start, &[]);
    assert!(out.contains("British English"), "{out}");
    assert!(out.contains("blue-green"), "{out}");
    let log = std::fs::read_to_string(h.data().join("cairn.log")).unwrap_or_default();
    assert!(log.contains("recorded (memory statement)"), "{log}");
}

#[test]
fn a_turn_with_a_huge_line_is_left_to_the_worker_which_records_it() {
    let h = TestHome::empty();
    let proj = project(&h, "shop");
    let cwd = cwd_str(&proj);
    let t = claude_transcript(&h, &proj);
    let now = jiff::Timestamp::now().to_string();
    append(
        &t,
        claude_read_only_turn(cwd, "u-a", "where is shipping computed?").as_bytes(),
    );
    // The turn that just ended: a 12 MiB tool output on one line (over the hook's 8 MiB), an
    // edit, and a rule.
    let turn = claude_prompt(
        "u-big",
        cwd,
        "dump the log and fix the parser. Remember that the release branch is always cut from main.",
        &now,
    ) + &claude_tool_use(
        "u-big-a",
        cwd,
        "u-big-t",
        "Bash",
        json!({"command": "cat big.log"}),
    ) + &claude_tool_result("u-big-r", cwd, "u-big-t", &"x".repeat(12 << 20), false)
        + &claude_edit_turn(cwd, "u-big-e", "", &now)
            .lines()
            .skip(1)
            .map(|l| format!("{l}\n"))
            .collect::<String>();
    append(&t, turn.as_bytes());
    claude_stop(&h, &t, cwd, "Done.");
    let log = std::fs::read_to_string(h.data().join("cairn.log")).unwrap_or_default();
    assert!(
        log.contains("left to the worker (a line of the turn is longer than 8 MiB)"),
        "{log}"
    );
    let st = h.wait_for_worker();
    assert_eq!(st["jobs"]["done"], 1, "{st}");
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    // The worker found the turn itself: its digest is under the turn's real key.
    assert_eq!(st["digests"], 1, "{st}");
    let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
    let key: String = db
        .query_row("SELECT turn_key FROM digests", [], |r| r.get(0))
        .unwrap();
    assert_eq!(key, "u-big");
    let bodies = memory_bodies(&h);
    assert!(
        bodies.iter().any(|b| b.contains("release branch")),
        "{bodies:?}"
    );
}

/// A session that starts when no sync has run for hours starts one in the background: the
/// history from before the hooks reaches memory without anyone running `cairn sync`. Once an
/// hour at most, and never with `catch_up_hours = 0`.
#[test]
fn a_session_start_catches_up_a_history_no_sync_read() {
    let h = TestHome::empty();
    let repo = h.project("shop");
    let cwd = repo.to_str().unwrap();
    let dir = h.claude_project(&repo);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("11111111-2222-4333-8444-555555555555.jsonl"),
        claude_prompt(
            "u1",
            cwd,
            "from now on use pnpm, not npm",
            "2026-11-20T10:00:00.000Z",
        ) + &claude_reply("a1", cwd, "OK.", "2026-11-20T10:00:05.000Z"),
    )
    .unwrap();
    let start = json!({"session_id": "s9", "transcript_path": null, "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": "startup"})
    .to_string();
    let kept = |h: &TestHome| {
        let out = h.cairn(&["list", "--json"]);
        String::from_utf8_lossy(&out.stdout).contains("pnpm")
    };
    let log_lines = |h: &TestHome| {
        std::fs::read_to_string(h.data().join("cairn.log"))
            .unwrap_or_default()
            .matches("started one in the background")
            .count()
    };
    hook(&h, "claude", &start, &[]);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !kept(&h) {
        assert!(
            std::time::Instant::now() < deadline,
            "the catch-up sync never ran"
        );
        std::thread::sleep(std::time::Duration::from_millis(200));
    }
    assert_eq!(log_lines(&h), 1);
    // Synced now: the next session start begins nothing.
    hook(&h, "claude", &start, &[]);
    assert_eq!(log_lines(&h), 1);
    // Switched off.
    let h = TestHome::empty();
    std::fs::create_dir_all(h.data()).unwrap();
    std::fs::write(
        h.data().join("config.toml"),
        "[worker]\ncatch_up_hours = 0\n",
    )
    .unwrap();
    std::fs::create_dir_all(h.claude()).unwrap();
    hook(&h, "claude", &start, &[]);
    std::thread::sleep(std::time::Duration::from_millis(500));
    assert_eq!(log_lines(&h), 0);
}
