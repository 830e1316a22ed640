//! Secret redaction for everything cairn writes.
//!
//! This crate owns one job: recognising secrets (API keys, tokens, private
//! keys, passwords in URLs and in `key = value` assignments) inside free text
//! and masking them with a marker such as `[REDACTED:aws-access-key]`, keeping
//! the surrounding text intact so a sentence or a command keeps its meaning.
//! Every writer (transcript ingest, digests, memo files, memories, logs, LLM
//! prompts) funnels text through [`redact`] so cairn's data dir never holds a
//! raw secret. [`SeenSecrets`] follows the values found in one transcript, so
//! that a later copy with no context naming it is masked too. The crate must
//! not do I/O, must never log or otherwise expose the secret values it finds
//! (only [`Kind`]s, counts and [`SeenSecrets::tags`] leave it), and must not
//! allocate on clean text.
//!
//! # Cost
//!
//! Every detector has trigger literals, one of which occurs in every match
//! (`sk-`, `AKIA`, `://`, `key`/`Key`/`KEY`, `oken`/`OKEN` for `token`, ...).
//! All of them form one literal set, compiled once per process
//! ([`LazyLock`]) and searched with SIMD: text without a trigger costs a
//! single scan and comes back as [`Cow::Borrowed`] without allocating.
//! Otherwise the triggers found select the few detectors that can match, and
//! only those run; a detector's own regex is compiled the first time it is
//! selected (compiling all of them up front cost every redacting process
//! about 5 ms).
//!
//! The SIMD search has a budget: the regex crate cuts a large literal set to
//! 5-byte prefixes and leaves SIMD for a several times slower automaton when
//! more than 64 distinct ones remain. A new trigger must therefore share a
//! prefix with an existing one, reuse one (OpenRouter's `sk-or-v1-` is found
//! through `sk-`; `pat_` finds `github_pat_`, `dckr_pat_` and `shpat_`), or
//! buy its slot by merging others (`oken` stands for `token` and `Token`,
//! `hv` for Vault's `hvs.` and `hvb.`, `密` for `密码` and `密碼`; Discord's
//! `hooks/` shares its prefix with Slack's `hooks.slack.com`); a test counts
//! the prefixes. A merged trigger fires more often (`密` is in `秘密`), so a
//! selected detector that finds nothing costs one more scan of the text, never
//! an allocation.
//!
//! The SIMD search (Teddy) deals the literals out to 8 or 16 buckets in turn
//! and stops wherever two bytes of text fit, half-byte by half-byte, the first
//! two bytes (the shortest literals, `pw` and `gh`, have two) of some literal
//! of a bucket, to check that bucket's literals. Which literals share a bucket,
//! and so how often ordinary text stops the search for nothing, changes with
//! every literal added or moved: the scans, not the rules run after them, are
//! what a trigger costs. Adding the triggers of the prose rule's codes (rule
//! 6: `PIN` in upper case only, `ecovery cod` with its `Cod` and `_cod` forms
//! in one prefix, `kup cod`; `passcode` is found through `pass`) cost the
//! redactor a quarter more instructions on the synthetic home of BENCHMARKS.md
//! until literals of equal length were ordered the other way
//! (`literal_alternation`), which made it cheaper than before them; `ackup cod`
//! with its forms cost more than `kup cod`. A trigger change is measured the
//! same way.
//!
//! # Detected kinds
//!
//! See [`Kind`] for the full list. Provider tokens are recognised by their
//! fixed prefixes (`sk-ant-`, `sk-proj-`, `sk-or-v1-`, `AKIA`, `ghp_`,
//! `glpat-`, `xoxb-`, `AIza`, `sk_live_`, `dop_v1_`, `hvs.`, `dckr_pat_`,
//! `shpat_`, `gsk_`, `xai-`, `dapi`, ...) and Telegram bot tokens by their
//! `<bot id>:AA` shape; private key blocks by their PEM armour (also when the `END` line is
//! missing); URL credentials by `scheme://user:pass@host` (only the password
//! is replaced); `Authorization: Bearer|Basic` headers; passwords given to
//! command-line tools (`mysql -u root -pS3cret`, `sshpass -p`, `docker login
//! -p`, a `.netrc` entry, `aws configure set aws_secret_access_key …`: only
//! values with two character classes, so `-p 8080:80` stays); passwords,
//! tokens and keys stated in prose (below).
//!
//! # Assignment rule
//!
//! `key = value`, `key: value`, `"key": "value"`, `export KEY=value`,
//! `key := value`, `key => value` and `--key value` / `--key=value` have
//! their *value* replaced (the key name is kept) when:
//!
//! 1. the key name, split into words (`_`, `-`, `.`, camelCase), has a
//!    sensitive word — `password`, `passwd`, `pwd`, `passphrase`, `passcode`,
//!    `pass`, `secret`, `token`, `auth`, `authorization`, `credential(s)`, or
//!    `key` preceded by `api`, `access`, `private`, `secret`, `signing`,
//!    `encryption`, `master`, `app`, `auth`, `account`, `shared`,
//!    `subscription`, `storage` (also glued: `apikey`, `PGPASSWORD`) — and
//!    every word after it is a harmless suffix such as `key`, `value`,
//!    `base`, `b64`, `confirmation`, or a number. So `max_tokens`,
//!    `token_count`, `tokenizer`, `password_reset_url`, `secret_name` and
//!    `author` are never sensitive;
//! 2. the value is not empty, not a number (unless it is a password of 6+
//!    digits or any 16+ digit string), not a boolean/null/type keyword, not a
//!    placeholder or variable reference (`$VAR`, `${VAR}`, `%s`, `<your-token>`,
//!    `{{ x }}`, `xxxx`, `****`, `changeme`, `your_api_key`, an
//!    `UPPER_SNAKE` name), not a plain path or URL, and not already a marker;
//! 3. unquoted values must additionally not look like code (`self.token`,
//!    `access_token`, `String`, `get_token()`, `Option<String>`);
//! 4. the value is at least 8 characters long, or 4 for password keys
//!    (unquoted password values shorter than 8 must contain a non-letter).
//!
//! An unquoted value stops at `&` (a URL query's next parameter) unless the
//! whole word also passes the prose rule below (`PASSWORD=Tr0ub4dor&3horse`).
//!
//! # Prose rule
//!
//! Agents and users also state secrets in sentences. At the same sensitive
//! words (also `API key`, `access key` written apart; `login`, `creds` for
//! the pair rule; any `key` for rule 5; `PIN`, `passcode`, `recovery code(s)`
//! and `backup code(s)` for rule 6):
//!
//! 1. *word, copula, value*: the sensitive word, an optional qualifier
//!    starting with a preposition (`password for this project`), then `is`,
//!    `was`, `are`, `is set to`, `should be`, `changed to`, `to`, `→`, `->`
//!    (or `:` / `=` when the assignment rule did not already judge the key),
//!    then one value: `the staging db password is Tr0ub4dor&3horse` →
//!    `the staging db password is [REDACTED:password]`. Quoted values
//!    (`"..."`, `'...'`, backticks, JSON-escaped `\"...\"`) are taken
//!    whole; a `"` or backtick counts as opening only when an even number of
//!    them precede the sentence on its line (`"password is " + pw` is code).
//!    For passwords, a passphrase of three to six plain words after the
//!    copula, a colon, `=` or an arrow counts too (`password is correct horse battery
//!    staple`, `staging password: tangerine-sunset-river`), unless a word of
//!    it belongs to a sentence about the password (`is rotated every month`,
//!    `: ask the team lead`, `end-to-end`).
//! 2. *word, quoted string* for passwords: `use password "correct horse"`.
//! 3. *login pair*: `login`/`credentials` + copula + `user / pass`,
//!    `user/pass` or `user:pass`; only the password goes, and it must hold a
//!    non-letter or mixed case (`login is admin / admin` stays).
//! 4. *32 hex digits* (Twilio auth tokens, generic API keys) within the same
//!    clause (8 words, up to `,` `;` `.` or a line break) after the word:
//!    `twilio auth token 4f9c...`. A bare `key` counts only after a
//!    determiner (`the key`) or at a line start, not in `cache key`. Git
//!    SHAs (40) and SHA-256 digests (64) never match, nor does hex with no
//!    sensitive word before it.
//! 5. *any key, copula, random value*: whatever word names a key (`the vault
//!    unseal key is qZ8vLmN3…`, `the recovery key:`, `Key:` at a line start),
//!    a copula as in rule 1 and a value that is strongly random: 16+
//!    characters of letters and digits (base64's `+/_-=` allowed), upper case,
//!    lower case and digits, and under 60% of its letters in pieces that read
//!    like words. So `the cache key is userId`, `the primary key is
//!    customer_id`, `the sort key is created_at`, `the partition key is
//!    TenantId2024Region`, `the key is to be patient` and `the key is in the
//!    drawer` stay.
//! 6. *code word, copula, codes*: `PIN` (the upper-case acronym only:
//!    `pin`, `LED_PIN`), `passcode`, `recovery code(s)` (also `Recovery
//!    Codes`, `recovery_code`), `backup code(s)` (with `code` in lower case),
//!    a copula or `:` (`PIN code is`, `PIN number:` too), then a code or a
//!    list of codes joined by blanks, `,`, `and`, `or`, each masked on its
//!    own: 4 to 16 digits, or two or more groups of 3 to 8 letters and digits
//!    joined by dashes, 8+ characters, half the groups with a digit and none
//!    a lower-case word (`4471-9920-1183`, `8FJ2-KQ9X-PL3M-77TZ`,
//!    `5a2b1-c3d4e`; `6-digit`, `2048-bit`, `AES-256` stay); a PIN is digits
//!    only (`the LED PIN is GPIO17` and `... is 13` stay). `error code`,
//!    `exit code` and `status code` are no credential words: `error code is
//!    500` is an HTTP status and stays. PINs and passcodes are passwords;
//!    recovery and backup codes secrets.
//! 7. *value, then word*: `<verb> <value> as [the|my|…] [words] <word>`,
//!    the verb one of `use`, `set`, `try`, `enter`, `pick`, `with`, ...:
//!    `use s3cr3tSauce! as the password for the staging VPN`, `set
//!    Hunter2024 as my password`, `try 'P@ssw0rd9' as the passphrase`. The
//!    word must end its noun phrase (a preposition, a conjunction or
//!    punctuation follows), so `use 1Password as the password manager` and
//!    `use bcrypt as the password hash` stay; the value is judged as in rule
//!    1 (`use SSO as the password flow`, `use the env var as the password`
//!    stay).
//!
//! The value must look like a secret, not prose: not a stop word (`in`,
//! `stored`, `rotated`, `the`, `not`, `1password`, `bcrypt`, ...), not a
//! word with an English ending (`expired`, `available`, `currently`) unless
//! it is a password of 8+ letters without one (`swordfish`), not a
//! hyphenated phrase (`read-only`, `2048-bit`, `JWT-based`; a code of rule 6
//! is taken after a code word only), a number with a
//! unit or a version (`3600s`, `v1.2.3`), an email, a path or URL, a
//! placeholder (`$TOKEN`, `<your-token>`), or code (`self.token`,
//! `access_token`, `getToken2`, `Vec<u8>`); and it must contain a digit, a
//! symbol or inner upper case (4+ characters for passwords, 8+ otherwise).
//! `pass` alone (`the test pass is 100%`) and plural nouns (but rule 6's
//! `codes`) never start it.
//! Passwords get [`Kind::Password`], everything else [`Kind::Secret`].
//!
//! Overlapping findings are merged and the most specific kind names the
//! marker (`OPENAI_API_KEY=sk-proj-...` → `OPENAI_API_KEY=[REDACTED:openai-key]`).
//!
//! Redaction is idempotent (`redact(redact(x)) == redact(x)`): markers are
//! never rewritten, and when masking one secret exposes another candidate
//! (rare; e.g. a token that swallowed a key block's `END` line) the text is
//! re-scanned until nothing more is found.

use std::borrow::Cow;
use std::fmt;
use std::sync::{LazyLock, OnceLock};

use regex::Regex;

/// Every marker starts with this; the kind and a closing `]` follow.
pub const MARKER_PREFIX: &str = "[REDACTED:";

mod seen;
pub use seen::SeenSecrets;

/// Bumped whenever the rules find more than before, so that what an older build stored in
/// clear can be redacted again (`cairn-memory` does so for the memories' texts).
pub const RULES_VERSION: u32 = 4;

/// What a redacted secret was. The variant order is the priority used when
/// findings overlap: earlier (more specific) kinds win.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
#[non_exhaustive]
pub enum Kind {
    /// PEM / OpenSSH / PGP private key block (`-----BEGIN ... PRIVATE KEY-----`).
    PrivateKey,
    /// Anthropic API key (`sk-ant-...`).
    AnthropicKey,
    /// OpenAI-style key (`sk-proj-...`, `sk-svcacct-...`, legacy `sk-` + 32+).
    OpenAiKey,
    /// AWS access key id (`AKIA`/`ASIA`/`ABIA`/`ACCA` + 16).
    AwsAccessKey,
    /// GitHub token (`ghp_`, `gho_`, `ghu_`, `ghs_`, `ghr_`, `github_pat_`).
    GithubToken,
    /// GitLab token (`glpat-`, `gldt-`, `glrt-`, `glptt-`, `glsoat-`).
    GitlabToken,
    /// Slack token (`xoxb-`, `xoxp-`, `xoxa-`, `xoxs-`, `xoxr-`, `xoxe-`, `xapp-`).
    SlackToken,
    /// Slack webhook path (`hooks.slack.com/services/...`).
    SlackWebhook,
    /// Discord webhook token (`discord.com/api/webhooks/<id>/<token>`).
    DiscordWebhook,
    /// Google API key (`AIza` + 35).
    GoogleApiKey,
    /// Google OAuth access token (`ya29.`).
    GoogleOauthToken,
    /// Google OAuth client secret (`GOCSPX-`).
    GoogleClientSecret,
    /// Stripe secret / restricted key or webhook secret (`sk_live_`, `rk_live_`, `sk_test_`, `whsec_`).
    StripeKey,
    /// npm access token (`npm_` + 36).
    NpmToken,
    /// Hugging Face token (`hf_` + 30+ letters).
    HuggingfaceToken,
    /// PyPI upload token (`pypi-AgE...`).
    PypiToken,
    /// SendGrid API key (`SG.xxx.yyy`).
    SendgridKey,
    /// DigitalOcean token (`dop_v1_`, `doo_v1_`, `dor_v1_` + 64 hex).
    DigitaloceanToken,
    /// HashiCorp Vault service or batch token (`hvs.`, `hvb.` + 24+).
    VaultToken,
    /// Docker Hub personal access token (`dckr_pat_` + 27+).
    DockerToken,
    /// Shopify admin API access token (`shpat_` + 32 hex).
    ShopifyToken,
    /// OpenRouter API key (`sk-or-v1-` + 64 hex).
    OpenrouterKey,
    /// Groq API key (`gsk_` + 52).
    GroqKey,
    /// xAI API key (`xai-` + 80).
    XaiKey,
    /// Databricks personal access token (`dapi` + 32 hex, optionally `-N`).
    DatabricksToken,
    /// Telegram bot token (`<bot id>:AA` + 33).
    TelegramBotToken,
    /// JSON Web Token (`eyJ...eyJ...sig`).
    Jwt,
    /// `Authorization: Basic <base64>` credentials.
    BasicAuth,
    /// `Bearer <token>`.
    BearerToken,
    /// Password in a URL or connection string (`scheme://user:PASS@host`, `user:PASS@tcp(...)`).
    UrlPassword,
    /// Value of an `aws_secret_access_key` / `SecretAccessKey` assignment.
    AwsSecretKey,
    /// Value of a password assignment, the password in `curl -u user:PASS`,
    /// or a password stated in prose (`my sudo password is ...`).
    Password,
    /// Value of another sensitive assignment (`token`, `secret`, `api_key`,
    /// `auth`, ...) or such a value stated in prose (`the API key is ...`).
    Secret,
}

