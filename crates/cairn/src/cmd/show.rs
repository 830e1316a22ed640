//! `cairn show ID`: one memory in full.

use std::process::ExitCode;

use anyhow::Result;

use crate::cmd::memories;
use crate::homes::Homes;
use crate::output;

pub fn run(homes: &Homes, id: &str, json: bool) -> Result<ExitCode> {
    let mem = memories::open_for_reading(homes)?;
    let Some(m) = mem.get(id)? else {
        return Err(cairn_memory::MemoryError::NotFound(id.to_string()).into());
    };
    let conn = mem.store().connection();
    let retired = cairn_consolidate::retirement(conn, &m.id)?.filter(|_| !m.is_live());
    let pinned = cairn_consolidate::is_pinned(conn, &m.id)?;
    let tokens = cairn_consolidate::model_tokens(conn, &m.id)?;
    if json {
        let mut v = serde_json::to_value(&m)?;
        v["pinned"] = pinned.into();
        v["model_tokens"] = tokens.into();
        if let Some((reason, at)) = &retired {
            v["retired"] =
                serde_json::json!({"reason": reason, "at": cairn_memory::format_time(*at)});
        }
        output::json(&v)?;
    } else {
        memories::print_full(&m, memories::now());
        if pinned {
            outln!("  pinned (never aged out)");
        }
        if tokens > 0 {
            outln!("  proposed by the model ({tokens} tokens for its session's extraction)");
        }
        if let Some(s) = &m.superseded_by {
            outln!("  replaced by {s}");
        }
        match (&retired, m.forgotten_at) {
            (Some((reason, at)), _) => outln!(
                "  {} on {} (`cairn pin {}` brings it back)",
                if reason == "aged" {
                    "aged out: not recalled for [consolidate] max_unused_days"
                } else {
                    "withdrawn: its only source changed or was deleted"
                },
                cairn_memory::format_time(*at),
                m.id
            ),
            (None, Some(_)) => outln!("  forgotten (its text was erased)"),
            (None, None) => {}
        }
    }
    Ok(ExitCode::SUCCESS)
}
