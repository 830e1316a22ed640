//! Is a new memory a duplicate of an existing one, or does it replace it?
//!
//! Static embeddings alone cannot tell "don't mock the database" from "don't mock the
//! network" (cosine 0.89) while "never mock the database in integration tests" scores lower
//! (0.79), so the decision combines four signals:
//!
//! * **content words** (stop words dropped, Snowball stemming, CJK bigrams): Jaccard overlap, and
//!   the share of the smaller set found in the larger (same subject);
//! * **identifiers**: numbers and versions ("18", "v3", "5433", "2026-11-26"), words with
//!   digits ("svc12"), single capital letters ("service A"), flags ("-q", "--sql"),
//!   environments ("staging", "prod", "local", "CI"). Two memories whose identifiers
//!   differ on both sides are never the same memory: "the build uses node 18" / "… node 22"
//!   or "deploy service A with chart v2" / "service B with chart v3" are not duplicates;
//! * **polarity**: words inside a negated span ("not X", "instead of X", "never X", "不要",
//!   "ではなく", and what a clause says is gone: "X is gone", "X was removed") versus outside
//!   it, and what a change left behind: "moved from X to Y", "Y replaced X", "replaced X with
//!   Y", "dropped X for Y"). A word that is wanted in one memory and rejected in the other
//!   ("use pnpm, not npm" / "use yarn, not pnpm"), or another choice against the same rejected
//!   one ("use pnpm, not npm" / "use yarn, not npm"), or a rule turned round ("never use
//!   semicolons" / "always use semicolons"; not "never commit without running the tests"), is
//!   a contradiction;
//! * **cosine** of the memories' embeddings, as computed by the recall index;
//! * **the language to answer in**: two rules that each name one ("answer me in English",
//!   "返事は日本語で") are one choice, whatever language they are written in: the same language
//!   is a duplicate, another replaces it.
//!
//! Two memories in Japanese or Chinese are compared by [`cjk`], on their words rather than
//! their character pairs.
//!
//! Decision (same scope; the same type, or feedback and project for a duplicate; the existing
//! memory live):
//! * duplicate → the existing memory is updated: Jaccard ≥ 0.75, or cosine ≥ 0.93 with
//!   Jaccard ≥ 0.6, or the same subject with no word the old memory lacks; in all cases
//!   without a contradiction, without an identifier only the new memory has, and without one
//!   word put in another's place ("owned by Alice's team" / "… Bob's team": the new memory
//!   would be lost; other forms of one word, "PostgreSQL" / "Postgres", "4" / "four", and
//!   words for the scope a memory has, "in this repo", are not such a word);
//! * supersede → the new memory replaces the old one: the same subject (overlap ≥ 0.5,
//!   cosine ≥ 0.75) and either a contradiction, or a changed value — every word that differs,
//!   on both sides, is a number or version ("Postgres 16" → "Postgres 17");
//! * refine → the new memory replaces the old one and keeps its Why and How when it has none:
//!   the same subject, and the new memory says all the old one did and more — any words for a
//!   fact ("We use Postgres" → "… Postgres 17 with pgvector"); for a rule, identifiers ("run
//!   pytest -x" → "… -x -q"), a further item ("use black for formatting" → "…, and isort for
//!   imports") or the alternative ("use pnpm" → "use pnpm, not npm"). Other words narrow a
//!   rule: "never use sudo pip install" after "never use sudo" is a duplicate of the broader
//!   rule, and "never use sudo" after "never use sudo pip install" stands beside it;
//! * the same kind of thing qualified by other words ("for the billing pipeline" / "for the
//!   email pipeline", "for API tests" / "for browser tests") is two things: the memories stand
//!   side by side whatever else they share or contradict;
//! * a fact whose subject is said to have changed ("the staging dashboard moved to …", "my
//!   timezone is … now", "the freeze got moved to December 3") replaces the fact about the same
//!   subject (the words before its verb), unless the new value names another environment;
//! * a rule turned round (always ↔ never, "stop …", "no longer need to …") for another target
//!   ("never use tabs in YAML files" / "always use tabs in Makefiles") is another rule, unless
//!   the new one names what came instead (a replacement);
//! * otherwise the new memory stands beside the old one: facts that differ in words, not only
//!   in values ("the billing service listens on 8001" / "the auth service listens on 9443",
//!   "the staging DB is on port 5433" / "the prod DB is on port 5432") are two facts.

mod cjk;

use std::collections::HashSet;
use std::sync::LazyLock;

use crate::model::MemoryType;
use crate::text::content_words;

/// What to do with a new memory relative to an existing one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Relation {
    /// Say the same thing: update the existing memory.
    Duplicate,
    /// Same subject, new content: the new memory replaces the old.
    Supersedes,
    /// The new memory says all the old one did, and more: it replaces the old one and keeps
    /// its Why and How to apply when it has none of its own.
    Refines,
    /// Unrelated.
    Distinct,
}

const NEGATORS: &[&str] = &[
    "not", "no", "never", "don't", "dont", "avoid", "instead", "without", "rather", "stop", "skip",
];

/// Words that open a preference, after which `over` names the rejected choice.
const PREFERENCES: &[&str] = &["prefer", "favor", "favour", "choose", "pick"];

/// Words that say a fact changed ("the staging DB *moved to* db2", "the API *is now* on
/// v2"): with them, a new identifier replaces the old one instead of naming another thing.
const CHANGE_WORDS: &[&str] = &[
    "moved",
    "now",
    "changed",
    "migrated",
    "switched",
    "renamed",
    "replaced",
    "longer",
    "retired",
    "upgraded",
    "bumped",
    "downgraded",
    "transferred",
];

/// The words before "is gone", "was removed", "is deprecated" … in a clause.
fn retired_subject(clause: &str) -> Option<&str> {
    const AUX: &[&str] = &[
        " is ",
        " are ",
        " was ",
        " were ",
        " has been ",
        " have been ",
    ];
    const GONE: &[&str] = &[
        "shut down",
        "decommissioned",
        "sunset",
        "turned off",
        "gone",
        "dead",
        "removed",
        "deprecated",
        "retired",
        "dropped",
        "obsolete",
        "deleted",
    ];
    let lower = clause.to_ascii_lowercase();
    AUX.iter().find_map(|aux| {
        let i = lower.find(aux)?;
        let rest = lower[i + aux.len()..].trim_start();
        let rest = rest.strip_prefix("now ").unwrap_or(rest);
        let rest = rest.strip_prefix("being ").unwrap_or(rest);
        GONE.iter()
            .any(|g| {
                rest.strip_prefix(g)
                    .is_some_and(|r| r.is_empty() || r.starts_with(|c: char| !c.is_alphanumeric()))
            })
            .then(|| &clause[..i])
    })
}

/// Whether a statement adds to what is known rather than replacing it ("we now *also* deploy
/// to EU").
fn adds_to(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric())
        .any(|w| ["also", "too"].iter().any(|a| w.eq_ignore_ascii_case(a)))
}

/// Closed sets of options a coding preference picks one of (indentation, quotes, how to
/// integrate a branch, line endings, how long answers are, the tools of one job): two
/// rules alike but for a member of one set each choose otherwise. Stems, as
/// [`content_words`] gives them.
static OPTION_SETS: LazyLock<Vec<HashSet<String>>> = LazyLock::new(|| {
    [
        "tabs spaces",
        "single double",
        "merge rebase squash",
        "lf crlf",
        "light dark",
        "short brief concise terse long detailed verbose thorough",
        "formal casual",
        "npm pnpm yarn bun",
        "jest vitest mocha jasmine ava",
        "pytest unittest nose",
        "pip poetry uv pipenv conda pdm rye",
        "webpack vite esbuild rollup parcel turbopack",
        "gradle maven",
        "black ruff yapf autopep8",
        "prettier biome dprint",
    ]
    .iter()
    .map(|g| content_words(g))
    .collect()
});

/// Which set of [`OPTION_SETS`] a content word belongs to.
fn alternatives_group(w: &str) -> Option<usize> {
    OPTION_SETS.iter().position(|g| g.contains(w))
}

/// Words that only say a choice is made ("use", "keep", "stick with", "prefer", "go with").
fn is_choice_word(w: &str) -> bool {
    static CHOICE: LazyLock<HashSet<String>> = LazyLock::new(|| {
        content_words(
            "use using keep stick prefer go want make write give pick choose stay actually instead please",
        )
    });
    CHOICE.contains(w)
}

/// Words a change leaves behind: what a clause with a change verb rejects ("moved from
/// Jest to Vitest", "replaced Jest with Vitest"), what it says is gone ("poetry is gone"), and
/// what is no longer used ("we don't use sqlfmt anymore").
fn gone_words(text: &str) -> HashSet<String> {
    let no_longer = |c: &str| {
        let l = c.to_lowercase();
        l.contains("anymore") || l.contains("any more") || l.contains("no longer")
    };
    let mut gone: HashSet<String> = clauses(text)
        .filter_map(retired_subject)
        .flat_map(content_words)
        .collect();
    for c in clauses(text) {
        let changes = c
            .split(|ch: char| !ch.is_alphanumeric())
            .any(|w| is_change_verb(&w.to_lowercase()));
        if changes || no_longer(c) {
            gone.extend(polarity(c).1);
        }
    }
    // A tool named in Latin letters in a Chinese or Japanese change: "不要再用 Jest 了",
    // "把 Jest 换成 Vitest", "Jest はもう使わない", "Jest から Vitest に移行".
    if !text.is_ascii() {
        for c in CJK_GONE.captures_iter(text) {
            if let Some(m) = c.iter().skip(1).flatten().next() {
                gone.extend(content_words(m.as_str()));
            }
        }
    }
    gone
}

/// See [`gone_words`].
static CJK_GONE: LazyLock<regex::Regex> = LazyLock::new(|| {
    regex::Regex::new(
        r"(?:不要再|不再|别再|不用再)(?:用|使用)?\s*([A-Za-z][\w.+-]*)|(?:把|从)\s*([A-Za-z][\w.+-]*)\s*(?:换成|改成|改为|迁移到|切换到|换到)|([A-Za-z][\w.+-]*)\s*(?:は|を)?\s*もう(?:使わ|使いません)|([A-Za-z][\w.+-]*)\s*から\s*[A-Za-z][\w.+-]*\s*(?:に|へ)(?:移行|変更|切り替え|乗り換え)",
    )
    .expect("static regex")
});

/// Verbs that say something was replaced: with one in the clause, "from X to Y" leaves X.
fn is_change_verb(w: &str) -> bool {
    [
        "replac",
        "dropped",
        "ditched",
        "abandoned",
        "migrat",
        "moved",
        "moving",
        "switch",
        "changed",
        "went",
        "upgrad",
        "port",
        "transition",
        "convert",
        "swapp",
    ]
    .iter()
    .any(|v| w.starts_with(v))
}

/// When word `w` opens what a change left behind, the words that close it: "from" (in a
/// clause with a change verb) until "to"; "replaced" until "with"/"by" when one follows, else
/// until the end ("Ruff replaced black"); "dropped"/"ditched"/"abandoned" until "for"/"in"
/// ("in favour of").
fn left_behind(w: &str, rest: &[String], a_change: bool) -> Option<&'static [&'static str]> {
    const TO: &[&str] = &["to", "into", "onto"];
    const WITH: &[&str] = &["with", "by"];
    const AS: &[&str] = &["as", "for", "in", "on", "at"];
    const FOR: &[&str] = &["for", "in", "with"];
    match w {
        "from" if a_change && rest.iter().any(|r| TO.contains(&r.as_str())) => Some(TO),
        "replaced" | "replace" | "replacing" | "replaces" => {
            if rest.iter().any(|r| WITH.contains(&r.as_str())) {
                Some(WITH)
            } else {
                Some(AS)
            }
        }
        "dropped" | "ditched" | "abandoned" | "dumped" => Some(FOR),
        _ => None,
    }
}

