//! Speed of plans and of code generation (`cargo bench -p metrale-tests --bench plan`).
//!
//! - `plan/generated`: the generated `DynamicPlan::new` of Qwen3.5-27B with every cache, from
//!   run-time inputs (the module this crate's `build.rs` generates through
//!   `metrale_codegen::Builder`, as a user's crate does; the golden test keeps the checked-in
//!   golden equal to it);
//! - `plan/generated_rank`: the generated `DynamicPlan::for_rank` of the same checkpoint and
//!   inputs, for rank (tp 1, pp 1) of tp 4 x pp 2 (a rank's dims, and a pass over the table
//!   for what its stage holds);
//! - `plan/dynamic`: the dynamic `DynamicPlan::new` on already instantiated declarations;
//! - `plan/dynamic_load`: load + instantiate + dynamic plan;
//! - `plan/copy` and `plan/store`: producing the plan's 21 KB with nothing computed (a copy of
//!   a finished plan; the same number of regions stored from one value), for scale;
//! - `codegen/<circuit>`: load + emit + format of each real circuit;
//! - `codegen/synthetic/<layers>`: the same on synthetic circuits of 128 to 1024 layers.
//!
//! `scripts/bench_ratios.py` prints the ratios the targets are stated in (BENCHMARKS.md).
//!
//! The bench lives in this unpublished crate, not in metrale-codegen, because it compiles a
//! generated module: here that module comes from this crate's own build output, so nothing
//! outside the crate is `include!`d; the circuits are read at run time from the workspace.

#![allow(
    missing_docs,
    reason = "criterion's macros generate undocumented items"
)]

use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{BenchmarkId, Criterion, criterion_group, criterion_main};
use metrale_circuit::dynamic::DynamicPlan;
use metrale_circuit::load::Circuit;
use metrale_circuit::{StateDtype, StateInputs, VerifyInputs};
use metrale_codegen::{Options, generate};
// Every cache and the KV blocks of a speculative, prefix-cached serve (the CLI's default inputs).
use metrale_tests::{SERVE_CACHES as CACHES, SERVE_KV as KV, qwen3_5};

const H_STEPS: [u64; 9] = [4; 9];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn plans(c: &mut Criterion) {
    let formats = qwen3_5::Formats {
        ssm_h_storage: StateDtype::F32,
        ssm_conv_storage: StateDtype::Bf16,
        kv_cache_dtype: StateDtype::Fp8,
    };
    let inputs = qwen3_5::Inputs {
        formats,
        slots: 9,
        verify: Some(VerifyInputs {
            h_steps: metrale_circuit::inputs::HSteps::PerSlot(&H_STEPS),
            conv_steps: 4,
        }),
        kv: KV,
        draft_kv: KV,
        draft_kv_dtype: None,
        caches: CACHES,
        pool: metrale_circuit::serving::PoolPolicy::Arenas,
    };
    let pairs = formats.pairs();
    let state_inputs = StateInputs {
        formats: &pairs,
        ..inputs.state_inputs()
    };
    let path = root().join("circuits/qwen3_5.toml");
    let decls = Circuit::load(&path)
        .and_then(|c| c.instantiate("qwen3_5_27b").map_err(Into::into))
        .unwrap_or_else(|e| panic!("{e}"));

    let mut group = c.benchmark_group("plan");
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(3));
    group.bench_function("generated", |b| {
        // Each plan is kept by reference (`black_box(&plan)`), as an engine keeps it where it
        // built it: the whole plan is materialised, and no extra copy of it is timed.
        b.iter(|| {
            let plan = qwen3_5::qwen3_5_27b::StatePlan::new(
                black_box(&qwen3_5::qwen3_5_27b::DIMS),
                black_box(&inputs),
                black_box(256),
            );
            black_box(&plan);
        });
    });
    group.bench_function("generated_rank", |b| {
        let parallel = metrale_circuit::parallel::Parallel {
            tp: 4,
            pp: 2,
            pp_layers: None,
        };
        let rank = metrale_circuit::parallel::Rank { tp: 1, pp: 1 };
        b.iter(|| {
            let plan = qwen3_5::qwen3_5_27b::StatePlan::for_rank(
                black_box(&qwen3_5::qwen3_5_27b::DIMS),
                black_box(&inputs),
                black_box(256),
                black_box(&parallel),
                black_box(rank),
            );
            black_box(&plan);
        });
    });
    // What producing the plan's 21 KB costs with nothing computed: copying a finished plan
    // into a fresh one, and storing the same number of regions from one value.
    let built = qwen3_5::qwen3_5_27b::StatePlan::new(&qwen3_5::qwen3_5_27b::DIMS, &inputs, 256)
        .unwrap_or_else(|e| panic!("{e:?}"));
    group.bench_function("copy", |b| {
        b.iter(|| {
            let plan = *black_box(&built);
            black_box(&plan);
        });
    });
    group.bench_function("store", |b| {
        b.iter(|| {
            let region = metrale_circuit::Region {
                offset: black_box(256),
                ..metrale_circuit::Region::EMPTY
            };
            #[allow(
                clippy::large_stack_arrays,
                reason = "the plan's 21 KB on the stack, as `plan/generated` returns it"
            )]
            let regions = [region; qwen3_5::qwen3_5_27b::TERM_COUNT];
            black_box(&regions);
        });
    });
    group.bench_function("dynamic", |b| {
        b.iter(|| {
            let plan =
                DynamicPlan::new(black_box(&decls), black_box(&state_inputs), black_box(256));
            black_box(&plan);
        });
    });
    group.bench_function("dynamic_load", |b| {
        b.iter(|| {
            let circuit = Circuit::load(black_box(&path)).unwrap_or_else(|e| panic!("{e}"));
            let decls = circuit
                .instantiate("qwen3_5_27b")
                .unwrap_or_else(|e| panic!("{e}"));
            let plan = DynamicPlan::new(&decls, black_box(&state_inputs), 256);
            black_box(&plan);
        });
    });
    group.finish();
}

