//! The turn digest: seed 003's six fields, built offline from a turn's structured events.
//!
//! - requirements: the user's prompt;
//! - investigation: read-only commands and reads;
//! - decision: the assistant's words between investigating and changing;
//! - changes: files edited (with line counts) and commands that changed things;
//! - verification: test and build commands with their exit codes and pass/fail counts
//!   (cargo test, pytest, npm/vitest/jest, mocha, go test);
//! - open issues: remaining-work sentences of the final message and commands that still fail.
//!
//! Every text comes from a turn whose texts are already redacted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use cairn_transcript::{Event, Turn};

use crate::classify::{Effect, classify_command, classify_tool};
use crate::shell;
use crate::text::{one_line, sentences};

/// The six fields of a recorded turn.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TurnDigest {
    pub requirements: String,
    pub investigation: Vec<String>,
    pub decision: String,
    pub changes: Vec<String>,
    pub verification: Vec<Check>,
    pub open_issues: Vec<String>,
}

/// One verification command and its outcome.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Check {
    pub command: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exit_code: Option<i64>,
    /// Passed (exit 0, no failures counted); `None` when the result is not in the transcript.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub counts: Option<TestCounts>,
}

/// Test counts parsed from a runner's summary line(s).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
}

const MAX_ITEMS: usize = 12;

impl Check {
    /// `` `cargo test` → ok (12 passed, 0 failed) ``
    pub fn render(&self) -> String {
        let verdict = match (self.ok, self.exit_code) {
            (Some(true), _) => "ok".to_owned(),
            (Some(false), Some(c)) => format!("FAILED (exit {c})"),
            (Some(false), None) => "FAILED".to_owned(),
            (None, _) => "result not recorded".to_owned(),
        };
        let counts = self.counts.map(|c| {
            let mut s = format!(", {} passed, {} failed", c.passed, c.failed);
            if c.skipped > 0 {
                s += &format!(", {} skipped", c.skipped);
            }
            s
        });
        format!(
            "`{}` → {verdict}{}",
            self.command,
            counts.unwrap_or_default()
        )
    }
}

impl TurnDigest {
    /// Builds the digest of a turn.
    pub fn build(turn: &Turn) -> TurnDigest {
        let calls = tool_calls(turn);
        let mut d = TurnDigest {
            requirements: requirements(&turn.prompt),
            ..TurnDigest::default()
        };

        // Investigation, changes and verification, in order.
        let mut edits: BTreeMap<String, (u32, u32, u32)> = BTreeMap::new();
        let mut first_change: Option<usize> = None;
        let mut changed_cmds = Vec::new();
        for (idx, e) in turn.events.iter().enumerate() {
            match e {
                Event::FileEdit {
                    paths,
                    added,
                    removed,
                    ..
                } => {
                    first_change.get_or_insert(idx);
                    for p in paths {
                        let entry = edits.entry(relative(p, turn.cwd.as_deref())).or_default();
                        entry.0 += added;
                        entry.1 += removed;
                        entry.2 += 1;
                    }
                }
                Event::PatchApplied {
                    success: false,
                    paths,
                    ..
                } => {
                    changed_cmds.push(format!("patch failed to apply: {}", paths.join(", ")));
                }
                Event::ToolCall {
                    call_id,
                    tool,
                    command,
                    args,
                    ..
                } => {
                    let result = calls.get(call_id.as_str()).copied();
                    match command {
                        Some(cmd) => {
                            if let Some(check) = check_for(cmd, result) {
                                push_unique(&mut d.verification, check);
                            } else if classify_command(cmd) == Effect::ReadOnly {
                                push_unique(&mut d.investigation, one_line(cmd, 160));
                            } else {
                                first_change.get_or_insert(idx);
                                let mut s = format!("ran `{}`", one_line(cmd, 160));
                                if let Some((code, is_error)) = result.map(|r| (r.0, r.1))
                                    && (is_error || code.is_some_and(|c| c != 0))
                                {
                                    s += &match code {
                                        Some(c) => format!(" (exit {c})"),
                                        None => " (failed)".to_owned(),
                                    };
                                }
                                push_unique(&mut changed_cmds, s);
                            }
                        }
                        None if is_edit_tool(tool) => {}
                        None => match classify_tool(tool, None) {
                            Effect::ReadOnly => {
                                if let Some(s) = describe_read(tool, args.as_deref()) {
                                    push_unique(&mut d.investigation, s);
                                }
                            }
                            Effect::Changed => {
                                first_change.get_or_insert(idx);
                                push_unique(&mut changed_cmds, format!("used {tool}"));
                            }
                        },
                    }
                }
                _ => {}
            }
        }
        for (path, (added, removed, n)) in &edits {
            let times = if *n > 1 {
                format!(", {n} edits")
            } else {
                String::new()
            };
            d.changes
                .push(format!("{path} (+{added} −{removed}{times})"));
        }
        d.changes.extend(changed_cmds);
        cap(&mut d.investigation);
        cap(&mut d.changes);
        d.verification.truncate(MAX_ITEMS);

        d.decision = decision(turn, first_change);
        d.open_issues = open_issues(turn, &calls);
        d
    }

