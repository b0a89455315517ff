//! `compare`: every structure sized for the same n and target rate, side by side: the space
//! each spends against the information floor, its measured rate, its speed, and delete.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::hash::HashScheme;
use crate::pipeline::measure_counted;
use crate::pipeline::measurement::{Measurement, Setup};
use crate::pipeline::timing::{round_ns, time_filter};
use crate::report::{Column, Record};
use crate::structures::{FilterKind, Spec};
use crate::theory;

/// One structure sized for one target rate.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct CompareRow {
    /// The measurement: `filter` names the structure, `fpr_exact` is its own prediction.
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The target rate ε the structure was sized for.
    pub fpr_target: f64,
    /// Memory per key: m/n bits, 4m/n for 4-bit counters.
    pub bits_per_key_spent: f64,
    /// `log2(1/ε)`.
    pub information_floor: f64,
    /// `bits_per_key_spent / information_floor`.
    pub ratio_to_floor: f64,
    /// Whether the structure can remove a key.
    pub supports_delete: bool,
    /// The bits per key of the structure's perfect hash, part of `bits_per_key_spent`
    /// (empty for a structure without one): the essay's "about 2.5 bits per element".
    pub perfect_hash_bits_per_key: Option<f64>,
    /// Single-threaded CPU ns per insert of the same design (same bits per key and k) in a
    /// table that fits in L1, batched, the median of 5 passes (only when timed: timings are
    /// not reproducible, so the committed experiment leaves them out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_insert_in_cache: Option<f64>,
    /// Single-threaded ns per absent query, table in L1 (only when timed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_query_in_cache: Option<f64>,
    /// Single-threaded ns per insert in a table far larger than cache (only with
    /// `--timed-ram`), the median of 3 passes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_insert_out_of_cache: Option<f64>,
    /// Single-threaded ns per absent query, table far larger than cache (only with
    /// `--timed-ram`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_query_out_of_cache: Option<f64>,
}

/// Table sizes at which compare times each design, in bits of memory: always in cache, and
/// out of cache only when asked (filling 10^8 keys per structure and rate takes seconds each).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TimingSizes {
    pub in_cache: u64,
    pub out_of_cache: Option<u64>,
}

impl TimingSizes {
    /// bench's sizes: 40,000 bits (5 KB, in L1) and, with `out_of_cache`, 2^30 bits
    /// (128 MiB, four times the L3 here).
    pub fn bench(out_of_cache: bool) -> Self {
        let sizes = crate::pipeline::timing::default_sizes();
        TimingSizes {
            in_cache: sizes[0].m,
            out_of_cache: out_of_cache.then_some(sizes[1].m),
        }
    }
}

impl Record for CompareRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "structure" => Plain(measurement.filter),
            "target" => Percent(fpr_target),
            "m" => Plain(measurement.m).wide_only(),
            "k" => Plain(measurement.k).wide_only(),
            "bits/key" => Fixed(bits_per_key_spent, 2),
            "floor" => Fixed(information_floor, 2).wide_only(),
            // One word, so that the narrow table of the default rates (down to 10^-6, whose
            // intervals are widest) fits in 100 columns.
            "×floor" => Fixed(ratio_to_floor, 3),
            "FP/queries" => Ratio(measurement.false_positives, measurement.queries).wide_only(),
            "measured" => Percent(measurement.fpr_measured),
            "95% CI" => Interval(measurement.ci_low, measurement.ci_high),
            "exact" => Percent(measurement.fpr_exact),
            "z" => Fixed(measurement.z_exact, 2),
            "bits" => Plain(measurement.bits_check).wide_only().flags_when("fail"),
            "ns insert (cache)" => Fixed(ns_insert_in_cache, 1).wide_only(),
            "ns query (cache)" => Fixed(ns_query_in_cache, 1).wide_only(),
            "ns insert (RAM)" => Fixed(ns_insert_out_of_cache, 1).wide_only(),
            "ns query (RAM)" => Fixed(ns_query_out_of_cache, 1).wide_only(),
            "delete" => Plain(supports_delete).wide_only(),
            "perfect hash bits/key" => Fixed(perfect_hash_bits_per_key, 2).wide_only(),
        ]
    }
}

/// The structures compare sizes: bloomlab's own that have a design ([`FilterKind::design`]).
pub fn designed() -> Vec<FilterKind> {
    FilterKind::own()
        .into_iter()
        .filter(|k| k.structure().design.is_some())
        .collect()
}

/// Keys per timing pass: each pass inserts, or queries, this many.
pub const TIMED_KEYS: u64 = 300_000;

/// Default target rates of the compare experiment.
pub const DEFAULT_RATES: [f64; 5] = [0.05, 0.01, 0.002, 0.0001, 0.000001];
/// Default number of keys of the compare experiment.
pub const DEFAULT_N: u64 = 20_000;

/// Most absent queries a row asks for the sake of its expected false positives.
pub const MAX_QUERIES: u64 = 30_000_000;

/// Absent queries of a row at target ε: at least `min_queries`, and enough that 100 false
/// positives are expected at ε, up to [`MAX_QUERIES`]. At ε = 10^-6 the cap leaves 30
/// expected, whose 95% Clopper-Pearson upper bound is about 1.4ε: the interval still
/// separates ε from 2ε.
pub fn queries_for(min_queries: u64, fpr: f64) -> u64 {
    min_queries.max(((100.0 / fpr).ceil() as u64).min(MAX_QUERIES))
}

