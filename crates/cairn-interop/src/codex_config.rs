//! What `<codex home>/config.toml` says about memory, and which memory pipeline (v1 or v2)
//! Codex resolves from it — and therefore which namespaces an import writes.
//!
//! Codex's rule (seed 000): an explicit `[memories] version` always wins; otherwise v2 only if
//! `[features] memories = true`, `memories.dual_write` is not explicitly false and
//! `<codex home>/memories` does not exist; else v1. Codex's importer always writes
//! `memories_v2/`, and also `memories/` when the resolved version is v1 or that directory
//! already exists. cairn follows it with one exception: when v1 was resolved only because the
//! `memories` feature is off and `memories/` does not exist yet, creating it would pin the
//! profile to v1 forever, so cairn writes v2 only and says which config lines to add.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use toml_edit::{DocumentMut, Item};

use crate::error::{InteropError, Result};

/// Codex's two memory pipelines.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum MemoryVersion {
    V1,
    V2,
}

impl MemoryVersion {
    pub fn as_str(self) -> &'static str {
        match self {
            MemoryVersion::V1 => "v1",
            MemoryVersion::V2 => "v2",
        }
    }

    /// The workspace root under the Codex home.
    pub fn dir_name(self) -> &'static str {
        match self {
            MemoryVersion::V1 => "memories",
            MemoryVersion::V2 => "memories_v2",
        }
    }

    /// The lock file beside the workspace root.
    pub fn lock_name(self) -> &'static str {
        match self {
            MemoryVersion::V1 => "memories.lock",
            MemoryVersion::V2 => "memories_v2.lock",
        }
    }

    pub fn parse(s: &str) -> Option<MemoryVersion> {
        match s {
            "v1" => Some(MemoryVersion::V1),
            "v2" => Some(MemoryVersion::V2),
            _ => None,
        }
    }
}

impl std::fmt::Display for MemoryVersion {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The memory-related settings of `config.toml`. Absent keys are `None`.
#[derive(Debug, Clone, Default)]
pub struct CodexConfig {
    pub path: PathBuf,
    pub exists: bool,
    /// `[features] memories`
    pub memories_feature: Option<bool>,
    /// `[features] external_agent_memory_import`
    pub import_feature: Option<bool>,
    /// `[features] hooks` and its old name `codex_hooks` (Codex reads both; `hooks` decides
    /// when both are set).
    pub hooks_feature: cairn_install::HooksFeature,
    /// `[memories] version`
    pub version: Option<MemoryVersion>,
    /// `[memories] dual_write`
    pub dual_write: Option<bool>,
    /// The parsed document (hooks and their trust state are read from it).
    pub document: Option<DocumentMut>,
}

impl CodexConfig {
    pub fn memories_on(&self) -> bool {
        self.memories_feature == Some(true)
    }
}

fn get_bool(doc: &DocumentMut, table: &str, key: &str) -> Option<bool> {
    doc.get(table)?.get(key)?.as_bool()
}

/// Reads `<codex home>/config.toml`. A missing file is an empty configuration; a file Codex
/// itself could not load (bad TOML, unknown `memories.version`) is an error.
pub fn read_config(codex_home: &Path) -> Result<CodexConfig> {
    let path = codex_home.join("config.toml");
    let text = match fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == io::ErrorKind::NotFound => {
            return Ok(CodexConfig {
                path,
                ..CodexConfig::default()
            });
        }
        Err(e) => return Err(InteropError::io(&path, e)),
    };
    let doc: DocumentMut =
        text.parse()
            .map_err(|e: toml_edit::TomlError| InteropError::Config {
                path: path.clone(),
                message: e.to_string(),
            })?;
    let version = match doc.get("memories").and_then(|m| m.get("version")) {
        None => None,
        Some(Item::Value(v)) if v.as_str().and_then(MemoryVersion::parse).is_some() => {
            v.as_str().and_then(MemoryVersion::parse)
        }
        Some(_) => {
            return Err(InteropError::Config {
                path,
                message: "[memories] version must be \"v1\" or \"v2\"".into(),
            });
        }
    };
    Ok(CodexConfig {
        memories_feature: get_bool(&doc, "features", "memories"),
        import_feature: get_bool(&doc, "features", "external_agent_memory_import"),
        hooks_feature: cairn_install::HooksFeature::read(&doc),
        dual_write: get_bool(&doc, "memories", "dual_write"),
        version,
        exists: true,
        path,
        document: Some(doc),
    })
}

