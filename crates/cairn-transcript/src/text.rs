//! Capping and filtering of the text kept from transcripts.

use std::borrow::Cow;

/// Longest user prompt kept, in bytes.
pub const MAX_PROMPT: usize = 16 * 1024;
/// Longest assistant text block kept, in bytes.
pub const MAX_ASSISTANT_TEXT: usize = 8 * 1024;
/// Longest shell command kept, in bytes.
pub const MAX_COMMAND: usize = 4 * 1024;
/// Longest tool-argument JSON kept, in bytes.
pub const MAX_ARGS: usize = 2 * 1024;
/// Tool outputs keep this many bytes of their head...
pub const OUTPUT_HEAD: usize = 1024;
/// ...and this many of their tail (test runners print their verdict last).
pub const OUTPUT_TAIL: usize = 2048;

/// A function applied to every piece of text before it enters the model (cairn passes its
/// secret redactor here, so nothing downstream ever sees a raw secret).
pub type TextFilter = fn(&str) -> Cow<'_, str>;

/// The identity filter.
pub fn no_filter(s: &str) -> Cow<'_, str> {
    Cow::Borrowed(s)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    if i >= s.len() {
        return s.len();
    }
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// How far a cut moves to fall between words.
const WORD_SLACK: usize = 512;

fn is_word_break(c: u8) -> bool {
    c.is_ascii_whitespace() || matches!(c, b'"' | b'\'' | b'`' | b',' | b';')
}

/// Moves a head cut back to just after a word break (within [`WORD_SLACK`] bytes), so a token
/// is kept whole or not at all: half a secret is no longer recognisable as one by the filter
/// that runs on the capped text.
fn head_cut(s: &str, end: usize) -> usize {
    let b = s.as_bytes();
    if end == 0 || end >= b.len() || is_word_break(b[end]) || is_word_break(b[end - 1]) {
        return end;
    }
    let from = end.saturating_sub(WORD_SLACK);
    b[from..end]
        .iter()
        .rposition(|&c| is_word_break(c))
        .map_or(end, |i| from + i + 1)
}

/// Moves a tail cut forward to a word break (within [`WORD_SLACK`] bytes); see [`head_cut`].
fn tail_cut(s: &str, start: usize) -> usize {
    let b = s.as_bytes();
    if start == 0 || start >= b.len() || is_word_break(b[start - 1]) || is_word_break(b[start]) {
        return start;
    }
    let to = (start + WORD_SLACK).min(b.len());
    b[start..to]
        .iter()
        .position(|&c| is_word_break(c))
        .map_or(start, |i| start + i)
}

/// Keeps at most `max` bytes of `s` (head only), cut at a char boundary between words when
/// one is near, with a marker.
pub fn cap_head(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let end = head_cut(s, floor_boundary(s, max));
    Cow::Owned(format!("{}…[{} bytes omitted]", &s[..end], s.len() - end))
}

/// Keeps the first `head` and last `tail` bytes of `s`, cut at char boundaries, with a marker.
pub fn cap_head_tail(s: &str, head: usize, tail: usize) -> Cow<'_, str> {
    if s.len() <= head + tail {
        return Cow::Borrowed(s);
    }
    let h = head_cut(s, floor_boundary(s, head));
    let t = tail_cut(s, ceil_boundary(s, s.len() - tail));
    Cow::Owned(format!(
        "{}\n…[{} bytes omitted]…\n{}",
        &s[..h],
        t - h,
        &s[t..]
    ))
}

