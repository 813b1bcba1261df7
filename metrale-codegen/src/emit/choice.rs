//! A checkpoint chosen at run time: the `Checkpoint` enum (one variant per checkpoint, by name
//! and Hugging Face id), `AnyPlan` (one variant per checkpoint's `StatePlan`, with what every
//! plan has behind one type: terms, regions, arena sizes, layers, fit), `MAX_TERM_COUNT`, and
//! `Formats::from_pairs`, which reads the formats of a loaded inputs file.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - Variants follow `Circuit::checkpoints` (file order), named by the one `camel_case`; the
//!   loader refuses two checkpoints that would give the same variant (its `names` stage).
//! - Everything is a `const fn` and delegates to the checkpoint's own module (`DIMS`, `TERMS`,
//!   `LAYERS`, `StatePlan`): an `AnyPlan` answers exactly what its checkpoint's plan answers.
//! - Each function is one `match` arm per checkpoint, or a loop over `Checkpoint::ALL`, so
//!   the code grows with the checkpoints, never with their layers.
//! - `from_pairs` reads a key by the rule the dynamic plan reads its formats by (the first
//!   pair of the key; keys the circuit does not name are ignored).

use metrale_circuit::load::CheckpointSpec;
use proc_macro2::{Ident, TokenStream};
use quote::quote;

use super::Emitter;
use super::names::{doc_line, ident, index, reserved, taken, type_name};

