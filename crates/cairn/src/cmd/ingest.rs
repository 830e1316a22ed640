//! `cairn ingest`: transcripts → store, incrementally.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use cairn_ingest::{IngestReport, Sources};
use cairn_store::Store;

use crate::homes::Homes;
use crate::output;
use crate::progress::Bar;

pub fn open_store(homes: &Homes) -> Result<Store> {
    let path = homes.db_path();
    Store::open(&path).map_err(|e| cannot_open(e, &path))
}

/// For commands that only read (a search, a list, the context hooks): the store, or, where
/// cairn's data dir may not be written (a read-only mount, an agent's sandbox that allows
/// writes only in the workspace), the existing database opened read-only, so that memory
/// is still there to read. What such a command would have written on the side (recall
/// counts, what a session was shown, search snapshots) is skipped.
pub fn open_store_for_reading(homes: &Homes) -> Result<Store> {
    let path = homes.db_path();
    match Store::open(&path) {
        Ok(s) => Ok(s),
        Err(e) if e.is_write_denied() && path.is_file() => {
            Store::open_read_only(&path).map_err(|ro| {
                let first = cannot_open(e, &path);
                first.context(format!("reading it without writing failed too: {ro}"))
            })
        }
        // Nothing was ever stored there: nothing to read.
        Err(e) if e.is_write_denied() && !path.exists() => {
            Store::empty_stand_in().map_err(|_| cannot_open(e, &path))
        }
        Err(e) => Err(cannot_open(e, &path)),
    }
}

/// [`open_store_for_reading`] for the commands that only show memory (`list`, `show`,
/// `recall`): where nothing was ever stored they find nothing, and make nothing (no data dir,
/// no database) to tell it. (A file where the data dir should be is still an error.)
pub fn open_existing_store_for_reading(homes: &Homes) -> Result<Store> {
    let path = homes.db_path();
    if !path.exists() && !path.is_symlink() && !homes.data_dir.ancestors().any(Path::is_file) {
        return Store::empty_stand_in()
            .with_context(|| format!("cannot open cairn's database at {}", path.display()));
    }
    open_store_for_reading(homes)
}

fn cannot_open(e: cairn_store::StoreError, path: &std::path::Path) -> anyhow::Error {
    let advice = store_advice(&e.to_string());
    anyhow::Error::new(e).context(format!(
        "cannot open cairn's database at {} ({advice})",
        path.display()
    ))
}

/// What to do about a database that cannot be opened, by SQLite's reason.
pub(crate) fn store_advice(error: &str) -> &'static str {
    let e = error.to_ascii_lowercase();
    if e.contains("not a database") || e.contains("malformed") || e.contains("corrupt") {
        "the file is damaged or not cairn's: move it aside and run `cairn sync`, which rebuilds \
         the store from the agents' transcripts and the memory views"
    } else if e.contains("disk is full") || e.contains("no space") {
        "the disk is full: free some space and run the command again"
    } else if e.contains("disk i/o") {
        "SQLite could not write to the disk: check that it has free space (`df -h`) and is not \
         failing, and that cairn may write the directory, or pass --data-dir"
    } else if e.contains("readonly") || e.contains("read-only") || e.contains("permission") {
        "cairn cannot write there: check the directory's permissions, or pass --data-dir"
    } else {
        "check the file and its directory's permissions, or pass --data-dir"
    }
}

pub fn ingest(homes: &Homes, json: bool) -> Result<IngestReport> {
    let mut store = open_store(homes)?;
    let sources = Sources {
        claude_root: Some(homes.claude_root()?.to_path_buf()),
        codex_home: Some(homes.codex_home()?.to_path_buf()),
    };
    let bar = Bar::bytes(json, "ingest");
    let mut report = cairn_ingest::ingest(&mut store, &sources, &bar).context("ingest failed")?;
    dedup_problems(&mut report.errors, &[]);
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    store.set_meta("last_ingest", &now.to_string())?;
    Ok(report)
}

/// Drops repeated problems (a directory that cannot be listed is met once per kind of file
/// looked for in it) and file-level problems already reported in the same words in `known`
/// (by `cairn scan`).
pub fn dedup_problems(
    errors: &mut Vec<cairn_transcript::Problem>,
    known: &[cairn_transcript::Problem],
) {
    let mut seen = std::collections::HashSet::new();
    errors.retain(|e| {
        let dup_of_known = e.line.is_none()
            && known
                .iter()
                .any(|k| k.line.is_none() && k.path == e.path && k.message == e.message);
        !dup_of_known && seen.insert((e.path.clone(), e.line, e.message.clone()))
    });
}

/// Drops the scan's file-level problems about a file ingest reported a file-level problem of
/// its own for, in other words: ingest read the file further than the scan's look at its
/// first lines (a compressed rollout damaged before its first complete line is "cannot read
/// rollout" to the scan, and to ingest what every damaged compressed rollout is), so the
/// file's problem is said once, the way ingest says it for any file.
pub fn leave_to_ingest(
    scan_errors: &mut Vec<cairn_transcript::Problem>,
    ingest_errors: &[cairn_transcript::Problem],
) {
    scan_errors.retain(|s| {
        let mut about_it = ingest_errors
            .iter()
            .filter(|i| i.line.is_none() && i.path == s.path);
        let said_otherwise = about_it.clone().next().is_some();
        let said_alike = about_it.any(|i| i.message == s.message);
        s.line.is_some() || !said_otherwise || said_alike
    });
}

pub fn print_human(r: &IngestReport) {
    outln!(
        "ingested {} from {} file(s): {} new turn(s), {} updated, {} in store",
        output::bytes(r.bytes),
        r.files,
        r.new_turns,
        r.updated_turns,
        r.turns
    );
    // Each count that is not zero gets one line saying what those files, lines or turns are.
    let notes: [(u64, &str); 7] = [
        (
            r.restarted_files,
            "file(s) were truncated or replaced and read again from the start",
        ),
        (
            r.reparsed_files,
            "file(s) read again from the start: an earlier version of cairn read them, and what \
             is stored from them was brought up to date",
        ),
        (r.skipped_lines, "line(s) skipped (malformed)"),
        (
            r.moved_turns,
            "stored turn(s) found unchanged in a file that moved (a rollout Codex archived): \
             they name the new file",
        ),
        (
            r.unrecognised_files,
            "file(s) not read: no line of a Codex rollout format cairn knows (see below)",
        ),
        (
            r.redacted_again,
            "stored turn(s) and digest(s) redacted again: this version's redaction rules find \
             secrets the earlier ones let through",
        ),
        (
            r.memory_disabled_turns,
            "of the new or updated turn(s) are of Codex threads kept out of memory \
             (`memory_mode` not `enabled`): stored, never extracted",
        ),
    ];
    for (count, what) in notes {
        if count > 0 {
            outln!("{count} {what}");
        }
    }
    if !r.errors.is_empty() {
        outln!("{} problem(s):", r.errors.len());
        for e in r.errors.iter().take(20) {
            match e.line {
                Some(l) => outln!("  {}:{}: {}", e.path, l, e.message),
                None => outln!("  {}: {}", e.path, e.message),
            }
        }
        if r.errors.len() > 20 {
            outln!("  … and {} more (use --json for all)", r.errors.len() - 20);
        }
    }
}

pub fn run(homes: &Homes, json: bool) -> Result<ExitCode> {
    let r = ingest(homes, json)?;
    if json {
        output::json(&r)?;
    } else {
        print_human(&r);
    }
    Ok(ExitCode::SUCCESS)
}
