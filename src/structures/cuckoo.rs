//! A cuckoo filter (Fan et al. 2014): buckets of 4 fingerprints of k bits, with delete.

use super::blocks::BLOCK_SEED;
use super::interface::{Filter, FilterKind, Family, Membership, Origin, Structure};
use super::packed::Packed;
use crate::error::{Error, Result};
use crate::hash::{HashFamily, HashScheme};

pub static STRUCTURE: Structure = Structure {
    name: "cuckoo",
    help: "a cuckoo filter: buckets of 4 fingerprints of k bits (k = 4..=32), with delete",
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
    ks: &[],
    takes_math: false,
    family: Family::Alone,
    fpr_exact,
};

/// Load factor a cuckoo filter is sized for: 95% of its slots.
pub const CUCKOO_LOAD: f64 = 0.95;

/// Fingerprints per cuckoo bucket.
pub const CUCKOO_SLOTS: u64 = 4;
/// Relocations tried before the filter is full (Fan et al.'s and the peer libraries' bound).
pub const CUCKOO_MAX_KICKS: u32 = 500;

/// Widest fingerprint: 8/2^32 ≈ 1.9·10^-9 is the lowest rate it designs for.
pub const CUCKOO_MAX_FINGERPRINT: u32 = 32;

/// Whole buckets of 4 slots of k bits; k must be a fingerprint size of 4 to 32 bits.
fn cuckoo_layout(m: u64, k: u32) -> Result<u64> {
    if !(4..=CUCKOO_MAX_FINGERPRINT).contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "with --filter cuckoo, k is the fingerprint size in bits",
            "4..=32 with --filter cuckoo",
        ));
    }
    let slot_bits = CUCKOO_SLOTS * u64::from(k);
    Ok((m / slot_bits).max(1) * slot_bits)
}

