//! The claims ledger: each quantitative claim of the essay, the value this run measured
//! with its 95% interval, the experiment and rows it comes from, and a verdict, written by
//! `reproduce` as `results/claims.md` and `results/claims.csv`.
//!
//! What "about" means is fixed here, before anything is measured, as a band the true value
//! must lie in; nothing in it is read from a result:
//! - "about X times" (k = 1 about 12 times the optimum; 1.5 and 2 times the keys about 6
//!   and 17 times the design rate; k = 14 about 292 times; the flawed hash about 4.8 times
//!   its bits) and "sensitivity k ln 2": within ±10% of X.
//! - "the fill is about 63% / 28%": within ±1 percentage point.
//! - "within a few per cent" (k = 6 and 8 of the optimum's rate; the classic formula of the
//!   measured rate) and "1.44 times the information floor": within ±5%.
//! - "the rate falls exponentially in the space" (at fixed k = 4 the rate is
//!   `(1 - e^{-kn/m})^k`, not exactly exponential): one exponential in m/n, fitted by least
//!   squares on the log rates (rows weighted equally), falls, and describes every row to
//!   within a factor of 1.25.
//! - "the minimum is at k = 7 = round((m/n) ln 2)": the 95% set of k that may have the
//!   smallest rate (sweep-k's replicates) is exactly that k.
//!
//! A verdict compares the 95% interval with the band, an equivalence test: `supported` when
//! the interval lies inside the band, `not supported` when it lies wholly outside,
//! `undetermined` when it straddles an edge, with the sample that would decide it
//! ([`sample_factor_to_decide`]: the estimate taken as the truth, 80% power). Values about
//! the design (rates averaged over filters) carry the between-filter variance; values about
//! one filter (the flawed hash against its own bits) do not.

mod essay;
mod structures;

use serde::Serialize;

use super::summary::{Found, Run, Summary};
use crate::error::Result;
use crate::pipeline::measurement::CONFIDENCE;
use crate::report::files::Staging;
use crate::report::{self, Column, Format, Record, Table, significant};
use crate::stats::{Z95, sample_factor_to_decide};

/// Every claim: the essay's, in its order, then those about named structures.
pub fn ledger(runs: &[Run]) -> Vec<ClaimRow> {
    let mut rows = essay::ledger(runs);
    rows.extend(structures::ledger(runs));
    rows
}

/// The claims ledger, one of `reproduce`'s [`Summary`] files.
pub struct Claims;

/// One claim of the essay against this run.
#[derive(Clone, Debug, Serialize, schemars::JsonSchema)]
pub struct ClaimRow {
    /// The essay's statement.
    pub claim: String,
    /// What "about" means for it, fixed before measuring: the band the true value must lie
    /// in for the claim to hold.
    pub tolerance: String,
    /// Lower end of the band.
    pub band_low: f64,
    /// Upper end of the band.
    pub band_high: f64,
    /// The measured value (NaN, shown empty, when the source was not run).
    pub measured: f64,
    /// Lower end of the 95% interval of `measured`.
    pub interval_low: f64,
    /// Upper end of the 95% interval of `measured`.
    pub interval_high: f64,
    /// How the value and its interval were computed.
    pub basis: String,
    /// The experiment (results file) and rows the value comes from.
    pub source: String,
    /// `supported` (interval inside the band), `not supported` (wholly outside) or
    /// `undetermined` (straddling an edge, or not measured).
    pub verdict: String,
    /// For an undetermined claim: the sample that would decide it (80% power, the
    /// estimate taken as the truth).
    pub to_decide: String,
}

impl Record for ClaimRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "claim" => Plain(claim),
            "tolerance" => Plain(tolerance),
            "measured" => Plain(measured),
            "verdict" => Plain(verdict),
        ]
    }
}

impl Summary for Claims {
    fn file_names(&self) -> &'static [&'static str] {
        &["claims.md", "claims.csv"]
    }

    /// Writes nothing for a suite that runs none of the claims' sources (`results/wild`).
    fn write(&self, runs: &[Run], _found: &[Found], staging: &mut Staging) -> Result<Vec<String>> {
        let Some(rows) = judged(runs) else {
            return Ok(Vec::new());
        };
        let table = Table::from_rows("claims", &rows)?;
        staging.write(
            "claims.csv",
            report::render(&table, Format::CSV)?.as_bytes(),
        )?;
        staging.write("claims.md", markdown(&rows).as_bytes())?;
        Ok(Vec::new())
    }
}

