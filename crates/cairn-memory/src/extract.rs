//! Offline extraction: explicit memory statements in a user's prompt, typed, with their Why.
//!
//! No model is called. A prompt is cut into sentences; a sentence is a memory statement when
//! it has one of the explicit shapes people use to tell an agent something durable:
//!
//! | shape | English | Japanese | Chinese | type |
//! |---|---|---|---|---|
//! | explicit | "remember (that) …", "keep in mind …", "…, keep that in mind", "note to self: …", "don't forget to …"; "…. Remember that." (the sentence before) | 覚えて, "…。これを覚えておいて" | 记住, 记得 (with 每次, 以后 …), "…，记住这个", "…，这个你记一下", "…。记住这个。" | by content |
//! | from now on | "from now on …", "going forward …" | 今後は, これからは | 以后, 从现在开始 | feedback (a fact: by content) |
//! | always / never | "(we) always …", "never …", "make sure to always …" | 常に, 必ず (a request, or not a problem report) | 总是, 始终 (not a problem report) | feedback ("I always …": user) |
//! | standing | "prefer / avoid / use … in this codebase, everywhere, by default", "make sure every new …", "ask (me) before adding …" | "…ない方針で", "…書かないルールにしてます", "…する決まりなので" (without the task after it: project) | "统一用 X，不用 Y" (project) | feedback |
//! | don't | "don't …", "avoid …", "stop …ing" | 〜しないで, 禁止 | 不要, 别 | feedback |
//! | we use | "we use X (not Y)", "this repo uses …", "we don't use X here", "we're on Node 22 now", "… is always … in this codebase" | うちは〜を使っています | 我们用 | project |
//! | changed | "we switched from X to Y", "CI moved from X to Y", "the staging server moved to …", "we upgraded to Python 3.12", "we moved off X", "we no longer use X", "X is gone, we migrated to Y", "we dropped X, … Y now" (not a branch, the next ticket, code moved between files, nor the start of a problem) | "XからYに移行しました", "Xはやめて、Yに移行した" | "我们上个月把 X 换成 Y 了", "已经不用 X 了" | project |
//! | convention | "…, never commit the .xcodeproj" (a rule in a clause after a fact: feedback), "amounts are int64 minor units everywhere", "every feature is a TCA reducer …", "pnpm only in this repo", "no unwrap()/expect() in firmware/app" (feedback) (not a problem, a search, or steps of the task) | "ログは全部defmtで", "XじゃなくてYで作ってます" | "用 X，不用 Y" | project |
//! | aside | "fyi / btw / for context / context in case it matters: …" saying how things always are ("only", "never", "instead of", "unless", "are generated", "on purpose") | | "规矩是…", "背景：我们…只有/不允许…" | project |
//! | use, not | "use X, not Y", "use X instead of Y", "use X for …, never Y" | | | feedback |
//! | correction | "no, use …" | いや、〜を使って | 不对，用 … | feedback |
//! | preference | | 〜は〜で書いてください | | feedback |
//! | about me | "I'm a …", "I prefer …", "I use X, not Y", "call me …", "I'm usually on …, so prefer …", "I review everything on my phone" | 私は〜です, 私は…基本…やってます | 我是 | user |
//! | pointer | "the runbooks live at https://…", "Status page: https://…", "crashes: crashlytics → https://…", "… runbook (restore, creds): https://…" (not a link to one PR, run or commit) | "…は https://…" | "…在 https://…" | reference |
//!
//! "By content" means: a URL, host:port, ticket or dashboard → `reference`; about the person →
//! `user` (unless it names the project: "I want this repo's tests to use pytest-xdist" is
//! feedback, "my db password for this project is in 1Password" a project fact); an
//! instruction → `feedback`; anything else → `project`. A bare "don't …" is kept only
//! when it reads as a standing rule (a correction, a stated reason, the alternative to use
//! instead, "don't use X", or a general qualifier such as "in this repo", "ever", "from my
//! laptop", a class of things: "in code comments", "to commit messages", "every line"), never
//! when it is about the task at hand ("just
//! answer, don't change anything", "don't commit yet"). Questions are never statements, and
//! neither are reports of a problem that happen to say "always" ("I always forget …",
//! "ビルドが常に失敗します", "总是报错"), complaints ("you always forget the tests"), or
//! any English rule about the thing at hand ("always return early in this function", "use
//! fetch instead of axios in UserList.tsx", "we use the console for this one-off fix"):
//! "in/for this X" marks the thing at hand unless X is a standing scope (repo, project,
//! codebase, team, app, service, tests), and so do "there", "apply/run/merge this", and a
//! function's name ("in parseCoupon"). Neither are the task's next step ("remember to also
//! …" without an occasion, "before you're done"), how things are now ("remember, it's
//! Friday", "I only have 20 minutes"), a pick among the agent's options ("I prefer option
//! B"), what keeps happening ("we always get throttled", "always the same error", "never seen
//! this before", "ローカルでは常に通ります"), a hypothetical (もし…なら) or an opinion (…と思います),
//! a constraint on the task (ただし…, "if possible"), a spec ("toggles should always be
//! right-aligned" without a word that makes it stand), or text the prompt quotes: after "the
//! linter says:", "From the docs:", "tokio docs for `X`:", "Here is the contract:", "Maria's
//! review:", "レビューコメントです：", "文档里写着：", up to the next blank line after it, and tool
//! output lines ("Warning: …", "npm WARN …", "src/x.go:12:1: …", "assertion failed: …",
//! "thread '…' panicked", "[00:00:12.100,000] <err> …", timestamps).
//!
//! A statement also counts after a short lead-in that ends in a colon ("Quick rule for this
//! app: …", "还有一个通用的要求：…"), and so do a rule said of its subject ("error messages
//! must never include …", not "it should always retry" nor "we should never have …"), a rule
//! after what explains it ("…, so never parallelise uploads"), "that's the rule going forward
//! for …" (the sentence before is the rule, the rest how to apply it), "don't do that" (with
//! the sentence before, or nothing), a standing wish about the agent's answers ("keep your
//! answers short", "回答的时候请用中文"), "所有…都必须…", and "I'm in Berlin", "I'm mostly a
//! backend person", "every time you add an env var, document it" (not "whenever you're
//! ready"), "that applies to all my repos" (the sentence before, kept global), and where
//! something is kept in a tool named without a link ("incidents are tracked in PagerDuty")
//! or on an internal host; "Correction: X is Y, not Z" (a project fact); "every service must
//! expose …"; "That's the design, don't add locks" (with the sentence before); "Please answer
//! in short bullet points" (global); a short CJK "以后都按 15 来" takes the sentence before.
//! "From now on" also counts after a lead-in ("btw, from now on …", "…, and from now on
//! …").
//! A bare "don't …" also stands when it is about a class of things ("don't write comments
//! that …", "stop adding docstrings to …") or names the alternative after a comma ("stop using
//! print, use the logging module"). A rule whose first clause says "it" or "them" takes the
//! sentence before it along ("We have a job called export. Never restart it by hand."), and a
//! "Dashboard: https://…" line after a fact joins it. A rule about how the agent answers the
//! person ("answer me in English", "回答尽量简短", or said to hold "whatever the repo") is
//! marked personal and kept global.
//!
//! A request to forget what was said before ("forget the rule about …", "ignore what I told
//! you about …", "…のルールは忘れて", "忘掉关于…的那条规则") is not a statement: [`retractions`]
//! gives its subject (extraction forgets the memory it names), and what follows it in the
//! sentence ("…, that's no longer true — we use merge commits now") is read as one.
//!
//! **Why** comes from the same sentence (after a dash, "because", "since", "otherwise"; in
//! Japanese the clause before 〜ので/〜から; in Chinese 因为/否则) or from the next sentence when
//! it explains rather than asks or orders ("This repo has a pnpm-lock.yaml …"), or, after an
//! acknowledgement ("right, those keys are ancient."), from the sentence before. **How to
//! apply** comes from a following instruction that reads as a rule ("Use the real test DB; …").

use std::sync::LazyLock;

use regex::Regex;

use crate::model::MemoryType;

mod agent_wrote;
mod cjk;
mod facts;
mod quoted;

use crate::text::{capitalize, sentences, with_full_stop};
pub use agent_wrote::AgentMemoryDirs;
#[cfg(test)]
use agent_wrote::is_instruction_file;
use cjk::{ZH_DONT, detect_cjk};
use quoted::prose;

/// One memory statement found in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    /// Its type.
    pub memory_type: MemoryType,
    /// The rule or fact, cleaned of the trigger phrase ("from now on", "remember that").
    pub rule: String,
    /// Why, when the surrounding text says.
    pub why: Option<String>,
    /// How to apply, when the surrounding text says.
    pub how: Option<String>,
    /// Which shape matched (`explicit`, `from-now-on`, `always`, `dont`, `we-use`, `use-not`,
    /// `standing`, `correction`, `preference`, `about-me`, `pointer`).
    pub trigger: &'static str,
    /// A rule about how the agent talks to the person ("answer me in English", "回答尽量简短"):
    /// it holds in every project, so it is kept global.
    pub personal: bool,
}

/// Whether a rule is about the person wherever they work: said to hold in every project, or
/// about how the agent answers them (and not tied to the project).
/// `said` is the sentence as the person typed it, with any lead-in ("Globally: …").
fn is_personal(rule: &str, how: Option<&str>, said: &str, why: Option<&str>) -> bool {
    let everywhere = |t: &str| {
        has_any(
            &t.to_lowercase(),
            &[
                "whatever",
                "every",
                "any",
                "all ",
                "global",
                "すべて",
                "全部",
                "全て",
                "どの",
                "グローバル",
                "所有",
                "每个",
                "全局",
            ],
        ) && EVERY_PROJECT.is_match(t)
    };
    everywhere(rule)
        || how.is_some_and(everywhere)
        || why.is_some_and(everywhere)
        || everywhere(said)
        || about_answering(rule)
        || (has_any(&rule.to_lowercase(), &["my "])
            && MY_OWN_WORK.is_match(rule)
            && !ABOUT_PROJECT.is_match(rule))
}

/// The type of a memory given by hand without one: as extraction would type the statement,
/// feedback for a rule of the person's wherever they work ("In all my projects, use pnpm"),
/// else by [`classify`].
pub fn guess_type(text: &str) -> MemoryType {
    match candidates(text).as_slice() {
        [one] => one.memory_type,
        _ if is_personal(text, None, text, None) => MemoryType::Feedback,
        _ => classify(text),
    }
}

/// Whether a memory given by hand (`cairn remember`, MCP `memory_remember`) of `memory_type`
/// holds in every project, as extraction would keep it: a feedback or user memory said to hold
/// everywhere ("Globally: …", "in all my projects …") or about how the agent answers.
pub fn holds_everywhere(memory_type: MemoryType, text: &str) -> bool {
    memory_type == MemoryType::User
        || (memory_type == MemoryType::Feedback
            && (candidates(text).iter().any(|c| c.personal) || is_personal(text, None, text, None)))
}

/// The person's own work wherever it is done: "my commit messages", "my PRs", "my commits".
static MY_OWN_WORK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bmy (?:own )?(?:commit messages?|commits|prs|pull requests|branches|code reviews?|reviews)\b",
    )
});

/// Whether a rule is about how the agent answers the person ("answer me in English", "be
/// more terse", "回答尽量简短") and not about the project.
fn about_answering(rule: &str) -> bool {
    let lower = rule.to_lowercase();
    let replies = has_any(
        &lower,
        &[
            "answer", "repl", "respond", "talk", "speak", "write", "explain", "your ", " me",
            "keep", "返", "敬語", "話", "口調", "答", "回", "说", "提示", "説明",
        ],
    ) && (ABOUT_REPLIES.is_match(rule) || reply_habit(rule))
        || (has_any(
            &lower,
            &[
                "terse",
                "concise",
                "brief",
                "succinct",
                "verbose",
                "wordy",
                "recap",
                "summar",
                "preamble",
                "apolog",
                "fluff",
                "filler",
                "pleasantr",
                "small talk",
            ],
        ) && ANSWER_FORM.is_match(rule));
    replies && !ABOUT_PROJECT.is_match(rule)
}

/// How the agent should answer the person, wherever they work.
static ABOUT_REPLIES: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:answer|reply|respond|talk|speak|write|explain(?: things)?)\s+(?:to\s+)?me\b|\b(?:answer|reply|respond|talk|speak|write)\s+(?:\w+\s+)?in (?:english|japanese|chinese|mandarin|german|french|spanish|korean|italian|portuguese|dutch|russian|polish|turkish)\b|\b(?:you write|anything you (?:write|say)) for me\b|\byour (?:answers|replies|responses|explanations|tone|messages to me)\b|返事|返信|返答|敬語|話して|口調|で答えて|回答|回复|回覆|跟我说|和我说|对我说",
    )
});

/// How long and in what manner the agent answers, said bluntly: "Be more terse.", "No more
/// recaps please.", "Skip the preamble." (never of a thing in the project: "no summaries in
/// the PR description" stops before the end).
static ANSWER_FORM: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:(?:be|stay)\s+(?:more\s+|less\s+|very\s+|a bit more\s+)?(?:terse|concise|brief|succinct|verbose|wordy)|(?:no|stop|skip|drop|cut|fewer|less|without)\s+(?:the\s+|more\s+|all the\s+|any\s+)?(?:recaps?|summaries|summary|preambles?|apolog(?:ies|ising|izing|y)|fluff|filler|pleasantries|small talk)(?:\s+(?:at the end|at the start|at the top))?)(?:\s+(?:please|anymore|any more|thanks|thank you))*[.!]*$",
    )
});

/// A rule said to hold in every project.
static EVERY_PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\bwhatever the (?:repo|project|codebase)\b|\b(?:in|on|for) (?:every|any|all(?: of)?(?: my| our)?) (?:repos?|repositories|projects?|codebases?)\b|\b(?:across|for|to) all (?:my |of my )?(?:repos|repositories|projects)\b|^\s*(?:globally|everywhere)\b|\b(?:globally|everywhere I work)\s*[,.:;!]?\s*$|\bglobal (?:rule|preference)\b|\bapplies everywhere\b|\beverywhere, not just (?:here|this (?:repo|project))\b|(?:すべて|全部|全て)の(?:プロジェクト|リポジトリ)|どの(?:プロジェクト|リポジトリ)でも|^\s*グローバル(?:に|で)?[：:、]|所有(?:的)?(?:项目|仓库|代码库)|每个(?:项目|仓库)|^\s*全局(?:规则)?[：:]",
    )
});

/// A sentence that only labels a link: "Dashboard: https://…".
static LABELLED_LINK: LazyLock<Regex> =
    LazyLock::new(|| re(r"^[A-Za-z](?-u:[\w ./-]){0,30}:[ \t]*<?https?://\S+>?[.]?$"));

/// "Don't do that.", "please stop doing this", "never do it again".
static EN_BARE_PRONOUN_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:don't|don’t|do not|never|stop|quit)\s+(?:do(?:ing)?\s+)?(?:that|this|it)(?:\s+again|\s+anymore)?[.!]*$",
    )
});

fn re(p: &str) -> Regex {
    Regex::new(p).expect("static regex")
}

const IMPERATIVE_VERBS: &[&str] = &[
    "use",
    "run",
    "fix",
    "add",
    "make",
    "write",
    "update",
    "check",
    "find",
    "keep",
    "put",
    "create",
    "change",
    "remove",
    "delete",
    "move",
    "try",
    "go",
    "do",
    "don't",
    "dont",
    "never",
    "always",
    "avoid",
    "stop",
    "prefer",
    "call",
    "name",
    "rename",
    "set",
    "let",
    "let's",
    "lets",
    "give",
    "show",
    "tell",
    "explain",
    "list",
    "look",
    "read",
    "open",
    "build",
    "test",
    "deploy",
    "install",
    "upgrade",
    "bump",
    "refactor",
    "split",
    "merge",
    "commit",
    "push",
    "pull",
    "draft",
    "plan",
    "review",
    "send",
    "start",
    "restart",
    "switch",
    "stick",
    "ask",
    "answer",
    "please",
    "just",
    "can",
    "could",
    "would",
    "will",
    "ok",
    "okay",
    "thanks",
    "store",
    "pass",
    "document",
    "paste",
    "mention",
    "ensure",
    "make",
    "treat",
    "include",
    "exclude",
    "skip",
    "ignore",
    "implement",
    "migrate",
];

const HOW_VERBS: &[&str] = &[
    "use", "run", "prefer", "put", "keep", "call", "go", "write", "name", "store", "pass",
    "always", "stick", "treat", "route", "ask",
];

fn first_word(s: &str) -> String {
    s.split(|c: char| c.is_whitespace() || c == ',' || c == ':')
        .find(|w| !w.is_empty())
        .unwrap_or("")
        .trim_matches(|c: char| !c.is_alphanumeric() && c != '\'')
        .to_lowercase()
}

fn is_question(s: &str) -> bool {
    let t = s.trim_end();
    if t.ends_with('?') || t.ends_with('？') {
        return true;
    }
    // "is it ok to delete .env.local here, it looks stale": asked without its mark. (Not
    // "can you …", a polite request.)
    const ASKING: &[&str] = &[
        "is it ok ",
        "is it okay ",
        "is it fine ",
        "is it safe ",
        "is it possible ",
        "is it worth ",
        "is there ",
        "are there ",
        "should i ",
        "should we ",
        "do we ",
        "do i ",
        "does it ",
        "does this ",
        "am i ",
        "are we ",
        "shall we ",
    ];
    let head: String = t.chars().take(18).collect::<String>().to_ascii_lowercase();
    ASKING.iter().any(|p| head.starts_with(p))
}

