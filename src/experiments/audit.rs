//! `audit`: is a shipped filter's rate what it promises? Each Rust crate, and each adapter of
//! `adapters/` that `adapters/install` left ready (Python, JavaScript, Java libraries behind the
//! exec protocol), is configured the way its README tells a user to (target rate ε and n),
//! filled to n and then on to 1.1n, 1.5n and 2n (the overfill cliff as each lives it), and
//! queried with absent keys at each load. An adapter that is not installed is skipped with its
//! reason, and the audit goes on; one whose library refuses (pybloom-live past its capacity, a
//! key form the library does not take) is recorded as refused, with the library's message.
//!
//! Per row: the memory the filter allocated, the hashes it uses, the measured rate with its
//! Clopper–Pearson interval, the ratio to ε with its exact interval `[p_L/ε, p_U/ε]`, and
//! `z = (p̂ - ε) / sqrt(ε(1-ε)/q)` against ε; a row with `z > 4` is flagged (a finding, not an
//! error). Queries default to the q at which the exact one-sided test detects a 10% excess
//! over ε (5% level, 80% power; [`queries_to_detect`]), within `[10^4, 2·10^8]`; each row states
//! the excess its q can detect. `--fail-above R` turns a row at a load of at most 1 whose 95%
//! lower bound exceeds `R·ε` into a failed check (exit 1).

mod adapters;
mod both_ways;
mod entries;
mod keys;
mod memory;
mod notes;
mod row;
mod run;

use std::path::PathBuf;

use clap::Args;
use indicatif::ProgressBar;
use serde::Deserialize;

use super::{Experiment, Outcome};
use crate::error::{Error, Result};
use crate::params::preflight::{self, Cost};
use crate::params::{
    Count, KeySources, ProgramParams, SeedParams, ValueList, check_count, positive_list, rates,
    require,
};
use crate::pipeline::measurement::CONFIDENCE;
use crate::program::KeyForm;
use crate::stats::queries_to_detect;
use crate::structures::FilterKind;

pub use adapters::{Adapter, Found, Missing, find};
pub use entries::Entry;
use entries::entries;
use keys::AuditKeys;
pub use row::AuditRow;
pub use run::{AuditRun, Refusal, run, run_audit};

pub struct Audit;

/// Which filters an audit covers.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Audited {
    /// The Rust crates and bloomlab's classic filter.
    Crates,
    /// The ready adapters of `--adapters`.
    Adapters,
    /// Both.
    #[default]
    All,
}

impl Audited {
    pub const ALL: [Audited; 3] = [Audited::Crates, Audited::Adapters, Audited::All];

    pub fn name(self) -> &'static str {
        match self {
            Audited::Crates => "crates",
            Audited::Adapters => "adapters",
            Audited::All => "all",
        }
    }
}

named_enum!(Audited, "audited set");

/// Flags and file keys of audit.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct AuditParams {
    /// Keys each filter is configured for [1..=10^8, default 10^6; for a key file, its lines
    /// over the largest load]
    #[arg(long, allow_hyphen_values = true)]
    pub n: Option<Count>,
    /// Configured false-positive rates: a fraction in (0, 1), or a list [default 0.01]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub fpr: Option<ValueList>,
    /// Loads: keys inserted over n, a list [> 0, <= 100, default 1,1.1,1.5,2]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub loads: Option<ValueList>,
    /// Absent queries per row [1..=10^10, default: enough to detect a 10% excess]
    #[arg(long, allow_hyphen_values = true)]
    pub queries: Option<Count>,
    /// A filter to audit (one configured by target rate, or exec:COMMAND); repeatable.
    /// Alone, only these; with --audited, beside that set [default: the --audited set]
    #[arg(long)]
    #[serde(default, deserialize_with = "entries::one_or_many")]
    pub filter: Vec<FilterKind>,
    /// Which filters: crates, adapters (the ready ones of --adapters) or all [default all]
    #[arg(long)]
    pub audited: Option<Audited>,
    /// Folder of adapters, whose `list` says which are installed; repeatable, each folder's
    /// ready adapters join the audit [default adapters]
    #[arg(long, value_name = "DIR")]
    #[serde(default, deserialize_with = "entries::one_or_many")]
    pub adapters: Vec<PathBuf>,
    /// Key forms sent to exec programs, a list of text, int, bytes [default --key-form]
    #[arg(long, value_name = "LIST", value_delimiter = ',')]
    pub key_forms: Option<Vec<KeyForm>>,
    #[command(flatten)]
    #[serde(flatten)]
    pub program: ProgramParams,
    /// Exit 1 when a row at a load of at most 1 has a 95% lower bound above RATIO times the
    /// configured rate [1..=10^6]
    #[arg(long, value_name = "RATIO", allow_hyphen_values = true, value_parser = crate::params::parse_number)]
    pub fail_above: Option<f64>,
    /// Exit 1 when a row at a load of at most 1 has a 95% upper bound below RATIO times the
    /// configured rate (a filter that loses keys reads far below its promise) [(0, 1]]
    #[arg(long, value_name = "RATIO", allow_hyphen_values = true, value_parser = crate::params::parse_number)]
    pub fail_below: Option<f64>,
    #[command(flatten)]
    #[serde(flatten)]
    pub keys: KeySources,
    #[command(flatten)]
    #[serde(flatten)]
    pub seeds: SeedParams,
    /// Also time each row's absent queries, single-threaded (not reproducible, so files
    /// leave it off)
    #[arg(long)]
    #[serde(default)]
    pub timed: bool,
    /// Leave out the memory measured of programs (files leave it out: it is not
    /// reproducible)
    #[arg(long)]
    #[serde(default = "memory::left_out_of_files")]
    pub no_memory: bool,
}

