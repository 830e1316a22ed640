//! The offline extractor's unit tests: shapes, one-offs, pointers, quotes, in three languages.
use std::path::PathBuf;

use super::*;

fn one(p: &str) -> Candidate {
    let c = candidates(p);
    assert_eq!(c.len(), 1, "{p}: {c:?}");
    c.into_iter().next().expect("one")
}

fn none(p: &str) {
    let c = candidates(p);
    assert!(c.is_empty(), "{p}: {c:?}");
}

#[test]
fn sample_home_statements() {
    let c = one(
        "from now on use pnpm, not npm. This repo has a pnpm-lock.yaml and npm rewrites it into a package-lock.",
    );
    assert_eq!(c.memory_type, MemoryType::Feedback);
    assert_eq!(c.rule, "Use pnpm, not npm.");
    assert_eq!(
        c.why.as_deref(),
        Some("This repo has a pnpm-lock.yaml and npm rewrites it into a package-lock.")
    );

    let c = one(
        "no, don't mock the database in these tests — we got burned last quarter when the mocked checkout tests passed and the real migration broke prod. Use the real test DB; `pnpm test:int` starts it in docker.",
    );
    assert_eq!(c.memory_type, MemoryType::Feedback);
    assert_eq!(c.rule, "Don't mock the database in these tests.");
    assert!(
        c.why
            .as_deref()
            .is_some_and(|w| w.starts_with("We got burned"))
    );
    assert_eq!(
        c.how.as_deref(),
        Some("Use the real test DB; `pnpm test:int` starts it in docker.")
    );

    let c = one(
        "remember that the staging DB is at staging-db.internal.acme-shop.example:5432, database webshop_staging, and we only ever connect with the read-only role ro_analyst.",
    );
    assert_eq!(c.memory_type, MemoryType::Reference);
    assert!(c.rule.starts_with("The staging DB is at"));

    let c = one(
        "ありがとう。コミットメッセージは英語で、PRの説明は日本語で書いてください。今回のPRの説明を下書きしてもらえますか？",
    );
    assert_eq!(c.memory_type, MemoryType::Feedback);
    assert_eq!(
        c.rule,
        "コミットメッセージは英語で、PRの説明は日本語で書いてください。"
    );

    let c = one(
        "right, those keys are ancient. we always deploy through the deploy-staging SSO profile — never static keys. fix the Makefile so deploy-staging uses that profile and ignores the static keys.",
    );
    assert_eq!(c.memory_type, MemoryType::Feedback);
    assert_eq!(
        c.rule,
        "We always deploy through the deploy-staging SSO profile — never static keys."
    );
    assert_eq!(c.why.as_deref(), Some("Those keys are ancient."));
    assert_eq!(c.how, None);

    let c = one(
        "never mind. don't run anything against prod from my laptop — prod plans and applies only go through the CI pipeline. just plan the staging workspace.",
    );
    assert_eq!(c.rule, "Don't run anything against prod from my laptop.");
    assert_eq!(
        c.why.as_deref(),
        Some("Prod plans and applies only go through the CI pipeline.")
    );
    assert_eq!(c.how, None);
}

#[test]
fn task_requests_are_not_memories() {
    none(
        "What does applyCoupons return when the coupon list is empty? Just answer, don't change anything.",
    );
    none("Do not modify any files.");
    none("fix the flaky test. don't commit yet.");
    none(
        "the checkout page shows NaN for shipping when the cart only has digital items (gift cards). fix pls",
    );
    none("do you remember how we fixed this?");
    none("don't worry about the lint errors");
    none("run the whole test suite and fix whatever broke");
    none("今回のPRの説明を下書きしてもらえますか？");
    none("这次不要改测试文件");
    none("no, use the other file");
    // "Always" in a report of a problem is no rule.
    none("ビルドが常に失敗します。なぜ？");
    none("テストがいつも落ちる");
    none("总是报错，怎么办");
    none("必ずしもそうとは限らない");
    none("CIが常に遅くて困っています");
    none("I always forget how this works, explain it again");
    none("use the helper in this file");
    none("Prefer the shorter version.");
    none("don't edit this file, edit the template instead");
    none("Don't forget the semicolon, lol");
    none("don't forget to push");
    none("I never said to delete the migrations! put them back");
    none("use a map instead of a loop here");
    none("use the staging config instead of prod for now");
    none("Always return early in this function.");
    none("Always log the request id in this middleware.");
    none("Never use the cache for this benchmark, I want cold numbers.");
    none("You always forget to update the tests, please update them now.");
    none("use fetch instead of axios in UserList.tsx");
    none("never use axios in this test, use fetch");
    none("we use fetch for this one-off fix, not axios");
    none("We use the AWS console for this one-off fix, not Terraform.");
    for request in std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/one-off-requests.txt"
    ))
    .expect("fixture")
    .lines()
    .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
    {
        none(request);
    }
}

/// Skipping the patterns a sentence's first word rules out changes no answer: every
/// sentence of a soup of statement words, fillers and CJK gets what testing every
/// pattern gives.
#[test]
fn first_word_gates_change_nothing() {
    let shape = |d: Option<(Shape, &'static str)>| {
        d.map(|(s, t)| {
            let text = match s {
                Shape::Explicit(c) | Shape::FromNowOn(c) => c,
                Shape::Rule(c, m) => format!("{c} {m:?}"),
                Shape::BackReference(c) => format!("back: {c}"),
                Shape::Addendum => "addendum".into(),
            };
            (t, text)
        })
    };
    let ungated = |s: &str, c: bool| {
        let lower = s.to_lowercase();
        if lower.starts_with("never mind") || lower.starts_with("nevermind") {
            return None;
        }
        detect_english(s, &s.to_lowercase(), c).or_else(|| detect_cjk(s, c))
    };
    let words: Vec<&str> = EN_FIRST_WORDS
        .iter()
        .chain(EN_MARKER_WORDS)
        .copied()
        .chain([
            "Remember—",
            "mind",
            "that",
            "not",
            "npm",
            "pnpm",
            "instead",
            "of",
            "rather",
            "than",
            "in",
            "the",
            "repo",
            "tests",
            "because",
            "it",
            "is",
            "fix",
            "-",
            "#memo",
            "1.",
            "now",
            "on",
            "forward",
            "future",
            "覚えて",
            "常に",
            "しないで",
            "记住",
            "以后",
            "不要",
            "我们用",
            "私は",
            "です",
            "、",
            "，",
            "!",
            "?",
            "PNPM",
            "Always",
            "NEVER",
            "I'M",
            "Don’t",
            "ok,",
            "no,",
            "right,",
            "use:",
            "from now on",
        ])
        .collect();
    let mut seed = 0x9e37_79b9_7f4a_7c15_u64;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    for _ in 0..20_000 {
        let len = 1 + next(8);
        let sentence: Vec<&str> = (0..len).map(|_| words[next(words.len())]).collect();
        let s = sentence.join(if next(4) == 0 { "" } else { " " });
        for c in [false, true] {
            assert_eq!(
                shape(detect(&s, c)),
                shape(ungated(&s, c)),
                "{s:?} (correction: {c})"
            );
        }
        let (rest, c) = strip_markers(&s);
        let mut full = s.trim();
        let mut corr = false;
        for _ in 0..4 {
            let Some(m) = EN_MARKERS
                .captures(full)
                .or_else(|| JA_MARKERS.captures(full))
                .or_else(|| ZH_MARKERS.captures(full))
            else {
                break;
            };
            corr |= CORRECTIONS.contains(&m[1].to_lowercase().as_str());
            full = full[m[0].len()..].trim_start();
        }
        let lower = full.to_lowercase();
        for wrong in ["that's wrong", "that is wrong", "that’s wrong"] {
            if lower.starts_with(wrong) {
                corr = true;
                let after = full[wrong.len()..].trim_start_matches([',', '.', ':', ';', '!', ' ']);
                if !after.is_empty() {
                    full = after;
                }
                break;
            }
        }
        assert_eq!(rest, full, "{s:?}");
        assert_eq!(c, corr, "{s:?}");
    }
}

/// A statement about the person that names the project is the project's.
#[test]
fn about_me_or_the_project() {
    assert_eq!(classify("I prefer short answers"), MemoryType::User);
    assert_eq!(
        classify("I want this repo's tests to use pytest-xdist"),
        MemoryType::Feedback
    );
    assert_eq!(
        classify("my db password for this project is in 1password under proj-db"),
        MemoryType::Project
    );
    assert_eq!(
        one("I always review this repo's migrations by hand").memory_type,
        MemoryType::Project
    );
}

/// Phrasings a user reaching for the documented shapes writes, each one rule, whole.
#[test]
fn everyday_rules() {
    let cases: &[(&str, &str, MemoryType)] = &[
        (
            "use pnpm, not npm",
            "Use pnpm, not npm.",
            MemoryType::Feedback,
        ),
        (
            "Use pnpm, not npm.",
            "Use pnpm, not npm.",
            MemoryType::Feedback,
        ),
        (
            "use ruff instead of flake8",
            "Use ruff instead of flake8.",
            MemoryType::Feedback,
        ),
        (
            "use black for formatting python, never autopep8",
            "Use black for formatting python, never autopep8.",
            MemoryType::Feedback,
        ),
        (
            "Make sure to always run the e2e suite before tagging a release.",
            "Make sure to always run the e2e suite before tagging a release.",
            MemoryType::Feedback,
        ),
        (
            "Don't use emojis in code comments",
            "Don't use emojis in code comments.",
            MemoryType::Feedback,
        ),
        (
            "Don't mock the database in integration tests",
            "Don't mock the database in integration tests.",
            MemoryType::Feedback,
        ),
        (
            "please stop adding emojis to commit messages",
            "Stop adding emojis to commit messages.",
            MemoryType::Feedback,
        ),
        (
            "stop adding comments to every line",
            "Stop adding comments to every line.",
            MemoryType::Feedback,
        ),
        (
            "never use println! for logging, use tracing",
            "Never use println! for logging, use tracing.",
            MemoryType::Feedback,
        ),
        (
            "don't forget to run the migrations before deploying",
            "Run the migrations before deploying.",
            MemoryType::Feedback,
        ),
        (
            "下周三要发布，记住这个",
            "下周三要发布。",
            MemoryType::Project,
        ),
        (
            "don't use sed for edits, always use the Edit tool",
            "Don't use sed for edits, always use the Edit tool.",
            MemoryType::Feedback,
        ),
        (
            "I'm on macOS with an M2 laptop, keep that in mind for native deps",
            "I'm on macOS with an M2 laptop.",
            MemoryType::User,
        ),
        (
            "the staging DB needs the VPN - please bear this in mind",
            "The staging DB needs the VPN.",
            MemoryType::Project,
        ),
    ];
    for (prompt, rule, t) in cases {
        let c = one(prompt);
        assert_eq!(
            (c.rule.as_str(), c.memory_type),
            (*rule, *t),
            "{prompt}: {c:?}"
        );
        assert_eq!(c.why, None, "{prompt}: {c:?}");
    }
}

