//! `cairn pin ID [--off]`: keep a memory from aging out (and bring back an aged-out one).

use std::process::ExitCode;

use anyhow::{Context, Result};
use clap::Args;
use serde_json::json;

use crate::cmd::extract::clock;
use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

#[derive(Args, Debug)]
pub struct PinArgs {
    /// The memory id (see `cairn list`)
    pub id: String,
    /// Unpin instead
    #[arg(long)]
    pub off: bool,
}

pub fn run(homes: &Homes, args: &PinArgs, json: bool) -> Result<ExitCode> {
    let mut mem = memories::open(homes)?;
    let id = args.id.trim();
    match mem.get(id).context("cannot read the memory")? {
        None => anyhow::bail!("there is no memory {id} (see `cairn list` for ids)"),
        // Aged out or withdrawn by consolidation is retired, and pinning brings it back; a
        // memory the user forgot is gone.
        Some(m)
            if m.forgotten_at.is_some()
                && cairn_consolidate::retirement(mem.store().connection(), id)
                    .context("cannot read the memory")?
                    .is_none() =>
        {
            anyhow::bail!(
                "{id} was forgotten (`cairn forget`): its text is gone and there is nothing to pin; say it again with `cairn remember`"
            )
        }
        Some(_) => {}
    }
    if args.off {
        let was = cairn_consolidate::unpin(&mut mem, id).context("cannot unpin")?;
        if json {
            output::json(&json!({"id": id, "pinned": false, "was_pinned": was}))?;
        } else if was {
            outln!("{id} unpinned: it ages out when unused for [consolidate] max_unused_days");
        } else {
            outln!("{id} was not pinned");
        }
        return Ok(ExitCode::SUCCESS);
    }
    let m = cairn_consolidate::pin(&mut mem, id, clock())
        .with_context(|| format!("cannot pin {id} (see `cairn list` for ids)"))?;
    if json {
        output::json(&json!({"id": m.id, "pinned": true, "memory": m}))?;
    } else {
        outln!("{} pinned: {} (never aged out)", m.id, m.name);
    }
    Ok(ExitCode::SUCCESS)
}
