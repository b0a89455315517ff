//! Every call `advise` makes into bloomlab's measurement and timing code, in one place: the
//! rate of a configuration at the real n (the shared measurement path), its lookup times
//! (the shared timing passes), the cost of a cache-line read, and a filled filter for the
//! end-to-end workload.

use super::cost::{Bounded, INPUT_CONFIDENCE, median_interval};
use crate::error::Result;
use crate::keys::{IntKeys, KeySpec};
use crate::pipeline::keying::Keying;
use crate::pipeline::measurement::{Measurement, Setup};
use crate::pipeline::timing::{
    LineBuffer, Operation, PassKeys, interleave, pass_times, time_operation, time_passes,
};
use crate::pipeline::trial::read_trial;
use crate::pipeline::{count, fill, measure_counted};
use crate::structures::{Filter, Spec};

/// What fixes a configuration's filter and keys: the filter's own shape, and the seed and
/// source of the keys it holds and is asked.
#[derive(Clone, Debug, PartialEq)]
pub struct Keyed {
    pub spec: Spec,
    pub n: u64,
    pub seed: u64,
    pub keys: KeySpec,
}

/// The rate of the shape: n keys inserted, `queries` absent ones asked, with its interval
/// and every prediction. `on_keys` counts keys for progress.
pub fn rate(keyed: &Keyed, queries: u64, on_keys: &(dyn Fn(u64) + Sync)) -> Result<Measurement> {
    let setup = Setup {
        keying: Keying {
            keys: keyed.keys.clone(),
            ..Keying::default()
        },
        ..Setup::new(keyed.spec.clone(), keyed.n, queries, keyed.seed)
    };
    measure_counted("advise", &setup, on_keys)
}

/// The integer keys the timings and the workload use: the source's own where it makes
/// integers, random keys otherwise (byte keys reach every structure as their u64 prehash).
pub fn int_keys(keyed: &Keyed) -> IntKeys {
    keyed.keys.ints(keyed.seed).unwrap_or_else(|| {
        KeySpec::default()
            .ints(keyed.seed)
            .expect("random keys are integers")
    })
}

/// The filter of the shape holding its n keys.
pub fn filled(keyed: &Keyed) -> Result<Box<dyn Filter>> {
    match filled_within(keyed, &|_, _| true)? {
        Built::Filled(filter, _) => Ok(filter),
        Built::Stopped(..) => unreachable!("a build that always fits is never stopped"),
    }
}

/// Pieces a filter is filled in, the time left checked after each.
const PIECES: u64 = 16;

/// A filter of the shape filled, or its build stopped for time.
pub enum Built {
    /// The filter and the ns its build took.
    Filled(Box<dyn Filter>, f64),
    /// Stopped after this many of the n keys, after this many ns.
    Stopped(u64, f64),
}

/// The filter of the shape filled in [`PIECES`] pieces (the same filter as in one: the
/// keys go in in the same order); after each but the last, `fits(rest, took)` says whether
/// the rest of the build, priced at the last piece's ns per key (a table fills slower as
/// it fills: the last piece is the dearest so far), fits after the `took` ns spent on it.
pub fn filled_within(keyed: &Keyed, fits: &dyn Fn(f64, f64) -> bool) -> Result<Built> {
    let started = std::time::Instant::now();
    let ns = || started.elapsed().as_nanos() as f64;
    let mut filter = keyed.spec.build(keyed.n)?;
    let keys = int_keys(keyed);
    let (n, mut done) = (keyed.n, 0);
    while done < n {
        let (end, before) = ((done + n.div_ceil(PIECES)).min(n), ns());
        fill(&mut *filter, done..end, |c| keys.key(c), true, &|_| {})?;
        let rest = (ns() - before) / (end - done) as f64 * (n - end) as f64;
        done = end;
        if done < n && !fits(rest, ns()) {
            return Ok(Built::Stopped(done, ns()));
        }
    }
    Ok(Built::Filled(filter, ns()))
}

/// The rate of `filter`, holding the shape's keys, on `queries` absent ones: where the keys
/// are the default ones, counted on keys `n..n + queries` as [`rate`]'s shared path counts
/// them on a filter it builds anew (the same filter), so that a contender is built once;
/// `None` for other keys.
pub fn rate_of(filter: &dyn Filter, keyed: &Keyed, queries: u64) -> Result<Option<Measurement>> {
    if !keyed.keys.is_default() {
        return Ok(None);
    }
    let (keys, n) = (int_keys(keyed), keyed.n);
    let false_positives = count(filter, n..n + queries, |c| keys.key(c), &|_| {})?;
    let setup = Setup::new(keyed.spec.clone(), n, queries, keyed.seed);
    let trial = read_trial(&setup, filter, false_positives)?;
    Ok(Some(Measurement::new("advise", &setup, trial)))
}

/// ns per absent and per present lookup of a filled filter, key by key or batched, over
/// `passes` passes of `count` keys each (absent keys from counter `n + 2^40`, clear of the
/// rate's queries).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Lookups {
    pub absent: Bounded,
    pub present: Bounded,
}

/// Times the lookups of `filter` (holding the shape's keys): absent and present passes in
/// turn, so that the machine's other load slows both alike; each median with its
/// [`median_interval`].
pub fn lookups(
    filter: &mut dyn Filter,
    keyed: &Keyed,
    batched: bool,
    count: u64,
    passes: u32,
) -> Result<Lookups> {
    let ints = int_keys(keyed);
    let n = keyed.n;
    let pass_keys = PassKeys {
        inserted: (0..count).map(|i| ints.key(i % n)).collect(),
        absent: (0..count).map(|i| ints.key(n + (1 << 40) + i)).collect(),
    };
    let operations = [Operation::Absent, Operation::Present];
    let ns = interleave(passes, operations.len(), |i| {
        time_operation(filter, operations[i], batched, &pass_keys, 1).map(|p| p.median)
    })?;
    let [absent, present] = [0, 1].map(|i| median_interval(ns[i].clone(), INPUT_CONFIDENCE));
    Ok(Lookups { absent, present })
}

/// ns per cache line of reads whose addresses are known ahead, in a buffer of `bytes`: what
/// one more line of a lookup costs at that size (the median of `passes`).
pub fn independent_line_ns(bytes: u64, reads: u64, passes: u32) -> Result<f64> {
    let buffer = LineBuffer::new(bytes, 7)?;
    buffer.read_independent(0, reads);
    let mut first = reads;
    Ok(time_passes(passes, reads, || {
        buffer.read_independent(first, reads);
        first += reads;
    })
    .median)
}

/// ns per dependent read (each address read from the line before) in `buffer`: the cost of
/// a cache miss, the median of `passes` with its [`median_interval`].
pub fn dependent_read_ns(buffer: &LineBuffer, reads: u64, passes: u32) -> Bounded {
    buffer.read_dependent(reads);
    let ns = pass_times(passes, reads, || buffer.read_dependent(reads));
    median_interval(ns, INPUT_CONFIDENCE)
}
