//! A compact copy of the in-memory vector cache, so that a new process (`cairn recall`, a
//! hook) starts searching without reading and quantising every stored f32 embedding.
//!
//! A snapshot holds, per document, its rowid, id, scope, `updated_at` and int8 vector with
//! its scale, and is tagged with the model of its vectors (the stored model's, or the static
//! tier's when a process that may not load the stored model searches a static copy; see
//! `Recall`), the dimension and the `recall_meta.docs_generation` it reflects.
//! `docs_generation` is bumped by triggers on every change of `recall_docs` except recall
//! counting, so a snapshot is valid exactly while no document was added, changed or
//! removed; recall counts, which change on every recall, are read afresh (only the recalled
//! documents', through a partial index).
//!
//! For a database file the snapshot is a file beside it (`<database>-vectors-<model hash>`,
//! written to a temporary file and renamed into place) and mapped: reading the same bytes
//! as a BLOB walks SQLite's overflow pages one by one (3 ms at 10,000 memories). Its
//! columns (rowids, update times, scales, packed ids, int8 rows) and a rowid table sorted by
//! rowid are 8-aligned in the file, so a new process searches them in place and looks up
//! only the documents it ranks, instead of copying every row and hashing every rowid (about
//! 10 ms at 100,000 memories). Above [`EXACT_LIMIT`] documents the snapshot also carries
//! every row's sign signature (see `vectors`), so that a new process's first search ranks
//! by them instead of scanning every int8 vector. Its header names the index it belongs to (a random id kept in
//! `recall_meta`, so a database recreated at the same path never reads an old file), the
//! generation and the model. An in-memory database keeps it as a row of
//! `recall_snapshots`. A stale or unreadable snapshot is ignored and rebuilt by the next
//! search that loads the documents (best effort: a busy or read-only store only loses the
//! speed-up).

use std::sync::Arc;

use rusqlite::{Connection, OptionalExtension, params};

use crate::engine::FileState;
use crate::error::RecallError;
use crate::vectors::{Column, EXACT_LIMIT, Ids, Partition, SlotEntry, VectorCache, sign_words};

/// Tables, index and triggers (idempotent; part of the recall schema).
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS recall_snapshots (
    model           TEXT PRIMARY KEY,
    docs_generation INTEGER NOT NULL,
    dims            INTEGER NOT NULL,
    data            BLOB NOT NULL
) STRICT;
CREATE INDEX IF NOT EXISTS recall_docs_recalled ON recall_docs(recall_count)
    WHERE recall_count > 0;
CREATE TRIGGER IF NOT EXISTS recall_docs_gen_ins AFTER INSERT ON recall_docs BEGIN
    UPDATE recall_meta SET value = value + 1 WHERE key = 'docs_generation';
END;
CREATE TRIGGER IF NOT EXISTS recall_docs_gen_del AFTER DELETE ON recall_docs BEGIN
    UPDATE recall_meta SET value = value + 1 WHERE key = 'docs_generation';
END;
CREATE TRIGGER IF NOT EXISTS recall_docs_gen_upd
    AFTER UPDATE OF id, scope, name, description, body, keywords, updated_at, embedding
    ON recall_docs BEGIN
    UPDATE recall_meta SET value = value + 1 WHERE key = 'docs_generation';
END;
";

const MAGIC: &[u8; 8] = b"CRVSNAP4";
/// The header of a snapshot file, before the encoded cache.
const FILE_MAGIC: &[u8; 8] = b"CRVFILE1";

/// Where the snapshot of `model`'s vectors lives for a database file (`None`: in memory).
fn file_path(conn: &Connection, model: &str) -> Option<std::path::PathBuf> {
    let db = conn.path().filter(|p| !p.is_empty())?;
    let h = crate::engine::fnv1a(model.bytes());
    Some(std::path::PathBuf::from(format!("{db}-vectors-{h:016x}")))
}

/// A database file keeps its snapshots in files: the rows an earlier version stored are
/// dead weight (tens of MB at 100,000 memories). Deleting them rewrites as much (SQLite
/// overwrites deleted content), so the background path does it (`prepare_snapshots`), best
/// effort and without waiting.
pub(crate) fn drop_rows_replaced_by_files(conn: &Connection) {
    let has_rows = || -> rusqlite::Result<bool> {
        conn.prepare_cached("SELECT EXISTS(SELECT 1 FROM recall_snapshots)")?
            .query_row([], |r| r.get(0))
    };
    if conn.path().is_some_and(|p| !p.is_empty()) && has_rows().unwrap_or(false) {
        without_waiting(conn, || conn.execute("DELETE FROM recall_snapshots", []));
    }
}

/// Prefixes of the temporary files snapshots are written to before they are renamed into
/// place.
pub(crate) const TEMP_PREFIXES: [&str; 2] = [".vectors-", ".lexicon-"];

/// Age past which a snapshot's temporary file is a leftover of a process that died while
/// writing it (a write takes well under a second).
const ABANDONED_AFTER: std::time::Duration = std::time::Duration::from_secs(600);

