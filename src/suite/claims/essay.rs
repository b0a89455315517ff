//! The essay's claims, one function each, in the essay's order: where each takes its value
//! from (the runs' typed rows) and the band it is judged against (see the parent module for
//! what "about" means).

mod variants;

use serde::de::DeserializeOwned;
use serde_json::Value;

use super::{Band, ClaimRow, Estimate, Measured, Sample, judge, unmeasured};
use crate::experiments::compare::rows::CompareRow;
use crate::experiments::grouped;
use crate::experiments::overfill::OverfillRow;
use crate::experiments::sweep_k::SweepKRow;
use crate::hash::HashScheme;
use crate::pipeline::measurement::{CONFIDENCE, Measurement};
use crate::report::{self, significant};
use crate::stats::{self, Z95, averaged_ratio_to_constant, bonferroni_z, ratio_to_constant};
use crate::structures::FilterKind;
use crate::suite::summary::Run;
use crate::theory;

/// The experiments the claims take their values from.
pub const SOURCES: [&str; 9] = [
    "sweep-size",
    "sweep-k",
    "overfill",
    "overfill-strict",
    "overfill-scalable",
    "overfill-partitioned",
    "flawed-hash",
    "compare",
    "seed-check",
];

/// Every claim of the essay, in its order.
pub fn ledger(runs: &[Run]) -> Vec<ClaimRow> {
    let mut rows = vec![exponential_fall(runs)];
    rows.extend([(4.0, 0.63), (12.0, 0.28)].map(|(b, f)| fill_at(runs, b, f)));
    rows.push(minimum_at_optimum(runs));
    rows.extend([-1, 1].map(|offset| shallow(runs, offset)));
    rows.push(left_of_optimum(runs));
    rows.extend([(1.5, 6.0), (2.0, 17.0)].map(|(s, x)| overfill_cost(runs, "overfill", 7, s, x)));
    for (name, k) in [("overfill", 7), ("overfill-strict", 14)] {
        rows.push(sensitivity(runs, name, k));
    }
    rows.push(overfill_cost(runs, "overfill-strict", 14, 2.0, 292.0));
    rows.extend([
        variants::scalable_promise(runs),
        variants::partitioned_cliff(runs),
    ]);
    rows.push(flawed_hash(runs));
    rows.extend(information_floor(runs));
    rows.push(classic_accuracy(runs));
    rows
}

/// The run of the definition `name` (the essay's experiment files).
pub(super) fn run<'a>(runs: &'a [Run], name: &str) -> std::result::Result<&'a Run<'a>, String> {
    runs.iter()
        .find(|r| r.definition.name == name)
        .ok_or_else(|| format!("{name}: not run"))
}

/// The typed rows of a run, read back from its table's serialised records.
pub(super) fn typed_rows<R: DeserializeOwned>(run: &Run) -> Vec<R> {
    run.outcome
        .table
        .records
        .iter()
        .filter_map(|r| serde_json::from_value(Value::Object(r.clone())).ok())
        .collect()
}

/// A row of the essay's classic filter with the default hash.
fn is_classic(m: &Measurement) -> bool {
    m.filter == FilterKind::CLASSIC && m.hash.is(HashScheme::MultiplyShift)
}

/// `(ln p̃, Var ln p̂)` of a row as an estimate of its design's rate ([`stats::log_rate`]).
fn log_rate(m: &Measurement) -> (f64, f64) {
    stats::log_rate(m.false_positives, m.queries, m.fpr_between_filter_variance)
}

/// "The rate falls exponentially in the space": sweep-size's k = 4 rows.
fn exponential_fall(runs: &[Run]) -> ClaimRow {
    let band = Band {
        low: 1.0,
        high: 1.25,
        words: "one falling exponential in m/n within a factor 1.25 of every row".into(),
    };
    let measured = run(runs, "sweep-size").and_then(|run| {
        let rows: Vec<&Measurement> = run
            .outcome
            .measurements
            .iter()
            .filter(|m| is_classic(m) && m.k == 4)
            .collect();
        if rows.len() < 3 {
            return Err("sweep-size: fewer than three k = 4 rows".into());
        }
        Ok(exponential_fit(&rows))
    });
    judge("the rate falls exponentially in the space", band, measured)
}

