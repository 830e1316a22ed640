//! `cairn remember "TEXT"`: save a memory by hand.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use cairn_memory::{GLOBAL, MemoryType, NewMemory, Source};

use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

#[derive(clap::Args, Debug)]
pub struct RememberArgs {
    /// What to remember (a rule, a fact, a pointer)
    pub text: String,
    /// user, feedback, project or reference [default: guessed from the text]
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: Option<String>,
    /// global or project [default: global for user memories and for rules said to hold
    /// everywhere or about how the agent answers you, else the project]
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// The project directory [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
    /// Why this matters
    #[arg(long, value_name = "TEXT")]
    pub why: Option<String>,
    /// How to apply it
    #[arg(long, value_name = "TEXT")]
    pub how: Option<String>,
}

/// Resolves `--scope global|project` (or a literal scope) for a memory of `memory_type`
/// saying `text`.
pub fn resolve_scope(
    scope: Option<&str>,
    memory_type: MemoryType,
    text: &str,
    cwd: Option<&std::path::Path>,
) -> Result<String> {
    match scope.map(str::trim) {
        Some("global") => Ok(GLOBAL.to_string()),
        Some("project") => memories::project_of(cwd),
        Some(other) if other.starts_with('/') => Ok(other.to_string()),
        Some(other) => anyhow::bail!("unknown scope {other:?}: use global or project"),
        None if cairn_memory::holds_everywhere(memory_type, text) => Ok(GLOBAL.to_string()),
        None => memories::project_of(cwd),
    }
}

pub fn run(homes: &Homes, a: &RememberArgs, json: bool) -> Result<ExitCode> {
    let memory_type = match &a.memory_type {
        Some(t) => MemoryType::parse_or_err(t)?,
        // A statement shaped like the ones extraction recognises is typed the same way.
        None => cairn_memory::guess_type(&a.text),
    };
    let scope = resolve_scope(a.scope.as_deref(), memory_type, &a.text, a.cwd.as_deref())?;
    let mut mem = memories::open(homes)?;
    let now = memories::now();
    let out = mem.remember(
        NewMemory {
            memory_type,
            scope,
            rule: a.text.clone(),
            why: a.why.clone(),
            how: a.how.clone(),
            name: None,
            description: None,
            source: Source::manual(),
            at: now,
        },
        now,
    )?;
    // The next hook finds the search snapshot current (only speed is at stake).
    let _ = mem.prepare_search_snapshots();
    if json {
        let mut v = serde_json::to_value(&out.memory)?;
        v["action"] = serde_json::to_value(out.action)?;
        if let Some(r) = &out.replaced {
            v["replaced"] = r.clone().into();
        }
        if let Some(e) = &out.views_error {
            v["views_error"] = e.clone().into();
        }
        output::json(&v)?;
    } else {
        let verb = match out.action {
            cairn_memory::Action::Created => "remembered",
            cairn_memory::Action::Updated => "updated the existing memory",
            cairn_memory::Action::Unchanged => "already remembered",
            cairn_memory::Action::Superseded => "remembered (replacing an older memory)",
        };
        outln!(
            "{verb} {} ({})",
            out.memory.id,
            memories::label(&out.memory)
        );
        for l in out.memory.body.lines() {
            outln!("  {l}");
        }
        if let Some(r) = &out.replaced {
            outln!("  replaces {r}");
        }
    }
    if let Some(e) = &out.views_error {
        errln!("warning: the memory is stored, but its markdown view could not be written: {e}");
    }
    Ok(ExitCode::SUCCESS)
}
