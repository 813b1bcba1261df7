//! The loader's limits (`metrale_circuit::load::text::limits`) and bounded reads: at each limit a circuit
//! loads, one past it gets one located error naming the limit at the first item past it; only
//! regular files inside the circuit's folder are read; errors past the hundredth are counted,
//! not kept; positions of errors the TOML parser or UTF-8 decoding give without a span.
//!
//! Expected places are found in the generated texts by search (the line of a marker), not
//! copied from the loader's output.

use std::fmt::Write as _;
use std::path::Path;

mod common;

use common::{TempDir, errors, loads, place};
use metrale_circuit::load::diag::Diagnostic;
use metrale_circuit::load::text::limits::{
    MAX_BLOCKS, MAX_BLOCKS_PER_LIST, MAX_CHECKPOINTS, MAX_DIMS, MAX_ERRORS, MAX_FILE_BYTES,
    MAX_LAYER_KINDS, MAX_LAYERS, MAX_LIBRARIES, MAX_NAME_BYTES, MAX_SHAPE_TERMS, MAX_STATES,
    MAX_STATES_PER_BLOCK, MAX_TERMS,
};
use metrale_circuit::load::{CircuitSource, load};

/// A list-layout circuit: `kinds` layer kinds `k<i>` (block `b<i>` each), `blocks` blocks in
/// all (the extra ones unused), `states` states in block `b0`, `checkpoints` checkpoints of
/// `layers` layers cycling through the kinds, one dim `d` and `dims - 1` more.
#[derive(Clone, Copy)]
struct Synth {
    kinds: usize,
    blocks: usize,
    states: usize,
    checkpoints: usize,
    layers: usize,
    dims: usize,
}

const SMALL: Synth = Synth {
    kinds: 1,
    blocks: 1,
    states: 1,
    checkpoints: 1,
    layers: 1,
    dims: 1,
};

impl Synth {
    fn text(self) -> String {
        let mut t = String::from("schema = 2\narch = \"t\"\ndims = [\"d\"");
        for i in 1..self.dims {
            write!(t, ", \"e{i}\"").unwrap();
        }
        t.push_str("]\n[layout]\nkind = \"list\"\n[layout.blocks]\n");
        for i in 0..self.kinds {
            writeln!(t, "k{i} = [\"b{i}\"]").unwrap();
        }
        for b in 0..self.blocks.max(self.kinds) {
            let states = if b == 0 { self.states } else { 1 };
            for s in 0..states {
                writeln!(
                    t,
                    "[[block.b{b}.state]]\nid = \"s{s}\"\nkind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"d\""
                )
                .unwrap();
            }
        }
        for c in 0..self.checkpoints {
            let kinds: Vec<String> = (0..self.layers)
                .map(|l| format!("\"k{}\"", l % self.kinds))
                .collect();
            let mut dims = String::from("d = 2");
            for i in 1..self.dims {
                write!(dims, ", e{i} = 1").unwrap();
            }
            writeln!(
                t,
                "[checkpoint.c{c}]\nlayer_kinds = [{}]\ndims = {{ {dims} }}",
                kinds.join(", ")
            )
            .unwrap();
        }
        t
    }
}

/// `c.toml:line:col` of the `nth` (0-based) occurrence of `marker` in `text`.
fn position_of(text: &str, marker: &str, nth: usize) -> String {
    let at = text
        .match_indices(marker)
        .nth(nth)
        .unwrap_or_else(|| panic!("no {nth}th `{marker}`"))
        .0;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.len() - before.rfind('\n').map_or(0, |i| i + 1) + 1;
    format!("c.toml:{line}:{column}")
}

/// The one error naming `what`'s limit: at `at`, with the help saying why there is one.
fn past_limit(text: &str, what: &str, max: impl std::fmt::Display, at: &str) {
    let message = format!("too many {what}: the limit is {max}");
    let all = errors(text);
    let found: Vec<&Diagnostic> = all.iter().filter(|d| d.message == message).collect();
    assert_eq!(found.len(), 1, "{message}: {all:#?}");
    assert_eq!(place(found[0]), at);
    assert!(found[0].help[0].contains("docs/circuit-schema.md"));
}

