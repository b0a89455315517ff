//! compare: every structure sized for the same n and target rate, side by side (the sizing
//! and measurement live in [`crate::experiments::compare::rows`]).

use clap::Args;
use indicatif::ProgressBar;
use serde::Deserialize;

use super::{Experiment, MeasuredPlan, Outcome, Units};
pub mod rows;

use crate::error::{Error, Result};
use crate::params::preflight::{self, Cost};
use crate::params::{Count, DEFAULT_QUERIES, SeedParams, ValueList, check_count, rates};
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Series, extent};
use rows::{CompareRow, DEFAULT_N, DEFAULT_RATES, TimingSizes, measure_rows, notes, plans};

pub struct Compare;

/// Flags and file keys of compare.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct CompareParams {
    /// Keys [1..=10^8, default 20000]
    #[arg(long, allow_hyphen_values = true)]
    pub n: Option<Count>,
    /// Target false-positive rates: a fraction in (0, 1), or a list [default 0.05,0.01,0.002,0.0001,0.000001]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub fpr: Option<ValueList>,
    /// Least number of absent queries; more are used where 100 false positives need them,
    /// up to 3·10^7 [1..=10^8, default 60000]
    #[arg(long, allow_hyphen_values = true)]
    pub queries: Option<Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub seeds: SeedParams,
    /// Also time each design, single-threaded, in a 40,000-bit table (about 0.1 s per
    /// structure and rate; timings are not reproducible, so files leave it off)
    #[arg(long)]
    #[serde(default)]
    pub timed: bool,
    /// With the timings, also in a 2^30-bit table, out of cache (128 MiB, 512 MiB for
    /// counters; about 10 s per structure and rate)
    #[arg(long)]
    #[serde(default)]
    pub timed_ram: bool,
}

/// A validated comparison.
pub struct ComparePlan {
    n: u64,
    rates: Vec<f64>,
    /// The target rate of each row of `measured`.
    targets: Vec<f64>,
    measured: MeasuredPlan,
    timed: bool,
    timed_ram: bool,
}

impl Experiment for Compare {
    type Params = CompareParams;
    type Plan = ComparePlan;
    const NAME: &'static str = "compare";
    const ABOUT: &'static str =
        "Every structure sized for the same n and rate: space against the floor, rate, speed";
    const AFTER_HELP: &'static str =
        "Structures: every registered structure that can be sized for a target rate (see
--filter in `bloomlab sweep-size --help`), each by its own formula, then measured with at
least 100 expected false positives. With --timed each design (its bits per key and k) is
also timed, single-threaded, in a 40,000-bit table (in cache); --timed-ram adds a 2^30-bit
one (out of cache, seconds per structure and rate).

Examples:
  bloomlab compare --n 100000 --fpr 0.01
  bloomlab compare --n 20000 --fpr 0.05,0.01,0.002 --timed
  bloomlab compare --n 1000000 --fpr 0.001 --format markdown";

    fn plan(params: &CompareParams) -> Result<ComparePlan> {
        let n = check_count("n", params.n.map_or(DEFAULT_N, |n| n.0), 1, 100_000_000)?;
        let queries = params.queries.map_or(DEFAULT_QUERIES, |q| q.0);
        let rates = rates("fpr", params.fpr.as_ref(), &DEFAULT_RATES)?;
        // A design past the most hashes a structure takes is the rate's fault, not a --k.
        for (&fpr, kind) in rates
            .iter()
            .flat_map(|r| rows::designed().into_iter().map(move |k| (r, k)))
        {
            let k = match kind.design(n, fpr) {
                Ok((_, k)) if k > crate::hash::MAX_K => k.to_string(),
                Err(Error::InvalidParam {
                    name: "k", value, ..
                }) => value,
                _ => continue,
            };
            return Err(Error::invalid(
                "fpr",
                format!("{fpr:e}"),
                format!("{kind} at this rate would take k = {k} hashes"),
                format!(
                    "a larger rate: every structure takes at most {} hashes",
                    crate::hash::MAX_K
                ),
            ));
        }
        let queries = check_count("queries", queries, 1, 100_000_000)?;
        let seeds = (params.seeds.seed(), params.seeds.hash_seed());
        let (targets, setups) = plans(n, &rates, queries, seeds)?.into_iter().unzip();
        Ok(ComparePlan {
            n,
            rates,
            targets,
            measured: MeasuredPlan::once(setups),
            timed: params.timed || params.timed_ram,
            timed_ram: params.timed_ram,
        })
    }

    /// Every row's inserts and the queries of its work ([`MeasuredPlan::cost`]); timed,
    /// 1.5·10^7 more per row (5 passes of 10^6 keys, three operations); timed out of cache,
    /// 10^8 inserts to fill the table and 9·10^6 more.
    fn cost(plan: &ComparePlan) -> Cost {
        let (timed, timed_ram) = match (plan.timed, plan.timed_ram) {
            (_, true) => (1.5e7, 1.1e8),
            (true, false) => (1.5e7, 0.0),
            _ => (0.0, 0.0),
        };
        let mut cost = plan.measured.cost();
        for setup in &plan.measured.setups {
            let ((m, k), kind) = (setup.spec.nominal(), setup.filter().clone());
            cost.key_operations += preflight::weighted_operations(kind.clone(), k, m, timed)
                + preflight::weighted_operations(kind, k, 1 << 30, timed_ram);
        }
        if plan.timed_ram {
            cost.peak_bytes = cost.peak_bytes.max(2f64.powi(30) / 8.0 * 4.0);
        }
        cost
    }

    fn measured(plan: &mut ComparePlan) -> Vec<&mut dyn Units> {
        vec![&mut plan.measured]
    }

    fn run(plan: &ComparePlan, progress: &ProgressBar) -> Result<Outcome> {
        let timing = plan.timed.then(|| TimingSizes::bench(plan.timed_ram));
        let rows = measure_rows(&plan.targets, plan.measured.rows(), timing, progress)?;
        let mut notes = notes(plan.n, &plan.rates, &rows);
        if plan.timed {
            notes.push(if plan.timed_ram {
                "ns are single-threaded CPU time, batched, for the same design in a 40,000-bit table (cache) and a 2^30-bit one (RAM)".into()
            } else {
                "ns are single-threaded CPU time, batched, for the same design in a 40,000-bit table (cache); --timed-ram adds a 2^30-bit one".into()
            });
        }
        let title = format!(
            "compare: n = {}, every structure sized for each target rate",
            plan.n
        );
        Outcome::new(title, &rows, notes, plate(&rows))
    }
}

