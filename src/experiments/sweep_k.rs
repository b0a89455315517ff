//! sweep-k: the rate against the number of hashes at fixed space; the optimum
//! `k = (m/n) ln 2` beside the measured minimum.
//!
//! The measured minimum is one argmin of noisy rates. Beside the main sweep, `--replicates`
//! R further sweeps (key seed and hash seed `seed + j`, `hash_seed + j`, j = 1..=R) measure
//! every k again; with the main sweep they give R + 1 independent replicates, and
//! `in_min_set` is whether k is in the 95% set of k that may have the smallest mean rate
//! ([`min_set`]: paired t-tests against every rival, Bonferroni over the K - 1 rivals). The
//! replicates are not rows: the table keeps one row per k (per trial).

use clap::Args;
use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Experiment, MeasuredPlan, Outcome, measurement_columns_narrow};
use crate::error::Result;
use crate::params::preflight::Cost;
use crate::params::{Count, MeasureParams, ShapeParams, check_count};
use crate::pipeline::measurement::{CONFIDENCE, Measurement, Setup};
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Series};
use crate::report::{Column, Record, percent};
use crate::stats::{
    DETECTION_POWER, Ratio, mean_and_variance, min_set, paired_ratio_interval, ratio_interval,
    replicates_to_order,
};
use crate::structures::Sizing;
use crate::theory::{optimal_k, whole_optimal_k};

pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: [u32; 16] = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
/// Replicate sweeps measured beside the main one for the set of possible minima.
pub const DEFAULT_REPLICATES: u64 = 8;

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
    /// Replicate sweeps (fresh key and hash seeds) for the set of possible minima
    /// [1..=1000, default 8]
    #[arg(long, allow_hyphen_values = true)]
    pub replicates: Option<Count>,
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
    /// Lower end of the 95% interval of `ratio_to_min` as a statement about the design (rates averaged over
    /// filters): [`ratio_interval`] with each rate's between-filter variance V, the row's
    /// `fpr_between_filter_variance` where it is modelled, else the replicates' scatter
    /// `max(0, s² - p̄(1-p̄)/q)`. The rows of one sweep share keys and hash prefixes and
    /// correlate positively, so the interval is conservative; the minimum is an argmin, so
    /// the lower end near 1 is optimistic for the rows closest to it.
    pub ratio_to_min_low: f64,
    /// Upper end of the 95% interval of `ratio_to_min` (see `ratio_to_min_low`).
    pub ratio_to_min_high: f64,
    /// Whether this k is in the 95% set of k that may have the smallest mean rate, from the
    /// main sweep and the replicate sweeps (see the module).
    pub in_min_set: bool,
    /// Mean rate of this k over the main sweep and the replicate sweeps: the rate of the
    /// design averaged over filters.
    pub replicate_mean: f64,
    /// `replicate_mean` over that of the whole optimum `k* = round((m/n) ln 2)` (none when
    /// k* is not swept): "k = 1 costs 12 times the optimum" without the bias of dividing
    /// by an argmin.
    pub ratio_to_optimum: Option<f64>,
    /// Lower end of the 95% interval of `ratio_to_optimum`, paired by replicate
    /// ([`paired_ratio_interval`]: the ratio estimator with Student's t over the replicates).
    pub ratio_to_optimum_low: Option<f64>,
    /// Upper end of the 95% interval of `ratio_to_optimum`.
    pub ratio_to_optimum_high: Option<f64>,
    /// Replicate sweeps a one-sided paired t-test at `1 - 0.05/(K-1)` (the min set's level)
    /// needs to order this k against the k of lowest `replicate_mean` with 80% power, their
    /// mean difference and its spread taken from these replicates ([`replicates_to_order`]);
    /// none for that k itself or when they do not differ.
    pub replicates_to_order: Option<u64>,
}

impl Record for SweepKRow {
    fn columns() -> Vec<Column> {
        let narrow = ["bits/key", "k", "measured", "95% CI", "exact", "z exact"];
        let mut columns = measurement_columns_narrow(&narrow);
        columns.extend(crate::columns![Self;
            "× min" => Fixed(ratio_to_min, 2).wide_only(),
            "× min 95%" => TimesInterval(ratio_to_min_low, ratio_to_min_high),
            "min" => Plain(measured_min).wide_only(),
            "in min set" => Plain(in_min_set),
            "× k* 95%" => TimesInterval(ratio_to_optimum_low, ratio_to_optimum_high).wide_only(),
        ]);
        columns
    }
}

/// The main sweep and its replicates.
pub struct SweepKPlan {
    n: u64,
    main: MeasuredPlan,
    replicates: MeasuredPlan,
}

