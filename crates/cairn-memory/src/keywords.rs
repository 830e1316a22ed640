//! Search keywords added to a memory at write time.
//!
//! A memory says "use pnpm, not npm"; the question later is "which package manager should I
//! use". Neither BM25 nor a small static embedding links a tool's name to its category
//! reliably, so every memory is indexed with the category words of the developer tools it
//! names (a fixed table below), the long or short form of the abbreviations it uses ("prod"
//! → "production", "repo" → "repository" and back), plus a few words for its type. Computed
//! once per write ([`VERSION`] names the table, so that stored memories are indexed again
//! when it changes); the query side is untouched.

use crate::model::MemoryType;

/// Bumped whenever the tables below change: memories stored before get their keywords again.
pub const VERSION: u32 = 2;

/// Abbreviations developers write and the word they stand for, both ways ("what database
/// does production run" finds "the prod DB is Postgres 16").
const SHORT_FORMS: &[(&str, &str)] = &[
    ("prod", "production"),
    ("stg", "staging"),
    ("dev", "development"),
    ("env", "environment"),
    ("envs", "environments"),
    ("repo", "repository"),
    ("repos", "repositories"),
    ("config", "configuration"),
    ("auth", "authentication"),
    ("docs", "documentation"),
    ("deps", "dependencies"),
    ("perf", "performance"),
    ("infra", "infrastructure"),
    ("msg", "message"),
    ("msgs", "messages"),
];

/// Tool names (lowercase, matched as whole words) → category words.
const TOOLS: &[(&[&str], &str)] = &[
    (
        &[
            "npm", "pnpm", "yarn", "bun", "npx", "pip", "pipx", "poetry", "uv", "conda", "cargo",
            "gem", "bundler", "composer", "maven", "gradle", "nuget", "go mod", "brew", "apt",
        ],
        "package manager dependencies install",
    ),
    (
        &[
            "jest",
            "vitest",
            "mocha",
            "pytest",
            "unittest",
            "rspec",
            "junit",
            "nextest",
            "playwright",
            "cypress",
            "testcontainers",
        ],
        "test runner testing tests",
    ),
    (
        &[
            "eslint",
            "prettier",
            "biome",
            "ruff",
            "black",
            "flake8",
            "pylint",
            "clippy",
            "rustfmt",
            "gofmt",
            "golangci-lint",
            "rubocop",
            "stylelint",
        ],
        "linter formatter lint format style",
    ),
    (
        &[
            "postgres",
            "postgresql",
            "mysql",
            "mariadb",
            "sqlite",
            "mongodb",
            "mongo",
            "redis",
            "dynamodb",
            "cassandra",
            "elasticsearch",
            "clickhouse",
            "db",
            "database",
        ],
        "database db storage",
    ),
    (
        &["docker", "podman", "kubernetes", "k8s", "helm", "compose"],
        "containers docker deployment",
    ),
    (
        &["terraform", "pulumi", "ansible", "cloudformation", "cdk"],
        "infrastructure iac provisioning",
    ),
    (
        &[
            "aws",
            "gcp",
            "azure",
            "sso",
            "iam",
            "s3",
            "ec2",
            "lambda",
            "cloudflare",
            "vercel",
            "netlify",
            "heroku",
        ],
        "cloud credentials deployment hosting",
    ),
    (
        &[
            "github actions",
            "gitlab ci",
            "circleci",
            "jenkins",
            "buildkite",
            "ci",
            "pipeline",
        ],
        "ci continuous integration pipeline build",
    ),
    (
        &[
            "git",
            "branch",
            "commit",
            "rebase",
            "merge",
            "pr",
            "pull request",
            "squash",
        ],
        "git version control commits branches",
    ),
    (
        &[
            "webpack",
            "vite",
            "rollup",
            "esbuild",
            "turbopack",
            "parcel",
            "tsc",
            "babel",
            "bazel",
            "cmake",
        ],
        "build tool bundler compile",
    ),
    (
        &[
            "react", "vue", "svelte", "angular", "next.js", "nextjs", "nuxt", "django", "flask",
            "fastapi", "rails", "express", "spring", "axum", "actix",
        ],
        "framework web",
    ),
    (
        &[
            "typescript",
            "javascript",
            "python",
            "rust",
            "golang",
            "java",
            "kotlin",
            "ruby",
            "php",
            "swift",
            "c#",
            "c++",
            "node",
            "deno",
        ],
        "programming language runtime",
    ),
    (
        &[
            "grafana",
            "datadog",
            "sentry",
            "prometheus",
            "kibana",
            "pagerduty",
            "honeycomb",
            "newrelic",
        ],
        "monitoring dashboard observability alerts",
    ),
    (
        &[
            "jira",
            "linear",
            "github issues",
            "asana",
            "trello",
            "ticket",
            "tickets",
        ],
        "issue tracker tickets project management",
    ),
    (&["slack", "discord"], "chat communication channel"),
    (
        &["grep", "ripgrep", "rg", "ag", "ack", "fd", "fzf", "ctags"],
        "search tool find text code",
    ),
    (
        &["staging", "prod", "production", "preview", "qa"],
        "environment deployment",
    ),
    (
        &["mock", "mocks", "mocking", "stub", "fixture", "fixtures"],
        "testing test doubles",
    ),
    (&["english", "英語", "英文", "英语"], "english language"),
    (&["japanese", "日本語", "日语"], "japanese language"),
    (&["chinese", "中文", "中国語", "汉语"], "chinese language"),
    (&["コミット", "提交"], "git commit commits"),
    (&["テスト", "测试"], "test tests testing"),
    (&["デプロイ", "部署"], "deploy deployment"),
    (&["データベース", "数据库"], "database db"),
];

