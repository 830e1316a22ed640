//! Codex's memory workspace as an import target: where the imported resources live, the
//! workspace locks, and how an existing copy compares with its source.
//!
//! Layout (per namespace root `memories/` or `memories_v2/` under the Codex home):
//! `extensions/external_agent_import/instructions.md` and
//! `extensions/external_agent_import/resources/<key>/{scope.json, <files at their relative paths>}`.
//! A resource dir is "owned" (was written by an importer) when it holds a regular
//! `scope.json`, exactly as Codex decides it.

use std::collections::BTreeSet;
use std::fs::{self, File, OpenOptions, TryLockError};
use std::io;
use std::path::{Path, PathBuf};

use crate::claude_source::SourceFile;
use crate::codex_config::MemoryVersion;
use crate::error::{InteropError, Result};
use crate::fsutil;

/// The extension directory name Codex's importer uses.
pub const EXTENSION: &str = "external_agent_import";
/// The per-project scope file.
pub const SCOPE_FILE: &str = "scope.json";
/// Where an import stages new copies before renaming them into place.
pub const STAGING_DIR: &str = ".cairn-import-staging";

/// Paths of a Codex home's memory workspace.
#[derive(Debug, Clone)]
pub struct Workspace {
    pub codex_home: PathBuf,
}

impl Workspace {
    pub fn new(codex_home: impl Into<PathBuf>) -> Workspace {
        Workspace {
            codex_home: codex_home.into(),
        }
    }

    pub fn root(&self, v: MemoryVersion) -> PathBuf {
        self.codex_home.join(v.dir_name())
    }

    pub fn extension_dir(&self, v: MemoryVersion) -> PathBuf {
        self.root(v).join("extensions").join(EXTENSION)
    }

    pub fn resources_dir(&self, v: MemoryVersion) -> PathBuf {
        self.extension_dir(v).join("resources")
    }

    pub fn instructions_path(&self, v: MemoryVersion) -> PathBuf {
        self.extension_dir(v).join("instructions.md")
    }

    pub fn project_dir(&self, v: MemoryVersion, key: &str) -> PathBuf {
        self.resources_dir(v).join(key)
    }

    pub fn lock_path(&self, v: MemoryVersion) -> PathBuf {
        self.codex_home.join(v.lock_name())
    }

    pub fn staging_dir(&self) -> PathBuf {
        self.codex_home.join(STAGING_DIR)
    }

    /// Keys of owned resource dirs (a directory holding a regular `scope.json`).
    pub fn owned_keys(&self, v: MemoryVersion) -> Result<BTreeSet<String>> {
        let dir = self.resources_dir(v);
        let mut out = BTreeSet::new();
        if fsutil::is_symlink(&dir) {
            return Ok(out);
        }
        let rd = match fs::read_dir(&dir) {
            Ok(rd) => rd,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(out),
            Err(e) => return Err(InteropError::io(&dir, e)),
        };
        for ent in rd {
            let ent = ent.map_err(|e| InteropError::io(&dir, e))?;
            let is_dir = ent.file_type().is_ok_and(|t| t.is_dir());
            if !is_dir {
                continue;
            }
            let scoped =
                fs::symlink_metadata(ent.path().join(SCOPE_FILE)).is_ok_and(|m| m.is_file());
            if let (true, Ok(key)) = (scoped, ent.file_name().into_string()) {
                out.insert(key);
            }
        }
        Ok(out)
    }

    /// How the copy of `key` in namespace `v` compares with what an import would write.
    /// `expected` is `None` when the source has no usable cwd (only presence matters then).
    pub fn target_state(
        &self,
        v: MemoryVersion,
        key: &str,
        expected: Option<(&[u8], &[SourceFile])>,
    ) -> Result<TargetState> {
        let dir = self.project_dir(v, key);
        fsutil::ensure_no_symlink(&self.codex_home, &dir)?;
        let meta = match fs::symlink_metadata(&dir) {
            Ok(m) => m,
            Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(TargetState::Missing),
            Err(e) => return Err(InteropError::io(&dir, e)),
        };
        if !meta.is_dir() {
            return Ok(TargetState::Unscoped);
        }
        let scope = dir.join(SCOPE_FILE);
        if !fs::symlink_metadata(&scope).is_ok_and(|m| m.is_file()) {
            return Ok(TargetState::Unscoped);
        }
        let Some((scope_bytes, files)) = expected else {
            return Ok(TargetState::Differs);
        };
        if fs::read(&scope).ok().as_deref() != Some(scope_bytes) {
            return Ok(TargetState::Differs);
        }
        let (entries, link) =
            fsutil::relative_entries(&dir).map_err(|e| InteropError::io(&dir, e))?;
        if let Some(link) = link {
            return Err(InteropError::Symlink(link));
        }
        let mut want: BTreeSet<PathBuf> = files.iter().map(|f| f.relative.clone()).collect();
        want.insert(PathBuf::from(SCOPE_FILE));
        let have: BTreeSet<PathBuf> = entries.into_iter().collect();
        if want != have {
            return Ok(TargetState::Differs);
        }
        for f in files {
            let src = f.bytes().map_err(|e| InteropError::io(&f.path, e))?;
            if fs::read(dir.join(&f.relative)).ok() != Some(src) {
                return Ok(TargetState::Differs);
            }
        }
        Ok(TargetState::Same)
    }

