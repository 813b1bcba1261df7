//! `plan --svg FILE`, run from the workspace root: the map read back with an XML parser (one
//! rectangle per non-empty term at its scaled offset and width, the figures computed here from
//! the plan's JSON and a few checked by hand), rendered with a real SVG renderer (no band
//! blank, terms in their lifetime's colours), the committed map of Qwen3.5-27B kept equal to
//! what the command writes, and the file's errors.

mod common;

use std::path::{Path, PathBuf};

use common::{root, run};

use resvg::tiny_skia::{Pixmap, Transform};
use resvg::usvg;
use roxmltree::{Document, Node};
use serde_json::Value;

const CIRCUIT: &str = "circuits/qwen3_5.toml";
/// The committed map of Qwen3.5-27B under the default inputs.
const COMMITTED: &str = "docs/memory-map-qwen3_5_27b.svg";
/// The coordinates are printed with three decimals: a figure is within half the last digit.
const EPSILON: f64 = 0.000_501;

/// A path in this test binary's scratch folder.
fn scratch_path(name: &str) -> String {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("metrale-codegen-map");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir.join(name).to_str().expect("utf-8 path").to_owned()
}

/// A file in the scratch folder, written with `text`.
fn scratch(name: &str, text: &str) -> String {
    let path = scratch_path(name);
    std::fs::write(&path, text).expect("scratch file");
    path
}

/// The small inputs of the CLI tests: 3 slots, bf16 KV of 10 blocks of 4 tokens, nothing else.
fn small_inputs() -> String {
    scratch(
        "small.toml",
        "slots = 3\n[formats]\nkv_cache_dtype = \"bf16\"\nssm_h_storage = \"f32\"\n\
         ssm_conv_storage = \"f16\"\n[kv]\nblocks = 10\nblock_size = 4\n",
    )
}

/// `plan CIRCUIT <args> --svg <scratch file>`: the map written, and the plan as JSON from
/// the same arguments.
fn map_and_plan(name: &str, args: &[&str]) -> (String, Value) {
    let target = scratch_path(name);
    let mut all = vec!["plan", CIRCUIT];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--svg", &target]);
    let out = run(&all);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("circuit     circuits/qwen3_5.toml\n"),
        "the table still prints:\n{}",
        out.stdout
    );
    let svg = std::fs::read_to_string(&target).expect("the map is written");
    all.truncate(all.len() - 2);
    all.push("--json");
    let out = run(&all);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    (svg, serde_json::from_str(&out.stdout).expect("JSON"))
}