/// Removes the temporary snapshot files beside a database file that a process killed while
/// writing left behind (best effort; for the background path).
pub(crate) fn remove_abandoned_temp_files(conn: &Connection) {
    let Some(db) = conn.path().filter(|p| !p.is_empty()) else {
        return;
    };
    let dir = match std::path::Path::new(db).parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => std::path::Path::new("."),
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let name = entry.file_name();
        let name = name.to_string_lossy();
        if !TEMP_PREFIXES.iter().any(|p| name.starts_with(p)) {
            continue;
        }
        let old = entry
            .metadata()
            .ok()
            .filter(std::fs::Metadata::is_file)
            .and_then(|m| m.modified().ok())
            .and_then(|t| t.elapsed().ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// Maps a snapshot file (vectors or lexicon) read-only; `None` when it is missing or cannot
/// be mapped.
pub(crate) fn map_file(path: &std::path::Path) -> Option<Arc<memmap2::Mmap>> {
    let file = std::fs::File::open(path).ok()?;
    // SAFETY: a mapped file must not change while mapped. Snapshot files are never written
    // in place: a new snapshot is written to a temporary file and renamed over the old one,
    // which leaves this mapping on the old file's contents. They live in cairn's private
    // data directory (0700); a user who truncates one by hand while a search runs is the
    // only way to break this, as for any memory-mapped file.
    let map = unsafe { memmap2::Mmap::map(&file) }.ok()?;
    Some(Arc::new(map))
}

/// The random id of this index (hex; see the module doc).
pub(crate) fn index_id(conn: &Connection) -> Result<String, RecallError> {
    Ok(conn
        .prepare_cached("SELECT value FROM recall_meta WHERE key = 'index_id'")?
        .query_row([], |r| r.get::<_, String>(0))
        .optional()?
        .unwrap_or_default())
}

/// The header a snapshot file of this index, model and generation starts with.
fn file_header(id: &str, model: &str, generation: i64, dims: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + model.len());
    out.extend_from_slice(FILE_MAGIC);
    put_str(&mut out, id);
    out.extend_from_slice(&generation.to_le_bytes());
    out.extend_from_slice(&(dims as u32).to_le_bytes());
    put_str(&mut out, model);
    // The encoded cache starts 8-aligned in the file, so that its columns map in place.
    out.resize(pad8(out.len()), 0);
    out
}

/// `n` rounded up to a multiple of 8 (snapshot files align their sections to 8 bytes).
pub(crate) fn pad8(n: usize) -> usize {
    n.div_ceil(8) * 8
}

/// Where the vector snapshot files of the index in `conn` stand (see
/// [`crate::search_files`]): current when one of them (any model's) is of this index at the
/// documents' current generation.
pub(crate) fn file_state(conn: &Connection) -> Result<FileState, RecallError> {
    let Some(db) = conn
        .path()
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
    else {
        return Ok(FileState::NotUsed);
    };
    let (Some(dir), Some(name)) = (db.parent(), db.file_name()) else {
        return Ok(FileState::NotUsed);
    };
    let prefix = format!("{}-vectors-", name.to_string_lossy());
    let id = index_id(conn)?;
    let generation = docs_generation(conn)?;
    let (mut any, mut current) = (false, false);
    let dir = if dir.as_os_str().is_empty() {
        std::path::Path::new(".")
    } else {
        dir
    };
    for entry in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        if !entry.file_name().to_string_lossy().starts_with(&prefix) {
            continue;
        }
        any = true;
        use std::io::Read;
        let mut head = vec![0u8; 512];
        let n = std::fs::File::open(entry.path())
            .and_then(|mut f| f.read(&mut head))
            .unwrap_or(0);
        let mut r = Reader { b: &head[..n] };
        let ours = r.take(FILE_MAGIC.len()) == Some(FILE_MAGIC.as_slice())
            && r.str() == Some(id.as_str())
            && r.array::<8>().map(i64::from_le_bytes) == Some(generation);
        current |= ours;
    }
    Ok(match (any, current) {
        (_, true) => FileState::Current,
        (true, false) => FileState::Stale,
        (false, false) => FileState::Missing,
    })
}

