//! The circuit TOML loader: the repository's Qwen3.5 circuit, one test per error class (message,
//! `path:line:col`, help), block libraries, and a no-panic sweep over mutated circuits.
//!
//! Positions are counted by hand from the texts written here: lines and columns are 1-based,
//! columns count chars. [`BASE`] is a minimal valid circuit whose state table starts at line 13.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

mod common;

use common::{TempDir, check, errors, loads, only, place};
use metrale_circuit::diag::Diagnostics;
use metrale_circuit::{Circuit, LayoutRule, Section, StateKind};

const QWEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circuits/qwen3_5.toml");

/// A minimal circuit up to the header of its one state table (line 12); the state's keys
/// follow from line 13.
const BASE: &str = r#"schema = 1
arch = "t"
dims = ["d"]
[layout]
kind = "interval"
period = 1
[layout.blocks]
full_attention = ["b"]
[checkpoint.c]
layers = 1
dims = { d = 2 }
[[block.b.state]]
"#;

/// A valid recurrent state: lines 13 (`id`) to 17 (`verify`).
const STATE: &str = r#"id = "s"
kind = "recurrent"
format = "f32"
shape = "d"
verify = "h_steps"
"#;

/// [`BASE`] with `state` as the state table's keys.
fn with_state(state: &str) -> String {
    format!("{BASE}{state}")
}

/// The valid circuit with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    let text = with_state(STATE);
    assert!(text.contains(from), "`{from}` is not in the circuit");
    text.replacen(from, to, 1)
}

// ---------------------------------------------------------------------------------------------
// The repository's circuit.
// ---------------------------------------------------------------------------------------------

#[test]
fn qwen3_5_loads() {
    let c = Circuit::load(QWEN).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.arch(), "qwen3_5");
    assert_eq!(c.path(), QWEN);
    assert_eq!(c.files().len(), 2);
    assert!(
        c.files()[1]
            .name()
            .ends_with("circuits/blocks/qwen3_attention.toml")
    );
    assert_eq!(c.read().len(), 2);
    assert_eq!(c.read()[0], PathBuf::from(QWEN));
    assert!(c.read()[1].ends_with("blocks/qwen3_attention.toml"));
    assert_eq!(
        c.dims(),
        [
            "hidden",
            "q_heads",
            "kv_heads",
            "head_dim",
            "lin_k_heads",
            "lin_k_dim",
            "lin_v_heads",
            "lin_v_dim",
            "conv_kernel",
        ]
    );
    assert_eq!(c.derived().len(), 1);
    assert_eq!(c.derived()[0].0, "conv_window");
    assert_eq!(c.derived()[0].1.to_string(), "conv_kernel - 1");
    assert_eq!(c.checkpoints()[0].dim("conv_window"), Some(3));
    let blocks: Vec<&str> = c
        .blocks()
        .iter()
        .map(metrale_circuit::BlockTemplate::name)
        .collect();
    assert_eq!(
        blocks,
        ["embed", "gdn", "head", "mtp_in", "mtp_out", "attn", "ffn"]
    );
    assert_eq!(
        (c.prologue(), c.epilogue()),
        (&["embed".to_owned()][..], &["head".to_owned()][..])
    );
    assert_eq!(c.draft(), ["mtp_in", "attn", "ffn", "mtp_out"]);
    assert_eq!(*c.layout().rule(), LayoutRule::Interval { period: 4 });
    assert_eq!(c.layout().blocks_of("full_attention"), ["attn", "ffn"]);
    assert_eq!(c.layout().blocks_of("linear_attention"), ["gdn", "ffn"]);
    let checkpoints: Vec<&str> = c
        .checkpoints()
        .iter()
        .map(metrale_circuit::Checkpoint::name)
        .collect();
    assert_eq!(
        checkpoints,
        [
            "qwen3_5_27b",
            "qwen3_5_397b_a17b",
            "qwen3_5_35b_a3b",
            "qwen3_5_4b",
            "tiny"
        ]
    );
    let default = c.default_checkpoint().unwrap();
    assert_eq!(default.hf(), Some("Qwen/Qwen3.5-27B"));
    assert_eq!(default.layer_kinds().len(), 64);
    assert_eq!(default.layer_kinds()[3], "full_attention");
    assert_eq!(default.layer_kinds()[4], "linear_attention");
    assert_eq!(default.dim("hidden"), Some(5120));
    let gdn = c.block("gdn").unwrap();
    assert_eq!(gdn.states().len(), 9);
    assert_eq!(gdn.origin().line, 81);
    let h = gdn.state("h").unwrap();
    assert_eq!(h.kind(), StateKind::Recurrent);
    assert_eq!(h.origin().line, 81);
    assert_eq!(gdn.state("h_prefix").unwrap().of(), Some("h"));
    // First use: gdn's `h` (ssm_h_storage), gdn's `conv`, then the library's attention KV.
    assert_eq!(
        c.format_keys(),
        ["ssm_h_storage", "ssm_conv_storage", "kv_cache_dtype"]
    );
}

#[test]
fn qwen3_5_instantiates() {
    let c = Circuit::load(QWEN).unwrap_or_else(|e| panic!("{e}"));
    let decls = c.instantiate("qwen3_5_27b").unwrap();
    // 48 GDN layers x 9 states + 16 attention layers x 2 + head 6 + draft attention 2.
    assert_eq!(decls.len(), 472);
    let get = |id: &str| {
        decls
            .iter()
            .find(|d| d.id == id)
            .unwrap_or_else(|| panic!("no `{id}`"))
    };
    assert_eq!(get("l0.gdn.h").elements, 48 * 128 * 128);
    assert_eq!(get("l0.gdn.conv").elements, 3 * (16 * 128 * 2 + 48 * 128));
    assert_eq!(get("l3.attn.k").elements, 4 * 256);
    let copy = get("l0.gdn.h_prefix");
    assert_eq!(copy.of.as_deref(), Some("l0.gdn.h"));
    assert_eq!(copy.elements, 786_432);
    assert_eq!(get("draft.attn.k").section, Section::Draft);
    assert_eq!(get("l3.attn.k").section, Section::Main);
    let checkpoint = c.checkpoint("qwen3_5_27b").unwrap();
    let prefixes: Vec<String> = c
        .instances(checkpoint)
        .into_iter()
        .map(|i| i.prefix)
        .collect();
    assert_eq!(prefixes[..3], ["embed", "l0.gdn", "l0.ffn"]);
    assert_eq!(
        prefixes[prefixes.len() - 5..],
        [
            "head",
            "draft.mtp_in",
            "draft.attn",
            "draft.ffn",
            "draft.mtp_out"
        ]
    );
    assert_eq!(c.instantiate("tiny").unwrap().len(), 66);
}

#[test]
fn load_as_names_files_as_given() {
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::File {
        path: Path::new(QWEN),
        name: "circuits/qwen3_5.toml",
    })
    .circuit
    .unwrap();
    assert_eq!(c.path(), "circuits/qwen3_5.toml");
    assert_eq!(c.files()[1].name(), "circuits/blocks/qwen3_attention.toml");
    assert_eq!(c.blocks()[0].origin().path, "circuits/qwen3_5.toml");
    assert_eq!(
        c.block("attn").unwrap().origin().path,
        "circuits/blocks/qwen3_attention.toml"
    );
    assert_eq!(c.read()[0], PathBuf::from(QWEN));
}

#[test]
fn from_source_reads_includes_from_dir() {
    let text = std::fs::read_to_string(QWEN).unwrap();
    let dir = Path::new(QWEN).parent().unwrap();
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "q.toml",
        text: &text,
        dir: Some(dir),
    })
    .circuit
    .unwrap();
    assert_eq!(c.path(), "q.toml");
    assert_eq!(c.files()[1].name(), "blocks/qwen3_attention.toml");
    // The circuit itself was not read from disk.
    assert_eq!(c.read().len(), 1);
    assert!(c.read()[0].ends_with("blocks/qwen3_attention.toml"));
}

#[test]
fn base_circuit_is_valid() {
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "c.toml",
        text: &with_state(STATE),
        dir: None,
    })
    .circuit
    .unwrap();
    assert_eq!(c.blocks()[0].states()[0].origin().line, 12);
    assert_eq!(c.instantiate("c").unwrap()[0].id, "l0.b.s");
}

// ---------------------------------------------------------------------------------------------
// Files.
// ---------------------------------------------------------------------------------------------

#[test]
fn malformed_toml_is_located() {
    // Line 2, `arch = "t` with no closing quote; line 6, `period = = 1`.
    let text = edit("arch = \"t\"", "arch = \"t").replacen("period = 1", "period = = 1", 1);
    let errors = errors(&text);
    assert!(
        errors.len() >= 2,
        "{}",
        Diagnostics(errors.clone()).render()
    );
    assert!(
        errors
            .iter()
            .all(|d| d.message.starts_with("invalid TOML: "))
    );
    assert!(
        place(&errors[0]).starts_with("c.toml:2:"),
        "{}",
        errors[0].render()
    );
    assert!(errors.iter().any(|d| place(d).starts_with("c.toml:6:")));
}