static EN_MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(no|nope|nah|wrong|actually|correction|ok|okay|right|yes|yeah|yep|hmm|well|also|and|but|so|oh|ah|lol|haha|ugh|wait|hey|thanks|thank you|please|pls|plz|btw|fyi|fwiw|tbh|honestly|heads up|for context|just so you know|for what it's worth|by the way|one more thing|in general|generally|anyway|anyways|plus|one last thing)\b(?:\s*[—–])?[,.!:;]?\s+|^(here(?:'s|’s|\s+is)\s+the\s+(?:thing|deal))\s*[:—–-]\s*",
    )
});
static JA_MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(いや|いいえ|違います|違う違う|違う|ちがう|そうじゃなくて|ありがとう|あと|それと|なお|ちなみに|ところで|そういえば)[、,。！!]?\s*",
    )
});
static ZH_MARKERS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(不是|不对|错了|好的|谢谢|另外说一下|另外说一句|另外|还有|哦对了|噢对了|啊对了|对了|嗯|哦|顺便说一下|顺便说一句|顺便)[，,。！!]?\s*",
    )
});

/// The words [`EN_MARKERS`] opens with.
const EN_MARKER_WORDS: &[&str] = &[
    "anyway",
    "anyways",
    "plus",
    "one",
    "correction",
    "fwiw",
    "tbh",
    "honestly",
    "heads",
    "for",
    "just",
    "no",
    "nope",
    "nah",
    "wrong",
    "actually",
    "ok",
    "okay",
    "right",
    "yes",
    "yeah",
    "yep",
    "hmm",
    "well",
    "also",
    "and",
    "but",
    "so",
    "oh",
    "ah",
    "lol",
    "haha",
    "ugh",
    "wait",
    "hey",
    "thanks",
    "thank",
    "please",
    "pls",
    "plz",
    "btw",
    "fyi",
    "by",
    "one",
    "in",
    "generally",
    "here's",
    "here’s",
    "here",
];

const CORRECTIONS: &[&str] = &[
    "correction",
    "no",
    "nope",
    "nah",
    "wrong",
    "actually",
    "right",
    "いや",
    "いいえ",
    "違います",
    "違う",
    "違う違う",
    "ちがう",
    "そうじゃなくて",
    "不是",
    "不对",
    "错了",
];

/// A sentence without a leading marker that is set off by punctuation ("No, …", "Right.
/// …"); "No hardcoded copy" keeps its "No".
fn without_marker(s: &str) -> &str {
    let rest = strip_markers(s).0;
    let gone = s.trim_start()[..s.trim_start().len() - rest.len()].trim_end();
    if gone.is_empty() || gone.ends_with([',', '.', '!', ':', ';', '、', '，', '。']) {
        rest
    } else {
        s.trim()
    }
}

/// Strips leading discourse markers ("no,", "right,", "いや、", "不对，"); returns the rest
/// and whether one of them was a correction.
fn strip_markers(s: &str) -> (&str, bool) {
    let mut rest = s.trim();
    let mut correction = false;
    for _ in 0..4 {
        // Cheap first: only a sentence opening with a marker word (or in CJK) is matched.
        if rest.is_ascii() && !EN_MARKER_WORDS.contains(&lead_word(rest).as_str()) {
            break;
        }
        let m = EN_MARKERS
            .captures(rest)
            .or_else(|| JA_MARKERS.captures(rest))
            .or_else(|| ZH_MARKERS.captures(rest));
        let Some(c) = m else { break };
        // ("here's the thing: …" is the second group.)
        let word = c
            .get(1)
            .or_else(|| c.get(2))
            .map_or(String::new(), |w| w.as_str().to_lowercase());
        if CORRECTIONS.contains(&word.as_str()) {
            correction = true;
        }
        rest = rest[c[0].len()..].trim_start();
    }
    let lower = rest.to_lowercase();
    for wrong in ["that's wrong", "that is wrong", "that’s wrong"] {
        if lower.starts_with(wrong) {
            correction = true;
            let after = rest[wrong.len()..]
                .trim_start_matches([',', '.', ':', ';', '!', ' ', '—', '–', '-']);
            if !after.is_empty() {
                rest = after;
            }
            break;
        }
    }
    (rest, correction)
}

enum Shape {
    /// Content of an explicit "remember" statement.
    Explicit(String),
    /// A standing rule; the type is fixed.
    Rule(String, MemoryType),
    /// A rule given after "from now on": typed by content.
    FromNowOn(String),
    /// "That's the design, don't add locks around it": the sentence before and this one, as
    /// one rule.
    Addendum,
    /// "Remember that." / "Keep that in mind whenever …" / "これを覚えておいて": the thing to
    /// remember is the sentence before; what follows the pointer (an occasion) is how to
    /// apply it.
    BackReference(String),
}

/// "…. Remember that.", "please remember this", "keep that in mind whenever you …": a
/// request to remember what was just said, and the occasion it is for.
static EN_BACK_REFERENCE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:(?:remember|memori[sz]e|note|save|don't forget|don’t forget|do not forget)\s+(?:this|that|it)|(?:keep|bear)\s+(?:this|that|it)\s+in\s+mind|keep in mind)(?:\s+(?:please|pls))?(?:\s+for\s+(?:later|next time|the future|future sessions))?\s*(?:[,:;]\s*)?((?:whenever|when|before|after|if|each time|every time|always)\b[^.!]*)?[.!]*\s*$",
    )
});

/// What follows "from now on" when it only points back: "like this", "ずっとこれで",
/// "都这样来".
static FROM_NOW_POINTS_BACK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:(?:please\s+)?(?:do it|keep it|keep doing it|do things|do that)\s+)?(?:like this|like that|this way|that way|the same way)|(?:ずっと|常に|いつも)?(?:も)?(?:これ|それ|この(?:やり方|形|方針|感じ|ルール))で?(?:お願い(?:します)?|いこう|行こう|頼む|よろしく)?|(?:都|就|一直|也)*(?:这样|按这个|照这个|按这样|照此|照这样)(?:来|做|办|吧|处理)?|(?:ずっと|永遠に|いつまでも)(?:です|だ|でお願いします|で)?|(?:一直|永远)(?:都)?(?:是这样|如此)?)[.!。！]*$",
    )
});

/// "That's the design, don't add locks around it": the sentence before, and what follows.
static EN_THATS_THE_DESIGN_AND: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:that's|that’s|that is|this is)\s+(?:the|our)\s+(?:rule|convention|policy|design|pattern|contract)[,;:]\s*(?:so\s+)?(?:please\s+)?(?:don't|don’t|do not|never|always|keep|use|stick)\b",
    )
});

/// "That's the rule going forward for all new endpoints": the sentence before is a rule.
static EN_THATS_THE_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:that's|that’s|thats|that is|this is)\s+(?:the|a|our)\s+(?:hard\s+|strict\s+|firm\s+|general\s+|standing\s+)?(?:rule|convention|policy|standard|design|pattern|way we do it|way we do things)\b(?:\s+(?:going forward|from now on|here|now))?(?:,\s+(?:so\s+)?(?:rewrite|redo|change|fix|update|move|do)\b[^.!?]*)?[,:]?\s*|(?:that|this|the same)\s+(?:applies|goes|holds)\s+|(?:please\s+)?(?:stick|keep)\s+to\s+(?:that|this)(?:\s+rule|\s+convention)?\s*|(?:please\s+)?follow\s+(?:that|this)(?:\s+rule|\s+convention|\s+pattern)?\s*)((?:for|to|in|on|across|whenever|when)\b[^.!?]*)?[.!]*\s*$",
    )
});

/// What a remember-request points back with instead of saying it: "this", "that", "これ",
/// "这个".
fn points_back(content: &str) -> bool {
    let t = content.trim_matches(|c: char| {
        c.is_whitespace() || matches!(c, '.' | '!' | '。' | '！' | ',' | '，' | ':' | '：')
    });
    t.is_empty()
        || [
            "this",
            "that",
            "it",
            "this one",
            "that one",
            "these",
            "those",
            "これ",
            "それ",
            "この事",
            "このこと",
            "这个",
            "这点",
            "这一点",
            "这些",
            "那个",
            "这件事",
            "这条",
        ]
        .iter()
        .any(|w| t.eq_ignore_ascii_case(w))
}

/// [`EN_TRANSIENT`], compiled only for a text with one of its words.
/// "The staging admin password is [REDACTED:password].", "Our deploy token is [REDACTED:…]
/// for the release workflow", "ステージングのパスワードは [REDACTED:…] です", "测试服务器的密码是
/// [REDACTED:…]": what it would keep is the secret, which redaction took out (a memory that
/// only says a password exists is noise in every summary). Where the secret lives, or more
/// about it, stays a memory.
fn only_a_secret(rule: &str) -> bool {
    static ONLY_A_SECRET: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)^[^.;,]{1,60}?\s(?:is|are|was|is set to|is now)\s*:?\s*`?\[REDACTED:[a-z-]+\]`?(?:\s+(?:for|of|on|used for|used by)\s+[^.;,]{1,40}?)?\s*[.!]?$|^[^.;,]{1,60}?\s*[:=：]\s*`?\[REDACTED:[a-z-]+\]`?\s*[.!]?$|^[^。；;，,.]{1,40}?(?:は|が|是|为|為|：|:|＝|=)\s*`?\[REDACTED:[a-z-]+\]`?\s*(?:です|だ|である|よ|ね)?\s*[。.!！]?$",
        )
    });
    rule.contains("[REDACTED:") && ONLY_A_SECRET.is_match(rule.trim())
}

fn transient(text: &str) -> bool {
    let lower = text.to_lowercase();
    has_any(
        &lower,
        &[
            "it's ",
            "it is ",
            "today is",
            "is in ",
            "are in ",
            "start",
            "begin",
            "tonight",
            "this is",
            "this morning",
            "this afternoon",
            "this evening",
            "meeting",
            "only have",
            "still on",
            "until then",
            "have the ",
            "have a ",
            "have our ",
        ],
    ) && EN_TRANSIENT.is_match(text)
}

/// A passing state, not a memory: "it's Friday", "the demo is in an hour", "I only have 20
/// minutes", "we're still on the hotfix branch".
static EN_TRANSIENT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:it's|it is|today is) (?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|late|early)\b|\b(?:it's|it is|today is|today's)\s+(?:a\s+|our\s+)?(?:release|deploy|launch|demo|ship|shipping|freeze|cutover|migration|hackathon|holiday|public holiday|my last)\s*(?:day|night|week)?\b|\b(?:is|are|starts?|begins?)\s+in (?:an?|one|two|half an|\d+) (?:hours?|minutes?|mins?)\b|\b(?:tonight|this (?:morning|afternoon|evening))\b|\bmy next meeting\b|\bonly have (?:an?|\d+|a few|about \d+) (?:hours?|minutes?|mins?)\b|\bstill on (?:the )?[\w/.-]+ branch\b|\bthis is (?:just |only )?a (?:prototype|spike|throwaway|quick hack|poc|draft|demo)\b|\buntil then\b|\bhave (?:the|a|our) (?:demo|meeting|call|release|standup|review|presentation|interview) (?:at|in|on)\b",
    )
});

static EN_REMEMBER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:remember|keep in mind|don't forget|do not forget|make a note|note to self|note for later|for the record|save (?:this|that) (?:to|in) (?:your )?memory)(?:\s+(?:this|that)(?:\s+for\s+(?:later|next time|the future|future sessions))?\s*[:\-—]|\s+for\s+(?:later|next time|the future|future sessions)\s*[:,\-—]|\s+that\b|\s*[:,\-—]|\b)\s*(.+)$",
    )
});
/// "I'm on macOS with an M2 laptop, keep that in mind for native deps": the thing to remember,
/// then the request to keep it in mind.
static EN_REMEMBER_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(.+?)\s*[,;—–-]\s*(?:so\s+|and\s+)?(?:please\s+)?(?:keep|bear)\s+(?:that|this|it)\s+in\s+mind\b[^.!?]*[.!]?$",
    )
});
/// A rule's occasion: "before deploying", "whenever you touch the schema".
static EN_WHEN: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:before|after|when|whenever|every|each|always|any time|once)\b"));
static EN_DONT_FORGET: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^(?:please\s+)?(?:don't|don’t|do not|dont) forget\b"));
static EN_REMEMBER_NOT: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^remember\s+(?:when|how|what|where|why|who|the time|me)\b"));
static EN_FROM_NOW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:from now on|going forward|moving forward|from here on(?: out)?|in (?:the )?future|henceforth|for future reference|next time|(?:for|in) (?:all |any )?(?:future|later|upcoming) (?:sessions|conversations|chats|tasks|work))\b[,:]?\s*(.+)$",
    )
});
/// "for anything in pipelines/ going forward, use polars": a standing rule for a part of
/// the project.
static EN_FROM_NOW_SCOPED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^((?:for|in|on|with)\s+[^,;:]{2,60}?),?\s+(?:from now on|going forward|moving forward|from here on(?: out)?)\s*[,:]\s*(\S.+)$",
    )
});
/// "from now on" after a clause: "…, and from now on …", "btw, from now on …".
static EN_FROM_NOW_MID: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:[,;:]\s*(?:and\s+|so\s+|but\s+|also\s+)?|\s+(?:and|so)\s+|\b(?:btw|fyi|by the way)[,:]?\s+)(?:from now on|going forward|moving forward|from here on(?: out)?)\b[,:]?\s*(.+)$",
    )
});
static EN_FROM_NOW_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(.+?),?\s+(?:from now on|going forward|moving forward|in (?:the )?future)[.!]?$")
});
static EN_ALWAYS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:(?:make sure|be sure|ensure|remember)\s+(?:that\s+)?(?:you\s+|we\s+)?(?:to\s+)?|(?:we|i|you)\s+(?:should\s+|must\s+|will\s+|do\s+)?)?(?:always|never)\s+\S",
    )
});
/// "I always forget …": a habit of the person that is a complaint, not a rule.
static EN_I_ALWAYS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^i\s+(?:\w+\s+)?(?:always|never)\s+(\w+)"));
static EN_I_ALWAYS_NOT_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:forget|forgot|get|got|mix|mixed|struggle|wonder|lose|miss|mess|end|seem|have|had|run|ran|hit|see|saw|break|broke|wanted|thought|knew|understood|remember|make|made|said|say|told|tell|asked|ask|meant|mean|agreed|suggested|did|claimed|wrote|expected|manage|managed|figured|found|fixed|solved|seemed|ended|hear|heard|lost|missed|struggled|actually|really|even|quite|fully|properly|truly|assumed|assume|believed|believe|guessed|guess|suspected|suspect|wondered)$",
    )
});
/// An imperative of preference over a standing scope: "prefer composition over inheritance
/// in this codebase".
static EN_STANDING_IMPERATIVE: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(?:please\s+)?(?:prefer|avoid|favou?r|stick (?:with|to)|use)\b\s+\S")
});
static EN_STANDING_SCOPE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:in (?:this|our|the) (?:repo|repository|project|codebase|team|company|app|service|monorepo)|in (?:these|our|the|any|all) tests|everywhere|anywhere|across the (?:repo|codebase|project)|by default|in new code|for (?:all |any |every )?new \w+|for anything new)\b",
    )
});
static EN_DONT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:don't|don’t|do not|dont|avoid|(?:stop|quit)\s+(?:\w+-)?\w+ing)\b\s*\S",
    )
});
/// "leave vendor/ alone", "stay out of the generated/ folder", "hands off third_party/": a
/// ban said without "don't", held to the same test of being a standing rule.
static EN_KEEP_OFF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:(?:just\s+)?leave\s+[^,;.]{1,60}?\s+alone\b|(?:stay|keep)\s+out\s+of\s+\S|(?:keep\s+(?:your\s+)?)?hands\s+off\s+(?:of\s+)?\S)",
    )
});
/// "…; just run the affected tests" after a practice given up: what to do instead.
static EN_JUST_INSTEAD: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)[,;—–]\s*(?:just|only)\s+(?:run|use|do|write|call|test|lint|build|check)\b")
});
/// A practice said to be given up: "anymore", "no longer".
static EN_GIVEN_UP: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:anymore|any more|no longer)\b"));
/// "You no longer need to run the full suite before pushing", "No need to bump the version
/// anymore": a rule given up, said as a rule (it replaces the old one).
static EN_NO_LONGER_NEEDED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:you\s+|we\s+)?(?:no longer need to|don't need to\s+\S.*\b(?:anymore|any more)\b|do not need to\s+\S.*\b(?:anymore|any more)\b|(?:there's\s+)?no (?:more )?need to\s+\S.*\b(?:anymore|any more)\b)",
    )
});
static EN_DONT_TRIVIAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:don't|don’t|do not|dont)\s+(?:worry|bother|panic|mind|hesitate|forget)\b",
    )
});
static EN_ONE_OFF: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:for now|this time|right now|yet|for the moment|at the moment|today|in this (?:file|function|pr|commit|change|step|session))\b|^(?:please\s+)?just\b|\bjust (?:this once|for today|for this|build|answer|do|run|use|skip|leave|ignore|comment|make|add|fix|try|go|tell|show|give|check)\b|\b(?:before|when|once|after|until) you(?:'re| are)? (?:done|finish(?:ed)?)\b|\bif possible\b|\buntil (?:he|she|they|i|we|you|[A-Z]\w+)(?:'re|’re|'s|’s| are| is)? (?:approves?|says? so|reviews? it|confirms?|gets back|is back|returns?|done|finished|finishes|ready)\b|\b(?:don't|don’t|do not)\s+(?:make|let|leave|keep)\s+(?:it|this|that)\b|\b(?:after|before|once) (?:the|this|that|my|your|our) (?:[\w-]+ ){1,3}(?:change|fix|refactor|pr|pull request)\b|\b(?:don't|don’t|do not|dont)\s+(?:change|modify|touch|edit|commit|push|delete|remove|rename)\s+(?:anything|any\s+\w+|it|this|that|them)\b",
    )
});
static EN_GENERAL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:ever|again|anymore|any more|in (?:this|our|the) (?:repo|repository|project|codebase|team|company)|in (?:these|our|the|any) tests|(?:from|on) my (?:laptop|machine|computer)|against (?:prod|production|staging)|on (?:main|master|prod|production)|in production|unless|without asking|directly|(?:in|to|from|into) (?:any |all |our |the )?(?:[a-z-]+\s+)?(?:comments|commit messages|messages|tests|specs|prs|pull requests|logs|docs|readmes|migrations|scripts|commits|reviews|code|changelogs|branches)|every (?:line|file|function|method|class|commit|pr|change|time|message|reply|answer|response)|before (?:every |each |any )?(?:pushing|committing|merging|deploying|releasing|shipping|tagging|opening (?:a |the )?(?:pr|pull request)|(?:a |the )?(?:push|commit|merge|deploy|release))\b|^(?:please\s+)?(?:don't|don’t|do not|dont|never)\s+use\s+\S+|^(?:please\s+)?(?:don't|don’t|do not|dont|never|stop|quit)\s+\w+\s+(?:new\s+|extra\s+|unnecessary\s+|more\s+)?(?:[a-z]{3,}s|everything)\s+(?:that|which|who|for|to|with|in|on|when|unless|just))\b",
    )
});
/// "don't touch the generated/ directory, it is regenerated by protoc", "please don't edit
/// the vendor folder": files a tool writes or a vendor owns are never to be edited by hand,
/// whatever the task; said with why it is so, any path is.
static EN_GENERATED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:touch|touching|edit|editing|hand-edit|hand-editing|modify|modifying|change|changing|reformat|reformatting|write to|writing to|commit to|leave|stay out of|keep out of|hands off(?: of)?)\s+(?:anything\s+(?:in|under|inside)\s+|(?:(?:the|any|all)\s+)?(?:files?|code|sources?)\s+(?:in|under|inside)\s+)?(?:the\s+)?`?(?:[\w.-]+/)*(?:generated|gen|autogen|auto-generated|codegen|vendor|vendored|third_party|third-party)\b|[,;—–(]\s*(?:(?:since|because|as)\s+)?(?:it|they|that|this|these|those|everything (?:in )?there|the files?(?: there)?)(?:'s|’s|'re|’re|\s+is|\s+are|\s+gets?)\s+(?:all\s+|just\s+|fully\s+)?(?:re)?(?:generated|overwritten|auto-?generated|rebuilt|wiped|vendored|synced|copied)\b",
    )
});
/// "don't swallow errors", "do not catch generic exceptions", "don't ignore errors returned
/// by Close()": a ban on a kind of thing (a plural with no determiner), not on the thing at
/// hand ("don't touch the tests", "don't change it").
fn bans_a_kind_of_thing(s: &str) -> bool {
    const DETERMINERS: &[&str] = &[
        "the",
        "this",
        "that",
        "these",
        "those",
        "my",
        "your",
        "our",
        "its",
        "their",
        "it",
        "them",
        "any",
        "all",
        "some",
        "anything",
        "everything",
    ];
    let lower = s.to_ascii_lowercase();
    let rest = ["please ", ""]
        .iter()
        .find_map(|p| lower.strip_prefix(p))
        .unwrap_or(&lower);
    let Some(rest) = ["don't ", "don’t ", "do not ", "dont "]
        .iter()
        .find_map(|p| rest.strip_prefix(p))
    else {
        return false;
    };
    let words: Vec<&str> = rest
        .split_whitespace()
        .map(|w| w.trim_end_matches(['.', '!', ',', ';']))
        .collect();
    // verb, an optional adjective, the plural; then the end or what qualifies the kind.
    let plural = |w: &str| w.len() >= 5 && w.ends_with('s') && !w.ends_with("ss");
    let (noun_at, ok) = match words.as_slice() {
        [_, noun, ..] if plural(noun) => (2, true),
        [_, adj, noun, ..] if !DETERMINERS.contains(adj) && plural(noun) => (3, true),
        _ => (0, false),
    };
    ok && !DETERMINERS.contains(&words[1])
        && words.get(noun_at).is_none_or(|next| {
            [
                "returned", "thrown", "raised", "from", "in", "with", "without", "that", "when",
            ]
            .contains(next)
        })
}

/// A "don't" that names what to do instead states a preference, not a step of the task.
static EN_INSTEAD: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)[,;]\s*(?:use|prefer|go with|pick|write)\b.+\binstead\b|\brather than\b|[,;]\s*(?:use|prefer|go with)\s+(?:the\s+|a\s+)?[\w`]|\b(?:anymore|any more|no longer)\b.*[,;—–]\s*(?:just|only)\s+(?:run|use|do|write|call|test|lint|build|check)\b",
    )
});
/// "use pnpm, not npm", "use ruff instead of flake8", "use black for formatting python,
/// never autopep8": a choice against an alternative.
static EN_USE_OVER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:always\s+)?(?:use|prefer|go with|pick|choose|stick (?:with|to))\s+\S.*?(?:,\s*|\s+|\s*\(\s*)(?:not|never|instead of|rather than|over)\s+\S",
    )
});
static EN_WE_USE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:we|our team|the team|this (?:repo|project|codebase|team)|the (?:repo|project|codebase)|our (?:repo|project|codebase|stack))(?:'re|\s+are|\s+now|\s+currently|\s+only)*\s+(?:use|uses|using|prefer|prefers|standardi[sz]ed on|rely on|relies on|deploy with|build with|runs? on|targets?)\b\s+\S",
    )
});
static EN_CORRECTION_VERB: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)^(?:use|run|prefer|call|put|keep|name|write|go with|switch to|stick (?:with|to))\b")
});
/// "in this component", "for this run": the thing at hand, unless it is a standing scope
/// ("in this repo").
static EN_THIS_THING: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:in|for|on|to|with|inside|within|from|at|of|across|after|before|until|during) (?:this|that|these|those|the current) ([a-z][\w-]*)",
    )
});
const STANDING_THINGS: &[&str] = &[
    "repo",
    "repository",
    "project",
    "codebase",
    "team",
    "company",
    "org",
    "organization",
    "monorepo",
    "workspace",
    "app",
    "frontend",
    "backend",
    "service",
    "test",
    "spec",
];