/// Content words split by polarity: (wanted, rejected).
fn polarity(text: &str) -> (HashSet<String>, HashSet<String>) {
    let mut pos = HashSet::new();
    let mut neg = HashSet::new();
    // Latin: a negator flips the polarity until the end of its clause (a full stop ends one,
    // the dot in `console.log` does not).
    for clause in clauses(text) {
        // "poetry is gone", "the v1 client was removed": what comes before is rejected.
        if let Some(before) = retired_subject(clause) {
            neg.extend(content_words(before));
            continue;
        }
        let mut negated = false;
        let mut preference = false;
        // A change leaves something behind: "moved from Jenkins to GitHub Actions", "Ruff
        // replaced black", "replaced log4j with logback", "dropped log4j for logback". What
        // was left is rejected until the word that names what came instead (`until`).
        let words: Vec<String> = clause
            .split_whitespace()
            .map(|raw| {
                raw.replace('\u{2019}', "'")
                    .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                    .to_lowercase()
            })
            .collect();
        let a_change = words.iter().any(|w| is_change_verb(w));
        let mut until: Option<&[&str]> = None;
        for (i, w) in words.iter().enumerate() {
            if let Some(ends) = until {
                if ends.contains(&w.as_str()) {
                    until = None;
                } else {
                    neg.extend(content_words(w));
                }
                continue;
            }
            if let Some(ends) = left_behind(w, &words[i + 1..], a_change) {
                until = Some(ends);
                continue;
            }
            // "prefer tabs over spaces": after a preference, `over` rejects what follows.
            if NEGATORS.contains(&w.as_str()) || w.ends_with("n't") || (preference && w == "over") {
                negated = true;
                continue;
            }
            preference |= PREFERENCES.iter().any(|p| w.starts_with(p));
            // "use yarn not npm in this repo": the place after what is rejected is not
            // rejected with it.
            if negated
                && i > 0
                && matches!(
                    w.as_str(),
                    "in" | "across" | "throughout" | "within" | "here" | "everywhere"
                )
                && matches!(
                    words.get(i + 1).map(String::as_str),
                    None | Some("this" | "the" | "our" | "all" | "every" | "any")
                )
            {
                negated = false;
                continue;
            }
            for cw in content_words(w) {
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

/// Whether a content word is a value: a number or a version ("18", "v3", "5433", "30s",
/// "16gb").
fn is_value(w: &str) -> bool {
    if w.starts_with("state:") {
        return true;
    }
    // A day of the week ("tuesdays" stems to "tuesdai").
    const DAYS: &[&str] = &[
        "monda", "tuesd", "wedne", "thurs", "frida", "satur", "sunda",
    ];
    if (6..=10).contains(&w.len()) && DAYS.iter().any(|d| w.starts_with(d)) {
        return true;
    }
    let w = w.strip_prefix('v').unwrap_or(w);
    let digits = w.chars().take_while(char::is_ascii_digit).count();
    digits > 0 && w.len() - digits <= 3 && w[digits..].chars().all(|c| c.is_ascii_lowercase())
}

/// Content words plus what names one thing among others and the content words drop: single
/// capital letters ("service A") and command-line flags ("pytest -x -q").
fn identity_words(text: &str) -> HashSet<String> {
    let mut out = identity_words_without_state(text);
    // A switch's state ("the flag is off in production" / "… is now on …"): a stop word, but
    // the value of the fact.
    let words: Vec<String> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    for (i, pair) in words.windows(2).enumerate() {
        // ("services are on 3.12": a version held, not a switch.)
        let value_follows = words.get(i + 2).is_some_and(|w| {
            w.trim_start_matches('v')
                .starts_with(|c: char| c.is_ascii_digit())
        });
        if value_follows {
            continue;
        }
        let setter = [
            "is", "are", "be", "was", "were", "now", "turned", "switched", "stays", "set",
            "flipped", "kept",
        ]
        .contains(&pair[0].as_str());
        if setter && matches!(pair[1].as_str(), "on" | "off") {
            out.remove(pair[1].as_str());
            out.insert(format!("state:{}", pair[1]));
        }
    }
    out
}

fn identity_words_without_state(text: &str) -> HashSet<String> {
    // A flag's name is not a content word of its own ("--sql" is not about SQL).
    let without_flags: String = text
        .split(' ')
        .filter(|w| {
            !(w.starts_with('-')
                && w.trim_start_matches('-')
                    .starts_with(|c: char| c.is_ascii_alphabetic()))
        })
        .collect::<Vec<_>>()
        .join(" ");
    let mut out = content_words(&without_flags);
    for raw in text.split(|c: char| !c.is_alphanumeric()) {
        if raw.len() == 1 && raw.chars().all(|c| c.is_ascii_uppercase()) {
            // Uppercase, so it never equals a content word.
            out.insert(raw.to_string());
        }
        // A single digit ("service number 2", "step 3") names one thing among others.
        if raw.len() == 1 && raw.chars().all(|c| c.is_ascii_digit()) {
            out.insert(raw.to_string());
        }
    }
    for raw in text.split(|c: char| c.is_whitespace() || matches!(c, '`' | '"' | '\'' | ',')) {
        let flag = raw.trim_end_matches(['.', ';', ':', ')']);
        let name = flag.trim_start_matches('-');
        if flag.starts_with('-')
            && flag.len() - name.len() <= 2
            && name.starts_with(|c: char| c.is_ascii_alphabetic())
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        {
            // With its dashes, so it never equals a content word.
            out.insert(flag.to_string());
        }
    }
    out
}

/// An identifier: a value, a word with a digit, a single capital letter, a flag, an
/// environment.
fn is_identifier(w: &str) -> bool {
    is_value(w)
        || w.chars().any(|c| c.is_ascii_digit())
        || (w.len() == 1 && w.chars().all(|c| c.is_ascii_uppercase()))
        || w.starts_with('-')
        || is_environment(w)
}

/// Clauses: split at `,`, `;`, dashes, brackets, line ends, and a `.` that ends a sentence.
fn clauses(text: &str) -> impl Iterator<Item = &str> {
    let mut start = 0;
    let mut out = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        let ends = match c {
            ',' | ';' | '—' | '–' | '(' | ')' | '\n' => true,
            '.' => chars.peek().is_none_or(|&(_, n)| n.is_whitespace()),
            _ => false,
        };
        if ends {
            out.push(&text[start..i]);
            start = i + c.len_utf8();
        }
    }
    out.push(&text[start..]);
    out.into_iter()
}

/// Words that name an environment: "the staging DB" and "the prod DB" are two things.
/// Parts of a system, each its own subject: a rule for one says nothing of another.
const PARTS: &[&str] = &[
    "frontend", "backend", "docs", "website", "site", "mobile", "web", "ios", "android", "cli",
    "worker", "workers", "server", "client", "desktop", "admin", "api",
];

fn is_part(w: &str) -> bool {
    static STEMS: std::sync::LazyLock<HashSet<String>> =
        std::sync::LazyLock::new(|| content_words(&PARTS.join(" ")));
    STEMS.contains(w)
}

const ENVIRONMENTS: &[&str] = &[
    "staging",
    "stage",
    "prod",
    "production",
    "dev",
    "development",
    "qa",
    "uat",
    "preview",
    "sandbox",
    "local",
    "ci",
];

/// Environments in Japanese and Chinese: a slot that names one names another thing.
const CJK_ENVIRONMENTS: &[&str] = &[
    "本番",
    "開発",
    "検証",
    "ステージング",
    "ローカル",
    "生产",
    "测试",
    "开发",
    "预发",
    "本地",
];

/// Two mostly-CJK sentences that differ in one short slot holding CJK characters after a
/// shared start: the same statement with a new choice ([`Relation::Supersedes`]), or another
/// thing when the slot names an environment ([`Relation::Distinct`]). `None`: not that shape
/// (or a slot with a number, left to the value rules).
fn cjk_slot_change(new_text: &str, old_text: &str) -> Option<Relation> {
    use crate::text::{is_cjk, mostly_cjk};
    if !mostly_cjk(new_text) || !mostly_cjk(old_text) {
        return None;
    }
    let a: Vec<char> = new_text
        .trim()
        .trim_end_matches(['。', '.', '！', '!'])
        .chars()
        .collect();
    let b: Vec<char> = old_text
        .trim()
        .trim_end_matches(['。', '.', '！', '!'])
        .chars()
        .collect();
    let prefix = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
    let rest = a.len().min(b.len()) - prefix;
    let suffix = a
        .iter()
        .rev()
        .zip(b.iter().rev())
        .take(rest)
        .take_while(|(x, y)| x == y)
        .count();
    // The slot is inside the sentence: what differs at its very end is what it is about
    // ("…2 点运行夜间构建" / "…2 点运行数据库备份" are two jobs), not a choice within it.
    if suffix == 0 {
        return None;
    }
    let (slot_a, slot_b) = (&a[prefix..a.len() - suffix], &b[prefix..b.len() - suffix]);
    let shared = prefix + suffix;
    // The subject shared (a slot at the very start names another subject: フロントエンド /
    // バックエンド), the slot short, most of the sentence the same.
    if prefix < 2
        || slot_a.is_empty()
        || slot_b.is_empty()
        || slot_a.len().max(slot_b.len()) > 4
        || shared * 10 < a.len().max(b.len()) * 6
        || !slot_a.iter().any(|c| is_cjk(*c))
        || !slot_b.iter().any(|c| is_cjk(*c))
    {
        return None;
    }
    let (sa, sb): (String, String) = (slot_a.iter().collect(), slot_b.iter().collect());
    // Numbers are left to the value rules (a new timeout, or another service).
    if sa.chars().chain(sb.chars()).any(|c| c.is_ascii_digit()) {
        return None;
    }
    let environment = |s: &str| CJK_ENVIRONMENTS.iter().any(|e| s.contains(e));
    if environment(&sa) || environment(&sb) {
        return Some(Relation::Distinct);
    }
    // A language or a number put in another's place is a new choice ("…は日本語で書いて" after
    // "…は英語で書いて", "超时是五秒" after "…三秒"); another word may name another thing
    // ("每晚的备份任务" / "每晚的日志清理任务"): the word-level reading decides.
    const LANGUAGES: &[&str] = &[
        "日本語",
        "英語",
        "中国語",
        "韓国語",
        "中文",
        "英文",
        "英语",
        "日语",
        "日文",
        "韩语",
    ];
    let language = |t: &str| LANGUAGES.iter().find(|l| t.contains(*l));
    let number = |s: &str| {
        s.chars()
            .any(|c| "〇零一二三四五六七八九十百千两".contains(c))
    };
    let languages = matches!(
        (language(new_text), language(old_text)),
        (Some(a), Some(b)) if a != b
    );
    (languages || (number(&sa) && number(&sb))).then_some(Relation::Supersedes)
}

/// Whether a content word (stemmed) is one of [`CHANGE_WORDS`].
fn is_change_word(w: &str) -> bool {
    static STEMS: std::sync::LazyLock<HashSet<String>> =
        std::sync::LazyLock::new(|| content_words(&CHANGE_WORDS.join(" ")));
    STEMS.contains(w)
}

/// Words of replying, in the three languages.
const REPLYING: &[&str] = &[
    "answer",
    "reply",
    "replies",
    "respond",
    "response",
    "talk to me",
    "speak to me",
    "write to me",
    "返事",
    "返信",
    "回答",
    "答え",
    "話して",
    "回复",
    "回覆",
    "跟我说",
    "和我说",
];

/// Languages by the words that name them, with a code for each.
const LANGUAGES: &[(&str, &str)] = &[
    ("english", "en"),
    ("英語", "en"),
    ("英文", "en"),
    ("英语", "en"),
    ("japanese", "ja"),
    ("日本語", "ja"),
    ("日语", "ja"),
    ("chinese", "zh"),
    ("mandarin", "zh"),
    ("中文", "zh"),
    ("中国語", "zh"),
    ("汉语", "zh"),
    ("german", "de"),
    ("ドイツ語", "de"),
    ("德语", "de"),
    ("french", "fr"),
    ("フランス語", "fr"),
    ("法语", "fr"),
    ("spanish", "es"),
    ("スペイン語", "es"),
    ("西班牙语", "es"),
    ("korean", "ko"),
    ("韓国語", "ko"),
    ("韩语", "ko"),
    ("portuguese", "pt"),
    ("italian", "it"),
    ("russian", "ru"),
    ("dutch", "nl"),
];

/// Whether a content word (stemmed: "staging" → "stage", "production" → "product") names an
/// environment.
/// The language a rule asks the agent to answer in: the first language named after a word
/// for answering ("answer me in English even if I write in Japanese" → English).
/// In Japanese and Chinese the language comes first ("请用中文回答我", "日本語で返事して"): without
/// one after the word, the nearest before it in the same clause.
pub(crate) fn reply_language(text: &str) -> Option<&'static str> {
    let lower = text.to_lowercase();
    let at = REPLYING.iter().filter_map(|w| lower.find(w)).min()?;
    let after = &lower[at..];
    let clause_start = lower[..at]
        .rfind([',', ';', '.', '、', '，', '。', '；'])
        .map_or(0, |i| i + 1);
    let before = &lower[clause_start..at];
    LANGUAGES
        .iter()
        .filter_map(|(w, code)| after.find(w).map(|i| (i, *code)))
        .min()
        .map(|(_, code)| code)
        .or_else(|| {
            LANGUAGES
                .iter()
                .filter_map(|(w, code)| before.rfind(w).map(|i| (i, *code)))
                .max()
                .map(|(_, code)| code)
        })
}

/// Whether a rule about the reply language also says which language something else is in:
/// a clause without a word of replying names a language ("PR descriptions in English, but talk
/// to me in Japanese"), unless it is about what the person writes ("… even if I write in
/// Japanese").
fn names_another_language_use(text: &str) -> bool {
    let lower = text.to_lowercase();
    lower
        .split([',', ';', '、', '，', '。', '；'])
        .flat_map(|c| c.split(" but "))
        .filter(|c| !REPLYING.iter().any(|w| c.contains(w)))
        .filter(|c| {
            ![
                "i write",
                "i speak",
                "i ask",
                "i type",
                "even if",
                "even when",
            ]
            .iter()
            .any(|w| c.contains(w))
        })
        .any(|c| LANGUAGES.iter().any(|(w, _)| c.contains(w)))
}

fn is_environment(w: &str) -> bool {
    static STEMS: std::sync::LazyLock<HashSet<String>> =
        std::sync::LazyLock::new(|| content_words(&ENVIRONMENTS.join(" ")));
    STEMS.contains(w)
}

/// What a bare "we use X n" says besides its names and versions, in English.
const USAGE_EN: &[&str] = &[
    "we",
    "we're",
    "were",
    "our",
    "use",
    "uses",
    "using",
    "used",
    "now",
    "are",
    "is",
    "on",
    "run",
    "runs",
    "running",
    "moved",
    "switched",
    "upgraded",
    "bumped",
    "to",
    "the",
    "version",
    "from",
    "in",
    "it",
    "its",
    "all",
    "everywhere",
    "anymore",
    "instead",
    "been",
    "has",
    "have",
];

/// Whether all a text says besides `names` and versions is that something is used, now, or
/// was moved to ("We're on PostgreSQL 17 now", "我们改用 PostgreSQL 17 了", "Node 22 を使って
/// います").
fn only_names_and_usage(text: &str, names: &[(String, Option<String>)]) -> bool {
    const USAGE_CJK: &[&str] = &[
        "我们",
        "我們",
        "现在",
        "現在",
        "目前",
        "已经",
        "已經",
        "统一",
        "統一",
        "一律",
        "改用",
        "换成",
        "換成",
        "升级到",
        "升級到",
        "升级",
        "升級",
        "版本",
        "使用",
        "使っています",
        "使ってます",
        "使ってる",
        "使って",
        "使う",
        "います",
        "ます",
        "にしました",
        "にした",
        "に上げました",
        "に上げた",
        "上げました",
        "アップグレード",
        "しました",
        "した",
        "移行",
        "バージョン",
        "今は",
        "今",
        "用",
        "了",
        "都",
        "到",
        "は",
        "を",
        "が",
        "で",
        "に",
        "も",
    ];
    let mut rest = text.to_lowercase().replace('’', "'");
    for w in USAGE_CJK {
        rest = rest.replace(w, " ");
    }
    rest.split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '.'))
        .map(|w| w.trim_matches(['.', '\'']))
        .filter(|w| !w.is_empty())
        .all(|w| {
            !w.chars().any(crate::text::is_cjk)
                && (USAGE_EN.contains(&w)
                    || w.trim_start_matches('v')
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == '.')
                    || names.iter().any(|(n, _)| n == w))
        })
}

