//! Wiring cairn's hooks into the agents' user configuration, and taking them out again.
//!
//! This crate owns the edits to Claude Code's `<root>/settings.json` (the `hooks` key; every
//! other byte of the file is kept, because the JSON is edited in place by byte spans, see
//! [`json_span`]) and to Codex's `<home>/config.toml` (`[hooks]` events edited with `toml_edit`,
//! so comments and formatting survive, in the form the user wrote them, `[[hooks.<Event>]]`
//! tables or inline arrays; `[features] hooks`, or its old name `codex_hooks`, when the user had
//! turned hooks off; see [`codex_toml`]). Each change is computed as a [`Plan`] (before/after
//! text, a unified diff for `--dry-run`) and applied atomically with the file's mode, owner
//! and group kept (`cairn-atomic`).
//! Installing twice changes nothing; uninstalling removes exactly the handlers that run
//! `<cairn> … hook --agent <agent>`, the `[hooks.state]` trust entries Codex wrote for them
//! (entries of the user's handlers that moved up follow them), and what the [`Manifest`] says
//! cairn added. cairn's group is always appended after the user's, so Codex's positional trust
//! keys of the user's hooks keep pointing at them. cairn's handlers are recognised by the command
//! shape cairn writes ([`is_cairn_command`]), never by the binary's file name, so a renamed or
//! moved binary replaces its old handler, and a second cairn handler for an event is dropped.
//! Codex also runs the handlers in `<home>/hooks.json` and warns at every start when a layer
//! holds hooks in both files: cairn's handlers go into `hooks.json` when that is where the
//! user's hooks are (edited by byte spans like `settings.json`, the same shape), else into
//! `config.toml`, and are never left in both ([`plan_codex`]). It must not touch any other
//! file, or decide where those files are: callers pass the paths.

pub mod codex_toml;
pub mod json_span;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use codex_toml::{
    HOOKS_FEATURE_KEY, LEGACY_HOOKS_FEATURE_KEY, Moves, TableList, follow_moves_in_state,
    set_feature, strip_groups,
};
pub use codex_toml::{HooksFeature, event_label};
use json_span::{Edit, Node, append_to, apply, indent_unit, parse, remove_from};

/// The hook events cairn installs, in the order they are written.
pub const EVENTS: [&str; 3] = ["SessionStart", "UserPromptSubmit", "Stop"];
/// The timeout written for each handler, in seconds (the hook returns in milliseconds).
pub const TIMEOUT_SECS: i64 = 30;

/// The two agents whose configuration cairn edits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Target {
    Claude,
    Codex,
}

impl Target {
    pub fn as_str(self) -> &'static str {
        match self {
            Target::Claude => "claude",
            Target::Codex => "codex",
        }
    }
}

/// Why a configuration cannot be edited.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot write {}: {source}", path.display())]
    Write {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{} is not valid {kind} (line {line}, column {column}): {message}; fix it first, cairn does not rewrite a file it cannot read", path.display())]
    Syntax {
        path: PathBuf,
        kind: &'static str,
        line: usize,
        column: usize,
        message: String,
    },
    #[error("{} has an unexpected shape: {}; fix it by hand first", .1.display(), .0)]
    Shape(String, PathBuf),
}

/// What cairn added that the files themselves cannot tell (kept in cairn's data dir).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Manifest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub claude: Option<Record>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub codex: Option<Record>,
}

/// One agent's install record.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Record {
    pub path: PathBuf,
    /// The file did not exist before cairn wrote it.
    #[serde(default)]
    pub created_file: bool,
    /// Codex: `[features] hooks` was `false` and cairn set it to `true`.
    #[serde(default)]
    pub enabled_hooks_feature: bool,
    /// Codex: `[features] codex_hooks` (the old name of `hooks`) was `false`, with no `hooks`
    /// key to override it, and cairn set it to `true`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub enabled_legacy_hooks_feature: bool,
    /// Claude Code: containers that were empty before cairn put its hooks in them (`"hooks":
    /// {}`, `"Stop": []`), with their text, so that uninstalling leaves them as they were
    /// instead of removing them with cairn's last handler.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filled_empty: Vec<FilledContainer>,
    /// Codex: the same for `<home>/hooks.json`, when cairn's handlers went there.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hooks_json_filled_empty: Vec<FilledContainer>,
}

/// A JSON container that was empty before cairn filled it: `["hooks"]` or `["hooks", EVENT]`,
/// and its text as it was (`{}`, `[]`, or with the whitespace inside it); `[]` for a whole file
/// that was empty (0 bytes, or only whitespace), with those bytes.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilledContainer {
    pub path: Vec<String>,
    pub text: String,
}

/// The record of a settings file that held no JSON at all (0 bytes, or only whitespace)
/// before cairn wrote its hooks into it: the whole document, path `[]`, and its bytes.
fn blank_document(filled: &[FilledContainer]) -> Option<&FilledContainer> {
    filled.iter().find(|k| k.path.is_empty())
}

/// The empty containers of a settings file that installing cairn's hooks fills.
fn empty_hook_containers(text: &str) -> Vec<FilledContainer> {
    let Some(Node::Object { members, .. }) = parse(text) else {
        return Vec::new();
    };
    let Some(hooks) = members.iter().find(|m| m.key == "hooks").map(|m| &m.value) else {
        return Vec::new();
    };
    let span = |n: &Node| text[n.start()..n.end()].to_owned();
    match hooks {
        Node::Object { members, .. } if members.is_empty() => vec![FilledContainer {
            path: vec!["hooks".into()],
            text: span(hooks),
        }],
        Node::Object { members, .. } => members
            .iter()
            .filter(|m| EVENTS.contains(&m.key.as_str()))
            .filter(|m| matches!(&m.value, Node::Array { items, .. } if items.is_empty()))
            .map(|m| FilledContainer {
                path: vec!["hooks".into(), m.key.clone()],
                text: span(&m.value),
            })
            .collect(),
        _ => Vec::new(),
    }
}

impl Manifest {
    pub fn load(path: &Path) -> Manifest {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| serde_json::from_str(&s).ok())
            .unwrap_or_default()
    }

    pub fn get(&self, t: Target) -> Option<&Record> {
        match t {
            Target::Claude => self.claude.as_ref(),
            Target::Codex => self.codex.as_ref(),
        }
    }

    pub fn set(&mut self, t: Target, r: Option<Record>) {
        match t {
            Target::Claude => self.claude = r,
            Target::Codex => self.codex = r,
        }
    }
}

/// A computed change to one file.
#[derive(Debug, Clone, PartialEq)]
pub struct FileChange {
    pub path: PathBuf,
    /// The file now (`None`: it does not exist).
    pub before: Option<String>,
    /// The file after (`None`: delete it).
    pub after: Option<String>,
}

