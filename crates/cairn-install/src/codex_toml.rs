//! The parts of Codex's `config.toml` that `cairn install codex` reads and edits besides its
//! own handlers: the hooks feature flag under its two names, the two ways a list of matcher
//! groups or handlers is written, and the trust entries Codex keys by position.
//!
//! - `[features] hooks` switches every hook on or off; `codex_hooks` is its old name, which
//!   Codex still reads (`Alias { legacy_key: "codex_hooks", feature: Feature::CodexHooks }`,
//!   `codex-rs/features/src/legacy.rs`). `Features::apply_map` applies the `[features]`
//!   entries in key order, each overriding the last, so `codex_hooks` comes first and `hooks`,
//!   when set, decides. Unset, the feature is on (stable, enabled by default).
//! - Each `[hooks]` event is a `Vec<MatcherGroup>` and each group's `hooks` a
//!   `Vec<HookHandlerConfig>` (`codex-rs/config/src/hook_config.rs`): `[[hooks.Stop]]` tables
//!   and `Stop = [{ hooks = [...] }]` inline arrays are the same value ([`TableList`]).
//! - `[hooks.state."<file>:<event label>:<group index>:<handler index>"]` holds a handler's
//!   `trusted_hash` / `enabled` (`hook_key` in `codex-rs/hooks/src/engine/discovery.rs`; the
//!   indices count every group and handler of the event in that file).

use std::path::Path;

use toml_edit::{Array, ArrayOfTables, DocumentMut, InlineTable, Item, Table, TableLike, Value};

/// The `[features]` key of Codex's hooks feature.
pub const HOOKS_FEATURE_KEY: &str = "hooks";
/// Its old name, which Codex still reads.
pub const LEGACY_HOOKS_FEATURE_KEY: &str = "codex_hooks";

/// How `[features]` sets Codex's hooks feature.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HooksFeature {
    /// `[features] hooks`
    pub hooks: Option<bool>,
    /// `[features] codex_hooks`
    pub codex_hooks: Option<bool>,
}

impl HooksFeature {
    /// Reads both keys from `[features]` (a key that is not a boolean counts as unset).
    pub fn read(doc: &DocumentMut) -> HooksFeature {
        let flag = |key: &str| {
            doc.get("features")
                .and_then(|f| f.get(key))
                .and_then(Item::as_bool)
        };
        HooksFeature {
            hooks: flag(HOOKS_FEATURE_KEY),
            codex_hooks: flag(LEGACY_HOOKS_FEATURE_KEY),
        }
    }

    /// The key whose value Codex uses, and that value: `hooks` when set, else `codex_hooks`.
    pub fn deciding(&self) -> Option<(&'static str, bool)> {
        match (self.hooks, self.codex_hooks) {
            (Some(on), _) => Some((HOOKS_FEATURE_KEY, on)),
            (None, Some(on)) => Some((LEGACY_HOOKS_FEATURE_KEY, on)),
            (None, None) => None,
        }
    }

    /// Whether Codex runs hooks at all.
    pub fn enabled(&self) -> bool {
        self.deciding().is_none_or(|(_, on)| on)
    }

    /// The keys set to `false`, `hooks` first.
    pub fn keys_off(&self) -> Vec<&'static str> {
        [
            (HOOKS_FEATURE_KEY, self.hooks),
            (LEGACY_HOOKS_FEATURE_KEY, self.codex_hooks),
        ]
        .into_iter()
        .filter(|(_, v)| *v == Some(false))
        .map(|(k, _)| k)
        .collect()
    }
}

/// Sets `[features] <key>` to `on` when it is the boolean `!on`, keeping its comment and
/// spacing; returns whether it changed.
pub(crate) fn set_feature(doc: &mut DocumentMut, key: &str, on: bool) -> bool {
    let Some(v) = doc
        .get_mut("features")
        .and_then(Item::as_table_like_mut)
        .and_then(|f| f.get_mut(key))
        .and_then(Item::as_value_mut)
    else {
        return false;
    };
    if v.as_bool() != Some(!on) {
        return false;
    }
    let decor = v.decor().clone();
    *v = Value::from(on);
    *v.decor_mut() = decor;
    true
}

/// `PreToolUse` → `pre_tool_use`: the event label of Codex's trust keys.
pub fn event_label(event: &str) -> String {
    let mut out = String::new();
    for (i, ch) in event.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                out.push('_');
            }
            out.push(ch.to_ascii_lowercase());
        } else {
            out.push(ch);
        }
    }
    out
}

