//! The `growable-bloom-filter` crate: `GrowableBloom::new(ε, n)`, a scalable filter whose j-th
//! sub-filter (created when the previous ones hold their capacity) holds `n·2^j` keys at rate
//! `ε·0.8515625^j`, as a partitioned filter of `ceil(log2(1/ε_j))` slices of
//! `ceil(n_j / ln 2)` bits. By shape: `ε = 2^-k` and the largest n whose first sub-filter fits
//! in m bits. Hashes with xxh3 and a fixed key: it takes no seed, so every run is the same and
//! re-seeding changes nothing.

use crate::structures::interface::{Family, PeerCrate, Structure};

static CRATE: PeerCrate = PeerCrate {
    name: "growable-bloom-filter",
    slowdown_percent: 350,
    constructor: None,
};

pub static STRUCTURE: Structure = Structure {
    origin: super::origin(&CRATE),
    accepts_seed: false,
    layout: adapter::layout,
    for_rate: Some(adapter::for_rate),
    family: Family::Scalable,
    fpr_exact: adapter::fpr_exact,
    ..Structure::new(
        "growable-bloom-filter",
        "the growable-bloom-filter crate: adds sub-filters as it fills, past m once n exceeds about m ln 2 / k (xxh3, no seed)",
        adapter::build,
    )
};

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::{GROWABLE_GROWTH, GROWABLE_TIGHTENING, Growable, SubFilter};

#[cfg(feature = "peers")]
mod adapter {
    use serde::Serialize;

    use crate::error::{Error, Result};
    use crate::structures::bloom::check_shape;
    use crate::structures::interface::{Filter, FilterKind, Membership, Rate, Shape};
    use crate::structures::partitioned::slice_fill;
    use crate::structures::peers::inspector::{InspectedSub, Inspector};