/// Rate against bits per key spent, per structure, beside the information floor `2^-bits`.
/// Structures whose median spend is over twice the median structure's (the counting filter's
/// four-bit counters) get a panel of their own, so that they do not squeeze the others into a
/// fraction of the axis.
fn plate(rows: &[CompareRow]) -> Plate {
    let kinds = super::distinct(rows.iter().map(|r| r.measurement.filter.to_string()));
    let spend = |kind: &str| {
        median(
            rows.iter()
                .filter(|r| r.measurement.filter.to_string() == kind)
                .map(|r| r.bits_per_key_spent)
                .collect(),
        )
    };
    let typical = median(kinds.iter().map(|kind| spend(kind)).collect());
    let (hungry, lean): (Vec<usize>, Vec<usize>) =
        (0..kinds.len()).partition(|&i| spend(&kinds[i]) > 2.0 * typical);
    let (n, queries) = rows
        .first()
        .map_or((0, 0), |r| (r.measurement.n, r.measurement.queries));
    let mut panels = vec![panel(
        rows,
        &kinds,
        &lean,
        format!("Rate against space per structure: n = {n}, {queries} queries or more"),
    )];
    if !hungry.is_empty() {
        let names: Vec<&str> = hungry.iter().map(|&i| kinds[i].as_str()).collect();
        panels.push(panel(
            rows,
            &kinds,
            &hungry,
            format!(
                "Over twice the median structure's space: {}, n = {n}",
                names.join(", ")
            ),
        ));
    }
    Plate { panels }
}

/// The median of `values` (the mean of the middle two for an even count; 0 when empty).
fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => 0.0,
        len if len % 2 == 1 => values[len / 2],
        len => (values[len / 2 - 1] + values[len / 2]) / 2.0,
    }
}

/// One panel: the floor over the panel's span, then each chosen structure (`chosen` indexes
/// `kinds`, and keeps its colour and marker across panels).
fn panel(rows: &[CompareRow], kinds: &[String], chosen: &[usize], title: String) -> Panel {
    let shown: Vec<&CompareRow> = rows
        .iter()
        .filter(|r| {
            chosen
                .iter()
                .any(|&i| kinds[i] == r.measurement.filter.to_string())
        })
        .collect();
    let (low, high) = extent(shown.iter().map(|r| r.bits_per_key_spent));
    let lowest = shown
        .iter()
        .map(|r| r.measurement.ci_low)
        .filter(|&v| v > 0.0)
        .fold(1.0, f64::min);
    let highest = shown
        .iter()
        .map(|r| r.measurement.ci_high)
        .fold(0.0, f64::max);
    let (from, to) = (low * 0.95, high * 1.05);
    let floor = Series::new(
        Some("information floor: rate 2^-bits".into()),
        Colour::Black,
        Mark::Line(2),
        (0..=400)
            .map(|j| from + (to - from) * f64::from(j) / 400.0)
            .map(|bits| (bits, (-bits).exp2()))
            .filter(|&(_, rate)| rate >= lowest / 1.6 && rate <= highest * 1.6),
    );
    let mut series = vec![floor];
    for &i in chosen {
        let c = Colour::Palette(i);
        let group: Vec<&&CompareRow> = shown
            .iter()
            .filter(|r| r.measurement.filter.to_string() == kinds[i])
            .collect();
        series.push(Series::new(
            None,
            c,
            Mark::Line(1),
            group
                .iter()
                .map(|r| (r.bits_per_key_spent, r.measurement.fpr_measured)),
        ));
        series.push(Series::measured(
            Some(kinds[i].clone()),
            c,
            group.iter().map(|r| (r.bits_per_key_spent, &r.measurement)),
        ));
    }
    Panel {
        title,
        x: Axis::linear("bits per key spent"),
        y: Axis::rate(),
        series,
    }
}
