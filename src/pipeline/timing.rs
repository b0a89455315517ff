//! The timing mechanism shared by bench, compare and audit: single-threaded passes in CPU
//! time of the calling thread (so that time the scheduler gives other programs does not
//! count), reported as the median of the passes with their spread; and the memory limit a
//! filter's probes run against, random cache-line reads in a buffer of the filter's size.
//!
//! A filter is filled once (not timed); each pass then queries, or inserts again, a fixed
//! set of keys drawn beforehand. Inserting a key again into a bit array writes the same
//! lines as inserting it the first time, so the insert time is that of a first insertion at
//! the filled load; structures for which that is not so are timed on fresh filters.

use std::hint::black_box;
use std::time::Instant;

use rand::{Rng, RngExt, SeedableRng};
use rand_pcg::Pcg64;

use crate::error::Result;
use crate::keys::KeySource;
use crate::structures::bloom::GROUP;
use crate::structures::{Filter, count_present};
use crate::words::{LINE_WORDS, Words, prefetch};

pub use crate::structures::Membership as Subject;

/// The machine that made the timings: the CPU's model name (`/proc/cpuinfo`, else the
/// architecture) and the widest vector path it runs.
pub fn machine() -> String {
    let model = cpuinfo_field("model name")
        .map(|name| name.split_whitespace().collect::<Vec<_>>().join(" "));
    format!(
        "{}, vector path {}",
        model.unwrap_or_else(|| std::env::consts::ARCH.to_string()),
        crate::hash::Simd::best().name()
    )
}

/// The value of `name` for the first CPU in `/proc/cpuinfo`; None where it has none.
pub fn cpuinfo_field(name: &str) -> Option<String> {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").ok()?;
    cpuinfo
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .find_map(|line| {
            let (key, value) = line.split_once(':')?;
            (key.trim() == name).then(|| value.trim().to_string())
        })
}

/// A size to time at.
#[derive(Clone, Debug, PartialEq)]
pub struct BenchSize {
    pub label: &'static str,
    pub m: u64,
}

/// The two sizes: in cache (m = 40,000 bits, 5 KB) and out of cache (m = 2^30 bits,
/// 128 MiB, four times the 32 MiB L3 here).
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

/// CPU time of the calling thread in ns (wall time where the platform has no such clock).
pub fn thread_ns() -> f64 {
    #[cfg(unix)]
    {
        let mut now = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `now` is a valid timespec to write into.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut now) } == 0 {
            return now.tv_sec as f64 * 1e9 + now.tv_nsec as f64;
        }
    }
    thread_local!(static START: Instant = Instant::now());
    START.with(|start| start.elapsed().as_nanos() as f64)
}

/// ns per item over a number of passes: their median and an interval for it, `low <= median
/// <= high`: the fastest and slowest pass ([`Passes::of`]), or an order-statistic interval at
/// a confidence ([`Passes::within`]).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Passes {
    pub median: f64,
    pub low: f64,
    pub high: f64,
}

/// `P(X <= j)` for X ~ Binomial(passes, 1/2).
fn half_binomial_cdf(passes: u32, j: u32) -> f64 {
    crate::stats::binomial_lower_tail(u64::from(j.min(passes)), u64::from(passes), 0.5)
}

/// The order statistic j (from 1) whose pair `[x_(j), x_(passes+1-j)]` brackets the median at
/// `confidence`: the largest j with `P(X < j) <= (1 - confidence)/2`; 1 at confidence 1.
fn interval_rank(passes: u32, confidence: f64) -> u32 {
    let tail = (1.0 - confidence) / 2.0;
    let mut j = 1;
    while tail > 0.0 && j < passes.div_ceil(2) && half_binomial_cdf(passes, j) <= tail {
        j += 1;
    }
    j
}

impl Passes {
    /// The median (the upper one of an even count) with the fastest and slowest of `ns`
    /// ([`Passes::within`] at confidence 1); NaN for no passes.
    pub fn of(ns: Vec<f64>) -> Passes {
        Passes::within(ns, 1.0)
    }

