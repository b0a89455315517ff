//! `audit`: is a shipped filter's rate what it promises? Each crate is configured the way its
//! README tells a user to (target rate ε and n), filled to n and then on to 1.1n, 1.5n and 2n
//! (the overfill cliff as each crate lives it), and queried with absent keys at each load.
//!
//! Per row: the memory the crate allocated, the hashes it uses, the measured rate with its
//! Clopper–Pearson interval, and `z = (p̂ - ε) / sqrt(ε(1-ε)/q)` against the configured ε; a row with
//! `z > 4` is flagged (a finding, not an error). Queries default to `200/ε` (at least 10^5,
//! at most 2·10^8), so that at least 100 false positives are expected at the promised rate;
//! a row with fewer is marked unresolved, and a row with none is reported by its upper bound.

use clap::Args;
use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::{Experiment, Measured, Outcome};
use crate::error::Result;
use crate::hash::HashScheme;
use crate::keys::KeySource;
use crate::measure::{Measurement, Setup, Trial};
use crate::params::{Count, SeedParams, ValueList, check_count, positive_list, rates};
use crate::plot::{Axis, Colour, Corner, Mark, Panel, Plate, Series, extent};
use crate::preflight::Cost;
use crate::report::{Cell, Column, Record, col, percent};
use crate::stats::z_score;
use crate::structures::{FilterKind, count_present, count_present_parallel, insert_counters};
use crate::timing::{best_ns, round_ns};

pub struct Audit;

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
    /// Absent queries per row [1..=10^10, default 200/fpr within 10^5..=2*10^8]
    #[arg(long, allow_hyphen_values = true)]
    pub queries: Option<Count>,
    /// One filter only (one that can be configured by target rate) [default: all of them]
    #[arg(long)]
    pub filter: Option<FilterKind>,
    #[command(flatten)]
    #[serde(flatten)]
    pub seeds: SeedParams,
    /// Also time each row's absent queries, single-threaded (not reproducible, so files
    /// leave it off)
    #[arg(long)]
    #[serde(default)]
    pub timed: bool,
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
    const ABOUT: &'static str =
        "Each shipped crate configured by target rate and n, measured at n, 1.1n, 1.5n and 2n";
    const AFTER_HELP: &'static str =
        "Filters: bloomlab's classic filter and every peer crate, each configured the way
its README shows (target rate and n):
  fastbloom              BloomFilter::with_false_pos(eps).seed(s).expected_items(n)
  bloomfilter            Bloom::new_for_fp_rate_with_seed(n, eps, seed)
  growable-bloom-filter  GrowableBloom::new(eps, n)   (takes no seed)

Queries default to 200/eps (at least 10^5, at most 2*10^8), so that 100 or more false
positives are expected at the promise; fewer are reported as unresolved. A row whose
rate is more than 4 standard errors above the configured rate is flagged (a finding:
the exit status stays 0).

