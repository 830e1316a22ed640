//! Facts about the project and the person stated plainly, with no marker ("remember",
//! "always", "from now on"): who owns a part of the code, which files are generated or
//! overwritten, when the project freezes or deploys, which environment is reset on a
//! schedule, and the person's time zone, editor and shell. Each family is known by words
//! it cannot be said without, so a sentence without them costs a few substring searches;
//! the pattern of a family is compiled the first time a sentence has its words.

use super::*;

/// Ownership: "the `legacy/` folder is owned by the payments team", "the data team owns the
/// `analytics` schema", "the reviewer for anything under billing/ is priya", "the one who
/// knows the search indexer is tomasz".
static EN_OWNED: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)\b(?:is|are)\s+(?:owned|maintained|managed|run)\s+by\s+(?:the\s+)?(?:[\w.-]+\s+){0,3}?(?:team|squad|group|folks|people|org|sre|ops|devops|platform|infra)\b|\b(?:team|squad|group|folks|sre|ops|devops)\s+owns?\s+\S|\bthe\s+(?:reviewer|owner|maintainer|approver|code ?owner|go-to(?:\s+person)?|point of contact|contact person|person to ask|one who knows)\s+(?:for|of|on)\s+[^.?!]{1,60}?\s+is\s+[\w@]|\bthe\s+one\s+who\s+knows\s+[^.?!]{1,50}?\s+is\s+[\w@]|\b(?:belongs?\s+to|is\s+owned\s+by)\s+(?-i:[A-Z])\w+(?:\s+\w+){0,2}?(?:'s|’s)?\s+team\b|\bis\s+(?:who|the\s+person|the\s+one)\s+to\s+(?:ask|talk\s+to|ping)\s+(?:about|for|on)\b|\bis\s+(?:now\s+)?the\s+(?:new\s+)?(?:owner|maintainer|reviewer|lead|tech\s+lead|point\s+of\s+contact|contact|dri)\s+(?:for|of|on)\s+\S",
    )
});
const EN_OWNED_WORDS: &[&str] = &[
    "owned by",
    "maintained by",
    "managed by",
    "run by",
    " owns ",
    " own ",
    "reviewer for",
    "owner of",
    "owner for",
    "maintainer of",
    "maintainer for",
    "approver for",
    "go-to",
    "point of contact",
    "person to ask",
    "one who knows",
    "belongs to",
    "belong to",
    "to ask",
    "lead for",
    "lead of",
    "contact for",
];

/// A person who owns something: "Priya Raman owns the wasm host ABI", "Marco handles App Store
/// Connect and the signing certs".
static EN_PERSON_OWNS: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"^(?:(?i:fyi|btw|note)[,:]?\s+)?(?:[A-Z][a-z]+(?:\s+[A-Z][a-z]+)?|@[a-z][\w.-]+)\s+(?:(?:owns|handles|maintains|manages|runs|approves)\s+(?:the\s+|all\s+|our\s+)?\S|reviews\s+(?:anything|every|all|everything|each|any)\b|reviews\s+[^.;]{1,60}?\bnow\b)",
    )
});
const EN_PERSON_OWNS_WORDS: &[&str] = &[
    " reviews ",
    " owns ",
    " handles ",
    " maintains ",
    " manages ",
    " runs ",
    " approves ",
];

/// Whether a sentence opens with a capitalised word, after an "fyi", "btw" or "note".
fn opens_with_a_name(s: &str) -> bool {
    let mut words = s.split_whitespace();
    let mut w = words.next().unwrap_or("");
    if ["fyi", "btw", "note"].contains(&w.trim_end_matches([',', ':']).to_lowercase().as_str()) {
        w = words.next().unwrap_or("");
    }
    w.starts_with(|c: char| c.is_ascii_uppercase() || c == '@')
}

/// A pattern of English words compiled with ASCII word classes and boundaries: the Unicode
/// tables make a pattern many times slower to compile, and the Stop hook compiles in a fresh
/// process.
fn ascii_re(p: &str) -> Regex {
    re(&p.replace(r"\w", "[0-9A-Za-z_]").replace(r"\b", r"(?-u:\b)"))
}

