//! `cairn import` (both directions) and `cairn doctor` against temp homes built like seed 000's
//! experiment: three Claude Code projects (usable; transcripts deleted; directory moved), a
//! symlinked `linked.md`, a nested `notes/deep.md`.

mod common;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Output;

use common::*;
use serde_json::Value;

const TS: &str = "2026-11-20T10:00:00.000Z";
const SESSION: &str = "11111111-2222-4333-8444-555555555555";
const MEMORY_MD: &str = "# Memory index\n- [Build](build.md) — how app-a builds and tests\n- [Deep](notes/deep.md) — a nested note\n";
const BUILD_MD: &str = "---\nname: Build\ndescription: how app-a builds and tests\ntype: project\nmodified: 2026-11-19T08:00:00Z\n---\n\nRun `pnpm build`, then `pnpm test`.\n**Why:** CI runs the same two steps.\n";
const DEEP_MD: &str = "---\nname: Deep\ndescription: a nested note\ntype: reference\n---\n\nDashboards live in Grafana folder app-a.\n";

fn key(p: &Path) -> String {
    cairn_transcript::claude_project_key(&p.to_string_lossy())
}

/// Seed 000's experiment home.
struct Seed {
    h: TestHome,
    app_a: PathBuf,
    app_b: PathBuf,
    key_a: String,
    key_b: String,
    key_c: String,
}

impl Seed {
    fn new(codex_config: Option<&str>) -> Seed {
        let h = TestHome::empty();
        let root = h.root();
        let app_a = root.join("work/app-a");
        let app_b = root.join("work/app-b");
        let app_c = root.join("work/app-c"); // recorded in its transcript, then moved away
        fs::create_dir_all(&app_a).unwrap();
        fs::create_dir_all(&app_b).unwrap();
        fs::create_dir_all(root.join("work/app-c-renamed")).unwrap();

        // app-a: usable transcript, memory with a nested file and a symlink.
        let pa = h.claude_project(&app_a);
        let mem = pa.join("memory");
        fs::create_dir_all(mem.join("notes")).unwrap();
        let a = app_a.to_str().unwrap();
        fs::write(
            pa.join(format!("{SESSION}.jsonl")),
            claude_prompt("u1", a, "build it", TS) + &claude_reply("u2", a, "Built.", TS),
        )
        .unwrap();
        fs::write(mem.join("MEMORY.md"), MEMORY_MD).unwrap();
        fs::write(mem.join("build.md"), BUILD_MD).unwrap();
        fs::write(mem.join("notes/deep.md"), DEEP_MD).unwrap();
        std::os::unix::fs::symlink(mem.join("build.md"), mem.join("linked.md")).unwrap();

        // app-b: transcripts deleted (cleanupPeriodDays), memory kept.
        let pb = h.claude_project(&app_b);
        fs::create_dir_all(pb.join("memory")).unwrap();
        fs::write(
            pb.join("memory/MEMORY.md"),
            "- [Style](style.md) — code style\n",
        )
        .unwrap();
        fs::write(
            pb.join("memory/style.md"),
            "---\nname: Style\ndescription: code style\ntype: feedback\n---\n\nTabs.\n",
        )
        .unwrap();

        // app-c: its transcript points at a directory that was moved.
        let pc = h.claude_project(&app_c);
        fs::create_dir_all(pc.join("memory")).unwrap();
        let c = app_c.to_str().unwrap();
        fs::write(
            pc.join(format!("{SESSION}.jsonl")),
            claude_prompt("u1", c, "hi", TS) + &claude_reply("u2", c, "Hello.", TS),
        )
        .unwrap();
        fs::write(pc.join("memory/MEMORY.md"), "- [X](x.md) — x\n").unwrap();

        fs::create_dir_all(h.codex()).unwrap();
        if let Some(cfg) = codex_config {
            fs::write(h.codex().join("config.toml"), cfg).unwrap();
        }
        Seed {
            key_a: key(&app_a),
            key_b: key(&app_b),
            key_c: key(&app_c),
            app_a,
            app_b,
            h,
        }
    }

    fn source(&self, key: &str) -> PathBuf {
        self.h.claude().join("projects").join(key).join("memory")
    }

    fn resources(&self, ns: &str) -> PathBuf {
        self.h
            .codex()
            .join(ns)
            .join("extensions/external_agent_import/resources")
    }

    /// Runs `cairn ARGS --json`, returns the parsed report and the process output.
    fn run(&self, args: &[&str]) -> (Value, Output) {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.h.cairn(&a);
        let v = serde_json::from_slice(&out.stdout).unwrap_or(Value::Null);
        (v, out)
    }

    fn import(&self, extra: &[&str]) -> (Value, Output) {
        let mut a = vec!["import", "--from", "claude", "--to", "codex"];
        a.extend_from_slice(extra);
        self.run(&a)
    }
}

fn project<'a>(r: &'a Value, key: &str) -> &'a Value {
    r["projects"]
        .as_array()
        .expect("projects")
        .iter()
        .find(|p| p["key"] == key)
        .unwrap_or_else(|| panic!("no project {key} in {r}"))
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

const MEMORIES_ON: &str = "[features]\nmemories = true\n";

#[test]
fn plan_lists_every_candidate_with_reasons_and_changes_nothing() {
    let s = Seed::new(Some(MEMORIES_ON));
    // Four more usable projects: the plan lists all of them, not the first four.
    let mut extra = Vec::new();
    for i in 0..4 {
        let dir = s.h.root().join(format!("work/extra-{i}"));
        fs::create_dir_all(&dir).unwrap();
        let p = s.h.claude_project(&dir);
        fs::create_dir_all(p.join("memory")).unwrap();
        let d = dir.to_str().unwrap();
        fs::write(p.join("s.jsonl"), claude_prompt("u", d, "hi", TS)).unwrap();
        fs::write(p.join("memory/MEMORY.md"), "- x\n").unwrap();
        extra.push(key(&dir));
    }
    let before = tree_state(&s.h.root());
    let (r, out) = s.import(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r["mode"], "plan");
    assert_eq!(r["version"], "v2");
    assert_eq!(r["projects"].as_array().unwrap().len(), 7);
    let a = project(&r, &s.key_a);
    assert_eq!(a["status"], "new");
    assert_eq!(a["files"], 3);
    assert_eq!(a["cwd"], s.app_a.display().to_string());
    let b = project(&r, &s.key_b);
    assert_eq!(b["status"], "skipped");
    assert!(b["cwd"].is_null());
    assert!(
        b["reason"]
            .as_str()
            .unwrap()
            .contains("no session transcripts"),
        "{b}"
    );
    let c = project(&r, &s.key_c);
    assert_eq!(c["status"], "skipped");
    assert!(
        c["reason"].as_str().unwrap().contains("no longer exists"),
        "{c}"
    );
    for k in &extra {
        assert_eq!(project(&r, k)["status"], "new");
    }
    let skipped = r["skipped"].to_string();
    assert!(skipped.contains("linked.md"), "{skipped}");
    assert_eq!(
        r["targets"][0],
        s.resources("memories_v2").display().to_string()
    );

    // Human output names every project and every skip reason.
    let out = s.h.cairn(&["import", "--from", "claude", "--to", "codex"]);
    let text = String::from_utf8_lossy(&out.stdout);
    for k in extra.iter().chain([&s.key_a, &s.key_b, &s.key_c]) {
        assert!(text.contains(k.as_str()), "{k} missing from:\n{text}");
    }
    assert!(text.contains("NO CWD"), "{text}");
    assert_eq!(
        tree_state(&s.h.root()),
        before,
        "a plan must change nothing"
    );
}

