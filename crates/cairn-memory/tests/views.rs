//! The markdown views: golden files, hand edits read back, new hand-written files.
//!
//! The golden files under `tests/golden/` are what cairn writes for a fixed set of memories
//! extracted from fixed turns. To regenerate them after a deliberate format change, run
//! `UPDATE_GOLDEN=1 cargo test -p cairn-memory --test views` and review the diff.

use std::path::{Path, PathBuf};

use cairn_memory::{AgentMemoryDirs, ListFilter, MemoryStore, MemoryType, scope_slug};
use cairn_store::Store;
use cairn_transcript::{Agent, Event, Turn, TurnStatus};

/// 2026-11-25T10:00:00Z.
const NOW: i64 = 1_795_600_800;
const SCOPE: &str = "/home/dev/work/webshop";

fn turn(key: &str, prompt: &str, at: &str) -> Turn {
    let mut t = Turn::new(key.into(), 0, 12);
    t.status = TurnStatus::Complete;
    t.started_at = Some(at.into());
    t.cwd = Some(SCOPE.into());
    t.prompt = prompt.into();
    t.events.push(Event::UserPrompt {
        text: prompt.into(),
        at: Some(at.into()),
    });
    t
}

/// A store with the sample home's webshop statements extracted, views in `dir`.
/// The fixture's store, its scope dir, the view file of "Use pnpm, not npm." and its text
/// (the temp dir lives as long as the first value).
fn pnpm_view() -> (tempfile::TempDir, MemoryStore, PathBuf, PathBuf, String) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("memory");
    let mem = fixture(&root);
    let dir = root.join(scope_slug(SCOPE));
    let file = dir.join("feedback_use-pnpm-not-npm.md");
    let text = std::fs::read_to_string(&file).unwrap();
    (tmp, mem, dir, file, text)
}

fn fixture(dir: &Path) -> MemoryStore {
    let mut mem = MemoryStore::open(Store::open_in_memory().unwrap())
        .unwrap()
        .with_views(dir);
    let w = mem.store_mut().write().unwrap();
    for t in [
        turn(
            "5f3c-t2",
            "from now on use pnpm, not npm. This repo has a pnpm-lock.yaml and npm rewrites it into a package-lock.",
            "2026-11-23T09:13:42.818Z",
        ),
        turn(
            "5f3c-t3",
            "no, don't mock the database in these tests — we got burned last quarter when the mocked checkout tests passed and the real migration broke prod. Use the real test DB; `pnpm test:int` starts it in docker.",
            "2026-11-23T09:17:22.650Z",
        ),
        turn(
            "b81e-t4",
            "ありがとう。コミットメッセージは英語で、PRの説明は日本語で書いてください。今回のPRの説明を下書きしてもらえますか？",
            "2026-11-25T14:14:16.346Z",
        ),
        turn(
            "b81e-t5",
            "remember that the staging dashboard is https://grafana.acme-shop.example/d/staging: check it after every deploy",
            "2026-11-25T14:20:00.000Z",
        ),
    ] {
        w.upsert_turn(
            Agent::Claude,
            "5f3c9a2e",
            &t,
            "/home/dev/.claude/projects/-home-dev-work-webshop/5f3c9a2e.jsonl",
        )
        .unwrap();
    }
    w.commit().unwrap();
    mem.extract(&AgentMemoryDirs::default(), NOW).unwrap();
    mem
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

#[test]
fn generated_views_match_the_golden_files() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("memory");
    let _mem = fixture(&root);
    let dir = root.join(scope_slug(SCOPE));
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let golden = golden_dir();
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        let _ = std::fs::remove_dir_all(&golden);
        std::fs::create_dir_all(&golden).unwrap();
        for n in &names {
            std::fs::copy(dir.join(n), golden.join(n)).unwrap();
        }
    }
    let mut expected: Vec<String> = std::fs::read_dir(&golden)
        .unwrap()
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".md"))
        .collect();
    expected.sort();
    assert_eq!(names, expected, "the set of view files");
    for n in &names {
        let got = std::fs::read_to_string(dir.join(n)).unwrap();
        let want = std::fs::read_to_string(golden.join(n)).unwrap();
        assert_eq!(
            got, want,
            "{n} differs from tests/golden/{n} (UPDATE_GOLDEN=1 to accept)"
        );
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&dir), 0o700);
        assert_eq!(mode(&dir.join("MEMORY.md")), 0o600);
    }
}

