//! The essay's experiments. Each turns [`Params`] into setups, measures them with the shared
//! core, and returns typed rows; formatting is the reporter's job.

pub mod audit;
pub mod overfill;
pub mod seed_check;
pub mod sweep_k;
pub mod sweep_size;

use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::error::Result;
use crate::measure::{Measurement, Setup, measure};
use crate::params::Params;
use crate::report::{Cell, Column, Record, Table, col};

/// The experiments by name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Experiment {
    SweepSize,
    SweepK,
    Overfill,
    SeedCheck,
    Compare,
    Audit,
}

impl Experiment {
    pub const ALL: [Experiment; 6] = [
        Experiment::SweepSize,
        Experiment::SweepK,
        Experiment::Overfill,
        Experiment::SeedCheck,
        Experiment::Compare,
        Experiment::Audit,
    ];

    /// The subcommand name.
    pub fn name(self) -> &'static str {
        match self {
            Experiment::SweepSize => "sweep-size",
            Experiment::SweepK => "sweep-k",
            Experiment::Overfill => "overfill",
            Experiment::SeedCheck => "seed-check",
            Experiment::Compare => "compare",
            Experiment::Audit => "audit",
        }
    }

    /// Runs the experiment; `progress` advances by one per measured row.
    pub fn run(self, params: &Params, progress: &ProgressBar) -> Result<Outcome> {
        let trials = params.trials()?;
        if let Some(filter) = params.filter.filter(|f| !f.accepts_seed())
            && (trials > 1 || self == Experiment::SeedCheck)
        {
            return Err(crate::Error::invalid(
                "filter",
                filter,
                "re-drawing the hash seed (seed-check, --trials) means nothing to a crate that takes no seed",
                "a filter that accepts a seed, or --trials 1",
            ));
        }
        let mut outcome = match self {
            Experiment::SweepSize => sweep_size::run(params, progress),
            Experiment::SweepK => sweep_k::run(params, progress),
            Experiment::Overfill => overfill::run(params, progress),
            Experiment::SeedCheck if trials > 1 => Err(crate::Error::invalid(
                "trials",
                trials,
                "seed-check draws its own hash seeds (see --seeds)",
                "1 for seed-check",
            )),
            Experiment::SeedCheck => seed_check::run(params, progress),
            Experiment::Compare => run_compare(params, progress),
            Experiment::Audit if trials > 1 => Err(crate::Error::invalid(
                "trials",
                trials,
                "audit measures each crate once per load",
                "1 for audit",
            )),
            Experiment::Audit => run_audit(params, false, progress),
        }?;
        if trials > 1 {
            let summaries = trial_summaries(&outcome.measurements(), trials as usize);
            outcome.notes.extend(summaries);
        }
        Ok(outcome)
    }
}

named_enum!(Experiment, "experiment");

/// The compare experiment: every structure at each target rate, untimed (so reproducible).
fn run_compare(params: &Params, progress: &ProgressBar) -> Result<Outcome> {
    use crate::compare::{DEFAULT_N, DEFAULT_RATES, compare};
    let n = params.n_or(DEFAULT_N)?;
    let rates = params.rates_or(&DEFAULT_RATES)?;
    let rows = compare(
        n,
        &rates,
        params.queries()?,
        params.seed(),
        params.hash_seed(),
        None,
        progress,
    )?;
    let notes = crate::compare::notes(n, &rates, &rows);
    Ok(Outcome {
        title: format!("compare: n = {n}, every structure sized for each target rate"),
        rows: Rows::Compare(rows),
        notes,
        verdicts: Vec::new(),
    })
}

/// The audit of the shipped crates; `timed` adds ns per query (not reproducible, so the
/// committed experiment is untimed).
pub fn run_audit(params: &Params, timed: bool, progress: &ProgressBar) -> Result<Outcome> {
    let plan = audit::AuditPlan::of(params, timed)?;
    let rows = audit::run(&plan, progress)?;
    Ok(Outcome {
        title: format!(
            "audit: each crate configured for n = {} at its target rate, filled to {} times n; {}",
            plan.n,
            plan.loads
                .iter()
                .map(|l| format!("{l}"))
                .collect::<Vec<_>>()
                .join(", "),
            "queries expect at least 100 false positives at the promise"
        ),
        notes: audit::notes(&rows),
        rows: Rows::Audit(rows),
        verdicts: Vec::new(),
    })
}

/// The typed rows of one experiment.
#[derive(Clone, Debug)]
pub enum Rows {
    SweepSize(Vec<Measurement>),
    SweepK(Vec<sweep_k::SweepKRow>),
    Overfill(Vec<overfill::OverfillRow>),
    SeedCheck(Vec<seed_check::SeedCheckRow>),
    Compare(Vec<crate::compare::CompareRow>),
    Audit(Vec<audit::AuditRow>),
}

/// An experiment-level statistical check (seed-check's two): `p_value` is the probability,
/// were its hypothesis true, of a result at least as far from it (two-sided where the check
/// is), and the check fails when `p_value < alpha`.
#[derive(Clone, Debug, PartialEq)]
pub struct Verdict {
    /// The line the reader sees, with the verdict and its statistic.
    pub check: String,
    pub p_value: f64,
    pub alpha: f64,
}

impl Verdict {
    pub fn passed(&self) -> bool {
        self.p_value >= self.alpha
    }
}

/// What an experiment produced: its rows, notes for the reader, and its verdicts.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub title: String,
    pub rows: Rows,
    pub notes: Vec<String>,
    /// Experiment-level checks (seed-check's); empty for most experiments.
    pub verdicts: Vec<Verdict>,
}

