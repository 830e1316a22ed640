//! A compact copy of the in-memory vector cache, stored in the database, so that a new
//! process (`cairn recall`, a hook) starts searching without reading and quantising every
//! stored f32 embedding.
//!
//! A snapshot is one row of `recall_snapshots`, keyed by the model tag of its vectors (the
//! stored model's, or the static tier's when a process that may not load the stored model
//! searches a static copy; see `Recall`): the dimension, the
//! `recall_meta.docs_generation` it reflects, and one BLOB holding, per document,
//! its rowid, id, scope, `updated_at` and int8 vector with its scale. `docs_generation` is
//! bumped by triggers on every change of `recall_docs` except recall counting, so a snapshot
//! is valid exactly while no document was added, changed or removed; recall counts, which
//! change on every recall, are read afresh (only the recalled documents', through a partial
//! index). A stale or unreadable snapshot is ignored and rebuilt by the next search that
//! loads the documents (best effort: a busy or read-only database only loses the speed-up).

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::RecallError;
use crate::vectors::{Meta, VectorCache};

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

const MAGIC: &[u8; 8] = b"CRVSNAP1";

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
    let mut st = conn.prepare_cached(
        "SELECT data FROM recall_snapshots
         WHERE model = ?2 AND docs_generation = ?1 AND dims = ?3",
    )?;
    let mut rows = st.query(params![generation, model, cache.dims as i64])?;
    let Some(row) = rows.next()? else {
        return Ok(false);
    };
    let Ok(data) = row.get_ref(0)?.as_blob() else {
        return Ok(false);
    };
    if decode(data, cache).is_none() {
        cache.clear();
        return Ok(false);
    }
    drop(rows);
    // Recall counts move without touching the snapshot: read the recalled documents'.
    let mut st =
        conn.prepare_cached("SELECT rowid, recall_count FROM recall_docs WHERE recall_count > 0")?;
    let mut rows = st.query([])?;
    while let Some(r) = rows.next()? {
        if let Some(m) = cache.meta_mut(r.get(0)?) {
            m.recall_count = r.get(1)?;
        }
    }
    Ok(true)
}

/// Whether a snapshot of `model`'s vectors at `generation` is stored.
pub(crate) fn is_current(
    conn: &Connection,
    model: &str,
    generation: i64,
) -> Result<bool, RecallError> {
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

fn encode(cache: &VectorCache) -> Vec<u8> {
    let dims = cache.dims;
    let per_doc = 8 + 8 + 4 + 4 + 2 + 16 + dims;
    let mut out = Vec::with_capacity(32 + cache.len() * per_doc);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&(dims as u32).to_le_bytes());
    let scopes = cache.scopes();
    out.extend_from_slice(&(scopes.len() as u32).to_le_bytes());
    for s in scopes {
        put_str(&mut out, s);
    }
    out.extend_from_slice(&(cache.len() as u32).to_le_bytes());
    cache.for_each_row(|part, rowid, meta, scale, q| {
        out.extend_from_slice(&rowid.to_le_bytes());
        out.extend_from_slice(&meta.updated_at.to_le_bytes());
        out.extend_from_slice(&part.to_le_bytes());
        out.extend_from_slice(&scale.to_le_bytes());
        put_str(&mut out, &meta.id);
        out.extend(q.iter().map(|&x| x as u8));
    });
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
    fn i64(&mut self) -> Option<i64> {
        self.array().map(i64::from_le_bytes)
    }
    fn f32(&mut self) -> Option<f32> {
        self.array().map(f32::from_le_bytes)
    }
    fn str(&mut self) -> Option<&'a str> {
        let len = u16::from_le_bytes(self.array()?);
        std::str::from_utf8(self.take(usize::from(len))?).ok()
    }
}

fn decode(data: &[u8], cache: &mut VectorCache) -> Option<()> {
    let mut r = Reader { b: data };
    if r.take(MAGIC.len())? != MAGIC || r.u32()? as usize != cache.dims {
        return None;
    }
    let n_scopes = r.u32()? as usize;
    // Each stored scope's partition in the cache, found once.
    let mut parts = Vec::with_capacity(n_scopes.min(data.len()));
    for _ in 0..n_scopes {
        parts.push(cache.part_for(r.str()?));
    }
    let count = r.u32()? as usize;
    // A first pass over the fixed-size fields sizes every partition once (growing them
    // row by row would copy and fault in their memory several times over).
    let mut per_part = vec![0usize; parts.len()];
    let mut pass = Reader { b: r.b };
    for _ in 0..count {
        pass.take(16)?;
        *per_part.get_mut(pass.u32()? as usize)? += 1;
        pass.take(4)?;
        let len = u16::from_le_bytes(pass.array()?);
        pass.take(usize::from(len) + cache.dims)?;
    }
    cache.reserve(count);
    for (&part, n) in parts.iter().zip(per_part) {
        cache.reserve_in(part, n);
    }
    for _ in 0..count {
        let rowid = r.i64()?;
        let updated_at = r.i64()?;
        let part = *parts.get(r.u32()? as usize)?;
        let scale = r.f32()?;
        let id = r.str()?;
        let q = r.take(cache.dims)?;
        let meta = Meta {
            id: id.into(),
            updated_at,
            recall_count: 0,
        };
        cache.push_new(part, rowid, meta, scale, q).then_some(())?;
    }
    r.b.is_empty().then_some(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_index_searches_from_the_snapshot_and_counts_stay_fresh() {
        use crate::{Document, Recall};
        let conn = Connection::open_in_memory().unwrap();
        let mut a = Recall::open(&conn).unwrap();
        let doc = |id: &str, body: &str| Document {
            id: id.into(),
            scope: "p".into(),
            name: id.into(),
            body: body.into(),
            ..Document::default()
        };
        a.upsert_many(
            &conn,
            &[
                doc("m1", "use pnpm, not npm"),
                doc("m2", "the staging database password rotates monthly"),
            ],
        )
        .unwrap();
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
    fn round_trip() {
        let mut c = VectorCache::new(4);
        let meta = |id: &str, t| Meta {
            id: id.into(),
            updated_at: t,
            recall_count: 3,
        };
        c.put(7, "global", meta("a", 10), &[0.5, -0.5, 0.5, -0.5]);
        c.put(9, "proj", meta("b", 20), &[1.0, 0.0, 0.0, 0.0]);
        c.put(11, "proj", meta("c", 30), &[0.0, 0.0, 0.0, 0.0]);
        let data = encode(&c);
        let mut d = VectorCache::new(4);
        assert!(decode(&data, &mut d).is_some());
        assert_eq!(d.len(), 3);
        let mut q = Vec::new();
        let qs = crate::vectors::quantize(&[1.0, 0.0, 0.0, 0.0], &mut q);
        for rowid in [7, 9, 11] {
            assert_eq!(c.cosine(&q, qs, rowid), d.cosine(&q, qs, rowid));
            assert_eq!(c.meta(rowid).map(|m| &m.id), d.meta(rowid).map(|m| &m.id));
        }
        assert_eq!(d.parts_of(&["proj"]).len(), 1);
        assert_eq!(d.count_in(&d.parts_of(&["proj"])), 2);
        // Truncated or foreign data is rejected.
        let mut e = VectorCache::new(4);
        assert!(decode(&data[..data.len() - 1], &mut e).is_none());
        let mut e = VectorCache::new(8);
        assert!(decode(&data, &mut e).is_none());
    }
}
