//! A region's bytes in the buffer of its arena, safely: [`Region::bytes_in`] and
//! [`Region::bytes_in_mut`] (bounds checked), and with feature `bytemuck`
//! [`Region::elements_in`] and [`Region::elements_in_mut`], the same bytes as a slice of the
//! region's element type where Rust has one ([`Element`]: `f32`, `i32`, `u32`, `u64`, `u8`),
//! its dtype, size and alignment checked. bf16, f16, fp8 and fp4 have no Rust type: their
//! regions are viewed as bytes.
//!
//! Owner: metrale-circuit (public API).
//! Invariants:
//! - Nothing here is `unsafe`: a typed view is bytemuck's checked cast, never a transmute.
//! - Every failure is a [`ViewError`] naming what did not fit, never a panic.

use crate::law::Region;
#[cfg(feature = "bytemuck")]
use crate::model::StateDtype;

/// Why a region cannot be viewed in a buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewError {
    /// The region reaches past the buffer's end.
    OutOfBounds {
        /// One past the region's last byte.
        end: u64,
        /// The buffer's length.
        len: u64,
    },
    /// The region is not of the element type asked for.
    Dtype {
        /// The region's dtype.
        region: crate::model::StateDtype,
        /// The dtype of the type asked for.
        wanted: crate::model::StateDtype,
    },
    /// The region's first byte is not aligned for the element type (an arena's base address
    /// and the plan's alignment decide it).
    Misaligned,
}

impl std::fmt::Display for ViewError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ViewError::OutOfBounds { end, len } => write!(
                f,
                "the region ends at byte {end}, past the buffer's {len} bytes: is it the buffer \
                 of the region's arena, as large as the plan's?"
            ),
            ViewError::Dtype { region, wanted } => write!(
                f,
                "the region holds {} elements, not {}",
                region.name(),
                wanted.name()
            ),
            ViewError::Misaligned => {
                f.write_str("the region's first byte is not aligned for its element type")
            }
        }
    }
}

impl std::error::Error for ViewError {}

impl Region {
    /// Its byte range in `arena`, the buffer of its space's arena (`Region::space`).
    ///
    /// # Errors
    /// [`ViewError::OutOfBounds`] when the region reaches past the buffer.
    pub fn bytes_in<'a>(&self, arena: &'a [u8]) -> Result<&'a [u8], ViewError> {
        let out = self.out_of(arena.len());
        self.range().and_then(|range| arena.get(range)).ok_or(out)
    }

    /// [`Region::bytes_in`], writable.
    ///
    /// # Errors
    /// [`ViewError::OutOfBounds`] when the region reaches past the buffer.
    pub fn bytes_in_mut<'a>(&self, arena: &'a mut [u8]) -> Result<&'a mut [u8], ViewError> {
        let out = self.out_of(arena.len());
        self.range()
            .and_then(|range| arena.get_mut(range))
            .ok_or(out)
    }

    /// Its bytes as `usize` indices; `None` when they do not fit one.
    fn range(&self) -> Option<std::ops::Range<usize>> {
        let start = usize::try_from(self.offset).ok()?;
        let end = usize::try_from(self.offset.checked_add(self.bytes)?).ok()?;
        Some(start..end)
    }

    /// It does not fit a buffer of `len` bytes.
    fn out_of(&self, len: usize) -> ViewError {
        ViewError::OutOfBounds {
            end: self.offset.saturating_add(self.bytes),
            len: len as u64,
        }
    }
}

/// A Rust type a region's elements can be viewed as: its dtype's.
#[cfg(feature = "bytemuck")]
pub trait Element: bytemuck::Pod {
    /// The dtype whose elements it reads.
    const DTYPE: StateDtype;
}

#[cfg(feature = "bytemuck")]
macro_rules! elements {
    ($($ty:ty => $dtype:ident),*) => {
        $(impl Element for $ty {
            const DTYPE: StateDtype = StateDtype::$dtype;
        })*
    };
}

