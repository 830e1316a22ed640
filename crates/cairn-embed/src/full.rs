//! The full tier: the all-MiniLM-L6-v2 transformer run with candle (pure Rust, CPU) from a
//! local model directory (see [`crate::model`]). The recipe is sentence-transformers':
//! tokenize (padding to the longest text of a batch, truncation at 256 tokens), BERT
//! forward pass, mean of the token vectors under the attention mask, L2 normalisation.

use std::path::Path;

use candle_core::{DType, Device, Tensor};
use candle_nn::VarBuilder;
use candle_transformers::models::bert::{BertModel, Config, DTYPE};
use tokenizers::{PaddingParams, PaddingStrategy, Tokenizer, TruncationParams};

use crate::model::{ModelState, inspect};
use crate::{EmbedError, normalize};

/// sentence-transformers' `max_seq_length` for all-MiniLM-L6-v2.
pub const MAX_TOKENS: usize = 256;
/// Texts per forward pass.
const BATCH: usize = 32;

/// The transformer and its tokenizer, loaded from a model directory.
pub struct FullEmbedder {
    model: BertModel,
    tokenizer: Tokenizer,
    device: Device,
    dims: usize,
    id: String,
}

impl std::fmt::Debug for FullEmbedder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FullEmbedder")
            .field("id", &self.id)
            .field("dims", &self.dims)
            .finish_non_exhaustive()
    }
}

fn model_err(dir: &Path, e: impl std::fmt::Display) -> EmbedError {
    EmbedError::Model(format!("{}: {e}", dir.display()))
}

impl FullEmbedder {
    /// Loads `config.json`, `tokenizer.json` and the memory-mapped `model.safetensors` from
    /// `dir`.
    pub fn load(dir: &Path) -> Result<Self, EmbedError> {
        let installed = match inspect(dir).map_err(|e| model_err(dir, e))? {
            ModelState::Installed(m) => m,
            ModelState::Absent => return Err(model_err(dir, "no model directory")),
            ModelState::Incomplete { missing } => {
                return Err(model_err(dir, format!("missing {}", missing.join(", "))));
            }
        };
        let config_path = dir.join("config.json");
        let config: Config = std::fs::read(&config_path)
            .map_err(|e| model_err(&config_path, e))
            .and_then(|b| serde_json::from_slice(&b).map_err(|e| model_err(&config_path, e)))?;
        let tok_path = dir.join("tokenizer.json");
        let mut tokenizer = Tokenizer::from_file(&tok_path).map_err(|e| model_err(&tok_path, e))?;
        tokenizer.with_padding(Some(PaddingParams {
            strategy: PaddingStrategy::BatchLongest,
            ..PaddingParams::default()
        }));
        tokenizer
            .with_truncation(Some(TruncationParams {
                max_length: MAX_TOKENS.min(config.max_position_embeddings),
                ..TruncationParams::default()
            }))
            .map_err(|e| model_err(&tok_path, e))?;
        let device = Device::Cpu;
        let weights = dir.join("model.safetensors");
        // SAFETY: the file is memory-mapped read-only; cairn replaces a model dir only by
        // renaming a complete new one into place, never by writing into these files.
        let vb = unsafe { VarBuilder::from_mmaped_safetensors(&[&weights], DTYPE, &device) }
            .map_err(|e| model_err(&weights, e))?;
        let model = BertModel::load(vb, &config).map_err(|e| model_err(&weights, e))?;
        Ok(Self {
            model,
            tokenizer,
            device,
            dims: config.hidden_size,
            id: installed.id,
        })
    }

    /// Embedding dimensionality (`hidden_size`).
    pub fn dims(&self) -> usize {
        self.dims
    }

    /// Identifier of the loaded weights (see [`crate::model::InstalledModel::id`]).
    pub fn id(&self) -> &str {
        &self.id
    }

    /// L2-normalised embeddings of `texts`, in order. Texts are batched by length.
    pub fn embed_batch(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut order: Vec<usize> = (0..texts.len()).collect();
        order.sort_by_key(|&i| texts[i].len());
        let mut out = vec![Vec::new(); texts.len()];
        for chunk in order.chunks(BATCH) {
            let batch: Vec<&str> = chunk.iter().map(|&i| texts[i]).collect();
            for (i, v) in chunk.iter().zip(self.forward(&batch)?) {
                out[*i] = v;
            }
        }
        Ok(out)
    }

    /// L2-normalised embedding of one text.
    pub fn embed_one(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(self.forward(&[text])?.pop().unwrap_or_default())
    }

