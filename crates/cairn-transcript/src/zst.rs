//! Decompressing `.jsonl.zst` rollouts so that damage costs only what follows it.
//!
//! [`ZstdReader`] decodes one zstd frame after another (skippable frames are passed over) a
//! block at a time. When the data ends early or a block cannot be decoded, every byte of the
//! blocks before it is still handed out, and only then does a read fail, with a
//! [`Damaged`] error that says what happened in plain words. (The decoder keeps the last
//! window of output until its frame ends; to get it out, the frame's good blocks are decoded
//! again from the file, closed by an empty last block.)

use std::fmt;
use std::io::{self, Chain, Cursor, Read, Seek, SeekFrom, Take};

use ruzstd::decoding::errors::{FrameDecoderError, ReadFrameHeaderError};
use ruzstd::decoding::{BlockDecodingStrategy, FrameDecoder, StreamingDecoder};

/// Why a compressed file could not be read to its end. Its message names the cause; the
/// bytes decoded before it were all delivered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Damaged {
    #[error("the file is empty")]
    Empty,
    #[error("the zstd data ends early")]
    Truncated,
    #[error("the file is not zstd data")]
    NotZstd,
    #[error("the zstd data is invalid ({0})")]
    Invalid(String),
}

impl Damaged {
    /// The error a read returns, carrying this value (see [`Damaged::of`]).
    fn into_io(self) -> io::Error {
        io::Error::new(io::ErrorKind::InvalidData, self)
    }

    /// The [`Damaged`] an I/O error carries, when a [`ZstdReader`] returned it.
    pub fn of(e: &io::Error) -> Option<&Damaged> {
        e.get_ref()
            .and_then(|inner| inner.downcast_ref::<Damaged>())
    }

    fn from_decoder(e: &FrameDecoderError) -> Damaged {
        if let FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::BadMagicNumber(_)) = e
        {
            return Damaged::NotZstd;
        }
        // The data ended early when, anywhere down the chain, a read hit the end of the file.
        let mut cause: Option<&(dyn std::error::Error + 'static)> = Some(e);
        while let Some(c) = cause {
            if c.downcast_ref::<io::Error>()
                .is_some_and(|io| io.kind() == io::ErrorKind::UnexpectedEof)
            {
                return Damaged::Truncated;
            }
            cause = c.source();
        }
        Damaged::Invalid(match e {
            FrameDecoderError::DictNotProvided { .. } => "it needs a dictionary".to_owned(),
            FrameDecoderError::WindowSizeTooBig { .. } => "its window is too large".to_owned(),
            FrameDecoderError::ReadFrameHeaderError(_) | FrameDecoderError::FrameHeaderError(_) => {
                "bad frame header".to_owned()
            }
            _ => "a block cannot be decoded".to_owned(),
        })
    }
}

type Recovery<R> = StreamingDecoder<Chain<Take<R>, Cursor<Vec<u8>>>, FrameDecoder>;

enum State<R: Read> {
    /// At a frame boundary (or the start).
    Header,
    /// Decoding the blocks of a frame.
    Blocks,
    /// Handing out the rest of a damaged frame's good blocks, decoded again (`skip` bytes of
    /// it were handed out already), then failing with the damage.
    Recover {
        dec: Box<Recovery<R>>,
        skip: u64,
        damage: Damaged,
    },
    /// Everything that could be read was; reads fail with this.
    Failed(Damaged),
    Done,
}

/// A zstd decompressor over a seekable source (see the module docs).
pub struct ZstdReader<R: Read + Seek> {
    src: Option<R>,
    dec: FrameDecoder,
    state: State<R>,
    /// Where the current frame starts in the source.
    frame_start: u64,
    /// Bytes of the current frame decoded without error (header and whole blocks).
    good_len: u64,
    /// Decompressed bytes of the current frame handed out.
    emitted: u64,
    frames: u64,
    /// The source's length when opened.
    len: u64,
}

