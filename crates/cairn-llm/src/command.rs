//! `provider = "command"`: a program that reads the prompt on stdin and prints JSON.

use std::io::{Read, Write};
use std::process::{Command, Stdio};
use std::time::Instant;

use crate::config::LlmConfig;
use crate::{INSIDE_ENV, JsonRequest, LlmError, RawAnswer, Usage, estimate_tokens};

pub(crate) fn call(cfg: &LlmConfig, req: &JsonRequest) -> Result<RawAnswer, LlmError> {
    let schema = req.schema.to_string();
    let mut schema_file = None;
    let mut argv = Vec::with_capacity(cfg.command.len());
    for a in &cfg.command {
        if a.contains("{schema_file}") {
            if schema_file.is_none() {
                let mut f = tempfile::Builder::new()
                    .prefix("cairn-schema-")
                    .suffix(".json")
                    .tempfile()
                    .map_err(|e| LlmError::Command(format!("cannot write the schema file: {e}")))?;
                f.write_all(schema.as_bytes())
                    .map_err(|e| LlmError::Command(format!("cannot write the schema file: {e}")))?;
                schema_file = Some(f);
            }
            let path = schema_file
                .as_ref()
                .map(|f| f.path().display().to_string())
                .unwrap_or_default();
            argv.push(a.replace("{schema_file}", &path));
        } else {
            argv.push(a.replace("{schema}", &schema));
        }
    }
    let Some((program, args)) = argv.split_first() else {
        return Err(LlmError::Config("empty `command`".into()));
    };
    let mut cmd = Command::new(program);
    #[cfg(unix)]
    {
        // Its own process group, so a timeout kills the whole tree (a shell script's children
        // too) and nothing keeps the pipes open.
        use std::os::unix::process::CommandExt;
        cmd.process_group(0);
    }
    let mut child = cmd
        .args(args)
        .env(INSIDE_ENV, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| LlmError::Command(format!("cannot start {program}: {e}")))?;
    let input = format!("{}\n\n{}\n", req.system, req.prompt);
    if let Some(mut stdin) = child.stdin.take() {
        // A command that exits without reading is not an error here; its output decides.
        let _ = stdin.write_all(input.as_bytes());
        // Dropping stdin closes it: tools like `codex exec` wait for EOF.
    }
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let out_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(o) = stdout.as_mut() {
            let _ = o.read_to_string(&mut s);
        }
        s
    });
    let err_reader = std::thread::spawn(move || {
        let mut s = String::new();
        if let Some(e) = stderr.as_mut() {
            let _ = e.take(64 * 1024).read_to_string(&mut s);
        }
        s
    });
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(st)) => break st,
            Ok(None) if start.elapsed() >= cfg.timeout() => {
                kill_group(&mut child);
                let _ = child.wait();
                return Err(LlmError::Timeout(cfg.timeout()));
            }
            Ok(None) => std::thread::sleep(std::time::Duration::from_millis(20)),
            Err(e) => return Err(LlmError::Command(e.to_string())),
        }
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    if !status.success() {
        let tail: String = err
            .trim()
            .chars()
            .rev()
            .take(300)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
        return Err(LlmError::Command(format!(
            "{program} exited with {status}: {tail}"
        )));
    }
    // `claude -p --output-format json` wraps the text in {"result": "...", "usage": {...}}.
    let mut usage = Usage {
        input_tokens: estimate_tokens(&input),
        output_tokens: estimate_tokens(&out),
    };
    let mut text = out.clone();
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(out.trim()) {
        if let Some(r) = v.get("result").and_then(|r| r.as_str()) {
            text = r.to_owned();
            if let Some(u) = v.get("usage") {
                usage.input_tokens = u["input_tokens"].as_u64().unwrap_or(usage.input_tokens);
                usage.output_tokens = u["output_tokens"].as_u64().unwrap_or(usage.output_tokens);
            }
        } else if let Some(so) = v.get("structured_output") {
            text = so.to_string();
        }
    }
    drop(schema_file);
    Ok(RawAnswer { text, usage })
}

fn kill_group(child: &mut std::process::Child) {
    #[cfg(unix)]
    {
        if let Ok(pid) = i32::try_from(child.id()) {
            // SAFETY: kill(2) with a negative pid signals the process group we created.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    let _ = child.kill();
}
