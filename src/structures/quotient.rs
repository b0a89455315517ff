//! A quotient filter (Bender, Farach-Colton, Johnson, Kraner, Kuszmaul, Medjedovic, Montes,
//! Shetty, Spillane and Zadok, "Don't thrash: how to cache your hash on flash", PVLDB 2012):
//! a key's hash splits into a quotient, its canonical slot, and an r-bit remainder stored
//! with three metadata bits (occupied, continuation, shifted) in one slot; runs of equal
//! quotients lie in order, shifted right past their canonical slots as linear probing
//! would. Any remainder width 1..=32, and delete.

use super::blocks::BLOCK_SEED;
use super::interface::{Family, Filter, FilterKind, Membership, Structure, boxed};
use super::packed::Packed;
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashFamily, HashScheme};
use crate::keys::KeySpec;

pub static STRUCTURE: Structure = Structure {
    supports_delete: true,
    layout: quotient_layout,
    design: Some(design),
    // Not a bound: a query walks its cluster, `1/(1-α)` slots of r + 3 bits on average at
    // load α (linear probing), which at α = 0.9 and r ≤ 32 spans at most two lines.
    lines_per_query: Some(|_| 2),
    family: Family::Quotient,
    fpr_exact,
    ..Structure::new(
        "quotient",
        "a quotient filter: slots of an r-bit remainder and 3 metadata bits (k = r = 1..=32), with delete",
        |s| boxed(QuotientFilter::new(s.m, s.k, s.hash, s.hash_seed)),
    )
};

/// Keys per quotient a quotient filter is sized for. Bender et al. measure up to 90% full;
/// the clusters a query walks grow as `1/(1-α)²` (linear probing), so higher loads trade
/// time for at most 5% of space.
pub const QUOTIENT_LOAD: f64 = 0.9;
/// Metadata bits per slot: occupied, continuation, shifted.
pub const QUOTIENT_META: u32 = 3;
/// Widest remainder: rates down to about 2^-32.
pub const QUOTIENT_MAX_REMAINDER: u32 = 32;

/// Seconds per slot an operation walks or re-lays in a stretch grown by repeated keys: a fit
/// to whole runs with `--keys strided:2^62` (docs/PERFORMANCE.md).
const SECONDS_PER_STRETCH_SLOT: f64 = 6e-9;

/// Seconds `operations` inserts and queries of `filter` spend in stretches grown by repeated
/// keys, when the first n of `keys` hold only `distinct` distinct ones: each key's run has
/// `r = n/distinct` entries, the runs push one another into stretches of at least r slots,
/// and every insert re-lays (every query into it walks) about half of one:
/// `operations · r/2` slots. Zero for another structure, or when no key repeats (random
/// keys: the `1/(1-α)²` slots of a cluster are in the per-key cost).
pub fn repeated_keys_seconds(filter: &FilterKind, keys: &KeySpec, n: u64, operations: f64) -> f64 {
    let duplicates = keys.duplicates("keys", n).ok().flatten().unwrap_or(0);
    let distinct = n - duplicates.min(n);
    if !std::ptr::eq(filter.structure(), &STRUCTURE) || distinct == 0 || distinct >= n {
        return 0.0;
    }
    let run = n as f64 / distinct as f64;
    operations * run / 2.0 * SECONDS_PER_STRETCH_SLOT
}

const OCCUPIED: u64 = 1;
const CONTINUATION: u64 = 2;
const SHIFTED: u64 = 4;
const METADATA: u64 = 7;

/// Whole slots of `r + 3` bits, at least two; r = k must be 1 to 32 bits.
fn quotient_layout(m: u64, k: u32) -> Result<u64> {
    if !(1..=QUOTIENT_MAX_REMAINDER).contains(&k) {
        return Err(Error::invalid(
            "k",
            k,
            "with --filter quotient, k is the remainder size in bits",
            "1..=32 with --filter quotient",
        ));
    }
    let slot_bits = u64::from(k + QUOTIENT_META);
    Ok((m / slot_bits).max(2) * slot_bits)
}

/// Quotients of a table of `slots` slots: all but `isqrt(slots)`, which are spill-over room
/// at the end for the runs of the last quotients (the table does not wrap around).
fn quotients(slots: u64) -> u64 {
    slots - slots.isqrt()
}

