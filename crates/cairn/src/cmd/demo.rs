//! `cairn demo`: the bundled sample home, copied to a temporary directory, synced.
//!
//! The sample files write the user's home as `/SAMPLE_HOME` (and Claude Code project keys as
//! `-SAMPLE-HOME-…`); the copy replaces both with the temporary directory, so working
//! directories resolve and keys match the paths exactly as Claude Code would derive them.

use std::path::Path;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::cmd::sync;
use crate::homes::Homes;
use crate::output;

mod embedded {
    include!(concat!(env!("OUT_DIR"), "/sample_home.rs"));
}

const PLACEHOLDER: &str = "/SAMPLE_HOME";
const KEY_PLACEHOLDER: &str = "-SAMPLE-HOME";

/// Writes the sample home into `root` (which must exist), rewriting the placeholders.
pub fn materialize(root: &Path) -> Result<usize> {
    std::fs::create_dir_all(root).with_context(|| format!("cannot create {}", root.display()))?;
    let root = root
        .canonicalize()
        .with_context(|| format!("cannot resolve {}", root.display()))?;
    let root_str = root.to_string_lossy().into_owned();
    let key_prefix = cairn_transcript::claude_project_key(&root_str);
    for (rel, bytes) in embedded::SAMPLE_HOME {
        let rel = rel.replace(KEY_PLACEHOLDER, &key_prefix);
        let dest = root.join(&rel);
        if let Some(dir) = dest.parent() {
            std::fs::create_dir_all(dir)
                .with_context(|| format!("cannot create {}", dir.display()))?;
        }
        let data: Vec<u8> = match std::str::from_utf8(bytes) {
            Ok(text) => text
                .replace(PLACEHOLDER, &root_str)
                .replace(KEY_PLACEHOLDER, &key_prefix)
                .into_bytes(),
            Err(_) => bytes.to_vec(),
        };
        std::fs::write(&dest, data).with_context(|| format!("cannot write {}", dest.display()))?;
    }
    Ok(embedded::SAMPLE_HOME.len())
}

pub fn run(keep: bool, json: bool) -> Result<ExitCode> {
    let tmp = tempfile::Builder::new()
        .prefix("cairn-demo-")
        .tempdir()
        .context("cannot create a temporary directory")?;
    let n = materialize(tmp.path())?;
    let root = tmp.path().canonicalize()?;
    let homes = Homes::under(&root);
    let report = sync::sync(&homes, json)?;
    if json {
        output::json(&serde_json::json!({
            "home": root.display().to_string(),
            "kept": keep,
            "sync": report,
        }))?;
    } else {
        outln!("Sample home with {n} files copied to {}", root.display());
        outln!();
        sync::print_human(&report);
    }
    if keep {
        let path = tmp.keep();
        if !json {
            outln!();
            outln!("Kept {}; try:", path.display());
            outln!(
                "  cairn --claude-dir {0}/.claude --codex-home {0}/.codex --data-dir {0}/.cairn scan",
                path.display()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
