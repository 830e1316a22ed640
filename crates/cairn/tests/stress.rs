//! Concurrency and crashes with real processes.
//!
//! Stress: `CAIRN_STRESS_PROCS` threads (default 16), each the agent of one session (Claude Code
//! and Codex alternately, two projects), for `CAIRN_STRESS_ROUNDS` rounds (default 50): append
//! a turn that changes a file, then fire Stop, SessionStart and UserPromptSubmit hooks as
//! processes, while background loops run `cairn worker`, `cairn import --from claude --to
//! codex`, `cairn recall` (and every other command of [`LOOPS`] that `cairn --help` lists,
//! such as `consolidate`). Afterwards: every turn stored exactly once, one job done and one
//! memo block per turn, every remembered fact one live memory, views and the Codex copy valid,
//! `PRAGMA integrity_check` ok, no hook exited non-zero.
//!
//! Crash: over `CAIRN_CRASH_SEEDS` seeds (default 3), the worker, the import and (when the
//! binary has it) `cairn consolidate` are killed with SIGKILL at random points; the next run
//! completes the work, no job is lost, no memo block duplicated, no half-written file is
//! visible, and the dead process's locks are free.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::*;
use serde_json::{Value, json};

/// Commands looped in the background during the stress run (with `--cwd`/`--json` added where
/// shown). Adding one is one line; a command `cairn --help` does not list is left out.
const LOOPS: &[&[&str]] = &[
    &["worker"],
    &[
        "import", "--from", "claude", "--to", "codex", "--all", "--json",
    ],
    &["recall", "how do we deploy", "--json", "--cwd", "@PROJECT@"],
    &["consolidate", "--json"],
];

const FACTS: &[&str] = &[
    "we deploy the billing service with helm",
    "the staging database is postgres 16",
    "use pnpm, not npm",
    "never run migrations on fridays",
    "the api gateway timeout is 30 seconds",
    "application logs go to loki",
    "feature flags live in launchdarkly",
    "run the browser suite with playwright",
    "use ruff for python formatting",
    "the mobile app is built with expo",
    "secrets live in vault",
    "node is pinned to version 22",
    "cache keys expire after ten minutes",
    "cron jobs run in utc",
    "prefer small pull requests",
    "ci runs on buildkite",
];

const DEFAULT_SID: &str = "11111111-2222-4333-8444-555555555555";

