//! One checkpoint's module: its `DIMS` and `LAYERS`, its static table (`TABLE`, the IR of
//! `table.rs` as one `__private_v0_1::Table`) and `TERMS`, and `StatePlan`, a struct with one
//! named `Region` field per term. The runtime runs the checkpoint's algorithms on the table
//! (a stage's sizes and arena, the capacity searches, the rank wrapper): `new`, `for_rank`
//! and each `fit_*` are a call into it, plus the typed `lay` calls only generated code can
//! write.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - `new` starts from a plan of `EMPTY` layers and blocks and lays each block instance out in
//!   place, in plan order, so each layout group's cursor meets its terms in the order the
//!   runtime's `layout_order` places them: one add per term (`Table::size` checked every sum
//!   first, or replayed the exact layout), and no block value copied.
//! - `new` and `for_rank` are one constructor (`on_stage`): a rank's dims come from
//!   `Dims::on_tp` (the circuit's `rank_of`), and its pipeline stage decides which terms are
//!   sized and which block instances lay out absent classes, so a term the rank does not hold
//!   is `Region::EMPTY` and takes no room.
//! - A KV side that reads another layer's KV (`shares`) has no row: after the lays, `on_stage`
//!   assigns it its owner's regions (`plan.l20.shared.k = plan.l14.attn.k`, the owner placed
//!   at generation time by `Circuit::owner_layer`) where the stage holds its layer, and before
//!   anything else refuses a stage holding a reader without its owner (the runtime's
//!   `__abi::owners_held` over `SHARES`: `PlanError::MissingOwner`, as the dynamic plan), in `for_rank` and the per-rank
//!   fits alike. A checkpoint without readers has neither `SHARES` nor the check.
//! - Compile time is linear in the layers: `new` is one non-inlined `lay` call per block
//!   instance and `regions()` a loop over `layers()`, so no generated function grows faster
//!   than the model (`scripts/compile_scale.py` measures it); every other function has a
//!   fixed size.

use metrale_circuit::Holding;
use metrale_circuit::load::{CheckpointSpec, circuit::BlockTemplate};
use metrale_circuit::parallel::Position;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::Emitter;
use super::model::{block_type, layer_type, layer_variant};
use super::names::{doc_line, ident, index, int, reserved, taken};
use super::table::Table;

/// The pieces of a checkpoint's `StatePlan` the emitter assembles.
#[derive(Default)]
struct PlanParts {
    /// The struct's fields.
    fields: TokenStream,
    /// The fields of the empty plan `new` starts from, in plan order.
    init: TokenStream,
    /// One `lay` per block instance, in plan order.
    lays: TokenStream,
    /// After the lays: each reader (`shares`) given its owner's regions, where the stage holds
    /// it.
    shares: TokenStream,
    /// Each reader, in plan order: its id, its owner's, and their layers (`SHARES`).
    readers: Vec<(String, String, u64, u64)>,
}

