//! A blocked filter (Putze, Sanders and Singler 2007): all k probes of a key in one block of
//! B bits, chosen by a further hash. [`descriptor`] registers one for any block size.

use super::block_simd::{Design, Kernel};
use super::block_paths::vector_paths;
use super::blocks::{Blocks, Index, poisson_mixture, smallest_size, whole_blocks};
use super::interface::{
    CACHE_LINE_BITS, Filter, FilterKind, Membership, Shape, Structure, check_answers,
};
use crate::error::Result;
use crate::structures::bloom::popcount;
use crate::hash::{AppliedHash, HashFamily, with_index};
use crate::theory;

/// Bits in a blocked filter's block: one 512-bit cache line.
pub const BLOCK_BITS: u64 = 512;

pub static STRUCTURE: Structure = descriptor::<BLOCK_BITS>(
    "blocked",
    "all k probes of a key in one 512-bit block (a cache line) chosen by a further hash",
);

/// The blocked structure with blocks of `B` bits (a multiple of 64).
pub const fn descriptor<const B: u64>(name: &'static str, help: &'static str) -> Structure {
    Structure {
        layout: |m, _| whole_blocks(m, B),
        design: Some(design::<B>),
        lines_per_query: Some(|_| B.div_ceil(CACHE_LINE_BITS) as u32),
        fpr_exact: fpr_exact::<B>,
        ..Structure::new(name, help, build::<B>)
    }
}

fn build<const B: u64>(shape: &Shape) -> Result<Box<dyn Filter>> {
    Ok(Box::new(BlockedFilter::new(shape, B)?))
}

/// The smallest m whose exact rate (the Poisson mixture) meets ε, with the whole optimal k.
fn design<const B: u64>(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let m = smallest_size(n, fpr, |m| {
        let k = theory::whole_optimal_k(n, m);
        whole_blocks(m, B).map_or(1.0, |m| fpr_exact::<B>(n, m, k))
    });
    Ok((m, theory::whole_optimal_k(n, m)))
}

/// The Poisson mixture over the keys in the query's block,
/// `Σ_i Po(i; nB/m) · E[(X_i/B)^k]` with `X_i` the set bits of a B-bit block holding i keys.
/// (The block load is binomial; the Poisson form is the standard approximation, exact as
/// the number of blocks grows.)
fn fpr_exact<const B: u64>(n: u64, m: u64, k: u32) -> f64 {
    poisson_mixture(n, m, B, |i| theory::fpr_exact(i, B, k))
}

/// A blocked Bloom filter: a key's k bits all lie in one b-bit block.
#[derive(Debug)]
pub struct BlockedFilter {
    blocks: Blocks,
    in_block: HashFamily,
    k: u32,
    kind: FilterKind,
    /// All k probes at once, with word-wide masks ([`Kernel`]): 512- and 1024-bit blocks on
    /// the power-of-two multiply-shift and double-hashing paths; none elsewhere.
    kernel: Option<Kernel>,
}

impl BlockedFilter {
    /// `shape.m` must be a whole number of `block_bits`-bit blocks ([`FilterKind::layout`]),
    /// at least one ([`Blocks::new`] refuses others).
    pub fn new(shape: &Shape, block_bits: u64) -> Result<Self> {
        let Shape {
            m, k, hash, hash_seed, ..
        } = *shape;
        let in_block = HashFamily::new(hash, k, block_bits, hash_seed);
        let blocks = Blocks::new(m, block_bits, hash, hash_seed)?;
        let design = match block_bits {
            BLOCK_BITS => Some(Design::Blocked512),
            1024 => Some(Design::Blocked1024),
            _ => None,
        };
        let kernel = design.and_then(|d| Kernel::new(in_block.lanes(), k, d, &blocks));
        Ok(BlockedFilter {
            blocks,
            in_block,
            k,
            kind: shape.kind.clone(),
            kernel,
        })
    }
}

vector_paths!(BlockedFilter);

