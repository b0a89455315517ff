//! Runs cut into units of work ([`Units`]): the rows a run measures, each with the query
//! blocks it counts and the counts it carries ([`Work`]), what `--shard` shares out and
//! `merge` adds up (docs/SHARDING.md); and the measured plans most experiments count
//! through ([`MeasuredPlan`]).

use indicatif::ProgressBar;
use rayon::prelude::*;

use crate::error::Result;
use crate::keys::{PREDICTED_FOR_DISTINCT, duplicate_note};
use crate::params::MeasureParams;
use crate::params::preflight::Cost;
use crate::pipeline::measure_counted;
use crate::pipeline::measurement::{Measurement, Setup, Trial, Unit, Work};
use crate::pipeline::run::Threads;
use crate::pipeline::run_trial_counted;

/// A run cut into units of work: its rows in the order it measures them.
pub trait Units: Send + Sync {
    /// Every row, with its work.
    fn rows(&mut self) -> Vec<Setup>;
    /// Sets the work of each row of [`Units::rows`], in that order.
    fn set_work(&mut self, work: &[Work]);
    /// Counts the work of every row that has some.
    fn count(&mut self, progress: &ProgressBar) -> Result<Vec<Counted>> {
        count_rows(&self.rows(), progress)
    }
    /// What running the rows' work is expected to spend.
    fn cost(&mut self) -> Cost;
}

/// What counting one row's work gave: the counts of its blocks and the filter built for
/// them (a refused row's: none), no statistic.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Counted {
    /// The row's index in [`Units::rows`].
    pub row: usize,
    pub units: Vec<Unit>,
    /// [`crate::pipeline::measurement::filter_digest`] of the filter built.
    pub digest: u64,
    /// The filter's set bits; None when it does not know them.
    pub set_bits: Option<u64>,
}

impl Counted {
    /// Row `row`'s counts from its trial.
    pub fn of(row: usize, trial: &Trial) -> Self {
        Counted {
            row,
            units: trial.units.clone(),
            digest: trial.digest,
            set_bits: trial.set_bits,
        }
    }
}

/// [`Units::count`] of rows measured through [`run_trial_counted`], in parallel.
pub fn count_rows(rows: &[Setup], progress: &ProgressBar) -> Result<Vec<Counted>> {
    let touched: Vec<usize> = (0..rows.len())
        .filter(|&i| !rows[i].work.blocks(rows[i].queries).is_empty())
        .collect();
    progress.inc_length(touched.iter().map(|&i| keys_of_setup(&rows[i])).sum());
    (touched.par_iter())
        .map(|&i| {
            let trial = run_trial_counted(&rows[i], Threads::Auto, &|k| progress.inc(k))?;
            Ok(Counted::of(i, &trial))
        })
        .collect()
}

impl Units for MeasuredPlan {
    fn rows(&mut self) -> Vec<Setup> {
        MeasuredPlan::rows(self)
    }
    fn set_work(&mut self, work: &[Work]) {
        self.work = work.to_vec();
    }
    fn cost(&mut self) -> Cost {
        MeasuredPlan::cost(self)
    }
}

/// Keys a setup inserts and queries (the queries of its own share of work): what progress
/// counts.
pub fn keys_of_setup(setup: &Setup) -> u64 {
    let queries = setup.work.queries_here(setup.n, setup.queries);
    setup.n.saturating_add(queries)
}

/// Every setup `trials` times (hash seeds `hash_seed + t`): the trials of a setup are
/// consecutive rows.
pub fn rows_of(setups: &[Setup], trials: u64) -> Vec<Setup> {
    setups
        .iter()
        .flat_map(|s| {
            (0..trials).map(move |t| {
                let mut trial = s.clone();
                trial.spec.hash_seed = s.spec.hash_seed.wrapping_add(t);
                trial
            })
        })
        .collect()
}

/// Measures every row, in parallel, keeping their order. `progress` counts the keys
/// inserted and queried.
pub fn measure_all(
    experiment: &str,
    rows: &[Setup],
    progress: &ProgressBar,
) -> Result<Vec<Measurement>> {
    progress.inc_length(rows.iter().map(keys_of_setup).sum());
    rows.par_iter()
        .map(|setup| measure_counted(experiment, setup, &|keys| progress.inc(keys)))
        .collect()
}

/// The setups of a measuring experiment, validated, with the measuring parameters that
/// apply to all of them.
#[derive(Clone, Debug)]
pub struct MeasuredPlan {
    pub setups: Vec<Setup>,
    pub trials: u64,
    pub caption: String,
    /// The work of each row ([`MeasuredPlan::rows`]); empty: every row whole.
    pub work: Vec<Work>,
}

impl MeasuredPlan {
    /// Validates `setups` against `measure`'s trials.
    pub fn new(measure: &MeasureParams, setups: Vec<Setup>) -> Result<Self> {
        Ok(MeasuredPlan {
            trials: measure.trials()?,
            caption: measure.caption()?,
            ..MeasuredPlan::once(setups)
        })
    }

    /// Each setup measured once, whole, without a caption.
    pub fn once(setups: Vec<Setup>) -> Self {
        MeasuredPlan {
            setups,
            trials: 1,
            caption: String::new(),
            work: Vec::new(),
        }
    }

    /// The rows the plan measures: each setup `trials` times ([`rows_of`]), with its work.
    pub fn rows(&self) -> Vec<Setup> {
        let mut rows = rows_of(&self.setups, self.trials);
        for (row, work) in rows.iter_mut().zip(&self.work) {
            row.work = work.clone();
        }
        rows
    }

    /// Measures every row of the plan.
    pub fn measure(&self, experiment: &str, progress: &ProgressBar) -> Result<Vec<Measurement>> {
        measure_all(experiment, &self.rows(), progress)
    }

    /// Inserts and queries of every trial; the peak is the largest table times the rows
    /// measured at once (one per core).
    pub fn cost(&self) -> Cost {
        let trials = self.trials as f64;
        let rows = self.rows();
        let key_operations = rows
            .iter()
            .map(|s| {
                let operations = keys_of_setup(s) as f64;
                let (m, k) = s.spec.nominal();
                let filter = (s.filter(), &s.keying.keys, s.n);
                crate::params::preflight::keyed_operations(filter, k, m, operations)
            })
            .sum();
        let largest = (self.setups.iter())
            .map(|s| s.spec.nominal().0)
            .max()
            .unwrap_or(0) as f64;
        let at_once = (self.setups.len() as f64 * trials).min(rayon::current_num_threads() as f64);
        Cost::new(key_operations, largest / 8.0 * at_once)
    }

    /// With more than one trial, one summary line per setup, appended to the notes; and
    /// the duplicate keys of a key file ([`crate::keys::duplicate_note`]).
    pub fn trial_notes(&self, measurements: &[Measurement], notes: &mut Vec<String>) {
        if self.trials > 1 {
            let rows: Vec<&Measurement> = measurements.iter().collect();
            notes.extend(trial_summaries(&rows, self.trials as usize));
        }
        let lines = (self.setups.iter())
            .filter_map(|s| duplicate_note(&s.keying.keys, s.n, PREDICTED_FOR_DISTINCT));
        notes.extend(super::distinct(lines));
    }
}

/// One line per group of `trials` consecutive rows: its [`Spread`](crate::pipeline::measurement::Spread).
pub fn trial_summaries(rows: &[&Measurement], trials: usize) -> Vec<String> {
    use crate::report::percent;
    rows.chunks(trials)
        .map(|group| {
            let spread = crate::pipeline::measurement::Spread::of(group);
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