    /// The median (the upper one of an even count) with the distribution-free interval for
    /// the median of the pass-time distribution: the j-th fastest and j-th slowest pass,
    /// [`interval_rank`] (each pass falls below the median with probability 1/2, so the
    /// count below is Binomial(passes, 1/2)); NaN for no passes.
    pub fn within(mut ns: Vec<f64>, confidence: f64) -> Passes {
        if ns.is_empty() {
            ns.push(f64::NAN);
        }
        ns.sort_by(f64::total_cmp);
        let p = ns.len() as u32;
        let j = interval_rank(p, confidence);
        Passes {
            median: ns[ns.len() / 2],
            low: ns[(j - 1) as usize],
            high: ns[(p - j) as usize],
        }
    }

    /// The confidence that [`Passes::within`] at `confidence` brackets the median with
    /// `passes` passes: `1 - 2·P(X < j)`.
    pub fn coverage(passes: u32, confidence: f64) -> f64 {
        1.0 - 2.0 * half_binomial_cdf(passes, interval_rank(passes, confidence) - 1)
    }
}

/// ns per item of one call of `pass` over `count` items, in thread CPU time.
pub fn time_pass(count: u64, pass: impl FnOnce()) -> f64 {
    let Ok(ns) = try_time_pass(count, || {
        pass();
        Ok::<_, std::convert::Infallible>(())
    });
    ns
}

/// [`time_pass`] for a pass that can fail.
pub fn try_time_pass<E>(
    count: u64,
    pass: impl FnOnce() -> std::result::Result<(), E>,
) -> std::result::Result<f64, E> {
    let start = thread_ns();
    pass()?;
    Ok((thread_ns() - start) / count.max(1) as f64)
}

/// `rounds` rounds (at least one) of one pass of each of `subjects` in turn, `pass(i)` giving
/// the ns per item of a pass of subject i: whatever else the machine does meanwhile slows
/// them alike, so that their ratios hold. The ns of each pass, subject by subject.
pub fn interleave<E>(
    rounds: u32,
    subjects: usize,
    mut pass: impl FnMut(usize) -> std::result::Result<f64, E>,
) -> std::result::Result<Vec<Vec<f64>>, E> {
    let mut ns = vec![Vec::with_capacity(rounds.max(1) as usize); subjects];
    for _ in 0..rounds.max(1) {
        for (i, ns) in ns.iter_mut().enumerate() {
            ns.push(pass(i)?);
        }
    }
    Ok(ns)
}

/// ns per item of each of `passes` calls of `pass`, each over `count` items, in thread CPU
/// time.
pub fn pass_times(passes: u32, count: u64, mut pass: impl FnMut()) -> Vec<f64> {
    (0..passes.max(1))
        .map(|_| time_pass(count, &mut pass))
        .collect()
}

/// The median and spread of `passes` calls of `pass` ([`pass_times`]).
pub fn time_passes(passes: u32, count: u64, pass: impl FnMut()) -> Passes {
    Passes::of(pass_times(passes, count, pass))
}

/// Best-of-`repeats` nanoseconds per call of `pass` over `count` items (wall time).
pub fn best_ns(repeats: u32, count: u64, mut pass: impl FnMut()) -> f64 {
    (0..repeats.max(1))
        .map(|_| {
            let start = Instant::now();
            pass();
            start.elapsed().as_nanos() as f64 / count as f64
        })
        .fold(f64::INFINITY, f64::min)
}

/// What a filter does to the keys of a pass.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Insert,
    Present,
    Absent,
}

impl Operation {
    pub const ALL: [Operation; 3] = [Operation::Insert, Operation::Absent, Operation::Present];

    pub fn name(self) -> &'static str {
        match self {
            Operation::Insert => "insert",
            Operation::Present => "present",
            Operation::Absent => "absent",
        }
    }
}

/// The keys of the passes: `count` keys for each operation (inserted keys repeated where
/// fewer than `count` were inserted).
pub struct PassKeys {
    pub inserted: Vec<u64>,
    pub absent: Vec<u64>,
}

impl PassKeys {
    pub fn new(keys: &KeySource, n: u64, count: u64) -> Self {
        let inserted: Vec<u64> = keys.inserted(n.min(count).max(1)).collect();
        PassKeys {
            inserted: inserted
                .iter()
                .copied()
                .cycle()
                .take(count as usize)
                .collect(),
            absent: keys.absent(n, count).collect(),
        }
    }