#[test]
fn missing_file_names_it() {
    let Err(errors) = Circuit::load("no/such/circuit.toml") else {
        panic!("loaded a missing file");
    };
    assert_eq!(errors.len(), 1);
    let d = &errors.0[0];
    assert_eq!(
        d.message,
        "cannot read circuit `no/such/circuit.toml`: No such file or directory"
    );
    assert!(d.location.is_none());
    assert!(d.render().contains("--> no/such/circuit.toml"));
}

// ---------------------------------------------------------------------------------------------
// Top level.
// ---------------------------------------------------------------------------------------------

#[test]
fn missing_schema_points_at_file_start() {
    let d = only(&edit("schema = 1\n", ""));
    check(
        &d,
        "missing `schema`",
        "c.toml:1:1",
        &["add `schema = 1` (or `schema = 2`) at the top of the circuit"],
    );
}

#[test]
fn unsupported_schema() {
    let d = only(&edit("schema = 1", "schema = 3"));
    check(
        &d,
        "unsupported schema `3`",
        "c.toml:1:10",
        &["this loader reads `schema = 1` and `schema = 2`"],
    );
    // Schema 2 reads every schema-1 circuit as it is.
    let schema_2 = edit("schema = 1", "schema = 2");
    loads(&schema_2);
}

#[test]
fn schema_2_shapes_subtract() {
    // Line 16 is `shape = "d - 1"`; with `d = 2` every unit holds one element.
    let text = edit("schema = 1", "schema = 2").replacen("shape = \"d\"", "shape = \"d - 1\"", 1);
    let c = loads(&text);
    assert_eq!(c.instantiate("c").unwrap()[0].elements, 1);
    assert_eq!(
        c.blocks()[0].states()[0].shape().map(ToString::to_string),
        Some("d - 1".to_owned())
    );
}

#[test]
fn subtraction_needs_schema_2() {
    let d = only(&edit("shape = \"d\"", "shape = \"d - 1\""));
    check(
        &d,
        "`-` in a shape needs `schema = 2`",
        "c.toml:16:9",
        &[
            "write `schema = 2` at the top of the circuit (a schema-1 shape only adds and multiplies)",
        ],
    );
}

#[test]
fn a_shape_below_zero_names_checkpoint_state_and_expression() {
    // `d - 3` with `d = 2` is below zero under checkpoint `c`.
    let text = edit("schema = 1", "schema = 2").replacen("shape = \"d\"", "shape = \"d - 3\"", 1);
    let d = only(&text);
    check(
        &d,
        "shape of state `s` in block `b` is below zero: `d - 3`",
        "c.toml:16:9",
        &[],
    );
    assert_eq!(d.notes, ["under checkpoint `c`, defined at c.toml:9:1"]);
}

#[test]
fn unknown_top_level_key() {
    let d = only(&edit(
        "arch = \"t\"\n",
        "arch = \"t\"\ndescripton = \"x\"\n",
    ));
    check(
        &d,
        "unknown key `descripton` in the circuit",
        "c.toml:3:1",
        &["did you mean `description`?"],
    );
    assert!(d.help[0].starts_with("valid keys: `schema`, `arch`, `description`"));
}

#[test]
fn wrong_type_is_named() {
    let d = only(&edit("arch = \"t\"", "arch = 3"));
    check(
        &d,
        "`arch` must be a string, found an integer",
        "c.toml:2:8",
        &[],
    );
}

#[test]
fn missing_arch() {
    let d = only(&edit("arch = \"t\"\n", ""));
    check(
        &d,
        "missing `arch`",
        "c.toml:1:1",
        &["add `arch = \"<name>\"`: the generated module's name"],
    );
}

#[test]
fn arch_must_not_be_a_keyword() {
    let d = only(&edit("arch = \"t\"", "arch = \"type\""));
    check(
        &d,
        "invalid arch `type`: a Rust keyword",
        "c.toml:2:8",
        &["the arch becomes a Rust identifier: e.g. `type_`"],
    );
}

#[test]
fn dim_names_must_be_snake_case() {
    let d = only(&edit("dims = [\"d\"]", "dims = [\"d\", \"Hidden\"]"));
    check(
        &d,
        "invalid dim `Hidden`: not lower snake case",
        "c.toml:3:14",
        &["the dim becomes a Rust identifier: use `[a-z][a-z0-9_]*`"],
    );
}

#[test]
fn dim_may_not_be_x() {
    let d = only(&edit("dims = [\"d\"]", "dims = [\"d\", \"x\"]"));
    check(
        &d,
        "a dim may not be named `x`",
        "c.toml:3:14",
        &["`x` separates the axes of a shape"],
    );
}

#[test]
fn duplicate_dim() {
    let d = only(&edit("dims = [\"d\"]", "dims = [\"d\", \"d\"]"));
    check(&d, "duplicate dim `d`", "c.toml:3:14", &[]);
    assert_eq!(d.notes, ["first declared at c.toml:3:9"]);
}

#[test]
fn missing_dims() {
    let errors = errors(&edit("dims = [\"d\"]\n", ""));
    check(
        &errors[0],
        "missing `dims`",
        "c.toml:1:1",
        &["add `dims = [\"hidden\", ...]`: the names shapes may read"],
    );
}

#[test]
fn missing_layout() {
    let text = edit(
        "[layout]\nkind = \"interval\"\nperiod = 1\n[layout.blocks]\nfull_attention = [\"b\"]\n",
        "",
    );
    let d = only(&text);
    check(
        &d,
        "missing `[layout]`",
        "c.toml:1:1",
        &["add a `[layout]` table with `kind = \"interval\"` or `kind = \"list\"`"],
    );
}

#[test]
fn missing_checkpoint() {
    let d = only(&edit("[checkpoint.c]\nlayers = 1\ndims = { d = 2 }\n", ""));
    check(
        &d,
        "the circuit has no checkpoint",
        "c.toml:1:1",
        &["add a `[checkpoint.<name>]` table with its layers and dims"],
    );
}

// ---------------------------------------------------------------------------------------------
// Layout and block lists.
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_layout_kind() {
    let d = only(&edit("kind = \"interval\"", "kind = \"intervall\""));
    check(
        &d,
        "unknown layout kind `intervall`",
        "c.toml:5:8",
        &[
            "valid layout kinds: `interval`, `list`, `pattern`",
            "did you mean `interval`?",
        ],
    );
}

#[test]
fn period_must_be_at_least_one() {
    let d = only(&edit("period = 1", "period = 0"));
    check(&d, "`period` must be at least 1", "c.toml:6:10", &[]);
}

#[test]
fn missing_period() {
    let d = only(&edit("period = 1\n", ""));
    check(
        &d,
        "missing `period` in an interval `[layout]`",
        "c.toml:4:1",
        &["layer i is `full_attention` when (i + 1) % period == 0"],
    );
}

#[test]
fn produced_layer_kind_without_blocks() {
    // Period 1: every layer is full attention, but only linear attention has blocks.
    let d = only(&edit(
        "full_attention = [\"b\"]",
        "linear_attention = [\"b\"]",
    ));
    check(
        &d,
        "layer kind `full_attention` has no blocks",
        "c.toml:7:1",
        &["add `full_attention = [\"<block>\", ...]` to `[layout.blocks]`"],
    );
    assert_eq!(d.notes, ["layer 0 of checkpoint `c` is `full_attention`"]);
}

#[test]
fn empty_layer_kind_list() {
    let text = edit(
        "full_attention = [\"b\"]",
        "full_attention = [\"b\"]\nlinear_attention = []",
    );
    let d = only(&text);
    check(
        &d,
        "layer kind `linear_attention` has no blocks",
        "c.toml:9:20",
        &["list at least one block"],
    );
}

#[test]
fn interval_layout_with_a_foreign_layer_kind() {
    let text = edit(
        "full_attention = [\"b\"]",
        "full_attention = [\"b\"]\nfull_atention = [\"b\"]",
    );
    let d = only(&text);
    check(
        &d,
        "layer kind `full_atention` is never produced by an interval layout",
        "c.toml:9:1",
        &["did you mean `full_attention`?"],
    );
}

#[test]
fn layout_names_unknown_block() {
    let d = only(&edit(
        "full_attention = [\"b\"]",
        "full_attention = [\"bb\"]",
    ));
    check(
        &d,
        "unknown block `bb`",
        "c.toml:8:19",
        &["valid blocks: `b`", "did you mean `b`?"],
    );
}

#[test]
fn prologue_names_unknown_block() {
    let d = only(&edit("schema = 1\n", "schema = 1\nprologue = [\"bx\"]\n"));
    check(
        &d,
        "unknown block `bx`",
        "c.toml:2:13",
        &["did you mean `b`?"],
    );
}

#[test]
fn block_named_twice_in_a_list() {
    let d = only(&edit(
        "full_attention = [\"b\"]",
        "full_attention = [\"b\", \"b\"]",
    ));
    check(
        &d,
        "block `b` is named twice in layer kind `full_attention`",
        "c.toml:8:24",
        &["its instance prefix would repeat"],
    );
    assert_eq!(d.notes, ["first named at c.toml:8:19"]);
}

