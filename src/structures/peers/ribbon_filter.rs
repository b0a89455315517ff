//! The `ribbon-filter` crate (0.2, "not suitable for production use yet" by its own README):
//! a static standard Ribbon filter (Dillinger and Walzer, "Ribbon filter: practically smaller
//! than Bloom and Xor", 2021), configured as its README shows:
//! `Params::new(3n, 16, r, Mode::Standard).with_seed(s).with_retry_policy(4, 1)` (its example
//! builds 1000 keys into m = 3000 rows of band width 16) with `r = Params::r_from_fpr(ε) =
//! ceil(log2(1/ε))`, keys hashed by the standard library's `DefaultHasher` (SipHash-1-3) with
//! the seed mixed in. An absent key's r-bit result is uniform, so its rate is `2^-r`.
//!
//! How it is broken: its solution matrix stores each of its m rows in whole 64-bit words
//! (`m · ceil(r/64)` words, `RibbonFilter::z`), so a row spends 64 bits whatever r, and at the
//! README's m = 3n a key spends 192 bits: about 29 times the floor at 1%, where a Ribbon
//! filter's point is to spend a few per cent over it. Its rows report those bits. And the
//! README's band width 16 does not scale: a standard Ribbon's construction fails once some
//! window of rows receives more band starts than it can absorb, which at w = 16 and 3n rows
//! happens between 10^5 keys (built) and 3·10^5 (all 4 seeds and the grown m fail), so at
//! the audit's n = 10^6 the crate refuses, and audit records the refusal. By shape: k = r
//! (1..=64) and the rows of m bits, band width 16.

use crate::structures::interface::{Family, Structure};

pub static STRUCTURE: Structure = Structure {
    origin: super::ORIGIN,
    is_static: true,
    layout,
    for_rate: Some(adapter::for_rate),
    // A query XORs the rows its 16-bit band selects: 16 words, two or three lines.
    lines_per_query: Some(|_| 3),
    family: Family::Ribbon,
    // A solved system's answer for an absent key is uniform over the 2^r results.
    fpr_exact: |_, _, k| 0.5f64.powi(k as i32),
    ..Structure::new(
        "ribbon-filter",
        "the ribbon-filter crate: static standard Ribbon, r = k result bits (1..=64) in rows of a whole 64-bit word, band width 16 (SipHash-1-3, seeded)",
        adapter::build,
    )
};

/// The band width the README's example uses.
pub const BAND_WIDTH: u64 = 16;
/// Rows a key gets, as in the README's example: 3000 for 1000 keys.
pub const ROWS_PER_KEY: u64 = 3;
/// Bits of a row in the crate's storage: one u64 word for r up to 64.
pub const ROW_BITS: u64 = 64;

/// Whole rows of 64 bits, at least a band; k is the result bits r, 1 to 64.
pub fn layout(m: u64, k: u32) -> crate::error::Result<u64> {
    if !(1..=ROW_BITS as u32).contains(&k) {
        return Err(crate::error::Error::invalid(
            "k",
            k,
            "with --filter ribbon-filter, k is the result bits r of each key",
            "1..=64 with --filter ribbon-filter",
        ));
    }
    Ok((m / ROW_BITS).max(BAND_WIDTH) * ROW_BITS)
}

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::RibbonPeer;

#[cfg(feature = "peers")]
mod adapter {
    use std::collections::hash_map::DefaultHasher;
    use std::hash::BuildHasherDefault;

    use ribbon_filter::{Mode, Params, RibbonBuilder, RibbonFilter};

    use super::{BAND_WIDTH, ROW_BITS, ROWS_PER_KEY};
    use crate::error::{Error, Result};
    use crate::structures::interface::{Filter, FilterKind, Membership, Rate, Shape};
    use crate::structures::static_keys::StaticKeys;

