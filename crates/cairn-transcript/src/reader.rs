//! Reading complete lines from a byte offset, without ever holding a half-written line.

use std::io::{self, Read};

/// A line longer than this is skipped (counted), never buffered whole.
pub const MAX_LINE_BYTES: usize = 256 * 1024 * 1024;

/// One complete line, or the report of one that was too long to keep.
pub enum LineItem<'a> {
    /// The line's bytes without the `\n` (and without a trailing `\r`), 1-based number.
    Line {
        bytes: &'a [u8],
        number: u64,
    },
    TooLong {
        number: u64,
        len: u64,
    },
}

/// What a read covered.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct ReadSummary {
    /// Bytes consumed, up to and including the last `\n`: the next read starts here.
    pub consumed: u64,
    /// Complete lines seen.
    pub lines: u64,
    /// Bytes after the last `\n` (a line still being written), left for the next read.
    pub pending: u64,
}

/// Reads `r` to its end in large chunks and calls `f` for every complete line. Line numbers
/// continue from `first_line` (the number of lines before the start offset).
pub fn read_lines<R: Read>(
    r: R,
    first_line: u64,
    f: impl FnMut(LineItem<'_>),
) -> io::Result<ReadSummary> {
    read_lines_sized(r, first_line, None, f)
}

/// [`read_lines`] with the expected number of bytes, so small files get small buffers.
pub fn read_lines_sized<R: Read>(
    mut r: R,
    first_line: u64,
    expected: Option<u64>,
    mut f: impl FnMut(LineItem<'_>),
) -> io::Result<ReadSummary> {
    const CHUNK: usize = 4 * 1024 * 1024;
    let initial = expected.map_or(CHUNK, |n| (n as usize).saturating_add(1).clamp(4096, CHUNK));
    // The buffer is kept for the thread's next file: zeroing a fresh one per file cost more
    // than the line splitting itself.
    let mut buf = SPARE.with(|b| b.take());
    if buf.len() < initial {
        buf.resize(initial, 0);
    }
    let summary = read_into(&mut r, first_line, &mut buf, &mut f);
    if buf.len() <= KEEP_BUFFER {
        SPARE.with(|b| b.replace(buf));
    }
    summary
}

/// A reader that ends at its source's first error (other than an interruption) and keeps it,
/// so that the complete lines before a damaged part of a file are still read.
#[derive(Debug)]
pub struct StopAtError<R> {
    inner: R,
    error: Option<io::Error>,
}

impl<R: Read> StopAtError<R> {
    pub fn new(inner: R) -> StopAtError<R> {
        StopAtError { inner, error: None }
    }

    /// The error that ended the reading, if one did.
    pub fn error(&self) -> Option<&io::Error> {
        self.error.as_ref()
    }
}

impl<R: Read> Read for StopAtError<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.error.is_some() {
            return Ok(0);
        }
        loop {
            match self.inner.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    self.error = Some(e);
                    return Ok(0);
                }
                ok => return ok,
            }
        }
    }
}

thread_local! {
    static SPARE: std::cell::RefCell<Vec<u8>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// Larger buffers (grown for a very long line) are not kept.
const KEEP_BUFFER: usize = 8 * 1024 * 1024;

fn read_into<R: Read>(
    r: &mut R,
    first_line: u64,
    buf: &mut Vec<u8>,
    f: &mut impl FnMut(LineItem<'_>),
) -> io::Result<ReadSummary> {
    const CHUNK: usize = 4 * 1024 * 1024;
    let mut len = 0usize; // valid bytes in buf
    let mut summary = ReadSummary::default();
    let mut number = first_line;
    // When a line exceeds MAX_LINE_BYTES we drop its bytes until its newline.
    let mut skipping: Option<u64> = None;
    loop {
        if len == buf.len() {
            let grow = (buf.len() * 2).clamp(CHUNK, MAX_LINE_BYTES + CHUNK);
            if grow > buf.len() {
                buf.resize(grow, 0);
            }
        }
        let n = match r.read(&mut buf[len..]) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        let scan_from = len;
        len += n;
        let mut start = 0usize;
        if let Some(skipped) = skipping {
            match memchr::memchr(b'\n', &buf[scan_from..len]) {
                Some(i) => {
                    let end = scan_from + i;
                    number += 1;
                    let total = skipped + (end - start) as u64 + 1;
                    f(LineItem::TooLong { number, len: total });
                    summary.consumed += total;
                    summary.lines += 1;
                    skipping = None;
                    start = end + 1;
                }
                None => {
                    skipping = Some(skipped + len as u64);
                    len = 0;
                    continue;
                }
            }
        }
        let mut search_from = start.max(scan_from);
        while let Some(i) = memchr::memchr(b'\n', &buf[search_from..len]) {
            let end = search_from + i;
            let mut line = &buf[start..end];
            if let [rest @ .., b'\r'] = line {
                line = rest;
            }
            number += 1;
            f(LineItem::Line {
                bytes: line,
                number,
            });
            summary.consumed += (end - start) as u64 + 1;
            summary.lines += 1;
            start = end + 1;
            search_from = start;
        }
        // Keep the incomplete tail at the front of the buffer.
        buf.copy_within(start..len, 0);
        len -= start;
        if len >= MAX_LINE_BYTES {
            skipping = Some(len as u64);
            len = 0;
        }
    }
    summary.pending = len as u64 + skipping.unwrap_or(0);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(data: &[u8]) -> (Vec<(u64, String)>, ReadSummary) {
        let mut out = Vec::new();
        let s = read_lines(data, 0, |item| match item {
            LineItem::Line { bytes, number } => {
                out.push((number, String::from_utf8_lossy(bytes).into_owned()))
            }
            LineItem::TooLong { number, .. } => out.push((number, "<too long>".into())),
        })
        .unwrap();
        (out, s)
    }

    #[test]
    fn leaves_partial_last_line() {
        let (lines, s) = collect(b"a\r\nbb\nccc");
        assert_eq!(lines, vec![(1, "a".into()), (2, "bb".into())]);
        assert_eq!(s.consumed, 6);
        assert_eq!(s.pending, 3);
    }

    #[test]
    fn empty_input() {
        let (lines, s) = collect(b"");
        assert!(lines.is_empty());
        assert_eq!(s, ReadSummary::default());
    }
}
