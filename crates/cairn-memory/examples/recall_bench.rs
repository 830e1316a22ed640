//! Recall latency benchmark: top-5 over N memories (default 100,000) in one project scope.
//!
//! ```sh
//! cargo build --release -p cairn
//! cargo run --release -p cairn-memory --example recall_bench -- \
//!     --n 100000 --cairn target/release/cairn
//! ```
//!
//! It builds a cairn data dir in a temporary directory (`--keep` keeps it) with N synthetic
//! memories of realistic shape (one or two sentences naming tools, services and teams), then
//! reports medians (and p90) of, in the same run:
//!
//! * in-process `MemoryStore::search` top-5, hybrid (BM25 + static embeddings + priors), warm;
//! * the baseline: the same search with BM25 alone (`Mode::Lexical`);
//! * the MCP server's configuration: hybrid with a resident lexical index
//!   (`MemoryStore::keep_lexical_index_resident`), its build time, and its top 5 against FTS5's;
//! * in-process `MemoryStore::recall` (search plus the recall-count bookkeeping), and a search
//!   right after a recorded recall;
//! * with `--cairn BIN`: `cairn recall QUERY --json` and the hooks that search on the
//!   agent's clock (`cairn hook --agent claude` with a SessionStart and a UserPromptSubmit
//!   payload) end to end (a new process per query, warm page cache), against the process
//!   floor `cairn --version` measured the same way;
//! * with `--previous BIN` too: the same for another build (e.g. the previous commit's), on
//!   its own copy of the data dir, alternating with `--cairn` run by run, with their ratio.
//!   The first two runs of each are not counted: they warm the page cache and let each
//!   build store the snapshots it reads.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use cairn_memory::{MemoryStore, MemoryType, NewMemory, Source};
use cairn_recall::{Mode, RecallConfig};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn pick<'a>(&mut self, xs: &[&'a str]) -> &'a str {
        xs[(self.next() % xs.len() as u64) as usize]
    }
}

const TOOLS: &[&str] = &[
    "pnpm",
    "npm",
    "yarn",
    "cargo",
    "poetry",
    "uv",
    "vitest",
    "jest",
    "pytest",
    "eslint",
    "prettier",
    "ruff",
    "docker",
    "terraform",
    "kubectl",
    "helm",
    "postgres",
    "redis",
    "kafka",
    "grafana",
    "sentry",
    "github actions",
    "make",
    "bazel",
    "webpack",
    "vite",
    "nginx",
    "s3",
];
const AREAS: &[&str] = &[
    "checkout",
    "billing",
    "search",
    "auth",
    "payments",
    "inventory",
    "shipping",
    "reports",
    "notifications",
    "onboarding",
    "admin",
    "analytics",
    "exports",
    "invoices",
    "carts",
    "users",
];
const VERBS: &[&str] = &[
    "Use",
    "Always run",
    "Never call",
    "Prefer",
    "Avoid",
    "Keep",
    "Pin",
    "Route",
    "Mock",
    "Cache",
];
const WHY: &[&str] = &[
    "the lockfile breaks otherwise",
    "the staging cluster is shared",
    "a migration broke prod last time",
    "the team agreed on it in the retro",
    "CI times out without it",
    "reviewers asked for it",
];

fn syllable_word(r: &mut Rng) -> String {
    const S: &[&str] = &[
        "ka", "lo", "mi", "ru", "te", "sa", "vo", "ni", "pe", "du", "go", "ha", "ji", "ze", "bo",
    ];
    (0..3).map(|_| r.pick(S)).collect()
}

fn memories(n: usize, scope: &str, now: i64) -> Vec<NewMemory> {
    let mut r = Rng(0x9e37_79b9_7f4a_7c15);
    (0..n)
        .map(|i| {
            let t = match i % 4 {
                0 | 1 => MemoryType::Feedback,
                2 => MemoryType::Project,
                _ => MemoryType::Reference,
            };
            let rule = match t {
                MemoryType::Reference => format!(
                    "The {} {} dashboard for {} is https://{}.example.com/d/{}",
                    r.pick(AREAS),
                    r.pick(TOOLS),
                    syllable_word(&mut r),
                    syllable_word(&mut r),
                    i
                ),
                MemoryType::Project => format!(
                    "The {} service {} is owned by team {} and deploys with {}.",
                    r.pick(AREAS),
                    syllable_word(&mut r),
                    syllable_word(&mut r),
                    r.pick(TOOLS)
                ),
                _ => format!(
                    "{} {} for {} in the {} module.",
                    r.pick(VERBS),
                    r.pick(TOOLS),
                    r.pick(AREAS),
                    syllable_word(&mut r)
                ),
            };
            NewMemory {
                memory_type: t,
                scope: scope.to_string(),
                rule,
                why: (i % 3 == 0).then(|| r.pick(WHY).to_string()),
                how: None,
                name: None,
                description: None,
                source: Source::manual(),
                at: now - (r.next() % (400 * 86_400)) as i64,
            }
        })
        .collect()
}

