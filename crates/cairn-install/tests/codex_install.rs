//! `cairn install codex` against hand-edited Codex configurations in a temporary Codex home
//! (`<tmp>/.codex/config.toml`): the legacy `codex_hooks` feature key, `[hooks]` events written
//! as inline arrays, and the trust entries Codex writes for each handler by position.

use std::path::{Path, PathBuf};

use cairn_install::{EVENTS, Plan, Record, plan_codex};
use toml_edit::{DocumentMut, Item, Value};

const CAIRN: &str = "/opt/bin/cairn hook --agent codex";

/// A Codex home laid out as Codex keeps it, with `config.toml` from a fixture.
struct CodexHome {
    _dir: tempfile::TempDir,
    config: PathBuf,
    hooks_json: PathBuf,
}

impl CodexHome {
    fn with_fixture(name: &str) -> (CodexHome, String) {
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/codex")
            .join(name);
        let template = std::fs::read_to_string(&fixture).unwrap();
        let home = CodexHome::with_text("");
        let text = template.replace("@CONFIG@", &home.config.display().to_string());
        std::fs::write(&home.config, &text).unwrap();
        (home, text)
    }

    fn with_text(text: &str) -> CodexHome {
        let dir = tempfile::tempdir().unwrap();
        let codex = dir.path().join(".codex");
        std::fs::create_dir_all(&codex).unwrap();
        let config = codex.join("config.toml");
        std::fs::write(&config, text).unwrap();
        CodexHome {
            hooks_json: codex.join("hooks.json"),
            config,
            _dir: dir,
        }
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.config).unwrap()
    }

    fn plan(&self, uninstall: bool, previous: Option<&Record>) -> Plan {
        plan_codex(
            &self.config,
            Some(&self.hooks_json),
            CAIRN,
            uninstall,
            previous,
        )
        .unwrap()
    }

    /// Installs, checks that a second install changes nothing, and returns the record.
    fn install(&self) -> Record {
        let plan = self.plan(false, None);
        plan.apply().unwrap();
        let record = plan.record.clone().unwrap();
        let again = self.plan(false, Some(&record));
        assert!(!again.changes_file(), "second install: {}", again.diff());
        record
    }

    fn uninstall(&self, record: &Record) -> Plan {
        let plan = self.plan(true, Some(record));
        plan.apply().unwrap();
        plan
    }

    /// What Codex's `/hooks` writes when the user trusts a hook: a `[hooks.state."<key>"]`
    /// table appended to the file.
    fn trust(&self, label: &str, group: usize, handler: usize, hash: &str) {
        let mut text = self.text();
        text.push_str(&format!(
            "\n[hooks.state.\"{}:{label}:{group}:{handler}\"]\ntrusted_hash = \"{hash}\"\n",
            self.config.display()
        ));
        std::fs::write(&self.config, text).unwrap();
    }

    fn doc(&self) -> DocumentMut {
        self.text().parse().unwrap()
    }

    fn state_keys(&self) -> Vec<String> {
        let prefix = format!("{}:", self.config.display());
        let doc = self.doc();
        let Some(state) = doc
            .get("hooks")
            .and_then(|h| h.get("state"))
            .and_then(Item::as_table_like)
        else {
            return Vec::new();
        };
        state
            .iter()
            .map(|(k, _)| k.strip_prefix(&prefix).unwrap_or(k).to_owned())
            .collect()
    }
}

fn label(event: &str) -> &'static str {
    match event {
        "SessionStart" => "session_start",
        "UserPromptSubmit" => "user_prompt_submit",
        "Stop" => "stop",
        "PreToolUse" => "pre_tool_use",
        other => panic!("no label for {other}"),
    }
}

