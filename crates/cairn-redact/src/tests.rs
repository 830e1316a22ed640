//! Tests. Every "secret" here is generated from a deterministic PRNG in the
//! shape of a real format; no real credential is committed.

use super::*;

// ---------------------------------------------------------------------------
// Fake secret generation
// ---------------------------------------------------------------------------

/// splitmix64: tiny, deterministic, good enough for test data.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    fn string(&mut self, alphabet: &str, len: usize) -> String {
        let a = alphabet.as_bytes();
        (0..len).map(|_| a[self.below(a.len())] as char).collect()
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

const ALNUM: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const UPPER_DIGIT: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
const B64: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
const B64URL: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const LETTERS: &str = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
const DIGITS: &str = "0123456789";
const HEX: &str = "0123456789abcdef";

/// A random string guaranteed to mix upper, lower and digits (real keys do).
fn mixed(rng: &mut Rng, alphabet: &str, len: usize) -> String {
    loop {
        let s = rng.string(alphabet, len);
        if char_classes(&s) == 3 {
            return s;
        }
    }
}

/// Raw provider tokens, recognisable anywhere by their shape.
fn raw_tokens(rng: &mut Rng) -> Vec<(Kind, String)> {
    let mut v = vec![
        (Kind::OpenAiKey, format!("sk-{}", mixed(rng, ALNUM, 48))),
        (
            Kind::OpenAiKey,
            format!("sk-proj-{}", mixed(rng, B64URL, 120)),
        ),
        (
            Kind::OpenAiKey,
            format!("sk-svcacct-{}", mixed(rng, B64URL, 60)),
        ),
        (
            Kind::AnthropicKey,
            format!("sk-ant-api03-{}AA", mixed(rng, B64URL, 93)),
        ),
        (
            Kind::AnthropicKey,
            format!("sk-ant-admin01-{}", mixed(rng, B64URL, 80)),
        ),
        (
            Kind::AwsAccessKey,
            format!("AKIA{}", rng.string(UPPER_DIGIT, 16)),
        ),
        (
            Kind::AwsAccessKey,
            format!("ASIA{}", rng.string(UPPER_DIGIT, 16)),
        ),
        (
            Kind::GithubToken,
            format!(
                "github_pat_{}_{}",
                mixed(rng, ALNUM, 22),
                mixed(rng, ALNUM, 59)
            ),
        ),
        (
            Kind::GitlabToken,
            format!("glpat-{}", mixed(rng, B64URL, 20)),
        ),
        (
            Kind::SlackToken,
            format!(
                "xoxb-{}-{}-{}",
                rng.string(DIGITS, 11),
                rng.string(DIGITS, 13),
                mixed(rng, ALNUM, 24)
            ),
        ),
        (
            Kind::SlackToken,
            format!(
                "xoxp-{}-{}-{}-{}",
                rng.string(DIGITS, 11),
                rng.string(DIGITS, 11),
                rng.string(DIGITS, 13),
                rng.string(HEX, 32)
            ),
        ),
        (
            Kind::SlackToken,
            format!("xoxa-2-{}", mixed(rng, ALNUM, 40)),
        ),
        (
            Kind::SlackToken,
            format!(
                "xapp-1-A{}-{}-{}",
                rng.string(UPPER_DIGIT, 10),
                rng.string(DIGITS, 13),
                rng.string(HEX, 64)
            ),
        ),
        (
            Kind::GoogleApiKey,
            format!("AIza{}", mixed(rng, B64URL, 35)),
        ),
        (
            Kind::GoogleOauthToken,
            format!("ya29.{}", mixed(rng, B64URL, 120)),
        ),
        (
            Kind::GoogleClientSecret,
            format!("GOCSPX-{}", mixed(rng, B64URL, 28)),
        ),
        (
            Kind::StripeKey,
            format!("sk_live_{}", mixed(rng, ALNUM, 24)),
        ),
        (
            Kind::StripeKey,
            format!("rk_live_{}", mixed(rng, ALNUM, 99)),
        ),
        (
            Kind::StripeKey,
            format!("sk_test_{}", mixed(rng, ALNUM, 24)),
        ),
        (Kind::StripeKey, format!("whsec_{}", mixed(rng, ALNUM, 32))),
        (Kind::NpmToken, format!("npm_{}", mixed(rng, ALNUM, 36))),
        (
            Kind::HuggingfaceToken,
            format!("hf_{}", mixed_letters(rng, 34)),
        ),
        (
            Kind::PypiToken,
            format!("pypi-AgEIcHlwaS5vcmc{}", mixed(rng, B64URL, 70)),
        ),
        (
            Kind::SendgridKey,
            format!("SG.{}.{}", mixed(rng, B64URL, 22), mixed(rng, B64URL, 43)),
        ),
        (
            Kind::DigitaloceanToken,
            format!("dop_v1_{}", rng.string(HEX, 64)),
        ),
        (
            Kind::DigitaloceanToken,
            format!("doo_v1_{}", rng.string(HEX, 64)),
        ),
        (
            Kind::DigitaloceanToken,
            format!("dor_v1_{}", rng.string(HEX, 64)),
        ),
        (Kind::VaultToken, format!("hvs.{}", mixed(rng, B64URL, 91))),
        (Kind::VaultToken, format!("hvs.{}", mixed(rng, ALNUM, 24))),
        (Kind::VaultToken, format!("hvb.{}", mixed(rng, B64URL, 138))),
        (
            Kind::DockerToken,
            format!("dckr_pat_{}", mixed(rng, B64URL, 27)),
        ),
        (Kind::ShopifyToken, format!("shpat_{}", rng.string(HEX, 32))),
        (
            Kind::OpenrouterKey,
            format!("sk-or-v1-{}", rng.string(HEX, 64)),
        ),
        (Kind::GroqKey, format!("gsk_{}", mixed(rng, ALNUM, 52))),
        (Kind::XaiKey, format!("xai-{}", mixed(rng, ALNUM, 80))),
        (
            Kind::DatabricksToken,
            format!("dapi{}", rng.string(HEX, 32)),
        ),
        (
            Kind::DatabricksToken,
            format!("dapi{}-2", rng.string(HEX, 32)),
        ),
        (
            Kind::TelegramBotToken,
            format!("{}:AA{}", rng.string(DIGITS, 10), mixed(rng, B64URL, 33)),
        ),
        (
            Kind::Jwt,
            format!(
                "eyJ{}.eyJ{}.{}",
                mixed(rng, B64URL, 33),
                mixed(rng, B64URL, 90),
                mixed(rng, B64URL, 43)
            ),
        ),
    ];
    for prefix in ["ghp_", "gho_", "ghu_", "ghs_", "ghr_"] {
        v.push((
            Kind::GithubToken,
            format!("{prefix}{}", mixed(rng, ALNUM, 36)),
        ));
    }
    v
}

fn mixed_letters(rng: &mut Rng, len: usize) -> String {
    loop {
        let s = rng.string(LETTERS, len);
        if char_classes(&s) == 2 {
            return s;
        }
    }
}

/// Realistic places a raw token shows up; `{}` is the token.
const RAW_CONTEXTS: &[&str] = &[
    "{}",
    "$ echo {} | pbcopy",
    "$ curl -s https://api.example.com/v1/models -H \"X-Custom: {}\" | jq .",
    r#"{"type":"tool_result","content":"found key {} in ~/.config/app.toml"}"#,
    "DEBUG=true\nSOME_VALUE={}\nPORT=8080\n",
    "2024-05-01T12:00:00Z WARN request failed credential={} retry=3",
    "Use `{}` as the key, then restart.",
    "APIキーは{}です。設定ファイルを確認してください。",
    "密钥：{}，请勿泄露。",
    "key='{}'",
    "<td>{}</td>",
    "[{}]",
];

fn marker(kind: Kind) -> String {
    format!("{MARKER_PREFIX}{kind}]")
}

/// `text` with `secret` in it, and the exact expected redaction.
struct Case {
    kind: Kind,
    secret: String,
    text: String,
}

impl Case {
    fn new(kind: Kind, secret: &str, template: &str) -> Case {
        Case {
            kind,
            secret: secret.to_owned(),
            text: template.replace("{}", secret),
        }
    }

    fn expected(&self) -> String {
        self.text.replace(&self.secret, &marker(self.kind))
    }
}

