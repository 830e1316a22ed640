//! `cairn doctor`: checks both agents' memory setup and prints each problem with its fix.

use std::process::ExitCode;

use anyhow::Result;
use cairn_interop::doctor::{self, CheckStatus, DoctorRequest};

use crate::homes::Homes;
use crate::output;

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let report = doctor::run(&DoctorRequest {
        claude_root: homes.claude_root()?.to_path_buf(),
        home: homes.home.clone(),
        codex_home: homes.codex_home()?.to_path_buf(),
    });
    if json {
        output::json(&report)?;
    } else {
        outln!("Claude Code: {}", homes.claude_root()?.display());
        outln!("Codex:       {}", homes.codex_home()?.display());
        for c in &report.checks {
            let tag = match c.status {
                CheckStatus::Ok => "ok   ",
                CheckStatus::Info => "info ",
                CheckStatus::Warn => "WARN ",
                CheckStatus::Error => "ERROR",
            };
            outln!("{tag} {:<20} {}", c.id, c.message);
            if let Some(fix) = &c.fix {
                outln!("      {:<20} fix: {fix}", "");
            }
        }
        outln!(
            "{} warning(s), {} error(s).",
            report.warnings,
            report.errors
        );
    }
    Ok(if report.warnings + report.errors > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