/// Least squares of `ln p̂` on m/n, each row weighted equally (so that the fitted curve, and
/// whether it is "one exponential", is a property of the rates, not of how precisely each
/// was measured), and the largest departure of a row from it as a factor. The residuals
/// `r = (I - H) y`, `H_ij = 1/N + (x_i - x̄)(x_j - x̄)/S_xx`, have variances
/// `Σ_j (δ_ij - H_ij)² v_j` (v the rows' log-rate variances); the bounds are simultaneous
/// over the rows (Bonferroni).
fn exponential_fit(rows: &[&Measurement]) -> Estimate {
    let points: Vec<(f64, f64, f64)> = rows
        .iter()
        .map(|m| {
            let (y, v) = log_rate(m);
            (m.bits_per_key, y, v)
        })
        .collect();
    let line = Line::through(&points);
    let slope = line.slope;
    let slope_high = slope + Z95 * line.slope_variance.sqrt();
    let departures = line.departures(&points, bonferroni_z(1.0 - CONFIDENCE, rows.len()));
    let worst = departures.iter().map(|d| d.0).fold(0.0, f64::max);
    let low = departures
        .iter()
        .map(|d| (d.0 - d.1).max(0.0))
        .fold(0.0, f64::max);
    let high = departures.iter().map(|d| d.0 + d.1).fold(0.0, f64::max);
    // A fit that does not fall is no exponential fall, however well it fits.
    let falls = slope_high < 0.0;
    Estimate {
        value: if falls { worst.exp() } else { f64::NAN },
        low: low.exp(),
        high: high.exp(),
        log: true,
        sample: Sample::Filters(1, rows[0].queries),
        basis: format!(
            "largest departure of a row from the fitted exponential (rate × {} per bit per key, \
             95% upper {}), Bonferroni over {} rows; between-filter variance included",
            significant(slope.exp()),
            significant(slope_high.exp()),
            rows.len()
        ),
        source: format!(
            "sweep-size: k = 4, {}..{} bits/key",
            significant(rows[0].bits_per_key),
            significant(rows[rows.len() - 1].bits_per_key)
        ),
    }
}

/// The least-squares line through points `(x, y, var y)` (unweighted fit, the slope's
/// variance from each point's own variance).
struct Line {
    count: f64,
    x_bar: f64,
    y_bar: f64,
    sxx: f64,
    slope: f64,
    /// `Σ (x - x̄)² var_i / Sxx²`.
    slope_variance: f64,
}

impl Line {
    fn through(points: &[(f64, f64, f64)]) -> Self {
        let count = points.len() as f64;
        let x_bar = points.iter().map(|p| p.0).sum::<f64>() / count;
        let y_bar = points.iter().map(|p| p.1).sum::<f64>() / count;
        let sxx: f64 = points.iter().map(|p| (p.0 - x_bar).powi(2)).sum();
        let slope = points
            .iter()
            .map(|p| (p.0 - x_bar) * (p.1 - y_bar))
            .sum::<f64>()
            / sxx;
        let slope_variance = points
            .iter()
            .map(|p| (p.0 - x_bar).powi(2) * p.2)
            .sum::<f64>()
            / sxx.powi(2);
        Line {
            count,
            x_bar,
            y_bar,
            sxx,
            slope,
            slope_variance,
        }
    }

