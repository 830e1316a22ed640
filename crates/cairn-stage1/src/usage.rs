//! The token ledger: every model call with its purpose and tokens, and the budgets checked
//! before each call (per UTC day and per run).

use cairn_llm::{LlmConfig, Usage};
use rusqlite::{Connection, params};
use serde::Serialize;

use crate::Result;

/// Why a call was not made.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum BudgetStop {
    /// `max_tokens_per_day` would be exceeded.
    Day,
    /// `max_tokens_per_run` would be exceeded.
    Run,
}

impl std::fmt::Display for BudgetStop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            BudgetStop::Day => {
                "what is left of the daily token budget ([llm] max_tokens_per_day) cannot cover the next session (its input and up to max_output_tokens)"
            }
            BudgetStop::Run => {
                "what is left of the per-run token budget ([llm] max_tokens_per_run) cannot cover the next session (its input and up to max_output_tokens)"
            }
        })
    }
}

/// The budgets of one run: what was used today before it started, and by it so far.
#[derive(Debug, Clone)]
pub struct Budget {
    pub per_day: u64,
    pub per_run: u64,
    pub used_today: u64,
    pub used_this_run: u64,
}

impl Budget {
    /// The budgets of `cfg`, with today's use read from the ledger.
    pub fn start(conn: &Connection, cfg: &LlmConfig, now: i64) -> Result<Budget> {
        Ok(Budget {
            per_day: cfg.max_tokens_per_day,
            per_run: cfg.max_tokens_per_run,
            used_today: Ledger::used_since(conn, day_start(now))?,
            used_this_run: 0,
        })
    }

    /// Whether a call of about `estimate` tokens may run (0 = unlimited).
    pub fn allows(&self, estimate: u64) -> Result<(), BudgetStop> {
        if self.per_run > 0 && self.used_this_run + estimate > self.per_run {
            return Err(BudgetStop::Run);
        }
        if self.per_day > 0 && self.used_today + self.used_this_run + estimate > self.per_day {
            return Err(BudgetStop::Day);
        }
        Ok(())
    }

    pub fn spend(&mut self, tokens: u64) {
        self.used_this_run += tokens;
    }
}

/// The start of the UTC day holding `now`.
pub fn day_start(now: i64) -> i64 {
    now - now.rem_euclid(86_400)
}

/// One model call to record.
#[derive(Debug, Clone)]
pub struct Call<'a> {
    pub purpose: &'a str,
    pub agent: Option<&'a str>,
    pub session_key: Option<&'a str>,
    pub turn_key: Option<&'a str>,
    pub outcome: &'a str,
    pub usage: Usage,
}

/// Token totals for `cairn status`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct UsageTotals {
    pub calls_today: u64,
    pub tokens_today: u64,
    pub calls_total: u64,
    pub input_tokens_total: u64,
    pub output_tokens_total: u64,
    /// Per purpose (`phase1`, `phase2`): calls and tokens, all time.
    pub by_purpose: Vec<(String, u64, u64)>,
}

/// The `llm_usage` table.
pub struct Ledger;

impl Ledger {
    pub fn record(conn: &Connection, cfg: &LlmConfig, call: &Call<'_>, now: i64) -> Result<()> {
        crate::schema::ensure(conn)?;
        conn.execute(
            "INSERT INTO llm_usage(at, purpose, agent, session_key, turn_key, provider, model,
                input_tokens, output_tokens, outcome)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![
                now,
                call.purpose,
                call.agent,
                call.session_key,
                call.turn_key,
                format!("{:?}", cfg.provider).to_lowercase(),
                cfg.model,
                call.usage.input_tokens as i64,
                call.usage.output_tokens as i64,
                call.outcome
            ],
        )?;
        Ok(())
    }

    /// Tokens used by calls at or after `since`.
    pub fn used_since(conn: &Connection, since: i64) -> Result<u64> {
        crate::schema::ensure(conn)?;
        let n: i64 = conn.query_row(
            "SELECT coalesce(sum(input_tokens + output_tokens), 0) FROM llm_usage WHERE at >= ?1",
            [since],
            |r| r.get(0),
        )?;
        Ok(n.max(0) as u64)
    }

    pub fn totals(conn: &Connection, now: i64) -> Result<UsageTotals> {
        let mut t = UsageTotals::default();
        if !crate::schema::readable(conn)? {
            return Ok(t);
        }
        let (c, tok): (i64, i64) = conn.query_row(
            "SELECT count(*), coalesce(sum(input_tokens + output_tokens), 0) FROM llm_usage
             WHERE at >= ?1",
            [day_start(now)],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?;
        t.calls_today = c.max(0) as u64;
        t.tokens_today = tok.max(0) as u64;
        let (c, i, o): (i64, i64, i64) = conn.query_row(
            "SELECT count(*), coalesce(sum(input_tokens), 0), coalesce(sum(output_tokens), 0)
             FROM llm_usage",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?;
        t.calls_total = c.max(0) as u64;
        t.input_tokens_total = i.max(0) as u64;
        t.output_tokens_total = o.max(0) as u64;
        let mut st = conn.prepare(
            "SELECT purpose, count(*), coalesce(sum(input_tokens + output_tokens), 0)
             FROM llm_usage GROUP BY purpose ORDER BY purpose",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, i64>(1)?.max(0) as u64,
                r.get::<_, i64>(2)?.max(0) as u64,
            ))
        })?;
        t.by_purpose = rows.collect::<rusqlite::Result<_>>()?;
        Ok(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn budgets_cut_off() {
        let b = Budget {
            per_day: 1000,
            per_run: 300,
            used_today: 800,
            used_this_run: 0,
        };
        assert_eq!(b.allows(150), Ok(()));
        assert_eq!(b.allows(250), Err(BudgetStop::Day));
        assert_eq!(b.allows(301), Err(BudgetStop::Run));
        let unlimited = Budget {
            per_day: 0,
            per_run: 0,
            used_today: u64::MAX / 2,
            used_this_run: 0,
        };
        assert_eq!(unlimited.allows(1_000_000), Ok(()));
        assert_eq!(day_start(86_400 * 3 + 5), 86_400 * 3);
    }
}
