//! cairn's user configuration: `<data dir>/config.toml`.
//!
//! This crate owns the file's name, its typed shape ([`Config`], one struct per `[section]`), the
//! defaults that apply when a key or the whole file is missing, and the errors that name the file,
//! line and column of a broken value. Unknown keys and sections are ignored, so an older cairn
//! reads a newer file. Each feature adds its section here with `#[serde(default)]` (`[llm]` is
//! `cairn_llm::LlmConfig`). It must not write the file, decide where the data dir is (callers
//! pass it), or read any configuration from a project directory: where cairn writes is decided
//! only by user-level settings.
//!
//! ```
//! let c = cairn_config::Config::parse("[memo]\nenabled = true\n", "config.toml".as_ref()).unwrap();
//! assert!(c.memo.enabled);
//! assert_eq!(c.worker.max_attempts, 3);
//! ```

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// The configuration file's name inside the data dir.
pub const FILE_NAME: &str = "config.toml";

/// Everything `config.toml` can say. Every field has a default.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Config {
    pub memo: MemoConfig,
    pub worker: WorkerConfig,
    pub recall: RecallConfig,
    /// `[llm]`: the model provider (default `none`: everything works offline).
    pub llm: cairn_llm::LlmConfig,
    /// `[extract]`: when phase-1 model extraction runs.
    pub extract: ExtractConfig,
    /// `[consolidate]`: phase 2 (merge, aging).
    pub consolidate: ConsolidateConfig,
    /// `[codex]`: what cairn writes for Codex.
    pub codex: CodexConfig,
}

/// When phase 1 (model extraction) looks at a session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ExtractMode {
    /// After each turn (Claude Code style): the Stop hook queues the turn, the worker extracts.
    #[default]
    Turn,
    /// In batches (Codex style): sessions idle for `idle_hours`, newest first.
    Idle,
}

/// `[extract]`: phase-1 model extraction (only with an `[llm]` provider).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ExtractConfig {
    pub mode: ExtractMode,
    /// Idle mode: a session is ready when its last activity is at least this old.
    pub idle_hours: u64,
    /// Sessions whose last activity is older than this are never extracted.
    pub max_age_days: u64,
    /// Turn mode: only turns that ended within this many hours (what you are working on now;
    /// older history is what idle mode is for), so switching a provider on does not send your
    /// whole history.
    pub turn_window_hours: u64,
    /// Sessions extracted per run at most (newest first).
    pub max_per_run: usize,
    /// Token budget of one phase-1 input (the transcript part is head+tail truncated to it).
    pub input_tokens: u64,
}

impl Default for ExtractConfig {
    fn default() -> Self {
        ExtractConfig {
            mode: ExtractMode::Turn,
            idle_hours: 6,
            max_age_days: 30,
            turn_window_hours: 24,
            max_per_run: 16,
            input_tokens: 24_000,
        }
    }
}

/// `[consolidate]`: phase 2.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct ConsolidateConfig {
    /// Memories not recalled (nor updated) for this many days age out, unless pinned.
    pub max_unused_days: u64,
    /// Phase-1 outputs unused for this many days are pruned.
    pub stage1_retention_days: u64,
}

impl Default for ConsolidateConfig {
    fn default() -> Self {
        ConsolidateConfig {
            max_unused_days: 30,
            stage1_retention_days: 30,
        }
    }
}

/// `[codex]`: the Codex-compatible memory workspace.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct CodexConfig {
    /// Write `memory_summary.md`, `MEMORY.md` and `rollout_summaries/` into the Codex home's
    /// memory workspace at each consolidation.
    pub write_workspace: bool,
}

/// `[memo]`: the opt-in per-project memo journal.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct MemoConfig {
    /// Append a block per recorded turn to the project's memo file.
    pub enabled: bool,
    /// The memo file: absolute, `~/…`, or relative to the project's git root (else its working
    /// directory). Default `memo.md`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
}

impl MemoConfig {
    /// The memo file for a project rooted at `project_root`; `home` expands a leading `~/`.
    pub fn file_for(&self, project_root: &Path, home: Option<&Path>) -> PathBuf {
        let raw = self.path.as_deref().unwrap_or("memo.md");
        if let (Some(rest), Some(h)) = (raw.strip_prefix("~/"), home) {
            return h.join(rest);
        }
        let p = Path::new(raw);
        if p.is_absolute() {
            p.to_path_buf()
        } else {
            project_root.join(p)
        }
    }
}

/// `[worker]`: the background worker's retry policy.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct WorkerConfig {
    /// Attempts per job before it is marked failed (at least 1).
    pub max_attempts: u32,
    /// Delay before the first retry, in seconds; doubled for each further attempt.
    pub retry_delay_secs: u64,
    /// The worker waits for a retry due within this many seconds instead of exiting.
    pub max_wait_secs: u64,
    /// A session that starts when no `cairn sync` has run for this many hours starts one in
    /// the background (the history from before the hooks, sessions whose hooks did not run),
    /// at most once an hour; 0: never.
    pub catch_up_hours: u64,
}

