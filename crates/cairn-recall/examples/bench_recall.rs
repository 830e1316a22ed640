//! Search latency over synthetic memories: hybrid (BM25 + embeddings, fused) against a
//! BM25-only baseline and embeddings only.
//!
//! ```text
//! cargo run --release -p cairn-recall --example bench_recall -- [DOCS] [QUERIES]
//! ```
//!
//! Documents are English-like: words drawn with a Zipf law from the WordPiece vocabulary's
//! whole words (which is roughly frequency-ordered); name 3-6 words, description 8-15,
//! body 20-60, two keywords. 20% are `global`, the rest spread over 50 projects. Queries
//! are 4-9 words from the same law. Two scope settings are timed: `["global", "proj-7"]`
//! (about 21.6% of the store in scope) and every document in scope (one scope).

use std::time::Instant;

use cairn_recall::{Document, Mode, Recall, RecallConfig};
use rusqlite::Connection;

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        // xorshift64*
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    fn range(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo + 1) as u64) as usize
    }
}

struct Zipf {
    cdf: Vec<f64>,
}

impl Zipf {
    fn new(n: usize, s: f64) -> Self {
        let mut cdf = Vec::with_capacity(n);
        let mut acc = 0.0;
        for r in 1..=n {
            acc += 1.0 / (r as f64).powf(s);
            cdf.push(acc);
        }
        cdf.iter_mut().for_each(|x| *x /= acc);
        Self { cdf }
    }
    fn sample(&self, rng: &mut Rng) -> usize {
        let u = rng.unit();
        self.cdf.partition_point(|&c| c < u).min(self.cdf.len() - 1)
    }
}