    /// Each point's absolute departure from the line and `z` times its standard error: the
    /// residual `e_i = Σ_j (δ_ij - h_ij) y_j` has variance `Σ_j (δ_ij - h_ij)² var_j`, with the
    /// hat matrix `h_ij = 1/N + (x_i - x̄)(x_j - x̄)/Sxx`.
    fn departures(&self, points: &[(f64, f64, f64)], z: f64) -> Vec<(f64, f64)> {
        let hat = |i: usize, j: usize| {
            1.0 / self.count + (points[i].0 - self.x_bar) * (points[j].0 - self.x_bar) / self.sxx
        };
        (0..points.len())
            .map(|i| {
                let p = points[i];
                let var: f64 = (0..points.len())
                    .map(|j| (f64::from(u8::from(i == j)) - hat(i, j)).powi(2) * points[j].2)
                    .sum();
                let residual = p.1 - self.y_bar - self.slope * (p.0 - self.x_bar);
                (residual.abs(), z * var.sqrt())
            })
            .collect()
    }
}

/// "The fill is about `fill` at `bits` bits per key" (sweep-size, k = 4).
fn fill_at(runs: &[Run], bits: f64, fill: f64) -> ClaimRow {
    let band = Band {
        low: fill - 0.01,
        high: fill + 0.01,
        words: format!("within ±1 point of {}%", significant(fill * 100.0)),
    };
    let measured = run(runs, "sweep-size").and_then(|run| {
        let (i, m) = run
            .outcome
            .measurements
            .iter()
            .enumerate()
            .find(|(_, m)| is_classic(m) && m.k == 4 && (m.bits_per_key - bits).abs() < 1e-9)
            .ok_or_else(|| format!("sweep-size: no k = 4 row at {bits} bits/key"))?;
        let half = Z95 * theory::fill_variance(m.m, m.k as f64 * m.n as f64).sqrt();
        Ok(Estimate {
            value: m.fill_measured,
            low: m.fill_measured - half,
            high: m.fill_measured + half,
            log: false,
            sample: Sample::Filters(1, 0),
            basis: "measured fill ± 1.96·sqrt(Var(X/m)), the exact spread between filters".into(),
            source: format!("sweep-size row {} (m = {}, n = {}, k = 4)", i + 1, m.m, m.n),
        })
    });
    let claim = format!(
        "the fill is about {}% at {} bits per key",
        significant(fill * 100.0),
        significant(bits)
    );
    judge(&claim, band, measured)
}

/// The sweep-k rows of the essay's sweep.
fn sweep_rows(runs: &[Run]) -> std::result::Result<Vec<SweepKRow>, String> {
    let rows: Vec<SweepKRow> = typed_rows(run(runs, "sweep-k")?);
    if rows.is_empty() {
        return Err("sweep-k: no rows".into());
    }
    Ok(rows)
}

/// The row of k in sweep-k, with its index.
fn k_row(rows: &[SweepKRow], k: u32) -> std::result::Result<(usize, &SweepKRow), String> {
    rows.iter()
        .enumerate()
        .find(|(_, r)| r.measurement.k == k)
        .ok_or_else(|| format!("sweep-k: k = {k} not swept"))
}

/// The whole optimum `round((m/n) ln 2)` of the sweep.
fn whole_optimum(rows: &[SweepKRow]) -> u32 {
    let m = &rows[0].measurement;
    theory::whole_optimal_k(m.n, m.m)
}

/// The replicates behind sweep-k's min set: the main sweep and its replicate sweeps.
fn sweeps_of(runs: &[Run]) -> u64 {
    run(runs, "sweep-k")
        .ok()
        .and_then(|r| r.definition.params.get("replicates"))
        .and_then(toml::Value::as_integer)
        .map_or(crate::experiments::sweep_k::DEFAULT_REPLICATES + 1, |r| {
            r as u64 + 1
        })
}

