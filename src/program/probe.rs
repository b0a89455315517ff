//! What bloomlab learns of a program before the work, by short sessions of its own: whether
//! it sizes itself (refuses a header's m and k and takes `(n, fpr)`), and how fast it is.

use super::options::ProgramOptions;
use super::running::{Program, Size};
use crate::error::{Error, Result};

/// Keys, bits and k of the shape a program is asked to take by [`sizes_itself`].
const SIZING_PROBE: (u64, u64, u32) = (1_000, 10_000, 7);

/// What a program that sizes itself said: one that refuses a header's m and k (as rbloom,
/// pybloom-live, pyprobables and Guava do) and takes `(n, fpr)`, found before work by two
/// sessions of [`SIZING_PROBE`]'s size, hash seed 0. None for a program that takes m and k
/// (or refuses both: the run then reports its refusal).
pub fn sizes_itself(command: &str, options: &ProgramOptions) -> Result<Option<String>> {
    let (n, m, k) = SIZING_PROBE;
    let refusal = match Program::start(command, options, n, 0, Size::Shape { m, k }) {
        Ok(mut program) => return program.finish().map(|()| None),
        Err(Error::Exec {
            refused: true,
            message,
            ..
        }) => message,
        Err(other) => return Err(other),
    };
    match Program::start(command, options, n, 0, Size::Rate { fpr: 0.01 }) {
        Ok(mut program) => {
            program.finish()?;
            let reason = refusal
                .split_once("refused: ")
                .map_or(&*refusal, |(_, r)| r);
            Ok(Some(reason.to_string()))
        }
        Err(Error::Exec { refused: true, .. }) => Ok(None),
        Err(other) => Err(other),
    }
}

/// Seconds per key assumed for a program too small a run to probe, or whose probe failed (the
/// run reports the failure itself): a key crosses two pipes as text.
pub const EXEC_SECONDS_PER_KEY: f64 = 1e-6;
/// The slowest a program is assumed to be without a probe: runs of fewer key operations
/// than 60 s at this speed are not probed (they cannot reach the `--yes` limit).
const EXEC_SLOWEST_SECONDS_PER_KEY: f64 = 100e-6;

/// Seconds `operations` inserts and queries of a program are expected to take:
/// [`EXEC_SECONDS_PER_KEY`] each for a run too small to need a probe, else `probed()` each
/// (the speed its probe measured, [`probed_seconds_per_key`]).
pub fn operations_seconds(operations: f64, probed: impl FnOnce() -> f64) -> f64 {
    if operations * EXEC_SLOWEST_SECONDS_PER_KEY < 60.0 {
        operations * EXEC_SECONDS_PER_KEY
    } else {
        operations * probed()
    }
}

/// [`seconds_per_key`], or [`EXEC_SECONDS_PER_KEY`] when the probe fails.
pub fn probed_seconds_per_key(command: &str, options: &ProgramOptions) -> f64 {
    seconds_per_key(command, options).unwrap_or(EXEC_SECONDS_PER_KEY)
}

/// Keys the speed probe inserts and then queries.
const SPEED_PROBE_KEYS: u64 = 50_000;
/// Keys per request of the speed probe: the pipeline's batch
/// ([`crate::structures::BATCH`]), so that the probe pays per request what a run pays.
const SPEED_PROBE_BATCH: usize = 4_096;

/// CPU seconds per key of the program and of bloomlab feeding it ([`cpu_seconds`]), timed
/// on [`SPEED_PROBE_KEYS`] inserts and as many queries into a filter sized for them by
/// shape (10 bits per key, k = 7), else by rate (1%), its start-up included: a few
/// milliseconds for a compiled program, tens for an interpreter.
pub fn seconds_per_key(command: &str, options: &ProgramOptions) -> Result<f64> {
    let n = SPEED_PROBE_KEYS;
    let start = cpu_seconds();
    let shape = Size::Shape { m: 10 * n, k: 7 };
    let mut program = Program::start(command, options, n, 1, shape)
        .or_else(|_| Program::start(command, options, n, 1, Size::Rate { fpr: 0.01 }))?;
    let source = crate::keys::KeySource::new(1);
    let inserted: Vec<u64> = (0..n).map(|c| source.key(c)).collect();
    let queried: Vec<u64> = (n..2 * n).map(|c| source.key(c)).collect();
    for batch in inserted.chunks(SPEED_PROBE_BATCH) {
        program.insert_ints(batch)?;
    }
    let mut answers = vec![false; SPEED_PROBE_BATCH];
    for batch in queried.chunks(SPEED_PROBE_BATCH) {
        program.query_ints(batch, &mut answers[..batch.len()])?;
    }
    // Ending the program lets its CPU time be counted.
    program.finish()?;
    Ok((cpu_seconds() - start) / (2 * n) as f64)
}

/// User and system CPU seconds of this process and of its children that have ended.
pub fn cpu_seconds() -> f64 {
    rusage_seconds(libc::RUSAGE_SELF) + rusage_seconds(libc::RUSAGE_CHILDREN)
}

/// User and system CPU seconds of this process, every thread, its children left out.
pub fn own_cpu_seconds() -> f64 {
    rusage_seconds(libc::RUSAGE_SELF)
}

/// User and system CPU seconds of `who` (`getrusage`); 0 when it cannot be read.
fn rusage_seconds(who: libc::c_int) -> f64 {
    // SAFETY: getrusage writes a plain struct it is given; zeroed is a valid rusage.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: `usage` is a valid, writable rusage for the call's duration.
    if unsafe { libc::getrusage(who, &mut usage) } != 0 {
        return 0.0;
    }
    let seconds = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 * 1e-6;
    seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