impl Kind {
    /// Every kind, in priority order.
    pub const ALL: [Kind; 33] = [
        Kind::PrivateKey,
        Kind::AnthropicKey,
        Kind::OpenAiKey,
        Kind::AwsAccessKey,
        Kind::GithubToken,
        Kind::GitlabToken,
        Kind::SlackToken,
        Kind::SlackWebhook,
        Kind::DiscordWebhook,
        Kind::GoogleApiKey,
        Kind::GoogleOauthToken,
        Kind::GoogleClientSecret,
        Kind::StripeKey,
        Kind::NpmToken,
        Kind::HuggingfaceToken,
        Kind::PypiToken,
        Kind::SendgridKey,
        Kind::DigitaloceanToken,
        Kind::VaultToken,
        Kind::DockerToken,
        Kind::ShopifyToken,
        Kind::OpenrouterKey,
        Kind::GroqKey,
        Kind::XaiKey,
        Kind::DatabricksToken,
        Kind::TelegramBotToken,
        Kind::Jwt,
        Kind::BasicAuth,
        Kind::BearerToken,
        Kind::UrlPassword,
        Kind::AwsSecretKey,
        Kind::Password,
        Kind::Secret,
    ];

    /// The name used inside the marker, e.g. `aws-access-key`.
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::PrivateKey => "private-key",
            Kind::AnthropicKey => "anthropic-key",
            Kind::OpenAiKey => "openai-key",
            Kind::AwsAccessKey => "aws-access-key",
            Kind::GithubToken => "github-token",
            Kind::GitlabToken => "gitlab-token",
            Kind::SlackToken => "slack-token",
            Kind::SlackWebhook => "slack-webhook",
            Kind::DiscordWebhook => "discord-webhook",
            Kind::GoogleApiKey => "google-api-key",
            Kind::GoogleOauthToken => "google-oauth-token",
            Kind::GoogleClientSecret => "google-client-secret",
            Kind::StripeKey => "stripe-key",
            Kind::NpmToken => "npm-token",
            Kind::HuggingfaceToken => "huggingface-token",
            Kind::PypiToken => "pypi-token",
            Kind::SendgridKey => "sendgrid-key",
            Kind::DigitaloceanToken => "digitalocean-token",
            Kind::DockerToken => "docker-token",
            Kind::ShopifyToken => "shopify-token",
            Kind::VaultToken => "vault-token",
            Kind::OpenrouterKey => "openrouter-key",
            Kind::GroqKey => "groq-key",
            Kind::XaiKey => "xai-key",
            Kind::DatabricksToken => "databricks-token",
            Kind::TelegramBotToken => "telegram-bot-token",
            Kind::Jwt => "jwt",
            Kind::BasicAuth => "basic-auth",
            Kind::BearerToken => "bearer-token",
            Kind::UrlPassword => "url-password",
            Kind::AwsSecretKey => "aws-secret-key",
            Kind::Password => "password",
            Kind::Secret => "secret",
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Result of [`redact_detailed`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Redaction<'a> {
    /// The redacted text; borrowed when nothing was found.
    pub text: Cow<'a, str>,
    /// Number of markers written (overlapping findings count once).
    pub count: usize,
    /// Distinct kinds that were redacted, in priority order.
    pub kinds: Vec<Kind>,
}

/// Replaces every secret in `text` with `[REDACTED:<kind>]`.
///
/// Returns [`Cow::Borrowed`] (no allocation) when nothing was found.
///
/// ```
/// use std::borrow::Cow;
///
/// let text = r#"psql postgres://app:s3cr3t-pw@db:5432/app, then {"password": "hunter2!"}"#;
/// assert_eq!(
///     cairn_redact::redact(text),
///     r#"psql postgres://app:[REDACTED:url-password]@db:5432/app, then {"password": "[REDACTED:password]"}"#
/// );
/// assert!(matches!(cairn_redact::redact("max_tokens = 4096"), Cow::Borrowed(_)));
/// ```
pub fn redact(text: &str) -> Cow<'_, str> {
    redact_detailed(text).text
}

/// Like [`redact`], also reporting how many secrets of which kinds were masked.
pub fn redact_detailed(text: &str) -> Redaction<'_> {
    let spans = find_spans(text);
    if spans.is_empty() {
        return Redaction {
            text: Cow::Borrowed(text),
            count: 0,
            kinds: Vec::new(),
        };
    }
    let mut kinds = Vec::new();
    let (out, count) = redact_to_fixpoint(text, spans, &mut kinds, &mut |_, _| {});
    kinds.sort_unstable();
    kinds.dedup();
    Redaction {
        text: Cow::Owned(out),
        count,
        kinds,
    }
}

/// Redacts `s` in place and returns the number of markers written.
///
/// `s` is left untouched (and not reallocated) when nothing was found.
pub fn redact_in_place(s: &mut String) -> usize {
    let spans = find_spans(s);
    if spans.is_empty() {
        return 0;
    }
    let (out, count) = redact_to_fixpoint(s, spans, &mut Vec::new(), &mut |_, _| {});
    *s = out;
    count
}

/// Upper bound on detection passes; real text settles after the first.
const MAX_PASSES: usize = 8;

/// Applies `spans`, then re-scans the result until no detector finds
/// anything, so that `redact(redact(x)) == redact(x)` holds by construction.
/// Replacing a secret can expose a new candidate (a token that ate a key
/// block's END line leaves a BEGIN without END); markers themselves are never
/// rewritten, so every pass shrinks the unmasked text and the loop ends. `found` is shown each
/// pass's text and what is masked in it ([`SeenSecrets`] remembers the values).
fn redact_to_fixpoint(
    text: &str,
    mut spans: Vec<Span>,
    kinds: &mut Vec<Kind>,
    found: &mut dyn FnMut(&str, &[Span]),
) -> (String, usize) {
    let mut out = String::new();
    let mut count = 0;
    for pass in 0..MAX_PASSES {
        kinds.extend(spans.iter().map(|s| s.kind));
        count += spans.len();
        let input = if pass == 0 { text } else { &out };
        found(input, &spans);
        out = apply(input, &spans);
        spans = find_spans(&out);
        if spans.is_empty() {
            break;
        }
    }
    (out, count)
}

/// True when [`redact`] would change `text`.
pub fn contains_secret(text: &str) -> bool {
    !find_spans(text).is_empty()
}

// ---------------------------------------------------------------------------
// Engine
// ---------------------------------------------------------------------------

/// A secret found in the text: byte range to replace and its kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Span {
    start: usize,
    end: usize,
    kind: Kind,
}

/// Extra validation applied to a regex match before it counts.
#[derive(Debug, Clone, Copy)]
enum Check {
    None,
    /// The match, minus the first `n` bytes, has at least two of
    /// {lowercase, uppercase, digit}: real keys are random, words are not.
    Random(usize),
    /// The captured value is not a placeholder (`$PASS`, `<password>`, `****`).
    NotPlaceholder,
}

/// A detector's regex, compiled the first time a text selects its detector: most texts
/// select none (the prefilter finds no trigger), and compiling all of them cost every
/// process that redacts anything about 5 ms (hooks do, on the agent's clock).
struct LazyRegex {
    pattern: Cow<'static, str>,
    re: OnceLock<Regex>,
}

impl LazyRegex {
    fn new(pattern: impl Into<Cow<'static, str>>) -> LazyRegex {
        LazyRegex {
            pattern: pattern.into(),
            re: OnceLock::new(),
        }
    }

    fn get(&self) -> &Regex {
        self.re.get_or_init(|| compile(&self.pattern))
    }
}

enum Matcher {
    /// The whole match (or capture group 1, when the pattern has one) is the secret.
    Pattern { re: LazyRegex, check: Check },
    /// PEM armour, with or without the `END` line.
    PrivateKey { begin: LazyRegex, end: LazyRegex },
    /// `key = value` style assignments; the regex finds the sensitive word
    /// of a candidate key name, which is then widened to the whole name.
    Assignment { word: LazyRegex },
}

struct Detector {
    kind: Kind,
    matcher: Matcher,
}

struct Engine {
    /// Every trigger literal of every detector: a pure literal set, searched
    /// with SIMD. No match means no detector can match.
    prefilter: Regex,
    /// The prefilter minus the words that only start the assignment
    /// detector (`token`, `key`, ...): once that detector is selected, the
    /// rest of the text is searched with this smaller, rarer set.
    rare: Regex,
    /// Bit of the assignment detector.
    assignment_bit: u64,
    /// Prefilter literal → bit set of the detectors it can start.
    literal_detectors: Vec<(String, u64)>,
    detectors: Vec<Detector>,
}

/// Source of one detector: the prefilter literals every match must contain,
/// and how to match.
struct Spec {
    kind: Kind,
    /// Literals at least one of which occurs in every match of this detector.
    triggers: &'static [&'static str],
    case_insensitive: bool,
    source: Source,
}

