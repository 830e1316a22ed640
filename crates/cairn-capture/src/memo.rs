//! The memo journal: one markdown block per recorded turn, appended to the project's memo file.
//!
//! ```text
//! ## 2026-11-25 14:05 - Claude Code turn 0b6e…
//! <!-- cairn:memo agent=claude session=5f3c… turn=0b6e… -->
//! - Requirements: …
//! - Investigation: …
//! - Decision: …
//! - Changes: …
//! - Verification: …
//! - Open issues: …
//! <!-- /cairn:memo -->
//! ```
//!
//! Appends are atomic (the whole new file is written beside the old one and renamed over it)
//! and idempotent: a block whose marker (agent, session, turn) is already in the file is never
//! written again, so a worker that crashed after writing and retries does not duplicate it.
//! [`check`] validates every block (for `cairn memo check`, usable as a pre-commit hook).
//! A memo file that is a symbolic link, or is reached through one inside the repository
//! ([`linked_component`]), is refused: a repository cannot point the journal at a file
//! outside it, to have it read into the journal or written.

use std::fs;
use std::path::{Path, PathBuf};

use crate::CaptureError;
use crate::digest::{LABELS, TurnDigest};

/// Opening marker prefix; `agent=… session=… turn=… -->` follow.
pub const OPEN: &str = "<!-- cairn:memo ";
/// Closing marker.
pub const CLOSE: &str = "<!-- /cairn:memo -->";

/// What identifies a block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoKey {
    pub agent: String,
    pub session: String,
    pub turn: String,
}

impl MemoKey {
    fn marker(&self) -> String {
        format!(
            "{OPEN}agent={} session={} turn={} -->",
            token(&self.agent),
            token(&self.session),
            token(&self.turn)
        )
    }
}

/// A marker value: no whitespace, no comment terminators.
fn token(s: &str) -> String {
    let t: String = s
        .chars()
        .map(|c| if c.is_whitespace() { '_' } else { c })
        .collect();
    let t = t.replace("--", "-");
    if t.is_empty() { "-".to_owned() } else { t }
}

/// Field text safe inside a block: one line, no HTML comment markers.
fn field_text(s: &str) -> String {
    let one = crate::text::one_line(s, 2000);
    one.replace("<!--", "<! --").replace("-->", "-- >")
}

/// The agent's name in headings.
pub fn agent_label(agent: &str) -> &str {
    match agent {
        "claude" => "Claude Code",
        "codex" => "Codex",
        other => other,
    }
}

/// Renders a block (ending with a newline). `when` is the local date and time, `YYYY-MM-DD HH:MM`.
pub fn render_block(key: &MemoKey, when: &str, digest: &TurnDigest) -> String {
    let mut s = format!(
        "## {when} - {} turn {}\n{}\n",
        agent_label(&key.agent),
        token(&key.turn),
        key.marker()
    );
    for (label, text) in digest.fields() {
        let text = field_text(&text);
        let text = if text.is_empty() {
            "—".to_owned()
        } else {
            text
        };
        s += &format!("- {label}: {text}\n");
    }
    s += CLOSE;
    s.push('\n');
    s
}

/// Whether the block of `key` is already in `text`.
pub fn contains_block(text: &str, key: &MemoKey) -> bool {
    text.contains(&key.marker())
}

/// What an append did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Appended {
    Written,
    AlreadyPresent,
}

