use super::*;

const CMD: &str = "/opt/bin/cairn hook --agent claude";
const XCMD: &str = "/opt/bin/cairn hook --agent codex";

fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p
}

fn round_trip_claude(original: &str) -> String {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "settings.json", original);
    let plan = plan_claude(&p, CMD, false, None).unwrap();
    plan.apply().unwrap();
    let installed = std::fs::read_to_string(&p).unwrap();
    let v: serde_json::Value = serde_json::from_str(&installed).unwrap();
    for e in EVENTS {
        let groups = v["hooks"][e].as_array().unwrap();
        assert!(
            groups.iter().any(|g| g["hooks"][0]["command"] == CMD),
            "{e} missing in {installed}"
        );
    }
    // Idempotent.
    let again = plan_claude(&p, CMD, false, plan.record.as_ref()).unwrap();
    assert!(!again.changes_file(), "{}", again.diff());
    // Uninstall restores every byte.
    let un = plan_claude(&p, CMD, true, plan.record.as_ref()).unwrap();
    un.apply().unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
    installed
}

#[test]
fn claude_round_trips() {
    // The sample home's settings, with a user Stop hook to keep.
    let sample = "{\n  \"$schema\": \"https://json.schemastore.org/claude-code-settings.json\",\n  \"model\": \"sonnet\",\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"notify-send 'Claude Code' 'Turn finished'\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    let installed = round_trip_claude(sample);
    assert!(installed.contains("notify-send"));
    round_trip_claude("{\n    \"model\": \"opus\",\n    \"permissions\": {\"allow\": []}\n}");
    round_trip_claude("{}\n");
    round_trip_claude("{\"a\":1}");
    // Containers the user left empty stay, as they were, when cairn's hooks go.
    round_trip_claude("{\n  \"model\": \"opus\",\n  \"hooks\": {\n    \"Stop\": []\n  }\n}\n");
    round_trip_claude("{\n  \"hooks\": {}\n}\n");
    round_trip_claude("{\n\t\"hooks\": {\n\t\t\"SessionStart\": [ ],\n\t\t\"Stop\": []\n\t}\n}");
    round_trip_claude(
        "{\"hooks\":{\"Stop\":[],\"PreToolUse\":[{\"matcher\":\"Bash\",\"hooks\":[{\"type\":\"command\",\"command\":\"echo hi\"}]}]}}",
    );
}

/// An empty settings file (0 bytes, or only whitespace) comes back as it was, not as `{}`.
#[test]
fn claude_empty_file_round_trips_to_its_bytes() {
    for original in ["", "\n", "  \n\n", "\r\n"] {
        let d = tempfile::tempdir().unwrap();
        let p = write(d.path(), "settings.json", original);
        let plan = plan_claude(&p, CMD, false, None).unwrap();
        assert!(plan.changes_file());
        plan.apply().unwrap();
        let installed = std::fs::read_to_string(&p).unwrap();
        assert!(installed.contains(CMD), "{installed}");
        let again = plan_claude(&p, CMD, false, plan.record.as_ref()).unwrap();
        assert!(!again.changes_file(), "{}", again.diff());
        assert_eq!(again.record, plan.record);
        let un = plan_claude(&p, CMD, true, again.record.as_ref()).unwrap();
        un.apply().unwrap();
        assert_eq!(
            std::fs::read_to_string(&p).unwrap(),
            original,
            "{original:?}"
        );
    }
}

#[test]
fn claude_fresh_file_is_created_and_removed() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("settings.json");
    let plan = plan_claude(&p, CMD, false, None).unwrap();
    assert!(plan.diff().starts_with("--- /dev/null"));
    plan.apply().unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["timeout"], TIMEOUT_SECS);
    let un = plan_claude(&p, CMD, true, plan.record.as_ref()).unwrap();
    un.apply().unwrap();
    assert!(!p.exists());
}

#[test]
fn claude_updates_a_moved_binary_and_keeps_other_handlers() {
    let d = tempfile::tempdir().unwrap();
    let text = "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"mine\"},{\"type\":\"command\",\"command\":\"/old/cairn hook --agent claude\"}]}]}}";
    let p = write(d.path(), "settings.json", text);
    let plan = plan_claude(&p, CMD, false, None).unwrap();
    let after = plan.after.clone().unwrap();
    assert!(after.contains(CMD) && !after.contains("/old/cairn"));
    plan.apply().unwrap();
    plan_claude(&p, CMD, true, None).unwrap().apply().unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(
        v["hooks"]["Stop"][0]["hooks"],
        serde_json::json!([{"type": "command", "command": "mine"}])
    );
    assert!(v["hooks"].get("SessionStart").is_none());
}

