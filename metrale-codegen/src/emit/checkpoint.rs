//! One checkpoint's module: its `DIMS` and `LAYERS`, its static table (`TABLE`, the IR of
//! `table.rs` as one `__private_v0_1::Table`, and `VIEW`, the same with its lengths erased)
//! and `TERMS`, and `StatePlan`, a struct with one named `Region` field per term and the reads
//! of its arena, pool and verify rows. The runtime runs the checkpoint's algorithms on the
//! view (a stage's owners, sizes, arena and pool, the capacity searches, the rank wrapper):
//! `new` and `for_rank` are a call into it plus the typed `lay` calls only generated code can
//! write; the fits are the circuit's `AnyPlan::fit_*`, calls into it with no code per
//! checkpoint.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - `new` starts from a plan of `EMPTY` layers and blocks and lays each layer (and each
//!   prologue, epilogue and draft block) out in place, in plan order, so each layout group's
//!   cursor meets its terms in the order the runtime's `layout_order` places them: one add per
//!   term (`TableView::size` checked every sum first, or replayed the exact layout), and no
//!   block value copied.
//! - `new` and `for_rank` are one constructor (`on_stage`): a rank's dims come from
//!   `Dims::on_tp` (the circuit's `rank_of`), and its pipeline stage decides which terms are
//!   sized and which block instances lay out absent classes, so a term the rank does not hold
//!   is `Region::EMPTY` and takes no room.
//! - A KV side that reads another layer's KV (`shares`) has no row: after the lays, `on_stage`
//!   assigns it its owner's regions (`plan.l20.shared.k = plan.l14.attn.k`, the owner placed
//!   at generation time by `Circuit::owner_layer`) where the stage holds its layer. Its table
//!   holds `SHARES`, so the runtime refuses a stage holding a reader without its owner before
//!   anything else (`__abi::owners_held`: `PlanError::MissingOwner`, as the dynamic plan), in
//!   `for_rank` and the per-rank fits alike.
//! - Compile time is linear in the layers: `new` is one non-inlined `lay` call per layer
//!   and `regions()` a loop over `layers()`, so no generated function grows faster
//!   than the model (`scripts/compile_scale.py` measures it); every other function has a
//!   fixed size.

use metrale_circuit::dynamic::decl::Section;
use metrale_circuit::load::{CheckpointSpec, circuit::BlockTemplate};
use metrale_circuit::parallel::Position;
use proc_macro2::{Ident, Literal, TokenStream};
use quote::{format_ident, quote};

use super::Emitter;
use super::model::{block_type, layer_type, layer_variant};
use super::names::{doc_line, ident, index, int, reserved, taken};
use super::table::{Class, Table, first_class};

/// The pieces of a checkpoint's `StatePlan` the emitter assembles.
#[derive(Default)]
struct PlanParts {
    /// The struct's fields.
    fields: TokenStream,
    /// The fields of the empty plan `new` starts from, in plan order.
    init: TokenStream,
    /// One `lay` per layer and per prologue, epilogue and draft block, in plan order.
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
        let parts = self.plan_fields(checkpoint, &table);
        let readers = if parts.readers.is_empty() {
            quote!(&[])
        } else {
            quote!(&SHARES)
        };
        let value = Self::table_value(checkpoint, &table, &readers);
        let fields = &parts.fields;
        let plan_impl = self.plan_impl(checkpoint, &parts);
        let shares = shares_items(&parts.readers);
        let plan_doc = doc_line(&format!(
            "Every state term of checkpoint `{}`, sized and laid out: one `Region` per term,",
            checkpoint.name()
        ));

