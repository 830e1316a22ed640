//! The lookup index of a WordPiece vocabulary: each token's span in the `vocab.txt` text and
//! an open-addressing table of token ids by hash. The build script computes it for the
//! embedded vocabulary (so a process starts without hashing 30,522 tokens); the tokenizer
//! computes it at run time for any other vocabulary. Both include this file, so the two
//! can never disagree about the hash.
//!
//! Layout, little endian: `n: u32`, `slots: u32` (a power of two), `n` pairs of
//! `(start, end): u32` byte offsets into the text, then `slots` token ids (`EMPTY` = free).

use std::hash::Hasher;

/// Marks a free slot of the table.
pub const EMPTY: u32 = u32::MAX;

/// Bytes before the spans.
pub const HEADER: usize = 8;

/// A small, fast, deterministic string hasher (FxHash-style) for the vocabulary table.
#[derive(Default, Clone, Copy)]
pub struct FxHasher(u64);

impl Hasher for FxHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x517c_c1b7_2722_0a95;
        let mut h = self.0;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            h = (h.rotate_left(5) ^ u64::from_le_bytes(w)).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            h = (h.rotate_left(5) ^ u64::from(b)).wrapping_mul(K);
        }
        self.0 = h;
    }

    #[inline]
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Slot of `t` in a table of `1 << bits` entries (the product's high bits: they mix all
/// of the input).
#[inline]
pub fn token_slot(t: &str, bits: u32) -> usize {
    let mut h = FxHasher::default();
    h.write(t.as_bytes());
    (h.finish() >> (64 - bits)) as usize
}

/// The index of `text` (one token per line, id = line number); `None` when it has too
/// many lines or is too large for 32-bit offsets. A repeated token keeps its first id.
pub fn build(text: &str) -> Option<Vec<u8>> {
    let mut spans: Vec<(u32, u32)> = Vec::new();
    let mut start = 0usize;
    for line in text.split_inclusive('\n') {
        let body = line.strip_suffix('\n').unwrap_or(line);
        let body = body.strip_suffix('\r').unwrap_or(body);
        let a = u32::try_from(start).ok()?;
        let b = u32::try_from(start + body.len()).ok()?;
        spans.push((a, b));
        start += line.len();
    }
    let n = u32::try_from(spans.len()).ok().filter(|&n| n < EMPTY)?;
    let slots = (spans.len() * 2).next_power_of_two().max(16);
    let bits = slots.trailing_zeros();
    let mut table = vec![EMPTY; slots];
    let token = |id: u32| {
        let (a, b) = spans[id as usize];
        &text[a as usize..b as usize]
    };
    for id in 0..n {
        let t = token(id);
        let mut slot = token_slot(t, bits);
        loop {
            match table[slot] {
                EMPTY => {
                    table[slot] = id;
                    break;
                }
                other if token(other) == t => break,
                _ => slot = (slot + 1) & (slots - 1),
            }
        }
    }
    let mut out = Vec::with_capacity(HEADER + 8 * spans.len() + 4 * slots);
    out.extend_from_slice(&n.to_le_bytes());
    out.extend_from_slice(&u32::try_from(slots).ok()?.to_le_bytes());
    for (a, b) in &spans {
        out.extend_from_slice(&a.to_le_bytes());
        out.extend_from_slice(&b.to_le_bytes());
    }
    for id in table {
        out.extend_from_slice(&id.to_le_bytes());
    }
    Some(out)
}