impl<R: Read + Seek> fmt::Debug for ZstdReader<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ZstdReader")
            .field("frame_start", &self.frame_start)
            .field("frames", &self.frames)
            .finish_non_exhaustive()
    }
}

impl<R: Read + Seek> ZstdReader<R> {
    /// Decodes `src` from its current position to its end.
    pub fn new(mut src: R) -> io::Result<ZstdReader<R>> {
        let start = src.stream_position()?;
        let len = src.seek(SeekFrom::End(0))?;
        src.seek(SeekFrom::Start(start))?;
        Ok(ZstdReader {
            src: Some(src),
            dec: FrameDecoder::new(),
            state: State::Header,
            frame_start: start,
            good_len: 0,
            emitted: 0,
            frames: 0,
            len,
        })
    }

    /// Starts the next frame, or sets `Done` at the clean end of the data.
    fn next_frame(&mut self) -> io::Result<()> {
        let Some(src) = self.src.as_mut() else {
            self.state = State::Done;
            return Ok(());
        };
        loop {
            if self.frame_start >= self.len {
                self.state = if self.frames == 0 {
                    State::Failed(Damaged::Empty)
                } else {
                    State::Done
                };
                return Ok(());
            }
            src.seek(SeekFrom::Start(self.frame_start))?;
            match self.dec.reset(&mut *src) {
                Ok(()) => {
                    self.frames += 1;
                    self.good_len = self.dec.bytes_read_from_source();
                    self.emitted = 0;
                    self.state = State::Blocks;
                    return Ok(());
                }
                Err(FrameDecoderError::ReadFrameHeaderError(ReadFrameHeaderError::SkipFrame {
                    length,
                    ..
                })) => {
                    self.frame_start += 8 + u64::from(length);
                    if self.frame_start > self.len {
                        self.state = State::Failed(Damaged::Truncated);
                        return Ok(());
                    }
                }
                Err(e) => {
                    // Nothing of this frame was decoded; what came before was handed out.
                    self.state = State::Failed(Damaged::from_decoder(&e));
                    return Ok(());
                }
            }
        }
    }

    /// After damage: the current frame's good blocks, decoded again from the source and closed
    /// by an empty last block, so that the decoder gives out its whole window.
    fn recover(&mut self, damage: Damaged) -> io::Result<()> {
        let Some(mut src) = self.src.take() else {
            self.state = State::Failed(damage);
            return Ok(());
        };
        // Frame header: 4 bytes of magic number, then the descriptor (bit 2: a checksum follows
        // the last block).
        src.seek(SeekFrom::Start(self.frame_start + 4))?;
        let mut descriptor = [0u8; 1];
        src.read_exact(&mut descriptor)?;
        let mut tail = vec![0x01, 0x00, 0x00]; // last block, raw, 0 bytes
        if descriptor[0] & 0x04 != 0 {
            tail.extend_from_slice(&[0; 4]); // never checked
        }
        src.seek(SeekFrom::Start(self.frame_start))?;
        let source = src.take(self.good_len).chain(Cursor::new(tail));
        self.state = match StreamingDecoder::new(source) {
            Ok(dec) => State::Recover {
                dec: Box::new(dec),
                skip: self.emitted,
                damage,
            },
            Err(_) => State::Failed(damage),
        };
        Ok(())
    }
}

