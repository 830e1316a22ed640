//! Engine tests on real SQLite (in memory and temporary files).

use rusqlite::Connection;

use crate::{Document, Fusion, Mode, Recall, RecallConfig};

fn doc(id: &str, scope: &str, name: &str, body: &str) -> Document {
    Document {
        id: id.into(),
        scope: scope.into(),
        name: name.into(),
        body: body.into(),
        created_at: 1_700_000_000,
        updated_at: 1_700_000_000,
        ..Document::default()
    }
}

fn corpus() -> Vec<Document> {
    vec![
        doc("pm", "proj-a", "Package manager", "use pnpm, not npm"),
        doc(
            "db",
            "proj-a",
            "Database",
            "the staging database password rotates monthly",
        ),
        doc(
            "tests",
            "global",
            "Testing",
            "run the tests with cargo nextest before pushing",
        ),
        doc(
            "tabs",
            "global",
            "Style",
            "the user prefers tabs over spaces in Go files",
        ),
        doc(
            "deploy",
            "proj-b",
            "Deploys",
            "deploys go through the release pipeline on Fridays",
        ),
        doc(
            "pm-b",
            "proj-b",
            "Package manager",
            "use yarn for this project, not npm",
        ),
    ]
}

fn setup() -> (Connection, Recall) {
    let conn = Connection::open_in_memory().unwrap();
    let mut r = Recall::open(&conn).unwrap();
    r.upsert_many(&conn, &corpus()).unwrap();
    (conn, r)
}

fn ids(hits: &[crate::Hit]) -> Vec<&str> {
    hits.iter().map(|h| h.id.as_str()).collect()
}

#[test]
fn finds_paraphrase_in_every_mode() {
    let (conn, mut r) = setup();
    let hits = r
        .search(
            &conn,
            "which package manager should I use",
            &["global", "proj-a"],
            3,
            1_700_000_000,
        )
        .unwrap();
    assert_eq!(hits[0].id, "pm");
    // Semantic only, with no word in common with the memory body.
    r.set_config(RecallConfig {
        mode: Mode::Semantic,
        ..RecallConfig::default()
    });
    let hits = r
        .search(
            &conn,
            "what installer tool for javascript dependencies",
            &["proj-a"],
            2,
            0,
        )
        .unwrap();
    assert_eq!(hits[0].id, "pm", "{hits:?}");
    r.set_config(RecallConfig {
        mode: Mode::Lexical,
        ..RecallConfig::default()
    });
    let hits = r
        .search(&conn, "password rotation", &["proj-a"], 2, 0)
        .unwrap();
    assert_eq!(
        ids(&hits),
        ["db"],
        "porter stemming matches rotates/rotation"
    );
    r.set_config(RecallConfig {
        fusion: Fusion::Rrf {
            k: 60.0,
            lexical: 1.0,
            semantic: 1.0,
        },
        ..RecallConfig::default()
    });
    let hits = r
        .search(
            &conn,
            "which package manager should I use",
            &["global", "proj-a"],
            3,
            0,
        )
        .unwrap();
    assert_eq!(hits[0].id, "pm");
}

#[test]
fn never_returns_another_projects_documents() {
    let (conn, mut r) = setup();
    for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
        r.set_config(RecallConfig {
            mode,
            ..RecallConfig::default()
        });
        for q in [
            "yarn package manager",
            "deploys release pipeline Fridays",
            "npm",
            "",
        ] {
            let hits = r.search(&conn, q, &["global", "proj-a"], 10, 0).unwrap();
            for h in &hits {
                assert!(
                    !["deploy", "pm-b"].contains(&h.id.as_str()),
                    "{mode:?} {q:?} leaked {h:?}"
                );
            }
        }
        let hits = r
            .search(&conn, "yarn package manager", &["proj-b"], 10, 0)
            .unwrap();
        assert_eq!(hits[0].id, "pm-b");
        assert!(hits.iter().all(|h| h.id == "pm-b" || h.id == "deploy"));
        assert!(r.search(&conn, "npm", &[], 10, 0).unwrap().is_empty());
        assert!(
            r.search(&conn, "npm", &["nobody"], 10, 0)
                .unwrap()
                .is_empty()
        );
    }
}

