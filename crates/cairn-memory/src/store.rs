//! [`MemoryStore`]: the memory tables, kept in step with the recall index on every write.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use cairn_recall::{Document, Recall, RecallConfig};
use cairn_store::Store;
use rusqlite::{Connection, OptionalExtension, params};
use serde::Serialize;

use crate::dates::{absolutise, anchor_date};
use crate::error::{MemoryError, Result};
use crate::keywords::keywords_for;
use crate::model::{Memory, MemoryType, NewMemory, Source, render_body};
use crate::scope::{GLOBAL, scope_slug};
use crate::similar::{Relation, relation, reply_language};
use crate::text::{mostly_cjk, one_line, truncate_chars, with_full_stop};

/// What a write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A new memory.
    Created,
    /// An existing memory said the same; it was updated.
    Updated,
    /// A new memory replaced an existing one on the same subject.
    Superseded,
    /// Nothing changed.
    Unchanged,
}

/// The result of a write.
#[derive(Debug, Clone, Serialize)]
pub struct WriteOutcome {
    /// What happened.
    pub action: Action,
    /// The memory now holding the statement.
    pub memory: Memory,
    /// The memory that was replaced (for [`Action::Superseded`], or an update whose
    /// statement contradicted another memory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub replaced: Option<String>,
    /// The memory is stored, but its markdown views could not be written (why).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub views_error: Option<String>,
}

/// A recall result.
#[derive(Debug, Clone, Serialize)]
pub struct Recalled {
    /// The memory (its recall count already includes this recall).
    pub memory: Memory,
    /// Ranking score (higher is better; comparable within one search only).
    pub score: f64,
    /// Cosine between query and memory embeddings.
    pub cosine: Option<f32>,
    /// Whether the memory matched the query's words (BM25).
    pub lexical: bool,
}

/// Which memories [`MemoryStore::list`] returns.
#[derive(Debug, Clone, Default)]
pub struct ListFilter {
    /// Only this type.
    pub memory_type: Option<MemoryType>,
    /// Only these scopes (all when empty).
    pub scopes: Vec<String>,
    /// Also forgotten and superseded memories.
    pub include_inactive: bool,
}

/// cairn's memories over its database. Writes keep the recall index in step in the same
/// transaction. The recall index (and its embedding table) is opened lazily, on the first
/// write or search, so opening a store is cheap.
pub struct MemoryStore {
    pub(crate) store: Store,
    pub(crate) recall: Option<Recall>,
    pub(crate) recall_config: Option<RecallConfig>,
    pub(crate) views: Option<PathBuf>,
    /// Whether opening the recall index counts both tables to check it is in step (see
    /// [`MemoryStore::check_index_only_when_empty`]).
    pub(crate) full_index_check: bool,
    /// The agent the context is for (see [`MemoryStore::give_context_to`]).
    pub(crate) reader: Option<String>,
}

pub(crate) const COLUMNS: &str =
    "id, type, scope, name, description, rule, why, how, keywords, source_kind,
    source_agent, source_session, source_turn, source_path, source_line, source_at, created_at,
    updated_at, last_recalled_at, recall_count, superseded_by, forgotten_at";

pub(crate) fn read_memory(r: &rusqlite::Row<'_>) -> rusqlite::Result<Memory> {
    let type_s: String = r.get(1)?;
    let rule: String = r.get(5)?;
    let why: Option<String> = r.get(6)?;
    let how: Option<String> = r.get(7)?;
    let kw: String = r.get(8)?;
    Ok(Memory {
        id: r.get(0)?,
        memory_type: MemoryType::parse(&type_s).unwrap_or(MemoryType::Project),
        scope: r.get(2)?,
        name: r.get(3)?,
        description: r.get(4)?,
        body: render_body(&rule, why.as_deref(), how.as_deref()),
        rule,
        why,
        how,
        keywords: kw
            .split('\n')
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
        source: Source {
            kind: r.get(9)?,
            agent: r.get(10)?,
            session: r.get(11)?,
            turn: r.get(12)?,
            path: r.get(13)?,
            line: r.get::<_, Option<i64>>(14)?.map(|l| l.max(0) as u64),
            at: r.get(15)?,
        },
        created_at: r.get(16)?,
        updated_at: r.get(17)?,
        last_recalled_at: r.get(18)?,
        recall_count: r.get(19)?,
        superseded_by: r.get(20)?,
        forgotten_at: r.get(21)?,
    })
}

pub(crate) fn get_memory(conn: &Connection, id: &str) -> Result<Option<Memory>> {
    Ok(conn
        .prepare_cached(&format!("SELECT {COLUMNS} FROM memories WHERE id = ?1"))?
        .query_row([id], read_memory)
        .optional()?)
}

/// The recall-count update of [`MemoryStore::record_recall`], inside the caller's transaction.
pub(crate) fn record_recall_in(
    tx: &rusqlite::Connection,
    recall: &mut Recall,
    ids: &[&str],
    now: i64,
) -> Result<()> {
    let mut st = tx.prepare_cached(
        "UPDATE memories SET recall_count = recall_count + 1, last_recalled_at = ?2
         WHERE id = ?1",
    )?;
    for id in ids {
        st.execute(params![id, now])?;
    }
    recall.record_recall(tx, ids)?;
    Ok(())
}

/// Whether the recall index holds as many documents as there are live memories (one read:
/// one snapshot of both tables).
fn index_in_step(conn: &rusqlite::Connection) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT (SELECT count(*) FROM memories
                 WHERE forgotten_at IS NULL AND superseded_by IS NULL)
              = (SELECT count(*) FROM recall_docs)",
        [],
        |x| x.get(0),
    )?)
}

/// Whether the recall index is empty while live memories exist (two reads of one row each).
fn index_missing(conn: &rusqlite::Connection) -> Result<bool> {
    Ok(conn.query_row(
        "SELECT NOT EXISTS(SELECT 1 FROM recall_docs)
            AND EXISTS(SELECT 1 FROM memories WHERE forgotten_at IS NULL AND superseded_by IS NULL)",
        [],
        |x| x.get(0),
    )?)
}

pub(crate) fn document(m: &Memory) -> Document {
    Document {
        id: m.id.clone(),
        scope: m.scope.clone(),
        name: m.name.clone(),
        description: m.description.clone(),
        body: m.body.clone(),
        keywords: m.keywords.clone(),
        created_at: m.created_at,
        updated_at: m.updated_at,
        recall_count: m.recall_count,
    }
}

const ID_ALPHABET: &[u8] = b"23456789abcdefghjkmnpqrstuvwxyz";