/// "Remember that." points back at what was just said: the sentence before is the memory,
/// and an occasion after the pointer is how to apply it.
#[test]
fn remember_that_points_back() {
    for (prompt, rule) in [
        (
            "テストのカバレッジは80%以上を維持してください。今後もずっとです。",
            "テストのカバレッジは80%以上を維持してください。",
        ),
        (
            "The preview env is torn down every night at midnight. Remember that.",
            "The preview env is torn down every night at midnight.",
        ),
        (
            "Uploads are capped at 25 MB by the proxy. Keep that in mind.",
            "Uploads are capped at 25 MB by the proxy.",
        ),
        (
            "We bill in EUR only, never USD. please remember this",
            "We bill in EUR only, never USD.",
        ),
        (
            "Lint with ruff before you commit. Don't forget that.",
            "Lint with ruff before you commit.",
        ),
        (
            "検証環境は毎週月曜に初期化されます。これを覚えておいて。",
            "検証環境は毎週月曜に初期化されます。",
        ),
        ("预发环境每天凌晨重建。记住这个。", "预发环境每天凌晨重建。"),
    ] {
        let c = one(prompt);
        assert_eq!(c.rule, rule, "{prompt}");
        assert_eq!(c.how, None, "{prompt}");
    }
    let c = one(
        "The EU cluster is eu-west-3 and the US one us-east-2. keep that in mind whenever you write Terraform.",
    );
    assert_eq!(
        c.rule,
        "The EU cluster is eu-west-3 and the US one us-east-2."
    );
    assert_eq!(
        c.how.as_deref(),
        Some("Keep in mind whenever you write Terraform.")
    );
    // Nothing said before it: nothing to remember (never a memory reading ".").
    none("Remember that.");
    none("これを覚えておいて。");
    none("What's the port? Remember that.");
    // A duration is no deadline.
    assert_eq!(
        one("Remember that the session cache expires in 10 minutes.").rule,
        "The session cache expires in 10 minutes."
    );
}

/// Requests and remarks about the task at hand, however rule-like their words.
#[test]
fn passing_remarks_are_not_memories() {
    for prompt in [
        // The next step of the task.
        "Remember to also bump the changelog.",
        "and remember to remove the console.logs before you're done",
        "Remember to rebase after you merge this.",
        "记得把超时改回30秒再提交。",
        // How things are right now.
        "Remember, it's Thursday, so no big refactors please.",
        "Keep in mind I only have 15 minutes before my next meeting.",
        "remember we're still on the release-2.3 branch",
        "Remember, the call is in an hour, so keep it short.",
        "Remember, the review starts in 10 minutes.",
        // The thing at hand.
        "Don't use the --no-verify flag on that commit.",
        "Don't use a transaction there, the reads are independent.",
        "Always use the new endpoint in loadInvoices.",
        "never apply this to staging, only plan it",
        "不要用这个分支，切到 main 再跑。",
        "别管那些告警了，先让构建通过。",
        "一定要今晚把这个版本发出去。",
        // What keeps happening, a hypothetical, a pick among the agent's options.
        "we always get rate limited by GitHub when the matrix runs in parallel. lower it to 4",
        "we never managed to get the cache working in CI, try again",
        "Always the same timeout:",
        "もしテストが常に速ければ、こんな苦労はしないんだけどね。",
        "这个任务总是卡在上传那一步，帮我看看。",
        "I prefer option 2.",
        "I like your first suggestion better, go with it",
        "I prefer the version with the early return.",
        // Quoted tool output and documentation.
        "the build prints:\nNever run this script with sudo.\nwhy does it say that",
        "From the tokio docs:\nAlways prefer spawn_blocking for CPU-heavy work.\ndoes that matter for us?",
        "the console shows: Warning: Always pass a key prop to list items. why?",
        "Warning: Don't use the default export here.\nwhat does this mean",
    ] {
        none(prompt);
    }
}

/// What a user says in passing that does stand: after a lead-in, a class of things, a
/// pronoun with its antecedent, a labelled link.
#[test]
fn standing_rules_said_in_passing() {
    for (prompt, rule) in [
        (
            "fyi, from now on we release from the stable branch",
            "We release from the stable branch.",
        ),
        (
            "Rename the variable, and from now on run clippy before committing.",
            "Run clippy before committing.",
        ),
        (
            "btw from now on pls add a test for every bug fix",
            "Add a test for every bug fix.",
        ),
        (
            "Don't write comments that just repeat the function name.",
            "Don't write comments that just repeat the function name.",
        ),
        (
            "Stop wrapping everything in Option that can't be missing.",
            "Stop wrapping everything in Option that can't be missing.",
        ),
        (
            "stop using println for debugging, use the tracing macros",
            "Stop using println for debugging, use the tracing macros.",
        ),
        (
            "We have a job called nightly-export. Never restart it by hand.",
            "We have a job called nightly-export. Never restart it by hand.",
        ),
        (
            "no, don't use unwrap, here or anywhere else in this repo.",
            "Don't use unwrap, here or anywhere else in this repo.",
        ),
        (
            "Don't use unwrap in these tests either.",
            "Don't use unwrap in these tests either.",
        ),
    ] {
        let c = one(prompt);
        assert_eq!(c.rule, rule, "{prompt}");
    }
    // "it" further on is the rule's own: no sentence is borrowed for it.
    let c = one(
        "I think the bug is in the parser. From now on write the repro steps in the PR, reviewers ask for them.",
    );
    assert_eq!(
        c.rule,
        "Write the repro steps in the PR, reviewers ask for them."
    );
    // A link labelled after a fact is part of it, and makes it a reference.
    let c = one(
        "Remember: error tracking is in Sentry, project shop-web. Dashboard: https://sentry.example.com/shop-web",
    );
    assert_eq!(c.memory_type, MemoryType::Reference);
    assert!(
        c.rule
            .ends_with("Dashboard: https://sentry.example.com/shop-web.")
    );
    // A clock time is no host:port.
    let c = one("Keep in mind the backup job runs at 03:30 UTC and locks the tables.");
    assert_eq!(c.memory_type, MemoryType::Project);
    assert_eq!(
        one("remember the metrics are at 10.0.4.2:9090").memory_type,
        MemoryType::Reference
    );
    // Where something lives, said plainly with its link; not a link to one item of work.
    for prompt in [
        "The runbooks live at https://wiki.example.com/ops/runbooks",
        "fyi error tracking is in Sentry: https://sentry.example.com/org/shop/",
        "The design docs are here: https://docs.example.com/design",
        "Status page: https://status.example.com",
        "监控面板在 https://grafana.example.com/d/jobs ，任务出问题先看这个。",
    ] {
        let c = one(prompt);
        assert_eq!(
            (c.memory_type, c.trigger),
            (MemoryType::Reference, "pointer"),
            "{prompt}"
        );
    }
    for prompt in [
        "the failing run is https://ci.example.com/org/repo/runs/48213",
        "look at https://github.com/org/repo/pull/12 and fix the review comments",
        "is https://staging.example.com down again?",
        "the logs for this run are at https://logs.example.com/q/shop",
        "the commit that broke it is https://git.example.com/shop/commit/4f2a9c1e",
    ] {
        none(prompt);
    }
    // Project facts and rules for what is still to come, said without a trigger phrase.
    for (prompt, t) in [
        ("we're on Python 3.12 now, not 3.10", MemoryType::Project),
        (
            "no, we don't use docker compose here, we use tilt.",
            MemoryType::Project,
        ),
        (
            "Timestamps are always stored in UTC in this codebase, never local time.",
            MemoryType::Project,
        ),
        (
            "Make sure every new migration is reversible.",
            MemoryType::Feedback,
        ),
        (
            "ask me before deleting anything under data/",
            MemoryType::Feedback,
        ),
    ] {
        assert_eq!(one(prompt).memory_type, t, "{prompt}");
    }
    for prompt in [
        "Make sure all tests pass before you push this.",
        "we're still on the release-1.4 branch",
        "the build is always red on Mondays, no idea why",
        "we're using too much memory in the worker",
        "we are using the wrong config somehow",
    ] {
        none(prompt);
    }
    // Conventions said as facts, and wishes that hold in the project.
    for (prompt, t) in [
        (
            "our release artifacts go to the internal registry, never to npmjs",
            MemoryType::Project,
        ),
        (
            "PR titles here follow the ticket-key prefix format, e.g. SHOP-12: fix totals",
            MemoryType::Project,
        ),
        (
            "I want every error logged with its request id everywhere in this codebase.",
            MemoryType::Feedback,
        ),
        (
            "Nightly build logs end up in Loki: https://logs.example.internal",
            MemoryType::Reference,
        ),
        (
            "fyi I'm mostly a Go/Postgres backend dev, so skip the Go basics.",
            MemoryType::User,
        ),
        ("I'm Ana, tech lead of the payments team.", MemoryType::User),
        (
            "stop apologizing in every message, just say what changed.",
            MemoryType::Feedback,
        ),
        (
            "回答请用中文，但是 commit message 用英文写。",
            MemoryType::Feedback,
        ),
        (
            "説明は箇条書きで短めにしてほしいです。",
            MemoryType::Feedback,
        ),
    ] {
        assert_eq!(one(prompt).memory_type, t, "{prompt}");
    }
    for prompt in [
        "the bug is in the parser, not the lexer",
        "the fix goes in the next release, not this one",
        "结账页面的按钮总是不显示，帮我查一下。",
    ] {
        none(prompt);
    }
    // Said to be a rule, however plainly worded; a correction after "That's wrong,".
    for (prompt, t) in [
        (
            "Quick rule for this repo: module names are snake_case and end in _lib.",
            MemoryType::Feedback,
        ),
        (
            "Tag every release with a signed tag, that's a hard rule for this repo.",
            MemoryType::Feedback,
        ),
        ("所有变更都要走评审，这是硬性规定。", MemoryType::Feedback),
        (
            "ブランチ名は feature/ から始める。これはルールです。",
            MemoryType::Feedback,
        ),
        (
            "That's wrong, we don't use Terragrunt.",
            MemoryType::Project,
        ),
        (
            "FWIW I'm colorblind, so don't rely on red vs green.",
            MemoryType::User,
        ),
        (
            "i'm on a m2 mac with opam 2.2, so no apt commands.",
            MemoryType::User,
        ),
        (
            "覚えておいてほしいのですが、本番のDBは読み取り専用です。",
            MemoryType::Project,
        ),
        (
            "nope, that's wrong — in this codebase we don't use GenServer.call for that, we use casts.",
            MemoryType::Project,
        ),
        (
            "when you explain stuff to me keep it short, bullet points, no preamble.",
            MemoryType::Feedback,
        ),
        (
            "we use stylish-haskell not hindent here, the config is in .stylish-haskell.yaml",
            MemoryType::Project,
        ),
        (
            "fyi the CI for this repo isn't on github actions, it's on our drone instance at https://ci.example.dev/acme/site",
            MemoryType::Reference,
        ),
        ("我平时在上海，和柏林的同事有时差。", MemoryType::User),
    ] {
        let found = candidates(prompt);
        assert!(
            found.iter().any(|c| c.memory_type == t),
            "{prompt}: {found:?}"
        );
    }
    // About the person, said otherwise than "I'm a …".
    for prompt in [
        "I use helix, not vim, so give me helix keybindings",
        "call me Sam",
    ] {
        let c = one(prompt);
        assert_eq!(c.memory_type, MemoryType::User, "{prompt}");
    }
}