impl Outcome {
    /// The lines of the verdicts that failed; empty when all pass.
    pub fn failures(&self) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|v| !v.passed())
            .map(|v| v.check.clone())
            .collect()
    }

    /// The measurements of every row, in order.
    pub fn measurements(&self) -> Vec<&Measurement> {
        match &self.rows {
            Rows::SweepSize(rows) => rows.iter().collect(),
            Rows::SweepK(rows) => rows.iter().map(|r| &r.measurement).collect(),
            Rows::Overfill(rows) => rows.iter().map(|r| &r.measurement).collect(),
            Rows::SeedCheck(rows) => rows.iter().map(|r| &r.measurement).collect(),
            Rows::Compare(rows) => rows.iter().map(|r| &r.measurement).collect(),
            Rows::Audit(rows) => rows.iter().map(|r| &r.measurement).collect(),
        }
    }

    /// One line per row whose measured rate departs from its own fill (`bits_check = fail`).
    pub fn bits_failures(&self) -> Vec<String> {
        self.bits_failures_at(crate::measure::BITS_CHECK_Z)
    }

    /// One line per row with `|z_from_fill| > z_bound`.
    pub fn bits_failures_at(&self, z_bound: f64) -> Vec<String> {
        self.measurements()
            .into_iter()
            .enumerate()
            .filter(|(_, m)| !m.bits_ok_at(z_bound))
            .map(|(i, m)| {
                format!(
                    "row {} (n={}, m={}, k={}, hash={}): measured {} vs fill^k {} (z = {:.1})",
                    i + 1,
                    m.n,
                    m.m,
                    m.k,
                    m.hash,
                    crate::report::percent(m.fpr_measured),
                    crate::report::percent(m.fpr_from_fill),
                    m.z_from_fill
                )
            })
            .collect()
    }

    /// The rows as a reporter table, notes included.
    pub fn table(&self) -> Result<Table> {
        let mut table = match &self.rows {
            Rows::SweepSize(rows) => Table::from_rows(&self.title, rows),
            Rows::SweepK(rows) => Table::from_rows(&self.title, rows),
            Rows::Overfill(rows) => Table::from_rows(&self.title, rows),
            Rows::SeedCheck(rows) => Table::from_rows(&self.title, rows),
            Rows::Compare(rows) => Table::from_rows(&self.title, rows),
            Rows::Audit(rows) => Table::from_rows(&self.title, rows),
        }?;
        table.notes = self.notes.clone();
        Ok(table)
    }
}

/// Measures every setup `--trials` times (hash seeds `hash_seed + t`), in parallel, keeping
/// their order: the trials of a setup are consecutive rows.
pub fn measure_all(
    experiment: Experiment,
    params: &Params,
    setups: &[Setup],
    progress: &ProgressBar,
) -> Result<Vec<Measurement>> {
    let trials = params.trials()?;
    let setups: Vec<Setup> = setups
        .iter()
        .flat_map(|s| {
            (0..trials).map(move |t| Setup {
                hash_seed: s.hash_seed.wrapping_add(t),
                ..*s
            })
        })
        .collect();
    progress.inc_length(setups.len() as u64);
    setups
        .par_iter()
        .map(|setup| {
            let row = measure(experiment.name(), setup);
            progress.inc(1);
            row
        })
        .collect()
}

/// One line per group of `trials` consecutive rows: its [`Spread`](crate::measure::Spread).
pub fn trial_summaries(rows: &[&Measurement], trials: usize) -> Vec<String> {
    use crate::report::percent;
    rows.chunks(trials)
        .map(|group| {
            let spread = crate::measure::Spread::of(group);
            let r = group[0];
            format!(
                "n={} m={} k={}: {} trials, mean {}, sd {} (noise predicts {}), pooled {} [{}, {}]",
                r.n,
                r.m,
                r.k,
                group.len(),
                percent(spread.mean),
                percent(spread.sd),
                percent(spread.expected_sd),
                percent(spread.pooled),
                percent(spread.pooled_low),
                percent(spread.pooled_high)
            )
        })
        .collect()
}

/// Columns every measured row shows in the human views.
pub fn measurement_columns() -> Vec<Column> {
    vec![
        col("n", Cell::Plain("n")),
        col("m", Cell::Plain("m")),
        col("bits/key", Cell::Fixed("bits_per_key", 2)),
        col("k", Cell::Plain("k")),
        col("fill", Cell::Percent("fill_measured")),
        col("E[fill]", Cell::Percent("fill_expected")),
        col("FP/queries", Cell::Ratio("false_positives", "queries")),
        col("measured", Cell::Percent("fpr_measured")),
        col("95% CI", Cell::Interval("ci_low", "ci_high")),
        col("classic", Cell::Percent("fpr_classic")),
        col("fill^k", Cell::Percent("fpr_from_fill")),
        col("exact", Cell::Percent("fpr_exact")),
        col("z classic", Cell::Fixed("z_classic", 2)),
        col("z fill^k", Cell::Fixed("z_from_fill", 2)),
        col("z exact", Cell::Fixed("z_exact", 2)),
        col("bits", Cell::Plain("bits_check")),
    ]
}

impl Record for Measurement {
    fn columns() -> Vec<Column> {
        measurement_columns()
    }
}

/// The common part of every title: the hash, queries and seeds.
pub fn setup_caption(params: &Params) -> Result<String> {
    Ok(format!(
        "hash {}, {} absent queries, seed {}, hash seed {}",
        params.hash(),
        params.queries()?,
        params.seed(),
        params.hash_seed()
    ))
}