enum Source {
    Pattern(&'static str, Check),
    PrivateKey,
    Assignment,
}

/// Most prefilter literals the regex crate still searches with SIMD
/// (Teddy): it cuts a large literal set to 5-byte prefixes and falls back
/// to a several times slower automaton when more than 64 distinct ones
/// remain. Every redacted text pays for that, so new triggers must share
/// prefixes with existing ones or replace them (`prefilter_fits_the_simd_budget`).
#[cfg(test)]
const PREFILTER_BUDGET: usize = 64;

const PRIVATE_KEY_BEGIN: &str = r"-----BEGIN[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const PRIVATE_KEY_END: &str = r"-----END[A-Z0-9 ]{0,40}PRIVATE KEY(?: BLOCK)?-----";
const SPECS: &[Spec] = &[
    Spec {
        kind: Kind::PrivateKey,
        triggers: &["-----BEGIN", "-----END"],
        case_insensitive: false,
        source: Source::PrivateKey,
    },
    Spec {
        kind: Kind::AnthropicKey,
        triggers: &["sk-"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)sk-ant-[A-Za-z0-9_\-]{20,}", Check::None),
    },
    Spec {
        kind: Kind::OpenAiKey,
        triggers: &["sk-"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)sk-(?:(?:proj|svcacct|admin|None)-[A-Za-z0-9_\-]{20,}|[A-Za-z0-9]{32,})",
            Check::Random(3),
        ),
    },
    Spec {
        kind: Kind::AwsAccessKey,
        triggers: &["AKIA", "ASIA", "ABIA", "ACCA"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)(?:AKIA|ASIA|ABIA|ACCA)[A-Z0-9]{16}(?-u:\b)",
            Check::None,
        ),
    },
    Spec {
        kind: Kind::AwsSecretKey,
        // A secret access key given in prose next to its key id ("the AWS key is AKIA… with
        // secret wJalr…"): the first 40-character token within a line's 80 characters after it.
        triggers: &["AKIA", "ASIA"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?:AKIA|ASIA)[A-Z0-9]{16}[^\n]{0,80}?(?:[^A-Za-z0-9/+=])([A-Za-z0-9/+]{40})(?:[^A-Za-z0-9/+=]|$)",
            Check::Random(0),
        ),
    },
    Spec {
        kind: Kind::GithubToken,
        // `pat_` also starts Docker's and Shopify's tokens, in one prefix; `gh` stands for
        // the five classic prefixes (`ghp_` … `ghr_`) in one (see `PREFILTER_BUDGET`).
        triggers: &["gh", "pat_"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})",
            Check::None,
        ),
    },
    Spec {
        kind: Kind::GitlabToken,
        triggers: &["glp", "gldt-", "glrt-", "glsoat-"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)gl(?:pat|dt|rt|ptt|soat)-[A-Za-z0-9_\-]{20,}",
            Check::None,
        ),
    },
    Spec {
        kind: Kind::SlackToken,
        triggers: &["xox", "xapp-"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)(?:xox[abpsre]-[A-Za-z0-9\-]{10,}|xapp-[0-9]-[A-Za-z0-9\-]{10,})",
            Check::Random(5),
        ),
    },
    Spec {
        kind: Kind::SlackWebhook,
        triggers: &["hooks.slack.com"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?i)hooks\.slack\.com/(?:services|workflows|triggers)/([A-Za-z0-9_/+\-]+)",
            Check::None,
        ),
    },
    Spec {
        kind: Kind::DiscordWebhook,
        // `hooks/` shares its prefix with Slack's `hooks.slack.com` (see `PREFILTER_BUDGET`):
        // only a `hooks/` in a path (`.git/hooks/`) also selects this detector.
        triggers: &["hooks/"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?i)discord(?:app)?\.com/api/webhooks/[0-9]+/([A-Za-z0-9_\-]{20,})",
            Check::None,
        ),
    },
    Spec {
        kind: Kind::GoogleApiKey,
        triggers: &["AIza"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)AIza[0-9A-Za-z_\-]{35}", Check::None),
    },
    Spec {
        kind: Kind::GoogleOauthToken,
        triggers: &["ya29."],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)ya29\.[0-9A-Za-z_\-]{20,}", Check::None),
    },
    Spec {
        kind: Kind::GoogleClientSecret,
        triggers: &["GOCSPX-"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)GOCSPX-[0-9A-Za-z_\-]{20,}", Check::None),
    },
    Spec {
        kind: Kind::StripeKey,
        triggers: &["k_live_", "k_test_", "whsec_"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)(?:[sr]k_(?:live|test)_[0-9A-Za-z]{10,}|whsec_[0-9A-Za-z]{20,})",
            Check::Random(8),
        ),
    },
    Spec {
        kind: Kind::NpmToken,
        triggers: &["npm_"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)npm_[A-Za-z0-9]{36}(?-u:\b)", Check::Random(4)),
    },
    Spec {
        kind: Kind::HuggingfaceToken,
        triggers: &["hf_"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)hf_[A-Za-z0-9]{30,}(?-u:\b)", Check::Random(3)),
    },
    // `パスワードは SEC28pass です`, `密码是 hunter22`, `口令：Xyz123`: a password said in
    // Japanese or Chinese, the value in ASCII. `密` stands for `密码` and `密碼` in one
    // prefix (see `PREFILTER_BUDGET`).
    Spec {
        kind: Kind::Password,
        triggers: &["パスワード", "パスフレーズ", "密", "口令"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?:パスワード|パスフレーズ|密码|密碼|口令)[ \t　]*(?:は|が|是|为|為|:|：|=|＝)[ \t　]*([!-~]{4,})",
            Check::NotPlaceholder,
        ),
    },
    Spec {
        kind: Kind::PypiToken,
        triggers: &["pypi-AgE"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)pypi-AgE[A-Za-z0-9_\-]{50,}", Check::None),
    },
    Spec {
        kind: Kind::SendgridKey,
        triggers: &["SG."],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)SG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}",
            Check::Random(3),
        ),
    },
    Spec {
        kind: Kind::DigitaloceanToken,
        triggers: &["_v1_"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)do[opr]_v1_[a-f0-9]{64}(?-u:\b)", Check::None),
    },
    Spec {
        kind: Kind::VaultToken,
        // `hv` stands for `hvs.` and `hvb.` in one prefix (see `PREFILTER_BUDGET`). Not
        // `hvr.` (short-lived recovery-mode tokens).
        triggers: &["hv"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)hv[sb]\.[A-Za-z0-9_\-]{24,}", Check::Random(4)),
    },
    Spec {
        kind: Kind::DockerToken,
        triggers: &["pat_"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)dckr_pat_[A-Za-z0-9_-]{27,}", Check::None),
    },
    Spec {
        kind: Kind::ShopifyToken,
        triggers: &["pat_"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)shpat_[a-fA-F0-9]{32}(?-u:\b)", Check::None),
    },
    Spec {
        kind: Kind::OpenrouterKey,
        triggers: &["sk-"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)sk-or-v1-[a-f0-9]{64}(?-u:\b)", Check::None),
    },
    Spec {
        kind: Kind::GroqKey,
        triggers: &["gsk_"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)gsk_[A-Za-z0-9]{52}(?-u:\b)", Check::Random(4)),
    },
    Spec {
        kind: Kind::XaiKey,
        triggers: &["xai-"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)xai-[A-Za-z0-9]{80}(?-u:\b)", Check::Random(4)),
    },
    Spec {
        kind: Kind::DatabricksToken,
        triggers: &["dapi"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)dapi[a-f0-9]{32}(?:-[0-9]+)?(?-u:\b)", Check::None),
    },
    Spec {
        kind: Kind::TelegramBotToken,
        // The secret half of every bot token BotFather issues starts with `AA`.
        triggers: &[":AA"],
        case_insensitive: false,
        source: Source::Pattern(r"(?-u:\b)[0-9]{8,10}:AA[A-Za-z0-9_-]{33}", Check::None),
    },
    Spec {
        kind: Kind::Jwt,
        triggers: &["eyJ"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?-u:\b)eyJ[A-Za-z0-9_\-]{5,}\.eyJ[A-Za-z0-9_\-]{5,}\.[A-Za-z0-9_\-]*",
            Check::None,
        ),
    },
    Spec {
        kind: Kind::BasicAuth,
        triggers: &["authorization"],
        case_insensitive: true,
        source: Source::Pattern(
            r#"(?i)authorization\\?["']?[ \t]*[:=][ \t]*\\?["']?basic[ \t]+([A-Za-z0-9+/]{8,}={0,2})"#,
            Check::NotPlaceholder,
        ),
    },
    Spec {
        kind: Kind::BearerToken,
        triggers: &["earer", "EARER"],
        case_insensitive: false,
        source: Source::Pattern(
            r"(?i)(?-u:\b)bearer[ \t]+([A-Za-z0-9._~+/\-]{16,}=*)",
            Check::Random(0),
        ),
    },
    Spec {
        kind: Kind::UrlPassword,
        triggers: &["://"],
        case_insensitive: false,
        source: Source::Pattern(
            r#"(?-u:\b)[A-Za-z][A-Za-z0-9+.\-]{1,30}://[^\s:/?#@"'<>\\]*:([^\s/?#"'<>\\]+)@"#,
            Check::NotPlaceholder,
        ),
    },
    Spec {
        // Go MySQL DSN: `user:pass@tcp(host:3306)/db`.
        kind: Kind::UrlPassword,
        triggers: &["@tcp(", "@unix("],
        case_insensitive: false,
        source: Source::Pattern(
            r#"[A-Za-z0-9_.\-]+:([^\s@/:"']+)@(?:tcp|unix)\("#,
            Check::NotPlaceholder,
        ),
    },
    Spec {
        // `curl -u user:pass`, `--user user:pass`.
        kind: Kind::Password,
        // `-u` inside `--user` too: one prefilter slot for both spellings.
        triggers: &["-u"],
        case_insensitive: false,
        source: Source::Pattern(
            r#"(?:[ \t]-u|--user)(?:[ \t]+|=)['"]?[^\s:'"]+:([^\s'"]+)"#,
            Check::NotPlaceholder,
        ),
    },
    Spec {
        kind: Kind::Secret,
        // Case forms spelled out: `oken`/`OKEN` cover `token` and `Token`
        // in one literal (see `PREFILTER_BUDGET`). `pass` also finds `passcode`; `PIN` is
        // the acronym only (`pin`, `ping`, `spinner` are words); the code literals take
        // two prefixes and fire only on `recovery code` and `backup code` (`kup cod`:
        // `ackup cod` with its forms cost the scans more, see the crate docs' Cost).
        triggers: &[
            "pass",
            "Pass",
            "PASS",
            "pw",
            "Pwd",
            "PWD",
            "ecret",
            "ECRET",
            "oken",
            "OKEN",
            "key",
            "Key",
            "KEY",
            "auth",
            "Auth",
            "AUTH",
            "cred",
            "Cred",
            "CRED",
            "ogin",
            "PIN",
            "ecovery cod",
            "ecovery Cod",
            "ecovery_cod",
            "kup cod",
        ],
        case_insensitive: false,
        source: Source::Assignment,
    },
    // Passwords given to command-line tools, each riding on a trigger of another detector (no new prefix):
    // `mysql -u root -pS3cret`, `sshpass -p S3cret ssh …`, `docker login -u bob -p S3cret`,
    // a `.netrc` entry, `aws configure set aws_secret_access_key …`. The values must look
    // random (two character classes), so `-p 8080:80` or `-p 22` stay.
    Spec {
        kind: Kind::Password,
        triggers: &["-u"],
        case_insensitive: false,
        source: Source::Pattern(
            r#"[ \t]-u[ \t]*[^\s'"-]\S*[ \t]+-p([^\s'"-][^\s'"]*)"#,
            Check::Random(0),
        ),
    },
    Spec {
        kind: Kind::Password,
        triggers: &["pass"],
        case_insensitive: false,
        source: Source::Pattern(
            r#"\bsshpass[ \t]+-p[ \t]*['"]?([^\s'"]+)"#,
            Check::Random(0),
        ),
    },
    Spec {
        kind: Kind::Password,
        triggers: &["ogin"],
        case_insensitive: false,
        source: Source::Pattern(
            r#"\blogin\b[^\n;&|]*?[ \t](?:-p|--password)(?:[ \t]+|=)['"]?([^\s'"]+)"#,
            Check::Random(0),
        ),
    },
    Spec {
        kind: Kind::Password,
        triggers: &["ogin"],
        case_insensitive: false,
        source: Source::Pattern(
            r"\bmachine\s+\S+\s+login\s+\S+\s+password\s+(\S+)",
            Check::NotPlaceholder,
        ),
    },
    Spec {
        kind: Kind::Secret,
        triggers: &["ecret"],
        case_insensitive: false,
        source: Source::Pattern(
            r#"\baws_secret_access_key[ \t]+['"]?([A-Za-z0-9/+=]{30,})"#,
            Check::Random(0),
        ),
    },
];

static ENGINE: LazyLock<Engine> = LazyLock::new(Engine::build);

impl Engine {
    fn build() -> Engine {
        let mut literals: Vec<String> = SPECS.iter().flat_map(trigger_literals).collect();
        literals.sort();
        literals.dedup();
        // A literal starts every detector that has a trigger inside it
        // (`Authorization` starts both the Basic-auth and the assignment
        // detector, whose trigger is `Auth`).
        let literal_detectors: Vec<(String, u64)> = literals
            .iter()
            .map(|lit| {
                let bits = SPECS
                    .iter()
                    .enumerate()
                    .filter(|(_, spec)| {
                        trigger_literals(spec)
                            .iter()
                            .any(|t| lit.contains(t.as_str()))
                    })
                    .fold(0u64, |bits, (i, _)| bits | 1 << i);
                (lit.clone(), bits)
            })
            .collect();
        let assignment_bit = SPECS
            .iter()
            .position(|s| matches!(s.source, Source::Assignment))
            .map_or(0, |i| 1 << i);
        let rare = literal_detectors
            .iter()
            .filter(|(_, bits)| bits & !assignment_bit != 0)
            .map(|(lit, _)| lit.clone());
        let rare = compile(&literal_alternation(rare));
        let mut detectors = Vec::with_capacity(SPECS.len());
        for spec in SPECS {
            let matcher = match spec.source {
                Source::Pattern(p, check) => Matcher::Pattern {
                    re: LazyRegex::new(p),
                    check,
                },
                Source::PrivateKey => Matcher::PrivateKey {
                    begin: LazyRegex::new(PRIVATE_KEY_BEGIN),
                    end: LazyRegex::new(PRIVATE_KEY_END),
                },
                Source::Assignment => Matcher::Assignment {
                    word: LazyRegex::new(literal_alternation(trigger_literals(spec))),
                },
            };
            detectors.push(Detector {
                kind: spec.kind,
                matcher,
            });
        }
        Engine {
            prefilter: compile(&literal_alternation(literals)),
            rare,
            assignment_bit,
            literal_detectors,
            detectors,
        }
    }

    /// Bit set of the detectors that can match in `text`: one prefilter
    /// search when nothing matches; otherwise one search per trigger
    /// occurrence, restarting one byte after each so overlapping triggers
    /// are all seen.
    fn candidates(&self, text: &str) -> u64 {
        let mut bits = 0;
        let mut search = &self.prefilter;
        let mut hit = search.find(text);
        while let Some(m) = hit {
            let lit = m.as_str();
            if let Ok(i) = self
                .literal_detectors
                .binary_search_by(|(l, _)| l.as_str().cmp(lit))
            {
                bits |= self.literal_detectors[i].1;
            }
            if bits & self.assignment_bit != 0 {
                search = &self.rare;
            }
            // Literals are ASCII, so `start + 1` is a char boundary.
            hit = search.find_at(text, m.start() + 1);
        }
        bits
    }
}

/// The literals searched for a detector: its triggers, in all case forms
/// when the detector is case-insensitive.
fn trigger_literals(spec: &Spec) -> Vec<String> {
    spec.triggers
        .iter()
        .flat_map(|t| {
            if spec.case_insensitive {
                case_forms(t).to_vec()
            } else {
                vec![(*t).to_owned()]
            }
        })
        .collect()
}

/// `token` → `token`, `Token`, `TOKEN`: the spellings a word takes inside
/// snake_case, camelCase and SCREAMING_CASE names. Matching only these keeps
/// the prefilter a plain literal set, which the regex engine searches with
/// SIMD instead of a case-folding automaton (about twice as fast on clean
/// text). `pAsSwOrD` is not seen; nobody spells a key that way.
fn case_forms(word: &str) -> [String; 3] {
    let lower = word.to_ascii_lowercase();
    let mut title = lower.clone();
    if let Some(first) = title.get_mut(..1) {
        first.make_ascii_uppercase();
    }
    [lower, title, word.to_ascii_uppercase()]
}

fn literal_alternation(literals: impl IntoIterator<Item = String>) -> String {
    let mut literals: Vec<String> = literals.into_iter().collect();
    // Longest first, so a literal never hides a longer one at the same spot. Among equal
    // lengths the order only decides which bucket of the SIMD searcher each literal joins
    // (see the crate docs' Cost): descending order, measured, wakes buckets less often.
    literals.sort_by(|a, b| b.len().cmp(&a.len()).then_with(|| b.cmp(a)));
    literals.dedup();
    literals
        .iter()
        .map(|l| regex::escape(l))
        .collect::<Vec<_>>()
        .join("|")
}

fn compile(pattern: &str) -> Regex {
    // Patterns are constants of this crate; `all_patterns_compile` covers them.
    Regex::new(pattern).expect("cairn-redact: constant pattern must compile")
}

/// All findings, merged so they do not overlap, sorted by position.
fn find_spans(text: &str) -> Vec<Span> {
    let engine = &*ENGINE;
    let candidates = engine.candidates(text);
    if candidates == 0 {
        return Vec::new();
    }
    let mut spans = Vec::new();
    for (i, d) in engine.detectors.iter().enumerate() {
        if candidates & (1 << i) == 0 {
            continue;
        }
        match &d.matcher {
            Matcher::Pattern { re, check } => {
                find_pattern(text, re.get(), *check, d.kind, &mut spans)
            }
            Matcher::PrivateKey { begin, end } => {
                find_private_keys(text, begin.get(), end.get(), &mut spans)
            }
            Matcher::Assignment { word } => find_assignments(text, word.get(), &mut spans),
        }
    }
    widen_to_word_edges(text, &mut spans);
    split_around_markers(text, &mut spans);
    merge(&mut spans);
    spans
}

fn is_word_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// A span cut inside an ASCII word (`AIza` + 35 followed by more letters)
/// takes the rest of the word with it: otherwise the leftover would gain a
/// word boundary next to the marker and match on a second pass.
fn widen_to_word_edges(text: &str, spans: &mut [Span]) {
    let b = text.as_bytes();
    for s in spans {
        while s.end < b.len()
            && s.end > s.start
            && is_word_byte(b[s.end - 1])
            && is_word_byte(b[s.end])
        {
            s.end += 1;
        }
        while s.start > 0
            && s.start < s.end
            && is_word_byte(b[s.start])
            && is_word_byte(b[s.start - 1])
        {
            s.start -= 1;
        }
    }
}

/// Existing markers are never touched: a finding that overlaps one is cut
/// around it (never dropped, so a marker inside a key block cannot make the
/// rest of the block leak). Pieces without any alphanumeric byte are dropped.
fn split_around_markers(text: &str, spans: &mut Vec<Span>) {
    if spans.is_empty() || !text.contains(MARKER_PREFIX) {
        return;
    }
    let markers: Vec<(usize, usize)> = text
        .match_indices(MARKER_PREFIX)
        .map(|(start, _)| {
            let kind = text[start + MARKER_PREFIX.len()..]
                .bytes()
                .take_while(|c| c.is_ascii_lowercase() || *c == b'-')
                .count();
            let mut end = start + MARKER_PREFIX.len() + kind;
            if text.as_bytes().get(end) == Some(&b']') {
                end += 1;
            }
            (start, end)
        })
        .collect();
    let mut pieces = Vec::with_capacity(spans.len());
    for s in spans.iter() {
        let mut start = s.start;
        for &(ms, me) in &markers {
            if me <= start || ms >= s.end {
                continue;
            }
            if ms > start {
                pieces.push(Span {
                    start,
                    end: ms,
                    kind: s.kind,
                });
            }
            start = start.max(me);
        }
        if start < s.end {
            pieces.push(Span {
                start,
                end: s.end,
                kind: s.kind,
            });
        }
    }
    pieces.retain(|p| {
        text.as_bytes()[p.start..p.end]
            .iter()
            .any(u8::is_ascii_alphanumeric)
    });
    *spans = pieces;
}