/// `n/α` quotients ([`QUOTIENT_LOAD`]) and the narrowest remainder whose exact rate is at
/// most ε: Bender et al.'s `1 - e^{-α/2^r} ≤ α·2^-r`, so `r ≈ log2(α/ε)` and
/// `(r + 3)/α` bits per key. Refuses an ε that would need more than 32 bits.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let wanted = (n as f64 / QUOTIENT_LOAD).ceil().max(1.0) as u64;
    let mut slots = wanted + wanted.isqrt();
    while quotients(slots) < wanted {
        slots += 1;
    }
    while slots > 2 && quotients(slots - 1) >= wanted {
        slots -= 1;
    }
    let slots = slots.max(2);
    let r = (1..=QUOTIENT_MAX_REMAINDER)
        .find(|&r| fpr_exact(n, slots * u64::from(r + QUOTIENT_META), r) <= fpr)
        .ok_or_else(|| Error::Unsupported {
            filter: STRUCTURE.name,
            operation: "be sized below about 2^-32 (its remainders have at most 32 bits)",
            supported: super::FilterKind::names_where(|s| {
                s.design.is_some() && !std::ptr::eq(s, &STRUCTURE)
            }),
        })?;
    Ok((slots * u64::from(r + QUOTIENT_META), r))
}

/// A query is a false positive when some stored key has its quotient (one of Q) and its
/// remainder (one of 2^r), each key independently: `1 - (1 - 1/(Q·2^r))^n` (Bender et al.,
/// section 2: `1 - e^{-α/2^r}` with α = n/Q).
fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
    let q = quotients(m / u64::from(k + QUOTIENT_META)) as f64;
    let cell = -1.0 / (q * (1u64 << k) as f64);
    -(n as f64 * cell.ln_1p()).exp_m1()
}

/// A quotient filter with `r = k` bit remainders. Slot values pack `remainder << 3` with the
/// metadata bits; a slot is empty exactly when its metadata bits are all zero. Inserts and
/// deletes decode the stretch of nonempty slots around the key's quotient, change one entry
/// and lay the stretch out again (each run at its quotient or right after the run before):
/// the layout Bender et al.'s shifting inserts produce. An insert whose stretch would run
/// past the last slot stores nothing and is counted in [`QuotientFilter::failed_inserts`].
///
/// Invariants: the runs of a stretch appear in the order of their quotients, which are the
/// set occupied bits of the stretch; an entry never lies before its quotient. An insert
/// costs its stretch's length, a query its cluster's: keys that repeat make both about
/// n/distinct ([`repeated_keys_seconds`], charged by the estimates).
#[derive(Clone, Debug)]
pub struct QuotientFilter {
    slots: Packed,
    quotient_count: u64,
    remainder_bits: u32,
    quotient_hash: HashFamily,
    remainder_hash: HashFamily,
    stored: u64,
    failed_inserts: u64,
    /// The entries (quotient, remainder) of the stretch being rewritten.
    scratch: Vec<(u64, u64)>,
}

impl QuotientFilter {
    /// m bits as given by [`FilterKind::layout`], k-bit remainders.
    pub fn new(m: u64, k: u32, scheme: HashScheme, hash_seed: u64) -> Result<Self> {
        let m = quotient_layout(m, k)?;
        crate::structures::bloom::check_shape(m, 1)?;
        let slots = m / u64::from(k + QUOTIENT_META);
        let quotient_count = quotients(slots);
        Ok(QuotientFilter {
            slots: Packed::new(slots, k + QUOTIENT_META, "m")?,
            quotient_count,
            remainder_bits: k,
            quotient_hash: HashFamily::new(scheme, 1, quotient_count, hash_seed),
            remainder_hash: HashFamily::new(scheme, 1, 1u64 << k, hash_seed ^ BLOCK_SEED),
            stored: 0,
            failed_inserts: 0,
            scratch: Vec::new(),
        })
    }

    /// Inserts that stored nothing because the table had no room after the key's quotient.
    pub fn failed_inserts(&self) -> u64 {
        self.failed_inserts
    }

    fn split(&self, key: u64) -> (u64, u64) {
        (
            self.quotient_hash.index(0, key),
            self.remainder_hash.index(0, key),
        )
    }

    fn meta(&self, slot: u64) -> u64 {
        self.slots.get(slot) & METADATA
    }

    fn is_empty(&self, slot: u64) -> bool {
        self.meta(slot) == 0
    }

    /// The maximal stretch of nonempty slots holding `slot` (empty at an empty slot).
    fn stretch(&self, slot: u64) -> (u64, u64) {
        if self.is_empty(slot) {
            return (slot, slot);
        }
        let mut start = slot;
        while start > 0 && !self.is_empty(start - 1) {
            start -= 1;
        }
        let mut end = slot + 1;
        while end < self.slots.len() && !self.is_empty(end) {
            end += 1;
        }
        (start, end)
    }

