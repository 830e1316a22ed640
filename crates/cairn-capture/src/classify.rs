//! Did a turn change anything? And does the user want it recorded?
//!
//! A turn is "changed" when it edited or wrote a file, applied a patch, used a tool that is not
//! known to be read-only, or ran any shell command not on the read-only allowlist. Missing a
//! record is worse than one record too many, so everything unknown counts as a change: unknown
//! programs, output redirections to files, `rm`, `mv`, `tee`, `sed -i`, `find -delete`/`-exec`,
//! pipes into programs that write, and any line the shell reader cannot read.

use serde::Serialize;

use cairn_transcript::{Event, Turn};

use crate::shell;

/// What a command or tool does to the workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Effect {
    ReadOnly,
    Changed,
}

/// Programs that only read (with the argument checks in [`simple_effect`]).
const READ_ONLY: &[&str] = &[
    "rg",
    "grep",
    "egrep",
    "fgrep",
    "zgrep",
    "ag",
    "ack",
    "cat",
    "bat",
    "batcat",
    "zcat",
    "bzcat",
    "xzcat",
    "less",
    "more",
    "ls",
    "ll",
    "la",
    "exa",
    "eza",
    "head",
    "tail",
    "wc",
    "find",
    "fd",
    "fdfind",
    "jq",
    "yq",
    "stat",
    "diff",
    "cmp",
    "comm",
    "pwd",
    "echo",
    "printf",
    "which",
    "whereis",
    "type",
    "file",
    "tree",
    "du",
    "df",
    "printenv",
    "id",
    "whoami",
    "hostname",
    "uname",
    "date",
    "cut",
    "tr",
    "nl",
    "column",
    "basename",
    "dirname",
    "realpath",
    "readlink",
    "true",
    "false",
    "test",
    "[",
    "[[",
    "sleep",
    "seq",
    "xxd",
    "od",
    "hexdump",
    "strings",
    "md5sum",
    "sha1sum",
    "sha256sum",
    "sha512sum",
    "b2sum",
    "shasum",
    "cksum",
    "sum",
    "paste",
    "fold",
    "expand",
    "unexpand",
    "rev",
    "tac",
    "sort",
    "uniq",
    "awk",
    "gawk",
    "mawk",
    "nawk",
    "sed",
    "git",
    "cd",
    "pushd",
    "popd",
    "export",
    "set",
    "unset",
    "alias",
    "local",
    "declare",
    "typeset",
    "read",
    "shift",
    "return",
    "exit",
    "wait",
    "hash",
    ":",
    "ps",
    "pgrep",
    "free",
    "uptime",
    "nproc",
    "lscpu",
    "ldd",
    "man",
    "tokei",
    "cloc",
    "scc",
    "expr",
    "numfmt",
    "look",
    "cargo",
    "npm",
    "pnpm",
    "yarn",
    "pip",
    "pip3",
    "go",
    "python",
    "python3",
    "node",
    "ruby",
    "docker",
    "kubectl",
];

/// Claude Code and Codex tools that never change files.
const READ_ONLY_TOOLS: &[&str] = &[
    "Read",
    "Grep",
    "Glob",
    "LS",
    "NotebookRead",
    "WebFetch",
    "WebSearch",
    "TodoWrite",
    "TodoRead",
    "ExitPlanMode",
    "BashOutput",
    "AskUserQuestion",
    "ListMcpResourcesTool",
    "ReadMcpResourceTool",
    "update_plan",
    "view_image",
    "web_search",
    "read_file",
    "list_dir",
    "grep_files",
    "list_mcp_resources",
    "read_mcp_resource",
];

/// Shell tools whose `command` is a shell line.
const SHELL_TOOLS: &[&str] = &[
    "Bash",
    "PowerShell",
    "shell",
    "shell_command",
    "exec_command",
    "container.exec",
    "local_shell",
];

/// Judges one shell command line.
pub fn classify_command(line: &str) -> Effect {
    classify_depth(line, 0)
}

