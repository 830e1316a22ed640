//! `cairn-bench hook`: how long the real `cairn hook --agent codex` process takes on a Stop for
//! a turn at the end of a large rollout, next to a Python implementation of the same
//! slice-and-classify step (`scripts/hook_baseline.py`) run on the same file in the same run.
//!
//! Setup: a synthetic rollout of `--size` bytes in a temp Codex home, ingested once (the steady
//! state, where earlier turns were ingested by earlier workers). Each run appends one new turn
//! that changes something and times the hook process from spawn to exit; the worker it starts
//! is waited for before the next run, so it does not compete for the CPU. The Python baseline is
//! timed on each run's turn in both its modes (the seed's full forward read, and a tail read).
//! `--last-output` makes the timed turn's tool output one line of that size (a 100 MB build
//! log), which the hook's backward scan must cross to find the turn's start.

use std::fs::{self, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

pub struct HookOpts {
    pub cairn: PathBuf,
    pub python: String,
    pub script: PathBuf,
    pub size: u64,
    pub runs: usize,
    /// The timed turn's tool output, one JSON line (a huge one tests the backward scan).
    pub last_output: u64,
    pub keep: Option<PathBuf>,
    /// Time read-only turns (the prompt check), without the Python baseline.
    pub read_only: bool,
}

/// The prompt of a timed read-only turn: task talk with a colon, a question and words the
/// memory-statement shapes look for, none of which states a memory.
const READ_ONLY_PROMPT: &str = "ok the handler change is fine. Can you look at why the build fails on CI: it says the lockfile is stale? Please also run the tests and tell me what broke, I'll review your changes after lunch.";

const SESSION: &str = "01a1f7e6-e126-7f26-9493-6114a06f30dd";

fn turn_lines(id: &str, cmd: &str, output_bytes: usize) -> String {
    turn_lines_with(id, &format!("please handle step {id}"), cmd, output_bytes)
}

fn turn_lines_with(id: &str, prompt: &str, cmd: &str, output_bytes: usize) -> String {
    let ts = "2026-11-20T10:00:00.000Z";
    let out: String = "line of build output that looks like a log entry\n"
        .chars()
        .cycle()
        .take(output_bytes)
        .collect();
    let lines = [
        serde_json::json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "task_started", "turn_id": id}}),
        serde_json::json!({"timestamp": ts, "type": "turn_context", "payload": {"turn_id": id, "cwd": "/w/app", "model": "gpt-5.6-sol"}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": serde_json::json!({"cmd": "rg -n TODO src"}).to_string(), "call_id": format!("a-{id}")}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call_output", "call_id": format!("a-{id}"), "output": format!("Process exited with code 0\nOutput:\n{out}")}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call", "name": "exec_command", "arguments": serde_json::json!({"cmd": cmd}).to_string(), "call_id": format!("b-{id}")}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "function_call_output", "call_id": format!("b-{id}"), "output": "Process exited with code 0\nOutput:\nok\n"}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Done with this step."}]}}),
        serde_json::json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "task_complete", "turn_id": id}}),
    ];
    lines.iter().map(|l| l.to_string() + "\n").collect()
}

fn append(path: &Path, s: &str) -> Result<()> {
    let mut f = OpenOptions::new().append(true).create(true).open(path)?;
    f.write_all(s.as_bytes())?;
    Ok(())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// CPU time (user + system) of the waited-for children so far, in milliseconds.
fn children_cpu_ms() -> f64 {
    // SAFETY: getrusage only writes the struct it is given.
    let mut u: libc::rusage = unsafe { std::mem::zeroed() };
    if unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut u) } != 0 {
        return f64::NAN;
    }
    let ms = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    ms(u.ru_utime) + ms(u.ru_stime)
}