/// The commands of an event's handlers, by (group, handler) position as Codex numbers them,
/// whichever way the groups and handlers are written.
fn handlers(doc: &DocumentMut, event: &str) -> Vec<(usize, usize, String)> {
    fn tables(item: &Item) -> Vec<&dyn toml_edit::TableLike> {
        match item {
            Item::ArrayOfTables(a) => a.iter().map(|t| t as &dyn toml_edit::TableLike).collect(),
            Item::Value(Value::Array(a)) => a
                .iter()
                .map(|v| v.as_inline_table().unwrap() as &dyn toml_edit::TableLike)
                .collect(),
            other => panic!("not a list of tables: {other:?}"),
        }
    }
    let Some(groups) = doc.get("hooks").and_then(|h| h.get(event)) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (g, group) in tables(groups).into_iter().enumerate() {
        for (h, handler) in tables(group.get("hooks").unwrap()).into_iter().enumerate() {
            let command = handler.get("command").and_then(Item::as_str).unwrap();
            out.push((g, h, command.to_owned()));
        }
    }
    out
}

fn cairn_positions(doc: &DocumentMut) -> Vec<(&'static str, usize, usize)> {
    let mut out = Vec::new();
    for event in EVENTS {
        for (g, h, c) in handlers(doc, event) {
            if c == CAIRN {
                out.push((label(event), g, h));
            }
        }
    }
    out
}

// ------------------------------------------------------------------ D4: `codex_hooks = false`

#[test]
fn legacy_codex_hooks_false_is_switched_on_and_back() {
    let (home, original) = CodexHome::with_fixture("legacy-flag.config.toml");
    let plan = home.plan(false, None);
    let notes = plan.notes.join("\n");
    assert!(
        notes.contains("`[features] codex_hooks = false`") && notes.contains("every Codex hook"),
        "the install says the legacy key turns every hook off: {notes}"
    );
    assert!(
        notes.contains("`/usr/local/bin/lint-check --quiet`"),
        "and which other hook runs again: {notes}"
    );
    plan.apply().unwrap();
    let installed = home.text();
    assert!(
        installed
            .contains("codex_hooks = true  # legacy key: I turned hooks off while debugging\n"),
        "switched on in place, comment kept: {installed}"
    );
    assert!(
        !installed.contains("\nhooks = "),
        "no second key: {installed}"
    );
    let record = plan.record.clone().unwrap();
    let again = home.plan(false, Some(&record));
    assert!(
        !again.changes_file() && again.notes.is_empty(),
        "{:?}",
        again.notes
    );

    let un = home.uninstall(&record);
    assert!(
        un.notes
            .join(" ")
            .contains("`[features] codex_hooks` is `false` again"),
        "{:?}",
        un.notes
    );
    assert_eq!(home.text(), original);
}

#[test]
fn hooks_key_decides_over_the_legacy_key() {
    // Codex applies `[features]` in key order: `codex_hooks`, then `hooks`, which wins.
    let on = "[features]\nhooks = true\ncodex_hooks = false\n";
    let home = CodexHome::with_text(on);
    let plan = home.plan(false, None);
    assert!(plan.notes.is_empty(), "hooks run already: {:?}", plan.notes);
    let after = plan.after.clone().unwrap();
    assert!(
        after.starts_with(on),
        "the flags are left as they are: {after}"
    );

    let both_off = "[features]\nhooks = false\ncodex_hooks = false # old\n";
    let home = CodexHome::with_text(both_off);
    let plan = home.plan(false, None);
    let after = plan.after.clone().unwrap();
    assert!(
        after.starts_with("[features]\nhooks = true\ncodex_hooks = false # old\n"),
        "only the deciding key changes: {after}"
    );
    plan.apply().unwrap();
    home.uninstall(plan.record.as_ref().unwrap());
    assert_eq!(home.text(), both_off);
}

// ----------------------------------------------------------------- D8: inline `[hooks]` events

