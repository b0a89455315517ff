//! Experiment parameters, typed once: each group below is both a set of command-line flags
//! (`clap::Args`) and a set of experiment-file keys (`serde::Deserialize`), with the flag and
//! the key named by the same field, and every range check in one accessor.

mod key_flags;
mod numbers;
pub mod preflight;

use clap::Args;
use serde::Deserialize;

use crate::error::{Error, Result};
use crate::hash::{HashScheme, MAX_K};
use crate::pipeline::measurement::Setup;
pub use crate::program::ProgramParams;
use crate::structures::bloom::MAX_BITS;
use crate::structures::{FilterKind, Sizing, Spec};
pub use key_flags::{KeyParams, KeySources, MRound};
pub use numbers::{Count, ValueList, parse_number};

/// Largest number of keys or queries accepted.
pub const MAX_COUNT: u64 = 10_000_000_000;
/// Largest number of absent-key queries per row: more than one machine counts, for a run
/// cut into shards (`--shard`).
pub const MAX_QUERIES: u64 = 10_000_000_000_000;
/// Largest number of values a list or range may expand to.
pub const MAX_LIST: usize = 10_000;

/// Default key seed.
pub const DEFAULT_SEED: u64 = 1;
/// Default hash seed.
pub const DEFAULT_HASH_SEED: u64 = 2;
/// Default number of absent-key queries.
pub const DEFAULT_QUERIES: u64 = 60_000;

/// Checks that a count lies in `min..=max`, naming the parameter when it does not.
pub fn check_count(name: &'static str, value: u64, min: u64, max: u64) -> Result<u64> {
    let allowed = format!("{min}..={max}");
    require(
        name,
        value,
        (min..=max).contains(&value),
        "out of range",
        allowed,
    )
}

/// `value` where `ok` holds, else the refusal naming the parameter, why, and what is allowed.
pub fn require<T: ToString>(
    name: &'static str,
    value: T,
    ok: bool,
    reason: impl Into<String>,
    allowed: impl Into<String>,
) -> Result<T> {
    match ok {
        true => Ok(value),
        false => Err(Error::invalid(name, value, reason, allowed)),
    }
}

/// The seeds of a run: which keys, and which hash parameters.
#[derive(Args, Clone, Debug, Default, PartialEq, Deserialize)]
pub struct SeedParams {
    /// Seed of the key generator [default 1]
    #[arg(long, allow_hyphen_values = true)]
    pub seed: Option<u64>,
    /// Seed of the hash parameters (given to the crates that accept one) [default 2]
    #[arg(long, allow_hyphen_values = true)]
    pub hash_seed: Option<u64>,
}

impl SeedParams {
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(DEFAULT_SEED)
    }

    pub fn hash_seed(&self) -> u64 {
        self.hash_seed.unwrap_or(DEFAULT_HASH_SEED)
    }
}

/// The shape of the filters measured: n keys, m bits (or bits per key), k hashes.
#[derive(Args, Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ShapeParams {
    /// Number of inserted keys [1..=10^10]
    #[arg(long, allow_hyphen_values = true)]
    pub n: Option<Count>,
    /// Bits per key m/n: a number, a list (4,6,8) or a range (2..16, 2..16:2) [> 0, <= 10000]
    #[arg(
        long = "bits-per-key",
        visible_alias = "bits-per-elem",
        value_name = "LIST",
        allow_hyphen_values = true
    )]
    #[serde(alias = "bits_per_elem")]
    pub bits_per_key: Option<ValueList>,
    /// Bits in the filter; overrides --bits-per-key [1..=2^36]
    #[arg(long, allow_hyphen_values = true)]
    pub m: Option<Count>,
    /// Number of hashes: a number, a list or a range [1..=64]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    pub k: Option<ValueList>,
}

impl ShapeParams {
    /// The bit array size, if given, 1..=2^36.
    pub fn m(&self) -> Result<Option<u64>> {
        self.m
            .map(|m| check_count("m", m.0, 1, MAX_BITS))
            .transpose()
    }

    /// The list of k, each a whole number in 1..=64.
    pub fn k_list_or(&self, default: &[u32]) -> Result<Vec<u32>> {
        match &self.k {
            None => Ok(default.to_vec()),
            Some(list) => list.0.iter().map(|&k| whole_k(k)).collect(),
        }
    }

    /// One k, refusing a list.
    pub fn k_or(&self, default: u32) -> Result<u32> {
        single("k", &self.k_list_or(&[default])?)
    }

    /// The list of bits per key, each in (0, 10000].
    pub fn bits_per_key_or(&self, default: &[f64]) -> Result<Vec<f64>> {
        positive_list(
            "bits_per_key",
            self.bits_per_key.as_ref(),
            default,
            10_000.0,
        )
    }

