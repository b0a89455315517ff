//! `strided:STEP`: `c · STEP` (wrapping), keys that share their low bits (aligned addresses,
//! ids allotted in blocks).

use crate::error::{Error, Result};

/// Parses STEP, a whole number at least 1.
pub fn parse(name: &'static str, text: &str) -> Result<u64> {
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