#[test]
fn inline_hook_arrays_get_cairns_group_appended_and_keep_their_form() {
    let (home, original) = CodexHome::with_fixture("inline-hooks.config.toml");
    let before = home.doc();
    let record = home.install();
    let installed = home.text();

    // The user's lines are all still there, comments included (a one-line array goes on
    // with cairn's group before its closing bracket).
    for line in original.lines().filter(|l| !l.trim().is_empty()) {
        let probe = line.strip_suffix(']').unwrap_or(line);
        assert!(
            installed.contains(probe),
            "lost {line:?} from:\n{installed}"
        );
    }
    let doc = home.doc();
    // The user's groups keep their index (Codex keys their trust by it); cairn's comes last.
    for event in ["Stop", "SessionStart", "PreToolUse"] {
        let old = handlers(&before, event);
        let new = handlers(&doc, event);
        assert_eq!(&new[..old.len()], &old[..], "{event}: {installed}");
    }
    assert_eq!(
        handlers(&doc, "Stop"),
        [
            (0, 0, "notify-send codex-done".to_owned()),
            (1, 0, CAIRN.to_owned())
        ]
    );
    assert_eq!(
        handlers(&doc, "SessionStart").last(),
        Some(&(1, 0, CAIRN.to_owned()))
    );
    assert_eq!(
        handlers(&doc, "UserPromptSubmit"),
        [(0, 0, CAIRN.to_owned())]
    );
    assert_eq!(handlers(&doc, "PreToolUse").len(), 2);
    // A new event is written like the others: inline, in `[hooks]`, before the trust tables.
    assert!(
        installed.contains(&format!(
            "  {{ hooks = [{{ type = \"command\", command = \"{CAIRN}\", timeout = 30 }}] }},\n]\nUserPromptSubmit = [{{ hooks = [{{ type = \"command\", command = \"{CAIRN}\", timeout = 30 }}] }}]\n\n[hooks.state."
        )),
        "{installed}"
    );
    // Still inline: the Stop line now holds both groups.
    assert!(
        installed.contains(&format!(
            "Stop = [{{ hooks = [{{ type = \"command\", command = \"notify-send codex-done\", timeout = 5 }}] }}, {{ hooks = [{{ type = \"command\", command = \"{CAIRN}\", timeout = 30 }}] }}]"
        )),
        "{installed}"
    );
    assert!(
        installed.contains(&format!(
            "  {{ matcher = \"startup\", hooks = [{{ type = \"command\", command = \"~/bin/print-oncall.sh\", timeout = 5 }}] }},\n  {{ hooks = [{{ type = \"command\", command = \"{CAIRN}\", timeout = 30 }}] }},\n]"
        )),
        "a multi-line array gets a line of its own: {installed}"
    );

    home.uninstall(&record);
    assert_eq!(home.text(), original);
}

#[test]
fn a_cairn_handler_inside_a_users_inline_group_is_updated_then_removed_alone() {
    let original = "[hooks]\nStop = [\n  { hooks = [{ type = \"command\", command = \"say done\" }, { type = \"command\", command = \"/old/cairn hook --agent codex\", timeout = 30 }] },\n  { hooks = [{ type = \"command\", command = \"/older/cairn hook --agent codex\" }] },\n]\n";
    let home = CodexHome::with_text(original);
    let record = home.install();
    let doc = home.doc();
    assert_eq!(
        handlers(&doc, "Stop"),
        [(0, 0, "say done".to_owned()), (0, 1, CAIRN.to_owned())],
        "the moved binary is updated in place, the duplicate group goes: {}",
        home.text()
    );
    home.uninstall(&record);
    let doc = home.doc();
    assert_eq!(handlers(&doc, "Stop"), [(0, 0, "say done".to_owned())]);
    assert!(
        doc["hooks"].get("SessionStart").is_none(),
        "{}",
        home.text()
    );
}