#[test]
fn claude_refuses_broken_json() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "settings.json", "{\n  \"a\": 1,\n}\n");
    let e = plan_claude(&p, CMD, false, None).unwrap_err().to_string();
    assert!(e.contains("not valid JSON (line 3"), "{e}");
}

fn round_trip_codex(original: &str) -> String {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "config.toml", original);
    let plan = plan_codex(&p, None, XCMD, false, None).unwrap();
    plan.apply().unwrap();
    let installed = std::fs::read_to_string(&p).unwrap();
    let again = plan_codex(&p, None, XCMD, false, plan.record.as_ref()).unwrap();
    assert!(!again.changes_file(), "{}", again.diff());
    let un = plan_codex(&p, None, XCMD, true, plan.record.as_ref()).unwrap();
    un.apply().unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
    installed
}

#[test]
fn codex_events_left_empty_stay_empty() {
    round_trip_codex(
        "model = \"gpt-5.1-codex\"\n\n[hooks]\nStop = [] # keep: I add my notifier here later\nSessionStart = []\n\n[features]\nmemories = true\n",
    );
}

#[test]
fn codex_round_trips_with_comments() {
    let sample = "# my codex config\nmodel = \"gpt-5.6-sol\" # pinned\napproval_policy = \"on-request\"\n\n[tui]\nnotifications = true\n\n# projects\n[projects.\"/w/webshop\"]\ntrust_level = \"trusted\"\n";
    let installed = round_trip_codex(sample);
    assert!(installed.contains("# pinned"));
    assert!(installed.contains("[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"/opt/bin/cairn hook --agent codex\"\ntimeout = 30\n"), "{installed}");
    let parsed: toml_edit::DocumentMut = installed.parse().unwrap();
    for e in EVENTS {
        assert_eq!(
            parsed["hooks"][e][0]["hooks"][0]["command"].as_str(),
            Some(XCMD),
            "{e}"
        );
    }
    // Existing user hooks and a disabled feature flag.
    let with_hooks = "[features]\nhooks = false # off for now\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"say done\"\n";
    let installed = round_trip_codex(with_hooks);
    assert!(
        installed.contains("hooks = true # off for now"),
        "{installed}"
    );
    assert!(installed.contains("say done"));
    round_trip_codex("");

    // Kept with CRLF line ends, or ending without a line break: every line keeps its
    // ends, and the uninstall gives back every byte.
    let installed = round_trip_codex("model = \"o3\"\r\n[mcp_servers.x]\r\ncommand = \"x\"\r\n");
    assert!(
        !installed.replace("\r\n", "").contains('\n'),
        "{installed:?}"
    );
    round_trip_codex("model = \"o3\"\n[tui]\nnotifications = true");
    round_trip_codex("model = \"o3\"\r\n[tui]\r\nnotifications = true");
    round_trip_codex("\u{feff}# cfg\r\nmodel = \"o3\"\r\n");
}

/// A config.toml that cairn creates does not open with a blank line.
#[test]
fn codex_fresh_file_starts_with_its_first_table() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("config.toml");
    plan_codex(&p, None, XCMD, false, None)
        .unwrap()
        .apply()
        .unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(!text.starts_with('\n'), "{text:?}");
}

#[test]
fn codex_fresh_file_is_removed_again() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("config.toml");
    let plan = plan_codex(&p, None, XCMD, false, None).unwrap();
    plan.apply().unwrap();
    assert!(p.exists());
    plan_codex(&p, None, XCMD, true, plan.record.as_ref())
        .unwrap()
        .apply()
        .unwrap();
    assert!(!p.exists());
}

#[test]
fn codex_broken_toml_names_the_line() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "config.toml", "model = \"x\"\n[tui\n");
    let e = plan_codex(&p, None, XCMD, false, None)
        .unwrap_err()
        .to_string();
    assert!(e.contains("not valid TOML (line 2"), "{e}");
}