/// Which pipeline Codex resolves, and which namespaces an import writes.
#[derive(Debug, Clone, Serialize)]
pub struct VersionPlan {
    /// What Codex resolves from this configuration today.
    pub codex_resolves: MemoryVersion,
    /// Why, in words.
    pub why: String,
    /// The pipeline cairn imports for (Codex's resolution, the forced one, or v2 when the
    /// v1 trap is avoided).
    pub import_version: MemoryVersion,
    /// The namespaces written, v2 first.
    pub namespaces: Vec<MemoryVersion>,
    /// `<codex home>/memories` exists.
    pub v1_dir_exists: bool,
    /// v1 was resolved only because `memories` is off and no v1 dir exists: cairn writes v2
    /// only instead of creating `memories/`.
    pub trap_avoided: bool,
    pub forced: Option<MemoryVersion>,
    /// What the user should know (and the config lines to add).
    pub warnings: Vec<String>,
}

/// Resolves the version as Codex does and decides the namespaces to write.
pub fn plan_versions(
    cfg: &CodexConfig,
    codex_home: &Path,
    forced: Option<MemoryVersion>,
) -> VersionPlan {
    let v1_dir = codex_home.join(MemoryVersion::V1.dir_name());
    let v1_dir_exists = fs::symlink_metadata(&v1_dir).is_ok();
    let memories_on = cfg.memories_on();
    let dual_write_off = cfg.dual_write == Some(false);
    let (codex_resolves, why) = match cfg.version {
        Some(v) => (v, format!("`[memories] version = \"{v}\"` in {}", cfg.path.display())),
        None if memories_on && !dual_write_off && !v1_dir_exists => (
            MemoryVersion::V2,
            "`[memories] version` is unset, the `memories` feature is on and no v1 workspace exists (the default for a fresh profile)".into(),
        ),
        None => {
            let mut why = Vec::new();
            if !memories_on {
                why.push("the `memories` feature is off".to_string());
            }
            if dual_write_off {
                why.push("`memories.dual_write = false` opts out of the v2 default".to_string());
            }
            if v1_dir_exists {
                why.push(format!("{} exists", v1_dir.display()));
            }
            (
                MemoryVersion::V1,
                format!("`[memories] version` is unset and {}", why.join(", and ")),
            )
        }
    };
    let mut warnings = Vec::new();
    let trap = forced.is_none()
        && cfg.version.is_none()
        && codex_resolves == MemoryVersion::V1
        && !memories_on
        && !dual_write_off
        && !v1_dir_exists;
    let write_v1 = match forced {
        Some(v) => v == MemoryVersion::V1,
        None => !trap && (codex_resolves == MemoryVersion::V1 || v1_dir_exists),
    };
    let import_version = match forced {
        Some(v) => v,
        None if trap => MemoryVersion::V2,
        None => codex_resolves,
    };
    if trap {
        warnings.push(format!(
            "Codex resolves memory v1 for this profile only because the `memories` feature is off. \
             Writing {} would create the v1 workspace and pin this profile to v1 for good, so cairn \
             writes v2 only ({}). Add these lines to {} so Codex uses it:\n[features]\nmemories = true",
            v1_dir.display(),
            codex_home.join(MemoryVersion::V2.dir_name()).display(),
            cfg.path.display()
        ));
    } else if !memories_on {
        warnings.push(format!(
            "the `memories` feature is off: Codex reads no memory until you add `[features]` \
             `memories = true` to {}",
            cfg.path.display()
        ));
    }
    if forced.is_none() && cfg.version.is_none() && v1_dir_exists && memories_on {
        warnings.push(format!(
            "{} exists, so v2 can never become Codex's default here; cairn keeps both copies \
             current. To use v2, set `[memories]` `version = \"v2\"` in {}",
            v1_dir.display(),
            cfg.path.display()
        ));
    }
    if forced.is_some_and(|f| f != codex_resolves) {
        warnings.push(format!(
            "--codex-version {} differs from what Codex resolves ({codex_resolves}: {why}); Codex \
             reads the {} copy only after you set `[memories]` `version = \"{}\"`",
            import_version, import_version, import_version
        ));
    }
    let mut namespaces = vec![MemoryVersion::V2];
    if write_v1 {
        namespaces.push(MemoryVersion::V1);
    }
    VersionPlan {
        codex_resolves,
        why,
        import_version,
        namespaces,
        v1_dir_exists,
        trap_avoided: trap,
        forced,
        warnings,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan(toml: &str, v1_dir: bool, forced: Option<MemoryVersion>) -> VersionPlan {
        let t = tempfile::tempdir().unwrap();
        fs::write(t.path().join("config.toml"), toml).unwrap();
        if v1_dir {
            fs::create_dir(t.path().join("memories")).unwrap();
        }
        let cfg = read_config(t.path()).unwrap();
        plan_versions(&cfg, t.path(), forced)
    }

    use MemoryVersion::{V1, V2};

    #[test]
    fn five_cases_of_seed_000() {
        // Fresh profile with memories on → v2 only.
        let p = plan("[features]\nmemories = true\n", false, None);
        assert_eq!((p.codex_resolves, p.namespaces.clone()), (V2, vec![V2]));
        assert!(!p.trap_avoided);
        // Only the import flag → Codex resolves v1; cairn writes v2 only and warns.
        let p = plan(
            "[features]\nexternal_agent_memory_import = true\n",
            false,
            None,
        );
        assert_eq!(p.codex_resolves, V1);
        assert_eq!(p.namespaces, vec![V2]);
        assert_eq!(p.import_version, V2);
        assert!(p.trap_avoided);
        assert!(p.warnings[0].contains("[features]\nmemories = true"));
        // Existing v1 dir → v1, both written.
        let p = plan("[features]\nmemories = true\n", true, None);
        assert_eq!((p.codex_resolves, p.namespaces.clone()), (V1, vec![V2, V1]));
        // version = "v2" with an existing v1 dir → v2, both written.
        let p = plan("[memories]\nversion = \"v2\"\n", true, None);
        assert_eq!((p.codex_resolves, p.namespaces.clone()), (V2, vec![V2, V1]));
        // memories on, dual_write = false → v1 resolved, both written.
        let p = plan(
            "[features]\nmemories = true\n[memories]\ndual_write = false\n",
            false,
            None,
        );
        assert_eq!((p.codex_resolves, p.namespaces.clone()), (V1, vec![V2, V1]));
        assert!(!p.trap_avoided);
    }

    #[test]
    fn forcing_and_explicit_versions() {
        let p = plan("", false, Some(V1));
        assert_eq!(p.namespaces, vec![V2, V1]);
        let p = plan("[features]\nmemories = true\n", true, Some(V2));
        assert_eq!(p.namespaces, vec![V2]);
        let p = plan("[memories]\nversion = \"v1\"\n", false, None);
        assert_eq!((p.codex_resolves, p.namespaces.clone()), (V1, vec![V2, V1]));
        // Dotted and inline forms are the same keys.
        let p = plan("features.memories = true\n", false, None);
        assert_eq!(p.codex_resolves, V2);
        let p = plan("features = { memories = true }\n", false, None);
        assert_eq!(p.codex_resolves, V2);
    }

    #[test]
    fn bad_config_is_an_error() {
        let t = tempfile::tempdir().unwrap();
        fs::write(
            t.path().join("config.toml"),
            "[memories]\nversion = \"v3\"\n",
        )
        .unwrap();
        assert!(read_config(t.path()).is_err());
        fs::write(t.path().join("config.toml"), "[features\n").unwrap();
        assert!(read_config(t.path()).is_err());
        let empty = tempfile::tempdir().unwrap();
        assert!(!read_config(empty.path()).unwrap().exists);
    }
}
