//! One measurement: build a filter, insert n keys, query q absent keys, and set the count
//! beside every prediction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::filter::BloomFilter;
use crate::hash::HashScheme;
use crate::keys::KeySource;
use crate::stats::{Z95, wilson_interval, z_score};
use crate::structures::{
    Filter, FilterKind, count_present_counters, count_present_parallel, insert_counters,
};
use crate::theory;

/// The "filter matches its bits" bound: a row whose measured rate is more than this many
/// binomial standard errors from `fpr_from_fill` fails the bits check.
pub const BITS_CHECK_Z: f64 = 4.0;

/// Everything that determines one measurement.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Setup {
    pub n: u64,
    pub m: u64,
    pub k: u32,
    pub queries: u64,
    pub seed: u64,
    pub hash_seed: u64,
    pub hash: HashScheme,
    pub filter: FilterKind,
}

/// The raw outcome: how many bits ended up set and how many absent queries said "present".
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    pub set_bits: u64,
    pub false_positives: u64,
    /// The rate the filter's own bits predict ([`Filter::fpr_from_bits`]).
    pub fpr_from_bits: f64,
    /// The structure's exact expectation for n keys ([`Filter::fpr_exact`]).
    pub fpr_exact: f64,
    /// The memory the structure holds ([`Filter::memory_bits`]).
    pub memory_bits: u64,
    /// The hash the structure applies to keys ([`Filter::hash_name`]).
    pub hash: String,
}

impl Trial {
    /// Reads a filter holding n keys that answered `false_positives` absent queries wrongly.
    pub fn of<F: Filter + ?Sized>(filter: &F, n: u64, false_positives: u64) -> Self {
        Trial {
            set_bits: filter.set_bits(),
            false_positives,
            fpr_from_bits: filter.fpr_from_bits(),
            fpr_exact: filter.fpr_exact(n),
            memory_bits: filter.memory_bits(),
            hash: filter.hash_name(),
        }
    }
}

/// Below this many keys plus queries a trial runs on one thread (rows already run in
/// parallel); above it, insertion and queries use every core.
pub const PARALLEL_THRESHOLD: u64 = 1 << 18;

/// How a trial uses the cores; both give identical results.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Threads {
    /// One thread below [`PARALLEL_THRESHOLD`], all cores above it.
    Auto,
    Sequential,
    Parallel,
}

/// Inserts `key(0..n)`, then queries `key(n..n+q)`, none of which was inserted.
pub fn run_trial(setup: &Setup) -> Result<Trial> {
    run_trial_with(setup, Threads::Auto)
}

/// [`run_trial`] with a choice of threading. Only the classic filter has a parallel path;
/// every structure, the classic one included, shares the sequential one.
pub fn run_trial_with(setup: &Setup, threads: Threads) -> Result<Trial> {
    let keys = KeySource::new(setup.seed);
    if setup.filter != FilterKind::CLASSIC {
        let mut filter =
            setup
                .filter
                .build(setup.n, setup.m, setup.k, setup.hash, setup.hash_seed)?;
        return sequential_trial(&mut *filter, &keys, setup);
    }
    let mut filter = BloomFilter::new(setup.m, setup.k, setup.hash, setup.hash_seed)?;
    let parallel = match threads {
        Threads::Auto => setup.n.saturating_add(setup.queries) >= PARALLEL_THRESHOLD,
        Threads::Sequential => false,
        Threads::Parallel => true,
    };
    if !parallel {
        return sequential_trial(&mut filter, &keys, setup);
    }
    filter.insert_parallel(0..setup.n, |c| keys.key(c));
    let false_positives =
        count_present_parallel(&filter, setup.n..setup.n + setup.queries, |c| keys.key(c))?;
    Ok(Trial::of(&filter, setup.n, false_positives))
}

/// Inserts `key(0..n)` into `filter`, then counts the absent keys `key(n..n+q)` it reports,
/// a batch at a time.
fn sequential_trial<F: Filter + ?Sized>(
    filter: &mut F,
    keys: &KeySource,
    setup: &Setup,
) -> Result<Trial> {
    insert_counters(filter, 0..setup.n, |c| keys.key(c))?;
    let absent = setup.n..setup.n + setup.queries;
    let false_positives = count_present_counters(filter, absent, |c| keys.key(c))?;
    Ok(Trial::of(filter, setup.n, false_positives))
}

