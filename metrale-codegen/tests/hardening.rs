//! Circuit text that reaches generated text cannot end a comment, open a line of code or run
//! as a doctest; a runtime path with generic arguments is refused; two circuits of one `arch`
//! cannot overwrite each other's module. Regression tests of the hardening issue's classes 4,
//! 5 and 9 (those of the CLI, 10 and 12, are in `metrale-codegen/cli/tests/hardening.rs`).

use std::path::PathBuf;

use metrale_circuit::load::{CircuitSource, load};
use metrale_codegen::{Builder, Options, generate, tokens};
use proc_macro2::{Delimiter, TokenStream, TokenTree};

/// A one-state circuit whose description is `description` (a TOML basic string's content).
fn circuit_text(arch: &str, description: &str) -> String {
    format!(
        "schema = 1\narch = \"{arch}\"\ndescription = \"{description}\"\ndims = [\"d\"]\n\
         [layout]\nkind = \"interval\"\nperiod = 1\n[layout.blocks]\nfull_attention = [\"b\"]\n\
         [checkpoint.c]\nlayers = 1\ndims = {{ d = 2 }}\n[[block.b.state]]\nid = \"k\"\n\
         kind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"d\"\n"
    )
}

fn generated(name: &str, text: &str) -> String {
    let circuit = load(CircuitSource::Text {
        name,
        text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
    generate(&circuit, &Options::default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The text of every `#[doc = "..."]` in `tokens` (a `///` line lexes as one), in order.
fn doc_lines(tokens: TokenStream) -> Vec<String> {
    let mut lines = Vec::new();
    let trees: Vec<TokenTree> = tokens.into_iter().collect();
    for (i, tree) in trees.iter().enumerate() {
        let TokenTree::Group(group) = tree else {
            continue;
        };
        let inner: Vec<TokenTree> = group.stream().into_iter().collect();
        let attribute = i > 0
            && matches!(&trees[i - 1], TokenTree::Punct(p) if p.as_char() == '#')
            && group.delimiter() == Delimiter::Bracket;
        if attribute
            && let [
                TokenTree::Ident(doc),
                TokenTree::Punct(eq),
                TokenTree::Literal(text),
            ] = inner.as_slice()
            && doc == "doc"
            && eq.as_char() == '='
        {
            let text: syn::LitStr = syn::parse_str(&text.to_string()).expect("a string");
            lines.push(text.value());
        } else {
            lines.extend(doc_lines(group.stream()));
        }
    }
    lines
}

/// The doc lines of generated text, whichever printer wrote it.
fn text_doc_lines(code: &str) -> Vec<String> {
    doc_lines(code.parse().expect("the generated text lexes"))
}

/// What no generated text may hold: a control character but the tab (and the newline between
/// lines), or one that turns the text's direction or hides.
fn unsafe_char(c: char) -> bool {
    (c.is_control() && c != '\t')
        || matches!(c, '\u{061c}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2060}'..='\u{2069}' | '\u{feff}')
}

#[test]
fn a_fence_in_the_description_cannot_close_the_generated_one() {
    // The description holds a ``` line and a ```` line, then Rust: a doctest if a fence closed.
    let code = generated(
        "c.toml",
        &circuit_text("t", "one\\n```\\n````\\nfn main() { panic!() }\\n```"),
    );
    let docs = text_doc_lines(&code);
    // The generated fence is five backticks: longer than the longest run (4).
    assert!(docs.iter().any(|l| l == " `````text"), "{docs:?}");
    assert!(docs.iter().any(|l| l == " ````"));
    let fences = docs.iter().filter(|l| l.trim() == "`````").count();
    assert_eq!(fences, 1, "one closing fence, after the text");
}

#[test]
fn control_and_direction_characters_are_escaped_in_docs() {
    // A bare CR, a right-to-left override and a zero-width space in the description.
    let code = generated("c.toml", &circuit_text("t", "a\\rb \\u202E c\\u200Bd"));
    assert!(!code.contains('\r') && !code.contains('\u{202e}') && !code.contains('\u{200b}'));
    let docs = text_doc_lines(&code);
    assert!(
        docs.iter()
            .any(|l| l == " a\\u{000d}b \\u{202e} c\\u{200b}d"),
        "{docs:?}"
    );
    // Still one parseable file.
    syn::parse_file(&code).expect("parses");
}

#[test]
fn every_doc_line_is_safe_in_the_tokens_of_a_hostile_circuit() {
    // Every text of a circuit that reaches a doc line (its path, description, checkpoint `hf`,
    // and the origins `path:line`), holding each character that could end a comment, open a
    // line or turn the text: CR alone, LF, NUL, BEL, ESC, NEL, bidi overrides and isolates,
    // zero-width and BOM characters, and `*/`.
    let hostile =
        "a\\rb\\nc\\u0000\\u0007\\u001B\\u0085 \\u202E\\u2066\\u200B\\uFEFF\\u061C */ /* `x`";
    let text = circuit_text("t", hostile).replace(
        "[checkpoint.c]\n",
        &format!("[checkpoint.c]\nhf = \"org/{hostile}\"\n"),
    );
    let name = "dir\r/evil\n*/\u{202e}\u{2069}\u{0}.toml";
    let circuit = load(CircuitSource::Text {
        name,
        text: &text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        circuit.checkpoints()[0].hf(),
        Some("org/a\rb\nc\u{0}\u{7}\u{1b}\u{85} \u{202e}\u{2066}\u{200b}\u{feff}\u{61c} */ /* `x`")
    );
    // The tokens, as the macro returns them (no printer in between).
    let docs = doc_lines(tokens(&circuit, &Options::default()).expect("tokens"));
    let reached: Vec<&String> = docs.iter().filter(|l| l.contains("*/")).collect();
    // The path in the module's, `Dims`', `Checkpoint`'s and the origins' docs; the description;
    // `hf` in the checkpoint's and its variant's.
    assert!(reached.len() >= 6, "{reached:#?}");
    for line in &docs {
        assert!(!line.chars().any(unsafe_char), "unescaped: {line:?}");
        assert!(
            line.is_empty() || line.starts_with(' '),
            "printed as `///{line}`"
        );
    }
    assert!(docs.iter().any(|l| l.contains("a\\u{000d}b\\u{000a}c\\u{0000}\\u{0007}\\u{001b}\\u{0085} \\u{202e}\\u{2066}\\u{200b}\\u{feff}\\u{061c} */")));
    // And the text: one line per line, nothing hidden, still one file.
    let code = generate(&circuit, &Options::default()).expect("generates");
    assert!(!code.chars().any(|c| c != '\n' && unsafe_char(c)), "{code}");
    assert_eq!(text_doc_lines(&code), docs);
    syn::parse_file(&code).expect("parses");
}

#[test]
fn a_newline_in_the_circuit_path_stays_in_the_header_comment() {
    let code = generated("evil\nfn injected() {}\n.toml", &circuit_text("t", "x"));
    let header = code.lines().next().unwrap();
    assert!(header.starts_with("// @generated by metrale-codegen"));
    assert!(
        header.contains("evil\\u{000a}fn injected() {}\\u{000a}.toml"),
        "{header}"
    );
    assert!(!code.lines().any(|l| l.trim_start() == "fn injected() {}"));
}

#[test]
fn a_runtime_path_with_generic_arguments_is_refused() {
    let circuit = load(CircuitSource::Text {
        name: "c.toml",
        text: &circuit_text("t", "x"),
        dir: None,
    })
    .circuit
    .unwrap();
    let error = generate(&circuit, &Options::default().with_runtime_path("::a<b>")).unwrap_err();
    assert_eq!(
        error.0[0].message,
        "runtime path `::a<b>` has generic arguments"
    );
    assert!(generate(&circuit, &Options::default().with_runtime_path("crate::rt")).is_ok());
}

#[test]
fn a_runtime_path_is_one_a_use_takes() {
    // Issue 22: these were accepted, and `Self` made the generator emit a module that does not
    // parse ("internal error"). Each is now a diagnostic saying what is wrong and what is
    // valid; every accepted path gives a module that parses, its `use` naming the path.
    let circuit = load(CircuitSource::Text {
        name: "c.toml",
        text: &circuit_text("t", "x"),
        dir: None,
    })
    .circuit
    .unwrap();
    let refused = [
        ("::crate", "has `crate` past its start"),
        ("a::crate", "has `crate` past its start"),
        ("crate::super", "has `super` after a name or `::`"),
        ("::a::self", "has `self` past its start"),
        ("::try", "has the keyword `try` for a name"),
        ("::gen", "has the keyword `gen` for a name"),
        ("Self", "names `Self`, which a `use` cannot import"),
        ("r#crate", "writes `r#crate`, which no identifier can be"),
    ];
    for (path, says) in refused {
        let error =
            generate(&circuit, &Options::default().with_runtime_path(path)).expect_err(path);
        let error = &error.0[0];
        assert!(
            error
                .message
                .starts_with(&format!("runtime path `{path}` ")),
            "{path}: {}",
            error.message
        );
        assert!(error.message.contains(says), "{path}: {}", error.message);
        assert!(
            error.help.iter().any(|h| h.contains("what a `use` takes")),
            "{path}: {error}"
        );
    }
    for path in [
        "::metrale_circuit",
        "crate::rt",
        "super::rt",
        "super::super::rt",
        "self::super::rt",
        "r#async::x",
        "::r#try",
        "crate",
    ] {
        let code = generate(&circuit, &Options::default().with_runtime_path(path))
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        let file = syn::parse_file(&code).unwrap_or_else(|e| panic!("{path}: {e}"));
        let Some(syn::Item::Mod(module)) = file.items.first() else {
            panic!("{path}: no module");
        };
        let Some((_, items)) = &module.content else {
            panic!("{path}: an empty module");
        };
        let Some(syn::Item::Use(runtime)) = items.first() else {
            panic!("{path}: no `use` first");
        };
        let spelled: String = quote::quote!(#runtime)
            .to_string()
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect();
        assert_eq!(spelled, format!("use{path}as__rt;"));
    }
}

#[test]
fn two_circuits_of_one_arch_are_refused() {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-hardening");
    std::fs::create_dir_all(&dir).unwrap();
    let (a, b) = (dir.join("a.toml"), dir.join("b.toml"));
    std::fs::write(&a, circuit_text("same", "first")).unwrap();
    std::fs::write(&b, circuit_text("same", "second")).unwrap();
    let error = Builder::new()
        .circuit(&a)
        .circuit(&b)
        .out_dir(dir.join("out"))
        .rerun_if_changed(false)
        .compile()
        .unwrap_err();
    let message = &error.0.0[0].message;
    assert!(
        message.contains("both generate module `same`") && message.contains("b.toml"),
        "{message}"
    );
    // The first circuit's module was written and not overwritten.
    let written = std::fs::read_to_string(dir.join("out/same.rs")).unwrap();
    assert!(written.contains("first") && !written.contains("second"));
}
