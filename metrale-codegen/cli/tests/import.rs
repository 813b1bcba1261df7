//! `import`: a config.json read through a circuit's `[config]`. Hand-written circuits and
//! configs here (positions counted by hand, lines and columns 1-based); the zoo's shipped
//! configs are pinned in `zoo.rs` beside this file.

use metrale_circuit::config::{ImportOptions, Imported, ImportedKinds, import};
use metrale_circuit::load::diag::{Diagnostic, Source};
use metrale_circuit::load::{CheckpointSpec, Circuit};
use metrale_circuit::load::{CircuitSource, load};

/// A pattern-layout circuit: symbols M (mamba), - (mlp), * (attention); a `[config]` reading a
/// pattern string, a nested dim and a dim with a fallback.
const PATTERN: &str = r#"schema = 2
arch = "p"
dims = ["hidden", "heads", "head_dim"]
[layout]
kind = "pattern"
[layout.symbols]
M = "mamba"
"-" = "mlp"
"*" = "attention"
[layout.blocks]
mamba = ["m"]
mlp = ["m"]
attention = ["m"]
[checkpoint.t]
layers = 1
pattern = "M"
dims = { hidden = 1, heads = 1, head_dim = 1 }
[[block.m.state]]
id = "h"
kind = "recurrent"
format = "f32"
shape = "heads x head_dim"
verify = "h_steps"
[config]
layers = "num_hidden_layers"
pattern = "hybrid_override_pattern"
[config.dims]
hidden = "text_config.hidden_size"
heads = "text_config.heads"
head_dim = { key = "head_dim", or = "hidden / heads" }
"#;

/// A config for [`PATTERN`]: line 5 holds the pattern, line 6 opens `text_config`.
const PATTERN_CONFIG: &str = r#"{
  "_name_or_path": "org/Model-1.5B",
  "architectures": ["X"],
  "num_hidden_layers": 4,
  "hybrid_override_pattern": "M-*-",
  "text_config": {
    "hidden_size": 64,
    "heads": 4
  }
}
"#;

fn circuit(text: &str) -> Circuit {
    load(CircuitSource::Text {
        name: "c.toml",
        text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"))
}

fn run(
    circuit_text: &str,
    config: &str,
    options: ImportOptions<'_>,
) -> Result<Imported, Vec<Diagnostic>> {
    let c = circuit(circuit_text);
    import(&c, &Source::new("config.json", config), "config", options).map_err(|d| d.0)
}

/// The one error of an import that must fail.
fn only(circuit_text: &str, config: &str) -> Diagnostic {
    let errors = run(circuit_text, config, ImportOptions::default()).expect_err("must fail");
    assert_eq!(errors.len(), 1, "{errors:#?}");
    errors.into_iter().next().unwrap()
}

fn place(d: &Diagnostic) -> String {
    let loc = d.location.as_ref().expect("located");
    format!("{}:{}:{}", loc.path, loc.line, loc.column)
}

/// The checkpoint `name` of `circuit_text` with `table` appended; it must load.
fn appended(circuit_text: &str, table: &str, name: &str) -> CheckpointSpec {
    let c = circuit(&format!("{circuit_text}{table}"));
    c.checkpoint(name).expect("the imported checkpoint").clone()
}

#[test]
fn a_pattern_config_imports_and_the_table_loads() {
    let imported = run(PATTERN, PATTERN_CONFIG, ImportOptions::default()).unwrap();
    // By hand: the name from `_name_or_path`'s last segment, hf from it; head_dim absent, so
    // hidden / heads = 64 / 4 = 16.
    assert_eq!(
        imported.to_toml(),
        "[checkpoint.model_1_5b]\nhf = \"org/Model-1.5B\"\nlayers = 4\npattern = \"M-*-\"\n\
         dims = { hidden = 64, heads = 4, head_dim = 16 }\n"
    );
    let cp = appended(PATTERN, &imported.to_toml(), "model_1_5b");
    assert_eq!(cp.layer_kinds(), ["mamba", "mlp", "attention", "mlp"]);
    assert_eq!(cp.dim("head_dim"), Some(16));
    assert_eq!(cp.hf(), Some("org/Model-1.5B"));
    // A given head_dim wins over the fallback; `null` takes the fallback.
    let given = PATTERN_CONFIG
        .replace("\"heads\": 4", "\"heads\": 4,\n    \"x\": 1")
        .replace(
            "\"num_hidden_layers\": 4,",
            "\"num_hidden_layers\": 4,\n  \"head_dim\": 8,",
        );
    let imported = run(PATTERN, &given, ImportOptions::default()).unwrap();
    assert_eq!(imported.dims[2], ("head_dim".to_owned(), 8));
    let null = PATTERN_CONFIG.replace(
        "\"num_hidden_layers\": 4,",
        "\"num_hidden_layers\": 4,\n  \"head_dim\": null,",
    );
    assert_eq!(
        run(PATTERN, &null, ImportOptions::default()).unwrap().dims[2].1,
        16
    );
}

#[test]
fn name_and_hf_as_given_or_defaulted() {
    let options = ImportOptions {
        name: Some("mine"),
        hf: Some("a/b"),
    };
    let imported = run(PATTERN, PATTERN_CONFIG, options).unwrap();
    assert_eq!(
        (imported.name.as_str(), imported.hf.as_deref()),
        ("mine", Some("a/b"))
    );
    // No `_name_or_path`: the file stem ("config"), no hf.
    let bare = PATTERN_CONFIG.replace("  \"_name_or_path\": \"org/Model-1.5B\",\n", "");
    let imported = run(PATTERN, &bare, ImportOptions::default()).unwrap();
    assert_eq!((imported.name.as_str(), imported.hf), ("config", None));
    // A local path is no Hugging Face id, but still names the checkpoint.
    let local = PATTERN_CONFIG.replace("org/Model-1.5B", "/models/my/Local-7B");
    let imported = run(PATTERN, &local, ImportOptions::default()).unwrap();
    assert_eq!((imported.name.as_str(), imported.hf), ("local_7b", None));
    // A name that cannot be a checkpoint's is refused.
    let errors = run(
        PATTERN,
        PATTERN_CONFIG,
        ImportOptions {
            name: Some("Bad-Name"),
            hf: None,
        },
    )
    .unwrap_err();
    assert_eq!(
        errors[0].message,
        "`Bad-Name` is not a valid checkpoint name"
    );
}

#[test]
fn a_missing_key_is_named_at_the_object_that_lacks_it() {
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace("    \"heads\": 4\n", "    \"head\": 4\n"),
    );
    assert_eq!(d.message, "missing config key `text_config.heads`");
    // `text_config`'s object opens at line 6, column 18.
    assert_eq!(place(&d), "config.json:6:18");
    assert!(
        d.help[0].contains("`heads = { key = \"text_config.heads\", or = \"<expression>\" }`"),
        "{}",
        d.render()
    );
}

#[test]
fn a_wrong_type_is_named_at_the_value() {
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace("\"hidden_size\": 64", "\"hidden_size\": 64.0"),
    );
    assert_eq!(
        d.message,
        "config key `text_config.hidden_size` must be a non-negative integer, found a number that is not an integer"
    );
    assert_eq!(place(&d), "config.json:7:20");
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace("\"num_hidden_layers\": 4", "\"num_hidden_layers\": \"4\""),
    );
    assert_eq!(
        d.message,
        "config key `num_hidden_layers` must be a non-negative integer, found a string"
    );
    assert_eq!(place(&d), "config.json:4:24");
}

