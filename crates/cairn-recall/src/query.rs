//! Free text -> safe FTS5 query, and text preparation for the FTS5 index.
//!
//! The index uses `tokenize='porter unicode61 remove_diacritics 2'`. unicode61 keeps a run
//! of CJK ideographs or kana as one token, so both indexed text and queries are passed
//! through [`space_cjk`], which isolates every such character; queries then match CJK by
//! single characters and by adjacent pairs (two-token phrases).

/// English function words dropped from queries (they carry no topical signal and make
/// FTS5 score nearly every document). Documents are indexed in full. "won" is not one:
/// lists built for "won't" carry it, but it is also what a user says they won ("how many
/// tournaments has Nate won?" lost its verb; LoCoMo dev session hit@1 0.761 -> 0.764).
const STOPWORDS: &[&str] = &[
    "a",
    "about",
    "above",
    "after",
    "again",
    "against",
    "all",
    "am",
    "an",
    "and",
    "any",
    "are",
    "aren",
    "as",
    "at",
    "be",
    "because",
    "been",
    "before",
    "being",
    "below",
    "between",
    "both",
    "but",
    "by",
    "can",
    "could",
    "couldn",
    "d",
    "did",
    "didn",
    "do",
    "does",
    "doesn",
    "doing",
    "don",
    "down",
    "during",
    "each",
    "few",
    "for",
    "from",
    "further",
    "had",
    "hadn",
    "has",
    "hasn",
    "have",
    "haven",
    "having",
    "he",
    "her",
    "here",
    "hers",
    "herself",
    "him",
    "himself",
    "his",
    "how",
    "i",
    "if",
    "in",
    "into",
    "is",
    "isn",
    "it",
    "its",
    "itself",
    "just",
    "ll",
    "m",
    "me",
    "might",
    "more",
    "most",
    "must",
    "my",
    "myself",
    "no",
    "nor",
    "not",
    "now",
    "o",
    "of",
    "off",
    "on",
    "once",
    "only",
    "or",
    "other",
    "our",
    "ours",
    "ourselves",
    "out",
    "over",
    "own",
    "re",
    "s",
    "same",
    "shall",
    "she",
    "should",
    "shouldn",
    "so",
    "some",
    "such",
    "t",
    "than",
    "that",
    "the",
    "their",
    "theirs",
    "them",
    "themselves",
    "then",
    "there",
    "these",
    "they",
    "this",
    "those",
    "through",
    "to",
    "too",
    "under",
    "until",
    "up",
    "us",
    "ve",
    "very",
    "was",
    "wasn",
    "we",
    "were",
    "weren",
    "what",
    "when",
    "where",
    "which",
    "while",
    "who",
    "whom",
    "why",
    "will",
    "with",
    "would",
    "wouldn",
    "y",
    "you",
    "your",
    "yours",
    "yourself",
    "yourselves",
];

/// Most distinct terms kept from one query (bounds FTS5 work on pasted walls of text).
pub const MAX_QUERY_TERMS: usize = 48;

/// True for a stop word (input must be lowercase).
pub fn is_stopword(word: &str) -> bool {
    STOPWORDS.binary_search(&word).is_ok()
}

/// Characters written without spaces between words that get one token each:
/// CJK ideographs (as in BERT) plus hiragana, katakana and CJK symbols/fullwidth forms.
pub fn is_spaced_script(c: char) -> bool {
    cairn_embed::is_cjk(c) || matches!(c as u32, 0x3040..=0x30FF | 0x31F0..=0x31FF)
}