#[test]
fn layers_of_a_checkpoint() {
    let layers = usize::try_from(MAX_LAYERS).unwrap();
    let circuit = loads(&Synth { layers, ..SMALL }.text());
    assert_eq!(circuit.checkpoints()[0].layer_kinds().len(), layers);
    let text = Synth {
        layers: layers + 1,
        ..SMALL
    }
    .text();
    // The first entry past the limit: the 1025th `"k0"` of the list.
    past_limit(
        &text,
        "layers",
        MAX_LAYERS,
        &position_of(&text, "\"k0\"", layers),
    );
}

#[test]
fn checkpoints() {
    loads(
        &Synth {
            checkpoints: MAX_CHECKPOINTS,
            ..SMALL
        }
        .text(),
    );
    let text = Synth {
        checkpoints: MAX_CHECKPOINTS + 1,
        ..SMALL
    }
    .text();
    let name = format!("c{MAX_CHECKPOINTS}]");
    past_limit(
        &text,
        "checkpoints",
        MAX_CHECKPOINTS,
        &position_of(&text, &name, 0),
    );
}

#[test]
fn blocks() {
    loads(
        &Synth {
            blocks: MAX_BLOCKS,
            ..SMALL
        }
        .text(),
    );
    let text = Synth {
        blocks: MAX_BLOCKS + 1,
        ..SMALL
    }
    .text();
    let name = format!("b{MAX_BLOCKS}.");
    past_limit(&text, "blocks", MAX_BLOCKS, &position_of(&text, &name, 0));
}

#[test]
fn states_of_a_block() {
    loads(
        &Synth {
            states: MAX_STATES_PER_BLOCK,
            ..SMALL
        }
        .text(),
    );
    let text = Synth {
        states: MAX_STATES_PER_BLOCK + 1,
        ..SMALL
    }
    .text();
    // Reported at the state's table: the header line of the 65th state of `b0`.
    let header = position_of(&text, "[[block.b0.state]]", MAX_STATES_PER_BLOCK);
    let line = header.split(':').nth(1).unwrap();
    let all = errors(&text);
    let d = all
        .iter()
        .find(|d| d.message == "too many states in block `b0`: the limit is 64")
        .unwrap();
    assert_eq!(d.location.as_ref().unwrap().line.to_string(), line);
}

#[test]
fn states_over_all_blocks() {
    // 16 layer kinds of one block each, of 64 states (block `b0`, then 1 + 63 for the
    // others): 1,024 states, the limit.
    let many = |kinds: usize| Synth {
        kinds,
        layers: kinds,
        ..SMALL
    };
    let per_block = |text: &str, blocks: usize| {
        let mut out = text.to_owned();
        for b in 1..blocks {
            let mut states = String::new();
            for s in 1..MAX_STATES_PER_BLOCK {
                write!(
                    states,
                    "[[block.b{b}.state]]\nid = \"t{s}\"\nkind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"d\"\n"
                )
                .unwrap();
            }
            out.push_str(&states);
        }
        out
    };
    let blocks = MAX_STATES / MAX_STATES_PER_BLOCK;
    let text = per_block(
        &Synth {
            states: MAX_STATES_PER_BLOCK,
            ..many(blocks)
        }
        .text(),
        blocks,
    );
    loads(&text);
    // One block more, of one state: the 1,025th state.
    let text = per_block(
        &Synth {
            states: MAX_STATES_PER_BLOCK,
            ..many(blocks + 1)
        }
        .text(),
        blocks,
    );
    let header = format!("[[block.b{blocks}.state]]");
    past_limit(&text, "states", MAX_STATES, &position_of(&text, &header, 0));
}

#[test]
fn a_checkpoint_without_state_is_refused() {
    // Class 12: a plan of nothing once generated code that warned in the user's crate.
    let text = SMALL.text().replace(
        "[[block.b0.state]]\nid = \"s0\"\nkind = \"paged_kv\"\nformat = \"bf16\"\nshape = \"d\"\n",
        "[block.b0]\n",
    );
    let all = errors(&text);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(
        all[0].message,
        "checkpoint `c0` holds no state: its plan would be empty"
    );
    assert_eq!(place(&all[0]), position_of(&text, "[checkpoint.c0]", 0));
}

