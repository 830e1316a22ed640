//! One phase-1 run: select, render, call, store, advance cursors, under a lock with one
//! trailing follow-up run for work that arrived meanwhile.

use std::fs::{File, OpenOptions};
use std::path::Path;

use cairn_config::{ExtractConfig, ExtractMode};
use cairn_llm::{JsonRequest, LlmClient, LlmConfig, LlmError, Usage, estimate_tokens};
use cairn_memory::{AgentMemoryDirs, GLOBAL, ListFilter, MemoryStore, MemoryType, project_scope};
use rusqlite::{Connection, params};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::prompt::{KnownMemory, SCHEMA_NAME, SYSTEM, schema, user_prompt};
use crate::select::{Unit, select_units};
use crate::usage::{Budget, BudgetStop, Call, Ledger};
use crate::{Result, Stage1Error};

/// The lock file of phase-1 runs, in the data dir.
pub const LOCK_FILE: &str = "extract.lock";
/// Left by a run that found another one running: the running one goes again.
pub const FOLLOW_UP_FILE: &str = "extract.follow-up";
/// Longest stored summary and raw memory (bytes, after redaction).
const MAX_FIELD_BYTES: usize = 20_000;
/// Known memories shown to the model.
const MAX_KNOWN: usize = 40;
/// Follow-up runs one process makes at most.
const MAX_ROUNDS: usize = 8;

/// A memory the model proposed (stored with its output; merged by phase 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProposedMemory {
    #[serde(rename = "type")]
    pub kind: String,
    /// `global` or the project identity.
    pub scope: String,
    pub name: String,
    pub description: String,
    pub body: String,
    #[serde(default)]
    pub why: String,
    #[serde(default)]
    pub how_to_apply: String,
}

/// One stored phase-1 output.
#[derive(Debug, Clone, Serialize)]
pub struct Stage1Output {
    pub agent: String,
    pub session_key: String,
    pub turn_key: String,
    pub session_id: String,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub source_path: String,
    pub source_updated_at: i64,
    pub rollout_summary: String,
    pub rollout_slug: Option<String>,
    pub raw_memory: String,
    pub memories: Vec<ProposedMemory>,
    pub generated_at: i64,
}

impl Stage1Output {
    /// The key phase 2 diffs by.
    pub fn key(&self) -> String {
        format!("{}:{}:{}", self.agent, self.session_key, self.turn_key)
    }

    /// A hash of everything phase 2 reads.
    pub fn content_hash(&self) -> String {
        let mut s = String::new();
        s.push_str(&self.rollout_summary);
        s.push('\u{0}');
        s.push_str(self.rollout_slug.as_deref().unwrap_or(""));
        s.push('\u{0}');
        s.push_str(&self.raw_memory);
        s.push('\u{0}');
        s.push_str(&serde_json::to_string(&self.memories).unwrap_or_default());
        format!("{:016x}", xxhash_rust::xxh3::xxh3_64(s.as_bytes()))
    }
}

/// What happened to one unit.
#[derive(Debug, Clone, Serialize)]
pub struct UnitOutcome {
    pub agent: String,
    pub session: String,
    pub through_turn: String,
    pub turns: usize,
    /// `stored`, `no_output`, `agent_wrote`, `rolled_back`, `non_interactive` or
    /// `memory_disabled` (nothing to send: every new turn was one in which the agent wrote
    /// memory itself, one a rollback dropped, one of a `codex exec` or MCP-driven session, or
    /// one of a Codex thread whose memory generation is off), `failed`, `budget`.
    pub outcome: String,
    pub memories: usize,
    /// Memories the answer proposed beyond [`MAX_PROPOSED_MEMORIES`], not kept.
    #[serde(skip_serializing_if = "is_zero")]
    pub memories_dropped: usize,
    pub tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// What a run did (or, for an estimate, would do).
#[derive(Debug, Clone, Default, Serialize)]
pub struct ExtractReport {
    /// Another run held the lock: it will make a follow-up run for this one.
    pub busy: bool,
    /// No provider is configured: nothing ran.
    pub disabled: bool,
    pub rounds: usize,
    pub sessions: usize,
    pub stored: usize,
    pub no_output: usize,
    pub failed: usize,
    pub memories_proposed: usize,
    /// Memories proposed beyond the per-session cap ([`MAX_PROPOSED_MEMORIES`]), not kept.
    pub memories_dropped: usize,
    pub input_tokens: u64,
    pub output_tokens: u64,
    /// Why the run stopped early.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget_stop: Option<BudgetStop>,
    /// Sessions left for a later run because the budget was spent.
    pub skipped_for_budget: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    pub units: Vec<UnitOutcome>,
}

/// What running now would cost.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Estimate {
    pub sessions: usize,
    pub turns: usize,
    pub input_tokens: u64,
    /// The most the answers could use (`max_output_tokens` per call).
    pub max_output_tokens: u64,
    pub cost_usd_min: f64,
    pub cost_usd_max: f64,
    pub tokens_used_today: u64,
    pub max_tokens_per_day: u64,
    pub max_tokens_per_run: u64,
    /// Sessions a run would skip because of the budgets.
    pub over_budget: usize,
}

