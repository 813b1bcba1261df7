//! Tensor- and pipeline-parallel ranks of real circuits (issue 12's dynamic half): a rank's
//! dims, layers and states, checked by hand against the checkpoints' published figures; the
//! `tensor_parallel` key's errors; the inputs file's `[parallel]` table.

mod common;

use common::{errors, place};
use metrale_circuit::dynamic::decl::StateDecl;
use metrale_circuit::load::{Circuit, InputsFile};
use metrale_circuit::parallel::{Parallel, Position, Rank};

fn circuit(arch: &str) -> Circuit {
    Circuit::load(format!(
        "{}/../circuits/{arch}.toml",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap_or_else(|e| panic!("{e}"))
}

fn at(tp: u64, pp: u64) -> Parallel<'static> {
    Parallel {
        tp,
        pp,
        pp_layers: None,
    }
}

fn decl<'a>(decls: &'a [StateDecl], id: &str) -> &'a StateDecl {
    decls
        .iter()
        .find(|d| d.id == id)
        .unwrap_or_else(|| panic!("no {id}"))
}

#[test]
fn qwen3_next_at_tp_4_keeps_one_kv_head_and_a_quarter_of_the_gdn_heads() {
    // Qwen3-Next-80B-A3B: 2 KV heads of 256, 16 key and 32 value GDN heads of 128
    // (circuits/configs/qwen3_next_80b_a3b.json). Layer 3 is full attention, layer 0 GDN.
    let c = circuit("qwen3_next");
    let one = c.instantiate("qwen3_next_80b_a3b").unwrap();
    let four = c
        .instantiate_rank("qwen3_next_80b_a3b", &at(4, 1), Rank { tp: 3, pp: 0 })
        .unwrap();
    assert_eq!(decl(&one, "l3.attn.k").elements, 2 * 256);
    // 2 KV heads over 4 ranks: replicated, one head each.
    assert_eq!(decl(&four, "l3.attn.k").elements, 256);
    // h: 32 / 4 = 8 value heads x 128 x 128.
    assert_eq!(decl(&four, "l0.gdn.h").elements, 8 * 128 * 128);
    // conv: 3 rows x (4 key heads x 128 x 2 + 8 value heads x 128) channels.
    assert_eq!(
        decl(&four, "l0.gdn.conv").elements,
        3 * (4 * 128 * 2 + 8 * 128)
    );
    assert_eq!(
        one.len(),
        four.len(),
        "every rank holds every layer at pp 1"
    );
}

#[test]
fn kv_over_a_tp_group_exceeds_one_gpu_exactly_when_heads_are_replicated() {
    let c = circuit("qwen3_next");
    let kv = |tp: u64| -> u64 {
        let decls = c
            .instantiate_rank("qwen3_next_80b_a3b", &at(tp, 1), Rank { tp: 0, pp: 0 })
            .unwrap();
        let per_rank: u64 = decls
            .iter()
            .filter(|d| d.kind == metrale_circuit::StateKind::PagedKv)
            .map(|d| d.elements)
            .sum();
        per_rank * tp
    };
    // 2 KV heads: split at tp 2 (the group holds what one GPU does), replicated at tp 4 and 8.
    assert_eq!(kv(2), kv(1));
    assert_eq!(kv(4), 2 * kv(1));
    assert_eq!(kv(8), 4 * kv(1));
}

#[test]
fn a_dim_that_does_not_split_is_named() {
    // 16 query heads over 3 ranks: 3 neither divides 16 nor is a multiple of it.
    let c = circuit("qwen3_next");
    let e = c
        .instantiate_rank("qwen3_next_80b_a3b", &at(3, 1), Rank::default())
        .unwrap_err();
    assert_eq!(
        e.message,
        "checkpoint `qwen3_next_80b_a3b` at tp 3 x pp 1: dim `q_heads` = 16 does not split over \
         3 tensor-parallel ranks: 3 neither divides 16 nor is a multiple of it"
    );
}