/// Decodes a raw JSON string literal (quotes included) keeping only its first `head` and last
/// `tail` bytes, without unescaping (or allocating) the middle: large tool outputs cost one
/// scan, not a copy. Returns `None` when `raw` is not a valid JSON string.
pub fn json_string_head_tail(raw: &str, head: usize, tail: usize) -> Option<String> {
    let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
    // Decoded text is never longer than its raw form, and at most 6 times shorter.
    if inner.len() <= 2 * (head + tail) {
        let s: String = serde_json::from_str(raw).ok()?;
        return Some(cap_head_tail(&s, head, tail).into_owned());
    }
    let head_raw = prefix_cut(inner, floor_boundary(inner, head * 2));
    let tail_raw = suffix_start(inner, ceil_boundary(inner, inner.len() - tail * 2));
    // The head decodes until it has enough; the tail first from a window just wider than
    // it (escapes are rare), from the full window only when that falls short.
    // (One byte more than kept: the cut looks at the byte after it for a word break.)
    let h = decode_fragment(&inner[..head_raw], head + 1)?;
    let narrow = suffix_start(
        inner,
        ceil_boundary(inner, inner.len() - (tail + tail / 8 + 64).min(tail * 2)),
    );
    let t = match decode_fragment(&inner[narrow.max(tail_raw)..], usize::MAX) {
        Some(t) if t.len() > tail || narrow <= tail_raw => t,
        _ => decode_fragment(&inner[tail_raw..], usize::MAX)?,
    };
    let h = &h[..head_cut(&h, floor_boundary(&h, head))];
    let t = &t[tail_cut(&t, ceil_boundary(&t, t.len().saturating_sub(tail)))..];
    let omitted = tail_raw.saturating_sub(head_raw);
    Some(format!("{h}\n…[~{omitted} bytes omitted]…\n{t}"))
}

/// Decodes a fragment of a JSON string's inside, stopping once `enough` bytes are decoded.
fn decode_fragment(frag: &str, enough: usize) -> Option<String> {
    // A cut can still split a surrogate pair; retry a few bytes shorter on each side.
    for trim in 0..3usize {
        let (a, b) = (trim * 6, frag.len().saturating_sub(trim * 6));
        if a > b || !frag.is_char_boundary(a) || !frag.is_char_boundary(b) {
            continue;
        }
        if let Some(s) = unescape_json(&frag[a..b], enough) {
            return Some(s);
        }
    }
    None
}

/// Decodes the inside of a JSON string literal (no quotes) as serde_json does, without
/// copying it into a literal first: `None` on a raw control character, an unknown escape,
/// a bad `\u` escape or a lone surrogate. Stops (at a char boundary) once the output holds
/// `enough` bytes; the rest is not looked at.
fn unescape_json(frag: &str, enough: usize) -> Option<String> {
    let b = frag.as_bytes();
    let mut out = String::with_capacity(frag.len().min(enough.saturating_add(8)));
    let mut i = 0usize;
    loop {
        if out.len() >= enough {
            return Some(out);
        }
        let Some(k) = find_escape_or_control(&b[i..]) else {
            out.push_str(&frag[i..]);
            return Some(out);
        };
        out.push_str(&frag[i..i + k]);
        i += k;
        if b[i] != b'\\' {
            return None; // a raw control character
        }
        let esc = *b.get(i + 1)?;
        i += 2;
        let c = match esc {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let hi = hex4(b, i)?;
                i += 4;
                match hi {
                    0xD800..=0xDBFF => {
                        if b.get(i) != Some(&b'\\') || b.get(i + 1) != Some(&b'u') {
                            return None;
                        }
                        let lo = hex4(b, i + 2)?;
                        if !(0xDC00..=0xDFFF).contains(&lo) {
                            return None;
                        }
                        i += 6;
                        char::from_u32(0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00))?
                    }
                    0xDC00..=0xDFFF => return None,
                    _ => char::from_u32(hi)?,
                }
            }
            _ => return None,
        };
        out.push(c);
    }
}

/// Position of the first `\\` or control byte (< 0x20), eight bytes at a time.
fn find_escape_or_control(b: &[u8]) -> Option<usize> {
    const LO: u64 = 0x0101_0101_0101_0101;
    const HI: u64 = 0x8080_8080_8080_8080;
    let mut chunks = b.chunks_exact(8);
    let mut at = 0usize;
    for c in &mut chunks {
        let mut w = [0u8; 8];
        w.copy_from_slice(c);
        let x = u64::from_le_bytes(w);
        let bs = x ^ (LO * u64::from(b'\\'));
        // A byte is flagged when it is below 0x20 or zero after the xor (exact for ASCII
        // bytes; bytes >= 0x80 are never flagged).
        let hit = (x.wrapping_sub(LO * 0x20) | bs.wrapping_sub(LO)) & !x & HI;
        if hit != 0
            && let Some(k) = c.iter().position(|&c| c == b'\\' || c < 0x20)
        {
            return Some(at + k);
        }
        at += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&c| c == b'\\' || c < 0x20)
        .map(|k| at + k)
}

