//! A process that may not load the stored vectors' model (hooks and `cairn recall` with a
//! full-tier store) searches a static copy of the vectors and changes nothing stored; its
//! first write leaves the copy. Its own test binary: the "may not load" switch is
//! process-wide.

use std::sync::Arc;

use cairn_embed::{EmbedError, TextEmbedder};
use cairn_recall::{Document, Recall, RecallConfig};
use rusqlite::Connection;

/// Stands for the full tier: a model no process here can load again (its id is unknown to
/// `cairn_embed::tier`). Its vectors are the static table's in reverse order, so that a
/// search mixing them with static query vectors would rank nonsense.
#[derive(Debug)]
struct Unloadable(Arc<dyn TextEmbedder>);

impl TextEmbedder for Unloadable {
    fn id(&self) -> &str {
        "test-full-model-384d"
    }
    fn dims(&self) -> usize {
        self.0.dims()
    }
    fn embed(&self, text: &str) -> Result<Vec<f32>, EmbedError> {
        let mut v = self.0.embed(text)?;
        v.reverse();
        Ok(v)
    }
}

fn doc(id: &str, body: &str) -> Document {
    Document {
        id: id.into(),
        scope: "p".into(),
        name: body.into(),
        body: body.into(),
        created_at: 1_700_000_000,
        updated_at: 1_700_000_000,
        ..Document::default()
    }
}

fn stored(conn: &Connection) -> (String, Vec<Vec<u8>>) {
    let model = conn
        .query_row(
            "SELECT value FROM recall_meta WHERE key = 'embed_model'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    let mut st = conn
        .prepare("SELECT embedding FROM recall_docs ORDER BY rowid")
        .unwrap();
    let blobs = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    (model, blobs)
}

#[test]
fn searches_a_static_copy_without_touching_the_stored_vectors() {
    let statik = cairn_embed::tier::static_embedder().unwrap();
    let conn = Connection::open_in_memory().unwrap();
    let mut writer = Recall::with_embedder(
        &conn,
        RecallConfig::default(),
        Arc::new(Unloadable(statik.clone())),
    )
    .unwrap();
    writer
        .upsert_many(
            &conn,
            &[
                doc("pm", "use pnpm, not npm"),
                doc("db", "the staging database password rotates monthly"),
                doc("fmt", "run cargo fmt before every commit"),
            ],
        )
        .unwrap();
    // The background path prepares both snapshots: the stored vectors' and the static copy.
    writer.prepare_snapshots(&conn).unwrap();
    let mut st = conn
        .prepare("SELECT model FROM recall_snapshots ORDER BY model")
        .unwrap();
    let models: Vec<String> = st
        .query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(
        models,
        [
            format!("cairn-embed/{}/kw0.2", statik.id()),
            "cairn-embed/test-full-model-384d/kw0.2".to_owned()
        ]
    );
    drop(st);
    drop(writer);
    let before = stored(&conn);
    assert_eq!(before.0, "cairn-embed/test-full-model-384d/kw0.2");

    cairn_embed::tier::set_model_loading(false);
    let mut reader = Recall::open(&conn).unwrap();
    assert!(reader.searching_static_copy());
    assert_eq!(reader.embedder_id(), statik.id());
    // A paraphrase only the embeddings can match.
    let hits = reader
        .search(&conn, "which package manager", &["p"], 3, 1_700_000_000)
        .unwrap();
    assert_eq!(hits[0].id, "pm", "{hits:?}");
    assert!(
        hits[0].bm25.is_none() && hits[0].cosine.is_some(),
        "{hits:?}"
    );
    reader.record_recall(&conn, &["pm"]).unwrap();
    assert_eq!(stored(&conn), before, "a search changes no stored vector");
    // The copy is kept as a snapshot of its own, which the next process reads.
    let snapshots: i64 = conn
        .query_row(
            "SELECT count(*) FROM recall_snapshots WHERE model = ?1",
            [format!("cairn-embed/{}/kw0.2", statik.id())],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(snapshots, 1);
    let mut next = Recall::open(&conn).unwrap();
    let again = next
        .search(&conn, "which package manager", &["p"], 3, 1_700_000_000)
        .unwrap();
    assert_eq!(again[0].id, "pm");

    // A write needs the stored model; this one cannot be loaded at all, so (as when any
    // process opens such an index) the vectors move to the static tier, in one step.
    next.upsert(&conn, &doc("deploy", "deploys go out on Tuesdays"))
        .unwrap();
    assert!(!next.searching_static_copy());
    let after = stored(&conn);
    assert_eq!(after.0, format!("cairn-embed/{}/kw0.2", statik.id()));
    assert_eq!(after.1.len(), 4);
    let hits = next
        .search(&conn, "which package manager", &["p"], 3, 1_700_000_000)
        .unwrap();
    assert_eq!(hits[0].id, "pm");
}
