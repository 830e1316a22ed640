//! In-memory int8 copy of the stored embeddings, partitioned by scope, for brute-force
//! cosine search.
//!
//! Each stored (L2-normalised, f32) embedding is quantised to int8 with its own scale
//! (`max |x| / 127`); a query is quantised the same way, so a cosine is
//! `s_q * s_d * sum(q_i * d_i)` with an integer inner sum (error about 1e-3).
//!
//! Up to [`EXACT_LIMIT`] documents in scope, every vector is scored (exact, and about as
//! fast as anything cleverer at that size). Above it, documents are ranked first by sign
//! signatures: the signs of a vector under fixed random rotations, four bits a dimension
//! (128 bytes at 256 dimensions). The Hamming distance between two signatures estimates the
//! angle between the vectors, and a popcount over contiguous memory costs a fraction of an
//! int8 dot product, so all are ranked by signature and only the closest `max(10n, 1024)`
//! are scored with their int8 vectors. Measured over 100k synthetic documents all in scope,
//! that finds the exact top 5 about 98% of the time (97.7% for the previous first pass,
//! half the int8 dimensions, which took three times as long). Signatures are computed in
//! memory (about 2 µs a document), by the second search of a cache that needs them, or read
//! from a snapshot that carries them (the background path writes them above the limit), so
//! that a process that searches once (a hook, `cairn recall`) ranks by them too; without
//! them such a process scores every vector, which costs less than computing them.

use std::collections::HashMap;

/// A document's data as it is put into the cache.
#[derive(Debug, Clone)]
pub(crate) struct Meta {
    pub id: Box<str>,
    pub updated_at: i64,
    pub recall_count: i64,
}

/// A cached document's data, borrowed from the cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MetaRef<'a> {
    pub id: &'a str,
    pub updated_at: i64,
    pub recall_count: i64,
}

/// The documents of one scope, column by column (row `i` of every column is one document).
/// Columns read from a snapshot file stay in the mapped file until the partition first
/// changes, so a new process touches only the rows it ranks.
#[derive(Debug, Default)]
pub(crate) struct Partition {
    pub rowids: Column<i64>,
    pub updated: Column<i64>,
    pub scales: Column<f32>,
    pub ids: Ids,
    /// Every int8 vector, `dims` values a row.
    pub vectors: Rows,
    /// Every sign signature, `sign_words(dims)` words a row, when the cache is signed
    /// (empty otherwise).
    pub signs: Column<u64>,
}

/// The hasher of the rowid map: rowids are SQLite's own integers, not attacker-chosen
/// keys, so a fast non-cryptographic hash is enough (the map is read for every candidate of
/// every search).
pub(crate) type RowidHasher = foldhash::fast::FixedState;

/// Values of one column, one after another: owned, or borrowed from a memory-mapped
/// snapshot file until they first change (a new process then reads the page cache's copy
/// without reading or copying it).
#[derive(Debug)]
pub(crate) struct Column<T> {
    owned: Vec<T>,
    mapped: Option<MappedBytes>,
}

impl<T> Default for Column<T> {
    fn default() -> Self {
        Column {
            owned: Vec::new(),
            mapped: None,
        }
    }
}

#[derive(Debug)]
pub(crate) struct MappedBytes {
    map: std::sync::Arc<memmap2::Mmap>,
    start: usize,
    len: usize,
}

/// A partition's int8 rows.
pub(crate) type Rows = Column<i8>;

impl<T: bytemuck::Pod> Column<T> {
    /// Values borrowed from the bytes `map[start..start + len]`; `None` when that is out
    /// of bounds, not a whole number of values, or not aligned for them.
    pub fn mapped(map: std::sync::Arc<memmap2::Mmap>, start: usize, len: usize) -> Option<Self> {
        let end = start.checked_add(len)?;
        bytemuck::try_cast_slice::<u8, T>(map.get(start..end)?).ok()?;
        Some(Column {
            owned: Vec::new(),
            mapped: Some(MappedBytes { map, start, len }),
        })
    }

