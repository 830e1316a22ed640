//! Ingest against real files in temporary homes laid out like the agents' own: compressed
//! rollouts, files rewritten in place, a byte order mark, two passes at once.

use std::cell::Cell;
use std::fs;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant, SystemTime};

use cairn_ingest::{IngestReport, Progress, Quiet, Sources, ingest};
use cairn_store::Store;

struct Home {
    dir: tempfile::TempDir,
}

impl Home {
    fn new() -> Home {
        Home {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }
    fn root(&self) -> &Path {
        self.dir.path()
    }
    fn codex(&self) -> PathBuf {
        self.root().join(".codex")
    }
    fn claude(&self) -> PathBuf {
        self.root().join(".claude")
    }
    fn data(&self) -> PathBuf {
        self.root().join(".cairn")
    }
    fn store(&self) -> Store {
        fs::create_dir_all(self.data()).unwrap();
        Store::open(&self.data().join("cairn.db")).unwrap()
    }
    fn sources(&self) -> Sources {
        Sources {
            claude_root: Some(self.claude()),
            codex_home: Some(self.codex()),
        }
    }
    fn ingest(&self) -> IngestReport {
        ingest(&mut self.store(), &self.sources(), &Quiet).unwrap()
    }
    fn prompts(&self) -> Vec<String> {
        let mut p: Vec<String> = self
            .store()
            .all_turns()
            .unwrap()
            .into_iter()
            .map(|t| t.turn.prompt)
            .collect();
        p.sort();
        p
    }
    fn rollout(&self, id: &str) -> PathBuf {
        let dir = self.codex().join("sessions/2026/11/23");
        fs::create_dir_all(&dir).unwrap();
        dir.join(format!("rollout-2026-11-23T12-47-10-{id}.jsonl"))
    }
    fn archived(&self, id: &str) -> PathBuf {
        let dir = self.codex().join("archived_sessions");
        fs::create_dir_all(&dir).unwrap();
        dir.join(format!("rollout-2026-11-23T12-47-10-{id}.jsonl.zst"))
    }
}

const ID: &str = "01a20872-2d99-772e-8ca9-396e307a2f75";

/// A Codex `session_meta` line; `instructions` bytes of base instructions make it long.
fn meta(cwd: &str, instructions: usize) -> String {
    format!(
        r#"{{"timestamp":"2026-11-23T12:47:10.517Z","type":"session_meta","payload":{{"id":"{ID}","timestamp":"2026-11-23T12:47:10.233Z","cwd":"{cwd}","originator":"codex_cli_rs","cli_version":"0.165.0","source":"cli","model_provider":"openai","base_instructions":{{"text":"{}"}}}}}}"#,
        "You are Codex. ".repeat(instructions / 15 + 1)
    ) + "\n"
}

/// One complete Codex turn (task_started … task_complete).
fn turn(id: &str, prompt: &str, answer: &str) -> String {
    [
        format!(
            r#"{{"timestamp":"2026-11-23T12:47:16.692Z","type":"event_msg","payload":{{"type":"task_started","turn_id":"{id}"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"2026-11-23T12:47:16.703Z","type":"turn_context","payload":{{"turn_id":"{id}","cwd":"/work/p","model":"gpt-5"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"2026-11-23T12:47:16.704Z","type":"response_item","payload":{{"type":"message","role":"user","content":[{{"type":"input_text","text":"{prompt}"}}]}}}}"#
        ),
        format!(
            r#"{{"timestamp":"2026-11-23T12:47:16.705Z","type":"event_msg","payload":{{"type":"user_message","message":"{prompt}","kind":"plain"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"2026-11-23T12:47:19.000Z","type":"event_msg","payload":{{"type":"agent_message","message":"{answer}"}}}}"#
        ),
        format!(
            r#"{{"timestamp":"2026-11-23T12:47:19.200Z","type":"event_msg","payload":{{"type":"task_complete","turn_id":"{id}","last_agent_message":"{answer}"}}}}"#
        ),
    ]
    .join("\n")
        + "\n"
}

fn turns(range: std::ops::Range<usize>) -> String {
    range
        .map(|i| {
            // Text that compresses unevenly, like real output.
            let noise: String = (0..40)
                .map(|k| format!("{:x}", (i * 2_654_435_761 + k * 40_503) % 65_521))
                .collect();
            turn(
                &format!("turn-{i:04}"),
                &format!("prompt {i:04}"),
                &format!("answer {i} {noise}"),
            )
        })
        .collect()
}

fn zstd(text: &str) -> Vec<u8> {
    ruzstd::encoding::compress_to_vec(text.as_bytes(), ruzstd::encoding::CompressionLevel::Fastest)
}

fn messages(r: &IngestReport) -> Vec<String> {
    r.errors.iter().map(|p| p.message.clone()).collect()
}

#[test]
fn an_unchanged_compressed_rollout_is_not_read_again() {
    let h = Home::new();
    let path = h.archived(ID);
    let text = meta("/work/p", 200) + &turns(0..3);
    fs::write(&path, zstd(&text)).unwrap();

    let r = h.ingest();
    assert_eq!((r.new_turns, r.updated_turns, r.restarted_files), (3, 0, 0));
    assert_eq!(r.bytes, text.len() as u64);
    assert!(r.errors.is_empty(), "{:?}", r.errors);

    // Unchanged: not even opened.
    let r = h.ingest();
    assert_eq!(
        (r.bytes, r.new_turns, r.updated_turns, r.restarted_files),
        (0, 0, 0, 0)
    );

    // Touched (a copy, a restored backup): the same bytes are not decompressed again.
    let f = fs::File::options().write(true).open(&path).unwrap();
    f.set_modified(SystemTime::now() + Duration::from_secs(60))
        .unwrap();
    drop(f);
    let r = h.ingest();
    assert_eq!(
        (r.bytes, r.new_turns, r.updated_turns, r.restarted_files),
        (0, 0, 0, 0)
    );
    let r = h.ingest();
    assert_eq!((r.bytes, r.restarted_files), (0, 0));

    // Rewritten with one more turn: read again; the turns already stored are not "updated".
    let text = meta("/work/p", 200) + &turns(0..4);
    fs::write(&path, zstd(&text)).unwrap();
    let r = h.ingest();
    assert_eq!((r.new_turns, r.updated_turns, r.restarted_files), (1, 0, 1));
    assert_eq!(r.bytes, text.len() as u64);
    assert_eq!(r.turns, 4);
    assert_eq!(h.ingest().bytes, 0);
}

#[test]
fn a_truncated_compressed_rollout_keeps_the_lines_before_the_damage() {
    let h = Home::new();
    let path = h.archived(ID);
    let text = meta("/work/p", 200) + &turns(0..300);
    let z = zstd(&text);
    fs::write(&path, &z[..z.len() * 9 / 10]).unwrap();

    let r = h.ingest();
    assert!(
        r.new_turns >= 200 && r.new_turns < 300,
        "kept {} of 300 turns",
        r.new_turns
    );
    let msgs = messages(&r);
    assert_eq!(msgs.len(), 1, "{msgs:?}");
    assert!(
        msgs[0].starts_with("compressed file is truncated or damaged after ")
            && msgs[0].contains("(the zstd data ends early)")
            && msgs[0].ends_with("the lines before were kept"),
        "{}",
        msgs[0]
    );
    assert!(!msgs[0].contains("Error {"), "no debug dump: {}", msgs[0]);
    // The turns kept are the first ones, in order.
    let prompts = h.prompts();
    assert_eq!(prompts[0], "prompt 0000");
    assert_eq!(
        prompts.last().unwrap(),
        &format!("prompt {:04}", r.new_turns - 1)
    );

    // Nothing new: not read again, not reported again.
    let r = h.ingest();
    assert_eq!((r.bytes, r.new_turns, r.restarted_files), (0, 0, 0));
    assert!(r.errors.is_empty());

    // The whole file arrives later: the rest is read.
    fs::write(&path, &z).unwrap();
    let r = h.ingest();
    assert_eq!(r.turns, 300);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
}

#[test]
fn a_compressed_file_that_is_not_zstd_is_reported_plainly() {
    let h = Home::new();
    fs::write(h.archived(ID), meta("/work/p", 10) + &turns(0..1)).unwrap();
    let r = h.ingest();
    assert_eq!(r.turns, 0);
    assert_eq!(
        messages(&r),
        vec![
            "compressed file is truncated or damaged before its first complete line (the \
             file is not zstd data); nothing could be read from it"
                .to_owned()
        ]
    );
}

#[test]
fn a_file_rewritten_in_place_to_a_greater_size_is_read_again_from_the_start() {
    let h = Home::new();
    let path = h.rollout(ID);
    // The session_meta line alone is longer than the 4 KiB head, as Codex's often is.
    let head = meta("/work/p", 9000);
    assert!(head.len() > 4096);
    fs::write(&path, head.clone() + &turns(0..2)).unwrap();
    assert_eq!(h.ingest().new_turns, 2);

    // The same session written again, in place (same inode), with other turns and more bytes.
    let new = head
        + &turn("alpha", "rewritten turn alpha", "a")
        + &turn("beta", "rewritten turn beta", "b")
        + &turn("gamma", "rewritten turn gamma", "c");
    let mut f = fs::File::options()
        .write(true)
        .truncate(true)
        .open(&path)
        .unwrap();
    f.write_all(new.as_bytes()).unwrap();
    drop(f);
    let r = h.ingest();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.skipped_lines, 0);
    assert_eq!(r.restarted_files, 1);
    assert_eq!(r.new_turns, 3);
    assert!(h.prompts().contains(&"rewritten turn alpha".to_owned()));
}