impl Experiment for Audit {
    type Params = AuditParams;
    type Plan = AuditPlan;
    const NAME: &'static str = "audit";
    const ABOUT: &'static str = "Each shipped crate and installed adapter configured by target rate and n, measured at n, 1.1n, 1.5n and 2n";
    const AFTER_HELP: &'static str =
        "Filters: bloomlab's classic filter and every peer crate, each configured the way
its README shows (target rate and n), then every adapter of --adapters that
adapters/install left ready (adapters/list; the others are skipped with their reason):
  fastbloom              BloomFilter::with_false_pos(eps).seed(s).expected_items(n)
  bloomfilter            Bloom::new_for_fp_rate_with_seed(n, eps, seed)
  growable-bloom-filter  GrowableBloom::new(eps, n)   (takes no seed)
  adapters               pybloom-live, rbloom, pyprobables, bloom-filters (npm), Guava

Queries default to the number at which the exact one-sided binomial test detects a
10% excess over eps (5% level, 80% power), within 10^4..=2*10^8; every row states the
excess its queries can detect. A row whose rate is more than 4 standard errors above
the configured rate is flagged (a finding: the exit status stays 0). With
--fail-above R, a row at a load of at most 1 whose 95% lower bound exceeds R*eps fails
the run (exit 1): a guard for a CI step.

Examples:
  bloomlab audit --n 1000000 --fpr 0.01
  bloomlab audit --audited adapters --n 100000 --key-forms text,int,bytes
  bloomlab audit --filter exec:'python3 my_filter.py' --loads 1 --fail-above 1.2
  bloomlab audit --audited adapters --adapters adapters --adapters ../my-adapters
  bloomlab audit --filter fastbloom --filter exec:'python3 my_filter.py'
  bloomlab audit --n 10000 --fpr 0.01 --filter growable-bloom-filter --loads 1,2,4,8";

    fn plan(params: &AuditParams) -> Result<AuditPlan> {
        AuditPlan::of(params)
    }

    /// Each filter filled to the largest load and queried at every load; a growing filter
    /// may hold up to four times the classic design's memory.
    fn cost(plan: &AuditPlan) -> Cost {
        cost_weighed(plan, preflight::weighted_operations)
    }

    /// [`Audit::cost`] from the flags before any program is started: a program behind
    /// `exec:` (an adapter) weighed at [`crate::program::EXEC_SECONDS_PER_KEY`], a key across two
    /// pipes as text, instead of the speed a timed probe of it measures.
    fn planning_cost(params: &AuditParams) -> Result<Cost> {
        let unprobed =
            |kind: FilterKind, k, m, operations: f64| match kind.structure().lines_per_query {
                None => {
                    operations * crate::program::EXEC_SECONDS_PER_KEY
                        / preflight::SECONDS_PER_KEY_OPERATION
                }
                Some(_) => preflight::weighted_operations(kind, k, m, operations),
            };
        Ok(cost_weighed(&AuditPlan::of(params)?, unprobed))
    }

    fn measured(plan: &mut AuditPlan) -> Vec<&mut dyn super::Units> {
        vec![plan]
    }

