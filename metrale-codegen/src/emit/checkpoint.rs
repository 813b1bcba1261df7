//! One checkpoint's module: its `DIMS` and `LAYERS`, the static table of its plan's terms
//! (`TERMS`, size classes, layout order), and `StatePlan`, a struct with one named `Region`
//! field per term and a `const fn new` that sizes and lays them out.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The table rows are `Circuit::instances` x the block's states x `Holding::of_kind`, the
//!   order the dynamic plan sizes in; a block instance's terms are consecutive rows of
//!   consecutive classes, so its `lay` takes a window of the classes and `regions` maps row
//!   `first + j` to its `j`-th term.
//! - Terms that size alike (one state of one block template, one holding, one section) share a
//!   size class, sized once per plan by one inlined `static_plan::size_class` call each; each
//!   state's unit is computed once.
//! - `new` builds the plan as one struct literal whose fields are written in plan order, so
//!   each layout group's cursor (`static_plan::Lanes`) meets its terms in the order the
//!   runtime's `layout_order` places them: one add per term. Only sizes so large that a sum
//!   could overflow fall back to the exact term-by-term replay (`static_plan::replay` over
//!   `STEPS`), which names the term as the dynamic plan does.

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
    /// The fields of the literal `new` builds, in plan order.
    init: TokenStream,
    /// `(first row, self.<path>.regions())` per block instance.
    regions: Vec<(usize, TokenStream)>,
}

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
    /// How many rows each class has.
    counts: Vec<u64>,
}

