//! A cuckoo filter (Fan et al. 2014): buckets of 4 fingerprints of k bits, with delete.

use super::blocks::BLOCK_SEED;
use super::interface::{Filter, FilterKind, Membership, Origin, Structure};
use crate::error::{Error, Result};
use crate::hash::{HashFamily, HashScheme};

pub static STRUCTURE: Structure = Structure {
    name: "cuckoo",
    help: "a cuckoo filter: buckets of 4 fingerprints of k bits (k = 4..=16), with delete",
    origin: Origin::Own,
    supports_delete: true,
    is_static: false,
    accepts_seed: true,
    argument: None,
    layout: cuckoo_layout,
    build: |shape| {
        Ok(Box::new(CuckooFilter::new(
            shape.m,
            shape.k,
            shape.hash,
            shape.hash_seed,
        )?))
    },
    for_rate: None,
    design: Some(design),
    lines_per_query: Some(|_| 2),
    fpr_exact,
};

/// Load factor a cuckoo filter is sized for: 95% of its slots.
pub const CUCKOO_LOAD: f64 = 0.95;

/// Fingerprints per cuckoo bucket.
pub const CUCKOO_SLOTS: u64 = 4;
/// Relocations tried before the filter is full (Fan et al.'s and the peer libraries' bound).
pub const CUCKOO_MAX_KICKS: u32 = 500;

/// Whole buckets of 4 slots of k bits; k must be a fingerprint size of 4 to 16 bits.
fn cuckoo_layout(m: u64, k: u32) -> Result<u64> {
    if !(4..=16).contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "with --filter cuckoo, k is the fingerprint size in bits",
            "4..=16 with --filter cuckoo",
        ));
    }
    let slot_bits = CUCKOO_SLOTS * u64::from(k);
    Ok((m / slot_bits).max(1) * slot_bits)
}

/// Fingerprints of `f = ceil(log2(2·4/ε))` bits (Fan et al.'s `2b/2^f`), buckets for n keys
/// at [`CUCKOO_LOAD`]. Refuses an ε that would need more than 16 bits.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let f = ((2.0 * CUCKOO_SLOTS as f64 / fpr).log2().ceil() as u32).max(4);
    if f > 16 {
        return Err(Error::Unsupported {
            filter: STRUCTURE.name,
            operation: "be sized below 8/2^16 = 0.0122% (its fingerprints have at most 16 bits)",
            supported: super::FilterKind::names_where(|s| {
                s.design.is_some() && !std::ptr::eq(s, &STRUCTURE)
            }),
        });
    }
    let buckets = (n as f64 / (CUCKOO_SLOTS as f64 * CUCKOO_LOAD)).ceil() as u64;
    Ok((buckets * CUCKOO_SLOTS * u64::from(f), f))
}

/// With f = k fingerprint bits and B buckets, a query compares its fingerprint with the
/// ~2n/B entries of its two buckets, each matching with probability `1/(2^f - 1)`, so
/// `1 - (1 - 1/(2^f-1))^{2n/B}` (Fan et al.'s bound `2b/2^f` at full load). Beyond `4B`
/// keys the inserts fail, so n counts at most the `4B` slots.
fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
    let buckets = (m / (CUCKOO_SLOTS * u64::from(k))) as f64;
    let stored = (n as f64).min(buckets * CUCKOO_SLOTS as f64);
    let miss = 1.0 - 1.0 / ((1u64 << k) - 1) as f64;
    -((2.0 * stored / buckets) * miss.ln()).exp_m1()
}

/// A cuckoo filter: a key is stored as a nonzero k-bit fingerprint in one of two buckets,
/// `i1 = h(x)` and `i2 = (h(fingerprint) - i1) mod B`, relocating entries (at most
/// [`CUCKOO_MAX_KICKS`] kicks) to make room. As in Fan et al.'s implementation, the entry a
/// failed relocation leaves homeless goes to a single victim slot that lookups also search,
/// so no stored key is ever lost; once the victim slot is taken the filter is full, and an
/// insert that finds both buckets full stores nothing and is counted in
/// [`CuckooFilter::failed_inserts`] (no kicks: an overfilled run stays linear).
///
/// Invariant: every key whose insert succeeded is reported present (until deleted).
/// Storage is one u16 per slot; `bits` counts k per slot, as a packed layout would spend.
#[derive(Clone, Debug)]
pub struct CuckooFilter {
    buckets: Vec<[u16; CUCKOO_SLOTS as usize]>,
    fingerprint_bits: u32,
    bucket_hash: HashFamily,
    fingerprint_hash: HashFamily,
    /// The entry a failed relocation left without a bucket: (one of its buckets, fingerprint).
    victim: Option<(u64, u16)>,
    failed_inserts: u64,
    kicks: rand_pcg::Pcg64,
}