fn u(v: &Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn number(node: Node<'_, '_>, attribute: &str) -> f64 {
    node.attribute(attribute)
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no number `{attribute}` on {node:?}"))
}

/// The `rect`s of class `class`.
fn rects<'a, 'i>(doc: &'a Document<'i>, class: &str) -> Vec<Node<'a, 'i>> {
    doc.descendants()
        .filter(|n| n.has_tag_name("rect") && n.attribute("class") == Some(class))
        .collect()
}

/// The band of `space`: (x, y, width, height).
fn band(doc: &Document<'_>, space: &str) -> Option<(f64, f64, f64, f64)> {
    let id = format!("band-{space}");
    doc.descendants()
        .find(|n| n.attribute("id") == Some(id.as_str()))
        .map(|n| {
            (
                number(n, "x"),
                number(n, "y"),
                number(n, "width"),
                number(n, "height"),
            )
        })
}

fn title(node: Node<'_, '_>) -> String {
    node.children()
        .find(|c| c.has_tag_name("title"))
        .and_then(|t| t.text())
        .unwrap_or_else(|| panic!("no title in {node:?}"))
        .to_owned()
}

fn close(got: f64, expected: f64, what: &str) {
    assert!(
        (got - expected).abs() <= EPSILON,
        "{what}: {got} is not {expected}"
    );
}

/// Checks that the map has, in each space with bytes, exactly one `term` rectangle per
/// non-empty term of `plan`, at `x = band x + offset / arena * band width`, as wide as
/// `bytes / arena * band width`, titled with its state, holding and bytes; returns how many.
fn check_terms(doc: &Document<'_>, plan: &Value) -> usize {
    let terms = plan["terms"].as_array().expect("terms");
    let drawn = rects(doc, "term");
    let mut checked = 0;
    for space in ["device", "host"] {
        let arena = u(&plan[format!("{space}_bytes")]);
        let Some((x0, y0, width, height)) = band(doc, space) else {
            assert_eq!(arena, 0, "{space} holds bytes but has no band");
            continue;
        };
        assert!(arena > 0, "an empty {space} arena has a band");
        // Both figures are exact in binary; the arena bytes are an integer, so the f64
        // division is the correctly rounded quotient.
        #[allow(clippy::cast_precision_loss, reason = "arenas here are far below 2^53")]
        let per_byte = width / arena as f64;
        for term in terms
            .iter()
            .filter(|t| t["space"] == space && u(&t["bytes"]) > 0)
        {
            let (state, holding) = (term["state"].as_str(), term["holding"].as_str());
            let mine: Vec<&Node<'_, '_>> = drawn
                .iter()
                .filter(|n| n.attribute("data-state") == state)
                .filter(|n| n.attribute("data-holding") == holding)
                .collect();
            assert_eq!(mine.len(), 1, "{state:?} {holding:?}: {} rects", mine.len());
            let rect = mine[0];
            let (offset, bytes) = (u(&term["offset"]), u(&term["bytes"]));
            #[allow(clippy::cast_precision_loss, reason = "offsets here are below 2^53")]
            let (offset_f, bytes_f) = (offset as f64, bytes as f64);
            let what = format!("{state:?} {holding:?}");
            close(number(*rect, "x"), x0 + offset_f * per_byte, &what);
            close(number(*rect, "width"), bytes_f * per_byte, &what);
            close(number(*rect, "y"), y0, &what);
            close(number(*rect, "height"), height, &what);
            let text = title(*rect);
            for needle in [
                state.expect("state").to_owned(),
                holding.expect("holding").to_owned(),
                format!("({bytes} B)"),
            ] {
                assert!(text.contains(&needle), "{what}: no `{needle}` in `{text}`");
            }
            checked += 1;
        }
    }
    assert_eq!(
        drawn.len(),
        checked,
        "a rect per non-empty term and no other"
    );
    checked
}

#[test]
fn a_small_plan_by_hand() {
    let inputs = small_inputs();
    let (svg, plan) = map_and_plan("small.svg", &["--checkpoint", "tiny", "--inputs", &inputs]);
    let doc = Document::parse(&svg).expect("the map is XML");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    // The device arena (31232 B, checked by hand in the CLI tests) is the band's 1000 px from
    // x = 140; the host arena holds nothing and has no band.
    assert_eq!(band(&doc, "device"), Some((140.0, 154.0, 1000.0, 40.0)));
    assert_eq!(u(&plan["device_bytes"]), 31_232);
    assert_eq!(band(&doc, "host"), None);
    // Non-empty: 4 KV sides (l3, l7) and h and conv of 6 GDN layers.
    assert_eq!(check_terms(&doc, &plan), 16);

    // By hand, 1000 px / 31232 B: l3.attn.k at 0, 1280 B -> x 140, 40.984 px; l0.gdn.h at
    // 5120 (after 4 KV sides), 3072 B -> x 140 + 163.934, 98.361 px; l0.gdn.conv at 8192,
    // 1152 B -> x 140 + 262.295, 36.885 px.
    let rect = |state: &str| {
        rects(&doc, "term")
            .into_iter()
            .find(|n| n.attribute("data-state") == Some(state))
            .map(|n| (n.attribute("x"), n.attribute("width")))
    };
    assert_eq!(rect("l3.attn.k"), Some((Some("140"), Some("40.984"))));
    assert_eq!(rect("l0.gdn.h"), Some((Some("303.934"), Some("98.361"))));
    assert_eq!(rect("l0.gdn.conv"), Some((Some("402.295"), Some("36.885"))));
    // Padding: each conv ends at 8192 + 1152 = 9344 for layer 0, 128 B short of the next
    // multiple of 256 (the last one short of the arena's end): 6 gaps of 128 B = 4.098 px,
    // the first at x = 140 + 299.180.
    let pads = rects(&doc, "pad");
    assert_eq!(pads.len(), 6);
    for pad in &pads {
        assert_eq!(pad.attribute("width"), Some("4.098"));
        assert_eq!(pad.attribute("fill"), Some("url(#pad)"));
        assert!(title(*pad).starts_with("alignment padding: 128 B at offset "));
    }
    assert_eq!(pads[0].attribute("x"), Some("439.18"));
    assert_eq!(title(pads[0]), "alignment padding: 128 B at offset 9344");

    // The per-layer axis: a lane for each of the 8 layers; layer 3's one mark spans its k and
    // v, 2 x 1280 B = 2560 B = 81.967 px from x = 140, under the band.
    let lanes = rects(&doc, "lane");
    assert_eq!(lanes.len(), 8);
    let marks = rects(&doc, "lane-mark");
    assert_eq!(marks.len(), 8, "one run of neighbouring terms per layer");
    let l3 = marks
        .iter()
        .find(|m| title(**m).starts_with("l3 (full_attention): 2 terms"))
        .expect("a mark of l3");
    assert_eq!(
        (l3.attribute("x"), l3.attribute("width")),
        (Some("140"), Some("81.967"))
    );
    assert!(number(*l3, "y") > 154.0 + 40.0, "under the band");
    // The legend names every lifetime.
    for lifetime in ["model", "sequence", "snapshot", "verify"] {
        let needle = format!("{lifetime} lifetime");
        assert!(
            doc.descendants()
                .any(|n| n.has_tag_name("text") && n.text() == Some(needle.as_str())),
            "no `{needle}` in the legend"
        );
    }
}

#[test]
fn a_pooled_plan_draws_its_page_pool() {
    // C12: under vLLM's policy the map drew the arena alone, leaving the page pool out.
    let inputs = scratch(
        "pooled.toml",
        "slots = 3\n[formats]\nkv_cache_dtype = \"bf16\"\nssm_h_storage = \"f32\"\n\
         ssm_conv_storage = \"f16\"\n[pool]\npolicy = \"vllm\"\ncontext = 256\nrequests = 2\n",
    );
    let (svg, plan) = map_and_plan("pooled.svg", &["--checkpoint", "tiny", "--inputs", &inputs]);
    let doc = Document::parse(&svg).expect("the map is XML");
    let pool = &plan["pool"];
    let (slots, pages, page) = (u(&pool["slots"]), u(&pool["pages"]), u(&pool["page_bytes"]));
    let device = u(&plan["device_bytes"]);
    // The pool's bytes are its slots' pages, after the arena: the device total.
    assert_eq!(u(&pool["offset"]) + slots * pages * page, device);
    let caption = doc
        .descendants()
        .filter(|n| n.has_tag_name("text"))
        .filter_map(|n| n.text())
        .find(|t| t.starts_with("page pool (vLLM)"))
        .expect("the pool's caption");
    assert!(
        caption.contains(&format!("device total {device} B"))
            && caption.contains(&format!("{slots} slots x {pages} pages x {page} B")),
        "{caption}"
    );
    let drawn = rects(&doc, "pool-slot");
    assert_eq!(drawn.len() as u64, slots);
    // The slots tile the band, each titled with what views it; each has its null page.
    let widths: f64 = drawn.iter().map(|r| number(*r, "width")).sum();
    close(widths, 1000.0, "the slots' widths");
    for slot in &drawn {
        assert!(title(*slot).contains("viewed by l"), "{}", title(*slot));
    }
    assert_eq!(rects(&doc, "null-page").len() as u64, slots);
}

/// The colours of the lifetimes, each with its lighter tone.
const TONES: [(&str, [[u8; 3]; 2]); 4] = [
    ("model", [[0x4e, 0x79, 0xa7], [0x86, 0xa8, 0xcf]]),
    ("sequence", [[0x59, 0xa1, 0x4f], [0x8f, 0xc5, 0x85]]),
    ("snapshot", [[0xf2, 0x8e, 0x2b], [0xf7, 0xb6, 0x72]]),
    ("verify", [[0xb0, 0x7a, 0xa1], [0xd0, 0xa9, 0xc6]]),
];

/// The map rendered at 1 px per unit on its white background.
fn render(svg: &str) -> Pixmap {
    let tree = usvg::Tree::from_str(svg, &usvg::Options::default()).expect("the map renders");
    let size = tree.size().to_int_size();
    let mut pixmap = Pixmap::new(size.width(), size.height()).expect("a pixmap");
    resvg::render(&tree, Transform::default(), &mut pixmap.as_mut());
    pixmap
}

/// The colour at (x, y), which must be opaque.
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    reason = "coordinates inside the picture"
)]
fn pixel(pixmap: &Pixmap, x: f64, y: f64) -> [u8; 3] {
    let p = pixmap
        .pixel(x as u32, y as u32)
        .unwrap_or_else(|| panic!("({x}, {y}) is outside the picture"));
    assert_eq!(p.alpha(), 255, "({x}, {y}) is not opaque");
    [p.red(), p.green(), p.blue()]
}