/// Standing rules said after a lead-in, mid-sentence, or of their subject; facts about
/// the person said otherwise than "I'm a …"; a rule pointed back at with "that's the rule".
#[test]
fn rules_in_the_middle_of_task_talk() {
    for (prompt, t) in [
        (
            "Fix the lint first. Also, unrelated: in this repo we use pytest-xdist for the slow suite, not plain pytest.",
            MemoryType::Project,
        ),
        (
            "Quick rule for this service: request logs must never contain the auth header.",
            MemoryType::Feedback,
        ),
        (
            "The staging broker drops messages above 1 MB, so never batch more than 500 events into one publish.",
            MemoryType::Feedback,
        ),
        (
            "Public handlers return problem+json errors and log the cause server-side. That's the rule going forward for every new route.",
            MemoryType::Feedback,
        ),
        (
            "We use ruff here, not black, for anything new.",
            MemoryType::Project,
        ),
        (
            "For the next screens: we keep data fetching out of components in this app.",
            MemoryType::Project,
        ),
        (
            "I'm mostly a frontend person, so go slower on the SQL.",
            MemoryType::User,
        ),
        (
            "I'm in Lisbon, so give times in Lisbon time.",
            MemoryType::User,
        ),
        (
            "Note for later: the staging cache is cache-stg.example.internal:6379.",
            MemoryType::Reference,
        ),
        (
            "Our runbook is https://wiki.example.com/spaces/OPS/pages/48213/oncall",
            MemoryType::Reference,
        ),
        (
            "仪表盘在这里：https://grafana.example.com/d/ops ，出问题先看这个。",
            MemoryType::Reference,
        ),
        (
            "我们这个仓库用 uv 管理依赖，不用 poetry。",
            MemoryType::Project,
        ),
        ("不对，配置不要用 yaml，用 toml。", MemoryType::Feedback),
        (
            "另外说一下，所有接口的返回都必须带 request_id。",
            MemoryType::Feedback,
        ),
        (
            "私はバックエンド寄りのエンジニアで、CSSはあまり詳しくありません。",
            MemoryType::User,
        ),
        (
            "please keep your answers short and skip the recap",
            MemoryType::Feedback,
        ),
        (
            "回答的时候请用中文，代码注释保持英文。",
            MemoryType::Feedback,
        ),
        (
            "Every time you add an env var, document it in .env.example too.",
            MemoryType::Feedback,
        ),
        (
            "Whenever I say 'ship it', I mean open the PR, not merge it.",
            MemoryType::Feedback,
        ),
        (
            "Incidents are tracked in PagerDuty under the payments service.",
            MemoryType::Reference,
        ),
        (
            "I'm in the Paris office, so my mornings are CET.",
            MemoryType::User,
        ),
        ("私はエディタにEmacsを使っています。", MemoryType::User),
        ("我用的是 Linux，Fedora 40。", MemoryType::User),
    ] {
        let c = one(prompt);
        assert_eq!(c.memory_type, t, "{prompt}: {c:?}");
    }
    let c = one(
        "Public handlers return problem+json errors and log the cause server-side. That's the rule going forward for every new route.",
    );
    assert!(
        c.rule.starts_with("Public handlers return problem+json"),
        "{c:?}"
    );
    assert_eq!(c.how.as_deref(), Some("Applies for every new route."));
    // "Don't do that" keeps what "that" was.
    let c = one("Looks fine. I see you wrapped every call in a retry loop. Please don't do that.");
    assert_eq!(
        c.rule,
        "I see you wrapped every call in a retry loop. Don't do that."
    );
    none("Please don't do that.");
    // A reason before 覚えて points back; it is not the memory.
    let c = one(
        "本番の Airflow は https://airflow.example.com です。後で使うので覚えておいてください。",
    );
    assert_eq!(
        c.rule,
        "本番の Airflow は https://airflow.example.com です。"
    );
    for prompt in [
        "remember to regenerate the client after this change, then open the PR",
        "Remember we have the review at 4pm, so keep main green until then.",
        "Never seen this warning before: `EADDRINUSE`. Any idea?",
        "ドキュメントにはこう書いてあります：「トークンは常に30分で失効します。」この通りですか？",
        "文档里写着：“永远不要在循环里开事务。”我们是这样做的吗？",
        "いつも同じブラウザで起きるので、キャッシュの問題だと思います。",
        "I tried it twice, but never got the build green.",
        "explain to me how the cache works",
        "Whenever you're ready, run the full suite.",
        "whenever you get a chance, look at the flaky test",
        "the bug is tracked in Jira, it's WEB-88, can you fix it?",
        "I think we should never have split the service, honestly.",
        "Reply with yes or no and the line number.",
        "I never actually understood the borrow checker.",
        "Don't merge until she approves.",
        "the watcher never picks up changes to templates, only to markdown. always have to restart it. can you look?",
        "Every time I add a field to the record, the JSON instance silently drops it. Can you derive it instead?",
        "Every single time I run the load test one core is at 100%. I always assumed it was the room server, but it shouldn't be.",
        "The snapshots broke because someone decided we should always print full paths in every message.",
        "I love how every time I touch the parser the snapshot suite explodes.",
        "いつもありがとう、助かります。",
        "Compare the two options in our policy doc: Atlantis vs Spacelift.",
        "Add a cache to the price lookup; it should always expire after 5 minutes.",
        "The reviewer wrote in the PR: \"we should always pin the base image\". Is that needed here?",
        "Here is the part of the vendor's contract that matters:\n\n  4.1 The client must never retry a 409.\n\nDo we?",
        "golangci-lint says:\n\ncmd/api/main.go:12:1: don't use an underscore in package name (revive)",
    ] {
        none(prompt);
    }
}

/// A short CJK rule after an English pleasantry is a rule of its own, not glued to it.
#[test]
fn a_cjk_rule_after_thanks_stands_alone() {
    for (prompt, rule) in [
        ("Thanks. 以后总是用 pnpm。", "总是用 pnpm。"),
        ("Thanks. 以後總是用 pnpm。", "總是用 pnpm。"),
        ("Thanks. 今後はpnpmを使って。", "pnpmを使って。"),
    ] {
        let found = candidates(prompt);
        assert_eq!(found.len(), 1, "{prompt}: {found:?}");
        assert_eq!(found[0].rule, rule, "{prompt}");
    }
}

/// Files a tool writes or a vendor owns are never to be edited by hand: a bare "don't touch
/// generated/" is a standing rule, while "don't touch the tests" stays the task's.
#[test]
fn hands_off_generated_and_vendored_files() {
    for prompt in [
        "don't touch the generated/ directory, it is regenerated by protoc on every build",
        "don't touch generated/",
        "do not modify anything in generated/, it's overwritten by the codegen",
        "please don't edit the vendor folder",
        "don't edit src/api/client.ts, it's generated from the openapi spec",
        "do not edit the files in the generated directory",
        "avoid editing generated/ files",
        // After a lead-in.
        "Anyway, don't touch vendor/.",
        "Anyway — don't touch vendor/.",
        // Without "don't".
        "leave vendor/ alone",
        "please leave the generated/ folder alone, protoc owns it",
        "stay out of third_party/",
        "hands off the generated/ folder",
        "ok here's the thing: don't touch vendor/.",
    ] {
        let found = candidates(prompt);
        assert_eq!(found.len(), 1, "{prompt}: {found:?}");
        assert_eq!(found[0].memory_type, MemoryType::Feedback, "{prompt}");
    }
    for prompt in [
        "don't touch the tests, just fix the code",
        "don't change the config for now",
        "don't touch the migrations directory",
        "leave it alone",
        "leave the tests alone for now",
        "stay out of the way of the release branch",
        "the thing is broken again",
    ] {
        assert!(
            candidates(prompt).is_empty(),
            "{prompt}: {:?}",
            candidates(prompt)
        );
    }
}

/// A secret handed over for the task ("…, please set it in .env.local") leaves a request once
/// redaction took it out: no memory. Where a secret lives is one.
#[test]
fn a_secret_handed_over_for_the_task_is_no_memory() {
    for prompt in [
        "my OpenAI key is [REDACTED:openai-key], please set it in .env.local",
        "here's the stripe key: [REDACTED:stripe-key] - add it to the staging secrets",
        "the token is [REDACTED:github-token], can you put it in the CI settings",
    ] {
        assert!(
            candidates(prompt).is_empty(),
            "{prompt}: {:?}",
            candidates(prompt)
        );
    }
    assert!(
        !candidates("remember the staging DB password is in 1Password under Staging DB").is_empty()
    );
}

