//! Each provider against a fake server on loopback that checks the exact request shape and
//! answers with a recorded-shape reply; plus invalid JSON, 429 then success, timeouts, and
//! the command provider with a script.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc;
use std::time::Duration;

use cairn_llm::{JsonRequest, LlmClient, LlmConfig, LlmError, ProviderKind};
use serde_json::{Value, json};

/// A request the fake server received.
#[derive(Debug)]
struct Seen {
    method: String,
    path: String,
    headers: Vec<(String, String)>,
    body: Value,
}

impl Seen {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Serves one scripted reply per connection: (status, body, delay before answering).
fn fake_server(replies: Vec<(u16, String, Duration)>) -> (String, mpsc::Receiver<Seen>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for (status, body, delay) in replies {
            let Ok((mut stream, _)) = listener.accept() else {
                return;
            };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            let mut parts = line.split_whitespace();
            let method = parts.next().unwrap_or("").to_owned();
            let path = parts.next().unwrap_or("").to_owned();
            let mut headers = Vec::new();
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                let h = h.trim_end();
                if h.is_empty() {
                    break;
                }
                if let Some((k, v)) = h.split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        len = v.trim().parse().unwrap();
                    }
                    headers.push((k.trim().to_owned(), v.trim().to_owned()));
                }
            }
            let mut buf = vec![0; len];
            reader.read_exact(&mut buf).unwrap();
            let request_body = serde_json::from_slice(&buf).unwrap_or(Value::Null);
            let _ = tx.send(Seen {
                method,
                path,
                headers,
                body: request_body,
            });
            std::thread::sleep(delay);
            let reason = if status == 200 { "OK" } else { "Error" };
            // A rate limit asks for a wait, as real providers do.
            let retry_after = if status == 429 {
                "retry-after: 1\r\n"
            } else {
                ""
            };
            let resp = format!(
                "HTTP/1.1 {status} {reason}\r\ncontent-type: application/json\r\ncontent-length: {}\r\n{retry_after}connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = stream.write_all(resp.as_bytes());
        }
    });
    (addr, rx)
}

fn schema() -> Value {
    json!({"type":"object","additionalProperties":false,"required":["summary","memories"],
        "properties":{"summary":{"type":"string"},
                      "memories":{"type":"array","items":{"type":"string"}}}})
}

fn request() -> JsonRequest {
    JsonRequest {
        system: "You extract memories.".into(),
        prompt: "The user said: from now on use pnpm.".into(),
        schema_name: "phase1".into(),
        schema: schema(),
        max_output_tokens: 512,
    }
}

fn config(provider: ProviderKind, base: &str) -> LlmConfig {
    LlmConfig {
        provider,
        base_url: Some(base.to_owned()),
        model: Some("test-model".into()),
        api_key_env: Some("CAIRN_TEST_NO_SUCH_KEY".into()),
        timeout_secs: 2,
        backoff_ms: 10,
        ..LlmConfig::default()
    }
}

const ANSWER: &str = r#"{"summary":"switched to pnpm","memories":["use pnpm, not npm"]}"#;

fn openai_reply(text: &str) -> String {
    json!({"id":"resp_1","object":"response","status":"completed","model":"test-model",
        "output":[{"type":"reasoning","id":"rs_1","summary":[]},
                  {"type":"message","id":"msg_1","role":"assistant","status":"completed",
                   "content":[{"type":"output_text","text":text,"annotations":[]}]}],
        "usage":{"input_tokens":120,"output_tokens":30,"total_tokens":150}})
    .to_string()
}