#[test]
fn scopes_sharing_words_do_not_leak() {
    let conn = Connection::open_in_memory().unwrap();
    let mut r = Recall::open(&conn).unwrap();
    r.upsert(&conn, &doc("x", "/home/u/proj", "n", "alpha beta"))
        .unwrap();
    r.upsert(&conn, &doc("y", "/home/u/proj/sub", "n", "alpha beta"))
        .unwrap();
    r.set_config(RecallConfig {
        mode: Mode::Lexical,
        ..RecallConfig::default()
    });
    assert_eq!(
        ids(&r.search(&conn, "alpha", &["/home/u/proj"], 10, 0).unwrap()),
        ["x"]
    );
    assert_eq!(
        ids(&r
            .search(&conn, "alpha", &["/home/u/proj/sub"], 10, 0)
            .unwrap()),
        ["y"]
    );
}

#[test]
fn upsert_replaces_and_remove_deletes() {
    let (conn, mut r) = setup();
    r.set_config(RecallConfig {
        mode: Mode::Lexical,
        ..RecallConfig::default()
    });
    assert_eq!(
        ids(&r.search(&conn, "pnpm", &["proj-a"], 5, 0).unwrap()),
        ["pm"]
    );
    r.upsert(
        &conn,
        &doc("pm", "proj-a", "Package manager", "use bun for everything"),
    )
    .unwrap();
    assert!(
        r.search(&conn, "pnpm", &["proj-a"], 5, 0)
            .unwrap()
            .is_empty()
    );
    assert_eq!(
        ids(&r.search(&conn, "bun", &["proj-a"], 5, 0).unwrap()),
        ["pm"]
    );
    assert_eq!(r.len(&conn).unwrap(), 6);
    assert!(r.remove(&conn, "pm").unwrap());
    assert!(!r.remove(&conn, "pm").unwrap());
    assert!(
        r.search(&conn, "bun", &["proj-a"], 5, 0)
            .unwrap()
            .is_empty()
    );
    r.set_config(RecallConfig::default());
    assert!(
        r.search(&conn, "bun package manager", &["proj-a"], 5, 0)
            .unwrap()
            .iter()
            .all(|h| h.id != "pm")
    );
    assert_eq!(r.len(&conn).unwrap(), 5);
    // Moving a document to another scope moves it in both indexes.
    r.upsert(
        &conn,
        &doc(
            "db",
            "proj-b",
            "Database",
            "the staging database password rotates monthly",
        ),
    )
    .unwrap();
    assert!(
        r.search(&conn, "database password", &["proj-a"], 5, 0)
            .unwrap()
            .iter()
            .all(|h| h.id != "db")
    );
    assert_eq!(
        r.search(&conn, "database password", &["proj-b"], 5, 0)
            .unwrap()[0]
            .id,
        "db"
    );
}

#[test]
fn hostile_and_empty_queries_are_safe() {
    let (conn, mut r) = setup();
    for q in [
        "",
        "   ",
        "\"",
        "\"\"\"",
        "npm AND OR NOT",
        "NEAR(npm pnpm, 2)",
        "name: npm",
        "{name body}: pnpm",
        "pn*",
        "^npm",
        "(((",
        "-npm",
        "what is it",
        "🙂🙂",
        "'; DROP TABLE recall_docs; --",
    ] {
        for mode in [Mode::Lexical, Mode::Semantic, Mode::Hybrid] {
            r.set_config(RecallConfig {
                mode,
                ..RecallConfig::default()
            });
            let res = r.search(&conn, q, &["proj-a", "global"], 5, 0);
            assert!(res.is_ok(), "{mode:?} {q:?}: {res:?}");
        }
    }
    assert_eq!(r.len(&conn).unwrap(), 6);
    assert!(
        r.search(&conn, "npm", &["proj-a"], 0, 0)
            .unwrap()
            .is_empty()
    );
}

#[test]
fn cjk_text_is_searchable() {
    let conn = Connection::open_in_memory().unwrap();
    let mut r = Recall::open(&conn).unwrap();
    r.upsert(&conn, &doc("zh", "g", "包管理器", "本项目使用pnpm管理依赖"))
        .unwrap();
    r.upsert(
        &conn,
        &doc(
            "ja",
            "g",
            "データベース",
            "ステージング環境のパスワードは毎月変わる",
        ),
    )
    .unwrap();
    r.upsert(&conn, &doc("en", "g", "tabs", "tabs over spaces"))
        .unwrap();
    r.set_config(RecallConfig {
        mode: Mode::Lexical,
        ..RecallConfig::default()
    });
    assert_eq!(
        r.search(&conn, "管理依赖", &["g"], 5, 0).unwrap()[0].id,
        "zh"
    );
    assert_eq!(
        r.search(&conn, "パスワード", &["g"], 5, 0).unwrap()[0].id,
        "ja"
    );
    assert_eq!(r.search(&conn, "pnpm", &["g"], 5, 0).unwrap()[0].id, "zh");
}