fn words(text: &str) -> Vec<String> {
    let lower = text.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    let mut w = String::new();
    for c in lower.chars() {
        // ASCII words only: a CJK character ends a word ("prの説明" has the word "pr").
        if c.is_ascii_alphanumeric() || matches!(c, '.' | '#' | '+' | '-') {
            w.push(c);
        } else if !w.is_empty() {
            out.push(w.trim_matches(['.', '-']).to_string());
            w.clear();
        }
    }
    if !w.is_empty() {
        out.push(w.trim_matches(['.', '-']).to_string());
    }
    out
}

/// Keywords for a memory: the categories of the tools its text (name and rule) names, and
/// words for its type.
pub fn keywords_for(memory_type: MemoryType, text: &str) -> Vec<String> {
    let ws = words(text);
    let lower = text.to_lowercase();
    let mut out: Vec<String> = Vec::new();
    let mut push = |s: &str| {
        for k in s.split_whitespace() {
            if !out.iter().any(|o| o == k) {
                out.push(k.to_string());
            }
        }
    };
    for (names, cats) in TOOLS {
        let hit = names.iter().any(|n| {
            if n.contains(' ') || !n.is_ascii() {
                lower.contains(n)
            } else {
                ws.iter().any(|w| w == n)
            }
        });
        if hit {
            push(cats);
        }
    }
    for (short, long) in SHORT_FORMS {
        if ws.iter().any(|w| w == short) {
            push(long);
        } else if ws.iter().any(|w| w == long) {
            push(short);
        }
    }
    push(match memory_type {
        MemoryType::User => "user profile preference",
        MemoryType::Feedback => "rule preference convention",
        MemoryType::Project => "project fact",
        MemoryType::Reference => "reference link location",
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tool_categories() {
        let k = keywords_for(MemoryType::Feedback, "Use pnpm, not npm.");
        assert!(k.contains(&"package".to_string()) && k.contains(&"manager".to_string()));
        let k = keywords_for(MemoryType::Reference, "The staging DB is at host:5432");
        assert!(k.contains(&"database".to_string()));
        assert!(!keywords_for(MemoryType::Project, "nothing here").contains(&"package".into()));
        let k = keywords_for(MemoryType::Project, "The prod DB is Postgres 16.");
        assert!(k.contains(&"production".to_string()), "{k:?}");
        let k = keywords_for(
            MemoryType::Project,
            "Production deploys need two approvals.",
        );
        assert!(k.contains(&"prod".to_string()), "{k:?}");
        let k = keywords_for(MemoryType::Feedback, "Prefer ripgrep over grep.");
        assert!(k.contains(&"search".to_string()), "{k:?}");
    }
}