/// Phase 1 over a memory store (its database holds the turns and the outputs).
pub struct Extractor<'a> {
    pub mem: &'a mut MemoryStore,
    pub llm: &'a LlmConfig,
    pub extract: &'a ExtractConfig,
    pub dirs: &'a AgentMemoryDirs,
    pub data_dir: &'a Path,
    /// Told about each session as it is sent (a progress bar on a terminal).
    pub progress: &'a dyn Progress,
}

/// Progress of a run: the sessions of a round, then one call each as the model answers.
pub trait Progress {
    fn start(&self, _sessions: usize) {}
    fn sent(&self, _session: &str) {}
    fn finish(&self) {}
}

/// No progress reporting.
pub struct NoProgress;

impl Progress for NoProgress {}

struct Prepared {
    unit: Unit,
    system: String,
    prompt: String,
    estimate: u64,
}

fn expected_output(llm: &LlmConfig) -> u64 {
    u64::from(llm.max_output_tokens.min(2_000))
}

impl Extractor<'_> {
    fn conn(&self) -> &Connection {
        self.mem.store().connection()
    }

    fn known(&self, scope: &str) -> Result<Vec<KnownMemory>> {
        let mems = self.mem.list(&ListFilter {
            scopes: vec![scope.to_string(), GLOBAL.to_string()],
            ..ListFilter::default()
        })?;
        Ok(mems
            .into_iter()
            .take(MAX_KNOWN)
            .map(|m| KnownMemory {
                id: m.id,
                kind: m.memory_type.as_str().to_string(),
                name: m.name,
                description: m.description,
            })
            .collect())
    }

    fn prepare(&self, unit: Unit) -> Result<Prepared> {
        let scope = unit_scope(&unit);
        let known = self.known(&scope)?;
        let transcript = crate::input::render(&unit.turns, self.extract.input_tokens);
        let prompt = user_prompt(
            &unit.agent,
            &unit.session_id,
            unit.cwd.as_deref(),
            unit.git_branch.as_deref(),
            &known,
            &transcript,
        );
        let estimate = estimate_tokens(SYSTEM) + estimate_tokens(&prompt);
        Ok(Prepared {
            unit,
            system: SYSTEM.to_string(),
            prompt,
            estimate,
        })
    }

    /// What a run in `mode` would send now, without calling anything.
    pub fn estimate(&mut self, mode: ExtractMode, now: i64) -> Result<Estimate> {
        let units = select_units(self.mem.store(), self.extract, mode, self.dirs, now)?;
        let mut budget = Budget::start(self.conn(), self.llm, now)?;
        let mut e = Estimate {
            tokens_used_today: budget.used_today,
            max_tokens_per_day: self.llm.max_tokens_per_day,
            max_tokens_per_run: self.llm.max_tokens_per_run,
            ..Estimate::default()
        };
        for u in units {
            if u.turns.is_empty() {
                continue;
            }
            let p = self.prepare(u)?;
            let out_max = u64::from(self.llm.max_output_tokens);
            e.sessions += 1;
            e.turns += p.unit.turns.len();
            e.input_tokens += p.estimate;
            e.max_output_tokens += out_max;
            let need = p.estimate + expected_output(self.llm);
            if budget.allows(need).is_ok() {
                budget.spend(need);
            } else {
                e.over_budget += 1;
            }
        }
        e.cost_usd_min = self.llm.cost_usd(e.input_tokens, 0);
        e.cost_usd_max = self.llm.cost_usd(e.input_tokens, e.max_output_tokens);
        Ok(e)
    }

    /// Runs phase 1: every ready session, within the budgets. When another run holds the
    /// lock, asks it for a follow-up run and returns at once (`busy`).
    pub fn run(
        &mut self,
        client: &LlmClient,
        mode: ExtractMode,
        now: i64,
    ) -> Result<ExtractReport> {
        let mut report = ExtractReport::default();
        let follow_up = self.data_dir.join(FOLLOW_UP_FILE);
        let Some(_lock) = try_lock(&self.data_dir.join(LOCK_FILE))? else {
            // Coalesce: whatever arrived is read by the running extractor's next round.
            let _ = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(true)
                .open(&follow_up);
            report.busy = true;
            return Ok(report);
        };
        let mut budget = Budget::start(self.conn(), self.llm, now)?;
        let started = std::time::Instant::now();
        for _ in 0..MAX_ROUNDS {
            let _ = std::fs::remove_file(&follow_up);
            report.rounds += 1;
            // The clock moves on while a round runs (a follow-up sees turns that ended meanwhile).
            let now = now + i64::try_from(started.elapsed().as_secs()).unwrap_or(0);
            let stop = self.round(client, mode, now, &mut budget, &mut report)?;
            if stop || !follow_up.exists() {
                break;
            }
        }
        Ok(report)
    }

    /// Puts one phase-1 call of `unit` in the token ledger.
    fn record_call(&self, unit: &Unit, outcome: &str, usage: Usage, now: i64) -> Result<()> {
        Ledger::record(
            self.conn(),
            self.llm,
            &Call {
                purpose: "phase1",
                agent: Some(&unit.agent),
                session_key: Some(&unit.session_key),
                turn_key: Some(&unit.through_key),
                outcome,
                usage,
            },
            now,
        )
    }

    /// One pass over the ready sessions. Returns true when the run must stop.
    fn round(
        &mut self,
        client: &LlmClient,
        mode: ExtractMode,
        now: i64,
        budget: &mut Budget,
        report: &mut ExtractReport,
    ) -> Result<bool> {
        let units = select_units(self.mem.store(), self.extract, mode, self.dirs, now)?;
        self.progress
            .start(units.iter().filter(|u| !u.turns.is_empty()).count());
        let result = self.round_units(client, units, now, budget, report);
        self.progress.finish();
        result
    }

    fn round_units(
        &mut self,
        client: &LlmClient,
        units: Vec<Unit>,
        now: i64,
        budget: &mut Budget,
        report: &mut ExtractReport,
    ) -> Result<bool> {
        let mut stopped = false;
        for u in units {
            if stopped {
                report.skipped_for_budget += usize::from(!u.turns.is_empty());
                continue;
            }
            if u.turns.is_empty() {
                advance(self.conn(), &u, now)?;
                let why = if u.memory_disabled > 0 {
                    "memory_disabled"
                } else if u.non_interactive > 0 {
                    "non_interactive"
                } else if u.rolled_back > 0 && u.agent_wrote == 0 {
                    "rolled_back"
                } else {
                    "agent_wrote"
                };
                report.units.push(outcome(&u, why, 0, 0, None));
                continue;
            }
            let p = self.prepare(u)?;
            if let Err(stop) = budget.allows(p.estimate + expected_output(self.llm)) {
                report.budget_stop = Some(stop);
                report.skipped_for_budget += 1;
                report.units.push(outcome(&p.unit, "budget", 0, 0, None));
                stopped = true;
                continue;
            }
            report.sessions += 1;
            let req = JsonRequest {
                system: p.system.clone(),
                prompt: p.prompt.clone(),
                schema_name: SCHEMA_NAME.into(),
                schema: schema(),
                max_output_tokens: self.llm.max_output_tokens,
            };
            let answer = client.complete_json(&req);
            self.progress.sent(&p.unit.session_id);
            match answer {
                Ok(answer) => {
                    let usage = billed(answer.usage, p.estimate);
                    budget.spend(usage.total());
                    report.input_tokens += usage.input_tokens;
                    report.output_tokens += usage.output_tokens;
                    let (out, dropped) = to_output(&p.unit, &answer.value, now);
                    let n = out.as_ref().map_or(0, |o| o.memories.len());
                    let what = if out.is_some() { "stored" } else { "no_output" };
                    store_output(self.conn(), &p.unit, out.as_ref(), usage, now)?;
                    self.record_call(&p.unit, what, usage, now)?;
                    if out.is_some() {
                        report.stored += 1;
                    } else {
                        report.no_output += 1;
                    }
                    report.memories_proposed += n;
                    report.memories_dropped += dropped;
                    let mut done = outcome(&p.unit, what, n, usage.total(), None);
                    done.memories_dropped = dropped;
                    report.units.push(done);
                }
                Err(e) => {
                    let fatal = matches!(
                        e,
                        LlmError::NotConfigured | LlmError::Config(_) | LlmError::MissingKey(_)
                    );
                    let msg = cairn_redact::redact(&e.to_string()).into_owned();
                    if fatal {
                        // Nothing was sent, and the session is not at fault: no call is
                        // recorded and no backoff is set, so the next run tries again.
                        report.sessions -= 1;
                        report.error = Some(msg);
                        return Ok(true);
                    }
                    // Invalid answers are billed: they count against the budget and in
                    // the report as well as in the ledger.
                    let usage = match e {
                        // Answered, so billed: the estimate when the provider reports nothing.
                        LlmError::InvalidAnswer { .. } => billed(e.usage(), p.estimate),
                        _ => e.usage(),
                    };
                    budget.spend(usage.total());
                    report.input_tokens += usage.input_tokens;
                    report.output_tokens += usage.output_tokens;
                    self.record_call(&p.unit, "error", usage, now)?;
                    record_failure(self.conn(), &p.unit, &msg, now)?;
                    report.failed += 1;
                    report.units.push(outcome(
                        &p.unit,
                        "failed",
                        0,
                        usage.total(),
                        Some(msg.clone()),
                    ));
                }
            }
        }
        Ok(stopped)
    }
}

