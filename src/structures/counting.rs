//! A counting Bloom filter: m 4-bit counters instead of bits (four times the space), with
//! delete.

use super::interface::{Filter, FilterKind, Membership, Structure, boxed};
use crate::error::{Error, Result};
use crate::structures::bloom::{MAX_BITS, zeroed_words};
use crate::hash::{AppliedHash, HashFamily, HashScheme};
use crate::theory;

/// The classic design and exact rate, `E[(X/m)^k]`: a counter is nonzero exactly where the
/// classic filter's bit would be set.
pub static STRUCTURE: Structure = Structure {
    supports_delete: true,
    design: Some(|n, fpr| Ok(theory::classic_design(n, fpr))),
    ..Structure::new(
        "counting",
        "m 4-bit counters instead of bits (four times the space), with delete",
        |s| boxed(CountingFilter::new(s.m, s.k, s.hash, s.hash_seed)),
    )
};

/// Largest value of a 4-bit counter; a counter that reaches it stays there.
pub const COUNTER_MAX: u64 = 15;

/// A counting Bloom filter: m 4-bit counters packed sixteen to a u64, k hashes.
///
/// Invariant: a key that was inserted and not deleted is always present. Insert increments
/// its k counters, delete decrements them; a counter at [`COUNTER_MAX`] is never changed
/// again (it may count more keys than it can hold), and [`CountingFilter::overflows`] counts
/// the increments that found it full.
#[derive(Clone, Debug)]
pub struct CountingFilter {
    words: Vec<u64>,
    m: u64,
    k: u32,
    hashes: HashFamily,
    overflows: u64,
}

impl CountingFilter {
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        crate::structures::bloom::check_shape(m, k)?;
        let counters = m
            .checked_mul(4)
            .filter(|&bits| bits <= MAX_BITS)
            .ok_or_else(|| {
                Error::invalid(
                    "m",
                    m,
                    "4-bit counters need 4m bits",
                    format!("1..={}", MAX_BITS / 4),
                )
            })?;
        Ok(CountingFilter {
            words: zeroed_words(counters)?,
            m,
            k,
            hashes: HashFamily::new(scheme, k, m, hash_seed),
            overflows: 0,
        })
    }

    /// Increments that found their counter already at [`COUNTER_MAX`].
    pub fn overflows(&self) -> u64 {
        self.overflows
    }

    fn counter(&self, i: u64) -> u64 {
        (self.words[(i / 16) as usize] >> (4 * (i % 16))) & COUNTER_MAX
    }

    fn add(&mut self, i: u64, delta: i64) {
        let shift = 4 * (i % 16);
        let word = &mut self.words[(i / 16) as usize];
        let value = (*word >> shift) & COUNTER_MAX;
        let next = (value as i64 + delta) as u64;
        *word = (*word & !(COUNTER_MAX << shift)) | (next << shift);
    }
}

impl Membership for CountingFilter {
    fn insert(&mut self, key: u64) {
        for i in 0..self.k as usize {
            let c = self.hashes.index(i, key);
            if self.counter(c) == COUNTER_MAX {
                self.overflows += 1;
            } else {
                self.add(c, 1);
            }
        }
    }
    fn contains(&self, key: u64) -> bool {
        (0..self.k as usize).all(|i| self.counter(self.hashes.index(i, key)) > 0)
    }
}

impl Filter for CountingFilter {
    /// Nonzero counters.
    fn set_bits(&self) -> u64 {
        (0..self.m).filter(|&i| self.counter(i) > 0).count() as u64
    }
    /// `(nonzero counters / m)^k`.
    fn fpr_from_bits(&self) -> f64 {
        theory::fpr_from_fill(self.set_bits() as f64 / self.m as f64, self.k)
    }
    /// Decrements the key's counters, leaving any at [`COUNTER_MAX`] where they are.
    fn delete(&mut self, key: u64) -> Result<()> {
        for i in 0..self.k as usize {
            let c = self.hashes.index(i, key);
            let value = self.counter(c);
            if value > 0 && value < COUNTER_MAX {
                self.add(c, -1);
            }
        }
        Ok(())
    }
    /// As the classic filter of m bits: a counter is nonzero exactly when that bit would be set.
    fn fpr_exact(&self, n: u64) -> f64 {
        theory::fpr_exact(n, self.m, self.k)
    }
    fn memory_bits(&self) -> u64 {
        4 * self.m
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn kind(&self) -> FilterKind {
        FilterKind::of(&STRUCTURE)
    }
    fn hash_name(&self) -> AppliedHash {
        self.hashes.scheme().into()
    }
}