#[test]
fn instance_prefix_would_repeat() {
    let d = only(&edit(
        "schema = 1\n",
        "schema = 1\nprologue = [\"b\"]\nepilogue = [\"b\"]\n",
    ));
    check(
        &d,
        "instance prefix `b` would repeat: block `b` is also in `prologue`",
        "c.toml:3:13",
        &[],
    );
    assert_eq!(d.notes, ["named in `prologue` at c.toml:2:13"]);
}

// ---------------------------------------------------------------------------------------------
// Blocks and states.
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_block_key() {
    let d = only(&format!("{}[block.b]\nstream_inn = 1\n", with_state(STATE)));
    check(
        &d,
        "unknown key `stream_inn` in block `b`",
        "c.toml:19:1",
        &["did you mean `stream_in`?"],
    );
}

#[test]
fn accepted_block_and_node_keys() {
    let text = format!(
        "{}[block.b]\nstream_in = 1\nstream_out = [\"y\"]\noutputs = {{ a = 1 }}\n\
         [[block.b.node]]\nid = 3\nop = \"x\"\nin = []\nout = [1]\nbinding = true\nrole = 2.5\n\
         state = {{ s = \"update\" }}\n",
        with_state(STATE)
    );
    metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "c.toml",
        text: &text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn unknown_state_key() {
    let d = only(&with_state(&format!("{STATE}lifetim = \"sequence\"\n")));
    check(
        &d,
        "unknown key `lifetim` in a state of block `b`",
        "c.toml:18:1",
        &["did you mean `lifetime`?"],
    );
}

#[test]
fn missing_state_kind() {
    let d = only(&edit("kind = \"recurrent\"\n", ""));
    check(
        &d,
        "missing `kind` in a state of block `b`",
        "c.toml:12:1",
        &[],
    );
}

#[test]
fn missing_state_id() {
    let d = only(&edit("id = \"s\"\n", ""));
    check(
        &d,
        "missing `id` in a state of block `b`",
        "c.toml:12:1",
        &[],
    );
}

#[test]
fn unknown_state_kind() {
    let d = only(&edit("kind = \"recurrent\"", "kind = \"paged_kvv\""));
    check(
        &d,
        "unknown state kind `paged_kvv`",
        "c.toml:14:8",
        &["did you mean `paged_kv`?"],
    );
    assert!(d.help[0].starts_with("valid state kinds: `recurrent`, `paged_kv`, `prefix_snapshot`"));
    assert!(
        d.render()
            .contains("14 | kind = \"paged_kvv\"\n   |        ^^^^^^^^^^^")
    );
}

#[test]
fn misspelled_lifetime() {
    let d = only(&with_state(&format!("{STATE}lifetime = \"sequnce\"\n")));
    check(
        &d,
        "unknown lifetime `sequnce`",
        "c.toml:18:12",
        &[
            "valid lifetimes: `model`, `sequence`, `verify`, `snapshot`",
            "did you mean `sequence`?",
        ],
    );
}

#[test]
fn wrong_lifetime_for_kind() {
    let d = only(&with_state(&format!("{STATE}lifetime = \"model\"\n")));
    check(
        &d,
        "lifetime `model` is not allowed for kind `recurrent`",
        "c.toml:18:12",
        &["a `recurrent` state lives `sequence`"],
    );
}

#[test]
fn empty_format_key() {
    let d = only(&edit("format = \"f32\"", "format = \"{}\""));
    check(
        &d,
        "empty format key `{}`",
        "c.toml:15:10",
        &["name the key the engine chooses, e.g. `{kv_cache_dtype}`"],
    );
}

#[test]
fn unknown_dtype() {
    let d = only(&edit("format = \"f32\"", "format = \"bf61\""));
    check(
        &d,
        "unknown format `bf61`",
        "c.toml:15:10",
        &["did you mean `bf16`?"],
    );
    assert!(d.help[0].starts_with("valid dtypes: `f32`, `f16`, `bf16`"));
}

#[test]
fn format_key_must_not_be_a_keyword() {
    let d = only(&edit("format = \"f32\"", "format = \"{fn}\""));
    check(
        &d,
        "invalid format key `fn`: a Rust keyword",
        "c.toml:15:10",
        &["the format key becomes a Rust identifier: e.g. `fn_`"],
    );
}

#[test]
fn missing_shape() {
    let d = only(&edit("shape = \"d\"\n", ""));
    check(
        &d,
        "state `s` of block `b` has no `shape`",
        "c.toml:12:1",
        &[
            "add `shape = \"...\"`; a `prefix_snapshot` or `ring_snapshot` may instead copy a sibling state with `of = \"<state>\"`",
        ],
    );
}

/// [`STATE`] then a second state `p` (header line 18, `id` 19, `kind` 20, `format` 21, then
/// `rest` from line 22).
fn with_copy(kind: &str, rest: &str) -> String {
    with_state(&format!(
        "{STATE}[[block.b.state]]\nid = \"p\"\nkind = \"{kind}\"\nformat = \"f32\"\n{rest}"
    ))
}

#[test]
fn copy_is_valid() {
    let text = with_copy("ring_snapshot", "of = \"s\"\n");
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "c.toml",
        text: &text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
    let decls = c.instantiate("c").unwrap();
    assert_eq!(decls[1].of.as_deref(), Some("l0.b.s"));
    assert_eq!(decls[1].elements, 2);
}

#[test]
fn shape_and_of_together() {
    let d = only(&with_copy("prefix_snapshot", "shape = \"d\"\nof = \"s\"\n"));
    check(
        &d,
        "`shape` and `of` cannot both be given",
        "c.toml:22:1",
        &["a copy (`of`) has the shape of the state it copies"],
    );
}

#[test]
fn of_names_no_state() {
    let d = only(&with_copy("prefix_snapshot", "of = \"ss\"\n"));
    check(
        &d,
        "`of` names no state of block `b`: `ss`",
        "c.toml:22:6",
        &["valid states to copy: `s`", "did you mean `s`?"],
    );
}

#[test]
fn of_names_a_state_without_shape() {
    let text = with_copy(
        "prefix_snapshot",
        "of = \"s\"\n[[block.b.state]]\nid = \"q\"\nkind = \"ring_snapshot\"\nformat = \"f32\"\nof = \"p\"\n",
    );
    let d = only(&text);
    check(
        &d,
        "`of` names `p`, which has no `shape` of its own",
        "c.toml:27:6",
        &["copy a state that declares its own `shape`"],
    );
}

#[test]
fn of_only_for_copies() {
    let d = only(&with_copy("carry_stash", "of = \"s\"\n"));
    check(
        &d,
        "`of` is only for `prefix_snapshot` and `ring_snapshot` states",
        "c.toml:22:1",
        &[],
    );
}

#[test]
fn recurrent_needs_verify() {
    let d = only(&edit("verify = \"h_steps\"\n", ""));
    check(
        &d,
        "recurrent state `s` has no `verify`",
        "c.toml:12:1",
        &[
            "add `verify = \"h_steps\"` or `verify = \"conv_steps\"`: the intermediates a verify keeps to roll it back",
        ],
    );
}

#[test]
fn verify_only_on_recurrent() {
    let d = only(&edit("kind = \"recurrent\"", "kind = \"carry_stash\""));
    check(
        &d,
        "`verify` is only for recurrent states",
        "c.toml:17:1",
        &[],
    );
    assert_eq!(d.notes, ["`s` is a `carry_stash`"]);
}

#[test]
fn unknown_verify_steps() {
    let d = only(&edit("verify = \"h_steps\"", "verify = \"h_step\""));
    check(
        &d,
        "unknown verify steps `h_step`",
        "c.toml:17:10",
        &[
            "valid verify steps: `h_steps`, `conv_steps`",
            "did you mean `h_steps`?",
        ],
    );
}

#[test]
fn duplicate_state_id() {
    let d =
        only(&with_copy("carry_stash", "shape = \"d\"\n").replacen("id = \"p\"", "id = \"s\"", 1));
    check(
        &d,
        "duplicate state id `s` in block `b`",
        "c.toml:19:6",
        &[],
    );
    assert_eq!(d.notes, ["first declared at c.toml:13:6"]);
}

#[test]
fn state_id_must_be_snake_case() {
    let d = only(&edit("id = \"s\"", "id = \"S1\""));
    check(
        &d,
        "invalid state id `S1`: not lower snake case",
        "c.toml:13:6",
        &["the state id becomes a Rust identifier: use `[a-z][a-z0-9_]*`"],
    );
}

#[test]
fn block_name_must_not_be_a_keyword() {
    let text = edit("[[block.b.state]]", "[[block.b.state]]")
        .replace("\"b\"", "\"loop\"")
        .replace("block.b.", "block.loop.");
    let d = only(&text);
    check(
        &d,
        "invalid block name `loop`: a Rust keyword",
        "c.toml:12:9",
        &["the block name becomes a Rust identifier: e.g. `loop_`"],
    );
}

#[test]
fn checkpoint_name_must_be_snake_case() {
    let d = only(&edit("[checkpoint.c]", "[checkpoint.Big]"));
    check(
        &d,
        "invalid checkpoint name `Big`: not lower snake case",
        "c.toml:9:13",
        &["the checkpoint name becomes a Rust identifier: use `[a-z][a-z0-9_]*`"],
    );
}

// ---------------------------------------------------------------------------------------------
// Shapes.
// ---------------------------------------------------------------------------------------------

#[test]
fn shape_syntax_error_points_inside_the_string() {
    // `d x + 2`: the `+` at byte 4 of the shape starts no axis; the string opens at column 9,
    // so its byte 0 is column 10 and the `+` column 14.
    let d = only(&edit("shape = \"d\"", "shape = \"d x + 2\""));
    check(
        &d,
        "invalid shape: expected a dim name or an integer literal, found `+`",
        "c.toml:16:14",
        &[
            "a shape is axes joined by ` x `; an axis is terms joined by `+` or `-`, factors by \
           `*`; a factor is a literal > 0, a dim name, or `name/lit`, `name/name`",
        ],
    );
    assert!(
        d.render()
            .contains("16 | shape = \"d x + 2\"\n   |              ^ here")
    );
}

#[test]
fn unknown_dim_in_shape() {
    let d = only(&edit("shape = \"d\"", "shape = \"d x dd\""));
    check(
        &d,
        "unknown dim `dd`",
        "c.toml:16:14",
        &["valid dims: `d`", "did you mean `d`?"],
    );
    assert!(
        d.render()
            .contains("16 | shape = \"d x dd\"\n   |              ^^ not a declared dim")
    );
}

#[test]
fn unknown_dim_in_a_literal_string() {
    let d = only(&edit("shape = \"d\"", "shape = 'd x dd'"));
    check(
        &d,
        "unknown dim `dd`",
        "c.toml:16:14",
        &["valid dims: `d`", "did you mean `d`?"],
    );
}

#[test]
fn unknown_dim_in_an_escaped_string_points_at_the_value() {
    // The escape makes file bytes and shape bytes differ: the whole value is pointed at.
    let d = only(&edit("shape = \"d\"", "shape = \"d x \\u0064d\""));
    check(
        &d,
        "unknown dim `dd`",
        "c.toml:16:9",
        &["valid dims: `d`", "did you mean `d`?"],
    );
}

#[test]
fn shape_overflow_names_the_checkpoint() {
    let text = edit("shape = \"d\"", "shape = \"d x d x d\"").replacen(
        "dims = { d = 2 }",
        "dims = { d = 4294967296 }",
        1,
    );
    let d = only(&text);
    check(
        &d,
        "shape of state `s` in block `b` cannot be evaluated: overflows u64",
        "c.toml:16:9",
        &[],
    );
    assert_eq!(d.notes, ["under checkpoint `c`, defined at c.toml:9:1"]);
}

#[test]
fn shape_division_by_zero() {
    let text = edit("shape = \"d\"", "shape = \"4 x d/d\"").replacen("d = 2", "d = 0", 1);
    let d = only(&text);
    assert!(
        d.message
            .starts_with("shape of state `s` in block `b` cannot be evaluated: division by zero"),
        "{}",
        d.render()
    );
    // The divisor `d` at byte 6 of the shape.
    assert_eq!(place(&d), "c.toml:16:16");
    assert_eq!(d.notes, ["under checkpoint `c`, defined at c.toml:9:1"]);
}

// ---------------------------------------------------------------------------------------------
// Checkpoints.
// ---------------------------------------------------------------------------------------------

#[test]
fn unknown_checkpoint_key() {
    let d = only(&edit("layers = 1\n", "layers = 1\nhff = \"x\"\n"));
    check(
        &d,
        "unknown key `hff` in checkpoint `c`",
        "c.toml:11:1",
        &["did you mean `hf`?"],
    );
}

#[test]
fn missing_layers() {
    let d = only(&edit("layers = 1\n", ""));
    check(
        &d,
        "missing `layers` in checkpoint `c`",
        "c.toml:9:1",
        &["an interval layout's checkpoint gives `layers = <count>`"],
    );
}

#[test]
fn layers_out_of_range() {
    let d = only(&edit("layers = 1", "layers = 0"));
    check(
        &d,
        "`layers` must be between 1 and 1024",
        "c.toml:10:10",
        &[],
    );
}

#[test]
fn negative_integer() {
    let d = only(&edit("layers = 1", "layers = -3"));
    check(&d, "`layers` must not be negative", "c.toml:10:10", &[]);
}

#[test]
fn integer_too_large() {
    let d = only(&edit("d = 2", "d = 99999999999999999999"));
    check(
        &d,
        "`d` is too large (at most 18446744073709551615)",
        "c.toml:11:14",
        &[],
    );
}

#[test]
fn layer_kinds_only_for_list_layouts() {
    let d = only(&edit("layers = 1\n", "layers = 1\nlayer_kinds = []\n"));
    check(
        &d,
        "`layer_kinds` is only for `kind = \"list\"` layouts",
        "c.toml:11:1",
        &["an interval layout's checkpoint gives `layers = <count>`"],
    );
}

/// [`BASE`] with a list layout (no `period`: lines shift up by one from line 6).
fn list_layout(layer_kinds: &str) -> String {
    edit("kind = \"interval\"\nperiod = 1\n", "kind = \"list\"\n").replacen(
        "layers = 1",
        &format!("layer_kinds = {layer_kinds}"),
        1,
    )
}

#[test]
fn list_layout_loads() {
    let text = list_layout("[\"full_attention\", \"full_attention\"]");
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "c.toml",
        text: &text,
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(*c.layout().rule(), LayoutRule::List);
    assert_eq!(c.instantiate("c").unwrap().len(), 2);
}

#[test]
fn unknown_layer_kind_in_list() {
    let d = only(&list_layout("[\"full_attention\", \"full_atention\"]"));
    check(
        &d,
        "unknown layer kind `full_atention`",
        "c.toml:9:34",
        &[
            "valid layer kinds: `full_attention`",
            "did you mean `full_attention`?",
        ],
    );
}

#[test]
fn missing_dim_in_checkpoint() {
    let d = only(&edit("dims = { d = 2 }", "dims = { }"));
    check(
        &d,
        "checkpoint `c` does not give dim `d`",
        "c.toml:11:8",
        &["add `d = <value>`: a checkpoint gives every dim"],
    );
}

#[test]
fn extra_dim_in_checkpoint() {
    let d = only(&edit("dims = { d = 2 }", "dims = { d = 2, e = 3 }"));
    check(
        &d,
        "unknown dim `e` in checkpoint `c`",
        "c.toml:11:17",
        &["valid dims: `d`", "did you mean `d`?"],
    );
}

// ---------------------------------------------------------------------------------------------
// Nodes.
// ---------------------------------------------------------------------------------------------

/// [`BASE`] with `state` (5 lines, 13..=17) and nodes from line 18: each `(id, state table)`
/// takes three lines (header, `id`, `state`).
fn with_nodes(state: &str, nodes: &[(&str, &str)]) -> String {
    let mut text = with_state(state);
    for (id, touches) in nodes {
        writeln!(text, "[[block.b.node]]\nid = \"{id}\"\nstate = {touches}").unwrap();
    }
    text
}

#[test]
fn unknown_node_key() {
    let text = format!(
        "{}opp = \"x\"\n",
        with_nodes(STATE, &[("n", "{ s = \"update\" }")])
    );
    let d = only(&text);
    check(
        &d,
        "unknown key `opp` in a node of block `b`",
        "c.toml:21:1",
        &["did you mean `op`?"],
    );
}

#[test]
fn node_names_unknown_state() {
    let d = only(&with_nodes(
        STATE,
        &[("n", "{ s = \"update\", ss = \"read\" }")],
    ));
    check(
        &d,
        "node `n` names no state of block `b`: `ss`",
        "c.toml:20:25",
        &["valid states of block `b`: `s`", "did you mean `s`?"],
    );
}

#[test]
fn unknown_access() {
    let text = with_nodes(
        STATE,
        &[("n", "{ s = \"update\" }"), ("m", "{ s = \"snapshott\" }")],
    );
    let d = only(&text);
    check(
        &d,
        "unknown state access `snapshott`",
        "c.toml:23:15",
        &[
            "valid accesses: `read`, `write`, `update`, `snapshot`",
            "did you mean `snapshot`?",
        ],
    );
}

#[test]
fn a_misspelled_update_is_the_only_error() {
    // Issue 11, class 10: the misspelling once also reported "never updated", first.
    let text = with_nodes(STATE, &[("n", "{ s = \"updaet\" }")]);
    let d = only(&text);
    check(
        &d,
        "unknown state access `updaet`",
        "c.toml:20:15",
        &[
            "valid accesses: `read`, `write`, `update`, `snapshot`",
            "did you mean `update`?",
        ],
    );
    // An access of the wrong type is one error too.
    let text = with_nodes(STATE, &[("n", "{ s = 3 }")]);
    assert_eq!(
        only(&text).message,
        "`s` must be a string, found an integer"
    );
}

#[test]
fn recurrent_updated_twice() {
    let d = only(&with_nodes(
        STATE,
        &[("n", "{ s = \"update\" }"), ("m", "{ s = \"update\" }")],
    ));
    check(
        &d,
        "recurrent state `s` is updated by 2 nodes",
        "c.toml:23:15",
        &[],
    );
    assert_eq!(d.notes, ["first updated by node `n` at c.toml:20:15"]);
}

#[test]
fn recurrent_never_updated() {
    let d = only(&with_nodes(STATE, &[("n", "{}")]));
    check(
        &d,
        "recurrent state `s` is never updated",
        "c.toml:13:6",
        &["exactly one node must have `state = { s = \"update\" }`"],
    );
}

#[test]
fn recurrent_read_by_a_node() {
    let d = only(&with_nodes(
        STATE,
        &[("n", "{ s = \"update\" }"), ("m", "{ s = \"read\" }")],
    ));
    check(
        &d,
        "recurrent state `s` cannot be read by a node",
        "c.toml:23:15",
        &["a recurrent state is updated in place by exactly one node: use `update`"],
    );
}

#[test]
fn recurrent_snapshotted_twice() {
    let nodes = [
        ("n", "{ s = \"update\" }"),
        ("m", "{ s = \"snapshot\" }"),
        ("k", "{ s = \"snapshot\" }"),
    ];
    let d = only(&with_nodes(STATE, &nodes));
    check(
        &d,
        "recurrent state `s` is snapshotted by 2 nodes",
        "c.toml:26:15",
        &[],
    );
    assert_eq!(d.notes, ["first snapshotted by node `m` at c.toml:23:15"]);
}

#[test]
fn snapshot_needs_verify_intermediates() {
    let state = STATE.replacen("verify = \"h_steps\"\n", "", 1);
    let text = with_nodes(&state, &[("n", "{ s = \"update\", s2 = \"read\" }")]);
    // Drop the unknown `s2` to keep the one rule under test; snapshot from a second node.
    let text = text.replacen(", s2 = \"read\"", "", 1)
        + "[[block.b.node]]\nid = \"m\"\nstate = { s = \"snapshot\" }\n";
    let errors = errors(&text);
    assert_eq!(errors.len(), 2, "{}", Diagnostics(errors.clone()).render());
    check(
        &errors[0],
        "recurrent state `s` has no `verify`",
        "c.toml:12:1",
        &[
            "add `verify = \"h_steps\"` or `verify = \"conv_steps\"`: the intermediates a verify keeps to roll it back",
        ],
    );
    // 4 lines of state: the node headers are at 17 and 20.
    check(
        &errors[1],
        "recurrent state `s` is snapshotted but keeps no verify intermediates",
        "c.toml:22:15",
        &["give the state `verify = \"h_steps\"` or `verify = \"conv_steps\"`"],
    );
}

/// A KV side `k` (lines 13..=16), nodes from line 17.
const KV: &str = "id = \"k\"\nkind = \"paged_kv\"\nformat = \"f32\"\nshape = \"d\"\n";

#[test]
fn kv_side_never_read() {
    let d = only(&with_nodes(KV, &[("n", "{ k = \"write\" }")]));
    check(
        &d,
        "KV side `k` is never read",
        "c.toml:13:6",
        &["at least one node must have `state = { k = \"read\" }`"],
    );
}

#[test]
fn kv_side_written_twice() {
    let nodes = [
        ("n", "{ k = \"write\" }"),
        ("m", "{ k = \"write\", }"),
        ("r", "{ k = \"read\" }"),
    ];
    let text = with_nodes(KV, &nodes).replace(", }", " }");
    let d = only(&text);
    check(&d, "KV side `k` is written by 2 nodes", "c.toml:22:15", &[]);
    assert_eq!(d.notes, ["first written by node `n` at c.toml:19:15"]);
}

#[test]
fn kv_side_updated() {
    let nodes = [
        ("n", "{ k = \"write\" }"),
        ("r", "{ k = \"read\" }"),
        ("u", "{ k = \"update\" }"),
    ];
    let d = only(&with_nodes(KV, &nodes));
    check(
        &d,
        "KV side `k` cannot be updated",
        "c.toml:25:15",
        &["a KV side is written by one node and read by others"],
    );
}

#[test]
fn cache_touched_by_a_node() {
    let state =
        STATE
            .replacen("recurrent", "carry_stash", 1)
            .replacen("verify = \"h_steps\"\n", "", 1);
    let d = only(&with_nodes(&state, &[("n", "{ s = \"read\" }")]));
    check(
        &d,
        "`s` is a `carry_stash`, a cache no node touches",
        "c.toml:19:15",
        &["caches are filled and read by the engine, not by layer nodes"],
    );
}

#[test]
fn block_without_nodes_declares_state_only() {
    // A KV side nobody writes or reads is fine when the block has no nodes at all.
    metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "c.toml",
        text: &with_state(KV),
        dir: None,
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
}

// ---------------------------------------------------------------------------------------------
// Block libraries.
// ---------------------------------------------------------------------------------------------

/// A fresh temporary folder holding `blocks/<name>.toml` for each `(name, text)`.
fn library_dir(test: &str, libraries: &[(&str, &str)]) -> TempDir {
    let dir = TempDir::new(test);
    for (name, text) in libraries {
        dir.write(&format!("blocks/{name}.toml"), text);
    }
    dir
}

/// [`BASE`] with block `b`'s state moved to library `lib`, and `include` at line 2.
fn including(includes: &str) -> String {
    let text = BASE.replacen("[[block.b.state]]\n", "", 1);
    text.replacen(
        "schema = 1\n",
        &format!("schema = 1\ninclude = {includes}\n"),
        1,
    )
}

/// Library text defining block `b` (header line 1, `id` at line 2).
fn lib_b() -> String {
    format!("[[block.b.state]]\n{STATE}")
}

#[test]
fn library_blocks_are_loaded() {
    let dir = library_dir("ok", &[("lib", &lib_b())]);
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &including("[\"lib\"]"),
        dir: Some(&dir),
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.files()[1].name(), "circ/blocks/lib.toml");
    assert_eq!(c.read(), [dir.join("blocks").join("lib.toml")]);
    assert_eq!(c.block("b").unwrap().origin().path, "circ/blocks/lib.toml");
    assert_eq!(c.block("b").unwrap().states()[0].origin().line, 1);
}

