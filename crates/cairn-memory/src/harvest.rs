//! Running extraction over the ingested turns: idempotent, tombstone-respecting.

use std::path::Path;

use cairn_store::StoredTurn;
use cairn_transcript::{Event, TurnStatus};
use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::error::Result;
use crate::extract::{AgentMemoryDirs, candidates};
use crate::model::{MemoryType, NewMemory, Source, parse_time};
use crate::scope::{GLOBAL, project_scope};
use crate::store::{Action, MemoryStore, write_new_in};

/// Bumped when the extractor's rules change, so every turn is looked at again (origins keep
/// re-runs from duplicating and from reviving forgotten memories).
pub const EXTRACTOR_VERSION: u32 = 9;

/// Bumped when the dedupe decision ([`crate::similar::relation`]) changes, so the live
/// memories are compared again once (a store kept by an older build holds pairs the current
/// rules would not have let stand: "We use Jest" beside "we moved from Jest to Vitest").
pub const RELATION_VERSION: u32 = 7;

/// The store `meta` key holding the [`RELATION_VERSION`] the live memories were compared
/// with.
pub const RELATION_MARK: &str = "memory_relation_mark";

/// The store `meta` key holding the redactor's [`cairn_redact::RULES_VERSION`] the memories'
/// texts were last redacted with.
pub const REDACTION_MARK: &str = "memory_redaction_mark";

/// The store `meta` key holding the [`crate::keywords::VERSION`] the memories' keywords were
/// derived by.
pub const KEYWORDS_MARK: &str = "memory_keywords_mark";

/// The store `meta` key of the extraction mark: `<tag>:<revision>`, where the tag is the
/// extractor version and a hash of the agents' memory dirs (both decide what a turn yields)
/// and the revision is the store's turn revision up to which every turn was looked at.
pub const EXTRACTION_MARK: &str = "memory_extraction_mark";

fn mark_tag(dirs: &AgentMemoryDirs) -> String {
    format!(
        "v{EXTRACTOR_VERSION}-{:016x}",
        xxhash_rust::xxh3::xxh3_64(format!("{dirs:?}").as_bytes())
    )
}

/// An open turn younger than this is left for a later run (the agent may still write memory
/// itself before the turn ends).
const OPEN_TURN_GRACE_SECS: i64 = 3600;

/// What an extraction run did.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct ExtractReport {
    /// Turns looked at in this run (new or changed since the last run).
    pub turns: usize,
    /// Memory statements found in them.
    pub statements: usize,
    /// New memories.
    pub created: usize,
    /// Existing memories that said the same and were updated.
    pub updated: usize,
    /// Existing memories replaced by a newer statement on the same subject.
    pub superseded: usize,
    /// Statements whose memory was forgotten (tombstones kept them out).
    pub forgotten_skipped: usize,
    /// Turns in which the agent wrote memory itself (not extracted again).
    pub agent_wrote: usize,
    /// Open turns left for a later run.
    pub deferred: usize,
    /// Statements about a project from a turn without a working directory: with no project
    /// to keep them under, they are not kept (they would reach every project).
    pub no_project: usize,
    /// Stored turns whose data could not be read back (a damaged row): skipped.
    pub unreadable: usize,
    /// Memories that an earlier version of the rules took from a turn and the current rules,
    /// reading it again, do not: withdrawn (text kept, out of recall and the views), unless
    /// something changed them since.
    pub withdrawn: usize,
    /// Memories withdrawn when their turn's text changed, back now that it gives them again;
    /// and memories an older version of the dedupe rules let another replace, back now that
    /// the rules read the two as about different things; and memories a withdrawn one had
    /// replaced, back when its turn was rolled back, found not interactive, or its thread's
    /// memory turned off.
    pub restored: usize,
    /// Memories forgotten because a turn asked to forget them ("forget the rule about
    /// squashing commits").
    pub retracted: usize,
    /// Statements of turns copied from another session (a Codex fork carries its parent's
    /// turns): the statement was taken there already, and what became of its memory since
    /// (replaced, forgotten) holds.
    pub copied: usize,
    /// Codex turns a rollback dropped from their thread (the user backtracked): what was said
    /// there gives no memory, and what such a turn alone gave before is withdrawn.
    pub rolled_back: usize,
    /// Codex turns of sessions no person types in (`codex exec` run by a script, Codex driven
    /// over MCP by another program): their prompts give no memory, as in Codex's own memory
    /// pipeline, and what such a turn alone gave before is withdrawn.
    pub non_interactive: usize,
    /// Memories whose text the redactor's newer rules changed: a secret an older build kept
    /// in clear is taken out.
    pub redacted: usize,
    /// Codex turns of threads whose memory generation is off (`memory_mode` `disabled`: the
    /// user set `[memories] generate_memories = false` or turned it off for the thread; or
    /// `polluted`): they give no memory, as Codex's own pipeline skips such threads, and what
    /// such a turn alone gave before (read by an older build, or before the mode was set) is
    /// withdrawn.
    pub memory_disabled: usize,
    /// Memories whose turn is read from a file at another path now (Codex moved the rollout
    /// to `archived_sessions/`): their provenance names the new file.
    pub sources_moved: usize,
}

fn turn_time(t: &StoredTurn) -> Option<i64> {
    t.turn
        .events
        .iter()
        .find_map(|e| match e {
            Event::UserPrompt { at: Some(a), .. } => parse_time(a),
            _ => None,
        })
        .or_else(|| t.turn.started_at.as_deref().and_then(parse_time))
}

