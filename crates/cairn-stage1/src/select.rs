//! Which sessions phase 1 reads now, and which of their turns.
//!
//! A per-session cursor (the last turn sequence number read) makes every run read only new
//! turns. In `turn` mode a session is ready as soon as a turn has ended; in `idle` mode (Codex
//! style) when its last activity is at least `idle_hours` old. Sessions older than
//! `max_age_days` (turn mode: `turn_window_hours`) are left alone, the newest go first, and at most `max_per_run` are taken.
//! Sidechain (subagent) turns are not read; a Codex turn a rollback dropped, one of a session
//! that is not interactive (`codex exec`, Codex over MCP: Codex's own phase 1 reads only
//! interactive sessions), one of a thread whose memory generation is off (`memory_mode`
//! `disabled`, …: Codex's phase 1 reads only `enabled` threads), and a turn in which the agent
//! wrote memory itself (seed 001's mutual exclusion), are skipped, though the cursor moves past
//! them.

use cairn_config::{ExtractConfig, ExtractMode};
use cairn_memory::{AgentMemoryDirs, parse_time};
use cairn_store::{Store, StoredTurn};
use cairn_transcript::{Agent, TurnStatus};
use rusqlite::{OptionalExtension, params};

use crate::Result;

/// One piece of phase-1 work: new turns of one session.
#[derive(Debug, Clone)]
pub struct Unit {
    pub agent: String,
    pub session_key: String,
    pub session_id: String,
    pub cwd: Option<String>,
    pub git_branch: Option<String>,
    pub source_path: String,
    /// The turns to show the model (may be empty when every new turn was skipped).
    pub turns: Vec<StoredTurn>,
    /// The cursor after this unit: the last turn it covers.
    pub through_seq: i64,
    pub through_key: String,
    pub first_seq: i64,
    /// New turns in which the agent wrote memory itself (not shown to the model).
    pub agent_wrote: usize,
    /// New Codex turns a rollback dropped from the thread (not shown to the model).
    pub rolled_back: usize,
    /// New Codex turns of a session that is not interactive (`codex exec`, Codex over MCP):
    /// not shown to the model, as Codex's own phase 1 reads only interactive sessions.
    pub non_interactive: usize,
    /// New Codex turns of a thread whose memory generation is off (`memory_mode` `disabled`,
    /// …): not shown to the model, as Codex's own phase 1 skips such threads.
    pub memory_disabled: usize,
    /// Last activity in the session (Unix seconds).
    pub last_activity: i64,
}

/// `sessions` columns: id, cwd, git branch, path, updated_at.
type SessionRow = (
    String,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<i64>,
);

/// An open turn quiet for this long counts as ended.
const OPEN_TURN_GRACE_SECS: i64 = 3_600;

/// Whether a Stop hook announced this turn (it queued a capture job for it).
fn stop_seen(conn: &rusqlite::Connection, agent: &str, session_key: &str, turn_key: &str) -> bool {
    conn.query_row(
        "SELECT 1 FROM jobs WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3 LIMIT 1",
        params![agent, session_key, turn_key],
        |_| Ok(()),
    )
    .optional()
    .ok()
    .flatten()
    .is_some()
}

fn turn_time(t: &StoredTurn) -> Option<i64> {
    t.turn
        .ended_at
        .as_deref()
        .or(t.turn.started_at.as_deref())
        .and_then(parse_time)
}

