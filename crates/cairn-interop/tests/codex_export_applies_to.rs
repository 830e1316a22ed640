//! `cairn import --from codex --to claude` with Codex task groups whose `applies_to:` names
//! several working directories (fixture: `tests/fixtures/codex-applies-to/`). Each named
//! project gets the group in its Claude Code memory dir.

use std::fs;
use std::path::{Path, PathBuf};

use cairn_interop::export::{ExportReport, ExportRequest, ExportStatus, run};
use cairn_transcript::claude_project_key;

/// A home with Codex's v1 memory workspace and the project directories the fixture names.
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
        for project in [
            "projB",
            "projC/.git",
            "other",
            "20260407 AI LogicMVP",
            "Tom and Jerry",
            "Tom",
            "repo/.git/worktrees/feature-a",
            "repo/.claude/worktrees/feature-a",
        ] {
            fs::create_dir_all(work.join(project)).unwrap();
        }
        // A git worktree as `git worktree add` lays it out.
        let worktree = work.join("repo/.claude/worktrees/feature-a");
        let admin = work.join("repo/.git/worktrees/feature-a");
        fs::write(
            worktree.join(".git"),
            format!("gitdir: {}\n", admin.display()),
        )
        .unwrap();
        fs::write(admin.join("commondir"), "../..\n").unwrap();
        fs::write(
            admin.join("gitdir"),
            format!("{}\n", worktree.join(".git").display()),
        )
        .unwrap();

        let memories = home.join(".codex/memories");
        fs::create_dir_all(&memories).unwrap();
        fs::create_dir_all(home.join(".claude/projects")).unwrap();
        let fixture =
            Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-applies-to/MEMORY.md");
        let text = fs::read_to_string(fixture)
            .unwrap()
            .replace("@WORK@", &work.display().to_string())
            .replace("@HOME@", &home.display().to_string());
        fs::write(memories.join("MEMORY.md"), text).unwrap();
        Home {
            _dir: dir,
            home,
            work,
        }
    }

    fn export(&self) -> ExportReport {
        run(&ExportRequest {
            written_by_cairn: Vec::new(),
            claude_root: self.home.join(".claude"),
            home: Some(self.home.clone()),
            codex_home: self.home.join(".codex"),
            ..ExportRequest::default()
        })
        .unwrap()
    }

    fn memory_dir(&self, project: &str) -> PathBuf {
        let dir = self.work.join(project);
        self.home
            .join(".claude/projects")
            .join(claude_project_key(&dir.display().to_string()))
            .join("memory")
    }

    /// The task groups exported into a project, by their `# Task Group:` title.
    fn groups_in(&self, project: &str) -> Vec<String> {
        let Ok(entries) = fs::read_dir(self.memory_dir(project)) else {
            return Vec::new();
        };
        let mut titles: Vec<String> = entries
            .flatten()
            .filter(|e| {
                e.file_name()
                    .to_string_lossy()
                    .starts_with("codex_project_")
            })
            .filter_map(|e| fs::read_to_string(e.path()).ok())
            .filter_map(|t| {
                t.lines()
                    .find_map(|l| l.strip_prefix("# Task Group: ").map(str::to_owned))
            })
            .collect();
        titles.sort();
        titles
    }
}

#[test]
fn every_listed_project_gets_the_group() {
    let h = Home::new();
    let report = h.export();

    assert_eq!(
        h.groups_in("projB"),
        [
            "cartoon archive scans",
            "shared release workflow across projB and projC"
        ]
    );
    assert_eq!(
        h.groups_in("projC"),
        [
            "a checkout that was deleted since",
            "shared release workflow across projB and projC"
        ]
    );
    assert_eq!(h.groups_in("other"), ["cross-checkout review habits"]);
    // The worktree's memory belongs to its main checkout, as in Claude Code.
    assert_eq!(h.groups_in("repo"), ["cross-checkout review habits"]);
    assert_eq!(
        h.groups_in("20260407 AI LogicMVP"),
        ["handoff packaging in a folder whose name has spaces"]
    );
    // ` and ` inside an existing directory's name does not split it.
    assert_eq!(h.groups_in("Tom and Jerry"), ["cartoon archive scans"]);
    assert!(h.groups_in("Tom").is_empty());

    // The directory that is gone is reported by its whole name.
    let gone = h.work.join("old checkout").display().to_string();
    let skipped: Vec<&str> = report
        .projects
        .iter()
        .filter(|p| p.status == ExportStatus::Skipped)
        .filter_map(|p| p.cwd.as_deref())
        .collect();
    assert_eq!(skipped, [gone.as_str()], "{report:#?}");
    assert!(
        !report
            .skipped
            .iter()
            .any(|p| p.message.contains("has no absolute")),
        "{report:#?}"
    );
}
