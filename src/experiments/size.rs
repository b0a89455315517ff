//! The essay's sizing order as a plan: the rate first, then the space, then k, then the
//! warning about n; and every structure sized for the same n and rate ([`structures`]).

use bytesize::ByteSize;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::experiments::MeasuredPlan;
use crate::hash::HashScheme;
use crate::params::{MAX_COUNT, check_count, positive_list, require};
use crate::pipeline::measurement::{CONFIDENCE, Setup, Trial};
use crate::pipeline::run_trial;
use crate::report::{Column, Record, Table, percent};
use crate::stats::clopper_pearson;
use crate::structures::bloom::MAX_BITS;
use crate::structures::{FilterKind, Sizing, Spec};
use crate::theory;

/// Load factors of the overfill table, as multiples of the planned n.
pub const OVERFILL_FACTORS: [f64; 5] = [1.0, 1.1, 1.25, 1.5, 2.0];

/// What the user fixed: exactly two of n, the rate, bits per key and m.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct SizeRequest {
    pub n: Option<u64>,
    pub fpr: Option<f64>,
    pub bits_per_key: Option<f64>,
    pub m: Option<u64>,
}

/// One row of a plan: the design (repeated on every row, so CSV stays one flat table) and one
/// load scenario.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SizeRow {
    /// Keys the filter is designed for.
    pub n_design: u64,
    /// Bits in the filter.
    pub m: u64,
    /// `ceil(m / 8)`.
    pub bytes: u64,
    /// `m / n_design`.
    pub bits_per_key: f64,
    /// The target ε, or the rate at the real optimum when the space was given.
    pub fpr_target: f64,
    /// `(m/n) ln 2`.
    pub k_optimal: f64,
    /// `floor(k_optimal)`, within 1..=64.
    pub k_floor: u32,
    /// Classic rate with `k_floor` hashes at `n_design`.
    pub fpr_k_floor: f64,
    /// `ceil(k_optimal)`, within 1..=64.
    pub k_ceil: u32,
    /// Classic rate with `k_ceil` hashes at `n_design`.
    pub fpr_k_ceil: f64,
    /// The whole k of the two with the lower rate.
    pub k: u32,
    /// `1 - e^{-k_optimal · n/m}`: one half.
    pub fill_at_optimum: f64,
    /// `2^{-k_optimal}`.
    pub fpr_at_optimum: f64,
    /// `log2(1/ε)` bits per key.
    pub information_floor: f64,
    /// `bits_per_key / information_floor`: 1/ln 2 at the optimum.
    pub overhead_ratio: f64,
    /// `k_optimal · ln 2`: the rate's relative change per unit of fractional overfill.
    pub sensitivity: f64,
    /// The load scenario: keys inserted over `n_design`.
    pub overfill_factor: f64,
    /// Keys inserted: `round(overfill_factor · n_design)`.
    pub n_actual: u64,
    /// Classic rate with k hashes at `n_actual`.
    pub fpr: f64,
    /// Expected fill at `n_actual`: `1 - e^{-k · n_actual / m}`.
    pub fill: f64,
    /// `fpr / fpr at the planned n`.
    pub ratio_to_design: f64,
}

impl Record for SizeRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "load" => Fixed(overfill_factor, 2),
            "keys" => Plain(n_actual),
            "fill" => Percent(fill),
            "rate" => Percent(fpr),
            "× design rate" => Times(ratio_to_design),
        ]
    }
}

const VALID_CALLS: &str =
    "--n with one of --fpr, --bits-per-key, --m; or --m with one of --fpr, --bits-per-key";

/// Refuses, naming `--fpr`, a rate outside (0, 1).
pub fn check_fpr(fpr: f64) -> Result<f64> {
    let reason = "a rate must lie strictly between 0 and 1";
    require("fpr", fpr, fpr > 0.0 && fpr < 1.0, reason, "(0, 1)")
}

/// Refuses, naming `--bits-per-key`, bits per key outside (0, 10000] (NaN included).
pub fn check_bits_per_key(bits: f64) -> Result<f64> {
    positive_list("bits_per_key", None, &[bits], 10_000.0).map(|_| bits)
}

/// The refusal of a request with one of the four: it names the flag still missing, `--n`
/// beside a rate or bits per key (they fix the rate, not the number of keys), else `--fpr`.
fn one_given(request: &SizeRequest) -> Error {
    let (flag, given, why) = match (request.fpr, request.bits_per_key) {
        (Some(fpr), _) => (
            "n",
            format!("--fpr {fpr}"),
            "the rate alone fixes bits per key, not how many keys",
        ),
        (_, Some(bits)) => (
            "n",
            format!("--bits-per-key {bits}"),
            "bits per key alone fix the rate, not how many keys",
        ),
        _ => ("fpr", "one size".to_string(), "n or m alone fixes no rate"),
    };
    Error::invalid(
        flag,
        "missing",
        format!("{given} given: {why}"),
        VALID_CALLS,
    )
}

