//! Replacing a file atomically without changing who may read it.
//!
//! Every file cairn rewrites outside its own data dir belongs to someone else: Codex's
//! `memory_summary.md` and `MEMORY.md`, Claude Code's `settings.json` and memory files,
//! Codex's `config.toml` and `hooks.json`, a project's memo journal; and the memory views in
//! the data dir are the user's to edit, `chmod` included. A write here is a temp
//! file beside the target, synced, then renamed over it, and the rename puts a new inode in
//! place: without care the file would come back with the temp file's private mode and with
//! cairn's user and group. So:
//!
//! - an existing regular file keeps its permission bits, and its owner and group as far as
//!   this user may set them (a group it belongs to; any owner only for root) — [`adopt`];
//! - a new file or directory gets the mode [`NewMode`] says: in an agent's directory what the
//!   agent itself gives a new file (both create theirs with the umask's default, 0666/0777 less
//!   the umask: 0644 and 0755 under the usual 022), in cairn's data dir owner only (0600/0700).
//!
//! The temp file is created owner-only and takes the target's mode only once it holds all of
//! the new bytes, so a private file's new text is never readable by others, not even for a
//! moment; a new file is created with its final mode from the start (the kernel applies the
//! umask), so nothing is decided by reading the umask.
//!
//! This crate only writes what its caller names: it does not decide where files are, and does
//! not follow or check symlinks on the way (callers refuse or resolve them first); it never
//! opens its temp file through a link (`create_new`).

use std::fs::{self, File, Metadata, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Which mode a file or directory cairn creates gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NewMode {
    /// cairn's own data: owner only (0600 files, 0700 directories).
    Private,
    /// An agent's directory (`~/.claude`, `~/.codex`, a project): what a program gives a new
    /// file there by default, 0666 for files and 0777 for directories less the umask.
    Umask,
}

impl NewMode {
    /// The mode a new file is created with (the kernel takes the umask off).
    pub fn file_mode(self) -> u32 {
        match self {
            NewMode::Private => 0o600,
            NewMode::Umask => 0o666,
        }
    }

    /// The mode a new directory is created with (the kernel takes the umask off).
    pub fn dir_mode(self) -> u32 {
        match self {
            NewMode::Private => 0o700,
            NewMode::Umask => 0o777,
        }
    }
}

static COUNTER: AtomicU64 = AtomicU64::new(0);

/// Whether `name` has exactly the shape of [`write_atomic`]'s temp files
/// (`.<name>.cairn-<pid>-<n>.tmp`): one a killed writer left may be swept by whoever owns the
/// directory; a user's own file never matches.
pub fn is_temp_name(name: &str) -> bool {
    let Some(rest) = name.strip_prefix('.').and_then(|r| r.strip_suffix(".tmp")) else {
        return false;
    };
    let Some((stem, tail)) = rest.rsplit_once(".cairn-") else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    !stem.is_empty()
        && tail
            .split_once('-')
            .is_some_and(|(pid, n)| digits(pid) && digits(n))
}

/// The temp file [`write_atomic`] writes `path`'s new bytes to: `.<name>.cairn-<pid>-<n>.tmp`
/// in the same directory.
fn temp_path(dir: &Path, path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    dir.join(format!(".{name}.cairn-{}-{n}.tmp", std::process::id()))
}

/// Gives `file` — a temp file about to be renamed over `existing` — `existing`'s owner and
/// group where this user may set them, then its permission bits (`chown` clears set-id bits,
/// so the mode goes last). Owner and group are best effort: a user who may not give a file
/// away (not root, not a member of the group) keeps the bits, which is what decides access
/// for the owner. Errors only when the permission bits cannot be set.
pub fn adopt(file: &File, existing: &Metadata) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::MetadataExt;
        adopt_ids(file, existing.uid(), existing.gid(), existing.mode())
    }
    #[cfg(not(unix))]
    {
        file.set_permissions(existing.permissions())
    }
}