    fn run(plan: &AuditPlan, progress: &ProgressBar) -> Result<Outcome> {
        let audit = run_audit(plan, progress)?;
        let loads: Vec<String> = plan.loads.iter().map(|l| format!("{l}")).collect();
        let title = format!(
            "audit: each filter configured for n = {} at its target rate, filled to {} times n; queries detect a 10% excess over the promise",
            plan.n,
            loads.join(", ")
        );
        let mut outcome = Outcome::new(
            title,
            &audit.rows,
            notes::notes(plan, &audit),
            notes::plate(&audit.rows),
        )?;
        if let Some(ratio) = plan.fail_above {
            let alpha = (1.0 - CONFIDENCE) / 2.0;
            outcome.verdicts = both_ways::guard(&audit.rows, ratio, true, alpha);
        }
        outcome.table.notes.extend(both_ways::notes(&audit.rows));
        outcome.table.notes.extend(memory::notes(&audit.rows));
        (outcome.table.notes).extend(crate::keys::duplicate_note(
            &plan.keys.keys(),
            plan.top(),
            crate::keys::PREDICTED_FOR_DISTINCT,
        ));
        (outcome.verdicts).extend(both_ways::verdicts(&audit.rows, plan.fail_below));
        outcome.skipped = plan.skipped.iter().map(|m| m.skipped.clone()).collect();
        Ok(outcome)
    }
}

/// Each filter filled to the largest load and queried at every load (the queries of each
/// row's work), each entry's key operations weighed by `weigh(kind, k, m, operations)`; a
/// growing filter may hold up to four times the classic design's memory.
fn cost_weighed(plan: &AuditPlan, weigh: impl Fn(FilterKind, u32, u64, f64) -> f64) -> Cost {
    let key_operations = (plan.jobs().iter())
        .map(|job| {
            let operations = plan.keys_of(job).unwrap_or(0) as f64;
            let (m, k) = crate::theory::classic_design(plan.n, job.fpr);
            weigh(job.entry.kind.clone(), k, m, operations)
        })
        .sum();
    let bits_per_key = plan
        .rates
        .iter()
        .map(|&fpr| crate::theory::bits_per_key_for_fpr(fpr))
        .fold(0.0, f64::max);
    Cost::new(key_operations, 4.0 * plan.n as f64 * bits_per_key / 8.0)
}

/// Above this many standard errors over the configured rate a row is flagged.
pub const FLAG_Z: f64 = 4.0;
/// Default planned number of keys.
pub const DEFAULT_N: u64 = 1_000_000;
/// Default configured rate.
pub const DEFAULT_RATES: [f64; 1] = [0.01];
/// Default loads: keys inserted over keys planned.
pub const DEFAULT_LOADS: [f64; 4] = [1.0, 1.1, 1.5, 2.0];
/// Largest planned n.
pub const MAX_N: u64 = 100_000_000;
/// Expected false positives at the configured rate below which a row is unresolved.
pub const MIN_EXPECTED_FALSE_POSITIVES: f64 = 100.0;
/// The relative excess over the configured rate that the default queries detect.
pub const DEFAULT_DETECTABLE_EXCESS: f64 = 0.10;
/// Fewest and most default queries per row.
pub const DEFAULT_QUERIES_RANGE: (u64, u64) = (10_000, 200_000_000);
/// Largest `--fail-above` ratio.
pub const MAX_FAIL_ABOVE: f64 = 1e6;
/// The folder of the shipped adapters, relative to the working directory.
pub const DEFAULT_ADAPTERS: &str = "adapters";
/// The first counter of the absent keys: above every load's inserts (at most 100 times
/// [`MAX_N`], under 2^34), so that the absent keys, and so each row, are the same whatever the
/// other loads of the run.
pub const ABSENT_FROM: u64 = 1 << 40;
/// Absent queries timed per row when timing.
const TIMED_QUERIES: u64 = 200_000;

/// The Rust structures audited: every one configured by target rate (bloomlab's classic filter
/// and the peer crates), in registry order.
pub fn audited() -> Vec<FilterKind> {
    FilterKind::all()
        .into_iter()
        .filter(|k| k.structure().for_rate.is_some())
        .collect()
}

/// Absent queries for configured rate ε: `--queries` when given, else the q at which a 10%
/// excess over ε is detectable ([`queries_to_detect`]), within [`DEFAULT_QUERIES_RANGE`].
pub fn queries_for(queries: Option<Count>, fpr: f64) -> Result<u64> {
    let (fewest, most) = DEFAULT_QUERIES_RANGE;
    match queries {
        Some(q) => check_count("queries", q.0, 1, 10_000_000_000),
        None => Ok(queries_to_detect(DEFAULT_DETECTABLE_EXCESS, fpr)
            .unwrap_or(most)
            .clamp(fewest, most)),
    }
}

