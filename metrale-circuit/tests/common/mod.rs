//! Helpers shared by the loader's test files: load a text named `c.toml` and look at its
//! errors (message, `path:line:col`, help lines), and [`TempDir`], the one scratch folder of
//! this crate's tests.

#![allow(dead_code)] // each test file uses its own part of these

use std::path::{Path, PathBuf};

use metrale_circuit::load::Circuit;
use metrale_circuit::load::diag::{Diagnostic, Diagnostics};

/// The errors of `text` (named `c.toml`); it must not load.
pub fn errors(text: &str) -> Vec<Diagnostic> {
    match metrale_circuit::load::load(metrale_circuit::load::CircuitSource::Text {
        name: "c.toml",
        text,
        dir: None,
    })
    .circuit
    {
        Ok(_) => panic!("expected errors, the circuit loaded:\n{text}"),
        Err(diagnostics) => diagnostics.0,
    }
}

/// The one error of `text`.
pub fn only(text: &str) -> Diagnostic {
    let errors = errors(text);
    assert_eq!(errors.len(), 1, "{}", Diagnostics(errors.clone()).render());
    errors.into_iter().next().unwrap()
}

/// `path:line:col` of a located diagnostic.
pub fn place(d: &Diagnostic) -> String {
    let loc = d.location.as_ref().expect("a located diagnostic");
    format!("{}:{}:{}", loc.path, loc.line, loc.column)
}

/// Asserts the message, the place (and the rendered `-->` line) and that every one of `helps`
/// is a help line (none when `helps` is empty).
pub fn check(d: &Diagnostic, message: &str, at: &str, helps: &[&str]) {
    assert_eq!(d.message, message, "{}", d.render());
    assert_eq!(place(d), at, "{}", d.render());
    assert!(
        d.render().contains(&format!("--> {at}\n")),
        "{}",
        d.render()
    );
    assert_eq!(helps.is_empty(), d.help.is_empty(), "{}", d.render());
    for help in helps {
        assert!(
            d.help.iter().any(|h| h == help),
            "no help `{help}` in\n{}",
            d.render()
        );
    }
}

/// Loads `text` (named `c.toml`); it must load.
pub fn loads(text: &str) -> Circuit {
    metrale_circuit::load::load(metrale_circuit::load::CircuitSource::Text {
        name: "c.toml",
        text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}\n{text}"))
}

/// A fresh folder under the target's scratch folder (`CARGO_TARGET_TMPDIR`) holding an empty
/// `blocks/`, removed when dropped. Its name carries the process id and `tag`, so tests of
/// one binary running at once each need their own `tag`.
pub struct TempDir(PathBuf);

impl TempDir {
    /// The folder for `tag`, emptied.
    pub fn new(tag: &str) -> Self {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("metrale-circuit-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("blocks")).expect("a scratch folder");
        Self(dir)
    }

    /// Writes `text` to `name` (e.g. `blocks/lib.toml`) inside the folder; its path.
    pub fn write(&self, name: &str, text: &str) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        path
    }
}

impl std::ops::Deref for TempDir {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
