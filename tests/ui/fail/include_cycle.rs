//! A circuit whose block libraries include each other.
mod plans {
    metrale_macros::circuit!("../circuits/cycle.toml");
}

fn main() {}