/// A bare "we use X n" in English ("We upgraded Python to 3.12.", "The Node.js version is
/// 18."): its names (one or two words besides [`USAGE_EN`]) and its one version.
/// The place a memory of a project already is about ("We use Node 18 for this project",
/// "This repo uses Go 1.23", "We're on Ruby 3.3 here"): no name of what is used.
const PLACE_EN: &[&[&str]] = &[
    &["for", "this", "project"],
    &["in", "this", "project"],
    &["for", "this", "repo"],
    &["in", "this", "repo"],
    &["for", "this", "repository"],
    &["in", "this", "repository"],
    &["for", "this", "codebase"],
    &["in", "this", "codebase"],
    &["this", "project"],
    &["this", "repo"],
    &["this", "repository"],
    &["this", "codebase"],
    &["here"],
];

fn bare_version(text: &str) -> Option<(std::collections::BTreeSet<String>, String)> {
    let lower = text.to_lowercase().replace('’', "'");
    let mut names = std::collections::BTreeSet::new();
    let mut version = None;
    let all: Vec<&str> = lower
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '.'))
        .map(|w| w.trim_matches(['.', '\'']))
        .filter(|w| !w.is_empty())
        .collect();
    let mut words = Vec::with_capacity(all.len());
    let mut i = 0;
    while i < all.len() {
        match PLACE_EN.iter().find(|p| all[i..].starts_with(p)) {
            Some(p) => i += p.len(),
            None => {
                words.push(all[i]);
                i += 1;
            }
        }
    }
    for w in words {
        let v = w.trim_start_matches('v');
        if v.starts_with(|c: char| c.is_ascii_digit())
            && v.chars().all(|c| c.is_ascii_digit() || c == '.')
        {
            if version.replace(v.to_owned()).is_some() {
                return None;
            }
        } else if !USAGE_EN.contains(&w) {
            if !w.is_ascii() {
                return None;
            }
            names.insert(w.to_owned());
        }
    }
    (1..=2).contains(&names.len()).then_some(())?;
    Some((names, version?))
}

/// Whether a text is written in Japanese or Chinese, whatever Latin names it holds
/// ("我们用 PostgreSQL 16").
fn writes_cjk(text: &str) -> bool {
    text.chars()
        .filter(|&c| crate::text::is_cjk(c))
        .take(2)
        .count()
        == 2
}

/// The Latin-script names of a text with the version written after each, if any
/// ("我们用 PostgreSQL 16" → `postgresql: 16`; "CIは Node 18 を使う" → `ci`, `node: 18`).
fn named_versions(text: &str) -> Vec<(String, Option<String>)> {
    let tokens: Vec<&str> = text
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '-' || c == '+'))
        .map(|t| t.trim_matches(['.', '-', '+']))
        .filter(|t| !t.is_empty())
        .collect();
    let is_version = |t: &str| {
        t.trim_start_matches(['v', 'V'])
            .starts_with(|c: char| c.is_ascii_digit())
            && t.trim_start_matches(['v', 'V'])
                .chars()
                .all(|c| c.is_ascii_digit() || c == '.')
    };
    let mut out = Vec::new();
    for (i, t) in tokens.iter().enumerate() {
        if is_version(t) || t.len() < 2 || !t.chars().any(|c| c.is_ascii_alphabetic()) {
            continue;
        }
        let version = tokens
            .get(i + 1)
            .filter(|n| is_version(n))
            .map(|n| n.trim_start_matches(['v', 'V']).to_owned());
        out.push((t.to_ascii_lowercase(), version));
    }
    out
}

/// Whether a text in Japanese or Chinese and one in another language name the same things,
/// and one of them at another version: each name the CJK text writes in Latin letters is in
/// the other, a name with a version on both sides has another one, and none the same.
fn versions_differ_across_languages(a: &str, b: &str) -> bool {
    let (cjk, other) = if writes_cjk(a) { (a, b) } else { (b, a) };
    let names = named_versions(cjk);
    // Only a bare "we use X n" on both sides: a qualifier one side has ("the analytics DB",
    // "本番は", "staging runs …") cannot be matched on the other.
    if !only_names_and_usage(cjk, &names) || !only_names_and_usage(other, &names) {
        return false;
    }
    if names.is_empty() || names.len() > 3 {
        return false;
    }
    let theirs = named_versions(other);
    let mut changed = false;
    for (name, version) in &names {
        let Some((_, their_version)) = theirs.iter().find(|(n, _)| n == name) else {
            return false;
        };
        match (version, their_version) {
            (Some(v), Some(w)) if v == w => return false,
            (Some(_), Some(_)) => changed = true,
            _ => {}
        }
    }
    changed
}