    /// The bit array sizes for n keys: `--m` when given, else `round(n · b)` for each bits per
    /// key `b` (the default list when none is given).
    pub fn sizes_or(&self, n: u64, default_bits: &[f64]) -> Result<Vec<u64>> {
        match self.m()? {
            Some(m) => Ok(vec![m]),
            None => self
                .bits_per_key_or(default_bits)?
                .into_iter()
                .map(|b| bits_for(n, b))
                .collect(),
        }
    }

    /// One bit array size, as [`ShapeParams::sizes_or`], refusing a list of bits per key.
    pub fn size_or(&self, n: u64, default_bits: &[f64]) -> Result<u64> {
        single("bits_per_key", &self.sizes_or(n, default_bits)?)
    }
}

fn whole_k(k: f64) -> Result<u32> {
    let whole = k.fract() == 0.0 && (1.0..=MAX_K as f64).contains(&k);
    let reason = "number of hashes must be a whole number in range";
    Ok(require("k", k, whole, reason, format!("1..={MAX_K}"))? as u32)
}

/// How each filter is measured: the structure, its hash, the queries and the trials.
#[derive(Args, Clone, Debug, Default, PartialEq, Deserialize)]
pub struct MeasureParams {
    /// Absent-key queries per row [1..=10^13, default 60000]
    #[arg(long, allow_hyphen_values = true)]
    pub queries: Option<Count>,
    /// Hash family: bloomlab's own or a shipped library's ([`HashScheme::help`])
    #[arg(long, help = HashScheme::help())]
    pub hash: Option<HashScheme>,
    /// Structure measured (classic by default); `bloomlab <command> --help` lists them all
    #[arg(long, long_help = filter_help())]
    pub filter: Option<FilterKind>,
    /// Independent trials per row, with hash seeds hash-seed + t; prints a summary [1..=1000]
    #[arg(long, allow_hyphen_values = true)]
    pub trials: Option<Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub seeds: SeedParams,
    #[command(flatten)]
    #[serde(flatten)]
    pub keying: KeyParams,
    #[command(flatten)]
    #[serde(flatten)]
    pub program: ProgramParams,
}

impl MeasureParams {
    /// Number of absent-key queries, 1..=10^13: `--queries`, else the default or the lines
    /// of a shorter query file (`--query-keys file:PATH`), as n takes a key file's.
    pub fn queries(&self) -> Result<u64> {
        let lines = match self.queries {
            Some(_) => None,
            None => self.keying.query_lines()?,
        };
        let default = lines.map_or(DEFAULT_QUERIES, |l| l.min(DEFAULT_QUERIES));
        check_count(
            "queries",
            self.queries.map_or(default, |c| c.0),
            1,
            MAX_QUERIES,
        )
    }

    /// Hash scheme, multiply-shift unless asked.
    pub fn hash(&self) -> HashScheme {
        self.hash.unwrap_or(HashScheme::MultiplyShift)
    }

    /// The structure, classic unless asked; a program with its `--key-form` and `--param`.
    pub fn filter(&self) -> FilterKind {
        self.filter
            .clone()
            .unwrap_or_default()
            .with_program(self.program.options())
    }

    /// [`MeasureParams::filter`], its program options refused where they would do nothing
    /// ([`ProgramParams::check`]).
    pub fn checked_filter(&self) -> Result<FilterKind> {
        let filter = self.filter();
        self.program.check(filter.is_program())?;
        Ok(filter)
    }

    /// Independent trials per setup, each with its own hash seed `hash_seed + t`, 1..=1000;
    /// refused (above 1) for a structure that takes no seed, where trials would be alike.
    pub fn trials(&self) -> Result<u64> {
        let trials = check_count("trials", self.trials.map_or(1, |t| t.0), 1, 1000)?;
        let filter = self.filter();
        if trials > 1 && !filter.accepts_seed() {
            return Err(Error::invalid(
                "filter",
                filter,
                "re-drawing the hash seed (--trials) means nothing to a crate that takes no seed",
                "a filter that accepts a seed, or --trials 1",
            ));
        }
        Ok(trials)
    }

    /// Refuses `--trials` above 1 for an experiment that draws its own hash seeds or measures
    /// each filter once; `why` says which.
    pub fn single_trial(&self, why: &str) -> Result<()> {
        let trials = self.trials()?;
        require("trials", trials, trials == 1, why, "1 for this experiment").map(|_| ())
    }

