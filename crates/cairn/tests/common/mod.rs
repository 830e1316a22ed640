//! Test homes laid out like the agents' own, and the real `cairn` binary run against them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

pub struct TestHome {
    pub dir: tempfile::TempDir,
}

impl TestHome {
    /// An empty home.
    pub fn empty() -> TestHome {
        let dir = tempfile::Builder::new()
            .prefix("cairn-test-")
            .tempdir()
            .expect("tempdir");
        TestHome { dir }
    }

    /// A copy of examples/sample-home, placeholders resolved.
    pub fn sample() -> TestHome {
        let h = TestHome::empty();
        let out = h.cairn(&["sample-home", h.root().to_str().expect("utf-8 temp path")]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        h
    }

    pub fn root(&self) -> PathBuf {
        self.dir.path().canonicalize().expect("canonical temp dir")
    }

    pub fn claude(&self) -> PathBuf {
        self.root().join(".claude")
    }

    pub fn codex(&self) -> PathBuf {
        self.root().join(".codex")
    }

    pub fn data(&self) -> PathBuf {
        self.root().join(".cairn")
    }

    /// The project key directory Claude Code would use for `cwd`.
    pub fn claude_project(&self, cwd: &Path) -> PathBuf {
        self.claude()
            .join("projects")
            .join(cairn_transcript::claude_project_key(&cwd.to_string_lossy()))
    }

    /// Points a `cairn` command at this home: its roots as flags, `HOME`, and none of the
    /// variables that would point it elsewhere. Arguments added after it follow the flags.
    pub fn roots<'c>(&self, cmd: &'c mut Command) -> &'c mut Command {
        cmd.args(["--claude-dir", self.claude().to_str().unwrap()])
            .args(["--codex-home", self.codex().to_str().unwrap()])
            .args(["--data-dir", self.data().to_str().unwrap()])
            .env("HOME", self.root())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("CAIRN_HOME")
    }

    /// `cairn` with this home as `HOME` and none of the location variables, but no location
    /// flags either: it finds its directories as a user's shell would start it.
    pub fn bare_command(&self) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        cmd.env("HOME", self.root())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("CAIRN_HOME");
        cmd
    }

    /// Runs `cairn` with this home's roots.
    pub fn cairn(&self, args: &[&str]) -> Output {
        self.roots(&mut Command::new(env!("CARGO_BIN_EXE_cairn")))
            .args(args)
            .output()
            .expect("run cairn")
    }

    /// Runs `cairn ARGS --json`, asserts success, parses stdout.
    pub fn json(&self, args: &[&str]) -> Value {
        let mut a: Vec<&str> = args.to_vec();
        a.push("--json");
        let out = self.cairn(&a);
        assert!(
            out.status.success(),
            "cairn {args:?} failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("bad JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
    }
}

/// Runs `cairn doctor --json`, asserts it exits 1 (something needs fixing), and gives the
/// check `id` (panics with the report when there is none).
pub fn failed_doctor_check(h: &TestHome, id: &str) -> Value {
    let out = h.cairn(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1), "doctor: {out:?}");
    let d: Value = serde_json::from_slice(&out.stdout).expect("doctor JSON");
    d["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["id"] == id))
        .cloned()
        .unwrap_or_else(|| panic!("no {id} check: {d}"))
}

/// Sets a file's mtime (seconds since the epoch) through `touch -d`.
pub fn set_mtime(path: &Path, secs: i64) {
    let st = Command::new("touch")
        .arg("-d")
        .arg(format!("@{secs}"))
        .arg(path)
        .status()
        .expect("touch");
    assert!(st.success());
}

/// Appends bytes to a file.
pub fn append(path: &Path, bytes: &[u8]) {
    use std::io::Write;
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .expect("open for append");
    f.write_all(bytes).expect("append");
}

/// Every file under `dir`, recursively, as bytes (for leak checks).
pub fn all_bytes_under(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                Ok(t) if t.is_file() => {
                    if let Ok(b) = std::fs::read(&p) {
                        out.push((p, b));
                    }
                }
                _ => {}
            }
        }
    }
    out
}

/// A Claude Code chain record line (user prompt) for hand-built transcripts.
pub fn claude_prompt(uuid: &str, cwd: &str, text: &str, ts: &str) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
        "sessionId": "11111111-2222-4333-8444-555555555555", "version": "2.1.251",
        "gitBranch": "main", "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": uuid, "timestamp": ts
    })
    .to_string()
        + "\n"
}

/// A Claude Code assistant text record line.
pub fn claude_reply(uuid: &str, cwd: &str, text: &str, ts: &str) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
        "sessionId": "11111111-2222-4333-8444-555555555555", "version": "2.1.251",
        "type": "assistant",
        "message": {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-6",
                    "content": [{"type": "text", "text": text}], "stop_reason": null},
        "requestId": "req_1", "uuid": uuid, "timestamp": ts
    })
    .to_string()
        + "\n"
}

