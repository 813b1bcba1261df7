//! The loader's `reserved` list is complete: every name the generated code defines on a type
//! beside those a circuit gives it, where a circuit's name could meet it, is in the list the
//! loader refuses circuit names against. So a new generated method, field or associated item
//! that a circuit's name could take fails here until it is added to the list (and so refused,
//! located, by `check`), rather than making a loaded circuit generate code that does not
//! compile (a derived dim named `on_tp` once gave a second `Dims::on_tp`, E0592).
//!
//! Each generated module of the zoo (and of a circuit with a format key's layouts) is parsed
//! with syn; for each type whose members the circuit names, the members the circuit does not
//! give are its fixed ones, and those a circuit name could spell must be reserved:
//! - `Dims`: no fixed field; its inherent methods besides the derived dims are
//!   `DIMS_METHODS`;
//! - a checkpoint's `StatePlan`: its fields besides `l<i>` and the stateful prologue and
//!   epilogue blocks are `PLAN_FIELDS`;
//! - `Formats`, `<Block>Block`, `<Kind>Layer`, `Draft`: no fixed field;
//! - `Checkpoint`, `AnyPlan`: their camel-case items besides the checkpoints' variants are
//!   `CHECKPOINT_ITEMS`; `<Key>Format`'s besides the layouts' are `FORMAT_ITEMS`; `Layer` has
//!   none besides the layer kinds';
//! - the arch module: its snake-case items in the type namespace besides the checkpoints'
//!   modules are `ARCH_ITEMS`.
//!
//! And no reserved name is stale: each is defined by the generated code of some circuit.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use metrale_circuit::load::names::reserved::{
    ARCH_ITEMS, CHECKPOINT_ITEMS, DIMS_METHODS, FORMAT_ITEMS, PLAN_FIELDS,
};
use metrale_circuit::load::{Circuit, CircuitSource, load, names::camel_case};
use metrale_codegen::{Options, tokens};

/// The zoo's circuits, and a schema-3 one whose format key declares layouts (an enum
/// `<Key>Format` with a variant per layout).
fn circuits() -> Vec<Circuit> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../circuits");
    let mut paths: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("an entry").path())
        .filter(|path| path.extension().is_some_and(|e| e == "toml"))
        .collect();
    paths.sort();
    assert!(paths.len() >= 10, "the zoo is in {}", dir.display());
    let mut circuits: Vec<Circuit> = paths
        .iter()
        .map(|path| Circuit::load(path).unwrap_or_else(|e| panic!("{e}")))
        .collect();
    let layouts = "schema = 3\narch = \"t\"\ndims = [\"d\"]\n[layout]\nkind = \"interval\"\n\
                   period = 1\n[layout.blocks]\nfull_attention = [\"attn\"]\n\
                   [checkpoint.c]\nlayers = 1\ndims = { d = 256 }\n\
                   [[block.attn.state]]\nid = \"k\"\nkind = \"paged_kv\"\nformat = \"{kv}\"\n\
                   shape = \"d\"\n[block.attn.state.packings]\n\
                   fp8_ds = [{ part = \"k\", format = \"fp8\", shape = \"d\" }]\n";
    circuits.push(
        load(CircuitSource::Text {
            name: "packings.toml",
            text: layouts,
            dir: None,
        })
        .circuit
        .unwrap_or_else(|e| panic!("{e}")),
    );
    circuits
}

/// What the generated code defines on one type, by member kind.
#[derive(Default)]
struct Members {
    fields: BTreeSet<String>,
    variants: BTreeSet<String>,
    /// Inherent associated items: functions, constants and types.
    items: BTreeSet<String>,
}

/// The generated arch module of one circuit, read back.
#[derive(Default)]
struct Module {
    /// Types by (module path below the arch module, type name).
    types: BTreeMap<(String, String), Members>,
    /// The arch module's items: (name, whether in the type namespace).
    items: Vec<(String, bool)>,
}

fn read_module(circuit: &Circuit) -> Module {
    let tokens = tokens(circuit, &Options::default()).unwrap_or_else(|e| panic!("{e}"));
    let module: syn::ItemMod = syn::parse2(tokens).expect("the module parses");
    let mut out = Module::default();
    let items = module.content.map(|(_, items)| items).unwrap_or_default();
    for item in &items {
        let named = match item {
            syn::Item::Mod(m) => Some((m.ident.to_string(), true)),
            syn::Item::Struct(s) => Some((s.ident.to_string(), true)),
            syn::Item::Enum(e) => Some((e.ident.to_string(), true)),
            syn::Item::Type(t) => Some((t.ident.to_string(), true)),
            syn::Item::Trait(t) => Some((t.ident.to_string(), true)),
            syn::Item::Fn(f) => Some((f.sig.ident.to_string(), false)),
            syn::Item::Const(c) => Some((c.ident.to_string(), false)),
            syn::Item::Static(s) => Some((s.ident.to_string(), false)),
            _ => None,
        };
        out.items.extend(named);
        if let syn::Item::Use(u) = item {
            use_names(&u.tree, &mut out.items);
        }
    }
    collect("", &items, &mut out.types);
    out
}

