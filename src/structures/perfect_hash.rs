//! A perfect-hash fingerprint table: a minimal perfect hash maps the n keys one to one onto
//! slots 0..n, and slot i holds an r-bit fingerprint of its key. It is static (built once
//! from all its keys) and spends `r + b` bits per key, r on the fingerprint and b on the
//! perfect hash: the essay's "a perfect hash table storing a log2(1/ε)-bit fingerprint per
//! key would sit exactly on the floor, and it needs the perfect hash, which itself costs
//! about 2.5 bits per element".
//!
//! The perfect hash is FMPHGO, the fingerprinting-based minimal perfect hash with group
//! optimisation of the `ph` crate (Beling, "Fingerprinting-based minimal perfect hashing
//! revisited", ACM JEA 28, 2023): [`PUBLISHED_HASH_BITS`] bits per key at its default
//! configuration, as the crate's README and the paper's table of FMPHGO configurations give
//! it ("about 2.1 bits per key").

use ph::GetSize;
use ph::fmph::GOFunction;

use super::blocks::BLOCK_SEED;
use super::interface::{Filter, FilterKind, Membership, Structure, boxed};
use super::packed::Packed;
use super::static_keys::StaticKeys;
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashFamily, HashScheme};

pub static STRUCTURE: Structure = Structure {
    is_static: true,
    layout: perfect_hash_layout,
    design: Some(design),
    // Not a bound: a key found on the perfect hash's first level (most keys) reads that
    // level's bits and group seed, the rank of its bit, and its fingerprint.
    lines_per_query: Some(|_| 3),
    // `2^-r`: an absent key lands on some slot and its fingerprint, independent of the
    // perfect hash, matches the one stored there with probability 2^-r.
    fpr_exact: |_, _, k| 0.5f64.powi(k as i32),
    ..Structure::new(
        "perfect-hash",
        "a minimal perfect hash (ph's FMPHGO) and an r-bit fingerprint per key (k = r = 1..=32): static",
        |s| boxed(PerfectHashFilter::new(s.k, s.hash, s.hash_seed)),
    )
};

/// FMPHGO's bits per key at its default configuration, as published: "about 2.1" (the `ph`
/// README; Beling 2023, the FMPHGO rows of its space table).
pub const PUBLISHED_HASH_BITS: f64 = 2.1;

/// Widest fingerprint: rates down to 2^-32.
pub const PERFECT_HASH_MAX_FINGERPRINT: u32 = 32;

/// The table is sized by its keys, so m is only checked for r = k, 1 to 32 bits.
fn perfect_hash_layout(m: u64, k: u32) -> Result<u64> {
    if !(1..=PERFECT_HASH_MAX_FINGERPRINT).contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "with --filter perfect-hash, k is the fingerprint size in bits",
            "1..=32 with --filter perfect-hash",
        ));
    }
    Ok(m)
}

/// `r = ceil(log2(1/ε))` fingerprint bits, the fewest with `2^-r <= ε`, and a nominal m of
/// `n (r + 2.1)` bits (the built table is what a measurement reports). Refuses ε below 2^-32.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let r = ((1.0 / fpr).log2().ceil() as u32).max(1);
    if r > PERFECT_HASH_MAX_FINGERPRINT {
        return Err(Error::Unsupported {
            filter: STRUCTURE.name,
            operation: "be sized below 2^-32 = 2.3e-10 (its fingerprints have at most 32 bits)",
            supported: super::FilterKind::names_where(|s| {
                s.design.is_some() && !std::ptr::eq(s, &STRUCTURE)
            }),
        });
    }
    let bits = n as f64 * (f64::from(r) + PUBLISHED_HASH_BITS);
    Ok((bits.ceil() as u64, r))
}

/// The built table: the perfect hash of the keys, and slot `h(x)` holding x's fingerprint.
struct Table {
    hash: GOFunction,
    fingerprints: Packed,
}

