//! Paths and permissions: hostile project keys and memory names, symlinks inside memory dirs,
//! at the roots cairn writes to and swapped in during an import, a memo file that links out of
//! the repository, a repository's own settings pointing the memory dir at a fake `~/.ssh`; and
//! the modes of everything cairn creates (0600 files, 0700 dirs) or edits (kept).

mod common;

use std::fs;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use common::*;
use serde_json::{Value, json};

const SID: &str = "11111111-2222-4333-8444-555555555555";

fn mode(p: &Path) -> u32 {
    fs::symlink_metadata(p).unwrap().permissions().mode() & 0o777
}

/// A directory outside every tree cairn may write to, with a file in it.
fn outside(h: &TestHome, name: &str) -> PathBuf {
    let d = h.root().join("outside").join(name);
    fs::create_dir_all(&d).unwrap();
    fs::write(d.join("keep.txt"), "OUTSIDE-MARKER do not touch\n").unwrap();
    d
}

/// A Codex memory workspace with a route for `cwd` (exported to Claude Code by
/// `cairn import --from codex --to claude`).
fn codex_memory_for(h: &TestHome, cwd: &str) {
    let m = h.codex().join("memories_v2");
    fs::create_dir_all(m.join("rollout_summaries")).unwrap();
    fs::write(
        m.join("memory_summary.md"),
        format!("v1\n\n## User Profile\n\nMika keeps notes short.\n\n## User preferences\n\n- use pnpm, not npm\n\n## General Tips\n\n- run one test first\n\n## What's in Memory\n\n### {cwd}\n\n#### 2026-11-20\n\n- rollout_summaries/2026-11-20T10-15-02-Ab3x-fix.md — fixed the flaky test; thread_id=0192f3a4-1b2c-7d3e-8f40-123456789abc\n  - keywords: vitest\n- rollout_summaries/../../../outside/route/keep.txt — a route out of the workspace; thread_id=0192f3a4-1b2c-7d3e-8f40-123456789abd\n"),
    )
    .unwrap();
    fs::write(
        m.join("rollout_summaries/2026-11-20T10-15-02-Ab3x-fix.md"),
        format!("thread_id: 0192f3a4-1b2c-7d3e-8f40-123456789abc\nupdated_at: 2026-11-20T10:40:11+00:00\nrollout_path: /x.jsonl\ncwd: {cwd}\n\n# Fixed the flaky vitest run.\n\nRollout context: CI.\n"),
    )
    .unwrap();
}

fn claude_memory(h: &TestHome, proj: &Path) -> PathBuf {
    let dir = h.claude_project(proj).join("memory");
    fs::create_dir_all(&dir).unwrap();
    let cwd = proj.to_str().unwrap();
    fs::write(
        h.claude_project(proj).join(format!("{SID}.jsonl")),
        claude_prompt("u1", cwd, "hi", "2026-11-25T14:00:00.000Z")
            + &claude_reply("u2", cwd, "Hello.", "2026-11-25T14:00:01.000Z"),
    )
    .unwrap();
    fs::write(
        dir.join("MEMORY.md"),
        "- [Build](build.md) — how to build\n",
    )
    .unwrap();
    fs::write(
        dir.join("build.md"),
        "---\nname: Build\ndescription: how to build\ntype: project\n---\n\nRun make.\n",
    )
    .unwrap();
    dir
}

#[test]
fn a_repository_settings_file_never_moves_the_memory_dir() {
    let h = TestHome::empty();
    let proj = h.project("evil-repo");
    claude_memory(&h, &proj);
    // A fake ~/.ssh, and the repository's own settings pointing auto memory at it.
    let ssh = h.root().join(".ssh");
    fs::create_dir_all(&ssh).unwrap();
    fs::write(ssh.join("id_ed25519"), "FAKE-SSH-KEY-MARKER\n").unwrap();
    fs::write(
        ssh.join("MEMORY.md"),
        "- [Key](id_ed25519) — FAKE-SSH-INDEX-MARKER\n",
    )
    .unwrap();
    let before = tree_state(&ssh);
    fs::create_dir_all(proj.join(".claude")).unwrap();
    for f in ["settings.json", "settings.local.json"] {
        fs::write(
            proj.join(".claude").join(f),
            json!({"autoMemoryDirectory": ssh.to_str().unwrap()}).to_string(),
        )
        .unwrap();
    }
    codex_memory_for(&h, proj.to_str().unwrap());
    let scan = h.json(&["scan"]);
    let exp = h.json(&["import", "--from", "codex", "--to", "claude"]);
    let imp = h.json(&["import", "--from", "claude", "--to", "codex", "--all"]);
    let sync = h.json(&["sync"]);
    assert_eq!(tree_state(&ssh), before, "the fake ~/.ssh was written");
    for v in [&scan, &exp, &imp, &sync] {
        assert!(
            !v.to_string().contains("/.ssh"),
            "a repository setting was honoured: {v}"
        );
    }
    // The export went to the project's own memory dir; nothing of ~/.ssh was read anywhere.
    assert!(
        fs::read_to_string(h.claude_project(&proj).join("memory/MEMORY.md"))
            .unwrap()
            .contains("cairn:codex begin")
    );
    for dir in [h.data(), h.codex()] {
        for (p, b) in all_bytes_under(&dir) {
            let t = String::from_utf8_lossy(&b);
            assert!(
                !t.contains("FAKE-SSH-KEY-MARKER") && !t.contains("FAKE-SSH-INDEX-MARKER"),
                "{} holds ~/.ssh content",
                p.display()
            );
        }
    }
}

