//! `import` beyond one case: a sweep of configs through one circuit's `[config.layer_rules]`,
//! and the command's own output (the `--name` note, a checkpoint the circuit already pins).
//! Each circuit and config whose import gives one output is a case of `metrale-circuit`'s
//! `tests/import_cases/`; the zoo's shipped configs are pinned in `zoo.rs` beside this file.

use metrale_circuit::config::{ImportOptions, ImportedKinds, import};
use metrale_circuit::load::diag::Source;
use metrale_circuit::load::{CircuitSource, load};

/// A schema-3 pattern circuit without a layout pattern: symbols S (sliding), F (full), G
/// (global); its rules on lines 30 to 32: every N-th layer full (N at `text_config.interval`,
/// 4 when absent), the layers at `text_config.global_idxs` global, the last K sliding (K at
/// `shared`, 0 when absent), the rest sliding. The circuit of the `rules/` import cases
/// (`metrale-circuit/tests/import_cases/rules/defaults/circuit.toml`).
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

#[test]
fn layer_rules_never_panic_and_give_every_layer_one_kind() {
    let c = load(CircuitSource::Text {
        name: "c.toml",
        text: RULES,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
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