/// Whether a sentence points at the thing at hand ("this file", "here", "in this handler",
/// "apply this to prod", "use Promise.all there", "in parseCoupon").
fn deictic(s: &str) -> bool {
    // "in CHANGELOG.md", "to README.md": a file every change of the project goes through,
    // not the one at hand.
    let s = &*if s.contains(".md") {
        EN_STANDING_FILE.replace_all(s, "the file")
    } else {
        std::borrow::Cow::Borrowed(s)
    };
    EN_DEICTIC.is_match(s) || EN_CODE_NAME.is_match(s) || there_as_place(s) || this_thing(s)
}

/// Files a project keeps for good, which a standing rule names ("Always write changelog
/// entries in CHANGELOG.md under Unreleased", "list new env vars in README.md"); a manifest
/// (`Cargo.toml`, `package.json`) is left out: "bump the version in Cargo.toml" is a step.
static EN_STANDING_FILE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:CHANGELOG|CHANGES|HISTORY|NEWS|RELEASE[_-]NOTES|README|CONTRIBUTING|AGENTS|CLAUDE|SECURITY|UPGRADING|MIGRATION|ARCHITECTURE|BENCHMARKS)\.md\b",
    )
});

/// "in/for this X" where X is not a standing scope ("for this run", not "in this repo").
fn this_thing(s: &str) -> bool {
    EN_THIS_THING.captures_iter(s).any(|c| {
        let w = c[1].to_ascii_lowercase();
        !STANDING_THINGS.contains(&w.trim_end_matches('s'))
    })
}

static EN_HERE: LazyLock<Regex> = LazyLock::new(|| re(r"(?i)\bhere\b"));

/// "in parseCoupon", "inside fetchOrders()": one function or variable of the code at hand.
static EN_CODE_NAME: LazyLock<Regex> = LazyLock::new(|| {
    re(r"\b(?:[Ii]n|[Ii]nside|[Ff]or|[Ff]rom) (?:the )?(?:[a-z]+[A-Z][A-Za-z0-9]*|\w+\(\))")
});

/// "there" as a place ("don't use Promise.all there"), not "there is …".
fn there_as_place(s: &str) -> bool {
    const EXISTENTIAL: &[&str] = &[
        "is",
        "are",
        "was",
        "were",
        "will",
        "must",
        "should",
        "may",
        "might",
        "has",
        "have",
        "be",
        "isn't",
        "aren't",
        "wasn't",
        "won't",
        "shouldn't",
    ];
    let mut words = s
        .split(|c: char| !c.is_alphanumeric() && c != '\'' && c != '’')
        .filter(|w| !w.is_empty())
        .enumerate()
        .peekable();
    while let Some((i, w)) = words.next() {
        if i > 0 && w.eq_ignore_ascii_case("there") {
            let next = words.peek().map(|(_, n)| n.to_lowercase());
            if !next.is_some_and(|n| EXISTENTIAL.contains(&n.as_str())) {
                return true;
            }
        }
    }
    false
}

static EN_DEICTIC: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:this|that|the other|these|those) (?:file|function|one|line|test|method|variable|branch|commit|pr|time)\b|\bhere\b|\b(?:merge|apply|run|deploy|ship|push|commit|revert|release) (?:this|that|these|those)(?:[\s.,;!?]|$)|\b(?:in|to|from|of) [\w./-]*\w\.(?:tsx?|jsx?|mjs|py|rs|go|rb|java|kt|swift|c|cc|cpp|h|hpp|cs|php|vue|svelte|css|scss|html|sql|sh|ya?ml|toml|json|md)\b",
    )
});
/// "We always get throttled …", "we never managed to …": what keeps happening, not a rule.
static EN_WE_ALWAYS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^we\s+(?:\w+\s+)?(?:always|never)\s+(\w+)"));
/// "Always the same error", "never a dull moment": no verb after always/never, no rule.
static EN_ALWAYS_NO_VERB: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:always|never)\s+(?:the|a|an|same|something|so|such|fun|easy|seen|heard|been|had|thought|knew|once|mind|noticed|happened|have to|has to|seems?|gets?|got)\b",
    )
});
/// "You always forget …", "you never run …": a complaint about the agent, not a rule.
static EN_YOU_ALWAYS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^you\s+(?:\w+\s+)?(?:always|never)\s+(\w+)"));
/// A one-off, for the always/never shape (which, unlike "don't", counts "just" and "yet"
/// as ordinary words: "never just guess", "we never ship yet-untested code").
static EN_ONE_OFF_ALWAYS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:for now|this time|right now|for the moment|at the moment|today|this one)\b|\b(?:before|when|once|after|until) you(?:'re| are)? (?:done|finish(?:ed)?)\b",
    )
});
static EN_ABOUT_ME: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:i am|i'm|im)\s+(?:a|an|the)\s+(?:bit|little|lot)\b|i (?:love|like|hate) how\b|i (?:like|love|hate|prefer) (?:this|that|it)(?:[.!,]|$|\s+(?:a lot|better|more|now|here|too|so|very|but|and|though|anyway))|i (?:prefer|like|love|'d go with|would go with|'ll go with|'ll take|want) (?:(?:the|your) )?(?:(?:first|second|third|last|other|previous|latter|former|new|old|original|shorter|longer|simpler|cleaner)\s+)?(?:option|suggestion|version|approach|one|variant|proposal|solution|idea|plan|draft)s?\b|i (?:prefer|like) (?:option|approach|variant|plan|version) [a-z0-9]\b|i (?:like|prefer|love) your\b)",
    )
});
static EN_USER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:i am|i'm|im)\s+(?:a|an|the)\s+\S|i (?:prefer|like|love|hate|dislike|work (?:on|as|in)|'d rather|would rather)\s+\S|my (?:role|name|job|title|team|background|preference|timezone|time zone) is\b|my name's\b|i(?:'m|’m| am) (?:fine|ok|okay|happy) with\b|i don't mind\b|i (?:own|maintain|am responsible for|'m responsible for) the\b|i (?:lead|run|manage|head) (?:the|a|our) (?:[\w-]+ ){1,2}(?:team|group|org|squad)\b|i've (?:been\s+)?(?:written|writing|worked|working|used|using|done|doing|coded|coding)\b.*\b(?:years?|months?)\b)",
    )
});

/// A liking for how the work is done: "i prefer small focused commits over one big one".
static EN_LIKES_THE_WORK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^i (?:prefer|like|love|hate|dislike|'d rather|would rather)\b.*\b(?:when you|if you|commits?|prs?|pull requests?|branches|diffs?|tests?|plans?|reviews?|comments|functions|errors?|logs?|changes)\b",
    )
});

/// "it's django.utils.timezone.now() in this codebase", "it is snake_case in this repo".
static EN_ITS_X_HERE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^it(?:'s|’s|s| is)\s+`?[\w.()/:<>-]+`?(?:\s+[\w.()/:<>-]+){0,2}\s+in this (?:codebase|repo|repository|project)\b",
    )
});

/// Whether a sentence may open with an aside ([`EN_ASIDE`], compiled only then: the Stop hook
/// asks about every read-only turn in a fresh process).
fn opens_with_an_aside(sentence: &str) -> bool {
    let head: String = sentence.chars().take(32).collect::<String>().to_lowercase();
    let head = ["okay", "ok"]
        .iter()
        .find_map(|o| head.strip_prefix(o))
        .map_or(head.as_str(), |h| h.trim_start_matches([',', '.', ' ']));
    [
        "fyi",
        "btw",
        "for context",
        "context",
        "heads up",
        "by the way",
        "just so you know",
        "for the record",
        "background",
    ]
    .iter()
    .any(|w| head.starts_with(w))
}

/// A rule in a clause of its own after a fact: "…, never commit the .xcodeproj", "…; always
/// run gazelle".
static EN_RULE_CLAUSE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)[,;—–]\s*(?:and\s+|so\s+|but\s+|just\s+)?(?:please\s+)?(?:never|always|don't|dont|do not)\s+(?:commit|push|edit|hand-edit|use|run|add|call|hardcode|hard-code|put|write|touch|change|merge|deploy|import|create|store|log|expose|return|mock|skip|bypass|rename|delete|remove|check in|modify|reformat|bump|pin|upgrade|install|disable|enable)\b",
    )
});
/// A convention said to hold everywhere: "amounts are int64 minor units everywhere in
/// ledgerd", "the ui layer is StateFlow everywhere".
static EN_EVERYWHERE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:the\s+|our\s+|all\s+)?[\w./@<>-]+(?:\s+[\w./@<>-]+){0,3}\s+(?:is|are|go|goes|live|lives|use|uses)\b[^.?!]*\b(?:everywhere|across the (?:codebase|repo|app|project|board)|throughout the (?:codebase|repo|app|project))\b",
    )
});
/// "pnpm only in this repo.", "no unwrap()/expect() in firmware/app.": one choice, or one thing
/// ruled out, for a part of the project.
static EN_ONLY_OR_NO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^[\w./@+-]+(?:\s+[\w./@+-]+)?\s+only\s+(?:in|for|here|across|everywhere)\b|^[\w./@+-]+(?:\s+[\w./@+-]+)?\s+only[.!]?$|^no\s+[\w()./@+-]+(?:\s+[\w()./@+-]+){0,3}\s+(?:in|anywhere in|inside|under|crossing|across|outside|between|per)\s+[\w./@-]+|(?:^|[.;]\s+|,\s+)no\s+[\w()./@+-]+(?:\s+[\w()./@+-]+){0,2},\s*no\s+[\w()./@+-]+",
    )
});
/// "every feature is a TCA reducer with …", "each service has its own …".
static EN_EVERY_THING_IS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:every|each|all)\s+(?:[\w-]+\s+){1,2}(?:is|are|has|have|uses?|gets?|goes|go|lives?|needs?|must|should)\b",
    )
});
/// What a fact-shaped convention is not: a problem ("it crashes everywhere", "every test is
/// flaky"), a search ("I looked everywhere"), an occasion ("every time I …").
static EN_CONVENTION_NOT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:fail\w*|error\w*|crash\w*|broke\w*|bug\w*|flak\w*|slow|hang\w*|warn\w*|issue|problem|wrong|weird|leak\w*|every time|each time|i|i'm|im|looked|searched|works? locally|seems?)\b",
    )
});

/// An aside that opens a sentence: "fyi", "btw", "for context", "context in case it matters:",
/// "heads up".
static EN_ASIDE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:ok(?:ay)?[,.]?\s+)?(?:fyi|btw|for context|context(?: in case it matters)?\s*:|heads up|by the way|just so you know|for the record|background\s*:)",
    )
});
/// What makes an aside a standing fact: it says how things always are, or what is never done.
static EN_STANDING_FACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:instead of|never|only|always|everything|on purpose|unless|strictly|by design|read-only|(?:is|are) generated|nobody|no one|baseline|we (?:don't|dont|do not|never|always|only))\b",
    )
});
/// An aside that reports a problem or asks for the task ("btw the tests only fail on CI").
static EN_ASIDE_NOT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:is failing|are failing|keeps? failing|failed|fail(?:s|ing)?\s+(?:on|in|locally|with|when|for|at|every|sometimes|randomly)|pass(?:es)? locally|broke|broken|crash\w*|bug|flaky|error|can you|could you|please|this time|today|right now|for now)\b",
    )
});

static POINTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)https?://|(?:^|[^\w./-])[\w-]+(?:\.[\w-]+)*\.(?:internal|local|lan|corp|com|net|org|io|dev|app|cloud|example)(?::[0-9]+)?\b|\b[\w.-]*[A-Za-z][\w.-]*:[0-9]{2,5}\b|\b[0-9]{1,3}(?:\.[0-9]{1,3}){3}:[0-9]{2,5}\b|\b[A-Z][A-Z0-9]+-[0-9]+\b|\b(?:dashboard|grafana|kibana|datadog|sentry|jira|linear|confluence|notion|runbook|wiki|slack channel|channel)\b|(?:^|\s)#[a-z][\w-]+",
    )
});
static ABOUT_USER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:i\s|i'm\s|i am\s|my\s|私は|私の|僕は|我是|我的|我(?:更|比较|一般)?(?:喜欢|偏好|习惯|讨厌|不喜欢|倾向于?|希望))",
    )
});

/// Whether a text names something outside the code (URL, host, ticket, dashboard).
pub fn has_pointer(s: &str) -> bool {
    POINTER.is_match(s)
}

fn is_instruction(s: &str) -> bool {
    let w = first_word(s);
    if IMPERATIVE_VERBS.contains(&w.as_str()) && w != "just" && w != "can" && w != "could" {
        return true;
    }
    let t = s.trim_end_matches(['。', '.', '！', '!']);
    t.ends_with("ください")
        || t.ends_with("して")
        || t.ends_with("しないで")
        || ZH_DONT.is_match(s)
        || s.starts_with('要')
        || s.starts_with('请')
}

/// "No default exports in this codebase", "no emojis in commit messages": a ban ("no one
/// owns billing", "no longer on Jenkins" are facts). Only for typing a statement.
fn is_ban(s: &str) -> bool {
    let mut words = s.split_whitespace().map(|x| {
        x.trim_matches(|c: char| !c.is_alphanumeric())
            .to_lowercase()
    });
    words.next().as_deref() == Some("no")
        && words.next().is_some_and(|second| {
            !second.is_empty()
                && ![
                    "one", "longer", "idea", "problem", "problems", "worries", "thanks", "need",
                    "way", "matter", "doubt", "wonder", "issue", "issues", "change", "changes",
                ]
                .contains(&second.as_str())
        })
}

/// Words that tie a statement to the project, not the person: "I want this repo's tests to
/// use pytest-xdist" is about the repository.
static ABOUT_PROJECT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:this|our|the) (?:repo|repository|project|codebase|service|app|monorepo)(?:'s)?\b|\bfor this (?:repo|project|codebase)\b|このリポジトリ|このプロジェクト|这个项目|这个仓库|本项目",
    )
});
/// A wish about how to work ("I want …", "I'd like …").
static WISH: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^i (?:want|would like|'d like|prefer|need)\b"));

/// The type of a statement about the person, unless it is about the project: a wish about it
/// is feedback, anything else a project fact.
fn user_or_project(content: &str) -> MemoryType {
    if !ABOUT_PROJECT.is_match(content) {
        MemoryType::User
    } else if WISH.is_match(content.trim()) {
        MemoryType::Feedback
    } else {
        MemoryType::Project
    }
}

/// The type of a stated fact: pointer → reference, about the person → user (unless it names
/// the project), an instruction → feedback, else project.
pub fn classify(content: &str) -> MemoryType {
    match crate::t2s::simplified(content) {
        Some(zh) => classify_in(&zh.text),
        None => classify_in(content),
    }
}

/// [`classify`] of a text already read as Simplified (the extractor's own rules).
pub(super) fn classify_in(content: &str) -> MemoryType {
    if is_instruction(content) || is_ban(content) {
        MemoryType::Feedback
    } else if has_pointer(content) {
        MemoryType::Reference
    } else if ABOUT_USER.is_match(content.trim()) {
        user_or_project(content)
    } else {
        MemoryType::Project
    }
}

/// The first words an English statement shape can start with (after the markers are
/// stripped): a sentence starting otherwise is tested by no English pattern, so a prompt
/// without one compiles none of them (the Stop hook asks about every read-only turn).
const EN_FIRST_WORDS: &[&str] = &[
    "leave",
    "stay",
    "hands",
    "it's",
    "it’s",
    "thats",
    "please",
    "remember",
    "keep",
    "don't",
    "don’t",
    "do",
    "dont",
    "make",
    "note",
    "for",
    "save",
    "from",
    "going",
    "moving",
    "in",
    "henceforth",
    "next",
    "be",
    "ensure",
    "we",
    "i",
    "you",
    "always",
    "never",
    "avoid",
    "stop",
    "quit",
    "our",
    "the",
    "this",
    "use",
    "prefer",
    "go",
    "pick",
    "choose",
    "stick",
    "favor",
    "favour",
    "run",
    "call",
    "put",
    "name",
    "write",
    "switch",
    "every",
    "whenever",
    "each",
    "any",
    "ask",
    "check",
    "we're",
    "we’re",
    "when",
    "stick",
    "follow",
    "that's",
    "that’s",
    "that",
    "i'm",
    "i've",
    "i'd",
    "im",
    "my",
];

/// A sentence's leading word, lowercased: its first letters and apostrophes ("Remember—…" →
/// `remember`, "Don't" → `don't`).
fn lead_word(s: &str) -> String {
    s.trim_start()
        .chars()
        .take_while(|c| c.is_ascii_alphabetic() || *c == '\'' || *c == '’')
        .flat_map(char::to_lowercase)
        .collect()
}

/// Phrases the one unanchored English pattern ends with ("…, from now on").
const EN_TAIL_PHRASES: &[&str] = &[
    "in mind",
    "from now on",
    "going forward",
    "moving forward",
    "in future",
    "in the future",
];
/// Whether a sentence may hold an English shape: its first word, or a word or phrase one of
/// the English patterns needs (the others are not compiled for it: the Stop hook asks about
/// every read-only turn in a fresh process).
fn english_gate(s: &str, lower: &str, correction: bool) -> bool {
    EN_FIRST_WORDS.contains(&lead_word(s).as_str())
        || EN_TAIL_PHRASES.iter().any(|p| lower.contains(p))
        || lower.contains(" always ")
        || lower.contains(" never ")
        || lower.contains(", not ")
        || has_any(
            lower,
            &[
                " here ",
                "in this repo",
                "in this project",
                "in this codebase",
                // "CI moved from CircleCI to …": a change, whatever the first word.
                " moved ",
                " migrated ",
                " switched ",
                " upgraded ",
                " no longer ",
                " gone",
                " dropped ",
                "everywhere",
                "throughout the ",
                "across the ",
                " only in ",
                " only for ",
                " only here",
                " only across",
                " only everywhere",
                " so don't ",
                " so dont ",
                " so do not ",
            ],
        )
        || lower.trim_end_matches(['.', '!']).ends_with(" only")
        || lower.starts_with("no ")
        || (correction && s.is_ascii())
}

fn detect(s: &str, correction: bool) -> Option<(Shape, &'static str)> {
    let lower = s.to_lowercase();
    if lower.starts_with("never mind") || lower.starts_with("nevermind") {
        return None;
    }
    let english = english_gate(s, &lower, correction);
    if let Some(found) = facts::blunt_wish(s, &lower, correction) {
        return Some(found);
    }
    if english && let Some(found) = detect_english(s, &lower, correction) {
        return Some(found);
    }
    // "the `legacy/` folder is owned by the payments team", "封版期间只能合 hotfix": a fact
    // of the project or the person, said without a marker (in Japanese and Chinese, after
    // the shapes of those languages).
    let cjk = s.chars().any(crate::text::is_cjk);
    if !cjk && let Some(found) = facts::plain_fact(s, &lower) {
        return Some(found);
    }
    // "please keep your answers shorter", "回答的时候请用中文": how to answer, always.
    if (!s.is_ascii()
        || lower.contains("your ")
        || lower.contains(" me")
        || lower.starts_with("answer")
        || lower.starts_with("reply")
        || lower.starts_with("respond")
        || lower.starts_with("keep")
        || lower.starts_with("please"))
        && reply_habit(s)
        && !EN_ONE_OFF.is_match(s)
        && !EN_ONE_OFF_ALWAYS.is_match(s)
    {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Feedback),
            "preference",
        ));
    }
    // "The API docs live at https://…", "监控面板在 https://…": where something is kept.
    if (s.contains("://")
        || (s.contains(':') && s.bytes().any(|b| b.is_ascii_digit()))
        || [".local", ".internal", ".lan", ".corp"]
            .iter()
            .any(|t| lower.contains(t))
        || has_any(&lower, KNOWN_TOOLS))
        && let Some(found) = plain_pointer(s)
    {
        return Some(found);
    }
    // Every Japanese and Chinese pattern holds a CJK character.
    if s.is_ascii() {
        return None;
    }
    detect_cjk(s, correction).or_else(|| {
        if cjk {
            facts::plain_fact(s, &lower).or_else(|| cjk::dont_at_end(s))
        } else {
            None
        }
    })
}

/// A standing wish about the agent's answers: "keep your answers short", "answer me in
/// English", "回答的时候请用中文", "返事は日本語で".
/// [`REPLY_HABIT`], or [`REPLY_HABIT_ASKED`] for a sentence that opens the way those do
/// (compiled only then).
fn reply_habit(s: &str) -> bool {
    if REPLY_HABIT.is_match(s) {
        return true;
    }
    let lower = s.trim_start().to_lowercase();
    [
        "when",
        "talk",
        "speak",
        "write",
        "please talk",
        "please speak",
    ]
    .iter()
    .any(|w| lower.starts_with(w))
        && REPLY_HABIT_ASKED.is_match(s)
}

/// "when i ask why …, give me the root cause first", "talk to me like a peer".
static REPLY_HABIT_ASKED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^when(?:ever)? i ask (?:you )?(?:why|how|what|for|about|to)\b[^.?!]*?\b(?:give|answer|start|tell|show|explain|lead|put)\s+(?:me\s+)?\w|^(?:please\s+)?(?:talk|speak|write) to me (?:like|as)\s+(?:a|an)\s+\w",
    )
});

static REPLY_HABIT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:keep|make|write|give|start|end|format|put)\s+(?:all\s+)?(?:your\s+)?(?:answers|replies|responses|explanations|summaries)\b|^(?:please\s+)?(?:answer|reply|respond)\s+in\s+\w|^when(?:ever)? you (?:give|show|send|write|suggest) me\b|^when(?:ever)? you (?:explain|answer|reply|respond|talk|write)\b[^,.?!]*?\bme\b|^no need to ask (?:me\s+)?before\b|(?:提示|説明|回答|返事|返信)する(?:とき|時)は|\b(?:answer|reply|respond|talk|speak|write)\s+(?:to\s+)?me\s+in\b|^(?:请)?(?:回答|回复|回覆)(?:的时候|时|问题时|请|尽量|都要|要)|^(?:请)?用(?:中文|英文|日语)(?:回答|回复|回覆)|^(?:説明|回答|返事|返信)は[^。]*(?:ほしい|欲しい|ください|お願い)|^(?:返事|返信|回答)は[^。]*(?:で|に)(?:お願い|して|書いて)",
    )
});

/// A statement of where something lives, with its link.
static PLAIN_POINTER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^[^?]*?\b(?:is|are|it's|it’s|runs? on|lives?|sits?|(?:is|are) (?:hosted|tracked|documented|kept|logged|collected)|can be found|ends? up (?:in|on|at)|get sent to|are sent to|are shipped to)\b[^?]*(?:https?://|\b[\w-]+(?:\.[\w-]+)+:[0-9]{2,5}\b|\b[\w-]+(?:\.[\w-]+)*\.(?:local|internal|lan|corp|intra)\b)|^[a-z][\w ./+(),-]{0,90}?:\s*(?:[\w.-]+\s*(?:→|->|at)\s*)?<?https?://|^[^，。？?]{1,30}(?:在|是)[^，。？?]{0,12}?[:：]?\s*https?://|^[^。？?]{1,50}?(?:在|是)[^。？?]{0,30}?[:：]\s*https?://|地址是\s*https?://|^[^。？?]{1,40}(?:は|が)[^。？?]{0,10}?[:：]?\s*<?https?://|[（(]https?://[^)）\s]+[)）]\s*に(?:置いて|あります|ある)",
    )
});
/// A link to one item of the work at hand (a pull request, a CI run, an issue, a commit): the
/// segment, then an id ("/issues/4312"; not "/issues/?project=…", the list).
static ITEM_LINK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)https?://\S*/(?:pulls?|pr|issues|tickets?|incidents?|alerts?|runs|jobs|builds|pipelines|commits?|merge_requests|compare|blob|tree|browse)/[\w.-]*\d[\w.-]*",
    )
});

/// The tools [`TOOL_POINTER`] knows, lowercased: a sentence naming none skips it.
const KNOWN_TOOLS: &[&str] = &[
    "jira",
    "linear",
    "confluence",
    "notion",
    "github issues",
    "gitlab issues",
    "sentry",
    "datadog",
    "grafana",
    "kibana",
    "1password",
    "vault",
    "pagerduty",
    "opsgenie",
    "figma",
    "google drive",
    "googleドライブ",
    "sharepoint",
    "asana",
    "trello",
    "shortcut",
    "youtrack",
    "launchdarkly",
    "unleash",
    "statsig",
    "looker",
    "metabase",
    "backstage",
];
/// "Bugs go in Jira project WEB", "tickets live in Linear", "手順はConfluenceにある": where
/// something is kept, in a tool named without a link.
static TOOL_POINTER: LazyLock<Regex> = LazyLock::new(|| {
    let tools = KNOWN_TOOLS.join("|");
    re(&format!(
        r"(?i)^[^?]*?\b(?:is|are|lives?|go|goes|get filed|are filed|are tracked|is tracked|is kept|are kept)\s+(?:in|on|under)\s+(?:the\s+)?(?:{tools})\b|^[^。？?]+?は(?:{tools})[^。？?]*?に(?:ある|あります)"
    ))
});

fn plain_pointer(s: &str) -> Option<(Shape, &'static str)> {
    // "The design docs are here: https://…" stands; "the logs for this run are at …" not.
    let one_off = ITEM_LINK.is_match(s)
        || EN_ONE_OFF.is_match(s)
        || this_thing(s)
        || is_instruction(s)
        || s.split_whitespace().count() > 40;
    (!one_off && (PLAIN_POINTER.is_match(s) || TOOL_POINTER.is_match(s)))
        .then(|| (Shape::Rule(s.to_string(), MemoryType::Reference), "pointer"))
}

/// Whether `lower` holds any of `words`: a guard that keeps a pattern from being compiled
/// (the hooks are one-shot processes) for a sentence it cannot match.
fn has_any(lower: &str, words: &[&str]) -> bool {
    words.iter().any(|w| lower.contains(w))
}

