//! Generates the module of every circuit in `circuits/` with the `build.rs` API, as a user's
//! crate would; `src/lib.rs` includes them.

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
        });
    builder.compile()?;
    // A circuit added to the folder must be generated too.
    println!("cargo::rerun-if-changed=../circuits");
    Ok(())
}
