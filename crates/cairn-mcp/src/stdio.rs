//! The stdio transport, with each line read checked before the protocol library sees it.
//!
//! A line that is not JSON gets JSON-RPC's parse error (-32700, `"id": null`), and an object
//! that is not a request, a notification or a response gets "invalid request" (-32600) with
//! its `id` when it has a usable one, `null` otherwise: the library would drop the first
//! without a word and answer the second without an `id`. So do a batch, a request whose `id`
//! is null, a second `initialize` (after which the library answered nothing else) and a
//! `tools/call` whose `arguments` are not an object. Everything else goes through unchanged. Replies written here and the library's messages share one lock on stdout and
//! are written a whole line at a time, so they never interleave.

use std::io::Write as _;
use std::pin::Pin;
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Context, Poll};

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWrite, AsyncWriteExt, DuplexStream};

/// Standard output, shared by the library's writer and the checker's replies.
type SharedStdout = Arc<Mutex<std::io::Stdout>>;

/// The reading and writing halves to hand the protocol library, after starting the task
/// that reads stdin (it must run inside a Tokio runtime).
pub(crate) fn transport() -> (DuplexStream, LineWriter) {
    let stdout: SharedStdout = Arc::new(Mutex::new(std::io::stdout()));
    let (to_server, from_client) = tokio::io::duplex(1 << 16);
    tokio::spawn(pump(
        tokio::io::BufReader::new(tokio::io::stdin()),
        to_server,
        Arc::clone(&stdout),
    ));
    (
        from_client,
        LineWriter {
            stdout,
            pending: Vec::new(),
        },
    )
}

/// What to do with one line from the client.
#[derive(Debug, PartialEq)]
enum Verdict {
    /// Blank: nothing.
    Skip,
    /// A message for the server.
    Forward,
    /// An error to answer with, here.
    Reply(Value),
}

/// An error for a request (with its id); a notification, which gets no answer, is dropped.
fn refuse(id: Option<Value>, code: i64, message: String) -> Verdict {
    match id {
        Some(id) => error(id, code, message),
        None => Verdict::Skip,
    }
}

fn error(id: Value, code: i64, message: String) -> Verdict {
    Verdict::Reply(json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}))
}

/// Checks one line (JSON-RPC 2.0 framing, as MCP's stdio transport uses it). `initialized`:
/// an `initialize` request went through already (before it, other requests are refused with
/// their id, and notifications dropped: the library would answer them oddly or stop).
fn check(line: &[u8], initialized: &mut bool) -> Verdict {
    if line.iter().all(u8::is_ascii_whitespace) {
        return Verdict::Skip;
    }
    let value: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => return error(Value::Null, -32700, format!("Parse error: {e}")),
    };
    let Some(obj) = value.as_object() else {
        // MCP has no batches (the library would answer one without an id).
        return error(
            Value::Null,
            -32600,
            if value.is_array() {
                "Invalid request: batches are not supported; send one message per line"
            } else {
                "Invalid request: not a JSON-RPC object"
            }
            .into(),
        );
    };
    // An id is a string or a number; anything else cannot be echoed back.
    let id = obj
        .get("id")
        .filter(|v| v.is_string() || v.is_number())
        .cloned();
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return error(
            id.unwrap_or(Value::Null),
            -32600,
            "Invalid request: \"jsonrpc\" must be \"2.0\"".into(),
        );
    }
    let method = obj.get("method").map(Value::is_string);
    let response = obj.contains_key("result") || obj.contains_key("error");
    // A request's id is never null (MCP): the library would answer without one.
    if method == Some(true) && obj.contains_key("id") && id.is_none() {
        return error(
            Value::Null,
            -32600,
            "Invalid request: \"id\" must be a string or a number".into(),
        );
    }
    if method == Some(true) {
        let name = obj.get("method").and_then(Value::as_str).unwrap_or("");
        let params = obj.get("params");
        if params.is_some_and(|p| !p.is_object() && !p.is_array()) {
            return refuse(
                id,
                -32602,
                "Invalid params: \"params\" must be an object".into(),
            );
        }
        if name == "initialize" {
            // Once per session: a second one would leave the library in a state where it
            // answers nothing else.
            if *initialized {
                return refuse(
                    id,
                    -32600,
                    "Invalid request: the session is already initialized".into(),
                );
            }
            *initialized = true;
        } else if !*initialized && name != "ping" {
            return refuse(
                id,
                -32002,
                "Server not initialized: send \"initialize\" first".into(),
            );
        }
        if name == "tools/call"
            && (!params
                .and_then(|p| p.get("name"))
                .is_some_and(Value::is_string)
                || params
                    .and_then(|p| p.get("arguments"))
                    .is_some_and(|a| !a.is_object() && !a.is_null()))
        {
            return refuse(
                id,
                -32602,
                "Invalid params: tools/call needs {\"name\": <tool>, \"arguments\": {...}}".into(),
            );
        }
    }
    match (method, response) {
        (Some(true), _) | (None, true) => Verdict::Forward,
        (Some(false), _) => error(
            id.unwrap_or(Value::Null),
            -32600,
            "Invalid request: \"method\" must be a string".into(),
        ),
        (None, false) => error(
            id.unwrap_or(Value::Null),
            -32600,
            "Invalid request: no \"method\"".into(),
        ),
    }
}

/// Writes whole lines to stdout under the shared lock.
fn write_line(stdout: &SharedStdout, line: &[u8]) -> std::io::Result<()> {
    let mut out = stdout.lock().unwrap_or_else(PoisonError::into_inner);
    out.write_all(line)?;
    if !line.ends_with(b"\n") {
        out.write_all(b"\n")?;
    }
    out.flush()
}

