//! A cuckoo filter (Fan, Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter: Practically
//! Better Than Bloom", CoNEXT 2014): buckets of b = 2, 4 or 8 fingerprints of k bits, with
//! delete. `cuckoo` has 4 slots a bucket, the authors' choice; `cuckoo-2` and `cuckoo-8` are
//! the same design with 2 and 8 ([`descriptor`]).

use super::blocks::BLOCK_SEED;
use super::interface::{Family, Filter, FilterKind, Membership, Structure, boxed};
use super::packed::Packed;
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashFamily, HashScheme};

pub static STRUCTURE: Structure = descriptor::<4>(
    "cuckoo",
    "a cuckoo filter: buckets of 4 fingerprints of k bits (k = 4..=32), with delete",
);

/// The cuckoo filter of B slots a bucket (2, 4 or 8), sized at its load [`load_for`].
pub const fn descriptor<const B: u64>(name: &'static str, help: &'static str) -> Structure {
    Structure {
        supports_delete: true,
        layout: layout::<B>,
        design: Some(design::<B>),
        lines_per_query: Some(|_| 2),
        family: Family::Cuckoo,
        fpr_exact: fpr_exact::<B>,
        ..Structure::new(name, help, |s| {
            let kind = s.kind.clone();
            let filter = CuckooFilter::with_buckets(B, kind, s.m, s.k, s.hash, s.hash_seed);
            boxed(filter)
        })
    }
}

/// Load factor a cuckoo filter of 4-slot buckets is sized for: 95% of its slots.
pub const CUCKOO_LOAD: f64 = 0.95;

/// The load a cuckoo filter of b slots a bucket is sized for: the load Fan et al. measure it
/// to reach with 500 kicks (section 5.1, "b = 2, 4 and 8 ... 84%, 95% and 98%").
pub const fn load_for(slots: u64) -> f64 {
    match slots {
        2 => 0.84,
        4 => CUCKOO_LOAD,
        _ => 0.98,
    }
}

/// Fingerprints per bucket of `cuckoo`.
pub const CUCKOO_SLOTS: u64 = 4;
/// Relocations tried before the filter is full (Fan et al.'s and the peer libraries' bound).
pub const CUCKOO_MAX_KICKS: u32 = 500;

/// Widest fingerprint: about 2b/2^32 (1.9·10^-9 at b = 4) is the lowest rate it designs for.
pub const CUCKOO_MAX_FINGERPRINT: u32 = 32;

/// The registered name of the cuckoo filter of B slots a bucket.
const fn name_of(slots: u64) -> &'static str {
    match slots {
        2 => "cuckoo-2",
        4 => "cuckoo",
        _ => "cuckoo-8",
    }
}

/// Whole buckets of B slots of k bits; k must be a fingerprint size of 4 to 32 bits.
fn layout<const B: u64>(m: u64, k: u32) -> Result<u64> {
    if !(4..=CUCKOO_MAX_FINGERPRINT).contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "with --filter cuckoo, k is the fingerprint size in bits",
            "4..=32 with --filter cuckoo, cuckoo-2 and cuckoo-8",
        ));
    }
    let slot_bits = B * u64::from(k);
    Ok((m / slot_bits).max(1) * slot_bits)
}

/// Buckets for n keys at the load of B-slot buckets ([`load_for`]) and the fewest
/// fingerprint bits f whose exact rate ([`fpr_exact`]) is at most ε, about
/// `log2(2bα/ε)` (Fan et al.'s `2b/2^f` at load α). Refuses an ε that would need more than
/// [`CUCKOO_MAX_FINGERPRINT`] bits.
fn design<const B: u64>(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let buckets = (n as f64 / (B as f64 * load_for(B))).ceil().max(1.0) as u64;
    let m = |f: u32| buckets * B * u64::from(f);
    let Some(f) = (4..=CUCKOO_MAX_FINGERPRINT).find(|&f| fpr_exact::<B>(n, m(f), f) <= fpr) else {
        let name = name_of(B);
        return Err(Error::Unsupported {
            filter: name,
            operation: "be sized below about 2b/2^32 (its fingerprints have at most 32 bits)",
            supported: super::FilterKind::names_where(|s| s.design.is_some() && s.name != name),
        });
    };
    Ok((m(f), f))
}

