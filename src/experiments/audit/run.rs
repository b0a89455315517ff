//! Running an audit: every filter of the plan at every rate, in parallel, each filled load by
//! load and queried both ways, its library's refusal kept as a result. Each row (a filter at
//! a rate and load) is cut into the blocks of its absent queries ([`Units`]): a shard counts
//! some, a merge carries the others' counts in (docs/SHARDING.md).

use std::sync::atomic::{AtomicU64, Ordering};

use indicatif::ProgressBar;
use rayon::prelude::*;

use super::both_ways::Asked;
use super::entries::Built;
use super::keys::AuditKeys;
use super::row::row;
use super::{
    ABSENT_FROM, AuditPlan, AuditRow, Entry, TIMED_QUERIES, both_ways, memory, queries_for,
};
use crate::error::{Error, Result};
use crate::experiments::{Counted, Experiment, Units};
use crate::hash::HashScheme;
use crate::keys::KeySource;
use crate::params::preflight::Cost;
use crate::pipeline::measurement::{Measurement, Setup, Unit, Work, filter_digest};
use crate::pipeline::timing::{best_ns, round_ns};
use crate::pipeline::trial::read_trial;
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

/// [`run`], with the refusals.
pub fn run_audit(plan: &AuditPlan, progress: &ProgressBar) -> Result<AuditRun> {
    let mut audit = AuditRun::default();
    for entry in audit_jobs(plan, progress, false)? {
        audit.rows.extend(entry.rows);
        audit.refusals.extend(entry.refusal);
    }
    Ok(audit)
}

/// One filter at one rate: its rows are `first..first + loads.len()`.
pub(super) struct Job<'a> {
    pub fpr: f64,
    pub entry: &'a Entry,
    first: usize,
    loads: Vec<f64>,
}

impl AuditPlan {
    /// Each filter at each rate, at the loads it is audited at: a static structure at loads
    /// up to 1 only (it is built from its keys, not filled past them).
    pub(super) fn jobs(&self) -> Vec<Job<'_>> {
        let mut jobs: Vec<Job> = Vec::new();
        for &fpr in &self.rates {
            for entry in &self.entries {
                let static_beyond = |load: f64| entry.kind.is_static() && load > 1.0;
                jobs.push(Job {
                    fpr,
                    entry,
                    first: jobs.last().map_or(0, |j| j.first + j.loads.len()),
                    loads: self
                        .loads
                        .iter()
                        .copied()
                        .filter(|&l| !static_beyond(l))
                        .collect(),
                });
            }
        }
        jobs
    }

    /// Keys a job inserts and queries (the queries of its rows' work).
    pub(super) fn keys_of(&self, job: &Job) -> Result<u64> {
        let queries = queries_for(self.queries, job.fpr)?;
        let asked = (job.first..job.first + job.loads.len())
            .map(|row| self.work(row).queries_here(0, queries));
        Ok(self.top() + asked.sum::<u64>())
    }

    /// The work of row `row`: all of it unless set.
    fn work(&self, row: usize) -> Work {
        self.work.get(row).cloned().unwrap_or_default()
    }
}

/// Every row of the audit, a filter at a rate and load, is cut into the blocks of its
/// absent queries; its inserted keys are asked back where its block 0 is counted.
impl Units for AuditPlan {
    fn rows(&mut self) -> Vec<Setup> {
        let mut rows = Vec::new();
        for job in self.jobs() {
            let queries = queries_for(self.queries, job.fpr).unwrap_or(0);
            let spec = job.entry.spec(self.n, job.fpr, self.seeds.hash_seed());
            for (i, &load) in job.loads.iter().enumerate() {
                let inserted = (self.n as f64 * load).round() as u64;
                rows.push(Setup {
                    keying: self.keys.keying(),
                    work: self.work(job.first + i),
                    ..Setup::new(spec.clone(), inserted, queries, self.seeds.seed())
                });
            }
        }
        rows
    }
    fn set_work(&mut self, work: &[Work]) {
        self.work = work.to_vec();
    }
    fn count(&mut self, progress: &ProgressBar) -> Result<Vec<Counted>> {
        let jobs = audit_jobs(self, progress, true)?;
        Ok(jobs.into_iter().flat_map(|job| job.counted).collect())
    }
    fn cost(&mut self) -> Cost {
        <super::Audit as Experiment>::cost(self)
    }
}

