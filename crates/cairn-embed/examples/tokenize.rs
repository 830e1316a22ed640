//! Prints the WordPiece ids of each line of stdin, space-separated (a cross-check aid
//! against other BERT tokenizer implementations).
use std::io::BufRead;

fn main() {
    let wp = cairn_embed::embedder().wordpiece();
    for line in std::io::stdin().lock().lines().map_while(Result::ok) {
        let ids: Vec<String> = wp.encode(&line).iter().map(u32::to_string).collect();
        println!("{}", ids.join(" "));
    }
}
