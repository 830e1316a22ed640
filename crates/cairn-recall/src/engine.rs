//! The recall index: tables, writes, and hybrid search.

use std::collections::HashMap;
use std::sync::Arc;

use cairn_embed::TextEmbedder;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::error::RecallError;
use crate::lexical::{Plan, Resident};
use crate::lexicon::LexiconView;
use crate::query::{fts_match_terms, has_cjk_pairs, query_terms, quote, space_cjk};
use crate::vectors::{Meta, VectorCache, quantize};

/// Weight of the keywords' embedding added to the (unit) embedding of name, description
/// and body before normalisation: keywords are mostly lexical hooks, and long keyword
/// lists must not drown the memory's own text (measured on LoCoMo: 0.2 beats 0 and 1).
const KEYWORDS_EMBED_WEIGHT: f32 = 0.2;

/// Bumped when the table layout changes.
const SCHEMA_VERSION: i64 = 1;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS recall_meta (
    key   TEXT PRIMARY KEY,
    value ANY NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS recall_docs (
    rowid        INTEGER PRIMARY KEY,
    id           TEXT NOT NULL UNIQUE,
    scope        TEXT NOT NULL,
    name         TEXT NOT NULL,
    description  TEXT NOT NULL,
    body         TEXT NOT NULL,
    keywords     TEXT NOT NULL,
    created_at   INTEGER NOT NULL,
    updated_at   INTEGER NOT NULL,
    recall_count INTEGER NOT NULL,
    embedding    BLOB NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS recall_docs_scope ON recall_docs(scope);
CREATE VIRTUAL TABLE IF NOT EXISTS recall_fts USING fts5(
    name, description, body, keywords, scope_tok,
    content='', contentless_delete=1,
    tokenize='porter unicode61 remove_diacritics 2'
);
";

/// The counters every index has; inserted only when missing, so that opening an existing
/// index never takes the write lock (hooks open it on every prompt).
const META_DEFAULTS: &str = "
INSERT OR IGNORE INTO recall_meta(key, value) VALUES ('generation', 0);
INSERT OR IGNORE INTO recall_meta(key, value) VALUES ('docs_generation', 0);
INSERT OR IGNORE INTO recall_meta(key, value) VALUES ('text_generation', 0);
INSERT OR IGNORE INTO recall_meta(key, value) VALUES ('index_id', lower(hex(randomblob(16))));
";

/// The tables, triggers and counters of the index, created where missing, and the layout
/// version checked; then the fingerprint of this DDL is recorded so that later opens skip
/// it (parsing it costs a search on someone's clock about half a millisecond).
fn create_schema(conn: &Connection) -> Result<(), RecallError> {
    conn.execute_batch(SCHEMA)?;
    let defaults: i64 = conn.query_row(
        "SELECT count(*) FROM recall_meta
         WHERE key IN ('generation', 'docs_generation', 'text_generation', 'index_id')",
        [],
        |r| r.get(0),
    )?;
    if defaults < 4 {
        conn.execute_batch(META_DEFAULTS)?;
    }
    conn.execute_batch(crate::snapshot::SCHEMA)?;
    conn.execute_batch(crate::lexical::SCHEMA)?;
    let version: Option<i64> = conn
        .query_row(
            "SELECT value FROM recall_meta WHERE key = 'schema_version'",
            [],
            |r| r.get(0),
        )
        .optional()?;
    match version {
        None => {
            conn.execute(
                "INSERT INTO recall_meta(key, value) VALUES ('schema_version', ?1)",
                [SCHEMA_VERSION],
            )?;
        }
        Some(v) if v != SCHEMA_VERSION => return Err(RecallError::Schema(v)),
        Some(_) => {}
    }
    // Best effort and without waiting: a busy or read-only database only repeats the DDL
    // on the next open.
    crate::snapshot::without_waiting(conn, || {
        conn.execute(
            "INSERT OR REPLACE INTO recall_meta(key, value) VALUES ('ddl', ?1)",
            [ddl_fingerprint()],
        )
    });
    Ok(())
}

/// Whether this build's DDL already ran on this database (its fingerprint is recorded).
fn schema_is_current(conn: &Connection) -> bool {
    conn.query_row("SELECT value FROM recall_meta WHERE key = 'ddl'", [], |r| {
        r.get::<_, String>(0)
    })
    .is_ok_and(|v| v == ddl_fingerprint())
}

/// A fingerprint of every statement [`create_schema`] runs (FNV-1a over their text and the
/// layout version): any change to them makes existing databases run them again.
fn ddl_fingerprint() -> String {
    let version = SCHEMA_VERSION.to_string();
    let parts = [
        SCHEMA,
        META_DEFAULTS,
        crate::snapshot::SCHEMA,
        crate::lexical::SCHEMA,
        &version,
    ];
    format!(
        "{:016x}",
        fnv1a(parts.iter().flat_map(|p| p.bytes().chain([0])))
    )
}

/// A document to index. `scope` is an opaque string (e.g. `"global"` or a project key);
/// searches pass the scopes they may see. Timestamps are Unix seconds.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Document {
    /// Caller's key; upserting an existing id replaces the document.
    pub id: String,
    /// Visibility scope.
    pub scope: String,
    /// Short title.
    pub name: String,
    /// One-line summary.
    pub description: String,
    /// Full text.
    pub body: String,
    /// Extra search terms.
    pub keywords: Vec<String>,
    /// Creation time (Unix seconds).
    pub created_at: i64,
    /// Last update time (Unix seconds); the recency prior uses it.
    pub updated_at: i64,
    /// How often the document has been recalled; the popularity prior uses it.
    pub recall_count: i64,
}

impl Document {
    /// The main text that is embedded: name, description and body (keywords are added
    /// separately, at a lower weight).
    pub fn embedding_text(&self) -> String {
        let mut s = String::with_capacity(
            self.name.len() + self.description.len() + self.body.len() + 16 * self.keywords.len(),
        );
        for part in [&self.name, &self.description, &self.body] {
            if !part.is_empty() {
                if !s.is_empty() {
                    s.push_str(". ");
                }
                s.push_str(part);
            }
        }
        s
    }
}

/// Which rankers contribute.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Mode {
    /// FTS5 BM25 only.
    Lexical,
    /// Static-embedding cosine only.
    Semantic,
    /// Both, fused.
    Hybrid,
}

