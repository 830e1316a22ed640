//! Scopes: `global`, or a project identity.
//!
//! A project's identity is the canonical root of its git repository, found the way Claude
//! Code finds the key of its auto memory: walk up from the working directory to the first
//! `.git`; a `.git` *directory* makes its parent the root; a `.git` *file* (`gitdir: X`) is a
//! linked worktree when `X/commondir` names the shared git dir, `X` is
//! `<common>/worktrees/<name>` and `X/gitdir` points back at this `.git` file: then the root is
//! the main checkout (`dirname(common)`, or `common` itself for a bare repository). Anything
//! else with a `.git` file (a submodule) keeps its own directory. So every worktree and every
//! subdirectory of one repository share one scope. Outside a repository the identity is the
//! canonical directory itself. No `git` process is run.

use std::path::{Component, Path, PathBuf};

/// The scope shared by every project.
pub const GLOBAL: &str = "global";

/// The project identity of a working directory (see the module docs).
pub fn project_scope(cwd: &Path) -> String {
    let abs = std::path::absolute(cwd).unwrap_or_else(|_| cwd.to_path_buf());
    let base = abs.canonicalize().unwrap_or_else(|_| normalize(&abs));
    for dir in base.ancestors() {
        let dot_git = dir.join(".git");
        let Ok(meta) = std::fs::metadata(&dot_git) else {
            continue;
        };
        if meta.is_dir() {
            return path_string(dir);
        }
        if meta.is_file() {
            return path_string(&worktree_main_root(dir, &dot_git).unwrap_or_else(|| dir.into()));
        }
    }
    path_string(&base)
}

/// For a checkout whose `.git` is a file: the main repository root when this is a linked
/// worktree, `None` otherwise (a submodule or a broken link keeps its own root).
fn worktree_main_root(dir: &Path, dot_git: &Path) -> Option<PathBuf> {
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let gitdir = dir.join(target).canonicalize().ok()?;
    let common_rel = std::fs::read_to_string(gitdir.join("commondir")).ok()?;
    let common = gitdir.join(common_rel.trim()).canonicalize().ok()?;
    // X must be <common>/worktrees/<name> ...
    if gitdir.parent()? != common.join("worktrees") {
        return None;
    }
    // ... and X/gitdir must point back at this .git file.
    let back = std::fs::read_to_string(gitdir.join("gitdir")).ok()?;
    let back = Path::new(back.trim());
    let back = if back.is_absolute() {
        back.to_path_buf()
    } else {
        gitdir.join(back)
    };
    if back.canonicalize().ok()? != dot_git.canonicalize().ok()? {
        return None;
    }
    if common.file_name().is_some_and(|n| n == ".git") {
        common.parent().map(Path::to_path_buf)
    } else {
        Some(common)
    }
}

fn path_string(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

/// Lexical normalisation (`.` and `..` removed) for paths that do not exist any more.
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The directory name of a scope's markdown views: `global`, or
/// `<last path component>-<8 hex digits of a hash of the whole identity>`.
pub fn scope_slug(scope: &str) -> String {
    if scope == GLOBAL {
        return GLOBAL.to_string();
    }
    let base = Path::new(scope)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut name: String = base
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .collect();
    name = name.trim_matches('-').chars().take(40).collect();
    if name.is_empty() {
        name = "project".into();
    }
    let h = xxhash_rust::xxh3::xxh3_64(scope.as_bytes());
    format!("{name}-{:08x}", (h >> 32) as u32)
}

/// A short human label: `global`, or the project directory's name.
pub fn scope_label(scope: &str) -> String {
    if scope == GLOBAL {
        return GLOBAL.into();
    }
    Path::new(scope)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| scope.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slugs_are_stable_and_safe() {
        assert_eq!(scope_slug("global"), "global");
        let s = scope_slug("/home/u/work/Web Shop");
        assert!(s.starts_with("web-shop-"), "{s}");
        assert_eq!(s, scope_slug("/home/u/work/Web Shop"));
        assert_ne!(s, scope_slug("/home/v/work/Web Shop"));
    }

    #[test]
    fn missing_dirs_normalise() {
        assert_eq!(
            project_scope(Path::new("/nonexistent-cairn/a/../b/./c")),
            "/nonexistent-cairn/b/c"
        );
    }
}
