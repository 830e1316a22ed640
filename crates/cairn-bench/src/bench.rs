//! End-to-end ingest benchmark: runs the `cairn` binary on a home (cold, with
//! a fresh data dir, then again with nothing new) and measures a plain
//! sequential read of the same files in the same session as a baseline.

use crate::util::mb;
use anyhow::{Context, Result, bail};
use std::fs::{self, File};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

#[derive(Clone, Debug)]
pub struct BenchOpts {
    pub home: PathBuf,
    pub cairn: PathBuf,
    pub runs: usize,
    pub drop_caches: bool,
    pub taskset_one_core: bool,
    /// Parent for the temporary data dirs (default: the system temp dir).
    pub data_parent: Option<PathBuf>,
    pub quiet: bool,
}

/// What `cairn ingest --json` prints.
#[derive(Clone, Debug, Default)]
pub struct IngestOut {
    pub files: u64,
    pub bytes: u64,
    pub turns: u64,
    pub new_turns: u64,
    pub skipped_lines: u64,
    pub errors: usize,
}

#[derive(Clone, Debug)]
pub struct Run {
    pub raw_read_s: f64,
    pub cold_s: f64,
    pub second_s: f64,
    /// CPU time (user + system) of the cold run: on a shared, loaded machine this is the
    /// one-core figure, wall time is not.
    pub cold_cpu_s: f64,
    pub cold: IngestOut,
    pub second: IngestOut,
}

#[derive(Clone, Debug)]
pub struct Report {
    pub home: PathBuf,
    pub cairn: PathBuf,
    pub files: u64,
    pub bytes: u64,
    pub lines: u64,
    pub claude_files: u64,
    pub codex_files: u64,
    pub taskset: bool,
    /// `"dropped"` or `"warm (<reason>)"`.
    pub page_cache: String,
    pub runs: Vec<Run>,
    pub warnings: Vec<String>,
}

pub fn median(xs: &mut [f64]) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        (xs[n / 2 - 1] + xs[n / 2]) / 2.0
    }
}

impl Report {
    fn mbps(&self, secs: f64) -> f64 {
        self.bytes as f64 / 1e6 / secs.max(1e-9)
    }

    pub fn median_cold_s(&self) -> f64 {
        median(&mut self.runs.iter().map(|r| r.cold_s).collect::<Vec<_>>())
    }

    pub fn median_cold_cpu_s(&self) -> f64 {
        median(&mut self.runs.iter().map(|r| r.cold_cpu_s).collect::<Vec<_>>())
    }

    pub fn median_second_s(&self) -> f64 {
        median(&mut self.runs.iter().map(|r| r.second_s).collect::<Vec<_>>())
    }

    pub fn median_raw_s(&self) -> f64 {
        median(&mut self.runs.iter().map(|r| r.raw_read_s).collect::<Vec<_>>())
    }

