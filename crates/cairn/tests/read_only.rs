//! A data dir this process may not write: a read-only mount, or an agent's sandbox that lets
//! its shell write only inside the workspace (Codex's `workspace-write`, Claude Code's
//! sandboxed Bash), while the hooks and the worker outside it keep the store. The commands
//! that only read (`recall`, `list`, `show`, `status`, the context hooks, MCP searches) still
//! answer from the existing database; the ones that write say why they cannot.
//!
//! As an ordinary user the data dir is made read-only with its permission bits; as root
//! (whom permission bits do not stop) every `cairn` runs in a mount namespace of its own
//! where the data dir is bound read-only. Where neither is possible the test says so and
//! checks nothing.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use common::*;
use serde_json::{Value, json};

/// How this machine lets the test take write access away from the data dir.
enum Denial {
    /// Not root: permission bits.
    Permissions,
    /// Root: a private mount namespace with the data dir bound read-only.
    Mount,
}

fn is_root() -> bool {
    Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0")
}

/// The way to deny writes here, if there is one.
fn denial() -> Option<Denial> {
    if !is_root() {
        return Some(Denial::Permissions);
    }
    let probe = tempfile::tempdir().ok()?;
    let dir = probe.path().to_str()?;
    let ok = Command::new("unshare")
        .args([
            "-m",
            "sh",
            "-c",
            "mount --bind -o ro \"$1\" \"$1\" && ! touch \"$1/x\" 2>/dev/null",
        ])
        .args(["sh", dir])
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    ok.then_some(Denial::Mount)
}

/// Runs `cairn` with the home's roots where the data dir cannot be written.
struct ReadOnly<'h> {
    home: &'h TestHome,
    how: Denial,
}

impl ReadOnly<'_> {
    fn command(&self) -> Command {
        let mut cmd = match self.how {
            Denial::Permissions => Command::new(env!("CARGO_BIN_EXE_cairn")),
            Denial::Mount => {
                let mut c = Command::new("unshare");
                c.args([
                    "-m",
                    "sh",
                    "-c",
                    "mount --bind -o ro \"$1\" \"$1\" && shift && exec \"$@\"",
                    "sh",
                ])
                .arg(self.home.data())
                .arg(env!("CARGO_BIN_EXE_cairn"));
                c
            }
        };
        self.home.roots(&mut cmd);
        cmd
    }

    fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        use std::io::Write;
        let mut child = self
            .command()
            .args(args)
            .env_remove("CAIRN_INSIDE")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("run cairn");
        let mut input = child.stdin.take().expect("stdin");
        if let Some(s) = stdin {
            let _ = input.write_all(s.as_bytes());
        }
        drop(input);
        child.wait_with_output().expect("wait for cairn")
    }

    fn json(&self, args: &[&str]) -> Value {
        let mut a = args.to_vec();
        a.push("--json");
        let out = self.run(&a, None);
        assert!(
            out.status.success(),
            "cairn {args:?} failed on a read-only data dir: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_slice(&out.stdout).expect("JSON on stdout")
    }
}

/// Takes write access away from `dir` (permission bits), or gives it back.
fn set_writable(dir: &Path, writable: bool) {
    use std::os::unix::fs::PermissionsExt;
    let mut paths: Vec<PathBuf> = vec![dir.to_path_buf()];
    let mut i = 0;
    while i < paths.len() {
        if paths[i].is_dir() {
            for e in std::fs::read_dir(&paths[i]).expect("read dir") {
                paths.push(e.expect("entry").path());
            }
        }
        i += 1;
    }
    for p in paths {
        let mode = match (p.is_dir(), writable) {
            (true, true) => 0o700,
            (true, false) => 0o500,
            (false, true) => 0o600,
            (false, false) => 0o400,
        };
        std::fs::set_permissions(&p, std::fs::Permissions::from_mode(mode)).expect("chmod");
    }
}

fn project(h: &TestHome) -> PathBuf {
    let p = h.root().join("shop");
    std::fs::create_dir_all(p.join(".git")).unwrap();
    p
}

