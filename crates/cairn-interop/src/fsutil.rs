//! File-system primitives every writer here uses: symlink guards, directories made with the
//! mode of where they are, atomic file replacement and atomic directory swaps.
//!
//! What a write gives new files and directories is [`NewMode`]: in an agent's tree (Claude
//! Code's memory dirs, Codex's memory workspaces) what the agent gives its own, the umask's
//! default; in cairn's data dir owner only. A file replaced keeps its mode, owner and group
//! (`cairn_atomic::adopt_ids`).

use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{InteropError, Result};

pub(crate) use cairn_atomic::NewMode;

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// What [`Dir::replace_file`] puts between `.<name>` and [`unique_suffix`] in a temp file's
/// name: `.<name>.cairn-tmp-<pid>-<n>-<8 hex digits>`.
pub(crate) const TEMP_MARK: &str = ".cairn-tmp-";

/// How old a temp file of cairn's must be before a later run removes it: a live writer
/// renames its temp file away within moments, so one this old was left by a killed run.
pub(crate) const STALE_TEMP_AGE: std::time::Duration = std::time::Duration::from_secs(5 * 60);

/// True when `name` is exactly the shape of a temp file [`Dir::replace_file`] creates:
/// `.<name>.cairn-tmp-<digits>-<digits>-<8 lowercase hex digits>`. Nothing else (a user's
/// `notes.cairn-tmp.md`, a name with a different suffix) ever matches.
pub(crate) fn is_cairn_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.') else {
        return false;
    };
    let Some((stem, suffix)) = rest.rsplit_once(TEMP_MARK) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let mut parts = suffix.split('-');
    let (Some(pid), Some(n), Some(nanos), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    !stem.is_empty()
        && digits(pid)
        && digits(n)
        && nanos.len() == 8
        && nanos
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

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

/// Creates `path` and its missing parents below `base` (and `base` itself when missing) as
/// directories with `new`'s mode, refusing symlinks on the way.
pub(crate) fn create_dir(base: &Path, path: &Path, new: NewMode) -> Result<()> {
    ensure_no_symlink(base, path)?;
    let rel = path
        .strip_prefix(base)
        .map_err(|_| InteropError::Symlink(path.to_path_buf()))?;
    if !base.exists() {
        mkdir(base, new)?;
    }
    let mut cur = base.to_path_buf();
    for c in rel.components() {
        if let Component::Normal(part) = c {
            cur.push(part);
            if !cur.exists() {
                mkdir(&cur, new)?;
            }
        }
    }
    Ok(())
}

fn mkdir(path: &Path, new: NewMode) -> Result<()> {
    cairn_atomic::create_dir_all(path, new).map_err(|e| InteropError::io(path, e))
}

/// A directory held open by descriptor. It was reached one component at a time without
/// following a symlink, and every operation below it is relative to the descriptor, so a
/// component swapped for a link after the walk (a TOCTOU race) can never redirect a write out
/// of the tree: the operation fails instead.
#[cfg(unix)]
pub(crate) struct Dir {
    fd: std::os::fd::OwnedFd,
    path: PathBuf,
    /// The mode of what is created below it.
    new: NewMode,
}

#[cfg(unix)]
fn c_name(name: &std::ffi::OsStr) -> io::Result<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::CString::new(name.as_bytes())
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))
}

#[cfg(unix)]
impl Dir {
    /// Opens `path` below `base` (which may itself be a link: a user's dotfiles often link
    /// `~/.codex`), creating missing directories when `create`. What is created below it,
    /// there and later, gets `new`'s mode.
    pub(crate) fn open_beneath(
        base: &Path,
        path: &Path,
        create: bool,
        new: NewMode,
    ) -> Result<Dir> {
        if create && !base.exists() {
            mkdir(base, new)?;
        }
        let f = File::open(base).map_err(|e| InteropError::io(base, e))?;
        let root = Dir {
            fd: f.into(),
            path: base.to_path_buf(),
            new,
        };
        let rel = path
            .strip_prefix(base)
            .map_err(|_| InteropError::Symlink(path.to_path_buf()))?;
        root.open_rel(rel, create)
    }