    /// Median over runs of (cold ingest time / raw read time of the same run).
    pub fn median_ratio(&self) -> f64 {
        median(
            &mut self
                .runs
                .iter()
                .map(|r| r.cold_s / r.raw_read_s.max(1e-9))
                .collect::<Vec<_>>(),
        )
    }

    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::json;
        let out = |o: &IngestOut| {
            json!({"files": o.files, "bytes": o.bytes, "turns": o.turns, "new_turns": o.new_turns,
                   "skipped_lines": o.skipped_lines, "errors": o.errors})
        };
        let runs: Vec<_> = self
            .runs
            .iter()
            .map(|r| {
                json!({
                    "raw_read_s": r.raw_read_s,
                    "raw_read_mb_s": self.mbps(r.raw_read_s),
                    "cold_s": r.cold_s,
                    "cold_mb_s": self.mbps(r.cold_s),
                    "cold_cpu_s": r.cold_cpu_s,
                    "second_run_ms": r.second_s * 1e3,
                    "cold": out(&r.cold),
                    "second": out(&r.second),
                })
            })
            .collect();
        json!({
            "home": self.home,
            "cairn": self.cairn,
            "files": self.files,
            "bytes": self.bytes,
            "lines": self.lines,
            "claude_files": self.claude_files,
            "codex_files": self.codex_files,
            "taskset_one_core": self.taskset,
            "page_cache": self.page_cache,
            "runs": runs,
            "median": {
                "raw_read_mb_s": self.mbps(self.median_raw_s()),
                "cold_mb_s": self.mbps(self.median_cold_s()),
                "cold_s": self.median_cold_s(),
                "cold_cpu_s": self.median_cold_cpu_s(),
                "cold_mb_per_cpu_s": self.mbps(self.median_cold_cpu_s()),
                "second_run_ms": self.median_second_s() * 1e3,
                "cold_over_raw_read": self.median_ratio(),
            },
            "targets": {
                "cold_mb_s_min": 300,
                "cold_ok": self.mbps(self.median_cold_cpu_s()) >= 300.0,
                "second_run_ms_max": 100,
                "second_run_ok": self.median_second_s() * 1e3 < 100.0,
            },
            "warnings": self.warnings,
        })
    }

    pub fn print_table(&self) {
        println!("home:   {}", self.home.display());
        println!(
            "        {} transcript files ({} Claude Code, {} Codex), {}, {} lines",
            self.files,
            self.claude_files,
            self.codex_files,
            mb(self.bytes),
            self.lines
        );
        println!(
            "cairn:  {}{}",
            self.cairn.display(),
            if self.taskset { "  (taskset -c 0)" } else { "" }
        );
        println!("cache:  {}", self.page_cache);
        println!();
        println!(
            "{:>4}  {:>10} {:>9}  {:>10} {:>9}  {:>8}  {:>11}  {:>9}",
            "run", "raw read", "MB/s", "cold", "MB/s", "cold/raw", "second run", "new_turns"
        );
        for (i, r) in self.runs.iter().enumerate() {
            println!(
                "{:>4}  {:>8.3} s {:>9.0}  {:>8.3} s {:>9.0}  {:>7.1}x  {:>8.1} ms  {:>9}",
                i + 1,
                r.raw_read_s,
                self.mbps(r.raw_read_s),
                r.cold_s,
                self.mbps(r.cold_s),
                r.cold_s / r.raw_read_s.max(1e-9),
                r.second_s * 1e3,
                r.second.new_turns
            );
        }
        let (raw, cold, second) = (
            self.median_raw_s(),
            self.median_cold_s(),
            self.median_second_s(),
        );
        println!(
            "{:>4}  {:>8.3} s {:>9.0}  {:>8.3} s {:>9.0}  {:>7.1}x  {:>8.1} ms",
            "med",
            raw,
            self.mbps(raw),
            cold,
            self.mbps(cold),
            self.median_ratio(),
            second * 1e3
        );
        if let Some(r) = self.runs.first() {
            println!();
            println!(
                "cairn reported (cold): files={} bytes={} turns={} skipped_lines={} errors={}",
                r.cold.files, r.cold.bytes, r.cold.turns, r.cold.skipped_lines, r.cold.errors
            );
        }
        println!();
        let ok = |b: bool| if b { "ok" } else { "MISSED" };
        let cpu = self.median_cold_cpu_s();
        println!(
            "cold ingest CPU time (user+sys, one thread): median {cpu:.3} s = {:.0} MB per CPU-second",
            self.mbps(cpu)
        );
        println!(
            "target: cold >= 300 MB/s on one core:  {:.0} MB/s (CPU), {:.0} MB/s (wall)  {}",
            self.mbps(cpu),
            self.mbps(cold),
            ok(self.mbps(cpu) >= 300.0)
        );
        println!(
            "target: second run < 100 ms:          {:.1} ms  {}",
            second * 1e3,
            ok(second * 1e3 < 100.0)
        );
        for w in &self.warnings {
            println!("warning: {w}");
        }
    }
}

