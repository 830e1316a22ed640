//! The store on a real SQLite file: migrations, cursors, turn upserts, the job queue.

use cairn_store::{FileCursor, NewJob, Store};
use cairn_transcript::{Agent, Session, Turn, TurnStatus};

fn temp_store() -> (tempfile::TempDir, Store) {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("data/cairn.db")).unwrap();
    (dir, store)
}

#[test]
fn database_and_directory_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let (dir, _store) = temp_store();
    let db = std::fs::metadata(dir.path().join("data/cairn.db")).unwrap();
    assert_eq!(db.permissions().mode() & 0o777, 0o600);
    let d = std::fs::metadata(dir.path().join("data")).unwrap();
    assert_eq!(d.permissions().mode() & 0o777, 0o700);
}

#[test]
fn reopening_keeps_data_and_schema() {
    let (dir, store) = temp_store();
    store.set_meta("k", "v").unwrap();
    drop(store);
    let store = Store::open(&dir.path().join("data/cairn.db")).unwrap();
    assert_eq!(store.meta("k").unwrap().as_deref(), Some("v"));
    assert_eq!(store.integrity_check().unwrap(), "ok");
}

#[test]
fn a_read_only_open_reads_and_never_writes() {
    let (dir, store) = temp_store();
    let path = dir.path().join("data/cairn.db");
    store.set_meta("k", "v").unwrap();
    drop(store);
    let ro = Store::open_read_only(&path).unwrap();
    assert!(ro.is_read_only());
    assert_eq!(ro.meta("k").unwrap().as_deref(), Some("v"));
    let e = ro.set_meta("k", "w").unwrap_err();
    assert!(e.is_write_denied(), "{e}");
    // A component that was never created reads as absent; one that was, as ready.
    let conn = ro.connection();
    assert_eq!(
        cairn_store::component_for_reading(conn, "nothing", 1, "CREATE TABLE t(x)").unwrap(),
        None
    );
    drop(ro);
    let rw = Store::open(&path).unwrap();
    cairn_store::ensure_component(rw.connection(), "thing", 1, "CREATE TABLE t(x)").unwrap();
    drop(rw);
    let ro = Store::open_read_only(&path).unwrap();
    assert_eq!(
        cairn_store::component_for_reading(ro.connection(), "thing", 1, "").unwrap(),
        Some(cairn_store::ComponentState::Ready)
    );
    assert_eq!(ro.meta("k").unwrap().as_deref(), Some("v"));
    // No database yet: nothing is created.
    let missing = dir.path().join("elsewhere/cairn.db");
    assert!(Store::open_read_only(&missing).is_err());
    assert!(!missing.parent().unwrap().exists());
}

#[test]
fn cursors_round_trip() {
    let (_dir, mut store) = temp_store();
    let c = FileCursor {
        path: "/x/a.jsonl".into(),
        agent: "codex".into(),
        kind: "rollout".into(),
        session_key: Some("s".into()),
        dev: 1,
        ino: u64::MAX, // stored as i64 bits, read back unchanged
        size: 10,
        mtime_ns: 5,
        head_len: 10,
        head_hash: u64::MAX - 1,
        offset: 10,
        line: 2,
        state: Some("{}".into()),
        skipped_lines: 1,
    };
    let w = store.write().unwrap();
    w.save_cursor(&c).unwrap();
    w.commit().unwrap();
    assert_eq!(store.cursor("/x/a.jsonl").unwrap(), Some(c.clone()));
    assert_eq!(store.cursors().unwrap().get("/x/a.jsonl"), Some(&c));
}

