//! cairn's memories added to the workspace files Codex keeps itself, instead of replacing them.
//!
//! With Codex's own memory on, its phase 2 writes `memory_summary.md` (and, on v1,
//! `MEMORY.md`) from what it learned; cairn writing its rendering over them took that out of
//! Codex's read path. So cairn's lines go into Codex's file, each section's in a block between
//! [`CAIRN_BEGIN`] and [`CAIRN_END`], and the next write finds Codex's part again by removing
//! those blocks ([`without_cairn_blocks`]): Codex's text is kept as Codex left it, cairn's is
//! brought up to date, and a line Codex already holds (folded in by its own consolidation) is
//! not added twice.

use crate::{SUMMARY_HEADINGS, SUMMARY_MAX_BYTES, validate_summary_v2, validate_task_groups};

/// Opens a block of cairn's lines in a file Codex keeps.
pub const CAIRN_BEGIN: &str =
    "<!-- cairn: memories kept by cairn from Claude Code and Codex sessions -->";
/// Closes it.
pub const CAIRN_END: &str = "<!-- /cairn -->";

/// cairn's placeholder lines for an empty section: never added to a file of Codex's.
const PLACEHOLDERS: [&str; 2] = ["No profile facts recorded yet.", "- (none recorded yet)"];

/// `text` without cairn's blocks (an unclosed block runs to the end).
pub fn without_cairn_blocks(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        let t = line.trim();
        if t == CAIRN_BEGIN {
            inside = true;
            continue;
        }
        if inside {
            if t == CAIRN_END {
                inside = false;
            }
            continue;
        }
        out.push_str(line);
    }
    out
}

/// Whether `text` holds a block of cairn's.
pub fn has_cairn_blocks(text: &str) -> bool {
    text.lines().any(|l| l.trim() == CAIRN_BEGIN)
}

/// A line already in `base` (trimmed, case and spacing aside).
fn held(base: &[String], line: &str) -> bool {
    let norm = |s: &str| {
        s.split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
            .to_lowercase()
    };
    let l = norm(line);
    base.iter().any(|b| norm(b) == l)
}

/// Of `lines` (a section of cairn's rendering), those `base` does not hold, without the
/// headings left with nothing under them (a `### project` or `#### day` whose items Codex
/// already has).
fn new_lines(lines: &[&str], base: &[String]) -> Vec<String> {
    let kept: Vec<&str> = lines
        .iter()
        .copied()
        .filter(|l| !l.trim().is_empty())
        .filter(|l| !PLACEHOLDERS.contains(&l.trim()))
        .filter(|l| l.trim_start().starts_with('#') || !held(base, l))
        .collect();
    let level = |l: &str| {
        let t = l.trim_start();
        t.starts_with('#')
            .then(|| t.chars().take_while(|c| *c == '#').count())
    };
    let mut out = Vec::new();
    for (i, l) in kept.iter().enumerate() {
        if let Some(lv) = level(l) {
            // A heading stays when content follows before the next heading of its level or
            // above.
            let has_content = kept[i + 1..]
                .iter()
                .take_while(|n| level(n).is_none_or(|m| m > lv))
                .any(|n| level(n).is_none());
            if !has_content {
                continue;
            }
        }
        out.push((*l).to_string());
    }
    out
}

/// The lines of each `## ` section of `text`, by heading (the lines before the first heading
/// under "").
fn sections(text: &str) -> Vec<(String, Vec<&str>)> {
    let mut out: Vec<(String, Vec<&str>)> = vec![(String::new(), Vec::new())];
    for line in text.lines() {
        if line.starts_with("## ") {
            out.push((line.trim().to_string(), Vec::new()));
        } else if let Some(last) = out.last_mut() {
            last.1.push(line);
        }
    }
    out
}

/// `memory_summary.md`: Codex's `base` (already without cairn's blocks) with, at the end of
/// each of its four sections, cairn's lines of that section from `ours` that it does not hold,
/// in a marked block; cairn's lines are dropped from the end (the last section first) until
/// the file is under Codex's size limit. `None` when `base` is not a valid summary (then it
/// is not Codex's to keep).
pub fn merge_summary(base: &str, ours: &str) -> Option<String> {
    validate_summary_v2(base).ok()?;
    let base_lines: Vec<String> = base.lines().map(str::to_string).collect();
    let ours_sections = sections(ours);
    let mut additions: Vec<(String, Vec<String>)> = SUMMARY_HEADINGS
        .iter()
        .map(|h| {
            let lines = ours_sections
                .iter()
                .find(|(head, _)| head == h)
                .map(|(_, l)| new_lines(l, &base_lines))
                .unwrap_or_default();
            ((*h).to_string(), lines)
        })
        .collect();
    loop {
        let text = render_merged(base, &additions);
        if text.len() < SUMMARY_MAX_BYTES {
            return validate_summary_v2(&text).is_ok().then_some(text);
        }
        // Drop cairn's last line (then a heading left alone goes with it).
        let last = additions.iter_mut().rev().find(|(_, l)| !l.is_empty())?;
        last.1.pop();
        let rest: Vec<&str> = last.1.iter().map(String::as_str).collect();
        last.1 = new_lines(&rest, &[]);
    }
}