impl FileChange {
    pub fn changes_file(&self) -> bool {
        self.before != self.after
    }

    /// A unified diff of the change (empty when nothing changes).
    pub fn diff(&self) -> String {
        if !self.changes_file() {
            return String::new();
        }
        let name = self.path.display().to_string();
        let a = self.before.as_deref().unwrap_or("");
        let b = self.after.as_deref().unwrap_or("");
        similar::TextDiff::from_lines(a, b)
            .unified_diff()
            .context_radius(3)
            .header(
                if self.before.is_some() {
                    &name
                } else {
                    "/dev/null"
                },
                if self.after.is_some() {
                    &name
                } else {
                    "/dev/null"
                },
            )
            .to_string()
    }

    /// Writes the change (atomically; an existing file keeps its mode, owner and group, a
    /// symlink its target, and a new file gets the umask's default mode, as the agent gives
    /// its own).
    pub fn apply(&self) -> Result<(), InstallError> {
        if !self.changes_file() {
            return Ok(());
        }
        let target = std::fs::canonicalize(&self.path).unwrap_or_else(|_| self.path.clone());
        let werr = |source| InstallError::Write {
            path: target.clone(),
            source,
        };
        match &self.after {
            None => match std::fs::remove_file(&target) {
                Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(werr(e)),
                _ => Ok(()),
            },
            // The agent's file: it keeps its mode, owner and group; a new one gets the
            // mode the agent would give it.
            Some(text) => {
                cairn_atomic::write_atomic(&target, text.as_bytes(), cairn_atomic::NewMode::Umask)
                    .map_err(werr)
            }
        }
    }
}

/// A computed change to an agent's hook configuration: its main file (Claude Code's
/// `settings.json`, Codex's `config.toml`) and, for Codex, `hooks.json` beside it.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub target: Target,
    pub path: PathBuf,
    /// The file now (`None`: it does not exist).
    pub before: Option<String>,
    /// The file after (`None`: delete it).
    pub after: Option<String>,
    /// The manifest record after applying.
    pub record: Option<Record>,
    /// What the user should know about this change (printed with it, dry run included).
    pub notes: Vec<String>,
    /// Codex: the change to `<home>/hooks.json`, when it holds (or held) cairn's handlers.
    pub also: Option<FileChange>,
    /// The file that holds cairn's handlers once the plan is applied (Codex: `hooks.json`
    /// when that is where the user's hooks are).
    pub hooks_in: PathBuf,
    /// Write [`Plan::also`] first: it is the file that gains cairn's handlers, so that a
    /// failure between the two writes leaves them in both files, never in neither.
    also_first: bool,
}

impl Plan {
    fn main(&self) -> FileChange {
        FileChange {
            path: self.path.clone(),
            before: self.before.clone(),
            after: self.after.clone(),
        }
    }

    /// The changes in the order they are written.
    pub fn changes(&self) -> Vec<FileChange> {
        let mut v = vec![self.main()];
        if let Some(a) = &self.also {
            if self.also_first {
                v.insert(0, a.clone());
            } else {
                v.push(a.clone());
            }
        }
        v
    }

    pub fn changes_file(&self) -> bool {
        self.changes().iter().any(FileChange::changes_file)
    }

    /// A unified diff of the change, file by file (empty when nothing changes).
    pub fn diff(&self) -> String {
        self.changes().iter().map(FileChange::diff).collect()
    }

    /// Writes every change (see [`FileChange::apply`]).
    pub fn apply(&self) -> Result<(), InstallError> {
        for c in self.changes() {
            c.apply()?;
        }
        Ok(())
    }
}

/// Whether a hook command is cairn's hook for `target`.
///
/// Recognised by what cairn writes, not by the binary's name (a renamed, copied or versioned
/// binary writes the same shape): `<program> [--data-dir DIR] hook --agent <target>` as plain
/// shell words, where the options between the program and `hook` may only be cairn's own root
/// flags (`--data-dir`, `--claude-dir`, `--codex-home`, each `FLAG VALUE` or `FLAG=VALUE`). A
/// program named `cairn`, `cairn.*` or `cairn-*` whose command ends in ` hook --agent <target>`
/// is also recognised (a hand-written line such as `"$HOME/bin/cairn" hook --agent codex`).
pub fn is_cairn_command(cmd: &str, target: Target) -> bool {
    let cmd = cmd.trim();
    if let Some(words) = shell_words(cmd)
        && is_hook_argv(&words, target)
    {
        return true;
    }
    let first = if let Some(rest) = cmd.strip_prefix('\'') {
        rest.split('\'').next().unwrap_or("")
    } else if let Some(rest) = cmd.strip_prefix('"') {
        rest.split('"').next().unwrap_or("")
    } else {
        cmd.split_whitespace().next().unwrap_or("")
    };
    let prog = first.rsplit(['/', '\\']).next().unwrap_or(first);
    (prog == "cairn" || prog.starts_with("cairn.") || prog.starts_with("cairn-"))
        && cmd.ends_with(&format!(" hook --agent {}", target.as_str()))
}

/// The global flags of cairn that take a directory (the ones a hook command may carry).
const ROOT_FLAGS: [&str; 3] = ["--data-dir", "--claude-dir", "--codex-home"];

/// `<program> [ROOT_FLAG VALUE | ROOT_FLAG=VALUE]… hook --agent <target>`.
fn is_hook_argv(words: &[String], target: Target) -> bool {
    let Some((prog, mut rest)) = words.split_first() else {
        return false;
    };
    // Not an option, and not an environment assignment (`VAR=value cmd …`).
    let assignment = prog.split_once('=').is_some_and(|(name, _)| {
        !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
    });
    if prog.is_empty() || prog.starts_with('-') || assignment {
        return false;
    }
    loop {
        match rest {
            [flag, value, tail @ ..]
                if ROOT_FLAGS.contains(&flag.as_str()) && !value.is_empty() =>
            {
                rest = tail;
            }
            [flag, tail @ ..]
                if ROOT_FLAGS.iter().any(|f| {
                    flag.strip_prefix(f)
                        .and_then(|v| v.strip_prefix('='))
                        .is_some_and(|v| !v.is_empty())
                }) =>
            {
                rest = tail;
            }
            _ => break,
        }
    }
    match rest {
        [hook, agent, t] => hook == "hook" && agent == "--agent" && t == target.as_str(),
        [hook, agent] => hook == "hook" && agent.strip_prefix("--agent=") == Some(target.as_str()),
        _ => false,
    }
}

