//! The discovery report behind `cairn scan`: per Claude Code project its key, working
//! directory, memory files and sessions; for Codex the rollouts per working directory.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::layout::{
    ClaudeRoot, CodexHome, Problem, count_memory_files, resolve_project_cwd, rollout_cwd,
};

#[derive(Debug, Clone, Serialize)]
pub struct ClaudeScan {
    pub root: String,
    /// The user-level `autoMemoryDirectory`, when set and valid.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_dir_override: Option<String>,
    pub projects: Vec<ProjectScan>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ProjectScan {
    pub key: String,
    pub cwd: Option<String>,
    pub memory_files: usize,
    pub sessions: usize,
    pub subagent_transcripts: usize,
    /// Why `cwd` is null.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub memory_dir: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CodexScan {
    pub home: String,
    pub rollouts: usize,
    pub cwds: Vec<CwdCount>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CwdCount {
    /// Null for rollouts whose session_meta has no cwd.
    pub cwd: Option<String>,
    pub rollouts: usize,
}

/// Scans a Claude Code root. `home` expands `~/` in `autoMemoryDirectory`.
pub fn scan_claude(root: &Path, home: Option<&Path>, problems: &mut Vec<Problem>) -> ClaudeScan {
    let root = ClaudeRoot::new(root);
    let over = root.auto_memory_override(home);
    let projects = root
        .projects(problems)
        .into_iter()
        .map(|p| {
            let mut local = Vec::new();
            let sessions = p.session_files(&mut local).len();
            let subagents = p.subagent_files(&mut local).len();
            let mem = root.memory_dir(&p, over.as_deref());
            let cwd = resolve_project_cwd(&p);
            ProjectScan {
                key: p.key.clone(),
                cwd: cwd.cwd.map(|c| c.display().to_string()),
                memory_files: count_memory_files(&mem),
                sessions,
                subagent_transcripts: subagents,
                reason: cwd.reason,
                memory_dir: mem.display().to_string(),
            }
        })
        .collect();
    ClaudeScan {
        root: root.root.display().to_string(),
        memory_dir_override: over.map(|p| p.display().to_string()),
        projects,
    }
}

/// Scans a Codex home.
pub fn scan_codex(home: &Path, problems: &mut Vec<Problem>) -> CodexScan {
    let files = CodexHome::new(home).rollouts(problems);
    let mut by_cwd: BTreeMap<Option<String>, usize> = BTreeMap::new();
    for f in &files {
        let cwd = match rollout_cwd(f) {
            Ok(c) => c,
            Err(e) => {
                problems.push(Problem::new(
                    &f.path,
                    None,
                    format!("cannot read rollout: {e}"),
                ));
                None
            }
        };
        *by_cwd.entry(cwd).or_default() += 1;
    }
    let mut cwds: Vec<CwdCount> = by_cwd
        .into_iter()
        .map(|(cwd, rollouts)| CwdCount { cwd, rollouts })
        .collect();
    cwds.sort_by(|a, b| b.rollouts.cmp(&a.rollouts).then_with(|| a.cwd.cmp(&b.cwd)));
    CodexScan {
        home: home.display().to_string(),
        rollouts: files.len(),
        cwds,
    }
}
