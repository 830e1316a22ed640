//! `cairn install claude|codex [--dry-run] [--uninstall]`: wires cairn's hooks (SessionStart,
//! UserPromptSubmit, Stop → `cairn hook --agent …`) into the agent's user configuration.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{Context, Result, bail};
use serde::Serialize;

use cairn_install::{Manifest, Target, plan_claude, plan_codex};

use crate::homes::Homes;
use crate::output;

#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum AgentName {
    Claude,
    Codex,
}

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The agent to wire
    #[arg(value_enum)]
    pub agent: AgentName,
    /// Show the change as a diff and write nothing
    #[arg(long)]
    pub dry_run: bool,
    /// Remove exactly what `cairn install` added
    #[arg(long)]
    pub uninstall: bool,
}

#[derive(Serialize)]
struct Report {
    agent: &'static str,
    path: String,
    action: &'static str,
    changed: bool,
    dry_run: bool,
    diff: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    next_steps: Vec<String>,
    /// What else the user should know (cairn's hooks moved between files, a feature flag).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
    /// Every file the change writes (Codex: `config.toml`, and `hooks.json` when it holds, or
    /// held, cairn's hooks).
    files: Vec<String>,
}

const MANIFEST: &str = "install.json";

/// The command line the agent runs: `<cairn> [--data-dir DIR] hook --agent X`.
fn hook_command(homes: &Homes, target: Target) -> Result<String> {
    let exe = std::env::current_exe().context("cannot locate the cairn binary")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let mut cmd = shell_quote(&exe.to_string_lossy());
    let default_data = homes.home.as_ref().map(|h| h.join(".cairn"));
    if default_data.as_deref() != Some(homes.data_dir.as_path()) {
        cmd += " --data-dir ";
        cmd += &shell_quote(&homes.data_dir.to_string_lossy());
    }
    cmd += " hook --agent ";
    cmd += target.as_str();
    Ok(cmd)
}

