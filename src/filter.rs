//! The Bloom filter: m bits packed in u64 words, k hash functions.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};

use rayon::prelude::*;

use crate::error::{Error, Result};
use crate::hash::{HashFamily, HashScheme, IndexMath, with_index};

/// Largest bit array accepted: 2^36 bits (8 GiB).
pub const MAX_BITS: u64 = 1 << 36;
/// Largest number of hash functions accepted.
pub const MAX_K: u32 = 64;

/// Set bits in a slice of words of any width: the one popcount every structure uses.
pub fn popcount<W: Copy + Into<u64>>(words: &[W]) -> u64 {
    words
        .iter()
        .map(|&w| u64::from(w.into().count_ones()))
        .sum()
}

/// Refuses a size outside `1..=MAX_BITS` or a k outside `1..=MAX_K`.
pub fn check_shape(m: u64, k: u32) -> Result<()> {
    if m == 0 || m > MAX_BITS {
        return Err(Error::invalid(
            "m",
            m,
            "bit array size out of range",
            format!("1..={MAX_BITS}"),
        ));
    }
    if k == 0 || k > MAX_K {
        return Err(Error::invalid(
            "k",
            k,
            "number of hashes out of range",
            format!("1..={MAX_K}"),
        ));
    }
    Ok(())
}

/// `ceil(bits / 64)` zeroed words, or an error (not an abort) when they cannot be allocated.
pub(crate) fn zeroed_words(bits: u64) -> Result<Vec<u64>> {
    let count = bits.div_ceil(64) as usize;
    let mut words = Vec::new();
    words.try_reserve_exact(count).map_err(|_| {
        Error::invalid(
            "m",
            bits,
            format!("cannot allocate {} bytes", count * 8),
            "a bit array that fits in memory",
        )
    })?;
    words.resize(count, 0);
    Ok(words)
}

/// A classic Bloom filter.
///
/// Invariant: after `insert(x)`, `contains(x)` is true for ever (no false negatives); there is
/// no deletion.
#[derive(Clone, Debug)]
pub struct BloomFilter {
    words: Vec<u64>,
    m: u64,
    k: u32,
    hashes: HashFamily,
}

impl BloomFilter {
    /// An empty filter of `m` bits and `k` hashes drawn from `hash_seed`.
    /// Fails (rather than aborting) when the bit array cannot be allocated.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Self::with_math(m, k, scheme, scheme.default_math(), hash_seed)
    }

    /// [`BloomFilter::new`] with another index arithmetic (probes, reduction, width).
    pub fn with_math(
        m: u64,
        k: u32,
        scheme: HashScheme,
        math: IndexMath,
        hash_seed: u64,
    ) -> Result<Self> {
        check_shape(m, k)?;
        Ok(BloomFilter {
            words: zeroed_words(m)?,
            m,
            k,
            hashes: HashFamily::with_math(scheme, math, k, m, hash_seed),
        })
    }

    /// The hash functions.
    pub fn family(&self) -> &HashFamily {
        &self.hashes
    }

    /// Number of bits m.
    pub fn bits(&self) -> u64 {
        self.m
    }

    /// The family of index functions.
    pub fn scheme(&self) -> HashScheme {
        self.hashes.scheme()
    }

    /// Number of hash functions k.
    pub fn hash_count(&self) -> u32 {
        self.k
    }

    /// Sets the k bits of `key`.
    #[inline]
    pub fn insert(&mut self, key: u64) {
        with_index!(self.hashes, index => self.set_all(key, index))
    }

    #[inline(always)]
    fn set_all(&mut self, key: u64, index: impl Fn(&HashFamily, usize, u64) -> u64) {
        for i in 0..self.k as usize {
            let bit = index(&self.hashes, i, key);
            self.words[(bit >> 6) as usize] |= 1u64 << (bit & 63);
        }
    }

    /// True ("probably present") only if all k bits of `key` are set.
    ///
    /// Probes are tested four at a time without branching, then once per group: an absent
    /// key usually fails within the first group, so that branch is well predicted, and the
    /// group's loads are independent, so their cache misses overlap.
    #[inline]
    pub fn contains(&self, key: u64) -> bool {
        with_index!(self.hashes, index => self.all_set(key, |i, x| index(&self.hashes, i, x)))
    }

    #[inline(always)]
    fn all_set(&self, key: u64, index: impl Fn(usize, u64) -> u64) -> bool {
        const GROUP: usize = 4;
        let k = self.k as usize;
        let mut start = 0;
        while start < k {
            let end = (start + GROUP).min(k);
            let mut all = 1u64;
            for i in start..end {
                let bit = index(i, key);
                all &= self.words[(bit >> 6) as usize] >> (bit & 63);
            }
            if all & 1 == 0 {
                return false;
            }
            start = end;
        }
        true
    }

    /// Sets the k bits of a byte key, hashed by the family itself ([`HashFamily::for_each_index_bytes`]).
    pub fn insert_bytes(&mut self, key: &[u8]) {
        let words = &mut self.words;
        self.hashes.for_each_index_bytes(self.k, key, |bit| {
            words[(bit >> 6) as usize] |= 1u64 << (bit & 63)
        });
    }

    /// True only if all k bits of a byte key are set.
    pub fn contains_bytes(&self, key: &[u8]) -> bool {
        let mut all = true;
        self.hashes.for_each_index_bytes(self.k, key, |bit| {
            all &= self.words[(bit >> 6) as usize] >> (bit & 63) & 1 == 1
        });
        all
    }

    /// The words as atomics, for parallel insertion.
    fn atomic_words(&mut self) -> &[AtomicU64] {
        // SAFETY: AtomicU64 has the size and alignment of u64, and the exclusive borrow of
        // `self` rules out any non-atomic access to the words while the view lives.
        unsafe { &*(self.words.as_mut_slice() as *mut [u64] as *const [AtomicU64]) }
    }

    /// Inserts `key_of(c)` for every counter c in `counters`, on all cores. Each bit is set
    /// with an atomic OR, which commutes, so the result equals sequential insertion exactly.
    pub fn insert_parallel(&mut self, counters: Range<u64>, key_of: impl Fn(u64) -> u64 + Sync) {
        let hashes = self.hashes.clone();
        let k = self.k as usize;
        let words = self.atomic_words();
        counters.into_par_iter().for_each(|c| {
            let key = key_of(c);
            for i in 0..k {
                let bit = hashes.index(i, key);
                words[(bit >> 6) as usize].fetch_or(1u64 << (bit & 63), Ordering::Relaxed);
            }
        });
    }

    /// Number of set bits (popcount over the words).
    pub fn set_bits(&self) -> u64 {
        self.words.par_chunks(1 << 12).map(popcount).sum()
    }

    /// `(bits, set bits)` of each of at most `regions` runs of whole words, in order: equal
    /// runs of `ceil(words / regions)` words, the last one holding the bits up to m.
    pub fn set_bits_by_region(&self, regions: usize) -> Vec<(u64, u64)> {
        let per_region = self.words.len().div_ceil(regions.max(1)).max(1);
        self.words
            .chunks(per_region)
            .enumerate()
            .map(|(r, chunk)| {
                let start = (r * per_region * 64) as u64;
                let bits = (chunk.len() as u64 * 64).min(self.m - start);
                (bits, popcount(chunk))
            })
            .collect()
    }

    /// Fraction of bits set, `set_bits / m`.
    pub fn fill(&self) -> f64 {
        self.set_bits() as f64 / self.m as f64
    }
}