fn find_pattern(text: &str, re: &Regex, check: Check, kind: Kind, out: &mut Vec<Span>) {
    let grouped = re.captures_len() > 1;
    let mut push = |start: usize, end: usize| {
        let s = &text[start..end];
        let ok = match check {
            Check::None => true,
            Check::Random(skip) => s.get(skip..).is_some_and(|b| char_classes(b) >= 2),
            Check::NotPlaceholder => !is_placeholder(s),
        };
        if ok {
            out.push(Span { start, end, kind });
        }
    };
    if grouped {
        // `captures_iter` allocates its capture slots even when nothing matches; a trigger
        // in clean text (`秘密` holds `密`) must cost no allocation.
        if !re.is_match(text) {
            return;
        }
        for caps in re.captures_iter(text) {
            if let Some(m) = caps.get(1) {
                push(m.start(), m.end());
            }
        }
    } else {
        for m in re.find_iter(text) {
            push(m.start(), m.end());
        }
    }
}

/// Sorts and merges overlapping spans; the most specific kind survives.
fn merge(spans: &mut Vec<Span>) {
    if spans.len() < 2 {
        return;
    }
    spans.sort_unstable_by_key(|s| (s.start, s.end));
    let mut w = 0;
    for r in 1..spans.len() {
        let next = spans[r];
        let cur = &mut spans[w];
        if next.start < cur.end {
            cur.end = cur.end.max(next.end);
            cur.kind = cur.kind.min(next.kind);
        } else {
            w += 1;
            spans[w] = next;
        }
    }
    spans.truncate(w + 1);
}

fn apply(text: &str, spans: &[Span]) -> String {
    let mut out = String::with_capacity(text.len() + spans.len() * 16);
    let mut last = 0;
    for s in spans {
        out.push_str(&text[last..s.start]);
        out.push_str(MARKER_PREFIX);
        out.push_str(s.kind.as_str());
        out.push(']');
        last = s.end;
    }
    out.push_str(&text[last..]);
    out
}

// ---------------------------------------------------------------------------
// Private keys
// ---------------------------------------------------------------------------

fn find_private_keys(text: &str, begin: &Regex, end: &Regex, out: &mut Vec<Span>) {
    let mut pos = 0;
    while let Some(m) = begin.find_at(text, pos) {
        // A block never extends past the next BEGIN line.
        let limit = begin
            .find_at(text, m.end())
            .map_or(text.len(), |n| n.start());
        let stop = match end.find_at(&text[..limit], m.end()) {
            Some(e) => e.end(),
            None => truncated_block_end(text.as_bytes(), m.end(), limit),
        };
        out.push(Span {
            start: m.start(),
            end: stop,
            kind: Kind::PrivateKey,
        });
        pos = stop.max(m.end());
    }
    // An `END` line whose `BEGIN` was cut off (a tail kept by a length cap): the body lines
    // right before it are key material.
    let blocks = out.len();
    for e in end.find_iter(text) {
        if out[..blocks]
            .iter()
            .any(|s| s.kind == Kind::PrivateKey && s.start <= e.start() && e.start() < s.end)
        {
            continue;
        }
        let start = headless_block_start(text.as_bytes(), e.start());
        if start < e.start() {
            out.push(Span {
                start,
                end: e.end(),
                kind: Kind::PrivateKey,
            });
        }
    }
}

/// Start of the base64 body lines that end at `end_line` (the start of an `END` line): each
/// (but the last, which may be short) 16+ characters, preceded by a real or JSON-escaped
/// (`\n`) line break, a quote or the start of the text.
fn headless_block_start(b: &[u8], end_line: usize) -> usize {
    let mut start = end_line;
    loop {
        let mut j = start;
        if j >= 2 && &b[j - 2..j] == b"\\n" {
            j -= 2;
            if j >= 2 && &b[j - 2..j] == b"\\r" {
                j -= 2;
            }
        } else if j >= 1 && matches!(b[j - 1], b'\n' | b'\r') {
            j -= 1;
            if b[j] == b'\n' && j >= 1 && b[j - 1] == b'\r' {
                j -= 1;
            }
        } else {
            return start;
        }
        let line_end = j;
        let mut k = j;
        while k > 0 && (b[k - 1].is_ascii_alphanumeric() || matches!(b[k - 1], b'+' | b'/' | b'='))
        {
            k -= 1;
        }
        // `\nAAAA`: the run swallowed the `n` (or `r`) of an escaped line break.
        if k < line_end && k >= 1 && b[k - 1] == b'\\' && matches!(b[k], b'n' | b'r') {
            k += 1;
        }
        let line_start = k == 0
            || matches!(b[k - 1], b'\n' | b'\r' | b'"')
            || (k >= 2 && b[k - 2] == b'\\' && matches!(b[k - 1], b'n' | b'r'));
        // The line right before `END` may be short (a block's last line); the others are full
        // body lines, so a short word of prose above the block stays.
        let full = line_end - k >= 16;
        if k == line_end || !line_start || (start != end_line && !full) {
            return start;
        }
        start = k;
    }
}

/// End of the base64 body of a private key block whose `END` line is missing
/// (e.g. a truncated tool output). Accepts body lines separated by real or
/// JSON-escaped (`\n`) line breaks, PEM headers, and stops at the first line
/// that is not key material so following prose survives.
fn truncated_block_end(b: &[u8], from: usize, limit: usize) -> usize {
    let b = &b[..limit];
    let mut end = from;
    let mut i = from;
    loop {
        // A separator must precede every body line: a (possibly escaped)
        // line break, or blanks when a long base64 run follows (keys
        // flattened onto one line).
        if let Some(n) = line_break_len(b, i) {
            i += n;
        } else {
            let j = skip_blanks(b, i);
            if j == i || b64_run(b, j) < 16 {
                break;
            }
            i = j;
        }
        i = skip_blanks(b, i);
        if line_break_len(b, i).is_some() {
            continue; // blank line
        }
        let rest = &b[i..];
        if [&b"Proc-Type:"[..], b"DEK-Info:", b"Comment:"]
            .iter()
            .any(|h| rest.starts_with(h))
        {
            while i < b.len() && line_break_len(b, i).is_none() {
                i += 1;
            }
            end = i;
            continue;
        }
        let run = b64_run(b, i);
        if run == 0 {
            break;
        }
        let b64ish = b[i..i + run]
            .iter()
            .any(|c| c.is_ascii_digit() || matches!(c, b'+' | b'/' | b'='));
        i += run;
        let at_line_end = i == b.len() || line_break_len(b, i).is_some();
        if run >= 16 {
            // Long runs are key material even when the line is cut short.
            end = i;
            if at_line_end || matches!(b.get(i), Some(b' ' | b'\t')) {
                continue;
            }
            break;
        }
        // A short run is only the (last) line of a block, never a word of prose.
        if at_line_end && b64ish {
            end = i;
            continue;
        }
        break;
    }
    end
}

fn line_break_len(b: &[u8], i: usize) -> Option<usize> {
    let rest = b.get(i..)?;
    [&b"\r\n"[..], b"\n", b"\r", b"\\r\\n", b"\\n", b"\\r"]
        .iter()
        .find(|sep| rest.starts_with(sep))
        .map(|sep| sep.len())
}

fn skip_blanks(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && matches!(b[i], b' ' | b'\t') {
        i += 1;
    }
    i
}

fn b64_run(b: &[u8], i: usize) -> usize {
    b.get(i..).map_or(0, |r| {
        r.iter()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'='))
            .count()
    })
}

// ---------------------------------------------------------------------------
// Assignments
// ---------------------------------------------------------------------------

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Family {
    Password,
    Other,
}

fn is_key_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-')
}

fn find_assignments(text: &str, word_re: &Regex, out: &mut Vec<Span>) {
    let b = text.as_bytes();
    let mut scanned = 0;
    for w in word_re.find_iter(text) {
        if w.start() < scanned {
            continue; // another sensitive word of a key already handled
        }
        let mut start = w.start();
        while start > 0 && is_key_byte(b[start - 1]) {
            start -= 1;
        }
        // `\nbackup codes are …` in a JSON string: the escape's letter is no part of the key.
        if start < w.start() && escaped_letter(b, start) {
            start += 1;
        }
        let mut end = w.end();
        while end < b.len() && is_key_byte(b[end]) {
            end += 1;
        }
        scanned = end;
        let before = &text[..start];
        // Inside a marker (`[REDACTED:aws-secret-key]`), a URL's userinfo
        // (`https://token:x@host`, the URL detector's job) or a path
        // (`count::token: ...`).
        if before.ends_with(MARKER_PREFIX) || before.ends_with("://") || before.ends_with("::") {
            continue;
        }
        let key = &text[start..end];
        let family = sensitive_key(key);
        let assigned = family.and_then(|f| assignment_value(text, start, end, f));
        if let Some(span) = assigned {
            out.push(span);
            // `PASSWORD=Tr0ub4dor&3horse`: `&` ends a URL query value, but a
            // password may hold it; the prose reading takes the whole word.
            if b.get(span.end) != Some(&b'&') {
                continue;
            }
        }
        if let Some(span) = prose_value(text, start, end, family, assigned.is_some()) {
            scanned = scanned.max(span.end);
            out.push(span);
        } else if assigned.is_none() {
            if let Some(codes_end) = code_values(text, start, end, out) {
                scanned = scanned.max(codes_end);
            } else if let Some(span) = value_before(text, start, end, family) {
                out.push(span);
            }
        }
    }
}

/// The value of `key = value` (and the other assignment shapes) after the
/// sensitive key name `text[start..end]`, when it passes [`accept_value`].
fn assignment_value(text: &str, start: usize, end: usize, family: Family) -> Option<Span> {
    let key = &text[start..end];
    // `--password value` only when the dash starts a shell word.
    let is_flag = key.starts_with('-')
        && text[..start]
            .bytes()
            .next_back()
            .is_none_or(|c| c.is_ascii_whitespace() || matches!(c, b'"' | b'\''));
    let value = parse_value(text, end, is_flag)?;
    let next = text.as_bytes().get(value.end).copied();
    let v = &text[value.start..value.end];
    // `DB_PASSWORD=purple.monkey.dishwasher`, `?user=app&password=…`: a shell or
    // environment assignment (an UPPER_SNAKE name glued to its `=`) or a URL query
    // parameter holds a literal, never code, whatever it reads like.
    let glued = text.as_bytes().get(end) == Some(&b'=');
    let env_name = key.bytes().any(|c| c.is_ascii_uppercase())
        && key
            .bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_');
    let in_query = matches!(text[..start].bytes().next_back(), Some(b'&' | b'?'));
    let literal = glued && (env_name || in_query) && value.quote == Quote::None;
    if !accept_value(v, next, family, value.quote, literal) {
        return None;
    }
    let kind = if is_aws_secret_key_name(key) {
        Kind::AwsSecretKey
    } else if family == Family::Password {
        Kind::Password
    } else {
        Kind::Secret
    };
    Some(Span {
        start: value.start,
        end: value.end,
        kind,
    })
}

/// Splits a key name into words on non-alphanumerics, camelCase and
/// letter/digit boundaries (`APIKey2` → `API`, `Key`, `2`). No allocation.
fn key_words(key: &str) -> KeyWords<'_> {
    KeyWords { key, pos: 0 }
}

struct KeyWords<'a> {
    key: &'a str,
    pos: usize,
}

impl<'a> Iterator for KeyWords<'a> {
    type Item = &'a str;

    fn next(&mut self) -> Option<&'a str> {
        let b = self.key.as_bytes();
        while self.pos < b.len() && !b[self.pos].is_ascii_alphanumeric() {
            self.pos += 1;
        }
        if self.pos >= b.len() {
            return None;
        }
        let start = self.pos;
        let mut i = start + 1;
        while i < b.len() && b[i].is_ascii_alphanumeric() {
            let (p, c) = (b[i - 1], b[i]);
            let next_lower = b.get(i + 1).is_some_and(u8::is_ascii_lowercase);
            let camel = (p.is_ascii_lowercase() || p.is_ascii_digit()) && c.is_ascii_uppercase();
            let acronym_end = p.is_ascii_uppercase() && c.is_ascii_uppercase() && next_lower;
            let digit_edge = p.is_ascii_digit() != c.is_ascii_digit();
            if camel || acronym_end || digit_edge {
                break;
            }
            i += 1;
        }
        self.pos = i;
        // Both ends sit next to ASCII bytes, so they are char boundaries.
        Some(&self.key[start..i])
    }
}

fn ends_with_ci(word: &str, suffix: &str) -> bool {
    word.len() >= suffix.len()
        && word.as_bytes()[word.len() - suffix.len()..].eq_ignore_ascii_case(suffix.as_bytes())
}

fn eq_any_ci(word: &str, list: &[&str]) -> bool {
    list.iter().any(|w| word.eq_ignore_ascii_case(w))
}

const KEY_QUALIFIERS: &[&str] = &[
    "api",
    "access",
    "private",
    "secret",
    "signing",
    "encryption",
    "master",
    "app",
    "auth",
    "account",
    "shared",
    "subscription",
    "storage",
];

/// Words allowed after the sensitive word (`SECRET_KEY_BASE`, `password_confirmation`).
const HARMLESS_SUFFIXES: &[&str] = &[
    "key",
    "value",
    "val",
    "string",
    "str",
    "b", // `b64` splits into `b`, `64`
    "base64",
    "hex",
    "raw",
    "plain",
    "plaintext",
    "clear",
    "cleartext",
    "base",
    "bytes",
    "data",
    "text",
    "encoded",
    "confirmation",
    "confirm",
    "again",
    "repeat",
    "old",
    "new",
    "current",
];

/// Whether `word` makes a key sensitive; `prev` is the word before it.
fn head_family(prev: Option<&str>, word: &str) -> Option<Family> {
    let glued_password = ["password", "passwd", "passphrase", "passcode", "pwd"];
    if word.eq_ignore_ascii_case("pass")
        || word.eq_ignore_ascii_case("pw")
        || glued_password.iter().any(|s| ends_with_ci(word, s))
    {
        return Some(Family::Password);
    }
    let glued = [
        "secret",
        "token",
        "apikey",
        "accesskey",
        "privatekey",
        "secretkey",
        "accountkey",
    ];
    if glued.iter().any(|s| ends_with_ci(word, s))
        || eq_any_ci(
            word,
            &["auth", "authorization", "credential", "credentials"],
        )
        || (word.eq_ignore_ascii_case("key") && prev.is_some_and(|p| eq_any_ci(p, KEY_QUALIFIERS)))
    {
        return Some(Family::Other);
    }
    None
}

/// Decides whether a key name holds a secret (see the crate docs).
fn sensitive_key(key: &str) -> Option<Family> {
    let mut family = None;
    let mut prev: Option<&str> = None;
    for word in key_words(key) {
        if let Some(f) = head_family(prev, word) {
            family = Some(f);
        } else if family.is_some()
            && !word.bytes().all(|c| c.is_ascii_digit())
            && !eq_any_ci(word, HARMLESS_SUFFIXES)
        {
            family = None;
        }
        prev = Some(word);
    }
    family
}

