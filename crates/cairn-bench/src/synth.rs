//! Synthetic agent home generator: Claude Code projects (transcripts,
//! subagent sidechains, auto memory) and Codex rollouts, with the shapes
//! described in the reference notes, sized to a byte target.

use crate::text::{Corpus, Lang, OutKind};
use crate::util::{ALNUM, J, Rng, escaped, iso, mb, tm};
use anyhow::{Context, Result, bail};
use std::fs::{self, File};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::time::Instant;

/// 2026-01-01T00:00:00Z; sessions are spread over the following 120 days.
/// Fixed (not "now") so a seed always yields the same bytes.
const EPOCH_MS: u64 = 1_767_225_600_000;
const SPAN_MS: u64 = 120 * 86_400_000;
const MARKER: &str = ".cairn-bench.json";
const FLUSH_AT: usize = 1 << 20;
const PROGRESS_EVERY: u64 = 256_000_000;

const CLAUDE_VERSIONS: &[&str] = &["2.1.47", "2.1.63", "2.1.88", "2.1.90", "2.1.212"];
const CLAUDE_MODELS: &[&str] = &[
    "claude-sonnet-4-6",
    "claude-sonnet-4-6",
    "claude-opus-4-6",
    "claude-haiku-4-5-20251001",
];
const CODEX_VERSIONS: &[&str] = &["0.98.0", "0.121.0", "0.145.0"];
const CODEX_MODELS: &[&str] = &["gpt-5.2-codex", "gpt-5.3-codex", "gpt-5.2"];
const SLUG_WORDS: &[&str] = &[
    "structured",
    "doodling",
    "boole",
    "happy",
    "coding",
    "fox",
    "quiet",
    "river",
    "lambda",
    "turing",
    "curious",
    "hopper",
    "brisk",
    "falcon",
    "gentle",
    "knuth",
    "lucid",
    "otter",
];

#[derive(Clone, Debug)]
pub struct GenOpts {
    pub out: PathBuf,
    pub sessions: usize,
    pub size: u64,
    pub seed: u64,
    pub codex_share: f64,
    pub force: bool,
    pub quiet: bool,
}

#[derive(Clone, Debug, Default)]
pub struct GenSummary {
    pub root: PathBuf,
    pub bytes: u64,
    pub target: u64,
    pub projects: usize,
    pub claude_sessions: usize,
    pub subagent_files: usize,
    pub codex_sessions: usize,
    pub memory_files: usize,
    pub big_outputs: usize,
    pub secs: f64,
}

impl GenSummary {
    pub fn mb_per_s(&self) -> f64 {
        self.bytes as f64 / 1e6 / self.secs.max(1e-9)
    }
}

/// Running byte count and progress reporting.
struct Stats {
    written: u64,
    target: u64,
    next_report: u64,
    start: Instant,
    quiet: bool,
    big_outputs: usize,
}

impl Stats {
    fn add(&mut self, n: u64) {
        self.written += n;
        if self.written >= self.next_report {
            self.next_report += PROGRESS_EVERY;
            if !self.quiet {
                let s = self.start.elapsed().as_secs_f64();
                eprintln!(
                    "gen: {} of {} ({:.1}%), {:.1} s, {:.0} MB/s",
                    mb(self.written),
                    mb(self.target),
                    self.written as f64 * 100.0 / self.target as f64,
                    s,
                    self.written as f64 / 1e6 / s.max(1e-9)
                );
            }
        }
    }
}

/// One output file, written through an in-memory buffer.
struct Out {
    file: File,
    j: J,
    flushed: u64,
}

impl Out {
    fn create(path: &Path) -> Result<Out> {
        if let Some(d) = path.parent() {
            fs::create_dir_all(d).with_context(|| format!("creating {}", d.display()))?;
        }
        let file = File::create(path).with_context(|| format!("creating {}", path.display()))?;
        Ok(Out {
            file,
            j: J::with_capacity(FLUSH_AT + (64 << 10)),
            flushed: 0,
        })
    }

    fn len(&self) -> u64 {
        self.flushed + self.j.buf.len() as u64
    }

    fn line_end(&mut self, st: &mut Stats) -> Result<()> {
        self.j.nl();
        if self.j.buf.len() >= FLUSH_AT {
            self.flush(st)?;
        }
        Ok(())
    }

    fn flush(&mut self, st: &mut Stats) -> Result<()> {
        self.file.write_all(&self.j.buf)?;
        let n = self.j.buf.len() as u64;
        self.flushed += n;
        st.add(n);
        self.j.clear();
        Ok(())
    }

    fn finish(mut self, st: &mut Stats) -> Result<u64> {
        self.flush(st)?;
        Ok(self.flushed)
    }
}

fn write_text(path: &Path, text: &str, st: &mut Stats) -> Result<()> {
    if let Some(d) = path.parent() {
        fs::create_dir_all(d)?;
    }
    fs::write(path, text).with_context(|| format!("writing {}", path.display()))?;
    st.add(text.len() as u64);
    Ok(())
}

/// Claude Code's project key (`sanitizePath`): every non-`[A-Za-z0-9]` UTF-16
/// unit becomes `-`; keys over 200 chars are cut and suffixed with a hash.
pub fn project_key(path: &str) -> String {
    let s: String = path
        .encode_utf16()
        .map(|u| {
            if u < 128 && (u as u8).is_ascii_alphanumeric() {
                u as u8 as char
            } else {
                '-'
            }
        })
        .collect();
    if s.len() <= 200 {
        return s;
    }
    // Node/SDK variant: |djb2| in base 36. Readers match the prefix anyway.
    let mut h: i32 = 0;
    for u in path.encode_utf16() {
        h = (h << 5).wrapping_sub(h).wrapping_add(u as i32);
    }
    let mut n = (h as i64).unsigned_abs();
    let mut b36 = Vec::new();
    loop {
        b36.push(b"0123456789abcdefghijklmnopqrstuvwxyz"[(n % 36) as usize]);
        n /= 36;
        if n == 0 {
            break;
        }
    }
    b36.reverse();
    format!(
        "{}-{}",
        &s[..200],
        String::from_utf8(b36).unwrap_or_default()
    )
}

struct Project {
    name: String,
    root: String,
    /// (absolute cwd, Claude project key); index 0 is the repo root.
    cwds: Vec<(String, String)>,
    files: Vec<(String, Lang)>,
    file_names: Vec<String>,
    branches: Vec<String>,
    commit: String,
    /// AGENTS.md-style instructions Codex injects as the first user input.
    agents_md: String,
}

fn make_projects(r: &mut Rng, c: &Corpus, work: &Path, n: usize) -> Result<Vec<Project>> {
    let mut names = std::collections::HashSet::new();
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let mut name = format!("{}-{}", c.word(r), c.word(r));
        if !names.insert(name.clone()) {
            name = format!("{name}-{i}");
            names.insert(name.clone());
        }
        let root = work.join(&name);
        // A minimal git repo so git-root based project identity works.
        fs::create_dir_all(root.join(".git/objects"))?;
        fs::create_dir_all(root.join(".git/refs/heads"))?;
        fs::write(root.join(".git/HEAD"), "ref: refs/heads/main\n")?;
        let root_s = root.to_string_lossy().into_owned();
        let mut cwds = vec![(root_s.clone(), project_key(&root_s))];
        for _ in 0..r.range(0, 2) {
            let sub = root.join(format!("crates/{}", c.word(r)));
            fs::create_dir_all(&sub)?;
            let s = sub.to_string_lossy().into_owned();
            if !cwds.iter().any(|(p, _)| *p == s) {
                let k = project_key(&s);
                cwds.push((s, k));
            }
        }
        let n_files = r.range(30, 150) as usize;
        let files = crate::text::project_files(r, n_files);
        let file_names = files.iter().map(|(f, _)| f.clone()).collect();
        let mut branches = vec!["main".to_string()];
        for _ in 0..r.range(0, 3) {
            branches.push(format!(
                "{}/{}-{}",
                r.pick(&["feat", "fix", "refactor", "perf"]),
                c.word(r),
                c.word(r)
            ));
        }
        let mut commit = String::new();
        r.hex(&mut commit, 40);
        let agents_md = format!(
            "# AGENTS.md instructions for {root_s}\n\n<INSTRUCTIONS>\n## Build\n- `cargo build`\n- `cargo test -p {name}`\n\n## Style\n{}\n</INSTRUCTIONS>",
            c.prose_r(r, 300, 2500)
        );
        out.push(Project {
            name,
            root: root_s,
            cwds,
            files,
            file_names,
            branches,
            commit,
            agents_md,
        });
    }
    Ok(out)
}

