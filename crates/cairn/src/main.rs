//! `cairn`: the command-line entry point. Thin glue: argument parsing, locating the homes,
//! wiring the library crates together, and printing (human text or `--json`).

mod cmd;
mod homes;
mod output;
mod progress;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::homes::Homes;

/// A memory engine for coding agents (Claude Code, Codex).
#[derive(Parser, Debug)]
#[command(name = "cairn", version, about, long_about = None)]
pub struct Cli {
    /// Claude Code config root [default: $CLAUDE_CONFIG_DIR, else ~/.claude]
    #[arg(long, global = true, value_name = "DIR")]
    pub claude_dir: Option<std::path::PathBuf>,
    /// Codex home [default: $CODEX_HOME, else ~/.codex]
    #[arg(long, global = true, value_name = "DIR")]
    pub codex_home: Option<std::path::PathBuf>,
    /// cairn's data directory [default: $CAIRN_HOME, else ~/.cairn]
    #[arg(long, global = true, value_name = "DIR")]
    pub data_dir: Option<std::path::PathBuf>,
    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub json: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// The main job: scan the agents' homes, then ingest every new transcript line.
    Sync,
    /// Report what is in the agents' homes (projects, working directories, memory files,
    /// sessions, rollouts). Read-only.
    Scan,
    /// Read every transcript and rollout into cairn's store, incrementally.
    Ingest,
    /// Copy the bundled sample home to a temporary directory and run the main job on it.
    Demo {
        /// Keep the temporary directory and print its path
        #[arg(long)]
        keep: bool,
    },
    /// Write the bundled sample home into DIR (an existing directory) and exit.
    #[command(hide = true)]
    SampleHome { dir: std::path::PathBuf },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let homes = match Homes::resolve(&cli) {
        Ok(h) => h,
        Err(e) => {
            eprintln!("error: {e:#}");
            return ExitCode::from(2);
        }
    };
    let res = match &cli.command {
        Command::Sync => cmd::sync::run(&homes, cli.json),
        Command::Scan => cmd::scan::run(&homes, cli.json),
        Command::Ingest => cmd::ingest::run(&homes, cli.json),
        Command::Demo { keep } => cmd::demo::run(*keep, cli.json),
        Command::SampleHome { dir } => cmd::demo::materialize(dir).map(|_| ExitCode::SUCCESS),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