#[test]
fn a_pattern_must_fit_the_layer_count_and_the_symbols() {
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace("\"num_hidden_layers\": 4", "\"num_hidden_layers\": 5"),
    );
    assert_eq!(
        d.message,
        "config key `hybrid_override_pattern` has 4 characters, but the model has 5 layers"
    );
    assert_eq!(place(&d), "config.json:5:30");
    // An unknown character is pointed at: `X` is the pattern's third character.
    let d = only(PATTERN, &PATTERN_CONFIG.replace("M-*-", "M-X-"));
    assert_eq!(
        d.message,
        "character `X` of config key `hybrid_override_pattern` is not a `[layout.symbols]` symbol"
    );
    assert_eq!(place(&d), "config.json:5:33");
    assert!(
        d.help.iter().any(|h| h == "valid symbols: `M`, `-`, `*`"),
        "{}",
        d.render()
    );
}

#[test]
fn errors_come_together_in_config_order() {
    let config = PATTERN_CONFIG
        .replace("\"heads\": 4", "\"heads\": -4")
        .replace("M-*-", "M-*");
    let errors = run(PATTERN, &config, ImportOptions::default()).unwrap_err();
    let found: Vec<(String, String)> = errors
        .iter()
        .map(|d| (place(d), d.message.clone()))
        .collect();
    assert_eq!(
        found,
        [
            (
                "config.json:5:30".to_owned(),
                "config key `hybrid_override_pattern` has 3 characters, but the model has 4 layers".to_owned()
            ),
            (
                "config.json:8:14".to_owned(),
                "config key `text_config.heads` must be a non-negative integer, found a negative number".to_owned()
            ),
        ]
    );
}

#[test]
fn invalid_json_and_a_circuit_without_config() {
    let d = only(PATTERN, "{\n  \"num_hidden_layers\": 4,\n}\n");
    assert!(d.message.starts_with("invalid JSON: "), "{}", d.render());
    // At the trailing comma.
    assert_eq!(place(&d), "config.json:2:25");
    let plain = &PATTERN[..PATTERN.find("[config]").unwrap()];
    let d = only(plain, PATTERN_CONFIG);
    assert_eq!(d.message, "circuit `c.toml` has no `[config]` table");
}

/// A list-layout circuit reading a per-layer list of types (strings or integers) or lists of
/// layer indices, depending on `kinds`.
fn list_circuit(kinds: &str) -> String {
    format!(
        r#"schema = 2
arch = "l"
dims = ["d"]
[layout]
kind = "list"
[layout.blocks]
linear = ["b"]
softmax = ["b"]
[checkpoint.t]
layer_kinds = ["linear"]
dims = {{ d = 1 }}
[[block.b.state]]
id = "h"
kind = "recurrent"
format = "f32"
shape = "d"
verify = "h_steps"
[config]
layers = "n"
{kinds}
[config.dims]
d = "d"
"#
    )
}

