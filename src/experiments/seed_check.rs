//! seed-check: the two checks behind the essay's plate.
//!
//! (a) Scale n and m together at fixed m/n and k: the rates must agree. Test: Cochran's Q
//! over the rows, each with variance `p(1-p)/q + (k p / f)² Var(X/m)` (query noise plus the
//! fill's own spread), against χ² with S-1 degrees of freedom; fails when `P < 0.001`.
//! (b) Re-draw only the hash seed (32 seeds by default): each filter's count must be binomial
//! around its own `fill^k`, and the counts must follow their distribution over filters.
//! Four tests, each failing when its p is below 0.001:
//! - dispersion: `Σ z_i²` of the `z_from_fill` against χ² with S degrees of freedom, in
//!   either tail (over-dispersed: correlated probes; too regular);
//! - Stouffer against the own bits: `Σ z_from_fill / √S`, two-sided normal; a shift of every
//!   seed in one direction (a hash whose probes collide) adds up here;
//! - Stouffer against the exact rate: `Σ z_exact / √S`, each z with the between-filter
//!   variance;
//! - goodness of fit: `Σ (c_i - μ)²/σ²` of the counts against the mixture of binomials over
//!   filters (`μ`, `σ²`, kurtosis from `theory::fpr_moments`), matched to `a·χ²_ν`
//!   ([`count_goodness_of_fit`]), upper tail. Only for the plain bit arrays, whose
//!   between-filter distribution is modelled.

use clap::Args;
use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Experiment, MeasuredPlan, Outcome, Verdict, measurement_columns_narrow};
use crate::error::{Error, Result};
use crate::params::preflight::Cost;
use crate::params::{
    Count, MAX_COUNT, MeasureParams, ShapeParams, ValueList, bits_for, check_count, positive_list,
    require,
};
use crate::pipeline::measurement::{Measurement, Setup, Spread};
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Series};
use crate::report::{Column, Record, percent};
use crate::stats::{CountDistribution, chi_square_sf, cochran_q, count_goodness_of_fit, stouffer};
use crate::structures::{Rate, Sizing};
use crate::theory;

pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: u32 = 7;
pub const DEFAULT_SEEDS: u64 = 32;
pub const DEFAULT_SCALES: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 4.0];
/// Significance level of both checks.
pub const ALPHA: f64 = 0.001;

pub struct SeedCheck;

/// Flags and file keys of seed-check.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct SeedCheckParams {
    #[command(flatten)]
    #[serde(flatten)]
    pub shape: ShapeParams,
    #[command(flatten)]
    #[serde(flatten)]
    pub measure: MeasureParams,
    /// Number of hash seeds for the re-seeding check [2..=1000, default 32]
    #[arg(long, allow_hyphen_values = true)]
    pub seeds: Option<Count>,
    /// Factors by which n and m are scaled together [> 0, <= 1000]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub scales: Option<ValueList>,
    /// Design by target rate instead of m and k: the classic sizing for n keys at this rate,
    /// and a program behind exec: sizes itself from (n, fpr) [(0, 1)]
    #[arg(long, allow_hyphen_values = true)]
    pub fpr: Option<f64>,
}

/// A seed-check row: which check it belongs to and its z within that check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SeedCheckRow {
    #[serde(flatten)]
    pub measurement: Measurement,
    /// "scale" or "hash-seed".
    pub check: String,
    /// scale: `(x_i - x̄) / sd_i` against the weighted mean; hash-seed: `z_from_fill`.
    pub z_check: f64,
}

/// The measurement columns of seed-check's narrow view: the n that varies under scale, the
/// rate with its interval, the exact rate, its z and the bits check (bits per key and k are
/// the same in every row: the title gives them).
const NARROW: [&str; 6] = ["n", "measured", "95% CI", "exact", "z exact", "bits"];

impl Record for SeedCheckRow {
    fn columns() -> Vec<Column> {
        let mut columns = crate::columns![Self;
            "check" => Plain(check),
            "hash seed" => Plain(measurement.hash_seed),
        ];
        columns.extend(measurement_columns_narrow(&NARROW));
        columns.extend(crate::columns![Self; "z check" => Fixed(z_check, 2)]);
        columns
    }
}