#[cfg(feature = "bytemuck")]
elements!(f32 => F32, i32 => I32, u32 => U32, u64 => U64, u8 => U8);

#[cfg(feature = "bytemuck")]
impl Region {
    /// Its elements in `arena` (the buffer of its space's arena) as a slice of `T`, its dtype's
    /// Rust type (`plan.l0.gdn.h.live.elements_in::<f32>(&device)`).
    ///
    /// # Errors
    /// [`ViewError::Dtype`] when the region holds another dtype; [`ViewError::OutOfBounds`]
    /// when it reaches past the buffer; [`ViewError::Misaligned`] when its first byte is not
    /// aligned for `T`.
    pub fn elements_in<'a, T: Element>(&self, arena: &'a [u8]) -> Result<&'a [T], ViewError> {
        self.dtype_is::<T>()?;
        bytemuck::try_cast_slice(self.bytes_in(arena)?).map_err(|_| ViewError::Misaligned)
    }

    /// [`Region::elements_in`], writable.
    ///
    /// # Errors
    /// As [`Region::elements_in`].
    pub fn elements_in_mut<'a, T: Element>(
        &self,
        arena: &'a mut [u8],
    ) -> Result<&'a mut [T], ViewError> {
        self.dtype_is::<T>()?;
        bytemuck::try_cast_slice_mut(self.bytes_in_mut(arena)?).map_err(|_| ViewError::Misaligned)
    }

    /// `T` reads this region's dtype.
    fn dtype_is<T: Element>(&self) -> Result<(), ViewError> {
        if self.dtype == T::DTYPE {
            Ok(())
        } else {
            Err(ViewError::Dtype {
                region: self.dtype,
                wanted: T::DTYPE,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::law::Space;
    use crate::model::StateDtype;

    fn region(offset: u64, bytes: u64, dtype: StateDtype) -> Region {
        Region {
            offset,
            bytes,
            units: 1,
            dtype,
            unit_bytes: bytes,
            space: Space::Device,
            inner: 1,
        }
    }

    #[test]
    fn bytes_are_bounds_checked() {
        let mut arena = vec![0u8; 64];
        let r = region(16, 8, StateDtype::U8);
        r.bytes_in_mut(&mut arena).unwrap().fill(7);
        assert_eq!(r.bytes_in(&arena).unwrap(), [7; 8]);
        assert_eq!(arena[15..25], [0, 7, 7, 7, 7, 7, 7, 7, 7, 0]);
        assert_eq!(
            region(60, 8, StateDtype::U8).bytes_in(&arena),
            Err(ViewError::OutOfBounds { end: 68, len: 64 })
        );
        assert!(
            region(u64::MAX, 2, StateDtype::U8)
                .bytes_in(&arena)
                .is_err()
        );
    }

    #[cfg(feature = "bytemuck")]
    #[test]
    fn elements_are_checked_for_dtype_and_alignment() {
        // A u64-backed buffer: its bytes are 8-aligned whatever the allocator does.
        let mut words = vec![0u64; 8];
        let arena: &mut [u8] = bytemuck::cast_slice_mut(&mut words);
        let h = region(16, 16, StateDtype::F32);
        h.elements_in_mut::<f32>(arena)
            .unwrap()
            .copy_from_slice(&[1.0, 2.0, 3.0, 4.0]);
        assert_eq!(h.elements_in::<f32>(arena).unwrap(), [1.0, 2.0, 3.0, 4.0]);
        assert_eq!(
            h.elements_in::<u32>(arena),
            Err(ViewError::Dtype {
                region: StateDtype::F32,
                wanted: StateDtype::U32
            })
        );
        assert_eq!(
            region(18, 8, StateDtype::F32).elements_in::<f32>(arena),
            Err(ViewError::Misaligned)
        );
        assert_eq!(
            region(16, 6, StateDtype::F32).elements_in::<f32>(arena),
            Err(ViewError::Misaligned)
        );
    }
}