/// Probe i of a blocked filter: bit `h_i(x)` of the block.
#[inline(always)]
fn block_probe(index: Index, in_block: &HashFamily, key: u64, i: usize) -> (usize, u64) {
    let bit = index(in_block, i, key);
    ((bit >> 6) as usize, 1u64 << (bit & 63))
}

impl BlockedFilter {
    /// [`Membership::insert`] probe by probe, for a filter without a kernel.
    #[inline(never)]
    fn insert_by_probes(&mut self, key: u64) {
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .set(key, k, |x, i| block_probe(index, in_block, x, i)))
    }

    /// [`Membership::contains`] probe by probe, for a filter without a kernel.
    #[inline(never)]
    fn contains_by_probes(&self, key: u64) -> bool {
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .all_set(key, k, |x, i| block_probe(index, in_block, x, i)))
    }
}

/// Key by key, the kernel's call falls through and the probe-by-probe one is the cold path.
impl Membership for BlockedFilter {
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
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .set_many(keys, k, |x, i| block_probe(index, in_block, x, i)));
        Ok(())
    }
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        check_answers(keys, answers)?;
        if let Some(kernel) = &self.kernel {
            kernel.test_many(&self.blocks, keys, answers);
            return Ok(());
        }
        let (in_block, k) = (&self.in_block, self.k as usize);
        with_index!(in_block, index => self
            .blocks
            .all_set_many(keys, answers, k, |x, i| block_probe(index, in_block, x, i)));
        Ok(())
    }
    fn prefetch_query(&self, key: u64) {
        self.blocks.prefetch_block(key)
    }
}

impl Filter for BlockedFilter {
    fn set_bits(&self) -> u64 {
        self.blocks.set_bits()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        self.kind.fpr_exact(n, self.memory_bits(), self.k)
    }
    fn memory_bits(&self) -> u64 {
        self.blocks.memory_bits()
    }
    fn hashes(&self) -> u32 {
        self.k
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    fn hash_name(&self) -> AppliedHash {
        self.in_block.scheme().into()
    }
    fn vector_path(&self) -> Option<crate::hash::Simd> {
        self.simd()
    }
    fn take_path(&mut self, simd: crate::hash::Simd) {
        self.set_path(simd)
    }
    /// The mean over blocks of `(block fill)^k`.
    fn fpr_from_bits(&self) -> f64 {
        let block_bits = (self.blocks.words_per_block * 64) as f64;
        self.blocks.mean_over_blocks(|b| {
            (popcount(b) as f64 / block_bits).powi(self.k as i32)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::hash::HashScheme;
    use crate::structures::blocks::assert_kernel_sets_the_probes;

    /// The kernel (on the widest path here) sets the bits the probe-by-probe code sets and
    /// answers as it does, one key at a time and batched: the kernel's block pick and
    /// in-block indexes are the chooser's and the family's, for 512- and 1024-bit blocks,
    /// both hashings, k = 1..9, 16 and 17, one block and many.
    #[test]
    fn the_kernel_sets_the_bits_of_the_probes() {
        let wide = &crate::structures::blocked_1024::STRUCTURE;
        for (bits, structure) in [(BLOCK_BITS, &STRUCTURE), (1024, wide)] {
            for hash in [HashScheme::MultiplyShift, HashScheme::DoubleHashing] {
                for k in (1..=9).chain([16, 17]) {
                    for m in [bits, 79 * bits] {
                        let shape = Shape {
                            kind: FilterKind::of(structure),
                            n: 300,
                            m,
                            k,
                            hash,
                            math: None,
                            hash_seed: 3,
                        };
                        let mut kernel = BlockedFilter::new(&shape, bits).unwrap();
                        assert!(kernel.kernel.is_some(), "{hash} k={k}: no kernel");
                        let mut probes = BlockedFilter::new(&shape, bits).unwrap();
                        probes.kernel = None;
                        let what = format!("{bits}-bit {hash} k={k} m={m}");
                        assert_kernel_sets_the_probes(
                            [&mut kernel, &mut probes],
                            |f| &f.blocks,
                            &what,
                        );
                    }
                }
            }
        }
    }
}
