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
    },
}

pub fn run(a: &EvalArgs, json: bool) -> Result<ExitCode> {
    match &a.target {
        EvalTarget::Locomo { file } => {
            let r = cairn_recall::eval_locomo(file).with_context(|| {
                format!(
                    "cannot evaluate {} (is it LoCoMo-format JSON?)",
                    file.display()
                )
            })?;
            if json {
                output::json(&r)?;
            } else {
                println!(
                    "{} conversation(s), {} turns indexed, {} question(s) evaluated, {} skipped ({} bad evidence id(s))",
                    r.conversations, r.turns, r.questions, r.skipped, r.bad_evidence_ids
                );
                println!(
                    "{:<14} {:>5} {:>8} {:>8} {:>7} {:>8} {:>9}",
                    "category", "n", "hit@1", "hit@5", "MRR", "turn@5", "turn@10"
                );
                let row = |name: &str, n: usize, h1: f64, h5: f64, mrr: f64, r5: f64, r10: f64| {
                    println!(
                        "{name:<14} {n:>5} {h1:>8.3} {h5:>8.3} {mrr:>7.3} {r5:>8.3} {r10:>9.3}"
                    );
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
