//! The macro's input: `"path"` or `inline = "..."`, then optionally `runtime = "::path"`.
//!
//! Owner: metrale-macros. Invariants: parsing never panics; every malformed input is a
//! `syn::Error` at the offending token, and the runtime path is checked here (by the
//! generator's own check), so its error points at its own literal.

use syn::parse::{Parse, ParseStream};
use syn::{Ident, LitStr, Token};

/// Where the circuit comes from.
pub(crate) enum Source {
    /// `"path"`: a circuit file, as the user wrote its path.
    Path(LitStr),
    /// `inline = "..."`: the circuit's text.
    Inline(LitStr),
}

/// The parsed macro input.
pub(crate) struct Args {
    /// The circuit.
    pub source: Source,
    /// `runtime = "::path"`: the runtime crate's path in generated code.
    pub runtime: Option<LitStr>,
}

impl Source {
    /// The literal the user wrote: diagnostics point at it.
    pub(crate) fn literal(&self) -> &LitStr {
        match self {
            Self::Path(lit) | Self::Inline(lit) => lit,
        }
    }
}

/// What the macro accepts, for error messages.
const USAGE: &str = "expected `circuit!(\"path/to/circuit.toml\")` or `circuit!(inline = \"...\")`, \
     optionally followed by `, runtime = \"::path\"`";

impl Parse for Args {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        let source = if input.peek(LitStr) {
            Source::Path(input.parse()?)
        } else if input.peek(Ident) {
            let key: Ident = input.parse()?;
            if key != "inline" {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown argument `{key}`: {USAGE}"),
                ));
            }
            input.parse::<Token![=]>()?;
            Source::Inline(input.parse()?)
        } else {
            return Err(input.error(USAGE));
        };
        let mut runtime: Option<LitStr> = None;
        while !input.is_empty() {
            input.parse::<Token![,]>()?;
            if input.is_empty() {
                break;
            }
            let key: Ident = input.parse()?;
            if key != "runtime" {
                return Err(syn::Error::new(
                    key.span(),
                    format!("unknown argument `{key}`: the only option is `runtime = \"::path\"`"),
                ));
            }
            if runtime.is_some() {
                return Err(syn::Error::new(key.span(), "`runtime` is given twice"));
            }
            input.parse::<Token![=]>()?;
            let path: LitStr = input.parse()?;
            if let Err(problems) = metrale_codegen::__macro::check_runtime_path(&path.value()) {
                // As `compile_error` renders one: the compiler writes its own `error: `.
                let rendered: Vec<String> = problems.iter().map(ToString::to_string).collect();
                let text = rendered.join("\n");
                let text = text.strip_prefix("error: ").unwrap_or(&text);
                return Err(syn::Error::new(path.span(), text));
            }
            runtime = Some(path);
        }
        Ok(Self { source, runtime })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> syn::Result<Args> {
        syn::parse_str(text)
    }

    fn error(text: &str) -> String {
        parse(text).map(|_| ()).unwrap_err().to_string()
    }

    #[test]
    fn path_form() {
        let args = parse(r#""circuits/q.toml""#).unwrap();
        assert!(matches!(&args.source, Source::Path(lit) if lit.value() == "circuits/q.toml"));
        assert!(args.runtime.is_none());
        assert!(parse(r#""q.toml","#).is_ok(), "a trailing comma");
    }

    #[test]
    fn inline_form() {
        let args = parse(r##"inline = r#"schema = 1"#"##).unwrap();
        assert!(matches!(&args.source, Source::Inline(lit) if lit.value() == "schema = 1"));
        assert_eq!(args.source.literal().value(), "schema = 1");
    }

    #[test]
    fn runtime_option() {
        let args = parse(r#""q.toml", runtime = "crate::rt","#).unwrap();
        assert_eq!(args.runtime.unwrap().value(), "crate::rt");
        let args = parse(r#"inline = "x", runtime = "::metrale_circuit""#).unwrap();
        assert_eq!(args.runtime.unwrap().value(), "::metrale_circuit");
    }

    #[test]
    fn malformed_inputs_are_errors() {
        assert!(error("").contains("expected `circuit!"));
        assert!(error("42").starts_with("expected `circuit!"));
        assert!(error(r#"file = "q.toml""#).starts_with("unknown argument `file`"));
        assert!(error(r#""q.toml", runtim = "x""#).starts_with("unknown argument `runtim`"));
        assert_eq!(
            error(r#""q.toml", runtime = "a", runtime = "b""#),
            "`runtime` is given twice"
        );
        assert!(
            error(r#""q.toml", runtime = "not a path""#).starts_with("runtime path `not a path`")
        );
        assert!(parse(r#""q.toml" "r.toml""#).is_err());
        assert!(parse(r#"inline "x""#).is_err());
        assert!(parse(r#""q.toml", runtime = 3"#).is_err());
    }
}
