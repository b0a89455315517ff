//! A split-block filter (as in Parquet).

use super::blocks::{Blocks, Index};
use super::{Filter, FilterKind, Membership, SPLIT_BLOCK_BITS, SPLIT_WORDS};
use crate::error::Result;
use crate::hash::{HashFamily, HashScheme, with_index};

/// A split-block filter: 256-bit blocks of eight 32-bit words, one bit set in each word.
#[derive(Clone, Debug)]
pub struct SplitBlockFilter {
    blocks: Blocks,
    in_word: HashFamily,
}

impl SplitBlockFilter {
    /// m must be a whole number of 256-bit blocks ([`FilterKind::layout`]).
    pub fn new(m: u64, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Ok(SplitBlockFilter {
            blocks: Blocks::new(m, SPLIT_BLOCK_BITS, scheme, hash_seed)?,
            in_word: HashFamily::new(scheme, SPLIT_WORDS, 32, hash_seed),
        })
    }
}

/// Probe j of a split block: bit `h_j(x)` of 32-bit word j, word j being half `j & 1` of
/// u64 word `j / 2` of the block.
#[inline(always)]
fn split_probe(index: Index, in_word: &HashFamily, key: u64, j: usize) -> (usize, u64) {
    let bit = index(in_word, j, key) + 32 * (j as u64 & 1);
    (j / 2, 1u64 << bit)
}

impl Membership for SplitBlockFilter {
    fn insert(&mut self, key: u64) {
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .set(key, SPLIT_WORDS as usize, |j| split_probe(index, in_word, key, j)))
    }
    fn contains(&self, key: u64) -> bool {
        let in_word = &self.in_word;
        with_index!(in_word, index => self
            .blocks
            .all_set(key, SPLIT_WORDS as usize, |j| split_probe(index, in_word, key, j)))
    }
}

impl Filter for SplitBlockFilter {
    fn set_bits(&self) -> u64 {
        self.blocks.set_bits()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        FilterKind::SplitBlock.fpr_exact(n, self.memory_bits(), SPLIT_WORDS)
    }
    fn memory_bits(&self) -> u64 {
        self.blocks.words.len() as u64 * 64
    }
    fn hashes(&self) -> u32 {
        SPLIT_WORDS
    }
    fn kind(&self) -> FilterKind {
        FilterKind::SplitBlock
    }
    /// The mean over blocks of `Π_j (fill of word j)`.
    fn fpr_from_bits(&self) -> f64 {
        self.blocks.mean_over_blocks(|b| {
            b.iter()
                .flat_map(|w| [w & 0xffff_ffff, w >> 32])
                .map(|half| f64::from(half.count_ones()) / 32.0)
                .product::<f64>()
        })
    }
}
