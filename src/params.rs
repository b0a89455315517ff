//! Experiment parameters, shared by the command line and the checked-in experiment files,
//! with every range check in one place.

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::filter::{MAX_BITS, MAX_K};
use crate::hash::HashScheme;
use crate::measure::Setup;
use crate::structures::FilterKind;

/// Largest number of keys or queries accepted.
pub const MAX_COUNT: u64 = 10_000_000_000;
/// Largest number of values a list or range may expand to.
pub const MAX_LIST: usize = 10_000;

/// A list of numbers: `4,6,8`, an inclusive range `2..16`, a stepped range `2..16:2`, or a mix.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "ListInput", into = "ListInput")]
pub struct ValueList(pub Vec<f64>);

#[derive(Clone, Debug, Serialize, Deserialize)]
#[serde(untagged)]
enum ListInput {
    Number(f64),
    Numbers(Vec<f64>),
    Text(String),
}

impl TryFrom<ListInput> for ValueList {
    type Error = String;
    fn try_from(input: ListInput) -> std::result::Result<Self, String> {
        match input {
            ListInput::Number(x) => Ok(ValueList(vec![x])),
            ListInput::Numbers(xs) if xs.is_empty() => Err("empty list".to_string()),
            ListInput::Numbers(xs) => Ok(ValueList(xs)),
            ListInput::Text(text) => parse_list(&text),
        }
    }
}

impl From<ValueList> for ListInput {
    fn from(list: ValueList) -> Self {
        ListInput::Numbers(list.0)
    }
}

fn parse_number(text: &str) -> std::result::Result<f64, String> {
    let value: f64 = text
        .trim()
        .parse()
        .map_err(|_| format!("'{}' is not a number", text.trim()))?;
    if value.is_finite() {
        Ok(value)
    } else {
        Err(format!("'{}' is not a finite number", text.trim()))
    }
}

fn parse_list(text: &str) -> std::result::Result<ValueList, String> {
    let mut values = Vec::new();
    for item in text.split(',') {
        let item = item.trim();
        if item.is_empty() {
            return Err(format!("empty item in list '{text}'"));
        }
        match item.split_once("..") {
            None => values.push(parse_number(item)?),
            Some((start, rest)) => {
                let (end, step) = match rest.split_once(':') {
                    Some((end, step)) => (end, parse_number(step)?),
                    None => (rest, 1.0),
                };
                let (start, end) = (parse_number(start)?, parse_number(end)?);
                if step <= 0.0 {
                    return Err(format!("range step must be positive in '{item}'"));
                }
                if end < start {
                    return Err(format!("range '{item}' ends before it starts"));
                }
                let count = ((end - start) / step + 1e-9).floor() as usize + 1;
                if count > MAX_LIST {
                    return Err(format!("range '{item}' has more than {MAX_LIST} values"));
                }
                values.extend((0..count).map(|i| start + i as f64 * step));
            }
        }
        if values.len() > MAX_LIST {
            return Err(format!("list has more than {MAX_LIST} values"));
        }
    }
    Ok(ValueList(values))
}

impl ValueList {
    /// Parses the list syntax; `name` names the parameter in the error.
    pub fn parse(name: &'static str, text: &str) -> Result<Self> {
        parse_list(text).map_err(|reason| {
            Error::invalid(
                name,
                text,
                reason,
                "a comma list (4,6,8) or a range (2..16, 2..16:2)",
            )
        })
    }
}

/// Every parameter an experiment takes; `None` means "the experiment's default".
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub n: Option<u64>,
    #[serde(alias = "bits_per_elem")]
    pub bits_per_key: Option<ValueList>,
    pub m: Option<u64>,
    pub k: Option<ValueList>,
    pub queries: Option<u64>,
    pub seed: Option<u64>,
    pub hash_seed: Option<u64>,
    pub hash: Option<HashScheme>,
    pub design_n: Option<u64>,
    pub factors: Option<ValueList>,
    pub seeds: Option<u64>,
    pub scales: Option<ValueList>,
    pub trials: Option<u64>,
    pub filter: Option<FilterKind>,
    pub rates: Option<ValueList>,
}

/// Default key seed.
pub const DEFAULT_SEED: u64 = 1;
/// Default hash seed.
pub const DEFAULT_HASH_SEED: u64 = 2;
/// Default number of absent-key queries.
pub const DEFAULT_QUERIES: u64 = 60_000;

/// Checks that a count lies in `min..=max`, naming the parameter when it does not.
pub fn check_count(name: &'static str, value: u64, min: u64, max: u64) -> Result<u64> {
    if (min..=max).contains(&value) {
        Ok(value)
    } else {
        Err(Error::invalid(
            name,
            value,
            "out of range",
            format!("{min}..={max}"),
        ))
    }
}

fn format_number(x: f64) -> String {
    format!("{x}")
}

impl Params {
    /// Number of keys, 1..=10^10.
    pub fn n_or(&self, default: u64) -> Result<u64> {
        check_count("n", self.n.unwrap_or(default), 1, MAX_COUNT)
    }

    /// Number of absent-key queries, 1..=10^10.
    pub fn queries(&self) -> Result<u64> {
        check_count(
            "queries",
            self.queries.unwrap_or(DEFAULT_QUERIES),
            1,
            MAX_COUNT,
        )
    }

    /// Key seed.
    pub fn seed(&self) -> u64 {
        self.seed.unwrap_or(DEFAULT_SEED)
    }

