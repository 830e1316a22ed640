//! `cairn list`: the live memories, newest first.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::Result;
use cairn_memory::{GLOBAL, ListFilter, MemoryType};

use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

#[derive(clap::Args, Debug)]
pub struct ListArgs {
    /// Only this type (user, feedback, project, reference)
    #[arg(long = "type", value_name = "TYPE")]
    pub memory_type: Option<String>,
    /// global, project (the --cwd project and nothing else), or all [default: all]
    #[arg(long, value_name = "SCOPE")]
    pub scope: Option<String>,
    /// The project directory for --scope project [default: the current directory]
    #[arg(long, value_name = "DIR")]
    pub cwd: Option<PathBuf>,
}

pub fn run(homes: &Homes, a: &ListArgs, json: bool) -> Result<ExitCode> {
    let memory_type = a
        .memory_type
        .as_deref()
        .map(MemoryType::parse_or_err)
        .transpose()?;
    let scopes = match a.scope.as_deref() {
        None | Some("all") => Vec::new(),
        Some("global") => vec![GLOBAL.to_string()],
        Some("project") => vec![memories::project_of(a.cwd.as_deref())?],
        Some(other) if other.starts_with('/') => vec![other.to_string()],
        Some(other) => anyhow::bail!("unknown scope {other:?}: use global, project or all"),
    };
    let mem = memories::open_for_reading(homes)?;
    let list = mem.list(&ListFilter {
        memory_type,
        scopes,
        include_inactive: false,
    })?;
    if json {
        output::json(&serde_json::json!({ "memories": list }))?;
    } else if list.is_empty() {
        match a.scope.as_deref() {
            None | Some("all") if memory_type.is_none() => {
                outln!("no memories yet (add one with `cairn remember \"…\"`, or run `cairn sync`)")
            }
            _ => outln!("no memories match (`cairn list` shows them all)"),
        }
    } else {
        for m in &list {
            outln!("{}  {:<30}  {}", m.id, memories::label(m), m.name);
        }
        outln!(
            "{} memor{}",
            list.len(),
            if list.len() == 1 { "y" } else { "ies" }
        );
    }
    Ok(ExitCode::SUCCESS)
}