#[test]
fn table_groups_with_inline_handler_lists_are_read_too() {
    let original = "[[hooks.Stop]]\nhooks = [{ type = \"command\", command = \"say done\" }, { type = \"command\", command = \"/old/cairn hook --agent codex\" }]\n";
    let home = CodexHome::with_text(original);
    let record = home.install();
    assert_eq!(
        handlers(&home.doc(), "Stop"),
        [(0, 0, "say done".to_owned()), (0, 1, CAIRN.to_owned())],
        "{}",
        home.text()
    );
    home.uninstall(&record);
    assert_eq!(
        handlers(&home.doc(), "Stop"),
        [(0, 0, "say done".to_owned())]
    );
}

// ---------------------------------------------------------- D9: trust entries of cairn's hooks

#[test]
fn uninstall_after_trusting_restores_the_file() {
    for fixture in ["legacy-flag.config.toml", "inline-hooks.config.toml"] {
        let (home, original) = CodexHome::with_fixture(fixture);
        let record = home.install();
        let positions = cairn_positions(&home.doc());
        assert_eq!(positions.len(), 3, "{fixture}: {}", home.text());
        for (label, g, h) in positions {
            home.trust(label, g, h, "sha256:cafe");
        }
        home.uninstall(&record);
        assert_eq!(home.text(), original, "{fixture}");
    }
}

#[test]
fn uninstall_moves_the_trust_of_a_users_later_hook_with_it() {
    let (home, _) = CodexHome::with_fixture("legacy-flag.config.toml");
    let record = home.install();
    assert_eq!(
        handlers(&home.doc(), "Stop"),
        [
            (0, 0, "/usr/local/bin/lint-check --quiet".to_owned()),
            (1, 0, CAIRN.to_owned())
        ]
    );
    for (label, g, h) in cairn_positions(&home.doc()) {
        home.trust(label, g, h, "sha256:cafe");
    }
    // The user adds a hook after cairn's and trusts it: it is the third Stop group.
    let mut text = home.text();
    text.push_str(
        "\n[[hooks.Stop]]\n[[hooks.Stop.hooks]]\ntype = \"command\"\ncommand = \"say second\"\n",
    );
    std::fs::write(&home.config, text).unwrap();
    assert_eq!(handlers(&home.doc(), "Stop")[2].2, "say second");
    home.trust("stop", 2, 0, "sha256:5ec0d");

    home.uninstall(&record);
    let doc = home.doc();
    assert_eq!(
        handlers(&doc, "Stop"),
        [
            (0, 0, "/usr/local/bin/lint-check --quiet".to_owned()),
            (1, 0, "say second".to_owned())
        ]
    );
    assert_eq!(
        home.state_keys(),
        ["stop:0:0", "stop:1:0"],
        "{}",
        home.text()
    );
    let key = format!("{}:stop:1:0", home.config.display());
    assert_eq!(
        doc["hooks"]["state"][key.as_str()]["trusted_hash"].as_str(),
        Some("sha256:5ec0d"),
        "the user's hook keeps its trust at its new position: {}",
        home.text()
    );
}

#[test]
fn trust_of_other_files_and_unknown_positions_is_left_alone() {
    let (home, _) = CodexHome::with_fixture("legacy-flag.config.toml");
    let record = home.install();
    for (label, g, h) in cairn_positions(&home.doc()) {
        home.trust(label, g, h, "sha256:cafe");
    }
    let mut text = home.text();
    let json = home.hooks_json.display();
    text.push_str(&format!(
        "\n[hooks.state.\"{json}:stop:1:0\"]\ntrusted_hash = \"sha256:json\"\n\n[hooks.state.\"{}:stop:7:0\"]\nenabled = false\n",
        home.config.display()
    ));
    std::fs::write(&home.config, text).unwrap();
    home.uninstall(&record);
    let after = home.text();
    assert!(
        after.contains(&format!("[hooks.state.\"{json}:stop:1:0\"]")),
        "{after}"
    );
    assert!(after.contains(":stop:7:0\"]\nenabled = false"), "{after}");
    assert!(!after.contains(":session_start:"), "{after}");
}