#[test]
fn recognises_cairn_commands() {
    assert!(is_cairn_command(
        "'/home/a b/.cargo/bin/cairn' --data-dir '/x' hook --agent codex",
        Target::Codex
    ));
    assert!(is_cairn_command(
        "cairn hook --agent claude",
        Target::Claude
    ));
    assert!(!is_cairn_command(
        "cairn hook --agent claude",
        Target::Codex
    ));
    // By the shape cairn writes, whatever the binary is called.
    for cmd in [
        "notcairn hook --agent claude",
        "/opt/cairn5 hook --agent claude",
        "/opt/bin/mytool --data-dir /x hook --agent claude",
        "'/home/a b/cairn-0.2' --data-dir '/d/it'\\''s' hook --agent claude",
        "/v/cairn_0.1_linux --data-dir=/x --codex-home /c hook --agent=claude",
        "\"$HOME/bin/cairn\" hook --agent claude",
    ] {
        assert!(is_cairn_command(cmd, Target::Claude), "{cmd}");
        assert!(!is_cairn_command(cmd, Target::Codex), "{cmd}");
    }
    // Anything else is another tool's.
    for cmd in [
        "mytool hook --agent claude --verbose",
        "mytool --verbose hook --agent claude",
        "mytool hook --agent",
        "X=1 mytool hook --agent claude",
        "mytool hook --agent claude; rm -rf /tmp/x",
        "mytool hook --agent claude # note",
        "sh -c 'mytool hook --agent claude'",
        "\"$HOME/bin/mytool\" hook --agent claude",
        "mytool --data-dir hook --agent claude",
        "hook --agent claude",
        "",
    ] {
        assert!(!is_cairn_command(cmd, Target::Claude), "{cmd}");
    }
}