impl Default for WorkerConfig {
    fn default() -> Self {
        WorkerConfig {
            max_attempts: 3,
            retry_delay_secs: 10,
            max_wait_secs: 120,
            catch_up_hours: 6,
        }
    }
}

/// `[recall]`: what the agents are given from memory.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct RecallConfig {
    /// Token budget of the memory summary injected at session start.
    pub session_budget_tokens: usize,
}

impl Default for RecallConfig {
    fn default() -> Self {
        RecallConfig {
            session_budget_tokens: 2_500,
        }
    }
}

/// Why the configuration could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {}: {source}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{}:{line}:{column}: {message} (fix or remove that line; see `cairn status`)", path.display())]
    Parse {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
}

impl ConfigError {
    /// The file the error is about.
    pub fn path(&self) -> &Path {
        match self {
            ConfigError::Read { path, .. } | ConfigError::Parse { path, .. } => path,
        }
    }
}

impl Config {
    /// Where the configuration lives for a data dir.
    pub fn path_in(data_dir: &Path) -> PathBuf {
        data_dir.join(FILE_NAME)
    }

    /// Loads `<data_dir>/config.toml`; a missing file means the defaults.
    pub fn load(data_dir: &Path) -> Result<Config, ConfigError> {
        let path = Config::path_in(data_dir);
        match std::fs::read_to_string(&path) {
            Ok(text) => Config::parse(&text, &path),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Config::default()),
            Err(source) => Err(ConfigError::Read { path, source }),
        }
    }

    /// Parses configuration text; `path` is only used in errors.
    pub fn parse(text: &str, path: &Path) -> Result<Config, ConfigError> {
        let mut c: Config = toml_edit::de::from_str(text).map_err(|e| {
            let (line, column) = e.span().map(|s| line_col(text, s.start)).unwrap_or((1, 1));
            ConfigError::Parse {
                path: path.to_path_buf(),
                line,
                column,
                message: e.message().trim().to_owned(),
            }
        })?;
        c.worker.max_attempts = c.worker.max_attempts.max(1);
        c.extract.max_per_run = c.extract.max_per_run.max(1);
        c.extract.input_tokens = c.extract.input_tokens.max(1_000);
        Ok(c)
    }
}

/// 1-based line and column (in characters) of byte `offset`.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let mut end = offset.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let before = &text[..end];
    let line = before.matches('\n').count() + 1;
    let col = before
        .rsplit_once('\n')
        .map_or(before, |(_, l)| l)
        .chars()
        .count()
        + 1;
    (line, col)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_when_missing() {
        let dir = tempfile::tempdir().unwrap();
        let c = Config::load(dir.path()).unwrap();
        assert_eq!(c, Config::default());
        assert!(!c.memo.enabled);
    }

    #[test]
    fn unknown_keys_are_ignored() {
        let c = Config::parse(
            "top = 1\n[memo]\nenabled = true\ncolour = \"red\"\n[llm]\nmodel = \"x\"\nshade = 2\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert!(c.memo.enabled);
    }

    #[test]
    fn broken_value_names_file_and_line() {
        let e = Config::parse(
            "[memo]\n# comment\nenabled = \"yes\"\n",
            Path::new("/x/config.toml"),
        )
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.starts_with("/x/config.toml:3:"), "{msg}");
        let e = Config::parse("[memo\nenabled = true\n", Path::new("c.toml")).unwrap_err();
        assert!(e.to_string().starts_with("c.toml:1:"), "{e}");
    }

    #[test]
    fn llm_extract_codex_sections() {
        let c = Config::parse(
            "[llm]\nprovider = \"openai\"\nmodel = \"m\"\nmax_tokens_per_day = 5\n\
             [extract]\nmode = \"idle\"\nidle_hours = 2\n[codex]\nwrite_workspace = true\n",
            Path::new("c.toml"),
        )
        .unwrap();
        assert_eq!(c.llm.provider, cairn_llm::ProviderKind::Openai);
        assert_eq!(c.llm.max_tokens_per_day, 5);
        assert_eq!(c.extract.mode, ExtractMode::Idle);
        assert_eq!(c.extract.idle_hours, 2);
        assert_eq!(c.extract.max_age_days, 30);
        assert!(c.codex.write_workspace);
        assert_eq!(c.consolidate.max_unused_days, 30);
        let e = Config::parse("[llm]\nprovider = \"gpt\"\n", Path::new("c.toml")).unwrap_err();
        assert!(e.to_string().starts_with("c.toml:2:"), "{e}");
    }

    #[test]
    fn memo_paths() {
        let m = MemoConfig::default();
        assert_eq!(
            m.file_for(Path::new("/r"), None),
            PathBuf::from("/r/memo.md")
        );
        let m = MemoConfig {
            enabled: true,
            path: Some("~/notes/m.md".into()),
        };
        assert_eq!(
            m.file_for(Path::new("/r"), Some(Path::new("/h"))),
            PathBuf::from("/h/notes/m.md")
        );
        let m = MemoConfig {
            enabled: true,
            path: Some("docs/memo.md".into()),
        };
        assert_eq!(
            m.file_for(Path::new("/r"), None),
            PathBuf::from("/r/docs/memo.md")
        );
    }
}