fn pem_body(rng: &mut Rng, lines: usize) -> Vec<String> {
    let mut body: Vec<String> = (0..lines).map(|_| mixed(rng, B64, 64)).collect();
    body.push(format!("{}==", mixed(rng, B64, 22)));
    body
}

fn all_cases() -> Vec<Case> {
    let mut rng = Rng(0xCA1A_2024);
    let mut cases = Vec::new();

    for (kind, token) in raw_tokens(&mut rng) {
        for ctx in RAW_CONTEXTS {
            cases.push(Case::new(kind, &token, ctx));
        }
        // Assigned to a sensitive key: the specific kind wins over `secret`.
        cases.push(Case::new(kind, &token, "export SERVICE_TOKEN={}"));
        cases.push(Case::new(
            kind,
            &token,
            r#"{"api_key": "{}", "model": "x"}"#,
        ));
    }

    // Private keys: complete, JSON-escaped, truncated, flattened.
    for label in ["RSA ", "", "OPENSSH ", "EC ", "ENCRYPTED ", "PGP "] {
        let block_word = if label == "PGP " { " BLOCK" } else { "" };
        let begin = format!("-----BEGIN {label}PRIVATE KEY{block_word}-----");
        let end = format!("-----END {label}PRIVATE KEY{block_word}-----");
        let body = pem_body(&mut rng, 6);
        let block = format!("{begin}\n{}\n{end}", body.join("\n"));
        cases.push(Case::new(
            Kind::PrivateKey,
            &block,
            "$ cat ~/.ssh/id_key\n{}\n$ ls -la\ntotal 8\n",
        ));
        let crlf = format!("{begin}\r\n{}\r\n{end}", body.join("\r\n"));
        cases.push(Case::new(Kind::PrivateKey, &crlf, "key file:\r\n{}\r\nok"));
    }
    let body = pem_body(&mut rng, 4);
    let escaped = format!(
        "-----BEGIN PRIVATE KEY-----\\n{}\\n-----END PRIVATE KEY-----\\n",
        body.join("\\n")
    );
    cases.push(Case::new(
        Kind::PrivateKey,
        &escaped,
        r#"{"type": "service_account", "private_key": "{}", "client_email": "bot@proj.iam.gserviceaccount.com"}"#,
    ));
    let body = pem_body(&mut rng, 5);
    let truncated = format!(
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-128-CBC,{}\n\n{}\n{}",
        rng.string(HEX, 32).to_uppercase(),
        body[..3].join("\n"),
        &body[3][..30]
    );
    cases.push(Case::new(
        Kind::PrivateKey,
        &truncated,
        "output truncated:\n{}\n\nThe key above is cut off at 2000 chars.",
    ));
    let truncated_json = format!(
        "-----BEGIN PRIVATE KEY-----\\n{}\\n{}",
        body[0],
        &body[1][..40]
    );
    cases.push(Case::new(
        Kind::PrivateKey,
        &truncated_json,
        r#"{"private_key": "{}"#,
    ));
    let flat = format!(
        "-----BEGIN OPENSSH PRIVATE KEY----- {} -----END OPENSSH PRIVATE KEY-----",
        body.join(" ")
    );
    cases.push(Case::new(Kind::PrivateKey, &flat, "SSH_KEY=\"{}\""));
    let flat_truncated = format!("-----BEGIN PRIVATE KEY----- {} {}", body[0], body[1]);
    cases.push(Case::new(
        Kind::PrivateKey,
        &flat_truncated,
        "value: {} (truncated)",
    ));

    // Bearer / Basic.
    let opaque = mixed(&mut rng, ALNUM, 40);
    for t in [
        "curl -H \"Authorization: Bearer {}\" https://api.example.com/v1/me",
        "Authorization: bearer {}",
        r#"{"headers": {"Authorization": "Bearer {}"}}"#,
        "请求头 Authorization: Bearer {} 已过期",
        "fetch(url, { headers: { authorization: `Bearer {}` } })",
    ] {
        cases.push(Case::new(Kind::BearerToken, &opaque, t));
    }
    let basic = format!("{}=", mixed(&mut rng, B64, 27));
    for t in [
        "curl -H 'Authorization: Basic {}' https://registry.example.com/v2/",
        r#"{"Authorization": "Basic {}"}"#,
    ] {
        cases.push(Case::new(Kind::BasicAuth, &basic, t));
    }
    // A JWT as a bearer token keeps its more specific kind.
    let jwt = format!(
        "eyJ{}.eyJ{}.{}",
        mixed(&mut rng, B64URL, 20),
        mixed(&mut rng, B64URL, 60),
        mixed(&mut rng, B64URL, 43)
    );
    cases.push(Case::new(Kind::Jwt, &jwt, "Authorization: Bearer {}"));

    // URL credentials and connection strings.
    let pw = format!(
        "{}!{}",
        mixed(&mut rng, ALNUM, 10),
        mixed(&mut rng, ALNUM, 6)
    );
    for t in [
        "git clone https://alice:{}@github.example.com/org/repo.git",
        "DATABASE_URL=postgres://app:{}@db.internal:5432/app?sslmode=require",
        "postgresql://app:{}@localhost/app",
        "mysql://root:{}@127.0.0.1:3306/shop",
        "MONGO_URI=\"mongodb+srv://svc:{}@cluster0.ab1cd.mongodb.net/?retryWrites=true\"",
        "redis://:{}@cache.internal:6379/0",
        "amqps://guest:{}@mq.example.com/vhost",
        "接続先は postgres://app:{}@db:5432/app です",
        "dsn := \"app:{}@tcp(127.0.0.1:3306)/shop?parseTime=true\"",
    ] {
        cases.push(Case::new(Kind::UrlPassword, &pw, t));
    }
    let gh = format!("ghs_{}", mixed(&mut rng, ALNUM, 36));
    cases.push(Case::new(
        Kind::GithubToken,
        &gh,
        "remote: https://x-access-token:{}@github.com/org/repo.git",
    ));
    let slack_path = format!(
        "T{}/B{}/{}",
        rng.string(UPPER_DIGIT, 9),
        rng.string(UPPER_DIGIT, 10),
        mixed(&mut rng, ALNUM, 24)
    );
    cases.push(Case::new(
        Kind::SlackWebhook,
        &slack_path,
        "curl -X POST -d '{\"text\":\"deployed\"}' https://hooks.slack.com/services/{}",
    ));
    let discord = mixed(&mut rng, B64URL, 68);
    cases.push(Case::new(
        Kind::DiscordWebhook,
        &discord,
        "WEBHOOK=https://discord.com/api/webhooks/123456789012345678/{}",
    ));
    let curl_pw = mixed(&mut rng, ALNUM, 14);
    cases.push(Case::new(
        Kind::Password,
        &curl_pw,
        "curl -u admin:{} https://jenkins.example.com/api/json",
    ));
    cases.push(Case::new(
        Kind::Password,
        &curl_pw,
        "curl --user 'deploy:{}' -X POST https://ci.example.com",
    ));

    // Assignments: the key name stays, the value goes.
    let aws_secret = mixed(&mut rng, B64, 40);
    for t in [
        "aws_secret_access_key = {}",
        "AWS_SECRET_ACCESS_KEY={}",
        "export AWS_SECRET_ACCESS_KEY=\"{}\"",
        r#"{"Credentials": {"AccessKeyId": "x", "SecretAccessKey": "{}", "Expiration": "2024-01-01"}}"#,
        "[default]\naws_access_key_id = x\naws_secret_access_key={}\nregion = us-east-1\n",
    ] {
        cases.push(Case::new(Kind::AwsSecretKey, &aws_secret, t));
    }
    let generic = mixed(&mut rng, ALNUM, 32);
    for t in [
        "export OPENAI_API_KEY={}",
        "API_KEY=\"{}\"",
        r#"{"client_secret": "{}", "redirect_uri": "http://localhost:8080/cb"}"#,
        "token = \"{}\"\nmax_tokens = 4096",
        "X-Api-Key: {}",
        "curl -H 'x-api-key: {}' https://api.example.com",
        r#"{"auths": {"registry.example.com": {"auth": "{}"}}}"#,
        "client = OpenAI(api_key=\"{}\")",
        "$env:GITHUB_TOKEN = \"{}\"",
        "app --api-key={} --verbose",
        "app --token {} --verbose",
        "SECRET_KEY_BASE={}",
        "webhookSecret: '{}'",
        "signing_key => '{}',",
        "apiKey := \"{}\"",
        r#"{\"apiKey\": \"{}\"}"#,
        "https://api.example.com/v1/search?q=rust&api_key={}&page=2",
        "GET /callback?code=abc&access_token={} HTTP/1.1",
        "session_token={}; Path=/",
        "ログ: token={} を使用",
        "OAUTH_CLIENT_SECRET：{}",
        "AccountKey={};EndpointSuffix=core.windows.net",
        "refresh_token: {}",
        "const API_KEY: &str = \"{}\";",
        "private readonly apiKey: string = '{}';",
        "SECRET_B64={}",
    ] {
        cases.push(Case::new(Kind::Secret, &generic, t));
    }
    for pw in [
        "hunter2!x",
        "p4ss",
        "correct horse battery staple",
        "Tr0ub4dor",
    ] {
        for t in [
            r#"{"username": "admin", "password": "{}"}"#,
            "password: \"{}\"",
            "db_password = '{}'",
            "def connect(password: str = \"{}\"):",
            r#"{\"password\": \"{}\"}"#,
        ] {
            cases.push(Case::new(Kind::Password, pw, t));
        }
    }
    let pw = format!("{}9", mixed(&mut rng, ALNUM, 12));
    for t in [
        "PGPASSWORD={} psql -h db -U app",
        "DB_PASSWORD: {}",
        "mysql_pwd={}",
        "docker login --password {} registry.example.com",
        "Password={};Server=db;Database=app",
        "host=db port=5432 user=app password={} dbname=app",
        "password_confirmation={}",
        "パスワード password={} を設定しました",
        "MYSQL_ROOT_PASSWORD={}",
        "SMTP_PASS={}",
    ] {
        cases.push(Case::new(Kind::Password, &pw, t));
    }
    cases.extend(prose_cases(&mut rng));
    cases
}