/// Error messages pasted or quoted from a tool read like rules ("never pass a negative
/// amount") but are the program's words: a Python traceback, a Java stack trace, a
/// linter's message in quotes.
#[test]
fn pasted_error_messages_are_not_rules() {
    for prompt in [
        "Traceback (most recent call last):\n  File \"a.py\", line 3\n    raise ValueError(\"never pass a negative amount\")\nValueError: never pass a negative amount\nwhy?",
        "Exception in thread \"main\" java.lang.IllegalStateException: Never call commit() twice\n\tat com.acme.Tx.commit(Tx.java:42)",
        "ValueError: never pass a negative amount",
        "I'm getting 'Error: Use tabs, not spaces (indent)' from eslint",
        "eslint says \"error: never use var\" — fix it",
        "got this TypeError: Don't call hooks conditionally",
        "error[E0382]: borrow of moved value: `x`\n --> src/main.rs:4:20\n  |\n  = note: never use a value after it was moved",
    ] {
        assert!(
            candidates(prompt).is_empty(),
            "{prompt}: {:?}",
            candidates(prompt)
        );
    }
    // The user's own rules about errors stay.
    for prompt in [
        "Error handling: always wrap errors with context",
        "Remember: always wrap errors with anyhow context",
        "from now on, never swallow exceptions in the payment worker",
        // A ban on a kind of thing, said bare.
        "don't swallow errors",
        "do not catch generic exceptions",
        "don't ignore errors returned by Close()",
    ] {
        assert!(!candidates(prompt).is_empty(), "{prompt}");
    }
}

/// Pasted output, quoted reviewers and task specs stay out; rules said in passing with a
/// lead-in, a correction put as a fact, an addendum to a design sentence are kept.
#[test]
fn pasted_text_and_buried_rules() {
    for prompt in [
        "tests are failing:\n\nrunning 12 tests\nthread 'io::tests::reopen' panicked at src/io.rs:40:5:\nassertion failed: a handle must never be reused\n\ntest result: FAILED. 11 passed; 1 failed\n\nlook into it",
        "modem log:\n\n[00:00:12.100,000] <err> lte: never got an IP, giving up\n[00:00:12.200,000] <inf> lte: retrying\n\nwhy?",
        "tokio docs for `Runtime::block_on`:\n\nThis function should never be called from within an async context.\n\nare we doing that?",
        "Maria's review: \"Don't use unwrap here, and never log the token\". The second one is done, fix the first.",
        "レビューコメントです：「ループの中でallocしないでください。」直してもらえますか。",
        "Let's build the settings screen. Toggles should always be right-aligned, not left. Start with the ViewModel.",
        "Here's the CONTRIBUTING section I wrote, can you proofread it?\n\n## Setup\nAlways run `make bootstrap` after pulling.\n\nNever commit `.env.local`.",
        "新機能の仕様です：設定画面を追加。通知は常にオフで始めること。",
        "公式ドキュメントにこう書いてありました：「ハンドラは常に冪等でなければならない。」うちの実装は大丈夫？",
        "remember, this is just a spike branch, so don't polish the error handling",
        "Write a short page for the wiki about the cache. Don't make it longer than a page, and don't include code.",
        "Spec for the coupon feature: a code applies once per order. The discount must never exceed the subtotal. Please create the model.",
        "New feature: exports get a `spec.retention` field. Exports must always go to the bucket in spec.bucket, never to a default one.",
        "remember to also bump the version after you change the schema",
        "don't forget to regenerate the mocks after the interface rename change",
        "Use the platform keychain if possible instead of a file.",
        "ローカルでは常に通ります。CIだけ落ちます。",
        "哈哈，又是这个测试，永远的痛。",
    ] {
        none(prompt);
    }
    for (prompt, rule_starts) in [
        (
            "Fix the import first. The cache files are huge btw, so in this repo I'd rather you always pass --max-filesize to rg.",
            "The cache files are huge btw, so in this repo",
        ),
        (
            "Can you check the crash? Btw for the future: the UI thread owns the scene graph. That's the design, don't add locks around it.",
            "The UI thread owns the scene graph.",
        ),
        (
            "Correction: the feature flags are in Unleash, not in the config file.",
            "The feature flags are in Unleash",
        ),
        (
            "Also for all services in this repo: every service must expose a /healthz endpoint.",
            "Every service must expose",
        ),
        (
            "For context: I've written Go for about 8 years but I'm new to Kubernetes.",
            "I've written Go",
        ),
        (
            "The build farm is build-03.lab.example.internal, log in as ci.",
            "The build farm is",
        ),
        (
            "One thing in general: I'm fine with terse answers, don't pad them.",
            "I'm fine with terse answers",
        ),
        (
            "このプロジェクトでは日付はすべてUTCで保存するルールです。覚えておいてください。",
            "このプロジェクトでは日付はすべてUTCで保存するルールです。",
        ),
        (
            "違います、HTTPクライアントはAlamofireじゃなくてURLSessionを使っています。今後もURLSessionで書いてください。",
            "",
        ),
        (
            "纠正一下：我们的最低支持版本是 iOS 15，不是 iOS 14。以后都按 15 来。",
            "我们的最低支持版本是 iOS 15，不是 iOS 14。都按 15 来",
        ),
        (
            "顺便说一下，这个仓库里所有的配置都放在 config/ 目录，不要在代码里写死。",
            "这个仓库里所有的配置都放在",
        ),
        (
            "Please answer in short bullet points unless I ask for detail.",
            "Answer in short bullet points",
        ),
    ] {
        let found = candidates(prompt);
        assert!(!found.is_empty(), "{prompt}");
        assert!(
            found.iter().any(|c| c.rule.starts_with(rule_starts)),
            "{prompt}: {found:?}"
        );
    }
    // "No hardcoded copy" keeps its "No" as a Why.
    let c = one(
        "From now on, every label goes through the translation keys. No hardcoded copy, legal reviews every string.",
    );
    assert_eq!(
        c.why.as_deref(),
        Some("No hardcoded copy, legal reviews every string.")
    );
    // "it" late in the sentence has its noun: nothing is borrowed from the bug report.
    let c = one(
        "The readings on rev A are off since the overlay change. remember: rev A boards have the sensor on I2C1 and rev B moved it to I2C2.",
    );
    assert_eq!(
        c.rule,
        "Rev A boards have the sensor on I2C1 and rev B moved it to I2C2."
    );
}

/// How the agent should answer the person holds wherever they work.
#[test]
fn rules_said_to_hold_everywhere_are_personal() {
    for prompt in [
        "すべてのプロジェクトで、コミットメッセージは英語で書いてください。",
        "どのリポジトリでも、npmは使わないで。",
        "全局：不要用 emoji。",
        "Never use emojis in commit messages. This applies everywhere, not just here.",
        "In all my projects, never use npm; use pnpm.",
        "Globally: never run rm -rf without asking me.",
        "In all my projects, always write commit messages in the imperative mood.",
        "Please never add Co-Authored-By trailers to my commit messages.",
        "Never use emojis in my commit messages, in any repo.",
    ] {
        assert!(one(prompt).personal, "{prompt}");
    }
    // The project's own, though the person's words: "my" of the repo at hand.
    for prompt in [
        "Never use emojis in commit messages in this repo.",
        "In this repo, my commits must be signed, always.",
    ] {
        assert!(!one(prompt).personal, "{prompt}");
    }
}

#[test]
fn a_practice_given_up_is_a_rule() {
    for prompt in [
        "Stop running the full test suite before pushing.",
        "You no longer need to run the full test suite before pushing.",
        "Don't run the full test suite before pushing anymore; just run the affected tests.",
    ] {
        assert_eq!(one(prompt).memory_type, MemoryType::Feedback, "{prompt}");
    }
    for prompt in [
        "you don't need to run the tests, I'll do it",
        "no need to rebuild, just restart it",
        "stop running the server for a sec",
    ] {
        none(prompt);
    }
}

/// A file the project keeps for good is where a standing rule applies, not the code at hand;
/// a source file still is the code at hand.
#[test]
fn a_standing_file_is_no_file_at_hand() {
    for p in [
        "Always write changelog entries in CHANGELOG.md under Unreleased.",
        "Always document new env vars in README.md.",
        "Always list new env vars in CONTRIBUTING.md.",
    ] {
        assert_eq!(one(p).memory_type, MemoryType::Feedback, "{p}");
    }
    none("Always return early in parser.rs.");
}

/// A task that applies a rule now, spliced on after a comma, is not part of the rule.
#[test]
fn a_task_that_applies_the_rule_now_is_left_out() {
    for (p, rule) in [
        (
            "From now on we use pnpm instead of npm, update the CI config accordingly.",
            "We use pnpm instead of npm.",
        ),
        (
            "Never use default exports, fix the existing ones to match.",
            "Never use default exports.",
        ),
    ] {
        assert_eq!(one(p).rule, rule, "{p}");
    }
}

#[test]
fn rules_that_say_nothing_and_redacted_secrets_are_not_kept() {
    for p in [
        "Always be careful.",
        "Never make mistakes.",
        "Always write good code.",
        "常に気をつけてください。",
        "一定要小心。",
        "Never be lazy.",
        "Always do things properly.",
        "remember that the AWS key is [REDACTED:aws-access-key] with secret [REDACTED:secret]",
        "My API key is [REDACTED:openai-key] — always use it for the staging tests.",
    ] {
        none(p);
    }
    for p in [
        "Always write tests for new code.",
        "Always be careful with migrations.",
        "the staging db password is in 1Password under Staging DB, never paste it",
    ] {
        one(p);
    }
}

#[test]
fn retractions_name_what_to_forget() {
    let subject = |p: &str| -> Vec<String> {
        crate::extract::retractions(p)
            .into_iter()
            .map(|r| r.subject)
            .collect()
    };
    assert_eq!(
        subject("Forget the rule about running the full test suite before pushing."),
        ["running the full test suite before pushing"]
    );
    assert_eq!(
        subject("Ignore what I told you about the staging DB, it moved."),
        ["the staging DB"]
    );
    assert_eq!(subject("squashのルールは忘れて"), ["squash"]);
    assert_eq!(subject("忘掉关于 squash 的那条规则"), ["squash"]);
    for (p, want) in [
        ("pnpmのルールはMemoryから忘れて", "pnpm"),
        ("pnpmのルールはメモリから消して", "pnpm"),
        ("pnpmのことは忘れてください", "pnpm"),
        ("把pnpm那条记忆删掉吧", "pnpm"),
        ("关于pnpm我说的话忽略吧，以后用bun", "pnpm"),
        ("You can forget the lint rule", "lint"),
        ("Forget about the make lint thing", "the make lint"),
    ] {
        assert_eq!(subject(p), [want], "{p}");
    }
    // What follows it in CJK is read as a statement, and never cut inside a character.
    let c = candidates("忘掉关于 squash 的那条规则，以后用 merge commit");
    assert!(c.iter().any(|c| c.rule.contains("merge commit")), "{c:?}");
    for p in [
        "ok forget it, let's move on",
        "forget that",
        "ignore the failing test for now",
        "don't forget the changelog",
        "should I forget about the cache?",
        "ignore memory for this one",
    ] {
        assert!(subject(p).is_empty(), "{p}");
    }
    // What follows a retraction in its sentence is read as a statement; the retraction is not.
    let c = candidates(
        "Forget what I said about squashing commits, that's no longer true — we use merge commits now.",
    );
    assert_eq!(c.len(), 1, "{c:?}");
    assert!(c[0].rule.contains("merge commits"), "{c:?}");
    assert!(candidates("Forget the rule about squashing commits.").is_empty());
}