/// The setups of every designed structure for n keys at each target rate, sized by its
/// descriptor ([`FilterKind::design`]), with [`queries_for`] absent queries; a structure that
/// cannot be sized for a rate is left out (the notes say why).
pub fn plans(
    n: u64,
    rates: &[f64],
    min_queries: u64,
    (seed, hash_seed): (u64, u64),
) -> Result<Vec<(f64, Setup)>> {
    let mut plans = Vec::new();
    for &fpr in rates {
        crate::experiments::size::check_fpr(fpr)?;
        let queries = queries_for(min_queries, fpr);
        for kind in designed() {
            let spec = Spec::rate(kind, n, fpr).hashed(HashScheme::MultiplyShift, hash_seed);
            let spec = match spec.designed() {
                Ok(spec) => spec,
                Err(Error::Unsupported { .. }) => continue,
                Err(e) => return Err(e),
            };
            plans.push((fpr, Setup::new(spec, n, queries, seed)));
        }
    }
    Ok(plans)
}

/// ns per insert and per absent query of the setup's design at rate ε in a table of
/// `memory` bits ([`FilterKind::design_in`]), the medians of `passes`.
fn time_at(
    setup: &Setup,
    fpr: f64,
    bits_per_key: f64,
    memory: u64,
    passes: u32,
) -> Result<(f64, f64)> {
    let kind = setup.filter();
    let (keys, m, k) = kind.design_in(memory, bits_per_key, fpr)?;
    let spec =
        Spec::shape(kind.clone(), m, k).hashed(HashScheme::MultiplyShift, setup.spec.hash_seed);
    let build = || spec.build(keys);
    let t = time_filter(build, keys, TIMED_KEYS, passes, setup.seed)?;
    Ok((round_ns(t.ns_insert), round_ns(t.ns_query_absent)))
}

/// One row: the setup measured, and with `timing` its design timed at both sizes.
fn row(
    (fpr, setup): (f64, Setup),
    timing: Option<TimingSizes>,
    progress: &indicatif::ProgressBar,
) -> Result<CompareRow> {
    let measurement = measure_counted("compare", &setup, &|keys| progress.inc(keys))?;
    let n = setup.n;
    let bits_per_key_spent = measurement.memory_bits as f64 / n as f64;
    let time = |memory, passes| time_at(&setup, fpr, bits_per_key_spent, memory, passes);
    let (in_cache, out_of_cache) = match timing {
        Some(sizes) => (
            Some(time(sizes.in_cache, 5)?),
            sizes.out_of_cache.map(|m| time(m, 3)).transpose()?,
        ),
        None => (None, None),
    };
    let floor = theory::information_floor(fpr);
    let perfect_hash_bits_per_key = measurement
        .perfect_hash_bits
        .map(|bits| bits as f64 / n as f64);
    Ok(CompareRow {
        measurement,
        fpr_target: fpr,
        bits_per_key_spent,
        information_floor: floor,
        ratio_to_floor: bits_per_key_spent / floor,
        supports_delete: setup.filter().supports_delete(),
        perfect_hash_bits_per_key,
        ns_insert_in_cache: in_cache.map(|t| t.0),
        ns_query_in_cache: in_cache.map(|t| t.1),
        ns_insert_out_of_cache: out_of_cache.map(|t| t.0),
        ns_query_out_of_cache: out_of_cache.map(|t| t.1),
    })
}

/// Builds and measures every structure for n keys at each target rate ([`plans`]); with
/// `timing`, also times each design at both sizes.
pub fn compare(
    n: u64,
    rates: &[f64],
    min_queries: u64,
    seed: u64,
    hash_seed: u64,
    timing: Option<TimingSizes>,
    progress: &indicatif::ProgressBar,
) -> Result<Vec<CompareRow>> {
    let plans = plans(n, rates, min_queries, (seed, hash_seed))?;
    let (targets, rows): (Vec<f64>, Vec<Setup>) = plans.into_iter().unzip();
    measure_rows(&targets, rows, timing, progress)
}

/// Measures every structure at its target rate (the rows of [`plans`], with their work);
/// with `timing`, also times each design at both sizes.
pub fn measure_rows(
    rates: &[f64],
    rows: Vec<Setup>,
    timing: Option<TimingSizes>,
    progress: &indicatif::ProgressBar,
) -> Result<Vec<CompareRow>> {
    progress.inc_length(rows.iter().map(crate::experiments::keys_of_setup).sum());
    (rates.iter().copied().zip(rows))
        .map(|plan| row(plan, timing, progress))
        .collect()
}

/// The reader's summary of a comparison: per target rate, each structure's bits per key over
/// the floor, and each structure that cannot be sized for that rate, with the reason.
pub fn notes(n: u64, rates: &[f64], rows: &[CompareRow]) -> Vec<String> {
    let mut notes = Vec::new();
    for &rate in rates {
        let ratios: Vec<String> = rows
            .iter()
            .filter(|r| r.fpr_target == rate)
            .map(|r| format!("{} {:.2}", r.measurement.filter, r.ratio_to_floor))
            .collect();
        notes.push(format!(
            "{}: bits per key over the floor: {}",
            crate::report::percent(rate),
            ratios.join(", ")
        ));
        for kind in designed() {
            if let Err(e) = kind.design(n, rate) {
                notes.push(format!("{}: not sized: {e}", crate::report::percent(rate)));
            }
        }
    }
    notes
}
