//! `cairn sync`: the main job: scan, ingest, extract memories from the new turns (offline
//! rules always; phase 1 with a model when `[llm]` is configured), then consolidate.

use std::process::ExitCode;

use anyhow::Result;
use serde::Serialize;

use crate::cmd::{consolidate, extract, ingest, memories, scan};
use crate::homes::Homes;
use crate::output;

#[derive(Serialize)]
pub struct SyncReport {
    pub scan: scan::ScanReport,
    pub ingest: cairn_ingest::IngestReport,
    pub memories: memories::SyncMemories,
    /// Phase 1 (absent without a model provider).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub phase1: Option<cairn_stage1::ExtractReport>,
    pub consolidate: cairn_consolidate::ConsolidateReport,
    /// A config.toml that cannot be read: the run used the defaults (offline, no model).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub config_error: Option<String>,
}

pub fn sync(homes: &Homes, json: bool) -> Result<SyncReport> {
    let mut s = scan::scan(homes)?;
    let mut i = ingest::ingest(homes, json)?;
    // A directory the scan could not read is the same problem when ingest meets it: once.
    // A file both looked at is said once too, by ingest when it says more (it read on where
    // the scan's look at its first lines stopped: a damaged compressed rollout).
    ingest::leave_to_ingest(&mut s.errors, &i.errors);
    ingest::dedup_problems(&mut i.errors, &s.errors);
    let m = memories::extract(homes, memories::Follow::Consolidation, json)?;
    // A broken config.toml must not stop the main job either (the hooks go on with the
    // defaults too): the run uses the defaults and says so.
    let (config, config_error) = match extract::load_config(homes) {
        Ok(c) => (c, None),
        Err(e) => (
            cairn_config::Config::default(),
            Some(format!(
                "{}; this run used the defaults (offline rules, no model)",
                crate::output::error_text(e.as_ref())
            )),
        ),
    };
    // A model that cannot work (bad [llm] settings, a missing key) must not stop the main
    // job: it is reported, and consolidation merges deterministically.
    let p1 = extract::phase1(homes, &config, config.extract.mode, json).unwrap_or_else(|e| {
        Some(cairn_stage1::ExtractReport {
            error: Some(crate::output::error_text(e.as_ref())),
            ..cairn_stage1::ExtractReport::default()
        })
    });
    let consolidated = consolidate::consolidate(homes, &config);
    // Consolidation regenerates the views at its end. When it did not get there (another
    // process holds its lock and may be past its own refresh, or it failed), this run's
    // memories get their views here.
    let refreshed = match &consolidated {
        Ok(r) if !r.busy => Ok(()),
        _ => memories::refresh_views(homes),
    };
    let c = consolidated?;
    refreshed?;
    // Counted again at the end: consolidation may have merged, aged out, or read back memory
    // files dropped into the views.
    let mut m = m;
    m.total = memories::live_total(homes)?;
    Ok(SyncReport {
        scan: s,
        ingest: i,
        memories: m,
        phase1: p1,
        consolidate: c,
        config_error,
    })
}

pub fn print_human(r: &SyncReport) {
    if let Some(e) = &r.config_error {
        outln!("warning: {e}");
        outln!();
    }
    scan::print_human(&r.scan);
    outln!();
    ingest::print_human(&r.ingest);
    memories::print_sync(&r.memories);
    match &r.phase1 {
        Some(p) => extract::print_report(p),
        None => {
            outln!("phase 1: no model configured ([llm] provider = \"none\"); offline rules only")
        }
    }
    consolidate::print_report(&r.consolidate);
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