/// With f = k fingerprint bits, B buckets and s stored keys: an absent key with fingerprint
/// v (uniform over the `2^f - 1` nonzero values) and buckets `{a, H(v) - a}` is reported
/// present exactly when some stored key has fingerprint v and a first bucket in that pair
/// (every such key sits in one of the two, and no other key can hold v there), each of the
/// s keys independently with probability `2/(B (2^f - 1))`: `1 - (1 - 2/(B (2^f - 1)))^s`.
/// Fan et al.'s `1 - (1 - 1/2^f)^{2b}` (section 4, at full load) counts the `2s/B` entries
/// of the two buckets as independent chances of `2^-f` instead, which overstates the rate
/// where `2^-f` is not small (at 4 bits and load 1/2 by 3%, 6.7 standard errors of 2·10^5
/// queries); both tend to `1 - e^{-2s/(B 2^f)}` as f grows. The pairs with `a = H(v) - a`
/// (a fraction about 1/B) are treated as two buckets. Beyond `4B` keys the inserts fail,
/// so s counts at most the `4B` slots.
fn fpr_exact<const B: u64>(n: u64, m: u64, k: u32) -> f64 {
    let buckets = (m / (B * u64::from(k))) as f64;
    let stored = (n as f64).min(buckets * B as f64);
    stored_rate(stored, buckets, k)
}

