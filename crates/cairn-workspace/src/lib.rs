//! The Codex-compatible memory workspace: the artifacts Codex reads, rendered and validated.
//!
//! This crate owns the exact shapes Codex's memory read path expects — `memory_summary.md` (first
//! line `v1`, the four headings, under 10,000 bytes for v2), `MEMORY.md` task-group blocks,
//! `rollout_summaries/<stem>.md` with Codex's file-name algorithm — and their atomic
//! installation: an artifact that fails validation is never installed, the previous one stays;
//! a file replaced keeps its mode, owner and group, and what cairn creates there gets the mode
//! Codex gives its own (`cairn-atomic`).
//! It also merges cairn's lines into the summary and task groups Codex keeps itself ([`merge`]).
//! It renders from plain input structs; it must not decide what is worth remembering, call a
//! model, open cairn's database, or take locks on the Codex home (the caller holds the workspace
//! lock while it installs).

pub mod merge;

pub use cairn_atomic::NewMode;

use std::fmt::Write as _;
use std::fs;
use std::path::{Path, PathBuf};

/// Errors writing or validating workspace artifacts.
#[derive(Debug, thiserror::Error)]
pub enum WorkspaceError {
    #[error("invalid v2 memory summary: {0}")]
    InvalidSummary(String),
    #[error("memory root cannot be a symbolic link: {0}")]
    SymlinkRoot(PathBuf),
    #[error("cannot write {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// The v2 validator's size limit (the summary must be strictly smaller).
pub const SUMMARY_MAX_BYTES: usize = 10_000;
/// The headings every summary must carry, each as a whole line.
pub const SUMMARY_HEADINGS: [&str; 4] = [
    "## User Profile",
    "## User preferences",
    "## General Tips",
    "## What's in Memory",
];

/// Checks a summary the way Codex's `is_valid_v2_summary` does: first line exactly `v1`,
/// fewer than 10,000 bytes, each heading present as a whole trimmed line.
pub fn validate_summary_v2(summary: &str) -> Result<(), WorkspaceError> {
    if summary.lines().next() != Some("v1") {
        return Err(WorkspaceError::InvalidSummary(
            "the first line must be exactly `v1`".into(),
        ));
    }
    if summary.len() >= SUMMARY_MAX_BYTES {
        return Err(WorkspaceError::InvalidSummary(format!(
            "{} bytes; it must be under {SUMMARY_MAX_BYTES}",
            summary.len()
        )));
    }
    for h in SUMMARY_HEADINGS {
        if !summary.lines().any(|l| l.trim() == h) {
            return Err(WorkspaceError::InvalidSummary(format!(
                "missing heading `{h}`"
            )));
        }
    }
    Ok(())
}

/// The file stem Codex gives a rollout summary: `<UTC time>-<4 base-62 chars>[-<slug>]`. The
/// time is the thread id's UUIDv7 timestamp (or `updated_at` when the id carries none); the
/// hash is the id's low 32 bits (a `*31` rolling hash for non-UUID ids) modulo 62⁴; the slug
/// is the lowercased ASCII alphanumerics of `slug` with everything else `_`, at most 60 bytes,
/// trailing `_` trimmed.
pub fn rollout_summary_stem(
    thread_id: &str,
    updated_at: jiff::Timestamp,
    slug: Option<&str>,
) -> String {
    const ALPHABET: &[u8; 62] = b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ";
    const SPACE: u32 = 14_776_336;
    const SLUG_MAX: usize = 60;
    let fmt = |t: jiff::Timestamp| t.strftime("%Y-%m-%dT%H-%M-%S").to_string();
    let (time, seed) = match parse_uuid(thread_id) {
        Some(u) => {
            let version = (u >> 76) & 0xF;
            let ts = if version == 7 {
                let ms = (u >> 80) as i64;
                jiff::Timestamp::from_millisecond(ms).unwrap_or(updated_at)
            } else {
                updated_at
            };
            (fmt(ts), (u & 0xFFFF_FFFF) as u32)
        }
        None => {
            let mut h = 0u32;
            for b in thread_id.bytes() {
                h = h.wrapping_mul(31).wrapping_add(u32::from(b));
            }
            (fmt(updated_at), h)
        }
    };
    let mut v = seed % SPACE;
    let mut hash = [b'0'; 4];
    for i in (0..4).rev() {
        hash[i] = ALPHABET[(v % 62) as usize];
        v /= 62;
    }
    let prefix = format!("{time}-{}", String::from_utf8_lossy(&hash));
    let Some(raw) = slug else { return prefix };
    let mut s = String::with_capacity(SLUG_MAX);
    for c in raw.chars() {
        if s.len() >= SLUG_MAX {
            break;
        }
        if c.is_ascii_alphanumeric() {
            s.push(c.to_ascii_lowercase());
        } else {
            s.push('_');
        }
    }
    while s.ends_with('_') {
        s.pop();
    }
    if s.is_empty() {
        prefix
    } else {
        format!("{prefix}-{s}")
    }
}

/// A canonical hyphenated UUID as a 128-bit number.
fn parse_uuid(s: &str) -> Option<u128> {
    let b = s.as_bytes();
    if b.len() != 36 {
        return None;
    }
    let mut v: u128 = 0;
    for (i, &c) in b.iter().enumerate() {
        if matches!(i, 8 | 13 | 18 | 23) {
            if c != b'-' {
                return None;
            }
            continue;
        }
        v = (v << 4) | u128::from((c as char).to_digit(16)?);
    }
    Some(v)
}

/// One phase-1 output, as Codex writes it to `rollout_summaries/`.
#[derive(Debug, Clone)]
pub struct RolloutSummary {
    pub thread_id: String,
    pub updated_at: jiff::Timestamp,
    pub rollout_path: String,
    pub cwd: String,
    pub git_branch: Option<String>,
    pub slug: Option<String>,
    pub summary: String,
}

impl RolloutSummary {
    pub fn file_name(&self) -> String {
        format!(
            "{}.md",
            rollout_summary_stem(&self.thread_id, self.updated_at, self.slug.as_deref())
        )
    }

