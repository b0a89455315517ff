//! One measurement: build a filter, insert n keys, query q absent keys, and set the count
//! beside every prediction.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::hash::{AppliedHash, Probes, Reduce};
use crate::keys::KeySpec;
pub use crate::pipeline::keying::Keying;
pub use crate::pipeline::run::{Unit, Work};
use crate::pipeline::uniformity::UNIFORMITY_ALPHA;
pub use crate::stats::{BITS_CHECK_ALPHA, BITS_CHECK_Z};
use crate::stats::{
    Check, averaged_rate_variance, binomial_se, binomial_two_sided_p, clopper_pearson,
    mean_and_variance, z_averaged, z_score,
};
use crate::structures::{Filter, FilterKind, Spec};
use crate::theory;

/// Confidence of the interval `[ci_low, ci_high]` of every measured rate.
pub const CONFIDENCE: f64 = 0.95;

/// Everything that determines one measurement: what is built ([`Spec`]), the n keys
/// `key(0..n)` inserted and the `queries` absent keys `key(n..n+queries)` asked, from their
/// sources ([`Keying`]) and seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Setup {
    pub spec: Spec,
    pub n: u64,
    pub queries: u64,
    /// Seed of the key sources.
    pub seed: u64,
    /// The key sources; bloomlab's random keys by default.
    pub keying: Keying,
    /// The m asked for before `--m-round` changed the shape's; None when it did not.
    pub m_requested: Option<u64>,
    /// The query blocks this run counts and the counts it carries: all, none, by default.
    pub work: Work,
}

impl Setup {
    /// n keys and `queries` absent ones of `spec`, random keys of `seed`.
    pub fn new(spec: Spec, n: u64, queries: u64, seed: u64) -> Self {
        Setup {
            spec,
            n,
            queries,
            seed,
            ..Setup::default()
        }
    }

    pub fn filter(&self) -> &FilterKind {
        &self.spec.filter
    }
}

/// The raw outcome: how many bits ended up set and how many absent queries said "present".
#[derive(Clone, Debug, PartialEq)]
pub struct Trial {
    /// None when the structure does not know them ([`Filter::knows_set_bits`]).
    pub set_bits: Option<u64>,
    pub false_positives: u64,
    /// The rate the filter's own bits predict ([`Filter::fpr_from_bits`]).
    pub fpr_from_bits: f64,
    /// The structure's exact expectation for n keys ([`Filter::fpr_exact`]).
    pub fpr_exact: f64,
    /// The memory the structure holds ([`Filter::memory_bits`]).
    pub memory_bits: u64,
    /// The hash the structure applies to keys ([`Filter::hash_name`]).
    pub hash: AppliedHash,
    /// Inserts the structure refused ([`Filter::failed_inserts`]).
    pub failed_inserts: Option<u64>,
    /// Bit positions the structure's indexes can reach ([`Filter::addressable_bits`]).
    pub addressable_bits: u64,
    /// Query keys that had been inserted: left out of the count and of the queries.
    pub query_overlap: u64,
    /// The uniformity diagnostic ([`crate::pipeline::uniformity`]); NaN where it is not taken.
    pub uniformity_p: f64,
    /// Byte keys reach the structure's hash unchanged ([`Filter::hashes_bytes`]).
    pub hashes_bytes: bool,
    /// Inserted keys that repeat an earlier one ([`crate::keys::KeySpec::duplicates`]);
    /// None when not counted.
    pub duplicate_keys: Option<u64>,
    /// The k the structure uses ([`Filter::hashes`]; 0 when a program does not say).
    pub hashes: u32,
    /// The bits of the structure's perfect hash ([`Filter::perfect_hash_bits`]).
    pub perfect_hash_bits: Option<u64>,
    /// The query blocks this trial counted ([`Work`]), each with its counts.
    pub units: Vec<Unit>,
    /// Two runs built the same filter only if their digests agree ([`filter_digest`]).
    pub digest: u64,
}

