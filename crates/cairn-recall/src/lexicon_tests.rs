//! The lexicon file ranks exactly as FTS5 does, follows other writers' changes on top of
//! it, and gives way to FTS5 whenever it cannot answer exactly.

use rusqlite::Connection;

use crate::Recall;
use crate::RecallConfig;
use crate::resident_tests::{
    Rng, assert_same, assert_same_fused, lexical, queries_with_cjk_pairs, random_docs,
    random_queries,
};

/// Lexical ranking from the lexicon file when there is one.
fn from_file() -> RecallConfig {
    RecallConfig {
        lexicon_file: true,
        ..lexical(false)
    }
}

const ALL: &[&str] = &["global", "proj-a", "proj-b"];

/// A database file with `n` random documents and its lexicon written.
fn store(n: usize, seed: u64) -> (tempfile::TempDir, Connection, Recall, Rng) {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("recall.db")).unwrap();
    let mut rng = Rng(seed);
    let mut writer = Recall::open(&conn).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, n, "d"))
        .unwrap();
    writer.prepare_snapshots(&conn).unwrap();
    (dir, conn, writer, rng)
}

fn lexicon_path(dir: &tempfile::TempDir) -> std::path::PathBuf {
    dir.path().join("recall.db-lexicon")
}

#[test]
fn the_lexicon_file_scores_exactly_as_fts5() {
    let (dir, conn, _writer, mut rng) = store(1_500, 0x1e8);
    assert!(lexicon_path(&dir).is_file());
    let queries = random_queries(&mut rng, 120);
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    let mut compared = 0;
    for scopes in [&["global", "proj-a"][..], ALL, &["proj-b"], &["nowhere"]] {
        compared += assert_same(&conn, &mut reader, &queries, scopes);
    }
    assert!(compared > 5_000, "{compared} hits compared");
    let (file_generation, changes) = reader.lexicon_view().map(|v| v.shape()).unwrap();
    assert!(file_generation.is_some());
    assert_eq!(changes, 0);
}

#[test]
fn a_search_reads_other_writers_changes_on_top_of_the_file() {
    let (dir, conn, _, mut rng) = store(600, 0x2e8);
    let other = Connection::open(dir.path().join("recall.db")).unwrap();
    let mut writer = Recall::open(&other).unwrap();
    let queries = random_queries(&mut rng, 40);
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);

    // Added, reworded (in place and into another scope), removed: fewer than the overlay
    // limit, so the file answers with the changes on top.
    writer
        .upsert_many(&other, &random_docs(&mut rng, 30, "n"))
        .unwrap();
    writer
        .upsert_many(&other, &random_docs(&mut rng, 40, "d"))
        .unwrap();
    for i in 100..130 {
        assert!(writer.remove(&other, &format!("d{i}")).unwrap());
    }
    assert_same(&conn, &mut reader, &queries, &["global", "proj-a"]);
    assert_same(&conn, &mut reader, &queries, &["proj-b"]);
    let (file, changes) = reader.lexicon_view().map(|v| v.shape()).unwrap();
    assert!(file.is_some());
    assert!(changes >= 100, "{changes} changes read on top");
    let hits = reader.search(&conn, "deploy", ALL, 1_000, 0).unwrap();
    assert!(
        hits.iter()
            .all(|h| !(100..130).any(|i| h.id == format!("d{i}")))
    );

    // The background path rewrites the file with the changes folded in.
    writer.prepare_snapshots(&other).unwrap();
    let mut fresh = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut fresh, &queries, ALL);
    assert_eq!(fresh.lexicon_view().map(|v| v.shape().1), Some(0));
}

#[test]
fn too_many_changes_go_to_fts5_until_the_file_is_rewritten() {
    let (_dir, conn, mut writer, mut rng) = store(400, 0x3e8);
    let queries = random_queries(&mut rng, 30);
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 300, "m"))
        .unwrap();
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert!(
        reader.lexicon_view().is_none(),
        "300 changes are read from FTS5"
    );
    writer.prepare_snapshots(&conn).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert_eq!(reader.lexicon_view().map(|v| v.shape().1), Some(0));
}