/// A short printable id derived from `seed`, unused in the table.
pub(crate) fn new_id(conn: &Connection, seed: &str) -> Result<String> {
    let mut h = xxhash_rust::xxh3::xxh3_64(seed.as_bytes());
    for attempt in 0u64..64 {
        let mut id = String::from("m");
        let mut x = h;
        for _ in 0..7 {
            id.push(ID_ALPHABET[(x % ID_ALPHABET.len() as u64) as usize] as char);
            x /= ID_ALPHABET.len() as u64;
        }
        let taken: bool = conn
            .prepare_cached("SELECT EXISTS(SELECT 1 FROM memories WHERE id = ?1)")?
            .query_row([&id], |r| r.get(0))?;
        if !taken {
            return Ok(id);
        }
        h = xxhash_rust::xxh3::xxh3_64(format!("{seed}\u{0}{attempt}").as_bytes());
    }
    Err(MemoryError::Invalid(
        "could not allocate a memory id".into(),
    ))
}

/// The most text (rule, Why and How together) a memory written by hand or through MCP
/// holds: every session summary, index line and search pays for each memory's size.
pub const MAX_MEMORY_BYTES: usize = 32 * 1024;

/// A title from a rule: its first clause, at most about 60 characters (40 for CJK).
pub fn derive_name(rule: &str) -> String {
    // A note that opens with a markdown heading is named by it ("# gamma lint" → "gamma lint").
    let first = rule.trim_start().lines().next().unwrap_or("");
    let heading = first.trim_start_matches('#').trim();
    if first.starts_with('#') && heading.chars().count() >= 3 {
        return truncate_chars(heading, if mostly_cjk(heading) { 40 } else { 60 });
    }
    let whole = one_line(rule);
    // "Correction: flags are in Unleash" is named by what follows its label.
    let line = without_label(&whole);
    let t = line.trim_end_matches(['.', '。', '!', '！']);
    let cut = [" — ", " – ", " -- ", "; ", ": "]
        .iter()
        .filter_map(|d| t.find(d))
        .min()
        .unwrap_or(t.len());
    let head = t[..cut].trim();
    let mut head = if head.chars().count() < 8 { t } else { head };
    // "The staging dashboard is https://…" → "The staging dashboard".
    // "Terraform state is in s3://…" → "Terraform state"; "管理画面は https://…" → "管理画面".
    if let Some(u) = head.find("://")
        && let Some(sp) = head[..u].rfind(char::is_whitespace)
    {
        let mut before = head[..sp].trim_end();
        loop {
            let trimmed = [
                ":", "：", " is", " are", " at", " in", " on", " under", " lives", " live", "は",
                "が", "在", "是", "，", ",",
            ]
            .iter()
            .fold(before, |b, suffix| b.strip_suffix(suffix).unwrap_or(b))
            .trim_end();
            if trimmed == before {
                break;
            }
            before = trimmed;
        }
        if before.chars().count() >= if mostly_cjk(before) { 4 } else { 8 } {
            head = before;
        }
    }
    truncate_chars(head, if mostly_cjk(head) { 40 } else { 60 })
}

/// `line` without a label before a colon ("Team convention: …") or a scope before a comma
/// ("In all my projects, use pnpm", "Globally, prefer tabs"), when enough is left.
fn without_label(line: &str) -> &str {
    let labelled = line
        .split_once(": ")
        .filter(|(label, rest)| is_label(label) && rest.trim().chars().count() >= 8)
        .map(|(_, rest)| rest.trim_start());
    if let Some(rest) = labelled {
        return rest;
    }
    line.split_once(", ")
        .filter(|(scope, rest)| {
            matches!(
                scope.trim().to_lowercase().as_str(),
                "globally"
                    | "in all my projects"
                    | "in all projects"
                    | "in every project"
                    | "across all projects"
                    | "across all my projects"
                    | "everywhere"
                    | "in general"
                    | "generally"
            ) && rest.trim().chars().count() >= 8
        })
        .map_or(line, |(_, rest)| rest.trim_start())
}

/// Whether the words before a colon only say what kind of remark follows ("Correction",
/// "Quick rule for this app", "Globally", "Team convention"), not its subject.
fn is_label(label: &str) -> bool {
    let mut l = label.trim().to_lowercase();
    // An agent's note: "The user asked to remember: …".
    for asked in [
        "the user asked me to ",
        "the user asked to ",
        "user asked to ",
        "the user wants me to ",
        "the user wants you to ",
        "the user said to ",
        "i was asked to ",
        "asked to ",
    ] {
        if let Some(rest) = l.strip_prefix(asked) {
            l = rest.to_owned();
            break;
        }
    }
    for lead in [
        "a ",
        "one more ",
        "another ",
        "quick ",
        "small ",
        "general ",
        "important ",
    ] {
        if let Some(rest) = l.strip_prefix(lead) {
            l = rest.to_owned();
        }
    }
    for place in [
        " for this app",
        " for this project",
        " for this repo",
        " for this codebase",
        " for this team",
        " for all projects",
        " for all my projects",
        " for every project",
        " for everything",
        " here",
    ] {
        if let Some(rest) = l.strip_suffix(place) {
            l = rest.to_owned();
        }
    }
    LABELS.contains(&l.as_str())
}

/// Labels a statement may open with, which say what kind of remark follows, not its subject.
const LABELS: &[&str] = &[
    "globally",
    "global",
    "global rule",
    "house rule",
    "team rule",
    "project rule",
    "team convention",
    "convention",
    "policy",
    "team policy",
    "preference",
    "in general",
    "generally",
    "everywhere",
    "in all my projects",
    "in every project",
    "across all projects",
    "general",
    "correction",
    "note",
    "nb",
    "fyi",
    "btw",
    "update",
    "reminder",
    "heads up",
    "important",
    "rule",
    "context",
    "ps",
    "tip",
    "warning",
    "also",
    "remember",
    "for the record",
];

/// A one-line description: the rule, then its reason when there is room (≤ 150 characters).
pub fn derive_description(rule: &str, why: Option<&str>) -> String {
    let whole = one_line(rule);
    // "Team convention: …" is described by what follows its label.
    let r = match without_label(&whole) {
        rest if rest.len() < whole.len() => crate::text::capitalize(rest),
        _ => whole.clone(),
    };
    let mut d = r.trim_end_matches(['.', '。']).to_string();
    if let Some(w) = why {
        let w = one_line(w);
        let w = w.trim_end_matches(['.', '。']);
        // "We got burned" → "we got burned" (but "NPM rewrites" stays).
        let mut cs = w.chars();
        let w = match (cs.next(), cs.next()) {
            (Some(f), Some(s)) if f.is_uppercase() && s.is_lowercase() => {
                format!("{}{}", f.to_lowercase(), &w[f.len_utf8()..])
            }
            _ => w.to_string(),
        };
        if d.chars().count() + w.chars().count() + 3 <= 150 {
            d = format!("{d} — {w}");
        }
    }
    truncate_chars(&d, 150)
}

