//! One checkpoint's module: its `DIMS` and `LAYERS`, the static table of its plan's terms
//! (`TERMS`, size classes, places, layout order), and `StatePlan`, a struct with one named
//! `Region` field per term, a `const fn new` that sizes and lays them out, and `for_rank`, the
//! same for one tensor- and pipeline-parallel rank.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - The table rows are `Circuit::instances` x the block's states x `Holding::of_kind`, the
//!   order the dynamic plan sizes in; a block instance's terms are consecutive rows of
//!   consecutive classes, so its `lay` takes a window of the classes and `regions` maps row
//!   `first + j` to its `j`-th term.
//! - Terms that size alike (one state of one block template, one holding, one section) share a
//!   size class, sized once per plan by one inlined `__private_v0_1::size_class` call each; each
//!   state's unit is computed once.
//! - `new` builds the plan as one struct literal whose fields are written in plan order, so
//!   each layout group's cursor (`__private_v0_1::Lanes`) meets its terms in the order the
//!   runtime's `layout_order` places them: one add per term. Only sizes so large that a sum
//!   could overflow fall back to the exact term-by-term replay (`__private_v0_1::replay` over
//!   `STEPS`), which names the term as the dynamic plan does.
//! - `new` and `for_rank` are one constructor (`on_stage`): a rank's dims come from
//!   `Dims::on_tp`, and its pipeline stage (`Stage`) decides, by each row's `Place`, which
//!   terms are sized (`__private_v0_1::held`) and which block instances lay out absent classes
//!   (`StageClasses`), so a term the rank does not hold is `Region::EMPTY` and takes no room.
//!   One GPU is the stage that holds everything, read from the static table without a pass.
//! - Compile time is linear in the layers: `new` is one non-inlined `lay` call per block
//!   instance and `regions()` a loop over `layers()`, so no generated function grows faster
//!   than the model (`scripts/compile_scale.py` measures it).

use std::collections::HashMap;

use metrale_circuit::{BlockTemplate, Checkpoint, Holding, Place, Section, StateTemplate};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Emitter;
use super::model::{block_type, layer_type, layer_variant};
use super::names::{camel_case, ident, index, int};

/// The pieces of a checkpoint's `StatePlan` the emitter assembles.
#[derive(Default)]
struct PlanParts {
    /// The struct's fields.
    fields: TokenStream,
    /// The fields of the literal `new` builds, in plan order.
    init: TokenStream,
}

/// The static table of one checkpoint's plan.
struct Table<'a> {
    /// `(state id, class)` per term, in plan order.
    rows: Vec<(String, usize)>,
    /// Where each term's block instance sits, in plan order (which pipeline rank holds it).
    places: Vec<Place>,
    /// Row of each `(state id, holding)`.
    row_of: HashMap<(String, Holding), usize>,
    /// `(block, state, holding, section, unit)` per class, in first-use order; `unit` indexes
    /// the circuit's `units()`.
    classes: Vec<(
        &'a BlockTemplate,
        &'a StateTemplate,
        Holding,
        Section,
        usize,
    )>,
    /// How many rows each class has.
    counts: Vec<u64>,
}

