//! Turn digests: one row per recorded turn, keyed like turns (agent, session, turn). The body is
//! the digest as JSON; its shape belongs to the crate that builds it.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::{Result, Store};

/// A stored digest.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StoredDigest {
    pub agent: String,
    pub session_key: String,
    pub turn_key: String,
    pub project: Option<String>,
    /// The digest as JSON (already redacted).
    pub body: String,
    pub created_at: i64,
    pub updated_at: i64,
}

impl Store {
    /// Inserts or replaces the digest of a turn.
    pub fn upsert_digest(
        &self,
        agent: &str,
        session_key: &str,
        turn_key: &str,
        project: Option<&str>,
        body: &str,
        now: i64,
    ) -> Result<()> {
        self.conn.execute(
            "INSERT INTO digests(agent, session_key, turn_key, project, body, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
             ON CONFLICT(agent, session_key, turn_key) DO UPDATE SET
               project = excluded.project, body = excluded.body, updated_at = excluded.updated_at",
            params![agent, session_key, turn_key, project, body, now],
        )?;
        Ok(())
    }

    /// The digest of one turn.
    pub fn digest(
        &self,
        agent: &str,
        session_key: &str,
        turn_key: &str,
    ) -> Result<Option<StoredDigest>> {
        Ok(self
            .conn
            .query_row(
                "SELECT agent, session_key, turn_key, project, body, created_at, updated_at
                 FROM digests WHERE agent = ?1 AND session_key = ?2 AND turn_key = ?3",
                params![agent, session_key, turn_key],
                |r| {
                    Ok(StoredDigest {
                        agent: r.get(0)?,
                        session_key: r.get(1)?,
                        turn_key: r.get(2)?,
                        project: r.get(3)?,
                        body: r.get(4)?,
                        created_at: r.get(5)?,
                        updated_at: r.get(6)?,
                    })
                },
            )
            .optional()?)
    }

    /// Passes every stored digest's body through `f` and stores what it returns in place of
    /// the body (`None`: left as it is), in one transaction; returns how many changed. (The
    /// digests are redacted again with this when the redaction rules improve.)
    pub fn rewrite_digests(&mut self, mut f: impl FnMut(&str) -> Option<String>) -> Result<u64> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let mut changed = 0;
        {
            let mut read = tx.prepare("SELECT id, body FROM digests ORDER BY id")?;
            let mut update = tx.prepare("UPDATE digests SET body = ?2 WHERE id = ?1")?;
            let rows = read
                .query_map([], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, String>(1)?)))?
                .collect::<rusqlite::Result<Vec<_>>>()?;
            for (id, body) in rows {
                if let Some(new) = f(&body).filter(|n| *n != body) {
                    update.execute(params![id, new])?;
                    changed += 1;
                }
            }
        }
        tx.commit()?;
        Ok(changed)
    }

    /// Number of stored digests.
    pub fn digest_count(&self) -> Result<u64> {
        let n: i64 = self
            .conn
            .query_row("SELECT count(*) FROM digests", [], |r| r.get(0))?;
        Ok(n as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upsert_replaces_body() {
        let s = Store::open_in_memory().unwrap();
        s.upsert_digest("codex", "s1", "t1", Some("/p"), "{\"a\":1}", 10)
            .unwrap();
        s.upsert_digest("codex", "s1", "t1", Some("/p"), "{\"a\":2}", 20)
            .unwrap();
        let d = s.digest("codex", "s1", "t1").unwrap().unwrap();
        assert_eq!(
            (d.body.as_str(), d.created_at, d.updated_at),
            ("{\"a\":2}", 10, 20)
        );
        assert_eq!(s.digest_count().unwrap(), 1);
    }
}