#[test]
fn priors_break_ties_by_recency_and_recall_count() {
    let conn = Connection::open_in_memory().unwrap();
    let mut r = Recall::open(&conn).unwrap();
    let day = 86_400;
    let mut old = doc("old", "g", "note", "rebuild the search index nightly");
    old.updated_at = 0;
    let mut new = doc("new", "g", "note", "rebuild the search index nightly");
    new.updated_at = 100 * day;
    r.upsert_many(&conn, &[old, new]).unwrap();
    let hits = r
        .search(&conn, "search index", &["g"], 2, 100 * day)
        .unwrap();
    assert_eq!(ids(&hits), ["new", "old"]);
    let (a, b) = (hits[0].score, hits[1].score);
    assert!(a / b < 1.06, "the prior is small: {a} vs {b}");
    // Recall count: a frequently recalled twin of the same age wins.
    let mut c = doc("popular", "h", "note", "rotate the api keys");
    c.recall_count = 0;
    let mut d = doc("plain", "h", "note", "rotate the api keys");
    d.recall_count = 0;
    r.upsert_many(&conn, &[c, d]).unwrap();
    r.record_recall(&conn, &["popular", "popular", "missing"])
        .unwrap();
    r.record_recall(&conn, &["popular"]).unwrap();
    assert_eq!(
        ids(&r.search(&conn, "api keys", &["h"], 2, 0).unwrap()),
        ["popular", "plain"]
    );
    let n: i64 = conn
        .query_row(
            "SELECT recall_count FROM recall_docs WHERE id = 'popular'",
            [],
            |x| x.get(0),
        )
        .unwrap();
    assert_eq!(n, 3);
}