/// Generated and overwritten files: "k8s manifests are generated from `deploy/jsonnet`",
/// "hand edits in `deploy/generated/` get wiped", "the `locales/*.json` files get overwritten
/// nightly by the sync job".
static EN_GENERATED: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)\b(?:is|are)\s+(?:auto-?)?generated\s+(?:from|by|out of)\b|\b(?:is|are)\s+(?:(?:just|only)\s+)?(?:build\s+output|a\s+build\s+artifact|build\s+artifacts)\b|\b(?:gets?|are|is)\s+(?:wiped|overwritten|regenerated|clobbered|blown away|replaced)\s+(?:by|on|every|each|nightly|daily|weekly|whenever|when(?:ever)?|at)\b|\bhand[- ]edits?\b[^.?!]*\b(?:get|are|is)\s+(?:wiped|lost|overwritten|reverted)\b",
    )
});
const EN_GENERATED_WORDS: &[&str] = &[
    "generated",
    "build output",
    "build artifact",
    "wiped",
    "overwritten",
    "regenerated",
    "clobbered",
    "blown away",
];

/// When the project freezes or ships: "code freeze for the mobile release starts march
/// 14th", "we deploy on tuesdays and thursdays only", "no friday deploys", "deploys go out
/// through argo".
static EN_SCHEDULE: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)\b(?:code|release|merge|deploy(?:ment)?|feature|change)\s+freeze\s+(?:starts|begins|is|runs|from|until|lasts|for|on)\b|\bwe\s+(?:only\s+)?(?:deploy|release|ship)\s+(?:to\s+\w+\s+)?(?:on\s+)?(?:mondays|tuesdays|wednesdays|thursdays|fridays|weekdays|every\s+\w+)\b|\bno\s+(?:friday|weekend|late)\s+(?:deploys|deployments|releases|merges)\b|\b(?:deploys?|deployments?|releases?|builds?)\b(?:\s+[^\s.;]+){0,5}?\s+(?:now\s+)?(?:go(?:es)?\s+out|go(?:es)?\s+through|happen|run|ship)\s+(?:through|via|with|every|on|to)?\b|\bwe\s+deploy\s+[^\s.;]+(?:\s+[^\s.;]+)?\s+(?:with|via|through|using)\s+\S",
    )
});
const EN_SCHEDULE_WORDS: &[&str] = &[
    "builds go",
    "builds now",
    "build goes",
    "go out",
    "goes out",
    "freeze",
    "deploys",
    "deployments",
    "releases",
    "we deploy",
    "we release",
    "we ship",
    "we only",
    "no friday",
    "no weekend",
    "no late",
];

/// An environment reset on a schedule: "the staging db is restored from a prod snapshot
/// every night", "test redis is flushed every sunday".
static EN_RESET: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)\b(?:is|are|gets?)\s+(?:wiped|reset|restored|cleared|refreshed|rebuilt|flushed|recreated|truncated)\b[^.?!]{0,60}?\b(?:every|each|nightly|daily|weekly|hourly|on\s+(?:mondays|tuesdays|wednesdays|thursdays|fridays|saturdays|sundays|weekends))\b|\b(?:is|are|gets?)\s+backed\s+up\s+(?:every|each|nightly|daily|hourly|weekly|to)\b",
    )
});
const EN_RESET_WORDS: &[&str] = &[
    "backed up",
    "wiped",
    "reset",
    "restored",
    "cleared",
    "refreshed",
    "rebuilt",
    "flushed",
    "recreated",
    "truncated",
];

/// A version something is held at: "the worker stays on Python 3.10 because of a numba pin",
/// "we're pinned to node 18".
static EN_PINNED: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)\b(?:stays?|staying|remains?|is\s+stuck|are\s+stuck|(?:is|are|we're|we\s+are)\s+(?:pinned|locked))\s+(?:on|at|to)\s+(?:[\w.+-]+\s+){0,2}?v?\d+(?:\.\d+)*\b|^(?:we\s+)?pin\s+[\w.+-]+(?:\s+[\w.+-]+)?\s+(?:to|at|on)\s+v?\d+(?:\.\d+)*\b",
    )
});
const EN_PINNED_WORDS: &[&str] = &["stay", "remain", "stuck", "pin", "locked"];