#[test]
fn pipeline_ranks_hold_their_layers_and_the_ends() {
    // Nemotron-H-47B: 98 layers over 2 ranks, 49 each; the prologue on rank 0 (it keeps no
    // state here), the epilogue's stashed hidden row on the last.
    let c = circuit("nemotron_h");
    let rank = |pp: u64| {
        c.instantiate_rank("nemotron_h_47b", &at(1, 2), Rank { tp: 0, pp })
            .unwrap()
    };
    let layers = |decls: &[StateDecl]| {
        let held: Vec<u64> = decls.iter().filter_map(|d| d.position.layer()).collect();
        (held.iter().min().copied(), held.iter().max().copied())
    };
    let (first, last) = (rank(0), rank(1));
    assert!(layers(&first).1.unwrap() < 49);
    assert!(layers(&last).0.unwrap() >= 49);
    let all = c.instantiate("nemotron_h_47b").unwrap();
    let outside = |decls: &[StateDecl]| {
        decls
            .iter()
            .filter(|d| matches!(d.position, Position::Prologue | Position::Epilogue))
            .count()
    };
    assert_eq!(outside(&first), 0, "the epilogue is on the last rank");
    assert_eq!(outside(&last), outside(&all));
    assert_eq!(first.len() + last.len(), all.len());
    // Ids keep the model's layer indices: the last stateful layer is the model's.
    let top = layers(&all).1.unwrap();
    assert!(top >= 49 && last.iter().any(|d| d.id.starts_with(&format!("l{top}."))));
}

#[test]
fn pipeline_errors_are_named() {
    let c = circuit("llama");
    let more = c
        .instantiate_rank("llama_3_1_8b", &at(1, 33), Rank::default())
        .unwrap_err();
    assert!(
        more.message
            .ends_with("33 pipeline-parallel ranks for 32 layers: a rank would hold no layer"),
        "{}",
        more.message
    );
    let given = Parallel {
        tp: 1,
        pp: 2,
        pp_layers: Some(&[10, 20]),
    };
    let sum = c
        .instantiate_rank("llama_3_1_8b", &given, Rank::default())
        .unwrap_err();
    assert!(
        sum.message.ends_with(
            "`pp_layers` gives 2 counts summing to 30, but the plan has 2 pipeline-parallel \
             ranks and 32 layers (each count at least 1)"
        ),
        "{}",
        sum.message
    );
    let fits = Parallel {
        pp_layers: Some(&[10, 22]),
        ..given
    };
    let last = c
        .instantiate_rank("llama_3_1_8b", &fits, Rank { tp: 0, pp: 1 })
        .unwrap();
    assert_eq!(
        last.iter().filter_map(|d| d.position.layer()).min(),
        Some(10)
    );
}

const TP_BASE: &str = "schema = 2\narch = \"t\"\ndims = [\"d\", \"e\"]\n[derive]\nf = \"d + 1\"\n\
[layout]\nkind = \"interval\"\nperiod = 1\n[layout.blocks]\nfull_attention = [\"b\"]\n\
[checkpoint.c]\nlayers = 1\ndims = { d = 2, e = 4 }\n[[block.b.state]]\nid = \"k\"\n\
kind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"d x f\"\n";

#[test]
fn tensor_parallel_names_declared_dims_once() {
    let with = |list: &str| format!("tensor_parallel = [{list}]\n{TP_BASE}");
    let all = errors(&with("\"d\", \"dd\", \"f\", \"d\""));
    let messages: Vec<&str> = all.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "unknown dim `dd` in `tensor_parallel`",
            "derived dim `f` cannot be in `tensor_parallel`",
            "dim `d` is named twice in `tensor_parallel`",
        ]
    );
    assert_eq!(place(&all[0]), "c.toml:1:25");
    let schema_1 = errors(&with("\"d\"").replace("schema = 2", "schema = 1"));
    assert!(
        schema_1
            .iter()
            .any(|d| d.message == "`tensor_parallel` needs `schema = 2`")
    );
    // A derived dim follows the rank's dims: f = d + 1 with d = 2 / 2 = 1.
    let c = common::loads(&with("\"d\""));
    let dims = c.rank_dims(&c.checkpoints()[0], 2).unwrap();
    assert_eq!(
        dims,
        [
            ("d".to_owned(), 1),
            ("e".to_owned(), 4),
            ("f".to_owned(), 2)
        ]
    );
}