/// Appends `block` to the memo file unless the block of `key` is there, under `lock` (a file
/// in cairn's data dir), atomically.
pub fn append_block(
    memo: &Path,
    lock: &Path,
    key: &MemoKey,
    block: &str,
) -> Result<Appended, CaptureError> {
    let io = |what: &str, p: &Path, e: std::io::Error| {
        CaptureError::Memo(format!("cannot {what} {}: {e}", p.display()))
    };
    let lock_file = crate::private_file(lock).map_err(|e| io("open the lock", lock, e))?;
    lock_file.lock().map_err(|e| io("lock", lock, e))?;
    if fs::symlink_metadata(memo).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(CaptureError::Memo(format!(
            "{} is a symbolic link; cairn neither reads nor writes the memo journal through one (make it a regular file)",
            memo.display()
        )));
    }

    let old = match fs::read(memo) {
        Ok(b) => String::from_utf8_lossy(&b).into_owned(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(io("read", memo, e)),
    };
    if contains_block(&old, key) {
        return Ok(Appended::AlreadyPresent);
    }
    let mut new = old;
    if !new.is_empty() {
        if !new.ends_with('\n') {
            new.push('\n');
        }
        if !new.ends_with("\n\n") {
            new.push('\n');
        }
    }
    new.push_str(block);
    // An existing journal keeps its mode, owner and group (the user may share it); one cairn
    // starts is private until the user decides otherwise. Its directory is the project's.
    let dir = memo.parent().unwrap_or(Path::new("."));
    cairn_atomic::create_dir_all(dir, cairn_atomic::NewMode::Umask)
        .map_err(|e| io("create", dir, e))?;
    cairn_atomic::write_atomic(memo, new.as_bytes(), cairn_atomic::NewMode::Private)
        .map_err(|e| io("write", memo, e))?;
    Ok(Appended::Written)
}

/// The first component of `path` below `base` that is a symbolic link (a repository can link
/// `docs/` out of itself); `None` when there is none or `path` is not under `base`.
pub fn linked_component(base: &Path, path: &Path) -> Option<PathBuf> {
    let rel = path.strip_prefix(base).ok()?;
    let mut cur = base.to_path_buf();
    rel.components().find_map(|c| {
        cur.push(c);
        fs::symlink_metadata(&cur)
            .is_ok_and(|m| m.file_type().is_symlink())
            .then(|| cur.clone())
    })
}

/// A problem in a memo file, at a 1-based line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MemoProblem {
    pub line: usize,
    pub message: String,
}

/// Validates every cairn block in a memo file. Text outside blocks is free.
pub fn check(text: &str) -> (usize, Vec<MemoProblem>) {
    let lines: Vec<&str> = text.lines().collect();
    let mut problems = Vec::new();
    let mut blocks = 0usize;
    let mut seen: Vec<(String, usize)> = Vec::new();
    let mut i = 0;
    let mut p = |line: usize, message: String| problems.push(MemoProblem { line, message });
    while i < lines.len() {
        let l = lines[i].trim_end();
        if l == CLOSE {
            p(i + 1, "closing marker without an opening marker".into());
            i += 1;
            continue;
        }
        let Some(rest) = l.strip_prefix(OPEN.trim_end()) else {
            i += 1;
            continue;
        };
        blocks += 1;
        let open_line = i + 1;
        // Heading right above.
        let heading_ok = i > 0 && {
            let h = lines[i - 1];
            h.starts_with("## ") && h.contains(" turn ")
        };
        if !heading_ok {
            p(
                open_line,
                "block has no `## <date time> - <Agent> turn <id>` heading on the line above"
                    .into(),
            );
        }
        // Marker attributes.
        match rest.trim().strip_suffix("-->") {
            None => p(open_line, "opening marker does not end with `-->`".into()),
            Some(attrs) => {
                let mut agent = None;
                let mut session = None;
                let mut turn = None;
                for kv in attrs.split_whitespace() {
                    match kv.split_once('=') {
                        Some(("agent", v)) if !v.is_empty() => agent = Some(v),
                        Some(("session", v)) if !v.is_empty() => session = Some(v),
                        Some(("turn", v)) if !v.is_empty() => turn = Some(v),
                        _ => {}
                    }
                }
                match (agent, session, turn) {
                    (Some(a), Some(s), Some(t)) => {
                        let k = format!("{a} {s} {t}");
                        if let Some((_, first)) = seen.iter().find(|(x, _)| *x == k) {
                            p(
                                open_line,
                                format!("duplicate block for this turn (first at line {first})"),
                            );
                        } else {
                            seen.push((k, open_line));
                        }
                    }
                    _ => p(
                        open_line,
                        "opening marker needs agent=, session= and turn=".into(),
                    ),
                }
            }
        }
        // Body up to the closing marker.
        let mut labels = Vec::new();
        let mut j = i + 1;
        let mut closed = false;
        while j < lines.len() {
            let b = lines[j].trim_end();
            if b == CLOSE {
                closed = true;
                break;
            }
            if b.starts_with(OPEN.trim_end()) || b.starts_with("## ") {
                break;
            }
            if let Some(item) = b.strip_prefix("- ") {
                match item.split_once(':') {
                    Some((label, _)) if LABELS.contains(&label) => labels.push((label, j + 1)),
                    _ => p(j + 1, format!("unknown field `{}`", one_word(item))),
                }
            } else if !(b.starts_with("  ") || b.is_empty()) {
                p(
                    j + 1,
                    "line inside a block is not a `- Field: …` bullet".into(),
                );
            }
            j += 1;
        }
        if !closed {
            p(
                open_line,
                format!("block is not closed with `{CLOSE}` before line {}", j + 1),
            );
        }
        for want in LABELS {
            match labels.iter().filter(|(l, _)| *l == want).count() {
                0 => p(open_line, format!("block lacks the `{want}:` field")),
                1 => {}
                _ => p(open_line, format!("block has `{want}:` more than once")),
            }
        }
        let order: Vec<&str> = labels.iter().map(|(l, _)| *l).collect();
        let mut sorted = order.clone();
        sorted.sort_by_key(|l| LABELS.iter().position(|x| x == l));
        if order != sorted {
            p(
                open_line,
                format!("fields are not in the order {}", LABELS.join(", ")),
            );
        }
        i = if closed { j + 1 } else { j };
    }
    (blocks, problems)
}