#[test]
fn a_read_only_data_dir_still_serves_every_read() {
    let Some(how) = denial() else {
        eprintln!("skipped: no way to make a directory read-only for this user here");
        return;
    };
    let h = TestHome::empty();
    let proj = project(&h);
    let cwd = proj.to_str().unwrap();
    // A store only `remember` ever wrote: the tables of phase 1 and consolidation were never
    // created, and cannot be now.
    let pnpm = h.json(&["remember", "use pnpm, not npm", "--cwd", cwd]);
    let terse = h.json(&["remember", "I prefer terse answers", "--type", "user"]);
    let listed_before = h.json(&["list"]);
    let db_before = std::fs::read(h.data().join("cairn.db")).unwrap();
    if matches!(how, Denial::Permissions) {
        set_writable(&h.data(), false);
    }
    let ro = ReadOnly { home: &h, how };

    let r = ro.json(&["recall", "which package manager should I use", "--cwd", cwd]);
    assert_eq!(r["results"][0]["id"], pnpm["id"], "{r}");
    let out = ro.run(&["recall", "package manager", "--cwd", cwd], None);
    assert!(out.status.success());
    assert!(String::from_utf8_lossy(&out.stdout).contains("use pnpm, not npm"));

    assert_eq!(ro.json(&["list"]), listed_before);
    let shown = ro.json(&["show", pnpm["id"].as_str().unwrap()]);
    assert_eq!(shown["body"], pnpm["body"]);
    assert_eq!(shown["pinned"], false);

    let st = ro.json(&["status"]);
    assert_eq!(st["read_only"], true, "{st}");
    let out = ro.run(&["status"], None);
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("read-only here"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // The hooks: the session summary and the prompt's memories, as on a writable dir.
    let start = json!({"session_id": "s1", "transcript_path": null, "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": "startup"});
    let out = ro.run(&["hook", "--agent", "claude"], Some(&start.to_string()));
    assert_eq!(out.status.code(), Some(0));
    let ctx = String::from_utf8_lossy(&out.stdout);
    assert!(
        ctx.contains("I prefer terse answers") && ctx.contains("use pnpm, not npm"),
        "{ctx}"
    );
    assert!(!ctx.contains("could not open"), "{ctx}");
    let prompt = json!({"session_id": "s1", "transcript_path": null, "cwd": cwd,
                        "hook_event_name": "UserPromptSubmit",
                        "prompt": "which package manager do we use here?"});
    let out = ro.run(&["hook", "--agent", "codex"], Some(&prompt.to_string()));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains(pnpm["id"].as_str().unwrap()),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    // Writes say why they cannot, and change nothing.
    let out = ro.run(&["remember", "use yarn", "--cwd", cwd], None);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("cannot write"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // MCP: searches answer, a write is refused with the reason and what to do.
    let mut child = ro
        .command()
        .arg("mcp")
        .current_dir(&proj)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start cairn mcp");
    let out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut mcp = McpClient {
        child,
        out,
        next: 0,
    };
    mcp.initialize();
    let (err, found) = mcp.call(
        "memory_search",
        json!({"query": "terse answers", "cwd": cwd}),
    );
    assert!(!err, "{found}");
    assert_eq!(found["results"][0]["id"], terse["id"], "{found}");
    let (err, refused) = mcp.call("memory_remember", json!({"text": "use yarn", "cwd": cwd}));
    assert!(err);
    let refused = refused.as_str().unwrap_or_default().to_owned();
    assert!(
        refused.contains("cannot be written") && refused.contains("searched"),
        "{refused}"
    );
    mcp.finish();

    if let Denial::Permissions = ro.how {
        set_writable(&h.data(), true);
    }
    assert_eq!(std::fs::read(h.data().join("cairn.db")).unwrap(), db_before);
    // Writable again: the same store takes writes.
    h.json(&["remember", "use yarn for the docs site", "--cwd", cwd]);
}

/// A data dir that holds no database yet, and may not be written: there is nothing to read,
/// and the commands that read say so instead of failing.
#[test]
fn a_read_only_data_dir_without_a_store_has_nothing_to_read() {
    let Some(how) = denial() else {
        eprintln!("skipped: no way to make a directory read-only for this user here");
        return;
    };
    let h = TestHome::empty();
    let proj = project(&h);
    let cwd = proj.to_str().unwrap();
    std::fs::create_dir_all(h.data()).unwrap();
    if matches!(how, Denial::Permissions) {
        set_writable(&h.data(), false);
    }
    let ro = ReadOnly { home: &h, how };
    assert_eq!(ro.json(&["list"])["memories"], json!([]));
    assert_eq!(ro.json(&["status"])["read_only"], true);
    // A data dir not made yet, where it could not be made.
    let unmade = h.data().join("not-yet");
    let st = ro.json(&["status", "--data-dir", unmade.to_str().unwrap()]);
    assert_eq!(st["read_only"], true, "{st}");
    assert_eq!(
        ro.json(&["recall", "package manager", "--cwd", cwd])["results"],
        json!([])
    );
    let start = json!({"session_id": "s1", "transcript_path": null, "cwd": cwd,
                       "hook_event_name": "SessionStart", "source": "startup"});
    let out = ro.run(&["hook", "--agent", "claude"], Some(&start.to_string()));
    assert_eq!(out.status.code(), Some(0));
    assert!(
        !String::from_utf8_lossy(&out.stdout).contains("could not open"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    if let Denial::Permissions = ro.how {
        set_writable(&h.data(), true);
    }
    assert!(!h.data().join("cairn.db").exists());
}
