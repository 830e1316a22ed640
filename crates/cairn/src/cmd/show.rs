//! `cairn show ID`: one memory in full.

use std::process::ExitCode;

use anyhow::Result;

use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

pub fn run(homes: &Homes, id: &str, json: bool) -> Result<ExitCode> {
    let mem = memories::open(homes)?;
    let Some(m) = mem.get(id)? else {
        return Err(cairn_memory::MemoryError::NotFound(id.to_string()).into());
    };
    if json {
        output::json(&m)?;
    } else {
        memories::print_full(&m, memories::now());
        if let Some(s) = &m.superseded_by {
            println!("  replaced by {s}");
        }
        if m.forgotten_at.is_some() {
            println!("  forgotten (its text was erased)");
        }
    }
    Ok(ExitCode::SUCCESS)
}