const QUERIES: &[&str] = &[
    "which package manager should I use",
    "how do we deploy the checkout service",
    "where is the billing dashboard",
    "what test runner do we use for payments",
    "who owns the search service",
    "should I mock redis in the auth tests",
    "how to lint the admin module",
    "which container tool for local development",
    "where do the invoices exports go",
    "what is the grafana board for shipping",
    "can I run terraform against production",
    "which formatter for python code",
];

fn median(xs: &mut [Duration]) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn p90(xs: &mut [Duration]) -> Duration {
    xs.sort();
    xs[(xs.len() * 9 / 10).min(xs.len() - 1)]
}

fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter()
        .position(|a| a == name)
        .and_then(|i| args.get(i + 1).cloned())
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let n: usize = arg(&args, "--n").map_or(Ok(100_000), |s| s.parse())?;
    let runs: usize = arg(&args, "--runs").map_or(Ok(200), |s| s.parse())?;
    let e2e_runs: usize = arg(&args, "--e2e-runs").map_or(Ok(30), |s| s.parse())?;
    let cairn = arg(&args, "--cairn").map(PathBuf::from);
    let previous = arg(&args, "--previous").map(PathBuf::from);
    let keep = args.iter().any(|a| a == "--keep");

    let tmp = tempfile::Builder::new()
        .prefix("cairn-recall-bench-")
        .tempdir()?;
    let root = tmp.path().canonicalize()?;
    let data = root.join("data");
    let project = root.join("project");
    std::fs::create_dir_all(&project)?;
    let scope = cairn_memory::project_scope(&project);
    let now = 1_795_600_800;

    println!("building {n} memories in {}", data.display());
    let t = Instant::now();
    let store = cairn_store::Store::open(&data.join("cairn.db"))?;
    let mut mem = MemoryStore::open(store)?;
    let all = memories(n, &scope, now);
    for chunk in all.chunks(10_000) {
        mem.insert_many(chunk, now)?;
    }
    println!(
        "  inserted in {:.1} s (embeddings computed at write time)",
        t.elapsed().as_secs_f64()
    );
    // What the background path does after a sync: the vector snapshot and the lexicon file.
    let t = Instant::now();
    mem.prepare_search_snapshots()?;
    println!(
        "  search snapshots (vectors, lexicon file) written in {:.2} s",
        t.elapsed().as_secs_f64()
    );
    drop(mem);

    let measure = |mem: &mut MemoryStore,
                   record: bool|
     -> Result<(Duration, Vec<Duration>), Box<dyn std::error::Error>> {
        let t = Instant::now();
        let first = mem.search(QUERIES[0], &scope, 5, now)?;
        let cold = t.elapsed();
        assert!(!first.is_empty());
        let mut times = Vec::with_capacity(runs);
        for i in 0..runs {
            let q = QUERIES[i % QUERIES.len()];
            let t = Instant::now();
            let hits = if record {
                mem.recall(q, &scope, 5, now)?
            } else {
                mem.search(q, &scope, 5, now)?
            };
            times.push(t.elapsed());
            std::hint::black_box(hits);
        }
        Ok((cold, times))
    };

    let open = || -> Result<MemoryStore, Box<dyn std::error::Error>> {
        Ok(MemoryStore::open(cairn_store::Store::open(
            &data.join("cairn.db"),
        )?)?)
    };
    // FTS5 itself, then the lexicon file (what hooks and `cairn recall` read).
    let mut hybrid = open()?;
    hybrid.set_recall_config(RecallConfig {
        lexicon_file: false,
        ..RecallConfig::default()
    });
    let (cold, mut h) = measure(&mut hybrid, false)?;
    let mut lexical = open()?;
    lexical.set_recall_config(RecallConfig {
        mode: Mode::Lexical,
        lexicon_file: false,
        ..RecallConfig::default()
    });
    let (_, mut l) = measure(&mut lexical, false)?;
    let mut file = open()?;
    let (_, mut hf) = measure(&mut file, false)?;
    let mut file_lexical = open()?;
    file_lexical.set_recall_config(RecallConfig {
        mode: Mode::Lexical,
        ..RecallConfig::default()
    });
    let (_, mut lf) = measure(&mut file_lexical, false)?;
    // Of the bench's queries, how many get the same top 5 from `a` as from FTS5 (`hybrid`).
    let same_top5 = |a: &mut MemoryStore,
                     hybrid: &mut MemoryStore|
     -> Result<usize, Box<dyn std::error::Error>> {
        let mut same = 0usize;
        for q in QUERIES {
            let x = a.search(q, &scope, 5, now)?;
            let y = hybrid.search(q, &scope, 5, now)?;
            same += usize::from(
                x.iter().map(|h| &h.memory.id).collect::<Vec<_>>()
                    == y.iter().map(|h| &h.memory.id).collect::<Vec<_>>(),
            );
        }
        Ok(same)
    };
    let same_file = same_top5(&mut file, &mut hybrid)?;
    drop(file_lexical);
    // The MCP server's configuration: the lexical index resident in memory.
    let mut resident = open()?;
    resident.keep_lexical_index_resident();
    let t = Instant::now();
    resident.warm_up_recall()?;
    let built = t.elapsed();
    let (_, mut res) = measure(&mut resident, false)?;
    let same = same_top5(&mut resident, &mut hybrid)?;
    drop(resident);
    // How much the latency shortcuts (lexical budget, signature first pass) change the top 5:
    // the same queries ranked exhaustively.
    let mut exact = open()?;
    exact.set_recall_config(RecallConfig {
        exhaustive: true,
        ..RecallConfig::default()
    });
    let (mut agree, mut total) = (0usize, 0usize);
    for q in QUERIES {
        let fast = hybrid.search(q, &scope, 5, now)?;
        let slow = exact.search(q, &scope, 5, now)?;
        total += slow.len();
        agree += slow
            .iter()
            .filter(|e| fast.iter().any(|f| f.memory.id == e.memory.id))
            .count();
    }
    drop(exact);
    let (_, mut rec) = measure(&mut hybrid, true)?;
    // The next search after a recall was recorded (the index changed under the cache).
    let mut after = Vec::new();
    for i in 0..runs.clamp(1, 20) {
        let q = QUERIES[i % QUERIES.len()];
        let hits = hybrid.search(q, &scope, 5, now)?;
        let ids: Vec<&str> = hits.iter().map(|h| h.memory.id.as_str()).collect();
        hybrid.record_recall(&ids, now)?;
        let t = Instant::now();
        std::hint::black_box(hybrid.search(q, &scope, 5, now)?);
        after.push(t.elapsed());
    }
    println!("\nin-process top-5 over {n} memories ({runs} queries, warm):");
    println!(
        "  first search after open (loads embeddings + vectors): {}",
        ms(cold)
    );
    println!(
        "  hybrid search, FTS5    p50 {}  p90 {}",
        ms(median(&mut h)),
        ms(p90(&mut h))
    );
    println!(
        "  baseline BM25 only, FTS5 p50 {}  p90 {}",
        ms(median(&mut l)),
        ms(p90(&mut l))
    );
    println!(
        "  hybrid, lexicon file (hooks, cairn recall) p50 {}  p90 {}  (same top 5 as FTS5 for {same_file} of {} queries)",
        ms(median(&mut hf)),
        ms(p90(&mut hf)),
        QUERIES.len()
    );
    println!(
        "  BM25 only, lexicon file p50 {}  p90 {}",
        ms(median(&mut lf)),
        ms(p90(&mut lf))
    );
    println!(
        "  hybrid, resident lexical index (cairn mcp) p50 {}  p90 {}  (index built in {}; same top 5 as FTS5 for {same} of {} queries)",
        ms(median(&mut res)),
        ms(p90(&mut res)),
        ms(built),
        QUERIES.len()
    );
    println!(
        "  top-5 agreement of the hybrid search with exhaustive ranking: {:.1}% ({} queries)",
        100.0 * agree as f64 / total.max(1) as f64,
        QUERIES.len()
    );
    println!(
        "  recall (+ bookkeeping) p50 {}  p90 {}",
        ms(median(&mut rec)),
        ms(p90(&mut rec))
    );
    println!(
        "  search right after a recorded recall p50 {}",
        ms(median(&mut after))
    );
    drop(hybrid);
    drop(lexical);
    drop(file);

    if let Some(bin) = cairn {
        // (binary, its data dir): the previous build gets a copy of its own.
        let mut builds = vec![(bin, data.clone())];
        if let Some(prev) = previous {
            let copy = root.join("data-previous");
            std::fs::create_dir_all(&copy)?;
            for e in std::fs::read_dir(&data)? {
                let e = e?;
                if e.file_type()?.is_file() {
                    std::fs::copy(e.path(), copy.join(e.file_name()))?;
                }
            }
            builds.push((prev, copy));
        }
        // What each run starts: `cairn --version` (the process floor), `cairn recall`, and
        // the two hooks that search on the agent's clock (Claude Code's payloads on stdin).
        #[derive(Clone, Copy)]
        enum Job {
            Floor,
            Recall,
            SessionStart,
            Prompt,
        }
        const JOBS: [(Job, &str); 4] = [
            (Job::Floor, "cairn --version"),
            (Job::Recall, "cairn recall --json"),
            (Job::SessionStart, "hook SessionStart"),
            (Job::Prompt, "hook UserPromptSubmit"),
        ];
        let run = |bin: &Path, data: &Path, job: Job, i: usize| -> Result<Duration, String> {
            let mut c = Command::new(bin);
            c.arg("--data-dir").arg(data);
            let query = QUERIES[i % QUERIES.len()];
            let hook = |event: &str| {
                serde_json::json!({
                    "session_id": format!("bench-{i}"),
                    "transcript_path": data.join("no-transcript.jsonl"),
                    "cwd": project,
                    "hook_event_name": event,
                    "source": "startup",
                    "prompt": query,
                })
                .to_string()
            };
            let stdin = match job {
                Job::Floor => {
                    c.arg("--version");
                    None
                }
                Job::Recall => {
                    c.args(["recall", query, "--json", "--cwd"]).arg(&project);
                    None
                }
                Job::SessionStart => {
                    c.args(["hook", "--agent", "claude"]);
                    Some(hook("SessionStart"))
                }
                Job::Prompt => {
                    c.args(["hook", "--agent", "claude"]);
                    Some(hook("UserPromptSubmit"))
                }
            };
            c.stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped());
            let t = Instant::now();
            let mut child = c.spawn().map_err(|e| format!("{}: {e}", bin.display()))?;
            if let (Some(text), Some(mut w)) = (stdin, child.stdin.take()) {
                use std::io::Write;
                w.write_all(text.as_bytes())
                    .map_err(|e| format!("{}: {e}", bin.display()))?;
            }
            let out = child
                .wait_with_output()
                .map_err(|e| format!("{}: {e}", bin.display()))?;
            let d = t.elapsed();
            // (A prompt may have nothing relevant: its hook may print nothing.)
            let silent = matches!(job, Job::Recall | Job::SessionStart) && out.stdout.is_empty();
            if !out.status.success() || silent {
                return Err(format!(
                    "{} printed nothing or failed: {}",
                    bin.display(),
                    String::from_utf8_lossy(&out.stderr)
                ));
            }
            Ok(d)
        };
        let mut times = vec![vec![Vec::new(); JOBS.len()]; builds.len()];
        for i in 0..e2e_runs + 2 {
            for (k, (bin, dir)) in builds.iter().enumerate() {
                for (j, (job, _)) in JOBS.iter().enumerate() {
                    let d = run(bin, dir, *job, i)?;
                    if i >= 2 {
                        times[k][j].push(d);
                    }
                }
            }
        }
        println!("\nend to end, a new process per query ({e2e_runs} runs, warm page cache):");
        let mut p50 = vec![Vec::new(); builds.len()];
        for (k, (bin, _)) in builds.iter().enumerate() {
            let which = if k == 0 { "" } else { "  (previous build)" };
            println!("  {}{which}", bin.display());
            for (j, (_, name)) in JOBS.iter().enumerate() {
                p50[k].push(median(&mut times[k][j]));
                println!(
                    "    {name:<22} p50 {}  p90 {}",
                    ms(p50[k][j]),
                    ms(p90(&mut times[k][j]))
                );
            }
        }
        if let [now, before] = &p50[..] {
            for (j, (_, name)) in JOBS.iter().enumerate().skip(1) {
                println!(
                    "  {name}: previous / current {:.2}x",
                    before[j].as_secs_f64() / now[j].as_secs_f64().max(1e-9)
                );
            }
        }
    }
    if keep {
        let kept: &Path = &tmp.keep();
        println!("\nkept {}", kept.display());
    }
    Ok(())
}
