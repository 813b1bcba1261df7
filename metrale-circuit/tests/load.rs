//! The circuit TOML loader on what is not one error of one file: the repository's Qwen3.5
//! circuit, what valid circuits load to (copies, list and pattern layouts, `[derive]`,
//! windows, block libraries), a file that does not exist, and a no-panic sweep over mutated
//! and hostile texts.
//!
//! Each error class (message, `path:line:col`, help) is a case file under `tests/cases/`,
//! run by `cases.rs`.

use std::path::{Path, PathBuf};

mod common;

use common::{TempDir, check, loads, only};
use metrale_circuit::StateKind;
use metrale_circuit::dynamic::{
    Position,
    decl::{Reach, Section},
};
use metrale_circuit::load::{Circuit, circuit::LayerRule};
use metrale_circuit::load::{CircuitSource, load};

const QWEN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../circuits/qwen3_5.toml");

/// A minimal valid circuit: one interval layout of period 1, one checkpoint, block `b` with
/// one recurrent state `s` (its header at line 12).
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
id = "s"
kind = "recurrent"
format = "f32"
shape = "d"
verify = "h_steps"
"#;

/// The keys of [`BASE`]'s state, for circuits that declare it again.
const STATE: &str =
    "id = \"s\"\nkind = \"recurrent\"\nformat = \"f32\"\nshape = \"d\"\nverify = \"h_steps\"\n";

/// [`BASE`] with `from` replaced by `to` (which must occur).
fn edit(from: &str, to: &str) -> String {
    assert!(BASE.contains(from), "`{from}` is not in the circuit");
    BASE.replacen(from, to, 1)
}