/// Resolves the request into `(n, m)`, refusing anything but a consistent pair.
fn resolve(request: &SizeRequest) -> Result<(u64, u64)> {
    let given = [
        request.n.is_some(),
        request.fpr.is_some(),
        request.bits_per_key.is_some(),
        request.m.is_some(),
    ]
    .iter()
    .filter(|&&g| g)
    .count();
    if given == 1 {
        return Err(one_given(request));
    }
    if given != 2 {
        return Err(Error::invalid(
            "n",
            format!("{given} of --n, --fpr, --bits-per-key, --m"),
            "give exactly two",
            VALID_CALLS,
        ));
    }
    let n = request
        .n
        .map(|n| check_count("n", n, 1, MAX_COUNT))
        .transpose()?;
    let m = request
        .m
        .map(|m| check_count("m", m, 1, MAX_BITS))
        .transpose()?;
    let bits = match (request.fpr, request.bits_per_key) {
        (Some(_), Some(_)) => {
            return Err(Error::invalid(
                "fpr",
                "with --bits-per-key",
                "the rate and the bits per key fix the same thing; n is still missing",
                VALID_CALLS,
            ));
        }
        (Some(fpr), None) => Some(theory::bits_per_key_for_fpr(check_fpr(fpr)?)),
        (None, Some(bits)) => Some(check_bits_per_key(bits)?),
        (None, None) => None,
    };
    let (n, m) = match (n, m, bits) {
        (Some(n), Some(m), None) => (n, m),
        (Some(n), None, Some(bits)) => (n, theory::bits_at(n, bits)),
        (None, Some(m), Some(bits)) => (theory::keys_within(m, bits), m),
        _ => unreachable!("exactly two of four given, and fpr with bits_per_key refused"),
    };
    if n == 0 {
        return Err(Error::invalid(
            "m",
            m,
            "too small to hold one key at this rate",
            "a larger --m",
        ));
    }
    let m = check_count("m", m, 1, MAX_BITS).map_err(|_| {
        Error::invalid(
            "n",
            n,
            format!("needs {m} bits"),
            format!("at most {MAX_BITS} bits (8 GiB)"),
        )
    })?;
    Ok((n, m))
}

/// The plan: one row per load factor in [`OVERFILL_FACTORS`].
pub fn plan(request: &SizeRequest) -> Result<Vec<SizeRow>> {
    let (n, m) = resolve(request)?;
    let bits_per_key = m as f64 / n as f64;
    let k_optimal = theory::optimal_k(bits_per_key);
    let k_floor = (k_optimal.floor() as u32).clamp(1, crate::hash::MAX_K);
    let k_ceil = (k_optimal.ceil() as u32).clamp(1, crate::hash::MAX_K);
    let fpr_k_floor = theory::fpr_classic(n, m, k_floor);
    let fpr_k_ceil = theory::fpr_classic(n, m, k_ceil);
    let k = if fpr_k_floor <= fpr_k_ceil {
        k_floor
    } else {
        k_ceil
    };
    let fpr_at_optimum = theory::fpr_at_optimum(bits_per_key);
    let fpr_target = request.fpr.unwrap_or(fpr_at_optimum);
    let information_floor = theory::information_floor(fpr_target);
    let fpr_design = theory::fpr_classic(n, m, k);
    Ok(OVERFILL_FACTORS
        .iter()
        .map(|&s| {
            let n_actual = (n as f64 * s).round() as u64;
            let fpr = theory::fpr_classic(n_actual, m, k);
            SizeRow {
                n_design: n,
                m,
                bytes: m.div_ceil(8),
                bits_per_key,
                fpr_target,
                k_optimal,
                k_floor,
                fpr_k_floor,
                k_ceil,
                fpr_k_ceil,
                k,
                fill_at_optimum: -(-k_optimal / bits_per_key).exp_m1(),
                fpr_at_optimum,
                information_floor,
                overhead_ratio: bits_per_key / information_floor,
                sensitivity: theory::overfill_sensitivity(k_optimal),
                overfill_factor: s,
                n_actual,
                fpr,
                fill: -(-(k as f64) * n_actual as f64 / m as f64).exp_m1(),
                ratio_to_design: fpr / fpr_design,
            }
        })
        .collect())
}

