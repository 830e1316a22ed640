//! `cairn-bench` owns cairn's synthetic data and its timing harness. `gen`
//! writes a large synthetic agent home of realistic shape: Claude Code
//! project transcripts (chain records, tool calls whose big outputs dominate
//! the bytes, subagent sidechains, compact boundaries, auto memory) and Codex
//! rollouts, plus the project working directories they name, all from a
//! deterministic seed and sized to a byte target. `ingest` times the `cairn`
//! binary end to end on such a home (a cold ingest into a fresh data dir and a
//! second run with nothing new) next to a plain sequential read of the same
//! files, so results stay comparable on a noisy machine. It never touches real
//! homes: it refuses `/`, `$HOME`, `~/.claude`, `~/.codex` (and
//! `$CLAUDE_CONFIG_DIR`, `$CODEX_HOME`), refuses to write into an existing
//! non-empty directory unless `--force`, and only ever writes to its output
//! directory and to temporary data dirs. This is a benchmark, not a timed test.

mod bench;
mod hookbench;
mod synth;
mod text;
mod util;

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::path::PathBuf;

#[derive(Parser)]
#[command(
    name = "cairn-bench",
    version,
    about = "Synthetic agent homes and the cairn ingest benchmark"
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Generate a synthetic home: DIR/.claude, DIR/.codex and DIR/work/<project>.
    Gen {
        /// Output directory (must be empty or missing unless --force).
        #[arg(long)]
        out: PathBuf,
        /// Number of sessions (Claude Code transcripts + Codex rollouts).
        #[arg(long, default_value_t = 2000)]
        sessions: usize,
        /// Total size: 1GB, 500MB, 2GiB, ... (KB/MB/GB decimal, KiB/MiB/GiB binary).
        #[arg(long, default_value = "1GB", value_parser = util::parse_size)]
        size: u64,
        /// PRNG seed; the same seed, flags and --out give byte-identical homes.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Share of sessions that are Codex rollouts (0..=1).
        #[arg(long, default_value_t = 0.5)]
        codex_share: f64,
        /// Write into a non-empty directory (a previous generation there is replaced).
        #[arg(long)]
        force: bool,
        /// No progress on stderr.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Benchmark `cairn ingest` on a home: cold MB/s, second-run time, raw-read baseline.
    Ingest {
        /// Home made by `gen` (contains .claude/ and .codex/).
        #[arg(long)]
        home: PathBuf,
        /// The cairn binary [default: $CAIRN_BIN, target/{release,debug}/cairn, cairn on PATH].
        #[arg(long, env = "CAIRN_BIN")]
        cairn: Option<PathBuf>,
        /// Number of runs; medians are reported.
        #[arg(long, default_value_t = 3)]
        runs: usize,
        /// Write 3 to /proc/sys/vm/drop_caches before each raw read and cold
        /// ingest (needs root; falls back to a warm cache, and says so).
        #[arg(long)]
        drop_caches: bool,
        /// Pin cairn to CPU 0 with `taskset -c 0` (the target is "on one core").
        #[arg(long)]
        taskset_one_core: bool,
        /// Where to create the temporary data dirs [default: system temp dir].
        #[arg(long)]
        data_parent: Option<PathBuf>,
        /// Print the report as JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// No per-run progress on stderr.
        #[arg(long, short)]
        quiet: bool,
    },
    /// Benchmark the `cairn hook` process (Stop on a large Codex rollout) against the Python
    /// slice-and-classify baseline in scripts/hook_baseline.py, in the same run.
    Hook {
        /// The cairn binary [default: $CAIRN_BIN, target/{release,debug}/cairn, cairn on PATH].
        #[arg(long, env = "CAIRN_BIN")]
        cairn: Option<PathBuf>,
        /// Rollout size: 50MB, 1GB, ... (KB/MB/GB decimal, KiB/MiB/GiB binary).
        #[arg(long, default_value = "50MB", value_parser = util::parse_size)]
        size: u64,
        /// Number of timed runs; medians are reported.
        #[arg(long, default_value_t = 20)]
        runs: usize,
        /// The timed turn's tool output, on one JSON line: 2KB, 100MB, ...
        #[arg(long, default_value = "2KB", value_parser = util::parse_size)]
        last_output: u64,
        /// The Python interpreter for the baseline.
        #[arg(long, default_value = "python3")]
        python: String,
        /// The baseline script [default: scripts/hook_baseline.py of this checkout].
        #[arg(long)]
        script: Option<PathBuf>,
        /// Build the home in DIR and keep it (default: a temp dir, removed).
        #[arg(long)]
        keep: Option<PathBuf>,
        /// Time read-only turns instead: the hook only asks whether the prompt (a realistic
        /// task request with no memory statement) states a memory, and starts nothing. The
        /// Python baseline, which has no such step, is not run.
        #[arg(long)]
        read_only: bool,
    },
}

fn main() -> Result<()> {
    match Cli::parse().cmd {
        Cmd::Gen {
            out,
            sessions,
            size,
            seed,
            codex_share,
            force,
            quiet,
        } => {
            let s = synth::generate(&synth::GenOpts {
                out,
                sessions,
                size,
                seed,
                codex_share,
                force,
                quiet,
            })?;
            println!("home:      {}", s.root.display());
            println!(
                "sessions:  {} Claude Code (+{} subagent files), {} Codex, in {} projects; {} memory files",
                s.claude_sessions, s.subagent_files, s.codex_sessions, s.projects, s.memory_files
            );
            println!(
                "size:      {} (target {}, {:+.2}%); {} outputs of 1-5 MB",
                util::mb(s.bytes),
                util::mb(s.target),
                (s.bytes as f64 / s.target as f64 - 1.0) * 100.0,
                s.big_outputs
            );
            println!("time:      {:.2} s, {:.0} MB/s", s.secs, s.mb_per_s());
            if (s.bytes as f64 / s.target as f64 - 1.0).abs() > 0.05 {
                eprintln!(
                    "gen: warning: size is more than 5% off target; a session takes at least ~15 KB, so use fewer --sessions for a --size this small"
                );
            }
        }
        Cmd::Hook {
            cairn,
            size,
            runs,
            last_output,
            python,
            script,
            keep,
            read_only,
        } => hookbench::run(&hookbench::HookOpts {
            cairn: cairn.unwrap_or_else(bench::default_cairn),
            python,
            script: script.unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                    .join("../../scripts/hook_baseline.py")
            }),
            size,
            runs,
            last_output,
            keep,
            read_only,
        })?,
        Cmd::Ingest {
            home,
            cairn,
            runs,
            drop_caches,
            taskset_one_core,
            data_parent,
            json,
            quiet,
        } => {
            let r = bench::run(&bench::BenchOpts {
                home,
                cairn: cairn.unwrap_or_else(bench::default_cairn),
                runs,
                drop_caches,
                taskset_one_core,
                data_parent,
                quiet,
            })?;
            if json {
                println!("{}", serde_json::to_string_pretty(&r.to_json())?);
            } else {
                r.print_table();
            }
        }
    }
    Ok(())
}
