//! overfill: a filter designed for `design_n` keys receives s times as many.

use clap::Args;
use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Experiment, MeasuredPlan, Outcome, measurement_columns_narrow};
use crate::error::{Error, Result};
use crate::params::preflight::Cost;
use crate::params::{MAX_COUNT, MeasureParams, ShapeParams, ValueList, check_count, positive_list};
use crate::pipeline::measurement::{CONFIDENCE, Measurement};
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Series, extent};
use crate::report::{Column, Record, percent};
use crate::stats::averaged_ratio_to_constant;
use crate::structures::{Rate, Sizing};
use crate::theory;

pub const DEFAULT_DESIGN_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: [u32; 1] = [7];
pub const DEFAULT_FACTORS: [f64; 7] = [0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0];

pub struct Overfill;

/// Flags and file keys of overfill.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct OverfillParams {
    #[command(flatten)]
    #[serde(flatten)]
    pub shape: ShapeParams,
    #[command(flatten)]
    #[serde(flatten)]
    pub measure: MeasureParams,
    /// Keys the filter is designed for (m = design-n x bits per key) [default 4000]
    #[arg(long, allow_hyphen_values = true)]
    pub design_n: Option<crate::params::Count>,
    /// Overfill factors s: keys inserted = s x design-n [> 0, <= 100]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub factors: Option<ValueList>,
    /// Design by target rate instead of m and k: each structure's design for design-n keys at
    /// this rate; a peer crate or a program behind exec: sizes itself from (design-n, fpr) [(0, 1)]
    #[arg(long, allow_hyphen_values = true)]
    pub fpr: Option<f64>,
}

/// An overfill row: the measurement at `n = round(s · design_n)` beside the closed form.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct OverfillRow {
    #[serde(flatten)]
    pub measurement: Measurement,
    /// Keys the filter was designed for (its m and k are chosen for them).
    pub design_n: u64,
    /// s, the inserted keys over the design n.
    pub overfill_factor: f64,
    /// `1 - 2^{-s}`.
    pub fill_closed_form: f64,
    /// `(1 - 2^{-s})^k`.
    pub fpr_closed_form: f64,
    /// The structure's exact rate at the design n ([`crate::structures::FilterKind::fpr_exact`]).
    pub fpr_design: f64,
    /// `fpr_measured / fpr_design`: what s times the keys cost, as a multiple of the rate
    /// the filter was designed for.
    pub ratio_to_design: f64,
    /// Lower end of the 95% interval of `ratio_to_design` as a statement about the design
    /// (the rate averaged over filters): `ln(p̂/ε) ± 1.96·sqrt((1-p̂)/c + V/p̂²)`, V the row's
    /// `fpr_between_filter_variance` ([`averaged_ratio_to_constant`]); V = 0 (binomial only)
    /// for a structure whose spread between filters is not modelled.
    pub ratio_to_design_low: f64,
    /// Upper end of the 95% interval of `ratio_to_design` (see `ratio_to_design_low`).
    pub ratio_to_design_high: f64,
    /// `fpr_closed_form(s) / fpr_closed_form(1) = ((1 - 2^{-s}) / (1/2))^k`.
    pub ratio_closed_form: f64,
    /// `k ln 2`: the rate's relative change per unit of fractional overfill.
    pub sensitivity: f64,
}

impl Record for OverfillRow {
    fn columns() -> Vec<Column> {
        let mut columns = crate::columns![Self; "s" => Fixed(overfill_factor, 2)];
        let narrow = ["k", "fill", "measured", "95% CI", "z exact", "bits"];
        columns.extend(measurement_columns_narrow(&narrow));
        columns.extend(crate::columns![Self;
            "fill 1-2^-s" => Percent(fill_closed_form).wide_only(),
            "(1-2^-s)^k" => Percent(fpr_closed_form).wide_only(),
            "× design" => Times(ratio_to_design).wide_only(),
            "× design 95%" => TimesInterval(ratio_to_design_low, ratio_to_design_high),
            "× closed" => Times(ratio_closed_form).wide_only(),
        ]);
        columns
    }
}

/// What overfill measures: the design, the factors, the setups (k-major, then s).
pub struct OverfillPlan {
    design_n: u64,
    m: u64,
    ks: Vec<u32>,
    factors: Vec<f64>,
    /// `--fpr` of a structure that sizes itself by it ([`crate::structures::Spec::sizes_itself`]).
    sized_itself: Option<f64>,
    measured: MeasuredPlan,
}

