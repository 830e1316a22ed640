//! The lexical index as a file beside the database (`<database>-lexicon`), so that a
//! one-shot process (`cairn recall`, a hook) ranks by BM25 without asking FTS5, which
//! decodes every matching posting list and scores every matching row on every query (25-35
//! ms at 100,000 memories in one scope).
//!
//! The file is a compacted [`LexicalIndex`]: the documents' rowids, scopes and lengths, the
//! terms in byte order, and per term its postings (document and hits per searchable column),
//! laid out so that a mapped file is searched in place. Scores are computed operation by
//! operation like the resident index's, hence like FTS5's `bm25()` (a test holds the three
//! to the same bits).
//!
//! The file is tagged with the index's random id (`recall_meta.index_id`) and the
//! `recall_meta.text_generation` it reflects. A search reads the documents changed since
//! (`recall_text_revs`) on top of it, when they are few ([`OVERLAY_MAX`]): their rows in the
//! file are skipped and their current text is tokenized by the same private FTS5 table as
//! the resident index's; statistics (row count, total length, document frequencies) are
//! corrected accordingly. More changes than that, a file of another index, or no file:
//! FTS5 answers, as before. The background path (`Recall::prepare_snapshots`) rewrites the
//! file once more than [`REWRITE_AFTER`] documents changed, or one was removed (a forgotten
//! memory's words do not stay in it): from the file and the changes
//! when it can, from `recall_fts` otherwise; written to a temporary file and renamed into
//! place, and kept only if no document changed meanwhile. Every write is best effort: a
//! missing or stale file only loses the speed-up.

use std::path::{Path, PathBuf};

use rusqlite::Connection;

use crate::engine::FileState;
use crate::error::RecallError;
use crate::lexical::{DEAD, LexicalIndex, Posting, best, idf, read_texts, term_score};
use crate::snapshot::{index_id, map_file, pad8};

const MAGIC: &[u8; 8] = b"CRLEXF01";
/// Written in the machine's byte order: a file from a machine of the other order is
/// rejected.
const BYTE_ORDER: u32 = 0x0102_0304;

/// Changed documents a search reads on top of the file; with more, FTS5 answers.
pub(crate) const OVERLAY_MAX: usize = 256;
/// Changed documents above which the background path rewrites the file.
pub(crate) const REWRITE_AFTER: usize = 32;

/// Where the lexicon of a database file lives (`None`: an in-memory database).
pub(crate) fn file_path(conn: &Connection) -> Option<PathBuf> {
    let db = conn.path().filter(|p| !p.is_empty())?;
    Some(PathBuf::from(format!("{db}-lexicon")))
}

/// Byte ranges of the file's sections.
#[derive(Debug, Clone, Copy, Default)]
struct Sections {
    rowids: (usize, usize),
    by_rowid: (usize, usize),
    lens: (usize, usize),
    slot_scopes: (usize, usize),
    scope_offsets: (usize, usize),
    scope_text: (usize, usize),
    term_offsets: (usize, usize),
    term_text: (usize, usize),
    term_starts: (usize, usize),
    postings: (usize, usize),
}

/// A mapped lexicon file, checked on open.
pub(crate) struct Lexicon {
    map: std::sync::Arc<memmap2::Mmap>,
    generation: i64,
    /// [`checksum`] of everything after the header, from `body` on.
    checksum: u64,
    body: usize,
    slots: usize,
    total_len: u64,
    scopes: usize,
    terms: usize,
    at: Sections,
}

impl std::fmt::Debug for Lexicon {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lexicon")
            .field("generation", &self.generation)
            .field("documents", &self.slots)
            .field("terms", &self.terms)
            .finish_non_exhaustive()
    }
}

/// A 64-bit checksum of `bytes`, eight at a time (FNV-1a's multiply over words).
fn checksum(bytes: &[u8]) -> u64 {
    let mut chunks = bytes.chunks_exact(8);
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        h = (h ^ u64::from_le_bytes(w)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    for &b in chunks.remainder() {
        h = (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Reads the header fields in order.
struct Header<'a> {
    b: &'a [u8],
    at: usize,
}

impl Header<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let s = self.b.get(self.at..self.at.checked_add(n)?)?;
        self.at += n;
        Some(s)
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_ne_bytes(self.take(8)?.try_into().ok()?))
    }
}

