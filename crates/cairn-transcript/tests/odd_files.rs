//! Files the agents did not write quite as usual: a byte order mark in front of the first
//! record, a compressed rollout cut short, a transcript whose name is not UTF-8.

use std::fs;
use std::path::PathBuf;

use cairn_transcript::reader::{LineItem, StopAtError, read_lines};
use cairn_transcript::zst::Damaged;
use cairn_transcript::{
    Agent, ClaudeRoot, CodexHome, FileKind, Parser, TranscriptFile, open_transcript, rollout_cwd,
};

const ID: &str = "01a20872-2d99-772e-8ca9-396e307a2f75";

fn scratch(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join("odd_files")
        .join(name);
    let _ = fs::remove_dir_all(&dir);
    fs::create_dir_all(&dir).unwrap();
    dir
}

fn meta(cwd: &str) -> String {
    format!(
        r#"{{"timestamp":"2026-11-23T12:47:10.517Z","type":"session_meta","payload":{{"id":"{ID}","cwd":"{cwd}","originator":"codex_cli_rs"}}}}"#
    )
}

fn codex_turn(i: usize) -> String {
    format!(
        concat!(
            r#"{{"timestamp":"2026-11-23T12:47:16.692Z","type":"event_msg","payload":{{"type":"task_started","turn_id":"t{i}"}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-11-23T12:47:16.705Z","type":"event_msg","payload":{{"type":"user_message","message":"prompt {i} {pad}","kind":"plain"}}}}"#,
            "\n",
            r#"{{"timestamp":"2026-11-23T12:47:19.200Z","type":"event_msg","payload":{{"type":"task_complete","turn_id":"t{i}"}}}}"#,
            "\n"
        ),
        i = i,
        pad = (0..30)
            .map(|k| format!("{:x}", (i * 2_654_435_761 + k * 40_503) % 65_521))
            .collect::<String>()
    )
}

#[test]
fn a_byte_order_mark_is_not_part_of_the_first_record() {
    let mut p = Parser::new(Agent::Claude, "s1");
    let line = "\u{feff}{\"type\":\"user\",\"sessionId\":\"s1\",\"cwd\":\"/w\",\"uuid\":\"u1\",\
                \"timestamp\":\"2026-11-25T14:02:17.310Z\",\
                \"message\":{\"role\":\"user\",\"content\":\"first prompt\"}}";
    let (r, lossy) = p.feed_bytes(line.as_bytes(), 1);
    assert!(r.is_ok(), "{r:?}");
    assert!(!lossy);
    assert_eq!(p.current().map(|t| t.prompt.as_str()), Some("first prompt"));

    // A rollout's working directory is found behind one too.
    let home = scratch("bom");
    let dir = home.join("sessions/2026/11/23");
    fs::create_dir_all(&dir).unwrap();
    fs::write(
        dir.join(format!("rollout-2026-11-23T12-47-10-{ID}.jsonl")),
        format!("\u{feff}{}\n", meta("/work/bom")),
    )
    .unwrap();
    let files = CodexHome::new(&home).rollouts(&mut Vec::new());
    assert_eq!(files.len(), 1);
    assert_eq!(
        rollout_cwd(&files[0]).unwrap().as_deref(),
        Some("/work/bom")
    );
}