fn is_aws_secret_key_name(key: &str) -> bool {
    let mut squashed = [0u8; 128];
    let mut n = 0;
    for c in key.bytes().filter(u8::is_ascii_alphanumeric) {
        if n == squashed.len() {
            break;
        }
        squashed[n] = c.to_ascii_lowercase();
        n += 1;
    }
    squashed[..n].windows(15).any(|w| w == b"secretaccesskey")
}

struct Value {
    start: usize,
    end: usize,
    quote: Quote,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quote {
    /// Bare value: `KEY=value`, `key: value`.
    None,
    /// A `"string"` or `'string'` literal: data.
    Data,
    /// A backtick span: markdown inline code or a JS template, usually code.
    Backtick,
}

const SEPARATORS: &[&str] = &[":=", "===", "==", "=>", "=", "：", "＝", ":"];
const AUTH_SCHEMES: &[&str] = &["bearer", "basic", "token", "digest"];

/// Parses `<close-quote>? ]? <sep> <value>` after a key name.
fn parse_value(text: &str, key_end: usize, is_flag: bool) -> Option<Value> {
    let b = text.as_bytes();
    let mut i = key_end;
    // Closing quote of the key (`"key"`, `\"key\"`), then an index bracket (`env["KEY"]`).
    if b.get(i) == Some(&b'\\') && matches!(b.get(i + 1), Some(b'"' | b'\'')) {
        i += 2;
    } else if matches!(b.get(i), Some(b'"' | b'\'' | b'`')) {
        i += 1;
    }
    if b.get(i) == Some(&b']') {
        i += 1;
    }
    let ws = i;
    i = skip_blanks(b, i);
    let rest = &text[i..];
    let mut colon = false;
    match SEPARATORS.iter().find(|s| rest.starts_with(**s)) {
        Some(&":") if rest.as_bytes().get(1) == Some(&b':') => return None,
        Some(sep) => {
            colon = matches!(*sep, ":" | "：");
            i += sep.len();
        }
        // `--password value`: the value must not be the next flag.
        None if is_flag && i > ws && b.get(i).is_some_and(|&c| c != b'-') => {}
        None => return None,
    }
    i = skip_blanks(b, i);
    if colon {
        // `const API_KEY: &str = "..."`, `password: str = "..."`: skip the
        // type annotation to the initialiser; a non-literal one is code.
        match initialiser_after_type(b, i) {
            Some(Some(j)) => i = j,
            Some(None) => return None,
            None => {}
        }
    }
    i = skip_auth_scheme(text, i);
    // Python string prefixes: r"..", b'..', f"..".
    if let Some(&p) = b.get(i)
        && matches!(p, b'r' | b'b' | b'f' | b'u' | b'R' | b'B' | b'F' | b'U')
        && matches!(b.get(i + 1), Some(b'"' | b'\''))
    {
        i += 1;
    }
    let (start, end, quote) = match (b.get(i), b.get(i + 1)) {
        (Some(b'\\'), Some(&q)) if q == b'"' || q == b'\'' => {
            // Escaped quotes inside a JSON string: \"value\".
            let start = i + 2;
            let end = find_escaped_close(b, start, q);
            (start, end, Quote::Data)
        }
        (Some(&q), _) if matches!(q, b'"' | b'\'' | b'`') => {
            let start = i + 1;
            let mut j = start;
            while j < b.len() && b[j] != q && b[j] != b'\n' {
                j += if b[j] == b'\\' && j + 1 < b.len() && b[j + 1] != b'\n' {
                    2
                } else {
                    1
                };
            }
            let quote = if q == b'`' {
                Quote::Backtick
            } else {
                Quote::Data
            };
            (start, j.min(b.len()), quote)
        }
        _ => {
            let mut j = i;
            while j < b.len() && !is_unquoted_stop(b[j]) {
                j += 1;
            }
            (i, j, Quote::None)
        }
    };
    let start = if quote == Quote::None {
        start
    } else {
        skip_auth_scheme(text, start)
    };
    (start < end).then_some(Value { start, end, quote })
}

/// After `key:`, a type annotation followed by `=`: returns `Some(Some(i))`
/// with `i` at a quoted initialiser, `Some(None)` for any other initialiser
/// (an expression: code, not a secret), `None` when this is no annotation.
fn initialiser_after_type(b: &[u8], start: usize) -> Option<Option<usize>> {
    let first = *b.get(start)?;
    if !(first.is_ascii_alphabetic() || matches!(first, b'&' | b'*' | b'_' | b'[' | b'(')) {
        return None;
    }
    let mut j = start;
    while j < b.len() && j - start < 160 {
        let c = b[j];
        if c == b'=' {
            let prev = b[j - 1];
            let next = b.get(j + 1).copied();
            // `name: Type = value` is spaced; `token: abc user=bob` is a log line.
            if prev != b' ' || matches!(next, Some(b'=' | b'>')) {
                return None;
            }
            let k = skip_blanks(b, j + 1);
            let k = match (b.get(k), b.get(k + 1)) {
                (Some(b'r' | b'b' | b'f' | b'u'), Some(b'"' | b'\'')) => k + 1,
                _ => k,
            };
            return Some(matches!(b.get(k), Some(b'"' | b'\'' | b'`')).then_some(k));
        }
        let type_char = c.is_ascii_alphanumeric()
            || matches!(
                c,
                b'_' | b'&'
                    | b'\''
                    | b'<'
                    | b'>'
                    | b'['
                    | b']'
                    | b':'
                    | b','
                    | b' '
                    | b'*'
                    | b'.'
                    | b'?'
                    | b'|'
                    | b'('
                    | b')'
            );
        if !type_char {
            return None;
        }
        j += 1;
    }
    None
}

fn find_escaped_close(b: &[u8], start: usize, q: u8) -> usize {
    let mut j = start;
    while j < b.len() && b[j] != b'\n' {
        if b[j] == b'\\' && b.get(j + 1) == Some(&q) {
            return j;
        }
        j += 1;
    }
    j
}

/// Skips `Bearer `, `Basic `, `Token `, `Digest ` so only the credential is masked.
fn skip_auth_scheme(text: &str, i: usize) -> usize {
    let b = text.as_bytes();
    for scheme in AUTH_SCHEMES {
        let end = i + scheme.len();
        if b.get(i..end)
            .is_some_and(|w| w.eq_ignore_ascii_case(scheme.as_bytes()))
            && matches!(b.get(end), Some(b' ' | b'\t'))
        {
            let j = skip_blanks(b, end);
            if b.get(j).is_some_and(|c| !matches!(c, b'\n' | b'\r')) {
                return j;
            }
        }
    }
    i
}

fn is_unquoted_stop(c: u8) -> bool {
    c.is_ascii_whitespace()
        || matches!(
            c,
            b'"' | b'\'' | b'`' | b',' | b';' | b'&' | b')' | b']' | b'}' | b'>' | b'|' | b'\\'
        )
}

/// Words that are never a secret value on their own.
const NON_SECRET_WORDS: &[&str] = &[
    "true",
    "false",
    "null",
    "none",
    "nil",
    "undefined",
    "yes",
    "no",
    "on",
    "off",
    "enabled",
    "disabled",
    "required",
    "optional",
    "hidden",
    "masked",
    "redacted",
    "secret",
    "password",
    "passwd",
    "pass",
    "token",
    "changeme",
    "changeit",
    "placeholder",
    "example",
    "sample",
    "dummy",
    "test",
    "default",
    "empty",
    "unset",
    "invalid",
    "incorrect",
    "missing",
    "todo",
    "str",
    "string",
    "bytes",
    "bool",
    "boolean",
    "int",
    "number",
    "any",
    "unknown",
    "impl",
    "dyn",
    "mut",
    "self",
    "this",
    "await",
    "object",
    "char",
    "void",
    "float",
    "double",
    "long",
    "short",
    "unsigned",
    "signed",
    "usize",
    "isize",
    "list",
    "dict",
    "array",
    "tuple",
    "handle",
    "const",
];

/// Variable references, templates, masks and "fill me in" values.
fn is_placeholder(v: &str) -> bool {
    let v = v.trim();
    if v.is_empty() || v.starts_with(MARKER_PREFIX) {
        return true;
    }
    if v.starts_with(['$', '%', '<', '{', '[', '(']) {
        return true;
    }
    if ["${", "{{", "$(", "%("].iter().any(|p| v.contains(p)) {
        return true;
    }
    if v.chars()
        .all(|c| matches!(c, 'x' | 'X' | '*' | '.' | '-' | '_' | '#' | '•' | '…' | '?'))
    {
        return true;
    }
    let lower_starts =
        |p: &str| v.len() >= p.len() && v.as_bytes()[..p.len()].eq_ignore_ascii_case(p.as_bytes());
    if lower_starts("your") || lower_starts("change_me") || lower_starts("change-me") {
        return true;
    }
    eq_any_ci(v, NON_SECRET_WORDS)
}

/// A password of words and a number (`MyDogRex2019`, `BananaBread77`, `qwertyASDF1234`):
/// letters, then two digits or more at the end. Identifiers seldom end so (`sha256Hash`,
/// `newPassword1`, `utf8`).
fn word_and_number_password(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = b.iter().rev().take_while(|c| c.is_ascii_digit()).count();
    let letters = b.iter().filter(|c| c.is_ascii_alphabetic()).count();
    b.len() >= 8
        && digits >= 2
        && letters >= 4
        && b.iter().all(u8::is_ascii_alphanumeric)
        && b[0].is_ascii_alphabetic()
}

/// A password said to be one ("my password is PurpleMonkey42x", "the wifi password is
/// SEC07-PurpleMonkeyDishwasher", "… is hunter2"): six characters or more, letters and
/// digits, none of code's punctuation, not a version, a hash's name (`sha256`, `utf8`) or a
/// number and its unit (`6-digit`, `12-character`).
fn stated_password(v: &str) -> bool {
    const NAMES: &[&str] = &[
        "sha1", "sha256", "sha384", "sha512", "md5", "bcrypt", "scrypt", "argon2", "argon2id",
        "pbkdf2", "utf8", "utf-8", "base64", "aes128", "aes256", "rsa2048", "rsa4096", "http2",
        "oauth2", "ipv4", "ipv6", "x509", "pkcs12", "ed25519",
    ];
    let b = v.as_bytes();
    b.len() >= 6
        && b.iter().any(u8::is_ascii_digit)
        && b.iter().any(u8::is_ascii_alphabetic)
        && b.iter().all(|c| {
            c.is_ascii_alphanumeric()
                || matches!(
                    c,
                    b'-' | b'!' | b'@' | b'#' | b'$' | b'%' | b'&' | b'*' | b'+' | b'^'
                )
        })
        && !number_like(v)
        && !v.split_once('-').is_some_and(|(n, unit)| {
            !n.is_empty()
                && n.bytes().all(|c| c.is_ascii_digit())
                && unit.bytes().all(|c| c.is_ascii_lowercase())
        })
        && !NAMES.iter().any(|n| {
            v.len() >= n.len() && v.as_bytes()[..n.len()].eq_ignore_ascii_case(n.as_bytes())
        })
}

/// A random token of letters and digits mixed (`abcd1234efgh5678ijkl`): 16 characters or
/// more that change between letters and digits three times or more. Code is words.
fn mixed_token(v: &str) -> bool {
    let b = v.as_bytes();
    b.len() >= 16
        && b.iter().all(u8::is_ascii_alphanumeric)
        && b.windows(2)
            .filter(|w| w[0].is_ascii_digit() != w[1].is_ascii_digit())
            .count()
            >= 3
}

/// A value nobody types as a word or names as an identifier (`qZ8vLmN3pR5tW7yB9dF1hJ4kM6nP2sU0xA`):
/// 16 characters or more of letters, digits and base64's `+/_-` (and `=` padding), with upper
/// case, lower case and digits, and under 60% of its letters in pieces that read like words
/// ([`key_words`] of three letters or more, not all capitals, with a vowel in every five
/// letters and never four consonants in a row). So `TenantId2024Region` and
/// `userProfileV2Cache` stay; about one random key of 16 characters in 30 reads like words
/// (one in 200 of 34), and stays too.
fn strongly_random(v: &str) -> bool {
    let core = v.trim_end_matches('=');
    let b = core.as_bytes();
    if b.len() < 16
        || char_classes(core) < 3
        || !b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'/' | b'_' | b'-'))
    {
        return false;
    }
    let (mut letters, mut in_words) = (0, 0);
    for w in key_words(core) {
        if w.bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        letters += w.len();
        if reads_like_a_word(w) {
            in_words += w.len();
        }
    }
    in_words * 5 < letters * 3
}

/// A piece of an identifier that reads like a word (`Tenant`, `user`, `Cache`), not like
/// the letters of a random string (`Lm`, `QXB`, `vkpt`).
fn reads_like_a_word(w: &str) -> bool {
    let vowel = |c: &u8| {
        matches!(
            c.to_ascii_lowercase(),
            b'a' | b'e' | b'i' | b'o' | b'u' | b'y'
        )
    };
    let b = w.as_bytes();
    let vowels = b.iter().filter(|c| vowel(c)).count();
    let mut consonants = 0;
    let mut cluster = false;
    for c in b {
        consonants = if vowel(c) { 0 } else { consonants + 1 };
        cluster |= consonants >= 4;
    }
    b.len() >= 3
        && b.iter().any(u8::is_ascii_lowercase)
        && vowels * 5 >= b.len()
        && vowels > 0
        && !cluster
}

fn char_classes(s: &str) -> usize {
    let (mut lo, mut up, mut dg) = (false, false, false);
    for c in s.bytes() {
        lo |= c.is_ascii_lowercase();
        up |= c.is_ascii_uppercase();
        dg |= c.is_ascii_digit();
    }
    usize::from(lo) + usize::from(up) + usize::from(dg)
}

/// A `/`-separated segment of 12+ characters mixing upper, lower and digits:
/// key material rather than a directory name.
fn has_random_segment(v: &str) -> bool {
    v.split(['/', '\\'])
        .any(|seg| seg.len() >= 12 && char_classes(seg) == 3)
}

fn is_path_or_url(v: &str) -> bool {
    let b = v.as_bytes();
    let scheme_len = b
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'+' | b'.' | b'-'))
        .count();
    if scheme_len > 0 && b[0].is_ascii_alphabetic() && v[scheme_len..].starts_with("://") {
        return true;
    }
    let windows_drive = b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && b[2] == b'\\';
    let rooted = ["/", "./", "../", "~/", "\\\\"]
        .iter()
        .any(|p| v.starts_with(p))
        || windows_drive;
    let with_extension = v.contains('/')
        && !v.contains(char::is_whitespace)
        && v.rsplit_once('.').is_some_and(|(stem, ext)| {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.bytes().all(|c| c.is_ascii_alphanumeric())
        });
    (rooted || with_extension) && !has_random_segment(v)
}