impl Trial {
    /// Reads a filter holding n distinct keys that answered `false_positives` absent queries
    /// wrongly.
    pub fn of<F: Filter + ?Sized>(filter: &F, n: u64, false_positives: u64) -> Self {
        Trial {
            set_bits: filter.knows_set_bits().then(|| filter.set_bits()),
            false_positives,
            fpr_from_bits: filter.fpr_from_bits(),
            fpr_exact: filter.fpr_exact(n),
            memory_bits: filter.memory_bits(),
            hash: filter.hash_name(),
            failed_inserts: filter.failed_inserts(),
            addressable_bits: filter.addressable_bits(),
            query_overlap: 0,
            uniformity_p: f64::NAN,
            hashes_bytes: filter.hashes_bytes(),
            duplicate_keys: Some(0),
            hashes: filter.hashes(),
            perfect_hash_bits: filter.perfect_hash_bits(),
            units: Vec::new(),
            digest: filter_digest(filter),
        }
    }
}

/// A digest (64-bit FNV-1a) of a filter as built: its words where it shows its bit array
/// ([`Filter::bit_view`]), and for every structure what it reports of itself (set bits,
/// memory, hashes, the rate its bits predict, refused inserts).
pub fn filter_digest<F: Filter + ?Sized>(filter: &F) -> u64 {
    use std::hash::Hasher;
    let mut hasher = fnv::FnvHasher::default();
    if let Some(bits) = filter.bit_view() {
        bits.words().iter().for_each(|&w| hasher.write_u64(w));
    }
    let set = filter.knows_set_bits().then(|| filter.set_bits());
    for fact in [
        set.unwrap_or(u64::MAX),
        filter.memory_bits(),
        filter.addressable_bits(),
        u64::from(filter.hashes()),
        filter.fpr_from_bits().to_bits(),
        filter.failed_inserts().unwrap_or(u64::MAX),
    ] {
        hasher.write_u64(fact);
    }
    hasher.finish()
}

