//! Generates the Qwen3.5 and Nemotron-H plans into `$OUT_DIR` with the `build.rs` API, as a
//! user's binary crate does (paths relative to this package, where cargo runs the script).

fn main() -> Result<(), Box<dyn std::error::Error>> {
    metrale_codegen::Builder::new()
        .circuit("../../circuits/qwen3_5.toml")
        .circuit("../../circuits/nemotron_h.toml")
        .compile()?;
    Ok(())
}
