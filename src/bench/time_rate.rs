//! The time-versus-rate table: for one out-of-cache size, the classic filter's time per
//! absent query and its measured rate at each k, the k that minimises each marked.

use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{BenchConfig, round2};
use crate::error::Result;
use crate::hash::HashScheme;
use crate::keys::KeySource;
use crate::pipeline::timing::{BenchSize, Operation, PassKeys, fill, time_operation};
use crate::report::{Column, Record};
use crate::structures::FilterKind;

/// One k of the time-versus-rate table.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct TimeRateRow {
    /// Bits in the filter (the out-of-cache size).
    pub m: u64,
    /// Keys inserted: `round(m / bits_per_key)`.
    pub n: u64,
    /// Hashes per key.
    pub k: u32,
    /// CPU ns per absent query, batched, the median of the passes.
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
        crate::columns![Self;
            "k" => Plain(k),
            "ns absent" => Fixed(ns_query_absent, 2),
            "rate" => Percent(fpr_measured),
            "classic" => Percent(fpr_classic),
            "fastest" => Plain(fastest),
            "lowest rate" => Plain(lowest_rate),
        ]
    }
}

/// For one (out-of-cache) size: ns per absent query of bloomlab's classic filter and the
/// measured rate for each k, marking the k that minimises each. The two minima differ once
/// the table exceeds cache, because each extra probe of an absent key is a likely miss.
pub fn time_versus_rate(config: &BenchConfig, progress: &ProgressBar) -> Result<Vec<TimeRateRow>> {
    let size = config.sizes.last().cloned().unwrap_or(BenchSize {
        label: "out-of-cache",
        m: 1 << 30,
    });
    let n = crate::theory::keys_at(size.m, config.bits_per_key);
    let keys = KeySource::new(config.seed);
    let pass_keys = PassKeys::new(&keys, n, config.queries);
    progress.inc_length(config.ks.len() as u64);
    let classic = FilterKind::of(&crate::structures::classic::STRUCTURE);
    let mut rows = Vec::new();
    let (hash, passes) = (HashScheme::MultiplyShift, config.passes);
    for &k in &config.ks {
        let mut filter = classic.clone().build(n, size.m, k, hash, config.seed)?;
        let fpr_measured = fill(&mut *filter, &keys, n, &pass_keys)?;
        let ns = time_operation(&mut *filter, Operation::Absent, true, &pass_keys, passes)?;
        rows.push(TimeRateRow {
            m: size.m,
            n,
            k,
            ns_query_absent: round2(ns.median),
            fpr_measured,
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