fn words(words: &[String], z: &Zipf, rng: &mut Rng, lo: usize, hi: usize) -> String {
    let n = rng.range(lo, hi);
    (0..n)
        .map(|_| words[z.sample(rng)].as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

/// This process's resident set size in MB (Linux; 0 elsewhere).
fn resident_mb() -> f64 {
    std::fs::read_to_string("/proc/self/statm")
        .ok()
        .and_then(|s| s.split_whitespace().nth(1)?.parse::<f64>().ok())
        .map_or(0.0, |pages| pages * 4096.0 / 1e6)
}

fn median_ms(mut v: Vec<f64>) -> (f64, f64) {
    v.sort_by(f64::total_cmp);
    (v[v.len() / 2], v[v.len() * 9 / 10])
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let n_docs: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(100_000);
    let n_queries: usize = args.next().and_then(|s| s.parse().ok()).unwrap_or(300);

    let wp = cairn_embed::embedder().wordpiece();
    let vocab: Vec<String> = (1996..wp.len() as u32)
        .filter_map(|i| wp.token(i))
        .filter(|t| {
            !t.starts_with("##") && t.chars().all(|c| c.is_ascii_lowercase()) && t.len() > 1
        })
        .map(str::to_owned)
        .collect();
    let z = Zipf::new(vocab.len(), 1.0);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);

    let docs: Vec<Document> = (0..n_docs)
        .map(|i| {
            let scope = if rng.range(0, 4) == 0 {
                "global".to_owned()
            } else {
                format!("proj-{}", rng.range(0, 49))
            };
            Document {
                id: format!("m{i}"),
                scope,
                name: words(&vocab, &z, &mut rng, 3, 6),
                description: words(&vocab, &z, &mut rng, 8, 15),
                body: words(&vocab, &z, &mut rng, 20, 60),
                keywords: vec![
                    words(&vocab, &z, &mut rng, 1, 1),
                    words(&vocab, &z, &mut rng, 1, 1),
                ],
                created_at: 1_700_000_000 + i as i64,
                updated_at: 1_700_000_000 + i as i64,
                recall_count: (rng.next() % 4) as i64,
            }
        })
        .collect();
    let queries: Vec<String> = (0..n_queries)
        .map(|_| words(&vocab, &z, &mut rng, 4, 9))
        .collect();

    let conn = Connection::open_in_memory()?;
    let mut recall = Recall::open(&conn)?;
    let t = Instant::now();
    for chunk in docs.chunks(5_000) {
        recall.upsert_many(&conn, chunk)?;
    }
    let write = t.elapsed().as_secs_f64();
    println!(
        "{n_docs} documents written in {write:.1}s ({:.0} docs/s, embedding computed at write time), dims {}",
        n_docs as f64 / write,
        cairn_embed::dims()
    );
    // One-time cache load (reads every embedding BLOB).
    let t = Instant::now();
    recall.search(&conn, "warm up", &["global"], 5, 1_800_000_000)?;
    println!(
        "vector cache load: {:.1} ms",
        t.elapsed().as_secs_f64() * 1e3
    );

    let single = Connection::open_in_memory()?;
    let mut all_in_scope = Recall::open(&single)?;
    let flat: Vec<Document> = docs
        .iter()
        .map(|d| Document {
            scope: "one".into(),
            ..d.clone()
        })
        .collect();
    for chunk in flat.chunks(5_000) {
        all_in_scope.upsert_many(&single, chunk)?;
    }
    all_in_scope.search(&single, "warm up", &["one"], 5, 1_800_000_000)?;

    println!("top-5 latency over {n_queries} queries (median / p90, ms):");
    for (label, conn, recall, scopes) in [
        (
            "global+project (~22% in scope)",
            &conn,
            &mut recall,
            &["global", "proj-7"][..],
        ),
        (
            "all 100% in scope",
            &single,
            &mut all_in_scope,
            &["one"][..],
        ),
    ] {
        for (mode, resident) in [
            (Mode::Lexical, false),
            (Mode::Semantic, false),
            (Mode::Hybrid, false),
            (Mode::Lexical, true),
            (Mode::Hybrid, true),
        ] {
            recall.set_config(RecallConfig {
                mode,
                resident_lexical: resident,
                ..RecallConfig::default()
            });
            if resident {
                // The first search builds the resident copy of the lexical index.
                let rss = resident_mb();
                let t = Instant::now();
                recall.search(conn, "warm up", scopes, 5, 1_800_000_000)?;
                if mode == Mode::Lexical {
                    println!(
                        "  {label:<32} resident lexical index built in {:.0} ms (resident memory {:+.0} MB)",
                        t.elapsed().as_secs_f64() * 1e3,
                        resident_mb() - rss
                    );
                }
            }
            let mut times = Vec::with_capacity(queries.len());
            let mut found = 0usize;
            let mut tops = Vec::with_capacity(queries.len());
            for q in &queries {
                let t = Instant::now();
                let hits = recall.search(conn, q, scopes, 5, 1_800_000_000)?;
                times.push(t.elapsed().as_secs_f64() * 1e3);
                found += hits.len();
                tops.push(hits.into_iter().map(|h| h.id).collect::<Vec<_>>());
            }
            let (p50, p90) = median_ms(times);
            let name = match (mode, resident) {
                (Mode::Lexical, false) => "BM25 only (baseline)",
                (Mode::Semantic, _) => "embeddings only",
                (Mode::Hybrid, false) => "hybrid (default)",
                (Mode::Lexical, true) => "BM25 only, resident",
                (Mode::Hybrid, true) => "hybrid, resident",
            };
            // The same queries ranked exhaustively (FTS5, every vector in full): how much the
            // shortcuts change the top 5.
            recall.set_config(RecallConfig {
                mode,
                exhaustive: true,
                ..RecallConfig::default()
            });
            let mut agree = 0usize;
            for (q, fast) in queries.iter().zip(&tops) {
                let exact = recall.search(conn, q, scopes, 5, 1_800_000_000)?;
                agree += exact.iter().filter(|h| fast.contains(&h.id)).count();
            }
            println!(
                "  {label:<32} {name:<22} p50 {p50:6.3}  p90 {p90:6.3}  ({:.1} hits/query, top-5 agreement with exhaustive ranking {:.1}%)",
                found as f64 / queries.len() as f64,
                100.0 * agree as f64 / found.max(1) as f64
            );
        }
    }
    Ok(())
}
