//! The IR of a circuit's plans: its size classes (`CLASSES`, one list for every checkpoint)
//! and each checkpoint's static table (rows in plan order, where each position's rows start),
//! built from `Circuit::instances`, and the tokens of the table's runtime twin,
//! `__private_v0_1::Table::new(rows, &CLASSES, position_rows, readers)`, which derives every
//! other table (terms, counts, first rows, layout order) at compile time.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The rows are `Circuit::instances` x the block's states (but those that read another
//!   layer's KV, `shares`, which have none) x `Holding::of_kind`, the order the dynamic plan
//!   sizes in; a block instance's terms are consecutive rows of consecutive
//!   classes, so its `lay` takes a window of the classes.
//! - Terms that size alike (one state of one block template, one holding, one section) share
//!   a size class, in every checkpoint of the circuit: the classes are listed in first use over
//!   the checkpoints in file order, a block's all at once, so a block instance's classes are
//!   consecutive in every checkpoint. Each state's unit is computed once per plan (`units()`).

use std::collections::{BTreeMap, BTreeSet};

use metrale_circuit::Holding;
use metrale_circuit::dynamic::decl::{Reach, Section};
use metrale_circuit::load::{
    CheckpointSpec,
    circuit::{BlockTemplate, StateTemplate},
};
use metrale_circuit::parallel::Position;
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Emitter;
use super::names::{camel_case, index};

/// One size class: `(block, state, holding, section, unit)`; `unit` indexes the circuit's
/// `units()`.
pub(super) type Class<'a> = (
    &'a BlockTemplate,
    &'a StateTemplate,
    Holding,
    Section,
    usize,
);

/// The static table of one checkpoint's plan: the IR whose runtime twin is
/// `__private_v0_1::Table`, built once per checkpoint from `Circuit::instances`.
pub(super) struct Table<'a> {
    /// `(state id, class)` per term, in plan order; the class indexes the circuit's classes.
    pub(super) rows: Vec<(String, usize)>,
    /// Where each term's block instance sits, in plan order (which pipeline rank holds it).
    pub(super) places: Vec<Position>,
    /// The circuit's classes (`Emitter::classes`), which the rows index.
    pub(super) classes: Vec<Class<'a>>,
}

impl<'a> Emitter<'a> {
    /// The size classes of the circuit: those of every checkpoint's table, in first use over
    /// the checkpoints in file order. Found on the first call, one pass over the checkpoints.
    pub(super) fn classes(&self) -> &[Class<'a>] {
        self.classes.get_or_init(|| {
            let mut classes = Vec::new();
            for checkpoint in self.circuit.checkpoints() {
                classes = self.table_over(checkpoint, classes).classes;
            }
            classes
        })
    }