/// A measured rate beside every prediction, with its interval and z-scores.
///
/// Rates are fractions. Two kinds of z: `z_from_fill` is conditional on the filter (its bits
/// give its rate r, the count is `Binomial(queries, r)`), so it is
/// `(fpr_measured - r) / sqrt(r(1-r)/queries)`. `z_classic`, `z_fill_expected` and `z_exact`
/// compare with predictions that average over filters, so their variance adds the rate's
/// spread between filters: `(fpr_measured - p) / sqrt(p(1-p)/q + V(1 - 1/q))`,
/// V = `fpr_between_filter_variance` ([`crate::stats::z_averaged`]).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Measurement {
    /// The experiment that produced the row.
    pub experiment: String,
    /// The structure measured (`--filter`).
    #[schemars(with = "String")]
    pub filter: FilterKind,
    /// The hash the structure applies to keys: bloomlab's scheme for its own structures, a
    /// peer crate's own hash for the crates.
    #[schemars(with = "String")]
    pub hash: AppliedHash,
    /// Source of the inserted keys (`--keys`): `random`, `sequential`, `strided:STEP`,
    /// `strings:FORMAT`, `file:PATH`.
    #[schemars(with = "String")]
    pub keys: KeySpec,
    /// Source of the query keys (`--query-keys`).
    #[schemars(with = "String")]
    pub query_keys: KeySpec,
    /// How the k probe values of a key are drawn (`--probes`), for bloomlab's own
    /// structures: `independent`, `double`, `enhanced-double`.
    #[schemars(with = "String")]
    pub probes: Probes,
    /// How a probe value becomes an index (`--reduce`): `multiply-high`, `modulo`, `mask`.
    #[schemars(with = "String")]
    pub reduce: Reduce,
    /// Width W of the index arithmetic (`--index-bits`).
    pub index_bits: u32,
    /// Keys inserted, repeats included: every prediction is made for the `n -
    /// duplicate_keys` distinct ones.
    pub n: u64,
    /// Inserted keys that repeat an earlier one: a key file's repeated lines (compared by
    /// their 64-bit hash), a strided source past its period; 0 for the other generated
    /// sources, which cannot repeat a key; empty when not counted (a key file of more than
    /// 10^7 lines). A repeat sets no new bit.
    #[serde(default)]
    pub duplicate_keys: Option<u64>,
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
    /// The m asked for, before `--m-round` rounded it to `m` (k was chosen for this one).
    pub m_requested: u64,
    /// Bit positions the indexes can reach: `min(m, 2^index_bits)` for the classic filter.
    /// Below m, the rest of the array is never set, whatever the predictions say.
    pub addressable_bits: u64,
    /// Seed of the key source: keys `0..n` are inserted, keys `n..n+queries` are queried.
    pub seed: u64,
    /// Seed of the hash functions.
    pub hash_seed: u64,
    /// Inserts the structure refused because it was full (a cuckoo filter's); empty for the
    /// structures that never refuse a key. Those keys are not in the filter.
    pub failed_inserts: Option<u64>,
    /// Absent keys queried: the query keys less `query_overlap`.
    pub queries: u64,
    /// Query keys that had been inserted (a key file's overlap, sources that collide): left
    /// out of `queries` and of the count, never counted as false positives.
    pub query_overlap: u64,
    /// Absent keys the filter reported present.
    pub false_positives: u64,
    /// The measured false-positive rate: `false_positives / queries`.
    pub fpr_measured: f64,
    /// Lower end of the 95% Clopper–Pearson (exact) interval of `fpr_measured`: at least 95%
    /// coverage at every rate, however few false positives are expected. Conditional on this
    /// filter: an interval for its rate, not for the rate averaged over filters.
    pub ci_low: f64,
    /// Upper end of the 95% Clopper–Pearson (exact) interval of `fpr_measured`.
    pub ci_high: f64,
    /// Fraction of the table in use after the inserts: set bits over m (nonzero counters,
    /// occupied slots' bits); NaN (blank) when the structure does not report its set bits.
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
    /// The exact rate of the filter as configured: `m_requested` bits, every one
    /// addressable (the structure's exact rate at `m_requested`). It differs from
    /// `fpr_exact` when `--m-round` resized the array or `--index-bits` cannot reach all of it.
    pub fpr_configured: f64,
    /// Variance V of the rate between filters of this setup (over the draw of the hashes):
    /// `E[(X/m)^{2k}] - E[(X/m)^k]²` ([`theory::fpr_between_filter_variance`]) for the
    /// structures whose exact rate is the plain bit array's `E[(X/m)^k]` (classic, counting,
    /// and the peer bit arrays). 0 for the others (blocked, split-block, cuckoo, binary fuse,
    /// growable), whose spread between filters is not modelled: their averaged z-scores are
    /// binomial only and read too large where that spread matters.
    pub fpr_between_filter_variance: f64,
    /// z of `fpr_measured` against `fpr_classic`, with the between-filter variance.
    pub z_classic: f64,
    /// z of `fpr_measured` against `fpr_fill_expected`, with the between-filter variance.
    pub z_fill_expected: f64,
    /// z of `fpr_measured` against `fpr_from_fill`, binomial (conditional on the filter): does
    /// the filter behave as its bits say?
    pub z_from_fill: f64,
    /// z of `fpr_measured` against `fpr_exact`, with the between-filter variance.
    pub z_exact: f64,
    /// Exact two-sided binomial p-value of `false_positives` in `queries` against
    /// `fpr_from_fill`: `min(1, 2·min(P(X ≤ c), P(X ≥ c)))`, `X ~ Binomial(queries,
    /// fpr_from_fill)`. NaN when the structure gives no rate from its bits.
    pub bits_p: f64,
    /// "fail" when `bits_p < 6.334e-5` ([`BITS_CHECK_ALPHA`]), "n/a" when there is no rate
    /// from the bits, else "pass".
    pub bits_check: Check,
    /// The uniformity diagnostic of the classic filter ([`crate::pipeline::uniformity`]): the
    /// Bonferroni-combined p-value of a chi-square test of the set bits over regions of the
    /// array and a test of shared (probe 0, probe 1) pairs among up to 8192 inserted keys.
    /// NaN for the other structures (written as an empty field, read back as NaN).
    #[serde(deserialize_with = "null_as_nan")]
    pub uniformity_p: f64,
    /// "fail" when `uniformity_p < 6.334e-5` (the bits check's false-alarm rate), "n/a"
    /// without a p-value, else "pass": the bits are not spread as a uniform hash spreads them.
    pub uniformity: Check,
    /// Bits of the structure's perfect hash ([`Filter::perfect_hash_bits`]); not a column of
    /// every experiment: compare shows it per key.
    #[serde(skip)]
    pub perfect_hash_bits: Option<u64>,
}

