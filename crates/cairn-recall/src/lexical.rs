//! A resident copy of the FTS5 index for long-lived processes (the MCP server, `cairn
//! eval`): the same BM25 scores as `bm25(recall_fts, ...)` without asking SQLite, which
//! decodes the posting lists and scores every matching row on every query.
//!
//! Exactness comes from SQLite's own tokens: the copy is built from `recall_fts` itself
//! (an `fts5vocab` table of its instances), and changed documents' five FTS columns (the
//! same prepared text the engine writes to `recall_fts`) and every query term go through a
//! private in-memory FTS5 table with the same tokenizer, whose `fts5vocab` instance table
//! gives back the tokens. Scores follow FTS5's `bm25()` operation by
//! operation (k1 1.2, b 0.75, the row's length over all five columns, the average over the
//! table, IDF `ln((N - n + 0.5) / (n + 0.5))` clamped to 1e-6, a phrase's frequency the sum
//! of its hits' column weights in column order, phrases summed in query order), so both
//! paths rank alike; a test holds them to it.
//!
//! The copy follows the documents through `recall_text_revs`: triggers on `recall_docs`
//! give every inserted, re-worded or deleted row the next `recall_meta.text_generation`,
//! so a search re-reads only the rows changed since its copy, whoever wrote them.
//! Queries this copy cannot answer exactly (CJK pairs, which are FTS5 phrases, or a term
//! the tokenizer splits) go to FTS5 as before.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::RecallError;

