//! A scalable Bloom filter (Almeida, Baquero, Preguiça and Hutchison, "Scalable Bloom Filters",
//! Information Processing Letters 101(6), 2007): a list of partitioned filters
//! ([`super::partitioned`]); when the newest holds its capacity, a new one is added with s
//! times the bits per slice (growth factor s) and a rate tightened by r (tightening ratio r),
//! so the compound rate stays under `P0/(1 - r)` however many keys arrive.

use super::interface::{Argument, Family, Filter, FilterKind, Membership, Shape, Structure};
use super::partitioned::{self, PartitionedFilter, slice_fill};
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashScheme};

pub static STRUCTURE: Structure = Structure {
    argument: Some(Argument {
        name: "S,R",
        help: "growth factor s in 2..=16 and tightening ratio r in (0, 1); scalable alone is 2,0.85",
        optional: true,
        check: |arg| Growth::parse(arg).map(|_| ()),
        fpr_exact: Some(|arg, n, m, k| {
            Growth::parse(arg)
                .ok()
                .and_then(|g| g.schedule(m, k).ok())
                .map_or(f64::NAN, |s| s.fpr_exact(n))
        }),
    }),
    layout: partitioned::layout,
    design: Some(design),
    family: Family::Scalable,
    fpr_exact: |n, m, k| Schedule::of(m, k).map_or(f64::NAN, |s| s.fpr_exact(n)),
    ..Structure::new(
        "scalable",
        "partitioned sub-filters added as it fills, each s = 2 times larger at r = 0.85 times the rate (Almeida et al. 2007); scalable:S,R sets s and r",
        build,
    )
};

fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
    let growth = match shape.kind.arg() {
        Some(arg) => {
            Growth::parse(arg).map_err(|why| Error::invalid("filter", arg, why, Growth::RANGES))?
        }
        None => Growth::REGISTERED,
    };
    let schedule = growth.schedule(shape.m, shape.k)?;
    let mut filter = ScalableFilter::new(schedule, shape.hash, shape.hash_seed);
    filter.kind = shape.kind.clone();
    Ok(Box::new(filter))
}

/// The registered growth factor s: each sub-filter has twice the slice bits (and keys) of the
/// one before, the "slow growth" the authors recommend (section 5: s = 2 or 4).
pub const SCALABLE_GROWTH: u64 = 2;
/// The registered tightening ratio r: sub-filter j is built for rate `P0·r^j`, within the
/// authors' recommended 0.8 to 0.9 (section 5).
pub const SCALABLE_TIGHTENING: f64 = 0.85;

/// The growth factor s and tightening ratio r of a scalable filter: `scalable:S,R`, or the
/// registered 2 and 0.85 for `scalable` alone.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Growth {
    pub growth: u64,
    pub tightening: f64,
}

impl Growth {
    /// [`SCALABLE_GROWTH`] and [`SCALABLE_TIGHTENING`].
    pub const REGISTERED: Growth = Growth {
        growth: SCALABLE_GROWTH,
        tightening: SCALABLE_TIGHTENING,
    };
    /// The ranges [`Growth::parse`] accepts, as the refusals state them.
    pub const RANGES: &str = "S,R with S a whole number in 2..=16 and R in (0, 1), e.g. scalable:4,0.9";

    /// `S,R`: s a whole number in 2..=16 (the authors' s = 2 or 4 and beyond), r strictly
    /// between 0 and 1 (the compound bound `P0/(1 - r)` needs r < 1).
    pub fn parse(text: &str) -> std::result::Result<Growth, String> {
        let refuse = |what: String| format!("{what} (allowed: {})", Growth::RANGES);
        let (s, r) = text
            .split_once(',')
            .ok_or_else(|| refuse(format!("{text:?} is not S,R")))?;
        let growth: u64 = s
            .trim()
            .parse()
            .ok()
            .filter(|s| (2..=16).contains(s))
            .ok_or_else(|| refuse(format!("growth factor s = {s:?} is not a whole number in 2..=16")))?;
        let tightening: f64 = r
            .trim()
            .parse()
            .ok()
            .filter(|r: &f64| *r > 0.0 && *r < 1.0)
            .ok_or_else(|| refuse(format!("tightening ratio r = {r:?} is not in (0, 1)")))?;
        Ok(Growth { growth, tightening })
    }