/// Claude Code auto memory: `MEMORY.md` index plus topic files with frontmatter.
fn write_memory(r: &mut Rng, c: &Corpus, dir: &Path, st: &mut Stats) -> Result<usize> {
    let types = ["user", "feedback", "project", "reference"];
    let n = r.range(2, 7) as usize;
    let mut index = String::from("# Memory index\n\n");
    for i in 0..n {
        let ty = types[(i + r.below(4)) % 4];
        let topic = format!("{}_{}", c.word(r), c.word(r));
        let file = format!("{ty}_{topic}.md");
        let hook = c.prose(r, 60);
        let hook: String = hook.chars().take(110).collect();
        index.push_str(&format!(
            "- [{} {}]({file}) — {}\n",
            ty,
            topic.replace('_', " "),
            hook.replace('\n', " ")
        ));
        let body = c.prose_r(r, 200, 2500);
        let text = if ty == "feedback" || ty == "project" {
            format!(
                "---\nname: {}\ndescription: {}\ntype: {ty}\n---\n\n{}\n\n**Why:** {}\n**How to apply:** {}\n",
                topic.replace('_', " "),
                hook.replace('\n', " ").replace(" #", " "),
                body,
                c.prose(r, 120),
                c.prose(r, 120)
            )
        } else {
            format!(
                "---\nname: {}\ndescription: {}\ntype: {ty}\n---\n\n{body}\n",
                topic.replace('_', " "),
                hook.replace('\n', " ").replace(" #", " ")
            )
        };
        write_text(&dir.join(&file), &text, st)?;
    }
    write_text(&dir.join("MEMORY.md"), &index, st)?;
    Ok(n + 1)
}

/// Refuses real agent homes and non-empty directories (unless `force`).
/// Returns the absolute output path.
pub fn check_out_dir(out: &Path, force: bool) -> Result<PathBuf> {
    let abs = absolute(out)?;
    refuse_real_home(&abs)?;
    if abs.exists() {
        if !abs.is_dir() {
            bail!("{} exists and is not a directory", abs.display());
        }
        let non_empty = fs::read_dir(&abs)?.next().is_some();
        if non_empty && !force {
            bail!(
                "{} is not empty; pass --force to write into it anyway",
                abs.display()
            );
        }
    }
    Ok(abs)
}

fn absolute(p: &Path) -> Result<PathBuf> {
    if let Ok(c) = p.canonicalize() {
        return Ok(c);
    }
    let abs = std::path::absolute(p)?;
    // Canonicalize the nearest existing ancestor so symlinks cannot hide a home.
    let mut base = abs.clone();
    let mut rest = Vec::new();
    while !base.exists() {
        match (base.parent(), base.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name.to_owned());
                base = parent.to_path_buf();
            }
            _ => return Ok(abs),
        }
    }
    let mut c = base.canonicalize()?;
    for n in rest.into_iter().rev() {
        c.push(n);
    }
    Ok(c)
}

/// Errors if `p` is `/`, `$HOME`, `~/.claude`, `~/.codex`, `$CLAUDE_CONFIG_DIR`
/// or `$CODEX_HOME`.
pub fn refuse_real_home(p: &Path) -> Result<()> {
    let p = absolute(p)?;
    if p.parent().is_none() {
        bail!("refusing to use the filesystem root {}", p.display());
    }
    let mut real = Vec::new();
    if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
        let h = PathBuf::from(h);
        real.push(h.join(".claude"));
        real.push(h.join(".codex"));
        real.push(h);
    }
    for v in ["CLAUDE_CONFIG_DIR", "CODEX_HOME"] {
        if let Some(d) = std::env::var_os(v).filter(|d| !d.is_empty()) {
            real.push(PathBuf::from(d));
        }
    }
    for r in real {
        let r = absolute(&r).unwrap_or(r);
        if p == r {
            bail!(
                "refusing to use {}: it is a real agent home (or $HOME)",
                p.display()
            );
        }
    }
    Ok(())
}

pub fn generate(o: &GenOpts) -> Result<GenSummary> {
    if o.sessions == 0 {
        bail!("--sessions must be at least 1");
    }
    if !(0.0..=1.0).contains(&o.codex_share) {
        bail!("--codex-share must be between 0 and 1");
    }
    let root = check_out_dir(&o.out, o.force)?;
    if root.join(MARKER).exists() {
        // A previous generation: clear what it made so sizes stay exact.
        for d in [".claude", ".codex", "work"] {
            let p = root.join(d);
            if p.exists() {
                fs::remove_dir_all(&p).with_context(|| format!("removing {}", p.display()))?;
            }
        }
        fs::remove_file(root.join(MARKER))?;
    } else if o.force && root.exists() && fs::read_dir(&root)?.next().is_some() && !o.quiet {
        eprintln!(
            "gen: warning: {} was not made by cairn-bench; existing files are kept, so the home may be larger than --size",
            root.display()
        );
    }
    fs::create_dir_all(root.join(".claude/projects"))?;
    fs::create_dir_all(root.join(".codex/sessions"))?;
    fs::create_dir_all(root.join("work"))?;

    let start = Instant::now();
    let mut st = Stats {
        written: 0,
        target: o.size,
        next_report: PROGRESS_EVERY,
        start,
        quiet: o.quiet,
        big_outputs: 0,
    };
    let corpus = Corpus::new(o.seed);
    let mut r = Rng::derive(o.seed, 1);
    let n_projects = (o.sessions / 20 + 1).clamp(1, 150);
    let projects = make_projects(&mut r, &corpus, &root.join("work"), n_projects)?;

    let mut sum = GenSummary {
        root: root.clone(),
        target: o.size,
        projects: projects.len(),
        ..Default::default()
    };

    // Auto memory for ~40% of projects (at least one), keyed by the repo root.
    for (i, p) in projects.iter().enumerate() {
        if i == 0 || r.chance(0.4) {
            let dir = root
                .join(".claude/projects")
                .join(&p.cwds[0].1)
                .join("memory");
            sum.memory_files += write_memory(&mut r, &corpus, &dir, &mut st)?;
        }
    }

    // Which sessions are Codex: an exact share, shuffled deterministically.
    let n_codex = (o.sessions as f64 * o.codex_share).round() as usize;
    let mut is_codex: Vec<bool> = (0..o.sessions).map(|i| i < n_codex).collect();
    for i in (1..is_codex.len()).rev() {
        let j = r.below(i + 1);
        is_codex.swap(i, j);
    }
    // Heavy-tailed session sizes (log-normal weights), like real homes.
    let weights: Vec<f64> = (0..o.sessions).map(|_| (1.1 * r.normal()).exp()).collect();
    let mut w_left: f64 = weights.iter().sum();

    for i in 0..o.sessions {
        let left = o.size.saturating_sub(st.written) as f64;
        let budget = (left * weights[i] / w_left.max(1e-12)) as u64;
        w_left -= weights[i];
        let mut sr = Rng::derive(o.seed, 1000 + i as u64);
        let p = &projects[sr.below(projects.len())];
        // Working hours-ish: 07:00-21:00 UTC on the session's day.
        let day = SPAN_MS * i as u64 / o.sessions as u64 / 86_400_000 * 86_400_000;
        let t0 = EPOCH_MS + day + sr.range(7 * 3_600_000, 21 * 3_600_000);
        let mut g = Gen {
            c: &corpus,
            r: sr,
            p,
            t: t0,
        };
        if is_codex[i] {
            g.codex_session(&root, budget, &mut st)?;
            sum.codex_sessions += 1;
        } else {
            sum.subagent_files += g.claude_session(&root, budget, &mut st)?;
            sum.claude_sessions += 1;
        }
    }

    sum.bytes = st.written;
    sum.big_outputs = st.big_outputs;
    sum.secs = start.elapsed().as_secs_f64();
    let mut m = J::default();
    m.obj();
    m.k("generator").s("cairn-bench");
    m.k("seed").n(o.seed);
    m.k("sessions").n(o.sessions as u64);
    m.k("codex_share").f(o.codex_share);
    m.k("target_bytes").n(o.size);
    m.k("bytes").n(sum.bytes);
    m.end();
    m.nl();
    fs::write(root.join(MARKER), &m.buf)?;
    Ok(sum)
}

