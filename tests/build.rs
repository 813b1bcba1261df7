//! Generates the module of every circuit in `circuits/` with the `build.rs` API, as a user's
//! crate would, and of the suites' own circuit of KV shared across layers
//! (`ui/circuits/shared_kv.toml`); `src/lib.rs` includes them.

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut circuits: Vec<_> = std::fs::read_dir("../circuits")?
        .filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|ext| ext == "toml"))
        .collect();
    circuits.sort();
    let builder = circuits
        .iter()
        .fold(metrale_codegen::Builder::new(), |builder, path| {
            builder.circuit(path)
        })
        .circuit("ui/circuits/shared_kv.toml");
    builder.compile()?;
    // The same circuits against a re-export of the runtime crate (`Builder::runtime_path`).
    let out_dir = std::path::PathBuf::from(std::env::var_os("OUT_DIR").ok_or("no OUT_DIR")?);
    circuits
        .iter()
        .fold(
            metrale_codegen::Builder::new(),
            metrale_codegen::Builder::circuit,
        )
        .out_dir(out_dir.join("reexported"))
        .runtime_path("crate::reexported::rt")
        .rerun_if_changed(false)
        .compile()?;
    // A circuit added to the folder must be generated too.
    println!("cargo::rerun-if-changed=../circuits");
    Ok(())
}