    /// The entries of the stretch `[start, end)` into `scratch`, in slot order: each run
    /// takes the next set occupied bit as its quotient.
    fn decode(&mut self, start: u64, end: u64) {
        self.scratch.clear();
        let mut quotient = start;
        for slot in start..end {
            let value = self.slots.get(slot);
            if value & CONTINUATION == 0 {
                if slot > start {
                    quotient += 1;
                }
                while self.meta(quotient) & OCCUPIED == 0 {
                    quotient += 1;
                }
            }
            self.scratch.push((quotient, value >> QUOTIENT_META));
        }
    }

    /// The slot after the last entry of `scratch` laid out from `start`.
    fn layout_end(&self, start: u64) -> u64 {
        let mut slot = start;
        for &(quotient, _) in &self.scratch {
            slot = slot.max(quotient) + 1;
        }
        slot
    }

    /// Clears `[start, end)` and lays `scratch` out from `start`.
    fn encode(&mut self, start: u64, end: u64) {
        for slot in start..end {
            self.slots.set(slot, 0);
        }
        let mut slot = start;
        let mut previous = None;
        for &(quotient, remainder) in &self.scratch {
            let continuation = previous == Some(quotient);
            if !continuation {
                slot = slot.max(quotient);
            }
            let mut meta = self.meta(slot) & OCCUPIED;
            if continuation {
                meta |= CONTINUATION;
            }
            if slot != quotient {
                meta |= SHIFTED;
            }
            self.slots.set(slot, (remainder << QUOTIENT_META) | meta);
            let canonical = self.slots.get(quotient);
            self.slots.set(quotient, canonical | OCCUPIED);
            previous = Some(quotient);
            slot += 1;
        }
    }

    /// Stores the key's remainder in its quotient's run; false (and counted) when the run
    /// would have to move past the last slot.
    pub fn try_insert(&mut self, key: u64) -> bool {
        let (quotient, remainder) = self.split(key);
        let (start, end) = self.stretch(quotient);
        self.decode(start, end);
        let at = self.scratch.partition_point(|&(q, _)| q <= quotient);
        self.scratch.insert(at, (quotient, remainder));
        if self.layout_end(start) > self.slots.len() {
            self.failed_inserts += 1;
            return false;
        }
        self.encode(start, end);
        self.stored += 1;
        true
    }

    /// The remainders of the quotient's run, or none when its occupied bit is clear.
    fn run_contains(&self, quotient: u64, remainder: u64) -> bool {
        if self.meta(quotient) & OCCUPIED == 0 {
            return false;
        }
        // Back to the cluster's start, the first unshifted slot: its run is its own.
        let mut cluster = quotient;
        while self.meta(cluster) & SHIFTED != 0 {
            cluster -= 1;
        }
        let runs_before = (cluster..quotient)
            .filter(|&q| self.meta(q) & OCCUPIED != 0)
            .count();
        let mut slot = cluster;
        for _ in 0..runs_before {
            slot += 1;
            while self.meta(slot) & CONTINUATION != 0 {
                slot += 1;
            }
        }
        loop {
            if self.slots.get(slot) >> QUOTIENT_META == remainder {
                return true;
            }
            slot += 1;
            if slot >= self.slots.len() || self.meta(slot) & CONTINUATION == 0 {
                return false;
            }
        }
    }

    /// The lengths of every run, in slot order.
    fn run_lengths(&self) -> Vec<u64> {
        let mut lengths = Vec::new();
        for slot in 0..self.slots.len() {
            match self.meta(slot) {
                0 => {}
                meta if meta & CONTINUATION != 0 => *lengths.last_mut().unwrap_or(&mut 0) += 1,
                _ => lengths.push(1),
            }
        }
        lengths
    }
}

impl Membership for QuotientFilter {
    fn insert(&mut self, key: u64) {
        self.try_insert(key);
    }
    fn contains(&self, key: u64) -> bool {
        let (quotient, remainder) = self.split(key);
        self.run_contains(quotient, remainder)
    }
}

