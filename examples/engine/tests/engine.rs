//! The worked engine end to end: on the `tiny` checkpoints of three circuits of different
//! shapes (Qwen3.5: Gated `DeltaNet` with verify and every cache; Nemotron-H: a Mamba2 pattern;
//! gpt-oss: sliding-window attention) every tag reads back intact, with the figures worked by
//! hand below, every KV side on the runtime's allocator and every unit written where its
//! shape's strides put it; two units made to alias on purpose are caught by the tag check; and
//! the binary prints its report and exits 0, 1 or 2.
//!
//! Each run stays small: a 16 MiB device budget (8 MiB for the faults), so every unit of
//! every arena is written and read back in a second or two.

use std::path::{Path, PathBuf};
use std::process::Command;

use clap::Parser;
use metrale_engine::run::h_steps;
use metrale_engine::{Args, Found, Layout, Report, Setup, run, serve};

/// The workspace root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `engine <circuit> --checkpoint tiny --budget <budget> --inputs serving.toml <extra>`.
fn args(circuit: &str, budget: &str, extra: &[&str]) -> Args {
    let circuit = root().join("circuits").join(circuit);
    let inputs = root().join("metrale-codegen/cli/inputs/serving.toml");
    let mut argv: Vec<String> = ["engine", &circuit.to_string_lossy(), "--checkpoint", "tiny"]
        .into_iter()
        .map(str::to_owned)
        .collect();
    argv.extend(["--budget".to_owned(), budget.to_owned()]);
    argv.extend(["--inputs".to_owned(), inputs.to_string_lossy().into_owned()]);
    argv.extend(extra.iter().map(|s| (*s).to_owned()));
    Args::try_parse_from(argv).expect("the command line parses")
}

fn served(circuit: &str) -> Report {
    let report = run(&args(circuit, "16MiB", &[])).expect("the run reaches its end");
    assert!(report.intact(), "{report}");
    assert!(
        report.to_string().ends_with(&format!(
            "every tag intact: {} units checked\n",
            report.tags.checked
        )),
        "{report}"
    );
    // Every unit of every term was formatted, and every one read back.
    assert_eq!(report.tags.checked, report.operations.formatted);
    let fit = report.fit;
    assert!(fit.device_bytes <= report.budget, "{report}");
    assert!(
        fit.next_device_bytes
            .is_some_and(|next| next > report.budget)
    );
    assert_eq!(report.device_bytes, fit.device_bytes);
    // The padding dummy is never handed out: the pool refuses with S slots held.
    assert_eq!(report.slots, fit.value + 1);
    assert_eq!(report.operations.refused, 1);
    assert_eq!(report.operations.released, report.operations.claimed);
    assert_eq!(
        report.operations.blocks_freed,
        report.operations.blocks_allocated
    );
    report
}

/// The report's unit shapes, as printed.
fn shapes(report: &Report) -> Vec<String> {
    report.shapes.iter().map(ToString::to_string).collect()
}

#[test]
fn qwen3_5_gated_deltanet_with_verify_and_caches() {
    let report = served("qwen3_5.toml");
    let ops = report.operations;
    // By hand, under serving.toml (fp8 KV, f32 h, bf16 conv; K = 4, 2 prefix snapshots and a
    // 4-deep ring per sequence, carry, 16-node trees, 4096 capture rows, 8192 lookup tokens)
    // at 4096 tokens per sequence: one sequence adds 502,368 term bytes (six GDN layers of
    // 18,016: h 1,024 x (1 + 4 + 1 + 2 + 4 + 1 carry), conv 384 x (1 + 4 + 1 + 2 + 4), a carry
    // row of 32, four WY rows of 16; the head's 1,056; 6 KV sides x 4096 tokens x 16 B), so
    // 16 MiB holds 32 sequences.
    assert_eq!(report.fit.value, 32);
    // At 32: 6 x 591,712 (the GDN layers) + 558,880 (the head: 64 prefix rows, 132 accepted
    // rows, 4096 captured rows of 128 B, 33 trees of 256 cells, 132 drafts of 8 B) +
    // 6 x 8192 blocks x 16 tokens x 16 B = 16,692,064 term bytes, 16,696,320 with padding.
    assert_eq!(report.device_bytes, 16_696_320);
    // The host arena is the prompt-lookup index: 32 tables of 16,384 buckets x 9 B + 16.
    assert_eq!(report.host_bytes, 32 * 147_472);
    // Units: 6 x 986 (the GDN layers' slots, rows and snapshots) + 12,872 (the head's) +
    // 6 x 131,072 tokens + 32 lookup tables.
    assert_eq!(report.tags.checked, 805_252);
    assert_eq!(report.terms, 90);
    // h is [lin_v_heads, lin_k_dim, lin_v_dim], conv [conv_window, channels]; every term is
    // addressed by element but the prompt-lookup index, whose entries are hashed.
    assert_eq!(
        shapes(&report),
        [
            "h [4, 8, 8] f32",
            "conv [3, 64] bf16",
            "k [1, 16] fp8",
            "v [1, 16] fp8"
        ]
    );
    assert_eq!(report.shaped_terms, 89);
    // Every sequence's 4096 tokens on 6 sides in blocks of 16, and the restored sequence's
    // prefix again (4081-token prompt + 5 decode steps: 256 blocks).
    assert_eq!(ops.blocks_allocated, 6 * (32 * 256 + 256));
    assert_eq!(ops.tokens, 32 * 4096 + 4086);
    // 5 rounds of verifies; each sequence accepts 0, 1, 2, 3 and 4 rows once.
    assert_eq!(ops.verifies, 5 * 32);
    assert_eq!(ops.rollbacks_to_checkpoint, 32);
    assert_eq!(ops.rollbacks_to_row, 4 * 32);
    assert_eq!(ops.accepted_rows, 10 * 32);
    assert_eq!((ops.prefix_snapshots, ops.prefix_restores), (1, 1));
    // 5 decode steps x 32 sequences x 12 ring states (h and conv of 6 GDN layers).
    assert_eq!(ops.ring_copies, 5 * 32 * 12);
    assert_eq!(ops.padding_writes, 5);
    assert!(report.windows.is_empty());
}

