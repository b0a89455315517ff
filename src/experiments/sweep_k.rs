//! sweep-k: the rate against the number of hashes at fixed space; the optimum
//! `k = (m/n) ln 2` beside the measured minimum.

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::{Experiment, Outcome, Rows, measure_all, measurement_columns, setup_caption};
use crate::error::Result;
use crate::measure::Measurement;
use crate::params::Params;
use crate::report::{Cell, Column, Record, col, percent};
use crate::theory::optimal_k;

pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: [u32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

/// A sweep-k row: the measurement, the predicted optimum and whether this k measured lowest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SweepKRow {
    #[serde(flatten)]
    pub measurement: Measurement,
    /// `(m/n) ln 2`.
    pub k_optimal: f64,
    /// True on the row with the lowest measured rate of its size.
    pub measured_min: bool,
    /// `fpr_measured` over the lowest measured rate of its size.
    pub ratio_to_min: f64,
}

impl Record for SweepKRow {
    fn columns() -> Vec<Column> {
        let mut columns = measurement_columns();
        columns.push(col("× min", Cell::Fixed("ratio_to_min", 2)));
        columns.push(col("min", Cell::Plain("measured_min")));
        columns
    }
}

pub fn run(params: &Params, progress: &ProgressBar) -> Result<Outcome> {
    let n = params.n_or(DEFAULT_N)?;
    let ks = params.k_list_or(&DEFAULT_K)?;
    let mut setups = Vec::new();
    for m in params.sizes_or(n, &DEFAULT_BITS_PER_KEY)? {
        for &k in &ks {
            setups.push(params.setup(n, m, k)?);
        }
    }
    let measurements = measure_all(Experiment::SweepK, params, &setups, progress)?;
    let mut rows = Vec::with_capacity(measurements.len());
    let mut notes = Vec::new();
    for group in measurements.chunk_by(|a, b| a.m == b.m) {
        let k_optimal = optimal_k(group[0].bits_per_key);
        let best = group
            .iter()
            .min_by(|a, b| a.fpr_measured.total_cmp(&b.fpr_measured))
            .expect("chunk_by yields non-empty groups");
        let best_rate = best.fpr_measured;
        notes.push(format!(
            "{:.2} bits/key: predicted optimum k = (m/n) ln 2 = {:.2}; measured minimum at k = {} ({})",
            group[0].bits_per_key,
            k_optimal,
            best.k,
            percent(best_rate)
        ));
        for m in group {
            rows.push(SweepKRow {
                measurement: m.clone(),
                k_optimal,
                measured_min: m.k == best.k,
                ratio_to_min: if best_rate > 0.0 {
                    m.fpr_measured / best_rate
                } else {
                    f64::INFINITY
                },
            });
        }
    }
    Ok(Outcome {
        title: format!("sweep-k: n = {n}, {}", setup_caption(params)?),
        rows: Rows::SweepK(rows),
        notes,
        verdicts: Vec::new(),
    })
}
