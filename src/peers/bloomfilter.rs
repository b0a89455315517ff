//! The `bloomfilter` crate.

use super::seed_bytes;
use crate::error::{Error, Result};
use crate::filter::check_shape;
use crate::structures::{Filter, FilterKind, Membership};

/// `bloomfilter::Bloom<u64>`, seeded.
pub struct Bloomfilter(::bloomfilter::Bloom<u64>);

impl Bloomfilter {
    /// `new_with_seed(m/8 bytes, items, seed)`, `items` chosen to give k (m a multiple of 8).
    pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
        check_shape(m, k)?;
        let bytes = m.div_ceil(8) as usize;
        let items =
            ((bytes as f64 * 8.0 * std::f64::consts::LN_2 / f64::from(k)).round() as usize).max(1);
        for candidate in [items, items + 1, items.saturating_sub(1).max(1)] {
            let bloom = ::bloomfilter::Bloom::new_with_seed(bytes, candidate, &seed_bytes(seed))
                .map_err(|e| Error::Output(format!("bloomfilter: {e}")))?;
            if bloom.number_of_hash_functions() == k {
                return Ok(Bloomfilter(bloom));
            }
        }
        Err(Error::invalid(
            "k",
            k,
            "the bloomfilter crate takes k = round(m/n ln 2) for some whole n, and no n gives this k at this m",
            "k at most about 0.69 m",
        ))
    }

    /// `new_for_fp_rate_with_seed(n, ε, seed)`: `m = 8·ceil(-n ln ε / (8 ln² 2))`,
    /// `k = round(m/n · ln 2)`.
    pub fn by_rate(n: u64, fpr: f64, seed: u64) -> Result<Self> {
        ::bloomfilter::Bloom::new_for_fp_rate_with_seed(n as usize, fpr, &seed_bytes(seed))
            .map(Bloomfilter)
            .map_err(|e| Error::Output(format!("bloomfilter: {e}")))
    }

    /// The bit array: `as_slice()` is a header followed by the bits.
    fn bitmap(&self) -> &[u8] {
        let slice = self.0.as_slice();
        &slice[slice.len() - (self.0.len() / 8) as usize..]
    }
}

impl Membership for Bloomfilter {
    fn insert(&mut self, key: u64) {
        self.0.set(&key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.check(&key)
    }
}

impl Filter for Bloomfilter {
    fn set_bits(&self) -> u64 {
        self.bitmap()
            .iter()
            .map(|b| u64::from(b.count_ones()))
            .sum()
    }
    fn memory_bits(&self) -> u64 {
        self.0.len()
    }
    fn hashes(&self) -> u32 {
        self.0.number_of_hash_functions()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Bloomfilter
    }
}
