//! One checkpoint's module: its `DIMS` and `LAYERS`, the static table of its plan's terms
//! (`TERMS`, size classes, layout order), and `StatePlan`, a struct with one named `Region`
//! field per term and a `const fn new` that sizes and lays them out.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The table rows are `Circuit::instances` x the block's states x `Holding::of_kind`, the
//!   order the dynamic plan sizes in; a block instance's terms are consecutive rows, so its
//!   `fill` and `regions` map row `first + j` to its `j`-th term.
//! - `new` lays the terms out with one branch-free step each (`static_plan::lay_all` over
//!   `STEPS`, the layout order the runtime's `layout_order` gives); only sizes so large that a
//!   sum could overflow fall back to the exact term-by-term replay (`static_plan::replay`),
//!   which names the term as the dynamic plan does.
//! - Terms that size alike (one state of one block template, one holding, one section) share a
//!   size class, sized once per plan; each state's unit is computed once.

use std::collections::HashMap;

use metrale_circuit::{BlockTemplate, Checkpoint, Holding, Section, StateTemplate};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Emitter;
use super::model::{block_type, layer_type, layer_variant};
use super::names::{ident, index, int};

/// The pieces of a checkpoint's `StatePlan` the emitter assembles.
#[derive(Default)]
struct PlanParts {
    /// The struct's fields.
    fields: TokenStream,
    /// Its empty literal's fields.
    empty: TokenStream,
    /// One `fill` per block instance, in plan order.
    fills: TokenStream,
    /// `(first row, self.<path>.regions())` per block instance.
    regions: Vec<(usize, TokenStream)>,
}

/// A size class: `(block, state, holding, section, unit index)`.
type Class<'a> = (
    &'a BlockTemplate,
    &'a StateTemplate,
    Holding,
    Section,
    usize,
);

/// The static table of one checkpoint's plan.
struct Table<'a> {
    /// `(state id, class)` per term, in plan order.
    rows: Vec<(String, usize)>,
    /// Row of each `(state id, holding)`.
    row_of: HashMap<(String, Holding), usize>,
    /// `(block, state, holding, section, unit)` per class, in first-use order.
    classes: Vec<(
        &'a BlockTemplate,
        &'a StateTemplate,
        Holding,
        Section,
        usize,
    )>,
    /// `(block, state)` per unit, in first-use order.
    units: Vec<(&'a BlockTemplate, &'a StateTemplate)>,
}