    /// Opens the directory `rel` below this one (see [`Dir::open_beneath`]).
    pub(crate) fn open_rel(&self, rel: &Path, create: bool) -> Result<Dir> {
        use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
        let mut fd: Option<OwnedFd> = None;
        let mut path = self.path.clone();
        for c in rel.components() {
            let Component::Normal(part) = c else {
                return Err(InteropError::Symlink(self.path.join(rel)));
            };
            path.push(part);
            let name = c_name(part).map_err(|e| InteropError::io(&path, e))?;
            let parent = fd.as_ref().map_or(self.fd.as_raw_fd(), |f| f.as_raw_fd());
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            // SAFETY: `parent` is an open descriptor and `name` a NUL-terminated string.
            let mut raw = unsafe { libc::openat(parent, name.as_ptr(), flags) };
            if raw < 0 && create && io::Error::last_os_error().kind() == io::ErrorKind::NotFound {
                let mode = self.new.dir_mode() as libc::mode_t;
                // SAFETY: as above.
                let made = unsafe { libc::mkdirat(parent, name.as_ptr(), mode) };
                if made != 0 && io::Error::last_os_error().kind() != io::ErrorKind::AlreadyExists {
                    return Err(InteropError::io(&path, io::Error::last_os_error()));
                }
                // SAFETY: as above.
                raw = unsafe { libc::openat(parent, name.as_ptr(), flags) };
            }
            if raw < 0 {
                let e = io::Error::last_os_error();
                return Err(match e.raw_os_error() {
                    Some(libc::ELOOP) | Some(libc::ENOTDIR) => InteropError::Symlink(path),
                    _ => InteropError::io(&path, e),
                });
            }
            // SAFETY: `raw` is a descriptor we just opened and own.
            fd = Some(unsafe { OwnedFd::from_raw_fd(raw) });
        }
        Ok(match fd {
            Some(fd) => Dir {
                fd,
                path,
                new: self.new,
            },
            None => Dir {
                fd: self
                    .fd
                    .try_clone()
                    .map_err(|e| InteropError::io(&self.path, e))?,
                path,
                new: self.new,
            },
        })
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// What `name` is in this directory, without following a link; `None` when absent.
    pub(crate) fn entry_is_symlink(&self, name: &std::ffi::OsStr) -> io::Result<Option<bool>> {
        Ok(self
            .lstat_at(name)?
            .map(|st| st.st_mode & libc::S_IFMT == libc::S_IFLNK))
    }

    /// `fstatat` of `name` here, not following a link; `None` when absent.
    fn lstat_at(&self, name: &std::ffi::OsStr) -> io::Result<Option<libc::stat>> {
        use std::os::fd::AsRawFd;
        let n = c_name(name)?;
        // SAFETY: an all-zero `stat` is a valid value to be overwritten.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: valid descriptor, NUL-terminated name, a writable `stat`.
        let r = unsafe {
            libc::fstatat(
                self.fd.as_raw_fd(),
                n.as_ptr(),
                &mut st,
                libc::AT_SYMLINK_NOFOLLOW,
            )
        };
        if r == 0 {
            return Ok(Some(st));
        }
        let e = io::Error::last_os_error();
        if e.kind() == io::ErrorKind::NotFound {
            Ok(None)
        } else {
            Err(e)
        }
    }

    /// Creates a new file `name` here (never through a link, never overwriting) with `bytes`,
    /// synced; its mode is this directory's [`NewMode`] (less the umask).
    pub(crate) fn create_file(&self, name: &std::ffi::OsStr, bytes: &[u8]) -> Result<()> {
        self.create_file_mode(name, bytes, self.new.file_mode())
            .map(drop)
    }

    /// [`Dir::create_file`] with `mode` (less the umask); the open file is returned.
    fn create_file_mode(&self, name: &std::ffi::OsStr, bytes: &[u8], mode: u32) -> Result<File> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let path = self.path.join(name);
        let n = c_name(name).map_err(|e| InteropError::io(&path, e))?;
        let flags =
            libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
        // SAFETY: valid descriptor and NUL-terminated name.
        let raw =
            unsafe { libc::openat(self.fd.as_raw_fd(), n.as_ptr(), flags, mode as libc::c_uint) };
        if raw < 0 {
            return Err(InteropError::io(&path, io::Error::last_os_error()));
        }
        // SAFETY: `raw` is a descriptor we just opened and own.
        let mut f = unsafe { File::from_raw_fd(raw) };
        f.write_all(bytes).map_err(|e| InteropError::io(&path, e))?;
        f.sync_all().map_err(|e| InteropError::io(&path, e))?;
        Ok(f)
    }