Examples:
  bloomlab audit --n 1000000 --fpr 0.01
  bloomlab audit --n 100000000 --fpr 0.000001 --format markdown
  bloomlab audit --n 10000 --fpr 0.01 --filter growable-bloom-filter --loads 1,2,4,8";

    fn plan(params: &AuditParams) -> Result<AuditPlan> {
        AuditPlan::of(params)
    }

    /// Each filter filled to the largest load and queried at every load; a growing filter
    /// may hold up to four times the classic design's memory.
    fn cost(plan: &AuditPlan) -> Cost {
        let top = plan.loads.iter().copied().fold(1.0, f64::max) * plan.n as f64;
        let filters = plan.filters.len() as f64;
        let key_operations = plan
            .rates
            .iter()
            .map(|&fpr| {
                let queries = queries_for(plan.queries, fpr).unwrap_or(0) as f64;
                filters * (top + queries * plan.loads.len() as f64)
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
        let rows = run(plan, progress)?;
        let loads: Vec<String> = plan.loads.iter().map(|l| format!("{l}")).collect();
        let title = format!(
            "audit: each filter configured for n = {} at its target rate, filled to {} times n; queries expect at least 100 false positives at the promise",
            plan.n,
            loads.join(", ")
        );
        Outcome::new(title, &rows, notes(&rows), plate(&rows))
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
/// Absent queries timed per row when timing.
const TIMED_QUERIES: u64 = 200_000;

/// The structures audited: every one configured by target rate (bloomlab's classic filter
/// and the peer crates), in registry order.
pub fn audited() -> Vec<FilterKind> {
    FilterKind::all()
        .into_iter()
        .filter(|k| k.structure().for_rate.is_some())
        .collect()
}

/// Absent queries for configured rate ε: `--queries` when given, else `200/ε` within
/// `[10^5, 2·10^8]`.
pub fn queries_for(queries: Option<Count>, fpr: f64) -> Result<u64> {
    match queries {
        Some(q) => check_count("queries", q.0, 1, 10_000_000_000),
        None => Ok(((200.0 / fpr).ceil() as u64).clamp(100_000, 200_000_000)),
    }
}

/// One crate at one load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditRow {
    /// `n` is the keys inserted, `m` the bits allocated at that point, `k` the hashes.
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The n the filter was configured for.
    pub n_planned: u64,
    /// `n / n_planned`.
    pub load: f64,
    /// The ε the filter was configured for.
    pub fpr_configured: f64,
    /// Bits allocated per planned key.
    pub bits_per_key_allocated: f64,
    /// `queries · ε`.
    pub expected_false_positives: f64,
    /// `expected_false_positives >= 100` ([`MIN_EXPECTED_FALSE_POSITIVES`]): enough to
    /// resolve the rate.
    pub resolved: bool,
    /// `(p̂ - ε) / sqrt(ε(1-ε)/q)`.
    pub z_configured: f64,
    /// `z_configured > 4`.
    pub above_configured: bool,
    /// Whether the crate accepts a seed (those that do are run with `--hash-seed`).
    pub seeded: bool,
    /// Single-threaded ns per absent query (only when timed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_query: Option<f64>,
}

impl Record for AuditRow {
    fn columns() -> Vec<Column> {
        vec![
            col("filter", Cell::Plain("filter")),
            col("configured", Cell::Percent("fpr_configured")),
            col("load", Cell::Fixed("load", 2)),
            col("n", Cell::Plain("n")).wide_only(),
            col("bits/key", Cell::Fixed("bits_per_key_allocated", 2)).wide_only(),
            col("hashes", Cell::Plain("k")).wide_only(),
            col("FP/queries", Cell::Ratio("false_positives", "queries")).wide_only(),
            col("measured", Cell::Percent("fpr_measured")),
            col("95% CI", Cell::Interval("ci_low", "ci_high")),
            col("z config", Cell::Fixed("z_configured", 1)),
            col("flag", Cell::Plain("above_configured")),
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
    pub filters: Vec<FilterKind>,
    pub queries: Option<Count>,
    pub seeds: SeedParams,
    pub timed: bool,
}

impl AuditPlan {
    /// The plan of `params`: n, rates, loads and one filter or all of them.
    pub fn of(params: &AuditParams) -> Result<Self> {
        let n = check_count("n", params.n.map_or(DEFAULT_N, |n| n.0), 1, MAX_N)?;
        let rates = rates("fpr", params.fpr.as_ref(), &DEFAULT_RATES)?;
        for &fpr in &rates {
            queries_for(params.queries, fpr)?;
        }
        let loads = positive_list("loads", params.loads.as_ref(), &DEFAULT_LOADS, 100.0)?;
        let filters = match params.filter {
            Some(kind) if kind.structure().for_rate.is_none() => {
                return Err(crate::Error::invalid(
                    "filter",
                    kind,
                    "audit configures each filter by target rate and n, as its crate's README does",
                    FilterKind::names_where(|s| s.for_rate.is_some()),
                ));
            }
            Some(kind) => vec![kind],
            None => audited(),
        };
        for &kind in &filters {
            kind.for_rate(1, 0.5, 0)?;
        }
        Ok(AuditPlan {
            n,
            rates,
            loads,
            filters,
            queries: params.queries,
            seeds: params.seeds.clone(),
            timed: params.timed,
        })
    }
}

/// Audits every filter of the plan at every rate and load, in that order.
pub fn run(plan: &AuditPlan, progress: &ProgressBar) -> Result<Vec<AuditRow>> {
    let seeds = &plan.seeds;
    let keys = KeySource::new(seeds.seed());
    let top = plan
        .loads
        .iter()
        .map(|&load| (plan.n as f64 * load).round() as u64)
        .max()
        .unwrap_or(plan.n);
    let mut rows = Vec::new();
    for &fpr in &plan.rates {
        let queries = queries_for(plan.queries, fpr)?;
        let loads = plan.loads.len() as u64;
        progress.inc_length(plan.filters.len() as u64 * (top + loads * queries));
        // The absent keys timed, the same for every crate and load.
        let timed_keys: Vec<u64> = if plan.timed {
            keys.absent(top, queries.min(TIMED_QUERIES)).collect()
        } else {
            Vec::new()
        };
        for &kind in &plan.filters {
            let mut filter = kind.for_rate(plan.n, fpr, seeds.hash_seed())?;
            let mut inserted = 0;
            for &load in &plan.loads {
                let target = ((plan.n as f64 * load).round() as u64).max(inserted);
                insert_counters(&mut *filter, inserted..target, |c| keys.key(c))?;
                progress.inc(target - inserted);
                inserted = target;
                let false_positives =
                    count_present_parallel(&*filter, top..top + queries, |c| keys.key(c))?;
                let ns_query = plan.timed.then(|| {
                    let ns = best_ns(3, timed_keys.len() as u64, || {
                        // Batched, so that a process behind exec: is timed per batch.
                        std::hint::black_box(count_present(&*filter, &timed_keys).ok());
                    });
                    round_ns(ns)
                });
                let setup = Setup {
                    n: inserted,
                    m: filter.memory_bits(),
                    k: filter.hashes(),
                    queries,
                    seed: seeds.seed(),
                    hash_seed: seeds.hash_seed(),
                    hash: HashScheme::MultiplyShift,
                    filter: kind,
                    keying: Default::default(),
                };
                let trial = Trial::of(&*filter, inserted, false_positives);
                let measurement = Measurement::new("audit", &setup, trial);
                let z_configured = z_score(measurement.fpr_measured, fpr, queries);
                let expected = queries as f64 * fpr;
                rows.push(AuditRow {
                    n_planned: plan.n,
                    load,
                    fpr_configured: fpr,
                    bits_per_key_allocated: setup.m as f64 / plan.n as f64,
                    expected_false_positives: expected,
                    resolved: expected >= MIN_EXPECTED_FALSE_POSITIVES,
                    z_configured,
                    above_configured: z_configured > FLAG_Z,
                    seeded: kind.accepts_seed(),
                    ns_query,
                    measurement,
                });
                progress.inc(queries);
            }
        }
    }
    Ok(rows)
}

/// The reader's summary: per configured rate, each crate's verdict at the planned n and its
/// rate at the largest load; every unresolved or zero row said in words.
pub fn notes(rows: &[AuditRow]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut rates: Vec<f64> = rows.iter().map(|r| r.fpr_configured).collect();
    rates.dedup();
    for fpr in rates {
        let group: Vec<&AuditRow> = rows.iter().filter(|r| r.fpr_configured == fpr).collect();
        let mut kinds: Vec<FilterKind> = group.iter().map(|r| r.measurement.filter).collect();
        kinds.dedup();
        let verdicts: Vec<String> = kinds
            .iter()
            .filter_map(|&kind| {
                let own: Vec<&&AuditRow> = group
                    .iter()
                    .filter(|r| r.measurement.filter == kind)
                    .collect();
                let (first, last) = (own.first()?, own.last()?);
                let verdict = if first.above_configured {
                    "ABOVE its promise"
                } else {
                    "within"
                };
                Some(format!(
                    "{kind} {verdict} at {:.2}n ({}, z {:.1}); {} at {:.2}n ({:.1}x the promise)",
                    first.load,
                    percent(first.measurement.fpr_measured),
                    first.z_configured,
                    percent(last.measurement.fpr_measured),
                    last.load,
                    last.measurement.fpr_measured / fpr
                ))
            })
            .collect();
        notes.push(format!(
            "configured {} for n = {}: {}",
            percent(fpr),
            group[0].n_planned,
            verdicts.join("; ")
        ));
    }
    for r in rows {
        let m = &r.measurement;
        if m.false_positives == 0 {
            notes.push(format!(
                "{} at {:.2}n, configured {}: no false positive in {} queries; the rate is below {} (95% upper bound), not 0",
                m.filter,
                r.load,
                percent(r.fpr_configured),
                m.queries,
                percent(m.ci_high)
            ));
        }
    }
    if let Some(r) = rows.iter().find(|r| !r.resolved) {
        notes.push(format!(
            "unresolved: {} queries at {} expect {:.0} false positives (< {MIN_EXPECTED_FALSE_POSITIVES}); raise --queries to at least {:.0}",
            r.measurement.queries,
            percent(r.fpr_configured),
            r.expected_false_positives,
            (MIN_EXPECTED_FALSE_POSITIVES / r.fpr_configured).ceil()
        ));
    }
    let unseeded: Vec<String> = rows
        .iter()
        .filter(|r| !r.seeded)
        .map(|r| r.measurement.filter.to_string())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if !unseeded.is_empty() {
        notes.push(format!(
            "not seeded: {} (the crate takes no seed: its hash is fixed, so runs repeat exactly and --hash-seed changes nothing)",
            unseeded.join(", ")
        ));
    }
    notes
}

/// One panel per configured rate: each filter's measured rate (with its interval) against
/// the load, its own predicted rate dashed, and the promise (the configured rate) in black.
fn plate(rows: &[AuditRow]) -> Plate {
    let mut rates: Vec<f64> = rows.iter().map(|r| r.fpr_configured).collect();
    rates.dedup();
    let panels = rates
        .iter()
        .map(|&fpr| {
            let group: Vec<&AuditRow> = rows.iter().filter(|r| r.fpr_configured == fpr).collect();
            let span = extent(group.iter().map(|r| r.load));
            let mut series = vec![Series::level(
                Some(format!("configured {}", percent(fpr))),
                Colour::Black,
                Mark::Line(2),
                fpr,
                span,
            )];
            let mut kinds: Vec<FilterKind> = group.iter().map(|r| r.measurement.filter).collect();
            kinds.dedup();
            for (i, kind) in kinds.iter().enumerate() {
                let c = Colour::Palette(i);
                let own: Vec<&&AuditRow> = group
                    .iter()
                    .filter(|r| r.measurement.filter == *kind)
                    .collect();
                // Filters configured alike sit on the same points: spread them a little in x.
                let offset =
                    (i as f64 - (kinds.len() as f64 - 1.0) / 2.0) * (span.1 - span.0) * 0.008;
                series.push(Series::new(
                    None,
                    c,
                    Mark::Dashed(1),
                    own.iter()
                        .map(|r| (r.load + offset, r.measurement.fpr_exact)),
                ));
                series.push(Series::measured(
                    Some(format!("{kind}: measured, dashed predicted")),
                    c,
                    own.iter().map(|r| (r.load + offset, &r.measurement)),
                ));
            }
            Panel {
                title: format!(
                    "Configured {} for n = {}: measured against the promise, {} queries",
                    percent(fpr),
                    group[0].n_planned,
                    group[0].measurement.queries
                ),
                x: Axis::linear("load: keys inserted / n planned"),
                y: Axis::rate(),
                legend: Corner::UpperLeft,
                series,
            }
        })
        .collect();
    Plate { panels }
}
