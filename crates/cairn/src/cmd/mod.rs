pub mod consolidate;
pub mod demo;
pub mod doctor;
pub mod eval;
pub mod extract;
pub mod forget;
pub mod hook;
pub mod import;
pub mod ingest;
pub mod install;
pub mod list;
pub mod mcp;
pub mod memo;
pub mod memories;
pub mod model;
pub mod pin;
pub mod recall;
pub mod remember;
pub mod scan;
pub mod show;
pub mod status;
pub mod sync;
pub mod worker;

use std::path::Path;

use anyhow::{Context, Result, bail};

/// Refuses a path the user named that is not a regular file: reading a FIFO would block
/// forever and a device such as `/dev/zero` never ends.
pub(crate) fn require_regular_file(path: &Path, what: &str) -> Result<()> {
    let md = std::fs::metadata(path)
        .with_context(|| format!("cannot read {what} {}", path.display()))?;
    if !md.is_file() {
        bail!(
            "{what} {} is not a regular file; give the path of a file",
            path.display()
        );
    }
    Ok(())
}