#[test]
fn turns_upsert_by_key() {
    let (_dir, mut store) = temp_store();
    let mut t = Turn::new("t1".into(), 0, 1);
    t.prompt = "hello".into();
    let session = Session {
        id: "s1".into(),
        ..Session::default()
    };
    let w = store.write().unwrap();
    assert!(
        w.upsert_turn(Agent::Codex, "s1", &t, "/f")
            .unwrap()
            .is_new()
    );
    w.upsert_session(Agent::Codex, &session, None, "/f")
        .unwrap();
    w.commit().unwrap();
    t.status = TurnStatus::Complete;
    let w = store.write().unwrap();
    assert!(
        !w.upsert_turn(Agent::Codex, "s1", &t, "/f")
            .unwrap()
            .is_new()
    );
    w.commit().unwrap();
    assert_eq!(store.turn_count().unwrap(), 1);
    let got = store.turn(Agent::Codex, "s1", "t1").unwrap().unwrap();
    assert_eq!(got.turn.status, TurnStatus::Complete);
    assert_eq!(store.session_turns(Agent::Codex, "s1").unwrap().len(), 1);
    // A rolled-back write leaves nothing behind.
    let w = store.write().unwrap();
    w.upsert_turn(Agent::Codex, "s1", &Turn::new("t2".into(), 1, 2), "/f")
        .unwrap();
    drop(w);
    assert_eq!(store.turn_count().unwrap(), 1);
}

/// The same turn read from another file (Codex moved the rollout to `archived_sessions/`) is
/// not a change of the turn: the row names the new path and readers that follow revisions see
/// it, but it is told apart from a turn whose content changed.
#[test]
fn a_turn_read_from_a_moved_file_follows_it_without_changing() {
    use cairn_store::TurnWritten;
    let (_dir, mut store) = temp_store();
    let mut t = Turn::new("t1".into(), 0, 1);
    t.prompt = "hello".into();
    let w = store.write().unwrap();
    assert_eq!(
        w.upsert_turn(Agent::Codex, "s1", &t, "/h/sessions/r.jsonl")
            .unwrap(),
        TurnWritten::New
    );
    w.commit().unwrap();
    let before = store.max_turn_revision().unwrap();
    let w = store.write().unwrap();
    assert_eq!(
        w.upsert_turn(Agent::Codex, "s1", &t, "/h/archived_sessions/r.jsonl")
            .unwrap(),
        TurnWritten::Moved
    );
    assert_eq!(
        w.upsert_turn(Agent::Codex, "s1", &t, "/h/archived_sessions/r.jsonl")
            .unwrap(),
        TurnWritten::Same
    );
    w.commit().unwrap();
    let got = store.turn(Agent::Codex, "s1", "t1").unwrap().unwrap();
    assert_eq!(got.source_path, "/h/archived_sessions/r.jsonl");
    assert!(store.max_turn_revision().unwrap() > before);
    t.prompt = "hello again".into();
    let w = store.write().unwrap();
    assert_eq!(
        w.upsert_turn(Agent::Codex, "s1", &t, "/h/sessions/r.jsonl")
            .unwrap(),
        TurnWritten::Changed
    );
    w.commit().unwrap();
    let got = store.turn(Agent::Codex, "s1", "t1").unwrap().unwrap();
    assert_eq!(
        (got.turn.prompt.as_str(), got.source_path.as_str()),
        ("hello again", "/h/sessions/r.jsonl")
    );
}

#[test]
fn turn_revisions_follow_changes_only() {
    let (_dir, mut store) = temp_store();
    let mut a = Turn::new("a".into(), 0, 1);
    a.prompt = "first".into();
    let mut b = Turn::new("b".into(), 1, 2);
    b.prompt = "second".into();
    let w = store.write().unwrap();
    w.upsert_turn(Agent::Claude, "s", &a, "/f").unwrap();
    w.upsert_turn(Agent::Claude, "s", &b, "/f").unwrap();
    w.commit().unwrap();
    let all = store.turns_changed_since(0).unwrap().turns;
    let keys: Vec<(&str, i64)> = all.iter().map(|(r, t)| (t.turn.key.as_str(), *r)).collect();
    assert_eq!(keys, [("a", 1), ("b", 2)]);
    assert!(store.turns_changed_since(2).unwrap().turns.is_empty());

    // The same turn again changes nothing; a changed one gets the next revision.
    let w = store.write().unwrap();
    w.upsert_turn(Agent::Claude, "s", &b, "/f").unwrap();
    a.status = TurnStatus::Complete;
    w.upsert_turn(Agent::Claude, "s", &a, "/f").unwrap();
    w.commit().unwrap();
    let changed = store.turns_changed_since(2).unwrap().turns;
    assert_eq!(changed.len(), 1);
    assert_eq!((changed[0].0, changed[0].1.turn.key.as_str()), (3, "a"));
    assert_eq!(changed[0].1.turn.status, TurnStatus::Complete);
}

