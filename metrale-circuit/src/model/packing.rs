//! A unit made of parts (schema 3): a state's named [`PackingDecl`]s, each a list of
//! [`PartDecl`]s with their own dtype and element count, as vLLM's `fp8_ds_mla` row is 512 fp8
//! values, 4 f32 scales and 64 bf16 values.
//!
//! Owner: metrale-circuit.
//! Invariants:
//! - A packing has at least one part; part names are unique in it, and packing names are unique
//!   in a state and are not dtype spellings (the loader checks all three).
//! - Where each part sits in a unit is the sizing law's (`sizing::next_part`): parts in the
//!   order declared, each from the byte the one before ends at. A declaration holds element
//!   counts only.

use super::dtype::StateDtype;

/// One part of a packing: its name, its dtype and its elements per unit.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PartDecl {
    /// Its name in the packing (`scales`).
    pub name: String,
    /// Its element type (a sub-byte dtype packs: `fp4` two a byte).
    pub dtype: StateDtype,
    /// Its elements per unit, evaluated from the checkpoint's dims.
    pub elements: u64,
}

impl PartDecl {
    /// A part of `elements` elements of `dtype`.
    #[must_use]
    pub fn new(name: &str, dtype: StateDtype, elements: u64) -> Self {
        Self {
            name: name.to_owned(),
            dtype,
            elements,
        }
    }
}

/// A named packing of a state: a unit is its parts, one after another.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct PackingDecl {
    /// Its name (`fp8_ds_mla`): what a format key holds, or a state's fixed `format`, to choose
    /// it.
    pub name: String,
    /// Its parts, in unit order.
    pub parts: Vec<PartDecl>,
}
