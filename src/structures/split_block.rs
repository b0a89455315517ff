//! A split-block filter (as in Parquet): 256-bit blocks of eight 32-bit words, one bit set in
//! each word, so k is always 8.

use super::block_simd::{Design, Kernel};
use super::block_paths::vector_paths;
use super::blocks::{Blocks, Index, poisson_mixture, smallest_size, whole_blocks};
use super::interface::{Filter, FilterKind, Family, Membership, Structure, boxed, check_answers};
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashFamily, HashScheme, with_index};

/// Bits in a split-block filter's block: eight 32-bit words.
pub const SPLIT_BLOCK_BITS: u64 = 256;
/// Words per split block, one bit set in each: k is always 8.
pub const SPLIT_WORDS: u32 = 8;

pub static STRUCTURE: Structure = Structure {
    layout,
    design: Some(design),
    lines_per_query: Some(|_| 1),
    ks: &[SPLIT_WORDS],
    family: Family::SplitBlock,
    fpr_exact,
    ..Structure::new(
        "split-block",
        "a 256-bit block of eight 32-bit words, one bit set in each (k = 8)",
        |s| boxed(SplitBlockFilter::new(s.m, s.hash, s.hash_seed)),
    )
};

/// Whole 256-bit blocks; k must be 8.
pub(crate) fn layout(m: u64, k: u32) -> Result<u64> {
    if k != SPLIT_WORDS {
        return Err(Error::invalid(
            "k",
            k,
            "a split-block filter sets one bit in each of its 8 words",
            "8 with --filter split-block",
        ));
    }
    whole_blocks(m, SPLIT_BLOCK_BITS)
}

/// The smallest m whose exact rate (the Poisson mixture) meets ε, k = 8.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let m = smallest_size(n, fpr, |m| {
        layout(m, SPLIT_WORDS).map_or(1.0, |m| fpr_exact(n, m, SPLIT_WORDS))
    });
    Ok((m, SPLIT_WORDS))
}

/// `Σ_i Po(i; nb/m) · (1 - (1 - 1/32)^i)^8`: a block holding i keys has each of its words'
/// query bit set with probability `1 - (1 - 1/32)^i`.
pub(crate) fn fpr_exact(n: u64, m: u64, _k: u32) -> f64 {
    poisson_mixture(n, m, SPLIT_BLOCK_BITS, |i| {
        (1.0 - (1.0 - 1.0 / 32.0f64).powi(i as i32)).powi(SPLIT_WORDS as i32)
    })
}

/// `Π_j (fill of 32-bit word j)` of a block's four u64 words: the rate of a query landing
/// in it. A filter's rate from its bits is the mean over its blocks.
pub(crate) fn block_rate(block: &[u64]) -> f64 {
    block
        .iter()
        .flat_map(|w| [w & 0xffff_ffff, w >> 32])
        .map(|half| f64::from(half.count_ones()) / 32.0)
        .product::<f64>()
}

/// A split-block filter: 256-bit blocks of eight 32-bit words, one bit set in each word.
#[derive(Debug)]
pub struct SplitBlockFilter {
    blocks: Blocks,
    in_word: HashFamily,
    /// All eight probes at once, as one 256-bit mask ([`Kernel`]): on the multiply-shift
    /// and double-hashing paths; none on the byte hashes.
    kernel: Option<Kernel>,
}

impl SplitBlockFilter {
    /// m must be a whole number of 256-bit blocks ([`FilterKind::layout`]), at least one
    /// ([`Blocks::new`] refuses others).
    pub fn new(m: u64, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        let in_word = HashFamily::new(scheme, SPLIT_WORDS, 32, hash_seed);
        let blocks = Blocks::new(m, SPLIT_BLOCK_BITS, scheme, hash_seed)?;
        Ok(SplitBlockFilter {
            kernel: Kernel::new(in_word.lanes(), SPLIT_WORDS, Design::Split256, &blocks),
            blocks,
            in_word,
        })
    }
}

vector_paths!(SplitBlockFilter);