/// [`adopt`] from the owner, group and mode of a file as `stat` gives them (for a caller that
/// holds the directory by descriptor and read the target with `fstatat`).
#[cfg(unix)]
pub fn adopt_ids(file: &File, uid: u32, gid: u32, mode: u32) -> io::Result<()> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, fchown};
    let mine = file.metadata()?;
    if mine.uid() != uid || mine.gid() != gid {
        let new_uid = (mine.uid() != uid).then_some(uid);
        if fchown(file, new_uid, Some(gid)).is_err() && new_uid.is_some() {
            let _ = fchown(file, None, Some(gid));
        }
    }
    file.set_permissions(fs::Permissions::from_mode(mode & 0o7777))
}

/// Creates `file_name` in a directory as a new file (never through a link, never over an
/// existing name) with `mode` (less the umask).
fn create_new(path: &Path, mode: u32) -> io::Result<File> {
    let mut o = OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(mode);
    }
    #[cfg(not(unix))]
    let _ = mode;
    o.open(path)
}

/// Writes `bytes` to `path` atomically: a temp file in the same directory, synced, renamed
/// over `path`, and the directory synced. An existing regular file at `path` keeps its
/// permission bits and, where this user may set them, its owner and group ([`adopt`]); a new
/// file gets `new`'s mode. `path` is replaced, never written through: a caller that means to
/// write through a symlink passes the file it points to.
pub fn write_atomic(path: &Path, bytes: &[u8], new: NewMode) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    let existing = fs::symlink_metadata(path).ok().filter(Metadata::is_file);
    let tmp = temp_path(dir, path);
    // Owner-only until the new bytes are all there; a new file has its final mode at once.
    let first_mode = if existing.is_some() {
        0o600
    } else {
        new.file_mode()
    };
    let mut f = create_new(&tmp, first_mode)?;
    let res = (|| {
        f.write_all(bytes)?;
        if let Some(m) = &existing {
            adopt(&f, m)?;
        }
        f.sync_all()?;
        fs::rename(&tmp, path)?;
        if let Ok(d) = File::open(dir) {
            let _ = d.sync_all();
        }
        Ok(())
    })();
    if res.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    res
}

