//! Where each part of a unit made of a packing sits (schema 3): [`Part`] (one part's dtype,
//! elements and byte range in its unit) and [`Parts`] (a unit's parts, fixed capacity, what a
//! generated `<state>_parts` gives).
//!
//! Owner: metrale-circuit (public API).
//! Invariants:
//! - Parts are placed by the one rule, `sizing::next_part`: in the order declared, each from
//!   the byte the one before ends at. The dynamic plan ([`placed`]) and the generated code (the
//!   ABI's `packing`) both call it, so they agree on every offset.
//! - A unit of a packing is as many bytes as its last part's end ([`Parts::unit`]).
//! - A [`Parts`] holds exactly the parts it was made from: its capacity is the generator's
//!   largest packing of the state, so nothing is ever left out.

use crate::law::sizing::next_part;
use crate::law::{Region, SizeFault};
use crate::model::{PackingDecl, StateDtype};
use crate::plan::Unit;

/// One part of a unit: its name, element type, elements, and its byte range in the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Part<S = &'static str> {
    /// Its name in its packing (`scales`), or a plain unit's state id.
    pub name: S,
    /// Its element type (`fp4` packs two a byte).
    pub dtype: StateDtype,
    /// Its elements per unit.
    pub elements: u64,
    /// Bytes from the start of its unit.
    pub offset: u64,
    /// Bytes it holds.
    pub bytes: u64,
}

impl Part {
    /// No part: what a [`Parts`] holds past its length.
    pub const EMPTY: Part = Part {
        name: "",
        dtype: StateDtype::U8,
        elements: 0,
        offset: 0,
        bytes: 0,
    };
}

impl<S> Part<S> {
    /// One past its last byte in its unit (cannot overflow: placement checked it).
    #[must_use]
    pub const fn end(&self) -> u64 {
        self.offset.saturating_add(self.bytes)
    }

    /// Its bytes in `unit`, one unit's region (`Region::unit(i)`): one unit of this part's
    /// bytes, at `unit.offset + offset`. `None` when `unit` is shorter than the part reaches
    /// (a region of another state).
    #[must_use]
    pub const fn within(&self, unit: Region) -> Option<Region> {
        if self.end() > unit.bytes {
            return None;
        }
        match unit.offset.checked_add(self.offset) {
            Some(offset) => Some(Region {
                offset,
                bytes: self.bytes,
                units: 1,
                dtype: self.dtype,
                unit_bytes: self.bytes,
                space: unit.space,
                inner: 1,
            }),
            None => None,
        }
    }
}

/// The parts of one unit, at most `N` (a generated `<state>_parts` gives them, `N` being the
/// most parts any packing of the state has).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Parts<const N: usize> {
    parts: [Part; N],
    len: usize,
}

impl<const N: usize> Parts<N> {
    /// Its parts, in unit order.
    #[must_use]
    pub const fn as_slice(&self) -> &[Part] {
        self.parts.split_at(self.len).0
    }

    /// The part named `name`.
    #[must_use]
    pub const fn get(&self, name: &str) -> Option<Part> {
        let mut i = 0;
        while i < self.len {
            if crate::model::inputs::same_str(self.parts[i].name, name) {
                return Some(self.parts[i]);
            }
            i += 1;
        }
        None
    }

    /// The unit they make: as many bytes as the last part's end, by byte.
    #[must_use]
    pub const fn unit(&self) -> Unit {
        match self.len.checked_sub(1) {
            Some(last) => Unit::of_packing(self.parts[last].end()),
            None => Unit::of_packing(0),
        }
    }

