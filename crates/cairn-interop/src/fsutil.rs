//! File-system primitives every writer here uses: symlink guards, private directories,
//! atomic file replacement and atomic directory swaps.

use std::fs::{self, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{InteropError, Result};

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A name unique to this process and call, for temp files and staging dirs.
pub(crate) fn unique_suffix() -> String {
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!("{}-{n}-{nanos:08x}", std::process::id())
}

pub(crate) fn is_symlink(path: &Path) -> bool {
    fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink())
}

/// Fails if `path` or any existing component between `base` and `path` is a symlink.
/// `base` itself may be a symlink (a user's dotfiles often link `~/.codex`).
pub(crate) fn ensure_no_symlink(base: &Path, path: &Path) -> Result<()> {
    let rel = path
        .strip_prefix(base)
        .map_err(|_| InteropError::Symlink(path.to_path_buf()))?;
    let mut cur = base.to_path_buf();
    for c in rel.components() {
        match c {
            Component::Normal(part) => cur.push(part),
            _ => return Err(InteropError::Symlink(path.to_path_buf())),
        }
        match fs::symlink_metadata(&cur) {
            Ok(m) if m.file_type().is_symlink() => return Err(InteropError::Symlink(cur)),
            Ok(_) => {}
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(InteropError::io(&cur, e)),
        }
    }
    Ok(())
}

/// Creates `path` and its missing parents below `base` as private (0700) directories,
/// refusing symlinks on the way.
pub(crate) fn create_dir_private(base: &Path, path: &Path) -> Result<()> {
    ensure_no_symlink(base, path)?;
    let rel = path
        .strip_prefix(base)
        .map_err(|_| InteropError::Symlink(path.to_path_buf()))?;
    if !base.exists() {
        mkdir_private(base)?;
    }
    let mut cur = base.to_path_buf();
    for c in rel.components() {
        if let Component::Normal(part) = c {
            cur.push(part);
            if !cur.exists() {
                mkdir_private(&cur)?;
            }
        }
    }
    Ok(())
}

fn mkdir_private(path: &Path) -> Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(path).map_err(|e| InteropError::io(path, e))
}

/// Creates a new file (never overwriting) with mode 0600, writes `bytes` and syncs it.
pub(crate) fn write_new(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let mut f = o.open(path).map_err(|e| InteropError::io(path, e))?;
    f.write_all(bytes).map_err(|e| InteropError::io(path, e))?;
    f.sync_all().map_err(|e| InteropError::io(path, e))
}

/// Replaces `path` with `bytes` atomically: a temp file in the same directory, synced, then
/// renamed over it. An existing file keeps its permission bits; a new one is 0600.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    if is_symlink(path) {
        return Err(InteropError::Symlink(path.to_path_buf()));
    }
    let dir = path.parent().unwrap_or(Path::new("."));
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.cairn-tmp-{}", unique_suffix()));
    write_new(&tmp, bytes)?;
    #[cfg(unix)]
    if let Ok(m) = fs::metadata(path) {
        use std::os::unix::fs::PermissionsExt;
        let mode = m.permissions().mode() & 0o7777;
        let _ = fs::set_permissions(&tmp, fs::Permissions::from_mode(mode));
    }
    if let Err(e) = fs::rename(&tmp, path) {
        let _ = fs::remove_file(&tmp);
        return Err(InteropError::io(path, e));
    }
    sync_dir(dir);
    Ok(())
}

/// Best-effort fsync of a directory, so a rename inside it survives a crash.
pub(crate) fn sync_dir(dir: &Path) {
    if let Ok(f) = File::open(dir) {
        let _ = f.sync_all();
    }
}

/// Swaps two existing paths atomically when the platform can (Linux `renameat2` with
/// `RENAME_EXCHANGE`). Returns `Ok(false)` when it cannot, leaving both untouched.
pub(crate) fn exchange(a: &Path, b: &Path) -> io::Result<bool> {
    #[cfg(target_os = "linux")]
    {
        use std::ffi::CString;
        use std::os::unix::ffi::OsStrExt;
        let ca = CString::new(a.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        let cb = CString::new(b.as_os_str().as_bytes())
            .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
        // SAFETY: both pointers are valid NUL-terminated strings that outlive the call.
        let r = unsafe {
            libc::renameat2(
                libc::AT_FDCWD,
                ca.as_ptr(),
                libc::AT_FDCWD,
                cb.as_ptr(),
                libc::RENAME_EXCHANGE,
            )
        };
        if r == 0 {
            return Ok(true);
        }
        let err = io::Error::last_os_error();
        match err.raw_os_error() {
            Some(libc::EINVAL) | Some(libc::ENOSYS) | Some(libc::EOPNOTSUPP) => Ok(false),
            _ => Err(err),
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (a, b);
        Ok(false)
    }
}

/// Every entry under `dir` (files, symlinks, other non-directories) as paths relative to it,
/// plus whether any of them is a symlink. Directories are walked, never followed.
pub(crate) fn relative_entries(dir: &Path) -> io::Result<(Vec<PathBuf>, Option<PathBuf>)> {
    fn walk(
        root: &Path,
        dir: &Path,
        depth: usize,
        out: &mut Vec<PathBuf>,
        link: &mut Option<PathBuf>,
    ) -> io::Result<()> {
        for ent in fs::read_dir(dir)? {
            let ent = ent?;
            let t = ent.file_type()?;
            let p = ent.path();
            if t.is_symlink() && link.is_none() {
                *link = Some(p.clone());
            }
            if t.is_dir() && depth < 64 {
                walk(root, &p, depth + 1, out, link)?;
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_path_buf());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    let mut link = None;
    walk(dir, dir, 0, &mut out, &mut link)?;
    out.sort();
    Ok((out, link))
}

/// Lowercase hex of bytes.
pub(crate) fn hex(bytes: &[u8]) -> String {
    const D: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        s.push(D[(b >> 4) as usize] as char);
        s.push(D[(b & 15) as usize] as char);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symlink_guard_checks_every_component() {
        let t = tempfile::tempdir().unwrap();
        let base = t.path();
        fs::create_dir_all(base.join("a/b")).unwrap();
        let outside = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(outside.path(), base.join("a/link")).unwrap();
        assert!(ensure_no_symlink(base, &base.join("a/b/c")).is_ok());
        assert!(matches!(
            ensure_no_symlink(base, &base.join("a/link/x")),
            Err(InteropError::Symlink(_))
        ));
        assert!(create_dir_private(base, &base.join("a/link/new")).is_err());
        assert!(!outside.path().join("new").exists());
    }

    #[test]
    fn atomic_write_keeps_mode_and_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f.md");
        write_atomic(&p, b"one").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        write_atomic(&p, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 1);
    }

    #[test]
    fn exchange_swaps_directories() {
        let t = tempfile::tempdir().unwrap();
        let a = t.path().join("a");
        let b = t.path().join("b");
        fs::create_dir(&a).unwrap();
        fs::create_dir(&b).unwrap();
        fs::write(a.join("x"), "A").unwrap();
        fs::write(b.join("x"), "B").unwrap();
        if exchange(&a, &b).unwrap() {
            assert_eq!(fs::read_to_string(a.join("x")).unwrap(), "B");
            assert_eq!(fs::read_to_string(b.join("x")).unwrap(), "A");
        }
    }
}
