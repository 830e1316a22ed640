//! Secrets met earlier in one transcript, masked wherever they come back.
//!
//! The rules of [`crate::redact`] see a secret by its context: "my password for the registry
//! is Wq7Lm3Np9Xz2" is caught by the prose rule, but the agent's next command,
//! `echo Wq7Lm3Np9Xz2 | docker login --password-stdin`, holds the same value with no context
//! that names it. [`SeenSecrets`] remembers every value the rules masked in one transcript and
//! masks each later copy of it, in any text of that transcript.
//!
//! Within one process the values themselves are kept (in memory only) and found as
//! substrings. Between processes (a transcript read a turn at a time) only [`SeenSecrets::tags`]
//! leave: a seed and, per value, its length, kind and a 32-bit keyed hash; a later process
//! hashes every stretch of its text of a tag's length to find the copies. Nothing in a tag
//! gives the value back, but whoever holds the tags and their seed can test a guess of a weak
//! value against them.

use std::borrow::Cow;
use std::fmt;
use std::hash::{BuildHasher, Hasher};

use crate::{Kind, MARKER_PREFIX, Span, apply, find_spans, redact_to_fixpoint};

/// Values shorter than this are not remembered: too likely to be a word of ordinary text.
const MIN_VALUE: usize = 6;
/// Values longer than this (a key block) are not remembered: its rules find every copy.
const MAX_VALUE: usize = 4096;
/// A value at least this long, of two character classes, is masked even inside a longer word
/// (`-pWq7Lm3Np9Xz2`); a shorter one only where it stands alone.
const STRONG_VALUE: usize = 12;
/// At most this many values (and tags) are kept; the newest win.
const MAX_SEEN: usize = 64;

/// The secrets masked so far in one transcript (see the module doc).
///
/// Its [`fmt::Debug`] output shows counts only.
#[derive(Clone)]
pub struct SeenSecrets {
    seed: u64,
    /// Values met in this process, with the kind their rule gave.
    values: Vec<(String, Kind)>,
    /// Tags of values met before (from [`SeenSecrets::from_tags`]) and in this process.
    tags: Vec<Tag>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Tag {
    len: u16,
    kind: u8,
    /// The value is masked even inside a longer word ([`STRONG_VALUE`]).
    strong: bool,
    hash: u32,
}

impl Tag {
    fn encode(self) -> u64 {
        (u64::from(self.len) << 48)
            | (u64::from(self.strong) << 40)
            | (u64::from(self.kind) << 32)
            | u64::from(self.hash)
    }

    fn decode(n: u64) -> Option<Tag> {
        let tag = Tag {
            len: (n >> 48) as u16,
            kind: ((n >> 32) & 0xff) as u8,
            strong: (n >> 40) & 1 == 1,
            hash: (n & 0xffff_ffff) as u32,
        };
        let valid = (n >> 41) & 0x7f == 0
            && usize::from(tag.kind) < Kind::ALL.len()
            && (MIN_VALUE..=MAX_VALUE).contains(&usize::from(tag.len));
        valid.then_some(tag)
    }

    fn kind(self) -> Kind {
        Kind::ALL
            .get(usize::from(self.kind))
            .copied()
            .unwrap_or(Kind::Secret)
    }
}

impl fmt::Debug for SeenSecrets {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SeenSecrets")
            .field("values", &self.values.len())
            .field("tags", &self.tags.len())
            .finish()
    }
}

impl Default for SeenSecrets {
    fn default() -> Self {
        SeenSecrets::new()
    }
}

impl SeenSecrets {
    /// Nothing seen yet, with a fresh random seed.
    pub fn new() -> SeenSecrets {
        SeenSecrets::with_seed(std::hash::RandomState::new().build_hasher().finish())
    }

    /// Nothing seen yet, with the given seed: transcripts of one store share one, so that a
    /// subagent's transcript can [`SeenSecrets::adopt`] what its session's main one met.
    pub fn with_seed(seed: u64) -> SeenSecrets {
        SeenSecrets {
            seed,
            values: Vec::new(),
            tags: Vec::new(),
        }
    }