/// Table, index and triggers that record which documents' text changed (idempotent; part
/// of the recall schema).
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS recall_text_revs (
    rowid INTEGER PRIMARY KEY,
    rev   INTEGER NOT NULL,
    live  INTEGER NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS recall_text_revs_rev ON recall_text_revs(rev);
CREATE TRIGGER IF NOT EXISTS recall_docs_text_ins AFTER INSERT ON recall_docs BEGIN
    UPDATE recall_meta SET value = value + 1 WHERE key = 'text_generation';
    DELETE FROM recall_text_revs WHERE rowid = NEW.rowid;
    INSERT INTO recall_text_revs(rowid, rev, live) VALUES (NEW.rowid,
        COALESCE((SELECT value FROM recall_meta WHERE key = 'text_generation'), 0), 1);
END;
CREATE TRIGGER IF NOT EXISTS recall_docs_text_upd
    AFTER UPDATE OF scope, name, description, body, keywords ON recall_docs BEGIN
    UPDATE recall_meta SET value = value + 1 WHERE key = 'text_generation';
    DELETE FROM recall_text_revs WHERE rowid = NEW.rowid;
    INSERT INTO recall_text_revs(rowid, rev, live) VALUES (NEW.rowid,
        COALESCE((SELECT value FROM recall_meta WHERE key = 'text_generation'), 0), 1);
END;
CREATE TRIGGER IF NOT EXISTS recall_docs_text_del AFTER DELETE ON recall_docs BEGIN
    UPDATE recall_meta SET value = value + 1 WHERE key = 'text_generation';
    DELETE FROM recall_text_revs WHERE rowid = OLD.rowid;
    INSERT INTO recall_text_revs(rowid, rev, live) VALUES (OLD.rowid,
        COALESCE((SELECT value FROM recall_meta WHERE key = 'text_generation'), 0), 0);
END;
";

/// FTS5's `bm25()` constants.
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// The five FTS columns, in table order.
const COLUMNS: [&str; 5] = ["name", "description", "body", "keywords", "scope_tok"];

/// Documents tokenized per scratch batch.
const BATCH: usize = 2_000;

/// Scope number of a slot without a live document.
pub(crate) const DEAD: u32 = u32::MAX;

/// Dead slots above which a refresh compacts the posting lists (at least this many, and
/// at least a quarter of all slots).
const COMPACT_MIN: usize = 1_024;

/// Query terms whose tokens are remembered before the memo is cleared.
const QUERY_MEMO: usize = 20_000;

/// The current `text_generation` (0 before any change was recorded).
pub(crate) fn text_generation(conn: &Connection) -> Result<i64, RecallError> {
    Ok(conn
        .prepare_cached("SELECT value FROM recall_meta WHERE key = 'text_generation'")?
        .query_row([], |r| r.get::<_, i64>(0))
        .optional()?
        .unwrap_or(0))
}

/// A private in-memory FTS5 table with the recall index's tokenizer.
struct Tokenizer {
    conn: Connection,
}

/// One row's tokens: per distinct term, hits per searchable column, and the row length.
#[derive(Debug, Default)]
struct RowTokens {
    terms: Vec<(String, [u16; 4])>,
    len: u32,
}

impl Tokenizer {
    fn new() -> Result<Self, RecallError> {
        let conn = Connection::open_in_memory()?;
        // Every batch is deleted after reading: merging its segments would be wasted work.
        conn.execute_batch(
            "CREATE VIRTUAL TABLE t USING fts5(
                 name, description, body, keywords, scope_tok, content='',
                 tokenize='porter unicode61 remove_diacritics 2');
             CREATE VIRTUAL TABLE v USING fts5vocab(t, 'instance');
             INSERT INTO t(t, rank) VALUES ('automerge', 0);
             INSERT INTO t(t, rank) VALUES ('crisismerge', 2000);
             INSERT INTO t(t, rank) VALUES ('hashsize', 268435456);",
        )?;
        Ok(Self { conn })
    }

    /// Tokenizes rows of five column texts; returns each row's tokens, in input order.
    fn rows(&self, rows: &[[&str; 5]]) -> Result<Vec<RowTokens>, RecallError> {
        let mut out: Vec<RowTokens> = rows.iter().map(|_| RowTokens::default()).collect();
        if rows.is_empty() {
            return Ok(out);
        }
        let tx = self.conn.unchecked_transaction()?;
        {
            let mut ins = self.conn.prepare_cached(
                "INSERT INTO t(rowid, name, description, body, keywords, scope_tok)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?;
            for (i, r) in rows.iter().enumerate() {
                ins.execute(params![i as i64 + 1, r[0], r[1], r[2], r[3], r[4]])?;
            }
            // Instances come ordered by term, then row, then column and offset: a row's
            // instances of one term are consecutive, and its terms come in order.
            let mut st = self.conn.prepare_cached("SELECT term, doc, col FROM v")?;
            let mut q = st.query([])?;
            while let Some(r) = q.next()? {
                let doc = usize::try_from(r.get::<_, i64>(1)?.saturating_sub(1)).unwrap_or(0);
                let Some(row) = out.get_mut(doc) else {
                    continue;
                };
                row.len += 1;
                let col = r.get_ref(2)?.as_str().unwrap_or("");
                let Some(c) = COLUMNS[..4].iter().position(|n| *n == col) else {
                    continue;
                };
                let term = r.get_ref(0)?.as_str().unwrap_or("");
                if row.terms.last().is_none_or(|(t, _)| t != term) {
                    row.terms.push((term.to_owned(), [0; 4]));
                }
                if let Some((_, hits)) = row.terms.last_mut() {
                    hits[c] = hits[c].saturating_add(1);
                }
            }
        }
        self.conn
            .execute("INSERT INTO t(t) VALUES ('delete-all')", [])?;
        tx.commit()?;
        Ok(out)
    }
}

/// One document's hits of one term, per searchable column. Also the layout of a posting
/// in the lexicon file (`lexicon`): twelve bytes, no padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct Posting {
    pub(crate) slot: u32,
    pub(crate) hits: [u16; 4],
}

// SAFETY: `Posting` is `repr(C)` with a `u32` then four `u16` (12 bytes, alignment 4, no
// padding), and every bit pattern is a valid value of each field.
unsafe impl bytemuck::Zeroable for Posting {}
// SAFETY: as above; it is `Copy` and `'static`.
unsafe impl bytemuck::Pod for Posting {}

/// FTS5's `bm25()` IDF of a term found in `n_hit` of `n_row` rows (clamped to 1e-6).
pub(crate) fn idf(n_row: i64, n_hit: i64) -> f64 {
    let idf = (((n_row - n_hit) as f64 + 0.5) / (n_hit as f64 + 0.5)).ln();
    if idf <= 0.0 { 1e-6 } else { idf }
}