/// "I moved to Berlin last month": where the person lives now.
static EN_MOVED_TO: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"^(?i:i(?:'ve| have)?\s+(?:just\s+|recently\s+)?(?:moved|relocated)\s+to)\s+[A-Z][a-z]+",
    )
});

/// A change told by what replaced what: "we replaced Flipper with Reactotron in the fitness
/// app", "the feature store repo standardized on uv".
static EN_REPLACED: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)^(?:(?:fyi|btw|note|also|ok|so)[,:]?\s+)*(?:we|the\s+team|the\s+[\w\s`.-]{1,30}?|our\s+[\w\s`.-]{1,30}?)(?:\s+have|\s+has|'ve|’ve)?\s+(?:recently\s+|finally\s+|just\s+|now\s+)?(?:replaced\s+\S.{0,60}?\s+with\s+\S|standardi[sz]ed\s+on\s+\S|settled\s+on\s+\S|consolidated\s+on\s+\S)|\b(?:got|was|were|has\s+been|have\s+been)\s+renamed\s+(?:from\s+)?\S+\s+to\s+\S|\b(?:got|was|were|has\s+been|have\s+been)\s+replaced\s+by\s+\S|\b(?:dropped|ditched|removed)\s+\S+[^.;]{0,40}?\bwe\s+use\s+\S+(?:\s+\S+)?\s+now\b",
    )
});
const EN_REPLACED_WORDS: &[&str] = &[
    "replaced",
    "standardi",
    "settled on",
    "consolidated on",
    "renamed",
    "we use",
];

/// What the person means by a word: "when i say 'the gateway' i mean `paygate-api`".
static EN_I_MEAN: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r#"(?i)^(?:and\s+)?(?:when|whenever|if)\s+i\s+say\s+["'`“‘][^"'`”’]{1,40}["'`”’],?\s+i\s+(?:mean|always mean|am talking about)\b"#,
    )
});

/// About the person: "my timezone is CET", "i use neovim", "I'm on fish".
static EN_PERSON_SETUP: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)^(?:my\s+(?:time\s?zone|tz|os|editor|ide|shell|terminal|keyboard layout|machine|laptop|setup)\s+is\s+\S|(?:i(?:'m|’m| am)?|im)\s+(?:use|using|on|live in|work in)\s+(?:(?:a|an|the)\s+)?(?:neovim|nvim|vim|emacs|vs ?code|vscode|helix|zed|intellij|pycharm|goland|webstorm|rider|xcode|fish|zsh|bash|nushell|tmux|wezterm|kitty|iterm2?|windows|wsl2?|arch|ubuntu|fedora|nixos|macos)\b|i(?:'m|’m| am)\s+(?:in|on)\s+(?:utc|gmt)(?:[+-]\d{1,2})?\b|i(?:'m|’m| am)?\s+(?:based\s+)?in\s+(?-i:[A-Z][a-z]+)[,.]?\s+(?-i:[A-Z]{3,4})\b|i(?:'m|’m| am)\s+(?:[\w-]+\s+)?colou?r\s?blind|i(?:'m|’m| am)\s+(?:more|mostly|mainly|primarily|really)\s+(?:of\s+)?(?:a\s+|an\s+)?[\w/-]+(?:\s+[\w/-]+)?\s+(?:than|person|engineer|dev|developer|scientist|analyst|designer)\b)",
    )
});