#[test]
fn second_connection_sees_writes_and_model_change_reembeds() {
    let dir = std::env::temp_dir().join(format!("cairn-recall-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("recall.db");
    let _ = std::fs::remove_file(&path);
    {
        let c1 = Connection::open(&path).unwrap();
        let c2 = Connection::open(&path).unwrap();
        let mut r1 = Recall::open(&c1).unwrap();
        let mut r2 = Recall::open(&c2).unwrap();
        r1.upsert(&c1, &doc("a", "g", "Package manager", "use pnpm, not npm"))
            .unwrap();
        assert_eq!(r2.search(&c2, "pnpm", &["g"], 5, 0).unwrap()[0].id, "a");
        r2.upsert(&c2, &doc("b", "g", "Editor", "tabs not spaces"))
            .unwrap();
        r1.set_config(RecallConfig {
            mode: Mode::Semantic,
            ..RecallConfig::default()
        });
        assert_eq!(
            r1.search(&c1, "indentation with tabs", &["g"], 1, 0)
                .unwrap()[0]
                .id,
            "b"
        );
        assert!(r2.remove(&c2, "a").unwrap());
        assert!(
            r1.search(&c1, "package manager", &["g"], 5, 0)
                .unwrap()
                .iter()
                .all(|h| h.id != "a")
        );
        // Simulate vectors from an older table: wrong model id and junk blobs.
        c1.execute_batch("UPDATE recall_meta SET value = 'old' WHERE key = 'embed_model'; UPDATE recall_docs SET embedding = x'00'")
            .unwrap();
    }
    let c = Connection::open(&path).unwrap();
    let mut r = Recall::with_config(
        &c,
        RecallConfig {
            mode: Mode::Semantic,
            ..RecallConfig::default()
        },
    )
    .unwrap();
    let len: i64 = c
        .query_row(
            "SELECT length(embedding) FROM recall_docs WHERE id = 'b'",
            [],
            |x| x.get(0),
        )
        .unwrap();
    assert_eq!(len as usize, 4 * cairn_embed::dims());
    assert_eq!(
        r.search(&c, "indentation with tabs", &["g"], 1, 0).unwrap()[0].id,
        "b"
    );
    drop(c);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn opening_a_current_index_writes_nothing_and_an_older_one_is_brought_up_to_date() {
    let (conn, _) = setup();
    // Hooks open the index on every prompt: once its DDL is recorded, opening it (and
    // searching from the snapshot the first search stored) needs no write at all.
    Recall::open(&conn)
        .unwrap()
        .search(&conn, "package manager", &["proj-a"], 3, 0)
        .unwrap();
    conn.pragma_update(None, "query_only", true).unwrap();
    let mut r = Recall::open(&conn).unwrap();
    assert!(
        !r.search(&conn, "package manager", &["proj-a"], 3, 0)
            .unwrap()
            .is_empty()
    );
    conn.pragma_update(None, "query_only", false).unwrap();
    // A database whose recorded DDL is another build's runs this build's again: a dropped
    // index comes back.
    conn.execute_batch(
        "DROP INDEX recall_docs_scope; UPDATE recall_meta SET value = 'older' WHERE key = 'ddl';",
    )
    .unwrap();
    Recall::open(&conn).unwrap();
    let back: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_schema WHERE name = 'recall_docs_scope'",
            [],
            |x| x.get(0),
        )
        .unwrap();
    assert_eq!(back, 1);
}

#[test]
fn failed_write_rolls_back() {
    let (conn, mut r) = setup();
    conn.execute_batch("CREATE TRIGGER boom BEFORE INSERT ON recall_docs WHEN NEW.id = 'bad' BEGIN SELECT RAISE(ABORT, 'no'); END;")
        .unwrap();
    let res = r.upsert_many(
        &conn,
        &[
            doc("ok", "g", "n", "fine text"),
            doc("bad", "g", "n", "bad text"),
        ],
    );
    assert!(res.is_err());
    assert_eq!(r.len(&conn).unwrap(), 6);
    r.set_config(RecallConfig {
        mode: Mode::Lexical,
        ..RecallConfig::default()
    });
    assert!(r.search(&conn, "fine", &["g"], 5, 0).unwrap().is_empty());
}

#[test]
fn lexical_budget_keeps_rare_terms() {
    let conn = Connection::open_in_memory().unwrap();
    let mut r = Recall::with_config(
        &conn,
        RecallConfig {
            mode: Mode::Lexical,
            lexical_budget: 3,
            ..RecallConfig::default()
        },
    )
    .unwrap();
    let docs: Vec<Document> = (0..6)
        .map(|i| {
            doc(
                &format!("d{i}"),
                "g",
                "note",
                &format!(
                    "common words everywhere {}",
                    if i == 4 { "zebra" } else { "" }
                ),
            )
        })
        .collect();
    r.upsert_many(&conn, &docs).unwrap();
    // "common" matches all six documents (over the budget of 3) and is dropped.
    let hits = r.search(&conn, "common zebra", &["g"], 10, 0).unwrap();
    assert_eq!(ids(&hits), ["d4"]);
    // A single term is never dropped.
    assert_eq!(r.search(&conn, "common", &["g"], 10, 0).unwrap().len(), 6);
    // Stats follow writes.
    r.upsert(&conn, &doc("d9", "g", "note", "zebra zebra"))
        .unwrap();
    let hits = r.search(&conn, "common zebra", &["g"], 10, 0).unwrap();
    assert_eq!(hits.len(), 2);
}

#[test]
fn locomo_eval_on_a_small_file() {
    let data = serde_json::json!([{
        "sample_id": "s1",
        "conversation": {
            "speaker_a": "Ann", "speaker_b": "Bob",
            "session_1_date_time": "1:56 pm on 8 May, 2023",
            "session_1": [
                {"speaker": "Ann", "dia_id": "D1:1", "text": "I adopted a grey cat named Pixel."},
                {"speaker": "Bob", "dia_id": "D1:2", "text": "Nice! I started learning the violin."}
            ],
            "session_2_date_time": "10:00 am on 9 June, 2023",
            "session_2": [
                {"speaker": "Ann", "dia_id": "D2:1", "text": "We hiked the volcano trail last weekend.",
                 "blip_caption": "a photo of a crater"},
                {"speaker": "Bob", "dia_id": "D2:2", "text": "My violin teacher moved to Lisbon."}
            ]
        },
        "qa": [
            {"question": "What is the name of Ann's cat?", "answer": "Pixel", "evidence": ["D1:1"], "category": 4},
            {"question": "Where did Bob's violin teacher move?", "answer": "Lisbon", "evidence": ["D2:2", "D9:9"], "category": 1},
            {"question": "Which crater did Ann see?", "answer": "x", "evidence": ["D2:1"], "category": 5},
            {"question": "No evidence here", "answer": "x", "evidence": [], "category": 3},
            {"question": "Malformed", "answer": "x", "evidence": ["D1:1; D2:2"], "category": 2}
        ]
    }]);
    let dir = std::env::temp_dir().join(format!("cairn-locomo-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("mini.json");
    std::fs::write(&path, data.to_string()).unwrap();
    let r = crate::eval_locomo(&path).unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!((r.questions, r.skipped, r.bad_evidence_ids), (3, 2, 2));
    assert_eq!(r.session_hit_at_1, 1.0);
    assert_eq!(r.session_mrr, 1.0);
    assert_eq!(r.by_category["4"].questions, 1);
    assert_eq!(r.by_category["3"].skipped, 1);
    assert_eq!(r.by_category["2"].skipped, 1);
    assert_eq!(r.by_category["1"].name.as_deref(), Some("multi-hop"));
    let json = serde_json::to_value(&r).unwrap();
    for key in [
        "questions",
        "skipped",
        "session_hit_at_1",
        "session_hit_at_5",
        "session_mrr",
        "turn_recall_at_5",
        "turn_recall_at_10",
        "by_category",
    ] {
        assert!(json.get(key).is_some(), "{key}");
    }
    assert!(matches!(
        crate::eval_locomo(&dir.join("missing.json")),
        Err(crate::RecallError::Io { .. })
    ));
}

/// In a store past the size where shortcuts used to kick in (a lexical budget of 2,000 rows,
/// a small vector shortlist), the default ranking is the exhaustive one: a common word
/// ("restart", in most documents) still decides between the documents that share the
/// query's rare word ("billing").
#[test]
fn default_ranking_matches_exhaustive_ranking_in_a_large_store() {
    let conn = Connection::open_in_memory().unwrap();
    let mut r = Recall::open(&conn).unwrap();
    let topics = [
        "deploy", "billing", "checkout", "search", "auth", "cache", "queue", "metrics",
    ];
    let docs: Vec<Document> = (0..3_000)
        .map(|i| {
            let t = topics[i % topics.len()];
            // Every other topic's notes say "restart"; only five billing notes do.
            let verb = if t != "billing" || i % 75 == 1 {
                "restart"
            } else {
                "check"
            };
            doc(
                &format!("m{i}"),
                if i % 3 == 0 { "global" } else { "proj" },
                &format!("{t} note {i}"),
                &format!(
                    "{verb} the {t} service with script {} before a release",
                    i % 97
                ),
            )
        })
        .collect();
    r.upsert_many(&conn, &docs).unwrap();
    let scopes = ["global", "proj"];
    let hits = r
        .search(
            &conn,
            "how do we restart the billing service",
            &scopes,
            5,
            0,
        )
        .unwrap();
    let mut top = ids(&hits);
    top.sort_unstable();
    assert_eq!(top, ["m1", "m1201", "m1801", "m2401", "m601"]);

    let queries = [
        "how do we restart the billing service",
        "which script should I use for checkout",
        "update the metrics dashboard before a release",
    ];
    let fast: Vec<Vec<String>> = queries
        .iter()
        .map(|q| {
            let hits = r.search(&conn, q, &scopes, 5, 0).unwrap();
            hits.into_iter().map(|h| h.id).collect()
        })
        .collect();
    r.set_config(RecallConfig {
        exhaustive: true,
        ..RecallConfig::default()
    });
    for (q, f) in queries.iter().zip(&fast) {
        let exact = r.search(&conn, q, &scopes, 5, 0).unwrap();
        assert_eq!(ids(&exact), *f, "{q}");
    }
}

#[test]
fn a_write_outside_a_transaction_takes_the_lock_before_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("recall.db");
    let a = Connection::open(&path).unwrap();
    a.execute_batch("PRAGMA journal_mode = WAL").unwrap();
    let mut r = Recall::open(&a).unwrap();
    r.upsert(&a, &doc("m1", "p", "Package manager", "use pnpm"))
        .unwrap();
    let b = Connection::open(&path).unwrap();
    b.busy_timeout(std::time::Duration::ZERO).unwrap();
    // Another process tries to write between this write's read and its write: it has to
    // wait (here: fails at once), instead of making this one fail with a stale snapshot.
    let out = crate::engine::in_savepoint(&a, || {
        let n: i64 = a.query_row("SELECT count(*) FROM recall_docs", [], |r| r.get(0))?;
        assert_eq!(n, 1);
        let other = b.execute(
            "UPDATE recall_meta SET value = value + 1 WHERE key = 'generation'",
            [],
        );
        assert!(other.is_err(), "the other writer got in first");
        a.execute(
            "UPDATE recall_meta SET value = value + 1 WHERE key = 'generation'",
            [],
        )?;
        Ok(())
    });
    assert!(out.is_ok(), "{out:?}");
    assert!(a.is_autocommit());
    // A failed write leaves no transaction open.
    let failed: Result<(), crate::RecallError> = crate::engine::in_savepoint(&a, || {
        a.execute("INSERT INTO no_such_table VALUES (1)", [])?;
        Ok(())
    });
    assert!(failed.is_err());
    assert!(a.is_autocommit());
}
