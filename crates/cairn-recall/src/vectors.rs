//! In-memory int8 copy of the stored embeddings, partitioned by scope, for brute-force
//! cosine search.
//!
//! Each stored (L2-normalised, f32) embedding is quantised to int8 with its own scale
//! (`max |x| / 127`); a query is quantised the same way, so a cosine is
//! `s_q * s_d * sum(q_i * d_i)` with an integer inner sum (error about 1e-3).
//!
//! The table's dimensions are PCA components in decreasing order of variance, so a search
//! first scans only the leading half of every vector (stored contiguously, 12.8 MB for
//! 100k documents at 256 dimensions: memory bandwidth is the cost), keeps the best
//! `max(16n, 1024)` and rescores those with all dimensions. Measured over 100k synthetic
//! documents, 97.8-99.5% of the top 5 are those of an exact scan (a shortlist of
//! `max(4n, 256)` kept 91-96%), for 0.2-0.3 ms more.

use std::collections::HashMap;

/// Per-document data the ranker needs without touching SQLite.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub id: Box<str>,
    pub updated_at: i64,
    pub recall_count: i64,
}

#[derive(Debug, Default)]
pub(crate) struct Partition {
    pub rowids: Vec<i64>,
    pub meta: Vec<Meta>,
    pub scales: Vec<f32>,
    /// Leading `head_dims` of every vector, row-major.
    pub head: Vec<i8>,
    /// Remaining `dims - head_dims`, row-major.
    pub tail: Vec<i8>,
}

/// Where a document lives in the cache.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub part: u32,
    pub index: u32,
}

#[derive(Debug)]
pub(crate) struct VectorCache {
    pub dims: usize,
    pub head_dims: usize,
    /// Value of `recall_meta.generation` this cache reflects; `None` = not loaded.
    pub generation: Option<i64>,
    pub scope_ids: HashMap<String, u32>,
    pub parts: Vec<Partition>,
    pub slots: HashMap<i64, Slot>,
}

/// Moves row `last` of a row-major matrix with `width` columns into row `i`, then drops
/// the last row.
fn swap_remove_row(m: &mut Vec<i8>, width: usize, i: usize, last: usize) {
    if i != last && width > 0 {
        let (a, b) = m.split_at_mut(last * width);
        a[i * width..(i + 1) * width].copy_from_slice(&b[..width]);
    }
    m.truncate(last * width);
}

/// Quantises `v` to int8 with one scale. Returns the scale (0 for the zero vector).
pub(crate) fn quantize(v: &[f32], out: &mut Vec<i8>) -> f32 {
    let max = v.iter().fold(0.0f32, |m, x| m.max(x.abs()));
    if max == 0.0 || !max.is_finite() {
        out.extend(std::iter::repeat_n(0i8, v.len()));
        return 0.0;
    }
    let s = max / 127.0;
    out.extend(v.iter().map(|x| (x / s).round().clamp(-127.0, 127.0) as i8));
    s
}

/// Integer dot product of two int8 vectors.
#[inline]
pub(crate) fn dot_i8(a: &[i8], b: &[i8]) -> i32 {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 support was just checked at run time.
            return unsafe { dot_i8_avx2(a, b) };
        }
    }
    dot_i8_generic(a, b)
}

#[inline(always)]
fn dot_i8_generic(a: &[i8], b: &[i8]) -> i32 {
    let mut acc = [0i32; 16];
    let mut ca = a.chunks_exact(16);
    let mut cb = b.chunks_exact(16);
    for (x, y) in (&mut ca).zip(&mut cb) {
        for i in 0..16 {
            acc[i] += i32::from(x[i]) * i32::from(y[i]);
        }
    }
    let tail: i32 = ca
        .remainder()
        .iter()
        .zip(cb.remainder())
        .map(|(&x, &y)| i32::from(x) * i32::from(y))
        .sum();
    acc.iter().sum::<i32>() + tail
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_i8_avx2(a: &[i8], b: &[i8]) -> i32 {
    // Same code; compiled with AVX2 enabled, LLVM vectorises it to vpmovsxbw/vpmaddwd.
    dot_i8_generic(a, b)
}

/// Appends `(approximate cosine from the leading dimensions, rowid)` for every document.
fn scan(q: &[i8], qs: f32, p: &Partition, dims: usize, out: &mut Vec<(f32, i64)>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx2") {
            // SAFETY: AVX2 support was just checked at run time.
            unsafe { scan_avx2(q, qs, p, dims, out) };
            return;
        }
    }
    scan_generic(q, qs, p, dims, out);
}