fn fingerprint(t: &StoredTurn, agent_wrote: bool, claude_saved: bool) -> String {
    let mut said = format!(
        "{EXTRACTOR_VERSION}\u{0}{agent_wrote}\u{0}{}",
        t.turn.user_texts().join("\u{0}")
    );
    // (Only when it is so: the fingerprints of every other turn stay what they were.)
    if claude_saved {
        said.push_str("\u{0}claude-saved");
    }
    if let Some(why) = not_the_users_word(t) {
        said.push('\u{0}');
        said.push_str(why);
    }
    let h = xxhash_rust::xxh3::xxh3_64(said.as_bytes());
    format!("{h:016x}")
}

/// Why what turn `t` says is not to be kept although the user's own session holds it, as
/// recorded for the turn: `rolled-back` (a rollback dropped it from the thread),
/// `not-interactive` (a program wrote its prompts: `codex exec`, Codex over MCP), or
/// `memory-disabled` (the user kept the Codex thread out of memory: its `memory_mode` is not
/// `enabled`). Such a turn gives no memory, and what it alone gave before is withdrawn.
fn not_the_users_word(t: &StoredTurn) -> Option<&'static str> {
    if t.turn.rolled_back {
        Some("rolled-back")
    } else if t.turn.non_interactive {
        Some("not-interactive")
    } else if t.turn.memory_generation_off() {
        Some("memory-disabled")
    } else {
        None
    }
}

/// The key of one statement of one turn (what a tombstone remembers):
/// `agent:session:turn:hash of the rule`.
fn origin_key(t: &StoredTurn, rule: &str) -> String {
    format!("{}:{}:{}", t.agent, t.session_key, fork_suffix(t, rule))
}

/// The part of [`origin_key`] a branched or forked session shares with its original (the
/// turn keeps its key, the session gets a new one): `turn:hash of the rule`.
fn fork_suffix(t: &StoredTurn, rule: &str) -> String {
    let norm: String = rule
        .chars()
        .filter(|c| c.is_alphanumeric())
        .flat_map(char::to_lowercase)
        .collect();
    format!(
        "{}:{:016x}",
        t.turn.key,
        xxhash_rust::xxh3::xxh3_64(norm.as_bytes())
    )
}

/// The memory a statement of another session of the same agent gave, when turn `t` is a copy
/// of that session's turn (the same turn key and the same rule): a fork or a branch of it.
/// Turns named by their position (`task-3` of a rollout without turn ids) are not unique
/// across sessions, so they are never taken for copies.
fn copied_statement(
    conn: &rusqlite::Connection,
    t: &StoredTurn,
    rule: &str,
) -> Result<Option<String>> {
    let key = &t.turn.key;
    let positional = key
        .strip_prefix("task-")
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    if positional || key.is_empty() {
        return Ok(None);
    }
    let escape = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    };
    let pattern = format!("{}:%:{}", escape(&t.agent), escape(&fork_suffix(t, rule)));
    let own = format!("{}:{}:", t.agent, t.session_key);
    let mut st = conn.prepare_cached(
        "SELECT origin, memory_id FROM memory_origins WHERE origin LIKE ?1 ESCAPE '\\'",
    )?;
    let found = st
        .query_map([pattern], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    Ok(found
        .into_iter()
        .find(|(origin, _)| !origin.starts_with(&own))
        .map(|(_, id)| id))
}

/// The memories Claude Code's background extraction saved into the files `saved` (its
/// `memory_saved` record in turn `t`): of the memories this session gave (this turn's `own`
/// and earlier ones: the record can land after the next prompt), those whose words a saved
/// file holds (three in five at least). When no saved file can be read, this turn's own.
fn held_by_claude(
    conn: &rusqlite::Connection,
    t: &StoredTurn,
    saved: &[String],
    own: &[String],
) -> Result<Vec<String>> {
    let bodies: Vec<std::collections::HashSet<String>> = saved
        .iter()
        .filter_map(|p| {
            let meta = std::fs::symlink_metadata(p).ok()?;
            (meta.is_file() && meta.len() <= 64 * 1024).then_some(())?;
            let text = std::fs::read_to_string(p).ok()?;
            Some(crate::text::content_words(&text))
        })
        .collect();
    if bodies.is_empty() {
        return Ok(own.to_vec());
    }
    let escape = |s: &str| {
        s.replace('\\', "\\\\")
            .replace('%', "\\%")
            .replace('_', "\\_")
    };
    let pattern = format!("{}:{}:%", escape(&t.agent), escape(&t.session_key));
    let mut st = conn.prepare_cached(
        "SELECT DISTINCT m.id, m.rule FROM memory_origins o JOIN memories m ON m.id = o.memory_id
         WHERE o.origin LIKE ?1 ESCAPE '\\' AND m.forgotten_at IS NULL",
    )?;
    let mut rows: Vec<(String, String)> = st
        .query_map([pattern], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for id in own {
        if !rows.iter().any(|(i, _)| i == id)
            && let Some(m) = crate::store::get_memory(conn, id)?
        {
            rows.push((m.id, m.rule));
        }
    }
    Ok(rows
        .into_iter()
        .filter(|(_, rule)| {
            let words = crate::text::content_words(rule);
            !words.is_empty()
                && bodies.iter().any(|b| {
                    let shared = words.iter().filter(|w| b.contains(*w)).count();
                    shared * 5 >= words.len() * 3
                })
        })
        .map(|(id, _)| id)
        .collect())
}

/// The live memories a retraction of `subject`, said at `at`, names: of the turn's project
/// or global, said before it and not in `own`, holding most of the subject's
/// words (three in five at least, and two when it has two): the one holding the most, or
/// each of those that hold all of them (at most three: "forget the rules about squashing").
fn retraction_targets(
    conn: &rusqlite::Connection,
    subject: &str,
    project: Option<&str>,
    at: i64,
    own: &[String],
) -> Result<Vec<String>> {
    let wanted = crate::text::content_words(subject);
    if wanted.is_empty() {
        return Ok(Vec::new());
    }
    let mut st = conn.prepare(
        "SELECT id, name, rule, updated_at FROM memories
         WHERE forgotten_at IS NULL AND superseded_by IS NULL AND created_at <= ?3
           AND (scope = ?1 OR scope = ?2)",
    )?;
    let rows = st
        .query_map(params![GLOBAL, project.unwrap_or(GLOBAL), at], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, i64>(3)?,
            ))
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?;
    let need = wanted.len().min(2);
    let mut scored: Vec<(usize, i64, String)> = rows
        .into_iter()
        .filter(|(id, ..)| !own.contains(id))
        .filter_map(|(id, name, rule, updated)| {
            let words = crate::text::content_words(&format!("{name} {rule}"));
            let shared = wanted.iter().filter(|w| words.contains(*w)).count();
            (shared >= need && shared * 5 >= wanted.len() * 3).then_some((shared, updated, id))
        })
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.cmp(&a.1)));
    let Some(best) = scored.first().map(|s| s.0) else {
        return Ok(Vec::new());
    };
    let take = if best == wanted.len() { 3 } else { 1 };
    Ok(scored
        .into_iter()
        .take_while(|s| s.0 == best)
        .take(take)
        .map(|s| s.2)
        .collect())
}

