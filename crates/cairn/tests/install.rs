//! `cairn install` with the real binary copied under other names and paths: cairn recognises
//! the hooks it wrote by their shape, not by the binary's file name, and Codex's `hooks.json`
//! counts as a place cairn's hooks already run.

mod common;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use common::*;
use serde_json::Value;

const EVENTS: [&str; 3] = ["SessionStart", "UserPromptSubmit", "Stop"];

/// A copy of the built binary at `<home>/<dir>/<name>`.
fn copy_binary(h: &TestHome, dir: &str, name: &str) -> PathBuf {
    let d = h.root().join(dir);
    std::fs::create_dir_all(&d).unwrap();
    let p = d.join(name);
    std::fs::copy(env!("CARGO_BIN_EXE_cairn"), &p).unwrap();
    p
}

/// Runs `bin` with the home's roots. A binary copied a moment ago can still be open for
/// writing in a child another test thread is forking ("text file busy"): retry then.
fn run(h: &TestHome, bin: &Path, args: &[&str]) -> Output {
    for _ in 0..100 {
        match h.roots(&mut Command::new(bin)).args(args).output() {
            Ok(out) => return out,
            Err(e) if e.raw_os_error() == Some(26) => {
                std::thread::sleep(std::time::Duration::from_millis(50))
            }
            Err(e) => panic!("run {}: {e}", bin.display()),
        }
    }
    panic!("{} stays busy", bin.display())
}

fn run_json(h: &TestHome, bin: &Path, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.push("--json");
    let out = run(h, bin, &a);
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The commands of every handler for `event` in a Claude-style settings file.
fn claude_commands(file: &Path, event: &str) -> Vec<String> {
    let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
    v["hooks"][event]
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|g| g["hooks"].as_array().cloned().unwrap_or_default())
        .filter_map(|h| h["command"].as_str().map(str::to_owned))
        .collect()
}

/// The commands of every handler for `event` in Codex's config.toml (written by cairn as
/// `[[hooks.<Event>.hooks]]` tables with a basic-string `command`).
fn codex_commands(file: &Path, event: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let header = format!("[[hooks.{event}.hooks]]");
    let mut inside = false;
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            inside = line == header;
        } else if inside && let Some(v) = line.strip_prefix("command = ") {
            out.push(serde_json::from_str::<String>(v).unwrap());
        }
    }
    out
}

fn commands(agent: &str, file: &Path, event: &str) -> Vec<String> {
    if agent == "claude" {
        claude_commands(file, event)
    } else {
        codex_commands(file, event)
    }
}

fn agent_file(h: &TestHome, agent: &str) -> PathBuf {
    if agent == "claude" {
        h.claude().join("settings.json")
    } else {
        h.codex().join("config.toml")
    }
}

#[test]
fn a_renamed_binary_installs_once_and_uninstalls_to_the_original_bytes() {
    let h = TestHome::sample();
    for name in ["cairn-0.2", "mytool"] {
        let bin = copy_binary(&h, "bin", name);
        for agent in ["claude", "codex"] {
            let file = agent_file(&h, agent);
            let original = std::fs::read(&file).unwrap();
            let first = run_json(&h, &bin, &["install", agent]);
            assert_eq!(first["changed"], true, "{first}");
            let installed = std::fs::read(&file).unwrap();
            let again = run_json(&h, &bin, &["install", agent]);
            assert_eq!(again["changed"], false, "{name} {agent}: {again}");
            assert_eq!(std::fs::read(&file).unwrap(), installed, "{name} {agent}");
            for e in EVENTS {
                let ours: Vec<String> = commands(agent, &file, e)
                    .into_iter()
                    .filter(|c| c.contains(" hook --agent "))
                    .collect();
                assert_eq!(ours.len(), 1, "{name} {agent} {e}: {ours:?}");
                assert!(
                    ours[0].starts_with(&format!("{} ", bin.display())),
                    "{ours:?}"
                );
            }
            let un = run(&h, &bin, &["install", agent, "--uninstall"]);
            let said = String::from_utf8_lossy(&un.stdout);
            assert!(
                said.contains("removed cairn's hooks"),
                "{name} {agent}: {said}"
            );
            assert_eq!(
                std::fs::read(&file).unwrap(),
                original,
                "{name} {agent}: uninstall restores every byte"
            );
        }
    }
}

