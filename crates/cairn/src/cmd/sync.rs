//! `cairn sync`: the main job: scan, ingest, then extract memories from the new turns.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use crate::cmd::{ingest, memories, scan};
use crate::homes::Homes;
use crate::output;

#[derive(Serialize)]
pub struct SyncReport {
    pub scan: scan::ScanReport,
    pub ingest: cairn_ingest::IngestReport,
    pub memories: memories::SyncMemories,
}

pub fn sync(homes: &Homes, json: bool) -> Result<SyncReport> {
    let s = scan::scan(homes);
    let i = ingest::ingest(homes, json)?;
    let m = memories::extract(homes)?;
    Ok(SyncReport {
        scan: s,
        ingest: i,
        memories: m,
    })
}

pub fn print_human(r: &SyncReport) {
    scan::print_human(&r.scan);
    println!();
    ingest::print_human(&r.ingest);
    memories::print_sync(&r.memories);
}

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let r = sync(homes, json)?;
    if json {
        output::json(&r)?;
    } else {
        print_human(&r);
    }
    Ok(ExitCode::SUCCESS)
}