fn render_merged(base: &str, additions: &[(String, Vec<String>)]) -> String {
    // Codex's lines as they are; cairn's block goes after a section's last line that is not
    // blank, so that removing it gives Codex's text back.
    let mut out = String::with_capacity(base.len() + 1024);
    let lines: Vec<&str> = base.split_inclusive('\n').collect();
    let mut head = String::new();
    let mut i = 0;
    while i <= lines.len() {
        // The section runs to the next `## ` heading (or the end).
        let end = (i..lines.len())
            .find(|&j| j > i && lines[j].starts_with("## "))
            .unwrap_or(lines.len());
        if i < lines.len() && lines[i].starts_with("## ") {
            head = lines[i].trim().to_string();
        }
        let mut last = end;
        while last > i && lines[last - 1].trim().is_empty() {
            last -= 1;
        }
        for l in &lines[i..last] {
            out.push_str(l);
        }
        if let Some((_, add)) = additions.iter().find(|(h, _)| *h == head)
            && !add.is_empty()
        {
            if !out.ends_with('\n') {
                out.push('\n');
            }
            out.push_str(CAIRN_BEGIN);
            out.push('\n');
            for l in add {
                out.push_str(l);
                out.push('\n');
            }
            out.push_str(CAIRN_END);
            out.push('\n');
        }
        for l in &lines[last..end] {
            out.push_str(l);
        }
        if end >= lines.len() {
            break;
        }
        i = end;
    }
    out
}

/// `MEMORY.md` (v1): Codex's task groups in `base` (already without cairn's blocks), then, in
/// a marked block, cairn's groups from `ours` whose `# Task Group:` header it does not have.
/// `None` when `base` is not a valid task-group file.
pub fn merge_task_groups(base: &str, ours: &str) -> Option<String> {
    validate_task_groups(base).ok()?;
    let headers: Vec<&str> = base
        .lines()
        .filter(|l| l.starts_with("# Task Group: "))
        .collect();
    let mut add = String::new();
    let mut keep = false;
    for line in ours.lines() {
        if line.starts_with("# Task Group: ") {
            keep = !headers.contains(&line);
        }
        if keep {
            add.push_str(line);
            add.push('\n');
        }
    }
    let mut out = base.trim_end().to_string();
    out.push('\n');
    if !add.trim().is_empty() {
        out.push('\n');
        out.push_str(CAIRN_BEGIN);
        out.push('\n');
        out.push_str(add.trim_end());
        out.push('\n');
        out.push_str(CAIRN_END);
        out.push('\n');
    }
    validate_task_groups(&out).is_ok().then_some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    const CODEX: &str = "v1\n\n## User Profile\nA backend developer.\n\n## User preferences\n- Prefers terse answers.\n\n## General Tips\n- Run make check before pushing.\n\n## What's in Memory\n\n### /w/api\n\n#### 2026-11-20\n\n- rollout_summaries/x.md — fixed the build; thread_id=1\n";
    const OURS: &str = "v1\n\n## User Profile\n\nNo profile facts recorded yet.\n\n## User preferences\n\n- Prefers terse answers.\n- Never add Co-Authored-By trailers.\n\n## General Tips\n\n- (none recorded yet)\n\n## What's in Memory\n\n### /w/api\n\n#### 2026-11-21\n- Use pnpm: pnpm, npm\n  - desc: use pnpm, not npm\n";

    #[test]
    fn codex_text_stays_and_cairns_lines_are_added_once() {
        let merged = merge_summary(CODEX, OURS).unwrap();
        validate_summary_v2(&merged).unwrap();
        // Codex's part, byte for byte, is what is left without cairn's blocks.
        assert_eq!(without_cairn_blocks(&merged).trim_end(), CODEX.trim_end());
        assert!(merged.contains("- Never add Co-Authored-By trailers."));
        assert!(merged.contains("- Use pnpm: pnpm, npm"));
        assert_eq!(merged.matches("Prefers terse answers").count(), 1);
        assert!(!merged.contains("none recorded yet"));
        assert!(!merged.contains("No profile facts"));
        // The next write from the merged file: the same file.
        let again = merge_summary(&without_cairn_blocks(&merged), OURS).unwrap();
        assert_eq!(again, merged);
    }

    #[test]
    fn the_merge_stays_under_codexs_limit_and_refuses_an_invalid_base() {
        let long: String = (0..400)
            .map(|i| format!("- cairn preference number {i} said at some length\n"))
            .collect();
        let ours = OURS.replace("- Never add", &format!("{long}- Never add"));
        let merged = merge_summary(CODEX, &ours).unwrap();
        assert!(merged.len() < SUMMARY_MAX_BYTES);
        assert!(merged.starts_with("v1\n"));
        assert_eq!(without_cairn_blocks(&merged).trim_end(), CODEX.trim_end());
        assert!(merge_summary("not a summary\n", OURS).is_none());
    }

    #[test]
    fn task_groups_of_codex_stay_first() {
        let codex = "# Task Group: gamma\nscope: gamma lint migration\napplies_to: cwd=/w/gamma\n\n- did things\n";
        let ours = "# Task Group: gamma\nscope: x\napplies_to: cwd=/w/gamma\n\n- ours\n\n# Task Group: api\nscope: api\napplies_to: cwd=/w/api\n\n- use pnpm\n";
        let merged = merge_task_groups(codex, ours).unwrap();
        assert!(merged.starts_with(codex.trim_end()));
        assert!(merged.contains("# Task Group: api") && !merged.contains("- ours"));
        assert_eq!(without_cairn_blocks(&merged).trim_end(), codex.trim_end());
        assert!(merge_task_groups("nonsense\n", ours).is_none());
    }
}
