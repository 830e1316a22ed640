//! `cairn memo check [FILE]`: validates every cairn block of a memo file (a pre-commit hook:
//! exits 1 with `file:line: problem` lines when a block is broken).

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};
use serde::Serialize;

use crate::homes::Homes;
use crate::output;

#[derive(Debug, clap::Args)]
pub struct MemoArgs {
    #[command(subcommand)]
    pub command: MemoCommand,
}

#[derive(Debug, clap::Subcommand)]
pub enum MemoCommand {
    /// Validate the memo file's blocks [default FILE: the configured memo file of the project
    /// in the current directory, else memo.md at its git root]
    Check { file: Option<PathBuf> },
}

#[derive(Serialize)]
struct Problem {
    line: usize,
    message: String,
}

#[derive(Serialize)]
struct Report {
    file: String,
    blocks: usize,
    problems: Vec<Problem>,
}

pub fn run(homes: &Homes, args: &MemoArgs, json: bool) -> Result<ExitCode> {
    let MemoCommand::Check { file } = &args.command;
    let file = match file {
        Some(f) => f.clone(),
        None => {
            let cwd = std::env::current_dir().context("cannot read the current directory")?;
            let config = cairn_config::Config::load(&homes.data_dir)?;
            config
                .memo
                .file_for(&cairn_capture::project_root(&cwd), homes.home.as_deref())
        }
    };
    super::require_regular_file(&file, "the memo file")?;
    let text = std::fs::read_to_string(&file)
        .with_context(|| format!("cannot read the memo file {}", file.display()))?;
    let (blocks, problems) = cairn_capture::memo::check(&text);
    let name = file.display().to_string();
    let ok = problems.is_empty();
    if json {
        output::json(&Report {
            file: name,
            blocks,
            problems: problems
                .into_iter()
                .map(|p| Problem {
                    line: p.line,
                    message: p.message,
                })
                .collect(),
        })?;
    } else if ok {
        outln!("{name}: {blocks} block(s), all valid");
    } else {
        for p in &problems {
            outln!("{name}:{}: {}", p.line, p.message);
        }
        outln!(
            "{name}: {} problem(s) in {blocks} block(s); fix the lines above",
            problems.len()
        );
    }
    Ok(if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}
