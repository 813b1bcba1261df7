//! The fuzzer's short run in CI: a fixed seed and a fixed count of executions per target (not a
//! time budget, so the run is the same on every machine), about a minute in all in a debug
//! build. Fails on any finding that is not one of the known open defects listed in
//! `fuzz/KNOWN.md`, naming the saved inputs; the long run is `cargo run --release -p
//! metrale-fuzz` (see the README).

use std::time::Duration;

use metrale_fuzz::corpus::{Corpus, workspace_root};
use metrale_fuzz::report::TABLE_HEADER;
use metrale_fuzz::run::{Config, run};
use metrale_fuzz::targets::Target;

/// Executions per target, tuned to about a minute and a half in all in a debug build (85 s on
/// the 2-core development machine: the first five targets 22 s, `fit`, `plan`, `import`,
/// `write` and `compile` most of the rest, `compile` one `cargo check` an execution; `alloc`,
/// `registry`, `config` and `weights` about 4 s together).
const EXECS: [(Target, u64); 14] = [
    (Target::Shape, 20_000),
    (Target::Circuit, 4_000),
    (Target::Library, 2_000),
    (Target::Inputs, 10_000),
    (Target::Generate, 200),
    (Target::Fit, 1_000),
    (Target::Plan, 1_000),
    (Target::Import, 2_000),
    (Target::Write, 40),
    (Target::Compile, 6),
    (Target::Alloc, 5_000),
    (Target::Registry, 1_000),
    (Target::Config, 500),
    (Target::Weights, 500),
];

#[test]
fn a_short_fixed_seed_run_finds_nothing_new() {
    let root = workspace_root();
    let corpus = Corpus::read(&root).expect("the corpus reads");
    let real = metrale_fuzz::compare::load_all(&root).expect("the real circuits load");
    let findings = std::env::temp_dir().join(format!("metrale-fuzz-ci-{}", std::process::id()));
    let mut rows = Vec::new();
    let mut failing = Vec::new();
    for (target, execs) in EXECS {
        let config = Config {
            targets: vec![target],
            seed: 1,
            execs,
            jobs: 1,
            findings: findings.clone(),
            // Generous for a debug build on a busy machine: only a real hang should trip it.
            slow: Duration::from_secs(20),
            max_len: 256 * 1024,
        };
        let outcome = run(&config, &corpus, &real).expect("the run sets up");
        for (target, stats) in &outcome.stats {
            print!("{}", stats.paragraph(target.name()));
            rows.push(stats.row(target.name(), 1));
            assert_eq!(stats.execs, execs, "every execution ran");
        }
        for (signature, count, known) in outcome.signatures {
            match known {
                Some(defect) => println!("known defect ({defect}): {count} x {signature}"),
                None => failing.push(format!("{count} x {signature}")),
            }
        }
    }
    println!("\n{TABLE_HEADER}\n{}", rows.join("\n"));
    assert!(
        failing.is_empty(),
        "new findings, saved under {}:\n{}",
        findings.display(),
        failing.join("\n")
    );
    let _ = std::fs::remove_dir_all(&findings);
}
