//! Which embedding model is active: the static table (always available), or the full
//! transformer when this build has the `full-embeddings` feature and a complete model
//! directory is configured. Deciding is cheap ([`status`] reads only the model's
//! `config.json`); the transformer itself is loaded on its first embedding and then shared
//! by the whole process.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use crate::model::{InstalledModel, ModelState, inspect};
use crate::{EmbedError, StaticEmbedder};

/// Whether this build can run the full transformer.
pub const FULL_COMPILED: bool = cfg!(feature = "full-embeddings");

/// A text embedding model. Vectors are L2-normalised; [`TextEmbedder::id`] names the model
/// (and its weights) so that stored vectors can be tagged with it.
pub trait TextEmbedder: Send + Sync + std::fmt::Debug {
    /// Identifier of the model and its weights.
    fn id(&self) -> &str;
    /// Dimensionality of the vectors.
    fn dims(&self) -> usize;
    /// The embedding of one text.
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError>;
    /// The embeddings of many texts, in order.
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        texts.iter().map(|t| self.embed(t)).collect()
    }
}

impl TextEmbedder for StaticEmbedder {
    fn id(&self) -> &str {
        self.fingerprint()
    }
    fn dims(&self) -> usize {
        StaticEmbedder::dims(self)
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(StaticEmbedder::embed(self, text))
    }
}

/// The two tiers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tier {
    /// The static table distilled from all-MiniLM-L6-v2, compiled into the binary.
    Static,
    /// The all-MiniLM-L6-v2 transformer, from the local model directory.
    Full,
}

impl Tier {
    /// `"static"` or `"full"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Tier::Static => "static",
            Tier::Full => "full",
        }
    }
}

/// Which tier a process wants.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TierPreference {
    /// The full tier when compiled in and installed, else the static one.
    #[default]
    Auto,
    /// Always the static tier.
    Static,
}

#[derive(Debug, Default)]
struct Settings {
    model_dir: Option<PathBuf>,
    preference: TierPreference,
}

static SETTINGS: Mutex<Settings> = Mutex::new(Settings {
    model_dir: None,
    preference: TierPreference::Auto,
});

/// Sets where the full tier's model lives (`None`: nowhere, static tier only). The binary
/// calls this once with `<data dir>/models/all-minilm-l6-v2`.
pub fn set_model_dir(dir: Option<PathBuf>) {
    SETTINGS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .model_dir = dir;
}

/// Sets the tier preference (e.g. an evaluation forcing the static tier).
pub fn set_preference(p: TierPreference) {
    SETTINGS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .preference = p;
}

/// Whether this process may load the full transformer (see [`set_model_loading`]).
static MODEL_LOADING: AtomicBool = AtomicBool::new(true);

/// Latency-critical processes (`cairn hook`, `cairn recall`) call this with `false`: the
/// full transformer is then never loaded by [`active`] or [`by_id`] (about 0.1 s), which
/// offer the static tier instead, unless the model is already loaded. The recall index
/// then searches static vectors of the documents rather than the stored full-tier ones.
pub fn set_model_loading(allowed: bool) {
    MODEL_LOADING.store(allowed, Ordering::Relaxed);
}

/// See [`set_model_loading`] (true unless a process said otherwise).
pub fn model_loading_allowed() -> bool {
    MODEL_LOADING.load(Ordering::Relaxed)
}

/// The active tier and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TierStatus {
    /// The tier new vectors are computed with.
    pub active: Tier,
    /// Identifier of the active model (what stored vectors are tagged with).
    pub model: String,
    /// Its dimensionality.
    pub dims: usize,
    /// Why this tier is active, in words.
    pub reason: String,
    /// Whether this build has the `full-embeddings` feature.
    pub full_compiled: bool,
    /// The configured model directory.
    pub model_dir: Option<PathBuf>,
    /// The installed model, when the directory is complete (even if this build cannot use it).
    pub installed: Option<InstalledModel>,
}