#[test]
fn the_map_of_qwen3_5_27b_renders_with_every_band_drawn() {
    let (svg, plan) = map_and_plan("qwen.svg", &[]);
    let doc = Document::parse(&svg).expect("the map is XML");
    // 663 device terms and the host's lookup index hold bytes (the rest are empty).
    assert_eq!(check_terms(&doc, &plan), 664);
    let pixmap = render(&svg);
    for space in ["device", "host"] {
        let (x, y, width, height) = band(&doc, space).expect("a band");
        // Inside the band's outline, nearly every pixel is a term's: padding is 20192 B of the
        // device's 17.57 GiB and 128 B of the host's 1.13 MiB.
        let (mut drawn, mut all) = (0, 0);
        let mut py = y + 2.0;
        while py < y + height - 2.0 {
            let mut px = x + 2.0;
            while px < x + width - 2.0 {
                all += 1;
                if pixel(&pixmap, px, py) != [255, 255, 255] {
                    drawn += 1;
                }
                px += 1.0;
            }
            py += 1.0;
        }
        assert!(
            drawn * 100 >= all * 99,
            "{space}: {drawn} of {all} pixels drawn"
        );
    }
    // Colours by lifetime: the host band is one term (the lookup index, sequence lifetime,
    // the first of its band: the first tone), so its middle is that colour.
    let (x, y, width, height) = band(&doc, "host").expect("host");
    assert_eq!(
        pixel(&pixmap, x + width / 2.0, y + height / 2.0),
        [0x59, 0xa1, 0x4f]
    );
    // The widest device term: its middle is one of its lifetime's two tones.
    let terms = plan["terms"].as_array().expect("terms");
    let widest = terms
        .iter()
        .filter(|t| t["space"] == "device")
        .max_by_key(|t| u(&t["bytes"]))
        .expect("a device term");
    let rect = rects(&doc, "term")
        .into_iter()
        .find(|n| {
            n.attribute("data-state") == widest["state"].as_str()
                && n.attribute("data-holding") == widest["holding"].as_str()
        })
        .expect("its rect");
    let (_, tones) = TONES
        .iter()
        .find(|(l, _)| widest["lifetime"] == *l)
        .expect("a lifetime");
    let middle = pixel(
        &pixmap,
        number(rect, "x") + number(rect, "width") / 2.0,
        number(rect, "y") + number(rect, "height") / 2.0,
    );
    assert!(tones.contains(&middle), "{widest}: {middle:?}");
}

