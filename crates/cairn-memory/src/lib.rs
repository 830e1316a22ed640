//! `cairn-memory` owns cairn's memories: the typed memory model (user, feedback, project,
//! reference; global or per-project scope; rule, **Why:** and **How to apply:**; provenance;
//! recall counts; supersession and tombstones), its tables in cairn's SQLite database (created
//! here, versioned in `schema_versions`), the recall index kept in step on every write, the
//! offline extraction of explicit memory statements from ingested turns (English, Japanese,
//! Chinese in Simplified or Traditional characters; relative dates made absolute; duplicates
//! merged, contradictions superseded; turns in which the agent wrote memory itself skipped),
//! the human-editable markdown views
//! (`<data dir>/memory/<scope>/`, `MEMORY.md`), and the context given to the agents (a
//! session-start summary under a token budget, relevant memories per prompt framed as quoted
//! data). It must not parse agent files (that is `cairn-transcript`), rank (that is
//! `cairn-recall`), call a model or the network, touch the transcript tables except through
//! `cairn_store::Store`, or write outside the views directory it is given. Every text it
//! stores or emits passes through `cairn_redact`.
//!
//! ```
//! use cairn_memory::{MemoryStore, MemoryType, NewMemory, Source};
//! let store = cairn_store::Store::open_in_memory()?;
//! let mut mem = MemoryStore::open(store)?;
//! let now = 1_795_000_000;
//! mem.remember(NewMemory {
//!     memory_type: MemoryType::Feedback,
//!     scope: "/work/webshop".into(),
//!     rule: "Use pnpm, not npm.".into(),
//!     why: Some("npm rewrites pnpm-lock.yaml".into()),
//!     how: None,
//!     name: None,
//!     description: None,
//!     source: Source::manual(),
//!     at: now,
//! }, now)?;
//! let hits = mem.recall("which package manager should I use", "/work/webshop", 5, now)?;
//! assert_eq!(hits[0].memory.rule, "Use pnpm, not npm.");
//! assert!(mem.recall("package manager", "/work/other", 5, now)?.is_empty());
//! # Ok::<(), cairn_memory::MemoryError>(())
//! ```

mod context;
pub mod dates;
mod error;
pub mod extract;
mod harvest;
pub mod keywords;
mod merge;
mod model;
mod schema;
pub mod scope;
pub mod similar;
mod store;
mod t2s;
pub mod text;
mod tombstones;
pub mod views;

pub use context::{
    DEFAULT_SESSION_BUDGET, MAX_PROMPT_MEMORIES, SESSION_MAX_CHARS, age_phrase, days_old,
    freshness_note, ignores_memory, neutralise,
};
pub use error::{MemoryError, Result};
pub use extract::{
    AgentMemoryDirs, Candidate, Retraction, candidates, classify, guess_type, holds_everywhere,
    retractions,
};
pub use harvest::{
    EXTRACTION_MARK, EXTRACTOR_VERSION, ExtractReport, KEYWORDS_MARK, REDACTION_MARK,
    RELATION_MARK, RELATION_VERSION,
};
pub use merge::{Directive, MergeAction, MergeOutcome};
pub use model::{
    Memory, MemoryType, NewMemory, Source, format_time, parse_body, parse_time, render_body,
};
pub use schema::{COMPONENT as SCHEMA_COMPONENT, VERSION as SCHEMA_VERSION};
pub use scope::{GLOBAL, project_scope, scope_label, scope_slug};
pub use store::{
    Action, ListFilter, MAX_MEMORY_BYTES, MemoryStore, Recalled, WriteOutcome, derive_description,
    derive_name,
};
pub use views::ViewReport;