fn shell_quote(s: &str) -> String {
    if !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+,:@%=".contains(&b))
    {
        s.to_owned()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

pub fn run(homes: &Homes, args: &InstallArgs, json: bool) -> Result<ExitCode> {
    let (target, dir, file, flag) = match args.agent {
        AgentName::Claude => (
            Target::Claude,
            homes.claude_root()?,
            homes.claude_root()?.join("settings.json"),
            "--claude-dir (or CLAUDE_CONFIG_DIR)",
        ),
        AgentName::Codex => (
            Target::Codex,
            homes.codex_home()?,
            homes.codex_home()?.join("config.toml"),
            "--codex-home (or CODEX_HOME)",
        ),
    };
    if !dir.is_dir() {
        bail!(
            "{} does not exist: is {} installed? Point cairn at its directory with {flag}",
            dir.display(),
            match target {
                Target::Claude => "Claude Code",
                Target::Codex => "Codex",
            }
        );
    }
    let manifest_path = homes.data_dir.join(MANIFEST);
    let mut manifest = Manifest::load(&manifest_path);
    let command = hook_command(homes, target)?;
    let previous = manifest.get(target);
    let plan = match target {
        Target::Claude => plan_claude(&file, &command, args.uninstall, previous)?,
        Target::Codex => plan_codex(
            &file,
            Some(&homes.codex_home()?.join("hooks.json")),
            &command,
            args.uninstall,
            previous,
        )?,
    };
    let changed = plan.changes_file();
    let mut plan = plan;
    if args.uninstall && previous.is_none() && changed {
        // The hooks are found by their command; what install switched on besides (a feature
        // flag) is in the record of the data dir it ran with.
        plan.notes.push(format!(
            "no install record in {}: if cairn was installed with another --data-dir (or CAIRN_HOME), run this again with it to also restore what install switched on besides its hooks",
            homes.data_dir.display()
        ));
    }
    if !args.dry_run {
        plan.apply()?;
        // An uninstall with nothing on record leaves no record behind.
        if !(args.uninstall && previous.is_none() && !manifest_path.exists()) {
            manifest.set(target, plan.record.clone());
            save_manifest(&manifest_path, &manifest)?;
        }
    }
    let mut next_steps = next_steps(target, args.uninstall, changed);
    if !args.uninstall && changed {
        next_steps.extend(setup_hints(homes, target)?);
    }
    let action = if args.uninstall {
        "uninstall"
    } else {
        "install"
    };
    // Where cairn's hooks are (Codex: hooks.json when the user's hooks are there).
    let file = plan.hooks_in.clone();
    let files: Vec<String> = plan
        .changes()
        .iter()
        .filter(|c| c.changes_file())
        .map(|c| c.path.display().to_string())
        .collect();
    if json {
        output::json(&Report {
            agent: target.as_str(),
            path: file.display().to_string(),
            action,
            changed,
            dry_run: args.dry_run,
            diff: plan.diff(),
            next_steps,
            notes: plan.notes.clone(),
            files,
        })?;
        return Ok(ExitCode::SUCCESS);
    }
    if args.dry_run {
        if changed {
            out!("{}", plan.diff());
            outln!("(dry run: nothing written; run without --dry-run to apply)");
        } else {
            outln!("{}: nothing to change", file.display());
        }
        for n in &plan.notes {
            outln!("{n}");
        }
        return Ok(ExitCode::SUCCESS);
    }
    match (args.uninstall, changed) {
        (false, true) => outln!("installed cairn's hooks in {}", file.display()),
        (false, false) => outln!("cairn's hooks are already in {}", file.display()),
        (true, true) => outln!("removed cairn's hooks from {}", files.join(" and ")),
        (true, false) => outln!("no cairn hooks in {}", file.display()),
    }
    for n in &plan.notes {
        outln!("{n}");
    }
    for s in next_steps {
        outln!("{s}");
    }
    Ok(ExitCode::SUCCESS)
}

fn next_steps(target: Target, uninstall: bool, changed: bool) -> Vec<String> {
    if uninstall || !changed {
        return Vec::new();
    }
    let mut v = Vec::new();
    match target {
        Target::Codex => {
            v.push(
                "Codex runs new or changed hooks only after you trust them: start `codex`, type `/hooks`, \
                 and trust cairn's SessionStart, UserPromptSubmit and Stop hooks."
                    .to_owned(),
            );
        }
        Target::Claude => v.push(
            "Claude Code loads the hooks in new sessions; `/hooks` inside Claude Code lists them."
                .to_owned(),
        ),
    }
    v
}

/// What else a fresh install wants: reading the history from before the hooks (they read each
/// turn as it ends), and the MCP server the session summary names, when it is not set up.
fn setup_hints(homes: &Homes, target: Target) -> Result<Vec<String>> {
    let mut v = Vec::new();
    let db = homes.db_path();
    let synced = db.is_file()
        && crate::cmd::ingest::open_store_for_reading(homes)
            .ok()
            .and_then(|s| s.meta("last_ingest").ok().flatten())
            .is_some();
    if !synced {
        v.push(
            "The hooks read each turn as it ends; run `cairn sync` once now to read the sessions \
             from before them, so that the next session starts with what they said."
                .to_owned(),
        );
    }
    let exe = std::env::current_exe().context("cannot locate the cairn binary")?;
    let exe = std::fs::canonicalize(&exe).unwrap_or(exe);
    let mut args = Vec::new();
    let default_data = homes.home.as_ref().map(|h| h.join(".cairn"));
    if default_data.as_deref() != Some(homes.data_dir.as_path()) {
        args.push("--data-dir".to_owned());
        args.push(homes.data_dir.to_string_lossy().into_owned());
    }
    args.push("mcp".to_owned());
    match target {
        Target::Claude if !claude_has_cairn_mcp(homes) => v.push(format!(
            "For Claude Code to search and change memory itself (the `memory_search` tool the \
             session summary names), add cairn's MCP server: `claude mcp add --scope user cairn -- {} {}`",
            shell_quote(&exe.to_string_lossy()),
            args.iter().map(|a| shell_quote(a)).collect::<Vec<_>>().join(" ")
        )),
        Target::Codex if !codex_has_cairn_mcp(homes) => {
            let toml_args: Vec<String> = args.iter().map(|a| format!("{a:?}")).collect();
            v.push(format!(
                "For Codex to search and change memory itself (the `memory_search` tool the \
                 session summary names), add cairn's MCP server to {}:\n[mcp_servers.cairn]\ncommand = {:?}\nargs = [{}]",
                homes.codex_home()?.join("config.toml").display(),
                exe.to_string_lossy(),
                toml_args.join(", ")
            ));
        }
        _ => {}
    }
    Ok(v)
}

/// Whether Claude Code's user config (`.claude.json` in the config root or the home) names an
/// MCP server that runs cairn.
fn claude_has_cairn_mcp(homes: &Homes) -> bool {
    let mut files = Vec::new();
    if let Ok(root) = homes.claude_root() {
        files.push(root.join(".claude.json"));
    }
    if let Some(home) = &homes.home {
        files.push(home.join(".claude.json"));
    }
    cairn_install::claude_mcp_configured(&files)
}

fn codex_has_cairn_mcp(homes: &Homes) -> bool {
    homes
        .codex_home()
        .is_ok_and(|h| cairn_install::codex_mcp_configured(&h.join("config.toml")))
}

fn save_manifest(path: &Path, m: &Manifest) -> Result<()> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let text = serde_json::to_string_pretty(m)?;
    cairn_atomic::write_atomic(path, text.as_bytes(), cairn_atomic::NewMode::Private)
        .with_context(|| format!("cannot write {}", path.display()))
}

fn create_private_dir(dir: &Path) -> Result<()> {
    if dir.is_dir() {
        return Ok(());
    }
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .with_context(|| format!("cannot create {}", PathBuf::from(dir).display()))
}
