//! `cairn import --from claude --to codex` (plan, dry run, import) and
//! `cairn import --from codex --to claude`.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use cairn_interop::codex_config::MemoryVersion;
use cairn_interop::export::{self, ExportReport, ExportRequest};
use cairn_interop::import::{self, ImportReport, ImportRequest, Mode, Status};

use crate::homes::Homes;
use crate::output;

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AgentName {
    Claude,
    Codex,
}

#[derive(clap::Args, Debug)]
pub struct ImportArgs {
    /// Where the memory comes from
    #[arg(long, value_enum)]
    pub from: AgentName,
    /// Where it goes
    #[arg(long, value_enum)]
    pub to: AgentName,
    /// Claude → Codex: a project key to import (repeatable; keys start with `-`, which is
    /// fine). Codex → Claude: a project directory to export (repeatable; default: every
    /// project Codex has memory for)
    #[arg(long = "project", value_name = "KEY|DIR", allow_hyphen_values = true)]
    pub projects: Vec<String>,
    /// Claude → Codex: import every candidate
    #[arg(long)]
    pub all: bool,
    /// Claude → Codex: give a project without a usable working directory its directory
    #[arg(long = "map", value_name = "KEY=DIR", allow_hyphen_values = true)]
    pub maps: Vec<String>,
    /// Show the exact file operations and change nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Claude → Codex: write for this memory pipeline instead of the one Codex resolves
    #[arg(long, value_name = "v1|v2", value_parser = ["v1", "v2"])]
    pub codex_version: Option<String>,
}

pub fn run(homes: &Homes, args: &ImportArgs, json: bool) -> Result<ExitCode> {
    match (args.from, args.to) {
        (AgentName::Claude, AgentName::Codex) => claude_to_codex(homes, args, json),
        (AgentName::Codex, AgentName::Claude) => {
            if args.all || !args.maps.is_empty() || args.codex_version.is_some() {
                bail!(
                    "--all, --map and --codex-version apply only to --from claude --to codex; \
                     Codex → Claude Code exports every project unless --project DIR narrows it"
                );
            }
            codex_to_claude(homes, args, json)
        }
        _ => bail!("choose --from claude --to codex, or --from codex --to claude"),
    }
}

