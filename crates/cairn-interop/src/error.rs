//! The errors that stop an import, an export or a check as a whole. Per-project failures
//! are values in the reports, not errors.

use std::io;
use std::path::PathBuf;

/// The exact text Codex's importer uses when a workspace lock is held.
pub const BUSY_MESSAGE: &str =
    "memory workspace is busy; retry after consolidation or another import finishes";

#[derive(Debug, thiserror::Error)]
pub enum InteropError {
    /// A workspace lock is held by another process; nothing was written.
    #[error("memory workspace is busy; retry after consolidation or another import finishes")]
    Busy,
    /// A project key that is not one plain path component (`..`, `a/b`, absolute).
    #[error("memory project key is not a single path component: {0}")]
    InvalidKey(String),
    /// A path cairn would write through is a symbolic link; nothing was written there.
    #[error("refusing to write through a symbolic link: {0}")]
    Symlink(PathBuf),
    /// A `--map KEY=DIR` argument that cannot be used.
    #[error("--map {arg}: {message}")]
    Map { arg: String, message: String },
    /// The agent's home does not exist: it is not created for an import.
    #[error(
        "{0} does not exist: is Codex installed? If it keeps its files elsewhere, point cairn there with --codex-home (or CODEX_HOME)"
    )]
    NoCodexHome(PathBuf),
    /// A configuration file that cannot be parsed.
    #[error("cannot read {path}: {message}")]
    Config { path: PathBuf, message: String },
    #[error("{path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

impl InteropError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: io::Error) -> InteropError {
        InteropError::Io {
            path: path.into(),
            source,
        }
    }
}

/// `Result` with [`InteropError`].
pub type Result<T> = std::result::Result<T, InteropError>;
