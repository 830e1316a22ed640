//! Claude Code auto memory as an import source: every project with memory files, each file's
//! path relative to the memory dir, and the project's working directory resolved by Codex's
//! importer rule (`cairn_transcript::resolve_project_cwd`).
//!
//! Like Codex's importer: every regular `*.md` file (extension in any case) under
//! `<root>/projects/<key>/memory/`, recursively; symlinks (to files or directories) are skipped
//! and reported; a project without any such file is not a source. A memory dir that is itself
//! a symlink is not followed either (nor by Codex's importer): it is listed in
//! [`ClaudeMemory::linked`] so that the plan says so and keeps the project's existing copy.
//! Unlike Codex's importer, the root honours `CLAUDE_CONFIG_DIR` (the caller passes it) and
//! the user-level `autoMemoryDirectory`, which becomes one more source named [`CUSTOM_KEY`].
//!
//! What cairn itself exported from Codex is Codex's own memory and never goes back: topic
//! files marked `source: codex` with a `cairn_id: codex:…` are skipped and reported, and the
//! top-level `MEMORY.md` is copied without cairn's index lines for them (skipped when nothing
//! else is left in it): the lines of cairn's marked block, and the same lines wherever Claude
//! Code's model moved them when it rewrote the index without the markers it never sees.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use cairn_transcript::{ClaudeRoot, Problem, resolve_project_cwd};

/// The source key of the user-level `autoMemoryDirectory` (Codex uses the same name).
pub const CUSTOM_KEY: &str = "_custom";

/// Why a symlinked memory dir is not a source.
pub const LINKED_REASON: &str = "the memory directory is a symbolic link, which is not followed (Codex's importer does not follow it either)";

/// One memory file to copy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFile {
    /// Path under the memory dir (also the path under the resource dir).
    pub relative: PathBuf,
    pub path: PathBuf,
    /// The top-level `MEMORY.md` holding cairn's index lines for the files it exported from
    /// Codex (or its markers): copied without them.
    pub strip_codex_index: bool,
    /// Those exported files, by name.
    pub codex_index_files: BTreeSet<String>,
}

impl SourceFile {
    /// The bytes an import writes for this file: the file as it is, or, for a `MEMORY.md`
    /// with cairn's Codex index lines, the file without them.
    pub fn bytes(&self) -> std::io::Result<Vec<u8>> {
        let raw = fs::read(&self.path)?;
        if !self.strip_codex_index {
            return Ok(raw);
        }
        Ok(match String::from_utf8(raw) {
            Ok(text) => crate::export::without_exported_lines(&text, &|f| {
                self.codex_index_files.contains(f)
            })
            .into_bytes(),
            Err(e) => e.into_bytes(),
        })
    }
}

/// A project whose memory dir is a symbolic link: not followed, not a source.
#[derive(Debug, Clone)]
pub struct LinkedMemory {
    pub key: String,
    pub memory_dir: PathBuf,
}

/// A project with auto memory.
#[derive(Debug, Clone)]
pub struct SourceProject {
    pub key: String,
    pub memory_dir: PathBuf,
    /// Canonical working directory, when a usable session (or `--map`) gives one.
    pub cwd: Option<PathBuf>,
    /// Why `cwd` is `None`.
    pub reason: Option<String>,
    /// The cwd came from `--map`.
    pub mapped: bool,
    pub files: Vec<SourceFile>,
}

/// Everything found under a Claude Code root.
#[derive(Debug, Clone, Default)]
pub struct ClaudeMemory {
    pub root: PathBuf,
    pub projects: Vec<SourceProject>,
    /// Symlinks skipped, unreadable directories, files cairn exported from Codex.
    pub skipped: Vec<Problem>,
    /// Projects whose memory dir is a symbolic link (skipped; their copies are kept).
    pub linked: Vec<LinkedMemory>,
}

impl ClaudeMemory {
    pub fn project(&self, key: &str) -> Option<&SourceProject> {
        self.projects.iter().find(|p| p.key == key)
    }
}

fn is_markdown(p: &Path) -> bool {
    p.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| e.eq_ignore_ascii_case("md"))
}

