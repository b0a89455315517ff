//! The experiments, one file each, behind one trait and one registry.
//!
//! An experiment's parameters are one struct that is both its command-line flags and its
//! experiment-file keys; [`Experiment::plan`] validates them (every refusal happens there,
//! before any work), and [`Experiment::run`] measures and returns an [`Outcome`]: typed rows
//! serialised into a table, the measurements behind them, notes, failed checks and a
//! [`Plate`] that [`crate::plot`] draws generically. Nothing outside this folder knows an
//! experiment by name: the CLI, `reproduce` and `check` go through [`registry`].

pub mod advise;
pub mod audit;
pub mod by_rate;
pub mod compare;
pub mod conform;
pub mod overfill;
pub mod seed_check;
pub mod size;
pub mod sweep_k;
pub mod sweep_size;
mod units;

use clap::{ArgMatches, Args, FromArgMatches};
use indicatif::ProgressBar;
use serde::de::DeserializeOwned;

use crate::error::{Error, Result};
use crate::params::preflight::Cost;
use crate::pipeline::measurement::{BITS_CHECK_ALPHA, Measurement, Setup, Work};
use crate::plot::Plate;
use crate::report::{Column, Record, Table};
pub use units::{Counted, MeasuredPlan, Units, keys_of_setup, measure_all, rows_of};

/// Every experiment, in the order the help and `reproduce` list them. Adding an experiment is
/// one file in this folder and one line here.
static REGISTRY: &[&dyn Registered] = &[
    &sweep_size::SweepSize,
    &sweep_k::SweepK,
    &overfill::Overfill,
    &seed_check::SeedCheck,
    &compare::Compare,
    &audit::Audit,
    &crate::experiments::advise::Advise,
];

pub fn registry() -> &'static [&'static dyn Registered] {
    REGISTRY
}

/// The experiment named `name` (a subcommand and an experiment file's `command`).
pub fn find(name: &str) -> Option<&'static dyn Registered> {
    REGISTRY.iter().copied().find(|e| e.name() == name)
}

/// The names of every experiment, for messages.
pub fn names() -> Vec<&'static str> {
    REGISTRY.iter().map(|e| e.name()).collect()
}

/// One experiment of the essay.
pub trait Experiment: Sync + 'static {
    /// Its flags and file keys (all optional: a missing one takes the experiment's default).
    type Params: Args + FromArgMatches + DeserializeOwned + Clone + Send + Sync + 'static;
    /// What [`Experiment::plan`] validated, ready to run.
    type Plan: Send + Sync + 'static;
    /// The subcommand and file name.
    const NAME: &'static str;
    /// One line for `--help`.
    const ABOUT: &'static str;
    /// Examples and notes shown after the flags in `--help`.
    const AFTER_HELP: &'static str;

    /// Validates the parameters: every refusal (exit 2) happens here, before any work.
    fn plan(params: &Self::Params) -> Result<Self::Plan>;
    /// Measures; `progress` counts the keys inserted and queried.
    fn run(plan: &Self::Plan, progress: &ProgressBar) -> Result<Outcome>;
    /// What running the plan is expected to spend, checked before it runs.
    fn cost(plan: &Self::Plan) -> Cost;
    /// A lower bound of [`Experiment::cost`] from the flags alone, checked before
    /// [`Experiment::plan`], for an experiment whose planning itself works at the run's size;
    /// nothing by default.
    fn planning_cost(_params: &Self::Params) -> Result<Cost> {
        Ok(Cost::default())
    }
    /// The units of work the run counts through, in the order it measures them: what
    /// `--shard` shares out and `merge` adds up. None (the default): the experiment does
    /// not shard.
    fn measured(_plan: &mut Self::Plan) -> Vec<&mut dyn Units> {
        Vec::new()
    }
}

/// A validated experiment, ready to run.
pub trait Prepared: Send + Sync {
    fn run(&self, progress: &ProgressBar) -> Result<Outcome>;
    fn cost(&self) -> Cost;
    /// The run's units of work ([`Experiment::measured`] in order); None for an
    /// experiment that does not shard.
    fn units(&mut self) -> Option<&mut dyn Units>;
}

/// An experiment behind the registry: the object-safe face of [`Experiment`].
pub trait Registered: Sync {
    fn name(&self) -> &'static str;
    fn about(&self) -> &'static str;
    /// The subcommand with the experiment's flags (the caller adds its output flags).
    fn command(&self) -> clap::Command;
    fn prepare_matches(&self, matches: &ArgMatches) -> Result<Box<dyn Prepared>>;
    /// [`Experiment::planning_cost`] of parsed flags.
    fn planning_cost(&self, matches: &ArgMatches) -> Result<Cost>;
    /// Validates an experiment file's `[params]` table; errors name the key.
    fn prepare_table(&self, table: &toml::Table) -> Result<Box<dyn Prepared>>;
    fn keys(&self) -> Vec<String>;
}