/// `~` in a directory given unexpanded (`CAIRN_HOME='~/.cairn'`, `--data-dir=~/x`) is the home
/// directory, as in a shell: never a directory named `~` in the current one (a project).
#[test]
fn a_tilde_in_a_given_directory_is_the_home() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    let run = |args: &[&str], env: &[(&str, &str)]| {
        let out = h
            .bare_command()
            .args(args)
            .current_dir(&proj)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    run(
        &["remember", "Use pnpm, not npm."],
        &[("CAIRN_HOME", "~/.cairn-env")],
    );
    run(
        &["--data-dir=~/.cairn-flag", "remember", "Use pnpm, not npm."],
        &[],
    );
    assert!(h.root().join(".cairn-env/cairn.db").is_file());
    assert!(h.root().join(".cairn-flag/cairn.db").is_file());
    assert!(
        !proj.join("~").exists(),
        "a directory named ~ in the project"
    );
}

/// With `$HOME` unset (a service, a bare container), the commands that only need cairn's data
/// dir run with it given; the ones that read an agent's files say which directory to pass.
#[test]
fn without_a_home_only_the_directories_a_command_needs_are_asked_for() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    let data = h.root().join("data");
    let data = data.to_str().unwrap();
    let run = |args: &[&str]| {
        let out = h
            .bare_command()
            .env_remove("HOME")
            .env_remove("CAIRN_HOME")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("CODEX_HOME")
            .args(args)
            .current_dir(&proj)
            .output()
            .unwrap();
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    let (code, err, _) = run(&["--data-dir", data, "remember", "Use pnpm, not npm."]);
    assert_eq!(code, Some(0), "{err}");
    let (code, err, out) = run(&["--data-dir", data, "recall", "package manager", "--json"]);
    assert_eq!(code, Some(0), "{err}");
    assert!(out.contains("pnpm"), "{out}");
    for args in [
        &["--data-dir", data, "list"][..],
        &["--data-dir", data, "status"],
    ] {
        let (code, err, _) = run(args);
        assert_eq!(code, Some(0), "{args:?}: {err}");
    }
    let (code, err, _) = run(&["--data-dir", data, "sync"]);
    assert_ne!(code, Some(0), "{err}");
    assert!(
        err.contains("$HOME is not set") && err.contains("CLAUDE_CONFIG_DIR"),
        "{err}"
    );
    let (code, err, _) = run(&["recall", "x"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(
        err.contains("cannot locate .cairn") && err.contains("CAIRN_HOME"),
        "{err}"
    );
}

#[test]
fn routes_and_names_cannot_leave_their_trees() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    let cwd = proj.to_str().unwrap();
    claude_memory(&h, &proj);
    // The Codex summary routes to `rollout_summaries/../../../outside/route/keep.txt`.
    let out = outside(&h, "route");
    codex_memory_for(&h, cwd);
    let r = h.json(&["import", "--from", "codex", "--to", "claude"]);
    for (p, b) in all_bytes_under(&h.claude()) {
        assert!(
            !String::from_utf8_lossy(&b).contains("OUTSIDE-MARKER"),
            "{} holds a file read out of the Codex workspace ({r})",
            p.display()
        );
    }
    let _ = out;

    // Memory names from hostile text: the view files stay inside cairn's memory dir.
    let long = "x".repeat(5000);
    let texts = [
        "../../../../outside/escape remember this",
        "/etc/passwd is where users live",
        "..",
        "a/b/c/../../d note",
        "記憶 🚀 ユニコード のメモ",
        "\\..\\..\\windows style",
        long.as_str(),
    ];
    for t in texts {
        let m = h.json(&["remember", t, "--type", "reference", "--cwd", cwd]);
        assert!(m["id"].is_string(), "{m}");
    }
    // Through MCP a name can even carry NUL and control characters.
    let mut child = h.cairn_spawn(&["mcp"], &proj);
    {
        use std::io::{BufRead, BufReader, Write};
        let mut stdin = child.stdin.take().unwrap();
        let mut rd = BufReader::new(child.stdout.take().unwrap());
        for (i, msg) in [
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}),
            json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_remember","arguments":{"text":"nul\u{0}byte ../../x \u{1b}[31m name","type":"reference"}}}),
        ]
        .iter()
        .enumerate()
        {
            writeln!(stdin, "{msg}").unwrap();
            let mut line = String::new();
            rd.read_line(&mut line).unwrap();
            let v: Value = serde_json::from_str(&line).unwrap();
            assert_eq!(v["id"], i + 1, "{v}");
        }
        drop(stdin);
        assert!(child.wait().unwrap().success());
    }
    let views = h.data().join("memory");
    let mut count = 0;
    for e in walk(&views) {
        let name = e.file_name().unwrap().to_string_lossy().into_owned();
        assert!(name.len() <= 255, "{name}");
        assert!(!name.contains('\0') && !name.starts_with(".."), "{name}");
        assert!(e.starts_with(&views));
        count += 1;
    }
    assert!(count > texts.len(), "{count} view files");
    assert!(!h.root().join("outside/escape").exists());
    assert!(
        walk(&h.root().join("outside"))
            .iter()
            .all(|p| p.ends_with("keep.txt"))
    );

    // Import keys with NUL-free but hostile shapes are refused (`..`, `/`, absolute paths are
    // covered by interop.rs); very long and Unicode keys are just unknown projects.
    for key in ["x".repeat(300), "プロジェクト".to_string()] {
        let out = h.cairn(&[
            "import",
            "--from",
            "claude",
            "--to",
            "codex",
            "--project",
            &key,
            "--json",
        ]);
        let text = String::from_utf8_lossy(&out.stdout).into_owned()
            + &String::from_utf8_lossy(&out.stderr);
        assert!(!text.contains("panicked"), "{text}");
    }
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            match e.file_type() {
                Ok(t) if t.is_dir() => stack.push(p),
                _ => out.push(p),
            }
        }
    }
    out
}

