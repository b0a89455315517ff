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
mod memory;
mod notes;

use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

use clap::Args;
use indicatif::ProgressBar;
use rayon::prelude::*;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Experiment, Measured, Outcome};
use crate::error::{Error, Result};
use crate::hash::HashScheme;
use crate::keys::KeySource;
use crate::params::preflight::{self, Cost};
use crate::params::{Count, SeedParams, ValueList, check_count, positive_list, rates};
use crate::pipeline::measurement::{Measurement, Setup, Trial};
use crate::pipeline::timing::{best_ns, round_ns};
use crate::pipeline::{count_parallel, fill};
use crate::report::{Cell, Column, Record, col};
use crate::stats::{detectable_excess, queries_to_detect, ratio_to_constant, z_score};
use crate::structures::exec::KeyForm;
use crate::structures::{FilterKind, count_present};

pub use adapters::{Adapter, Found, Missing, find};
pub use entries::Entry;
use entries::{Built, entries};

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
    /// Keys each filter is configured for [1..=10^8, default 10^6]
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
    /// Exit 1 when a row at a load of at most 1 has a 95% lower bound above RATIO times the
    /// configured rate [1..=10^6]
    #[arg(long, value_name = "RATIO", allow_hyphen_values = true)]
    pub fail_above: Option<f64>,
    /// Exit 1 when a row at a load of at most 1 has a 95% upper bound below RATIO times the
    /// configured rate (a filter that loses keys reads far below its promise) [(0, 1]]
    #[arg(long, value_name = "RATIO", allow_hyphen_values = true)]
    pub fail_below: Option<f64>,
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

impl Measured for AuditRow {
    fn measurement(&self) -> &Measurement {
        &self.measurement
    }
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
        let top = plan.loads.iter().copied().fold(1.0, f64::max) * plan.n as f64;
        let key_operations = plan
            .rates
            .iter()
            .map(|&fpr| {
                let queries = queries_for(plan.queries, fpr).unwrap_or(0) as f64;
                let operations = top + queries * plan.loads.len() as f64;
                let (m, k) = crate::theory::classic_design(plan.n, fpr);
                let weigh = |e: &Entry| preflight::weighted_operations(e.kind, k, m, operations);
                plan.entries.iter().map(weigh).sum::<f64>()
            })
            .sum();
        let bits_per_key = plan
            .rates
            .iter()
            .map(|&fpr| crate::theory::bits_per_key_for_fpr(fpr))
            .fold(0.0, f64::max);
        Cost {
            key_operations,
            peak_bytes: 4.0 * plan.n as f64 * bits_per_key / 8.0,
        }
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
            outcome.verdicts = notes::fail_above(&audit.rows, ratio);
        }
        outcome.table.notes.extend(both_ways::notes(&audit.rows));
        outcome.table.notes.extend(memory::notes(&audit.rows));
        (outcome.verdicts).extend(both_ways::verdicts(&audit.rows, plan.fail_below));
        outcome.skipped = plan.skipped.iter().map(|m| m.skipped.clone()).collect();
        Ok(outcome)
    }
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

/// One filter at one load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditRow {
    /// `n` is the keys inserted, `m` the bits allocated at that point, `k` the hashes.
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The filter's short name, as the narrow table shows it: the crate, the adapter, or a
    /// program's own name.
    pub name: String,
    /// What is measured: the structure's name, or the name and version a program reports.
    pub library: String,
    /// The key form a program was sent (blank for the Rust structures, which take u64 keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_form: Option<KeyForm>,
    /// The n the filter was configured for.
    pub n_planned: u64,
    /// `n / n_planned`.
    pub load: f64,
    /// The ε the filter was configured for.
    pub fpr_configured: f64,
    /// Bits allocated per planned key, as the filter reports them.
    pub bits_per_key_allocated: f64,
    /// Bits its probes address per planned key: the m of its fill and predictions.
    pub bits_per_key_addressed: f64,
    /// For a program: the growth of its resident set size from the header to the end of the
    /// inserts, in bits per planned key ([`memory`]).
    pub bits_per_key_rss: Option<f64>,
    /// The same from its proportional set size.
    pub bits_per_key_measured: Option<f64>,
    /// `bits_per_key_rss / bits_per_key_addressed` (the RSS: PSS moves as pages stop being
    /// shared).
    pub measured_over_addressed: Option<f64>,
    /// `queries · ε`.
    pub expected_false_positives: f64,
    /// `expected_false_positives >= 100` ([`MIN_EXPECTED_FALSE_POSITIVES`]): enough to
    /// resolve the rate.
    pub resolved: bool,
    /// `p̂ / ε`.
    pub ratio_configured: f64,
    /// Lower end of `[p_L/ε, p_U/ε]`, from the 95% Clopper–Pearson interval
    /// ([`ratio_to_constant`]): exact, for this filter.
    pub ratio_configured_low: f64,
    /// Upper end of `[p_L/ε, p_U/ε]`.
    pub ratio_configured_high: f64,
    /// The smallest relative excess over ε these queries detect (exact one-sided test, 5%
    /// level, 80% power; [`detectable_excess`]).
    pub detectable_excess: f64,
    /// `(p̂ - ε) / sqrt(ε(1-ε)/q)`.
    pub z_configured: f64,
    /// `z_configured > 4`.
    pub above_configured: bool,
    /// Inserted keys asked ([`both_ways::INSERTED_SAMPLE`], or all of them when fewer).
    pub inserted_asked: u64,
    /// Inserted keys asked that the filter answered absent: any fails the run.
    pub false_negatives: u64,
    /// The first inserted key answered absent.
    pub false_negative_key: Option<u64>,
    /// Its place in the insertion order, from 1.
    pub false_negative_number: Option<u64>,
    /// The rate's 95% upper bound is under a tenth of ε, or the count is far below the rate
    /// of the filter's own reported fill ([`both_ways`]).
    pub far_below: bool,
    /// Whether the seed reaches the filter's hashing (those that take one are run with
    /// `--hash-seed`); blank when a program does not say.
    pub seeded: Option<bool>,
    /// Single-threaded ns per absent query (only when timed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_query: Option<f64>,
}