#[test]
fn rules_about_replies_are_personal() {
    for prompt in [
        "From now on, answer me in French.",
        "never use emojis in anything you write for me",
        "Always keep your answers under ten lines, whatever the repo.",
        "今後は敬語なしで話してください。",
        "以后回答尽量用中文。",
        "Please answer in short bullet points unless I ask for detail.",
        "Keep explanations practical please.",
    ] {
        assert!(one(prompt).personal, "{prompt}");
    }
    let c = one("Write commit subjects under 60 characters. That applies to all my repos.");
    assert!(c.personal, "{c:?}");
    assert_eq!(c.how.as_deref(), Some("Applies to all my repos."));
    for prompt in [
        "From now on, use pnpm.",
        "Don't use emojis in code comments",
        "From now on, write the commit messages for this repo in English.",
    ] {
        assert!(!one(prompt).personal, "{prompt}");
    }
}

#[test]
fn english_shapes() {
    assert_eq!(
        one("Always run cargo fmt before committing.").trigger,
        "always"
    );
    let c = one("we use pnpm, not npm");
    assert_eq!((c.memory_type, c.trigger), (MemoryType::Project, "we-use"));
    let c = one("no, use yarn");
    assert_eq!(
        (c.memory_type, c.trigger),
        (MemoryType::Feedback, "correction")
    );
    let c = one("I'm a backend engineer who mostly writes Go.");
    assert_eq!(c.memory_type, MemoryType::User);
    let c = one("remember to run migrations before deploying");
    assert_eq!(
        (c.memory_type, c.rule.as_str()),
        (MemoryType::Feedback, "Run migrations before deploying.")
    );
    let c = one("Remember: the on-call dashboard is https://grafana.example.com/d/oncall");
    assert_eq!(c.memory_type, MemoryType::Reference);
    let c = one("don't use default exports in this repo because they break tree shaking");
    assert_eq!(c.rule, "Don't use default exports in this repo.");
    assert_eq!(c.why.as_deref(), Some("They break tree shaking."));
    let c = one("don't use any, use unknown instead");
    assert_eq!(c.rule, "Don't use any, use unknown instead.");
    let c = one("Make sure you never log PII.");
    assert_eq!((c.memory_type, c.trigger), (MemoryType::Feedback, "always"));
    let c = one("I never use the mouse in the editor.");
    assert_eq!(c.memory_type, MemoryType::User);
    let c = one("Note to self: the API key rotates every 90 days");
    assert_eq!(c.rule, "The API key rotates every 90 days.");
    let c = one("Prefer composition over inheritance in this codebase.");
    assert_eq!(
        (c.memory_type, c.trigger),
        (MemoryType::Feedback, "standing")
    );
    let c = one("remember this for later: the vendor SDK is pinned to 2.3 because 2.4 breaks auth");
    assert_eq!(c.rule, "The vendor SDK is pinned to 2.3.");
    assert_eq!(c.why.as_deref(), Some("2.4 breaks auth."));
}

#[test]
fn japanese_shapes() {
    let c = one("テストではモックを使わないでください。");
    assert_eq!((c.memory_type, c.trigger), (MemoryType::Feedback, "dont"));
    let c = one("今後はpnpmを使ってください。");
    assert_eq!(
        (c.memory_type, c.rule.as_str()),
        (MemoryType::Feedback, "pnpmを使ってください。")
    );
    let c = one("ステージングのURLはhttps://staging.example.comだと覚えておいて");
    assert_eq!(c.memory_type, MemoryType::Reference);
    let c = one("本番DBは壊れやすいので、マイグレーションは常にステージングで試してください。");
    assert_eq!(
        c.rule,
        "マイグレーションは常にステージングで試してください。"
    );
    assert_eq!(c.why.as_deref(), Some("本番DBは壊れやすい。"));
    let c = one("本番DBは共有なので、マイグレーションは必ずstagingで先に試して");
    assert_eq!(c.why.as_deref(), Some("本番DBは共有。"));
    let c = one("このリポジトリでは常にyarnを使って");
    assert_eq!((c.memory_type, c.trigger), (MemoryType::Feedback, "always"));
    let c = one("コミット前に常にlintを実行する。");
    assert_eq!(c.trigger, "always");
}

#[test]
fn chinese_shapes() {
    let c = one("记住：预发环境的数据库在 staging-db.internal:5432");
    assert_eq!(c.memory_type, MemoryType::Reference);
    let c = one("以后提交信息用英文写。");
    assert_eq!(
        (c.memory_type, c.trigger),
        (MemoryType::Feedback, "from-now-on")
    );
    let c = one("不要在测试里模拟数据库，因为上次迁移在生产环境出错了。");
    assert_eq!(c.rule, "不要在测试里模拟数据库。");
    assert!(c.why.is_some());
    let c = one("我们用 pnpm，不用 npm。");
    assert_eq!(c.memory_type, MemoryType::Project);
    let c = one("总是先跑测试再提交。");
    assert_eq!(c.trigger, "always");
    let c = one("总是先跑测试再提交，因为上次直接提交导致构建失败了。");
    assert_eq!(c.trigger, "always");
    assert!(c.why.is_some());
    let c = one("记住我喜欢简洁的回答");
    assert_eq!(c.memory_type, MemoryType::User);
}

#[test]
fn memory_paths() {
    let d = AgentMemoryDirs {
        claude_roots: vec!["/h/.cl".into()],
        claude_memory_dirs: vec!["/h/mem".into()],
        codex_homes: vec!["/h/.cx".into()],
    };
    assert!(d.is_memory_path("/h/.cl/projects/-a-b/memory/x.md"));
    assert!(d.is_memory_path("/other/.claude/projects/-a/memory/MEMORY.md"));
    assert!(d.is_memory_path("/h/mem/x.md"));
    assert!(d.is_memory_path("/h/.cx/memories/extensions/ad_hoc/notes/2026-x.md"));
    assert!(!d.is_memory_path("/h/work/src/memory/x.ts"));
    // The instruction files the agents load every session in this directory.
    let cwd = Some("/h/work/app");
    let roots = [PathBuf::from("/h/.claude")];
    assert!(is_instruction_file("/h/work/app/CLAUDE.md", cwd, &roots));
    assert!(is_instruction_file(
        "/h/work/app/.claude/CLAUDE.md",
        cwd,
        &roots
    ));
    assert!(is_instruction_file(
        "/h/work/app/.claude/rules/yaml.md",
        cwd,
        &roots
    ));
    assert!(is_instruction_file("AGENTS.md", cwd, &roots));
    assert!(is_instruction_file("/h/.claude/CLAUDE.md", cwd, &roots));
    assert!(!is_instruction_file(
        "/h/work/app/docs/templates/CLAUDE.md",
        cwd,
        &roots
    ));
    assert!(!is_instruction_file("docs/CLAUDE.md", cwd, &roots));
    assert!(!is_instruction_file(
        "/h/work/app/docs/CLAUDE-notes.md",
        cwd,
        &roots
    ));
    assert!(!d.is_memory_path("/h/.cl/projects/-a-b/abc.jsonl"));
}

/// What follows a rule is its Why only when it explains: the task going on ("and check …",
/// "then check …") or a fragment ("Ever.") is not a reason; "from now on, like this" is the
/// sentence before, never a memory of its own.
#[test]
fn what_follows_a_rule_is_not_always_its_why() {
    let c = one(
        "probably a popUpTo somewhere. we use the type-safe navigation with @Serializable route classes btw, dont write string routes. and check the deep link for /trail/{id} while youre there",
    );
    assert!(c.rule.contains("@Serializable route classes"), "{c:?}");
    assert_eq!(c.why, None, "{c:?}");
    let c = one(
        "heads up we only use tailwind utilities in markup, no <style> blocks in components. then check the /hosts page for the same thing",
    );
    assert_eq!(c.why, None, "{c:?}");
    let c = one("nah dont use GlobalScope. ever.");
    assert_eq!(c.why, None, "{c:?}");
    // A reason still is one.
    let c = one("never use GlobalScope. It leaks work past the screen that started it.");
    assert!(c.why.is_some_and(|w| w.starts_with("It leaks")));

    let c = candidates("返事は日本語で、コードのコメントは英語でお願いします。今後ずっとこれで");
    assert!(c.iter().all(|c| !c.rule.starts_with("ずっと")), "{c:?}");
    let c = one("PRのタイトルは英語で書く。今後ずっとこれで。");
    assert!(c.rule.starts_with("PRのタイトルは英語で書く"), "{c:?}");
    let c = one("The changelog entry goes in the same PR as the change. From now on, like this.");
    assert!(c.rule.starts_with("The changelog entry goes"), "{c:?}");
}

/// How the project changed is a fact to keep (it retires what held before); a change of the
/// moment (a branch, the next ticket, code moved between files) is not.
#[test]
fn project_changes_are_facts() {
    for p in [
        "CI moved from CircleCI to GitHub Actions.",
        "The staging server moved to staging2.acme.internal.",
        "We upgraded to Python 3.12, 3.11 is no longer used.",
        "we moved off jenkins, CI is github actions now",
        "heads up: we migrated the db from mysql to postgres last week",
        "fyi we switched from jest to vitest",
        "we no longer use redux, it's all zustand now",
        "the api moved to api.acme.io",
    ] {
        let c = one(p);
        assert_eq!(c.memory_type, MemoryType::Project, "{p}: {c:?}");
        assert_eq!(c.trigger, "changed", "{p}: {c:?}");
    }
    let c = one("Stop squash-merging PRs; use rebase merges instead.");
    assert_eq!(c.memory_type, MemoryType::Feedback);
    for p in [
        "we moved the handler to a separate file, can you update the imports",
        "I switched to the feature branch, now run the tests",
        "we moved on to the next ticket",
        "ok we switched to a different approach, try the streaming parser",
        "the build moved to the new runner, why is it failing now?",
        "we migrated the users table yesterday and now login is broken",
        "The function was moved to utils.rs in the last commit",
        "we switched to the new parser last week and now the tests hang, look at the logs",
        "we moved to pnpm and since then the lockfile keeps breaking",
        "we upgraded to react 19 yesterday and the build fails",
    ] {
        none(p);
    }
}

