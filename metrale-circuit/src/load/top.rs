//! The top level of a circuit file and of a block library, and the `[layout]`.
//!
//! This module owns: the top-level keys (`schema`, `arch`, `dims`, `include`, the block lists,
//! `[layout]`, and the dispatch of `[block.*]` and `[checkpoint.*]` to their stages); the
//! layout rules (interval `period`; a pattern layout's `[layout.symbols]` and repeated
//! `pattern`, schema 2; the `[layout.blocks]` lists; every produced layer kind having blocks);
//! the lists' duplicate and instance-prefix rules.
//!
//! Invariants:
//! - A required key that is missing is reported at the table that lacks it (the file start,
//!   line 1 column 1, for the top level).

use std::ops::Range;

use super::raw::{FULL, FileSyntax, LINEAR, Produced, RawBlock, RawDerived, RawLayout, Top};
use super::{blocks, checkpoints, config, derive, mixup};
use crate::load::circuit::LayerRule;
use crate::load::text::diag::{Diagnostic, did_you_mean};
use crate::load::text::limits::{MAX_BLOCKS_PER_LIST, MAX_DIMS, MAX_LAYER_KINDS, MAX_LIBRARIES};
use crate::load::text::walk::{Table, Text, Value, Walk, entries, field};

/// The top-level keys of a circuit file (kept in `mixup`, which knows both files' keys).
pub(crate) use super::mixup::CIRCUIT_KEYS;

/// The top-level keys of a block library.
pub(crate) const LIBRARY_KEYS: &[&str] = &["include", "block"];

/// The keys of `[layout]`.
pub(crate) const LAYOUT_KEYS: &[&str] = &["kind", "period", "symbols", "pattern", "blocks"];

/// The layout kinds.
pub(crate) const LAYOUT_KINDS: &[&str] = &["interval", "list", "pattern"];

/// The keys of `[layout]` only a pattern layout has (schema 2).
const PATTERN_KEYS: &[&str] = &["symbols", "pattern"];

/// The layer kinds an interval layout produces.
pub(crate) const INTERVAL_KINDS: &[&str] = &[LINEAR, FULL];

/// The schema versions this loader reads: 1; 2, which adds keys and syntax to it; 3 and 4,
/// which add more (each file of an older schema keeps loading exactly as before).
pub(crate) const SCHEMAS: [u64; 4] = [1, 2, 3, 4];

/// Walks the top level of the circuit file.
pub(crate) fn walk_circuit(w: &mut Walk<'_>, root: &Table<'_>) -> FileSyntax {
    w.check_keys(root, CIRCUIT_KEYS, "the circuit");
    let mut top = Top {
        schema: schema(w, root, mixup::help(root, mixup::Kind::Circuit)),
        arch: arch(w, root),
        ..Top::default()
    };
    if let Some((_, v)) = field(root, "description") {
        top.description = w.string("description", v).map(str::to_owned);
    }
    for key in ["layer_module", "draft_module"] {
        if let Some((_, v)) = field(root, key) {
            w.string(key, v);
        }
    }
    if let Some((valid, refused)) = dims(w, root) {
        top.dims = Some(valid);
        top.refused_dims = refused;
    }
    top.prologue = block_list(w, root, "prologue");
    top.epilogue = block_list(w, root, "epilogue");
    top.draft = block_list(w, root, "draft");
    main_prefixes(w, &top.prologue, &top.epilogue);
    let layout = layout(w, root, top.schema);
    top.derived = derive::walk(w, root, top.schema, top.dims.as_deref());
    let derived: Vec<&str> = top.derived.iter().map(|d| d.name.text.as_str()).collect();
    let declared = top
        .dims
        .as_deref()
        .map(|valid| (valid, top.refused_dims.as_slice()));
    let (checkpoints, produced) =
        checkpoints::walk(w, root, top.schema, declared, &derived, layout.as_ref());
    if let Some(layout) = &layout {
        layer_kinds_have_blocks(w, layout, &produced);
    }
    top.config = config::walk(
        w,
        root,
        &config::Context {
            schema: top.schema,
            layout: layout.as_ref(),
            dims: top.dims.as_deref(),
            derived: &derived,
        },
    );
    top.tensor_parallel = tensor_parallel(w, root, top.schema, top.dims.as_deref(), &top.derived);
    top.layout = layout;
    top.checkpoints = checkpoints;
    FileSyntax {
        includes: includes(w, root),
        blocks: blocks_of(w, root),
        top: Some(top),
    }
}

