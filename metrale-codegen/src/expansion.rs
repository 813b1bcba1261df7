//! The expansion of an in-compiler front end (the `metrale_macros::circuit!` macro): one
//! circuit in, the tokens a proc macro returns out, whatever the circuit holds.
//!
//! Owner: metrale-codegen. The macro crate only parses its input and resolves its path; every
//! token it returns comes from [`expand`] (or [`Expansion::into_tokens`]). It reaches them
//! through `metrale_codegen::__macro`, hidden from the docs: plumbing, not API.
//!
//! Invariants:
//! - Nothing here fails or panics: a circuit with errors expands to one `compile_error!` per
//!   diagnostic, each holding the text the CLI prints for it (`--> path:line:col`, the line, a
//!   caret, help), at the span the caller gives (the macro's literal).
//! - Every file read (the circuit and its block libraries, also when they have errors) is named
//!   by one `const _: &str = include_str!("<path>");`, so the compiler rebuilds when one of
//!   them changes. Paths are emitted as given: front ends pass absolute ones, since
//!   `include_str!` resolves a relative path against the calling file.
//! - On error, when the circuit's `arch` can still be read from its text (even around TOML
//!   syntax errors) and is a Rust identifier, the `compile_error!`s sit inside an otherwise
//!   empty `pub mod <arch> {}`: the user's paths into the module then resolve, and the user
//!   sees the circuit's errors only, not a cascade of "unresolved import" / "cannot find type".

use std::path::PathBuf;

use metrale_circuit::load::diag::{Diagnostic, Diagnostics};
use metrale_circuit::load::{CircuitSource, LoadReport, load};
use proc_macro2::{Ident, Literal, Span, TokenStream};
use quote::{quote, quote_spanned};
use toml::de::{DeTable, DeValue};

use crate::{Options, tokens};

/// One circuit's expansion, before it becomes tokens.
#[derive(Debug, Clone)]
pub struct Expansion {
    /// The generated module ([`tokens`]), or every diagnostic.
    pub module: Result<TokenStream, Diagnostics>,
    /// Every file read from disk, in the order read, also when the circuit has errors.
    pub read: Vec<PathBuf>,
    /// The circuit's `arch` as far as its text tells, when it is a Rust identifier (on error:
    /// the fallback module's name).
    pub arch: Option<String>,
}

impl Expansion {
    /// Loads the circuit and generates its module.
    #[must_use]
    pub fn new(input: CircuitSource<'_>, options: &Options) -> Self {
        let LoadReport {
            circuit,
            read,
            files,
        } = load(input);
        match circuit {
            Ok(circuit) => Self {
                module: tokens(&circuit, options),
                arch: Some(circuit.arch().to_owned()),
                read,
            },
            Err(diagnostics) => Self {
                module: Err(diagnostics),
                arch: files.first().and_then(|root| arch_of(root.text())),
                read,
            },
        }
    }

    /// The tokens a proc macro returns: the module, or on error the `compile_error!`s (at
    /// `span`) in the fallback module; then one `include_str!` constant per file read.
    #[must_use]
    pub fn into_tokens(self, span: Span) -> TokenStream {
        let tracked = self.read.iter().filter_map(|path| {
            let path = Literal::string(path.to_str()?);
            Some(quote! { const _: &str = ::core::include_str!(#path); })
        });
        let tracked: TokenStream = tracked.collect();
        let module = match self.module {
            Ok(module) => module,
            Err(diagnostics) => {
                let errors = compile_errors(&diagnostics, span);
                match self.arch.as_deref().and_then(identifier) {
                    Some(arch) => quote_spanned! {span=>
                        /// The circuit has errors: this module is empty.
                        pub mod #arch { #errors }
                    },
                    None => errors,
                }
            }
        };
        quote! { #module #tracked }
    }
}

/// The macro's whole expansion of `input`: [`Expansion::new`] then
/// [`Expansion::into_tokens`] at `span`.
#[must_use]
pub fn expand(input: CircuitSource<'_>, options: &Options, span: Span) -> TokenStream {
    Expansion::new(input, options).into_tokens(span)
}

/// One `compile_error!` per diagnostic, at `span`, holding its rendered text.
#[must_use]
pub fn compile_errors(diagnostics: &Diagnostics, span: Span) -> TokenStream {
    diagnostics.iter().map(|d| compile_error(d, span)).collect()
}

/// A `compile_error!` at `span` holding `diagnostic` as the CLI renders it, without the
/// leading `error: ` (the compiler prints its own).
#[must_use]
pub fn compile_error(diagnostic: &Diagnostic, span: Span) -> TokenStream {
    let rendered = diagnostic.render();
    let text = rendered.strip_prefix("error: ").unwrap_or(&rendered);
    let mut message = Literal::string(text);
    message.set_span(span);
    quote_spanned! {span=> ::core::compile_error!(#message); }
}

/// The top-level `arch = "..."` of a circuit's text, read around TOML syntax errors, when it
/// is a lower snake-case Rust identifier.
#[must_use]
pub fn arch_of(text: &str) -> Option<String> {
    let (root, _) = DeTable::parse_recoverable(text);
    let (_, value) = root
        .get_ref()
        .iter()
        .find(|(key, _)| key.get_ref().as_ref() == "arch")?;
    match value.get_ref() {
        DeValue::String(arch) => identifier(arch).map(|_| arch.to_string()),
        _ => None,
    }
}

/// `name` as an identifier, when it is lower snake case and not a keyword.
fn identifier(name: &str) -> Option<Ident> {
    (metrale_circuit::load::names::is_snake_identifier(name) && crate::emit::names::is_ident(name))
        .then(|| Ident::new(name, Span::call_site()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arch_is_read_around_errors() {
        assert_eq!(
            arch_of("schema = 1\narch = \"qwen\"\n"),
            Some("qwen".into())
        );
        assert_eq!(
            arch_of("schema = = 1\narch = \"qwen\"\nperiod = \n"),
            Some("qwen".into())
        );
        assert_eq!(arch_of("arch = \"type\""), None, "a keyword");
        assert_eq!(arch_of("arch = \"Qwen\""), None, "not snake case");
        assert_eq!(arch_of("arch = 3"), None);
        assert_eq!(arch_of("[x]\narch = \"q\""), None, "not top level");
        assert_eq!(arch_of(""), None);
        assert_eq!(arch_of("\u{0}\"\u{ffff}[[["), None);
    }

    #[test]
    fn compile_error_holds_the_rendered_text() {
        let d = Diagnostic::error("bad").help("fix it");
        let tokens = compile_error(&d, Span::call_site()).to_string();
        assert_eq!(
            tokens,
            quote! { ::core::compile_error!("bad\n  = help: fix it"); }.to_string()
        );
    }
}
