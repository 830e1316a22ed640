//! Small building blocks: a deterministic PRNG, an order-preserving JSON line
//! writer, timestamp formatting, id formatting and size parsing.

use anyhow::{Context, Result, bail};

/// SplitMix64: tiny, fast, good enough statistical quality for synthetic text,
/// and fully deterministic across platforms.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    /// An independent stream derived from this seed and a label (e.g. a
    /// session index), so adding draws in one place does not shift another.
    pub fn derive(seed: u64, label: u64) -> Self {
        let mut r = Rng::new(seed.wrapping_add(label.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        r.next_u64();
        r
    }

    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), multiply-shift (no modulo bias worth caring about).
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0);
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Uniform in `lo..=hi`.
    #[inline]
    pub fn range(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        lo + self.next_u64() % (hi - lo + 1)
    }

    /// Uniform float in `[0, 1)`.
    #[inline]
    pub fn f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    #[inline]
    pub fn chance(&mut self, p: f64) -> bool {
        self.f64() < p
    }

    #[inline]
    pub fn pick<'a, T>(&mut self, xs: &'a [T]) -> &'a T {
        &xs[self.below(xs.len())]
    }

    /// Like [`Rng::pick`], by value (handy for `&'static str` tables).
    #[inline]
    pub fn one<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[self.below(xs.len())]
    }

    /// Log-uniform integer in `lo..=hi`: most draws small, a long tail of large
    /// ones, which is how tool-output sizes are distributed.
    pub fn log_uniform(&mut self, lo: u64, hi: u64) -> u64 {
        let (l, h) = ((lo.max(1)) as f64, (hi.max(lo.max(1))) as f64);
        (l.ln() + self.f64() * (h.ln() - l.ln())).exp() as u64
    }

    /// Approximately standard normal (Irwin–Hall with 4 uniforms, rescaled).
    pub fn normal(&mut self) -> f64 {
        let s: f64 = (0..4).map(|_| self.f64()).sum();
        (s - 2.0) * (3.0f64).sqrt()
    }

    pub fn hex(&mut self, out: &mut String, n: usize) {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        let mut left = 0;
        let mut bits = 0u64;
        for _ in 0..n {
            if left == 0 {
                bits = self.next_u64();
                left = 16;
            }
            out.push(HEX[(bits & 15) as usize] as char);
            bits >>= 4;
            left -= 1;
        }
    }

    /// `n` characters from `alphabet` (must be 64 long for an even spread).
    pub fn chars(&mut self, out: &mut String, alphabet: &[u8], n: usize) {
        let mut left = 0;
        let mut bits = 0u64;
        for _ in 0..n {
            if left == 0 {
                bits = self.next_u64();
                left = 10;
            }
            out.push(alphabet[(bits & 63) as usize % alphabet.len()] as char);
            bits >>= 6;
            left -= 1;
        }
    }

    pub fn uuid_v4(&mut self) -> String {
        let a = self.next_u64();
        let b = self.next_u64();
        let a = (a & !0xF000) | 0x4000; // version nibble (bits 12..16 of the low half of a)
        let b = (b & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000; // variant
        format_uuid(a, b)
    }

    /// UUIDv7: 48-bit unix-ms timestamp first, as Codex thread ids are.
    pub fn uuid_v7(&mut self, unix_ms: u64) -> String {
        let r = self.next_u64();
        let a = (unix_ms << 16) | 0x7000 | (r & 0x0FFF);
        let b = (self.next_u64() & 0x3FFF_FFFF_FFFF_FFFF) | 0x8000_0000_0000_0000;
        format_uuid(a, b)
    }
}

fn format_uuid(a: u64, b: u64) -> String {
    format!(
        "{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xFFFF,
        a & 0xFFFF,
        b >> 48,
        b & 0xFFFF_FFFF_FFFF
    )
}

pub const BASE64: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
pub const ALNUM: &[u8; 64] = b"ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz0123456789ABCDE";

