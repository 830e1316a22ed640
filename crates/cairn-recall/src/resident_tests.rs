//! The resident lexical index ranks exactly as FTS5 does, and follows every writer.

use rusqlite::Connection;

use crate::{Document, Hit, Mode, Recall, RecallConfig};

/// The crate's test-data generator (xorshift64*), shared with other test modules.
pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// `copies` copies of `good`, each with three bytes overwritten at random places.
    pub(crate) fn scribbled(&mut self, good: &[u8], copies: usize) -> Vec<Vec<u8>> {
        (0..copies)
            .map(|_| {
                let mut b = good.to_vec();
                for _ in 0..3 {
                    let at = (self.next() % b.len() as u64) as usize;
                    b[at] = self.next() as u8;
                }
                b
            })
            .collect()
    }

    fn pick<'a>(&mut self, words: &[&'a str]) -> &'a str {
        // Skewed towards the first words, so that common words match most documents.
        let a = (self.next() % words.len() as u64) as usize;
        let b = (self.next() % words.len() as u64) as usize;
        words[a.min(b)]
    }
    fn text(&mut self, words: &[&str], lo: usize, hi: usize) -> String {
        let n = lo + (self.next() % (hi - lo + 1) as u64) as usize;
        (0..n)
            .map(|_| self.pick(words))
            .collect::<Vec<_>>()
            .join(" ")
    }
}

/// Words with what the tokenizer folds or splits: case, diacritics, stems, punctuation,
/// digits, apostrophes, CJK.
const WORDS: &[&str] = &[
    "the",
    "deploy",
    "deploys",
    "deployed",
    "deploying",
    "Service",
    "services",
    "run",
    "running",
    "runs",
    "café",
    "Cafe",
    "naïve",
    "naive",
    "node.js",
    "package.json",
    "pnpm",
    "npm",
    "v2",
    "2024-05-01",
    "don't",
    "user's",
    "staging",
    "database",
    "Datenbank",
    "über",
    "retry",
    "retries",
    "flaky",
    "tests",
    "testing",
    "cache",
    "caching",
    "包管理",
    "部署",
    "キャッシュ",
    "e-mail",
    "foo_bar",
    "x",
    "CI",
    "ci",
    "rust",
    "Rust's",
];

const QUERY_WORDS: &[&str] = &[
    "deploy",
    "deployment",
    "services",
    "running",
    "cafe",
    "naïve",
    "node.js",
    "package",
    "json",
    "pnpm",
    "npm",
    "v2",
    "2024",
    "don't",
    "staging",
    "database",
    "uber",
    "retrying",
    "flaky",
    "test",
    "cache",
    "e-mail",
    "foo_bar",
    "ci",
    "rust",
    "unknownword",
    "包",
    "部",
    "the",
    "x",
];

pub(crate) fn random_docs(rng: &mut Rng, n: usize, prefix: &str) -> Vec<Document> {
    (0..n)
        .map(|i| Document {
            id: format!("{prefix}{i}"),
            scope: ["global", "proj-a", "proj-b"][(rng.next() % 3) as usize].into(),
            name: rng.text(WORDS, 1, 4),
            description: rng.text(WORDS, 0, 8),
            body: rng.text(WORDS, 3, 40),
            keywords: (0..rng.next() % 3)
                .map(|_| rng.pick(WORDS).to_owned())
                .collect(),
            created_at: 1_700_000_000,
            updated_at: 1_700_000_000,
            recall_count: 0,
        })
        .collect()
}

/// Lexical ranking only, from the resident index or from FTS5 itself (never the lexicon
/// file).
pub(crate) fn lexical(resident: bool) -> RecallConfig {
    RecallConfig {
        mode: Mode::Lexical,
        resident_lexical: resident,
        lexicon_file: false,
        ..RecallConfig::default()
    }
}

fn ranked(hits: &[Hit]) -> Vec<(String, f64)> {
    hits.iter()
        .map(|h| (h.id.clone(), h.bm25.unwrap_or(f64::NAN)))
        .collect()
}