/// `--n`; without it, for a key file, the most keys whose largest load the file holds (its
/// lines at load 1), else [`DEFAULT_N`].
fn planned_n(params: &AuditParams, loads: &[f64]) -> Result<u64> {
    if let Some(n) = params.n {
        return Ok(n.0);
    }
    let largest = loads.iter().copied().fold(1.0, f64::max);
    Ok(match params.keys.keys().available("keys")? {
        Some(lines) => ((lines as f64 / largest).floor() as u64).max(1),
        None => DEFAULT_N,
    })
}

/// The loads in increasing order: a filter is filled on from one load to the next, so a
/// load below one measured before it would be measured on the fuller filter. A load whose
/// `n · load` rounds to no key is refused.
fn increasing_loads(n: u64, mut loads: Vec<f64>) -> Result<Vec<f64>> {
    loads.sort_by(f64::total_cmp);
    loads.dedup();
    match loads.iter().find(|&&load| (n as f64 * load).round() < 1.0) {
        Some(&load) => Err(Error::invalid(
            "loads",
            load,
            format!("n x load rounds to no key inserted at n = {n}"),
            format!("loads of at least {:e} at n = {n}", 0.5 / n as f64),
        )),
        None => Ok(loads),
    }
}

/// The most keys any of `loads` inserts into a filter planned for n.
fn top(n: u64, loads: &[f64]) -> u64 {
    let keys = loads.iter().map(|&load| (n as f64 * load).round() as u64);
    keys.max().unwrap_or(n)
}

/// Everything one audit needs.
#[derive(Clone, Debug)]
pub struct AuditPlan {
    pub n: u64,
    pub rates: Vec<f64>,
    pub loads: Vec<f64>,
    pub entries: Vec<Entry>,
    /// The adapters that will not run, by name, with the filter column they would carry.
    pub skipped: Vec<Missing>,
    pub queries: Option<Count>,
    /// `--keys` and `--query-keys`.
    pub keys: KeySources,
    pub seeds: SeedParams,
    pub fail_above: Option<f64>,
    pub fail_below: Option<f64>,
    pub timed: bool,
    /// Whether programs' memory is measured (not under `--no-memory`).
    pub measure_memory: bool,
    /// The work of each row ([`super::Units::rows`]); empty: every row whole.
    pub work: Vec<crate::pipeline::measurement::Work>,
}

impl AuditPlan {
    /// The most keys any load inserts.
    pub fn top(&self) -> u64 {
        top(self.n, &self.loads)
    }

    /// The plan of `params`: n, rates, loads and one filter, or the crates and the ready
    /// adapters.
    pub fn of(params: &AuditParams) -> Result<Self> {
        let loads = positive_list("loads", params.loads.as_ref(), &DEFAULT_LOADS, 100.0)?;
        let n = check_count("n", planned_n(params, &loads)?, 1, MAX_N)?;
        let rates = rates("fpr", params.fpr.as_ref(), &DEFAULT_RATES)?;
        for &fpr in &rates {
            queries_for(params.queries, fpr)?;
        }
        let loads = increasing_loads(n, loads)?;
        if let Some(ratio) = params.fail_above {
            let reason = "a ratio to the configured rate: the 95% lower bound above it fails";
            let ok = (1.0..=MAX_FAIL_ABOVE).contains(&ratio);
            require(
                "fail_above",
                ratio,
                ok,
                reason,
                format!("1..={MAX_FAIL_ABOVE}"),
            )?;
        }
        let fail_below = both_ways::check_fail_below(params.fail_below)?;
        let (entries, skipped) = entries(params)?;
        let any_program = entries.iter().any(|e| e.kind.is_program());
        params.program.check(any_program || !skipped.is_empty())?;
        for entry in &entries {
            params
                .keys
                .check_for(entry.kind.clone(), entry.key_form.unwrap_or_default())?;
        }
        let top = top(n, &loads);
        for &fpr in &rates {
            let queries = queries_for(params.queries, fpr)?;
            let keys = AuditKeys::new(&params.keys, params.seeds.seed(), top, queries)?;
            keys.refuse_all_inserted(&params.keys, top, queries)?;
        }
        Ok(AuditPlan {
            n,
            rates,
            loads,
            entries,
            skipped,
            queries: params.queries,
            keys: params.keys.clone(),
            seeds: params.seeds.clone(),
            fail_above: params.fail_above,
            fail_below,
            timed: params.timed,
            measure_memory: !params.no_memory,
            work: Vec::new(),
        })
    }
}