    /// The six fields as `(label, one-line text)`, in order.
    pub fn fields(&self) -> [(&'static str, String); 6] {
        let list = |v: &[String], empty: &str| {
            if v.is_empty() {
                empty.to_owned()
            } else {
                v.join("; ")
            }
        };
        let checks: Vec<String> = self.verification.iter().map(Check::render).collect();
        [
            (LABELS[0], self.requirements.clone()),
            (LABELS[1], list(&self.investigation, "none")),
            (LABELS[2], self.decision.clone()),
            (LABELS[3], list(&self.changes, "none")),
            (LABELS[4], list(&checks, "none run")),
            (LABELS[5], list(&self.open_issues, "none noted")),
        ]
    }
}

/// The field labels, in order, as they appear in memo blocks.
pub const LABELS: [&str; 6] = [
    "Requirements",
    "Investigation",
    "Decision",
    "Changes",
    "Verification",
    "Open issues",
];

fn push_unique<T: PartialEq>(v: &mut Vec<T>, x: T) {
    if !v.contains(&x) {
        v.push(x);
    }
}

fn cap(v: &mut Vec<String>) {
    if v.len() > MAX_ITEMS {
        let more = v.len() - MAX_ITEMS;
        v.truncate(MAX_ITEMS);
        v.push(format!("… and {more} more"));
    }
}

fn is_edit_tool(tool: &str) -> bool {
    matches!(
        tool,
        "Write" | "Edit" | "MultiEdit" | "NotebookEdit" | "apply_patch"
    )
}

/// The result of each call: (exit code, is_error, output), by call id.
type Results<'a> = std::collections::HashMap<&'a str, (Option<i64>, bool, &'a str)>;

fn tool_calls(turn: &Turn) -> Results<'_> {
    let mut m = Results::new();
    for e in &turn.events {
        if let Event::ToolResult {
            call_id,
            exit_code,
            is_error,
            output,
            ..
        } = e
            && !call_id.is_empty()
        {
            m.insert(call_id.as_str(), (*exit_code, *is_error, output.as_str()));
        }
    }
    m
}

fn requirements(prompt: &str) -> String {
    let mut p = prompt.to_owned();
    for tag in ["#nomemo", "#NOMEMO", "#memo", "#MEMO"] {
        p = p.replace(tag, "");
    }
    let p = one_line(&p, 500);
    if p.is_empty() {
        "(no prompt in the transcript)".to_owned()
    } else {
        p
    }
}

fn relative(path: &str, cwd: Option<&str>) -> String {
    if let Some(c) = cwd {
        let c = c.trim_end_matches('/');
        if let Some(rest) = path.strip_prefix(c).and_then(|r| r.strip_prefix('/')) {
            return rest.to_owned();
        }
    }
    path.to_owned()
}

/// A short description of a read-only tool call (`read src/a.rs`).
fn describe_read(tool: &str, args: Option<&str>) -> Option<String> {
    let v: Value = args.and_then(|a| serde_json::from_str(a).ok())?;
    let get = |k: &str| v.get(k).and_then(Value::as_str).map(|s| one_line(s, 120));
    Some(match tool {
        "Read" | "NotebookRead" | "read_file" => {
            format!(
                "read {}",
                get("file_path").or(get("notebook_path")).or(get("path"))?
            )
        }
        "Grep" | "grep_files" => match get("path") {
            Some(p) => format!("grep `{}` in {p}", get("pattern")?),
            None => format!("grep `{}`", get("pattern")?),
        },
        "Glob" => format!("glob {}", get("pattern")?),
        "LS" | "list_dir" => format!("list {}", get("path")?),
        "WebFetch" => format!("fetch {}", get("url")?),
        "WebSearch" | "web_search" => format!("search \"{}\"", get("query")?),
        _ => return None,
    })
}

/// The test or build runner a command line invokes, if any.
pub fn runner(cmd: &str) -> Option<&'static str> {
    let script = shell::parse(cmd).ok()?;
    for c in &script.commands {
        let words: Vec<&str> = c
            .words
            .iter()
            .map(String::as_str)
            .skip_while(|w| w.contains('=') && !w.starts_with('-'))
            .collect();
        let mut w = words.as_slice();
        // Launchers: `uv run`, `poetry run`, `npx`, `pnpm exec`, `python -m`, `bunx`.
        loop {
            match w {
                ["uv" | "poetry" | "pdm" | "hatch" | "rye", "run", rest @ ..] => w = rest,
                ["npx" | "bunx" | "pnpx", rest @ ..] => w = rest,
                ["pnpm" | "yarn" | "npm", "exec", rest @ ..] => w = rest,
                [py, "-m", rest @ ..] if py.starts_with("python") => w = rest,
                ["time" | "nice", rest @ ..] => w = rest,
                _ => break,
            }
        }
        let prog = w.first().map(|p| p.rsplit('/').next().unwrap_or(p));
        let sub = w.get(1).copied().unwrap_or("");
        let found = match (prog, sub) {
            (Some("cargo"), "test" | "nextest" | "t") => Some("cargo test"),
            (Some("cargo"), "build" | "b" | "check" | "c" | "clippy" | "bench") => {
                Some("cargo build")
            }
            (Some("pytest" | "py.test"), _) => Some("pytest"),
            (Some("npm" | "pnpm" | "yarn" | "bun"), "test" | "t") => Some("npm test"),
            (Some("npm" | "pnpm" | "yarn" | "bun"), "run")
                if w.get(2).is_some_and(|s| {
                    s.starts_with("test")
                        || s.starts_with("build")
                        || s.starts_with("lint")
                        || s.starts_with("typecheck")
                }) =>
            {
                Some("npm test")
            }
            (Some("vitest" | "jest" | "mocha"), _) => Some("npm test"),
            (Some("tsc" | "eslint" | "ruff" | "mypy"), _) => Some("lint"),
            (Some("go"), "test") => Some("go test"),
            (Some("go"), "build" | "vet") => Some("go build"),
            (Some("make" | "just"), s) if s.contains("test") || s.contains("check") => {
                Some("make test")
            }
            (Some("mvn" | "gradle" | "./gradlew"), s) if s.contains("test") => Some("jvm test"),
            _ => None,
        };
        if found.is_some() {
            return found;
        }
    }
    None
}

