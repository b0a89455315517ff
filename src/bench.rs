//! The bench experiment: ns per insert and per query for bloomlab's filter and, with the
//! `peers` feature, for the `fastbloom` and `bloomfilter` crates at equal m and k; and the
//! time-versus-rate table across k for a table larger than cache. The timing itself is
//! [`crate::timing`]'s.

use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hash::HashScheme;
use crate::report::{Cell, Column, Record, col};
use crate::structures::FilterKind;
use crate::timing::time_filter;
pub use crate::timing::{BenchSize, Subject, default_sizes};

/// The filters timed side by side at equal m and k: bloomlab's classic filter, then (with
/// the `peers` feature) fastbloom and bloomfilter. (growable-bloom-filter is left out: by
/// shape it grows past m once n exceeds m ln 2 / k, so it cannot be held to equal m.)
pub fn contenders() -> Vec<FilterKind> {
    ["classic", "fastbloom", "bloomfilter"]
        .into_iter()
        .filter_map(|name| FilterKind::named(name).ok())
        .filter(|kind| kind.require_built().is_ok())
        .collect()
}

/// Everything a timing run needs.
#[derive(Clone, Debug)]
pub struct BenchConfig {
    pub sizes: Vec<BenchSize>,
    pub ks: Vec<u32>,
    pub bits_per_key: f64,
    pub queries: u64,
    pub repeats: u32,
    pub seed: u64,
}

/// One contender at one size and k.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct BenchRow {
    /// The contender timed.
    pub filter: String,
    /// The size's label: in-cache or out-of-cache.
    pub size: String,
    /// Bits in the filter.
    pub m: u64,
    /// Keys inserted: `round(m / bits_per_key)`.
    pub n: u64,
    /// Hashes per key.
    pub k: u32,
    /// ns per insert, best of the repeats (drawing the key included).
    pub ns_insert: f64,
    /// ns per query of an inserted key, best of the repeats.
    pub ns_query_present: f64,
    /// ns per query of an absent key, best of the repeats.
    pub ns_query_absent: f64,
    /// False positives over the absent queries, as a check that the filter is the one asked for.
    pub fpr_measured: f64,
    /// `ns_insert` over the fastest peer's (none without the `peers` feature).
    pub ratio_insert: Option<f64>,
    /// `ns_query_present` over the fastest peer's.
    pub ratio_query_present: Option<f64>,
    /// `ns_query_absent` over the fastest peer's.
    pub ratio_query_absent: Option<f64>,
}

impl Record for BenchRow {
    fn columns() -> Vec<Column> {
        vec![
            col("filter", Cell::Plain("filter")),
            col("size", Cell::Plain("size")),
            col("m", Cell::Plain("m")),
            col("k", Cell::Plain("k")),
            col("ns insert", Cell::Fixed("ns_insert", 2)),
            col("ns present", Cell::Fixed("ns_query_present", 2)),
            col("ns absent", Cell::Fixed("ns_query_absent", 2)),
            col("rate", Cell::Percent("fpr_measured")),
            col("× peer insert", Cell::Plain("ratio_insert")),
            col("× peer present", Cell::Plain("ratio_query_present")),
            col("× peer absent", Cell::Plain("ratio_query_absent")),
        ]
    }
}

/// Times one contender at m bits and k hashes.
fn time_one(
    contender: FilterKind,
    m: u64,
    k: u32,
    n: u64,
    config: &BenchConfig,
) -> Result<BenchRow> {
    let timing = time_filter(
        || -> Result<Box<dyn Subject>> {
            Ok(contender.build(n, m, k, HashScheme::MultiplyShift, config.seed)?)
        },
        n,
        config.queries,
        config.repeats,
        config.seed,
    )?;
    Ok(BenchRow {
        filter: contender.name().to_string(),
        size: String::new(),
        m,
        n,
        k,
        ns_insert: timing.ns_insert,
        ns_query_present: timing.ns_query_present,
        ns_query_absent: timing.ns_query_absent,
        fpr_measured: timing.fpr_measured,
        ratio_insert: None,
        ratio_query_present: None,
        ratio_query_absent: None,
    })
}