#[test]
fn openai_responses_api_with_json_schema() {
    let (base, seen) = fake_server(vec![(200, openai_reply(ANSWER), Duration::ZERO)]);
    let client = LlmClient::new(config(ProviderKind::Openai, &base)).unwrap();
    let a = client.complete_json(&request()).unwrap();
    assert_eq!(a.value["memories"][0], "use pnpm, not npm");
    assert_eq!((a.usage.input_tokens, a.usage.output_tokens), (120, 30));
    let r = seen.recv().unwrap();
    assert_eq!((r.method.as_str(), r.path.as_str()), ("POST", "/responses"));
    assert_eq!(r.body["model"], "test-model");
    assert_eq!(r.body["text"]["format"]["type"], "json_schema");
    assert_eq!(r.body["text"]["format"]["strict"], true);
    assert_eq!(r.body["text"]["format"]["name"], "phase1");
    assert_eq!(r.body["text"]["format"]["schema"], schema());
    assert_eq!(r.body["input"][0]["role"], "system");
    assert_eq!(
        r.body["input"][1]["content"],
        "The user said: from now on use pnpm."
    );
    assert_eq!(r.body["max_output_tokens"], 512);
}

#[test]
fn anthropic_messages_api_with_a_forced_tool() {
    let reply = json!({"id":"msg_1","type":"message","role":"assistant","model":"test-model",
        "content":[{"type":"tool_use","id":"toolu_1","name":"phase1",
                    "input":{"summary":"switched to pnpm","memories":["use pnpm, not npm"]}}],
        "stop_reason":"tool_use","usage":{"input_tokens":200,"output_tokens":40}})
    .to_string();
    let (base, seen) = fake_server(vec![(200, reply, Duration::ZERO)]);
    let client = LlmClient::new(config(ProviderKind::Anthropic, &base)).unwrap();
    let a = client.complete_json(&request()).unwrap();
    assert_eq!(a.value["summary"], "switched to pnpm");
    assert_eq!(a.usage.total(), 240);
    let r = seen.recv().unwrap();
    assert_eq!(r.path, "/v1/messages");
    assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(r.body["system"], "You extract memories.");
    assert_eq!(r.body["messages"][0]["role"], "user");
    assert_eq!(r.body["tools"][0]["input_schema"], schema());
    assert_eq!(
        r.body["tool_choice"],
        json!({"type":"tool","name":"phase1"})
    );
    assert_eq!(r.body["max_tokens"], 512);
}

#[test]
fn ollama_chat_with_format_schema() {
    let reply = json!({"model":"test-model","created_at":"2026-11-30T00:00:00Z",
        "message":{"role":"assistant","content":ANSWER},"done":true,
        "prompt_eval_count":90,"eval_count":20})
    .to_string();
    let (base, seen) = fake_server(vec![(200, reply, Duration::ZERO)]);
    let client = LlmClient::new(config(ProviderKind::Ollama, &base)).unwrap();
    let a = client.complete_json(&request()).unwrap();
    assert_eq!(a.value["memories"][0], "use pnpm, not npm");
    assert_eq!(a.usage.total(), 110);
    let r = seen.recv().unwrap();
    assert_eq!(r.path, "/api/chat");
    assert_eq!(r.body["stream"], false);
    assert_eq!(r.body["format"], schema());
    assert_eq!(
        r.body["messages"][1]["content"],
        "The user said: from now on use pnpm."
    );
}

#[test]
fn invalid_json_is_retried_once_with_the_error() {
    let (base, seen) = fake_server(vec![
        (
            200,
            openai_reply("Sure! Here it is: {\"summary\": 3}"),
            Duration::ZERO,
        ),
        (200, openai_reply(ANSWER), Duration::ZERO),
    ]);
    let client = LlmClient::new(config(ProviderKind::Openai, &base)).unwrap();
    let a = client.complete_json(&request()).unwrap();
    assert_eq!(a.attempts, 2);
    assert_eq!(a.usage.input_tokens, 240, "both attempts are counted");
    let _first = seen.recv().unwrap();
    let second = seen.recv().unwrap();
    let prompt = second.body["input"][1]["content"].as_str().unwrap();
    assert!(prompt.contains("rejected"), "{prompt}");
    assert!(
        prompt.contains("missing required field `memories`"),
        "{prompt}"
    );
}