impl Experiment for SweepK {
    type Params = SweepKParams;
    type Plan = SweepKPlan;
    const NAME: &'static str = "sweep-k";
    const ABOUT: &'static str =
        "Rate against the number of hashes k at fixed space; marks (m/n) ln 2 and the minimum";
    const AFTER_HELP: &'static str = "Examples:
  bloomlab sweep-k --bits-per-key 10
  bloomlab sweep-k --bits-per-key 8,12 --k 1..20 --replicates 16";

    fn plan(params: &SweepKParams) -> Result<Self::Plan> {
        let n = params.measure.n_or(&params.shape, DEFAULT_N)?;
        let ks = params.shape.k_list_or(&DEFAULT_K)?;
        let filter = params.measure.checked_filter()?;
        if let Some(said) = filter.refusal_of_shape()? {
            return Err(super::by_rate::k_refused(&ks, Self::NAME, filter, &said));
        }
        let replicates = check_count(
            "replicates",
            params.replicates.map_or(DEFAULT_REPLICATES, |r| r.0),
            1,
            1000,
        )?;
        let mut setups = Vec::new();
        for m in params.shape.sizes_or(n, &DEFAULT_BITS_PER_KEY)? {
            for &k in &ks {
                setups.push(params.measure.setup(n, Sizing::Shape { m, k })?);
            }
        }
        let replicate_setups = (1..=replicates)
            .flat_map(|j| {
                setups.iter().map(move |s| {
                    let mut replicate = Setup {
                        seed: s.seed.wrapping_add(j),
                        ..s.clone()
                    };
                    replicate.spec.hash_seed = s.spec.hash_seed.wrapping_add(j);
                    replicate
                })
            })
            .collect();
        let main = MeasuredPlan::new(&params.measure, setups)?;
        let replicates = MeasuredPlan {
            caption: main.caption.clone(),
            ..MeasuredPlan::once(replicate_setups)
        };
        Ok(SweepKPlan {
            n,
            main,
            replicates,
        })
    }

    fn cost(plan: &Self::Plan) -> Cost {
        plan.main.cost().then(plan.replicates.cost())
    }

    fn measured(plan: &mut Self::Plan) -> Vec<&mut dyn super::Units> {
        vec![&mut plan.main, &mut plan.replicates]
    }

    fn run(plan: &Self::Plan, progress: &ProgressBar) -> Result<Outcome> {
        let measurements = plan.main.measure(Self::NAME, progress)?;
        let replicates = plan.replicates.measure(Self::NAME, progress)?;
        let mut rows = Vec::with_capacity(measurements.len());
        let mut notes = Vec::new();
        for group in measurements.chunk_by(|a, b| a.m == b.m) {
            let Some(best) = group
                .iter()
                .min_by(|a, b| a.fpr_measured.total_cmp(&b.fpr_measured))
            else {
                continue;
            };
            let same_size: Vec<&Measurement> =
                replicates.iter().filter(|r| r.m == best.m).collect();
            let by_k = KReplicates::of(group, &same_size);
            notes.push(minimum_note(group, best, &by_k));
            rows.extend(group.iter().map(|m| sweep_row(m, best, &by_k)));
        }
        plan.main.trial_notes(&measurements, &mut notes);
        let title = format!("sweep-k: n = {}, {}", plan.n, plan.main.caption);
        Outcome::new(title, &rows, notes, plate(&rows))
    }
}

/// The rates of each k of one size over the main sweep and its replicates, and the 95% set
/// of possible minima.
struct KReplicates {
    ks: Vec<u32>,
    rates: Vec<Vec<f64>>,
    in_set: Vec<bool>,
    means: Vec<f64>,
    /// The index of `round((m/n) ln 2)` among `ks`, when swept.
    optimum: Option<usize>,
}

impl KReplicates {
    /// The first main row of each k (its first trial) and every replicate row of that k.
    fn of(group: &[Measurement], replicates: &[&Measurement]) -> Self {
        let mut ks: Vec<u32> = group.iter().map(|m| m.k).collect();
        ks.dedup();
        let rates: Vec<Vec<f64>> = ks
            .iter()
            .map(|&k| {
                let main = group.iter().find(|m| m.k == k).map(|m| m.fpr_measured);
                let others = replicates.iter().filter(|r| r.k == k);
                main.into_iter()
                    .chain(others.map(|r| r.fpr_measured))
                    .collect()
            })
            .collect();
        let in_set = min_set(&rates);
        let means = rates
            .iter()
            .map(|r| r.iter().sum::<f64>() / r.len().max(1) as f64)
            .collect();
        let optimum = group
            .first()
            .and_then(|m| ks.iter().position(|&k| k == whole_optimal_k(m.n, m.m)));
        KReplicates {
            ks,
            rates,
            in_set,
            means,
            optimum,
        }
    }

    /// The mean rate of k over that of the whole optimum, paired by replicate.
    fn ratio_to_optimum(&self, k: u32) -> Option<Ratio> {
        let (i, best) = (self.index(k)?, self.optimum?);
        Some(paired_ratio_interval(
            &self.rates[i],
            &self.rates[best],
            CONFIDENCE,
        ))
    }