/// The plan in the essay's order, one decision per line.
pub fn plan_notes(rows: &[SizeRow]) -> Vec<String> {
    let Some(r) = rows.first() else {
        return Vec::new();
    };
    vec![
        format!("1. rate: {}", percent(r.fpr_target)),
        format!(
            "2. space: {:.2} bits per key = log2(1/ε) / ln 2; m = {} bits = {} ({} bytes)",
            r.bits_per_key,
            r.m,
            ByteSize::b(r.bytes).display().iec(),
            r.bytes
        ),
        format!(
            "3. hashes: k = (m/n) ln 2 = {:.2}; k = {} gives {}, k = {} gives {}: use k = {}",
            r.k_optimal,
            r.k_floor,
            percent(r.fpr_k_floor),
            r.k_ceil,
            percent(r.fpr_k_ceil),
            r.k
        ),
        format!(
            "   at the optimum the fill is {:.3} and the rate 2^-k = {}",
            r.fill_at_optimum,
            percent(r.fpr_at_optimum)
        ),
        format!(
            "   information floor log2(1/ε) = {:.2} bits per key; this filter spends {:.4} times it",
            r.information_floor, r.overhead_ratio
        ),
        format!(
            "4. n must be right: designed for n = {}; each 1% more keys costs about {:.1}% more rate (k ln 2 = {:.2}):",
            r.n_design, r.sensitivity, r.sensitivity
        ),
    ]
}

/// One structure sized for n keys at rate ε: what it spends and what it promises, and with
/// `--measure` what it does.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct StructureSize {
    /// The structure (`--filter`).
    pub structure: String,
    /// How it was sized: "design" (bloomlab's sizing of the structure for ε) or "crate"
    /// (the crate's own constructor for n and ε).
    pub sized_by: String,
    /// Keys it is sized for.
    pub n: u64,
    /// The target rate ε.
    pub fpr_target: f64,
    /// Bits of memory it holds: `memory_bits / n` per key. A static structure's is nominal
    /// before it is built (`1.125 n` fingerprints for binary fuse).
    pub memory_bits: u64,
    /// `memory_bits / n`.
    pub bits_per_key: f64,
    /// Hashes per key; the fingerprint bits of cuckoo and binary fuse.
    pub k: u32,
    /// The memory in binary units (`1.14 MiB`).
    pub memory: String,
    /// Cache lines (64 bytes) a query reads at most; empty where unknown.
    pub lines_per_query: Option<u32>,
    /// `log2(1/ε)`: the fewest bits per key any structure answering at rate ε can spend.
    pub information_floor: f64,
    /// `bits_per_key / information_floor`.
    pub ratio_to_floor: f64,
    /// The structure's exact expected rate at n keys ([`crate::structures::Filter::fpr_exact`]).
    pub fpr_design: f64,
    /// `--measure`: absent keys queried after inserting n.
    pub queries: Option<u64>,
    /// `--measure`: the measured false-positive rate.
    pub fpr_measured: Option<f64>,
    /// `--measure`: lower end of the 95% Clopper–Pearson interval of `fpr_measured`.
    pub ci_low: Option<f64>,
    /// `--measure`: upper end of that interval.
    pub ci_high: Option<f64>,
    /// `--measure`: z of `fpr_measured` against `fpr_design`, binomial.
    pub z_design: Option<f64>,
}

impl Record for StructureSize {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "structure" => Plain(structure),
            "bits/key" => Fixed(bits_per_key, 2),
            "k" => Plain(k),
            "memory" => Plain(memory),
            "lines" => Plain(lines_per_query),
            "× floor" => Times(ratio_to_floor),
            "design" => Percent(fpr_design),
            "measured" => Percent(fpr_measured).wide_only(),
            "95% CI" => Interval(ci_low, ci_high).wide_only(),
            "z" => Fixed(z_design, 2).wide_only(),
        ]
    }
}

/// What `size --measure` asks of each structure.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Measuring {
    pub queries: u64,
    pub seed: u64,
}

impl Measuring {
    /// The rows `--measure` counts: every structure [`structures`] sizes for n keys at ε,
    /// on the random keys of the seed.
    pub fn plan(self, n: u64, fpr: f64) -> MeasuredPlan {
        let setups = (FilterKind::all().iter())
            .filter(|kind| kind.require_built().is_ok())
            .filter_map(|kind| sized_spec(kind, n, fpr).ok().flatten())
            .map(|spec| Setup::new(spec, n, self.queries, self.seed))
            .collect();
        MeasuredPlan::once(setups)
    }
}

/// The narrow columns with measurements: the rate beside the design's, within 100 columns.
const MEASURED_NARROW: [&str; 7] = [
    "structure",
    "bits/key",
    "k",
    "design",
    "measured",
    "95% CI",
    "z",
];