/// Codex rollout lines for one complete turn.
pub fn codex_turn(turn_id: &str, prompt: &str, command: &str, exit: i64) -> String {
    let ts = "2026-11-20T10:00:00.000Z";
    let lines = [
        serde_json::json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "task_started", "turn_id": turn_id}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": serde_json::json!({"cmd": command}).to_string(), "call_id": format!("call_{turn_id}")}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call_output", "call_id": format!("call_{turn_id}"), "output": format!("Process exited with code {exit}\nOutput:\nok\n")}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done."}]}}),
        serde_json::json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "task_complete", "turn_id": turn_id}}),
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

pub fn codex_meta(id: &str, cwd: &str) -> String {
    serde_json::json!({"timestamp": "2026-11-20T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": id, "timestamp": "2026-11-20T10:00:00.000Z", "cwd": cwd, "originator": "codex_cli_rs",
                    "cli_version": "0.165.0", "source": "cli", "model_provider": "openai"}})
    .to_string()
        + "\n"
}

/// One entry of [`tree_state`]: a file's bytes, a symlink's target, or a directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    File(Vec<u8>, std::time::SystemTime),
    Link(PathBuf),
    Dir,
}

/// Everything under `dir` (files with bytes and mtime, symlinks with their target, dirs),
/// without following links: equal states mean nothing was written there.
pub fn tree_state(dir: &Path) -> std::collections::BTreeMap<PathBuf, Entry> {
    let mut out = std::collections::BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let p = e.path();
            let Ok(m) = std::fs::symlink_metadata(&p) else {
                continue;
            };
            let entry = if m.file_type().is_symlink() {
                Entry::Link(std::fs::read_link(&p).unwrap_or_default())
            } else if m.is_dir() {
                stack.push(p.clone());
                Entry::Dir
            } else {
                let mtime = m.modified().unwrap_or(std::time::UNIX_EPOCH);
                Entry::File(std::fs::read(&p).unwrap_or_default(), mtime)
            };
            out.insert(p, entry);
        }
    }
    out
}

impl TestHome {
    /// Runs `cairn` with this home's roots, `stdin` as input and extra environment variables
    /// (`CAIRN_INSIDE` and `CAIRN_FAULT` are cleared unless given).
    pub fn cairn_input(&self, args: &[&str], stdin: &str, env: &[(&str, &str)]) -> Output {
        use std::io::Write;
        use std::process::Stdio;
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_cairn"));
        self.roots(&mut cmd)
            .args(args)
            .env_remove("CAIRN_INSIDE")
            .env_remove("CAIRN_FAULT")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = cmd.spawn().expect("run cairn");
        // A hook may exit before reading all of its input (e.g. an event it ignores): a
        // broken pipe here is not a test failure; what the process printed and returned is.
        if let Err(e) = child
            .stdin
            .take()
            .expect("stdin")
            .write_all(stdin.as_bytes())
        {
            assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "write stdin: {e}");
        }
        child.wait_with_output().expect("wait for cairn")
    }

    /// Waits (up to 60 s) until no job is pending or running and no worker holds the lock;
    /// returns the final `cairn status --json`.
    pub fn wait_for_worker(&self) -> Value {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            let st = self.json(&["status"]);
            let idle = st["jobs"]["pending"] == 0
                && st["jobs"]["running"] == 0
                && st["worker_running"] == false;
            if idle || std::time::Instant::now() > deadline {
                return st;
            }
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    }
}

/// A Claude Code assistant record with one `tool_use` block.
pub fn claude_tool_use(uuid: &str, cwd: &str, id: &str, tool: &str, input: Value) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
        "sessionId": "11111111-2222-4333-8444-555555555555", "version": "2.1.251",
        "type": "assistant",
        "message": {"id": format!("msg_{uuid}"), "type": "message", "role": "assistant",
                    "model": "claude-sonnet-4-6",
                    "content": [{"type": "tool_use", "id": id, "name": tool, "input": input}],
                    "stop_reason": "tool_use"},
        "requestId": "req_1", "uuid": uuid, "timestamp": "2026-11-25T14:02:20.000Z"
    })
    .to_string()
        + "\n"
}

/// A Claude Code user record carrying a `tool_result`.
pub fn claude_tool_result(uuid: &str, cwd: &str, id: &str, output: &str, is_error: bool) -> String {
    serde_json::json!({
        "parentUuid": null, "isSidechain": false, "userType": "external", "cwd": cwd,
        "sessionId": "11111111-2222-4333-8444-555555555555", "version": "2.1.251",
        "type": "user",
        "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": id,
                    "content": output, "is_error": is_error}]},
        "uuid": uuid, "timestamp": "2026-11-25T14:02:21.000Z"
    })
    .to_string()
        + "\n"
}

