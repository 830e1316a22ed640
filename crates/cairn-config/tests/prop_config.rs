//! Property tests of `config.toml` parsing: arbitrary text never panics and every error names a
//! line and column inside the text; any combination of valid settings parses to those values.
//! Cases: `PROPTEST_CASES` (default 64); `scripts/proptest-long.sh` runs them long.

use std::path::Path;

use cairn_config::{Config, ConfigError};
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

fn fragments() -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![
            Just("[memo]\n".to_string()),
            Just("[worker]\n".to_string()),
            Just("[recall]\n".to_string()),
            Just("[[memo]]\n".to_string()),
            Just("enabled = ".to_string()),
            Just("path = ".to_string()),
            Just("max_attempts = ".to_string()),
            Just("session_budget_tokens = ".to_string()),
            Just("true\n".to_string()),
            Just("\"x\"\n".to_string()),
            Just("99999999999999999999\n".to_string()),
            Just("-1\n".to_string()),
            Just("{ a = 1 }\n".to_string()),
            Just("\r\n".to_string()),
            Just("é😀".to_string()),
            "[a-z_=\\[\\] \"]{0,10}".prop_map(|s| s),
            any::<String>(),
        ],
        0..20,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn arbitrary_text_never_panics_and_errors_point_inside(text in fragments()) {
        match Config::parse(&text, Path::new("config.toml")) {
            Ok(c) => prop_assert!(c.worker.max_attempts >= 1),
            Err(ConfigError::Parse { line, column, .. }) => {
                prop_assert!(line >= 1 && line <= text.split('\n').count(), "{} in {:?}", line, text);
                prop_assert!(column >= 1);
            }
            Err(e) => prop_assert!(false, "{e}"),
        }
    }

    #[test]
    fn valid_settings_read_back(
        enabled in any::<bool>(),
        path in "[a-zA-Z0-9_./~-]{1,30}",
        attempts in 0u32..1000,
        budget in 0u32..100_000,
    ) {
        let text = format!(
            "[memo]\nenabled = {enabled}\npath = \"{path}\"\n[worker]\nmax_attempts = {attempts}\n[recall]\nsession_budget_tokens = {budget}\n"
        );
        let c = Config::parse(&text, Path::new("config.toml")).unwrap();
        prop_assert_eq!(c.memo.enabled, enabled);
        prop_assert_eq!(c.memo.path.as_deref(), Some(path.as_str()));
        prop_assert_eq!(c.worker.max_attempts as u64, u64::from(attempts.max(1)));
        prop_assert_eq!(c.recall.session_budget_tokens as u64, u64::from(budget));
    }
}
