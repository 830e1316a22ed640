//! Plausible programming text: prose, code, logs, test and build output,
//! grep and git output. Pools of lines are built once from the seed; bulk text
//! is assembled by picking pool lines, so generation runs near memcpy speed.

use crate::util::Rng;
use std::fmt::Write as _;

const WORDS: &[&str] = &[
    "config",
    "parser",
    "handler",
    "session",
    "token",
    "index",
    "cache",
    "buffer",
    "request",
    "response",
    "client",
    "server",
    "error",
    "result",
    "value",
    "state",
    "store",
    "query",
    "schema",
    "record",
    "stream",
    "reader",
    "writer",
    "builder",
    "context",
    "memory",
    "ingest",
    "transcript",
    "batch",
    "worker",
    "queue",
    "event",
    "hook",
    "plugin",
    "path",
    "file",
    "line",
    "offset",
    "chunk",
    "hash",
    "digest",
    "manifest",
    "snapshot",
    "migration",
    "table",
    "column",
    "row",
    "user",
    "project",
    "branch",
    "commit",
    "diff",
    "patch",
    "bench",
    "metric",
    "span",
    "trace",
    "logger",
    "retry",
    "timeout",
    "limit",
    "window",
    "cursor",
    "page",
    "filter",
    "score",
    "rank",
    "embedding",
    "vector",
    "model",
    "prompt",
    "agent",
    "tool",
    "command",
    "output",
    "input",
    "status",
    "update",
    "delete",
    "insert",
    "select",
    "merge",
    "split",
    "join",
    "format",
    "encode",
    "decode",
    "validate",
    "normalize",
    "resolve",
    "load",
    "save",
    "open",
    "close",
    "flush",
    "sync",
    "spawn",
    "lock",
    "mutex",
    "channel",
    "sender",
    "receiver",
    "task",
    "runtime",
    "future",
    "poll",
    "iter",
    "map",
    "key",
    "entry",
    "node",
    "edge",
    "graph",
    "tree",
    "leaf",
    "root",
    "parent",
    "child",
    "sibling",
    "scope",
    "frame",
    "slot",
    "pool",
    "arena",
    "alloc",
    "route",
    "endpoint",
    "auth",
    "credential",
    "secret",
    "redact",
    "policy",
    "rule",
    "matcher",
    "pattern",
    "regex",
    "lexer",
    "ast",
    "expr",
    "stmt",
    "module",
    "crate",
    "package",
    "version",
    "release",
    "deploy",
    "build",
    "target",
    "profile",
    "feature",
    "flag",
    "option",
    "default",
    "settings",
    "env",
    "shell",
    "process",
    "signal",
    "pipe",
    "socket",
    "port",
    "host",
    "dns",
    "cert",
    "tls",
    "http",
    "json",
    "yaml",
    "toml",
    "csv",
    "sqlite",
    "postgres",
    "redis",
    "kafka",
    "topic",
    "partition",
    "consumer",
    "producer",
    "offset",
    "watermark",
    "checkpoint",
    "wal",
    "journal",
    "compaction",
    "segment",
    "bloom",
    "shard",
    "replica",
    "leader",
    "follower",
    "election",
    "heartbeat",
    "lease",
    "ttl",
    "expiry",
    "cleanup",
    "sweep",
    "gc",
    "ref",
    "count",
];

const TYPES: &[&str] = &[
    "String",
    "Vec<u8>",
    "usize",
    "u64",
    "i64",
    "bool",
    "PathBuf",
    "Option<String>",
    "HashMap<String, usize>",
    "Result<()>",
    "Arc<Mutex<State>>",
    "&str",
    "Duration",
    "Instant",
];

const STOP: &[&str] = &[
    "the", "a", "to", "of", "and", "in", "is", "it", "that", "for", "on", "with", "this", "we",
    "when", "so", "but", "not", "from", "by", "before", "after", "instead", "because", "which",
];

const VERBS: &[&str] = &[
    "check",
    "fix",
    "update",
    "refactor",
    "add",
    "remove",
    "rename",
    "split",
    "merge",
    "test",
    "handle",
    "parse",
    "read",
    "write",
    "cache",
    "skip",
    "retry",
    "log",
    "move",
    "inline",
    "extract",
    "validate",
    "document",
    "simplify",
    "benchmark",
    "debug",
    "trace",
    "measure",
];