/// Unquoted values that are code rather than data: `self.token`,
/// `access_token`, `String`, `X509KeyUsageFlags`, `windows_sys::core::PCWSTR`,
/// `*mut passwd`, `0x04`, `iEnd-iStart`, `pProgram->token`.
fn looks_like_code(v: &str, next: Option<u8>) -> bool {
    // `ttl_column.` (a method chain cut short, or a sentence's full stop).
    let v = match v.trim_end_matches('.') {
        "" => v,
        trimmed => trimmed,
    };
    let b = v.as_bytes();
    if v.contains("::") || v.contains(['(', '[', '<', '{']) {
        return true;
    }
    if matches!(b[0], b'*' | b'&' | b'_' | b'!') {
        return true; // pointer / reference / private name / negation
    }
    if b.last() == Some(&b'-') && next == Some(b'>') {
        return true; // cut at `->`
    }
    let hex_literal = b.len() > 2
        && b[0] == b'0'
        && matches!(b[1], b'x' | b'X' | b'o' | b'b')
        && b.len() < 24
        && b[2..]
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || *c == b'_');
    if hex_literal {
        return true;
    }
    let digits = b.iter().any(u8::is_ascii_digit);
    if !digits && v.contains(['-', '+', '*', '/', '%']) {
        return true; // `iEnd-iStart`
    }
    if !(b[0].is_ascii_alphabetic())
        || !b
            .iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'))
    {
        return false;
    }
    // Dotted path of identifiers: `config.api_key`, `os.environ`.
    if v.contains('.') {
        return v.split('.').all(|seg| {
            seg.as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        });
    }
    // snake_case / camelCase / TypeName: built from real words. Random
    // tokens split into many one- or two-letter pieces instead.
    let mut letter_words = 0;
    let mut letters = 0;
    let mut in_long_words = 0;
    for w in key_words(v) {
        if w.bytes().all(|c| c.is_ascii_digit()) {
            continue;
        }
        letter_words += 1;
        letters += w.len();
        if w.len() >= 3 || w.bytes().all(|c| c.is_ascii_uppercase()) {
            in_long_words += w.len();
        }
    }
    // Many pieces averaging under three characters (`mxqDyg6inYnJorssm4rFNCqo`,
    // `AArqH92FN3HIeBR`): a random token, however its short pieces happen to fall.
    let pieces = key_words(v).count();
    if pieces >= 6 && v.len() < pieces * 3 {
        return false;
    }
    let shaped = letter_words > 1 || (b[0].is_ascii_uppercase() && !digits);
    shaped && in_long_words * 4 >= letters * 3
}

/// Whether an assigned value is a secret. `literal`: it cannot be code (a shell or
/// environment assignment, a URL query; see [`assignment_value`]), so only what is never a
/// secret is refused (a placeholder or variable, a path or URL, a number, another variable's
/// name, a plain word for a non-password key).
fn accept_value(v: &str, next: Option<u8>, family: Family, quote: Quote, literal: bool) -> bool {
    if v.trim().is_empty() || v.contains(MARKER_PREFIX) || is_placeholder(v) || is_path_or_url(v) {
        return false;
    }
    let n = v.chars().count();
    if v.bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'_'))
    {
        return n >= 16 || (family == Family::Password && n >= 6);
    }
    // An environment variable name (`"OPENAI_API_KEY"`), not its value.
    if v.contains('_')
        && v.bytes()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == b'_')
    {
        return false;
    }
    if literal {
        let one_case_word =
            v.bytes().all(|c| c.is_ascii_lowercase()) || v.bytes().all(|c| c.is_ascii_uppercase());
        return if family == Family::Password {
            n >= 4
        } else {
            !one_case_word && n >= 8
        };
    }
    if quote == Quote::Data {
        return n >= if family == Family::Password { 4 } else { 8 };
    }
    // A password of words and digits (`hunter2hunter2`, `Summer2024`) reads like an
    // identifier to the code test; one with no `.`, `_` or inner capital is no code.
    // So is one of 8+ that opens with a capital and holds a digit (`AlphaS3cret1`,
    // `CompanyName123`): type names seldom hold digits, and variables open in lower case.
    let alnum_password = family == Family::Password
        && v.bytes().all(|c| c.is_ascii_alphanumeric())
        && v.bytes().any(|c| c.is_ascii_digit())
        && v.bytes().any(|c| c.is_ascii_alphabetic());
    let inner_capital = v
        .as_bytes()
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    let password_shaped = alnum_password
        && ((n >= 6 && !inner_capital)
            || (n >= 8 && v.as_bytes()[0].is_ascii_uppercase())
            || word_and_number_password(v));
    if mixed_token(v) {
        return true;
    }
    if !password_shaped && looks_like_code(v, next) {
        return false;
    }
    // `secret: expr=70925` is another assignment, not a value (base64 `=`
    // padding only ever comes last).
    if v.trim_end_matches('=').contains('=') {
        return false;
    }
    let has_non_letter = !v.chars().all(char::is_alphabetic);
    // Tokens are random; a plain word (`authorizer`) is not one.
    let one_case_word = !has_non_letter
        && (v.bytes().all(|c| c.is_ascii_lowercase()) || v.bytes().all(|c| c.is_ascii_uppercase()));
    if family == Family::Other && one_case_word {
        return false;
    }
    n >= if family == Family::Password && has_non_letter {
        4
    } else {
        8
    }
}

// ---------------------------------------------------------------------------
// Prose
// ---------------------------------------------------------------------------

/// Names of a login: a `user / pass` pair may follow.
const PAIR_WORDS: &[&str] = &["login", "logins", "credential", "credentials", "creds"];

/// Words before a bare `key` that make it the subject of its clause (`the
/// key`, `my key`), unlike a compound noun (`cache key`, `sort key`).
const DETERMINERS: &[&str] = &[
    "the", "my", "your", "our", "this", "that", "its", "their", "his", "her", "a", "an", "new",
    "same",
];

/// Words that may start the qualifier between a sensitive word and its
/// copula: `password for this project is`, `token in CI was`.
const PREPOSITIONS: &[&str] = &["for", "of", "on", "at", "in", "to", "from", "with"];

/// Copulas and separators between a sensitive phrase and its value, longest
/// first. Separators need no blank before them; words do.
const COPULAS: &[&str] = &[
    "has been changed to",
    "has been set to",
    "was changed to",
    "is changed to",
    "was set to",
    "is set to",
    "changed to",
    "should be",
    "would be",
    "will be",
    "must be",
    "set to",
    "equals",
    "is now",
    "were",
    "was",
    "are",
    "is",
    "to",
];
const PROSE_SEPARATORS: &[&str] = &[":=", "=>", "->", "→", "=", ":", "：", "＝"];

/// Words that follow `password is` in ordinary prose (`the password is
/// stored in 1password`), and technical names that are not secrets.
const PROSE_STOP_WORDS: &[&str] = &[
    "the",
    "a",
    "an",
    "in",
    "not",
    "now",
    "also",
    "still",
    "just",
    "only",
    "set",
    "same",
    "kept",
    "stored",
    "managed",
    "rotated",
    "required",
    "empty",
    "correct",
    "wrong",
    "expired",
    "there",
    "here",
    "what",
    "where",
    "which",
    "because",
    "usually",
    "always",
    "never",
    "somewhere",
    "elsewhere",
    "anywhere",
    "everywhere",
    "nowhere",
    "whatever",
    "together",
    "therefore",
    "however",
    "obsolete",
    "complete",
    "separate",
    "insecure",
    "unique",
    "plaintext",
    "cleartext",
    "lowercase",
    "uppercase",
    "username",
    "keychain",
    "keyvault",
    "lastpass",
    "keepass",
    "bitwarden",
    "1password",
    "onepassword",
    "hashicorp",
    "base64",
    "base64url",
    "hex",
    "utf8",
    "utf-8",
    "ascii",
    "sha1",
    "sha256",
    "sha512",
    "md5",
    "bcrypt",
    "scrypt",
    "argon2",
    "argon2id",
    "pbkdf2",
    "hmac",
    "aes256",
    "oauth",
    "oauth2",
    "ed25519",
    "x509",
];

/// Endings of English words (`encrypted`, `available`, `currently`): a plain
/// lowercase word after `password is` is far more often one of these than a
/// password.
const ENGLISH_SUFFIXES: &[&str] = &[
    "ed", "ing", "ly", "able", "ible", "tion", "sion", "ment", "ness", "ity", "ive", "ous", "al",
    "ent", "ant", "ance", "ence", "ary", "ory", "ful", "less", "ic", "ate", "ize", "ise", "er",
    "en", "ere", "ure", "ship", "ward", "wise", "ist", "ism",
];

/// Unit suffixes of a number (`3600s`, `32bytes`, `90days`).
const UNITS: &[&str] = &[
    "s", "ms", "us", "ns", "m", "min", "mins", "h", "hr", "hrs", "d", "day", "days", "w", "wk",
    "y", "yr", "yrs", "k", "kb", "mb", "gb", "tb", "b", "bit", "bits", "byte", "bytes", "char",
    "chars", "x", "px", "st", "nd", "rd", "th", "%",
];

/// What the sensitive word of a prose sentence allows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Subject {
    /// `password`, `token`, `API key`: a copula and a value, or a 32-hex string.
    Sensitive(Family),
    /// `the key`: a 32-hex string in the same clause, or a copula and a
    /// [`strongly_random`] value.
    BareKey,
    /// `the vault unseal key`, `the cache key`: only a copula and a
    /// [`strongly_random`] value (`the cache key is userId` stays).
    NamedKey,
}

/// Secrets stated in prose after the sensitive word `text[start..end]` (see
/// the crate docs): `the staging db password is Tr0ub4dor&3horse`,
/// `use password "correct horse"`, `the admin login is admin / P@ss1`,
/// `twilio auth token 4f9c...` (32 hex). `family` is the key name's own
/// ([`sensitive_key`]); `assigned` is set when the assignment rule already
/// masked a value here, and only a longer unquoted reading of it matters.
fn prose_value(
    text: &str,
    start: usize,
    end: usize,
    family: Option<Family>,
    assigned: bool,
) -> Option<Span> {
    let b = text.as_bytes();
    let key = &text[start..end];
    if key.ends_with(['.', '-']) {
        return None; // `... the token.`: the clause ended
    }
    let pair = eq_any_ci(key, PAIR_WORDS);
    let subject = match family {
        // `pass` alone is too common a word (`the test pass is 100%`).
        Some(_) if key.eq_ignore_ascii_case("pass") => None,
        Some(f) => Some(Subject::Sensitive(f)),
        None if key.eq_ignore_ascii_case("key") => match prev_word(text, start) {
            Some(p) if eq_any_ci(p, KEY_QUALIFIERS) => Some(Subject::Sensitive(Family::Other)),
            // `the Twilio key is SK…`, `our Stripe key is …`: a service's key, named by it.
            Some(p)
                if p.len() >= 3
                    && p.as_bytes()[0].is_ascii_uppercase()
                    && p.bytes().skip(1).all(|c| c.is_ascii_alphanumeric())
                    && !line_start_before(b, p.as_ptr() as usize - text.as_ptr() as usize) =>
            {
                Some(Subject::Sensitive(Family::Other))
            }
            Some(p) if eq_any_ci(p, DETERMINERS) => Some(Subject::BareKey),
            Some(_) => Some(Subject::NamedKey),
            // `Key: ...` opening a line; `(key, ...)` is code.
            None => line_start_before(b, start).then_some(Subject::BareKey),
        },
        None => None,
    };
    if subject.is_none() && !pair {
        return None;
    }
    let after_key = end + b[end..].iter().take_while(|&&c| c == b'*').count();
    // `the db password's Tr0ub4dor&3`: the copula contracted, for a value that is plainly no
    // word (`the password's length is 12`, `the password's expiry` stay).
    if let Some(Subject::Sensitive(Family::Password)) = subject
        && !assigned
        && let Some(rest) = ["'s ", "\u{2019}s "]
            .iter()
            .find(|c| text[after_key..].starts_with(**c))
            .map(|c| after_key + c.len())
        && let Some((vs, ve, quoted)) = prose_value_at(text, start, skip_blanks(b, rest), true)
        && (text[vs..ve].bytes().any(|c| !c.is_ascii_alphabetic())
            || dashed_passphrase(&text[vs..ve]))
        && prose_value_ok(&text[vs..ve], Family::Password, quoted)
    {
        return Some(Span {
            start: vs,
            end: ve,
            kind: Kind::Password,
        });
    }
    if let Some((v, separator)) = prose_copula(text, after_key) {
        let v0 = v;
        let v = skip_blanks_and_emphasis(b, v);
        if pair && let Some(span) = pair_password(text, v) {
            return Some(span);
        }
        // `key: value` with a sensitive key name is the assignment rule's
        // to judge (mostly code: `pub Token: HANDLE`); prose only extends a
        // value it cut at `&`, or reads past markdown (`**Password:** x`).
        let judged = separator && family.is_some() && !b[v0..v].contains(&b'*');
        // `wifi password: correct horse battery staple`, `staging password:
        // tangerine-sunset-river`: after a colon, `=` or an arrow too, a passphrase of plain
        // words is one.
        let sign = separator
            && matches!(
                text[after_key..v0].trim(),
                ":" | "：" | "=" | "＝" | "->" | "→"
            );
        if let Some(Subject::Sensitive(Family::Password)) = subject
            && (!separator || sign)
            && !assigned
        {
            if let Some(end) = unquoted_passphrase(b, v) {
                return Some(Span {
                    start: v,
                    end,
                    kind: Kind::Password,
                });
            }
            if sign
                && let Some((vs, ve, false)) = prose_value_at(text, start, v, false)
                && dashed_passphrase(&text[vs..ve])
            {
                return Some(Span {
                    start: vs,
                    end: ve,
                    kind: Kind::Password,
                });
            }
        }
        if let Some(Subject::Sensitive(f)) = subject
            && (!judged || assigned)
            && let Some((vs, ve, quoted)) = prose_value_at(text, start, v, !separator)
            && !(quoted && assigned)
            && (prose_value_ok(&text[vs..ve], f, quoted)
                || (f == Family::Password
                    && !separator
                    && !assigned
                    && stated_password(&text[vs..ve])))
        {
            return Some(Span {
                start: vs,
                end: ve,
                kind: kind_of(f),
            });
        }
        // `the vault unseal key is qZ8vLmN3…`: whatever names a key, a value that is no
        // word nor identifier is its secret (`the sort key is created_at` stays).
        if let Some(Subject::BareKey | Subject::NamedKey) = subject
            && let Some((vs, ve, _)) = prose_value_at(text, start, v, !separator)
            && strongly_random(&text[vs..ve])
        {
            return Some(Span {
                start: vs,
                end: ve,
                kind: Kind::Secret,
            });
        }
    }
    if assigned {
        return None;
    }
    let subject = subject?;
    // `use password "correct horse battery staple"`: a string right after
    // the word. Only for passwords: `the token "<eos>"`, `a private key
    // "prefix||key"` name things.
    let v = skip_blanks(b, end);
    if let Subject::Sensitive(f @ Family::Password) = subject
        && v > end
        && let Some((vs, ve, true)) = prose_value_at(text, start, v, true)
        && prose_value_ok(&text[vs..ve], f, true)
    {
        return Some(Span {
            start: vs,
            end: ve,
            kind: kind_of(f),
        });
    }
    // `login: admin, password PurpleMonkey42x`: a value right after the word that mixes
    // upper and lower case and digits; after a login named just before (`user: admin,
    // password admin123`), one of letters and digits.
    if let Subject::Sensitive(Family::Password) = subject
        && v > end
        && let Some((vs, ve, false)) = prose_value_at(text, start, v, false)
        && (char_classes(&text[vs..ve]) == 3
            || (char_classes(&text[vs..ve]) == 2
                && text[vs..ve].bytes().any(|b| b.is_ascii_digit())
                && text[vs..ve].bytes().any(|b| b.is_ascii_alphabetic())
                && login_named_before(text, start)))
        && ve - vs >= 8
        && stated_password(&text[vs..ve])
    {
        return Some(Span {
            start: vs,
            end: ve,
            kind: Kind::Password,
        });
    }
    let f = match subject {
        Subject::Sensitive(f) => f,
        Subject::BareKey => Family::Other,
        // `cache key 5d41402a…`: a compound noun names a key, it does not state one.
        Subject::NamedKey => return None,
    };
    clause_hex(text, end).map(|(s, e)| Span {
        start: s,
        end: e,
        kind: kind_of(f),
    })
}

