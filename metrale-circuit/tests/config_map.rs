//! `[config]` (schema 2): what the loader accepts, and one test per error class (message,
//! `path:line:col`, help). Positions are counted by hand from [`BASE`]: `[config]` is line 24
//! and the lines given to [`with_config`] start at line 25.

mod common;

use common::{check, errors, loads, only};
use metrale_circuit::load::LayerKindsSource;

/// A schema-2 pattern circuit (no layout pattern; the checkpoint gives its own) up to the
/// `[config]` header (line 24, after [`with_config`]'s `verify` line). `[layout.blocks]` also names `attention`, which has no symbol.
const BASE: &str = r#"schema = 2
arch = "t"
dims = ["d", "e"]
[layout]
kind = "pattern"
[layout.symbols]
M = "mamba"
"-" = "mlp"
[layout.blocks]
mamba = ["b"]
mlp = ["b"]
[checkpoint.c]
layers = 1
pattern = "M"
dims = { d = 2, e = 3 }
[derive]
f = "d - 1"
[[block.b.state]]
id = "s"
kind = "recurrent"
format = "f32"
shape = "d x f"
"#;

/// A complete valid `[config]` body: lines 25 to 28.
const VALID: &str = r#"layers = "n_layers"
pattern = "text.pattern"
dims.e = "text.e"
dims.d = { key = "text.d", or = "e * 2" }
"#;

/// [`BASE`] with the state's `verify` (line 23) and `config` as the body of `[config]` (line
/// 25 on).
fn with_config(config: &str) -> String {
    let base = BASE.replace(
        "shape = \"d x f\"\n",
        "shape = \"d x f\"\nverify = \"h_steps\"\n",
    );
    format!("{base}[config]\n{config}")
}

#[test]
fn a_valid_config_is_kept_in_declaration_order() {
    let c = loads(&with_config(VALID));
    let map = c.config().expect("a [config]");
    assert_eq!(map.layers(), "n_layers");
    assert_eq!(
        map.layer_kinds(),
        Some(&LayerKindsSource::Pattern {
            key: "text.pattern".to_owned()
        })
    );
    assert_eq!(map.interval(), None);
    // Written e then d; kept in the order `dims` declares them.
    let dims: Vec<(&str, &str, Option<&str>)> = map
        .dims()
        .iter()
        .map(|d| (d.dim(), d.key(), d.fallback().map(|(text, _)| text)))
        .collect();
    assert_eq!(
        dims,
        [("d", "text.d", Some("e * 2")), ("e", "text.e", None)]
    );
    // No [config], no map.
    let base = with_config(VALID);
    let without = &base[..base.find("[config]").unwrap()];
    assert!(loads(without).config().is_none());
}

#[test]
fn config_needs_schema_2() {
    let text = with_config(VALID).replacen("schema = 2", "schema = 1", 1);
    let found = errors(&text);
    let d = found
        .iter()
        .find(|d| d.message.contains("[config]"))
        .expect("a [config] error");
    check(
        d,
        "`[config]` needs `schema = 2`",
        "c.toml:24:2",
        &["write `schema = 2` at the top of the circuit"],
    );
}

#[test]
fn unknown_config_key() {
    let d = only(&with_config(&format!("{VALID}intervals = \"x\"\n")));
    assert_eq!(
        d.message,
        "unknown key `intervals` in `[config]`",
        "{}",
        d.render()
    );
    assert_eq!(common::place(&d), "c.toml:29:1");
    assert!(
        d.help.iter().any(|h| h == "did you mean `interval`?"),
        "{}",
        d.render()
    );
}

#[test]
fn layers_is_required() {
    let d = only(&with_config(&VALID.replace("layers = \"n_layers\"\n", "")));
    check(
        &d,
        "missing `layers` in `[config]`",
        "c.toml:24:1",
        &["add `layers = \"num_hidden_layers\"`: the config key of the layer count"],
    );
}

#[test]
fn a_key_path_has_no_empty_segment() {
    let d = only(&with_config(&VALID.replace("\"text.e\"", "\"text..e\"")));
    check(
        &d,
        "`e` is not a config key path: `text..e`",
        "c.toml:27:10",
        &["write the config.json key, its nesting joined by `.`: `text_config.hidden_size`"],
    );
}

#[test]
fn one_source_of_layer_kinds() {
    let text = with_config(&VALID.replace(
        "pattern = \"text.pattern\"\n",
        "pattern = \"p\"\nlayer_types = { key = \"t\", map = { m = \"mamba\" } }\n",
    ));
    let d = only(&text);
    check(
        &d,
        "`layer_types` and `pattern` both say the layer kinds",
        "c.toml:27:1",
        &["keep one of `layer_types`, `pattern` and `layer_indices`"],
    );
}