/// A measured rate beside every prediction, with its interval and z-scores.
///
/// Rates are fractions. Every `z_*` is `(fpr_measured - p) / sqrt(p(1-p)/queries)` for the
/// prediction p its name gives.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Measurement {
    /// The experiment that produced the row.
    pub experiment: String,
    /// The structure measured (`--filter`).
    #[schemars(with = "String")]
    pub filter: FilterKind,
    /// The hash the structure applies to keys: bloomlab's scheme for its own structures, a
    /// peer crate's own hash for the crates.
    pub hash: String,
    /// Keys inserted.
    pub n: u64,
    /// Size of the table in cells: bits of a bit array, 4-bit counters of a counting filter,
    /// slots times fingerprint bits of a cuckoo filter.
    pub m: u64,
    /// Hashes (probes) per key; the fingerprint bits for cuckoo and binary fuse.
    pub k: u32,
    /// `m / n`.
    pub bits_per_key: f64,
    /// Bits of memory the structure holds: m for a bit array, 4m for 4-bit counters, all
    /// sub-filters of a growing one, the built table of a static one.
    pub memory_bits: u64,
    /// Seed of the key source: keys `0..n` are inserted, keys `n..n+queries` are queried.
    pub seed: u64,
    /// Seed of the hash functions.
    pub hash_seed: u64,
    /// Absent keys queried.
    pub queries: u64,
    /// Absent keys the filter reported present.
    pub false_positives: u64,
    /// The measured false-positive rate: `false_positives / queries`.
    pub fpr_measured: f64,
    /// Lower end of the 95% Wilson interval of `fpr_measured`.
    pub ci_low: f64,
    /// Upper end of the 95% Wilson interval of `fpr_measured`.
    pub ci_high: f64,
    /// Fraction of the table in use after the inserts: set bits over m (nonzero counters,
    /// occupied slots' bits).
    pub fill_measured: f64,
    /// Expected fill of a classic filter: `1 - (1 - 1/m)^{kn}`.
    pub fill_expected: f64,
    /// The textbook approximation `(1 - e^{-kn/m})^k`.
    pub fpr_classic: f64,
    /// The independence prediction from the expected fill: `fill_expected^k`.
    pub fpr_fill_expected: f64,
    /// The rate the filter's own cells predict under independent probes: `fill_measured^k`
    /// for a plain bit array, the mean of `block_fill^k` over blocks for the blocked ones.
    pub fpr_from_fill: f64,
    /// The structure's exact expected rate for n keys (`E[(X/m)^k]` for the classic
    /// filter, X the set bits).
    pub fpr_exact: f64,
    /// z of `fpr_measured` against `fpr_classic`.
    pub z_classic: f64,
    /// z of `fpr_measured` against `fpr_fill_expected`.
    pub z_fill_expected: f64,
    /// z of `fpr_measured` against `fpr_from_fill`: does the filter behave as its bits say?
    pub z_from_fill: f64,
    /// z of `fpr_measured` against `fpr_exact`.
    pub z_exact: f64,
    /// "pass" when `|z_from_fill| <= 4` (`BITS_CHECK_Z`), "n/a" when z is NaN (a structure
    /// whose bits bloomlab cannot read, such as `exec:`), else "fail".
    pub bits_check: String,
}

