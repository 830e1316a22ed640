//! `cairn forget ID`: a tombstone; the memory never comes back from re-extraction.

use std::process::ExitCode;

use anyhow::Result;

use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

pub fn run(homes: &Homes, id: &str, json: bool) -> Result<ExitCode> {
    let mut mem = memories::open(homes)?;
    let m = mem.forget(id, memories::now())?;
    // The next hook finds the search snapshot current (only speed is at stake).
    let _ = mem.prepare_search_snapshots();
    if json {
        output::json(&serde_json::json!({"id": m.id, "forgotten": true}))?;
    } else {
        outln!("forgot {}", m.id);
    }
    Ok(ExitCode::SUCCESS)
}