#[test]
fn errors_in_a_library_are_located_there() {
    let lib = lib_b().replacen("recurrent", "recurent", 1);
    let dir = library_dir("located", &[("lib", &lib)]);
    let d = match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &including("[\"lib\"]"),
        dir: Some(&dir),
    })
    .circuit
    {
        Ok(_) => panic!("loaded"),
        Err(e) => e.0.into_iter().next().unwrap(),
    };
    check(
        &d,
        "unknown state kind `recurent`",
        "circ/blocks/lib.toml:3:8",
        &["did you mean `recurrent`?"],
    );
}

#[test]
fn missing_library() {
    let dir = library_dir("missing", &[]);
    let errors = match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &including("[\"nope\"]"),
        dir: Some(&dir),
    })
    .circuit
    {
        Ok(_) => panic!("loaded"),
        Err(e) => e.0,
    };
    // Block `b` is not defined either, but with a library missing that is not reported.
    assert_eq!(errors.len(), 1, "{}", Diagnostics(errors.clone()).render());
    check(
        &errors[0],
        "cannot read block library `circ/blocks/nope.toml`: No such file or directory",
        "circ/c.toml:2:12",
        &[],
    );
}

#[test]
fn include_leaving_the_folder() {
    let d = only(&including("[\"../x\"]").replacen("[checkpoint.c]", "[[block.b.state]]\nid = \"s\"\nkind = \"recurrent\"\nformat = \"f32\"\nshape = \"d\"\nverify = \"h_steps\"\n[checkpoint.c]", 1));
    check(
        &d,
        "include `../x` leaves the circuit's folder",
        "c.toml:2:12",
        &[
            "an include names a block library `blocks/<name>.toml` beside the circuit: write just `<name>`, without `/`, `\\` or `..`",
        ],
    );
}