/// How the person wants the agent to work, said bluntly: "be more terse", "no more recap
/// paragraphs at the end of each reply", "please stop asking me before running the test
/// suite".
static EN_STYLE: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)^(?:please\s+|pls\s+|and\s+|i'd like you to\s+|i’d like you to\s+|i want you to\s+|can you\s+|could you\s+)?(?:be\s+(?:more\s+|less\s+|way\s+more\s+|a\s+lot\s+more\s+)?(?:terse|concise|brief|succinct|verbose|direct|wordy)\b|stop\s+(?:asking\s+(?:me\s+)?(?:before|for\s+(?:permission|confirmation)|whether|if)\b|(?:adding|writing|ending|starting|opening|putting)\s+(?:\w+\s+){0,3}?(?:recaps?|summar(?:y|ies)|apologies|disclaimers|emojis?|preambles?|caveats)\b|apologi[sz]ing|summari[sz]ing\s+(?:at the end|every|each))|no\s+more\s+(?:\w+\s+){0,2}?(?:recaps?|summar(?:y|ies)|apologies|disclaimers|emojis?|preambles?|caveats|paragraphs?)\b)",
    )
});
const EN_STYLE_WORDS: &[&str] = &[
    "be more",
    "be less",
    "be terse",
    "be concise",
    "be brief",
    "be succinct",
    "be direct",
    "be way",
    "be a lot",
    "no more",
    "stop asking",
    "stop adding",
    "stop writing",
    "stop ending",
    "stop starting",
    "stop opening",
    "stop putting",
    "stop apolog",
    "stop summar",
];

/// Conventions stated as how the project is: "the monorepo uses nx", "timestamps in the db
/// are stored as utc", "all new services should be written in kotlin now".
static EN_PROJECT_WAY: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)\b(?:is|are)\s+(?:always\s+)?stored\s+as\s+\S|^(?:all|any)\s+new\s+[\w-]+(?:\s+[\w-]+)?\s+(?:should|must|have to|need to|are to|go|goes)\b|\b(?:are|is)\s+(?:always\s+)?(?:named|prefixed|suffixed|scoped|namespaced|versioned)\s+(?:as\s+|like\s+|with\s+|by\s+|after\s+|using\s+)?[`<'\w]|\b(?:pinned|locked)\s+(?:in|via)\s+`?[\w./-]+\.(?:toml|json|ya?ml|txt|lock|cfg|nvmrc)\b",
    )
});
const EN_PROJECT_WAY_WORDS: &[&str] = &[
    " named ",
    "prefixed",
    "suffixed",
    " scoped ",
    "namespaced",
    "versioned",
    "pinned in",
    "locked in",
    "stored as",
    "all new ",
    "any new ",
];

/// Where something is kept or how it goes: "Feature flags live in LaunchDarkly", "release notes
/// are managed in the fastlane/metadata folder", "strings must go through strings.xml", "Image
/// loading uses Glide in this app".
static EN_KEPT_IN: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)^(?:(?:fyi|btw|note|also)[,:]?\s+)?(?:the\s+|our\s+|all\s+)?[\w`/.-]+(?:\s+[\w`/.-]+){0,4}?\s+(?:live|lives|are\s+kept|is\s+kept|are\s+managed|is\s+managed|are\s+tracked|is\s+tracked)\s+in\s+\S|\b(?:must|should|have\s+to|has\s+to)\s+(?:always\s+)?go\s+through\s+\S|\buses\s+[\w`.-]+(?:\s+[\w`.-]+)?\s+in\s+(?:this|our)\s+(?:app|repo|project|codebase|service|monorepo)\b",
    )
});
const EN_KEPT_IN_WORDS: &[&str] = &[
    " live in ",
    " lives in ",
    "kept in ",
    "managed in ",
    "tracked in ",
    "go through ",
    "in this app",
    "in this repo",
    "in our app",
    "in our repo",
];

/// "the monorepo uses nx", "our backend is written in kotlin".
static EN_PROJECT_USES: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)^(?:the|our)\s+(?:(?:[\w.-]+\s+){0,2}?)(?:monorepo|repo|repository|project|codebase|backend|frontend|api|app|apps|service|services|team|stack|build|ci|pipeline)\s+(?:now\s+)?(?:uses|runs on|is built (?:on|with)|is written in)\s+\S|^(?:the|our)\s+(?:(?:[\w.-]+\s+){0,2}?)(?:tests|specs|e2e|suites?|docs|migrations|workers|jobs|scripts|containers|images|lambdas|functions)\s+(?:now\s+)?(?:use|run on|are written in|are built with|run with)\s+\S",
    )
});
const EN_PROJECT_USES_WORDS: &[&str] = &[
    " uses ",
    " use ",
    " runs on ",
    " run on ",
    " run with ",
    " built ",
    " written in ",
];