/// How the lexical and semantic lists are combined in [`Mode::Hybrid`].
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Fusion {
    /// Reciprocal rank fusion: `sum w / (k + rank)`, ranks from 1.
    Rrf {
        /// Smoothing constant (60 in the original paper).
        k: f64,
        /// Weight of the lexical list.
        lexical: f64,
        /// Weight of the semantic list.
        semantic: f64,
    },
    /// Convex combination of normalised scores:
    /// `alpha * bm25 / max_bm25 + (1 - alpha) * max(cosine, 0) / max_cosine`, where the
    /// maxima are over the candidate set (every candidate gets its exact cosine; a
    /// candidate outside the lexical list has BM25 0).
    Convex {
        /// Weight of the lexical score.
        alpha: f64,
    },
}

/// Tunable ranking parameters. [`RecallConfig::default`] holds the measured defaults.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RecallConfig {
    /// Which rankers contribute.
    pub mode: Mode,
    /// How hybrid lists are fused.
    pub fusion: Fusion,
    /// BM25 column weights: name, description, body, keywords.
    pub field_weights: [f64; 4],
    /// Candidates taken from each ranker before fusion (at least `k`).
    pub candidates: usize,
    /// Multiplicative recency boost: `score * (1 + recency_weight * 2^(-age / half_life))`.
    pub recency_weight: f64,
    /// Half-life of the recency boost, in days.
    pub recency_half_life_days: f64,
    /// Multiplicative popularity boost: `score * (1 + recall_weight * n / (n + 5))`
    /// for a document recalled `n` times.
    pub recall_weight: f64,
    /// Optional latency guard for large stores, off (0) by default: when the store holds
    /// more documents than this, lexical matching keeps only the query's rarest words
    /// whose document frequencies add up to at most this many rows (FTS5 computes `bm25()`
    /// for every matching row, about a microsecond each). It trades ranking for time, and
    /// badly when the budget is a small share of the store: on LoCoMo, a budget of a third
    /// of each conversation costs 2 points of session hit@1 and a sixth 7 points; with
    /// 2,000 over 10,000 synthetic memories only 57% of the top 5 stayed the same.
    pub lexical_budget: usize,
    /// Rank exactly, for measuring the shortcuts: no lexical budget, and every in-scope
    /// vector scored with all its dimensions (normally, over large scopes, a first pass
    /// compares sign signatures and scores a shortlist).
    pub exhaustive: bool,
    /// Keep a resident copy of the lexical index in this process (for long-lived ones: the
    /// MCP server). It ranks exactly as FTS5 does, several times faster over large stores,
    /// and follows every writer's changes; the first search starts building it (about 30 µs
    /// a document; on a thread of its own for a database file, FTS5 answering meanwhile),
    /// and it holds about 1 KB of memory per document of some 60 words; until it is built,
    /// the lexicon file or FTS5 answers. Off by default: a process that searches once (a
    /// hook, `cairn recall`) is faster reading the lexicon file.
    pub resident_lexical: bool,
    /// Without a resident index, rank by BM25 from the lexicon file beside a database file
    /// (`<database>-lexicon`, written by [`Recall::prepare_snapshots`]) when it is current
    /// or nearly so, instead of asking FTS5: the same scores, without decoding and scoring
    /// every matching row in SQLite (see `lexicon`); a long-lived process reads it while
    /// its resident index is being built. On by default; off only to compare.
    pub lexicon_file: bool,
}

impl Default for RecallConfig {
    fn default() -> Self {
        Self {
            mode: Mode::Hybrid,
            fusion: Fusion::Convex { alpha: 0.4 },
            field_weights: [2.0, 1.5, 1.0, 1.0],
            candidates: 100,
            recency_weight: 0.05,
            recency_half_life_days: 30.0,
            recall_weight: 0.05,
            lexical_budget: 0,
            exhaustive: false,
            resident_lexical: false,
            lexicon_file: true,
        }
    }
}

/// Where a file that new processes read instead of the database stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "state")]
pub enum FileState {
    /// Up to date.
    Current,
    /// Usable: a search reads the `changes` documents changed since it was written on top.
    Behind { changes: usize },
    /// Out of date: searches do without it until it is rewritten (the vector snapshot by the
    /// next search, the lexicon file by the next write or sync).
    Stale,
    /// Not written yet (or unreadable).
    Missing,
    /// An in-memory database, or no recall index yet: no file.
    NotUsed,
}

/// The files beside a database file that new processes (hooks, `cairn recall`) map instead
/// of reading the index from SQLite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SearchFiles {
    /// The vector snapshot (`<database>-vectors-<model hash>`).
    pub vectors: FileState,
    /// The lexicon file (`<database>-lexicon`).
    pub lexicon: FileState,
}

/// Where the search files of the recall index in `conn` stand. Reads only: the recall
/// tables are not created when missing.
pub fn search_files(conn: &Connection) -> Result<SearchFiles, RecallError> {
    let has_index: bool = conn.query_row(
        "SELECT EXISTS(SELECT 1 FROM sqlite_schema WHERE name = 'recall_meta')",
        [],
        |r| r.get(0),
    )?;
    if !has_index {
        return Ok(SearchFiles {
            vectors: FileState::NotUsed,
            lexicon: FileState::NotUsed,
        });
    }
    let vectors = crate::snapshot::file_state(conn)?;
    let lexicon = crate::lexicon::file_state(conn)?;
    Ok(SearchFiles { vectors, lexicon })
}

/// One search result.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Hit {
    /// The document's id.
    pub id: String,
    /// Final score (higher is better; only comparable within one search).
    pub score: f64,
    /// BM25 score (higher is better) when the document matched lexically.
    pub bm25: Option<f64>,
    /// Cosine between query and document embeddings (when semantic ranking ran).
    pub cosine: Option<f32>,
    /// 1-based rank in the lexical list.
    pub lexical_rank: Option<usize>,
    /// 1-based rank in the semantic list.
    pub semantic_rank: Option<usize>,
}

