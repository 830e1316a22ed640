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

/// Keeps at most `max` bytes of `s` (head only), cut at a char boundary, with a marker.
pub fn cap_head(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let end = floor_boundary(s, max);
    Cow::Owned(format!("{}…[{} bytes omitted]", &s[..end], s.len() - end))
}

/// Keeps the first `head` and last `tail` bytes of `s`, cut at char boundaries, with a marker.
pub fn cap_head_tail(s: &str, head: usize, tail: usize) -> Cow<'_, str> {
    if s.len() <= head + tail {
        return Cow::Borrowed(s);
    }
    let h = floor_boundary(s, head);
    let t = ceil_boundary(s, s.len() - tail);
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
    let h = decode_fragment(&inner[..head_raw])?;
    let t = decode_fragment(&inner[tail_raw..])?;
    let h = &h[..floor_boundary(&h, head)];
    let t = &t[ceil_boundary(&t, t.len().saturating_sub(tail))..];
    let omitted = tail_raw.saturating_sub(head_raw);
    Some(format!("{h}\n…[~{omitted} bytes omitted]…\n{t}"))
}

fn decode_fragment(frag: &str) -> Option<String> {
    // A cut can still split a surrogate pair; retry a few bytes shorter on each side.
    for trim in 0..3usize {
        let (a, b) = (trim * 6, frag.len().saturating_sub(trim * 6));
        if a > b || !frag.is_char_boundary(a) || !frag.is_char_boundary(b) {
            continue;
        }
        let lit = format!("\"{}\"", &frag[a..b]);
        if let Ok(s) = serde_json::from_str::<String>(&lit) {
            return Some(s);
        }
    }
    None
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