/// Standing wishes and policies said without a marker word: "ask before adding …", "when i
/// ask why …, give me …", how the person works "…, so keep …", a Japanese policy (方針,
/// ルール, 決まり) without the task after it, a Chinese "统一用 X，不用 Y", "这个你记一下".
#[test]
fn policies_and_habits_without_a_marker() {
    let c = one("please ask before adding any new dependency, even tiny ones");
    assert_eq!(c.memory_type, MemoryType::Feedback);
    let c = one(
        "when i ask why something happens give me the root cause in one or two sentences first, then details",
    );
    assert!(c.personal, "{c:?}");
    let c = one("talk to me like a peer. skip the recap paragraph at the end");
    assert!(
        c.personal && c.rule.starts_with("Talk to me like a peer"),
        "{c:?}"
    );
    for p in [
        "i review everything on my phone in the github app so keep PR descriptions short, bullets, no tables",
        "i'm usually on a slow train connection when i work on this, so prefer commands that dont download half the internet",
        "私はSREチームのリードで、インフラのレビューは基本私がやってます",
    ] {
        assert_eq!(one(p).memory_type, MemoryType::User, "{p}");
    }
    let c = one(
        "order指定がないのが原因な気がする。一覧系のクエリは基本created_atとidの複合でorderする決まりなので、それに合わせて直して。",
    );
    assert_eq!(
        c.rule,
        "一覧系のクエリは基本created_atとidの複合でorderする決まり。"
    );
    assert_eq!(c.memory_type, MemoryType::Project);
    let c = one(
        "ちなみにCloudFront関連は全部modules/cdnにまとめてあって、envs側で直接aws_cloudfront_distributionを書かないルールにしてます。",
    );
    assert!(c.rule.starts_with("CloudFront関連は"), "{c:?}");
    let c = one("違う違う、シークレットはSSM Parameter StoreじゃなくてSecrets Managerに入れてる");
    assert_eq!(c.memory_type, MemoryType::Project);
    let c = one(
        "我们这边图片加载统一用 Coil，不用 Glide，你要是看到 Glide 的代码那是老代码，可以顺手删掉。",
    );
    assert_eq!(c.rule, "我们这边图片加载统一用 Coil，不用 Glide。");
    let c = one(
        "哦对了，RDS 的小版本升级我们是交给 AWS 自动升级的，所以 tf 里 engine_version 只写大版本 15，这个你记一下。",
    );
    assert!(c.rule.starts_with("RDS 的小版本升级"), "{c:?}");
    for p in [
        "ask before you start",
        "when you ask me something, just ask",
        "i usually forget to run the linter so that's why CI fails",
        "この方針で進めて",
        "修正方針ですが、まずテストを書きます",
        "今回はこのルールで行こう",
        "そのファイルじゃなくてcart.tsを直して。",
    ] {
        none(p);
    }
}

/// How the project changed, said plainly in three languages, and context given in passing
/// ("fyi", "for context") that says how things always are.
#[test]
fn plain_changes_and_asides() {
    for p in [
        "we dropped zap last sprint, everything logs through log/slog now (the otel handler wraps it)",
        "proto/ moved out to its own repo (fernpay/apis) last week and we consume it via a bazel_dep now",
        "we dont use sqlfmt anymore, it fought with sqlfluff on every PR",
        "we no longer have the LEGACY_DWH database, it got dropped in october after the cutover.",
        "core data is gone, we migrated to SwiftData in 2.4.",
        "我们上个月把 Fivetran 换成 Airbyte 了，现在 raw 层的表都是 Airbyte 同步的",
        "我们已经不用 Alamofire 了，网络层现在是 URLSession + async/await 自己封装的 APIClient",
        "CIはJenkinsからGitHub Actionsに移行しました。",
        "poetryはやめて、uvに移行した。",
    ] {
        let c = one(p);
        assert_eq!(
            (c.memory_type, c.trigger),
            (MemoryType::Project, "changed"),
            "{p}: {c:?}"
        );
    }
    let c = one(
        "fyi the BUILD files are generated — run `bazel run //:gazelle` instead of hand-editing them. anyway can you figure out why go_default_library is referenced here",
    );
    assert!(
        c.rule.starts_with("The BUILD files are generated — run"),
        "{c:?}"
    );
    assert_eq!(c.why, None, "{c:?}");
    let c = one(
        "so the backfill worked but it took 40 min. for context the XL warehouse is only for the nightly full refresh, everything else goes on TRANSFORM_WH_S unless i say otherwise. can you rerun the rest",
    );
    assert!(c.rule.starts_with("The XL warehouse is only"), "{c:?}");
    let c = one(
        "context in case it matters: only the app writes to the app group, the widget is strictly read-only.",
    );
    assert!(c.rule.starts_with("Only the app writes"), "{c:?}");
    for (p, want) in [
        ("规矩是字段只能加不能删、不能改名改编号。", "standing"),
        (
            "背景：我们的第三方 SDK 只有 Sentry 和 RevenueCat，别的都不允许加。",
            "standing",
        ),
    ] {
        assert_eq!(one(p).trigger, want, "{p}");
    }
    for p in [
        "btw the tests only fail on CI, never locally",
        "fyi the bug is gone now",
        "the flaky test is gone, thanks",
        "we removed the debug logging in the last PR",
        "fyi i'm out tomorrow",
        "把这张图的 y 轴改成对数刻度。",
        "你先看看计时逻辑，然后把闪烁时间从 0.3 秒改成 0.6 秒。",
    ] {
        none(p);
    }
}

/// A convention said as a fact, with a rule in a clause of its own or "everywhere" in it.
#[test]
fn conventions_said_as_facts() {
    for (p, t) in [
        (
            "the project is generated with tuist, never commit the .xcodeproj — edit Project.swift and run `tuist generate`",
            MemoryType::Feedback,
        ),
        (
            "amounts are int64 minor units everywhere in ledgerd, no floats and no decimal strings on the wire.",
            MemoryType::Project,
        ),
        (
            "every feature is a TCA reducer with @Reducer + @ObservableState, views take a StoreOf<Feature>.",
            MemoryType::Project,
        ),
        (
            "the ui layer is StateFlow everywhere, collected with collectAsStateWithLifecycle",
            MemoryType::Project,
        ),
    ] {
        assert_eq!(one(p).memory_type, t, "{p}");
    }
    for p in [
        "For the save-game format: version the header, write a u32 magic, and always write the chunk table before the payload so we can seek.",
        "it crashes everywhere on android 12",
        "i looked everywhere for the config, where is it",
        "every test is flaky since the upgrade",
        "every time i run it, it hangs",
        "the build is slow, never mind",
        "day 10: downgrade to free plan, never delete data",
    ] {
        none(p);
    }
}

/// Pointers labelled like notes ("crashes: crashlytics → URL", "… runbook (…): URL"), one tool
/// for a part of the project ("pnpm only in this repo", "ログは全部defmtで", "用 X，不用 Y"),
/// a thing ruled out for a part ("no unwrap()/expect() in firmware/app"), where the person is.
#[test]
fn labelled_pointers_and_one_tool_for_a_part() {
    for p in [
        "crashes: crashlytics → https://console.firebase.google.com/project/mossrun-prod/crashlytics",
        "prod db incident runbook (restore from a neon branch, rotating creds etc): https://plinth.notion.site/DB-incident-runbook-88c2d1",
        "prod errors are in sentry: https://plinth.sentry.io/issues/?project=4507712",
        "rev C bringup notes + schematics: https://www.notion.so/kestrel/Rev-C-bringup-4f1a9c2e0b",
        "我们的 issue 在 YouTrack 上，不在 GitHub：https://kestrel.youtrack.cloud/projects/FW",
    ] {
        assert_eq!(one(p).memory_type, MemoryType::Reference, "{p}");
    }
    for p in [
        "pnpm only in this repo. lockfile is pnpm-lock.yaml",
        "no unwrap()/expect() in firmware/app. either handle the error or panic with a message",
        "ログは全部defmtで。",
        "UIはUI ToolkitじゃなくてuGUI（Canvas）で作ってます。",
        "序列化用 postcard，不用 serde_json，板子上就 256K RAM 没那么多空间",
        "fyi we flash with probe-rs now, openocd+gdb is gone.",
    ] {
        assert!(!candidates(p).is_empty(), "{p}");
    }
    let c = one("序列化用 postcard，不用 serde_json，板子上就 256K RAM 没那么多空间");
    assert_eq!(c.rule, "序列化用 postcard，不用 serde_json。");
    assert_eq!(one("im in lisbon btw").memory_type, MemoryType::User);
    assert_eq!(
        one("tbh i'd rather you ask before adding any package to Packages/manifest.json, even tiny ones")
            .memory_type,
        MemoryType::Feedback
    );
    for p in [
        "the CI run failed, see https://github.com/acme/app/actions/runs/88123991",
        "error: https://api.acme.dev/v1/users returned 500",
        "no errors in the log this time",
        "im in a meeting, back in 20",
        "it only fails in CI",
        "我现在用 vim，你先别改这个文件",
    ] {
        none(p);
    }
}

/// Reports and specs in Japanese and Chinese that say "always": what keeps happening, and a
/// numbered line of a feature spec, are not rules.
#[test]
fn cjk_reports_and_specs_are_not_rules() {
    for p in [
        "embassyのタスク2つが同じSPIバスを同時に触ってるっぽい。いつも起動直後に固まる",
        "ボタンを押すといつも2回反応する。なんで？",
        "probe-rs 总是说 probe not found，线我都重新插了好几次了",
        "新功能：远程配置下发\n1. 网关通过 downlink 下发配置，端口 10\n4. 所有字段都要做范围检查，超出范围的一律忽略\n先做 1 和 2",
    ] {
        none(p);
    }
    // A rule with いつも asks for something; 必ず stays a rule in the plain form.
    assert!(!candidates("PRを出す前にいつもlintを走らせてください。").is_empty());
    assert!(!candidates("コミット前に必ずcargo fmtを実行する。").is_empty());
}

