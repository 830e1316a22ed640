//! Repair of JSON text that holds lone UTF-16 surrogate escapes.
//!
//! Node's `JSON.stringify` writes a string cut in the middle of an emoji (a high surrogate
//! without its low half, or the reverse) as a `\ud83d` escape. That is valid to JavaScript
//! but not Unicode, and serde_json rejects the whole document. Both agents' transcripts and
//! hook payloads can hold one, so a line that fails to parse is read again with every
//! unpaired surrogate escape replaced by `\ufffd` (U+FFFD, the replacement character), the way
//! invalid UTF-8 is replaced. Only a document that failed pays for the scan.
//!
//! A surrogate escape is unpaired when it is a high one (`\uD800`–`\uDBFF`) not followed at
//! once by a low-surrogate escape, or a low one (`\uDC00`–`\uDFFF`) not preceded by a high one;
//! hex digits in any case. An escaped backslash (`\\ud83d`) is text, not an escape.

/// What an unpaired surrogate escape is replaced with.
const REPLACEMENT_ESCAPE: &[u8] = b"\\ufffd";

/// `json` with every unpaired surrogate escape replaced by `\ufffd`, or `None` when it has
/// none (nothing to repair: the document is broken otherwise, or not at all).
pub fn replace_in_json(json: &[u8]) -> Option<Vec<u8>> {
    let lone = lone_escape_starts(json);
    if lone.is_empty() {
        return None;
    }
    let mut out = Vec::with_capacity(json.len());
    let mut copied_to = 0;
    for start in lone {
        out.extend_from_slice(&json[copied_to..start]);
        out.extend_from_slice(REPLACEMENT_ESCAPE);
        copied_to = start + ESCAPE_LEN;
    }
    out.extend_from_slice(&json[copied_to..]);
    Some(out)
}

/// [`replace_in_json`] for text.
pub fn replace_in_json_str(json: &str) -> Option<String> {
    // Only ASCII bytes are replaced by ASCII bytes, so the result is UTF-8 again.
    replace_in_json(json.as_bytes()).and_then(|repaired| String::from_utf8(repaired).ok())
}

/// Length of a `\uXXXX` escape.
const ESCAPE_LEN: usize = 6;

/// Where each unpaired surrogate escape of `json` starts (at its backslash), in order.
fn lone_escape_starts(json: &[u8]) -> Vec<usize> {
    let mut lone = Vec::new();
    let mut from = 0;
    // Backslashes appear only inside JSON strings, so every one starts an escape.
    while let Some(found) = memchr::memchr(b'\\', &json[from..]) {
        let at = from + found;
        from = match unicode_escape(json, at) {
            Some(0xD800..=0xDBFF) => {
                if matches!(unicode_escape(json, at + ESCAPE_LEN), Some(0xDC00..=0xDFFF)) {
                    at + 2 * ESCAPE_LEN
                } else {
                    lone.push(at);
                    at + ESCAPE_LEN
                }
            }
            Some(0xDC00..=0xDFFF) => {
                lone.push(at);
                at + ESCAPE_LEN
            }
            Some(_) => at + ESCAPE_LEN,
            // `\\`, `\"`, `\n`…: two bytes (a backslash at the very end ends the scan).
            None => at + 2,
        };
        if from >= json.len() {
            break;
        }
    }
    lone
}

/// The code unit of the `\uXXXX` escape starting at `at`, if one starts there.
fn unicode_escape(json: &[u8], at: usize) -> Option<u16> {
    let escape = json.get(at..at + ESCAPE_LEN)?;
    if escape[0] != b'\\' || escape[1] != b'u' {
        return None;
    }
    escape[2..].iter().try_fold(0u16, |unit, &digit| {
        let value = u16::try_from(char::from(digit).to_digit(16)?).ok()?;
        Some(unit << 4 | value)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn repaired(json: &str) -> Option<String> {
        replace_in_json_str(json)
    }

    #[test]
    fn unpaired_surrogates_are_replaced() {
        assert_eq!(
            repaired(r#"{"p":"cut \ud83d"}"#).as_deref(),
            Some(r#"{"p":"cut \ufffd"}"#)
        );
        assert_eq!(
            repaired(r#"{"p":"\uDE00 tail"}"#).as_deref(),
            Some(r#"{"p":"\ufffd tail"}"#)
        );
        // Two highs in a row: the first is lone, the second pairs with the low after it.
        assert_eq!(
            repaired(r#""\ud83d\ud83d\ude00""#).as_deref(),
            Some(r#""\ufffd\ud83d\ude00""#)
        );
        // A high followed by a non-surrogate escape, a low after an ordinary escape.
        assert_eq!(
            repaired(r#""\ud83d\u0041\n\udc00""#).as_deref(),
            Some(r#""\ufffd\u0041\n\ufffd""#)
        );
        // At the very end, and cut short.
        assert_eq!(repaired(r#""\udbff"#).as_deref(), Some(r#""\ufffd"#));
        assert_eq!(repaired(r#""\ud83"#), None);
    }

    #[test]
    fn pairs_escaped_backslashes_and_clean_text_are_left_alone() {
        for clean in [
            r#"{"p":"smile \ud83d\ude00 and \uD83D\uDE00"}"#,
            r#"{"p":"C:\\ud83d is a path"}"#,
            r#"{"p":"a\\\\ud83d and a trailing backslash \\"}"#,
            r#"{"p":"plain 😀 text"}"#,
            r#"\"#,
            "",
        ] {
            assert_eq!(repaired(clean), None, "{clean}");
        }
        // An escaped backslash followed by a real escape.
        assert_eq!(repaired(r#""\\\ud83d""#).as_deref(), Some(r#""\\\ufffd""#));
    }

    #[test]
    fn the_repaired_document_parses_and_keeps_its_other_text() {
        let line = "{\"p\":\"日本語 \\ud83d\",\"q\":\"\\ude00😀\"}";
        let fixed = replace_in_json(line.as_bytes()).expect("two lone surrogates");
        let v: serde_json::Value = serde_json::from_slice(&fixed).expect("parses");
        assert_eq!(v["p"], "日本語 \u{fffd}");
        assert_eq!(v["q"], "\u{fffd}😀");
    }
}