    fn forward(&self, texts: &[&str]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let err = |e: &dyn std::fmt::Display| EmbedError::Model(format!("{}: {e}", self.id));
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let enc = self
            .tokenizer
            .encode_batch(texts.to_vec(), true)
            .map_err(|e| err(&e))?;
        let len = enc.first().map_or(0, |e| e.get_ids().len());
        let mut ids = Vec::with_capacity(texts.len() * len);
        let mut mask = Vec::with_capacity(texts.len() * len);
        for e in &enc {
            if e.get_ids().len() != len {
                return Err(err(&"tokenizer returned a ragged batch"));
            }
            ids.extend_from_slice(e.get_ids());
            mask.extend_from_slice(e.get_attention_mask());
        }
        let run = || -> candle_core::Result<Vec<Vec<f32>>> {
            let ids = Tensor::from_vec(ids, (texts.len(), len), &self.device)?;
            let mask = Tensor::from_vec(mask, (texts.len(), len), &self.device)?;
            let types = ids.zeros_like()?;
            let hidden = self.model.forward(&ids, &types, Some(&mask))?;
            let m = mask.to_dtype(DType::F32)?.unsqueeze(2)?;
            let sum = hidden.broadcast_mul(&m)?.sum(1)?;
            let count = m.sum(1)?.clamp(1e-9f32, f32::MAX)?;
            sum.broadcast_div(&count)?.to_vec2::<f32>()
        };
        let mut rows = run().map_err(|e| err(&e))?;
        for r in &mut rows {
            normalize(r);
        }
        Ok(rows)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use std::collections::HashMap;
    use std::path::Path;

    use candle_core::{Device, Tensor};

    use super::*;

    /// Tiny vocabulary: specials, a few words, their pieces.
    const VOCAB: &[&str] = &[
        "[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "use", "pnpm", "not", "npm", "which",
        "package", "manager", "should", "i", "the", "deploy", "failed", ",", ".", "##s", "this",
        "is", "an", "example", "sentence",
    ];
    pub(crate) const HIDDEN: usize = 32;

    /// Writes a random 2-layer BERT (hidden 32) and a WordPiece tokenizer into `dir`, laid out
    /// like the real model directory.
    pub(crate) fn write_tiny_model(dir: &Path) {
        std::fs::create_dir_all(dir).ok();
        let config = serde_json::json!({
            "architectures": ["BertModel"], "model_type": "bert",
            "vocab_size": VOCAB.len(), "hidden_size": HIDDEN, "num_hidden_layers": 2,
            "num_attention_heads": 4, "intermediate_size": 64, "hidden_act": "gelu",
            "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
            "max_position_embeddings": 64, "type_vocab_size": 2, "initializer_range": 0.02,
            "layer_norm_eps": 1e-12, "pad_token_id": 0, "position_embedding_type": "absolute",
            "use_cache": true, "classifier_dropout": null
        });
        std::fs::write(dir.join("config.json"), config.to_string()).ok();

        let vocab: serde_json::Map<String, serde_json::Value> = VOCAB
            .iter()
            .enumerate()
            .map(|(i, t)| ((*t).to_owned(), serde_json::json!(i)))
            .collect();
        let special = |t: &str, id: usize| {
            serde_json::json!({"id": id, "content": t, "single_word": false, "lstrip": false,
                "rstrip": false, "normalized": false, "special": true})
        };
        let tokenizer = serde_json::json!({
            "version": "1.0", "truncation": null,
            // The shipped tokenizer pads to a fixed length: the loader must override it.
            "padding": {"strategy": {"Fixed": 48}, "direction": "Right", "pad_to_multiple_of": null,
                "pad_id": 0, "pad_type_id": 0, "pad_token": "[PAD]"},
            "added_tokens": [special("[PAD]", 0), special("[UNK]", 1), special("[CLS]", 2),
                special("[SEP]", 3), special("[MASK]", 4)],
            "normalizer": {"type": "BertNormalizer", "clean_text": true,
                "handle_chinese_chars": true, "strip_accents": null, "lowercase": true},
            "pre_tokenizer": {"type": "BertPreTokenizer"},
            "post_processor": {"type": "TemplateProcessing",
                "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                           {"Sequence": {"id": "A", "type_id": 0}},
                           {"SpecialToken": {"id": "[SEP]", "type_id": 0}}],
                "pair": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}},
                         {"Sequence": {"id": "A", "type_id": 0}},
                         {"SpecialToken": {"id": "[SEP]", "type_id": 0}},
                         {"Sequence": {"id": "B", "type_id": 1}},
                         {"SpecialToken": {"id": "[SEP]", "type_id": 1}}],
                "special_tokens": {
                    "[CLS]": {"id": "[CLS]", "ids": [2], "tokens": ["[CLS]"]},
                    "[SEP]": {"id": "[SEP]", "ids": [3], "tokens": ["[SEP]"]}}},
            "decoder": {"type": "WordPiece", "prefix": "##", "cleanup": true},
            "model": {"type": "WordPiece", "unk_token": "[UNK]",
                "continuing_subword_prefix": "##", "max_input_chars_per_word": 100,
                "vocab": vocab}
        });
        std::fs::write(dir.join("tokenizer.json"), tokenizer.to_string()).ok();

        // Deterministic pseudo-random weights.
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut rnd = |n: usize| -> Vec<f32> {
            (0..n)
                .map(|_| {
                    seed = seed
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    ((seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5) * 0.2
                })
                .collect()
        };
        let mut t: HashMap<String, Tensor> = HashMap::new();
        let mut put = |name: String, shape: &[usize], values: Vec<f32>| {
            if let Ok(x) = Tensor::from_vec(values, shape, &Device::Cpu) {
                t.insert(name, x);
            }
        };
        let h = HIDDEN;
        let ones = |n: usize| vec![1.0f32; n];
        put(
            "embeddings.word_embeddings.weight".into(),
            &[VOCAB.len(), h],
            rnd(VOCAB.len() * h),
        );
        put(
            "embeddings.position_embeddings.weight".into(),
            &[64, h],
            rnd(64 * h),
        );
        put(
            "embeddings.token_type_embeddings.weight".into(),
            &[2, h],
            rnd(2 * h),
        );
        put("embeddings.LayerNorm.weight".into(), &[h], ones(h));
        put("embeddings.LayerNorm.bias".into(), &[h], rnd(h));
        for l in 0..2 {
            let p = format!("encoder.layer.{l}");
            for m in ["query", "key", "value"] {
                put(
                    format!("{p}.attention.self.{m}.weight"),
                    &[h, h],
                    rnd(h * h),
                );
                put(format!("{p}.attention.self.{m}.bias"), &[h], rnd(h));
            }
            put(
                format!("{p}.attention.output.dense.weight"),
                &[h, h],
                rnd(h * h),
            );
            put(format!("{p}.attention.output.dense.bias"), &[h], rnd(h));
            put(
                format!("{p}.attention.output.LayerNorm.weight"),
                &[h],
                ones(h),
            );
            put(format!("{p}.attention.output.LayerNorm.bias"), &[h], rnd(h));
            put(
                format!("{p}.intermediate.dense.weight"),
                &[64, h],
                rnd(64 * h),
            );
            put(format!("{p}.intermediate.dense.bias"), &[64], rnd(64));
            put(format!("{p}.output.dense.weight"), &[h, 64], rnd(64 * h));
            put(format!("{p}.output.dense.bias"), &[h], rnd(h));
            put(format!("{p}.output.LayerNorm.weight"), &[h], ones(h));
            put(format!("{p}.output.LayerNorm.bias"), &[h], rnd(h));
        }
        let saved = candle_core::safetensors::save(&t, dir.join("model.safetensors"));
        assert!(saved.is_ok(), "{saved:?}");
    }

    fn tiny() -> (tempfile::TempDir, FullEmbedder) {
        let Ok(t) = tempfile::tempdir() else {
            panic!("tempdir")
        };
        write_tiny_model(t.path());
        match FullEmbedder::load(t.path()) {
            Ok(e) => (t, e),
            Err(e) => panic!("tiny model does not load: {e}"),
        }
    }

    #[test]
    fn loads_and_embeds_a_tiny_bert() {
        let (_t, e) = tiny();
        assert_eq!(e.dims(), HIDDEN);
        assert!(e.id().starts_with("all-minilm-l6-v2-32d-"));
        let v = e.embed_one("use pnpm, not npm").unwrap_or_default();
        assert_eq!(v.len(), HIDDEN);
        assert!((crate::dot(&v, &v) - 1.0).abs() < 1e-5);
        assert!(v.iter().all(|x| x.is_finite()));
        // Deterministic, and different texts differ.
        assert_eq!(Some(v.clone()), e.embed_one("use pnpm, not npm").ok());
        let w = e.embed_one("the deploy failed").unwrap_or_default();
        assert!(crate::dot(&v, &w) < 0.9999);
    }

    #[test]
    fn batching_and_padding_do_not_change_vectors() {
        let (_t, e) = tiny();
        let texts = [
            "use pnpm, not npm",
            "which package manager should i use",
            "i",
            "",
            "the deploy failed. the deploy failed. the deploy failed.",
        ];
        let batch = e.embed_batch(&texts).unwrap_or_default();
        assert_eq!(batch.len(), texts.len());
        for (text, b) in texts.iter().zip(&batch) {
            let one = e.embed_one(text).unwrap_or_default();
            let diff = one
                .iter()
                .zip(b)
                .map(|(x, y)| (x - y).abs())
                .fold(0.0f32, f32::max);
            assert!(diff < 1e-4, "{text:?}: {diff}");
        }
        // Long texts are truncated, not rejected.
        let long = "use pnpm not npm ".repeat(200);
        assert_eq!(e.embed_one(&long).map(|v| v.len()).ok(), Some(HIDDEN));
    }

    #[test]
    fn a_broken_model_dir_is_an_error() {
        let Ok(t) = tempfile::tempdir() else {
            panic!("tempdir")
        };
        assert!(FullEmbedder::load(t.path()).is_err());
        write_tiny_model(t.path());
        std::fs::write(t.path().join("model.safetensors"), b"truncated").ok();
        let e = FullEmbedder::load(t.path());
        assert!(matches!(e, Err(EmbedError::Model(_))), "{e:?}");
    }
}