/// Walks the top level of a block library.
pub(crate) fn walk_library(w: &mut Walk<'_>, root: &Table<'_>) -> FileSyntax {
    for (key, _) in entries(root) {
        let name: &str = key.get_ref();
        if !LIBRARY_KEYS.contains(&name) {
            let mut d = Diagnostic::error(format!("`{name}` is not allowed in a block library"))
                .label("not allowed here")
                .help("a block library holds only `include` and `[block.<name>]` tables");
            if let Some(near) = did_you_mean(name, LIBRARY_KEYS) {
                d = d.help(format!("did you mean `{near}`?"));
            }
            w.report(key.span(), d);
        }
    }
    FileSyntax {
        includes: includes(w, root),
        blocks: blocks_of(w, root),
        top: None,
    }
}

/// `schema = 1`, `2`, `3` or `4`: the version, when valid. `mixup` is the help for a file that looks
/// like an inputs file, which has no `schema`.
fn schema(w: &mut Walk<'_>, root: &Table<'_>, mixup: Option<String>) -> Option<u64> {
    let Some((_, v)) = field(root, "schema") else {
        let mut d = Diagnostic::error("missing `schema`")
            .label("the circuit starts here")
            .help("add `schema = 4` (or `1`, `2`, `3`) at the top of the circuit");
        if let Some(mixup) = mixup {
            d = d.help(mixup);
        }
        w.report(0..0, d);
        return None;
    };
    let n = w.u64("schema", v)?;
    if SCHEMAS.contains(&n) {
        return Some(n);
    }
    w.report(
        v.span(),
        Diagnostic::error(format!("unsupported schema `{n}`"))
            .label("unsupported")
            .help("this loader reads `schema = 1`, `2`, `3` and `4`"),
    );
    None
}

/// `arch`: required, a Rust identifier.
fn arch(w: &mut Walk<'_>, root: &Table<'_>) -> Option<String> {
    let Some((_, v)) = field(root, "arch") else {
        w.report(
            0..0,
            Diagnostic::error("missing `arch`")
                .label("the circuit starts here")
                .help("add `arch = \"<name>\"`: the generated module's name"),
        );
        return None;
    };
    let arch = w.string("arch", v)?;
    w.identifier(arch, v.span(), "arch")
        .then(|| arch.to_owned())
}

/// `dims`: required, unique identifiers, never `x`. Returns the valid names (each once) and
/// the refused ones.
fn dims(w: &mut Walk<'_>, root: &Table<'_>) -> Option<(Vec<Text>, Vec<String>)> {
    let Some((_, v)) = field(root, "dims") else {
        w.report(
            0..0,
            Diagnostic::error("missing `dims`")
                .label("the circuit starts here")
                .help("add `dims = [\"hidden\", ...]`: the names shapes may read"),
        );
        return None;
    };
    let mut valid: Vec<Text> = Vec::new();
    let mut refused = Vec::new();
    for dim in w.strings_at_most("dims", v, MAX_DIMS, "dims")? {
        let span = dim.loc.span.clone();
        if dim.text == "x" {
            w.report(
                span,
                Diagnostic::error("a dim may not be named `x`")
                    .label("reserved")
                    .help("`x` separates the axes of a shape"),
            );
            refused.push(dim.text);
        } else if !w.identifier(&dim.text, span.clone(), "dim") {
            refused.push(dim.text);
        } else if let Some(first) = valid.iter().find(|d| d.text == dim.text) {
            w.duplicate(span, &first.loc, format!("duplicate dim `{}`", dim.text));
        } else {
            valid.push(dim);
        }
    }
    Some((valid, refused))
}