/// The English shapes; `lower` is `s` lowercased (the caller has it).
fn detect_english(s: &str, lower: &str, correction: bool) -> Option<(Shape, &'static str)> {
    let lead = lead_word(s);
    let lead = lead.as_str();
    let always = has_any(lower, &["always", "never"]);
    let pointing = matches!(
        lead,
        "that's" | "that’s" | "thats" | "that" | "this" | "stick" | "keep" | "follow" | "please"
    );
    if pointing && EN_THATS_THE_DESIGN_AND.is_match(s) {
        return Some((Shape::Addendum, "standing"));
    }
    if pointing && let Some(c) = EN_THATS_THE_RULE.captures(s) {
        let occasion = c.get(1).map_or("", |m| m.as_str().trim());
        return Some((Shape::BackReference(occasion.to_string()), "standing"));
    }
    let remembering = has_any(
        lower,
        &[
            "remember",
            "memori",
            "note",
            "save",
            "forget",
            "in mind",
            "for the record",
        ],
    );
    if remembering && let Some(c) = EN_BACK_REFERENCE.captures(s) {
        let occasion = c.get(1).map_or("", |m| m.as_str().trim());
        return Some((Shape::BackReference(occasion.to_string()), "explicit"));
    }
    if lower.contains("in mind")
        && let Some(c) = EN_REMEMBER_TAIL.captures(s)
    {
        if EN_TRANSIENT.is_match(&c[1]) {
            return None;
        }
        return Some((Shape::Explicit(c[1].trim().to_string()), "explicit"));
    }
    if remembering
        && !EN_REMEMBER_NOT.is_match(s)
        && let Some(c) = EN_REMEMBER.captures(s)
    {
        let content = c[1].trim();
        if points_back(content) {
            return Some((Shape::BackReference(String::new()), "explicit"));
        }
        // "Remember, it's Friday, so nothing risky": how things are right now.
        if EN_TRANSIENT.is_match(content) {
            return None;
        }
        // "don't forget the semicolon": a reminder for the task at hand, unless it gives a
        // rule ("… to run the migrations") or a fact ("…: staging needs the VPN").
        // "don't forget to push" is the task's next step; "don't forget to run the migrations
        // before deploying" is a rule (it says when).
        if EN_DONT_FORGET.is_match(s)
            && !(content.starts_with("that ")
                || s[..c.get(1).map_or(0, |m| m.start())].contains(':')
                || (content.starts_with("to ")
                    && (EN_WHEN.is_match(content) || EN_GENERAL.is_match(content))))
        {
            return None;
        }
        if let Some(rest) = content.strip_prefix("to ") {
            // "remember to also log the AUC", "… to delete the debug prints before you're
            // done": the task's next step, unless it says when it applies ("… before
            // deploying") or to what class of things.
            let also = rest.starts_with("also ") && !EN_GENERAL.is_match(rest);
            if !(EN_WHEN.is_match(rest) || EN_GENERAL.is_match(rest))
                || also
                || EN_ONE_OFF.is_match(rest)
                || EN_ONE_OFF_ALWAYS.is_match(rest)
                || deictic(rest)
            {
                return None;
            }
            return Some((
                Shape::Rule(rest.to_string(), MemoryType::Feedback),
                "explicit",
            ));
        }
        return Some((Shape::Explicit(content.to_string()), "explicit"));
    }
    let from_now = has_any(
        lower,
        &[
            "from now on",
            "going forward",
            "moving forward",
            "from here on",
            "future",
            "henceforth",
            "next time",
        ],
    );
    // ("what does `feast materialize` do if the end date is in the future": a question
    // without its mark, about a date in the future.)
    let a_question = [
        "what ", "how ", "why ", "which ", "who ", "does ", "is ", "are ",
    ]
    .iter()
    .any(|w| lower.starts_with(w));
    if from_now
        && !a_question
        && let Some(c) = EN_FROM_NOW
            .captures(s)
            .or_else(|| EN_FROM_NOW_TAIL.captures(s))
    {
        let rule = strip_markers(c[1].trim()).0;
        return Some((Shape::FromNowOn(rule.to_string()), "from-now-on"));
    }
    if from_now
        && let Some(c) = EN_FROM_NOW_SCOPED.captures(s)
        && !deictic(&c[1])
        && !is_question(&c[2])
    {
        let rule = format!("{}, {}", c[1].trim(), c[2].trim());
        return Some((Shape::FromNowOn(rule), "from-now-on"));
    }
    // "Fix the typo, and from now on spell-check the docs", "btw from now on …".
    if from_now && let Some(c) = EN_FROM_NOW_MID.captures(s) {
        let rule = c[1].trim();
        let rule = strip_markers(rule).0;
        if !rule.is_empty() && !is_question(rule) {
            return Some((Shape::FromNowOn(rule.to_string()), "from-now-on"));
        }
    }
    if always && EN_ALWAYS.is_match(s) {
        // "Always return early in this function": the code at hand, not a standing rule; "you
        // always forget the tests": a complaint.
        if deictic(s) || EN_ONE_OFF_ALWAYS.is_match(s) {
            return None;
        }
        if EN_ALWAYS_NO_VERB.is_match(s)
            || EN_YOU_ALWAYS
                .captures(s)
                .or_else(|| EN_WE_ALWAYS.captures(s))
                .is_some_and(|c| EN_I_ALWAYS_NOT_RULE.is_match(&c[1]))
        {
            return None;
        }
        match EN_I_ALWAYS.captures(s) {
            Some(c) if EN_I_ALWAYS_NOT_RULE.is_match(&c[1]) => return None,
            // "I always/never …" is about the person.
            Some(_) => return Some((Shape::Rule(s.to_string(), user_or_project(s)), "always")),
            None => return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always")),
        }
    }
    let dont = has_any(
        lower,
        &[
            "don't", "don’t", "do not", "dont", "avoid", "stop ", "quit ",
        ],
    );
    if dont && EN_DONT.is_match(s) && !EN_DONT_TRIVIAL.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "dont"));
    }
    // "leave vendor/ alone", "stay out of generated/": a "don't", judged as one.
    if has_any(lower, &["alone", "out of", "hands off"]) && EN_KEEP_OFF.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "dont"));
    }
    if has_any(lower, &["need to"]) && EN_NO_LONGER_NEEDED.is_match(s) && !deictic(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always"));
    }
    // "we use polars here, not pandas": here is the project.
    let we = matches!(lead, "we" | "we're" | "we’re" | "our" | "the" | "this");
    // A file of the project ("the config is in fourmolu.yaml") is not the code at hand.
    let no_here = EN_HERE.replace_all(s, "");
    if we
        && EN_WE_USE.is_match(s)
        && !this_thing(&no_here)
        && !there_as_place(&no_here)
        && !EN_CODE_NAME.is_match(&no_here)
        && !EN_ONE_OFF.is_match(s)
        && !EN_USING_AMOUNT.is_match(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    // "we're on Node 22 now, not 20", "we don't use helm here, we use kustomize" ("here" is
    // the project), "money is always stored as cents in this codebase".
    if ((we && (EN_WE_ON_VERSION.is_match(s) || EN_WE_DONT_USE.is_match(s)))
        || (always && EN_STATED_ALWAYS.is_match(s) && EN_STANDING_SCOPE.is_match(s)))
        && !EN_ONE_OFF.is_match(s)
        && !this_thing(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    // "we switched from jest to vitest", "CI moved from CircleCI to GitHub Actions", "the
    // staging server moved to staging2…", "we no longer use redux": how the project changed,
    // a fact that retires what held before (dedupe reads what it left behind).
    let moved = has_any(lower, CHANGE_VERBS);
    let gone = has_any(lower, GONE_WORDS);
    if (moved || gone)
        // A change told as the start of a problem, looked for before anything compiles.
        && !has_any(lower, TROUBLE_WORDS)
        && ((moved && opens_like_a_change(lower) && EN_CHANGED.is_match(lower))
            || (gone && EN_NO_LONGER.is_match(s)))
        && !is_question(s)
        // (The words of a passing change, looked for plainly: the general one-off and
        // transient patterns cost milliseconds to compile in the Stop hook's process.)
        && !has_any(
            lower,
            &[
                "for now",
                "this time",
                "right now",
                "for the moment",
                "at the moment",
                "today",
                "temporarily",
                "for this ",
                "until ",
            ],
        )
        && !EN_CHANGED_NOT.is_match(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "changed"));
    }
    // "the project is generated with tuist, never commit the .xcodeproj", "amounts are int64
    // minor units everywhere", "every feature is a TCA reducer …": a convention said as a fact
    // with a rule or a "everywhere" in it.
    // (What rules a convention out, looked for plainly first: "the login page is broken on
    // safari, don't touch the css yet" would otherwise compile the patterns below in the Stop
    // hook's process.)
    let not_a_convention = has_any(
        lower,
        &[
            "fail",
            "error",
            "crash",
            "broke",
            "bug",
            "flak",
            "slow",
            "hang",
            "warn",
            "issue",
            "problem",
            "wrong",
            "weird",
            "leak",
            "every time",
            "each time",
            "looked",
            "searched",
            " yet",
            "for now",
            "right now",
            "today",
            "this time",
        ],
    );
    if !not_a_convention
        && ((has_any(lower, &["never ", "always ", "don't ", "dont ", "do not "])
            && has_any(lower, &[",", ";", "—", "–"])
            // (Only where the English patterns are looked at anyway.)
            && english_gate(s, lower, false)
            && EN_RULE_CLAUSE.is_match(s))
            || (has_any(lower, &["everywhere", "across the ", "throughout the "])
                && EN_EVERYWHERE.is_match(s))
            || (["every ", "each ", "all "]
                .iter()
                .any(|w| lower.starts_with(w))
                && EN_EVERY_THING_IS.is_match(s))
            || ((has_any(
                lower,
                &[
                    " only in ",
                    " only for ",
                    " only here",
                    " only across",
                    " only everywhere",
                ],
            ) || lower.trim_end_matches(['.', '!']).ends_with(" only")
                || lower.starts_with("no "))
                && EN_ONLY_OR_NO.is_match(s)))
    {
        // ("For the save-game format: version the header, …, and always write the chunk
        // table first": a list of steps for the task.)
        // ("day 10: downgrade to free plan, never delete data": a line of a spec.)
        let spec_line = s
            .split_once(": ")
            .is_some_and(|(head, _)| head.len() < 24 && head.chars().any(|c| c.is_ascii_digit()));
        let steps = spec_line
            || after_lead_in(s)
                .unwrap_or(s)
                .split([',', ';'])
                .map(|c| c.trim_start().trim_start_matches("and ").trim_start())
                .filter(|c| {
                    !has_any(
                        &c.to_lowercase(),
                        &["never ", "always ", "don't ", "dont ", "do not "],
                    )
                })
                .any(is_instruction);
        if !deictic(s)
            && !steps
            && !EN_ONE_OFF.is_match(s)
            && !EN_CONVENTION_NOT.is_match(s)
            && !is_question(s)
        {
            let t = if EN_RULE_CLAUSE.is_match(s) {
                MemoryType::Feedback
            } else {
                MemoryType::Project
            };
            return Some((Shape::Rule(s.to_string(), t), "convention"));
        }
    }
    // "it's django.utils.timezone.now() in this codebase": the house way, put right.
    if matches!(lead, "it's" | "it’s" | "its" | "it")
        && lower.contains(" in this ")
        && EN_ITS_X_HERE.is_match(s)
        && !has_any(lower, &["fail", "error", "crash", "broke", "bug", "wrong"])
    {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Feedback),
            "correction",
        ));
    }
    // "make sure every new endpoint validates …", "ask me before running anything that costs
    // money": a rule for what is still to come.
    // (A file named in an ask-before rule is where it applies, not the code at hand: "ask
    // before adding any package to Packages/manifest.json".)
    let ask_before = has_any(lower, &["ask", "check with"]) && EN_ASK_ME_BEFORE.is_match(s);
    if ((lower.contains(" new") && EN_EVERY_NEW.is_match(s)) || ask_before)
        && !EN_ONE_OFF.is_match(s)
        && (if ask_before {
            !this_thing(s)
                && !has_any(
                    lower,
                    &[" this ", " these ", " those ", "this one", "that one"],
                )
        } else {
            !deictic(s)
        })
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "standing"));
    }
    if matches!(
        lead,
        "please" | "prefer" | "avoid" | "favor" | "favour" | "stick" | "use"
    ) && EN_STANDING_IMPERATIVE.is_match(s)
        && EN_STANDING_SCOPE.is_match(s)
        && !EN_ONE_OFF.is_match(s)
        && !deictic(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "standing"));
    }
    if has_any(
        lower,
        &[
            " not ",
            " never ",
            "instead of",
            "rather than",
            " over ",
            "(not ",
        ],
    ) && EN_USE_OVER.is_match(s)
        && !EN_ONE_OFF.is_match(s)
        && !deictic(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "use-not"));
    }
    // "Correction: feature flags are in LaunchDarkly, not Firebase Remote Config."
    if correction
        && lower.contains(", not ")
        && EN_CORRECTED_FACT.is_match(s)
        && !this_thing(s)
        && !EN_ONE_OFF.is_match(s)
    {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Project),
            "correction",
        ));
    }
    if correction && EN_CORRECTION_VERB.is_match(s) && !deictic(s) {
        return Some((
            Shape::Rule(s.to_string(), MemoryType::Feedback),
            "correction",
        ));
    }
    let about_me = matches!(
        lead,
        "i" | "i'm" | "i’m" | "im" | "i've" | "i'd" | "my" | "call"
    );
    if about_me
        && (EN_USER.is_match(s) || EN_PERSON_FACT.is_match(s) || EN_I_HABIT_SO.is_match(s))
        && !EN_ABOUT_ME.is_match(s)
    {
        // "i prefer small focused commits", "i like it when you propose a plan first": a
        // liking for how the work is done is a wish about it.
        let t = match user_or_project(s) {
            MemoryType::User
                if has_any(lower, &["prefer", "like", "love", "hate", "rather"])
                    && EN_LIKES_THE_WORK.is_match(s) =>
            {
                MemoryType::Feedback
            }
            t => t,
        };
        return Some((Shape::Rule(s.to_string(), t), "about-me"));
    }
    // "every time you touch a migration, update docs/schema.md as well", "whenever I ask
    // for a quick check, I mean read-only".
    // What follows the occasion must ask for something ("…, update docs/schema.md", "…, I
    // mean read-only"), not report what happens ("…, the instance silently drops it").
    let asks = |s: &str| {
        // ("any time you touch mappers please add a test, that's how we keep coverage up":
        // the request comes before the comma.)
        let head = s.split_once(',').map_or(s, |(h, _)| h).to_lowercase();
        head.contains(" please ")
            || head.contains(" always ")
            || s.split_once(',').is_none_or(|(_, after)| {
                let after = strip_markers(after.trim()).0;
                is_instruction(after)
                    || [
                        "i mean", "you ", "we ", "always ", "never ", "don't ", "do not ",
                    ]
                    .iter()
                    .any(|p| after.to_lowercase().starts_with(p))
            })
    };
    if matches!(lead, "every" | "whenever" | "each" | "any" | "when")
        && EN_WHENEVER_RULE.is_match(s)
        && !EN_WHENEVER_READY.is_match(s)
        && !EN_ONE_OFF.is_match(s)
        && !deictic(s)
        && asks(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "standing"));
    }
    // "… must never include the internal error text", "secrets must not be logged".
    // A softer "should always" needs a word that makes it stand ("in this repo", "every").
    let modal = has_any(
        lower,
        &["must", "shall", "should", "need", "has to", "have to"],
    );
    let soft_but_standing = modal
        && always
        && EN_SHOULD_ALWAYS.is_match(s)
        && (EN_STANDING_SCOPE.is_match(s) || EN_GENERAL.is_match(s));
    if ((modal && EN_MODAL_RULE.is_match(s)) || soft_but_standing)
        && !EN_MODAL_REGRET.is_match(s)
        && !is_instruction(s)
        && !EN_ONE_OFF.is_match(s)
        && !deictic(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always"));
    }
    // "our images go to ghcr.io, never Docker Hub", "commit messages here follow conventional
    // commits", "I want errors wrapped with %w everywhere in this project".
    if (lower.contains(", never ") || lower.contains(", not "))
        && !lower.contains("://")
        && !has_any(lower, KNOWN_TOOLS)
        && EN_GOES_NOT.is_match(s)
        && !EN_ONE_OFF.is_match(s)
        && !EN_ONE_OFF_ALWAYS.is_match(s)
        && !has_any(
            lower,
            &[
                "the fix",
                "the change",
                "the bug",
                "the patch",
                "this pr",
                "the pr ",
                "this branch",
            ],
        )
        && !this_thing(s)
        && !is_instruction(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    if has_any(
        lower,
        &[
            "here ",
            "in this repo",
            "in this project",
            "in this codebase",
        ],
    ) && EN_HERE_FOLLOWS.is_match(s)
        && !EN_ONE_OFF.is_match(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    if matches!(lead, "i")
        && EN_WANT_STANDING.is_match(s)
        && EN_STANDING_SCOPE.is_match(s)
        && !EN_ONE_OFF.is_match(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "standing"));
    }
    // "we keep business logic out of components in this app".
    if matches!(lead, "we" | "our")
        && EN_WE_CONVENTION.is_match(s)
        && EN_STANDING_SCOPE.is_match(s)
        && !EN_ONE_OFF.is_match(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Project), "we-use"));
    }
    // "…only accepts one connection at a time, so never parallelise uploads to it".
    if (always || has_any(lower, &[" so don't ", " so dont ", " so do not "]))
        && has_any(lower, &[" so ", ";"])
        && let Some(c) = EN_SO_NEVER.captures(s)
        && !EN_WHAT_HAPPENED.is_match(&c[1])
        // ("…, so don't bother triggering anything": nothing to keep.)
        && !["bother", "worry", "panic", "mind", "hesitate", "forget"]
            .contains(&c[1].to_lowercase().as_str())
        && !EN_ALWAYS_NO_VERB.is_match(&format!("never {}", &c[1]))
        && !EN_ONE_OFF.is_match(s)
        && !EN_ONE_OFF_ALWAYS.is_match(s)
        && !this_thing(s)
    {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "always"));
    }
    None
}

/// A fact put right: "X is/are/runs on Y, not Z".
static EN_CORRECTED_FACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:the\s+|our\s+)?[^,]*?\b(?:is|are|lives?|live|runs?|uses?|goes|go)\s+(?:in|on|at|under|through)?\s*[^,]+,\s*not\s+\S",
    )
});

/// An occasion, then what to do on it (not "whenever you're ready, …").
static EN_WHENEVER_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:every time|whenever|each time|any time|anytime)\s+(?:you|we|i)\b[^,.?!]+,\s*(?:please\s+)?\w|^(?:every time|whenever|each time|any time|anytime)\s+(?:you|we)\s+\w+[^,.?!]*?\s+(?:please|always)\s+\w|^when you\s+\w+[^,.?!]*\b(?:in|for) (?:this|our) (?:repo|repository|project|codebase|app)\b|^when(?:ever)? you\s+(?:touch|change|edit|add|write|create|modify|remove|rename|bump|update|suggest|open)\b[^,.?!]*,\s*(?:please\s+)?(?:paste|show|give|tell|run|add|update|mention|list|include|ask|check|note|write)\b",
    )
});

static EN_WHENEVER_READY: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:whenever|any time)\s+(?:you|we|i)(?:'re|’re| are| am| have| get| find| can)?\s+(?:ready|done|free|time|a (?:chance|minute|moment)|able)\b",
    )
});

/// "…, so we never got …", "…, so it always ends up …": what happened, not what to do.
static EN_WHAT_HAPPENED: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:got|get|gets|forgot|forget|ended|ends|end|seemed|seems|managed|manage|had|was|were|is|are|been|worked|works|fails|failed|breaks|broke|crashes|crashed)$",
    )
});