/// The active tier and why, without loading any model.
pub fn status() -> TierStatus {
    let (dir, preference) = {
        let s = SETTINGS.lock().unwrap_or_else(PoisonError::into_inner);
        (s.model_dir.clone(), s.preference)
    };
    let (model, dims) = match crate::try_embedder() {
        Ok(e) => (e.fingerprint().to_owned(), e.dims()),
        Err(_) => (String::new(), 0),
    };
    let mut st = TierStatus {
        active: Tier::Static,
        model,
        dims,
        reason: String::new(),
        full_compiled: FULL_COMPILED,
        model_dir: dir.clone(),
        installed: None,
    };
    let state = dir.as_deref().map(inspect);
    if let Some(Ok(ModelState::Installed(m))) = &state {
        st.installed = Some(m.clone());
    }
    st.reason = match (&dir, state) {
        (None, _) => "no model directory is configured".to_owned(),
        (Some(d), Some(Ok(ModelState::Absent))) => format!(
            "no model installed at {}{}",
            d.display(),
            if FULL_COMPILED {
                " (run `cairn model install` for the full tier)"
            } else {
                ""
            }
        ),
        (Some(d), Some(Ok(ModelState::Incomplete { missing }))) => format!(
            "the model at {} is incomplete (missing {}); run `cairn model install` again",
            d.display(),
            missing.join(", ")
        ),
        (Some(_), Some(Err(e))) => format!("the installed model is unusable: {e}"),
        (Some(_), _) => String::new(),
    };
    match (&st.installed, FULL_COMPILED, preference) {
        (Some(m), true, TierPreference::Auto) => {
            if let Some(e) = load_error(&m.dir, &m.id) {
                st.reason = format!("the model at {} failed to load: {e}", m.dir.display());
            } else {
                st.active = Tier::Full;
                st.model = m.id.clone();
                st.dims = m.dims;
                st.reason = format!("all-MiniLM-L6-v2 installed at {}", m.dir.display());
            }
        }
        (Some(m), true, TierPreference::Static) => {
            st.reason = format!(
                "the static tier was chosen (a model is installed at {})",
                m.dir.display()
            );
        }
        (Some(m), false, _) => {
            st.reason = format!(
                "this binary was built without the `full-embeddings` feature (a model is installed at {} but unused)",
                m.dir.display()
            );
        }
        (None, false, _) => {
            st.reason = format!(
                "this binary was built without the `full-embeddings` feature; {}",
                st.reason
            );
        }
        (None, true, _) => {}
    }
    st
}

/// The static tier's embedder.
pub fn static_embedder() -> Result<Arc<dyn TextEmbedder>, EmbedError> {
    static SHARED: std::sync::OnceLock<Arc<SharedStatic>> = std::sync::OnceLock::new();
    let e = crate::try_embedder().map_err(|e| EmbedError::Model(e.to_string()))?;
    Ok(SHARED.get_or_init(|| Arc::new(SharedStatic(e))).clone())
}

/// The process-wide static embedder, shared without copying its tables.
#[derive(Debug)]
struct SharedStatic(&'static StaticEmbedder);

impl TextEmbedder for SharedStatic {
    fn id(&self) -> &str {
        self.0.fingerprint()
    }
    fn dims(&self) -> usize {
        self.0.dims()
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.0.embed(text))
    }
}

/// The active tier's embedder (see [`status`]). The full transformer is loaded here, on
/// the first call of the process (about 0.1 s, memory-mapped), and shared afterwards; if
/// it fails to load, the failure is remembered, [`status`] reports it and the static tier
/// is returned.
pub fn active() -> Result<Arc<dyn TextEmbedder>, EmbedError> {
    let st = status();
    if let (Tier::Full, Some(m)) = (st.active, &st.installed) {
        let h = full_handle(m);
        if (model_loading_allowed() || h.is_loaded()) && h.loaded().is_ok() {
            return Ok(h);
        }
    }
    static_embedder()
}

/// The embedder whose [`TextEmbedder::id`] is `id`, when this process can produce it
/// (the static table, or the active full model, loaded here unless this process may not
/// load it: see [`set_model_loading`]).
pub fn by_id(id: &str) -> Option<Arc<dyn TextEmbedder>> {
    by_id_loading(id, model_loading_allowed())
}

/// [`by_id`] for a write, which needs the model of the stored vectors: the full model is
/// loaded even in a process that does not load it to search.
pub fn by_id_for_writing(id: &str) -> Option<Arc<dyn TextEmbedder>> {
    by_id_loading(id, true)
}

fn by_id_loading(id: &str, may_load: bool) -> Option<Arc<dyn TextEmbedder>> {
    if let Ok(s) = static_embedder()
        && s.id() == id
    {
        return Some(s);
    }
    let st = status();
    match (st.active, st.installed) {
        (Tier::Full, Some(m)) if m.id == id => {
            let h = full_handle(&m);
            ((may_load || h.is_loaded()) && h.loaded().is_ok())
                .then_some(h as Arc<dyn TextEmbedder>)
        }
        _ => None,
    }
}

#[cfg(feature = "full-embeddings")]
type Loaded = crate::full::FullEmbedder;
#[cfg(not(feature = "full-embeddings"))]
type Loaded = std::convert::Infallible;

/// A full-tier model that loads on first use.
struct FullHandle {
    dir: PathBuf,
    id: String,
    dims: usize,
    cell: std::sync::OnceLock<Result<Loaded, String>>,
}

impl std::fmt::Debug for FullHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FullHandle")
            .field("dir", &self.dir)
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

static FULL: Mutex<Option<Arc<FullHandle>>> = Mutex::new(None);

