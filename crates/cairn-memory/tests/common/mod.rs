//! What this crate's property tests share.

use proptest::prelude::ProptestConfig;

/// `PROPTEST_CASES` cases (default 64), nothing persisted: `scripts/proptest-long.sh` runs
/// them long.
pub fn config() -> ProptestConfig {
    ProptestConfig {
        cases: std::env::var("PROPTEST_CASES")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(64),
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}