/// Asserts that `resident` (any configuration) and FTS5 give the same ranking and scores
/// for `queries`.
pub(crate) fn assert_same(
    conn: &Connection,
    resident: &mut Recall,
    queries: &[String],
    scopes: &[&str],
) -> usize {
    let mut fts = Recall::with_config(conn, lexical(false)).unwrap();
    let mut compared = 0;
    for q in queries {
        let a = ranked(&resident.search(conn, q, scopes, 30, 0).unwrap());
        let b = ranked(&fts.search(conn, q, scopes, 30, 0).unwrap());
        assert_eq!(a.len(), b.len(), "{q}");
        for (x, y) in a.iter().zip(&b) {
            // Same scores to the last bit; documents of equal score may come in either order.
            assert_eq!(x.1.to_bits(), y.1.to_bits(), "{q}: {a:?} vs {b:?}");
        }
        let mut ids_a: Vec<_> = a.iter().map(|x| (x.1.to_bits(), &x.0)).collect();
        let mut ids_b: Vec<_> = b.iter().map(|x| (x.1.to_bits(), &x.0)).collect();
        // Only the last score's group may be cut differently.
        let last = a.last().map(|x| x.1.to_bits());
        ids_a.retain(|x| Some(x.0) != last || a.len() < 30);
        ids_b.retain(|x| Some(x.0) != last || b.len() < 30);
        ids_a.sort();
        ids_b.sort();
        assert_eq!(ids_a, ids_b, "{q}");
        compared += a.len();
    }
    compared
}

pub(crate) fn random_queries(rng: &mut Rng, n: usize) -> Vec<String> {
    (0..n).map(|_| rng.text(QUERY_WORDS, 1, 6)).collect()
}

#[test]
fn resident_index_scores_exactly_as_fts5() {
    let conn = Connection::open_in_memory().unwrap();
    let mut rng = Rng(0x5eed);
    let mut writer = Recall::open(&conn).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 1_500, "d"))
        .unwrap();
    let queries = random_queries(&mut rng, 120);
    let mut resident = Recall::with_config(&conn, lexical(true)).unwrap();
    let mut compared = 0;
    for scopes in [
        &["global", "proj-a"][..],
        &["global", "proj-a", "proj-b"],
        &["proj-b"],
    ] {
        compared += assert_same(&conn, &mut resident, &queries, scopes);
    }
    assert!(compared > 5_000, "{compared} hits compared");
}

#[test]
fn resident_index_follows_other_writers() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recall.db");
    let a = Connection::open(&path).unwrap();
    let b = Connection::open(&path).unwrap();
    let mut rng = Rng(0xfeed);
    let mut writer = Recall::open(&b).unwrap();
    writer
        .upsert_many(&b, &random_docs(&mut rng, 400, "d"))
        .unwrap();
    let queries = random_queries(&mut rng, 40);
    let mut resident = Recall::with_config(&a, lexical(true)).unwrap();
    resident.warm_up(&a).unwrap();
    assert!(resident.resident_lexical_ready());
    assert_same(&a, &mut resident, &queries, &["global", "proj-a"]);

    // Another connection adds, rewords (in place and into another scope) and removes.
    writer
        .upsert_many(&b, &random_docs(&mut rng, 50, "n"))
        .unwrap();
    writer
        .upsert_many(&b, &random_docs(&mut rng, 60, "d"))
        .unwrap();
    for i in 100..150 {
        assert!(writer.remove(&b, &format!("d{i}")).unwrap());
    }
    assert_same(&a, &mut resident, &queries, &["global", "proj-a"]);
    assert_same(&a, &mut resident, &queries, &["proj-b"]);

    // A write rolled back changes nothing; the index's own process writes too.
    b.execute_batch("BEGIN").unwrap();
    writer
        .upsert_many(&b, &random_docs(&mut rng, 30, "r"))
        .unwrap();
    b.execute_batch("ROLLBACK").unwrap();
    resident
        .upsert_many(&a, &random_docs(&mut rng, 20, "own"))
        .unwrap();
    assert!(resident.remove(&a, "d7").unwrap());
    assert_same(&a, &mut resident, &queries, &["global", "proj-a", "proj-b"]);
    let hits = resident.search(&a, "deploy", &["global", "proj-a", "proj-b"], 1_000, 0);
    let hits = hits.unwrap();
    assert!(hits.iter().all(|h| !h.id.starts_with('r') && h.id != "d7"));
}

