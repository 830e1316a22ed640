//! What `cairn import --from codex --to claude` remembers between runs: for every Claude Code
//! memory dir it exported into, the topic files it wrote there (by `cairn_id`: the file name
//! and a hash of the Codex source the file was written from).
//!
//! It lives in cairn's data dir, in [`STATE_FILE`] beside the export's lock file, never in the
//! agent's memory dir (Claude Code's model reads every file there). A topic file that is gone
//! while its Codex source hash is the one recorded was deleted by the user or by Claude (its
//! model is told to remove a memory's file and index line when asked to forget it), and the
//! export leaves it deleted; once the source changes, writing it again is right.

use std::collections::BTreeMap;
use std::ffi::OsStr;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::{InteropError, Result};
use crate::fsutil;

/// The state file's name, in the directory of the export's lock file (cairn's data dir).
pub const STATE_FILE: &str = "claude-export-state.json";

/// The layout version this cairn writes; a newer one is refused, never overwritten.
const STATE_VERSION: u32 = 1;

/// One topic file cairn wrote into a memory dir.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct WrittenTopic {
    /// Its file name in the memory dir.
    pub file: String,
    /// The hash of the Codex source it was last written from.
    pub source_hash: String,
}

/// Per memory dir: `cairn_id` → the file written for it.
pub(crate) type WrittenTopics = BTreeMap<String, WrittenTopic>;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub(crate) struct ExportState {
    version: u32,
    /// Memory dir (as an absolute path) → the topic files written there.
    memory_dirs: BTreeMap<String, WrittenTopics>,
}

impl Default for ExportState {
    fn default() -> ExportState {
        ExportState {
            version: STATE_VERSION,
            memory_dirs: BTreeMap::new(),
        }
    }
}

/// Where the state lives, given the export's lock file.
pub(crate) fn state_path_beside(lock_path: &Path) -> PathBuf {
    lock_path.with_file_name(STATE_FILE)
}

impl ExportState {
    /// The state at `path`: empty when there is none yet. A file that does not parse is
    /// replaced (the returned warning says what that costs); one a newer cairn wrote is an
    /// error, so that this one never overwrites it.
    pub(crate) fn load(path: &Path) -> Result<(ExportState, Option<String>)> {
        let bytes = match fs::read(path) {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                return Ok((ExportState::default(), None));
            }
            Err(e) => return Err(InteropError::io(path, e)),
        };
        #[derive(Deserialize)]
        struct VersionOnly {
            version: u32,
        }
        if let Ok(v) = serde_json::from_slice::<VersionOnly>(&bytes)
            && v.version > STATE_VERSION
        {
            return Err(InteropError::Config {
                path: path.to_path_buf(),
                message: format!(
                    "written by a newer cairn (state version {}, this cairn knows {STATE_VERSION}); update cairn",
                    v.version
                ),
            });
        }
        match serde_json::from_slice::<ExportState>(&bytes) {
            Ok(state) => Ok((state, None)),
            Err(e) => Ok((
                ExportState::default(),
                Some(format!(
                    "{} is unreadable ({e}); it is written afresh, and a topic file deleted from Claude Code's memory before this run may be written again",
                    path.display()
                )),
            )),
        }
    }

    /// What was written into `memory_dir` (empty when nothing was).
    pub(crate) fn written_in(&self, memory_dir: &Path) -> WrittenTopics {
        self.memory_dirs
            .get(&dir_key(memory_dir))
            .cloned()
            .unwrap_or_default()
    }

    pub(crate) fn set_written_in(&mut self, memory_dir: &Path, topics: WrittenTopics) {
        let key = dir_key(memory_dir);
        if topics.is_empty() {
            self.memory_dirs.remove(&key);
        } else {
            self.memory_dirs.insert(key, topics);
        }
    }

    /// Writes the state to `path` atomically (a temp file beside it, then a rename), private
    /// to the user, creating cairn's data dir when needed.
    pub(crate) fn save(&self, path: &Path) -> Result<()> {
        let (Some(dir), Some(name)) = (path.parent(), path.file_name()) else {
            return Err(InteropError::io(
                path,
                io::Error::new(io::ErrorKind::InvalidInput, "not a file path"),
            ));
        };
        let mut text = serde_json::to_string_pretty(self)
            .map_err(|e| InteropError::io(path, io::Error::new(io::ErrorKind::InvalidData, e)))?;
        text.push('\n');
        fsutil::Dir::open_beneath(dir, dir, true, fsutil::NewMode::Private)?
            .replace_file(OsStr::new(name), text.as_bytes())
    }
}

fn dir_key(memory_dir: &Path) -> String {
    memory_dir.to_string_lossy().into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refuses_a_newer_layout() {
        let t = tempfile::tempdir().unwrap();
        let path = t.path().join("data").join(STATE_FILE);
        let (mut state, warning) = ExportState::load(&path).unwrap();
        assert!(warning.is_none());
        let mut topics = WrittenTopics::new();
        topics.insert(
            "codex:global:profile".into(),
            WrittenTopic {
                file: "codex_user_profile.md".into(),
                source_hash: "0123456789abcdef".into(),
            },
        );
        let dir = Path::new("/home/u/.claude/projects/-home-u-app/memory");
        state.set_written_in(dir, topics.clone());
        state.save(&path).unwrap();
        let (back, warning) = ExportState::load(&path).unwrap();
        assert!(warning.is_none());
        assert_eq!(back.written_in(dir), topics);

        fs::write(&path, "{\"version\": 2, \"memory_dirs\": {}}").unwrap();
        assert!(matches!(
            ExportState::load(&path),
            Err(InteropError::Config { .. })
        ));
        fs::write(&path, "not json").unwrap();
        let (state, warning) = ExportState::load(&path).unwrap();
        assert!(warning.is_some() && state == ExportState::default());
    }
}