/// Fingerprints of `f = ceil(log2(2·4/ε))` bits (Fan et al.'s `2b/2^f`), buckets for n keys
/// at [`CUCKOO_LOAD`]. Refuses an ε that would need more than [`CUCKOO_MAX_FINGERPRINT`] bits.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let f = ((2.0 * CUCKOO_SLOTS as f64 / fpr).log2().ceil() as u32).max(4);
    if f > CUCKOO_MAX_FINGERPRINT {
        return Err(Error::Unsupported {
            filter: STRUCTURE.name,
            operation: "be sized below 8/2^32 = 1.9e-9 (its fingerprints have at most 32 bits)",
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
    -((2.0 * stored / buckets) * log_miss(k)).exp_m1()
}

/// `ln(1 - q)`, `q = 1/(2^k - 1)`, without the cancellation of `1 - q` at 32 bits.
fn log_miss(k: u32) -> f64 {
    (-1.0 / ((1u64 << k) - 1) as f64).ln_1p()
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
/// Storage is k bits per slot, packed ([`Packed`]); slot `4b + j` is slot j of bucket b and
/// 0 marks an empty slot.
#[derive(Clone, Debug)]
pub struct CuckooFilter {
    slots: Packed,
    bucket_count: u64,
    fingerprint_bits: u32,
    bucket_hash: HashFamily,
    fingerprint_hash: HashFamily,
    /// The entry a failed relocation left without a bucket: (one of its buckets, fingerprint).
    victim: Option<(u64, u64)>,
    failed_inserts: u64,
    kicks: rand_pcg::Pcg64,
}

impl CuckooFilter {
    /// m bits as given by [`FilterKind::layout`], k-bit fingerprints.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        use rand::SeedableRng;
        let m = cuckoo_layout(m, k)?;
        let count = m / (CUCKOO_SLOTS * u64::from(k));
        crate::structures::bloom::check_shape(m, 1)?;
        Ok(CuckooFilter {
            slots: Packed::new(count * CUCKOO_SLOTS, k, "m")?,
            bucket_count: count,
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
            let index = bucket * CUCKOO_SLOTS + slot as u64;
            let evicted = self.slots.get(index);
            self.slots.set(index, fingerprint);
            fingerprint = evicted;
            bucket = self.alternate(bucket, fingerprint);
            if self.place(bucket, fingerprint) {
                return true;
            }
        }
        self.victim = Some((bucket, fingerprint));
        true
    }

    /// Whether the victim slot holds `fingerprint` for one of the buckets `first`, `second`.
    fn victim_is(&self, fingerprint: u64, first: u64, second: u64) -> bool {
        self.victim
            .is_some_and(|(b, f)| f == fingerprint && (b == first || b == second))
    }

    /// The key's nonzero fingerprint and its two buckets.
    fn locate(&self, key: u64) -> (u64, u64, u64) {
        let fingerprint = 1 + self.fingerprint_hash.index(0, key);
        let first = self.bucket_hash.index(0, key);
        (fingerprint, first, self.alternate(first, fingerprint))
    }

    /// `(H(fp) - i) mod B`: an involution for any B, so the alternate of the alternate is
    /// the bucket itself without needing a power-of-two table.
    fn alternate(&self, bucket: u64, fingerprint: u64) -> u64 {
        let count = self.bucket_count;
        let offset = ((fingerprint.wrapping_mul(0x9e37_79b9_7f4a_7c15) as u128
            * count as u128)
            >> 64) as u64;
        // offset and bucket both lie in 0..count, so one conditional subtraction reduces.
        let sum = offset + count - bucket;
        if sum >= count { sum - count } else { sum }
    }

    /// The slot indexes of a bucket.
    fn bucket(bucket: u64) -> std::ops::Range<u64> {
        bucket * CUCKOO_SLOTS..(bucket + 1) * CUCKOO_SLOTS
    }

    /// The first slot of `bucket` holding `fingerprint` (0: the first empty one).
    fn find(&self, bucket: u64, fingerprint: u64) -> Option<u64> {
        Self::bucket(bucket).find(|&i| self.slots.get(i) == fingerprint)
    }

    fn place(&mut self, bucket: u64, fingerprint: u64) -> bool {
        match self.find(bucket, 0) {
            Some(slot) => {
                self.slots.set(slot, fingerprint);
                true
            }
            None => false,
        }
    }

    /// Occupied slots of the bucket.
    fn load(&self, bucket: u64) -> i32 {
        Self::bucket(bucket).filter(|&i| self.slots.get(i) != 0).count() as i32
    }

    fn occupied(&self) -> u64 {
        (0..self.slots.len()).filter(|&i| self.slots.get(i) != 0).count() as u64
    }
}

impl Membership for CuckooFilter {
    fn insert(&mut self, key: u64) {
        self.try_insert(key);
    }
    fn contains(&self, key: u64) -> bool {
        let (fingerprint, first, second) = self.locate(key);
        self.find(first, fingerprint).is_some()
            || self.find(second, fingerprint).is_some()
            || self.victim_is(fingerprint, first, second)
    }
}

impl Filter for CuckooFilter {
    /// Bits in use: k per occupied slot of the table (the victim slot is outside it), so
    /// the fill never exceeds 1.
    fn set_bits(&self) -> u64 {
        self.occupied() * u64::from(self.fingerprint_bits)
    }
    /// `1 - (1 - h)² = 2h - h²` with `h = E_b[1 - (1 - q)^{occ(b)}]`, `q = 1/(2^k - 1)`: the
    /// two buckets of a query are uniform and independent, and each entry in them matches
    /// with probability q (h kept as a small number so that 32-bit fingerprints keep digits).
    fn fpr_from_bits(&self) -> f64 {
        let log_miss = log_miss(self.fingerprint_bits);
        let hit = (0..self.bucket_count)
            .map(|b| -(f64::from(self.load(b)) * log_miss).exp_m1())
            .sum::<f64>()
            / self.bucket_count as f64;
        2.0 * hit - hit * hit
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
            if let Some(slot) = self.find(bucket, fingerprint) {
                self.slots.set(slot, 0);
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
        self.bucket_count * CUCKOO_SLOTS * u64::from(self.fingerprint_bits)
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

    /// Fan et al. 2014, section 5.1: a cuckoo filter spends `(log2(1/ε) + 3)/α` bits per item
    /// for 4-slot buckets at load α (their "(log2(1/ε) + 3)/α"); whole fingerprint bits add at
    /// most 1/α to it.
    #[test]
    fn its_space_is_the_published_bits_per_item() {
        for fpr in [1e-2, 1e-4, 1e-6, 1e-8] {
            let (m, f) = design(1_000_000, fpr).unwrap();
            let bits = m as f64 / 1e6;
            let published = ((1.0 / fpr).log2() + 3.0) / CUCKOO_LOAD;
            assert!(
                bits >= published - 1e-3 && bits <= published + 1.0 / CUCKOO_LOAD,
                "ε {fpr}: {bits} bits per key against {published}"
            );
            assert!(fpr_exact(1_000_000, m, f) <= fpr, "ε {fpr}");
        }
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
