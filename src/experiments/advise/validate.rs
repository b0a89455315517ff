//! The end-to-end check of a ranking: the workload itself, run with a filter in front of a
//! simulated lookup of cost `t_w` and without one. Queries are present and absent keys in the
//! exact shares asked, in a pseudo-random order; a query the filter passes does the work.
//! The work is a calibrated busy loop, or for `cache-miss` one dependent read in a buffer far
//! larger than the cache, continuing one chase through it.
//!
//! The contenders' lookups are timed in the same shape, beside the work ([`FilterPart`]);
//! what that leaves out shows here: other keys, and the filters of the other contenders
//! evicting each other's from cache between passes.

use std::hint::black_box;

use rand::SeedableRng;
use rand::seq::SliceRandom;
use rand_pcg::Pcg64;

use super::cost::{Bounded, drift};
use super::measure::{Keyed, int_keys};
use crate::error::Result;
use crate::pipeline::timing::{LineBuffer, Passes, time_pass, time_passes, try_time_pass};
use crate::structures::{BATCH, Filter};

/// The work a query that passes the filter does.
pub enum Work {
    /// `iterations` steps of a dependent chain, seeded by the end of the one before (`last`),
    /// so that no two calls overlap in the processor: each costs its whole latency, with a
    /// filter in front or without one, as in its calibration.
    Spin { iterations: u64, last: u64 },
    /// One dependent read in `buffer`, from the line the last one named.
    Miss { buffer: LineBuffer, line: u64 },
    /// No work: the workload's lookups and the branch on each answer, alone.
    Nothing,
}

/// Steps of [`spin`] timed per calibration pass, over as many calls as that takes (at least
/// 1000 calls of a short loop, where the call's overhead must average out; at least one of
/// a long one, so that a 1 ms loop calibrates in tens of ms, not seconds).
const CALIBRATION_STEPS: u64 = 20_000_000;

/// `steps` steps of a chain that the compiler can neither drop nor shorten: a multiply, a
/// rotation and an xor, each on the step before (a multiply-add chain alone would be
/// reassociated into fewer, wider steps).
fn spin(steps: u64, seed: u64) -> u64 {
    let mut x = seed | 1;
    for i in 0..black_box(steps) {
        x = (x.wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29)) ^ i;
    }
    black_box(x)
}

/// ns per call of `spin(steps)`, the median of five passes of about
/// [`CALIBRATION_STEPS`] steps.
fn spin_call_ns(steps: u64) -> f64 {
    let calls = match steps {
        0..=20_000 => (CALIBRATION_STEPS / steps.max(1)).max(1000),
        _ => (CALIBRATION_STEPS / steps).max(1),
    };
    time_passes(5, calls, || {
        let mut last = 0;
        for c in 0..calls {
            last = spin(steps, c ^ last);
        }
    })
    .median
}

/// Longest call of [`spin`] calibrated at its own length (1 ms): a longer one is that
/// call's steps in proportion, its fixed overhead long amortised, so that calibrating
/// `--work-ns 1e9` takes milliseconds, not the seconds of calls of its length.
const LONGEST_CALIBRATED_NS: f64 = 1e6;

/// Steps of [`spin`] whose call takes `work_ns`: a first guess from a long call, then two
/// corrections at the call's own length (short calls carry the call's fixed overhead); past
/// [`LONGEST_CALIBRATED_NS`], that length's steps in proportion.
pub fn spin_steps(work_ns: f64) -> u64 {
    if work_ns > LONGEST_CALIBRATED_NS {
        let steps = spin_steps(LONGEST_CALIBRATED_NS) as f64;
        return (steps * work_ns / LONGEST_CALIBRATED_NS).round() as u64;
    }
    let per_step = spin_call_ns(10_000) / 10_000.0;
    let mut steps = (work_ns / per_step).round().max(1.0) as u64;
    for _ in 0..2 {
        let took = spin_call_ns(steps);
        let per_step = took / steps as f64;
        steps = ((steps as f64) + (work_ns - took) / per_step)
            .round()
            .max(1.0) as u64;
    }
    steps
}