    /// The schedule of a first sub-filter of m bits and k slices ([`Schedule::new`]).
    pub fn schedule(self, m: u64, k: u32) -> Result<Schedule> {
        Schedule::new(m, k, self.growth, self.tightening)
    }
}

/// Separates sub-filter j's hash seed from the others'
const SUB_SEED: u64 = 0x9e37_79b9_7f4a_7c15;

/// How a scalable filter grows: sub-filter j has `k_j = ceil(k_0 + j·log2(1/r))` slices
/// (rate at most `P0·r^j`, `P0 = 2^-k_0`) of `slice_0·s^j` bits, and holds as many keys as
/// keep its slices at most half full (the fill ratio the authors fix, p = 1/2, where a
/// partitioned filter's rate `p^k` is least for its bits).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Schedule {
    pub first_slice: u64,
    pub first_k: u32,
    pub growth: u64,
    pub tightening: f64,
}

impl Schedule {
    /// The registered schedule for a first sub-filter of m bits (k whole slices) and k slices.
    pub fn of(m: u64, k: u32) -> Result<Schedule> {
        Schedule::new(m, k, SCALABLE_GROWTH, SCALABLE_TIGHTENING)
    }

    /// Any growth factor s >= 2 and tightening ratio r in (0, 1); the first sub-filter of
    /// `m` bits ([`partitioned::layout`]) must hold at least one key.
    pub fn new(m: u64, k: u32, growth: u64, tightening: f64) -> Result<Schedule> {
        if !(2..=16).contains(&growth) {
            return Err(Error::invalid("growth", growth, "out of range", "2..=16"));
        }
        if !(tightening > 0.0 && tightening < 1.0) {
            return Err(Error::invalid(
                "tightening",
                tightening,
                "the tightening ratio must lie strictly between 0 and 1",
                "(0, 1)",
            ));
        }
        let first_slice = partitioned::layout(m, k)? / u64::from(k);
        if first_slice < 2 {
            return Err(Error::invalid(
                "m",
                m,
                "a scalable filter's slices need at least two bits",
                format!("at least {} bits at this k", 2 * k),
            ));
        }
        Ok(Schedule {
            first_slice,
            first_k: k,
            growth,
            tightening,
        })
    }

    /// `P0 / (1 - r)`: the compound rate's bound, `Σ_j P0·r^j`.
    pub fn bound(&self) -> f64 {
        0.5f64.powi(self.first_k as i32) / (1.0 - self.tightening)
    }

    /// `(slice bits, slices, capacity)` of sub-filter j; None once its bits pass 2^36.
    pub fn sub(&self, j: u32) -> Option<(u64, u32, u64)> {
        let slice = self.growth.checked_pow(j)?.checked_mul(self.first_slice)?;
        let tighter = f64::from(j) * -self.tightening.log2();
        let k = (f64::from(self.first_k) + tighter - 1e-9).ceil() as u32;
        let bits = slice.checked_mul(u64::from(k))?;
        (bits <= crate::structures::bloom::MAX_BITS && k <= crate::hash::MAX_K)
            .then(|| (slice, k, half_full(slice)))
    }

    /// `1 - Π_j (1 - (1 - (1 - 1/s_j)^{n_j})^{k_j})`, sub-filter j holding
    /// `n_j = min(cap_j, n - Σ_{i<j} cap_i)` keys, and the last one that can be built (the
    /// next would pass 2^36 bits or [`crate::hash::MAX_K`] slices) every key left, as the
    /// filter does: sub-filters have independent hashes, and a query is positive when any of
    /// them is ([`partitioned::fpr_exact`] for each).
    pub fn fpr_exact(&self, n: u64) -> f64 {
        let mut held: Vec<((u64, u32, u64), u64)> = Vec::new();
        let (mut left, mut j) = (n, 0);
        while left > 0 {
            match (self.sub(j), held.last_mut()) {
                (Some(sub), _) => {
                    let keys = left.min(sub.2);
                    held.push((sub, keys));
                    left -= keys;
                    j += 1;
                }
                (None, Some(last)) => {
                    last.1 += left;
                    left = 0;
                }
                (None, None) => return f64::NAN,
            }
        }
        let miss = |&((slice, k, _), keys): &((u64, u32, u64), u64)| {
            1.0 - slice_fill(keys, slice).powi(k as i32)
        };
        1.0 - held.iter().map(miss).product::<f64>()
    }
}

