//! Timing: ns per insert and per query for bloomlab's filter and, with the `peers` feature,
//! for the `fastbloom` and `bloomfilter` crates at equal m and k; and the time-versus-rate
//! table across k for a table larger than cache.
//!
//! Each figure is the best of `repeats` single-threaded passes. Insert times include drawing
//! the key from the key source (about 1 ns, the same for every filter); query keys are drawn
//! beforehand.

use std::hint::black_box;
use std::time::Instant;

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hash::HashScheme;
use crate::keys::KeySource;
use crate::report::{Cell, Column, Record, col};
use crate::structures::FilterKind;

pub use crate::structures::Membership as Subject;

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

/// A size to time at.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchSize {
    pub label: &'static str,
    pub m: u64,
}

/// The two sizes: in cache (m = 40,000) and out of cache (m = 2^30 bits).
pub fn default_sizes() -> Vec<BenchSize> {
    vec![
        BenchSize {
            label: "in-cache",
            m: 40_000,
        },
        BenchSize {
            label: "out-of-cache",
            m: 1 << 30,
        },
    ]
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
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct BenchRow {
    pub filter: String,
    pub size: String,
    pub m: u64,
    pub n: u64,
    pub k: u32,
    pub ns_insert: f64,
    pub ns_query_present: f64,
    pub ns_query_absent: f64,
    /// False positives over the absent queries, as a check that the filter is the one asked for.
    pub fpr_measured: f64,
    /// `ns_insert` over the fastest peer's (none without the `peers` feature).
    pub ratio_insert: Option<f64>,
    pub ratio_query_present: Option<f64>,
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

/// Best-of-`repeats` nanoseconds per call of `pass` over `count` items.
pub fn best_ns(repeats: u32, count: u64, mut pass: impl FnMut()) -> f64 {
    (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            pass();
            start.elapsed().as_nanos() as f64 / count as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// ns per insert, per present and per absent query, and the rate over the absent queries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub ns_insert: f64,
    pub ns_query_present: f64,
    pub ns_query_absent: f64,
    pub fpr_measured: f64,
}

/// Fills fresh filters from `build` with n keys (timed, best of `repeats`), then queries
/// `queries` present and absent keys (timed).
pub fn time_filter(
    build: impl Fn() -> Result<Box<dyn Subject>>,
    n: u64,
    queries: u64,
    repeats: u32,
    seed: u64,
) -> Result<Timing> {
    let keys = KeySource::new(seed);
    let present: Vec<u64> = keys.inserted(queries.min(n)).collect();
    let absent: Vec<u64> = keys.absent(n, queries).collect();
    let mut filter = build()?;
    let mut ns_insert = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let mut fresh = build()?;
        let start = Instant::now();
        keys.inserted(n).for_each(|key| fresh.insert(key));
        // Until the first answer: a static filter (binary fuse) is built here.
        black_box(fresh.contains(0));
        ns_insert = ns_insert.min(start.elapsed().as_nanos() as f64 / n as f64);
        filter = fresh;
    }
    let ns_query_present = best_ns(repeats, present.len() as u64, || {
        black_box(present.iter().filter(|&&key| filter.contains(key)).count());
    });
    let mut false_positives = 0;
    let ns_query_absent = best_ns(repeats, absent.len() as u64, || {
        false_positives = black_box(absent.iter().filter(|&&key| filter.contains(key)).count());
    });
    Ok(Timing {
        ns_insert,
        ns_query_present,
        ns_query_absent,
        fpr_measured: false_positives as f64 / absent.len() as f64,
    })
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

/// A time in ns to one decimal, as the tables show it.
pub fn round_ns(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}

fn round2(x: f64) -> f64 {
    (x * 100.0).round() / 100.0
}

/// One k of the time-versus-rate table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct TimeRateRow {
    pub m: u64,
    pub n: u64,
    pub k: u32,
    pub ns_query_absent: f64,
    pub fpr_measured: f64,
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