/// [`BASE`] read through the loader as `circ/c.toml`, with `includes` and its block moved
/// to the libraries of `dir`.
fn load_including(includes: &str, dir: &Path) -> Circuit {
    let text = edit(
        "schema = 1\n",
        &format!("schema = 1\ninclude = {includes}\n"),
    );
    let text = &text[..text.find("[[block.b.state]]").expect("the state")];
    load(CircuitSource::Text {
        name: "circ/c.toml",
        text,
        dir: Some(dir),
    })
    .circuit
    .unwrap_or_else(|e| panic!("{e}"))
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
        .map(metrale_circuit::load::circuit::BlockTemplate::name)
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
    assert_eq!(*c.layout().rule(), LayerRule::Interval { period: 4 });
    assert_eq!(c.layout().blocks_of("full_attention"), ["attn", "ffn"]);
    assert_eq!(c.layout().blocks_of("linear_attention"), ["gdn", "ffn"]);
    let checkpoints: Vec<&str> = c
        .checkpoints()
        .iter()
        .map(metrale_circuit::load::CheckpointSpec::name)
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
    assert_eq!(get("draft.attn.k").section(), Section::Draft);
    assert_eq!(get("l3.attn.k").section(), Section::Main);
    // Each declaration carries its block instance's model position (`head` is the epilogue).
    assert_eq!(get("l3.attn.k").position, Position::Layer(3));
    assert_eq!(get("draft.attn.k").position, Position::Draft);
    assert_eq!(get("head.prefix_hidden").position, Position::Epilogue);
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
    let c = load(CircuitSource::File {
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
    let c = load(CircuitSource::Text {
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
// What valid circuits load to.
// ---------------------------------------------------------------------------------------------

#[test]
fn base_circuit_is_valid() {
    assert!(BASE.ends_with(STATE));
    let c = loads(BASE);
    assert_eq!(c.blocks()[0].states()[0].origin().line, 12);
    assert_eq!(c.instantiate("c").unwrap()[0].id, "l0.b.s");
    // Schema 2 reads every schema-1 circuit as it is.
    loads(&edit("schema = 1", "schema = 2"));
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
fn accepted_block_and_node_keys() {
    loads(&format!(
        "{BASE}[block.b]\nstream_in = 1\nstream_out = [\"y\"]\noutputs = {{ a = 1 }}\n\
         [[block.b.node]]\nid = 3\nop = \"x\"\nin = []\nout = [1]\nbinding = true\nrole = 2.5\n\
         state = {{ s = \"update\" }}\n"
    ));
}

#[test]
fn copy_is_valid() {
    let c = loads(&format!(
        "{BASE}[[block.b.state]]\nid = \"p\"\nkind = \"ring_snapshot\"\nformat = \"f32\"\nof = \"s\"\n"
    ));
    let decls = c.instantiate("c").unwrap();
    assert_eq!(decls[1].of.as_deref(), Some("l0.b.s"));
    assert_eq!(decls[1].elements, 2);
}

#[test]
fn list_layout_loads() {
    let c = loads(
        &edit("kind = \"interval\"\nperiod = 1\n", "kind = \"list\"\n").replacen(
            "layers = 1",
            "layer_kinds = [\"full_attention\", \"full_attention\"]",
            1,
        ),
    );
    assert_eq!(*c.layout().rule(), LayerRule::List);
    assert_eq!(c.instantiate("c").unwrap().len(), 2);
}

#[test]
fn block_without_nodes_declares_state_only() {
    // A KV side nobody writes or reads is fine when the block has no nodes at all.
    loads(
        &edit("kind = \"recurrent\"", "kind = \"paged_kv\"").replacen(
            "verify = \"h_steps\"\n",
            "",
            1,
        ),
    );
}

#[test]
fn a_block_without_state_or_named_lm_head_may_be_a_prologue_block() {
    // `arena` is a plan field, but a block without state has no field; `lm_head` is no
    // layer's field (the names that are taken: `tests/cases/names/`).
    loads(&edit(
        "dims = [\"d\"]\n",
        "dims = [\"d\"]\nprologue = [\"arena\"]\n[block.arena]\nstream_in = \"x\"\n",
    ));
    loads(&format!(
        "{}[[block.lm_head.state]]\n{STATE}",
        edit(
            "dims = [\"d\"]\n",
            "dims = [\"d\"]\nprologue = [\"lm_head\"]\n"
        )
    ));
}

#[test]
fn derived_dims_are_read_by_shapes_and_by_each_other() {
    // d = 2: w = 1, v = 2 (v is written first and reads w: the order is computed).
    let text = edit("schema = 1", "schema = 2")
        .replacen(
            "dims = [\"d\"]\n",
            "dims = [\"d\"]\n[derive]\nv = \"w * 2\"\nw = \"d - 1\"\n",
            1,
        )
        .replacen("shape = \"d\"", "shape = \"v x w\"", 1);
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

/// A schema-2 pattern circuit (`M` is `mamba`, `-` is `mlp`, both kinds block `b`):
/// `layout` is one line of `[layout]` (may be empty), `checkpoint` the keys of
/// `[checkpoint.c]` besides `dims`.
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
        LayerRule::Pattern {
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
fn a_kv_side_keeps_a_window() {
    let c = loads(
        &edit("schema = 1", "schema = 2")
            .replacen("kind = \"recurrent\"", "kind = \"paged_kv\"", 1)
            .replacen("verify = \"h_steps\"", "window = \"d * 64\"", 1),
    );
    assert_eq!(
        c.blocks()[0].states()[0]
            .reach()
            .map(|r| r.map(ToString::to_string)),
        Some(Reach::Window("d * 64".to_owned()))
    );
    assert_eq!(
        c.instantiate("c").unwrap()[0].reach,
        Some(Reach::Window(128))
    );
}

#[test]
fn a_kv_side_keeps_a_chunk_in_schema_3() {
    let chunked = |schema: &str| {
        edit("schema = 1", schema)
            .replacen("kind = \"recurrent\"", "kind = \"paged_kv\"", 1)
            .replacen("verify = \"h_steps\"", "chunk = \"d * 64\"", 1)
    };
    let c = loads(&chunked("schema = 3"));
    assert_eq!(
        c.instantiate("c").unwrap()[0].reach,
        Some(Reach::Chunk(128))
    );
    // Schema 2 has no `chunk`: located at its value, with the fix.
    let d = only(&chunked("schema = 2"));
    assert_eq!(d.message, "`chunk` needs `schema = 3`");
    assert_eq!(d.help, ["write `schema = 3` at the top of the circuit"]);
    // Not both.
    let both = chunked("schema = 3").replacen("chunk = ", "window = \"d\"\nchunk = ", 1);
    assert_eq!(only(&both).message, "a state has both `window` and `chunk`");
}

#[test]
fn a_reader_may_read_layer_0() {
    // Layer 0 is named by the literal `0`, as by an expression giving 0.
    let circuit = |layer: &str| {
        format!(
            r#"schema = 3
arch = "t"
dims = ["d"]
[layout]
kind = "pattern"
pattern = "ARR"
[layout.symbols]
A = "attention"
R = "reader"
[layout.blocks]
attention = ["attn"]
reader = ["shared"]
[checkpoint.c]
layers = 3
dims = {{ d = 2 }}
[[block.attn.state]]
id = "k"
kind = "paged_kv"
format = "f32"
shape = "d"
[[block.shared.state]]
id = "k"
kind = "paged_kv"
shares = {{ state = "attn.k", layer = "{layer}" }}
"#
        )
    };
    for layer in ["0", "d - 2", "0 * d + 0"] {
        let c = loads(&circuit(layer));
        let decls = c.instantiate("c").unwrap();
        let owners: Vec<Option<&str>> = decls.iter().map(|d| d.shares.as_deref()).collect();
        assert_eq!(
            owners,
            [None, Some("l0.attn.k"), Some("l0.attn.k")],
            "{layer}"
        );
    }
    // A shape still refuses a literal 0: a factor of 0 empties every unit.
    let d = only(&circuit("0").replacen("shape = \"d\"", "shape = \"d * 0\"", 1));
    check(
        &d,
        "invalid shape: integer literal must be > 0",
        "c.toml:20:14",
        &["a factor of 0 would make every unit of the state empty"],
    );
}

// ---------------------------------------------------------------------------------------------
// Block libraries.
// ---------------------------------------------------------------------------------------------

#[test]
fn library_blocks_are_loaded() {
    let dir = TempDir::new("ok");
    let lib = dir.write("blocks/lib.toml", &format!("[[block.b.state]]\n{STATE}"));
    let c = load_including("[\"lib\"]", &dir);
    assert_eq!(c.files()[1].name(), "circ/blocks/lib.toml");
    assert_eq!(c.read(), [lib]);
    assert_eq!(c.block("b").unwrap().origin().path, "circ/blocks/lib.toml");
    assert_eq!(c.block("b").unwrap().states()[0].origin().line, 1);
}

#[test]
fn diamond_include_reads_once() {
    let dir = TempDir::new("diamond");
    dir.write("blocks/a.toml", "include = [\"shared\"]\n");
    dir.write("blocks/shared.toml", &format!("[[block.b.state]]\n{STATE}"));
    let c = load_including("[\"a\", \"shared\"]", &dir);
    let names: Vec<&str> = c
        .files()
        .iter()
        .map(metrale_circuit::load::diag::Source::name)
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
        if load(CircuitSource::Text {
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
        let _ = load(CircuitSource::Text {
            name: "h.toml",
            text,
            dir: Some(Path::new("/nonexistent")),
        })
        .circuit;
        let circuit = BASE;
        for (i, _) in circuit.char_indices().step_by(3) {
            let spliced = format!("{}{text}{}", &circuit[..i], &circuit[i..]);
            let _ = load(CircuitSource::Text {
                name: "h.toml",
                text: &spliced,
                dir: Some(Path::new("/nonexistent")),
            })
            .circuit;
        }
    }
}