/// Splits a command line into words as a POSIX shell would, for lines made of plain words
/// only: single quotes, double quotes (`\` escapes `"`, `\`, `$` and `` ` `` inside them) and
/// `\` outside quotes. `None` for anything a shell would expand or interpret instead
/// (unquoted `;&|<>()*?[]{}#`, `$` or `` ` `` anywhere, a line break, an unclosed quote).
fn shell_words(line: &str) -> Option<Vec<String>> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            ' ' | '\t' => {
                if let Some(w) = word.take() {
                    words.push(w);
                }
            }
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '\'' => break,
                        c => w.push(c),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next()? {
                        '"' => break,
                        '$' | '`' => return None,
                        '\\' => match chars.next()? {
                            c @ ('"' | '\\' | '$' | '`') => w.push(c),
                            '\n' => {}
                            c => {
                                w.push('\\');
                                w.push(c);
                            }
                        },
                        c => w.push(c),
                    }
                }
            }
            '\\' => match chars.next()? {
                '\n' => {}
                c => word.get_or_insert_with(String::new).push(c),
            },
            ';' | '&' | '|' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | ']' | '{' | '}' | '$'
            | '`' | '\n' | '\r' => return None,
            '#' if word.is_none() => return None,
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Some(words)
}

fn read_optional(path: &Path) -> Result<Option<String>, InstallError> {
    match std::fs::read_to_string(path) {
        Ok(s) => Ok(Some(s)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(InstallError::Read {
            path: path.to_path_buf(),
            source,
        }),
    }
}

fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let col = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, col)
}

// ---------------------------------------------------------------- Claude Code settings.json

fn json_str(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// A matcher group running `command`, rendered with `base` indentation for its inner lines.
fn claude_group(command: &str, base: &str, unit: &str) -> String {
    let i1 = format!("{base}{unit}");
    let i2 = format!("{i1}{unit}");
    let i3 = format!("{i2}{unit}");
    format!(
        "{{\n{i1}\"hooks\": [\n{i2}{{\n{i3}\"type\": \"command\",\n{i3}\"command\": {},\n{i3}\"timeout\": {TIMEOUT_SECS}\n{i2}}}\n{i1}]\n{base}}}",
        json_str(command)
    )
}

fn syntax_json(path: &Path, text: &str) -> Result<(), InstallError> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        Ok(_) => Err(InstallError::Shape(
            "the top level is not a JSON object".into(),
            path.to_path_buf(),
        )),
        Err(e) => Err(InstallError::Syntax {
            path: path.to_path_buf(),
            kind: "JSON",
            line: e.line(),
            column: e.column(),
            message: e.to_string(),
        }),
    }
}

/// The commands of cairn handlers in a matcher group: (handler index, command node).
fn cairn_handlers<'a>(text: &str, group: &'a Node, target: Target) -> Vec<(usize, &'a Node)> {
    let Some(hooks) = group.member("hooks") else {
        return Vec::new();
    };
    let Node::Array { items, .. } = &hooks.value else {
        return Vec::new();
    };
    items
        .iter()
        .enumerate()
        .filter_map(|(i, h)| {
            let c = &h.member("command")?.value;
            is_cairn_command(&c.as_str(text)?, target).then_some((i, c))
        })
        .collect()
}

/// Plans installing (or, with `uninstall`, removing) cairn's hooks in Claude Code's settings.
pub fn plan_claude(
    settings: &Path,
    command: &str,
    uninstall: bool,
    previous: Option<&Record>,
) -> Result<Plan, InstallError> {
    let before = read_optional(settings)?;
    let mut record = Record {
        path: settings.to_path_buf(),
        created_file: previous.is_some_and(|r| r.created_file),
        enabled_hooks_feature: false,
        enabled_legacy_hooks_feature: false,
        filled_empty: previous.map(|r| r.filled_empty.clone()).unwrap_or_default(),
        hooks_json_filled_empty: Vec::new(),
    };
    let after = if uninstall {
        match &before {
            None => None,
            Some(text) if text.trim().is_empty() => Some(text.clone()),
            Some(text) => {
                syntax_json(settings, text)?;
                let (out, _) = json_strip(
                    text,
                    settings,
                    Target::Claude,
                    &|_| true,
                    &record.filled_empty,
                )?;
                let empty = serde_json::from_str::<serde_json::Value>(&out)
                    .ok()
                    .and_then(|v| v.as_object().map(|o| o.is_empty()))
                    .unwrap_or(false);
                if empty && record.created_file {
                    None
                } else if empty && let Some(blank) = blank_document(&record.filled_empty) {
                    // The file was empty (or only whitespace) before cairn wrote its hooks.
                    Some(blank.text.clone())
                } else {
                    Some(out)
                }
            }
        }
    } else {
        match &before {
            None => {
                record.created_file = true;
                Some(claude_fresh(command))
            }
            Some(text) if text.trim().is_empty() => {
                // An empty file (0 bytes, or only whitespace) is one cairn fills whole:
                // uninstalling gives back exactly what was there.
                if record.filled_empty.is_empty() {
                    record.filled_empty = vec![FilledContainer {
                        path: Vec::new(),
                        text: text.clone(),
                    }];
                }
                Some(claude_fresh(command))
            }
            Some(text) => {
                syntax_json(settings, text)?;
                // (A re-install keeps what the first one found empty.)
                if record.filled_empty.is_empty() {
                    record.filled_empty = empty_hook_containers(text);
                }
                Some(json_add(text, command, settings, Target::Claude)?.0)
            }
        }
    };
    let mut notes = Vec::new();
    if !uninstall && before.as_deref().is_some_and(claude_hooks_disabled) {
        notes.push(format!(
            "`\"disableAllHooks\": true` in {} turns every Claude Code hook off, cairn's \
             included: set it to `false` (or remove it) for them to run; cairn leaves it as it is.",
            settings.display()
        ));
    }
    Ok(Plan {
        target: Target::Claude,
        path: settings.to_path_buf(),
        before,
        after,
        record: (!uninstall).then_some(record),
        notes,
        also: None,
        hooks_in: settings.to_path_buf(),
        also_first: false,
    })
}

/// Whether a Claude Code settings file turns every hook off (`"disableAllHooks": true`).
pub fn claude_hooks_disabled(settings_text: &str) -> bool {
    serde_json::from_str::<serde_json::Value>(settings_text)
        .ok()
        .and_then(|v| {
            v.get("disableAllHooks")
                .and_then(serde_json::Value::as_bool)
        })
        .unwrap_or(false)
}

fn claude_fresh(command: &str) -> String {
    let unit = "  ";
    let events: Vec<String> = EVENTS
        .iter()
        .map(|e| {
            format!(
                "{}: [\n{unit}{unit}{unit}{}\n{unit}{unit}]",
                json_str(e),
                claude_group(command, &format!("{unit}{unit}{unit}"), unit)
            )
        })
        .collect();
    format!(
        "{{\n{unit}\"hooks\": {{\n{unit}{unit}{}\n{unit}}}\n}}\n",
        events.join(&format!(",\n{unit}{unit}"))
    )
}