    type Hasher = BuildHasherDefault<DefaultHasher>;

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        let rows = super::layout(shape.m, shape.k)? / ROW_BITS;
        Ok(Box::new(RibbonPeer::new(rows, shape.k, shape.hash_seed)?))
    }

    /// The README's configuration for n keys at ε: `3n` rows, band width 16, `r_from_fpr(ε)`.
    pub fn for_rate(_: &FilterKind, target: Rate, hash_seed: u64) -> Result<Box<dyn Filter>> {
        let r = Params::r_from_fpr(target.fpr).map_err(|e| refused("fpr", target.fpr, e))?;
        let rows = (target.n * ROWS_PER_KEY).max(BAND_WIDTH);
        Ok(Box::new(RibbonPeer::new(rows, r as u32, hash_seed)?))
    }

    fn refused(what: &'static str, value: impl ToString, error: impl std::fmt::Display) -> Error {
        Error::invalid(
            what,
            value,
            format!("ribbon-filter refuses it: {error}"),
            "what its Params::validate takes",
        )
    }

    /// The crate's builder, the keys it is given, and the filter built from them at the first
    /// query after an insert (the construction's error, if it failed).
    pub struct RibbonPeer {
        builder: RibbonBuilder<Hasher>,
        keys: StaticKeys<std::result::Result<RibbonFilter<Hasher>, String>>,
    }

    impl RibbonPeer {
        /// `Params::new(rows, 16, r, Standard).with_seed(seed).with_retry_policy(4, 1)`.
        pub fn new(rows: u64, r: u32, seed: u64) -> Result<Self> {
            let params = Params::new(
                rows as usize,
                BAND_WIDTH as usize,
                r as usize,
                Mode::Standard,
            )
            .and_then(|p| p.with_seed(seed).with_retry_policy(4, 1))
            .map_err(|e| refused("m", rows * ROW_BITS, e))?;
            let builder = RibbonBuilder::new(params, Hasher::default())
                .map_err(|e| refused("m", rows * ROW_BITS, e))?;
            Ok(RibbonPeer {
                builder,
                keys: StaticKeys::default(),
            })
        }

        /// The filter of the keys so far, distinct (the construction's input is a set).
        fn table(&self) -> &std::result::Result<RibbonFilter<Hasher>, String> {
            (self.keys).built_distinct(|keys| self.builder.build(keys).map_err(|e| e.to_string()))
        }

        fn params(&self) -> Params {
            match self.table() {
                Ok(filter) => filter.params(),
                Err(_) => self.builder.params(),
            }
        }
    }

    impl Membership for RibbonPeer {
        fn insert(&mut self, key: u64) {
            self.keys.insert(key);
        }
        fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
            self.keys.insert_many(keys);
            Ok(())
        }
        /// Present for every key when the construction failed: no false negative, and
        /// [`Membership::contains_many`] says why.
        fn contains(&self, key: u64) -> bool {
            match self.table() {
                Ok(filter) => filter.contains(&key),
                Err(_) => true,
            }
        }
        /// Refuses when the construction failed, with the crate's message.
        fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
            crate::structures::interface::check_answers(keys, answers)?;
            let filter = self.table().as_ref().map_err(|message| Error::Refused {
                filter: "ribbon-filter",
                message: message.clone(),
            })?;
            let mut scratch = filter.new_scratch();
            for (answer, key) in answers.iter_mut().zip(keys) {
                *answer = filter.contains_in(key, &mut scratch);
            }
            Ok(())
        }
    }

    impl Filter for RibbonPeer {
        /// Every stored bit: the rows are the solution, not a fill.
        fn set_bits(&self) -> u64 {
            self.memory_bits()
        }
        /// `2^-r`, whatever the load.
        fn fpr_from_bits(&self) -> f64 {
            0.5f64.powi(self.hashes() as i32)
        }
        fn fpr_exact(&self, _n: u64) -> f64 {
            self.fpr_from_bits()
        }
        /// `m · ceil(r/64)` words of 64 bits, as the crate stores them.
        fn memory_bits(&self) -> u64 {
            let params = self.params();
            params.m as u64 * params.r.div_ceil(64) as u64 * 64
        }
        fn hashes(&self) -> u32 {
            self.builder.params().r as u32
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        fn hash_name(&self) -> crate::hash::AppliedHash {
            crate::hash::AppliedHash::own("siphash-1-3")
        }
    }
}