/// s as inserted: `n / design_n`, the factor asked for unless rounding n to whole keys
/// moved it (design-n 3 at s = 1.1 inserts 3 keys: s = 1), so that the closed forms
/// predict for the keys really inserted.
fn inserted_factor(asked: f64, n: u64, design_n: u64) -> f64 {
    if asked * design_n as f64 == n as f64 {
        asked
    } else {
        n as f64 / design_n as f64
    }
}

fn design_n(params: &OverfillParams) -> Result<u64> {
    match (params.design_n.map(|d| d.0), params.shape.n.map(|n| n.0)) {
        (Some(d), Some(n)) if d != n => Err(Error::invalid(
            "n",
            n,
            format!("conflicts with --design-n {d}"),
            "give one of --n and --design-n, or equal values",
        )),
        (Some(d), _) => check_count("design_n", d, 1, MAX_COUNT),
        (None, Some(n)) => check_count("n", n, 1, MAX_COUNT),
        (None, None) => Ok(DEFAULT_DESIGN_N),
    }
}

impl Experiment for Overfill {
    type Params = OverfillParams;
    type Plan = OverfillPlan;
    const NAME: &'static str = "overfill";
    const ABOUT: &'static str = "A filter designed for --design-n keys receiving s times as many";
    const AFTER_HELP: &'static str = "Examples:
  bloomlab overfill
  bloomlab overfill --k 14 --factors 1,1.5,2";

    fn plan(params: &OverfillParams) -> Result<OverfillPlan> {
        let design_n = design_n(params)?;
        let sizings = match super::by_rate::rate(params.fpr, &params.shape)? {
            Some(fpr) => vec![Sizing::Rate(Rate { fpr, n: design_n })],
            None => {
                let m = params.shape.size_or(design_n, &DEFAULT_BITS_PER_KEY)?;
                let ks = params.shape.k_list_or(&DEFAULT_K)?;
                ks.into_iter().map(|k| Sizing::Shape { m, k }).collect()
            }
        };
        let factors = positive_list("factors", params.factors.as_ref(), &DEFAULT_FACTORS, 100.0)?;
        let mut setups = Vec::new();
        for &sizing in &sizings {
            for &s in &factors {
                let n = (s * design_n as f64).round().max(1.0) as u64;
                let n = check_count("factors", n, 1, MAX_COUNT)?;
                setups.push(params.measure.setup(n, sizing)?);
            }
        }
        // The shape asked, or the design the rate gave.
        let designed = |sizing: Sizing| match sizing {
            Sizing::Shape { m, k } => (m, k),
            Sizing::Rate(_) => setups[0].spec.nominal(),
        };
        let sized_itself = match setups[0].spec.sizing {
            Sizing::Rate(rate) if setups[0].spec.sizes_itself() => Some(rate.fpr),
            _ => None,
        };
        Ok(OverfillPlan {
            design_n,
            m: designed(sizings[0]).0,
            ks: sizings.iter().map(|&sizing| designed(sizing).1).collect(),
            factors,
            sized_itself,
            measured: MeasuredPlan::new(&params.measure, setups)?,
        })
    }

    fn cost(plan: &Self::Plan) -> Cost {
        plan.measured.cost()
    }

    fn measured(plan: &mut Self::Plan) -> Vec<&mut dyn super::Units> {
        vec![&mut plan.measured]
    }