#[test]
fn nemotron_h_mamba2_pattern() {
    let report = served("nemotron_h.toml");
    let ops = report.operations;
    // `M-*-M-`: two Mamba2 layers (h: 4 x 8 x 16 f32 = 2,048 B; conv: 3 x (32 + 2 x 2 x 16)
    // bf16 = 576 B) and one attention layer (2 sides of 2 x 16 fp8 = 32 B a token).
    assert_eq!(report.fit.value, 51);
    assert_eq!(report.terms, 23);
    assert_eq!(report.kv_sides, 2);
    assert_eq!(
        shapes(&report),
        [
            "h [4, 8, 16] f32",
            "conv [3, 96] bf16",
            "k [2, 16] fp8",
            "v [2, 16] fp8"
        ]
    );
    assert_eq!(report.shaped_terms, 23);
    // 2 sides x 13,056 blocks x 16 tokens x 32 B + 2 Mamba2 layers x 1,632,128 + 102 prefix
    // hidden rows x 128 B = 16,646,656 term bytes, and 2 x 128 B of padding after the conv
    // prefix snapshots (102 x 576 B).
    assert_eq!(report.device_bytes, 16_646_912);
    assert_eq!(report.host_bytes, 0);
    assert_eq!(ops.blocks_allocated, 2 * (51 * 256 + 256));
    assert_eq!(ops.rollbacks_to_checkpoint, 51);
    assert_eq!(ops.rollbacks_to_row, 4 * 51);
    // 5 steps x 51 sequences x 4 ring states (h and conv of 2 layers).
    assert_eq!(ops.ring_copies, 5 * 51 * 4);
    assert_eq!((ops.prefix_snapshots, ops.prefix_restores), (1, 1));
}

#[test]
fn gpt_oss_sliding_window_sides_are_rings() {
    let report = served("gpt_oss.toml");
    let ops = report.operations;
    // 21 sequences: a full side holds ceil(21 x 4096 / 16) = 5,376 blocks; a sliding side
    // (W = 16, chunks of 2048) ceil(min(15 + 2048, 4096) / 16) + 1 = 130 per sequence, 2,730;
    // 16-token blocks of 32 B tokens: 4 x 2,752,512 + 4 x 1,397,760.
    assert_eq!(report.fit.value, 21);
    assert_eq!(report.device_bytes, 16_601_088);
    assert_eq!(report.fit.next_device_bytes, Some(17_391_616));
    assert_eq!(report.kv_sides, 8);
    assert_eq!(report.windows.len(), 4);
    // Sliding and full sides alike: [kv_heads, head_dim].
    assert_eq!(shapes(&report), ["k [2, 16] fp8", "v [2, 16] fp8"]);
    assert_eq!(report.shaped_terms, 8);
    for side in &report.windows {
        assert_eq!((side.window, side.per_sequence), (16, 130), "{side:?}");
        // The ring filled up, and never held more than the law's blocks.
        assert_eq!(side.most_held, 130, "{side:?}");
    }
    // Each sequence writes 4096 tokens = 256 blocks: on a full side all from the free list,
    // on a sliding side 130 from it and 126 reused from its own ring.
    assert_eq!(ops.blocks_allocated, 4 * 21 * 256 + 4 * 21 * 130);
    assert_eq!(ops.blocks_reused, 4 * 21 * 126);
    // No recurrent state: verifies roll nothing back, and nothing is copied.
    assert_eq!(ops.verifies, 5 * 21);
    assert_eq!(ops.rollbacks_to_checkpoint + ops.rollbacks_to_row, 0);
    assert_eq!(ops.copies, 0);
}