/// The Stop hook asks the same question before it resumes its parser at the stored cursor:
/// yes after an append, no after a rewrite in place.
#[test]
fn the_hook_resumes_from_the_cursor_only_while_the_bytes_before_it_hold() {
    let h = Home::new();
    let path = h.rollout(ID);
    let head = meta("/work/p", 9000);
    fs::write(&path, head.clone() + &turns(0..2)).unwrap();
    h.ingest();
    let cursor = || {
        h.store()
            .cursor(&path.to_string_lossy())
            .unwrap()
            .expect("a cursor")
    };
    let c = cursor();
    assert!(cairn_ingest::cursor_still_valid(&path, &c));
    let mut f = fs::File::options().append(true).open(&path).unwrap();
    f.write_all(turn("t9", "appended prompt", "ok").as_bytes())
        .unwrap();
    drop(f);
    assert!(cairn_ingest::cursor_still_valid(&path, &c), "an append");
    let new = head + &turn("alpha", "rewritten", "a") + &turns(3..6);
    let mut f = fs::File::options().write(true).open(&path).unwrap();
    f.write_all(new.as_bytes()).unwrap();
    drop(f);
    assert!(!cairn_ingest::cursor_still_valid(&path, &c), "a rewrite");
}

#[test]
fn a_rewrite_with_a_line_end_at_the_old_cursor_is_still_noticed() {
    let h = Home::new();
    let path = h.rollout(ID);
    let head = meta("/work/p", 9000);
    fs::write(&path, head.clone() + &turn("t1", "first prompt 1", "x")).unwrap();
    assert_eq!(h.ingest().new_turns, 1);

    // Same line lengths, other bytes: the old cursor still falls just after a `\n`.
    let new = head + &turn("t2", "other prompt 2", "y") + &turn("t3", "third prompt", "z");
    let mut f = fs::File::options().write(true).open(&path).unwrap();
    f.write_all(new.as_bytes()).unwrap();
    drop(f);
    let r = h.ingest();
    assert_eq!(r.restarted_files, 1);
    assert_eq!(r.new_turns, 2);
    assert_eq!(
        h.prompts(),
        vec!["first prompt 1", "other prompt 2", "third prompt"]
    );
}

