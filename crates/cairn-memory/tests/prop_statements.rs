//! Property tests of the offline extractor and the dedupe decision on hostile text: any prompt
//! (mixed scripts, markers, punctuation, code spans, multi-byte characters where a rule looks
//! for ASCII) gives candidates without panicking, and any two texts get a relation.
//! Cases: `PROPTEST_CASES` (default 64); `scripts/proptest-long.sh` runs them long.

mod common;

use cairn_memory::{MemoryType, candidates, similar};
use common::config;
use proptest::prelude::*;

/// Pieces the extraction rules look at, next to anything at all.
fn prompt() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("no ".to_string()),
            Just("fyi ".to_string()),
            Just("ok, ".to_string()),
            Just("we moved from ".to_string()),
            Just(" to ".to_string()),
            Just(", never commit ".to_string()),
            Just(" everywhere".to_string()),
            Just(" only in ".to_string()),
            Just("remember ".to_string()),
            Just("from now on ".to_string()),
            Just("`code ... span`".to_string()),
            Just(": https://x.example/issues/?p=1 ".to_string()),
            Just("はやめて、".to_string()),
            Just("から".to_string()),
            Just("に移行した。".to_string()),
            Just("方針で".to_string()),
            Just("我们上个月把".to_string()),
            Just("换成".to_string()),
            Just("，不用 ".to_string()),
            Just("这个你记一下。".to_string()),
            Just("CIだけ落ちます。".to_string()),
            Just("forget the rule about ".to_string()),
            Just("ignore what I told you about ".to_string()),
            Just(", that's no longer true — ".to_string()),
            Just("のルールはMemoryから忘れて".to_string()),
            Just("忘掉关于".to_string()),
            Just("的那条规则，".to_string()),
            Just("把".to_string()),
            Just("关于".to_string()),
            Just("我说的话忽略吧，".to_string()),
            Just("Globally: ".to_string()),
            Just("すべてのプロジェクトで、".to_string()),
            Just("the end of the month ".to_string()),
            Just("December 15 ".to_string()),
            Just("on the 3rd ".to_string()),
            Just("é".to_string()),
            Just("\u{2019}".to_string()),
            Just("02:00".to_string()),
            Just(". ".to_string()),
            Just("\n".to_string()),
            "\\PC{0,12}",
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn any_prompt_gives_candidates_without_panicking(p in prompt()) {
        for c in candidates(&p) {
            prop_assert!(!c.rule.trim().is_empty());
        }
        for r in cairn_memory::retractions(&p) {
            prop_assert!(!r.subject.trim().is_empty());
        }
        let _ = cairn_memory::dates::absolutise(&p, jiff::civil::date(2026, 11, 25));
    }

    #[test]
    fn any_two_texts_get_a_relation(a in prompt(), b in prompt()) {
        for t in [MemoryType::Feedback, MemoryType::Project] {
            let _ = similar::relation(t, &a, t, &b, 0.9);
            let _ = similar::relation(t, &b, t, &a, 0.5);
        }
    }
}