/// A damaged row (a body that is not a turn) is reported by its revision, not returned, and
/// does not hide the others.
#[test]
fn a_damaged_turn_row_is_reported_apart() {
    let (_dir, mut store) = temp_store();
    let mut a = Turn::new("a".into(), 0, 1);
    a.prompt = "first".into();
    let w = store.write().unwrap();
    w.upsert_turn(Agent::Claude, "s", &a, "/f").unwrap();
    w.commit().unwrap();
    store
        .connection()
        .execute(
            "INSERT INTO turns(agent, session_key, turn_key, seq, status, sidechain, prompt,
               body, source_path, revision) VALUES ('claude', 's', 'bad', 1, 'open', 0, 'x',
               '{not json', '/f', 7)",
            [],
        )
        .unwrap();
    let got = store.turns_changed_since(0).unwrap();
    assert_eq!(got.turns.len(), 1);
    assert_eq!(got.unreadable, [7]);
}

/// A database written before turns had revisions gets one per turn, in insertion order,
/// so a reader starting from 0 reads them all.
#[test]
fn turns_of_an_older_database_get_revisions() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("cairn.db");
    {
        let store = Store::open(&path).unwrap();
        let mut t = Turn::new("old".into(), 0, 1);
        t.prompt = "kept from before".into();
        drop(store);
        // Roll the schema back to version 2 with one turn in it.
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch(
            "DROP INDEX turns_revision; ALTER TABLE turns DROP COLUMN revision;
             PRAGMA user_version = 2;",
        )
        .unwrap();
        let body = serde_json::to_string(&t).unwrap();
        conn.execute(
            "INSERT INTO turns(agent, session_key, turn_key, seq, status, sidechain, prompt,
               body, source_path) VALUES ('claude', 's', 'old', 0, 'open', 0, ?1, ?2, '/f')",
            rusqlite::params![t.prompt, body],
        )
        .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let all = store.turns_changed_since(0).unwrap().turns;
    assert_eq!(all.len(), 1);
    assert_eq!(all[0].1.turn.prompt, "kept from before");
    assert!(all[0].0 > 0);
}

#[test]
fn jobs_are_unique_claimed_retried_and_failed() {
    let (_dir, mut store) = temp_store();
    let job = NewJob {
        kind: "digest",
        agent: "codex",
        session_key: "s",
        turn_key: "t",
        payload: None,
        project: Some("/p"),
    };
    assert!(store.enqueue(&job, 100).unwrap());
    assert!(
        !store.enqueue(&job, 101).unwrap(),
        "same key enqueues nothing"
    );
    let j = store.claim_job(100, 60).unwrap().unwrap();
    assert_eq!(j.attempts, 1);
    assert!(store.claim_job(100, 60).unwrap().is_none(), "leased");
    // The worker died: once the lease expires the job is claimable again.
    let j2 = store.claim_job(161, 60).unwrap().unwrap();
    assert_eq!((j2.id, j2.attempts), (j.id, 2));
    store.fail_job(j2.id, "boom", Some(300), 170).unwrap();
    assert!(store.claim_job(200, 60).unwrap().is_none(), "backoff");
    let j3 = store.claim_job(300, 60).unwrap().unwrap();
    store.fail_job(j3.id, "boom again", None, 310).unwrap();
    let counts = store.job_counts().unwrap();
    assert_eq!((counts.pending, counts.running, counts.failed), (0, 0, 1));
    let failed = store.failed_jobs(0, Some("/p")).unwrap();
    assert_eq!(failed[0].last_error.as_deref(), Some("boom again"));
    assert!(store.failed_jobs(0, Some("/other")).unwrap().is_empty());
}