#[test]
fn appended_lines_and_a_completed_last_line_are_read_from_the_cursor() {
    let h = Home::new();
    let path = h.rollout(ID);
    let head = meta("/work/p", 9000);
    fs::write(&path, head.clone() + &turns(0..1)).unwrap();
    assert_eq!(h.ingest().new_turns, 1);

    // The agent appends a turn whose last line is still being written.
    let more = turns(1..2);
    let (now, later) = more.split_at(more.len() - 30);
    fs::File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(now.as_bytes())
        .unwrap();
    let r = h.ingest();
    assert_eq!(r.restarted_files, 0);
    let before_last = now.rfind('\n').unwrap() + 1;
    assert_eq!(
        r.bytes, before_last as u64,
        "only the appended complete lines"
    );

    fs::File::options()
        .append(true)
        .open(&path)
        .unwrap()
        .write_all(later.as_bytes())
        .unwrap();
    let r = h.ingest();
    assert_eq!(r.restarted_files, 0);
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.bytes, (more.len() - before_last) as u64);
    assert_eq!(r.turns, 2);
    assert_eq!(h.prompts(), vec!["prompt 0000", "prompt 0001"]);
    assert_eq!(h.ingest().bytes, 0);
}

#[test]
fn a_byte_order_mark_does_not_cost_the_first_record() {
    let h = Home::new();
    let proj = h.claude().join("projects/-work-p");
    fs::create_dir_all(&proj).unwrap();
    let sid = "5f3c9a2e-8b1d-4e7a-9c64-2d0b7f18e3a1";
    let user = format!(
        r#"{{"parentUuid":null,"isSidechain":false,"userType":"external","cwd":"/work/p","sessionId":"{sid}","version":"2.1.251","type":"user","message":{{"role":"user","content":"the prompt after a BOM"}},"uuid":"u1","timestamp":"2026-11-25T14:02:17.310Z"}}"#
    );
    let asst = format!(
        r#"{{"parentUuid":"u1","isSidechain":false,"userType":"external","cwd":"/work/p","sessionId":"{sid}","version":"2.1.251","type":"assistant","message":{{"model":"claude-sonnet-4-6","id":"msg_1","type":"message","role":"assistant","content":[{{"type":"text","text":"done"}}],"stop_reason":"end_turn"}},"uuid":"a1","timestamp":"2026-11-25T14:02:20.310Z"}}"#
    );
    fs::write(
        proj.join(format!("{sid}.jsonl")),
        format!("\u{feff}{user}\n{asst}\n"),
    )
    .unwrap();
    // And a rollout whose session_meta comes after a BOM.
    fs::write(
        h.rollout(ID),
        format!("\u{feff}{}{}", meta("/work/p", 10), turns(0..1)),
    )
    .unwrap();
    let r = h.ingest();
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(r.skipped_lines, 0);
    assert_eq!(h.prompts(), vec!["prompt 0000", "the prompt after a BOM"]);
}

