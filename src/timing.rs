//! The timing mechanism shared by bench, compare and audit: best-of-`repeats` single-threaded
//! passes, in nanoseconds per item.
//!
//! Each figure is the best of `repeats` passes, so that a pass slowed by the machine does not
//! count. Insert times include drawing the key from the key source (about 1 ns, the same for
//! every filter); query keys are drawn beforehand.

use std::hint::black_box;
use std::time::Instant;

use crate::error::Result;
use crate::keys::KeySource;

pub use crate::structures::Membership as Subject;

/// A size to time at.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchSize {
    pub label: &'static str,
    pub m: u64,
}

/// The two sizes: in cache (m = 40,000) and out of cache (m = 2^30 bits).
pub fn default_sizes() -> Vec<BenchSize> {
    vec![
        BenchSize {
            label: "in-cache",
            m: 40_000,
        },
        BenchSize {
            label: "out-of-cache",
            m: 1 << 30,
        },
    ]
}

/// Best-of-`repeats` nanoseconds per call of `pass` over `count` items.
pub fn best_ns(repeats: u32, count: u64, mut pass: impl FnMut()) -> f64 {
    (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            pass();
            start.elapsed().as_nanos() as f64 / count as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// ns per insert, per present and per absent query, and the rate over the absent queries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub ns_insert: f64,
    pub ns_query_present: f64,
    pub ns_query_absent: f64,
    pub fpr_measured: f64,
}

/// Fills fresh filters from `build` with n keys (timed, best of `repeats`), then queries
/// `queries` present and absent keys (timed).
pub fn time_filter(
    build: impl Fn() -> Result<Box<dyn Subject>>,
    n: u64,
    queries: u64,
    repeats: u32,
    seed: u64,
) -> Result<Timing> {
    let keys = KeySource::new(seed);
    let present: Vec<u64> = keys.inserted(queries.min(n)).collect();
    let absent: Vec<u64> = keys.absent(n, queries).collect();
    let mut filter = build()?;
    let mut ns_insert = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let mut fresh = build()?;
        let start = Instant::now();
        keys.inserted(n).for_each(|key| fresh.insert(key));
        // Until the first answer: a static filter (binary fuse) is built here.
        black_box(fresh.contains(0));
        ns_insert = ns_insert.min(start.elapsed().as_nanos() as f64 / n as f64);
        filter = fresh;
    }
    let ns_query_present = best_ns(repeats, present.len() as u64, || {
        black_box(present.iter().filter(|&&key| filter.contains(key)).count());
    });
    let mut false_positives = 0;
    let ns_query_absent = best_ns(repeats, absent.len() as u64, || {
        false_positives = black_box(absent.iter().filter(|&&key| filter.contains(key)).count());
    });
    Ok(Timing {
        ns_insert,
        ns_query_present,
        ns_query_absent,
        fpr_measured: false_positives as f64 / absent.len() as f64,
    })
}

/// A time in ns to one decimal, as the tables show it.
pub fn round_ns(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}