/// Usage as reported, or the estimate when the provider reported none (a command provider):
/// budgets must count something.
fn billed(u: Usage, estimate: u64) -> Usage {
    if u.total() > 0 {
        u
    } else {
        Usage {
            input_tokens: estimate,
            output_tokens: 0,
        }
    }
}

fn outcome(
    u: &Unit,
    what: &str,
    memories: usize,
    tokens: u64,
    error: Option<String>,
) -> UnitOutcome {
    UnitOutcome {
        agent: u.agent.clone(),
        session: u.session_id.clone(),
        through_turn: u.through_key.clone(),
        turns: u.turns.len(),
        outcome: what.into(),
        memories,
        memories_dropped: 0,
        tokens,
        error,
    }
}

fn unit_scope(u: &Unit) -> String {
    match u.cwd.as_deref().filter(|c| Path::new(c).is_absolute()) {
        Some(c) => project_scope(Path::new(c)),
        None => GLOBAL.to_string(),
    }
}

fn clean(v: &Value, max: usize) -> String {
    let s = v.as_str().unwrap_or("").trim();
    let r = cairn_redact::redact(s);
    crate::input::head_tail(&r, max)
}

fn slug(v: &Value) -> Option<String> {
    let s: String = v
        .as_str()?
        .trim()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_lowercase()
            } else {
                '-'
            }
        })
        .take(80)
        .collect();
    let s = s.trim_matches('-').to_string();
    (!s.is_empty()).then_some(s)
}