#[test]
fn layer_kinds() {
    loads(
        &Synth {
            kinds: MAX_LAYER_KINDS,
            layers: MAX_LAYER_KINDS,
            ..SMALL
        }
        .text(),
    );
    let text = Synth {
        kinds: MAX_LAYER_KINDS + 1,
        layers: MAX_LAYER_KINDS,
        ..SMALL
    }
    .text();
    let key = format!("k{MAX_LAYER_KINDS} = ");
    past_limit(
        &text,
        "layer kinds",
        MAX_LAYER_KINDS,
        &position_of(&text, &key, 0),
    );
}

#[test]
fn dims_declared_and_derived() {
    loads(
        &Synth {
            dims: MAX_DIMS,
            ..SMALL
        }
        .text(),
    );
    let text = Synth {
        dims: MAX_DIMS + 1,
        ..SMALL
    }
    .text();
    let name = format!("\"e{MAX_DIMS}\"");
    past_limit(&text, "dims", MAX_DIMS, &position_of(&text, &name, 0));

    let derived = |n: usize| {
        let mut t = SMALL.text().replace("[layout]", "[derive]\n[layout]");
        let mut lines = String::new();
        for i in 0..n {
            writeln!(lines, "f{i} = \"d + {}\"", i + 1).unwrap();
        }
        t = t.replace("[derive]\n", &format!("[derive]\n{lines}"));
        t
    };
    loads(&derived(MAX_DIMS));
    let text = derived(MAX_DIMS + 1);
    let key = format!("f{MAX_DIMS} = ");
    past_limit(
        &text,
        "derived dims",
        MAX_DIMS,
        &position_of(&text, &key, 0),
    );
}

#[test]
fn blocks_in_a_list() {
    let with_prologue = |n: usize| {
        let names: Vec<String> = (0..n).map(|i| format!("\"b{}\"", i + 1)).collect();
        Synth {
            blocks: n + 1,
            ..SMALL
        }
        .text()
        .replace(
            "[layout]",
            &format!("prologue = [{}]\n[layout]", names.join(", ")),
        )
    };
    loads(&with_prologue(MAX_BLOCKS_PER_LIST));
    let text = with_prologue(MAX_BLOCKS_PER_LIST + 1);
    let name = format!("\"b{}\"", MAX_BLOCKS_PER_LIST + 1);
    past_limit(
        &text,
        "blocks in `prologue`",
        MAX_BLOCKS_PER_LIST,
        &position_of(&text, &name, 0),
    );
}

#[test]
fn name_length() {
    let long = |n: usize| {
        SMALL
            .text()
            .replace("\"s0\"", &format!("\"{}\"", "s".repeat(n)))
    };
    loads(&long(MAX_NAME_BYTES));
    let text = long(MAX_NAME_BYTES + 1);
    let all = errors(&text);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(
        all[0].message,
        "invalid state id: 65 bytes long, the limit is 64"
    );
    assert_eq!(place(&all[0]), position_of(&text, "\"sss", 0));
}

#[test]
fn shape_terms() {
    let shape = |n: usize| {
        let factors = vec!["d"; n].join(" * ");
        SMALL
            .text()
            .replace("shape = \"d\"", &format!("shape = \"{factors}\""))
    };
    loads(&shape(MAX_SHAPE_TERMS));
    let text = shape(MAX_SHAPE_TERMS + 1);
    let all = errors(&text);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(
        all[0].message,
        "invalid shape: too many terms: the limit is 32 factors in one shape"
    );
    // At the 33rd `d` of the shape: column of `shape = "` plus 4 chars per `d * `.
    let start = position_of(&text, "shape = \"", 0);
    let (line, column) = {
        let mut parts = start.rsplitn(3, ':');
        let column: usize = parts.next().unwrap().parse().unwrap();
        (parts.next().unwrap().to_owned(), column)
    };
    let expected = format!("c.toml:{line}:{}", column + "shape = \"".len() + 4 * 32);
    assert_eq!(place(&all[0]), expected);
}

#[test]
fn state_terms_over_all_checkpoints() {
    // 32 checkpoints of 1,024 layers, one state each: exactly the limit.
    let at_limit = Synth {
        checkpoints: MAX_TERMS / 1024,
        layers: 1024,
        ..SMALL
    };
    loads(&at_limit.text());
    // One state more in the one block: the first checkpoint's 2,048 terms, then 4,096, ...:
    // the 17th passes the limit.
    let text = Synth {
        states: 2,
        ..at_limit
    }
    .text();
    past_limit(
        &text,
        "state terms",
        MAX_TERMS,
        &position_of(&text, "[checkpoint.c16]", 0),
    );
}

