//! The background job queue: one row per (kind, agent, session, turn), so enqueuing the same
//! work twice is a no-op; jobs are claimed, retried with backoff, and fail with their error.

use rusqlite::{OptionalExtension, params};
use serde::{Deserialize, Serialize};

use crate::{Result, Store};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JobStatus {
    Pending,
    Running,
    Done,
    Failed,
}

impl JobStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            JobStatus::Pending => "pending",
            JobStatus::Running => "running",
            JobStatus::Done => "done",
            JobStatus::Failed => "failed",
        }
    }
    fn parse(s: &str) -> JobStatus {
        match s {
            "running" => JobStatus::Running,
            "done" => JobStatus::Done,
            "failed" => JobStatus::Failed,
            _ => JobStatus::Pending,
        }
    }
}

/// A job to enqueue.
#[derive(Debug, Clone)]
pub struct NewJob<'a> {
    pub kind: &'a str,
    pub agent: &'a str,
    pub session_key: &'a str,
    pub turn_key: &'a str,
    pub payload: Option<&'a str>,
    /// The project the job belongs to (for surfacing failures in that project).
    pub project: Option<&'a str>,
}

/// A stored job.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Job {
    pub id: i64,
    pub kind: String,
    pub agent: String,
    pub session_key: String,
    pub turn_key: String,
    pub payload: Option<String>,
    pub status: JobStatus,
    pub attempts: i64,
    pub next_run_at: i64,
    pub last_error: Option<String>,
    pub project: Option<String>,
    pub created_at: i64,
    pub updated_at: i64,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct JobCounts {
    pub pending: u64,
    pub running: u64,
    pub done: u64,
    pub failed: u64,
}

const COLS: &str = "id, kind, agent, session_key, turn_key, payload, status, attempts, next_run_at,
                    last_error, project, created_at, updated_at";

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Job> {
    Ok(Job {
        id: r.get(0)?,
        kind: r.get(1)?,
        agent: r.get(2)?,
        session_key: r.get(3)?,
        turn_key: r.get(4)?,
        payload: r.get(5)?,
        status: JobStatus::parse(&r.get::<_, String>(6)?),
        attempts: r.get(7)?,
        next_run_at: r.get(8)?,
        last_error: r.get(9)?,
        project: r.get(10)?,
        created_at: r.get(11)?,
        updated_at: r.get(12)?,
    })
}

