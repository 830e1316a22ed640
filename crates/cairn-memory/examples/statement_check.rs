//! What the Stop hook pays to ask whether a read-only turn's prompt states a memory: the
//! first call of `extract::candidates` in a fresh process (the patterns it needs are compiled
//! then), and a second call. Run it as a new process per prompt, as the hook is:
//!
//! ```sh
//! cargo build --release -p cairn-memory --example statement_check
//! target/release/examples/statement_check "fix the flaky checkout test"
//! ```

use std::time::Instant;

fn main() {
    let prompt = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "fix the flaky test in the checkout flow and run it again".into());
    let t = Instant::now();
    let first = cairn_memory::extract::candidates(&prompt);
    let cold = t.elapsed();
    let t = Instant::now();
    let _ = cairn_memory::extract::candidates(&prompt);
    let warm = t.elapsed();
    println!(
        "{} statement(s); first call {:.1} µs, second {:.1} µs",
        first.len(),
        cold.as_secs_f64() * 1e6,
        warm.as_secs_f64() * 1e6
    );
}