/// The names a `use` brings into scope (each may be a type), renames included.
fn use_names(tree: &syn::UseTree, out: &mut Vec<(String, bool)>) {
    match tree {
        syn::UseTree::Path(p) => use_names(&p.tree, out),
        syn::UseTree::Name(n) => out.push((n.ident.to_string(), true)),
        syn::UseTree::Rename(r) => out.push((r.rename.to_string(), true)),
        syn::UseTree::Group(g) => g.items.iter().for_each(|t| use_names(t, out)),
        syn::UseTree::Glob(_) => {}
    }
}

/// Every struct, enum and inherent impl of `items` and of the modules below, by module path.
fn collect(path: &str, items: &[syn::Item], types: &mut BTreeMap<(String, String), Members>) {
    for item in items {
        match item {
            syn::Item::Struct(s) => {
                let members = types
                    .entry((path.to_owned(), s.ident.to_string()))
                    .or_default();
                for field in &s.fields {
                    if let Some(ident) = &field.ident {
                        members.fields.insert(ident.to_string());
                    }
                }
            }
            syn::Item::Enum(e) => {
                let members = types
                    .entry((path.to_owned(), e.ident.to_string()))
                    .or_default();
                members
                    .variants
                    .extend(e.variants.iter().map(|v| v.ident.to_string()));
            }
            syn::Item::Impl(i) if i.trait_.is_none() => {
                let syn::Type::Path(ty) = &*i.self_ty else {
                    continue;
                };
                let Some(name) = ty.path.segments.last() else {
                    continue;
                };
                let members = types
                    .entry((path.to_owned(), name.ident.to_string()))
                    .or_default();
                for item in &i.items {
                    match item {
                        syn::ImplItem::Fn(f) => members.items.insert(f.sig.ident.to_string()),
                        syn::ImplItem::Const(c) => members.items.insert(c.ident.to_string()),
                        syn::ImplItem::Type(t) => members.items.insert(t.ident.to_string()),
                        _ => false,
                    };
                }
            }
            syn::Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    let below = if path.is_empty() {
                        m.ident.to_string()
                    } else {
                        format!("{path}::{}", m.ident)
                    };
                    collect(&below, inner, types);
                }
            }
            _ => {}
        }
    }
}

/// A name a circuit's snake-case name could be: a field, a method, a module.
fn snake_shaped(name: &str) -> bool {
    metrale_circuit::load::names::is_snake_identifier(name)
}

/// A name `camel_case` could give a circuit's name: a variant.
fn camel_shaped(name: &str) -> bool {
    name.chars().next().is_some_and(|c| c.is_ascii_uppercase())
        && name.chars().all(|c| c.is_ascii_alphanumeric())
}

/// The fixed members (`all` less `given`) that `could_meet` says a circuit name could spell:
/// each must be in `reserved`.
fn check(
    failures: &mut Vec<String>,
    what: &str,
    all: impl IntoIterator<Item = String>,
    given: &BTreeSet<String>,
    could_meet: fn(&str) -> bool,
    reserved: &[&str],
) {
    for name in all {
        if !given.contains(&name) && could_meet(&name) && !reserved.contains(&name.as_str()) {
            failures.push(format!(
                "{what}: `{name}` is generated but not in the loader's `reserved` list"
            ));
        }
    }
}

/// What a circuit gives one generated type, and the reserved names beside it.
#[derive(Default)]
struct Given {
    /// Its fields named after the circuit.
    fields: BTreeSet<String>,
    /// The reserved names its other fields may take.
    fields_reserved: &'static [&'static str],
    /// Its inherent methods named after the circuit, and the reserved names of the others
    /// (a snake-case name meets a method).
    methods: Option<(BTreeSet<String>, &'static [&'static str])>,
    /// Its variants named after the circuit, and the reserved names of its other variants and
    /// items (a camel-case name meets both).
    variants: Option<(BTreeSet<String>, &'static [&'static str])>,
}