impl<'a> Emitter<'a> {
    fn table(&self, checkpoint: &Checkpoint) -> Table<'a> {
        let mut table = Table {
            rows: Vec::new(),
            row_of: HashMap::new(),
            classes: Vec::new(),
            units: Vec::new(),
        };
        for instance in self.circuit.instances(checkpoint) {
            let Some(block) = self.stateful(&instance.block) else {
                continue;
            };
            for state in &block.states {
                let same = |b: &BlockTemplate, s: &StateTemplate| {
                    b.name == block.name && s.local == state.local
                };
                let unit = table
                    .units
                    .iter()
                    .position(|(b, s)| same(b, s))
                    .unwrap_or_else(|| {
                        table.units.push((block, state));
                        table.units.len() - 1
                    });
                let id = format!("{}.{}", instance.prefix, state.local);
                for &holding in Holding::of_kind(state.kind) {
                    let class = table
                        .classes
                        .iter()
                        .position(|(b, s, h, sec, _)| {
                            same(b, s) && *h == holding && *sec == instance.section
                        })
                        .unwrap_or_else(|| {
                            table
                                .classes
                                .push((block, state, holding, instance.section, unit));
                            table.classes.len() - 1
                        });
                    table.row_of.insert((id.clone(), holding), table.rows.len());
                    table.rows.push((id.clone(), class));
                }
            }
        }
        table
    }

    /// `pub mod <checkpoint> { ... }`.
    pub(super) fn checkpoint_module(&self, checkpoint: &Checkpoint) -> TokenStream {
        let rt = &self.runtime;
        let name = ident(&checkpoint.name);
        let table = self.table(checkpoint);
        let n = index(table.rows.len());
        let c = index(table.classes.len());
        let layers = index(checkpoint.layer_kinds.len());

        let source = checkpoint
            .hf
            .as_ref()
            .map_or_else(String::new, |hf| format!(" of `{hf}`"));
        let doc = format!(
            "Checkpoint `{}`{source} (`{}`): {} layers.",
            checkpoint.name,
            checkpoint.origin,
            checkpoint.layer_kinds.len()
        );
        let dims = checkpoint.dims.iter().map(|(dim, value)| {
            let field = ident(dim);
            let value = int(*value);
            quote!(#field: #value)
        });
        let classes = self.class_literals(&table.classes);
        let rows = table.rows.iter().map(|(id, class)| {
            let class = index(*class);
            quote!((#id, #class))
        });
        let parts = self.plan_fields(checkpoint, &table);
        let fields = &parts.fields;
        let plan_impl = self.plan_impl(checkpoint, &table, &parts);
        let plan_doc = format!(
            "Every state term of checkpoint `{}`, sized and laid out: one `Region` per term,",
            checkpoint.name
        );

        quote! {
            #[doc = #doc]
            pub mod #name {
                #[doc = "The checkpoint's dims."]
                pub const DIMS: super::Dims = super::Dims { #(#dims),* };

                #[doc = "The number of layers."]
                pub const LAYERS: usize = #layers;

                #[doc = "The number of terms of the plan (and of `TERMS` and `regions()`)."]
                pub const TERM_COUNT: usize = #n;

                #[doc = "Every size class: terms of one state of one block template, holding one"]
                #[doc = "thing in one section, sized once per plan."]
                const CLASSES: [#rt::static_plan::SizeClass; #c] = [#(#classes),*];

                #[doc = "Every term's state id and size class, in plan order."]
                const TABLE: [(&str, usize); TERM_COUNT] = [#(#rows),*];

                #[doc = "Every term of the plan, in plan order: the order of `regions()`."]
                pub const TERMS: [#rt::static_plan::TermInfo; TERM_COUNT] =
                    #rt::static_plan::terms(&TABLE, &CLASSES);

                #[doc = "The first row of every size class: its faults are reported there."]
                const FIRST_ROW: [usize; #c] = #rt::static_plan::first_rows(&TABLE);

                #[doc = "The number of terms of every size class."]
                const CLASS_COUNT: [u64; #c] = #rt::static_plan::class_counts(&TABLE);

                #[doc = "Every term in layout order, with its size class and arena."]
                const STEPS: [#rt::static_plan::Step; TERM_COUNT] = #rt::static_plan::steps(&TABLE, &CLASSES);

                #[doc = #plan_doc]
                #[doc = "reachable as a field path (`plan.l0.<block>.<state>.<holding>`)."]
                #[derive(Debug, Clone, Copy, PartialEq, Eq)]
                pub struct StatePlan {
                    #fields
                    #[doc = "The arena sizes and per-lifetime totals."]
                    arena: #rt::Arena,
                }

                #plan_impl
            }
        }
    }

    /// The `SizeClass` literal of every class.
    fn class_literals(&self, classes: &[Class<'_>]) -> Vec<TokenStream> {
        let rt = &self.runtime;
        classes
            .iter()
            .map(|(_, state, holding, section, unit)| {
                let kind = format_ident!("{}", camel(state.kind.name()));
                let holding = format_ident!("{}", camel(holding.name()));
                let section = match section {
                    Section::Main => quote!(Main),
                    Section::Draft => quote!(Draft),
                };
                let verify = if let Some(steps) = state.verify {
                    let steps = format_ident!("{}", camel(steps.name()));
                    quote!(::core::option::Option::Some(#rt::VerifySteps::#steps))
                } else {
                    quote!(::core::option::Option::None)
                };
                let lifetime = format_ident!("{}", camel(state.lifetime.name()));
                let unit = index(*unit);
                quote! {
                    #rt::static_plan::SizeClass {
                        kind: #rt::StateKind::#kind,
                        holding: #rt::Holding::#holding,
                        section: #rt::Section::#section,
                        verify: #verify,
                        lifetime: #rt::Lifetime::#lifetime,
                        unit: #unit,
                    }
                }
            })
            .collect()
    }

    /// `impl StatePlan { new, regions, totals, layers }`.
    fn plan_impl(
        &self,
        checkpoint: &Checkpoint,
        table: &Table<'_>,
        parts: &PlanParts,
    ) -> TokenStream {
        let empty = &parts.empty;
        let fills = &parts.fills;
        let regions = parts.regions.iter().map(|(_, path)| path);
        let rt = &self.runtime;
        let u = index(table.units.len());
        let units = table.units.iter().map(|(block, state)| {
            let module = ident(&block.name);
            let unit_fn = format_ident!("{}_unit", ident(&state.local));
            quote!(super::blocks::#module::#unit_fn(dims, inputs.formats))
        });
        let layers_fn = self.layers_fn(checkpoint);
        quote! {
            impl StatePlan {
                #[doc = "Sizes every term under `inputs` and lays the terms out, every offset a"]
                #[doc = "multiple of `align`, by the same law as the dynamic"]
                #[doc = "`metrale_circuit::StatePlan::new`. A term whose inputs are absent"]
                #[doc = "(no verify, no KV, no cache group) is an empty region at offset 0."]
                #[doc = ""]
                #[doc = "# Errors"]
                #[doc = "`PlanError::BadAlign` when `align` is not a nonzero power of two;"]
                #[doc = "`PlanError::MissingVerify` for a recurrent state without `verify`"]
                #[doc = "under verify inputs; `PlanError::Overflow` and"]
                #[doc = "`PlanError::DivisionByZero` naming the first state that cannot be sized."]
                #[allow(clippy::trivially_copy_pass_by_ref, reason = "every circuit's plan takes `&Dims`, however few dims it has")]
                #[allow(clippy::too_many_lines, reason = "one `fill` line per block instance, the layers of a large model included")]
                pub const fn new(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'_>,
                    align: u64,
                ) -> ::core::result::Result<Self, #rt::PlanError> {
                    let units: [::core::result::Result<#rt::static_plan::Unit, #rt::SizeFault>; #u] = [#(#units),*];
                    // The alignment is checked first, as the dynamic plan does.
                    let mask = match #rt::static_plan::align_mask(align) {
                        ::core::result::Result::Ok(mask) => mask,
                        ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                    };
                    let classes = match #rt::static_plan::size_classes(&CLASSES, &FIRST_ROW, &units, &inputs.state_inputs(), &TERMS) {
                        ::core::result::Result::Ok(classes) => classes,
                        ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                    };
                    let mut offsets = [0u64; TERM_COUNT];
                    let ends = #rt::static_plan::lay_all(&STEPS, &classes, mask, &mut offsets);
                    let arena = match #rt::static_plan::arena(ends, align, &classes, &CLASS_COUNT, TERM_COUNT as u64) {
                        ::core::option::Option::Some(arena) => arena,
                        ::core::option::Option::None => match #rt::static_plan::replay(&classes, &STEPS, &TERMS, align) {
                            ::core::result::Result::Ok(arena) => arena,
                            ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                        },
                    };
                    let mut plan = Self { #empty arena };
                    #fills
                    ::core::result::Result::Ok(plan)
                }

                #[doc = "Every term's region, in the order of `TERMS`."]
                #[must_use]
                #[allow(clippy::too_many_lines, reason = "one line per block instance, the layers of a large model included")]
                #[allow(clippy::large_stack_arrays, reason = "every region by value, so an engine can iterate them beside `TERMS`")]
                pub const fn regions(&self) -> [#rt::Region; TERM_COUNT] {
                    let mut all = [#rt::Region::EMPTY; TERM_COUNT];
                    let at = 0;
                    #(let at = #rt::static_plan::put(&mut all, at, #regions);)*
                    let _ = at;
                    all
                }

                #[doc = "The arena sizes and per-lifetime totals."]
                #[must_use]
                pub const fn arena(&self) -> &#rt::Arena {
                    &self.arena
                }

                #[doc = "The device arena's size: the end of its last region, rounded up to"]
                #[doc = "the alignment."]
                #[must_use]
                pub const fn device_bytes(&self) -> u64 {
                    self.arena.device_bytes
                }

                #[doc = "The host arena's size (the prompt-lookup index), rounded up to the"]
                #[doc = "alignment."]
                #[must_use]
                pub const fn host_bytes(&self) -> u64 {
                    self.arena.host_bytes
                }

                #[doc = "The bytes the terms of `space` with `lifetime` hold, padding excluded."]
                #[must_use]
                pub const fn lifetime_bytes(&self, space: #rt::Space, lifetime: #rt::Lifetime) -> u64 {
                    self.arena.lifetime_bytes(space, lifetime)
                }

                #[doc = "The bytes the terms of `space` hold, padding excluded."]
                #[must_use]
                pub const fn term_bytes(&self, space: #rt::Space) -> u64 {
                    self.arena.term_bytes(space)
                }

                #layers_fn
            }
        }
    }

    /// The plan struct's fields, its empty literal, the `fill` of every block instance and the
    /// `regions()` entries, in the order of `Circuit::instances`: prologue, layers, epilogue,
    /// draft.
    fn plan_fields(&self, checkpoint: &Checkpoint, table: &Table<'_>) -> PlanParts {
        let circuit = self.circuit;
        let mut parts = PlanParts::default();
        for name in &circuit.prologue {
            self.top_block(name, table, &mut parts);
        }
        for (i, kind) in checkpoint.layer_kinds.iter().enumerate() {
            let field = format_ident!("l{i}");
            let ty = layer_type(kind);
            let doc = format!("Layer {i}, of kind `{kind}`.");
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            parts.empty.extend(quote! { #field: super::#ty::EMPTY, });
            for block in circuit.layout.blocks_of(kind) {
                self.nested_block(block, &format!("l{i}"), &quote!(#field), table, &mut parts);
            }
        }
        for name in &circuit.epilogue {
            self.top_block(name, table, &mut parts);
        }
        if self.has_draft() {
            parts.fields.extend(quote! {
                #[doc = "The draft head's blocks."]
                pub draft: super::Draft,
            });
            parts.empty.extend(quote! { draft: super::Draft::EMPTY, });
            for block in &circuit.draft {
                self.nested_block(block, "draft", &quote!(draft), table, &mut parts);
            }
        }
        // `regions()` follows the table's rows.
        parts.regions.sort_by_key(|(row, _)| *row);
        parts
    }

    /// A prologue or epilogue block: a field of the plan itself.
    fn top_block(&self, name: &str, table: &Table<'_>, parts: &mut PlanParts) {
        if let Some(block) = self.stateful(name) {
            let field = ident(name);
            let ty = block_type(name);
            let doc = format!("Block `{name}`.");
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            parts.empty.extend(quote! { #field: super::#ty::EMPTY, });
            Self::fill(block, name, &quote!(#field), table, parts);
        }
    }

    /// A block of a layer or of the draft: a field of that group.
    fn nested_block(
        &self,
        name: &str,
        prefix: &str,
        group: &TokenStream,
        table: &Table<'_>,
        parts: &mut PlanParts,
    ) {
        if let Some(block) = self.stateful(name) {
            let field = ident(name);
            Self::fill(
                block,
                &format!("{prefix}.{name}"),
                &quote!(#group.#field),
                table,
                parts,
            );
        }
    }

    /// `plan.<path>.fill(&classes, &offsets, <first class>, <first row>);`: an instance's terms
    /// are consecutive rows, and its classes consecutive too (made by the first instance of the
    /// block in its section). Records `(first row, self.<path>.regions())` for `regions()`.
    fn fill(
        block: &BlockTemplate,
        prefix: &str,
        path: &TokenStream,
        table: &Table<'_>,
        parts: &mut PlanParts,
    ) {
        let row = block
            .states
            .first()
            .and_then(|state| {
                let holding = Holding::of_kind(state.kind).first().copied()?;
                let id = format!("{prefix}.{}", state.local);
                table.row_of.get(&(id, holding)).copied()
            })
            .unwrap_or_default();
        let class = table.rows.get(row).map_or(0, |(_, class)| *class);
        parts.regions.push((row, quote!(self.#path.regions())));
        let (row, class) = (index(row), index(class));
        parts
            .fills
            .extend(quote! { plan.#path.fill(&classes, &offsets, #class, #row); });
    }

    /// `layers()` and `layer(i)`, when the circuit has layer kinds.
    fn layers_fn(&self, checkpoint: &Checkpoint) -> TokenStream {
        if self.circuit.layout.blocks.is_empty() {
            return TokenStream::new();
        }
        let layers = checkpoint.layer_kinds.iter().enumerate().map(|(i, kind)| {
            let field = format_ident!("l{i}");
            let variant = layer_variant(kind);
            quote!(super::Layer::#variant(&self.#field))
        });
        quote! {
            #[doc = "Every layer, in order, typed by its kind, for loops over layers."]
            #[must_use]
            pub const fn layers(&self) -> [super::Layer<'_>; LAYERS] {
                [#(#layers),*]
            }

            #[doc = "Layer `index`, or `None` past the last one."]
            #[must_use]
            pub const fn layer(&self, index: usize) -> ::core::option::Option<super::Layer<'_>> {
                if index < LAYERS {
                    ::core::option::Option::Some(self.layers()[index])
                } else {
                    ::core::option::Option::None
                }
            }
        }
    }
}

/// `snake_case` as `CamelCase` (the runtime enums' variant names).
fn camel(snake: &str) -> String {
    snake
        .split('_')
        .map(|part| {
            let mut chars = part.chars();
            chars
                .next()
                .map(|c| c.to_ascii_uppercase())
                .into_iter()
                .chain(chars)
                .collect::<String>()
        })
        .collect()
}