#[test]
fn installing_from_another_path_replaces_the_hook() {
    let h = TestHome::sample();
    let a = copy_binary(&h, "old", "cairn5");
    let b = copy_binary(&h, "new", "mytool");
    for agent in ["claude", "codex"] {
        let file = agent_file(&h, agent);
        let original = std::fs::read(&file).unwrap();
        run_json(&h, &a, &["install", agent]);
        let moved = run_json(&h, &b, &["install", agent]);
        assert_eq!(moved["changed"], true, "{moved}");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(!text.contains(a.to_str().unwrap()), "{agent}: {text}");
        for e in EVENTS {
            let ours: Vec<String> = commands(agent, &file, e)
                .into_iter()
                .filter(|c| c.contains(" hook --agent "))
                .collect();
            assert_eq!(ours.len(), 1, "{agent} {e}: {ours:?}");
            assert!(
                ours[0].starts_with(&format!("{} ", b.display())),
                "{ours:?}"
            );
        }
        // Either binary takes it out again, to the original bytes.
        run_json(&h, &a, &["install", agent, "--uninstall"]);
        assert_eq!(std::fs::read(&file).unwrap(), original, "{agent}");
    }
    // The user's own Stop hook in settings.json survived all of it.
    assert!(
        claude_commands(&h.claude().join("settings.json"), "Stop")
            .iter()
            .any(|c| c.contains("notify-send"))
    );
}