/// A writer killed between writing its temp file and renaming it leaves `.NAME.tmp-PID`;
/// the next refresh (which holds the lock every writer holds) removes it, and nothing else.
#[test]
fn a_killed_writer_s_temp_file_is_swept() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("memory");
    let mut mem = fixture(&root);
    let dir = root.join(scope_slug(SCOPE));
    let stale = dir.join(".feedback_use-pnpm-not-npm.md.tmp-4242");
    let mine = dir.join(".draft.tmp-notes");
    std::fs::write(&stale, "half a view").unwrap();
    std::fs::write(&mine, "the user's own dot file").unwrap();
    mem.refresh_views(NOW + 100).unwrap();
    assert!(!stale.exists(), "the dead writer's temp file is gone");
    assert!(mine.exists(), "a file that only looks alike stays");
}

/// The index is generated; a line added to it by hand is not lost without a word: the edited
/// index is kept beside it and the refresh says so.
#[test]
fn a_hand_edit_of_the_index_is_kept_aside_and_reported() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("memory");
    let mut mem = fixture(&root);
    let dir = root.join(scope_slug(SCOPE));
    let index = dir.join("MEMORY.md");
    let mut text = std::fs::read_to_string(&index).unwrap();
    text.push_str("- [Handwritten](nowhere.md) — added by hand\n");
    std::fs::write(&index, &text).unwrap();
    // The next run (any write) regenerates the index.
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert!(
        r.problems.iter().any(|p| p.contains("MEMORY.md.edited")),
        "{r:?}"
    );
    let kept = std::fs::read_to_string(dir.join("MEMORY.md.edited")).unwrap();
    assert!(kept.contains("Handwritten"));
    assert!(
        !std::fs::read_to_string(&index)
            .unwrap()
            .contains("Handwritten")
    );
    // A second edit is kept beside the first, which stays.
    let mut text = std::fs::read_to_string(&index).unwrap();
    text.push_str("- [Second](nowhere2.md) — again by hand\n");
    std::fs::write(&index, &text).unwrap();
    let r = mem.refresh_views(NOW + 200).unwrap();
    assert!(
        r.problems.iter().any(|p| p.contains("MEMORY.md.edited-2")),
        "{r:?}"
    );
    let first = std::fs::read_to_string(dir.join("MEMORY.md.edited")).unwrap();
    assert!(first.contains("Handwritten"));
    let second = std::fs::read_to_string(dir.join("MEMORY.md.edited-2")).unwrap();
    assert!(second.contains("Second"));
}