    /// Replaces (or creates) the file `name` here with `bytes` atomically: a new temp file
    /// beside it, then a rename, both relative to this directory's descriptor, so a link
    /// swapped in for any directory on the way is never written through.
    /// An existing file keeps its permission bits, and its owner and group where this user
    /// may set them (the temp file is owner-only until it takes them); a new one gets this
    /// directory's [`NewMode`].
    pub(crate) fn replace_file(&self, name: &std::ffi::OsStr, bytes: &[u8]) -> Result<()> {
        let mut tmp = std::ffi::OsString::from(".");
        tmp.push(name);
        tmp.push(format!("{TEMP_MARK}{}", unique_suffix()));
        let existing = self.regular_file_ids(name);
        let first_mode = if existing.is_some() {
            0o600
        } else {
            self.new.file_mode()
        };
        let f = self.create_file_mode(&tmp, bytes, first_mode)?;
        if let Some((uid, gid, mode)) = existing
            && let Err(e) = cairn_atomic::adopt_ids(&f, uid, gid, mode).and_then(|()| f.sync_all())
        {
            let _ = self.remove_file(&tmp);
            return Err(InteropError::io(self.path.join(name), e));
        }
        drop(f);
        if let Err(e) = self.rename(&tmp, self, name) {
            let _ = self.remove_file(&tmp);
            return Err(InteropError::io(self.path.join(name), e));
        }
        self.sync();
        Ok(())
    }

    /// Removes the temp files a killed [`Dir::replace_file`] left here: regular files whose
    /// name has exactly cairn's temp shape ([`is_cairn_temp_name`]) and that were last
    /// modified more than `older_than` ago (a younger one may belong to a writer still
    /// running). Returns the names removed; nothing else is ever touched.
    pub(crate) fn remove_stale_temps(
        &self,
        older_than: std::time::Duration,
    ) -> Result<Vec<String>> {
        let mut removed = Vec::new();
        for name in self.stale_temps(older_than)? {
            let os = std::ffi::OsStr::new(&name);
            match self.remove_file(os) {
                Ok(()) => removed.push(name),
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(InteropError::io(self.path.join(os), e)),
            }
        }
        if !removed.is_empty() {
            self.sync();
        }
        Ok(removed)
    }

    /// The names [`Dir::remove_stale_temps`] would remove, sorted.
    pub(crate) fn stale_temps(&self, older_than: std::time::Duration) -> Result<Vec<String>> {
        stale_temps_in(&self.path, older_than, |name| {
            let st = self.lstat_at(std::ffi::OsStr::new(name)).ok()??;
            let regular = st.st_mode & libc::S_IFMT == libc::S_IFREG;
            // `time_t` is `i64` here but narrower on some 32-bit targets.
            #[allow(clippy::useless_conversion)]
            let mtime = i64::from(st.st_mtime);
            Some((regular, mtime))
        })
    }

    /// The owner, group and permission bits of the regular file `name` here (not through a
    /// link).
    fn regular_file_ids(&self, name: &std::ffi::OsStr) -> Option<(u32, u32, u32)> {
        let st = self.lstat_at(name).ok()??;
        // `mode_t` is `u32` here but narrower on some targets.
        #[allow(clippy::useless_conversion)]
        (st.st_mode & libc::S_IFMT == libc::S_IFREG).then_some((
            st.st_uid,
            st.st_gid,
            u32::from(st.st_mode) & 0o7777,
        ))
    }

    /// Removes the file (or link) `name` here, never following a link.
    pub(crate) fn remove_file(&self, name: &std::ffi::OsStr) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let n = c_name(name)?;
        // SAFETY: valid descriptor and NUL-terminated name.
        if unsafe { libc::unlinkat(self.fd.as_raw_fd(), n.as_ptr(), 0) } == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Renames `from` here to `to` in `dir` (both relative to open descriptors).
    pub(crate) fn rename(
        &self,
        from: &std::ffi::OsStr,
        dir: &Dir,
        to: &std::ffi::OsStr,
    ) -> io::Result<()> {
        use std::os::fd::AsRawFd;
        let (a, b) = (c_name(from)?, c_name(to)?);
        // SAFETY: valid descriptors and NUL-terminated names.
        let r = unsafe {
            libc::renameat(
                self.fd.as_raw_fd(),
                a.as_ptr(),
                dir.fd.as_raw_fd(),
                b.as_ptr(),
            )
        };
        if r == 0 {
            Ok(())
        } else {
            Err(io::Error::last_os_error())
        }
    }