struct Ready<E: Experiment> {
    plan: E::Plan,
}

impl<E: Experiment> Prepared for Ready<E> {
    fn run(&self, progress: &ProgressBar) -> Result<Outcome> {
        E::run(&self.plan, progress)
    }
    fn cost(&self) -> Cost {
        E::cost(&self.plan)
    }
    fn units(&mut self) -> Option<&mut dyn Units> {
        match E::measured(&mut self.plan).is_empty() {
            true => None,
            false => Some(self),
        }
    }
}

/// Every measured plan of the experiment, one after the other.
impl<E: Experiment> Units for Ready<E> {
    fn rows(&mut self) -> Vec<Setup> {
        (E::measured(&mut self.plan).into_iter())
            .flat_map(|p| p.rows())
            .collect()
    }
    fn set_work(&mut self, mut work: &[Work]) {
        for plan in E::measured(&mut self.plan) {
            let rows = plan.rows().len();
            let (mine, rest) = work.split_at(rows.min(work.len()));
            plan.set_work(mine);
            work = rest;
        }
    }
    fn count(&mut self, progress: &ProgressBar) -> Result<Vec<Counted>> {
        let (mut counted, mut offset) = (Vec::new(), 0);
        for plan in E::measured(&mut self.plan) {
            let rows = plan.count(progress)?.into_iter();
            counted.extend(rows.map(|c| Counted {
                row: offset + c.row,
                ..c
            }));
            offset += plan.rows().len();
        }
        Ok(counted)
    }
    fn cost(&mut self) -> Cost {
        E::cost(&self.plan)
    }
}

fn params_of<E: Experiment>(matches: &ArgMatches) -> Result<E::Params> {
    E::Params::from_arg_matches(matches).map_err(|e| Error::Output(format!("{}: {e}", E::NAME)))
}

fn prepare<E: Experiment>(params: &E::Params) -> Result<Box<dyn Prepared>> {
    Ok(Box::new(Ready::<E> {
        plan: E::plan(params)?,
    }))
}

fn keys_of(command: &clap::Command) -> Vec<String> {
    command
        .get_arguments()
        .flat_map(|arg| {
            let id = arg.get_id().as_str().to_string();
            let aliases = arg
                .get_visible_aliases()
                .unwrap_or_default()
                .into_iter()
                .map(|a| a.replace('-', "_"));
            std::iter::once(id).chain(aliases)
        })
        .filter(|key| key != "help")
        .collect()
}

impl<E: Experiment> Registered for E {
    fn name(&self) -> &'static str {
        E::NAME
    }

    fn about(&self) -> &'static str {
        E::ABOUT
    }

    fn command(&self) -> clap::Command {
        E::Params::augment_args(
            clap::Command::new(E::NAME)
                .about(E::ABOUT)
                .after_help(E::AFTER_HELP),
        )
    }

    fn prepare_matches(&self, matches: &ArgMatches) -> Result<Box<dyn Prepared>> {
        prepare::<E>(&params_of::<E>(matches)?)
    }

    fn planning_cost(&self, matches: &ArgMatches) -> Result<Cost> {
        E::planning_cost(&params_of::<E>(matches)?)
    }

    fn prepare_table(&self, table: &toml::Table) -> Result<Box<dyn Prepared>> {
        let known = self.keys();
        for (key, value) in table {
            if !known.contains(key) {
                return Err(Error::InvalidKey {
                    key: key.clone(),
                    message: format!(
                        "unknown key for {} (allowed: {})",
                        E::NAME,
                        known.join(", ")
                    ),
                });
            }
            // Each key alone, so that a type error names its key.
            let alone = toml::Table::from_iter([(key.clone(), value.clone())]);
            if let Err(e) = toml::Value::Table(alone).try_into::<E::Params>() {
                return Err(Error::InvalidKey {
                    key: key.clone(),
                    message: e.message().trim().to_string(),
                });
            }
        }
        let params = toml::Value::Table(table.clone())
            .try_into::<E::Params>()
            .map_err(|e| Error::InvalidKey {
                key: String::new(),
                message: e.message().trim().to_string(),
            })?;
        prepare::<E>(&params)
    }

    fn keys(&self) -> Vec<String> {
        keys_of(&self.command())
    }
}