fn hex4(b: &[u8], i: usize) -> Option<u32> {
    let digits = b.get(i..i + 4)?;
    let mut v = 0u32;
    for &d in digits {
        v = v * 16 + (d as char).to_digit(16)?;
    }
    Some(v)
}

fn backslashes_before(b: &[u8], i: usize) -> usize {
    b[..i].iter().rev().take_while(|&&c| c == b'\\').count()
}

/// Moves a prefix end back so the prefix does not end inside an escape sequence.
fn prefix_cut(s: &str, mut e: usize) -> usize {
    let b = s.as_bytes();
    // Inside `\uXXXX`?
    for k in 1..=5usize {
        if e > k && b[e - k - 1] == b'\\' && b.get(e - k) == Some(&b'u') {
            if backslashes_before(b, e - k - 1).is_multiple_of(2) && k < 5 {
                e -= k + 1;
            }
            break;
        }
    }
    if backslashes_before(b, e) % 2 == 1 {
        e -= 1;
    }
    floor_boundary(s, e)
}

/// Moves a suffix start forward so the suffix does not begin inside an escape sequence.
fn suffix_start(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    for k in 0..=4usize {
        // Is i within the hex digits of a `\u` escape that starts at i-k-2?
        if i >= k + 2
            && b[i - k - 2] == b'\\'
            && b[i - k - 1] == b'u'
            && backslashes_before(b, i - k - 2).is_multiple_of(2)
        {
            if k < 4 {
                i = (i - k - 2 + 6).min(b.len());
            }
            break;
        }
    }
    if i < b.len() && backslashes_before(b, i) % 2 == 1 {
        i += if b[i] == b'u' { 5 } else { 1 };
    }
    ceil_boundary(s, i.min(b.len()))
}