impl Emitter<'_> {
    /// `Formats::from_pairs`: the formats of a `(key, choice)` list, every key required.
    pub(super) fn pairs_constructor(&self) -> TokenStream {
        let keys = self.circuit.format_keys();
        let doc = quote! {
            #[doc = " The formats a list of `(key, choice)` pairs gives, such as a loaded inputs"]
            #[doc = " file's (`file.view().inputs().formats`): for each key the circuit names, what"]
            #[doc = " its first pair holds. Pairs of keys the circuit does not name are ignored, as"]
            #[doc = " the dynamic plan ignores them."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " `MissingFormat` naming the first key (in the order of the fields) that no"]
            #[doc = " pair gives, or that a pair gives a packing its states do not declare."]
        };
        if keys.is_empty() {
            return quote! {
                #doc
                #[allow(clippy::unnecessary_wraps, reason = "every circuit's `from_pairs` returns a `Result`, even one that names no format key")]
                pub const fn from_pairs(
                    _pairs: &[(&str, __rt::inputs::FormatChoice<&str>)],
                ) -> ::core::result::Result<Self, __rt::MissingFormat> {
                    Ok(Self {})
                }
            };
        }
        let reads = keys.iter().map(|key| {
            let field = ident(key);
            if self.circuit.key_packings(key).is_empty() {
                return quote! {
                    let #field = match __abi::dtype_of(pairs, #key) {
                        Ok(dtype) => dtype,
                        Err(missing) => return Err(missing),
                    };
                };
            }
            let ty = self.format_type(key);
            let expected = taken(reserved::EXPECTED);
            quote! {
                let #field = match __abi::format_of(pairs, #key) {
                    ::core::option::Option::Some(choice) => match #ty::from_choice(choice) {
                        ::core::option::Option::Some(value) => value,
                        ::core::option::Option::None => {
                            return Err(__rt::MissingFormat { key: #key, expected: #ty::#expected, refused: true });
                        }
                    },
                    ::core::option::Option::None => {
                        return Err(__rt::MissingFormat { key: #key, expected: #ty::#expected, refused: false });
                    }
                };
            }
        });
        let fields = keys.iter().map(|key| ident(key));
        quote! {
            #doc
            pub const fn from_pairs(
                pairs: &[(&str, __rt::inputs::FormatChoice<&str>)],
            ) -> ::core::result::Result<Self, __rt::MissingFormat> {
                #(#reads)*
                Ok(Self { #(#fields),* })
            }
        }
    }

    /// `Inputs::from_state_inputs`: the formats and counts of one `StateInputs`, in one call.
    pub(super) fn state_inputs_constructor() -> TokenStream {
        quote! {
            #[doc = " The inputs `counts` gives, its formats read by `Formats::from_pairs`: a loaded"]
            #[doc = " inputs file's in one call (`Inputs::from_state_inputs(&file.view().inputs())`)."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " `MissingFormat` naming the first format key of the circuit that"]
            #[doc = " `counts.formats` does not give."]
            pub const fn from_state_inputs(
                counts: &__rt::StateInputs<'a>,
            ) -> ::core::result::Result<Self, __rt::MissingFormat> {
                match Formats::from_pairs(counts.formats) {
                    Ok(formats) => {
                        Ok(Self::with_counts(formats, counts))
                    }
                    Err(missing) => Err(missing),
                }
            }
        }
    }

    /// `MAX_TERM_COUNT`, the `Checkpoint` enum and `AnyPlan`.
    pub(super) fn choice(&self) -> TokenStream {
        let checkpoints = self.circuit.checkpoints();
        let max_terms = checkpoints
            .iter()
            .map(|c| self.term_count(c))
            .max()
            .unwrap_or_default();
        let max_terms = index(max_terms);
        let checkpoint = self.checkpoint_enum();
        let any_plan = self.any_plan();
        let arch = self.circuit.arch();
        let entries = checkpoints.iter().map(|c| {
            let name = c.name();
            let hf = c.hf().map_or_else(
                || quote!(::core::option::Option::None),
                |hf| quote!(::core::option::Option::Some(#hf)),
            );
            quote!((#name, #hf))
        });
        quote! {
            #[doc = " The most terms the plan of any checkpoint has: what an `AnyPlan`'s"]
            #[doc = " `regions()` can hold."]
            pub const MAX_TERM_COUNT: usize = #max_terms;

            #[doc = " This circuit's checkpoints (name and Hugging Face id, in `Checkpoint::ALL`"]
            #[doc = " order), for a `serving::registry::Registry` over every circuit an engine serves: it"]
            #[doc = " resolves a model by name or id across them and reports an ambiguity."]
            pub const ENTRY: __rt::serving::registry::CircuitEntry<'static> = __rt::serving::registry::CircuitEntry {
                arch: #arch,
                checkpoints: &[#(#entries),*],
            };

            #checkpoint
            #any_plan
        }
    }

    /// `enum Checkpoint` and its `impl`.
    fn checkpoint_enum(&self) -> TokenStream {
        let circuit = self.circuit;
        let checkpoints = circuit.checkpoints();
        let count = index(checkpoints.len());
        let variants = checkpoints.iter().map(|c| {
            let variant = variant(c);
            let source = c.hf().map_or_else(String::new, |hf| format!(" of `{hf}`"));
            let doc = doc_line(&format!(
                "Checkpoint `{}`{source} (`{}`), module `{}`.",
                c.name(),
                c.origin(),
                c.name()
            ));
            quote! { #[doc = #doc] #variant, }
        });
        let all = checkpoints.iter().map(|c| {
            let variant = variant(c);
            quote!(Self::#variant)
        });
        let arms = |value: &dyn Fn(&CheckpointSpec) -> TokenStream| -> TokenStream {
            checkpoints
                .iter()
                .map(|c| {
                    let variant = variant(c);
                    let value = value(c);
                    quote!(Self::#variant => #value,)
                })
                .collect()
        };
        let names = arms(&|c| {
            let name = c.name();
            quote!(#name)
        });
        // The checkpoints without an id share one arm (where the first of them is), so that no
        // two arms have the same body (`clippy::match_same_arms`).
        let without: Vec<_> = checkpoints
            .iter()
            .filter(|c| c.hf().is_none())
            .map(&variant)
            .collect();
        let hfs: TokenStream = checkpoints
            .iter()
            .filter_map(|c| match c.hf() {
                Some(hf) => {
                    let variant = variant(c);
                    Some(quote!(Self::#variant => ::core::option::Option::Some(#hf),))
                }
                None if without.first() == Some(&variant(c)) => {
                    Some(quote!(#(Self::#without)|* => ::core::option::Option::None,))
                }
                None => None,
            })
            .collect();
        let lookups = lookups();
        let module_items = self.checkpoint_module_items();
        let doc = doc_line(&format!(
            "A checkpoint of `{}`, chosen at run time: one variant per `[checkpoint.*]` table of",
            circuit.arch()
        ));
        let doc_from = doc_line(&format!(
            "`{}`, in file order. Find one by name (`from_name`) or Hugging Face id",
            circuit.path()
        ));
        let all_item = taken(reserved::ALL);
        quote! {
            #[doc = #doc]
            #[doc = #doc_from]
            #[doc = " (`from_hf`), then build its plan as an `AnyPlan` with its own dims:"]
            #[doc = " `AnyPlan::new(checkpoint, checkpoint.dims(), &inputs, 256)`."]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
            pub enum Checkpoint {
                #(#variants)*
            }

            impl Checkpoint {
                #[doc = " Every checkpoint, in file order."]
                pub const #all_item: [Self; #count] = [#(#all),*];

                #[doc = " Its name (`[checkpoint.<name>]`), which is also its module's name."]
                #[must_use]
                pub const fn name(self) -> &'static str {
                    match self { #names }
                }

                #[doc = " Its Hugging Face id (`hf`), when the circuit gives one."]
                #[must_use]
                pub const fn hf(self) -> ::core::option::Option<&'static str> {
                    match self { #hfs }
                }

                #lookups

                #module_items
            }
        }
    }

    /// The `Checkpoint` items each checkpoint's module answers: its dims, terms and counts.
    fn checkpoint_module_items(&self) -> TokenStream {
        let checkpoints = self.circuit.checkpoints();
        let arms = |item: TokenStream, by_ref: bool| -> TokenStream {
            checkpoints
                .iter()
                .map(|c| {
                    let variant = variant(c);
                    let module = ident(c.name());
                    let amp = if by_ref {
                        quote!(&)
                    } else {
                        TokenStream::new()
                    };
                    quote!(Self::#variant => #amp #module::#item,)
                })
                .collect()
        };
        let dims = arms(quote!(DIMS), true);
        let views = arms(quote!(VIEW), false);
        quote! {
            #[doc = " Its dims (its module's `DIMS`)."]
            #[must_use]
            pub const fn dims(self) -> &'static Dims {
                match self { #dims }
            }

            #[doc = " Its plan's table (its module's `VIEW`), which the runtime's algorithms read."]
            const fn view(self) -> __abi::TableView<'static, CLASS_COUNT, POOL_LAYERS> {
                match self { #views }
            }

            #[doc = " Every term of its plan, in plan order (its module's `TERMS`): the order"]
            #[doc = " of an `AnyPlan`'s `regions()`."]
            #[must_use]
            pub const fn terms(self) -> &'static [__rt::TermInfo] {
                self.view().terms
            }

            #[doc = " How many terms its plan has (its module's `TERM_COUNT`)."]
            #[must_use]
            pub const fn term_count(self) -> usize {
                self.view().terms.len()
            }

            #[doc = " How many layers it has (its module's `LAYERS`)."]
            #[must_use]
            pub const fn layer_count(self) -> usize {
                self.view().layer_count()
            }
        }
    }

    /// `Self::<Variant>(plan) => <value>,` per checkpoint, `value` given the module's name.
    fn plan_arms(&self, value: &dyn Fn(&Ident) -> TokenStream) -> TokenStream {
        self.circuit
            .checkpoints()
            .iter()
            .map(|c| {
                let variant = variant(c);
                let value = value(&ident(c.name()));
                quote!(Self::#variant(plan) => #value,)
            })
            .collect()
    }

    /// `Checkpoint::<Variant> => <value>,` per checkpoint, `value` given the variant and the
    /// module's name.
    fn checkpoint_arms(&self, value: &dyn Fn(&Ident, &Ident) -> TokenStream) -> TokenStream {
        self.circuit
            .checkpoints()
            .iter()
            .map(|c| {
                let variant = variant(c);
                let value = value(&variant, &ident(c.name()));
                quote!(Checkpoint::#variant => #value,)
            })
            .collect()
    }

    /// `enum AnyPlan` and its `impl`.
    fn any_plan(&self) -> TokenStream {
        let variants = self.circuit.checkpoints().iter().map(|c| {
            let variant = variant(c);
            let module = ident(c.name());
            let doc = doc_line(&format!("The plan of checkpoint `{}`.", c.name()));
            quote! { #[doc = #doc] #variant(#module::StatePlan<'a>), }
        });
        let new = self.checkpoint_arms(&|variant, module| {
            quote! {
                match #module::StatePlan::new(dims, inputs, align) {
                    Ok(plan) => Ok(Self::#variant(plan)),
                    Err(error) => Err(error),
                }
            }
        });
        let for_rank = self.any_plan_for_rank();
        let which: TokenStream = self
            .circuit
            .checkpoints()
            .iter()
            .map(|c| {
                let variant = variant(c);
                quote!(Self::#variant(_) => Checkpoint::#variant,)
            })
            .collect();
        let regions = self.plan_arms(&|_| quote!(__rt::RegionList::from_array(plan.regions())));
        let arena = self.plan_arms(&|_| quote!(plan.arena()));
        let h_steps = self.plan_arms(&|_| quote!(plan.h_steps()));
        let sizes = any_plan_sizes(
            &self.plan_arms(&|_| quote!(plan.device_bytes())),
            &self.plan_arms(&|_| quote!(plan.pool())),
        );
        let layer = self.any_plan_layer();
        let fits = Self::any_plan_fits();
        let profile_fits = Self::any_plan_profile_fits();
        quote! {
            #[doc = " The plan of any checkpoint, behind one type: one variant per checkpoint, holding"]
            #[doc = " its module's `StatePlan`. An engine that reads the model's name at start builds"]
            #[doc = " it with `AnyPlan::new(checkpoint, checkpoint.dims(), &inputs, align)` and reads"]
            #[doc = " every plan by one code path: `terms()` beside `regions()`, the arena sizes,"]
            #[doc = " `layer(i)`, and the fit searches; a match on the variant reaches the typed plan."]
            #[doc = ""]
            #[doc = " An enum rather than a trait the plans implement: a trait method cannot be a"]
            #[doc = " `const fn` on stable Rust, and a choice made at run time would need a boxed"]
            #[doc = " trait object. The enum is built and read by `const fn`s (a constant can be an"]
            #[doc = " `AnyPlan`), holds its plan by value without allocating, and is as large as the"]
            #[doc = " largest plan."]
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            #[allow(clippy::large_enum_variant, reason = "a plan is built once per engine, by value in a `const fn`: boxing the larger plans would allocate and could not be const")]
            pub enum AnyPlan<'a> {
                #(#variants)*
            }

            impl<'a> AnyPlan<'a> {
                #[doc = " The plan of `checkpoint` under `dims` (its own: `checkpoint.dims()`),"]
                #[doc = " `inputs` and `align`: the checkpoint's `StatePlan::new`."]
                #[doc = ""]
                #[doc = " # Errors"]
                #[doc = " Those of the checkpoint's `StatePlan::new`: `PlanError::BadAlign` when"]
                #[doc = " `align` is not a nonzero power of two, or the first state whose size fails."]
                pub const fn new(
                    checkpoint: Checkpoint,
                    dims: &Dims,
                    inputs: &Inputs<'a>,
                    align: u64,
                ) -> ::core::result::Result<Self, __rt::PlanError> {
                    match checkpoint { #new }
                }

                #for_rank

                #[doc = " Its checkpoint."]
                #[must_use]
                pub const fn checkpoint(&self) -> Checkpoint {
                    match self { #which }
                }

                #[doc = " Every term of the plan, in plan order: its checkpoint's `TERMS`."]
                #[must_use]
                pub const fn terms(&self) -> &'static [__rt::TermInfo] {
                    self.checkpoint().terms()
                }

                #[doc = " Every term's region, in the order of `terms()`: as many as its checkpoint"]
                #[doc = " has terms, read as a slice (`as_slice()`, or through `Deref`)."]
                #[must_use]
                pub const fn regions(&self) -> __rt::RegionList<MAX_TERM_COUNT> {
                    match self { #regions }
                }

                #[doc = " The arena sizes and per-lifetime totals."]
                #[must_use]
                pub const fn arena(&self) -> &__rt::Arena {
                    match self { #arena }
                }

                #[doc = " The verify rows the plan was made with: its checkpoint's"]
                #[doc = " `StatePlan::h_steps`."]
                #[must_use]
                pub const fn h_steps(&self) -> __rt::inputs::HSteps<'a> {
                    match self { #h_steps }
                }

                #sizes
                #layer
                #fits
                #profile_fits
            }
        }
    }

    /// `AnyPlan::for_rank`: the chosen checkpoint's `StatePlan::for_rank`.
    fn any_plan_for_rank(&self) -> TokenStream {
        let arms = self.checkpoint_arms(&|variant, module| {
            quote! {
                match #module::StatePlan::for_rank(dims, inputs, align, parallel, rank) {
                    Ok(plan) => Ok(Self::#variant(plan)),
                    Err(error) => Err(error),
                }
            }
        });
        quote! {
                #[doc = " The plan of `checkpoint` on one rank of `parallel`, `dims` the checkpoint's"]
                #[doc = " own: the checkpoint's `StatePlan::for_rank`."]
                #[doc = ""]
                #[doc = " # Errors"]
                #[doc = " Those of the checkpoint's `StatePlan::for_rank`: `RankError::Stage` for a"]
                #[doc = " size, rank or split that cannot be, `RankError::Shard` for a dim that does"]
                #[doc = " not split, `RankError::Plan` with the rank's `PlanError`."]
                pub const fn for_rank(
                    checkpoint: Checkpoint,
                    dims: &Dims,
                    inputs: &Inputs<'a>,
                    align: u64,
                    parallel: &__rt::parallel::Parallel<'_>,
                    rank: __rt::parallel::Rank,
                ) -> ::core::result::Result<Self, __rt::parallel::RankError<__rt::PlanError>> {
                    match checkpoint { #arms }
                }

        }
    }

    /// `AnyPlan::layer`, when the circuit has layer kinds (and so a `Layer` enum).
    fn any_plan_layer(&self) -> TokenStream {
        if self.circuit.layout().blocks().is_empty() {
            return TokenStream::new();
        }
        let layers = self.plan_arms(&|_| quote!(plan.layer(index)));
        quote! {
            #[doc = " Layer `index` (its checkpoint's `StatePlan::layer`), or `None` past the last"]
            #[doc = " one (`layer_count()`)."]
            #[must_use]
            pub const fn layer(&self, index: usize) -> ::core::option::Option<Layer<'_>> {
                match self { #layers }
            }
        }
    }

    /// `AnyPlan::fit_profile` and its rank's form: the runtime's profile search on the chosen
    /// checkpoint's table (sequences per rank among them).
    fn any_plan_profile_fits() -> TokenStream {
        let units = taken(reserved::UNITS);
        quote! {
            #[doc = " The largest value of `profile`'s free input `free` (its sequences at a"]
            #[doc = " context, or its pool's blocks) whose plan of `checkpoint` fits `budget`"]
            #[doc = " device bytes: the profile at each probed value (`ServingProfile::varied`), by"]
            #[doc = " the search of `metrale_circuit::dynamic::fit_profile`, on the checkpoint's table."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " `FitError::NoKvPool` when `free` is the pool and the profile has none;"]
            #[doc = " `FitError::Plan` when the plan fails at 0; `FitError::TooSmall` when even 0"]
            #[doc = " exceeds `budget`; `FitError::NoneFits` when 0 fits and 1 does not."]
            pub const fn fit_profile(
                checkpoint: Checkpoint,
                dims: &Dims,
                formats: Formats,
                profile: &__rt::serving::ServingProfile,
                free: __rt::serving::ProfileFree,
                align: u64,
                budget: u64,
            ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
                let view = checkpoint.view();
                view.fit_profile(&#units(dims, formats), profile, free, align, budget, &view.whole())
            }

            #[doc = " `fit_profile` on one rank of `parallel` (its plan `for_rank`'s, the budget"]
            #[doc = " that GPU's); its sequences on a rank are `free = ProfileFree::Sequences { context }`."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " `RankError::Stage` or `Shard` for a rank or dim that does not split;"]
            #[doc = " `RankError::Plan` with the rank's `FitError`, as `fit_profile`"]
            #[doc = " (`PlanError::MissingOwner` first, for a rank holding a KV reader but not its owner)."]
            #[allow(clippy::too_many_arguments, reason = "`fit_profile`'s arguments and the rank's two")]
            pub const fn fit_profile_for_rank(
                checkpoint: Checkpoint,
                dims: &Dims,
                formats: Formats,
                profile: &__rt::serving::ServingProfile,
                free: __rt::serving::ProfileFree,
                align: u64,
                budget: u64,
                parallel: &__rt::parallel::Parallel<'_>,
                rank: __rt::parallel::Rank,
            ) -> ::core::result::Result<__rt::serving::Fit, __rt::parallel::RankError<__rt::serving::FitError<__rt::PlanError>>> {
                match rank_of(dims, checkpoint.layer_count(), parallel, rank) {
                    Ok((dims, stage)) => __abi::in_rank(checkpoint.view().fit_profile(&#units(&dims, formats), profile, free, align, budget, &stage)),
                    Err(error) => Err(error),
                }
            }
        }
    }

    /// `AnyPlan::fit_kv_blocks`, its rank's form, and `AnyPlan::fit_sequences`: the runtime's
    /// searches on the chosen checkpoint's table.
    fn any_plan_fits() -> TokenStream {
        let units = taken(reserved::UNITS);
        quote! {
            #[doc = " The most main KV blocks (`inputs.kv`'s, or the pages of `inputs.pool`) whose"]
            #[doc = " plan of `checkpoint` fits `budget` device bytes, every other input as given,"]
            #[doc = " by the search of `metrale_circuit::dynamic::fit_kv_blocks`: the value, and"]
            #[doc = " the device bytes at it and at one more block."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " `FitError::NoKvPool` without `inputs.kv`, `FitError::Plan` when the plan"]
            #[doc = " fails at 0 blocks, `FitError::TooSmall` when even 0 blocks exceed `budget`,"]
            #[doc = " `FitError::NoneFits` when 0 blocks fit and 1 does not."]
            pub const fn fit_kv_blocks(
                checkpoint: Checkpoint,
                dims: &Dims,
                inputs: &Inputs<'_>,
                align: u64,
                budget: u64,
            ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
                let view = checkpoint.view();
                view.fit_kv_blocks(&#units(dims, inputs.formats), &inputs.state_inputs(), align, budget, &view.whole())
            }

            #[doc = " `fit_kv_blocks` on one rank of `parallel` (its plan `for_rank`'s, the budget"]
            #[doc = " that GPU's)."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " `RankError::Stage` or `Shard` for a rank or dim that does not split;"]
            #[doc = " `RankError::Plan` with the rank's `FitError`, as `fit_kv_blocks`"]
            #[doc = " (`PlanError::MissingOwner` first, for a rank holding a KV reader but not its owner)."]
            pub const fn fit_kv_blocks_for_rank(
                checkpoint: Checkpoint,
                dims: &Dims,
                inputs: &Inputs<'_>,
                align: u64,
                budget: u64,
                parallel: &__rt::parallel::Parallel<'_>,
                rank: __rt::parallel::Rank,
            ) -> ::core::result::Result<__rt::serving::Fit, __rt::parallel::RankError<__rt::serving::FitError<__rt::PlanError>>> {
                match rank_of(dims, checkpoint.layer_count(), parallel, rank) {
                    Ok((dims, stage)) => __abi::in_rank(checkpoint.view().fit_kv_blocks(&#units(&dims, inputs.formats), &inputs.state_inputs(), align, budget, &stage)),
                    Err(error) => Err(error),
                }
            }

            #[doc = " The most concurrent sequences of `context` tokens each whose plan of"]
            #[doc = " `checkpoint` fits `budget` device bytes, `profile` scaled to each probed"]
            #[doc = " count: `fit_profile` over `ProfileFree::Sequences { context }`."]
            #[doc = ""]
            #[doc = " # Errors"]
            #[doc = " As `fit_profile`."]
            pub const fn fit_sequences(
                checkpoint: Checkpoint,
                dims: &Dims,
                formats: Formats,
                profile: &__rt::serving::ServingProfile,
                context: u64,
                align: u64,
                budget: u64,
            ) -> ::core::result::Result<__rt::serving::Fit, __rt::serving::FitError<__rt::PlanError>> {
                Self::fit_profile(checkpoint, dims, formats, profile, __rt::serving::ProfileFree::Sequences { context }, align, budget)
            }
        }
    }
}

/// The sizes of an `AnyPlan`: its device bytes and page pool its plan's (`device_bytes` and
/// `pool`, the match arms reading them), the rest read from its `arena()` as a `StatePlan`
/// reads its own; and its layer count.
fn any_plan_sizes(device_bytes: &TokenStream, pool: &TokenStream) -> TokenStream {
    quote! {
        #[doc = " The device bytes: the arena's and, under vLLM's policy, the page pool"]
        #[doc = " after it (its checkpoint's `StatePlan::device_bytes`)."]
        #[must_use]
        pub const fn device_bytes(&self) -> u64 {
            match self { #device_bytes }
        }

        #[doc = " Under vLLM's policy (`inputs.pool`), the page pool: its checkpoint's"]
        #[doc = " `StatePlan::pool`."]
        #[must_use]
        pub const fn pool(&self) -> ::core::option::Option<&__rt::serving::pages::PoolPlan> {
            match self { #pool }
        }

        #[doc = " The host arena's size (the prompt-lookup index), rounded up to the"]
        #[doc = " alignment."]
        #[must_use]
        pub const fn host_bytes(&self) -> u64 {
            self.arena().host_bytes
        }

        #[doc = " The bytes the terms of `space` with `lifetime` hold, padding excluded."]
        #[must_use]
        pub const fn lifetime_bytes(&self, space: __rt::Space, lifetime: __rt::Lifetime) -> u64 {
            self.arena().lifetime_bytes(space, lifetime)
        }

        #[doc = " The bytes the terms of `space` hold, padding excluded."]
        #[must_use]
        pub const fn term_bytes(&self, space: __rt::Space) -> u64 {
            self.arena().term_bytes(space)
        }

        #[doc = " How many layers the plan has: its checkpoint's `LAYERS`."]
        #[must_use]
        pub const fn layer_count(&self) -> usize {
            self.checkpoint().layer_count()
        }
    }
}

/// The `Checkpoint` (and `AnyPlan`) variant of a checkpoint: its camel-case name.
fn variant(checkpoint: &CheckpointSpec) -> Ident {
    type_name(checkpoint.name(), "").unwrap_or_else(|| ident(checkpoint.name()))
}

/// `Checkpoint::from_name` and `Checkpoint::from_hf`: loops over `Checkpoint::ALL`, so their
/// size does not grow with the checkpoints.
fn lookups() -> TokenStream {
    let all = taken(reserved::ALL);
    quote! {
        #[doc = " The checkpoint named `name`, spelled exactly as `name()` spells it; `None`"]
        #[doc = " when the circuit has no such checkpoint."]
        #[must_use]
        pub const fn from_name(name: &str) -> ::core::option::Option<Self> {
            let mut i = 0;
            while i < Self::#all.len() {
                if __abi::same_str(Self::#all[i].name(), name) {
                    return ::core::option::Option::Some(Self::#all[i]);
                }
                i += 1;
            }
            ::core::option::Option::None
        }

        #[doc = " The checkpoint whose Hugging Face id is `hf`, ASCII case ignored as the Hub"]
        #[doc = " ignores it (`qwen/qwen3.5-27b` finds `Qwen/Qwen3.5-27B`; the first in file"]
        #[doc = " order when several share it); `None` when no checkpoint has that id."]
        #[must_use]
        pub const fn from_hf(hf: &str) -> ::core::option::Option<Self> {
            let mut i = 0;
            while i < Self::#all.len() {
                if ::core::matches!(Self::#all[i].hf(), ::core::option::Option::Some(id) if __abi::same_id(id, hf)) {
                    return ::core::option::Option::Some(Self::#all[i]);
                }
                i += 1;
            }
            ::core::option::Option::None
        }
    }
}
