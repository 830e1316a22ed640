//! Whether a turn is one in which the agent wrote its own memory (Claude Code's memory dir,
//! a Codex ad-hoc note, the instruction files it loads every session): such a turn is left to
//! the agent.

use std::path::{Path, PathBuf};

use cairn_transcript::{Event, Turn};

/// The tool name the transcript parser gives Claude Code's `memory_saved` record.
const MEMORY_SAVED: &str = "memory_saved";

/// Where the agents keep the memory they write themselves.
#[derive(Debug, Clone, Default)]
pub struct AgentMemoryDirs {
    /// Claude Code config roots (`~/.claude`): `<root>/projects/<key>/memory/` and
    /// `<root>/agent-memory/`.
    pub claude_roots: Vec<PathBuf>,
    /// Extra Claude Code memory directories (the user-level `autoMemoryDirectory`).
    pub claude_memory_dirs: Vec<PathBuf>,
    /// Codex homes (`~/.codex`): `memories/`, `memories_v2/`.
    pub codex_homes: Vec<PathBuf>,
}

fn norm(p: &str) -> String {
    p.replace('\\', "/")
}

fn under(p: &str, dir: &Path) -> bool {
    let d = norm(&dir.to_string_lossy());
    let d = d.trim_end_matches('/');
    !d.is_empty() && p.starts_with(d) && p[d.len()..].starts_with('/')
}

/// Whether `path` is an instruction file the agent loads whole every session in `cwd`: the
/// project's `CLAUDE.md`, `CLAUDE.local.md`, `.claude/CLAUDE.md`, `.claude/rules/*.md` or
/// `AGENTS.md` (relative, or in the turn's directory), or the user's `~/.claude/CLAUDE.md`.
/// A rule the agent wrote there on request is kept by the agent, and a copy here would go
/// stale when the file is edited. A `CLAUDE.md` elsewhere (a template in `docs/`) is not one.
pub(super) fn is_instruction_file(path: &str, cwd: Option<&str>, claude_roots: &[PathBuf]) -> bool {
    let p = norm(path);
    let (dir, name) = p.rsplit_once('/').unwrap_or(("", p.as_str()));
    let rules =
        (dir == ".claude/rules" || dir.ends_with("/.claude/rules")) && name.ends_with(".md");
    let instruction_name = matches!(
        name,
        "CLAUDE.md" | "CLAUDE.local.md" | "AGENTS.md" | "AGENTS.override.md"
    );
    if !instruction_name && !rules {
        return false;
    }
    if claude_roots
        .iter()
        .any(|r| norm(&r.join(name).to_string_lossy()) == p)
    {
        return true;
    }
    let project = dir
        .strip_suffix(".claude/rules")
        .or_else(|| dir.strip_suffix(".claude"))
        .map_or(dir, |d| d.trim_end_matches('/'));
    if !p.starts_with('/') {
        // Relative: written in the turn's directory.
        return project.is_empty();
    }
    cwd.is_some_and(|c| norm(c).trim_end_matches('/') == project)
}

impl AgentMemoryDirs {
    /// Whether a written path is one of the agents' memory files.
    pub fn is_memory_path(&self, path: &str) -> bool {
        let p = norm(path);
        // Anywhere: Claude Code's layout and Codex's ad-hoc notes, as the agents name them.
        if let Some(i) = p.find("/.claude/projects/")
            && p[i + "/.claude/projects/".len()..].contains("/memory/")
        {
            return true;
        }
        if p.contains("/.claude/agent-memory") || p.contains("/extensions/ad_hoc/notes/") {
            return true;
        }
        for root in &self.claude_roots {
            let projects = root.join("projects");
            if under(&p, &projects) {
                let rest = &p[norm(&projects.to_string_lossy())
                    .trim_end_matches('/')
                    .len()..];
                if rest.contains("/memory/") {
                    return true;
                }
            }
            if under(&p, &root.join("agent-memory")) {
                return true;
            }
        }
        if self.claude_memory_dirs.iter().any(|d| under(&p, d)) {
            return true;
        }
        for home in &self.codex_homes {
            if under(&p, &home.join("memories")) || under(&p, &home.join("memories_v2")) {
                return true;
            }
        }
        false
    }

    /// Whether Claude Code's background extraction saved memory of this turn into its own
    /// memory dir (`system` / `memory_saved`): Claude Code then has the turn's statements in its
    /// own memory, and cairn does not give them to Claude Code a second time.
    pub fn claude_saved_memory(&self, turn: &Turn) -> bool {
        !self.claude_saved_files(turn).is_empty()
    }

    /// The files in Claude Code's memory dirs that its background extraction saved
    /// (`memory_saved`) in this turn.
    pub fn claude_saved_files(&self, turn: &Turn) -> Vec<String> {
        turn.events
            .iter()
            .filter_map(|e| match e {
                Event::FileEdit { tool, paths, .. } if tool == MEMORY_SAVED => Some(paths),
                _ => None,
            })
            .flatten()
            .filter(|p| self.is_memory_path(p))
            .cloned()
            .collect()
    }

    /// Whether the agent itself wrote memory during this turn (a Claude Code Edit/Write into its
    /// memory dir, a Codex ad-hoc note by patch, shell or the `add_ad_hoc_note` tool). Such a
    /// turn is not extracted again (the agent already kept what it wanted).
    pub fn agent_wrote_memory(&self, turn: &Turn) -> bool {
        let memory = |p: &String| {
            self.is_memory_path(p)
                || is_instruction_file(p, turn.cwd.as_deref(), &self.claude_roots)
        };
        turn.events.iter().any(|e| match e {
            // Claude Code's background extraction is not the agent keeping what it wanted in
            // this turn: cairn keeps the statement too (Codex reads cairn's memory, not Claude
            // Code's), and leaves it out of what it gives Claude Code (see
            // `claude_saved_memory`).
            Event::FileEdit { tool, .. } if tool == MEMORY_SAVED => false,
            Event::FileEdit { paths, .. } => paths.iter().any(memory),
            Event::PatchApplied { paths, success, .. } => *success && paths.iter().any(memory),
            Event::ToolCall { tool, command, .. } => {
                tool.ends_with("add_ad_hoc_note")
                    || command.as_deref().is_some_and(|c| {
                        c.contains("ad_hoc/notes/")
                            && (c.contains('>') || c.contains("tee ") || c.contains("cat "))
                    })
            }
            _ => false,
        })
    }
}