        quote! {
            #[doc = #doc]
            pub mod #name {
                use super::{CLASS_COUNT, Err, Ok, POOL_LAYERS, __abi, __rt};

                #[doc = " The checkpoint's dims."]
                pub const DIMS: super::Dims = super::Dims { #(#dims),* };

                #[doc = " The number of layers."]
                pub const LAYERS: usize = #layers;

                #[doc = " The number of terms of the plan (and of `TERMS` and `regions()`)."]
                pub const TERM_COUNT: usize = #n;

                #shares

                #[doc = " The plan's static table: every term's state id and size class (of the"]
                #[doc = " circuit's `CLASSES`) in plan order, and where each layer's rows start."]
                const TABLE: __abi::Table<TERM_COUNT, CLASS_COUNT, { LAYERS + 2 }> = #value;

                #[doc = " The table as the runtime reads every checkpoint's: `new`, `for_rank` and"]
                #[doc = " the circuit's `Checkpoint` and `AnyPlan` run on it."]
                pub(super) const VIEW: __abi::TableView<'static, CLASS_COUNT, POOL_LAYERS> = TABLE.view();

                #[doc = " Every term of the plan, in plan order: the order of `regions()`."]
                pub const TERMS: [__rt::TermInfo; TERM_COUNT] = TABLE.terms;

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

    /// A plan's verify rows and step addresses, arena, device and host bytes, per-lifetime
    /// totals and page pool: each a read of its fields, documented at length once, on
    /// `AnyPlan`.
    fn reads_fns() -> TokenStream {
        let (arena, pool, h_steps) = plan_fields();
        quote! {
            #[doc = " The verify rows the plan was made with (`inputs.verify`'s)."]
            #[must_use]
            pub const fn h_steps(&self) -> __rt::inputs::HSteps<'a> {
                self.#h_steps
            }

            #[doc = " Verified row `row` of verify slot `slot` of `state` (`RecurrentRegions::step`)."]
            #[must_use]
            pub const fn step(&self, state: &__rt::RecurrentRegions, slot: u64, row: u64) -> ::core::option::Option<__rt::Region> {
                state.step(slot, row, &self.#h_steps)
            }

            #[doc = " The arena sizes and per-lifetime totals."]
            #[must_use]
            pub const fn arena(&self) -> &__rt::Arena {
                &self.#arena
            }

            #[doc = " The device bytes: the arena's and, under vLLM's policy, the page pool's."]
            #[must_use]
            pub const fn device_bytes(&self) -> u64 {
                match &self.#pool {
                    ::core::option::Option::Some(pool) => pool.end(),
                    ::core::option::Option::None => self.#arena.device_bytes,
                }
            }

            #[doc = " Under vLLM's policy (`inputs.pool`), the page pool after the arena."]
            #[must_use]
            pub const fn pool(&self) -> ::core::option::Option<&__rt::serving::pages::PoolPlan> {
                self.#pool.as_ref()
            }

            #[doc = " The host arena's size, rounded up to the alignment."]
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

    /// `state_plan_api!`, once per circuit: the `impl` every checkpoint's `StatePlan` shares
    /// word for word (`new`, `for_rank`, `regions()`, the reads, `layer(i)`), which each
    /// checkpoint's module expands with one line. Its paths (`VIEW`, `LAYERS`, `TERM_COUNT`,
    /// `Self::on_stage`) resolve where it is expanded.
    pub(super) fn plan_api_macro(&self) -> TokenStream {
        let regions = self.regions_body();
        let errors = self.plan_errors_doc(self.classes());
        let layer_fn = self.layer_fn();
        let reads = Self::reads_fns();
        // A circuit with KV readers (`shares`): a rank may hold one without its owner.
        let shared = self
            .stateful_blocks()
            .any(|block| !block.states().iter().all(super::has_terms));
        let missing_owner: &[&str] = if shared {
            &[
                " `RankError::Plan(PlanError::MissingOwner)` first when the rank holds a reader of `SHARES` but not its owner;",
            ]
        } else {
            &[]
        };
        quote! {
            #[doc = " The `impl` every checkpoint's `StatePlan` shares: `new`, `for_rank`, `regions()`,"]
            #[doc = " the reads of its arena, pool and verify rows, and `layer(i)`."]
            macro_rules! state_plan_api {
                () => {
                    impl<'a> StatePlan<'a> {
                        #[doc = " Sizes every term under `inputs` and lays it out, every offset a multiple of"]
                        #[doc = " `align`, by the law of the dynamic `DynamicPlan::new`; a term whose inputs"]
                        #[doc = " are absent is an empty region at offset 0."]
                        #[doc = ""]
                        #[doc = " # Errors"]
                        #(#[doc = #errors])*
                        pub const fn new(
                            dims: &super::Dims,
                            inputs: &super::Inputs<'a>,
                            align: u64,
                        ) -> ::core::result::Result<Self, __rt::PlanError> {
                            Self::on_stage(dims, inputs, align, &VIEW.whole())
                        }

                        #[doc = " The plan of one rank of `parallel` (`Circuit::instantiate_rank`'s): `dims`"]
                        #[doc = " on its tensor-parallel rank, and only what its pipeline stage holds; the"]
                        #[doc = " rest are empty regions at offset 0."]
                        #[doc = ""]
                        #[doc = " # Errors"]
                        #(#[doc = #missing_owner])*
                        #[doc = " `RankError::Stage` or `Shard` for a rank or dim that does not split;"]
                        #[doc = " `RankError::Plan` with the rank's `PlanError`, as `new`."]
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

                        #[doc = " Every term's region, in the order of `TERMS`."]
                        #[must_use]
                        pub const fn regions(&self) -> [__rt::Region; TERM_COUNT] {
                            #regions
                        }

                        #reads

                        #layer_fn
                    }
                };
            }
        }
    }

    /// `impl StatePlan { on_stage, layers }` and the expansion of `state_plan_api!`: what is
    /// the checkpoint's own, its lays and its layers, and the rest, shared.
    fn plan_impl(&self, checkpoint: &CheckpointSpec, parts: &PlanParts) -> TokenStream {
        // `on_stage` names its locals as the plan's fields and initializes them by shorthand,
        // as `PlanStart` names them.
        let (arena, pool, h_steps) = plan_fields();
        let units_fn = taken(reserved::UNITS);
        let init = &parts.init;
        let layers_fn = self.layers_fn(checkpoint);
        let assign_owners = &parts.shares;
        let lays = &parts.lays;
        quote! {
            state_plan_api!();

            impl<'a> StatePlan<'a> {
                #[doc = " `new` for what `stage` holds, under `dims` (a rank's)."]
                const fn on_stage(
                    dims: &super::Dims,
                    inputs: &super::Inputs<'a>,
                    align: u64,
                    stage: &__rt::parallel::Stage,
                ) -> ::core::result::Result<Self, __rt::PlanError> {
                    let units = super::#units_fn(dims, inputs.formats);
                    let __abi::PlanStart { classes, mut cursors, #arena, #pool, #h_steps } = match VIEW.start(&units, &inputs.state_inputs(), align, stage) {
                        Ok(start) => start,
                        Err(error) => return Err(error),
                    };
                    // Each field is laid out in place, in plan order, so each group's cursor
                    // meets its terms in the order the layout places them.
                    let mut plan = Self { #init #arena, #pool, #h_steps };
                    #lays
                    #assign_owners
                    Ok(plan)
                }

                #layers_fn
            }
        }
    }

    /// The plan struct's fields and the fields of the literal `new` builds, in the order of
    /// `Circuit::instances` (plan order): prologue, layers, epilogue, draft. Each field of
    /// terms is laid out in place (`lay`), in that order, so each layout group's cursor meets
    /// its terms in plan order.
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
            self.share_fields(
                checkpoint,
                i as u64,
                circuit.layout().blocks_of(kind),
                &mut parts,
            );
            let laid = circuit
                .layout()
                .blocks_of(kind)
                .iter()
                .any(|name| self.stateful(name).is_some_and(super::block_has_terms));
            parts.init.extend(quote! { #field: super::#ty::EMPTY, });
            if laid {
                let layer = int(i as u64);
                parts
                    .lays
                    .extend(quote! { plan.#field.lay(&classes, #layer, &mut cursors); });
            }
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
            let laid = circuit
                .draft()
                .iter()
                .any(|name| self.stateful(name).is_some_and(super::block_has_terms));
            parts.init.extend(quote! { #draft: super::Draft::EMPTY, });
            if laid {
                parts
                    .lays
                    .extend(quote! { plan.#draft.lay(&classes, &mut cursors); });
            }
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
                let window = Self::window(block, place, table);
                parts
                    .lays
                    .extend(quote! { plan.#field.lay(#window, &mut cursors); });
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

    /// `classes.prologue(<first class>)` or `classes.epilogue(..)` (`StageClasses`): the classes
    /// of a prologue or epilogue block's terms, consecutive from its first (`first_class`), or
    /// absent ones when the plan's stage does not hold it.
    fn window(block: &BlockTemplate, place: Position, table: &Table<'_>) -> TokenStream {
        let class = index(first_class(&table.classes, block, Section::Main));
        if matches!(place, Position::Prologue) {
            quote!(classes.prologue(#class))
        } else {
            quote!(classes.epilogue(#class))
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

    /// `layers()`, when the circuit has layer kinds: the fields, listed (what `layer(i)` and
    /// `regions()` read, so only it grows with the layers).
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
        }
    }

    /// `layer(i)`, when the circuit has layer kinds: `layers()` read at `i`.
    fn layer_fn(&self) -> TokenStream {
        if self.circuit.layout().blocks().is_empty() {
            return TokenStream::new();
        }
        quote! {
            #[doc = " Layer `index`, or `None` past the last one."]
            #[must_use]
            pub const fn layer(&self, index: usize) -> ::core::option::Option<super::Layer<'_>> {
                __abi::nth(self.layers(), index)
            }
        }
    }

    /// The `# Errors` lines of a plan's `new`: the faults the states of `classes` can produce.
    fn plan_errors_doc(&self, classes: &[Class<'_>]) -> Vec<Literal> {
        let mut faults = super::sizes::Faults::default();
        for (block, state, ..) in classes {
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

/// The private fields of every `StatePlan` beside the layers and blocks: `arena`, `pool` and
/// `h_steps`, from the loader's reserved list (no prologue or epilogue block may take them).
fn plan_fields() -> (Ident, Ident, Ident) {
    (
        taken(reserved::ARENA),
        taken(reserved::POOL),
        taken(reserved::H_STEPS),
    )
}