impl Emitter<'_> {
    /// `pub mod <checkpoint> { ... }`.
    pub(super) fn checkpoint_module(&self, checkpoint: &CheckpointSpec) -> TokenStream {
        let (arena, pool, h_steps) = plan_fields();
        let name = ident(checkpoint.name());
        let table = self.table(checkpoint);
        let n = index(table.rows.len());
        let c = index(table.classes.len());
        let layers = index(checkpoint.layer_kinds().len());

        let source = checkpoint
            .hf()
            .as_ref()
            .map_or_else(String::new, |hf| format!(" of `{hf}`"));
        let doc = doc_line(&format!(
            "Checkpoint `{}`{source} (`{}`): {} layers.",
            checkpoint.name(),
            checkpoint.origin(),
            checkpoint.layer_kinds().len()
        ));
        let dims = checkpoint.dims().iter().map(|(dim, value)| {
            let field = ident(dim);
            let value = int(*value);
            quote!(#field: #value)
        });
        let value = self.table_value(checkpoint, &table);
        let parts = self.plan_fields(checkpoint, &table);
        let fields = &parts.fields;
        let plan_impl = self.plan_impl(checkpoint, &table, &parts);
        let shares = shares_items(&parts.readers);
        let plan_doc = doc_line(&format!(
            "Every state term of checkpoint `{}`, sized and laid out: one `Region` per term,",
            checkpoint.name()
        ));

        quote! {
            #[doc = #doc]
            pub mod #name {
                use super::{Err, Ok, __abi, __rt};

                #[doc = " The checkpoint's dims."]
                pub const DIMS: super::Dims = super::Dims { #(#dims),* };

                #[doc = " The number of layers."]
                pub const LAYERS: usize = #layers;

                #[doc = " The number of terms of the plan (and of `TERMS` and `regions()`)."]
                pub const TERM_COUNT: usize = #n;

                #[doc = " The plan's static table: every term's state id and size class in plan"]
                #[doc = " order, every size class, and where each layer's rows start."]
                const TABLE: __abi::Table<TERM_COUNT, #c, { LAYERS + 2 }> = #value;

                #[doc = " Every term of the plan, in plan order: the order of `regions()`."]
                pub const TERMS: [__rt::TermInfo; TERM_COUNT] = TABLE.terms;

                #shares

                #[doc = #plan_doc]
                #[doc = " reachable as a field path (`plan.l0.<block>.<state>.<holding>`)."]
                #[derive(Debug, Clone, Copy, PartialEq, Eq)]
                pub struct StatePlan<'a> {
                    #fields
                    #[doc = " The arena sizes and per-lifetime totals."]
                    #arena: __rt::Arena,
                    #[doc = " Under vLLM's policy, the page pool after the arena."]
                    #pool: ::core::option::Option<__rt::serving::pages::PoolPlan>,
                    #[doc = " The verify rows it was made with (`inputs.verify`), which say where"]
                    #[doc = " each verify slot's `h_steps` rows start."]
                    #h_steps: __rt::inputs::HSteps<'a>,
                }

                #plan_impl
            }
        }
    }

    /// A plan's arena, device and host bytes, per-lifetime totals and page pool.
    fn totals_fns() -> TokenStream {
        let (arena, pool, _) = plan_fields();
        quote! {
                    #[doc = " The arena sizes and per-lifetime totals."]
                    #[must_use]
                    pub const fn arena(&self) -> &__rt::Arena {
                        &self.#arena
                    }

                    #[doc = " The device bytes: the arena's (the end of its last region, rounded up"]
                    #[doc = " to the alignment) and, under vLLM's policy, the page pool after it."]
                    #[must_use]
                    pub const fn device_bytes(&self) -> u64 {
                        match &self.#pool {
                            ::core::option::Option::Some(pool) => pool.end(),
                            ::core::option::Option::None => self.#arena.device_bytes,
                        }
                    }

                    #[doc = " Under vLLM's policy (`inputs.pool`), the page pool: its shape, pages,"]
                    #[doc = " slots (`slot(s)`) and page addresses (`page(slot, p)`); the same pool as"]
                    #[doc = " the dynamic plan's `pool()`."]
                    #[must_use]
                    pub const fn pool(&self) -> ::core::option::Option<&__rt::serving::pages::PoolPlan> {
                        self.#pool.as_ref()
                    }

                    #[doc = " The host arena's size (the prompt-lookup index), rounded up to the"]
                    #[doc = " alignment."]
                    #[must_use]
                    pub const fn host_bytes(&self) -> u64 {
                        self.#arena.host_bytes
                    }

                    #[doc = " The bytes the terms of `space` with `lifetime` hold, padding excluded."]
                    #[must_use]
                    pub const fn lifetime_bytes(&self, space: __rt::Space, lifetime: __rt::Lifetime) -> u64 {
                        self.#arena.lifetime_bytes(space, lifetime)
                    }

                    #[doc = " The bytes the terms of `space` hold, padding excluded."]
                    #[must_use]
                    pub const fn term_bytes(&self, space: __rt::Space) -> u64 {
                        self.#arena.term_bytes(space)
                    }
        }
    }

    /// `StatePlan::for_rank`: `new` on one rank's dims and stage.
    fn for_rank_fn(shared: bool) -> TokenStream {
        let missing_owner: &[&str] = if shared {
            &[
                " A rank that holds a KV side that reads another layer's KV (`SHARES`) but not",
                " that layer has no plan: `RankError::Plan(PlanError::MissingOwner)`, before any",
                " other plan error.",
            ]
        } else {
            &[]
        };
        quote! {
                #[doc = " The plan of one rank of `parallel`: `dims` (the checkpoint's, such as"]
                #[doc = " `DIMS`) on its tensor-parallel rank (`Dims::on_tp`), and only what its"]
                #[doc = " pipeline stage holds (`Stage::of`): the layers it does not hold, and the"]
                #[doc = " prologue off the first rank and the epilogue and draft head off the last,"]
                #[doc = " are empty regions at offset 0 that take no room, as absent groups are. The"]
                #[doc = " same plan as the dynamic one of `Circuit::instantiate_rank`."]
                #[doc = ""]
                #[doc = " # Errors"]
                #[doc = " `RankError::Stage` when a size is 0, the rank is outside them or the"]
                #[doc = " layers do not split; `RankError::Shard` when a sharded dim does not split;"]
                #[doc = " `RankError::Plan` with the rank's `PlanError`, as `new`."]
                #(#[doc = #missing_owner])*
                pub const fn for_rank(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'a>,
                    align: u64,
                    parallel: &__rt::parallel::Parallel<'_>,
                    rank: __rt::parallel::Rank,
                ) -> ::core::result::Result<Self, __rt::parallel::RankError<__rt::PlanError>> {
                    match super::rank_of(dims, LAYERS, parallel, rank) {
                        Ok((dims, stage)) => __abi::in_rank(Self::on_stage(&dims, inputs, align, &stage)),
                        Err(error) => Err(error),
                    }
                }

        }
    }

    /// The verify rows a plan keeps, and a step's address under them.
    fn verify_fns() -> TokenStream {
        let (_, _, h_steps) = plan_fields();
        quote! {
                #[doc = " The verify rows the plan was made with (`inputs.verify`'s `h_steps`;"]
                #[doc = " no slot without verify inputs)."]
                #[must_use]
                pub const fn h_steps(&self) -> __rt::inputs::HSteps<'a> {
                    self.#h_steps
                }

                #[doc = " Verified row `row` of verify slot `slot` of the recurrent state `state`"]
                #[doc = " (one of this plan's fields, `plan.step(&plan.l0.gdn.h, slot, row)`): its"]
                #[doc = " `RecurrentRegions::step` under the verify rows the plan was made with."]
                #[doc = " `None` out of range."]
                #[must_use]
                pub const fn step(&self, state: &__rt::RecurrentRegions, slot: u64, row: u64) -> ::core::option::Option<__rt::Region> {
                    state.step(slot, row, &self.#h_steps)
                }
        }
    }

    /// `impl StatePlan { new, for_rank, regions, totals, verify, fits, layers }`.
    fn plan_impl(
        &self,
        checkpoint: &CheckpointSpec,
        table: &Table<'_>,
        parts: &PlanParts,
    ) -> TokenStream {
        // `on_stage` names its locals as the plan's fields and initializes them by shorthand;
        // the arena's local is `StageSizes`'s field, named `arena` as the plan's is.
        let (arena, pool, h_steps) = plan_fields();
        let units_fn = taken(reserved::UNITS);
        let init = &parts.init;
        let lays = &parts.lays;
        let regions = self.regions_body();
        let errors = self.plan_errors_doc(table);
        let layers_fn = self.layers_fn(checkpoint);
        let shared = !parts.readers.is_empty();
        let fits = fit_fns(shared);
        let totals = Self::totals_fns();
        let verify = Self::verify_fns();
        let for_rank = Self::for_rank_fn(shared);
        let assign_owners = &parts.shares;
        // A rank that holds a reader but not its owner has no plan, whatever the inputs.
        let owners_held = if shared {
            quote! {
                if let Err(error) = __abi::owners_held(&SHARES, stage) {
                    return Err(error);
                }
            }
        } else {
            TokenStream::new()
        };
        quote! {
            impl<'a> StatePlan<'a> {
                #[doc = " Sizes every term under `inputs` and lays the terms out, every offset a"]
                #[doc = " multiple of `align`, by the same law as the dynamic"]
                #[doc = " `metrale_circuit::dynamic::DynamicPlan::new`. A term whose inputs are absent"]
                #[doc = " (no verify, no KV, no cache group) is an empty region at offset 0."]
                #[doc = ""]
                #[doc = " # Errors"]
                #(#[doc = #errors])*
                pub const fn new(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'a>,
                    align: u64,
                ) -> ::core::result::Result<Self, __rt::PlanError> {
                    Self::on_stage(dims, inputs, align, &TABLE.whole())
                }

                #for_rank

                #[doc = " `new` for what `stage` holds, under `dims` (a rank's)."]
                const fn on_stage(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'a>,
                    align: u64,
                    stage: &__rt::parallel::Stage,
                ) -> ::core::result::Result<Self, __rt::PlanError> {
                    #owners_held
                    let units = super::#units_fn(dims, inputs.formats);
                    let counts = inputs.state_inputs();
                    let __abi::StageSizes { classes, mut cursors, arena } = match TABLE.size(&units, &counts, align, stage) {
                        Ok(sized) => sized,
                        Err(error) => return Err(error),
                    };
                    let #pool = match TABLE.pool_plan(&units, &counts, stage, &arena) {
                        Ok(pool) => pool,
                        Err(error) => return Err(error),
                    };
                    // Each block instance is laid out in place, in plan order, so each group's
                    // cursor meets its terms in the order the layout places them.
                    let #h_steps = match inputs.verify {
                        ::core::option::Option::Some(verify) => verify.h_steps,
                        ::core::option::Option::None => __rt::inputs::HSteps::NONE,
                    };
                    let mut plan = Self { #init #arena, #pool, #h_steps };
                    #lays
                    #assign_owners
                    Ok(plan)
                }

                #[doc = " Every term's region, in the order of `TERMS`."]
                #[must_use]
                pub const fn regions(&self) -> [__rt::Region; TERM_COUNT] {
                    #regions
                }

                #verify

                #totals

                #fits

                #layers_fn
            }
        }
    }

    /// The plan struct's fields and the fields of the literal `new` builds, in the order of `Circuit::instances` (plan order): prologue, layers, epilogue,
    /// draft.
    fn plan_fields(&self, checkpoint: &CheckpointSpec, table: &Table<'_>) -> PlanParts {
        let circuit = self.circuit;
        let mut parts = PlanParts::default();
        for name in circuit.prologue() {
            self.top_block(name, Position::Prologue, table, &mut parts);
        }
        for (i, kind) in checkpoint.layer_kinds().iter().enumerate() {
            let field = format_ident!("l{i}");
            let ty = layer_type(kind);
            let doc = doc_line(&format!("Layer {i}, of kind `{kind}`."));
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            self.group_lays(
                circuit.layout().blocks_of(kind),
                (&format!("l{i}"), Position::Layer(i as u64)),
                table,
                &mut parts,
            );
            self.share_fields(
                checkpoint,
                i as u64,
                circuit.layout().blocks_of(kind),
                &mut parts,
            );
            parts.init.extend(quote! { #field: super::#ty::EMPTY, });
        }
        for name in circuit.epilogue() {
            self.top_block(name, Position::Epilogue, table, &mut parts);
        }
        if self.has_draft() {
            let draft = taken(reserved::DRAFT);
            parts.fields.extend(quote! {
                #[doc = " The draft head's blocks."]
                pub #draft: super::Draft,
            });
            self.group_lays(
                circuit.draft(),
                ("draft", Position::Draft),
                table,
                &mut parts,
            );
            parts.init.extend(quote! { #draft: super::Draft::EMPTY, });
        }
        parts
    }

    /// A prologue or epilogue block: a field of the plan itself, laid out by its own `lay`.
    fn top_block(&self, name: &str, place: Position, table: &Table<'_>, parts: &mut PlanParts) {
        if let Some(block) = self.stateful(name) {
            let field = ident(name);
            let ty = block_type(name);
            let doc = doc_line(&format!("Block `{name}`."));
            parts
                .fields
                .extend(quote! { #[doc = #doc] pub #field: super::#ty, });
            parts.init.extend(quote! { #field: super::#ty::EMPTY, });
            if super::block_has_terms(block) {
                let window = Self::window(block, (name, place), table);
                parts
                    .lays
                    .extend(quote! { plan.#field.lay(#window, &mut cursors); });
            }
        }
    }

    /// The `lay` of each stateful block of a layer or of the draft head, in order:
    /// `plan.<group>.<block>.lay(<its window>, &mut cursors);`.
    fn group_lays(
        &self,
        blocks: &[String],
        (prefix, place): (&str, Position),
        table: &Table<'_>,
        parts: &mut PlanParts,
    ) {
        let group = format_ident!("{prefix}");
        for name in blocks {
            if let Some(block) = self.stateful(name)
                && super::block_has_terms(block)
            {
                let field = ident(name);
                let window = Self::window(block, (&format!("{prefix}.{name}"), place), table);
                parts
                    .lays
                    .extend(quote! { plan.#group.#field.lay(#window, &mut cursors); });
            }
        }
    }

    /// Each reader (`shares`) of the stateful blocks of layer `layer` of `checkpoint`, given
    /// its owner's regions after the lays (`plan.l20.shared.k = plan.l14.attn.k;`, the owner
    /// placed at generation time by `Circuit::owner_layer`), where the stage holds the layer.
    fn share_fields(
        &self,
        checkpoint: &CheckpointSpec,
        layer: u64,
        blocks: &[String],
        parts: &mut PlanParts,
    ) {
        let group = format_ident!("l{layer}");
        let mut assigned = TokenStream::new();
        for block in blocks.iter().filter_map(|name| self.stateful(name)) {
            let field = ident(block.name());
            for state in block.states() {
                let Some(shares) = state.shares() else {
                    continue;
                };
                // The loader checked every layer holding the block has an owner.
                let Some(owner) = self.circuit.owner_layer(checkpoint, layer, shares) else {
                    continue;
                };
                let local = ident(state.local());
                let owner_group = format_ident!("l{owner}");
                let owner_block = ident(shares.block());
                let owner_state = ident(shares.state());
                assigned.extend(quote! {
                    plan.#group.#field.#local = plan.#owner_group.#owner_block.#owner_state;
                });
                parts.readers.push((
                    format!("l{layer}.{}.{}", block.name(), state.local()),
                    format!("l{owner}.{}.{}", shares.block(), shares.state()),
                    layer,
                    owner,
                ));
            }
        }
        if !assigned.is_empty() {
            let at = int(layer);
            parts.shares.extend(quote! {
                if stage.holds(__rt::parallel::Position::Layer(#at)) {
                    #assigned
                }
            });
        }
    }

    /// `classes.<place>(<first class>)` (`__private_v0_1::StageClasses`): the classes of a
    /// block instance's terms, which are consecutive rows sized by consecutive classes (made by
    /// the first instance of the block in its section), or absent ones when the plan's stage
    /// does not hold the instance.
    fn window(
        block: &BlockTemplate,
        (prefix, place): (&str, Position),
        table: &Table<'_>,
    ) -> TokenStream {
        let row = block
            .states()
            .iter()
            .find(|state| super::has_terms(state))
            .and_then(|state| {
                let holding = Holding::of_kind(state.kind()).first().copied()?;
                let id = format!("{prefix}.{}", state.local());
                table.row_of.get(&(id, holding)).copied()
            })
            .unwrap_or_default();
        let class = table.rows.get(row).map_or(0, |(_, class)| *class);
        let class = index(class);
        match place {
            Position::Prologue => quote!(classes.prologue(#class)),
            Position::Layer(layer) => {
                let layer = int(layer);
                quote!(classes.layer(#class, #layer))
            }
            Position::Epilogue => quote!(classes.epilogue(#class)),
            Position::Draft => quote!(classes.draft(#class)),
        }
    }

    /// The body of `regions()`: each block instance's regions put after the previous one's, in
    /// plan order: the prologue, the layers (the circuit's `put_layers` over `layers()`, so the
    /// function stays the same size whatever the layer count), the epilogue, the draft.
    fn regions_body(&self) -> TokenStream {
        let draft_field = taken(reserved::DRAFT);
        let circuit = self.circuit;
        let put = |path: TokenStream| quote!(at = __abi::put(&mut all, at, #path.regions()););
        let laid = |name: &&String| self.stateful(name).is_some_and(super::block_has_terms);
        let top = |names: &[String]| -> TokenStream {
            names
                .iter()
                .filter(laid)
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
            .filter(laid)
            .map(|name| {
                let field = ident(name);
                put(quote!(self.#draft_field.#field))
            })
            .collect();
        let layers = if circuit.layout().blocks().is_empty() {
            TokenStream::new()
        } else {
            quote!(at = super::put_layers(&mut all, at, &self.layers());)
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

    /// `put_layers`, once per circuit with layer kinds: every layer's regions put after the
    /// previous one's (one `match` arm per layer kind), what each checkpoint's `regions()`
    /// calls.
    pub(super) fn put_layers_fn(&self) -> TokenStream {
        let blocks = self.circuit.layout().blocks();
        if blocks.is_empty() {
            return TokenStream::new();
        }
        // Kinds without terms share one arm: separate empty arms are the same arm twice
        // (clippy's `match_same_arms` in the user's crate).
        let mut empty: Vec<TokenStream> = Vec::new();
        let mut arms: Vec<TokenStream> = Vec::new();
        for (kind, blocks) in blocks {
            let variant = layer_variant(kind);
            let puts: Vec<TokenStream> = blocks
                .iter()
                .filter(|name| self.stateful(name).is_some_and(super::block_has_terms))
                .map(|name| {
                    let field = ident(name);
                    quote!(at = __abi::put(all, at, layer.#field.regions());)
                })
                .collect();
            if puts.is_empty() {
                empty.push(quote!(Layer::#variant(_)));
            } else {
                arms.push(quote!(Layer::#variant(layer) => { #(#puts)* }));
            }
        }
        if !empty.is_empty() {
            arms.push(quote!(#(#empty)|* => {}));
        }
        quote! {
            #[doc = " Puts the regions of `layers` into `all` from index `at`, layer by layer in"]
            #[doc = " plan order, and returns the index after them: every checkpoint's `regions()`"]
            #[doc = " reads its layers through it."]
            const fn put_layers<const N: usize, const L: usize>(
                all: &mut [__rt::Region; N],
                mut at: usize,
                layers: &[Layer<'_>; L],
            ) -> usize {
                let mut i = 0;
                while i < L {
                    match layers[i] {
                        #(#arms)*
                    }
                    i += 1;
                }
                at
            }
        }
    }

    /// `layers()` and `layer(i)`, when the circuit has layer kinds: `layers()` lists the
    /// fields, `layer(i)` reads it, so only `layers()` grows with the layers.
    fn layers_fn(&self, checkpoint: &CheckpointSpec) -> TokenStream {
        if self.circuit.layout().blocks().is_empty() {
            return TokenStream::new();
        }
        let layers = checkpoint
            .layer_kinds()
            .iter()
            .enumerate()
            .map(|(i, kind)| {
                let field = format_ident!("l{i}");
                let variant = layer_variant(kind);
                quote!(super::Layer::#variant(&self.#field))
            });
        quote! {
            #[doc = " Every layer, in order, typed by its kind, for loops over layers."]
            #[must_use]
            pub const fn layers(&self) -> [super::Layer<'_>; LAYERS] {
                [#(#layers),*]
            }

            #[doc = " Layer `index`, or `None` past the last one."]
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

    /// The `# Errors` lines of a checkpoint's `new`: the faults its states can produce.
    fn plan_errors_doc(&self, table: &Table<'_>) -> Vec<Literal> {
        let mut faults = super::sizes::Faults::default();
        for (block, state, ..) in &table.classes {
            let of = self.faults(block.shape_of(state));
            faults.divides |= of.divides;
            faults.subtracts |= of.subtracts;
        }
        let mut lines = vec![doc_line(
            "`PlanError::BadAlign` when `align` is not a nonzero power of two;",
        )];
        lines.extend(super::sizes::errors_doc(
            "PlanError",
            ", naming the first such state,",
            faults,
        ));
        lines
    }
}

/// `SHARES`, for a checkpoint with readers (`shares`): each reader's id, its owner's and their
/// layers, which the runtime's `owners_held` checks a stage against (the dynamic plan's
/// `MissingOwner`, first in plan order).
fn shares_items(readers: &[(String, String, u64, u64)]) -> TokenStream {
    if readers.is_empty() {
        return TokenStream::new();
    }
    let count = index(readers.len());
    let rows = readers.iter().map(|(state, owner, layer, owner_layer)| {
        let (layer, owner_layer) = (int(*layer), int(*owner_layer));
        quote!((#state, #owner, #layer, #owner_layer))
    });
    quote! {
        #[doc = " Every KV side that reads another layer's KV (`shares`), in plan order: its id,"]
        #[doc = " the id of the state it reads, and their layers. A plan gives each one its owner's"]
        #[doc = " regions."]
        pub const SHARES: [(&str, &str, u64, u64); #count] = [#(#rows),*];

    }
}

/// A rank's fit (`fit`, a call of the checkpoint's table on `stage`), after the check that the
/// stage holds the owner of every reader it holds, when the checkpoint has readers (`shared`).
fn rank_fit(fit: &TokenStream, shared: bool) -> TokenStream {
    if shared {
        quote! {
            match __abi::owners_held(&SHARES, &stage) {
                Ok(()) => __abi::in_rank(#fit),
                Err(error) => Err(__rt::parallel::RankError::Plan(__rt::serving::FitError::Plan(error))),
            }
        }
    } else {
        quote!(__abi::in_rank(#fit))
    }
}

/// The fits of `StatePlan`: each a call of the runtime's search on the checkpoint's table
/// (`Table::fit_profile`, `Table::fit_kv_blocks`), for the whole model or, through
/// `rank_of`, for one rank (whose stage must hold the owner of every reader it holds, when the
/// checkpoint has readers: `shared`).
fn fit_fns(shared: bool) -> TokenStream {
    let units_fn = taken(reserved::UNITS);
    let kv = fit_kv_fns(shared);
    let profile_rank = rank_fit(
        &quote!(TABLE.fit_profile(
            &super::#units_fn(&dims, formats),
            profile,
            free,
            align,
            budget,
            &stage
        )),
        shared,
    );
    quote! {
        #[doc = " The largest value of `profile`'s free input `free` whose plan's device arena"]
        #[doc = " fits `budget` bytes: the profile at each probed value"]
        #[doc = " (`ServingProfile::varied`), by the same search as"]
        #[doc = " `metrale_circuit::dynamic::fit_profile`."]
        #[doc = ""]
        #[doc = " # Errors"]
        #[doc = " `FitError::NoKvPool` when `free` is the pool and the profile has none;"]
        #[doc = " `FitError::Plan` when the plan fails at 0; `FitError::TooSmall` when even 0"]
        #[doc = " exceeds `budget`; `FitError::NoneFits` when 0 fits and 1 does not."]
        pub const fn fit_profile(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::serving::ServingProfile,
            free: __rt::serving::ProfileFree,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
            TABLE.fit_profile(&super::#units_fn(dims, formats), profile, free, align, budget, &TABLE.whole())
        }

        #[doc = " `fit_profile` for one rank of `parallel` (its plan is `for_rank`'s; the"]
        #[doc = " budget is that GPU's)."]
        #[doc = ""]
        #[doc = " # Errors"]
        #[doc = " `for_rank`'s `RankError::Stage` and `RankError::Shard`; `RankError::Plan`"]
        #[doc = " with the rank's `FitError`, as `fit_profile`."]
        #[allow(clippy::too_many_arguments, reason = "`fit_profile`'s arguments and the rank's two")]
        pub const fn fit_profile_for_rank(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::serving::ServingProfile,
            free: __rt::serving::ProfileFree,
            align: u64,
            budget: u64,
            parallel: &__rt::parallel::Parallel<'_>,
            rank: __rt::parallel::Rank,
        ) -> ::core::result::Result<__rt::serving::Fit, __rt::parallel::RankError<__rt::serving::FitError<__rt::PlanError>>> {
            match super::rank_of(dims, LAYERS, parallel, rank) {
                Ok((dims, stage)) => #profile_rank,
                Err(error) => Err(error),
            }
        }

        #[doc = " The most concurrent sequences of `context` tokens each whose plan fits"]
        #[doc = " `budget` bytes: `fit_profile` over `sequences`, as"]
        #[doc = " `metrale_circuit::dynamic::fit_sequences`."]
        #[doc = ""]
        #[doc = " # Errors"]
        #[doc = " As `fit_profile`."]
        pub const fn fit_sequences(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::serving::ServingProfile,
            context: u64,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
            Self::fit_profile(dims, formats, profile, __rt::serving::ProfileFree::Sequences { context }, align, budget)
        }

        #[doc = " The most main KV blocks of `profile` whose plan fits `budget` bytes,"]
        #[doc = " a draft pool it ties (`draft_kv`) growing with it: `fit_profile` over the"]
        #[doc = " pool, as `metrale_circuit::dynamic::fit_profile_blocks`."]
        #[doc = ""]
        #[doc = " # Errors"]
        #[doc = " As `fit_profile`."]
        pub const fn fit_profile_blocks(
            dims: &super::Dims,
            formats: super::Formats,
            profile: &__rt::serving::ServingProfile,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
            Self::fit_profile(dims, formats, profile, __rt::serving::ProfileFree::KvBlocks, align, budget)
        }

        #kv
    }
}

/// `fit_kv_blocks` and `fit_kv_blocks_for_rank`: the runtime's search over the main KV blocks
/// (on a rank, after `owners_held` when the checkpoint has readers: `shared`).
fn fit_kv_fns(shared: bool) -> TokenStream {
    let units_fn = taken(reserved::UNITS);
    let kv_rank = rank_fit(
        &quote!(TABLE.fit_kv_blocks(
            &super::#units_fn(&dims, inputs.formats),
            &inputs.state_inputs(),
            align,
            budget,
            &stage
        )),
        shared,
    );
    quote! {
        #[doc = " The most main KV blocks (`inputs.kv`'s `blocks`) whose plan's"]
        #[doc = " device arena fits `budget` bytes, every other input as given, by the same"]
        #[doc = " search as `metrale_circuit::dynamic::fit_kv_blocks`: the value, and the device bytes"]
        #[doc = " at it and at one more block."]
        #[doc = ""]
        #[doc = " # Errors"]
        #[doc = " `FitError::NoKvPool` without `inputs.kv`; `FitError::Plan` when the plan"]
        #[doc = " fails at 0 blocks; `FitError::TooSmall` when even 0 blocks exceed `budget`;"]
        #[doc = " `FitError::NoneFits` when 0 blocks fit and 1 does not."]
        pub const fn fit_kv_blocks(
            dims: &super::Dims,
            inputs: &super::Inputs<'_>,
            align: u64,
            budget: u64,
        ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
            TABLE.fit_kv_blocks(&super::#units_fn(dims, inputs.formats), &inputs.state_inputs(), align, budget, &TABLE.whole())
        }

        #[doc = " `fit_kv_blocks` for one rank of `parallel` (its plan is `for_rank`'s; the"]
        #[doc = " budget is that GPU's)."]
        #[doc = ""]
        #[doc = " # Errors"]
        #[doc = " `for_rank`'s `RankError::Stage` and `RankError::Shard`; `RankError::Plan`"]
        #[doc = " with the rank's `FitError`, as `fit_kv_blocks`."]
        pub const fn fit_kv_blocks_for_rank(
            dims: &super::Dims,
            inputs: &super::Inputs<'_>,
            align: u64,
            budget: u64,
            parallel: &__rt::parallel::Parallel<'_>,
            rank: __rt::parallel::Rank,
        ) -> ::core::result::Result<__rt::serving::Fit, __rt::parallel::RankError<__rt::serving::FitError<__rt::PlanError>>> {
            match super::rank_of(dims, LAYERS, parallel, rank) {
                Ok((dims, stage)) => #kv_rank,
                Err(error) => Err(error),
            }
        }
    }
}

/// The private fields of every `StatePlan` beside the layers and blocks: `arena`, `pool` and
/// `h_steps`, from the loader's reserved list (no prologue or epilogue block may take them).
fn plan_fields() -> (Ident, Ident, Ident) {
    (
        taken(reserved::ARENA),
        taken(reserved::POOL),
        taken(reserved::H_STEPS),
    )
}
