//! The memory model: types, provenance, the stored memory and how its body is laid out.

use serde::{Serialize, Serializer};

use crate::error::{MemoryError, Result};

/// The closed taxonomy of memories (the same four types as Claude Code's auto memory).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryType {
    /// Who the user is: role, expertise, how they like to work.
    User,
    /// A rule for the agent, from a correction or a stated preference.
    Feedback,
    /// A fact about the project not derivable from its code.
    Project,
    /// A pointer to something outside: a URL, dashboard, ticket, host.
    Reference,
}

impl MemoryType {
    /// All types, in the order summaries present them.
    pub const ALL: [MemoryType; 4] = [
        MemoryType::User,
        MemoryType::Feedback,
        MemoryType::Project,
        MemoryType::Reference,
    ];

    /// The lowercase name (`user`, `feedback`, `project`, `reference`).
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryType::User => "user",
            MemoryType::Feedback => "feedback",
            MemoryType::Project => "project",
            MemoryType::Reference => "reference",
        }
    }

    /// Parses a type name (case-insensitive).
    pub fn parse(s: &str) -> Option<MemoryType> {
        match s.trim().to_ascii_lowercase().as_str() {
            "user" => Some(MemoryType::User),
            "feedback" => Some(MemoryType::Feedback),
            "project" => Some(MemoryType::Project),
            "reference" => Some(MemoryType::Reference),
            _ => None,
        }
    }

    /// Like [`MemoryType::parse`], with an error that lists the valid names.
    pub fn parse_or_err(s: &str) -> Result<MemoryType> {
        MemoryType::parse(s).ok_or_else(|| {
            MemoryError::Invalid(format!(
                "unknown memory type {s:?}: use user, feedback, project or reference"
            ))
        })
    }
}

impl std::fmt::Display for MemoryType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Where a memory came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct Source {
    /// `transcript` (extracted from an agent's turn), `manual` (`cairn remember`, MCP),
    /// or `view` (a markdown file written by hand in the views directory).
    pub kind: String,
    /// `claude` or `codex` for transcript memories.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agent: Option<String>,
    /// The agent's session key.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// The turn key inside the session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    /// The transcript file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// The 1-based line of the turn's prompt in that file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// When the source statement was made (RFC 3339), when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub at: Option<String>,
}

impl Source {
    /// A memory written by hand (`cairn remember`, the MCP tool).
    pub fn manual() -> Source {
        Source {
            kind: "manual".into(),
            ..Source::default()
        }
    }

    /// One line saying where the memory came from.
    pub fn describe(&self) -> String {
        match self.kind.as_str() {
            "transcript" => {
                let mut s = format!(
                    "{} session {}",
                    self.agent.as_deref().unwrap_or("agent"),
                    self.session.as_deref().unwrap_or("?")
                );
                if let Some(t) = &self.turn {
                    s.push_str(", turn ");
                    s.push_str(t);
                }
                if let Some(p) = &self.path {
                    s.push_str(" (");
                    s.push_str(p);
                    if let Some(l) = self.line {
                        s.push_str(&format!(":{l}"));
                    }
                    s.push(')');
                }
                s
            }
            "view" => "written by hand in the memory views".into(),
            other => other.to_string(),
        }
    }

    /// The provenance a view file's `source:` line states (what [`Source::describe`] wrote),
    /// for a memory the database lost: its kind, and for a transcript memory the agent,
    /// session, turn, file and line. `None` for anything else (a hand-written line).
    pub fn from_description(line: &str) -> Option<Source> {
        let line = line.trim();
        if matches!(line, "manual" | "mcp" | "model" | "codex-note") {
            return Some(Source {
                kind: line.into(),
                ..Source::default()
            });
        }
        let (agent, rest) = line.split_once(" session ")?;
        if !matches!(agent, "claude" | "codex") {
            return None;
        }
        // Keys hold no spaces; a path may hold anything, so it is what the first " (" opens.
        let (keys, file) = match rest.split_once(" (") {
            Some((keys, file)) => (keys, Some(file.strip_suffix(')')?)),
            None => (rest, None),
        };
        let (session, turn) = match keys.split_once(", turn ") {
            Some((s, t)) => (s, Some(t)),
            None => (keys, None),
        };
        let no_space = |k: &str| !k.is_empty() && !k.contains(char::is_whitespace);
        if !no_space(session) || !turn.is_none_or(no_space) {
            return None;
        }
        let (path, line) = match file {
            Some(f) => match f.rsplit_once(':') {
                Some((p, l)) if !p.is_empty() && l.parse::<u64>().is_ok() => {
                    (Some(p.to_string()), l.parse().ok())
                }
                _ => (Some(f.to_string()), None),
            },
            None => (None, None),
        };
        Some(Source {
            kind: "transcript".into(),
            agent: Some(agent.into()),
            session: Some(session.into()),
            turn: turn.map(str::to_string),
            path,
            line,
            at: None,
        })
    }