/// A circuit of `layers` layers: three recurrent layers then one attention layer, repeating.
fn synthetic(layers: usize) -> String {
    format!(
        r#"schema = 1
arch = "synthetic"
dims = ["heads", "head_dim"]

[layout]
kind = "interval"
period = 4

[layout.blocks]
linear_attention = ["mix"]
full_attention = ["attn"]

[[block.mix.state]]
id = "h"
kind = "recurrent"
format = "{{h}}"
shape = "heads x head_dim x head_dim"
verify = "h_steps"

[[block.mix.state]]
id = "h_prefix"
kind = "prefix_snapshot"
format = "{{h}}"
of = "h"

[[block.attn.state]]
id = "k"
kind = "paged_kv"
format = "{{kv}}"
shape = "heads x head_dim"

[[block.attn.state]]
id = "v"
kind = "paged_kv"
format = "{{kv}}"
shape = "heads x head_dim"

[checkpoint.c]
layers = {layers}
dims = {{ heads = 4, head_dim = 64 }}
"#
    )
}

fn codegen(c: &mut Criterion) {
    let mut group = c.benchmark_group("codegen");
    group.sample_size(10);
    group.warm_up_time(Duration::from_secs(1));
    group.measurement_time(Duration::from_secs(4));
    let options = Options::default();
    let mut circuits: Vec<PathBuf> = std::fs::read_dir(root().join("circuits"))
        .map(|dir| dir.filter_map(Result::ok).map(|e| e.path()).collect())
        .unwrap_or_default();
    circuits.retain(|path| path.extension().is_some_and(|ext| ext == "toml"));
    circuits.sort();
    for path in circuits {
        let name = path
            .file_stem()
            .map(|stem| stem.to_string_lossy().into_owned())
            .unwrap_or_default();
        group.bench_function(name, |b| {
            b.iter(|| {
                let loaded = Circuit::load(black_box(&path)).unwrap_or_else(|e| panic!("{e}"));
                generate(&loaded, &options).unwrap_or_else(|e| panic!("{e}"))
            });
        });
    }
    for layers in [128, 256, 512, 1024] {
        let text = synthetic(layers);
        group.bench_with_input(BenchmarkId::new("synthetic", layers), &text, |b, text| {
            b.iter(|| {
                let loaded =
                    metrale_circuit::load::load(metrale_circuit::load::CircuitSource::Text {
                        name: "synthetic.toml",
                        text: black_box(text),
                        dir: None,
                    })
                    .circuit
                    .unwrap_or_else(|e| panic!("{e}"));
                generate(&loaded, &options).unwrap_or_else(|e| panic!("{e}"))
            });
        });
    }
    group.finish();
}

criterion_group!(benches, plans, codegen);
criterion_main!(benches);
