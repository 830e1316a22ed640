//! Stored vectors and embedding tiers: one model per vector set, re-embedding only on
//! request (the sync path), and a search that follows another process's switch.

use std::sync::Arc;

use cairn_embed::{EmbedError, TextEmbedder};
use rusqlite::Connection;

use crate::{Document, Recall, RecallConfig};

/// A stand-in for the full tier: a different id and dimensionality.
#[derive(Debug)]
struct Letters;

impl TextEmbedder for Letters {
    fn id(&self) -> &str {
        "letters-3d"
    }
    fn dims(&self) -> usize {
        3
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let count = |c: char| text.chars().filter(|&x| x == c).count() as f32;
        let mut v = vec![count('a') + 0.1, count('e'), count('o')];
        cairn_embed::normalize(&mut v);
        Ok(v)
    }
}

fn docs() -> Vec<Document> {
    [
        ("pm", "Package manager", "use pnpm, not npm"),
        (
            "db",
            "Database",
            "the staging database password rotates monthly",
        ),
        (
            "tabs",
            "Style",
            "the user prefers tabs over spaces in Go files",
        ),
    ]
    .into_iter()
    .map(|(id, name, body)| Document {
        id: id.into(),
        scope: "p".into(),
        name: name.into(),
        body: body.into(),
        ..Document::default()
    })
    .collect()
}

fn blob_lens(conn: &Connection) -> Vec<usize> {
    let mut st = conn
        .prepare("SELECT length(embedding) FROM recall_docs ORDER BY id")
        .unwrap_or_else(|e| panic!("{e}"));
    st.query_map([], |r| r.get::<_, i64>(0))
        .unwrap_or_else(|e| panic!("{e}"))
        .filter_map(Result::ok)
        .map(|n| n as usize)
        .collect()
}

fn open(conn: &Connection, preferred: Arc<dyn TextEmbedder>) -> Recall {
    Recall::with_embedder(conn, RecallConfig::default(), preferred)
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_tier_change_waits_for_the_sync_path_and_never_mixes_models() {
    let Ok(stat) = cairn_embed::tier::static_embedder() else {
        panic!("static table")
    };
    let static_dims = stat.dims() * 4;
    let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(Recall::stored_model(&conn).ok(), Some(None));
    let mut r = open(&conn, stat.clone());
    assert!(r.upsert_many(&conn, &docs()).is_ok());
    assert_eq!(
        Recall::stored_model(&conn).ok().flatten().as_deref(),
        Some(stat.id())
    );

    // The active tier changes: searches and writes keep the stored model.
    let mut r = open(&conn, Arc::new(Letters));
    assert_eq!(r.embedder_id(), stat.id());
    assert_eq!(r.pending_model(), Some("letters-3d"));
    let hits = r.search(&conn, "which package manager should I use", &["p"], 3, 0);
    assert_eq!(hits.ok().map(|h| h[0].id.clone()).as_deref(), Some("pm"));
    let mut more = docs();
    more[0].id = "pm2".into();
    assert!(r.upsert(&conn, &more[0]).is_ok());
    assert_eq!(blob_lens(&conn), vec![static_dims; 4]);

    // The sync path moves the whole set at once.
    let mut calls = Vec::new();
    let done = r.reembed_pending(&conn, &mut |d, t| calls.push((d, t)));
    let done = done.unwrap_or_else(|e| panic!("{e}"));
    let Some(done) = done else {
        panic!("nothing re-embedded")
    };
    assert_eq!(done.documents, 4);
    assert_eq!(done.from, stat.id());
    assert_eq!(done.to, "letters-3d");
    assert_eq!(calls.last(), Some(&(4, 4)));
    assert_eq!(r.embedder_id(), "letters-3d");
    assert_eq!(r.pending_model(), None);
    assert_eq!(blob_lens(&conn), vec![12; 4]);
    assert_eq!(
        Recall::stored_model(&conn).ok().flatten().as_deref(),
        Some("letters-3d")
    );
    assert!(r.search(&conn, "database", &["p"], 3, 0).is_ok());
    assert!(matches!(r.reembed_pending(&conn, &mut |_, _| {}), Ok(None)));

    // Another process whose tier cannot produce those vectors recomputes them with the
    // static tier; a search of the first one then follows the switch.
    let mut other = open(&conn, stat.clone());
    assert_eq!(other.embedder_id(), stat.id());
    assert_eq!(blob_lens(&conn), vec![static_dims; 4]);
    assert!(other.upsert(&conn, &more[1]).is_ok());
    let hits = r.search(&conn, "which package manager should I use", &["p"], 3, 0);
    assert!(hits.is_ok());
    assert_eq!(r.embedder_id(), stat.id());
    assert_eq!(r.pending_model(), Some("letters-3d"));
}

/// Points every text containing "north" one way and every other text the opposite way.
#[derive(Debug)]
struct Compass;

impl TextEmbedder for Compass {
    fn id(&self) -> &str {
        "compass-2d"
    }
    fn dims(&self) -> usize {
        2
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        Ok(if text.contains("north") {
            vec![1.0, 0.0]
        } else {
            vec![-1.0, 0.0]
        })
    }
}

#[test]
fn a_document_with_no_shared_word_and_an_opposite_embedding_is_no_result() {
    let conn = Connection::open_in_memory().unwrap_or_else(|e| panic!("{e}"));
    let mut r = open(&conn, Arc::new(Compass));
    let doc = |id: &str, body: &str| Document {
        id: id.into(),
        scope: "p".into(),
        body: body.into(),
        ..Document::default()
    };
    r.upsert_many(
        &conn,
        &[
            doc("wall", "the north wall"),
            doc("lights", "northern lights"),
            doc("gate", "the south gate"),
        ],
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let hits = r
        .search(&conn, "north", &["p"], 5, 0)
        .unwrap_or_else(|e| panic!("{e}"));
    let ids: Vec<&str> = hits.iter().map(|h| h.id.as_str()).collect();
    // "wall" shares the word, "lights" only the direction; "gate" neither.
    assert_eq!(ids, ["wall", "lights"]);
}
