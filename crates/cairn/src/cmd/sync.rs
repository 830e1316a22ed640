//! `cairn sync`: the main job. For now: scan, then ingest.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use crate::cmd::{ingest, scan};
use crate::homes::Homes;
use crate::output;

#[derive(Serialize)]
pub struct SyncReport {
    pub scan: scan::ScanReport,
    pub ingest: cairn_ingest::IngestReport,
}

pub fn sync(homes: &Homes, json: bool) -> Result<SyncReport> {
    let s = scan::scan(homes);
    let i = ingest::ingest(homes, json)?;
    Ok(SyncReport { scan: s, ingest: i })
}

pub fn print_human(r: &SyncReport) {
    scan::print_human(&r.scan);
    println!();
    ingest::print_human(&r.ingest);
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
