//! The arch-level types of a generated circuit: its inputs (`Dims`, `Formats`, `Inputs`; their
//! constructors from a loaded inputs file come from `choice.rs`) and the typed field groups a
//! plan is made of (`<Block>Block`, `<Kind>Layer`, `Layer`, `Draft`).
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - `Formats` has one field per format key the circuit names, so a plan cannot be built
//!   without every key: the dynamic plan's `MissingFormat` becomes a compile error.
//! - A block's struct has one field per state, typed by what the state's terms hold
//!   (`RecurrentRegions`, `KvRegions`, `CacheRegions`); blocks without state have no
//!   struct and no field. A KV side that reads another layer's KV (`shares`) has a field but
//!   no term: its block's `lay` leaves it alone and `regions()` leaves it out (a plan assigns
//!   it its owner's regions after the lays).

use metrale_circuit::StateKind;
use metrale_circuit::dynamic::decl::Section;
use metrale_circuit::load::circuit::{BlockTemplate, StateTemplate};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Emitter;
use super::names::{camel_case, doc_line, ident, index, reserved, taken, type_name};
use super::table::{Class, first_class};

impl Emitter<'_> {
    /// `impl Dims { pub const fn on_tp(&self, tp) -> Result<Dims, ShardFault> }`: the dims of
    /// one of `tp` tensor-parallel ranks, each dim of `tensor_parallel` sharded by the
    /// runtime's `shard` (the dynamic `Circuit::rank_dims`'s law), in the order listed.
    fn on_tp_fn(&self) -> TokenStream {
        let on_tp = taken(reserved::ON_TP);
        let listed = self.circuit.tensor_parallel();
        let doc = doc_line(&if listed.is_empty() {
            "These dims on one of `tp` tensor-parallel ranks: the circuit shards no dim, so the \
             same dims on every rank."
                .to_owned()
        } else {
            format!(
                "These dims on one of `tp` tensor-parallel ranks: {} divided by `tp`, or 1 \
                 where a dim is fewer than `tp` and divides it (replicated); every other dim \
                 as it is.",
                listed
                    .iter()
                    .map(|d| format!("`{d}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        });
        let shards = listed.iter().map(|dim| {
            let field = ident(dim);
            quote! {
                dims.#field = match __abi::shard(self.#field, tp) {
                    ::core::option::Option::Some(value) => value,
                    ::core::option::Option::None => {
                        return Err(__rt::parallel::ShardFault::DoesNotSplit {
                            dim: #dim,
                            value: self.#field,
                            tp,
                        });
                    }
                };
            }
        });
        let binding = if listed.is_empty() {
            quote! { let dims = *self; }
        } else {
            quote! { let mut dims = *self; }
        };
        quote! {
            impl Dims {
                #[doc = #doc]
                #[doc = ""]
                #[doc = " # Errors"]
                #[doc = " `ShardFault::ZeroRanks` when `tp` is 0; `ShardFault::DoesNotSplit`, naming"]
                #[doc = " the first listed dim `tp` neither divides nor is a multiple of."]
                pub const fn #on_tp(&self, tp: u64) -> ::core::result::Result<Self, __rt::parallel::ShardFault> {
                    if tp == 0 {
                        return Err(__rt::parallel::ShardFault::ZeroRanks);
                    }
                    #binding
                    #(#shards)*
                    Ok(dims)
                }
            }
        }
    }

    /// `Dims::try_from(&[(name, value)])`: dims given by name at run time (a fine-tune's
    /// `config.json`, `Circuit::dims_from_config`). A trait impl, so it adds no name a derived
    /// dim could take.
    fn dims_by_name(&self) -> TokenStream {
        let names = self.circuit.dims();
        let fields = names.iter().enumerate().map(|(i, dim)| {
            let field = ident(dim);
            quote! { #field: values[#i] }
        });
        // Without dims nothing is read from the values, but they are still checked.
        let read = if names.is_empty() {
            quote! { __abi::dims_by_name(values, &[])?; }
        } else {
            quote! { let values = __abi::dims_by_name(values, &[#(#names),*])?; }
        };
        quote! {
            #[doc = " The dims named in `values` (each declared dim exactly once, nothing"]
            #[doc = " else), such as `Circuit::dims_from_config` reads from a `config.json` at"]
            #[doc = " run time."]
            impl<S: ::core::convert::AsRef<str>> ::core::convert::TryFrom<&[(S, u64)]> for Dims {
                type Error = __rt::serving::registry::DimsError;
                fn try_from(values: &[(S, u64)]) -> ::core::result::Result<Self, Self::Error> {
                    #read
                    Ok(Self { #(#fields),* })
                }
            }
        }
    }

    /// `Dims`, `Formats`, `Inputs`.
    pub(super) fn inputs_types(&self) -> TokenStream {
        let circuit = self.circuit;
        let dims_doc = doc_line(&format!(
            "The dims of `{}`: one per name its shapes read (`{}`).",
            circuit.arch(),
            circuit.path()
        ));
        let dims = circuit.dims().iter().map(|dim| {
            let field = ident(dim);
            let doc = doc_line(&format!("`{dim}`."));
            quote! { #[doc = #doc] pub #field: u64, }
        });

        let derived = self.derived_fns();
        let on_tp = self.on_tp_fn();
        let by_name = self.dims_by_name();
        let formats = self.formats_type();
        let from_state_inputs = Self::state_inputs_constructor();

        quote! {
            #[doc = #dims_doc]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub struct Dims {
                #(#dims)*
            }

            #derived

            #on_tp

            #by_name

            #formats

            #[doc = " The plan inputs the engine decides: the formats, and how many units of"]
            #[doc = " each state exist."]
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct Inputs<'a> {
                #[doc = " The element type of every format key."]
                pub formats: Formats,
                #[doc = " Sequence slots of the recurrent pools, the padding dummy included."]
                pub slots: u64,
                #[doc = " The verify pools of a speculative serve; `None` when the engine does"]
                #[doc = " not verify."]
                pub verify: ::core::option::Option<__rt::VerifyInputs<'a>>,
                #[doc = " The main model's paged KV cache; `None` leaves its KV sides empty."]
                pub kv: ::core::option::Option<__rt::KvInputs>,
                #[doc = " The draft head's paged KV cache; `None` leaves its KV sides empty."]
                pub draft_kv: ::core::option::Option<__rt::KvInputs>,
                #[doc = " The dtype of the draft head's KV sides, when its pool is not in the"]
                #[doc = " format their key names (an fp8 main pool beside a bf16 draft pool);"]
                #[doc = " `None`: their format's. Every other state keeps its format."]
                pub draft_kv_dtype: ::core::option::Option<__rt::StateDtype>,
                #[doc = " The cache inputs."]
                pub caches: __rt::CacheInputs,
                #[doc = " How the states a request holds are laid out: arenas, or vLLM's"]
                #[doc = " unified page pool."]
                pub pool: __rt::serving::PoolPolicy,
            }

            impl<'a> Inputs<'a> {
                #[doc = " The same inputs as the dynamic plan takes them, without the format"]
                #[doc = " list (a generated plan reads `formats` directly)."]
                #[must_use]
                pub const fn state_inputs(&self) -> __rt::StateInputs<'a> {
                    __rt::StateInputs {
                        formats: &[],
                        slots: self.slots,
                        verify: self.verify,
                        kv: self.kv,
                        draft_kv: self.draft_kv,
                        draft_kv_dtype: self.draft_kv_dtype,
                        caches: self.caches,
                        pool: self.pool,
                    }
                }

                #[doc = " These formats with the counts of `counts` (its own `formats` unread):"]
                #[doc = " the inputs of a `ServingProfile` (`profile.inputs()`) or of a loaded"]
                #[doc = " inputs file (`file.view().inputs()`, these formats read from it by"]
                #[doc = " `Formats::from_pairs`; `from_state_inputs` does both)."]
                #[must_use]
                pub const fn with_counts(formats: Formats, counts: &__rt::StateInputs<'a>) -> Self {
                    Self {
                        formats,
                        slots: counts.slots,
                        verify: counts.verify,
                        kv: counts.kv,
                        draft_kv: counts.draft_kv,
                        draft_kv_dtype: counts.draft_kv_dtype,
                        caches: counts.caches,
                        pool: counts.pool,
                    }
                }

                #from_state_inputs
            }
        }
    }

    /// `Formats` and its `impl`: one field per format key, a dtype, or a `<Key>Format` enum
    /// (before it) for a key whose states declare packings.
    fn formats_type(&self) -> TokenStream {
        let circuit = self.circuit;
        let keys = circuit.format_keys();
        let key_count = keys.len();
        let enums = keys.iter().map(|key| self.format_enum(key));
        let format_fields = keys.iter().map(|key| {
            let field = ident(key);
            let users: Vec<String> = circuit
                .blocks()
                .iter()
                .flat_map(|b| b.states().iter().map(move |s| (b, s)))
                .filter(|(_, s)| s.shares().is_none() && s.format().key() == Some(*key))
                .map(|(b, s)| format!("`{}.{}`", b.name(), s.local()))
                .collect();
            let ty = self.format_type(key);
            let doc = doc_line(&format!(
                "`{{{key}}}`: the element type of {}{}.",
                users.join(", "),
                if circuit.key_packings(key).is_empty() {
                    ""
                } else {
                    ", or the packing each stores its unit in"
                }
            ));
            quote! { #[doc = #doc] pub #field: #ty, }
        });
        let pairs = keys.iter().map(|key| {
            let field = ident(key);
            if circuit.key_packings(key).is_empty() {
                quote! { (#key, __rt::inputs::FormatChoice::Dtype(self.#field)) }
            } else {
                quote! { (#key, self.#field.choice()) }
            }
        });
        let from_pairs = self.pairs_constructor();
        quote! {
            #(#enums)*

            #[doc = " What every format key the circuit names (`{key}`) holds: a plan cannot be"]
            #[doc = " built without all of them."]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub struct Formats {
                #(#format_fields)*
            }

            impl Formats {
                #[doc = " Every key and what it holds, as the dynamic plan's"]
                #[doc = " `StateInputs::formats` takes them."]
                #[must_use]
                pub const fn pairs(self) -> [(&'static str, __rt::inputs::FormatChoice); #key_count] {
                    [#(#pairs),*]
                }

                #from_pairs
            }
        }
    }

    /// The type of format key `key`'s field: `StateDtype`, or its `<Key>Format` enum when its
    /// states declare packings.
    pub(super) fn format_type(&self, key: &str) -> TokenStream {
        if self.circuit.key_packings(key).is_empty() {
            quote!(__rt::StateDtype)
        } else {
            let ty = format_ident!("{}Format", camel_case(key));
            quote!(#ty)
        }
    }

    /// `<Key>Format` for a key whose states declare packings (nothing for one of dtypes only):
    /// `Dtype(StateDtype)` and a variant per packing, with `choice` and `from_choice`, which
    /// read and write the dynamic plan's `FormatChoice` by the packings' names.
    fn format_enum(&self, key: &str) -> TokenStream {
        let packings = self.circuit.key_packings(key);
        if packings.is_empty() {
            return TokenStream::new();
        }
        let ty = format_ident!("{}Format", camel_case(key));
        let (dtype, expected_item) = (taken(reserved::DTYPE), taken(reserved::EXPECTED));
        let doc = doc_line(&format!(
            "What `{{{key}}}` holds: a dtype (each state of the key is its shape's elements of \
             it), or a packing each state of the key declares."
        ));
        let variants = packings.iter().map(|packing| {
            let variant = format_ident!("{}", camel_case(packing.name()));
            let parts: Vec<String> = packing
                .parts()
                .iter()
                .map(|p| format!("`{}` ({} x `{}`)", p.name(), p.dtype().name(), p.shape()))
                .collect();
            let doc = doc_line(&format!(
                "The packing `{}`: {}, in unit order.",
                packing.name(),
                parts.join(", ")
            ));
            quote! { #[doc = #doc] #variant, }
        });
        let to_choice = packings.iter().map(|packing| {
            let variant = format_ident!("{}", camel_case(packing.name()));
            let name = packing.name();
            quote! { Self::#variant => __rt::inputs::FormatChoice::Packing(#name), }
        });
        let from_choice = packings.iter().map(|packing| {
            let variant = format_ident!("{}", camel_case(packing.name()));
            let name = packing.name();
            quote! {
                if __abi::same_str(name, #name) {
                    return ::core::option::Option::Some(Self::#variant);
                }
            }
        });
        let expected = format!(
            "a dtype or one of {}",
            super::sizes::packing_names(packings)
        );
        quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
            pub enum #ty {
                #[doc = " Each state of the key is its shape's elements of this dtype."]
                #dtype(__rt::StateDtype),
                #(#variants)*
            }

            impl #ty {
                #[doc = " What the key may hold, as `MissingFormat::expected` says it."]
                pub const #expected_item: &'static str = #expected;

                #[doc = " The same value as the dynamic plan's inputs take it."]
                #[must_use]
                pub const fn choice(self) -> __rt::inputs::FormatChoice {
                    match self {
                        Self::#dtype(dtype) => __rt::inputs::FormatChoice::Dtype(dtype),
                        #(#to_choice)*
                    }
                }

                #[doc = " The value `choice` names; `None` for a packing the key's states do not"]
                #[doc = " declare."]
                #[must_use]
                pub const fn from_choice(choice: __rt::inputs::FormatChoice<&str>) -> ::core::option::Option<Self> {
                    let name = match choice {
                        __rt::inputs::FormatChoice::Dtype(dtype) => return ::core::option::Option::Some(Self::#dtype(dtype)),
                        __rt::inputs::FormatChoice::Packing(name) => name,
                    };
                    #(#from_choice)*
                    ::core::option::Option::None
                }
            }
        }
    }

    /// The block structs, layer structs, the `Layer` enum and the `Draft` struct.
    pub(super) fn region_types(&self) -> TokenStream {
        let classes = self.classes();
        let blocks = self.stateful_blocks().map(Self::block_struct);
        let layers = self.circuit.layout().blocks().iter().map(|(kind, blocks)| {
            let ty = layer_type(kind);
            let fields = self.block_fields(blocks);
            let listed: Vec<String> = blocks.iter().map(|b| format!("`{b}`")).collect();
            let doc = doc_line(&format!(
                "The regions of one `{kind}` layer: its blocks {} (a block without state has no field).",
                listed.join(", ")
            ));
            let empty = self.empty_fields(blocks);
            let lay = self.lay_fn(classes, blocks, Section::Main);
            quote! {
                #[doc = #doc]
                #[derive(Debug, Clone, Copy, PartialEq, Eq)]
                pub struct #ty { #fields }

                impl #ty {
                    #[doc = " Every block empty, before a plan lays the layer out."]
                    const EMPTY: Self = Self { #empty };

                    #lay
                }
            }
        });
        let layer_enum = self.layer_enum();
        let draft = if self.has_draft() {
            let fields = self.block_fields(self.circuit.draft());
            let empty = self.empty_fields(self.circuit.draft());
            let lay = self.lay_fn(classes, self.circuit.draft(), Section::Draft);
            quote! {
                #[doc = " The regions of the draft head's blocks (ids `draft.<block>.<state>`)."]
                #[derive(Debug, Clone, Copy, PartialEq, Eq)]
                pub struct Draft { #fields }

                impl Draft {
                    #[doc = " Every block empty, before a plan lays the draft head out."]
                    const EMPTY: Self = Self { #empty };

                    #lay
                }
            }
        } else {
            TokenStream::new()
        };
        quote! {
            #(#blocks)*
            #(#layers)*
            #layer_enum
            #draft
        }
    }

    /// `lay`, for a layer type (`section` main) or the draft head's (`section` draft) whose
    /// `blocks` have terms: each block laid out in place from its window of the classes, in
    /// order. Not inlined: a plan's `new` stays one call per layer, so its size, and the time to
    /// compile it, grow linearly with the layers; in place, so no layer is copied.
    fn lay_fn(&self, classes: &[Class<'_>], blocks: &[String], section: Section) -> TokenStream {
        let lays: Vec<TokenStream> = blocks
            .iter()
            .filter_map(|name| self.stateful(name))
            .filter(|block| super::block_has_terms(block))
            .map(|block| {
                let field = ident(block.name());
                let first = index(first_class(classes, block, section));
                match section {
                    Section::Main => {
                        quote!(self.#field.lay(classes.layer(#first, layer), cursors);)
                    }
                    Section::Draft => quote!(self.#field.lay(classes.draft(#first), cursors);),
                }
            })
            .collect();
        if lays.is_empty() {
            return TokenStream::new();
        }
        let (doc, layer) = match section {
            Section::Main => (
                " Lays out this layer, layer `layer` of a plan, in place from the classes its stage reads, block by block.",
                quote!(layer: u64,),
            ),
            Section::Draft => (
                " Lays out the draft head of a plan in place from the classes its stage reads, block by block.",
                TokenStream::new(),
            ),
        };
        quote! {
            #[doc = #doc]
            #[inline(never)]
            const fn lay(&mut self, classes: &__abi::StageClasses<CLASS_COUNT>, #layer cursors: &mut [u64; __abi::GROUPS]) {
                #(#lays)*
            }
        }
    }

    /// Whether the draft head has any state (and so the plan a `draft` field).
    pub(super) fn has_draft(&self) -> bool {
        self.circuit
            .draft()
            .iter()
            .any(|name| self.stateful(name).is_some())
    }

    /// `pub <block>: <Block>Block,` for each stateful block of `blocks`.
    fn block_fields(&self, blocks: &[String]) -> TokenStream {
        self.per_stateful_block(blocks, |field, ty, name| {
            let doc = doc_line(&format!("Block `{name}`."));
            quote! { #[doc = #doc] pub #field: #ty, }
        })
    }

    /// `item(field, type, name)` for each block of `blocks` that declares state, in order.
    fn per_stateful_block(
        &self,
        blocks: &[String],
        item: impl Fn(&proc_macro2::Ident, &proc_macro2::Ident, &str) -> TokenStream,
    ) -> TokenStream {
        blocks
            .iter()
            .filter_map(|name| self.stateful(name))
            .map(|block| {
                item(
                    &ident(block.name()),
                    &block_type(block.name()),
                    block.name(),
                )
            })
            .collect()
    }

    fn block_struct(block: &BlockTemplate) -> TokenStream {
        let ty = block_type(block.name());
        let doc = doc_line(&format!(
            "The regions of one `{}` block instance (`{}`).",
            block.name(),
            block.origin()
        ));
        let fields = block.states().iter().map(|state| {
            let field = ident(state.local());
            let group = region_group(state.kind());
            let doc = doc_line(&state_doc(block, state));
            quote! { #[doc = #doc] pub #field: __rt::#group, }
        });
        // A block instance's terms are consecutive rows of its plan, sized by consecutive
        // classes: term `j` (state by state, holding by holding) is of the window's class `j`.
        // The fields are built in that order, which is plan order, so each layout group's
        // cursor meets its terms in plan order; the group of a term is fixed by its state.
        let mut terms = Vec::new();
        let mut lays = Vec::new();
        let mut empties = Vec::new();
        let mut j = 0usize;
        for state in block.states() {
            let field = ident(state.local());
            let group = region_group(state.kind());
            empties.push(quote! { #field: __rt::#group::EMPTY, });
            if !super::has_terms(state) {
                continue;
            }
            let mut holdings = Vec::new();
            for holding_kind in metrale_circuit::Holding::of_kind(state.kind()) {
                let holding =
                    proc_macro2::Ident::new(holding_kind.name(), proc_macro2::Span::call_site());
                let class = super::names::index(j);
                j += 1;
                terms.push(quote!(self.#field.#holding));
                let group = super::names::index(metrale_circuit::__private_v0_1::group(
                    state.kind(),
                    *holding_kind,
                    state.lifetime(),
                ));
                holdings.push(quote! { #holding: classes[#class].take(&mut cursors[#group]), });
            }
            lays.push(quote! { self.#field = __rt::#group { #(#holdings)* }; });
        }
        let count = super::names::index(j);
        // A block of readers only has no term: nothing to lay out.
        let lay = if lays.is_empty() {
            TokenStream::new()
        } else {
            quote! {
                #[doc = " Lays out this instance of a plan, for its checkpoints' `StatePlan::new`: its"]
                #[doc = " terms sized by `classes` (one per term), each placed at its layout group's"]
                #[doc = " cursor, written in place. Not inlined: `new` stays one call per block"]
                #[doc = " instance, so its size, and the time to compile it, grow linearly with the"]
                #[doc = " layers."]
                #[inline(never)]
                const fn lay(
                    &mut self,
                    classes: &[__abi::ClassSize; #count],
                    cursors: &mut [u64; __abi::GROUPS],
                ) {
                    #(#lays)*
                }
            }
        };
        quote! {
            #[doc = #doc]
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub struct #ty { #(#fields)* }

            impl #ty {
                #[doc = " How many terms one instance has."]
                pub const TERM_COUNT: usize = #count;

                #[doc = " Every term an empty region, before a plan lays the instance out."]
                const EMPTY: Self = Self { #(#empties)* };

                #lay

                #[doc = " Every term's region, state by state, in plan order."]
                #[must_use]
                pub const fn regions(&self) -> [__rt::Region; #count] {
                    [#(#terms),*]
                }
            }
        }
    }

    /// `<block>: <Block>Block::EMPTY,` for each stateful block of `blocks`.
    fn empty_fields(&self, blocks: &[String]) -> TokenStream {
        blocks
            .iter()
            .filter(|name| self.stateful(name).is_some())
            .map(|name| {
                let field = ident(name);
                let ty = block_type(name);
                quote!(#field: #ty::EMPTY,)
            })
            .collect()
    }

    fn layer_enum(&self) -> TokenStream {
        if self.circuit.layout().blocks().is_empty() {
            return TokenStream::new();
        }
        let variants = self.circuit.layout().blocks().iter().map(|(kind, _)| {
            let variant = layer_variant(kind);
            let ty = layer_type(kind);
            let doc = doc_line(&format!("A layer of kind `{kind}`."));
            quote! { #[doc = #doc] #variant(&'a #ty), }
        });
        quote! {
            #[doc = " One layer of any kind, for loops over a plan's layers."]
            #[derive(Debug, Clone, Copy, PartialEq, Eq)]
            pub enum Layer<'a> { #(#variants)* }
        }
    }
}

/// `<Block>Block`.
pub(super) fn block_type(block: &str) -> proc_macro2::Ident {
    type_name(block, "Block").unwrap_or_else(|| ident(block))
}

/// `<Kind>Layer`.
pub(super) fn layer_type(kind: &str) -> proc_macro2::Ident {
    type_name(kind, "Layer").unwrap_or_else(|| ident(kind))
}

/// The `Layer` variant of a layer kind: its camel-case name.
pub(super) fn layer_variant(kind: &str) -> proc_macro2::Ident {
    type_name(kind, "").unwrap_or_else(|| ident(kind))
}

/// The field group a state's field has (`RecurrentRegions`, ...), as the runtime names it.
pub(super) fn region_group(kind: StateKind) -> proc_macro2::Ident {
    proc_macro2::Ident::new(
        metrale_circuit::__private_v0_1::field_group(kind),
        proc_macro2::Span::call_site(),
    )
}

/// The doc of a state's field: where it was declared, what it is, what a unit is.
fn state_doc(block: &BlockTemplate, state: &StateTemplate) -> String {
    if let Some(shares) = state.shares() {
        let owner = match shares.layer() {
            Some(layer) => format!("of layer `{layer}`"),
            None => format!("of the last earlier layer holding `{}`", shares.block()),
        };
        return format!(
            "`{}.{}` (`{}`): `{}`, reads the KV of `{}.{}` {owner} instead of keeping its own: \
             its owner's regions, no term of its own.",
            block.name(),
            state.local(),
            state.origin(),
            state.kind().name(),
            shares.block(),
            shares.state(),
        );
    }
    let shape = match (&state.shape(), &state.of()) {
        (Some(shape), _) => format!("shape `{shape}`"),
        (None, Some(of)) => format!("a copy of `{of}`"),
        (None, None) => "no shape".to_owned(),
    };
    format!(
        "`{}.{}` (`{}`): `{}`, lifetime `{}`, format `{}`, {shape}; {}.",
        block.name(),
        state.local(),
        state.origin(),
        state.kind().name(),
        state.lifetime().name(),
        state.format(),
        state.kind().unit()
    )
}
