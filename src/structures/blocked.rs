//! A blocked filter (Putze, Sanders and Singler 2007).

use super::blocks::{Blocks, Index};
use super::{Filter, FilterKind, Membership};
use crate::error::Result;
use crate::hash::{HashFamily, HashScheme, with_index};

/// A blocked Bloom filter: a key's k bits all lie in one b-bit block.
#[derive(Clone, Debug)]
pub struct BlockedFilter {
    blocks: Blocks,
    in_block: HashFamily,
    k: u32,
}

impl BlockedFilter {
    /// m must be a whole number of `block_bits`-bit blocks ([`FilterKind::layout`]).
    pub fn new(
        m: u64,
        k: u32,
        scheme: HashScheme,
        hash_seed: u64,
        block_bits: u64,
    ) -> Result<Self> {
        Ok(BlockedFilter {
            blocks: Blocks::new(m, block_bits, scheme, hash_seed)?,
            in_block: HashFamily::new(scheme, k, block_bits, hash_seed),
            k,
        })
    }
}

/// Probe i of a blocked filter: bit `h_i(x)` of the block.
#[inline(always)]
fn block_probe(index: Index, in_block: &HashFamily, key: u64, i: usize) -> (usize, u64) {
    let bit = index(in_block, i, key);
    ((bit >> 6) as usize, 1u64 << (bit & 63))
}

impl Membership for BlockedFilter {
    fn insert(&mut self, key: u64) {
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .set(key, k, |i| block_probe(index, in_block, key, i)))
    }
    fn contains(&self, key: u64) -> bool {
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .all_set(key, k, |i| block_probe(index, in_block, key, i)))
    }
}

impl Filter for BlockedFilter {
    fn set_bits(&self) -> u64 {
        self.blocks.set_bits()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        FilterKind::Blocked.fpr_exact(n, self.memory_bits(), self.k)
    }
    fn memory_bits(&self) -> u64 {
        self.blocks.words.len() as u64 * 64
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn kind(&self) -> FilterKind {
        FilterKind::Blocked
    }
    /// The mean over blocks of `(block fill)^k`.
    fn fpr_from_bits(&self) -> f64 {
        let block_bits = (self.blocks.words_per_block * 64) as f64;
        self.blocks.mean_over_blocks(|b| {
            let set: u32 = b.iter().map(|w| w.count_ones()).sum();
            (f64::from(set) / block_bits).powi(self.k as i32)
        })
    }
}
