//! Computes the lookup index of the embedded WordPiece vocabulary at build time (see
//! `src/vocab_index.rs`), so that a process embeds its first text without hashing the
//! whole vocabulary.

#[path = "src/vocab_index.rs"]
mod vocab_index;

use std::path::PathBuf;

fn main() {
    println!("cargo:rerun-if-changed=data/vocab.txt");
    println!("cargo:rerun-if-changed=src/vocab_index.rs");
    let text = match std::fs::read_to_string("data/vocab.txt") {
        Ok(t) => t,
        Err(e) => panic!("cannot read data/vocab.txt: {e}"),
    };
    let Some(index) = vocab_index::build(&text) else {
        panic!("data/vocab.txt is too large for the vocabulary index");
    };
    let Some(out) = std::env::var_os("OUT_DIR").map(PathBuf::from) else {
        panic!("OUT_DIR is not set (cargo sets it for build scripts)");
    };
    if let Err(e) = std::fs::write(out.join("vocab_index.bin"), index) {
        panic!("cannot write the vocabulary index: {e}");
    }
}
