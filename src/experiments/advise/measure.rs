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
use crate::pipeline::{fill, measure_counted};
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
    let mut filter = keyed.spec.build(keyed.n)?;
    let keys = int_keys(keyed);
    fill(&mut *filter, 0..keyed.n, |c| keys.key(c), true, &|_| {})?;
    Ok(filter)
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
