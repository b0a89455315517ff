//! The `sbbf-rs-safe` crate (over `sbbf-rs`): Parquet's split-block Bloom filter, blocks of
//! eight 32-bit words with one bit set in each (k = 8), tested with one AVX2 `vptest` where
//! the CPU has it. It takes a 64-bit hash, not a key: the high 32 bits pick the block
//! (`fastrange`), the low 32 times eight odd salts, shifted right by 27, the bits
//! (the Parquet specification's `mask`). The adapter hashes each key with bloomlab's
//! multiply-shift family, the hash of bloomlab's own split-block filter,
//! `(a_0·x + b_0) >> 32` as the high half and `(a_1·x + b_1) >> 32` as the low half, and that
//! hashing is inside every timed call. Built by shape (`from_bytes` of m/8 zero bytes: whole
//! 256-bit blocks, k = 8); the crate has no constructor by rate that names one, so it is
//! not audited.

use crate::structures::interface::{Family, PeerCrate, Structure};

static CRATE: PeerCrate = PeerCrate {
    name: "sbbf-rs",
    slowdown_percent: 160,
    constructor: Some(|m, _| format!("sbbf_rs_safe::Filter::from_bytes(&vec![0u8; {}])", m / 8)),
};

pub static STRUCTURE: Structure = Structure {
    origin: super::origin(&CRATE),
    layout: crate::structures::split_block::layout,
    lines_per_query: Some(|_| 1),
    ks: &[crate::structures::split_block::SPLIT_WORDS],
    family: Family::SplitBlock,
    fpr_exact: crate::structures::split_block::fpr_exact,
    ..Structure::new(
        "sbbf",
        "the sbbf-rs crate: Parquet's split-block filter (256-bit blocks, k = 8), keys hashed by multiply-shift",
        adapter::build,
    )
};

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::Sbbf;

#[cfg(feature = "peers")]
mod adapter {
    use crate::error::{Error, Result};
    use crate::hash::{HashFamily, HashScheme};
    use crate::structures::bloom::popcount;
    use crate::structures::interface::{Filter, FilterKind, Membership, Shape};
    use crate::structures::split_block::{SPLIT_WORDS, block_rate, layout};

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Sbbf::by_shape(shape.m, shape.k, shape.hash_seed)?))
    }

    /// `sbbf_rs_safe::Filter` and the two multiply-shift functions that hash its keys.
    pub struct Sbbf {
        filter: sbbf_rs_safe::Filter,
        halves: HashFamily,
    }

    impl Sbbf {
        /// `Filter::from_bytes(m/8 zero bytes)`: m must be whole 256-bit blocks and k 8
        /// ([`layout`]).
        pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
            let m = layout(m, k)?;
            let mut bytes = Vec::new();
            bytes.try_reserve_exact(m as usize / 8).map_err(|_| {
                Error::invalid(
                    "m",
                    m,
                    "cannot allocate it",
                    "a bit array that fits in memory",
                )
            })?;
            bytes.resize(m as usize / 8, 0u8);
            let filter = sbbf_rs_safe::Filter::from_bytes(&bytes).ok_or_else(|| {
                Error::invalid("m", m, "not whole 256-bit blocks", "a multiple of 256")
            })?;
            Ok(Sbbf {
                filter,
                halves: HashFamily::new(HashScheme::MultiplyShift, 2, 1 << 32, seed),
            })
        }

        /// The 64-bit hash the crate takes: two 32-bit multiply-shift values.
        #[inline(always)]
        fn hash(&self, key: u64) -> u64 {
            let half = |i| self.halves.multiply_shift_pow2(i, key);
            (half(0) << 32) | half(1)
        }

        /// The filter's bits as u64 words, block after block.
        fn words(&self) -> Vec<u64> {
            self.filter
                .as_bytes()
                .chunks_exact(8)
                .map(|b| u64::from_le_bytes(b.try_into().unwrap_or_default()))
                .collect()
        }
    }

    impl Membership for Sbbf {
        fn insert(&mut self, key: u64) {
            let hash = self.hash(key);
            self.filter.insert_hash(hash);
        }
        fn contains(&self, key: u64) -> bool {
            self.filter.contains_hash(self.hash(key))
        }
    }

    impl Filter for Sbbf {
        fn set_bits(&self) -> u64 {
            popcount(self.filter.as_bytes())
        }
        fn memory_bits(&self) -> u64 {
            self.filter.as_bytes().len() as u64 * 8
        }
        fn hashes(&self) -> u32 {
            SPLIT_WORDS
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        fn hash_name(&self) -> crate::hash::AppliedHash {
            HashScheme::MultiplyShift.into()
        }
        /// The mean over blocks of `Π_j (fill of word j)`, as for bloomlab's split block.
        fn fpr_from_bits(&self) -> f64 {
            let words = self.words();
            let blocks = words.chunks(4);
            let count = blocks.len() as f64;
            blocks.map(block_rate).sum::<f64>() / count
        }
        fn fpr_exact(&self, n: u64) -> f64 {
            crate::structures::split_block::fpr_exact(n, self.memory_bits(), SPLIT_WORDS)
        }
    }
}
