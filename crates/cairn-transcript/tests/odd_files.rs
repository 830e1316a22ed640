//! Files the agents did not write quite as usual: a byte order mark in front of the first
//! record, a compressed rollout cut short.

use std::fs;
use std::path::PathBuf;

use cairn_transcript::reader::{LineItem, StopAtError, read_lines};
use cairn_transcript::zst::Damaged;
use cairn_transcript::{
    Agent, CodexHome, FileKind, Parser, TranscriptFile, open_transcript, rollout_cwd,
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