#[derive(Default)]
struct Waits(Cell<u32>);
impl Progress for Waits {
    fn waiting(&self) {
        self.0.set(self.0.get() + 1);
    }
}

#[test]
fn a_second_pass_waits_for_the_first() {
    let h = Home::new();
    fs::write(h.rollout(ID), meta("/work/p", 10) + &turns(0..2)).unwrap();
    let mut store = h.store();
    let lock = h.data().join(cairn_ingest::LOCK_FILE);
    let held = cairn_store::lockfile::try_lock_file(&lock)
        .unwrap()
        .expect("free");
    let release = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(400));
        drop(held);
    });
    let waits = Waits::default();
    let t = Instant::now();
    let r = ingest(&mut store, &h.sources(), &waits).unwrap();
    release.join().unwrap();
    assert!(t.elapsed() >= Duration::from_millis(350), "waited");
    assert_eq!(waits.0.get(), 1, "told once");
    assert_eq!(r.new_turns, 2);
    // The lock is released with the pass.
    assert!(
        cairn_store::lockfile::try_lock_file(&lock)
            .unwrap()
            .is_some()
    );
}

#[test]
fn reading_a_file_again_does_not_count_unchanged_turns_as_updated() {
    let h = Home::new();
    let path = h.rollout(ID);
    fs::write(&path, meta("/work/p", 10) + &turns(0..3)).unwrap();
    assert_eq!(h.ingest().new_turns, 3);
    // Replaced by a shorter copy (a new inode): read again from the start.
    let tmp = path.with_extension("tmp");
    fs::write(&tmp, meta("/work/p", 10) + &turns(0..2)).unwrap();
    fs::rename(&tmp, &path).unwrap();
    let r = h.ingest();
    assert_eq!(
        (r.restarted_files, r.new_turns, r.updated_turns, r.turns),
        (1, 0, 0, 3)
    );
}

