//! advise's flags checked, every refusal before any work: each names its flag and range.

use super::AdviseParams;
use super::candidates::{self, Budget, Config, Limits, Needs};
use super::model::REFERENCE_KEYS_MAX;
use super::skyline::Tolerance;
use crate::error::{Error, Result};
use crate::keys::KeySpec;
use crate::params::check_count;
use crate::params::preflight::Cost;

/// The work a query does when it passes the filter (`--work-ns`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum WorkCost {
    /// A busy loop of this many ns.
    Nanos(f64),
    /// A named preset of this many ns, run as a busy loop.
    Preset(&'static str, f64),
    /// A dependent random read, its cost measured in the run.
    CacheMiss,
}

/// The presets `--work-ns` names: a random read from an NVMe SSD and a round trip within a
/// data centre, in ns.
pub const PRESETS: [(&str, f64); 2] = [("ssd", 100_000.0), ("network", 500_000.0)];

/// Most ns of work per query.
pub const MAX_WORK_NS: f64 = 1e9;

const WORK_ALLOWED: &str =
    "a number of ns in (0, 1e9], or cache-miss, ssd (100000), network (500000)";

impl WorkCost {
    /// Parses `--work-ns`.
    pub fn parse(text: &str) -> Result<WorkCost> {
        if text == "cache-miss" {
            return Ok(WorkCost::CacheMiss);
        }
        if let Some(&(name, ns)) = PRESETS.iter().find(|(name, _)| *name == text) {
            return Ok(WorkCost::Preset(name, ns));
        }
        match text.trim().parse::<f64>() {
            Ok(ns) if ns > 0.0 && ns <= MAX_WORK_NS => Ok(WorkCost::Nanos(ns)),
            _ => Err(Error::invalid("work-ns", text, "not a cost", WORK_ALLOWED)),
        }
    }
}

const TOLERANCE_ALLOWED: &str = "ns in (0, 1e9], or a share of the best cost in (0%, 100%]";

/// Parses `--tolerance`: `N` ns, or `N%` of the best cost; the default when not given.
pub fn tolerance(text: Option<&str>) -> Result<Tolerance> {
    let Some(text) = text else {
        return Ok(Tolerance::default());
    };
    let refuse = || Error::invalid("tolerance", text, "not a tolerance", TOLERANCE_ALLOWED);
    let trimmed = text.trim();
    match trimmed.strip_suffix('%') {
        Some(share) => match share.trim().parse::<f64>() {
            Ok(p) if p > 0.0 && p <= 100.0 => Ok(Tolerance {
                share: p / 100.0,
                ns: 0.0,
            }),
            _ => Err(refuse()),
        },
        None => match trimmed.parse::<f64>() {
            Ok(ns) if ns > 0.0 && ns <= MAX_WORK_NS => Ok(Tolerance { share: 0.0, ns }),
            _ => Err(refuse()),
        },
    }
}

/// A validated advise run.
#[derive(Clone, Debug)]
pub struct AdvisePlan {
    pub n: u64,
    pub negative_share: f64,
    pub work: WorkCost,
    pub limits: Limits,
    pub needs: Needs,
    pub batched: bool,
    pub keys: KeySpec,
    pub queries: u64,
    pub contenders: usize,
    /// Costs within it of the best are tied (`--tolerance`).
    pub tolerance: Tolerance,
    /// Every configuration is measured, none pruned by the time model.
    pub measure_all: bool,
    /// Wall seconds the run aims at (`--target-seconds`).
    pub target_seconds: u64,
    pub seed: u64,
    pub hash_seed: u64,
    /// Every configuration within the needs and the limits, with its closed forms.
    pub configs: Vec<Config>,
    /// How many configurations the space held before the limits.
    pub space: usize,
    /// When planning began: `--target-seconds` counts from it.
    pub started: std::time::Instant,
}

/// Refuses a fraction outside its range, naming the flag.
fn fraction(flag: &'static str, value: f64, open: bool) -> Result<f64> {
    let ok = match open {
        true => value > 0.0 && value < 1.0,
        false => (0.0..=1.0).contains(&value),
    };
    match ok {
        true => Ok(value),
        false => Err(Error::invalid(
            flag,
            value,
            "out of range",
            if open { "(0, 1)" } else { "[0, 1]" },
        )),
    }
}

/// The budget in bytes from `--memory` or `--bits-per-key`, with the flag that set it and
/// the value it was given.
fn budget(params: &AdviseParams, n: u64) -> Result<(Option<u64>, Budget)> {
    match (params.memory, params.bits_per_key) {
        (Some(_), Some(_)) => Err(Error::invalid(
            "memory",
            "with --bits-per-key",
            "give one budget",
            "--memory BYTES or --bits-per-key B",
        )),
        (Some(bytes), None) => {
            let bytes = check_count("memory", bytes.0, 1, 1 << 36)?;
            Ok((Some(bytes), ("memory", bytes.to_string())))
        }
        (None, Some(bits)) => {
            let bits = crate::experiments::size::check_bits_per_key(bits)?;
            let bytes = (bits * n as f64 / 8.0).floor() as u64;
            Ok((Some(bytes), ("bits-per-key", bits.to_string())))
        }
        (None, None) => Ok((None, ("memory", String::new()))),
    }
}

/// `--target-seconds`: the run's wall time target, 10 s to an hour, a minute by default.
fn target_seconds(params: &AdviseParams) -> Result<u64> {
    let given = params.target_seconds.map_or(60, |c| c.0);
    check_count("target-seconds", given, 10, 3600)
}