/// Where things go, and where never: "our images go to ghcr.io, never Docker Hub".
static EN_GOES_NOT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:our\s+|all\s+|the\s+)?[\w'./-]+(?:\s+[\w'./-]+)*?\s+(?:go|goes|live|lives|belong|belongs|get pushed|are pushed|get deployed|are deployed|get published|are published)\s+(?:to|in|on|under|into)\s+[^,]+,\s*(?:never|not)\s+\S",
    )
});
/// "commit messages here follow conventional commits", "… in this repo use tabs".
static EN_HERE_FOLLOWS: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^[\w'./ -]+?\s+(?:here|in this (?:repo|project|codebase))\s+(?:follow|follows|use|uses|go through|goes through|are written|is written|are named|is named)\s+\S",
    )
});
/// "I want errors wrapped with %w everywhere in this project".
static EN_WANT_STANDING: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^i(?:'d| would)? (?:want|like|prefer)\s+\S"));

/// A rule stated of its subject: "error messages … must never include …".
static EN_MODAL_RULE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:must|shall)\s+(?:never|always|not)\s+\w|\bmust\s+(?:be|go|live|stay)\s+\w|^(?:every|each|all|any)\s+[\w-]+(?:\s+[\w'-]+)*?\s+(?:must|should|needs? to|has to|have to)\s+\w",
    )
});
static EN_SHOULD_ALWAYS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\bshould\s+(?:never|always|not)\s+\w"));
/// "we should never have merged it", "I think it should always …": regret or an opinion;
/// "it should always retry 3 times": how the code at hand should behave.
static EN_MODAL_REGRET: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:never|always|not)\s+(?:have|been)\b|^(?:i think|i guess|i feel|i believe|honestly|imo|maybe|perhaps)\b|\b(?:it|this|that|they|this one)\s+(?:must|should|shall)\b|\b(?:decided|said|says|thinks?|thought|claims?|claimed|insists?|insisted)\s+(?:that\s+)?(?:we|you|everyone|it|they)\s+(?:should|must)\b",
    )
});
/// "we keep …", "we prefix …", "we squash-merge …": a team's way of doing things.
static EN_WE_CONVENTION: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:we|our team)\s+(?:always\s+|only\s+)?(?:keep|put|write|store|name|prefix|wrap|squash|rebase|tag|pin|vendor|avoid|follow|document|version|review|deploy|release|test|lint|format)\b",
    )
});
/// "…, so never …", "…; always …": a rule after what explains it, in one sentence.
static EN_SO_NEVER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:[,;—–]\s*so\s+(?:[\w'’]+\s+)*?|\sso\s+|;\s*)(?:please\s+)?(?:never|always|don't|dont|do not)\s+(\w+)",
    )
});

/// "we're using too much memory", "we use the wrong config": an amount or a mistake, not a
/// choice of tool.
static EN_USING_AMOUNT: LazyLock<Regex> = LazyLock::new(|| {
    re(r"(?i)\b(?:use|uses|using)\s+(?:the wrong|too|so|way|more|less|a lot|lots|all|up|most)\b")
});
static EN_WE_ON_VERSION: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)^we(?:'re|’re| are) (?:now |currently )?on [a-z.+#-]*\s?v?\d[\w.]*"));
static EN_WE_DONT_USE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:we|this (?:repo|project|team|codebase))\s+(?:don't|don’t|do not|doesn't|does not|never)\s+(?:use\s+\S|do\s+(?:[\w-]+\s+)?[\w-]+s\b)",
    )
});
/// What a project change is about when it names its subject: "CI moved …", "the staging
/// server moved …", "we migrated the db from …".
const CHANGE_SUBJECTS: &[&str] = &[
    "ci",
    "ci/cd",
    "pipeline",
    "pipelines",
    "build",
    "builds",
    "deploy",
    "deploys",
    "deployment",
    "deployments",
    "staging",
    "prod",
    "production",
    "server",
    "servers",
    "host",
    "hosts",
    "hosting",
    "api",
    "apis",
    "endpoint",
    "endpoints",
    "db",
    "dbs",
    "database",
    "databases",
    "docs",
    "documentation",
    "wiki",
    "repo",
    "repository",
    "monorepo",
    "registry",
    "tracker",
    "bug tracker",
    "issues",
    "tickets",
    "dashboard",
    "dashboards",
    "monitoring",
    "metrics",
    "logs",
    "logging",
    "alerts",
    "alerting",
    "paging",
    "on-call",
    "oncall",
    "standup",
    "standups",
    "meeting",
    "meetings",
    "release",
    "releases",
    "cluster",
    "clusters",
    "infra",
    "infrastructure",
    "cdn",
    "bucket",
    "buckets",
    "secrets",
    "domain",
    "domains",
    "website",
    "site",
    "backend",
    "frontend",
    "auth",
    "queue",
    "queues",
    "cache",
    "storage",
    "email",
    "e-mail",
    "chat",
    "runbook",
    "runbooks",
    "stack",
    "test suite",
    "tests",
    "test runner",
    "linter",
    "formatter",
    "bundler",
    "build system",
    "package manager",
    "orm",
    "default branch",
    "node",
    "python",
    "java",
    "go",
    "ruby",
    "rust",
    "terraform",
    "kubernetes",
    "k8s",
    "postgres",
    "mysql",
    "redis",
    "everything",
    "all of it",
    "all of this",
];

/// "we switched from jest to vitest", "CI moved from CircleCI to GitHub Actions", "we
/// upgraded to Python 3.12", "we moved off jenkins": a change of the project's tools or
/// places, with where it went (or what it left). Matched against the lowercased sentence
/// (a case-insensitive pattern costs twice as long to compile).
static EN_CHANGED: LazyLock<Regex> = LazyLock::new(|| {
    let mut subjects = CHANGE_SUBJECTS.to_vec();
    subjects.sort_by_key(|w| std::cmp::Reverse(w.len()));
    let subjects = format!(
        "(?:{})",
        subjects
            .iter()
            .map(|w| regex::escape(w))
            .collect::<Vec<_>>()
            .join("|")
    );
    re(&format!(
        r"^(?:(?:fyi|btw|heads up|note|ps|also|oh|ok|so|update)[,:!]?\s+)*(?:we(?:'ve|’ve|\s+have)?|the team|[a-z0-9_.-]+/[a-z0-9_./-]*|(?:(?:the|our)\s+(?:[A-Za-z0-9_.-]+\s+){{0,2}}?)?{subjects}(?:\s+has)?)\s+(?:(?:just|recently|finally|now|also|all|already|officially)\s+)*(?:switched|moved|migrated|upgraded|transitioned|ported|renamed)\s+(?:(?:the|our|all|over)\s+)?(?:(?:(?:[A-Za-z0-9_.`-]+\s+){{0,2}}?{subjects}\s+)?(?:(?:over|away|out)\s+)?(?:from\s+\S.*?\s+(?:to|onto)\s+\S|off(?:\s+of)?\s+\S|(?:to|onto)\s+\S)|(?:[A-Za-z0-9_.`-]+\s+){{1,2}}from\s+\S.*?\s+(?:to|onto)\s+\S)"
    ))
});

/// Words of a sentence that reports trouble ("we switched to the new parser and now the tests
/// hang"): a change or a fact told as the start of a problem is not a memory.
const TROUBLE_WORDS: &[&str] = &[
    " and now",
    " but now",
    " since then",
    "broke",
    "fail",
    "hang",
    "crash",
    "error",
    "why",
    " bug",
    "issue",
    " slow",
];

/// The verbs of [`EN_CHANGED`]: a sentence with none of them skips it.
const CHANGE_VERBS: &[&str] = &[
    "renamed",
    "switched",
    "moved",
    "migrated",
    "upgraded",
    "ported",
    "transitioned",
];

/// The words [`EN_NO_LONGER`] needs one of.
const GONE_WORDS: &[&str] = &[
    "no longer",
    "anymore",
    "any more",
    "got rid of",
    "ripped out",
    "gone",
    "removed",
    "deprecated",
    "retired",
    "dropped",
    "ditched",
];

/// Whether a sentence opens the way a change of the project does ("we …", "the …", "our …",
/// "CI …"): [`EN_CHANGED`] is compiled only for one that does (the Stop hook asks about every
/// read-only turn in a fresh process, and "I moved the handler …" is common task talk).
fn opens_like_a_change(lower: &str) -> bool {
    let mut rest = lower.trim_start();
    loop {
        let word = rest
            .split(|c: char| c.is_whitespace() || matches!(c, ',' | ':' | '!'))
            .next()
            .unwrap_or("");
        let marker = [
            "fyi", "btw", "heads", "up", "note", "ps", "also", "oh", "ok", "so", "update",
        ]
        .contains(&word);
        if !marker || word.is_empty() {
            return ["we", "we've", "we’ve", "the", "our"].contains(&word)
                || word.contains('/')
                || CHANGE_SUBJECTS
                    .iter()
                    .any(|s| s.split(' ').next() == Some(word));
        }
        rest = rest[word.len()..].trim_start_matches([',', ':', '!', ' ']);
    }
}

/// "we no longer use redux", "redux is no longer used", "we don't use helm anymore", "we
/// got rid of jenkins", "core data is gone, we migrated to SwiftData", "we dropped zap, everything
/// logs through slog now".
static EN_NO_LONGER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:fyi|btw|heads up|note|ps|also|oh|ok|so|update)[,:!]?\s+)*(?:we\s+(?:don't|don’t|dont|do not)\s+(?:use|run|deploy|host|need|have)\s+\S.*?\b(?:anymore|any more)\b|we\s+no longer\s+(?:use|run|deploy|host|need|have)\s+\S|we(?:'ve|’ve|\s+have)?\s+(?:got\s+rid\s+of|ripped\s+out)\s+\S|[\w.@/-]+(?:\s+[\w.@/-]+)?\s+(?:is|are)\s+no longer\s+(?:used|in use|supported|maintained|a thing|around)|[\w.@/-]+(?:\s+[\w.@/-]+)?\s+(?:is|are|has been|have been|was|were)\s+(?:now\s+)?(?:gone|removed|deprecated|retired)\b[^.?!]*?\bwe\s+(?:use|moved|migrated|switched)\b|we(?:'ve|’ve|\s+have)?\s+(?:just\s+|recently\s+|finally\s+)?(?:dropped|ditched|removed|retired|deprecated)\s+\S[^.?!]*?\bnow\b|[^.?!]*?\bnow\b[^.?!]*?,\s*[\w.+/-]+(?:\s+[\w.+/-]+)?\s+(?:is|are)\s+(?:gone|dead|retired)\b)",
    )
});

/// Changes of the moment, not of the project: another branch, the next step, code moved
/// between files; and a change told as the start of a problem ("we switched to the new
/// parser and now the tests hang").
static EN_CHANGED_NOT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:(?:and|but) (?:now|since)|since then|bug|issue|warning|problem|flak\w*|broke|broken|break(?:s|ing)?|fail(?:s|ed|ing|ure)?|hang(?:s|ing)?|crash(?:es|ed|ing)?|errors?|regress\w*|why|slow(?:er)?|moved on|on to|(?:to|onto) (?:the|a|another|that|this) (?:next|other|new|different|feature|fix|previous) (?:branch|step|task|ticket|issue|part|section|phase|file|approach|plan|idea|option|tab|window|page)|(?:to|onto|off) (?:a |the |that |this |another )?(?:branch|worktree)\b|to (?:a |another |the )?(?:different|new|other) (?:approach|plan|idea|strategy|option|way)|to (?:my|your) (?:laptop|machine|desk|office)|(?:file|function|method|class|struct|module|component|handler|helper|hook|test|tests|code|logic|import|imports|constant|type|types) (?:to|into) |(?:i|you) (?:switched|moved|migrated|upgraded)\b)",
    )
});

/// A fact stated to hold always: "… is always stored as …", "… are never …".
static EN_STATED_ALWAYS: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:is|are|get|gets)\s+(?:always|never)\s+\w"));
static EN_EVERY_NEW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+)?(?:make sure|ensure|be sure)\s+(?:that\s+)?(?:every|all|each|any)\s+new\b",
    )
});
static EN_ASK_ME_BEFORE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:(?:tbh|honestly|fwiw),?\s+)?(?:please\s+|i'?d rather you\s+|i’d rather you\s+)?(?:always\s+)?(?:ask|check with)\s+(?:me\s+(?:first\s+)?before\s+\w|(?:first\s+)?before\s+(?:adding|installing|deleting|removing|upgrading|introducing|pulling in|bumping|dropping|renaming|rewriting|running|pushing|merging|deploying)\b)",
    )
});

/// How the person works, and what follows from it for the agent: "i'm usually on a slow
/// train connection when i work on this, so prefer …", "i review everything on my phone in
/// the github app so keep PR descriptions short".
static EN_I_HABIT_SO: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^i(?:'m|’m| am)?\s+(?:usually|mostly|often|always|generally|normally|mainly|typically)\s+[^.?!]*?,?\s+so\s+(?:please\s+)?(?:keep|prefer|use|make|avoid|don't|dont|do not|write|give|stick|stay)\b|^i\s+(?:review|read|check|look at)\s+(?:everything|most things|all (?:my |the )?\w+|prs|pull requests|code reviews?|diffs)\s+on\s+(?:my|a)\s+(?:phone|tablet|ipad|small screen)\b",
    )
});

/// About the person, said otherwise than "I'm a …": "call me Mika", "I use fish, not bash",
/// "I'm in Berlin", "I'm mostly a backend dev".
static EN_PERSON_FACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:[Cc]all me [A-Z]\w+|I use (?:\S+ ){1,2}?(?:\S+,? )?(?:not|instead of|rather than|over) \S+|I(?:'m|’m| am) (?:mostly |also |basically |primarily |more of |kind of )?(?:a|an) (?:[\w/+#.-]+ ){0,3}(?:person|engineer|developer|dev|designer|lead|manager|scientist|analyst)\b|I(?:'m|’m| am) [A-Z][a-z]+, |I(?:'m|’m| am) (?:based )?in (?:the )?[A-Z][a-z]+\b|(?i:i(?:'m|’m| am)?\s*(?:based in|living in)|i live in|im in [a-z]+ (?:btw|fwiw)\b|i'm in [a-z]+ (?:btw|fwiw)\b)\s*[a-z]*|(?i:i(?:'m|’m| am) (?:also )?(?:colou?rblind|dyslexic|left-handed|deaf|hard of hearing))\b|(?i:i(?:'m|’m| am) on (?:a|an|my) (?:[\w.-]+ ){0,3}?(?:mac|macbook|linux|windows|laptop|thinkpad|pc|chromebook|m1|m2|m3|m4)\b))",
    )
});

/// Splits a reason off a rule in the same sentence: `(rule, why)`.
fn split_inline_why(rule: &str) -> (String, Option<String>) {
    // Latin: a dash clause, or a causal connector.
    const DASHES: &[&str] = &[" — ", " – ", " -- ", " - "];
    for d in DASHES {
        if let Some(i) = rule.find(d) {
            let head = &rule[..i];
            let tail = rule[i + d.len()..].trim();
            let tl = tail.to_lowercase();
            let continues_rule = [
                "never",
                "always",
                "not ",
                "no ",
                "only",
                "and ",
                "or ",
                "e.g",
                "i.e",
                "except",
                "unless",
                "including",
                "especially",
            ]
            .iter()
            .any(|p| tl.starts_with(p))
                // "… are generated — run gazelle instead of hand-editing them": an
                // instruction goes on with the rule, it gives no reason.
                || IMPERATIVE_VERBS.contains(&first_word(tail).as_str());
            if !continues_rule && tail.split_whitespace().count() >= 3 {
                return (head.trim().to_string(), Some(sentence_case(tail)));
            }
        }
    }
    let lower = rule.to_lowercase();
    const CAUSAL: &[(&str, bool)] = &[
        ("; because ", false),
        (", because ", false),
        (" because ", false),
        (", since ", false),
        (", as otherwise ", true),
        (", otherwise ", true),
        ("; otherwise ", true),
        (", so that ", true),
    ];
    for (conn, keep) in CAUSAL {
        if let Some(i) = lower.find(conn) {
            let tail_start = if *keep { i + 2 } else { i + conn.len() };
            let tail = rule[tail_start..].trim();
            if tail.split_whitespace().count() >= 3 {
                return (rule[..i].trim().to_string(), Some(sentence_case(tail)));
            }
        }
    }
    // Japanese: the reason comes first ("…ので、…", "…から、…").
    for conn in ["ので、", "ため、", "から、"] {
        if let Some(i) = rule.find(conn) {
            let head = rule[..i].trim();
            // "本番DBは共有なので、…": the な belongs to the ので.
            let head = match conn {
                "ので、" => head.strip_suffix('な').unwrap_or(head),
                _ => head,
            };
            let tail = rule[i + conn.len()..].trim();
            if !head.is_empty() && !tail.is_empty() {
                return (tail.to_string(), Some(with_full_stop(head)));
            }
        }
    }
    // Chinese: 因为…，(所以)…; …，因为…; …，否则….
    if let Some(rest) = rule.strip_prefix("因为")
        && let Some(i) = rest.find(['，', ','])
    {
        let why = rest[..i].trim();
        let sep = rest[i..].chars().next().map_or(1, char::len_utf8);
        let tail = rest[i + sep..].trim();
        let tail = tail.strip_prefix("所以").unwrap_or(tail).trim();
        if !why.is_empty() && !tail.is_empty() {
            return (tail.to_string(), Some(with_full_stop(why)));
        }
    }
    for conn in ["，因为", ",因为", "，否则", "，不然"] {
        if let Some(i) = rule.find(conn) {
            let head = rule[..i].trim();
            let keep_from = if conn.ends_with("因为") {
                i + conn.len()
            } else {
                i + conn.chars().next().map_or(0, char::len_utf8)
            };
            let tail = rule[keep_from..].trim();
            if !head.is_empty() && !tail.is_empty() {
                return (head.to_string(), Some(with_full_stop(tail)));
            }
        }
    }
    (rule.trim().to_string(), None)
}

fn sentence_case(s: &str) -> String {
    let t = with_full_stop(s.trim());
    if crate::text::mostly_cjk(&t) {
        t
    } else {
        capitalize(&t)
    }
}