impl Record for AuditRow {
    fn columns() -> Vec<Column> {
        vec![
            col("filter", Cell::Plain("name")),
            col("library", Cell::PlainUnlessSame("library", "name")).wide_only(),
            col("spec", Cell::PlainUnlessSame("filter", "name")).wide_only(),
            col("keys", Cell::Plain("key_form")),
            col("promise", Cell::Percent("fpr_configured")),
            col("load", Cell::Fixed("load", 2)),
            col("n", Cell::Plain("n")).wide_only(),
            col("bits/key", Cell::Fixed("bits_per_key_allocated", 2)).wide_only(),
            col("addressed", Cell::Fixed("bits_per_key_addressed", 2)).wide_only(),
            col("mem/key", Cell::Fixed("bits_per_key_measured", 1)).wide_only(),
            col("RSS b/key", Cell::Fixed("bits_per_key_rss", 1)).wide_only(),
            col("x addressed", Cell::Times("measured_over_addressed")).wide_only(),
            col("hashes", Cell::Plain("k")).wide_only(),
            col("FP/queries", Cell::Ratio("false_positives", "queries")).wide_only(),
            col("measured", Cell::Percent("fpr_measured")),
            col("95% CI", Cell::Interval("ci_low", "ci_high")),
            // Wide only, with its interval: the notes say each filter's ratio with its own.
            col("x promise", Cell::Times("ratio_configured")).wide_only(),
            col(
                "95% CI x",
                Cell::TimesInterval("ratio_configured_low", "ratio_configured_high"),
            )
            .wide_only(),
            col("detects", Cell::Percent("detectable_excess")).wide_only(),
            col("z config", Cell::Fixed("z_configured", 1)).wide_only(),
            col("flag", Cell::Plain("above_configured")).flags_when("true"),
            col("lost", Cell::Plain("false_negatives")),
            col("of", Cell::Plain("inserted_asked")).wide_only(),
            col("low", Cell::Plain("far_below"))
                .wide_only()
                .flags_when("true"),
            col("predicted", Cell::Percent("fpr_exact")).wide_only(),
            col("z predicted", Cell::Fixed("z_exact", 2)).wide_only(),
            col("resolved", Cell::Plain("resolved")).wide_only(),
            col("seeded", Cell::Plain("seeded")).wide_only(),
            col("ns query", Cell::Fixed("ns_query", 1)).wide_only(),
        ]
    }
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
    pub seeds: SeedParams,
    pub fail_above: Option<f64>,
    pub fail_below: Option<f64>,
    pub timed: bool,
    /// Whether programs' memory is measured (not under `--no-memory`).
    pub measure_memory: bool,
}

impl AuditPlan {
    /// The most keys any load inserts.
    pub fn top(&self) -> u64 {
        let keys = self
            .loads
            .iter()
            .map(|&load| (self.n as f64 * load).round() as u64);
        keys.max().unwrap_or(self.n)
    }