/// Regular `*.md` files under `dir`, recursively, sorted; symlinks reported in `skipped`.
pub fn memory_files(dir: &Path, skipped: &mut Vec<Problem>) -> Vec<SourceFile> {
    fn walk(
        root: &Path,
        dir: &Path,
        depth: usize,
        out: &mut Vec<SourceFile>,
        skipped: &mut Vec<Problem>,
    ) {
        let rd = match fs::read_dir(dir) {
            Ok(rd) => rd,
            Err(e) => {
                skipped.push(Problem::new(
                    dir,
                    None,
                    format!("cannot list directory: {e}"),
                ));
                return;
            }
        };
        let mut ents: Vec<_> = rd.flatten().collect();
        ents.sort_by_key(|e| e.file_name());
        for ent in ents {
            let p = ent.path();
            let Ok(t) = ent.file_type() else { continue };
            if t.is_symlink() {
                skipped.push(Problem::new(
                    &p,
                    None,
                    "symlink skipped (memory files are copied only from regular files)",
                ));
            } else if t.is_dir() {
                if depth < 32 {
                    walk(root, &p, depth + 1, out, skipped);
                }
            } else if t.is_file()
                && is_markdown(&p)
                && let Ok(rel) = p.strip_prefix(root)
            {
                let relative = rel.to_path_buf();
                if let Some(file) = classify(relative, p, skipped) {
                    out.push(file);
                }
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, 0, &mut out, skipped);
    out
}

/// `path` as a source file, or `None` (reported in `skipped`) when cairn exported it from
/// Codex. An unreadable file stays a source: the import reports the read error.
fn classify(relative: PathBuf, path: PathBuf, skipped: &mut Vec<Problem>) -> Option<SourceFile> {
    let mut file = SourceFile {
        relative,
        path,
        strip_codex_index: false,
        codex_index_files: BTreeSet::new(),
    };
    let Ok(bytes) = fs::read(&file.path) else {
        return Some(file);
    };
    let text = String::from_utf8_lossy(&bytes);
    if crate::export::codex_mark(&text).is_some() {
        skipped.push(Problem::new(
            &file.path,
            None,
            "exported from Codex by cairn (`source: codex`): Codex's own memory is not imported back into Codex",
        ));
        return None;
    }
    if file.relative != Path::new("MEMORY.md") {
        return Some(file);
    }
    let exported = file
        .path
        .parent()
        .map(crate::export::ExportedFiles::scan)
        .unwrap_or_default();
    let (codex_index_files, markers) = crate::export::exported_lines_in(&text, &exported);
    if markers || !codex_index_files.is_empty() {
        file.strip_codex_index = true;
        file.codex_index_files = codex_index_files;
        let left = file.bytes().unwrap_or_default();
        if String::from_utf8_lossy(&left).trim().is_empty() {
            skipped.push(Problem::new(
                &file.path,
                None,
                "holds only cairn's index of the memory it exported from Codex: not imported back into Codex",
            ));
            return None;
        }
    }
    Some(file)
}

fn real_dir(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok_and(|m| m.is_dir())
}

/// Discovers every project with auto memory under `root`. `home` expands `~/` in the
/// user-level `autoMemoryDirectory`.
pub fn discover(root: &Path, home: Option<&Path>) -> ClaudeMemory {
    let claude = ClaudeRoot::new(root);
    let mut skipped = Vec::new();
    let mut projects = Vec::new();
    let mut seen_dirs = Vec::new();
    let mut linked = Vec::new();
    for p in claude.projects(&mut skipped) {
        let mem = p.dir.join("memory");
        if fs::symlink_metadata(&mem).is_ok_and(|m| m.file_type().is_symlink()) {
            skipped.push(Problem::new(&mem, None, LINKED_REASON));
            linked.push(LinkedMemory {
                key: p.key,
                memory_dir: mem,
            });
            continue;
        }
        if !real_dir(&mem) {
            continue;
        }
        seen_dirs.push(fs::canonicalize(&mem).unwrap_or_else(|_| mem.clone()));
        let files = memory_files(&mem, &mut skipped);
        if files.is_empty() {
            continue;
        }
        let cwd = resolve_project_cwd(&p);
        projects.push(SourceProject {
            key: p.key,
            memory_dir: mem,
            cwd: cwd.cwd,
            reason: cwd.reason,
            mapped: false,
            files,
        });
    }
    if let Some(dir) = claude.auto_memory_override(home)
        && real_dir(&dir)
        && !seen_dirs.contains(&fs::canonicalize(&dir).unwrap_or_else(|_| dir.clone()))
    {
        let files = memory_files(&dir, &mut skipped);
        if !files.is_empty() {
            projects.push(SourceProject {
                key: CUSTOM_KEY.into(),
                memory_dir: dir.clone(),
                cwd: None,
                reason: Some(format!(
                    "autoMemoryDirectory {} (user settings) is shared by every project, so it has no single working directory; import it with --map {CUSTOM_KEY}=DIR",
                    dir.display()
                )),
                mapped: false,
                files,
            });
        }
    }
    projects.sort_by(|a, b| a.key.cmp(&b.key));
    linked.sort_by(|a, b| a.key.cmp(&b.key));
    ClaudeMemory {
        root: root.to_path_buf(),
        projects,
        skipped,
        linked,
    }
}

/// True when `key` is one plain path component (no `/`, not `.`/`..`, not absolute, no NUL).
pub fn valid_key(key: &str) -> bool {
    let mut c = Path::new(key).components();
    matches!(c.next(), Some(std::path::Component::Normal(_)))
        && c.next().is_none()
        && !key.contains('\0')
        && !key.contains('/')
        && !key.contains('\\')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_must_be_single_components() {
        assert!(valid_key("-home-u-work-app"));
        assert!(valid_key("_custom"));
        for bad in ["", ".", "..", "../x", "a/b", "/abs", "a\\b", "x\0y"] {
            assert!(!valid_key(bad), "{bad:?}");
        }
    }

    #[test]
    fn memory_files_skip_symlinks_and_keep_nested_markdown() {
        let t = tempfile::tempdir().unwrap();
        let m = t.path();
        fs::create_dir_all(m.join("notes")).unwrap();
        fs::write(m.join("MEMORY.md"), "x").unwrap();
        fs::write(m.join("UPPER.MD"), "x").unwrap();
        fs::write(m.join("notes.txt"), "x").unwrap();
        fs::write(m.join("notes/deep.md"), "x").unwrap();
        std::os::unix::fs::symlink(m.join("MEMORY.md"), m.join("linked.md")).unwrap();
        std::os::unix::fs::symlink(m.join("notes"), m.join("loop")).unwrap();
        let mut skipped = Vec::new();
        let files = memory_files(m, &mut skipped);
        let rel: Vec<_> = files.iter().map(|f| f.relative.clone()).collect();
        assert_eq!(
            rel,
            vec![
                PathBuf::from("MEMORY.md"),
                PathBuf::from("UPPER.MD"),
                PathBuf::from("notes/deep.md")
            ]
        );
        assert_eq!(skipped.len(), 2);
    }
}