fn classify_depth(line: &str, depth: u32) -> Effect {
    if depth > 8 {
        return Effect::Changed;
    }
    let Ok(script) = shell::parse(line) else {
        return Effect::Changed;
    };
    if script.writes_to_process {
        return Effect::Changed;
    }
    for sub in &script.substitutions {
        if classify_depth(sub, depth + 1) == Effect::Changed {
            return Effect::Changed;
        }
    }
    for c in &script.commands {
        if c.writes_file {
            return Effect::Changed;
        }
        if simple_effect(&c.words, depth) == Effect::Changed {
            return Effect::Changed;
        }
    }
    Effect::ReadOnly
}

fn program(word: &str) -> &str {
    word.rsplit('/').next().unwrap_or(word)
}

fn is_assignment(w: &str) -> bool {
    match w.split_once('=') {
        Some((name, _)) => {
            !name.is_empty()
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
                && !name.starts_with(|c: char| c.is_ascii_digit())
        }
        None => false,
    }
}

/// The effect of one simple command given its words.
fn simple_effect(words: &[String], depth: u32) -> Effect {
    let words: Vec<&str> = words
        .iter()
        .map(String::as_str)
        .skip_while(|w| is_assignment(w))
        .collect();
    let Some((&first, args)) = words.split_first() else {
        return Effect::ReadOnly; // only assignments
    };
    let prog = program(first);
    let rest = |from: &[&str]| -> Effect {
        if from.is_empty() {
            Effect::ReadOnly
        } else {
            simple_effect(
                &from.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>(),
                depth,
            )
        }
    };
    match prog {
        // Shell keywords that prefix a command: judge what follows.
        "if" | "then" | "else" | "elif" | "do" | "while" | "until" | "!" => rest(args),
        // Keywords that end a construct, or whose words are not commands.
        "fi" | "done" | "esac" | "for" | "case" | "in" | "select" => Effect::ReadOnly,
        // Wrappers: judge the wrapped command.
        "time" | "nice" | "exec" | "builtin" | "stdbuf" => {
            let skip = args.iter().take_while(|a| a.starts_with('-')).count();
            let skip = if prog == "nice" && args.first() == Some(&"-n") {
                2
            } else {
                skip
            };
            rest(args.get(skip..).unwrap_or(&[]))
        }
        "command" => {
            if args.first().is_some_and(|a| *a == "-v" || *a == "-V") {
                Effect::ReadOnly
            } else {
                rest(args)
            }
        }
        "timeout" => {
            let mut i = 0;
            while i < args.len() && args[i].starts_with('-') {
                i += if matches!(args[i], "-s" | "-k" | "--signal" | "--kill-after") {
                    2
                } else {
                    1
                };
            }
            rest(args.get(i + 1..).unwrap_or(&[]))
        }
        "env" => {
            let mut i = 0;
            while i < args.len() && (args[i].starts_with('-') || is_assignment(args[i])) {
                i += if matches!(args[i], "-u" | "-C" | "--unset" | "--chdir") {
                    2
                } else {
                    1
                };
            }
            rest(args.get(i..).unwrap_or(&[]))
        }
        "xargs" => {
            let mut i = 0;
            while i < args.len() && args[i].starts_with('-') {
                let takes_value = matches!(
                    args[i],
                    "-I" | "-n"
                        | "-L"
                        | "-P"
                        | "-d"
                        | "-E"
                        | "-s"
                        | "-a"
                        | "--max-args"
                        | "--max-procs"
                        | "--delimiter"
                        | "--arg-file"
                );
                i += if takes_value { 2 } else { 1 };
            }
            rest(args.get(i..).unwrap_or(&[]))
        }
        "bash" | "sh" | "zsh" | "dash" | "ksh" => {
            // `bash -c SCRIPT` / `-lc`: judge the script; a script file or stdin is unknown.
            let mut i = 0;
            while i < args.len() && args[i].starts_with('-') {
                if args[i].contains('c') && !args[i].starts_with("--") {
                    return match args.get(i + 1) {
                        Some(script) => classify_depth(script, depth + 1),
                        None => Effect::Changed,
                    };
                }
                i += 1;
            }
            Effect::Changed
        }
        _ if !READ_ONLY.contains(&prog) => Effect::Changed,
        _ => args_effect(prog, args),
    }
}

