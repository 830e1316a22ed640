//! Small text helpers: sentences, content words, token estimates, truncation.

use std::collections::HashSet;
use std::sync::LazyLock;

use rust_stemmers::{Algorithm, Stemmer};

/// Whether `c` is a CJK ideograph or kana (scripts written without spaces).
pub fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x3040..=0x30FF   // hiragana, katakana
        | 0x3400..=0x4DBF // CJK ext A
        | 0x4E00..=0x9FFF // CJK unified
        | 0xF900..=0xFAFF // compatibility
        | 0xFF66..=0xFF9F // half-width katakana
        | 0xAC00..=0xD7AF // hangul
    )
}

/// Whether the text is mostly CJK.
pub fn mostly_cjk(s: &str) -> bool {
    let (mut cjk, mut other) = (0usize, 0usize);
    for c in s.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else if c.is_alphabetic() {
            other += 1;
        }
    }
    cjk > 0 && cjk * 2 >= other
}

const ABBREVIATIONS: &[&str] = &[
    "e.g", "i.e", "etc", "vs", "cf", "mr", "mrs", "dr", "no", "approx",
];

/// Splits text into sentences. Latin sentences end at `.`, `!`, `?` followed by whitespace (not
/// after a common abbreviation, not inside inline code: "run `bazel test //internal/... -c ci`
/// first" is one sentence); CJK sentences at `。！？`; every line break ends one too.
pub fn sentences(text: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut start = 0;
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    let mut i = 0;
    let mut in_code = false;
    while i < chars.len() {
        let (pos, c) = chars[i];
        let next = chars.get(i + 1).map(|x| x.1);
        if c == '`' {
            in_code = !in_code;
        }
        let end_here = match c {
            '\n' => {
                in_code = false;
                true
            }
            _ if in_code => false,
            '。' | '！' | '？' => true,
            // "println! for logging": a `!` after a word, with the sentence going on in
            // lower case, ends no sentence.
            '!' if i > 0
                && chars[i - 1].1.is_alphanumeric()
                && text[pos + 1..]
                    .trim_start_matches([' ', '\t'])
                    .starts_with(|ch: char| ch.is_ascii_lowercase()) =>
            {
                false
            }
            '.' | '!' | '?' => {
                next.is_none_or(char::is_whitespace) && {
                    if c == '.' {
                        let word = text[start..pos]
                            .rsplit(|ch: char| ch.is_whitespace() || ch == '(')
                            .next()
                            .unwrap_or("")
                            .to_ascii_lowercase();
                        !ABBREVIATIONS.contains(&word.as_str())
                    } else {
                        true
                    }
                }
            }
            _ => false,
        };
        if end_here {
            let end = pos + c.len_utf8();
            let s = text[start..end].trim();
            if !s.is_empty() && s != "\n" {
                out.push(s);
            }
            start = end;
        }
        i += 1;
    }
    let s = text[start..].trim();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// English words that carry no subject (dropped from content words).
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "but", "if", "then", "so", "of", "in", "on", "at", "to", "for",
    "from", "by", "with", "without", "as", "is", "are", "was", "were", "be", "been", "being", "it",
    "its", "this", "that", "these", "those", "there", "here", "we", "our", "us", "you", "your",
    "i", "me", "my", "he", "she", "they", "them", "their", "do", "does", "did", "done", "don't",
    "dont", "not", "no", "never", "always", "now", "from", "on", "use", "using", "used", "please",
    "should", "must", "will", "would", "can", "could", "just", "only", "also", "any", "all",
    "every", "some", "when", "what", "which", "who", "how", "why", "where", "into", "out", "up",
    "down", "over", "than", "too", "very", "instead", "rather", "via", "through", "have", "has",
    "had", "get", "gets", "got", "make", "makes", "let", "lets", "let's", "ever", "again",
    "remember", "note", "keep", "mind", "going", "forward", "future", "one", "it's", "that's",
];

/// Lowercased content words of a text (stop words dropped); CJK text contributes its
/// character bigrams.
pub fn content_words(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    walk_content_words(text, &mut |w| {
        out.insert(w);
        false
    });
    out
}