/// `tensor_parallel` (schema 2): the declared dims a tensor-parallel rank holds a share of, each
/// once; not a derived dim (it follows the dims it reads), nor a dim a derived dim divides by
/// (a rank's share would widen the derived dim: `head_dim = "hidden / q_heads"`).
fn tensor_parallel(
    w: &mut Walk<'_>,
    root: &Table<'_>,
    schema: Option<u64>,
    dims: Option<&[Text]>,
    raw_derived: &[RawDerived],
) -> Vec<String> {
    let Some((key, v)) = field(root, "tensor_parallel") else {
        return Vec::new();
    };
    if schema == Some(1) {
        w.report(
            key,
            Diagnostic::error("`tensor_parallel` needs `schema = 2`")
                .label("a schema-2 key")
                .help("write `schema = 2` at the top of the circuit"),
        );
        return Vec::new();
    }
    let Some(names) = w.strings_at_most("tensor_parallel", v, MAX_DIMS, "dims") else {
        return Vec::new();
    };
    let declared: Vec<&str> = dims
        .unwrap_or(&[])
        .iter()
        .map(|d| d.text.as_str())
        .collect();
    let derived: Vec<&str> = raw_derived.iter().map(|d| d.name.text.as_str()).collect();
    let divided = derive::divisors(raw_derived, &declared);
    let mut out: Vec<String> = Vec::with_capacity(names.len());
    for name in names {
        let span = name.loc.span.clone();
        if out.contains(&name.text) {
            w.report(
                span,
                Diagnostic::error(format!(
                    "dim `{}` is named twice in `tensor_parallel`",
                    name.text
                ))
                .label("named again"),
            );
        } else if derived.contains(&name.text.as_str()) {
            w.report(
                span,
                Diagnostic::error(format!(
                    "derived dim `{}` cannot be in `tensor_parallel`",
                    name.text
                ))
                .label("a derived dim")
                .help(
                    "list the declared dims it reads: a derived dim is computed from a rank's dims",
                ),
            );
        } else if dims.is_some() && !declared.contains(&name.text.as_str()) {
            w.report(
                span,
                Diagnostic::error(format!("unknown dim `{}` in `tensor_parallel`", name.text))
                    .label("not a declared dim")
                    .expected_one_of("dims", &name.text, &declared),
            );
        } else if let Some(divides) = declared
            .iter()
            .position(|d| *d == name.text)
            .and_then(|k| divided.get(k).copied().flatten())
        {
            divided_by(w, span, &name.text, divides);
        } else {
            out.push(name.text);
        }
    }
    out
}

/// Reports dim `dim`, listed in `tensor_parallel` at `span`, as one that derived dim
/// `divides.by` divides by.
fn divided_by(w: &mut Walk<'_>, span: Range<usize>, dim: &str, divides: derive::Divides<'_>) {
    let by = divides.by;
    let place = w.sink.place(&by.expr.at.loc);
    let mut d = Diagnostic::error(format!(
        "dim `{dim}` cannot be in `tensor_parallel`: derived dim `{}` divides by it",
        by.name.text
    ))
    .label("divided by in `[derive]`")
    .note(format!(
        "`{} = \"{}\"` at {place}",
        by.name.text, by.expr.shape.text
    ));
    if let Some(via) = divides.via {
        d = d.note(format!(
            "it divides by `{}`, which reads `{dim}`: `{} = \"{}\"`",
            via.name.text, via.name.text, via.expr.shape.text
        ));
    }
    w.report(
        span,
        d.help(format!(
            "each rank's share of `{dim}` would widen `{}` instead of splitting it: remove \
             `{dim}` from `tensor_parallel` (a derived dim follows the dims it reads)",
            by.name.text
        )),
    );
}

/// A list of block names (`prologue`, `epilogue`, `draft`); a name twice is an error.
fn block_list(w: &mut Walk<'_>, root: &Table<'_>, key: &str) -> Vec<Text> {
    let Some((_, v)) = field(root, key) else {
        return Vec::new();
    };
    let names = w
        .strings_at_most(key, v, MAX_BLOCKS_PER_LIST, &format!("blocks in `{key}`"))
        .unwrap_or_default();
    no_repeats(w, &names, &format!("`{key}`"));
    names
}

