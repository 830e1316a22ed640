//! Embedding throughput on short texts (single thread).
fn main() {
    let texts = [
        "use pnpm, not npm",
        "which package manager should I use",
        "run the tests with cargo nextest before pushing to main",
        "The staging database password rotates monthly; ask ops for the new one.",
        "Prefer tabs over spaces in Go files, the linter enforces gofmt anyway.",
        "Deploys go through the release pipeline on Fridays after the freeze is lifted.",
        "Crème brûlée recipe: 4 yolks, 500 ml cream, 100 g sugar, vanilla.",
        "日本語のテキストも扱える",
    ];
    let e = cairn_embed::embedder();
    let mut out = vec![0.0f32; e.dims()];
    let n = 200_000;
    let t = std::time::Instant::now();
    let mut tokens = 0;
    for i in 0..n {
        tokens += e.embed_into(texts[i % texts.len()], &mut out);
    }
    let s = t.elapsed().as_secs_f64();
    println!(
        "{n} texts in {s:.2}s: {:.0} texts/s, {:.0} tokens/s",
        n as f64 / s,
        tokens as f64 / s
    );
}
