//! `cairn doctor`: checks both agents' memory setup and prints each problem with its fix.

use std::process::ExitCode;

use anyhow::Result;
use cairn_interop::doctor::{self, Check, CheckStatus, DoctorRequest};

use crate::homes::Homes;
use crate::output;

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let mut report = doctor::run(&DoctorRequest {
        claude_root: homes.claude_root()?.to_path_buf(),
        home: homes.home.clone(),
        codex_home: homes.codex_home()?.to_path_buf(),
    });
    match store_checks(homes) {
        Some(check) if check.status == CheckStatus::Error => {
            report.errors += 1;
            report.checks.push(check);
        }
        Some(check) => {
            report.warnings += 1;
            report.checks.push(check);
        }
        None => {}
    }
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

/// cairn's own store: one that cannot be read (damaged, another user's) is an error with what
/// to do; else Codex rollouts ingest found in no format it knows (nothing of them is stored),
/// as the store's cursors say. `None` when all is well or there is no store yet.
fn store_checks(homes: &Homes) -> Option<Check> {
    let db = homes.db_path();
    if !db.is_file() {
        return None;
    }
    let unreadable = |said: String| {
        Some(Check {
            id: "cairn.store",
            status: CheckStatus::Error,
            message: format!("cannot read cairn's database {}: {said}", db.display()),
            fix: Some(crate::cmd::ingest::store_advice(&said).to_owned()),
            path: Some(db.display().to_string()),
        })
    };
    let store = match crate::cmd::ingest::open_store_for_reading(homes) {
        Ok(s) => s,
        Err(e) => return unreadable(format!("{e:#}")),
    };
    match store.quick_check() {
        Ok(None) => {}
        Ok(Some(problem)) => {
            return unreadable(format!("database disk image is malformed ({problem})"));
        }
        Err(e) => return unreadable(e.to_string()),
    }
    let (count, paths) = store.unrecognised_files(3).ok()?;
    let first = paths.first()?;
    Some(Check {
        id: "codex-rollouts",
        status: CheckStatus::Warn,
        message: format!(
            "{count} Codex rollout(s) of a format cairn cannot read, so none of their sessions \
             is remembered: {}",
            paths.join(", ")
        ),
        fix: Some(
            "a rollout of a newer Codex: update cairn and run `cairn sync`; another tool's \
             JSONL: move it out of the sessions directory"
                .into(),
        ),
        path: Some(first.clone()),
    })
}
