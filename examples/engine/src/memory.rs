//! The stand-in for device memory ([`Memory`]): one host buffer per memory space, each exactly
//! its arena's bytes with its first byte on a multiple of the plan's alignment, and checked
//! access to the bytes of a plan [`Region`].
//!
//! Invariants:
//! - A [`Buffer`]'s bytes are exactly the arena's; its `Vec<u8>` holds up to `align - 1` bytes
//!   more, before them, so that they start aligned (`<*const u8>::align_offset`, no `unsafe`).
//!   The start is checked, not assumed.
//! - Every access names a region and is bounds-checked against the buffer: a region that
//!   reaches past its arena is an [`EngineError::Memory`], never a panic or a write elsewhere.
//! - A copy within one buffer is `copy_within` (overlapping ranges are copied as `memmove`
//!   does), so even a corrupt layout cannot make it read what it has just written.

use std::ops::Range;

use metrale_circuit::{Region, Space};

use crate::EngineError;

/// One aligned buffer of exactly an arena's bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Buffer {
    raw: Vec<u8>,
    start: usize,
    len: usize,
}

impl Buffer {
    /// A zeroed buffer of `bytes` bytes whose first byte's address is a multiple of `align`
    /// (a power of two).
    ///
    /// # Errors
    /// [`EngineError::Memory`] when the size does not fit the address space or the start
    /// cannot be aligned.
    pub fn new(bytes: u64, align: u64) -> Result<Self, EngineError> {
        let too_large = || {
            EngineError::Memory(format!(
                "a buffer of {bytes} bytes aligned to {align} does not fit this machine's address space"
            ))
        };
        let len = usize::try_from(bytes).map_err(|_| too_large())?;
        let align = usize::try_from(align).map_err(|_| too_large())?;
        if !align.is_power_of_two() {
            return Err(EngineError::Memory(format!(
                "cannot align a buffer to {align}: not a power of two"
            )));
        }
        let raw = vec![0_u8; len.checked_add(align - 1).ok_or_else(too_large)?];
        let start = raw.as_ptr().align_offset(align);
        let buffer = Buffer { raw, start, len };
        if start >= align || !buffer.address().is_multiple_of(align) {
            return Err(EngineError::Memory(format!(
                "cannot align a buffer of {bytes} bytes to {align}"
            )));
        }
        Ok(buffer)
    }

    /// Its bytes: exactly the arena's.
    #[must_use]
    pub fn bytes(&self) -> &[u8] {
        &self.raw[self.start..self.start + self.len]
    }

    /// Its length in bytes.
    #[must_use]
    pub fn len(&self) -> usize {
        self.len
    }

    /// Holds no byte.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The address of its first byte (a multiple of the alignment it was made with).
    #[must_use]
    pub fn address(&self) -> usize {
        self.bytes().as_ptr().addr()
    }

    /// The bytes of `region`.
    ///
    /// # Errors
    /// [`EngineError::Memory`] when `region` reaches past the buffer.
    pub fn get(&self, region: &Region) -> Result<&[u8], EngineError> {
        let range = self.range(region)?;
        Ok(&self.raw[range])
    }

    /// The bytes of `region`, to write.
    ///
    /// # Errors
    /// As [`Buffer::get`].
    pub fn get_mut(&mut self, region: &Region) -> Result<&mut [u8], EngineError> {
        let range = self.range(region)?;
        Ok(&mut self.raw[range])
    }

    /// Copies the bytes of `from` over those of `to` (the same size).
    ///
    /// # Errors
    /// As [`Buffer::get`], and [`EngineError::Invariant`] when the sizes differ.
    pub fn copy(&mut self, from: &Region, to: &Region) -> Result<(), EngineError> {
        if from.bytes != to.bytes {
            return Err(sizes_differ(from, to));
        }
        let source = self.range(from)?;
        let target = self.range(to)?;
        self.raw.copy_within(source, target.start);
        Ok(())
    }