/// Whether any of `text`'s [`content_words`] satisfies `pred`; stops at the first that does
/// (the rest of the text is not stemmed).
pub fn any_content_word(text: &str, mut pred: impl FnMut(&str) -> bool) -> bool {
    walk_content_words(text, &mut |w| pred(&w))
}

/// Hands each content word of `text` to `emit` until it returns true; returns whether it did.
fn walk_content_words(text: &str, emit: &mut dyn FnMut(String) -> bool) -> bool {
    let mut cjk_run: Vec<char> = Vec::new();
    let flush = |run: &mut Vec<char>, emit: &mut dyn FnMut(String) -> bool| {
        let stop = (run.len() == 1 && emit(run[0].to_string()))
            || run.windows(2).any(|w| emit(w.iter().collect()));
        run.clear();
        stop
    };
    let push_word = |word: &mut String, emit: &mut dyn FnMut(String) -> bool| {
        let w = without_contraction(word.trim_matches('\''));
        let stop = w.chars().count() > 1 && !STOPWORDS.contains(&w) && emit(stem(w));
        word.clear();
        stop
    };
    let mut word = String::new();
    for c in text.chars() {
        let stop = if is_cjk(c) {
            let stop = push_word(&mut word, emit);
            cjk_run.push(c);
            stop
        } else if c.is_alphanumeric() || c == '\'' || c == '\u{2019}' || c == '_' {
            let stop = flush(&mut cjk_run, emit);
            if c == '\u{2019}' {
                // A typographic apostrophe ("we’re", as macOS and many editors type it).
                word.push('\'');
            } else {
                word.extend(c.to_lowercase());
            }
            stop
        } else {
            flush(&mut cjk_run, emit) || push_word(&mut word, emit)
        };
        if stop {
            return true;
        }
    }
    flush(&mut cjk_run, emit) || push_word(&mut word, emit)
}

/// An English word without its contraction: "we're" → "we", "caroline's" → "caroline"; a
/// negated auxiliary ("doesn't", "can't") → "not". Function words stay function words, so
/// "we're" shares nothing with another memory's "we're", and the rest is stemmed whole.
fn without_contraction(w: &str) -> &str {
    if w.ends_with("n't") {
        return "not";
    }
    for suffix in ["'re", "'ve", "'ll", "'d", "'m", "'s"] {
        if let Some(base) = w.strip_suffix(suffix)
            && !base.is_empty()
        {
            return base;
        }
    }
    w
}

