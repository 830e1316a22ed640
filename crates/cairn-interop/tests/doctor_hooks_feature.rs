//! `cairn doctor` on a Codex home whose `[features]` switch hooks off, under the flag's name
//! `hooks` or its old name `codex_hooks` (which Codex still reads; `hooks` wins when both are
//! set, see `cairn_install::codex_toml`).

use std::path::Path;

use cairn_interop::doctor::{Check, CheckStatus, DoctorRequest, run};

const CAIRN_HOOKS: &str = r#"
[[hooks.SessionStart]]
[[hooks.SessionStart.hooks]]
type = "command"
command = "/opt/bin/cairn hook --agent codex"
timeout = 30

[[hooks.Stop]]
[[hooks.Stop.hooks]]
type = "command"
command = "/opt/bin/cairn hook --agent codex"
timeout = 30
"#;

/// The `codex.hooks` checks for a Codex home whose config.toml starts with `features`.
fn hooks_checks(features: &str) -> (Vec<Check>, String) {
    let home = tempfile::tempdir().unwrap();
    let codex = home.path().join(".codex");
    let claude = home.path().join(".claude");
    std::fs::create_dir_all(&codex).unwrap();
    std::fs::create_dir_all(claude.join("projects")).unwrap();
    let config = codex.join("config.toml");
    std::fs::write(&config, format!("{features}{CAIRN_HOOKS}")).unwrap();
    let report = run(&DoctorRequest {
        claude_root: claude,
        home: Some(home.path().to_path_buf()),
        codex_home: codex,
    });
    let checks = report
        .checks
        .into_iter()
        .filter(|c| c.id == "codex.hooks")
        .collect();
    (checks, display(&config))
}

fn display(p: &Path) -> String {
    p.display().to_string()
}

fn switched_off(checks: &[Check]) -> Option<&Check> {
    checks
        .iter()
        .find(|c| c.status == CheckStatus::Warn && c.message.contains("turns every hook off"))
}

#[test]
fn the_old_flag_name_switching_hooks_off_is_reported() {
    let (checks, config) = hooks_checks("[features]\ncodex_hooks = false  # off while debugging\n");
    let c = switched_off(&checks).unwrap_or_else(|| panic!("no warning in {checks:#?}"));
    assert!(
        c.message.contains("`[features] codex_hooks = false`")
            && c.message.contains("old name of `hooks`"),
        "{}",
        c.message
    );
    let fix = c.fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains("cairn install codex") && fix.contains("`codex_hooks = false`"),
        "{fix}"
    );
    assert_eq!(c.path.as_deref(), Some(config.as_str()));
}

#[test]
fn hooks_true_overrides_the_old_name() {
    let (checks, _) = hooks_checks("[features]\nhooks = true\ncodex_hooks = false\n");
    assert!(switched_off(&checks).is_none(), "{checks:#?}");
}

#[test]
fn both_names_off_are_named_in_the_fix() {
    let (checks, _) = hooks_checks("[features]\ncodex_hooks = false\nhooks = false\n");
    let c = switched_off(&checks).unwrap_or_else(|| panic!("no warning in {checks:#?}"));
    assert!(
        c.message.contains("`[features] hooks = false`"),
        "{}",
        c.message
    );
    let fix = c.fix.as_deref().unwrap_or_default();
    assert!(
        fix.contains("`hooks = false` and `codex_hooks = false`"),
        "both must go, or the old name takes over: {fix}"
    );
}

#[test]
fn hooks_on_by_default() {
    let (checks, _) = hooks_checks("model = \"o3\"\n");
    assert!(switched_off(&checks).is_none(), "{checks:#?}");
}