const EXTS: &[(&str, Lang)] = &[
    ("rs", Lang::Rust),
    ("rs", Lang::Rust),
    ("py", Lang::Python),
    ("ts", Lang::Ts),
    ("tsx", Lang::Ts),
    ("go", Lang::Rust),
    ("md", Lang::Prose),
    ("toml", Lang::Prose),
];

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Lang {
    Rust,
    Python,
    Ts,
    Prose,
}

/// What kind of text a shell command prints.
#[derive(Clone, Copy, Debug)]
pub enum OutKind {
    Build,
    Test,
    Grep,
    GitLog,
    Diff,
    Ls,
    Log,
}

pub struct Corpus {
    /// Codex `session_meta.base_instructions.text` (same for every rollout).
    pub base_instructions: String,
    rust: Vec<String>,
    python: Vec<String>,
    ts: Vec<String>,
    sentences: Vec<String>,
    build: Vec<String>,
    test: Vec<String>,
    log: Vec<String>,
    gitlog: Vec<String>,
    ls: Vec<String>,
}

const POOL: usize = 4096;

impl Corpus {
    pub fn new(seed: u64) -> Self {
        let mut r = Rng::derive(seed, 0xC0_4905);
        let mut pool = |f: &mut dyn FnMut(&mut Rng) -> String| -> Vec<String> {
            (0..POOL).map(|_| f(&mut r)).collect()
        };
        let rust = pool(&mut rust_line);
        let python = pool(&mut python_line);
        let ts = pool(&mut ts_line);
        let sentences = pool(&mut sentence);
        let build = pool(&mut build_line);
        let test = pool(&mut test_line);
        let log = pool(&mut log_line);
        let gitlog = pool(&mut gitlog_line);
        let ls = pool(&mut ls_line);
        let mut c = Corpus {
            base_instructions: String::new(),
            rust,
            python,
            ts,
            sentences,
            build,
            test,
            log,
            gitlog,
            ls,
        };
        c.base_instructions = format!(
            "You are Codex, a coding agent based on GPT-5. You and the user share the same workspace and collaborate to achieve the user's goals.\n\n{}",
            c.prose(&mut r, 12_000)
        );
        c
    }

    fn code_pool(&self, lang: Lang) -> &[String] {
        match lang {
            Lang::Rust => &self.rust,
            Lang::Python => &self.python,
            Lang::Ts => &self.ts,
            Lang::Prose => &self.sentences,
        }
    }

    /// Appends whole pool lines until `out` grows by about `bytes`.
    fn fill(&self, r: &mut Rng, pool: &[String], out: &mut String, bytes: usize, indent: bool) {
        let stop = out.len() + bytes;
        let mut depth = 0usize;
        while out.len() < stop {
            if indent {
                for _ in 0..depth {
                    out.push_str("    ");
                }
                match r.below(6) {
                    0 if depth < 4 => depth += 1,
                    1 if depth > 0 => depth -= 1,
                    _ => {}
                }
            }
            out.push_str(r.pick(pool).as_str());
            out.push('\n');
        }
    }

