//! Helpers shared by the loader's test files: load a text named `c.toml` and look at its
//! errors (message, `path:line:col`, help lines).

#![allow(dead_code)] // each test file uses its own part of these

use metrale_circuit::Circuit;
use metrale_circuit::diag::{Diagnostic, Diagnostics};

/// The errors of `text` (named `c.toml`); it must not load.
pub fn errors(text: &str) -> Vec<Diagnostic> {
    match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
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
    metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "c.toml",
        text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}\n{text}"))
}
