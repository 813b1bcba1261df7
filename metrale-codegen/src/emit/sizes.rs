//! The `blocks` module of a generated circuit: for every state of every block template (but a
//! KV side that reads another layer's KV, `shares`, which has no unit of its own), one checked
//! `const fn <state>_unit(&Dims, Formats)` giving one unit's bytes and element type.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - A unit function computes exactly what `Shape::eval` computes, with the ABI's checked
//!   helpers (overflow and division by zero are `Err`, never a wrap or a panic), then the
//!   bytes by the runtime's `Unit::of`.
//! - A copy (`of`) evaluates the copied state's shape, the one shape both units come from.
//! - Its `# Errors` names only the faults its shape can produce.

use metrale_circuit::dynamic::decl::{Reach, StateFormat};
use metrale_circuit::load::circuit::{BlockTemplate, PackingTemplate, PartTemplate, StateTemplate};
use metrale_circuit::load::shape::{Divisor, Factor, Shape};
use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};

use super::Emitter;
use super::names::{camel_case, doc_line, ident, int, reserved, taken};

impl Emitter<'_> {
    /// `pub mod blocks { pub mod <block> { ... } }` for every block with a state of its own (a
    /// KV side that reads another layer's KV has no unit).
    pub(super) fn blocks_module(&self) -> TokenStream {
        let blocks = self
            .stateful_blocks()
            .filter(|block| super::block_has_terms(block))
            .map(|block| self.block_sizes(block));
        let module = taken(reserved::BLOCKS);
        quote! {
            #[doc = " One unit of every state of every block template: its bytes and element"]
            #[doc = " type, from `Dims` and `Formats`."]
            pub mod #module {
                #(#blocks)*
            }
        }
    }

    /// `const fn units(&Dims, Formats)`: every state's unit, in [`Emitter::unit_states`] order,
    /// and the window of every KV side that has one, in [`Emitter::window_states`] order:
    /// computed once per plan or fit, and indexed by every checkpoint's size classes.
    pub(super) fn units_fn(&self) -> TokenStream {
        let (blocks, all_units) = (taken(reserved::BLOCKS), taken(reserved::UNITS));
        let units: Vec<TokenStream> = self
            .unit_states()
            .map(|(block, state)| {
                let module = ident(block.name());
                let unit_fn = format_ident!("{}_unit", ident(state.local()));
                quote!(#blocks::#module::#unit_fn(dims, formats))
            })
            .collect();
        let reaches: Vec<TokenStream> = self
            .reach_states()
            .map(|(block, state)| {
                let module = ident(block.name());
                let reach_fn = reach_fn(state);
                quote!(#blocks::#module::#reach_fn(dims))
            })
            .collect();
        let unit_count = super::names::index(units.len());
        let reach_count = super::names::index(reaches.len());
        quote! {
            #[doc = " Every state's unit, block by block, and every sliding window and attention chunk: what a plan's"]
            #[doc = " size classes index."]
            const fn #all_units(dims: &Dims, formats: Formats) -> __abi::Units<#unit_count, #reach_count> {
                __abi::Units { units: [#(#units),*], reaches: [#(#reaches),*] }
            }
        }
    }

    /// Expression writing over `base` (`dims` or `self`), knowing the circuit's derived dims.
    fn helpers(&self, base: TokenStream) -> Helpers {
        Helpers {
            used: std::collections::BTreeSet::new(),
            derived: self
                .circuit
                .derived()
                .iter()
                .map(|(name, _)| name.clone())
                .collect(),
            base,
        }
    }

    /// What `shape` can fail with besides overflow, through the derived dims it reads too.
    pub(super) fn faults(&self, shape: Option<&Shape>) -> Faults {
        let Some(shape) = shape else {
            return Faults::default();
        };
        let mut faults = Faults {
            divides: divides_by_a_dim(shape),
            subtracts: shape.subtracts(),
        };
        // The loader refused cycles, so this recursion ends.
        for dim in shape.dims() {
            if let Some((_, expr)) = self.circuit.derived().iter().find(|(n, _)| *n == dim.name) {
                let inner = self.faults(Some(expr));
                faults.divides |= inner.divides;
                faults.subtracts |= inner.subtracts;
            }
        }
        faults
    }

    /// `impl Dims { pub const fn <derived>(&self) -> Result<u64, SizeFault> }`, one per derived
    /// dim (none when the circuit derives none).
    pub(super) fn derived_fns(&self) -> TokenStream {
        let derived = self.circuit.derived();
        if derived.is_empty() {
            return TokenStream::new();
        }
        let fns = derived.iter().map(|(name, expr)| {
            let mut helpers = self.helpers(quote!(self));
            let body = helpers.shape(expr);
            let uses = helpers.uses_from(&quote!(__abi));
            let f = ident(name);
            let doc = doc_line(&format!(
                "The derived dim `{name}`: `{expr}` (`[derive]` of `{}`).",
                self.circuit.path()
            ));
            let errors = errors_doc("SizeFault", "", self.faults(Some(expr)));
            quote! {
                #[doc = #doc]
                #[doc = ""]
                #[doc = " # Errors"]
                #(#[doc = #errors])*
                pub const fn #f(&self) -> ::core::result::Result<u64, __rt::SizeFault> {
                    #uses
                    #body
                }
            }
        });
        quote! {
            impl Dims {
                #(#fns)*
            }
        }
    }

    /// Every KV side with a sliding window or an attention chunk, block by block in
    /// definition order.
    pub(super) fn reach_states(
        &self,
    ) -> impl Iterator<Item = (&BlockTemplate, &StateTemplate)> + '_ {
        self.unit_states()
            .filter(|(_, state)| state.reach().is_some())
    }

    /// The reach of `state`, its tokens indexed in the circuit's `reaches`, if it has one.
    pub(super) fn reach_index(&self, state: &StateTemplate) -> Option<Reach<usize>> {
        let reach = state.reach()?;
        let index = self
            .reach_states()
            .position(|(_, s)| std::ptr::eq(s, state))?;
        Some(reach.map(|_| index))
    }

    /// Every state of every stateful block that keeps a unit of its own (not a KV side that
    /// reads another layer's KV), block by block in definition order.
    pub(super) fn unit_states(
        &self,
    ) -> impl Iterator<Item = (&BlockTemplate, &StateTemplate)> + '_ {
        self.stateful_blocks().flat_map(|block| {
            block
                .states()
                .iter()
                .filter(|state| super::has_terms(state))
                .map(move |state| (block, state))
        })
    }

    fn block_sizes(&self, block: &BlockTemplate) -> TokenStream {
        let name = ident(block.name());
        let doc = doc_line(&format!(
            "The units of the states of block `{}` (`{}`).",
            block.name(),
            block.origin()
        ));
        let mut helpers = self.helpers(quote!(dims));
        let states: Vec<TokenStream> = block
            .states()
            .iter()
            .filter(|state| super::has_terms(state))
            .map(|state| self.state_unit(block, state, &mut helpers))
            .collect();
        let uses = helpers.uses_from(&quote!(super::super::__abi));
        quote! {
            #[doc = #doc]
            pub mod #name {
                use super::super::{__abi, __rt};
                #uses
                #(#states)*
            }
        }
    }

    /// `pub const fn <state>_unit(..)`.
    fn state_unit(
        &self,
        block: &BlockTemplate,
        state: &StateTemplate,
        helpers: &mut Helpers,
    ) -> TokenStream {
        let local = &state.local();
        let unit_fn = format_ident!("{}_unit", ident(local));
        let shape = block.shape_of(state);
        let part_shapes = state
            .packings()
            .iter()
            .flat_map(PackingTemplate::parts)
            .map(PartTemplate::shape);
        let reads_dims = shape
            .into_iter()
            .chain(part_shapes.clone())
            .any(|shape| !shape.dims().is_empty());
        let dims_param = if reads_dims {
            quote!(dims)
        } else {
            quote!(_dims)
        };
        let elements = match shape {
            Some(shape) => helpers.shape(shape),
            None => helpers.value(0),
        };
        let formats_param = if state.format().key().is_some() {
            quote!(formats)
        } else {
            quote!(_formats)
        };
        let unit = self.by_format(state, helpers, |helpers, stored| match stored {
            Stored::Dtype(dtype) => quote!(__abi::unit(#elements, #dtype)),
            Stored::Packing(packing) => {
                let list = part_list(packing, helpers);
                quote!(__abi::packing_unit(#list))
            }
        });
        let doc = unit_doc(block, state);
        let mut faults = self.faults(shape);
        for part in part_shapes {
            faults = faults.or(self.faults(Some(part)));
        }
        let errors = errors_doc("SizeFault", "", faults);
        let signature = Signature {
            elements,
            dims_param,
            formats_param,
            errors,
        };
        let parts = self.parts_fn(block, state, helpers, &signature);
        let axes = self.axes_fn(block, state, helpers);
        let Signature {
            dims_param,
            formats_param,
            errors,
            ..
        } = signature;
        let window = state.reach().map(|reach| {
            let window = reach.tokens();
            let window_fn = reach_fn(state);
            let body = helpers.shape(window);
            let param = if window.dims().is_empty() {
                quote!(_dims)
            } else {
                quote!(dims)
            };
            let doc = doc_line(&format!(
                "The {} of `{}.{local}`, in tokens: `{window}`.",
                match reach {
                    Reach::Window(_) => "sliding window",
                    Reach::Chunk(_) => "attention chunk",
                    Reach::Fixed(_) => "fixed token count",
                },
                block.name()
            ));
            let errors = errors_doc("SizeFault", "", self.faults(Some(window)));
            quote! {
                #[doc = #doc]
                #[doc = ""]
                #[doc = " # Errors"]
                #(#[doc = #errors])*
                pub const fn #window_fn(#param: &super::super::Dims) -> ::core::result::Result<u64, __rt::SizeFault> {
                    #body
                }
            }
        });
        quote! {
            #[doc = #doc]
            #[doc = ""]
            #[doc = " # Errors"]
            #(#[doc = #errors])*
            pub const fn #unit_fn(#dims_param: &super::super::Dims, #formats_param: super::super::Formats) -> ::core::result::Result<__rt::units::Unit, __rt::SizeFault> {
                #unit
            }
            #parts
            #axes
            #window
        }
    }

    /// `pub const fn <state>_axes(&Dims)` for a state with a shape (its own, or a copy's):
    /// its unit's tensor shape, one extent per ` x `-joined axis, outermost first. On a
    /// tensor-parallel rank, call it with that rank's dims (`Dims::on_tp`).
    fn axes_fn(
        &self,
        block: &BlockTemplate,
        state: &StateTemplate,
        helpers: &mut Helpers,
    ) -> Option<TokenStream> {
        let shape = block.shape_of(state)?;
        let local = state.local();
        let axes_fn = format_ident!("{}_axes", ident(local));
        let names: Vec<String> = shape.axes.iter().map(ToString::to_string).collect();
        let extents: Vec<TokenStream> = shape
            .axes
            .iter()
            .map(|axis| {
                helpers.shape(&Shape {
                    text: axis.to_string(),
                    axes: vec![axis.clone()],
                })
            })
            .collect();
        let count = super::names::index(names.len());
        let param = if shape.dims().is_empty() {
            quote!(_dims)
        } else {
            quote!(dims)
        };
        let doc = doc_line(&format!(
            "The tensor shape of one unit of `{}.{local}`: `{shape}`, outermost first, so a \
             region of it is `[units, {}]` (`Axes::strides` gives the element strides). On a \
             tensor-parallel rank, pass that rank's dims (`Dims::on_tp`).",
            block.name(),
            names.join(", ")
        ));
        let errors = errors_doc("SizeFault", "", self.faults(Some(shape)));
        Some(quote! {
            #[doc = #doc]
            #[doc = ""]
            #[doc = " # Errors"]
            #(#[doc = #errors])*
            pub const fn #axes_fn(#param: &super::super::Dims) -> ::core::result::Result<__rt::units::Axes<#count>, __rt::SizeFault> {
                __rt::units::Axes::of([#(#names),*], [#(#extents),*])
            }
        })
    }

    /// `pub const fn <state>_parts(..)` for a state that declares packings: where each part of
    /// one unit sits, in the unit function's `signature`.
    fn parts_fn(
        &self,
        block: &BlockTemplate,
        state: &StateTemplate,
        helpers: &mut Helpers,
        signature: &Signature,
    ) -> Option<TokenStream> {
        if state.packings().is_empty() {
            return None;
        }
        let local = state.local();
        let parts_fn = format_ident!("{}_parts", ident(local));
        let capacity = state
            .packings()
            .iter()
            .map(|packing| packing.parts().len())
            .chain(state.format().key().map(|_| 1))
            .max()
            .unwrap_or(1);
        let capacity = super::names::index(capacity);
        let elements = &signature.elements;
        let body = self.by_format(state, helpers, |helpers, stored| match stored {
            Stored::Dtype(dtype) => quote!(__abi::plain_parts(#local, #elements, #dtype)),
            Stored::Packing(packing) => {
                let list = part_list(packing, helpers);
                quote!(__abi::parts(#list))
            }
        });
        let doc = doc_line(&format!(
            "Where each part of one unit of `{}.{local}` sits: its packing's parts in unit order \
             (`Part::within` gives their bytes in a unit's region); a unit of one dtype is one \
             part named `{local}`.",
            block.name()
        ));
        let (dims_param, formats_param, errors) = (
            &signature.dims_param,
            &signature.formats_param,
            &signature.errors,
        );
        Some(quote! {
            #[doc = #doc]
            #[doc = ""]
            #[doc = " # Errors"]
            #(#[doc = #errors])*
            pub const fn #parts_fn(#dims_param: &super::super::Dims, #formats_param: super::super::Formats) -> ::core::result::Result<__rt::units::Parts<#capacity>, __rt::SizeFault> {
                #body
            }
        })
    }

    /// The expression of `state` as its format stores it: `each(stored)` for its one dtype or
    /// packing, or a `match` over its key's value, an arm per dtype and packing.
    fn by_format(
        &self,
        state: &StateTemplate,
        helpers: &mut Helpers,
        mut each: impl FnMut(&mut Helpers, Stored<'_>) -> TokenStream,
    ) -> TokenStream {
        match state.format() {
            StateFormat::Fixed(dtype) => {
                let variant = format_ident!("{}", camel_case(dtype.name()));
                each(helpers, Stored::Dtype(quote!(__rt::StateDtype::#variant)))
            }
            StateFormat::Packing(name) => {
                // The loader resolves a packing's name only to one of the state's packings.
                if let Some(packing) = state.packings().iter().find(|l| l.name() == name) {
                    each(helpers, Stored::Packing(packing))
                } else {
                    quote!(::core::compile_error!(
                        "a packing the state does not declare"
                    ))
                }
            }
            StateFormat::Keyed(key) if state.packings().is_empty() => {
                let field = ident(key);
                each(helpers, Stored::Dtype(quote!(formats.#field)))
            }
            StateFormat::Keyed(key) => {
                let field = ident(key);
                let ty = self.format_type(key);
                let dtype = each(helpers, Stored::Dtype(quote!(dtype)));
                let dtype_variant = taken(reserved::DTYPE);
                let arms = state.packings().iter().map(|packing| {
                    let variant = format_ident!("{}", camel_case(packing.name()));
                    let value = each(helpers, Stored::Packing(packing));
                    quote! { super::super::#ty::#variant => #value, }
                });
                quote! {
                    match formats.#field {
                        super::super::#ty::#dtype_variant(dtype) => #dtype,
                        #(#arms)*
                    }
                }
            }
        }
    }
}

/// What a state's unit function and its parts function share: the plain unit's elements, the
/// parameters' names (`_dims` when no shape reads a dim) and the `# Errors` lines.
struct Signature {
    elements: TokenStream,
    dims_param: TokenStream,
    formats_param: TokenStream,
    errors: Vec<Literal>,
}

/// The doc line of `<state>_unit`: the state, its shape and how it is stored.
fn unit_doc(block: &BlockTemplate, state: &StateTemplate) -> Literal {
    let local = state.local();
    let shape_doc = match (&state.shape(), &state.of()) {
        (Some(shape), _) => format!("Shape `{shape}`"),
        (None, Some(of)) => format!("A copy of `{}.{of}`, of its shape", block.name()),
        (None, None) => "No shape".to_owned(),
    };
    let stored_doc = match state.format() {
        StateFormat::Packing(name) => format!("stored in its packing `{name}`"),
        format if state.packings().is_empty() => format!("element type `{format}`"),
        format => format!(
            "element type `{format}`, or the packing the key holds of {}",
            packing_names(state.packings())
        ),
    };
    doc_line(&format!(
        "One unit of `{}.{local}` (`{}`), its bytes and element type: a `{}` state living `{}`, {}. {shape_doc}, {stored_doc}.",
        block.name(),
        state.origin(),
        state.kind().name(),
        state.lifetime().name(),
        state.kind().unit(),
    ))
}

/// How a state stores one unit: a dtype (an expression of one) or a packing.
enum Stored<'a> {
    /// `shape`'s elements of this dtype.
    Dtype(TokenStream),
    /// This packing's parts.
    Packing(&'a PackingTemplate),
}

/// `[(name, elements, dtype), ...]`: a packing's parts as the ABI's `packing_unit` and `parts`
/// take them.
fn part_list(packing: &PackingTemplate, helpers: &mut Helpers) -> TokenStream {
    let parts = packing.parts().iter().map(|part| {
        let name = part.name();
        let elements = helpers.shape(part.shape());
        let variant = format_ident!("{}", camel_case(part.dtype().name()));
        quote! { (#name, #elements, __rt::StateDtype::#variant) }
    });
    quote!([#(#parts),*])
}

/// `` `a`, `b` ``: the names of `packings`, as the docs and `MissingFormat::expected` list them.
pub(super) fn packing_names(packings: &[PackingTemplate]) -> String {
    packings
        .iter()
        .map(|l| format!("`{}`", l.name()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The faults an expression can produce besides overflow, its derived dims' included.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Faults {
    /// It divides by a dim (which may be zero).
    pub divides: bool,
    /// It subtracts (and may go below zero).
    pub subtracts: bool,
}

impl Faults {
    /// The faults of either expression.
    pub(super) fn or(self, other: Faults) -> Faults {
        Faults {
            divides: self.divides || other.divides,
            subtracts: self.subtracts || other.subtracts,
        }
    }
}

/// The `# Errors` lines of a function computing an expression with these `faults`, in
/// `error` (`SizeFault` or `PlanError`) terms, each variant followed by `naming`; every one can overflow (a unit's bytes too: a
/// format key's dtype is only known at run time). Doc lines ([`doc_line`]).
pub(super) fn errors_doc(error: &str, naming: &str, faults: Faults) -> Vec<Literal> {
    let mut lines = vec![format!(
        "`{error}::Overflow`{naming} when a size overflows `u64`"
    )];
    if faults.divides {
        lines.push(format!(
            "`{error}::DivisionByZero`{naming} when a divisor dim is zero"
        ));
    }
    if faults.subtracts {
        lines.push(format!(
            "`{error}::Negative`{naming} when a subtraction goes below zero"
        ));
    }
    let last = lines.len() - 1;
    lines
        .into_iter()
        .enumerate()
        .map(|(i, line)| doc_line(&format!("{line}{}", if i == last { "." } else { ";" })))
        .collect()
}

/// Whether any factor of `shape` divides by a dim (a literal divisor is never zero: the loader
/// refuses `/0`).
pub(super) fn divides_by_a_dim(shape: &Shape) -> bool {
    shape
        .axes
        .iter()
        .flat_map(|axis| &axis.terms)
        .flat_map(|term| &term.factors)
        .any(|factor| {
            matches!(
                factor,
                Factor::CeilDiv {
                    by: Divisor::Dim(_),
                    ..
                }
            )
        })
}

/// Writes expressions in the ABI's checked helpers, recording which ones it called so the
/// module imports exactly those.
pub(super) struct Helpers {
    /// The helpers' names (`add`, `ceil_div`, `mul`, `sub`, `value`), sorted.
    used: std::collections::BTreeSet<&'static str>,
    /// The derived dims: read as `<base>.<name>()`, a `Result`; the others as `<base>.<name>`.
    derived: Vec<String>,
    /// What the dims are read from: `dims` in unit functions, `self` in `Dims`' own methods.
    base: TokenStream,
}

impl Helpers {
    /// The checked expression of `shape`: the product of its axes, each the sum of its products.
    fn shape(&mut self, shape: &Shape) -> TokenStream {
        let axes: Vec<TokenStream> = shape
            .axes
            .iter()
            .map(|axis| {
                let mut sum: Option<TokenStream> = None;
                for term in &axis.terms {
                    let factors: Vec<TokenStream> =
                        term.factors.iter().map(|f| self.factor(f)).collect();
                    let product = self.product(factors);
                    sum = Some(match sum {
                        None => product,
                        Some(acc) if term.subtract => {
                            self.used.insert("sub");
                            quote!(sub(#acc, #product))
                        }
                        Some(acc) => {
                            self.used.insert("add");
                            quote!(add(#acc, #product))
                        }
                    });
                }
                sum.unwrap_or_else(|| self.value(0))
            })
            .collect();
        self.product(axes)
    }

    /// The value of the dim `dim`, as a `Result`.
    fn read(&mut self, dim: &str) -> TokenStream {
        let base = &self.base;
        let d = ident(dim);
        if self.derived.iter().any(|name| name == dim) {
            quote!(#base.#d())
        } else {
            self.used.insert("value");
            quote!(value(#base.#d))
        }
    }

    /// `value(n)`.
    fn value(&mut self, n: u64) -> TokenStream {
        self.used.insert("value");
        let n = int(n);
        quote!(value(#n))
    }

    fn factor(&mut self, factor: &Factor) -> TokenStream {
        match factor {
            Factor::Lit(n) => self.value(*n),
            Factor::Dim(dim) => self.read(&dim.name),
            Factor::CeilDiv { dim, by } => {
                self.used.insert("ceil_div");
                let d = self.read(&dim.name);
                let by = match by {
                    Divisor::Lit(n) => self.value(*n),
                    Divisor::Dim(e) => self.read(&e.name),
                };
                quote!(ceil_div(#d, #by))
            }
        }
    }

    /// `mul(mul(a, b), c)`, left to right as `Shape::eval` folds; an empty product is 1.
    fn product(&mut self, items: Vec<TokenStream>) -> TokenStream {
        let mut items = items.into_iter();
        let Some(first) = items.next() else {
            return self.value(1);
        };
        items.fold(first, |acc, next| {
            self.used.insert("mul");
            quote!(mul(#acc, #next))
        })
    }

    /// `use <path>::{..};` of the helpers used (`path` names the ABI module from where the
    /// expressions stand).
    fn uses_from(&self, path: &TokenStream) -> TokenStream {
        let names: Vec<proc_macro2::Ident> = self
            .used
            .iter()
            .map(|name| format_ident!("{name}"))
            .collect();
        if names.is_empty() {
            TokenStream::new()
        } else {
            quote!(use #path::{#(#names),*};)
        }
    }
}

/// The name of the generated function that gives a KV side's reach in tokens:
/// `<state>_window` or `<state>_chunk`.
fn reach_fn(state: &StateTemplate) -> proc_macro2::Ident {
    let key = state.reach().map_or("window", |reach| reach.key());
    format_ident!("{}_{key}", ident(state.local()))
}