#[test]
fn a_dim_a_derived_dim_divides_by_is_not_tensor_parallel() {
    // docs/circuit-schema.md: a rank's share of a divisor would widen the derived dim (at tp 2
    // each rank held the whole `g`: 4 / (2 / 2) = 4), so the loader refuses it, at the entry;
    // also through a derived divisor that reads it, at any depth. A dim only multiplied stays.
    let text = |derive: &str| {
        format!("tensor_parallel = [\"e\", \"d\"]\n{TP_BASE}").replace("f = \"d + 1\"", derive)
    };
    let direct = errors(&text("f = \"d + 1\"\ng = \"e / d\""));
    assert_eq!(direct.len(), 1, "{direct:?}");
    assert_eq!(
        direct[0].message,
        "dim `d` cannot be in `tensor_parallel`: derived dim `g` divides by it"
    );
    assert_eq!(place(&direct[0]), "c.toml:1:25");
    assert_eq!(direct[0].notes, ["`g = \"e / d\"` at c.toml:7:5"]);
    let through = errors(&text("f = \"d + 1\"\nh = \"f * 2\"\ng = \"e / h\""));
    let messages: Vec<&str> = through.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        ["dim `d` cannot be in `tensor_parallel`: derived dim `g` divides by it"]
    );
    assert_eq!(
        through[0].notes[1],
        "it divides by `h`, which reads `d`: `h = \"f * 2\"`"
    );
    // A cycle through a divisor is reported as a cycle, and the divisor still found.
    let cycle = errors(&text("f = \"d + 1\"\ng = \"e / h\"\nh = \"g + d\""));
    let messages: Vec<&str> = cycle.iter().map(|d| d.message.as_str()).collect();
    assert!(
        messages.contains(&"dim `d` cannot be in `tensor_parallel`: derived dim `g` divides by it"),
        "{messages:?}"
    );
    assert!(
        messages.iter().any(|m| m.ends_with("depends on itself")),
        "{messages:?}"
    );
    // Dividing by a literal or by a dim not listed, and reading a listed dim, are allowed.
    common::loads(&text("f = \"d / 2 + e / 2\""));
    let unlisted = format!("tensor_parallel = [\"d\"]\n{TP_BASE}")
        .replace("f = \"d + 1\"", "f = \"d + 1\"\ng = \"d / e\"");
    common::loads(&unlisted);
}

#[test]
fn the_inputs_file_gives_the_parallel_sizes() {
    let base = "slots = 2\n";
    let file = InputsFile::parse("i.toml", base).unwrap();
    assert_eq!(file.parallel.parallel(), Parallel::SINGLE);
    let file = InputsFile::parse(
        "i.toml",
        &format!("{base}[parallel]\ntp = 4\npp = 2\npp_layers = [20, 28]\n"),
    )
    .unwrap();
    assert_eq!(
        file.parallel.parallel(),
        Parallel {
            tp: 4,
            pp: 2,
            pp_layers: Some(&[20, 28])
        }
    );
    let bad = InputsFile::parse(
        "i.toml",
        &format!("{base}[parallel]\ntp = 0\npp = 2\npp_layers = [48]\nxp = 1\n"),
    )
    .unwrap_err();
    let messages: Vec<&str> = bad.iter().map(|d| d.message.as_str()).collect();
    assert_eq!(
        messages,
        [
            "`parallel.tp` must be at least 1",
            "`parallel.pp_layers` has 1 counts for pp = 2",
            "unknown key `xp` in `parallel`",
        ]
    );
}

#[test]
fn a_derived_dim_below_zero_on_a_rank_is_named() {
    // f = d - 2: 2 on one GPU, 1 - 2 on one of 4 ranks (d = 4 / 4).
    let text = format!("tensor_parallel = [\"d\"]\n{TP_BASE}")
        .replace("f = \"d + 1\"", "f = \"d - 2\"")
        .replace("d = 2, e = 4", "d = 4, e = 4");
    let c = common::loads(&text);
    let error = c.rank_dims(&c.checkpoints()[0], 4).unwrap_err();
    assert_eq!(
        error.to_string(),
        "derived dim `f` cannot be computed on one of 4 tensor-parallel ranks: `d - 2` is below \
         zero"
    );
}
