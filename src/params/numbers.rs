//! Numbers as a user types them: counts (`1e6`, `60_000`) and lists and ranges of values
//! (`4,6,8`, `2..16:2`), on the command line and in experiment files alike.

use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize};

use super::{MAX_COUNT, MAX_LIST};
use crate::error::{Error, Result};

/// A list of numbers: `4,6,8`, an inclusive range `2..16`, a stepped range `2..16:2`, or a mix.
/// In a file: a number, an array of numbers, or the same text.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct ValueList(pub Vec<f64>);

impl<'de> Deserialize<'de> for ValueList {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Input {
            Number(f64),
            Numbers(Vec<f64>),
            Text(String),
        }
        let input = Input::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom(
                "expected a number, an array of numbers, or a list or range as text (\"4,6,8\", \"2..16\", \"2..16:2\")",
            )
        })?;
        match input {
            Input::Number(x) => Ok(ValueList(vec![x])),
            Input::Numbers(xs) if xs.is_empty() => Err(serde::de::Error::custom("empty list")),
            Input::Numbers(xs) => Ok(ValueList(xs)),
            Input::Text(text) => parse_list(&text).map_err(serde::de::Error::custom),
        }
    }
}

impl FromStr for ValueList {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        parse_list(text)
    }
}

/// What a number flag takes before its own range (`--help` states it).
const FINITE: &str = "a finite number, such as 0.01 or 1e-6, in the range --help states";

/// A number as typed: refused, quoting the text, when it is not finite (`1e400` would read
/// as inf) or when a nonzero number reads as 0 (`1e-400`).
pub fn parse_number(text: &str) -> std::result::Result<f64, String> {
    let text = text.trim();
    let value: f64 = text
        .parse()
        .map_err(|_| format!("'{text}' is not a number (allowed: {FINITE})"))?;
    let mantissa = text.split(['e', 'E']).next().unwrap_or_default();
    if !value.is_finite() {
        Err(format!(
            "'{text}' is not a finite number (allowed: {FINITE})"
        ))
    } else if value == 0.0 && mantissa.chars().any(|c| ('1'..='9').contains(&c)) {
        Err(format!(
            "'{text}' is too small to tell from 0 (allowed: {FINITE})"
        ))
    } else {
        Ok(value)
    }
}

fn parse_range(item: &str, start: &str, rest: &str) -> std::result::Result<Vec<f64>, String> {
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
    let count = ((end - start) / step + 1e-9).floor() + 1.0;
    if count > MAX_LIST as f64 {
        return Err(format!("range '{item}' has more than {MAX_LIST} values"));
    }
    let values: Vec<f64> = (0..count as usize)
        .map(|i| start + i as f64 * step)
        .collect();
    if values.windows(2).any(|w| w[0] == w[1]) {
        return Err(format!(
            "range '{item}' has a step too small to tell its values apart"
        ));
    }
    Ok(values)
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
            Some((start, rest)) => values.extend(parse_range(item, start, rest)?),
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

/// A whole count such as a number of keys or queries: `60000`, `6e4`, `1_000_000`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub struct Count(pub u64);

fn parse_count(text: &str) -> std::result::Result<Count, String> {
    let clean = text.trim().replace('_', "");
    if let Ok(whole) = clean.parse::<u64>() {
        return Ok(Count(whole));
    }
    match clean.parse::<f64>() {
        Ok(x) if x >= 0.0 && x.fract() == 0.0 && x < 2f64.powi(64) => Ok(Count(x as u64)),
        Ok(x) if x.is_finite() && x.fract() == 0.0 && x > 0.0 => Err(format!(
            "'{text}' is out of range (allowed: at most {MAX_COUNT}, fewer for most counts)"
        )),
        _ => Err(format!(
            "'{text}' is not a whole non-negative number (e.g. 60000 or 6e4)"
        )),
    }
}

impl FromStr for Count {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        parse_count(text)
    }
}

impl<'de> Deserialize<'de> for Count {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> std::result::Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Input {
            Whole(u64),
            Number(f64),
            Text(String),
        }
        let input = Input::deserialize(deserializer).map_err(|_| {
            serde::de::Error::custom("expected a whole number (60000, 6e4 or \"6e4\")")
        })?;
        match input {
            Input::Whole(x) => Ok(Count(x)),
            Input::Number(x) => parse_count(&x.to_string()).map_err(serde::de::Error::custom),
            Input::Text(text) => parse_count(&text).map_err(serde::de::Error::custom),
        }
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
        assert!(parse_list("2..4:1e-20").is_err());
    }

    #[test]
    fn counts_accept_exponents() {
        assert_eq!(parse_count("1e6"), Ok(Count(1_000_000)));
        assert_eq!(parse_count("60_000"), Ok(Count(60_000)));
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("-3").is_err());
    }
}