/// The house way put right after a rebuttal, a list of what is ruled out after the fact it
/// rules on, and a few shapes said casually ("thats the convention here", "…, so dont …").
#[test]
fn house_rules_said_casually() {
    let c = one(
        "you wrote datetime.now() again. it's django.utils.timezone.now() in this codebase, every time.",
    );
    assert!(c.rule.contains("timezone.now() in this codebase"), "{c:?}");
    let c = one(
        "if the ORM cant express it, it goes into apps/core/sql.py as a plain function with its own test. thats the convention here, rewrite it that way",
    );
    assert!(c.rule.starts_with("If the ORM cant express it"), "{c:?}");
    let c = one("state mgmt is riverpod with codegen. no provider package, no bloc, no getx");
    assert!(c.rule.starts_with("State mgmt is riverpod"), "{c:?}");
    assert!(c.rule.contains("no bloc"), "{c:?}");
    let c = one(
        "timestamps are UTC in the db. depots are in 4 timezones so dont do tz math anywhere else",
    );
    assert!(c.rule.contains("so dont do tz math"), "{c:?}");
    assert!(!candidates("ログはspdlogに統一しました。").is_empty());
    assert!(!candidates("回答尽量短，直接给代码，解释一两句就够了").is_empty());
    for p in [
        "Airflow scheduler in dev is paused while infra patches the nodes, so dont bother triggering anything.",
        "Testflight build 212 is the one QA is testing, dont bump the build number until they're done.",
        "it's broken in this repo too, same error",
        "no errors, no warnings this time",
    ] {
        none(p);
    }
}

#[test]
fn plain_facts_of_the_project_and_the_person() {
    for (p, t) in [
        (
            "the `legacy/` folder is owned by the payments team in dublin",
            MemoryType::Project,
        ),
        (
            "the data team owns the `analytics` schema, we only have read access",
            MemoryType::Project,
        ),
        (
            "the reviewer for anything under billing/ is priya, tag her on the PR",
            MemoryType::Project,
        ),
        (
            "k8s manifests are generated from `deploy/jsonnet`, hand edits in `deploy/generated/` get wiped",
            MemoryType::Project,
        ),
        (
            "also — the non-english `locales/*.json` files get overwritten nightly by the sync job",
            MemoryType::Project,
        ),
        (
            "code freeze for the mobile release starts march 14th",
            MemoryType::Project,
        ),
        (
            "we deploy on tuesdays and thursdays only",
            MemoryType::Project,
        ),
        (
            "the staging db is restored from a prod snapshot every night",
            MemoryType::Project,
        ),
        ("the monorepo uses nx for everything", MemoryType::Project),
        (
            "timestamps in the db are stored as utc without tz",
            MemoryType::Project,
        ),
        (
            "all new services should be written in kotlin now",
            MemoryType::Project,
        ),
        (
            "btw we renamed the `core-api` repo to `keel`",
            MemoryType::Project,
        ),
        (
            "we switched auth providers from auth0 to ory in january",
            MemoryType::Project,
        ),
        ("my timezone is CET", MemoryType::User),
        (
            "i use neovim, so give me lua for editor config",
            MemoryType::User,
        ),
        ("be more terse.", MemoryType::Feedback),
        (
            "no more recap paragraphs at the end of each reply, i can read the diff",
            MemoryType::Feedback,
        ),
        (
            "please stop asking me before running the test suite, just run it",
            MemoryType::Feedback,
        ),
        (
            "`infra/` 配下はSREチームの管轄なので直接いじらないで",
            MemoryType::Project,
        ),
        (
            "4/25からGW明けまでリリースフリーズです",
            MemoryType::Project,
        ),
        (
            "ちなみにstagingのDBは毎晩2時にprodのスナップショットからリストアされます",
            MemoryType::Project,
        ),
        (
            "パッケージマネージャはyarnからpnpmに移行済みです",
            MemoryType::Project,
        ),
        ("Macでzsh使ってます", MemoryType::User),
        ("`payment/` 目录归支付组管", MemoryType::Project),
        (
            "6 月 18 号大促前一周封版，封版期间只能合 hotfix",
            MemoryType::Project,
        ),
        ("测试环境的 redis 每周日凌晨会清空", MemoryType::Project),
        (
            "数据库里时间统一存 UTC，展示层再转东八区",
            MemoryType::Project,
        ),
        (
            "The worker stays on Python 3.10 because of a numba pin.",
            MemoryType::Project,
        ),
        ("I moved to Berlin last month.", MemoryType::User),
        (
            "I'd like you to stop adding emojis to commit messages.",
            MemoryType::Feedback,
        ),
        (
            "In beta we always use Poetry, never pip.",
            MemoryType::Feedback,
        ),
        (
            "fyi Priya Raman owns the wasm host ABI, anything touching it needs her review",
            MemoryType::Project,
        ),
        (
            "`packages/health-bridge` belongs to Sofia Marquez's team, we only consume it",
            MemoryType::Project,
        ),
        (
            "Wen Li is who to ask about the offline store and the Delta tables.",
            MemoryType::Project,
        ),
        (
            "feature views are named `<entity>__<domain>__v<N>`, e.g. `user__activity__v3`",
            MemoryType::Project,
        ),
        (
            "quill MSRV is 1.75, pinned in rust-toolchain.toml",
            MemoryType::Project,
        ),
        (
            "we replaced Flipper with Reactotron in the fitness app a couple months ago",
            MemoryType::Project,
        ),
        (
            "the feature store repo standardized on uv, poetry.lock is gone",
            MemoryType::Project,
        ),
        (
            "when i say 'the gateway' i mean `paygate-api` specifically",
            MemoryType::Feedback,
        ),
        ("i'm in Berlin, CET/CEST.", MemoryType::User),
        ("im on nixos with helix", MemoryType::User),
        ("heads up, i'm red-green colorblind", MemoryType::User),
        (
            "i'm more data scientist than engineer, fine with pandas",
            MemoryType::User,
        ),
        (
            "offline storeは4月にDelta Lakeへ移行済みです",
            MemoryType::Project,
        ),
        (
            "StrideFitのiOSの証明書とApp Store Connectは全部Marcoさんが管理してます",
            MemoryType::Project,
        ),
        ("离线存储那块归 Wen Li 管", MemoryType::Project),
        (
            "Kenji Watanabe reviews anything that touches the offline sync code.",
            MemoryType::Project,
        ),
        (
            "We deploy billing-api with Argo CD: staging syncs automatically from main.",
            MemoryType::Project,
        ),
        ("Image loading uses Glide in this app.", MemoryType::Project),
        (
            "Production releases to the Play Store go out every other Monday after QA signs off.",
            MemoryType::Project,
        ),
        (
            "User-facing strings must go through strings.xml, no hardcoded text.",
            MemoryType::Project,
        ),
        (
            "Feature flags live in LaunchDarkly; the project key is billing-api-prod.",
            MemoryType::Reference,
        ),
        (
            "The GitHub repo got renamed from billing-api to invoicing-service.",
            MemoryType::Project,
        ),
        (
            "The prod database is backed up hourly to the S3 bucket billing-backups.",
            MemoryType::Project,
        ),
        (
            "Note that the PDF renderer dropped wkhtmltopdf, we use Gotenberg now.",
            MemoryType::Project,
        ),
        ("我用的编辑器是 Neovim，终端用 fish。", MemoryType::User),
        (
            "リリースは毎週火曜日にタグを切って行います。",
            MemoryType::Project,
        ),
        (
            "このアプリのminSdkは26に固定しています。",
            MemoryType::Project,
        ),
        (
            "Heads up: Priya moved to the platform team, so Marcus Chen is the new owner of internal/payments now.",
            MemoryType::Project,
        ),
    ] {
        let c = one(p);
        assert_eq!(c.memory_type, t, "{p}");
    }
    for p in [
        "who owns the `analytics` schema?",
        "if we ever freeze releases, the deploy job should stop",
        "Reviewer left this: \"Always prefer composition over inheritance here; never expose the internal map.\" can you address it in `RateLimiter`",
        "今CI赤いけど、たぶんいつものflakyなe2eなのでリランしといて",
        "`getUserById` 确保永远不返回 null，查不到就抛异常",
        "Windowsでビルドするといつもfmtのリンクエラーが出る",
        "deploy this to staging and tell me when it's up",
        "i'm on it, give me a minute",
        "stop the dev server and restart it",
        "I moved to the new branch and rebased",
        "can you stop adding console.log calls to this file",
        "what does `feast materialize-incremental` do if end date is in the future",
        "im on the train rn so wifi is patchy",
        "we replaced the mock with a real client and now the tests fail",
        "Alex reviews my PR tomorrow, can you clean it up before then",
        "the bug lives in the parser, can you look at it",
    ] {
        none(p);
    }
}

#[test]
fn a_why_is_about_the_rule() {
    // An unrelated fact and the task's next step are not reasons.
    for p in [
        "we use npm in this repo. The secret project codename is BLUEHERON.",
        "Never log full account numbers, not even in debug builds. Then wire it to the view model and add the tests.",
    ] {
        assert_eq!(one(p).why, None, "{p}");
    }
    // A consequence, the rule's subject, or a pronoun for it is.
    for (p, why) in [
        (
            "We don't use Terragrunt. It was evaluated in 2023 and rejected.",
            "It was evaluated in 2023 and rejected.",
        ),
        (
            "Don't bump wgpu. We're pinned to 0.19 until the Metal regression upstream is fixed.",
            "We're pinned to 0.19 until the Metal regression upstream is fixed.",
        ),
        (
            "Use pnpm, not npm. The lockfile is pnpm-lock.yaml.",
            "The lockfile is pnpm-lock.yaml.",
        ),
    ] {
        assert_eq!(one(p).why.as_deref(), Some(why), "{p}");
    }
}

#[test]
fn no_more_keeps_its_no() {
    for p in [
        "no more recap paragraphs at the end of each reply, i can read the diff",
        "No more recaps at the end of your answers.",
        "no more emojis in commit messages",
    ] {
        let c = one(p);
        assert!(c.rule.to_lowercase().starts_with("no more"), "{p}: {c:?}");
    }
}

#[test]
fn the_day_it_is_is_not_a_memory() {
    for p in [
        "remember, it's release day so be careful",
        "remember it's demo day today, nothing risky",
    ] {
        none(p);
    }
}