/// Caps first (so the filter sees bounded input), then filters.
pub(crate) fn keep(filter: TextFilter, s: &str, max: usize) -> String {
    filter(&cap_head(s, max)).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Found by the hardening suite: a cap that cut a token in half kept a fragment the
    /// redactor no longer recognises; cuts now fall between words.
    #[test]
    fn cuts_fall_between_words() {
        let token = "xoxb-393363387500-474000000000-abcdefghijklmnopqrstuvwx";
        let s = format!("{} {token} tail", "w ".repeat(10));
        let capped = cap_head(&s, 30);
        assert!(!capped.contains("xoxb"), "{capped}");
        let s = format!("{} {token} {}", "a".repeat(40), "z ".repeat(10));
        let capped = cap_head_tail(&s, 10, 40);
        assert!(
            !capped.contains("xoxb") && !capped.contains("wx"),
            "{capped}"
        );
        let raw =
            serde_json::to_string(&format!("{}{token} {}", "h ".repeat(200), "t ".repeat(200)))
                .unwrap();
        let got = json_string_head_tail(&raw, 410, 20).unwrap();
        assert!(!got.contains("xoxb") && !got.contains("uvwx"), "{got}");
    }

    /// The decoding before the fragment decoder: whole 2x windows through serde_json.
    fn head_tail_reference(raw: &str, head: usize, tail: usize) -> Option<String> {
        let inner = raw.strip_prefix('"')?.strip_suffix('"')?;
        if inner.len() <= 2 * (head + tail) {
            let s: String = serde_json::from_str(raw).ok()?;
            return Some(cap_head_tail(&s, head, tail).into_owned());
        }
        let head_raw = prefix_cut(inner, floor_boundary(inner, head * 2));
        let tail_raw = suffix_start(inner, ceil_boundary(inner, inner.len() - tail * 2));
        let serde_decode = |frag: &str| -> Option<String> {
            (0..3usize).find_map(|trim| {
                let (a, b) = (trim * 6, frag.len().saturating_sub(trim * 6));
                if a > b || !frag.is_char_boundary(a) || !frag.is_char_boundary(b) {
                    return None;
                }
                serde_json::from_str::<String>(&format!("\"{}\"", &frag[a..b])).ok()
            })
        };
        let h = serde_decode(&inner[..head_raw])?;
        let t = serde_decode(&inner[tail_raw..])?;
        let h = &h[..head_cut(&h, floor_boundary(&h, head))];
        let t = &t[tail_cut(&t, ceil_boundary(&t, t.len().saturating_sub(tail)))..];
        let omitted = tail_raw.saturating_sub(head_raw);
        Some(format!("{h}\n…[~{omitted} bytes omitted]…\n{t}"))
    }

    #[test]
    fn fragment_decoding_matches_serde() {
        let pieces = [
            "word ", "x", "\"q\"", "\\", "é", "😀", "\t", "\n", "line\n", "tok_en ", "{}", "/",
        ];
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        for case in 0..300 {
            let mut text = String::new();
            let len = 200 + (case * 97) % 9000;
            while text.len() < len {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                text.push_str(pieces[(seed % pieces.len() as u64) as usize]);
            }
            let raw = serde_json::to_string(&text).unwrap();
            for (h, t) in [(1024, 2048), (100, 100), (7, 300)] {
                assert_eq!(
                    json_string_head_tail(&raw, h, t),
                    head_tail_reference(&raw, h, t),
                    "case {case} ({h}, {t})"
                );
            }
        }
    }

    #[test]
    fn head_tail_of_raw_json_strings() {
        let text: String = (0..5000)
            .map(|i| format!("line {i} \"q\" é\t😀\n"))
            .collect();
        let raw = serde_json::to_string(&text).unwrap();
        let got = json_string_head_tail(&raw, 1024, 2048).unwrap();
        assert!(
            got.starts_with("line 0 \"q\" é\t😀\nline 1"),
            "{}",
            &got[..60]
        );
        assert!(got.ends_with("line 4999 \"q\" é\t😀\n"));
        assert!(got.contains("bytes omitted"));
        assert!(got.len() < 4000);
        // Every cut position is safe.
        for cut in 0..40 {
            let t = format!("{}{}", "x".repeat(cut), "\\\u{1F600}\"\n".repeat(2000));
            let raw = serde_json::to_string(&t).unwrap();
            let got = json_string_head_tail(&raw, 100, 100).expect("decodes");
            assert!(got.ends_with('\n'));
        }
        // The fragment decoder agrees with serde_json, escapes and errors alike.
        for lit in [
            r#""plain""#,
            r#""a\"b\\c\/d\be\ff\ng\rh\ti""#,
            r#""\u00e9\u4e2d\ud83d\ude00x""#,
            r#""\ud83d""#,
            r#""\ude00""#,
            r#""\ud83dx""#,
            r#""\u12""#,
            r#""\x""#,
            r#""tab	in""#,
            r#""\""#,
        ] {
            let inner = &lit[1..lit.len() - 1];
            assert_eq!(
                unescape_json(inner, usize::MAX),
                serde_json::from_str::<String>(lit).ok(),
                "{lit}"
            );
        }
        // The word-at-a-time scan finds what a byte loop finds.
        let bytes: Vec<u8> = (0..4000u32)
            .map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8)
            .map(|c| if c < 0x20 || c == b'\\' { b'a' } else { c })
            .collect();
        for at in [0usize, 1, 7, 8, 9, 63, 64, 1000, 3999] {
            for needle in [b'\\', 0x00, 0x1f, b'\n'] {
                let mut v = bytes.clone();
                v[at] = needle;
                let naive = v.iter().position(|&c| c == b'\\' || c < 0x20);
                assert_eq!(find_escape_or_control(&v), naive, "{at} {needle}");
                assert_eq!(
                    find_escape_or_control(&v[at.min(5)..]),
                    naive.map(|p| p - at.min(5))
                );
            }
        }
        assert_eq!(find_escape_or_control(&bytes), None);
        // Short strings decode whole.
        assert_eq!(json_string_head_tail("\"a\\nb\"", 10, 10).unwrap(), "a\nb");
        assert_eq!(json_string_head_tail("not a string", 10, 10), None);
    }

    #[test]
    fn caps_at_char_boundaries() {
        let s = "é".repeat(3000);
        let c = cap_head_tail(&s, 1001, 2001);
        assert!(c.contains("bytes omitted"));
        assert!(c.starts_with('é') && c.ends_with('é'));
        let c = cap_head(&s, 5);
        assert!(c.starts_with("éé…"));
        assert_eq!(cap_head("short", 10), "short");
    }
}