/// A store written by an older version of the parser (its cursors carry no parser revision,
/// or an older one): every file is read again from the start on the next run, what the old
/// parser made of it is replaced, nothing is duplicated, and the run after that reads nothing.
#[test]
fn files_read_by_an_older_parser_are_read_again_and_corrected() {
    let h = Home::new();
    let plain = h.rollout(ID);
    fs::write(&plain, meta("/work/p", 200) + &turns(0..3)).unwrap();
    let packed = h.archived("01a20872-2d99-772e-8ca9-396e307a2f76");
    fs::write(&packed, zstd(&(meta("/work/q", 200) + &turns(10..12)))).unwrap();
    let r = h.ingest();
    assert_eq!((r.new_turns, r.reparsed_files), (5, 0));

    // What an older version left: another text for a turn, and cursor states without a
    // revision (plain) or with an older one (compressed).
    let store = h.store();
    let db = store.connection();
    db.execute(
        "UPDATE turns SET body = replace(body, 'prompt 0001', 'prompt 0001 as the old parser read it'),
                          prompt = replace(prompt, 'prompt 0001', 'prompt 0001 as the old parser read it')",
        [],
    )
    .unwrap();
    let old_state = |s: String| -> String {
        let rest = s
            .split_once(",\"ingest_tail\"")
            .map(|(_, r)| format!("{{\"ingest_tail\"{r}"));
        rest.unwrap_or_else(|| {
            let current = format!("\"parser_revision\":{}", cairn_transcript::PARSER_REVISION);
            s.replacen(&current, "\"parser_revision\":0", 1)
        })
    };
    for path in [&plain, &packed] {
        let key = path.to_string_lossy().into_owned();
        let state: String = db
            .query_row("SELECT state FROM files WHERE path = ?1", [&key], |r| {
                r.get(0)
            })
            .unwrap();
        assert!(state.starts_with("{\"parser_revision\":"), "{state}");
        db.execute(
            "UPDATE files SET state = ?1 WHERE path = ?2",
            [old_state(state), key],
        )
        .unwrap();
    }
    drop(store);
    assert!(
        h.prompts()
            .contains(&"prompt 0001 as the old parser read it".to_owned())
    );

    let r = h.ingest();
    assert_eq!(
        (r.reparsed_files, r.restarted_files, r.new_turns, r.turns),
        (2, 0, 0, 5)
    );
    assert_eq!(
        r.updated_turns, 1,
        "only the turn the old parser read otherwise"
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let prompts = h.prompts();
    assert!(prompts.contains(&"prompt 0001".to_owned()), "{prompts:?}");
    assert!(!prompts.iter().any(|p| p.contains("old parser")));

    // Read by this revision now: the next run opens nothing, and an append resumes.
    let r = h.ingest();
    assert_eq!((r.bytes, r.reparsed_files, r.restarted_files), (0, 0, 0));
    let mut f = fs::File::options().append(true).open(&plain).unwrap();
    f.write_all(turn("t9", "appended prompt", "ok").as_bytes())
        .unwrap();
    drop(f);
    let r = h.ingest();
    assert_eq!(
        (r.new_turns, r.reparsed_files, r.restarted_files),
        (1, 0, 0)
    );
    assert!(
        r.bytes < 2_000,
        "only the appended lines: {} bytes",
        r.bytes
    );
}

/// A Codex rollback dropped turns from the thread: marked in the store, also when the
/// rollback is read in a later pass than the turns (the file grows between two runs); the
/// marked turn's revision rises, so what follows the turns reads it again.
#[test]
fn a_rollback_read_in_a_later_pass_marks_the_stored_turns() {
    let h = Home::new();
    let path = h.rollout(ID);
    fs::write(&path, meta("/work/p", 10) + &turns(0..3)).unwrap();
    assert_eq!(h.ingest().new_turns, 3);
    let revision = |key: &str| -> i64 {
        h.store()
            .connection()
            .query_row(
                "SELECT revision FROM turns WHERE turn_key = ?1",
                [key],
                |r| r.get(0),
            )
            .unwrap()
    };
    let before = revision("turn-0002");
    let rolled_back = |h: &Home| -> Vec<String> {
        let mut keys: Vec<String> = h
            .store()
            .all_turns()
            .unwrap()
            .into_iter()
            .filter(|t| t.turn.rolled_back)
            .map(|t| t.turn.key)
            .collect();
        keys.sort();
        keys
    };

    // Esc Esc on the last two prompts, then the thread goes on.
    let rollback = r#"{"timestamp":"2026-11-23T12:50:00.000Z","type":"event_msg","payload":{"type":"thread_rolled_back","num_turns":2}}"#;
    let mut f = fs::File::options().append(true).open(&path).unwrap();
    f.write_all(format!("{rollback}\n").as_bytes()).unwrap();
    f.write_all(turn("turn-0009", "prompt 0009", "ok").as_bytes())
        .unwrap();
    drop(f);
    let r = h.ingest();
    assert_eq!(r.restarted_files, 0, "read on from the cursor");
    assert_eq!((r.new_turns, r.updated_turns), (1, 2), "{r:?}");
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(rolled_back(&h), ["turn-0001", "turn-0002"]);
    assert!(revision("turn-0002") > before);
    // Nothing changed since: nothing read, nothing marked again.
    let r = h.ingest();
    assert_eq!((r.bytes, r.updated_turns), (0, 0));

    // Read again from the start (the file replaced by a copy), the same turns are marked.
    let tmp = path.with_extension("tmp");
    fs::copy(&path, &tmp).unwrap();
    fs::rename(&tmp, &path).unwrap();
    let r = h.ingest();
    assert_eq!((r.restarted_files, r.new_turns, r.updated_turns), (1, 0, 0));
    assert_eq!(rolled_back(&h), ["turn-0001", "turn-0002"]);
}

/// `thread/memoryMode/set` appends the thread's `session_meta` again with its new
/// `memory_mode`: the turns stored by earlier passes take the mode too (Codex decides per
/// thread), and are counted as updated; turned on again, they lose it.
#[test]
fn a_memory_mode_appended_later_reaches_the_turns_stored_before() {
    let h = Home::new();
    let path = h.rollout(ID);
    fs::write(&path, meta("/work/p", 200) + &turns(0..2)).unwrap();
    let r = h.ingest();
    assert_eq!((r.new_turns, r.memory_disabled_turns), (2, 0));
    let modes = || -> Vec<Option<String>> {
        h.store()
            .all_turns()
            .unwrap()
            .into_iter()
            .map(|t| t.turn.memory_mode)
            .collect()
    };
    assert_eq!(modes(), [None, None]);

    let set = |mode: &str| {
        meta("/work/p", 200).replacen(
            r#""source":"cli""#,
            &format!(r#""source":"cli","memory_mode":"{mode}""#),
            1,
        )
    };
    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all((set("disabled") + &turns(2..3)).as_bytes())
        .unwrap();
    drop(f);
    let r = h.ingest();
    assert_eq!(
        (r.new_turns, r.updated_turns, r.memory_disabled_turns),
        (1, 2, 3),
        "{r:?}"
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    assert_eq!(modes(), vec![Some("disabled".to_owned()); 3]);
    assert_eq!(h.ingest().updated_turns, 0, "read once");

    let mut f = fs::OpenOptions::new().append(true).open(&path).unwrap();
    f.write_all(set("enabled").as_bytes()).unwrap();
    drop(f);
    let r = h.ingest();
    assert_eq!((r.updated_turns, r.memory_disabled_turns), (3, 0), "{r:?}");
    assert_eq!(modes(), [None, None, None]);
}

/// A rollout of the early format (a bare `SessionMeta` first, `{"record_type":"state"}`
/// lines, bare `ResponseItem`s) gives its turns; a `.jsonl` under the sessions dir whose
/// lines are of no rollout shape is reported and counted, not read as an empty rollout.
#[test]
fn an_early_rollout_is_read_and_a_file_of_no_rollout_format_is_reported() {
    let h = Home::new();
    let legacy = "0198ab00-3f1e-7a2b-9c4d-5e6f7a8b0c01";
    let path = h.rollout(legacy);
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../cairn-transcript/tests/fixtures/codex/legacy-bare-records.jsonl");
    fs::copy(&fixture, &path).unwrap();
    let r = h.ingest();
    assert_eq!(
        (r.new_turns, r.skipped_lines, r.unrecognised_files),
        (2, 0, 0),
        "{r:?}"
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let turns = h.store().all_turns().unwrap();
    assert!(
        turns.iter().all(
            |t| t.turn.cwd.as_deref() == Some("/home/dev/work/legacy-api")
                && t.session_key == legacy
        ),
        "{turns:#?}"
    );
    assert!(
        turns[0]
            .turn
            .prompt
            .contains("uv for dependency management")
    );

    let other = h.rollout("01a20872-2d99-772e-8ca9-396e307a2f99");
    fs::write(
        &other,
        "{\"event\":\"start\",\"at\":1}\n{\"event\":\"chunk\",\"text\":\"hello\"}\n",
    )
    .unwrap();
    let r = h.ingest();
    assert_eq!((r.new_turns, r.unrecognised_files), (0, 1), "{r:?}");
    let said = messages(&r);
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("not a Codex rollout format cairn knows: none of its 2 JSON line(s)"),
        "{said:?}"
    );
    assert_eq!(h.ingest().unrecognised_files, 0, "said when read");
}

/// Codex archives a rollout by moving it to `archived_sessions/` (compressed or not): its
/// turns are the same turns, read from another file. Nothing counts as updated; the stored
/// turns name the new file.
#[test]
fn an_archived_rollout_is_the_same_turns_in_another_file() {
    let h = Home::new();
    let path = h.rollout(ID);
    let text = meta("/work/p", 200) + &turns(0..3);
    fs::write(&path, &text).unwrap();
    let r = h.ingest();
    assert_eq!((r.new_turns, r.updated_turns), (3, 0));

    let archived = h
        .codex()
        .join("archived_sessions")
        .join(path.file_name().unwrap());
    fs::create_dir_all(archived.parent().unwrap()).unwrap();
    fs::rename(&path, &archived).unwrap();
    let r = h.ingest();
    assert_eq!(
        (r.new_turns, r.updated_turns, r.moved_turns),
        (0, 0, 3),
        "{r:?}"
    );
    assert!(r.errors.is_empty(), "{:?}", r.errors);
    let stored = h.store().all_turns().unwrap();
    assert!(
        stored
            .iter()
            .all(|t| t.source_path == archived.to_string_lossy()),
        "{stored:#?}"
    );
    assert_eq!(h.ingest().moved_turns, 0, "read once");

    // Archived compressed, as Codex may keep it.
    let packed = h.archived(ID);
    fs::write(&packed, zstd(&text)).unwrap();
    fs::remove_file(&archived).unwrap();
    let r = h.ingest();
    assert_eq!(
        (r.new_turns, r.updated_turns, r.moved_turns),
        (0, 0, 3),
        "{r:?}"
    );
}

/// A store kept by a build whose redaction rules were older: the first pass of this build
/// redacts the stored turns and digests again, from the store alone (the transcript may be
/// gone, as Claude Code deletes old ones), masks a value the rules find in every later turn
/// of the session that repeats it bare, and does it once.
#[test]
fn stored_turns_are_redacted_again_when_the_rules_improve() {
    let h = Home::new();
    let plain = h.rollout(ID);
    fs::write(&plain, meta("/work/p", 200) + &turns(0..3)).unwrap();
    let r = h.ingest();
    assert_eq!((r.new_turns, r.redacted_again), (3, 0));
    let store = h.store();
    assert_eq!(
        store.meta(cairn_ingest::REDACTION_MARK).unwrap().as_deref(),
        Some(cairn_redact::RULES_VERSION.to_string().as_str()),
        "a store whose first turns this build wrote is marked as redacted by its rules"
    );

    // What an older build's rules let through: a password stated in one turn and repeated
    // bare in the next, and a digest quoting it.
    let secret = "Tr0ub4dor-x9q";
    let db = store.connection();
    db.execute(
        "UPDATE turns SET body = replace(body, 'prompt 0001', ?1),
                          prompt = replace(prompt, 'prompt 0001', ?1)",
        [format!("export DB_PASSWORD={secret}")],
    )
    .unwrap();
    db.execute(
        "UPDATE turns SET body = replace(body, 'prompt 0002', ?1),
                          prompt = replace(prompt, 'prompt 0002', ?1)",
        [format!("try {secret} again")],
    )
    .unwrap();
    store
        .upsert_digest(
            "codex",
            "k",
            "turn-0001",
            Some("/work/p"),
            &serde_json::json!({"requirements": format!("export DB_PASSWORD={secret}"), "changes": ["none"]})
                .to_string(),
            1,
        )
        .unwrap();
    store.set_meta(cairn_ingest::REDACTION_MARK, "0").unwrap();
    let revision = store.max_turn_revision().unwrap();
    drop(store);
    fs::remove_file(&plain).unwrap();

    let r = h.ingest();
    assert_eq!(r.redacted_again, 3, "two turns and the digest");
    let store = h.store();
    let everything: Vec<String> = store
        .all_turns()
        .unwrap()
        .into_iter()
        .map(|t| serde_json::to_string(&t.turn).unwrap())
        .chain(std::iter::once(
            store
                .digest("codex", "k", "turn-0001")
                .unwrap()
                .unwrap()
                .body,
        ))
        .collect();
    assert!(
        everything.iter().all(|t| !t.contains(secret)),
        "{everything:#?}"
    );
    assert!(h.prompts().iter().any(|p| p.starts_with("try [REDACTED")));
    assert!(
        store.max_turn_revision().unwrap() > revision,
        "what follows the turns reads the changed ones again"
    );
    drop(store);
    assert_eq!(
        h.ingest().redacted_again,
        0,
        "once per version of the rules"
    );
}
