//! Phase 1 of model extraction: what a model finds worth remembering in a session's new turns.
//!
//! This crate owns the phase-1 pipeline (the Codex `stage1` step, run per turn like Claude Code's
//! extractor or in idle-time batches like Codex): choosing the sessions that have new turns
//! ([`select`]), rendering their events into a filtered, redacted, capped, head+tail-truncated
//! input ([`input`]), the prompt and its strict output schema ([`prompt`]), the `stage1_outputs`
//! table with one row per (agent, session, last turn), the per-session cursors, the token ledger
//! and its daily and per-run budgets ([`usage`]), and the run itself with its lock and trailing
//! follow-up run ([`run`]). It must not write memories (phase 2, `cairn-consolidate`, merges the
//! proposals), talk HTTP itself (that is `cairn-llm`), read agent files (it reads the turns
//! `cairn-ingest` stored), or run on the hook or recall paths. Every text it stores passes
//! through `cairn_redact` again, whatever the model answered.

pub mod input;
pub mod prompt;
pub mod run;
mod schema;
pub mod select;
pub mod usage;

pub use run::{
    Estimate, ExtractReport, Extractor, MAX_PROPOSED_MEMORIES, NoProgress, Progress,
    ProposedMemory, Stage1Output, UnitOutcome, delete_outputs, outputs, proposed_memories,
};
pub use schema::{
    COMPONENT as SCHEMA_COMPONENT, VERSION as SCHEMA_VERSION, ensure as ensure_schema,
    readable as schema_readable,
};
pub use select::{Unit, select_units};
pub use usage::{Budget, BudgetStop, Ledger, UsageTotals};

/// What went wrong in phase 1.
#[derive(Debug, thiserror::Error)]
pub enum Stage1Error {
    #[error(transparent)]
    Sql(#[from] rusqlite::Error),
    #[error(transparent)]
    Store(#[from] cairn_store::StoreError),
    #[error(transparent)]
    Memory(#[from] cairn_memory::MemoryError),
    #[error(
        "cairn's database has a newer stage-1 layout (version {found}; this cairn knows {known}); upgrade cairn"
    )]
    TooNew { found: i64, known: i64 },
    #[error("cannot use the lock file {path}: {source}")]
    Lock {
        path: std::path::PathBuf,
        #[source]
        source: std::io::Error,
    },
}

pub type Result<T, E = Stage1Error> = std::result::Result<T, E>;
