//! `cairn import --from codex --to claude`, then Claude Code doing what it does with the memory
//! dir cairn wrote into, then the next export (fixture: `tests/fixtures/codex-to-claude/`).
//!
//! - Claude Code's model rewrites `MEMORY.md` without cairn's HTML-comment markers (its loader
//!   strips comments, so it never sees them): the next export updates cairn's lines where they
//!   now are and adds none twice, and `import --from claude --to codex` carries none of them
//!   to Codex.
//! - Every index line cairn writes stays one line of at most 150 characters (Claude Code asks
//!   for "under ~150", and warns past ~200), its link whole.
//! - A topic file the user or Claude deleted stays deleted until its Codex source changes.
//! - In a memory dir shared by every project (`autoMemoryDirectory`), each entry names its
//!   project.

use std::fs;
use std::path::{Path, PathBuf};

use cairn_interop::export::{ExportReport, ExportRequest, ExportStatus, ExportTarget, run};
use cairn_interop::import::{self, ImportRequest};
use cairn_transcript::claude_project_key;

const SESSION_ID: &str = "3f9d2c71-0b6e-4a8d-9c52-7e1f4b8a6d03";

fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-to-claude")
}

/// Copies the fixture dir `from` to `to`, replacing the placeholders in every file.
fn copy_tree(from: &Path, to: &Path, replace: &dyn Fn(String) -> String) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target, replace);
        } else {
            fs::write(&target, replace(fs::read_to_string(entry.path()).unwrap())).unwrap();
        }
    }
}

/// A home with Codex's v2 memory workspace, two git projects, and Claude Code's own memory
/// (plus a session transcript) for app-a.
struct Home {
    _dir: tempfile::TempDir,
    home: PathBuf,
    work: PathBuf,
}

impl Home {
    fn new() -> Home {
        let dir = tempfile::tempdir().unwrap();
        let home = fs::canonicalize(dir.path()).unwrap();
        let work = home.join("work");
        for project in ["app-a/.git", "app-b/.git"] {
            fs::create_dir_all(work.join(project)).unwrap();
        }
        let h = Home {
            _dir: dir,
            home,
            work,
        };
        let replace = |text: String| {
            text.replace("@PROJECT@", &h.project("app-a").display().to_string())
                .replace("@WORK@", &h.work.display().to_string())
                .replace("@HOME@", &h.home.display().to_string())
        };
        copy_tree(&fixture().join("codex"), &h.home.join(".codex"), &replace);
        let project_dir = h.claude_project_dir("app-a");
        copy_tree(
            &fixture().join("claude/memory"),
            &project_dir.join("memory"),
            &replace,
        );
        fs::write(
            project_dir.join(format!("{SESSION_ID}.jsonl")),
            replace(fs::read_to_string(fixture().join("claude/session.jsonl")).unwrap()),
        )
        .unwrap();
        h
    }

    fn project(&self, name: &str) -> PathBuf {
        self.work.join(name)
    }

    fn claude_project_dir(&self, name: &str) -> PathBuf {
        self.home.join(".claude/projects").join(claude_project_key(
            &self.project(name).display().to_string(),
        ))
    }

    fn memory_dir(&self, name: &str) -> PathBuf {
        self.claude_project_dir(name).join("memory")
    }

    /// cairn's data dir, as the binary passes it (`~/.cairn`).
    fn data_dir(&self) -> PathBuf {
        self.home.join(".cairn")
    }

    fn export(&self) -> ExportReport {
        run(&ExportRequest {
            written_by_cairn: Vec::new(),
            claude_root: self.home.join(".claude"),
            home: Some(self.home.clone()),
            codex_home: self.home.join(".codex"),
            lock_path: Some(self.data_dir().join("claude-export.lock")),
            ..ExportRequest::default()
        })
        .unwrap()
    }

    fn codex_v2(&self) -> PathBuf {
        self.home.join(".codex/memories_v2")
    }
}

fn target<'a>(report: &'a ExportReport, memory_dir: &Path) -> &'a ExportTarget {
    let dir = memory_dir.display().to_string();
    report
        .projects
        .iter()
        .find(|p| p.memory_dir.as_deref() == Some(dir.as_str()))
        .unwrap_or_else(|| panic!("no export into {dir}: {report:#?}"))
}

