//! Adapters for the Bloom-filter crates people ship, behind the same [`Filter`] interface as
//! bloomlab's own structures (feature `peers`). Each is built two ways: by shape (m bits, k
//! hashes), for the experiments' `--filter NAME`, and by target rate and n, the way its README
//! tells a user to, for `audit`.
//!
//! - `fastbloom`: `BloomFilter::with_false_pos(ε).seed(s).expected_items(n)`, or
//!   `with_num_bits(m).seed(s).hashes(k)`; m bits (a whole number of u64 words), k probes by
//!   double hashing of one SipHash-1-3 value. Seeded.
//! - `bloomfilter`: `Bloom::new_for_fp_rate_with_seed(n, ε, seed)` (the README's
//!   `new_for_fp_rate` with the seed it otherwise draws from the OS), or
//!   `new_with_seed(m/8 bytes, items, seed)` with `items` chosen so that the crate's
//!   `k = round(m/items · ln 2)` is the k asked for; two SipHash-1-3 keys. Seeded.
//! - `growable-bloom-filter`: `GrowableBloom::new(ε, n)`: a scalable filter whose j-th
//!   sub-filter (created when the previous ones hold their capacity) holds `n·2^j` keys at
//!   rate `ε·0.8515625^j`, as a partitioned filter of `ceil(log2(1/ε_j))` slices of
//!   `ceil(n_j / ln 2)` bits. By shape: `ε = 2^-k` and the largest n whose first sub-filter
//!   fits in m bits. Hashes with xxh3 and a fixed key: it takes no seed, so every run is the
//!   same and re-seeding changes nothing.

use crate::error::Result;
use crate::filter::check_shape;
use crate::structures::{Filter, FilterKind};

mod bloomfilter;
mod fastbloom;
mod growable;
mod inspector;

pub use bloomfilter::Bloomfilter;
pub use fastbloom::Fastbloom;
pub use growable::{GROWABLE_GROWTH, GROWABLE_TIGHTENING, Growable, SubFilter};
pub use inspector::InspectedSub;

/// The crate's seed from bloomlab's: the u64 in the first eight bytes.
pub(super) fn seed_bytes<const N: usize>(seed: u64) -> [u8; N] {
    let mut bytes = [0u8; N];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes
}

/// A peer filter of m bits and k hashes (as [`FilterKind::layout`] gives them).
pub fn build(kind: FilterKind, m: u64, k: u32, seed: u64) -> Result<Box<dyn Filter>> {
    Ok(match kind {
        FilterKind::Fastbloom => Box::new(Fastbloom::by_shape(m, k, seed)?),
        FilterKind::Bloomfilter => Box::new(Bloomfilter::by_shape(m, k, seed)?),
        FilterKind::Growable => Box::new(Growable::by_shape(m, k)?),
        _ => unreachable!("{kind} is not a peer"),
    })
}

/// A peer filter for n keys at rate ε, configured as the crate's README shows.
pub fn by_rate(kind: FilterKind, n: u64, fpr: f64, seed: u64) -> Result<Box<dyn Filter>> {
    Ok(match kind {
        FilterKind::Fastbloom => Box::new(Fastbloom::by_rate(n, fpr, seed)),
        FilterKind::Bloomfilter => Box::new(Bloomfilter::by_rate(n, fpr, seed)?),
        FilterKind::Growable => Box::new(Growable::by_rate(n, fpr)),
        _ => unreachable!("{kind} is not a peer"),
    })
}

/// The bits a peer allocates for a request of m bits and k hashes; refuses a k it cannot take.
pub fn layout(kind: FilterKind, m: u64, k: u32) -> Result<u64> {
    check_shape(m, k)?;
    match kind {
        FilterKind::Fastbloom => Ok(m.div_ceil(64) * 64),
        FilterKind::Bloomfilter => Ok(Bloomfilter::by_shape(m, k, 0)?.memory_bits()),
        FilterKind::Growable => Growable::layout(m, k),
        _ => unreachable!("{kind} is not a peer"),
    }
}