#[test]
fn invalid_twice_is_an_error() {
    let (base, _seen) = fake_server(vec![
        (200, openai_reply("nope"), Duration::ZERO),
        (200, openai_reply("{\"summary\":\"x\"}"), Duration::ZERO),
    ]);
    let client = LlmClient::new(config(ProviderKind::Openai, &base)).unwrap();
    match client.complete_json(&request()) {
        Err(e @ LlmError::InvalidAnswer { .. }) => {
            assert!(e.to_string().contains("memories"), "{e}");
            // Both answers were billed; the error carries their tokens.
            assert_eq!(e.usage().total(), 300, "{e:?}");
        }
        other => panic!("expected InvalidAnswer, got {other:?}"),
    }
}

#[test]
fn rate_limits_and_server_errors_back_off_then_succeed() {
    let (base, seen) = fake_server(vec![
        (
            429,
            r#"{"error":{"message":"rate limited"}}"#.into(),
            Duration::ZERO,
        ),
        (
            503,
            r#"{"error":{"message":"overloaded"}}"#.into(),
            Duration::ZERO,
        ),
        (200, openai_reply(ANSWER), Duration::ZERO),
    ]);
    let client = LlmClient::new(config(ProviderKind::Openai, &base)).unwrap();
    let started = std::time::Instant::now();
    let a = client.complete_json(&request()).unwrap();
    assert_eq!(a.value["summary"], "switched to pnpm");
    assert_eq!(seen.try_iter().count(), 3);
    // The 429's `retry-after: 1` was waited out (a lower bound: the provider's wish).
    assert!(started.elapsed() >= Duration::from_secs(1));
}

/// A reply over the 10 MiB read limit is an invalid answer, not retried (each retry would be
/// another billed generation).
#[test]
fn a_huge_reply_is_not_retried() {
    let huge = openai_reply(&"x".repeat(11 << 20));
    let (base, seen) = fake_server(vec![
        (200, huge.clone(), Duration::ZERO),
        (200, huge, Duration::ZERO),
    ]);
    let client = LlmClient::new(config(ProviderKind::Openai, &base)).unwrap();
    match client.complete_json(&request()) {
        Err(LlmError::Invalid(m)) => assert!(m.contains("larger than"), "{m}"),
        other => panic!("expected Invalid, got {other:?}"),
    }
    assert_eq!(seen.try_iter().count(), 1);
}