#[test]
fn a_few_changes_leave_the_file_as_it_is() {
    let (dir, conn, mut writer, mut rng) = store(200, 0x4e8);
    let before = std::fs::read(lexicon_path(&dir)).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 5, "x"))
        .unwrap();
    writer.prepare_snapshots(&conn).unwrap();
    assert_eq!(std::fs::read(lexicon_path(&dir)).unwrap(), before);
    let queries = random_queries(&mut rng, 20);
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert_eq!(reader.lexicon_view().map(|v| v.shape().1), Some(5));
}

/// A removed document (a forgotten memory) leaves the file at the next background write,
/// not 32 changes later: its words are not kept on disk.
#[test]
fn a_removed_document_leaves_the_file_at_the_next_write() {
    let (dir, conn, mut writer, mut rng) = store(50, 0x5ec);
    let mut secret = random_docs(&mut rng, 1, "s").remove(0);
    secret.body = "the vault unseal phrase is zorblaxquintessence".into();
    // With more changes than the file takes on top: it is rewritten with them.
    let mut docs = random_docs(&mut rng, 40, "m");
    docs.push(secret);
    writer.upsert_many(&conn, &docs).unwrap();
    writer.prepare_snapshots(&conn).unwrap();
    let file = || std::fs::read(lexicon_path(&dir)).unwrap();
    let has = |bytes: &[u8]| bytes.windows(8).any(|w| w == b"zorblaxq");
    // One new document: below the rewrite threshold, read on top of the file.
    let before = file();
    assert!(has(&before), "the file holds the document's words");
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 1, "n"))
        .unwrap();
    writer.prepare_snapshots(&conn).unwrap();
    assert_eq!(file(), before, "an addition alone leaves the file as it is");
    assert!(writer.remove(&conn, "s0").unwrap());
    writer.prepare_snapshots(&conn).unwrap();
    assert!(!has(&file()), "the removed document's words left the file");
    let queries = random_queries(&mut rng, 20);
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
}

#[test]
fn a_damaged_or_foreign_file_is_ignored_and_rewritten() {
    let (dir, conn, mut writer, mut rng) = store(300, 0x5e8);
    let path = lexicon_path(&dir);
    let good = std::fs::read(&path).unwrap();
    let queries = random_queries(&mut rng, 20);
    let mut damaged: Vec<Vec<u8>> = vec![
        Vec::new(),
        good[..good.len() / 2].to_vec(),
        good[..good.len() - 1].to_vec(),
        b"not a lexicon at all".to_vec(),
    ];
    // Flipped bytes anywhere: some are rejected, others only change what the file says,
    // but nothing panics and every search still answers.
    for at in [
        9,
        20,
        60,
        100,
        good.len() / 3,
        good.len() / 2,
        good.len() - 5,
    ] {
        let mut b = good.clone();
        b[at] ^= 0x5a;
        damaged.push(b);
    }
    damaged.extend(rng.scribbled(&good, 40));
    for (k, bytes) in damaged.iter().enumerate() {
        std::fs::write(&path, bytes).unwrap();
        let mut reader = Recall::with_config(&conn, from_file()).unwrap();
        for q in &queries[..if k < 4 { queries.len() } else { 5 }] {
            reader.search(&conn, q, ALL, 10, 0).unwrap();
        }
        if k < 4 {
            assert!(reader.lexicon_view().is_none(), "damaged file {k} was used");
            assert_same(&conn, &mut reader, &queries, ALL);
        }
    }
    // A flipped byte the header cannot tell (a posting's hits) is caught by the checksum
    // when the file is next rewritten: it is rebuilt from FTS5, not carried forward.
    let mut flipped = good.clone();
    for at in (good.len() * 3 / 4..good.len()).step_by(101) {
        flipped[at] ^= 0x04;
    }
    std::fs::write(&path, &flipped).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 40, "late"))
        .unwrap();
    writer.prepare_snapshots(&conn).unwrap();
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert_eq!(reader.lexicon_view().map(|v| v.shape().1), Some(0));
    let good = std::fs::read(&path).unwrap();

    // Another index's file (a database recreated at the same path) is never read.
    std::fs::write(&path, &good).unwrap();
    conn.execute(
        "UPDATE recall_meta SET value = 'another' WHERE key = 'index_id'",
        [],
    )
    .unwrap();
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert!(reader.lexicon_view().is_none());
    writer.prepare_snapshots(&conn).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert!(reader.lexicon_view().is_some());
}