fn claude_to_codex(homes: &Homes, args: &ImportArgs, json: bool) -> Result<ExitCode> {
    let req = ImportRequest {
        claude_root: homes.claude_root()?.to_path_buf(),
        home: homes.home.clone(),
        codex_home: homes.codex_home()?.to_path_buf(),
        projects: args.projects.clone(),
        all: args.all,
        maps: args.maps.clone(),
        codex_version: args.codex_version.as_deref().and_then(MemoryVersion::parse),
        dry_run: args.dry_run,
    };
    let report = import::run(&req)?;
    if json {
        output::json(&report)?;
    } else {
        print_import(&report);
    }
    Ok(if report.failed() > 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_import(r: &ImportReport) {
    let title = match r.mode {
        Mode::Plan => "plan; nothing is changed",
        Mode::DryRun => "dry run; nothing is changed",
        Mode::Import => "import",
    };
    outln!("Claude Code → Codex memory ({title})");
    outln!(
        "Codex memory {} (Codex resolves {}); writing to:",
        r.version,
        r.codex_resolves
    );
    for t in &r.targets {
        outln!("  {t}");
    }
    for w in &r.warnings {
        outln!("warning: {w}");
    }
    if r.projects.is_empty() {
        outln!("No Claude Code project has memory files.");
    }
    for p in &r.projects {
        let where_ = p.cwd.as_deref().unwrap_or("");
        outln!(
            "  {:<10} {:>3} file(s)  {}  {}",
            p.status.as_str(),
            p.files,
            p.key,
            where_
        );
        if let Some(reason) = &p.reason {
            outln!("             {reason}");
        }
        if let Some(hint) = &p.hint {
            outln!("             → {hint}");
        }
        for op in &p.operations {
            match &op.from {
                Some(from) => outln!("             {} {} ← {}", op.op, op.path, from),
                None => outln!("             {} {}", op.op, op.path),
            }
        }
    }
    for op in &r.operations {
        outln!("  {} {}", op.op, op.path);
    }
    for s in &r.skipped {
        outln!("skipped: {} ({})", s.path, s.message);
    }
    let count = |st: &[Status]| r.projects.iter().filter(|p| st.contains(&p.status)).count();
    match r.mode {
        Mode::Plan => {
            outln!(
                "{} project(s): {} new, {} changed, {} to delete, {} unchanged, {} skipped.",
                r.projects.len(),
                count(&[Status::New]),
                count(&[Status::Changed]),
                count(&[Status::Delete]),
                count(&[Status::Unchanged]),
                count(&[Status::Skipped]),
            );
            if count(&[Status::New, Status::Changed, Status::Delete]) > 0 {
                outln!(
                    "Import every candidate with `cairn import --from claude --to codex --all`, or one with --project KEY (add --dry-run to see the file operations)."
                );
            }
        }
        Mode::DryRun => outln!("Nothing was changed (dry run)."),
        Mode::Import => outln!(
            "{} imported, {} deleted, {} unchanged, {} skipped, {} failed.",
            count(&[Status::Imported]),
            count(&[Status::Deleted]),
            count(&[Status::Unchanged]),
            count(&[Status::Skipped]),
            count(&[Status::Failed]),
        ),
    }
}

fn codex_to_claude(homes: &Homes, args: &ImportArgs, json: bool) -> Result<ExitCode> {
    // What cairn itself wrote into Codex's workspace is its own memory: not exported back.
    // A note written in a Codex session in one project belongs to that project (cairn's
    // store knows the turn that wrote it), as in cairn's own memories.
    let (written_by_cairn, note_scopes) = if homes.db_path().is_file() {
        let store = crate::cmd::ingest::open_store_for_reading(homes)?;
        let written = cairn_consolidate::workspace_files(store.connection())
            .context("cannot read which Codex workspace files cairn wrote")?
            .into_iter()
            .map(|(path, hash)| cairn_interop::codex_source::WrittenByCairn { path, hash })
            .collect();
        let notes = cairn_consolidate::note_scopes(store.connection(), homes.codex_home()?)
            .context("cannot read which project each Codex note was written in")?
            .into_iter()
            .map(|(path, project)| cairn_interop::codex_source::NoteScope { path, project })
            .collect();
        (written, notes)
    } else {
        (Vec::new(), Vec::new())
    };
    let req = ExportRequest {
        written_by_cairn,
        note_scopes,
        claude_root: homes.claude_root()?.to_path_buf(),
        home: homes.home.clone(),
        codex_home: homes.codex_home()?.to_path_buf(),
        projects: args.projects.iter().map(PathBuf::from).collect(),
        dry_run: args.dry_run,
        lock_path: Some(homes.data_dir.join("claude-export.lock")),
    };
    let report = export::run(&req)?;
    if json {
        output::json(&report)?;
    } else {
        print_export(&report);
    }
    let failed = report
        .projects
        .iter()
        .any(|p| p.status == export::ExportStatus::Failed);
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn print_export(r: &ExportReport) {
    outln!(
        "Codex → Claude Code memory ({})",
        if r.mode == "dry-run" {
            "dry run; nothing is changed"
        } else {
            "export"
        }
    );
    if r.sources.is_empty() {
        outln!("No Codex memory workspace found.");
    }
    for s in &r.sources {
        outln!("  reading {s}");
    }
    for w in &r.warnings {
        outln!("warning: {w}");
    }
    if !r.cairn_written.is_empty() {
        outln!(
            "  left out (cairn wrote them there from its own memory, unchanged since): {}",
            r.cairn_written.join(", ")
        );
    }
    for p in &r.projects {
        let status = serde_json::to_value(p.status)
            .ok()
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_default();
        match &p.memory_dir {
            Some(dir) => outln!(
                "  {status:<10} {} → {dir} ({} topic file(s): {} written, {} removed; index: {})",
                p.cwd.as_deref().unwrap_or(""),
                p.files,
                p.written,
                p.removed,
                p.index
            ),
            None => outln!("  {status:<10} {}", p.cwd.as_deref().unwrap_or("")),
        }
        if let Some(reason) = &p.reason {
            outln!("             {reason}");
        }
        for k in &p.kept {
            outln!("             kept {k} (edited since cairn wrote it)");
        }
        for k in &p.left_deleted {
            outln!(
                "             left deleted {k} (deleted since cairn wrote it; written again only when its Codex source changes)"
            );
        }
        for op in &p.operations {
            outln!("             {} {}", op.op, op.path);
        }
    }
    for s in &r.skipped {
        outln!("skipped: {} ({})", s.path, s.message);
    }
}