fn read(path: &Path) -> String {
    fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The topic files cairn exported into `dir` (`codex_*.md`), sorted.
fn exported_files(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("codex_") && n.ends_with(".md"))
        .collect();
    names.sort();
    names
}

/// How many lines of `index` link to `file`.
fn lines_linking(index: &str, file: &str) -> usize {
    let link = format!("]({file})");
    index.lines().filter(|l| l.contains(&link)).count()
}

/// What Claude Code's model does when it reorganises the index: it sees `MEMORY.md` without
/// HTML comments, keeps every line, sorts them, drops the comment lines, and adds its own entry.
fn claude_reorganises_index(memory_dir: &Path) -> String {
    fs::write(
        memory_dir.join("project_staging_db.md"),
        "---\nname: Staging DB\ndescription: the staging database listens on port 5433\ntype: project\n---\n\nThe staging database listens on port 5433, not 5432.\n",
    )
    .unwrap();
    let index = read(&memory_dir.join("MEMORY.md"));
    let mut lines: Vec<&str> = index
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.trim_start().starts_with("<!--"))
        .collect();
    lines.push("- [Staging DB](project_staging_db.md) — staging DB port 5433");
    lines.sort();
    let rewritten = format!("{}\n", lines.join("\n"));
    fs::write(memory_dir.join("MEMORY.md"), &rewritten).unwrap();
    rewritten
}

#[test]
fn an_index_claude_rewrote_gets_no_duplicate_lines() {
    let h = Home::new();
    let dir = h.memory_dir("app-a");
    h.export();
    let exported = exported_files(&dir);
    assert!(exported.len() >= 5, "{exported:?}");
    let rewritten = claude_reorganises_index(&dir);

    // A new Codex note, then the next export.
    fs::write(
        h.codex_v2()
            .join("extensions/ad_hoc/notes/2026-11-29T09-00-00-lint.md"),
        "Always run the linter before pushing.\n",
    )
    .unwrap();
    h.export();
    let index = read(&dir.join("MEMORY.md"));
    for file in exported_files(&dir) {
        assert_eq!(lines_linking(&index, &file), 1, "{file}:\n{index}");
    }
    for own in [
        "feedback_testing.md",
        "user_role.md",
        "project_staging_db.md",
    ] {
        assert_eq!(lines_linking(&index, own), 1, "{own}:\n{index}");
    }
    assert_eq!(
        lines_linking(&index, "codex_feedback_note_2026_11_29t09_00_00_lint.md"),
        1,
        "{index}"
    );
    // The lines Claude sorted stay where it put them; only the new one is added.
    assert!(index.starts_with(&rewritten), "{index}");

    // Nothing changes on the next run.
    let report = h.export();
    assert_eq!(target(&report, &dir).status, ExportStatus::Unchanged);
    assert_eq!(read(&dir.join("MEMORY.md")), index);

    // A Codex rollout summary that is gone takes its line with it, wherever the line is.
    let rollout = "codex_project_rollout_2026_11_20t10_15_02_ab3x_fix_flaky_vitest.md";
    assert_eq!(lines_linking(&index, rollout), 1);
    fs::remove_file(
        h.codex_v2()
            .join("rollout_summaries/2026-11-20T10-15-02-Ab3x-fix_flaky_vitest.md"),
    )
    .unwrap();
    let report = h.export();
    assert_eq!(target(&report, &dir).removed, 1, "{report:#?}");
    let after = read(&dir.join("MEMORY.md"));
    assert_eq!(lines_linking(&after, rollout), 0, "{after}");
    assert!(!dir.join(rollout).exists());
    assert_eq!(
        after.lines().count() + 1,
        index.lines().count(),
        "{index}\n---\n{after}"
    );
}

#[test]
fn cairns_index_lines_never_travel_back_to_codex() {
    let h = Home::new();
    let dir = h.memory_dir("app-a");
    h.export();
    claude_reorganises_index(&dir);

    let report = import::run(&ImportRequest {
        claude_root: h.home.join(".claude"),
        home: Some(h.home.clone()),
        codex_home: h.home.join(".codex"),
        all: true,
        ..ImportRequest::default()
    })
    .unwrap();
    assert_eq!(report.failed(), 0, "{report:#?}");
    let key = claude_project_key(&h.project("app-a").display().to_string());
    let copy = h
        .codex_v2()
        .join("extensions/external_agent_import/resources")
        .join(&key);
    let index = read(&copy.join("MEMORY.md"));
    assert_eq!(
        index,
        "- [Staging DB](project_staging_db.md) — staging DB port 5433\n\
         - [Testing policy](feedback_testing.md) — integration tests hit a real database, no mocks\n\
         - [User role](user_role.md) — senior Go dev, new to React\n"
    );
    assert!(exported_files(&copy).is_empty());
}