/// "The minimum is at k = 7 = round((m/n) ln 2)": sweep-k's 95% set of possible minima.
fn minimum_at_optimum(runs: &[Run]) -> ClaimRow {
    let claim = "the minimum is at k = 7 = round((m/n) ln 2)";
    let band = Band {
        low: 7.0,
        high: 7.0,
        words: "the 95% set of possible minima is {7}".into(),
    };
    let rows = match sweep_rows(runs) {
        Ok(rows) => rows,
        Err(reason) => return unmeasured(claim, band, reason),
    };
    let optimum = whole_optimum(&rows);
    let set: Vec<u32> = rows
        .iter()
        .filter(|r| r.in_min_set)
        .map(|r| r.measurement.k)
        .collect();
    let lowest = rows
        .iter()
        .min_by(|a, b| a.replicate_mean.total_cmp(&b.replicate_mean))
        .map_or(0, |r| r.measurement.k);
    let words: Vec<String> = set.iter().map(u32::to_string).collect();
    let (verdict, to_decide) = if optimum != 7 || !set.contains(&7) {
        ("not supported", String::new())
    } else if set == [7] {
        ("supported", String::new())
    } else {
        ("undetermined", sweeps_to_leave_alone(&rows, 7, lowest))
    };
    ClaimRow {
        measured: lowest as f64,
        interval_low: set.first().map_or(f64::NAN, |&k| k as f64),
        interval_high: set.last().map_or(f64::NAN, |&k| k as f64),
        basis: format!(
            "k of the lowest mean over {} replicate sweeps; the interval is the 95% set {{{}}} \
             (paired t-tests, Bonferroni); round((m/n) ln 2) = {optimum}",
            sweeps_of(runs),
            words.join(", ")
        ),
        source: "sweep-k: every k, main and replicate sweeps".into(),
        verdict: verdict.into(),
        to_decide,
        ..unmeasured(claim, band, String::new())
    }
}

/// The replicate sweeps that would leave k alone in the min set or out of it: order every
/// other member against k when k has the lowest mean, else k against the lowest.
fn sweeps_to_leave_alone(rows: &[SweepKRow], k: u32, lowest: u32) -> String {
    let needed = rows
        .iter()
        .filter(|r| r.in_min_set && (lowest != k) == (r.measurement.k == k))
        .filter_map(|r| r.replicates_to_order)
        .max();
    let queries = rows[0].measurement.queries;
    needed.map_or("unknown (no difference measured)".into(), |t| {
        format!("about {t} replicate sweeps of {queries} queries")
    })
}

/// The estimate of `ratio_to_optimum` of k in sweep-k.
fn ratio_to_optimum(runs: &[Run], k: u32) -> Measured {
    let rows = sweep_rows(runs)?;
    let optimum = whole_optimum(&rows);
    let (i, row) = k_row(&rows, k)?;
    let (Some(value), Some(low), Some(high)) = (
        row.ratio_to_optimum,
        row.ratio_to_optimum_low,
        row.ratio_to_optimum_high,
    ) else {
        return Err(format!("sweep-k: k* = {optimum} not swept"));
    };
    let sweeps = sweeps_of(runs);
    Ok(Estimate {
        value,
        low,
        high,
        log: true,
        sample: Sample::Sweeps(sweeps, row.measurement.queries),
        basis: format!(
            "mean rate of k = {k} over that of k* = {optimum} across {sweeps} replicate sweeps, \
             paired ratio interval (Student t)"
        ),
        source: format!("sweep-k row {} (k = {k}) over k = {optimum}", i + 1),
    })
}

/// "k = 6 and 8 within a few per cent of the minimum", k = k* + offset.
fn shallow(runs: &[Run], offset: i32) -> ClaimRow {
    let k = (7 + offset) as u32;
    let claim = format!("the minimum is shallow: k = {k} within a few per cent of k = 7");
    judge(&claim, Band::relative(1.0, 0.05), ratio_to_optimum(runs, k))
}

/// "k = 1 is about twelve times the optimum".
fn left_of_optimum(runs: &[Run]) -> ClaimRow {
    let claim = "steep on the left: k = 1 about 12 times the rate at the optimum";
    judge(claim, Band::relative(12.0, 0.1), ratio_to_optimum(runs, 1))
}

/// The overfill row of `name` at factor s and k, with its index.
fn overfill_row(
    runs: &[Run],
    name: &str,
    k: u32,
    s: f64,
) -> std::result::Result<(usize, OverfillRow), String> {
    typed_rows::<OverfillRow>(run(runs, name)?)
        .into_iter()
        .enumerate()
        .find(|(_, r)| r.measurement.k == k && (r.overfill_factor - s).abs() < 1e-9)
        .ok_or_else(|| format!("{name}: no row at s = {s}, k = {k}"))
}