    /// The file body: `thread_id`, `updated_at`, `rollout_path`, `cwd`, optional `git_branch`,
    /// a blank line, the summary.
    pub fn render(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "thread_id: {}", self.thread_id);
        let _ = writeln!(s, "updated_at: {}", self.updated_at);
        let _ = writeln!(s, "rollout_path: {}", self.rollout_path);
        let _ = writeln!(s, "cwd: {}", self.cwd);
        if let Some(b) = &self.git_branch {
            let _ = writeln!(s, "git_branch: {b}");
        }
        s.push('\n');
        s.push_str(self.summary.trim_end());
        s.push('\n');
        s
    }
}

/// A memory as the summary and the task groups show it.
#[derive(Debug, Clone)]
pub struct SummaryItem {
    /// `user`, `feedback`, `project` or `reference`.
    pub kind: String,
    /// `global` or the project directory.
    pub scope: String,
    pub name: String,
    pub description: String,
    pub keywords: Vec<String>,
    pub updated_at: jiff::Timestamp,
}

/// Renders `memory_summary.md` from memories (most useful first), within the v2 limit: user
/// facts under `## User Profile`, global feedback under `## User preferences`, global facts and
/// references under `## General Tips`, project memories (rules included) routed under `## What's in Memory` by scope and
/// memory day (the three most recent days in full, older ones as compact topics). Items that
/// do not fit are dropped from the end, so the result always validates.
pub fn render_memory_summary(items: &[SummaryItem]) -> String {
    let full = render_summary_with(items);
    if full.len() < SUMMARY_MAX_BYTES {
        return full;
    }
    // The rendering grows with the prefix length: binary-search the longest prefix that fits.
    let (mut lo, mut hi) = (0usize, items.len());
    while lo < hi {
        let mid = (lo + hi).div_ceil(2);
        if render_summary_with(&items[..mid]).len() < SUMMARY_MAX_BYTES {
            lo = mid;
        } else {
            hi = mid - 1;
        }
    }
    render_summary_with(&items[..lo])
}

fn one_line(s: &str, max: usize) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if flat.chars().count() <= max {
        flat
    } else {
        let cut: String = flat.chars().take(max.saturating_sub(1)).collect();
        format!("{cut}…")
    }
}

