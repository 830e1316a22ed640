//! `cairn extract`: phase 1 (model extraction) now, or `--estimate` what it would cost.

use std::process::ExitCode;

use anyhow::{Context, Result};
use cairn_config::{Config, ExtractMode};
use cairn_llm::{LlmClient, ProviderKind};
use cairn_stage1::{Estimate, ExtractReport, Extractor};
use clap::{Args, ValueEnum};
use serde::Serialize;

use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

#[derive(Args, Debug)]
pub struct ExtractArgs {
    /// Print the sessions, tokens and estimated cost of what would run, without calling the
    /// model.
    #[arg(long)]
    pub estimate: bool,
    /// Which sessions are ready [default: `[extract] mode` of config.toml]
    #[arg(long, value_enum)]
    pub mode: Option<ModeArg>,
}

#[derive(ValueEnum, Clone, Copy, Debug)]
pub enum ModeArg {
    /// Every session with a turn that has ended.
    Turn,
    /// Sessions idle for `[extract] idle_hours`.
    Idle,
}

/// The clock (`CAIRN_NOW`, Unix seconds or RFC 3339, overrides it for tests and replays).
pub fn clock() -> i64 {
    std::env::var("CAIRN_NOW")
        .ok()
        .and_then(|v| {
            v.parse::<i64>()
                .ok()
                .or_else(|| cairn_memory::parse_time(&v))
        })
        .unwrap_or_else(memories::now)
}

/// The configured model client, or `None` for `provider = "none"`.
pub fn client(config: &Config) -> Result<Option<LlmClient>> {
    if config.llm.provider == ProviderKind::None {
        return Ok(None);
    }
    LlmClient::new(config.llm.clone())
        .map(Some)
        .context("the [llm] section of config.toml cannot work")
}

pub fn load_config(homes: &Homes) -> Result<Config> {
    Config::load(&homes.data_dir).context("cannot read config.toml (fix it or remove it)")
}

/// Runs phase 1 when a provider is configured (`None` otherwise).
pub fn phase1(
    homes: &Homes,
    config: &Config,
    mode: ExtractMode,
    json: bool,
) -> Result<Option<ExtractReport>> {
    let Some(client) = client(config)? else {
        return Ok(None);
    };
    let mut mem = memories::open(homes)?;
    let dirs = memories::agent_dirs(homes)?;
    let bar = crate::progress::Bar::items(json, "phase 1");
    let report = Extractor {
        mem: &mut mem,
        llm: &config.llm,
        extract: &config.extract,
        dirs: &dirs,
        data_dir: &homes.data_dir,
        progress: &bar,
    }
    .run(&client, mode, clock())
    .context("model extraction (phase 1) failed")?;
    Ok(Some(report))
}

#[derive(Serialize)]
struct EstimateOut<'a> {
    provider: String,
    model: Option<&'a str>,
    mode: ExtractMode,
    #[serde(flatten)]
    estimate: Estimate,
}

