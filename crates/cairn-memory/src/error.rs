//! Library errors.

use std::path::PathBuf;

/// Errors from the memory store.
#[derive(Debug, thiserror::Error)]
pub enum MemoryError {
    /// SQLite failed.
    #[error("database error: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The transcript store failed.
    #[error(transparent)]
    Store(#[from] cairn_store::StoreError),
    /// The recall index failed.
    #[error("recall index: {0}")]
    Recall(#[from] cairn_recall::RecallError),
    /// A file or directory of the markdown views could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        #[source]
        source: std::io::Error,
    },
    /// The memory tables were written by a newer cairn.
    #[error(
        "the memory tables were written by a newer cairn (schema {found}, this build knows {known}); upgrade cairn"
    )]
    TooNew {
        /// Version in the database.
        found: i64,
        /// Version this build writes.
        known: i64,
    },
    /// No memory has this id.
    #[error("no memory with id {0:?} (see `cairn list`)")]
    NotFound(String),
    /// The caller passed something unusable (empty text, unknown type, ...).
    #[error("{0}")]
    Invalid(String),
}

impl MemoryError {
    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        MemoryError::Io {
            path: path.into(),
            source,
        }
    }
}

/// Result alias of this crate.
pub type Result<T, E = MemoryError> = std::result::Result<T, E>;
