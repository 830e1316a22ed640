//! Wiring cairn's hooks into the agents' user configuration, and taking them out again.
//!
//! This crate owns the edits to Claude Code's `<root>/settings.json` (the `hooks` key; every
//! other byte of the file is kept, because the JSON is edited in place by byte spans, see
//! [`json_span`]) and to Codex's `<home>/config.toml` (`[[hooks.<Event>]]` tables edited with
//! `toml_edit`, so comments and formatting survive, and `[features] hooks` when the user had
//! turned hooks off). Each change is computed as a [`Plan`] (before/after text, a unified diff
//! for `--dry-run`) and applied atomically with the file's mode kept. Installing twice changes
//! nothing; uninstalling removes exactly the handlers that run `cairn … hook --agent <agent>`
//! and what the [`Manifest`] says cairn added. It must not touch any other file, or decide
//! where those files are: callers pass the paths.

pub mod json_span;

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

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
pub struct Plan {
    pub target: Target,
    pub path: PathBuf,
    /// The file now (`None`: it does not exist).
    pub before: Option<String>,
    /// The file after (`None`: delete it).
    pub after: Option<String>,
    /// The manifest record after applying.
    pub record: Option<Record>,
}

impl Plan {
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

    /// Writes the change (atomically; an existing file keeps its mode, a symlink its target).
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
            Some(text) => write_atomic(&target, text.as_bytes()).map_err(werr),
        }
    }
}

