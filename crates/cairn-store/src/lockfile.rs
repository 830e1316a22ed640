//! Advisory lock files in cairn's data dir: one holder at a time, never a wait, and a lock of a
//! killed process is free at once (the OS drops `flock` locks with their process).

use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;

/// Takes an exclusive, non-blocking lock on `path` (created private if missing). `Ok(None)`
/// when another process holds it; the lock lasts as long as the returned file.
pub fn try_lock_file(path: &Path) -> std::io::Result<Option<File>> {
    let mut o = OpenOptions::new();
    o.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    let f = o.open(path)?;
    match f.try_lock() {
        Ok(()) => Ok(Some(f)),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time() {
        let d = tempfile::tempdir().unwrap();
        let p = d.path().join("x.lock");
        let a = try_lock_file(&p).unwrap();
        assert!(a.is_some());
        assert!(try_lock_file(&p).unwrap().is_none());
        drop(a);
        assert!(try_lock_file(&p).unwrap().is_some());
    }
}