#[test]
fn layer_types_map_each_entry_to_a_kind() {
    let c = list_circuit(
        r#"layer_types = { key = "attn_type_list", map = { "0" = "linear", "1" = "softmax" } }"#,
    );
    let config = "{\"n\": 3, \"d\": 2, \"attn_type_list\": [0, 0, 1]}";
    let imported = run(&c, config, ImportOptions::default()).unwrap();
    assert_eq!(
        imported.kinds,
        ImportedKinds::List(vec!["linear".into(), "linear".into(), "softmax".into()])
    );
    assert_eq!(
        imported.to_toml(),
        "[checkpoint.config]\nlayer_kinds = [\"linear\", \"linear\", \"softmax\"]\ndims = { d = 2 }\n"
    );
    let cp = appended(&c, &imported.to_toml(), "config");
    assert_eq!(cp.layer_kinds(), ["linear", "linear", "softmax"]);
    // An entry the map does not know, at that entry (column 46), with the valid entries.
    let d = only(&c, "{\"n\": 3, \"d\": 2, \"attn_type_list\": [0, 0, 2]}");
    assert_eq!(
        d.message,
        "entry 2 of config key `attn_type_list` is `2`, which `[config] layer_types.map` does not map"
    );
    assert_eq!(place(&d), "config.json:1:43");
    assert!(
        d.help.iter().any(|h| h == "valid entries: `0`, `1`"),
        "{}",
        d.render()
    );
    // One entry per layer.
    let d = only(&c, "{\"n\": 4, \"d\": 2, \"attn_type_list\": [0, 0, 1]}");
    assert_eq!(
        d.message,
        "config key `attn_type_list` has 3 entries, but the model has 4 layers"
    );
}

#[test]
fn layer_indices_cover_every_layer_once() {
    let c = list_circuit(
        r#"layer_indices = { base = 1, kinds = { linear = "cfg.kda", softmax = "cfg.full" } }"#,
    );
    let ok = "{\"n\": 4, \"d\": 2, \"cfg\": {\"kda\": [1, 2, 3], \"full\": [4]}}";
    let imported = run(&c, ok, ImportOptions::default()).unwrap();
    assert_eq!(
        imported.kinds,
        ImportedKinds::List(vec![
            "linear".into(),
            "linear".into(),
            "linear".into(),
            "softmax".into()
        ])
    );
    let d = only(
        &c,
        "{\"n\": 4, \"d\": 2, \"cfg\": {\"kda\": [1, 2, 3], \"full\": [3]}}",
    );
    assert_eq!(
        d.message,
        "layer 3 is listed twice: in config key `cfg.full` and for `linear`"
    );
    let d = only(
        &c,
        "{\"n\": 4, \"d\": 2, \"cfg\": {\"kda\": [1, 2, 3], \"full\": [5]}}",
    );
    assert_eq!(
        d.message,
        "config key `cfg.full` lists layer 5, outside 1..=4"
    );
    let d = only(
        &c,
        "{\"n\": 4, \"d\": 2, \"cfg\": {\"kda\": [1, 2], \"full\": [4]}}",
    );
    assert_eq!(
        d.message,
        "layer 3 is in none of the config keys `cfg.kda`, `cfg.full`"
    );
}

/// An interval circuit (period 4) whose config gives the interval and a per-layer list.
const INTERVAL: &str = r#"schema = 2
arch = "i"
dims = ["d"]
[layout]
kind = "interval"
period = 4
[layout.blocks]
linear_attention = ["b"]
full_attention = ["b"]
[checkpoint.t]
layers = 1
dims = { d = 1 }
[[block.b.state]]
id = "h"
kind = "recurrent"
format = "f32"
shape = "d"
verify = "h_steps"
[config]
layers = "text_config.num_hidden_layers"
interval = "text_config.full_attention_interval"
layer_types = { key = "text_config.layer_types", map = { linear_attention = "linear_attention", full_attention = "full_attention" } }
[config.dims]
d = "text_config.d"
"#;

#[test]
fn an_interval_config_is_checked_against_the_layout() {
    let config = |interval: u64, last: &str| {
        format!(
            "{{\"text_config\": {{\"num_hidden_layers\": 4, \"d\": 1, \"full_attention_interval\": {interval},\n\"layer_types\": [\"linear_attention\", \"linear_attention\", \"linear_attention\", \"{last}\"]}}}}"
        )
    };
    let imported = run(
        INTERVAL,
        &config(4, "full_attention"),
        ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Layout);
    assert_eq!(
        imported.to_toml(),
        "[checkpoint.config]\nlayers = 4\ndims = { d = 1 }\n"
    );
    let d = only(INTERVAL, &config(8, "full_attention"));
    assert_eq!(
        d.message,
        "config key `text_config.full_attention_interval` is 8, but the layout's `period` is 4"
    );
    let d = only(INTERVAL, &config(4, "linear_attention"));
    assert_eq!(
        d.message,
        "layer 3 is `linear_attention` in the config, but the layout (period 4) makes it `full_attention`"
    );
    // At the entry of layer 3.
    assert_eq!(place(&d), "config.json:2:77");
}

#[test]
fn a_layer_count_past_the_loader_s_limit_is_refused_before_any_layer_is_read() {
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace("\"num_hidden_layers\": 4", "\"num_hidden_layers\": 5000"),
    );
    assert_eq!(
        d.message,
        "config key `num_hidden_layers` is 5000, past the loader's limit of 1024 layers"
    );
    assert_eq!(place(&d), "config.json:4:24");
    // A count no machine could allocate a layer list for: refused the same way, no panic.
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace(
            "\"num_hidden_layers\": 4",
            "\"num_hidden_layers\": 18446744073709551615",
        ),
    );
    assert!(
        d.message.contains("past the loader's limit"),
        "{}",
        d.render()
    );
}