    /// The parts of `(name, elements, dtype)` in order, each placed after the one before. A
    /// list longer than `N` keeps its first `N` (the generator never writes one).
    ///
    /// # Errors
    /// A part's elements' own fault, or [`SizeFault::Overflow`] when a part's bytes or end
    /// overflow.
    pub(crate) const fn placed<const M: usize>(
        list: [(&'static str, Result<u64, SizeFault>, StateDtype); M],
    ) -> Result<Self, SizeFault> {
        let mut parts = [Part::EMPTY; N];
        let (mut i, mut offset) = (0, 0);
        while i < M && i < N {
            let (name, elements, dtype) = list[i];
            let elements = match elements {
                Ok(elements) => elements,
                Err(fault) => return Err(fault),
            };
            let (at, bytes) = match next_part(offset, elements, dtype) {
                Ok(placed) => placed,
                Err(fault) => return Err(fault),
            };
            parts[i] = Part {
                name,
                dtype,
                elements,
                offset: at,
                bytes,
            };
            offset = parts[i].end();
            i += 1;
        }
        Ok(Self { parts, len: i })
    }
}

/// The parts of `packing`, placed (the dynamic plan's; the same rule as [`Parts::placed`]).
///
/// # Errors
/// [`SizeFault::Overflow`] when a part's bytes or end overflow.
pub(crate) fn placed(packing: &PackingDecl) -> Result<Vec<Part<String>>, SizeFault> {
    let mut offset = 0;
    packing
        .parts
        .iter()
        .map(|part| {
            let (at, bytes) = next_part(offset, part.elements, part.dtype)?;
            offset = at.saturating_add(bytes);
            Ok(Part {
                name: part.name.clone(),
                dtype: part.dtype,
                elements: part.elements,
                offset: at,
                bytes,
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::Space;
    use crate::model::PartDecl;

    #[test]
    fn fp8_ds_mla_parts_by_hand() {
        // vLLM's fp8_ds_mla row: 512 fp8 NoPE values, 4 f32 scales, 64 bf16 RoPE values.
        const ROW: Result<Parts<4>, SizeFault> = Parts::placed([
            ("nope", Ok(512), StateDtype::Fp8),
            ("scales", Ok(4), StateDtype::F32),
            ("rope", Ok(64), StateDtype::Bf16),
        ]);
        let row = ROW.unwrap();
        let spans: Vec<(&str, u64, u64)> = row
            .as_slice()
            .iter()
            .map(|p| (p.name, p.offset, p.bytes))
            .collect();
        assert_eq!(
            spans,
            [("nope", 0, 512), ("scales", 512, 16), ("rope", 528, 128)]
        );
        assert_eq!(row.unit().bytes, 656);
        assert_eq!(row.unit().elements, None);
        assert_eq!(row.get("rope").map(|p| p.elements), Some(64));
        assert_eq!(row.get("k"), None);
        // The dynamic plan places the same parts the same way.
        let packing = PackingDecl {
            name: "fp8_ds_mla".into(),
            parts: vec![
                PartDecl::new("nope", StateDtype::Fp8, 512),
                PartDecl::new("scales", StateDtype::F32, 4),
                PartDecl::new("rope", StateDtype::Bf16, 64),
            ],
        };
        let dynamic: Vec<(String, u64, u64)> = placed(&packing)
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.offset, p.bytes))
            .collect();
        assert_eq!(
            dynamic,
            [
                ("nope".into(), 0, 512),
                ("scales".into(), 512, 16),
                ("rope".into(), 528, 128)
            ]
        );
        // A part in unit 2 of a region of 656-byte units at 4096.
        let region = Region {
            offset: 4096,
            bytes: 656 * 8,
            units: 8,
            dtype: StateDtype::U8,
            unit_bytes: 656,
            space: Space::Device,
            inner: 8,
        };
        let unit = region.unit(2).unwrap();
        let rope = row.get("rope").unwrap().within(unit).unwrap();
        assert_eq!((rope.offset, rope.bytes), (4096 + 2 * 656 + 528, 128));
        assert_eq!(row.get("rope").unwrap().within(Region::EMPTY), None);
    }

    #[test]
    fn faults_and_packing() {
        let fault: Result<Parts<2>, _> = Parts::placed([
            ("a", Ok(1), StateDtype::U8),
            ("b", Err(SizeFault::DivisionByZero), StateDtype::U8),
        ]);
        assert_eq!(fault, Err(SizeFault::DivisionByZero));
        let over: Result<Parts<2>, _> = Parts::placed([
            ("a", Ok(u64::MAX), StateDtype::U8),
            ("b", Ok(1), StateDtype::U8),
        ]);
        assert_eq!(over, Err(SizeFault::Overflow));
        // nvfp4_ds_mla: 512 e2m1 (256 B), 64 fp8, 32 fp8 scales: 352 B.
        let nvfp4: Parts<3> = Parts::placed([
            ("nope", Ok(512), StateDtype::Fp4),
            ("rope", Ok(64), StateDtype::Fp8),
            ("scales", Ok(32), StateDtype::Fp8),
        ])
        .unwrap();
        assert_eq!(nvfp4.unit().bytes, 352);
        assert_eq!(nvfp4.get("scales").map(|p| p.offset), Some(320));
        let empty: Parts<1> = Parts::placed([]).unwrap();
        assert!(empty.as_slice().is_empty());
        assert_eq!(empty.unit().bytes, 0);
    }
}