    /// The setup of one measurement of n keys sized by `sizing`, with this run's queries,
    /// seeds, hash and structure: a rate by the structure's design where it has one
    /// ([`Spec::designed`]), a shape's m rounded (`--m-round`) and laid out.
    pub fn setup(&self, n: u64, sizing: Sizing) -> Result<Setup> {
        let filter = self.checked_filter()?;
        if filter.is_static() {
            return Err(Error::invalid(
                "filter",
                filter,
                "a static structure is sized by its keys, not by m",
                "compare, which sizes every structure for n and a target rate",
            ));
        }
        if let (true, Some(hash)) = (filter.hashes_keys_itself(), self.hash) {
            return Err(Error::invalid(
                "hash",
                hash,
                format!("{filter} hashes keys with its own function"),
                "no --hash with a peer crate's or a program's --filter",
            ));
        }
        let queries = self.queries()?;
        let mut spec = Spec {
            filter,
            sizing,
            ..Spec::default()
        }
        .hashed(self.hash(), self.seeds.hash_seed())
        .designed()?;
        let (keying, m_requested) = self.keying.keying(&mut spec, (n, queries))?;
        if let Sizing::Shape { m, k } = spec.sizing {
            spec.sizing = Sizing::Shape {
                m: spec.filter.layout(m, k)?,
                k,
            };
        }
        Ok(Setup {
            keying,
            m_requested,
            ..Setup::new(spec, n, queries, self.seeds.seed())
        })
    }

    /// n: `--n`, else the lines of a key file (`--keys file:PATH`), else `default`.
    pub fn n_or(&self, shape: &ShapeParams, default: u64) -> Result<u64> {
        let n = shape
            .n
            .map(|n| check_count("n", n.0, 1, MAX_COUNT))
            .transpose()?;
        check_count("n", self.keying.n_or(n, default)?, 1, MAX_COUNT)
    }

    /// The common part of every title: the hash (a peer crate's or a program's own, which
    /// the `hash` column names, for a filter that hashes keys itself), queries and seeds.
    pub fn caption(&self) -> Result<String> {
        let filter = self.filter();
        let hash = match (filter.hashes_keys_itself(), filter.arg()) {
            (true, Some(_)) => "the program's own hash".to_string(),
            (true, None) => format!("{filter}'s own hash"),
            (false, _) => format!("hash {}", self.hash()),
        };
        Ok(format!(
            "{hash}, {} absent queries, seed {}, hash seed {}",
            self.queries()?,
            self.seeds.seed(),
            self.seeds.hash_seed()
        ))
    }
}

/// The structures `--filter` accepts, one per line with its help, from the registry.
fn filter_help() -> String {
    crate::structures::REGISTRY.iter().fold(
        "Structure measured (classic by default):".to_string(),
        |text, structure| {
            let name = match structure.argument {
                Some(argument) if argument.optional => {
                    format!("{}[:{}]", structure.name, argument.name)
                }
                Some(argument) => format!("{}:{}", structure.name, argument.name),
                None => structure.name.to_string(),
            };
            format!("{text}\n  {name:<22} {}", structure.help)
        },
    )
}

/// Target false-positive rates ε, each in (0, 1).
pub fn rates(name: &'static str, list: Option<&ValueList>, default: &[f64]) -> Result<Vec<f64>> {
    let rates = positive_list(name, list, default, 1.0)?;
    match rates.iter().find(|&&r| r >= 1.0) {
        Some(&r) => Err(Error::invalid(name, r, "a rate must be below 1", "(0, 1)")),
        None => Ok(rates),
    }
}

/// Refuses a list where one value is expected.
pub fn single<T: Copy>(name: &'static str, values: &[T]) -> Result<T> {
    match values {
        [one] => Ok(*one),
        _ => Err(Error::invalid(
            name,
            format!("{} values", values.len()),
            "this experiment takes one value",
            "a single number",
        )),
    }
}

/// The values of a list (or the default), each in `(0, max]`.
pub fn positive_list(
    name: &'static str,
    list: Option<&ValueList>,
    default: &[f64],
    max: f64,
) -> Result<Vec<f64>> {
    let values = list.map_or_else(|| default.to_vec(), |l| l.0.clone());
    for &x in &values {
        let allowed = format!("greater than 0 and at most {max}");
        require(name, x, x > 0.0 && x <= max, "out of range", allowed)?;
    }
    Ok(values)
}

/// The bit array for n keys at `bits_per_key`: `round(n · bits_per_key)`, 1..=2^36.
pub fn bits_for(n: u64, bits_per_key: f64) -> Result<u64> {
    let m = crate::theory::bits_nearest(n, bits_per_key);
    require(
        "bits_per_key",
        bits_per_key,
        (1..=MAX_BITS).contains(&m),
        format!("n = {n} keys at this density need {m} bits"),
        format!("1..={MAX_BITS} bits in all (8 GiB)"),
    )?;
    Ok(m)
}
