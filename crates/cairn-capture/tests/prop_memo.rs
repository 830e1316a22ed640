//! Property tests of the memo journal: `memo::check` never panics on arbitrary text, and any
//! rendered block (whatever its digest text: newlines, markers, HTML comments, Unicode) passes
//! the check, is found by its key, and is appended once.
//! Cases: `PROPTEST_CASES` (default 64); `scripts/proptest-long.sh` runs them long.

use cairn_capture::TurnDigest;
use cairn_capture::memo::{self, MemoKey};
use proptest::prelude::*;

fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Text made of the pieces of a memo block, and anything else.
fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just(memo::OPEN.to_string()),
            Just(memo::CLOSE.to_string()),
            Just("agent=claude session=s turn=t -->".to_string()),
            Just("-->".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just("## 2026-11-25 14:05 - Codex turn t1\n".to_string()),
            Just("- Requirements: ".to_string()),
            Just("- Open issues: ".to_string()),
            "[a-z :-]{0,12}".prop_map(|s| s),
            any::<String>(),
        ],
        0..30,
    )
    .prop_map(|v| v.concat())
}

fn digest() -> impl Strategy<Value = TurnDigest> {
    (
        fragments(),
        prop::collection::vec(fragments(), 0..3),
        fragments(),
        prop::collection::vec(fragments(), 0..3),
        prop::collection::vec(fragments(), 0..3),
    )
        .prop_map(
            |(requirements, investigation, decision, changes, open_issues)| TurnDigest {
                requirements,
                investigation,
                decision,
                changes,
                verification: Vec::new(),
                open_issues,
            },
        )
}

fn key() -> impl Strategy<Value = MemoKey> {
    (fragments(), fragments(), fragments()).prop_map(|(a, s, t)| MemoKey {
        agent: if a.len() % 2 == 0 {
            "claude".into()
        } else {
            "codex".into()
        },
        session: s,
        turn: t,
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn check_never_panics(text in fragments()) {
        let (blocks, problems) = memo::check(&text);
        let lines = text.lines().count() + 1;
        prop_assert!(blocks <= lines);
        for p in problems {
            prop_assert!(p.line >= 1 && p.line <= lines, "{:?} in {:?}", p, text);
        }
    }

    #[test]
    fn rendered_blocks_validate_and_append_once(k in key(), d in digest(), prefix in fragments()) {
        let block = memo::render_block(&k, "2026-11-25 14:05", &d);
        let (blocks, problems) = memo::check(&block);
        prop_assert_eq!(blocks, 1, "{}", block);
        prop_assert!(problems.is_empty(), "{:?}\n{}", problems, block);
        prop_assert!(memo::contains_block(&block, &k));

        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("memo.md");
        // Whatever the user wrote before (closed so it is not an open block of its own).
        std::fs::write(&file, format!("{prefix}\n{}\n", memo::CLOSE)).unwrap();
        let lock = dir.path().join("memo.lock");
        let first = memo::append_block(&file, &lock, &k, &block).unwrap();
        let again = memo::append_block(&file, &lock, &k, &block).unwrap();
        prop_assert_eq!(first, memo::Appended::Written);
        prop_assert_eq!(again, memo::Appended::AlreadyPresent);
        let text = std::fs::read_to_string(&file).unwrap();
        prop_assert!(text.starts_with(&prefix));
        prop_assert_eq!(text.matches(&block).count(), 1);
    }
}
