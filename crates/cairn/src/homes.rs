//! Where the agents' homes and cairn's data dir are: flag, else environment, else `~`.
//!
//! Only user-level sources decide these paths (flags, the environment, the user's home):
//! never a file checked into a repository.

use std::path::{Path, PathBuf};

use anyhow::{Result, bail};

use crate::Cli;

#[derive(Debug, Clone)]
pub struct Homes {
    pub home: Option<PathBuf>,
    pub claude_root: PathBuf,
    pub codex_home: PathBuf,
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
        let pick = |flag: &Option<PathBuf>, env: &str, dflt: &str| -> Result<PathBuf> {
            if let Some(p) = flag.clone().or_else(|| env_path(env)) {
                return Ok(absolute(&expand_tilde(&p, home.as_deref())?));
            }
            match &home {
                Some(h) => Ok(h.join(dflt)),
                None => bail!(
                    "cannot locate {dflt}: $HOME is not set; pass the directory with a flag or set ${env}"
                ),
            }
        };
        Ok(Homes {
            claude_root: pick(&cli.claude_dir, "CLAUDE_CONFIG_DIR", ".claude")?,
            codex_home: pick(&cli.codex_home, "CODEX_HOME", ".codex")?,
            data_dir: pick(&cli.data_dir, "CAIRN_HOME", ".cairn")?,
            claude_root_given: cli.claude_dir.is_some() || env_path("CLAUDE_CONFIG_DIR").is_some(),
            codex_home_given: cli.codex_home.is_some() || env_path("CODEX_HOME").is_some(),
            home,
        })
    }

    /// Homes rooted in one directory (the demo, tests).
    pub fn under(root: &Path) -> Homes {
        Homes {
            home: Some(root.to_path_buf()),
            claude_root: root.join(".claude"),
            codex_home: root.join(".codex"),
            data_dir: root.join(".cairn"),
            claude_root_given: false,
            codex_home_given: false,
        }
    }

    pub fn db_path(&self) -> PathBuf {
        self.data_dir.join("cairn.db")
    }
}

fn absolute(p: &Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}
