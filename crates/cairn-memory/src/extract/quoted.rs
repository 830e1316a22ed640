//! What in a prompt is not the user's own words: fenced and indented code, quoted and markup
//! lines, and text the prompt says it quotes (tool output and logs, documentation, a
//! reviewer's words, a pasted document under a markdown heading).

use std::sync::LazyLock;

use regex::Regex;

use super::{has_any, re};

/// Where a prompt starts quoting something else: "the linter says:", "From the polars
/// docs:", "this shows up in the browser console:". What follows on the line, and the lines
/// after up to a blank one, are not the user's own words.
static QUOTES_FOLLOW: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?i)(?:\b(?:says|said|prints|printed|shows|showed|outputs|output|reads|warns|complains|logs|returns|returned|replied|answered|wrote|writes|commented|suggested|mentioned|posted|left|dropped)(?:\s+[^:\s]+){0,4}|\b(?:shows up|appears|pops up|comes up) (?:in|on) [^:.?!\n]+|\b(?:here is|here's|here are|below is|below are)\b[^:.?!\n]*|\bfrom (?:the|our|their|his|her|a|an) [^:.?!\n]+|\b(?:docs|documentation|readme|changelog|linter|compiler|console|error message|warning|stack ?trace|traceback|log|logs|output|review|review comments?|comments? from [^:.?!\n]+|spec says|spec|specs|specification|requirements|acceptance criteria|new feature|feature request|user story|manual)\b(?:`[^`\n]*`|[^:\n`.?!])*)\s*:",
    )
});
/// The same in Japanese and Chinese: "ドキュメントにはこう書いてあります：「…」", "文档里写着：“…”".
static QUOTES_FOLLOW_CJK: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r"(?:書いてあります|書いてありました|書かれています|書かれていました|と書いて|仕様(?:です)?|要件(?:です)?|新機能|需求|规格|新功能|功能说明|によると|曰く|と言っています|(?:コメント|レビュー|指摘)[^：:「」。]{0,8}|写[着著]|写道|里说|中说|上说|提示|显示|报错|评论|意见|エラーメッセージ|警告|ログ|日志)\s*[：:]",
    )
});
/// A line that is tool output: "Warning: …", "npm WARN …", "error[E0502]: …".
static TOOL_LINE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"^(?:(?:warning|error|fatal|panic|exception|caused by|assertion failed|assertion `[^`]*` failed)(?:\[\w+\])?:|(?:[a-z_$][\w$]*\.)*[a-z_$][\w$]*(?:error|exception|warning|fault)(?:\[\w+\])?:\s|= (?:note|help|warning|error)\b|exception in thread |at [\w$.<>/-]+\([^()]*\)$|file "[^"]+", line \d+|traceback \(most recent|npm (?:warn|err!?)\s|fail\s+\S+\.\w+\b|[\w./\\-]+\.\w+:\d+(?::\d+)?:?\s|thread '[^']*' panicked|test result:|running \d+ tests?|-{2,} .* -{2,}|\[[\d:.,\s-]+\]|\d{4}-\d{2}-\d{2}[t ]\d{2}:\d{2}|<(?:inf|wrn|err|dbg)>|(?:info|warn|debug|trace|error)\s*\[)"#,
    )
});

/// The lead-ins of a spec: after its title, the lines that follow are the spec.
const SPEC_WORDS: &[&str] = &[
    "spec",
    "requirements",
    "acceptance criteria",
    "new feature",
    "feature request",
    "user story",
    "仕様",
    "要件",
    "新機能",
    "需求",
    "规格",
    "新功能",
    "功能说明",
];

