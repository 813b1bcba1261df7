//! `circuit!`: a metrale circuit's typed state plan, generated at compile time without a build
//! script. The macro expands to exactly the module the `build.rs` path
//! (`metrale_codegen::Builder`) writes; it is a thin front end over `metrale-codegen`, which
//! does all the work (`metrale_codegen::__macro::expand`, its hidden plumbing).
//!
//! # Tutorial
//!
//! 1. Depend on the runtime crate the generated code names, and on this crate. The crates are
//!    not published yet: depend on a checkout of the repository by `path` (or on the repository
//!    with `git = "<its URL>"` in place of `path`; cargo finds each crate by its name):
//!
//!    ```toml
//!    [dependencies]
//!    metrale-circuit = { path = "../metrale/metrale-circuit" }
//!    metrale-macros = { path = "../metrale/metrale-macros" }
//!    ```
//!
//! 2. Call the macro inside a module (it expands to items: `pub mod <arch> { ... }`, named by
//!    the circuit's `arch`):
//!
//!    ```ignore
//!    // src/model.rs
//!    pub mod plans {
//!        metrale_macros::circuit!("../circuits/qwen3_5.toml");
//!    }
//!
//!    use plans::qwen3_5::{qwen3_5_27b, Formats, Inputs};
//!    let plan = qwen3_5_27b::StatePlan::new(&qwen3_5_27b::DIMS, &inputs, 256)?;
//!    ```
//!
//! 3. Build: when the circuit or one of its block libraries changes, cargo recompiles the
//!    calling crate (the expansion holds `const _: &str = include_str!("<file>");` for every
//!    file the circuit read).
//!
//! # The path rule
//!
//! A relative path is relative to the source file that calls the macro, exactly like
//! `include_str!`: `circuit!("../circuits/qwen3_5.toml")` in `my-crate/src/model.rs` reads
//! `my-crate/circuits/qwen3_5.toml`, in a user's crate, in a workspace member and under
//! trybuild alike (it does not depend on `CARGO_MANIFEST_DIR` nor on the working directory).
//! An absolute path is used as it is. Block libraries (`include = ["x"]`) are read from
//! `blocks/x.toml` beside the circuit. Diagnostics and the generated docs name the circuit by
//! the path as written, never an absolute one.
//!
//! When the compiler cannot tell the calling file (a tool that runs proc macros outside
//! rustc), a relative path is an error.
//!
//! # The inline form
//!
//! For small circuits and tests, the circuit's text can be the argument:
//!
//! ```ignore
//! metrale_macros::circuit!(inline = r#"
//! schema = 1
//! arch = "tiny"
//! dims = ["d"]
//! # ...
//! "#);
//! ```
//!
//! Diagnostics name it `<inline>` (`--> <inline>:5:8`, lines counted from the first line of
//! the string, so a raw string opened with `r#"` and a line break starts at line 2), and its
//! `include`s are read from `blocks/` beside the calling file.
//!
//! # Options
//!
//! `runtime = "::path"`, after the circuit, names the runtime crate in generated code when it
//! is re-exported (default `::metrale_circuit`):
//! `circuit!("x.toml", runtime = "::my_engine::metrale")`.
//!
//! # Errors
//!
//! A circuit with errors stops the compile with one error per problem, each pointing at the
//! macro's literal and holding the text `metrale-codegen check` prints: the file, line and
//! column in the circuit (`--> circuits/qwen3_5.toml:74:8`), the line, a caret, the valid
//! spellings and a "did you mean". The module is then still declared, empty, with the errors
//! inside it (when the circuit's `arch` can be read), so code that uses the module adds no
//! "cannot find" errors of its own; and the files read are still tracked, so fixing one
//! rebuilds. Nothing panics: every failure, a malformed macro call included, is a
//! `compile_error!`.

mod args;
mod resolve;

use std::path::{Path, PathBuf};

use metrale_codegen::{CircuitSource, Options};
use proc_macro2::TokenStream;

use crate::args::{Args, Source};

/// The typed state plan of a circuit: `circuit!("path/to/circuit.toml")`,
/// `circuit!(inline = "...")`, each optionally followed by `, runtime = "::path"`. See the
/// crate docs.
#[proc_macro]
pub fn circuit(input: proc_macro::TokenStream) -> proc_macro::TokenStream {
    let calling_file = proc_macro::Span::call_site().local_file();
    let cwd = std::env::current_dir().ok();
    expand(input.into(), calling_file.as_deref(), cwd.as_deref()).into()
}

