//! Progress bars on a terminal (bytes for ingest, sessions for phase 1, memories re-embedded);
//! nothing on a pipe or with `--json`.

use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

pub struct Bar {
    bar: Option<ProgressBar>,
}

impl Bar {
    pub fn bytes(json: bool, label: &'static str) -> Bar {
        if json || !std::io::stderr().is_terminal() {
            return Bar { bar: None };
        }
        // Hidden until there is something to count (it would draw `0 B/0 B` first).
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template(
            "{prefix} [{bar:30}] {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .map(|s| s.progress_chars("=> "))
        .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(label);
        Bar { bar: Some(bar) }
    }
}

impl Bar {
    /// A count bar (`3/8 sessions`).
    pub fn items(json: bool, label: &'static str) -> Bar {
        if json || !std::io::stderr().is_terminal() {
            return Bar { bar: None };
        }
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{prefix} [{bar:30}] {pos}/{len} {msg}")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        bar.set_style(style);
        bar.set_prefix(label);
        Bar { bar: Some(bar) }
    }
}

impl cairn_stage1::Progress for Bar {
    fn start(&self, sessions: usize) {
        if let Some(b) = &self.bar {
            b.set_length(sessions as u64);
            b.set_position(0);
        }
        self.show(sessions as u64);
    }
    fn sent(&self, session: &str) {
        if let Some(b) = &self.bar {
            b.inc(1);
            b.set_message(session.to_owned());
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl cairn_ingest::Progress for Bar {
    fn waiting(&self) {
        if let Some(b) = &self.bar {
            b.suspend(|| {
                errln!("another cairn ingest or sync is running in this data dir; waiting for it…")
            });
        }
    }
    fn start(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
        self.show(total);
    }
    fn advance(&self, bytes: u64) {
        if let Some(b) = &self.bar {
            b.inc(bytes);
        }
    }
    fn finish(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}

impl Bar {
    /// `done` of `total` items (a count the caller reports, not increments).
    pub fn set(&self, done: usize, total: usize) {
        // Nothing to count: no bar drawn (it would flash `0/0`).
        if let (Some(b), true) = (&self.bar, total > 0) {
            b.set_length(total as u64);
            b.set_position(done as u64);
        }
        self.show(total as u64);
    }

    /// Draws the bar on the terminal once it has something to count.
    fn show(&self, total: u64) {
        if let (Some(b), true) = (&self.bar, total > 0)
            && b.is_hidden()
        {
            b.set_draw_target(ProgressDrawTarget::stderr());
        }
    }

    /// Removes the bar.
    pub fn clear(&self) {
        if let Some(b) = &self.bar {
            b.finish_and_clear();
        }
    }
}
