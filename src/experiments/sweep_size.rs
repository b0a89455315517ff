//! sweep-size: the rate against the space, at one or several k.

use clap::Args;
use indicatif::ProgressBar;
use serde::Deserialize;

use super::{Experiment, MeasuredPlan, Outcome};
use crate::error::Result;
use crate::params::preflight::Cost;
use crate::params::{MeasureParams, ShapeParams};
use crate::pipeline::measurement::Measurement;
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Series, extent};
use crate::report::percent;
use crate::structures::{Rate, Sizing};
use crate::theory;

/// Essay defaults: n = 4000, k = 4, 4..12 bits per key in steps of 2.
pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_K: [u32; 1] = [4];
pub const DEFAULT_BITS_PER_KEY: [f64; 5] = [4.0, 6.0, 8.0, 10.0, 12.0];

pub struct SweepSize;

/// Flags and file keys of sweep-size.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct SweepSizeParams {
    #[command(flatten)]
    #[serde(flatten)]
    pub shape: ShapeParams,
    #[command(flatten)]
    #[serde(flatten)]
    pub measure: MeasureParams,
}

impl Experiment for SweepSize {
    type Params = SweepSizeParams;
    type Plan = (u64, MeasuredPlan);
    const NAME: &'static str = "sweep-size";
    const ABOUT: &'static str =
        "Rate and fill against bits per key (the space), for one or several k";
    const AFTER_HELP: &'static str = "Examples:
  bloomlab sweep-size
  bloomlab sweep-size --k 4,6,8 --bits-per-key 2..16 --format csv --out curve.csv
  bloomlab sweep-size --hash low-bits --m 32768 --k 4 --strict";

    /// The setups, k-major; `--m` replaces the bits-per-key list with one size.
    fn plan(params: &SweepSizeParams) -> Result<Self::Plan> {
        let n = params.measure.n_or(&params.shape, DEFAULT_N)?;
        let sizes = params.shape.sizes_or(n, &DEFAULT_BITS_PER_KEY)?;
        let filter = params.measure.checked_filter()?;
        let sizes_itself = filter.refusal_of_shape()?;
        if let (Some(said), Some(k)) = (&sizes_itself, &params.shape.k) {
            return Err(super::by_rate::k_refused(&k.0, Self::NAME, filter, said));
        }
        let mut setups = Vec::new();
        for k in params.shape.k_list_or(&DEFAULT_K)? {
            for &m in &sizes {
                // A program that sizes itself takes each size as the rate it gives at the
                // classic optimum k.
                let sizing = match sizes_itself {
                    Some(_) => Sizing::Rate(Rate {
                        fpr: theory::fpr_at_optimum(m as f64 / n as f64),
                        n,
                    }),
                    None => Sizing::Shape { m, k },
                };
                setups.push(params.measure.setup(n, sizing)?);
            }
        }
        Ok((n, MeasuredPlan::new(&params.measure, setups)?))
    }

    fn cost((_, plan): &Self::Plan) -> Cost {
        plan.cost()
    }

    fn measured((_, plan): &mut Self::Plan) -> Vec<&mut dyn super::Units> {
        vec![plan]
    }

    fn run((n, plan): &Self::Plan, progress: &ProgressBar) -> Result<Outcome> {
        let rows = plan.measure(Self::NAME, progress)?;
        let mut notes = Vec::new();
        if let (Some(first), Some(last)) = (rows.first(), rows.last())
            && rows.len() > 1
            && !first.fill_measured.is_nan()
        {
            notes.push(format!(
                "fill {} at {:.2} bits/key, {} at {:.2}; rate {} → {}",
                percent(first.fill_measured),
                first.bits_per_key,
                percent(last.fill_measured),
                last.bits_per_key,
                percent(first.fpr_measured),
                percent(last.fpr_measured)
            ));
        }
        plan.trial_notes(&rows, &mut notes);
        let title = format!("sweep-size: n = {n}, {}", plan.caption);
        Outcome::new(title, &rows, notes, plate(&rows))
    }
}

/// Per k: the classic curve, each row's rate from its own bits, and the measured points.
fn plate(rows: &[Measurement]) -> Plate {
    let groups = super::grouped(rows, |r| r.k);
    let mut series = Vec::new();
    for (i, &(k, ref group)) in groups.iter().enumerate() {
        let (c, n) = (Colour::Palette(i), group[0].n);
        let span = extent(group.iter().map(|r| r.bits_per_key));
        series.push(Series::curve(
            format!("k = {k}: classic (1-e^(-kn/m))^k"),
            c,
            Mark::Line(2),
            span,
            |bits| {
                let m = ((n as f64 * bits).round() as u64).max(1);
                theory::fpr_classic(n, m, k)
            },
        ));
        series.push(Series::new(
            Some(format!("k = {k}: fill^k")),
            c,
            Mark::Triangle,
            group.iter().map(|r| (r.bits_per_key, r.fpr_from_fill)),
        ));
        series.push(Series::measured(
            None,
            c,
            group.iter().map(|r| (r.bits_per_key, *r)),
        ));
    }
    let k_list: Vec<String> = groups.iter().map(|(k, _)| k.to_string()).collect();
    let title = match rows.first() {
        Some(r) => format!(
            "Rate against space: k = {}, m = n × bits per key, n = {}, {} queries, hash {}",
            k_list.join(", "),
            r.n,
            r.queries,
            r.hash
        ),
        None => String::new(),
    };
    Plate {
        panels: vec![Panel {
            title,
            x: Axis::linear("bits per key (m/n)"),
            y: Axis::rate(),
            series,
        }],
    }
}