#[test]
fn index_lines_stay_short_with_their_links_whole() {
    let h = Home::new();
    let dir = h.memory_dir("app-a");
    h.export();
    let index = read(&dir.join("MEMORY.md"));
    for file in exported_files(&dir) {
        let line = index
            .lines()
            .find(|l| l.contains(&format!("]({file})")))
            .unwrap_or_else(|| panic!("no line for {file}:\n{index}"));
        let length = line.encode_utf16().count();
        assert!(length <= 150, "{length} characters: {line}");
        assert!(line.starts_with("- [Codex"), "{line}");
    }
    let rollout = index
        .lines()
        .find(|l| l.contains("fix_flaky_vitest.md)"))
        .unwrap();
    assert!(rollout.contains("Fixed the flaky vitest"), "{rollout}");
}

#[test]
fn a_topic_file_deleted_in_claude_stays_deleted_until_codex_changes_it() {
    let h = Home::new();
    let dir = h.memory_dir("app-a");
    h.export();
    let profile = "codex_user_profile.md";
    let tips = "codex_feedback_general_tips.md";
    assert!(dir.join(profile).is_file());

    // "Forget my profile": Claude removes the file and its index line. The tips file is
    // deleted by hand, its line left behind.
    fs::remove_file(dir.join(profile)).unwrap();
    fs::remove_file(dir.join(tips)).unwrap();
    let index = read(&dir.join("MEMORY.md"));
    let without: String = index
        .split_inclusive('\n')
        .filter(|l| !l.contains(profile))
        .collect();
    fs::write(dir.join("MEMORY.md"), without).unwrap();

    let report = h.export();
    let entry = target(&report, &dir);
    assert!(!dir.join(profile).exists());
    assert!(!dir.join(tips).exists());
    assert_eq!(entry.written, 0, "{entry:#?}");
    assert_eq!(entry.left_deleted, [tips, profile], "{entry:#?}");
    let index = read(&dir.join("MEMORY.md"));
    assert_eq!(lines_linking(&index, profile), 0, "{index}");
    assert_eq!(lines_linking(&index, tips), 0, "{index}");
    let json = serde_json::to_value(&report).unwrap();
    assert_eq!(
        json["projects"][0]["left_deleted"],
        serde_json::json!([tips, profile])
    );
    // What cairn remembers lives in its data dir, never in Claude Code's memory dir.
    assert!(h.data_dir().join("claude-export-state.json").is_file());
    for entry in fs::read_dir(&dir).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        assert!(name.ends_with(".md"), "{name} in the memory dir");
    }
    // And again: still deleted.
    let report = h.export();
    assert_eq!(target(&report, &dir).status, ExportStatus::Unchanged);
    assert!(!dir.join(profile).exists());

    // Codex learns something new about the user: the profile is written again.
    let summary = h.codex_v2().join("memory_summary.md");
    fs::write(
        &summary,
        read(&summary).replace(
            "works in short, test-first iterations.",
            "works in short, test-first iterations; moved to the platform team in December.",
        ),
    )
    .unwrap();
    let report = h.export();
    let entry = target(&report, &dir);
    assert_eq!(entry.left_deleted, [tips], "{entry:#?}");
    assert!(read(&dir.join(profile)).contains("moved to the platform team"));
    assert_eq!(lines_linking(&read(&dir.join("MEMORY.md")), profile), 1);
}

