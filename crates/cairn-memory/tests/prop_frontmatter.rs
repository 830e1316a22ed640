//! Property tests of view-file (frontmatter) parsing: arbitrary text never panics, and a
//! frontmatter block of `key: value` lines followed by a body reads back as those fields and
//! that body, whatever the line endings (`\n`, `\r\n`) and a leading BOM.
//! Cases: `PROPTEST_CASES` (default 64); `scripts/proptest-long.sh` runs them long.

mod common;

use cairn_memory::views::parse_view;
use common::config;
use proptest::prelude::*;

/// Text made of the pieces frontmatter parsing looks at, and anything else.
fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("---".to_string()),
            Just("\n".to_string()),
            Just("\r\n".to_string()),
            Just(":".to_string()),
            Just("\"".to_string()),
            Just("'".to_string()),
            Just(" #".to_string()),
            Just("\u{feff}".to_string()),
            Just("é😀".to_string()),
            "[a-z ]{0,8}".prop_map(|s| s),
            any::<String>(),
        ],
        0..24,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics(text in fragments()) {
        let v = parse_view(&text);
        prop_assert!(v.body.len() <= text.len());
    }

    #[test]
    fn fields_and_body_read_back(
        fields in prop::collection::btree_map("[a-z][a-z_]{0,10}", "[A-Za-z0-9 ,.()/-]{0,30}", 0..6),
        body in "[A-Za-z0-9 .,:#\n-]{0,200}",
        crlf in any::<bool>(),
        bom in any::<bool>(),
    ) {
        let nl = if crlf { "\r\n" } else { "\n" };
        let mut text = String::new();
        if bom {
            text.push('\u{feff}');
        }
        text.push_str("---");
        text.push_str(nl);
        for (k, v) in &fields {
            text.push_str(&format!("{k}: {v}{nl}"));
        }
        text.push_str("---");
        text.push_str(nl);
        text.push_str(&body.replace('\n', nl));
        let v = parse_view(&text);
        for (k, val) in &fields {
            prop_assert_eq!(v.fields.get(k).map(String::as_str), Some(val.trim()), "{:?}", text);
        }
        prop_assert_eq!(v.body.replace("\r\n", "\n"), body.trim().to_string(), "{:?}", text);
    }
}