/// Whether a login is named just before byte `at`, in the same line: `login: admin, `,
/// `user=admin `, `username admin; `.
fn login_named_before(text: &str, at: usize) -> bool {
    let mut from = at.saturating_sub(48);
    while !text.is_char_boundary(from) {
        from += 1;
    }
    let before = text[from..at]
        .rsplit('\n')
        .next()
        .unwrap_or("")
        .to_ascii_lowercase();
    ["login", "user", "username"].iter().any(|w| {
        before.match_indices(w).any(|(i, _)| {
            let after = before[i + w.len()..].trim_start();
            after.starts_with([':', '=']) || after.starts_with("is ")
        })
    })
}

fn kind_of(family: Family) -> Kind {
    match family {
        Family::Password => Kind::Password,
        Family::Other => Kind::Secret,
    }
}

/// Whether `b[i]` is the letter of a `\n`, `\r` or `\t` escape (text kept as JSON).
fn escaped_letter(b: &[u8], i: usize) -> bool {
    i > 0 && b[i - 1] == b'\\' && matches!(b.get(i), Some(b'n' | b'r' | b't'))
}

/// The blank-separated word right before `start` on the same line (a JSON-escaped line
/// break before it is no part of it: `\nuse`).
fn prev_word(text: &str, start: usize) -> Option<&str> {
    let b = text.as_bytes();
    let end = start
        - b[..start]
            .iter()
            .rev()
            .take_while(|c| matches!(c, b' ' | b'\t'))
            .count();
    if end == start {
        return None;
    }
    let mut begin = end
        - b[..end]
            .iter()
            .rev()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-'))
            .count();
    if begin < end && escaped_letter(b, begin) {
        begin += 1;
    }
    (begin < end).then(|| &text[begin..end])
}

/// Only blanks and list bullets (`-`, `*`, `>`) between the line start and `i`.
fn line_start_before(b: &[u8], i: usize) -> bool {
    b[..i]
        .iter()
        .rev()
        .take_while(|c| !matches!(c, b'\n' | b'\r'))
        .all(|c| matches!(c, b' ' | b'\t' | b'-' | b'*' | b'>'))
}

/// Skips blanks and markdown emphasis (`**API key**: ...`, `Password:** x`).
fn skip_blanks_and_emphasis(b: &[u8], mut i: usize) -> usize {
    loop {
        let j = skip_blanks(b, i);
        let j = j + b[j..].iter().take_while(|&&c| c == b'*').count();
        if j == i {
            return i;
        }
        i = j;
    }
}

/// After a sensitive phrase ending at `i`: an optional qualifier
/// (`for this project`), then a copula or separator. Returns the position
/// right after it and whether it was an assignment separator (`:`, `=`),
/// which the assignment rule also reads.
fn prose_copula(text: &str, i: usize) -> Option<(usize, bool)> {
    let b = text.as_bytes();
    let j = skip_blanks(b, i);
    if let Some(sep) = PROSE_SEPARATORS.iter().find(|s| text[j..].starts_with(**s)) {
        // `::` is a path, `==` a comparison.
        let after = &text[j + sep.len()..];
        let assigns = SEPARATORS.contains(sep);
        return (!after.starts_with([':', '=', '>'])).then_some((j + sep.len(), assigns));
    }
    if j == i {
        return None;
    }
    let mut j = j;
    let mut words = 0;
    loop {
        let copula = COPULAS
            .iter()
            .find(|c| (words == 0 || **c != "to") && starts_with_word_ci(&text[j..], c));
        if let Some(c) = copula {
            let k = j + c.len();
            // `the password to the server is x`: `to` starts a qualifier.
            if *c == "to"
                && let Some(later) = prose_copula_after_qualifier(text, k)
            {
                return Some((later, false));
            }
            let k = if b.get(k) == Some(&b':') { k + 1 } else { k };
            return Some((k, false));
        }
        // Qualifier: a preposition, then up to four plain words.
        let w = word_at(b, j);
        if w == 0 || words >= 5 || (words == 0 && !eq_any_ci(&text[j..j + w], PREPOSITIONS)) {
            return None;
        }
        words += 1;
        let next = skip_blanks(b, j + w);
        if next == j + w {
            return None;
        }
        j = next;
    }
}

/// `the password to the server is x`: the copula after a `to` qualifier.
fn prose_copula_after_qualifier(text: &str, i: usize) -> Option<usize> {
    let b = text.as_bytes();
    let mut j = skip_blanks(b, i);
    for _ in 0..4 {
        let w = word_at(b, j);
        if w == 0 {
            return None;
        }
        let k = skip_blanks(b, j + w);
        if k == j + w {
            return None;
        }
        if let Some(c) = COPULAS
            .iter()
            .find(|c| **c != "to" && starts_with_word_ci(&text[k..], c))
        {
            return Some(k + c.len());
        }
        j = k;
    }
    None
}

/// Length of the plain word (`[A-Za-z0-9_.-]`) at `i`.
fn word_at(b: &[u8], i: usize) -> usize {
    b.get(i..).map_or(0, |r| {
        r.iter()
            .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'-' | b'.'))
            .count()
    })
}

fn starts_with_word_ci(s: &str, word: &str) -> bool {
    s.len() >= word.len()
        && s.as_bytes()[..word.len()].eq_ignore_ascii_case(word.as_bytes())
        && s.as_bytes()
            .get(word.len())
            .is_none_or(|c| !is_word_byte(*c))
}

/// The value at `v`: a quoted string (when `quotes`) or a bare word. Returns
/// its range and whether it was quoted. `key_start` is where the sentence's
/// sensitive word starts: a `"` or backtick right after a word copula closes
/// a string when an odd number of them precede that word on its line
/// (`"password is " + pw`).
fn prose_value_at(
    text: &str,
    key_start: usize,
    v: usize,
    quotes: bool,
) -> Option<(usize, usize, bool)> {
    let b = text.as_bytes();
    let c = *b.get(v)?;
    if c == b'\\' && matches!(b.get(v + 1), Some(b'"' | b'\'')) {
        // JSON-escaped: `\"value\"`.
        let q = b[v + 1];
        let s = v + 2;
        let e = find_escaped_close(b, s, q);
        return (quotes && e < b.len() && b[e] == b'\\').then_some((s, e, true));
    }
    if matches!(c, b'"' | b'\'' | b'`') {
        if !quotes {
            // After `:` / `=` a string is the assignment rule's business.
            let s = v + 1;
            let e = s + b[s..].iter().take_while(|&&x| x != c && x != b'\n').count();
            return (b.get(e) == Some(&c)).then_some((s, e, true));
        }
        if c != b'\'' {
            let line = text[..key_start].rfind('\n').map_or(0, |n| n + 1);
            let from = line.max(key_start.saturating_sub(1000));
            let before = b[from..key_start].iter().filter(|&&x| x == c).count();
            if before % 2 == 1 {
                return None;
            }
        }
        let s = v + 1;
        let e = s + b[s..].iter().take_while(|&&x| x != c && x != b'\n').count();
        if b.get(e) != Some(&c) || b.get(e + 1).is_some_and(|x| is_word_byte(*x)) {
            return None;
        }
        return Some((s, e, true));
    }
    let len = b[v..]
        .iter()
        .take_while(|&&x| x.is_ascii_graphic() && !matches!(x, b'"' | b'\'' | b'`' | b'\\' | b'<'))
        .count();
    let word = text[v..v + len].trim_end_matches(['.', ',', ';', ':', ')', ']', '}']);
    (!word.is_empty()).then_some((v, v + word.len(), false))
}

/// `admin / P@ssw0rd-2026!`, `admin/P@ss1`, `admin:P@ss1` at `v`: the password's span.
fn pair_password(text: &str, v: usize) -> Option<Span> {
    let b = text.as_bytes();
    let user = b[v..]
        .iter()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-' | b'@' | b'+'))
        .count();
    if user == 0 || user > 64 {
        return None;
    }
    let mut i = v + user;
    let spaced = skip_blanks(b, i);
    if b.get(spaced) == Some(&b'/') {
        i = skip_blanks(b, spaced + 1);
    } else if b.get(i) == Some(&b':') && b.get(i + 1).is_some_and(|c| !c.is_ascii_whitespace()) {
        i += 1;
    } else {
        return None;
    }
    let (s, e, _) = prose_value_at(text, 0, i, false)?;
    let pass = &text[s..e];
    let strong = pass.bytes().any(|c| !c.is_ascii_alphabetic()) || char_classes(pass) >= 2;
    (strong && prose_value_ok(pass, Family::Password, false)).then_some(Span {
        start: s,
        end: e,
        kind: Kind::Password,
    })
}

/// A credential said in prose whose value may be a short number or dash-joined groups, which
/// the prose rule refuses elsewhere (`the token is 42 chars`, `the key is 2048-bit`): its kind,
/// and whether its values are digits only.
fn code_word(text: &str, start: usize, end: usize) -> Option<(Kind, bool)> {
    let key = &text[start..end];
    // The acronym only: `pin`, `PIN_CODE` and `LED_PIN` name hardware pins as often.
    if key == "PIN" {
        return Some((Kind::Password, true));
    }
    let mut last = None;
    let mut before_last = None;
    for w in key_words(key) {
        before_last = last;
        last = Some(w);
    }
    let last = last?;
    if eq_any_ci(last, &["passcode", "passcodes"]) {
        return Some((Kind::Password, false));
    }
    (eq_any_ci(last, &["code", "codes"])
        && before_last.is_some_and(|w| eq_any_ci(w, &["recovery", "backup"])))
    .then_some((Kind::Secret, false))
}

/// `the VPN passcode is 4471-9920-1183`, `my PIN: 8812`, `the door PIN code is 4471`, `backup
/// codes are 1234-5678 and 2345-6789`: after a [`code_word`], its copula, then one
/// [`code_shaped`] value or a list of them (joined by blanks, `,`, `and`, `or`), each masked
/// on its own. Returns where the last one ends. `error code`, `exit code` are no credentials.
fn code_values(text: &str, start: usize, end: usize, out: &mut Vec<Span>) -> Option<usize> {
    let (kind, digits) = code_word(text, start, end)?;
    let b = text.as_bytes();
    let mut i = end;
    if digits {
        // `PIN code is`, `PIN number:`.
        let j = skip_blanks(b, i);
        let w = word_at(b, j);
        if j > i && eq_any_ci(&text[j..j + w], &["code", "number"]) {
            i = j + w;
        }
    }
    let (v, separator) = prose_copula(text, i)?;
    let mut v = skip_blanks_and_emphasis(b, v);
    let mut last = None;
    for _ in 0..16 {
        let Some((vs, ve, quoted)) = prose_value_at(text, start, v, !separator) else {
            break;
        };
        if !code_shaped(&text[vs..ve], digits) {
            break;
        }
        out.push(Span {
            start: vs,
            end: ve,
            kind,
        });
        last = Some(ve);
        let after = ve + usize::from(quoted);
        let mut j = skip_blanks(b, after);
        if b.get(j) == Some(&b',') {
            j = skip_blanks(b, j + 1);
        }
        let w = word_at(b, j);
        if w > 0 && eq_any_ci(&text[j..j + w], &["and", "or"]) {
            j = skip_blanks(b, j + w);
        }
        if j == after {
            break;
        }
        v = j;
    }
    last
}

/// A PIN, passcode or recovery code: 4 to 16 digits (`4471`), or two groups or more of 3 to 8
/// letters and digits joined by dashes, 8 characters or more, at least half of the groups
/// holding a digit and none a lower-case word (`4471-9920-1183`, `8FJ2-KQ9X-PL3M-77TZ`,
/// `5a2b1-c3d4e`; `2048-bit`, `6-digit`, `AES-256` stay). Unless `digits` (a PIN: `GPIO17`
/// names a pin), also one group of letters and digits said to be a password
/// ([`stated_password`]: `8FJ2KQ9X`).
fn code_shaped(v: &str, digits: bool) -> bool {
    let b = v.as_bytes();
    if b.iter().all(u8::is_ascii_digit) {
        return (4..=16).contains(&b.len());
    }
    if !b.contains(&b'-') {
        return !digits && stated_password(v);
    }
    if !b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-') {
        return false;
    }
    // A lower-case word, unless it could be hex (`c3d4e`, `abcde`).
    let word = |g: &str| {
        g.bytes().all(|c| c.is_ascii_lowercase()) && g.bytes().any(|c| !c.is_ascii_hexdigit())
    };
    let (mut groups, mut with_digit, mut alnum) = (0, 0, 0);
    for g in v.split('-') {
        let only_digits = g.bytes().all(|c| c.is_ascii_digit());
        if !(3..=8).contains(&g.len()) || (digits && !only_digits) || word(g) {
            return false;
        }
        groups += 1;
        with_digit += usize::from(g.bytes().any(|c| c.is_ascii_digit()));
        alnum += g.len();
    }
    groups >= 2 && alnum >= 8 && with_digit * 2 >= groups
}

/// Verbs that give a value its role: `use X as the password`, `set X as my password`.
const ROLE_VERBS: &[&str] = &[
    "use", "used", "uses", "using", "set", "sets", "setting", "try", "tried", "trying", "pick",
    "picked", "choose", "chose", "chosen", "enter", "entered", "type", "typed", "paste", "pasted",
    "put", "keep", "give", "gave", "with",
];

/// Words that may follow the credential word in `use X as the password for the VPN`: the noun
/// phrase has ended, unlike in `the password manager`.
const PHRASE_ENDS: &[&str] = &[
    "for", "of", "on", "at", "in", "to", "from", "with", "and", "or", "but", "so", "then", "when",
    "if", "until", "now", "instead", "please", "here", "there", "again", "too", "also",
];