#[test]
fn the_committed_map_is_what_plan_writes() {
    let target = scratch_path("committed.svg");
    let out = run(&["plan", CIRCUIT, "--svg", &target]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let written = std::fs::read_to_string(&target).expect("written");
    let committed = std::fs::read_to_string(root().join(COMMITTED)).expect("committed map");
    assert!(
        written == committed,
        "{COMMITTED} is stale: regenerate it with `cargo run -p metrale-cli -- plan \
         {CIRCUIT} --svg {COMMITTED}`"
    );
}

#[test]
fn the_map_names_no_absolute_path_and_does_not_depend_on_the_options_of_the_table() {
    let committed = std::fs::read_to_string(root().join(COMMITTED)).expect("committed map");
    // The circuit named by an absolute path, the table sorted and grouped, or JSON printed:
    // the same bytes.
    let absolute = root().join(CIRCUIT);
    let absolute = absolute.to_str().expect("utf-8 path");
    for (name, args) in [
        ("absolute.svg", vec!["plan", absolute]),
        (
            "grouped.svg",
            vec!["plan", CIRCUIT, "--sort", "plan", "--group", "kind"],
        ),
        ("json.svg", vec!["plan", CIRCUIT, "--json"]),
    ] {
        let target = scratch_path(name);
        let mut all = args.clone();
        all.extend_from_slice(&["--svg", &target]);
        let out = run(&all);
        assert_eq!(out.code, 0, "{args:?}: {}", out.stderr);
        let written = std::fs::read_to_string(&target).expect("written");
        assert!(written == committed, "{args:?}: the map differs");
        if args.contains(&"--json") {
            let plan: Value = serde_json::from_str(&out.stdout).expect("JSON still on stdout");
            assert_eq!(plan["checkpoint"], "qwen3_5_27b");
        }
    }
    let root = root().to_str().expect("utf-8 path");
    assert!(!committed.contains(root), "the map names {root}");
    // An inputs file by an absolute path is named by its file name only.
    let inputs = small_inputs();
    let target = scratch_path("inputs.svg");
    let out = run(&["plan", CIRCUIT, "--inputs", &inputs, "--svg", &target]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    let written = std::fs::read_to_string(&target).expect("written");
    assert!(written.contains("inputs: small.toml;"), "{written}");
    assert!(!written.contains(env!("CARGO_TARGET_TMPDIR")));
}

#[test]
fn an_unwritable_svg_file_is_bad_input() {
    for target in ["no/such/folder/map.svg", "docs", ""] {
        let out = run(&["plan", CIRCUIT, &format!("--svg={target}")]);
        assert_eq!(out.code, 1, "{target:?}: {}", out.stderr);
        assert!(out.stdout.is_empty(), "{target:?}: {}", out.stdout);
        assert!(
            out.stderr.starts_with(&format!(
                "error: cannot write the memory map to `{target}`: "
            )),
            "{target:?}: {}",
            out.stderr
        );
        assert!(
            out.stderr.contains("a file to create or overwrite"),
            "{}",
            out.stderr
        );
    }
    // A bad circuit is reported as ever, and no map is written.
    let target = scratch_path("never.svg");
    let _ = std::fs::remove_file(&target);
    let out = run(&["plan", "circuits/no_such.toml", "--svg", &target]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(!Path::new(&target).exists());
}

#[test]
fn a_layer_that_reads_another_s_kv_is_marked_over_its_owner_s_regions() {
    // Gemma 3n's miniature: layers 5 to 8 read layer 3's local pair, layer 9 layer 4's global
    // pair; none of them keeps a byte.
    let inputs = scratch(
        "gemma3n.toml",
        "slots = 1\n[formats]\nkv_cache_dtype = \"bf16\"\n[kv]\nblocks = 4\nblock_size = 16\n\
         sequences = 2\nchunk_tokens = 16\nmax_tokens = 64\n",
    );
    let target = scratch_path("gemma3n.svg");
    let out = run(&[
        "plan",
        "circuits/gemma3n.toml",
        "--checkpoint",
        "tiny",
        "--inputs",
        &inputs,
        "--svg",
        &target,
    ]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let svg = std::fs::read_to_string(&target).expect("the map");
    let doc = Document::parse(&svg).expect("an XML document");
    let terms = rects(&doc, "term");
    let readers = rects(&doc, "lane-reader");
    let mut seen: Vec<String> = Vec::new();
    for mark in &readers {
        let (reader, owner) = (
            mark.attribute("data-state").expect("reader"),
            mark.attribute("data-owner").expect("owner"),
        );
        seen.push(format!("{reader} {owner}"));
        let term = terms
            .iter()
            .find(|t| t.attribute("data-state") == Some(owner))
            .unwrap_or_else(|| panic!("no term of {owner}"));
        close(number(*mark, "x"), number(*term, "x"), reader);
        close(number(*mark, "width"), number(*term, "width"), reader);
        assert!(
            title(*mark).contains("no bytes of its own"),
            "{}",
            title(*mark)
        );
        // No term of the reader's own.
        assert!(
            terms
                .iter()
                .all(|t| t.attribute("data-state") != Some(reader))
        );
    }
    seen.sort();
    let mut expected: Vec<String> = (5..=8)
        .flat_map(|l| ["k", "v"].map(|s| format!("l{l}.swa_reader.{s} l3.swa.{s}")))
        .chain(["k", "v"].map(|s| format!("l9.attn_reader.{s} l4.attn.{s}")))
        .collect();
    expected.sort();
    assert_eq!(seen, expected);
}

/// Issue 22: a circuit whose file name holds control characters still maps to well-formed
/// XML (the name is shown with the characters written as `\u{..}`).
#[cfg(unix)]
#[test]
fn a_file_name_with_control_characters_is_well_formed_xml() {
    let circuit = scratch_path("llama\u{1}\u{1b}[31m.toml");
    let text = std::fs::read_to_string(common::root().join("circuits/llama.toml")).unwrap();
    std::fs::write(&circuit, text).unwrap();
    let target = scratch_path("control.svg");
    let out = run(&["plan", &circuit, "--svg", &target]);
    assert_eq!(out.code, 0, "stderr:\n{}", out.stderr);
    let svg = std::fs::read_to_string(&target).expect("the map is written");
    let doc = Document::parse(&svg).expect("the map is XML");
    assert!(
        doc.descendants().any(|n| n
            .text()
            .is_some_and(|t| t.contains("llama\\u{1}\\u{1b}[31m.toml"))),
        "the name is shown escaped"
    );
}