fn render_summary_with(items: &[SummaryItem]) -> String {
    let mut s = String::from("v1\n\n## User Profile\n\n");
    let users: Vec<_> = items.iter().filter(|i| i.kind == "user").collect();
    if users.is_empty() {
        s.push_str("No profile facts recorded yet.\n");
    }
    for i in &users {
        let _ = writeln!(s, "- {}", one_line(&i.description, 200));
    }
    s.push_str("\n## User preferences\n\n");
    // Codex shows this file in every session: a project's rules are routed under that
    // project in "What's in Memory", never listed as the person's preferences.
    let prefs: Vec<_> = items
        .iter()
        .filter(|i| i.kind == "feedback" && i.scope == "global")
        .collect();
    if prefs.is_empty() {
        s.push_str("- (none recorded yet)\n");
    }
    for i in &prefs {
        let _ = writeln!(s, "- {}", one_line(&i.description, 200));
    }
    s.push_str("\n## General Tips\n\n");
    let tips: Vec<_> = items
        .iter()
        // Global facts and pointers: they hold in every project ("What's in Memory" lists
        // the project-scoped ones).
        .filter(|i| (i.kind == "reference" || i.kind == "project") && i.scope == "global")
        .collect();
    if tips.is_empty() {
        s.push_str("- (none recorded yet)\n");
    }
    for i in &tips {
        let _ = writeln!(s, "- {}", one_line(&i.description, 200));
    }
    s.push_str("\n## What's in Memory\n");
    // Project-scoped memories by scope, then by memory day (newest first).
    let mut projects: Vec<&SummaryItem> = items.iter().filter(|i| i.scope != "global").collect();
    projects.sort_by(|a, b| a.scope.cmp(&b.scope).then(b.updated_at.cmp(&a.updated_at)));
    let day = |t: jiff::Timestamp| t.strftime("%Y-%m-%d").to_string();
    let mut days: Vec<String> = projects.iter().map(|i| day(i.updated_at)).collect();
    days.sort();
    days.dedup();
    let recent: Vec<String> = days.iter().rev().take(3).cloned().collect();
    let mut scope = "";
    let mut cur_day = String::new();
    let mut older = Vec::new();
    for i in &projects {
        let d = day(i.updated_at);
        if !recent.contains(&d) {
            older.push(*i);
            continue;
        }
        if i.scope != scope {
            scope = &i.scope;
            cur_day.clear();
            let _ = writeln!(s, "\n### {scope}");
        }
        if d != cur_day {
            let _ = writeln!(s, "\n#### {d}");
            cur_day = d;
        }
        let _ = writeln!(s, "- {}: {}", one_line(&i.name, 80), i.keywords.join(", "));
        let _ = writeln!(s, "  - desc: {}", one_line(&i.description, 200));
    }
    if !older.is_empty() {
        s.push_str("\n### Older Memory Topics\n");
        let mut scope = "";
        for i in older {
            if i.scope != scope {
                scope = &i.scope;
                let _ = writeln!(s, "\n#### {scope}");
            }
            let _ = writeln!(s, "- {}: {}", one_line(&i.name, 80), i.keywords.join(", "));
            let _ = writeln!(s, "  - desc: {}", one_line(&i.description, 160));
        }
    }
    if projects.is_empty() {
        s.push_str("\nNo project memories yet.\n");
    }
    s
}

/// Writes `content` to `dir/name` atomically (temp file in `dir`, fsync, rename), only when it
/// differs from what is there. Returns whether the file changed. Refuses a symlinked `dir`.
/// The workspace is Codex's: a file there keeps its mode, owner and group, and what cairn
/// creates (the file, `dir` and its parents) gets the mode Codex gives its own, the umask's
/// default ([`install_file_with`] for another).
pub fn install_file(dir: &Path, name: &str, content: &str) -> Result<bool, WorkspaceError> {
    install_file_with(dir, name, content, NewMode::Umask)
}

/// [`install_file`], new files and directories made with `new`'s mode (`Private` for a copy
/// kept in cairn's own data dir).
pub fn install_file_with(
    dir: &Path,
    name: &str,
    content: &str,
    new: NewMode,
) -> Result<bool, WorkspaceError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |source| WorkspaceError::Io { path, source }
    };
    if fs::symlink_metadata(dir).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(WorkspaceError::SymlinkRoot(dir.to_path_buf()));
    }
    cairn_atomic::create_dir_all(dir, new).map_err(io(dir))?;
    let target = dir.join(name);
    if fs::read(&target).is_ok_and(|old| old == content.as_bytes()) {
        return Ok(false);
    }
    cairn_atomic::write_atomic(&target, content.as_bytes(), new).map_err(io(&target))?;
    Ok(true)
}

/// Validates and installs `memory_summary.md`; an invalid summary is not written and the
/// previous file stays.
pub fn install_summary(root: &Path, summary: &str) -> Result<bool, WorkspaceError> {
    validate_summary_v2(summary)?;
    install_file(root, "memory_summary.md", summary)
}