#[test]
fn a_pasted_document_after_remember_is_not_a_memory() {
    let page = "the ledger service settles payments in batches every night and ".repeat(200);
    none(&format!("Remember that {page}that is all."));
    one("Remember that the ledger service settles payments in batches every night.");
}

/// A rule with the task it asks for spliced on after a comma keeps the rule; a following
/// sentence that is the task at hand (one file, "this") is not how to apply it.
#[test]
fn the_task_beside_a_rule_stays_out_of_it() {
    let c = one("Never use console.log in committed code, remove the ones in src/api/client.ts.");
    assert_eq!(c.rule, "Never use console.log in committed code.");
    assert_eq!(c.how, None);
    let c = one("Use pnpm, not npm, remove the package-lock.json please");
    assert_eq!(c.rule, "Use pnpm, not npm.");
    // Part of the rule when it names nothing at hand.
    let c = one("Always run the linter before committing, and fix what it reports.");
    assert!(c.rule.ends_with("and fix what it reports."), "{c:?}");

    // A task that undoes something is about the thing at hand too.
    let c = one("Actually, keep tabs for indentation in this repo, revert the spaces change.");
    assert_eq!(c.rule, "Keep tabs for indentation in this repo.");
    let c = one("We use Jest for unit tests. Write a test for src/utils/format.ts");
    assert_eq!(c.rule, "We use Jest for unit tests.");
    assert_eq!(c.how, None, "the task is not how to apply it");
    let c = one("Always use Vitest, not Jest. Put new tests under tests/unit/.");
    assert_eq!(c.how.as_deref(), Some("Put new tests under tests/unit/."));
}

#[test]
fn replaced_with_in_every_tense() {
    for p in [
        "We've replaced Jest with Vitest.",
        "we have replaced jest with vitest",
        "The team has replaced Jenkins with GitHub Actions.",
    ] {
        assert_eq!(one(p).memory_type, MemoryType::Project, "{p}");
    }
}

/// How long and in what manner the agent answers holds in every project, said bluntly too;
/// what a project's documents say stays with the project.
#[test]
fn blunt_wishes_about_answers_are_personal() {
    for p in [
        "Be more terse.",
        "No more recaps please.",
        "Keep your answers short.",
    ] {
        assert!(one(p).personal, "{p}");
    }
    assert!(!one("No summaries in the PR description.").personal);
}

/// A statement whose point was a secret keeps nothing once redaction took it out; where the
/// secret lives, or more about it, is still worth keeping.
#[test]
fn a_bare_secret_is_not_a_memory() {
    none("Remember that the staging admin password is [REDACTED:password].");
    none("remember: the Anthropic key is [REDACTED:anthropic-key]");
    none("Remember: our deploy token is [REDACTED:github-token] for the release workflow.");
    none("覚えて: ステージングのパスワードは [REDACTED:password] です");
    none("覚えておいて：本番DBのパスワードは [REDACTED:password]");
    none("记住：测试服务器的密码是 [REDACTED:password]");
    none("記住：測試伺服器的密碼是 [REDACTED:password]。");
    one("覚えて: ステージングのパスワードは 1Password の Staging にある");
    one("记住：测试服务器的密码在 1Password 的 Staging 里");
    one("Remember that the staging admin password is in 1Password under Staging.");
    one(
        "Remember that the staging DB password is [REDACTED:password] and it rotates every Monday.",
    );
}

/// "No X in this codebase" is a ban, a rule like "never use X"; "no one owns …" is a fact.
#[test]
fn a_ban_is_a_rule() {
    assert_eq!(
        one("Remember: no default exports in this codebase.").memory_type,
        MemoryType::Feedback
    );
    assert_eq!(
        one("Remember that no one owns the billing service right now.").memory_type,
        MemoryType::Project
    );
}

/// A named service in a role of the project, a pin, what a part of the project uses: facts
/// said without a marker word. A service that is down today, or a place that is not a
/// named service, is not one.
#[test]
fn services_pins_and_what_parts_use() {
    for p in [
        "Sentry is our error tracker.",
        "Our error tracker is Sentry.",
        "Errors go to Sentry.",
        "Buildkite is our CI.",
        "We deploy the web app to Vercel.",
        "We pin Node to 20.11 via .nvmrc.",
        "The e2e tests use Playwright, not Cypress.",
    ] {
        assert_eq!(one(p).memory_type, MemoryType::Project, "{p}");
    }
    for p in [
        "We deploy to staging first.",
        "our CI is broken again",
        "Sentry is our error tracker, but it's down today",
        "the logs go to /var/log/app.log",
    ] {
        none(p);
    }
}

/// A line that introduces a code block says what it says in the block, which is not kept:
/// alone it would be a stub memory. A rule before the block still stands.
#[test]
fn a_line_that_introduces_a_block_is_not_a_stub_memory() {
    none("Remember: staging uses this config:\n```yaml\ndb:\n  host: staging-db\n```");
    none("Remember the .env for local dev has:\n```\nAPI_URL=http://localhost:8080\n```");
    let c = one("From now on use pnpm, not npm.\nHere is the lockfile diff:\n```\n- a\n+ b\n```");
    assert_eq!(c.rule, "Use pnpm, not npm.");
}

/// A permission given back is a rule; a report that something works again is not.
#[test]
fn a_permission_given_back_is_a_rule() {
    for p in [
        "Deploying on Fridays is fine now, the freeze is lifted.",
        "Using moment is allowed again.",
    ] {
        assert_eq!(one(p).memory_type, MemoryType::Feedback, "{p}");
    }
    for p in [
        "The build is fine now.",
        "Everything is fine now",
        "Testing is fine now",
        "The login is working again",
    ] {
        none(p);
    }
}

/// What follows a quoted block is the user's own words again: "here's the output:", the
/// block, then the rule.
#[test]
fn a_rule_after_a_quoted_block_is_kept() {
    let c = one(
        "here's the failing test output:\n```\n--- FAIL: TestReconcile (0.03s)\nFAIL\n```\nfix it. and please always use table-driven tests in this codebase, that's the convention",
    );
    assert!(c.rule.starts_with("Always use table-driven tests"), "{c:?}");
    // The lead-in's own lines after it, with no block, stay quoted.
    none("the linter says:\nalways use const here\n\nok");
}

/// Standing rules and facts in the shapes a team says them: scoped "going forward", "any
/// time you … please", "for all future sessions", "was replaced by", "is build output",
/// "locked at", "I lead the … team", "we don't do X", and their Japanese and Chinese kin.
#[test]
fn rules_and_facts_in_team_phrasings() {
    for (p, t) in [
        (
            "oh and for anything in pipelines/ going forward, use polars not pandas — we're migrating module by module",
            MemoryType::Feedback,
        ),
        (
            "btw any time you touch mappers please add a unit test in the matching *MapperTest file, that's how we keep coverage up",
            MemoryType::Feedback,
        ),
        (
            "when you write migrations for this app make them reversible — we've been burned by one-way migrations twice",
            MemoryType::Feedback,
        ),
        (
            "Heads up for all future sessions: main is protected and PRs need two approvals.",
            MemoryType::Feedback,
        ),
        (
            "the old `payments-v1` service was replaced by `paygate` in Q3",
            MemoryType::Project,
        ),
        (
            "The design tokens come from Figma, src/tokens/*.json is build output.",
            MemoryType::Project,
        ),
        (
            "unity version is locked at 2022.3 LTS for the whole team",
            MemoryType::Project,
        ),
        (
            "I lead the platform team here, so flag anything that changes IAM",
            MemoryType::User,
        ),
        (
            "we don't do default exports in this frontend, named exports only.",
            MemoryType::Project,
        ),
        (
            "lol no, we don't use black here, we use ruff format.",
            MemoryType::Project,
        ),
        (
            "src/api/generated は自動生成なので手で触らないでね",
            MemoryType::Feedback,
        ),
        (
            "バグ報告はBacklogの「SHOP」プロジェクトに起票することになってます",
            MemoryType::Project,
        ),
        (
            "每次改完数据库 schema 都要同步更新 docs/db.md，这是团队规定",
            MemoryType::Feedback,
        ),
        (
            "前端的 i18n 文案统一放在 locales/zh-CN.json，不要在组件里写死中文",
            MemoryType::Project,
        ),
        (
            "数据集放在 /data/shared/datasets，别往 home 目录写大文件",
            MemoryType::Feedback,
        ),
        ("我在新加坡，时区是 UTC+8", MemoryType::User),
    ] {
        assert_eq!(one(p).memory_type, t, "{p}");
    }
    // What keeps the rule stays out of it: the task after a convention.
    let c = one(
        "うちはTerraformのmoduleを全部 infra/modules 配下に置く運用なので、今回のredisのmoduleもそこに作ってください",
    );
    assert!(!c.rule.contains("今回"), "{c:?}");
    // Reminders, bans on the task at hand, and passing states are not rules.
    for p in [
        "CHANGELOGも更新するの忘れないでね",
        "下周一要发版，这几天先别动 build 脚本",
        "帮我改一下登录页，别动接口",
        "for this PR going forward, skip the e2e run",
    ] {
        none(p);
    }
}

/// A question asked without its mark is no memory (it would replace the rule it asks
/// about); a dotfile is not a host.
#[test]
fn a_question_without_its_mark_is_not_a_memory() {
    none("is it ok to delete .env.local here, it looks stale");
    none("should we always squash when merging");
    let c = one("FYI the .env.local in this worktree is a symlink — never delete it.");
    assert_ne!(c.memory_type, MemoryType::Reference, "{c:?}");
}

/// Changes and permissions said of a thing, owners named by handle, and the task spliced
/// onto "we don't use X anymore".
#[test]
fn changes_permissions_and_handles() {
    for (p, t) in [
        (
            "Update: pandas is fine now in the pipeline code",
            MemoryType::Feedback,
        ),
        (
            "You can use pandas again in the pipeline code, the no-pandas rule no longer applies",
            MemoryType::Feedback,
        ),
        (
            "the e2e tests now use Cypress instead of Playwright",
            MemoryType::Project,
        ),
        (
            "@alice owns the reconciliation package.",
            MemoryType::Project,
        ),
        ("Our data warehouse is Snowflake.", MemoryType::Project),
    ] {
        assert_eq!(one(p).memory_type, t, "{p}");
    }
    assert_eq!(
        one("We dont use golang-migrate anymore, remove the old migrate/ directory.").rule,
        "We dont use golang-migrate anymore."
    );
    for p in [
        "CI is fine now",
        "the build is ok again",
        "it is fine now in prod",
    ] {
        none(p);
    }
}