/// Memories kept from one answer: a session states a handful; a runaway answer of hundreds
/// would flood the store and hold the database for a long merge.
pub const MAX_PROPOSED_MEMORIES: usize = 20;

/// The model's answer as a stored output, redacted again field by field, at most
/// [`MAX_PROPOSED_MEMORIES`] memories; `None` when it says nothing is worth keeping. The
/// count is of the usable memories left out by the cap, for the report.
fn to_output(u: &Unit, v: &Value, now: i64) -> (Option<Stage1Output>, usize) {
    let project = unit_scope(u);
    let proposed = v["memories"].as_array().map_or(&[][..], |a| a.as_slice());
    // A memory needs a known type and a body; only the first few that do are cleaned (each
    // field is redacted again), the rest are counted.
    let usable = |m: &&Value| {
        m["type"].as_str().and_then(MemoryType::parse).is_some()
            && m["body"].as_str().is_some_and(|b| !b.trim().is_empty())
    };
    let mut rest = proposed.iter().filter(usable);
    let memories: Vec<ProposedMemory> = rest
        .by_ref()
        .filter_map(|m| {
            let kind = MemoryType::parse(m["type"].as_str()?)?;
            let body = clean(&m["body"], 4_000);
            if body.is_empty() {
                return None;
            }
            let scope = if kind == MemoryType::User || m["scope"].as_str() == Some("global") {
                GLOBAL.to_string()
            } else {
                project.clone()
            };
            Some(ProposedMemory {
                kind: kind.as_str().into(),
                scope,
                name: clean(&m["name"], 200),
                description: clean(&m["description"], 400),
                body,
                why: clean(&m["why"], 2_000),
                how_to_apply: clean(&m["how_to_apply"], 2_000),
            })
        })
        .take(MAX_PROPOSED_MEMORIES)
        .collect();
    let dropped = rest.count();
    let summary = clean(&v["rollout_summary"], MAX_FIELD_BYTES);
    let raw = clean(&v["raw_memory"], MAX_FIELD_BYTES);
    if summary.is_empty() && raw.is_empty() && memories.is_empty() {
        return (None, dropped);
    }
    let out = Stage1Output {
        agent: u.agent.clone(),
        session_key: u.session_key.clone(),
        turn_key: u.through_key.clone(),
        session_id: u.session_id.clone(),
        cwd: u.cwd.clone(),
        git_branch: u.git_branch.clone(),
        source_path: u.source_path.clone(),
        source_updated_at: u.last_activity,
        rollout_summary: summary,
        rollout_slug: slug(&v["rollout_slug"]),
        raw_memory: raw,
        memories,
        generated_at: now,
    };
    (Some(out), dropped)
}