/// An edit of the text alone: the name and description cairn derived from the old text
/// follow the new one (the index and the session-start summary must not keep announcing the
/// old rule), and the file being edited stays where it is. A name the user wrote stays.
#[test]
fn an_edited_body_renames_the_memory_in_place() {
    let (_tmp, mut mem, dir, file, text) = pnpm_view();
    assert!(text.contains("name: Use pnpm, not npm\n"), "{text}");
    std::fs::write(
        &file,
        text.replace("Use pnpm, not npm.\n", "Use bun, not npm.\n"),
    )
    .unwrap();
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert_eq!(r.edits, 1, "{r:?}");
    let on_disk = std::fs::read_to_string(&file).expect("the edited file did not move");
    assert!(on_disk.contains("name: Use bun, not npm\n"), "{on_disk}");
    assert!(
        on_disk.contains("description: Use bun, not npm"),
        "{on_disk}"
    );
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert!(
        index.contains("[Use bun, not npm](feedback_use-pnpm-not-npm.md)"),
        "{index}"
    );
    assert!(!index.contains("Use pnpm"), "{index}");
    assert!(!dir.join("feedback_use-bun-not-npm.md").exists());
    // Saved again from the editor: the same file, not a second memory.
    std::fs::write(
        &file,
        on_disk.replace("Use bun, not npm.\n", "Use bun 1.2, not npm.\n"),
    )
    .unwrap();
    let r = mem.refresh_views(NOW + 200).unwrap();
    assert_eq!((r.edits, r.imported), (1, 0), "{r:?}");
    let r = mem.refresh_views(NOW + 300).unwrap();
    assert_eq!((r.edits, r.imported, r.written), (0, 0, 0), "{r:?}");
    let live: Vec<_> = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .filter(|m| m.rule.contains("npm"))
        .collect();
    assert_eq!(live.len(), 1, "{live:?}");
    assert_eq!(live[0].name, "Use bun 1.2, not npm");

    // A name the user gives stays when the text changes with it, and later.
    let named = std::fs::read_to_string(&file)
        .unwrap()
        .replace("name: Use bun 1.2, not npm\n", "name: JS package manager\n")
        .replace("Use bun 1.2, not npm.\n", "Use bun 1.3, not npm.\n");
    std::fs::write(&file, named).unwrap();
    mem.refresh_views(NOW + 400).unwrap();
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("bun 1.3", "bun 1.4")).unwrap();
    mem.refresh_views(NOW + 500).unwrap();
    let m = mem.get(&live[0].id).unwrap().unwrap();
    assert_eq!(
        (m.name.as_str(), m.rule.as_str()),
        ("JS package manager", "Use bun 1.4, not npm.")
    );
    // A new type: the same file too.
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, text.replace("type: feedback", "type: project")).unwrap();
    let r = mem.refresh_views(NOW + 600).unwrap();
    assert_eq!((r.edits, r.imported), (1, 0), "{r:?}");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("type: project")
    );
    assert_eq!(
        mem.get(&m.id).unwrap().unwrap().memory_type,
        MemoryType::Project
    );
    assert!(!dir.join("project_js-package-manager.md").exists());
}

/// Deleting a memory's file forgets the memory (as deleting a memory file does for the
/// agents), for good: re-extraction of its turn does not bring it back. A folder that lost
/// its index or all its memory files was wiped or moved, not edited: it is written again.
#[test]
fn a_deleted_file_forgets_its_memory() {
    let (_tmp, mut mem, dir, file, _) = pnpm_view();
    let id = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .find(|m| m.rule == "Use pnpm, not npm.")
        .unwrap()
        .id;
    let before = mem.list(&ListFilter::default()).unwrap().len();
    std::fs::remove_file(&file).unwrap();
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert_eq!(r.forgotten, 1, "{r:?}");
    assert!(
        r.problems.iter().any(|p| p.contains("deleted by hand")),
        "{r:?}"
    );
    assert!(!file.exists(), "not written again");
    assert!(!mem.get(&id).unwrap().unwrap().is_live());
    assert_eq!(mem.list(&ListFilter::default()).unwrap().len(), before - 1);
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert!(!index.contains("pnpm"), "{index}");
    // The turn it came from, read again, does not bring it back.
    let w = mem.store_mut().write().unwrap();
    w.upsert_turn(
        Agent::Claude,
        "5f3c9a2e",
        &turn(
            "5f3c-t2",
            "from now on use pnpm, not npm. This repo has a pnpm-lock.yaml and npm rewrites it into a package-lock.",
            "2026-11-23T09:13:42.818Z",
        ),
        "/home/dev/.claude/projects/-home-dev-work-webshop/5f3c9a2e.jsonl",
    )
    .unwrap();
    w.commit().unwrap();
    mem.extract(&AgentMemoryDirs::default(), NOW + 200).unwrap();
    assert!(!file.exists());

    // The whole folder gone: every file comes back, and that is said.
    let live = mem.list(&ListFilter::default()).unwrap().len();
    std::fs::remove_dir_all(&dir).unwrap();
    let r = mem.refresh_views(NOW + 300).unwrap();
    assert_eq!(r.forgotten, 0, "{r:?}");
    assert_eq!(mem.list(&ListFilter::default()).unwrap().len(), live);
    assert!(dir.join("MEMORY.md").is_file());
    // Every memory file deleted, the index left: the same.
    let files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.file_name().is_some_and(|n| n != "MEMORY.md"))
        .collect();
    assert!(!files.is_empty());
    for f in &files {
        std::fs::remove_file(f).unwrap();
    }
    let r = mem.refresh_views(NOW + 400).unwrap();
    assert_eq!(r.forgotten, 0, "{r:?}");
    assert!(
        r.problems.iter().any(|p| p.contains("written again")),
        "{r:?}"
    );
    assert!(files.iter().all(|f| f.is_file()));
}