/// Adds cairn's handler for every event to a Claude-style hooks document (Claude Code's
/// `settings.json`, Codex's `hooks.json`), by byte spans: a group appended after the user's,
/// an existing handler of cairn's brought to `command`. Returns the text and where the
/// handlers that moved went (a second cairn handler of an event is dropped).
fn json_add(
    text: &str,
    command: &str,
    path: &Path,
    target: Target,
) -> Result<(String, Vec<(String, Moves)>), InstallError> {
    // One cairn handler per event: drop any second one (an older install that did not
    // recognise its own handler, or one copied in by hand).
    let (deduped, moves) = json_strip(text, path, target, &|n| n > 0, &[])?;
    let text = deduped.as_str();
    let shape = |m: &str| InstallError::Shape(m.to_owned(), path.to_path_buf());
    let root = parse(text).ok_or_else(|| shape("cannot read the JSON structure"))?;
    let unit = indent_unit(text);
    let mut edits: Vec<Edit> = Vec::new();
    match root.member("hooks") {
        None => {
            // A whole "hooks" member at the end of the top-level object.
            let base = child_indent(text, &root, &unit);
            let i1 = format!("{base}{unit}");
            let i2 = format!("{i1}{unit}");
            let events: Vec<String> = EVENTS
                .iter()
                .map(|e| {
                    format!(
                        "{}: [\n{i2}{}\n{i1}]",
                        json_str(e),
                        claude_group(command, &i2, &unit)
                    )
                })
                .collect();
            let member = format!(
                "\"hooks\": {{\n{i1}{}\n{base}}}",
                events.join(&format!(",\n{i1}"))
            );
            edits.push(append_to(text, &root, &[member], &unit));
        }
        Some(h) => {
            let hooks = &h.value;
            if !matches!(hooks, Node::Object { .. }) {
                return Err(shape("`hooks` is not an object"));
            }
            let mut new_members = Vec::new();
            for event in EVENTS {
                match hooks.member(event) {
                    None => {
                        let base = child_indent(text, hooks, &unit);
                        let i1 = format!("{base}{unit}");
                        new_members.push(format!(
                            "{}: [\n{i1}{}\n{base}]",
                            json_str(event),
                            claude_group(command, &i1, &unit)
                        ));
                    }
                    Some(m) => {
                        let Node::Array { items, .. } = &m.value else {
                            return Err(shape(&format!("`hooks.{event}` is not an array")));
                        };
                        let mut found = false;
                        for g in items {
                            for (_, c) in cairn_handlers(text, g, target) {
                                found = true;
                                if c.as_str(text).as_deref() != Some(command) {
                                    edits.push(Edit {
                                        start: c.start(),
                                        end: c.end(),
                                        text: json_str(command),
                                    });
                                }
                            }
                        }
                        if !found {
                            let base = child_indent(text, &m.value, &unit);
                            edits.push(append_to(
                                text,
                                &m.value,
                                &[claude_group(command, &base, &unit)],
                                &unit,
                            ));
                        }
                    }
                }
            }
            if !new_members.is_empty() {
                edits.push(append_to(text, hooks, &new_members, &unit));
            }
        }
    }
    Ok((apply(text, edits), moves))
}

/// The indentation of a container's children (the existing ones', or one unit deeper).
fn child_indent(text: &str, container: &Node, unit: &str) -> String {
    let first_child = match container {
        Node::Object { members, .. } => members.last().map(|m| m.key_start),
        Node::Array { items, .. } => items.last().map(Node::start),
        Node::Scalar { .. } => None,
    };
    match first_child {
        Some(p) => json_span::line_indent(text, p).to_owned(),
        None => format!("{}{unit}", json_span::line_indent(text, container.start())),
    }
}

/// Every handler of a Claude-style hooks document, event by event in file order: (event, group
/// index, handler index, whether it is cairn's). Groups and handlers are counted as Codex
/// counts them for its trust keys.
fn json_handlers(text: &str, target: Target) -> Vec<(String, usize, usize, bool)> {
    let mut out = Vec::new();
    let Some(root) = parse(text) else {
        return out;
    };
    let Some(Node::Object {
        members: events, ..
    }) = root.member("hooks").map(|m| &m.value)
    else {
        return out;
    };
    for ev in events {
        let Node::Array { items: groups, .. } = &ev.value else {
            continue;
        };
        for (gi, g) in groups.iter().enumerate() {
            let Some(Node::Array { items, .. }) = g.member("hooks").map(|m| &m.value) else {
                continue;
            };
            for (hi, h) in items.iter().enumerate() {
                let cairn = h
                    .member("command")
                    .and_then(|c| c.value.as_str(text))
                    .is_some_and(|c| is_cairn_command(&c, target));
                out.push((ev.key.clone(), gi, hi, cairn));
            }
        }
    }
    out
}

/// Removes cairn's handlers from Claude-style `hooks`: every one for which `remove(n)` holds,
/// `n` counting cairn's handlers within one event (0 for the first). A handler is removed on its
/// own when it shares its group, else its group, else its event, else the whole `hooks` member,
/// so that removing what cairn appended restores the bytes that were there before; the
/// containers in `keep` (empty before cairn filled them) are left as they were once cairn's
/// last handler in them is gone. Returns the text and, per event, where each handler went
/// (`None`: removed), for the trust entries Codex keys by position.
fn json_strip(
    text: &str,
    path: &Path,
    target: Target,
    remove: &dyn Fn(usize) -> bool,
    keep: &[FilledContainer],
) -> Result<(String, Vec<(String, Moves)>), InstallError> {
    let before = json_handlers(text, target);
    let out = json_strip_spans(text, path, target, remove, keep)?;
    if out == text {
        return Ok((out, Vec::new()));
    }
    let after = json_handlers(&out, target);
    let mut moves: Vec<(String, Moves)> = Vec::new();
    let mut events: Vec<&str> = before.iter().map(|(e, ..)| e.as_str()).collect();
    events.dedup();
    for event in events {
        let mut survivors = after
            .iter()
            .filter(|(e, ..)| e == event)
            .map(|(_, g, h, _)| (*g, *h));
        // Which of the event's handlers the strip took out: cairn's, asked by their ordinal.
        let mut ordinal = 0;
        let handlers: Vec<(usize, usize, bool)> = before
            .iter()
            .filter(|(e, ..)| e == event)
            .map(|(_, g, h, cairn)| {
                let removed = *cairn && remove(ordinal);
                ordinal += usize::from(*cairn);
                (*g, *h, removed)
            })
            .collect();
        let mut m: Moves = Vec::new();
        for (g, h, removed) in handlers {
            if removed {
                m.push(((g, h), None));
            } else {
                match survivors.next() {
                    Some(to) => m.push(((g, h), Some(to))),
                    // Not what a strip leaves: trust entries of this event are left alone.
                    None => {
                        m.clear();
                        break;
                    }
                }
            }
        }
        if !m.is_empty() && m.iter().any(|(from, to)| to.as_ref() != Some(from)) {
            moves.push((event.to_owned(), m));
        }
    }
    Ok((out, moves))
}