/// A Claude Code turn that edits a file (so the Stop hook records it).
fn changing_turn(cwd: &str, n: usize) -> String {
    let u = |s: &str| format!("m{n}-{s}");
    claude_prompt(
        &u("p"),
        cwd,
        &format!("fix bug {n}"),
        "2026-11-25T14:00:00.000Z",
    ) + &claude_tool_use(
        &u("a"),
        cwd,
        &u("t"),
        "Edit",
        json!({"file_path": format!("{cwd}/src/a.rs"), "old_string": "a", "new_string": "b"}),
    ) + &claude_tool_result(&u("r"), cwd, &u("t"), "ok", false)
        + &claude_reply(&u("z"), cwd, "Fixed.", "2026-11-25T14:00:05.000Z")
}

fn stop(h: &TestHome, proj: &Path, n: usize) -> Value {
    let cwd = proj.to_str().unwrap();
    let t = h.claude_project(proj).join(format!("{SID}.jsonl"));
    fs::create_dir_all(t.parent().unwrap()).unwrap();
    append(&t, changing_turn(cwd, n).as_bytes());
    let input = hook_payload(
        "claude-stop.json",
        &[
            ("SESSION", SID),
            ("TRANSCRIPT", t.to_str().unwrap()),
            ("CWD", cwd),
            ("LAST", "Fixed."),
        ],
    );
    let out = h.cairn_input(&["hook", "--agent", "claude"], &input, &[]);
    assert!(out.status.success());
    h.wait_for_worker()
}