    pub fn as_slice(&self) -> &[T] {
        match &self.mapped {
            Some(m) => m
                .map
                .get(m.start..m.start + m.len)
                .and_then(|b| bytemuck::try_cast_slice(b).ok())
                .unwrap_or(&[]),
            None => &self.owned,
        }
    }

    /// The values to change, copied out of the mapped file first if they are borrowed.
    pub fn to_mut(&mut self) -> &mut Vec<T> {
        if self.mapped.is_some() {
            self.owned = self.as_slice().to_vec();
            self.mapped = None;
        }
        &mut self.owned
    }

    pub fn get(&self, range: std::ops::Range<usize>) -> Option<&[T]> {
        self.as_slice().get(range)
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl<T> From<Vec<T>> for Column<T> {
    fn from(owned: Vec<T>) -> Column<T> {
        Column {
            owned,
            mapped: None,
        }
    }
}

/// A partition's document ids: one string each, or packed (offsets into one text, as a
/// snapshot stores them) until they first change.
#[derive(Debug, Default)]
pub(crate) struct Ids {
    owned: Vec<Box<str>>,
    packed: Option<PackedIds>,
}

#[derive(Debug)]
struct PackedIds {
    /// `n + 1` ascending byte offsets into `text`.
    offsets: Column<u32>,
    text: Column<u8>,
}

impl Ids {
    /// Ids packed as `offsets` (`n + 1` of them) into `text`.
    pub fn packed(offsets: Column<u32>, text: Column<u8>) -> Self {
        Ids {
            owned: Vec::new(),
            packed: Some(PackedIds { offsets, text }),
        }
    }

    pub fn get(&self, i: usize) -> Option<&str> {
        match &self.packed {
            None => self.owned.get(i).map(|s| &**s),
            Some(p) => {
                let o = p.offsets.as_slice();
                let (a, b) = (*o.get(i)? as usize, *o.get(i + 1)? as usize);
                std::str::from_utf8(p.text.as_slice().get(a..b)?).ok()
            }
        }
    }

    pub fn len(&self) -> usize {
        match &self.packed {
            None => self.owned.len(),
            Some(p) => p.offsets.len().saturating_sub(1),
        }
    }

    /// The ids to change, unpacked first if they are packed (an unreadable one becomes
    /// empty: it was never found by id either).
    pub fn to_mut(&mut self) -> &mut Vec<Box<str>> {
        if self.packed.is_some() {
            let owned = (0..self.len())
                .map(|i| self.get(i).unwrap_or("").into())
                .collect();
            self.owned = owned;
            self.packed = None;
        }
        &mut self.owned
    }
}

/// One entry of the rowid table a snapshot carries, sorted by rowid: where a document
/// lives, found by binary search without building the rowid map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(C)]
pub(crate) struct SlotEntry {
    pub rowid: i64,
    pub part: u32,
    pub index: u32,
}

// SAFETY: `repr(C)`, an `i64` then two `u32` (16 bytes, alignment 8, no padding); every bit
// pattern is a valid value.
unsafe impl bytemuck::Zeroable for SlotEntry {}
// SAFETY: as above; `Copy` and `'static`.
unsafe impl bytemuck::Pod for SlotEntry {}

/// Where a document lives in the cache.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Slot {
    pub part: u32,
    pub index: u32,
}

#[derive(Debug)]
pub(crate) struct VectorCache {
    pub dims: usize,
    /// Value of `recall_meta.generation` this cache reflects; `None` = not loaded.
    pub generation: Option<i64>,
    pub scope_ids: HashMap<String, u32>,
    pub parts: Vec<Partition>,
    /// Where each document lives, once the cache changed or was built document by
    /// document; empty while `slot_table` says it.
    slots: HashMap<i64, Slot, RowidHasher>,
    /// A snapshot's rowid table, sorted, until the cache first changes (a new process
    /// looks up the few documents it ranks instead of hashing every one).
    slot_table: Option<Column<SlotEntry>>,
    /// Recall counts of the documents recalled at least once.
    recall_counts: HashMap<i64, i64, RowidHasher>,
    pub rot: Rotations,
    /// Whether every row has its signature.
    pub signed: bool,
    /// Whether this cache was searched since it was (re)loaded.
    pub searched: bool,
}

/// Documents in scope up to which every vector is scored (4 MB of int8 rows at 256
/// dimensions).
pub(crate) const EXACT_LIMIT: usize = 16_384;

/// Documents scored with their vectors after the signature pass, for the best `n`.
fn shortlist(n: usize) -> usize {
    (10 * n).max(1024)
}

/// Moves row `last` of a row-major matrix with `width` columns into row `i`, then drops
/// the last row.
fn swap_remove_row<T: Copy>(m: &mut Vec<T>, width: usize, i: usize, last: usize) {
    if i != last && width > 0 {
        let (a, b) = m.split_at_mut(last * width);
        a[i * width..(i + 1) * width].copy_from_slice(&b[..width]);
    }
    m.truncate(last * width);
}

/// Signature bits per dimension (measured over 100k synthetic documents, all in scope:
/// ranking all of them by 1, 2 and 4 bits a dimension found the exact top 5 in a shortlist
/// of 3,200 84%, 96.5% and 99.3% of the time; the scan reads 32 bytes a bit per dimension
/// and document, so more bits cost time).
const SIGN_BITS_PER_DIM: usize = 4;

/// 64-bit words of a sign signature of `dims` dimensions.
pub(crate) fn sign_words(dims: usize) -> usize {
    SIGN_BITS_PER_DIM * dims.div_ceil(64)
}

/// Fixed random rotations (random sign flips, then a Walsh-Hadamard transform) whose signs
/// make a vector's signature: the Hamming distance between two signatures estimates the
/// angle between the vectors (the signs of the PCA dimensions themselves do so badly: their
/// variances differ by orders of magnitude). Integer arithmetic, the same in every process.
#[derive(Debug)]
pub(crate) struct Rotations {
    n: usize,
    words: usize,
    /// Per rotation, the sign (1 or -1) each dimension is multiplied by.
    flips: Vec<Vec<i32>>,
}

impl Rotations {
    pub fn new(dims: usize) -> Self {
        let n = dims.next_power_of_two().max(64);
        let words = sign_words(dims);
        // Fixed pseudo-random signs (xorshift64*).
        let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
        let flips = (0..(words * 64).div_ceil(n))
            .map(|_| {
                (0..dims)
                    .map(|_| {
                        state ^= state >> 12;
                        state ^= state << 25;
                        state ^= state >> 27;
                        if state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 63 == 1 {
                            -1
                        } else {
                            1
                        }
                    })
                    .collect()
            })
            .collect();
        Self { n, words, flips }
    }