    /// Replicates to order k against the k of lowest mean (see `SweepKRow`).
    fn replicates_to_order(&self, k: u32) -> Option<u64> {
        let i = self.index(k)?;
        let lowest = (0..self.ks.len()).min_by(|&a, &b| self.means[a].total_cmp(&self.means[b]))?;
        if i == lowest {
            return None;
        }
        let diffs: Vec<f64> = self.rates[i]
            .iter()
            .zip(&self.rates[lowest])
            .map(|(a, b)| a - b)
            .collect();
        let (mean, var) = mean_and_variance(&diffs);
        let sd = var.sqrt();
        let level = 1.0 - (1.0 - CONFIDENCE) / (self.ks.len().max(2) - 1) as f64;
        replicates_to_order(mean, sd, level, DETECTION_POWER)
    }

    fn index(&self, k: u32) -> Option<usize> {
        self.ks.iter().position(|&x| x == k)
    }

    /// V of a row: modelled, or `max(0, s² - p̄(1-p̄)/q)` from the replicates of its k.
    fn between_variance(&self, row: &Measurement) -> f64 {
        if row.fpr_between_filter_variance > 0.0 {
            return row.fpr_between_filter_variance;
        }
        let Some(rates) = self.index(row.k).map(|i| &self.rates[i]) else {
            return 0.0;
        };
        if rates.len() < 2 {
            return 0.0;
        }
        let (mean, var) = mean_and_variance(rates);
        (var - mean * (1.0 - mean) / row.queries as f64).max(0.0)
    }

    fn in_min_set(&self, k: u32) -> bool {
        self.index(k).is_some_and(|i| self.in_set[i])
    }
}

/// One table row: the measurement against the measured minimum of its size.
fn sweep_row(m: &Measurement, best: &Measurement, by_k: &KReplicates) -> SweepKRow {
    let ratio = ratio_interval(
        m.false_positives,
        m.queries,
        best.false_positives,
        best.queries,
        by_k.between_variance(m),
        by_k.between_variance(best),
        CONFIDENCE,
    );
    let optimum = by_k.ratio_to_optimum(m.k);
    SweepKRow {
        measurement: m.clone(),
        k_optimal: optimal_k(m.bits_per_key),
        measured_min: m.k == best.k,
        ratio_to_min: if best.fpr_measured > 0.0 {
            m.fpr_measured / best.fpr_measured
        } else {
            f64::INFINITY
        },
        ratio_to_min_low: ratio.low,
        ratio_to_min_high: ratio.high,
        in_min_set: by_k.in_min_set(m.k),
        replicate_mean: by_k.index(m.k).map_or(f64::NAN, |i| by_k.means[i]),
        ratio_to_optimum: optimum.map(|r| r.value),
        ratio_to_optimum_low: optimum.map(|r| r.low),
        ratio_to_optimum_high: optimum.map(|r| r.high),
        replicates_to_order: by_k.replicates_to_order(m.k),
    }
}

/// The predicted optimum, the measured minimum and the set of possible minima of one size.
fn minimum_note(group: &[Measurement], best: &Measurement, by_k: &KReplicates) -> String {
    let set: Vec<String> = by_k
        .ks
        .iter()
        .zip(&by_k.in_set)
        .filter(|(_, inside)| **inside)
        .map(|(k, _)| k.to_string())
        .collect();
    let replicates = by_k.rates.iter().map(Vec::len).min().unwrap_or(0);
    let to_order = by_k
        .ks
        .iter()
        .filter(|&&k| by_k.in_min_set(k))
        .filter_map(|&k| by_k.replicates_to_order(k))
        .max()
        .map(|t| {
            format!(
                "; ordering it would take about {t} replicate sweeps of {} queries",
                best.queries
            )
        })
        .unwrap_or_default();
    format!(
        "{:.2} bits/key: predicted optimum k = (m/n) ln 2 = {:.2}; measured minimum at k = {} ({}); \
         k that may be the minimum at 95% over {replicates} replicate sweeps: {{{}}}{to_order}",
        group[0].bits_per_key,
        optimal_k(group[0].bits_per_key),
        best.k,
        percent(best.fpr_measured),
        set.join(", ")
    )
}

/// Per size: the classic curve, the optimum as a vertical line, the measured points with
/// the measured minimum highlighted.
fn plate(rows: &[SweepKRow]) -> Plate {
    let mut series = Vec::new();
    let (low, high) = crate::plot::extent(
        rows.iter()
            .flat_map(|r| [r.measurement.ci_low, r.measurement.ci_high]),
    );
    for (i, (_, group)) in super::grouped(rows, |r| r.measurement.m).iter().enumerate() {
        let c = Colour::Palette(i);
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
            series,
        }],
    }
}