/// Probe j of a split block: bit `h_j(x)` of 32-bit word j, word j being half `j & 1` of
/// u64 word `j / 2` of the block.
#[inline(always)]
fn split_probe(index: Index, in_word: &HashFamily, key: u64, j: usize) -> (usize, u64) {
    let bit = index(in_word, j, key) + 32 * (j as u64 & 1);
    (j / 2, 1u64 << bit)
}

impl SplitBlockFilter {
    /// [`Membership::insert`] probe by probe, for a filter without a kernel.
    #[inline(never)]
    fn insert_by_probes(&mut self, key: u64) {
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .set(key, SPLIT_WORDS as usize, |x, j| split_probe(index, in_word, x, j)))
    }

    /// [`Membership::contains`] probe by probe, for a filter without a kernel.
    #[inline(never)]
    fn contains_by_probes(&self, key: u64) -> bool {
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .all_set(key, SPLIT_WORDS as usize, |x, j| split_probe(index, in_word, x, j)))
    }
}

/// Key by key, the kernel's call falls through and the probe-by-probe one is the cold path.
impl Membership for SplitBlockFilter {
    fn insert(&mut self, key: u64) {
        match &self.kernel {
            Some(kernel) => kernel.set(&mut self.blocks, key),
            None => {
                std::hint::cold_path();
                self.insert_by_probes(key)
            }
        }
    }
    fn contains(&self, key: u64) -> bool {
        match &self.kernel {
            Some(kernel) => kernel.test(&self.blocks, key),
            None => {
                std::hint::cold_path();
                self.contains_by_probes(key)
            }
        }
    }
    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        if let Some(kernel) = &self.kernel {
            kernel.set_many(&mut self.blocks, keys);
            return Ok(());
        }
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .set_many(keys, SPLIT_WORDS as usize, |x, j| split_probe(index, in_word, x, j)));
        Ok(())
    }
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        check_answers(keys, answers)?;
        if let Some(kernel) = &self.kernel {
            kernel.test_many(&self.blocks, keys, answers);
            return Ok(());
        }
        let in_word = &self.in_word;
        with_index!(in_word, index => self.blocks.all_set_many(
            keys,
            answers,
            SPLIT_WORDS as usize,
            |x, j| split_probe(index, in_word, x, j)
        ));
        Ok(())
    }
    fn prefetch_query(&self, key: u64) {
        self.blocks.prefetch_block(key)
    }
}

impl Filter for SplitBlockFilter {
    fn set_bits(&self) -> u64 {
        self.blocks.set_bits()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        fpr_exact(n, self.memory_bits(), SPLIT_WORDS)
    }
    fn memory_bits(&self) -> u64 {
        self.blocks.memory_bits()
    }
    fn hashes(&self) -> u32 {
        SPLIT_WORDS
    }
    fn kind(&self) -> FilterKind {
        FilterKind::of(&STRUCTURE)
    }
    fn hash_name(&self) -> AppliedHash {
        self.in_word.scheme().into()
    }
    fn vector_path(&self) -> Option<crate::hash::Simd> {
        self.simd()
    }
    fn take_path(&mut self, simd: crate::hash::Simd) {
        self.set_path(simd)
    }
    fn fpr_from_bits(&self) -> f64 {
        self.blocks.mean_over_blocks(block_rate)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structures::blocks::assert_kernel_sets_the_probes;

    /// The kernel (on the widest path here) sets the bits the probe-by-probe code sets and
    /// answers as it does, one key at a time and batched, for both hashings, one block and
    /// many.
    #[test]
    fn the_kernel_sets_the_bits_of_the_probes() {
        for hash in [HashScheme::MultiplyShift, HashScheme::DoubleHashing] {
            for m in [SPLIT_BLOCK_BITS, 157 * SPLIT_BLOCK_BITS] {
                let mut kernel = SplitBlockFilter::new(m, hash, 3).unwrap();
                assert!(kernel.kernel.is_some(), "{hash}: no kernel");
                let mut probes = SplitBlockFilter::new(m, hash, 3).unwrap();
                probes.kernel = None;
                let what = format!("{hash} m={m}");
                assert_kernel_sets_the_probes([&mut kernel, &mut probes], |f| &f.blocks, &what);
            }
        }
    }
}