    /// The table of `checkpoint`'s plan, its rows indexing the circuit's classes.
    pub(super) fn table(&self, checkpoint: &CheckpointSpec) -> Table<'a> {
        self.table_over(checkpoint, self.classes().to_vec())
    }

    /// The table of `checkpoint`'s plan over `classes`, each class its rows need and `classes`
    /// lacks appended.
    fn table_over(&self, checkpoint: &CheckpointSpec, classes: Vec<Class<'a>>) -> Table<'a> {
        let mut table = Table {
            rows: Vec::new(),
            places: Vec::new(),
            classes,
        };
        for instance in self.circuit.instances(checkpoint) {
            let Some(block) = self.stateful(&instance.block) else {
                continue;
            };
            // A KV side that reads another layer's KV has no row: its field holds its owner's.
            for state in block.states().iter().filter(|s| super::has_terms(s)) {
                let same = |b: &BlockTemplate, s: &StateTemplate| {
                    b.name() == block.name() && s.local() == state.local()
                };
                let unit = self.unit_index(block, state);
                let id = format!("{}.{}", instance.prefix, state.local());
                for &holding in Holding::of_kind(state.kind()) {
                    let class = table
                        .classes
                        .iter()
                        .position(|(b, s, h, sec, _)| {
                            same(b, s) && *h == holding && *sec == instance.section()
                        })
                        .unwrap_or_else(|| {
                            table
                                .classes
                                .push((block, state, holding, instance.section(), unit));
                            table.classes.len() - 1
                        });
                    table.rows.push((id.clone(), class));
                    table.places.push(instance.position);
                }
            }
        }
        table
    }

    /// How many terms the plan of `checkpoint` has: its `TERM_COUNT`.
    pub(super) fn term_count(&self, checkpoint: &CheckpointSpec) -> usize {
        self.table(checkpoint).rows.len()
    }

    /// `__abi::Table::new([rows], &super::CLASSES, [position rows], readers)`: the table's
    /// `const` value (`readers` is `&SHARES` or `&[]`).
    pub(super) fn table_value(
        checkpoint: &CheckpointSpec,
        table: &Table<'_>,
        readers: &TokenStream,
    ) -> TokenStream {
        let rows = table.rows.iter().map(|(id, class)| {
            let class = index(*class);
            quote!((#id, #class))
        });
        let starts = place_starts(&table.places, checkpoint.layer_kinds().len())
            .into_iter()
            .map(index);
        quote!(__abi::Table::new([#(#rows),*], &super::CLASSES, [#(#starts),*], #readers))
    }

    /// `CLASSES` and `CLASS_COUNT`: the circuit's size classes, which every checkpoint's table
    /// indexes; and `POOL_LAYERS`, the bound of a page pool's layers its views are read with.
    pub(super) fn classes_items(&self) -> TokenStream {
        let classes = self.classes();
        let count = index(classes.len());
        let value = self.classes_value(classes);
        // Two pool layers a position at most (one attention, one recurrent), over the most
        // layers of a checkpoint and the prologue, epilogue and draft head.
        let most_layers = self
            .circuit
            .checkpoints()
            .iter()
            .map(|checkpoint| checkpoint.layer_kinds().len())
            .max()
            .unwrap_or_default();
        let pool_layers = index(2 * (most_layers + 3));
        quote! {
            #[doc = " How many size classes the circuit's plans have."]
            const CLASS_COUNT: usize = #count;

            #[doc = " The most layers a page pool of the circuit's plans can have: two a position."]
            const POOL_LAYERS: usize = #pool_layers;

            #[doc = " The size classes of every checkpoint's plan: the terms of one state of one"]
            #[doc = " block template, holding one thing in one section, sized once per plan. Each is"]
            #[doc = " `SizeClass::of(kind, holding, section, verify, lifetime, unit, reach, group)`."]
            const CLASSES: [__abi::SizeClass; CLASS_COUNT] = #value;
        }
    }

    /// The `CLASSES` value: one `SizeClass::of(..)` line per class (`C::of`), in a block that names the
    /// variants it uses (each from its enum's full path, so nothing outside the block changes
    /// meaning: `Holding::Checkpoint` beside the circuit's `Checkpoint`).
    fn classes_value(&self, classes: &[Class<'_>]) -> TokenStream {
        let mut used: BTreeMap<&str, BTreeSet<String>> = BTreeMap::new();
        let mut name = |path: &'static str, variant: &str| {
            let variant = camel_case(variant);
            used.entry(path).or_default().insert(variant.clone());
            format_ident!("{variant}")
        };
        let mut option = BTreeSet::from(["None".to_owned()]);
        let lines: Vec<TokenStream> = classes
            .iter()
            .map(|(_, state, holding, section, unit)| {
                let group = index(metrale_circuit::__private_v0_1::group(
                    state.kind(),
                    *holding,
                    state.lifetime(),
                ));
                let kind = name("StateKind", state.kind().name());
                let holding = name("Holding", holding.name());
                let section = name("Section", section.name());
                let lifetime = name("Lifetime", state.lifetime().name());
                let verify = if let Some(steps) = state.verify() {
                    option.insert("Some".to_owned());
                    let steps = name("VerifySteps", steps.name());
                    quote!(Some(#steps))
                } else {
                    quote!(None)
                };
                let unit = index(*unit);
                let reach = self.reach_index(state).map_or_else(
                    || quote!(None),
                    |reach| {
                        option.insert("Some".to_owned());
                        let i = index(reach.tokens());
                        let variant = match reach {
                            Reach::Window(_) => name("Reach", "window"),
                            Reach::Chunk(_) => name("Reach", "chunk"),
                            Reach::Fixed(_) => name("Reach", "fixed"),
                        };
                        quote!(Some(#variant(#i)))
                    },
                );
                quote!(C::of(#kind, #holding, #section, #verify, #lifetime, #unit, #reach, #group))
            })
            .collect();
        let imports = used.iter().map(|(path, variants)| {
            let variants = variants.iter().map(|v| format_ident!("{v}"));
            let path = match *path {
                "StateKind" => quote!(__rt::StateKind),
                "Holding" => quote!(__rt::Holding),
                "Lifetime" => quote!(__rt::Lifetime),
                "Section" => quote!(__rt::dynamic::decl::Section),
                "VerifySteps" => quote!(__rt::dynamic::decl::VerifySteps),
                _ => quote!(__rt::dynamic::decl::Reach),
            };
            quote!(use #path::{#(#variants),*};)
        });
        let option = option.iter().map(|v| format_ident!("{v}"));
        quote! {{
            use __abi::SizeClass as C;
            use ::core::option::Option::{#(#option),*};
            #(#imports)*
            [#(#lines),*]
        }}
    }

    /// The index of `state` of `block` in the circuit's `units()`: states of the stateful
    /// blocks, block by block in definition order.
    fn unit_index(&self, block: &BlockTemplate, state: &StateTemplate) -> usize {
        self.unit_states()
            .position(|(b, s)| b.name() == block.name() && s.local() == state.local())
            .unwrap_or_default()
    }
}

/// The circuit's class of the first term of an instance of `block` in `section`: the first of
/// its window (a block's classes are consecutive).
pub(super) fn first_class(classes: &[Class<'_>], block: &BlockTemplate, section: Section) -> usize {
    classes
        .iter()
        .position(|(b, s, _, sec, _)| {
            b.name() == block.name() && *sec == section && super::has_terms(s)
        })
        .unwrap_or_default()
}

/// Where each place's rows start, for a table whose rows sit at `places` (in plan order) in a
/// checkpoint of `layers` layers: the first row of each layer, of the epilogue and of the draft
/// head, as `__private_v0_1::position_of` reads them (a place without rows starts where the
/// next does).
fn place_starts(places: &[Position], layers: usize) -> Vec<usize> {
    // A place's rank in plan order: the prologue 0, layer k k + 1, then epilogue and draft.
    let rank = |place: &Position| match *place {
        Position::Prologue => 0,
        Position::Layer(layer) => usize::try_from(layer).map_or(usize::MAX, |l| l + 1),
        Position::Epilogue => layers + 1,
        Position::Draft => layers + 2,
    };
    // Entry j is the first row whose rank passes j: one pass, the rows being in rank order.
    let mut starts = Vec::with_capacity(layers + 2);
    for (row, place) in places.iter().enumerate() {
        while starts.len() < rank(place).min(layers + 2) {
            starts.push(row);
        }
    }
    starts.resize(layers + 2, places.len());
    starts
}
