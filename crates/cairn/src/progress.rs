//! A byte progress bar on a terminal; nothing on a pipe or with `--json`.

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
        let bar = ProgressBar::with_draw_target(Some(0), ProgressDrawTarget::stderr());
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

impl cairn_ingest::Progress for Bar {
    fn start(&self, total: u64) {
        if let Some(b) = &self.bar {
            b.set_length(total);
        }
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