    /// A source file of roughly `bytes` bytes.
    pub fn code(&self, r: &mut Rng, lang: Lang, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 128);
        self.fill(r, self.code_pool(lang), &mut s, bytes, lang != Lang::Prose);
        s
    }

    /// `n` code lines (for Edit `old_string`/`new_string` and patches).
    pub fn code_lines(&self, r: &mut Rng, lang: Lang, n: usize) -> Vec<&str> {
        let pool = self.code_pool(lang);
        (0..n).map(|_| r.pick(pool).as_str()).collect()
    }

    /// Claude Code's Read output: `cat -n` style with a `→` after the number.
    pub fn numbered(&self, content: &str, first_line: usize) -> String {
        let mut s = String::with_capacity(content.len() + content.len() / 6 + 16);
        for (i, line) in content.lines().enumerate() {
            let _ = writeln!(s, "{:>6}\u{2192}{}", first_line + i, line);
        }
        s
    }

    /// Prose of about `bytes` bytes (assistant text, thinking, summaries).
    pub fn prose(&self, r: &mut Rng, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 160);
        while s.len() < bytes {
            s.push_str(r.pick(&self.sentences).as_str());
            s.push(if r.chance(0.15) { '\n' } else { ' ' });
            if r.chance(0.05) {
                s.push_str("\n- ");
            }
        }
        s.truncate(s.trim_end().len());
        s
    }

    /// Prose with a length drawn uniformly from `lo..=hi` bytes.
    pub fn prose_r(&self, r: &mut Rng, lo: u64, hi: u64) -> String {
        let n = r.range(lo, hi) as usize;
        self.prose(r, n)
    }

    /// Shell output of about `bytes` bytes.
    pub fn output(&self, r: &mut Rng, kind: OutKind, bytes: usize) -> String {
        let mut s = String::with_capacity(bytes + 256);
        match kind {
            OutKind::Build => self.fill(r, &self.build, &mut s, bytes, false),
            OutKind::Test => {
                self.fill(r, &self.test, &mut s, bytes, false);
                let _ = write!(
                    s,
                    "\ntest result: ok. {} passed; 0 failed; {} ignored; 0 measured; 0 filtered out; finished in {}.{:02}s\n",
                    r.range(3, 400),
                    r.range(0, 4),
                    r.range(0, 30),
                    r.range(0, 99)
                );
            }
            OutKind::Grep => {
                while s.len() < bytes {
                    let _ = writeln!(
                        s,
                        "src/{}/{}.rs:{}:{}",
                        r.pick(WORDS),
                        r.pick(WORDS),
                        r.range(1, 900),
                        r.pick(&self.rust).trim_start()
                    );
                }
            }
            OutKind::GitLog => self.fill(r, &self.gitlog, &mut s, bytes, false),
            OutKind::Diff => {
                while s.len() < bytes {
                    let p = format!("src/{}/{}.rs", r.pick(WORDS), r.pick(WORDS));
                    let _ = write!(
                        s,
                        "diff --git a/{p} b/{p}\nindex {:07x}..{:07x} 100644\n--- a/{p}\n+++ b/{p}\n@@ -{},{} +{},{} @@\n",
                        r.next_u64() & 0xFFF_FFFF,
                        r.next_u64() & 0xFFF_FFFF,
                        r.range(1, 400),
                        r.range(3, 30),
                        r.range(1, 400),
                        r.range(3, 30)
                    );
                    for _ in 0..r.range(4, 40) {
                        s.push(r.one(&[' ', ' ', '+', '-']));
                        s.push_str(r.pick(&self.rust).as_str());
                        s.push('\n');
                    }
                }
            }
            OutKind::Ls => self.fill(r, &self.ls, &mut s, bytes, false),
            OutKind::Log => self.fill(r, &self.log, &mut s, bytes, false),
        }
        s
    }

    /// A user prompt as typed into the agent.
    pub fn prompt(&self, r: &mut Rng, files: &[String]) -> String {
        let f = r.pick(files);
        let head = match r.below(10) {
            0 => format!("fix the failing test in {f}"),
            1 => format!(
                "why does `{}_{}` return an error when the {} is empty?",
                r.pick(VERBS),
                r.pick(WORDS),
                r.pick(WORDS)
            ),
            2 => format!(
                "add a --{}-{} option to the {} command",
                r.pick(WORDS),
                r.pick(WORDS),
                r.pick(WORDS)
            ),
            3 => format!(
                "refactor {} so the {} does not hold the {} lock across the await",
                f,
                r.pick(WORDS),
                r.pick(WORDS)
            ),
            4 => "run the tests and fix whatever breaks".to_string(),
            5 => format!(
                "can you look at {f} and explain how the {} works",
                r.pick(WORDS)
            ),
            6 => "commit this with a good message".to_string(),
            7 => format!(
                "the {} benchmark regressed after the last change, find out why",
                r.pick(WORDS)
            ),
            8 => format!(
                "{} the {} {} in {f}",
                r.pick(VERBS),
                r.pick(WORDS),
                r.pick(WORDS)
            ),
            _ => "continue".to_string(),
        };
        if r.chance(0.35) {
            let extra = self.prose_r(r, 80, 600);
            format!("{head}. {extra}")
        } else if r.chance(0.08) {
            // A pasted error log.
            let n = r.range(500, 6000) as usize;
            let log = self.output(r, OutKind::Build, n);
            format!("{head}\n\n```\n{log}```")
        } else {
            head
        }
    }

    /// A shell command and the kind of output it produces.
    pub fn command(&self, r: &mut Rng, files: &[String]) -> (String, OutKind) {
        let f = r.pick(files);
        match r.below(12) {
            0 | 1 => (
                "cargo build --workspace 2>&1 | tail -80".into(),
                OutKind::Build,
            ),
            2 | 3 => (
                format!("cargo test -p {}-{} 2>&1", r.pick(WORDS), r.pick(WORDS)),
                OutKind::Test,
            ),
            4 => (
                format!("rg -n \"{}_{}\" src/", r.pick(VERBS), r.pick(WORDS)),
                OutKind::Grep,
            ),
            5 => ("git log --oneline -50".into(), OutKind::GitLog),
            6 => ("git diff HEAD~1".into(), OutKind::Diff),
            7 => (format!("ls -la {}", parent_dir(f)), OutKind::Ls),
            8 => (
                format!("npm test -- --runInBand {} 2>&1", r.pick(WORDS)),
                OutKind::Test,
            ),
            9 => (
                format!("grep -rn \"{}\" . | head -200", r.pick(WORDS)),
                OutKind::Grep,
            ),
            10 => (
                format!(
                    "RUST_LOG=debug ./target/debug/{} 2>&1 | tail -300",
                    r.pick(WORDS)
                ),
                OutKind::Log,
            ),
            _ => ("python -m pytest -x -q 2>&1".into(), OutKind::Test),
        }
    }

    /// Opaque base64 (thinking signatures, Codex `encrypted_content`).
    pub fn base64(&self, r: &mut Rng, n: usize) -> String {
        let mut s = String::with_capacity(n + 8);
        r.chars(&mut s, crate::util::BASE64, n);
        s
    }

    pub fn base64_r(&self, r: &mut Rng, lo: u64, hi: u64) -> String {
        let n = r.range(lo, hi) as usize;
        self.base64(r, n)
    }

    pub fn word<'a>(&self, r: &mut Rng) -> &'a str {
        r.one(WORDS)
    }
}