/// A folder's only memory file deleted, its index left: that memory is forgotten too.
#[test]
fn deleting_a_folder_s_only_memory_forgets_it() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("memory");
    let mut mem = MemoryStore::open(Store::open_in_memory().unwrap())
        .unwrap()
        .with_views(&root);
    let m = mem
        .remember(
            cairn_memory::NewMemory {
                memory_type: MemoryType::Feedback,
                scope: "/w/solo".into(),
                rule: "Always use ruff for linting.".into(),
                why: None,
                how: None,
                name: None,
                description: None,
                source: cairn_memory::Source::default(),
                at: NOW,
            },
            NOW,
        )
        .unwrap()
        .memory;
    let dir = root.join(scope_slug("/w/solo"));
    let file = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.file_name().is_some_and(|n| n != "MEMORY.md"))
        .unwrap();
    std::fs::remove_file(&file).unwrap();
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert_eq!(r.forgotten, 1, "{r:?}");
    assert!(!mem.get(&m.id).unwrap().unwrap().is_live());
    assert!(!file.exists());
}

/// A memory's `scope` line edited by hand moves it: to another project (its file follows
/// into that project's folder, recall follows) or to `global`; a scope that is no project's
/// path is reported and the file left alone.
#[test]
fn an_edited_scope_moves_the_memory() {
    let (tmp, mut mem, dir, file, text) = pnpm_view();
    let other = tmp.path().join("work").join("api");
    std::fs::create_dir_all(&other).unwrap();
    let other_scope = cairn_memory::scope::project_scope(&other);
    let scope_line = text
        .lines()
        .find(|l| l.starts_with("scope: "))
        .expect("a scope line")
        .to_string();
    std::fs::write(
        &file,
        text.replace(&scope_line, &format!("scope: {}", other.display())),
    )
    .unwrap();
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert_eq!(r.edits, 1, "{r:?}");
    assert!(!file.exists(), "the file left the old project's folder");
    let moved = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .find(|m| m.rule == "Use pnpm, not npm.")
        .unwrap();
    assert_eq!(moved.scope, other_scope);
    let new_dir = dir.parent().unwrap().join(scope_slug(&other_scope));
    assert!(new_dir.join("feedback_use-pnpm-not-npm.md").is_file());
    assert!(
        std::fs::read_to_string(new_dir.join("MEMORY.md"))
            .unwrap()
            .contains("pnpm")
    );
    assert!(
        mem.recall("pnpm", SCOPE, 5, NOW + 100)
            .unwrap()
            .iter()
            .all(|h| h.memory.id != moved.id)
    );
    assert_eq!(
        mem.recall("pnpm", &other_scope, 5, NOW + 100).unwrap()[0]
            .memory
            .id,
        moved.id
    );
    // Not a path: reported, left alone.
    let file = new_dir.join("feedback_use-pnpm-not-npm.md");
    let now_text = std::fs::read_to_string(&file).unwrap();
    let line = now_text
        .lines()
        .find(|l| l.starts_with("scope: "))
        .unwrap()
        .to_string();
    let bad = now_text.replace(&line, "scope: the api project");
    std::fs::write(&file, &bad).unwrap();
    let r = mem.refresh_views(NOW + 200).unwrap();
    assert!(
        r.problems.iter().any(|p| p.contains("the api project")),
        "{r:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), bad);
    // A path that is no directory here and no project cairn knows (a typo) is reported too:
    // the memory must not vanish from its project into a scope nobody works in.
    let typo = now_text.replace(&line, &format!("{line}-typo"));
    std::fs::write(&file, &typo).unwrap();
    let r = mem.refresh_views(NOW + 300).unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("-typo") && p.contains("no directory here")),
        "{r:?}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), typo);
    assert_eq!(mem.get(&moved.id).unwrap().unwrap().scope, other_scope);
}