#[test]
fn mapped_layer_kinds_belong_to_the_layout() {
    let d = only(&with_config(&VALID.replace(
        "pattern = \"text.pattern\"",
        "layer_types = { key = \"t\", map = { m = \"mambo\", x = \"mlp\" } }",
    )));
    check(
        &d,
        "`mambo` is not a layer kind of the layout",
        "c.toml:26:40",
        &["valid layer kinds: `mamba`, `mlp`", "did you mean `mamba`?"],
    );
    // A kind the layout has, but no symbol stands for: a pattern cannot be written for it.
    let text = with_config(&VALID.replace(
        "pattern = \"text.pattern\"",
        "layer_indices = { base = 0, kinds = { mamba = \"a\", attention = \"b\" } }",
    ))
    .replace("mlp = [\"b\"]\n", "mlp = [\"b\"]\nattention = [\"b\"]\n");
    let d = only(&text);
    assert_eq!(
        d.message,
        "layer kind `attention` has no symbol",
        "{}",
        d.render()
    );
    assert_eq!(common::place(&d), "c.toml:27:52");
}

#[test]
fn layer_indices_base_is_0_or_1() {
    let d = only(&with_config(&VALID.replace(
        "pattern = \"text.pattern\"",
        "layer_indices = { base = 2, kinds = { mamba = \"a\" } }",
    )));
    check(
        &d,
        "`base` must be 0 or 1, found 2",
        "c.toml:26:26",
        &["the index the config's lists give the first layer"],
    );
    let d = only(&with_config(&VALID.replace(
        "pattern = \"text.pattern\"",
        "layer_indices = { kinds = { mamba = \"a\" } }",
    )));
    assert_eq!(
        d.message,
        "missing `base` in `layer_indices`",
        "{}",
        d.render()
    );
}

#[test]
fn interval_needs_something_to_compare_with() {
    // A pattern layout without its own pattern.
    let d = only(&with_config(&format!("{VALID}interval = \"every\"\n")));
    check(
        &d,
        "`interval` needs an interval layout or a layout `pattern`",
        "c.toml:29:1",
        &[
            "the config's interval is checked against `[layout] period`, or the length of `[layout] pattern`",
        ],
    );
    // With a layout pattern it loads.
    let text = with_config(&format!("{VALID}interval = \"every\"\n")).replacen(
        "kind = \"pattern\"\n",
        "kind = \"pattern\"\npattern = \"M-\"\n",
        1,
    );
    assert_eq!(loads(&text).config().unwrap().interval(), Some("every"));
}

#[test]
fn a_pattern_layout_without_pattern_needs_the_layer_kinds() {
    let d = only(&with_config(
        &VALID.replace("pattern = \"text.pattern\"\n", ""),
    ));
    check(
        &d,
        "`[config]` does not say the layer kinds",
        "c.toml:24:1",
        &["add the config key that gives each layer's kind"],
    );
    assert_eq!(
        d.notes,
        ["a pattern layout without `[layout] pattern` needs each checkpoint's `pattern`"]
    );
}

#[test]
fn config_pattern_is_for_pattern_layouts() {
    let text = with_config(VALID)
        .replacen("kind = \"pattern\"\n", "kind = \"list\"\n", 1)
        .replace("[layout.symbols]\nM = \"mamba\"\n\"-\" = \"mlp\"\n", "")
        .replace(
            "layers = 1\npattern = \"M\"\n",
            "layer_kinds = [\"mamba\"]\n",
        );
    let d = only(&text);
    assert_eq!(
        d.message,
        "`pattern` in `[config]` is only for pattern layouts",
        "{}",
        d.render()
    );
}

#[test]
fn every_declared_dim_once_and_nothing_else() {
    // Unknown, with the near spelling.
    let d = only(&with_config(&format!("{VALID}dims.dd = \"x\"\n")));
    check(
        &d,
        "unknown dim `dd` in `[config.dims]`",
        "c.toml:29:6",
        &["did you mean `d`?"],
    );
    // A derived dim is computed, never read.
    let d = only(&with_config(&format!("{VALID}dims.f = \"x\"\n")));
    check(
        &d,
        "`f` is a derived dim",
        "c.toml:29:6",
        &["remove it here: import computes nothing a checkpoint does not give"],
    );
    // Missing ones are listed at the table.
    let d = only(&with_config(&VALID.replace("dims.e = \"text.e\"\n", "")));
    assert_eq!(
        d.message,
        "`[config.dims]` does not say where `e` comes from",
        "{}",
        d.render()
    );
    assert_eq!(common::place(&d), "c.toml:27:1");
}

#[test]
fn a_fallback_reads_other_declared_dims() {
    let d = only(&with_config(
        &VALID.replace("or = \"e * 2\"", "or = \"d + 1\""),
    ));
    check(
        &d,
        "the fallback of `d` reads `d` itself",
        "c.toml:28:34",
        &["a fallback computes the dim from the others"],
    );
    let d = only(&with_config(
        &VALID.replace("or = \"e * 2\"", "or = \"ee * 2\""),
    ));
    check(
        &d,
        "the fallback of `d` reads `ee`, not a declared dim",
        "c.toml:28:34",
        &[
            "a fallback reads the other declared dims, as the config gives them",
            "did you mean `e`?",
        ],
    );
    let d = only(&with_config(
        &VALID.replace("or = \"e * 2\"", "or = \"e x 2\""),
    ));
    assert_eq!(
        d.message,
        "the fallback of `d` has more than one axis",
        "{}",
        d.render()
    );
    let d = only(&with_config(
        &VALID.replace("{ key = \"text.d\", or = \"e * 2\" }", "{ or = \"e\" }"),
    ));
    assert_eq!(d.message, "missing `key` in `d`", "{}", d.render());
}
