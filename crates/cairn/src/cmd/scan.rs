//! `cairn scan`: the discovery report.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use cairn_transcript::Problem;
use cairn_transcript::scan::{ClaudeScan, CodexScan, scan_claude, scan_codex};

use crate::homes::Homes;
use crate::output;

#[derive(Serialize)]
pub struct ScanReport {
    pub claude: ClaudeScan,
    pub codex: CodexScan,
    pub errors: Vec<Problem>,
    /// An agent's directory that does not exist (not installed, or a mistyped path).
    pub warnings: Vec<String>,
}

pub fn scan(homes: &Homes) -> Result<ScanReport> {
    let (claude_root, codex_home) = (homes.claude_root()?, homes.codex_home()?);
    let mut errors = Vec::new();
    let mut claude = scan_claude(claude_root, homes.home.as_deref(), &mut errors);
    // A directory that cannot be listed looks empty: say so, rather than let it read as
    // transcripts deleted by `cleanupPeriodDays`. (The projects dir itself is reported above.)
    let projects = claude_root.join("projects");
    for (dir, why) in cairn_interop::doctor::unreadable_claude_dirs(claude_root) {
        if dir == projects {
            continue;
        }
        let what = format!("cannot read {}: {why}", dir.display());
        if let Some(p) = claude
            .projects
            .iter_mut()
            .find(|p| p.cwd.is_none() && dir.starts_with(projects.join(&p.key)))
        {
            p.reason = Some(what.clone());
        }
        errors.push(Problem::new(&dir, None, what));
    }
    let codex = scan_codex(codex_home, &mut errors);
    // A missing directory that was given (a typo), or both missing: many use one agent only.
    let mut warnings = Vec::new();
    let neither = !claude_root.exists() && !codex_home.exists();
    for (dir, given, agent, flag, var) in [
        (
            claude_root,
            homes.claude_root_given,
            "Claude Code",
            "--claude-dir",
            "CLAUDE_CONFIG_DIR",
        ),
        (
            codex_home,
            homes.codex_home_given,
            "Codex",
            "--codex-home",
            "CODEX_HOME",
        ),
    ] {
        if !dir.exists() && (given || neither) {
            warnings.push(format!(
                "{} does not exist: is {agent} installed? If it keeps its files elsewhere, point cairn there with {flag} (or {var})",
                dir.display()
            ));
        }
    }
    Ok(ScanReport {
        claude,
        codex,
        errors,
        warnings,
    })
}

pub fn print_human(r: &ScanReport) {
    for w in &r.warnings {
        outln!("warning: {w}");
    }
    outln!("Claude Code: {}", r.claude.root);
    if let Some(o) = &r.claude.memory_dir_override {
        outln!("  autoMemoryDirectory (user settings): {o}");
    }
    if r.claude.projects.is_empty() {
        outln!("  no projects");
    }
    for p in &r.claude.projects {
        match &p.cwd {
            Some(cwd) => outln!(
                "  CWD FOUND  {:<40} {} memory file(s), {} session(s)  {cwd}",
                p.key,
                p.memory_files,
                p.sessions
            ),
            None => outln!(
                "  NO CWD     {:<40} {} memory file(s), {} session(s)  ({})",
                p.key,
                p.memory_files,
                p.sessions,
                p.reason.as_deref().unwrap_or("unknown")
            ),
        }
    }
    outln!("Codex: {}", r.codex.home);
    outln!("  {} rollout(s)", r.codex.rollouts);
    for c in &r.codex.cwds {
        outln!(
            "  {:>5}  {}",
            c.rollouts,
            c.cwd.as_deref().unwrap_or("(no cwd recorded)")
        );
    }
    if !r.errors.is_empty() {
        outln!("{} problem(s):", r.errors.len());
        for e in r.errors.iter().take(20) {
            if e.message.contains(&e.path) {
                outln!("  {}", e.message);
            } else {
                outln!("  {}: {}", e.path, e.message);
            }
        }
    }
}

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let r = scan(homes)?;
    if json {
        output::json(&r)?;
    } else {
        print_human(&r);
    }
    Ok(ExitCode::SUCCESS)
}