/// English irregular verbs, past and participle → base form: Snowball leaves "written" and
/// "write", "chose" and "choose" apart ("tests are written with vitest" / "we write tests with
/// vitest"). Forms that are also common nouns or adjectives ("left", "saw", "rose") are left
/// out.
const IRREGULAR_VERBS: &[(&str, &str)] = &[
    ("began", "begin"),
    ("begun", "begin"),
    ("bought", "buy"),
    ("brought", "bring"),
    ("built", "build"),
    ("caught", "catch"),
    ("chose", "choose"),
    ("chosen", "choose"),
    ("came", "come"),
    ("dealt", "deal"),
    ("did", "do"),
    ("done", "do"),
    ("drew", "draw"),
    ("drawn", "draw"),
    ("drove", "drive"),
    ("driven", "drive"),
    ("ate", "eat"),
    ("eaten", "eat"),
    ("fell", "fall"),
    ("fallen", "fall"),
    ("felt", "feel"),
    ("fought", "fight"),
    ("found", "find"),
    ("flew", "fly"),
    ("flown", "fly"),
    ("forgot", "forget"),
    ("forgotten", "forget"),
    ("froze", "freeze"),
    ("frozen", "freeze"),
    ("got", "get"),
    ("gotten", "get"),
    ("gave", "give"),
    ("given", "give"),
    ("went", "go"),
    ("gone", "go"),
    ("grew", "grow"),
    ("grown", "grow"),
    ("held", "hold"),
    ("hid", "hide"),
    ("hidden", "hide"),
    ("kept", "keep"),
    ("knew", "know"),
    ("known", "know"),
    ("led", "lead"),
    ("lent", "lend"),
    ("lost", "lose"),
    ("made", "make"),
    ("meant", "mean"),
    ("met", "meet"),
    ("paid", "pay"),
    ("ran", "run"),
    ("rode", "ride"),
    ("ridden", "ride"),
    ("rang", "ring"),
    ("rung", "ring"),
    ("risen", "rise"),
    ("said", "say"),
    ("seen", "see"),
    ("sought", "seek"),
    ("sold", "sell"),
    ("sent", "send"),
    ("shook", "shake"),
    ("shaken", "shake"),
    ("shot", "shoot"),
    ("showed", "show"),
    ("shown", "show"),
    ("sang", "sing"),
    ("sung", "sing"),
    ("sank", "sink"),
    ("sunk", "sink"),
    ("sat", "sit"),
    ("slept", "sleep"),
    ("spoke", "speak"),
    ("spoken", "speak"),
    ("spent", "spend"),
    ("stood", "stand"),
    ("stole", "steal"),
    ("stolen", "steal"),
    ("stuck", "stick"),
    ("struck", "strike"),
    ("swore", "swear"),
    ("sworn", "swear"),
    ("took", "take"),
    ("taken", "take"),
    ("taught", "teach"),
    ("tore", "tear"),
    ("torn", "tear"),
    ("told", "tell"),
    ("thought", "think"),
    ("threw", "throw"),
    ("thrown", "throw"),
    ("understood", "understand"),
    ("woke", "wake"),
    ("woken", "wake"),
    ("wore", "wear"),
    ("worn", "wear"),
    ("won", "win"),
    ("wrote", "write"),
    ("written", "write"),
    ("rewrote", "rewrite"),
    ("rewritten", "rewrite"),
];

/// `w`'s base form when it is an irregular verb's past or participle, else `w`.
fn irregular_base(w: &str) -> &str {
    IRREGULAR_VERBS
        .iter()
        .find(|(form, _)| *form == w)
        .map_or(w, |(_, base)| base)
}

/// Snowball's English stemmer for plain words ("commits", "committing" → "commit",
/// "directly" → "direct"); a word with digits, underscores or other scripts only loses a
/// plural `s` ("nodes_v2s" stays a name).
fn stem(w: &str) -> String {
    static ENGLISH: LazyLock<Stemmer> = LazyLock::new(|| Stemmer::create(Algorithm::English));
    if w.bytes().all(|b| b.is_ascii_alphabetic() || b == b'\'') {
        ENGLISH.stem(irregular_base(w)).into_owned()
    } else if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") {
        w[..w.len() - 1].to_string()
    } else {
        w.to_string()
    }
}

/// A rough token count for budgets: about four Latin characters per token, one per CJK
/// character.
pub fn approx_tokens(s: &str) -> usize {
    let mut latin = 0usize;
    let mut cjk = 0usize;
    for c in s.chars() {
        if is_cjk(c) {
            cjk += 1;
        } else {
            latin += 1;
        }
    }
    cjk + latin.div_ceil(4)
}

/// At most `max` characters, cut at a word boundary when possible, with `…` when cut. A
/// redaction marker is never cut in half: one that would be is left out whole.
pub fn truncate_chars(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut cut: String = s.chars().take(max.saturating_sub(1)).collect();
    if let Some(open) = cut.rfind('[')
        && !cut[open..].contains(']')
        && s[open..].starts_with(cairn_redact::MARKER_PREFIX)
    {
        cut.truncate(open);
    }
    let trimmed = match cut.rfind(' ') {
        Some(i) if i > cut.len() / 2 => &cut[..i],
        _ => cut.as_str(),
    };
    format!(
        "{}…",
        trimmed.trim_end_matches([' ', ',', ';', ':', '-', '—'])
    )
}