fn has_any(args: &[&str], flags: &[&str]) -> bool {
    args.iter().any(|a| {
        flags
            .iter()
            .any(|f| a == f || a.starts_with(&format!("{f}=")))
    })
}

/// A short-option cluster (`-ni`) containing `flag`.
fn has_short(args: &[&str], flag: char) -> bool {
    args.iter()
        .any(|a| a.starts_with('-') && !a.starts_with("--") && a.len() > 1 && a[1..].contains(flag))
}

fn positional<'a>(args: &[&'a str]) -> Vec<&'a str> {
    args.iter()
        .copied()
        .filter(|a| !a.starts_with('-'))
        .collect()
}

/// Argument checks for allowlisted programs that can also write.
fn args_effect(prog: &str, args: &[&str]) -> Effect {
    let changed = match prog {
        "find" => has_any(
            args,
            &[
                "-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf",
                "-fls",
            ],
        ),
        "fd" | "fdfind" => has_any(args, &["-x", "--exec", "-X", "--exec-batch"]),
        "sed" => {
            has_any(args, &["--in-place"])
                || args.iter().any(|a| {
                    a.starts_with("-i")
                        || (a.starts_with('-') && !a.starts_with("--") && a.contains('i'))
                })
                || args.iter().any(|a| sed_script_writes(a))
        }
        "awk" | "gawk" | "mawk" | "nawk" => {
            has_any(args, &["-i", "--inplace", "-f", "--file"])
                || args.iter().any(|a| awk_program_writes(a))
        }
        "sort" => has_any(args, &["-o", "--output"]) || has_short(args, 'o'),
        "uniq" => positional(args).len() >= 2,
        "yq" => has_any(args, &["-i", "--inplace"]) || has_short(args, 'i'),
        "tail" | "head" | "cat" | "less" | "more" => false,
        "git" => git_changes(args),
        "cargo" => {
            !matches!(
                first_positional(args),
                Some("metadata" | "tree" | "version" | "search" | "locate-project" | "pkgid")
            ) && !has_any(args, &["--version", "-V", "--list"])
        }
        "npm" | "pnpm" | "yarn" => {
            !matches!(
                first_positional(args),
                Some(
                    "ls" | "list"
                        | "ll"
                        | "la"
                        | "view"
                        | "info"
                        | "show"
                        | "outdated"
                        | "why"
                        | "explain"
                        | "root"
                        | "prefix"
                        | "search"
                )
            ) && !version_only(args, &["--version", "-v"])
        }
        "pip" | "pip3" => {
            !matches!(
                first_positional(args),
                Some("list" | "show" | "freeze" | "check" | "index")
            ) && !version_only(args, &["--version", "-V"])
        }
        "go" => match first_positional(args) {
            Some("version" | "list" | "doc") => false,
            Some("env") => has_any(args, &["-w", "-u"]),
            _ => true,
        },
        "python" | "python3" | "node" | "ruby" => {
            !(args.len() == 1 && has_any(args, &["--version", "-V", "-v"]))
        }
        "docker" => !matches!(
            first_positional(args),
            Some("ps" | "images" | "logs" | "inspect" | "version" | "info")
        ),
        "kubectl" => !matches!(
            first_positional(args),
            Some("get" | "describe" | "logs" | "version" | "explain" | "top" | "api-resources")
        ),
        "case" => false,
        _ => false,
    };
    if changed {
        Effect::Changed
    } else {
        Effect::ReadOnly
    }
}

/// `prog --version` and nothing else.
fn version_only(args: &[&str], flags: &[&str]) -> bool {
    args.len() == 1 && has_any(args, flags)
}

fn first_positional<'a>(args: &[&'a str]) -> Option<&'a str> {
    args.iter().copied().find(|a| !a.starts_with('-'))
}

fn sed_script_writes(a: &str) -> bool {
    // The `w FILE` command or the `w` flag of `s///w FILE`.
    let t = a.trim_start();
    t.starts_with("w ") || t.starts_with("W ") || a.contains("/w ") || a.contains(";w ")
}