/// Times every contender at every size and k, then sets each row's ratios to the fastest
/// peer (the fastest contender other than bloomlab) at the same size and k.
pub fn run(config: &BenchConfig, progress: &ProgressBar) -> Result<Vec<BenchRow>> {
    let contenders = contenders();
    progress.inc_length((config.sizes.len() * config.ks.len() * contenders.len()) as u64);
    let mut rows = Vec::new();
    for size in &config.sizes {
        let n = ((size.m as f64 / config.bits_per_key).round() as u64).max(1);
        for &k in &config.ks {
            let mut group = Vec::new();
            for &contender in &contenders {
                let mut row = time_one(contender, size.m, k, n, config)?;
                row.size = size.label.to_string();
                group.push(row);
                progress.inc(1);
            }
            let fastest = |metric: fn(&BenchRow) -> f64| {
                group
                    .iter()
                    .filter(|r| r.filter != FilterKind::CLASSIC.name())
                    .map(metric)
                    .reduce(f64::min)
            };
            let best_insert = fastest(|r| r.ns_insert);
            let best_present = fastest(|r| r.ns_query_present);
            let best_absent = fastest(|r| r.ns_query_absent);
            for row in &mut group {
                row.ratio_insert = best_insert.map(|b| round2(row.ns_insert / b));
                row.ratio_query_present = best_present.map(|b| round2(row.ns_query_present / b));
                row.ratio_query_absent = best_absent.map(|b| round2(row.ns_query_absent / b));
            }
            rows.extend(group);
        }
    }
    Ok(rows)
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One k of the time-versus-rate table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimeRateRow {
    /// Bits in the filter (the out-of-cache size).
    pub m: u64,
    /// Keys inserted: `round(m / bits_per_key)`.
    pub n: u64,
    /// Hashes per key.
    pub k: u32,
    /// ns per query of an absent key, best of the repeats.
    pub ns_query_absent: f64,
    /// False positives over the absent queries.
    pub fpr_measured: f64,
    /// The textbook approximation `(1 - e^{-kn/m})^k`.
    pub fpr_classic: f64,
    /// The k with the lowest time per absent query.
    pub fastest: bool,
    /// The k with the lowest measured rate.
    pub lowest_rate: bool,
}

impl Record for TimeRateRow {
    fn columns() -> Vec<Column> {
        vec![
            col("k", Cell::Plain("k")),
            col("ns absent", Cell::Fixed("ns_query_absent", 2)),
            col("rate", Cell::Percent("fpr_measured")),
            col("classic", Cell::Percent("fpr_classic")),
            col("fastest", Cell::Plain("fastest")),
            col("lowest rate", Cell::Plain("lowest_rate")),
        ]
    }
}

/// For one (out-of-cache) size: ns per absent query and the measured rate for each k,
/// marking the k that minimises each. The two minima differ once the table exceeds cache,
/// because each extra probe of an absent key is a likely cache miss.
pub fn time_versus_rate(config: &BenchConfig, progress: &ProgressBar) -> Result<Vec<TimeRateRow>> {
    let size = config.sizes.last().cloned().unwrap_or(BenchSize {
        label: "out-of-cache",
        m: 1 << 30,
    });
    let n = ((size.m as f64 / config.bits_per_key).round() as u64).max(1);
    progress.inc_length(config.ks.len() as u64);
    let mut rows = Vec::new();
    for &k in &config.ks {
        let timed = time_one(FilterKind::CLASSIC, size.m, k, n, config)?;
        rows.push(TimeRateRow {
            m: size.m,
            n,
            k,
            ns_query_absent: timed.ns_query_absent,
            fpr_measured: timed.fpr_measured,
            fpr_classic: crate::theory::fpr_classic(n, size.m, k),
            fastest: false,
            lowest_rate: false,
        });
        progress.inc(1);
    }
    let argmin = |rows: &[TimeRateRow], metric: fn(&TimeRateRow) -> f64| {
        rows.iter()
            .enumerate()
            .min_by(|a, b| metric(a.1).total_cmp(&metric(b.1)))
            .map(|(i, _)| i)
    };
    if let Some(i) = argmin(&rows, |r| r.ns_query_absent) {
        rows[i].fastest = true;
    }
    if let Some(i) = argmin(&rows, |r| r.fpr_measured) {
        rows[i].lowest_rate = true;
    }
    Ok(rows)
}