impl Work {
    fn run(&mut self, key: u64) {
        match self {
            Work::Spin { iterations, last } => *last = spin(*iterations, key ^ *last),
            Work::Miss { buffer, line } => *line = buffer.next_line(*line),
            Work::Nothing => {
                black_box(key);
            }
        }
    }
}

/// Where the queries that time a filter's lookups for the model start
/// ([`super::spread::WorkloadShape`], and beside the workload in [`run`]), so that they ask other keys
/// than the validation's, which start at 0.
pub const MODEL_FIRST: u64 = 1 << 32;

/// The queries of the workload: `count` keys, `round(σ·count)` of them absent, shuffled;
/// absent keys from counter `n + 2^41 + first`, present ones spread over the n from `first`.
pub fn queries(keyed: &Keyed, negative_share: f64, count: u64, seed: u64, first: u64) -> Vec<u64> {
    let keys = int_keys(keyed);
    let n = keyed.n;
    let absent = (negative_share * count as f64).round() as u64;
    let mut queries: Vec<u64> = (0..count)
        .map(|i| match i < absent {
            true => keys.key(n + (1 << 41) + first + i),
            false => keys.key((first + i).wrapping_mul(0x9E37_79B9) % n),
        })
        .collect();
    queries.shuffle(&mut Pcg64::seed_from_u64(seed));
    queries
}

/// ns per query of one pass: each query asks the filter (key by key, or a batch at a time)
/// and does the work when it passes; without a filter every query does the work.
pub fn pass(
    filter: Option<&dyn Filter>,
    queries: &[u64],
    batched: bool,
    work: &mut Work,
) -> Result<f64> {
    try_time_pass(queries.len() as u64, || {
        match (filter, batched) {
            (None, _) => queries.iter().for_each(|&key| work.run(key)),
            (Some(filter), false) => {
                for &key in queries {
                    if filter.contains(key) {
                        work.run(key);
                    }
                }
            }
            (Some(filter), true) => {
                let mut answers = [false; BATCH];
                for batch in queries.chunks(BATCH) {
                    let answers = &mut answers[..batch.len()];
                    filter.contains_many(batch, answers)?;
                    for (&key, _) in batch.iter().zip(answers.iter()).filter(|(_, a)| **a) {
                        work.run(key);
                    }
                }
            }
        }
        Ok(())
    })
}

/// One contender run end to end: ns per query of the workload, and for a filter its part
/// of the workload on the model's keys ([`FilterPart`]), timed in the same rounds.
pub struct Checked {
    pub workload: Passes,
    pub lookups: Option<Passes>,
    /// Rounds the workload ran (each round one pass of it).
    pub rounds: usize,
}