/// The scaled setups first, then the re-seeded ones.
pub struct SeedCheckPlan {
    /// The title, but for its shape (`n = N, m = M, k = K`), which [`SeedCheckPlan::title`]
    /// puts first.
    title: String,
    shape: (u64, u64, u32),
    /// `--fpr` when the structure sizes itself by it (a peer crate, a program): the title
    /// then gives its own m and k.
    sized_itself: Option<f64>,
    scales: usize,
    measured: MeasuredPlan,
}

impl Experiment for SeedCheck {
    type Params = SeedCheckParams;
    type Plan = SeedCheckPlan;
    const NAME: &'static str = "seed-check";
    const ABOUT: &'static str =
        "Scale n and m together, then re-draw only the hash seed; prints a verdict";
    const AFTER_HELP: &'static str = "Examples:
  bloomlab seed-check
  bloomlab seed-check --hash low-bits --m 32768 --k 4

Tests (each at significance 0.001):
  scale:     Cochran's Q of the rates, each with the variance of Measurement::fpr_variance,
             against chi-square with S-1 degrees of freedom;
  hash-seed: sum of z^2 of each count against its own fill^k, against chi-square with
             S degrees of freedom, failing in either tail;
             Stouffer's sum z/sqrt(S) of the z against the own fill^k, two-sided;
             Stouffer's sum of the z against the exact rate (between-filter variance);
             goodness of fit of the counts to their distribution over filters (plain bit
             arrays only).

Exit status 1 when either check fails.";

    fn plan(params: &SeedCheckParams) -> Result<SeedCheckPlan> {
        params
            .measure
            .single_trial("seed-check draws its own hash seeds (see --seeds)")?;
        let filter = params.measure.checked_filter()?;
        if !filter.accepts_seed() {
            return Err(Error::invalid(
                "filter",
                filter,
                "re-drawing the hash seed means nothing to a crate that takes no seed",
                "a filter that accepts a seed",
            ));
        }
        let n = params.measure.n_or(&params.shape, DEFAULT_N)?;
        let sizing = match super::by_rate::rate(params.fpr, &params.shape)? {
            Some(fpr) => Sizing::Rate(Rate { fpr, n }),
            None => Sizing::Shape {
                m: params.shape.size_or(n, &DEFAULT_BITS_PER_KEY)?,
                k: params.shape.k_or(DEFAULT_K)?,
            },
        };
        let scales = positive_list("scales", params.scales.as_ref(), &DEFAULT_SCALES, 1000.0)?;
        let reason = "the scale check needs at least two scales";
        require(
            "scales",
            scales.len(),
            scales.len() >= 2,
            reason,
            "a list of 2 or more factors",
        )?;
        let seeds = check_count(
            "seeds",
            params.seeds.map_or(DEFAULT_SEEDS, |s| s.0),
            2,
            1000,
        )?;
        let base = params.measure.setup(n, sizing)?;
        let (m, k) = match sizing {
            Sizing::Shape { m, k } => (m, k),
            Sizing::Rate(_) => base.spec.nominal(),
        };
        let mut setups = Vec::new();
        for &s in &scales {
            let scaled_n = check_count("scales", (n as f64 * s).round() as u64, 1, MAX_COUNT)?;
            let mut scaled = Setup {
                n: scaled_n,
                ..base.clone()
            };
            scaled.spec.sizing = match base.spec.sizing {
                Sizing::Rate(rate) => Sizing::Rate(Rate {
                    n: scaled_n,
                    ..rate
                }),
                Sizing::Shape { .. } => Sizing::Shape {
                    m: bits_for(scaled_n, m as f64 / n as f64)?,
                    k,
                },
            };
            setups.push(scaled);
        }
        // The hash seeds `hash_seed + j`, as trials draw them.
        setups.extend(super::rows_of(std::slice::from_ref(&base), seeds));
        let measured = MeasuredPlan::new(&params.measure, setups)?;
        Ok(SeedCheckPlan {
            title: measured.caption.clone(),
            shape: (n, m, k),
            sized_itself: match base.spec.sizing {
                Sizing::Rate(rate) => Some(rate.fpr),
                Sizing::Shape { .. } => None,
            },
            scales: scales.len(),
            measured,
        })
    }