/// Audits every job, in parallel, on all cores (each on its own seeds, so the rows are
/// those of one at a time, in the same order), except under `--timed`, where each is timed
/// alone. `shard`: only the rows with work are counted, into [`Counted`], and no row made.
fn audit_jobs(plan: &AuditPlan, progress: &ProgressBar, shard: bool) -> Result<Vec<EntryAudit>> {
    let jobs = plan.jobs();
    let keys_of = |job: &Job| plan.keys_of(job);
    for job in &jobs {
        progress.inc_length(keys_of(job)?);
    }
    let audit_one = |job: &Job| -> Result<EntryAudit> {
        let mut audited = EntryAudit::default();
        let refused = match audit_entry(plan, job, &mut audited, progress, shard) {
            Ok(full) => full,
            Err(Error::Exec {
                refused: true,
                message,
                ..
            })
            | Err(Error::Refused { message, .. }) => Some(message),
            Err(error) => return Err(error),
        };
        // The keys a refusal or a shard's rows without work left unsent.
        let counted = audited.counted_keys.load(Ordering::Relaxed);
        progress.inc(keys_of(job)?.saturating_sub(counted));
        if let Some(message) = refused {
            refused_units(plan, job, &mut audited, shard)?;
            audited.refusal = Some(Refusal {
                label: job.entry.label(),
                fpr: job.fpr,
                load: job.loads.get(audited.done).copied().unwrap_or(f64::NAN),
                message,
            });
        }
        Ok(audited)
    };
    match plan.timed && !shard {
        true => jobs.iter().map(audit_one).collect(),
        false => jobs.par_iter().map(audit_one).collect(),
    }
}

/// A shard's rows of a filter at and past the load its library refused: their units
/// counted as nothing (no row is made of them, in the whole run as in a merge).
fn refused_units(plan: &AuditPlan, job: &Job, audited: &mut EntryAudit, shard: bool) -> Result<()> {
    let queries = queries_for(plan.queries, job.fpr)?;
    for row in (job.first + audited.done..job.first + job.loads.len()).filter(|_| shard) {
        let blocks = plan.work(row).blocks(queries);
        let units: Vec<Unit> = blocks
            .map(|block| Unit {
                block,
                ..Unit::default()
            })
            .collect();
        if !units.is_empty() {
            (audited.counted).push(Counted {
                row,
                units,
                ..Counted::default()
            });
        }
    }
    Ok(())
}

/// What auditing one filter at one rate gave: its rows (a shard: its counted rows), the keys
/// counted on the progress bar, the loads done and the library's refusal if it refused.
#[derive(Default)]
struct EntryAudit {
    rows: Vec<AuditRow>,
    counted: Vec<Counted>,
    counted_keys: AtomicU64,
    done: usize,
    refusal: Option<Refusal>,
}

/// Counts `keys` as they are sent, on the shared progress bar and for this filter.
fn count(counted: &AtomicU64, progress: &ProgressBar, keys: u64) {
    progress.inc(keys);
    counted.fetch_add(keys, Ordering::Relaxed);
}

/// What one load of a filter gave: its keys in, its blocks counted, its inserted keys asked.
struct AtLoad {
    load: f64,
    inserted: u64,
    units: Vec<Unit>,
    asked: Option<Asked>,
    ns_query: Option<f64>,
}