#[test]
fn a_memo_file_linked_out_of_the_repository_is_neither_read_nor_written() {
    let h = TestHome::empty();
    fs::create_dir_all(h.data()).unwrap();
    fs::write(
        h.data().join("config.toml"),
        "[memo]\nenabled = true\npath = \"docs/memo.md\"\n[worker]\nmax_attempts = 1\n",
    )
    .unwrap();
    // The memo file itself is a link (a repository pointing it at ~/.bashrc)...
    let proj = h.project("linked-memo");
    let out = outside(&h, "memo");
    fs::create_dir_all(proj.join("docs")).unwrap();
    symlink(out.join("keep.txt"), proj.join("docs/memo.md")).unwrap();
    let before = tree_state(&out);
    let st = stop(&h, &proj, 1);
    assert_eq!(tree_state(&out), before);
    assert!(
        fs::symlink_metadata(proj.join("docs/memo.md"))
            .unwrap()
            .file_type()
            .is_symlink(),
        "the link was replaced"
    );
    assert!(!st.to_string().contains("OUTSIDE-MARKER"), "{st}");
    assert!(
        st["jobs"]["failed"].as_u64().unwrap() >= 1,
        "not reported: {st}"
    );

    // ...or a directory on its way is.
    let proj2 = h.project("linked-dir");
    let out2 = outside(&h, "memo-dir");
    symlink(&out2, proj2.join("docs")).unwrap();
    let before = tree_state(&out2);
    stop(&h, &proj2, 2);
    assert_eq!(
        tree_state(&out2),
        before,
        "written through a linked directory"
    );
}

#[test]
fn symlinks_in_memory_dirs_and_at_export_targets_are_not_followed() {
    let h = TestHome::empty();
    let proj = h.project("shop");
    let cwd = proj.to_str().unwrap();
    let mem = claude_memory(&h, &proj);
    // A link inside the memory dir to a secret outside: never imported or extracted.
    let out = outside(&h, "inside-link");
    symlink(out.join("keep.txt"), mem.join("secret.md")).unwrap();
    symlink(&out, mem.join("linked-dir")).unwrap();
    fs::create_dir_all(h.codex()).unwrap();
    h.json(&["import", "--from", "claude", "--to", "codex", "--all"]);
    h.json(&["sync"]);
    for dir in [h.data(), h.codex()] {
        for (p, b) in all_bytes_under(&dir) {
            assert!(
                !String::from_utf8_lossy(&b).contains("OUTSIDE-MARKER"),
                "{} holds a linked file",
                p.display()
            );
        }
    }
    // Export into a memory dir that is itself a link out: refused, the outside untouched.
    let out2 = outside(&h, "export-target");
    let before = tree_state(&out2);
    fs::remove_dir_all(&mem).unwrap();
    symlink(&out2, &mem).unwrap();
    codex_memory_for(&h, cwd);
    let o = h.cairn(&["import", "--from", "codex", "--to", "claude", "--json"]);
    assert_eq!(
        tree_state(&out2),
        before,
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    // cairn's own views: a scope dir replaced by a link is not written through.
    h.json(&["remember", "use pnpm, not npm", "--cwd", cwd]);
    let views = h.data().join("memory");
    let scope = fs::read_dir(&views)
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p.is_dir() && p.file_name().unwrap().to_string_lossy().starts_with("shop"))
        .expect("scope view dir");
    let out3 = outside(&h, "views");
    let before = tree_state(&out3);
    fs::remove_dir_all(&scope).unwrap();
    symlink(&out3, &scope).unwrap();
    let _ = h.cairn(&[
        "remember",
        "always run the single failing test first",
        "--cwd",
        cwd,
    ]);
    let _ = h.cairn(&["sync"]);
    assert_eq!(tree_state(&out3), before, "views written through a link");
}

/// A thread that swaps each of `targets` in turn for a link to `out` and back, as fast as it
/// can, until [`LinkSwapper::finish`].
struct LinkSwapper {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    handle: std::thread::JoinHandle<()>,
}

impl LinkSwapper {
    fn start(targets: Vec<PathBuf>, out: PathBuf) -> Self {
        let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let flag = stop.clone();
        let handle = std::thread::spawn(move || {
            let mut i = 0usize;
            while !flag.load(std::sync::atomic::Ordering::Relaxed) {
                let t = &targets[i % targets.len()];
                let aside = t.with_extension("aside");
                if fs::rename(t, &aside).is_ok() {
                    let _ = symlink(&out, t);
                    std::thread::sleep(std::time::Duration::from_millis(2));
                    let _ = fs::remove_file(t);
                    let _ = fs::rename(&aside, t);
                }
                i += 1;
                std::thread::sleep(std::time::Duration::from_millis(1));
            }
        });
        Self { stop, handle }
    }

    fn finish(self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        self.handle.join().unwrap();
    }
}

/// Runs cairn, asserts it did not panic, and says whether it succeeded.
fn succeeds_without_panic(h: &TestHome, args: &[&str]) -> bool {
    let o = h.cairn(args);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains("panicked"), "cairn {args:?}: {stderr}");
    o.status.success()
}