    /// The plan of `params`: n, rates, loads and one filter, or the crates and the ready
    /// adapters.
    pub fn of(params: &AuditParams) -> Result<Self> {
        let n = check_count("n", params.n.map_or(DEFAULT_N, |n| n.0), 1, MAX_N)?;
        let rates = rates("fpr", params.fpr.as_ref(), &DEFAULT_RATES)?;
        for &fpr in &rates {
            queries_for(params.queries, fpr)?;
        }
        let loads = positive_list("loads", params.loads.as_ref(), &DEFAULT_LOADS, 100.0)?;
        if let Some(ratio) = params.fail_above
            && !(1.0..=MAX_FAIL_ABOVE).contains(&ratio)
        {
            return Err(Error::invalid(
                "fail_above",
                ratio,
                "a ratio to the configured rate: the 95% lower bound above it fails",
                format!("1..={MAX_FAIL_ABOVE}"),
            ));
        }
        let fail_below = both_ways::check_fail_below(params.fail_below)?;
        let (entries, skipped) = entries(params)?;
        Ok(AuditPlan {
            n,
            rates,
            loads,
            entries,
            skipped,
            queries: params.queries,
            seeds: params.seeds.clone(),
            fail_above: params.fail_above,
            fail_below,
            timed: params.timed,
            measure_memory: !params.no_memory,
        })
    }
}

/// What an audit measured: its rows, and the filters whose library refused, at which load
/// and why.
#[derive(Clone, Debug, Default)]
pub struct AuditRun {
    pub rows: Vec<AuditRow>,
    pub refusals: Vec<Refusal>,
}

/// A library's refusal (the program's error reply): no rows from it at this load and above.
#[derive(Clone, Debug, PartialEq)]
pub struct Refusal {
    pub label: String,
    pub fpr: f64,
    pub load: f64,
    pub message: String,
}

/// Audits every filter of the plan at every rate and load, in that order.
pub fn run(plan: &AuditPlan, progress: &ProgressBar) -> Result<Vec<AuditRow>> {
    Ok(run_audit(plan, progress)?.rows)
}

/// [`run`], with the refusals. The filters are audited in parallel, on all cores (each on
/// its own seeds, so the rows are those of one at a time, in the same order), except under
/// `--timed`, where each is timed alone.
pub fn run_audit(plan: &AuditPlan, progress: &ProgressBar) -> Result<AuditRun> {
    let keys_per_entry = |fpr| -> Result<u64> {
        Ok(plan.top() + plan.loads.len() as u64 * queries_for(plan.queries, fpr)?)
    };
    for &fpr in &plan.rates {
        progress.inc_length(plan.entries.len() as u64 * keys_per_entry(fpr)?);
    }
    let jobs: Vec<(f64, &Entry)> = plan
        .rates
        .iter()
        .flat_map(|&fpr| plan.entries.iter().map(move |entry| (fpr, entry)))
        .collect();
    let audit_one = |&(fpr, entry): &(f64, &Entry)| -> Result<EntryAudit> {
        let mut audited = EntryAudit::default();
        let refused = match audit_entry(plan, entry, fpr, &mut audited, progress) {
            Ok(full) => full,
            Err(Error::Exec {
                refused: true,
                message,
                ..
            })
            | Err(Error::Refused { message, .. }) => Some(message),
            Err(error) => return Err(error),
        };
        // The keys a refusal or a static structure's skipped loads left unsent.
        let counted = audited.counted.load(Ordering::Relaxed);
        progress.inc(keys_per_entry(fpr)?.saturating_sub(counted));
        if let Some(message) = refused {
            audited.refusal = Some(Refusal {
                label: entry.label(),
                fpr,
                load: plan
                    .loads
                    .get(audited.rows.len())
                    .copied()
                    .unwrap_or(f64::NAN),
                message,
            });
        }
        Ok(audited)
    };
    let audited: Vec<Result<EntryAudit>> = match plan.timed {
        true => jobs.iter().map(audit_one).collect(),
        false => jobs.par_iter().map(audit_one).collect(),
    };
    let mut audit = AuditRun::default();
    for entry in audited {
        let entry = entry?;
        audit.rows.extend(entry.rows);
        audit.refusals.extend(entry.refusal);
    }
    Ok(audit)
}

/// What auditing one filter at one rate gave: its rows, the keys counted on the progress
/// bar, and the library's refusal if it refused.
#[derive(Default)]
struct EntryAudit {
    rows: Vec<AuditRow>,
    counted: AtomicU64,
    refusal: Option<Refusal>,
}

/// Counts `keys` as they are sent, on the shared progress bar and for this filter.
fn count(counted: &AtomicU64, progress: &ProgressBar, keys: u64) {
    progress.inc(keys);
    counted.fetch_add(keys, Ordering::Relaxed);
}