#[test]
fn claude_renamed_binary_round_trips_and_heals_duplicates() {
    let d = tempfile::tempdir().unwrap();
    let original = "{\n  \"hooks\": {\n    \"Stop\": [\n      {\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"say done\"\n          }\n        ]\n      }\n    ]\n  }\n}\n";
    let p = write(d.path(), "settings.json", original);
    let a = "/opt/a/cairn5 hook --agent claude";
    let b = "/opt/b/mytool --data-dir /d hook --agent claude";
    let plan = plan_claude(&p, a, false, None).unwrap();
    plan.apply().unwrap();
    let again = plan_claude(&p, a, false, plan.record.as_ref()).unwrap();
    assert!(!again.changes_file(), "{}", again.diff());
    // Another path: the handler is replaced, not doubled.
    plan_claude(&p, b, false, plan.record.as_ref())
        .unwrap()
        .apply()
        .unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    assert!(!text.contains(a) && text.matches(b).count() == 3, "{text}");
    let un = plan_claude(&p, b, true, plan.record.as_ref()).unwrap();
    un.apply().unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);

    // Duplicates left by an older install (same group and separate groups): one is kept.
    let dup = "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"/x/cairn5 hook --agent claude\"},{\"type\":\"command\",\"command\":\"say done\"}]},{\"hooks\":[{\"type\":\"command\",\"command\":\"/x/cairn5 hook --agent claude\"}]},{\"hooks\":[{\"type\":\"command\",\"command\":\"/y/cairn5 hook --agent claude\"}]}]}}";
    std::fs::write(&p, dup).unwrap();
    plan_claude(&p, a, false, None).unwrap().apply().unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    for e in EVENTS {
        let n = v["hooks"][e]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
            .filter(|h| h["command"] == a)
            .count();
        assert_eq!(n, 1, "{e}: {v}");
    }
    assert!(
        !v.to_string().contains("/x/") && !v.to_string().contains("/y/"),
        "{v}"
    );
    plan_claude(&p, a, true, None).unwrap().apply().unwrap();
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    assert_eq!(
        v,
        serde_json::json!({"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "say done"}]}]}})
    );
}

/// The user's Codex hooks are in `hooks.json` (and none in `config.toml`): cairn's go there
/// too, by byte spans, so that one layer never holds hooks in both files (Codex warns at every
/// start); uninstalling gives back both files' bytes.
#[test]
fn codex_hooks_go_into_hooks_json_when_the_users_are_there() {
    let d = tempfile::tempdir().unwrap();
    let json_original = "{\n  \"description\": \"my hooks\",\n  \"hooks\": {\n    \"SessionStart\": [\n      {\n        \"matcher\": \"startup|resume\",\n        \"hooks\": [\n          {\n            \"type\": \"command\",\n            \"command\": \"/usr/local/bin/my-session-logger\"\n          }\n        ]\n      }\n    ],\n    \"Stop\": []\n  }\n}\n";
    let hj = write(d.path(), "hooks.json", json_original);
    let original = "model = \"o3\"\n";
    let p = write(d.path(), "config.toml", original);
    let plan = plan_codex(&p, Some(&hj), XCMD, false, None).unwrap();
    assert_eq!(plan.hooks_in, hj);
    assert_eq!(
        plan.after.as_deref(),
        Some(original),
        "config.toml untouched"
    );
    let after = plan.also.as_ref().unwrap().after.clone().unwrap();
    let v: serde_json::Value = serde_json::from_str(&after).unwrap();
    for e in EVENTS {
        let groups = v["hooks"][e].as_array().unwrap();
        let last = groups.last().unwrap();
        assert_eq!(last["hooks"][0]["command"], XCMD, "{e}: {after}");
        assert_eq!(last["hooks"][0]["type"], "command");
        assert_eq!(last["hooks"][0]["timeout"], TIMEOUT_SECS);
    }
    // The user's group keeps its place (and its trust key); the rest of the text is as it was.
    assert_eq!(
        v["hooks"]["SessionStart"][0]["hooks"][0]["command"],
        "/usr/local/bin/my-session-logger"
    );
    assert!(
        after.starts_with("{\n  \"description\": \"my hooks\",\n"),
        "{after}"
    );
    plan.apply().unwrap();
    let again = plan_codex(&p, Some(&hj), XCMD, false, plan.record.as_ref()).unwrap();
    assert!(!again.changes_file(), "{}", again.diff());
    let un = plan_codex(&p, Some(&hj), XCMD, true, plan.record.as_ref()).unwrap();
    un.apply().unwrap();
    assert_eq!(std::fs::read_to_string(&hj).unwrap(), json_original);
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
}

/// An older install wrote cairn's handlers into `config.toml` beside the user's `hooks.json`:
/// the next install moves them into `hooks.json`, trust entries of cairn's config.toml
/// handlers go with them, and nothing is doubled.
#[test]
fn codex_hooks_in_both_files_are_healed() {
    let d = tempfile::tempdir().unwrap();
    let hj = write(
        d.path(),
        "hooks.json",
        "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"/old/cairn hook --agent codex\"}]},{\"hooks\":[{\"type\":\"command\",\"command\":\"cairn hook --agent codex\"}]},{\"hooks\":[{\"type\":\"command\",\"command\":\"say done\"}]}]}}",
    );
    let cfg = format!(
        "model = \"o3\"\n\n[[hooks.SessionStart]]\n[[hooks.SessionStart.hooks]]\ntype = \"command\"\ncommand = \"{XCMD}\"\ntimeout = 30\n\n[hooks.state.\"{p}:session_start:0:0\"]\ntrusted_hash = \"sha256:aa\"\n\n[hooks.state.\"{j}:stop:1:0\"]\ntrusted_hash = \"sha256:dup\"\n\n[hooks.state.\"{j}:stop:2:0\"]\ntrusted_hash = \"sha256:user\"\n",
        p = d.path().join("config.toml").display(),
        j = hj.display()
    );
    let p = write(d.path(), "config.toml", &cfg);
    let plan = plan_codex(&p, Some(&hj), XCMD, false, None).unwrap();
    assert_eq!(plan.hooks_in, hj);
    let toml = plan.after.clone().unwrap();
    assert!(!toml.contains("hooks.SessionStart"), "{toml}");
    assert!(!toml.contains(":session_start:0:0"), "{toml}");
    // cairn's second Stop handler goes (with its trust entry), its first is brought up to
    // date in place, and the user's hook moves up from group 2 to 1 with its trust.
    let json = plan.also.as_ref().unwrap().after.clone().unwrap();
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["hooks"]["Stop"][0]["hooks"][0]["command"], XCMD, "{json}");
    assert_eq!(v["hooks"]["Stop"][1]["hooks"][0]["command"], "say done");
    assert!(
        toml.contains(&format!(
            "[hooks.state.\"{}:stop:1:0\"]\ntrusted_hash = \"sha256:user\"",
            hj.display()
        )),
        "{toml}"
    );
    assert!(
        !toml.contains("sha256:dup") && !toml.contains(":stop:2:0"),
        "{toml}"
    );
    for e in EVENTS {
        let n = v["hooks"][e]
            .as_array()
            .unwrap()
            .iter()
            .filter(|g| g["hooks"][0]["command"] == XCMD)
            .count();
        assert_eq!(n, 1, "{e}: {json}");
    }
    assert!(
        plan.notes.join(" ").contains("move from"),
        "{:?}",
        plan.notes
    );
}