#[test]
fn a_symlink_swapped_in_during_imports_is_never_followed() {
    let h = TestHome::empty();
    let proj = h.project("race");
    claude_memory(&h, &proj);
    fs::create_dir_all(h.codex()).unwrap();
    fs::write(
        h.codex().join("config.toml"),
        "[features]\nmemories = true\n",
    )
    .unwrap();
    let out = outside(&h, "race");
    let before = tree_state(&out);
    let key = cairn_transcript::claude_project_key(proj.to_str().unwrap());
    let res = h
        .codex()
        .join("memories_v2/extensions/external_agent_import/resources");
    // The project's copy, the resources dir and the workspace root, swapped while imports run.
    let swapper = LinkSwapper::start(
        vec![res.join(&key), res.clone(), h.codex().join("memories_v2")],
        out.clone(),
    );
    let mut ok = 0;
    for i in 0..30 {
        fs::write(
            h.claude_project(&proj).join("memory/build.md"),
            format!(
                "---\nname: Build\ndescription: how to build\ntype: project\n---\n\nRun make {i}.\n"
            ),
        )
        .unwrap();
        ok += usize::from(succeeds_without_panic(
            &h,
            &[
                "import", "--from", "claude", "--to", "codex", "--all", "--json",
            ],
        ));
    }
    swapper.finish();
    assert_eq!(
        tree_state(&out),
        before,
        "written through a swapped-in link"
    );
    eprintln!("swapped-link race: {ok}/30 imports succeeded, the outside dir untouched");
}

/// The same race on the other direction: Claude Code's project memory dir (and the project
/// dir above it) swapped for a link out while `cairn import --from codex --to claude` writes
/// topic files and the index there.
#[test]
fn a_symlink_swapped_in_during_exports_is_never_followed() {
    let h = TestHome::empty();
    let proj = h.project("race-out");
    let cwd = proj.to_str().unwrap();
    let mem = claude_memory(&h, &proj);
    let project_dir = h.claude_project(&proj);
    let out = outside(&h, "race-out");
    let before = tree_state(&out);
    let swapper = LinkSwapper::start(vec![mem.clone(), project_dir.clone()], out.clone());
    let mut ok = 0;
    for i in 0..30 {
        // A new route each round, so that every export has files to write.
        let _ = fs::remove_dir_all(h.codex().join("memories_v2"));
        codex_memory_for(&h, cwd);
        fs::write(
            h.codex().join("memories_v2/memory_summary.md"),
            format!("v1\n\n## User preferences\n\n- round {i}: keep commits small\n"),
        )
        .unwrap();
        ok += usize::from(succeeds_without_panic(
            &h,
            &["import", "--from", "codex", "--to", "claude", "--json"],
        ));
    }
    swapper.finish();
    assert_eq!(
        tree_state(&out),
        before,
        "written through a swapped-in link"
    );
    eprintln!("swapped-link export race: {ok}/30 exports succeeded, the outside dir untouched");
}