/// A memory's text as stored: redacted, trimmed, without the U+FFFD that stands for bytes a
/// transcript had broken (invalid UTF-8, half an emoji): they carry nothing to remember.
pub(crate) fn clean(s: &str) -> String {
    let s = if s.contains('\u{FFFD}') || s.chars().any(is_control) {
        std::borrow::Cow::Owned(printable(&without_broken_bytes(s)))
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    cairn_redact::redact(s.trim()).into_owned()
}

/// `s` without U+FFFD, and without the space that stood before them when a space or a
/// punctuation mark follows ("the key \u{FFFD}\u{FFFD} is" → "the key is", not "the key  is").
fn without_broken_bytes(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\u{FFFD}' {
            out.push(c);
            continue;
        }
        while chars.peek() == Some(&'\u{FFFD}') {
            chars.next();
        }
        let next = chars.peek().copied();
        if out.ends_with(' ')
            && next.is_none_or(|n| n == ' ' || matches!(n, '.' | ',' | ';' | ':' | '!' | '?' | ')'))
        {
            out.pop();
        }
    }
    out
}

/// A control character a memory never keeps: all but line break and tab (a NUL, a terminal
/// escape, a C1 control).
fn is_control(c: char) -> bool {
    c.is_control() && c != '\n' && c != '\t'
}

/// `s` without control characters, terminal escape sequences removed whole (`ESC [ … m`
/// colours, `ESC ] … BEL` titles and clipboard writes), so that `cat MEMORY.md` cannot
/// drive the terminal and a file name holds no fragment of one.
fn printable(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            match chars.peek() {
                // CSI: parameters, then one final byte in @..~.
                Some('[') => {
                    chars.next();
                    for f in chars.by_ref() {
                        if ('@'..='~').contains(&f) {
                            break;
                        }
                    }
                }
                // OSC (and DCS, APC, PM, SOS): up to BEL or ESC \.
                Some(']' | 'P' | '_' | '^' | 'X') => {
                    chars.next();
                    while let Some(f) = chars.next() {
                        if f == '\u{7}' {
                            break;
                        }
                        if f == '\u{1b}' {
                            if chars.peek() == Some(&'\\') {
                                chars.next();
                            }
                            break;
                        }
                    }
                }
                // A two-character escape (`ESC c`, `ESC 7`).
                Some(_) => {
                    chars.next();
                }
                None => {}
            }
            continue;
        }
        if !is_control(c) {
            out.push(c);
        }
    }
    out
}

impl MemoryStore {
    /// Opens the memory tables in `store`'s database (creating them if needed). No markdown
    /// views are written until [`MemoryStore::with_views`] names their directory.
    pub fn open(store: Store) -> Result<MemoryStore> {
        crate::schema::ensure(store.connection())?;
        Ok(MemoryStore {
            store,
            recall: None,
            recall_config: None,
            views: None,
            full_index_check: true,
            reader: None,
        })
    }

    /// The agent the hooks' context is for (`claude`, `codex`): memories that agent's own
    /// memory already holds for the project (Claude Code's background extraction saved the
    /// statement into its memory dir) are left out of its session summary and prompts there.
    /// Searches (`recall`, MCP) are not affected.
    pub fn give_context_to(&mut self, agent: &str) {
        self.reader = Some(agent.to_string());
    }

    /// The memories [`MemoryStore::give_context_to`]'s agent holds itself for `scope`.
    pub(crate) fn held_by_reader(&self, scope: &str) -> std::collections::HashSet<String> {
        let Some(agent) = self.reader.as_deref() else {
            return Default::default();
        };
        // (A database from before the table, opened read-only, has none.)
        self.store
            .connection()
            .prepare_cached("SELECT memory_id FROM memory_held WHERE agent = ?1 AND scope = ?2")
            .and_then(|mut st| {
                st.query_map([agent, scope], |r| r.get::<_, String>(0))?
                    .collect::<rusqlite::Result<_>>()
            })
            .unwrap_or_default()
    }

    /// Writes the markdown views under `dir` (normally `<data dir>/memory`).
    pub fn with_views(mut self, dir: impl Into<PathBuf>) -> MemoryStore {
        self.views = Some(dir.into());
        self
    }

    /// The views directory, when set.
    pub fn views_dir(&self) -> Option<&Path> {
        self.views.as_deref()
    }

    /// The underlying store.
    pub fn store(&self) -> &Store {
        &self.store
    }

    /// The underlying store, for writes (ingest in tests and tools).
    pub fn store_mut(&mut self) -> &mut Store {
        &mut self.store
    }

    /// Replaces the ranking configuration of the recall index (benchmarks, evaluation).
    pub fn set_recall_config(&mut self, config: RecallConfig) {
        if let Some(r) = self.recall.as_mut() {
            r.set_config(config.clone());
        }
        self.recall_config = Some(config);
    }

    /// For long-lived processes (the MCP server): keeps a resident copy of the lexical
    /// index, which ranks exactly as FTS5 does and several times faster over large stores
    /// (see `cairn_recall::RecallConfig::resident_lexical`).
    pub fn keep_lexical_index_resident(&mut self) {
        let config = RecallConfig {
            resident_lexical: true,
            ..self.recall_config.clone().unwrap_or_default()
        };
        self.set_recall_config(config);
    }

    /// For one-shot searches (a hook, `cairn recall`): opening the recall index does not
    /// count the memories and the indexed documents to check that they agree (a scan of
    /// both tables, about 3 ms at 10,000 memories); it only repairs an index that is empty
    /// while memories exist (a database from before the index). Every memory write keeps
    /// both in one transaction, and every process that writes still checks in full when it
    /// opens the index (the worker after each turn, `sync`, `remember`, the MCP server), so
    /// an index that drifted otherwise is repaired there.
    pub fn check_index_only_when_empty(&mut self) {
        self.full_index_check = false;
    }

    /// Opens the recall index and loads what searches need now, waiting for the resident
    /// lexical index to be built when it is configured (benchmarks; a server lets the first
    /// search start it in the background instead).
    pub fn warm_up_recall(&mut self) -> Result<()> {
        self.recall_index()?;
        let conn = self.store.connection();
        if let Some(r) = self.recall.as_mut() {
            r.warm_up(conn)?;
        }
        Ok(())
    }

    /// The embedding model searches rank with (`None` before the recall index is opened):
    /// the stored vectors' model, or the static tier's when a process that may not load
    /// the stored model searches a static copy.
    pub fn ranking_model(&self) -> Option<&str> {
        self.recall.as_ref().map(Recall::embedder_id)
    }

    /// For the background path: makes the recall snapshots that the next hook reads current
    /// (see `Recall::prepare_snapshots`), so that it does not build them on the prompt's
    /// clock after memories changed.
    pub fn prepare_search_snapshots(&mut self) -> Result<()> {
        self.recall_index()?;
        let conn = self.store.connection();
        if let Some(r) = self.recall.as_mut() {
            r.prepare_snapshots(conn)?;
        }
        Ok(())
    }

