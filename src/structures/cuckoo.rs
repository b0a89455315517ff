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
    fpr_exact,
};

/// Load factor a cuckoo filter is sized for: 95% of its slots.
pub const CUCKOO_LOAD: f64 = 0.95;

/// Fingerprints per cuckoo bucket.
pub const CUCKOO_SLOTS: u64 = 4;
/// Relocations tried before an entry goes to the stash.
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
/// `1 - (1 - 1/(2^f-1))^{2n/B}` (Fan et al.'s bound `2b/2^f` at full load).
fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
    let buckets = (m / (CUCKOO_SLOTS * u64::from(k))) as f64;
    let miss = 1.0 - 1.0 / ((1u64 << k) - 1) as f64;
    -((2.0 * n as f64 / buckets) * miss.ln()).exp_m1()
}

/// A cuckoo filter: a key is stored as a nonzero k-bit fingerprint in one of two buckets,
/// `i1 = h(x)` and `i2 = (h(fingerprint) - i1) mod B`, relocating entries (up to 500 kicks) to make
/// room. Entries that still find no place go to a stash that lookups also search, so no key
/// is ever lost. Storage is one u16 per slot; `bits` counts k per slot, as a packed layout
/// would spend.
#[derive(Clone, Debug)]
pub struct CuckooFilter {
    buckets: Vec<[u16; CUCKOO_SLOTS as usize]>,
    fingerprint_bits: u32,
    bucket_hash: HashFamily,
    fingerprint_hash: HashFamily,
    stash: Vec<(u64, u16)>,
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
            stash: Vec::new(),
            kicks: rand_pcg::Pcg64::seed_from_u64(hash_seed),
        })
    }

    /// Entries that found no bucket.
    pub fn stashed(&self) -> usize {
        self.stash.len()
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
            + self.stash.len() as u64
    }
}

impl Membership for CuckooFilter {
    fn insert(&mut self, key: u64) {
        use rand::Rng;
        let (mut fingerprint, first, second) = self.locate(key);
        if self.place(first, fingerprint) || self.place(second, fingerprint) {
            return;
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
                return;
            }
        }
        self.stash.push((bucket, fingerprint));
    }
    fn contains(&self, key: u64) -> bool {
        let (fingerprint, first, second) = self.locate(key);
        self.buckets[first as usize].contains(&fingerprint)
            || self.buckets[second as usize].contains(&fingerprint)
            || self
                .stash
                .iter()
                .any(|&(b, f)| f == fingerprint && (b == first || b == second))
    }
}

impl Filter for CuckooFilter {
    /// Bits in use: k per occupied slot.
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
    /// Removes one copy of the key's fingerprint from its buckets (or the stash).
    fn delete(&mut self, key: u64) -> Result<()> {
        let (fingerprint, first, second) = self.locate(key);
        for bucket in [first, second] {
            if let Some(slot) = self.buckets[bucket as usize]
                .iter_mut()
                .find(|s| **s == fingerprint)
            {
                *slot = 0;
                return Ok(());
            }
        }
        if let Some(i) = self
            .stash
            .iter()
            .position(|&(b, f)| f == fingerprint && (b == first || b == second))
        {
            self.stash.swap_remove(i);
        }
        Ok(())
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