impl CuckooFilter {
    /// m bits as given by [`FilterKind::layout`], k-bit fingerprints.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        use rand::SeedableRng;
        let m = cuckoo_layout(m, k)?;
        let count = m / (CUCKOO_SLOTS * u64::from(k));
        crate::filter::check_shape(m, 1)?;
        let mut buckets = Vec::new();
        buckets.try_reserve_exact(count as usize).map_err(|_| {
            Error::invalid(
                "m",
                m,
                "cannot allocate the buckets",
                "a table that fits in memory",
            )
        })?;
        buckets.resize(count as usize, [0; CUCKOO_SLOTS as usize]);
        Ok(CuckooFilter {
            buckets,
            fingerprint_bits: k,
            bucket_hash: HashFamily::new(scheme, 1, count, hash_seed),
            fingerprint_hash: HashFamily::new(scheme, 1, (1u64 << k) - 1, hash_seed ^ BLOCK_SEED),
            victim: None,
            failed_inserts: 0,
            kicks: rand_pcg::Pcg64::seed_from_u64(hash_seed),
        })
    }

    /// Inserts that stored nothing because the filter was full.
    pub fn failed_inserts(&self) -> u64 {
        self.failed_inserts
    }

    /// Stores the key's fingerprint; false (and counted) when the filter is full and both
    /// of its buckets are too. A key inserted successfully is reported present afterwards.
    pub fn try_insert(&mut self, key: u64) -> bool {
        use rand::Rng;
        let (mut fingerprint, first, second) = self.locate(key);
        if self.place(first, fingerprint) || self.place(second, fingerprint) {
            return true;
        }
        if self.victim.is_some() {
            self.failed_inserts += 1;
            return false;
        }
        let mut bucket = if self.kicks.next_u32() & 1 == 0 {
            first
        } else {
            second
        };
        for _ in 0..CUCKOO_MAX_KICKS {
            let slot = (self.kicks.next_u32() % CUCKOO_SLOTS as u32) as usize;
            std::mem::swap(&mut fingerprint, &mut self.buckets[bucket as usize][slot]);
            bucket = self.alternate(bucket, fingerprint);
            if self.place(bucket, fingerprint) {
                return true;
            }
        }
        self.victim = Some((bucket, fingerprint));
        true
    }

    /// Whether the victim slot holds `fingerprint` for one of the buckets `first`, `second`.
    fn victim_is(&self, fingerprint: u16, first: u64, second: u64) -> bool {
        self.victim
            .is_some_and(|(b, f)| f == fingerprint && (b == first || b == second))
    }

    /// The key's nonzero fingerprint and its two buckets.
    fn locate(&self, key: u64) -> (u16, u64, u64) {
        let fingerprint = 1 + self.fingerprint_hash.index(0, key) as u16;
        let first = self.bucket_hash.index(0, key);
        (fingerprint, first, self.alternate(first, fingerprint))
    }

    /// `(H(fp) - i) mod B`: an involution for any B, so the alternate of the alternate is
    /// the bucket itself without needing a power-of-two table.
    fn alternate(&self, bucket: u64, fingerprint: u16) -> u64 {
        let count = self.buckets.len() as u64;
        let offset = ((u64::from(fingerprint).wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128
            * count as u128)
            >> 64) as u64;
        // offset and bucket both lie in 0..count, so one conditional subtraction reduces.
        let sum = offset + count - bucket;
        if sum >= count { sum - count } else { sum }
    }

    fn place(&mut self, bucket: u64, fingerprint: u16) -> bool {
        match self.buckets[bucket as usize].iter_mut().find(|s| **s == 0) {
            Some(slot) => {
                *slot = fingerprint;
                true
            }
            None => false,
        }
    }

    fn occupied(&self) -> u64 {
        self.buckets
            .iter()
            .flat_map(|b| b.iter())
            .filter(|&&s| s != 0)
            .count() as u64
    }
}

impl Membership for CuckooFilter {
    fn insert(&mut self, key: u64) {
        self.try_insert(key);
    }
    fn contains(&self, key: u64) -> bool {
        let (fingerprint, first, second) = self.locate(key);
        self.buckets[first as usize].contains(&fingerprint)
            || self.buckets[second as usize].contains(&fingerprint)
            || self.victim_is(fingerprint, first, second)
    }
}