fn one_word(s: &str) -> &str {
    s.split([':', ' ']).next().unwrap_or(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(t: &str) -> MemoKey {
        MemoKey {
            agent: "codex".into(),
            session: "s1".into(),
            turn: t.into(),
        }
    }

    fn digest() -> TurnDigest {
        TurnDigest {
            requirements: "change the timeout -->".into(),
            decision: "both".into(),
            ..TurnDigest::default()
        }
    }

    #[test]
    fn rendered_blocks_pass_the_check() {
        let b = render_block(&key("t1"), "2026-11-25 14:05", &digest());
        assert!(b.starts_with("## 2026-11-25 14:05 - Codex turn t1\n<!-- cairn:memo agent=codex session=s1 turn=t1 -->\n- Requirements: change the timeout -- >\n"));
        let text = format!(
            "# Notes\n\nfree text\n\n{b}\n{}",
            render_block(&key("t2"), "x", &digest())
        );
        let (n, problems) = check(&text);
        assert_eq!(n, 2);
        assert!(problems.is_empty(), "{problems:?}");
    }

    #[test]
    fn broken_blocks_are_reported_with_lines() {
        let b = render_block(&key("t1"), "d", &digest());
        let unclosed = b.replace(CLOSE, "");
        let (_, p) = check(&unclosed);
        assert_eq!(p[0].line, 2);
        assert!(p[0].message.contains("not closed"), "{p:?}");

        let missing = b.replace("- Verification: none run\n", "");
        let (_, p) = check(&format!("intro\n\n{missing}"));
        assert_eq!(p.len(), 1, "{p:?}");
        assert_eq!(p[0].line, 4);
        assert!(p[0].message.contains("Verification"));

        let (_, p) = check(&format!("{b}\n{b}"));
        assert!(
            p.iter()
                .any(|x| x.message.contains("duplicate") && x.line == 12),
            "{p:?}"
        );

        let (_, p) = check("stray\n<!-- /cairn:memo -->\n");
        assert_eq!(p[0].line, 2);
    }

    #[test]
    fn append_is_idempotent() {
        let dir = tempfile::tempdir().unwrap();
        let memo = dir.path().join("memo.md");
        let lock = dir.path().join("memo.lock");
        fs::write(&memo, "# Project memo").unwrap();
        let b = render_block(&key("t1"), "d", &digest());
        assert_eq!(
            append_block(&memo, &lock, &key("t1"), &b).unwrap(),
            Appended::Written
        );
        assert_eq!(
            append_block(&memo, &lock, &key("t1"), &b).unwrap(),
            Appended::AlreadyPresent
        );
        let text = fs::read_to_string(&memo).unwrap();
        assert_eq!(text, format!("# Project memo\n\n{b}"));
        assert_eq!(check(&text).0, 1);
    }
}