    /// Appends the signature of `v` (int8 values, `dims` of them), `sign_words` words.
    pub fn signature(&self, v: &[i8], out: &mut Vec<u64>) {
        let start = out.len();
        let mut x = vec![0i32; self.n];
        for flips in &self.flips {
            for ((e, &src), &flip) in x.iter_mut().zip(v).zip(flips) {
                *e = i32::from(src) * flip;
            }
            x[v.len().min(self.n)..].iter_mut().for_each(|e| *e = 0);
            fwht(&mut x);
            for chunk in x.chunks_exact(64) {
                if out.len() - start == self.words {
                    return;
                }
                let word = chunk
                    .iter()
                    .enumerate()
                    .fold(0u64, |w, (j, &e)| w | (u64::from(e > 0) << j));
                out.push(word);
            }
        }
        out.resize(start + self.words, 0);
    }
}

/// In-place Walsh-Hadamard transform (unnormalised); `x.len()` is a power of two, at
/// least 8.
fn fwht(x: &mut [i32]) {
    // The first three stages inside blocks of eight, unrolled; the rest vectorise.
    for b in x.chunks_exact_mut(8) {
        let (a0, a1) = (b[0] + b[1], b[0] - b[1]);
        let (a2, a3) = (b[2] + b[3], b[2] - b[3]);
        let (a4, a5) = (b[4] + b[5], b[4] - b[5]);
        let (a6, a7) = (b[6] + b[7], b[6] - b[7]);
        let (c0, c2, c1, c3) = (a0 + a2, a0 - a2, a1 + a3, a1 - a3);
        let (c4, c6, c5, c7) = (a4 + a6, a4 - a6, a5 + a7, a5 - a7);
        b.copy_from_slice(&[
            c0 + c4,
            c1 + c5,
            c2 + c6,
            c3 + c7,
            c0 - c4,
            c1 - c5,
            c2 - c6,
            c3 - c7,
        ]);
    }
    let mut h = 8;
    while h < x.len() {
        for block in x.chunks_exact_mut(2 * h) {
            let (a, b) = block.split_at_mut(h);
            for (u, v) in a.iter_mut().zip(b.iter_mut()) {
                let (p, q) = (*u, *v);
                *u = p + q;
                *v = p - q;
            }
        }
        h *= 2;
    }
}

/// Hamming distances between `q` and every row of `signs` (rows of `q.len()` words).
fn hamming(q: &[u64], signs: &[u64], out: &mut Vec<u16>) {
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512vpopcntdq")
        {
            // SAFETY: AVX-512F and VPOPCNTDQ support was just checked at run time.
            unsafe { hamming_avx512(q, signs, out) };
            return;
        }
        if std::arch::is_x86_feature_detected!("popcnt") {
            // SAFETY: POPCNT support was just checked at run time.
            unsafe { hamming_popcnt(q, signs, out) };
            return;
        }
    }
    hamming_generic(q, signs, out);
}