/// Minimal JSON writer that keeps keys in the order they are written (a
/// `serde_json::Value` would sort them), and escapes strings with serde_json.
///
/// Usage: `j.obj(); j.k("a").s("x"); j.k("b").obj(); ... j.end(); j.end();`.
/// Keys are trusted literals (no escaping); all string values are escaped.
#[derive(Default)]
pub struct J {
    pub buf: Vec<u8>,
    comma: bool,
}

impl J {
    pub fn with_capacity(n: usize) -> Self {
        J {
            buf: Vec::with_capacity(n),
            comma: false,
        }
    }

    pub fn clear(&mut self) {
        self.buf.clear();
        self.comma = false;
    }

    #[inline]
    fn sep(&mut self) {
        if self.comma {
            self.buf.push(b',');
        }
    }

    pub fn obj(&mut self) -> &mut Self {
        self.sep();
        self.buf.push(b'{');
        self.comma = false;
        self
    }

    pub fn arr(&mut self) -> &mut Self {
        self.sep();
        self.buf.push(b'[');
        self.comma = false;
        self
    }

    pub fn end(&mut self) -> &mut Self {
        self.buf.push(b'}');
        self.comma = true;
        self
    }

    pub fn end_arr(&mut self) -> &mut Self {
        self.buf.push(b']');
        self.comma = true;
        self
    }

    /// Ends the current line (after the top-level object).
    pub fn nl(&mut self) {
        self.buf.push(b'\n');
        self.comma = false;
    }

    #[inline]
    pub fn k(&mut self, key: &str) -> &mut Self {
        self.sep();
        self.buf.push(b'"');
        self.buf.extend_from_slice(key.as_bytes());
        self.buf.extend_from_slice(b"\":");
        self.comma = false;
        self
    }

    /// A key that needs escaping (e.g. a file path used as an object key).
    pub fn kd(&mut self, key: &str) -> &mut Self {
        self.sep();
        serde_json::to_writer(&mut self.buf, key).expect("writing to a Vec cannot fail");
        self.buf.push(b':');
        self.comma = false;
        self
    }

    #[inline]
    pub fn s(&mut self, v: &str) -> &mut Self {
        self.sep();
        serde_json::to_writer(&mut self.buf, v).expect("writing to a Vec cannot fail");
        self.comma = true;
        self
    }

    pub fn opt_s(&mut self, v: Option<&str>) -> &mut Self {
        match v {
            Some(v) => self.s(v),
            None => self.null(),
        }
    }

    /// Writes an already-escaped JSON value verbatim (e.g. a string escaped
    /// once and reused for `tool_result.content` and `toolUseResult`).
    #[inline]
    pub fn raw(&mut self, json: &[u8]) -> &mut Self {
        self.sep();
        self.buf.extend_from_slice(json);
        self.comma = true;
        self
    }

    pub fn n(&mut self, v: u64) -> &mut Self {
        self.sep();
        let mut b = [0u8; 20];
        let mut i = b.len();
        let mut v = v;
        loop {
            i -= 1;
            b[i] = b'0' + (v % 10) as u8;
            v /= 10;
            if v == 0 {
                break;
            }
        }
        self.buf.extend_from_slice(&b[i..]);
        self.comma = true;
        self
    }

    pub fn f(&mut self, v: f64) -> &mut Self {
        self.sep();
        serde_json::to_writer(&mut self.buf, &v).expect("writing to a Vec cannot fail");
        self.comma = true;
        self
    }

    pub fn b(&mut self, v: bool) -> &mut Self {
        self.raw(if v { b"true" } else { b"false" })
    }

    pub fn null(&mut self) -> &mut Self {
        self.raw(b"null")
    }
}

/// JSON-escapes `s` (with quotes) into a fresh buffer.
pub fn escaped(s: &str) -> Vec<u8> {
    let mut v = Vec::with_capacity(s.len() + s.len() / 16 + 2);
    serde_json::to_writer(&mut v, s).expect("writing to a Vec cannot fail");
    v
}