/// Reports every name of `names` already named earlier in the same list.
fn no_repeats(w: &mut Walk<'_>, names: &[Text], list: &str) {
    for (i, name) in names.iter().enumerate() {
        if let Some(first) = names
            .get(..i)
            .and_then(|n| n.iter().find(|n| n.text == name.text))
        {
            let place = w.place(first.loc.span.clone());
            w.report(
                name.loc.span.clone(),
                Diagnostic::error(format!("block `{}` is named twice in {list}", name.text))
                    .label("named again")
                    .note(format!("first named at {place}"))
                    .help("its instance prefix would repeat"),
            );
        }
    }
}

/// A block in both the prologue and the epilogue would repeat its instance prefix `<block>`.
fn main_prefixes(w: &mut Walk<'_>, prologue: &[Text], epilogue: &[Text]) {
    for name in epilogue {
        if let Some(first) = prologue.iter().find(|p| p.text == name.text) {
            let place = w.place(first.loc.span.clone());
            w.report(
                name.loc.span.clone(),
                Diagnostic::error(format!(
                    "instance prefix `{}` would repeat: block `{}` is also in `prologue`",
                    name.text, name.text
                ))
                .label("named again")
                .note(format!("named in `prologue` at {place}")),
            );
        }
    }
}

/// `include`: valid strings; a name twice in the list is an error (dropped).
fn includes(w: &mut Walk<'_>, root: &Table<'_>) -> Vec<Text> {
    let Some((_, v)) = field(root, "include") else {
        return Vec::new();
    };
    let names = w
        .strings_at_most("include", v, MAX_LIBRARIES, "includes")
        .unwrap_or_default();
    let mut out: Vec<Text> = Vec::with_capacity(names.len());
    for name in names {
        if let Some(first) = out.iter().find(|n| n.text == name.text) {
            let place = w.place(first.loc.span.clone());
            w.report(
                name.loc.span.clone(),
                Diagnostic::error(format!("`{}` is included twice", name.text))
                    .label("included again")
                    .note(format!("first included at {place}")),
            );
        } else {
            out.push(name);
        }
    }
    out
}

/// The `[block.*]` tables of a file, in the order they first appear.
fn blocks_of(w: &mut Walk<'_>, root: &Table<'_>) -> Vec<RawBlock> {
    match field(root, "block") {
        Some((_, v)) => blocks::walk(w, v),
        None => Vec::new(),
    }
}

/// `[layout]`: required; its kind, period or symbols and pattern, and blocks.
fn layout(w: &mut Walk<'_>, root: &Table<'_>, schema: Option<u64>) -> Option<RawLayout> {
    let Some((_, v)) = field(root, "layout") else {
        w.report(
            0..0,
            Diagnostic::error("missing `[layout]`")
                .label("the circuit starts here")
                .help("add a `[layout]` table with `kind = \"interval\"` or `kind = \"list\"`"),
        );
        return None;
    };
    let table = w.table("layout", v)?;
    w.check_keys(table, LAYOUT_KEYS, "`[layout]`");
    let rule = layout_rule(w, table, v.span(), schema);
    let blocks_at = field(table, "blocks").map_or(v.span(), |(_, b)| b.span());
    let blocks = if let Some((_, b)) = field(table, "blocks") {
        layout_blocks(w, b, rule.as_ref())
    } else {
        w.report(
            v.span(),
            Diagnostic::error("missing `[layout.blocks]`")
                .label("this layout has no blocks")
                .help("add `[layout.blocks]` mapping each layer kind to its blocks"),
        );
        Vec::new()
    };
    Some(RawLayout {
        rule,
        blocks,
        blocks_at,
    })
}

