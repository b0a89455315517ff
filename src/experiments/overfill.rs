//! overfill: a filter designed for `design_n` keys receives s times as many.

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::{Experiment, Outcome, Rows, measure_all, measurement_columns, setup_caption};
use crate::error::{Error, Result};
use crate::measure::Measurement;
use crate::params::{MAX_COUNT, Params, check_count};
use crate::report::{Cell, Column, Record, col};
use crate::theory;

pub const DEFAULT_DESIGN_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: [u32; 1] = [7];
pub const DEFAULT_FACTORS: [f64; 7] = [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0];

/// An overfill row: the measurement at `n = round(s · design_n)` beside the closed form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct OverfillRow {
    #[serde(flatten)]
    pub measurement: Measurement,
    pub design_n: u64,
    /// s, the inserted keys over the design n.
    pub overfill_factor: f64,
    /// `1 - 2^{-s}`.
    pub fill_closed_form: f64,
    /// `(1 - 2^{-s})^k`.
    pub fpr_closed_form: f64,
    /// The exact rate at the design n.
    pub fpr_design: f64,
    /// `fpr_measured / fpr_design`.
    pub ratio_to_design: f64,
    /// `fpr_closed_form(s) / fpr_closed_form(1) = ((1 - 2^{-s}) / (1/2))^k`.
    pub ratio_closed_form: f64,
    /// `k ln 2`: the rate's relative change per unit of fractional overfill.
    pub sensitivity: f64,
}

impl Record for OverfillRow {
    fn columns() -> Vec<Column> {
        let mut columns = vec![col("s", Cell::Fixed("overfill_factor", 2))];
        columns.extend(measurement_columns());
        columns.extend([
            col("fill 1-2^-s", Cell::Percent("fill_closed_form")),
            col("(1-2^-s)^k", Cell::Percent("fpr_closed_form")),
            col("× design", Cell::Fixed("ratio_to_design", 2)),
            col("× closed", Cell::Fixed("ratio_closed_form", 2)),
        ]);
        columns
    }
}

pub fn run(params: &Params, progress: &ProgressBar) -> Result<Outcome> {
    let design_n = match (params.design_n, params.n) {
        (Some(d), Some(n)) if d != n => {
            return Err(Error::invalid(
                "n",
                n,
                format!("conflicts with --design-n {d}"),
                "give one of --n and --design-n, or equal values",
            ));
        }
        (Some(d), _) => check_count("design_n", d, 1, MAX_COUNT)?,
        (None, Some(n)) => check_count("n", n, 1, MAX_COUNT)?,
        (None, None) => DEFAULT_DESIGN_N,
    };
    let m = params.size_or(design_n, &DEFAULT_BITS_PER_KEY)?;
    let ks = params.k_list_or(&DEFAULT_K)?;
    let factors = params.factors_or(&DEFAULT_FACTORS)?;
    let mut setups = Vec::new();
    for &k in &ks {
        for &s in &factors {
            let n = (s * design_n as f64).round().max(1.0) as u64;
            setups.push(params.setup(check_count("factors", n, 1, MAX_COUNT)?, m, k)?);
        }
    }
    let measurements = measure_all(Experiment::Overfill, params, &setups, progress)?;
    let per_k = factors.len();
    let trials = params.trials()? as usize;
    let rows: Vec<OverfillRow> = measurements
        .into_iter()
        .enumerate()
        .map(|(i, measurement)| {
            let s = factors[i / trials % per_k];
            let k = measurement.k;
            let fpr_design = theory::fpr_exact(design_n, m, k);
            OverfillRow {
                design_n,
                overfill_factor: s,
                fill_closed_form: theory::fill_closed_form(s),
                fpr_closed_form: theory::fpr_closed_form(s, k),
                fpr_design,
                ratio_to_design: measurement.fpr_measured / fpr_design,
                ratio_closed_form: theory::fpr_closed_form(s, k) / theory::fpr_closed_form(1.0, k),
                sensitivity: theory::overfill_sensitivity(k as f64),
                measurement,
            }
        })
        .collect();
    let notes = ks
        .iter()
        .map(|&k| {
            format!(
                "k = {k}: sensitivity k ln 2 = {:.2} (relative rate change per unit of fractional overfill)",
                theory::overfill_sensitivity(k as f64)
            )
        })
        .collect();
    Ok(Outcome {
        title: format!(
            "overfill: m = {m}, designed for n = {design_n}, {}",
            setup_caption(params)?
        ),
        rows: Rows::Overfill(rows),
        notes,
        verdicts: Vec::new(),
    })
}