/// One task of a task group: a session's summary file and what it was about.
#[derive(Debug, Clone)]
pub struct GroupTask {
    /// What was done, with its outcome, on one line.
    pub title: String,
    /// The rollout summary's file name (in `rollout_summaries/`).
    pub file_name: String,
    pub cwd: String,
    pub rollout_path: String,
    pub updated_at: jiff::Timestamp,
    pub thread_id: String,
    pub keywords: Vec<String>,
}

/// A `# Task Group:` block of `MEMORY.md`: one project (or `global`) with its tasks and the
/// memories that apply to it.
#[derive(Debug, Clone)]
pub struct TaskGroup {
    /// The project directory, or `global`.
    pub scope: String,
    pub tasks: Vec<GroupTask>,
    pub preferences: Vec<String>,
    pub knowledge: Vec<String>,
    pub failures: Vec<String>,
}

/// Renders `MEMORY.md` in Codex's task-group format: a `# Task Group:` header with `scope:`
/// and `applies_to:`, `## Task n:` sections each with `### rollout_summary_files` and
/// `### keywords`, then the block-level `## User preferences`, `## Reusable knowledge` and
/// `## Failures and how to do differently` (omitted when empty). `-` bullets only, no bold.
pub fn render_task_groups(groups: &[TaskGroup]) -> String {
    let mut s = String::new();
    for g in groups {
        if g.tasks.is_empty() && g.preferences.is_empty() && g.knowledge.is_empty() {
            continue;
        }
        if !s.is_empty() {
            s.push('\n');
        }
        let reuse = if g.scope == "global" {
            "any project"
        } else {
            "this directory and its subdirectories"
        };
        let _ = writeln!(s, "# Task Group: {}", one_line(&g.scope, 200));
        let _ = writeln!(s, "scope: {}", one_line(&g.scope, 200));
        let _ = writeln!(
            s,
            "applies_to: cwd={}; reuse_rule={reuse}",
            one_line(&g.scope, 200)
        );
        for (i, t) in g.tasks.iter().enumerate() {
            let _ = writeln!(s, "\n## Task {}: {}", i + 1, one_line(&t.title, 160));
            s.push_str("\n### rollout_summary_files\n");
            let _ = writeln!(
                s,
                "- rollout_summaries/{} (cwd={}, rollout_path={}, updated_at={}, thread_id={})",
                t.file_name, t.cwd, t.rollout_path, t.updated_at, t.thread_id
            );
            s.push_str("\n### keywords\n");
            let kws: Vec<String> = t.keywords.iter().map(|k| one_line(k, 40)).collect();
            let _ = writeln!(
                s,
                "{}",
                if kws.is_empty() {
                    one_line(&t.title, 80)
                } else {
                    kws.join(", ")
                }
            );
        }
        for (title, items) in [
            ("User preferences", &g.preferences),
            ("Reusable knowledge", &g.knowledge),
            ("Failures and how to do differently", &g.failures),
        ] {
            if items.is_empty() {
                continue;
            }
            let _ = writeln!(s, "\n## {title}");
            for i in items {
                let _ = writeln!(s, "- {}", one_line(i, 300));
            }
        }
    }
    if s.is_empty() {
        s.push_str("# Task Group: memory\nscope: global\napplies_to: cwd=global; reuse_rule=any project\n\nNo task groups yet.\n");
    }
    s
}

/// Checks `MEMORY.md` the way the consolidation rules state it: every block starts with
/// `# Task Group:` followed by `scope:` and `applies_to:` lines, bullets are `-`, no bold.
pub fn validate_task_groups(memory_md: &str) -> Result<(), WorkspaceError> {
    let bad = |m: String| Err(WorkspaceError::InvalidSummary(format!("MEMORY.md: {m}")));
    let lines: Vec<&str> = memory_md.lines().collect();
    if !lines
        .first()
        .is_some_and(|l| l.starts_with("# Task Group: "))
    {
        return bad("the first line must be a `# Task Group:` header".into());
    }
    for (i, l) in lines.iter().enumerate() {
        if l.starts_with("# ") {
            if !l.starts_with("# Task Group: ") {
                return bad(format!(
                    "line {}: top-level heading is not a task group",
                    i + 1
                ));
            }
            if !lines.get(i + 1).is_some_and(|n| n.starts_with("scope: "))
                || !lines
                    .get(i + 2)
                    .is_some_and(|n| n.starts_with("applies_to: "))
            {
                return bad(format!(
                    "line {}: `scope:` and `applies_to:` must follow",
                    i + 1
                ));
            }
        }
        if l.trim_start().starts_with("* ") {
            return bad(format!("line {}: bullets must be `-`", i + 1));
        }
        if l.contains("**") {
            return bad(format!("line {}: no bold", i + 1));
        }
    }
    Ok(())
}