/// `kind` and, for an interval layout, `period >= 1`; for a pattern layout (schema 2), its
/// symbols and pattern. The keys of another kind are refused (in a schema-1 file, the pattern
/// ones as needing schema 2).
fn layout_rule(
    w: &mut Walk<'_>,
    table: &Table<'_>,
    at: Range<usize>,
    schema: Option<u64>,
) -> Option<LayerRule> {
    let Some((_, kind_value)) = field(table, "kind") else {
        w.report(
            at,
            Diagnostic::error("missing `kind` in `[layout]`")
                .label("this layout has no kind")
                .expected_one_of("layout kinds", "", LAYOUT_KINDS),
        );
        return None;
    };
    let kind = w.string("kind", kind_value)?;
    let period = field(table, "period");
    let schema_1 = schema == Some(1);
    if kind == "interval" || kind == "list" {
        for key in PATTERN_KEYS {
            let Some((span, _)) = field(table, key) else {
                continue;
            };
            let d = if schema_1 {
                Diagnostic::error(format!("`{key}` in `[layout]` needs `schema = 2`"))
                    .label("a schema-2 key")
                    .help("write `schema = 2` at the top of the circuit")
            } else {
                Diagnostic::error(format!("`{key}` is only for `kind = \"pattern\"` layouts"))
                    .label(format!("not for {kind} layout", kind = article(kind)))
                    .help("a pattern layout gives `[layout.symbols]` and a `pattern`")
            };
            w.report(span, d);
        }
    }
    match kind {
        "interval" => {
            let Some((_, p)) = period else {
                w.report(
                    at,
                    Diagnostic::error("missing `period` in an interval `[layout]`")
                        .label("this layout has no period")
                        .help("layer i is `full_attention` when (i + 1) % period == 0"),
                );
                return None;
            };
            let n = w.u64("period", p)?;
            if n == 0 {
                w.report(
                    p.span(),
                    Diagnostic::error("`period` must be at least 1").label("zero"),
                );
                return None;
            }
            Some(LayerRule::Interval { period: n })
        }
        "list" => {
            if let Some((key, _)) = period {
                w.report(
                    key,
                    Diagnostic::error("`period` is only for `kind = \"interval\"` layouts")
                        .label("not for a list layout")
                        .help("a list layout's checkpoints give `layer_kinds = [...]`"),
                );
            }
            Some(LayerRule::List)
        }
        "pattern" if schema_1 => {
            w.report(
                kind_value.span(),
                Diagnostic::error("`kind = \"pattern\"` needs `schema = 2`")
                    .label("a schema-2 layout kind")
                    .help("write `schema = 2` at the top of the circuit"),
            );
            None
        }
        "pattern" => {
            if let Some((key, _)) = period {
                w.report(
                    key,
                    Diagnostic::error("`period` is only for `kind = \"interval\"` layouts")
                        .label("not for a pattern layout")
                        .help("a pattern layout gives `[layout.symbols]` and a `pattern`"),
                );
            }
            pattern_rule(w, table, at)
        }
        other => {
            w.report(
                kind_value.span(),
                Diagnostic::error(format!("unknown layout kind `{other}`"))
                    .label("not a layout kind")
                    .expected_one_of("layout kinds", other, LAYOUT_KINDS),
            );
            None
        }
    }
}

/// "an interval" or "a list".
fn article(kind: &str) -> String {
    if kind.starts_with(['a', 'e', 'i', 'o', 'u']) {
        format!("an {kind}")
    } else {
        format!("a {kind}")
    }
}

/// A pattern layout's rule: `[layout.symbols]` (required) and `pattern` (optional, non-empty,
/// every character a symbol). `None` (reported) when either is invalid, so checkpoints do not
/// report again what the layout already did.
fn pattern_rule(w: &mut Walk<'_>, table: &Table<'_>, at: Range<usize>) -> Option<LayerRule> {
    let Some((_, v)) = field(table, "symbols") else {
        w.report(
            at,
            Diagnostic::error("missing `[layout.symbols]` in a pattern `[layout]`")
                .label("this layout has no symbols")
                .help("add `[layout.symbols]` mapping each pattern character to its layer kind, e.g. `M = \"mamba\"`"),
        );
        return None;
    };
    let symbols = symbols(w, v);
    let pattern = match field(table, "pattern") {
        None => None,
        Some((_, p)) => {
            let text = w.string("pattern", p)?;
            if text.is_empty() {
                w.report(
                    p.span(),
                    Diagnostic::error("`pattern` in `[layout]` is empty")
                        .label("empty")
                        .help(
                            "write at least one character: the pattern repeats to cover the layers",
                        ),
                );
                return None;
            }
            let at = w.str_at(p.span(), text);
            checkpoints::pattern_kinds(w, symbols.as_deref()?, text, &at)?;
            Some(text.to_owned())
        }
    };
    Some(LayerRule::Pattern {
        symbols: symbols?,
        pattern,
    })
}

