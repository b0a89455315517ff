//! `strided:STEP`: `c · STEP` (wrapping), keys that share their low bits (aligned addresses,
//! ids allotted in blocks).

use std::sync::Arc;

use super::{Argument, IntKeys, Registration, Source};
use crate::error::{Error, Result};

pub static SOURCE: Registration = Registration {
    name: "strided",
    argument: Some(Argument {
        name: "STEP",
        example: "strided:8",
    }),
    help: "0, STEP, 2·STEP, ... as u64",
    build: |name, step| Ok(Arc::new(Strided(parse(name, step)?))),
};

/// `c · STEP`, wrapping.
#[derive(Debug)]
struct Strided(u64);

impl Source for Strided {
    fn spec(&self) -> String {
        format!("{}:{}", SOURCE.name, self.0)
    }

    fn ints(&self, _seed: u64) -> Option<IntKeys> {
        let step = self.0;
        Some(IntKeys::new(move |c| key(step, c)))
    }

    /// Distinct below `2^64 / 2^t`, `2^t` the largest power of two dividing the step.
    fn injective_below(&self, limit: u64) -> bool {
        let twos = self.0.trailing_zeros();
        twos == 0 || limit <= u64::MAX >> twos
    }

    /// Past its period `2^64 / 2^t` every key repeats one before it.
    fn duplicates(&self, _name: &'static str, n: u64) -> Result<Option<u64>> {
        let twos = self.0.trailing_zeros();
        let distinct = 1u64.checked_shl(64 - twos).unwrap_or(u64::MAX);
        Ok(Some(n.saturating_sub(distinct)))
    }
}

/// Parses STEP, a whole number at least 1.
fn parse(name: &'static str, text: &str) -> Result<u64> {
    match text.trim().replace('_', "").parse::<u64>() {
        Ok(step) if step >= 1 => Ok(step),
        _ => Err(Error::invalid(
            name,
            format!("strided:{text}"),
            "STEP must be a whole number",
            "strided:STEP with STEP in 1..=2^64-1",
        )),
    }
}

/// The key of counter c, `c · step` (wrapping). Distinct for distinct counters below
/// `2^64 / 2^t`, `2^t` the largest power of two dividing the step.
#[inline]
pub fn key(step: u64, counter: u64) -> u64 {
    counter.wrapping_mul(step)
}
