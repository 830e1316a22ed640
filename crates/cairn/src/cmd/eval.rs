//! `cairn eval locomo FILE`: retrieval quality of the recall engine on LoCoMo-format data.

use std::path::PathBuf;
use std::process::ExitCode;

use anyhow::{Context, Result};

use crate::output;

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    #[command(subcommand)]
    pub target: EvalTarget,
}

#[derive(clap::Subcommand, Debug)]
pub enum EvalTarget {
    /// Session hit@1/hit@5/MRR and turn recall@5/@10 on a LoCoMo-format JSON file
    Locomo {
        /// The LoCoMo-format file (a JSON array of conversations with QA)
        file: PathBuf,
        /// Ranking to measure: the active embedding tier fused with BM25 (auto), the static
        /// or the full tier fused with BM25, or BM25 alone
        #[arg(long, value_enum, default_value_t = EvalTier::Auto)]
        tier: EvalTier,
    },
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum EvalTier {
    Auto,
    Static,
    Full,
    Bm25,
}

pub fn run(a: &EvalArgs, json: bool) -> Result<ExitCode> {
    match &a.target {
        EvalTarget::Locomo { file, tier } => {
            super::require_regular_file(file, "the LoCoMo file")?;
            let mut opts = cairn_recall::LocomoOptions::default();
            match tier {
                EvalTier::Auto => {}
                EvalTier::Static => {
                    cairn_embed::tier::set_preference(cairn_embed::tier::TierPreference::Static)
                }
                EvalTier::Full => {
                    let st = cairn_embed::tier::status();
                    if st.active != cairn_embed::Tier::Full {
                        anyhow::bail!(
                            "the full embedding tier is not available: {} (see `cairn model status`)",
                            st.reason
                        );
                    }
                }
                EvalTier::Bm25 => {
                    cairn_embed::tier::set_preference(cairn_embed::tier::TierPreference::Static);
                    opts.config.mode = cairn_recall::Mode::Lexical;
                }
            }
            let ranking = match tier {
                EvalTier::Bm25 => "bm25".to_owned(),
                _ => format!("bm25+{}", cairn_embed::tier::status().active.as_str()),
            };
            let started = std::time::Instant::now();
            let r = cairn_recall::eval_locomo_with(file, &opts).with_context(|| {
                format!(
                    "cannot evaluate {} (is it LoCoMo-format JSON?)",
                    file.display()
                )
            })?;
            let seconds = started.elapsed().as_secs_f64();
            if json {
                let mut v = serde_json::to_value(&r)?;
                if let Some(o) = v.as_object_mut() {
                    o.insert("ranking".into(), ranking.into());
                    o.insert("seconds".into(), ((seconds * 100.0).round() / 100.0).into());
                }
                output::json(&v)?;
            } else {
                outln!(
                    "{} conversation(s), {} turns indexed, {} question(s) evaluated, {} skipped ({} bad evidence id(s)); ranking {ranking}, {seconds:.1} s",
                    r.conversations,
                    r.turns,
                    r.questions,
                    r.skipped,
                    r.bad_evidence_ids
                );
                outln!(
                    "{:<14} {:>5} {:>8} {:>8} {:>7} {:>8} {:>9}",
                    "category",
                    "n",
                    "hit@1",
                    "hit@5",
                    "MRR",
                    "turn@5",
                    "turn@10"
                );
                let row = |name: &str, n: usize, h1: f64, h5: f64, mrr: f64, r5: f64, r10: f64| {
                    outln!("{name:<14} {n:>5} {h1:>8.3} {h5:>8.3} {mrr:>7.3} {r5:>8.3} {r10:>9.3}");
                };
                row(
                    "overall",
                    r.questions,
                    r.session_hit_at_1,
                    r.session_hit_at_5,
                    r.session_mrr,
                    r.turn_recall_at_5,
                    r.turn_recall_at_10,
                );
                for (k, c) in &r.by_category {
                    let name = format!("{k} {}", c.name.as_deref().unwrap_or(""));
                    row(
                        name.trim(),
                        c.questions,
                        c.session_hit_at_1,
                        c.session_hit_at_5,
                        c.session_mrr,
                        c.turn_recall_at_5,
                        c.turn_recall_at_10,
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}
