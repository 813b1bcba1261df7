//! A circuit path naming no file: the path as written, relative to this file.
mod plans {
    metrale_macros::circuit!("../circuits/missing.toml");
}

fn main() {}