/// The edit of [`json_strip`]: one removal at a time, re-reading the spans after each.
fn json_strip_spans(
    text: &str,
    path: &Path,
    target: Target,
    remove: &dyn Fn(usize) -> bool,
    keep: &[FilledContainer],
) -> Result<String, InstallError> {
    let kept = |p: &[&str]| {
        keep.iter()
            .find(|k| k.path.iter().map(String::as_str).eq(p.iter().copied()))
    };
    let restore = |node: &Node, k: &FilledContainer| Edit {
        start: node.start(),
        end: node.end(),
        text: k.text.clone(),
    };
    let shape = |m: &str| InstallError::Shape(m.to_owned(), path.to_path_buf());
    let mut text = text.to_owned();
    // One removal at a time, re-reading the spans after each.
    loop {
        let root = parse(&text).ok_or_else(|| shape("cannot read the JSON structure"))?;
        let Some((hi, hooks_member)) = (match &root {
            Node::Object { members, .. } => {
                members.iter().enumerate().find(|(_, m)| m.key == "hooks")
            }
            _ => None,
        }) else {
            return Ok(text);
        };
        let hooks = &hooks_member.value;
        let Node::Object {
            members: events, ..
        } = hooks
        else {
            return Ok(text);
        };
        let mut edit = None;
        'find: for (ei, ev) in events.iter().enumerate() {
            let Node::Array { items: groups, .. } = &ev.value else {
                continue;
            };
            let mut n = 0;
            for (gi, g) in groups.iter().enumerate() {
                let Some(handlers_node) = g.member("hooks").map(|m| &m.value) else {
                    continue;
                };
                let Node::Array {
                    items: handlers, ..
                } = handlers_node
                else {
                    continue;
                };
                for (hidx, _) in cairn_handlers(&text, g, target) {
                    if !remove(n) {
                        n += 1;
                        continue;
                    }
                    edit = if handlers.len() > 1 {
                        remove_from(handlers_node, hidx)
                    } else if groups.len() > 1 {
                        remove_from(&ev.value, gi)
                    } else if let Some(k) = kept(&["hooks", ev.key.as_str()]) {
                        Some(restore(&ev.value, k))
                    } else if events.len() > 1 {
                        remove_from(hooks, ei)
                    } else if let Some(k) = kept(&["hooks"]) {
                        Some(restore(hooks, k))
                    } else {
                        remove_from(&root, hi)
                    };
                    break 'find;
                }
            }
        }
        match edit {
            Some(e) => text = apply(&text, vec![e]),
            None => return Ok(text),
        }
    }
}

// ---------------------------------------------------------------- Codex config.toml

use toml_edit::{ArrayOfTables, DocumentMut, InlineTable, Item, Table, TableLike};

/// cairn's handler: `{ type = "command", command = …, timeout = 30 }`.
fn codex_handler(command: &str) -> InlineTable {
    let mut h = InlineTable::new();
    h.insert("type", "command".into());
    h.insert("command", command.into());
    h.insert("timeout", TIMEOUT_SECS.into());
    h
}

/// A handler whose command has the shape cairn writes.
fn is_cairn_handler(handler: &dyn TableLike) -> bool {
    handler
        .get("command")
        .and_then(Item::as_str)
        .is_some_and(|c| is_cairn_command(c, Target::Codex))
}

fn toml_syntax(path: &Path, text: &str, e: &toml_edit::TomlError) -> InstallError {
    let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
    InstallError::Syntax {
        path: path.to_path_buf(),
        kind: "TOML",
        line,
        column,
        message: e.message().trim().to_owned(),
    }
}

/// What Codex's `<home>/hooks.json` holds: its text, cairn's handlers and the other tools'
/// commands. Codex reads it as `{"hooks": {<Event>: [{"matcher"?, "hooks": [{"type":
/// "command", "command", "timeout"?, …}]}]}}` (`HooksFile` in `codex-rs/config`), the same shape
/// as Claude Code's `settings.json` `hooks`, so it is edited with the same byte-span editor.
#[derive(Debug)]
struct HooksJson {
    path: PathBuf,
    text: String,
    /// The events with a cairn handler, in [`EVENTS`] order.
    cairn_events: Vec<String>,
    /// The commands of the handlers that are not cairn's.
    others: Vec<String>,
}

/// Reads `<codex home>/hooks.json` for editing. `Ok(None)`: no such file, or an empty one;
/// `Err`: a note saying why cairn leaves it alone (not JSON, or not of the shape Codex reads).
fn read_hooks_json(path: &Path, target: Target) -> Result<Option<HooksJson>, String> {
    let text = match read_optional(path) {
        Ok(Some(t)) => t,
        Ok(None) => return Ok(None),
        Err(e) => return Err(e.to_string()),
    };
    if text.trim().is_empty() {
        return Ok(None);
    }
    let v: serde_json::Value = serde_json::from_str(&text).map_err(|e| {
        format!(
            "{} is not valid JSON ({e}); cairn leaves it alone and could not check it for its hooks",
            path.display()
        )
    })?;
    let shape = |what: &str| {
        format!(
            "{} {what}, which is not the shape Codex reads; cairn leaves it alone",
            path.display()
        )
    };
    if !v.is_object() {
        return Err(shape("is not a JSON object"));
    }
    let mut out = HooksJson {
        path: path.to_path_buf(),
        text: text.clone(),
        cairn_events: Vec::new(),
        others: Vec::new(),
    };
    let events = match v.get("hooks") {
        None => return Ok(Some(out)),
        Some(serde_json::Value::Object(events)) => events,
        Some(_) => return Err(shape("has a `hooks` that is not an object")),
    };
    for (event, groups) in events {
        let commands = groups
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|g| g.get("hooks").and_then(serde_json::Value::as_array))
            .flatten()
            .filter_map(|h| h.get("command").and_then(serde_json::Value::as_str));
        for c in commands {
            if is_cairn_command(c, target) {
                if !out.cairn_events.contains(event) {
                    out.cairn_events.push(event.clone());
                }
            } else {
                out.others.push(c.to_owned());
            }
        }
    }
    out.cairn_events
        .sort_by_key(|e| EVENTS.iter().position(|k| k == e).unwrap_or(EVENTS.len()));
    Ok(Some(out))
}