/// A permission given back: "deploying on Fridays is fine now", "using moment is allowed
/// again". What it allows is an action (a gerund), so "the build is fine now" or "everything
/// is fine now" (reports) are not one.
static EN_PERMISSION: LazyLock<Regex> = LazyLock::new(|| {
    ascii_re(
        r"(?i)^[a-z]+ing\s+\S[^.?!;]{0,60}?\s+(?:is|are)\s+(?:fine|ok|okay|allowed|permitted|acceptable)\s+(?:now|again)\b|^(?:you\s+can|you\s+may|feel\s+free\s+to)\s+(?:use|run|call|add|import|deploy|push|merge|touch|edit)\s+\S[^.?!;]{0,60}?\s+again\b|^[\w.-]+\s+(?:is|are)\s+(?:allowed|permitted)\s+(?:now|again)\b|^[\w.-]+\s+(?:is|are)\s+(?:fine|ok|okay)\s+(?:to\s+use\s+)?(?:now|again)\s+(?:in|for|across)\s+\S",
    )
});

/// A named service in a role of the project: "Sentry is our error tracker", "our CI is
/// Buildkite", "we deploy to Vercel", "errors go to Sentry".
static EN_SERVICE_ROLE: LazyLock<Regex> = LazyLock::new(|| {
    let roles = "data warehouse|warehouse|data lake|orchestrator|scheduler|event bus|message queue|error tracker|error tracking|bug tracker|issue tracker|ci|ci provider|ci system|package manager|test runner|orm|database|db|monitoring|apm|logging|log store|log aggregator|feature flag service|feature flag tool|cdn|host|hosting|hosting provider|cloud|cloud provider|registry|container registry|secrets? manager|secrets? store|queue|message broker|cache|search engine|auth provider|identity provider|build tool|bundler|linter|formatter|deploy target|analytics|email provider|payment provider|status page|paging|on-call tool|alerting";
    ascii_re(&format!(
        r"(?i)^(?-i:[A-Z])[\w.-]*(?:\s+(?-i:[A-Z])[\w.-]*)?\s+is\s+(?:our|the\s+project's|this\s+repo's)\s+(?:main\s+|primary\s+|only\s+)?(?:{roles})\b|^our\s+(?:main\s+|primary\s+)?(?:{roles})\s+is\s+(?-i:[A-Z])[\w.-]+|^we\s+(?:deploy|host|ship)\s+(?:(?:the\s+)?[\w-]+\s+){{0,2}}?(?:to|on)\s+(?-i:[A-Z])[\w.-]+|^(?:all\s+)?(?:errors|exceptions|logs|metrics|traces|alerts|crash(?:es| reports))\s+(?:go|are sent|get sent|are shipped|end up|are reported)\s+(?:to|in)\s+(?-i:[A-Z])[\w.-]+"
    ))
});
/// Whether [`EN_SERVICE_ROLE`] can match (it is compiled only then).
fn may_name_a_service_role(lower: &str) -> bool {
    lower.contains(" is our ")
        || lower.contains(" is the project's ")
        || lower.contains(" is this repo's ")
        || (lower.starts_with("our ") && lower.contains(" is "))
        || ["we deploy ", "we host ", "we ship "]
            .iter()
            .any(|p| lower.starts_with(p))
        || ([
            "errors ",
            "all errors ",
            "exceptions ",
            "logs ",
            "all logs ",
            "metrics ",
            "traces ",
            "alerts ",
            "crash",
        ]
        .iter()
        .any(|p| lower.starts_with(p))
            && [" go ", " sent ", " shipped ", " end up ", " reported "]
                .iter()
                .any(|v| lower.contains(v)))
}