/// Transcript files of a home: `.claude/projects/**/*.jsonl` and
/// `.codex/sessions/**/*.jsonl[.zst]`, sorted for a stable read order.
pub fn transcript_files(home: &Path) -> Result<(Vec<PathBuf>, Vec<PathBuf>)> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>, keep: &dyn Fn(&str) -> bool) -> Result<()> {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e).with_context(|| format!("reading {}", dir.display())),
        };
        for e in rd {
            let e = e?;
            let ft = e.file_type()?;
            let p = e.path();
            if ft.is_dir() {
                walk(&p, out, keep)?;
            } else if ft.is_file() && p.file_name().and_then(|n| n.to_str()).is_some_and(keep) {
                out.push(p);
            }
        }
        Ok(())
    }
    let mut claude = Vec::new();
    walk(&home.join(".claude/projects"), &mut claude, &|n| {
        n.ends_with(".jsonl")
    })?;
    let mut codex = Vec::new();
    walk(&home.join(".codex/sessions"), &mut codex, &|n| {
        n.starts_with("rollout-") && (n.ends_with(".jsonl") || n.ends_with(".jsonl.zst"))
    })?;
    claude.sort();
    codex.sort();
    Ok((claude, codex))
}

/// The baseline: read every file sequentially into one reusable buffer and
/// count newlines with memchr. Returns (seconds, bytes, lines).
pub fn raw_read(files: &[PathBuf]) -> Result<(f64, u64, u64)> {
    let mut buf = vec![0u8; 1 << 20];
    let start = Instant::now();
    let (mut bytes, mut lines) = (0u64, 0u64);
    for p in files {
        let mut f = File::open(p).with_context(|| format!("opening {}", p.display()))?;
        loop {
            let n = f.read(&mut buf)?;
            if n == 0 {
                break;
            }
            bytes += n as u64;
            lines += memchr::memchr_iter(b'\n', &buf[..n]).count() as u64;
        }
    }
    Ok((start.elapsed().as_secs_f64(), bytes, lines))
}

/// Tries to empty the page cache; `Err` carries why it could not.
fn drop_caches() -> std::result::Result<(), String> {
    // `sync` first so dirty pages are written back and can be dropped.
    let _ = Command::new("sync").status();
    fs::write("/proc/sys/vm/drop_caches", "3\n").map_err(|e| e.to_string())
}

fn find_on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// Default cairn binary: `$CAIRN_BIN`, the workspace's release or debug
/// build (honouring `$CARGO_TARGET_DIR`), then `cairn` on `$PATH`.
pub fn default_cairn() -> PathBuf {
    let mut cands = Vec::new();
    if let Some(t) = std::env::var_os("CARGO_TARGET_DIR") {
        let t = PathBuf::from(t);
        cands.push(t.join("release/cairn"));
        cands.push(t.join("debug/cairn"));
    }
    let ws = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target");
    cands.push(ws.join("release/cairn"));
    cands.push(ws.join("debug/cairn"));
    if let Ok(exe) = std::env::current_exe()
        && let Some(dir) = exe.parent()
    {
        cands.insert(0, dir.join("cairn"));
    }
    cands
        .into_iter()
        .find(|p| p.is_file())
        .or_else(|| find_on_path("cairn"))
        .unwrap_or_else(|| PathBuf::from("cairn"))
}

fn parse_ingest(stdout: &[u8]) -> Result<IngestOut> {
    let text = String::from_utf8_lossy(stdout);
    let v: serde_json::Value = serde_json::from_str(text.trim())
        .ok()
        .or_else(|| {
            // Tolerate log lines before the JSON: take the last line that parses.
            text.lines()
                .rev()
                .find_map(|l| serde_json::from_str::<serde_json::Value>(l.trim()).ok())
                .filter(|v| v.is_object())
        })
        .with_context(|| format!("cairn did not print JSON; stdout was: {}", text.trim()))?;
    let n = |k: &str| v.get(k).and_then(|x| x.as_u64()).unwrap_or(0);
    Ok(IngestOut {
        files: n("files"),
        bytes: n("bytes"),
        turns: n("turns"),
        new_turns: n("new_turns"),
        skipped_lines: n("skipped_lines"),
        errors: v
            .get("errors")
            .and_then(|e| e.as_array())
            .map_or(0, |a| a.len()),
    })
}