impl<'a> Emitter<'a> {
    fn table(&self, checkpoint: &Checkpoint) -> Table<'a> {
        let mut table = Table {
            rows: Vec::new(),
            places: Vec::new(),
            row_of: HashMap::new(),
            classes: Vec::new(),
            counts: Vec::new(),
        };
        for instance in self.circuit.instances(checkpoint) {
            let Some(block) = self.stateful(&instance.block) else {
                continue;
            };
            for state in block.states() {
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
                            table.counts.push(0);
                            table.classes.len() - 1
                        });
                    table.row_of.insert((id.clone(), holding), table.rows.len());
                    table.rows.push((id.clone(), class));
                    table.places.push(instance.place);
                    if let Some(count) = table.counts.get_mut(class) {
                        *count += 1;
                    }
                }
            }
        }
        table
    }

    /// How many terms the plan of `checkpoint` has: its `TERM_COUNT`.
    pub(super) fn term_count(&self, checkpoint: &Checkpoint) -> usize {
        self.table(checkpoint).rows.len()
    }

    /// `pub mod <checkpoint> { ... }`.
    pub(super) fn checkpoint_module(&self, checkpoint: &Checkpoint) -> TokenStream {
        let name = ident(checkpoint.name());
        let table = self.table(checkpoint);
        let n = index(table.rows.len());
        let c = index(table.classes.len());
        let layers = index(checkpoint.layer_kinds().len());

        let source = checkpoint
            .hf()
            .as_ref()
            .map_or_else(String::new, |hf| format!(" of `{hf}`"));
        let doc = format!(
            "Checkpoint `{}`{source} (`{}`): {} layers.",
            checkpoint.name(),
            checkpoint.origin(),
            checkpoint.layer_kinds().len()
        );
        let dims = checkpoint.dims().iter().map(|(dim, value)| {
            let field = ident(dim);
            let value = int(*value);
            quote!(#field: #value)
        });
        let classes = self.class_literals(&table);
        let rows = table.rows.iter().map(|(id, class)| {
            let class = index(*class);
            quote!((#id, #class))
        });
        let starts = place_starts(&table.places, checkpoint.layer_kinds().len())
            .into_iter()
            .map(index);
        let parts = self.plan_fields(checkpoint, &table);
        let fields = &parts.fields;
        let plan_impl = self.plan_impl(checkpoint, &table, &parts);
        let rank_of = rank_of_fn(&int(checkpoint.layer_kinds().len() as u64));
        // A model of some hundred terms makes these tables larger than clippy's threshold for
        // a `const` array; they are read by reference only, which rustc promotes to one
        // static, so nothing large is copied. `const`, not `static`: const fns read them.
        let large = quote! {
            #[allow(clippy::large_const_arrays, reason = "read by reference only: promoted to one static, never copied")]
        };
        let plan_doc = format!(
            "Every state term of checkpoint `{}`, sized and laid out: one `Region` per term,",
            checkpoint.name()
        );

        quote! {
            #[doc = #doc]
            pub mod #name {
                use super::{__abi, __rt};

                #[doc = "The checkpoint's dims."]
                pub const DIMS: super::Dims = super::Dims { #(#dims),* };

                #[doc = "The number of layers."]
                pub const LAYERS: usize = #layers;

                #[doc = "The number of terms of the plan (and of `TERMS` and `regions()`)."]
                pub const TERM_COUNT: usize = #n;

                #[doc = "Every size class: terms of one state of one block template, holding one"]
                #[doc = "thing in one section, sized once per plan."]
                const CLASSES: [__abi::SizeClass; #c] = [#(#classes),*];

                #[doc = "Every term's state id and size class, in plan order."]
                #large
                const TABLE: [__abi::Row; TERM_COUNT] = [#(#rows),*];

                #[doc = "Where each place's rows start in `TABLE` (which pipeline rank holds them):"]
                #[doc = "each layer's, then the epilogue's, then the draft head's; the prologue's"]
                #[doc = "come before."]
                const PLACE_ROWS: [usize; LAYERS + 2] = [#(#starts),*];

                #[doc = "Every term of the plan, in plan order: the order of `regions()`."]
                #large
                pub const TERMS: [__rt::TermInfo; TERM_COUNT] =
                    __abi::terms(&TABLE, &CLASSES);

                #[doc = "The first row of every size class: its faults are reported there."]
                const FIRST_ROW: [usize; #c] = __abi::first_rows(&TABLE);

                #[doc = "Every term in layout order, with its size class and arena (for the exact"]
                #[doc = "replay of a layout that could overflow)."]
                #large
                const STEPS: [__abi::Step; TERM_COUNT] = __abi::steps(&TABLE, &CLASSES);

                #[doc = #plan_doc]
                #[doc = "reachable as a field path (`plan.l0.<block>.<state>.<holding>`)."]
                #[derive(Debug, Clone, Copy, PartialEq, Eq)]
                pub struct StatePlan {
                    #fields
                    #[doc = "The arena sizes and per-lifetime totals."]
                    arena: __rt::Arena,
                }

                #plan_impl

                #rank_of
            }
        }
    }

    /// The `SizeClass` literal of every class.
    fn class_literals(&self, table: &Table<'_>) -> Vec<TokenStream> {
        table
            .classes
            .iter()
            .enumerate()
            .map(|(class, (_, state, holding, section, unit))| {
                let count = int(table.counts.get(class).copied().unwrap_or_default());
                let group = index(metrale_circuit::__private_v0_1::group(
                    state.kind(),
                    *holding,
                    state.lifetime(),
                ));
                let kind = format_ident!("{}", camel_case(state.kind().name()));
                let holding = format_ident!("{}", camel_case(holding.name()));
                let section = format_ident!("{}", camel_case(section.name()));
                let verify = if let Some(steps) = state.verify() {
                    let steps = format_ident!("{}", camel_case(steps.name()));
                    quote!(::core::option::Option::Some(__rt::VerifySteps::#steps))
                } else {
                    quote!(::core::option::Option::None)
                };
                let lifetime = format_ident!("{}", camel_case(state.lifetime().name()));
                let unit = index(*unit);
                let window = self.window_index(state).map_or_else(
                    || quote!(::core::option::Option::None),
                    |i| {
                        let i = index(i);
                        quote!(::core::option::Option::Some(#i))
                    },
                );
                quote! {
                    __abi::SizeClass {
                        kind: __rt::StateKind::#kind,
                        holding: __rt::Holding::#holding,
                        section: __rt::Section::#section,
                        verify: #verify,
                        lifetime: __rt::Lifetime::#lifetime,
                        unit: #unit,
                        window: #window,
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
        let regions = self.regions_body();
        let errors = self.plan_errors_doc(table);
        let layers_fn = self.layers_fn(checkpoint);
        let whole = int(checkpoint.layer_kinds().len() as u64);
        let fit_fn = fit_fn(&whole);
        let for_rank = for_rank_fn();
        let c = index(table.classes.len());
        // One call per class with a constant index: each folds to its kind's size law.
        let sizes = (0..table.classes.len()).map(|class| {
            let class = index(class);
            quote!(__abi::size_class(&CLASSES[#class], held.counts[#class], &units, &windows, &plan_inputs, &mut lanes))
        });
        quote! {
            impl StatePlan {
                #[doc = "Sizes every term under `inputs` and lays the terms out, every offset a"]
                #[doc = "multiple of `align`, by the same law as the dynamic"]
                #[doc = "`metrale_circuit::StatePlan::new`. A term whose inputs are absent"]
                #[doc = "(no verify, no KV, no cache group) is an empty region at offset 0."]
                #[doc = ""]
                #[doc = "# Errors"]
                #(#[doc = #errors])*
                pub const fn new(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'_>,
                    align: u64,
                ) -> ::core::result::Result<Self, __rt::PlanError> {
                    Self::on_stage(dims, inputs, align, &__rt::Stage::whole(#whole))
                }

                #for_rank

                #[doc = "`new` for what `stage` holds, under `dims` (a rank's)."]
                const fn on_stage(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'_>,
                    align: u64,
                    stage: &__rt::Stage,
                ) -> ::core::result::Result<Self, __rt::PlanError> {
                    let units = super::units(dims, inputs.formats);
                    let windows = super::windows(dims);
                    // The alignment is checked first, as the dynamic plan does.
                    if let ::core::result::Result::Err(error) = __abi::valid_align(align) {
                        return ::core::result::Result::Err(error);
                    }
                    let plan_inputs = inputs.state_inputs();
                    let held = __abi::held(&TABLE, &CLASSES, &FIRST_ROW, &PLACE_ROWS, stage);
                    let mut lanes = __abi::Lanes::new(align);
                    let sized: [__abi::ClassSize; #c] = [#(#sizes),*];
                    if let ::core::option::Option::Some(error) = __abi::first_fault(&sized, &held.first, &TERMS) {
                        return ::core::result::Result::Err(error);
                    }
                    let (mut cursors, arena) = lanes.finish();
                    let arena = match arena {
                        ::core::option::Option::Some(arena) => arena,
                        // A sum could overflow: the exact layout names the term.
                        ::core::option::Option::None => match __abi::replay(&sized, &STEPS, &TERMS, &held, align) {
                            ::core::result::Result::Ok(arena) => arena,
                            ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                        },
                    };
                    // A block instance the stage does not hold reads absent classes.
                    let classes = __abi::StageClasses::new(&sized, stage);
                    // The literal's fields are evaluated in plan order, so each group's cursor
                    // meets its terms in the order the layout places them.
                    ::core::result::Result::Ok(Self { #init arena })
                }

                #[doc = "Every term's region, in the order of `TERMS`."]
                #[must_use]
                pub const fn regions(&self) -> [__rt::Region; TERM_COUNT] {
                    #regions
                }

                #[doc = "The arena sizes and per-lifetime totals."]
                #[must_use]
                pub const fn arena(&self) -> &__rt::Arena {
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
                pub const fn lifetime_bytes(&self, space: __rt::Space, lifetime: __rt::Lifetime) -> u64 {
                    self.arena.lifetime_bytes(space, lifetime)
                }

                #[doc = "The bytes the terms of `space` hold, padding excluded."]
                #[must_use]
                pub const fn term_bytes(&self, space: __rt::Space) -> u64 {
                    self.arena.term_bytes(space)
                }

                #fit_fn

                #layers_fn
            }
        }
    }

    /// The plan struct's fields and the fields of the literal `new` builds, in the order of `Circuit::instances` (plan order): prologue, layers, epilogue,
    /// draft.
    fn plan_fields(&self, checkpoint: &Checkpoint, table: &Table<'_>) -> PlanParts {
        let circuit = self.circuit;
        let mut parts = PlanParts::default();
        for name in circuit.prologue() {
            self.top_block(name, Place::Prologue, table, &mut parts);
        }
        for (i, kind) in checkpoint.layer_kinds().iter().enumerate() {
            let field = format_ident!("l{i}");
            let ty = layer_type(kind);
            let doc = format!("Layer {i}, of kind `{kind}`.");
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            let value = self.group_value(
                circuit.layout().blocks_of(kind),
                (&format!("l{i}"), Place::Layer(i as u64)),
                &quote!(super::#ty),
                table,
            );
            parts.init.extend(quote! { #field: #value, });
        }
        for name in circuit.epilogue() {
            self.top_block(name, Place::Epilogue, table, &mut parts);
        }
        if self.has_draft() {
            parts.fields.extend(quote! {
                #[doc = "The draft head's blocks."]
                pub draft: super::Draft,
            });
            let value = self.group_value(
                circuit.draft(),
                ("draft", Place::Draft),
                &quote!(super::Draft),
                table,
            );
            parts.init.extend(quote! { draft: #value, });
        }
        parts
    }

    /// A prologue or epilogue block: a field of the plan itself, laid out by its own `lay`.
    fn top_block(&self, name: &str, place: Place, table: &Table<'_>, parts: &mut PlanParts) {
        if let Some(block) = self.stateful(name) {
            let field = ident(name);
            let ty = block_type(name);
            let doc = format!("Block `{name}`.");
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            let window = Self::window(block, (name, place), table);
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
        (prefix, place): (&str, Place),
        ty: &TokenStream,
        table: &Table<'_>,
    ) -> TokenStream {
        let mut fields = Vec::new();
        for name in blocks {
            if let Some(block) = self.stateful(name) {
                let field = ident(name);
                let block_ty = block_type(name);
                let window = Self::window(block, (&format!("{prefix}.{name}"), place), table);
                fields.push(quote!(#field: super::#block_ty::lay(#window, &mut cursors)));
            }
        }
        quote!(#ty { #(#fields),* })
    }

    /// `classes.<place>(<first class>)` (`__private_v0_1::StageClasses`): the classes of a
    /// block instance's terms, which are consecutive rows sized by consecutive classes (made by
    /// the first instance of the block in its section), or absent ones when the plan's stage
    /// does not hold the instance.
    fn window(
        block: &BlockTemplate,
        (prefix, place): (&str, Place),
        table: &Table<'_>,
    ) -> TokenStream {
        let row = block
            .states()
            .first()
            .and_then(|state| {
                let holding = Holding::of_kind(state.kind()).first().copied()?;
                let id = format!("{prefix}.{}", state.local());
                table.row_of.get(&(id, holding)).copied()
            })
            .unwrap_or_default();
        let class = table.rows.get(row).map_or(0, |(_, class)| *class);
        let class = index(class);
        match place {
            Place::Prologue => quote!(classes.prologue(#class)),
            Place::Layer(layer) => {
                let layer = int(layer);
                quote!(classes.layer(#class, #layer))
            }
            Place::Epilogue => quote!(classes.epilogue(#class)),
            Place::Draft => quote!(classes.draft(#class)),
        }
    }

    /// The body of `regions()`: each block instance's regions put after the previous one's, in
    /// plan order: the prologue, a loop over `layers()` (one `match` arm per layer kind, so the
    /// function stays the same size whatever the layer count), the epilogue, the draft.
    fn regions_body(&self) -> TokenStream {
        let circuit = self.circuit;
        let put = |path: TokenStream| quote!(at = __abi::put(&mut all, at, #path.regions()););
        let top = |names: &[String]| -> TokenStream {
            names
                .iter()
                .filter(|name| self.stateful(name).is_some())
                .map(|name| {
                    let field = ident(name);
                    put(quote!(self.#field))
                })
                .collect()
        };
        let prologue = top(circuit.prologue());
        let epilogue = top(circuit.epilogue());
        let draft: TokenStream = circuit
            .draft()
            .iter()
            .filter(|name| self.stateful(name).is_some())
            .map(|name| {
                let field = ident(name);
                put(quote!(self.draft.#field))
            })
            .collect();
        let layers = if circuit.layout().blocks().is_empty() {
            TokenStream::new()
        } else {
            let arms = circuit.layout().blocks().iter().map(|(kind, blocks)| {
                let variant = layer_variant(kind);
                let puts: Vec<TokenStream> = blocks
                    .iter()
                    .filter(|name| self.stateful(name).is_some())
                    .map(|name| {
                        let field = ident(name);
                        put(quote!(layer.#field))
                    })
                    .collect();
                if puts.is_empty() {
                    quote!(super::Layer::#variant(_) => {})
                } else {
                    quote!(super::Layer::#variant(layer) => { #(#puts)* })
                }
            });
            quote! {
                let layers = self.layers();
                let mut i = 0;
                while i < LAYERS {
                    match layers[i] {
                        #(#arms)*
                    }
                    i += 1;
                }
            }
        };
        if prologue.is_empty() && layers.is_empty() && epilogue.is_empty() && draft.is_empty() {
            return quote!([__rt::Region::EMPTY; TERM_COUNT]);
        }
        quote! {
            let mut all = [__rt::Region::EMPTY; TERM_COUNT];
            let mut at = 0;
            #prologue #layers #epilogue #draft
            let _ = at;
            all
        }
    }

    /// `layers()` and `layer(i)`, when the circuit has layer kinds.
    fn layers_fn(&self, checkpoint: &Checkpoint) -> TokenStream {
        if self.circuit.layout().blocks().is_empty() {
            return TokenStream::new();
        }
        let layers: Vec<TokenStream> = checkpoint
            .layer_kinds()
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let field = format_ident!("l{i}");
                let variant = layer_variant(kind);
                quote!(super::Layer::#variant(&self.#field))
            })
            .collect();
        let arms = layers.iter().enumerate().map(|(i, layer)| {
            let i = index(i);
            quote!(#i => ::core::option::Option::Some(#layer),)
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
                match index {
                    #(#arms)*
                    _ => ::core::option::Option::None,
                }
            }
        }
    }

    /// The `# Errors` lines of a checkpoint's `new`: the faults its states can produce.
    fn plan_errors_doc(&self, table: &Table<'_>) -> Vec<String> {
        let mut faults = super::sizes::Faults::default();
        for (block, state, ..) in &table.classes {
            let of = self.faults(block.shape_of(state));
            faults.divides |= of.divides;
            faults.subtracts |= of.subtracts;
        }
        let mut lines =
            vec!["`PlanError::BadAlign` when `align` is not a nonzero power of two;".to_owned()];
        lines.extend(super::sizes::errors_doc(
            "PlanError",
            ", naming the first such state,",
            faults,
        ));
        lines
    }

    /// The index of `state` of `block` in the circuit's `units()`: states of the stateful
    /// blocks, block by block in definition order.
    fn unit_index(&self, block: &BlockTemplate, state: &StateTemplate) -> usize {
        self.unit_states()
            .position(|(b, s)| b.name() == block.name() && s.local() == state.local())
            .unwrap_or_default()
    }
}

/// `StatePlan::for_rank`: the plan of one rank, its dims and stage from `rank_of`.
fn for_rank_fn() -> TokenStream {
    quote! {
                #[doc = "The plan of one rank of `parallel`: `dims` (the checkpoint's, such as"]
                #[doc = "`DIMS`) on its tensor-parallel rank (`Dims::on_tp`), and only what its"]
                #[doc = "pipeline stage holds (`Stage::of`): the layers it does not hold, and the"]
                #[doc = "prologue off the first rank and the epilogue and draft head off the last,"]
                #[doc = "are empty regions at offset 0 that take no room, as absent groups are. The"]
                #[doc = "same plan as the dynamic one of `Circuit::instantiate_rank`."]
                #[doc = ""]
                #[doc = "# Errors"]
                #[doc = "`RankError::Stage` when a size is 0, the rank is outside them or the"]
                #[doc = "layers do not split; `RankError::Shard` when a sharded dim does not split;"]
                #[doc = "`RankError::Plan` with the rank's `PlanError`, as `new`."]
                pub const fn for_rank(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'_>,
                    align: u64,
                    parallel: &__rt::Parallel<'_>,
                    rank: __rt::Rank,
                ) -> ::core::result::Result<Self, __rt::RankError<__rt::PlanError>> {
                    let (dims, stage) = match rank_of(dims, parallel, rank) {
                        ::core::result::Result::Ok(ranked) => ranked,
                        ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
                    };
                    match Self::on_stage(&dims, inputs, align, &stage) {
                        ::core::result::Result::Ok(plan) => ::core::result::Result::Ok(plan),
                        ::core::result::Result::Err(error) => ::core::result::Result::Err(__rt::RankError::Plan(error)),
                    }
                }

    }
}

/// Where each place's rows start, for a table whose rows sit at `places` (in plan order) in a
/// checkpoint of `layers` layers: the first row of each layer, of the epilogue and of the draft
/// head, as `__private_v0_1::place_of` reads them (a place without rows starts where the
/// next does).
fn place_starts(places: &[Place], layers: usize) -> Vec<usize> {
    // A place's rank in plan order: the prologue 0, layer k k + 1, then epilogue and draft.
    let rank = |place: &Place| match *place {
        Place::Prologue => 0,
        Place::Layer(layer) => usize::try_from(layer).map_or(usize::MAX, |l| l + 1),
        Place::Epilogue => layers + 1,
        Place::Draft => layers + 2,
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

/// `StatePlan::fit_kv_blocks` and `fit_kv_blocks_for_rank`: the runtime's one search
/// (`Search`) driven by this plan's constructor for a stage; `whole` is the layer count.
fn fit_fn(whole: &proc_macro2::Literal) -> TokenStream {
    let profile = fit_profile_fn(whole);
    quote! {
        #profile

        #[doc = "The most blocks of the main KV pool (`inputs.kv`'s `blocks`) whose plan's"]
        #[doc = "device arena fits `budget` bytes, every other input as given, by the same"]
        #[doc = "search as `metrale_circuit::fit_kv_blocks`: the value, and the device bytes"]
        #[doc = "at it and at one more block."]
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "`FitError::NoKvPool` without `inputs.kv`; `FitError::Plan` when the plan"]
        #[doc = "fails at 0 blocks; `FitError::TooSmall` when even 0 blocks exceed `budget`."]
        pub const fn fit_kv_blocks(
            dims: &super::Dims,
            inputs: &super::Inputs<'_>,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::Fit, __rt::FitError<__rt::PlanError>> {
            Self::fit_kv_blocks_on(dims, inputs, align, budget, &__rt::Stage::whole(#whole))
        }

        #[doc = "`fit_kv_blocks` for one rank of `parallel` (its plan is `for_rank`'s; the"]
        #[doc = "budget is that GPU's)."]
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "`for_rank`'s `RankError::Stage` and `RankError::Shard`; `RankError::Plan`"]
        #[doc = "with the rank's `FitError`, as `fit_kv_blocks`."]
        pub const fn fit_kv_blocks_for_rank(
            dims: &super::Dims,
            inputs: &super::Inputs<'_>,
            align: u64,
            budget: u64,
            parallel: &__rt::Parallel<'_>,
            rank: __rt::Rank,
        ) -> ::core::result::Result<__rt::Fit, __rt::RankError<__rt::FitError<__rt::PlanError>>> {
            let (dims, stage) = match rank_of(dims, parallel, rank) {
                ::core::result::Result::Ok(ranked) => ranked,
                ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
            };
            match Self::fit_kv_blocks_on(&dims, inputs, align, budget, &stage) {
                ::core::result::Result::Ok(fit) => ::core::result::Result::Ok(fit),
                ::core::result::Result::Err(error) => ::core::result::Result::Err(__rt::RankError::Plan(error)),
            }
        }

        #[doc = "`fit_kv_blocks` for what `stage` holds, under `dims` (a rank's)."]
        const fn fit_kv_blocks_on(
            dims: &super::Dims,
            inputs: &super::Inputs<'_>,
            align: u64,
            budget: u64,
            stage: &__rt::Stage,
        ) -> ::core::result::Result<__rt::Fit, __rt::FitError<__rt::PlanError>> {
            let ::core::option::Option::Some(kv) = inputs.kv else {
                return ::core::result::Result::Err(__rt::FitError::NoKvPool);
            };
            let mut search = __rt::Search::new(budget);
            while let ::core::option::Option::Some(blocks) = search.probe() {
                let mut trial = *inputs;
                trial.kv = ::core::option::Option::Some(__rt::KvInputs { blocks, ..kv });
                match Self::on_stage(dims, &trial, align, stage) {
                    ::core::result::Result::Ok(plan) => {
                        search.record(::core::option::Option::Some(plan.device_bytes()));
                    }
                    ::core::result::Result::Err(error) if blocks == 0 => {
                        return ::core::result::Result::Err(__rt::FitError::Plan(error));
                    }
                    ::core::result::Result::Err(_) => {
                        search.record(::core::option::Option::None);
                    }
                }
            }
            search.finish()
        }
    }
}

/// `StatePlan::fit_profile` and `fit_profile_for_rank`, the same search over a serving
/// profile's free input, with its wrappers.
fn fit_profile_fn(whole: &proc_macro2::Literal) -> TokenStream {
    let wrappers = fit_profile_wrappers();
    quote! {
        #[doc = "The largest value of `profile`'s free input `free` whose plan's device arena"]
        #[doc = "fits `budget` bytes: the profile at each probed value"]
        #[doc = "(`ServingProfile::varied`), by the same search as"]
        #[doc = "`metrale_circuit::fit_profile`."]
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "`FitError::NoKvPool` when `free` is the pool and the profile has none;"]
        #[doc = "`FitError::Plan` when the plan fails at 0; `FitError::TooSmall` when even 0"]
        #[doc = "exceeds `budget`."]
        pub const fn fit_profile(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::ServingProfile,
            free: __rt::ProfileFree,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::Fit, __rt::FitError<__rt::PlanError>> {
            let whole = __rt::Stage::whole(#whole);
            Self::fit_profile_on(dims, formats, profile, free, align, budget, &whole)
        }

        #[doc = "`fit_profile` for one rank of `parallel` (its plan is `for_rank`'s; the"]
        #[doc = "budget is that GPU's)."]
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "`for_rank`'s `RankError::Stage` and `RankError::Shard`; `RankError::Plan`"]
        #[doc = "with the rank's `FitError`, as `fit_profile`."]
        #[allow(clippy::too_many_arguments, reason = "`fit_profile`'s arguments and the rank's two")]
        pub const fn fit_profile_for_rank(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::ServingProfile,
            free: __rt::ProfileFree,
            align: u64,
            budget: u64,
            parallel: &__rt::Parallel<'_>,
            rank: __rt::Rank,
        ) -> ::core::result::Result<__rt::Fit, __rt::RankError<__rt::FitError<__rt::PlanError>>> {
            let (dims, stage) = match rank_of(dims, parallel, rank) {
                ::core::result::Result::Ok(ranked) => ranked,
                ::core::result::Result::Err(error) => return ::core::result::Result::Err(error),
            };
            match Self::fit_profile_on(&dims, formats, profile, free, align, budget, &stage) {
                ::core::result::Result::Ok(fit) => ::core::result::Result::Ok(fit),
                ::core::result::Result::Err(error) => ::core::result::Result::Err(__rt::RankError::Plan(error)),
            }
        }

        #[doc = "`fit_profile` for what `stage` holds, under `dims` (a rank's)."]
        const fn fit_profile_on(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::ServingProfile,
            free: __rt::ProfileFree,
            align: u64,
            budget: u64,
            stage: &__rt::Stage,
        ) -> ::core::result::Result<__rt::Fit, __rt::FitError<__rt::PlanError>> {
            if matches!(free, __rt::ProfileFree::PoolBlocks) && profile.kv.is_none() {
                return ::core::result::Result::Err(__rt::FitError::NoKvPool);
            }
            let mut search = __rt::Search::new(budget);
            while let ::core::option::Option::Some(value) = search.probe() {
                let plan = match profile.varied(free, value).inputs() {
                    ::core::result::Result::Ok(counts) => Self::on_stage(
                        dims,
                        &super::Inputs::with_counts(formats, &counts),
                        align,
                        stage,
                    ),
                    ::core::result::Result::Err(fault) => ::core::result::Result::Err(
                        __rt::PlanError::of_fault(fault, "the serving profile"),
                    ),
                };
                match plan {
                    ::core::result::Result::Ok(plan) => {
                        search.record(::core::option::Option::Some(plan.device_bytes()));
                    }
                    ::core::result::Result::Err(error) if value == 0 => {
                        return ::core::result::Result::Err(__rt::FitError::Plan(error));
                    }
                    ::core::result::Result::Err(_) => {
                        search.record(::core::option::Option::None);
                    }
                }
            }
            search.finish()
        }

        #wrappers
    }
}

/// `StatePlan::fit_sequences` and `fit_profile_blocks`: `fit_profile` with its free input set.
fn fit_profile_wrappers() -> TokenStream {
    quote! {
        #[doc = "The most concurrent sequences of `context` tokens each whose plan fits"]
        #[doc = "`budget` bytes: `fit_profile` over `sequences`, as"]
        #[doc = "`metrale_circuit::fit_sequences`."]
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "As `fit_profile`."]
        pub const fn fit_sequences(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::ServingProfile,
            context: u64,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::Fit, __rt::FitError<__rt::PlanError>> {
            let free = __rt::ProfileFree::Sequences { context };
            Self::fit_profile(dims, formats, profile, free, align, budget)
        }

        #[doc = "The most blocks of `profile`'s main KV pool whose plan fits `budget` bytes,"]
        #[doc = "a draft pool it ties (`draft_kv`) growing with it: `fit_profile` over the"]
        #[doc = "pool, as `metrale_circuit::fit_profile_blocks`."]
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "As `fit_profile`."]
        pub const fn fit_profile_blocks(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::ServingProfile,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::Fit, __rt::FitError<__rt::PlanError>> {
            Self::fit_profile(dims, formats, profile, __rt::ProfileFree::PoolBlocks, align, budget)
        }
    }
}

/// `rank_of`: a rank's dims and pipeline stage, or why it has none (its stage first, as the
/// dynamic `Circuit::instantiate_rank` checks it).
fn rank_of_fn(whole: &proc_macro2::Literal) -> TokenStream {
    quote! {
        #[doc = "The dims and the stage of rank `rank` of `parallel`, `dims` the checkpoint's."]
        const fn rank_of<E>(
            dims: &super::Dims,
            parallel: &__rt::Parallel<'_>,
            rank: __rt::Rank,
        ) -> ::core::result::Result<(super::Dims, __rt::Stage), __rt::RankError<E>> {
            let stage = match __rt::Stage::of(#whole, parallel, rank) {
                ::core::result::Result::Ok(stage) => stage,
                ::core::result::Result::Err(fault) => return ::core::result::Result::Err(__rt::RankError::Stage(fault)),
            };
            match dims.on_tp(parallel.tp) {
                ::core::result::Result::Ok(dims) => ::core::result::Result::Ok((dims, stage)),
                ::core::result::Result::Err(fault) => ::core::result::Result::Err(__rt::RankError::Shard(fault)),
            }
        }
    }
}
