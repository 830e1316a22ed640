//! Where the agents' homes and cairn's data dir are: flag, else environment, else `~`.
//!
//! Only user-level sources decide these paths (flags, the environment, the user's home):
//! never a file checked into a repository.

use std::path::{Path, PathBuf};

use anyhow::{Result, anyhow, bail};

use crate::Cli;

#[derive(Debug, Clone)]
pub struct Homes {
    pub home: Option<PathBuf>,
    /// `None` when neither a flag, a variable nor `$HOME` says where it is: only the commands
    /// that read or write the agent's files need it (`claude_root()`), the others run.
    claude_root: Option<PathBuf>,
    codex_home: Option<PathBuf>,
    pub data_dir: PathBuf,
    /// The agent directories given by a flag or a variable (not the defaults): a missing one
    /// is a mistake worth a warning, a missing default only an agent not installed.
    pub claude_root_given: bool,
    pub codex_home_given: bool,
}

/// `~` or `~/…` as the shell would expand it (a path given as `--data-dir=~/x` or in a quoted
/// `CAIRN_HOME='~/.cairn'` reaches cairn unexpanded; taken literally it would be a directory
/// named `~` under the current one).
fn expand_tilde(p: &Path, home: Option<&Path>) -> Result<PathBuf> {
    let Ok(rest) = p.strip_prefix("~") else {
        return Ok(p.to_path_buf());
    };
    match home {
        Some(h) => Ok(h.join(rest)),
        None => bail!(
            "cannot expand `~` in {}: $HOME is not set; give the full path",
            p.display()
        ),
    }
}

fn env_path(name: &str) -> Option<PathBuf> {
    std::env::var_os(name)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

impl Homes {
    pub fn resolve(cli: &Cli) -> Result<Homes> {
        let home = env_path("HOME");
        // `None`: not given, and no home to find the default in.
        let pick = |flag: &Option<PathBuf>, env: &str, dflt: &str| -> Result<Option<PathBuf>> {
            if let Some(p) = flag.clone().or_else(|| env_path(env)) {
                return Ok(Some(absolute(&expand_tilde(&p, home.as_deref())?)));
            }
            Ok(home.as_ref().map(|h| h.join(dflt)))
        };
        let data_dir = pick(&cli.data_dir, "CAIRN_HOME", ".cairn")?
            .ok_or_else(|| unlocated(".cairn", "CAIRN_HOME"))?;
        Ok(Homes {
            claude_root: pick(&cli.claude_dir, "CLAUDE_CONFIG_DIR", ".claude")?,
            codex_home: pick(&cli.codex_home, "CODEX_HOME", ".codex")?,
            data_dir,
            claude_root_given: cli.claude_dir.is_some() || env_path("CLAUDE_CONFIG_DIR").is_some(),
            codex_home_given: cli.codex_home.is_some() || env_path("CODEX_HOME").is_some(),
            home,
        })
    }

    /// Claude Code's config dir (`~/.claude`), for the commands that read or write it.
    pub fn claude_root(&self) -> Result<&Path> {
        self.claude_root
            .as_deref()
            .ok_or_else(|| unlocated(".claude", "CLAUDE_CONFIG_DIR"))
    }

    /// Codex's home (`~/.codex`), for the commands that read or write it.
    pub fn codex_home(&self) -> Result<&Path> {
        self.codex_home
            .as_deref()
            .ok_or_else(|| unlocated(".codex", "CODEX_HOME"))
    }

    /// Homes rooted in one directory (the demo, tests).
    pub fn under(root: &Path) -> Homes {
        Homes {
            home: Some(root.to_path_buf()),
            claude_root: Some(root.join(".claude")),
            codex_home: Some(root.join(".codex")),
            data_dir: root.join(".cairn"),
            claude_root_given: false,
            codex_home_given: false,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("cairn.db")
    }
}

/// The error of a directory that nothing locates.
fn unlocated(dflt: &str, env: &str) -> anyhow::Error {
    anyhow!("cannot locate {dflt}: $HOME is not set; pass the directory with a flag or set ${env}")
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
