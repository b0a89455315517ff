//! The `fastbloom` crate.

use crate::error::Result;
use crate::filter::check_shape;
use crate::structures::{Filter, FilterKind, Membership};

/// `fastbloom::BloomFilter` with its default (SipHash-1-3) hasher, seeded.
pub struct Fastbloom(::fastbloom::BloomFilter);

impl Fastbloom {
    /// `with_num_bits(m).seed(s).hashes(k)`.
    pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
        check_shape(m, k)?;
        Ok(Fastbloom(
            ::fastbloom::BloomFilter::with_num_bits(m as usize)
                .seed(&u128::from(seed))
                .hashes(k),
        ))
    }

    /// `with_false_pos(ε).seed(s).expected_items(n)`: `m = 8·ceil(-n ln ε / (8 ln² 2))`,
    /// `k = round(m/n · ln 2)`.
    pub fn by_rate(n: u64, fpr: f64, seed: u64) -> Self {
        Fastbloom(
            ::fastbloom::BloomFilter::with_false_pos(fpr)
                .seed(&u128::from(seed))
                .expected_items(n as usize),
        )
    }
}

impl Membership for Fastbloom {
    fn insert(&mut self, key: u64) {
        self.0.insert(&key);
    }
    fn contains(&self, key: u64) -> bool {
        self.0.contains(&key)
    }
}

impl Filter for Fastbloom {
    fn set_bits(&self) -> u64 {
        self.0
            .as_slice()
            .iter()
            .map(|w| u64::from(w.count_ones()))
            .sum()
    }
    fn memory_bits(&self) -> u64 {
        self.0.num_bits() as u64
    }
    fn hashes(&self) -> u32 {
        self.0.num_hashes()
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Fastbloom
    }
}