/// Facts said in Japanese or Chinese without a marker: ownership ("SREチームの管轄",
/// "归支付组管", "负责人"), freezes ("リリースフリーズ", "封版"), environments reset on a
/// schedule ("毎晩…リストア", "每周日…清空"), tests against a real database
/// ("モックじゃなくて…本物の", "不要 mock 数据库"), and the person's machine and background
/// ("Macでzsh使ってます", "フロント出身").
static CJK_FACT: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:の管轄|が管轄|归[^，。、]{1,16}?管|由[^，。、]{1,16}?(?:负责|维护|管理)|负责人(?:是|为)?|担当(?:チーム|者)?は\S|(?:さん|チーム)が(?:全部|すべて|全て)?(?:管理|担当|見て)(?:してます|しています|してる|います|ます))|(?:リリース|コード|マージ)?フリーズ(?:です|します|になります|期間|中は|の間)|封版(?:期间|以后|之后|前|后)?|(?:毎晩|毎朝|毎日|毎週\S{0,3}|夜間)[^。]{0,40}?(?:リストア|リセット|消え|クリア|初期化|作り直|上書き)|(?:每周\S{0,3}|每天|每晚|每日|每个?月)[^。]{0,30}?(?:清空|重置|恢复|还原|刷新|覆盖|重建)|(?:モック(?:じゃ|では)なく|mockじゃなく|不要\s*mock|不\s*mock|别\s*mock)[^。]{0,40}?(?:本物|実DB|真实|真的|实际)|(?:本物|真实)的?\s*(?:の)?\s*(?:DB|MySQL|Postgres|PostgreSQL|数据库|データベース|Redis)|^(?:自分|私|僕|俺)?(?:は)?(?:Mac|Windows|Linux|WSL)[^。、]{0,15}?使って(?:ます|います|る|い)|出身で|我(?:用的是|用|在用)\s*(?:Mac|Windows|Linux|WSL)|我(?:用的)?(?:编辑器|终端|shell|IDE)(?:是|用)|(?:リリース|デプロイ)[^。]{0,20}?毎週|毎週[^。]{0,6}曜日?[^。]{0,20}?(?:リリース|デプロイ)|每周[一二三四五六日天][^。]{0,12}?(?:发版|发布|上线|部署)|に固定(?:しています|してます|してる|です|しました)",
    )
});
const CJK_FACT_WORDS: &[&str] = &[
    "编辑器",
    "终端",
    "固定",
    "管轄",
    "管",
    "负责",
    "维护",
    "担当",
    "フリーズ",
    "封版",
    "毎",
    "夜間",
    "每",
    "本物",
    "真实",
    "Mac",
    "Windows",
    "Linux",
    "WSL",
    "出身",
];