    pub fn layout(m: u64, k: u32) -> Result<u64> {
        check_shape(m, k)?;
        Growable::layout(m, k)
    }

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Growable::by_shape(shape.m, shape.k)?))
    }

    pub fn for_rate(_: &FilterKind, target: Rate, _: u64) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Growable::by_rate(target.n, target.fpr)))
    }

    /// Its growth schedule from the shape ([`Growable::fpr_exact`]); NaN for a shape it refuses.
    pub fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
        Growable::by_shape(m, k).map_or(f64::NAN, |g| Filter::fpr_exact(&g, n))
    }

    /// The crate's tightening ratio r: sub-filter j is built for rate `ε·r^j`.
    pub const GROWABLE_TIGHTENING: f64 = 0.8515625;
    /// The crate's growth factor: sub-filter j holds `n·2^j` keys.
    pub const GROWABLE_GROWTH: u64 = 2;

    /// One sub-filter of a growable filter as the crate lays it out.
    #[derive(Clone, Copy, Debug, PartialEq)]
    pub struct SubFilter {
        /// Keys it is built for.
        pub capacity: u64,
        /// Slices, one bit set in each per key.
        pub slices: u32,
        /// Bits per slice: `8·bytes / slices` (integer division, as the crate indexes).
        pub slice_bits: u64,
        /// Bytes allocated.
        pub bytes: u64,
    }

    impl SubFilter {
        /// Sub-filter `j` of a filter for `est_insertions` keys at `desired_error`, by the crate's
        /// formulas: `slices = ceil(log2(1/ε_j))`, `ceil(capacity / ln 2)` bits per slice, rounded
        /// up to whole bytes.
        pub fn planned(est_insertions: u64, desired_error: f64, j: u32) -> Self {
            let error = desired_error * GROWABLE_TIGHTENING.powi(j as i32);
            let capacity = est_insertions * GROWABLE_GROWTH.pow(j);
            let slices = (1.0 / error).log2().ceil() as u32;
            let per_slice = (capacity as f64 / std::f64::consts::LN_2).ceil() as u64;
            let bytes = (u64::from(slices) * per_slice).div_ceil(8);
            SubFilter {
                capacity,
                slices,
                slice_bits: bytes * 8 / u64::from(slices),
                bytes,
            }
        }

        /// `(1 - (1 - 1/s)^keys)^slices`: every slice gets one bit per key.
        pub fn fpr_exact(&self, keys: u64) -> f64 {
            slice_fill(keys, self.slice_bits).powi(self.slices as i32)
        }
    }

    /// `growable_bloom_filter::GrowableBloom`, which takes no seed.
    pub struct Growable {
        inner: ::growable_bloom_filter::GrowableBloom,
        est_insertions: u64,
        desired_error: f64,
        /// The sub-filters read from the serialised form, kept until the next insert: a row reads
        /// set bits, rate, memory and hashes, and each would otherwise copy every sub-filter.
        inspected: std::sync::OnceLock<Vec<InspectedSub>>,
    }

    /// The largest n whose first sub-filter at `ε = 2^-k` fits in m bits (0 when none does).
    fn growable_capacity(m: u64, k: u32) -> u64 {
        let error = 0.5f64.powi(k as i32);
        let fits = |n: u64| SubFilter::planned(n, error, 0).bytes * 8 <= m;
        let mut n = ((m / u64::from(k)) as f64 * std::f64::consts::LN_2) as u64 + 2;
        while n > 0 && !fits(n) {
            n -= 1;
        }
        n
    }

    impl Growable {
        /// `GrowableBloom::new(2^-k, n)` for the largest n whose first sub-filter fits in m bits.
        pub fn by_shape(m: u64, k: u32) -> Result<Self> {
            check_shape(m, k)?;
            let n = growable_capacity(m, k);
            if n == 0 {
                return Err(Error::invalid(
                    "m",
                    m,
                    "growable-bloom-filter needs room for k slices of at least two bits",
                    format!("at least {} bits at this k", 8 * u64::from(k).div_ceil(4)),
                ));
            }
            Ok(Self::by_rate(n, 0.5f64.powi(k as i32)))
        }

        /// The layout `by_shape` allocates for a request of m bits and k hashes.
        pub fn layout(m: u64, k: u32) -> Result<u64> {
            Ok(Self::by_shape(m, k)?.first().bytes * 8)
        }

        /// `GrowableBloom::new(ε, n)`.
        pub fn by_rate(n: u64, fpr: f64) -> Self {
            Growable {
                inner: ::growable_bloom_filter::GrowableBloom::new(fpr, n as usize),
                est_insertions: n,
                desired_error: fpr,
                inspected: std::sync::OnceLock::new(),
            }
        }

        pub fn inner(&self) -> &growable_bloom_filter::GrowableBloom {
            &self.inner
        }

        fn first(&self) -> SubFilter {
            SubFilter::planned(self.est_insertions, self.desired_error, 0)
        }

        /// The sub-filters the crate has created so far, as read from its serialised form.
        pub fn sub_filters(&self) -> &[InspectedSub] {
            self.inspected.get_or_init(|| {
                let mut inspector = Inspector::default();
                // The crate's fields are private; its serde form is the one view it offers.
                let _ = self.inner.serialize(&mut inspector);
                inspector.subs
            })
        }

        /// The keys sub-filter j received when `n` distinct keys were inserted.
        fn keys_in(&self, n: u64, j: u32) -> u64 {
            let before: u64 = (0..j)
                .map(|i| SubFilter::planned(self.est_insertions, self.desired_error, i).capacity)
                .sum();
            let capacity = SubFilter::planned(self.est_insertions, self.desired_error, j).capacity;
            n.saturating_sub(before).min(capacity)
        }
    }

    impl Membership for Growable {
        fn insert(&mut self, key: u64) {
            self.inner.insert(key);
            self.inspected.take();
        }
        fn contains(&self, key: u64) -> bool {
            self.inner.contains(key)
        }
    }

    impl Filter for Growable {
        fn set_bits(&self) -> u64 {
            self.sub_filters()
                .iter()
                .map(|s| s.set_bits.iter().sum::<u64>())
                .sum()
        }
        /// `1 - Π_j (1 - Π_i fill_{j,i})` over sub-filters j and their slices i: a query is
        /// positive when any sub-filter has all its slice bits set.
        fn fpr_from_bits(&self) -> f64 {
            1.0 - self
                .sub_filters()
                .iter()
                .map(|s| {
                    1.0 - s
                        .set_bits
                        .iter()
                        .map(|&set| set as f64 / s.slice_bits as f64)
                        .product::<f64>()
                })
                .product::<f64>()
        }
        /// `1 - Π_j (1 - (1 - (1 - 1/s_j)^{n_j})^{k_j})`, sub-filter j holding
        /// `n_j = min(cap_j, n - Σ_{i<j} cap_i)` keys. (The crate skips a key that already tests
        /// present, so the true n_j are smaller by about a fraction ε; the bias is below the
        /// noise of any measurement here.)
        fn fpr_exact(&self, n: u64) -> f64 {
            let mut miss = 1.0;
            let mut j = 0;
            while self.keys_in(n, j) > 0 {
                let sub = SubFilter::planned(self.est_insertions, self.desired_error, j);
                miss *= 1.0 - sub.fpr_exact(self.keys_in(n, j));
                j += 1;
            }
            1.0 - miss
        }
        /// Every sub-filter's bytes (at least the first's, which is allocated at the first insert).
        fn memory_bits(&self) -> u64 {
            let subs = self.sub_filters();
            if subs.is_empty() {
                return self.first().bytes * 8;
            }
            subs.iter().map(|s| s.bytes * 8).sum()
        }
        /// Slices summed over the sub-filters: the bits an absent key may probe.
        fn hashes(&self) -> u32 {
            let subs = self.sub_filters();
            if subs.is_empty() {
                return self.first().slices;
            }
            subs.iter().map(|s| s.slices).sum()
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        /// The crate's own hash.
        fn hash_name(&self) -> crate::hash::AppliedHash {
            crate::hash::AppliedHash::own("xxh3")
        }
    }
}