/// The ledger of a suite that runs at least one of the claims' sources; `None` for one that
/// runs none (`results/wild`), which has no ledger.
pub fn judged(runs: &[Run]) -> Option<Vec<ClaimRow>> {
    let names = |run: &Run| essay::SOURCES.contains(&run.definition.name.as_str());
    runs.iter().any(names).then(|| ledger(runs))
}

/// The verdicts of the ledger, worst first: `not supported`, then `undetermined`, then
/// `supported`.
pub const VERDICTS: [&str; 3] = ["not supported", "undetermined", "supported"];

/// The band a claim's true value must lie in.
struct Band {
    low: f64,
    high: f64,
    words: String,
}

impl Band {
    /// `nominal ± fraction`, in words "within ±10% of 12".
    fn relative(nominal: f64, fraction: f64) -> Band {
        Band {
            low: nominal * (1.0 - fraction),
            high: nominal * (1.0 + fraction),
            words: format!(
                "within ±{}% of {}",
                significant(fraction * 100.0),
                significant(nominal)
            ),
        }
    }
}

/// The sample behind an estimate, which the factor that would decide a claim scales.
#[derive(Clone, Copy)]
enum Sample {
    /// Independent filters of this many queries each (0: queries do not enter).
    Filters(u64, u64),
    /// Queries on one filter (a statement about that filter).
    Queries(u64),
    /// Replicate sweeps of sweep-k.
    Sweeps(u64, u64),
}

impl Sample {
    fn scaled(self, factor: f64) -> String {
        let times = |x: u64| (factor * x as f64).ceil().max(x as f64 + 1.0);
        match self {
            Sample::Filters(f, 0) => format!("about {} filters", times(f)),
            Sample::Filters(f, q) => format!("about {} filters of {q} queries", times(f)),
            Sample::Queries(q) => format!("about {} queries on this filter", times(q)),
            Sample::Sweeps(t, q) => format!("about {} replicate sweeps of {q} queries", times(t)),
        }
    }
}

/// A measured value with its 95% interval, symmetric on the log scale (`log`) or linear.
struct Estimate {
    value: f64,
    low: f64,
    high: f64,
    log: bool,
    sample: Sample,
    basis: String,
    source: String,
}

/// Why a claim could not be measured in this run.
type Measured = std::result::Result<Estimate, String>;

/// The ledger row of `claim` against `band`: the interval inside it, outside it, or across
/// an edge (with the sample that would decide it).
fn judge(claim: &str, band: Band, measured: Measured) -> ClaimRow {
    let estimate = match measured {
        Ok(estimate) => estimate,
        Err(reason) => return unmeasured(claim, band, reason),
    };
    let Estimate {
        value, low, high, ..
    } = estimate;
    let (verdict, to_decide) = if value.is_nan() || high < band.low || low > band.high {
        ("not supported", String::new())
    } else if band.low <= low && high <= band.high {
        ("supported", String::new())
    } else {
        let scale = |x: f64| if estimate.log { x.ln() } else { x };
        let se = (scale(high) - scale(low)) / (2.0 * Z95);
        let distance = [band.low, band.high]
            .into_iter()
            .map(|edge| (scale(value) - scale(edge)).abs())
            .filter(|d| d.is_finite())
            .fold(f64::INFINITY, f64::min);
        let factor = sample_factor_to_decide(se, distance, CONFIDENCE);
        let to_decide = if factor.is_finite() {
            estimate.sample.scaled(factor)
        } else {
            "no sample: the estimate sits on the band's edge".into()
        };
        ("undetermined", to_decide)
    };
    ClaimRow {
        measured: value,
        interval_low: low,
        interval_high: high,
        basis: estimate.basis,
        source: estimate.source,
        verdict: verdict.into(),
        to_decide,
        ..unmeasured(claim, band, String::new())
    }
}