    /// Swaps `a` here with `b` in `dir` atomically where the platform can (`RENAME_EXCHANGE`);
    /// `Ok(false)` when it cannot, leaving both untouched.
    pub(crate) fn exchange(
        &self,
        a: &std::ffi::OsStr,
        dir: &Dir,
        b: &std::ffi::OsStr,
    ) -> io::Result<bool> {
        #[cfg(target_os = "linux")]
        {
            use std::os::fd::AsRawFd;
            let (ca, cb) = (c_name(a)?, c_name(b)?);
            // SAFETY: valid descriptors and NUL-terminated names.
            let r = unsafe {
                libc::renameat2(
                    self.fd.as_raw_fd(),
                    ca.as_ptr(),
                    dir.fd.as_raw_fd(),
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
            let _ = (a, dir, b);
            Ok(false)
        }
    }

    /// Best-effort fsync of this directory.
    pub(crate) fn sync(&self) {
        use std::os::fd::AsRawFd;
        // SAFETY: a valid descriptor.
        unsafe {
            libc::fsync(self.fd.as_raw_fd());
        }
    }
}

/// Temp files of cairn's in `dir` older than `older_than` (see [`Dir::remove_stale_temps`]),
/// sorted. `stat` gives a name's (is a regular file, mtime in seconds) without following a
/// link, `None` when it is gone. A missing `dir` has none.
fn stale_temps_in(
    dir: &Path,
    older_than: std::time::Duration,
    stat: impl Fn(&str) -> Option<(bool, i64)>,
) -> Result<Vec<String>> {
    let rd = match fs::read_dir(dir) {
        Ok(rd) => rd,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(InteropError::io(dir, e)),
    };
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    let min_age = i64::try_from(older_than.as_secs()).unwrap_or(i64::MAX);
    let mut out = Vec::new();
    for ent in rd.flatten() {
        let Ok(name) = ent.file_name().into_string() else {
            continue;
        };
        if !is_cairn_temp_name(&name) {
            continue;
        }
        if let Some((true, mtime)) = stat(&name)
            && now.saturating_sub(mtime) >= min_age
        {
            out.push(name);
        }
    }
    out.sort();
    Ok(out)
}

/// Temp files of cairn's left in `dir` by killed writes, older than [`STALE_TEMP_AGE`]
/// (read only: `doctor` reports them).
#[cfg(unix)]
pub(crate) fn stale_temps(dir: &Path) -> Vec<String> {
    use std::os::unix::fs::MetadataExt;
    stale_temps_in(dir, STALE_TEMP_AGE, |name| {
        fs::symlink_metadata(dir.join(name))
            .ok()
            .map(|m| (m.file_type().is_file(), m.mtime()))
    })
    .unwrap_or_default()
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
        assert!(create_dir(base, &base.join("a/link/new"), NewMode::Private).is_err());
        assert!(!outside.path().join("new").exists());
    }

    #[test]
    fn atomic_write_keeps_mode_and_replaces() {
        use std::os::unix::fs::PermissionsExt;
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("f.md");
        let dir = Dir::open_beneath(t.path(), t.path(), false, NewMode::Private).unwrap();
        let name = std::ffi::OsStr::new("f.md");
        dir.replace_file(name, b"one").unwrap();
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o600
        );
        fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        dir.replace_file(name, b"two").unwrap();
        assert_eq!(fs::read(&p).unwrap(), b"two");
        assert_eq!(
            fs::metadata(&p).unwrap().permissions().mode() & 0o777,
            0o644
        );
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 1);
    }

    /// What a directory held by descriptor creates gets its [`NewMode`]: the umask's default
    /// in an agent's tree, owner only in cairn's data dir.
    #[test]
    fn what_a_dir_creates_gets_its_mode() {
        use std::os::unix::fs::PermissionsExt;
        let mode = |p: &Path| fs::metadata(p).unwrap().permissions().mode() & 0o7777;
        let umask = fs::read_to_string("/proc/self/status").ok().and_then(|s| {
            let l = s.lines().find(|l| l.starts_with("Umask:"))?;
            u32::from_str_radix(l.trim_start_matches("Umask:").trim(), 8).ok()
        });
        let t = tempfile::tempdir().unwrap();
        let agent =
            Dir::open_beneath(t.path(), &t.path().join("a/b"), true, NewMode::Umask).unwrap();
        agent
            .replace_file(std::ffi::OsStr::new("x.md"), b"x")
            .unwrap();
        agent.open_rel(Path::new("c"), true).unwrap();
        let own =
            Dir::open_beneath(t.path(), &t.path().join("p/q"), true, NewMode::Private).unwrap();
        own.replace_file(std::ffi::OsStr::new("y.json"), b"{}")
            .unwrap();
        assert_eq!(mode(&t.path().join("p")), 0o700);
        assert_eq!(mode(&t.path().join("p/q")), 0o700);
        assert_eq!(mode(&t.path().join("p/q/y.json")), 0o600);
        if let Some(u) = umask {
            for d in ["a", "a/b", "a/b/c"] {
                assert_eq!(mode(&t.path().join(d)), 0o777 & !u, "{d}");
            }
            assert_eq!(mode(&t.path().join("a/b/x.md")), 0o666 & !u);
        }
        // A file replaced keeps its mode, whatever the directory's.
        fs::set_permissions(
            t.path().join("p/q/y.json"),
            fs::Permissions::from_mode(0o644),
        )
        .unwrap();
        own.replace_file(std::ffi::OsStr::new("y.json"), b"[]")
            .unwrap();
        assert_eq!(mode(&t.path().join("p/q/y.json")), 0o644);
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
        let dir = Dir::open_beneath(t.path(), t.path(), false, NewMode::Private).unwrap();
        if dir
            .exchange(std::ffi::OsStr::new("a"), &dir, std::ffi::OsStr::new("b"))
            .unwrap()
        {
            assert_eq!(fs::read_to_string(a.join("x")).unwrap(), "B");
            assert_eq!(fs::read_to_string(b.join("x")).unwrap(), "A");
        }
    }

    #[test]
    fn temp_names_match_only_cairns_own_shape() {
        let t = tempfile::tempdir().unwrap();
        let dir = Dir::open_beneath(t.path(), t.path(), false, NewMode::Private).unwrap();
        // A real temp name, as `replace_file` makes it.
        let real = format!(".f.md{TEMP_MARK}{}", unique_suffix());
        assert!(is_cairn_temp_name(&real), "{real}");
        assert!(is_cairn_temp_name(".MEMORY.md.cairn-tmp-4242-17-0badcafe"));
        for other in [
            "f.md.cairn-tmp-4242-17-0badcafe",     // no leading dot
            ".cairn-tmp-4242-17-0badcafe",         // no name
            ".f.md.cairn-tmp-4242-17-0badcafe.md", // something after
            ".f.md.cairn-tmp-4242-17-0BADCAFE",    // not cairn's hex
            ".f.md.cairn-tmp-4242-17-badcafe",     // 7 digits
            ".f.md.cairn-tmp-x-17-0badcafe",
            ".f.md.cairn-tmp-mine",
            ".f.md.cairn-tmp-4242-0badcafe",
            "notes.md",
        ] {
            assert!(!is_cairn_temp_name(other), "{other}");
        }
        // Removal: only old files of that exact shape.
        let old = std::time::SystemTime::now() - std::time::Duration::from_secs(3600);
        let names = [
            ".a.md.cairn-tmp-1-2-0badcafe", // stale: removed
            ".b.md.cairn-tmp-1-3-0badcafe", // young: kept
            ".c.md.cairn-tmp-mine",         // a user's: kept
            "d.md.cairn-tmp-1-2-0badcafe",  // a user's: kept
        ];
        for (i, n) in names.iter().enumerate() {
            let f = File::create(t.path().join(n)).unwrap();
            if i != 1 {
                f.set_modified(old).unwrap();
            }
        }
        fs::create_dir(t.path().join(".e.md.cairn-tmp-1-4-0badcafe")).unwrap(); // a dir: kept
        assert_eq!(
            dir.remove_stale_temps(STALE_TEMP_AGE).unwrap(),
            vec![names[0].to_string()]
        );
        assert!(!t.path().join(names[0]).exists());
        for n in &names[1..] {
            assert!(t.path().join(n).exists(), "{n}");
        }
        assert!(t.path().join(".e.md.cairn-tmp-1-4-0badcafe").is_dir());
        assert!(stale_temps(t.path()).is_empty());
    }

    /// Found by the hardening suite: a resources dir swapped for a link between the checks
    /// and the rename sent the copy out of the workspace. Descriptors refuse the link.
    #[test]
    fn dirs_are_opened_without_following_links() {
        let t = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        fs::create_dir_all(t.path().join("a/b")).unwrap();
        std::os::unix::fs::symlink(outside.path(), t.path().join("a/link")).unwrap();
        assert!(Dir::open_beneath(t.path(), &t.path().join("a/b/c"), true, NewMode::Umask).is_ok());
        let err = Dir::open_beneath(t.path(), &t.path().join("a/link/x"), true, NewMode::Umask);
        assert!(matches!(err, Err(InteropError::Symlink(_))));
        let dir = Dir::open_beneath(t.path(), &t.path().join("a"), false, NewMode::Umask).unwrap();
        assert!(dir.create_file(std::ffi::OsStr::new("link"), b"x").is_err());
        assert_eq!(fs::read_dir(outside.path()).unwrap().count(), 0);
        assert_eq!(
            dir.entry_is_symlink(std::ffi::OsStr::new("link")).unwrap(),
            Some(true)
        );
    }
}