    /// Recomputes the stored memory vectors with the active embedding tier's model when
    /// they come from another one (the tier changed: a model was installed or removed).
    /// For the background/sync path; searches never do this and keep using the stored
    /// model meanwhile. `progress(done, total)` counts memories.
    pub fn reembed_pending(
        &mut self,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<Option<cairn_recall::Reembedded>> {
        self.recall_index()?;
        let conn = self.store.connection();
        match self.recall.as_mut() {
            Some(r) => Ok(r.reembed_pending(conn, progress)?),
            None => Ok(None),
        }
    }

    /// Opens the recall index if needed and makes sure it holds exactly the live memories.
    pub(crate) fn recall_index(&mut self) -> Result<()> {
        if self.recall.is_some() {
            return Ok(());
        }
        let mut r = match &self.recall_config {
            Some(c) => Recall::with_config(self.store.connection(), c.clone())?,
            None => Recall::open(self.store.connection())?,
        };
        // Every memory write changes both tables in one transaction, so one read sees them in
        // step; counting them in two statements could straddle another process's write and
        // start a needless repair (a write, on the recall path).
        let in_step = if self.full_index_check {
            index_in_step(self.store.connection())?
        } else {
            !index_missing(self.store.connection())?
        };
        if !in_step {
            // Repaired under the write lock (taken first: a read turned into a write could
            // fail at once when another process wrote meanwhile), checked again under it.
            let tx = self
                .store
                .connection_mut()
                .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            if !index_in_step(&tx)? {
                let all: Vec<Memory> = tx
                    .prepare(&format!(
                        "SELECT {COLUMNS} FROM memories ORDER BY created_at, id"
                    ))?
                    .query_map([], read_memory)?
                    .collect::<rusqlite::Result<_>>()?;
                let docs: Vec<Document> =
                    all.iter().filter(|m| m.is_live()).map(document).collect();
                r.upsert_many(&tx, &docs)?;
                for m in all.iter().filter(|m| !m.is_live()) {
                    r.remove(&tx, &m.id)?;
                }
            }
            tx.commit()?;
        }
        self.recall = Some(r);
        Ok(())
    }

    /// One memory by id (live or not).
    pub fn get(&self, id: &str) -> Result<Option<Memory>> {
        get_memory(self.store.connection(), id.trim())
    }

    /// Memories, newest first.
    pub fn list(&self, filter: &ListFilter) -> Result<Vec<Memory>> {
        let conn = self.store.connection();
        // Read only what is asked for: the live memories of a few scopes (a write's view
        // refresh) are found by index, not by reading every row.
        let mut clauses: Vec<String> = Vec::new();
        if !filter.include_inactive {
            clauses.push("forgotten_at IS NULL AND superseded_by IS NULL".into());
        }
        if !filter.scopes.is_empty() {
            let marks = vec!["?"; filter.scopes.len()].join(", ");
            clauses.push(format!("scope IN ({marks})"));
        }
        let filter_sql = if clauses.is_empty() {
            String::new()
        } else {
            format!("WHERE {}", clauses.join(" AND "))
        };
        let mut st = conn.prepare_cached(&format!(
            // Newest first; of the same second, the one written last first.
            "SELECT {COLUMNS} FROM memories {filter_sql} ORDER BY updated_at DESC, rowid DESC"
        ))?;
        let rows = st.query_map(
            rusqlite::params_from_iter(filter.scopes.iter()),
            read_memory,
        )?;
        let mut out = Vec::new();
        for m in rows {
            let m = m?;
            if !filter.include_inactive && !m.is_live() {
                continue;
            }
            if filter.memory_type.is_some_and(|t| t != m.memory_type) {
                continue;
            }
            if !filter.scopes.is_empty() && !filter.scopes.contains(&m.scope) {
                continue;
            }
            out.push(m);
        }
        Ok(out)
    }

    /// The live memories of `scopes` most useful first (`views::usefulness_of`, then newer,
    /// then by id), as ids with their types, and how many live memories the scopes hold.
    /// Of each type only the first `per_type` are certain to be there: besides the memories
    /// recalled at least once, a type's never-recalled ones are read newest first, `per_type`
    /// of them and any that share the last one's update time. That is exact for the first
    /// `per_type` of each type, since a never-recalled memory ranks below every newer one of
    /// its type that was never recalled either. Reads the covering indexes
    /// `memories_live_rank` and `memories_live_recalled` only, and only those entries (and
    /// counts the scopes' live memories in the first).
    pub(crate) fn live_ids_by_usefulness(
        &self,
        scopes: &[&str],
        now: i64,
        per_type: usize,
    ) -> Result<(Vec<(String, MemoryType)>, usize)> {
        const LIVE: &str = "forgotten_at IS NULL AND superseded_by IS NULL";
        const KNOWN: [MemoryType; 4] = [
            MemoryType::User,
            MemoryType::Feedback,
            MemoryType::Project,
            MemoryType::Reference,
        ];
        let conn = self.store.connection();
        let mut rows: Vec<(f64, i64, String, MemoryType)> = Vec::new();
        let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
        let mut keep = |id: String, t: &str, updated_at: i64, recall_count: i64| {
            let t = MemoryType::parse(t).unwrap_or(MemoryType::Project);
            if seen.insert(id.clone()) {
                let u = crate::views::usefulness_of(t, updated_at, recall_count, now);
                rows.push((u, updated_at, id, t));
            }
        };
        let limit = i64::try_from(per_type).unwrap_or(i64::MAX);
        let mut total = 0usize;
        let mut count = conn.prepare_cached(&format!(
            "SELECT count(*) FROM memories INDEXED BY memories_live_rank WHERE scope = ?1 AND {LIVE}"
        ))?;
        // Recalled ones, and ones of a type this build does not know (normally none): all.
        let mut others = conn.prepare_cached(&format!(
            "SELECT id, type, updated_at, recall_count FROM memories INDEXED BY memories_live_recalled
             WHERE scope = ?1 AND {LIVE}
               AND (recall_count != 0 OR type NOT IN ('user', 'feedback', 'project', 'reference'))"
        ))?;
        // Never recalled ones of one type, newest first (the index read backwards).
        let mut newest = conn.prepare_cached(&format!(
            "SELECT id, updated_at FROM memories INDEXED BY memories_live_rank
             WHERE scope = ?1 AND type = ?2 AND recall_count = 0 AND {LIVE}
             ORDER BY updated_at DESC, recall_count DESC, id DESC LIMIT ?3"
        ))?;
        let mut at_time = conn.prepare_cached(&format!(
            "SELECT id FROM memories INDEXED BY memories_live_rank
             WHERE scope = ?1 AND type = ?2 AND updated_at = ?3 AND recall_count = 0 AND {LIVE}"
        ))?;
        for scope in scopes {
            let n: i64 = count.query_row([scope], |r| r.get(0))?;
            total += usize::try_from(n).unwrap_or(0);
            let mut q = others.query([scope])?;
            while let Some(r) = q.next()? {
                let t = r.get_ref(1)?.as_str().unwrap_or("");
                keep(r.get(0)?, t, r.get(2)?, r.get(3)?);
            }
            for t in KNOWN {
                let mut got = 0usize;
                let mut last: Option<i64> = None;
                let mut q = newest.query(params![scope, t.as_str(), limit])?;
                while let Some(r) = q.next()? {
                    let updated_at: i64 = r.get(1)?;
                    keep(r.get(0)?, t.as_str(), updated_at, 0);
                    got += 1;
                    last = Some(updated_at);
                }
                // The cut may fall inside a group of equal update times: all of it.
                if got == per_type
                    && let Some(u) = last
                {
                    let mut q = at_time.query(params![scope, t.as_str(), u])?;
                    while let Some(r) = q.next()? {
                        keep(r.get(0)?, t.as_str(), u, 0);
                    }
                }
            }
        }
        rows.sort_by(|a, b| b.0.total_cmp(&a.0).then(b.1.cmp(&a.1)).then(a.2.cmp(&b.2)));
        let ranked = rows.into_iter().map(|(_, _, id, t)| (id, t)).collect();
        Ok((ranked, total))
    }

    /// Live memories of some scopes.
    pub fn live_in(&self, scopes: &[&str]) -> Result<Vec<Memory>> {
        self.list(&ListFilter {
            scopes: scopes.iter().map(|s| s.to_string()).collect(),
            ..ListFilter::default()
        })
    }

    /// Stores a memory written by hand (or by an agent through MCP): dates resolved, text
    /// redacted, deduplicated against the scope's memories (a near-duplicate is updated, a
    /// contradiction supersedes the old memory). The views are regenerated.
    pub fn remember(&mut self, new: NewMemory, now: i64) -> Result<WriteOutcome> {
        if new.rule.trim().is_empty() {
            return Err(MemoryError::Invalid("the memory text is empty".into()));
        }
        let size = new.rule.len()
            + new.why.as_deref().map_or(0, str::len)
            + new.how.as_deref().map_or(0, str::len);
        if size > MAX_MEMORY_BYTES {
            return Err(MemoryError::Invalid(format!(
                "the memory text is {size} bytes, more than the {MAX_MEMORY_BYTES} a memory holds: \
                 save what to remember and where the rest is (a file, a link), not the document"
            )));
        }
        self.recall_index()?;
        let mut out = self.write_new(new, None, now)?;
        // The memory is stored: a view that cannot be written is said, not a failed write.
        if let Err(e) = self.refresh_scope_views(&[out.memory.scope.as_str()], now) {
            out.views_error = Some(e.to_string());
        }
        Ok(out)
    }

    /// Inserts memories as given, in one transaction, without looking for duplicates (bulk
    /// loads of memories that are already curated, benchmarks). Text is still redacted and
    /// dates resolved; the recall index is updated; views are not regenerated.
    pub fn insert_many(&mut self, new: &[NewMemory], now: i64) -> Result<Vec<String>> {
        let (tx, recall) = self.begin_write()?;
        let mut docs = Vec::with_capacity(new.len());
        let mut ids = Vec::with_capacity(new.len());
        for (i, n) in new.iter().enumerate() {
            let p = prepare(n);
            ensure_scope(&tx, &n.scope)?;
            let id = new_id(
                &tx,
                &format!("{}\u{0}{}\u{0}{i}\u{0}{now}", n.scope, p.rule),
            )?;
            let m = Memory {
                id,
                memory_type: n.memory_type,
                scope: n.scope.clone(),
                name: p.name,
                description: p.description,
                body: render_body(&p.rule, p.why.as_deref(), p.how.as_deref()),
                rule: p.rule,
                why: p.why,
                how: p.how,
                keywords: p.keywords,
                source: n.source.clone(),
                created_at: n.at,
                updated_at: n.at,
                last_recalled_at: None,
                recall_count: 0,
                superseded_by: None,
                forgotten_at: None,
            };
            insert_memory(&tx, &m)?;
            docs.push(document(&m));
            ids.push(m.id);
        }
        recall.upsert_many(&tx, &docs)?;
        tx.commit()?;
        Ok(ids)
    }

    /// Opens the recall index and begins an immediate write transaction, handing out both, so
    /// that a write keeps the memory tables and the index in step.
    pub(crate) fn begin_write(&mut self) -> Result<(rusqlite::Transaction<'_>, &mut Recall)> {
        self.recall_index()?;
        let Self { store, recall, .. } = self;
        let recall = recall
            .as_mut()
            .ok_or_else(|| MemoryError::Invalid("recall index not open".into()))?;
        let tx = store
            .connection_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        Ok((tx, recall))
    }

    /// The write path shared by `remember` and extraction (no view refresh).
    pub(crate) fn write_new(
        &mut self,
        new: NewMemory,
        origin: Option<&str>,
        now: i64,
    ) -> Result<WriteOutcome> {
        let (tx, recall) = self.begin_write()?;
        let out = write_new_in(&tx, recall, new, origin, now)?;
        tx.commit()?;
        Ok(out)
    }

    /// Forgets a memory: its text is erased and it leaves the recall index and the views, but
    /// a tombstone keeps it from coming back from a re-extraction of the turn that made it.
    pub fn forget(&mut self, id: &str, now: i64) -> Result<Memory> {
        let id = id.trim();
        let Some(m) = self.get(id)? else {
            return Err(MemoryError::NotFound(id.to_string()));
        };
        let (tx, recall) = self.begin_write()?;
        forget_in(&tx, recall, &m.id, now)?;
        tx.commit()?;
        self.refresh_scope_views(&[m.scope.as_str()], now)?;
        self.get(id)?
            .ok_or_else(|| MemoryError::NotFound(id.to_string()))
    }

    /// The best `k` memories for `query` among `scope`'s and the global ones (never another
    /// project's) that bear on it: each that shares a word of the query that says something,
    /// and one found by meaning alone when it stands out (fewer than `k`, or none, when the
    /// rest are only the nearest of unrelated memories). Each result's
    /// `last_recalled`/`recall_count` is updated, unless another process holds the write lock
    /// longer than the bookkeeping waits (see [`MemoryStore::prompt_context`]): the results
    /// come first.
    pub fn recall(
        &mut self,
        query: &str,
        scope: &str,
        k: usize,
        now: i64,
    ) -> Result<Vec<Recalled>> {
        let hits = self.search(query, scope, k, now)?;
        let keep = crate::context::relevant_to_search(query, &hits);
        let hits: Vec<Recalled> = hits
            .into_iter()
            .zip(keep)
            .filter_map(|(h, k)| k.then_some(h))
            .collect();
        let ids: Vec<&str> = hits.iter().map(|h| h.memory.id.as_str()).collect();
        let booked = self
            .with_busy_wait(crate::context::BOOKKEEPING_WAIT, |mem| {
                mem.record_recall(&ids, now)
            })
            .is_ok();
        Ok(hits
            .into_iter()
            .map(|mut h| {
                if booked {
                    h.memory.recall_count += 1;
                    h.memory.last_recalled_at = Some(now);
                }
                h
            })
            .collect())
    }

    /// Like [`MemoryStore::recall`] without recording the recall.
    pub fn search(
        &mut self,
        query: &str,
        scope: &str,
        k: usize,
        now: i64,
    ) -> Result<Vec<Recalled>> {
        self.recall_index()?;
        let scopes: Vec<&str> = if scope == GLOBAL {
            vec![GLOBAL]
        } else {
            vec![GLOBAL, scope]
        };
        let Self { store, recall, .. } = self;
        let conn = store.connection();
        let Some(r) = recall.as_mut() else {
            return Ok(Vec::new());
        };
        let hits = r.search(conn, query, &scopes, k, now)?;
        let mut out = Vec::with_capacity(hits.len());
        // (`Recall::search` already leaves out hits scoring 0.)
        for h in hits {
            match get_memory(conn, &h.id)? {
                Some(m) if m.is_live() && scopes.contains(&m.scope.as_str()) => {
                    out.push(Recalled {
                        memory: m,
                        score: h.score,
                        cosine: h.cosine,
                        lexical: h.bm25.is_some(),
                    })
                }
                // Forgotten or replaced by another process since this one read the index
                // (that write removed it from the index too): not a result. A search never
                // writes; an index that really drifted is rebuilt on the next open.
                _ => {}
            }
        }
        Ok(out)
    }

    /// Counts a recall of these memories (`recall_count + 1`, `last_recalled = now`).
    pub fn record_recall(&mut self, ids: &[&str], now: i64) -> Result<()> {
        if ids.is_empty() {
            return Ok(());
        }
        let (tx, recall) = self.begin_write()?;
        record_recall_in(&tx, recall, ids, now)?;
        tx.commit()?;
        Ok(())
    }

    /// Scopes that have live memories, with their counts.
    pub fn scopes(&self) -> Result<Vec<(String, usize)>> {
        let conn = self.store.connection();
        let mut st = conn.prepare(
            "SELECT scope, count(*) FROM memories WHERE forgotten_at IS NULL AND superseded_by IS NULL
             GROUP BY scope ORDER BY scope",
        )?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        let mut out = Vec::new();
        for r in rows {
            let (s, n) = r?;
            out.push((s, usize::try_from(n).unwrap_or(0)));
        }
        Ok(out)
    }
}

pub(crate) struct Prepared {
    pub(crate) rule: String,
    pub(crate) why: Option<String>,
    pub(crate) how: Option<String>,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) keywords: Vec<String>,
}

