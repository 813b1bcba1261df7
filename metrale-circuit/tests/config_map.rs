//! `[config]` (schema 2): what the loader accepts, and one test per error class (message,
//! `path:line:col`, help). Positions are counted by hand from [`BASE`]: `[config]` is line 24
//! and the lines given to [`with_config`] start at line 25. `[config.layer_rules]` (schema 3)
//! is built by [`with_rules`]: its body starts at line 29; each of its error classes is also a
//! case under `tests/cases/layer_rules/`.

mod common;

use common::{check, errors, loads, only};
use metrale_circuit::load::circuit::config_map::{Fallback, LayerKindsSource};

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
        .map(|d| (d.dim(), d.key(), d.fallback().map(Fallback::text)))
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
        &[
            "keep one of `layer_types`, `pattern`, `layer_indices` and `layer_rules` (only `layer_rules` may go beside `layer_types`: the rules when the config has no list, and over it when it has one)",
        ],
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

/// A schema-3 pattern circuit without a layout pattern (`S` sliding, `F` full, `G` global),
/// whose `[config.layer_rules]` body is `rules`.
fn with_rules(layout_pattern: &str, rules: &str) -> String {
    format!(
        r#"schema = 3
arch = "r"
dims = ["d"]
[layout]
kind = "pattern"
{layout_pattern}
[layout.symbols]
S = "sliding"
F = "full"
G = "global"
[layout.blocks]
sliding = ["b"]
full = ["b"]
global = ["b"]
[[block.b.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "d"
[checkpoint.c]
layers = 2
pattern = "SF"
dims = {{ d = 8 }}
[config]
layers = "num_hidden_layers"
[config.dims]
d = "hidden_size"
[config.layer_rules]
{rules}
"#
    )
}

#[test]
fn layer_rules_of_every_form_are_kept_in_order() {
    use metrale_circuit::load::circuit::config_map::{ConfigInt, RuleIndices, RuleLayers};
    let c = loads(&with_rules(
        "",
        r#"default = "sliding"
rules = [
  { every = { key = "text_config.interval", or = 4 }, offset = -1, kind = "full" },
  { every = "period", offset = { key = "offset", or = 1 }, kind = "global" },
  { indices = "text_config.full_attn_idxs", kind = "full" },
  { indices = [1, 3], base = 1, kind = "global" },
  { last = { key = "num_kv_shared_layers", or = 0 }, kind = "sliding" },
  { last = 2, kind = "full" },
]"#,
    ));
    let Some(LayerKindsSource::Rules(rules)) = c.config().unwrap().layer_kinds() else {
        panic!("layer rules expected");
    };
    assert_eq!(rules.default_kind(), Some("sliding"));
    assert_eq!(rules.default_origin().unwrap().to_string(), "c.toml:29");
    let got: Vec<(&RuleLayers, &str, String)> = rules
        .rules()
        .iter()
        .map(|r| (r.layers(), r.kind(), r.origin().to_string()))
        .collect();
    let key = |key: &str, or: Option<i64>| ConfigInt::Key {
        key: key.to_owned(),
        or,
    };
    assert_eq!(
        got,
        [
            (
                &RuleLayers::Every {
                    period: key("text_config.interval", Some(4)),
                    offset: ConfigInt::Literal(-1)
                },
                "full",
                "c.toml:31".to_owned()
            ),
            (
                &RuleLayers::Every {
                    period: key("period", None),
                    offset: key("offset", Some(1))
                },
                "global",
                "c.toml:32".to_owned()
            ),
            (
                &RuleLayers::Indices {
                    list: RuleIndices::Key {
                        key: "text_config.full_attn_idxs".to_owned(),
                        or: None,
                    },
                    base: 0
                },
                "full",
                "c.toml:33".to_owned()
            ),
            (
                &RuleLayers::Indices {
                    list: RuleIndices::Listed(vec![1, 3]),
                    base: 1
                },
                "global",
                "c.toml:34".to_owned()
            ),
            (
                &RuleLayers::Last {
                    count: key("num_kv_shared_layers", Some(0))
                },
                "sliding",
                "c.toml:35".to_owned()
            ),
            (
                &RuleLayers::Last {
                    count: ConfigInt::Literal(2)
                },
                "full",
                "c.toml:36".to_owned()
            ),
        ]
    );
}

#[test]
fn last_restricts_a_rule_and_indices_take_an_or() {
    use metrale_circuit::load::circuit::config_map::{ConfigInt, RuleIndices, RuleLayers};
    let c = loads(&with_rules(
        "",
        r#"default = "sliding"
rules = [
  { every = 5, offset = -1, last = { key = "shared", or = 15 }, kind = "full" },
  { indices = { key = "idxs", or = [0, 2] }, last = 3, kind = "global" },
  { indices = { key = "none", or = [] }, kind = "global" },
]"#,
    ));
    let Some(LayerKindsSource::Rules(rules)) = c.config().unwrap().layer_kinds() else {
        panic!("layer rules expected");
    };
    let got: Vec<(&RuleLayers, Option<&ConfigInt>)> = rules
        .rules()
        .iter()
        .map(|r| (r.layers(), r.within_last()))
        .collect();
    assert_eq!(
        got,
        [
            (
                &RuleLayers::Every {
                    period: ConfigInt::Literal(5),
                    offset: ConfigInt::Literal(-1)
                },
                Some(&ConfigInt::Key {
                    key: "shared".to_owned(),
                    or: Some(15)
                })
            ),
            (
                &RuleLayers::Indices {
                    list: RuleIndices::Key {
                        key: "idxs".to_owned(),
                        or: Some(vec![0, 2])
                    },
                    base: 0
                },
                Some(&ConfigInt::Literal(3))
            ),
            (
                &RuleLayers::Indices {
                    list: RuleIndices::Key {
                        key: "none".to_owned(),
                        or: Some(Vec::new())
                    },
                    base: 0
                },
                None
            ),
        ]
    );
}

#[test]
fn fixed_rules_that_agree_with_the_layout_load() {
    // Every 2nd layer, the last of each pair, full: the layout's `SF`, on every layer.
    let text = with_rules(
        "pattern = \"SF\"",
        "default = \"sliding\"\nrules = [{ every = 2, offset = -1, kind = \"full\" }]",
    );
    assert!(loads(&text).config().is_some());
    // Rules that cover every layer need no default; without one they load too.
    let text = with_rules(
        "pattern = \"SF\"",
        "rules = [{ every = 2, kind = \"sliding\" }, { every = 2, offset = 1, kind = \"full\" }]",
    );
    assert!(loads(&text).config().is_some());
    // A rule read from the config is checked by `import`, not here: it loads beside a pattern.
    let text = with_rules(
        "pattern = \"SF\"",
        "default = \"sliding\"\nrules = [{ every = \"n\", offset = -1, kind = \"full\" }]",
    );
    assert!(loads(&text).config().is_some());
    // The same fixed rule against `SSF` disagrees at layer 1.
    let d = only(&with_rules(
        "pattern = \"SSF\"",
        "default = \"sliding\"\nrules = [{ every = 2, offset = -1, kind = \"full\" }]",
    ));
    check(
        &d,
        "layer 1 is `full` by this rule, but the layout's pattern `SSF` makes it `sliding`",
        "c.toml:30:43",
        &[
            "the rules and the layout must agree: correct one of them, or leave the layer kinds to the rules alone (a pattern layout without its own `pattern`)",
        ],
    );
}

#[test]
fn a_later_rule_overrides_an_earlier_one_only_where_both_name_a_layer() {
    // `every = 4` names 0, 4, 8, ...; the later `every = 2` overrides them all: refused.
    let d = only(&with_rules(
        "",
        "default = \"sliding\"\nrules = [{ every = 4, kind = \"global\" }, { every = 2, kind = \"full\" }]",
    ));
    assert_eq!(
        d.message,
        "this rule never decides a layer: the rules after it name every layer it names",
        "{}",
        d.render()
    );
    assert_eq!(common::place(&d), "c.toml:30:10");
    // The other way round each decides some layers: it loads.
    loads(&with_rules(
        "",
        "default = \"sliding\"\nrules = [{ every = 2, kind = \"full\" }, { every = 4, kind = \"global\" }]",
    ));
    // Listed indices override only what they list.
    loads(&with_rules(
        "",
        "default = \"sliding\"\nrules = [{ every = 2, kind = \"full\" }, { indices = [0, 2], kind = \"global\" }]",
    ));
    let d = only(&with_rules(
        "",
        "default = \"sliding\"\nrules = [{ indices = [0, 2], kind = \"global\" }, { every = 2, kind = \"full\" }]",
    ));
    assert_eq!(common::place(&d), "c.toml:30:10", "{}", d.render());
}

#[test]
fn a_huge_index_list_is_read_in_linear_time() {
    // 200,000 indices, all past the loader's limit but the first 1,024: each one past it is an
    // error (the first 100 kept), and the duplicate check is by layer, not by search.
    let list: Vec<String> = (0..200_000u64).map(|i| i.to_string()).collect();
    let text = with_rules(
        "",
        &format!(
            "default = \"sliding\"\nrules = [{{ indices = [{}], kind = \"full\" }}]",
            list.join(", ")
        ),
    );
    let start = std::time::Instant::now();
    let found = errors(&text);
    assert!(start.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(
        found[0].message,
        "layer index 1024 is past the loader's limit of 1024 layers"
    );
}