/// The doctor checks about Codex hooks kept in both config.toml and hooks.json.
fn both_files_checks(h: &TestHome) -> Vec<Value> {
    let out = h.cairn(&["doctor", "--json"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    v["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["id"] == "codex.hooks_files")
        .cloned()
        .collect()
}

/// The user keeps their Codex hooks in `<codex home>/hooks.json` (a SessionStart logger) and
/// none in config.toml: cairn's go into hooks.json too, beside theirs, so that Codex never
/// loads one layer from both files (it warns at every start when it does); config.toml is not
/// touched, and uninstalling gives back both files' bytes.
#[test]
fn codex_hooks_go_into_hooks_json_when_the_users_are_there() {
    let h = TestHome::sample();
    let bin = copy_binary(&h, "bin", "mytool");
    let config = h.codex().join("config.toml");
    let original = std::fs::read(&config).unwrap();
    let hooks_json = h.codex().join("hooks.json");
    let json_text = "{\n  \"hooks\": {\n    \"SessionStart\": [{\"matcher\": \"startup|resume\", \"hooks\": [{\"type\": \"command\", \"command\": \"/usr/local/bin/my-session-logger\"}]}]\n  }\n}\n";
    std::fs::write(&hooks_json, json_text).unwrap();

    let out = run(&h, &bin, &["install", "codex"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(
        said.starts_with(&format!(
            "installed cairn's hooks in {}",
            hooks_json.display()
        )),
        "{said}"
    );
    assert_eq!(
        std::fs::read(&config).unwrap(),
        original,
        "config.toml untouched"
    );
    for e in EVENTS {
        let ours: Vec<String> = claude_commands(&hooks_json, e)
            .into_iter()
            .filter(|c| c.contains(" hook --agent codex"))
            .collect();
        assert_eq!(ours.len(), 1, "{e}: {ours:?}");
        assert!(
            ours[0].starts_with(&format!("{} ", bin.display())),
            "{ours:?}"
        );
    }
    // The user's group stays first (its trust key is its position).
    assert_eq!(
        claude_commands(&hooks_json, "SessionStart")[0],
        "/usr/local/bin/my-session-logger"
    );
    assert!(both_files_checks(&h).is_empty());
    // Idempotent; the report names hooks.json.
    let again = run_json(&h, &bin, &["install", "codex"]);
    assert_eq!(again["changed"], false, "{again}");
    assert_eq!(again["path"], hooks_json.display().to_string(), "{again}");

    let un = run_json(&h, &bin, &["install", "codex", "--uninstall"]);
    assert_eq!(
        un["files"],
        serde_json::json!([hooks_json.display().to_string()]),
        "{un}"
    );
    assert_eq!(std::fs::read_to_string(&hooks_json).unwrap(), json_text);
    assert_eq!(std::fs::read(&config).unwrap(), original);
}

/// An install made before the user kept hooks in hooks.json left cairn's handlers in
/// config.toml, and the user's hooks.json (their logger, and a `cairn hook --agent codex` they
/// wrote by hand) beside it: Codex loads hooks from both files. `cairn doctor` says so, and the
/// next install moves cairn's handlers into hooks.json, one per event, leaving config.toml as
/// it was before cairn.
#[test]
fn codex_hooks_left_in_both_files_are_moved_next_to_the_users() {
    let h = TestHome::sample();
    let config = h.codex().join("config.toml");
    let original = std::fs::read(&config).unwrap();
    h.json(&["install", "codex"]);
    assert_eq!(codex_commands(&config, "Stop").len(), 1);
    let hooks_json = h.codex().join("hooks.json");
    std::fs::write(
        &hooks_json,
        serde_json::to_string_pretty(&serde_json::json!({"hooks": {
            "Stop": [{"hooks": [{"type": "command", "command": "cairn hook --agent codex"}]}],
            "SessionStart": [{"matcher": "startup|resume", "hooks": [{"type": "command", "command": "/usr/local/bin/my-session-logger"}]}]
        }}))
        .unwrap(),
    )
    .unwrap();
    let warned = both_files_checks(&h);
    assert_eq!(warned.len(), 1, "{warned:?}");
    assert_eq!(warned[0]["status"], "warn");
    let msg = warned[0]["message"].as_str().unwrap();
    assert!(msg.contains("prefer a single representation"), "{msg}");

    let out = h.cairn(&["install", "codex"]);
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(said.contains("trust them again in `/hooks`"), "{said}");
    assert_eq!(
        std::fs::read(&config).unwrap(),
        original,
        "config.toml as before cairn"
    );
    for e in EVENTS {
        let ours: Vec<String> = claude_commands(&hooks_json, e)
            .into_iter()
            .filter(|c| c.contains(" hook --agent codex"))
            .collect();
        assert_eq!(ours.len(), 1, "{e}: {ours:?}");
        assert!(
            ours[0].ends_with(" hook --agent codex") && ours[0].starts_with('/'),
            "{ours:?}"
        );
    }
    assert!(both_files_checks(&h).is_empty());
    let again = h.json(&["install", "codex"]);
    assert_eq!(again["changed"], false, "{again}");
    // Uninstalling takes cairn's handlers out of hooks.json (the logger stays) and leaves
    // config.toml as it was.
    h.json(&["install", "codex", "--uninstall"]);
    assert_eq!(std::fs::read(&config).unwrap(), original);
    assert_eq!(
        claude_commands(&hooks_json, "SessionStart"),
        ["/usr/local/bin/my-session-logger"]
    );
    for e in ["Stop", "UserPromptSubmit"] {
        assert!(claude_commands(&hooks_json, e).is_empty(), "{e}");
    }
}

#[test]
fn codex_hooks_switched_off_say_what_switching_them_on_does() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.codex()).unwrap();
    let config = h.codex().join("config.toml");
    let original = "[features]\nhooks = false\n\n[[hooks.PostToolUse]]\nmatcher = \"apply_patch\"\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"ruff check --fix\"\n";
    std::fs::write(&config, original).unwrap();
    let dry = h.cairn(&["install", "codex", "--dry-run"]);
    let said = String::from_utf8_lossy(&dry.stdout);
    assert!(
        said.contains("every tool's hooks back on") && said.contains("`ruff check --fix`"),
        "{said}"
    );
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
    let r = h.json(&["install", "codex"]);
    let notes = r["notes"].to_string();
    assert!(notes.contains("every tool's hooks back on"), "{r}");
    assert!(
        std::fs::read_to_string(&config)
            .unwrap()
            .contains("hooks = true")
    );
    h.json(&["install", "codex", "--uninstall"]);
    assert_eq!(std::fs::read_to_string(&config).unwrap(), original);
}

/// Uninstalling with another data dir than the install's removes the hooks (found by their
/// command), says that the install record is elsewhere, and leaves no record behind.
#[test]
fn an_uninstall_from_another_data_dir_says_where_the_record_is() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.codex()).unwrap();
    std::fs::write(h.codex().join("config.toml"), "[features]\nhooks = false\n").unwrap();
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_cairn"));
    let other = h.root().join("other-data");
    let out = h
        .bare_command()
        .args(["--data-dir", other.to_str().unwrap(), "install", "codex"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = run_json(&h, &bin, &["install", "codex", "--uninstall"]);
    assert_eq!(r["changed"], true, "{r}");
    assert!(
        r["notes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|n| n.as_str().unwrap().contains("no install record")),
        "{r}"
    );
    assert!(!h.data().join("install.json").exists());
}

/// Claude Code's `"disableAllHooks": true` is left alone, but installing says it keeps cairn's
/// hooks from running, and `doctor` warns about it.
#[test]
fn claude_hooks_switched_off_are_named_by_install_and_doctor() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.claude()).unwrap();
    let settings = h.claude().join("settings.json");
    std::fs::write(&settings, "{\"disableAllHooks\": true}\n").unwrap();
    let r = h.json(&["install", "claude"]);
    assert!(r["notes"].to_string().contains("disableAllHooks"), "{r}");
    let after: Value = serde_json::from_str(&std::fs::read_to_string(&settings).unwrap()).unwrap();
    assert_eq!(after["disableAllHooks"], Value::Bool(true));
    let out = h.cairn(&["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let check = d["checks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "claude.hooks")
        .unwrap_or_else(|| panic!("{d}"));
    assert_eq!(check["status"], "warn", "{check}");
    assert!(check["fix"].as_str().unwrap().contains("disableAllHooks"));
}

/// A first install says what else the setup wants: `cairn sync` for the sessions from before
/// the hooks (until a sync has run), and the MCP server the session summary names (until one
/// that runs cairn is configured).
#[test]
fn a_first_install_names_sync_and_the_mcp_server_until_they_are_done() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.claude()).unwrap();
    std::fs::create_dir_all(h.codex()).unwrap();
    let bin = Path::new(env!("CARGO_BIN_EXE_cairn"));
    let steps = |v: &Value| -> String {
        v["next_steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_str().unwrap_or_default().to_owned())
            .collect::<Vec<_>>()
            .join("\n")
    };
    let claude = steps(&run_json(&h, bin, &["install", "claude"]));
    assert!(claude.contains("run `cairn sync` once"), "{claude}");
    assert!(
        claude.contains("claude mcp add --scope user cairn -- "),
        "{claude}"
    );
    let codex = steps(&run_json(&h, bin, &["install", "codex"]));
    assert!(codex.contains("[mcp_servers.cairn]"), "{codex}");
    run_json(&h, bin, &["install", "claude", "--uninstall"]);
    run_json(&h, bin, &["install", "codex", "--uninstall"]);
    // Synced, and both servers configured as the agents keep them: nothing more to say.
    h.json(&["sync"]);
    std::fs::write(
        h.root().join(".claude.json"),
        r#"{"numStartups": 3, "mcpServers": {"memory": {"type": "stdio", "command": "/usr/local/bin/cairn", "args": ["mcp"]}}}"#,
    )
    .unwrap();
    std::fs::write(
        h.codex().join("config.toml"),
        "model = \"gpt-5\"\n\n[mcp_servers.memory]\ncommand = \"cairn\"\nargs = [\"mcp\"]\n",
    )
    .unwrap();
    let claude = steps(&run_json(&h, bin, &["install", "claude"]));
    assert!(
        !claude.contains("cairn sync") && !claude.contains("mcp add"),
        "{claude}"
    );
    let codex = steps(&run_json(&h, bin, &["install", "codex"]));
    assert!(
        !codex.contains("cairn sync") && !codex.contains("mcp_servers"),
        "{codex}"
    );
}

/// A binary moved or removed after install leaves both agents running a command that fails
/// on every turn: `doctor` says so, once per agent, and exits 1.
#[test]
fn doctor_names_hooks_whose_binary_is_gone() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.claude()).unwrap();
    std::fs::create_dir_all(h.codex()).unwrap();
    let bin = copy_binary(&h, "opt", "cairn");
    run_json(&h, &bin, &["install", "claude"]);
    run_json(&h, &bin, &["install", "codex"]);
    let out = h.cairn(&["doctor", "--json"]);
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let program_checks = |d: &Value| -> Vec<Value> {
        d["checks"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                c["id"]
                    .as_str()
                    .unwrap_or_default()
                    .ends_with(".hook_program")
            })
            .cloned()
            .collect()
    };
    assert!(program_checks(&d).is_empty(), "{d}");
    // A binary that lost its execute bit fails the same way.
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o644)).unwrap();
        let d: Value = serde_json::from_slice(&h.cairn(&["doctor", "--json"]).stdout).unwrap();
        assert_eq!(program_checks(&d).len(), 2, "{d}");
    }
    std::fs::remove_file(&bin).unwrap();
    let out = h.cairn(&["doctor", "--json"]);
    assert_eq!(out.status.code(), Some(1));
    let d: Value = serde_json::from_slice(&out.stdout).unwrap();
    let checks = program_checks(&d);
    assert_eq!(checks.len(), 2, "{d}");
    for c in &checks {
        assert_eq!(c["status"], "error", "{c}");
        let msg = c["message"].as_str().unwrap();
        assert!(msg.contains(&*bin.display().to_string()), "{msg}");
        assert!(
            msg.contains("SessionStart, Stop, UserPromptSubmit"),
            "{msg}"
        );
        assert!(c["fix"].as_str().unwrap().contains("cairn install"), "{c}");
    }
}

/// A settings.json that is empty (0 bytes: a placeholder an editor or a dotfiles manager
/// made) is filled by `cairn install claude` and comes back empty, not as `{}`.
#[test]
fn an_empty_claude_settings_file_comes_back_empty() {
    let h = TestHome::empty();
    std::fs::create_dir_all(h.claude()).unwrap();
    let settings = h.claude().join("settings.json");
    std::fs::write(&settings, "").unwrap();
    let first = h.json(&["install", "claude"]);
    assert_eq!(first["changed"], true, "{first}");
    for e in EVENTS {
        assert_eq!(claude_commands(&settings, e).len(), 1, "{e}");
    }
    let un = h.json(&["install", "claude", "--uninstall"]);
    assert_eq!(un["changed"], true, "{un}");
    assert_eq!(std::fs::read(&settings).unwrap(), b"");
    // Nothing left to do: a second uninstall changes nothing.
    let again = h.json(&["install", "claude", "--uninstall"]);
    assert_eq!(again["changed"], false, "{again}");
}