/// Decides how a new memory relates to an existing one of the same scope.
pub fn relation(
    new_type: MemoryType,
    new_text: &str,
    old_type: MemoryType,
    old_text: &str,
    cosine: f32,
) -> Relation {
    // Traditional Chinese is compared as Simplified ("我們改用" as "我们改用").
    let (new_zh, old_zh) = (
        crate::t2s::simplified(new_text),
        crate::t2s::simplified(old_text),
    );
    let new_text = new_zh.as_ref().map_or(new_text, |z| z.text.as_str());
    let old_text = old_zh.as_ref().map_or(old_text, |z| z.text.as_str());
    // A time of day is one value ("02:00" → "0200"), not two numbers.
    let (new_text, old_text) = (&*joined_times(new_text), &*joined_times(old_text));
    // One product under two names ("Postgres", "PostgreSQL") is one subject.
    let (new_text, old_text) = (&*usual_names(new_text), &*usual_names(old_text));
    // "We use pnpm (not npm)" (project) says what "Use pnpm, not npm" (feedback) does.
    let kin = new_type == old_type
        || matches!(
            (new_type, old_type),
            (MemoryType::Feedback, MemoryType::Project)
                | (MemoryType::Project, MemoryType::Feedback)
                | (MemoryType::Project, MemoryType::Reference)
                | (MemoryType::Reference, MemoryType::Project)
        );
    if !kin {
        return Relation::Distinct;
    }
    // One language to be answered in: "返事は日本語で" after "answer me in English" is the
    // new choice, in whatever language either is written.
    if let (Some(a), Some(b)) = (reply_language(new_text), reply_language(old_text)) {
        // An old memory that also says which language something else is written in holds
        // more than the reply language: it stays.
        if a != b && names_another_language_use(old_text) {
            return Relation::Distinct;
        }
        return if a == b {
            Relation::Duplicate
        } else {
            Relation::Supersedes
        };
    }
    // One language on each side ("我们用 PostgreSQL 16" then "we use PostgreSQL 17 now"): the
    // names they share are all they can be compared by, and another version of the same
    // named thing is a changed value.
    if writes_cjk(new_text) != writes_cjk(old_text)
        && versions_differ_across_languages(new_text, old_text)
    {
        return Relation::Supersedes;
    }
    // The same in one language: "We upgraded Python to 3.12." after "The Python version is
    // 3.10." (nothing but the names, the version and words of use on either side).
    if !writes_cjk(new_text)
        && !writes_cjk(old_text)
        && let (Some((names, version)), Some((old_names, old_version))) =
            (bare_version(new_text), bare_version(old_text))
        && names == old_names
        && version != old_version
    {
        return Relation::Supersedes;
    }
    // CJK: one slot of the same sentence filled otherwise ("…は英語で書いて" → "…は日本語で
    // 書いて") is a changed choice, whatever the character pairs share.
    if new_type == old_type
        && let Some(changed) = cjk_slot_change(new_text, old_text)
    {
        return changed;
    }
    // Japanese and Chinese on both sides: read as words, not character pairs.
    if cjk::applies(new_text) && cjk::applies(old_text) {
        let (ap, an) = polarity(new_text);
        let (bp, bn) = polarity(old_text);
        let contradiction =
            ap.intersection(&bn).next().is_some() || an.intersection(&bp).next().is_some();
        return cjk::relation(new_text, old_text, cosine, contradiction);
    }
    // The owner of the old memory is said to be gone from it ("Priya is no longer involved",
    // "Priya moved to the platform team"), or the person has moved ("I moved to Tokyo" after
    // "I live in Lisbon").
    let old_owner = owner_and_thing(old_text);
    if let Some((owner, _)) = &old_owner
        && people_gone(new_text)
            .iter()
            .any(|p| owner.split_whitespace().any(|w| w == p))
    {
        return Relation::Supersedes;
    }
    if new_type == MemoryType::User
        && old_type == MemoryType::User
        && let (Some(new_place), Some(old_place)) = (moved_to(new_text), lives_in(old_text))
        && new_place != old_place
        && content_words(old_text).len() <= 3
    {
        return Relation::Supersedes;
    }
    // The same thing with another owner ("Bob owns the auth service" after "Alice owns the
    // auth service", "… is owned by the platform team"): one owner at a time.
    if let (Some((owner_a, thing_a)), Some((owner_b, thing_b))) =
        (owner_and_thing(new_text), old_owner)
    {
        let (oa, ob) = (content_words(&owner_a), content_words(&owner_b));
        let (ta, tb) = (content_words(&thing_a), content_words(&thing_b));
        let same_thing =
            !ta.is_empty() && ta.intersection(&tb).count() * 4 >= ta.union(&tb).count() * 3;
        if same_thing && !oa.is_empty() && !ob.is_empty() {
            return if oa == ob {
                Relation::Duplicate
            } else {
                Relation::Supersedes
            };
        }
    }
    // Rules about two named things (files, paths, packages): "never edit src/gen/api.ts by
    // hand" and "never edit proto/billing.pb.go by hand" are two rules, however alike they
    // read, unless the new one says the thing changed ("the config moved to config/app.toml").
    let (new_named, old_named) = (named_subjects(new_text), named_subjects(old_text));
    if !new_named.is_empty()
        && !old_named.is_empty()
        && new_named.is_disjoint(&old_named)
        && !new_text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| CHANGE_WORDS.iter().any(|c| w.eq_ignore_ascii_case(c)))
    {
        return Relation::Distinct;
    }
    // The thing a fact is about, said to have changed ("the staging dashboard moved to
    // https://…v2" after "the staging dashboard is https://… — check it when…", "my timezone
    // is America/New_York now" after "my timezone is Europe/Berlin", "the freeze got moved to
    // December 3" after "the freeze starts on November 28"): the new value replaces the old,
    // whatever else the old one said about it.
    if let (Some((subject, value)), Some((old_subject, old_value))) =
        (changed_subject(new_text), fact_subject(old_text))
        && subject == old_subject
        && value != old_value
        // (Moved to another environment is another thing: "the DB moved to staging".)
        && value.iter().filter(|w| is_environment(w)).collect::<HashSet<_>>()
            == old_value.iter().filter(|w| is_environment(w)).collect::<HashSet<_>>()
    {
        return Relation::Supersedes;
    }
    // Two links, one under the other ("the wiki is at https://w/alpha" and "the runbooks live
    // at https://w/alpha/runbooks"), point at two things, unless the new one says it moved.
    if nested_links(new_text, old_text)
        && !new_text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| CHANGE_WORDS.iter().any(|c| w.eq_ignore_ascii_case(c)))
    {
        return Relation::Distinct;
    }
    // Two links to different places, neither under the other: never one memory. With the
    // rest alike ("On-call runbook: https://wiki…" / "The on-call runbook moved to
    // https://runbooks…") the new link replaces the old; otherwise they point at two things.
    let (new_links, old_links) = (links(new_text), links(old_text));
    if !new_links.is_empty()
        && !old_links.is_empty()
        && !new_links.iter().any(|l| old_links.contains(l))
    {
        let words = |t: &str| {
            let without: Vec<&str> = t
                .split_whitespace()
                .filter(|w| !w.contains("://"))
                .collect();
            content_words(&without.join(" "))
        };
        let (wa, wb) = (words(new_text), words(old_text));
        let rest_alike = !wb.is_empty()
            && wb.iter().all(|w| wa.contains(w))
            && wa
                .iter()
                .all(|w| wb.contains(w) || is_change_word(w) || is_filler(w) || is_state_verb(w));
        return if rest_alike && cosine >= 0.5 {
            Relation::Supersedes
        } else {
            Relation::Distinct
        };
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
    // Another choice against the same rejected one: "use yarn, not npm" after "use pnpm, not
    // npm".
    let other_choice = an.intersection(&bn).next().is_some()
        && ap.difference(&bp).next().is_some()
        && bp.difference(&ap).next().is_some();
    // The new memory rejects what the old one asserts ("use vitest, not jest" after "tests
    // use jest") and wants something the old one does not: "use cargo nextest, not cargo
    // test" restates "run the tests with cargo nextest; plain cargo test is too slow".
    let rejected = an.intersection(&bp).count();
    let overturned = rejected > 0 && !ap.is_subset(&bp);
    // Or it turns the old rule round: "never use semicolons" after "always use semicolons",
    // "don't squash commits anymore; use merge commits" after "always squash commits" (but
    // "never commit without running the tests" says what "always run the tests before
    // committing" does).
    let reversed = rejected > 0 && rejected * 2 >= bp.len() && !double_negation(new_text);
    let contradiction =
        other_choice || overturned || reversed || ap.intersection(&bn).next().is_some();
    // ... and the rejected thing is what the old memory is about (a quarter of its words at
    // least), replaced by a choice of a word or two, not narrowed to another case: "use jemalloc
    // on linux only (not on windows)" does not retire "CI covers linux, macos and windows",
    // nor "deploy preview builds to Netlify, not Vercel" "we deploy the web app to Vercel".
    let choice = ap.difference(&b).filter(|w| !is_change_word(w)).count();
    let replaces_by_choice = overturned && (1..=2).contains(&choice);
    let replaces = replaces_by_choice && rejected * 4 >= b.len();
    let ia = identity_words(new_text);
    let ib = identity_words(old_text);
    let only_new: Vec<&String> = ia.difference(&ib).collect();
    let only_old: Vec<&String> = ib.difference(&ia).collect();
    let new_identifier = only_new.iter().any(|w| is_identifier(w));
    let same_subject = overlap >= 0.5 && cosine >= 0.75;
    let new_more = only_old.is_empty() && !only_new.is_empty();
    let old_more = only_new.is_empty() && !only_old.is_empty();
    // The same kind of thing qualified otherwise is another thing: "use dbt for the billing
    // pipeline, not Spark" and "use Spark for the email pipeline, not Flink" are two
    // pipelines' tools, not one changed choice; "for API tests" / "for browser tests".
    if other_qualified_thing(new_text, old_text) {
        return Relation::Distinct;
    }
    // Another part of the system is another subject, whatever the rest shares: "The docs site
    // uses npm, not pnpm" after "The frontend uses pnpm".
    if only_new.iter().any(|w| is_part(w)) && only_old.iter().any(|w| is_part(w)) {
        return Relation::Distinct;
    }
    // A rule turned round for another target is another rule: "never use tabs in YAML files"
    // says nothing of "always use tabs in Makefiles", "stop running make test before
    // committing" nothing of "always run make lint before committing". Each names a thing the
    // other does not (other than the words that turn a rule round or say it changed, and the
    // options of one set, which a change of choice puts in each other's place).
    let turned_round =
        (reversed || overturned) && !other_choice && ap.intersection(&bn).next().is_none();
    if turned_round {
        let a_thing = |w: &&&String| {
            !is_filler(w)
                && !is_change_word(w)
                && !is_state_verb(w)
                && alternatives_group(w).is_none()
                && !TURNING_WORDS.contains(&w.as_str())
        };
        let new_things: Vec<&&String> = only_new.iter().filter(a_thing).collect();
        let old_things: Vec<&&String> = only_old.iter().filter(a_thing).collect();
        // (A change that names what came instead, "we moved from MySQL to PostgreSQL", is a
        // replacement, not a rule turned round.)
        let names_a_replacement = ap.iter().any(|w| {
            !b.contains(w)
                && !is_filler(w)
                && !is_change_word(w)
                && !is_state_verb(w)
                && !TURNING_WORDS.contains(&w.as_str())
                && !is_environment(w)
        });
        if !names_a_replacement
            && !new_things.is_empty()
            && !old_things.is_empty()
            && new_things
                .iter()
                .all(|n| !old_things.iter().any(|o| same_word_form(n, o)))
        {
            return Relation::Distinct;
        }
    }
    // One rule says all the other does, and more. What the more is decides: identifiers, a
    // further item ("…, and isort for imports") or the alternative ("…, not npm") add to the
    // rule; any other words narrow it ("never use sudo *pip install*"), and a broad rule
    // already says what a narrower one does, but not the other way round.
    if new_type == MemoryType::Feedback && !contradiction && same_subject && (new_more || old_more)
    {
        // "Before committing, *only* run the tests of the packages you touched" after "run
        // the full test suite before every commit": the narrower rule takes the broad one's
        // place, it does not restate it.
        let only = |t: &str| {
            t.split(|c: char| !c.is_alphanumeric())
                .any(|w| w.eq_ignore_ascii_case("only"))
        };
        if new_more && only(new_text) && !only(old_text) && new_type == old_type {
            return Relation::Supersedes;
        }
        if new_more {
            let more = additions(new_text);
            let code = code_words(new_text);
            let adds = only_new
                .iter()
                .all(|w| is_identifier(w) || more.contains(*w) || code.contains(*w))
                // "use Python 3.12 for the API, but the worker stays on 3.10": a value and
                // its exception, which the broader rule does not say.
                || (new_identifier && has_exception(new_text));
            return if adds && new_type == old_type {
                Relation::Refines
            } else {
                Relation::Duplicate
            };
        }
        // ... unless the old one's further words change little of it: "never force-push to
        // the main branch" / "do not force push to main" (three words in four shared, and
        // read alike).
        let more = additions(old_text);
        return if only_old
            .iter()
            .all(|w| is_identifier(w) || more.contains(*w) || is_filler(w))
            || (jaccard >= 0.75 && cosine >= 0.85)
        {
            Relation::Duplicate
        } else {
            Relation::Distinct
        };
    }
    // Said to be a change, and saying all the old memory did and more ("deploys go through
    // Flux now (ArgoCD was retired)" after "deploys go through ArgoCD"): the new one replaces
    // it, however alike the two read.
    let changed = new_text
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| CHANGE_WORDS.iter().any(|c| w.eq_ignore_ascii_case(c)));
    let other_environment = only_new.iter().chain(&only_old).any(|w| is_environment(w));
    // (Rejecting what the old memory said — "ArgoCD was retired" — or choosing otherwise is
    // the change itself; wanting what the old one rejected is a reversal.)
    let against_old = ap.intersection(&bn).next().is_some();
    if changed
        && new_more
        && same_subject
        && new_type == old_type
        && !against_old
        && !other_environment
    {
        return Relation::Refines;
    }
    // The same value of the same thing in fewer words, one word less ("we're on node 22 now"
    // after "Node version is 22"): static embeddings read the two further apart than they are.
    let restated = old_more
        && only_old.len() == 1
        && a.len() >= 2
        && a.iter().any(|w| is_identifier(w))
        && cosine >= 0.6;
    // One word in another's place ("owned by Alice's team" / "… by Bob's team", "prefer
    // single quotes" / "… double quotes") is never the same memory however alike the rest
    // reads: another form of the same word ("PostgreSQL" / "Postgres") is.
    let swapped = {
        let filler = |w: &&String| is_change_word(w) || is_filler(w);
        let new_only: Vec<&&String> = only_new.iter().filter(|w| !filler(w)).collect();
        let old_only: Vec<&&String> = only_old.iter().filter(|w| !filler(w)).collect();
        new_only
            .iter()
            .any(|n| !old_only.iter().any(|o| same_word_form(n, o)))
            && old_only
                .iter()
                .any(|o| !new_only.iter().any(|n| same_word_form(n, o)))
    };
    // Every word of each matched by a form of it in the other ("The staging database listens
    // on port 5433" / "Port 5433 is where the staging DB listens").
    let same_words = |xs: &[&String], ys: &[&String]| {
        xs.iter()
            .filter(|w| !is_filler(w))
            .all(|x| ys.iter().any(|y| same_word_form(x, y)))
    };
    let reworded = !only_new.is_empty()
        && same_words(&only_new, &only_old)
        && same_words(&only_old, &only_new)
        && cosine >= 0.7;
    // Another option of a closed set said to be the practice now ("we use merge commits now"
    // after "always squash commits when merging PRs"): the old option is no longer named, so
    // the rule changed even if the new one's words are all in the old.
    let option_changed = changed
        && bp.iter().any(|o| {
            alternatives_group(o).is_some_and(|g| {
                !a.contains(o)
                    && ap
                        .iter()
                        .any(|n| n != o && alternatives_group(n) == Some(g))
            })
        });
    if option_changed && !other_environment && cosine >= 0.4 {
        return Relation::Supersedes;
    }
    if !contradiction
        && !new_identifier
        && !swapped
        && (jaccard >= 0.75
            || (cosine >= 0.93 && jaccard >= 0.6)
            || (old_more && same_subject)
            || restated
            || reworded)
    {
        return Relation::Duplicate;
    }
    // A contradiction retires the old memory, a rule a fact as well as a fact a rule: "use
    // vitest, not jest" replaces "tests use jest". Rejecting what the old memory asserts is
    // explicit enough to need less of the embeddings' agreement (short rules in other words).
    // All the two share is what the new one rejects ("switch to uv, poetry is gone" after
    // "we use poetry for dependency management"): about the old memory, however few words.
    // The embeddings read such a short rejection as far from the old memory: the words
    // decide, with less of their agreement.
    // Only for a thing said to be gone: "use pnpm, not npm" says nothing of "npm audit runs
    // in CI".
    // (What a change left behind — "moved from pnpm to bun" — and what is no longer used
    // — "we don't use sqlfmt anymore" — are gone as well.)
    let no_longer = |c: &str| {
        let l = c.to_lowercase();
        l.contains("anymore") || l.contains("any more") || l.contains("no longer")
    };
    let gone = gone_words(new_text);
    let only_rejects = rejected > 0
        && rejected == inter as usize
        && an.intersection(&bp).all(|w| gone.contains(w));
    // Only that a thing is no longer used, of a memory about using it ("Format SQL with
    // sqlfmt" / "we don't use sqlfmt anymore"): the thing is most of what the old one says.
    let b_wanted = b.difference(&bn).count().max(1);
    if only_rejects
        && no_longer(new_text)
        && ap.is_subset(&b)
        && rejected * 3 >= b_wanted
        && cosine >= 0.4
    {
        return Relation::Supersedes;
    }
    // A change that names what it left behind and what came instead ("we moved from Jest to
    // Vitest, so write new tests with vitest", "we've replaced Jest with Vitest") retires a
    // memory about using the old thing, whatever else either says, when that thing is a
    // good part of the old memory (a quarter of what it asserts) and not another
    // environment's.
    let left: Vec<&String> = bp.intersection(&gone).collect();
    let came_instead = ap
        .difference(&b)
        .any(|w| !is_change_word(w) && !is_filler(w));
    if !left.is_empty()
        && left.len() * 4 >= b_wanted
        && came_instead
        && !other_environment
        && cosine >= 0.4
    {
        return Relation::Supersedes;
    }
    // A ban lifted: everything the old rule forbade is now wanted, and the new one says it is
    // allowed now ("deploying on Fridays is fine now, the freeze is lifted" after "never
    // deploy on Fridays"); without such a word it may be a narrower case ("mock the database
    // in unit tests").
    let lifted = [
        "now",
        "again",
        "fine",
        "allowed",
        "ok",
        "okay",
        "lifted",
        "permitted",
    ];
    if !bn.is_empty()
        && bn.iter().all(|w| ap.contains(w))
        && an.intersection(&bn).next().is_none()
        && new_text
            .split(|c: char| !c.is_alphanumeric())
            .any(|w| lifted.iter().any(|l| w.eq_ignore_ascii_case(l)))
        && cosine >= 0.5
    {
        return Relation::Supersedes;
    }
    // Going back to what the old rule turned away from ("Use pnpm again." after "we use bun
    // here — don't run pnpm"): all the new rule says is that thing, wanted again.
    let going_back = new_text
        .split(|c: char| !c.is_alphanumeric())
        .any(|w| w.eq_ignore_ascii_case("again") || w.eq_ignore_ascii_case("back"));
    if going_back
        && ap.intersection(&bn).next().is_some()
        && a.iter().all(|w| {
            bn.contains(w) || is_filler(w) || is_change_word(w) || is_state_verb(w) || w == "back"
        })
        && cosine >= 0.4
    {
        return Relation::Supersedes;
    }
    // One option of a closed set put in another's place, the rest the same ("use single
    // quotes" after "use double quotes", "keep tabs for indentation" after "use 2 spaces for
    // indentation", "keep answers short" after "give detailed answers"): the new choice.
    // Any other differing word names another case ("tabs in Go files" / "spaces in YAML").
    let optional = |w: &&String| {
        alternatives_group(w).is_some()
            || is_value(w)
            || is_filler(w)
            || is_change_word(w)
            || is_choice_word(w)
    };
    let alternative_swapped = only_new.iter().any(|n| {
        only_old.iter().any(|o| {
            n != o && alternatives_group(n).is_some_and(|g| alternatives_group(o) == Some(g))
        })
    });
    if alternative_swapped
        && inter >= 1.0
        && only_new.iter().all(optional)
        && only_old.iter().all(optional)
        && !other_environment
        && !adds_to(new_text)
        && cosine >= 0.5
    {
        return Relation::Supersedes;
    }
    // (What is said to be gone retires a memory about it however much more that one says:
    // "we switched to uv, poetry is gone" and "we use poetry …, so run poetry install …".)
    if (replaces && overlap >= 0.5 && cosine >= 0.6)
        || (replaces_by_choice && only_rejects && cosine >= 0.4)
    {
        return Relation::Supersedes;
    }
    // A project fact and a pointer can say how one thing changed ("the staging server moved
    // to staging2…" after "the staging server is staging.acme.internal").
    let facts = matches!(
        (new_type, old_type),
        (MemoryType::Project, MemoryType::Reference) | (MemoryType::Reference, MemoryType::Project)
    );
    if new_type != old_type && !facts {
        return Relation::Distinct;
    }
    if same_subject && contradiction {
        return Relation::Supersedes;
    }
    // Every differing word, on both sides, is a value: the same statement with a new value.
    // Said to be a change ("moved to", "is now"), new names and numbers replace the old ones.
    let is_new_value = |w: &&String| {
        is_value(w) || is_state_verb(w) || (changed && (is_identifier(w) || is_change_word(w)))
    };
    // Several numbers differing together name another thing ("service number 2 listens on
    // port 8002" after "service number 1 … 8001"), unless the memory says it changed.
    let values_differing = only_new.iter().filter(|w| is_value(w)).count();
    // Another environment is another thing, whatever changed ("the staging DB moved to db2"
    // says nothing of the prod DB).
    let changed_value = !only_new.is_empty()
        && !only_old.is_empty()
        && !other_environment
        && (changed || values_differing < 2)
        && only_new.iter().all(is_new_value)
        && only_old.iter().all(|w| {
            is_value(w)
                || is_state_verb(w)
                || (changed && (is_identifier(w) || w.as_str() == "version"))
        });
    if same_subject && changed_value {
        return Relation::Supersedes;
    }
    // Said to be a change, with one word put in another's place ("the default branch is now
    // main" after "… is master"), unless it adds ("we now also deploy to EU").
    let adds = adds_to(new_text);
    if same_subject
        && changed
        && !adds
        && !other_environment
        && only_new.iter().filter(|w| !is_change_word(w)).count() == 1
        && only_old.len() == 1
    {
        return Relation::Supersedes;
    }
    // A fact given more words says more ("we use Postgres *17 with pgvector*").
    // ("I also own the alerting config …" adds to "I own the ingestion pipeline".)
    if same_subject && new_more && !adds {
        return Relation::Refines;
    }
    Relation::Distinct
}