/// Words one of the quote lead-ins holds ([`QUOTES_FOLLOW`], [`QUOTES_FOLLOW_CJK`]).
const QUOTE_WORDS: &[&str] = &[
    "仕様",
    "新機能",
    "新功能",
    "功能说明",
    "要件",
    "需求",
    "规格",
    "spec",
    "requirement",
    "acceptance",
    "feature",
    "story",
    "say",
    "said",
    "print",
    "show",
    "output",
    "read",
    "warn",
    "complain",
    "log",
    "return",
    "repl",
    "answer",
    "wrote",
    "write",
    "comment",
    "suggest",
    "mention",
    "post",
    "appear",
    "pops up",
    "comes up",
    "here",
    "below",
    "from ",
    "doc",
    "readme",
    "changelog",
    "lint",
    "compil",
    "console",
    "error",
    "trace",
    "review",
    "spec",
    "manual",
    "書",
    "によると",
    "曰く",
    "言って",
    "コメント",
    "レビュー",
    "指摘",
    "写",
    "说",
    "提示",
    "显示",
    "报错",
    "评论",
    "意见",
    "エラー",
    "警告",
    "ログ",
    "日志",
];

/// Whether a lowercased line can be tool output ([`TOOL_LINE`]), cheaply.
fn may_be_tool_line(lower: &str) -> bool {
    const STARTS: &[&str] = &[
        "warning",
        "error",
        "fatal",
        "panic",
        "exception",
        "caused by",
        "assertion",
        "traceback",
        "npm ",
        "fail",
        "thread '",
        "test result",
        "running ",
        "--",
        "[",
        "<",
        "info",
        "warn",
        "debug",
        "trace",
    ];
    STARTS.iter().any(|p| lower.starts_with(p))
        || lower.starts_with(|c: char| c.is_ascii_digit())
        // `ValueError: …`, `java.lang.IllegalStateException: …`, `at com.acme.Tx.commit(…)`,
        // `File "a.py", line 3`.
        || lower.split_whitespace().next().is_some_and(|t| {
            t.ends_with("error:") || t.ends_with("exception:") || t.ends_with("warning:")
                || t.ends_with("fault:") || t.ends_with("]:")
        })
        || (lower.starts_with("at ") && lower.ends_with(')'))
        || lower.starts_with("file \"")
        || lower.starts_with("= ")
        || lower.split_whitespace().next().is_some_and(|t| {
            t.contains('.')
                && t.split(':')
                    .nth(1)
                    .is_some_and(|n| n.starts_with(|c: char| c.is_ascii_digit()))
        })
        || lower.contains("<inf>")
        || lower.contains("<wrn>")
        || lower.contains("<err>")
        || lower.contains("<dbg>")
}