    fn cost(plan: &Self::Plan) -> Cost {
        plan.measured.cost()
    }

    fn measured(plan: &mut Self::Plan) -> Vec<&mut dyn super::Units> {
        vec![&mut plan.measured]
    }

    fn run(plan: &SeedCheckPlan, progress: &ProgressBar) -> Result<Outcome> {
        let measurements = plan.measured.measure(Self::NAME, progress)?;
        let (scaled, reseeded) = measurements.split_at(plan.scales);
        let (scale, z_checks) = scale_verdict(scaled);
        let mut rows: Vec<SeedCheckRow> = scaled
            .iter()
            .zip(z_checks)
            .map(|(r, z)| SeedCheckRow {
                measurement: r.clone(),
                check: "scale".into(),
                z_check: z,
            })
            .collect();
        rows.extend(reseeded.iter().map(|r| SeedCheckRow {
            measurement: r.clone(),
            check: "hash-seed".into(),
            z_check: r.z_from_fill,
        }));
        let mut verdicts = vec![scale];
        verdicts.extend(hash_seed_verdicts(reseeded));
        let mut notes: Vec<String> = verdicts.iter().map(|v| v.check.clone()).collect();
        if reseeded
            .iter()
            .any(|r| r.fpr_between_filter_variance <= 0.0)
        {
            notes.push(
                "goodness of fit: not run, the distribution over filters of this structure is \
                 not modelled"
                    .into(),
            );
        }
        let spread = Spread::of(&reseeded.iter().collect::<Vec<_>>());
        notes.push(format!(
            "across hash seeds: mean {}, sd {} (binomial and fill noise predict {})",
            percent(spread.mean),
            percent(spread.sd),
            percent(spread.expected_sd)
        ));
        let title = plan.title(reseeded.first());
        let mut outcome = Outcome::new(&title, &rows, notes, plate(reseeded, &spread))?;
        outcome.verdicts = verdicts;
        Ok(outcome)
    }
}

/// "pass" or "FAIL" at the seed-check's [`ALPHA`].
fn verdict_word(p_value: f64, alpha: f64) -> &'static str {
    if p_value >= alpha { "pass" } else { "FAIL" }
}

/// The scale check (Cochran's Q) and each row's z against the weighted mean.
fn scale_verdict(scaled: &[Measurement]) -> (Verdict, Vec<f64>) {
    let estimates: Vec<(f64, f64)> = scaled
        .iter()
        .map(|r| (r.fpr_measured, r.fpr_variance()))
        .collect();
    let (q, pooled) = cochran_q(&estimates);
    let df = scaled.len() - 1;
    let p_value = chi_square_sf(q, df as f64);
    let check = format!(
        "scale check: {} (Cochran's Q = {q:.2}, df = {df}, P = {p_value:.3}; fail below {ALPHA})",
        verdict_word(p_value, ALPHA)
    );
    let zs = estimates
        .iter()
        .map(|(x, v)| (x - pooled) / v.sqrt())
        .collect();
    let verdict = Verdict {
        check,
        p_value,
        alpha: ALPHA,
    };
    (verdict, zs)
}