#[inline(always)]
fn hamming_generic(q: &[u64], signs: &[u64], out: &mut Vec<u16>) {
    if q.is_empty() {
        return;
    }
    out.extend(signs.chunks_exact(q.len()).map(|row| {
        row.iter()
            .zip(q)
            .map(|(a, b)| (a ^ b).count_ones() as u16)
            .sum::<u16>()
    }));
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "popcnt")]
fn hamming_popcnt(q: &[u64], signs: &[u64], out: &mut Vec<u16>) {
    // Same code, compiled with the POPCNT instruction.
    hamming_generic(q, signs, out);
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512vpopcntdq,popcnt")]
fn hamming_avx512(q: &[u64], signs: &[u64], out: &mut Vec<u16>) {
    // Same code; LLVM vectorises the row's popcounts to VPOPCNTQ on 512-bit registers.
    hamming_generic(q, signs, out);
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

impl VectorCache {
    pub fn new(dims: usize) -> Self {
        Self {
            dims,
            generation: None,
            scope_ids: HashMap::new(),
            parts: Vec::new(),
            slots: HashMap::default(),
            slot_table: None,
            recall_counts: HashMap::default(),
            rot: Rotations::new(dims),
            signed: false,
            searched: false,
        }
    }

    /// Number of cached documents.
    pub fn len(&self) -> usize {
        match &self.slot_table {
            Some(t) => t.len(),
            None => self.slots.len(),
        }
    }

    pub fn clear(&mut self) {
        self.generation = None;
        self.scope_ids.clear();
        self.parts.clear();
        self.slots.clear();
        self.slot_table = None;
        self.recall_counts.clear();
        self.signed = false;
        self.searched = false;
    }

    /// Where `rowid` lives.
    pub fn slot(&self, rowid: i64) -> Option<Slot> {
        match &self.slot_table {
            Some(t) => {
                let t = t.as_slice();
                let i = t.binary_search_by(|e| e.rowid.cmp(&rowid)).ok()?;
                let e = t.get(i)?;
                // An entry is trusted only where its partition says the same (a damaged
                // table misleads nothing: its entries are simply not found).
                let p = self.parts.get(e.part as usize)?;
                (p.rowids.as_slice().get(e.index as usize) == Some(&rowid)).then_some(Slot {
                    part: e.part,
                    index: e.index,
                })
            }
            None => self.slots.get(&rowid).copied(),
        }
    }

    /// Moves a snapshot's rowid table into the map, before the cache changes.
    /// (Built from the partitions themselves, which the table only indexes.)
    fn own_slots(&mut self) {
        if self.slot_table.take().is_some() {
            self.slots.clear();
            for (part, p) in self.parts.iter().enumerate() {
                for (index, &rowid) in p.rowids.as_slice().iter().enumerate() {
                    let slot = Slot {
                        part: part as u32,
                        index: index as u32,
                    };
                    self.slots.insert(rowid, slot);
                }
            }
        }
    }

    /// Computes every row's signature.
    fn sign_all(&mut self) {
        let (d, w) = (self.dims, sign_words(self.dims));
        for p in &mut self.parts {
            let mut signs = Vec::with_capacity(p.rowids.len() * w);
            for row in p.vectors.as_slice().chunks_exact(d.max(1)) {
                self.rot.signature(row, &mut signs);
            }
            p.signs = Column::from(signs);
        }
        self.signed = true;
    }

    pub(crate) fn part_for(&mut self, scope: &str) -> u32 {
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
    /// values as bytes, `scale` as [`quantize`] returned it); its sign signature is
    /// computed when the cache keeps them.
    pub fn put_quantized(&mut self, rowid: i64, scope: &str, meta: Meta, scale: f32, q: &[u8]) {
        self.remove(rowid);
        self.own_slots();
        let part = self.part_for(scope);
        let (dims, words) = (self.dims, sign_words(self.dims));
        let vector: Option<Vec<i8>> = q
            .get(..dims)
            .filter(|q| q.len() == dims)
            .map(|q| q.iter().map(|b| *b as i8).collect());
        let mut signs = Vec::new();
        if self.signed {
            match &vector {
                Some(v) => self.rot.signature(v, &mut signs),
                None => signs.resize(words, 0),
            }
        }
        let p = &mut self.parts[part as usize];
        let index = p.rowids.len() as u32;
        p.rowids.to_mut().push(rowid);
        p.updated.to_mut().push(meta.updated_at);
        p.ids.to_mut().push(meta.id);
        if self.signed {
            p.signs.to_mut().extend_from_slice(&signs);
        }
        match vector {
            Some(v) => {
                p.vectors.to_mut().extend_from_slice(&v);
                p.scales.to_mut().push(scale);
            }
            None => {
                p.vectors.to_mut().extend(std::iter::repeat_n(0i8, dims));
                p.scales.to_mut().push(0.0);
            }
        }
        if meta.recall_count != 0 {
            self.recall_counts.insert(rowid, meta.recall_count);
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

    /// Adds a whole partition for `scope` (a snapshot being read into an empty cache);
    /// [`VectorCache::set_slot_table`] then says where its documents are. Returns false
    /// when the scope already has documents or the columns' lengths disagree (the caller
    /// then clears the cache).
    pub fn push_partition(&mut self, scope: &str, partition: Partition) -> bool {
        let n = partition.rowids.len();
        if partition.updated.len() != n
            || partition.scales.len() != n
            || partition.ids.len() != n
            || partition.vectors.len() != n * self.dims
        {
            return false;
        }
        let part = self.part_for(scope);
        let Some(p) = self.parts.get_mut(part as usize) else {
            return false;
        };
        if !p.rowids.is_empty() {
            return false;
        }
        let mut partition = partition;
        let words = sign_words(self.dims);
        if !partition.signs.is_empty() && partition.signs.len() != n * words {
            return false;
        }
        if self.signed && partition.signs.is_empty() {
            let mut signs = Vec::with_capacity(n * words);
            for row in partition.vectors.as_slice().chunks_exact(self.dims.max(1)) {
                self.rot.signature(row, &mut signs);
            }
            partition.signs = Column::from(signs);
        }
        *p = partition;
        true
    }

    /// Marks a cache read from a snapshot that carries every row's signature as signed, so
    /// that its first search ranks by them; false (nothing changed) when a partition has
    /// none.
    pub fn adopt_signatures(&mut self) -> bool {
        let words = sign_words(self.dims);
        let all = self
            .parts
            .iter()
            .all(|p| p.signs.len() == p.rowids.len() * words);
        if all {
            self.signed = true;
        }
        all
    }

    /// Every row's signature of partition `p`, computed when the cache keeps none.
    pub fn signatures_of<'a>(&self, p: &'a Partition) -> std::borrow::Cow<'a, [u64]> {
        if self.signed {
            return std::borrow::Cow::Borrowed(p.signs.as_slice());
        }
        let mut signs = Vec::with_capacity(p.rowids.len() * sign_words(self.dims));
        for row in p.vectors.as_slice().chunks_exact(self.dims.max(1)) {
            self.rot.signature(row, &mut signs);
        }
        std::borrow::Cow::Owned(signs)
    }

    /// The sorted rowid table of the partitions just pushed. Returns false when its length
    /// is not theirs. Entries are checked when looked up (see [`VectorCache::slot`]), not
    /// here: a new process looks up a hundred-odd of them, and reading all would cost it
    /// more than its search.
    pub fn set_slot_table(&mut self, table: Column<SlotEntry>) -> bool {
        let total: usize = self.parts.iter().map(|p| p.rowids.len()).sum();
        let sound = table.len() == total;
        if sound {
            self.slots.clear();
            self.slot_table = Some(table);
        }
        sound
    }

    /// Removes a document (swap-remove inside its partition).
    pub fn remove(&mut self, rowid: i64) -> bool {
        self.own_slots();
        let Some(slot) = self.slots.remove(&rowid) else {
            return false;
        };
        self.recall_counts.remove(&rowid);
        let (d, w) = (self.dims, sign_words(self.dims));
        // (Checked, not assumed: a damaged snapshot may have put a rowid in two places.)
        let Some(p) = self.parts.get_mut(slot.part as usize) else {
            return false;
        };
        let i = slot.index as usize;
        if i >= p.rowids.len() {
            return false;
        }
        let last = p.rowids.len() - 1;
        p.rowids.to_mut().swap_remove(i);
        p.updated.to_mut().swap_remove(i);
        p.ids.to_mut().swap_remove(i);
        p.scales.to_mut().swap_remove(i);
        swap_remove_row(p.vectors.to_mut(), d, i, last);
        if self.signed {
            swap_remove_row(p.signs.to_mut(), w, i, last);
        }
        if i != last {
            let moved = p.rowids.as_slice()[i];
            if let Some(s) = self.slots.get_mut(&moved)
                && s.part == slot.part
                && s.index as usize == last
            {
                s.index = slot.index;
            }
        }
        true
    }

    /// Sets a cached document's recall count (nothing for an unknown rowid).
    pub fn set_recall_count(&mut self, rowid: i64, n: i64) {
        if self.slot(rowid).is_none() {
            return;
        }
        if n == 0 {
            self.recall_counts.remove(&rowid);
        } else {
            self.recall_counts.insert(rowid, n);
        }
    }

    pub fn meta(&self, rowid: i64) -> Option<MetaRef<'_>> {
        let s = self.slot(rowid)?;
        let p = self.parts.get(s.part as usize)?;
        let i = s.index as usize;
        Some(MetaRef {
            id: p.ids.get(i)?,
            updated_at: p.updated.as_slice().get(i).copied()?,
            recall_count: self.recall_counts.get(&rowid).copied().unwrap_or(0),
        })
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
        self.slot(rowid).is_some_and(|s| parts.contains(&s.part))
    }

    /// Approximate cosine between a quantised query and a cached document.
    pub fn cosine(&self, q: &[i8], qs: f32, rowid: i64) -> Option<f32> {
        let s = self.slot(rowid)?;
        let p = self.parts.get(s.part as usize)?;
        Some(self.row_cosine(q, qs, p, s.index as usize))
    }

    /// Approximate cosine of row `i` of partition `p`.
    fn row_cosine(&self, q: &[i8], qs: f32, p: &Partition, i: usize) -> f32 {
        let d = self.dims;
        let v = p.vectors.get(i * d..(i + 1) * d).unwrap_or_default();
        qs * p.scales.as_slice().get(i).copied().unwrap_or(0.0) * dot_i8(q, v) as f32
    }

    /// The `n` highest cosines over the given partitions, best first, as (cosine, rowid).
    ///
    /// With more than [`EXACT_LIMIT`] documents in scope (and more than the shortlist),
    /// from the cache's second search on, all are ranked by the Hamming distance of their
    /// sign signatures and the closest `max(10n, 1024)` (every one at the cut-off distance
    /// included) are scored with their int8 vectors. `exhaustive` scores every document's
    /// vector.
    pub fn top_n(
        &mut self,
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
        let total = self.count_in(parts);
        let shortlist = shortlist(n);
        let mut exact = exhaustive || total <= shortlist.max(EXACT_LIMIT);
        if !exact && !self.signed {
            if self.searched {
                self.sign_all();
            } else {
                // Maybe the only search of this process: not worth the signatures.
                exact = true;
            }
        }
        self.searched = true;
        let parts: Vec<&Partition> = parts
            .iter()
            .filter_map(|&pi| self.parts.get(pi as usize))
            .collect();
        if exact {
            for p in &parts {
                for (i, &rowid) in p.rowids.as_slice().iter().enumerate() {
                    scratch.push((self.row_cosine(q, qs, p, i), rowid));
                }
            }
        } else {
            let words = sign_words(self.dims);
            let mut qsig = Vec::with_capacity(words);
            self.rot.signature(q, &mut qsig);
            let mut dists: Vec<u16> = Vec::with_capacity(total);
            for p in &parts {
                hamming(&qsig, p.signs.as_slice(), &mut dists);
            }
            let cut = cut_off(&dists, shortlist, words * 64);
            let mut k = 0usize;
            for p in &parts {
                for (i, &rowid) in p.rowids.as_slice().iter().enumerate() {
                    if dists.get(k).is_some_and(|&d| d <= cut) {
                        scratch.push((self.row_cosine(q, qs, p, i), rowid));
                    }
                    k += 1;
                }
            }
        }
        let cmp = |a: &(f32, i64), b: &(f32, i64)| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1));
        if scratch.len() > n {
            scratch.select_nth_unstable_by(n - 1, cmp);
            scratch.truncate(n);
        }
        scratch.sort_unstable_by(cmp);
        scratch.clone()
    }
}