fn parent_dir(p: &str) -> &str {
    p.rsplit_once('/').map(|(d, _)| d).unwrap_or(".")
}

/// Source file paths for a project, relative to the repo root.
pub fn project_files(r: &mut Rng, n: usize) -> Vec<(String, Lang)> {
    (0..n)
        .map(|_| {
            let (ext, lang) = r.one(EXTS);
            let dir = match lang {
                Lang::Python => format!("{}/{}", r.pick(WORDS), r.pick(WORDS)),
                Lang::Ts => format!("web/src/{}", r.pick(WORDS)),
                Lang::Prose if ext == "md" => "docs".to_string(),
                Lang::Prose => format!("crates/{}", r.pick(WORDS)),
                Lang::Rust => format!("crates/{}/src", r.pick(WORDS)),
            };
            (
                format!("{dir}/{}_{}.{ext}", r.pick(WORDS), r.pick(WORDS)),
                lang,
            )
        })
        .collect()
}

fn ident(r: &mut Rng) -> String {
    match r.below(3) {
        0 => r.pick(WORDS).to_string(),
        1 => format!("{}_{}", r.pick(WORDS), r.pick(WORDS)),
        _ => format!("{}_{}", r.pick(VERBS), r.pick(WORDS)),
    }
}

fn camel(r: &mut Rng) -> String {
    let mut s = String::new();
    for _ in 0..r.range(1, 2) {
        let w = r.pick(WORDS);
        let mut c = w.chars();
        if let Some(f) = c.next() {
            s.push(f.to_ascii_uppercase());
            s.push_str(c.as_str());
        }
    }
    s
}

fn sentence(r: &mut Rng) -> String {
    let n = r.range(6, 18) as usize;
    let mut s = String::new();
    for i in 0..n {
        let w = match r.below(5) {
            0 | 1 => r.pick(STOP).to_string(),
            2 => r.pick(VERBS).to_string(),
            3 if r.chance(0.2) => format!("`{}`", ident(r)),
            _ => r.pick(WORDS).to_string(),
        };
        if i == 0 {
            let mut c = w.chars();
            if let Some(f) = c.next() {
                s.push(f.to_ascii_uppercase());
                s.push_str(c.as_str());
            }
        } else {
            s.push(' ');
            s.push_str(&w);
        }
    }
    s.push_str(r.one(&[".", ".", ".", ":", "?", " — see below."]));
    s
}