/// The events of `config.toml` with a cairn handler.
fn codex_cairn_events(doc: &DocumentMut) -> Vec<String> {
    let Some(hooks) = doc.get("hooks").and_then(Item::as_table_like) else {
        return Vec::new();
    };
    hooks
        .iter()
        .filter(|(event, _)| *event != "state")
        .filter(|(_, groups)| {
            toml_tables(groups).iter().any(|g| {
                g.get("hooks")
                    .map(toml_tables)
                    .unwrap_or_default()
                    .into_iter()
                    .any(is_cairn_handler)
            })
        })
        .map(|(event, _)| event.to_owned())
        .collect()
}

/// The handler tables under one `[hooks]` entry, written as `[[…]]` tables or inline.
fn toml_tables(item: &Item) -> Vec<&dyn toml_edit::TableLike> {
    match item {
        Item::ArrayOfTables(a) => a.iter().map(|t| t as &dyn toml_edit::TableLike).collect(),
        Item::Value(toml_edit::Value::Array(a)) => a
            .iter()
            .filter_map(|v| v.as_inline_table().map(|t| t as &dyn toml_edit::TableLike))
            .collect(),
        _ => Vec::new(),
    }
}

/// The commands of handlers in `config.toml` that are not cairn's.
fn codex_other_commands(doc: &DocumentMut) -> Vec<String> {
    let Some(hooks) = doc.get("hooks").and_then(Item::as_table_like) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for (event, groups) in hooks.iter() {
        if event == "state" {
            continue;
        }
        for g in toml_tables(groups) {
            for h in g.get("hooks").map(toml_tables).unwrap_or_default() {
                if let Some(c) = h.get("command").and_then(Item::as_str)
                    && !is_cairn_command(c, Target::Codex)
                {
                    out.push(c.to_owned());
                }
            }
        }
    }
    out
}

/// `toml_edit` writes `\n` line ends: a file the user keeps with `\r\n` gets them back on
/// every line, a file that ends without a line break keeps ending so, and a byte-order mark
/// stays (an uninstall then gives back the file as it was). A file cairn creates does not
/// open with a blank line.
fn in_line_style(before: Option<&str>, out: String) -> String {
    let Some(before) = before else {
        return out.trim_start_matches('\n').to_owned();
    };
    let crlf = before.contains("\r\n") && !before.replace("\r\n", "").contains('\n');
    let mut out = if crlf {
        out.replace("\r\n", "\n").replace('\n', "\r\n")
    } else {
        out
    };
    if !before.is_empty() && !before.ends_with('\n') {
        let kept = out.trim_end_matches(['\r', '\n']).len();
        out.truncate(kept);
    }
    // A byte-order mark the editor wrote stays.
    if before.starts_with('\u{feff}') && !out.starts_with('\u{feff}') {
        out.insert(0, '\u{feff}');
    }
    out
}