/// Reads stdin line by line until it ends, forwarding messages to the server and answering
/// malformed ones; the server sees end of input when stdin ends (or it stops reading).
async fn pump<R>(mut input: R, mut to_server: DuplexStream, stdout: SharedStdout)
where
    R: tokio::io::AsyncBufRead + Unpin,
{
    let mut line = Vec::new();
    let mut initialized = false;
    loop {
        line.clear();
        match input.read_until(b'\n', &mut line).await {
            Ok(0) | Err(_) => break,
            Ok(_) => {}
        }
        match check(&line, &mut initialized) {
            Verdict::Skip => {}
            Verdict::Forward => {
                if !line.ends_with(b"\n") {
                    line.push(b'\n');
                }
                if to_server.write_all(&line).await.is_err() {
                    break;
                }
            }
            Verdict::Reply(v) => {
                if write_line(&stdout, v.to_string().as_bytes()).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to_server.shutdown().await;
}

/// The library's writer: buffers what it writes and sends each complete line to stdout at once.
pub(crate) struct LineWriter {
    stdout: SharedStdout,
    pending: Vec<u8>,
}

impl LineWriter {
    fn write_complete_lines(&mut self) -> std::io::Result<()> {
        if let Some(end) = self.pending.iter().rposition(|b| *b == b'\n') {
            let rest = self.pending.split_off(end + 1);
            let lines = std::mem::replace(&mut self.pending, rest);
            write_line(&self.stdout, &lines)?;
        }
        Ok(())
    }
}

impl AsyncWrite for LineWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        let this = self.get_mut();
        this.pending.extend_from_slice(data);
        Poll::Ready(this.write_complete_lines().map(|()| data.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(self.get_mut().write_complete_lines())
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        let this = self.get_mut();
        let result = this.write_complete_lines().and_then(|()| {
            if this.pending.is_empty() {
                Ok(())
            } else {
                let rest = std::mem::take(&mut this.pending);
                write_line(&this.stdout, &rest)
            }
        });
        Poll::Ready(result)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(line: &[u8]) -> Verdict {
        super::check(line, &mut true)
    }

    #[test]
    fn requests_wait_for_initialize_and_need_their_params() {
        let mut init = false;
        let v = super::check(
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
            &mut init,
        );
        assert!(
            matches!(&v, Verdict::Reply(r) if r["error"]["code"] == -32002 && r["id"] == 1),
            "{v:?}"
        );
        assert_eq!(
            super::check(
                br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
                &mut init
            ),
            Verdict::Skip
        );
        assert_eq!(
            super::check(br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#, &mut init),
            Verdict::Forward
        );
        assert_eq!(
            super::check(
                br#"{"jsonrpc":"2.0","id":3,"method":"initialize","params":{}}"#,
                &mut init
            ),
            Verdict::Forward
        );
        assert!(init);
        let again = super::check(
            br#"{"jsonrpc":"2.0","id":4,"method":"initialize","params":{"protocolVersion":"2099-01-01"}}"#,
            &mut init,
        );
        assert!(
            matches!(&again, Verdict::Reply(r) if r["error"]["code"] == -32600 && r["id"] == 4),
            "{again:?}"
        );
        for bad in [
            &br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":"str"}"#[..],
            br#"{"jsonrpc":"2.0","id":11,"method":"tools/call"}"#,
            br#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"memory_get","arguments":[1,2]}}"#,
        ] {
            let v = super::check(bad, &mut init);
            assert!(
                matches!(&v, Verdict::Reply(r) if r["error"]["code"] == -32602 && r["id"] == 11),
                "{v:?}"
            );
        }
    }

    #[test]
    fn lines_are_checked_before_the_server_sees_them() {
        assert_eq!(check(b"   \n"), Verdict::Skip);
        let ok = br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#;
        assert_eq!(super::check(ok, &mut false), Verdict::Forward);
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Verdict::Forward
        );
        assert_eq!(
            check(br#"{"jsonrpc":"2.0","id":3,"result":{}}"#),
            Verdict::Forward
        );
        let reply = |line: &[u8]| match check(line) {
            Verdict::Reply(v) => v,
            other => panic!("{other:?}"),
        };
        let v = reply(b"not json\n");
        assert_eq!(v["error"]["code"], -32700);
        assert!(v["id"].is_null() && v.as_object().unwrap().contains_key("id"));
        let v = reply(br#"{"jsonrpc":"2.0","id":7}"#);
        assert_eq!(
            (v["error"]["code"].as_i64(), v["id"].as_i64()),
            (Some(-32600), Some(7))
        );
        let v = reply(br#"{"jsonrpc":"1.0","id":"a","method":"ping"}"#);
        assert_eq!(
            (v["error"]["code"].as_i64(), v["id"].as_str()),
            (Some(-32600), Some("a"))
        );
        let v = reply(br#"{"jsonrpc":"2.0","id":{"x":1},"method":7}"#);
        assert!(v["id"].is_null(), "{v}");
        let v = reply(b"42");
        assert_eq!(v["error"]["code"], -32600);
        for no_id in [
            &br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#[..],
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#,
        ] {
            let v = reply(no_id);
            assert_eq!(v["error"]["code"], -32600, "{v}");
            assert!(
                v.as_object().unwrap().contains_key("id") && v["id"].is_null(),
                "{v}"
            );
        }
        assert!(matches!(check(b"\xff\xfe{"), Verdict::Reply(_)));
    }
}
