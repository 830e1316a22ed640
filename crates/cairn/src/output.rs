//! Printing helpers.
//!
//! Everything cairn prints on stdout goes through [`outln!`] / [`out!`]: unlike `println!`,
//! they never panic. When the reader has gone away (`cairn list --json | head -1`), the
//! process ends quietly with status 0, as `head`'s other writers do; any other write error
//! is reported on stderr with status 1. Both happen after the command's work is stored:
//! commands print their report at the end. Error reports go through [`errln!`], which
//! drops them when stderr itself is closed (`eprintln!` would panic there).

use std::io::{self, Write};

use anyhow::Result;
use serde::Serialize;

/// `println!` on stdout that never panics (see the module documentation).
macro_rules! outln {
    () => {
        $crate::output::write_stdout(format_args!(""), true)
    };
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*), true)
    };
}

/// `print!` on stdout that never panics (see the module documentation).
macro_rules! out {
    ($($arg:tt)*) => {
        $crate::output::write_stdout(format_args!($($arg)*), false)
    };
}

/// `eprintln!` that never panics: a message stderr cannot take is dropped.
macro_rules! errln {
    ($($arg:tt)*) => {
        $crate::output::write_stderr(format_args!($($arg)*))
    };
}

/// Writes `args` and a newline on stderr, ignoring write errors (there is nowhere left to
/// report them).
pub fn write_stderr(args: std::fmt::Arguments<'_>) {
    let mut stderr = io::stderr().lock();
    let _ = stderr
        .write_fmt(args)
        .and_then(|()| stderr.write_all(b"\n"));
}

/// Writes `args` (and a newline) on stdout, control characters other than line breaks and
/// tabs shown as `�` (memory text comes from transcripts: an escape sequence in it must not
/// drive the user's terminal; JSON escapes its own); ends the process on failure.
pub fn write_stdout(args: std::fmt::Arguments<'_>, newline: bool) {
    let text = match args.as_str() {
        Some(s) => std::borrow::Cow::Borrowed(s),
        None => std::borrow::Cow::Owned(args.to_string()),
    };
    let text = defuse_controls(&text);
    let mut stdout = io::stdout().lock();
    let written = stdout.write_all(text.as_bytes()).and_then(|()| {
        if newline {
            stdout.write_all(b"\n")
        } else {
            Ok(())
        }
    });
    if let Err(e) = written {
        drop(stdout);
        stdout_failed(&e);
    }
}

/// `text` with every control character but `\n` and `\t` replaced by `�`.
fn defuse_controls(text: &str) -> std::borrow::Cow<'_, str> {
    let control = |c: char| c.is_control() && c != '\n' && c != '\t';
    if !text.chars().any(control) {
        return text.into();
    }
    text.chars()
        .map(|c| if control(c) { '\u{FFFD}' } else { c })
        .collect::<String>()
        .into()
}

/// Ends the process after a failed write on stdout.
fn stdout_failed(e: &io::Error) -> ! {
    if e.kind() == io::ErrorKind::BrokenPipe {
        // The reader has what it wanted (`| head`): not an error.
        std::process::exit(0);
    }
    errln!("error: cannot write to standard output: {e}");
    std::process::exit(1);
}

/// An error and its causes, outermost first, joined with ": " (as `{:#}` prints them),
/// leaving out a cause whose text is already in what was printed: library errors often
/// name their source in their own message, and the reader should see a reason once.
pub fn error_text(e: &(dyn std::error::Error + 'static)) -> String {
    let mut out = String::new();
    let mut next = Some(e);
    while let Some(cause) = next {
        next = cause.source();
        let text = cause.to_string();
        // SQLite's own code says again what rusqlite said ("database or disk is full: Error
        // code 13: database or disk is full").
        let bare = text
            .strip_prefix("Error code ")
            .and_then(|t| t.split_once(": "))
            .map_or(text.as_str(), |(_, rest)| rest);
        if bare.is_empty() || out.contains(bare) {
            continue;
        }
        if !out.is_empty() {
            out.push_str(": ");
        }
        out.push_str(&text);
    }
    // What to do when the disk is full, whichever step met it.
    if out.contains("disk is full") && !out.contains("free some space") {
        out.push_str(" (the disk is full: free some space and run the command again; what was stored before is kept)");
    }
    out
}

/// Prints `v` as one line of JSON on stdout.
pub fn json<T: Serialize>(v: &T) -> Result<()> {
    outln!("{}", serde_json::to_string(v)?);
    Ok(())
}

/// "1.2 MB" style sizes.
pub fn bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut i = 0;
    while v >= 1000.0 && i + 1 < UNITS.len() {
        v /= 1000.0;
        i += 1;
    }
    if i == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[i])
    }
}

#[cfg(test)]
mod tests {
    use super::error_text;

    #[derive(Debug)]
    struct Chain(&'static str, Option<Box<Chain>>);

    impl std::fmt::Display for Chain {
        fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str(self.0)
        }
    }

    impl std::error::Error for Chain {
        fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
            self.1.as_deref().map(|c| c as _)
        }
    }

    /// SQLite's repeated reason is said once, and a full disk says what to do.
    #[test]
    fn a_full_disk_is_said_once_with_what_to_do() {
        let e = Chain(
            "ingest failed",
            Some(Box::new(Chain(
                "database or disk is full",
                Some(Box::new(Chain(
                    "Error code 13: database or disk is full",
                    None,
                ))),
            ))),
        );
        let text = error_text(&e);
        assert_eq!(
            text.matches("database or disk is full").count(),
            1,
            "{text}"
        );
        assert!(text.contains("free some space"), "{text}");
    }
}