#[test]
fn import_copies_bytes_skips_symlinks_and_reports_the_two_failures() {
    let s = Seed::new(Some(MEMORIES_ON));
    let claude_before = tree_state(&s.h.claude());
    let (r, out) = s.import(&[
        "--project",
        &s.key_a,
        "--project",
        &s.key_b,
        "--project",
        &s.key_c,
    ]);
    assert!(!out.status.success(), "two selections fail");
    assert_eq!(r["mode"], "import");
    assert_eq!(project(&r, &s.key_a)["status"], "imported");
    for k in [&s.key_b, &s.key_c] {
        let p = project(&r, k);
        assert_eq!(p["status"], "failed");
        assert_eq!(p["reason"], format!("selected memory was not found: {k}"));
    }

    let dst = s.resources("memories_v2").join(&s.key_a);
    let src = s.source(&s.key_a);
    for rel in ["MEMORY.md", "build.md", "notes/deep.md"] {
        assert_eq!(
            fs::read(dst.join(rel)).unwrap(),
            fs::read(src.join(rel)).unwrap(),
            "{rel} must be a byte-identical copy"
        );
    }
    assert!(fs::symlink_metadata(dst.join("linked.md")).is_err());
    assert_eq!(
        fs::read(dst.join("scope.json")).unwrap(),
        format!("{{\"cwd\":\"{}\"}}", s.app_a.display()).into_bytes()
    );
    let mut names: Vec<_> = fs::read_dir(&dst)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    assert_eq!(names, ["MEMORY.md", "build.md", "notes", "scope.json"]);
    assert!(!s.resources("memories_v2").join(&s.key_b).exists());
    let instr = fs::read_to_string(
        s.h.codex()
            .join("memories_v2/extensions/external_agent_import/instructions.md"),
    )
    .unwrap();
    for rule in [
        "always read its source `MEMORY.md` first",
        "Treat every other source `*.md` file as detailed supporting evidence",
        "represent imported project memory only as a compact\n  route under `## What's in Memory`",
        "route them under `### Older Memory Topics`",
    ] {
        assert!(instr.contains(rule), "instructions.md lacks: {rule}");
    }
    // A fresh profile with memories on: v2 only, the v1 dir is never created.
    assert!(!s.h.codex().join("memories").exists());
    // Nothing under the Claude Code root changed.
    assert_eq!(tree_state(&s.h.claude()), claude_before);

    // The human output carries the exact messages too.
    let out = s.h.cairn(&[
        "import",
        "--from",
        "claude",
        "--to",
        "codex",
        "--project",
        &s.key_b,
        "--project",
        &s.key_c,
    ]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains(&format!("selected memory was not found: {}", s.key_b)));
    assert!(text.contains(&format!("selected memory was not found: {}", s.key_c)));
    assert!(!out.status.success());
}