/// The hash-seed checks of the module, each a [`Verdict`] at [`ALPHA`] (the dispersion check
/// is two-sided: `P < α` or `P > 1 - α` is `2·min(P, 1 - P) < 2α`).
fn hash_seed_verdicts(reseeded: &[Measurement]) -> Vec<Verdict> {
    let seeds = reseeded.len();
    let dispersion: f64 = reseeded.iter().map(|r| r.z_from_fill.powi(2)).sum();
    let upper = chi_square_sf(dispersion, seeds as f64);
    let both = 2.0 * upper.min(1.0 - upper);
    let mut verdicts = vec![Verdict {
        check: format!(
            "hash-seed check: {} (Σz² = {dispersion:.2} against fill^k, df = {seeds}, P = {upper:.3}; fail outside [{ALPHA}, {}])",
            verdict_word(both, 2.0 * ALPHA),
            1.0 - ALPHA
        ),
        p_value: both,
        alpha: 2.0 * ALPHA,
    }];
    let zs = |z: fn(&Measurement) -> f64| reseeded.iter().map(z).collect::<Vec<_>>();
    for (against, z_of) in [
        ("own fill^k", (|r| r.z_from_fill) as fn(&Measurement) -> f64),
        ("exact rate, between-filter variance", |r| r.z_exact),
    ] {
        let (z, p_value) = stouffer(&zs(z_of));
        verdicts.push(Verdict {
            check: format!(
                "hash-seed Stouffer against the {against}: {} (Z = {z:.2}, S = {seeds}, P = {p_value:.2e}; fail below {ALPHA})",
                verdict_word(p_value, ALPHA)
            ),
            p_value,
            alpha: ALPHA,
        });
    }
    verdicts.extend(goodness_of_fit_verdict(reseeded));
    // A structure whose bits bloomlab cannot read (a program) has no fill^k to check against.
    for verdict in verdicts.iter_mut().filter(|v| v.p_value.is_nan()) {
        let name = verdict
            .check
            .split(':')
            .next()
            .unwrap_or_default()
            .to_string();
        verdict.check = format!("{name}: n/a (the structure reports no rate from its bits)");
        verdict.p_value = 1.0;
    }
    verdicts
}

/// The counts of the re-seeded filters against their distribution over filters, for the
/// plain bit arrays (none for a structure without a between-filter variance).
fn goodness_of_fit_verdict(reseeded: &[Measurement]) -> Option<Verdict> {
    let first = reseeded.first()?;
    if reseeded
        .iter()
        .any(|r| r.fpr_between_filter_variance <= 0.0)
    {
        return None;
    }
    let model = CountDistribution::from_rate_moments(
        first.queries,
        theory::fpr_moments(first.n, first.m, first.k),
    );
    let counts: Vec<u64> = reseeded.iter().map(|r| r.false_positives).collect();
    let fit = count_goodness_of_fit(&counts, &model);
    Some(Verdict {
        check: format!(
            "hash-seed goodness of fit of the counts over filters: {} (T = {:.2}, {:.2}·χ² with df = {:.1}, P = {:.2e}; fail below {ALPHA})",
            verdict_word(fit.p_over, ALPHA),
            fit.statistic,
            fit.scale,
            fit.df,
            fit.p_over
        ),
        p_value: fit.p_over,
        alpha: ALPHA,
    })
}

impl SeedCheckPlan {
    /// The title with the design's shape, or for a structure that sized itself by `--fpr` the
    /// m and k it reports at n (those of `first`, the first re-seeded row).
    fn title(&self, first: Option<&Measurement>) -> String {
        let (n, m, k) = self.shape;
        match (self.sized_itself, first) {
            (Some(fpr), Some(r)) => format!(
                "seed-check: n = {n}, m = {}, k = {} as the filter reports them (sized for ε = {fpr}), {}",
                r.m, r.k, self.title
            ),
            _ => format!("seed-check: n = {n}, m = {m}, k = {k}, {}", self.title),
        }
    }
}

/// The rate per hash seed with the pooled rate and its interval as levels.
fn plate(seeds: &[Measurement], spread: &Spread) -> Plate {
    let span = crate::plot::extent(seeds.iter().map(|r| r.hash_seed as f64));
    let title = match seeds.first() {
        Some(r) => format!(
            "Rate per hash seed: n = {}, m = {}, k = {}, {} queries",
            r.n, r.m, r.k, r.queries
        ),
        None => String::new(),
    };
    let series = vec![
        Series::level(
            Some(format!("pooled rate {}", percent(spread.pooled))),
            Colour::Black,
            Mark::Line(2),
            spread.pooled,
            span,
        ),
        Series::level(
            Some("pooled 95% interval".into()),
            Colour::Black,
            Mark::Dashed(1),
            spread.pooled_low,
            span,
        ),
        Series::level(
            None,
            Colour::Black,
            Mark::Dashed(1),
            spread.pooled_high,
            span,
        ),
        Series::measured(
            None,
            Colour::Palette(0),
            seeds.iter().map(|r| (r.hash_seed as f64, r)),
        ),
    ];
    Plate {
        panels: vec![Panel {
            title,
            x: Axis::linear("hash seed").integer(),
            y: Axis::rate(),
            series,
        }],
    }
}