#[test]
fn include_cycle() {
    let a = format!("include = [\"b2\"]\n{}", lib_b());
    let b2 = "include = [\"a\"]\n";
    let dir = library_dir("cycle", &[("a", &a), ("b2", b2)]);
    let errors = match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &including("[\"a\"]"),
        dir: Some(&dir),
    })
    .circuit
    {
        Ok(_) => panic!("loaded"),
        Err(e) => e.0,
    };
    assert_eq!(errors.len(), 1, "{}", Diagnostics(errors.clone()).render());
    check(
        &errors[0],
        "include cycle: `circ/blocks/a.toml` includes itself",
        "circ/blocks/b2.toml:1:12",
        &[],
    );
    assert_eq!(
        errors[0].notes,
        [
            "include chain: circ/c.toml -> circ/blocks/a.toml -> circ/blocks/b2.toml -> circ/blocks/a.toml"
        ]
    );
}

#[test]
fn diamond_include_reads_once() {
    let a = "include = [\"shared\"]\n";
    let dir = library_dir("diamond", &[("a", a), ("shared", &lib_b())]);
    let c = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &including("[\"a\", \"shared\"]"),
        dir: Some(&dir),
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<&str> = c
        .files()
        .iter()
        .map(metrale_circuit::diag::Source::name)
        .collect();
    assert_eq!(
        names,
        [
            "circ/c.toml",
            "circ/blocks/a.toml",
            "circ/blocks/shared.toml"
        ]
    );
    assert_eq!(c.blocks().len(), 1);
}