fn advance(conn: &Connection, u: &Unit, now: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO stage1_cursors(agent, session_key, last_seq, last_turn_key, attempts,
            retry_at, last_error, updated_at)
         VALUES (?1, ?2, ?3, ?4, 0, NULL, NULL, ?5)
         ON CONFLICT(agent, session_key) DO UPDATE SET last_seq = max(last_seq, excluded.last_seq),
            last_turn_key = excluded.last_turn_key, attempts = 0, retry_at = NULL,
            last_error = NULL, updated_at = excluded.updated_at",
        params![u.agent, u.session_key, u.through_seq, u.through_key, now],
    )?;
    Ok(())
}

/// A failed unit is retried later, with backoff (10 minutes, doubling, at most a day).
fn record_failure(conn: &Connection, u: &Unit, error: &str, now: i64) -> Result<()> {
    conn.execute(
        "INSERT INTO stage1_cursors(agent, session_key, last_seq, attempts, retry_at, last_error,
            updated_at)
         VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6)
         ON CONFLICT(agent, session_key) DO UPDATE SET attempts = attempts + 1,
            retry_at = ?6 + min(86400, 600 * (1 << min(attempts, 8))), last_error = ?5,
            updated_at = ?6",
        params![
            u.agent,
            u.session_key,
            u.first_seq - 1,
            now + 600,
            error,
            now
        ],
    )?;
    Ok(())
}

/// Stores an output (or drops the row of a no-output answer) and moves the cursor, in one
/// transaction.
fn store_output(
    conn: &Connection,
    u: &Unit,
    out: Option<&Stage1Output>,
    usage: Usage,
    now: i64,
) -> Result<()> {
    let tx = conn.unchecked_transaction()?;
    match out {
        Some(o) => {
            tx.execute(
                "INSERT INTO stage1_outputs(agent, session_key, turn_key, session_id, cwd,
                    git_branch, source_path, first_seq, last_seq, source_updated_at,
                    rollout_summary, rollout_slug, raw_memory, memories, generated_at,
                    input_tokens, output_tokens)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)
                 ON CONFLICT(agent, session_key, turn_key) DO UPDATE SET
                    session_id = excluded.session_id, cwd = excluded.cwd,
                    git_branch = excluded.git_branch, source_path = excluded.source_path,
                    first_seq = excluded.first_seq, last_seq = excluded.last_seq,
                    source_updated_at = excluded.source_updated_at,
                    rollout_summary = excluded.rollout_summary,
                    rollout_slug = excluded.rollout_slug, raw_memory = excluded.raw_memory,
                    memories = excluded.memories, generated_at = excluded.generated_at,
                    input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens",
                params![
                    o.agent,
                    o.session_key,
                    o.turn_key,
                    o.session_id,
                    o.cwd,
                    o.git_branch,
                    o.source_path,
                    u.first_seq,
                    u.through_seq,
                    o.source_updated_at,
                    o.rollout_summary,
                    o.rollout_slug,
                    o.raw_memory,
                    serde_json::to_string(&o.memories).unwrap_or_else(|_| "[]".into()),
                    o.generated_at,
                    usage.input_tokens as i64,
                    usage.output_tokens as i64
                ],
            )?;
        }
        None => {
            tx.execute(
                "DELETE FROM stage1_outputs WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
                params![u.agent, u.session_key, u.through_key],
            )?;
        }
    }
    advance(&tx, u, now)?;
    tx.commit()?;
    Ok(())
}