fn env_usize(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn cairn_cmd(h: &TestHome, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_cairn"));
    h.roots(&mut c)
        .args(args)
        .env_remove("CAIRN_INSIDE")
        .env_remove("CAIRN_FAULT")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

/// One agent session of the stress run.
struct Session {
    agent: &'static str,
    id: String,
    transcript: PathBuf,
    cwd: String,
}

impl Session {
    fn new(h: &TestHome, i: usize, projects: &[PathBuf]) -> Session {
        let proj = &projects[(i / 2) % projects.len()];
        let cwd = proj.to_str().unwrap().to_string();
        if i.is_multiple_of(2) {
            let id = format!("{i:08x}-0000-4000-8000-000000000000");
            let dir = h.claude_project(proj);
            std::fs::create_dir_all(&dir).unwrap();
            Session {
                agent: "claude",
                transcript: dir.join(format!("{id}.jsonl")),
                id,
                cwd,
            }
        } else {
            let id = format!("01a1f7e6-0000-7000-8000-{i:012x}");
            let transcript = h.codex_rollout_path(&id);
            append(&transcript, codex_meta(&id, &cwd).as_bytes());
            Session {
                agent: "codex",
                transcript,
                id,
                cwd,
            }
        }
    }

    fn prompt(i: usize, r: usize) -> String {
        if r == 0 {
            format!("remember that {}", FACTS[i % FACTS.len()])
        } else {
            format!("stress change s{i} round {r}")
        }
    }

    /// Appends round `r`'s turn (a file edit, so the Stop hook records it).
    fn append_turn(&self, i: usize, r: usize) {
        let prompt = Session::prompt(i, r);
        let text = if self.agent == "claude" {
            let u = |s: &str| format!("s{i}-r{r}-{s}");
            let ts = format!("2026-11-25T14:{:02}:{:02}.000Z", r / 60 % 60, r % 60);
            let cwd = &self.cwd;
            (claude_prompt(&u("p"), cwd, &prompt, &ts)
                + &claude_tool_use(
                    &u("a"),
                    cwd,
                    &u("t"),
                    "Edit",
                    json!({"file_path": format!("{cwd}/src/s{i}.rs"), "old_string": "a", "new_string": "b"}),
                )
                + &claude_tool_result(&u("o"), cwd, &u("t"), "ok", false)
                + &claude_reply(&u("z"), cwd, "Done.", &ts))
                .replace(DEFAULT_SID, &self.id)
        } else {
            codex_turn(
                &format!("s{i}-r{r}"),
                &prompt,
                &format!("touch src/s{i}.rs"),
                0,
            )
        };
        append(&self.transcript, text.as_bytes());
    }

    fn hooks(&self, i: usize, r: usize) -> Vec<(&'static str, Value)> {
        let t = self.transcript.to_str().unwrap();
        let turn = format!("s{i}-r{r}");
        let mut out = vec![(
            "Stop",
            json!({"hook_event_name": "Stop", "session_id": self.id, "turn_id": turn,
                   "transcript_path": t, "cwd": self.cwd, "stop_hook_active": false,
                   "last_assistant_message": "Done."}),
        )];
        if r == 0 {
            out.push((
                "SessionStart",
                json!({"hook_event_name": "SessionStart", "session_id": self.id, "source": "startup",
                       "transcript_path": t, "cwd": self.cwd}),
            ));
        }
        out.push((
            "UserPromptSubmit",
            json!({"hook_event_name": "UserPromptSubmit", "session_id": self.id, "turn_id": turn,
                   "transcript_path": t, "cwd": self.cwd, "prompt": "how do we deploy the billing service?"}),
        ));
        out
    }
}

#[derive(Default)]
struct HookStats {
    runs: usize,
    failures: Vec<String>,
    millis: BTreeMap<&'static str, Vec<u128>>,
}

/// An empty home with the memo journal on, `max_attempts` per job, and Codex memories on.
fn memo_home(max_attempts: u32) -> TestHome {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.data()).unwrap();
    std::fs::write(
        h.data().join("config.toml"),
        format!("[memo]\nenabled = true\n[worker]\nmax_attempts = {max_attempts}\n"),
    )
    .unwrap();
    std::fs::create_dir_all(h.codex()).unwrap();
    std::fs::write(
        h.codex().join("config.toml"),
        "[features]\nmemories = true\n",
    )
    .unwrap();
    h
}

fn percentile(v: &[u128], p: f64) -> u128 {
    if v.is_empty() {
        return 0;
    }
    let mut s = v.to_vec();
    s.sort();
    s[((s.len() - 1) as f64 * p).round() as usize]
}

/// A Claude Code memory dir for each project (the import loop mirrors it into Codex).
fn claude_memory(h: &TestHome, proj: &Path) -> PathBuf {
    let dir = h.claude_project(proj).join("memory");
    std::fs::create_dir_all(dir.join("notes")).unwrap();
    std::fs::write(
        dir.join("MEMORY.md"),
        "- [Build](build.md) — how to build\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("build.md"),
        "---\nname: Build\ndescription: how to build\ntype: project\n---\n\nRun make.\n",
    )
    .unwrap();
    std::fs::write(dir.join("notes/deep.md"), "a nested note\n").unwrap();
    dir
}

fn memo_markers(text: &str) -> Vec<String> {
    text.lines()
        .filter(|l| l.starts_with("<!-- cairn:memo "))
        .map(str::to_owned)
        .collect()
}

/// Every view file parses, every index line points to a file, one file per live memory.
fn check_views(h: &TestHome, live: usize) {
    let root = h.data().join("memory");
    let mut files = 0;
    for scope in std::fs::read_dir(&root).unwrap().flatten() {
        if !scope.file_type().unwrap().is_dir() {
            continue;
        }
        let index = std::fs::read_to_string(scope.path().join("MEMORY.md")).unwrap();
        for e in std::fs::read_dir(scope.path()).unwrap().flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            assert!(!name.contains(".tmp"), "a temp file is left: {name}");
            if name == "MEMORY.md" || !name.ends_with(".md") {
                continue;
            }
            files += 1;
            let text = std::fs::read_to_string(e.path()).unwrap();
            let v = cairn_memory::views::parse_view(&text);
            for k in ["name", "description", "type"] {
                assert!(v.fields.contains_key(k), "{name}: no {k}:\n{text}");
            }
            assert!(
                index.contains(&format!("({name})")),
                "{name} not in the index"
            );
        }
    }
    assert_eq!(files, live, "view files vs live memories");
}

