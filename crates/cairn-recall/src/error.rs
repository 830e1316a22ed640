//! Library errors.

/// Errors from the recall engine and the LoCoMo evaluation.
#[derive(Debug, thiserror::Error)]
pub enum RecallError {
    /// SQLite failed.
    #[error("sqlite: {0}")]
    Sqlite(#[from] rusqlite::Error),
    /// The embedded embedding table could not be loaded.
    #[error("embedding model: {0}")]
    Embed(String),
    /// The recall tables were written by an incompatible version.
    #[error("recall tables have schema version {0}, this build understands 1")]
    Schema(i64),
    /// Reading an evaluation file failed.
    #[error("reading {path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// An evaluation file is not valid JSON.
    #[error("parsing {path}: {source}")]
    Json {
        /// The file.
        path: String,
        /// The cause.
        source: serde_json::Error,
    },
    /// An evaluation file is JSON but not in the expected shape.
    #[error("{path}: {message}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        message: String,
    },
}