/// hooks.json holds only cairn's handlers and config.toml the user's: cairn's move to
/// config.toml, and hooks.json gets back to holding none. Every event in hooks.json and no
/// hook of the user's anywhere: nothing changes. An unreadable hooks.json is a note.
#[test]
fn codex_hooks_follow_the_users_into_config_toml() {
    let d = tempfile::tempdir().unwrap();
    let only_cairn = "{\"hooks\":{\"Stop\":[{\"hooks\":[{\"type\":\"command\",\"command\":\"/old/cairn hook --agent codex\",\"timeout\":30}]}]}}";
    let hj = write(d.path(), "hooks.json", only_cairn);
    let user = "[[hooks.PostToolUse]]\nmatcher = \"apply_patch\"\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"ruff check --fix\"\n";
    let p = write(d.path(), "config.toml", user);
    let plan = plan_codex(&p, Some(&hj), XCMD, false, None).unwrap();
    assert_eq!(plan.hooks_in, p);
    let toml = plan.after.clone().unwrap();
    for e in EVENTS {
        assert!(toml.contains(&format!("[[hooks.{e}]]")), "{e}: {toml}");
    }
    assert_eq!(plan.also.as_ref().unwrap().after.as_deref(), Some("{}"));
    plan.apply().unwrap();
    let again = plan_codex(&p, Some(&hj), XCMD, false, plan.record.as_ref()).unwrap();
    assert!(!again.changes_file(), "{}", again.diff());

    // Every event in hooks.json and no hook of the user's: cairn's stay where they are.
    let all = "{\"hooks\":{\"SessionStart\":[{\"hooks\":[{\"command\":\"/opt/bin/cairn hook --agent codex\"}]}],\"UserPromptSubmit\":[{\"hooks\":[{\"command\":\"/opt/bin/cairn hook --agent codex\"}]}],\"Stop\":[{\"hooks\":[{\"command\":\"/opt/bin/cairn hook --agent codex\"}]}]}}";
    std::fs::write(&hj, all).unwrap();
    std::fs::remove_file(&p).unwrap();
    let plan = plan_codex(&p, Some(&hj), XCMD, false, None).unwrap();
    assert!(!plan.changes_file(), "{}", plan.diff());
    assert_eq!(plan.hooks_in, hj);

    // An unreadable hooks.json is a note, not an error, and is left alone.
    std::fs::write(&hj, "{").unwrap();
    let plan = plan_codex(&p, Some(&hj), XCMD, false, None).unwrap();
    assert!(plan.changes_file());
    assert!(plan.also.is_none());
    assert!(plan.notes[0].contains("not valid JSON"), "{:?}", plan.notes);
}

#[test]
fn codex_says_that_enabling_hooks_enables_every_tool() {
    let d = tempfile::tempdir().unwrap();
    let original = "[features]\nhooks = false\n\n[[hooks.PostToolUse]]\nmatcher = \"apply_patch\"\n[[hooks.PostToolUse.hooks]]\ntype = \"command\"\ncommand = \"ruff check --fix\"\n";
    let p = write(d.path(), "config.toml", original);
    let plan = plan_codex(&p, None, XCMD, false, None).unwrap();
    let notes = plan.notes.join(" ");
    assert!(
        notes.contains("every tool's hooks back on") && notes.contains("`ruff check --fix`"),
        "{notes}"
    );
    plan.apply().unwrap();
    let again = plan_codex(&p, None, XCMD, false, plan.record.as_ref()).unwrap();
    assert!(
        !again.changes_file() && again.notes.is_empty(),
        "{:?}",
        again.notes
    );
    let un = plan_codex(&p, None, XCMD, true, plan.record.as_ref()).unwrap();
    assert!(
        un.notes.join(" ").contains("`false` again"),
        "{:?}",
        un.notes
    );
    un.apply().unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
}

#[test]
fn codex_heals_duplicates_and_moves() {
    let d = tempfile::tempdir().unwrap();
    let dup = "[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"/a/cairn5 hook --agent codex\"\n\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"say done\"\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"/a/cairn5 hook --agent codex\"\n";
    let p = write(d.path(), "config.toml", dup);
    let b = "/b/mytool hook --agent codex";
    plan_codex(&p, None, b, false, None)
        .unwrap()
        .apply()
        .unwrap();
    let text = std::fs::read_to_string(&p).unwrap();
    let parsed: toml_edit::DocumentMut = text.parse().unwrap();
    for e in EVENTS {
        let groups = parsed["hooks"][e].as_array_of_tables().unwrap();
        let n = groups
            .iter()
            .flat_map(|g| g["hooks"].as_array_of_tables().unwrap().iter())
            .filter(|h| h["command"].as_str() == Some(b))
            .count();
        assert_eq!(n, 1, "{e}: {text}");
    }
    assert!(
        !text.contains("/a/cairn5") && text.contains("say done"),
        "{text}"
    );
}
