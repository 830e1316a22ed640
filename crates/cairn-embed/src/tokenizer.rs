//! BERT-uncased tokenizer: basic tokenizer (clean, lowercase, strip accents, split
//! punctuation, isolate CJK ideographs) followed by greedy longest-match WordPiece.
//!
//! It mirrors `transformers.BertTokenizer(do_lower_case=True)` / the `tokenizers`
//! `BertNormalizer` + `BertPreTokenizer` + `WordPiece` pipeline used by
//! all-MiniLM-L6-v2. The Unicode character classes come from the generated
//! [`crate::unicode_tables`].

use std::borrow::Cow;

use crate::unicode_tables::{CONTROL, MARK, PUNCT, SPACE, STRIP};
use crate::vocab_index::{self, EMPTY, token_slot};

/// Words longer than this many characters become `[UNK]` (BERT's `max_input_chars_per_word`).
pub const MAX_CHARS_PER_WORD: usize = 100;

fn in_ranges(table: &[(u32, u32)], cp: u32) -> bool {
    table
        .binary_search_by(|&(lo, hi)| {
            if hi < cp {
                std::cmp::Ordering::Less
            } else if lo > cp {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        })
        .is_ok()
}

/// BERT's `_is_whitespace`: space, tab, LF, CR or general category Zs.
pub fn is_whitespace(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r') || (!c.is_ascii() && in_ranges(SPACE, c as u32))
}

/// BERT's `_is_control`: categories Cc/Cf/Co, except tab, LF and CR.
pub fn is_control(c: char) -> bool {
    if matches!(c, '\t' | '\n' | '\r') {
        return false;
    }
    if c.is_ascii() {
        return c.is_ascii_control();
    }
    in_ranges(CONTROL, c as u32)
}

/// BERT's `_is_punctuation`: every non-alphanumeric printable ASCII symbol, or category P*.
pub fn is_punctuation(c: char) -> bool {
    if c.is_ascii() {
        return c.is_ascii_punctuation();
    }
    in_ranges(PUNCT, c as u32)
}

/// BERT's `_is_chinese_char`: the CJK Unified Ideographs blocks (not kana or hangul).
pub fn is_cjk(c: char) -> bool {
    let cp = c as u32;
    (0x4E00..=0x9FFF).contains(&cp)
        || (0x3400..=0x4DBF).contains(&cp)
        || (0x20000..=0x2A6DF).contains(&cp)
        || (0x2A700..=0x2B73F).contains(&cp)
        || (0x2B740..=0x2B81F).contains(&cp)
        || (0x2B820..=0x2CEAF).contains(&cp)
        || (0xF900..=0xFAFF).contains(&cp)
        || (0x2F800..=0x2FA1F).contains(&cp)
}

/// Pushes `c` (already lowercased) with its accents stripped: NFD decomposition with
/// non-spacing marks (Mn) removed.
fn push_stripped(c: char, out: &mut impl FnMut(char)) {
    if c.is_ascii() {
        out(c);
        return;
    }
    let cp = c as u32;
    // Hangul syllables: algorithmic canonical decomposition into conjoining jamo.
    if (0xAC00..=0xD7A3).contains(&cp) {
        let s = cp - 0xAC00;
        let (l, v, t) = (0x1100 + s / 588, 0x1161 + (s % 588) / 28, 0x11A7 + s % 28);
        for j in [l, v] {
            if let Some(ch) = char::from_u32(j) {
                out(ch);
            }
        }
        if t != 0x11A7
            && let Some(ch) = char::from_u32(t)
        {
            out(ch);
        }
        return;
    }
    if let Ok(i) = STRIP.binary_search_by_key(&cp, |&(k, _)| k) {
        STRIP[i].1.chars().for_each(out);
        return;
    }
    if in_ranges(MARK, cp) {
        return;
    }
    out(c);
}

/// Runs the BERT basic tokenizer over `text`, calling `emit` with each word
/// (lowercased, accent-stripped, punctuation and CJK ideographs split off).
pub fn basic_tokenize(text: &str, mut emit: impl FnMut(&str)) {
    let mut word = String::with_capacity(32);
    let mut buf = [0u8; 4];
    for c in text.chars() {
        if c == '\0' || c == '\u{FFFD}' || is_control(c) {
            continue;
        }
        if is_whitespace(c) {
            if !word.is_empty() {
                emit(&word);
                word.clear();
            }
            continue;
        }
        if is_cjk(c) {
            if !word.is_empty() {
                emit(&word);
                word.clear();
            }
            emit(c.encode_utf8(&mut buf));
            continue;
        }
        let mut push = |ch: char| {
            if is_punctuation(ch) {
                if !word.is_empty() {
                    emit(&word);
                    word.clear();
                }
                emit(ch.encode_utf8(&mut [0u8; 4]));
            } else {
                word.push(ch);
            }
        };
        if c.is_ascii() {
            push(c.to_ascii_lowercase());
        } else {
            for lc in c.to_lowercase() {
                push_stripped(lc, &mut push);
            }
        }
    }
    if !word.is_empty() {
        emit(&word);
    }
}

/// A WordPiece vocabulary (`vocab.txt`: one token per line, id = line number).
///
/// Kept compact: the file's text and its lookup index ([`crate::vocab_index`]: each token's
/// span, an open-addressing table of ids), both borrowed for the embedded vocabulary, whose
/// index the build script computed.
#[derive(Debug, Clone)]
pub struct WordPiece {
    text: Cow<'static, str>,
    index: Cow<'static, [u8]>,
    len: usize,
    /// Number of table slots (a power of two) and its log2.
    slots: usize,
    bits: u32,
    unk: u32,
}

fn u32_at(b: &[u8], i: usize) -> Option<u32> {
    let w: [u8; 4] = b.get(4 * i..4 * i + 4)?.try_into().ok()?;
    Some(u32::from_le_bytes(w))
}

impl WordPiece {
    /// Builds the vocabulary from the text of a `vocab.txt` file. Returns `None` when
    /// the text has no `[UNK]` entry.
    pub fn from_vocab_txt(text: &str) -> Option<Self> {
        let index = vocab_index::build(text)?;
        Self::with_index(Cow::Owned(text.to_owned()), Cow::Owned(index))
    }

    /// The vocabulary of `text` with its index as [`crate::vocab_index::build`] computed it
    /// (at build time, for the embedded one). Returns `None` when the index does not fit the
    /// text or the text has no `[UNK]` entry.
    pub(crate) fn with_index(text: Cow<'static, str>, index: Cow<'static, [u8]>) -> Option<Self> {
        let len = u32_at(&index, 0)? as usize;
        let slots = u32_at(&index, 1)? as usize;
        let expected = vocab_index::HEADER
            .checked_add(len.checked_mul(8)?)?
            .checked_add(slots.checked_mul(4)?)?;
        if index.len() != expected || !slots.is_power_of_two() || slots <= len {
            return None;
        }
        let mut wp = Self {
            text,
            index,
            len,
            slots,
            bits: slots.trailing_zeros(),
            unk: 0,
        };
        // The last span ends inside the text (spans are increasing): every token is there.
        let last = wp.len.checked_sub(1)?;
        wp.span(last as u32)
            .filter(|&(_, b)| b as usize <= wp.text.len())?;
        wp.unk = wp.lookup("[UNK]")?;
        Some(wp)
    }

    fn span(&self, id: u32) -> Option<(u32, u32)> {
        if id as usize >= self.len {
            return None;
        }
        let i = vocab_index::HEADER / 4 + 2 * id as usize;
        Some((u32_at(&self.index, i)?, u32_at(&self.index, i + 1)?))
    }

    fn slot(&self, slot: usize) -> u32 {
        u32_at(&self.index, vocab_index::HEADER / 4 + 2 * self.len + slot).unwrap_or(EMPTY)
    }

    fn lookup(&self, token: &str) -> Option<u32> {
        let mut slot = token_slot(token, self.bits);
        // At most every slot once (the table is never full, but the index may be foreign).
        for _ in 0..self.slots {
            match self.slot(slot) {
                EMPTY => return None,
                id if self.token(id) == Some(token) => return Some(id),
                _ => slot = (slot + 1) & (self.slots - 1),
            }
        }
        None
    }

    /// Number of entries.
    pub fn len(&self) -> usize {
        self.len
    }

    /// True when the vocabulary is empty (never, for a valid one).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Id of `[UNK]`.
    pub fn unk_id(&self) -> u32 {
        self.unk
    }

    /// The token string of `id`.
    pub fn token(&self, id: u32) -> Option<&str> {
        let (a, b) = self.span(id)?;
        self.text.get(a as usize..b as usize)
    }

    /// The id of an exact token string (`"##ing"` for a continuation piece).
    pub fn id(&self, token: &str) -> Option<u32> {
        self.lookup(token)
    }

    /// Greedy longest-match-first WordPiece of one basic-tokenized word.
    /// `scratch` is a reusable buffer for `##` continuation lookups.
    pub fn word_ids(&self, word: &str, scratch: &mut String, out: &mut Vec<u32>) {
        if let Some(id) = self.lookup(word) {
            out.push(id);
            return;
        }
        let n_chars = word.chars().count();
        if n_chars > MAX_CHARS_PER_WORD {
            out.push(self.unk);
            return;
        }
        let before = out.len();
        let mut start = 0usize;
        while start < word.len() {
            let mut end = word.len();
            let mut found = None;
            while end > start {
                let piece = &word[start..end];
                let id = if start == 0 {
                    self.lookup(piece)
                } else {
                    scratch.clear();
                    scratch.push_str("##");
                    scratch.push_str(piece);
                    self.lookup(scratch.as_str())
                };
                if let Some(id) = id {
                    found = Some(id);
                    break;
                }
                // Step back one character.
                end -= word[start..end]
                    .chars()
                    .next_back()
                    .map_or(1, char::len_utf8);
            }
            match found {
                Some(id) => {
                    out.push(id);
                    start = end;
                }
                None => {
                    out.truncate(before);
                    out.push(self.unk);
                    return;
                }
            }
        }
    }

    /// Token ids of `text` (no `[CLS]`/`[SEP]`).
    pub fn encode(&self, text: &str) -> Vec<u32> {
        let mut out = Vec::new();
        let mut scratch = String::new();
        basic_tokenize(text, |w| self.word_ids(w, &mut scratch, &mut out));
        out
    }

    /// Token strings of `text` (no `[CLS]`/`[SEP]`), for inspection and tests.
    pub fn tokenize(&self, text: &str) -> Vec<String> {
        self.encode(text)
            .into_iter()
            .filter_map(|id| self.token(id).map(str::to_owned))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<String> {
        let mut v = Vec::new();
        basic_tokenize(text, |w| v.push(w.to_owned()));
        v
    }

    #[test]
    fn basic_lowercases_and_splits_punctuation() {
        assert_eq!(
            words("Hello, World! It's 3.5x"),
            ["hello", ",", "world", "!", "it", "'", "s", "3", ".", "5x"]
        );
        assert_eq!(words("  \t\n "), Vec::<String>::new());
        assert_eq!(
            words("use pnpm, not npm"),
            ["use", "pnpm", ",", "not", "npm"]
        );
    }

    #[test]
    fn basic_strips_accents_and_controls() {
        assert_eq!(words("Crème Brûlée"), ["creme", "brulee"]);
        assert_eq!(words("ÀÉÎÕÜ ñ"), ["aeiou", "n"]);
        assert_eq!(words("a\u{0}b\u{200B}c\u{7}d"), ["abcd"]);
        // Combining marks on their own are dropped; NBSP and ideographic space split.
        assert_eq!(words("e\u{301}x\u{a0}y\u{3000}z"), ["ex", "y", "z"]);
    }

    #[test]
    fn basic_isolates_cjk_but_not_kana_or_hangul() {
        assert_eq!(words("我爱pnpm"), ["我", "爱", "pnpm"]);
        // です: NFD splits the dakuten (a non-spacing mark) off で, as BERT-uncased does.
        assert_eq!(words("日本語です"), ["日", "本", "語", "てす"]);
        assert_eq!(
            words("한국"),
            ["\u{1112}\u{1161}\u{11ab}\u{1100}\u{116e}\u{11a8}"]
        );
        assert_eq!(words("【注意】"), ["【", "注", "意", "】"]);
    }
}