/// Whether a sentence states a fact of one of these families, and of which type.
pub(super) fn plain_fact(s: &str, lower: &str) -> Option<(Shape, &'static str)> {
    if is_question(s) || lower.starts_with("if ") || lower.contains("what if") {
        return None;
    }
    let fact = |t: MemoryType| Some((Shape::Rule(s.to_string(), t), "fact"));
    if !s.chars().any(crate::text::is_cjk) {
        let lead = lead_word(s);
        if lower.contains(" mean") && EN_I_MEAN.is_match(s) {
            return fact(MemoryType::Feedback);
        }
        if matches!(lead.as_str(), "my" | "i" | "i'm" | "i’m" | "im" | "i've")
            && (EN_PERSON_SETUP.is_match(s)
                || (has_any(lower, &["moved to", "relocated to"]) && EN_MOVED_TO.is_match(s)))
        {
            return fact(MemoryType::User);
        }
        if has_any(lower, EN_REPLACED_WORDS)
            && !has_any(lower, TROUBLE_WORDS)
            && !has_any(
                lower,
                &["for now", "this time", "in this pr", "in this branch"],
            )
            && EN_REPLACED.is_match(s)
        {
            return fact(MemoryType::Project);
        }
        if has_any(lower, EN_PINNED_WORDS) && EN_PINNED.is_match(s) {
            return fact(MemoryType::Project);
        }
        if has_any(lower, EN_PROJECT_WAY_WORDS) && EN_PROJECT_WAY.is_match(s) {
            return fact(MemoryType::Project);
        }
        if (lower.starts_with("the ") || lower.starts_with("our "))
            && has_any(lower, EN_PROJECT_USES_WORDS)
            && EN_PROJECT_USES.is_match(s)
        {
            return fact(MemoryType::Project);
        }
        if has_any(lower, EN_KEPT_IN_WORDS)
            && !has_any(lower, TROUBLE_WORDS)
            && !has_any(lower, &["problem", "can you", "could you", "please"])
            && EN_KEPT_IN.is_match(s)
        {
            // ("The data dictionary lives in Notion: https://…" is a pointer.)
            return fact(if has_pointer(s) || has_any(lower, KNOWN_TOOLS) {
                MemoryType::Reference
            } else {
                MemoryType::Project
            });
        }
        if has_any(lower, EN_OWNED_WORDS) && EN_OWNED.is_match(s) {
            return fact(MemoryType::Project);
        }
        if opens_with_a_name(s)
            && has_any(lower, EN_PERSON_OWNS_WORDS)
            && EN_PERSON_OWNS.is_match(s)
        {
            return fact(MemoryType::Project);
        }
        if has_any(lower, EN_GENERATED_WORDS) && EN_GENERATED.is_match(s) {
            return fact(MemoryType::Project);
        }
        if has_any(lower, EN_SCHEDULE_WORDS) && EN_SCHEDULE.is_match(s) {
            return fact(MemoryType::Project);
        }
        if has_any(lower, EN_RESET_WORDS) && EN_RESET.is_match(s) {
            return fact(MemoryType::Project);
        }
        // (Of a thing, not an action: "pandas is fine now in the pipeline code" allows it;
        // "the build is fine now", "CI is ok again" report.)
        let reported = [
            "it",
            "this",
            "that",
            "ci",
            "build",
            "builds",
            "site",
            "app",
            "api",
            "server",
            "prod",
            "staging",
            "test",
            "tests",
            "deploy",
            "login",
            "page",
            "db",
            "database",
            "everything",
            "nothing",
            "all",
            "the",
            "which",
            "what",
        ];
        if (lower.contains(" now") || lower.contains(" again"))
            && (lead.ends_with("ing") || !reported.contains(&lead.as_str()))
            && ![
                "nothing",
                "everything",
                "something",
                "anything",
                "thing",
                "string",
                "morning",
                "evening",
                "ping",
                "building",
            ]
            .contains(&lead.as_str())
            && EN_PERMISSION.is_match(s)
        {
            return fact(MemoryType::Feedback);
        }
        // (Not the trouble words: "errors go to Sentry" names errors as what is sent.)
        if may_name_a_service_role(lower)
            && !has_any(
                lower,
                &[
                    "for now",
                    "this time",
                    "today",
                    "can you",
                    "could you",
                    "broken",
                    " down",
                    "failing",
                    "fails",
                    "flaky",
                    "outage",
                    "not working",
                    "but ",
                ],
            )
            && EN_SERVICE_ROLE.is_match(s)
        {
            return fact(MemoryType::Project);
        }
        return None;
    }
    if s.contains(['？', '?']) || !CJK_FACT_WORDS.iter().any(|w| s.contains(w)) {
        return None;
    }
    if CJK_FACT.is_match(s) {
        let person = ["Mac", "Windows", "Linux", "WSL", "出身", "编辑器", "终端"]
            .iter()
            .any(|w| s.contains(w))
            && !["管轄", "负责", "封版", "フリーズ", "本物", "真实"]
                .iter()
                .any(|w| s.contains(w));
        return fact(if person {
            MemoryType::User
        } else {
            MemoryType::Project
        });
    }
    None
}

/// A blunt wish about how the agent works ("be more terse", "no more recaps", "stop asking
/// me before running the tests"), looked for before the general shapes, which read "stop
/// asking …" as a one-off "don't". (`correction`: the sentence opened with a correction's
/// "no", which is stripped: "no more recaps" arrives as "more recaps".)
pub(super) fn blunt_wish(s: &str, lower: &str, correction: bool) -> Option<(Shape, &'static str)> {
    if is_question(s) || s.chars().any(crate::text::is_cjk) {
        return None;
    }
    let no_more = correction && lower.starts_with("more ");
    if no_more {
        // The "no" is the rule: "no more recaps" must never be kept as "more recaps".
        let whole = format!("No {s}");
        if EN_STYLE.is_match(&whole) {
            return Some((Shape::Rule(whole, MemoryType::Feedback), "fact"));
        }
        return None;
    }
    if has_any(lower, EN_STYLE_WORDS) && EN_STYLE.is_match(s) {
        return Some((Shape::Rule(s.to_string(), MemoryType::Feedback), "fact"));
    }
    None
}