fn timed(mut cmd: Command, stdin: Option<&str>) -> Result<(f64, String)> {
    cmd.stdin(if stdin.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped());
    let t = Instant::now();
    let mut child = cmd.spawn().context("cannot start the timed process")?;
    if let Some(input) = stdin {
        child
            .stdin
            .take()
            .context("no stdin")?
            .write_all(input.as_bytes())?;
    }
    let out = child.wait_with_output()?;
    let ms = t.elapsed().as_secs_f64() * 1000.0;
    if !out.status.success() {
        bail!(
            "timed process failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    Ok((ms, String::from_utf8_lossy(&out.stdout).trim().to_owned()))
}

fn wait_for_worker(data: &Path) -> Result<()> {
    let lock = data.join("worker.lock");
    let deadline = Instant::now() + Duration::from_secs(120);
    // Give the hook's worker a moment to start and take the lock.
    std::thread::sleep(Duration::from_millis(50));
    loop {
        let free = match fs::File::open(&lock) {
            Ok(f) => f.try_lock().is_ok(),
            Err(_) => true,
        };
        if free || Instant::now() > deadline {
            return Ok(());
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

pub fn run(o: &HookOpts) -> Result<()> {
    let tmp = tempfile::Builder::new()
        .prefix("cairn-hookbench-")
        .tempdir()?;
    let root = o.keep.clone().unwrap_or_else(|| tmp.path().to_path_buf());
    let codex = root.join(".codex");
    let claude = root.join(".claude");
    let data = root.join(".cairn");
    let dir = codex.join("sessions/2026/11/20");
    fs::create_dir_all(&dir)?;
    fs::create_dir_all(&claude)?;
    let rollout = dir.join(format!("rollout-2026-11-20T10-00-00-{SESSION}.jsonl"));
    let _ = fs::remove_file(&rollout);
    let _ = fs::remove_dir_all(&data);

    // The history: turns with ~48 KB outputs up to the target size.
    let meta = serde_json::json!({"timestamp": "2026-11-20T10:00:00.000Z", "type": "session_meta",
        "payload": {"id": SESSION, "timestamp": "2026-11-20T10:00:00.000Z", "cwd": "/w/app",
                    "originator": "codex_cli_rs", "cli_version": "0.165.0", "source": "cli",
                    "model_provider": "openai"}});
    let mut f = fs::File::create(&rollout)?;
    writeln!(f, "{meta}")?;
    let mut written = 0u64;
    let mut n = 0usize;
    while written < o.size {
        let t = turn_lines(&format!("hist-{n}"), "cargo fmt", 48 * 1024);
        f.write_all(t.as_bytes())?;
        written += t.len() as u64;
        n += 1;
    }
    drop(f);
    let size = fs::metadata(&rollout)?.len();
    eprintln!(
        "hook bench: rollout of {:.1} MB ({n} turns) at {}",
        size as f64 / 1e6,
        rollout.display()
    );

    let base = |c: &mut Command| {
        c.arg("--claude-dir")
            .arg(&claude)
            .arg("--codex-home")
            .arg(&codex)
            .arg("--data-dir")
            .arg(&data)
            .env("HOME", &root)
            .env_remove("CAIRN_INSIDE")
            .env_remove("CAIRN_FAULT");
    };
    let mut c = Command::new(&o.cairn);
    base(&mut c);
    c.arg("ingest").arg("--json");
    let (ms, _) = timed(c, None)?;
    eprintln!("hook bench: first ingest of the history took {ms:.0} ms (not timed below)");

    let (mut hook_ms, mut py_full, mut py_tail) = (Vec::new(), Vec::new(), Vec::new());
    let mut hook_cpu = Vec::new();
    for i in 0..o.runs {
        let id = format!("bench-{i}");
        let output = usize::try_from(o.last_output).unwrap_or(usize::MAX);
        let turn = if o.read_only {
            turn_lines_with(&id, READ_ONLY_PROMPT, "rg -n TODO src", output)
        } else {
            turn_lines(&id, &format!("rm -f scratch-{i}.txt"), output)
        };
        append(&rollout, &turn)?;
        let payload = serde_json::json!({
            "session_id": SESSION, "turn_id": id, "transcript_path": rollout,
            "cwd": "/w/app", "hook_event_name": "Stop", "model": "gpt-5.6-sol",
            "permission_mode": "default", "stop_hook_active": false,
            "last_assistant_message": "Done with this step."
        })
        .to_string();
        let mut c = Command::new(&o.cairn);
        base(&mut c);
        c.args(["hook", "--agent", "codex"]);
        let cpu0 = children_cpu_ms();
        let (ms, out) = timed(c, Some(&payload))?;
        hook_cpu.push(children_cpu_ms() - cpu0);
        if !out.is_empty() {
            bail!("the hook printed on a Stop: {out}");
        }
        hook_ms.push(ms);
        if o.read_only {
            eprintln!("run {i}: cairn hook {:.1} ms (read-only turn)", hook_ms[i]);
            continue;
        }
        wait_for_worker(&data)?;

        for (tail, v) in [(false, &mut py_full), (true, &mut py_tail)] {
            let mut c = Command::new(&o.python);
            c.arg(&o.script);
            if tail {
                c.arg("--tail");
            }
            c.arg(&rollout).arg(&id);
            let (ms, out) = timed(c, None)?;
            if out != "changed" {
                bail!("the Python baseline said `{out}` for a changing turn");
            }
            v.push(ms);
        }
        eprintln!(
            "run {i}: cairn hook {:.1} ms, python full read {:.1} ms, python tail {:.1} ms",
            hook_ms[i], py_full[i], py_tail[i]
        );
    }
    // Every run's turn was queued exactly once and processed.
    let mut c = Command::new(&o.cairn);
    base(&mut c);
    c.args(["status", "--json"]);
    let (_, st) = timed(c, None)?;
    let st: serde_json::Value = serde_json::from_str(&st)?;
    println!(
        "rollout:                      {:.1} MB, {} runs, timed turn's output {:.1} MB on one line",
        size as f64 / 1e6,
        o.runs,
        o.last_output as f64 / 1e6
    );
    println!(
        "cairn hook (Stop, median):    {:.1} ms",
        median(&mut hook_ms)
    );
    println!(
        "cairn hook CPU (median):      {:.1} ms (user + system)",
        median(&mut hook_cpu)
    );
    if !o.read_only {
        println!(
            "python, full read (median):   {:.1} ms",
            median(&mut py_full)
        );
        println!(
            "python, tail read (median):   {:.1} ms",
            median(&mut py_tail)
        );
    }
    println!("jobs after the runs:          {}", st["jobs"]);
    if let Ok(l) = fs::read_to_string("/proc/loadavg") {
        println!(
            "load average:                 {}",
            l.split_whitespace().take(3).collect::<Vec<_>>().join(" ")
        );
    }
    if o.keep.is_none() {
        drop(tmp);
    }
    Ok(())
}