/// One term's share of a row's `bm25()`: its phrase frequency is the sum of its hits'
/// column weights in column order, as FTS5 adds them.
pub(crate) fn term_score(
    idf: f64,
    hits: &[u16; 4],
    weights: &[f64; 4],
    len: u32,
    avgdl: f64,
) -> f64 {
    let mut f = 0.0f64;
    for (c, &h) in hits.iter().enumerate() {
        for _ in 0..h {
            f += weights[c];
        }
    }
    let d = f64::from(len);
    idf * ((f * (K1 + 1.0)) / (f + K1 * (1.0 - B + B * d / avgdl)))
}

/// The best `n` of (score, rowid), as (rowid, score), best first (ties by rowid).
pub(crate) fn best(mut scored: Vec<(f64, i64)>, n: usize) -> Vec<(i64, f64)> {
    let cmp = |a: &(f64, i64), b: &(f64, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
    if scored.len() > n {
        scored.select_nth_unstable_by(n - 1, cmp);
        scored.truncate(n);
    }
    scored.sort_unstable_by(cmp);
    scored.into_iter().map(|(s, r)| (r, s)).collect()
}

/// How a query's terms map onto the resident index.
pub(crate) enum Plan {
    /// One token per term, in query order (a token may repeat: two words with one stem).
    Tokens(Vec<Option<u32>>),
    /// A term is not one token: only FTS5 ranks it exactly.
    Fallback,
}

/// The resident BM25 index. Slots are dense document numbers. A removed document's slot
/// is marked dead (searches skip its postings, its words' document counts drop at once)
/// and reused only after a compaction has dropped its postings, so that removing a
/// document never scans the long posting lists of common words.
pub(crate) struct LexicalIndex {
    tokenizer: Tokenizer,
    /// `recall_meta.text_generation` this copy reflects.
    pub(crate) generation: i64,
    pub(crate) term_ids: HashMap<Box<str>, u32>,
    pub(crate) postings: Vec<Vec<Posting>>,
    slot_of: HashMap<i64, u32>,
    pub(crate) rowids: Vec<i64>,
    pub(crate) lens: Vec<u32>,
    /// Scope number of each slot; [`DEAD`] for a removed or free one.
    pub(crate) scopes: Vec<u32>,
    doc_terms: Vec<Box<[u32]>>,
    /// Documents (in the searchable columns) per term, live ones only.
    pub(crate) df: Vec<u32>,
    /// Removed documents' slots whose postings are still in the lists.
    dead: Vec<u32>,
    /// Slots free for reuse (no posting refers to them).
    free: Vec<u32>,
    pub(crate) scope_ids: HashMap<Box<str>, u32>,
    pub(crate) live: u64,
    pub(crate) total_len: u64,
    /// Query word -> its single token (`None`: not exactly one token).
    memo: HashMap<String, Option<Box<str>>>,
    acc: Vec<f64>,
    seen: Vec<bool>,
    touched: Vec<u32>,
}

impl std::fmt::Debug for LexicalIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexicalIndex")
            .field("generation", &self.generation)
            .field("documents", &self.live)
            .field("terms", &self.term_ids.len())
            .finish_non_exhaustive()
    }
}

/// The FTS input of one `recall_docs` row, prepared as the engine writes it.
pub(crate) struct DocText {
    rowid: i64,
    scope: String,
    cols: [String; 5],
}

pub(crate) fn read_texts(
    conn: &Connection,
    rowids: Option<&[i64]>,
) -> Result<Vec<DocText>, RecallError> {
    let map = |r: &rusqlite::Row<'_>| -> rusqlite::Result<DocText> {
        let scope: String = r.get(1)?;
        let prep = |i: usize| -> rusqlite::Result<String> {
            Ok(crate::query::space_cjk(&r.get::<_, String>(i)?).into_owned())
        };
        Ok(DocText {
            rowid: r.get(0)?,
            cols: [
                prep(2)?,
                prep(3)?,
                prep(4)?,
                prep(5)?,
                crate::engine::scope_token(&scope),
            ],
            scope,
        })
    };
    let sql = "SELECT rowid, scope, name, description, body, keywords FROM recall_docs";
    match rowids {
        None => {
            let mut st = conn.prepare(sql)?;
            let rows = st.query_map([], map)?.collect::<Result<_, _>>()?;
            Ok(rows)
        }
        Some(ids) => {
            let mut st = conn.prepare_cached(&format!("{sql} WHERE rowid = ?1"))?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                let mut q = st.query([id])?;
                if let Some(r) = q.next()? {
                    out.push(map(r)?);
                }
            }
            Ok(out)
        }
    }
}