/// Per-session generator state.
struct Gen<'a> {
    c: &'a Corpus,
    r: Rng,
    p: &'a Project,
    /// Current time (unix ms), advanced record by record.
    t: u64,
}

/// One Claude Code JSONL file (main transcript or a subagent sidechain).
struct Chain {
    out: Out,
    agent_id: Option<String>,
    parent: Option<String>,
}

/// Common fields of every Claude Code chain record in a session.
struct ClaudeMeta {
    cwd: String,
    session_id: String,
    version: &'static str,
    branch: String,
    slug: String,
    model: &'static str,
}

/// A chosen tool call: input JSON, result content JSON, `toolUseResult` JSON.
struct ToolCall {
    name: &'static str,
    input: Vec<u8>,
    content: Vec<u8>,
    result: Vec<u8>,
    is_error: bool,
}

impl Gen<'_> {
    fn tick(&mut self, lo: u64, hi: u64) -> u64 {
        self.t += self.r.range(lo, hi);
        self.t
    }

    fn id(&mut self, prefix: &str, n: usize) -> String {
        let mut s = String::with_capacity(prefix.len() + n);
        s.push_str(prefix);
        self.r.chars(&mut s, ALNUM, n);
        s
    }

    /// Size of the next tool output, given what is left of the budget.
    fn out_size(&mut self, left: i64, st: &mut Stats) -> usize {
        let cap = (left.max(0) as f64 / 2.3) as u64;
        if cap > 1_100_000 && self.r.chance(0.015) {
            st.big_outputs += 1;
            return self.r.range(1_000_000, 5_000_000).min(cap) as usize;
        }
        self.r.log_uniform(1_000, 50_000).min(cap.max(200)) as usize
    }

    // ---------------------------------------------------------------- Claude

    fn claude_session(&mut self, root: &Path, budget: u64, st: &mut Stats) -> Result<usize> {
        let (cwd, key) = if self.r.chance(0.85) {
            self.p.cwds[0].clone()
        } else {
            self.r.pick(&self.p.cwds).clone()
        };
        let session_id = self.r.uuid_v4();
        let dir = root.join(".claude/projects").join(&key);
        let meta = ClaudeMeta {
            cwd,
            version: self.r.one(CLAUDE_VERSIONS),
            branch: self.r.pick(&self.p.branches).clone(),
            slug: format!(
                "{}-{}-{}",
                self.r.pick(SLUG_WORDS),
                self.r.pick(SLUG_WORDS),
                self.r.pick(SLUG_WORDS)
            ),
            model: self.r.one(CLAUDE_MODELS),
            session_id,
        };
        let mut main = Chain {
            out: Out::create(&dir.join(format!("{}.jsonl", meta.session_id)))?,
            agent_id: None,
            parent: None,
        };
        let may_spawn = budget > 150_000 && self.r.chance(0.3);
        let mut sub_bytes = 0u64;
        let mut subagents = 0usize;
        let mut last_prompt = String::new();
        let mut compacted_at = 0u64;
        let mut turn = 0;
        while turn == 0 || main.out.len() + sub_bytes < budget {
            turn += 1;
            let used = main.out.len() + sub_bytes;
            if used > 300_000 && used - compacted_at > 300_000 && self.r.chance(0.06) {
                compacted_at = used;
                self.compact(&meta, &mut main, st)?;
            }
            let prompt = self.c.prompt(&mut self.r, &self.p.file_names);
            last_prompt = prompt.chars().take(200).collect();
            self.file_history_snapshot(&mut main, st)?;
            self.user_prompt(&meta, &mut main, &prompt, st)?;
            let steps = self.r.range(1, 12);
            for _ in 0..steps {
                let left = budget as i64 - (main.out.len() + sub_bytes) as i64;
                if left <= 0 {
                    break;
                }
                let spawn = may_spawn && subagents < 3 && left > 60_000 && self.r.chance(0.08);
                let call = if spawn {
                    subagents += 1;
                    let sub_budget = (left as f64 * self.r.range(15, 40) as f64 / 100.0) as u64;
                    let (call, n) = self.subagent(&dir, &meta, sub_budget, st)?;
                    sub_bytes += n;
                    call
                } else {
                    self.tool_call(left, st)
                };
                self.assistant_step(&meta, &mut main, call, st)?;
            }
            let text = self.c.prose_r(&mut self.r, 100, 1500);
            self.assistant_text(&meta, &mut main, &text, Some("end_turn"), st)?;
            if self.r.chance(0.5) {
                self.system_turn_duration(&meta, &mut main, st)?;
            }
            self.t += self.r.range(30_000, 1_200_000);
        }
        // Trailing metadata records.
        let j = &mut main.out.j;
        j.obj();
        j.k("type").s("last-prompt");
        j.k("lastPrompt").s(&last_prompt);
        j.k("sessionId").s(&meta.session_id);
        j.end();
        main.out.line_end(st)?;
        if self.r.chance(0.6) {
            let title = self.c.prose(&mut self.r, 30);
            let title: String = title.chars().take(60).collect();
            let j = &mut main.out.j;
            j.obj();
            j.k("type").s("ai-title");
            j.k("sessionId").s(&meta.session_id);
            j.k("aiTitle").s(title.trim());
            j.end();
            main.out.line_end(st)?;
        }
        main.out.finish(st)?;
        Ok(subagents)
    }

    /// Writes the shared chain-record prefix (`parentUuid` .. `slug`).
    fn head(&self, m: &ClaudeMeta, ch: &mut Chain) {
        let j = &mut ch.out.j;
        j.obj();
        j.k("parentUuid").opt_s(ch.parent.as_deref());
        j.k("isSidechain").b(ch.agent_id.is_some());
        j.k("userType").s("external");
        j.k("cwd").s(&m.cwd);
        j.k("sessionId").s(&m.session_id);
        j.k("version").s(m.version);
        j.k("gitBranch").s(&m.branch);
        if let Some(a) = &ch.agent_id {
            j.k("agentId").s(a);
        }
        j.k("slug").s(&m.slug);
    }

    /// Writes `uuid` and `timestamp`, makes the record the chain's parent.
    fn tail(&mut self, ch: &mut Chain, lo: u64, hi: u64) -> String {
        let u = self.r.uuid_v4();
        let t = self.tick(lo, hi);
        ch.out.j.k("uuid").s(&u);
        ch.out.j.k("timestamp").s(&iso(t));
        ch.parent = Some(u.clone());
        u
    }

    fn file_history_snapshot(&mut self, ch: &mut Chain, st: &mut Stats) -> Result<()> {
        let id = self.r.uuid_v4();
        let ts = iso(self.t);
        let n = self.r.range(0, 4);
        let mut backups = Vec::new();
        for _ in 0..n {
            let f = self.r.pick(&self.p.file_names).clone();
            let mut h = String::new();
            self.r.hex(&mut h, 16);
            backups.push((f, h, self.r.range(1, 6)));
        }
        let j = &mut ch.out.j;
        j.obj();
        j.k("type").s("file-history-snapshot");
        j.k("messageId").s(&id);
        j.k("snapshot").obj();
        j.k("messageId").s(&id);
        j.k("trackedFileBackups").obj();
        for (f, h, v) in &backups {
            j.kd(f).obj();
            j.k("backupFileName").s(&format!("{h}@v{v}"));
            j.k("version").n(*v);
            j.k("backupTime").s(&ts);
            j.end();
        }
        j.end();
        j.k("timestamp").s(&ts);
        j.end();
        j.k("isSnapshotUpdate").b(false);
        j.end();
        ch.out.line_end(st)
    }

    fn user_prompt(
        &mut self,
        m: &ClaudeMeta,
        ch: &mut Chain,
        text: &str,
        st: &mut Stats,
    ) -> Result<()> {
        self.head(m, ch);
        let j = &mut ch.out.j;
        j.k("type").s("user");
        j.k("message").obj();
        j.k("role").s("user");
        j.k("content").s(text);
        j.end();
        self.tail(ch, 1_000, 60_000);
        ch.out.j.end();
        ch.out.line_end(st)
    }

    fn usage(&mut self, j: &mut J) {
        let r = &mut self.r;
        j.k("usage").obj();
        j.k("input_tokens").n(r.range(1, 12));
        j.k("cache_creation_input_tokens").n(r.range(0, 9000));
        j.k("cache_read_input_tokens").n(r.range(10_000, 180_000));
        j.k("cache_creation").obj();
        j.k("ephemeral_5m_input_tokens").n(0);
        j.k("ephemeral_1h_input_tokens").n(r.range(0, 9000));
        j.end();
        j.k("output_tokens").n(r.range(1, 2000));
        j.k("service_tier").s("standard");
        j.end();
    }

    /// One assistant line holding a single content block (raw JSON).
    fn assistant_line(
        &mut self,
        m: &ClaudeMeta,
        ch: &mut Chain,
        (msg_id, req_id): (&str, &str),
        block: &[u8],
        stop: Option<&str>,
        st: &mut Stats,
    ) -> Result<String> {
        self.head(m, ch);
        let j = &mut ch.out.j;
        j.k("message").obj();
        j.k("model").s(m.model);
        j.k("id").s(msg_id);
        j.k("type").s("message");
        j.k("role").s("assistant");
        j.k("content").arr().raw(block).end_arr();
        j.k("stop_reason").opt_s(stop);
        j.k("stop_sequence").null();
        self.usage(j);
        j.end();
        j.k("requestId").s(req_id);
        j.k("type").s("assistant");
        let u = self.tail(ch, 500, 20_000);
        ch.out.j.end();
        ch.out.line_end(st)?;
        Ok(u)
    }

    fn assistant_text(
        &mut self,
        m: &ClaudeMeta,
        ch: &mut Chain,
        text: &str,
        stop: Option<&str>,
        st: &mut Stats,
    ) -> Result<()> {
        let msg = self.id("msg_01", 22);
        let req = self.id("req_011C", 20);
        let mut b = J::default();
        b.obj().k("type").s("text").k("text").s(text).end();
        self.assistant_line(m, ch, (&msg, &req), &b.buf, stop, st)?;
        Ok(())
    }

    /// thinking? + text? + tool_use, then the user `tool_result` record.
    fn assistant_step(
        &mut self,
        m: &ClaudeMeta,
        ch: &mut Chain,
        call: ToolCall,
        st: &mut Stats,
    ) -> Result<()> {
        let msg = self.id("msg_01", 22);
        let req = self.id("req_011C", 20);
        if self.r.chance(0.45) {
            let thinking = self.c.prose_r(&mut self.r, 100, 2500);
            let sig = self.c.base64_r(&mut self.r, 200, 1200);
            let mut b = J::default();
            b.obj();
            b.k("type").s("thinking").k("thinking").s(&thinking);
            b.k("signature").s(&sig).end();
            self.assistant_line(m, ch, (&msg, &req), &b.buf, None, st)?;
        }
        if self.r.chance(0.5) {
            let text = self.c.prose_r(&mut self.r, 40, 500);
            let mut b = J::default();
            b.obj().k("type").s("text").k("text").s(&text).end();
            self.assistant_line(m, ch, (&msg, &req), &b.buf, None, st)?;
        }
        let tool_id = self.id("toolu_01", 22);
        let mut b = J::with_capacity(call.input.len() + 128);
        b.obj();
        b.k("type").s("tool_use");
        b.k("id").s(&tool_id);
        b.k("name").s(call.name);
        b.k("input").raw(&call.input);
        b.k("caller").obj().k("type").s("direct").end();
        b.end();
        let src = self.assistant_line(m, ch, (&msg, &req), &b.buf, Some("tool_use"), st)?;

        self.head(m, ch);
        let j = &mut ch.out.j;
        j.k("type").s("user");
        j.k("message").obj();
        j.k("role").s("user");
        j.k("content").arr().obj();
        j.k("tool_use_id").s(&tool_id);
        j.k("type").s("tool_result");
        j.k("content").raw(&call.content);
        if call.is_error {
            j.k("is_error").b(true);
        }
        j.end().end_arr();
        j.end();
        self.tail(ch, 100, 45_000);
        let j = &mut ch.out.j;
        j.k("toolUseResult").raw(&call.result);
        j.k("sourceToolAssistantUUID").s(&src);
        j.end();
        ch.out.line_end(st)
    }

    fn system_turn_duration(
        &mut self,
        m: &ClaudeMeta,
        ch: &mut Chain,
        st: &mut Stats,
    ) -> Result<()> {
        self.head(m, ch);
        let d = self.r.range(2_000, 900_000);
        let j = &mut ch.out.j;
        j.k("type").s("system");
        j.k("subtype").s("turn_duration");
        j.k("durationMs").n(d);
        j.k("isMeta").b(false);
        self.tail(ch, 10, 100);
        ch.out.j.end();
        ch.out.line_end(st)
    }

    /// `system/compact_boundary` (parentUuid null + logicalParentUuid), then the
    /// `isCompactSummary` user record that continues the conversation.
    fn compact(&mut self, m: &ClaudeMeta, ch: &mut Chain, st: &mut Stats) -> Result<()> {
        let logical = ch.parent.take();
        self.head(m, ch);
        let pre = self.r.range(120_000, 190_000);
        let j = &mut ch.out.j;
        j.k("type").s("system");
        j.k("subtype").s("compact_boundary");
        j.k("content").s("Conversation compacted");
        j.k("isMeta").b(false);
        j.k("level").s("info");
        j.k("compactMetadata").obj();
        j.k("trigger").s("auto");
        j.k("preTokens").n(pre);
        j.end();
        j.k("logicalParentUuid").opt_s(logical.as_deref());
        self.tail(ch, 5_000, 60_000);
        ch.out.j.end();
        ch.out.line_end(st)?;

        let summary = format!(
            "This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nAnalysis:\n{}\n\nSummary:\n{}",
            self.c.prose_r(&mut self.r, 1_000, 4_000),
            self.c.prose_r(&mut self.r, 2_000, 10_000)
        );
        self.head(m, ch);
        let j = &mut ch.out.j;
        j.k("type").s("user");
        j.k("message").obj();
        j.k("role").s("user");
        j.k("content").s(&summary);
        j.end();
        j.k("isVisibleInTranscriptOnly").b(true);
        j.k("isCompactSummary").b(true);
        self.tail(ch, 10, 100);
        ch.out.j.end();
        ch.out.line_end(st)
    }

    /// Picks a tool, fabricates its input, output and `toolUseResult`.
    fn tool_call(&mut self, left: i64, st: &mut Stats) -> ToolCall {
        let (rel, lang) = self.r.pick(&self.p.files).clone();
        let path = format!("{}/{rel}", self.p.root);
        let mut input = J::default();
        let mut result = J::default();
        let roll = self.r.below(100);
        if roll < 42 {
            // Bash: most bytes of real transcripts are command output.
            let (cmd, kind) = self.c.command(&mut self.r, &self.p.file_names);
            let size = self.out_size(left, st);
            let out = self.c.output(&mut self.r, kind, size);
            input.obj().k("command").s(&cmd);
            input
                .k("description")
                .s(&format!(
                    "{} {}",
                    cmd.split(' ').next().unwrap_or("run"),
                    self.c.word(&mut self.r)
                ))
                .end();
            let is_error = self.r.chance(0.06);
            let esc = escaped(&out);
            let content = if is_error {
                escaped(&format!("Exit code 1\n{out}"))
            } else {
                esc.clone()
            };
            result.obj().k("stdout").raw(&esc).k("stderr").s("");
            result.k("interrupted").b(false).k("isImage").b(false).end();
            return ToolCall {
                name: "Bash",
                input: input.buf,
                content,
                result: result.buf,
                is_error,
            };
        }
        if roll < 67 {
            // Read: numbered content to the model, raw content in toolUseResult.
            let size = self.out_size(left, st);
            let code = self.c.code(&mut self.r, lang, size);
            let lines = code.lines().count() as u64;
            input.obj().k("file_path").s(&path).end();
            result.obj().k("type").s("text").k("file").obj();
            result.k("filePath").s(&path).k("content").s(&code);
            result
                .k("numLines")
                .n(lines)
                .k("startLine")
                .n(1)
                .k("totalLines")
                .n(lines);
            result.end().end();
            return ToolCall {
                name: "Read",
                input: input.buf,
                content: escaped(&self.c.numbered(&code, 1)),
                result: result.buf,
                is_error: false,
            };
        }
        if roll < 82 {
            // Edit: small strings, but toolUseResult carries the original file.
            let size = self.out_size(left, st) / 2;
            let original = self.c.code(&mut self.r, lang, size.max(300));
            let k = self.r.range(1, 6) as usize;
            let old = self.c.code_lines(&mut self.r, lang, k).join("\n");
            let k_new = k + self.r.below(3);
            let new = self.c.code_lines(&mut self.r, lang, k_new).join("\n");
            let start = self.r.range(1, 400);
            input.obj().k("file_path").s(&path).k("old_string").s(&old);
            input.k("new_string").s(&new).end();
            let snippet = self.c.code(&mut self.r, lang, 600);
            let content = format!(
                "The file {path} has been updated. Here's the result of running `cat -n` on a snippet of the edited file:\n{}",
                self.c.numbered(&snippet, start as usize)
            );
            result.obj().k("filePath").s(&path).k("oldString").s(&old);
            result.k("newString").s(&new).k("originalFile").s(&original);
            result.k("structuredPatch").arr().obj();
            result.k("oldStart").n(start).k("oldLines").n(k as u64);
            result
                .k("newStart")
                .n(start)
                .k("newLines")
                .n(new.lines().count() as u64);
            result.k("lines").arr();
            for l in old.lines() {
                result.s(&format!("-{l}"));
            }
            for l in new.lines() {
                result.s(&format!("+{l}"));
            }
            result.end_arr().end().end_arr();
            result
                .k("userModified")
                .b(false)
                .k("replaceAll")
                .b(false)
                .end();
            return ToolCall {
                name: "Edit",
                input: input.buf,
                content: escaped(&content),
                result: result.buf,
                is_error: false,
            };
        }
        if roll < 88 {
            let size = self.out_size(left, st) / 2;
            let code = self.c.code(&mut self.r, lang, size.max(200));
            let esc = escaped(&code);
            input
                .obj()
                .k("file_path")
                .s(&path)
                .k("content")
                .raw(&esc)
                .end();
            result.obj().k("type").s("create").k("filePath").s(&path);
            result
                .k("content")
                .raw(&esc)
                .k("structuredPatch")
                .arr()
                .end_arr();
            result.k("originalFile").null().end();
            return ToolCall {
                name: "Write",
                input: input.buf,
                content: escaped(&format!("File created successfully at: {path}")),
                result: result.buf,
                is_error: false,
            };
        }
        if roll < 96 {
            let size = self.out_size(left, st);
            let out = self.c.output(&mut self.r, OutKind::Grep, size);
            let pat = format!("{}_{}", self.c.word(&mut self.r), self.c.word(&mut self.r));
            input.obj().k("pattern").s(&pat).k("path").s(&self.p.root);
            input.k("output_mode").s("content").k("-n").b(true).end();
            let esc = escaped(&out);
            result
                .obj()
                .k("mode")
                .s("content")
                .k("numFiles")
                .n(self.r.range(1, 40));
            result.k("filenames").arr().end_arr().k("content").raw(&esc);
            result.k("numLines").n(out.lines().count() as u64).end();
            return ToolCall {
                name: "Grep",
                input: input.buf,
                content: esc,
                result: result.buf,
                is_error: false,
            };
        }
        // TodoWrite: small, frequent in real sessions.
        let n = self.r.range(2, 7);
        let mut todos = J::default();
        todos.arr();
        for i in 0..n {
            let t = self.c.prose(&mut self.r, 40);
            let t: String = t.chars().take(70).collect();
            let status = if i == 0 { "in_progress" } else { "pending" };
            todos.obj().k("content").s(&t).k("status").s(status);
            todos.k("activeForm").s(&t).end();
        }
        todos.end_arr();
        input.obj().k("todos").raw(&todos.buf).end();
        result
            .obj()
            .k("oldTodos")
            .arr()
            .end_arr()
            .k("newTodos")
            .raw(&todos.buf)
            .end();
        ToolCall {
            name: "TodoWrite",
            input: input.buf,
            content: escaped(
                "Todos have been modified successfully. Ensure that you continue to use the todo list to track your progress. Please proceed with the current tasks if applicable",
            ),
            result: result.buf,
            is_error: false,
        }
    }

    /// Writes `<session>/subagents/agent-<id>.jsonl` and returns the `Task`
    /// call that spawned it plus the bytes written.
    fn subagent(
        &mut self,
        dir: &Path,
        m: &ClaudeMeta,
        budget: u64,
        st: &mut Stats,
    ) -> Result<(ToolCall, u64)> {
        let mut agent_id = String::new();
        self.r.hex(&mut agent_id, 7);
        let path = dir
            .join(&m.session_id)
            .join("subagents")
            .join(format!("agent-{agent_id}.jsonl"));
        let mut ch = Chain {
            out: Out::create(&path)?,
            agent_id: Some(agent_id.clone()),
            parent: None,
        };
        let t_start = self.t;
        let desc = format!(
            "{} {} {}",
            self.r.pick(&["Explore", "Investigate", "Review", "Search"]),
            self.c.word(&mut self.r),
            self.c.word(&mut self.r)
        );
        let prompt = format!("{desc}. {}", self.c.prose_r(&mut self.r, 200, 1500));
        self.user_prompt(m, &mut ch, &prompt, st)?;
        let mut tools = 0u64;
        while ch.out.len() < budget || tools == 0 {
            let left = budget as i64 - ch.out.len() as i64;
            let call = self.tool_call(left, st);
            self.assistant_step(m, &mut ch, call, st)?;
            tools += 1;
        }
        let report = self.c.prose_r(&mut self.r, 500, 4000);
        self.assistant_text(m, &mut ch, &report, Some("end_turn"), st)?;
        let bytes = ch.out.finish(st)?;

        let mut input = J::default();
        input.obj().k("description").s(&desc).k("prompt").s(&prompt);
        input.k("subagent_type").s("general-purpose").end();
        let mut content = J::default();
        content
            .arr()
            .obj()
            .k("type")
            .s("text")
            .k("text")
            .s(&report)
            .end()
            .end_arr();
        let mut result = J::default();
        result
            .obj()
            .k("status")
            .s("completed")
            .k("prompt")
            .s(&prompt);
        result
            .k("agentId")
            .s(&agent_id)
            .k("content")
            .raw(&content.buf);
        result.k("totalDurationMs").n(self.t - t_start);
        result.k("totalTokens").n(self.r.range(5_000, 90_000));
        result.k("totalToolUseCount").n(tools).end();
        Ok((
            ToolCall {
                name: "Task",
                input: input.buf,
                content: content.buf,
                result: result.buf,
                is_error: false,
            },
            bytes,
        ))
    }

    // ----------------------------------------------------------------- Codex

    fn begin(&mut self, out: &mut Out, ty: &str, lo: u64, hi: u64) {
        let t = self.tick(lo, hi);
        let j = &mut out.j;
        j.obj();
        j.k("timestamp").s(&iso(t));
        j.k("type").s(ty);
        j.k("payload").obj();
    }

    fn end(out: &mut Out, st: &mut Stats) -> Result<()> {
        out.j.end().end();
        out.line_end(st)
    }

    fn codex_session(&mut self, root: &Path, budget: u64, st: &mut Stats) -> Result<()> {
        let cwd = if self.r.chance(0.85) {
            self.p.cwds[0].0.clone()
        } else {
            self.r.pick(&self.p.cwds).0.clone()
        };
        let id = self.r.uuid_v7(self.t);
        let tm0 = tm(self.t);
        let path = root.join(format!(
            ".codex/sessions/{:04}/{:02}/{:02}/rollout-{:04}-{:02}-{:02}T{:02}-{:02}-{:02}-{id}.jsonl",
            tm0.year, tm0.month, tm0.day, tm0.year, tm0.month, tm0.day, tm0.hour, tm0.min, tm0.sec
        ));
        let mut out = Out::create(&path)?;
        let version = self.r.one(CODEX_VERSIONS);
        let model = self.r.one(CODEX_MODELS);
        let effort = self.r.one(&["low", "medium", "medium", "high", "xhigh"]);
        let branch = self.r.pick(&self.p.branches).clone();

        self.begin(&mut out, "session_meta", 0, 0);
        let ts = iso(self.t);
        let j = &mut out.j;
        j.k("id").s(&id);
        j.k("timestamp").s(&ts);
        j.k("cwd").s(&cwd);
        j.k("originator").s("codex_cli_rs");
        j.k("cli_version").s(version);
        j.k("source").s("cli");
        j.k("model_provider").s("openai");
        j.k("base_instructions")
            .obj()
            .k("text")
            .s(&self.c.base_instructions)
            .end();
        j.k("history_mode").s("legacy");
        j.k("git").obj();
        j.k("commit_hash").s(&self.p.commit);
        j.k("branch").s(&branch);
        j.k("repository_url")
            .s(&format!("git@github.com:acme/{}.git", self.p.name));
        j.end();
        Self::end(&mut out, st)?;

        // Injected context: AGENTS.md and the environment, as user input_text.
        let env = format!(
            "<environment_context>\n  <cwd>{cwd}</cwd>\n  <approval_policy>on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n  <network_access>restricted</network_access>\n  <shell>bash</shell>\n</environment_context>"
        );
        for text in [self.p.agents_md.as_str(), env.as_str()] {
            self.begin(&mut out, "response_item", 1, 20);
            let j = &mut out.j;
            j.k("type").s("message").k("role").s("user");
            j.k("content")
                .arr()
                .obj()
                .k("type")
                .s("input_text")
                .k("text")
                .s(text);
            j.end().end_arr();
            Self::end(&mut out, st)?;
        }

        let mut total_in = 0u64;
        let mut total_out = 0u64;
        let mut turn = 0;
        while turn == 0 || out.len() < budget {
            turn += 1;
            let turn_id = self.r.uuid_v7(self.t);
            self.begin(&mut out, "event_msg", 1_000, 60_000);
            let j = &mut out.j;
            j.k("type").s("task_started").k("turn_id").s(&turn_id);
            j.k("model_context_window").n(272_000);
            j.k("collaboration_mode_kind").s("default");
            Self::end(&mut out, st)?;

            let date = iso(self.t)[..10].to_string();
            self.begin(&mut out, "turn_context", 1, 10);
            let j = &mut out.j;
            j.k("turn_id").s(&turn_id).k("cwd").s(&cwd);
            j.k("current_date").s(&date).k("timezone").s("Etc/UTC");
            j.k("approval_policy").s("on-request");
            j.k("sandbox_policy").obj().k("type").s("workspace-write");
            j.k("writable_roots").arr().end_arr();
            j.k("network_access").b(false);
            j.k("exclude_tmpdir_env_var")
                .b(false)
                .k("exclude_slash_tmp")
                .b(false);
            j.end();
            j.k("model")
                .s(model)
                .k("effort")
                .s(effort)
                .k("summary")
                .s("auto");
            Self::end(&mut out, st)?;

            let prompt = self.c.prompt(&mut self.r, &self.p.file_names);
            self.begin(&mut out, "response_item", 1, 10);
            let j = &mut out.j;
            j.k("type").s("message").k("role").s("user");
            j.k("content")
                .arr()
                .obj()
                .k("type")
                .s("input_text")
                .k("text")
                .s(&prompt);
            j.end().end_arr();
            Self::end(&mut out, st)?;
            self.begin(&mut out, "event_msg", 1, 10);
            let j = &mut out.j;
            j.k("type").s("user_message").k("message").s(&prompt);
            j.k("images")
                .arr()
                .end_arr()
                .k("local_images")
                .arr()
                .end_arr();
            j.k("text_elements").arr().end_arr();
            Self::end(&mut out, st)?;

            let steps = self.r.range(1, 14);
            for _ in 0..steps {
                let left = budget as i64 - out.len() as i64;
                if left <= 0 {
                    break;
                }
                // Reasoning: readable summary + opaque encrypted blob.
                let summary = self.c.prose_r(&mut self.r, 60, 600);
                let summary = format!("**{}**\n\n{summary}", self.c.word(&mut self.r));
                let enc_len = self.r.range(400, 5_000) as usize;
                let enc = format!("gAAAAABp{}", self.c.base64(&mut self.r, enc_len));
                self.begin(&mut out, "response_item", 500, 20_000);
                let j = &mut out.j;
                j.k("type").s("reasoning");
                j.k("summary")
                    .arr()
                    .obj()
                    .k("type")
                    .s("summary_text")
                    .k("text")
                    .s(&summary);
                j.end().end_arr();
                j.k("content").null().k("encrypted_content").s(&enc);
                Self::end(&mut out, st)?;
                self.begin(&mut out, "event_msg", 1, 10);
                out.j.k("type").s("agent_reasoning").k("text").s(&summary);
                Self::end(&mut out, st)?;

                if self.r.chance(0.3) {
                    let text = self.c.prose_r(&mut self.r, 40, 400);
                    self.codex_assistant(&mut out, &text, "commentary", st)?;
                }

                let call_id = self.id("call_", 24);
                if self.r.chance(0.82) {
                    let (cmd, kind) = self.c.command(&mut self.r, &self.p.file_names);
                    let mut args = J::default();
                    args.obj().k("cmd").s(&cmd).k("workdir").s(&cwd);
                    args.k("yield_time_ms").n(10_000).end();
                    let args = String::from_utf8(args.buf).expect("JSON is UTF-8");
                    self.begin(&mut out, "response_item", 200, 5_000);
                    let j = &mut out.j;
                    j.k("type").s("function_call").k("name").s("exec_command");
                    j.k("arguments").s(&args).k("call_id").s(&call_id);
                    Self::end(&mut out, st)?;

                    let size = self.out_size(left, st).min(400_000);
                    let body = self.c.output(&mut self.r, kind, size);
                    let mut chunk = String::new();
                    self.r.hex(&mut chunk, 6);
                    let code = if self.r.chance(0.08) { 1 } else { 0 };
                    let output = format!(
                        "Chunk ID: {chunk}\nWall time: {}.{:04} seconds\nProcess exited with code {code}\nOriginal token count: {}\nOutput:\n{body}",
                        self.r.range(0, 40),
                        self.r.range(0, 9999),
                        body.len() / 4
                    );
                    self.begin(&mut out, "response_item", 100, 60_000);
                    let j = &mut out.j;
                    j.k("type")
                        .s("function_call_output")
                        .k("call_id")
                        .s(&call_id);
                    j.k("output").s(&output);
                    Self::end(&mut out, st)?;
                } else {
                    let (rel, lang) = self.r.pick(&self.p.files).clone();
                    let k = self.r.range(1, 8) as usize;
                    let mut patch = format!("*** Begin Patch\n*** Update File: {rel}\n@@\n");
                    for l in self.c.code_lines(&mut self.r, lang, k) {
                        patch.push_str(&format!("-{l}\n"));
                    }
                    let k_new = k + self.r.below(4);
                    for l in self.c.code_lines(&mut self.r, lang, k_new) {
                        patch.push_str(&format!("+{l}\n"));
                    }
                    patch.push_str("*** End Patch");
                    self.begin(&mut out, "response_item", 200, 8_000);
                    let j = &mut out.j;
                    j.k("type").s("custom_tool_call").k("status").s("completed");
                    j.k("call_id").s(&call_id).k("name").s("apply_patch");
                    j.k("input").s(&patch);
                    Self::end(&mut out, st)?;
                    let mut o = J::default();
                    o.obj().k("output");
                    o.s(&format!("Success. Updated the following files:\nM {rel}\n"));
                    o.k("metadata").obj().k("exit_code").n(0);
                    o.k("duration_seconds").f(0.0).end().end();
                    let o = String::from_utf8(o.buf).expect("JSON is UTF-8");
                    self.begin(&mut out, "response_item", 10, 500);
                    let j = &mut out.j;
                    j.k("type")
                        .s("custom_tool_call_output")
                        .k("call_id")
                        .s(&call_id);
                    j.k("output").s(&o);
                    Self::end(&mut out, st)?;
                }

                let (last_in, last_out) = (self.r.range(2_000, 40_000), self.r.range(20, 3_000));
                total_in += last_in;
                total_out += last_out;
                self.token_count(&mut out, (total_in, total_out), (last_in, last_out), st)?;
            }

            let answer = self.c.prose_r(&mut self.r, 150, 2_500);
            self.codex_assistant(&mut out, &answer, "final_answer", st)?;
            self.begin(&mut out, "event_msg", 1, 10);
            let j = &mut out.j;
            j.k("type").s("task_complete").k("turn_id").s(&turn_id);
            j.k("last_agent_message").s(&answer);
            Self::end(&mut out, st)?;
            self.t += self.r.range(30_000, 1_200_000);
        }
        out.finish(st)?;
        Ok(())
    }

    fn codex_assistant(
        &mut self,
        out: &mut Out,
        text: &str,
        phase: &str,
        st: &mut Stats,
    ) -> Result<()> {
        self.begin(out, "response_item", 200, 10_000);
        let j = &mut out.j;
        j.k("type").s("message").k("role").s("assistant");
        j.k("content")
            .arr()
            .obj()
            .k("type")
            .s("output_text")
            .k("text")
            .s(text);
        j.end().end_arr();
        j.k("phase").s(phase);
        Self::end(out, st)?;
        self.begin(out, "event_msg", 1, 10);
        let j = &mut out.j;
        j.k("type")
            .s("agent_message")
            .k("message")
            .s(text)
            .k("phase")
            .s(phase);
        Self::end(out, st)
    }

    fn token_count(
        &mut self,
        out: &mut Out,
        total: (u64, u64),
        last: (u64, u64),
        st: &mut Stats,
    ) -> Result<()> {
        let used = self.r.range(1, 90) as f64;
        self.begin(out, "event_msg", 1, 50);
        let j = &mut out.j;
        j.k("type").s("token_count");
        j.k("info").obj();
        for (k, (i, o)) in [("total_token_usage", total), ("last_token_usage", last)] {
            j.k(k).obj();
            j.k("input_tokens")
                .n(i)
                .k("cached_input_tokens")
                .n(i / 10 * 9);
            j.k("output_tokens")
                .n(o)
                .k("reasoning_output_tokens")
                .n(o / 2);
            j.k("total_tokens").n(i + o);
            j.end();
        }
        j.k("model_context_window").n(258_400);
        j.end();
        j.k("rate_limits").obj();
        j.k("primary").obj().k("used_percent").f(used);
        j.k("window_minutes")
            .n(300)
            .k("resets_in_seconds")
            .n(7_200)
            .end();
        j.k("secondary").obj().k("used_percent").f(used / 7.0);
        j.k("window_minutes")
            .n(10_080)
            .k("resets_in_seconds")
            .n(400_000)
            .end();
        j.end();
        Self::end(out, st)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::Value;
    use std::collections::BTreeMap;

    fn opts(out: &Path, seed: u64) -> GenOpts {
        GenOpts {
            out: out.to_path_buf(),
            sessions: 12,
            size: 2_000_000,
            seed,
            codex_share: 0.5,
            force: false,
            quiet: true,
        }
    }

    fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                files_under(&p, out);
            } else {
                out.push(p);
            }
        }
    }

    /// Relative path -> contents of every file the generator wrote.
    fn snapshot(root: &Path) -> BTreeMap<String, Vec<u8>> {
        let mut v = Vec::new();
        files_under(&root.join(".claude"), &mut v);
        files_under(&root.join(".codex"), &mut v);
        v.into_iter()
            .map(|p| {
                let rel = p.strip_prefix(root).unwrap().to_string_lossy().into_owned();
                (rel, fs::read(&p).unwrap())
            })
            .collect()
    }

    fn lines(p: &Path) -> Vec<Value> {
        let text = fs::read_to_string(p).unwrap();
        assert!(
            text.ends_with('\n'),
            "{} lacks a final newline",
            p.display()
        );
        text.lines()
            .map(|l| {
                serde_json::from_str(l)
                    .unwrap_or_else(|e| panic!("{}: bad JSON line ({e}): {l:.200}", p.display()))
            })
            .collect()
    }

    #[test]
    fn tiny_home_has_agent_layout_and_valid_json() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("home");
        let sum = generate(&opts(&root, 7)).unwrap();
        let root = root.canonicalize().unwrap();

        // Size within 5% of the target, and every byte accounted for.
        let snap = snapshot(&root);
        let on_disk: u64 = snap.values().map(|c| c.len() as u64).sum();
        assert_eq!(on_disk, sum.bytes);
        let dev = (sum.bytes as f64 / 2_000_000.0 - 1.0).abs();
        assert!(dev < 0.05, "size {} is {:.1}% off", sum.bytes, dev * 100.0);
        assert_eq!(sum.claude_sessions + sum.codex_sessions, 12);
        assert_eq!(sum.codex_sessions, 6);

        let (mut claude_main, mut subagents, mut codex, mut memory) = (0, 0, 0, 0);
        let mut seen = std::collections::HashSet::new();
        for rel in snap.keys() {
            let p = root.join(rel);
            let parts: Vec<&str> = rel.split('/').collect();
            if rel.ends_with(".md") {
                // .claude/projects/<key>/memory/<file>.md
                assert_eq!(&parts[..2], &[".claude", "projects"], "{rel}");
                assert_eq!(parts[3], "memory", "{rel}");
                let text = fs::read_to_string(&p).unwrap();
                if parts[4] == "MEMORY.md" {
                    assert!(text.lines().skip(2).all(|l| l.starts_with("- [")), "{text}");
                } else {
                    assert!(text.starts_with("---\nname: "), "{text}");
                    assert!(text.contains("\ntype: "), "{text}");
                }
                memory += 1;
                continue;
            }
            let recs = lines(&p);
            assert!(!recs.is_empty());
            for r in &recs {
                assert!(r.get("type").is_some(), "{rel}: record without type");
                seen.insert(r["type"].as_str().unwrap().to_string());
                if let Some(pt) = r["payload"]["type"].as_str() {
                    seen.insert(format!("{}/{pt}", r["type"].as_str().unwrap()));
                }
            }
            if parts[0] == ".claude" {
                let key = parts[2];
                let chain: Vec<&Value> = recs.iter().filter(|r| r.get("uuid").is_some()).collect();
                let cwd = chain[0]["cwd"].as_str().unwrap();
                assert_eq!(project_key(cwd), key, "transcript dir is the cwd's key");
                assert!(Path::new(cwd).is_dir(), "cwd {cwd} exists");
                assert!(Path::new(cwd).starts_with(root.join("work")));
                let sid = chain[0]["sessionId"].as_str().unwrap();
                // Chain: each parentUuid points at an earlier record (or null).
                let mut uuids = std::collections::HashSet::new();
                for r in &chain {
                    for k in [
                        "parentUuid",
                        "isSidechain",
                        "userType",
                        "cwd",
                        "sessionId",
                        "version",
                        "gitBranch",
                        "message",
                        "uuid",
                        "timestamp",
                    ] {
                        if r["type"] != "system" || k != "message" {
                            assert!(r.get(k).is_some(), "{rel}: chain record without {k}: {r}");
                        }
                    }
                    if let Some(pu) = r["parentUuid"].as_str() {
                        assert!(uuids.contains(pu), "{rel}: dangling parentUuid");
                    }
                    uuids.insert(r["uuid"].as_str().unwrap().to_string());
                    if r["type"] == "assistant" {
                        assert!(r["requestId"].as_str().unwrap().starts_with("req_"));
                        assert_eq!(r["message"]["content"].as_array().unwrap().len(), 1);
                    }
                }
                if parts.len() == 4 {
                    // .claude/projects/<key>/<session>.jsonl
                    assert_eq!(parts[3], format!("{sid}.jsonl"));
                    assert!(chain.iter().all(|r| r["isSidechain"] == false));
                    claude_main += 1;
                } else {
                    // .claude/projects/<key>/<session>/subagents/agent-<id>.jsonl
                    assert_eq!(parts.len(), 6, "{rel}");
                    assert_eq!(parts[3], sid);
                    assert_eq!(parts[4], "subagents");
                    let id = chain[0]["agentId"].as_str().unwrap();
                    assert_eq!(parts[5], format!("agent-{id}.jsonl"));
                    assert!(chain.iter().all(|r| r["isSidechain"] == true));
                    subagents += 1;
                }
            } else {
                // .codex/sessions/YYYY/MM/DD/rollout-YYYY-MM-DDThh-mm-ss-<uuid>.jsonl
                assert_eq!(&parts[..2], &[".codex", "sessions"], "{rel}");
                assert_eq!(parts.len(), 6, "{rel}");
                let name = parts[5];
                let meta = &recs[0];
                assert_eq!(meta["type"], "session_meta");
                let id = meta["payload"]["id"].as_str().unwrap();
                let ts = meta["payload"]["timestamp"].as_str().unwrap();
                let stamp = ts[..19].replace(':', "-");
                assert_eq!(name, format!("rollout-{stamp}-{id}.jsonl"));
                assert_eq!(&parts[2..5], &[&ts[..4], &ts[5..7], &ts[8..10]]);
                assert!(Path::new(meta["payload"]["cwd"].as_str().unwrap()).is_dir());
                for r in &recs {
                    assert!(r["timestamp"].as_str().unwrap().ends_with('Z'));
                    if r["payload"]["type"] == "function_call" {
                        let args: Value =
                            serde_json::from_str(r["payload"]["arguments"].as_str().unwrap())
                                .unwrap();
                        assert!(args["cmd"].is_string());
                    }
                    if r["payload"]["type"] == "task_started"
                        || r["payload"]["type"] == "task_complete"
                    {
                        assert!(r["payload"]["turn_id"].is_string());
                    }
                }
                codex += 1;
            }
        }
        assert_eq!(claude_main, 6);
        assert_eq!(codex, 6);
        assert_eq!(subagents, sum.subagent_files);
        assert!(memory >= 3 && memory == sum.memory_files);
        for t in [
            "user",
            "assistant",
            "file-history-snapshot",
            "system",
            "last-prompt",
            "session_meta",
            "turn_context",
            "event_msg/task_started",
            "event_msg/task_complete",
            "event_msg/token_count",
            "response_item/message",
            "response_item/function_call",
            "response_item/function_call_output",
            "response_item/custom_tool_call",
            "response_item/reasoning",
        ] {
            assert!(seen.contains(t), "no {t} record in the home");
        }
    }

    #[test]
    fn same_seed_same_bytes_other_seed_differs() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("h");
        generate(&opts(&root, 42)).unwrap();
        let a = snapshot(&root);
        // Regenerating over a previous generation needs --force and replaces it.
        assert!(generate(&opts(&root, 42)).is_err());
        let forced = GenOpts {
            force: true,
            ..opts(&root, 42)
        };
        generate(&forced).unwrap();
        assert_eq!(a, snapshot(&root), "same seed must give identical files");
        generate(&GenOpts { seed: 43, ..forced }).unwrap();
        assert_ne!(a, snapshot(&root), "another seed must differ");
    }

    #[test]
    fn refuses_real_homes() {
        assert!(refuse_real_home(Path::new("/")).is_err());
        if let Some(h) = std::env::var_os("HOME").filter(|h| !h.is_empty()) {
            let h = PathBuf::from(h);
            assert!(check_out_dir(&h, true).is_err());
            assert!(check_out_dir(&h.join(".claude"), true).is_err());
            assert!(check_out_dir(&h.join(".codex"), true).is_err());
        }
        let tmp = tempfile::tempdir().unwrap();
        fs::write(tmp.path().join("x"), "x").unwrap();
        assert!(check_out_dir(tmp.path(), false).is_err());
        assert!(check_out_dir(tmp.path(), true).is_ok());
    }

    #[test]
    fn project_keys() {
        assert_eq!(
            project_key("/home/user/work/my-repo"),
            "-home-user-work-my-repo"
        );
        assert_eq!(project_key("/a/.b_c"), "-a--b-c");
        let long = format!("/{}", "x".repeat(300));
        let k = project_key(&long);
        assert!(k.starts_with(&format!("-{}-", "x".repeat(199))));
    }
}
