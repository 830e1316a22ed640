//! `cairn consolidate`: phase 2 (merge, withdraw, age out, views, Codex workspace).

use std::process::ExitCode;

use anyhow::{Context, Result};
use cairn_config::Config;
use cairn_consolidate::{ConsolidateReport, Consolidator};

use crate::cmd::extract::{client, clock, load_config};
use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

/// Runs one consolidation.
pub fn consolidate(homes: &Homes, config: &Config) -> Result<ConsolidateReport> {
    let (client, note) = match client(config) {
        Ok(c) => (c, None),
        Err(e) => (
            None,
            Some(format!(
                "{}; merged without the model",
                crate::output::error_text(e.as_ref())
            )),
        ),
    };
    let mut mem = memories::open(homes)?;
    let mut r = Consolidator {
        mem: &mut mem,
        config,
        client: client.as_ref(),
        data_dir: &homes.data_dir,
        codex_home: Some(homes.codex_home()?),
    }
    .run(clock())
    .context("consolidation failed")?;
    // Only speed is at stake: a failure leaves the snapshots to the next search.
    let _ = mem.prepare_search_snapshots();
    if r.merge_note.is_none() {
        r.merge_note = note;
    }
    Ok(r)
}

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let config = load_config(homes)?;
    let r = consolidate(homes, &config)?;
    if json {
        output::json(&r)?;
    } else {
        print_report(&r);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn print_report(r: &ConsolidateReport) {
    if r.busy {
        outln!("consolidate: another consolidation is running; nothing to do");
        return;
    }
    let d = &r.diff;
    outln!(
        "consolidate: {} input(s) added, {} updated, {} removed ({} unchanged); {} merge",
        d.added.len(),
        d.updated.len(),
        d.removed.len(),
        d.unchanged,
        r.merge
    );
    outln!(
        "  memories: {} created, {} updated, {} superseded, {} skipped, {} withdrawn, {} aged out; {} phase-1 output(s) pruned",
        r.created,
        r.updated,
        r.superseded,
        r.skipped,
        r.withdrawn.len(),
        r.aged_out.len(),
        r.stage1_pruned
    );
    if r.memory_disabled > 0 {
        outln!(
            "  {} phase-1 output(s) dropped: their Codex threads are kept out of memory \
             (`memory_mode` not `enabled`), so what they alone gave is withdrawn",
            r.memory_disabled
        );
    }
    if let Some(n) = &r.merge_note {
        outln!("  note: {n}");
    }
    if let Some(w) = &r.workspace {
        match &w.error {
            Some(e) => outln!("  codex workspace NOT updated (the previous files stay): {e}"),
            None => outln!(
                "  codex workspace: {} file(s) written, {} removed, {} unchanged in {}",
                w.written,
                w.removed,
                w.unchanged,
                w.roots.join(", ")
            ),
        }
        for kept in &w.kept_aside {
            outln!("  codex workspace: a file cairn did not write was replaced; its copy: {kept}");
        }
    }
    for p in &r.problems {
        outln!("  problem: {p}");
    }
}