/// The recall index over one SQLite connection. It owns the `recall_*` tables and keeps
/// an in-memory copy of the embeddings (loaded on first search, kept in step with its own
/// writes, reloaded when another writer bumped `recall_meta.generation`).
pub struct Recall {
    config: RecallConfig,
    /// The model of the stored vectors: queries and writes use it, so a search never
    /// compares vectors of two models.
    embedder: Arc<dyn TextEmbedder>,
    /// The active tier's model; when it is not `embedder`, [`Recall::reembed_pending`]
    /// (the sync path) recomputes the stored vectors with it.
    preferred: Arc<dyn TextEmbedder>,
    model: String,
    cache: VectorCache,
    scratch: Vec<(f32, i64)>,
    /// Document frequencies of query words, for the lexical latency budget (counted on
    /// first use, keyed by `recall_meta.docs_generation`).
    term_stats: Option<(i64, HashMap<String, u32>)>,
    /// Searching a static-tier copy of the vectors: the stored ones come from a model this
    /// process may not load (`cairn_embed::tier::set_model_loading(false)`: hooks and
    /// `cairn recall` never load the full transformer). The copy is computed from the
    /// documents' text (about 50,000 a second) and kept as a snapshot of its own; nothing
    /// stored changes. A write leaves the copy and loads the stored model.
    static_copy: bool,
    /// The resident lexical index ([`RecallConfig::resident_lexical`]).
    resident: Resident,
    /// The lexicon file and the changes read on top of it ([`RecallConfig::lexicon_file`]).
    lexicon: Option<LexiconView>,
}

impl std::fmt::Debug for Recall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Recall")
            .field("config", &self.config)
            .field("model", &self.model)
            .finish_non_exhaustive()
    }
}

/// Per-candidate evidence gathered during ranking.
#[derive(Debug, Default, Clone, Copy)]
struct Cand {
    bm25: Option<f64>,
    cosine: Option<f32>,
    lex_rank: Option<usize>,
    sem_rank: Option<usize>,
}

/// Scope token stored in the FTS index: a fixed-width hash, so that scope strings never
/// tokenize into words that another scope could share.
pub(crate) fn scope_token(scope: &str) -> String {
    format!("s{:016x}", fnv1a(scope.bytes()))
}

/// FNV-1a, 64 bits: the crate's stable, non-cryptographic fingerprint of short texts
/// (scope tokens, the DDL fingerprint, snapshot file names).
pub(crate) fn fnv1a(bytes: impl IntoIterator<Item = u8>) -> u64 {
    bytes.into_iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// Documents' stored embeddings: the unit embedding of name + description + body, plus
/// [`KEYWORDS_EMBED_WEIGHT`] times the unit embedding of the keywords, renormalised.
fn doc_embeddings(
    embedder: &dyn TextEmbedder,
    docs: &[&Document],
) -> Result<Vec<Vec<f32>>, RecallError> {
    let embed_err = |e: cairn_embed::EmbedError| RecallError::Embed(e.to_string());
    let texts: Vec<String> = docs.iter().map(|d| d.embedding_text()).collect();
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let mut out = embedder.embed_batch(&refs).map_err(embed_err)?;
    let kw: Vec<(usize, String)> = docs
        .iter()
        .enumerate()
        .filter(|(_, d)| !d.keywords.is_empty())
        .map(|(i, d)| (i, d.keywords.join(", ")))
        .collect();
    let refs: Vec<&str> = kw.iter().map(|(_, k)| k.as_str()).collect();
    let kvecs = embedder.embed_batch(&refs).map_err(embed_err)?;
    for ((i, _), k) in kw.iter().zip(&kvecs) {
        let v = &mut out[*i];
        v.iter_mut()
            .zip(k)
            .for_each(|(a, b)| *a += KEYWORDS_EMBED_WEIGHT * b);
        cairn_embed::normalize(v);
    }
    Ok(out)
}

/// The `recall_meta.embed_model` tag of vectors made by `embedder`.
fn model_tag(embedder: &dyn TextEmbedder) -> String {
    format!("cairn-embed/{}/kw{KEYWORDS_EMBED_WEIGHT}", embedder.id())
}

/// What [`Recall::reembed_pending`] did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reembedded {
    /// Documents whose vectors were recomputed.
    pub documents: usize,
    /// The model they were computed with before.
    pub from: String,
    /// The model they are computed with now.
    pub to: String,
}