/// The current `docs_generation`.
pub(crate) fn docs_generation(conn: &Connection) -> Result<i64, RecallError> {
    Ok(conn
        .prepare_cached("SELECT value FROM recall_meta WHERE key = 'docs_generation'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Fills `cache` (empty, with the right dimension) from the stored snapshot when it is
/// current for `model`; returns false (cache untouched) otherwise.
pub(crate) fn load(
    conn: &Connection,
    model: &str,
    generation: i64,
    cache: &mut VectorCache,
) -> Result<bool, RecallError> {
    let decoded = match file_path(conn, model) {
        Some(path) => {
            let header = file_header(&index_id(conn)?, model, generation, cache.dims);
            // Missing (never stored, or another process is replacing it: the rename is
            // atomic, so a reader sees the old file or the new one) or unreadable: rebuild.
            match map_file(&path) {
                Some(map) => map
                    .strip_prefix(header.as_slice())
                    .is_some_and(|rest| decode(rest, Some((&map, header.len())), cache).is_some()),
                None => false,
            }
        }
        None => {
            let mut st = conn.prepare_cached(
                "SELECT data FROM recall_snapshots
                 WHERE model = ?2 AND docs_generation = ?1 AND dims = ?3",
            )?;
            let mut rows = st.query(params![generation, model, cache.dims as i64])?;
            match rows.next()? {
                Some(row) => row
                    .get_ref(0)?
                    .as_blob()
                    .is_ok_and(|data| decode(data, None, cache).is_some()),
                None => false,
            }
        }
    };
    if !decoded {
        cache.clear();
        return Ok(false);
    }
    // Recall counts move without touching the snapshot: read the recalled documents'.
    let mut st =
        conn.prepare_cached("SELECT rowid, recall_count FROM recall_docs WHERE recall_count > 0")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        cache.set_recall_count(r.get(0)?, r.get(1)?);
    }
    Ok(true)
}

/// Whether a snapshot of `model`'s vectors at `generation` is stored.
pub(crate) fn is_current(
    conn: &Connection,
    model: &str,
    generation: i64,
    dims: usize,
) -> Result<bool, RecallError> {
    if let Some(path) = file_path(conn, model) {
        use std::io::Read;
        let header = file_header(&index_id(conn)?, model, generation, dims);
        let mut found = vec![0u8; header.len()];
        return Ok(std::fs::File::open(&path)
            .and_then(|mut f| f.read_exact(&mut found))
            .is_ok_and(|()| found == header));
    }
    Ok(conn
        .prepare_cached(
            "SELECT EXISTS(SELECT 1 FROM recall_snapshots WHERE model = ?1 AND docs_generation = ?2)",
        )?
        .query_row(params![model, generation], |r| r.get(0))?)
}

/// Stores a snapshot of `cache`, taken at `generation`, unless the documents have changed
/// since (then it would be stale at once).
pub(crate) fn store(
    conn: &Connection,
    model: &str,
    generation: i64,
    cache: &VectorCache,
) -> Result<(), RecallError> {
    let data = encode(cache);
    if let Some(path) = file_path(conn, model) {
        let header = file_header(&index_id(conn)?, model, generation, cache.dims);
        let dir = path
            .parent()
            .filter(|d| !d.as_os_str().is_empty())
            .unwrap_or(std::path::Path::new("."));
        let io = |source: std::io::Error| RecallError::Io {
            path: path.display().to_string(),
            source,
        };
        // Private like the database (0600), whole or not at all.
        let mut tmp = tempfile::Builder::new()
            .prefix(TEMP_PREFIXES[0])
            .tempfile_in(dir)
            .map_err(io)?;
        {
            use std::io::Write;
            tmp.write_all(&header).map_err(io)?;
            tmp.write_all(&data).map_err(io)?;
        }
        // A writer that changed the documents meanwhile makes this one stale: keep the file
        // that may already be current.
        if docs_generation(conn)? == generation {
            tmp.persist(&path).map_err(|e| io(e.error))?;
        }
        return Ok(());
    }
    let stored = conn
        .prepare_cached(
            "INSERT OR REPLACE INTO recall_snapshots(model, docs_generation, dims, data)
             SELECT ?2, ?1, ?3, ?4
             WHERE (SELECT value FROM recall_meta WHERE key = 'docs_generation') = ?1",
        )?
        .execute(params![generation, model, cache.dims as i64, data])?;
    if stored > 0 {
        // Snapshots of older generations can never be read again; the single-row table of
        // earlier versions neither.
        conn.prepare_cached("DELETE FROM recall_snapshots WHERE docs_generation != ?1")?
            .execute([generation])?;
        conn.execute_batch("DROP TABLE IF EXISTS recall_snapshot")?;
    }
    Ok(())
}

/// [`store`], but only if the database's write lock is free right now: a search never
/// waits for another writer (nor fails) because of the snapshot.
pub(crate) fn store_if_idle(conn: &Connection, model: &str, generation: i64, cache: &VectorCache) {
    if file_path(conn, model).is_some() {
        // A file needs no lock of the database.
        let _ = store(conn, model, generation, cache);
        return;
    }
    without_waiting(conn, || store(conn, model, generation, cache));
}

/// Runs a best-effort write with the busy timeout set to zero (it fails at once instead of
/// waiting when another process holds the write lock), ignoring its outcome; the
/// connection's busy timeout is restored afterwards.
pub(crate) fn without_waiting<T, E>(conn: &Connection, write: impl FnOnce() -> Result<T, E>) {
    let Ok(timeout) = conn.query_row("PRAGMA busy_timeout", [], |r| r.get::<_, i64>(0)) else {
        return;
    };
    if conn.busy_timeout(std::time::Duration::ZERO).is_err() {
        return;
    }
    let _ = write();
    let _ = conn.busy_timeout(std::time::Duration::from_millis(timeout.max(0) as u64));
}

/// The cache: its scopes and their sizes, the rowid table sorted by rowid (where each
/// document is), then partition by partition its rowids, update times, scales, packed ids
/// and int8 rows, each column 8-aligned from the start of the encoding, so that a mapped
/// file's columns are read in place. Numbers are little-endian.
fn encode(cache: &VectorCache) -> Vec<u8> {
    let dims = cache.dims;
    let n = cache.len();
    let mut out = Vec::with_capacity(64 + n * (16 + 8 + 8 + 4 + 4 + 16 + dims));
    let pad = |out: &mut Vec<u8>| out.resize(pad8(out.len()), 0);
    // Signatures only pay where a search ranks by them: above the exact-scan limit.
    let words = if n > EXACT_LIMIT { sign_words(dims) } else { 0 };
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(dims as u32).to_le_bytes());
    out.extend_from_slice(&(words as u32).to_le_bytes());
    let scopes = cache.scopes();
    out.extend_from_slice(&(scopes.len() as u32).to_le_bytes());
    for (s, p) in scopes.iter().zip(&cache.parts) {
        put_str(&mut out, s);
        out.extend_from_slice(&(p.rowids.len() as u32).to_le_bytes());
    }
    pad(&mut out);
    let mut table: Vec<SlotEntry> = Vec::with_capacity(n);
    for (part, p) in cache.parts.iter().enumerate() {
        for (index, &rowid) in p.rowids.as_slice().iter().enumerate() {
            table.push(SlotEntry {
                rowid,
                part: part as u32,
                index: index as u32,
            });
        }
    }
    table.sort_unstable_by_key(|e| e.rowid);
    out.extend_from_slice(&(table.len() as u64).to_le_bytes());
    for e in &table {
        out.extend_from_slice(&e.rowid.to_le_bytes());
        out.extend_from_slice(&e.part.to_le_bytes());
        out.extend_from_slice(&e.index.to_le_bytes());
    }
    for p in &cache.parts {
        let rows = p.rowids.len();
        pad(&mut out);
        for rowid in p.rowids.as_slice() {
            out.extend_from_slice(&rowid.to_le_bytes());
        }
        for updated in p.updated.as_slice() {
            out.extend_from_slice(&updated.to_le_bytes());
        }
        for scale in p.scales.as_slice() {
            out.extend_from_slice(&scale.to_le_bytes());
        }
        let mut text: Vec<u8> = Vec::new();
        out.extend_from_slice(&0u32.to_le_bytes());
        for i in 0..rows {
            text.extend_from_slice(p.ids.get(i).unwrap_or("").as_bytes());
            let end = u32::try_from(text.len()).unwrap_or(u32::MAX);
            out.extend_from_slice(&end.to_le_bytes());
        }
        out.extend_from_slice(&(text.len() as u64).to_le_bytes());
        out.extend_from_slice(&text);
        pad(&mut out);
        out.extend(p.vectors.as_slice().iter().map(|&x| x as u8));
        if words > 0 {
            pad(&mut out);
            for w in cache.signatures_of(p).iter() {
                out.extend_from_slice(&w.to_le_bytes());
            }
        }
    }
    out
}

fn put_str(out: &mut Vec<u8>, s: &str) {
    // Ids and scopes are short; a longer one is cut (the decoder then rejects the
    // snapshot, which only costs the speed-up).
    let len = u16::try_from(s.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&s.as_bytes()[..usize::from(len)]);
}

struct Reader<'a> {
    b: &'a [u8],
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Option<&'a [u8]> {
        let (a, rest) = self.b.split_at_checked(n)?;
        self.b = rest;
        Some(a)
    }
    fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        self.take(N)?.try_into().ok()
    }
    fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }
    fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }
    fn str(&mut self) -> Option<&'a str> {
        let len = u16::from_le_bytes(self.array()?);
        std::str::from_utf8(self.take(usize::from(len))?).ok()
    }
}