    fn of(&self, operation: Operation) -> &[u64] {
        match operation {
            Operation::Absent => &self.absent,
            _ => &self.inserted,
        }
    }
}

/// Times one operation on a filled filter: through `insert`/`contains` key by key, or
/// through `insert_many`/`contains_many` when `batched`.
pub fn time_operation(
    filter: &mut dyn Filter,
    operation: Operation,
    batched: bool,
    keys: &PassKeys,
    passes: u32,
) -> Result<Passes> {
    let keys = keys.of(operation);
    let count = keys.len() as u64;
    let mut ns = interleave(passes, 1, |_| {
        try_time_pass(count, || match (operation, batched) {
            (Operation::Insert, false) => {
                keys.iter().for_each(|&key| filter.insert(key));
                Ok(())
            }
            (Operation::Insert, true) => filter.insert_many(keys),
            (_, false) => {
                black_box(keys.iter().filter(|&&key| filter.contains(key)).count());
                Ok(())
            }
            (_, true) => count_present(&*filter, keys).map(|count| {
                black_box(count);
            }),
        })
    })?;
    Ok(Passes::of(ns.pop().unwrap_or_default()))
}

/// The keys `0..n` of `keys` inserted into a fresh filter, a batch at a time.
pub fn insert_keys(filter: &mut dyn Filter, keys: &KeySource, n: u64) -> Result<()> {
    crate::pipeline::fill(filter, 0..n, |c| keys.key(c), false, &|_| {}).map(drop)
}

/// The keys `0..n` of `keys` inserted into a fresh filter ([`insert_keys`]), and its rate
/// over the absent keys of the passes.
pub fn fill(
    filter: &mut dyn Filter,
    keys: &KeySource,
    n: u64,
    pass_keys: &PassKeys,
) -> Result<f64> {
    insert_keys(filter, keys, n)?;
    let false_positives = count_present(&*filter, &pass_keys.absent)?;
    Ok(false_positives as f64 / pass_keys.absent.len().max(1) as f64)
}

/// ns per insert, per present and per absent query (medians, batched), and the rate over the
/// absent queries.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Timing {
    pub ns_insert: f64,
    pub ns_query_present: f64,
    pub ns_query_absent: f64,
    pub fpr_measured: f64,
}

/// Whether inserting a key again leaves the filter as it was, as for a bit array (not for
/// counters, a cuckoo table or a static filter's key list).
pub fn reinsert_is_idempotent(filter: &dyn Filter) -> bool {
    let kind = filter.kind();
    !kind.supports_delete() && !kind.is_static()
}

/// ns per insert where inserting again is not idempotent: each pass inserts the keys of the
/// passes into fresh filters from `build`, at most n per filter, timing only the inserts
/// (and a static filter's build, done at its first query).
fn time_fresh_inserts(
    build: &impl Fn() -> Result<Box<dyn Filter>>,
    n: u64,
    keys: &PassKeys,
    passes: u32,
) -> Result<Passes> {
    let per_filter = (n as usize).clamp(1, keys.inserted.len().max(1));
    let mut ns = interleave(passes, 1, |_| {
        let mut spent = 0.0;
        for round in keys.inserted.chunks(per_filter) {
            let mut fresh = build()?;
            spent += try_time_pass(1, || {
                fresh.insert_many(round)?;
                black_box(fresh.contains(0));
                Ok::<_, crate::error::Error>(())
            })?;
        }
        Ok::<_, crate::error::Error>(spent / keys.inserted.len().max(1) as f64)
    })?;
    Ok(Passes::of(ns.pop().unwrap_or_default()))
}