#[test]
fn a_hand_edit_is_read_back_not_overwritten() {
    let (_tmp, mut mem, dir, file, text) = pnpm_view();
    let edited = text
        .replace("Use pnpm, not npm.\n", "Use pnpm 9, never npm or npx.\n")
        .replace("description: ", "description: pnpm 9 only; ");
    std::fs::write(&file, &edited).unwrap();

    // The next run (any write) picks it up by content hash.
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert_eq!(r.edits, 1, "{r:?}");
    let m = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .find(|m| m.rule.contains("pnpm 9"))
        .expect("the edit reached the database");
    assert_eq!(m.rule, "Use pnpm 9, never npm or npx.");
    assert!(m.description.starts_with("pnpm 9 only; "));
    assert_eq!(m.updated_at, NOW + 100);
    assert!(
        m.why
            .as_deref()
            .is_some_and(|w| w.contains("pnpm-lock.yaml")),
        "Why kept"
    );
    let now_on_disk = std::fs::read_to_string(&file).unwrap();
    assert!(
        now_on_disk.contains("Use pnpm 9, never npm or npx."),
        "{now_on_disk}"
    );
    let hits = mem.recall("npx", SCOPE, 3, NOW + 100).unwrap();
    assert_eq!(hits[0].memory.id, m.id, "the recall index follows the edit");

    // A broken edit is reported and left alone.
    let broken = now_on_disk.replace("type: feedback", "type: opinion");
    std::fs::write(&file, &broken).unwrap();
    let r = mem.refresh_views(NOW + 200).unwrap();
    assert_eq!(r.edits, 0);
    assert!(r.problems.iter().any(|p| p.contains("opinion")), "{r:?}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), broken);
    assert_eq!(
        mem.get(&m.id).unwrap().unwrap().memory_type,
        MemoryType::Feedback
    );

    // An edit that loses the frontmatter's closing line, or is no longer UTF-8, is reported
    // and left alone; the memory keeps what it said.
    for (what, bytes) in [
        (
            "closing ---",
            now_on_disk.replacen("\n---\n", "\n", 1).into_bytes(),
        ),
        (
            "on the first line",
            now_on_disk.replacen("---\n", "", 1).into_bytes(),
        ),
        (
            "on the first line",
            format!("\n{}", now_on_disk.replacen("---\n", "", 1)).into_bytes(),
        ),
        ("UTF-8", {
            let mut b = now_on_disk.clone().into_bytes();
            b.extend_from_slice(b"\xff\xfe broken\n");
            b
        }),
    ] {
        std::fs::write(&file, &bytes).unwrap();
        let r = mem.refresh_views(NOW + 250).unwrap();
        assert_eq!(r.edits, 0, "{what}: {r:?}");
        assert!(r.problems.iter().any(|p| p.contains(what)), "{what}: {r:?}");
        assert_eq!(
            std::fs::read(&file).unwrap(),
            bytes,
            "{what}: file left as it is"
        );
        let kept = mem.get(&m.id).unwrap().unwrap();
        assert_eq!(kept.rule, "Use pnpm 9, never npm or npx.", "{what}");
        assert_eq!(kept.name, m.name, "{what}");
        let index = std::fs::read_to_string(dir.join("MEMORY.md")).unwrap();
        assert!(!index.contains("[---"), "{what}: {index}");
    }
    // Dropped in by hand the same way: reported, not imported.
    std::fs::write(
        dir.join("half.md"),
        "---\nname: Half\ntype: project\n\nNo end.\n",
    )
    .unwrap();
    std::fs::write(dir.join("latin1.md"), b"Caf\xe9 opens at 9.\n").unwrap();
    let r = mem.refresh_views(NOW + 260).unwrap();
    assert_eq!(r.imported, 0, "{r:?}");
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("half.md") && p.contains("closing ---")),
        "{r:?}"
    );
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("latin1.md") && p.contains("UTF-8")),
        "{r:?}"
    );
    // A note that only opens with a markdown rule is a body, and becomes a memory.
    std::fs::write(
        dir.join("rule.md"),
        "---\n\nDeploys freeze on Fridays after 15:00.\n",
    )
    .unwrap();
    let r = mem.refresh_views(NOW + 270).unwrap();
    assert_eq!(r.imported, 1, "{r:?}");
    std::fs::remove_file(dir.join("half.md")).unwrap();
    std::fs::remove_file(dir.join("latin1.md")).unwrap();
    std::fs::write(&file, &now_on_disk).unwrap();

    // A new file written by hand becomes a memory of that scope.
    std::fs::write(
        dir.join("my-note.md"),
        "---\nname: Release day\ndescription: we release on Tuesdays\ntype: project\n---\n\nReleases go out on Tuesdays after the 10:00 standup.\n\n**Why:** QA is staffed on Tuesdays.\n",
    )
    .unwrap();
    let r = mem.refresh_views(NOW + 300).unwrap();
    assert_eq!(r.imported, 1, "{r:?}");
    let note = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .find(|m| m.name == "Release day")
        .expect("imported");
    assert_eq!(
        (note.memory_type, note.scope.as_str()),
        (MemoryType::Project, SCOPE)
    );
    assert_eq!(note.why.as_deref(), Some("QA is staffed on Tuesdays."));
    assert!(
        !dir.join("my-note.md").exists(),
        "absorbed into its canonical file"
    );
    assert!(dir.join("project_release-day.md").exists());
    let index = std::fs::read_to_string(dir.join("MEMORY.md")).unwrap();
    assert!(
        index.contains("- [Release day](project_release-day.md) — we release on Tuesdays"),
        "{index}"
    );

    // Forgetting removes the file and the index line.
    mem.forget(&note.id, NOW + 400).unwrap();
    assert!(!dir.join("project_release-day.md").exists());
    assert!(
        !std::fs::read_to_string(dir.join("MEMORY.md"))
            .unwrap()
            .contains("Release day")
    );
}