/// Every registered structure that sizes itself for n keys at ε, by bloomlab's design of it
/// or by its crate's constructor; each measured by the rows of `measured`
/// ([`Measuring::plan`]) when given. A structure that cannot reach ε (a cuckoo filter below
/// 2^-16 · 8) is left out with a note.
pub fn structures(
    n: u64,
    fpr: f64,
    measured: Option<&MeasuredPlan>,
) -> Result<(Vec<StructureSize>, Vec<String>)> {
    check_count("n", n, 1, MAX_COUNT)?;
    check_fpr(fpr)?;
    let rows = measured.map_or_else(Vec::new, MeasuredPlan::rows);
    let trials = (rows.iter())
        .map(|row| Ok((row, run_trial(row)?)))
        .collect::<Result<Vec<_>>>()?;
    let mut sizes = Vec::new();
    let mut notes = Vec::new();
    for kind in FilterKind::all() {
        if kind.require_built().is_err() {
            continue;
        }
        let trial = trials.iter().find(|(row, _)| row.filter() == &kind);
        match size_one(kind.clone(), n, fpr, trial.map(|(row, t)| (row.queries, t))) {
            Ok(Some(row)) => sizes.push(row),
            Ok(None) => {}
            Err(e) => notes.push(format!("not sized: {kind}: {e}")),
        }
    }
    Ok((sizes, notes))
}

/// Hash seed of every sized filter.
const HASH_SEED: u64 = 2;

/// One structure's row; `measured`: the queries of its row of `size --measure` and its
/// trial (n keys in, its false positives counted).
fn size_one(
    kind: FilterKind,
    n: u64,
    fpr: f64,
    measured: Option<(u64, &Trial)>,
) -> Result<Option<StructureSize>> {
    let Some(spec) = sized_spec(&kind, n, fpr)? else {
        return Ok(None);
    };
    let mut filter = spec.build(n)?;
    let k = filter.hashes();
    let (memory_bits, fpr_design) = match measured {
        Some((_, trial)) => (trial.memory_bits, trial.fpr_exact),
        None => match spec.sizing {
            // A static structure holds nothing before its keys: its nominal m stands in.
            Sizing::Shape { m, .. } if kind.is_static() => (m, filter.fpr_exact(n)),
            _ => (filter.memory_bits(), filter.fpr_exact(n)),
        },
    };
    let bits_per_key = memory_bits as f64 / n as f64;
    let floor = theory::information_floor(fpr);
    filter.finish()?;
    let measured = measured.map(|(queries, trial)| {
        let rate = trial.false_positives as f64 / queries as f64;
        let (low, high) = clopper_pearson(trial.false_positives, queries, CONFIDENCE);
        (queries, rate, low, high)
    });
    let sized_by = if kind.structure().design.is_some() {
        "design"
    } else {
        "crate"
    };
    Ok(Some(StructureSize {
        structure: kind.to_string(),
        sized_by: sized_by.into(),
        n,
        fpr_target: fpr,
        memory_bits,
        bits_per_key,
        k,
        memory: ByteSize::b(memory_bits.div_ceil(8))
            .display()
            .iec()
            .to_string(),
        lines_per_query: kind.structure().lines_per_query.map(|lines| lines(k)),
        information_floor: floor,
        ratio_to_floor: bits_per_key / floor,
        fpr_design,
        queries: measured.map(|m| m.0),
        fpr_measured: measured.map(|m| m.1),
        ci_low: measured.map(|m| m.2),
        ci_high: measured.map(|m| m.3),
        z_design: measured
            .map(|(queries, rate, _, _)| crate::stats::z_score(rate, fpr_design, queries)),
    }))
}

/// The spec of a structure sized for n keys at ε on multiply-shift: its design, or its
/// crate's constructor; None for a structure sized neither way.
fn sized_spec(kind: &FilterKind, n: u64, fpr: f64) -> Result<Option<Spec>> {
    let structure = kind.structure();
    if structure.design.is_none() && structure.for_rate.is_none() {
        return Ok(None);
    }
    let spec = Spec::rate(kind.clone(), n, fpr).hashed(HashScheme::MultiplyShift, HASH_SEED);
    spec.designed().map(Some)
}

/// The table of [`structures`]: measured columns in the narrow view only when measured.
pub fn structures_table(n: u64, fpr: f64, rows: &[StructureSize]) -> Result<Table> {
    let measured = rows.iter().any(|r| r.fpr_measured.is_some());
    let title = format!(
        "every structure sized for n = {n} at {}: information floor log2(1/ε) = {:.2} bits per key",
        percent(fpr),
        theory::information_floor(fpr)
    );
    let mut table = Table::from_rows(title, rows)?;
    if measured {
        for column in &mut table.columns {
            column.narrow = MEASURED_NARROW.contains(&column.header);
        }
    }
    Ok(table)
}

/// Absent keys `--measure` queries per structure: enough for about 1000 false positives at
/// ε, within 10^5 and 10^7.
pub fn default_queries(fpr: f64) -> u64 {
    (1000.0 / fpr).clamp(1e5, 1e7).round() as u64
}