impl Filter for QuotientFilter {
    /// Bits in use: r + 3 per stored entry.
    fn set_bits(&self) -> u64 {
        self.stored * u64::from(self.remainder_bits + QUOTIENT_META)
    }
    /// `(1/Q) Σ_runs (1 - (1 - 2^-r)^len)`: a query's quotient is uniform over the Q
    /// quotients, and each entry of its run matches its remainder with probability 2^-r.
    fn fpr_from_bits(&self) -> f64 {
        let log_miss = (-1.0 / (1u64 << self.remainder_bits) as f64).ln_1p();
        self.run_lengths()
            .iter()
            .map(|&len| -(len as f64 * log_miss).exp_m1())
            .sum::<f64>()
            / self.quotient_count as f64
    }
    /// Removes one entry with the key's quotient and remainder, if any.
    fn delete(&mut self, key: u64) -> Result<()> {
        let (quotient, remainder) = self.split(key);
        if !self.run_contains(quotient, remainder) {
            return Ok(());
        }
        let (start, end) = self.stretch(quotient);
        self.decode(start, end);
        if let Some(at) = self.scratch.iter().position(|&e| e == (quotient, remainder)) {
            self.scratch.remove(at);
            self.encode(start, end);
            self.stored -= 1;
        }
        Ok(())
    }
    fn failed_inserts(&self) -> Option<u64> {
        Some(self.failed_inserts)
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        fpr_exact(n, self.memory_bits(), self.remainder_bits)
    }
    fn memory_bits(&self) -> u64 {
        self.slots.len() * u64::from(self.remainder_bits + QUOTIENT_META)
    }
    fn hashes(&self) -> u32 {
        self.remainder_bits
    }
    fn kind(&self) -> FilterKind {
        FilterKind::of(&STRUCTURE)
    }
    fn hash_name(&self) -> AppliedHash {
        self.quotient_hash.scheme().into()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keys::KeySource;
    use rand::{RngExt, SeedableRng};
    use std::collections::HashMap;

    /// Against a multiset of (quotient, remainder) pairs under random inserts and deletes:
    /// the filter answers "present" exactly for the keys whose pair the multiset holds, so
    /// false positives as well as negatives are checked, at loads up to the full table.
    #[test]
    fn it_answers_exactly_as_a_multiset_of_its_pairs() {
        for (r, slots, seed) in [(2, 64, 1), (5, 300, 2), (8, 1_000, 3), (32, 500, 4)] {
            let m = slots * u64::from(r + QUOTIENT_META);
            let mut filter = QuotientFilter::new(m, r, HashScheme::MultiplyShift, seed).unwrap();
            let mut pairs: HashMap<(u64, u64), u32> = HashMap::new();
            let keys = KeySource::new(seed);
            let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
            let mut inserted = Vec::new();
            for c in 0..4 * slots {
                if rng.random_bool(0.35) && !inserted.is_empty() {
                    let key = inserted.swap_remove(rng.random_range(0..inserted.len()));
                    filter.delete(key).unwrap();
                    let count = pairs.get_mut(&filter.split(key)).unwrap();
                    *count -= 1;
                } else {
                    let key = keys.key(c);
                    if filter.try_insert(key) {
                        *pairs.entry(filter.split(key)).or_default() += 1;
                        inserted.push(key);
                    }
                }
                if c % 17 == 0 {
                    for probe in (0..200).map(|p| keys.key(1_000_000 + p)).chain(inserted.iter().copied()) {
                        let want = pairs.get(&filter.split(probe)).is_some_and(|&n| n > 0);
                        assert_eq!(filter.contains(probe), want, "r {r} step {c}");
                    }
                }
            }
            assert_eq!(filter.stored, pairs.values().map(|&n| u64::from(n)).sum::<u64>());
        }
    }

    /// Bender et al. 2012, section 2: a quotient filter spends `(r + 3)/α` bits per element
    /// with `r = log2(α/ε)`, that is `(log2(1/ε) + log2 α + 3)/α`; whole remainder bits
    /// add at most 1/α, the spill-over slots `1/sqrt(Q)` of it.
    #[test]
    fn its_space_is_the_published_bits_per_element() {
        let n = 1_000_000;
        for fpr in [1e-2, 2f64.powi(-8), 1e-4, 1e-6] {
            let (m, r) = design(n, fpr).unwrap();
            let bits = m as f64 / n as f64;
            let published = ((1.0 / fpr).log2() + QUOTIENT_LOAD.log2() + 3.0) / QUOTIENT_LOAD;
            let most = (published + 1.0 / QUOTIENT_LOAD) * 1.002;
            assert!(
                bits >= published * 0.999 && bits <= most,
                "ε {fpr}: {bits} bits per key against {published}"
            );
            assert!(fpr_exact(n, m, r) <= fpr, "ε {fpr}");
        }
    }
}