impl LexicalIndex {
    /// Builds the copy from every stored document.
    pub fn build(conn: &Connection) -> Result<Self, RecallError> {
        // The generation is read first: a change committed meanwhile is re-read next time.
        let generation = text_generation(conn)?;
        let mut me = Self::empty(generation)?;
        if me.read_fts_index(conn).is_err() {
            // A connection that cannot create the temp vocabulary table: tokenize the texts.
            me = Self::empty(generation)?;
            let docs = read_texts(conn, None)?;
            me.add_all(&docs)?;
        }
        Ok(me)
    }

    pub(crate) fn empty(generation: i64) -> Result<Self, RecallError> {
        Ok(Self {
            tokenizer: Tokenizer::new()?,
            generation,
            term_ids: HashMap::new(),
            postings: Vec::new(),
            slot_of: HashMap::new(),
            rowids: Vec::new(),
            lens: Vec::new(),
            scopes: Vec::new(),
            doc_terms: Vec::new(),
            df: Vec::new(),
            dead: Vec::new(),
            free: Vec::new(),
            scope_ids: HashMap::new(),
            live: 0,
            total_len: 0,
            memo: HashMap::new(),
            acc: Vec::new(),
            seen: Vec::new(),
            touched: Vec::new(),
        })
    }

    /// Fills an empty index from `recall_fts` itself, through an `fts5vocab` table of its
    /// instances in the connection's temp schema: the tokens FTS5 stored, without
    /// tokenizing anything again (about twice as fast as [`LexicalIndex::add_all`]).
    fn read_fts_index(&mut self, conn: &Connection) -> Result<(), RecallError> {
        conn.execute_batch(
            "CREATE VIRTUAL TABLE IF NOT EXISTS temp.cairn_recall_instances
                 USING fts5vocab(main, recall_fts, instance)",
        )?;
        // One read transaction, so that the scopes and the index agree.
        let tx = if conn.is_autocommit() {
            Some(conn.unchecked_transaction()?)
        } else {
            None
        };
        let mut scope_of: HashMap<i64, String> = HashMap::new();
        {
            let mut st = conn.prepare("SELECT rowid, scope FROM recall_docs")?;
            let mut rows = st.query([])?;
            while let Some(r) = rows.next()? {
                scope_of.insert(r.get(0)?, r.get(1)?);
            }
        }
        // Instances come ordered by term, then row, then column and offset.
        let mut st = conn.prepare("SELECT term, doc, col FROM temp.cairn_recall_instances")?;
        let mut rows = st.query([])?;
        let mut doc_terms: Vec<Vec<u32>> = Vec::new();
        let mut term: Option<u32> = None;
        let mut term_text = String::new();
        // The (term, slot) group being read and its hits per searchable column.
        let mut group: Option<(u32, u32)> = None;
        let mut hits = [0u16; 4];
        let flush = |me: &mut Self,
                     doc_terms: &mut Vec<Vec<u32>>,
                     group: Option<(u32, u32)>,
                     hits: &mut [u16; 4]| {
            if let Some((t, slot)) = group
                && *hits != [0; 4]
            {
                me.postings[t as usize].push(Posting { slot, hits: *hits });
                me.df[t as usize] += 1;
                doc_terms[slot as usize].push(t);
            }
            *hits = [0; 4];
        };
        while let Some(r) = rows.next()? {
            let text = r.get_ref(0)?.as_str().unwrap_or("");
            if term.is_none() || text != term_text {
                term_text.clear();
                term_text.push_str(text);
                let next = self.postings.len() as u32;
                let id = *self.term_ids.entry(text.into()).or_insert(next);
                if id == next {
                    self.postings.push(Vec::new());
                    self.df.push(0);
                }
                term = Some(id);
            }
            let rowid: i64 = r.get(1)?;
            let slot = match self.slot_of.get(&rowid) {
                Some(&s) => s,
                None => {
                    // A row without a document (never expected) is left out.
                    let Some(scope) = scope_of.get(&rowid) else {
                        continue;
                    };
                    let s = self.new_slot(rowid, scope);
                    doc_terms.resize(self.rowids.len(), Vec::new());
                    s
                }
            };
            let key = (term.unwrap_or(0), slot);
            if group != Some(key) {
                flush(self, &mut doc_terms, group, &mut hits);
                group = Some(key);
            }
            self.lens[slot as usize] += 1;
            let col = r.get_ref(2)?.as_str().unwrap_or("");
            if let Some(c) = COLUMNS[..4].iter().position(|n| *n == col) {
                hits[c] = hits[c].saturating_add(1);
            }
        }
        flush(self, &mut doc_terms, group, &mut hits);
        drop(rows);
        drop(st);
        if let Some(tx) = tx {
            tx.commit()?;
        }
        self.doc_terms = doc_terms.into_iter().map(Vec::into_boxed_slice).collect();
        self.live = self.rowids.len() as u64;
        self.total_len = self.lens.iter().map(|&l| u64::from(l)).sum();
        Ok(())
    }