/// What `circuit` gives the type `ty` of module `path` (below the arch module, `""` for the
/// arch module itself); `None` for a type no circuit name reaches a member of (`Inputs`...).
fn given(circuit: &Circuit, path: &str, ty: &str) -> Option<Given> {
    let set = |names: &mut dyn Iterator<Item = String>| -> BTreeSet<String> { names.collect() };
    let stateful = |names: &[String]| -> BTreeSet<String> {
        names
            .iter()
            .filter(|n| circuit.block(n).is_some_and(|b| !b.states().is_empty()))
            .cloned()
            .collect()
    };
    if ty == "StatePlan" {
        let layers = circuit.checkpoint(path)?.layer_kinds().len();
        let mut fields = stateful(circuit.prologue());
        fields.extend(stateful(circuit.epilogue()));
        fields.extend((0..layers).map(|i| format!("l{i}")));
        return Some(Given {
            fields,
            fields_reserved: &PLAN_FIELDS,
            ..Given::default()
        });
    }
    if !path.is_empty() {
        return None;
    }
    let block = circuit
        .blocks()
        .iter()
        .find(|b| format!("{}Block", camel_case(b.name())) == ty);
    let kind = circuit
        .layout()
        .blocks()
        .iter()
        .find(|(k, _)| format!("{}Layer", camel_case(k)) == ty);
    let key = circuit
        .format_keys()
        .into_iter()
        .find(|k| format!("{}Format", camel_case(k)) == ty);
    Some(match ty {
        "Dims" => Given {
            fields: set(&mut circuit.dims().iter().cloned()),
            methods: Some((
                set(&mut circuit.derived().iter().map(|(n, _)| n.clone())),
                &DIMS_METHODS,
            )),
            ..Given::default()
        },
        "Formats" => Given {
            fields: set(&mut circuit.format_keys().into_iter().map(str::to_owned)),
            ..Given::default()
        },
        "Draft" => Given {
            fields: stateful(circuit.draft()),
            ..Given::default()
        },
        "Checkpoint" | "AnyPlan" => Given {
            variants: Some((
                set(&mut circuit.checkpoints().iter().map(|c| camel_case(c.name()))),
                &CHECKPOINT_ITEMS,
            )),
            ..Given::default()
        },
        "Layer" => Given {
            variants: Some((
                set(&mut circuit.layout().blocks().iter().map(|(k, _)| camel_case(k))),
                &[],
            )),
            ..Given::default()
        },
        _ => {
            if let Some(block) = block {
                Given {
                    fields: set(&mut block.states().iter().map(|s| s.local().to_owned())),
                    ..Given::default()
                }
            } else if let Some((_, blocks)) = kind {
                Given {
                    fields: stateful(blocks),
                    ..Given::default()
                }
            } else {
                let packings = circuit.key_packings(key?);
                Given {
                    variants: Some((
                        set(&mut packings.iter().map(|l| camel_case(l.name()))),
                        &FORMAT_ITEMS,
                    )),
                    ..Given::default()
                }
            }
        }
    })
}

#[test]
fn every_fixed_name_a_circuit_name_could_meet_is_reserved() {
    let mut failures = Vec::new();
    let mut defined: BTreeSet<String> = BTreeSet::new();
    for circuit in circuits() {
        let module = read_module(&circuit);
        let arch = circuit.arch();
        for ((path, ty), members) in &module.types {
            defined.extend(members.fields.iter().cloned());
            defined.extend(members.variants.iter().cloned());
            defined.extend(members.items.iter().cloned());
            let Some(given) = given(&circuit, path, ty) else {
                continue;
            };
            let at = format!("{arch}: {path}::{ty}");
            check(
                &mut failures,
                &format!("{at} fields"),
                members.fields.iter().cloned(),
                &given.fields,
                snake_shaped,
                given.fields_reserved,
            );
            if let Some((methods, reserved)) = given.methods {
                check(
                    &mut failures,
                    &format!("{at} methods"),
                    members.items.iter().cloned(),
                    &methods,
                    snake_shaped,
                    reserved,
                );
            }
            if let Some((variants, reserved)) = given.variants {
                check(
                    &mut failures,
                    &format!("{at} variants and items"),
                    members.variants.iter().chain(&members.items).cloned(),
                    &variants,
                    camel_shaped,
                    reserved,
                );
            }
        }
        defined.extend(module.items.iter().map(|(name, _)| name.clone()));
        let checkpoints: BTreeSet<String> = circuit
            .checkpoints()
            .iter()
            .map(|c| c.name().to_owned())
            .collect();
        check(
            &mut failures,
            &format!("{arch}: the arch module"),
            module
                .items
                .iter()
                .filter(|(_, types)| *types)
                .map(|(name, _)| name.clone()),
            &checkpoints,
            snake_shaped,
            &ARCH_ITEMS,
        );
    }
    for name in DIMS_METHODS
        .iter()
        .chain(&PLAN_FIELDS)
        .chain(&CHECKPOINT_ITEMS)
        .chain(&FORMAT_ITEMS)
        .chain(&ARCH_ITEMS)
    {
        if !defined.contains(*name) {
            failures.push(format!(
                "`{name}` is reserved but no generated module defines it: a stale entry"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