/// Days since 1970-01-01 to (year, month, day), proleptic Gregorian
/// (Howard Hinnant's `civil_from_days`).
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// Broken-down UTC time of a unix-ms instant.
pub struct Tm {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub min: u32,
    pub sec: u32,
    pub ms: u32,
}

pub fn tm(unix_ms: u64) -> Tm {
    let secs = (unix_ms / 1000) as i64;
    let (year, month, day) = civil_from_days(secs.div_euclid(86_400));
    let sod = secs.rem_euclid(86_400) as u32;
    Tm {
        year,
        month,
        day,
        hour: sod / 3600,
        min: sod / 60 % 60,
        sec: sod % 60,
        ms: (unix_ms % 1000) as u32,
    }
}

/// `YYYY-MM-DDTHH:MM:SS.mmmZ`, the timestamp shape both agents write.
pub fn iso(unix_ms: u64) -> String {
    let t = tm(unix_ms);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
        t.year, t.month, t.day, t.hour, t.min, t.sec, t.ms
    )
}

/// Parses sizes like `1GB`, `500MB`, `1.5GiB`, `2000000`, `64k`.
/// K/M/G/T (with or without `B`) are decimal; KiB/MiB/GiB/TiB are binary.
pub fn parse_size(s: &str) -> Result<u64> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '_'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let num: f64 = num
        .replace('_', "")
        .parse()
        .with_context(|| format!("invalid size {s:?}"))?;
    let mult: f64 = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "t" | "tb" => 1e12,
        "kib" => 1024.0,
        "mib" => 1024.0 * 1024.0,
        "gib" => 1024.0 * 1024.0 * 1024.0,
        "tib" => 1024.0f64.powi(4),
        u => bail!("invalid size unit {u:?} in {s:?} (use B, KB, MB, GB, KiB, MiB, GiB)"),
    };
    let v = num * mult;
    if !v.is_finite() || v < 1.0 {
        bail!("size {s:?} is too small");
    }
    Ok(v as u64)
}

/// Human-readable decimal megabytes.
pub fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes() {
        assert_eq!(parse_size("1GB").unwrap(), 1_000_000_000);
        assert_eq!(parse_size("2 MiB").unwrap(), 2 * 1024 * 1024);
        assert_eq!(parse_size("1.5gb").unwrap(), 1_500_000_000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("12 parsecs").is_err());
    }

    #[test]
    fn dates() {
        assert_eq!(iso(0), "1970-01-01T00:00:00.000Z");
        assert_eq!(iso(1_772_323_200_123), "2026-03-01T00:00:00.123Z");
        assert_eq!(iso(951_782_400_000), "2000-02-29T00:00:00.000Z");
    }

    #[test]
    fn uuids() {
        let mut r = Rng::new(7);
        let u = r.uuid_v4();
        assert_eq!(u.len(), 36);
        assert_eq!(&u[14..15], "4");
        assert!(matches!(&u[19..20], "8" | "9" | "a" | "b"));
        let v = r.uuid_v7(1_772_323_200_000);
        assert_eq!(&v[14..15], "7");
        assert!(v.starts_with("019ca"), "{v}");
    }

    #[test]
    fn json_writer() {
        let mut j = J::default();
        j.obj();
        j.k("a").s("x\"y\n");
        j.k("b").arr().n(1).n(22).b(true).null().end_arr();
        j.k("c").obj().k("d").f(0.5).end();
        j.end();
        let v: serde_json::Value = serde_json::from_slice(&j.buf).unwrap();
        assert_eq!(v["a"], "x\"y\n");
        assert_eq!(v["b"][1], 22);
        assert_eq!(v["c"]["d"], 0.5);
        assert_eq!(
            String::from_utf8(j.buf).unwrap(),
            r#"{"a":"x\"y\n","b":[1,22,true,null],"c":{"d":0.5}}"#
        );
    }
}