/// Removes a file cairn wrote earlier (no-op when it is gone). Refuses symlinks.
pub fn remove_file(dir: &Path, name: &str) -> Result<bool, WorkspaceError> {
    let p = dir.join(name);
    match fs::symlink_metadata(&p) {
        Ok(m) if m.file_type().is_file() => fs::remove_file(&p)
            .map(|()| true)
            .map_err(|source| WorkspaceError::Io { path: p, source }),
        Ok(_) => Ok(false),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(source) => Err(WorkspaceError::Io { path: p, source }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ts(s: &str) -> jiff::Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn stems_match_codex() {
        // Codex's own test vector (storage_tests.rs).
        let id = "0194f5a6-89ab-7cde-8123-456789abcdef";
        let t = jiff::Timestamp::from_second(123).unwrap();
        assert_eq!(
            rollout_summary_stem(id, t, None),
            "2025-02-11T15-35-19-jqmb"
        );
        assert_eq!(
            rollout_summary_stem(id, t, Some("")),
            "2025-02-11T15-35-19-jqmb"
        );
        let stem = rollout_summary_stem(
            id,
            t,
            Some("Unsafe Slug/With Spaces & Symbols + EXTRA_LONG_12345_67890_ABCDE_fghij_klmno"),
        );
        assert_eq!(
            stem,
            "2025-02-11T15-35-19-jqmb-unsafe_slug_with_spaces___symbols___extra_long_12345_67890_a"
        );
        // Non-UUID ids use updated_at and a rolling hash.
        let s = rollout_summary_stem("not-a-uuid", ts("2026-11-20T10:00:00Z"), Some("x"));
        assert!(
            s.starts_with("2026-11-20T10-00-00-") && s.ends_with("-x"),
            "{s}"
        );
    }

    #[test]
    fn validator_rejects_what_codex_rejects() {
        let ok = "v1\n\n## User Profile\n\n## User preferences\n\n## General Tips\n\n## What's in Memory\n";
        assert!(validate_summary_v2(ok).is_ok());
        assert!(validate_summary_v2(&ok.replacen("v1", "v2", 1)).is_err());
        assert!(validate_summary_v2(&format!("---\n{ok}")).is_err());
        assert!(validate_summary_v2(&ok.replace("## General Tips\n", "")).is_err());
        let big = format!("{ok}{}", "x".repeat(SUMMARY_MAX_BYTES));
        assert!(validate_summary_v2(&big).is_err());
        let exactly = format!("{ok}{}", "y".repeat(SUMMARY_MAX_BYTES - ok.len()));
        assert_eq!(exactly.len(), SUMMARY_MAX_BYTES);
        assert!(
            validate_summary_v2(&exactly).is_err(),
            "10,000 bytes is too many"
        );
    }

    #[test]
    fn summaries_always_validate_and_route_projects() {
        let mut items = vec![
            SummaryItem {
                kind: "user".into(),
                scope: "global".into(),
                name: "role".into(),
                description: "Backend developer, new to the frontend".into(),
                keywords: vec![],
                updated_at: ts("2026-11-20T10:00:00Z"),
            },
            SummaryItem {
                kind: "feedback".into(),
                scope: "/w/shop".into(),
                name: "pnpm".into(),
                description: "Use pnpm, not npm".into(),
                keywords: vec!["pnpm".into()],
                updated_at: ts("2026-11-21T10:00:00Z"),
            },
            SummaryItem {
                kind: "project".into(),
                scope: "global".into(),
                name: "argocd".into(),
                description: "Deploys to prod go through ArgoCD".into(),
                keywords: vec![],
                updated_at: ts("2026-11-21T10:00:00Z"),
            },
        ];
        for d in 1..=28 {
            items.push(SummaryItem {
                kind: "project".into(),
                scope: "/w/shop".into(),
                name: format!("topic {d}"),
                description: "checkout totals are computed in cents ".repeat(8),
                keywords: vec!["cart".into(), "cents".into()],
                updated_at: ts(&format!("2026-10-{d:02}T10:00:00Z")),
            });
        }
        let s = render_memory_summary(&items);
        validate_summary_v2(&s).unwrap();
        // A project's rule is routed under its project, never one of the person's
        // preferences (Codex shows this file in every session).
        let prefs = &s[s.find("## User preferences").unwrap()..s.find("## General Tips").unwrap()];
        assert!(!prefs.contains("pnpm"), "{s}");
        assert!(
            s.contains(
                "### /w/shop\n\n#### 2026-11-21\n- pnpm: pnpm\n  - desc: Use pnpm, not npm\n"
            ),
            "{s}"
        );
        // A global fact is a general tip: it holds in every project.
        assert!(
            s.contains("## General Tips\n\n- Deploys to prod go through ArgoCD"),
            "{s}"
        );
        assert!(s.contains("\n#### 2026-10-28"));
        assert!(s.contains("### Older Memory Topics"));
        assert!(s.len() < SUMMARY_MAX_BYTES);
        // Many more items than fit: still valid.
        let many: Vec<SummaryItem> = (0..2000).map(|_| items[3].clone()).collect();
        validate_summary_v2(&render_memory_summary(&many)).unwrap();
        validate_summary_v2(&render_memory_summary(&[])).unwrap();
    }

    #[test]
    fn invalid_summaries_are_never_installed() {
        let dir = tempfile::tempdir().unwrap();
        let good = render_memory_summary(&[]);
        assert!(install_summary(dir.path(), &good).unwrap());
        assert!(
            !install_summary(dir.path(), &good).unwrap(),
            "unchanged: not rewritten"
        );
        assert!(install_summary(dir.path(), "v2\nbroken").is_err());
        assert_eq!(
            fs::read_to_string(dir.path().join("memory_summary.md")).unwrap(),
            good
        );
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(dir.path(), &link).unwrap();
        assert!(matches!(
            install_summary(&link, &good),
            Err(WorkspaceError::SymlinkRoot(_))
        ));
    }

    #[test]
    fn rollout_summary_files() {
        let r = RolloutSummary {
            thread_id: "0194f5a6-89ab-7cde-8123-456789abcdef".into(),
            updated_at: ts("2026-11-20T10:00:00Z"),
            rollout_path: "/h/.codex/sessions/2026/11/20/rollout-x.jsonl".into(),
            cwd: "/w/shop".into(),
            git_branch: Some("main".into()),
            slug: Some("fix-cart".into()),
            summary: "# Fixed the cart rounding\n".into(),
        };
        assert_eq!(r.file_name(), "2025-02-11T15-35-19-jqmb-fix_cart.md");
        assert_eq!(
            r.render(),
            "thread_id: 0194f5a6-89ab-7cde-8123-456789abcdef\nupdated_at: 2026-11-20T10:00:00Z\nrollout_path: /h/.codex/sessions/2026/11/20/rollout-x.jsonl\ncwd: /w/shop\ngit_branch: main\n\n# Fixed the cart rounding\n"
        );
    }
    #[test]
    fn task_groups_follow_the_format() {
        let g = TaskGroup {
            scope: "/home/dev/shop".into(),
            tasks: vec![GroupTask {
                title: "Fixed the flaky checkout test; it passes".into(),
                file_name: "2026-01-01T00-00-00-abcd-flaky.md".into(),
                cwd: "/home/dev/shop".into(),
                rollout_path: "/h/.codex/sessions/r.jsonl".into(),
                updated_at: ts("2026-01-01T00:00:00Z"),
                thread_id: "t1".into(),
                keywords: vec!["checkout".into(), "flaky".into()],
            }],
            preferences: vec!["Use pnpm, not npm".into()],
            knowledge: vec![],
            failures: vec![],
        };
        let md = render_task_groups(&[g]);
        validate_task_groups(&md).unwrap();
        assert!(md.starts_with(
            "# Task Group: /home/dev/shop\nscope: /home/dev/shop\napplies_to: cwd=/home/dev/shop;"
        ));
        assert!(md.contains("## Task 1: Fixed the flaky checkout test"));
        assert!(md.contains("### rollout_summary_files\n- rollout_summaries/2026-01-01T00-00-00-abcd-flaky.md (cwd=/home/dev/shop"));
        assert!(md.contains("### keywords\ncheckout, flaky\n"));
        assert!(md.contains("## User preferences\n- Use pnpm, not npm\n"));
        assert!(!md.contains("## Reusable knowledge"));
        validate_task_groups(&render_task_groups(&[])).unwrap();
        assert!(validate_task_groups("# Notes\n").is_err());
        assert!(validate_task_groups("# Task Group: x\nscope: x\napplies_to: y\n* bad\n").is_err());
        assert!(
            validate_task_groups("# Task Group: x\nscope: x\napplies_to: y\n- **bold**\n").is_err()
        );
    }
}