    /// Also masks what another transcript's [`SeenSecrets::tags`] know (a subagent's session's
    /// main transcript). Tags made with another seed cannot be compared and are left out.
    pub fn adopt(&mut self, tags: &[u64]) {
        if tags.first() != Some(&self.seed) {
            return;
        }
        for tag in tags[1..].iter().filter_map(|&n| Tag::decode(n)) {
            if !self.tags.contains(&tag) {
                self.tags.push(tag);
            }
        }
    }

    /// Goes on from what [`SeenSecrets::tags`] gave before. Numbers that are not tags are
    /// dropped; no seed at all starts afresh.
    pub fn from_tags(tags: &[u64]) -> SeenSecrets {
        match tags.split_first() {
            Some((&seed, rest)) => SeenSecrets {
                seed,
                values: Vec::new(),
                tags: rest.iter().filter_map(|&n| Tag::decode(n)).collect(),
            },
            None => SeenSecrets::new(),
        }
    }

    /// What a later process needs to go on: the seed, then one tag per value seen (at most
    /// 64, the newest). Holds no value.
    pub fn tags(&self) -> Vec<u64> {
        let mut all = self.tags.clone();
        for (value, kind) in &self.values {
            // The form a tool call's raw JSON arguments hold too.
            let escaped = json_escaped(value);
            for form in std::iter::once(value.as_str()).chain(escaped.as_deref()) {
                let tag = self.tag_of(form, *kind);
                if !all.contains(&tag) {
                    all.push(tag);
                }
            }
        }
        let skip = all.len().saturating_sub(MAX_SEEN);
        std::iter::once(self.seed)
            .chain(all[skip..].iter().map(|t| t.encode()))
            .collect()
    }

    /// The seed its tags are made with ([`SeenSecrets::new`] draws one at random).
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// True when no secret has been seen.
    pub fn is_empty(&self) -> bool {
        self.values.is_empty() && self.tags.is_empty()
    }

    /// Like [`crate::redact`], and also masks every copy of a value seen before (in this
    /// text or an earlier one); the values the rules find here are remembered.
    pub fn redact<'a>(&mut self, text: &'a str) -> Cow<'a, str> {
        let spans = find_spans(text);
        let out = if spans.is_empty() {
            Cow::Borrowed(text)
        } else {
            let found = &mut |t: &str, s: &[Span]| self.remember(t, s);
            Cow::Owned(redact_to_fixpoint(text, spans, &mut Vec::new(), found).0)
        };
        if self.is_empty() {
            return out;
        }
        let spans = self.copies(&out);
        if spans.is_empty() {
            out
        } else {
            Cow::Owned(apply(&out, &spans))
        }
    }

    fn remember(&mut self, text: &str, spans: &[Span]) {
        for s in spans {
            let value = text[s.start..s.end].trim();
            if worth_following(value)
                && !value.contains(MARKER_PREFIX)
                && !self.values.iter().any(|(v, _)| v == value)
            {
                if self.values.len() == MAX_SEEN {
                    self.values.remove(0);
                }
                self.values.push((value.to_owned(), s.kind));
            }
        }
    }

    fn tag_of(&self, value: &str, kind: Kind) -> Tag {
        Tag {
            len: value.len() as u16,
            kind: Kind::ALL.iter().position(|&k| k == kind).unwrap_or(0) as u8,
            strong: is_strong(value),
            hash: self.hash(value.as_bytes()),
        }
    }

    fn hash(&self, bytes: &[u8]) -> u32 {
        (xxhash_rust::xxh3::xxh3_64_with_seed(bytes, self.seed) >> 32) as u32
    }

    /// Where `text` holds a copy of a value seen before, sorted and without overlaps.
    fn copies(&self, text: &str) -> Vec<Span> {
        let mut found = Vec::new();
        for (value, kind) in &self.values {
            let strong = is_strong(value);
            // A tool call's arguments are raw JSON: a value with a quote or a backslash is
            // there escaped.
            let escaped = json_escaped(value);
            for form in std::iter::once(value.as_str()).chain(escaped.as_deref()) {
                for (start, _) in text.match_indices(form) {
                    let end = start + form.len();
                    if strong || stands_alone(text, start, end) {
                        found.push(Span {
                            start,
                            end,
                            kind: *kind,
                        });
                    }
                }
            }
        }
        if !self.tags.is_empty() {
            self.tagged_copies(text, &mut found);
        }
        found.sort_by_key(|s| (s.start, std::cmp::Reverse(s.end)));
        let mut spans: Vec<Span> = Vec::with_capacity(found.len());
        for s in found {
            match spans.last() {
                Some(last) if s.start < last.end => {}
                _ => spans.push(s),
            }
        }
        // Never cut into a marker written before.
        spans.retain(|s| !inside_marker(text, s.start));
        spans
    }

    /// Copies in `text` of a value known by its tag only: every stretch of text of a tag's
    /// length is hashed (a strong value is found anywhere, glued to other text as in
    /// `-pVALUE` or `deploy:VALUE`; a weaker one where it stands alone).
    fn tagged_copies(&self, text: &str, out: &mut Vec<Span>) {
        let mut lens: Vec<usize> = self.tags.iter().map(|t| usize::from(t.len)).collect();
        lens.sort_unstable();
        lens.dedup();
        let bytes = text.as_bytes();
        for (start, _) in text.char_indices() {
            for &len in &lens {
                let end = start + len;
                if end > bytes.len() {
                    break;
                }
                if !text.is_char_boundary(end) {
                    continue;
                }
                let hash = self.hash(&bytes[start..end]);
                if let Some(tag) = self.tags.iter().find(|t| {
                    usize::from(t.len) == len
                        && t.hash == hash
                        && (t.strong || stands_alone(text, start, end))
                }) {
                    out.push(Span {
                        start,
                        end,
                        kind: tag.kind(),
                    });
                }
            }
        }
    }
}