impl<R: Read + Seek> Read for ZstdReader<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match &mut self.state {
                State::Header => self.next_frame()?,
                State::Blocks => {
                    if self.dec.can_collect() > 0 {
                        let n = self.dec.read(buf)?;
                        if n > 0 {
                            self.emitted += n as u64;
                            return Ok(n);
                        }
                    }
                    if self.dec.is_finished() {
                        // Header, blocks and checksum: the next frame starts right after.
                        self.frame_start += self.dec.bytes_read_from_source();
                        self.state = State::Header;
                        continue;
                    }
                    let Some(src) = self.src.as_mut() else {
                        self.state = State::Done;
                        continue;
                    };
                    match self
                        .dec
                        .decode_blocks(&mut *src, BlockDecodingStrategy::UptoBlocks(1))
                    {
                        Ok(_) => self.good_len = self.dec.bytes_read_from_source(),
                        Err(e) => self.recover(Damaged::from_decoder(&e))?,
                    }
                }
                State::Recover { dec, skip, damage } => {
                    let want = if *skip > 0 {
                        buf.len().min(usize::try_from(*skip).unwrap_or(usize::MAX))
                    } else {
                        buf.len()
                    };
                    match dec.read(&mut buf[..want]) {
                        Ok(n) if n > 0 => {
                            if *skip == 0 {
                                return Ok(n);
                            }
                            *skip -= n as u64;
                        }
                        _ => {
                            let damage = damage.clone();
                            self.state = State::Failed(damage);
                        }
                    }
                }
                State::Failed(d) => return Err(d.clone().into_io()),
                State::Done => return Ok(0),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn compress(data: &[u8]) -> Vec<u8> {
        ruzstd::encoding::compress_to_vec(data, ruzstd::encoding::CompressionLevel::Fastest)
    }

    /// Reads everything, returning the bytes and the damage (if any).
    fn read_all(data: Vec<u8>) -> (Vec<u8>, Option<Damaged>) {
        let mut r = ZstdReader::new(Cursor::new(data)).unwrap();
        let mut out = Vec::new();
        let mut buf = vec![0u8; 7000];
        loop {
            match r.read(&mut buf) {
                Ok(0) => return (out, None),
                Ok(n) => out.extend_from_slice(&buf[..n]),
                Err(e) => return (out, Damaged::of(&e).cloned()),
            }
        }
    }

    fn lines(n: usize) -> Vec<u8> {
        let mut v = Vec::new();
        for i in 0..n {
            v.extend(format!("{{\"line\":{i},\"pad\":\"{}\"}}\n", i * 7919 % 100_003).bytes());
        }
        v
    }

    #[test]
    fn whole_file_and_concatenated_frames() {
        let a = lines(20_000);
        let b = lines(300);
        let mut z = compress(&a);
        z.extend(compress(&b));
        let (out, damage) = read_all(z);
        assert_eq!(damage, None);
        assert_eq!(out.len(), a.len() + b.len());
        assert!(out.starts_with(&a) && out.ends_with(&b));
    }

    #[test]
    fn truncated_file_gives_every_good_block() {
        let a = lines(60_000);
        let z = compress(&a);
        let cut = z[..z.len() * 9 / 10].to_vec();
        let (out, damage) = read_all(cut);
        assert_eq!(damage, Some(Damaged::Truncated));
        assert!(a.starts_with(&out), "a prefix of the original");
        // All but the last (partial) block: blocks hold at most 128 KiB.
        assert!(
            out.len() as f64 > a.len() as f64 * 0.8,
            "{} of {}",
            out.len(),
            a.len()
        );
    }

    #[test]
    fn empty_and_foreign_files() {
        assert_eq!(read_all(Vec::new()).1, Some(Damaged::Empty));
        assert_eq!(
            read_all(b"{\"not\":\"zstd\"}\n".to_vec()).1,
            Some(Damaged::NotZstd)
        );
        let z = compress(b"hello\n");
        assert_eq!(read_all(z[..3].to_vec()).1, Some(Damaged::Truncated));
    }

    #[test]
    fn flipped_bits_never_panic() {
        let z = compress(&lines(5000));
        let mut seed = 12345u64;
        let mut next = || {
            seed = seed
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            seed >> 20
        };
        for _ in 0..300 {
            let mut d = z.clone();
            for _ in 0..3 {
                let pos = next() as usize % d.len();
                d[pos] ^= 1 << (next() % 8);
            }
            let _ = read_all(d);
        }
    }
}