/// CPU seconds (user + system) used so far by children this process has waited for.
fn children_cpu_s() -> f64 {
    // SAFETY: getrusage only writes into the struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_CHILDREN, &mut ru) };
    if rc != 0 {
        return 0.0;
    }
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    tv(ru.ru_utime) + tv(ru.ru_stime)
}

fn run_cairn(o: &BenchOpts, data: &Path, taskset: bool) -> Result<(f64, IngestOut)> {
    let mut cmd = if taskset {
        let mut c = Command::new("taskset");
        c.args(["-c", "0"]).arg(&o.cairn);
        c
    } else {
        Command::new(&o.cairn)
    };
    cmd.arg("--claude-dir")
        .arg(o.home.join(".claude"))
        .arg("--codex-home")
        .arg(o.home.join(".codex"))
        .arg("--data-dir")
        .arg(data)
        .args(["ingest", "--json"]);
    let start = Instant::now();
    let out = cmd
        .output()
        .with_context(|| format!("running {}", o.cairn.display()))?;
    let secs = start.elapsed().as_secs_f64();
    if !out.status.success() {
        bail!(
            "{} exited with {}: {}",
            o.cairn.display(),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok((secs, parse_ingest(&out.stdout)?))
}

pub fn run(o: &BenchOpts) -> Result<Report> {
    if o.runs == 0 {
        bail!("--runs must be at least 1");
    }
    crate::synth::refuse_real_home(&o.home)?;
    if !o.home.join(".claude").is_dir() && !o.home.join(".codex").is_dir() {
        bail!(
            "{} has neither .claude/ nor .codex/ (generate one with `cairn-bench gen`)",
            o.home.display()
        );
    }
    let (claude, codex) = transcript_files(&o.home)?;
    let mut files = claude.clone();
    files.extend(codex.iter().cloned());
    if files.is_empty() {
        bail!("no transcript files under {}", o.home.display());
    }
    let mut warnings = Vec::new();
    let taskset = if o.taskset_one_core {
        if find_on_path("taskset").is_some() {
            true
        } else {
            warnings.push("taskset not found; cairn ran unpinned".to_string());
            false
        }
    } else {
        false
    };
    let page_cache = if o.drop_caches {
        match drop_caches() {
            Ok(()) => "dropped before each raw read and cold ingest".to_string(),
            Err(e) => format!("warm (drop_caches not permitted: {e})"),
        }
    } else {
        "warm (pass --drop-caches to measure cold cache)".to_string()
    };
    let dropping = page_cache.starts_with("dropped");

    // Untimed warm-up so the first timed pass is not the only cold one.
    let (_, bytes, lines) = raw_read(&files)?;
    let mut runs = Vec::with_capacity(o.runs);
    for i in 0..o.runs {
        if dropping {
            let _ = drop_caches();
        }
        let (raw_read_s, _, _) = raw_read(&files)?;
        let data = match &o.data_parent {
            Some(p) => tempfile::Builder::new()
                .prefix("cairn-bench-data-")
                .tempdir_in(p)?,
            None => tempfile::Builder::new()
                .prefix("cairn-bench-data-")
                .tempdir()?,
        };
        if dropping {
            let _ = drop_caches();
        }
        let cpu_before = children_cpu_s();
        let (cold_s, cold) = run_cairn(o, data.path(), taskset)?;
        let cold_cpu_s = children_cpu_s() - cpu_before;
        let (second_s, second) = run_cairn(o, data.path(), taskset)?;
        if !o.quiet {
            eprintln!(
                "bench: run {}/{}: raw read {:.3} s, cold {:.3} s ({:.0} MB/s; CPU {:.3} s, {:.0} MB/s), second {:.1} ms",
                i + 1,
                o.runs,
                raw_read_s,
                cold_s,
                bytes as f64 / 1e6 / cold_s.max(1e-9),
                cold_cpu_s,
                bytes as f64 / 1e6 / cold_cpu_s.max(1e-9),
                second_s * 1e3
            );
        }
        if second.new_turns != 0 {
            warnings.push(format!(
                "run {}: second run reported new_turns={} on an unchanged home",
                i + 1,
                second.new_turns
            ));
        }
        if i == 0 {
            if cold.errors != 0 {
                warnings.push(format!("cold ingest reported {} errors", cold.errors));
            }
            if cold.bytes != 0 && cold.bytes != bytes {
                warnings.push(format!(
                    "cairn reported {} bytes, the home's transcripts hold {bytes}",
                    cold.bytes
                ));
            }
        }
        runs.push(Run {
            raw_read_s,
            cold_s,
            second_s,
            cold_cpu_s,
            cold,
            second,
        });
    }
    Ok(Report {
        home: o.home.clone(),
        cairn: o.cairn.clone(),
        files: files.len() as u64,
        bytes,
        lines,
        claude_files: claude.len() as u64,
        codex_files: codex.len() as u64,
        taskset,
        page_cache,
        runs,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_and_parsing() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
        let o = parse_ingest(
            b"some log line\n{\"files\":2,\"bytes\":10,\"turns\":3,\"new_turns\":1,\"skipped_lines\":0,\"errors\":[\"x\"]}\n",
        )
        .unwrap();
        assert_eq!(
            (o.files, o.bytes, o.turns, o.new_turns, o.errors),
            (2, 10, 3, 1, 1)
        );
        assert!(parse_ingest(b"not json").is_err());
    }

    /// Drives a stand-in `cairn` (a shell script that checks the flags) over
    /// a tiny generated home.
    #[cfg(unix)]
    #[test]
    fn drives_a_stub_cairn() {
        use std::os::unix::fs::PermissionsExt;
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path().join("home");
        crate::synth::generate(&crate::synth::GenOpts {
            out: home.clone(),
            sessions: 4,
            size: 300_000,
            seed: 3,
            codex_share: 0.5,
            force: false,
            quiet: true,
        })
        .unwrap();
        let stub = tmp.path().join("cairn");
        fs::write(
            &stub,
            r#"#!/bin/sh
[ "$1" = --claude-dir ] && [ -d "$2" ] && [ "$3" = --codex-home ] && [ -d "$4" ] \
  && [ "$5" = --data-dir ] && [ "$7" = ingest ] && [ "$8" = --json ] || { echo "bad args: $*" >&2; exit 2; }
if [ -f "$6/seen" ]; then n=0; else n=5; touch "$6/seen"; fi
echo "{\"files\":4,\"bytes\":0,\"turns\":5,\"new_turns\":$n,\"skipped_lines\":0,\"errors\":[]}"
"#,
        )
        .unwrap();
        fs::set_permissions(&stub, fs::Permissions::from_mode(0o755)).unwrap();
        let report = run(&BenchOpts {
            home: home.clone(),
            cairn: stub,
            runs: 2,
            drop_caches: false,
            taskset_one_core: false,
            data_parent: Some(tmp.path().to_path_buf()),
            quiet: true,
        })
        .unwrap();
        assert_eq!(report.runs.len(), 2);
        assert!(report.files >= 4);
        assert!(report.bytes > 200_000);
        for r in &report.runs {
            assert_eq!(r.cold.new_turns, 5);
            assert_eq!(r.second.new_turns, 0);
        }
        assert!(report.warnings.is_empty(), "{:?}", report.warnings);
        let j = report.to_json();
        assert!(j["median"]["cold_mb_s"].as_f64().unwrap() > 0.0);
        assert!(j["median"]["raw_read_mb_s"].as_f64().unwrap() > 0.0);
        // The data dirs were temporary.
        let left: Vec<_> = fs::read_dir(tmp.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("cairn-bench-data-")
            })
            .collect();
        assert!(left.is_empty());
    }
}