/// The Codex copy of each project: a valid `scope.json` and the Claude files byte for byte.
fn check_codex_copy(h: &TestHome, projects: &[PathBuf]) {
    let res = h
        .codex()
        .join("memories_v2/extensions/external_agent_import/resources");
    for proj in projects {
        let key = cairn_transcript::claude_project_key(proj.to_str().unwrap());
        let copy = res.join(&key);
        let scope = std::fs::read(copy.join("scope.json")).unwrap_or_else(|e| {
            panic!(
                "{key}: {e}; the resources hold {:?}",
                std::fs::read_dir(&res)
                    .map(|d| d.flatten().map(|e| e.file_name()).collect::<Vec<_>>())
            )
        });
        let scope: Value = serde_json::from_slice(&scope).unwrap();
        assert!(scope.is_object(), "{scope}");
        let src = h.claude_project(proj).join("memory");
        for rel in ["MEMORY.md", "build.md", "notes/deep.md"] {
            assert_eq!(
                std::fs::read(copy.join(rel)).unwrap(),
                std::fs::read(src.join(rel)).unwrap(),
                "{key}/{rel}"
            );
        }
    }
}

#[test]
fn hooks_worker_imports_and_recall_at_once_lose_and_duplicate_nothing() {
    let procs = env_usize("CAIRN_STRESS_PROCS", 16);
    let rounds = env_usize("CAIRN_STRESS_ROUNDS", 50);
    let h = Arc::new(memo_home(5));
    let projects: Vec<PathBuf> = ["alpha", "beta"].iter().map(|p| h.project(p)).collect();
    for p in &projects {
        claude_memory(&h, p);
    }
    let sessions: Vec<Session> = (0..procs).map(|i| Session::new(&h, i, &projects)).collect();

    let loops: Vec<Vec<String>> = LOOPS
        .iter()
        .filter(|l| has_command(&h, l[0]))
        .map(|l| {
            l.iter()
                .map(|a| a.replace("@PROJECT@", projects[0].to_str().unwrap()))
                .collect()
        })
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let loop_runs = Arc::new(Mutex::new(BTreeMap::<String, (usize, Vec<String>)>::new()));
    let mut loop_threads = Vec::new();
    for args in loops.clone() {
        let (h, stop, runs) = (h.clone(), stop.clone(), loop_runs.clone());
        loop_threads.push(std::thread::spawn(move || {
            let a: Vec<&str> = args.iter().map(String::as_str).collect();
            while !stop.load(Ordering::Relaxed) {
                let out = cairn_cmd(&h, &a).output().unwrap();
                let mut m = runs.lock().unwrap();
                let e = m.entry(args[0].clone()).or_default();
                e.0 += 1;
                let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
                if !out.status.success() || stderr.contains("panicked") {
                    e.1.push(format!("{:?}: {stderr}", out.status));
                }
                drop(m);
                std::thread::sleep(Duration::from_millis(20));
            }
        }));
    }

    let stats = Arc::new(Mutex::new(HookStats::default()));
    let sessions = Arc::new(sessions);
    let started = Instant::now();
    let workers: Vec<_> = (0..procs)
        .map(|i| {
            let (h, stats, sessions) = (h.clone(), stats.clone(), sessions.clone());
            std::thread::spawn(move || {
                let s = &sessions[i];
                for r in 0..rounds {
                    s.append_turn(i, r);
                    for (event, payload) in s.hooks(i, r) {
                        let t = Instant::now();
                        let mut child = cairn_cmd(&h, &["hook", "--agent", s.agent])
                            .stdin(Stdio::piped())
                            .spawn()
                            .unwrap();
                        {
                            use std::io::Write;
                            let mut stdin = child.stdin.take().unwrap();
                            let _ = stdin.write_all(payload.to_string().as_bytes());
                        }
                        let out = child.wait_with_output().unwrap();
                        let ms = t.elapsed().as_millis();
                        let mut st = stats.lock().unwrap();
                        st.runs += 1;
                        st.millis.entry(event).or_default().push(ms);
                        if !out.status.success() {
                            st.failures.push(format!(
                                "{} {event}: {:?} {}",
                                s.agent,
                                out.status,
                                String::from_utf8_lossy(&out.stderr)
                            ));
                        }
                        if !out.stdout.is_empty() {
                            let v: Result<Value, _> = serde_json::from_slice(&out.stdout);
                            if v.is_err() {
                                st.failures
                                    .push(format!("{} {event}: stdout is not JSON", s.agent));
                            }
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
    let hooks_secs = started.elapsed().as_secs_f64();
    // Let the loops run on a little while the queue drains, then stop them.
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    for t in loop_threads {
        t.join().unwrap();
    }
    let st = h.wait_for_worker();
    h.json(&["worker"]);
    h.json(&["sync"]);
    h.json(&["import", "--from", "claude", "--to", "codex", "--all"]);

    // No hook failed, and latency stayed sane.
    let stats = stats.lock().unwrap();
    assert!(
        stats.failures.is_empty(),
        "hook failures: {:#?}",
        stats.failures
    );
    let mut lat = Vec::new();
    for (event, v) in &stats.millis {
        lat.push(format!(
            "{event}: n={} p50={}ms p99={}ms max={}ms",
            v.len(),
            percentile(v, 0.5),
            percentile(v, 0.99),
            percentile(v, 1.0)
        ));
        // A debug build on a loaded 2-core machine: a generous bound, far above the budget,
        // that only a hang or a lock wait crosses.
        assert!(
            percentile(v, 1.0) < 20_000,
            "{event} took {}ms",
            percentile(v, 1.0)
        );
    }
    let loops_report = loop_runs.lock().unwrap();
    for (cmd, (_, errs)) in loops_report.iter() {
        for e in errs {
            assert!(
                !e.contains("panicked") && (cmd != "worker" && cmd != "recall"),
                "{cmd}: {e}"
            );
        }
    }

    // Every turn stored once; one job done and one digest per turn; one memo block per turn.
    let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
    let integrity: String = db
        .query_row("PRAGMA integrity_check", [], |r| r.get(0))
        .unwrap();
    assert_eq!(integrity, "ok");
    let total = procs * rounds;
    let turns: i64 = db
        .query_row("SELECT count(*) FROM turns", [], |r| r.get(0))
        .unwrap();
    let distinct: i64 = db
        .query_row(
            "SELECT count(*) FROM (SELECT DISTINCT agent, session_key, turn_key FROM turns)",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!((turns as usize, distinct as usize), (total, total));
    for i in 0..procs {
        for r in 0..rounds {
            let p = Session::prompt(i, r);
            let n: i64 = db
                .query_row("SELECT count(*) FROM turns WHERE prompt = ?1", [&p], |r| {
                    r.get(0)
                })
                .unwrap();
            assert_eq!(n, 1, "{p}");
        }
    }
    assert_eq!(st["jobs"]["failed"], 0, "{st}");
    let jobs = h.json(&["status"]);
    assert_eq!(
        jobs["jobs"]["done"].as_u64().unwrap() as usize,
        total,
        "{jobs}"
    );
    let digests: i64 = db
        .query_row("SELECT count(*) FROM digests", [], |r| r.get(0))
        .unwrap();
    assert_eq!(digests as usize, total);
    let mut blocks = 0;
    for p in &projects {
        let memo = p.join("memo.md");
        let text = std::fs::read_to_string(&memo).unwrap();
        let markers = memo_markers(&text);
        let unique: BTreeSet<_> = markers.iter().collect();
        assert_eq!(
            unique.len(),
            markers.len(),
            "duplicated memo blocks in {}",
            memo.display()
        );
        blocks += markers.len();
        let check = h.cairn(&["memo", "check", memo.to_str().unwrap()]);
        assert!(
            check.status.success(),
            "{}",
            String::from_utf8_lossy(&check.stdout)
        );
    }
    assert_eq!(blocks, total, "memo blocks");

    // Every remembered fact is one live memory; views and the Codex copy are valid.
    let list = h.json(&["list", "--scope", "all"]);
    let live = list["memories"].as_array().unwrap();
    for fact in FACTS.iter().take(procs) {
        let n = live
            .iter()
            .filter(|m| {
                m["body"]
                    .as_str()
                    .unwrap_or("")
                    .to_lowercase()
                    .contains(fact)
            })
            .count();
        assert_eq!(n, 1, "{fact}: {n} memories in {list}");
    }
    check_views(&h, live.len());
    check_codex_copy(&h, &projects);

    eprintln!(
        "stress: {procs} sessions x {rounds} rounds = {total} turns, {} hook runs in {hooks_secs:.1}s; {}; loops: {}",
        stats.runs,
        lat.join("; "),
        loops_report
            .iter()
            .map(|(k, (n, e))| format!("{k} x{n} ({} non-zero)", e.len()))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

/// Whether `cairn --help` lists `cmd`.
fn has_command(h: &TestHome, cmd: &str) -> bool {
    String::from_utf8(h.cairn(&["--help"]).stdout)
        .unwrap()
        .lines()
        .any(|l| l.trim_start().starts_with(&format!("{cmd} ")))
}

/// A small seeded PRNG (xorshift), so a failing seed can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0 % n.max(1)
    }
}

/// Runs `cairn ARGS` and kills it with SIGKILL after `after`; true when it was killed
/// (false: it had already finished).
fn run_and_kill(h: &TestHome, args: &[&str], after: Duration) -> bool {
    let mut child = cairn_cmd(h, args).spawn().unwrap();
    let deadline = Instant::now() + after;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return false;
        }
        std::thread::sleep(Duration::from_micros(500));
    }
    let killed = child.kill().is_ok();
    let _ = child.wait();
    killed
}

#[test]
fn killed_workers_and_imports_lose_nothing_and_leave_nothing_half_written() {
    let seeds = env_usize("CAIRN_CRASH_SEEDS", 3);
    let turns = env_usize("CAIRN_CRASH_TURNS", 12);
    let mut kills = 0;
    let mut consolidate_kills = 0;
    for seed in 1..=seeds as u64 {
        let mut rng = Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
        let h = memo_home(100);
        let proj = h.project("crash");
        let mem = claude_memory(&h, &proj);
        let s = Session::new(&h, 0, std::slice::from_ref(&proj));
        let c = Session::new(&h, 1, std::slice::from_ref(&proj));

        // Queue the jobs while holding the worker lock, so the workers the hooks start find it
        // busy and leave the queue to the workers this test kills.
        let lock = std::fs::File::create(h.data().join("worker.lock")).unwrap();
        lock.lock().unwrap();
        for r in 0..turns {
            for (i, sess) in [(0, &s), (1, &c)] {
                sess.append_turn(i, r);
                let (_, stop) = sess.hooks(i, r).remove(0);
                let out = h.cairn_input(&["hook", "--agent", sess.agent], &stop.to_string(), &[]);
                assert!(out.status.success());
            }
        }
        drop(lock);
        let st = h.json(&["status"]);
        assert_eq!(
            st["jobs"]["pending"].as_u64().unwrap() as usize,
            2 * turns,
            "{st}"
        );

        // Kill workers at random points until one finishes on its own.
        let mut rounds = 0;
        loop {
            rounds += 1;
            assert!(rounds < 200, "the queue never drained");
            let after = Duration::from_millis(5 + rng.below(120));
            if !run_and_kill(&h, &["worker", "--json"], after) {
                let st = h.json(&["status"]);
                if st["jobs"]["pending"] == 0 && st["jobs"]["running"] == 0 {
                    break;
                }
                continue;
            }
            kills += 1;
            // The dead worker's lock is free at once: a status sees no worker running.
            let st = h.json(&["status"]);
            assert_eq!(
                st["worker_running"], false,
                "seed {seed}: stale worker lock: {st}"
            );
            // The memo journal is always whole: every visible block is complete.
            if let Ok(text) = std::fs::read_to_string(proj.join("memo.md")) {
                let check = h.cairn(&["memo", "check", proj.join("memo.md").to_str().unwrap()]);
                assert!(
                    check.status.success(),
                    "seed {seed}: half-written memo: {}\n{text}",
                    String::from_utf8_lossy(&check.stdout)
                );
            }
        }
        let st = h.json(&["status"]);
        assert_eq!(
            st["jobs"]["done"].as_u64().unwrap() as usize,
            2 * turns,
            "seed {seed}: {st}"
        );
        assert_eq!(st["jobs"]["failed"], 0, "seed {seed}: {st}");
        let text = std::fs::read_to_string(proj.join("memo.md")).unwrap();
        let markers = memo_markers(&text);
        let unique: BTreeSet<_> = markers.iter().collect();
        assert_eq!(markers.len(), 2 * turns, "seed {seed}: memo blocks");
        assert_eq!(
            unique.len(),
            markers.len(),
            "seed {seed}: duplicated memo block"
        );

        // Kill imports at random points while the source changes: the visible copy is always
        // a whole old or new copy, never a mix or a half-written file.
        let key = cairn_transcript::claude_project_key(proj.to_str().unwrap());
        let copy = h
            .codex()
            .join("memories_v2/extensions/external_agent_import/resources")
            .join(&key);
        let mut versions: Vec<Vec<u8>> = Vec::new();
        for v in 0..6 {
            let body = format!(
                "---\nname: Build\ndescription: how to build\ntype: project\n---\n\nRun make v{v}.\n{}\n",
                "padding line\n".repeat(200 * (v + 1))
            );
            versions.push(body.clone().into_bytes());
            std::fs::write(mem.join("build.md"), &body).unwrap();
            let after = Duration::from_millis(2 + rng.below(60));
            if run_and_kill(
                &h,
                &["import", "--from", "claude", "--to", "codex", "--all"],
                after,
            ) {
                kills += 1;
            }
            if copy.exists() {
                let b = std::fs::read(copy.join("build.md")).unwrap();
                assert!(
                    versions.contains(&b) || b == std::fs::read(mem.join("build.md")).unwrap(),
                    "seed {seed}: a half-written build.md is visible"
                );
                let scope = std::fs::read(copy.join("scope.json")).unwrap();
                assert!(
                    serde_json::from_slice::<Value>(&scope).is_ok(),
                    "seed {seed}"
                );
            }
            // The killed import's locks are free: the next one is not "busy".
            let out = h.cairn(&[
                "import", "--from", "claude", "--to", "codex", "--all", "--json",
            ]);
            assert!(
                out.status.success(),
                "seed {seed}: the import after a kill failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            assert_eq!(
                std::fs::read(copy.join("build.md")).unwrap(),
                std::fs::read(mem.join("build.md")).unwrap()
            );
        }
        // Consolidation (when the binary has it) killed at random points: the next run is not
        // "busy", and the views and the Codex workspace hold no half-written file.
        if has_command(&h, "consolidate") {
            h.json(&["sync"]);
            for _ in 0..4 {
                let after = Duration::from_millis(2 + rng.below(80));
                if run_and_kill(&h, &["consolidate", "--json"], after) {
                    kills += 1;
                    consolidate_kills += 1;
                }
                let r = h.json(&["consolidate"]);
                assert_eq!(r["busy"], false, "seed {seed}: stale consolidate lock: {r}");
            }
            let live = h.json(&["list", "--scope", "all"])["memories"]
                .as_array()
                .unwrap()
                .len();
            check_views(&h, live);
            for dir in [h.data(), h.codex().join("memories_v2")] {
                for (p, _) in all_bytes_under(&dir) {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    assert!(
                        !name.contains(".tmp") || p.to_string_lossy().contains("staging"),
                        "seed {seed}: temp file left: {}",
                        p.display()
                    );
                }
            }
        }
        // No staging left behind after a completed import.
        let staging: Vec<_> = std::fs::read_dir(h.codex())
            .unwrap()
            .flatten()
            .filter(|e| e.file_name().to_string_lossy().contains("staging"))
            .collect();
        assert!(staging.is_empty(), "seed {seed}: staging left: {staging:?}");
        let db = rusqlite::Connection::open(h.data().join("cairn.db")).unwrap();
        let integrity: String = db
            .query_row("PRAGMA integrity_check", [], |r| r.get(0))
            .unwrap();
        assert_eq!(integrity, "ok", "seed {seed}");
    }
    eprintln!(
        "crash: {seeds} seeds, {kills} kills (SIGKILL; {consolidate_kills} of consolidate), every restart completed the work"
    );
}