impl Lexicon {
    /// Maps the file at `path` when it is a lexicon of index `index_id` whose sections are
    /// all consistent; `None` otherwise (missing, foreign, truncated or damaged).
    pub(crate) fn open(path: &Path, index_id: &str) -> Option<Self> {
        // Written like the vector snapshots: to a temporary file renamed into place, never
        // in place (see `snapshot::map_file`).
        let map = map_file(path)?;
        let mut h = Header { b: &map, at: 0 };
        if h.take(8)? != MAGIC || h.u64()? != u64::from(BYTE_ORDER) {
            return None;
        }
        let id_len = usize::try_from(h.u64()?).ok()?;
        if h.take(id_len)? != index_id.as_bytes() {
            return None;
        }
        h.at = pad8(h.at);
        let generation = i64::from_ne_bytes(h.take(8)?.try_into().ok()?);
        let checksum = h.u64()?;
        let slots = usize::try_from(h.u64()?).ok()?;
        let total_len = h.u64()?;
        let scopes = usize::try_from(h.u64()?).ok()?;
        let terms = usize::try_from(h.u64()?).ok()?;
        let postings = usize::try_from(h.u64()?).ok()?;
        let scope_text = usize::try_from(h.u64()?).ok()?;
        let term_text = usize::try_from(h.u64()?).ok()?;
        let body = h.at;
        let mut at = h.at;
        let mut section = |len: Option<usize>| -> Option<(usize, usize)> {
            let start = at;
            let end = start.checked_add(len?)?;
            at = pad8(end);
            Some((start, end))
        };
        let s = Sections {
            rowids: section(slots.checked_mul(8))?,
            by_rowid: section(slots.checked_mul(4))?,
            lens: section(slots.checked_mul(4))?,
            slot_scopes: section(slots.checked_mul(4))?,
            scope_offsets: section(scopes.checked_add(1)?.checked_mul(4))?,
            scope_text: section(Some(scope_text))?,
            term_offsets: section(terms.checked_add(1)?.checked_mul(4))?,
            term_text: section(Some(term_text))?,
            term_starts: section(terms.checked_add(1)?.checked_mul(8))?,
            postings: section(postings.checked_mul(std::mem::size_of::<Posting>()))?,
        };
        if s.postings.1 != map.len() {
            return None;
        }
        let me = Lexicon {
            map,
            generation,
            checksum,
            body,
            slots,
            total_len,
            scopes,
            terms,
            at: s,
        };
        me.is_consistent(postings).then_some(me)
    }

    fn slice<T: bytemuck::Pod>(&self, range: (usize, usize)) -> &[T] {
        self.map
            .get(range.0..range.1)
            .and_then(|b| bytemuck::try_cast_slice(b).ok())
            .unwrap_or(&[])
    }

    /// Every section has the length its header announces and is aligned for its type, so
    /// that a slot below `slots` indexes each per-document section. Nothing else is read
    /// here (checking the terms' order alone would cost more than a search): every other
    /// lookup is bounds-checked, so a damaged file can mislead a search but never crash it.
    fn is_consistent(&self, postings: usize) -> bool {
        self.slice::<i64>(self.at.rowids).len() == self.slots
            && self.slice::<u32>(self.at.by_rowid).len() == self.slots
            && self.slice::<u32>(self.at.lens).len() == self.slots
            && self.slice::<u32>(self.at.slot_scopes).len() == self.slots
            && self.slice::<u32>(self.at.scope_offsets).len() == self.scopes + 1
            && self.slice::<u32>(self.at.term_offsets).len() == self.terms + 1
            && self.slice::<u64>(self.at.term_starts).len() == self.terms + 1
            && self.slice::<Posting>(self.at.postings).len() == postings
    }

    /// Whether the file is exactly what was written: its checksum matches, and its terms
    /// are in strictly ascending order (binary searches find them). The background path
    /// checks this before building on a file (a pass over all of it; searches do not).
    fn is_sound(&self) -> bool {
        self.map
            .get(self.body..)
            .is_some_and(|b| checksum(b) == self.checksum)
            && (0..self.terms).all(|i| self.term_text(i).is_some())
            && (1..self.terms).all(|i| self.term_text(i - 1) < self.term_text(i))
    }