/// A lost database (deleted, or replaced by an empty one) is rebuilt from the views: each
/// file's own `scope` names its project, its `source` where it came from and its `updated`
/// when (not "hand-written, saved today"), and nothing on disk is overwritten or removed.
#[test]
fn the_views_bring_back_the_memories_of_a_lost_database() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("memory");
    // (Each with its id: what names a memory still finds it.)
    type Kept = (String, MemoryType, String, String, String, i64);
    let before: Vec<Kept> = {
        let mut mem = fixture(&root);
        mem.remember(
            cairn_memory::NewMemory {
                memory_type: MemoryType::Feedback,
                scope: SCOPE.into(),
                rule: "Always use ruff for linting.".into(),
                why: None,
                how: None,
                name: None,
                description: None,
                source: cairn_memory::Source::manual(),
                at: NOW - 86_400 * 3,
            },
            NOW - 86_400 * 3,
        )
        .unwrap();
        let mut v: Vec<_> = mem
            .list(&ListFilter::default())
            .unwrap()
            .into_iter()
            .map(|m| {
                let source = m.source.describe();
                (m.rule, m.memory_type, m.scope, m.id, source, m.updated_at)
            })
            .collect();
        v.sort();
        v
    };
    assert!(
        before.iter().any(|m| m.4 == "manual") && before.iter().any(|m| m.4.contains("session")),
        "{before:?}"
    );
    assert!(before.len() >= 3, "{before:?}");
    // A new, empty database with the same views directory.
    let mut mem = MemoryStore::open(Store::open_in_memory().unwrap())
        .unwrap()
        .with_views(&root);
    // (A month later: every file's `updated` is in the past.)
    let later = NOW + 86_400 * 30;
    let r = mem.refresh_views(later).unwrap();
    assert!(r.problems.is_empty(), "{r:?}");
    assert_eq!(r.imported, before.len(), "{r:?}");
    let mut after: Vec<Kept> = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|m| {
            let source = m.source.describe();
            (m.rule, m.memory_type, m.scope, m.id, source, m.updated_at)
        })
        .collect();
    after.sort();
    assert_eq!(after, before);
    assert!(mem.get(&before[0].3).unwrap().is_some());
    // A file whose directory and scope agree with no project stays, reported.
    let stray = root.join("nowhere-00000000");
    std::fs::create_dir_all(&stray).unwrap();
    std::fs::write(
        stray.join("note.md"),
        "---\nname: Stray\nscope: /elsewhere/else\n---\n\nA stray note.\n",
    )
    .unwrap();
    let r = mem.refresh_views(later + 100).unwrap();
    assert!(
        r.problems.iter().any(|p| p.contains("no known project")),
        "{r:?}"
    );
    assert!(stray.join("note.md").exists());
}