/// Puts memory `m`, as rewritten in `tx`, back into the search index when it is live.
fn index_again(
    tx: &rusqlite::Connection,
    recall: &mut cairn_recall::Recall,
    m: &crate::Memory,
) -> Result<()> {
    if m.is_live()
        && let Some(back) = crate::store::get_memory(tx, &m.id)?
    {
        recall.upsert(tx, &crate::store::document(&back))?;
    }
    Ok(())
}

/// Where a statement's memory is kept: global for one about the person or said to hold
/// everywhere, else the turn's project (`None`: a turn without one).
fn statement_scope(c: &crate::extract::Candidate, project: Option<&String>) -> Option<String> {
    if c.memory_type == MemoryType::User || c.personal {
        Some(GLOBAL.to_string())
    } else {
        project.cloned()
    }
}

/// An origin of a forgotten memory.
struct ForgottenOrigin {
    origin: String,
    memory_id: String,
    forgotten_at: i64,
}

/// Every origin of a forgotten memory (few: what the user forgot), read once per run instead
/// of a scan of every origin per new statement.
fn forgotten_origins(conn: &rusqlite::Connection) -> Result<Vec<ForgottenOrigin>> {
    let mut st = conn.prepare(
        "SELECT o.origin, o.memory_id, m.forgotten_at FROM memories m
         JOIN memory_origins o ON o.memory_id = m.id WHERE m.forgotten_at IS NOT NULL",
    )?;
    let rows = st.query_map([], |r| {
        Ok(ForgottenOrigin {
            origin: r.get(0)?,
            memory_id: r.get(1)?,
            forgotten_at: r.get(2)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

impl MemoryStore {
    /// Puts back what the person forgot, from the file beside the views, into a database
    /// that lacks it (rebuilt from the transcripts), before any statement is read again;
    /// a memory made from a forgotten statement since is forgotten again.
    pub(crate) fn adopt_tombstones(&mut self, now: i64) -> Result<()> {
        let Some(root) = self.views.clone() else {
            return Ok(());
        };
        if !root.join(crate::tombstones::FILE).is_file() {
            return Ok(());
        }
        // Read first: the usual answer is that nothing is missing, which costs no write lock.
        let missing = crate::tombstones::missing(self.store.connection(), &root)?;
        if missing.is_empty() {
            return Ok(());
        }
        let (tx, recall) = self.begin_write()?;
        crate::tombstones::restore(&tx, &missing)?;
        for id in &missing.forget_again {
            crate::store::forget_in(&tx, recall, id, now)?;
        }
        tx.commit()?;
        Ok(())
    }

    /// Extracts memories from every ingested turn not extracted yet (or whose prompt changed),
    /// then regenerates the views. Sidechain (subagent) turns are skipped: their prompt comes
    /// from the main agent, not from the user. A Codex turn a rollback dropped, one of a
    /// session that is not interactive (`codex exec`, Codex over MCP), or one of a thread
    /// whose memory generation is off (`memory_mode`), gives nothing: what it alone gave
    /// before is withdrawn, and what that replaced comes back.
    ///
    /// Incremental: only turns whose store revision is above the mark of the last run are
    /// read (see [`EXTRACTION_MARK`]); the mark never passes a turn left for later (an open
    /// turn in its grace period), and a new extractor version or other agent memory dirs
    /// start from the first turn again.
    pub fn extract(&mut self, dirs: &AgentMemoryDirs, now: i64) -> Result<ExtractReport> {
        let report = self.extract_turns(dirs, now)?;
        self.refresh_views(now)?;
        Ok(report)
    }

    /// [`MemoryStore::extract`] without regenerating the views, for a caller that refreshes
    /// them right after anyway (`cairn sync` consolidates next).
    pub fn extract_turns(&mut self, dirs: &AgentMemoryDirs, now: i64) -> Result<ExtractReport> {
        self.extract_turns_with_progress(dirs, now, &mut |_, _| {})
    }

    /// [`MemoryStore::extract_turns`], telling `progress` how many of the changed turns were
    /// looked at, out of how many (a first run over months of sessions takes minutes).
    pub fn extract_turns_with_progress(
        &mut self,
        dirs: &AgentMemoryDirs,
        now: i64,
        progress: &mut dyn FnMut(usize, usize),
    ) -> Result<ExtractReport> {
        self.adopt_tombstones(now)?;
        let tag = mark_tag(dirs);
        let since = self.extraction_mark(&tag)?;
        let changed = self.store.turns_changed_since(since)?;
        // In the order they were said, not read: a first run over months of sessions must
        // let the later statement win ("use uv, not poetry" after "we use poetry"), whatever
        // order the files were ingested in.
        let mut turns = changed.turns;
        turns.sort_by_cached_key(|(revision, t)| (turn_time(t).unwrap_or(i64::MAX), *revision));
        let mut mark = changed.unreadable.iter().copied().fold(since, i64::max);
        // The revision just below the first turn left for a later run, if any.
        let mut hold: Option<i64> = None;
        let mut report = ExtractReport {
            unreadable: changed.unreadable.len(),
            ..ExtractReport::default()
        };
        report.sources_moved = self.follow_moved_sources(&turns)?;
        let mut opened = false;
        // Origins of forgotten memories, read once per run when first needed.
        let mut forgotten: Option<Vec<ForgottenOrigin>> = None;
        for (i, (revision, t)) in turns.iter().enumerate() {
            if i % 64 == 0 {
                progress(i, turns.len());
            }
            mark = mark.max(*revision);
            if t.turn.sidechain || t.turn.user_texts().is_empty() {
                continue;
            }
            let discounted = not_the_users_word(t).is_some();
            let wrote = !discounted && dirs.agent_wrote_memory(&t.turn);
            let claude_saved = if !discounted && !wrote {
                dirs.claude_saved_files(&t.turn)
            } else {
                Vec::new()
            };
            let fp = fingerprint(t, wrote, !claude_saved.is_empty());
            if self.extracted_fingerprint(t)?.as_deref() == Some(fp.as_str()) {
                continue;
            }
            report.rolled_back += usize::from(t.turn.rolled_back);
            report.non_interactive += usize::from(!t.turn.rolled_back && t.turn.non_interactive);
            report.memory_disabled += usize::from(
                !t.turn.rolled_back && !t.turn.non_interactive && t.turn.memory_generation_off(),
            );
            let at = turn_time(t).unwrap_or(now);
            if t.turn.status == TurnStatus::Open
                && now - at < OPEN_TURN_GRACE_SECS
                && !wrote
                && !discounted
            {
                report.deferred += 1;
                hold = Some(hold.map_or(revision - 1, |h| h.min(revision - 1)));
                continue;
            }
            report.turns += 1;
            if !opened {
                self.recall_index()?;
                opened = true;
            }
            self.extract_turn(
                t,
                wrote,
                &claude_saved,
                &fp,
                now,
                &mut forgotten,
                &mut report,
            )?;
        }
        // Every revision read is above `since`, so a hold never takes the mark below it.
        progress(turns.len(), turns.len());
        let mark = hold.map_or(mark, |h| mark.min(h));
        if mark != since {
            self.store
                .set_meta(EXTRACTION_MARK, &format!("{tag}:{mark}"))?;
        }
        let (retired, restored) = self.compare_live_again()?;
        report.superseded += retired;
        report.restored += restored;
        report.redacted += self.redact_again()?;
        self.index_keywords_again()?;
        Ok(report)
    }

    /// Every memory that still has its text (live, retired or replaced; not forgotten).
    fn memories_with_text(&self) -> Result<Vec<crate::Memory>> {
        let mut st = self.store.connection().prepare(&format!(
            "SELECT {} FROM memories WHERE rule != ''",
            crate::store::COLUMNS
        ))?;
        Ok(st
            .query_map([], crate::store::read_memory)?
            .collect::<rusqlite::Result<_>>()?)
    }

    /// Once per [`crate::keywords::VERSION`]: every memory's keywords are derived again and
    /// the live ones indexed again, so a memory stored before a table grew is found by it.
    fn index_keywords_again(&mut self) -> Result<()> {
        let version = crate::keywords::VERSION.to_string();
        if self.store.meta(KEYWORDS_MARK)?.as_deref() == Some(version.as_str()) {
            return Ok(());
        }
        let all = self.memories_with_text()?;
        if !all.is_empty() {
            let (tx, recall) = self.begin_write()?;
            for m in &all {
                let keywords =
                    crate::keywords::keywords_for(m.memory_type, &format!("{} {}", m.name, m.rule));
                if keywords == m.keywords {
                    continue;
                }
                tx.execute(
                    "UPDATE memories SET keywords = ?2 WHERE id = ?1",
                    rusqlite::params![m.id, keywords.join("\n")],
                )?;
                index_again(&tx, recall, m)?;
            }
            tx.commit()?;
        }
        self.store.set_meta(KEYWORDS_MARK, &version)?;
        Ok(())
    }

    /// Once per version of the redactor's rules: every memory's text is redacted again, so a
    /// secret an older build's rules missed ("staging password: tangerine-sunset-river") is
    /// taken out of the store, the search index and the views. Returns how many changed.
    fn redact_again(&mut self) -> Result<usize> {
        let version = cairn_redact::RULES_VERSION.to_string();
        if self.store.meta(REDACTION_MARK)?.as_deref() == Some(version.as_str()) {
            return Ok(0);
        }
        let all = self.memories_with_text()?;
        let redact = |s: &str| cairn_redact::redact(s).into_owned();
        let changed: Vec<crate::Memory> = all
            .into_iter()
            .filter_map(|m| {
                let fixed = crate::Memory {
                    rule: redact(&m.rule),
                    why: m.why.as_deref().map(redact),
                    how: m.how.as_deref().map(redact),
                    name: redact(&m.name),
                    description: redact(&m.description),
                    ..m.clone()
                };
                (fixed != m).then_some(fixed)
            })
            .collect();
        if !changed.is_empty() {
            let (tx, recall) = self.begin_write()?;
            for m in &changed {
                let keywords =
                    crate::keywords::keywords_for(m.memory_type, &format!("{} {}", m.name, m.rule));
                tx.execute(
                    "UPDATE memories SET rule = ?2, why = ?3, how = ?4, name = ?5,
                        description = ?6, keywords = ?7 WHERE id = ?1",
                    rusqlite::params![
                        m.id,
                        m.rule,
                        m.why,
                        m.how,
                        m.name,
                        m.description,
                        keywords.join("\n")
                    ],
                )?;
                index_again(&tx, recall, m)?;
            }
            tx.commit()?;
        }
        self.store.set_meta(REDACTION_MARK, &version)?;
        Ok(changed.len())
    }

    /// Gives the memories each of `turns` gave (by their provenance: agent, session, turn)
    /// the path the turn is read from now: a Codex rollout moved to `archived_sessions/` is
    /// the same turn in another file, and what it said names the file that holds it. Returns
    /// how many memories changed. (The path is no part of what recall indexes, so the index
    /// is left as it is.)
    fn follow_moved_sources(&mut self, turns: &[(i64, StoredTurn)]) -> Result<usize> {
        if turns.is_empty() {
            return Ok(0);
        }
        let tx = self
            .store
            .connection_mut()
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut moved = 0;
        {
            let mut st = tx.prepare_cached(
                "UPDATE memories SET source_path = ?4
                 WHERE source_agent = ?1 AND source_session = ?2 AND source_turn = ?3
                   AND source_path IS NOT NULL AND source_path IS NOT ?4",
            )?;
            for (_, t) in turns {
                if t.source_path.is_empty() {
                    continue;
                }
                moved += st.execute(params![t.agent, t.session_key, t.turn.key, t.source_path])?;
            }
        }
        tx.commit()?;
        Ok(moved)
    }

    /// Once per [`RELATION_VERSION`], before the live memories are compared again: a memory
    /// an older version let a newer one replace, which the current rules read as about
    /// another thing ("use dbt for the billing pipeline, not Spark" retired by "use Spark for
    /// the email pipeline, not Flink"), comes back. Only a memory replaced by one that is
    /// still live, in the same scope, with its text (a forgotten one has none). Returns how
    /// many came back.
    fn restore_not_replaced(&mut self) -> Result<usize> {
        let pairs: Vec<(String, String)> = {
            let mut st = self.store.connection().prepare(
                "SELECT o.id, o.superseded_by FROM memories o
                 JOIN memories n ON n.id = o.superseded_by
                 WHERE o.forgotten_at IS NULL AND o.rule != ''
                   AND n.forgotten_at IS NULL AND n.superseded_by IS NULL AND n.scope = o.scope",
            )?;
            st.query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
                .collect::<rusqlite::Result<_>>()?
        };
        let mut back = Vec::new();
        for (old_id, new_id) in pairs {
            let (Some(old), Some(new)) = (self.get(&old_id)?, self.get(&new_id)?) else {
                continue;
            };
            let cos = cairn_embed::cosine(
                &cairn_embed::embed(&new.rule),
                &cairn_embed::embed(&old.rule),
            );
            if crate::similar::relation(new.memory_type, &new.rule, old.memory_type, &old.rule, cos)
                == crate::similar::Relation::Distinct
            {
                back.push(old_id);
            }
        }
        if back.is_empty() {
            return Ok(0);
        }
        let (tx, recall) = self.begin_write()?;
        let mut n = 0;
        for id in &back {
            let changed = tx.execute(
                "UPDATE memories SET superseded_by = NULL
                 WHERE id = ?1 AND superseded_by IS NOT NULL AND forgotten_at IS NULL",
                [id],
            )?;
            if changed > 0
                && let Some(m) = crate::store::get_memory(&tx, id)?
            {
                recall.upsert(&tx, &crate::store::document(&m))?;
                n += 1;
            }
        }
        tx.commit()?;
        Ok(n)
    }

    /// Once per [`RELATION_VERSION`]: memories an older version retired wrongly come back
    /// ([`MemoryStore::restore_not_replaced`]); then each live memory meets the older live
    /// memories of its scope that the search finds for it, as a new statement would, and
    /// retires those it replaces. Returns how many were retired and how many came back.
    fn compare_live_again(&mut self) -> Result<(usize, usize)> {
        let version = RELATION_VERSION.to_string();
        if self.store.meta(RELATION_MARK)?.as_deref() == Some(version.as_str()) {
            return Ok((0, 0));
        }
        let restored = self.restore_not_replaced()?;
        let mut live = self.list(&crate::store::ListFilter::default())?;
        if live.len() < 2 {
            self.store.set_meta(RELATION_MARK, &version)?;
            return Ok((0, restored));
        }
        // Newest first: what is said last decides.
        live.sort_by(|a, b| {
            b.updated_at
                .cmp(&a.updated_at)
                .then(b.created_at.cmp(&a.created_at))
        });
        // Candidates are the older memories of the same scope that share a word of the
        // memory's own (in memory, no search per memory: a store of 10,000 memories is
        // compared in seconds), at most `PER_MEMORY` of them, most shared words first; words
        // in more than `COMMON` memories of the scope say nothing. No lock is held meanwhile:
        // the write lock is taken for the few changes at the end.
        const PER_MEMORY: usize = 12;
        const COMMON: usize = 64;
        let words: Vec<std::collections::HashSet<String>> = live
            .iter()
            .map(|m| crate::text::content_words(&m.rule))
            .collect();
        let vectors: Vec<_> = live.iter().map(|m| cairn_embed::embed(&m.rule)).collect();
        let mut by_word: std::collections::HashMap<(&str, &str), Vec<usize>> =
            std::collections::HashMap::new();
        for (i, (m, ws)) in live.iter().zip(&words).enumerate() {
            for w in ws {
                by_word
                    .entry((m.scope.as_str(), w.as_str()))
                    .or_default()
                    .push(i);
            }
        }
        let mut retired: std::collections::HashMap<String, String> =
            std::collections::HashMap::new();
        for (i, new) in live.iter().enumerate() {
            if retired.contains_key(&new.id) {
                continue;
            }
            let mut shared: std::collections::HashMap<usize, usize> =
                std::collections::HashMap::new();
            for w in &words[i] {
                let Some(with) = by_word.get(&(new.scope.as_str(), w.as_str())) else {
                    continue;
                };
                if with.len() > COMMON {
                    continue;
                }
                // Later in `live` is older (newest first).
                for &j in with.iter().filter(|&&j| j > i) {
                    *shared.entry(j).or_default() += 1;
                }
            }
            let mut candidates: Vec<(usize, usize)> = shared.into_iter().collect();
            candidates.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
            for (j, _) in candidates.into_iter().take(PER_MEMORY) {
                let old = &live[j];
                if retired.contains_key(&old.id) || old.updated_at >= new.updated_at {
                    continue;
                }
                let cos = cairn_embed::cosine(&vectors[i], &vectors[j]);
                if matches!(
                    crate::similar::relation(
                        new.memory_type,
                        &new.rule,
                        old.memory_type,
                        &old.rule,
                        cos
                    ),
                    crate::similar::Relation::Supersedes | crate::similar::Relation::Refines
                ) {
                    retired.insert(old.id.clone(), new.id.clone());
                }
            }
        }
        let (tx, recall) = self.begin_write()?;
        let mut n = 0;
        for (old, new) in &retired {
            // (Only what is still live: another writer may have changed it meanwhile.)
            n += tx.execute(
                "UPDATE memories SET superseded_by = ?2
                 WHERE id = ?1 AND superseded_by IS NULL AND forgotten_at IS NULL",
                params![old, new],
            )?;
            crate::store::take_out_in(&tx, recall, old)?;
        }
        tx.commit()?;
        self.store.set_meta(RELATION_MARK, &version)?;
        Ok((n, restored))
    }

    /// The revision up to which the turns were read by a run with the same `tag`; 0 (every
    /// turn) without one, when no extraction is on record (a store whose records were
    /// cleared is read again from the start), or when it is past the last turn.
    fn extraction_mark(&self, tag: &str) -> Result<i64> {
        let Some(value) = self.store.meta(EXTRACTION_MARK)? else {
            return Ok(0);
        };
        let any: bool = self.store.connection().query_row(
            "SELECT EXISTS (SELECT 1 FROM memory_extractions)",
            [],
            |r| r.get(0),
        )?;
        let rev = match value.rsplit_once(':') {
            Some((t, rev)) if t == tag && any => rev.parse().unwrap_or(0),
            _ => 0,
        };
        // A mark beyond every turn (a store restored from an older copy) would hide the turns
        // that come next: start over.
        Ok(if rev > self.store.max_turn_revision()? {
            0
        } else {
            rev.max(0)
        })
    }

    /// The fingerprint the turn was last extracted with.
    fn extracted_fingerprint(&self, t: &StoredTurn) -> Result<Option<String>> {
        Ok(self
            .store
            .connection()
            .prepare_cached(
                "SELECT fingerprint FROM memory_extractions
                 WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
            )?
            .query_row(params![t.agent, t.session_key, t.turn.key], |r| r.get(0))
            .optional()?)
    }

    #[allow(clippy::too_many_arguments)]
    fn extract_turn(
        &mut self,
        t: &StoredTurn,
        wrote: bool,
        claude_saved: &[String],
        fp: &str,
        now: i64,
        forgotten: &mut Option<Vec<ForgottenOrigin>>,
        report: &mut ExtractReport,
    ) -> Result<()> {
        let at = turn_time(t).unwrap_or(now);
        let (tx, recall) = self.begin_write()?;
        // What this turn gave before (another version of the rules, or the turn as it was).
        let before: Option<(String, i64)> = tx
            .query_row(
                "SELECT memory_ids, extracted_at FROM memory_extractions
                 WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
                params![t.agent, t.session_key, t.turn.key],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        let mut ids: Vec<String> = Vec::new();
        // The prompt and what the user added while the turn ran (nothing from a turn whose
        // words are not the user's).
        let discounted = not_the_users_word(t);
        let found: Vec<_> = match discounted {
            Some(_) => Vec::new(),
            None => t
                .turn
                .user_texts()
                .into_iter()
                .flat_map(candidates)
                .collect(),
        };
        let project = t
            .turn
            .cwd
            .as_deref()
            .filter(|c| !c.is_empty())
            .map(|c| project_scope(Path::new(c)));
        // "Forget the rule about squashing commits": the memory said before that it names is
        // forgotten (a tombstone, as `cairn forget`), in the turn's project or globally,
        // before what the turn says instead ("… — we use merge commits now") is written.
        let retracted: Vec<crate::extract::Retraction> = t
            .turn
            .user_texts()
            .into_iter()
            .flat_map(crate::extract::retractions)
            .collect();
        for r in &retracted {
            for id in retraction_targets(&tx, &r.subject, project.as_deref(), at, &[])? {
                crate::store::forget_in(&tx, recall, &id, now)?;
                report.retracted += 1;
            }
        }
        let outcome = if wrote {
            report.agent_wrote += 1;
            // The agent saved what was said in its own memory: cairn does not keep it again,
            // but what it replaces in cairn's memory is retired.
            for c in found {
                let Some(scope) = statement_scope(&c, project.as_ref()) else {
                    continue;
                };
                let new = statement(t, c, scope, at);
                report.superseded += crate::store::retire_replaced_in(&tx, recall, &new, now)?;
            }
            "agent-wrote"
        } else {
            report.statements += found.len();
            for c in found {
                let origin = origin_key(t, &c.rule);
                let mut known: Option<(String, Option<i64>)> = tx
                    .query_row(
                        "SELECT o.memory_id, m.forgotten_at FROM memory_origins o
                         LEFT JOIN memories m ON m.id = o.memory_id WHERE o.origin = ?1",
                        [&origin],
                        |r| Ok((r.get(0)?, r.get(1)?)),
                    )
                    .optional()?;
                if known.is_none() {
                    // A branched or forked session carries the same turn under another
                    // session id: what was forgotten there stays forgotten.
                    if forgotten.is_none() {
                        *forgotten = Some(forgotten_origins(&tx)?);
                    }
                    let agent = format!("{}:", t.agent);
                    let suffix = format!(":{}", fork_suffix(t, &c.rule));
                    known = forgotten.iter().flatten().find_map(|f| {
                        (f.origin.starts_with(&agent) && f.origin.ends_with(&suffix))
                            .then(|| (f.memory_id.clone(), Some(f.forgotten_at)))
                    });
                    // And a statement taken from it already is the same statement, whatever
                    // became of its memory since: a fork copies its parent's turns with the
                    // time of the fork, and a copy read as new would undo what was said
                    // after it (a rule replaced since coming back over its replacement).
                    if known.is_none()
                        && let Some(id) = copied_statement(&tx, t, &c.rule)?
                    {
                        crate::store::insert_origin(&tx, &origin, &id)?;
                        report.copied += 1;
                        ids.push(id);
                        continue;
                    }
                }
                // The same words forgotten in this scope after this turn was said ("always
                // squash commits" in a session read only after the forget): still forgotten.
                if known.is_none()
                    && let Some(scope) = statement_scope(&c, project.as_ref())
                    && let Some(id) = crate::store::forgotten_since(&tx, &scope, &c.rule, at)?
                {
                    crate::store::insert_origin(&tx, &origin, &id)?;
                    report.forgotten_skipped += 1;
                    ids.push(id);
                    continue;
                }
                if let Some((id, forgotten)) = known {
                    if forgotten.is_some() {
                        // Withdrawn when this turn's text changed, and given again now that
                        // it is back: the memory returns. (Forgotten by the person, or
                        // retired while the turn still gave it, it stays out.)
                        if let Some((old_ids, _)) = &before
                            && !old_ids.split(',').any(|i| i == id)
                            && restore_withdrawn(&tx, recall, &id, t)?
                        {
                            report.restored += 1;
                        } else {
                            report.forgotten_skipped += 1;
                        }
                        // (Listed either way: a turn that still gives a memory retired
                        // since, aged out say, does not bring it back on a later reading.)
                        ids.push(id);
                        continue;
                    } else if let Some((_, extracted_at)) = &before {
                        // The same words read by newer rules may belong elsewhere ("Be more
                        // terse" is the person's, in every project) or be of another type:
                        // a memory this turn alone made, unchanged since, follows them.
                        if let Some(scope) = statement_scope(&c, project.as_ref())
                            && reread_moves(
                                &tx,
                                recall,
                                &id,
                                t,
                                &scope,
                                c.memory_type,
                                *extracted_at,
                            )?
                        {
                            report.updated += 1;
                        }
                    }
                    ids.push(id);
                    continue;
                }
                let Some(scope) = statement_scope(&c, project.as_ref()) else {
                    report.no_project += 1;
                    continue;
                };
                let new = statement(t, c, scope, at);
                let out = write_new_in(&tx, recall, new, Some(&origin), now)?;
                match out.action {
                    Action::Created => report.created += 1,
                    Action::Updated | Action::Unchanged => report.updated += 1,
                    Action::Superseded => report.superseded += 1,
                }
                ids.push(out.memory.id);
            }
            match discounted {
                Some(why) => why,
                None if ids.is_empty() => "none",
                None => "memories",
            }
        };
        // Read again, the turn no longer gives some memory it gave: an older rule's reading
        // (a task kept in a rule, a bare secret) stays out of the store, as on a fresh sync.
        // Only a memory this turn alone made, unchanged since (no hand edit, no merge).
        if let Some((old_ids, extracted_at)) = before {
            for id in old_ids.split(',').filter(|i| !i.is_empty()) {
                if ids.iter().any(|n| n == id) {
                    continue;
                }
                let Some(m) = crate::store::get_memory(&tx, id)? else {
                    continue;
                };
                if m.is_live()
                    && m.updated_at <= extracted_at.max(m.created_at)
                    && made_by_turn_alone(&tx, id, t)?
                {
                    let retired = crate::store::retire_in(&tx, recall, id, now)?;
                    report.withdrawn += usize::from(retired);
                    if retired && discounted.is_some() {
                        report.restored += reinstate_replaced(&tx, recall, id)?;
                    }
                }
            }
        }
        // Claude Code's background extraction saved this turn's memories into its own memory
        // dir for the project: Claude Code has them there, and is not given them again.
        if !claude_saved.is_empty()
            && let Some(p) = &project
        {
            for id in held_by_claude(&tx, t, claude_saved, &ids)? {
                tx.execute(
                    "INSERT OR IGNORE INTO memory_held(memory_id, agent, scope) VALUES (?1, 'claude', ?2)",
                    params![id, p],
                )?;
            }
        }
        tx.execute(
            "INSERT INTO memory_extractions(agent, session_key, turn_key, fingerprint, outcome,
                memory_ids, extracted_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT(agent, session_key, turn_key) DO UPDATE SET fingerprint = excluded.fingerprint,
                outcome = excluded.outcome, memory_ids = excluded.memory_ids,
                extracted_at = excluded.extracted_at",
            params![
                t.agent,
                t.session_key,
                t.turn.key,
                fp,
                outcome,
                ids.join(","),
                now
            ],
        )?;
        tx.commit()?;
        Ok(())
    }
}

/// Gives memory `id` the scope and type newer rules give its statement, when turn `t` alone
/// made it and nothing changed it since it was extracted (`extracted_at`). Returns whether it
/// changed.
fn reread_moves(
    conn: &rusqlite::Connection,
    recall: &mut cairn_recall::Recall,
    id: &str,
    t: &StoredTurn,
    scope: &str,
    memory_type: MemoryType,
    extracted_at: i64,
) -> Result<bool> {
    let Some(mut m) = crate::store::get_memory(conn, id)? else {
        return Ok(false);
    };
    if !m.is_live() || (m.scope == scope && m.memory_type == memory_type) {
        return Ok(false);
    }
    if !made_by_turn_alone(conn, id, t)? || m.updated_at > extracted_at.max(m.created_at) {
        return Ok(false);
    }
    crate::store::ensure_scope(conn, scope)?;
    m.scope = scope.to_string();
    m.memory_type = memory_type;
    m.keywords = crate::keywords::keywords_for(memory_type, &format!("{} {}", m.name, m.rule));
    conn.execute(
        "UPDATE memories SET scope = ?2, type = ?3, keywords = ?4 WHERE id = ?1",
        params![m.id, m.scope, m.memory_type.as_str(), m.keywords.join("\n")],
    )?;
    recall.upsert(conn, &crate::store::document(&m))?;
    Ok(true)
}

/// Whether every statement behind memory `id` came from turn `t` (no other turn said it too).
/// Statement `c` of turn `t`, said at `at`, as a memory of `scope`.
fn statement(t: &StoredTurn, c: crate::extract::Candidate, scope: String, at: i64) -> NewMemory {
    NewMemory {
        memory_type: c.memory_type,
        scope,
        rule: c.rule,
        why: c.why,
        how: c.how,
        name: None,
        description: None,
        source: Source {
            kind: "transcript".into(),
            agent: Some(t.agent.clone()),
            session: Some(t.session_key.clone()),
            turn: Some(t.turn.key.clone()),
            path: Some(t.source_path.clone()),
            line: Some(t.turn.first_line),
            at: Some(crate::model::format_time(at)),
        },
        at,
    }
}

/// Brings back memory `id`, withdrawn from turn `t` when its text changed: only a memory
/// that turn alone made, with its text (a forgotten one has none) and not replaced since.
/// Returns whether it came back.
fn restore_withdrawn(
    conn: &rusqlite::Connection,
    recall: &mut cairn_recall::Recall,
    id: &str,
    t: &StoredTurn,
) -> Result<bool> {
    let Some(m) = crate::store::get_memory(conn, id)? else {
        return Ok(false);
    };
    if m.rule.is_empty() || m.superseded_by.is_some() || !made_by_turn_alone(conn, id, t)? {
        return Ok(false);
    }
    conn.execute(
        "UPDATE memories SET forgotten_at = NULL WHERE id = ?1",
        [id],
    )?;
    let Some(back) = crate::store::get_memory(conn, id)? else {
        return Ok(false);
    };
    recall.upsert(conn, &crate::store::document(&back))?;
    Ok(true)
}

/// Brings back the memories that memory `id` replaced, withdrawn because its turn was not
/// the user's word (rolled back, or a program's prompt): the statement that replaced them
/// never held. Only those not forgotten since. Returns how many came back.
fn reinstate_replaced(
    conn: &rusqlite::Connection,
    recall: &mut cairn_recall::Recall,
    id: &str,
) -> Result<usize> {
    let replaced: Vec<String> = conn
        .prepare_cached(
            "SELECT id FROM memories WHERE superseded_by = ?1 AND forgotten_at IS NULL",
        )?
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    for old in &replaced {
        conn.execute(
            "UPDATE memories SET superseded_by = NULL WHERE id = ?1",
            [old],
        )?;
        if let Some(back) = crate::store::get_memory(conn, old)? {
            recall.upsert(conn, &crate::store::document(&back))?;
        }
    }
    Ok(replaced.len())
}

fn made_by_turn_alone(conn: &rusqlite::Connection, id: &str, t: &StoredTurn) -> Result<bool> {
    let prefix = format!("{}:{}:{}:", t.agent, t.session_key, t.turn.key);
    let origins: Vec<String> = conn
        .prepare_cached("SELECT origin FROM memory_origins WHERE memory_id = ?1")?
        .query_map([id], |r| r.get(0))?
        .collect::<rusqlite::Result<_>>()?;
    Ok(!origins.is_empty() && origins.iter().all(|o| o.starts_with(&prefix)))
}