impl Measurement {
    /// Sets a trial beside the predictions for its setup. A static structure is sized by its
    /// keys, so its m is the table it built, not the one planned.
    pub fn new(experiment: &str, setup: &Setup, trial: Trial) -> Self {
        let Setup { n, k, queries, .. } = *setup;
        let m = if setup.filter.is_static() {
            trial.memory_bits
        } else {
            setup.m
        };
        let fpr_measured = trial.false_positives as f64 / queries as f64;
        let (ci_low, ci_high) = wilson_interval(trial.false_positives, queries, Z95);
        let fill_measured = trial.set_bits as f64 / m as f64;
        let fill_expected = theory::fill_expected(n, m, k);
        let fpr_classic = theory::fpr_classic(n, m, k);
        let fpr_from_fill = trial.fpr_from_bits;
        let fpr_exact = trial.fpr_exact;
        let z_from_fill = z_score(fpr_measured, fpr_from_fill, queries);
        Measurement {
            experiment: experiment.to_string(),
            filter: setup.filter,
            hash: trial.hash,
            n,
            m,
            k,
            bits_per_key: m as f64 / n as f64,
            memory_bits: trial.memory_bits,
            seed: setup.seed,
            hash_seed: setup.hash_seed,
            queries,
            false_positives: trial.false_positives,
            fpr_measured,
            ci_low,
            ci_high,
            fill_measured,
            fill_expected,
            fpr_classic,
            fpr_fill_expected: theory::fpr_from_fill(fill_expected, k),
            fpr_from_fill,
            fpr_exact,
            z_classic: z_score(fpr_measured, fpr_classic, queries),
            z_fill_expected: z_score(
                fpr_measured,
                theory::fpr_from_fill(fill_expected, k),
                queries,
            ),
            z_from_fill,
            z_exact: z_score(fpr_measured, fpr_exact, queries),
            bits_check: match z_from_fill {
                z if z.is_nan() => "n/a",
                z if z.abs() <= BITS_CHECK_Z => "pass",
                _ => "fail",
            }
            .to_string(),
        }
    }

    /// True when the measured rate agrees with the filter's own fill (see [`BITS_CHECK_Z`]).
    pub fn bits_ok(&self) -> bool {
        self.bits_ok_at(BITS_CHECK_Z)
    }

    /// The bits check at another bound: `|z_from_fill| <= z_bound`; a NaN z (no prediction
    /// from the bits) never fails it.
    pub fn bits_ok_at(&self, z_bound: f64) -> bool {
        !(self.z_from_fill.abs() > z_bound)
    }

    /// Variance of `fpr_measured` as an estimate of the rate of a fresh filter of this size:
    /// the binomial term `p(1-p)/q` plus the fill's own spread carried through `p = f^k`,
    /// `(k p / f)² Var(X/m)`.
    pub fn fpr_variance(&self) -> f64 {
        let p = self.fpr_exact;
        let se = crate::stats::binomial_se(p, self.queries);
        let fill_var = theory::fill_variance(self.m, self.k as f64 * self.n as f64);
        let slope = self.k as f64 * p / self.fill_expected;
        se * se + slope * slope * fill_var
    }
}

/// Several measurements of one setup taken together.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Mean of the measured rates.
    pub mean: f64,
    /// Their sample standard deviation.
    pub sd: f64,
    /// The deviation binomial and fill noise predict: `sqrt(mean of fpr_variance)`.
    pub expected_sd: f64,
    /// All false positives over all queries, with its 95% Wilson interval.
    pub pooled: f64,
    pub pooled_low: f64,
    pub pooled_high: f64,
}

impl Spread {
    /// The spread of `rows` (at least one).
    pub fn of(rows: &[&Measurement]) -> Self {
        let t = rows.len() as f64;
        let mean = rows.iter().map(|r| r.fpr_measured).sum::<f64>() / t;
        let sd = (rows
            .iter()
            .map(|r| (r.fpr_measured - mean).powi(2))
            .sum::<f64>()
            / (t - 1.0).max(1.0))
        .sqrt();
        let expected_sd = (rows.iter().map(|r| r.fpr_variance()).sum::<f64>() / t).sqrt();
        let false_positives: u64 = rows.iter().map(|r| r.false_positives).sum();
        let queries: u64 = rows.iter().map(|r| r.queries).sum();
        let (pooled_low, pooled_high) = wilson_interval(false_positives, queries, Z95);
        Spread {
            mean,
            sd,
            expected_sd,
            pooled: false_positives as f64 / queries as f64,
            pooled_low,
            pooled_high,
        }
    }
}

/// Runs one setup and reports it.
pub fn measure(experiment: &str, setup: &Setup) -> Result<Measurement> {
    Ok(Measurement::new(experiment, setup, run_trial(setup)?))
}