    /// A short form for context framing: `claude session 5f3c9a2e, 2026-11-23`.
    pub fn short(&self) -> String {
        match self.kind.as_str() {
            "transcript" | "model" => {
                let sess: String = self
                    .session
                    .as_deref()
                    .unwrap_or("?")
                    .chars()
                    .take(8)
                    .collect();
                let mut s = format!(
                    "{} session {sess}",
                    self.agent.as_deref().unwrap_or("agent")
                );
                if let Some(at) = &self.at {
                    s.push_str(", ");
                    s.push_str(at.get(..10).unwrap_or(at));
                }
                s
            }
            "view" => "hand-written note".into(),
            "codex-note" => match self.at.as_deref() {
                Some(at) => format!("a Codex note, {}", at.get(..10).unwrap_or(at)),
                None => "a Codex note".into(),
            },
            "manual" => "saved by hand".into(),
            other => other.to_string(),
        }
    }
}

/// A stored memory.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Memory {
    /// Stable, short, printable (`m` + 7 characters of `[2-9a-z]` without look-alikes).
    pub id: String,
    /// The memory's type.
    #[serde(rename = "type")]
    pub memory_type: MemoryType,
    /// `global`, or the project identity (canonical git root, else canonical directory).
    pub scope: String,
    /// Short title.
    pub name: String,
    /// One line saying what it is about (used to judge relevance).
    pub description: String,
    /// The full markdown body: the rule or fact, then `**Why:**` and `**How to apply:**`.
    pub body: String,
    /// The rule or fact alone.
    pub rule: String,
    /// Why the rule exists, when known.
    pub why: Option<String>,
    /// How to apply it, when known.
    pub how: Option<String>,
    /// Extra search terms (derived at write time).
    #[serde(skip)]
    pub keywords: Vec<String>,
    /// Provenance.
    pub source: Source,
    /// Unix seconds.
    #[serde(rename = "created", serialize_with = "ser_time")]
    pub created_at: i64,
    /// Unix seconds.
    #[serde(rename = "updated", serialize_with = "ser_time")]
    pub updated_at: i64,
    /// Unix seconds.
    #[serde(rename = "last_recalled", serialize_with = "ser_opt_time")]
    pub last_recalled_at: Option<i64>,
    /// How often the memory was recalled or injected.
    pub recall_count: i64,
    /// The memory that replaced this one.
    pub superseded_by: Option<String>,
    /// Set on a forgotten memory (a tombstone: its text is erased).
    #[serde(rename = "forgotten", serialize_with = "ser_opt_time")]
    pub forgotten_at: Option<i64>,
}

impl Memory {
    /// Neither forgotten nor superseded.
    pub fn is_live(&self) -> bool {
        self.forgotten_at.is_none() && self.superseded_by.is_none()
    }

    /// How old the memory is at `now`, in calendar days of the local time zone (0: updated
    /// today; a note from 23:00 read at 09:00 the next morning is 1 day old), never negative.
    /// Every age cairn shows (recall, show, list, the injected context, MCP) is this one.
    pub fn age_days(&self, now: i64) -> i64 {
        let (saved, today) = (
            crate::dates::anchor_date(self.updated_at),
            crate::dates::anchor_date(now),
        );
        saved
            .until(today)
            .map_or_else(
                |_| (now - self.updated_at) / 86_400,
                |span| i64::from(span.get_days()),
            )
            .max(0)
    }
}

/// A memory to be written.
#[derive(Debug, Clone, PartialEq)]
pub struct NewMemory {
    /// The type.
    pub memory_type: MemoryType,
    /// `global` or a project identity (see [`crate::scope`]).
    pub scope: String,
    /// The rule or fact.
    pub rule: String,
    /// Why, when known.
    pub why: Option<String>,
    /// How to apply, when known.
    pub how: Option<String>,
    /// Title; derived from the rule when `None`.
    pub name: Option<String>,
    /// One-line description; derived when `None`.
    pub description: Option<String>,
    /// Provenance.
    pub source: Source,
    /// When the statement was made (Unix seconds): relative dates are resolved against it,
    /// and it becomes the memory's creation time.
    pub at: i64,
}