    fn text(&self, offsets: (usize, usize), text: (usize, usize), i: usize) -> Option<&str> {
        let offsets: &[u32] = self.slice(offsets);
        let (a, b) = (*offsets.get(i)? as usize, *offsets.get(i + 1)? as usize);
        let bytes = self.map.get(text.0..text.1)?.get(a..b)?;
        std::str::from_utf8(bytes).ok()
    }

    fn scope_name(&self, i: usize) -> Option<&str> {
        self.text(self.at.scope_offsets, self.at.scope_text, i)
    }

    fn term_text(&self, i: usize) -> Option<&str> {
        self.text(self.at.term_offsets, self.at.term_text, i)
    }

    /// The term number of a token.
    fn term(&self, token: &str) -> Option<usize> {
        let (mut lo, mut hi) = (0, self.terms);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            match self.term_text(mid)?.cmp(token) {
                std::cmp::Ordering::Less => lo = mid + 1,
                std::cmp::Ordering::Greater => hi = mid,
                std::cmp::Ordering::Equal => return Some(mid),
            }
        }
        None
    }

    fn postings(&self, term: usize) -> &[Posting] {
        let starts: &[u64] = self.slice(self.at.term_starts);
        let all: &[Posting] = self.slice(self.at.postings);
        match (starts.get(term), starts.get(term + 1)) {
            (Some(&a), Some(&b)) => usize::try_from(a)
                .ok()
                .zip(usize::try_from(b).ok())
                .and_then(|(a, b)| all.get(a..b))
                .unwrap_or(&[]),
            _ => &[],
        }
    }

    /// The slot of `rowid`, by binary search over the slots in rowid order.
    fn slot_of(&self, rowid: i64) -> Option<u32> {
        let rowids: &[i64] = self.slice(self.at.rowids);
        let by_rowid: &[u32] = self.slice(self.at.by_rowid);
        let i = by_rowid
            .binary_search_by(|&s| {
                rowids
                    .get(s as usize)
                    .map_or(std::cmp::Ordering::Greater, |r| r.cmp(&rowid))
            })
            .ok()?;
        by_rowid
            .get(i)
            .copied()
            .filter(|&s| (s as usize) < self.slots)
    }
}

/// The file, plus the documents changed since it was written: what a search ranks over.
pub(crate) struct LexiconView {
    file: Option<Lexicon>,
    /// File slots whose document changed or went away since the file was written.
    replaced: Vec<bool>,
    replaced_count: u64,
    replaced_len: u64,
    /// The changed documents' current text (also the query tokenizer).
    changes: LexicalIndex,
    /// `recall_meta.text_generation` this view reflects.
    pub(crate) generation: i64,
}

impl std::fmt::Debug for LexiconView {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LexiconView")
            .field("file", &self.file)
            .field("replaced", &self.replaced_count)
            .field("changes", &self.changes)
            .field("generation", &self.generation)
            .finish()
    }
}

