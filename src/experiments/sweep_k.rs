//! sweep-k: the rate against the number of hashes at fixed space; the optimum
//! `k = (m/n) ln 2` beside the measured minimum.

use clap::Args;
use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Experiment, Measured, MeasuredPlan, Outcome, measurement_columns};
use crate::error::Result;
use crate::measure::Measurement;
use crate::params::{MeasureParams, ShapeParams};
use crate::plot::{Axis, Colour, Corner, Mark, Panel, Plate, Series};
use crate::preflight::Cost;
use crate::report::{Cell, Column, Record, col, percent};
use crate::theory::optimal_k;

pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: [u32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];

pub struct SweepK;

/// Flags and file keys of sweep-k.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct SweepKParams {
    #[command(flatten)]
    #[serde(flatten)]
    pub shape: ShapeParams,
    #[command(flatten)]
    #[serde(flatten)]
    pub measure: MeasureParams,
}

/// A sweep-k row: the measurement, the predicted optimum and whether this k measured lowest.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
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

impl Measured for SweepKRow {
    fn measurement(&self) -> &Measurement {
        &self.measurement
    }
}

impl Record for SweepKRow {
    fn columns() -> Vec<Column> {
        let mut columns = measurement_columns();
        columns.push(col("× min", Cell::Fixed("ratio_to_min", 2)));
        columns.push(col("min", Cell::Plain("measured_min")));
        columns
    }
}

impl Experiment for SweepK {
    type Params = SweepKParams;
    type Plan = (u64, MeasuredPlan);
    const NAME: &'static str = "sweep-k";
    const ABOUT: &'static str =
        "Rate against the number of hashes k at fixed space; marks (m/n) ln 2 and the minimum";
    const AFTER_HELP: &'static str = "Examples:
  bloomlab sweep-k --bits-per-key 10
  bloomlab sweep-k --bits-per-key 8,12 --k 1..20";

    fn plan(params: &SweepKParams) -> Result<Self::Plan> {
        let n = params.shape.n_or(DEFAULT_N)?;
        let ks = params.shape.k_list_or(&DEFAULT_K)?;
        let mut setups = Vec::new();
        for m in params.shape.sizes_or(n, &DEFAULT_BITS_PER_KEY)? {
            for &k in &ks {
                setups.push(params.measure.setup(n, m, k)?);
            }
        }
        Ok((n, MeasuredPlan::new(&params.measure, setups)?))
    }

    fn cost((_, plan): &Self::Plan) -> Cost {
        plan.cost()
    }

    fn run((n, plan): &Self::Plan, progress: &ProgressBar) -> Result<Outcome> {
        let measurements = plan.measure(Self::NAME, progress)?;
        let mut rows = Vec::with_capacity(measurements.len());
        let mut notes = Vec::new();
        for group in measurements.chunk_by(|a, b| a.m == b.m) {
            let k_optimal = optimal_k(group[0].bits_per_key);
            let Some(best) = group
                .iter()
                .min_by(|a, b| a.fpr_measured.total_cmp(&b.fpr_measured))
            else {
                continue;
            };
            let best_rate = best.fpr_measured;
            notes.push(format!(
                "{:.2} bits/key: predicted optimum k = (m/n) ln 2 = {:.2}; measured minimum at k = {} ({})",
                group[0].bits_per_key,
                k_optimal,
                best.k,
                percent(best_rate)
            ));
            rows.extend(group.iter().map(|m| SweepKRow {
                measurement: m.clone(),
                k_optimal,
                measured_min: m.k == best.k,
                ratio_to_min: if best_rate > 0.0 {
                    m.fpr_measured / best_rate
                } else {
                    f64::INFINITY
                },
            }));
        }
        plan.trial_notes(&measurements, &mut notes);
        let title = format!("sweep-k: n = {n}, {}", plan.caption);
        Outcome::new(title, &rows, notes, plate(&rows))
    }
}

/// Per size: the classic curve, the optimum as a vertical line, the measured points with
/// the measured minimum highlighted.
fn plate(rows: &[SweepKRow]) -> Plate {
    let mut sizes: Vec<u64> = rows.iter().map(|r| r.measurement.m).collect();
    sizes.dedup();
    let mut series = Vec::new();
    let (low, high) = crate::plot::extent(
        rows.iter()
            .flat_map(|r| [r.measurement.ci_low, r.measurement.ci_high]),
    );
    for (i, &m) in sizes.iter().enumerate() {
        let c = Colour::Palette(i);
        let group: Vec<&SweepKRow> = rows.iter().filter(|r| r.measurement.m == m).collect();
        let bits = group[0].measurement.bits_per_key;
        series.push(Series::new(
            Some(format!("{bits:.2} bits/key: classic")),
            c,
            Mark::Line(2),
            group
                .iter()
                .map(|r| (r.measurement.k as f64, r.measurement.fpr_classic)),
        ));
        let optimum = group[0].k_optimal;
        series.push(Series::new(
            Some(format!("optimum (m/n) ln 2 = {optimum:.2}")),
            c,
            Mark::Line(1),
            [(optimum, low.max(f64::MIN_POSITIVE)), (optimum, high)],
        ));
        for minimum in [false, true] {
            let colour = if minimum { Colour::Highlight } else { c };
            let label = (minimum && i == 0).then(|| "measured minimum".to_string());
            series.push(Series::measured(
                label,
                colour,
                group
                    .iter()
                    .filter(|r| r.measured_min == minimum)
                    .map(|r| (r.measurement.k as f64, &r.measurement)),
            ));
        }
    }
    let title = match rows.first() {
        Some(r) => format!(
            "Rate against k: m = {} bits ({:.2} per key), n = {}, {} queries, hash {}",
            r.measurement.m,
            r.measurement.bits_per_key,
            r.measurement.n,
            r.measurement.queries,
            r.measurement.hash
        ),
        None => String::new(),
    };
    Plate {
        panels: vec![Panel {
            title,
            x: Axis::linear("number of hashes k").integer(),
            y: Axis::rate(),
            legend: Corner::UpperRight,
            series,
        }],
    }
}