#[test]
fn client_errors_are_not_retried() {
    let (base, seen) = fake_server(vec![(400, r#"{"error":"bad"}"#.into(), Duration::ZERO)]);
    let client = LlmClient::new(config(ProviderKind::Openai, &base)).unwrap();
    match client.complete_json(&request()) {
        Err(LlmError::Status { status: 400, .. }) => {}
        other => panic!("expected 400, got {other:?}"),
    }
    assert_eq!(seen.try_iter().count(), 1);
}

#[test]
fn a_slow_server_times_out() {
    let (base, _seen) = fake_server(vec![(200, openai_reply(ANSWER), Duration::from_secs(5))]);
    let mut cfg = config(ProviderKind::Openai, &base);
    cfg.timeout_secs = 1;
    cfg.max_retries = 0;
    let client = LlmClient::new(cfg).unwrap();
    let start = std::time::Instant::now();
    let r = client.complete_json(&request());
    assert!(
        matches!(
            r,
            Err(LlmError::Timeout(_)) | Err(LlmError::Transport { .. })
        ),
        "{r:?}"
    );
    assert!(start.elapsed() < Duration::from_secs(4));
}

#[test]
fn missing_key_for_the_default_endpoint_says_which_variable() {
    let cfg = LlmConfig {
        provider: ProviderKind::Openai,
        model: Some("m".into()),
        api_key_env: Some("CAIRN_TEST_NO_SUCH_KEY".into()),
        ..LlmConfig::default()
    };
    match LlmClient::new(cfg).unwrap().complete_json(&request()) {
        Err(LlmError::MissingKey(v)) => assert_eq!(v, "CAIRN_TEST_NO_SUCH_KEY"),
        other => panic!("{other:?}"),
    }
}

fn script(body: &str) -> (tempfile::TempDir, String) {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("model.sh");
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
    let s = p.display().to_string();
    (dir, s)
}

#[test]
fn command_provider_reads_stdin_and_prints_json() {
    // The script checks it got the prompt on stdin, the schema file, and the marker.
    let (dir, path) = script(
        r#"input=$(cat)
case "$input" in *"use pnpm"*) ;; *) echo "no prompt" >&2; exit 3;; esac
[ "$CAIRN_INSIDE" = 1 ] || { echo "no marker" >&2; exit 4; }
grep -q '"memories"' "$1" || { echo "no schema" >&2; exit 5; }
echo '{"summary":"switched to pnpm","memories":["use pnpm, not npm"]}'"#,
    );
    let cfg = LlmConfig {
        provider: ProviderKind::Command,
        command: vec![path, "{schema_file}".into()],
        timeout_secs: 10,
        ..LlmConfig::default()
    };
    let a = LlmClient::new(cfg)
        .unwrap()
        .complete_json(&request())
        .unwrap();
    assert_eq!(a.value["memories"][0], "use pnpm, not npm");
    assert!(
        a.usage.input_tokens > 0,
        "estimated when the command reports none"
    );
    drop(dir);
}

#[test]
fn command_provider_unwraps_claude_print_json() {
    let (_dir, path) = script(
        r#"cat >/dev/null
echo '{"type":"result","subtype":"success","is_error":false,"result":"{\"summary\":\"s\",\"memories\":[]}","usage":{"input_tokens":11,"output_tokens":7}}'"#,
    );
    let cfg = LlmConfig {
        provider: ProviderKind::Command,
        command: vec![path],
        ..LlmConfig::default()
    };
    let a = LlmClient::new(cfg)
        .unwrap()
        .complete_json(&request())
        .unwrap();
    assert_eq!(a.value["summary"], "s");
    assert_eq!((a.usage.input_tokens, a.usage.output_tokens), (11, 7));
}

#[test]
fn command_provider_failures_and_timeouts() {
    let (_d1, fail) = script("echo 'model crashed' >&2; exit 2");
    let cfg = LlmConfig {
        provider: ProviderKind::Command,
        command: vec![fail],
        ..LlmConfig::default()
    };
    match LlmClient::new(cfg).unwrap().complete_json(&request()) {
        Err(LlmError::Command(m)) => assert!(m.contains("model crashed"), "{m}"),
        other => panic!("{other:?}"),
    }
    let (_d2, slow) = script("sleep 30");
    let cfg = LlmConfig {
        provider: ProviderKind::Command,
        command: vec![slow],
        timeout_secs: 1,
        ..LlmConfig::default()
    };
    let start = std::time::Instant::now();
    assert!(matches!(
        LlmClient::new(cfg).unwrap().complete_json(&request()),
        Err(LlmError::Timeout(_))
    ));
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn config_checks_say_what_is_missing() {
    let cfg = LlmConfig {
        provider: ProviderKind::Openai,
        ..LlmConfig::default()
    };
    assert!(matches!(LlmClient::new(cfg), Err(LlmError::Config(_))));
    let cfg: LlmConfig =
        serde_json::from_value(json!({"provider":"ollama","model":"llama3.2","unknown":1}))
            .unwrap();
    assert_eq!(cfg.base(), "http://127.0.0.1:11434");
    assert!(matches!(
        LlmClient::new(LlmConfig::default())
            .unwrap()
            .complete_json(&request()),
        Err(LlmError::NotConfigured)
    ));
}