/// Runs each contender (a filter, or none) for `rounds` rounds, one pass each per round in
/// turn so that the machine's other load slows them alike, while `another(ns)`, told the
/// wall ns of the round just run, says another fits: ns per query, median and spread.
/// Each filter's workload pass follows two measurements of its part of the workload on
/// `model` keys (`make(count)`): the first warms the filter, the second times it beside the
/// workload. A workload runs one filter throughout, and a pass that started with its filter evicted by the contender
/// before it would price the switch (sbbf, 1.4 MB, at n = 10^6: 7.95 ns per query cold
/// against 7.03 warm over 10^6 queries, the refill about 0.9 ms a pass).
pub fn run(
    contenders: &[Option<&dyn Filter>],
    (queries, model): (&[u64], MakeQueries),
    batched: bool,
    (work, t_w): (&mut Work, f64),
    (rounds, another): (u32, &dyn Fn(f64) -> bool),
) -> Result<Vec<Checked>> {
    pass(
        contenders.first().copied().flatten(),
        queries,
        batched,
        work,
    )?;
    // Each contender's subjects in turn: its part of the workload (a filter's), then the workload.
    let subjects: Vec<(usize, bool)> = (contenders.iter().enumerate())
        .flat_map(|(c, filter)| {
            [(c, true), (c, false)]
                .into_iter()
                .skip(usize::from(filter.is_none()))
        })
        .collect();
    let parts = (contenders.iter())
        .map(|f| {
            f.map(|f| FilterPart::new(f, batched, t_w, model))
                .transpose()
        })
        .collect::<Result<Vec<_>>>()?;
    let part = |c: usize, work: &mut Work| match (&parts[c], contenders[c]) {
        (Some(part), Some(filter)) => part.ns(filter, batched, work),
        _ => Ok(0.0),
    };
    let mut ns = vec![Vec::new(); subjects.len()];
    for _ in 0..rounds {
        let started = std::time::Instant::now();
        for (&subject, ns) in subjects.iter().zip(&mut ns) {
            ns.push(match subject {
                (c, true) => {
                    part(c, work)?;
                    part(c, work)?
                }
                (c, false) => pass(contenders[c], queries, batched, work)?,
            });
        }
        if !another(started.elapsed().as_nanos() as f64) {
            break;
        }
    }
    Ok(checked(contenders.len(), &subjects, ns))
}

/// Each of `contenders` contenders' passes, from the passes `ns` of each of `subjects` (a
/// contender, and whether the passes time its part of the workload or the workload).
fn checked(contenders: usize, subjects: &[(usize, bool)], ns: Vec<Vec<f64>>) -> Vec<Checked> {
    let mut checked: Vec<Checked> = (0..contenders)
        .map(|_| Checked {
            workload: Passes::of(Vec::new()),
            lookups: None,
            rounds: 0,
        })
        .collect();
    for (&(c, lookups), ns) in subjects.iter().zip(ns) {
        match lookups {
            true => checked[c].lookups = Some(Passes::of(ns)),
            false => {
                checked[c].rounds = ns.len();
                checked[c].workload = Passes::of(ns);
            }
        }
    }
    checked
}

/// Queries per validation pass: about `budget_ns` of work without a filter, within 500 and
/// 10^6.
pub fn query_count(work_ns: f64, budget_ns: f64) -> u64 {
    (budget_ns / work_ns.max(1.0)).clamp(500.0, 1e6) as u64
}

/// The queries `filter` passes, in their order, asked as [`pass`] asks them.
fn passing(filter: &dyn Filter, queries: &[u64], batched: bool) -> Result<Vec<u64>> {
    let mut answers = vec![false; queries.len()];
    match batched {
        true => (queries.chunks(BATCH).zip(answers.chunks_mut(BATCH)))
            .try_for_each(|(batch, answers)| filter.contains_many(batch, answers))?,
        false => (queries.iter().zip(&mut answers)).for_each(|(&key, a)| *a = filter.contains(key)),
    }
    Ok((queries.iter().zip(answers))
        .filter_map(|(&key, a)| a.then_some(key))
        .collect())
}

/// A count of queries, and what makes that many queries of the workload's shape.
pub type MakeQueries<'a> = (u64, &'a dyn Fn(u64) -> Vec<u64>);

/// ns of work at most in one pass of a [`FilterPart`].
const PART_WORK_NS: f64 = 2e6;

/// Fewest queries a [`FilterPart`] beside the work times.
const PART_MIN_QUERIES: u64 = 1000;

/// Longest work a [`FilterPart`] is timed beside: the processor runs at most its reorder
/// window (a few hundred instructions, tens of ns) of the queries after a work during it, a
/// small share of a longer work, which two passes of it subtracted would drown in noise.
pub const PART_LONGEST_WORK_NS: f64 = 1e3;

/// Whether a [`FilterPart`] at `t_w` ns of work a query is timed beside the work (at most
/// [`PART_LONGEST_WORK_NS`]), rather than as the lookups alone.
pub fn part_beside_work(t_w: f64) -> bool {
    t_w <= PART_LONGEST_WORK_NS
}