/// Collapses whitespace (including newlines) to single spaces.
pub fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Upper-cases the first character.
pub fn capitalize(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// Ends the text with a full stop (`.` or `。`) unless it already ends with punctuation.
pub fn with_full_stop(s: &str) -> String {
    let t = s
        .trim()
        .trim_end_matches([',', ';', ':', '、', '，', '；', '：']);
    match t.chars().last() {
        None => String::new(),
        Some('.' | '!' | '?' | '。' | '！' | '？' | ')' | '`' | '"' | '」') => t.to_string(),
        Some(c) if is_cjk(c) => format!("{t}。"),
        Some(_) => format!("{t}."),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_leaves_a_redaction_marker_whole_or_out() {
        let s = "Deploys to staging need the token [REDACTED:github-token] from the vault";
        for max in 20..s.len() {
            let t = truncate_chars(s, max);
            assert!(t.chars().count() <= max, "{t}");
            let partial = t.contains("[RED") && !t.contains("[REDACTED:github-token]");
            assert!(!partial, "{max}: {t}");
        }
        assert_eq!(truncate_chars(s, 45), "Deploys to staging need the token…");
    }

    #[test]
    fn splits_sentences() {
        assert_eq!(
            sentences(
                "from now on use pnpm, not npm. This repo has a pnpm-lock.yaml and npm rewrites it."
            ),
            vec![
                "from now on use pnpm, not npm.",
                "This repo has a pnpm-lock.yaml and npm rewrites it."
            ]
        );
        assert_eq!(
            sentences("ありがとう。コミットメッセージは英語で。今回は？"),
            vec!["ありがとう。", "コミットメッセージは英語で。", "今回は？"]
        );
        assert_eq!(
            sentences("e.g. this one\nand that"),
            vec!["e.g. this one", "and that"]
        );
        // Inline code is part of its sentence.
        assert_eq!(
            sentences(
                "from now on run `bazel test //internal/... --config=ci` first. Then tell me."
            ),
            vec![
                "from now on run `bazel test //internal/... --config=ci` first.",
                "Then tell me."
            ]
        );
    }

    /// Contractions are function words, typed with either apostrophe: "we're" is not a
    /// subject two memories can share, and "Caroline's" is Caroline.
    #[test]
    fn contractions_leave_their_base() {
        let w = |t: &str| {
            let mut v: Vec<String> = content_words(t).into_iter().collect();
            v.sort();
            v
        };
        assert_eq!(w("We're on node 22 now"), ["22", "node"]);
        assert_eq!(w("We’re on node 22 now"), ["22", "node"]);
        assert_eq!(
            w("they've moved the API; you'll see"),
            ["api", "move", "see"]
        );
        assert_eq!(
            w("Caroline’s tests doesn't pass"),
            ["carolin", "pass", "test"]
        );
        assert_eq!(w("I'm on macOS, I'd rather not"), ["maco"]);
        assert_eq!(w("rock'n'roll o'clock"), ["o'clock", "rock'n'rol"]);
    }

    #[test]
    fn words() {
        let w = content_words("Don't mock the database in these tests");
        assert!(w.contains("mock") && w.contains("databas") && w.contains("test"));
        assert!(!w.contains("the"));
        // Inflections meet; names with digits or underscores keep their letters.
        assert_eq!(
            content_words("never commit directly to main"),
            content_words("no direct commits to main")
        );
        assert_eq!(
            content_words("tests are written with vitest"),
            content_words("we write tests with vitest")
        );
        assert_eq!(
            content_words("committing node_modules"),
            content_words("commits node_module")
        );
        assert!(content_words("the v18s runners").contains("v18"));
        assert!(content_words("日本語で書く").contains("日本"));
    }

    #[test]
    fn tokens_and_truncation() {
        assert_eq!(approx_tokens("abcd"), 1);
        assert_eq!(approx_tokens("日本語"), 3);
        assert_eq!(truncate_chars("hello big world", 12), "hello big…");
        assert_eq!(with_full_stop("use pnpm"), "use pnpm.");
        assert_eq!(with_full_stop("日本語で書いて"), "日本語で書いて。");
    }
}