/// [`prepare`] for the other write paths of this crate.
pub(crate) fn prepare_new(new: &NewMemory) -> Prepared {
    prepare(new)
}

/// Dates resolved, text redacted, name, description and keywords derived.
fn prepare(new: &NewMemory) -> Prepared {
    let anchor = anchor_date(new.at);
    let fix = |s: &str| clean(&absolutise(s, anchor));
    let rule = with_full_stop(&fix(&new.rule));
    let why = new.why.as_deref().map(fix).filter(|s| !s.is_empty());
    let how = new.how.as_deref().map(fix).filter(|s| !s.is_empty());
    let name = new
        .name
        .as_deref()
        .map(|n| clean(&one_line(n)))
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| derive_name(&rule));
    let description = new
        .description
        .as_deref()
        .map(|d| clean(&one_line(d)))
        .filter(|d| !d.is_empty())
        .unwrap_or_else(|| derive_description(&rule, why.as_deref()));
    // The subject is in the name and the rule (a tool named only in the Why is not what the
    // memory is about).
    let keywords = keywords_for(new.memory_type, &format!("{name} {rule}"));
    Prepared {
        rule,
        why,
        how,
        name,
        description,
        keywords,
    }
}

/// Forgets a memory inside a transaction: its text is erased, it leaves recall, and the
/// row stays as a tombstone (re-extraction of its turn does not bring it back).
pub(crate) fn forget_in(conn: &Connection, recall: &mut Recall, id: &str, now: i64) -> Result<()> {
    let said: Option<(String, String)> = conn
        .query_row(
            "SELECT scope, rule FROM memories WHERE id = ?1 AND rule != ''",
            [id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    if let Some((scope, rule)) = said
        && let Some(fingerprint) = text_fingerprint(&rule)
    {
        conn.execute(
            "INSERT INTO memory_forgotten_texts(scope, fingerprint, memory_id, forgotten_at)
             VALUES (?1, ?2, ?3, ?4)
             ON CONFLICT(scope, fingerprint) DO UPDATE SET
                 memory_id = excluded.memory_id, forgotten_at = excluded.forgotten_at",
            params![scope, fingerprint, id, now],
        )?;
    }
    conn.execute(
        "UPDATE memories SET forgotten_at = coalesce(forgotten_at, ?2), name = '(forgotten)',
            description = '', rule = '', why = NULL, how = NULL, keywords = ''
         WHERE id = ?1",
        params![id, now],
    )?;
    take_out_in(conn, recall, id)
}

/// A statement's words, in any order or case and whatever the punctuation, as a hash
/// (`None` for a statement without any): what [`forget_in`] keeps of a forgotten memory.
pub(crate) fn text_fingerprint(rule: &str) -> Option<String> {
    let mut words: Vec<String> = crate::text::content_words(rule).into_iter().collect();
    if words.is_empty() {
        return None;
    }
    words.sort_unstable();
    Some(format!(
        "{:016x}",
        xxhash_rust::xxh3::xxh3_64(words.join(" ").as_bytes())
    ))
}

/// The forgotten memory of `scope` that said `rule`'s words, forgotten at `at` or later (the
/// statement was made before the forget).
pub(crate) fn forgotten_since(
    conn: &Connection,
    scope: &str,
    rule: &str,
    at: i64,
) -> Result<Option<String>> {
    let Some(fingerprint) = text_fingerprint(rule) else {
        return Ok(None);
    };
    Ok(conn
        .query_row(
            "SELECT memory_id FROM memory_forgotten_texts
             WHERE scope = ?1 AND fingerprint = ?2 AND forgotten_at >= ?3",
            params![scope, fingerprint, at],
            |r| r.get::<_, String>(0),
        )
        .optional()?)
}

/// Takes a memory out of recall and out of what sessions were shown (it was forgotten,
/// retired or replaced), inside a transaction.
pub(crate) fn take_out_in(conn: &Connection, recall: &mut Recall, id: &str) -> Result<()> {
    conn.execute("DELETE FROM memory_shown WHERE memory_id = ?1", [id])?;
    recall.remove(conn, id)?;
    Ok(())
}

/// Retires a live memory inside a transaction: out of recall and the views, its text kept
/// ([`MemoryStore::restore`] brings it back). Returns whether it was live.
pub(crate) fn retire_in(
    conn: &Connection,
    recall: &mut Recall,
    id: &str,
    now: i64,
) -> Result<bool> {
    let n = conn.execute(
        "UPDATE memories SET forgotten_at = ?2
         WHERE id = ?1 AND forgotten_at IS NULL AND superseded_by IS NULL",
        params![id, now],
    )?;
    take_out_in(conn, recall, id)?;
    Ok(n > 0)
}

/// The memories of `scope` that may be on the subject of `rule`: what the search finds, and
/// for a rule about the language to answer in, every other such rule (in any language: the
/// search would not find them).
fn same_subject_in(
    conn: &Connection,
    recall: &mut Recall,
    rule: &str,
    scope: &str,
    now: i64,
) -> Result<Vec<String>> {
    let mut probe: Vec<String> = recall
        .search(conn, rule, &[scope], 8, now)?
        .into_iter()
        .map(|h| h.id)
        .collect();
    if reply_language(rule).is_some() {
        let mut st = conn.prepare_cached(
            "SELECT id, rule FROM memories WHERE scope = ?1 AND type IN ('feedback', 'user')
               AND forgotten_at IS NULL AND superseded_by IS NULL",
        )?;
        let rows = st.query_map([scope], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?;
        for row in rows {
            let (id, rule) = row?;
            if reply_language(&rule).is_some() && !probe.contains(&id) {
                probe.push(id);
            }
        }
    }
    Ok(probe)
}

/// Retires, inside a transaction, the live memories of the new statement's scope that it
/// replaces and that are older than it, without storing the statement: what the agent saved
/// in its own memory holds it ("Correction: flags are in Unleash", in a turn where Claude
/// Code wrote its memory file), and cairn's older memory ("flags are in LaunchDarkly") must
/// not go on being injected. Returns how many were retired.
pub(crate) fn retire_replaced_in(
    conn: &Connection,
    recall: &mut Recall,
    new: &NewMemory,
    now: i64,
) -> Result<usize> {
    let p = prepare(new);
    let rule_vec = cairn_embed::embed(&p.rule);
    let mut retired = 0;
    for id in same_subject_in(conn, recall, &p.rule, &new.scope, now)? {
        let Some(old) = get_memory(conn, &id)? else {
            continue;
        };
        if !old.is_live() || old.scope != new.scope || old.updated_at > new.at {
            continue;
        }
        let cos = cairn_embed::cosine(&rule_vec, &cairn_embed::embed(&old.rule));
        if matches!(
            relation(new.memory_type, &p.rule, old.memory_type, &old.rule, cos),
            Relation::Supersedes | Relation::Refines
        ) {
            retired += usize::from(retire_in(conn, recall, &id, now)?);
        }
    }
    Ok(retired)
}

/// Inserts or merges a new memory inside a transaction.
pub(crate) fn write_new_in(
    conn: &Connection,
    recall: &mut Recall,
    new: NewMemory,
    origin: Option<&str>,
    now: i64,
) -> Result<WriteOutcome> {
    let mut p = prepare(&new);
    ensure_scope(conn, &new.scope)?;
    let probe = same_subject_in(conn, recall, &p.rule, &new.scope, now)?;
    let rule_vec = cairn_embed::embed(&p.rule);
    let mut duplicate: Option<Memory> = None;
    // Every memory the new one replaces ("use yarn, not npm" replaces each pnpm rule).
    let mut superseded: Vec<Memory> = Vec::new();
    for id in probe {
        let Some(old) = get_memory(conn, &id)? else {
            continue;
        };
        if !old.is_live() || old.scope != new.scope {
            continue;
        }
        let cos = cairn_embed::cosine(&rule_vec, &cairn_embed::embed(&old.rule));
        // Said before a memory that replaces it ("we use pnpm", read after "we switched from
        // pnpm to bun" was stored): outdated already. It changes nothing, and its origin
        // goes with the memory that holds what is true now.
        if old.updated_at > new.at
            && matches!(
                relation(old.memory_type, &old.rule, new.memory_type, &p.rule, cos),
                Relation::Supersedes | Relation::Refines
            )
        {
            if let Some(o) = origin {
                insert_origin(conn, o, &old.id)?;
            }
            return Ok(WriteOutcome {
                action: Action::Unchanged,
                memory: old,
                replaced: None,
                views_error: None,
            });
        }
        match relation(new.memory_type, &p.rule, old.memory_type, &old.rule, cos) {
            // The first duplicate holds the statement; the scan goes on for what it
            // contradicts ("use uv for everything, poetry is gone" restates "use uv, not
            // poetry" and still retires "we use poetry").
            Relation::Duplicate => {
                if duplicate.is_none() {
                    duplicate = Some(old);
                }
            }
            Relation::Supersedes => superseded.push(old),
            Relation::Refines => {
                // Said more fully now: what the old memory knew about why and how stays.
                if p.why.is_none() {
                    p.why.clone_from(&old.why);
                }
                if p.how.is_none() {
                    p.how.clone_from(&old.how);
                }
                superseded.push(old);
            }
            Relation::Distinct => {}
        }
    }

    // A statement older than a memory it would replace is outdated already (a transcript
    // ingested late, old turns read again by a newer extractor): it changes nothing, and its
    // origin goes with the memory that holds what is true now.
    if let Some(newer) = superseded
        .iter()
        .filter(|o| o.updated_at > new.at)
        .max_by_key(|o| o.updated_at)
    {
        let m = newer.clone();
        if let Some(o) = origin {
            insert_origin(conn, o, &m.id)?;
        }
        return Ok(WriteOutcome {
            action: Action::Unchanged,
            memory: m,
            replaced: None,
            views_error: None,
        });
    }

    if let Some(old) = duplicate {
        let merged_why = old.why.clone().or(p.why);
        let merged_how = old.how.clone().or(p.how);
        let mut changed = merged_why != old.why || merged_how != old.how || new.at > old.updated_at;
        let mut replaced = None;
        for retired in superseded.iter().filter(|r| r.id != old.id) {
            conn.execute(
                "UPDATE memories SET superseded_by = ?2 WHERE id = ?1",
                params![retired.id, old.id],
            )?;
            recall.remove(conn, &retired.id)?;
            replaced.get_or_insert(retired.id.clone());
            changed = true;
        }
        let mut m = old;
        if changed {
            m.why = merged_why;
            m.how = merged_how;
            m.updated_at = m.updated_at.max(new.at);
            if m.description == derive_description(&m.rule, None) {
                m.description = derive_description(&m.rule, m.why.as_deref());
            }
            m.body = render_body(&m.rule, m.why.as_deref(), m.how.as_deref());
            conn.execute(
                "UPDATE memories SET why = ?2, how = ?3, description = ?4, updated_at = ?5 WHERE id = ?1",
                params![m.id, m.why, m.how, m.description, m.updated_at],
            )?;
            recall.upsert(conn, &document(&m))?;
        }
        if let Some(o) = origin {
            insert_origin(conn, o, &m.id)?;
        }
        return Ok(WriteOutcome {
            action: if changed {
                Action::Updated
            } else {
                Action::Unchanged
            },
            memory: m,
            replaced,
            views_error: None,
        });
    }

    let m = insert_prepared(conn, recall, &new, p, origin)?;
    let mut replaced = None;
    for old in superseded {
        conn.execute(
            "UPDATE memories SET superseded_by = ?2 WHERE id = ?1",
            params![old.id, m.id],
        )?;
        recall.remove(conn, &old.id)?;
        replaced.get_or_insert(old.id);
    }
    Ok(WriteOutcome {
        action: if replaced.is_some() {
            Action::Superseded
        } else {
            Action::Created
        },
        memory: m,
        replaced,
        views_error: None,
    })
}

/// Creates a memory as given (no similarity probe) inside a transaction.
pub(crate) fn create_in(
    conn: &Connection,
    recall: &mut Recall,
    new: &NewMemory,
    origin: Option<&str>,
) -> Result<Memory> {
    ensure_scope(conn, &new.scope)?;
    insert_prepared(conn, recall, new, prepare(new), origin)
}

fn insert_prepared(
    conn: &Connection,
    recall: &mut Recall,
    new: &NewMemory,
    p: Prepared,
    origin: Option<&str>,
) -> Result<Memory> {
    let Prepared {
        rule,
        why,
        how,
        name,
        description,
        keywords,
    } = p;
    let seed = format!(
        "{}\u{0}{}\u{0}{}\u{0}{}",
        new.scope,
        rule,
        origin.unwrap_or(""),
        if origin.is_some() { 0 } else { now_nanos() }
    );
    let id = new_id(conn, &seed)?;
    let m = Memory {
        id,
        memory_type: new.memory_type,
        scope: new.scope.clone(),
        name,
        description,
        body: render_body(&rule, why.as_deref(), how.as_deref()),
        rule,
        why,
        how,
        keywords,
        source: new.source.clone(),
        created_at: new.at,
        updated_at: new.at,
        last_recalled_at: None,
        recall_count: 0,
        superseded_by: None,
        forgotten_at: None,
    };
    insert_memory(conn, &m)?;
    recall.upsert(conn, &document(&m))?;
    if let Some(o) = origin {
        insert_origin(conn, o, &m.id)?;
    }
    Ok(m)
}

fn now_nanos() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos() as i64)
}

pub(crate) fn insert_memory(conn: &Connection, m: &Memory) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO memories(id, type, scope, name, description, rule, why, how, keywords,
            source_kind, source_agent, source_session, source_turn, source_path, source_line,
            source_at, created_at, updated_at, last_recalled_at, recall_count, superseded_by,
            forgotten_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18,
                 ?19, ?20, ?21, ?22)",
    )?
    .execute(params![
        m.id,
        m.memory_type.as_str(),
        m.scope,
        m.name,
        m.description,
        m.rule,
        m.why,
        m.how,
        m.keywords.join("\n"),
        m.source.kind,
        m.source.agent,
        m.source.session,
        m.source.turn,
        m.source.path,
        m.source.line.map(|l| l as i64),
        m.source.at,
        m.created_at,
        m.updated_at,
        m.last_recalled_at,
        m.recall_count,
        m.superseded_by,
        m.forgotten_at,
    ])?;
    Ok(())
}