/// The most keys that leave a slice of `bits` bits at most half full in expectation:
/// `(1 - 1/bits)^keys >= 1/2`.
fn half_full(bits: u64) -> u64 {
    (std::f64::consts::LN_2 / -(-1.0 / bits as f64).ln_1p()).floor() as u64
}

/// `P0 = ε(1 - r)` (so that the bound `P0/(1-r)` is ε), `k_0 = ceil(log2(1/P0))` slices, and
/// the fewest slice bits that hold n keys half full: the authors' sizing (section 5) for a
/// filter expected to receive n keys before it first grows.
fn design(n: u64, fpr: f64) -> Result<(u64, u32)> {
    let k = (-(fpr * (1.0 - SCALABLE_TIGHTENING)).log2() - 1e-9).ceil() as u32;
    let mut slice = (n as f64 / std::f64::consts::LN_2).floor().max(2.0) as u64;
    while half_full(slice) < n {
        slice += 1;
    }
    Ok((slice * u64::from(k), k))
}

/// A scalable Bloom filter ([module](self)).
///
/// Invariant: after `insert(x)`, `contains(x)` is true (every sub-filter keeps its keys); the
/// newest sub-filter holds at most its capacity.
#[derive(Debug)]
pub struct ScalableFilter {
    schedule: Schedule,
    subs: Vec<PartitionedFilter>,
    /// Keys in the newest sub-filter.
    newest: u64,
    scheme: HashScheme,
    hash_seed: u64,
    /// `scalable`, or `scalable:S,R` as it was asked for.
    kind: FilterKind,
}

impl ScalableFilter {
    /// An empty filter with its first sub-filter allocated.
    pub fn new(schedule: Schedule, scheme: HashScheme, hash_seed: u64) -> Self {
        let mut filter = ScalableFilter {
            schedule,
            subs: Vec::new(),
            newest: 0,
            scheme,
            hash_seed,
            kind: FilterKind::of(&STRUCTURE),
        };
        filter.grow();
        filter
    }

    /// Adds the next sub-filter; past the largest array the newest keeps taking keys.
    fn grow(&mut self) {
        let j = self.subs.len() as u32;
        let next = self.schedule.sub(j).and_then(|(slice, k, _)| {
            let seed = self.hash_seed.wrapping_add(u64::from(j).wrapping_mul(SUB_SEED));
            PartitionedFilter::new(slice * u64::from(k), k, self.scheme, seed).ok()
        });
        if let Some(sub) = next {
            self.subs.push(sub);
            self.newest = 0;
        }
    }
}

impl Membership for ScalableFilter {
    fn insert(&mut self, key: u64) {
        let capacity = self.schedule.sub(self.subs.len() as u32 - 1).map(|s| s.2);
        if capacity.is_some_and(|c| self.newest >= c) {
            self.grow();
        }
        self.newest += 1;
        if let Some(sub) = self.subs.last_mut() {
            sub.insert(key);
        }
    }
    fn contains(&self, key: u64) -> bool {
        self.subs.iter().any(|sub| sub.contains(key))
    }
}

impl Filter for ScalableFilter {
    fn set_bits(&self) -> u64 {
        self.subs.iter().map(|s| s.set_bits()).sum()
    }
    /// No single fill: each sub-filter has its own size and k, so set bits over the first
    /// sub-filter's m (the row's m) is not a proportion and no occupancy law gives its
    /// spread. The fill is shown blank; the bits check reads [`Filter::fpr_from_bits`].
    fn knows_set_bits(&self) -> bool {
        false
    }
    /// `1 - Π_j (1 - Π_i fill_{j,i})` over sub-filters j and their slices i.
    fn fpr_from_bits(&self) -> f64 {
        1.0 - self
            .subs
            .iter()
            .map(|s| 1.0 - s.fpr_from_bits())
            .product::<f64>()
    }
    fn fpr_exact(&self, n: u64) -> f64 {
        self.schedule.fpr_exact(n)
    }
    /// Every sub-filter's bits.
    fn memory_bits(&self) -> u64 {
        self.subs.iter().map(|s| s.memory_bits()).sum()
    }
    /// Slices summed over the sub-filters: the bits an absent key may probe.
    fn hashes(&self) -> u32 {
        self.subs.iter().map(|s| s.hashes()).sum()
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    fn hash_name(&self) -> AppliedHash {
        self.scheme.into()
    }
}