/// `[layout.symbols]`: each key one character, each value a layer kind (an identifier). `None`
/// when any entry was refused (every entry is still checked).
fn symbols(w: &mut Walk<'_>, value: &Value<'_>) -> Option<Vec<(char, String)>> {
    let table = w.table("symbols", value)?;
    let mut out = Vec::with_capacity(table.len());
    let mut valid = true;
    for (i, (key, v)) in entries(table).into_iter().enumerate() {
        if !w.at_most(i + 1, MAX_LAYER_KINDS, key.span(), "symbols") {
            return None;
        }
        let name: &str = key.get_ref();
        let mut chars = name.chars();
        let symbol = if let (Some(c), None) = (chars.next(), chars.next()) {
            Some(c)
        } else {
            w.report(
                key.span(),
                Diagnostic::error(format!("symbol `{name}` is not one character"))
                    .label("not one character")
                    .help("each key of `[layout.symbols]` is the one character that stands for its layer kind in a pattern"),
            );
            None
        };
        let kind = w
            .string(name, v)
            .filter(|kind| w.identifier(kind, v.span(), "layer kind"));
        match (symbol, kind) {
            (Some(c), Some(kind)) => out.push((c, kind.to_owned())),
            _ => valid = false,
        }
    }
    valid.then_some(out)
}

/// `[layout.blocks]`: each layer kind's non-empty list of block names.
fn layout_blocks(
    w: &mut Walk<'_>,
    value: &Value<'_>,
    rule: Option<&LayerRule>,
) -> Vec<(Text, Vec<Text>)> {
    let Some(table) = w.table("blocks", value) else {
        return Vec::new();
    };
    let mut out = Vec::with_capacity(table.len().min(MAX_LAYER_KINDS));
    for (i, (key, v)) in entries(table).into_iter().enumerate() {
        if !w.at_most(i + 1, MAX_LAYER_KINDS, key.span(), "layer kinds") {
            break;
        }
        let kind: &str = key.get_ref();
        if matches!(rule, Some(LayerRule::Interval { .. })) && !INTERVAL_KINDS.contains(&kind) {
            w.report(
                key.span(),
                Diagnostic::error(format!(
                    "layer kind `{kind}` is never produced by an interval layout"
                ))
                .label("not an interval layer kind")
                .expected_one_of("layer kinds", kind, INTERVAL_KINDS),
            );
        }
        let what = format!("blocks in layer kind `{kind}`");
        let Some(names) = w.strings_at_most(kind, v, MAX_BLOCKS_PER_LIST, &what) else {
            continue;
        };
        if names.is_empty() {
            w.report(
                v.span(),
                Diagnostic::error(format!("layer kind `{kind}` has no blocks"))
                    .label("empty")
                    .help("list at least one block"),
            );
        }
        no_repeats(w, &names, &format!("layer kind `{kind}`"));
        out.push((w.text(kind, key.span()), names));
    }
    out
}

/// Every layer kind some checkpoint produces must have an entry in `[layout.blocks]`.
fn layer_kinds_have_blocks(w: &mut Walk<'_>, layout: &RawLayout, produced: &[Produced]) {
    let mut reported: Vec<&str> = Vec::new();
    for p in produced {
        let kind = p.kind.as_str();
        if reported.contains(&kind) || layout.blocks.iter().any(|(k, _)| k.text == kind) {
            continue;
        }
        reported.push(kind);
        w.report(
            layout.blocks_at.clone(),
            Diagnostic::error(format!("layer kind `{kind}` has no blocks"))
                .label("no entry for it here")
                .note(format!(
                    "layer {} of checkpoint `{}` is `{kind}`",
                    p.layer, p.checkpoint
                ))
                .help(format!(
                    "add `{kind} = [\"<block>\", ...]` to `[layout.blocks]`"
                )),
        );
    }
}