/// Whether a value found once is worth masking wherever it comes back: long enough, and not
/// a word ordinary text uses ("postgres" in `POSTGRES_PASSWORD=postgres`, a branch name
/// "develop"): it has a letter and a digit or a sign, or it is long and random-looking.
fn worth_following(value: &str) -> bool {
    let b = value.as_bytes();
    let letter = value.chars().any(char::is_alphabetic);
    let digit = b.iter().any(u8::is_ascii_digit);
    let sign = value.chars().any(|c| !c.is_alphanumeric());
    (MIN_VALUE..=MAX_VALUE).contains(&value.len())
        && !is_version(value)
        && ((letter && (digit || sign)) || (value.len() >= 16 && classes(value) >= 2))
}

/// A value masked even inside a longer word (`-pVALUE`): long, of two character classes, or
/// of eight characters or more with both cases and a digit or a sign (`Hq4!rTz9wP`).
fn is_strong(value: &str) -> bool {
    let b = value.as_bytes();
    (value.len() >= STRONG_VALUE && classes(value) >= 2)
        || (value.len() >= 8
            && classes(value) >= 3
            && b.iter().any(u8::is_ascii_uppercase)
            && b.iter().any(u8::is_ascii_lowercase))
}

/// `value` as a JSON string holds it, when that differs (a quote or a backslash in it).
fn json_escaped(value: &str) -> Option<String> {
    value
        .contains(['"', '\\'])
        .then(|| value.replace('\\', "\\\\").replace('"', "\\\""))
}

/// A version (`1.2.3`, `v1.2.3-rc1`): a value the rules took for a secret that text names
/// for other reasons.
fn is_version(value: &str) -> bool {
    let v = value.strip_prefix(['v', 'V']).unwrap_or(value);
    let (core, _) = v.split_once(['-', '+']).unwrap_or((v, ""));
    core.split('.').count() >= 2
        && core
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
}

/// How many of {lower case, upper case, digit, other} `s` has.
fn classes(s: &str) -> usize {
    let b = s.as_bytes();
    [
        b.iter().any(u8::is_ascii_lowercase),
        b.iter().any(u8::is_ascii_uppercase),
        b.iter().any(u8::is_ascii_digit),
        b.iter().any(|c| !c.is_ascii_alphanumeric()),
    ]
    .iter()
    .filter(|&&x| x)
    .count()
}