#[test]
fn a_database_file_builds_the_index_in_the_background_and_fts5_answers_meanwhile() {
    let dir = tempfile::tempdir().unwrap();
    let conn = Connection::open(dir.path().join("recall.db")).unwrap();
    let mut rng = Rng(0xbeef);
    let mut writer = Recall::open(&conn).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 600, "d"))
        .unwrap();
    let queries = random_queries(&mut rng, 20);
    let mut resident = Recall::with_config(&conn, lexical(true)).unwrap();
    // The first search starts the build and is answered by FTS5.
    assert_same(&conn, &mut resident, &queries[..1], &["global"]);
    // Changes made while the index is being built are picked up once it is.
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 40, "late"))
        .unwrap();
    let start = std::time::Instant::now();
    while !resident.resident_lexical_ready() {
        assert!(start.elapsed().as_secs() < 60, "the index was never built");
        std::thread::sleep(std::time::Duration::from_millis(20));
        resident.search(&conn, "deploy", &["global"], 5, 0).unwrap();
    }
    assert_same(
        &conn,
        &mut resident,
        &queries,
        &["global", "proj-a", "proj-b"],
    );
    drop(conn);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn rewording_most_documents_compacts_the_index_and_keeps_it_exact() {
    let conn = Connection::open_in_memory().unwrap();
    let mut rng = Rng(0xc0de);
    let mut writer = Recall::open(&conn).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 1_600, "d"))
        .unwrap();
    let queries = random_queries(&mut rng, 40);
    let mut resident = Recall::with_config(&conn, lexical(true)).unwrap();
    assert_same(&conn, &mut resident, &queries, &["global", "proj-a"]);
    for round in 0..3 {
        // 1,200 of 1,600 reworded (more than the compaction threshold), some removed.
        writer
            .upsert_many(&conn, &random_docs(&mut rng, 1_200, "d"))
            .unwrap();
        for i in 0..20 {
            writer
                .remove(&conn, &format!("d{}", 1_200 + round * 20 + i))
                .unwrap();
        }
        assert_same(
            &conn,
            &mut resident,
            &queries,
            &["global", "proj-a", "proj-b"],
        );
    }
}

#[test]
fn resident_hybrid_ranking_matches_fts5_hybrid_ranking() {
    let conn = Connection::open_in_memory().unwrap();
    let mut rng = Rng(0xabcd);
    let mut fts = Recall::open(&conn).unwrap();
    fts.upsert_many(&conn, &random_docs(&mut rng, 800, "d"))
        .unwrap();
    let mut resident = Recall::with_config(
        &conn,
        RecallConfig {
            resident_lexical: true,
            ..RecallConfig::default()
        },
    )
    .unwrap();
    let queries = queries_with_cjk_pairs(&mut rng, 60);
    assert_same_fused(&conn, &mut resident, &mut fts, &queries);
}

/// `n` random queries, then two with CJK pairs (FTS5 phrases: only FTS5 ranks them).
pub(crate) fn queries_with_cjk_pairs(rng: &mut Rng, n: usize) -> Vec<String> {
    let mut queries = random_queries(rng, n);
    queries.push("包管理 pnpm".into());
    queries.push("キャッシュ deploy".into());
    queries
}

/// Asserts that two indexes give the same fused top 5 scores, to the bit, for `queries`
/// over the global and `proj-a` scopes.
pub(crate) fn assert_same_fused(
    conn: &Connection,
    a: &mut Recall,
    b: &mut Recall,
    queries: &[String],
) {
    let scores = |h: &[Hit]| h.iter().map(|h| h.score.to_bits()).collect::<Vec<_>>();
    for q in queries {
        let x = a.search(conn, q, &["global", "proj-a"], 5, 0).unwrap();
        let y = b.search(conn, q, &["global", "proj-a"], 5, 0).unwrap();
        assert_eq!(scores(&x), scores(&y), "{q}");
    }
}

#[test]
fn an_index_of_an_earlier_version_gains_the_change_log_on_open() {
    let conn = Connection::open_in_memory().unwrap();
    let mut rng = Rng(0x01d);
    let mut old = Recall::open(&conn).unwrap();
    old.upsert_many(&conn, &random_docs(&mut rng, 200, "d"))
        .unwrap();
    // What an earlier version left: no change log, no counter, no record of its DDL.
    conn.execute_batch(
        "DROP TRIGGER recall_docs_text_ins; DROP TRIGGER recall_docs_text_upd;
         DROP TRIGGER recall_docs_text_del; DROP TABLE recall_text_revs;
         DELETE FROM recall_meta WHERE key IN ('text_generation', 'ddl');",
    )
    .unwrap();
    let queries = random_queries(&mut rng, 20);
    let mut resident = Recall::with_config(&conn, lexical(true)).unwrap();
    assert_same(&conn, &mut resident, &queries, &["global", "proj-a"]);
    let mut writer = Recall::open(&conn).unwrap();
    writer
        .upsert_many(&conn, &random_docs(&mut rng, 100, "d"))
        .unwrap();
    assert!(writer.remove(&conn, "d150").unwrap());
    assert_same(
        &conn,
        &mut resident,
        &queries,
        &["global", "proj-a", "proj-b"],
    );
}