    /// Hash seed.
    pub fn hash_seed(&self) -> u64 {
        self.hash_seed.unwrap_or(DEFAULT_HASH_SEED)
    }

    /// Hash scheme, multiply-shift unless asked.
    pub fn hash(&self) -> HashScheme {
        self.hash.unwrap_or(HashScheme::MultiplyShift)
    }

    /// The bit array size, if given, 1..=2^36.
    pub fn m(&self) -> Result<Option<u64>> {
        self.m.map(|m| check_count("m", m, 1, MAX_BITS)).transpose()
    }

    /// The list of k, each a whole number in 1..=64.
    pub fn k_list_or(&self, default: &[u32]) -> Result<Vec<u32>> {
        match &self.k {
            None => Ok(default.to_vec()),
            Some(list) => list
                .0
                .iter()
                .map(|&k| {
                    if k.fract() == 0.0 && (1.0..=MAX_K as f64).contains(&k) {
                        Ok(k as u32)
                    } else {
                        Err(Error::invalid(
                            "k",
                            format_number(k),
                            "number of hashes must be a whole number in range",
                            format!("1..={MAX_K}"),
                        ))
                    }
                })
                .collect(),
        }
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

    /// Overfill factors, each in (0, 100].
    pub fn factors_or(&self, default: &[f64]) -> Result<Vec<f64>> {
        positive_list("factors", self.factors.as_ref(), default, 100.0)
    }

    /// Target rates, each in (0, 1).
    pub fn rates_or(&self, default: &[f64]) -> Result<Vec<f64>> {
        let rates = positive_list("rates", self.rates.as_ref(), default, 1.0)?;
        match rates.iter().find(|&&r| r >= 1.0) {
            Some(&r) => Err(Error::invalid(
                "rates",
                r,
                "a rate must be below 1",
                "(0, 1)",
            )),
            None => Ok(rates),
        }
    }

    /// Scale multipliers of n and m, each in (0, 1000].
    pub fn scales_or(&self, default: &[f64]) -> Result<Vec<f64>> {
        positive_list("scales", self.scales.as_ref(), default, 1000.0)
    }

    /// Number of hash seeds, 2..=1000.
    pub fn seeds_or(&self, default: u64) -> Result<u64> {
        check_count("seeds", self.seeds.unwrap_or(default), 2, 1000)
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

    /// One bit array size, as [`Params::sizes_or`], refusing a list of bits per key.
    pub fn size_or(&self, n: u64, default_bits: &[f64]) -> Result<u64> {
        Params::single("bits_per_key", &self.sizes_or(n, default_bits)?)
    }

    /// The setup of one measurement of n keys in m bits with k hashes, with this run's
    /// queries, seeds and hash.
    pub fn setup(&self, n: u64, m: u64, k: u32) -> Result<Setup> {
        let filter = self.filter.unwrap_or_default();
        if filter.is_static() {
            return Err(Error::invalid(
                "filter",
                filter,
                "a binary fuse filter is static and sized by its keys, not by m",
                "compare, which sizes every structure for n and a target rate",
            ));
        }
        if let (true, Some(hash)) = (filter.is_peer(), self.hash) {
            return Err(Error::invalid(
                "hash",
                hash,
                format!("{filter} hashes keys with its own function"),
                "no --hash with a peer crate's --filter",
            ));
        }
        Ok(Setup {
            n,
            m: filter.layout(m, k)?,
            k,
            filter,
            queries: self.queries()?,
            seed: self.seed(),
            hash_seed: self.hash_seed(),
            hash: self.hash(),
        })
    }

    /// Independent trials per setup, each with its own hash seed `hash_seed + t`, 1..=1000.
    pub fn trials(&self) -> Result<u64> {
        check_count("trials", self.trials.unwrap_or(1), 1, 1000)
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
}

fn positive_list(
    name: &'static str,
    list: Option<&ValueList>,
    default: &[f64],
    max: f64,
) -> Result<Vec<f64>> {
    let values = list.map_or_else(|| default.to_vec(), |l| l.0.clone());
    for &x in &values {
        if !(x > 0.0 && x <= max) {
            return Err(Error::invalid(
                name,
                format_number(x),
                "out of range",
                format!("greater than 0 and at most {max}"),
            ));
        }
    }
    Ok(values)
}

/// The bit array for n keys at `bits_per_key`: `round(n · bits_per_key)`, 1..=2^36.
pub fn bits_for(n: u64, bits_per_key: f64) -> Result<u64> {
    let m = (n as f64 * bits_per_key).round();
    if m < 1.0 || m > MAX_BITS as f64 {
        Err(Error::invalid(
            "bits_per_key",
            format_number(bits_per_key),
            format!("n = {n} keys at this density need {m} bits"),
            format!("1..={MAX_BITS} bits in all (8 GiB)"),
        ))
    } else {
        Ok(m as u64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_ranges() {
        assert_eq!(parse_list("4,6,8").unwrap().0, vec![4.0, 6.0, 8.0]);
        assert_eq!(parse_list("2..5").unwrap().0, vec![2.0, 3.0, 4.0, 5.0]);
        assert_eq!(parse_list("2..6:2, 9").unwrap().0, vec![2.0, 4.0, 6.0, 9.0]);
        assert!(parse_list("4,,6").is_err());
        assert!(parse_list("6..2").is_err());
        assert!(parse_list("x").is_err());
        assert!(parse_list("1..1e9").is_err());
    }
}