    /// Where `region` lies in `raw`.
    fn range(&self, region: &Region) -> Result<Range<usize>, EngineError> {
        let outside = || {
            EngineError::Memory(format!(
                "bytes {}..{} lie outside an arena of {} bytes",
                region.offset,
                u128::from(region.offset) + u128::from(region.bytes),
                self.len
            ))
        };
        let offset = usize::try_from(region.offset).map_err(|_| outside())?;
        let bytes = usize::try_from(region.bytes).map_err(|_| outside())?;
        let end = offset.checked_add(bytes).ok_or_else(outside)?;
        if end > self.len {
            return Err(outside());
        }
        Ok(self.start + offset..self.start + end)
    }
}

/// One buffer per memory space.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Memory {
    device: Buffer,
    host: Buffer,
}

impl Memory {
    /// The device and host buffers of `device_bytes` and `host_bytes`, each aligned to `align`.
    ///
    /// # Errors
    /// As [`Buffer::new`].
    pub fn new(device_bytes: u64, host_bytes: u64, align: u64) -> Result<Self, EngineError> {
        Ok(Self {
            device: Buffer::new(device_bytes, align)?,
            host: Buffer::new(host_bytes, align)?,
        })
    }

    /// The buffer of `space`.
    #[must_use]
    pub fn buffer(&self, space: Space) -> &Buffer {
        match space {
            Space::Device => &self.device,
            Space::Host => &self.host,
        }
    }

    /// The buffer of `space`, to write.
    pub fn buffer_mut(&mut self, space: Space) -> &mut Buffer {
        match space {
            Space::Device => &mut self.device,
            Space::Host => &mut self.host,
        }
    }

    /// Copies `from` (in `from_space`) over `to` (in `to_space`), the same size.
    ///
    /// # Errors
    /// As [`Buffer::copy`].
    pub fn copy(
        &mut self,
        from_space: Space,
        from: &Region,
        to_space: Space,
        to: &Region,
    ) -> Result<(), EngineError> {
        if from_space == to_space {
            return self.buffer_mut(from_space).copy(from, to);
        }
        if from.bytes != to.bytes {
            return Err(sizes_differ(from, to));
        }
        let source = self.buffer(from_space).get(from)?.to_vec();
        self.buffer_mut(to_space)
            .get_mut(to)?
            .copy_from_slice(&source);
        Ok(())
    }
}

fn sizes_differ(from: &Region, to: &Region) -> EngineError {
    EngineError::Invariant(format!(
        "cannot copy a unit of {} bytes over one of {} bytes",
        from.bytes, to.bytes
    ))
}

#[cfg(test)]
mod tests {
    use metrale_circuit::{Space, StateDtype};

    use super::*;

    fn region(offset: u64, bytes: u64) -> Region {
        Region {
            offset,
            bytes,
            units: bytes,
            dtype: StateDtype::U8,
            unit_bytes: 1,
            space: Space::Device,
            inner: 1,
        }
    }

    #[test]
    fn buffers_are_exact_and_aligned() {
        for align in [1, 8, 256, 4096] {
            let buffer = Buffer::new(1000, align).unwrap();
            assert_eq!(buffer.len(), 1000);
            assert_eq!(buffer.bytes().len(), 1000);
            assert_eq!(buffer.address() % usize::try_from(align).unwrap(), 0);
        }
        assert!(Buffer::new(0, 256).unwrap().is_empty());
        assert!(Buffer::new(10, 3).is_err());
    }

    #[test]
    fn access_is_bounds_checked() {
        let mut buffer = Buffer::new(64, 64).unwrap();
        buffer.get_mut(&region(60, 4)).unwrap().fill(7);
        assert_eq!(&buffer.bytes()[60..], &[7; 4]);
        assert!(buffer.get(&region(60, 5)).is_err());
        assert!(buffer.get(&region(u64::MAX, 2)).is_err());
        buffer.copy(&region(60, 4), &region(0, 4)).unwrap();
        assert_eq!(&buffer.bytes()[..4], &[7; 4]);
        assert!(buffer.copy(&region(0, 4), &region(8, 5)).is_err());
        let mut memory = Memory::new(16, 16, 16).unwrap();
        memory
            .buffer_mut(Space::Device)
            .get_mut(&region(0, 2))
            .unwrap()
            .fill(3);
        memory
            .copy(Space::Device, &region(0, 2), Space::Host, &region(14, 2))
            .unwrap();
        assert_eq!(&memory.buffer(Space::Host).bytes()[14..], &[3, 3]);
    }
}