#[test]
fn a_truncated_compressed_rollout_gives_its_lines_up_to_the_damage() {
    let dir = scratch("zst");
    let path = dir.join(format!("rollout-2026-11-23T12-47-10-{ID}.jsonl.zst"));
    let text: String = std::iter::once(meta("/work/z") + "\n")
        .chain((0..2000).map(codex_turn))
        .collect();
    let z = ruzstd::encoding::compress_to_vec(
        text.as_bytes(),
        ruzstd::encoding::CompressionLevel::Fastest,
    );
    fs::write(&path, &z[..z.len() * 9 / 10]).unwrap();
    let file = TranscriptFile {
        path: path.clone(),
        agent: Agent::Codex,
        kind: FileKind::Rollout,
        session_hint: ID.to_owned(),
        compressed: true,
        project_key: None,
    };
    // The cwd comes from the first record, well before the damage.
    assert_eq!(rollout_cwd(&file).unwrap().as_deref(), Some("/work/z"));

    let mut r = StopAtError::new(open_transcript(&path, true).unwrap());
    let mut parser = Parser::new(Agent::Codex, ID);
    let mut closed = 0;
    let summary = read_lines(&mut r, 0, |item| {
        if let LineItem::Line { bytes, number } = item {
            assert!(parser.feed_bytes(bytes, number).0.is_ok(), "line {number}");
            closed += parser.take_closed().len();
        }
    })
    .unwrap();
    let damage = r.error().and_then(Damaged::of);
    assert_eq!(damage, Some(&Damaged::Truncated));
    assert_eq!(damage.unwrap().to_string(), "the zstd data ends early");
    assert!((1500..2000).contains(&closed), "{closed} turns of 2000");
    assert!(
        summary.lines as usize > 3 * closed,
        "the meta line and every kept turn"
    );
}

/// A transcript whose path is not valid UTF-8 (a rollout renamed with Latin-1 bytes, a day
/// directory copied from another system) cannot be keyed apart from others: it is reported,
/// by name, never dropped without a word; its neighbours are read.
#[cfg(unix)]
#[test]
fn a_transcript_whose_path_is_not_utf8_is_reported_not_dropped() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let home = scratch("not-utf8");
    let day = home.join("sessions/2026/11/20");
    fs::create_dir_all(&day).unwrap();
    let rollout = |dir: &std::path::Path, prefix: &[u8], id: &str| {
        let name = [prefix, format!("2026-11-20T10-00-00-{id}.jsonl").as_bytes()].concat();
        let path = dir.join(OsStr::from_bytes(&name));
        fs::write(&path, meta("/work/app") + "\n").unwrap();
        path
    };
    let renamed = rollout(&day, b"rollout-\xff\xfe-", ID);
    let odd_day = home.join(OsStr::from_bytes(b"sessions/2026/11/2\xe9"));
    fs::create_dir_all(&odd_day).unwrap();
    let copied = rollout(
        &odd_day,
        b"rollout-",
        "01a20872-2d99-772e-8ca9-396e307a2f76",
    );
    let fine = rollout(&day, b"rollout-", "01a20872-2d99-772e-8ca9-396e307a2f77");
    // Not a rollout by its name: no word about it, as for any other file.
    fs::write(day.join(OsStr::from_bytes(b"notes-\xff.txt")), "x").unwrap();

    let mut problems = Vec::new();
    let files = CodexHome::new(&home).rollouts(&mut problems);
    assert_eq!(
        files.iter().map(|f| f.path.clone()).collect::<Vec<_>>(),
        [fine]
    );
    let mut named: Vec<String> = problems.iter().map(|p| p.path.clone()).collect();
    named.sort();
    let mut expected = vec![copied.display().to_string(), renamed.display().to_string()];
    expected.sort();
    assert_eq!(named, expected, "{problems:?}");
    assert!(
        problems
            .iter()
            .all(|p| p.message.contains("not valid UTF-8") && p.message.contains("rename")),
        "{problems:?}"
    );

    // Claude Code sessions and subagent transcripts alike.
    let root = scratch("not-utf8-claude");
    let project = root.join("projects/-work-app");
    fs::create_dir_all(project.join("s1/subagents")).unwrap();
    fs::write(project.join(OsStr::from_bytes(b"\xff.jsonl")), "{}\n").unwrap();
    fs::write(
        project.join(OsStr::from_bytes(b"s1/subagents/agent-\xff.jsonl")),
        "{}\n",
    )
    .unwrap();
    fs::write(project.join("s1.jsonl"), "{}\n").unwrap();
    let mut problems = Vec::new();
    let projects = ClaudeRoot::new(&root).projects(&mut problems);
    assert_eq!(projects.len(), 1);
    assert_eq!(projects[0].session_files(&mut problems).len(), 1);
    assert!(projects[0].subagent_files(&mut problems).is_empty());
    assert_eq!(problems.len(), 2, "{problems:?}");
}