/// Rowids of the documents changed since `generation`, up to `limit + 1` of them.
fn changed_since(
    conn: &Connection,
    generation: i64,
    limit: usize,
) -> Result<Vec<i64>, RecallError> {
    let mut st = conn.prepare_cached(
        "SELECT rowid FROM recall_text_revs WHERE rev > ?1 ORDER BY rev LIMIT ?2",
    )?;
    let limit = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
    let rows = st.query_map(rusqlite::params![generation, limit], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

impl LexiconView {
    /// The file at `path` with at most `max_changes` documents changed since it was
    /// written read on top; `None` when there is no usable file or more changes.
    pub(crate) fn open(
        conn: &Connection,
        path: &Path,
        max_changes: usize,
    ) -> Result<Option<Self>, RecallError> {
        // One read transaction, so that the generation, the change log and the texts agree.
        let tx = if conn.is_autocommit() {
            Some(conn.unchecked_transaction()?)
        } else {
            None
        };
        let generation = crate::lexical::text_generation(conn)?;
        let Some(file) = Lexicon::open(path, &index_id(conn)?) else {
            return Ok(None);
        };
        let view = Self::on(conn, file, generation, max_changes)?;
        if let Some(tx) = tx {
            tx.commit()?;
        }
        Ok(view)
    }

    /// `file` with the changes since it was written on top, at `generation` (read in the
    /// caller's transaction); `None` with more than `max_changes`.
    fn on(
        conn: &Connection,
        file: Lexicon,
        generation: i64,
        max_changes: usize,
    ) -> Result<Option<Self>, RecallError> {
        if file.generation > generation {
            return Ok(None);
        }
        let mut view = LexiconView {
            replaced: Vec::new(),
            replaced_count: 0,
            replaced_len: 0,
            changes: LexicalIndex::empty(generation)?,
            generation,
            file: None,
        };
        if file.generation < generation {
            let changed = changed_since(conn, file.generation, max_changes)?;
            if changed.len() > max_changes {
                return Ok(None);
            }
            view.replaced = vec![false; file.slots];
            let lens: &[u32] = file.slice(file.at.lens);
            for &rowid in &changed {
                if let Some(slot) = file.slot_of(rowid) {
                    let s = slot as usize;
                    if !view.replaced[s] {
                        view.replaced[s] = true;
                        view.replaced_count += 1;
                        view.replaced_len += u64::from(lens.get(s).copied().unwrap_or(0));
                    }
                }
            }
            // Removed documents are simply not found.
            view.changes.add_all(&read_texts(conn, Some(&changed))?)?;
        }
        view.file = Some(file);
        Ok(Some(view))
    }

    /// A view of every document with no file under it (the first write of a file).
    fn built(conn: &Connection) -> Result<Self, RecallError> {
        let changes = LexicalIndex::build(conn)?;
        Ok(LexiconView {
            file: None,
            replaced: Vec::new(),
            replaced_count: 0,
            replaced_len: 0,
            generation: changes.generation,
            changes,
        })
    }

    /// The generation of the file under this view, and how many changed documents are
    /// read on top of it.
    #[cfg(test)]
    pub(crate) fn shape(&self) -> (Option<i64>, u64) {
        (
            self.file.as_ref().map(|f| f.generation),
            self.changes.live + self.replaced_count,
        )
    }

    fn is_replaced(&self, slot: u32) -> bool {
        self.replaced.get(slot as usize).copied().unwrap_or(false)
    }

    /// The best `n` documents of the `allowed` scopes by FTS5 BM25 for the query terms, as
    /// (rowid, score with higher = better), best first; `None` when a term is not one token
    /// (only FTS5 ranks it exactly).
    pub(crate) fn top(
        &mut self,
        terms: &[String],
        allowed: &[&str],
        weights: [f64; 4],
        n: usize,
    ) -> Result<Option<Vec<(i64, f64)>>, RecallError> {
        let Some(tokens) = self.changes.tokens(terms)? else {
            return Ok(None);
        };
        let (file_slots, file_len) = self
            .file
            .as_ref()
            .map_or((0, 0), |f| (f.slots as u64, f.total_len));
        // (Saturating: a damaged file's totals must not underflow.)
        let live = file_slots.saturating_sub(self.replaced_count) + self.changes.live;
        let total_len = file_len.saturating_sub(self.replaced_len) + self.changes.total_len;
        if live == 0 || n == 0 {
            return Ok(Some(Vec::new()));
        }
        let n_row = live as i64;
        let avgdl = total_len as f64 / live as f64;
        let changes = &self.changes;
        let mut changes_visible = vec![false; changes.scope_ids.len()];
        for s in allowed {
            if let Some(&i) = changes.scope_ids.get(*s) {
                changes_visible[i as usize] = true;
            }
        }
        let file = self.file.as_ref();
        let file_visible: Vec<bool> = file.map_or_else(Vec::new, |f| {
            (0..f.scopes)
                .map(|i| f.scope_name(i).is_some_and(|s| allowed.contains(&s)))
                .collect()
        });
        let (rowids, lens, slot_scopes): (&[i64], &[u32], &[u32]) = match file {
            Some(f) => (
                f.slice(f.at.rowids),
                f.slice(f.at.lens),
                f.slice(f.at.slot_scopes),
            ),
            None => (&[], &[], &[]),
        };
        let base = file_slots as usize;
        let mut acc: Vec<f64> = Vec::new();
        let mut seen: Vec<bool> = Vec::new();
        let mut touched: Vec<u32> = Vec::new();
        for token in &tokens {
            let list = match (file, file.and_then(|f| f.term(token))) {
                (Some(f), Some(t)) => f.postings(t),
                _ => &[],
            };
            let extra = changes
                .term_ids
                .get(token)
                .map_or(&[][..], |&t| changes.postings[t as usize].as_slice());
            if list.is_empty() && extra.is_empty() {
                continue;
            }
            let gone = if self.replaced_count == 0 {
                0
            } else {
                list.iter().filter(|p| self.is_replaced(p.slot)).count()
            };
            let extra_df = changes
                .term_ids
                .get(token)
                .map_or(0, |&t| changes.df[t as usize]);
            let n_hit = (list.len() - gone) as i64 + i64::from(extra_df);
            let idf = idf(n_row, n_hit);
            if acc.is_empty() {
                let all = base + changes.rowids.len();
                acc = vec![0.0; all];
                seen = vec![false; all];
            }
            let mut add = |slot: usize, part: f64| {
                if !seen[slot] {
                    seen[slot] = true;
                    touched.push(slot as u32);
                }
                acc[slot] += part;
            };
            for p in list {
                let s = p.slot as usize;
                if s >= base
                    || self.is_replaced(p.slot)
                    || !slot_scopes
                        .get(s)
                        .and_then(|&scope| file_visible.get(scope as usize))
                        .copied()
                        .unwrap_or(false)
                {
                    continue;
                }
                add(s, term_score(idf, &p.hits, &weights, lens[s], avgdl));
            }
            for p in extra {
                let s = p.slot as usize;
                let scope = changes.scopes[s];
                if scope == DEAD || !changes_visible[scope as usize] {
                    continue;
                }
                add(
                    base + s,
                    term_score(idf, &p.hits, &weights, changes.lens[s], avgdl),
                );
            }
        }
        let scored: Vec<(f64, i64)> = touched
            .iter()
            .map(|&slot| {
                let s = slot as usize;
                let rowid = match s.checked_sub(base) {
                    None => rowids[s],
                    Some(c) => changes.rowids[c],
                };
                (acc[s], rowid)
            })
            .collect();
        Ok(Some(best(scored, n)))
    }

    /// Writes this view, compacted, as the lexicon of index `id` at `path` (temporary file
    /// and rename); kept only while `conn`'s text generation is still this view's.
    fn write(&self, conn: &Connection, path: &Path, id: &str) -> Result<(), RecallError> {
        let io = |source: std::io::Error| RecallError::Io {
            path: path.display().to_string(),
            source,
        };
        let too_big = || {
            io(std::io::Error::other(
                "the lexical index is too large for its file",
            ))
        };
        // Documents: the file's unchanged ones, then the changed ones, renumbered densely.
        let mut scope_names: Vec<&str> = Vec::new();
        let mut scope_num: std::collections::HashMap<&str, u32> = Default::default();
        let mut rowids: Vec<i64> = Vec::new();
        let mut lens: Vec<u32> = Vec::new();
        let mut slot_scopes: Vec<u32> = Vec::new();
        let mut file_slot_to_new: Vec<u32> = Vec::new();
        if let Some(f) = &self.file {
            let f_rowids: &[i64] = f.slice(f.at.rowids);
            let f_lens: &[u32] = f.slice(f.at.lens);
            let f_scopes: &[u32] = f.slice(f.at.slot_scopes);
            file_slot_to_new = vec![DEAD; f.slots];
            for s in 0..f.slots {
                if self.is_replaced(s as u32) {
                    continue;
                }
                let name = f.scope_name(f_scopes[s] as usize).unwrap_or("");
                let next = scope_names.len() as u32;
                let num = *scope_num.entry(name).or_insert(next);
                if num == next {
                    scope_names.push(name);
                }
                file_slot_to_new[s] = rowids.len() as u32;
                rowids.push(f_rowids[s]);
                lens.push(f_lens[s]);
                slot_scopes.push(num);
            }
        }
        let changes = &self.changes;
        let mut change_names: Vec<&str> = vec![""; changes.scope_ids.len()];
        for (name, &i) in &changes.scope_ids {
            change_names[i as usize] = name;
        }
        let mut change_slot_to_new = vec![DEAD; changes.rowids.len()];
        for (s, slot) in change_slot_to_new.iter_mut().enumerate() {
            let scope = changes.scopes[s];
            if scope == DEAD {
                continue;
            }
            let name = change_names[scope as usize];
            let next = scope_names.len() as u32;
            let num = *scope_num.entry(name).or_insert(next);
            if num == next {
                scope_names.push(name);
            }
            *slot = rowids.len() as u32;
            rowids.push(changes.rowids[s]);
            lens.push(changes.lens[s]);
            slot_scopes.push(num);
        }
        let mut by_rowid: Vec<u32> = (0..rowids.len() as u32).collect();
        by_rowid.sort_unstable_by_key(|&s| rowids[s as usize]);
        if by_rowid
            .windows(2)
            .any(|w| rowids[w[0] as usize] == rowids[w[1] as usize])
        {
            // Never expected (a changed document is replaced in the file): write nothing.
            return Err(io(std::io::Error::other(
                "a document appears twice in the lexical index",
            )));
        }
        // Terms: the union of the file's (in order) and the changes' (sorted), merged.
        let mut change_terms: Vec<(&str, u32)> =
            changes.term_ids.iter().map(|(t, &i)| (&**t, i)).collect();
        change_terms.sort_unstable();
        let file_terms = self.file.as_ref().map_or(0, |f| f.terms);
        let mut term_text: Vec<u8> = Vec::new();
        let mut term_offsets: Vec<u32> = vec![0];
        let mut term_starts: Vec<u64> = vec![0];
        let mut postings: Vec<Posting> = Vec::new();
        let (mut i, mut j) = (0, 0);
        while i < file_terms || j < change_terms.len() {
            let a = self
                .file
                .as_ref()
                .and_then(|f| f.term_text(i).filter(|_| i < file_terms));
            let b = change_terms.get(j).map(|x| x.0);
            let (term, from_file, from_changes) = match (a, b) {
                (Some(a), Some(b)) if a == b => (a, true, true),
                (Some(a), Some(b)) if a < b => (a, true, false),
                (Some(_), Some(b)) | (None, Some(b)) => (b, false, true),
                (Some(a), None) => (a, true, false),
                (None, None) => break,
            };
            let before = postings.len();
            if from_file && let Some(f) = &self.file {
                for p in f.postings(i) {
                    if let Some(&slot) = file_slot_to_new.get(p.slot as usize)
                        && slot != DEAD
                    {
                        postings.push(Posting { slot, hits: p.hits });
                    }
                }
            }
            if from_changes {
                for p in &changes.postings[change_terms[j].1 as usize] {
                    let slot = change_slot_to_new[p.slot as usize];
                    if slot != DEAD {
                        postings.push(Posting { slot, hits: p.hits });
                    }
                }
            }
            if postings.len() > before {
                term_text.extend_from_slice(term.as_bytes());
                term_offsets.push(u32::try_from(term_text.len()).map_err(|_| too_big())?);
                term_starts.push(postings.len() as u64);
            }
            i += usize::from(from_file);
            j += usize::from(from_changes);
        }
        let mut scope_text: Vec<u8> = Vec::new();
        let mut scope_offsets: Vec<u32> = vec![0];
        for name in &scope_names {
            scope_text.extend_from_slice(name.as_bytes());
            scope_offsets.push(u32::try_from(scope_text.len()).map_err(|_| too_big())?);
        }
        let total_len: u64 = lens.iter().map(|&l| u64::from(l)).sum();

        let mut out: Vec<u8> = Vec::with_capacity(
            256 + rowids.len() * 20
                + term_text.len()
                + postings.len() * 12
                + term_starts.len() * 12,
        );
        let pad = |out: &mut Vec<u8>| out.resize(pad8(out.len()), 0);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&u64::from(BYTE_ORDER).to_ne_bytes());
        out.extend_from_slice(&(id.len() as u64).to_ne_bytes());
        out.extend_from_slice(id.as_bytes());
        pad(&mut out);
        out.extend_from_slice(&self.generation.to_ne_bytes());
        let checksum_at = out.len();
        out.extend_from_slice(&0u64.to_ne_bytes());
        for v in [
            rowids.len() as u64,
            total_len,
            scope_names.len() as u64,
            (term_offsets.len() - 1) as u64,
            postings.len() as u64,
            scope_text.len() as u64,
            term_text.len() as u64,
        ] {
            out.extend_from_slice(&v.to_ne_bytes());
        }
        let sections: [&[u8]; 10] = [
            bytemuck::cast_slice(&rowids),
            bytemuck::cast_slice(&by_rowid),
            bytemuck::cast_slice(&lens),
            bytemuck::cast_slice(&slot_scopes),
            bytemuck::cast_slice(&scope_offsets),
            &scope_text,
            bytemuck::cast_slice(&term_offsets),
            &term_text,
            bytemuck::cast_slice(&term_starts),
            bytemuck::cast_slice(&postings),
        ];
        let body = out.len();
        for (k, bytes) in sections.iter().enumerate() {
            out.extend_from_slice(bytes);
            if k + 1 < sections.len() {
                pad(&mut out);
            }
        }
        let sum = checksum(&out[body..]);
        out[checksum_at..checksum_at + 8].copy_from_slice(&sum.to_ne_bytes());
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(Path::new("."));
        // Private like the database (0600), whole or not at all.
        let mut tmp = tempfile::Builder::new()
            .prefix(crate::snapshot::TEMP_PREFIXES[1])
            .tempfile_in(dir)
            .map_err(io)?;
        {
            use std::io::Write;
            tmp.write_all(&out).map_err(io)?;
        }
        // A writer that changed the documents meanwhile makes this one stale: keep the file
        // that may already be current.
        if crate::lexical::text_generation(conn)? == self.generation {
            tmp.persist(path).map_err(|e| io(e.error))?;
        }
        Ok(())
    }
}

/// Where the lexicon file of the index in `conn` stands (see [`crate::search_files`]).
pub(crate) fn file_state(conn: &Connection) -> Result<FileState, RecallError> {
    let Some(path) = file_path(conn) else {
        return Ok(FileState::NotUsed);
    };
    let generation = crate::lexical::text_generation(conn)?;
    match Lexicon::open(&path, &index_id(conn)?) {
        Some(file) if file.generation <= generation => Ok(
            match changed_since(conn, file.generation, OVERLAY_MAX)?.len() {
                0 => FileState::Current,
                n if n <= OVERLAY_MAX => FileState::Behind { changes: n },
                _ => FileState::Stale,
            },
        ),
        // Another index's, damaged, or of a later generation.
        _ if path.exists() => Ok(FileState::Stale),
        _ => Ok(FileState::Missing),
    }
}

/// Whether a document was removed since `generation` (a memory forgotten or replaced).
fn removed_since(conn: &Connection, generation: i64) -> Result<bool, RecallError> {
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM recall_text_revs WHERE rev > ?1 AND live = 0)",
        )?
        .query_row([generation], |r| r.get(0))?)
}