#[test]
fn reimport_syncs_deletions_keeps_copies_of_projects_without_transcripts() {
    let s = Seed::new(Some(MEMORIES_ON));
    let (_, out) = s.import(&["--project", &s.key_a]);
    assert!(out.status.success(), "{}", stderr(&out));
    let dst = s.resources("memories_v2").join(&s.key_a);

    // An identical project is not a candidate; --all leaves its copy alone.
    let (r, _) = s.import(&[]);
    assert_eq!(project(&r, &s.key_a)["status"], "unchanged");
    let copy_before = tree_state(&dst);
    let (r, out) = s.import(&["--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project(&r, &s.key_a)["status"], "unchanged");
    assert_eq!(tree_state(&dst), copy_before);

    // A file deleted in Claude Code disappears from the copy.
    fs::remove_file(s.source(&s.key_a).join("build.md")).unwrap();
    let (r, _) = s.import(&[]);
    assert_eq!(project(&r, &s.key_a)["status"], "changed");
    let (r, _) = s.import(&["--all"]);
    assert_eq!(project(&r, &s.key_a)["status"], "imported");
    assert!(!dst.join("build.md").exists());
    assert!(dst.join("notes/deep.md").exists());

    // A project that lost its transcripts keeps its copy.
    let pa = s.h.claude().join("projects").join(&s.key_a);
    fs::remove_file(pa.join(format!("{SESSION}.jsonl"))).unwrap();
    let (r, _) = s.import(&[]);
    let a = project(&r, &s.key_a);
    assert_eq!(a["status"], "skipped");
    assert!(
        a["reason"]
            .as_str()
            .unwrap()
            .contains("existing copy is kept"),
        "{a}"
    );
    s.import(&["--all"]);
    assert!(dst.join("scope.json").exists());

    // A project removed from Claude Code: its copy is a candidate and importing deletes it.
    fs::remove_dir_all(&pa).unwrap();
    let (r, _) = s.import(&[]);
    assert_eq!(project(&r, &s.key_a)["status"], "delete");
    let (r, out) = s.import(&["--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project(&r, &s.key_a)["status"], "deleted");
    assert!(!dst.exists());
    let (r, _) = s.import(&[]);
    assert!(
        r["projects"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["key"] != s.key_a.as_str())
    );
}

#[test]
fn the_five_version_cases() {
    struct Case {
        config: &'static str,
        v1_dir_exists: bool,
        codex_resolves: &'static str,
        v1_written: bool,
    }
    let cases = [
        // A fresh profile with `memories` on → v2 only.
        Case {
            config: MEMORIES_ON,
            v1_dir_exists: false,
            codex_resolves: "v2",
            v1_written: false,
        },
        // Only the import flag: Codex resolves v1, cairn writes v2 only and warns.
        Case {
            config: "[features]\nexternal_agent_memory_import = true\n",
            v1_dir_exists: false,
            codex_resolves: "v1",
            v1_written: false,
        },
        // An existing `memories` dir → both written.
        Case {
            config: MEMORIES_ON,
            v1_dir_exists: true,
            codex_resolves: "v1",
            v1_written: true,
        },
        // `version = "v2"` with an existing v1 dir → both written.
        Case {
            config: "[features]\nmemories = true\n[memories]\nversion = \"v2\"\n",
            v1_dir_exists: true,
            codex_resolves: "v2",
            v1_written: true,
        },
        // `memories = true` with `dual_write = false` → v1 resolved, both written.
        Case {
            config: "[features]\nmemories = true\n[memories]\ndual_write = false\n",
            v1_dir_exists: false,
            codex_resolves: "v1",
            v1_written: true,
        },
    ];
    for (i, c) in cases.iter().enumerate() {
        let s = Seed::new(Some(c.config));
        if c.v1_dir_exists {
            fs::create_dir_all(s.h.codex().join("memories")).unwrap();
        }
        let (r, out) = s.import(&["--project", &s.key_a]);
        assert!(out.status.success(), "case {i}: {}", stderr(&out));
        assert_eq!(r["codex_resolves"], c.codex_resolves, "case {i}: {r}");
        let v2 = s.resources("memories_v2").join(&s.key_a).join("build.md");
        let v1 = s.resources("memories").join(&s.key_a).join("build.md");
        assert!(v2.exists(), "case {i}: v2 copy missing");
        assert_eq!(v1.exists(), c.v1_written, "case {i}: v1 copy");
        if c.v1_written {
            assert_eq!(fs::read(&v1).unwrap(), BUILD_MD.as_bytes());
            assert!(r["targets"].as_array().unwrap().len() == 2);
        } else {
            assert!(
                c.v1_dir_exists || !s.h.codex().join("memories").exists(),
                "case {i}: the v1 dir must not be created"
            );
        }
        if i == 1 {
            assert_eq!(r["version"], "v2");
            let w = r["warnings"].to_string();
            assert!(w.contains("[features]\\nmemories = true"), "{w}");
            let out = s.h.cairn(&["import", "--from", "claude", "--to", "codex"]);
            let text = String::from_utf8_lossy(&out.stdout);
            assert!(text.contains("[features]\nmemories = true"), "{text}");
        }
    }

    // --codex-version forces the choice.
    let s = Seed::new(Some(MEMORIES_ON));
    let (_, out) = s.import(&["--project", &s.key_a, "--codex-version", "v1"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        s.resources("memories")
            .join(&s.key_a)
            .join("build.md")
            .exists()
    );
    let s = Seed::new(Some(MEMORIES_ON));
    fs::create_dir_all(s.h.codex().join("memories")).unwrap();
    let (r, _) = s.import(&["--project", &s.key_a, "--codex-version", "v2"]);
    assert_eq!(r["version"], "v2");
    assert!(!s.resources("memories").exists());
}

#[test]
fn a_held_lock_makes_the_import_busy_and_changes_nothing() {
    let s = Seed::new(Some(MEMORIES_ON));
    // Another process (this test) holds the v2 workspace lock.
    let lock = fs::File::create(s.h.codex().join("memories_v2.lock")).unwrap();
    lock.lock().unwrap();
    let before = tree_state(&s.h.root());
    let (_, out) = s.import(&["--project", &s.key_a]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains(
            "memory workspace is busy; retry after consolidation or another import finishes"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(tree_state(&s.h.root()), before, "nothing may be written");
    drop(lock);

    // When v1 is written too, its lock is needed as well.
    let s = Seed::new(Some(MEMORIES_ON));
    fs::create_dir_all(s.h.codex().join("memories")).unwrap();
    let lock = fs::File::create(s.h.codex().join("memories.lock")).unwrap();
    lock.lock().unwrap();
    let (_, out) = s.import(&["--all"]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("memory workspace is busy"));
    assert!(!s.h.codex().join("memories_v2").exists());
    drop(lock);
    let (_, out) = s.import(&["--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn symlinked_targets_are_refused_and_their_targets_untouched() {
    let ext = "extensions/external_agent_import";
    // (what to replace with a symlink, relative to the codex home)
    let cases = [
        "memories_v2".to_string(),
        format!("memories_v2/{ext}/resources"),
    ];
    for case in &cases {
        let s = Seed::new(Some(MEMORIES_ON));
        let outside = tempfile::tempdir().unwrap();
        fs::write(outside.path().join("keep.txt"), "outside").unwrap();
        let link = s.h.codex().join(case);
        fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(outside.path(), &link).unwrap();
        let before = tree_state(outside.path());
        let (_, out) = s.import(&["--project", &s.key_a]);
        assert!(!out.status.success(), "{case}");
        assert!(
            stderr(&out).contains("symbolic link"),
            "{case}: {}",
            stderr(&out)
        );
        assert_eq!(tree_state(outside.path()), before, "{case}");
    }

    // A symlinked project dir, and a symlinked scope.json inside a real one.
    let s = Seed::new(Some(MEMORIES_ON));
    let outside = tempfile::tempdir().unwrap();
    fs::write(
        outside.path().join("scope.json"),
        "{\"cwd\":\"/elsewhere\"}",
    )
    .unwrap();
    let res = s.resources("memories_v2");
    fs::create_dir_all(&res).unwrap();
    std::os::unix::fs::symlink(outside.path(), res.join(&s.key_a)).unwrap();
    let before = tree_state(outside.path());
    let (_, out) = s.import(&["--project", &s.key_a]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(tree_state(outside.path()), before);

    fs::remove_file(res.join(&s.key_a)).unwrap();
    fs::create_dir(res.join(&s.key_a)).unwrap();
    std::os::unix::fs::symlink(
        outside.path().join("scope.json"),
        res.join(&s.key_a).join("scope.json"),
    )
    .unwrap();
    let (_, out) = s.import(&["--project", &s.key_a]);
    assert!(!out.status.success());
    assert!(stderr(&out).contains("symbolic link"), "{}", stderr(&out));
    assert_eq!(tree_state(outside.path()), before);
}

#[test]
fn keys_must_be_single_path_components() {
    let s = Seed::new(Some(MEMORIES_ON));
    for bad in ["..", "../x", "a/b", "/abs"] {
        let (_, out) = s.import(&["--project", bad]);
        assert!(!out.status.success(), "{bad}");
        assert!(
            stderr(&out).contains("not a single path component"),
            "{bad}: {}",
            stderr(&out)
        );
    }
    assert!(!s.h.codex().join("memories_v2").exists());
}

#[test]
fn map_gives_a_project_without_cwd_its_directory() {
    let s = Seed::new(Some(MEMORIES_ON));
    let map = format!("{}={}", s.key_b, s.app_b.display());
    let (r, _) = s.import(&["--map", &map]);
    assert_eq!(project(&r, &s.key_b)["status"], "new");
    let (r, out) = s.import(&["--project", &s.key_b, "--map", &map]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project(&r, &s.key_b)["status"], "imported");
    assert_eq!(
        fs::read_to_string(s.resources("memories_v2").join(&s.key_b).join("scope.json")).unwrap(),
        format!("{{\"cwd\":\"{}\"}}", s.app_b.display())
    );
}

#[test]
fn dry_run_shows_the_file_operations_and_changes_nothing() {
    let s = Seed::new(Some(MEMORIES_ON));
    let before = tree_state(&s.h.root());
    let (r, out) = s.import(&["--project", &s.key_a, "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(r["mode"], "dry-run");
    let ops = project(&r, &s.key_a)["operations"].to_string();
    let dst = s.resources("memories_v2").join(&s.key_a);
    assert!(
        ops.contains(&dst.join("scope.json").display().to_string()),
        "{ops}"
    );
    assert!(
        ops.contains(&dst.join("notes/deep.md").display().to_string()),
        "{ops}"
    );
    assert!(!ops.contains("linked.md"));
    assert!(r["operations"].to_string().contains("instructions.md"));
    assert_eq!(tree_state(&s.h.root()), before);
}

/// Copies the Codex memory fixtures into the home, resolving `/SAMPLE_HOME`.
fn codex_fixtures(h: &TestHome) {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/codex-memory");
    let root = h.root();
    let mut stack = vec![src.clone()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let rel = p.strip_prefix(&src).unwrap();
            if rel == Path::new("README.md") {
                continue;
            }
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let dst = h.codex().join(rel);
            fs::create_dir_all(dst.parent().unwrap()).unwrap();
            let text = fs::read_to_string(&p)
                .unwrap()
                .replace("/SAMPLE_HOME", root.to_str().unwrap());
            fs::write(dst, text).unwrap();
        }
    }
}

fn frontmatter(text: &str) -> Vec<(String, String)> {
    let rest = text.strip_prefix("---\n").expect("frontmatter");
    rest.lines()
        .take_while(|l| *l != "---")
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn codex_to_claude_round_trip_is_within_limits_and_idempotent() {
    let s = Seed::new(Some(MEMORIES_ON));
    codex_fixtures(&s.h);
    let mem_a = s.source(&s.key_a);
    let mem_b = s.source(&s.key_b);
    // A file the user wrote that looks like cairn's name: never touched.
    fs::write(mem_a.join("codex_user_profile.md"), "mine\n").unwrap();
    let user_before = fs::read(mem_a.join("codex_user_profile.md")).unwrap();

    let (r, out) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let a = r["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["key"] == s.key_a.as_str())
        .unwrap_or_else(|| panic!("{r}"));
    assert_eq!(a["status"], "exported");
    assert_eq!(a["index"], "lines");
    let gone = r["projects"].to_string();
    assert!(
        gone.contains("gone-project") && gone.contains("no longer exists"),
        "{gone}"
    );

    // Topic files with Claude Code frontmatter, marked as cairn's.
    let mut types = Vec::new();
    for e in fs::read_dir(&mem_a).unwrap() {
        let p = e.unwrap().path();
        let text = fs::read_to_string(&p).unwrap_or_default();
        if !text.contains("source: codex") {
            continue;
        }
        let fm = frontmatter(&text);
        let get = |k: &str| fm.iter().find(|(key, _)| key == k).map(|(_, v)| v.clone());
        assert!(
            get("name").is_some() && get("description").is_some(),
            "{text}"
        );
        assert!(get("cairn_id").unwrap().starts_with("codex:"));
        types.push(get("type").unwrap());
        assert!(
            text.contains("Imported from Codex by cairn"),
            "provenance: {text}"
        );
    }
    for t in ["user", "feedback", "project", "reference"] {
        assert!(types.iter().any(|x| x == t), "no {t} topic in {types:?}");
    }
    assert_eq!(
        fs::read(mem_a.join("codex_user_profile.md")).unwrap(),
        user_before
    );
    assert!(mem_a.join("codex_user_profile_2.md").exists());
    let task = fs::read_to_string(mem_a.join("codex_project_app_a_build_and_release_pipeline.md"))
        .unwrap();
    assert!(task.contains("--pool=forks"));
    assert!(
        !mem_a
            .join("codex_project_app_b_deployment_helm.md")
            .exists()
    );
    assert!(
        mem_b
            .join("codex_project_app_b_deployment_helm.md")
            .exists()
    );
    // The planted token is redacted everywhere cairn wrote.
    for (p, bytes) in all_bytes_under(&s.h.claude()) {
        assert!(
            !String::from_utf8_lossy(&bytes).contains("ghp_Zx9Qw8Er7Ty6Ui5Op4As3Df2Gh1Jk0Lz9Xc8V"),
            "secret leaked into {}",
            p.display()
        );
    }

    // The user's index lines stay first and unchanged; cairn's lines point at real files.
    let index = fs::read_to_string(mem_a.join("MEMORY.md")).unwrap();
    assert!(index.starts_with(MEMORY_MD.trim_end()), "{index}");
    for line in index.lines().filter(|l| l.contains("](codex_")) {
        let file = line.split("](").nth(1).unwrap().split(')').next().unwrap();
        assert!(mem_a.join(file).exists(), "{line}");
    }
    let t = index.trim();
    assert!(t.lines().count() <= 200 && t.encode_utf16().count() <= 25_000);

    // Idempotent: a second run changes nothing, byte for byte and mtime for mtime.
    let before = tree_state(&s.h.claude());
    let (r, out) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        r["projects"]
            .as_array()
            .unwrap()
            .iter()
            .all(|p| p["status"] == "unchanged" || p["status"] == "skipped"),
        "{r}"
    );
    assert_eq!(tree_state(&s.h.claude()), before);

    // An edited cairn file is left alone; a Codex topic that disappears is removed.
    let tips = mem_a.join("codex_feedback_general_tips.md");
    let edited = fs::read_to_string(&tips).unwrap() + "\nmy own addition\n";
    fs::write(&tips, &edited).unwrap();
    fs::remove_file(
        s.h.codex()
            .join("memories_v2/rollout_summaries/2026-11-18T16-02-44-Qz7P-helm_upgrade.md"),
    )
    .unwrap();
    let (r, _) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert_eq!(fs::read_to_string(&tips).unwrap(), edited);
    assert!(r.to_string().contains("codex_feedback_general_tips.md"));
    assert!(
        !mem_b
            .join("codex_project_rollout_2026_11_18t16_02_44_qz7p_helm_upgrade.md")
            .exists()
    );

    // Round trip: what cairn exported from Codex never travels back into Codex as Claude
    // Code memory (it was mirrored into the resources and read back as evidence).
    // The user's own files do, `MEMORY.md` without cairn's block; the plan says what it
    // skipped and why.
    let (r, out) = s.import(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let skipped = r["skipped"].to_string();
    assert!(
        skipped.contains("codex_feedback_preferences.md")
            && skipped.contains("exported from Codex by cairn"),
        "{skipped}"
    );
    let (_, out) = s.import(&["--project", &s.key_a]);
    assert!(out.status.success(), "{}", stderr(&out));
    let copy = s.resources("memories_v2").join(&s.key_a);
    assert_eq!(
        fs::read_to_string(copy.join("MEMORY.md")).unwrap(),
        MEMORY_MD
    );
    assert_eq!(
        fs::read(copy.join("codex_user_profile.md")).unwrap(),
        user_before,
        "the user's own file with a cairn-like name is theirs: copied"
    );
    assert_eq!(
        fs::read(copy.join("codex_feedback_general_tips.md")).ok(),
        None,
        "an edited export is still Codex's memory"
    );
    for e in fs::read_dir(&copy).unwrap() {
        let text = fs::read_to_string(e.unwrap().path()).unwrap_or_default();
        assert!(
            !text.contains("source: codex") && !text.contains("cairn:codex"),
            "{text}"
        );
    }
    // A second import of the same state changes nothing.
    let (r, _) = s.import(&["--project", &s.key_a]);
    assert_eq!(project(&r, &s.key_a)["status"], "unchanged", "{r}");
    let before = tree_state(&s.h.claude());
    s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert_eq!(tree_state(&s.h.claude()), before);
}

#[test]
fn export_keeps_a_full_index_within_limits() {
    let s = Seed::new(Some(MEMORIES_ON));
    codex_fixtures(&s.h);
    let mem_a = s.source(&s.key_a);
    // 195 lines of the user's own: one line per topic no longer fits, one line does.
    let mut user = String::new();
    for i in 0..195 {
        user.push_str(&format!(
            "- [Note {i}](note_{i}.md) — something the user keeps\n"
        ));
    }
    fs::write(mem_a.join("MEMORY.md"), &user).unwrap();
    let app_a = s.app_a.to_str().unwrap();
    let (r, out) = s.run(&[
        "import",
        "--from",
        "codex",
        "--to",
        "claude",
        "--project",
        app_a,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let a = project(&r, &s.key_a);
    assert_eq!(a["index"], "collapsed", "{a}");
    // --project DIR exports that project only.
    assert!(
        !s.source(&s.key_b)
            .join("codex_feedback_preferences.md")
            .exists()
    );
    let index = fs::read_to_string(mem_a.join("MEMORY.md")).unwrap();
    assert!(index.starts_with(&user));
    assert!(index.trim().lines().count() <= 200);
    let link = index.lines().find(|l| l.contains("](codex_")).unwrap();
    let file = link.split("](").nth(1).unwrap().split(')').next().unwrap();
    let listing = fs::read_to_string(mem_a.join(file)).unwrap();
    assert!(listing.contains("codex_project_app_a_build_and_release_pipeline.md"));

    // A full index: no line is added, the user's file is untouched, the topics still arrive.
    let full: String = (0..200).map(|i| format!("- line {i}\n")).collect();
    fs::write(mem_a.join("MEMORY.md"), &full).unwrap();
    let (r, _) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert_eq!(project(&r, &s.key_a)["index"], "none");
    assert_eq!(fs::read_to_string(mem_a.join("MEMORY.md")).unwrap(), full);
    assert!(mem_a.join("codex_feedback_preferences.md").exists());
}

#[test]
fn doctor_explains_each_problem_with_its_fix() {
    let s = Seed::new(Some("[features]\nexternal_agent_memory_import = true\n"));
    // An oversized MEMORY.md, and an invalid v2 summary.
    let big: String = (0..230)
        .map(|i| format!("- [n{i}](n{i}.md) — x\n"))
        .collect();
    fs::write(s.source(&s.key_a).join("MEMORY.md"), big).unwrap();
    fs::create_dir_all(s.h.codex().join("memories_v2")).unwrap();
    fs::write(
        s.h.codex().join("memories_v2/memory_summary.md"),
        "v2\n\n## User Profile\n\n## General Tips\n",
    )
    .unwrap();
    let (r, out) = s.run(&["doctor"]);
    assert!(!out.status.success(), "problems make doctor exit non-zero");
    let checks = r["checks"].as_array().unwrap();
    let find = |id: &str| -> Vec<&Value> { checks.iter().filter(|c| c["id"] == id).collect() };
    let trap = find("codex.v1_trap");
    assert_eq!(trap.len(), 1, "{r}");
    assert!(trap[0]["fix"].as_str().unwrap().contains("memories = true"));
    let no_cwd = find("claude.no_cwd");
    assert_eq!(no_cwd.len(), 2, "{r}");
    let text = no_cwd.iter().map(|c| c.to_string()).collect::<String>();
    assert!(
        text.contains("no session transcripts") && text.contains("no longer exists"),
        "{text}"
    );
    assert!(text.contains("--map"));
    let idx = find("claude.memory_index");
    assert_eq!(idx[0]["status"], "warn");
    assert!(idx[0]["message"].as_str().unwrap().contains("230 lines"));
    let sum = find("codex.memory_summary");
    let msg = sum[0]["message"].as_str().unwrap();
    assert!(
        msg.contains("first line")
            && msg.contains("## User preferences")
            && msg.contains("## What's in Memory"),
        "{msg}"
    );

    // The v1 dir: v2 can never be the default.
    fs::create_dir_all(
        s.h.codex()
            .join("memories/extensions/external_agent_import"),
    )
    .unwrap();
    let (r, _) = s.run(&["doctor"]);
    let v1 = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "codex.v1_dir")
        .unwrap_or_else(|| panic!("{r}"));
    assert!(
        v1["message"]
            .as_str()
            .unwrap()
            .contains("v2 can never become the default")
    );
    assert!(
        v1["fix"].as_str().unwrap().contains("version = \\\"v2\\\"")
            || v1["fix"].as_str().unwrap().contains("version = \"v2\"")
    );

    // A held lock is reported as running, not stale.
    let lock = fs::File::create(s.h.codex().join("memories_v2.lock")).unwrap();
    lock.lock().unwrap();
    let (r, _) = s.run(&["doctor"]);
    assert!(r["checks"].to_string().contains("is held now"), "{r}");
}

#[test]
fn doctor_reports_cairn_hook_trust() {
    let s = Seed::new(None);
    let cfg = s.h.codex().join("config.toml");
    let trusted = cairn_interop::hook_trust::hook_hash(
        "Stop",
        None,
        "cairn hook --agent codex",
        Some(30),
        false,
        None,
    );
    fs::write(
        &cfg,
        format!(
            "[features]\nmemories = true\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"cairn hook --agent codex\"\ntimeout = 30\n\n[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\ncommand = \"cairn hook --agent codex\"\n\n[hooks.state.\"{k}:stop:0:0\"]\ntrusted_hash = \"{trusted}\"\n",
            k = cfg.display()
        ),
    )
    .unwrap();
    let (r, _) = s.run(&["doctor"]);
    let hooks: Vec<&Value> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "codex.hooks")
        .collect();
    assert_eq!(hooks.len(), 2, "{r}");
    assert!(
        hooks
            .iter()
            .any(|c| c["status"] == "ok" && c["message"].as_str().unwrap().contains("Stop"))
    );
    let untrusted = hooks.iter().find(|c| c["status"] == "warn").unwrap();
    assert!(
        untrusted["message"]
            .as_str()
            .unwrap()
            .contains("SessionStart")
    );
    assert!(untrusted["fix"].as_str().unwrap().contains("/hooks"));

    // cairn's Stop hook also in hooks.json, from a binary not named cairn: recognised, and
    // the event that now runs twice is named.
    fs::write(
        s.h.codex().join("hooks.json"),
        serde_json::json!({"hooks": {"Stop": [{"hooks": [
            {"type": "command", "command": "/opt/tools/mytool --data-dir /d hook --agent codex"}
        ]}]}})
        .to_string(),
    )
    .unwrap();
    let (r, _) = s.run(&["doctor"]);
    let twice: Vec<&Value> = r["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "codex.hooks" && c["message"].as_str().unwrap().contains("2 times"))
        .collect();
    assert_eq!(twice.len(), 1, "{r}");
    assert!(twice[0]["message"].as_str().unwrap().contains("Stop"));
}

/// The export cut titles (60/100 characters) before redacting them, so a token cut
/// short was no longer recognised and its first 33 characters reached `MEMORY.md` and a
/// topic file's `name:`; a note's first line was cut at 100 the same way.
#[test]
fn export_redacts_secrets_before_cutting_titles_and_notes() {
    let s = Seed::new(Some(MEMORIES_ON));
    let w = s.h.codex().join("memories_v2");
    fs::create_dir_all(w.join("rollout_summaries")).unwrap();
    fs::create_dir_all(w.join("extensions/ad_hoc/notes")).unwrap();
    let token = "ghp_abcdefghijklmnopqrstuvwxyz0123456789";
    fs::write(
        w.join("rollout_summaries/2026-11-24T10-15-02-Tk9x-tok.md"),
        format!(
            "thread_id: t9\nupdated_at: 2026-11-24T10:40:11Z\nrollout_path: /x.jsonl\ncwd: {}\n\n# Set GH {token} and AKIAIOSFODNN7EXAMPLE\n\nbody\n",
            s.app_a.display()
        ),
    )
    .unwrap();
    // The note's first line is cut at 100 characters, in the middle of the token.
    fs::write(
        w.join("extensions/ad_hoc/notes/2026-11-21T09-30-00-gh-token.md"),
        format!(
            "remember for staging deploys {} {token} AKIAIOSFODNN7EXAMPLE\n",
            "x".repeat(55)
        ),
    )
    .unwrap();
    let (r, out) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project(&r, &s.key_a)["status"], "exported", "{r}");
    let mem_a = s.source(&s.key_a);
    let index = fs::read_to_string(mem_a.join("MEMORY.md")).unwrap();
    assert!(index.contains("REDACTED:github-token"), "{index}");
    assert!(
        index.contains("codex_feedback_note_2026_11_21t09_30_00_gh_token.md"),
        "{index}"
    );
    for (p, bytes) in all_bytes_under(&s.h.claude()) {
        let text = String::from_utf8_lossy(&bytes);
        for frag in ["ghp_", "AKIA", "abcdefghijklmnop"] {
            assert!(
                !text.contains(frag) && !p.to_string_lossy().contains(frag),
                "{frag} leaked into {}:\n{text}",
                p.display()
            );
        }
    }
}

/// A killed export left `.<name>.cairn-tmp-…` files in the user's Claude Code memory
/// dir for good. The next export removes its own stale temp files (nothing else) and
/// `doctor` reports them until then.
#[test]
fn export_removes_the_temp_files_a_killed_export_left() {
    let s = Seed::new(Some(MEMORIES_ON));
    codex_fixtures(&s.h);
    let (_, out) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let mem_a = s.source(&s.key_a);
    let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
    let stale = ".codex_feedback_preferences.md.cairn-tmp-4242-3-0badcafe";
    let young = ".codex_user_profile_2.md.cairn-tmp-4242-4-0badcafe";
    let users = [
        ".notes.md.cairn-tmp-mine",
        "notes.md.cairn-tmp-4242-3-0badcafe",
        ".notes.md.cairn-tmp-4242-3-0badcafe.bak",
    ];
    for name in [stale, young].iter().chain(&users) {
        let f = fs::File::create(mem_a.join(name)).unwrap();
        if *name != young {
            f.set_modified(old).unwrap();
        }
    }

    let (d, _) = s.run(&["doctor"]);
    let temps: Vec<&Value> = d["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "claude.export_temp")
        .collect();
    assert_eq!(temps.len(), 1, "{d}");
    let msg = temps[0]["message"].as_str().unwrap();
    assert!(msg.contains(stale) && !msg.contains(young), "{msg}");

    let (r, out) = s.run(&["import", "--from", "codex", "--to", "claude", "--dry-run"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        r.to_string().contains(stale),
        "a dry run lists the removal: {r}"
    );
    assert!(mem_a.join(stale).exists());

    let (r, out) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project(&r, &s.key_a)["cleaned"][0], stale, "{r}");
    assert!(
        r["warnings"].to_string().contains("interrupted export"),
        "{r}"
    );
    assert!(!mem_a.join(stale).exists());
    assert!(
        mem_a.join(young).exists(),
        "a live writer's temp file is left alone"
    );
    for name in users {
        assert!(mem_a.join(name).exists(), "{name} is the user's");
    }
    let (d, _) = s.run(&["doctor"]);
    assert!(!d.to_string().contains("claude.export_temp"), "{d}");
}

/// A symlinked Claude Code memory dir was reported as "has no memory any more" and
/// `--all` deleted its Codex copy. Not followed (like Codex's importer), but said so, and
/// the copy is kept.
#[test]
fn a_symlinked_memory_dir_is_skipped_and_its_copy_kept() {
    let s = Seed::new(Some(MEMORIES_ON));
    let (_, out) = s.import(&["--project", &s.key_a]);
    assert!(out.status.success(), "{}", stderr(&out));
    let copy = s.resources("memories_v2").join(&s.key_a);
    let before = tree_state(&copy);
    let mem = s.source(&s.key_a);
    let real = s.h.root().join("dotfiles/app-a-memory");
    fs::create_dir_all(real.parent().unwrap()).unwrap();
    fs::rename(&mem, &real).unwrap();
    std::os::unix::fs::symlink(&real, &mem).unwrap();

    let (r, out) = s.import(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    let p = project(&r, &s.key_a);
    assert_eq!(p["status"], "skipped", "{p}");
    let reason = p["reason"].as_str().unwrap();
    assert!(
        reason.contains("symbolic link")
            && reason.contains("not followed")
            && reason.contains("existing copy is kept"),
        "{reason}"
    );
    assert!(!reason.contains("no memory any more"), "{reason}");

    let (r, out) = s.import(&["--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(project(&r, &s.key_a)["status"], "skipped", "{r}");
    assert_eq!(
        tree_state(&copy),
        before,
        "the Codex copy is kept as it was"
    );

    // Selecting it by name fails with the reason, and still deletes nothing.
    let (r, out) = s.import(&["--project", &s.key_a]);
    assert!(!out.status.success());
    assert!(
        project(&r, &s.key_a)["hint"]
            .as_str()
            .unwrap()
            .contains("symbolic link"),
        "{r}"
    );
    assert_eq!(tree_state(&copy), before);

    let (d, _) = s.run(&["doctor"]);
    assert!(d.to_string().contains("claude.memory_symlink"), "{d}");
}

/// Codex memory exported into a Claude Code project that had none was imported back
/// into Codex's resources as if it were Claude Code memory. Such a project is no source.
#[test]
fn a_project_holding_only_codex_exports_is_not_imported_back() {
    let s = Seed::new(Some(MEMORIES_ON));
    let app_d = s.h.root().join("work/app-d");
    fs::create_dir_all(&app_d).unwrap();
    let w = s.h.codex().join("memories_v2/rollout_summaries");
    fs::create_dir_all(&w).unwrap();
    fs::write(
        w.join("2026-11-24T10-15-02-Wb1x-web.md"),
        format!(
            "thread_id: tw\nupdated_at: 2026-11-24T10:40:11Z\nrollout_path: /x.jsonl\ncwd: {}\n\n# Webshop checkout fix\n\nbody\n",
            app_d.display()
        ),
    )
    .unwrap();
    let (_, out) = s.run(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let key_d = key(&app_d);
    assert!(s.source(&key_d).join("MEMORY.md").exists());

    let (r, out) = s.import(&[]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        !r["projects"].to_string().contains(&key_d),
        "not a candidate: {r}"
    );
    let skipped = r["skipped"].to_string();
    assert!(
        skipped.contains("holds only cairn's index") && skipped.contains("exported from Codex"),
        "{skipped}"
    );
    let (_, out) = s.import(&["--all"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!s.resources("memories_v2").join(&key_d).exists());
    assert!(s.resources("memories_v2").join(&s.key_a).exists());
}

/// What cairn wrote into Codex's memory workspace (`[codex] write_workspace`) is its own
/// memory: exporting Codex's memory into Claude Code leaves it out (it would come back as
/// Codex's, beside the memory it came from, with cairn's placeholders as topic files); once
/// Codex rewrites the file, it is Codex's, and is exported.
#[test]
fn what_cairn_wrote_into_codex_memory_is_not_exported_back() {
    let h = TestHome::empty();
    let repo = h.project("shop");
    let cwd = repo.to_str().unwrap();
    fs::create_dir_all(h.codex()).unwrap();
    fs::write(
        h.codex().join("config.toml"),
        "[features]\nmemories = true\n",
    )
    .unwrap();
    fs::create_dir_all(h.data()).unwrap();
    fs::write(
        h.data().join("config.toml"),
        "[codex]\nwrite_workspace = true\n",
    )
    .unwrap();
    let dir = h.claude_project(&repo);
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join("11111111-2222-4333-8444-555555555555.jsonl"),
        claude_prompt(
            "u1",
            cwd,
            "Always squash commits when merging PRs to this repo.",
            "2026-11-20T10:00:00.000Z",
        ) + &claude_reply("a1", cwd, "OK.", "2026-11-20T10:00:05.000Z"),
    )
    .unwrap();
    let r = h.json(&["sync"]);
    assert!(r["consolidate"]["workspace"]["error"].is_null(), "{r}");
    let summary = h.codex().join("memories_v2/memory_summary.md");
    assert!(summary.is_file(), "{r}");
    let out = h.json(&["import", "--from", "codex", "--to", "claude"]);
    let left: Vec<&str> = out["cairn_written"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(
        left.iter().any(|p| p.ends_with("memory_summary.md")),
        "{out}"
    );
    let memory_dir = dir.join("memory");
    let exported: Vec<PathBuf> = fs::read_dir(&memory_dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    assert!(exported.is_empty(), "{exported:?}");
    // Codex's own consolidation rewrites the summary: now it is Codex's memory.
    fs::write(
        &summary,
        format!(
            "v1\n\n## User Profile\nA backend developer.\n\n## User preferences\n- Prefers terse answers.\n\n## General Tips\n- none\n\n## What's in Memory\n\n### {cwd}\n\n#### 2026-11-20\n\n- rollout_summaries/x.md — fixed the build; thread_id=1\n"
        ),
    )
    .unwrap();
    let out = h.json(&["import", "--from", "codex", "--to", "claude"]);
    assert!(out["cairn_written"].as_array().unwrap().is_empty(), "{out}");
    let text: String = fs::read_dir(&memory_dir)
        .unwrap()
        .flatten()
        .map(|e| fs::read_to_string(e.path()).unwrap_or_default())
        .collect();
    assert!(text.contains("Prefers terse answers"), "{text}");
}

/// The task groups cairn writes into Codex's `MEMORY.md` (`[codex] write_workspace`, v1) name
/// each memory as the views do: a description that only repeats the name is not written
/// after it a second time. Held to `tests/golden/codex-task-groups.MEMORY.md` (the home's
/// path written `<HOME>`; `UPDATE_GOLDEN=1` rewrites it after a deliberate format change).
#[test]
fn codex_task_groups_name_each_memory_once() {
    let h = TestHome::empty();
    let repo = h.project("shop");
    fs::create_dir_all(h.codex()).unwrap();
    fs::write(
        h.codex().join("config.toml"),
        "[features]\nmemories = true\n\n[memories]\nversion = \"v1\"\n",
    )
    .unwrap();
    fs::create_dir_all(h.data()).unwrap();
    fs::write(
        h.data().join("config.toml"),
        "[codex]\nwrite_workspace = true\n",
    )
    .unwrap();
    let cwd = repo.to_str().unwrap();
    // One memory per section: within one, the order follows the clock.
    for (text, kind) in [
        ("Never commit to main directly", "feedback"),
        (
            "The staging database resets every night at 02:00 UTC",
            "project",
        ),
    ] {
        h.json(&["remember", text, "--type", kind, "--cwd", cwd]);
    }
    let r = h.json(&["consolidate"]);
    assert!(r["workspace"]["error"].is_null(), "{r}");
    let memory_md = fs::read_to_string(h.codex().join("memories/MEMORY.md")).unwrap();
    let got = memory_md.replace(h.root().to_str().unwrap(), "<HOME>");
    let golden =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden/codex-task-groups.MEMORY.md");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        fs::create_dir_all(golden.parent().unwrap()).unwrap();
        fs::write(&golden, &got).unwrap();
    }
    let want = fs::read_to_string(&golden).unwrap_or_default();
    assert_eq!(
        got, want,
        "MEMORY.md differs from tests/golden/codex-task-groups.MEMORY.md (UPDATE_GOLDEN=1 to accept)"
    );
    assert!(
        !got.contains("Never commit to main directly — Never commit"),
        "{got}"
    );
}

/// A Codex ad-hoc note written in a session in one project (Codex's apply_patch added it
/// while it worked in `mlkit`) is that project's memory: cairn's own store scopes it there,
/// and `import --from codex --to claude` exports it into mlkit's Claude Code memory only, never
/// into another project's (`webapp`) as if it were global; a note no session wrote stays
/// global and goes everywhere. An export made before cairn had read the session (it copied the
/// note into webapp) is put right by the next one.
#[test]
fn a_codex_note_written_in_one_project_is_exported_into_that_project_only() {
    let h = TestHome::empty();
    let mlkit = h.project("mlkit");
    let webapp = h.project("webapp");
    let (ml, web) = (mlkit.to_str().unwrap(), webapp.to_str().unwrap());
    // Claude Code knows webapp: a session and its memory.
    let web_dir = h.claude_project(&webapp);
    fs::create_dir_all(web_dir.join("memory")).unwrap();
    fs::write(
        web_dir.join(format!("{SESSION}.jsonl")),
        claude_prompt("u1", web, "hi", TS) + &claude_reply("a1", web, "Hello.", TS),
    )
    .unwrap();
    fs::write(
        web_dir.join("memory/MEMORY.md"),
        "- [Deploy freeze](deploy_freeze.md) — no deploys on Fridays\n",
    )
    .unwrap();
    fs::write(
        web_dir.join("memory/deploy_freeze.md"),
        "---\nname: Deploy freeze\ndescription: no deploys on Fridays\ntype: project\n---\n\nNo deploys on Fridays.\n",
    )
    .unwrap();
    // Codex: memory for webapp (a task group), a note written in mlkit, a note of the user's.
    let mem = h.codex().join("memories");
    let notes = mem.join("extensions/ad_hoc/notes");
    fs::create_dir_all(&notes).unwrap();
    fs::write(
        h.codex().join("config.toml"),
        "[features]\nmemories = true\n",
    )
    .unwrap();
    fs::write(
        mem.join("MEMORY.md"),
        format!("# Task Group: webapp login fixes\nscope: login view bugs in {web}\napplies_to: cwd={web}; reuse_rule=same repo\n\n## Task 1: fix redirect loop, success\n\n### keywords\ndjango, redirect, login\n"),
    )
    .unwrap();
    let note = notes.join("2026-11-30T10-00-05-black-line-length.md");
    fs::write(
        &note,
        "The user wants black with line length 100 in mlkit.\n",
    )
    .unwrap();
    fs::write(
        notes.join("2026-11-29T09-00-00-terse-answers.md"),
        "Answer tersely, code first.\n",
    )
    .unwrap();
    // The mlkit session in which Codex wrote the note.
    let id = "01a2d000-0000-7000-8000-00000000000a";
    let ts = "2026-11-30T10:00:00.000Z";
    let patch = format!(
        "*** Begin Patch\n*** Add File: {}\n+The user wants black with line length 100 in mlkit.\n*** End Patch",
        note.display()
    );
    let lines = [
        serde_json::json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "task_started", "turn_id": "t-a1"}}),
        serde_json::json!({"timestamp": ts, "type": "turn_context", "payload": {"turn_id": "t-a1", "cwd": ml, "model": "gpt-5-codex"}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "please remember in your memory: black line length is 100 here"}]}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "custom_tool_call", "status": "completed", "call_id": "p1", "name": "apply_patch", "input": patch}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "custom_tool_call_output", "call_id": "p1", "output": serde_json::json!({"output": format!("Success. Updated the following files:\nA {}\n", note.display()), "metadata": {"exit_code": 0}}).to_string()}}),
        serde_json::json!({"timestamp": ts, "type": "response_item", "payload": {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "ok"}]}}),
        serde_json::json!({"timestamp": ts, "type": "event_msg", "payload": {"type": "task_complete", "turn_id": "t-a1", "last_agent_message": "ok"}}),
    ];
    let body: String = lines.iter().map(|l| l.to_string() + "\n").collect();
    fs::write(h.codex_rollout_path(id), codex_meta(id, ml) + &body).unwrap();

    let has_note = |dir: &Path, text: &str| {
        fs::read_dir(dir).is_ok_and(|rd| {
            rd.flatten()
                .any(|e| fs::read_to_string(e.path()).is_ok_and(|t| t.contains(text)))
        })
    };
    let ml_memory = h.claude_project(&mlkit).join("memory");
    let web_memory = web_dir.join("memory");
    // Before cairn has read any session it cannot know where the note was written: global.
    h.json(&["import", "--from", "codex", "--to", "claude"]);
    assert!(has_note(&web_memory, "line length 100"));

    // cairn's own memory has the note under mlkit…
    let r = h.json(&["sync"]);
    assert!(
        r["consolidate"]["problems"]
            .as_array()
            .is_none_or(|p| p.is_empty()),
        "{r}"
    );
    let listed = h.json(&["list", "--scope", "all"]);
    let black: Vec<&Value> = listed["memories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| {
            m["body"]
                .as_str()
                .is_some_and(|b| b.contains("line length 100"))
        })
        .collect();
    assert_eq!(black.len(), 1, "{listed}");
    assert_eq!(black[0]["scope"], ml, "{listed}");
    // …and so does the export: mlkit's Claude Code memory gets it, webapp's copy goes.
    let out = h.json(&["import", "--from", "codex", "--to", "claude"]);
    assert!(has_note(&ml_memory, "line length 100"), "{out}");
    assert!(!has_note(&web_memory, "line length 100"), "{out}");
    let index = fs::read_to_string(web_memory.join("MEMORY.md")).unwrap();
    assert!(!index.contains("black line length"), "{index}");
    assert!(
        index.contains("- [Deploy freeze](deploy_freeze.md)"),
        "{index}"
    );
    // The global note and webapp's own Codex memory are where they were.
    assert!(has_note(&web_memory, "Answer tersely"));
    assert!(has_note(&ml_memory, "Answer tersely"));
    assert!(has_note(&web_memory, "login view bugs"));
    assert!(!has_note(&ml_memory, "login view bugs"));
    // The note names where it was written.
    assert!(has_note(&ml_memory, &format!("in a Codex session in {ml}")));
    // Narrowed to webapp, the mlkit note is not exported there either.
    let only = h.json(&[
        "import",
        "--from",
        "codex",
        "--to",
        "claude",
        "--project",
        web,
    ]);
    assert!(!has_note(&web_memory, "line length 100"), "{only}");
}