/// A list of tables as Codex reads one: `[[…]]` tables, or an inline array whose elements are
/// inline tables (an element of another type has its position but is nobody's handler).
pub(crate) enum TableList<'a> {
    Tables(&'a mut ArrayOfTables),
    Inline(&'a mut Array),
}

impl<'a> TableList<'a> {
    pub(crate) fn of(item: &'a mut Item) -> Option<TableList<'a>> {
        match item {
            Item::ArrayOfTables(a) => Some(TableList::Tables(a)),
            Item::Value(Value::Array(a)) => Some(TableList::Inline(a)),
            _ => None,
        }
    }

    pub(crate) fn len(&self) -> usize {
        match self {
            TableList::Tables(a) => a.len(),
            TableList::Inline(a) => a.len(),
        }
    }

    pub(crate) fn get(&self, index: usize) -> Option<&dyn TableLike> {
        match self {
            TableList::Tables(a) => a.get(index).map(|t| t as &dyn TableLike),
            TableList::Inline(a) => a
                .get(index)
                .and_then(Value::as_inline_table)
                .map(|t| t as &dyn TableLike),
        }
    }

    pub(crate) fn get_mut(&mut self, index: usize) -> Option<&mut dyn TableLike> {
        match self {
            TableList::Tables(a) => a.get_mut(index).map(|t| t as &mut dyn TableLike),
            TableList::Inline(a) => a
                .get_mut(index)
                .and_then(Value::as_inline_table_mut)
                .map(|t| t as &mut dyn TableLike),
        }
    }

    /// Removes one element. In an inline array, the element that becomes first takes the
    /// removed one's leading space, and the one that becomes last its line break before the
    /// closing bracket (undoing [`TableList::push_group`]).
    pub(crate) fn remove(&mut self, index: usize) {
        match self {
            TableList::Tables(a) => {
                a.remove(index);
            }
            TableList::Inline(a) => {
                let removed = a.remove(index);
                if index == 0
                    && let Some(next) = a.get_mut(0)
                {
                    let prefix = removed.decor().prefix().cloned().unwrap_or_default();
                    next.decor_mut().set_prefix(prefix);
                }
                let was_last = index == a.len();
                if was_last
                    && index > 0
                    && let Some(line_break) =
                        decor_text(removed.decor().suffix()).filter(|s| is_line_break(s))
                    && let Some(last) = a.get_mut(index - 1)
                    && decor_text(last.decor().suffix()).is_none_or(str::is_empty)
                {
                    last.decor_mut().set_suffix(line_break);
                }
            }
        }
    }

    /// Appends a matcher group holding one handler, written the way the list is: a `[[…]]`
    /// table after the others, or an inline table at the end of the array (on a line of its
    /// own, indented like the last element, when that one is on its own line).
    pub(crate) fn push_group(&mut self, handler: InlineTable) {
        match self {
            TableList::Tables(a) => {
                let mut handlers = ArrayOfTables::new();
                let mut h = handler.into_table();
                h.decor_mut().set_prefix("");
                handlers.push(h);
                let mut group = Table::new();
                group.decor_mut().set_prefix("\n");
                group.insert("hooks", Item::ArrayOfTables(handlers));
                a.push(group);
            }
            TableList::Inline(a) => {
                let mut handlers = Array::new();
                handlers.push(handler);
                let mut group = InlineTable::new();
                group.insert("hooks", Value::Array(handlers));
                let mut group = Value::InlineTable(group);
                let len = a.len();
                if let Some(last) = a.get_mut(len.wrapping_sub(1)) {
                    // Only the indentation of the last element's line, never its comments.
                    let prefix =
                        match decor_text(last.decor().prefix()).and_then(|p| p.rsplit_once('\n')) {
                            Some((_, indent)) => format!("\n{indent}"),
                            None => " ".to_owned(),
                        };
                    group.decor_mut().set_prefix(prefix);
                    // `[\n  {a}\n]`: the line break before `]` moves behind the new element.
                    if let Some(line_break) =
                        decor_text(last.decor().suffix()).filter(|s| is_line_break(s))
                    {
                        let line_break = line_break.to_owned();
                        last.decor_mut().set_suffix("");
                        group.decor_mut().set_suffix(line_break);
                    }
                }
                a.push_formatted(group);
            }
        }
    }
}

fn decor_text(raw: Option<&toml_edit::RawString>) -> Option<&str> {
    raw.and_then(toml_edit::RawString::as_str)
}

/// Whitespace holding a line break (no comment).
fn is_line_break(s: &str) -> bool {
    s.contains('\n') && s.chars().all(char::is_whitespace)
}

/// Where each handler of one event ended up after a strip: `(group, handler)` before →
/// after (`None`: removed).
pub(crate) type Moves = Vec<((usize, usize), Option<(usize, usize)>)>;

/// Removes the handlers `remove` selects from one event's groups (`is_target` tells which
/// handlers may be removed at all; `remove` is asked for each of those, in order). A group left
/// without handlers goes. Returns the moves, or nothing when nothing was removed.
pub(crate) fn strip_groups(
    groups: &mut TableList<'_>,
    is_target: &dyn Fn(&dyn TableLike) -> bool,
    remove: &mut dyn FnMut() -> bool,
) -> Option<Moves> {
    let mut moves: Moves = Vec::new();
    let mut removed_any = false;
    let mut old_group = 0;
    let mut group = 0;
    while group < groups.len() {
        // (old handler index, new index or removed)
        let mut handler_moves: Vec<(usize, Option<usize>)> = Vec::new();
        let mut emptied = false;
        if let Some(mut handlers) = groups
            .get_mut(group)
            .and_then(|g| g.get_mut("hooks"))
            .and_then(TableList::of)
        {
            let before = handlers.len();
            let mut handler = 0;
            let mut old_handler = 0;
            while handler < handlers.len() {
                let targeted = handlers.get(handler).is_some_and(is_target);
                if targeted && remove() {
                    handlers.remove(handler);
                    handler_moves.push((old_handler, None));
                    removed_any = true;
                } else {
                    handler_moves.push((old_handler, Some(handler)));
                    handler += 1;
                }
                old_handler += 1;
            }
            emptied = before > 0 && handlers.len() == 0;
        }
        if emptied {
            groups.remove(group);
            moves.extend(handler_moves.iter().map(|(h, _)| ((old_group, *h), None)));
        } else {
            moves.extend(
                handler_moves
                    .iter()
                    .map(|(h, to)| ((old_group, *h), to.map(|to| (group, to)))),
            );
            group += 1;
        }
        old_group += 1;
    }
    removed_any.then_some(moves)
}

/// The ways Codex may spell `path` at the start of a trust key: as given, and with its
/// directory's symlinks resolved.
fn key_sources(path: &Path) -> Vec<String> {
    let mut out = vec![path.display().to_string()];
    if let Some(resolved) = path
        .parent()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .and_then(|p| path.file_name().map(|n| p.join(n)))
    {
        let resolved = resolved.display().to_string();
        if !out.contains(&resolved) {
            out.push(resolved);
        }
    }
    out
}

/// `<file>:<label>:<group>:<handler>` → its parts (the file may itself hold `:`).
fn parse_hook_key(key: &str) -> Option<(&str, &str, usize, usize)> {
    let mut parts = key.rsplitn(4, ':');
    let handler = parts.next()?.parse().ok()?;
    let group = parts.next()?.parse().ok()?;
    let label = parts.next()?;
    let file = parts.next()?;
    Some((file, label, group, handler))
}

/// Makes `[hooks.state]` follow a strip of `config`'s handlers: the entry of a removed handler
/// goes, the entry of a handler that moved takes its new position, every other entry (other
/// files, other events, positions that held no handler) stays as it is. Returns whether an
/// entry changed.
pub(crate) fn follow_moves_in_state(
    doc: &mut DocumentMut,
    config: &Path,
    moves: &[(String, Moves)],
) -> bool {
    let Some(state) = doc
        .get_mut("hooks")
        .and_then(Item::as_table_like_mut)
        .and_then(|h| h.get_mut("state"))
        .and_then(Item::as_table_like_mut)
    else {
        return false;
    };
    let sources = key_sources(config);
    let labels: Vec<(String, &Moves)> = moves.iter().map(|(e, m)| (event_label(e), m)).collect();
    let mut removals = Vec::new();
    let mut renames = Vec::new();
    for (key, _) in state.iter() {
        let Some((file, label, group, handler)) = parse_hook_key(key) else {
            continue;
        };
        if !sources.iter().any(|s| s == file) {
            continue;
        }
        let Some((_, m)) = labels.iter().find(|(l, _)| l == label) else {
            continue;
        };
        match m.iter().find(|(from, _)| *from == (group, handler)) {
            None => {}
            Some((_, None)) => removals.push(key.to_owned()),
            Some((_, Some(to))) if *to != (group, handler) => {
                renames.push((key.to_owned(), format!("{file}:{label}:{}:{}", to.0, to.1)))
            }
            Some(_) => {}
        }
    }
    let changed = !removals.is_empty() || !renames.is_empty();
    for key in removals {
        state.remove(&key);
    }
    let moved: Vec<(String, Item)> = renames
        .into_iter()
        .filter_map(|(old, new)| state.remove(&old).map(|item| (new, item)))
        .collect();
    for (key, item) in moved {
        state.insert(&key, item);
    }
    changed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hook_keys_split_from_the_right() {
        assert_eq!(
            parse_hook_key("C:\\Users\\a\\.codex\\config.toml:stop:1:0"),
            Some(("C:\\Users\\a\\.codex\\config.toml", "stop", 1, 0))
        );
        assert_eq!(parse_hook_key("/c/config.toml:stop:x:0"), None);
        assert_eq!(event_label("UserPromptSubmit"), "user_prompt_submit");
    }

    #[test]
    fn the_hooks_key_decides_over_its_old_name() {
        let read = |t: &str| HooksFeature::read(&t.parse().unwrap());
        assert!(read("").enabled());
        assert_eq!(
            read("[features]\ncodex_hooks = false\n").deciding(),
            Some(("codex_hooks", false))
        );
        let both = read("[features]\nhooks = true\ncodex_hooks = false\n");
        assert!(both.enabled());
        assert_eq!(both.keys_off(), ["codex_hooks"]);
        assert!(!read("features.hooks = false\ncodex_hooks = true\n").enabled());
    }
}