/// The markdown body: the rule, then `**Why:**` and `**How to apply:**` paragraphs.
pub fn render_body(rule: &str, why: Option<&str>, how: Option<&str>) -> String {
    let mut s = rule.trim().to_string();
    if let Some(w) = why.map(str::trim).filter(|w| !w.is_empty()) {
        s.push_str("\n\n**Why:** ");
        s.push_str(w);
    }
    if let Some(h) = how.map(str::trim).filter(|h| !h.is_empty()) {
        s.push_str("\n\n**How to apply:** ");
        s.push_str(h);
    }
    s
}

/// Splits a markdown body back into rule, Why and How to apply.
pub fn parse_body(body: &str) -> (String, Option<String>, Option<String>) {
    const WHY: &str = "**Why:**";
    const HOW: &str = "**How to apply:**";
    let body = body.trim();
    let wi = body.find(WHY);
    let hi = body.find(HOW);
    let rule_end = [wi, hi].into_iter().flatten().min().unwrap_or(body.len());
    let rule = body[..rule_end].trim().to_string();
    let clean = |s: &str| {
        let t = s.trim();
        (!t.is_empty()).then(|| t.to_string())
    };
    let why = wi.and_then(|w| {
        let start = w + WHY.len();
        let end = hi.filter(|&h| h > w).unwrap_or(body.len());
        clean(&body[start..end])
    });
    let how = hi.and_then(|h| {
        let start = h + HOW.len();
        let end = wi.filter(|&w| w > h).unwrap_or(body.len());
        clean(&body[start..end])
    });
    (rule, why, how)
}

/// Unix seconds as RFC 3339 UTC (`2026-11-23T09:13:42Z`).
pub fn format_time(secs: i64) -> String {
    jiff::Timestamp::from_second(secs)
        .map(|t| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string())
        .unwrap_or_else(|_| secs.to_string())
}

/// Parses an RFC 3339 timestamp to Unix seconds.
pub fn parse_time(s: &str) -> Option<i64> {
    s.trim()
        .parse::<jiff::Timestamp>()
        .ok()
        .map(|t| t.as_second())
}

fn ser_time<S: Serializer>(v: &i64, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_str(&format_time(*v))
}

fn ser_opt_time<S: Serializer>(v: &Option<i64>, s: S) -> std::result::Result<S::Ok, S::Error> {
    match v {
        Some(t) => s.serialize_str(&format_time(*t)),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The provenance a hook shows says where a memory came from, not "saved by hand" for
    /// what the model or a Codex note gave.
    #[test]
    fn short_provenance_names_the_source() {
        let src = |kind: &str| Source {
            kind: kind.into(),
            agent: Some("codex".into()),
            session: Some("0194f5a6-89ab".into()),
            turn: None,
            path: Some("/h/.codex/memories/extensions/ad_hoc/notes/deploy.md".into()),
            line: None,
            at: Some("2026-11-20T10:00:00Z".into()),
        };
        assert_eq!(src("model").short(), "codex session 0194f5a6, 2026-11-20");
        assert_eq!(src("codex-note").short(), "a Codex note, 2026-11-20");
        assert_eq!(Source::manual().short(), "saved by hand");
    }

    #[test]
    fn body_round_trips() {
        let b = render_body("Use pnpm.", Some("lockfile"), Some("always"));
        assert_eq!(
            parse_body(&b),
            (
                "Use pnpm.".into(),
                Some("lockfile".into()),
                Some("always".into())
            )
        );
        assert_eq!(
            parse_body("just a fact"),
            ("just a fact".into(), None, None)
        );
    }

    #[test]
    fn times_format() {
        assert_eq!(format_time(0), "1970-01-01T00:00:00Z");
        assert_eq!(parse_time("2026-11-23T09:13:42.818Z"), Some(1_795_425_222));
    }

    /// What a view's `source:` line says gives back the provenance it was written from.
    #[test]
    fn a_described_source_reads_back() {
        let full = Source {
            kind: "transcript".into(),
            agent: Some("codex".into()),
            session: Some("019a-77e".into()),
            turn: Some("turn-3".into()),
            path: Some("/home/dev/my (old) rollouts/rollout-1.jsonl".into()),
            line: Some(42),
            at: None,
        };
        let bare = Source {
            turn: None,
            path: None,
            line: None,
            ..full.clone()
        };
        for s in [full, bare, Source::manual()] {
            assert_eq!(Source::from_description(&s.describe()), Some(s));
        }
        for line in [
            "written by hand in the memory views",
            "agent session x",
            "me",
            "",
        ] {
            assert_eq!(Source::from_description(line), None, "{line}");
        }
    }
}