/// Secrets stated in prose rather than assigned.
fn prose_cases(rng: &mut Rng) -> Vec<Case> {
    let mut cases = Vec::new();
    for (pw, t) in [
        ("Tr0ub4dor&3horse", "remember the staging db password is {}"),
        ("hunter2hunter2", "my sudo password is {}"),
        ("S3cr3t!x", "my db password for this project is {}"),
        ("correct horse battery staple", "use password \"{}\""),
        (
            "correct horse battery staple",
            "use password '{}' to unlock",
        ),
        ("P@ssw0rd-2026!", "the admin login is admin / {}"),
        ("P@ssw0rd-2026!", "Login: deploy/{}"),
        ("Xk9#mQ2vLp", "credentials are ci-bot:{} for now"),
        ("Tr0ub4dor&3horse", "passphrase: {}"),
        ("Tr0ub4dor&3horse", "DB_PASSWORD={}"),
        ("Zq7!rT2p", "The password was set to {} yesterday."),
        ("Hunter22!", "I changed the root password to {} just now"),
        ("P4ssw0rd99", "the wifi password → {}"),
        ("P4ssw0rd99", "the wifi password -> {}"),
        ("abc123!x", "my pwd is {}."),
        ("Tr0ub4dor&3", "**Password:** {}"),
        ("Tr0ub4dor&3", "the password to the server is {}"),
        (
            "hunter2hunter2",
            r#"{"text":"my sudo password is {}\nthanks"}"#,
        ),
        (
            "correct horse battery staple",
            r#"{"text":"use password \"{}\" for the vault"}"#,
        ),
        ("hunter2hunter2", "the password is `{}`"),
        ("swordfish", "the password is \"{}\""),
        ("Swordfish", "the password is {}"),
        ("123456789", "the PIN password is {}"),
        ("4471-9920-1183", "the VPN passcode is {}"),
        ("4471", "the door PIN is {}"),
        ("8812", "my PIN: {}"),
        ("s3cr3tSauce!", "use {} as the password for the staging VPN"),
        ("Hunter2024", "set {} as my password"),
        ("P@ssw0rd9", "try {} as the passphrase"),
    ] {
        cases.push(Case::new(Kind::Password, pw, t));
    }
    let hex = rng.string(HEX, 32);
    let mixed_value = mixed(rng, ALNUM, 16);
    let symbol_value = format!("{}#{}", mixed(rng, ALNUM, 6), mixed(rng, ALNUM, 6));
    for (v, t) in [
        (hex.as_str(), "the API key is {}"),
        (hex.as_str(), "twilio auth token {}"),
        (
            hex.as_str(),
            "Twilio auth token for the ops account {} (rotated)",
        ),
        (hex.as_str(), "the key is {}"),
        (hex.as_str(), "Key: {}"),
        (hex.as_str(), "**API key**: {}"),
        (hex.as_str(), "apikey is {}"),
        (hex.as_str(), "the API key is a 32-char hex: {}"),
        (mixed_value.as_str(), "token is {}"),
        (mixed_value.as_str(), "the access key is {}"),
        (mixed_value.as_str(), "the API key should be {}"),
        (symbol_value.as_str(), "secret is {}"),
        (symbol_value.as_str(), "the client secret is now {}"),
        (
            "qZ8vLmN3pR5tW7yB9dF1hJ4kM6nP2sU0xA",
            "remember that the vault unseal key is {}",
        ),
        ("8FJ2-KQ9X-PL3M-77TZ", "the 2FA recovery code is {}"),
    ] {
        cases.push(Case::new(Kind::Secret, v, t));
    }
    let upper = hex.to_uppercase();
    cases.push(Case::new(Kind::Secret, &upper, "auth token {}"));
    cases
}

// ---------------------------------------------------------------------------
// Positive tests
// ---------------------------------------------------------------------------

#[test]
fn all_patterns_compile() {
    let engine = &*ENGINE;
    assert_eq!(engine.detectors.len(), SPECS.len());
    assert!(!engine.prefilter.as_str().is_empty());
    // Detectors compile lazily: force every one.
    for d in &engine.detectors {
        match &d.matcher {
            Matcher::Pattern { re, .. } => assert!(!re.get().as_str().is_empty()),
            Matcher::PrivateKey { begin, end } => {
                assert!(!begin.get().as_str().is_empty() && !end.get().as_str().is_empty())
            }
            Matcher::Assignment { word } => assert!(!word.get().as_str().is_empty()),
        }
    }
}

#[test]
fn kinds_are_listed_in_priority_order_with_unique_names() {
    let mut names = std::collections::HashSet::new();
    for w in Kind::ALL.windows(2) {
        assert!(w[0] < w[1], "{:?} must sort before {:?}", w[0], w[1]);
    }
    for k in Kind::ALL {
        assert!(names.insert(k.as_str()), "duplicate name {k}");
        assert_eq!(k.to_string(), k.as_str());
        assert!(
            k.as_str()
                .bytes()
                .all(|c| c.is_ascii_lowercase() || c == b'-')
        );
    }
}