/// Verbs that end the subject of a fact ("the staging DB *is* …", "the freeze *starts* on …").
const FACT_VERBS: &[&str] = &[
    "is", "are", "was", "were", "lives", "live", "sits", "runs", "run", "starts", "start",
    "begins", "begin", "ends", "happens", "moved", "got", "has", "have", "changed", "switched",
    "migrated", "now",
];

/// A fact's subject and value: the content words before its first verb ("the ledger code
/// freeze starts on November 28" → {ledger, code, freez}, {novemb, 28}), when the fact is
/// one clause with both. `None` for a rule ("use pnpm"), a subject of a pronoun or a person
/// alone ("I", "we", "Alice"), or more than one clause.
fn fact_subject(text: &str) -> Option<(HashSet<String>, HashSet<String>)> {
    let first = text.split(['—', ';', '(']).next()?.trim();
    // One sentence only: "X is Y. Check it when…" keeps its first.
    let first = first.split(". ").next()?.trim_end_matches('.');
    let words: Vec<&str> = first.split_whitespace().collect();
    let at = words.iter().position(|w| {
        FACT_VERBS.iter().any(|v| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .eq_ignore_ascii_case(v)
        })
    })?;
    if at == 0 || at + 1 >= words.len() {
        return None;
    }
    let subject = content_words(&words[..at].join(" "));
    let value = content_words(&words[at..].join(" "));
    let value: HashSet<String> = value
        .into_iter()
        .filter(|w| !is_change_word(w) && !is_filler(w) && !is_state_verb(w))
        .collect();
    // A subject of two words at least, or one that is not a person's name (capitalised in
    // the text): "Alice is on vacation" says nothing of what Alice's earlier fact was about.
    let named_person = words[..at].len() == 1
        && words[0].chars().next().is_some_and(char::is_uppercase)
        && !words[0].eq_ignore_ascii_case("the");
    if subject.is_empty() || value.is_empty() || named_person {
        return None;
    }
    Some((subject, value))
}

/// [`fact_subject`] of a fact said to have changed: a change word right after the subject
/// ("moved to", "got moved to", "is now", "changed to", "switched to") or "now" at its end.
fn changed_subject(text: &str) -> Option<(HashSet<String>, HashSet<String>)> {
    let (subject, value) = fact_subject(text)?;
    let first = text.split(['—', ';', '(']).next()?.trim();
    let first = first.split(". ").next()?.trim_end_matches(['.', '!']);
    let words: Vec<String> = first
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| !c.is_alphanumeric())
                .to_lowercase()
        })
        .collect();
    let at = words
        .iter()
        .position(|w| FACT_VERBS.contains(&w.as_str()))?;
    let verb_phrase = &words[at..(at + 3).min(words.len())];
    let said_changed = verb_phrase.iter().any(|w| {
        matches!(
            w.as_str(),
            "moved" | "now" | "changed" | "switched" | "migrated" | "relocated"
        )
    }) || words.last().is_some_and(|w| w == "now");
    said_changed.then_some((subject, value))
}