/// The expansion of `circuit!(input)` called from `calling_file`, with the compiler working
/// in `cwd`.
fn expand(input: TokenStream, calling_file: Option<&Path>, cwd: Option<&Path>) -> TokenStream {
    let args: Args = match syn::parse2(input) {
        Ok(args) => args,
        Err(error) => return error.to_compile_error(),
    };
    let options = args.runtime.map_or_else(Options::default, |runtime| {
        Options::default().with_runtime_path(runtime.value())
    });
    let literal = args.source.literal();
    let span = literal.span();
    let text = literal.value();
    match &args.source {
        Source::Path(_) if text.is_empty() => syn::Error::new(
            span,
            "the circuit path is empty: write the path of a circuit TOML file, relative to \
             this source file (or `inline = \"...\"`)",
        )
        .to_compile_error(),
        Source::Path(_) => match resolve::resolve(&text, calling_file, cwd) {
            Ok(path) => {
                let input = CircuitSource::File {
                    path: &path,
                    name: &text,
                };
                metrale_codegen::__macro::expand(input, &options, span)
            }
            Err(message) => syn::Error::new(span, message).to_compile_error(),
        },
        Source::Inline(_) => {
            let dir: PathBuf = resolve::base_dir(calling_file, cwd).unwrap_or_default();
            let input = CircuitSource::Text {
                name: INLINE_NAME,
                text: &text,
                dir: Some(&dir),
            };
            metrale_codegen::__macro::expand(input, &options, span)
        }
    }
}

/// How diagnostics name an inline circuit.
const INLINE_NAME: &str = "<inline>";

#[cfg(test)]
mod tests {
    use super::*;

    use quote::quote;

    /// This crate's `src/lib.rs`, as cargo names it to rustc (relative to the workspace).
    const SELF: &str = "metrale-macros/src/lib.rs";

    fn workspace() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
    }

    fn expand_str(input: TokenStream) -> String {
        expand(input, Some(Path::new(SELF)), Some(&workspace())).to_string()
    }

    #[test]
    fn path_form_is_the_codegen_module_plus_tracking() {
        let got = expand_str(quote! { "../../circuits/qwen3_5.toml" });
        let path = workspace().join("metrale-macros/src/../../circuits/qwen3_5.toml");
        let circuit = metrale_circuit::load::load(metrale_circuit::load::CircuitSource::File {
            path: &path,
            name: "../../circuits/qwen3_5.toml",
        })
        .circuit
        .unwrap();
        let module = metrale_codegen::tokens(&circuit, &Options::default()).unwrap();
        let [root, library] = [
            path.to_str().unwrap(),
            workspace()
                .join("metrale-macros/src/../../circuits/blocks/qwen3_attention.toml")
                .to_str()
                .unwrap(),
        ]
        .map(str::to_owned);
        let expected = quote! {
            #module
            const _: &str = ::core::include_str!(#root);
            const _: &str = ::core::include_str!(#library);
        };
        assert_eq!(got, expected.to_string());
    }

    #[test]
    fn runtime_option_reaches_the_generator() {
        let got = expand_str(quote! { "../../circuits/qwen3_5.toml", runtime = "crate::rt" });
        assert!(got.contains("use crate :: rt as __rt ;"), "{got}");
        assert!(!got.contains(":: metrale_circuit ::"));
    }

    #[test]
    fn an_empty_path_is_an_error_at_the_literal() {
        // Issue 11, class 12: it once named an empty location (`--> `).
        let got = expand_str(quote! { "" });
        assert!(got.contains("compile_error"), "{got}");
        assert!(got.contains("the circuit path is empty"), "{got}");
        assert!(!got.contains("-->"), "{got}");
    }

    #[test]
    fn inline_errors_are_named_inline() {
        let got = expand_str(quote! { inline = "schema = 1\narch = \"t\"\nx = 1\n" });
        assert!(
            got.contains("pub mod t { :: core :: compile_error !"),
            "{got}"
        );
        assert!(got.contains("--> <inline>:3:1"), "{got}");
        assert!(
            !got.contains("include_str"),
            "nothing read from disk: {got}"
        );
    }

    #[test]
    fn missing_file_is_one_error_without_tracking() {
        let got = expand_str(quote! { "no/such.toml" });
        assert!(
            got.starts_with(":: core :: compile_error ! (\"cannot read circuit `no/such.toml`")
        );
        assert!(got.contains("--> no/such.toml"));
        assert!(!got.contains("include_str"));
        assert_eq!(got.matches("compile_error").count(), 1);
    }

    #[test]
    fn unknown_calling_file_is_an_error_for_relative_paths() {
        let got = expand(quote! { "q.toml" }, None, None).to_string();
        assert!(
            got.contains("cannot resolve the circuit path `q.toml`"),
            "{got}"
        );
    }

    #[test]
    fn malformed_input_is_a_compile_error() {
        let got = expand_str(quote! { 42 });
        assert!(got.contains("compile_error"), "{got}");
    }
}