/// The setup and layout of Qwen3.5 tiny under 8 MiB.
fn qwen3_5_small() -> (Setup, Layout) {
    let setup = Setup::prepare(&args("qwen3_5.toml", "8MiB", &[])).unwrap();
    let layout = Layout::new(&setup.plan, &setup.decls, h_steps(&setup)).unwrap();
    (setup, layout)
}

/// The index of the term named `name` (`l0.gdn.h live`).
fn term(layout: &Layout, name: &str) -> usize {
    (0..layout.term_count())
        .find(|&t| layout.term_name(t) == name)
        .unwrap_or_else(|| panic!("no term `{name}`"))
}

#[test]
fn a_term_moved_onto_another_is_caught() {
    let (setup, mut layout) = qwen3_5_small();
    let (first, second) = (
        term(&layout, "l0.gdn.h live"),
        term(&layout, "l1.gdn.h live"),
    );
    // The two live pools of h are the same size: put layer 1's on top of layer 0's.
    assert_eq!(layout.region(first).bytes, layout.region(second).bytes);
    layout.relocate(second, layout.region(first).offset);
    let report = serve(&setup, layout.clone()).expect("the run reaches its end");
    assert!(!report.intact());
    let text = report.to_string();
    assert!(text.contains("TAGS BROKEN"), "{text}");
    // Layer 1 writes its h after layer 0's, so each of layer 0's live slots ends up holding
    // what layer 1 wrote there (its own tag, or one it copied in: a rollback, a restore); and
    // what layer 0 copied out of them (checkpoints, snapshots, ring slots) breaks too.
    assert!(report.tags.broken >= report.slots, "{text}");
    let name = |term: u32| layout.term_name(usize::try_from(term).unwrap());
    for (i, mismatch) in (0_u64..).zip(&report.tags.first) {
        // Term 0 comes first: the kept mismatches are its units, in order.
        assert_eq!((mismatch.term, mismatch.index), (first, i), "{mismatch}");
        let Found::Tag(found) = &mismatch.found else {
            panic!("a whole unit was overwritten: {mismatch}");
        };
        assert!(name(found.term).starts_with("l1.gdn.h "), "{mismatch}");
        assert!(
            name(mismatch.expected.term).starts_with("l0.gdn.h "),
            "{mismatch}"
        );
    }
}

#[test]
fn an_overlap_of_eight_bytes_is_caught() {
    let (setup, mut layout) = qwen3_5_small();
    let first = term(&layout, "l0.gdn.h live");
    let end = layout.region(first).end();
    let space = layout.space(first);
    // The term that starts next in the same arena, moved 8 bytes into `first`'s last unit.
    let next = (0..layout.term_count())
        .filter(|&t| layout.space(t) == space && layout.region(t).offset >= end)
        .min_by_key(|&t| layout.region(t).offset)
        .unwrap();
    assert!(layout.region(next).unit_bytes >= 8);
    layout.relocate(next, end - 8);
    let report = serve(&setup, layout).expect("the run reaches its end");
    assert!(!report.intact());
    // Only the two units that share the 8 bytes are overwritten: `first`'s last (the dummy's
    // slot) and `next`'s first. Whatever else breaks holds a copy made from one of them, so
    // what every broken unit must hold is a tag of one of the two.
    let last = report.slots - 1;
    assert!(report.tags.broken >= 1);
    for mismatch in &report.tags.first {
        let expected = (
            usize::try_from(mismatch.expected.term).unwrap(),
            mismatch.expected.unit,
        );
        assert!(
            expected == (first, last) || expected == (next, 0),
            "{mismatch}"
        );
    }
    // Here the snapshot restored last was taken while the dummy's tail covered `next`'s first
    // 8 bytes (its check and term): that unit holds no whole tag, and the report says so.
    let text = report.to_string();
    assert!(text.contains("no whole tag"), "{text}");
}

#[test]
fn the_unchanged_layout_serves_intact() {
    // The control for the two faults: the same setup, served as planned.
    let (setup, layout) = qwen3_5_small();
    let report = serve(&setup, layout).unwrap();
    assert!(report.intact(), "{report}");
}