/// A sentence that explains rather than asks or orders (a candidate Why).
fn explains(s: &str) -> bool {
    if is_question(s) {
        return false;
    }
    let lower = s.to_lowercase();
    if [
        "because",
        "since",
        "the reason",
        "otherwise",
        "that's because",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
    {
        return true;
    }
    // Japanese / Chinese explanations.
    let t = s.trim_end_matches(['。', '！', '!', '.']);
    if t.ends_with("から") || t.ends_with("ので") || t.ends_with("ためです") || t.ends_with("ため")
    {
        return true;
    }
    if [
        "なぜなら",
        "理由は",
        "というのも",
        "因为",
        "由于",
        "原因是",
        "否则",
        "不然",
    ]
    .iter()
    .any(|p| s.starts_with(p))
    {
        return true;
    }
    if crate::text::mostly_cjk(s) {
        return false;
    }
    // "And check the deep link while you're there", "then check the /hosts page": the task
    // goes on. "Ever.": a fragment explains nothing.
    // "anyway can you figure out why …": a request, whatever it opens with.
    if has_any(&lower, &["can you ", "could you ", "would you ", "please "]) {
        return false;
    }
    let core = [
        "and then ",
        "and ",
        "then ",
        "also ",
        "plus ",
        "oh and ",
        "ok and ",
        "anyway ",
        "anyways ",
        "ok so ",
        "so ",
    ]
    .iter()
    .find_map(|c| lower.starts_with(c).then(|| s.get(c.len()..).unwrap_or(s)))
    .unwrap_or(s);
    let w = first_word(core);
    let words = s.split_whitespace().count();
    !w.is_empty() && !IMPERATIVE_VERBS.contains(&w.as_str()) && (3..=45).contains(&words)
}

/// Whether a sentence that may explain a rule is about it: it opens as a reason ("because",
/// "otherwise", "から"), shares a word with the rule, or tells a consequence ("CI fails", "it
/// was slow"). "we use npm in this repo. The secret project codename is BLUEHERON." gives the
/// rule no reason.
fn bears_on(s: &str, rule: &str) -> bool {
    let lower = s.to_lowercase();
    // "Then wire it to the view model", "Focus on ble_adv.c first", "你先看看 …": the task's
    // next step, not a reason.
    if [
        "then ",
        "after that",
        "afterwards",
        "next ",
        "focus on",
        "first ",
        "flip ",
        "你先",
        "先帮",
        "まず",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
        || lower.contains(" and then ")
        || lower.contains(" first.")
    {
        return false;
    }
    // "It was evaluated in 2023 and rejected": about the rule's subject.
    if [
        "it ", "it's ", "they ", "that ", "this ", "those ", "these ", "people ",
    ]
    .iter()
    .any(|p| lower.starts_with(p))
    {
        return true;
    }
    if crate::text::mostly_cjk(s)
        || [
            "because",
            "since",
            "the reason",
            "otherwise",
            "that's because",
            "that way",
        ]
        .iter()
        .any(|p| lower.starts_with(p))
    {
        return true;
    }
    const CONSEQUENCES: &[&str] = &[
        "pinned",
        "until",
        "regress",
        "upstream",
        "legacy",
        "decision",
        "decided",
        "evaluat",
        "reject",
        "nobody",
        "never",
        "always",
        " so ",
        "explode",
        "catch",
        "hurt",
        "dead",
        "old ",
        "fail",
        "break",
        "broke",
        "slow",
        "error",
        "crash",
        "flak",
        "conflict",
        "bug",
        "wrong",
        "cost",
        "expensive",
        "bit us",
        "bites",
        "burned",
        "pain",
        "mess",
        "safe",
        "fast",
        "easi",
        "clean",
        "consisten",
        "requir",
        "need",
        "only",
        "prefer",
        "hate",
        "like",
        "policy",
        "rule",
        "team",
        "legal",
        "complian",
        "secur",
        "review",
        "ci ",
        "lock",
        "otherwise",
        "which",
        "means",
        "so that",
        "so we",
        "so it",
        "we had",
        "last time",
        "incident",
        "outage",
        "customer",
        "user",
        "prod",
        "deploy",
        "migrat",
        "compat",
        "support",
        "depend",
        "leak",
        "noise",
        "noisy",
        "hard",
        "confus",
        "read",
        "diff",
        "time",
        "minute",
        "second",
    ];
    if has_any(&lower, CONSEQUENCES) {
        return true;
    }
    let rule_words = crate::text::content_words(rule);
    crate::text::any_content_word(s, |w| rule_words.contains(w))
}

/// A following sentence that reads as a standing instruction (a candidate How to apply).
fn instructs(s: &str) -> bool {
    if is_question(s) || EN_ONE_OFF.is_match(s) {
        return false;
    }
    // "Write a test for src/utils/format.ts": the task at hand (one file, this thing), not
    // how the rule applies ("put new tests under tests/unit/" is).
    if EN_AT_HAND.find_iter(s).any(|m| !m.as_str().contains('/')) {
        return false;
    }
    let w = first_word(s);
    HOW_VERBS.contains(&w.as_str())
}

/// The text after a short lead-in that ends in a colon ("Quick rule for this app: …"), and
/// without a standing-scope opener ("in this repo we use …" → "we use …").
fn after_lead_in(s: &str) -> Option<&str> {
    let cut = s
        .find(": ")
        .map(|i| (i, 2))
        .or_else(|| s.find('：').map(|i| (i, '：'.len_utf8())));
    let tail = match cut {
        Some((i, n)) => {
            let head = &s[..i];
            let short = if crate::text::mostly_cjk(head) {
                head.chars().count() <= 20
            } else {
                head.split_whitespace().count() <= 10
            };
            (short && !head.contains("://")).then(|| s[i + n..].trim_start())?
        }
        None => s,
    };
    let tail = EN_SCOPE_OPENER
        .find(tail)
        .or_else(|| EN_NAMED_SCOPE_OPENER.captures(tail).and_then(|c| c.get(1)))
        .map_or(tail, |m| &tail[m.end()..]);
    // A quotation after the colon is someone else's words.
    let quoted = tail.starts_with(['"', '“', '\'', '‘', '「', '『']);
    (!tail.is_empty() && !quoted && tail.len() < s.len()).then_some(tail)
}

/// A lead-in that names what follows as a rule: "Quick rule for this repo:", "Convention:",
/// "一条规定：", "ルール：".
static RULE_LEAD_IN: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)\b(?:rule|rules|convention|conventions|policy|house style)(?:\s+(?:for|in|of|on)\s+[^:]+)?$|(?:规定|规则|约定|规矩|要求|ルール|決まり)(?:です)?$",
    )
});
/// A clause that calls its sentence a rule: "…, that's a hard rule for this repo".
static RULE_TAIL: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)[,;—–-]\s*(?:that's|that’s|that is|this is|it's)\s+(?:a|the|our)\s+(?:hard\s+|strict\s+|firm\s+|house\s+)?(?:rule|convention|policy)\b|[，,、]\s*(?:这是|这个是)(?:硬性|强制)?(?:规定|规矩|规则|铁律)|[、,，]\s*(?:これは|それは)(?:絶対の|厳格な)?(?:ルール|決まり)",
    )
});

/// Whether [`after_lead_in`] can find anything: a colon, or a scope opener's first word.
fn may_have_lead_in(s: &str) -> bool {
    s.contains(": ") || s.contains('：') || {
        let lower = s.trim_start().to_ascii_lowercase();
        ["in ", "for ", "across "]
            .iter()
            .any(|p| lower.starts_with(p))
    }
}

/// "in this repo, …", "这个仓库里": where the statement holds, before it.
static EN_SCOPE_OPENER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:in|for|across) (?:this|our|the) (?:repo|repository|project|codebase|app|service|monorepo|team),?\s+|^(?:in|for|across|on) (?:all|every|any)(?: of)?(?: my| our)? (?:repos?|repositories|projects?|codebases?),?\s+|^(?:globally|everywhere),\s+",
    )
});

/// A project named as the place a "we …" statement holds: "In beta we always use Poetry".
static EN_NAMED_SCOPE_OPENER: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^((?:in|for|across) (?:the )?[\w./@-]+(?: (?:repo|repository|service|app|project|package|module|codebase|monorepo|frontend|backend))?,?\s+)we\s",
    )
});

/// The longest statement kept as a memory (about 40 lines of prose).
const MAX_RULE_BYTES: usize = 4_000;

/// Whether a sentence opens as a rule does ("never …", "always …", "use …", "we use …"):
/// only such a sentence is looked at for a task spliced on (the look costs a pattern).
fn opens_like_a_rule(s: &str) -> bool {
    let lower = s.trim_start().to_lowercase().replace('’', "'");
    // "From now on we use pnpm, …": the marker opens the rule.
    let lower = [
        "from now on, ",
        "from now on ",
        "going forward, ",
        "going forward ",
    ]
    .iter()
    .find_map(|m| lower.strip_prefix(m))
    .map_or(lower.as_str(), |rest| rest);
    [
        "never ",
        "always ",
        "don't ",
        "dont ",
        "do not ",
        "avoid ",
        "stop ",
        "prefer ",
        "use ",
        "keep ",
        "make sure ",
        "please keep ",
        "we use ",
        "we always ",
        "we never ",
        "we don't ",
        "we dont ",
        "we do not ",
        "we no longer ",
        "no ",
        "only ",
        "please never ",
        "please always ",
        "please don't ",
        "please use ",
    ]
    .iter()
    .any(|o| lower.starts_with(o))
}

/// The verbs [`EN_SPLICED_TASK`] looks for (it is compiled only when one is there).
const SPLICED_TASK_VERBS: &[&str] = &[
    "remove", "fix", "delete", "clean", "update", "change", "rename", "refactor", "rewrite",
    "look", "check", "add", "move", "replace", "strip", "drop", "convert", "migrate", "revert",
    "undo", "redo", "tidy", "sort",
];

/// A task spliced onto a rule after a comma: ", remove the ones in …", ", and fix …".
static EN_SPLICED_TASK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i-u)[,;]\s+(?:and\s+)?(?:then\s+|also\s+|please\s+)?(?:remove|fix|delete|clean|update|change|rename|refactor|rewrite|look|check|add|move|replace|strip|drop|convert|migrate|revert|undo|redo|tidy|sort)\s",
    )
});

/// A task that applies the rule now: "…, update the CI config accordingly", "…, fix the
/// imports to match", "…, rename the old ones too".
static EN_APPLY_NOW: LazyLock<Regex> =
    LazyLock::new(|| re(r"(?i)\b(?:accordingly|to match|as well|too|right away|now)\W*$"));

/// What names the thing at hand: "this", "the ones", a file or a path.
static EN_AT_HAND: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i-u)\b(?:this|that|these|those|the ones?)\b|\w\.(?:ts|tsx|js|jsx|mjs|py|rs|go|rb|java|kt|swift|json|ya?ml|toml|md|lock|sh|c|h|cc|cpp|css|scss|html|sql|tf)\b|\w/\w|\w/(?:\s|$)|\bthe old\b",
    )
});

/// A request to forget what was said before: "forget the rule about squashing commits",
/// "ignore what I said about the staging DB", "squashのルールは忘れて", "忘掉关于 squash 的那条规则".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Retraction {
    /// What the forgotten memory is about, in the person's words ("squashing commits").
    pub subject: String,
}

/// "forget the rule about X", "ignore what I told you about X", "drop the note on X".
static EN_RETRACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)^(?:please\s+|ok(?:ay)?[,\s]+|also[,\s]+|and\s+|actually[,\s]+|you can\s+|you may\s+|feel free to\s+)*(?:forget|drop|scrap|scratch|ignore|disregard)\s+(?:(?:about\s+|(?:the|that|my|your|our|this)\s+(?:old\s+|earlier\s+)?(?:rule|note|memory|preference|instruction|convention|guideline)s?\s+(?:about|on|regarding|re:?)\s+|what\s+(?:i|we)\s+(?:said|told you|wrote|mentioned)\s+(?:earlier\s+|before\s+)?(?:about|on|regarding)\s+|everything\s+(?:i|we)\s+(?:said|told you)\s+(?:about|on)\s+)(?P<subject>[^,;.—–!?]+)|(?:the|that|my|our|this)\s+(?P<named>[^,;.—–!?]+?)\s+(?:rule|note|preference|convention|thing|one|bit)s?\b)",
    )
});

/// "squashのルールは忘れて", "ステージングDBの件はもう忘れてください".
static JA_RETRACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?P<subject>[^。、，,]+?)(?:について|に関する|の)(?:ルール|こと|話|メモ|件|決まり)は(?:もう)?(?:(?:[Mm]emory|メモリ|メモリー|記憶)から)?(?:忘れて|無視して|消して|削除して)",
    )
});

/// "忘掉关于 squash 的那条规则", "之前说的 staging 数据库的事忘掉吧".
static ZH_RETRACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"^(?:请)?(?:忘掉|忘记|不用管|别管)(?:我)?(?:之前|刚才)?(?:说的|讲的)?(?:关于)?(?P<subject>[^，。,]+?)(?:的)?(?:那条|这条)?(?:规则|规定|事|要求)|^(?:我)?(?:之前|刚才)?(?:说的)?(?:关于)?(?P<subject2>[^，。,]+?)的(?:那条)?(?:规则|事|要求)(?:就)?(?:忘掉|忘了|不用管了|作废)|^(?:请)?把(?P<subject3>[^，。,]+?)(?:那条|这条)?(?:记忆|规则|记录|要求)?(?:删掉|删除|忘掉)|^关于(?P<subject4>[^，。,]+?)(?:我|我们)?(?:之前)?(?:说的|讲的)(?:话)?(?:就)?(?:忽略|忘掉|不算)",
    )
});

/// The retraction a sentence opens with, and where the rest of it starts (the statement
/// that may follow: "…, that's no longer true — we use merge commits now").
fn retraction_in(s: &str) -> Option<(String, usize)> {
    let t = s.trim_start();
    let lead = s.len() - t.len();
    let (subject, end) = if let Some(c) = EN_RETRACT.captures(t) {
        match (c.name("subject"), c.name("named")) {
            (Some(m), _) => (m.as_str(), m.end()),
            (None, Some(m)) => (m.as_str(), c.get(0)?.end()),
            _ => return None,
        }
    } else if let Some(c) = JA_RETRACT.captures(t) {
        let m = c.name("subject")?;
        (m.as_str(), c.get(0)?.end())
    } else if let Some(c) = ZH_RETRACT.captures(t) {
        let m = ["subject", "subject2", "subject3", "subject4"]
            .iter()
            .find_map(|n| c.name(n))?;
        (m.as_str(), c.get(0)?.end())
    } else {
        return None;
    };
    let subject = subject
        .trim()
        .trim_end_matches(|c: char| c.is_whitespace() || matches!(c, '.' | '。'));
    // "the make lint thing", "the lint rule": the words that only say it is a rule or a thing.
    let subject = subject
        .split_whitespace()
        .filter(|w| {
            !matches!(
                w.to_ascii_lowercase().as_str(),
                "thing" | "things" | "stuff" | "rule" | "rules" | "bit" | "business" | "one"
            )
        })
        .collect::<Vec<_>>()
        .join(" ");
    let subject = subject.as_str();
    // "forget it", "ignore that": no subject to find a memory by.
    if crate::text::content_words(subject).is_empty() {
        return None;
    }
    Some((subject.to_string(), lead + end))
}

/// Whether `text` has a word a retraction needs (its patterns are compiled only then: the
/// Stop hook asks about prompts in a fresh process).
fn may_retract(text: &str) -> bool {
    let lower = text.to_lowercase();
    has_any(
        &lower,
        &[
            "forget",
            "ignore",
            "disregard",
            "drop",
            "scrap",
            "scratch",
            "忘",
            "無視",
            "管",
            "消して",
            "削除",
            "删",
            "忽略",
        ],
    )
}

/// Words of a rule that say nothing of what to do: "always be careful", "never be lazy",
/// "always do things properly".
const VAGUE_WORDS: &str = "always never be careful carefully lazy good better best nice right \
    properly proper correctly correct well thing things stuff sure thorough thoroughly do double \
    check smart mindful attentive attention pay make mistake mistakes error errors write code \
    think act extra sloppy work your you quality clean";

/// Whole rules in Japanese and Chinese that say nothing of what to do ("常に気をつけてください",
/// "一定要小心"), with their politeness and punctuation taken off.
const VAGUE_CJK: &[&str] = &[
    "気をつけて",
    "注意して",
    "慎重に",
    "ミスしないで",
    "間違えないで",
    "小心",
    "仔细",
    "认真",
    "注意",
    "别出错",
    "不要出错",
];

/// Whether a rule holds no word beyond [`VAGUE_WORDS`], or is one of [`VAGUE_CJK`] with
/// "always" and politeness around it.
fn says_nothing(rule: &str) -> bool {
    static VAGUE: LazyLock<std::collections::HashSet<String>> =
        LazyLock::new(|| crate::text::content_words(VAGUE_WORDS));
    if rule.is_ascii() {
        let words = crate::text::content_words(rule);
        return words.len() <= 4 && words.iter().all(|w| VAGUE.contains(w));
    }
    let mut core = rule.trim().trim_end_matches(['。', '！', '!', '.', ' ']);
    for wrap in [
        "常に",
        "いつも",
        "必ず",
        "ちゃんと",
        "一定要",
        "总是",
        "始终",
        "务必",
        "请",
        "要",
        "ください",
        "下さい",
        "ね",
        "よ",
        "些",
        "点",
    ] {
        core = core.trim_start_matches(wrap).trim_end_matches(wrap);
    }
    VAGUE_CJK.contains(&core.trim())
}

/// Whether a statement was there to hold a secret that redaction took out: with its markers
/// gone, at most two words are left besides the words naming the secret ("The AWS key is
/// [REDACTED:…] with secret [REDACTED:…]", "My API key is [REDACTED:…]: always use it for the
/// staging tests": what to use is gone). Where a secret lives stays ("the staging DB password
/// is in 1Password under Staging DB").
fn little_but_secrets(rule: &str) -> bool {
    if !rule.contains("[REDACTED:") {
        return false;
    }
    static NAMING: LazyLock<std::collections::HashSet<String>> = LazyLock::new(|| {
        crate::text::content_words(
            "key keys secret secrets token tokens password passwords passphrase credential \
             credentials api access pin code codes login user username value",
        )
    });
    let without: String = REDACTION_MARKER.replace_all(rule, " ").into_owned();
    crate::text::content_words(&without)
        .iter()
        .filter(|w| !NAMING.contains(*w))
        .count()
        <= 2
}