/// `use s3cr3tSauce! as the password for the staging VPN`, `set Hunter2024 as my password`,
/// `try 'P@ssw0rd9' as the passphrase`: a value before the credential word, as
/// `<verb> <value> as [the|my|…] [up to two words] <word>` where the word ends its noun
/// phrase (`use 1Password as the password manager`, `use bcrypt as the password hash` stay)
/// and the value passes the prose rule's test.
fn value_before(text: &str, start: usize, end: usize, family: Option<Family>) -> Option<Span> {
    let b = text.as_bytes();
    let key = text[start..end].trim_end_matches(['.', '-']);
    // `use it as a pass`; a word that is no credential (`key` is judged by its qualifier).
    if key.eq_ignore_ascii_case("pass") || (family.is_none() && !key.eq_ignore_ascii_case("key")) {
        return None;
    }
    let j = skip_blanks(b, start + key.len());
    // Punctuation, a line break, a closing quote or bracket, or an escape (`\n` in JSON).
    let ended = start + key.len() < end
        || b.get(j).is_none_or(|&c| {
            matches!(
                c,
                b'.' | b','
                    | b';'
                    | b':'
                    | b'!'
                    | b'?'
                    | b'('
                    | b')'
                    | b'\n'
                    | b'\r'
                    | b'"'
                    | b'\''
                    | b'`'
                    | b']'
                    | b'}'
                    | b'*'
                    | b'\\'
            )
        })
        || (j > start + key.len() && eq_any_ci(&text[j..j + word_at(b, j)], PHRASE_ENDS));
    if !ended {
        return None;
    }
    // Back to `as` over a determiner and qualifiers (`as the staging VPN password`).
    let mut i = start;
    let mut family = family;
    let mut found_as = false;
    for n in 0..4 {
        let w = prev_word(text, i)?;
        let ws = w.as_ptr() as usize - text.as_ptr() as usize;
        if w.eq_ignore_ascii_case("as") {
            i = ws;
            found_as = true;
            break;
        }
        // `as the API key`: a qualified `key` (see [`KEY_QUALIFIERS`]).
        if n == 0 && family.is_none() && key.eq_ignore_ascii_case("key") {
            family = eq_any_ci(w, KEY_QUALIFIERS).then_some(Family::Other);
        }
        if !w.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
            return None;
        }
        i = ws;
    }
    let family = family?;
    if !found_as {
        return None;
    }
    let ve = i - b[..i]
        .iter()
        .rev()
        .take_while(|c| matches!(c, b' ' | b'\t'))
        .count();
    if ve == i || ve == 0 {
        return None;
    }
    let q = b[ve - 1];
    let (vs, ve, open) = if matches!(q, b'"' | b'\'' | b'`') {
        let line = text[..ve - 1].rfind('\n').map_or(0, |n| n + 1);
        let open = line + text[line..ve - 1].rfind(char::from(q))?;
        (open + 1, ve - 1, open)
    } else {
        let vs = ve
            - b[..ve]
                .iter()
                .rev()
                .take_while(|&&c| {
                    c.is_ascii_graphic() && !matches!(c, b'"' | b'\'' | b'`' | b'\\' | b'(')
                })
                .count();
        (vs, ve, vs)
    };
    let quoted = open < vs;
    let v = &text[vs..ve];
    let verb = prev_word(text, open)?;
    // Only the prose rule's test: `use getPassword2 as the password` names a function.
    let ok = eq_any_ci(verb, ROLE_VERBS) && vs < ve && prose_value_ok(v, family, quoted);
    ok.then_some(Span {
        start: vs,
        end: ve,
        kind: kind_of(family),
    })
}

/// `the router passphrase is purple monkey dishwasher`: three to six plain lower-case words
/// up to the end of the clause, none of them a stop word, a verb form or an adverb (`is
/// stored in the vault`, `is really hard to guess` stay). Returns where the passphrase ends.
fn unquoted_passphrase(b: &[u8], v: usize) -> Option<usize> {
    let end = v + b[v..]
        .iter()
        .take_while(|c| !matches!(c, b'.' | b',' | b';' | b'!' | b'?' | b'\n' | b'\r' | b'('))
        .count();
    let clause = std::str::from_utf8(&b[v..end]).ok()?;
    let words: Vec<&str> = clause.split_whitespace().collect();
    // Lower case or capitalised (`Correct Horse Battery Staple`), and a number may close it
    // (`Marble Falcon Echo 77`).
    let letters = |w: &str| {
        let rest = w.get(1..).unwrap_or("");
        w.bytes().all(|c| c.is_ascii_lowercase())
            || (w.as_bytes()[0].is_ascii_uppercase()
                && rest.bytes().all(|c| c.is_ascii_lowercase()))
    };
    let plain = |w: &&str| {
        w.len() >= 3
            && letters(w)
            && !eq_any_ci(w, PROSE_STOP_WORDS)
            && !eq_any_ci(w, PASSPHRASE_STOP_WORDS)
            && !["ed", "ing", "ly"].iter().any(|s| ends_with_ci(w, s))
    };
    let number = |w: &&str| !w.is_empty() && w.bytes().all(|c| c.is_ascii_digit());
    let words: &[&str] = match words.split_last() {
        Some((last, head)) if number(last) => head,
        _ => &words,
    };
    // `correct horse battery staple`: an adjective may open a passphrase of three more
    // words (`the password is correct` alone is prose).
    let rest = match words.first() {
        Some(w) if words.len() >= 4 && eq_any_ci(w, PASSPHRASE_OPENERS) => &words[1..],
        _ => words,
    };
    ((3..=6).contains(&words.len()) && rest.iter().all(plain)).then(|| v + clause.trim_end().len())
}

/// Words of a sentence about a password, never of a passphrase that follows `is` or `:`
/// (`the password is wrong again today`, `password: ask the team lead`).
const PASSPHRASE_STOP_WORDS: &[&str] = &[
    "and", "but", "for", "from", "with", "this", "that", "these", "those", "our", "your", "their",
    "they", "you", "its", "has", "have", "had", "was", "are", "been", "will", "would", "should",
    "could", "can", "may", "might", "must", "again", "today", "yet", "too", "anymore", "though",
    "very", "really", "some", "any", "all", "every", "each", "one", "other", "ask", "see", "check",
    "use", "same", "like", "than", "then", "into", "onto", "over", "under", "about", "after",
    "before", "inside", "outside", "vault", "env", "file", "config", "team", "admin", "unknown",
    "none", "unset", "blank", "secret", "private", "default", "standard",
];

/// Adjectives that may open a passphrase of three or more plain words.
const PASSPHRASE_OPENERS: &[&str] = &["correct", "wrong", "empty", "complete", "unique"];

/// `tangerine-sunset-river`: three or more plain words of letters joined by dashes or dots
/// (`read-only`, `end-to-end` and `up-to-date` are no passphrases).
fn dashed_passphrase(v: &str) -> bool {
    let words: Vec<&str> = v.split(['-', '.']).collect();
    v.chars().count() >= 15
        && words.len() >= 3
        && words.iter().all(|w| {
            w.len() >= 3
                && w.bytes().all(|c| c.is_ascii_alphabetic())
                && !eq_any_ci(w, PASSPHRASE_STOP_WORDS)
        })
}

fn english_looking(word: &str) -> bool {
    eq_any_ci(word, PROSE_STOP_WORDS) || ENGLISH_SUFFIXES.iter().any(|s| ends_with_ci(word, s))
}

/// Whether a value stated in prose looks like a secret rather than a word,
/// a number with a unit, a version, a name or code.
fn prose_value_ok(v: &str, family: Family, quoted: bool) -> bool {
    if v.is_empty()
        || v.trim() != v
        || v.contains(MARKER_PREFIX)
        || is_placeholder(v)
        || is_path_or_url(v)
        || eq_any_ci(v, PROSE_STOP_WORDS)
    {
        return false;
    }
    let n = v.chars().count();
    if v.contains(char::is_whitespace) {
        // A quoted passphrase: `"correct horse battery staple"`.
        return quoted
            && family == Family::Password
            && n >= 12
            && v.split_whitespace().count() >= 3;
    }
    // `correct-horse-battery-staple` (`read-only`, `JWT-based` have two words).
    if family == Family::Password && dashed_passphrase(v) {
        return true;
    }
    // `MTA1NjY3….GhIjKl.abcd…` (a Discord bot token), a JWT without its `eyJ`: dotted, with
    // a long random piece.
    let v_core = v.trim_end_matches('.');
    if v_core.contains('.')
        && v_core
            .split('.')
            .any(|seg| seg.len() >= 20 && char_classes(seg) == 3)
        && v_core
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_' | b'-'))
    {
        return true;
    }
    if (family == Family::Password && word_and_number_password(v)) || mixed_token(v) {
        return true;
    }
    if is_email(v) || number_like(v) || prose_code_like(v) || phrase_like(v) {
        return false;
    }
    // A word and punctuation: `expired!`, `incorrect.&quot;`, `stored,`.
    let head_len = v.find(['.', ',', ';', '!', '?', '&']).unwrap_or(v.len());
    let (head, tail) = v.split_at(head_len);
    if !head.is_empty() && !tail.is_empty() && head.chars().all(char::is_alphabetic) {
        let one_case = head
            .get(1..)
            .is_some_and(|r| r.chars().all(char::is_lowercase))
            || head.chars().all(char::is_uppercase);
        if is_placeholder(head)
            || english_looking(head)
            || (one_case && !tail.bytes().any(|c| c.is_ascii_alphanumeric()))
        {
            return false;
        }
    }
    if v.bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'-' | b'_'))
    {
        return n >= 16 || (family == Family::Password && n >= 6);
    }
    if v.chars().all(char::is_alphabetic) {
        let rest = v.get(1..).unwrap_or("");
        let one_case = v.chars().all(char::is_lowercase)
            || v.chars().all(char::is_uppercase)
            || rest.chars().all(char::is_lowercase);
        if !one_case {
            // Random mixed-case letters; `OpenRouter`, `GitHub` are names.
            return n >= 8 && !looks_like_code(v, None);
        }
        return family == Family::Password && n >= 8 && !english_looking(v);
    }
    n >= if family == Family::Password { 4 } else { 8 }
}

fn is_email(v: &str) -> bool {
    v.split_once('@').is_some_and(|(user, host)| {
        !user.is_empty()
            && host.contains('.')
            && !host.ends_with('.')
            && v.bytes()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'-' | b'_' | b'+' | b'@'))
    })
}

/// `1.2.3`, `v2`, `2024-01-01`, `3600s`, `32bytes`, `100%`, `2nd`.
fn number_like(v: &str) -> bool {
    let b = v.as_bytes();
    let body = match b.first() {
        Some(b'v' | b'V') => &v[1..],
        _ => v,
    };
    if !body.is_empty()
        && body.bytes().all(|c| c.is_ascii_digit() || c == b'.')
        && body.as_bytes()[0].is_ascii_digit()
        && (body.len() < v.len() || body.contains('.'))
    {
        return true;
    }
    if b.len() >= 10
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4] == b'-'
        && b[5..7].iter().all(u8::is_ascii_digit)
        && b[7] == b'-'
    {
        return true;
    }
    let digits = b.iter().take_while(|c| c.is_ascii_digit()).count();
    digits > 0 && digits < b.len() && eq_any_ci(&v[digits..], UNITS)
}

/// Code rather than a stated value: `self.token`, `get_token()`,
/// `getToken2`, `access_token`, `*ptr`, `expr=1`, `Vec<u8>`.
fn prose_code_like(v: &str) -> bool {
    let b = v.as_bytes();
    if v.contains("::") || v.contains(['(', '[', '{', '<', '>']) {
        return true;
    }
    if matches!(b[0], b'*' | b'&' | b'_' | b'.' | b'-' | b'@' | b'#' | b'/') {
        return true;
    }
    if v.trim_end_matches('=').contains('=') {
        return true;
    }
    let ident = b
        .iter()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.'));
    if !ident || !b[0].is_ascii_alphabetic() {
        return false;
    }
    if v.contains('.') {
        // `config.api_key`, `secrets.env`.
        return v.split('.').all(|seg| {
            seg.as_bytes()
                .first()
                .is_some_and(|c| c.is_ascii_alphabetic() || *c == b'_')
        });
    }
    // snake_case words (`access_token`), not `my_p4ss_word`.
    if v.contains('_') {
        return v.split('_').all(|w| {
            w.bytes().all(|c| c.is_ascii_alphabetic()) || w.bytes().all(|c| c.is_ascii_digit())
        });
    }
    // camelCase (`getToken2`); `hunter2hunter2` and `Tr0ub4dor` split only at digits.
    let camel = b
        .windows(2)
        .any(|w| w[0].is_ascii_lowercase() && w[1].is_ascii_uppercase());
    camel && looks_like_code(v, None)
}

/// Hyphenated words and numbers (`read-only`, `per-user`, `2048-bit`,
/// `AES-256`), or a compound ending in an English word (`JWT-based`,
/// `base64-encoded`).
fn phrase_like(v: &str) -> bool {
    if !v.contains('-') || !v.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'-') {
        return false;
    }
    let plain = v.split('-').all(|p| {
        p.bytes().all(|c| c.is_ascii_digit())
            || p.bytes().all(|c| c.is_ascii_lowercase())
            || (p.len() <= 5 && p.bytes().all(|c| c.is_ascii_uppercase()))
    });
    let last = v.rsplit('-').next().unwrap_or("");
    plain
        || (last.len() >= 3
            && last.bytes().all(|c| c.is_ascii_alphabetic())
            && english_looking(last))
}

/// A 32-hex-digit string (a Twilio auth token, a generic API key) in the
/// clause that starts at `from`: up to 8 words, ended by a line break or
/// sentence punctuation. Git SHAs (40) and SHA-256 digests (64) are longer.
fn clause_hex(text: &str, from: usize) -> Option<(usize, usize)> {
    let b = text.as_bytes();
    let mut i = from;
    let mut words = 0;
    while i < b.len() && i - from < 120 {
        let c = b[i];
        // Ends of a clause, or code.
        if matches!(
            c,
            b'\n'
                | b'\r'
                | b';'
                | b'!'
                | b'?'
                | b','
                | b'\\'
                | b'('
                | b')'
                | b'{'
                | b'}'
                | b'<'
                | b'>'
                | b'|'
                | b'['
        ) || (c == b'.' && b.get(i + 1).is_none_or(|n| n.is_ascii_whitespace()))
        {
            return None;
        }
        if !c.is_ascii_alphanumeric() {
            i += 1;
            continue;
        }
        let run = b[i..]
            .iter()
            .take_while(|c| c.is_ascii_alphanumeric())
            .count();
        let (s, e) = (i, i + run);
        i = e;
        words += 1;
        if words > 8 {
            return None;
        }
        if run != 32 {
            continue;
        }
        let w = &b[s..e];
        let hex = w.iter().all(u8::is_ascii_hexdigit);
        let lower = w.iter().all(|c| !c.is_ascii_uppercase());
        let upper = w.iter().all(|c| !c.is_ascii_lowercase());
        let digit = w.iter().any(u8::is_ascii_digit);
        let letter = w.iter().any(u8::is_ascii_alphabetic);
        let glued_before = s > 0 && matches!(b[s - 1], b'_' | b'-' | b'/' | b'.' | b'+');
        let glued_after = matches!(b.get(e), Some(b'_' | b'-' | b'/' | b'+'))
            || (b.get(e) == Some(&b'.') && b.get(e + 1).is_some_and(u8::is_ascii_alphanumeric));
        if hex && (lower || upper) && digit && letter && !glued_before && !glued_after {
            return Some((s, e));
        }
    }
    None
}

#[cfg(test)]
mod tests;
