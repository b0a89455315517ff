//! The `bloomfilter` crate: `Bloom::new_for_fp_rate_with_seed(n, ε, seed)` by rate (the
//! README's `new_for_fp_rate` with the seed it otherwise draws from the OS), or
//! `new_with_seed(m/8 bytes, items, seed)` by shape, with `items` chosen so that the crate's
//! `k = round(m/items · ln 2)` is the k asked for; two SipHash-1-3 keys. Seeded.

use crate::structures::interface::{Family, PeerCrate, Structure};

static CRATE: PeerCrate = PeerCrate {
    name: "bloomfilter",
    slowdown_percent: 300,
    constructor: Some(|m, k| {
        let items = ((m as f64 * std::f64::consts::LN_2 / k as f64).round() as u64).max(1);
        format!("bloomfilter::Bloom::new({}, {items})", m / 8)
    }),
};

pub static STRUCTURE: Structure = Structure {
    origin: super::origin(&CRATE),
    layout: adapter::layout,
    for_rate: Some(adapter::for_rate),
    family: Family::Classic,
    ..Structure::new(
        "bloomfilter",
        "the bloomfilter crate: m bits in whole bytes, k probes from two SipHash-1-3 keys (seeded)",
        adapter::build,
    )
};

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::Bloomfilter;

#[cfg(feature = "peers")]
mod adapter {
    use crate::error::{Error, Result};
    use crate::structures::bloom::{check_shape, popcount};
    use crate::structures::interface::{Filter, FilterKind, Membership, Rate, Shape, boxed};
    use crate::structures::peers::seed_bytes;

    /// The bits `by_shape` allocates: whole bytes, and a refusal of a k it cannot reach.
    pub fn layout(m: u64, k: u32) -> Result<u64> {
        check_shape(m, k)?;
        Ok(Bloomfilter::by_shape(m, k, 0)?.memory_bits())
    }

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        boxed(Bloomfilter::by_shape(shape.m, shape.k, shape.hash_seed))
    }

    pub fn for_rate(_: &FilterKind, target: Rate, hash_seed: u64) -> Result<Box<dyn Filter>> {
        boxed(Bloomfilter::by_rate(target.n, target.fpr, hash_seed))
    }

    /// `bloomfilter::Bloom<u64>`, seeded.
    pub struct Bloomfilter(::bloomfilter::Bloom<u64>);

    impl Bloomfilter {
        /// `new_with_seed(m/8 bytes, items, seed)`, `items` chosen to give k (m a multiple of 8).
        pub fn by_shape(m: u64, k: u32, seed: u64) -> Result<Self> {
            check_shape(m, k)?;
            let bytes = m.div_ceil(8) as usize;
            let items = ((bytes as f64 * 8.0 * std::f64::consts::LN_2 / f64::from(k)).round()
                as usize)
                .max(1);
            for candidate in [items, items + 1, items.saturating_sub(1).max(1)] {
                let bloom =
                    ::bloomfilter::Bloom::new_with_seed(bytes, candidate, &seed_bytes(seed))
                        .map_err(|e| Error::Output(format!("bloomfilter: {e}")))?;
                if bloom.number_of_hash_functions() == k {
                    return Ok(Bloomfilter(bloom));
                }
            }
            Err(Error::invalid(
                "k",
                k,
                "the bloomfilter crate takes k = round(m/n ln 2) for some whole n, and no n gives this k at this m",
                "k at most about 0.69 m",
            ))
        }

        /// `new_for_fp_rate_with_seed(n, ε, seed)`: `m = 8·ceil(-n ln ε / (8 ln² 2))`,
        /// `k = round(m/n · ln 2)`.
        pub fn by_rate(n: u64, fpr: f64, seed: u64) -> Result<Self> {
            ::bloomfilter::Bloom::new_for_fp_rate_with_seed(n as usize, fpr, &seed_bytes(seed))
                .map(Bloomfilter)
                .map_err(|e| Error::Output(format!("bloomfilter: {e}")))
        }

        /// The bit array: `as_slice()` is a header followed by the bits.
        fn bitmap(&self) -> &[u8] {
            let slice = self.0.as_slice();
            &slice[slice.len() - (self.0.len() / 8) as usize..]
        }
    }

    impl Membership for Bloomfilter {
        fn insert(&mut self, key: u64) {
            self.0.set(&key);
        }
        fn contains(&self, key: u64) -> bool {
            self.0.check(&key)
        }
    }

    impl Filter for Bloomfilter {
        fn set_bits(&self) -> u64 {
            popcount(self.bitmap())
        }
        fn memory_bits(&self) -> u64 {
            self.0.len()
        }
        fn hashes(&self) -> u32 {
            self.0.number_of_hash_functions()
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        /// The crate's own hash.
        fn hash_name(&self) -> crate::hash::AppliedHash {
            crate::hash::AppliedHash::own("siphash-1-3")
        }
    }
}
