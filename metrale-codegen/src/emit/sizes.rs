//! The `blocks` module of a generated circuit: for every state of every block template, the
//! checked `const fn`s giving its elements per unit (from `Dims`), its element type (from
//! `Formats`), and its unit and unit bytes.
//!
//! Owner: metrale-codegen.
//! Invariants:
//! - A size function computes exactly what `Shape::eval` computes, with the checked helpers of
//!   `static_plan` (overflow and division by zero are `Err`, never a wrap or a panic).
//! - A copy (`of`) calls the copied state's elements function, so the two cannot disagree.

use metrale_circuit::shape::{Divisor, Factor, Shape};
use metrale_circuit::{BlockTemplate, StateFormat, StateTemplate};
use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::Emitter;
use super::names::{ident, int};

impl Emitter<'_> {
    /// `pub mod blocks { pub mod <block> { ... } }` for every block with state.
    pub(super) fn blocks_module(&self) -> TokenStream {
        let blocks = self.stateful_blocks().map(|block| self.block_sizes(block));
        quote! {
            #[doc = "The size functions of every state of every block template: elements per"]
            #[doc = "unit from `Dims`, element type from `Formats`, unit bytes from both."]
            pub mod blocks {
                #(#blocks)*
            }
        }
    }

    fn block_sizes(&self, block: &BlockTemplate) -> TokenStream {
        let name = ident(&block.name);
        let doc = format!(
            "The size functions of the states of block `{}` (`{}`).",
            block.name, block.origin
        );
        let mut helpers = Helpers::default();
        let states: Vec<TokenStream> = block
            .states
            .iter()
            .map(|state| self.state_sizes(block, state, &mut helpers))
            .collect();
        let uses = helpers.uses(&self.runtime);
        quote! {
            #[doc = #doc]
            pub mod #name {
                #uses
                #(#states)*
            }
        }
    }

    fn state_sizes(
        &self,
        block: &BlockTemplate,
        state: &StateTemplate,
        helpers: &mut Helpers,
    ) -> TokenStream {
        let rt = &self.runtime;
        let local = &state.local;
        let elements_fn = format_ident!("{}_elements", ident(local));
        let dtype_fn = format_ident!("{}_dtype", ident(local));
        let unit_fn = format_ident!("{}_unit", ident(local));
        let unit_bytes_fn = format_ident!("{}_unit_bytes", ident(local));
        let what = format!(
            "`{}.{local}` (`{}`): a `{}` state living `{}`, {}.",
            block.name,
            state.origin,
            state.kind.name(),
            state.lifetime.name(),
            state.kind.unit()
        );

        let (elements_doc, dims_param, body) = match (&state.shape, &state.of) {
            (Some(shape), _) => {
                let uses_dims = !shape.dims().is_empty();
                let param = if uses_dims {
                    quote!(dims)
                } else {
                    quote!(_dims)
                };
                (
                    format!("Elements per unit of {what} Shape: `{shape}`."),
                    param,
                    helpers.shape(shape),
                )
            }
            (None, Some(of)) => {
                let source = format_ident!("{}_elements", ident(of));
                (
                    format!(
                        "Elements per unit of {what} A copy of `{}.{of}`: its elements.",
                        block.name
                    ),
                    quote!(dims),
                    quote!(#source(dims)),
                )
            }
            (None, None) => (format!("Elements per unit of {what}"), quote!(_dims), {
                helpers.used.insert("value");
                quote!(value(0))
            }),
        };

        let (dtype_doc, formats_param, dtype) = self.dtype_parts(block, state);
        let unit_doc = format!(
            "One unit of `{}.{local}`: its bytes and element type.",
            block.name
        );
        let unit_bytes_doc = format!("Bytes per unit of `{}.{local}`.", block.name);
        let errors = errors_doc();
        quote! {
            #[doc = #elements_doc]
            #errors
            #[allow(clippy::trivially_copy_pass_by_ref, reason = "every circuit's size functions take `&Dims`, however few dims it has")]
            pub const fn #elements_fn(#dims_param: &super::super::Dims) -> ::core::result::Result<u64, #rt::SizeFault> {
                #body
            }

            #[doc = #dtype_doc]
            #[must_use]
            pub const fn #dtype_fn(#formats_param: super::super::Formats) -> #rt::StateDtype {
                #dtype
            }

            #[doc = #unit_doc]
            #errors
            #[allow(clippy::trivially_copy_pass_by_ref, reason = "every circuit's size functions take `&Dims`, however few dims it has")]
            pub const fn #unit_fn(dims: &super::super::Dims, formats: super::super::Formats) -> ::core::result::Result<#rt::static_plan::Unit, #rt::SizeFault> {
                #rt::static_plan::Unit::of(#elements_fn(dims), #dtype_fn(formats))
            }

            #[doc = #unit_bytes_doc]
            #errors
            #[allow(clippy::trivially_copy_pass_by_ref, reason = "every circuit's size functions take `&Dims`, however few dims it has")]
            pub const fn #unit_bytes_fn(dims: &super::super::Dims, formats: super::super::Formats) -> ::core::result::Result<u64, #rt::SizeFault> {
                match #unit_fn(dims, formats) {
                    ::core::result::Result::Ok(unit) => ::core::result::Result::Ok(unit.bytes),
                    ::core::result::Result::Err(fault) => ::core::result::Result::Err(fault),
                }
            }
        }
    }

    /// The element type function's doc, parameter name and body.
    fn dtype_parts(
        &self,
        block: &BlockTemplate,
        state: &StateTemplate,
    ) -> (String, TokenStream, TokenStream) {
        let rt = &self.runtime;
        let local = &state.local;
        match &state.format {
            StateFormat::Fixed(dtype) => {
                let variant = dtype_variant(dtype.name());
                (
                    format!(
                        "The element type of `{}.{local}`: `{}`, fixed by the circuit.",
                        block.name,
                        dtype.name()
                    ),
                    quote!(_formats),
                    quote!(#rt::StateDtype::#variant),
                )
            }
            StateFormat::Keyed(key) => {
                let field = ident(key);
                (
                    format!(
                        "The element type of `{}.{local}`: the `{{{key}}}` the inputs give.",
                        block.name
                    ),
                    quote!(formats),
                    quote!(formats.#field),
                )
            }
        }
    }
}

/// The `# Errors` section of a size function.
fn errors_doc() -> TokenStream {
    quote! {
        #[doc = ""]
        #[doc = "# Errors"]
        #[doc = "`SizeFault::Overflow` when a product or sum overflows `u64`;"]
        #[doc = "`SizeFault::DivisionByZero` when a divisor dim is zero."]
    }
}

/// The `StateDtype` variant spelled `name` (`bf16` -> `Bf16`).
fn dtype_variant(name: &str) -> proc_macro2::Ident {
    let mut chars = name.chars();
    let camel: String = chars
        .next()
        .map(|c| c.to_ascii_uppercase())
        .into_iter()
        .chain(chars)
        .collect();
    format_ident!("{camel}")
}

/// Which checked helpers a block's size functions call, so the module imports exactly those.
#[derive(Default)]
struct Helpers {
    /// The helpers' names (`add`, `ceil_div`, `mul`, `value`), sorted.
    used: std::collections::BTreeSet<&'static str>,
}

impl Helpers {
    /// The checked expression of `shape`: the product of its axes, each the sum of its products.
    fn shape(&mut self, shape: &Shape) -> TokenStream {
        let axes: Vec<TokenStream> = shape
            .axes
            .iter()
            .map(|axis| {
                let terms: Vec<TokenStream> = axis
                    .terms
                    .iter()
                    .map(|term| {
                        let factors: Vec<TokenStream> =
                            term.factors.iter().map(|f| self.factor(f)).collect();
                        self.fold(factors, true)
                    })
                    .collect();
                self.fold(terms, false)
            })
            .collect();
        self.fold(axes, true)
    }

    fn factor(&mut self, factor: &Factor) -> TokenStream {
        match factor {
            Factor::Lit(n) => {
                self.used.insert("value");
                let n = int(*n);
                quote!(value(#n))
            }
            Factor::Dim(dim) => {
                self.used.insert("value");
                let d = ident(&dim.name);
                quote!(value(dims.#d))
            }
            Factor::CeilDiv { dim, by } => {
                self.used.insert("ceil_div");
                let d = ident(&dim.name);
                let by = match by {
                    Divisor::Lit(n) => {
                        let n = int(*n);
                        quote!(#n)
                    }
                    Divisor::Dim(e) => {
                        let e = ident(&e.name);
                        quote!(dims.#e)
                    }
                };
                quote!(ceil_div(dims.#d, #by))
            }
        }
    }

    /// `mul(mul(a, b), c)` (or `add`), left to right as `Shape::eval` folds.
    fn fold(&mut self, items: Vec<TokenStream>, product: bool) -> TokenStream {
        let mut items = items.into_iter();
        let Some(first) = items.next() else {
            self.used.insert("value");
            return if product {
                quote!(value(1))
            } else {
                quote!(value(0))
            };
        };
        items.fold(first, |acc, next| {
            if product {
                self.used.insert("mul");
                quote!(mul(#acc, #next))
            } else {
                self.used.insert("add");
                quote!(add(#acc, #next))
            }
        })
    }

    fn uses(&self, rt: &TokenStream) -> TokenStream {
        let names: Vec<proc_macro2::Ident> = self
            .used
            .iter()
            .map(|name| format_ident!("{name}"))
            .collect();
        if names.is_empty() {
            TokenStream::new()
        } else {
            quote!(use #rt::static_plan::{#(#names),*};)
        }
    }
}