/// One filter at one rate, filled load by load, each load's blocks of absent keys counted
/// (those of its work); its rows (a shard: its counts) go into `audited`. A structure that
/// refuses inserts once full (a quotient filter) has no row from the load where it refused
/// one: the refusal is returned, in words. A shard stops at its last row with work.
fn audit_entry(
    plan: &AuditPlan,
    job: &Job,
    audited: &mut EntryAudit,
    progress: &ProgressBar,
    shard: bool,
) -> Result<Option<String>> {
    let seeds = &plan.seeds;
    let queries = queries_for(plan.queries, job.fpr)?;
    let with_work = |i: &usize| !shard || !plan.work(job.first + i).blocks(queries).is_empty();
    let Some(last) = (0..job.loads.len()).rev().find(with_work) else {
        return Ok(None);
    };
    let keys = AuditKeys::new(&plan.keys, seeds.seed(), plan.top(), queries)?;
    // The absent keys timed, the same for every filter and load.
    let timed_keys: Vec<u64> = match plan.timed && !shard {
        true => (KeySource::new(seeds.seed()))
            .absent(ABSENT_FROM, queries.min(TIMED_QUERIES))
            .collect(),
        false => Vec::new(),
    };
    let mut built = job.entry.build(plan.n, job.fpr, seeds.hash_seed())?;
    let mut inserted = 0;
    for (i, &load) in job.loads.iter().enumerate().take(last + 1) {
        let target = ((plan.n as f64 * load).round() as u64).max(inserted);
        let on_keys = |sent| count(&audited.counted_keys, progress, sent);
        let filter = &mut *built.filter;
        keys.fill(filter, inserted..target, &on_keys)?;
        inserted = target;
        if let Some(failed) = filter.failed_inserts().filter(|&failed| failed > 0) {
            return Ok(Some(format!(
                "{failed} of the first {inserted} inserts refused: the filter is full"
            )));
        }
        let work = plan.work(job.first + i);
        let blocks = work.blocks(queries);
        let units = (blocks.clone())
            .map(|block| {
                let counters = keys.block(queries, block);
                let present = keys.count(filter, counters.clone(), &on_keys)?;
                Ok(Unit::counted(block, counters, present))
            })
            .collect::<Result<Vec<_>>>()?;
        // Asked where block 0 is counted; a merge asks again only to name a lost key.
        let asked = (blocks.contains(&0) || work.carried.missed > 0)
            .then(|| both_ways::ask_inserted(filter, &keys, inserted, seeds.seed()))
            .transpose()?;
        let ns_query = (plan.timed && !shard).then(|| {
            let ns = best_ns(3, timed_keys.len() as u64, || {
                // Batched, so that a process behind exec: is timed per batch.
                std::hint::black_box(count_present(filter, &timed_keys).ok());
            });
            round_ns(ns)
        });
        let at = AtLoad {
            load,
            inserted,
            units,
            asked,
            ns_query,
        };
        match shard {
            true => audited
                .counted
                .push(counted(job.first + i, &*built.filter, at)),
            false => audited
                .rows
                .push(audit_row(plan, job, &built, &keys, at, work)?),
        }
        audited.done = i + 1;
    }
    built.filter.finish()?;
    Ok(None)
}

/// A shard's record of one row: its blocks' counts, the inserted keys asked and missed in
/// the unit of block 0, and the filter's digest.
fn counted(row: usize, filter: &dyn crate::structures::Filter, mut at: AtLoad) -> Counted {
    if let (Some(asked), Some(unit)) = (&at.asked, at.units.first_mut())
        && unit.block == 0
    {
        unit.counts.checked = asked.asked;
        unit.counts.missed = asked.lost;
    }
    Counted {
        row,
        units: at.units,
        digest: filter_digest(filter),
        set_bits: filter.knows_set_bits().then(|| filter.set_bits()),
    }
}

/// The row of one load: its counts (its own blocks' and those `work` carries) against its
/// configured rate, both ways, with its memory.
fn audit_row(
    plan: &AuditPlan,
    job: &Job,
    built: &Built,
    keys: &AuditKeys,
    at: AtLoad,
    work: Work,
) -> Result<AuditRow> {
    let (filter, seeds) = (&*built.filter, &plan.seeds);
    let label = format!("{} at {load}n", job.entry.label(), load = at.load);
    work.check_digest(filter_digest(filter), label)?;
    let queries = queries_for(plan.queries, job.fpr)?;
    let present = (at.units.iter()).fold(work.carried, |sum, u| sum + u.counts);
    // The shape the built filter reports: audit sizes each by its own constructor.
    let m = memory::addressed(built.memory.as_ref(), filter.memory_bits());
    let spec = Spec::shape(job.entry.kind.clone(), m, filter.hashes())
        .hashed(HashScheme::MultiplyShift, seeds.hash_seed());
    let setup = Setup {
        keying: plan.keys.keying(),
        ..Setup::new(spec, at.inserted, queries, seeds.seed())
    };
    let overlap = keys.overlap(at.inserted, queries, filter.hashes_bytes())?;
    let false_positives = present.present.saturating_sub(overlap);
    let mut trial = read_trial(&setup, filter, false_positives)?;
    trial.query_overlap = overlap;
    let measurement = Measurement::new("audit", &setup, trial);
    let (entry, load) = (job.entry, at.load);
    let mut row = row(plan, entry, job.fpr, built, load, at.ns_query, measurement);
    let asked = at.asked.unwrap_or(Asked {
        asked: present.checked,
        lost: present.missed,
        first_lost: None,
    });
    both_ways::mark(&mut row, asked);
    memory::mark(
        &mut row,
        built.memory.as_ref().filter(|_| plan.measure_memory),
    );
    Ok(row)
}
