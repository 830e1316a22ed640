//! Traditional Chinese read through the Simplified patterns: "記住，我們用 PostgreSQL 16" is
//! matched as "记住，我们用 PostgreSQL 16", and what is kept is given back in the person's own
//! characters. The table (`t2s.txt`, from OpenCC's character list by
//! `scripts/make_t2s_table.py`) maps one character to one of the same UTF-8 length, so every
//! byte offset in the converted copy is an offset in the original.
//!
//! Japanese is left alone: its kanji are often the Traditional forms ("今後", "設定"), and a
//! sentence with kana is read by the Japanese patterns as written.

use std::collections::HashMap;
use std::sync::LazyLock;

/// (Traditional, Simplified), sorted by the Traditional character.
static TABLE: LazyLock<Vec<(char, char)>> = LazyLock::new(|| {
    include_str!("t2s.txt")
        .lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let mut cs = l.chars();
            let pair = (cs.next()?, cs.next()?);
            (pair.0.len_utf8() == pair.1.len_utf8()).then_some(pair)
        })
        .collect()
});

fn simplified_char(c: char) -> Option<char> {
    // Every entry is a CJK ideograph (U+3400 and up).
    if (c as u32) < 0x3400 {
        return None;
    }
    let t = &*TABLE;
    t.binary_search_by_key(&c, |&(trad, _)| trad)
        .ok()
        .map(|i| t[i].1)
}

fn is_kana(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{31f0}'..='\u{31ff}' | '\u{ff66}'..='\u{ff9d}')
}

/// A prompt with its Traditional characters made Simplified.
pub(crate) struct Simplified<'a> {
    original: &'a str,
    /// The converted copy: same length, same char boundaries as `original`.
    pub text: String,
    /// Which Traditional character each converted one came from in this prompt.
    back: HashMap<char, char>,
    /// Whether some Simplified character stands for two in the original (it was also written
    /// as it is, or came from two Traditional ones): then only its place tells which.
    ambiguous: bool,
}

/// The Simplified copy of `s`, or `None` when it has no Traditional character to convert
/// (or is Japanese).
pub(crate) fn simplified(s: &str) -> Option<Simplified<'_>> {
    if s.is_ascii() {
        return None;
    }
    // One pass to find the first character to convert (most text has none: nothing is
    // copied), and kana anywhere.
    let mut first = None;
    for (i, c) in s.char_indices() {
        if is_kana(c) {
            return None;
        }
        if first.is_none() && simplified_char(c).is_some() {
            first = Some(i);
        }
    }
    let first = first?;
    let mut text = String::with_capacity(s.len());
    text.push_str(&s[..first]);
    let mut back = HashMap::new();
    let mut ambiguous = false;
    for c in s[first..].chars() {
        match simplified_char(c) {
            Some(simple) => {
                text.push(simple);
                ambiguous |= back.insert(simple, c).is_some_and(|t| t != c);
            }
            None => text.push(c),
        }
    }
    ambiguous |= s.chars().any(|c| back.contains_key(&c));
    Some(Simplified {
        original: s,
        text,
        back,
        ambiguous,
    })
}

impl Simplified<'_> {
    /// `out`, made from the converted copy, in the original's characters. Each character is
    /// mapped back; when one could stand for two, each longest run of `out` found in the copy
    /// is given as the same bytes of the original instead.
    pub fn restore(&self, out: &str) -> String {
        if !self.ambiguous {
            return self.restore_chars(out);
        }
        let mut restored = String::with_capacity(out.len());
        let mut rest = out;
        while !rest.is_empty() {
            // The longest prefix of `rest` found in the copy (every shorter one is found too).
            let ends: Vec<usize> = rest.char_indices().map(|(i, c)| i + c.len_utf8()).collect();
            let (mut lo, mut hi) = (0, ends.len());
            while lo < hi {
                let mid = (lo + hi).div_ceil(2);
                if self.text.contains(&rest[..ends[mid - 1]]) {
                    lo = mid;
                } else {
                    hi = mid - 1;
                }
            }
            if lo == 0 {
                let mut cs = rest.chars();
                if let Some(c) = cs.next() {
                    restored.push(self.back.get(&c).copied().unwrap_or(c));
                }
                rest = cs.as_str();
                continue;
            }
            let len = ends[lo - 1];
            let piece = &rest[..len];
            match self.text.find(piece) {
                Some(at) => restored.push_str(self.original.get(at..at + len).unwrap_or(piece)),
                None => restored.push_str(piece),
            }
            rest = &rest[len..];
        }
        restored
    }

    fn restore_chars(&self, out: &str) -> String {
        out.chars()
            .map(|c| self.back.get(&c).copied().unwrap_or(c))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sorted_and_keeps_offsets() {
        assert!(TABLE.len() > 3_000);
        assert!(TABLE.windows(2).all(|w| w[0].0 < w[1].0));
        assert!(TABLE.iter().all(|(t, s)| t.len_utf8() == s.len_utf8()));
    }

    #[test]
    fn traditional_text_is_read_simplified_and_given_back_as_written() {
        let z = simplified("記住，我們用 PostgreSQL 16").expect("has Traditional characters");
        assert_eq!(z.text, "记住，我们用 PostgreSQL 16");
        assert_eq!(z.restore("我们用 PostgreSQL 16."), "我們用 PostgreSQL 16.");
        assert_eq!(z.restore("我们用 PostgreSQL 16"), "我們用 PostgreSQL 16");
    }

    #[test]
    fn simplified_japanese_and_ascii_text_is_left_alone() {
        assert!(simplified("记住，我们用 PostgreSQL 16").is_none());
        assert!(simplified("今後はテストを書いてからコミットして").is_none());
        assert!(simplified("remember that we use pnpm").is_none());
    }

    #[test]
    fn a_character_written_both_ways_is_given_back_by_its_place() {
        // 后 as written (皇后) and 後 made 后 (之後).
        let z = simplified("皇后之後，不要再改").expect("has Traditional characters");
        assert_eq!(z.text, "皇后之后，不要再改");
        assert_eq!(z.restore("皇后之后，不要再改。"), "皇后之後，不要再改。");
        assert_eq!(z.restore("之后，不要再改"), "之後，不要再改");
    }
}