#[test]
fn hybrid_search_from_the_file_matches_fts5_and_cjk_pairs_go_to_fts5() {
    let (_dir, conn, _, mut rng) = store(500, 0x6e8);
    let mut file = Recall::open(&conn).unwrap();
    let mut fts = Recall::with_config(
        &conn,
        RecallConfig {
            lexicon_file: false,
            ..RecallConfig::default()
        },
    )
    .unwrap();
    let queries = queries_with_cjk_pairs(&mut rng, 40);
    assert_same_fused(&conn, &mut file, &mut fts, &queries);
    assert!(file.lexicon_view().is_some(), "the file was not read");
}

#[test]
fn search_files_report_where_the_files_stand() {
    use crate::{FileState, search_files};
    let memory = Connection::open_in_memory().unwrap();
    assert_eq!(search_files(&memory).unwrap().lexicon, FileState::NotUsed);
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("recall.db")).unwrap();
    assert_eq!(search_files(&conn).unwrap().vectors, FileState::NotUsed);
    let mut rng = Rng(0x7e8);
    let mut writer = Recall::open(&conn).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 100, "d"))
        .unwrap();
    let files = search_files(&conn).unwrap();
    assert_eq!(
        (files.vectors, files.lexicon),
        (FileState::Missing, FileState::Missing)
    );
    writer.prepare_snapshots(&conn).unwrap();
    let files = search_files(&conn).unwrap();
    assert_eq!(
        (files.vectors, files.lexicon),
        (FileState::Current, FileState::Current)
    );
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 5, "x"))
        .unwrap();
    let files = search_files(&conn).unwrap();
    assert_eq!(files.vectors, FileState::Stale);
    assert_eq!(files.lexicon, FileState::Behind { changes: 5 });
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 300, "y"))
        .unwrap();
    assert_eq!(search_files(&conn).unwrap().lexicon, FileState::Stale);
    std::fs::write(lexicon_path(&dir), b"damaged").unwrap();
    assert_eq!(search_files(&conn).unwrap().lexicon, FileState::Stale);
}

#[test]
fn searches_keep_answering_while_another_connection_rewrites_the_file() {
    let (dir, conn, _, mut rng) = store(400, 0x8e8);
    let path = dir.path().join("recall.db");
    let queries = random_queries(&mut rng, 20);
    let writer = std::thread::spawn(move || {
        let conn = Connection::open(&path).unwrap();
        conn.busy_timeout(std::time::Duration::from_secs(10))
            .unwrap();
        let mut w = Recall::open(&conn).unwrap();
        let mut rng = Rng(0x9e8);
        for round in 0..8 {
            // More than the rewrite threshold each round: every round writes a new file.
            w.upsert_many(&conn, &random_docs(&mut rng, 40, &format!("r{round}-")))
                .unwrap();
            w.prepare_snapshots(&conn).unwrap();
        }
    });
    conn.busy_timeout(std::time::Duration::from_secs(10))
        .unwrap();
    let mut read_file = 0;
    loop {
        let done = writer.is_finished();
        let mut reader = Recall::with_config(&conn, from_file()).unwrap();
        for q in &queries {
            reader.search(&conn, q, ALL, 10, 0).unwrap();
        }
        read_file += usize::from(reader.lexicon_view().is_some());
        if done {
            break;
        }
    }
    writer.join().unwrap();
    // Once the writer is done, the file and FTS5 agree again.
    let mut reader = Recall::with_config(&conn, from_file()).unwrap();
    assert_same(&conn, &mut reader, &queries, ALL);
    assert!(reader.lexicon_view().is_some());
    assert!(read_file > 0, "no search read the file");
}