/// A row that carries one measurement (all the experiments' rows do).
pub trait Measured {
    fn measurement(&self) -> &Measurement;
}

impl Measured for Measurement {
    fn measurement(&self) -> &Measurement {
        self
    }
}

/// [`Measured`] of the rows that embed their measurement as the field `measurement`.
macro_rules! measured_rows {
    ($($row:ty),+) => {
        $(impl Measured for $row {
            fn measurement(&self) -> &Measurement {
                &self.measurement
            }
        })+
    };
}

measured_rows!(
    audit::AuditRow,
    compare::rows::CompareRow,
    overfill::OverfillRow,
    seed_check::SeedCheckRow,
    sweep_k::SweepKRow
);

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

/// A filter an experiment would have measured but could not on this machine (an adapter that
/// is not installed): the `filter` column its rows would carry, and why. A `filter` ending in
/// `/` stands for every filter whose column begins with it (a whole folder of adapters).
#[derive(Clone, Debug, PartialEq)]
pub struct Skipped {
    pub filter: String,
    pub reason: String,
}

impl Skipped {
    /// Whether a row whose `filter` column is `filter` is one of the skipped ones.
    pub fn covers(&self, filter: &str) -> bool {
        filter == self.filter || (self.filter.ends_with('/') && filter.starts_with(&self.filter))
    }
}

/// What an experiment produced: its rows as a table, the measurements behind them, its
/// verdicts, and its plate.
#[derive(Clone, Debug)]
pub struct Outcome {
    pub table: Table,
    pub measurements: Vec<Measurement>,
    /// Experiment-level checks (seed-check's); empty for most experiments.
    pub verdicts: Vec<Verdict>,
    pub plate: Plate,
    /// What this machine could not measure (the audit's missing adapters); `check` leaves
    /// their committed rows out and says so.
    pub skipped: Vec<Skipped>,
    /// For a table and plate that hold this machine's timings (advise's costs): the part
    /// that repeats byte for byte, which `reproduce` commits and `check` compares; the whole
    /// outcome then goes to the git-ignored [`TIMINGS_FOLDER`] of the results folder.
    pub repeatable: Option<Box<Repeatable>>,
}

/// The folder of a results folder that holds the outcomes with timings in full, under the
/// name of the CPU that made them; git ignores it, since no two runs repeat it.
pub const TIMINGS_FOLDER: &str = "timings";

/// The columns computed from timings (advise's costs and the choices made on them), besides
/// the timings themselves (`ns_*`).
const FROM_TIMINGS: [&str; 7] = [
    "cost_ns",
    "cost_low",
    "cost_high",
    "speedup",
    "on_skyline",
    "chosen",
    "runner_up",
];

/// True for a field that holds a timing or what is computed from one: no run repeats it.
pub fn is_timing(field: &str) -> bool {
    field.starts_with("ns_") || FROM_TIMINGS.contains(&field)
}

/// The table and plate of an outcome with timings that repeat with the same seeds: its
/// columns but the timings ([`is_timing`]), and the panels drawn without them.
#[derive(Clone, Debug)]
pub struct Repeatable {
    pub table: Table,
    pub plate: Plate,
}

impl Outcome {
    /// The outcome of typed rows under `title`, with notes and a plate.
    pub fn new<R: Record + Measured>(
        title: impl Into<String>,
        rows: &[R],
        notes: Vec<String>,
        plate: Plate,
    ) -> Result<Self> {
        let mut table = Table::from_rows(title, rows)?;
        table.notes = notes;
        Ok(Outcome {
            table,
            measurements: rows.iter().map(|r| r.measurement().clone()).collect(),
            verdicts: Vec::new(),
            plate,
            skipped: Vec::new(),
            repeatable: None,
        })
    }

    /// The table and plate that repeat byte for byte with the same seeds: what `reproduce`
    /// commits and `check` compares.
    pub fn committed(&self) -> (&Table, &Plate) {
        match &self.repeatable {
            Some(part) => (&part.table, &part.plate),
            None => (&self.table, &self.plate),
        }
    }

    /// The lines of the verdicts that failed; empty when all pass.
    pub fn failures(&self) -> Vec<String> {
        self.verdicts
            .iter()
            .filter(|v| !v.passed())
            .map(|v| v.check.clone())
            .collect()
    }