fn awk_program_writes(a: &str) -> bool {
    [
        "system(", "| \"", "|\"", "|&", "print >", "printf >", "print>", "printf>", "> \"", ">\"",
        ">> ", "fflush(",
    ]
    .iter()
    .any(|p| a.contains(p))
}

/// `git` reads only with these subcommands (after global options).
fn git_changes(args: &[&str]) -> bool {
    let mut i = 0;
    while i < args.len() && args[i].starts_with('-') {
        i += if matches!(
            args[i],
            "-C" | "-c" | "--git-dir" | "--work-tree" | "--namespace"
        ) {
            2
        } else {
            1
        };
    }
    let Some(sub) = args.get(i) else {
        return false;
    };
    let rest = args.get(i + 1..).unwrap_or(&[]);
    let pos = positional(rest);
    match *sub {
        "status" | "diff" | "log" | "show" | "blame" | "grep" | "rev-parse" | "ls-files"
        | "ls-tree" | "cat-file" | "describe" | "shortlog" | "merge-base" | "rev-list"
        | "whatchanged" | "name-rev" | "for-each-ref" | "show-ref" | "count-objects" | "var"
        | "version" | "help" | "check-ignore" | "check-attr" | "diff-tree" | "diff-files"
        | "diff-index" | "cherry" | "range-diff" | "annotate" | "show-branch" => false,
        "reflog" => !matches!(pos.first(), None | Some(&"show")),
        "branch" => {
            !pos.is_empty()
                || has_any(
                    rest,
                    &[
                        "-d",
                        "-D",
                        "-m",
                        "-M",
                        "-c",
                        "-C",
                        "-f",
                        "-u",
                        "--delete",
                        "--move",
                        "--copy",
                        "--force",
                        "--set-upstream-to",
                        "--unset-upstream",
                        "--edit-description",
                    ],
                )
        }
        "tag" => !(pos.is_empty() || has_any(rest, &["-l", "--list"])),
        "remote" => !matches!(pos.first(), None | Some(&"show" | &"get-url")),
        "config" => {
            !(has_any(
                rest,
                &["--get", "--get-all", "--get-regexp", "--list", "-l"],
            ) || matches!(pos.first(), Some(&"get" | &"list")))
        }
        "stash" => !matches!(pos.first(), Some(&"list" | &"show")),
        "worktree" => pos.first() != Some(&"list"),
        "submodule" => pos.first() != Some(&"status"),
        "notes" => !matches!(pos.first(), Some(&"show" | &"list")),
        _ => true,
    }
}

/// The effect of one tool call. `command` is the shell line for shell tools.
pub fn classify_tool(tool: &str, command: Option<&str>) -> Effect {
    if SHELL_TOOLS.contains(&tool) {
        return match command {
            Some(c) => classify_command(c),
            None => Effect::Changed,
        };
    }
    if READ_ONLY_TOOLS.contains(&tool) {
        Effect::ReadOnly
    } else {
        Effect::Changed
    }
}

/// Why a turn counts as changed (the first reasons found, for logs and the digest).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct TurnClass {
    pub changed: bool,
    pub reasons: Vec<String>,
}

/// Classifies a whole turn from its events.
pub fn classify_turn(turn: &Turn) -> TurnClass {
    let mut reasons = Vec::new();
    for e in &turn.events {
        let reason = match e {
            Event::FileEdit { tool, paths, .. } => Some(format!("{tool} {}", paths.join(", "))),
            Event::PatchApplied { paths, .. } => Some(format!("patch {}", paths.join(", "))),
            Event::ToolCall { tool, command, .. } => {
                match classify_tool(tool, command.as_deref()) {
                    Effect::Changed => Some(match command {
                        Some(c) => format!("ran `{}`", crate::text::one_line(c, 120)),
                        None => format!("used tool {tool}"),
                    }),
                    Effect::ReadOnly => None,
                }
            }
            _ => None,
        };
        if let Some(r) = reason {
            if reasons.len() < 5 {
                reasons.push(r);
            } else {
                break;
            }
        }
    }
    TurnClass {
        changed: !reasons.is_empty(),
        reasons,
    }
}