fn rust_line(r: &mut Rng) -> String {
    let (a, b, c, t, t2) = (ident(r), ident(r), ident(r), camel(r), camel(r));
    match r.below(20) {
        0 => format!("let {a} = {b}.{c}(&{})?;", ident(r)),
        1 => format!("pub fn {a}(&self, {b}: &{t}) -> Result<{t2}> {{"),
        2 => format!("if {a}.is_empty() {{ return Ok(None); }}"),
        3 => format!("// {}", sentence(r)),
        4 => format!("use crate::{a}::{{{t}, {t2}}};"),
        5 => "#[derive(Debug, Clone, PartialEq, Eq)]".into(),
        6 => format!("pub struct {t} {{"),
        7 => format!("pub {a}: {},", r.pick(TYPES)),
        8 => "}".into(),
        9 => format!(".map(|{a}| {a}.{b}())"),
        10 => format!("assert_eq!({a}.{b}(), {});", r.range(0, 4096)),
        11 => format!("for {a} in {b}.iter() {{"),
        12 => format!(
            "match {a} {{ Some({b}) => {b}, None => return Err(anyhow!(\"missing {c}\")) }}"
        ),
        13 => format!("let mut {a}: {} = Default::default();", r.pick(TYPES)),
        14 => format!("impl {t} for {t2} {{"),
        15 => format!("self.{a}.insert({b}.clone(), {c});"),
        16 => format!("tracing::debug!({a} = %{b}, \"{} {c}\");", r.pick(VERBS)),
        17 => format!("Ok({t}::{}({a}))", r.pick(VERBS)),
        18 => format!("/// {}", sentence(r)),
        _ => format!("let {a} = format!(\"{{}}/{{}}\", {b}, {c});"),
    }
}

fn python_line(r: &mut Rng) -> String {
    let (a, b, c, t) = (ident(r), ident(r), ident(r), camel(r));
    match r.below(14) {
        0 => format!("def {a}({b}, {c}=None):"),
        1 => format!("return {a}.{b}({c})"),
        2 => format!("import {a}"),
        3 => format!("from {a}.{b} import {t}"),
        4 => format!("if not {a}:"),
        5 => format!("raise ValueError(f\"invalid {a}: {{{b}!r}}\")"),
        6 => format!("class {t}({}):", camel(r)),
        7 => format!("self.{a} = {b}"),
        8 => format!("# {}", sentence(r)),
        9 => format!("for {a} in {b}.{c}():"),
        10 => format!("logger.info(\"{} %s\", {a})", r.pick(VERBS)),
        11 => format!("{a} = {{k: v for k, v in {b}.items() if v is not None}}"),
        12 => format!("assert {a} == {}", r.range(0, 999)),
        _ => format!("with open({a}, \"r\", encoding=\"utf-8\") as {b}:"),
    }
}

fn ts_line(r: &mut Rng) -> String {
    let (a, b, c, t) = (ident(r), ident(r), ident(r), camel(r));
    match r.below(12) {
        0 => format!("export function {a}({b}: {t}): {} {{", camel(r)),
        1 => format!("const {a} = await {b}.{c}({});", ident(r)),
        2 => format!("import {{ {t} }} from \"./{a}\";"),
        3 => format!("if (!{a}) {{ throw new Error(`missing {b}: ${{{c}}}`); }}"),
        4 => format!("// {}", sentence(r)),
        5 => format!("export interface {t} {{"),
        6 => format!(
            "{a}?: {};",
            r.pick(&["string", "number", "boolean", "string[]"])
        ),
        7 => "};".into(),
        8 => format!("return {a}.map(({b}) => {b}.{c});"),
        9 => format!("expect({a}.{b}).toEqual({});", r.range(0, 100)),
        10 => format!("setState((prev) => ({{ ...prev, {a}: {b} }}));"),
        _ => format!("const [{a}, set{t}] = useState<{}>(null);", camel(r)),
    }
}

