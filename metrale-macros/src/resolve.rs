//! The path rule: a circuit path is relative to the source file that calls the macro, like
//! `include_str!`; an absolute path is used as it is.
//!
//! Owner: metrale-macros. Invariants: plain functions over paths (no compiler state, so they
//! are unit-tested); the result is absolute whenever the calling file or the working directory
//! is; nothing is normalised or made canonical (`..` stays, symlinks are not followed), so the
//! compiler's own `include_str!` of the result reads the same file the loader read.

use std::path::{Path, PathBuf};

/// The folder a relative circuit path (and an inline circuit's includes) resolves against:
/// the calling file's folder, made absolute against `cwd` (the compiler's working directory)
/// when the compiler names the file relatively. `None` when the calling file is unknown (a
/// tool that runs the macro outside rustc), or relative with no working directory.
pub(crate) fn base_dir(calling_file: Option<&Path>, cwd: Option<&Path>) -> Option<PathBuf> {
    let file = calling_file?;
    let dir = file.parent().unwrap_or(Path::new(""));
    if dir.is_absolute() {
        Some(dir.to_path_buf())
    } else {
        Some(cwd?.join(dir))
    }
}

/// The file `written` (the path in the macro call) names: itself when absolute, else joined
/// to [`base_dir`].
///
/// # Errors
/// A message for the user when `written` is relative and the base folder is unknown.
pub(crate) fn resolve(
    written: &str,
    calling_file: Option<&Path>,
    cwd: Option<&Path>,
) -> Result<PathBuf, String> {
    let path = Path::new(written);
    if path.is_absolute() {
        return Ok(path.to_path_buf());
    }
    base_dir(calling_file, cwd).map(|dir| dir.join(path)).ok_or_else(|| {
        format!(
            "cannot resolve the circuit path `{written}`: the source file calling `circuit!` is \
             unknown to the compiler, and a relative path is relative to that file"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An absolute path on this platform.
    fn root() -> PathBuf {
        std::env::temp_dir().join("ws")
    }

    #[test]
    fn relative_to_an_absolute_calling_file() {
        let file = root().join("tests/ui/pass/x.rs");
        assert_eq!(
            resolve("../../../circuits/q.toml", Some(&file), None).unwrap(),
            root().join("tests/ui/pass/../../../circuits/q.toml")
        );
        assert_eq!(
            resolve("q.toml", Some(&file), Some(Path::new("/elsewhere"))).unwrap(),
            root().join("tests/ui/pass/q.toml"),
            "the working directory does not matter then"
        );
    }

    #[test]
    fn relative_to_a_relative_calling_file() {
        // Cargo names a workspace member's files relative to the workspace root, rustc's
        // working directory.
        let file = Path::new("my-crate/src/model.rs");
        assert_eq!(
            resolve("circuits/q.toml", Some(file), Some(&root())).unwrap(),
            root().join("my-crate/src/circuits/q.toml")
        );
        // A calling file with no folder (`lib.rs` given bare): the working directory itself.
        assert_eq!(
            resolve("q.toml", Some(Path::new("lib.rs")), Some(&root())).unwrap(),
            root().join("q.toml")
        );
    }

    #[test]
    fn absolute_paths_are_used_as_they_are() {
        let absolute = root().join("circuits/q.toml");
        let written = absolute.to_str().unwrap();
        assert_eq!(resolve(written, None, None).unwrap(), absolute);
        let file = Path::new("src/lib.rs");
        assert_eq!(
            resolve(written, Some(file), Some(Path::new("/x"))).unwrap(),
            absolute
        );
    }

    #[test]
    fn unknown_base_is_an_error() {
        let message = resolve("q.toml", None, Some(&root())).unwrap_err();
        assert!(message.starts_with("cannot resolve the circuit path `q.toml`"));
        assert!(resolve("q.toml", Some(Path::new("src/lib.rs")), None).is_err());
        assert_eq!(base_dir(None, Some(&root())), None);
    }

    #[test]
    fn base_dir_of_an_inline_circuit() {
        let file = root().join("src/lib.rs");
        assert_eq!(base_dir(Some(&file), None), Some(root().join("src")));
        assert_eq!(
            base_dir(Some(Path::new("src/lib.rs")), Some(&root())),
            Some(root().join("src"))
        );
    }
}
