//! One truth across views (issue 29, part 1): for every zoo circuit under both layout
//! policies (the built-in inputs as they are, and with vLLM's `[pool]` after them), `plan`'s
//! table, its `--json` and its `--svg` map state the same device total, in exact bytes: the
//! arena's alone under the arenas, the arena's and the page pool's under vLLM's policy, where
//! the map also draws the pool's slots.

mod common;

use std::path::PathBuf;

/// vLLM's pool after the built-in inputs: requests of 32,768 tokens, four at once.
const POOL: &str = "\n[pool]\npolicy = \"vllm\"\ncontext = 32768\nrequests = 4\n";

/// A scratch file `name` holding `text`.
fn scratch(name: &str, text: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-codegen-views");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(name);
    std::fs::write(&path, text).expect("scratch file");
    path.to_str().expect("utf-8 path").to_owned()
}

/// The zoo's circuits, relative to the workspace root.
fn zoo() -> Vec<String> {
    let mut circuits: Vec<String> = std::fs::read_dir(common::root().join("circuits"))
        .expect("circuits/")
        .filter_map(Result::ok)
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|name| {
            std::path::Path::new(name)
                .extension()
                .is_some_and(|e| e.eq_ignore_ascii_case("toml"))
        })
        .map(|name| format!("circuits/{name}"))
        .collect();
    circuits.sort();
    circuits
}

/// The device line of `plan`'s table: its exact bytes, `N B` after the human figure.
fn table_device_bytes(table: &str) -> Option<u64> {
    let line = table
        .lines()
        .find(|l| l.trim_start().starts_with("device "))?;
    line.split_whitespace()
        .collect::<Vec<_>>()
        .windows(2)
        .find(|w| w[1] == "B" && w[0].bytes().all(|b| b.is_ascii_digit()))
        .and_then(|w| w[0].parse().ok())
}

#[test]
fn table_json_and_map_state_one_device_total_for_every_circuit_and_policy() {
    let default =
        std::fs::read_to_string(common::root().join("metrale-codegen/cli/inputs/default.toml"))
            .expect("the built-in inputs");
    let arenas = scratch("arenas.toml", &default);
    let pooled = scratch("pooled.toml", &format!("{default}{POOL}"));
    let mut checked = 0;
    for circuit in zoo() {
        for (policy, inputs) in [("arenas", &arenas), ("vllm", &pooled)] {
            let what = format!("{circuit} under {policy}");
            let svg = scratch(&format!("{}-{policy}.svg", circuit.replace('/', "_")), "");
            let json = common::run(&[
                "plan", &circuit, "--inputs", inputs, "--json", "--svg", &svg,
            ]);
            assert_eq!(json.code, 0, "{what}: {}", json.stderr);
            let value: serde_json::Value = serde_json::from_str(&json.stdout).expect("JSON");
            let device = value["device_bytes"].as_u64().expect("device_bytes");
            let table = common::run(&["plan", &circuit, "--inputs", inputs]);
            assert_eq!(table.code, 0, "{what}: {}", table.stderr);
            assert_eq!(
                table_device_bytes(&table.stdout),
                Some(device),
                "{what}: the table"
            );
            let map = std::fs::read_to_string(&svg).expect("the map");
            if let Some(pool) = value.get("pool") {
                let arena = pool["offset"].as_u64().expect("offset");
                let slots = pool["slots"].as_u64().expect("slots");
                let pool_bytes = pool["pages"].as_u64().expect("pages")
                    * slots
                    * pool["page_bytes"].as_u64().expect("page bytes");
                assert_eq!(arena + pool_bytes, device, "{what}: arena and pool");
                assert!(
                    table.stdout.contains(&format!(
                        "the arena's {arena} B and the page pool's {pool_bytes} B"
                    )),
                    "{what}: {}",
                    table.stdout
                );
                assert!(
                    map.contains(&format!("device total {device} B")),
                    "{what}: the map"
                );
                assert_eq!(
                    map.matches("class=\"pool-slot\"").count() as u64,
                    slots,
                    "{what}: the map's slots"
                );
            } else {
                assert_eq!(policy, "arenas", "{what}: no pool in the JSON");
                // The device band's caption states its arena, the device total here.
                assert!(
                    map.contains(&format!("({device} B)")) || device == 0,
                    "{what}: the map"
                );
                assert!(!map.contains("class=\"pool\""), "{what}: a pool drawn");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 36, "18 circuits under 2 policies");
}

/// Every key of `value`, at any depth (array elements included).
fn keys(value: &serde_json::Value, into: &mut std::collections::BTreeSet<String>) {
    match value {
        serde_json::Value::Object(map) => {
            for (key, inner) in map {
                into.insert(key.clone());
                // A map keyed by data (format keys, lifetimes, kinds) names no field.
                if !matches!(key.as_str(), "formats" | "lifetime" | "kind") {
                    keys(inner, into);
                }
            }
        }
        serde_json::Value::Array(items) => items.iter().for_each(|i| keys(i, into)),
        _ => {}
    }
}

#[test]
fn help_lists_every_key_json_prints() {
    let default =
        std::fs::read_to_string(common::root().join("metrale-codegen/cli/inputs/default.toml"))
            .expect("the built-in inputs");
    let pooled = scratch("help-pooled.toml", &format!("{default}{POOL}"));
    // One plan, one under vLLM's pool, one rank, every rank; a fit on a GPU, under the pool,
    // over ranks. `@pooled` is the pooled inputs file.
    for line in [
        "plan circuits/gemma3n.toml --json",
        "plan circuits/qwen3_5.toml --inputs @pooled --json",
        "plan circuits/llama.toml --tp 2 --tp-rank 1 --pp-rank 0 --json",
        "plan circuits/llama.toml --tp 2 --pp 2 --json",
        "fit circuits/qwen3_5.toml --for sequences --context 4k --gpu 80GiB --weights 54GiB --json",
        "fit circuits/qwen3_5.toml --inputs @pooled --for kv-blocks --budget 40GiB --json",
        "fit circuits/llama.toml --for kv-blocks --budget 8GiB --tp 2 --json",
    ] {
        let args: Vec<&str> = line
            .split_whitespace()
            .map(|a| if a == "@pooled" { pooled.as_str() } else { a })
            .collect();
        let out = common::run(&args);
        assert_eq!(out.code, 0, "{line}: {}", out.stderr);
        let value: serde_json::Value = serde_json::from_str(&out.stdout).expect("JSON");
        let mut found = std::collections::BTreeSet::new();
        keys(&value, &mut found);
        let help = common::run(&[args[0], "--help"]).stdout;
        let words: std::collections::BTreeSet<&str> = help
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .collect();
        let missing: Vec<&String> = found
            .iter()
            .filter(|k| !words.contains(k.as_str()))
            .collect();
        assert!(
            missing.is_empty(),
            "`{} --help` does not list {missing:?} ({line})",
            args[0]
        );
    }
}
