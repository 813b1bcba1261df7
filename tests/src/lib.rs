//! The generated modules of every circuit in `circuits/`, built by `build.rs` through
//! `metrale_codegen::Builder` exactly as a user's crate builds them, and compiled here under
//! `#![deny(warnings, missing_docs)]` and the workspace's `clippy::pedantic`: a generated item
//! without docs, or with a lint, fails this crate's build.
#![deny(warnings, missing_docs)]

/// Every circuit file this crate includes, relative to the workspace root.
pub const CIRCUITS: [&str; 1] = ["circuits/qwen3_5.toml"];

include!(concat!(env!("OUT_DIR"), "/qwen3_5.rs"));

/// The same circuits generated against a re-export of the runtime crate
/// (`Builder::runtime_path("crate::reexported::rt")`), for crates that re-export it.
pub mod reexported {
    /// The runtime crate, re-exported under another path.
    pub mod rt {
        pub use metrale_circuit::*;
    }

    include!(concat!(env!("OUT_DIR"), "/reexported/qwen3_5.rs"));
}