/// Checks every flag, then sizes the space and cuts it by the needs and the limits.
pub fn plan(params: &AdviseParams) -> Result<AdvisePlan> {
    let started = std::time::Instant::now();
    let Sizes {
        n,
        queries,
        contenders,
    } = sizes(params)?;
    let negative_share = fraction(
        "negative-share",
        params.negative_share.unwrap_or(0.9),
        false,
    )?;
    let work = WorkCost::parse(params.work_ns.as_deref().unwrap_or("cache-miss"))?;
    let max_fpr = params
        .max_fpr
        .map(|e| fraction("max-fpr", e, true))
        .transpose()?;
    let needs = Needs::parse(params.needs.as_deref().unwrap_or("insert"))?;
    let keys = KeySpec::parse("keys", params.keys.as_deref().unwrap_or("random"))?;
    if let Some(available) = keys.available("keys")?
        && available < n
    {
        return Err(Error::invalid(
            "keys",
            params.keys.as_deref().unwrap_or(""),
            format!("holds {available} keys, fewer than --n"),
            format!("a source of at least {n} keys, or --n {available}"),
        ));
    }
    let target_seconds = target_seconds(params)?;
    let tolerance = tolerance(params.tolerance.as_deref())?;
    let (memory_bytes, flag) = budget(params, n)?;
    let limits = Limits {
        memory_bytes,
        max_fpr,
    };
    candidates::refuse_early(n, needs, &limits, &flag)?;
    let designs = candidates::designs(n, needs);
    let size = designs.len();
    let configs = candidates::within(&designs, n, &limits, &flag)?;
    Ok(AdvisePlan {
        n,
        negative_share,
        work,
        limits,
        needs,
        batched: params.batched,
        keys,
        queries,
        contenders,
        tolerance,
        measure_all: params.measure_all,
        target_seconds,
        seed: params.seeds.seed(),
        hash_seed: params.seeds.hash_seed(),
        configs,
        space: size,
        started,
    })
}

/// The flags that size a run, validated.
struct Sizes {
    n: u64,
    queries: u64,
    contenders: usize,
}

fn sizes(params: &AdviseParams) -> Result<Sizes> {
    Ok(Sizes {
        n: check_count("n", params.n.map_or(1_000_000, |c| c.0), 1000, 100_000_000)?,
        queries: check_count(
            "queries",
            params.queries.map_or(1_000_000, |c| c.0),
            1000,
            100_000_000,
        )?,
        contenders: check_count("contenders", params.contenders.map_or(24, |c| c.0), 1, 500)?
            as usize,
    })
}

/// The least work of a run, in key operations: the time model's references (one per
/// structure, at most [`REFERENCE_KEYS_MAX`] keys built and about 2·10^5 looked up), one
/// contender at n (built twice, its queries and about 6·10^6 timed lookups) and the
/// end-to-end run's two filters at n. Every phase past it keeps within `--target-seconds`;
/// the least work beyond them asks for `--yes`. The peak: two tables of `largest` bytes
/// beside the cache-miss buffer.
fn least_cost(sizes: &Sizes, target: u64, largest: u64) -> Cost {
    let n = sizes.n as f64;
    let references =
        candidates::structures().len() as f64 * (n.min(REFERENCE_KEYS_MAX as f64) + 2e5);
    Cost {
        key_operations: references + 4.0 * n + sizes.queries as f64 + 6e6,
        peak_bytes: 2.0 * largest as f64 + (1u64 << 27) as f64,
        target: Some(("target-seconds", target)),
    }
}

/// The run's least work from its sizing flags alone, checked before [`plan`]: planning
/// builds an empty filter of many configurations to read their memory. [`least_cost`] with
/// no table counted.
pub fn planning_cost(params: &AdviseParams) -> Result<Cost> {
    Ok(least_cost(&sizes(params)?, target_seconds(params)?, 0))
}

impl AdvisePlan {
    /// [`least_cost`] with the largest configuration's table.
    pub fn cost(&self) -> Cost {
        let largest = self.configs.iter().map(|c| c.memory_bytes).max();
        let sizes = Sizes {
            n: self.n,
            queries: self.queries,
            contenders: self.contenders,
        };
        let mut cost = least_cost(&sizes, self.target_seconds, largest.unwrap_or(0));
        cost.key_operations += self.repeated_keys_operations();
        cost
    }

    /// The extra work of the quotient filter's reference on repeated keys, in key operations
    /// ([`quotient::repeated_keys_seconds`]): its n inserts and its queries at least (its
    /// contenders, if any, add as much again each).
    fn repeated_keys_operations(&self) -> f64 {
        use crate::structures::{FilterKind, quotient};
        let reference = FilterKind::of(&quotient::STRUCTURE);
        let operations = (self.n + self.queries) as f64;
        quotient::repeated_keys_seconds(&reference, &self.keys, self.n, operations)
            / crate::params::preflight::SECONDS_PER_KEY_OPERATION
    }
}

/// How the run keeps to `--target-seconds`, said before any work (`validation_share` of
/// it kept for the end-to-end run).
pub fn budget_line(plan: &AdvisePlan, validation_share: f64) -> String {
    let contenders = match plan.measure_all {
        true => {
            "every configuration measured (--measure-all: not bounded by the target)".to_string()
        }
        false => format!(
            "references of at most {} keys for the time model, then the contenders in order of priority while each one's predicted time fits",
            plan.n.min(super::model::REFERENCE_KEYS_MAX),
        ),
    };
    format!(
        "time: --target-seconds {}: {contenders}; the end-to-end run, its filters' builds counted, in the {:.0} s kept for it",
        plan.target_seconds,
        plan.target_seconds as f64 * validation_share
    )
}