/// No letter, digit or `_` right before `start` or right after `end`, nor a `.` or `-` that
/// goes on with one (`VALUE.txt`, `VALUE-backup`, `x.VALUE`: a longer name).
fn stands_alone(text: &str, start: usize, end: usize) -> bool {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    let joins = |c: char| matches!(c, '.' | '-');
    let mut before = text[..start].chars().rev();
    let mut after = text[end..].chars();
    let glued_before = match before.next() {
        Some(c) if word(c) => true,
        Some(c) if joins(c) => before.next().is_some_and(word),
        _ => false,
    };
    let glued_after = match after.next() {
        Some(c) if word(c) => true,
        Some(c) if joins(c) => after.next().is_some_and(word),
        _ => false,
    };
    !glued_before && !glued_after
}

/// Whether byte `at` falls inside a `[REDACTED:…]` marker.
fn inside_marker(text: &str, at: usize) -> bool {
    let before = &text[..at];
    before
        .rfind(MARKER_PREFIX)
        .is_some_and(|m| !before[m..].contains(']'))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A password the prompt states comes back in the agent's command and in its reply.
    #[test]
    fn a_stated_password_is_masked_where_it_comes_back() {
        let mut seen = SeenSecrets::new();
        let prompt = seen.redact("my password for the registry is Wq7Lm3Np9Xz2");
        assert_eq!(
            prompt,
            "my password for the registry is [REDACTED:password]"
        );
        let command =
            seen.redact(r#"{"command":"echo Wq7Lm3Np9Xz2 | docker login -u me --password-stdin"}"#);
        assert_eq!(
            command,
            r#"{"command":"echo [REDACTED:password] | docker login -u me --password-stdin"}"#
        );
        let glued = seen.redact("mysql -hdb -pWq7Lm3Np9Xz2 app");
        assert!(!glued.contains("Wq7Lm3Np9Xz2"), "{glued}");
        let reply = seen.redact("Logged in with Wq7Lm3Np9Xz2.");
        assert_eq!(reply, "Logged in with [REDACTED:password].");
        // Text without the value is left as it is, borrowed.
        assert!(matches!(seen.redact("ls -la"), Cow::Borrowed(_)));
    }

    /// A value with a quote or a backslash is found escaped in a tool call's raw JSON too.
    #[test]
    fn a_value_is_found_escaped_in_json() {
        let mut seen = SeenSecrets::new();
        let said = seen.redact(r"export DB_PASSWORD='Hq4rT\z9wP!'");
        assert_eq!(said, "export DB_PASSWORD='[REDACTED:password]'");
        let args = seen.redact(r#"{"command":"printf '%s' 'Hq4rT\\z9wP!' > .pgpass"}"#);
        assert_eq!(
            args,
            r#"{"command":"printf '%s' '[REDACTED:password]' > .pgpass"}"#
        );
    }

    /// One text that states a value and uses it again.
    #[test]
    fn a_value_stated_and_used_in_one_text() {
        let mut seen = SeenSecrets::new();
        let out = seen.redact("the db password is Hq4!rTz9wP; run PGPASS Hq4!rTz9wP psql");
        assert!(!out.contains("Hq4!rTz9wP"), "{out}");
    }

    /// A later process goes on from the tags: whole words are masked, nothing in the tags is
    /// the value.
    #[test]
    fn tags_carry_a_value_to_a_later_process_without_holding_it() {
        let mut first = SeenSecrets::new();
        let _ = first.redact("AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEYab");
        let _ = first.redact("the staging password is Zr8mQ2vLx5");
        let tags = first.tags();
        assert_eq!(tags.len(), 3, "a seed and two tags");
        let printed = format!("{tags:?} {first:?}");
        assert!(!printed.contains("Zr8mQ2vLx5") && !printed.contains("wJalrX"));

        let mut later = SeenSecrets::from_tags(&tags);
        assert_eq!(
            later.redact("echo \"wJalrXUtnFEMIK7MDENGbPxRfiCYEXAMPLEKEYab\" > k; ssh -p 22 x"),
            "echo \"[REDACTED:aws-secret-key]\" > k; ssh -p 22 x"
        );
        assert_eq!(
            later.redact("It worked with Zr8mQ2vLx5, then Zr8mQ2vLx5x failed."),
            "It worked with [REDACTED:password], then [REDACTED:password]x failed."
        );
        // Tags go on accumulating, without duplicates.
        assert_eq!(later.tags(), tags);
    }

    /// A later process finds a strong value glued to other text, and a value holding a sign
    /// where it stands alone.
    #[test]
    fn tags_find_glued_copies_and_values_with_signs() {
        let mut first = SeenSecrets::new();
        let _ = first.redact("my password for the registry is Wq7Lm3Np9Xz2");
        let _ = first.redact("the db password's Tr0ub4dor&3");
        let mut later = SeenSecrets::from_tags(&first.tags());
        assert_eq!(
            later.redact("keep the registry user deploy:Wq7Lm3Np9Xz2 in mind"),
            "keep the registry user deploy:[REDACTED:password] in mind"
        );
        let out =
            later.redact("mysql -h db -u root -pWq7Lm3Np9Xz2 && mysql -u root -p'Tr0ub4dor&3'");
        assert!(
            !out.contains("Wq7Lm3Np9Xz2") && !out.contains("Tr0ub4dor&3"),
            "{out}"
        );
        assert_eq!(
            later.redact("connected as root with Tr0ub4dor&3."),
            "connected as root with [REDACTED:password]."
        );
    }

    /// A short password glued to a flag is masked; a weak one inside a longer name is not; a
    /// version is not followed; an escaped copy is found in a later pass.
    #[test]
    fn glued_short_values_names_versions_and_escapes() {
        let mut first = SeenSecrets::new();
        let _ = first.redact("the db password is Hq4!rTz9wP");
        assert!(
            !first
                .redact("mysql -pHq4!rTz9wP works too")
                .contains("Hq4!rTz9wP")
        );
        let _ = first.redact("password: s3cretz");
        assert_eq!(
            first.redact("see s3cretz.txt and s3cretz-backup"),
            "see s3cretz.txt and s3cretz-backup"
        );
        assert_eq!(
            first.redact("it was s3cretz."),
            "it was [REDACTED:password]."
        );
        let _ = first.redact("export DB_PASSWORD=v1.2.3-rc1");
        assert_eq!(first.redact("tag v1.2.3-rc1.1"), "tag v1.2.3-rc1.1");
        let _ = first.redact(r"export DB_PASSWORD='Hq4rT\z9wP!'");
        let mut later = SeenSecrets::from_tags(&first.tags());
        let args = later.redact(r#"{"command":"printf '%s' 'Hq4rT\\z9wP!' | login"}"#);
        assert!(!args.contains("z9wP"), "{args}");
        assert!(!later.redact("xHq4!rTz9wPy").contains("Hq4!rTz9wP"));
    }

    /// A value that is an ordinary word is masked where the rules find it, and nowhere else.
    #[test]
    fn ordinary_words_are_not_followed() {
        let mut seen = SeenSecrets::new();
        let out = seen.redact(
            "POSTGRES_PASSWORD=postgres docker compose up -d db && export REDIS_PASSWORD=develop",
        );
        assert!(out.contains("POSTGRES_PASSWORD=[REDACTED:"), "{out}");
        assert!(seen.is_empty());
        assert_eq!(
            seen.redact("we use the postgres image 16; feature branches merge into develop"),
            "we use the postgres image 16; feature branches merge into develop"
        );
    }

    /// A short value is masked only where it stands alone; values too short to tell from a
    /// word are not remembered.
    #[test]
    fn short_values_stand_alone_or_not_at_all() {
        let mut seen = SeenSecrets::new();
        let _ = seen.redact("password: Tr0ub4");
        assert_eq!(
            seen.redact("use Tr0ub4 here"),
            "use [REDACTED:password] here"
        );
        assert_eq!(seen.redact("xTr0ub4y stays"), "xTr0ub4y stays");

        let mut seen = SeenSecrets::new();
        let _ = seen.redact("password: ab1");
        assert!(seen.is_empty());
        assert_eq!(seen.redact("tab1 and ab1"), "tab1 and ab1");
    }

    /// Garbage where tags were expected starts afresh instead of failing.
    #[test]
    fn numbers_that_are_not_tags_are_dropped() {
        let seen = SeenSecrets::from_tags(&[7, u64::MAX, 0]);
        assert!(seen.is_empty());
        assert!(SeenSecrets::from_tags(&[]).is_empty());
    }
}