/// Plans installing (or removing) cairn's hooks for Codex.
///
/// Codex reads a layer's hooks from `[hooks]` in `config.toml` and from `hooks.json` beside
/// it (`hooks_json`), and warns at every start when both hold hooks ("prefer a single
/// representation for this layer"). So cairn's handlers go where the user's hooks are: into
/// `hooks.json` when the user's hooks are there and not in `config.toml` (edited by byte
/// spans, as Claude Code's `settings.json`, so every other byte stays), else into
/// `config.toml`; with no hook of the user's anywhere, they stay in the file that holds them,
/// `config.toml` for a first install. cairn's handlers in the other file are moved, never
/// doubled, and the trust entries Codex keyed by their positions go with them. When the user
/// already keeps hooks in both files, the plan says so. Uninstalling takes cairn's handlers out
/// of both files, giving back the bytes they had.
pub fn plan_codex(
    config: &Path,
    hooks_json: Option<&Path>,
    command: &str,
    uninstall: bool,
    previous: Option<&Record>,
) -> Result<Plan, InstallError> {
    let before = read_optional(config)?;
    let text = before.clone().unwrap_or_default();
    let mut doc: DocumentMut = text.parse().map_err(|e| toml_syntax(config, &text, &e))?;
    let shape = |m: &str| InstallError::Shape(m.to_owned(), config.to_path_buf());
    let mut record = Record {
        path: config.to_path_buf(),
        created_file: previous.map_or(before.is_none(), |r| r.created_file),
        enabled_hooks_feature: previous.is_some_and(|r| r.enabled_hooks_feature),
        enabled_legacy_hooks_feature: previous.is_some_and(|r| r.enabled_legacy_hooks_feature),
        filled_empty: previous.map(|r| r.filled_empty.clone()).unwrap_or_default(),
        hooks_json_filled_empty: previous
            .map(|r| r.hooks_json_filled_empty.clone())
            .unwrap_or_default(),
    };
    let mut notes = Vec::new();
    let json = match hooks_json.map(|p| read_hooks_json(p, Target::Codex)) {
        None | Some(Ok(None)) => None,
        Some(Ok(Some(j))) => Some(j),
        Some(Err(note)) => {
            notes.push(note);
            None
        }
    };
    let json_cairn = json.as_ref().is_some_and(|j| !j.cairn_events.is_empty());
    let json_user = json.as_ref().is_some_and(|j| !j.others.is_empty());
    let toml_cairn = !codex_cairn_events(&doc).is_empty();
    let toml_user = !codex_other_commands(&doc).is_empty();
    // `hooks.json`'s new text and where its handlers went (for the trust entries).
    let mut json_after: Option<(String, Vec<(String, Moves)>)> = None;

    if uninstall {
        let keep: Vec<String> = record
            .filled_empty
            .iter()
            .filter(|k| k.path.len() == 2 && k.path[0] == "hooks")
            .map(|k| k.path[1].clone())
            .collect();
        codex_strip_keeping(&mut doc, config, &mut |_, _| true, &keep);
        if let Some(j) = json.as_ref().filter(|_| json_cairn) {
            json_after = Some(json_strip(
                &j.text,
                &j.path,
                Target::Codex,
                &|_| true,
                &record.hooks_json_filled_empty,
            )?);
        }
        let switched = [
            (HOOKS_FEATURE_KEY, record.enabled_hooks_feature),
            (
                LEGACY_HOOKS_FEATURE_KEY,
                record.enabled_legacy_hooks_feature,
            ),
        ];
        for (key, _) in switched.into_iter().filter(|(_, by_cairn)| *by_cairn) {
            if set_feature(&mut doc, key, false) {
                notes.push(format!(
                    "`[features] {key}` is `false` again, as it was before `cairn install codex` \
                     (every Codex hook is off)."
                ));
            }
        }
        if let (Some(j), Some((_, moves))) = (&json, &json_after) {
            follow_moves_in_state(&mut doc, &j.path, moves);
        }
        tidy_hooks_tables(&mut doc);
        let out = in_line_style(before.as_deref(), doc.to_string());
        let after = if before.is_none() || (record.created_file && out.trim().is_empty()) {
            None
        } else {
            Some(out)
        };
        return Ok(Plan {
            target: Target::Codex,
            path: config.to_path_buf(),
            before,
            after,
            record: None,
            notes,
            also: json_change(json.as_ref(), json_after.map(|(t, _)| t)),
            hooks_in: config.to_path_buf(),
            also_first: false,
        });
    }

    // Where cairn's handlers go: beside the user's hooks, never making one layer hold hooks in
    // both files.
    let into_json = json.is_some()
        && match (json_user, toml_user) {
            (true, false) => true,
            (false, true) => false,
            _ => json_cairn && !toml_cairn,
        };
    if let Some(j) = json.as_ref().filter(|_| json_user && toml_user) {
        notes.push(format!(
            "{} and {} both hold Codex hooks of yours: Codex warns at every start (\"loading hooks \
             from both …; prefer a single representation for this layer\"); cairn keeps its own \
             in {}. Move your hooks into one of the two files to silence it.",
            j.path.display(),
            config.display(),
            if into_json {
                j.path.display()
            } else {
                config.display()
            }
        ));
    }

    // Hooks switched off by the user (under either name of the flag)? Codex then runs no hook at
    // all, cairn's included: switch on the key Codex goes by (and remember to switch it back),
    // and say what else that turns on.
    let mut switched_on = None;
    if let Some((key, false)) = HooksFeature::read(&doc).deciding()
        && set_feature(&mut doc, key, true)
    {
        if key == LEGACY_HOOKS_FEATURE_KEY {
            record.enabled_legacy_hooks_feature = true;
        } else {
            record.enabled_hooks_feature = true;
        }
        switched_on = Some(key);
    }
    if let Some(key) = switched_on {
        let mut others = codex_other_commands(&doc);
        others.extend(json.iter().flat_map(|j| j.others.iter().cloned()));
        let which = if others.is_empty() {
            "no other hook is configured in config.toml or hooks.json now, but any added later runs too".to_owned()
        } else {
            let shown: Vec<String> = others.iter().take(5).map(|c| format!("`{c}`")).collect();
            let more = if others.len() > 5 {
                format!(" and {} more", others.len() - 5)
            } else {
                String::new()
            };
            format!(
                "{} other hook(s) run again: {}{more}",
                others.len(),
                shown.join(", ")
            )
        };
        let old_name = if key == LEGACY_HOOKS_FEATURE_KEY {
            " (`codex_hooks` is the old name of `hooks`, which Codex still reads)"
        } else {
            ""
        };
        notes.push(format!(
            "`[features] {key} = false` in {} switches off every Codex hook, cairn's \
             included{old_name}; cairn sets it to `true`, which turns every tool's hooks back on \
             ({which}). To keep a hook off, remove it or disable it in `/hooks`; `cairn install \
             codex --uninstall` sets the flag back to `false`.",
            config.display()
        ));
    }

    if let Some(j) = json.as_ref().filter(|_| into_json) {
        // Events the user left empty there (`"Stop": []`): uninstalling leaves them so.
        if record.hooks_json_filled_empty.is_empty() {
            record.hooks_json_filled_empty = empty_hook_containers(&j.text);
        }
        json_after = Some(json_add(&j.text, command, &j.path, Target::Codex)?);
        if toml_cairn {
            codex_strip(&mut doc, config, &mut |_, _| true);
            notes.push(format!(
                "cairn's hooks move from {} to {}, where your Codex hooks are (Codex warns when \
                 both files hold hooks); trust them again in `/hooks`.",
                config.display(),
                j.path.display()
            ));
        }
    } else {
        add_to_config(&mut doc, &mut record, command, &shape)?;
        if let Some(j) = json.as_ref().filter(|_| json_cairn) {
            json_after = Some(json_strip(&j.text, &j.path, Target::Codex, &|_| true, &[])?);
            notes.push(format!(
                "cairn's hooks move from {} to {}, where your Codex hooks are (Codex warns when \
                 both files hold hooks); trust them again in `/hooks`.",
                j.path.display(),
                config.display()
            ));
        }
    }
    if let (Some(j), Some((_, moves))) = (&json, &json_after) {
        follow_moves_in_state(&mut doc, &j.path, moves);
    }
    tidy_hooks_tables(&mut doc);
    let out = in_line_style(before.as_deref(), doc.to_string());
    let after = if before.as_deref() == Some(out.as_str()) {
        before.clone()
    } else if before.is_none() && out.is_empty() {
        None
    } else {
        Some(out)
    };
    if before.is_none() && after.is_none() {
        record.created_file = false;
    }
    let hooks_in = match (&json, into_json) {
        (Some(j), true) => j.path.clone(),
        _ => config.to_path_buf(),
    };
    Ok(Plan {
        target: Target::Codex,
        path: config.to_path_buf(),
        before,
        after,
        record: Some(record),
        notes,
        also: json_change(json.as_ref(), json_after.map(|(t, _)| t)),
        hooks_in,
        also_first: into_json,
    })
}

/// `hooks.json`'s change, when there is one.
fn json_change(json: Option<&HooksJson>, after: Option<String>) -> Option<FileChange> {
    let (j, after) = (json?, after?);
    (after != j.text).then(|| FileChange {
        path: j.path.clone(),
        before: Some(j.text.clone()),
        after: Some(after),
    })
}

