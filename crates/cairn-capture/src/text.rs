//! Condensing text for digests: one line, bounded, sentences.

/// `s` on one line (whitespace runs collapsed) and at most `max` characters, with `…` when cut.
pub fn one_line(s: &str, max: usize) -> String {
    let mut out = String::with_capacity(s.len().min(max + 4));
    let mut n = 0usize;
    let mut pending_space = false;
    for ch in s.chars() {
        if ch.is_whitespace() {
            pending_space = !out.is_empty();
            continue;
        }
        if pending_space {
            if n + 1 >= max {
                out.push('…');
                return out;
            }
            out.push(' ');
            n += 1;
            pending_space = false;
        }
        if n >= max {
            out.push('…');
            return out;
        }
        out.push(ch);
        n += 1;
    }
    out
}

/// Splits text into sentences (on `.`, `!`, `?` followed by a space, and on line breaks and
/// list bullets), trimmed, non-empty.
pub fn sentences(s: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in s.lines() {
        let line = line.trim().trim_start_matches(['-', '*', '•']).trim_start();
        let mut start = 0;
        let b = line.as_bytes();
        for i in 0..b.len() {
            if matches!(b[i], b'.' | b'!' | b'?') && b.get(i + 1).is_none_or(|c| *c == b' ') {
                let piece = line[start..=i].trim();
                if !piece.is_empty() {
                    out.push(piece.to_owned());
                }
                start = i + 1;
            }
        }
        let piece = line[start.min(line.len())..].trim();
        if !piece.is_empty() {
            out.push(piece.to_owned());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn condenses() {
        assert_eq!(one_line("a\n  b\tc", 10), "a b c");
        assert_eq!(one_line("abcdefghijkl", 5), "abcde…");
    }

    #[test]
    fn splits_sentences() {
        assert_eq!(
            sentences("Fixed it. Tests pass!\n- Next: add docs\nv1.2 is out"),
            vec!["Fixed it.", "Tests pass!", "Next: add docs", "v1.2 is out"]
        );
    }
}