/// ns of work the [`FilterPart`]s of one contender's timing do at most, over `passes`
/// passes and a warming one: a pass of the workload and one of its work alone each.
pub fn part_work_ns(t_w: f64, passes: u32) -> f64 {
    match part_beside_work(t_w) {
        true => 2.0 * PART_WORK_NS * f64::from(passes + 1),
        false => 0.0,
    }
}

/// A filter's part of the workload: a pass of the workload on queries of its shape less a
/// pass of its work alone (the work of the queries the filter passes, in their order), the
/// work first. The processor runs the lookups after a query during its work, so that where
/// the work is short a filter adds less to it than its lookups alone take. Where the work
/// is longer than [`PART_LONGEST_WORK_NS`], or fewer than [`PART_MIN_QUERIES`] queries'
/// work fits [`PART_WORK_NS`], the part is the lookups alone (the overlap is negligible).
pub struct FilterPart {
    queries: Vec<u64>,
    /// The queries the filter passes, which do the work; `None` for the lookups alone.
    passing: Option<Vec<u64>>,
}

impl FilterPart {
    /// The part on `make(count)`, or on `make(c)` for the most `c` whose work fits
    /// [`PART_WORK_NS`] at `t_w` ns a query (`make` gives queries of the workload's shape:
    /// σ of them absent, exactly).
    pub fn new(
        filter: &dyn Filter,
        batched: bool,
        t_w: f64,
        (count, make): MakeQueries,
    ) -> Result<FilterPart> {
        let queries = make(count);
        let all = passing(filter, &queries, batched)?;
        let share = all.len() as f64 / queries.len().max(1) as f64;
        let fits = (PART_WORK_NS / (t_w * share)).min(count as f64) as u64;
        if !part_beside_work(t_w) || fits < PART_MIN_QUERIES.min(count) || queries.is_empty() {
            return Ok(FilterPart {
                queries,
                passing: None,
            });
        }
        let (queries, passing) = match fits < count {
            true => {
                let queries = make(fits);
                let passing = passing(filter, &queries, batched)?;
                (queries, passing)
            }
            false => (queries, all),
        };
        Ok(FilterPart {
            queries,
            passing: Some(passing),
        })
    }

    /// ns per query of one measurement of the part.
    pub fn ns(&self, filter: &dyn Filter, batched: bool, work: &mut Work) -> Result<f64> {
        let Some(passing) = &self.passing else {
            return self.alone(filter, batched);
        };
        let alone = match passing.is_empty() {
            true => 0.0,
            false => pass(None, passing, false, work)? * passing.len() as f64,
        };
        let workload = pass(Some(filter), &self.queries, batched, work)?;
        Ok(workload - alone / self.queries.len() as f64)
    }

    /// ns per query of the lookups alone, on the same queries (no work).
    pub fn alone(&self, filter: &dyn Filter, batched: bool) -> Result<f64> {
        pass(Some(filter), &self.queries, batched, &mut Work::Nothing)
    }

    pub fn beside_work(&self) -> bool {
        self.passing.is_some()
    }
}

/// ns of work in each pass that times the work again between contenders.
const PROBE_NS: f64 = 5e6;

/// Line reads in each pass that times the memory again between contenders.
const PROBE_READS: u64 = 100_000;

/// Largest buffer the memory passes read: past every cache, as the largest tables are.
const PROBE_MOST_BYTES: u64 = 64 << 20;

/// The work, and the memory of the contenders' size, timed in short passes spread over the
/// run: ns per query, and ns per line read, of each. A lookup past the caches waits on a
/// memory that other tenants of the host share, which the work (a busy loop) does not
/// show: the memory's passes show how its speed moves over the run.
pub struct Probes {
    keys: Vec<u64>,
    pub ns: Vec<f64>,
    lines: Option<LineBuffer>,
    pub line_ns: Vec<f64>,
}

