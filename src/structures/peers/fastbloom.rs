//! The `fastbloom` crate: `BloomFilter::with_false_pos(ε).seed(s).expected_items(n)` by rate,
//! `with_num_bits(m).seed(s).hashes(k)` by shape; m bits (a whole number of u64 words), k
//! probes by double hashing of one SipHash-1-3 value. Seeded. [`fastest`] builds it by shape
//! on foldhash, the fastest hasher it supports (its own documentation's example), as bench
//! times it.

use crate::structures::interface::{Family, PeerCrate, Structure};

static CRATE: PeerCrate = PeerCrate {
    name: "fastbloom",
    slowdown_percent: 180,
    constructor: Some(|m, k| format!("fastbloom::BloomFilter::with_num_bits({m}).hashes({k})")),
};

pub static STRUCTURE: Structure = Structure {
    origin: super::origin(&CRATE),
    layout: adapter::layout,
    for_rate: Some(adapter::for_rate),
    family: Family::Classic,
    ..Structure::new(
        "fastbloom",
        "the fastbloom crate: m bits, k probes from one SipHash-1-3 value (seeded)",
        adapter::build,
    )
};

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::{FASTEST_HASH, Fastbloom, fastest};

#[cfg(feature = "peers")]
mod adapter {
    use std::hash::BuildHasher;

    use crate::error::Result;
    use crate::structures::bloom::{check_shape, popcount};
    use crate::structures::interface::{Filter, FilterKind, Membership, Rate, Shape, boxed};

    /// m rounded up to whole u64 words.
    pub fn layout(m: u64, k: u32) -> Result<u64> {
        check_shape(m, k)?;
        Ok(m.div_ceil(64) * 64)
    }

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        boxed(Fastbloom::by_shape(shape.m, shape.k, shape.hash_seed))
    }

    pub fn for_rate(_: &FilterKind, target: Rate, hash_seed: u64) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Fastbloom::by_rate(
            target.n, target.fpr, hash_seed,
        )))
    }

    /// The hash [`fastest`] gives fastbloom, as the `hash` column names it.
    pub const FASTEST_HASH: &str = "foldhash";

    /// `fastbloom::BloomFilter` with a hasher `S` (by default its own, SipHash-1-3), seeded,
    /// and the name of that hash.
    pub struct Fastbloom<S = ::fastbloom::DefaultHasher>(::fastbloom::BloomFilter<S>, &'static str);

    /// `with_num_bits(m).hasher(foldhash::fast::FixedState::with_seed(s)).hashes(k)`.
    pub fn fastest(m: u64, k: u32, seed: u64) -> Result<Box<dyn Filter>> {
        check_shape(m, k)?;
        let hasher = ::foldhash::fast::FixedState::with_seed(seed);
        Ok(Box::new(Fastbloom(
            ::fastbloom::BloomFilter::with_num_bits(m as usize)
                .hasher(hasher)
                .hashes(k),
            FASTEST_HASH,
        )))
    }

    impl Fastbloom {
        /// `with_num_bits(m).seed(s).hashes(k)`.
        pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
            check_shape(m, k)?;
            Ok(Fastbloom(
                ::fastbloom::BloomFilter::with_num_bits(m as usize)
                    .seed(&u128::from(seed))
                    .hashes(k),
                SIPHASH,
            ))
        }

        /// `with_false_pos(ε).seed(s).expected_items(n)`: `m = 8·ceil(-n ln ε / (8 ln² 2))`,
        /// `k = round(m/n · ln 2)`.
        pub fn by_rate(n: u64, fpr: f64, seed: u64) -> Self {
            Fastbloom(
                ::fastbloom::BloomFilter::with_false_pos(fpr)
                    .seed(&u128::from(seed))
                    .expected_items(n as usize),
                SIPHASH,
            )
        }
    }

    const SIPHASH: &str = "siphash-1-3";

    impl<S: BuildHasher> Membership for Fastbloom<S> {
        fn insert(&mut self, key: u64) {
            self.0.insert(&key);
        }
        fn contains(&self, key: u64) -> bool {
            self.0.contains(&key)
        }
    }

    impl<S: BuildHasher + Send + Sync> Filter for Fastbloom<S> {
        fn set_bits(&self) -> u64 {
            popcount(self.0.as_slice())
        }
        fn memory_bits(&self) -> u64 {
            self.0.num_bits() as u64
        }
        fn hashes(&self) -> u32 {
            self.0.num_hashes()
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        /// The hash it was built with.
        fn hash_name(&self) -> crate::hash::AppliedHash {
            crate::hash::AppliedHash::own(self.1)
        }
    }
}