/// The smallest distance (of at most `max`) at which `keep` of `dists` are at or below it;
/// `u16::MAX` when there are not more than `keep`.
fn cut_off(dists: &[u16], keep: usize, max: usize) -> u16 {
    if dists.len() <= keep {
        return u16::MAX;
    }
    let mut histogram = vec![0usize; max + 1];
    for &d in dists {
        if let Some(c) = histogram.get_mut(usize::from(d)) {
            *c += 1;
        }
    }
    let mut acc = 0usize;
    for (d, &c) in histogram.iter().enumerate() {
        acc += c;
        if acc >= keep {
            return u16::try_from(d).unwrap_or(u16::MAX);
        }
    }
    u16::MAX
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
    fn hamming_kernels_agree() {
        let mut rng = crate::resident_tests::Rng(0x1234_5678_9abc_def1);
        let words = sign_words(256);
        let q: Vec<u64> = (0..words).map(|_| rng.next()).collect();
        let signs: Vec<u64> = (0..words * 300).map(|_| rng.next()).collect();
        let mut fast = Vec::new();
        hamming(&q, &signs, &mut fast);
        let mut reference = Vec::new();
        hamming_generic(&q, &signs, &mut reference);
        assert_eq!(fast.len(), 300);
        assert_eq!(fast, reference);
        let by_hand: u16 = q
            .iter()
            .zip(&signs)
            .map(|(a, b)| (a ^ b).count_ones() as u16)
            .sum();
        assert_eq!(fast[0], by_hand);
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
        assert_eq!(c.meta(2).map(|m| m.id), Some("y"));
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

    /// Unit vectors around 40 random centres, with PCA-like falling variances.
    fn clustered(n: usize, dims: usize, seed: u64) -> Vec<Vec<f32>> {
        let mut state = seed;
        let mut unit = move || {
            state ^= state >> 12;
            state ^= state << 25;
            state ^= state >> 27;
            (state.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f32 / (1u64 << 53) as f32 - 0.5
        };
        let scale = |d: usize| 1.0 / (1.0 + d as f32 / 8.0);
        let centres: Vec<Vec<f32>> = (0..40)
            .map(|_| (0..dims).map(|d| unit() * scale(d)).collect())
            .collect();
        (0..n)
            .map(|i| {
                let c = &centres[i % centres.len()];
                let mut v: Vec<f32> = (0..dims).map(|d| c[d] + 0.7 * unit() * scale(d)).collect();
                let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
                v.iter_mut().for_each(|x| *x /= norm);
                v
            })
            .collect()
    }

    #[test]
    fn signature_shortlist_keeps_the_exact_top_results() {
        let dims = 256;
        let mut c = VectorCache::new(dims);
        for (i, v) in clustered(20_000, dims, 7).iter().enumerate() {
            c.put(i as i64, "s", meta("m"), v);
        }
        let parts = c.parts_of(&["s"]);
        let mut scratch = Vec::new();
        let (mut agree, mut total) = (0usize, 0usize);
        for q in clustered(60, dims, 99) {
            let mut qv = Vec::new();
            let qs = quantize(&q, &mut qv);
            let fast = c.top_n(&qv, qs, &parts, 5, false, &mut scratch);
            let exact = c.top_n(&qv, qs, &parts, 5, true, &mut scratch);
            assert_eq!(fast.len(), 5);
            total += exact.len();
            agree += exact
                .iter()
                .filter(|e| fast.iter().any(|f| f.1 == e.1))
                .count();
            // What the shortlist returns is scored exactly.
            for (score, rowid) in &fast {
                assert_eq!(c.cosine(&qv, qs, *rowid), Some(*score));
            }
        }
        assert!(agree * 100 >= total * 97, "{agree} of {total}");
    }

    #[test]
    fn fwht_is_the_walsh_hadamard_transform() {
        for n in [8usize, 16, 64] {
            let x: Vec<i32> = (0..n as i32).map(|i| (i * 37 % 23) - 11).collect();
            let mut fast = x.clone();
            fwht(&mut fast);
            // H[i][j] = (-1)^popcount(i & j).
            let naive: Vec<i32> = (0..n)
                .map(|i| {
                    (0..n)
                        .map(|j| {
                            if (i & j).count_ones() % 2 == 0 {
                                x[j]
                            } else {
                                -x[j]
                            }
                        })
                        .sum()
                })
                .collect();
            assert_eq!(fast, naive, "n = {n}");
        }
    }

    #[test]
    fn signatures_are_the_same_in_every_process_and_follow_removals() {
        let v = clustered(3, 256, 1);
        let mut a = Vec::new();
        let mut b = Vec::new();
        let words = sign_words(256);
        let x: Vec<i8> = v[0].iter().map(|x| (x * 100.0) as i8).collect();
        Rotations::new(256).signature(&x, &mut a);
        Rotations::new(256).signature(&x, &mut b);
        assert_eq!(a, b);
        assert_eq!(a.len(), words);
        let mut c = VectorCache::new(256);
        // A small cache keeps no signatures; a signed one computes them for every put.
        c.put(9, "s", meta("m"), &v[0]);
        assert!(!c.signed && c.parts[0].signs.is_empty());
        c.clear();
        c.signed = true;
        // (A search signs a cache itself; see `top_n`.)
        for (i, x) in v.iter().enumerate() {
            c.put(i as i64, "s", meta("m"), x);
        }
        c.remove(0);
        // The last row moved into the freed one, with its signature.
        let mut q = Vec::new();
        quantize(&v[2], &mut q);
        let mut expected = Vec::new();
        c.rot.signature(&q, &mut expected);
        let p = &c.parts[0];
        let i = c.slot(2).map_or(usize::MAX, |s| s.index as usize);
        assert_eq!(p.signs.as_slice()[i * words..(i + 1) * words], expected[..]);
        assert_eq!(p.signs.len(), 2 * words);
    }
}