#[test]
fn errors_past_the_hundredth_are_counted() {
    // 150 unknown keys at the end of the checkpoint: the first 100 by position are kept.
    let mut text = SMALL.text();
    for i in 0..150 {
        writeln!(text, "unknown_{i} = 1").unwrap();
    }
    let all = errors(&text);
    assert_eq!(all.len(), MAX_ERRORS + 1);
    for (i, d) in all.iter().take(MAX_ERRORS).enumerate() {
        assert_eq!(
            d.message,
            format!("unknown key `unknown_{i}` in checkpoint `c0`")
        );
    }
    let last = all.last().unwrap();
    assert_eq!(
        last.message,
        "and 50 more errors (only the first 100 are shown)"
    );
    assert_eq!(last.file.as_deref(), Some("c.toml"));
}

#[test]
fn a_long_line_is_not_copied_into_each_error() {
    // One line of 20,000 unknown keys in an inline table: 100 errors kept, each showing an
    // excerpt of at most 120 chars (plus the ellipses), not the 300 KB line.
    let keys: Vec<String> = (0..20_000).map(|i| format!("x{i} = 1")).collect();
    let text = SMALL.text().replace(
        "dims = { d = 2 }",
        &format!("dims = {{ d = 2, {} }}", keys.join(", ")),
    );
    let all = errors(&text);
    assert_eq!(all.len(), MAX_ERRORS + 1);
    for d in &all[..MAX_ERRORS] {
        let shown = &d.location.as_ref().unwrap().line_text;
        assert!(shown.chars().count() <= 120, "{}", shown.len());
    }
    assert!(all[MAX_ERRORS].message.starts_with("and 19900 more errors"));
}

#[test]
fn a_toml_recursion_limit_is_located_at_its_line() {
    let key = vec!["a"; 120].join(".");
    let text = format!("schema = 2\narch = \"t\"\n{key} = 1\n");
    let all = errors(&text);
    assert_eq!(all.len(), 1, "{all:#?}");
    assert!(all[0].message.starts_with("invalid TOML: "));
    assert_eq!(place(&all[0]), "c.toml:3:1");
}

#[test]
fn a_crlf_end_of_line_caret_is_one_past_the_line() {
    // The TOML error of a value missing at the end of a line, in a CRLF file.
    let text = "schema = 2\r\narch =\r\n";
    let all = errors(text);
    let d = &all[0];
    let loc = d.location.as_ref().unwrap();
    assert_eq!(loc.line_text, "arch =");
    assert_eq!(loc.column, "arch =".len() + 1, "{}", d.render());
}

/// Loads `text` as `<dir>/c.toml` from disk.
fn load_file(dir: &Path, text: &str) -> Vec<Diagnostic> {
    let path = dir.join("c.toml");
    std::fs::write(&path, text).unwrap();
    load(CircuitSource::File {
        path: &path,
        name: "c.toml",
    })
    .circuit
    .expect_err("errors")
    .0
}

/// [`SMALL`] including library `lib` (which defines nothing it needs).
fn including_lib() -> String {
    SMALL
        .text()
        .replace("[layout]", "include = [\"lib\"]\n[layout]")
}

#[test]
fn a_file_over_the_size_limit_is_refused_unread() {
    let dir = TempDir::new("size");
    let mut text = SMALL.text();
    let size = usize::try_from(MAX_FILE_BYTES).unwrap();
    while text.len() <= size {
        text.push_str("# padding padding padding padding padding padding padding padding\n");
    }
    let all = load_file(&dir, &text);
    assert_eq!(all.len(), 1);
    assert_eq!(
        all[0].message,
        "cannot read circuit `c.toml`: larger than the limit of 1048576 bytes \
         (`metrale_circuit::load::text::limits::MAX_FILE_BYTES`)"
    );
    assert_eq!(all[0].file.as_deref(), Some("c.toml"));
}

