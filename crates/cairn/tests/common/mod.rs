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

    /// Runs `cairn` with this home's roots.
    pub fn cairn(&self, args: &[&str]) -> Output {
        Command::new(env!("CARGO_BIN_EXE_cairn"))
            .args(["--claude-dir", self.claude().to_str().unwrap()])
            .args(["--codex-home", self.codex().to_str().unwrap()])
            .args(["--data-dir", self.data().to_str().unwrap()])
            .args(args)
            .env("HOME", self.root())
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .env_remove("CAIRN_HOME")
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