#[test]
fn files_cairn_creates_are_private_and_agents_files_keep_their_mode() {
    let h = TestHome::sample();
    let proj = h.root().join("work/webshop");
    fs::create_dir_all(h.data()).unwrap();
    fs::write(h.data().join("config.toml"), "[memo]\nenabled = true\n").unwrap();
    fs::set_permissions(h.data(), fs::Permissions::from_mode(0o755)).unwrap();
    // The agents' own files, with modes cairn must keep.
    let settings = h.claude().join("settings.json");
    if !settings.exists() {
        fs::write(&settings, "{}\n").unwrap();
    }
    fs::set_permissions(&settings, fs::Permissions::from_mode(0o640)).unwrap();
    fs::create_dir_all(h.codex()).unwrap();
    let cfg = h.codex().join("config.toml");
    fs::write(&cfg, "[features]\nmemories = true\n").unwrap();
    fs::set_permissions(&cfg, fs::Permissions::from_mode(0o644)).unwrap();
    let mem = claude_memory(&h, &proj);
    fs::set_permissions(mem.join("MEMORY.md"), fs::Permissions::from_mode(0o664)).unwrap();
    codex_memory_for(&h, proj.to_str().unwrap());

    h.json(&["sync"]);
    stop(&h, &proj, 1);
    h.json(&[
        "remember",
        "use pnpm, not npm",
        "--cwd",
        proj.to_str().unwrap(),
    ]);
    h.json(&["install", "claude"]);
    h.json(&["install", "codex"]);
    h.json(&["import", "--from", "codex", "--to", "claude"]);
    h.json(&["import", "--from", "claude", "--to", "codex", "--all"]);
    h.json(&["status"]);

    let mut bad = Vec::new();
    let mut seen = Vec::new();
    // The data dir existed with 0755 (the user made it): cairn leaves its mode alone.
    for p in walk_all(&h.data()) {
        let m = fs::symlink_metadata(&p).unwrap();
        let want = if m.is_dir() { 0o700 } else { 0o600 };
        let name = p.strip_prefix(h.data()).unwrap().display().to_string();
        if p.ends_with("config.toml") {
            continue; // the user's own file
        }
        seen.push(name.clone());
        if mode(&p) != want {
            bad.push(format!("{name}: {:o}", mode(&p)));
        }
    }
    assert!(bad.is_empty(), "not private: {bad:?}");
    for want in [
        "cairn.db",
        "cairn.log",
        "worker.lock",
        "memory",
        "install.json",
    ] {
        assert!(
            seen.iter().any(|s| s.starts_with(want)),
            "{want} not created: {seen:?}"
        );
    }
    // The memo journal cairn created in the repository.
    let memo = proj.join("memo.md");
    assert_eq!(mode(&memo), 0o600, "memo.md");
    // The agents' own files keep their modes after install and export.
    assert_eq!(mode(&settings), 0o640);
    assert_eq!(mode(&cfg), 0o644);
    assert_eq!(mode(&mem.join("MEMORY.md")), 0o664);
    // A fresh data dir is created private.
    let h2 = TestHome::empty();
    h2.json(&[
        "remember",
        "use pnpm, not npm",
        "--cwd",
        h2.root().to_str().unwrap(),
    ]);
    assert_eq!(mode(&h2.data()), 0o700);
    eprintln!("private: {} entries checked: {seen:?}", seen.len());
}

fn walk_all(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            if e.file_type().is_ok_and(|t| t.is_dir()) {
                stack.push(p.clone());
            }
            out.push(p);
        }
    }
    out
}

/// The effective user id (`id -u`).
fn euid() -> Option<u32> {
    let out = std::process::Command::new("id").arg("-u").output().ok()?;
    String::from_utf8(out.stdout).ok()?.trim().parse().ok()
}