/// "My OpenAI key is [REDACTED:…], please set it in .env.local": a secret handed over for the
/// task at hand, which redaction took out; what is left is a request, not a memory.
fn hands_over_a_secret(rule: &str) -> bool {
    static HANDED_OVER: LazyLock<Regex> = LazyLock::new(|| {
        re(
            r"(?i)\[REDACTED:[a-z0-9-]+\][`'\x22]?\s*(?:,|;|—|–|-|:|\band\b|\bso\b)\s*(?:(?:please|pls|can you|could you|would you|just|now)\s+)*(?:set|add|put|store|save|paste|export|configure|write|update|insert|plug|drop|stick)\s+(?:it|this|that|them|these)\b",
        )
    });
    rule.contains("[REDACTED:") && HANDED_OVER.is_match(rule)
}

/// A marker the redactor leaves: `[REDACTED:kind]`.
static REDACTION_MARKER: LazyLock<Regex> = LazyLock::new(|| re(r"\[REDACTED:[a-z0-9-]+\]"));

/// Every request in a prompt to forget something said before ([`Retraction`]), in order.
/// Questions, quoted text and tool output are not requests (as for [`candidates`]).
pub fn retractions(prompt: &str) -> Vec<Retraction> {
    let Some(zh) = crate::t2s::simplified(prompt) else {
        return retractions_in(prompt);
    };
    retractions_in(&zh.text)
        .into_iter()
        .map(|r| Retraction {
            subject: zh.restore(&r.subject),
        })
        .collect()
}

fn retractions_in(prompt: &str) -> Vec<Retraction> {
    if !may_retract(prompt) {
        return Vec::new();
    }
    let text = prose(prompt);
    sentences(&text)
        .into_iter()
        .filter(|s| !is_question(s))
        .filter_map(|s| retraction_in(strip_markers(s).0))
        .map(|(subject, _)| Retraction { subject })
        .collect()
}

/// What follows a retraction in its sentence, when it says something of its own: "forget
/// what I said about squashing, that's no longer true — we use merge commits now" leaves
/// "we use merge commits now".
fn after_retraction(s: &str) -> Option<&str> {
    let (_, end) = retraction_in(s)?;
    let mut rest = s[end..].trim_start();
    loop {
        let before = rest;
        rest = rest
            .trim_start_matches([',', ';', '—', '–', '-', ':', '，', '。', '、', ' '])
            .trim_start();
        for filler in [
            "that's no longer true",
            "that’s no longer true",
            "that is no longer true",
            "it's no longer true",
            "that changed",
            "that's outdated",
            "it's outdated",
            "that's not the case anymore",
            "please",
        ] {
            if rest
                .get(..filler.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(filler))
            {
                rest = &rest[filler.len()..];
            }
        }
        if rest == before {
            break;
        }
    }
    (rest.split_whitespace().count() >= 3 || (!rest.is_ascii() && rest.chars().count() >= 4))
        .then_some(rest)
}

/// Every memory statement in a prompt, in order. Traditional Chinese is read as Simplified
/// and kept as written.
pub fn candidates(prompt: &str) -> Vec<Candidate> {
    let Some(zh) = crate::t2s::simplified(prompt) else {
        return candidates_in(prompt);
    };
    candidates_in(&zh.text)
        .into_iter()
        .map(|c| Candidate {
            rule: zh.restore(&c.rule),
            why: c.why.map(|w| zh.restore(&w)),
            how: c.how.map(|h| zh.restore(&h)),
            ..c
        })
        .collect()
}

fn candidates_in(prompt: &str) -> Vec<Candidate> {
    let text = prose(prompt);
    let sents = sentences(&text);
    let mut out = Vec::new();
    let mut used = vec![false; sents.len()];
    let mut stripped: Vec<(&str, bool)> = sents.iter().map(|s| strip_markers(s)).collect();
    // A retraction is not a statement ([`retractions`] reads it); what follows it may be.
    if may_retract(&text) {
        for (s, _) in stripped.iter_mut() {
            if let Some(rest) = after_retraction(s) {
                *s = rest;
            } else if retraction_in(s).is_some() {
                *s = "";
            }
        }
    }
    let mut detected: Vec<Option<(Shape, &'static str)>> = Vec::with_capacity(sents.len());
    for (i, (s, corr)) in stripped.iter_mut().enumerate() {
        if is_question(s) || s.is_empty() {
            detected.push(None);
            continue;
        }
        let mut found = detect(s, *corr);
        // "Never use console.log in committed code, remove the ones in src/api/client.ts": a
        // rule with the task it asks for spliced on after a comma. The rule is kept, the task
        // (which names the thing at hand) is not.
        // Found whole, the task stays out when it names the thing at hand ("…, remove the
        // package-lock.json"); "…, and fix what it reports" is part of the rule.
        if (s.contains(", ") || s.contains("; "))
            && opens_like_a_rule(s)
            && has_any(&s.to_ascii_lowercase(), SPLICED_TASK_VERBS)
            && let Some(m) = EN_SPLICED_TASK.find(s)
            && (found.is_none()
                || EN_AT_HAND.is_match(&s[m.end()..])
                || EN_APPLY_NOW.is_match(&s[m.end()..])
                || ["revert", "undo", "redo"]
                    .iter()
                    .any(|v| m.as_str().to_ascii_lowercase().contains(v)))
        {
            let head = s[..m.start()].trim_end();
            // ("keep going, fix the rest": too short to be a rule.)
            if head.split_whitespace().count() >= 3
                && let Some(f) = detect(head, *corr)
            {
                found = Some(f);
                *s = head;
            }
        }
        // "no unwrap()/expect() in firmware/app": its "no" is not a correction's.
        if found.is_none()
            && sents[i]
                .get(..3)
                .is_some_and(|h| h.eq_ignore_ascii_case("no "))
            && EN_ONLY_OR_NO.is_match(sents[i])
            && !EN_CONVENTION_NOT.is_match(sents[i])
            && !EN_ONE_OFF.is_match(sents[i])
        {
            *s = sents[i];
            // "state mgmt is riverpod. no provider package, no bloc": a list of what is
            // ruled out says what it is about in the sentence before.
            found = Some(if s.to_lowercase().contains(", no ") && i > 0 {
                (Shape::Addendum, "convention")
            } else {
                (
                    Shape::Rule(s.to_string(), MemoryType::Feedback),
                    "convention",
                )
            });
        }
        // "fyi the BUILD files are generated — run gazelle instead of hand-editing them", "for
        // context the XL warehouse is only for the nightly refresh": context given in passing,
        // when it says how things always are.
        if found.is_none()
            && opens_with_an_aside(sents[i])
            && !crate::text::mostly_cjk(s)
            && EN_ASIDE.is_match(sents[i])
            && EN_STANDING_FACT.is_match(s)
            && !EN_ASIDE_NOT.is_match(s)
        {
            // "context in case it matters: …" is not part of the fact.
            let rest = EN_ASIDE
                .find(s)
                .map_or(*s, |m| s[m.end()..].trim_start_matches([':', ',', ' ']));
            if !rest.is_empty() {
                *s = rest;
            }
            found = Some((Shape::Rule(s.to_string(), MemoryType::Project), "aside"));
        }
        // "Also, unrelated but important: in this repo we use goose …", "还有一个通用的要求：
        // …": the statement after a short lead-in.
        if found.is_none()
            && may_have_lead_in(s)
            && let Some(tail) = after_lead_in(s)
            // ("day 10: downgrade to free plan, never delete data": a line of a spec.)
            && !s[..s.len() - tail.len()].chars().any(|c| c.is_ascii_digit())
        {
            let head = &s[..s.len() - tail.len()];
            let (tail, c) = strip_markers(tail);
            found = detect(tail, *corr || c);
            // "Quick rule for this repo: resource names are snake_case": the lead-in says it.
            if found.is_none()
                && RULE_LEAD_IN.is_match(head.trim_end().trim_end_matches([':', '：']).trim_end())
                && !is_question(tail)
            {
                found = Some((
                    Shape::Rule(tail.to_string(), MemoryType::Feedback),
                    "standing",
                ));
            }
            if found.is_some() {
                *s = tail;
            }
        }
        // "…, that's a hard rule for this repo", "…，这是硬性规定": the sentence says it.
        if found.is_none()
            && has_any(
                &s.to_lowercase(),
                &[
                    "rule",
                    "convention",
                    "policy",
                    "规定",
                    "规矩",
                    "规则",
                    "铁律",
                    "ルール",
                    "決まり",
                ],
            )
            && RULE_TAIL.is_match(s)
            && !EN_ONE_OFF.is_match(s)
        {
            found = Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "standing"));
        }
        detected.push(found);
    }
    for (i, det) in detected.iter().enumerate() {
        let Some((shape, trigger)) = det else {
            continue;
        };
        if used[i] {
            continue;
        }
        let (s, correction) = stripped[i];
        // The sentence before, when it states something this one points back at.
        let antecedent = (i > 0
            && !used[i - 1]
            && detected[i - 1].is_none()
            && !stripped[i - 1].0.is_empty()
            && !is_question(stripped[i - 1].0))
        // Without a lead-in of its own ("for the future: the UI thread owns …").
        .then(|| {
            let b = stripped[i - 1].0;
            after_lead_in(b)
                .filter(|t| t.contains(' ') || !t.is_ascii())
                .unwrap_or(b)
        });
        let mut how = None;
        let (raw_rule, fixed_type) = match shape {
            Shape::Explicit(c) => (c.clone(), None),
            // "…お願いします。今後ずっとこれで": from now on, what was just said; kept as that
            // sentence (or by it, when it is a memory of its own), never as "ずっとこれで".
            Shape::FromNowOn(c) if FROM_NOW_POINTS_BACK.is_match(c.trim()) => {
                let Some(before) = antecedent else {
                    continue;
                };
                used[i - 1] = true;
                (before.to_string(), None)
            }
            // "…最低支持版本是 API 26。以后都按 26 来。": a short CJK rule says what it is
            // about in the sentence before.
            // (Said in the same language: "Thanks. 以后总是用 pnpm。" is a rule of its own.)
            Shape::FromNowOn(c)
                if crate::text::mostly_cjk(c)
                    && c.chars().count() <= 12
                    && let Some(before) = antecedent.filter(|b| crate::text::mostly_cjk(b)) =>
            {
                used[i - 1] = true;
                (format!("{}{}", with_full_stop(before), c), None)
            }
            Shape::FromNowOn(c) => (c.clone(), None),
            Shape::Addendum => {
                let Some(before) = antecedent else {
                    continue;
                };
                used[i - 1] = true;
                (
                    format!("{} {}", with_full_stop(before), capitalize(s)),
                    Some(MemoryType::Feedback),
                )
            }
            Shape::Rule(c, t) => (c.clone(), Some(*t)),
            Shape::BackReference(occasion) => {
                let Some(before) = antecedent else {
                    continue;
                };
                used[i - 1] = true;
                if !occasion.is_empty() {
                    // "whenever you write Terraform" → "Keep in mind whenever you write
                    // Terraform."; "for every new route" → "Applies for every new route.".
                    let lead = if occasion.split_whitespace().next().is_some_and(|w| {
                        ["for", "to", "in", "on", "across"].contains(&w.to_lowercase().as_str())
                    }) {
                        "Applies"
                    } else {
                        "Keep in mind"
                    };
                    how = Some(sentence_case(&format!("{lead} {occasion}")));
                }
                // "That's the rule": what it points at is a rule, whatever it reads like.
                let rule_type = (*trigger == "standing").then_some(MemoryType::Feedback);
                (before.to_string(), rule_type)
            }
        };
        let (mut rule, mut why) = split_inline_why(&raw_rule);
        if rule.trim().is_empty() || transient(&rule) || only_a_secret(&rule) {
            continue;
        }
        // "I noticed you added a comment block above every function. Please don't do that.":
        // the rule is the sentence before; without one there is nothing to keep.
        let objects_to_before = rule.split_whitespace().count() <= 7
            && ["that", "this", "it", "again", "anymore"].iter().any(|w| {
                rule.trim_end_matches(['.', '!'])
                    .to_lowercase()
                    .ends_with(w)
            })
            && EN_BARE_PRONOUN_RULE.is_match(&rule);
        if objects_to_before {
            let Some(before) = antecedent else {
                continue;
            };
            rule = format!("{} {}", with_full_stop(before), capitalize(rule.trim()));
            used[i - 1] = true;
        }
        // "We have a service called ledger. Never deploy it on Fridays.": "it" needs the
        // sentence it stands for.
        // Within its first words: "moved it to SPI2" late in a sentence has its noun.
        let first_clause: String = rule
            .split([',', ';', '—', '–'])
            .next()
            .unwrap_or("")
            .split_whitespace()
            .take(5)
            .collect::<Vec<_>>()
            .join(" ");
        if !matches!(shape, Shape::BackReference(_))
            && !used.get(i.wrapping_sub(1)).copied().unwrap_or(true)
            // A pronoun that stands for something said before: "never deploy *it* on Fridays".
            && first_clause
                .split(|c: char| !c.is_alphanumeric() && c != '\'')
                .any(|w| {
                    ["it", "it's", "its", "they", "them", "they're"]
                        .contains(&w.to_lowercase().as_str())
                })
            && let Some(before) = antecedent
            && !is_instruction(before)
            && !ABOUT_USER.is_match(before)
            && !crate::text::mostly_cjk(before)
            && before.split_whitespace().count() <= 40
        {
            rule = format!("{} {}", with_full_stop(before), capitalize(rule.trim()));
            used[i - 1] = true;
        }
        // A bare "don't …" must read as a standing rule (an objection to what the agent did,
        // said right after it, is one).
        if *trigger == "dont" && !objects_to_before && !crate::text::mostly_cjk(s) {
            let has_reason = why.is_some()
                || sents.get(i + 1).is_some_and(|n| {
                    matches!(detected[i + 1], None | Some((_, "fact")))
                        && explains(n)
                        && bears_on(n, s)
                });
            let generated = EN_GENERATED.is_match(s);
            let general = correction
                || has_reason
                || generated
                || bans_a_kind_of_thing(s)
                || EN_GENERAL.is_match(s)
                || EN_INSTEAD.is_match(s);
            // ("Don't run the full suite anymore; just run the affected tests": the "just"
            // names the new practice, not a one-off.)
            let judged = match EN_JUST_INSTEAD.find(s) {
                Some(m) if EN_GIVEN_UP.is_match(&s[..m.start()]) => &s[..m.start()],
                _ => s,
            };
            // "don't use the --force flag on that migration", "… Promise.all there".
            if (EN_ONE_OFF.is_match(judged) && !generated)
                || !general
                || (deictic(s) && !EN_STANDING_SCOPE.is_match(s))
            {
                continue;
            }
        }
        if EN_ONE_OFF.is_match(&rule) && *trigger == "correction" {
            continue;
        }
        let mut next = i + 1;
        // "Dashboard: https://…" after a fact belongs to it (and makes it a reference).
        if let Some(n) = sents.get(next)
            && matches!(detected[next], None | Some((_, "pointer")))
            && n.contains("://")
            && LABELLED_LINK.is_match(n)
        {
            rule = format!("{} {}", with_full_stop(rule.trim()), n.trim());
            used[next] = true;
            next += 1;
        }
        let memory_type = match (shape, fixed_type) {
            (Shape::FromNowOn(_), _) => {
                if is_instruction(&rule) {
                    MemoryType::Feedback
                } else {
                    match classify_in(&rule) {
                        MemoryType::Project => MemoryType::Feedback,
                        t => t,
                    }
                }
            }
            (_, Some(t)) => t,
            (_, None) => classify_in(&rule),
        };
        // (A plain fact right after a rule that bears on it is its reason: "Don't bump wgpu.
        // We're pinned to 0.19 until the Metal regression is fixed.")
        if why.is_none()
            && let Some(n) = sents.get(next)
            && matches!(detected[next], None | Some((_, "fact")))
            && !used[next]
            && !instructs(n)
            && explains(n)
            && bears_on(n, &rule)
        {
            why = Some(sentence_case(without_marker(n)));
            used[next] = true;
            next += 1;
        }
        if let Some(n) = sents.get(next)
            && detected[next].is_none()
            && instructs(n)
        {
            how = Some(sentence_case(n));
            used[next] = true;
        }
        if why.is_none()
            && i > 0
            && stripped[i - 1].1
            && detected[i - 1].is_none()
            && !used[i - 1]
            && explains(stripped[i - 1].0)
        {
            why = Some(sentence_case(stripped[i - 1].0));
        }
        // A "memory" of pages ("remember that" before a pasted document) is a paste, not a
        // statement: nothing that long is kept. Nor a rule that says nothing ("Always be
        // careful.") or a statement whose point was a secret redaction took out ("The AWS key
        // is [REDACTED:…] with secret [REDACTED:…]").
        if rule.len() > MAX_RULE_BYTES
            || says_nothing(&rule)
            || little_but_secrets(&rule)
            || hands_over_a_secret(&rule)
        {
            continue;
        }
        let personal = matches!(memory_type, MemoryType::Feedback | MemoryType::User)
            && is_personal(&rule, how.as_deref(), sents[i], why.as_deref());
        out.push(Candidate {
            memory_type,
            rule: sentence_case(&rule),
            why,
            how,
            trigger,
            personal,
        });
        used[i] = true;
    }
    out
}

#[cfg(test)]
mod tests;
