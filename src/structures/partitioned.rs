//! A partitioned Bloom filter (Chang, Feng and Li 2004; the building block of Almeida,
//! Baquero, Preguiça and Hutchison 2007, "Scalable Bloom Filters", section 3): m bits cut into
//! k slices of m/k bits, probe i of a key sets one bit in slice i, so a key's k bits are
//! always distinct.

use super::blocks::smallest_size;
use super::interface::{Filter, FilterKind, Membership, Structure, boxed};
use crate::error::{Error, Result};
use crate::structures::bloom::{MAX_BITS, check_shape, popcount};
use crate::hash::{AppliedHash, HashFamily, HashScheme, with_index};
use crate::theory;
use crate::words::Words;

pub static STRUCTURE: Structure = Structure {
    layout,
    design: Some(design),
    fpr_exact,
    ..Structure::new(
        "partitioned",
        "k slices of m/k bits, probe i of a key in slice i (Almeida et al. 2007)",
        |s| boxed(PartitionedFilter::new(s.m, s.k, s.hash, s.hash_seed)),
    )
};

/// m rounded up to k whole slices.
pub fn layout(m: u64, k: u32) -> Result<u64> {
    check_shape(m, k)?;
    let rounded = m.div_ceil(u64::from(k)) * u64::from(k);
    if rounded > MAX_BITS {
        return Err(Error::invalid(
            "m",
            m,
            "k slices of whole bits exceed the largest array",
            format!("1..={}", MAX_BITS - MAX_BITS % u64::from(k)),
        ));
    }
    Ok(rounded)
}

/// The smallest m whose exact rate meets ε, with the whole optimal k: Almeida et al. (section
/// 3) size a slice for fill one half, `k = log2(1/ε)` slices of `n/ln 2` bits, the classic
/// optimum; the search finds the fewest bits at the whole k.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let rate = |m: u64| {
        let k = theory::whole_optimal_k(n, m);
        layout(m, k).map_or(1.0, |m| fpr_exact(n, m, k))
    };
    let m = smallest_size(n, fpr, rate);
    let k = theory::whole_optimal_k(n, m);
    Ok((layout(m, k)?, k))
}

/// `(1 - (1 - k/m)^n)^k`: each slice of m/k bits receives exactly one bit of each of the n
/// keys, and the slices are filled by independent hashes, so the expectation of the product
/// of the k slice fills is the product of their expectations (Almeida et al. 2007, eq. 3,
/// exact rather than its `e^{-nk/m}` limit).
pub fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
    slice_fill(n, m / u64::from(k)).powi(k as i32)
}

/// Expected fill of a slice of `bits` bits after `keys` uniform writes, `1 - (1 - 1/bits)^keys`.
pub fn slice_fill(keys: u64, bits: u64) -> f64 {
    theory::fill_expected(keys, bits, 1)
}

/// A partitioned Bloom filter: k slices of `slice` bits, probe i setting bit
/// `i·slice + h_i(x)`.
///
/// Invariant: after `insert(x)`, `contains(x)` is true; no deletion.
#[derive(Debug)]
pub struct PartitionedFilter {
    words: Words,
    slice: u64,
    k: u32,
    hashes: HashFamily,
}

impl PartitionedFilter {
    /// m must be k whole slices ([`layout`]).
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        let m = layout(m, k)?;
        let slice = m / u64::from(k);
        Ok(PartitionedFilter {
            words: Words::zeroed(m)?,
            slice,
            k,
            hashes: HashFamily::new(scheme, k, slice, hash_seed),
        })
    }

    /// Set bits of slice i.
    pub fn slice_set_bits(&self, i: u32) -> u64 {
        let (start, end) = (u64::from(i) * self.slice, u64::from(i + 1) * self.slice);
        (start..end).filter(|&b| self.bit(b)).count() as u64
    }

    #[inline(always)]
    fn bit(&self, b: u64) -> bool {
        (self.words[(b >> 6) as usize] >> (b & 63)) & 1 == 1
    }
}

impl Membership for PartitionedFilter {
    fn insert(&mut self, key: u64) {
        let (words, hashes, slice) = (&mut self.words, &self.hashes, self.slice);
        with_index!(hashes, index => for i in 0..self.k as usize {
            let b = i as u64 * slice + index(hashes, i, key);
            words[(b >> 6) as usize] |= 1u64 << (b & 63);
        })
    }
    fn contains(&self, key: u64) -> bool {
        let (hashes, slice) = (&self.hashes, self.slice);
        with_index!(hashes, index => (0..self.k as usize)
            .all(|i| self.bit(i as u64 * slice + index(hashes, i, key))))
    }
}

impl Filter for PartitionedFilter {
    fn set_bits(&self) -> u64 {
        popcount(&self.words)
    }
    /// `Π_i (set bits of slice i / slice bits)`: a query tests one bit of each slice.
    fn fpr_from_bits(&self) -> f64 {
        (0..self.k)
            .map(|i| self.slice_set_bits(i) as f64 / self.slice as f64)
            .product()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        fpr_exact(n, self.memory_bits(), self.k)
    }
    fn memory_bits(&self) -> u64 {
        self.slice * u64::from(self.k)
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