#[test]
fn block_defined_twice() {
    let dir = library_dir("twice", &[("lib", &lib_b())]);
    let text = with_state(STATE).replacen("schema = 1\n", "schema = 1\ninclude = [\"lib\"]\n", 1);
    let errors = match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &text,
        dir: Some(&dir),
    })
    .circuit
    {
        Ok(_) => panic!("loaded"),
        Err(e) => e.0,
    };
    assert_eq!(errors.len(), 1, "{}", Diagnostics(errors.clone()).render());
    check(
        &errors[0],
        "block `b` is defined twice",
        "circ/blocks/lib.toml:1:9",
        &[],
    );
    // The circuit's state header moved down one line (the include).
    assert_eq!(errors[0].notes, ["first defined at circ/c.toml:13:9"]);
}

#[test]
fn library_holds_only_include_and_block() {
    let lib = format!("arch = \"x\"\n{}", lib_b());
    let dir = library_dir("keys", &[("lib", &lib)]);
    let errors = match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &including("[\"lib\"]"),
        dir: Some(&dir),
    })
    .circuit
    {
        Ok(_) => panic!("loaded"),
        Err(e) => e.0,
    };
    assert_eq!(errors.len(), 1, "{}", Diagnostics(errors.clone()).render());
    check(
        &errors[0],
        "`arch` is not allowed in a block library",
        "circ/blocks/lib.toml:1:1",
        &["a block library holds only `include` and `[block.<name>]` tables"],
    );
}

// ---------------------------------------------------------------------------------------------
// Every error, in order.
// ---------------------------------------------------------------------------------------------

#[test]
fn all_errors_are_reported_in_file_order() {
    // Three independent mistakes: the arch (line 2), a checkpoint dim (line 11), a format
    // (line 15). Blocks are walked after checkpoints, so file order is not walk order.
    let text = edit("format = \"f32\"", "format = \"f31\"")
        .replacen("d = 2", "d = -2", 1)
        .replacen("arch = \"t\"", "arch = \"T\"", 1);
    let errors = errors(&text);
    let places: Vec<String> = errors.iter().map(place).collect();
    assert_eq!(places, ["c.toml:2:8", "c.toml:11:14", "c.toml:15:10"]);
    assert_eq!(errors[1].message, "`d` must not be negative");
    let rendered = Diagnostics(errors).render();
    assert!(rendered.ends_with("error: aborting due to 3 previous errors"));
}

#[test]
fn errors_of_the_circuit_come_before_errors_of_its_libraries() {
    let lib = lib_b().replacen("f32", "f31", 1);
    let dir = library_dir("order", &[("lib", &lib)]);
    let text = including("[\"lib\"]").replacen("period = 1", "period = 0", 1);
    let errors = match metrale_circuit::load::load(metrale_circuit::load::Input::Text {
        name: "circ/c.toml",
        text: &text,
        dir: Some(&dir),
    })
    .circuit
    {
        Ok(_) => panic!("loaded"),
        Err(e) => e.0,
    };
    let places: Vec<String> = errors.iter().map(place).collect();
    assert_eq!(places, ["circ/c.toml:7:10", "circ/blocks/lib.toml:4:10"]);
}

// ---------------------------------------------------------------------------------------------
// No panic, whatever the text.
// ---------------------------------------------------------------------------------------------

#[test]
fn mutated_circuits_never_panic() {
    const VALUES: [&str; 7] = ["0", "\"x\"", "[]", "{}", "-1", "\"{}\"", "\"a x b/0\""];
    let text = std::fs::read_to_string(QWEN).unwrap();
    let dir = Path::new(QWEN).parent().unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let mut mutants: Vec<String> = Vec::new();
    // Delete every other line.
    for i in (0..lines.len()).step_by(2) {
        let mut l = lines.clone();
        l.remove(i);
        mutants.push(l.join("\n"));
    }
    // Truncate at many byte offsets (on char boundaries).
    for i in (0..text.len()).step_by(71) {
        if text.is_char_boundary(i) {
            mutants.push(text[..i].to_owned());
        }
    }
    // Swap two lines.
    for i in (0..lines.len()).step_by(6) {
        let mut l = lines.clone();
        l.swap(i, (i * 7 + 3) % lines.len());
        mutants.push(l.join("\n"));
    }
    // Replace a value with another type, a negative, an empty format key, a zero divisor.
    let assignments = lines.iter().enumerate().filter(|(_, l)| l.contains(" = "));
    for (n, (i, line)) in assignments.enumerate() {
        let key = line.split(" = ").next().unwrap_or("");
        for value in [VALUES[n % VALUES.len()], VALUES[(n + 3) % VALUES.len()]] {
            let replaced = format!("{key} = {value}");
            let mut l = lines.clone();
            l[i] = &replaced;
            mutants.push(l.join("\n"));
        }
    }
    assert!(mutants.len() > 400, "{}", mutants.len());
    let mut failed = 0;
    for mutant in &mutants {
        if metrale_circuit::load::load(metrale_circuit::load::Input::Text {
            name: "q.toml",
            text: mutant,
            dir: Some(dir),
        })
        .circuit
        .is_err()
        {
            failed += 1;
        }
    }
    assert!(failed > 100, "only {failed} mutants were refused");
}

