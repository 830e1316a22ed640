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
    let plan = plan_codex(&p, XCMD, false, None).unwrap();
    plan.apply().unwrap();
    let installed = std::fs::read_to_string(&p).unwrap();
    let again = plan_codex(&p, XCMD, false, plan.record.as_ref()).unwrap();
    assert!(!again.changes_file(), "{}", again.diff());
    let un = plan_codex(&p, XCMD, true, plan.record.as_ref()).unwrap();
    un.apply().unwrap();
    assert_eq!(std::fs::read_to_string(&p).unwrap(), original);
    installed
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
}

#[test]
fn codex_fresh_file_is_removed_again() {
    let d = tempfile::tempdir().unwrap();
    let p = d.path().join("config.toml");
    let plan = plan_codex(&p, XCMD, false, None).unwrap();
    plan.apply().unwrap();
    assert!(p.exists());
    plan_codex(&p, XCMD, true, plan.record.as_ref())
        .unwrap()
        .apply()
        .unwrap();
    assert!(!p.exists());
}

#[test]
fn codex_broken_toml_names_the_line() {
    let d = tempfile::tempdir().unwrap();
    let p = write(d.path(), "config.toml", "model = \"x\"\n[tui\n");
    let e = plan_codex(&p, XCMD, false, None).unwrap_err().to_string();
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
    assert!(!is_cairn_command(
        "notcairn hook --agent claude",
        Target::Claude
    ));
}