impl Filter for CuckooFilter {
    /// Bits in use: k per occupied slot of the table (the victim slot is outside it), so
    /// the fill never exceeds 1.
    fn set_bits(&self) -> u64 {
        self.occupied() * u64::from(self.fingerprint_bits)
    }
    /// `1 - (E_b[(1 - q)^{occ(b)}])²`, `q = 1/(2^k - 1)`: the two buckets of a query are
    /// uniform and independent, and each entry in them matches with probability q.
    fn fpr_from_bits(&self) -> f64 {
        let miss = 1.0 - 1.0 / ((1u64 << self.fingerprint_bits) - 1) as f64;
        let per_bucket = self
            .buckets
            .iter()
            .map(|b| miss.powi(b.iter().filter(|&&s| s != 0).count() as i32))
            .sum::<f64>()
            / self.buckets.len() as f64;
        1.0 - per_bucket * per_bucket
    }
    /// Removes one copy of the key's fingerprint from its buckets (or the victim slot);
    /// a slot freed in a bucket takes the victim back when it fits there.
    fn delete(&mut self, key: u64) -> Result<()> {
        let (fingerprint, first, second) = self.locate(key);
        if self.victim_is(fingerprint, first, second) {
            self.victim = None;
            return Ok(());
        }
        for bucket in [first, second] {
            if let Some(slot) = self.buckets[bucket as usize]
                .iter_mut()
                .find(|s| **s == fingerprint)
            {
                *slot = 0;
                if let Some((home, victim)) = self.victim {
                    let other = self.alternate(home, victim);
                    if self.place(home, victim) || self.place(other, victim) {
                        self.victim = None;
                    }
                }
                return Ok(());
            }
        }
        Ok(())
    }
    fn failed_inserts(&self) -> Option<u64> {
        Some(self.failed_inserts)
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        fpr_exact(n, self.memory_bits(), self.fingerprint_bits)
    }
    fn memory_bits(&self) -> u64 {
        self.buckets.len() as u64 * CUCKOO_SLOTS * u64::from(self.fingerprint_bits)
    }
    fn hashes(&self) -> u32 {
        self.fingerprint_bits
    }
    fn kind(&self) -> FilterKind {
        FilterKind::of(&STRUCTURE)
    }
    fn hash_name(&self) -> String {
        self.bucket_hash.scheme().to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySource;

    /// Twice the keys a table holds at full load: the inserts beyond it fail, are counted,
    /// and every key whose insert succeeded is still found.
    #[test]
    fn an_overfilled_filter_refuses_and_counts_but_loses_no_stored_key() {
        let k = 8;
        let capacity = 4_000;
        let m = capacity * u64::from(k);
        let mut filter = CuckooFilter::new(m, k, HashScheme::MultiplyShift, 7).unwrap();
        let keys = KeySource::new(3);
        let stored: Vec<u64> = (0..2 * capacity)
            .map(|c| keys.key(c))
            .filter(|&key| filter.try_insert(key))
            .collect();
        let failed = filter.failed_inserts();
        assert!(failed > 0, "twice the capacity must overflow");
        assert_eq!(stored.len() as u64 + failed, 2 * capacity);
        assert_eq!(Filter::failed_inserts(&filter), Some(failed));
        let fill = filter.set_bits() as f64 / filter.memory_bits() as f64;
        assert!(fill <= 1.0, "fill {fill}");
        let missing = stored.iter().filter(|&&key| !filter.contains(key)).count();
        assert_eq!(missing, 0, "false negatives among stored keys");
    }

    #[test]
    fn a_victim_goes_back_into_a_freed_slot() {
        let k = 8;
        let mut filter = CuckooFilter::new(64 * u64::from(k), k, HashScheme::MultiplyShift, 1).unwrap();
        let keys = KeySource::new(5);
        let stored: Vec<u64> = (0..200)
            .map(|c| keys.key(c))
            .filter(|&key| filter.try_insert(key))
            .collect();
        assert!(filter.victim.is_some(), "the table of 64 slots overflowed");
        for &key in &stored[..stored.len() / 2] {
            filter.delete(key).unwrap();
        }
        assert!(filter.victim.is_none(), "half the slots freed take the victim back");
        let missing = stored[stored.len() / 2..]
            .iter()
            .filter(|&&key| !filter.contains(key))
            .count();
        assert_eq!(missing, 0);
    }
}