/// The row of a claim whose source did not run or lacks the rows it needs.
fn unmeasured(claim: &str, band: Band, reason: String) -> ClaimRow {
    ClaimRow {
        claim: claim.into(),
        tolerance: band.words,
        band_low: band.low,
        band_high: band.high,
        measured: f64::NAN,
        interval_low: f64::NAN,
        interval_high: f64::NAN,
        basis: String::new(),
        source: reason,
        verdict: "undetermined".into(),
        to_decide: "run the experiment (see source)".into(),
    }
}

impl ClaimRow {
    /// The measured value and its 95% interval as the ledger shows them, `1.16 [1.11, 1.24]`;
    /// empty when not measured.
    pub fn measured_text(&self) -> String {
        if self.measured.is_nan() {
            return String::new();
        }
        let interval = if self.interval_low.is_nan() {
            String::new()
        } else {
            format!(
                " [{}, {}]",
                significant(self.interval_low),
                significant(self.interval_high)
            )
        };
        format!("{}{interval}", significant(self.measured))
    }
}

/// How many rows have each of [`VERDICTS`], in that order.
pub fn verdict_counts(rows: &[ClaimRow]) -> [usize; 3] {
    VERDICTS.map(|verdict| rows.iter().filter(|r| r.verdict == verdict).count())
}

/// The rows worst verdict first ([`VERDICTS`]), the essay's order within each verdict.
pub fn worst_first(rows: &[ClaimRow]) -> Vec<&ClaimRow> {
    let mut sorted: Vec<&ClaimRow> = rows.iter().collect();
    sorted.sort_by_key(|r| VERDICTS.iter().position(|v| *v == r.verdict));
    sorted
}

/// The ledger as Markdown: the count of each verdict, what they mean, then one table row
/// per claim, verdict first and worst first.
fn markdown(rows: &[ClaimRow]) -> String {
    let counts: Vec<String> = VERDICTS
        .iter()
        .zip(verdict_counts(rows))
        .map(|(verdict, count)| format!("**{count} {verdict}**"))
        .collect();
    let mut out = format!(
        "### claims: the essay's quantitative claims against this run\n\n\
         {} of {} claims.\n\n\
         Each claim's tolerance was fixed before measuring (src/suite/claims.rs). \
         `supported`: the 95% interval lies inside the tolerance; `not supported`: wholly \
         outside it; `undetermined`: across an edge, with the sample that would decide it \
         (80% power). Worst verdict first.\n\n\
         | verdict | claim | measured [95% interval] | tolerance | to decide | source | basis |\n\
         |---|---|---|---|---|---|---|\n",
        counts.join(", "),
        rows.len()
    );
    for r in worst_first(rows) {
        out.push_str(&format!(
            "| {} | {} | {} | {} | {} | {} | {} |\n",
            r.verdict,
            r.claim,
            r.measured_text(),
            r.tolerance,
            r.to_decide,
            r.source,
            r.basis
        ));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn estimate(low: f64, high: f64) -> Measured {
        Ok(Estimate {
            value: (low * high).sqrt(),
            low,
            high,
            log: true,
            sample: Sample::Filters(1, 60_000),
            basis: String::new(),
            source: String::new(),
        })
    }

    #[test]
    fn an_interval_inside_outside_or_across_the_band() {
        let band = || Band::relative(12.0, 0.1);
        assert_eq!(
            judge("c", band(), estimate(11.0, 13.0)).verdict,
            "supported"
        );
        assert_eq!(
            judge("c", band(), estimate(13.5, 15.0)).verdict,
            "not supported"
        );
        assert_eq!(
            judge("c", band(), estimate(8.0, 10.0)).verdict,
            "not supported"
        );
        let across = judge("c", band(), estimate(12.0, 14.0));
        assert_eq!(across.verdict, "undetermined");
        // se = ln(14/12)/3.92 = 0.0393, distance ln(13.2/√168) = 0.0183:
        // F = ((1.96 + 0.84)·se/d)² = 36.4.
        assert_eq!(across.to_decide, "about 37 filters of 60000 queries");
        let missing = judge("c", band(), Err("sweep-k: not run".into()));
        assert_eq!(
            (missing.verdict.as_str(), missing.source.as_str()),
            ("undetermined", "sweep-k: not run")
        );
    }
}