impl Store {
    /// Enqueues a job unless one with the same key exists; returns true when enqueued.
    pub fn enqueue(&self, job: &NewJob<'_>, now: i64) -> Result<bool> {
        let n = self.conn.execute(
            "INSERT INTO jobs(kind, agent, session_key, turn_key, payload, project, status,
                              created_at, updated_at, next_run_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?7, 0)
             ON CONFLICT(kind, agent, session_key, turn_key) DO NOTHING",
            params![
                job.kind,
                job.agent,
                job.session_key,
                job.turn_key,
                job.payload,
                job.project,
                now
            ],
        )?;
        Ok(n == 1)
    }

    /// Claims the next runnable job (pending and due, or running with an expired lease, which
    /// means its worker died). The claim sets a lease of `lease_secs`.
    pub fn claim_job(&mut self, now: i64, lease_secs: i64) -> Result<Option<Job>> {
        let tx = self
            .conn
            .transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let job = tx
            .query_row(
                &format!(
                    "SELECT {COLS} FROM jobs
                     WHERE (status = 'pending' AND next_run_at <= ?1)
                        OR (status = 'running' AND next_run_at <= ?1)
                     ORDER BY next_run_at, id LIMIT 1"
                ),
                [now],
                row,
            )
            .optional()?;
        let Some(mut job) = job else {
            tx.commit()?;
            return Ok(None);
        };
        tx.execute(
            "UPDATE jobs SET status = 'running', attempts = attempts + 1, next_run_at = ?2,
                             updated_at = ?3 WHERE id = ?1",
            params![job.id, now + lease_secs, now],
        )?;
        tx.commit()?;
        job.status = JobStatus::Running;
        job.attempts += 1;
        job.next_run_at = now + lease_secs;
        Ok(Some(job))
    }

    pub fn complete_job(&self, id: i64, now: i64) -> Result<()> {
        self.conn.execute(
            "UPDATE jobs SET status = 'done', last_error = NULL, updated_at = ?2 WHERE id = ?1",
            params![id, now],
        )?;
        Ok(())
    }

    /// Replaces a job's payload (the worker masks in it what the hook could not know was a
    /// secret).
    pub fn set_job_payload(&self, id: i64, payload: &str) -> Result<()> {
        self.conn.execute(
            "UPDATE jobs SET payload = ?2 WHERE id = ?1",
            params![id, payload],
        )?;
        Ok(())
    }

    /// Records a failure: retried at `retry_at` while attempts remain, else failed for good.
    pub fn fail_job(&self, id: i64, error: &str, retry_at: Option<i64>, now: i64) -> Result<()> {
        match retry_at {
            Some(at) => self.conn.execute(
                "UPDATE jobs SET status = 'pending', last_error = ?2, next_run_at = ?3,
                                 updated_at = ?4 WHERE id = ?1",
                params![id, error, at, now],
            )?,
            None => self.conn.execute(
                "UPDATE jobs SET status = 'failed', last_error = ?2, updated_at = ?3 WHERE id = ?1",
                params![id, error, now],
            )?,
        };
        Ok(())
    }

    pub fn job_counts(&self) -> Result<JobCounts> {
        let mut c = JobCounts::default();
        let mut st = self
            .conn
            .prepare("SELECT status, count(*) FROM jobs GROUP BY status")?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
        for r in rows {
            let (s, n) = r?;
            let n = n as u64;
            match JobStatus::parse(&s) {
                JobStatus::Pending => c.pending += n,
                JobStatus::Running => c.running += n,
                JobStatus::Done => c.done += n,
                JobStatus::Failed => c.failed += n,
            }
        }
        Ok(c)
    }

    /// Jobs that failed for good after `since` (unix seconds), newest first; optionally only
    /// those of one project.
    pub fn failed_jobs(&self, since: i64, project: Option<&str>) -> Result<Vec<Job>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {COLS} FROM jobs WHERE status = 'failed' AND updated_at > ?1
               AND (?2 IS NULL OR project = ?2) ORDER BY updated_at DESC, id DESC"
        ))?;
        let rows = st.query_map(params![since, project], row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(Into::into)
    }

    /// Puts every `running` job back to `pending`, due now. Only for a caller that knows no
    /// worker is alive (it holds the single-worker lock): their worker died mid-job.
    pub fn requeue_running_jobs(&self, now: i64) -> Result<usize> {
        Ok(self.conn.execute(
            "UPDATE jobs SET status = 'pending', next_run_at = ?1, updated_at = ?1
             WHERE status = 'running'",
            [now],
        )?)
    }

    /// When the earliest pending job is due (unix seconds), if any job is pending.
    pub fn next_pending_at(&self) -> Result<Option<i64>> {
        Ok(self.conn.query_row(
            "SELECT min(next_run_at) FROM jobs WHERE status = 'pending'",
            [],
            |r| r.get(0),
        )?)
    }

    /// The most recently updated jobs with an error (failed for good, or pending a retry).
    pub fn jobs_with_errors(&self, limit: usize) -> Result<Vec<Job>> {
        let mut st = self.conn.prepare(&format!(
            "SELECT {COLS} FROM jobs WHERE last_error IS NOT NULL AND status IN ('failed', 'pending')
             ORDER BY updated_at DESC, id DESC LIMIT ?1"
        ))?;
        let rows = st.query_map([limit as i64], row)?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(Into::into)
    }

    pub fn job(&self, id: i64) -> Result<Option<Job>> {
        Ok(self
            .conn
            .query_row(&format!("SELECT {COLS} FROM jobs WHERE id = ?1"), [id], row)
            .optional()?)
    }
}