impl TestHome {
    /// Starts `cairn ARGS` with this home's roots and piped stdin/stdout/stderr (for servers),
    /// in the working directory `cwd`.
    pub fn cairn_spawn(&self, args: &[&str], cwd: &Path) -> std::process::Child {
        use std::process::Stdio;
        self.roots(&mut Command::new(env!("CARGO_BIN_EXE_cairn")))
            .args(args)
            .current_dir(cwd)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start cairn")
    }
}

// ---- Helpers of the hardening suite (secrets, injection, broken input, paths, stress) ----

/// A hook payload fixture (`tests/fixtures/hooks/NAME`) with its `@KEY@` placeholders filled
/// (values JSON-escaped).
pub fn hook_payload(name: &str, vars: &[(&str, &str)]) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/hooks")
        .join(name);
    let mut s = std::fs::read_to_string(&path).expect("hook fixture");
    for (k, v) in vars {
        let esc = serde_json::to_string(v).expect("json string");
        s = s.replace(&format!("@{k}@"), &esc[1..esc.len() - 1]);
    }
    s
}

/// A Codex rollout line of type `response_item` / `event_msg` with this payload.
pub fn codex_line(kind: &str, payload: Value) -> String {
    serde_json::json!({"timestamp": "2026-11-20T10:00:00.000Z", "type": kind, "payload": payload})
        .to_string()
        + "\n"
}

impl TestHome {
    /// A project checkout (with `.git`) at `<home>/work/NAME`.
    pub fn project(&self, name: &str) -> PathBuf {
        let p = self.root().join("work").join(name);
        std::fs::create_dir_all(p.join(".git")).expect("project dir");
        p
    }

    /// Where Codex keeps a rollout of session `id` (`sessions/2026/11/20/rollout-…-ID.jsonl`).
    pub fn codex_rollout_path(&self, id: &str) -> PathBuf {
        let dir = self.codex().join("sessions/2026/11/20");
        std::fs::create_dir_all(&dir).expect("sessions dir");
        dir.join(format!("rollout-2026-11-20T10-00-00-{id}.jsonl"))
    }
}

/// A JSON-RPC client of a `cairn mcp` server started with this home's roots (the real binary
/// over stdio, as Claude Code and Codex run it).
pub struct McpClient {
    pub child: std::process::Child,
    pub out: std::io::BufReader<std::process::ChildStdout>,
    pub next: u64,
}

impl McpClient {
    /// Starts `cairn mcp` in `cwd`.
    pub fn start(h: &TestHome, cwd: &Path) -> McpClient {
        let mut child = h.cairn_spawn(&["mcp"], cwd);
        let out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
        McpClient {
            child,
            out,
            next: 0,
        }
    }

    /// Sends one message (a request or a notification).
    pub fn send(&mut self, v: Value) {
        use std::io::Write;
        let stdin = self.child.stdin.as_mut().expect("stdin");
        writeln!(stdin, "{v}").expect("write to the server");
        stdin.flush().expect("flush");
    }

    /// Sends a request and returns its response (other messages are skipped).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        use std::io::BufRead;
        self.next += 1;
        let id = self.next;
        self.send(
            serde_json::json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
        );
        loop {
            let mut line = String::new();
            let n = self.out.read_line(&mut line).expect("read from the server");
            assert!(n > 0, "server closed stdout while waiting for {method}");
            let v: Value = serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("stdout carries only JSON-RPC ({e}): {line:?}"));
            if v["id"] == id {
                return v;
            }
        }
    }

    /// The MCP handshake: `initialize`, then `notifications/initialized`; returns the
    /// `initialize` response.
    pub fn initialize(&mut self) -> Value {
        let init = self.request(
            "initialize",
            serde_json::json!({"protocolVersion": "2025-06-18", "capabilities": {},
                               "clientInfo": {"name": "cairn-test", "version": "0"}}),
        );
        self.send(serde_json::json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        init
    }

    /// Calls a tool: (whether it reported an error, its text parsed as JSON when it is).
    pub fn call(&mut self, tool: &str, args: Value) -> (bool, Value) {
        let r = self.request(
            "tools/call",
            serde_json::json!({"name": tool, "arguments": args}),
        );
        let res = &r["result"];
        let text = res["content"][0]["text"]
            .as_str()
            .unwrap_or_else(|| panic!("{r}"));
        let is_error = res["isError"].as_bool().unwrap_or(false);
        let v = serde_json::from_str(text).unwrap_or_else(|_| Value::String(text.into()));
        (is_error, v)
    }

    /// Closes the server's stdin and waits for it to exit.
    pub fn finish(mut self) -> std::process::ExitStatus {
        drop(self.child.stdin.take());
        self.child.wait().expect("wait for the server")
    }
}
