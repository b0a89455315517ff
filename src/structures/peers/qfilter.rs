//! The `qfilter` crate: a rank-and-select quotient filter (Pandey, Bender, Johnson and Patro,
//! "A General-Purpose Counting Filter", SIGMOD 2017), `Filter::new(n, ε)` as its README shows.
//! Each key's hash (the crate's own, foldhash with a fixed seed: it takes no seed) gives a
//! q-bit quotient and an r-bit remainder, `r = ceil(log2(1/ε))`, in `2^q` slots (a power of
//! two of at least 64, with the keys at most 95% of them); a block of 64 slots spends
//! `17 + 8r` bytes, so `r + 2.125` bits a slot. An insert whose `q + r`-bit fingerprint is
//! already stored stores nothing, and one past 95% of the slots is refused
//! (`CapacityExceeded`, counted as a failed insert). By shape: k = r and the fewest slots
//! whose blocks hold m bits (rounded up).

use crate::structures::interface::{Family, Structure};

pub static STRUCTURE: Structure = Structure {
    origin: super::ORIGIN,
    supports_delete: true,
    accepts_seed: false,
    layout: adapter::layout,
    for_rate: Some(adapter::for_rate),
    // A query reads its quotient's block and walks its run, most often within the block.
    lines_per_query: Some(|_| 2),
    family: Family::Quotient,
    fpr_exact: adapter::fpr_exact,
    ..Structure::new(
        "qfilter",
        "the qfilter crate: a rank-and-select quotient filter, r = k remainder bits and 2.125 bits of metadata a slot, with delete (its own hash, no seed)",
        adapter::build,
    )
};

#[cfg(not(feature = "peers"))]
use super::unbuilt as adapter;
#[cfg(feature = "peers")]
pub use adapter::{QFILTER_HASH, Qfilter};

#[cfg(feature = "peers")]
mod adapter {
    use crate::error::{Error, Result};
    use crate::structures::interface::{Filter, FilterKind, Membership, Rate, Shape};

    /// The hash the crate applies to keys: foldhash-portable with its fixed seed.
    pub const QFILTER_HASH: &str = "foldhash-portable";

    /// Slots a block holds.
    const BLOCK_SLOTS: u64 = 64;
    /// Fewest and most quotient bits the crate takes.
    const QUOTIENT_BITS: std::ops::RangeInclusive<u32> = 6..=48;
    /// Widest fingerprint `q + r`: the crate's hash has 64 bits.
    const MAX_FINGERPRINT: u32 = 64;

    /// Bits of `2^q` slots of r-bit remainders: `2^q/64` blocks of `17 + 8r` bytes, plus the
    /// crate's 8 bytes of padding.
    fn memory_bits(q: u32, r: u32) -> u64 {
        ((1u64 << q) / BLOCK_SLOTS * (17 + 8 * u64::from(r)) + 8) * 8
    }

    /// The fewest quotient bits whose slots hold m bits at r-bit remainders, refusing an r or
    /// an m the crate cannot take.
    fn quotient_bits(m: u64, r: u32) -> Result<u32> {
        let widest = MAX_FINGERPRINT - QUOTIENT_BITS.start();
        if !(1..=widest).contains(&r) {
            return Err(Error::invalid(
                "k",
                r,
                "with --filter qfilter, k is the remainder size in bits",
                format!("1..={widest} with --filter qfilter"),
            ));
        }
        QUOTIENT_BITS
            .clone()
            .find(|&q| memory_bits(q, r) >= m && q + r <= MAX_FINGERPRINT)
            .ok_or_else(|| {
                Error::invalid(
                    "m",
                    m,
                    "more slots than the crate's 64-bit fingerprints of k remainder bits address",
                    format!("at most {} bits at this k", memory_bits(48.min(64 - r), r)),
                )
            })
    }

    pub fn layout(m: u64, k: u32) -> Result<u64> {
        Ok(memory_bits(quotient_bits(m, k)?, k))
    }

