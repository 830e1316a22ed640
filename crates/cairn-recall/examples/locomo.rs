//! Runs the LoCoMo retrieval evaluation with a chosen configuration.
//!
//! ```text
//! cargo run --release -p cairn-recall --example locomo -- FILE [--mode lexical|semantic|hybrid]
//!     [--rrf K] [--alpha A] [--weights N,D,B,K] [--candidates N] [--context N] [--no-date]
//!     [--no-captions] [--no-priors] [--json]
//! ```
use std::path::PathBuf;

use cairn_recall::{Fusion, LocomoOptions, Mode, eval_locomo_with};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let mut file = None;
    let mut opts = LocomoOptions::default();
    let mut json = false;
    while let Some(a) = args.next() {
        match a.as_str() {
            "--mode" => {
                opts.config.mode = match args.next().as_deref() {
                    Some("lexical") => Mode::Lexical,
                    Some("semantic") => Mode::Semantic,
                    _ => Mode::Hybrid,
                }
            }
            "--rrf" => {
                let k = args.next().ok_or("--rrf K")?.parse()?;
                opts.config.fusion = Fusion::Rrf {
                    k,
                    lexical: 1.0,
                    semantic: 1.0,
                };
            }
            "--alpha" => {
                opts.config.fusion = Fusion::Convex {
                    alpha: args.next().ok_or("--alpha A")?.parse()?,
                }
            }
            "--weights" => {
                let w: Vec<f64> = args
                    .next()
                    .ok_or("--weights")?
                    .split(',')
                    .map(str::parse)
                    .collect::<Result<_, _>>()?;
                opts.config.field_weights = w.try_into().map_err(|_| "four weights")?;
            }
            "--candidates" => {
                opts.config.candidates = args.next().ok_or("--candidates N")?.parse()?
            }
            "--context" => opts.context = args.next().ok_or("--context N")?.parse()?,
            "--no-date" => opts.date_in_text = false,
            "--no-captions" => opts.captions = false,
            "--no-priors" => {
                opts.config.recency_weight = 0.0;
                opts.config.recall_weight = 0.0;
            }
            "--json" => json = true,
            _ => file = Some(PathBuf::from(a)),
        }
    }
    let file = file.ok_or("usage: locomo FILE [options]")?;
    let t = std::time::Instant::now();
    let r = eval_locomo_with(&file, &opts)?;
    if json {
        println!("{}", serde_json::to_string_pretty(&r)?);
        return Ok(());
    }
    println!(
        "{:<12} {:>5} {:>4} {:>6} {:>6} {:>6} {:>6} {:>6}",
        "category", "n", "skip", "hit@1", "hit@5", "mrr", "r@5", "r@10"
    );
    let row = |name: &str, m: &cairn_recall::LocomoMetrics| {
        println!(
            "{:<12} {:>5} {:>4} {:>6.3} {:>6.3} {:>6.3} {:>6.3} {:>6.3}",
            name,
            m.questions,
            m.skipped,
            m.session_hit_at_1,
            m.session_hit_at_5,
            m.session_mrr,
            m.turn_recall_at_5,
            m.turn_recall_at_10
        )
    };
    for (k, m) in &r.by_category {
        row(&format!("{k} {}", m.name.as_deref().unwrap_or("")), m);
    }
    let overall = cairn_recall::LocomoMetrics {
        name: None,
        questions: r.questions,
        skipped: r.skipped,
        session_hit_at_1: r.session_hit_at_1,
        session_hit_at_5: r.session_hit_at_5,
        session_mrr: r.session_mrr,
        turn_recall_at_5: r.turn_recall_at_5,
        turn_recall_at_10: r.turn_recall_at_10,
    };
    row("overall", &overall);
    eprintln!(
        "({} conversations, {} turns, {} bad evidence ids, {:.1}s)",
        r.conversations,
        r.turns,
        r.bad_evidence_ids,
        t.elapsed().as_secs_f64()
    );
    Ok(())
}