/// A NaN written to JSON becomes `null`: read it back as NaN, so that every row of a table
/// deserialises (the claims read rows of every structure).
fn null_as_nan<'de, D: serde::Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<f64, D::Error> {
    Ok(Option::<f64>::deserialize(deserializer)?.unwrap_or(f64::NAN))
}

impl Measurement {
    /// Sets a trial beside the predictions for its setup. A static structure is sized by its
    /// keys, so its m is the table it built, not the one planned: its fingerprints, without
    /// a perfect hash beside them (in `memory_bits`), whose size varies with the keys; a
    /// structure that sized itself for a rate ([`Spec::sizes_itself`]) chose its m and k,
    /// and they are those it reports.
    pub fn new(experiment: &str, setup: &Setup, trial: Trial) -> Self {
        let (n, spec) = (setup.n, &setup.spec);
        let (planned_m, mut k) = spec.nominal();
        // The predictions are for the distinct keys (the trial's own are already).
        let distinct = n - trial.duplicate_keys.unwrap_or(0);
        let queries = setup.queries - trial.query_overlap;
        let sized_itself = spec.sizes_itself();
        let m = if spec.filter.is_static() {
            trial.memory_bits - trial.perfect_hash_bits.unwrap_or(0)
        } else if sized_itself && trial.addressable_bits > 0 {
            trial.addressable_bits
        } else {
            planned_m
        };
        if sized_itself && trial.hashes > 0 {
            k = trial.hashes;
        }
        let count = trial.false_positives;
        let fpr_measured = count as f64 / queries as f64;
        let (ci_low, ci_high) = clopper_pearson(count, queries, CONFIDENCE);
        let fill_expected = theory::fill_expected(distinct, m, k);
        let fpr_classic = theory::fpr_classic(distinct, m, k);
        let fpr_fill_expected = theory::fpr_from_fill(fill_expected, k);
        let fpr_from_fill = trial.fpr_from_bits;
        let fpr_exact = trial.fpr_exact;
        let var_between = between_filter_variance(distinct, m, k, fpr_exact);
        let averaged = |p: f64| z_averaged(count, queries, p, var_between);
        let bits_p = if fpr_from_fill.is_nan() {
            f64::NAN
        } else {
            binomial_two_sided_p(count, queries, fpr_from_fill)
        };
        let math = spec.math.unwrap_or(spec.hash.default_math());
        let m_requested = setup.m_requested.unwrap_or(m);
        let fpr_configured = if m_requested == m && trial.addressable_bits == m {
            fpr_exact
        } else {
            spec.filter.fpr_exact(distinct, m_requested, k)
        };
        Measurement {
            experiment: experiment.to_string(),
            filter: spec.filter.clone(),
            hash: trial.hash,
            keys: setup.keying.keys.clone(),
            query_keys: setup.keying.query_keys(),
            probes: math.probes,
            reduce: math.reduce,
            index_bits: math.index_bits,
            n,
            duplicate_keys: trial.duplicate_keys,
            m,
            k,
            bits_per_key: m as f64 / n as f64,
            memory_bits: trial.memory_bits,
            m_requested,
            addressable_bits: trial.addressable_bits,
            seed: setup.seed,
            hash_seed: spec.hash_seed,
            failed_inserts: trial.failed_inserts,
            queries,
            query_overlap: trial.query_overlap,
            false_positives: count,
            fpr_measured,
            ci_low,
            ci_high,
            fill_measured: trial.set_bits.map_or(f64::NAN, |set| set as f64 / m as f64),
            fill_expected,
            fpr_classic,
            fpr_fill_expected,
            fpr_from_fill,
            fpr_exact,
            fpr_configured,
            fpr_between_filter_variance: var_between,
            z_classic: averaged(fpr_classic),
            z_fill_expected: averaged(fpr_fill_expected),
            z_from_fill: z_score(fpr_measured, fpr_from_fill, queries),
            z_exact: averaged(fpr_exact),
            bits_p,
            bits_check: Check::at(bits_p, BITS_CHECK_ALPHA),
            uniformity_p: trial.uniformity_p,
            uniformity: Check::at(trial.uniformity_p, UNIFORMITY_ALPHA),
            perfect_hash_bits: trial.perfect_hash_bits,
        }
    }

    /// True unless the bits check failed (see [`BITS_CHECK_ALPHA`]).
    pub fn bits_ok(&self) -> bool {
        self.bits_ok_at(BITS_CHECK_ALPHA)
    }