/// For the background path: rewrites the lexicon of a database file when more than
/// [`REWRITE_AFTER`] documents changed since it was written, or when one was removed (a
/// forgotten memory's words leave the file at the next write, not 32 changes later), or when
/// it is missing or unusable. Nothing for an in-memory database.
pub(crate) fn prepare(conn: &Connection) -> Result<(), RecallError> {
    let Some(path) = file_path(conn) else {
        return Ok(());
    };
    let id = index_id(conn)?;
    // One read transaction, so that the generation, the change log and the texts agree.
    let tx = if conn.is_autocommit() {
        Some(conn.unchecked_transaction()?)
    } else {
        None
    };
    let generation = crate::lexical::text_generation(conn)?;
    let file = Lexicon::open(&path, &id);
    if let Some(file) = &file
        && (file.generation == generation
            || (file.generation < generation
                && !removed_since(conn, file.generation)?
                && changed_since(conn, file.generation, REWRITE_AFTER)?.len() <= REWRITE_AFTER))
    {
        return Ok(());
    }
    // Reading the file and the changes is cheaper than reading `recall_fts` while the
    // changes are a small part of the documents.
    let docs: i64 = conn
        .prepare_cached("SELECT count(*) FROM recall_docs")?
        .query_row([], |r| r.get(0))?;
    let max_changes = usize::try_from(docs / 4).unwrap_or(0).max(OVERLAY_MAX);
    let view = match file.filter(Lexicon::is_sound) {
        Some(file) => LexiconView::on(conn, file, generation, max_changes)?,
        None => None,
    };
    let view = match view {
        Some(view) => view,
        None => LexiconView::built(conn)?,
    };
    if let Some(tx) = tx {
        tx.commit()?;
    }
    view.write(conn, &path, &id)
}