/// Every stored phase-1 output, oldest first. Its `source_path` is where its session's file
/// is now (a Codex rollout moved to `archived_sessions/` after phase 1 read it), else where
/// it was when phase 1 read it.
pub fn outputs(conn: &Connection) -> Result<Vec<Stage1Output>> {
    crate::schema::ensure(conn)?;
    let mut st = conn.prepare(
        "SELECT o.agent, o.session_key, o.turn_key, o.session_id, o.cwd, o.git_branch,
            coalesce(s.path, o.source_path), o.source_updated_at, o.rollout_summary,
            o.rollout_slug, o.raw_memory, o.memories, o.generated_at
         FROM stage1_outputs o
         LEFT JOIN sessions s ON s.agent = o.agent AND s.session_key = o.session_key
         ORDER BY o.source_updated_at, o.agent, o.session_key, o.turn_key",
    )?;
    let rows = st.query_map([], |r| {
        let mems: String = r.get(11)?;
        Ok(Stage1Output {
            agent: r.get(0)?,
            session_key: r.get(1)?,
            turn_key: r.get(2)?,
            session_id: r.get(3)?,
            cwd: r.get(4)?,
            git_branch: r.get(5)?,
            source_path: r.get(6)?,
            source_updated_at: r.get(7)?,
            rollout_summary: r.get(8)?,
            rollout_slug: r.get(9)?,
            raw_memory: r.get(10)?,
            memories: serde_json::from_str(&mems).unwrap_or_default(),
            generated_at: r.get(12)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// The memories an output proposes, for phase 2.
pub fn proposed_memories(o: &Stage1Output) -> &[ProposedMemory] {
    &o.memories
}

/// Deletes outputs (phase-2 retention).
pub fn delete_outputs(conn: &Connection, keys: &[(String, String, String)]) -> Result<usize> {
    let mut n = 0;
    for (a, s, t) in keys {
        n += conn.execute(
            "DELETE FROM stage1_outputs WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
            params![a, s, t],
        )?;
    }
    Ok(n)
}

fn try_lock(path: &Path) -> Result<Option<File>> {
    cairn_store::lockfile::try_lock_file(path).map_err(|source| Stage1Error::Lock {
        path: path.to_path_buf(),
        source,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A runaway answer of hundreds of memories keeps the first [`MAX_PROPOSED_MEMORIES`].
    #[test]
    fn an_answer_keeps_at_most_the_cap_of_memories() {
        let unit = Unit {
            agent: "codex".into(),
            session_key: "s".into(),
            session_id: "s".into(),
            cwd: Some("/w/app".into()),
            git_branch: None,
            source_path: "/h/.codex/sessions/r.jsonl".into(),
            turns: Vec::new(),
            through_seq: 1,
            through_key: "t1".into(),
            first_seq: 1,
            agent_wrote: 0,
            rolled_back: 0,
            non_interactive: 0,
            memory_disabled: 0,
            last_activity: 0,
        };
        let memories: Vec<Value> = (0..900)
            .map(|i| {
                serde_json::json!({"type": "project", "scope": "project", "name": format!("n{i}"),
                    "description": "d", "body": format!("fact number {i}"), "why": "", "how_to_apply": ""})
            })
            .collect();
        let answer = serde_json::json!({"rollout_summary": "# s", "rollout_slug": null,
            "raw_memory": "", "memories": memories});
        let (out, dropped) = to_output(&unit, &answer, 0);
        let out = out.expect("output");
        assert_eq!(out.memories.len(), MAX_PROPOSED_MEMORIES);
        assert_eq!(out.memories[0].body, "fact number 0");
        assert_eq!(dropped, 900 - MAX_PROPOSED_MEMORIES);
    }
}