/// Returns `text` with a space on both sides of every CJK ideograph or kana, so that the
/// unicode61 tokenizer indexes each as its own token. Other text is unchanged (borrowed).
pub fn space_cjk(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(is_spaced_script) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + text.len() / 2);
    for c in text.chars() {
        if is_spaced_script(c) {
            out.push(' ');
            out.push(c);
            out.push(' ');
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Lowercased words of `text`, split at every character that is not alphanumeric (as
/// unicode61 does), CJK characters as single-character words; duplicates kept.
pub fn words(text: &str) -> Vec<String> {
    let mut all: Vec<String> = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        if is_spaced_script(c) {
            if !cur.is_empty() {
                all.push(std::mem::take(&mut cur));
            }
            all.push(c.to_string());
        } else if c.is_alphanumeric() {
            cur.extend(c.to_lowercase());
        } else if !cur.is_empty() {
            all.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        all.push(cur);
    }
    all
}

/// Lowercased content words of `text` ([`words`]), stop words removed unless nothing else
/// is left, duplicates removed (first occurrence order), at most [`MAX_QUERY_TERMS`].
pub fn query_terms(text: &str) -> Vec<String> {
    let all = words(text);
    let mut seen = std::collections::HashSet::new();
    let content: Vec<String> = all
        .iter()
        .filter(|t| !is_stopword(t))
        .filter(|t| seen.insert((*t).clone()))
        .cloned()
        .collect();
    let mut terms = if content.is_empty() {
        let mut seen = std::collections::HashSet::new();
        all.into_iter().filter(|t| seen.insert(t.clone())).collect()
    } else {
        content
    };
    terms.truncate(MAX_QUERY_TERMS);
    terms
}

/// Quotes one term as an FTS5 string (double quotes doubled), so that FTS5 syntax in user
/// text (`AND`, `NEAR`, `*`, `:`, `^`, parentheses...) is never interpreted.
pub fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Builds an FTS5 MATCH expression that ORs the query's terms (and, for runs of CJK
/// characters, their adjacent pairs as two-token phrases). `None` when the text has no
/// searchable term.
pub fn fts_match_expr(text: &str) -> Option<String> {
    fts_match_terms(&query_terms(text), Some(text))
}

/// Builds an FTS5 MATCH expression that ORs `terms`; with `cjk_source`, adjacent CJK
/// characters of that text are added as two-token phrases. `None` without terms.
pub fn fts_match_terms(terms: &[String], cjk_source: Option<&str>) -> Option<String> {
    if terms.is_empty() {
        return None;
    }
    let mut parts: Vec<String> = terms.iter().map(|t| quote(t)).collect();
    if let Some(text) = cjk_source {
        let mut seen = std::collections::HashSet::new();
        for (a, b) in cjk_pairs(text) {
            let phrase = format!("\"{a} {b}\"");
            if seen.insert(phrase.clone()) && parts.len() < 2 * MAX_QUERY_TERMS {
                parts.push(phrase);
            }
        }
    }
    Some(parts.join(" OR "))
}

/// Whether `text` has two adjacent CJK characters, which [`fts_match_terms`] adds as a
/// two-token phrase.
pub fn has_cjk_pairs(text: &str) -> bool {
    cjk_pairs(text).next().is_some()
}

/// Adjacent CJK characters of `text`, in order (repeats included).
fn cjk_pairs(text: &str) -> impl Iterator<Item = (char, char)> + '_ {
    text.chars()
        .zip(text.chars().skip(1))
        .filter(|(a, b)| is_spaced_script(*a) && is_spaced_script(*b))
}

/// Number of documents of `recall_fts` that contain `term` in a searched column, counted up
/// to `cap` (FTS5 walks the term's posting list without scoring anything).
pub(crate) fn doc_count(
    conn: &rusqlite::Connection,
    term: &str,
    cap: usize,
) -> rusqlite::Result<usize> {
    let expr = format!("{{name description body keywords}} : {}", quote(term));
    let n: i64 = conn
        .prepare_cached(
            "SELECT count(*) FROM (SELECT 1 FROM recall_fts WHERE recall_fts MATCH ?1 LIMIT ?2)",
        )?
        .query_row(rusqlite::params![expr, cap as i64], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stopwords_sorted() {
        let mut s = STOPWORDS.to_vec();
        s.sort_unstable();
        s.dedup();
        assert_eq!(s, STOPWORDS);
    }

    #[test]
    fn terms_drop_stopwords_and_punctuation() {
        assert_eq!(
            query_terms("Which package manager should I use?"),
            ["package", "manager", "use"]
        );
        assert_eq!(query_terms("the THE The"), ["the"]);
        assert_eq!(
            query_terms("How many tournaments has Nate won?"),
            ["many", "tournaments", "nate", "won"]
        );
        assert_eq!(query_terms("what is it"), ["what", "is", "it"]);
        assert!(query_terms("  ?!  ").is_empty());
        assert_eq!(
            query_terms("don't use \"npm\" AND NEAR(x)"),
            ["use", "npm", "near", "x"]
        );
    }

    #[test]
    fn match_expr_is_quoted() {
        assert_eq!(
            fts_match_expr("use pnpm, not npm").as_deref(),
            Some("\"use\" OR \"pnpm\" OR \"npm\"")
        );
        assert_eq!(fts_match_expr(""), None);
        assert_eq!(fts_match_expr("..."), None);
        assert_eq!(quote("a\"b"), "\"a\"\"b\"");
    }

    #[test]
    fn cjk_terms_and_phrases() {
        assert_eq!(
            query_terms("包管理器 pnpm"),
            ["包", "管", "理", "器", "pnpm"]
        );
        let e = fts_match_expr("包管理").unwrap_or_default();
        assert_eq!(e, "\"包\" OR \"管\" OR \"理\" OR \"包 管\" OR \"管 理\"");
        assert_eq!(space_cjk("用pnpm管理"), " 用 pnpm 管  理 ");
        assert!(matches!(space_cjk("plain"), std::borrow::Cow::Borrowed(_)));
    }
}