/// Rewrites the editable fields of a memory (a hand edit of its view file).
pub(crate) fn update_fields(conn: &Connection, recall: &mut Recall, m: &Memory) -> Result<()> {
    conn.execute(
        "UPDATE memories SET type = ?2, name = ?3, description = ?4, rule = ?5, why = ?6, how = ?7,
            keywords = ?8, updated_at = ?9 WHERE id = ?1",
        params![
            m.id,
            m.memory_type.as_str(),
            m.name,
            m.description,
            m.rule,
            m.why,
            m.how,
            m.keywords.join("\n"),
            m.updated_at
        ],
    )?;
    recall.upsert(conn, &document(m))?;
    Ok(())
}

pub(crate) fn insert_origin(conn: &Connection, origin: &str, id: &str) -> Result<()> {
    conn.prepare_cached(
        "INSERT INTO memory_origins(origin, memory_id) VALUES (?1, ?2)
         ON CONFLICT(origin) DO NOTHING",
    )?
    .execute(params![origin, id])?;
    Ok(())
}

pub(crate) fn ensure_scope(conn: &Connection, scope: &str) -> Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO memory_scopes(slug, scope) VALUES (?1, ?2)")?
        .execute(params![scope_slug(scope), scope])?;
    Ok(())
}

/// Slug → scope for every scope cairn has seen.
pub(crate) fn scope_slugs(conn: &Connection) -> Result<HashMap<String, String>> {
    let mut st = conn.prepare("SELECT slug, scope FROM memory_scopes")?;
    let rows = st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

#[cfg(test)]
mod tests {
    use super::{clean, derive_name};

    /// What a memory keeps is printable: NULs and terminal escapes (colours, a title or
    /// clipboard write) are gone, whole, from the text, so from the views and file names.
    #[test]
    fn control_characters_and_terminal_escapes_are_not_kept() {
        assert_eq!(
            clean("Use \u{1b}[31mred\u{1b}[0m for\u{0} errors"),
            "Use red for errors"
        );
        assert_eq!(
            clean("Never \u{1b}]52;c;ZXZpbA==\u{7}paste\u{1b}]0;title\u{1b}\\ secrets"),
            "Never paste secrets"
        );
        assert_eq!(clean("line one\nline\ttwo\u{9b}"), "line one\nline\ttwo");
    }

    /// A title names the thing a pointer is for, not the words that lead to its link.
    #[test]
    fn names_of_pointers_stop_before_the_link() {
        for (rule, name) in [
            (
                "The staging dashboard is https://grafana.example.com/d/staging",
                "The staging dashboard",
            ),
            (
                "Terraform state is in s3://acme-tfstate-prod, locked with DynamoDB",
                "Terraform state",
            ),
            (
                "The runbooks live at https://wiki.example.com/ops",
                "The runbooks",
            ),
            (
                "ステージング環境の管理画面は https://admin.example.com です",
                "ステージング環境の管理画面",
            ),
        ] {
            assert_eq!(derive_name(rule), name, "{rule}");
        }
    }

    /// Bytes a transcript had broken leave no stray space behind.
    #[test]
    fn broken_bytes_leave_no_stray_space() {
        for (raw, kept) in [
            (
                "use the key \u{FFFD}\u{FFFD} from vault",
                "use the key from vault",
            ),
            ("caf\u{FFFD} menu", "caf menu"),
            ("ends with \u{FFFD}.", "ends with."),
            ("\u{FFFD} leading", "leading"),
            ("a \u{FFFD}b", "a b"),
        ] {
            assert_eq!(clean(raw), kept, "{raw:?}");
        }
    }

    /// A label ("Correction:") and heading marks are not the name; a subject before a colon is.
    #[test]
    fn names_skip_labels_and_heading_marks() {
        for (rule, name) in [
            (
                "Correction: feature flags are in Unleash, not LaunchDarkly.",
                "feature flags are in Unleash, not LaunchDarkly",
            ),
            (
                "# gamma lint\nThe gamma repo lints with ruff.",
                "gamma lint",
            ),
            ("Staging DB: db2.internal:5432", "Staging DB"),
            ("Globally: answer me in English.", "answer me in English"),
            (
                "Quick rule for this app: money is integer cents.",
                "money is integer cents",
            ),
            (
                "Team convention: branch names are feature/<ticket>.",
                "branch names are feature/<ticket>",
            ),
            (
                "global rule: no force pushes to main",
                "no force pushes to main",
            ),
            (
                "Globally, prefer tabs over spaces.",
                "prefer tabs over spaces",
            ),
            ("In all my projects, use pnpm.", "use pnpm"),
            (
                "The user asked to remember: staging resets every Sunday.",
                "staging resets every Sunday",
            ),
        ] {
            assert_eq!(derive_name(rule), name, "{rule}");
        }
    }
}