#[test]
fn hostile_texts_never_panic() {
    let texts = [
        "",
        "\u{feff}schema = 1",
        "[a]\n[a]",
        "a = 1\n[a]",
        "[[a]]\n[a]",
        "[a]\n[[a]]",
        "a.b = 1\n[a]",
        "[a]\nb = 1\n[a.b]",
        "[[block.b.state]]\n[block.b.state]",
        "block = 1\n[block.b]",
        "block = { b = { state = [1, \"x\", {}] } }",
        "block = { b = { node = [{ state = 1 }, { state = { x = [] } }] } }",
        "x = [1,\n",
        "x = \"\\u0000\"",
        "dims = [\"é\"]\n[checkpoint.é]\ndims = { é = 1 }",
        "schema = 1\r\narch = \"t\"\r\ndims = []\r\n[layout]\r\nkind = \"list\"\r\n[checkpoint.c]\r\nlayer_kinds = [\"q\"]\r\ndims = {}\r\n",
        "include = [\"\", \".\", \"a/b\", \"..\", 1]",
        "[layout]\nkind = \"interval\"\nperiod = 18446744073709551615\n[layout.blocks]\nfull_attention = []",
        "[checkpoint.c]\nlayers = 18446744073709551616",
        "[checkpoint.c]\nlayers = 0x7fffffff",
    ];
    for text in texts {
        let _ = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
            name: "h.toml",
            text,
            dir: Some(Path::new("/nonexistent")),
        })
        .circuit;
        let circuit = with_state(STATE);
        for (i, _) in circuit.char_indices().step_by(3) {
            let spliced = format!("{}{text}{}", &circuit[..i], &circuit[i..]);
            let _ = metrale_circuit::load::load(metrale_circuit::load::Input::Text {
                name: "h.toml",
                text: &spliced,
                dir: Some(Path::new("/nonexistent")),
            })
            .circuit;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The names the generated code needs (the loader's `names` stage).
// ---------------------------------------------------------------------------------------------

/// [`BASE`] with its state, plus a stateful prologue block `name` (line 4).
fn with_prologue(name: &str) -> String {
    with_state(STATE).replacen(
        "dims = [\"d\"]\n",
        &format!("dims = [\"d\"]\nprologue = [\"{name}\"]\n"),
        1,
    ) + &format!("[[block.{name}.state]]\n{STATE}")
}

#[test]
fn a_prologue_block_may_not_take_a_plan_field() {
    for name in ["arena", "draft", "l0", "l12"] {
        let d = only(&with_prologue(name));
        check(
            &d,
            &format!("block `{name}` cannot be a field of the generated plan: the name is taken"),
            "c.toml:4:13",
            &[
                "the plan's fields are `l<i>` for layers, `draft`, `arena`, and the prologue and epilogue blocks: rename the block",
            ],
        );
    }
    // A block without state has no field, and `lm_head` is not a layer's field.
    let stateless = with_state(STATE).replacen(
        "dims = [\"d\"]\n",
        "dims = [\"d\"]\nprologue = [\"arena\"]\n[block.arena]\nstream_in = \"x\"\n",
        1,
    );
    loads(&stateless);
    loads(&with_prologue("lm_head"));
}

#[test]
fn a_checkpoint_may_not_take_a_module_name() {
    for name in ["blocks", "units"] {
        let d = only(&edit("[checkpoint.c]", &format!("[checkpoint.{name}]")));
        check(
            &d,
            &format!(
                "checkpoint `{name}` cannot be a module of the generated code: the name is taken"
            ),
            "c.toml:9:13",
            &[
                "the generated module holds `blocks` (the unit functions) and `units`: rename the checkpoint",
            ],
        );
    }
}

#[test]
fn two_names_may_not_become_one_type() {
    // `a_1` and `a1` both become `A1Block`.
    let text = edit(
        "full_attention = [\"b\"]",
        "full_attention = [\"b\", \"a_1\", \"a1\"]",
    ) + &format!("[[block.a_1.state]]\n{STATE}[[block.a1.state]]\n{STATE}");
    let d = only(&text);
    check(
        &d,
        "`a1` and `a_1` both become the type `A1Block`",
        "c.toml:24:9",
        &["rename one of them"],
    );
    assert_eq!(d.notes, ["`a_1` is at c.toml:18:9"]);
}

#[test]
fn two_checkpoints_may_not_become_one_variant() {
    // `c_1` and `c1` both become `Checkpoint::C1`; `c` and `c1` do not collide.
    let text = edit("[checkpoint.c]", "[checkpoint.c_1]")
        + "[checkpoint.c1]\nlayers = 1\ndims = { d = 2 }\n"
        + "[checkpoint.c]\nlayers = 1\ndims = { d = 2 }\n";
    let d = only(&text);
    check(
        &d,
        "checkpoints `c1` and `c_1` both become the variant `Checkpoint::C1`",
        "c.toml:18:13",
        &["rename one of them"],
    );
    assert_eq!(d.notes, ["`c_1` is at c.toml:9:13"]);
}

#[test]
fn a_layer_kind_must_name_a_type() {
    let text = list_layout("[\"full-attention\"]").replacen(
        "full_attention = [\"b\"]",
        "full-attention = [\"b\"]",
        1,
    );
    let d = only(&text);
    check(
        &d,
        "`full-attention` cannot name a Rust type (`Full-attentionLayer` is generated from it)",
        "c.toml:7:1",
        &["use lowercase letters, digits and `_`, starting with a letter"],
    );
    let d = only(&list_layout("[\"self\"]").replacen("full_attention = [", "self = [", 1));
    assert_eq!(
        d.message,
        "`self` cannot name a Rust type (`SelfLayer` is generated from it)"
    );
    // The hardening issue's class 1 and 4: each of these once reached the generator (a panic,
    // or a type that collides or that rustc reads as another): every one is refused here.
    for kind in ["", "_", "Self", "__", "\u{e9}", "e\u{301}"] {
        let text = list_layout(&format!("[\"{kind}\"]")).replacen(
            "full_attention = [",
            &format!("\"{kind}\" = ["),
            1,
        );
        let found = errors(&text);
        assert!(
            found
                .iter()
                .any(|d| d.message.contains("cannot name a Rust type")),
            "`{kind}` was not refused as a type name: {}",
            Diagnostics(found.clone()).render()
        );
    }
}

// ---------------------------------------------------------------------------------------------
// `[derive]` (schema 2): dims computed from other dims.
// ---------------------------------------------------------------------------------------------

/// [`BASE`] (schema 2) with `[derive]` holding `entries` from line 5, and its state's shape
/// `shape`.
fn with_derive(entries: &str, shape: &str) -> String {
    edit("schema = 1", "schema = 2")
        .replacen(
            "dims = [\"d\"]\n",
            &format!("dims = [\"d\"]\n[derive]\n{entries}"),
            1,
        )
        .replacen("shape = \"d\"", &format!("shape = \"{shape}\""), 1)
}

#[test]
fn derived_dims_are_read_by_shapes_and_by_each_other() {
    // d = 2: w = 1, v = 2 (v is written first and reads w: the order is computed).
    let text = with_derive("v = \"w * 2\"\nw = \"d - 1\"\n", "v x w");
    let c = loads(&text);
    assert_eq!(c.dims(), ["d"]);
    let order: Vec<&str> = c.derived().iter().map(|(name, _)| name.as_str()).collect();
    assert_eq!(order, ["w", "v"]);
    let checkpoint = c.checkpoint("c").unwrap();
    assert_eq!(
        checkpoint.derived(),
        [("w".to_owned(), 1), ("v".to_owned(), 2)]
    );
    assert_eq!(checkpoint.dims(), [("d".to_owned(), 2)]);
    assert_eq!(c.instantiate("c").unwrap()[0].elements, 2);
}

#[test]
fn derive_needs_schema_2() {
    let text = with_derive("w = \"d - 1\"\n", "d").replacen("schema = 2", "schema = 1", 1);
    let d = only(&text);
    check(
        &d,
        "`[derive]` needs `schema = 2`",
        "c.toml:4:2",
        &["write `schema = 2` at the top of the circuit"],
    );
}

#[test]
fn a_derived_dim_is_not_also_declared() {
    let d = only(&with_derive("d = \"2\"\n", "d"));
    check(
        &d,
        "dim `d` is both declared and derived",
        "c.toml:5:1",
        &["remove it from `dims`: a derived dim is computed, never given"],
    );
    assert_eq!(d.notes, ["declared in `dims` at c.toml:3:9"]);
}

#[test]
fn a_checkpoint_does_not_give_a_derived_dim() {
    let text = with_derive("w = \"d - 1\"\n", "w").replacen(
        "dims = { d = 2 }",
        "dims = { d = 2, w = 1 }",
        1,
    );
    let d = only(&text);
    check(
        &d,
        "dim `w` is derived: checkpoint `c` does not give it",
        "c.toml:13:17",
        &["remove `w` here: it is computed from the other dims"],
    );
}

#[test]
fn a_derived_expression_reads_known_dims() {
    let d = only(&with_derive("w = \"q - 1\"\n", "d"));
    check(
        &d,
        "unknown dim `q`",
        "c.toml:5:6",
        &["valid dims: `d`, `w`"],
    );
    let d = only(&with_derive("w = \"d -\"\n", "d"));
    assert_eq!(
        d.message,
        "invalid expression: `-` must be followed by a term"
    );
    assert_eq!(place(&d), "c.toml:5:8");
    let d = only(&with_derive("w = \"d x 2\"\n", "d"));
    check(
        &d,
        "derived dim `w` has more than one axis",
        "c.toml:5:5",
        &["a derived dim is one number: terms joined by `+` or `-`, factors by `*`"],
    );
}

#[test]
fn a_derive_cycle_is_located_with_its_chain() {
    let d = only(&with_derive("a = \"b + 1\"\nb = \"a + 1\"\n", "d"));
    check(
        &d,
        "derived dim `a` depends on itself",
        "c.toml:5:1",
        &["a derived dim must be computable from declared dims"],
    );
    assert_eq!(d.notes, ["the cycle: a -> b -> a"]);
    let d = only(&with_derive("a = \"a\"\n", "d"));
    assert_eq!(d.notes, ["the cycle: a -> a"]);
}

#[test]
fn a_derived_dim_below_zero_names_the_checkpoint() {
    let d = only(&with_derive("w = \"d - 3\"\n", "w"));
    check(
        &d,
        "derived dim `w` cannot be evaluated: `d - 3` is below zero",
        "c.toml:5:5",
        &[],
    );
    assert_eq!(d.notes, ["under checkpoint `c`, defined at c.toml:11:1"]);
}

// ---------------------------------------------------------------------------------------------
// Pattern layouts (schema 2): one character per layer, each a layer kind.
// ---------------------------------------------------------------------------------------------

/// A schema-2 pattern circuit: line 6 is `layout` (one line of `[layout]`, may be empty),
/// `[layout.symbols]` maps `M` and `-` (lines 7 to 9), `[layout.blocks]` gives both kinds
/// block `b` (lines 10 to 12), `[checkpoint.c]` is line 13 and `checkpoint` (its keys besides
/// `dims`, one or more lines) starts at line 14.
fn pattern_circuit(layout: &str, checkpoint: &str) -> String {
    format!(
        r#"schema = 2
arch = "t"
dims = ["d"]
[layout]
kind = "pattern"
{layout}
[layout.symbols]
M = "mamba"
"-" = "mlp"
[layout.blocks]
mamba = ["b"]
mlp = ["b"]
[checkpoint.c]
{checkpoint}
dims = {{ d = 2 }}
[[block.b.state]]
{STATE}"#
    )
}

#[test]
fn pattern_layout_loads_repeated_and_overridden() {
    let text = format!(
        "{}[checkpoint.e]\nlayers = 3\npattern = \"--M\"\ndims = {{ d = 2 }}\n",
        pattern_circuit("pattern = \"M-\"", "layers = 5")
    );
    let c = loads(&text);
    assert_eq!(
        *c.layout().rule(),
        LayoutRule::Pattern {
            symbols: vec![('M', "mamba".to_owned()), ('-', "mlp".to_owned())],
            pattern: Some("M-".to_owned()),
        }
    );
    // The layout's pattern, repeated: M-M-M.
    assert_eq!(
        c.checkpoint("c").unwrap().layer_kinds(),
        ["mamba", "mlp", "mamba", "mlp", "mamba"]
    );
    // The checkpoint's own pattern overrides it.
    assert_eq!(
        c.checkpoint("e").unwrap().layer_kinds(),
        ["mlp", "mlp", "mamba"]
    );
    assert_eq!(c.instantiate("c").unwrap().len(), 5);
    // Without a layout pattern, each checkpoint gives its own.
    let c = loads(&pattern_circuit("", "layers = 2\npattern = \"-M\""));
    assert_eq!(c.checkpoint("c").unwrap().layer_kinds(), ["mlp", "mamba"]);
}

#[test]
fn unknown_pattern_character() {
    // In the layout's pattern: located at the first `X` (column 12 is the string's first char).
    let d = only(&pattern_circuit("pattern = \"M-X-X\"", "layers = 1"));
    check(
        &d,
        "unknown pattern character `X`",
        "c.toml:6:14",
        &["valid pattern characters: `M`, `-`"],
    );
    assert_eq!(d.notes, ["`X` occurs 2 times in this pattern"]);
    // In a checkpoint's own pattern (line 15).
    let d = only(&pattern_circuit("", "layers = 3\npattern = \"M-*\""));
    check(
        &d,
        "unknown pattern character `*`",
        "c.toml:15:14",
        &["valid pattern characters: `M`, `-`"],
    );
    assert!(d.notes.is_empty());
}

#[test]
fn a_checkpoint_pattern_has_one_character_per_layer() {
    let d = only(&pattern_circuit(
        "pattern = \"M\"",
        "layers = 3\npattern = \"M-\"",
    ));
    check(
        &d,
        "`pattern` of checkpoint `c` has 2 characters, expected 3",
        "c.toml:15:11",
        &["a checkpoint's own `pattern` gives one character per layer: `layers = 3`"],
    );
}

#[test]
fn a_pattern_layer_kind_needs_blocks() {
    let text = pattern_circuit("pattern = \"M-\"", "layers = 2").replacen("mlp = [\"b\"]\n", "", 1);
    let d = only(&text);
    check(
        &d,
        "layer kind `mlp` has no blocks",
        "c.toml:10:1",
        &["add `mlp = [\"<block>\", ...]` to `[layout.blocks]`"],
    );
    assert_eq!(d.notes, ["layer 1 of checkpoint `c` is `mlp`"]);
}

#[test]
fn a_pattern_checkpoint_needs_a_pattern() {
    let d = only(&pattern_circuit("", "layers = 2"));
    check(
        &d,
        "checkpoint `c` has no pattern",
        "c.toml:13:1",
        &[
            "give this checkpoint `pattern = \"...\"`, one character per layer, or `[layout]` a `pattern` that repeats to cover the layers",
        ],
    );
}

#[test]
fn a_symbol_is_one_character_naming_a_layer_kind() {
    let text = pattern_circuit("", "layers = 1\npattern = \"M\"").replacen("M = ", "MM = ", 1);
    let d = only(&text);
    check(
        &d,
        "symbol `MM` is not one character",
        "c.toml:8:1",
        &[
            "each key of `[layout.symbols]` is the one character that stands for its layer kind in a pattern",
        ],
    );
    let text = pattern_circuit("", "layers = 1\npattern = \"M\"").replacen(
        "M = \"mamba\"",
        "M = \"Mamba\"",
        1,
    );
    let d = only(&text);
    check(
        &d,
        "invalid layer kind `Mamba`: not lower snake case",
        "c.toml:8:5",
        &["the layer kind becomes a Rust identifier: use `[a-z][a-z0-9_]*`"],
    );
    let text = pattern_circuit("", "layers = 1").replacen(
        "[layout.symbols]\nM = \"mamba\"\n\"-\" = \"mlp\"\n",
        "",
        1,
    );
    let d = only(&text);
    check(
        &d,
        "missing `[layout.symbols]` in a pattern `[layout]`",
        "c.toml:4:1",
        &[
            "add `[layout.symbols]` mapping each pattern character to its layer kind, e.g. `M = \"mamba\"`",
        ],
    );
}

#[test]
fn pattern_keys_belong_to_pattern_layouts() {
    let d = only(&pattern_circuit(
        "period = 2",
        "layers = 1\npattern = \"M\"",
    ));
    check(
        &d,
        "`period` is only for `kind = \"interval\"` layouts",
        "c.toml:6:1",
        &["a pattern layout gives `[layout.symbols]` and a `pattern`"],
    );
    let d = only(&pattern_circuit(
        "pattern = \"M\"",
        "layer_kinds = [\"mamba\"]\nlayers = 1",
    ));
    check(
        &d,
        "`layer_kinds` is only for `kind = \"list\"` layouts",
        "c.toml:14:1",
        &[
            "a pattern layout's checkpoint gives `layers = <count>` and optionally `pattern = \"...\"`",
        ],
    );
    let d = only(&edit("schema = 1", "schema = 2").replacen(
        "period = 1\n",
        "period = 1\npattern = \"M\"\n",
        1,
    ));
    check(
        &d,
        "`pattern` is only for `kind = \"pattern\"` layouts",
        "c.toml:7:1",
        &["a pattern layout gives `[layout.symbols]` and a `pattern`"],
    );
    let d = only(&edit("schema = 1", "schema = 2").replacen(
        "layers = 1\n",
        "layers = 1\npattern = \"M\"\n",
        1,
    ));
    check(
        &d,
        "`pattern` is only for `kind = \"pattern\"` layouts",
        "c.toml:11:1",
        &["a pattern layout gives `[layout.symbols]`; its checkpoints give `pattern`"],
    );
}

#[test]
fn pattern_layouts_need_schema_2() {
    // `kind = "pattern"`: only the kind is refused, the layout is not read further.
    let text =
        pattern_circuit("pattern = \"M\"", "layers = 1").replacen("schema = 2", "schema = 1", 1);
    let d = only(&text);
    check(
        &d,
        "`kind = \"pattern\"` needs `schema = 2`",
        "c.toml:5:8",
        &["write `schema = 2` at the top of the circuit"],
    );
    // The pattern keys in a schema-1 interval layout ([`BASE`]) and its checkpoint.
    let d = only(&edit("period = 1\n", "period = 1\npattern = \"M\"\n"));
    check(
        &d,
        "`pattern` in `[layout]` needs `schema = 2`",
        "c.toml:7:1",
        &["write `schema = 2` at the top of the circuit"],
    );
    let d = only(&edit(
        "[layout.blocks]\n",
        "[layout.symbols]\nM = \"mamba\"\n[layout.blocks]\n",
    ));
    check(
        &d,
        "`symbols` in `[layout]` needs `schema = 2`",
        "c.toml:7:9",
        &["write `schema = 2` at the top of the circuit"],
    );
    let d = only(&edit("layers = 1\n", "layers = 1\npattern = \"M\"\n"));
    check(
        &d,
        "`pattern` in checkpoint `c` needs `schema = 2`",
        "c.toml:11:1",
        &["write `schema = 2` at the top of the circuit"],
    );
}

#[test]
fn an_empty_layout_pattern_is_refused() {
    // Line 6 is `pattern = ""`: the value starts at column 11.
    let d = only(&pattern_circuit("pattern = \"\"", "layers = 1"));
    check(
        &d,
        "`pattern` in `[layout]` is empty",
        "c.toml:6:11",
        &["write at least one character: the pattern repeats to cover the layers"],
    );
}

#[test]
fn symbols_belong_to_pattern_layouts() {
    // An interval layout (schema 2) with `[layout.symbols]` after `period` (line 7).
    let text = edit("schema = 1", "schema = 2").replacen(
        "period = 1\n",
        "period = 1\nsymbols = { M = \"mamba\" }\n",
        1,
    );
    let d = only(&text);
    assert_eq!(
        d.message,
        "`symbols` is only for `kind = \"pattern\"` layouts"
    );
    assert_eq!(place(&d), "c.toml:7:1");
}

// ---------------------------------------------------------------------------------------------
// Sliding-window KV sides (`window`, schema 2).
// ---------------------------------------------------------------------------------------------

/// [`BASE`] (schema 2) whose one state (line 13 on) is a KV side with `window` at line 17.
fn with_window(window: &str) -> String {
    edit("schema = 1", "schema = 2")
        .replacen("kind = \"recurrent\"", "kind = \"paged_kv\"", 1)
        .replacen("verify = \"h_steps\"", &format!("window = \"{window}\""), 1)
}

#[test]
fn a_kv_side_keeps_a_window() {
    let c = loads(&with_window("d * 64"));
    assert_eq!(
        c.blocks()[0].states()[0].window().map(ToString::to_string),
        Some("d * 64".to_owned())
    );
    assert_eq!(c.instantiate("c").unwrap()[0].window, Some(128));
}

#[test]
fn a_window_is_only_for_kv_sides() {
    let d = only(&edit("schema = 1", "schema = 2").replacen(
        "verify = \"h_steps\"",
        "verify = \"h_steps\"\nwindow = \"4\"",
        1,
    ));
    check(
        &d,
        "`window` is only for `paged_kv` states",
        "c.toml:18:1",
        &["a sliding window bounds the tokens a `paged_kv` side keeps per sequence"],
    );
}

#[test]
fn a_window_needs_schema_2() {
    let d = only(&with_window("4").replacen("schema = 2", "schema = 1", 1));
    check(
        &d,
        "`window` needs `schema = 2`",
        "c.toml:17:10",
        &["write `schema = 2` at the top of the circuit"],
    );
}

#[test]
fn a_window_keeps_at_least_one_token() {
    let d = only(&with_window("d - 2"));
    check(
        &d,
        "window of state `s` in block `b` is 0 tokens: `d - 2`",
        "c.toml:17:10",
        &["a window keeps at least one token"],
    );
    assert_eq!(d.notes, ["under checkpoint `c`, defined at c.toml:9:1"]);
    let d = only(&with_window("d x 2"));
    assert_eq!(d.message, "a `window` has more than one axis");
    let d = only(&with_window("q"));
    assert_eq!(d.message, "unknown dim `q`");
    assert_eq!(place(&d), "c.toml:17:11");
}
