//! `compare`: every structure sized for the same n and target rate, side by side: the space
//! each spends against the information floor, its measured rate, its speed, and delete.

use serde::{Deserialize, Serialize};

use crate::bench::time_filter;
use crate::error::{Error, Result};
use crate::filter::MAX_K;
use crate::hash::HashScheme;
use crate::measure::{Setup, measure};
use crate::report::{Cell, Column, Record, col};
use crate::structures::{CUCKOO_SLOTS, FilterKind};
use crate::theory;

/// Load factor a cuckoo filter is sized for: 95% of its slots.
pub const CUCKOO_LOAD: f64 = 0.95;

/// One structure sized for the target.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct CompareRow {
    pub structure: FilterKind,
    pub n: u64,
    /// Bits (or counter and fingerprint positions) of the structure.
    pub m: u64,
    /// Hashes, or fingerprint bits for the cuckoo filter.
    pub k: u32,
    pub fpr_target: f64,
    /// Memory per key: m/n bits, 4m/n for 4-bit counters.
    pub bits_per_key_spent: f64,
    /// `log2(1/ε)`.
    pub information_floor: f64,
    pub ratio_to_floor: f64,
    pub queries: u64,
    pub false_positives: u64,
    pub fpr_measured: f64,
    pub ci_low: f64,
    pub ci_high: f64,
    /// The structure's own expected rate at this size.
    pub fpr_predicted: f64,
    pub z_predicted: f64,
    pub ns_insert: f64,
    pub ns_query_absent: f64,
    pub supports_delete: bool,
}

impl Record for CompareRow {
    fn columns() -> Vec<Column> {
        vec![
            col("structure", Cell::Plain("structure")),
            col("m", Cell::Plain("m")),
            col("k", Cell::Plain("k")),
            col("bits/key", Cell::Fixed("bits_per_key_spent", 2)),
            col("floor", Cell::Fixed("information_floor", 2)),
            col("× floor", Cell::Fixed("ratio_to_floor", 3)),
            col("FP/queries", Cell::Ratio("false_positives", "queries")),
            col("measured", Cell::Percent("fpr_measured")),
            col("95% CI", Cell::Interval("ci_low", "ci_high")),
            col("predicted", Cell::Percent("fpr_predicted")),
            col("z", Cell::Fixed("z_predicted", 2)),
            col("ns insert", Cell::Fixed("ns_insert", 1)),
            col("ns query", Cell::Fixed("ns_query_absent", 1)),
            col("delete", Cell::Plain("supports_delete")),
        ]
    }
}

/// The smallest m (to 0.1%) whose rate is at most ε, by bisection over `[n/100, 200n]` bits.
fn smallest_size(n: u64, fpr: f64, rate: impl Fn(u64) -> f64) -> u64 {
    let (mut low, mut high) = ((n / 100).max(1), n.saturating_mul(200).max(64));
    while high - low > (high / 1000).max(1) {
        let mid = low + (high - low) / 2;
        if rate(mid) <= fpr {
            high = mid;
        } else {
            low = mid;
        }
    }
    high
}

fn k_for(n: u64, m: u64) -> u32 {
    (theory::optimal_k(m as f64 / n as f64).round() as u32).clamp(1, MAX_K)
}

/// `(m, k)` of a structure sized for n keys at rate ε.
///
/// classic and counting: `m = n·log2(1/ε)/ln 2`, `k = round((m/n) ln 2)`. blocked and
/// split-block: the smallest m whose exact rate (Poisson mixture) meets ε. cuckoo: fingerprints
/// of `f = ceil(log2(2·4/ε))` bits (Fan et al.'s `2b/2^f`), buckets for n at 95% load.
pub fn design(kind: FilterKind, n: u64, fpr: f64) -> Result<(u64, u32)> {
    let (m, k) = match kind {
        FilterKind::Classic | FilterKind::Counting => {
            let m = (n as f64 * theory::bits_per_key_for_fpr(fpr)).ceil() as u64;
            (m, k_for(n, m))
        }
        FilterKind::Blocked => {
            let m = smallest_size(n, fpr, |m| {
                let k = k_for(n, m);
                kind.layout(m, k).map_or(1.0, |m| kind.fpr_exact(n, m, k))
            });
            (m, k_for(n, m))
        }
        FilterKind::SplitBlock => {
            let m = smallest_size(n, fpr, |m| {
                kind.layout(m, 8).map_or(1.0, |m| kind.fpr_exact(n, m, 8))
            });
            (m, 8)
        }
        FilterKind::Cuckoo => {
            let f = ((2.0 * CUCKOO_SLOTS as f64 / fpr).log2().ceil() as u32).clamp(4, 16);
            let buckets = (n as f64 / (CUCKOO_SLOTS as f64 * CUCKOO_LOAD)).ceil() as u64;
            (buckets * CUCKOO_SLOTS * u64::from(f), f)
        }
    };
    Ok((kind.layout(m, k)?, k))
}

/// Builds, measures and times every structure for n keys at target rate ε, with at least
/// `min_queries` absent queries and enough that 100 false positives are expected (up to 10^8).
pub fn compare(
    n: u64,
    fpr: f64,
    min_queries: u64,
    seed: u64,
    hash_seed: u64,
) -> Result<Vec<CompareRow>> {
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(Error::invalid(
            "fpr",
            fpr,
            "a rate must lie strictly between 0 and 1",
            "(0, 1)",
        ));
    }
    let queries = min_queries
        .max((100.0 / fpr).ceil() as u64)
        .min(100_000_000);
    FilterKind::ALL
        .iter()
        .map(|&kind| {
            let (m, k) = design(kind, n, fpr)?;
            let setup = Setup {
                n,
                m,
                k,
                queries,
                seed,
                hash_seed,
                hash: HashScheme::MultiplyShift,
                filter: kind,
            };
            let row = measure("compare", &setup)?;
            let timing = time_filter(
                || Ok(kind.build(m, k, HashScheme::MultiplyShift, hash_seed)?),
                n,
                queries.min(1_000_000),
                3,
                seed,
            )?;
            let spent = if kind == FilterKind::Counting {
                4 * m
            } else {
                m
            };
            let bits_per_key_spent = spent as f64 / n as f64;
            let floor = theory::information_floor(fpr);
            Ok(CompareRow {
                structure: kind,
                n,
                m,
                k,
                fpr_target: fpr,
                bits_per_key_spent,
                information_floor: floor,
                ratio_to_floor: bits_per_key_spent / floor,
                queries,
                false_positives: row.false_positives,
                fpr_measured: row.fpr_measured,
                ci_low: row.ci_low,
                ci_high: row.ci_high,
                fpr_predicted: row.fpr_exact,
                z_predicted: row.z_exact,
                ns_insert: timing.ns_insert,
                ns_query_absent: timing.ns_query_absent,
                supports_delete: matches!(kind, FilterKind::Counting | FilterKind::Cuckoo),
            })
        })
        .collect()
}
