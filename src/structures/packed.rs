//! Fixed-width fields packed end to end in 64-bit words: the slots of the fingerprint
//! structures (cuckoo buckets, quotient filter slots), so that memory is `len · width` bits
//! rounded up to a word, whatever the width.

use crate::error::{Error, Result};

/// `len` fields of `width` bits (1..=64), all zero at first. Field i occupies bits
/// `i·width .. (i+1)·width` of the word array, little-endian across a word boundary.
#[derive(Clone, Debug)]
pub(super) struct Packed {
    words: Vec<u64>,
    width: u32,
    len: u64,
}

impl Packed {
    /// Refuses a table that cannot be allocated, naming `flag` and the bits asked for.
    pub(super) fn new(len: u64, width: u32, flag: &'static str) -> Result<Self> {
        debug_assert!((1..=64).contains(&width));
        let bits = len.saturating_mul(u64::from(width));
        let count = usize::try_from(bits.div_ceil(64)).unwrap_or(usize::MAX);
        let mut words = Vec::new();
        words.try_reserve_exact(count).map_err(|_| {
            Error::invalid(
                flag,
                bits,
                "cannot allocate the table",
                "a table that fits in memory",
            )
        })?;
        words.resize(count, 0);
        Ok(Packed { words, width, len })
    }

    pub(super) fn len(&self) -> u64 {
        self.len
    }

    fn mask(&self) -> u64 {
        if self.width == 64 {
            u64::MAX
        } else {
            (1 << self.width) - 1
        }
    }

    /// Field i (i < len).
    pub(super) fn get(&self, i: u64) -> u64 {
        let bit = i * u64::from(self.width);
        let (word, offset) = ((bit / 64) as usize, (bit % 64) as u32);
        let mut value = self.words[word] >> offset;
        if offset + self.width > 64 {
            value |= self.words[word + 1] << (64 - offset);
        }
        value & self.mask()
    }

    /// Sets field i (i < len) to the low `width` bits of `value`.
    pub(super) fn set(&mut self, i: u64, value: u64) {
        let mask = self.mask();
        let value = value & mask;
        let bit = i * u64::from(self.width);
        let (word, offset) = ((bit / 64) as usize, (bit % 64) as u32);
        self.words[word] = (self.words[word] & !(mask << offset)) | (value << offset);
        if offset + self.width > 64 {
            let spill = 64 - offset;
            self.words[word + 1] = (self.words[word + 1] & !(mask >> spill)) | (value >> spill);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_reads_back_what_was_written_without_touching_neighbours() {
        for width in 1..=64u32 {
            let mut packed = Packed::new(130, width, "m").unwrap();
            let value = |i: u64| i.wrapping_mul(0x9e37_79b9_7f4a_7c15).rotate_left(width);
            for i in 0..130 {
                packed.set(i, value(i));
            }
            for i in (0..130).step_by(3) {
                packed.set(i, !value(i));
            }
            for i in 0..130 {
                let want = if i % 3 == 0 { !value(i) } else { value(i) };
                let mask = if width == 64 {
                    u64::MAX
                } else {
                    (1 << width) - 1
                };
                assert_eq!(packed.get(i), want & mask, "width {width} field {i}");
            }
        }
    }
}