/// Fills one filter from `build` with n keys, then times `queries` inserts, present and
/// absent queries through the batched calls, the median of `passes`. Inserts go again into
/// the filled filter where that is idempotent ([`reinsert_is_idempotent`]), else into fresh
/// filters ([`time_fresh_inserts`]).
pub fn time_filter(
    build: impl Fn() -> Result<Box<dyn Filter>>,
    n: u64,
    queries: u64,
    passes: u32,
    seed: u64,
) -> Result<Timing> {
    let keys = KeySource::new(seed);
    let pass_keys = PassKeys::new(&keys, n, queries);
    let mut filter = build()?;
    let fpr_measured = fill(&mut *filter, &keys, n, &pass_keys)?;
    let mut time = |operation| {
        time_operation(&mut *filter, operation, true, &pass_keys, passes).map(|p| p.median)
    };
    let ns_query_present = time(Operation::Present)?;
    let ns_query_absent = time(Operation::Absent)?;
    let ns_insert = if reinsert_is_idempotent(&*filter) {
        time_operation(&mut *filter, Operation::Insert, true, &pass_keys, passes)?.median
    } else {
        drop(filter);
        time_fresh_inserts(&build, n, &pass_keys, passes)?.median
    };
    Ok(Timing {
        ns_insert,
        ns_query_present,
        ns_query_absent,
        fpr_measured,
    })
}

/// Random cache-line reads in a buffer: one after another (each address read from the line
/// before, so each waits for the last) and independent (a group's addresses known ahead,
/// prefetched, then read), in ns per line, medians of the passes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LineRate {
    pub bytes: u64,
    pub dependent_ns: f64,
    pub independent_ns: f64,
    /// The slowest independent pass over the fastest: how much the machine's speed moved.
    pub independent_spread: f64,
}

/// A buffer of random cache lines to read, for [`LineRate`]: each line's first word names
/// the next line of one cycle through them all (Sattolo's shuffle, so that the chase never
/// repeats early).
pub struct LineBuffer {
    words: Words,
    lines: usize,
    /// Odd: `multiplier · c` for c = 1, 2, … spreads the independent reads over the lines.
    multiplier: u64,
}

impl LineBuffer {
    /// A buffer of `bytes` (at least two lines).
    pub fn new(bytes: u64, seed: u64) -> Result<LineBuffer> {
        let lines = (bytes / 64).max(2) as usize;
        let mut words = Words::zeroed(lines as u64 * 512)?;
        let mut order: Vec<u32> = (0..lines as u32).collect();
        let mut rng = Pcg64::seed_from_u64(seed);
        for i in (1..lines).rev() {
            order.swap(i, rng.random_range(0..i));
        }
        for (i, &line) in order.iter().enumerate() {
            words[line as usize * LINE_WORDS] = u64::from(order[(i + 1) % lines]);
        }
        Ok(LineBuffer {
            words,
            lines,
            multiplier: rng.next_u64() | 1,
        })
    }

    /// `reads` reads, each at the line the one before named, so each waits for the last.
    pub fn read_dependent(&self, reads: u64) {
        let mut line = 0u64;
        for _ in 0..reads {
            line = self.words[line as usize * LINE_WORDS];
        }
        black_box(line);
    }

    /// One read at `line`: the line it names next, for a chase that a caller carries on
    /// between reads.
    pub fn next_line(&self, line: u64) -> u64 {
        self.words[line as usize * LINE_WORDS]
    }

    /// `reads` reads at addresses known ahead, a [`GROUP`] prefetched, then read: the lines
    /// `first + 1, first + 2, …` of a fixed random sequence (threads reading at once take
    /// disjoint stretches, so that none reads a line another has just brought in).
    pub fn read_independent(&self, first: u64, reads: u64) {
        let mut sum = 0u64;
        let mut at = [0usize; GROUP];
        let mut done = 0;
        while done < reads {
            let group = (reads - done).min(GROUP as u64) as usize;
            for (j, slot) in at.iter_mut().enumerate().take(group) {
                let h = self.multiplier.wrapping_mul(first + done + j as u64 + 1);
                *slot = ((h as u128 * self.lines as u128) >> 64) as usize * LINE_WORDS;
                prefetch(&self.words[*slot]);
            }
            sum = at[..group]
                .iter()
                .fold(sum, |s, &w| s.wrapping_add(self.words[w]));
            done += group as u64;
        }
        black_box(sum);
    }

    /// The rate of this buffer from the passes of dependent and of independent reads.
    pub fn rate(&self, dependent: Passes, independent: Passes) -> LineRate {
        LineRate {
            bytes: self.lines as u64 * 64,
            dependent_ns: dependent.median,
            independent_ns: independent.median,
            independent_spread: independent.high / independent.low,
        }
    }
}

/// A time in ns to one decimal, as the tables show it.
pub fn round_ns(ns: f64) -> f64 {
    (ns * 10.0).round() / 10.0
}