/// A schema-3 pattern circuit without a layout pattern: symbols S (sliding), F (full), G
/// (global); its rules on lines 30 to 32: every N-th layer full (N at `text_config.interval`,
/// 4 when absent), the layers at `text_config.global_idxs` global, the last K sliding (K at
/// `shared`, 0 when absent), the rest sliding.
const RULES: &str = r#"schema = 3
arch = "r"
dims = ["d"]
[layout]
kind = "pattern"
[layout.symbols]
S = "sliding"
F = "full"
G = "global"
[layout.blocks]
sliding = ["b"]
full = ["b"]
global = ["b"]
[checkpoint.t]
layers = 1
pattern = "S"
dims = { d = 1 }
[[block.b.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "d"
[config]
layers = "num_hidden_layers"
[config.dims]
d = "hidden_size"
[config.layer_rules]
default = "sliding"
rules = [
  { every = { key = "text_config.interval", or = 4 }, offset = -1, kind = "full" },
  { indices = "text_config.global_idxs", kind = "global" },
  { last = { key = "shared", or = 0 }, kind = "sliding" },
]
"#;

/// A config for [`RULES`]: ten layers; `text_config` (line 4) holds `extra` and the global
/// indices (line 5).
fn rules_config(extra: &str, globals: &str) -> String {
    format!(
        "{{\n  \"num_hidden_layers\": 10,\n  \"hidden_size\": 8,\n  \"text_config\": {{{extra}\n    \"global_idxs\": {globals}\n  }}\n}}\n"
    )
}

#[test]
fn layer_rules_apply_in_order_with_their_defaults() {
    // By hand: the interval is absent, so 4: full at 3 and 7; global at 0 and 5; `shared`
    // absent, so 0 layers; the rest sliding.
    let imported = run(RULES, &rules_config("", "[0, 5]"), ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("GSSFSGSFSS".into()));
    let cp = appended(RULES, &imported.to_toml(), "config");
    assert_eq!(cp.layer_kinds()[3], "full");
    // Interval 2: full at 1, 3, 5, 7, 9, then the globals override 0 and 5; the last 2 are
    // sliding, overriding 9.
    let config = rules_config("\n    \"interval\": 2,", "[0, 5]").replace(
        "\"hidden_size\": 8,",
        "\"hidden_size\": 8,\n  \"shared\": 2,",
    );
    let imported = run(RULES, &config, ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("GFSFSGSFSS".into()));
    // `null` takes the `or` too.
    let config = rules_config("\n    \"interval\": null,", "[0, 5]");
    let imported = run(RULES, &config, ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("GSSFSGSFSS".into()));
}

#[test]
fn last_restricts_every_and_indices_to_the_tail() {
    // Every 2nd layer among the last `shared` (4 of 10: layers 6 to 9): 7 and 9 global; the
    // globals listed among the last 3 (7, 8, 9): 8 only; the rest by the rules before.
    let restricted = RULES.replace(
        "{ last = { key = \"shared\", or = 0 }, kind = \"sliding\" }",
        "{ every = 2, offset = -1, last = \"shared\", kind = \"global\" },\n  \
         { indices = [2, 8], last = 3, kind = \"full\" }",
    );
    let config = rules_config("", "[0]").replace(
        "\"hidden_size\": 8,",
        "\"hidden_size\": 8,\n  \"shared\": 4,",
    );
    // By hand, before the new rules: full at 3 and 7 (interval 4), global at 0, sliding else:
    // G S S F S S S F S S. Then global at 7 and 9, then full at 8.
    let imported = run(&restricted, &config, ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("GSSFSSSGFG".into()));
    // `shared` of 0 (its key absent here has no `or`: refused, naming the rule).
    let d = only(&restricted, &rules_config("", "[0]"));
    assert_eq!(d.message, "missing config key `shared`");
}

#[test]
fn a_layer_types_list_wins_over_the_rules_beside_it() {
    let both = RULES.replace(
        "layers = \"num_hidden_layers\"\n[config.dims]",
        "layers = \"num_hidden_layers\"\nlayer_types = { key = \"kinds\", map = { s = \"sliding\", f = \"full\" } }\n[config.dims]",
    );
    // No `kinds` in the config: the rules (as in `layer_rules_apply_in_order_with_their_defaults`).
    let imported = run(&both, &rules_config("", "[0, 5]"), ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("GSSFSGSFSS".into()));
    // A list: read as written, whatever the rules would say.
    let listed = rules_config("", "[0, 5]").replace(
        "\"hidden_size\": 8,",
        "\"hidden_size\": 8,\n  \"kinds\": [\"f\", \"s\", \"s\", \"s\", \"s\", \"f\", \"s\", \"s\", \"s\", \"s\"],",
    );
    let imported = run(&both, &listed, ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("FSSSSFSSSS".into()));
    // A list of the wrong length is refused, not silently replaced by the rules.
    let short = listed.replace("\"f\", \"s\", \"s\", \"s\", \"s\", \"f\",", "\"f\",");
    let d = only(&both, &short);
    assert!(d.message.contains("has 5 entries"), "{}", d.message);
}

#[test]
fn indices_take_their_or_when_the_config_omits_the_list() {
    let keyed = RULES.replace(
        "{ indices = \"text_config.global_idxs\", kind = \"global\" }",
        "{ indices = { key = \"text_config.globals\", or = [1, 6] }, kind = \"global\" }",
    );
    // The key absent: layers 1 and 6 global (and full at 3 and 7 by the interval's `or`).
    let imported = run(
        &keyed,
        &rules_config("", "[0, 5]"),
        ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("SGSFSSGFSS".into()));
    // `null` takes the `or` too; a list given is read instead.
    let null = rules_config("\n    \"globals\": null,", "[0]");
    let imported = run(&keyed, &null, ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("SGSFSSGFSS".into()));
    let given = rules_config("\n    \"globals\": [2],", "[0]");
    let imported = run(&keyed, &given, ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("SSGFSSSFSS".into()));
    // An `or` past the model's layers is refused against the depth, naming the rule.
    let past = keyed.replace("or = [1, 6]", "or = [1, 16]");
    let d = only(&past, &rules_config("", "[0]"));
    assert!(d.message.contains("lists layer 16"), "{}", d.message);
}

#[test]
fn a_rule_s_values_from_the_config_are_checked_where_they_are() {
    // A zero period, at its value (line 4, column 32).
    let d = only(RULES, &rules_config(" \"interval\": 0,", "[0]"));
    assert_eq!(
        d.message,
        "the period of rule 1 of `[config.layer_rules]` (c.toml:30) is 0: a period is at least 1 layer"
    );
    assert_eq!(place(&d), "config.json:4:32");
    // A wrong type.
    let d = only(RULES, &rules_config(" \"interval\": \"4\",", "[0]"));
    assert_eq!(
        d.message,
        "config key `text_config.interval` must be a non-negative integer, found a string"
    );
    // An index outside the layers, at that index (line 5, column 24).
    let d = only(RULES, &rules_config("", "[0, 12]"));
    assert_eq!(
        d.message,
        "config key `text_config.global_idxs` lists layer 12, outside 0..=9"
    );
    assert_eq!(place(&d), "config.json:5:24");
    // An index listed twice, at the second.
    let d = only(RULES, &rules_config("", "[0, 5, 0]"));
    assert_eq!(
        d.message,
        "layer 0 is listed twice in config key `text_config.global_idxs`"
    );
    assert_eq!(place(&d), "config.json:5:27");
    // A list that is not one.
    let d = only(RULES, &rules_config("", "3"));
    assert_eq!(
        d.message,
        "config key `text_config.global_idxs` must be a list of layer indices, found a number"
    );
    // A missing key without `or`: at the object that lacks it, naming the rule.
    let config = "{\"num_hidden_layers\": 10, \"hidden_size\": 8, \"text_config\": {}}";
    let d = only(RULES, config);
    assert_eq!(d.message, "missing config key `text_config.global_idxs`");
    assert_eq!(
        d.help,
        ["rule 2 of `[config.layer_rules]` (c.toml:31) reads its layer indices from it"]
    );
    // A `last` count past the depth, at its value.
    let config = rules_config("", "[0]").replace(
        "\"hidden_size\": 8,",
        "\"hidden_size\": 8,\n  \"shared\": 11,",
    );
    let d = only(RULES, &config);
    assert_eq!(
        d.message,
        "config key `shared` is 11, but the model has 10 layers"
    );
    assert_eq!(place(&d), "config.json:4:13");
}

#[test]
fn a_rule_s_own_numbers_are_checked_against_the_config_s_depth() {
    // Written in the circuit, so located at the layer count, naming the rule.
    let listed = RULES.replace(
        "{ indices = \"text_config.global_idxs\", kind = \"global\" }",
        "{ indices = [3, 12], kind = \"global\" }",
    );
    let d = only(&listed, &rules_config("", "[0]"));
    assert_eq!(
        d.message,
        "rule 2 of `[config.layer_rules]` (c.toml:31) lists layer 12, but config key `num_hidden_layers` gives 10 layers"
    );
    assert_eq!(place(&d), "config.json:2:24");
    let last = RULES.replace(
        "{ last = { key = \"shared\", or = 0 }, kind = \"sliding\" }",
        "{ last = 12, kind = \"sliding\" }",
    );
    let d = only(&last, &rules_config("", "[0]"));
    assert_eq!(
        d.message,
        "rule 3 of `[config.layer_rules]` (c.toml:32) names the last 12 layers, but config key `num_hidden_layers` gives 10"
    );
    assert_eq!(place(&d), "config.json:2:24");
    // An offset read from the config must fit the period.
    let offset = RULES.replace("offset = -1", "offset = \"text_config.offset\"");
    let d = only(&offset, &rules_config(" \"offset\": 7,", "[0]"));
    assert_eq!(
        d.message,
        "the offset 7 of rule 1 of `[config.layer_rules]` (c.toml:30) does not fit its period 4"
    );
    assert_eq!(place(&d), "config.json:4:30");
}

/// A schema-3 circuit whose layout has its own pattern `SSF`; `kinds` is a `[config]` line.
fn fixed(kinds: &str) -> String {
    format!(
        r#"schema = 3
arch = "f"
dims = ["d"]
[layout]
kind = "pattern"
pattern = "SSF"
[layout.symbols]
S = "sliding"
F = "full"
[layout.blocks]
sliding = ["b"]
full = ["b"]
[checkpoint.t]
layers = 3
dims = {{ d = 1 }}
[[block.b.state]]
id = "k"
kind = "paged_kv"
format = "bf16"
shape = "d"
[config]
layers = "n"
{kinds}
[config.dims]
d = "d"
"#
    )
}

#[test]
fn a_fixed_pattern_must_divide_the_depth() {
    let c = fixed("");
    let imported = run(&c, "{\"n\": 6, \"d\": 1}", ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Layout);
    assert_eq!(
        imported.to_toml(),
        "[checkpoint.config]\nlayers = 6\ndims = { d = 1 }\n"
    );
    // 7 layers would cut the pattern: both figures, and what would fit.
    let d = only(&c, "{\"n\": 7, \"d\": 1}");
    assert_eq!(
        d.message,
        "config key `n` is 7: not a whole number of the layout's pattern `SSF` (3 layers)"
    );
    assert_eq!(place(&d), "config.json:1:7");
    assert_eq!(d.label, "the pattern would be cut");
    assert_eq!(
        d.help,
        [
            "6 or 9 layers would fit; a model of another depth needs its own pattern: remove `[layout] pattern` and give the layer kinds in `[config]` (by rule: `[config.layer_rules]`, schema 3)"
        ]
    );
    // Fewer layers than one pattern.
    let d = only(&c, "{\"n\": 2, \"d\": 1}");
    assert!(
        d.help[0].starts_with("3 layers would fit;"),
        "{}",
        d.render()
    );
}

#[test]
fn a_config_that_contradicts_a_fixed_pattern_is_refused() {
    // Per-layer types that agree are written out as before; one that differs is refused at
    // its entry.
    let c = fixed(r#"layer_types = { key = "types", map = { s = "sliding", f = "full" } }"#);
    let imported = run(
        &c,
        "{\"n\": 6, \"d\": 1, \"types\": [\"s\", \"s\", \"f\", \"s\", \"s\", \"f\"]}",
        ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("SSFSSF".into()));
    let d = only(
        &c,
        "{\"n\": 6, \"d\": 1, \"types\": [\"s\", \"s\", \"f\", \"s\", \"f\", \"f\"]}",
    );
    assert_eq!(
        d.message,
        "layer 4 is `full` in the config, but the layout's pattern `SSF` makes it `sliding`"
    );
    assert_eq!(place(&d), "config.json:1:48");
    // A rule over a config key: the config's period 3 agrees, 2 does not (at the value, with
    // the rule's place in the circuit).
    let c = fixed(
        "layer_rules = { default = \"sliding\", rules = [{ every = \"every\", offset = -1, kind = \"full\" }] }",
    );
    let imported = run(
        &c,
        "{\"n\": 6, \"d\": 1, \"every\": 3}",
        ImportOptions::default(),
    )
    .unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Pattern("SSFSSF".into()));
    let d = only(&c, "{\"n\": 6, \"d\": 1, \"every\": 2}");
    assert_eq!(
        d.message,
        "layer 1 is `full` by rule 1 of `[config.layer_rules]` (c.toml:23), but the layout's pattern `SSF` makes it `sliding`"
    );
    assert_eq!(place(&d), "config.json:1:27");
}

#[test]
fn layer_rules_are_checked_against_an_interval() {
    let c = INTERVAL.replacen("schema = 2", "schema = 3", 1).replace(
        r#"layer_types = { key = "text_config.layer_types", map = { linear_attention = "linear_attention", full_attention = "full_attention" } }"#,
        r#"layer_rules = { default = "linear_attention", rules = [{ every = "text_config.p", offset = -1, kind = "full_attention" }] }"#,
    );
    let config = |p: u64| {
        format!(
            "{{\"text_config\": {{\"num_hidden_layers\": 8, \"d\": 1, \"full_attention_interval\": 4, \"p\": {p}}}}}"
        )
    };
    let imported = run(&c, &config(4), ImportOptions::default()).unwrap();
    assert_eq!(imported.kinds, ImportedKinds::Layout);
    let d = only(&c, &config(2));
    assert_eq!(
        d.message,
        "layer 1 is `full_attention` by rule 1 of `[config.layer_rules]` (c.toml:22), but the layout (period 4) makes it `linear_attention`"
    );
}

#[test]
fn layer_rules_never_panic_and_give_every_layer_one_kind() {
    let c = circuit(RULES);
    let mut imported = 0;
    for layers in [1u64, 2, 3, 7, 10, 1024, 1025] {
        for interval in ["0", "1", "3", "4", "11", "null", "-1", "1.5", "\"4\""] {
            for globals in ["[]", "[0]", "[0, 9]", "[1023]", "[0, 0]", "[-1]", "{}"] {
                for shared in ["0", "1", "10", "1024", "2000", "null"] {
                    let config = format!(
                        "{{\"num_hidden_layers\": {layers}, \"hidden_size\": 8, \"shared\": {shared}, \"text_config\": {{\"interval\": {interval}, \"global_idxs\": {globals}}}}}"
                    );
                    let source = Source::new("config.json", config.as_str());
                    match import(&c, &source, "config", ImportOptions::default()) {
                        Ok(got) => {
                            let ImportedKinds::Pattern(pattern) = &got.kinds else {
                                panic!("a pattern expected: {config}");
                            };
                            assert_eq!(pattern.chars().count() as u64, layers, "{config}");
                            imported += 1;
                        }
                        Err(errors) => {
                            assert!(!errors.is_empty(), "{config}");
                            assert!(
                                errors.iter().all(|d| d.location.is_some()),
                                "{config}\n{errors}"
                            );
                        }
                    }
                }
            }
        }
    }
    // By hand: a config imports when its depth is within the limit (not 1025), its interval is
    // valid (1, 3, 4, 11 or null: 5 values), its indices are distinct layers (`[]`, `[0]`; also
    // `[0, 9]` from 10 layers, `[1023]` at 1024) and `shared` is at most the depth (0, 1, null;
    // also 10 from 10 layers, 1024 at 1024): 4 depths x 5 x 2 x 3, then 5 x 3 x 4 at 10 layers
    // and 5 x 4 x 5 at 1024, so 120 + 60 + 100.
    assert_eq!(imported, 280);
}

/// The errors of `circuit_text` with the table `config` makes under `options` appended.
fn appended_errors(
    circuit_text: &str,
    config: &str,
    options: ImportOptions<'_>,
) -> Vec<Diagnostic> {
    let c = circuit(circuit_text);
    let config = Source::new("config.json", config);
    let imported = import(&c, &config, "config", options).expect("the config reads");
    c.with_imported(&imported, &config)
        .expect_err("must not load")
        .0
}

/// No diagnostic points at, or names, a line past the circuit's end (`c.toml` has `lines`).
fn nothing_past_the_end(errors: &[Diagnostic], lines: usize) {
    for d in errors {
        if let Some(loc) = &d.location {
            assert!(loc.path != "c.toml" || loc.line <= lines, "{}", d.render());
        }
        for note in &d.notes {
            for line in lines + 1..lines + 10 {
                assert!(!note.contains(&format!("c.toml:{line}")), "{}", d.render());
            }
        }
    }
}

#[test]
fn an_error_in_the_appended_table_is_located_where_its_figure_came_from() {
    // PATTERN has 30 lines; the table would start at line 32.
    assert_eq!(PATTERN.lines().count(), 30);
    // A name given: no file holds it, so the error has no place, and says who gave it.
    let given = ImportOptions {
        name: Some("self"),
        hf: None,
    };
    let errors = appended_errors(PATTERN, PATTERN_CONFIG, given);
    nothing_past_the_end(&errors, 30);
    let keyword = errors
        .iter()
        .find(|d| d.message == "invalid checkpoint name `self`: a Rust keyword")
        .expect("the keyword refused");
    assert_eq!(keyword.location, None);
    assert!(
        keyword.notes.contains(
            &"given by `--name` (`ImportOptions::name`), not read from `config.json`".to_owned()
        ),
        "{}",
        keyword.render()
    );
    // A name read from `_name_or_path`: at its value, line 2 column 20; the summary too.
    let config = PATTERN_CONFIG.replace("org/Model-1.5B", "org/self");
    let errors = appended_errors(PATTERN, &config, ImportOptions::default());
    nothing_past_the_end(&errors, 30);
    assert_eq!(
        place(&errors[0]),
        "config.json:2:20",
        "{}",
        errors[0].render()
    );
    assert_eq!(
        errors[1].message,
        "invalid checkpoint name `self`: a Rust keyword"
    );
    assert_eq!(place(&errors[1]), "config.json:2:20");
    // A dim that overflows a shape: the shape is the circuit's own line 22; the checkpoint
    // it names is the table read from the config, not line 32; the summary at `heads`
    // (line 8, column 14: 4 spaces, `"heads": `).
    let config = PATTERN_CONFIG
        .replace("\"heads\": 4", "\"heads\": 4294967296")
        .replace(
            "\"num_hidden_layers\": 4,",
            "\"num_hidden_layers\": 4,\n  \"head_dim\": 4294967296,",
        );
    let errors = appended_errors(PATTERN, &config, ImportOptions::default());
    nothing_past_the_end(&errors, 30);
    assert_eq!(
        place(&errors[0]),
        "config.json:9:14",
        "{}",
        errors[0].render()
    );
    assert_eq!(place(&errors[1]), "c.toml:22:9");
    assert!(
        errors[1].notes.contains(
            &"under checkpoint `model_1_5b`, defined at the table read from `config.json`"
                .to_owned()
        ),
        "{}",
        errors[1].render()
    );
}

#[test]
fn import_of_self_names_the_option_not_a_line_past_the_circuit() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let circuit = format!("{root}/circuits/llama.toml");
    let config = format!("{root}/circuits/configs/llama_3_1_8b.json");
    let lines = std::fs::read_to_string(&circuit).unwrap().lines().count();
    let out = metrale_cli::run([
        "import",
        circuit.as_str(),
        config.as_str(),
        "--name",
        "self",
    ]);
    assert_eq!(out.status, metrale_cli::Status::BadInput);
    assert!(
        out.stderr
            .contains("error: invalid checkpoint name `self`: a Rust keyword")
    );
    assert!(
        out.stderr
            .contains("given by `--name` (`ImportOptions::name`), not read from"),
        "{}",
        out.stderr
    );
    for line in lines + 1..lines + 10 {
        assert!(
            !out.stderr.contains(&format!("llama.toml:{line}")),
            "{}",
            out.stderr
        );
    }
}

#[test]
fn an_integer_past_u64_says_so() {
    let d = only(
        PATTERN,
        &PATTERN_CONFIG.replace(
            "\"num_hidden_layers\": 4",
            "\"num_hidden_layers\": 18446744073709551616",
        ),
    );
    assert_eq!(
        d.message,
        "config key `num_hidden_layers` is past u64::MAX (18446744073709551615), the largest figure read"
    );
    assert_eq!(place(&d), "config.json:4:24");
    // u64::MAX itself is an integer (here a dim).
    let max = PATTERN_CONFIG.replace(
        "\"hidden_size\": 64",
        "\"hidden_size\": 18446744073709551615",
    );
    assert!(run(PATTERN, &max, ImportOptions::default()).is_ok());
}

#[test]
fn refusals_of_a_whole_checkpoint_are_located_at_their_key() {
    // A name read from `_name_or_path` that no checkpoint may have: at its value.
    let d = only(PATTERN, &PATTERN_CONFIG.replace("org/Model-1.5B", "org/--"));
    assert_eq!(d.message, "`` is not a valid checkpoint name");
    assert_eq!(place(&d), "config.json:2:20");
    // The circuit's checkpoint `t` (1 layer, `M`, dims 1, 1, 1), read again with 4 layers:
    // at the layer count, line 4 column 24.
    let c = circuit(PATTERN);
    let as_t = ImportOptions {
        name: Some("t"),
        hf: None,
    };
    let config = Source::new("config.json", PATTERN_CONFIG);
    let imported = import(&c, &config, "config", as_t).unwrap();
    let d = c.with_imported(&imported, &config).unwrap_err().0.remove(0);
    assert!(
        d.message
            .ends_with("differs in its layers: 4 in the config, 1 in the circuit")
    );
    assert_eq!(place(&d), "config.json:4:24");
    // One `M` layer, but `heads` 2: at `heads`, line 8 column 14.
    let other_dims = PATTERN_CONFIG
        .replace("\"num_hidden_layers\": 4", "\"num_hidden_layers\": 1")
        .replace("\"M-*-\"", "\"M\"")
        .replace("\"hidden_size\": 64", "\"hidden_size\": 1")
        .replace("\"heads\": 4", "\"heads\": 2")
        .replace(
            "\"num_hidden_layers\": 1,",
            "\"num_hidden_layers\": 1,\n  \"head_dim\": 1,",
        );
    let config = Source::new("config.json", other_dims);
    let imported = import(&c, &config, "config", as_t).unwrap();
    let d = c.with_imported(&imported, &config).unwrap_err().0.remove(0);
    assert!(
        d.message.ends_with("differs in its dims: `heads` 2, not 1"),
        "{}",
        d.message
    );
    assert_eq!(place(&d), "config.json:9:14");
    // For the generated plan of `t`: 4 layers at the count; one `*` layer at its character
    // (line 5, column 31: the pattern's string opens at 30).
    let config = Source::new("config.json", PATTERN_CONFIG);
    let d = c.dims_from_config("t", &config).unwrap_err().0.remove(0);
    assert!(
        d.message.contains("describes 4 layers, `t` has 1"),
        "{}",
        d.message
    );
    assert_eq!(place(&d), "config.json:4:24");
    let star = PATTERN_CONFIG
        .replace("\"num_hidden_layers\": 4", "\"num_hidden_layers\": 1")
        .replace("\"M-*-\"", "\"*\"");
    let config = Source::new("config.json", star);
    let d = c.dims_from_config("t", &config).unwrap_err().0.remove(0);
    assert!(
        d.message
            .contains("layer 0 as `attention`, `t` has `mamba`"),
        "{}",
        d.message
    );
    assert_eq!(place(&d), "config.json:5:31");
}

#[test]
fn import_of_a_pinned_checkpoint_says_so_on_stderr() {
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let circuit = format!("{root}/circuits/llama.toml");
    let config = format!("{root}/circuits/configs/llama_3_1_8b.json");
    let table = "[checkpoint.llama_3_1_8b]\nlayers = 32\n\
                 dims = { hidden = 4096, q_heads = 32, kv_heads = 8, head_dim = 128 }\n";
    // The config gives no `_name_or_path`: no `hf`, where the circuit pins one.
    let out = metrale_cli::run(["import", circuit.as_str(), config.as_str()]);
    assert_eq!(out.status, metrale_cli::Status::Ok);
    assert_eq!(out.stdout, table);
    let note = |hf: &str| {
        format!(
            "note: circuit `{circuit}` already pins checkpoint `llama_3_1_8b` (at {circuit}:168): \
             the layers and dims of `{config}` agree with it, {hf}\n  = help: the table is \
             printed to compare: appended, it would define `llama_3_1_8b` twice, which the \
             loader refuses; to change the pinned checkpoint, edit its table\n"
        )
    };
    assert_eq!(
        out.stderr,
        note("but its `hf` differs: `meta-llama/Llama-3.1-8B` in the circuit, none in the config")
    );
    let out = metrale_cli::run([
        "import",
        circuit.as_str(),
        config.as_str(),
        "--hf",
        "meta-llama/Llama-3.1-8B",
    ]);
    assert_eq!(out.status, metrale_cli::Status::Ok);
    assert_eq!(
        out.stderr,
        note("and so does its `hf` (`meta-llama/Llama-3.1-8B`)")
    );
    // Under a name the circuit does not have, no note.
    let out = metrale_cli::run([
        "import",
        circuit.as_str(),
        config.as_str(),
        "--name",
        "mine",
    ]);
    assert_eq!(out.status, metrale_cli::Status::Ok);
    assert_eq!(out.stderr, "");
}
