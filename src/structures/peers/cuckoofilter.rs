//! The `cuckoofilter` crate (Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter:
//! Practically Better Than Bloom", CoNEXT 2014): buckets of 4 one-byte fingerprints,
//! `CuckooFilter::with_capacity(n)` as its README shows (`next_power_of_two(n)/4` buckets),
//! keys hashed by the standard library's `DefaultHasher` (SipHash-1-3, zero key: it takes no
//! seed). Its fingerprint is the top byte of the hash's high half, 100 (its empty mark) moved
//! to 101; its second bucket is the first XOR the low half of the fingerprint's own hash.
//! Its fingerprints are 8 bits whatever the target: it takes no rate, so it is not audited
//! (its rate at capacity is about 3%, what its README says it is for). Its relocations draw
//! from `rand::thread_rng`, so which bucket a key ends in, and so which absent keys match,
//! differs from run to run (the rate's distribution does not): its rows are not for the
//! reproduced results. By shape: k = 8 and the fewest power-of-two slots holding m bits.

use crate::structures::interface::{Family, Structure};

pub static STRUCTURE: Structure = Structure {
    origin: super::ORIGIN,
    supports_delete: true,
    accepts_seed: false,
    layout,
    lines_per_query: Some(|_| 2),
    ks: &[FINGERPRINT_BITS],
    family: Family::Cuckoo,
    fpr_exact,
    ..Structure::new(
        "cuckoofilter",
        "the cuckoofilter crate: buckets of 4 one-byte fingerprints (k = 8), with delete (SipHash-1-3, no seed; relocations unseeded)",
        adapter::build,
    )
};

/// The crate's fingerprint: one byte.
pub const FINGERPRINT_BITS: u32 = 8;
/// Fingerprints a bucket holds.
pub const BUCKET_SLOTS: u64 = 4;

/// `next_power_of_two(m/8)` one-byte slots, at least a bucket: what `with_capacity(m/8)`
/// allocates. k must be 8.
pub fn layout(m: u64, k: u32) -> crate::error::Result<u64> {
    if k != FINGERPRINT_BITS {
        return Err(crate::error::Error::invalid(
            "k",
            k,
            "with --filter cuckoofilter, k is its fingerprint size in bits, fixed by the crate",
            "8 with --filter cuckoofilter",
        ));
    }
    let slots = (m / 8).max(BUCKET_SLOTS).next_power_of_two();
    Ok(slots * 8)
}

/// `Σ_v p_v (1 - (1 - c_v p_v / B)^s)`: an absent key with fingerprint v (probability
/// `p_v`: 2/256 for 101, none for 100, 1/256 for the rest) and buckets `{i, i ⊕ h(v)}` is
/// reported present exactly when some stored key has fingerprint v and a first bucket in that
/// pair, each of the s stored keys independently with probability `c_v p_v / B`, where
/// `c_v = 2` (one if `h(v) mod B = 0`, a pair of one bucket). As in bloomlab's own cuckoo
/// filter ([`crate::structures::cuckoo`]), s counts at most the `4B` slots.
pub fn fpr_exact(n: u64, m: u64, _k: u32) -> f64 {
    let buckets = (m / 8 / BUCKET_SLOTS).max(1);
    let stored = n.min(buckets * BUCKET_SLOTS) as f64;
    (0..=255u8)
        .map(|v| {
            let p = match v {
                EMPTY => 0.0,
                MOVED => 2.0 / 256.0,
                _ => 1.0 / 256.0,
            };
            let pairs = if alt_index(v).is_multiple_of(buckets) {
                1.0
            } else {
                2.0
            };
            let miss = (-pairs * p / buckets as f64).ln_1p();
            p * -(stored * miss).exp_m1()
        })
        .sum()
}

/// The crate's empty slot, and where a fingerprint of that value goes.
const EMPTY: u8 = 100;
const MOVED: u8 = 101;

/// The crate's `get_alt_index` offset: the low 32 bits of `DefaultHasher` over the
/// fingerprint's one-byte array.
fn alt_index(v: u8) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::default();
    [v].hash(&mut hasher);
    u64::from(hasher.finish() as u32)
}

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::Cuckoofilter;

#[cfg(feature = "peers")]
mod adapter {
    use std::collections::hash_map::DefaultHasher;

    use crate::error::Result;
    use crate::structures::interface::{Filter, FilterKind, Membership, Shape};

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Cuckoofilter::by_shape(shape.m, shape.k)?))
    }

    /// `cuckoofilter::CuckooFilter` and the inserts it refused.
    pub struct Cuckoofilter {
        filter: ::cuckoofilter::CuckooFilter<DefaultHasher>,
        slots: u64,
        failed: u64,
    }

    impl Cuckoofilter {
        /// `CuckooFilter::with_capacity(slots)` of [`super::layout`]'s slots.
        pub fn by_shape(m: u64, k: u32) -> Result<Self> {
            let slots = super::layout(m, k)? / 8;
            Ok(Cuckoofilter {
                filter: ::cuckoofilter::CuckooFilter::with_capacity(slots as usize),
                slots,
                failed: 0,
            })
        }
    }

    impl Membership for Cuckoofilter {
        /// `add`. A refusal (`NotEnoughSpace`) has stored the key and dropped another.
        fn insert(&mut self, key: u64) {
            if self.filter.add(&key).is_err() {
                self.failed += 1;
            }
        }
        fn contains(&self, key: u64) -> bool {
            self.filter.contains(&key)
        }
    }

    impl Filter for Cuckoofilter {
        /// Bits of the stored fingerprints.
        fn set_bits(&self) -> u64 {
            self.filter.len() as u64 * 8
        }
        /// [`super::fpr_exact`] at the keys the crate counts as stored.
        fn fpr_from_bits(&self) -> f64 {
            super::fpr_exact(self.filter.len() as u64, self.memory_bits(), 8)
        }
        fn fpr_exact(&self, n: u64) -> f64 {
            super::fpr_exact(n, self.memory_bits(), 8)
        }
        fn delete(&mut self, key: u64) -> Result<()> {
            self.filter.delete(&key);
            Ok(())
        }
        fn failed_inserts(&self) -> Option<u64> {
            Some(self.failed)
        }
        /// The buckets' bytes (not the struct's few words around them).
        fn memory_bits(&self) -> u64 {
            self.slots * 8
        }
        fn hashes(&self) -> u32 {
            super::FINGERPRINT_BITS
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        fn hash_name(&self) -> crate::hash::AppliedHash {
            crate::hash::AppliedHash::own("siphash-1-3")
        }
    }
}