/// The things a text qualifies a rule or fact with: "for the billing pipeline", "in the api
/// service", "for API tests" give (head, modifiers) = ("pipelin", {"bill"}), ("servic",
/// {"api"}), ("test", {"api"}) (stems). A phrase runs from a preposition, past a determiner, to
/// the end of its clause or the next function word; only phrases of two to four words, the
/// last one the head.
fn qualified_things(text: &str) -> Vec<(String, HashSet<String>)> {
    const OPENERS: &[&str] = &["for", "in", "on", "of", "at"];
    const DETERMINERS: &[&str] = &[
        "the", "our", "my", "your", "their", "its", "all", "this", "that", "these", "those", "a",
        "an", "every", "each",
    ];
    let mut out = Vec::new();
    for clause in text.split([',', ';', '.', ':', '—', '(', ')', '!', '?']) {
        let words: Vec<&str> = clause.split_whitespace().collect();
        let mut i = 0;
        while i < words.len() {
            if !OPENERS.iter().any(|o| words[i].eq_ignore_ascii_case(o)) {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < words.len() && DETERMINERS.iter().any(|d| words[j].eq_ignore_ascii_case(d)) {
                j += 1;
            }
            let start = j;
            while j < words.len()
                && j - start < 4
                && words[j]
                    .chars()
                    .all(|c| c.is_alphanumeric() || c == '-' || c == '_')
                && !crate::text::STOPWORDS.contains(&words[j].to_lowercase().as_str())
            {
                j += 1;
            }
            let phrase = &words[start..j];
            if (2..=4).contains(&phrase.len()) {
                let stems: Vec<String> = phrase
                    .iter()
                    .filter_map(|w| content_words(w).into_iter().next())
                    .collect();
                // (A value is no qualifier: "at 02:00 UTC" / "at 04:30 UTC" is one schedule.)
                if let Some((head, mods)) = stems.split_last()
                    && !is_value(head)
                    && mods.iter().all(|m| !is_value(m))
                    && !mods.is_empty()
                {
                    out.push((head.clone(), mods.iter().cloned().collect()));
                }
            }
            i = j.max(i + 1);
        }
    }
    out
}

/// Whether the two texts qualify the same kind of thing ("pipeline", "tests", "service")
/// with other words each ("billing" / "email"): they are about two things.
fn other_qualified_thing(a: &str, b: &str) -> bool {
    let (qa, qb) = (qualified_things(a), qualified_things(b));
    qa.iter().any(|(head, mods)| {
        qb.iter()
            .any(|(h, m)| h == head && !m.is_empty() && mods.is_disjoint(m))
    })
}

/// Stems of the words that turn a rule round or give it up ("stop", "no longer need",
/// "never"), as [`content_words`] gives them: no thing a rule is about.
const TURNING_WORDS: &[&str] = &[
    "stop",
    "longer",
    "need",
    "never",
    "alway",
    "anymor",
    "quit",
    "skip",
    "avoid",
    "dont",
    // (and the words of obligation that say it: "must follow" / "no longer require")
    "must",
    "requir",
    "follow",
    "should",
    "allow",
    "mandatori",
    "requirement",
];

/// Words that say when rather than what ("anymore", "still"): a memory that differs from
/// another only by them has not put a word in another's place.
/// So are the words that name the scope a memory already has ("in this repo", "here").
const FILLERS: &[&str] = &[
    "anymor",
    "still",
    "alway",
    "current",
    "today",
    "repo",
    "repositori",
    "codebas",
    "here",
];

fn is_filler(w: &str) -> bool {
    FILLERS.contains(&w)
}

/// Verbs that only say a value holds ("Python services *run on* 3.10" / "… *are on* 3.12",
/// "write new services in Java 17" / "new services should *target* Java 21"): a memory
/// that differs by them and a value has a new value, not a new subject.
fn is_state_verb(w: &str) -> bool {
    static STEMS: std::sync::LazyLock<HashSet<String>> = std::sync::LazyLock::new(|| {
        content_words("run runs running use uses using target targets write version versions")
    });
    STEMS.contains(w)
}

/// Two forms of one word: "postgresql" / "postgr", "config" / "configur" (one starts with
/// the other, four letters at least), "four" / "4".
fn same_word_form(a: &str, b: &str) -> bool {
    const NUMBERS: &[&str] = &[
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let number = |w: &str| NUMBERS.iter().position(|n| *n == w).map(|i| i.to_string());
    if number(a).as_deref() == Some(b) || number(b).as_deref() == Some(a) {
        return true;
    }
    // Short forms (stemmed): "DB" / "database", "PRs" / "pull requests", "repo" / "repository".
    const SHORT: &[(&str, &str)] = &[
        ("db", "databas"),
        ("dbs", "databas"),
        ("pr", "pull"),
        ("prs", "pull"),
        ("repo", "repositori"),
        ("env", "environ"),
        ("config", "configur"),
        ("k8s", "kubernet"),
        ("js", "javascript"),
        ("ts", "typescript"),
    ];
    if SHORT
        .iter()
        .any(|(s, l)| (a == *s && b.starts_with(l)) || (b == *s && a.starts_with(l)))
    {
        return true;
    }
    let (short, long) = if a.len() <= b.len() { (a, b) } else { (b, a) };
    short.len() >= 4 && long.starts_with(short)
}

/// `text` with each time of day written as one number ("at 02:00 UTC" → "at 0200 UTC").
fn joined_times(text: &str) -> std::borrow::Cow<'_, str> {
    let b = text.as_bytes();
    // One or two digits, the colon, exactly two digits.
    let is_time_colon = |i: usize| {
        let before = b[..i]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_digit())
            .count();
        let after = b[i + 1..].iter().take_while(|c| c.is_ascii_digit()).count();
        b[i] == b':' && (1..=2).contains(&before) && after == 2
    };
    if !(0..b.len()).any(is_time_colon) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for (i, c) in text.char_indices() {
        if !(c == ':' && is_time_colon(i)) {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// Other names of one product, each with the one it is compared by ("Postgres 17" after
/// "PostgreSQL 16" is a new version of the same database). Only names that mean nothing else
/// in a sentence about code.
const PRODUCT_ALIASES: &[(&str, &str)] = &[
    ("postgres", "PostgreSQL"),
    ("k8s", "Kubernetes"),
    ("node.js", "Node"),
    ("nodejs", "Node"),
    ("golang", "Go"),
    ("mongo", "MongoDB"),
    ("react.js", "React"),
    ("reactjs", "React"),
    ("vue.js", "Vue"),
    ("vuejs", "Vue"),
    ("elasticsearch", "Elasticsearch"),
    ("es6", "ES2015"),
];

/// The text with each product alias written as its usual name (see [`PRODUCT_ALIASES`]).
fn usual_names(text: &str) -> std::borrow::Cow<'_, str> {
    let is_name_char = |c: char| c.is_ascii_alphanumeric() || c == '.';
    let words = || {
        text.split(|c: char| !is_name_char(c))
            .map(|w| w.trim_end_matches('.'))
    };
    if !words().any(|w| {
        PRODUCT_ALIASES
            .iter()
            .any(|(a, _)| w.eq_ignore_ascii_case(a))
    }) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    let mut rest = text;
    while !rest.is_empty() {
        let start = rest.find(is_name_char).unwrap_or(rest.len());
        out.push_str(&rest[..start]);
        rest = &rest[start..];
        let len = rest.find(|c: char| !is_name_char(c)).unwrap_or(rest.len());
        let word = &rest[..len];
        let bare = word.trim_end_matches('.');
        match PRODUCT_ALIASES
            .iter()
            .find(|(a, _)| bare.eq_ignore_ascii_case(a))
        {
            Some((_, usual)) => {
                out.push_str(usual);
                out.push_str(&word[bare.len()..]);
            }
            None => out.push_str(word),
        }
        rest = &rest[len..];
    }
    std::borrow::Cow::Owned(out)
}

/// A clause that negates twice ("never commit without running the tests") asserts.
fn double_negation(text: &str) -> bool {
    clauses(text).any(|clause| {
        clause
            .split_whitespace()
            .map(|raw| {
                raw.replace('\u{2019}', "'")
                    .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                    .to_lowercase()
            })
            .filter(|w| NEGATORS.contains(&w.as_str()) || w.ends_with("n't"))
            .count()
            >= 2
    })
}

/// Words that open what adds to a rule rather than narrows it: a further item, or (after the
/// rule's first word) the alternative it rules out.
const COORDINATORS: &[&str] = &["and", "or", "plus", "also"];
const ALTERNATIVES: &[&str] = &["not", "no", "never", "instead", "rather", "over", "without"];

/// The content words of `text` that add to its rule: after a coordinator or an alternative
/// ("use black, and isort for imports"; "use pnpm, not npm"), to the end of the clause. A
/// negation that opens the rule ("never use sudo …") marks no alternative.
/// The words inside `code spans`: a command or name the rule now also gives.
fn code_words(text: &str) -> HashSet<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .flat_map(content_words)
        .collect()
}

/// Whether a rule names an exception to itself ("…, but the worker stays on 3.10").
fn has_exception(text: &str) -> bool {
    text.split(|c: char| !c.is_alphanumeric()).any(|w| {
        ["but", "except", "unless", "whereas", "while"].contains(&w.to_lowercase().as_str())
    })
}

/// Who owns what, in "X owns Y", "Y is owned by X", "the owner of Y is X" (also maintains,
/// leads, runs, is responsible for; the reviewer, lead, contact for Y is X): `(owner, thing)`.
fn owner_and_thing(text: &str) -> Option<(String, String)> {
    let lower = text.to_lowercase();
    let lower = lower.trim_end_matches(['.', '!']);
    for by in [
        " owned by ",
        " maintained by ",
        " run by ",
        " led by ",
        " managed by ",
    ] {
        if let Some((thing, owner)) = lower.split_once(by) {
            return Some((owner.to_owned(), thing.to_owned()));
        }
    }
    for verb in [
        " owns ",
        " maintains ",
        " leads ",
        " is responsible for ",
        " are responsible for ",
    ] {
        if let Some((owner, thing)) = lower.split_once(verb) {
            return Some((owner.to_owned(), thing.to_owned()));
        }
    }
    // "Maya is the on-call lead for search" / "the search on-call lead is Dev": the side of
    // "is" that names the role is the thing.
    const ROLES: &[&str] = &[
        "owner",
        "maintainer",
        "reviewer",
        "lead",
        "contact",
        "on-call",
        "oncall",
        "dri",
        "go-to",
    ];
    if let Some((left, right)) = lower.split_once(" is ") {
        let has_role = |t: &str| t.split_whitespace().any(|w| ROLES.contains(&w));
        if has_role(right) && !has_role(left) && right.starts_with("the ") {
            return Some((left.to_owned(), right.to_owned()));
        }
        if has_role(left) && !has_role(right) {
            return Some((right.to_owned(), left.to_owned()));
        }
    }
    for role in [
        "owner",
        "maintainer",
        "reviewer",
        "lead",
        "contact",
        "point of contact",
    ] {
        for prep in [" of ", " for "] {
            let key = format!("{role}{prep}");
            if let Some(i) = lower.find(&key)
                && let Some(j) = lower[i..].rfind(" is ")
            {
                let thing = &lower[i + key.len()..i + j];
                let owner = &lower[i + j + 4..];
                return Some((owner.to_owned(), format!("{role} {thing}")));
            }
        }
    }
    None
}

/// The people a text says are gone from a role: "Priya is no longer involved", "Priya moved to
/// the platform team", "Priya left the team" (first names, lowercased).
fn people_gone(text: &str) -> Vec<String> {
    let words: Vec<&str> = text.split_whitespace().collect();
    let mut out = Vec::new();
    for (i, w) in words.iter().enumerate() {
        let name = w.trim_matches(|c: char| !c.is_alphanumeric());
        if !name.starts_with(|c: char| c.is_uppercase()) || name.len() < 2 || i + 2 >= words.len() {
            continue;
        }
        let next: String = words[i + 1..words.len().min(i + 7)]
            .join(" ")
            .to_lowercase();
        let gone = next.starts_with("is no longer")
            || next.starts_with("isn't involved")
            || next.starts_with("has left")
            || next.starts_with("left the")
            || (next.starts_with("moved to") && next.contains("team"))
            || next.starts_with("is gone");
        if gone {
            out.push(name.to_lowercase());
        }
    }
    out
}

/// Where the person says they moved: "I moved to Tokyo last month" → "tokyo".
fn moved_to(text: &str) -> Option<String> {
    place_after(
        text,
        &[
            "i moved to ",
            "i've moved to ",
            "i relocated to ",
            "i'm now in ",
            "i now live in ",
        ],
    )
}

/// Where the person says they live: "based in Lisbon", "I live in Lisbon" → "lisbon".
fn lives_in(text: &str) -> Option<String> {
    place_after(
        text,
        &[
            "based in ",
            "live in ",
            "living in ",
            "i'm in ",
            "located in ",
            "moved to ",
        ],
    )
}

/// The capitalised place name right after the first of `openers` the text holds, lowercased.
fn place_after(text: &str, openers: &[&str]) -> Option<String> {
    let lower = text.to_lowercase();
    let i = openers
        .iter()
        .find_map(|p| lower.find(p).map(|i| i + p.len()))?;
    let place = text.get(i..)?.split_whitespace().next()?;
    place.starts_with(|c: char| c.is_uppercase()).then(|| {
        place
            .trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    })
}

/// The links of a text, without their scheme and trailing slash.
fn links(text: &str) -> Vec<String> {
    text.split_whitespace()
        .filter_map(|w| w.split_once("://").map(|(_, rest)| rest))
        .map(|l| {
            l.trim_end_matches(|c: char| !c.is_alphanumeric() && c != '/')
                .trim_end_matches('/')
                .to_lowercase()
        })
        .filter(|l| !l.is_empty())
        .collect()
}

/// The files, paths and packages a text names: `src/gen/api.ts`, `billing.pb.go`, "the
/// ingest-harbor package". Links are not (see [`links`]).
fn named_subjects(text: &str) -> HashSet<String> {
    const KINDS: &[&str] = &[
        "package",
        "packages",
        "service",
        "module",
        "crate",
        "app",
        "repo",
        "library",
        "directory",
        "folder",
        "workspace",
        "project",
        "job",
        "pipeline",
    ];
    let words: Vec<&str> = text
        .split_whitespace()
        .map(|w| {
            w.trim_matches(|c: char| {
                matches!(
                    c,
                    '.' | ',' | ';' | ':' | '(' | ')' | '"' | '\'' | '`' | '!' | '?'
                )
            })
        })
        .collect();
    let mut out = HashSet::new();
    for (i, w) in words.iter().enumerate() {
        if w.contains("://") || w.is_empty() {
            continue;
        }
        let path = w.contains('/') && w.chars().any(char::is_alphanumeric);
        // (Not "Node.js", "Next.js": frameworks, one in another's place is a change.)
        let file = w.rsplit_once('.').is_some_and(|(base, ext)| {
            base.len() >= 2
                && base.chars().any(|c| c.is_ascii_alphabetic())
                && !(ext == "js" && base.starts_with(|c: char| c.is_ascii_uppercase()))
                && (1..=5).contains(&ext.len())
                && ext
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
                && ext.chars().any(|c| c.is_ascii_lowercase())
        });
        // "the ingest-harbor package": a name before the kind of thing it is.
        let named = words
            .get(i + 1)
            .is_some_and(|k| KINDS.iter().any(|n| k.eq_ignore_ascii_case(n)))
            && i > 0
            && words[i - 1].eq_ignore_ascii_case("the")
            && w.contains(['-', '_']);
        if path || file || named {
            out.insert(w.to_lowercase());
        }
    }
    out
}

/// Whether the two texts link to different places, one a path under the other's.
fn nested_links(a: &str, b: &str) -> bool {
    let (la, lb) = (links(a), links(b));
    if la.is_empty() || lb.is_empty() || la.iter().any(|l| lb.contains(l)) {
        return false;
    }
    let under =
        |x: &str, y: &str| x.len() > y.len() && x.starts_with(y) && x[y.len()..].starts_with('/');
    la.iter()
        .any(|x| lb.iter().any(|y| under(x, y) || under(y, x)))
}

fn additions(text: &str) -> HashSet<String> {
    let mut out = HashSet::new();
    let mut first = true;
    for clause in clauses(text) {
        let mut inside = false;
        for raw in clause.split_whitespace() {
            let w = raw
                .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
                .to_lowercase();
            if w.is_empty() {
                continue;
            }
            let opens = COORDINATORS.contains(&w.as_str())
                || (!first && ALTERNATIVES.contains(&w.as_str()));
            first = false;
            if opens {
                inside = true;
            } else if inside {
                out.extend(content_words(&w));
            }
        }
    }
    out
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

    /// One product under another of its names is one subject: "Postgres 17" after
    /// "PostgreSQL 16" is the new version, "postgres 16" the same memory; a word that only
    /// contains an alias is left alone.
    #[test]
    fn the_same_rule_in_other_punctuation_is_a_duplicate() {
        assert_eq!(
            rel(
                Project,
                "we use yarn not npm in this repo!",
                "We use Yarn, not npm, in this repo"
            ),
            Relation::Duplicate
        );
    }

    #[test]
    fn a_product_under_another_name_is_the_same_subject() {
        assert_eq!(
            rel(Project, "We use Postgres 17 now.", "We use PostgreSQL 16."),
            Relation::Supersedes
        );
        assert_eq!(
            rel(Project, "we use postgres 16", "We use PostgreSQL 16."),
            Relation::Duplicate
        );
        assert_eq!(
            rel(Project, "We use Node.js 20 now.", "We use Node 18."),
            Relation::Supersedes
        );
        assert_ne!(
            rel(Project, "Use Postgres for the cache.", "Use PostgreSQL 16."),
            Relation::Supersedes
        );
        // A bare version change in English, whatever words of use each says it with.
        for (new, old) in [
            ("We upgraded Python to 3.12.", "The Python version is 3.10."),
            ("We moved to k8s 1.30.", "We run Kubernetes 1.28."),
            ("We are on Node 20 now.", "We use Node 18 for this project."),
            ("We are on Node 20 now.", "We use Node 18."),
            (
                "This repo uses Go 1.23 now.",
                "We use Go 1.21 in this repo.",
            ),
            (
                "We're on Ruby 3.3 here.",
                "Ruby version is 3.1 for this project.",
            ),
        ] {
            assert_eq!(
                rel(Project, new, old),
                Relation::Supersedes,
                "{new} / {old}"
            );
        }
        for (new, old) in [
            ("We use Python 3.12 for the API.", "We use Python 3.10."),
            ("We use Node 20 and pnpm 9.", "We use Node 18."),
        ] {
            assert_ne!(
                rel(Project, new, old),
                Relation::Supersedes,
                "{new} / {old}"
            );
        }
        assert_eq!(usual_names("we use postgres."), "we use PostgreSQL.");
        assert_eq!(usual_names("the k8s cluster"), "the Kubernetes cluster");
        assert_eq!(
            usual_names("postgresql and mongoose"),
            "postgresql and mongoose"
        );
        assert_eq!(usual_names("Node.js 20"), "Node 20");
    }

    /// A version changed in another language ("我们用 PostgreSQL 16", then "we use PostgreSQL 17
    /// now") replaces the old memory; with a qualifier on one side it cannot be matched.
    #[test]
    fn a_version_changed_in_another_language_replaces_the_old() {
        for (new, old) in [
            ("We use PostgreSQL 17 now.", "我们用 PostgreSQL 16。"),
            ("我们改用 PostgreSQL 17 了。", "We use PostgreSQL 16."),
            ("We moved to Node 22.", "Node 18 を使っています。"),
        ] {
            assert_eq!(
                rel(Project, new, old),
                Relation::Supersedes,
                "{new} / {old}"
            );
        }
        for (new, old) in [
            (
                "We use PostgreSQL 17 for the reporting service.",
                "我们用 PostgreSQL 16。",
            ),
            (
                "Staging runs PostgreSQL 15, prod runs 16.",
                "本番は PostgreSQL 16",
            ),
            ("The analytics DB is PostgreSQL 14.", "主库用 PostgreSQL 16"),
            ("We use Redis 7 for caching.", "我们用 PostgreSQL 16。"),
            ("We use PostgreSQL 16.", "我们用 PostgreSQL 16。"),
            // The same language, a part named: that part's value.
            ("分析数据库用的是 PostgreSQL 14。", "我们用 PostgreSQL 16。"),
        ] {
            assert_ne!(
                rel(Project, new, old),
                Relation::Supersedes,
                "{new} / {old}"
            );
        }
        assert_eq!(
            rel(
                Project,
                "我们现在用 PostgreSQL 17。",
                "我们用 PostgreSQL 16。"
            ),
            Relation::Supersedes
        );
    }

    /// Traditional Chinese is compared as Simplified: a changed version replaces the old
    /// memory, the same rule in either script is one memory.
    #[test]
    fn traditional_chinese_is_compared_as_simplified() {
        assert_eq!(
            rel(Project, "我們改用 PostgreSQL 17 了", "我們用 PostgreSQL 16"),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Feedback,
                "以後用 pnpm，不要用 npm",
                "我们统一用 pnpm，不要用 npm"
            ),
            rel(
                Feedback,
                "以后用 pnpm，不要用 npm",
                "我们统一用 pnpm，不要用 npm"
            )
        );
        assert_eq!(
            rel(Feedback, "回覆請用英文", "回答请用中文"),
            Relation::Supersedes
        );
    }

    /// A link to another place is never the same memory: it replaces the old one when the
    /// rest says the same, else it points at another thing.
    #[test]
    fn another_link_is_never_a_restatement() {
        assert_eq!(
            rel(
                Reference,
                "The on-call runbook moved to https://runbooks.example.com/oncall.",
                "On-call runbook: https://wiki.example.com/oncall"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Reference,
                "Payments dashboard: https://grafana.example.com/d/payments",
                "Search latency dashboard: https://grafana.example.com/d/search"
            ),
            Relation::Distinct
        );
    }

    /// A value held by a verb that only says it holds ("runs on", "are on", "target") is
    /// the same statement with a new value; "only" added narrows a rule into a new one.
    #[test]
    fn new_values_and_narrowed_rules() {
        assert_eq!(
            rel(
                Project,
                "Python services are on 3.12.",
                "Python services run on Python 3.10."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Project,
                "Production Postgres was upgraded to 16.",
                "Production Postgres runs version 14."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Feedback,
                "Before committing, only run the tests for the packages you touched; CI runs the full suite.",
                "Run the full test suite before every commit."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Project,
                "The worker runs on Python 3.10.",
                "The API is on Python 3.12."
            ),
            Relation::Distinct
        );
    }

    /// Going back to what an old rule turned away from replaces it; a reply language said
    /// before the word for answering (Chinese, Japanese) is read.
    #[test]
    fn going_back_and_reply_languages_said_first() {
        assert_eq!(
            rel(
                Feedback,
                "Use pnpm again.",
                "We use bun here too, obviously — don't run pnpm in the worktree."
            ),
            Relation::Supersedes
        );
        assert_eq!(reply_language("请用中文回答我。"), Some("zh"));
        assert_eq!(reply_language("日本語で返事して"), Some("ja"));
        assert_eq!(
            reply_language("Answer me in English even if I write in Japanese"),
            Some("en")
        );
        assert_eq!(
            rel(
                Feedback,
                "Answer me in English again please.",
                "请用中文回答我。"
            ),
            Relation::Supersedes
        );
    }

    /// Rules about two named files or packages stay two rules; a thing said to have moved
    /// is one.
    #[test]
    fn rules_about_two_named_things_stay_apart() {
        assert_eq!(
            rel(
                Feedback,
                "Never edit the generated file proto/billing.pb.go by hand, regenerate it with buf generate instead.",
                "Never edit the generated file src/gen/api.ts by hand, regenerate it with pnpm codegen instead."
            ),
            Relation::Distinct
        );
        assert_eq!(
            rel(
                Project,
                "We use kustomize for the ingest-mike package, not pnpm.",
                "We use pnpm for the ingest-harbor package, not black."
            ),
            Relation::Distinct
        );
        assert_eq!(
            rel(
                Project,
                "The config moved from config/app.yaml to config/app.toml.",
                "The config lives in config/app.yaml."
            ),
            Relation::Supersedes
        );
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
        // The same value in fewer words, with a contraction typed either way.
        for new in ["We're on node 22 now.", "We’re on Node 22."] {
            assert_eq!(
                rel(Project, new, "Node version is 22."),
                Relation::Duplicate,
                "{new}"
            );
        }
        assert_eq!(
            rel(Project, "We're on node 22 now.", "We're on Python 3.12."),
            Relation::Distinct
        );
        // Said to be a change, one word in another's place; an addition is not a change.
        assert_eq!(
            rel(
                Project,
                "The default branch is now main.",
                "The default branch is master."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Project,
                "We now also deploy the frontend to Fly.",
                "We deploy the frontend to Vercel."
            ),
            Relation::Distinct
        );
        // Negated auxiliaries reject, whichever apostrophe: another choice against the same
        // rejected one.
        assert_eq!(
            rel(
                Feedback,
                "Use yarn; this repo doesn’t use npm.",
                "Use pnpm; this repo doesn't use npm."
            ),
            Relation::Supersedes
        );
    }

    /// A correction retires what it rejects, across rule and fact; a reversed preference is
    /// not "already remembered"; a fact said to have changed replaces the old one.
    #[test]
    fn corrections_reversals_and_changes() {
        let cross = |new_t, new: &str, old_t, old: &str| {
            let c = cairn_embed::cosine(&cairn_embed::embed(new), &cairn_embed::embed(old));
            relation(new_t, new, old_t, old, c)
        };
        // One language to be answered in, whichever language each rule is written in.
        assert_eq!(
            cross(
                Feedback,
                "返事は日本語でお願いします。",
                Feedback,
                "Answer me in English even if I write in Japanese."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            cross(
                Feedback,
                "Always reply in English.",
                Feedback,
                "Answer me in English."
            ),
            Relation::Duplicate
        );
        assert_eq!(
            cross(
                Feedback,
                "Write commit messages in English.",
                Feedback,
                "Answer me in Japanese."
            ),
            Relation::Distinct
        );
        // What is said to be gone is rejected.
        assert_eq!(
            cross(
                Feedback,
                "Switch to uv, poetry is gone.",
                Project,
                "We use poetry for dependency management."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            cross(
                Project,
                "The legacy importer was removed.",
                Project,
                "The nightly job runs the legacy importer and the exporter."
            ),
            Relation::Distinct
        );
        assert_eq!(
            cross(
                Feedback,
                "No, use vitest for tests, not jest",
                Project,
                "Tests use jest"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            cross(
                Feedback,
                "From now on use uv, not poetry.",
                Project,
                "We use poetry for this project, run poetry install."
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Feedback,
                "Use pnpm instead of npm from now on",
                "Use npm for installing packages"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                User,
                "I prefer spaces over tabs",
                "I prefer tabs over spaces"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Project,
                "The staging DB moved to db2.staging.internal",
                "The staging DB is db1.staging.internal"
            ),
            Relation::Supersedes
        );
        // Wanting nothing new, a "not X" restates an old rule that gave X as its reason.
        assert_ne!(
            rel(
                Feedback,
                "Use cargo nextest, not cargo test.",
                "Run the tests with cargo nextest run; plain cargo test is too slow here"
            ),
            Relation::Supersedes
        );
        // A fact corrected in place: the new one says all the old did, and what changed.
        assert_eq!(
            rel(
                Project,
                "Deploys to prod go through Flux now (ArgoCD was retired in November); never kubectl apply by hand.",
                "Deploys to prod go through ArgoCD; never kubectl apply by hand."
            ),
            Relation::Refines
        );
        // A change in one environment is not one in another.
        for (new, old) in [
            (
                "The staging DB moved to db2.staging.internal:5433",
                "The prod DB is db.prod.internal:5432",
            ),
            (
                "The staging server now runs on port 8080",
                "The dev server runs on port 3000",
            ),
            (
                "Redis now runs on port 6380 in CI",
                "Redis runs on port 6379 locally",
            ),
            (
                "The production DB moved to db3.internal",
                "The development DB is db1.internal",
            ),
        ] {
            assert_eq!(rel(Project, new, old), Relation::Distinct, "{new} / {old}");
        }
        // Rejecting one word of a broader fact narrows, it does not retire.
        for (new_t, new, old_t, old) in [
            (
                Project,
                "We use jemalloc on linux only (not on windows)",
                Project,
                "CI matrix covers linux, macos and windows on stable and MSRV",
            ),
            (
                Feedback,
                "Run unit tests without Docker, use the in-memory fake",
                Project,
                "Integration tests need Docker running",
            ),
            (
                Feedback,
                "Deploy preview builds to Netlify, not Vercel",
                Project,
                "We deploy the web app to Vercel",
            ),
        ] {
            assert_ne!(
                cross(new_t, new, old_t, old),
                Relation::Supersedes,
                "{new} / {old}"
            );
        }
        // CJK: one slot of the same sentence filled otherwise is a new choice; an environment
        // slot is another thing.
        assert_eq!(
            rel(
                Feedback,
                "コミットメッセージは日本語で書いてください。",
                "コミットメッセージは英語で書いてください。"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(Project, "开发数据库在 db2 上。", "生产数据库在 db1 上。"),
            Relation::Distinct
        );
        assert_eq!(
            rel(Project, "このDBは本番用です。", "このDBは開発用です。"),
            Relation::Distinct
        );
        assert_ne!(
            rel(
                Project,
                "バックエンドはVercelにデプロイする。",
                "フロントエンドはVercelにデプロイする。"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(Project, "订单服务的超时是五秒。", "订单服务的超时是三秒。"),
            Relation::Supersedes
        );
        assert_eq!(
            rel(
                Project,
                "每天 UTC 凌晨 2 点运行数据库备份。",
                "每天 UTC 凌晨 2 点运行夜间构建。"
            ),
            Relation::Distinct
        );
        assert_ne!(
            rel(
                Project,
                "每晚的日志清理任务在 UTC 3 点运行。",
                "每晚的备份任务在 UTC 3 点运行。"
            ),
            Relation::Supersedes
        );
        assert_eq!(
            rel(Feedback, "以后都用 pnpm 安装依赖", "以后都用 pnpm"),
            Relation::Duplicate
        );
        // Numbered things are things, not values of one.
        assert_eq!(
            rel(
                Project,
                "the service number 2 listens on port 10002.",
                "the service number 1 listens on port 10001."
            ),
            Relation::Distinct
        );
        assert_eq!(
            rel(
                Project,
                "Postgres moved to 17 on port 5433",
                "Postgres 16 on port 5432"
            ),
            Relation::Supersedes
        );
        // Not overturned: another subject that names the same tool, or another thing.
        assert_eq!(
            cross(
                Feedback,
                "use pnpm, not npm",
                Project,
                "npm audit runs in CI"
            ),
            Relation::Distinct
        );
        assert_eq!(
            cross(
                Feedback,
                "don't use Postgres for the job queue, use Redis",
                Project,
                "We use Postgres for the main database"
            ),
            Relation::Distinct
        );
        assert_eq!(
            rel(
                Project,
                "The prod DB is db2.prod.internal",
                "The staging DB is db1.staging.internal"
            ),
            Relation::Distinct
        );
        assert_eq!(
            rel(User, "I run tests over SSH", "I run tests locally"),
            Relation::Distinct
        );
    }

    /// Facts that differ in what they are about stay two facts; a new value replaces the old
    /// one; nothing the user said last is dropped as "already remembered".
    #[test]
    fn values_and_subjects() {
        let cases = [
            (
                Project,
                "The build uses node 22.",
                "The build uses node 18.",
                Relation::Supersedes,
            ),
            (
                Project,
                "The API timeout is 60 seconds.",
                "The API timeout is 30 seconds.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We use Postgres 17.",
                "We use Postgres.",
                Relation::Refines,
            ),
            (
                Feedback,
                "Run pytest -x -q.",
                "Run pytest -x.",
                Relation::Refines,
            ),
            (
                Project,
                "The prod db password is [REDACTED:password].",
                "The staging db password is [REDACTED:password].",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Never use console.log in tests either.",
                "Never use console.log in production code.",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Always use pnpm rather than npm for installing packages.",
                "Use pnpm, not npm.",
                Relation::Refines,
            ),
            // A narrower rule is already said by the broader one; a broader rule is news; a
            // rule with a further item, a flag or its alternative says more.
            (
                Feedback,
                "Never use sudo.",
                "Never use sudo pip install.",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Use black for formatting, and isort for imports.",
                "Use black for formatting.",
                Relation::Refines,
            ),
            (
                Feedback,
                "Use black for formatting.",
                "Use black for formatting, and isort for imports.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Run alembic upgrade head --sql.",
                "Run alembic upgrade head.",
                Relation::Refines,
            ),
            (
                Feedback,
                "Use pnpm, not npm.",
                "Use pnpm.",
                Relation::Refines,
            ),
            (
                Feedback,
                "Use pnpm.",
                "Use pnpm, not npm.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Never use sudo pip install.",
                "Never use sudo.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Never force push.",
                "Never force push to main.",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Never use console.log.",
                "Never use console.log in production code.",
                Relation::Distinct,
            ),
            (
                Project,
                "We use Postgres with pgvector.",
                "We use Postgres.",
                Relation::Refines,
            ),
            (
                Project,
                "We use Postgres.",
                "We use Postgres 17.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Deploy service B with helm chart v3.",
                "Deploy service A with helm chart v2.",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Deploy service B with helm chart v2.",
                "Deploy service A with helm chart v2.",
                Relation::Distinct,
            ),
            (
                Project,
                "The auth service listens on port 9443.",
                "The billing service listens on port 8001.",
                Relation::Distinct,
            ),
            (
                Project,
                "The prod DB is on port 5432.",
                "The staging DB is on port 5433.",
                Relation::Distinct,
            ),
            (
                Project,
                "Production database is db-prod.internal.",
                "Staging database is db-staging.internal.",
                Relation::Distinct,
            ),
            (
                Project,
                "We ship on the evening of 2026-11-26.",
                "The audit is on Thursday 2026-11-26.",
                Relation::Distinct,
            ),
            (
                Project,
                "2026-11-27要发版。",
                "The contract renews Friday 2026-11-27.",
                Relation::Distinct,
            ),
            (
                Project,
                "The service number 12 named svc12zeta is deployed with helm on port 8012.",
                "The service number 11 named svc11zeta is deployed with helm on port 8011.",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Use yarn, not npm.",
                "Use pnpm, not npm.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We use pnpm (not npm).",
                "Use pnpm, not npm.",
                Relation::Duplicate,
            ),
        ];
        for (t, new, old, want) in cases {
            let old_type = if new.starts_with("We use pnpm") {
                Feedback
            } else {
                t
            };
            let c = cairn_embed::cosine(&cairn_embed::embed(new), &cairn_embed::embed(old));
            assert_eq!(
                relation(t, new, old_type, old, c),
                want,
                "{new:?} against {old:?} (cosine {c})"
            );
        }
    }

    /// A change said with what it left behind, a rule turned round, and one word put in
    /// another's place: the new memory must never be dropped as a restatement.
    #[test]
    fn changes_reversals_and_swaps_are_never_restatements() {
        let cases = [
            (
                Project,
                "We migrated from poetry to uv for dependency management.",
                "We use poetry to manage dependencies.",
                Relation::Supersedes,
            ),
            (
                Project,
                "Switched the test runner from Jest to Vitest.",
                "Tests are run with Jest.",
                Relation::Supersedes,
            ),
            (
                Project,
                "GitHub Actions replaced Travis CI for our CI.",
                "CI runs on Travis CI.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We dropped log4j for logback.",
                "Logging is done with log4j.",
                Relation::Supersedes,
            ),
            (
                Feedback,
                "Never use semicolons in JavaScript.",
                "Always use semicolons in JavaScript.",
                Relation::Supersedes,
            ),
            (
                Feedback,
                "Don't squash commits when merging PRs anymore; use merge commits.",
                "Always squash commits when merging PRs.",
                Relation::Supersedes,
            ),
            (
                Project,
                "The payments service is now owned by Bob's team.",
                "The payments service is owned by Alice's team.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We switched to uv, poetry is gone.",
                "We use poetry for dependency management in this repo, so run poetry install to set things up.",
                Relation::Supersedes,
            ),
            (
                Project,
                "The dark-mode feature flag is now on in production.",
                "The dark-mode feature flag is off in production.",
                Relation::Supersedes,
            ),
            (
                Project,
                "Nightly builds run at 04:30 UTC.",
                "Nightly builds run at 02:00 UTC.",
                Relation::Supersedes,
            ),
            (
                Project,
                "Production Postgres was upgraded to 16.",
                "The Postgres version in production is 14.",
                Relation::Supersedes,
            ),
            (
                Project,
                "Port 5433 is where the staging DB listens.",
                "The staging database listens on port 5433.",
                Relation::Duplicate,
            ),
            // One owner at a time: another owner of the same thing is a change, said or not.
            (
                Project,
                "The payments service is owned by Bob's team.",
                "The payments service is owned by Alice's team.",
                Relation::Supersedes,
            ),
            (
                Project,
                "Alice owns the billing service.",
                "Alice owns the auth service.",
                Relation::Distinct,
            ),
            // Another day for the same thing; not for another environment.
            (
                Project,
                "Deploys happen on Thursdays.",
                "Deploys happen on Tuesdays.",
                Relation::Supersedes,
            ),
            (
                Project,
                "Deploys to prod happen on Thursdays.",
                "Deploys to staging happen on Tuesdays.",
                Relation::Distinct,
            ),
            // A rule that also says which language something else is in is more than the
            // reply language: a new reply language does not retire it.
            (
                Feedback,
                "From now on, talk to me in English.",
                "Please keep PR descriptions in English, but talk to me in Japanese is fine.",
                Relation::Distinct,
            ),
            // An owner said to be gone, a person who moved.
            (
                Project,
                "From now on Marcus Chen reviews every change under internal/payments; Priya is no longer involved.",
                "Priya Raman owns the payments module, ask her before touching internal/payments.",
                Relation::Supersedes,
            ),
            (
                User,
                "I moved to Tokyo last month.",
                "I live in Lisbon.",
                Relation::Supersedes,
            ),
            (
                User,
                "I moved to Tokyo last month.",
                "I'm a backend engineer based in Lisbon.",
                Relation::Distinct,
            ),
            // What a change left behind, or what is no longer used, retires a memory about it.
            (
                Project,
                "We moved from pnpm to bun.",
                "We use pnpm in this repo, not npm or yarn.",
                Relation::Supersedes,
            ),
            (
                Project,
                "we dont use sqlfmt anymore",
                "Format SQL with sqlfmt.",
                Relation::Supersedes,
            ),
            (
                Project,
                "我们上个月把 Fivetran 换成 Airbyte 了。",
                "我们用 Fivetran 做数据同步。",
                Relation::Supersedes,
            ),
            // One option of a closed set for another, the rest alike: a change of mind.
            (
                Feedback,
                "Prefer double quotes for strings in JavaScript.",
                "Prefer single quotes for strings in JavaScript.",
                Relation::Supersedes,
            ),
            (
                Feedback,
                "Actually, keep tabs for indentation.",
                "Use 2 spaces for indentation.",
                Relation::Supersedes,
            ),
            (
                Feedback,
                "Use tabs in Go files.",
                "Use spaces in YAML files.",
                Relation::Distinct,
            ),
            (
                Feedback,
                "Use 4 spaces for Python files.",
                "Use 2 spaces for indentation.",
                Relation::Distinct,
            ),
            // A ban lifted, said to be allowed now; without such a word, a narrower case.
            (
                Feedback,
                "Deploying on Fridays is fine now, the freeze is lifted.",
                "Never deploy on Fridays.",
                Relation::Supersedes,
            ),
            (
                Feedback,
                "Mock the database in unit tests.",
                "Don't mock the database.",
                Relation::Distinct,
            ),
            // A change that names what it left behind, whatever else it says.
            (
                Project,
                "We moved from Jest to Vitest, so write new tests with vitest.",
                "We use Jest for unit tests.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We've replaced Jest with Vitest.",
                "We use Jest for unit tests.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We switched from pnpm to bun in the week of 2026-10-19, use bun for everything now.",
                "We use pnpm, not npm, in this repo.",
                Relation::Supersedes,
            ),
            (
                Project,
                "We moved from Jest to Vitest for unit tests.",
                "Playwright runs the e2e suite, Cypress the visual checks, Jest the unit tests.",
                Relation::Distinct,
            ),
            // Restatements stay restatements.
            (
                Feedback,
                "Keep your answers short.",
                "Keep your answers short, no recaps at the end.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Never commit without running the tests.",
                "Always run the tests before committing.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Don't use npm here; install packages with pnpm.",
                "Use pnpm, not npm, for installing packages in this repo.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Python files are indented with four spaces.",
                "Use 4 spaces for indentation in Python files.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Do not force push to main.",
                "Never force-push to the main branch.",
                Relation::Duplicate,
            ),
            (
                Feedback,
                "Tests should use pytest rather than unittest.",
                "Write tests with pytest, not unittest.",
                Relation::Duplicate,
            ),
            // Another subject sharing the words stays another memory.
            (
                Feedback,
                "Don't mock the network in tests.",
                "Don't mock the database in these tests.",
                Relation::Distinct,
            ),
            (
                Project,
                "Read the config from the environment, then from config.toml.",
                "Read secrets from the vault.",
                Relation::Distinct,
            ),
        ];
        for (t, new, old, want) in cases {
            assert_eq!(rel(t, new, old), want, "{new:?} against {old:?}");
        }
        // A project fact says how a pointer changed.
        let (new, old) = (
            "The staging server moved to staging2.acme.internal.",
            "The staging server is staging.acme.internal.",
        );
        let c = cairn_embed::cosine(&cairn_embed::embed(new), &cairn_embed::embed(old));
        assert!(matches!(
            relation(Project, new, Reference, old, c),
            Relation::Supersedes | Relation::Refines
        ));
        assert_eq!(
            relation(
                Reference,
                "The staging dashboard is at https://grafana.example.com/d/stg.",
                Project,
                "The staging server is staging.acme.internal.",
                0.8
            ),
            Relation::Distinct
        );
    }
}