/// Runs the binary from the workspace root.
fn engine(argv: &[&str]) -> (Option<i32>, String, String) {
    let output = Command::new(env!("CARGO_BIN_EXE_engine"))
        .args(argv)
        .current_dir(root())
        .output()
        .expect("the binary runs");
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[test]
fn the_binary_reports_and_exits() {
    let (code, stdout, stderr) = engine(&[
        "circuits/nemotron_h.toml",
        "--checkpoint",
        "tiny",
        "--budget",
        "8MiB",
        "--inputs",
        "metrale-codegen/cli/inputs/serving.toml",
        "--context",
        "1024",
    ]);
    assert_eq!(code, Some(0), "{stdout}{stderr}");
    assert!(stderr.is_empty(), "{stderr}");
    assert!(stdout.starts_with("engine: circuits/nemotron_h.toml, checkpoint `tiny`"));
    assert!(stdout.contains("sequences of 1024 tokens"), "{stdout}");
    assert!(
        stdout.contains(
            "\nshapes:     h [4, 8, 16] f32, conv [3, 96] bf16, k [2, 16] fp8, v [2, 16] fp8; \
             23 of 23 terms' units checked against their strides\n"
        ),
        "{stdout}"
    );
    let last = stdout.lines().last().unwrap();
    assert!(last.starts_with("every tag intact: "), "{stdout}");
    assert!(last.ends_with(" units checked"), "{stdout}");
    // A budget too small for one sequence: nothing to serve.
    let (code, stdout, stderr) = engine(&[
        "circuits/qwen3_5.toml",
        "--checkpoint",
        "tiny",
        "--budget",
        "1MiB",
        "--inputs",
        "metrale-codegen/cli/inputs/serving.toml",
    ]);
    assert_eq!(code, Some(1));
    assert!(stdout.is_empty());
    assert!(
        stderr.starts_with("error: the budget holds no sequence"),
        "{stderr}"
    );
    // No profile, no formats: the plan cannot be made, and the error says how to give them.
    let (code, _, stderr) = engine(&[
        "circuits/qwen3_5.toml",
        "--checkpoint",
        "tiny",
        "--budget",
        "1MiB",
    ]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("--format ssm_h_storage=DTYPE"), "{stderr}");
    // An unknown checkpoint: the loader's diagnostic.
    let (code, _, stderr) = engine(&[
        "circuits/qwen3_5.toml",
        "--checkpoint",
        "tinyy",
        "--budget",
        "1MiB",
    ]);
    assert_eq!(code, Some(1));
    assert!(stderr.contains("did you mean `tiny`?"), "{stderr}");
    // Usage: no budget.
    let (code, _, stderr) = engine(&["circuits/qwen3_5.toml", "--checkpoint", "tiny"]);
    assert_eq!(code, Some(2));
    assert!(stderr.contains("--budget <SIZE>"), "{stderr}");
}

/// The engine sizes itself by the runtime's calls, and `metrale-codegen fit` prints the same
/// figures for the same question (issue 29, part 2): the sequences, the device bytes at them and
/// at one more, what one more sequence and one more KV block cost, and a sequence slot's and a
/// KV token's bytes.
#[test]
fn the_engine_prints_what_fit_prints() {
    let inputs = root().join("metrale-codegen/cli/inputs/serving.toml");
    for circuit in ["qwen3_5.toml", "nemotron_h.toml", "gpt_oss.toml"] {
        let setup = Setup::prepare(&args(circuit, "16MiB", &[])).expect("the engine sets up");
        let path = root().join("circuits").join(circuit);
        let fit = |json: bool| {
            let mut argv: Vec<String> = [
                "fit",
                &path.to_string_lossy(),
                "--checkpoint",
                "tiny",
                "--budget",
                "16MiB",
                "--inputs",
                &inputs.to_string_lossy(),
                "--for",
                "sequences",
                "--context",
                &setup.context.to_string(),
            ]
            .into_iter()
            .map(str::to_owned)
            .collect();
            if json {
                argv.push("--json".to_owned());
            }
            let out = metrale_cli::run(argv);
            assert_eq!(
                out.status,
                metrale_cli::Status::Ok,
                "{circuit}: {}",
                out.stderr
            );
            out.stdout
        };
        let value: serde_json::Value = serde_json::from_str(&fit(true)).expect("JSON");
        let engine = serde_json::json!({
            "value": setup.fit.value,
            "device_bytes": setup.fit.device_bytes,
            "next_device_bytes": setup.fit.next_device_bytes,
            "marginal_bytes": setup.fit.marginal_bytes(),
            "marginal_block_bytes": setup.costs.block_bytes,
        });
        for key in [
            "value",
            "device_bytes",
            "next_device_bytes",
            "marginal_bytes",
            "marginal_block_bytes",
        ] {
            assert_eq!(value[key], engine[key], "{circuit}: `{key}`");
        }
        let table = fit(false);
        for line in [
            format!("bytes per sequence slot   {} B", setup.costs.per_slot),
            format!("bytes per KV token        {} B", setup.costs.per_token),
        ] {
            assert!(table.contains(&line), "{circuit}: {line}\n{table}");
        }
    }
}