/// One filter at one rate, filled load by load; its rows and the keys it counted go into
/// `audited`. A structure that refuses inserts once full (a quotient filter) has no row from
/// the load where it refused one: the refusal is returned, in words. A static one is
/// audited at load 1 only: it is built from its keys, not filled past them.
fn audit_entry(
    plan: &AuditPlan,
    entry: &Entry,
    fpr: f64,
    audited: &mut EntryAudit,
    progress: &ProgressBar,
) -> Result<Option<String>> {
    let seeds = &plan.seeds;
    let keys = KeySource::new(seeds.seed());
    let absent = ABSENT_FROM;
    let queries = queries_for(plan.queries, fpr)?;
    // The absent keys timed, the same for every filter and load.
    let timed_keys: Vec<u64> = match plan.timed {
        true => keys.absent(absent, queries.min(TIMED_QUERIES)).collect(),
        false => Vec::new(),
    };
    let Built {
        mut filter,
        library,
        seeded,
        memory: readings,
    } = entry.build(plan.n, fpr, seeds.hash_seed())?;
    let mut inserted = 0;
    let static_beyond = |load: f64| entry.kind.is_static() && load > 1.0;
    for &load in plan.loads.iter().filter(|&&load| !static_beyond(load)) {
        let target = ((plan.n as f64 * load).round() as u64).max(inserted);
        let on_keys = |sent| count(&audited.counted, progress, sent);
        fill(
            &mut *filter,
            inserted..target,
            |c| keys.key(c),
            false,
            &on_keys,
        )?;
        inserted = target;
        if let Some(failed) = filter.failed_inserts().filter(|&failed| failed > 0) {
            return Ok(Some(format!(
                "{failed} of the first {inserted} inserts refused: the filter is full"
            )));
        }
        let false_positives = count_parallel(
            &*filter,
            absent..absent + queries,
            |c| keys.key(c),
            &on_keys,
        )?;
        let ns_query = plan.timed.then(|| {
            let ns = best_ns(3, timed_keys.len() as u64, || {
                // Batched, so that a process behind exec: is timed per batch.
                std::hint::black_box(count_present(&*filter, &timed_keys).ok());
            });
            round_ns(ns)
        });
        let setup = Setup {
            n: inserted,
            m: memory::addressed(readings.as_ref(), filter.memory_bits()),
            k: filter.hashes(),
            queries,
            seed: seeds.seed(),
            hash_seed: seeds.hash_seed(),
            hash: HashScheme::MultiplyShift,
            filter: entry.kind,
            keying: Default::default(),
        };
        let trial = Trial::of(&*filter, inserted, false_positives);
        let measurement = Measurement::new("audit", &setup, trial);
        let library = library.clone();
        let mut row = row(
            plan,
            entry,
            load,
            fpr,
            seeded,
            library,
            measurement,
            ns_query,
        );
        let asked = both_ways::ask_inserted(&*filter, |c| keys.key(c), inserted, seeds.seed())?;
        both_ways::mark(&mut row, asked);
        memory::mark(&mut row, readings.as_ref().filter(|_| plan.measure_memory));
        audited.rows.push(row);
    }
    Ok(None)
}

/// The row of one measurement against its configured rate.
#[allow(clippy::too_many_arguments)]
fn row(
    plan: &AuditPlan,
    entry: &Entry,
    load: f64,
    fpr: f64,
    seeded: Option<bool>,
    library: String,
    measurement: Measurement,
    ns_query: Option<f64>,
) -> AuditRow {
    let (count, queries) = (measurement.false_positives, measurement.queries);
    let z_configured = z_score(measurement.fpr_measured, fpr, queries);
    let expected = queries as f64 * fpr;
    let ratio = ratio_to_constant(
        count,
        queries,
        fpr,
        crate::pipeline::measurement::CONFIDENCE,
    );
    let name = match (&entry.adapter, entry.key_form) {
        (Some(adapter), _) => adapter.clone(),
        (None, Some(_)) => library.clone(),
        (None, None) => entry.kind.to_string(),
    };
    AuditRow {
        name,
        library,
        key_form: entry.key_form,
        n_planned: plan.n,
        load,
        fpr_configured: fpr,
        bits_per_key_allocated: measurement.memory_bits as f64 / plan.n as f64,
        bits_per_key_addressed: f64::NAN,
        bits_per_key_rss: None,
        bits_per_key_measured: None,
        measured_over_addressed: None,
        expected_false_positives: expected,
        resolved: expected >= MIN_EXPECTED_FALSE_POSITIVES,
        ratio_configured: ratio.value,
        ratio_configured_low: ratio.low,
        ratio_configured_high: ratio.high,
        detectable_excess: detectable_excess(queries, fpr),
        z_configured,
        above_configured: z_configured > FLAG_Z,
        seeded,
        ns_query,
        inserted_asked: 0,
        false_negatives: 0,
        false_negative_key: None,
        false_negative_number: None,
        far_below: false,
        measurement,
    }
}