    /// Brings the copy up to the stored documents: re-reads the rows changed since it was
    /// built or last refreshed.
    pub fn refresh(&mut self, conn: &Connection) -> Result<(), RecallError> {
        let g = text_generation(conn)?;
        if g == self.generation {
            return Ok(());
        }
        let mut st = conn.prepare_cached(
            "SELECT rowid, rev FROM recall_text_revs WHERE rev > ?1 ORDER BY rev",
        )?;
        let changed: Vec<(i64, i64)> = st
            .query_map([self.generation], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        let newest = changed.iter().map(|c| c.1).max().unwrap_or(g).max(g);
        let rowids: Vec<i64> = changed.iter().map(|c| c.0).collect();
        for &rowid in &rowids {
            self.remove(rowid);
        }
        // Deleted rows are simply not found.
        let docs = read_texts(conn, Some(&rowids))?;
        self.add_all(&docs)?;
        self.generation = newest;
        if self.dead.len() >= COMPACT_MIN.max(self.rowids.len() / 4) {
            self.compact();
        }
        Ok(())
    }

    /// Drops dead slots' postings and makes the slots reusable.
    fn compact(&mut self) {
        let scopes = &self.scopes;
        for list in &mut self.postings {
            list.retain(|p| scopes[p.slot as usize] != DEAD);
        }
        self.free.append(&mut self.dead);
    }

    pub(crate) fn add_all(&mut self, docs: &[DocText]) -> Result<(), RecallError> {
        for chunk in docs.chunks(BATCH) {
            let rows: Vec<[&str; 5]> = chunk
                .iter()
                .map(|d| {
                    [
                        d.cols[0].as_str(),
                        d.cols[1].as_str(),
                        d.cols[2].as_str(),
                        d.cols[3].as_str(),
                        d.cols[4].as_str(),
                    ]
                })
                .collect();
            let tokens = self.tokenizer.rows(&rows)?;
            for (d, t) in chunk.iter().zip(tokens) {
                self.add(d.rowid, &d.scope, t);
            }
        }
        Ok(())
    }

    fn add(&mut self, rowid: i64, scope: &str, tokens: RowTokens) {
        self.remove(rowid);
        let slot = self.new_slot(rowid, scope);
        let mut ids = Vec::with_capacity(tokens.terms.len());
        for (term, hits) in tokens.terms {
            let next = self.postings.len() as u32;
            let id = *self.term_ids.entry(term.into_boxed_str()).or_insert(next);
            if id == next {
                self.postings.push(Vec::new());
                self.df.push(0);
            }
            if hits != [0; 4] {
                self.postings[id as usize].push(Posting { slot, hits });
                self.df[id as usize] += 1;
                ids.push(id);
            }
        }
        let s = slot as usize;
        self.lens[s] = tokens.len;
        self.doc_terms[s] = ids.into_boxed_slice();
        self.live += 1;
        self.total_len += u64::from(tokens.len);
    }

    /// A slot for `rowid` in `scope` (a free one, or a new one), with no terms yet.
    fn new_slot(&mut self, rowid: i64, scope: &str) -> u32 {
        let next_scope = self.scope_ids.len() as u32;
        let scope = *self.scope_ids.entry(scope.into()).or_insert(next_scope);
        let slot = match self.free.pop() {
            Some(s) => s,
            None => {
                self.rowids.push(0);
                self.lens.push(0);
                self.scopes.push(DEAD);
                self.doc_terms.push(Box::default());
                self.acc.push(0.0);
                self.seen.push(false);
                (self.rowids.len() - 1) as u32
            }
        };
        let s = slot as usize;
        self.rowids[s] = rowid;
        self.lens[s] = 0;
        self.scopes[s] = scope;
        self.slot_of.insert(rowid, slot);
        slot
    }

    fn remove(&mut self, rowid: i64) {
        let Some(slot) = self.slot_of.remove(&rowid) else {
            return;
        };
        let s = slot as usize;
        for &t in self.doc_terms[s].iter() {
            if let Some(n) = self.df.get_mut(t as usize) {
                *n = n.saturating_sub(1);
            }
        }
        self.doc_terms[s] = Box::default();
        self.scopes[s] = DEAD;
        self.live -= 1;
        self.total_len -= u64::from(self.lens[s]);
        self.lens[s] = 0;
        self.dead.push(slot);
    }

    /// Each query term's single token as FTS5 stores it, in query order; `None` when a
    /// term is not exactly one token (only FTS5 ranks it exactly).
    pub fn tokens(&mut self, terms: &[String]) -> Result<Option<Vec<Box<str>>>, RecallError> {
        let unknown: Vec<&String> = terms
            .iter()
            .filter(|t| !self.memo.contains_key(t.as_str()))
            .collect();
        if !unknown.is_empty() {
            if self.memo.len() + unknown.len() > QUERY_MEMO {
                self.memo.clear();
            }
            let rows: Vec<[&str; 5]> = unknown
                .iter()
                .map(|t| [t.as_str(), "", "", "", ""])
                .collect();
            let tokens = self.tokenizer.rows(&rows)?;
            for (t, tok) in unknown.into_iter().zip(tokens) {
                let one = match tok.terms.as_slice() {
                    [(term, hits)] if tok.len == 1 && hits[0] == 1 => {
                        Some(term.clone().into_boxed_str())
                    }
                    _ => None,
                };
                self.memo.insert(t.clone(), one);
            }
        }
        let mut out = Vec::with_capacity(terms.len());
        for t in terms {
            match self.memo.get(t.as_str()) {
                Some(Some(tok)) => out.push(tok.clone()),
                _ => return Ok(None),
            }
        }
        Ok(Some(out))
    }

    /// Maps query terms to term ids (`None`: a token no document has).
    pub fn plan(&mut self, terms: &[String]) -> Result<Plan, RecallError> {
        Ok(match self.tokens(terms)? {
            Some(tokens) => Plan::Tokens(
                tokens
                    .iter()
                    .map(|t| self.term_ids.get(t).copied())
                    .collect(),
            ),
            None => Plan::Fallback,
        })
    }

    /// The best `n` in-scope documents by FTS5 BM25 for the planned terms, as (rowid,
    /// score with higher = better), best first; `allowed` is the set of visible scopes.
    pub fn top(
        &mut self,
        terms: &[Option<u32>],
        allowed: &[&str],
        weights: [f64; 4],
        n: usize,
    ) -> Vec<(i64, f64)> {
        if self.live == 0 || n == 0 {
            return Vec::new();
        }
        let mut visible = vec![false; self.scope_ids.len()];
        for s in allowed {
            if let Some(&i) = self.scope_ids.get(*s) {
                visible[i as usize] = true;
            }
        }
        let n_row = self.live as i64;
        let avgdl = self.total_len as f64 / self.live as f64;
        self.touched.clear();
        for t in terms.iter() {
            let Some(t) = t else { continue };
            let list = &self.postings[*t as usize];
            let idf = idf(n_row, i64::from(self.df[*t as usize]));
            for p in list {
                let s = p.slot as usize;
                if !visible
                    .get(self.scopes[s] as usize)
                    .copied()
                    .unwrap_or(false)
                {
                    continue;
                }
                let part = term_score(idf, &p.hits, &weights, self.lens[s], avgdl);
                if !self.seen[s] {
                    self.seen[s] = true;
                    self.touched.push(p.slot);
                }
                self.acc[s] += part;
            }
        }
        let mut scored: Vec<(f64, i64)> = Vec::with_capacity(self.touched.len());
        for &slot in &self.touched {
            let s = slot as usize;
            scored.push((self.acc[s], self.rowids[s]));
            self.acc[s] = 0.0;
            self.seen[s] = false;
        }
        best(scored, n)
    }
}

/// How long a failed background build waits before it is tried again.
const RETRY_AFTER: std::time::Duration = std::time::Duration::from_secs(60);

/// The resident index of one [`crate::Recall`]: built on a background thread with its own
/// connection when the database is a file (searches ask FTS5 meanwhile, so none waits for
/// the build), at once for an in-memory database.
#[derive(Debug, Default)]
pub(crate) enum Resident {
    #[default]
    Absent,
    Building(std::thread::JoinHandle<Result<LexicalIndex, RecallError>>),
    Ready(Box<LexicalIndex>),
    Failed(std::time::Instant),
}

/// Builds an index from the database file at `path`, through a connection of its own
/// that changes nothing but its temp schema.
fn build_from_file(path: &str) -> Result<LexicalIndex, RecallError> {
    let conn = Connection::open(path)?;
    conn.busy_timeout(std::time::Duration::from_secs(5))?;
    LexicalIndex::build(&conn)
}

impl Resident {
    /// The index, brought up to the stored documents, when it is ready; otherwise starts or
    /// checks on its build and returns `None` (the caller asks FTS5). With `wait`, a build
    /// runs to its end first.
    pub fn ready(
        &mut self,
        conn: &Connection,
        wait: bool,
    ) -> Result<Option<&mut LexicalIndex>, RecallError> {
        loop {
            match std::mem::take(self) {
                Resident::Ready(index) => {
                    *self = Resident::Ready(index);
                    break;
                }
                Resident::Failed(at) if !wait && at.elapsed() < RETRY_AFTER => {
                    *self = Resident::Failed(at);
                    return Ok(None);
                }
                Resident::Absent | Resident::Failed(_) => {
                    match conn.path().filter(|p| !p.is_empty()).map(str::to_owned) {
                        Some(path) if !wait => {
                            let builder = std::thread::Builder::new()
                                .name("cairn-lexical-index".into())
                                .spawn(move || build_from_file(&path));
                            match builder {
                                Ok(handle) => *self = Resident::Building(handle),
                                Err(_) => *self = Resident::Failed(std::time::Instant::now()),
                            }
                            return Ok(None);
                        }
                        _ => *self = Resident::Ready(Box::new(LexicalIndex::build(conn)?)),
                    }
                }
                Resident::Building(handle) => {
                    if !wait && !handle.is_finished() {
                        *self = Resident::Building(handle);
                        return Ok(None);
                    }
                    match handle.join() {
                        Ok(Ok(index)) => *self = Resident::Ready(Box::new(index)),
                        // Waiting: build here instead (an error leaves it absent).
                        _ if wait => *self = Resident::Ready(Box::new(LexicalIndex::build(conn)?)),
                        // A failed or panicked build leaves FTS5 in charge for a while.
                        _ => {
                            *self = Resident::Failed(std::time::Instant::now());
                            return Ok(None);
                        }
                    }
                }
            }
        }
        match self {
            Resident::Ready(index) => {
                index.refresh(conn)?;
                Ok(Some(index))
            }
            _ => Ok(None),
        }
    }

    /// Whether the index is built.
    pub fn is_ready(&self) -> bool {
        matches!(self, Resident::Ready(_))
    }
}