/// Removes what is not the user's own words: fenced code, quoted lines, markup lines, and
/// text the prompt says it quotes (tool output, documentation).
pub(super) fn prose(prompt: &str) -> String {
    let mut out = String::new();
    let mut in_fence = false;
    let mut quoting = false;
    let mut quoted_any = false;
    let mut pasted_doc = false;
    for line in prompt.lines().take(400) {
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            // "Staging uses this config:" then the block: what it says is in the block,
            // which is not kept; the line alone would be a stub ("Staging uses this config.").
            if !in_fence {
                let kept = out.trim_end_matches('\n');
                if kept.ends_with(':') || kept.ends_with('：') {
                    let start = kept.rfind('\n').map_or(0, |i| i + 1);
                    out.truncate(start);
                }
            } else if quoting {
                // "here's the failing test output:" then a fenced block: the block was the
                // quote, and what follows it ("fix it. and always …") is the user's again.
                quoting = false;
            }
            in_fence = !in_fence;
            continue;
        }
        if in_fence || t.starts_with('>') || t.starts_with('<') || t.starts_with("    ") {
            continue;
        }
        // A markdown heading: a document pasted in (a README section, a spec), to the end.
        if pasted_doc || (t.starts_with('#') && t.trim_start_matches('#').starts_with(' ')) {
            pasted_doc = true;
            continue;
        }
        if quoting {
            // Blank lines right after the lead-in open the quote; the next one ends it.
            if t.trim().is_empty() {
                quoting = !quoted_any;
            } else {
                quoted_any = true;
            }
            continue;
        }
        // Cheap first: both patterns need a colon, but for "npm WARN …" and "FAIL x.ts".
        let lower = t.to_ascii_lowercase();
        let colon = t.contains(':') || t.contains('：');
        if may_be_tool_line(&lower) && TOOL_LINE.is_match(&lower) {
            continue;
        }
        let quoted = if colon && has_any(&lower, QUOTE_WORDS) {
            QUOTES_FOLLOW
                .find(line)
                .or_else(|| {
                    (!line.is_ascii())
                        .then(|| QUOTES_FOLLOW_CJK.find(line))
                        .flatten()
                })
                // "The design docs are here: https://…", "docs are at https://…": a link,
                // not a quote.
                .filter(|m| {
                    // "here's the thing: …" opens the user's own point.
                    let lead = m.as_str().to_ascii_lowercase();
                    let lead = lead.trim_end_matches(':').trim_end();
                    if lead.ends_with("the thing") || lead.ends_with("the deal") {
                        return false;
                    }
                    let rest = &line[m.end()..];
                    let next = rest.trim_start().trim_start_matches('<');
                    !(rest.starts_with("//")
                        || next.starts_with("http://")
                        || next.starts_with("https://"))
                })
        } else {
            None
        };
        let own = match quoted {
            Some(m) => {
                // The rest of the line is quoted; with nothing after the colon, the lines
                // that follow are, and so are they after a spec's title ("新功能：远程配置下发",
                // "New feature: offline maps", then its numbered lines).
                let rest = line[m.end()..].trim();
                let spec_title = SPEC_WORDS
                    .iter()
                    .any(|w| m.as_str().to_lowercase().contains(w))
                    && rest.chars().count() <= 40
                    && !rest.contains(['。', '.', '!', '！', '?', '？']);
                quoting = rest.is_empty() || spec_title;
                quoted_any = false;
                &line[..m.end()]
            }
            None => line,
        };
        out.push_str(&without_quoted_messages(own, &lower));
        out.push('\n');
    }
    out
}

/// "I'm getting 'Error: Use tabs, not spaces (indent)' from eslint": a message in quotes
/// that opens like tool output, reported as what a tool gave, is the tool's words, not the
/// user's ("when you see "warning: unused import", remove the import" keeps its quote).
static QUOTED_MESSAGE: LazyLock<Regex> = LazyLock::new(|| {
    re(
        r#"(?i)\b(?:getting|get|got|gets|seeing|saw|throws?|threw|thrown|raises?|raised|says|said|shows?|showed|prints?|printed|fails? with|failed with|complains?|reports?|returns?|returned|hit|hitting)\s+(?:(?:this|the|an?|that)\s+)?(?:(?:error|warning|message)\s+)?(?:'|"|`|‘|“)(?:(?:[a-z_$][\w$]*\.)*[a-z_$][\w$]*)?(?:error|exception|warning|warn|fatal|panic)(?:\[\w+\])?:[^'"`’”\n]*(?:'|"|`|’|”)"#,
    )
});

/// `lower` is the line (or more of it) in lower case, already made for the other tests.
fn without_quoted_messages<'a>(line: &'a str, lower: &str) -> std::borrow::Cow<'a, str> {
    // (Cheap first: the pattern is compiled only for a line with a quote and one of its words.)
    if !line.contains(['\'', '"', '`', '‘', '“'])
        || !(lower.contains("error")
            || lower.contains("exception")
            || lower.contains("warn")
            || lower.contains("fatal")
            || lower.contains("panic"))
    {
        return line.into();
    }
    QUOTED_MESSAGE.replace_all(line, |c: &regex::Captures<'_>| {
        // The reporting verb stays: "I'm getting … from eslint".
        let m = &c[0];
        let open = m.find(['\'', '"', '`', '‘', '“']).unwrap_or(m.len());
        format!("{}…", &m[..open])
    })
}
