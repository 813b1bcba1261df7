//! The macro front end's expansion (`expand`, `Expansion`): the module is exactly `tokens`'
//! module, every file read is tracked by an `include_str!` (also on error), and a circuit with
//! errors becomes its rendered diagnostics as `compile_error!`s inside a fallback module.

use std::path::{Path, PathBuf};

use metrale_codegen::__macro::{Expansion, expand};
use metrale_codegen::{CircuitSource, Options, tokens};
use proc_macro2::{Span, TokenStream};
use quote::quote;

const QWEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circuits/qwen3_5.toml");

fn library() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits/blocks/qwen3_attention.toml")
}

/// `const _: &str = include_str!(path);` for each path.
fn tracking(paths: &[&Path]) -> TokenStream {
    paths
        .iter()
        .map(|path| {
            let path = path.to_str().unwrap();
            quote! { const _: &str = ::core::include_str!(#path); }
        })
        .collect()
}

/// A fresh temporary folder with `blocks/`, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(test: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("metrale-expand-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("blocks")).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const MINI: &str = r#"schema = 1
arch = "mini"
include = ["lib"]
dims = ["d"]
[layout]
kind = "interval"
period = 1
[layout.blocks]
full_attention = ["b"]
[checkpoint.c]
layers = 1
dims = { d = 2 }
"#;

const LIB: &str =
    "[[block.b.state]]\nid = \"s\"\nkind = \"carry_stash\"\nformat = \"f32\"\nshape = \"d\"\n";

#[test]
fn file_expansion_is_the_module_then_tracking() {
    let input = CircuitSource::File {
        path: Path::new(QWEN),
        name: "circuits/qwen3_5.toml",
    };
    let got = expand(input, &Options::default(), Span::call_site());
    let circuit = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
        path: Path::new(QWEN),
        name: "circuits/qwen3_5.toml",
    })
    .circuit
    .unwrap();
    let module = tokens(&circuit, &Options::default()).unwrap();
    let tracked = tracking(&[Path::new(QWEN), &library()]);
    assert_eq!(got.to_string(), quote! { #module #tracked }.to_string());
    let expansion = Expansion::new(input, &Options::default());
    assert_eq!(expansion.read, circuit.read());
    assert_eq!(expansion.arch.as_deref(), Some("qwen3_5"));
}

#[test]
fn text_expansion_reads_includes_from_dir() {
    let dir = TempDir::new("text");
    let lib = dir.0.join("blocks/lib.toml");
    std::fs::write(&lib, LIB).unwrap();
    let input = CircuitSource::Text {
        name: "<inline>",
        text: MINI,
        dir: Some(&dir.0),
    };
    let got = expand(input, &Options::default(), Span::call_site()).to_string();
    assert!(got.starts_with("# [doc = "), "{got}");
    assert!(got.contains("pub mod mini"));
    assert!(got.ends_with(&tracking(&[&lib]).to_string()), "{got}");
}

#[test]
fn errors_become_compile_errors_in_the_fallback_module() {
    let dir = TempDir::new("errors");
    let lib = dir.0.join("blocks/lib.toml");
    std::fs::write(&lib, LIB.replace("carry_stash", "carry_stsh")).unwrap();
    let root = dir.0.join("mini.toml");
    std::fs::write(&root, MINI).unwrap();
    let input = CircuitSource::File {
        path: &root,
        name: "mini.toml",
    };
    let expansion = Expansion::new(input, &Options::default());
    let diagnostics = expansion.module.clone().unwrap_err();
    assert_eq!(diagnostics.len(), 1);
    let message = diagnostics.0[0]
        .render()
        .strip_prefix("error: ")
        .unwrap()
        .to_owned();
    assert!(message.contains("--> blocks/lib.toml:3:8"), "{message}");
    assert!(message.contains("did you mean `carry_stash`?"), "{message}");
    let got = expansion.into_tokens(Span::call_site());
    let tracked = tracking(&[&root, &lib]);
    let expected = quote! {
        /// The circuit has errors: this module is empty.
        pub mod mini { ::core::compile_error!(#message); }
        #tracked
    };
    assert_eq!(got.to_string(), expected.to_string());
}

#[test]
fn without_a_readable_arch_the_errors_stand_alone() {
    let input = CircuitSource::Text {
        name: "<inline>",
        text: "schema = 1\narch = \"type\"\n",
        dir: Some(Path::new("")),
    };
    let got = expand(input, &Options::default(), Span::call_site()).to_string();
    assert!(got.starts_with(":: core :: compile_error !"), "{got}");
    assert!(!got.contains("pub mod"), "{got}");
    let missing = CircuitSource::File {
        path: Path::new("no/such.toml"),
        name: "no/such.toml",
    };
    let got = expand(missing, &Options::default(), Span::call_site()).to_string();
    assert_eq!(got.matches("compile_error").count(), 1, "{got}");
    assert!(got.contains("cannot read circuit `no/such.toml`"), "{got}");
    assert!(!got.contains("include_str"), "{got}");
}

#[test]
fn generator_errors_keep_the_fallback_and_the_tracking() {
    let input = CircuitSource::File {
        path: Path::new(QWEN),
        name: "circuits/qwen3_5.toml",
    };
    let options = Options::default().with_runtime_path("not a path");
    let got = expand(input, &options, Span::call_site()).to_string();
    assert!(
        got.contains("pub mod qwen3_5 { :: core :: compile_error !"),
        "{got}"
    );
    assert!(
        got.contains("runtime path `not a path` is not a Rust path"),
        "{got}"
    );
    assert!(got.ends_with(&tracking(&[Path::new(QWEN), &library()]).to_string()));
}