impl Probes {
    /// Passes of [`PROBE_NS`] of work of `t_w` ns a query; none where one query is longer.
    pub fn new(t_w: f64) -> Probes {
        Probes {
            keys: (0..(PROBE_NS / t_w).min(1e5) as u64).collect(),
            ns: Vec::new(),
            lines: None,
            line_ns: Vec::new(),
        }
    }

    /// From now on each pass also reads [`PROBE_READS`] lines of a buffer of `bytes` (the
    /// largest contender's table, at most [`PROBE_MOST_BYTES`]), each pass lines no pass
    /// read before. None now: the buffer was just written, so its lines would still be
    /// cached, as no later pass finds them.
    pub fn watch_memory(&mut self, bytes: u64) -> Result<()> {
        self.lines = Some(LineBuffer::new(bytes.min(PROBE_MOST_BYTES), 11)?);
        Ok(())
    }

    fn take_memory(&mut self) {
        if let Some(buffer) = &self.lines {
            let first = self.line_ns.len() as u64 * PROBE_READS;
            self.line_ns.push(time_pass(PROBE_READS, || {
                buffer.read_independent(first, PROBE_READS)
            }));
        }
    }

    pub fn take(&mut self, work: &mut Work) -> Result<()> {
        if !self.keys.is_empty() {
            self.ns.push(pass(None, &self.keys, false, work)?);
        }
        self.take_memory();
        Ok(())
    }

    /// The factor by which a lookup timed at one moment of the run may differ at another:
    /// the larger of the work's [`drift`] and the memory's.
    pub fn lookup_drift(&self) -> f64 {
        drift(&self.ns).max(drift(&self.line_ns))
    }

    /// `t_w` as the passes measured it, their median within their [`drift`]; `calibrated`
    /// where there are fewer than three.
    pub fn t_work(&self, calibrated: Bounded) -> Bounded {
        match self.ns.len() {
            0..3 => calibrated,
            _ => Bounded::exact(Passes::of(self.ns.clone()).median).widened(drift(&self.ns)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::structures::{FilterKind, Spec};

    /// The filter's part times the most queries whose work fits [`PART_WORK_NS`], made
    /// anew at that count, and does the work for exactly those the filter passes; where
    /// 1000 queries' work does not fit, or one query's work is longer than
    /// [`PART_LONGEST_WORK_NS`], it times the lookups alone.
    #[test]
    fn the_filter_part_works_where_the_filter_passes_and_within_its_budget() {
        let kind = FilterKind::named("classic").unwrap();
        let mut filter = Spec::shape(kind, 4096, 2).build(500).unwrap();
        (0..500u64).for_each(|key| filter.insert(key));
        let make = |count: u64| (250..250 + count).collect::<Vec<u64>>();
        for batched in [false, true] {
            let part = FilterPart::new(&*filter, batched, 20.0, (4000, &make)).unwrap();
            assert!(part.beside_work());
            assert_eq!(part.queries, make(4000));
            let expected = part.queries.iter().copied().filter(|&k| filter.contains(k));
            let passing = part.passing.as_ref().unwrap();
            assert_eq!(*passing, expected.collect::<Vec<_>>());
            assert!(passing.len() >= 250 && passing.len() < 1000);
            // Passing share about 0.05: 2 ms of work fits about 40,000 queries of 1 µs ...
            let part = FilterPart::new(&*filter, batched, 1e3, (100_000, &make)).unwrap();
            assert!((10_000..100_000).contains(&part.queries.len()));
            assert!(part.passing.is_some());
            // ... and none longer than 1 µs, nor 1000 of 100 µs.
            for t_w in [1.5e3, 1e5] {
                let part = FilterPart::new(&*filter, batched, t_w, (4000, &make)).unwrap();
                assert!(part.passing.is_none() && part.queries.len() == 4000);
            }
        }
    }
}
