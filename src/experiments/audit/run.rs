//! Running an audit: every filter of the plan at every rate, in parallel, each filled load by
//! load and queried both ways, its library's refusal kept as a result.

use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::ProgressBar;
use rayon::prelude::*;

use super::entries::Built;
use super::keys::AuditKeys;
use super::row::row;
use super::{
    ABSENT_FROM, AuditPlan, AuditRow, Entry, TIMED_QUERIES, both_ways, memory, queries_for,
};
use crate::error::{Error, Result};
use crate::hash::{AppliedHash, HashScheme};
use crate::keys::KeySource;
use crate::pipeline::keying::Keying;
use crate::pipeline::measurement::{Measurement, Setup, Trial};
use crate::pipeline::timing::{best_ns, round_ns};
use crate::structures::{Spec, count_present};

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
    let queries = queries_for(plan.queries, fpr)?;
    let mut keys = AuditKeys::new(&plan.keys, seeds.seed(), plan.top(), queries)?;
    // The absent keys timed, the same for every filter and load.
    let timed_keys: Vec<u64> = match plan.timed {
        true => (KeySource::new(seeds.seed()))
            .absent(ABSENT_FROM, queries.min(TIMED_QUERIES))
            .collect(),
        false => Vec::new(),
    };
    let Built {
        mut filter,
        library,
        seeded,
        memory: readings,
    } = entry.build(plan.n, fpr, seeds.hash_seed())?;
    let (mut inserted, mut overlap) = (0, 0);
    let static_beyond = |load: f64| entry.kind.is_static() && load > 1.0;
    for &load in plan.loads.iter().filter(|&&load| !static_beyond(load)) {
        let target = ((plan.n as f64 * load).round() as u64).max(inserted);
        let on_keys = |sent| count(&audited.counted, progress, sent);
        overlap += keys.fill(&mut *filter, inserted..target, &on_keys)?;
        inserted = target;
        if let Some(failed) = filter.failed_inserts().filter(|&failed| failed > 0) {
            return Ok(Some(format!(
                "{failed} of the first {inserted} inserts refused: the filter is full"
            )));
        }
        let present = keys.count(&*filter, keys.queries(queries), &on_keys)?;
        let ns_query = plan.timed.then(|| {
            let ns = best_ns(3, timed_keys.len() as u64, || {
                // Batched, so that a process behind exec: is timed per batch.
                std::hint::black_box(count_present(&*filter, &timed_keys).ok());
            });
            round_ns(ns)
        });
        // The shape the built filter reports: audit sizes each by its own constructor.
        let m = memory::addressed(readings.as_ref(), filter.memory_bits());
        let spec = Spec::shape(entry.kind.clone(), m, filter.hashes())
            .hashed(HashScheme::MultiplyShift, seeds.hash_seed());
        let setup = Setup {
            keying: Keying {
                keys: plan.keys.keys(),
                query_keys: plan.keys.query_keys.clone(),
            },
            ..Setup::new(spec, inserted, queries, seeds.seed())
        };
        let duplicates = plan.keys.keys().duplicates("keys", inserted)?;
        let distinct = inserted - duplicates.unwrap_or(0);
        let mut trial = Trial::of(&*filter, distinct, present.saturating_sub(overlap));
        trial.duplicate_keys = duplicates;
        trial.query_overlap = overlap;
        if keys.strings() && !filter.hashes_bytes() {
            trial.hash = AppliedHash::PreHashed(Box::new(trial.hash));
        }
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
        let asked = both_ways::ask_inserted(&*filter, &keys, inserted, seeds.seed())?;
        both_ways::mark(&mut row, asked);
        memory::mark(&mut row, readings.as_ref().filter(|_| plan.measure_memory));
        audited.rows.push(row);
    }
    filter.finish()?;
    Ok(None)
}