    pub fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Qfilter::by_shape(shape.m, shape.k)?))
    }

    pub fn for_rate(_: &FilterKind, target: Rate, _: u64) -> Result<Box<dyn Filter>> {
        Ok(Box::new(Qfilter::by_rate(target.n, target.fpr)?))
    }

    /// `1 - (1 - 2^-(q+r))^s`: an absent key is reported present exactly when its `q + r`-bit
    /// fingerprint is among the stored ones, the distinct fingerprints of the s keys stored
    /// (at most 95% of the slots: the rest are refused). NaN for a shape it refuses.
    pub fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
        quotient_bits(m, k).map_or(f64::NAN, |q| rate(n.min(capacity(q)), q + k))
    }

    /// Keys `2^q` slots take: `ceil(0.95 · 2^q)`, the crate's `capacity`.
    fn capacity(q: u32) -> u64 {
        ((1u64 << q) * 19).div_ceil(20)
    }

    /// `1 - (1 - 2^-f)^s`.
    fn rate(stored: u64, fingerprint_bits: u32) -> f64 {
        let miss = (-(0.5f64.powi(fingerprint_bits as i32))).ln_1p();
        -(stored as f64 * miss).exp_m1()
    }

    /// `qfilter::Filter`, its quotient and remainder bits, and the inserts it refused.
    pub struct Qfilter {
        filter: ::qfilter::Filter,
        quotient_bits: u32,
        remainder_bits: u32,
        failed: u64,
    }

    /// The crate's error, as bloomlab's.
    fn refused(what: &'static str, value: impl ToString, error: ::qfilter::Error) -> Error {
        Error::invalid(
            what,
            value,
            format!("qfilter refuses it: {error:?}"),
            "a size whose fingerprint fits in 64 bits",
        )
    }

    impl Qfilter {
        /// `Filter::new(n, ε)`, as the README shows.
        pub fn by_rate(n: u64, fpr: f64) -> Result<Self> {
            let filter = ::qfilter::Filter::new(n, fpr).map_err(|e| refused("n", n, e))?;
            Ok(Self::of(filter))
        }

        /// The filter of [`layout`]'s slots: `Filter::new(ceil(0.95 · 2^q), 2^-r)`, whose
        /// slots are exactly `2^q` and remainders r bits.
        pub fn by_shape(m: u64, k: u32) -> Result<Self> {
            let q = quotient_bits(m, k)?;
            let filter = ::qfilter::Filter::new(capacity(q), 0.5f64.powi(k as i32))
                .map_err(|e| refused("m", m, e))?;
            Ok(Self::of(filter))
        }

        /// Reads q and r back from the crate: its fingerprint size is `q + r` and its memory
        /// that of `2^q` slots of r bits ([`memory_bits`]).
        fn of(filter: ::qfilter::Filter) -> Self {
            let fingerprint = u32::from(filter.fingerprint_size());
            let bits = filter.memory_usage() as u64 * 8;
            let quotient_bits = QUOTIENT_BITS
                .clone()
                .find(|&q| q < fingerprint && memory_bits(q, fingerprint - q) == bits)
                .unwrap_or(fingerprint / 2);
            Qfilter {
                filter,
                quotient_bits,
                remainder_bits: fingerprint - quotient_bits,
                failed: 0,
            }
        }
    }

    impl Membership for Qfilter {
        fn insert(&mut self, key: u64) {
            if self.filter.insert(key).is_err() {
                self.failed += 1;
            }
        }
        fn contains(&self, key: u64) -> bool {
            self.filter.contains(key)
        }
    }

    impl Filter for Qfilter {
        /// Bits in use: `r + 2.125` per stored fingerprint.
        fn set_bits(&self) -> u64 {
            self.filter.len() * (8 * u64::from(self.remainder_bits) + 17) / 8
        }
        /// The stored fingerprints over all `2^(q+r)`: `len / 2^(q+r)`.
        fn fpr_from_bits(&self) -> f64 {
            let fingerprint = self.quotient_bits + self.remainder_bits;
            self.filter.len() as f64 * 0.5f64.powi(fingerprint as i32)
        }
        fn fpr_exact(&self, n: u64) -> f64 {
            let stored = n.min(capacity(self.quotient_bits));
            rate(stored, self.quotient_bits + self.remainder_bits)
        }
        /// `remove`: one copy of the key's fingerprint, if stored. Two keys of the same
        /// fingerprint share one copy, so removing one removes both (the crate's semantics).
        fn delete(&mut self, key: u64) -> Result<()> {
            self.filter.remove(key);
            Ok(())
        }
        fn failed_inserts(&self) -> Option<u64> {
            Some(self.failed)
        }
        fn memory_bits(&self) -> u64 {
            self.filter.memory_usage() as u64 * 8
        }
        fn hashes(&self) -> u32 {
            self.remainder_bits
        }
        fn kind(&self) -> FilterKind {
            FilterKind::of(&super::STRUCTURE)
        }
        fn hash_name(&self) -> crate::hash::AppliedHash {
            crate::hash::AppliedHash::own(QFILTER_HASH)
        }
    }
}