    fn run(plan: &OverfillPlan, progress: &ProgressBar) -> Result<Outcome> {
        let measurements = plan.measured.measure(Self::NAME, progress)?;
        let (design_n, m) = (plan.design_n, plan.m);
        let trials = plan.measured.trials as usize;
        let rows: Vec<OverfillRow> = measurements
            .iter()
            .enumerate()
            .map(|(i, measurement)| {
                let s = inserted_factor(
                    plan.factors[i / trials % plan.factors.len()],
                    measurement.n,
                    design_n,
                );
                let k = measurement.k;
                // A structure that sized itself by the rate: the rate is its design.
                let fpr_design = plan
                    .sized_itself
                    .unwrap_or_else(|| measurement.filter.fpr_exact(design_n, measurement.m, k));
                let cost = averaged_ratio_to_constant(
                    measurement.false_positives,
                    measurement.queries,
                    measurement.fpr_between_filter_variance,
                    fpr_design,
                    CONFIDENCE,
                );
                OverfillRow {
                    design_n,
                    overfill_factor: s,
                    fill_closed_form: theory::fill_closed_form(s),
                    fpr_closed_form: theory::fpr_closed_form(s, k),
                    fpr_design,
                    ratio_to_design: cost.value,
                    ratio_to_design_low: cost.low,
                    ratio_to_design_high: cost.high,
                    ratio_closed_form: theory::fpr_closed_form(s, k)
                        / theory::fpr_closed_form(1.0, k),
                    sensitivity: theory::overfill_sensitivity(k as f64),
                    measurement: measurement.clone(),
                }
            })
            .collect();
        let mut notes: Vec<String> = shown_ks(&plan.ks, plan.sized_itself, &measurements)
            .into_iter()
            .map(|k| {
                format!(
                    "k = {k}: sensitivity k ln 2 = {:.2} (relative rate change per unit of fractional overfill)",
                    theory::overfill_sensitivity(k as f64)
                )
            })
            .collect();
        plan.measured.trial_notes(&measurements, &mut notes);
        let title = format!(
            "overfill: {}, designed for n = {design_n}, {}",
            shown_m(m, plan.sized_itself, &measurements),
            plan.measured.caption
        );
        Outcome::new(title, &rows, notes, plate(&rows))
    }
}

/// The title's m: the design's, or for a structure that sized itself by `--fpr` the m it
/// reports (one for every row), else that it sized itself.
fn shown_m(design: u64, sized_itself: Option<f64>, measurements: &[Measurement]) -> String {
    let Some(fpr) = sized_itself else {
        return format!("m = {design}");
    };
    match measurements.first().map(|r| r.m) {
        Some(m) if measurements.iter().all(|r| r.m == m) => {
            format!("m = {m} as the filter reports it (sized for ε = {fpr})")
        }
        _ => format!("m sized by the filter for ε = {fpr}"),
    }
}

/// The ks the notes speak of: the design's, or for a structure that sized itself by `--fpr`
/// the ks it reports, in order of first appearance.
fn shown_ks(design: &[u32], sized_itself: Option<f64>, measurements: &[Measurement]) -> Vec<u32> {
    match sized_itself {
        Some(_) => super::distinct(measurements.iter().map(|r| r.k)),
        None => design.to_vec(),
    }
}

/// Two panels: the rate against s (closed form, design rate, measured), and the fill
/// against s (closed form `1 - 2^-s`, one half at the design point, measured).
fn plate(rows: &[OverfillRow]) -> Plate {
    let span = extent(rows.iter().map(|r| r.overfill_factor));
    let x_label = "overfill factor s = n / design n";
    let mut rate = Vec::new();
    let mut fill = vec![
        Series::curve(
            "closed form 1 - 2^-s",
            Colour::Black,
            Mark::Line(2),
            span,
            theory::fill_closed_form,
        ),
        Series::level(None, Colour::Black, Mark::Dashed(1), 0.5, span),
    ];
    for (i, &(k, ref group)) in super::grouped(rows, |r| r.measurement.k).iter().enumerate() {
        let c = Colour::Palette(i);
        rate.push(Series::curve(
            format!("k = {k}: closed form (1-2^-s)^k"),
            c,
            Mark::Line(2),
            span,
            |s| theory::fpr_closed_form(s, k),
        ));
        let design = group[0].fpr_design;
        rate.push(Series::level(
            Some(format!("k = {k}: design rate {}", percent(design))),
            c,
            Mark::Dashed(1),
            design,
            span,
        ));
        rate.push(Series::measured(
            None,
            c,
            group.iter().map(|r| (r.overfill_factor, &r.measurement)),
        ));
        fill.push(Series::new(
            Some(format!("k = {k}: measured fill")),
            c,
            Mark::Cross,
            group
                .iter()
                .map(|r| (r.overfill_factor, r.measurement.fill_measured)),
        ));
    }
    let title = match rows.first() {
        Some(r) => format!(
            "Overfill: m = {}, designed for n = {}, {} queries",
            r.measurement.m, r.design_n, r.measurement.queries
        ),
        None => String::new(),
    };
    Plate {
        panels: vec![
            Panel {
                title,
                x: Axis::linear(x_label),
                y: Axis::rate(),
                series: rate,
            },
            Panel {
                title: "Fill against overfill: 1 - 2^-s, one half at the design point".into(),
                x: Axis::linear(x_label),
                y: Axis {
                    ticks: crate::plot::Ticks::Percent,
                    ..Axis::linear("fraction of bits set").within(0.0, 1.0)
                },
                series: fill,
            },
        ],
    }
}