fn blob_of(v: &[f32]) -> Vec<u8> {
    v.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn vec_of(b: &[u8]) -> Vec<f32> {
    b.chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn keywords_to_db(k: &[String]) -> String {
    k.join("\n")
}

fn keywords_from_db(k: &str) -> Vec<String> {
    k.split('\n')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Every document's text fields, by rowid.
fn read_docs(conn: &Connection) -> Result<Vec<(i64, Document)>, RecallError> {
    let mut st = conn
        .prepare("SELECT rowid, id, scope, name, description, body, keywords FROM recall_docs")?;
    let rows = st
        .query_map([], |r| {
            let kw: String = r.get(6)?;
            Ok((
                r.get(0)?,
                Document {
                    id: r.get(1)?,
                    scope: r.get(2)?,
                    name: r.get(3)?,
                    description: r.get(4)?,
                    body: r.get(5)?,
                    keywords: keywords_from_db(&kw),
                    ..Document::default()
                },
            ))
        })?
        .collect::<Result<_, _>>()?;
    Ok(rows)
}

/// Fills `cache` with `embedder`'s vectors of every document, computed from its text (the
/// static copy of a store whose vectors come from a model that may not be loaded).
fn static_copy_into(
    conn: &Connection,
    embedder: &dyn TextEmbedder,
    cache: &mut VectorCache,
) -> Result<(), RecallError> {
    let docs = read_docs(conn)?;
    let mut st = conn.prepare("SELECT rowid, updated_at, recall_count FROM recall_docs")?;
    let times: HashMap<i64, (i64, i64)> = st
        .query_map([], |r| Ok((r.get(0)?, (r.get(1)?, r.get(2)?))))?
        .collect::<Result<_, _>>()?;
    for chunk in docs.chunks(256) {
        let refs: Vec<&Document> = chunk.iter().map(|(_, d)| d).collect();
        let vectors = doc_embeddings(embedder, &refs)?;
        for ((rowid, d), v) in chunk.iter().zip(vectors) {
            let (updated_at, recall_count) = times.get(rowid).copied().unwrap_or_default();
            let meta = Meta {
                id: d.id.as_str().into(),
                updated_at,
                recall_count,
            };
            cache.put(*rowid, &d.scope, meta, &v);
        }
    }
    Ok(())
}

/// Runs `f` as one write: inside a SAVEPOINT of the caller's transaction, or, outside any,
/// in a transaction that takes the write lock first (`BEGIN IMMEDIATE`, which waits for it
/// through the busy handler). A deferred one that read before writing would fail at once
/// (`SQLITE_BUSY_SNAPSHOT`, no waiting helps) whenever another process wrote in between.
pub(crate) fn in_savepoint<T>(
    conn: &Connection,
    f: impl FnOnce() -> Result<T, RecallError>,
) -> Result<T, RecallError> {
    if conn.is_autocommit() {
        conn.execute_batch("BEGIN IMMEDIATE")?;
        let done = f().and_then(|v| {
            conn.execute_batch("COMMIT")?;
            Ok(v)
        });
        if done.is_err() && !conn.is_autocommit() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        return done;
    }
    conn.execute_batch("SAVEPOINT cairn_recall")?;
    match f() {
        Ok(v) => {
            conn.execute_batch("RELEASE cairn_recall")?;
            Ok(v)
        }
        Err(e) => {
            let _ = conn.execute_batch("ROLLBACK TO cairn_recall; RELEASE cairn_recall");
            Err(e)
        }
    }
}

impl Recall {
    /// Creates the tables if needed and returns an index with the default configuration.
    /// If the stored embeddings come from another embedding model (the artifact changed),
    /// every document is re-embedded.
    pub fn open(conn: &Connection) -> Result<Self, RecallError> {
        Self::with_config(conn, RecallConfig::default())
    }

    /// [`Recall::open`] with an explicit configuration. The active embedding tier
    /// ([`cairn_embed::tier::active`]) is preferred; see [`Recall::with_embedder`].
    pub fn with_config(conn: &Connection, config: RecallConfig) -> Result<Self, RecallError> {
        let preferred =
            cairn_embed::tier::active().map_err(|e| RecallError::Embed(e.to_string()))?;
        Self::with_embedder(conn, config, preferred)
    }

    /// [`Recall::open`] with an explicit configuration and preferred embedding model.
    /// Stored vectors keep the model they were computed with (searches and writes use it)
    /// until [`Recall::reembed_pending`] moves them to `preferred`; an empty index starts
    /// with `preferred`. Vectors of a model this process cannot compute are recomputed
    /// with the static tier at once (cheap: about 50,000 texts a second).
    pub fn with_embedder(
        conn: &Connection,
        config: RecallConfig,
        preferred: Arc<dyn TextEmbedder>,
    ) -> Result<Self, RecallError> {
        if !schema_is_current(conn) {
            create_schema(conn)?;
        }
        let mut me = Self {
            config,
            embedder: preferred.clone(),
            model: model_tag(&*preferred),
            cache: VectorCache::new(preferred.dims()),
            preferred,
            scratch: Vec::new(),
            term_stats: None,
            static_copy: false,
            resident: Resident::Absent,
            lexicon: None,
        };
        me.adopt_stored_model(conn)?;
        Ok(me)
    }

    /// Makes `embedder` the model of the stored vectors (read from `recall_meta`).
    fn adopt_stored_model(&mut self, conn: &Connection) -> Result<(), RecallError> {
        let stored: Option<String> = conn
            .query_row(
                "SELECT value FROM recall_meta WHERE key = 'embed_model'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        if stored.as_deref() == Some(self.model.as_str()) {
            self.static_copy = false;
            return Ok(());
        }
        let known = stored.as_deref().and_then(|tag| {
            if tag == model_tag(&*self.preferred) {
                return Some(self.preferred.clone());
            }
            let id = tag
                .strip_prefix("cairn-embed/")?
                .strip_suffix(&format!("/kw{KEYWORDS_EMBED_WEIGHT}"))?;
            cairn_embed::tier::by_id(id)
        });
        if known.is_none()
            && stored.is_some()
            && !cairn_embed::tier::model_loading_allowed()
            && self.len(conn)? > 0
        {
            // A model this process may not load: search a static copy, change nothing.
            let s = cairn_embed::tier::static_embedder()
                .map_err(|e| RecallError::Embed(e.to_string()))?;
            self.use_embedder(s);
            self.static_copy = true;
            return Ok(());
        }
        self.static_copy = false;
        let recompute = known.is_none();
        let embedder = match known {
            Some(e) => e,
            None if self.len(conn)? == 0 => self.preferred.clone(),
            None => cairn_embed::tier::static_embedder()
                .map_err(|e| RecallError::Embed(e.to_string()))?,
        };
        self.use_embedder(embedder);
        if recompute {
            self.reembed_all(conn)?;
        }
        Ok(())
    }

    /// Before a write: leaves a static copy for the stored model (loading it), or, if this
    /// process cannot compute that model at all, recomputes the stored vectors with the
    /// static tier (as opening the index does in a process that may load models).
    fn leave_static_copy(&mut self, conn: &Connection) -> Result<(), RecallError> {
        if !self.static_copy {
            return Ok(());
        }
        self.static_copy = false;
        let stored: Option<String> = conn
            .query_row(
                "SELECT value FROM recall_meta WHERE key = 'embed_model'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        let model = stored.as_deref().and_then(|tag| {
            let id = tag
                .strip_prefix("cairn-embed/")?
                .strip_suffix(&format!("/kw{KEYWORDS_EMBED_WEIGHT}"))?;
            cairn_embed::tier::by_id_for_writing(id)
        });
        match model {
            Some(e) => {
                // Loaded now: it is the active tier's model when the status says so (this
                // process chose the static tier only to avoid the load).
                if cairn_embed::tier::status().model == e.id() {
                    self.preferred = e.clone();
                }
                self.use_embedder(e);
            }
            None => {
                let s = cairn_embed::tier::static_embedder()
                    .map_err(|e| RecallError::Embed(e.to_string()))?;
                self.use_embedder(s);
                self.reembed_all(conn)?;
            }
        }
        Ok(())
    }

    /// Whether searches use a static-tier copy of the stored vectors (see `static_copy`).
    pub fn searching_static_copy(&self) -> bool {
        self.static_copy
    }

    fn use_embedder(&mut self, embedder: Arc<dyn TextEmbedder>) {
        self.model = model_tag(&*embedder);
        self.cache = VectorCache::new(embedder.dims());
        self.embedder = embedder;
    }

    /// The id of the model the stored vectors come from (`None` before any index exists),
    /// read without opening the index.
    pub fn stored_model(conn: &Connection) -> Result<Option<String>, RecallError> {
        let exists: bool = conn.query_row(
            "SELECT EXISTS(SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'recall_meta')",
            [],
            |r| r.get(0),
        )?;
        if !exists {
            return Ok(None);
        }
        let tag: Option<String> = conn
            .query_row(
                "SELECT value FROM recall_meta WHERE key = 'embed_model'",
                [],
                |r| r.get(0),
            )
            .optional()?;
        Ok(tag.map(|t| {
            t.strip_prefix("cairn-embed/")
                .and_then(|t| t.strip_suffix(&format!("/kw{KEYWORDS_EMBED_WEIGHT}")))
                .map_or(t.clone(), str::to_owned)
        }))
    }

    /// The model whose vectors are stored and searched (`cairn-embed/<model id>/kw<w>`).
    pub fn embedder_id(&self) -> &str {
        self.embedder.id()
    }

    /// The active tier's model when the stored vectors still come from another one (the
    /// sync path then calls [`Recall::reembed_pending`]).
    pub fn pending_model(&self) -> Option<&str> {
        (self.preferred.id() != self.embedder.id()).then(|| self.preferred.id())
    }

    /// Recomputes every stored vector with the active tier's model when they come from
    /// another one (for the background/sync path; searches never do this). The vectors
    /// are computed outside any transaction, `progress(done, total)` after each batch; then
    /// one short savepoint writes them (documents changed meanwhile are embedded again
    /// there) and retags the set, so a search sees the old set or the new one, never a mix.
    pub fn reembed_pending(
        &mut self,
        conn: &Connection,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Option<Reembedded>, RecallError> {
        self.leave_static_copy(conn)?;
        if self.pending_model().is_none() {
            return Ok(None);
        }
        let target = self.preferred.clone();
        let snapshot = read_docs(conn)?;
        let total = snapshot.len();
        let mut vectors: HashMap<i64, (Document, Vec<f32>)> = HashMap::with_capacity(total);
        progress(0, total);
        for chunk in snapshot.chunks(64) {
            let docs: Vec<&Document> = chunk.iter().map(|(_, d)| d).collect();
            for ((rowid, d), v) in chunk.iter().zip(doc_embeddings(&*target, &docs)?) {
                vectors.insert(*rowid, (d.clone(), v));
            }
            progress(vectors.len(), total);
        }
        let tag = model_tag(&*target);
        let res = in_savepoint(conn, || {
            let mut up = conn.prepare("UPDATE recall_docs SET embedding = ?2 WHERE rowid = ?1")?;
            let now = read_docs(conn)?;
            for (rowid, d) in &now {
                match vectors.get(rowid) {
                    Some((old, v)) if old == d => up.execute(params![rowid, blob_of(v)])?,
                    _ => {
                        let v = doc_embeddings(&*target, &[d])?;
                        up.execute(params![rowid, blob_of(&v[0])])?
                    }
                };
            }
            conn.execute(
                "INSERT INTO recall_meta(key, value) VALUES ('embed_model', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [&tag],
            )?;
            self.bump_generation(conn)?;
            Ok(now.len())
        });
        let from = self.embedder.id().to_owned();
        let documents = match res {
            Ok(n) => n,
            Err(e) => {
                self.cache.clear();
                return Err(e);
            }
        };
        self.use_embedder(target);
        Ok(Some(Reembedded {
            documents,
            from,
            to: self.embedder.id().to_owned(),
        }))
    }

    /// The ranking configuration.
    pub fn config(&self) -> &RecallConfig {
        &self.config
    }

    /// Replaces the ranking configuration (takes effect on the next search).
    pub fn set_config(&mut self, config: RecallConfig) {
        self.config = config;
    }

    /// Identifier of the embedding model whose vectors are stored.
    pub fn model(&self) -> &str {
        &self.model
    }

    fn reembed_all(&mut self, conn: &Connection) -> Result<(), RecallError> {
        in_savepoint(conn, || {
            let rows = read_docs(conn)?;
            let mut up = conn.prepare("UPDATE recall_docs SET embedding = ?2 WHERE rowid = ?1")?;
            for chunk in rows.chunks(64) {
                let docs: Vec<&Document> = chunk.iter().map(|(_, d)| d).collect();
                for ((rowid, _), v) in chunk.iter().zip(doc_embeddings(&*self.embedder, &docs)?) {
                    up.execute(params![rowid, blob_of(&v)])?;
                }
            }
            conn.execute(
                "INSERT INTO recall_meta(key, value) VALUES ('embed_model', ?1)
                 ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                [&self.model],
            )?;
            self.bump_generation(conn)?;
            Ok(())
        })?;
        self.cache.clear();
        Ok(())
    }

    /// Increments `recall_meta.generation`; keeps the cache valid when it was current.
    fn bump_generation(&mut self, conn: &Connection) -> Result<bool, RecallError> {
        let g: i64 = conn.query_row(
            "UPDATE recall_meta SET value = value + 1 WHERE key = 'generation' RETURNING value",
            [],
            |r| r.get(0),
        )?;
        let current = self.cache.generation == Some(g - 1);
        if current {
            self.cache.generation = Some(g);
        } else {
            self.cache.clear();
        }
        Ok(current)
    }

    fn upsert_one(
        &mut self,
        conn: &Connection,
        doc: &Document,
        emb: Vec<f32>,
    ) -> Result<(i64, Vec<f32>), RecallError> {
        let keywords = keywords_to_db(&doc.keywords);
        let rowid: i64 = conn.prepare_cached(
            "INSERT INTO recall_docs(id, scope, name, description, body, keywords, created_at, updated_at,
                                     recall_count, embedding)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
             ON CONFLICT(id) DO UPDATE SET scope = excluded.scope, name = excluded.name,
                 description = excluded.description, body = excluded.body, keywords = excluded.keywords,
                 created_at = excluded.created_at, updated_at = excluded.updated_at,
                 recall_count = excluded.recall_count, embedding = excluded.embedding
             RETURNING rowid",
        )?
        .query_row(
            params![
                doc.id,
                doc.scope,
                doc.name,
                doc.description,
                doc.body,
                keywords,
                doc.created_at,
                doc.updated_at,
                doc.recall_count,
                blob_of(&emb)
            ],
            |r| r.get(0),
        )?;
        conn.prepare_cached("DELETE FROM recall_fts WHERE rowid = ?1")?
            .execute([rowid])?;
        conn.prepare_cached(
            "INSERT INTO recall_fts(rowid, name, description, body, keywords, scope_tok)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(params![
            rowid,
            space_cjk(&doc.name),
            space_cjk(&doc.description),
            space_cjk(&doc.body),
            space_cjk(&keywords),
            scope_token(&doc.scope)
        ])?;
        Ok((rowid, emb))
    }

    /// Inserts or replaces one document (its embedding is computed here, at write time).
    pub fn upsert(&mut self, conn: &Connection, doc: &Document) -> Result<(), RecallError> {
        self.upsert_many(conn, std::slice::from_ref(doc))
    }

    /// Inserts or replaces many documents in one savepoint.
    pub fn upsert_many(&mut self, conn: &Connection, docs: &[Document]) -> Result<(), RecallError> {
        self.leave_static_copy(conn)?;
        // Computed before the savepoint: the full tier takes milliseconds per document.
        let refs: Vec<&Document> = docs.iter().collect();
        let embeddings = doc_embeddings(&*self.embedder, &refs)?;
        let written = in_savepoint(conn, || {
            let mut written = Vec::with_capacity(docs.len());
            for (d, emb) in docs.iter().zip(embeddings) {
                written.push(self.upsert_one(conn, d, emb)?);
            }
            let current = self.bump_generation(conn)?;
            Ok(if current { written } else { Vec::new() })
        });
        match written {
            Ok(written) => {
                for ((rowid, emb), d) in written.into_iter().zip(docs) {
                    let meta = Meta {
                        id: d.id.as_str().into(),
                        updated_at: d.updated_at,
                        recall_count: d.recall_count,
                    };
                    self.cache.put(rowid, &d.scope, meta, &emb);
                }
                Ok(())
            }
            Err(e) => {
                self.cache.clear();
                Err(e)
            }
        }
    }

    /// Removes a document; returns whether it existed.
    pub fn remove(&mut self, conn: &Connection, id: &str) -> Result<bool, RecallError> {
        let res = in_savepoint(conn, || {
            let rowid: Option<i64> = conn
                .prepare_cached("DELETE FROM recall_docs WHERE id = ?1 RETURNING rowid")?
                .query_row([id], |r| r.get(0))
                .optional()?;
            let Some(rowid) = rowid else { return Ok(None) };
            conn.prepare_cached("DELETE FROM recall_fts WHERE rowid = ?1")?
                .execute([rowid])?;
            self.bump_generation(conn)?;
            Ok(Some(rowid))
        });
        match res {
            Ok(Some(rowid)) => {
                self.cache.remove(rowid);
                Ok(true)
            }
            Ok(None) => Ok(false),
            Err(e) => {
                self.cache.clear();
                Err(e)
            }
        }
    }

    /// Adds one to the recall count of each id (unknown ids are ignored).
    pub fn record_recall(&mut self, conn: &Connection, ids: &[&str]) -> Result<(), RecallError> {
        let res = in_savepoint(conn, || {
            let mut changed = Vec::new();
            let mut st = conn.prepare_cached(
                "UPDATE recall_docs SET recall_count = recall_count + 1 WHERE id = ?1 RETURNING rowid, recall_count",
            )?;
            for id in ids {
                if let Some(row) = st
                    .query_row([id], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, i64>(1)?)))
                    .optional()?
                {
                    changed.push(row);
                }
            }
            let current = self.bump_generation(conn)?;
            Ok(if current { changed } else { Vec::new() })
        });
        match res {
            Ok(changed) => {
                for (rowid, n) in changed {
                    self.cache.set_recall_count(rowid, n);
                }
                // A recall count changes no text: the word statistics (keyed by the documents'
                // generation) stay valid.
                Ok(())
            }
            Err(e) => {
                self.cache.clear();
                Err(e)
            }
        }
    }

    /// Number of indexed documents.
    pub fn len(&self, conn: &Connection) -> Result<usize, RecallError> {
        let n: i64 = conn.query_row("SELECT count(*) FROM recall_docs", [], |r| r.get(0))?;
        Ok(usize::try_from(n).unwrap_or(0))
    }

    /// Loads the vector cache if it is missing or stale.
    fn ensure_cache(&mut self, conn: &Connection) -> Result<(), RecallError> {
        let g: i64 = conn
            .prepare_cached("SELECT value FROM recall_meta WHERE key = 'generation'")?
            .query_row([], |r| r.get(0))?;
        if self.cache.generation == Some(g) {
            return Ok(());
        }
        // Another process may have moved the vectors to another model meanwhile.
        self.adopt_stored_model(conn)?;
        self.cache.clear();
        // A new process reads the stored snapshot of the cache when it is current (see
        // `snapshot`); otherwise it loads every document and stores a snapshot for the next.
        let docs_generation = crate::snapshot::docs_generation(conn)?;
        if crate::snapshot::load(conn, &self.model, docs_generation, &mut self.cache)? {
            // Current snapshot read.
        } else if self.static_copy {
            self.load_static_copy(conn)?;
            crate::snapshot::store_if_idle(conn, &self.model, docs_generation, &self.cache);
        } else {
            let mut st = conn.prepare(
                "SELECT rowid, id, scope, updated_at, recall_count, embedding FROM recall_docs",
            )?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                let rowid: i64 = r.get(0)?;
                let id: String = r.get(1)?;
                let scope: String = r.get(2)?;
                let meta = Meta {
                    id: id.into(),
                    updated_at: r.get(3)?,
                    recall_count: r.get(4)?,
                };
                let blob = r.get_ref(5)?.as_blob().unwrap_or(&[]);
                self.cache.put(rowid, &scope, meta, &vec_of(blob));
            }
            crate::snapshot::store_if_idle(conn, &self.model, docs_generation, &self.cache);
        }
        self.cache.generation = Some(g);
        Ok(())
    }

    /// For the background path (the worker, `cairn sync`): makes the snapshots that new
    /// processes read current, so that the first hook after a change does not build them:
    /// the stored vectors', and, when those come from another model than the static tier's,
    /// the static copy that hooks and `cairn recall` search. Best effort like every
    /// snapshot: a busy database only loses the speed-up.
    pub fn prepare_snapshots(&mut self, conn: &Connection) -> Result<(), RecallError> {
        crate::snapshot::drop_rows_replaced_by_files(conn);
        crate::snapshot::remove_abandoned_temp_files(conn);
        // Best effort, like every snapshot: a failure leaves FTS5 to answer.
        let _ = crate::lexicon::prepare(conn);
        self.ensure_cache(conn)?;
        let generation = crate::snapshot::docs_generation(conn)?;
        // After this process's own writes the cache is current but the stored snapshot not.
        if !crate::snapshot::is_current(conn, &self.model, generation, self.cache.dims)? {
            crate::snapshot::store_if_idle(conn, &self.model, generation, &self.cache);
        }
        if self.static_copy {
            return Ok(());
        }
        let statik =
            cairn_embed::tier::static_embedder().map_err(|e| RecallError::Embed(e.to_string()))?;
        if statik.id() == self.embedder.id() || self.len(conn)? == 0 {
            return Ok(());
        }
        let tag = model_tag(&*statik);
        let mut copy = VectorCache::new(statik.dims());
        if !crate::snapshot::load(conn, &tag, generation, &mut copy)? {
            static_copy_into(conn, &*statik, &mut copy)?;
            crate::snapshot::store_if_idle(conn, &tag, generation, &copy);
        }
        Ok(())
    }

    /// Fills the cache with static-tier vectors computed from every document's text.
    fn load_static_copy(&mut self, conn: &Connection) -> Result<(), RecallError> {
        static_copy_into(conn, &*self.embedder, &mut self.cache)
    }

    /// Makes `term_stats` hold the document frequencies of `terms` (counted by FTS5, capped
    /// just above `budget`: only whether they fit matters), kept until a document changes.
    fn ensure_term_stats(
        &mut self,
        conn: &Connection,
        terms: &[String],
        budget: usize,
    ) -> Result<(), RecallError> {
        let g = crate::snapshot::docs_generation(conn)?;
        if self.term_stats.as_ref().is_none_or(|(sg, _)| *sg != g) {
            self.term_stats = Some((g, HashMap::new()));
        }
        let Some((_, df)) = self.term_stats.as_mut() else {
            return Ok(());
        };
        let cap = budget.saturating_add(1);
        for t in terms {
            if !df.contains_key(t) {
                let n = crate::query::doc_count(conn, t, cap)?;
                df.insert(t.clone(), u32::try_from(n).unwrap_or(u32::MAX));
            }
        }
        Ok(())
    }

    /// The query terms to match lexically: all of them, or, in a store larger than
    /// `lexical_budget`, the rarest ones whose document frequencies add up to at most the
    /// budget (the most common words, which carry the least BM25 weight, are dropped).
    fn lexical_terms(
        &mut self,
        conn: &Connection,
        query: &str,
    ) -> Result<(Vec<String>, bool), RecallError> {
        let terms = query_terms(query);
        let budget = self.config.lexical_budget;
        if budget == 0 || self.config.exhaustive || terms.len() < 2 || self.cache.len() <= budget {
            return Ok((terms, false));
        }
        self.ensure_term_stats(conn, &terms, budget)?;
        let Some((_, df)) = &self.term_stats else {
            return Ok((terms, false));
        };
        let mut by_df: Vec<(u32, String)> = terms
            .iter()
            .map(|t| (df.get(t).copied().unwrap_or(0), t.clone()))
            .collect();
        by_df.sort();
        let mut kept = Vec::new();
        let mut total = 0usize;
        for (n, t) in by_df {
            if !kept.is_empty() && total + n as usize > budget {
                break;
            }
            total += n as usize;
            kept.push(t);
        }
        let pruned = kept.len() < terms.len();
        Ok((kept, pruned))
    }

    /// Lexical candidates: (rowid, bm25 with higher = better), best first, in scope.
    fn lexical(
        &mut self,
        conn: &Connection,
        query: &str,
        scopes: &[&str],
        n: usize,
    ) -> Result<Vec<(i64, f64)>, RecallError> {
        let (terms, pruned) = self.lexical_terms(conn, query)?;
        // CJK pairs are FTS5 phrases: only FTS5 ranks them exactly.
        let by_tokens = !scopes.is_empty() && (pruned || !has_cjk_pairs(query));
        if by_tokens
            && self.config.resident_lexical
            && let Some(index) = self.resident.ready(conn, false)?
            && let Plan::Tokens(ids) = index.plan(&terms)?
        {
            return Ok(index.top(&ids, scopes, self.config.field_weights, n));
        }
        // Without a resident index (or while it is being built): the lexicon file.
        if by_tokens
            && self.config.lexicon_file
            && let Some(hits) = self.lexicon_top(conn, &terms, scopes, n)?
        {
            return Ok(hits);
        }
        let Some(expr) = fts_match_terms(&terms, (!pruned).then_some(query)) else {
            return Ok(Vec::new());
        };
        if scopes.is_empty() {
            return Ok(Vec::new());
        }
        let parts = self.cache.parts_of(scopes);
        let full = if self.cache.count_in(&parts) == self.cache.len() {
            // Every document is in scope: the scope clause would only cost time.
            format!("{{name description body keywords}} : ({expr})")
        } else {
            let scope_expr: Vec<String> = scopes.iter().map(|s| quote(&scope_token(s))).collect();
            format!(
                "{{name description body keywords}} : ({expr}) AND scope_tok : ({})",
                scope_expr.join(" OR ")
            )
        };
        let w = self.config.field_weights;
        let sql = format!(
            "SELECT rowid, bm25(recall_fts, {}, {}, {}, {}, 0.0) AS s FROM recall_fts
             WHERE recall_fts MATCH ?1 ORDER BY s LIMIT ?2",
            w[0], w[1], w[2], w[3]
        );
        let mut st = conn.prepare_cached(&sql)?;
        let rows = st.query_map(params![full, n as i64], |r| {
            Ok((r.get::<_, i64>(0)?, -r.get::<_, f64>(1)?))
        })?;
        let mut out = Vec::with_capacity(n);
        for row in rows {
            let (rowid, s) = row?;
            // The scope token is a hash: confirm the exact scope from the cache.
            if self.cache.in_parts(rowid, &parts) {
                out.push((rowid, s));
            }
        }
        Ok(out)
    }

    /// The lexicon file view the last lexical search ranked from, if any.
    #[cfg(test)]
    pub(crate) fn lexicon_view(&self) -> Option<&LexiconView> {
        self.lexicon.as_ref()
    }

    /// BM25 candidates from the lexicon file and the documents changed since it was
    /// written; `None` when there is no usable file (FTS5 answers).
    fn lexicon_top(
        &mut self,
        conn: &Connection,
        terms: &[String],
        scopes: &[&str],
        n: usize,
    ) -> Result<Option<Vec<(i64, f64)>>, RecallError> {
        let Some(path) = crate::lexicon::file_path(conn) else {
            return Ok(None);
        };
        let g = crate::lexical::text_generation(conn)?;
        if self.lexicon.as_ref().is_none_or(|v| v.generation != g) {
            self.lexicon = None;
            self.lexicon = LexiconView::open(conn, &path, crate::lexicon::OVERLAY_MAX)?;
        }
        match self.lexicon.as_mut() {
            Some(view) => view.top(terms, scopes, self.config.field_weights, n),
            None => Ok(None),
        }
    }

    /// Loads the vector cache and, when configured, builds the resident lexical index
    /// now, waiting for it (searches otherwise build it in the background and ask FTS5
    /// until it is ready).
    pub fn warm_up(&mut self, conn: &Connection) -> Result<(), RecallError> {
        self.ensure_cache(conn)?;
        if self.config.resident_lexical {
            self.resident.ready(conn, true)?;
        }
        Ok(())
    }

    /// Whether searches use the resident lexical index (configured and built).
    pub fn resident_lexical_ready(&self) -> bool {
        self.config.resident_lexical && self.resident.is_ready()
    }

    /// Searches the documents visible in `scopes` and returns the best `k`, best first
    /// (fewer when fewer documents match at all: a score of 0 is left out). `now` (Unix
    /// seconds) anchors the recency prior.
    pub fn search(
        &mut self,
        conn: &Connection,
        query: &str,
        scopes: &[&str],
        k: usize,
        now: i64,
    ) -> Result<Vec<Hit>, RecallError> {
        if k == 0 || scopes.is_empty() {
            return Ok(Vec::new());
        }
        self.ensure_cache(conn)?;
        let cfg = self.config.clone();
        let n = cfg.candidates.max(k);
        let parts = self.cache.parts_of(scopes);

        let lexical = if cfg.mode == Mode::Semantic {
            Vec::new()
        } else {
            self.lexical(conn, query, scopes, n)?
        };
        let qvec = if cfg.mode == Mode::Lexical {
            Vec::new()
        } else {
            self.embedder
                .embed(query)
                .map_err(|e| RecallError::Embed(e.to_string()))?
        };
        let mut ranked = self.rank(&lexical, &qvec, &parts, n, &cfg, now);
        // A document that shares no word with the query and whose embedding points away
        // from it (or elsewhere entirely: another script) scores 0: it is no answer at all.
        ranked.retain(|r| r.0 > 0.0);
        ranked.truncate(k);
        Ok(ranked
            .into_iter()
            .filter_map(|(score, rowid, c)| {
                let id = self.cache.meta(rowid)?.id.to_string();
                Some(Hit {
                    id,
                    score,
                    bm25: c.bm25,
                    cosine: c.cosine,
                    lexical_rank: c.lex_rank,
                    semantic_rank: c.sem_rank,
                })
            })
            .collect())
    }

    /// Fuses a lexical list with a semantic scan for `qvec` (empty = no semantic list)
    /// and applies the priors; returns all candidates, best first.
    fn rank(
        &mut self,
        lexical: &[(i64, f64)],
        qvec: &[f32],
        parts: &[u32],
        n: usize,
        cfg: &RecallConfig,
        now: i64,
    ) -> Vec<(f64, i64, Cand)> {
        let mut qv = Vec::with_capacity(qvec.len());
        let qs = quantize(qvec, &mut qv);
        let mut scratch = std::mem::take(&mut self.scratch);
        let semantic = if qvec.is_empty() {
            Vec::new()
        } else {
            self.cache
                .top_n(&qv, qs, parts, n, cfg.exhaustive, &mut scratch)
        };
        self.scratch = scratch;

        let mut cands: HashMap<i64, Cand> = HashMap::with_capacity(lexical.len() + semantic.len());
        for (i, &(rowid, s)) in lexical.iter().enumerate() {
            cands.insert(
                rowid,
                Cand {
                    bm25: Some(s),
                    cosine: None,
                    lex_rank: Some(i + 1),
                    sem_rank: None,
                },
            );
        }
        for (i, &(c, rowid)) in semantic.iter().enumerate() {
            let e = cands.entry(rowid).or_default();
            e.cosine = Some(c);
            e.sem_rank = Some(i + 1);
        }
        if qs != 0.0 {
            for (rowid, c) in cands.iter_mut() {
                if c.cosine.is_none() {
                    c.cosine = self.cache.cosine(&qv, qs, *rowid);
                }
            }
        }
        let max_bm25 = lexical.first().map_or(0.0, |x| x.1).max(f64::MIN_POSITIVE);
        let max_cos = cands
            .values()
            .filter_map(|c| c.cosine)
            .fold(0.0f32, f32::max)
            .max(f32::MIN_POSITIVE);

        let mut ranked: Vec<(f64, i64, Cand)> = cands
            .into_iter()
            .map(|(rowid, c)| {
                let base = match cfg.mode {
                    Mode::Lexical => c.bm25.unwrap_or(0.0),
                    Mode::Semantic => f64::from(c.cosine.unwrap_or(0.0)),
                    Mode::Hybrid => match cfg.fusion {
                        Fusion::Rrf {
                            k,
                            lexical,
                            semantic,
                        } => {
                            c.lex_rank.map_or(0.0, |r| lexical / (k + r as f64))
                                + c.sem_rank.map_or(0.0, |r| semantic / (k + r as f64))
                        }
                        Fusion::Convex { alpha } => {
                            alpha * c.bm25.unwrap_or(0.0) / max_bm25
                                + (1.0 - alpha)
                                    * f64::from(c.cosine.unwrap_or(0.0).max(0.0) / max_cos)
                        }
                    },
                };
                (base * self.prior(rowid, now, cfg), rowid, c)
            })
            .collect();
        ranked.sort_unstable_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        ranked
    }

    /// Multiplicative prior in `[1, 1 + recency_weight + recall_weight]`.
    fn prior(&self, rowid: i64, now: i64, cfg: &RecallConfig) -> f64 {
        let Some(m) = self.cache.meta(rowid) else {
            return 1.0;
        };
        let age_days = (now.saturating_sub(m.updated_at)).max(0) as f64 / 86_400.0;
        let recency = if cfg.recency_half_life_days > 0.0 {
            (-age_days / cfg.recency_half_life_days).exp2()
        } else {
            0.0
        };
        let n = m.recall_count.max(0) as f64;
        1.0 + cfg.recency_weight * recency + cfg.recall_weight * n / (n + 5.0)
    }
}
