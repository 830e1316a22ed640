//! Merging memories proposed by model extraction and consolidation, and retiring old ones.
//!
//! A proposed memory carries an *origin* (what produced it: a phase-1 output, a Codex note).
//! Merging is idempotent per origin and respects tombstones: an origin already merged, or one
//! whose memory was forgotten, is not written again. The merge is automatic (the same
//! similarity dedupe and supersession as every other write) or directed by a decision made
//! elsewhere (a model): skip, fold into a given memory, or replace a given memory.

use rusqlite::{OptionalExtension, params};
use serde::Serialize;

use crate::error::{MemoryError, Result};
use crate::model::{Memory, NewMemory, render_body};
use crate::store::{
    Action, MemoryStore, document, get_memory, insert_origin, update_fields, write_new_in,
};

/// What to do with one proposed memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Directive {
    /// Look for a similar memory in the scope: update a duplicate, supersede a contradiction,
    /// else create.
    Auto,
    /// Do not store it.
    Skip,
    /// It restates or refines this memory: the memory takes the new text.
    Into(String),
    /// It contradicts or replaces this memory: a new memory supersedes it.
    Replace(String),
}

/// What a merge did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum MergeAction {
    Created,
    Updated,
    Unchanged,
    Superseded,
    /// The directive said skip.
    Skipped,
    /// This origin was merged before (nothing to do).
    Known,
    /// This origin's memory was forgotten: the tombstone keeps it out.
    Forgotten,
}

/// The result of one merge.
#[derive(Debug, Clone, Serialize)]
pub struct MergeOutcome {
    pub action: MergeAction,
    /// The memory now holding the statement.
    pub memory_id: Option<String>,
    /// The memory that was replaced.
    pub replaced: Option<String>,
}

impl MemoryStore {
    /// Merges a proposed memory from `origin` (see the module doc). Views are not regenerated
    /// (call [`MemoryStore::refresh_views`] after a batch).
    pub fn merge(
        &mut self,
        new: NewMemory,
        origin: &str,
        directive: &Directive,
        now: i64,
    ) -> Result<MergeOutcome> {
        if new.rule.trim().is_empty() {
            return Err(MemoryError::Invalid("the memory text is empty".into()));
        }
        let (tx, recall) = self.begin_write()?;
        let known: Option<(String, Option<i64>)> = tx
            .query_row(
                "SELECT o.memory_id, m.forgotten_at FROM memory_origins o
                 LEFT JOIN memories m ON m.id = o.memory_id WHERE o.origin = ?1",
                [origin],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()?;
        if let Some((id, forgotten)) = known {
            return Ok(MergeOutcome {
                action: if forgotten.is_some() {
                    MergeAction::Forgotten
                } else {
                    MergeAction::Known
                },
                memory_id: Some(id),
                replaced: None,
            });
        }
        let live_target = |id: &str| -> Result<Option<Memory>> {
            Ok(get_memory(&tx, id)?.filter(|m| m.is_live() && m.scope == new.scope))
        };
        let out = match directive {
            Directive::Skip => MergeOutcome {
                action: MergeAction::Skipped,
                memory_id: None,
                replaced: None,
            },
            Directive::Into(id) if live_target(id)?.is_some() => {
                let Some(mut m) = live_target(id)? else {
                    return Err(MemoryError::NotFound(id.clone()));
                };
                let prepared = crate::store::prepare_new(&new);
                m.rule = prepared.rule;
                m.why = prepared.why.or(m.why);
                m.how = prepared.how.or(m.how);
                m.name = prepared.name;
                m.description = prepared.description;
                m.keywords = prepared.keywords;
                m.memory_type = new.memory_type;
                m.updated_at = m.updated_at.max(new.at);
                m.body = render_body(&m.rule, m.why.as_deref(), m.how.as_deref());
                update_fields(&tx, recall, &m)?;
                insert_origin(&tx, origin, &m.id)?;
                MergeOutcome {
                    action: MergeAction::Updated,
                    memory_id: Some(m.id),
                    replaced: None,
                }
            }
            Directive::Replace(id) if live_target(id)?.is_some() => {
                let m = crate::store::create_in(&tx, recall, &new, Some(origin))?;
                tx.execute(
                    "UPDATE memories SET superseded_by = ?2 WHERE id = ?1",
                    params![id, m.id],
                )?;
                recall.remove(&tx, id)?;
                MergeOutcome {
                    action: MergeAction::Superseded,
                    memory_id: Some(m.id),
                    replaced: Some(id.clone()),
                }
            }
            // Auto, or a decision naming a memory that is gone or in another scope.
            _ => {
                let w = write_new_in(&tx, recall, new, Some(origin), now)?;
                MergeOutcome {
                    action: match w.action {
                        Action::Created => MergeAction::Created,
                        Action::Updated => MergeAction::Updated,
                        Action::Unchanged => MergeAction::Unchanged,
                        Action::Superseded => MergeAction::Superseded,
                    },
                    memory_id: Some(w.memory.id),
                    replaced: w.replaced,
                }
            }
        };
        tx.commit()?;
        Ok(out)
    }

    /// Memory ids produced by origins starting with `prefix` (e.g. one phase-1 output).
    pub fn origins_with_prefix(&self, prefix: &str) -> Result<Vec<(String, String)>> {
        let conn = self.store.connection();
        let mut st = conn.prepare(
            "SELECT origin, memory_id FROM memory_origins
             WHERE substr(origin, 1, length(?1)) = ?1 ORDER BY origin",
        )?;
        let rows = st.query_map([prefix], |r| Ok((r.get(0)?, r.get(1)?)))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// All origins of a memory.
    pub fn origins_of(&self, id: &str) -> Result<Vec<String>> {
        let conn = self.store.connection();
        let mut st =
            conn.prepare("SELECT origin FROM memory_origins WHERE memory_id = ?1 ORDER BY origin")?;
        let rows = st.query_map([id], |r| r.get(0))?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }

    /// Takes live memories out of recall and the views without erasing them (aging, a source
    /// that was withdrawn). Unlike [`MemoryStore::forget`] the text stays, and
    /// [`MemoryStore::restore`] brings the memory back. Returns how many were retired. Views
    /// are not regenerated.
    pub fn retire(&mut self, ids: &[String], now: i64) -> Result<usize> {
        if ids.is_empty() {
            return Ok(0);
        }
        let (tx, recall) = self.begin_write()?;
        let mut n = 0;
        for id in ids {
            n += usize::from(crate::store::retire_in(&tx, recall, id, now)?);
        }
        tx.commit()?;
        Ok(n)
    }

    /// Brings a retired memory back (it must still have its text: a forgotten memory's text
    /// was erased and cannot be restored).
    pub fn restore(&mut self, id: &str, now: i64) -> Result<Memory> {
        let Some(m) = self.get(id)? else {
            return Err(MemoryError::NotFound(id.to_string()));
        };
        if m.is_live() {
            return Ok(m);
        }
        if m.rule.is_empty() || m.superseded_by.is_some() {
            return Err(MemoryError::Invalid(format!(
                "memory {id} was forgotten or superseded and cannot be restored"
            )));
        }
        let (tx, recall) = self.begin_write()?;
        tx.execute(
            "UPDATE memories SET forgotten_at = NULL, last_recalled_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        let restored = get_memory(&tx, id)?.ok_or_else(|| MemoryError::NotFound(id.into()))?;
        recall.upsert(&tx, &document(&restored))?;
        tx.commit()?;
        self.refresh_scope_views(&[restored.scope.as_str()], now)?;
        Ok(restored)
    }
}