#[test]
fn every_case_is_redacted_exactly() {
    let cases = all_cases();
    assert!(cases.len() > 300, "{} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let got = redact(&case.text);
        let want = case.expected();
        if got != want {
            failures.push(format!(
                "kind {}\n  text: {:?}\n  want: {:?}\n   got: {:?}",
                case.kind, case.text, want, got
            ));
        }
        assert!(
            !got.contains(&case.secret),
            "secret survived in {:?}",
            case.text
        );
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

#[test]
fn every_detected_kind_is_covered() {
    let covered: std::collections::HashSet<Kind> = all_cases().iter().map(|c| c.kind).collect();
    for k in Kind::ALL {
        assert!(covered.contains(&k), "no test case for {k}");
    }
}

/// Every match of every pattern contains one of its detector's trigger
/// literals, so the single prefilter scan can never hide a secret.
#[test]
fn prefilter_triggers_cover_every_match() {
    let cases = all_cases();
    for (spec, det) in SPECS.iter().zip(&ENGINE.detectors) {
        let Matcher::Pattern { re, .. } = &det.matcher else {
            continue;
        };
        let literals = trigger_literals(spec);
        for case in &cases {
            for m in re.get().find_iter(&case.text) {
                let s = m.as_str();
                assert!(
                    literals.iter().any(|t| s.contains(t.as_str())),
                    "{:?} matched {s:?} without a trigger",
                    spec.kind
                );
            }
        }
    }
    for case in &cases {
        assert!(ENGINE.candidates(&case.text) != 0, "{:?}", case.text);
    }
}

#[test]
fn candidates_name_the_right_detectors() {
    let bit = |kind: Kind| 1u64 << SPECS.iter().position(|s| s.kind == kind).unwrap();
    let e = &*ENGINE;
    assert!(SPECS.len() <= 64, "candidate bit set is a u64");
    assert_eq!(e.candidates("plain words only"), 0);
    // `sk-ant-` also starts the `sk-` detector; overlapping triggers
    // (`Authorization` holds `auth`) are all seen.
    let c = e.candidates("x sk-ant-y and Authorization: z");
    for kind in [
        Kind::AnthropicKey,
        Kind::OpenAiKey,
        Kind::BasicAuth,
        Kind::Secret,
    ] {
        assert!(c & bit(kind) != 0, "{kind}");
    }
    assert_eq!(c & bit(Kind::Jwt), 0);
    assert!(e.candidates("DB_PASSWORD=x") & bit(Kind::Secret) != 0);
    assert!(e.candidates("dbPassword: x") & bit(Kind::Secret) != 0);
}

#[test]
fn detailed_report_and_in_place() {
    let mut rng = Rng(7);
    let aws = format!("AKIA{}", rng.string(UPPER_DIGIT, 16));
    let gh = format!("ghp_{}", mixed(&mut rng, ALNUM, 36));
    let text = format!(
        "keys: {aws} and {gh}; password=\"{}\"",
        mixed(&mut rng, ALNUM, 12)
    );
    let r = redact_detailed(&text);
    assert_eq!(r.count, 3);
    assert_eq!(
        r.kinds,
        vec![Kind::AwsAccessKey, Kind::GithubToken, Kind::Password]
    );
    assert_eq!(
        r.text,
        "keys: [REDACTED:aws-access-key] and [REDACTED:github-token]; password=\"[REDACTED:password]\""
    );

    let mut s = text.clone();
    assert_eq!(redact_in_place(&mut s), 3);
    assert_eq!(s, r.text);
    assert_eq!(redact_in_place(&mut s), 0);
    assert!(contains_secret(&text));
    assert!(!contains_secret(&s));

    let clean = redact_detailed("nothing to see here");
    assert_eq!(clean.count, 0);
    assert!(clean.kinds.is_empty());
    assert!(matches!(clean.text, Cow::Borrowed(_)));
}

#[test]
fn adjacent_and_repeated_secrets() {
    let mut rng = Rng(11);
    let a = format!("AKIA{}", rng.string(UPPER_DIGIT, 16));
    let b = format!("ASIA{}", rng.string(UPPER_DIGIT, 16));
    let text = format!("{a},{b},{a}\n{a}");
    let m = marker(Kind::AwsAccessKey);
    assert_eq!(redact(&text), format!("{m},{m},{m}\n{m}"));
    assert_eq!(redact_detailed(&text).count, 4);
}

#[test]
fn truncated_key_keeps_following_prose() {
    let mut rng = Rng(3);
    let line = mixed(&mut rng, B64, 64);
    let text = format!("-----BEGIN PRIVATE KEY-----\n{line}\n{line}\nThe key above is cut.");
    assert_eq!(
        redact(&text),
        "[REDACTED:private-key]\nThe key above is cut."
    );
    // Header only (cut right after BEGIN).
    assert_eq!(
        redact("x -----BEGIN EC PRIVATE KEY-----"),
        "x [REDACTED:private-key]"
    );
    // Two blocks: the first truncated one stops at the second BEGIN.
    let text = format!(
        "-----BEGIN PRIVATE KEY-----\n{line}\nmid\n-----BEGIN PRIVATE KEY-----\n{line}\n-----END PRIVATE KEY-----\nafter"
    );
    assert_eq!(
        redact(&text),
        "[REDACTED:private-key]\nmid\n[REDACTED:private-key]\nafter"
    );
}

// ---------------------------------------------------------------------------
// False positives
// ---------------------------------------------------------------------------

const CLEAN: &[&str] = &[
    "",
    "hello world",
    "max_tokens = 4096",
    "token_count: 12",
    r#"{"usage": {"input_tokens": 1523, "output_tokens": 88, "cache_read_input_tokens": 20480}}"#,
    r#"{"type": "token_count", "info": {"total_token_usage": {"input_tokens": 9}}}"#,
    "password_reset_url = \"/account/password/reset\"",
    "password_min_length = 12",
    "secret_name: my-app-secrets",
    "secretKeyRef:\n  name: db\n  key: password",
    "tokenizer = \"cl100k_base\"",
    "token_type: bearer",
    "pad_token = \"<pad>\"\neos_token: \"</s>\"",
    "api_key_env = \"OPENAI_API_KEY\"",
    "token: ${{ secrets.GITHUB_TOKEN }}",
    "export API_KEY=$OPENAI_API_KEY",
    "export TOKEN=${GITHUB_TOKEN}",
    "password: <your-password>",
    "api_key: your-api-key-here",
    "password: changeme",
    "password = \"xxxxxxxx\"",
    "token: \"********\"",
    "password: \"\"",
    "password=",
    "token: null\nsecret: None\nauth: true",
    "PWD=/home/alice/src/cairn\nOLDPWD=/home/alice",
    "GOOGLE_APPLICATION_CREDENTIALS=/home/alice/keys/service-account.json",
    "private_key_path: keys/deploy.pem",
    "token_url: https://oauth2.googleapis.com/token",
    "Author: Jane Doe <jane@example.com>\nDate:   Mon Jan 1 12:00:00 2024 +0000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8\nMerge: 1a2b3c4 5d6e7f8\n\n    fix(auth): refresh token before expiry\n",
    "550e8400-e29b-41d4-a716-446655440000",
    "sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "https://github.com/rust-lang/regex/blob/master/src/lib.rs#L10",
    "https://user@example.com/path?x=1",
    "ssh://git@github.com:22/org/repo.git",
    "git@github.com:org/repo.git",
    "http://[::1]:8080/health",
    "/home/alice/.ssh/id_ed25519 ~/.aws/credentials C:\\Users\\bob\\token.txt",
    "running 12 tests\ntest tests::redacts_password ... ok\ntest tests::token_count_ok ... ok\n\ntest result: ok. 12 passed; 0 failed; 0 ignored; finished in 0.01s",
    "   Compiling cairn-redact v0.1.0 (/home/dev/src/cairn/crates/cairn-redact)\n    Finished `test` profile [unoptimized + debuginfo] target(s) in 3.2s",
    "Bearer authentication is required for this endpoint.",
    "Authorization: Bearer $TOKEN",
    "curl -H \"Authorization: Bearer ${API_TOKEN}\" https://api.example.com",
    "the scikit-learn and sk-learn-compatible estimators",
    "task-runner disk-usage risk-assessment",
    "def test_sk_test_environment_config(): pass",
    "from huggingface_hub import hf_hub_download",
    "Asia/Tokyo and Asia/Kolkata",
    "xoxo-hugs-and-kisses",
    "git push -u origin main && set -u",
    "ENGINE = 'django.db.backends.postgresql'",
    "monkey: 12345678\nturnkey: yes\nkeyboard: us",
    "The password is stored in the keychain; never log the token.",
    "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",
    r#"fn login(user: &str, password: &str) -> Result<Token, Error> {
    let token = auth::login(user, password)?;
    let api_key = config.api_key.clone();
    let secret: SecretString = std::env::var("SECRET")?.into();
    Ok(token)
}
pub struct Config { pub api_key: Option<String>, pub token: String, pub max_tokens: u32 }"#,
    r#"def get_token(self) -> str:
    token = os.environ.get("GITHUB_TOKEN")
    password = getpass.getpass("Password: ")
    api_key = settings.API_KEY
    headers = {"Authorization": f"Bearer {token}"}
    secret = access_token
    if not token:
        raise ValueError("missing token")
    return token"#,
    "const apiKey = process.env.API_KEY;\nconst token = await getToken();\nconst { password } = req.body;",
    "logger.info(\"password=%s\", masked)\nprint(f\"token={token}\")",
    "[REDACTED:aws-secret-key] and password=[REDACTED:password] https://u:[REDACTED:url-password]@h",
    "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAE\n-----END PUBLIC KEY-----",
    "-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUZ\n-----END CERTIFICATE-----",
    "令牌数量 token_count=42，最大 max_tokens=8192。",
    "トークン数: 1234, パスワードは設定済み",
    "auth_method: oauth\nauthenticated: true\nauthority: https://login.example.com",
    "password: String,\npassword: impl Into<String>,\ntoken: Option<&'a str>,",
    "pass_through: true\nbypass: cache",
    // Shapes found by running the redactor over ~100 MB of crates.io
    // sources and synthetic agent transcripts.
    "pwd: *mut passwd,\npub pw_passwd: *mut c_char,",
    "iToken: ::core::ffi::c_int,\npub const IFLA_INET6_TOKEN: _bindgen_ty_5 = _bindgen_ty_5::IFLA_INET6_TOKEN;",
    "pFrame->token = pProgram->token;\nnToken = iEnd-iStart;",
    "pub const XCN_NCRYPT_PCP_ENCRYPTION_KEY: X509HardwareKeyUsageFlags = 2i32;",
    "pub const DEVSTAT_MATCH_PASS = 0x04;\nSQLITE_AUTH => Self::Auth,",
    "pub ExpandExporterMasterKey: SslExpandExporterMasterKeyFn,",
    "let token: String = get_token();\nlet debug_token = ttl_column.\nlet x_auth = authorizer;",
    "2026-04-26T03:21:38Z  INFO delete::secret: `credential_prompt` secret: expr=70925",
    "WARN span::credential: `postgres` and auth: `benchmark_tls`",
];

/// Prose around sensitive words that states no secret.
const PROSE_CLEAN: &[&str] = &[
    "the password is stored in 1password under proj-db",
    "the password is rotated monthly",
    "the token is expired",
    "the token is expired!",
    "the secret is in vault",
    "password is required",
    "the API key is read from the environment",
    "the password is incorrect.&quot;);",
    "the password is 12 characters long",
    "the token is valid for 3600s",
    "the API key is a 32-char hex string",
    "the password is hashed with bcrypt",
    "the secret is base64-encoded",
    "the token is JWT-based",
    "the password is case-sensitive",
    "the password is 12-character",
    "the key is 2048-bit",
    "the token is OpenRouter's",
    "the token is GitHub-specific and short-lived",
    "the password is whatever you set",
    "the password is somewhere in slack",
    "the password is generated on first run",
    "the password is available in the team vault",
    "the password is different on staging",
    "the password is the same as before",
    "the password for the database is in the vault",
    "the password manager is 1Password",
    "the token count is 123456",
    "the token to use is the one from step 2",
    "the session token is v2",
    "the API key is OpenAI's default",
    "the secret is that nobody reads the docs",
    "the token is 42 chars",
    "the password is v1.2.3",
    "the token was created on 2024-01-01",
    "the login is handled by the auth middleware",
    "the login is alice@example.com",
    "login is admin / admin",
    "login is foo/bar",
    "the credentials are in ~/.aws/credentials",
    "the token is `GITHUB_TOKEN`",
    "the token is $GITHUB_TOKEN",
    "the secret is `secrets.env`",
    "the secret is config.api_key",
    "the token is access_token",
    "the key is stored at ~/.ssh/id_ed25519",
    "the token is <your-token>",
    "the token \"<eos>\" ends a sequence",
    "/// Formats a private key \"prefix||private_key||middle||public_key\" where",
    "the test pass is 100%",
    "if token is None:\n    return",
    "assert token is valid_token",
    "while password is not None and key is Key.ENTER:",
    "print(\"password is \" + pw + \" ok\")",
    "log(\"token is %s\", tok)",
    "msg = `token is ${token}`",
    "commit 1a2b3c4d5e6f7a8b9c0d1e2f3a4b5c6d7e8f9a0b fixed it",
    "checksum sha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "the token refresh landed in commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    "fix(auth): refresh token\n\nsha256 e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
    "cache key 5d41402abc4b2a76b9719d911017c592",
    "let key = \"5d41402abc4b2a76b9719d911017c592\";",
    "the request id is 5d41402abc4b2a76b9719d911017c592",
    "the token expired. Request 5d41402abc4b2a76b9719d911017c592 failed",
    "auth failed for blob/5d41402abc4b2a76b9719d911017c592.json",
    "hvs is the prefix of Vault service tokens; dop_v1_ is DigitalOcean's",
];

#[test]
fn prose_without_a_secret_is_clean() {
    let failures: Vec<String> = PROSE_CLEAN
        .iter()
        .filter(|t| contains_secret(t) || matches!(redact(t), Cow::Owned(_)))
        .map(|t| format!("{t:?}\n   -> {:?}", redact(t)))
        .collect();
    assert!(
        failures.is_empty(),
        "false positives:\n{}",
        failures.join("\n")
    );
}

#[test]
fn prose_keeps_the_words_and_replaces_the_value() {
    for (text, want) in [
        (
            "remember the staging db password is Tr0ub4dor&3horse",
            "remember the staging db password is [REDACTED:password]",
        ),
        (
            "the admin login is admin / P@ssw0rd-2026!",
            "the admin login is admin / [REDACTED:password]",
        ),
        (
            "use password \"correct horse battery staple\"",
            "use password \"[REDACTED:password]\"",
        ),
        (
            "the API key is 4f9c2a1b8e7d6c5b4a39281706f5e4d3, the password is Zx9!pq77.",
            "the API key is [REDACTED:secret], the password is [REDACTED:password].",
        ),
    ] {
        assert_eq!(redact(text), want);
    }
    let r = redact_detailed("my sudo password is hunter2hunter2 and token is ghx8Hq2LmPz9Kw3R");
    assert_eq!(r.count, 2);
    assert_eq!(r.kinds, vec![Kind::Password, Kind::Secret]);
}

#[test]
fn clean_text_is_borrowed() {
    let mut failures = Vec::new();
    for text in CLEAN {
        match redact(text) {
            Cow::Borrowed(b) => assert_eq!(b, *text),
            Cow::Owned(o) => failures.push(format!("{text:?}\n   -> {o:?}")),
        }
        assert!(!contains_secret(text), "{text:?}");
    }
    assert!(
        failures.is_empty(),
        "false positives:\n{}",
        failures.join("\n")
    );
}

#[test]
fn ordinary_hex_and_uuids_are_clean() {
    let mut rng = Rng(99);
    for _ in 0..200 {
        let sha = rng.string(HEX, 64);
        let uuid = format!(
            "{}-{}-4{}-a{}-{}",
            rng.string(HEX, 8),
            rng.string(HEX, 4),
            rng.string(HEX, 3),
            rng.string(HEX, 3),
            rng.string(HEX, 12)
        );
        let text = format!("commit {sha}\nrequest_id={uuid} session {uuid}\n");
        assert!(matches!(redact(&text), Cow::Borrowed(_)), "{text}");
    }
}

// ---------------------------------------------------------------------------
// Properties
// ---------------------------------------------------------------------------

/// Fragments that exercise every detector and the syntax around them.
fn fragments(rng: &mut Rng) -> Vec<String> {
    let mut f: Vec<String> = raw_tokens(rng).into_iter().map(|(_, t)| t).collect();
    f.extend(
        [
            " ",
            "\n",
            "\t",
            "\r\n",
            "\\n",
            "=",
            ": ",
            "：",
            "\"",
            "'",
            "\\\"",
            "`",
            ",",
            ";",
            "&",
            "@",
            "://",
            "https",
            "postgres",
            "user",
            ":",
            "/",
            "?",
            "#",
            "[",
            "]",
            "{",
            "}",
            "(",
            ")",
            "<",
            ">",
            "$",
            "%",
            "--",
            "-u ",
            "password",
            "PASSWORD",
            "api_key",
            "Token",
            "secret",
            "auth",
            "Authorization: ",
            "Bearer ",
            "Basic ",
            "-----BEGIN RSA PRIVATE KEY-----",
            "-----END RSA PRIVATE KEY-----",
            "-----BEGIN",
            "PRIVATE KEY-----",
            "Proc-Type:",
            "[REDACTED:",
            "[REDACTED:secret]",
            "REDACTED",
            "eyJ",
            ".",
            "AKIA",
            "sk-",
            "sk-ant-",
            "ghp_",
            "xoxb-",
            "hooks.slack.com/services/",
            "@tcp(",
            "日本語",
            "密钥",
            "é",
            "🦀",
            "\u{0}",
            "\u{FEFF}",
            "ſ",
            "K",
            "x",
            "0",
            "hunter2",
            "changeme",
            "${X}",
            " is ",
            "the API key is ",
            "my password for prod is ",
            "login is admin / ",
            "auth token ",
            " to ",
            "**",
            "/",
            "Tr0ub4dor&3horse",
            "5d41402abc4b2a76b9719d911017c592",
            "dop_v1_",
            "hvs.",
            "sk-or-v1-",
            "gsk_",
            "xai-",
            "dapi",
            ":AA",
            "hv",
            "hooks/",
            "秘密",
            "PIN",
            " PIN: ",
            "the vault unseal key is ",
            "qZ8vLmN3pR5tW7yB9dF1hJ4kM6nP2sU0xA",
            "passcode",
            "recovery code is ",
            "backup codes: ",
            "4471-9920-1183",
            " and ",
            "use ",
            " as the password",
            " as my passphrase for ",
        ]
        .iter()
        .map(|s| s.to_string()),
    );
    f.push(mixed(rng, B64, 64));
    f.push(mixed(rng, ALNUM, 12));
    f.push(rng.string(DIGITS, 8));
    f
}

fn random_unicode(rng: &mut Rng, len: usize) -> String {
    (0..len)
        .map(|_| match rng.below(6) {
            0 => char::from(rng.below(128) as u8),
            1 => char::from_u32(0x80 + rng.below(0x780) as u32).unwrap_or('?'),
            2 => char::from_u32(0x3040 + rng.below(0x60) as u32).unwrap_or('?'),
            3 => char::from_u32(0x4E00 + rng.below(0x5000) as u32).unwrap_or('?'),
            4 => char::from_u32(0x1F300 + rng.below(0x300) as u32).unwrap_or('?'),
            _ => *rng.pick(&['=', ':', '"', '\\', '/', '@', '-', '_', ' ', '\n']),
        })
        .collect()
}

fn check_properties(text: &str) {
    let once = redact(text);
    let twice = redact(&once);
    assert_eq!(once, twice, "not idempotent for {text:?}");
    assert!(
        !contains_secret(&once),
        "redacted text still has a finding: {text:?} -> {once:?}"
    );
    assert_eq!(
        contains_secret(text),
        matches!(once, Cow::Owned(_)),
        "{text:?}"
    );
    let mut s = text.to_owned();
    let n = redact_in_place(&mut s);
    assert_eq!(s, once);
    assert_eq!(n == 0, matches!(once, Cow::Borrowed(_)));
}

#[test]
fn idempotent_and_panic_free_on_fragment_soup() {
    let mut rng = Rng(0x5EED);
    let frags = fragments(&mut rng);
    for _ in 0..4000 {
        let n = 1 + rng.below(24);
        let text: String = (0..n).map(|_| rng.pick(&frags).as_str()).collect();
        check_properties(&text);
    }
}

#[test]
fn idempotent_and_panic_free_on_arbitrary_utf8() {
    let mut rng = Rng(42);
    let frags = fragments(&mut rng);
    for _ in 0..1500 {
        let len = rng.below(200);
        let mut text = random_unicode(&mut rng, len);
        // Splice in trigger-bearing fragments at char boundaries.
        for _ in 0..rng.below(4) {
            let at = rng.below(text.chars().count() + 1);
            let byte = text.char_indices().nth(at).map_or(text.len(), |(i, _)| i);
            let frag = rng.pick(&frags).clone();
            text.insert_str(byte, &frag);
        }
        check_properties(&text);
    }
}

#[test]
fn all_cases_are_idempotent() {
    for case in all_cases() {
        check_properties(&case.text);
    }
}

/// Found by the hardening suite: the tail of a key block kept by a length cap (no `BEGIN`
/// line), and random tokens whose pieces happen to look like words.
#[test]
fn headless_key_blocks_and_word_shaped_random_tokens() {
    let tail = "ok\nQe5IDLfCXulSxPaagHnZSZ6+B8lpB2+ExRlYeLQMiZA3ttzTF5PR\nZeTjvhZs46UGXzRN\n-----END EC PRIVATE KEY-----\ndone";
    assert_eq!(redact(tail), "ok\n[REDACTED:private-key]\ndone");
    let escaped = r#"{"out":"Qe5IDLfCXulSxPaagHnZSZ6+B8lpB2+ExRlY\nZeTjvhZs46UGXzRN\n-----END RSA PRIVATE KEY-----"}"#;
    assert_eq!(redact(escaped), r#"{"out":"[REDACTED:private-key]"}"#);
    assert_eq!(
        redact("auth_token: mxqDyg6inYnJorssm4rFNCqo"),
        "auth_token: [REDACTED:secret]"
    );
    assert_eq!(
        redact("jdbc:postgresql://db/shop?user=app&password=AArqH92FN3HIeBR"),
        "jdbc:postgresql://db/shop?user=app&password=[REDACTED:password]"
    );
    // Identifiers stay.
    assert_eq!(
        redact("token: getUserAccessToken"),
        "token: getUserAccessToken"
    );
}

/// See [`PREFILTER_BUDGET`]: the literal set, cut to 5-byte prefixes the way
/// the regex crate does before choosing its SIMD searcher, must stay small.
#[test]
fn prefilter_fits_the_simd_budget() {
    let mut prefixes: Vec<&[u8]> = ENGINE
        .literal_detectors
        .iter()
        .map(|(lit, _)| &lit.as_bytes()[..lit.len().min(5)])
        .collect();
    prefixes.sort_unstable();
    prefixes.dedup();
    let minimal = prefixes
        .iter()
        .filter(|p| !prefixes.iter().any(|q| q != *p && p.starts_with(q)))
        .count();
    assert!(
        minimal <= PREFILTER_BUDGET,
        "{minimal} distinct trigger prefixes; the prefilter would leave SIMD"
    );
}

/// An AWS secret access key written in prose next to its key id is masked with it.
#[test]
fn aws_secret_in_prose_next_to_its_key_id() {
    let text = "the AWS key is AKIAIOSFODNN7EXAMPLE with secret wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY for prod";
    let out = redact(text);
    assert!(!out.contains("wJalrXUtnFEMI"), "{out}");
    assert!(!out.contains("AKIAIOSFODNN7EXAMPLE"), "{out}");
    assert!(out.ends_with(" for prod"), "{out}");
    // A long word of prose after a key id is not a secret.
    let text = "rotate AKIAIOSFODNN7EXAMPLE: see internationalizationandlocalizationguide";
    assert!(redact(text).contains("internationalization"));
}

/// Passwords handed to command-line tools are masked; flags that only look alike stay.
#[test]
fn command_line_passwords() {
    let cases = [
        (
            "never run mysql -u root -pZr8Qw3Mx7Tn2Kp5L on prod",
            // The value is glued to its flag: the marker takes the flag's letter with it.
            "never run mysql -u root -[REDACTED:password] on prod",
        ),
        (
            "deploy with sshpass -p 'Pq7Wm2Xr9Tn4Kz6L' ssh deploy@host",
            "deploy with sshpass -p '[REDACTED:password]' ssh deploy@host",
        ),
        (
            "docker login -u bob -p Hm4Qz8Wx2Rt6Kp9L registry.example.com",
            "docker login -u bob -p [REDACTED:password] registry.example.com",
        ),
        (
            "machine api.example.com login bob password Yt6Rq1Wm8Xz3Kn5P",
            "machine api.example.com login bob password [REDACTED:password]",
        ),
        (
            "machine api.example.com\n  login bob\n  password Yt6Rq1Wm8Xz3Kn5P\n",
            "machine api.example.com\n  login bob\n  password [REDACTED:password]\n",
        ),
        (
            "aws configure set aws_secret_access_key Rk8vLm2Qw9Xz4Tn7Pb3Hs6Jd1Fc5Gy0Ae8Uq2Wo",
            "aws configure set aws_secret_access_key [REDACTED:secret]",
        ),
    ];
    redacts_exactly(
        &cases,
        &[
            "docker login registry.example.com && docker run -p 8080:80 app",
            "ssh -u deploy -p 22 host",
            "mysql -u root -p shop < dump.sql",
            "run the login flow with -p 3000 so the dev server port matches",
            "aws configure set aws_secret_access_key (ask the admin for it)",
        ],
    );
}

/// Each `(text, redacted)` case comes out as given (and stays so when redacted again), and
/// each clean text comes out unchanged.
fn redacts_exactly(cases: &[(&str, &str)], clean: &[&str]) {
    for (text, want) in cases {
        assert_eq!(redact(text), *want, "{text}");
        assert_eq!(redact(want), *want, "idempotent: {want}");
    }
    for text in clean {
        assert_eq!(redact(text), *text);
    }
}

/// Passwords of words and digits in assignments; identifiers stay.
#[test]
fn word_and_digit_passwords_in_assignments() {
    redacts_exactly(
        &[
            ("password=hunter2hunter2", "password=[REDACTED:password]"),
            ("PASSWORD=hunter2hunter2", "PASSWORD=[REDACTED:password]"),
            (
                "db_password = Summer2024",
                "db_password = [REDACTED:password]",
            ),
        ],
        &[
            "password = userPassword2",
            "password=self.password",
            "let password = read_password()",
            "pwd = cwd",
        ],
    );
}

/// Secrets as people write them: word passwords in shell assignments, camel-case passwords with digits,
/// a password in a JDBC query, a passphrase in prose, a service's key named by the service
/// and a dotted bot token. Code stays code.
#[test]
fn literal_assignments_and_passphrases() {
    for (text, want) in [
        (
            "set DB_PASSWORD=correct-horse-battery-staple in env 4",
            "set DB_PASSWORD=[REDACTED:password] in env 4",
        ),
        (
            "DB_PASSWORD=purple.monkey.dishwasher",
            "DB_PASSWORD=[REDACTED:password]",
        ),
        (
            "DB_PASSWORD=CorrectHorseBatteryStaple",
            "DB_PASSWORD=[REDACTED:password]",
        ),
        (
            "DB_PASSWORD=AlphaS3cret1",
            "DB_PASSWORD=[REDACTED:password]",
        ),
        (
            "export PGPASSWORD=PgS3cretPwd",
            "export PGPASSWORD=[REDACTED:password]",
        ),
        ("password: Colon5ecretPw", "password: [REDACTED:password]"),
        ("password: CompanyName123", "password: [REDACTED:password]"),
        (
            "jdbc:postgresql://db:5432/app?user=app&password=JdbcS3cretPw",
            "jdbc:postgresql://db:5432/app?user=app&password=[REDACTED:password]",
        ),
        (
            "Remember that the staging DB password is correct-horse-battery-staple",
            "Remember that the staging DB password is [REDACTED:password]",
        ),
        (
            "The Twilio key is SK0123456789abcdef0123456789abcdef.",
            "The Twilio key is [REDACTED:secret].",
        ),
        (
            "The Discord bot token is MTA1NjY3ODkwMTIzNDU2Nzg5MA.GhIjKl.abcdefghijklmnopqrstuvwxyz0123456789AB.",
            "The Discord bot token is [REDACTED:secret].",
        ),
        // Words and a number, a mixed random token, an unquoted passphrase, a login pair.
        (
            "Remember that the admin password is MyDogRex2019.",
            "Remember that the admin password is [REDACTED:password].",
        ),
        ("password: qwertyASDF1234", "password: [REDACTED:password]"),
        (
            "set token=abcd1234efgh5678ijkl when calling the webhook",
            "set token=[REDACTED:secret] when calling the webhook",
        ),
        (
            "Remember that the router passphrase is purple monkey dishwasher.",
            "Remember that the router passphrase is [REDACTED:password].",
        ),
        (
            "the jenkins creds are admin / JenkinsAdmin2023.",
            "the jenkins creds are admin / [REDACTED:password].",
        ),
        // Passphrases of plain words, after `is` or a colon, dashed or not.
        (
            "remember the staging password is correct horse battery staple",
            "remember the staging password is [REDACTED:password]",
        ),
        (
            "remember: staging password: tangerine-sunset-river",
            "remember: staging password: [REDACTED:password]",
        ),
        (
            "the wifi password: correct horse battery staple.",
            "the wifi password: [REDACTED:password].",
        ),
        (
            "wifi password: correct-horse-battery-staple",
            "wifi password: [REDACTED:password]",
        ),
        // Capitalised, closed by a number, after `=`, in upper case.
        (
            "remember the db password is Tangerine Sunset River",
            "remember the db password is [REDACTED:password]",
        ),
        (
            "the test account password: Violet Canyon Mirror",
            "the test account password: [REDACTED:password]",
        ),
        (
            "the staging PASSWORD IS Marble Falcon Echo 77",
            "the staging PASSWORD IS [REDACTED:password]",
        ),
        (
            "the staging password = silver maple thunder",
            "the staging password = [REDACTED:password]",
        ),
        // The copula contracted.
        (
            "fyi the staging db password's Tr0ub4dor&3 until friday",
            "fyi the staging db password's [REDACTED:password] until friday",
        ),
        (
            "the vpn password\u{2019}s MyDogRex2019.",
            "the vpn password\u{2019}s [REDACTED:password].",
        ),
        (
            "the wifi password's tangerine-sunset-river",
            "the wifi password's [REDACTED:password]",
        ),
    ] {
        assert_eq!(redact(text), want, "{text}");
    }
    for code in [
        "password = config.db.password",
        "let password = newPassword1;",
        "password: String,",
        "DB_PASSWORD=$DB_PASSWORD",
        "DB_PASSWORD=${DB_PASSWORD}",
        "PGPASSWORD=<your password>",
        "the password is read-only",
        "The Redis key is user:42",
        "The Primary key is customer_id",
        "The Stripe key is in 1Password",
        "The session token.expires_at field is set by the server.",
        "let hash = sha256Hash",
        "password = newPassword1",
        "the password is really hard to guess",
        "the passphrase is stored in the vault",
        "the password is the same as before",
        "the password is correct",
        "the password is wrong again today",
        "password: ask the team lead",
        "password: required",
        "password: end-to-end",
        "db password: read-from-env-var",
        "the password is rotated every month by the platform team",
        "The password is Stored In Vault",
        "the password policy is 12 characters",
        "the password's length is 12",
        "the password's expiry is handled by the IdP",
        "the password's in 1Password",
        "the password's hash is stored with argon2",
    ] {
        assert_eq!(redact(code), code, "{code}");
    }
}

/// Passwords said to be one, whatever they look like: an identifier-like value after "is",
/// a strong value right after the word, `pw:`, Japanese and Chinese, a Hugging Face token
/// with digits. What only mentions a password (a hash's name, a policy, a flow) stays.
#[test]
fn passwords_said_to_be_one() {
    for (text, secret) in [
        ("my password is PurpleMonkey42x", "PurpleMonkey42x"),
        ("login: admin, password PurpleMonkey42x", "PurpleMonkey42x"),
        ("login: admin, password admin123", "admin123"),
        ("user=deploy password s3cr3tpw", "s3cr3tpw"),
        (
            "the wifi password is SEC07-PurpleMonkeyDishwasher",
            "SEC07-PurpleMonkeyDishwasher",
        ),
        ("pw: SEC08Tr0ub4dor&3", "SEC08Tr0ub4dor&3"),
        ("the password is hunter2", "hunter2"),
        ("パスワードは SEC28pass です", "SEC28pass"),
        ("密码是 hunter22，别告诉别人", "hunter22"),
        (
            "token hf_SEC17abcdefghijklmnopqrstuvwxyzABC in prose",
            "hf_SEC17abcdefghijklmnopqrstuvwxyzABC",
        ),
    ] {
        let out = redact(text);
        assert!(!out.contains(secret), "{text} -> {out}");
        assert!(out.contains("[REDACTED:"), "{text} -> {out}");
    }
    for text in [
        "the password is hashed with sha256 before storing",
        "reset the password weekly12 times a year",
        "the password is stored in vault2 now",
        "the password is required for login",
        "the password field uses bcrypt12 rounds",
        "use the password reset endpoint v2",
        "the password policy needs 12 chars",
        "pw is fine",
        "秘密のテキスト",
        "密码是必填的",
    ] {
        assert_eq!(redact(text), text, "{text}");
    }
}

/// The triggers merged to free prefilter slots still select their detectors, and only on
/// their own literals: `hooks` without a `/`, `recovery` without `code`, `pin` and `ping` in
/// lower case select nothing.
#[test]
fn merged_and_rare_triggers_select_the_right_detectors() {
    let bit = |kind: Kind| 1u64 << SPECS.iter().position(|s| s.kind == kind).unwrap();
    let e = &*ENGINE;
    assert_eq!(e.candidates("hvs.x"), bit(Kind::VaultToken));
    assert_eq!(e.candidates("hvb.x"), bit(Kind::VaultToken));
    assert_eq!(
        e.candidates("discord.com/api/webhooks/1/x"),
        bit(Kind::DiscordWebhook)
    );
    assert_eq!(e.candidates("密碼是 x"), bit(Kind::Password));
    assert_eq!(e.candidates("密码是 x"), bit(Kind::Password));
    for text in [
        "the door PIN is 4471",
        "the recovery code is x",
        "Recovery Codes: x",
        "backup codes are x",
        "Backup codes: x",
    ] {
        assert_eq!(e.candidates(text), bit(Kind::Secret), "{text}");
    }
    for text in [
        "React hooks rerender; the webhook fired",
        "crash recovery and the backup job, a lookup table, markup",
        "pin the version, the ping failed, a spinner spins",
    ] {
        assert_eq!(e.candidates(text), 0, "{text}");
    }
}

/// Rule 5: whatever word names a key, a strongly random value after its copula is a secret;
/// identifiers and words stay.
#[test]
fn any_key_with_a_strongly_random_value() {
    redacts_exactly(
        &[
            (
                "remember that the vault unseal key is qZ8vLmN3pR5tW7yB9dF1hJ4kM6nP2sU0xA",
                "remember that the vault unseal key is [REDACTED:secret]",
            ),
            (
                "the key is Xk9mQ2vLpZ8nR4tW7yB3",
                "the key is [REDACTED:secret]",
            ),
            ("Key: Xk9mQ2vLpZ8nR4tW7yB3", "Key: [REDACTED:secret]"),
            (
                "the recovery key for the vault was `kD7bQ2x+9LmZ4pR8vT1w/N6y=`, keep it",
                "the recovery key for the vault was `[REDACTED:secret]`, keep it",
            ),
            (
                "our webhook signing-free relay key: Hq3ZmV8kP1xN5tR7wB2cL9yD",
                "our webhook signing-free relay key: [REDACTED:secret]",
            ),
        ],
        &[
            "the cache key is userId",
            "the primary key is customer_id",
            "the sort key is created_at",
            "the key is to be patient",
            "the key is in the drawer",
            "the partition key is TenantId2024Region",
            "the cache key is userProfileV2Cache",
            "the lookup key is getUserAccessToken2",
            "the cache key is 9fceb02d0ae598e95dc970b74767f19372d61af8",
            "the idempotency key is 550e8400-e29b-41d4-a716-446655440000",
            "the key to success is patience",
            "cache key Xk9mQ2vLpZ8nR4tW7yB3 (no copula: a compound noun names the key)",
        ],
    );
    // Random keys read as random: all but about one in 30 of 16 characters, one in 200 of 34.
    let mut rng = Rng(0x005E_C2E7);
    for (len, least) in [(16, 940), (34, 990)] {
        let hits = (0..1000)
            .filter(|_| strongly_random(&mixed(&mut rng, ALNUM, len)))
            .count();
        assert!(hits >= least, "{hits} of 1000 random keys of {len}");
    }
}

/// Rule 6: PINs, passcodes, recovery and backup codes, also digits or dash-joined groups
/// (which the prose rule refuses elsewhere), each code of a list on its own.
#[test]
fn pins_passcodes_and_recovery_codes() {
    redacts_exactly(
        &[
            (
                "the VPN passcode is 4471-9920-1183",
                "the VPN passcode is [REDACTED:password]",
            ),
            (
                "the door PIN is 4471",
                "the door PIN is [REDACTED:password]",
            ),
            ("my PIN: 8812", "my PIN: [REDACTED:password]"),
            (
                "the PIN code for the safe is `0451`.",
                "the PIN code for the safe is `[REDACTED:password]`.",
            ),
            ("my passcode: 4471", "my passcode: [REDACTED:password]"),
            (
                "the 2FA recovery code is 8FJ2-KQ9X-PL3M-77TZ",
                "the 2FA recovery code is [REDACTED:secret]",
            ),
            (
                "backup codes are 1234-5678 and 2345-6789",
                "backup codes are [REDACTED:secret] and [REDACTED:secret]",
            ),
            (
                "Backup codes: 1234-5678 2345-6789, 3456-7890 or 4567-8901.",
                "Backup codes: [REDACTED:secret] [REDACTED:secret], [REDACTED:secret] or [REDACTED:secret].",
            ),
            (
                "the GitHub recovery codes are 5a2b1-c3d4e, 8f9a0-b1c2d",
                "the GitHub recovery codes are [REDACTED:secret], [REDACTED:secret]",
            ),
            (
                "recovery_code: 8FJ2KQ9XPL3M",
                "recovery_code: [REDACTED:secret]",
            ),
            // Kept as JSON: the `n` of `\n` is no part of the word.
            (
                r#"{"command":"cat > .env <<'EOF'\nbackup codes are 6749-5440-9959\nEOF"}"#,
                r#"{"command":"cat > .env <<'EOF'\nbackup codes are [REDACTED:secret]\nEOF"}"#,
            ),
            (
                r#"{"text":"ok\nPIN: 8812"}"#,
                r#"{"text":"ok\nPIN: [REDACTED:password]"}"#,
            ),
        ],
        &[
            "the PIN is required",
            "PIN entry is disabled",
            "recovery code flow is broken",
            "the passcode screen",
            "the passcode is 6-digit",
            "the passcode is 6 digits",
            // `error code`, `exit code`, `status code` are no credential words.
            "error code is 500",
            "the error code is E-4471-XQ9Z",
            "the exit code is 137",
            "the status code was 404",
            // Hardware pins.
            "the LED PIN is 13",
            "the reset PIN is GPIO17",
            "LED_PIN = 13",
            "backup codes are 8 characters long",
            "the recovery codes are 10 per account",
            "the backup code is AES-256 encrypted",
            "the recovery code is read-only",
            "the recovery code is time-based",
            "the backup codes are generated on first login",
        ],
    );
    let r = redact_detailed("backup codes are 1234-5678 and 2345-6789");
    assert_eq!((r.count, r.kinds), (2, vec![Kind::Secret]));
}

/// Rule 7: the value before the credential word; a compound noun or a name stays.
#[test]
fn values_before_the_credential_word() {
    redacts_exactly(
        &[
            (
                "use s3cr3tSauce! as the password for the staging VPN",
                "use [REDACTED:password] as the password for the staging VPN",
            ),
            (
                "set Hunter2024 as my password",
                "set [REDACTED:password] as my password",
            ),
            (
                "try P@ssw0rd9 as the passphrase",
                "try [REDACTED:password] as the passphrase",
            ),
            (
                "Then I used Xk9#mQ2vLp as the root wi-fi password.",
                "Then I used [REDACTED:password] as the root wi-fi password.",
            ),
            (
                "use 'correct horse battery staple' as the passphrase, then restart",
                "use '[REDACTED:password]' as the passphrase, then restart",
            ),
            (
                "log in with Tr0ub4dor&3 as password",
                "log in with [REDACTED:password] as password",
            ),
            (
                "use AbCd1234EfGh5678 as the API key",
                "use [REDACTED:secret] as the API key",
            ),
            (
                r#"{"cmd":"printf '%s' 'set Hunter2024 as my password' > .env"}"#,
                r#"{"cmd":"printf '%s' 'set [REDACTED:password] as my password' > .env"}"#,
            ),
            (
                r#"{"text":"use s3cr3tSauce! as the password\nthanks"}"#,
                r#"{"text":"use [REDACTED:password] as the password\nthanks"}"#,
            ),
            (
                r#"{"command":"cat <<'EOF'\nset Seizzrvy7581 as my password\nEOF"}"#,
                r#"{"command":"cat <<'EOF'\nset [REDACTED:password] as my password\nEOF"}"#,
            ),
        ],
        &[
            "use 1Password as the password manager",
            "use SSO as the password flow",
            "use the env var as the password",
            "use bcrypt as the password hash",
            "use it as the password",
            "use the username as the password",
            "set $DB_PASS as the password",
            "use `DB_PASSWORD` as the password",
            "use getPassword2 as the password",
            "use Vault2 as the password store for prod",
            "keep the same as the password",
            "use sha256 as the password hash function",
            "use OAuth2 as the token flow",
        ],
    );
}