    /// The bits check at another level: false only when `bits_p < alpha`.
    pub fn bits_ok_at(&self, alpha: f64) -> bool {
        self.bits_p.is_nan() || self.bits_p >= alpha
    }

    /// Variance of `fpr_measured` as an estimate of the rate of a fresh filter of this size.
    ///
    /// For the plain bit arrays: `p(1-p)/q + V(1 - 1/q)`, p = `fpr_exact`, V =
    /// `fpr_between_filter_variance` ([`averaged_rate_variance`]). For the other structures,
    /// whose V is not modelled, the approximation of a classic filter's fill spread carried
    /// through `p = f^k`: `p(1-p)/q + (k p / f)² Var(X/m)`.
    ///
    /// A structure without an exact rate (a program behind `exec:`) takes p = `fpr_measured`,
    /// and the fill term only where its k and m are known.
    pub fn fpr_variance(&self) -> f64 {
        let p = match self.fpr_exact.is_nan() {
            true => self.fpr_measured,
            false => self.fpr_exact,
        };
        if self.fpr_between_filter_variance > 0.0 {
            return averaged_rate_variance(p, self.fpr_between_filter_variance, self.queries);
        }
        let se = binomial_se(p, self.queries);
        let distinct = self.n - self.duplicate_keys.unwrap_or(0);
        let fill_var = theory::fill_variance(self.m, self.k as f64 * distinct as f64);
        let slope = self.k as f64 * p / self.fill_expected;
        let fill_term = Some(slope * slope * fill_var).filter(|t| t.is_finite());
        se * se + fill_term.unwrap_or(0.0)
    }
}

/// `theory::fpr_between_filter_variance(n, m, k)` when the structure's exact rate is the plain
/// bit array's (`fpr_exact` equal to `theory::fpr_exact(n, m, k)` to 1e-12, relative), else 0
/// (not modelled; see [`Measurement::fpr_between_filter_variance`]).
fn between_filter_variance(n: u64, m: u64, k: u32, fpr_exact: f64) -> f64 {
    let plain = theory::fpr_exact(n, m, k);
    if (fpr_exact - plain).abs() <= 1e-12 * plain.abs() && plain > 0.0 {
        theory::fpr_between_filter_variance(n, m, k)
    } else {
        0.0
    }
}

/// Several measurements of one setup taken together: T filters (hash seeds) of one shape.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Spread {
    /// Mean of the measured rates.
    pub mean: f64,
    /// Their sample standard deviation.
    pub sd: f64,
    /// The deviation binomial and between-filter noise predict: `sqrt(mean of fpr_variance)`.
    pub expected_sd: f64,
    /// The rate of the setup averaged over filters, estimated by the mean of the T rates.
    pub pooled: f64,
    /// 95% interval of `pooled` from the scatter between filters: `mean ± t_{T-1}·sd/√T`,
    /// `t_{T-1}` the 97.5% Student quantile (the variance of the mean of T rates, not the
    /// binomial of pooled counts, which leaves out the filters' own spread). With one trial,
    /// that row's Clopper–Pearson interval.
    pub pooled_low: f64,
    pub pooled_high: f64,
}

impl Spread {
    /// The spread of `rows` (at least one).
    pub fn of(rows: &[&Measurement]) -> Self {
        let t = rows.len() as f64;
        let rates: Vec<f64> = rows.iter().map(|r| r.fpr_measured).collect();
        let (mean, var) = mean_and_variance(&rates);
        let sd = if rows.len() < 2 { 0.0 } else { var.sqrt() };
        let expected_sd = (rows.iter().map(|r| r.fpr_variance()).sum::<f64>() / t).sqrt();
        let (pooled_low, pooled_high) = match StudentsT::new(0.0, 1.0, t - 1.0) {
            Ok(student) if rows.len() >= 2 => {
                let half = student.inverse_cdf(0.5 + CONFIDENCE / 2.0) * sd / t.sqrt();
                ((mean - half).max(0.0), (mean + half).min(1.0))
            }
            _ => (rows[0].ci_low, rows[0].ci_high),
        };
        Spread {
            mean,
            sd,
            expected_sd,
            pooled: mean,
            pooled_low,
            pooled_high,
        }
    }
}