#[test]
fn a_non_utf8_file_is_located_at_its_first_bad_byte() {
    let dir = TempDir::new("utf8");
    let path = dir.join("c.toml");
    let mut bytes = b"schema = 2\narch = \"t\xC3\xA9\"\ndescription = \"ab".to_vec();
    bytes.push(0xFF);
    bytes.extend_from_slice(b"\"\n");
    std::fs::write(&path, &bytes).unwrap();
    let all = load(CircuitSource::File {
        path: &path,
        name: "c.toml",
    })
    .circuit
    .unwrap_err()
    .0;
    assert_eq!(all.len(), 1, "{all:#?}");
    // Byte 0xFF is byte 41: line 3, after `description = "ab` (17 chars).
    assert_eq!(
        all[0].message,
        "circuit `c.toml` is not UTF-8: byte 0xff at byte offset 41 starts no character"
    );
    assert_eq!(place(&all[0]), "c.toml:3:18");
}

#[cfg(unix)]
#[test]
fn only_regular_files_inside_the_circuit_folder_are_read() {
    use std::os::unix::fs::symlink;
    let reads = |name: &str, make: &dyn Fn(&Path)| -> Diagnostic {
        let dir = TempDir::new(name);
        make(&dir.join("blocks").join("lib.toml"));
        let all = load_file(&dir, &including_lib());
        assert_eq!(all.len(), 1, "{all:#?}");
        all.into_iter().next().unwrap()
    };
    // A symlink to a device: it leads outside the folder, so it is refused unread (a device
    // inside it would be refused from its metadata: `read_source`'s own test).
    let d = reads("zero", &|lib| symlink("/dev/zero", lib).unwrap());
    assert_eq!(
        d.message,
        "cannot read block library `blocks/lib.toml`: it resolves outside the circuit's folder"
    );
    // A FIFO: opening it would block; it is refused before.
    let d = reads("fifo", &|lib| {
        let made = std::process::Command::new("mkfifo").arg(lib).status();
        assert!(made.unwrap().success());
    });
    assert_eq!(
        d.message,
        "cannot read block library `blocks/lib.toml`: not a regular file (a FIFO)"
    );
    // A directory.
    let d = reads("dir", &|lib| std::fs::create_dir(lib).unwrap());
    assert!(d.message.ends_with("not a regular file (a directory)"));
    // A symlink that leaves the circuit's folder: named, its content never shown.
    let elsewhere = TempDir::new("elsewhere");
    let outside = elsewhere.write("outside.toml", "secret = \"do not show\"\n");
    let d = reads("outside", &|lib| symlink(&outside, lib).unwrap());
    assert_eq!(
        d.message,
        "cannot read block library `blocks/lib.toml`: it resolves outside the circuit's folder"
    );
    assert!(!d.render().contains("do not show"));
    assert_eq!(
        d.location.as_ref().unwrap().line_text,
        "include = [\"lib\"]"
    );
    // A symlink inside the folder is followed.
    let dir = TempDir::new("inside");
    std::fs::write(dir.join("blocks").join("real.toml"), "").unwrap();
    symlink(
        dir.join("blocks").join("real.toml"),
        dir.join("blocks").join("lib.toml"),
    )
    .unwrap();
    let path = dir.join("c.toml");
    std::fs::write(&path, including_lib()).unwrap();
    load(CircuitSource::File {
        path: &path,
        name: "c.toml",
    })
    .circuit
    .unwrap();
}

#[test]
fn block_libraries() {
    // A chain: lib0 includes lib1, ... Every library is read once; the 65th is refused.
    let chain = |n: usize| {
        let dir = TempDir::new(&format!("chain{n}"));
        for i in 0..n {
            let next = if i + 1 < n {
                format!("include = [\"lib{}\"]\n", i + 1)
            } else {
                String::new()
            };
            std::fs::write(dir.join("blocks").join(format!("lib{i}.toml")), next).unwrap();
        }
        let text = SMALL
            .text()
            .replace("[layout]", "include = [\"lib0\"]\n[layout]");
        let path = dir.join("c.toml");
        std::fs::write(&path, text).unwrap();
        load(CircuitSource::File {
            path: &path,
            name: "c.toml",
        })
        .circuit
    };
    assert_eq!(
        chain(MAX_LIBRARIES).unwrap().read().len(),
        MAX_LIBRARIES + 1
    );
    let all = chain(MAX_LIBRARIES + 1).unwrap_err().0;
    assert_eq!(all.len(), 1, "{all:#?}");
    assert_eq!(all[0].message, "too many block libraries: the limit is 64");
    assert_eq!(
        place(&all[0]),
        format!("blocks/lib{}.toml:1:12", MAX_LIBRARIES - 1)
    );
}