fn write_atomic(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.cairn-{}.tmp", std::process::id()));
    let mode = std::fs::metadata(path).ok().map(|m| m.permissions());
    let res = (|| {
        let mut o = std::fs::OpenOptions::new();
        o.write(true).create(true).truncate(true);
        #[cfg(unix)]
        {
            use std::os::unix::fs::OpenOptionsExt;
            o.mode(0o600);
        }
        let mut f = o.open(&tmp)?;
        f.write_all(bytes)?;
        if let Some(p) = mode {
            f.set_permissions(p)?;
        }
        f.sync_all()?;
        std::fs::rename(&tmp, path)?;
        if let Ok(d) = std::fs::File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res
}

/// Whether a hook command is cairn's hook for `target` (`<…/cairn> [flags] hook --agent X`).
pub fn is_cairn_command(cmd: &str, target: Target) -> bool {
    let cmd = cmd.trim();
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
    };
    let after = if uninstall {
        match &before {
            None => None,
            Some(text) if text.trim().is_empty() => Some(text.clone()),
            Some(text) => {
                syntax_json(settings, text)?;
                let out = claude_remove(text, settings)?;
                let empty = serde_json::from_str::<serde_json::Value>(&out)
                    .ok()
                    .and_then(|v| v.as_object().map(|o| o.is_empty()))
                    .unwrap_or(false);
                if empty && record.created_file {
                    None
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
            Some(text) if text.trim().is_empty() => Some(claude_fresh(command)),
            Some(text) => {
                syntax_json(settings, text)?;
                Some(claude_add(text, command, settings)?)
            }
        }
    };
    Ok(Plan {
        target: Target::Claude,
        path: settings.to_path_buf(),
        before,
        after,
        record: (!uninstall).then_some(record),
    })
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

fn claude_add(text: &str, command: &str, path: &Path) -> Result<String, InstallError> {
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
                            for (_, c) in cairn_handlers(text, g, Target::Claude) {
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
    Ok(apply(text, edits))
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

fn claude_remove(text: &str, path: &Path) -> Result<String, InstallError> {
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
            for (gi, g) in groups.iter().enumerate() {
                let found = cairn_handlers(&text, g, Target::Claude);
                let Some(&(hi_idx, _)) = found.first() else {
                    continue;
                };
                let Some(Node::Array {
                    items: handlers, ..
                }) = g.member("hooks").map(|m| &m.value)
                else {
                    continue;
                };
                edit = if handlers.len() > found.len() {
                    // Other handlers share the group: remove only cairn's.
                    remove_from(&g.member("hooks").expect("checked").value, hi_idx)
                } else if groups.len() > 1 {
                    remove_from(&ev.value, gi)
                } else if events.len() > 1 {
                    remove_from(hooks, ei)
                } else {
                    remove_from(&root, hi)
                };
                break 'find;
            }
        }
        match edit {
            Some(e) => text = apply(&text, vec![e]),
            None => return Ok(text),
        }
    }
}

// ---------------------------------------------------------------- Codex config.toml

use toml_edit::{ArrayOfTables, DocumentMut, Item, Table, value};

fn codex_handler(command: &str) -> Table {
    let mut h = Table::new();
    h.insert("type", value("command"));
    h.insert("command", value(command));
    h.insert("timeout", value(TIMEOUT_SECS));
    h.decor_mut().set_prefix("");
    h
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

/// Plans installing (or removing) cairn's hooks in Codex's `config.toml`.
pub fn plan_codex(
    config: &Path,
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
    };
    if uninstall {
        codex_remove(&mut doc);
        if record.enabled_hooks_feature
            && let Some(f) = doc.get_mut("features").and_then(Item::as_table_like_mut)
            && let Some(v) = f.get_mut("hooks").and_then(Item::as_value_mut)
        {
            let decor = v.decor().clone();
            *v = toml_edit::Value::from(false);
            *v.decor_mut() = decor;
        }
        let out = doc.to_string();
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
        });
    }

    // Hooks switched off by the user? Switch them on (and remember to switch them back).
    if let Some(f) = doc.get_mut("features").and_then(Item::as_table_like_mut)
        && let Some(v) = f.get_mut("hooks").and_then(Item::as_value_mut)
        && v.as_bool() == Some(false)
    {
        let decor = v.decor().clone();
        *v = toml_edit::Value::from(true);
        *v.decor_mut() = decor;
        record.enabled_hooks_feature = true;
    }

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
        let entry = hooks
            .entry(event)
            .or_insert(Item::ArrayOfTables(ArrayOfTables::new()));
        let Item::ArrayOfTables(groups) = entry else {
            return Err(shape(&format!(
                "`hooks.{event}` is not written as [[hooks.{event}]] tables"
            )));
        };
        let mut found = false;
        for g in groups.iter_mut() {
            let Some(Item::ArrayOfTables(handlers)) = g.get_mut("hooks") else {
                continue;
            };
            for h in handlers.iter_mut() {
                let is_ours = h
                    .get("command")
                    .and_then(Item::as_str)
                    .is_some_and(|c| is_cairn_command(c, Target::Codex));
                if is_ours {
                    found = true;
                    if h.get("command").and_then(Item::as_str) != Some(command) {
                        h.insert("command", value(command));
                    }
                }
            }
        }
        if !found {
            let mut handlers = ArrayOfTables::new();
            handlers.push(codex_handler(command));
            let mut group = Table::new();
            group.decor_mut().set_prefix("\n");
            group.insert("hooks", Item::ArrayOfTables(handlers));
            groups.push(group);
        }
    }
    let out = doc.to_string();
    let after = if before.as_deref() == Some(out.as_str()) {
        before.clone()
    } else {
        Some(out)
    };
    Ok(Plan {
        target: Target::Codex,
        path: config.to_path_buf(),
        before,
        after,
        record: Some(record),
    })
}

fn codex_remove(doc: &mut DocumentMut) {
    let Some(hooks) = doc.get_mut("hooks").and_then(Item::as_table_like_mut) else {
        return;
    };
    let events: Vec<String> = hooks.iter().map(|(k, _)| k.to_owned()).collect();
    for event in events {
        let Some(Item::ArrayOfTables(groups)) = hooks.get_mut(&event) else {
            continue;
        };
        let mut g = 0;
        while g < groups.len() {
            let mut drop_group = false;
            if let Some(group) = groups.get_mut(g)
                && let Some(Item::ArrayOfTables(handlers)) = group.get_mut("hooks")
            {
                let before = handlers.len();
                handlers.retain(|h| {
                    !h.get("command")
                        .and_then(Item::as_str)
                        .is_some_and(|c| is_cairn_command(c, Target::Codex))
                });
                drop_group = handlers.is_empty() && before > 0;
            }
            if drop_group {
                groups.remove(g);
            } else {
                g += 1;
            }
        }
        if groups.is_empty() {
            hooks.remove(&event);
        }
    }
    let empty = doc
        .get("hooks")
        .and_then(Item::as_table_like)
        .is_some_and(|t| t.is_empty());
    if empty {
        doc.remove("hooks");
    }
}

#[cfg(test)]
mod tests;