#[test]
fn an_unreadable_project_dir_is_named_by_scan_doctor_and_sync_once() {
    const NOBODY: u32 = 65534;
    let h = TestHome::empty();
    for name in ["infra", "shop"] {
        let proj = h.project(name);
        let dir = h.claude_project(&proj);
        fs::create_dir_all(&dir).unwrap();
        let cwd = proj.to_str().unwrap();
        fs::write(
            dir.join(format!("{SID}.jsonl")),
            claude_prompt(
                "u-1",
                cwd,
                "where is the config?",
                "2026-11-25T14:00:00.000Z",
            ) + &claude_reply("u-2", cwd, "In config.toml.", "2026-11-25T14:00:05.000Z"),
        )
        .unwrap();
    }
    let locked = h.claude_project(&h.project("infra"));
    // Root reads through chmod 000: run cairn as nobody (through setpriv) then, or skip.
    let as_root = euid() == Some(0);
    let bin = env!("CARGO_BIN_EXE_cairn");
    let run = |args: &[&str]| -> std::process::Output {
        let mut cmd = if as_root {
            let mut c = std::process::Command::new("setpriv");
            c.args([
                format!("--reuid={NOBODY}"),
                format!("--regid={NOBODY}"),
                "--clear-groups".to_owned(),
            ])
            .arg(bin);
            c
        } else {
            std::process::Command::new(bin)
        };
        h.roots(&mut cmd).args(args).output().expect("run cairn")
    };
    if as_root {
        // The home must be readable by nobody (the temp dir is 0700), the data dir writable.
        let mut dirs = vec![h.root()];
        dirs.extend(walk_all(&h.root()).into_iter().filter(|p| p.is_dir()));
        for d in &dirs {
            fs::set_permissions(d, fs::Permissions::from_mode(0o755)).unwrap();
        }
        fs::create_dir_all(h.data()).unwrap();
        std::os::unix::fs::chown(h.data(), Some(NOBODY), Some(NOBODY)).unwrap();
        if !run(&["scan", "--json"]).status.success() {
            eprintln!("skipped: cannot run cairn as nobody through setpriv");
            return;
        }
    }
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o000)).unwrap();
    let locked_s = locked.display().to_string();
    let parse = |out: &std::process::Output| -> Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "bad JSON ({e}): {} {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };

    // scan: an error with the reason, and the project is not blamed on cleanupPeriodDays.
    let scan = parse(&run(&["scan", "--json"]));
    let errors = scan["errors"].as_array().unwrap();
    let mine: Vec<&Value> = errors.iter().filter(|e| e["path"] == locked_s).collect();
    assert_eq!(mine.len(), 1, "{scan}");
    assert_eq!(
        mine[0]["message"],
        format!("cannot read {locked_s}: permission denied"),
        "{scan}"
    );
    let p = scan["claude"]["projects"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| locked_s.ends_with(p["key"].as_str().unwrap()))
        .unwrap_or_else(|| panic!("{scan}"))
        .clone();
    let reason = p["reason"].as_str().unwrap_or_default();
    assert!(reason.contains("permission denied"), "{p}");
    assert!(!reason.contains("cleanupPeriodDays"), "{p}");
    let human = String::from_utf8(run(&["scan"]).stdout).unwrap();
    assert!(
        human.contains("1 problem(s):")
            && human.contains(&format!("cannot read {locked_s}: permission denied")),
        "{human}"
    );

    // doctor: an error that names the directory and the fix.
    let out = run(&["doctor", "--json"]);
    assert!(!out.status.success());
    let doc = parse(&out);
    let check = doc["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "claude.unreadable")
        .unwrap_or_else(|| panic!("{doc}"))
        .clone();
    assert_eq!(check["status"], "error", "{check}");
    assert!(
        check["message"]
            .as_str()
            .unwrap()
            .starts_with(&format!("cannot read {locked_s}: permission denied")),
        "{check}"
    );
    assert!(doc["errors"].as_u64().unwrap() >= 1, "{doc}");

    // sync: reported once (scan and ingest meet the same directory), the other project kept.
    let out = run(&["sync", "--json"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sync = parse(&out);
    let count = |v: &Value| {
        v.as_array()
            .map_or(0, |a| a.iter().filter(|e| e["path"] == locked_s).count())
    };
    assert_eq!(
        count(&sync["scan"]["errors"]) + count(&sync["ingest"]["errors"]),
        1,
        "{sync}"
    );
    assert_eq!(sync["ingest"]["turns"], 1, "{sync}");
    fs::set_permissions(&locked, fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `cairn ARGS --json` with the home's roots under `umask`, as a user's shell starts it.
fn json_with_umask(h: &TestHome, umask: &str, args: &[&str]) -> Value {
    let mut cmd = std::process::Command::new("sh");
    cmd.arg("-c")
        .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
        .arg(env!("CARGO_BIN_EXE_cairn"));
    h.roots(&mut cmd).args(args).arg("--json");
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What cairn writes into the agents' directories has the modes the agents would give their
/// own files: a file it rewrites keeps its mode (and, as root, its owner and group); what it
/// creates there (Codex's `memories_v2/`, its workspace files, an imported copy, exported topic
/// files, a new `settings.json`) gets the umask's default, as Codex and Claude Code create
/// theirs, under the usual umask 022 and a stricter 027 alike. cairn's own data dir stays
/// private.
#[test]
fn what_cairn_writes_in_the_agents_dirs_has_the_agents_modes() {
    use std::os::unix::fs::MetadataExt;
    for umask in ["022", "027"] {
        let u = u32::from_str_radix(umask, 8).unwrap();
        let (new_file, new_dir) = (0o666 & !u, 0o777 & !u);
        let h = TestHome::empty();
        let proj = h.project("shop");
        let cwd = proj.to_str().unwrap();
        // Claude Code: a project with memory, its index made group-readable only.
        let mem = claude_memory(&h, &proj);
        fs::set_permissions(mem.join("MEMORY.md"), fs::Permissions::from_mode(0o640)).unwrap();
        // Codex: its own v1 workspace (so it resolves v1, and cairn writes both roots).
        let v1 = h.codex().join("memories");
        fs::create_dir_all(&v1).unwrap();
        let cfg = h.codex().join("config.toml");
        fs::write(&cfg, "[features]\nmemories = true\n").unwrap();
        fs::set_permissions(&cfg, fs::Permissions::from_mode(0o640)).unwrap();
        fs::write(
            v1.join("MEMORY.md"),
            format!("# Task Group: shop build\nscope: building shop\napplies_to: cwd={cwd}; reuse_rule=same repo\n\n## Task 1: fix the build, success\n\n### keywords\nbuild, make\n"),
        )
        .unwrap();
        fs::write(
            v1.join("memory_summary.md"),
            format!("v1\n\n## User Profile\n\nMika keeps notes short.\n\n## User preferences\n\n- use pnpm, not npm\n\n## General Tips\n\n- run one test first\n\n## What's in Memory\n\n### {cwd}\n\n- shop build: build, make\n"),
        )
        .unwrap();
        fs::set_permissions(v1.join("MEMORY.md"), fs::Permissions::from_mode(0o644)).unwrap();
        fs::set_permissions(
            v1.join("memory_summary.md"),
            fs::Permissions::from_mode(0o640),
        )
        .unwrap();
        let root = euid() == Some(0);
        if root {
            std::os::unix::fs::chown(v1.join("MEMORY.md"), Some(4242), Some(4343)).unwrap();
        }
        fs::create_dir_all(h.data()).unwrap();
        fs::write(
            h.data().join("config.toml"),
            "[codex]\nwrite_workspace = true\n",
        )
        .unwrap();

        json_with_umask(
            &h,
            umask,
            &["remember", "Never commit to main directly", "--cwd", cwd],
        );
        let r = json_with_umask(&h, umask, &["consolidate"]);
        assert!(r["workspace"]["error"].is_null(), "{r}");
        json_with_umask(
            &h,
            umask,
            &["import", "--from", "claude", "--to", "codex", "--all"],
        );
        json_with_umask(&h, umask, &["import", "--from", "codex", "--to", "claude"]);
        json_with_umask(&h, umask, &["install", "codex"]);
        json_with_umask(&h, umask, &["install", "claude"]);

        let mut bad = Vec::new();
        let mut check = |p: &Path, want: u32| {
            if mode(p) != want {
                bad.push(format!("{}: {:o}, not {want:o}", p.display(), mode(p)));
            }
        };
        // Rewritten: their modes stay.
        check(&v1.join("MEMORY.md"), 0o644);
        check(&v1.join("memory_summary.md"), 0o640);
        check(&mem.join("MEMORY.md"), 0o640);
        check(&cfg, 0o640);
        // Created by cairn in the agents' trees: the umask's default.
        let v2 = h.codex().join("memories_v2");
        assert!(v2.join("memory_summary.md").is_file());
        let mut created = vec![v2.clone()];
        created.extend(walk_all(&v2));
        created.extend(walk_all(&v1.join("extensions")));
        for p in &created {
            let want = if p.is_dir() { new_dir } else { new_file };
            check(p, want);
        }
        let topics: Vec<PathBuf> = walk_all(&mem)
            .into_iter()
            .filter(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("codex_"))
            })
            .collect();
        assert!(!topics.is_empty(), "nothing exported");
        for p in &topics {
            check(p, new_file);
        }
        check(&h.claude().join("settings.json"), new_file);
        // cairn's own data dir: private.
        check(&h.data().join("install.json"), 0o600);
        check(&h.data().join("memory"), 0o700);
        assert!(bad.is_empty(), "umask {umask}: {bad:#?}");
        if root {
            let m = fs::metadata(v1.join("MEMORY.md")).unwrap();
            assert_eq!((m.uid(), m.gid()), (4242, 4343), "owner and group stay");
        }
        // The imported copy made again (its Claude source changed) keeps the modes its files
        // were given since.
        let imported: Vec<PathBuf> = walk_all(&v1.join("extensions"))
            .into_iter()
            .filter(|p| p.is_file())
            .collect();
        assert!(!imported.is_empty());
        for p in &imported {
            fs::set_permissions(p, fs::Permissions::from_mode(0o640)).unwrap();
        }
        let topic = walk_all(&mem)
            .into_iter()
            .find(|p| {
                p.extension().is_some_and(|e| e == "md")
                    && !p
                        .file_name()
                        .is_some_and(|n| n.to_string_lossy().starts_with("codex_"))
                    && p.file_name().is_some_and(|n| n != "MEMORY.md")
            })
            .expect("a Claude topic file");
        let mut text = fs::read_to_string(&topic).unwrap();
        text.push_str("\nOne more line.\n");
        fs::write(&topic, text).unwrap();
        json_with_umask(
            &h,
            umask,
            &["import", "--from", "claude", "--to", "codex", "--all"],
        );
        for p in &imported {
            if p.is_file() {
                assert_eq!(mode(p), 0o640, "umask {umask}: {}", p.display());
            }
        }
        eprintln!(
            "umask {umask}: {} created entries checked",
            created.len() + topics.len()
        );
    }
}