#[test]
fn a_shared_memory_dir_names_each_project() {
    let h = Home::new();
    fs::write(
        h.home.join(".claude/settings.json"),
        "{\n  \"autoMemoryDirectory\": \"~/claude-memory\"\n}\n",
    )
    .unwrap();
    let dir = h.home.join("claude-memory");
    h.export();
    let index = read(&dir.join("MEMORY.md"));
    assert!(!index.contains("this project"), "{index}");
    let routes: Vec<&str> = index
        .lines()
        .filter(|l| l.contains("what's in Codex memory"))
        .collect();
    assert_eq!(routes.len(), 2, "{index}");
    assert!(
        routes.iter().any(|l| l.contains("for app-a]")),
        "{routes:#?}"
    );
    assert!(
        routes.iter().any(|l| l.contains("for app-b]")),
        "{routes:#?}"
    );
    let helm = index.lines().find(|l| l.contains("helm_upgrade")).unwrap();
    assert!(helm.contains("app-b"), "{helm}");
    let vitest = index.lines().find(|l| l.contains("flaky_vitest")).unwrap();
    assert!(vitest.contains("(app-a)"), "{vitest}");
    // The topic file's own description (what Claude Code reads to pick it) names it too.
    for file in exported_files(&dir) {
        let text = read(&dir.join(&file));
        if file.starts_with("codex_reference_routes") || file.starts_with("codex_project_") {
            let description = text
                .lines()
                .find(|l| l.starts_with("description:"))
                .unwrap();
            assert!(
                description.contains("app-a") || description.contains("app-b"),
                "{file}: {description}"
            );
        }
    }
}

/// A note named by hand (not `<timestamp>-<slug>.md`, as Codex names them) keeps its whole
/// name as the title and the file's date as when it was written.
#[test]
fn a_hand_named_codex_note_is_dated_by_its_file() {
    let h = Home::new();
    let dir = h.memory_dir("app-a");
    fs::write(
        h.codex_v2().join("extensions/ad_hoc/notes/gamma-ruff.md"),
        "The gamma repo lints with ruff.\n",
    )
    .unwrap();
    h.export();
    let file = exported_files(&dir)
        .into_iter()
        .find(|f| f.contains("gamma_ruff"))
        .expect("the note is exported");
    let text = read(&dir.join(&file));
    assert!(text.contains("gamma ruff"), "{text}");
    assert!(text.contains("ad-hoc note written 20"), "{text}");
    assert!(!text.contains("written )"), "{text}");
}

/// A note the caller scopes to one project (written in a Codex session there) goes into that
/// project's memory only; one scoped to a directory that is gone is skipped, with the reason,
/// and reaches no other project; the others stay global.
#[test]
fn a_note_scoped_to_a_project_goes_into_that_project_only() {
    use cairn_interop::codex_source::NoteScope;
    let h = Home::new();
    let notes = h.codex_v2().join("extensions/ad_hoc/notes");
    fs::write(
        notes.join("2026-11-22T08-00-00-app-b-ports.md"),
        "app-b's dev server listens on port 4100.\n",
    )
    .unwrap();
    fs::write(
        notes.join("2026-11-23T08-00-00-old-repo.md"),
        "The old repo pins node 16.\n",
    )
    .unwrap();
    let gone = h.work.join("old-repo");
    let report = run(&ExportRequest {
        claude_root: h.home.join(".claude"),
        home: Some(h.home.clone()),
        codex_home: h.home.join(".codex"),
        lock_path: Some(h.data_dir().join("claude-export.lock")),
        note_scopes: vec![
            NoteScope {
                path: "memories_v2/extensions/ad_hoc/notes/2026-11-22T08-00-00-app-b-ports.md"
                    .into(),
                project: h.project("app-b").display().to_string(),
            },
            NoteScope {
                path: "memories_v2/extensions/ad_hoc/notes/2026-11-23T08-00-00-old-repo.md".into(),
                project: gone.display().to_string(),
            },
        ],
        ..ExportRequest::default()
    })
    .unwrap();
    let text_of = |dir: &Path| -> String {
        exported_files(dir)
            .iter()
            .map(|f| read(&dir.join(f)))
            .collect()
    };
    let a = text_of(&h.memory_dir("app-a"));
    let b = text_of(&h.memory_dir("app-b"));
    assert!(b.contains("port 4100"), "{report:#?}");
    assert!(!a.contains("port 4100"), "{a}");
    assert!(!a.contains("node 16") && !b.contains("node 16"));
    let skipped = report
        .projects
        .iter()
        .find(|p| p.cwd.as_deref() == Some(gone.to_str().unwrap()))
        .unwrap_or_else(|| panic!("{report:#?}"));
    assert_eq!(skipped.status, ExportStatus::Skipped);
    assert!(
        skipped
            .reason
            .as_deref()
            .is_some_and(|r| r.contains("no longer exists")),
        "{skipped:?}"
    );
    // The fixture's own note is global: both projects have it.
    assert!(a.contains("pnpm") && b.contains("pnpm"), "{a}\n{b}");
}
