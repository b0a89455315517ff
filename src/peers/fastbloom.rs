//! The `fastbloom` crate: `BloomFilter::with_false_pos(ε).seed(s).expected_items(n)` by rate,
//! `with_num_bits(m).seed(s).hashes(k)` by shape; m bits (a whole number of u64 words), k
//! probes by double hashing of one SipHash-1-3 value. Seeded.

use crate::structures::interface::Structure;
use crate::theory;

pub static STRUCTURE: Structure = Structure {
    name: "fastbloom",
    help: "the fastbloom crate: m bits, k probes from one SipHash-1-3 value (seeded)",
    origin: super::ORIGIN,
    supports_delete: false,
    is_static: false,
    accepts_seed: true,
    argument: None,
    layout: adapter::layout,
    build: adapter::build,
    for_rate: Some(adapter::for_rate),
    design: None,
    lines_per_query: Some(|k| k),
    // A plain bit array of m bits and k probes: `E[(X/m)^k]`.
    fpr_exact: theory::fpr_exact,
};

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::Fastbloom;

#[cfg(feature = "peers")]
mod adapter {
    use crate::error::Result;
    use crate::filter::{check_shape, popcount};
    use crate::structures::interface::{Filter, FilterKind, Membership, Shape, Target};

    /// m rounded up to whole u64 words.
    pub fn layout(m: u64, k: u32) -> Result<u64> {
        check_shape(m, k)?;
        Ok(m.div_ceil(64) * 64)
    }

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Fastbloom::by_shape(
            shape.m,
            shape.k,
            shape.hash_seed,
        )?))
    }

    pub fn for_rate(target: &Target) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Fastbloom::by_rate(
            target.n,
            target.fpr,
            target.hash_seed,
        )))
    }

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
        /// The crate's own hash.
        fn hash_name(&self) -> String {
            "siphash-1-3".into()
        }
    }
}