/// `#memo` / `#nomemo` found in the user's prompts of a turn.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct MemoTags {
    pub memo: bool,
    pub nomemo: bool,
}

/// Looks for the tags as whole words (case-insensitive) in `text`.
pub fn memo_tags(text: &str) -> MemoTags {
    MemoTags {
        memo: has_tag(text, "#memo"),
        nomemo: has_tag(text, "#nomemo"),
    }
}

fn has_tag(text: &str, tag: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    let b = lower.as_bytes();
    let mut from = 0;
    while let Some(i) = lower[from..].find(tag) {
        let at = from + i;
        let end = at + tag.len();
        let before_ok = at == 0 || !is_word(b[at - 1]);
        let after_ok = end >= b.len() || !is_word(b[end]);
        if before_ok && after_ok {
            return true;
        }
        from = end;
    }
    false
}

fn is_word(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-' || c == b'#'
}

/// The tags of every prompt in a turn (the first prompt and any follow-ups).
pub fn turn_tags(turn: &Turn) -> MemoTags {
    let mut t = memo_tags(&turn.prompt);
    for e in &turn.events {
        if let Event::UserPrompt { text, .. } = e {
            let x = memo_tags(text);
            t.memo |= x.memo;
            t.nomemo |= x.nomemo;
        }
    }
    t
}

/// Whether a turn is recorded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "decision", rename_all = "kebab-case")]
pub enum Decision {
    /// Recorded: it changed something, or `#memo` asked for it (`forced`).
    Record { forced: bool, reasons: Vec<String> },
    /// `#nomemo` (alone or with `#memo`).
    SkipNoMemo,
    /// Read-only, no `#memo`.
    SkipReadOnly,
}

