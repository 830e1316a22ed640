//! Prints the cosine between the first argument and each following one.
fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((first, rest)) = args.split_first() else {
        eprintln!("usage: similarity TEXT OTHER...");
        return;
    };
    let q = cairn_embed::embed(first);
    for other in rest {
        println!(
            "{:.4}  {other}",
            cairn_embed::cosine(&q, &cairn_embed::embed(other))
        );
    }
}