fn full_handle(m: &InstalledModel) -> Arc<FullHandle> {
    let mut g = FULL.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(h) = g.as_ref()
        && h.dir == m.dir
        && h.id == m.id
    {
        return h.clone();
    }
    let h = Arc::new(FullHandle {
        dir: m.dir.clone(),
        id: m.id.clone(),
        dims: m.dims,
        cell: std::sync::OnceLock::new(),
    });
    *g = Some(h.clone());
    h
}

/// The remembered load failure of the model at `dir` with `id`, if any.
fn load_error(dir: &Path, id: &str) -> Option<String> {
    let g = FULL.lock().unwrap_or_else(PoisonError::into_inner);
    let h = g.as_ref()?;
    if h.dir != dir || h.id != id {
        return None;
    }
    h.cell.get()?.as_ref().err().cloned()
}

impl FullHandle {
    /// Whether the model was loaded (successfully) by this process already.
    fn is_loaded(&self) -> bool {
        self.cell.get().is_some_and(Result::is_ok)
    }

    fn loaded(&self) -> Result<&Loaded, EmbedError> {
        self.cell
            .get_or_init(|| {
                #[cfg(feature = "full-embeddings")]
                {
                    crate::full::FullEmbedder::load(&self.dir).map_err(|e| e.to_string())
                }
                #[cfg(not(feature = "full-embeddings"))]
                {
                    Err("this binary was built without the `full-embeddings` feature".to_owned())
                }
            })
            .as_ref()
            .map_err(|e| EmbedError::Model(e.clone()))
    }
}

impl TextEmbedder for FullHandle {
    fn id(&self) -> &str {
        &self.id
    }
    fn dims(&self) -> usize {
        self.dims
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        #[cfg(feature = "full-embeddings")]
        {
            self.loaded()?.embed_one(text)
        }
        #[cfg(not(feature = "full-embeddings"))]
        {
            let _ = text;
            match *self.loaded()? {}
        }
    }
    fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        #[cfg(feature = "full-embeddings")]
        {
            self.loaded()?.embed_batch(texts)
        }
        #[cfg(not(feature = "full-embeddings"))]
        {
            let _ = texts;
            match *self.loaded()? {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The settings are process-global: one test drives every case in order.
    #[test]
    fn status_says_which_tier_and_why() {
        set_model_dir(None);
        let st = status();
        assert_eq!(st.active, Tier::Static);
        assert!(st.reason.contains("no model directory"), "{}", st.reason);
        assert_eq!(st.full_compiled, FULL_COMPILED);
        assert_eq!(
            active().map(|e| e.id().to_owned()).ok(),
            Some(crate::embedder().fingerprint().to_owned())
        );

        let Ok(t) = tempfile::tempdir() else {
            panic!("tempdir")
        };
        let dir = crate::model::model_dir(t.path());
        set_model_dir(Some(dir.clone()));
        let st = status();
        assert_eq!(st.active, Tier::Static);
        assert!(st.reason.contains("no model installed"), "{}", st.reason);

        std::fs::create_dir_all(&dir).ok();
        std::fs::write(dir.join("config.json"), br#"{"hidden_size": 32}"#).ok();
        let st = status();
        assert!(st.reason.contains("incomplete"), "{}", st.reason);

        #[cfg(feature = "full-embeddings")]
        {
            crate::full::tests::write_tiny_model(&dir);
            let st = status();
            assert_eq!(st.active, Tier::Full, "{}", st.reason);
            assert_eq!(st.dims, crate::full::tests::HIDDEN);
            let Ok(e) = active() else { panic!("active") };
            assert_eq!(e.id(), st.model);
            assert_eq!(e.embed("use pnpm").map(|v| v.len()).ok(), Some(st.dims));
            assert!(by_id(&st.model).is_some());
            assert!(by_id(crate::embedder().fingerprint()).is_some());
            assert!(by_id("something-else").is_none());

            set_preference(TierPreference::Static);
            assert_eq!(status().active, Tier::Static);
            assert!(status().reason.contains("chosen"));
            set_preference(TierPreference::Auto);

            // A model that fails to load falls back to the static tier, and says why.
            std::fs::write(dir.join("model.safetensors"), b"broken, but a new size").ok();
            let st = status();
            assert_eq!(st.active, Tier::Full);
            let broken = st.model.clone();
            let Ok(e) = active() else { panic!("active") };
            assert_eq!(e.id(), crate::embedder().fingerprint());
            assert!(by_id(&broken).is_none());
            let st = status();
            assert_eq!(st.active, Tier::Static);
            assert!(st.reason.contains("failed to load"), "{}", st.reason);
        }
        #[cfg(not(feature = "full-embeddings"))]
        {
            std::fs::write(dir.join("tokenizer.json"), b"{}").ok();
            std::fs::write(dir.join("model.safetensors"), b"w").ok();
            let st = status();
            assert_eq!(st.active, Tier::Static);
            assert!(st.installed.is_some());
            assert!(st.reason.contains("without the `full-embeddings`"));
        }
        set_model_dir(None);
    }
}
