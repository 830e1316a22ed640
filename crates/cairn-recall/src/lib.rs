//! `cairn-recall` owns the ranking of memories: its own `recall_*` tables on a
//! `rusqlite::Connection` the caller gives it (documents keyed by a string id, with scope,
//! text fields, timestamps, recall count and a write-time embedding BLOB, plus an FTS5
//! index), an in-memory copy of the embeddings for brute-force cosine search, the fusion
//! of FTS5 BM25 with static-embedding similarity, small recency and recall-count priors,
//! scope filtering (a search sees exactly the scopes it passes, e.g. `["global",
//! "<project>"]`), and the LoCoMo retrieval evaluation. It must not call an LLM or the
//! network, and it does ranking only: it never decides what is remembered, never edits
//! other tables of the connection, and computes embeddings only for documents being
//! written and for the query being searched (never for stored documents at query time).
//! The only files it writes are its snapshots beside a database file: the vectors'
//! (`<database>-vectors-<model hash>`, see `snapshot`) and the lexical index's
//! (`<database>-lexicon`, see `lexicon`).
//!
//! ```
//! use cairn_recall::{Document, Recall};
//! let conn = rusqlite::Connection::open_in_memory()?;
//! let mut recall = Recall::open(&conn)?;
//! recall.upsert(&conn, &Document {
//!     id: "m1".into(),
//!     scope: "proj-a".into(),
//!     name: "Package manager".into(),
//!     body: "use pnpm, not npm".into(),
//!     ..Document::default()
//! })?;
//! let hits = recall.search(&conn, "which package manager should I use", &["global", "proj-a"], 5, 0)?;
//! assert_eq!(hits[0].id, "m1");
//! # Ok::<(), cairn_recall::RecallError>(())
//! ```
//!
//! Ranking, in [`Mode::Hybrid`] (the default; [`RecallConfig`] holds every knob):
//! 1. lexical: the query's content words (stop words dropped, CJK split per character,
//!    every term quoted, so no user text is ever FTS5 syntax) are OR'ed into an FTS5 MATCH
//!    restricted to the allowed scopes, ranked by `bm25()` with column weights name 2,
//!    description 1.5, body 1, keywords 1 over a `porter unicode61 remove_diacritics 2`
//!    index. Every matching row is scored (an optional [`RecallConfig::lexical_budget`]
//!    matches only the query's rarest words in large stores; off by default, because it
//!    changes the ranking far more than it saves time). A long-lived process can keep a
//!    resident copy of the index ([`RecallConfig::resident_lexical`]) that gives the same
//!    scores to the last bit without asking SQLite; a one-shot process maps the same
//!    index, compacted into a file beside the database ([`RecallConfig::lexicon_file`]);
//! 2. semantic: the query is embedded with [`cairn_embed`] (the model the stored vectors
//!    were computed with, recorded in `recall_meta.embed_model`: the static table, or the
//!    full transformer when that tier is active; [`Recall::reembed_pending`] moves the
//!    stored vectors to the active tier on the sync path) and compared with every
//!    in-scope document vector (int8, in memory; above 16,384 documents in scope, from a
//!    process's second search on, all are ranked first by the Hamming distance of their
//!    sign signatures and only the closest `max(10n, 1024)` are scored with their
//!    vectors). Stored
//!    documents are embedded at write time (name + description + body, plus keywords at
//!    weight 0.2), never at query time;
//! 3. fusion ([`Fusion::Convex`], alpha 0.4): `0.4 * bm25 / max_bm25 + 0.6 * cosine /
//!    max_cosine` over the union of both top-100 lists, every candidate with its exact
//!    cosine. Reciprocal rank fusion is available and measured worse on LoCoMo (session
//!    hit@1 0.58-0.60 against 0.645 with turn-only documents);
//! 4. priors: the fused score is multiplied by `1 + 0.05 * 2^(-age_days / 30) +
//!    0.05 * n / (n + 5)` for a document updated `age_days` before `now` and recalled `n`
//!    times, so they reorder near-ties only.
//!
//! [`eval_locomo`] runs the LoCoMo retrieval evaluation (see [`locomo`]).

mod engine;
mod error;
mod lexical;
mod lexicon;
pub mod locomo;
pub mod query;
mod snapshot;
mod vectors;

pub use engine::{
    Document, FileState, Fusion, Hit, Mode, Recall, RecallConfig, Reembedded, SearchFiles,
    search_files,
};
pub use error::RecallError;
pub use locomo::{LocomoMetrics, LocomoOptions, LocomoReport, eval_locomo, eval_locomo_with};

#[cfg(test)]
mod lexicon_tests;
#[cfg(test)]
mod resident_tests;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tier_tests;
