//! cairn's log file (`<data dir>/cairn.log`): where the hook and the worker write what happened,
//! since neither may print to the agent. Every line is redacted; the file is private (0600) and
//! rotated to `cairn.log.1` past [`MAX_LOG_BYTES`].

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

/// The log file's name in the data dir.
pub const LOG_FILE: &str = "cairn.log";
/// Size at which the log is rotated.
pub const MAX_LOG_BYTES: u64 = 4 * 1024 * 1024;

/// Appends timestamped, redacted lines to the log.
#[derive(Debug, Clone)]
pub struct CaptureLog {
    path: PathBuf,
    who: &'static str,
}

impl CaptureLog {
    /// The log of a data dir; `who` names the writer (`hook`, `worker`).
    pub fn new(data_dir: &Path, who: &'static str) -> CaptureLog {
        CaptureLog {
            path: data_dir.join(LOG_FILE),
            who,
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Writes one line; failures to log are ignored (there is nowhere else to tell).
    pub fn line(&self, level: &str, msg: &str) {
        let _ = self.try_line(level, msg);
    }

    pub fn info(&self, msg: &str) {
        self.line("info", msg);
    }

    pub fn error(&self, msg: &str) {
        self.line("error", msg);
    }

    fn try_line(&self, level: &str, msg: &str) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            crate::private_dir(dir)?;
        }
        if fs::metadata(&self.path).is_ok_and(|m| m.len() > MAX_LOG_BYTES) {
            let _ = fs::rename(&self.path, self.path.with_extension("log.1"));
        }
        let mut f = crate::private_append(&self.path)?;
        let now = jiff::Timestamp::now();
        let msg = cairn_redact::redact(msg);
        let msg = msg.replace('\n', "\n    ");
        writeln!(
            f,
            "{now} {} {} {level}: {msg}",
            self.who,
            std::process::id()
        )
    }
}