/// A view file copied beside its original to start a new memory (same `id:` in both) becomes
/// a new memory; the original keeps what it said. Renamed (the original gone), it is an edit.
#[test]
fn a_copy_beside_its_original_is_a_new_memory() {
    let (_tmp, mut mem, dir, file, text) = pnpm_view();
    let copy = text.replace(
        "Use pnpm, not npm.\n",
        "Format every Markdown file with prettier before committing.\n",
    );
    assert_ne!(copy, text);
    std::fs::write(dir.join("feedback_prettier.md"), &copy).unwrap();
    let r = mem.refresh_views(NOW + 100).unwrap();
    assert_eq!((r.imported, r.edits), (1, 0), "{r:?}");
    let rules: Vec<String> = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .map(|m| m.rule)
        .collect();
    assert!(rules.iter().any(|r| r == "Use pnpm, not npm."), "{rules:?}");
    // Named by its own text, not by the original's derived name.
    let copy_memory = mem
        .list(&ListFilter::default())
        .unwrap()
        .into_iter()
        .find(|m| m.rule.contains("prettier"))
        .unwrap();
    assert!(copy_memory.name.contains("prettier"), "{copy_memory:?}");
    assert!(
        copy_memory.description.contains("prettier"),
        "{copy_memory:?}"
    );
    // A copy that says nothing new is merged into its original, and that is said.
    std::fs::write(dir.join("same.md"), &text).unwrap();
    let r = mem.refresh_views(NOW + 150).unwrap();
    assert!(
        r.problems
            .iter()
            .any(|p| p.contains("same.md") && p.contains("merged")),
        "{r:?}"
    );
    assert!(!dir.join("same.md").exists());
    assert!(rules.iter().any(|r| r.contains("prettier")), "{rules:?}");
    assert!(
        std::fs::read_to_string(&file)
            .unwrap()
            .contains("Use pnpm, not npm.")
    );

    // Renamed: the original file is gone, and the edit applies to its memory.
    let moved = dir.join("pnpm.md");
    let renamed = std::fs::read_to_string(&file)
        .unwrap()
        .replace("Use pnpm, not npm.\n", "Use pnpm 9, not npm.\n");
    std::fs::remove_file(&file).unwrap();
    std::fs::write(&moved, renamed).unwrap();
    let r = mem.refresh_views(NOW + 200).unwrap();
    assert_eq!((r.imported, r.edits), (0, 1), "{r:?}");
}