impl<'a> Emitter<'a> {
    fn table(&self, checkpoint: &Checkpoint) -> Table<'a> {
        let mut table = Table {
            rows: Vec::new(),
            row_of: HashMap::new(),
            classes: Vec::new(),
            units: Vec::new(),
            counts: Vec::new(),
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
                            table.counts.push(0);
                            table.classes.len() - 1
                        });
                    table.row_of.insert((id.clone(), holding), table.rows.len());
                    table.rows.push((id.clone(), class));
                    if let Some(count) = table.counts.get_mut(class) {
                        *count += 1;
                    }
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
        let classes = self.class_literals(&table);
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

                #[doc = "Every term in layout order, with its size class and arena (for the exact"]
                #[doc = "replay of a layout that could overflow)."]
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
    fn class_literals(&self, table: &Table<'_>) -> Vec<TokenStream> {
        let rt = &self.runtime;
        table
            .classes
            .iter()
            .enumerate()
            .map(|(class, (_, state, holding, section, unit))| {
                let count = int(table.counts.get(class).copied().unwrap_or_default());
                let group = index(metrale_circuit::static_plan::group(
                    state.kind,
                    *holding,
                    state.lifetime,
                ));
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
                        count: #count,
                        group: #group,
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
        let init = &parts.init;
        let regions = parts.regions.iter().map(|(_, path)| path);
        let rt = &self.runtime;
        let u = index(table.units.len());
        let units = table.units.iter().map(|(block, state)| {
            let module = ident(&block.name);
            let unit_fn = format_ident!("{}_unit", ident(&state.local));
            quote!(super::blocks::#module::#unit_fn(dims, inputs.formats))
        });
        let layers_fn = self.layers_fn(checkpoint);
        let c = index(table.classes.len());
        // One call per class with a constant index: each folds to its kind's size law.
        let sizes = (0..table.classes.len()).map(|class| {
            let class = index(class);
            quote!(#rt::static_plan::size_class(&CLASSES[#class], &units, &state, &mut lanes))
        });
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
                #[allow(clippy::too_many_lines, reason = "one line per block instance, the layers of a large model included")]
                pub const fn new(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'_>,
                    align: u64,
                ) -> ::core::result::Result<Self, #rt::PlanError> {
                    let units: [::core::result::Result<#rt::static_plan::Unit, #rt::SizeFault>; #u] = [#(#units),*];
                    // The alignment is checked first, as the dynamic plan does.
                    if let ::core::result::Result::Err(error) = #rt::static_plan::valid_align(align) {
                        return ::core::result::Result::Err(error);
                    }
                    let state = inputs.state_inputs();
                    let mut lanes = #rt::static_plan::Lanes::new(align);
                    let classes: [#rt::static_plan::ClassSize; #c] = [#(#sizes),*];
                    if let ::core::option::Option::Some(error) = #rt::static_plan::first_fault(&classes, &FIRST_ROW, &TERMS) {
                        return ::core::result::Result::Err(error);
                    }
                    let (mut cursors, arena) = lanes.finish();
                    let arena = match arena {
                        ::core::option::Option::Some(arena) => arena,
                        // A sum could overflow: the exact layout names the term.
                        ::core::option::Option::None => match #rt::static_plan::replay(&classes, &STEPS, &TERMS, align) {
                            ::core::result::Result::Ok(arena) => arena,
                            ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                        },
                    };
                    // The literal's fields are evaluated in plan order, so each group's cursor
                    // meets its terms in the order the layout places them.
                    ::core::result::Result::Ok(Self { #init arena })
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

    /// The plan struct's fields, the fields of the literal `new` builds and the `regions()`
    /// entries, in the order of `Circuit::instances` (plan order): prologue, layers, epilogue,
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
            let value = self.group_value(
                circuit.layout.blocks_of(kind),
                &format!("l{i}"),
                &quote!(#field),
                &quote!(super::#ty),
                table,
                &mut parts,
            );
            parts.init.extend(quote! { #field: #value, });
        }
        for name in &circuit.epilogue {
            self.top_block(name, table, &mut parts);
        }
        if self.has_draft() {
            parts.fields.extend(quote! {
                #[doc = "The draft head's blocks."]
                pub draft: super::Draft,
            });
            let value = self.group_value(
                &circuit.draft,
                "draft",
                &quote!(draft),
                &quote!(super::Draft),
                table,
                &mut parts,
            );
            parts.init.extend(quote! { draft: #value, });
        }
        // `regions()` follows the table's rows.
        parts.regions.sort_by_key(|(row, _)| *row);
        parts
    }

    /// A prologue or epilogue block: a field of the plan itself, laid out by its own `lay`.
    fn top_block(&self, name: &str, table: &Table<'_>, parts: &mut PlanParts) {
        if let Some(block) = self.stateful(name) {
            let field = ident(name);
            let ty = block_type(name);
            let doc = format!("Block `{name}`.");
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            let window = self.window(block, name, &quote!(#field), table, parts);
            parts
                .init
                .extend(quote! { #field: super::#ty::lay(#window, &mut cursors), });
        }
    }

    /// A layer's or the draft's value in `new`: the literal `<Group> { <block>:
    /// <Block>Block::lay(<its window>, &mut cursors), .. }` over its stateful blocks, in order
    /// (an empty literal when none has state).
    fn group_value(
        &self,
        blocks: &[String],
        prefix: &str,
        group: &TokenStream,
        ty: &TokenStream,
        table: &Table<'_>,
        parts: &mut PlanParts,
    ) -> TokenStream {
        let mut fields = Vec::new();
        for name in blocks {
            if let Some(block) = self.stateful(name) {
                let field = ident(name);
                let block_ty = block_type(name);
                let window = self.window(
                    block,
                    &format!("{prefix}.{name}"),
                    &quote!(#group.#field),
                    table,
                    parts,
                );
                fields.push(quote!(#field: super::#block_ty::lay(#window, &mut cursors)));
            }
        }
        quote!(#ty { #(#fields),* })
    }

    /// `static_plan::window(&classes, <first class>)`: the classes of a block instance's terms,
    /// which are consecutive rows sized by consecutive classes (made by the first instance of
    /// the block in its section). Records `(first row, self.<path>.regions())` for
    /// `regions()`.
    fn window(
        &self,
        block: &BlockTemplate,
        prefix: &str,
        path: &TokenStream,
        table: &Table<'_>,
        parts: &mut PlanParts,
    ) -> TokenStream {
        let rt = &self.runtime;
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
        let class = index(class);
        quote!(#rt::static_plan::window(&classes, #class))
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