pub fn run(homes: &Homes, args: &ExtractArgs, json: bool) -> Result<ExitCode> {
    let config = load_config(homes)?;
    let mode = match args.mode {
        Some(ModeArg::Turn) => ExtractMode::Turn,
        Some(ModeArg::Idle) => ExtractMode::Idle,
        None => config.extract.mode,
    };
    if args.estimate {
        let mut mem = memories::open(homes)?;
        let dirs = memories::agent_dirs(homes)?;
        let e = Extractor {
            mem: &mut mem,
            llm: &config.llm,
            extract: &config.extract,
            dirs: &dirs,
            data_dir: &homes.data_dir,
            progress: &cairn_stage1::NoProgress,
        }
        .estimate(mode, clock())
        .context("cannot estimate phase 1")?;
        let out = EstimateOut {
            provider: format!("{:?}", config.llm.provider).to_lowercase(),
            model: config.llm.model.as_deref(),
            mode,
            estimate: e,
        };
        if json {
            output::json(&out)?;
        } else {
            print_estimate(&out);
        }
        return Ok(ExitCode::SUCCESS);
    }
    match phase1(homes, &config, mode, json)? {
        None => {
            if json {
                output::json(&ExtractReport {
                    disabled: true,
                    ..ExtractReport::default()
                })?;
            } else {
                outln!(
                    "no model is configured ([llm] provider = \"none\"): offline extraction runs in `cairn sync`; set [llm] in {} to extract with a model",
                    Config::path_in(&homes.data_dir).display()
                );
            }
        }
        Some(r) => {
            if json {
                output::json(&r)?;
            } else {
                print_report(&r);
                if r.error.is_some() {
                    outln!(
                        "fix the provider settings ([llm] in {}; an API key is read from the variable `api_key_env` names) and run `cairn extract` again",
                        Config::path_in(&homes.data_dir).display()
                    );
                }
            }
            // The provider could not work at all (no key, a bad setting), or every session
            // sent failed (each is retried later, with backoff): the command failed.
            let all_failed = r.sessions > 0 && r.failed == r.sessions;
            if all_failed && !json {
                outln!(
                    "every session failed; they are retried later (`cairn status` lists the errors)"
                );
            }
            if r.error.is_some() || all_failed {
                return Ok(ExitCode::FAILURE);
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

fn print_estimate(e: &EstimateOut<'_>) {
    let x = &e.estimate;
    outln!(
        "phase 1 ({} mode, provider {}{}): {} session(s), {} turn(s) ready",
        format!("{:?}", e.mode).to_lowercase(),
        e.provider,
        e.model.map(|m| format!(", model {m}")).unwrap_or_default(),
        x.sessions,
        x.turns
    );
    if x.cost_usd_max > 0.0 {
        outln!(
            "tokens: about {} in, at most {} out; cost ${:.4}–${:.4} at the configured prices",
            x.input_tokens,
            x.max_output_tokens,
            x.cost_usd_min,
            x.cost_usd_max
        );
    } else {
        outln!(
            "tokens: about {} in, at most {} out (no prices set: [llm] input_price_per_mtok and output_price_per_mtok give a cost)",
            x.input_tokens,
            x.max_output_tokens
        );
    }
    let lim = |n: u64| {
        if n == 0 {
            "unlimited".to_string()
        } else {
            n.to_string()
        }
    };
    outln!(
        "budget: {} used today of {} per day; {} per run",
        x.tokens_used_today,
        lim(x.max_tokens_per_day),
        lim(x.max_tokens_per_run)
    );
    if x.over_budget > 0 {
        outln!(
            "{} session(s) would be left for later: the budget would be spent",
            x.over_budget
        );
    }
}

pub fn print_report(r: &ExtractReport) {
    if r.busy {
        outln!(
            "phase 1: another extraction is running; it will read the new turns in a follow-up run"
        );
        return;
    }
    outln!(
        "phase 1: {} session(s) sent, {} with something to keep ({} memories proposed), {} with nothing, {} failed; {} tokens in, {} out",
        r.sessions,
        r.stored,
        r.memories_proposed,
        r.no_output,
        r.failed,
        r.input_tokens,
        r.output_tokens
    );
    if r.memories_dropped > 0 {
        outln!(
            "{} more memories were proposed than the {} kept per session and were not stored: {}",
            r.memories_dropped,
            cairn_stage1::MAX_PROPOSED_MEMORIES,
            r.units
                .iter()
                .filter(|u| u.memories_dropped > 0)
                .map(|u| format!("{} session {}", u.agent, u.session))
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let kept_out = r
        .units
        .iter()
        .filter(|u| u.outcome == "memory_disabled")
        .count();
    if kept_out > 0 {
        outln!(
            "{kept_out} session(s) not sent: Codex threads kept out of memory (`memory_mode` \
             not `enabled`)"
        );
    }
    if let Some(stop) = r.budget_stop {
        outln!(
            "phase 1 stopped: {stop}; {} session(s) left for a later run",
            r.skipped_for_budget
        );
    }
    for u in r.units.iter().filter(|u| u.error.is_some()) {
        outln!(
            "  {} session {}: {}",
            u.agent,
            u.session,
            u.error.as_deref().unwrap_or("")
        );
    }
    if let Some(e) = &r.error {
        outln!("phase 1 error: {e}");
    }
}