/// Fills an empty `cache` from [`encode`]'s bytes; with `mapped` (the file `data` was read
/// from and where `data` starts in it, 8-aligned), the columns stay in the file.
fn decode(
    data: &[u8],
    mapped: Option<(&Arc<memmap2::Mmap>, usize)>,
    cache: &mut VectorCache,
) -> Option<()> {
    // Columns are read as the machine's numbers: the encoding is little-endian.
    if cfg!(target_endian = "big") {
        return None;
    }
    let dims = cache.dims;
    let mut r = Reader { b: data };
    if r.take(MAGIC.len())? != MAGIC || r.u32()? as usize != dims {
        return None;
    }
    let words = r.u32()? as usize;
    if words != 0 && words != sign_words(dims) {
        return None;
    }
    let n_parts = r.u32()? as usize;
    let mut parts = Vec::with_capacity(n_parts.min(data.len()));
    for _ in 0..n_parts {
        let scope = r.str()?;
        parts.push((scope, r.u32()? as usize));
    }
    let total: usize = parts.iter().map(|p| p.1).sum();
    // Every count is checked against the bytes before anything is allocated for it.
    if total.checked_mul(40 + dims)? > r.b.len() {
        return None;
    }
    let at = |r: &Reader<'_>| data.len() - r.b.len();
    // A column: mapped in place when it can be, copied otherwise.
    fn column<T: bytemuck::Pod>(
        bytes: &[u8],
        offset: usize,
        mapped: Option<(&Arc<memmap2::Mmap>, usize)>,
    ) -> Option<Column<T>> {
        if !bytes.len().is_multiple_of(std::mem::size_of::<T>()) {
            return None;
        }
        if let Some((map, start)) = mapped
            && let Some(c) = Column::mapped(Arc::clone(map), start + offset, bytes.len())
        {
            return Some(c);
        }
        let mut owned = vec![T::zeroed(); bytes.len() / std::mem::size_of::<T>()];
        bytemuck::cast_slice_mut::<T, u8>(&mut owned).copy_from_slice(bytes);
        Some(Column::from(owned))
    }
    r.take(pad8(at(&r)) - at(&r))?;
    let entries = usize::try_from(r.u64()?).ok()?;
    if entries != total {
        return None;
    }
    let offset = at(&r);
    let table: Column<SlotEntry> = column(r.take(entries.checked_mul(16)?)?, offset, mapped)?;
    for (scope, n) in parts {
        r.take(pad8(at(&r)) - at(&r))?;
        let mut cols = |width: usize| -> Option<(&[u8], usize)> {
            let offset = at(&r);
            Some((r.take(n.checked_mul(width)?)?, offset))
        };
        let (rowids, o_rowids) = cols(8)?;
        let (updated, o_updated) = cols(8)?;
        let (scales, o_scales) = cols(4)?;
        let offsets_at = at(&r);
        let offsets = r.take(n.checked_add(1)?.checked_mul(4)?)?;
        let text_len = usize::try_from(r.u64()?).ok()?;
        let text_at = at(&r);
        let text = r.take(text_len)?;
        r.take(pad8(at(&r)) - at(&r))?;
        let rows_at = at(&r);
        let rows = r.take(n.checked_mul(dims)?)?;
        let signs = if words > 0 {
            r.take(pad8(at(&r)) - at(&r))?;
            let signs_at = at(&r);
            column(
                r.take(n.checked_mul(words)?.checked_mul(8)?)?,
                signs_at,
                mapped,
            )?
        } else {
            Column::default()
        };
        let partition = Partition {
            rowids: column(rowids, o_rowids, mapped)?,
            updated: column(updated, o_updated, mapped)?,
            scales: column(scales, o_scales, mapped)?,
            ids: Ids::packed(
                column(offsets, offsets_at, mapped)?,
                column(text, text_at, mapped)?,
            ),
            vectors: column(rows, rows_at, mapped)?,
            signs,
        };
        cache.push_partition(scope, partition).then_some(())?;
    }
    if !r.b.is_empty() || !cache.set_slot_table(table) {
        return None;
    }
    if words > 0 {
        cache.adopt_signatures().then_some(())?;
    }
    Some(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{Document, Recall};

    fn doc(id: &str, body: &str) -> Document {
        Document {
            id: id.into(),
            scope: "p".into(),
            name: id.into(),
            body: body.into(),
            ..Document::default()
        }
    }

    /// Two documents in scope `p`: a package-manager rule and an unrelated fact.
    fn seed(r: &mut Recall, conn: &Connection) {
        r.upsert_many(
            conn,
            &[
                doc("m1", "use pnpm, not npm"),
                doc("m2", "the staging database password rotates monthly"),
            ],
        )
        .unwrap();
    }

    #[test]
    fn a_new_index_searches_from_the_snapshot_and_counts_stay_fresh() {
        let conn = Connection::open_in_memory().unwrap();
        let mut a = Recall::open(&conn).unwrap();
        seed(&mut a, &conn);
        let before = a.search(&conn, "package manager", &["p"], 2, 0).unwrap();
        let g = docs_generation(&conn).unwrap();
        let stored: i64 = conn
            .query_row("SELECT docs_generation FROM recall_snapshots", [], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(stored, g);
        // Counting a recall leaves the snapshot current; the next index reads the count.
        a.record_recall(&conn, &["m2"]).unwrap();
        assert_eq!(docs_generation(&conn).unwrap(), g);
        let mut b = Recall::open(&conn).unwrap();
        let after = b.search(&conn, "package manager", &["p"], 2, 0).unwrap();
        assert_eq!(
            before.iter().map(|h| &h.id).collect::<Vec<_>>(),
            after.iter().map(|h| &h.id).collect::<Vec<_>>()
        );
        let (model, dims): (String, i64) = conn
            .query_row("SELECT model, dims FROM recall_snapshots", [], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .unwrap();
        let m2: i64 = conn
            .query_row("SELECT rowid FROM recall_docs WHERE id = 'm2'", [], |r| {
                r.get(0)
            })
            .unwrap();
        let mut c = VectorCache::new(dims as usize);
        assert!(load(&conn, &model, g, &mut c).unwrap());
        assert_eq!(c.len(), 2);
        assert_eq!(c.meta(m2).map(|m| m.recall_count), Some(1));
        // A changed document makes it stale.
        b.upsert(&conn, &doc("m3", "yarn is fine too")).unwrap();
        let g2 = docs_generation(&conn).unwrap();
        assert_ne!(g2, g);
        let mut c = VectorCache::new(dims as usize);
        assert!(!load(&conn, &model, g2, &mut c).unwrap());
        assert_eq!(c.len(), 0);
    }

    #[test]
    fn a_database_file_keeps_its_snapshot_in_a_file_of_its_own() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("recall.db");
        let snapshot_files = || {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.starts_with("recall.db-vectors-"))
                .collect::<Vec<_>>()
        };
        let conn = Connection::open(&path).unwrap();
        let mut a = Recall::open(&conn).unwrap();
        seed(&mut a, &conn);
        let before = a.search(&conn, "package manager", &["p"], 2, 0).unwrap();
        let files = snapshot_files();
        assert_eq!(files.len(), 1, "{files:?}");
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM recall_snapshots", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0, "a database file keeps no snapshot row");
        let model = a.model().to_owned();
        let dims = cairn_embed::dims();
        let g = docs_generation(&conn).unwrap();
        assert!(is_current(&conn, &model, g, dims).unwrap());

        // Another connection (another process) reads it.
        let other = Connection::open(&path).unwrap();
        let mut c = VectorCache::new(dims);
        assert!(load(&other, &model, g, &mut c).unwrap());
        assert_eq!(c.len(), 2);
        let mut b = Recall::open(&other).unwrap();
        let after = b.search(&other, "package manager", &["p"], 2, 0).unwrap();
        assert_eq!(
            before.iter().map(|h| &h.id).collect::<Vec<_>>(),
            after.iter().map(|h| &h.id).collect::<Vec<_>>()
        );

        // A truncated or foreign file is ignored, and replaced by the next search.
        let file = dir.path().join(&files[0]);
        let bytes = std::fs::read(&file).unwrap();
        std::fs::write(&file, &bytes[..bytes.len() - 3]).unwrap();
        let mut c = VectorCache::new(dims);
        assert!(!load(&other, &model, g, &mut c).unwrap());
        assert_eq!(c.len(), 0);
        let mut fresh = Recall::open(&other).unwrap();
        assert_eq!(
            fresh
                .search(&other, "package manager", &["p"], 2, 0)
                .unwrap()[0]
                .id,
            before[0].id
        );
        assert_eq!(std::fs::read(&file).unwrap(), bytes);

        // A changed document makes it stale; the reader's cache, whose rows were the
        // mapped file's, takes the change (its rows are copied out first).
        b.upsert(&other, &doc("m3", "yarn is fine too")).unwrap();
        assert!(b.remove(&other, "m2").unwrap());
        b.set_config(crate::RecallConfig {
            mode: crate::Mode::Semantic,
            ..crate::RecallConfig::default()
        });
        let found = |r: &mut Recall, q: &str| r.search(&other, q, &["p"], 3, 0).unwrap();
        assert_eq!(found(&mut b, "yarn is fine too")[0].id, "m3");
        assert_eq!(found(&mut b, "use pnpm, not npm")[0].id, "m1");
        assert!(
            found(&mut b, "staging database password")
                .iter()
                .all(|h| h.id != "m2")
        );
        let g2 = docs_generation(&other).unwrap();
        assert!(!is_current(&other, &model, g2, dims).unwrap());
        let mut c = VectorCache::new(dims);
        assert!(!load(&other, &model, g2, &mut c).unwrap());
        drop((a, b, fresh, conn, other));

        // A database recreated at the same path, at the same generation, never reads the
        // old file: the index it belongs to is another.
        for ext in ["", "-wal", "-shm"] {
            let _ = std::fs::remove_file(dir.path().join(format!("recall.db{ext}")));
        }
        let conn = Connection::open(&path).unwrap();
        let mut r = Recall::open(&conn).unwrap();
        r.upsert_many(&conn, &[doc("x1", "one"), doc("x2", "two")])
            .unwrap();
        std::fs::write(&file, &bytes).unwrap();
        let g = docs_generation(&conn).unwrap();
        let mut c = VectorCache::new(dims);
        assert!(!load(&conn, &model, g, &mut c).unwrap());

        // The rows an earlier version stored are dropped by the background path.
        conn.execute(
            "INSERT INTO recall_snapshots VALUES ('old-model', 1, 4, x'00')",
            [],
        )
        .unwrap();
        r.prepare_snapshots(&conn).unwrap();
        let rows: i64 = conn
            .query_row("SELECT count(*) FROM recall_snapshots", [], |r| r.get(0))
            .unwrap();
        assert_eq!(rows, 0);
        assert!(is_current(&conn, &model, g, dims).unwrap());
    }

    #[test]
    fn temporary_files_of_killed_writers_are_removed_by_the_background_path() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("recall.db")).unwrap();
        let mut r = Recall::open(&conn).unwrap();
        seed(&mut r, &conn);
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3_600);
        let leftovers = [".vectors-a1b2c3", ".lexicon-d4e5f6"];
        for name in leftovers {
            let f = std::fs::File::create(dir.path().join(name)).unwrap();
            f.set_modified(old).unwrap();
        }
        // One being written right now, and files that are not cairn's, stay.
        std::fs::write(dir.path().join(".lexicon-fresh1"), b"x").unwrap();
        let other = std::fs::File::create(dir.path().join(".vectorsish")).unwrap();
        other.set_modified(old).unwrap();
        r.prepare_snapshots(&conn).unwrap();
        for name in leftovers {
            assert!(!dir.path().join(name).exists(), "{name} left");
        }
        assert!(dir.path().join(".lexicon-fresh1").exists());
        assert!(dir.path().join(".vectorsish").exists());
        assert!(dir.path().join("recall.db-lexicon").exists());
    }

    #[test]
    fn a_damaged_snapshot_file_never_fails_a_search() {
        let dir = tempfile::tempdir().unwrap();
        let conn = Connection::open(dir.path().join("recall.db")).unwrap();
        let mut rng = crate::resident_tests::Rng(0xda7a);
        let mut writer = Recall::open(&conn).unwrap();
        writer
            .upsert_many(
                &conn,
                &crate::resident_tests::random_docs(&mut rng, 300, "d"),
            )
            .unwrap();
        writer.prepare_snapshots(&conn).unwrap();
        let file = std::fs::read_dir(dir.path())
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .find(|p| p.to_string_lossy().contains("recall.db-vectors-"))
            .unwrap();
        let good = std::fs::read(&file).unwrap();
        let queries = crate::resident_tests::random_queries(&mut rng, 5);
        let scopes = ["global", "proj-a", "proj-b"];
        let expected: Vec<Vec<String>> = queries
            .iter()
            .map(|q| {
                let hits = Recall::open(&conn).unwrap().search(&conn, q, &scopes, 5, 0);
                hits.unwrap().into_iter().map(|h| h.id).collect()
            })
            .collect();
        let mut damaged: Vec<Vec<u8>> = (1..8)
            .map(|k| good[..good.len() * k / 8].to_vec())
            .collect();
        damaged.extend(rng.scribbled(&good, 60));
        for (k, bytes) in damaged.iter().enumerate() {
            std::fs::write(&file, bytes).unwrap();
            let mut reader = Recall::open(&conn).unwrap();
            for (q, want) in queries.iter().zip(&expected) {
                let hits = reader.search(&conn, q, &scopes, 5, 0).unwrap();
                // A file cut short is never read: the search is the same as from a whole one.
                if k < 7 {
                    let got: Vec<String> = hits.into_iter().map(|h| h.id).collect();
                    assert_eq!(&got, want, "cut file {k}, {q}");
                }
            }
        }
        // A damaged file that is read anyway: changing the cache it gave (what a process
        // does after its own write) must not panic either.
        let model = Recall::open(&conn).unwrap().model().to_owned();
        let header = file_header(
            &index_id(&conn).unwrap(),
            &model,
            docs_generation(&conn).unwrap(),
            cairn_embed::dims(),
        );
        let body = &good[header.len()..];
        for bytes in rng.scribbled(body, 200) {
            let mut c = VectorCache::new(cairn_embed::dims());
            if decode(&bytes, None, &mut c).is_none() {
                continue;
            }
            let v = vec![0.1f32; cairn_embed::dims()];
            for rowid in 1..40 {
                c.remove(rowid);
                let meta = crate::vectors::Meta {
                    id: "x".into(),
                    updated_at: 0,
                    recall_count: 1,
                };
                c.put(rowid + 1_000, "global", meta, &v);
            }
            let mut q = Vec::new();
            let qs = crate::vectors::quantize(&v, &mut q);
            let mut scratch = Vec::new();
            c.top_n(&q, qs, &c.parts_of(&scopes), 5, false, &mut scratch);
        }
    }

    #[test]
    fn a_large_snapshot_carries_signatures_and_its_first_search_ranks_by_them() {
        let dims = 16;
        let mut rng = crate::resident_tests::Rng(0x5157);
        let mut unit = || (rng.next() >> 11) as f32 / (1u64 << 53) as f32 - 0.5;
        let mut c = VectorCache::new(dims);
        let n = EXACT_LIMIT + 500;
        for i in 0..n {
            let v: Vec<f32> = (0..dims).map(|_| unit()).collect();
            let meta = crate::vectors::Meta {
                id: format!("m{i}").into(),
                updated_at: 0,
                recall_count: 0,
            };
            c.put(i as i64, ["a", "b"][i % 2], meta, &v);
        }
        let data = encode(&c);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snapshot");
        std::fs::write(&path, &data).unwrap();
        let map = map_file(&path).unwrap();
        let mut d = VectorCache::new(dims);
        assert!(decode(&map, Some((&map, 0)), &mut d).is_some());
        assert!(d.signed, "the signatures were not adopted");
        // The cache that wrote the snapshot signs itself on its second search.
        let mut q = Vec::new();
        let qs = crate::vectors::quantize(&(0..dims).map(|_| unit()).collect::<Vec<_>>(), &mut q);
        let parts = c.parts_of(&["a", "b"]);
        let mut scratch = Vec::new();
        c.top_n(&q, qs, &parts, 5, false, &mut scratch);
        let signed_in_memory = c.top_n(&q, qs, &parts, 5, false, &mut scratch);
        assert!(c.signed);
        let from_snapshot = d.top_n(&q, qs, &d.parts_of(&["a", "b"]), 5, false, &mut scratch);
        assert_eq!(from_snapshot, signed_in_memory);
        for (pc, pd) in c.parts.iter().zip(&d.parts) {
            assert_eq!(pc.signs.as_slice(), pd.signs.as_slice());
        }
        // A change keeps the signatures in step.
        assert!(d.remove(3));
        let v: Vec<f32> = (0..dims).map(|_| unit()).collect();
        let meta = crate::vectors::Meta {
            id: "new".into(),
            updated_at: 0,
            recall_count: 0,
        };
        d.put(n as i64, "a", meta, &v);
        let words = crate::vectors::sign_words(dims);
        for p in &d.parts {
            assert_eq!(p.signs.len(), p.rowids.len() * words);
        }
        // Below the exact-scan limit a snapshot carries none.
        let mut small = VectorCache::new(dims);
        small.put(
            1,
            "a",
            crate::vectors::Meta {
                id: "x".into(),
                updated_at: 0,
                recall_count: 0,
            },
            &v,
        );
        let mut e = VectorCache::new(dims);
        assert!(decode(&encode(&small), None, &mut e).is_some());
        assert!(!e.signed && e.parts[0].signs.is_empty());
    }

    #[test]
    fn round_trip() {
        let mut c = VectorCache::new(4);
        let meta = |id: &str, t| crate::vectors::Meta {
            id: id.into(),
            updated_at: t,
            recall_count: 3,
        };
        c.put(7, "global", meta("a", 10), &[0.5, -0.5, 0.5, -0.5]);
        c.put(9, "proj", meta("b", 20), &[1.0, 0.0, 0.0, 0.0]);
        c.put(11, "proj", meta("c", 30), &[0.0, 0.0, 0.0, 0.0]);
        let data = encode(&c);
        let mut d = VectorCache::new(4);
        assert!(decode(&data, None, &mut d).is_some());
        assert_eq!(d.len(), 3);
        let mut q = Vec::new();
        let qs = crate::vectors::quantize(&[1.0, 0.0, 0.0, 0.0], &mut q);
        for rowid in [7, 9, 11] {
            assert_eq!(c.cosine(&q, qs, rowid), d.cosine(&q, qs, rowid));
            let (a, b) = (c.meta(rowid).unwrap(), d.meta(rowid).unwrap());
            assert_eq!((a.id, a.updated_at), (b.id, b.updated_at));
            // Recall counts are not in the snapshot: `load` reads them afresh.
            assert_eq!((a.recall_count, b.recall_count), (3, 0));
        }
        assert_eq!(d.meta(8), None);
        assert_eq!(d.parts_of(&["proj"]).len(), 1);
        assert_eq!(d.count_in(&d.parts_of(&["proj"])), 2);

        // Mapped from a file, then changed: the columns are copied out as they change.
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("snapshot");
        std::fs::write(&path, &data).unwrap();
        let map = map_file(&path).unwrap();
        let mut m = VectorCache::new(4);
        assert!(decode(&map, Some((&map, 0)), &mut m).is_some());
        assert_eq!(m.meta(9).map(|x| x.id), Some("b"));
        assert!(m.remove(9));
        m.put(13, "proj", meta("d", 40), &[0.0, 1.0, 0.0, 0.0]);
        m.set_recall_count(11, 2);
        assert_eq!(m.len(), 3);
        assert_eq!(m.meta(9), None);
        assert_eq!(m.meta(11).map(|x| (x.id, x.recall_count)), Some(("c", 2)));
        assert_eq!(m.meta(13).map(|x| (x.id, x.updated_at)), Some(("d", 40)));
        assert_eq!(m.cosine(&q, qs, 7), c.cosine(&q, qs, 7));
        assert_eq!(m.count_in(&m.parts_of(&["proj"])), 2);
        // Truncated or foreign data is rejected.
        let mut e = VectorCache::new(4);
        assert!(decode(&data[..data.len() - 1], None, &mut e).is_none());
        let mut e = VectorCache::new(8);
        assert!(decode(&data, None, &mut e).is_none());
    }
}