/// `1 - (1 - 2/(B (2^k - 1)))^s` for s stored keys in B buckets ([`fpr_exact`]'s form).
fn stored_rate(stored: f64, buckets: f64, k: u32) -> f64 {
    let chance = 2.0 / (buckets * ((1u64 << k) - 1) as f64);
    -(stored * (-chance).ln_1p()).exp_m1()
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
    /// Slots a bucket: b = 2, 4 or 8.
    per_bucket: u64,
    kind: FilterKind,
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
    /// m bits as given by [`FilterKind::layout`], k-bit fingerprints, 4 slots a bucket.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        Self::with_buckets(CUCKOO_SLOTS, FilterKind::of(&STRUCTURE), m, k, scheme, hash_seed)
    }

    /// The filter of the registered `kind` with `per_bucket` slots a bucket (2, 4 or 8).
    pub fn with_buckets(
        per_bucket: u64,
        kind: FilterKind,
        m: u64,
        k: u32,
        scheme: HashScheme,
        hash_seed: u64,
    ) -> Result<Self> {
        use rand::SeedableRng;
        let bucket_bits = per_bucket * u64::from(k);
        let count = (m / bucket_bits).max(1);
        crate::structures::bloom::check_shape(count * bucket_bits, 1)?;
        Ok(CuckooFilter {
            slots: Packed::new(count * per_bucket, k, "m")?,
            per_bucket,
            kind,
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
            let slot = u64::from(self.kicks.next_u32()) % self.per_bucket;
            let index = bucket * self.per_bucket + slot;
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
    fn bucket(&self, bucket: u64) -> std::ops::Range<u64> {
        bucket * self.per_bucket..(bucket + 1) * self.per_bucket
    }

    /// The first slot of `bucket` holding `fingerprint` (0: the first empty one).
    fn find(&self, bucket: u64, fingerprint: u64) -> Option<u64> {
        self.bucket(bucket).find(|&i| self.slots.get(i) == fingerprint)
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
    /// The exact rate of this table: the share of (bucket a, fingerprint v) queries that find
    /// v in a or in `H(v) - a` (or in the victim slot), over the `B (2^k - 1)` equally likely
    /// ones. Each stored entry (b, v) answers the queries (b, v) and (`H(v) - b`, v); the
    /// distinct ones are counted.
    fn fpr_from_bits(&self) -> f64 {
        let entry = |bucket: u64, value: u64| [(bucket, value), (self.alternate(bucket, value), value)];
        let mut answered: Vec<(u64, u64)> = (0..self.slots.len())
            .filter_map(|i| {
                let value = self.slots.get(i);
                (value != 0).then(|| entry(i / self.per_bucket, value))
            })
            .chain(self.victim.map(|(bucket, value)| entry(bucket, value)))
            .flatten()
            .collect();
        answered.sort_unstable();
        answered.dedup();
        answered.len() as f64 / (self.bucket_count as f64 * ((1u64 << self.fingerprint_bits) - 1) as f64)
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
    /// [`fpr_exact`] for the keys stored: n less the inserts that failed.
    fn fpr_exact(&self, n: u64) -> f64 {
        let stored = n.saturating_sub(self.failed_inserts) as f64;
        let buckets = self.bucket_count as f64;
        stored_rate(stored.min(buckets * self.per_bucket as f64), buckets, self.fingerprint_bits)
    }
    fn memory_bits(&self) -> u64 {
        self.bucket_count * self.per_bucket * u64::from(self.fingerprint_bits)
    }
    fn hashes(&self) -> u32 {
        self.fingerprint_bits
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    fn hash_name(&self) -> AppliedHash {
        self.bucket_hash.scheme().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySource;

    /// Fan et al. 2014, section 5.1: a cuckoo filter of b-slot buckets at load α spends
    /// `(log2(1/ε) + log2(2b))/α` bits per item ("(log2(1/ε) + 3)/α" for b = 4); sizing to
    /// the exact rate `2bα/2^f` saves at most `log2(1/α)` bits a slot of it, whole
    /// fingerprint bits add at most one. Checked for b = 2, 4 and 8 at their loads.
    #[test]
    fn its_space_is_the_published_bits_per_item() {
        fn check<const B: u64>() {
            let alpha = load_for(B);
            for fpr in [1e-2, 1e-4, 1e-6, 1e-8] {
                let (m, f) = design::<B>(1_000_000, fpr).unwrap();
                let bits = m as f64 / 1e6;
                let published = ((1.0 / fpr).log2() + (2.0 * B as f64).log2()) / alpha;
                let low = published + alpha.log2() / alpha - 1e-3;
                assert!(
                    bits >= low && bits <= published + 1.0 / alpha,
                    "b = {B}, ε {fpr}: {bits} bits per key against {published}"
                );
                assert!(fpr_exact::<B>(1_000_000, m, f) <= fpr, "b = {B}, ε {fpr}");
            }
        }
        check::<2>();
        check::<4>();
        check::<8>();
    }

    /// Filled to the load it is sized for, a filter of 2, 4 or 8 slots a bucket stores all
    /// but at most 0.1% of the keys (Fan et al.'s loads are where a first insert fails with
    /// 500 kicks, section 5.1; the victim slot takes that one) and finds every key it stored.
    #[test]
    fn each_bucket_size_holds_its_design_load() {
        for (per_bucket, fpr) in [(2, 1e-3), (4, 1e-3), (8, 1e-3)] {
            let n = 20_000;
            let kind = FilterKind::of(&STRUCTURE);
            let (m, k) = match per_bucket {
                2 => design::<2>(n, fpr),
                4 => design::<4>(n, fpr),
                _ => design::<8>(n, fpr),
            }
            .unwrap();
            let mut filter =
                CuckooFilter::with_buckets(per_bucket, kind, m, k, HashScheme::MultiplyShift, 3)
                    .unwrap();
            let keys = KeySource::new(11);
            let stored: Vec<u64> = (0..n)
                .map(|c| keys.key(c))
                .filter(|&key| filter.try_insert(key))
                .collect();
            assert!(filter.failed_inserts() <= n / 1000, "b = {per_bucket}");
            assert!(stored.iter().all(|&key| filter.contains(key)), "b = {per_bucket}");
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