    /// One line per row whose measured rate departs from its own bits (`bits_check = fail`:
    /// its exact binomial p against them below [`BITS_CHECK_ALPHA`]).
    pub fn bits_failures(&self) -> Vec<String> {
        self.measurements
            .iter()
            .enumerate()
            .filter(|(_, m)| !m.bits_ok_at(BITS_CHECK_ALPHA))
            .map(|(i, m)| {
                format!(
                    "row {} (n={}, m={}, k={}, hash={}): measured {} vs from bits {} (z = {:.1}, p = {:.2e})",
                    i + 1,
                    m.n,
                    m.m,
                    m.k,
                    m.hash,
                    crate::report::percent(m.fpr_measured),
                    crate::report::percent(m.fpr_from_fill),
                    m.z_from_fill,
                    m.bits_p
                )
            })
            .collect()
    }
}

/// The distinct items of `items`, in order of first appearance.
pub fn distinct<K: PartialEq>(items: impl IntoIterator<Item = K>) -> Vec<K> {
    let mut seen = Vec::new();
    for item in items {
        if !seen.contains(&item) {
            seen.push(item);
        }
    }
    seen
}

/// `items` grouped by `key`: each distinct key with its items, in order of first appearance.
pub fn grouped<T, K: PartialEq>(
    items: impl IntoIterator<Item = T>,
    key: impl Fn(&T) -> K,
) -> Vec<(K, Vec<T>)> {
    let mut groups: Vec<(K, Vec<T>)> = Vec::new();
    for item in items {
        let k = key(&item);
        match groups.iter_mut().find(|(g, _)| *g == k) {
            Some((_, group)) => group.push(item),
            None => groups.push((k, vec![item])),
        }
    }
    groups
}

/// Columns every measured row shows in the human views. The narrow view keeps the setting
/// (bits per key, k), the count, the measured rate with its interval, the exact prediction,
/// its z and the bits check; n and m are in the title, the rest under `--wide`.
pub fn measurement_columns() -> Vec<Column> {
    crate::columns![Measurement;
        "n" => Plain(n).wide_only(),
        "duplicates" => Plain(duplicate_keys).wide_only(),
        "m" => Plain(m).wide_only(),
        "m asked" => Plain(m_requested).wide_only(),
        "addressable" => Plain(addressable_bits).wide_only(),
        "bits/key" => Fixed(bits_per_key, 2),
        "k" => Plain(k),
        "fill" => Percent(fill_measured),
        "E[fill]" => Percent(fill_expected).wide_only(),
        "failed" => Plain(failed_inserts).wide_only(),
        "FP/queries" => Ratio(false_positives, queries).wide_only(),
        "overlap" => Plain(query_overlap).wide_only(),
        "measured" => Percent(fpr_measured),
        "95% CI" => Interval(ci_low, ci_high),
        "classic" => Percent(fpr_classic).wide_only(),
        "fill^k" => Percent(fpr_from_fill).wide_only(),
        "exact" => Percent(fpr_exact),
        "configured" => Percent(fpr_configured).wide_only(),
        "z classic" => Fixed(z_classic, 2).wide_only(),
        "z fill^k" => Fixed(z_from_fill, 2).wide_only(),
        "z exact" => Fixed(z_exact, 2),
        "bits" => Plain(bits_check).flags_when("fail"),
        "uniform" => Plain(uniformity).flags_when("fail"),
    ]
}

/// [`measurement_columns`] with exactly the columns headed `narrow` in the narrow view, for
/// an experiment whose setting or verdict takes the room of the others.
pub fn measurement_columns_narrow(narrow: &[&str]) -> Vec<Column> {
    measurement_columns()
        .into_iter()
        .map(|c| Column {
            narrow: narrow.contains(&c.header),
            ..c
        })
        .collect()
}

impl Record for Measurement {
    fn columns() -> Vec<Column> {
        measurement_columns()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structures::{FilterKind, Spec};

    #[test]
    fn progress_counts_every_key_inserted_and_queried() {
        let setup = |n, queries| {
            let spec = Spec::shape(FilterKind::default(), 10 * n, 4)
                .hashed(crate::hash::HashScheme::MultiplyShift, 2);
            Setup::new(spec, n, queries, 1)
        };
        // The second setup takes the parallel path, in chunks.
        let setups = [setup(1_000, 5_000), setup(300_000, 1_200_000)];
        let hidden = indicatif::ProgressDrawTarget::hidden();
        let progress = ProgressBar::with_draw_target(Some(0), hidden);
        measure_all("test", &rows_of(&setups, 2), &progress).unwrap();
        let keys = 2 * (6_000 + 1_500_000);
        assert_eq!(progress.length(), Some(keys));
        assert_eq!(progress.position(), keys);
    }
}