/// The rule: `#nomemo` wins, then a change, then `#memo`.
pub fn decide(turn: &Turn) -> Decision {
    let tags = turn_tags(turn);
    if tags.nomemo {
        return Decision::SkipNoMemo;
    }
    let class = classify_turn(turn);
    if class.changed {
        Decision::Record {
            forced: false,
            reasons: class.reasons,
        }
    } else if tags.memo {
        Decision::Record {
            forced: true,
            reasons: vec!["#memo".into()],
        }
    } else {
        Decision::SkipReadOnly
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Effect::{Changed, ReadOnly};

    /// The classification table: every row is (command line, expected effect).
    const TABLE: &[(&str, Effect)] = &[
        // The read-only allowlist.
        ("rg -n DEFAULT_TIMEOUT src tests", ReadOnly),
        ("grep -rn 'fn main' .", ReadOnly),
        ("cat src/config.py", ReadOnly),
        ("ls -la", ReadOnly),
        ("head -n 50 README.md", ReadOnly),
        ("tail -f log.txt", ReadOnly),
        ("wc -l src/*.rs", ReadOnly),
        ("find . -name '*.rs' -type f", ReadOnly),
        ("jq '.dependencies' package.json", ReadOnly),
        ("stat Cargo.toml", ReadOnly),
        ("diff a.txt b.txt", ReadOnly),
        ("git status", ReadOnly),
        ("git diff HEAD~1 -- src", ReadOnly),
        ("git log --oneline -20", ReadOnly),
        ("git show HEAD:src/main.rs", ReadOnly),
        ("git -C ../other status --short", ReadOnly),
        ("git branch -a", ReadOnly),
        ("pwd", ReadOnly),
        ("echo hello", ReadOnly),
        ("which cargo", ReadOnly),
        ("file target/debug/cairn", ReadOnly),
        ("tree -L 2", ReadOnly),
        ("sed -n '1,80p' src/lib.rs", ReadOnly),
        ("awk '{print $1}' access.log", ReadOnly),
        ("awk '$3 > 5 {print}' data.txt", ReadOnly),
        ("cd src && rg foo | head -20", ReadOnly),
        ("cat a.txt | sort | uniq -c | sort -rn | head", ReadOnly),
        ("FOO=1 rg foo", ReadOnly),
        ("bash -lc 'rg foo src'", ReadOnly),
        ("echo $(git rev-parse HEAD)", ReadOnly),
        ("cargo metadata --format-version 1", ReadOnly),
        ("npm ls --depth 0", ReadOnly),
        ("cargo test 2>&1 | tail -20 >/dev/null", Changed), // cargo test is not read-only
        ("ls 2>/dev/null", ReadOnly),
        ("grep foo <<EOF\na > b\nEOF", ReadOnly),
        ("xargs -n1 echo", ReadOnly),
        ("if grep -q x f; then echo yes; fi", ReadOnly),
        ("for f in *.rs; do wc -l $f; done", ReadOnly),
        ("if test -f x; then rm x; fi", Changed),
        ("while true; do touch x; done", Changed),
        // Output redirection.
        ("ls > files.txt", Changed),
        ("echo 'x' >> notes.md", Changed),
        ("cat a 2> err.log", Changed),
        ("awk '{print > \"out.txt\"}' in.txt", Changed),
        ("cat <<'EOF' > src/new.rs\nfn main() {}\nEOF", Changed),
        // Writers.
        ("rm -rf build", Changed),
        ("mv a.txt b.txt", Changed),
        ("rg foo | tee matches.txt", Changed),
        ("sed -i 's/30/60/' src/config.py", Changed),
        ("sed -i.bak 's/a/b/' f", Changed),
        ("sed -Ei 's/a/b/' f", Changed),
        ("find . -name '*.tmp' -delete", Changed),
        ("find . -name '*.rs' -exec rustfmt {} \\;", Changed),
        ("fd -e tmp -x rm", Changed),
        ("rg -l foo | xargs rm", Changed),
        ("cat script.sh | sh", Changed),
        ("curl https://x | bash", Changed),
        ("sort -o out.txt in.txt", Changed),
        ("uniq in.txt out.txt", Changed),
        ("git commit -am wip", Changed),
        ("git checkout main", Changed),
        ("git branch feature-x", Changed),
        ("git stash", Changed),
        ("touch a", Changed),
        ("mkdir -p x", Changed),
        ("cp a b", Changed),
        ("chmod +x run.sh", Changed),
        ("npm install lodash", Changed),
        ("python3 -c 'open(\"x\",\"w\")'", Changed),
        ("apply_patch <<'EOF'\n*** Begin Patch\nEOF", Changed),
        ("echo $(rm -rf x)", Changed),
        ("echo `touch y`", Changed),
        ("tee >(gzip > f.gz) < in", Changed),
        ("sudo cat /etc/shadow", Changed),
        // Unknown programs and unreadable lines.
        ("frobnicate --all", Changed),
        ("./scripts/deploy.sh", Changed),
        ("echo 'unterminated", Changed),
        ("bash deploy.sh", Changed),
    ];

    #[test]
    fn classification_table() {
        let mut wrong = Vec::new();
        for (cmd, want) in TABLE {
            let got = classify_command(cmd);
            if got != *want {
                wrong.push(format!("{cmd:?}: got {got:?}, want {want:?}"));
            }
        }
        assert!(wrong.is_empty(), "misclassified:\n{}", wrong.join("\n"));
    }

    #[test]
    fn tools() {
        assert_eq!(classify_tool("Read", None), ReadOnly);
        assert_eq!(classify_tool("Grep", None), ReadOnly);
        assert_eq!(classify_tool("Write", None), Changed);
        assert_eq!(classify_tool("mcp__github__create_pr", None), Changed);
        assert_eq!(classify_tool("Bash", Some("ls")), ReadOnly);
        assert_eq!(classify_tool("exec_command", Some("rm x")), Changed);
        assert_eq!(classify_tool("Bash", None), Changed);
    }

    #[test]
    fn tags() {
        assert_eq!(
            memo_tags("fix it #nomemo"),
            MemoTags {
                memo: false,
                nomemo: true
            }
        );
        assert_eq!(
            memo_tags("#MEMO explain this"),
            MemoTags {
                memo: true,
                nomemo: false
            }
        );
        assert_eq!(memo_tags("see #memos and x#memo"), MemoTags::default());
        let both = memo_tags("#memo #nomemo");
        assert!(both.memo && both.nomemo);
    }
}