fn ts_prefix(r: &mut Rng) -> String {
    format!(
        "2026-0{}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        r.range(1, 5),
        r.range(1, 28),
        r.range(0, 23),
        r.range(0, 59),
        r.range(0, 59),
        r.range(0, 999)
    )
}

fn build_line(r: &mut Rng) -> String {
    match r.below(9) {
        0..=2 => format!(
            "   Compiling {}-{} v0.{}.{}",
            r.pick(WORDS),
            r.pick(WORDS),
            r.range(0, 30),
            r.range(0, 9)
        ),
        3 => format!(
            "error[E0{}]: {}",
            r.range(100, 799),
            sentence(r).to_lowercase()
        ),
        4 => format!(
            "  --> crates/{}/src/{}.rs:{}:{}",
            r.pick(WORDS),
            r.pick(WORDS),
            r.range(1, 900),
            r.range(1, 80)
        ),
        5 => format!("   |     {}", rust_line(r)),
        6 => format!("warning: unused variable: `{}`", ident(r)),
        7 => format!(
            "    Finished `dev` profile [unoptimized + debuginfo] target(s) in {}.{:02}s",
            r.range(0, 90),
            r.range(0, 99)
        ),
        _ => "   |".into(),
    }
}

fn test_line(r: &mut Rng) -> String {
    let status = if r.chance(0.04) { "FAILED" } else { "ok" };
    match r.below(8) {
        0 => format!(
            "FAILED tests/test_{}.py::test_{}_{} - AssertionError: assert {} == {}",
            r.pick(WORDS),
            r.pick(VERBS),
            r.pick(WORDS),
            r.range(0, 99),
            r.range(0, 99)
        ),
        1 => format!(
            "  ✓ {} {} {} ({} ms)",
            r.pick(VERBS),
            r.pick(STOP),
            r.pick(WORDS),
            r.range(1, 300)
        ),
        2 => format!(
            "     Running unittests src/lib.rs (target/debug/deps/{}-{:016x})",
            r.pick(WORDS),
            r.next_u64()
        ),
        _ => format!(
            "test {}::{}::{}_{} ... {status}",
            r.pick(WORDS),
            r.pick(WORDS),
            r.pick(VERBS),
            r.pick(WORDS)
        ),
    }
}

fn log_line(r: &mut Rng) -> String {
    let lvl = r.one(&[
        "INFO", "INFO", "INFO", "DEBUG", "DEBUG", "WARN", "ERROR", "TRACE",
    ]);
    format!(
        "{} {lvl:>5} {}::{}: {} {}={} {}={}ms",
        ts_prefix(r),
        r.pick(WORDS),
        r.pick(WORDS),
        sentence(r).trim_end_matches('.').to_lowercase(),
        r.pick(WORDS),
        r.range(0, 100_000),
        r.pick(WORDS),
        r.range(0, 5000)
    )
}

fn gitlog_line(r: &mut Rng) -> String {
    format!(
        "{:07x} {}: {} {} {}",
        r.next_u64() & 0xFFF_FFFF,
        r.pick(&["fix", "feat", "refactor", "test", "docs", "chore", "perf"]),
        r.pick(VERBS),
        r.pick(WORDS),
        r.pick(WORDS)
    )
}

fn ls_line(r: &mut Rng) -> String {
    let dir = r.chance(0.2);
    format!(
        "{} {:>2} dev dev {:>7} Mar {:>2} {:02}:{:02} {}{}",
        if dir { "drwxr-xr-x" } else { "-rw-r--r--" },
        r.range(1, 9),
        if dir { 4096 } else { r.range(0, 90_000) },
        r.range(1, 28),
        r.range(0, 23),
        r.range(0, 59),
        ident(r),
        if dir {
            ""
        } else {
            r.one(&[".rs", ".py", ".ts", ".md", ".json", ".toml"])
        }
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_close() {
        let c = Corpus::new(1);
        let mut r = Rng::new(2);
        for n in [100usize, 5_000, 60_000] {
            let s = c.code(&mut r, Lang::Rust, n);
            assert!(s.len() >= n && s.len() < n + 400, "{n} {}", s.len());
            let s = c.output(&mut r, OutKind::Diff, n);
            assert!(s.len() >= n && s.len() < n + 20_000, "{n} {}", s.len());
        }
    }
}
