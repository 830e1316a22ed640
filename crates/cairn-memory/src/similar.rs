//! Is a new memory a duplicate of an existing one, or does it replace it?
//!
//! Static embeddings alone cannot tell "don't mock the database" from "don't mock the
//! network" (cosine 0.89) while "never mock the database in integration tests" scores lower
//! (0.79), so the decision combines three signals:
//!
//! * **content words** (stop words dropped, light stemming, CJK bigrams): Jaccard overlap, and
//!   the share of the smaller set found in the larger (same subject);
//! * **polarity**: words inside a negated span ("not X", "instead of X", "never X", "不要",
//!   "ではなく") versus outside it. A word that is wanted in one memory and rejected in the other
//!   ("use pnpm, not npm" / "use yarn, not pnpm") is a contradiction;
//! * **cosine** of the memories' embeddings, as computed by the recall index.
//!
//! Decision (same scope, same type, the existing memory live):
//! * duplicate → the existing memory is updated: Jaccard ≥ 0.75, or cosine ≥ 0.93 with
//!   Jaccard ≥ 0.6, in both cases without a contradiction;
//! * supersede → the new memory replaces the old one: the same subject (overlap ≥ 0.5,
//!   cosine ≥ 0.75) and either a contradiction, or, for facts (project, reference, user), a
//!   changed value ("Postgres 16" → "Postgres 17");
//! * otherwise the new memory stands beside the old one.

use std::collections::HashSet;

use crate::model::MemoryType;
use crate::text::content_words;

/// What to do with a new memory relative to an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Say the same thing: update the existing memory.
    Duplicate,
    /// Same subject, new content: the new memory replaces the old.
    Supersedes,
    /// Unrelated.
    Distinct,
}

const NEGATORS: &[&str] = &[
    "not", "no", "never", "don't", "dont", "avoid", "instead", "without", "rather", "stop",
];

/// Content words split by polarity: (wanted, rejected).
fn polarity(text: &str) -> (HashSet<String>, HashSet<String>) {
    let mut pos = HashSet::new();
    let mut neg = HashSet::new();
    // Latin: a negator flips the polarity until the end of its clause.
    for clause in text.split([',', ';', '.', '—', '–', '(', ')', '\n']) {
        let mut negated = false;
        for raw in clause.split_whitespace() {
            let w = raw
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase();
            if NEGATORS.contains(&w.as_str()) {
                negated = true;
                continue;
            }
            for cw in content_words(&w) {
                if negated {
                    neg.insert(cw);
                } else {
                    pos.insert(cw);
                }
            }
        }
    }
    // CJK: the clause after a negator (不要, 不用, 别, 而不是, ではなく, じゃなく, 使わない) is rejected.
    for marker in [
        "而不是",
        "不要用",
        "不用",
        "不要",
        "别用",
        "ではなく",
        "じゃなく",
    ] {
        if let Some(i) = text.find(marker) {
            let tail = &text[i + marker.len()..];
            let end = tail.find(['，', '。', '、', ',']).unwrap_or(tail.len());
            for cw in content_words(&tail[..end]) {
                pos.remove(&cw);
                neg.insert(cw);
            }
        }
    }
    (pos, neg)
}

/// Decides how a new memory relates to an existing one of the same scope.
pub fn relation(
    new_type: MemoryType,
    new_text: &str,
    old_type: MemoryType,
    old_text: &str,
    cosine: f32,
) -> Relation {
    if new_type != old_type {
        return Relation::Distinct;
    }
    let a = content_words(new_text);
    let b = content_words(old_text);
    if a.is_empty() || b.is_empty() {
        return if normalized(new_text) == normalized(old_text) {
            Relation::Duplicate
        } else {
            Relation::Distinct
        };
    }
    let inter = a.intersection(&b).count() as f32;
    let union = a.union(&b).count() as f32;
    let jaccard = inter / union;
    let overlap = inter / a.len().min(b.len()) as f32;
    let (ap, an) = polarity(new_text);
    let (bp, bn) = polarity(old_text);
    let contradiction =
        ap.intersection(&bn).next().is_some() || an.intersection(&bp).next().is_some();
    if !contradiction && (jaccard >= 0.75 || (cosine >= 0.93 && jaccard >= 0.6)) {
        return Relation::Duplicate;
    }
    let same_subject = overlap >= 0.5 && cosine >= 0.75;
    let is_fact = matches!(
        new_type,
        MemoryType::Project | MemoryType::Reference | MemoryType::User
    );
    if same_subject && (contradiction || (is_fact && jaccard < 0.75)) {
        return Relation::Supersedes;
    }
    Relation::Distinct
}

fn normalized(s: &str) -> String {
    s.chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use MemoryType::*;

    fn rel(t: MemoryType, a: &str, b: &str) -> Relation {
        let c = cairn_embed::cosine(&cairn_embed::embed(a), &cairn_embed::embed(b));
        relation(t, a, t, b, c)
    }

    #[test]
    fn decisions() {
        assert_eq!(
            rel(
                Feedback,
                "Always use pnpm instead of npm.",
                "Use pnpm, not npm."
            ),
            Relation::Duplicate
        );
        assert_eq!(
            rel(Feedback, "Use yarn, not pnpm.", "Use pnpm, not npm."),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Feedback,
                "Don't mock the network in tests.",
                "Don't mock the database in these tests."
            ),
            Relation::Distinct
        );
        assert_eq!(
            rel(
                Feedback,
                "Never mock the database in integration tests.",
                "Don't mock the database in these tests."
            ),
            Relation::Duplicate
        );
        assert_eq!(
            rel(Project, "We use Postgres 17.", "We use Postgres 16."),
            Relation::Supersedes
        );
        assert_eq!(
            rel(Project, "We use vitest.", "We use pnpm."),
            Relation::Distinct
        );
        assert_eq!(
            rel(Feedback, "Use pnpm, not npm.", "Use pnpm, not npm."),
            Relation::Duplicate
        );
        assert_eq!(
            relation(Feedback, "Use pnpm.", User, "Use pnpm.", 1.0),
            Relation::Distinct
        );
    }
}