fn check_for(cmd: &str, result: Option<(Option<i64>, bool, &str)>) -> Option<Check> {
    runner(cmd)?;
    let mut c = Check {
        command: one_line(cmd, 160),
        ..Check::default()
    };
    if let Some((code, is_error, output)) = result {
        c.exit_code = code;
        c.counts = parse_test_counts(output);
        let failed_count = c.counts.is_some_and(|n| n.failed > 0);
        c.ok = Some(!is_error && code.is_none_or(|x| x == 0) && !failed_count);
    }
    Some(c)
}

/// Number-word pairs in a line: "3 passed, 1 failed" → [(3, "passed"), (1, "failed")].
fn pairs(line: &str) -> Vec<(u64, String)> {
    let words: Vec<&str> = line
        .split(|c: char| !c.is_ascii_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect();
    words
        .windows(2)
        .filter_map(|w| Some((w[0].parse::<u64>().ok()?, w[1].to_ascii_lowercase())))
        .collect()
}

fn add_pairs(c: &mut TestCounts, line: &str) -> bool {
    let mut any = false;
    for (n, w) in pairs(line) {
        match w.as_str() {
            "passed" | "passing" | "pass" => c.passed += n,
            "failed" | "failing" | "fail" | "error" | "errors" => c.failed += n,
            "skipped" | "ignored" | "pending" | "todo" | "xfailed" => c.skipped += n,
            _ => continue,
        }
        any = true;
    }
    any
}

/// Pass/fail counts from a test runner's output (the summary lines of cargo test, jest,
/// vitest, pytest, mocha, go test). `None` when no summary is visible.
pub fn parse_test_counts(output: &str) -> Option<TestCounts> {
    let lines: Vec<&str> = output.lines().map(str::trim).collect();
    // cargo: one "test result:" line per test binary; sum them.
    let mut c = TestCounts::default();
    let mut any = false;
    for l in &lines {
        if let Some(rest) = l.strip_prefix("test result:") {
            any |= add_pairs(&mut c, rest);
        }
    }
    if any {
        return Some(c);
    }
    // jest "Tests: 1 failed, 12 passed, 13 total"; vitest " Tests  2 failed | 10 passed (12)".
    for l in lines.iter().rev() {
        if (l.starts_with("Tests:") || l.starts_with("Tests "))
            && add_pairs(
                &mut c,
                l.trim_start_matches("Tests:").trim_start_matches("Tests"),
            )
        {
            return Some(c);
        }
    }
    // pytest "==== 3 passed, 1 failed in 0.12s ====" or "1 passed in 0.02s".
    for l in lines.iter().rev() {
        let t = l.trim_matches(|ch: char| ch == '=' || ch == ' ');
        if (t.contains(" passed") || t.contains(" failed") || t.contains(" error"))
            && t.contains(" in ")
            && add_pairs(&mut c, t.split(" in ").next().unwrap_or(t))
        {
            return Some(c);
        }
    }
    // mocha "12 passing", "1 failing".
    for l in &lines {
        if (l.ends_with("passing") || l.ends_with("failing") || l.contains(" passing ("))
            && add_pairs(&mut c, l)
        {
            any = true;
        }
    }
    if any {
        return Some(c);
    }
    // go test: per-test "--- PASS/FAIL:" lines, else per-package "ok"/"FAIL".
    let (mut tp, mut tf, mut pp, mut pf) = (0, 0, 0, 0);
    for l in &lines {
        if l.starts_with("--- PASS:") {
            tp += 1;
        } else if l.starts_with("--- FAIL:") {
            tf += 1;
        } else if l.starts_with("ok ") || l.starts_with("ok\t") {
            pp += 1;
        } else if l.starts_with("FAIL\t") || l.starts_with("FAIL ") {
            pf += 1;
        }
    }
    if tp + tf > 0 {
        return Some(TestCounts {
            passed: tp,
            failed: tf,
            skipped: 0,
        });
    }
    if pp + pf > 0 {
        return Some(TestCounts {
            passed: pp,
            failed: pf,
            skipped: 0,
        });
    }
    None
}

fn decision(turn: &Turn, first_change: Option<usize>) -> String {
    let texts: Vec<&str> = turn
        .events
        .iter()
        .enumerate()
        .filter(|(i, _)| first_change.is_none_or(|c| *i < c))
        .filter_map(|(_, e)| match e {
            Event::AssistantText { text, .. } => Some(text.as_str()),
            _ => None,
        })
        .collect();
    // Without a change, the last text is the answer, not the reasoning.
    let texts = if first_change.is_none() && texts.len() > 1 {
        &texts[..texts.len() - 1]
    } else if first_change.is_none() {
        &texts[..0]
    } else {
        &texts[..]
    };
    let tail = &texts[texts.len().saturating_sub(2)..];
    let s = one_line(&tail.join(" "), 400);
    if s.is_empty() {
        "no reasoning recorded".to_owned()
    } else {
        s
    }
}

const REMAINING_WORK: &[&str] = &[
    "todo",
    "remaining",
    "remains",
    "still ",
    "not yet",
    "follow-up",
    "follow up",
    "next step",
    "left to",
    "need to",
    "needs to",
    "should ",
    "could not",
    "couldn't",
    "can't",
    "cannot",
    "unable",
    "failed",
    "failing",
    "pending",
    "open question",
    "hand-off",
    "handoff",
    "later",
    "didn't",
    "did not",
    "won't",
    "blocked",
    "known issue",
    "limitation",
    "not covered",
];

fn open_issues(turn: &Turn, calls: &Results<'_>) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(last) = turn.last_assistant_text() {
        for s in sentences(last) {
            let lower = s.to_lowercase();
            if REMAINING_WORK.iter().any(|k| lower.contains(k)) {
                out.push(one_line(&s, 200));
                if out.len() >= 4 {
                    break;
                }
            }
        }
    }
    // Commands whose last run failed.
    let mut last_status: Vec<(String, bool, Option<i64>)> = Vec::new();
    for e in &turn.events {
        if let Event::ToolCall {
            call_id,
            command: Some(cmd),
            ..
        } = e
            && let Some((code, is_error, _)) = calls.get(call_id.as_str())
        {
            let failed = *is_error || code.is_some_and(|c| c != 0);
            let key = one_line(cmd, 120);
            last_status.retain(|(k, _, _)| *k != key);
            last_status.push((key, failed, *code));
        }
    }
    for (cmd, _, code) in last_status.into_iter().filter(|x| x.1) {
        out.push(match code {
            Some(c) => format!("`{cmd}` still fails (exit {c})"),
            None => format!("`{cmd}` still fails"),
        });
        if out.len() >= 8 {
            break;
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runners() {
        assert_eq!(runner("cargo test -p x"), Some("cargo test"));
        assert_eq!(runner("cd a && python3 -m pytest tests -q"), Some("pytest"));
        assert_eq!(runner("pnpm test"), Some("npm test"));
        assert_eq!(runner("npx vitest run"), Some("npm test"));
        assert_eq!(runner("go test ./..."), Some("go test"));
        assert_eq!(runner("rg foo"), None);
    }

    #[test]
    fn cargo_counts_are_summed() {
        let out = "running 3 tests\ntest result: ok. 3 passed; 0 failed; 1 ignored; 0 measured\n\
                   test result: FAILED. 2 passed; 1 failed; 0 ignored";
        assert_eq!(
            parse_test_counts(out),
            Some(TestCounts {
                passed: 5,
                failed: 1,
                skipped: 1
            })
        );
    }

    #[test]
    fn pytest_jest_vitest_mocha_go() {
        let c = |p, f, s| {
            Some(TestCounts {
                passed: p,
                failed: f,
                skipped: s,
            })
        };
        assert_eq!(parse_test_counts("..\n1 passed in 0.02s"), c(1, 0, 0));
        assert_eq!(
            parse_test_counts("===== 2 failed, 10 passed, 1 skipped in 1.20s ====="),
            c(10, 2, 1)
        );
        assert_eq!(
            parse_test_counts(
                "Test Suites: 1 failed, 3 passed, 4 total\nTests:       1 failed, 12 passed, 13 total\nTime: 2 s"
            ),
            c(12, 1, 0)
        );
        assert_eq!(
            parse_test_counts(
                " Test Files  1 passed (1)\n      Tests  2 failed | 10 passed (12)\n   Start at  10:00:00"
            ),
            c(10, 2, 0)
        );
        assert_eq!(
            parse_test_counts("  12 passing (30ms)\n  1 failing"),
            c(12, 1, 0)
        );
        assert_eq!(
            parse_test_counts("--- FAIL: TestX (0.00s)\nFAIL\nFAIL\texample.com/p\t0.01s"),
            c(0, 1, 0)
        );
        assert_eq!(
            parse_test_counts("ok  \texample.com/a\t0.01s\nok  \texample.com/b\t0.02s"),
            c(2, 0, 0)
        );
        assert_eq!(parse_test_counts("hello"), None);
    }

    fn ev_call(id: &str, tool: &str, cmd: Option<&str>, args: Option<&str>) -> Event {
        Event::ToolCall {
            call_id: id.into(),
            tool: tool.into(),
            command: cmd.map(Into::into),
            args: args.map(Into::into),
            at: None,
        }
    }

    fn ev_result(id: &str, code: Option<i64>, out: &str) -> Event {
        Event::ToolResult {
            call_id: id.into(),
            exit_code: code,
            is_error: code.is_some_and(|c| c != 0),
            output: out.into(),
            at: None,
        }
    }

    fn text(t: &str) -> Event {
        Event::AssistantText {
            text: t.into(),
            at: None,
        }
    }

    #[test]
    fn six_fields_from_events() {
        let mut t = Turn::new("t1".into(), 0, 1);
        t.cwd = Some("/w/app".into());
        t.prompt = "Change DEFAULT_TIMEOUT from 30 to 60 #memo".into();
        t.events = vec![
            Event::UserPrompt {
                text: t.prompt.clone(),
                at: None,
            },
            ev_call(
                "1",
                "exec_command",
                Some("rg -n DEFAULT_TIMEOUT src tests"),
                None,
            ),
            ev_result("1", Some(0), "src/config.py:12"),
            ev_call(
                "r",
                "Read",
                None,
                Some(r#"{"file_path":"/w/app/src/config.py"}"#),
            ),
            text("Only the definition and one test use it, so I will change both to 60."),
            Event::FileEdit {
                call_id: "2".into(),
                tool: "Edit".into(),
                paths: vec!["/w/app/src/config.py".into()],
                added: 1,
                removed: 1,
                at: None,
            },
            ev_call(
                "3",
                "exec_command",
                Some("python3 -m pytest tests/test_config.py -q"),
                None,
            ),
            ev_result("3", Some(0), ".\n1 passed in 0.02s"),
            ev_call("4", "exec_command", Some("npm run lint"), None),
            ev_result("4", Some(1), "error"),
            text("Changed both. The docs still mention 30; update them later."),
        ];
        let d = TurnDigest::build(&t);
        assert_eq!(d.requirements, "Change DEFAULT_TIMEOUT from 30 to 60");
        assert_eq!(
            d.investigation,
            vec![
                "rg -n DEFAULT_TIMEOUT src tests",
                "read /w/app/src/config.py"
            ]
        );
        assert!(d.decision.contains("change both to 60"), "{}", d.decision);
        assert_eq!(d.changes, vec!["src/config.py (+1 −1)"]);
        assert_eq!(
            d.verification[0].render(),
            "`python3 -m pytest tests/test_config.py -q` → ok, 1 passed, 0 failed"
        );
        assert_eq!(
            d.verification[1].render(),
            "`npm run lint` → FAILED (exit 1)"
        );
        assert_eq!(
            d.open_issues,
            vec![
                "The docs still mention 30; update them later.",
                "`npm run lint` still fails (exit 1)"
            ]
        );
    }
}