#[inline(always)]
fn scan_generic(q: &[i8], qs: f32, p: &Partition, dims: usize, out: &mut Vec<(f32, i64)>) {
    out.reserve(p.rowids.len());
    for ((row, &s), &rowid) in p.head.chunks_exact(dims).zip(&p.scales).zip(&p.rowids) {
        out.push((qs * s * dot_i8_generic(q, row) as f32, rowid));
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn scan_avx2(q: &[i8], qs: f32, p: &Partition, dims: usize, out: &mut Vec<(f32, i64)>) {
    // Same code, compiled with AVX2 so that the inlined dot product vectorises.
    scan_generic(q, qs, p, dims, out);
}

impl VectorCache {
    pub fn new(dims: usize) -> Self {
        Self {
            dims,
            head_dims: if dims >= 128 { dims / 2 } else { dims },
            generation: None,
            scope_ids: HashMap::new(),
            parts: Vec::new(),
            slots: HashMap::new(),
        }
    }

    /// Number of cached documents.
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    pub fn clear(&mut self) {
        self.generation = None;
        self.scope_ids.clear();
        self.parts.clear();
        self.slots.clear();
    }

    fn part_for(&mut self, scope: &str) -> u32 {
        if let Some(&p) = self.scope_ids.get(scope) {
            return p;
        }
        let p = self.parts.len() as u32;
        self.parts.push(Partition::default());
        self.scope_ids.insert(scope.to_owned(), p);
        p
    }

    /// Inserts or replaces a document. `embedding` of the wrong length counts as zero.
    pub fn put(&mut self, rowid: i64, scope: &str, meta: Meta, embedding: &[f32]) {
        let mut q = Vec::with_capacity(self.dims);
        let scale = if embedding.len() == self.dims {
            quantize(embedding, &mut q)
        } else {
            0.0
        };
        let bytes: Vec<u8> = q.iter().map(|&x| x as u8).collect();
        self.put_quantized(rowid, scope, meta, scale, &bytes);
    }

    /// Inserts or replaces a document whose vector is already quantised (`q`: `dims` int8
    /// values as bytes, `scale` as [`quantize`] returned it).
    pub fn put_quantized(&mut self, rowid: i64, scope: &str, meta: Meta, scale: f32, q: &[u8]) {
        self.remove(rowid);
        let part = self.part_for(scope);
        let (dims, h) = (self.dims, self.head_dims);
        let p = &mut self.parts[part as usize];
        let index = p.rowids.len() as u32;
        p.rowids.push(rowid);
        p.meta.push(meta);
        let q = q.get(..dims).filter(|q| q.len() == dims);
        let byte = |b: &u8| *b as i8;
        match q {
            Some(q) => {
                p.head.extend(q[..h].iter().map(byte));
                p.tail.extend(q[h..].iter().map(byte));
                p.scales.push(scale);
            }
            None => {
                p.head.extend(std::iter::repeat_n(0i8, h));
                p.tail.extend(std::iter::repeat_n(0i8, dims - h));
                p.scales.push(0.0);
            }
        }
        self.slots.insert(rowid, Slot { part, index });
    }

    /// Scope names by partition index.
    pub fn scopes(&self) -> Vec<&str> {
        let mut v = vec![""; self.parts.len()];
        for (s, &p) in &self.scope_ids {
            if let Some(x) = v.get_mut(p as usize) {
                *x = s;
            }
        }
        v
    }

    /// Calls `f(partition, rowid, meta, scale, [head, tail])` for every cached document.
    pub fn for_each_row(&self, mut f: impl FnMut(u32, i64, &Meta, f32, [&[i8]; 2])) {
        let (h, t) = (self.head_dims, self.dims - self.head_dims);
        for (pi, p) in self.parts.iter().enumerate() {
            for (i, (&rowid, meta)) in p.rowids.iter().zip(&p.meta).enumerate() {
                let head = p.head.get(i * h..(i + 1) * h).unwrap_or_default();
                let tail = p.tail.get(i * t..(i + 1) * t).unwrap_or_default();
                f(pi as u32, rowid, meta, p.scales[i], [head, tail]);
            }
        }
    }

    /// Removes a document (swap-remove inside its partition).
    pub fn remove(&mut self, rowid: i64) -> bool {
        let Some(slot) = self.slots.remove(&rowid) else {
            return false;
        };
        let (h, t) = (self.head_dims, self.dims - self.head_dims);
        let p = &mut self.parts[slot.part as usize];
        let i = slot.index as usize;
        let last = p.rowids.len() - 1;
        p.rowids.swap_remove(i);
        p.meta.swap_remove(i);
        p.scales.swap_remove(i);
        swap_remove_row(&mut p.head, h, i, last);
        swap_remove_row(&mut p.tail, t, i, last);
        if i != last {
            let moved = p.rowids[i];
            if let Some(s) = self.slots.get_mut(&moved) {
                s.index = slot.index;
            }
        }
        true
    }

    pub fn meta_mut(&mut self, rowid: i64) -> Option<&mut Meta> {
        let s = *self.slots.get(&rowid)?;
        self.parts
            .get_mut(s.part as usize)?
            .meta
            .get_mut(s.index as usize)
    }

    pub fn meta(&self, rowid: i64) -> Option<&Meta> {
        let s = self.slots.get(&rowid)?;
        self.parts.get(s.part as usize)?.meta.get(s.index as usize)
    }

    /// Partition indices of the allowed scopes (unknown scopes are skipped).
    pub fn parts_of(&self, scopes: &[&str]) -> Vec<u32> {
        let mut v: Vec<u32> = scopes
            .iter()
            .filter_map(|s| self.scope_ids.get(*s).copied())
            .collect();
        v.sort_unstable();
        v.dedup();
        v
    }

    /// Number of documents in the given partitions.
    pub fn count_in(&self, parts: &[u32]) -> usize {
        parts
            .iter()
            .filter_map(|&p| self.parts.get(p as usize))
            .map(|p| p.rowids.len())
            .sum()
    }

    /// True when `rowid` is cached in one of `parts`.
    pub fn in_parts(&self, rowid: i64, parts: &[u32]) -> bool {
        self.slots
            .get(&rowid)
            .is_some_and(|s| parts.contains(&s.part))
    }

    /// Approximate cosine between a quantised query and a cached document.
    pub fn cosine(&self, q: &[i8], qs: f32, rowid: i64) -> Option<f32> {
        let s = self.slots.get(&rowid)?;
        let p = self.parts.get(s.part as usize)?;
        let (i, h, t) = (s.index as usize, self.head_dims, self.dims - self.head_dims);
        let head = p.head.get(i * h..(i + 1) * h)?;
        let tail = p.tail.get(i * t..(i + 1) * t)?;
        let (qh, qt) = q.split_at(h.min(q.len()));
        Some(qs * p.scales.get(i)? * (dot_i8(qh, head) + dot_i8(qt, tail)) as f32)
    }

    /// The `n` highest cosines over the given partitions, best first, as (cosine, rowid).
    pub fn top_n(
        &self,
        q: &[i8],
        qs: f32,
        parts: &[u32],
        n: usize,
        exhaustive: bool,
        scratch: &mut Vec<(f32, i64)>,
    ) -> Vec<(f32, i64)> {
        scratch.clear();
        if n == 0 || qs == 0.0 || q.len() != self.dims {
            return Vec::new();
        }
        let qh = &q[..self.head_dims];
        for &pi in parts {
            if let Some(p) = self.parts.get(pi as usize) {
                scan(qh, qs, p, self.head_dims, scratch);
            }
        }
        let cmp = |a: &(f32, i64), b: &(f32, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        let shortlist = if exhaustive {
            usize::MAX
        } else if self.head_dims < self.dims {
            (16 * n).max(1024)
        } else {
            n
        };
        if scratch.len() > shortlist {
            scratch.select_nth_unstable_by(shortlist - 1, cmp);
            scratch.truncate(shortlist);
        }
        if self.head_dims < self.dims {
            for (score, rowid) in scratch.iter_mut() {
                if let Some(c) = self.cosine(q, qs, *rowid) {
                    *score = c;
                }
            }
        }
        if scratch.len() > n {
            scratch.select_nth_unstable_by(n - 1, cmp);
            scratch.truncate(n);
        }
        scratch.sort_unstable_by(cmp);
        scratch.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn meta(id: &str) -> Meta {
        Meta {
            id: id.into(),
            updated_at: 0,
            recall_count: 0,
        }
    }

    #[test]
    fn dot_matches_reference() {
        let a: Vec<i8> = (0..37).map(|i| (i * 7 % 255 - 127) as i8).collect();
        let b: Vec<i8> = (0..37).map(|i| (i * 13 % 255 - 127) as i8).collect();
        let r: i32 = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| i32::from(x) * i32::from(y))
            .sum();
        assert_eq!(dot_i8(&a, &b), r);
        assert_eq!(dot_i8_generic(&a, &b), r);
    }

    #[test]
    fn put_remove_keeps_slots_consistent() {
        let mut c = VectorCache::new(2);
        c.put(1, "a", meta("x"), &[1.0, 0.0]);
        c.put(2, "a", meta("y"), &[0.0, 1.0]);
        c.put(3, "b", meta("z"), &[0.6, 0.8]);
        assert!(c.remove(1));
        assert!(!c.remove(1));
        let mut q = Vec::new();
        let qs = quantize(&[0.0, 1.0], &mut q);
        let parts = c.parts_of(&["a"]);
        let mut scratch = Vec::new();
        let top = c.top_n(&q, qs, &parts, 5, false, &mut scratch);
        assert_eq!(top.len(), 1);
        assert_eq!(top[0].1, 2);
        assert!((top[0].0 - 1.0).abs() < 1e-2);
        assert_eq!(c.meta(2).map(|m| &*m.id), Some("y"));
        let all = c.top_n(
            &q,
            qs,
            &c.parts_of(&["a", "b", "nope"]),
            5,
            false,
            &mut scratch,
        );
        assert_eq!(all.iter().map(|x| x.1).collect::<Vec<_>>(), [2, 3]);
        // Re-putting moves a document between scopes.
        c.put(2, "b", meta("y"), &[0.0, 1.0]);
        assert!(
            c.top_n(&q, qs, &c.parts_of(&["a"]), 5, false, &mut scratch)
                .is_empty()
        );
    }
}