    /// Fails if writing the copy of `key` in `v` would go through a symlink: the namespace
    /// root, `extensions`, the extension dir, `resources`, the project dir, `scope.json`, or
    /// anything inside an existing project dir.
    pub fn check_writable(&self, v: MemoryVersion, key: &str) -> Result<()> {
        let dir = self.project_dir(v, key);
        fsutil::ensure_no_symlink(&self.codex_home, &dir.join(SCOPE_FILE))?;
        fsutil::ensure_no_symlink(&self.codex_home, &self.instructions_path(v))?;
        if fs::symlink_metadata(&dir).is_ok_and(|m| m.is_dir()) {
            let (_, link) =
                fsutil::relative_entries(&dir).map_err(|e| InteropError::io(&dir, e))?;
            if let Some(link) = link {
                return Err(InteropError::Symlink(link));
            }
        }
        Ok(())
    }
}

/// An existing copy compared with its source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetState {
    /// No copy.
    Missing,
    /// Byte-identical: same files, same bytes, same `scope.json`.
    Same,
    /// A scoped copy that differs.
    Differs,
    /// Something is there but it is not a scoped copy (no regular `scope.json`, or not a dir).
    Unscoped,
}

/// The compact `scope.json` Codex writes: `{"cwd":"<canonical dir>"}`.
pub fn scope_json(cwd: &Path) -> Option<Vec<u8>> {
    let s = cwd.to_str()?;
    serde_json::to_vec(&serde_json::json!({ "cwd": s })).ok()
}

/// Held workspace locks; released on drop.
#[derive(Debug)]
pub struct WorkspaceLock {
    files: Vec<File>,
    pub paths: Vec<PathBuf>,
}

impl WorkspaceLock {
    /// Takes exclusive, non-blocking advisory locks on the lock files of `versions`
    /// (`<codex home>/memories_v2.lock`, `<codex home>/memories.lock`), creating them if
    /// needed. All or nothing: if any is held, [`InteropError::Busy`] and none is kept.
    pub fn acquire(codex_home: &Path, versions: &[MemoryVersion]) -> Result<WorkspaceLock> {
        let mut vs = versions.to_vec();
        vs.sort();
        vs.dedup();
        vs.reverse(); // v2 first, always the same order
        if !codex_home.exists() {
            // Codex's home, as Codex makes it: the umask's default.
            fsutil::create_dir(codex_home, codex_home, fsutil::NewMode::Umask)?;
        }
        let mut lock = WorkspaceLock {
            files: Vec::new(),
            paths: Vec::new(),
        };
        for v in vs {
            let path = codex_home.join(v.lock_name());
            if fsutil::is_symlink(&path) {
                return Err(InteropError::Symlink(path));
            }
            let mut o = OpenOptions::new();
            o.read(true).write(true).create(true).truncate(false);
            #[cfg(unix)]
            {
                use std::os::unix::fs::OpenOptionsExt;
                // A file in Codex's home: the mode Codex gives its own (it holds nothing).
                o.mode(fsutil::NewMode::Umask.file_mode());
            }
            let f = o.open(&path).map_err(|e| InteropError::io(&path, e))?;
            match f.try_lock() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(InteropError::Busy),
                Err(TryLockError::Error(e)) => return Err(InteropError::io(&path, e)),
            }
            lock.files.push(f);
            lock.paths.push(path);
        }
        Ok(lock)
    }

    /// Takes shared, non-blocking locks on those lock files that exist (a reader never
    /// creates them). Busy when a writer holds one.
    pub fn acquire_shared(codex_home: &Path, versions: &[MemoryVersion]) -> Result<WorkspaceLock> {
        let mut lock = WorkspaceLock {
            files: Vec::new(),
            paths: Vec::new(),
        };
        for v in versions {
            let path = codex_home.join(v.lock_name());
            if fsutil::is_symlink(&path) {
                continue;
            }
            let Ok(f) = File::open(&path) else { continue };
            match f.try_lock_shared() {
                Ok(()) => {}
                Err(TryLockError::WouldBlock) => return Err(InteropError::Busy),
                Err(TryLockError::Error(e)) => return Err(InteropError::io(&path, e)),
            }
            lock.files.push(f);
            lock.paths.push(path);
        }
        Ok(lock)
    }
}

/// The state of one lock file, for `doctor`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LockState {
    Absent,
    Free,
    Held,
    Symlink,
}

/// Probes a lock file without creating it (an exclusive try-lock, released at once).
pub fn probe_lock(path: &Path) -> LockState {
    if fsutil::is_symlink(path) {
        return LockState::Symlink;
    }
    let Ok(f) = OpenOptions::new().read(true).write(true).open(path) else {
        return if path.exists() {
            LockState::Held
        } else {
            LockState::Absent
        };
    };
    match f.try_lock() {
        Ok(()) => {
            let _ = f.unlock();
            LockState::Free
        }
        Err(_) => LockState::Held,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_json_is_compact() {
        assert_eq!(
            scope_json(Path::new("/home/you/work/app-a")).unwrap(),
            br#"{"cwd":"/home/you/work/app-a"}"#
        );
    }

    #[test]
    fn locks_are_exclusive_across_handles() {
        let t = tempfile::tempdir().unwrap();
        let a = WorkspaceLock::acquire(t.path(), &[MemoryVersion::V2]).unwrap();
        assert!(matches!(
            WorkspaceLock::acquire(t.path(), &[MemoryVersion::V1, MemoryVersion::V2]),
            Err(InteropError::Busy)
        ));
        assert_eq!(
            probe_lock(&t.path().join("memories_v2.lock")),
            LockState::Held
        );
        // The failed attempt stopped at the first busy lock and created nothing more.
        assert_eq!(
            probe_lock(&t.path().join("memories.lock")),
            LockState::Absent
        );
        assert!(matches!(
            WorkspaceLock::acquire_shared(t.path(), &[MemoryVersion::V2]),
            Err(InteropError::Busy)
        ));
        drop(a);
        assert!(WorkspaceLock::acquire(t.path(), &[MemoryVersion::V1, MemoryVersion::V2]).is_ok());
    }
}