/// The perfect-hash fingerprint table behind the one-key-at-a-time interface: inserts
/// collect the keys and the first query after an insert builds the table from all of them
/// (sorted and deduplicated). Its memory is the perfect hash and the fingerprints; the key
/// list is the construction's input, not part of the filter a user would keep.
///
/// Invariant: every inserted key is reported present (its slot holds its own fingerprint).
/// An absent key that the perfect hash maps to no slot (it misses every level) is reported
/// absent.
pub struct PerfectHashFilter {
    fingerprint_bits: u32,
    fingerprint: HashFamily,
    keys: StaticKeys<Table>,
}

impl PerfectHashFilter {
    /// An empty table of r-bit fingerprints (1..=32), fingerprints hashed with `scheme`.
    pub fn new(r: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        perfect_hash_layout(1, r)?;
        Ok(PerfectHashFilter {
            fingerprint_bits: r,
            fingerprint: HashFamily::new(scheme, 1, 1u64 << r, hash_seed ^ BLOCK_SEED),
            keys: StaticKeys::default(),
        })
    }

    fn table(&self) -> &Table {
        self.keys.built_distinct(|keys| {
            let hash = GOFunction::from_slice(keys);
            // Distinct keys fit in memory already held, so the table of as many fields does.
            let mut fingerprints = Packed::new(keys.len() as u64, self.fingerprint_bits, "n")
                .unwrap_or_else(|e| panic!("perfect-hash table: {e}"));
            for &key in keys {
                let slot = hash.get_or_panic(&key);
                fingerprints.set(slot, self.fingerprint.index(0, key));
            }
            Table { hash, fingerprints }
        })
    }
}

impl Membership for PerfectHashFilter {
    fn insert(&mut self, key: u64) {
        self.keys.insert(key);
    }
    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        self.keys.insert_many(keys);
        Ok(())
    }
    fn contains(&self, key: u64) -> bool {
        let table = self.table();
        table
            .hash
            .get(&key)
            .is_some_and(|slot| table.fingerprints.get(slot) == self.fingerprint.index(0, key))
    }
}

impl Filter for PerfectHashFilter {
    /// Fingerprint bits of the built table (every slot holds one).
    fn set_bits(&self) -> u64 {
        self.table().fingerprints.len() * u64::from(self.fingerprint_bits)
    }
    /// `2^-r`: fingerprints are uniform and independent of the slot an absent key lands on.
    fn fpr_from_bits(&self) -> f64 {
        0.5f64.powi(self.fingerprint_bits as i32)
    }
    fn fpr_exact(&self, _n: u64) -> f64 {
        self.fpr_from_bits()
    }
    /// The fingerprints and the perfect hash, as allocated.
    fn memory_bits(&self) -> u64 {
        self.set_bits() + self.perfect_hash_bits().unwrap_or(0)
    }
    fn hashes(&self) -> u32 {
        self.fingerprint_bits
    }
    /// The perfect hash's bytes as the `ph` crate counts them (its bit array with its rank
    /// index, group seeds and level sizes).
    fn perfect_hash_bits(&self) -> Option<u64> {
        Some(self.table().hash.size_bytes_dyn() as u64 * 8)
    }
    fn kind(&self) -> FilterKind {
        FilterKind::of(&STRUCTURE)
    }
    fn hash_name(&self) -> AppliedHash {
        AppliedHash::Fingerprint {
            scheme: self.fingerprint.scheme(),
            placed_by: "ph perfect hash".into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fingerprint_outside_1_to_32_bits_is_refused() {
        assert!(PerfectHashFilter::new(0, HashScheme::MultiplyShift, 1).is_err());
        assert!(PerfectHashFilter::new(33, HashScheme::MultiplyShift, 1).is_err());
        assert!(design(1000, 1e-11).is_err());
        assert_eq!(design(1000, 0.01).unwrap().1, 7);
    }
}