/// The sessions ready for phase 1 at `now`, newest first.
pub fn select_units(
    store: &Store,
    cfg: &ExtractConfig,
    mode: ExtractMode,
    dirs: &AgentMemoryDirs,
    now: i64,
) -> Result<Vec<Unit>> {
    crate::schema::ensure(store.connection())?;
    let conn = store.connection();
    let mut oldest = now - i64::try_from(cfg.max_age_days).unwrap_or(i64::MAX / 4) * 86_400;
    if mode == ExtractMode::Turn {
        oldest =
            oldest.max(now - i64::try_from(cfg.turn_window_hours).unwrap_or(i64::MAX / 4) * 3_600);
    }
    let idle_before = now - i64::try_from(cfg.idle_hours).unwrap_or(i64::MAX / 4) * 3_600;
    // Narrow in SQL first (the worker runs this after every Stop): sessions with new turns,
    // active within the age limit (and, idle mode, quiet long enough), newest first. Turn
    // times are RFC 3339 strings, which compare as text down to the second; a session
    // without times is kept and decided below.
    let stamp = |t: i64| {
        jiff::Timestamp::from_second(t)
            .map(|t| t.strftime("%Y-%m-%dT%H:%M:%S").to_string())
            .unwrap_or_default()
    };
    let quiet_before = match mode {
        ExtractMode::Idle => stamp(idle_before + 1),
        ExtractMode::Turn => "9999".to_string(),
    };
    let limit = i64::try_from(cfg.max_per_run.max(1).saturating_mul(8)).unwrap_or(i64::MAX);
    let candidates: Vec<(String, String, i64)> = {
        let mut st = conn.prepare(
            "SELECT t.agent, t.session_key, coalesce(c.last_seq, -1),
                    max(coalesce(t.ended_at, t.started_at)) AS last FROM turns t
             LEFT JOIN stage1_cursors c ON c.agent = t.agent AND c.session_key = t.session_key
             WHERE t.sidechain = 0 AND t.seq > coalesce(c.last_seq, -1)
               AND (c.retry_at IS NULL OR c.retry_at <= ?1)
             GROUP BY t.agent, t.session_key
             HAVING last IS NULL OR (last >= ?2 AND last < ?3)
             ORDER BY last DESC LIMIT ?4",
        )?;
        let rows = st.query_map(params![now, stamp(oldest), quiet_before, limit], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    let mut units = Vec::new();
    for (agent_s, session_key, cursor) in candidates {
        let Some(agent) = Agent::parse(&agent_s) else {
            continue;
        };
        let session: Option<SessionRow> = conn
            .query_row(
                "SELECT session_id, cwd, git_branch, path, updated_at FROM sessions
                 WHERE agent = ?1 AND session_key = ?2",
                params![agent_s, session_key],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?)),
            )
            .optional()?;
        let all = store.session_turns(agent, &session_key)?;
        let last_activity = all
            .iter()
            .filter_map(turn_time)
            .max()
            .or(session.as_ref().and_then(|s| s.4))
            .unwrap_or(now);
        if last_activity < oldest {
            continue;
        }
        let new: Vec<StoredTurn> = all
            .into_iter()
            .filter(|t| !t.turn.sidechain && i64::from(t.turn.seq) > cursor)
            .collect();
        let take = match mode {
            ExtractMode::Idle => {
                if last_activity > idle_before {
                    continue;
                }
                new.len()
            }
            // Up to the last turn that has ended: closed in the file, announced by a Stop hook
            // (a capture job exists for it), or quiet for an hour. An open turn waits.
            ExtractMode::Turn => match new.iter().rposition(|t| {
                t.turn.status != TurnStatus::Open
                    || stop_seen(conn, &t.agent, &t.session_key, &t.turn.key)
                    || turn_time(t).is_some_and(|at| now - at >= OPEN_TURN_GRACE_SECS)
            }) {
                Some(i) => i + 1,
                None => continue,
            },
        };
        let mut new = new;
        new.truncate(take);
        let Some(last) = new.last() else { continue };
        let through_seq = i64::from(last.turn.seq);
        let through_key = last.turn.key.clone();
        let first_seq = new.first().map_or(through_seq, |t| i64::from(t.turn.seq));
        let source_path = last.source_path.clone();
        let cwd = new
            .iter()
            .rev()
            .find_map(|t| t.turn.cwd.clone())
            .or(session.as_ref().and_then(|s| s.1.clone()));
        let git_branch = new
            .iter()
            .rev()
            .find_map(|t| t.turn.git_branch.clone())
            .or(session.as_ref().and_then(|s| s.2.clone()));
        // What a rollback dropped is no longer part of the conversation, and a program's
        // prompts (a non-interactive session) are not the user's.
        let before = new.len();
        new.retain(|t| !t.turn.rolled_back);
        let rolled_back = before - new.len();
        let before = new.len();
        new.retain(|t| !t.turn.non_interactive);
        let non_interactive = before - new.len();
        // Nor is what was said in a thread the user kept out of memory.
        let before = new.len();
        new.retain(|t| !t.turn.memory_generation_off());
        let memory_disabled = before - new.len();
        let before = new.len();
        new.retain(|t| !dirs.agent_wrote_memory(&t.turn));
        units.push(Unit {
            agent: agent_s,
            session_id: session
                .as_ref()
                .map_or_else(|| session_key.clone(), |s| s.0.clone()),
            session_key,
            cwd,
            git_branch,
            source_path: session
                .as_ref()
                .and_then(|s| s.3.clone())
                .unwrap_or(source_path),
            agent_wrote: before - new.len(),
            rolled_back,
            non_interactive,
            memory_disabled,
            turns: new,
            through_seq,
            through_key,
            first_seq,
            last_activity,
        });
    }
    units.sort_by(|a, b| {
        b.last_activity
            .cmp(&a.last_activity)
            .then_with(|| a.session_key.cmp(&b.session_key))
    });
    units.truncate(cfg.max_per_run.max(1));
    Ok(units)
}