/// Creates `path` and its missing parents, each new directory with `new`'s mode (less the
/// umask); directories that exist are left as they are. A file where a directory should be
/// (`path` or one above it) is named in the error, with `NotADirectory`, not left to the
/// system's "File exists".
pub fn create_dir_all(path: &Path, new: NewMode) -> io::Result<()> {
    let mut b = fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(new.dir_mode());
    }
    #[cfg(not(unix))]
    let _ = new;
    b.create(path)
        .map_err(|e| match path.ancestors().find(|a| a.exists()) {
            Some(f) if !f.is_dir() => io::Error::new(
                io::ErrorKind::NotADirectory,
                format!("{} is a file, not a directory", f.display()),
            ),
            _ => e,
        })
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o7777
    }

    /// This process's umask, from `/proc` where there is one (read, never set: tests run on
    /// threads that share it).
    fn umask() -> Option<u32> {
        let status = fs::read_to_string("/proc/self/status").ok()?;
        let line = status.lines().find(|l| l.starts_with("Umask:"))?;
        u32::from_str_radix(line.trim_start_matches("Umask:").trim(), 8).ok()
    }

    #[test]
    fn an_existing_file_keeps_its_mode() {
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("MEMORY.md");
        for m in [0o644, 0o640, 0o600, 0o664, 0o444] {
            fs::write(&p, "old").unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(m)).unwrap();
            for new in [NewMode::Private, NewMode::Umask] {
                write_atomic(&p, b"new", new).unwrap();
                assert_eq!(fs::read(&p).unwrap(), b"new");
                assert_eq!(mode(&p), m, "{m:o} {new:?}");
            }
            fs::set_permissions(&p, fs::Permissions::from_mode(0o644)).unwrap();
        }
        // No temp file is left behind.
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 1);
    }

    #[test]
    fn temp_names_are_told_from_the_users_files() {
        let t = tempfile::tempdir().unwrap();
        let tmp = temp_path(t.path(), &t.path().join("MEMORY.md"));
        let name = tmp.file_name().unwrap().to_string_lossy().into_owned();
        assert!(is_temp_name(&name), "{name}");
        for user in [
            "MEMORY.md",
            ".MEMORY.md.cairn-notes.tmp",
            ".cairn-1-2.tmp",
            "notes.cairn-1-2.tmp",
            ".draft.tmp-notes",
        ] {
            assert!(!is_temp_name(user), "{user}");
        }
    }

    #[test]
    fn a_new_file_gets_the_mode_it_is_made_for() {
        let t = tempfile::tempdir().unwrap();
        let private = t.path().join("install.json");
        write_atomic(&private, b"{}", NewMode::Private).unwrap();
        assert_eq!(mode(&private), 0o600);
        let shared = t.path().join("settings.json");
        write_atomic(&shared, b"{}", NewMode::Umask).unwrap();
        let dir = t.path().join("memories_v2/rollout_summaries");
        create_dir_all(&dir, NewMode::Umask).unwrap();
        let own = t.path().join("data/memory");
        create_dir_all(&own, NewMode::Private).unwrap();
        assert_eq!(mode(&own), 0o700);
        assert_eq!(mode(&t.path().join("data")), 0o700);
        if let Some(u) = umask() {
            assert_eq!(mode(&shared), 0o666 & !u);
            assert_eq!(mode(&dir), 0o777 & !u);
            assert_eq!(mode(&t.path().join("memories_v2")), 0o777 & !u);
        }
    }

    #[test]
    fn a_link_at_the_target_is_replaced_not_followed() {
        let t = tempfile::tempdir().unwrap();
        let outside = t.path().join("outside.md");
        fs::write(&outside, "theirs").unwrap();
        let p = t.path().join("f.md");
        std::os::unix::fs::symlink(&outside, &p).unwrap();
        write_atomic(&p, b"ours", NewMode::Umask).unwrap();
        assert_eq!(fs::read(&outside).unwrap(), b"theirs");
        assert!(fs::symlink_metadata(&p).unwrap().is_file());
    }

    #[test]
    fn a_failed_write_leaves_the_old_file_and_no_temp_file() {
        let t = tempfile::tempdir().unwrap();
        // A directory where the file should be: the rename fails.
        let p = t.path().join("taken");
        fs::create_dir(&p).unwrap();
        fs::write(p.join("x"), "x").unwrap();
        assert!(write_atomic(&p, b"new", NewMode::Umask).is_err());
        assert_eq!(fs::read_dir(t.path()).unwrap().count(), 1);
    }

    #[test]
    fn owner_and_group_stay_where_this_user_may_keep_them() {
        use std::os::unix::fs::MetadataExt;
        let t = tempfile::tempdir().unwrap();
        let p = t.path().join("config.toml");
        fs::write(&p, "a = 1\n").unwrap();
        let before = fs::metadata(&p).unwrap();
        write_atomic(&p, b"a = 2\n", NewMode::Umask).unwrap();
        let after = fs::metadata(&p).unwrap();
        assert_eq!((after.uid(), after.gid()), (before.uid(), before.gid()));
        // Run as root (a container, a system service), a file of another user's stays theirs.
        if before.uid() == 0 {
            std::os::unix::fs::chown(&p, Some(4242), Some(4343)).unwrap();
            fs::set_permissions(&p, fs::Permissions::from_mode(0o640)).unwrap();
            write_atomic(&p, b"a = 3\n", NewMode::Umask).unwrap();
            let after = fs::metadata(&p).unwrap();
            assert_eq!((after.uid(), after.gid()), (4242, 4343));
            assert_eq!(mode(&p), 0o640);
        }
    }
}