/// "s times the keys cost about `nominal` times the design rate".
fn overfill_cost(runs: &[Run], name: &str, k: u32, s: f64, nominal: f64) -> ClaimRow {
    let measured = overfill_row(runs, name, k, s).map(|(i, row)| Estimate {
        value: row.ratio_to_design,
        low: row.ratio_to_design_low,
        high: row.ratio_to_design_high,
        log: true,
        sample: Sample::Filters(1, row.measurement.queries),
        basis: format!(
            "measured rate over the exact rate at the design n ({}), between-filter variance \
             included",
            report::percent(row.fpr_design)
        ),
        source: format!("{name} row {} (s = {s}, k = {k})", i + 1),
    });
    let claim = format!(
        "k = {k}: {} times the keys cost about {} times the design rate",
        significant(s),
        significant(nominal)
    );
    judge(&claim, Band::relative(nominal, 0.1), measured)
}

/// "The sensitivity is k ln 2 per unit of overfill": the central difference of `ln p̂`
/// between the factors nearest below and above s = 1.
fn sensitivity(runs: &[Run], name: &str, k: u32) -> ClaimRow {
    let nominal = theory::overfill_sensitivity(k as f64);
    let measured = run(runs, name).and_then(|run| {
        let rows: Vec<OverfillRow> = typed_rows(run);
        let nearest = |below: bool| {
            rows.iter()
                .filter(|r| r.measurement.k == k && (r.overfill_factor < 1.0) == below)
                .filter(|r| r.overfill_factor != 1.0)
                .min_by(|a, b| {
                    let d = |r: &OverfillRow| (r.overfill_factor - 1.0).abs();
                    d(a).total_cmp(&d(b))
                })
        };
        let (Some(a), Some(b)) = (nearest(true), nearest(false)) else {
            return Err(format!(
                "{name}: no factors either side of s = 1 at k = {k}"
            ));
        };
        let step = b.overfill_factor - a.overfill_factor;
        let ((ya, va), (yb, vb)) = (log_rate(&a.measurement), log_rate(&b.measurement));
        let slope = (yb - ya) / step;
        let half = Z95 * (va + vb).sqrt() / step;
        let closed = (theory::fpr_closed_form(b.overfill_factor, k).ln()
            - theory::fpr_closed_form(a.overfill_factor, k).ln())
            / step;
        Ok(Estimate {
            value: slope,
            low: slope - half,
            high: slope + half,
            log: false,
            sample: Sample::Filters(2, a.measurement.queries),
            basis: format!(
                "(ln p̂(s₊) - ln p̂(s₋)) / (s₊ - s₋), between-filter variance included, rows \
                 treated as independent (nested loads correlate: conservative); the closed \
                 form over the same step gives {}",
                significant(closed)
            ),
            source: format!(
                "{name}: s = {} and {}, k = {k}",
                a.overfill_factor, b.overfill_factor
            ),
        })
    });
    let claim = format!(
        "k = {k}: the sensitivity is k ln 2 = {} per unit of overfill",
        significant(nominal)
    );
    judge(&claim, Band::relative(nominal, 0.1), measured)
}

/// "The flawed hash measures about 4.8 times what its own bits predict".
fn flawed_hash(runs: &[Run]) -> ClaimRow {
    let measured = run(runs, "flawed-hash").and_then(|run| {
        let (i, m) = run
            .outcome
            .measurements
            .iter()
            .enumerate()
            .find(|(_, m)| m.hash.is(HashScheme::LowBits) && m.fpr_from_fill > 0.0)
            .ok_or("flawed-hash: no low-bits row")?;
        let r = ratio_to_constant(m.false_positives, m.queries, m.fpr_from_fill, CONFIDENCE);
        Ok(Estimate {
            value: r.value,
            low: r.low,
            high: r.high,
            log: true,
            sample: Sample::Queries(m.queries),
            basis: "measured rate over fill^k of this filter's own bits, Clopper–Pearson: a \
                    statement about this filter (the factor varies with the hash seed)"
                .into(),
            source: format!("flawed-hash row {} (m = {}, k = {})", i + 1, m.m, m.k),
        })
    });
    let claim = "the flawed hash measures about 4.8 times what its own bits predict";
    judge(claim, Band::relative(4.8, 0.1), measured)
}