/// Adds cairn's handler for every event to `config.toml`'s `[hooks]` (one per event: a second
/// one is dropped, a stale command brought up to date), in the form the file writes its events.
fn add_to_config(
    doc: &mut DocumentMut,
    record: &mut Record,
    command: &str,
    shape: &dyn Fn(&str) -> InstallError,
) -> Result<(), InstallError> {
    // Events the user left empty (`Stop = []`): uninstalling leaves them so.
    if record.filled_empty.is_empty()
        && let Some(hooks) = doc.get("hooks").and_then(Item::as_table_like)
    {
        record.filled_empty = hooks
            .iter()
            .filter(|(k, _)| EVENTS.contains(k))
            .filter(|(_, v)| v.as_array().is_some_and(|a| a.is_empty()))
            .map(|(k, _)| FilledContainer {
                path: vec!["hooks".into(), k.to_owned()],
                text: "[]".into(),
            })
            .collect();
    }
    let config = record.path.clone();
    codex_strip(doc, &config, &mut |_, n| n > 0);
    // A new event is written the way the others are: `[[hooks.<Event>]]` tables, or an
    // inline array when `[hooks]` is an inline table or holds only inline arrays.
    let inline_events = match doc.get("hooks") {
        Some(Item::Value(_)) => true,
        Some(Item::Table(t)) => {
            let mut events = t.iter().filter(|(k, _)| *k != "state").peekable();
            events.peek().is_some()
                && events.all(|(_, v)| matches!(v, Item::Value(toml_edit::Value::Array(_))))
        }
        _ => false,
    };
    let hooks = doc
        .entry("hooks")
        .or_insert_with(|| {
            let mut t = Table::new();
            t.set_implicit(true);
            Item::Table(t)
        })
        .as_table_like_mut()
        .ok_or_else(|| shape("`hooks` is not a table"))?;
    for event in EVENTS {
        if hooks.get(event).is_none() {
            let empty = if inline_events {
                Item::Value(toml_edit::Value::Array(toml_edit::Array::new()))
            } else {
                Item::ArrayOfTables(ArrayOfTables::new())
            };
            hooks.insert(event, empty);
        }
        let mut groups = hooks
            .get_mut(event)
            .and_then(TableList::of)
            .ok_or_else(|| {
                shape(&format!(
                    "`hooks.{event}` is neither [[hooks.{event}]] tables nor an array of \
                     matcher groups"
                ))
            })?;
        let mut found = false;
        for g in 0..groups.len() {
            let Some(mut handlers) = groups
                .get_mut(g)
                .and_then(|g| g.get_mut("hooks"))
                .and_then(TableList::of)
            else {
                continue;
            };
            for h in 0..handlers.len() {
                let Some(handler) = handlers.get_mut(h) else {
                    continue;
                };
                if !is_cairn_handler(handler) {
                    continue;
                }
                found = true;
                if let Some(v) = handler.get_mut("command").and_then(Item::as_value_mut)
                    && v.as_str() != Some(command)
                {
                    let decor = v.decor().clone();
                    *v = command.into();
                    *v.decor_mut() = decor;
                }
            }
        }
        if !found {
            groups.push_group(codex_handler(command));
        }
    }
    Ok(())
}

/// Removes cairn's handlers from the `[hooks]` events of `config`'s document: every one for
/// which `remove(event, n)` holds, `n` counting cairn's handlers within the event (0 for the
/// first), whether the groups and handlers are `[[…]]` tables or inline arrays. A group left
/// without handlers goes, then an event this left empty. The `[hooks.state]` trust entries
/// follow: a removed handler's entry goes, a handler that moved up takes its entry along. A
/// `[hooks.state]` or `[hooks]` table this left empty goes when it was only implied by its
/// subtables' headers (a table the user wrote a header for stays).
fn codex_strip(doc: &mut DocumentMut, config: &Path, remove: &mut dyn FnMut(&str, usize) -> bool) {
    codex_strip_keeping(doc, config, remove, &[]);
}

/// [`codex_strip`], leaving the events in `keep` (empty before cairn filled them) in place,
/// empty, once cairn's last handler in them is gone.
fn codex_strip_keeping(
    doc: &mut DocumentMut,
    config: &Path,
    remove: &mut dyn FnMut(&str, usize) -> bool,
    keep: &[String],
) {
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return;
    };
    let events: Vec<String> = hooks
        .iter()
        .map(|(k, _)| k.to_owned())
        .filter(|k| k != "state")
        .collect();
    let mut moves: Vec<(String, Moves)> = Vec::new();
    for event in events {
        let Some(mut groups) = hooks.get_mut(&event).and_then(TableList::of) else {
            continue;
        };
        let mut n = 0;
        let stripped = strip_groups(&mut groups, &is_cairn_handler, &mut || {
            let drop = remove(&event, n);
            n += 1;
            drop
        });
        if let Some(m) = stripped {
            if groups.len() == 0 && !keep.contains(&event) {
                hooks.remove(&event);
            }
            moves.push((event, m));
        }
    }
    if moves.is_empty() {
        return;
    }
    follow_moves_in_state(doc, config, &moves);
    tidy_hooks_tables(doc);
}

/// A `[hooks.state]` or `[hooks]` table left empty by cairn's edits goes when it was only
/// implied by its subtables' headers (a table the user wrote a header for stays).
fn tidy_hooks_tables(doc: &mut DocumentMut) {
    if let Some(Item::Table(hooks)) = doc.get_mut("hooks")
        && let Some(Item::Table(state)) = hooks.get("state")
        && state.is_empty()
        && state.is_implicit()
    {
        hooks.remove("state");
    }
    if let Some(Item::Table(hooks)) = doc.get("hooks")
        && hooks.is_empty()
        && hooks.is_implicit()
    {
        doc.remove("hooks");
    }
}

#[cfg(test)]
mod tests;

/// Whether one of Claude Code's user configs (`.claude.json`) names an MCP server (in
/// `mcpServers`) called `cairn` or whose command is a `cairn` binary. Read only.
pub fn claude_mcp_configured(files: &[PathBuf]) -> bool {
    files.iter().any(|f| {
        std::fs::read_to_string(f)
            .ok()
            .and_then(|t| serde_json::from_str::<serde_json::Value>(&t).ok())
            .is_some_and(|v| {
                v.get("mcpServers")
                    .and_then(serde_json::Value::as_object)
                    .is_some_and(|servers| {
                        servers.iter().any(|(name, s)| {
                            name == "cairn"
                                || s.get("command")
                                    .and_then(serde_json::Value::as_str)
                                    .is_some_and(is_cairn_program)
                        })
                    })
            })
    })
}

/// Whether Codex's `config.toml` has an `[mcp_servers.*]` entry called `cairn` or whose
/// command is a `cairn` binary. Read only.
pub fn codex_mcp_configured(config: &Path) -> bool {
    std::fs::read_to_string(config)
        .ok()
        .and_then(|t| t.parse::<DocumentMut>().ok())
        .is_some_and(|doc| {
            doc.get("mcp_servers")
                .and_then(Item::as_table_like)
                .is_some_and(|servers| {
                    servers.iter().any(|(name, s)| {
                        name == "cairn"
                            || s.get("command")
                                .and_then(Item::as_str)
                                .is_some_and(is_cairn_program)
                    })
                })
        })
}

/// A command that runs a `cairn` binary (by name or path).
fn is_cairn_program(command: &str) -> bool {
    Path::new(command.trim())
        .file_name()
        .is_some_and(|n| n == "cairn")
}

/// The program a hook command runs (its first shell word), when the command parses.
pub fn command_program(cmd: &str) -> Option<String> {
    shell_words(cmd.trim())?.into_iter().next()
}