/// "A Bloom filter spends 1.44 times the information floor": per target rate of compare,
/// the classic design's bits per key over `log2(1/p)` of the rate it measured.
fn information_floor(runs: &[Run]) -> Vec<ClaimRow> {
    let claim = |target: &str| format!("a Bloom filter spends 1.44 times the floor ({target})");
    let band = || Band::relative(1.0 / std::f64::consts::LN_2, 0.05);
    times_the_floor(runs, FilterKind::CLASSIC.name(), claim, band)
}

/// Per target rate of compare, the structure `name`'s bits per key over `log2(1/p)` of the
/// rate it measured, judged against `band`: one claim per target.
pub(super) fn times_the_floor(
    runs: &[Run],
    name: &str,
    claim: impl Fn(&str) -> String,
    band: impl Fn() -> Band,
) -> Vec<ClaimRow> {
    let Ok(run) = run(runs, "compare") else {
        return vec![unmeasured(
            &claim("compare"),
            band(),
            "compare: not run".into(),
        )];
    };
    typed_rows::<CompareRow>(run)
        .iter()
        .enumerate()
        .filter(|(_, r)| r.measurement.filter.name() == name)
        .map(|(i, row)| {
            let m = &row.measurement;
            let rate = averaged_ratio_to_constant(
                m.false_positives,
                m.queries,
                m.fpr_between_filter_variance,
                1.0,
                CONFIDENCE,
            );
            let spent = row.bits_per_key_spent;
            let target = report::percent(row.fpr_target);
            let estimate = Estimate {
                value: spent / -rate.value.log2(),
                low: spent / -rate.low.log2(),
                high: spent / -rate.high.log2(),
                log: true,
                sample: Sample::Filters(1, m.queries),
                basis: "bits per key spent over log2(1/p) of the measured rate, between-filter \
                        variance included"
                    .into(),
                source: format!("compare row {} ({name}, target {target})", i + 1),
            };
            judge(&claim(&target), band(), Ok(estimate))
        })
        .collect()
}

/// "The classic formula is accurate to a few per cent at these sizes": seed-check's filters
/// pooled, `Σc / Σ q·classic`.
fn classic_accuracy(runs: &[Run]) -> ClaimRow {
    let measured = run(runs, "seed-check").and_then(|run| {
        let classic = run.outcome.measurements.iter().filter(|m| is_classic(m));
        let filters: Vec<&Measurement> = grouped(classic, |m| (m.n, m.m, m.k, m.seed, m.hash_seed))
            .into_iter()
            .map(|(_, same)| same[0])
            .collect();
        if filters.is_empty() {
            return Err("seed-check: no classic rows".into());
        }
        let count: f64 = filters.iter().map(|m| m.false_positives as f64).sum();
        let expected: f64 = filters
            .iter()
            .map(|m| m.queries as f64 * m.fpr_classic)
            .sum();
        let variance: f64 = filters
            .iter()
            .map(|m| m.queries.pow(2) as f64 * m.fpr_variance())
            .sum();
        let value = count / expected;
        let half = Z95 * variance.sqrt() / count.max(0.5);
        Ok(Estimate {
            value,
            low: value * (-half).exp(),
            high: value * half.exp(),
            log: true,
            sample: Sample::Filters(filters.len() as u64, filters[0].queries),
            basis: format!(
                "false positives of {} distinct filters over their classic-formula expectation, \
                 binomial and between-filter variance",
                filters.len()
            ),
            source: "seed-check: every row (scales and hash seeds)".into(),
        })
    });
    let claim = "the classic formula is accurate to a few per cent at these sizes";
    judge(claim, Band::relative(1.0, 0.05), measured)
}
