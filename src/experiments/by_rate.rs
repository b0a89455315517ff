//! `--fpr` for the experiments built on shapes (overfill, seed-check): the filter is designed
//! by a target rate ε instead of m and k, as most libraries are. bloomlab's structures get the
//! classic sizing for it, m = ⌈n·(-ln ε)/(ln 2)²⌉ bits and k = round((m/n)·ln 2) (SPEC's
//! sizing discipline, [`crate::theory::bits_per_key_for_fpr`]); a program behind `exec:` is
//! sent `(n, fpr)` and sizes itself, so that a library whose constructor takes no m and k
//! (rbloom, pybloom-live, pyprobables, Guava) runs too.

use crate::error::{Error, Result};
use crate::params::ShapeParams;
use crate::structures::exec::sizing::Rate;
use crate::theory::{bits_per_key_for_fpr, whole_optimal_k};

/// The rate of `--fpr`, refused outside (0, 1) or beside a shape flag.
pub fn rate(fpr: Option<f64>, shape: &ShapeParams, design_n: Option<u64>) -> Result<Option<Rate>> {
    let Some(fpr) = fpr else {
        return Ok(None);
    };
    if !(fpr > 0.0 && fpr < 1.0) {
        return Err(Error::invalid(
            "fpr",
            fpr,
            "the target false-positive rate the filter is designed for",
            "(0, 1)",
        ));
    }
    if shape.bits_per_key.is_some() || shape.m.is_some() || shape.k.is_some() {
        return Err(Error::invalid(
            "fpr",
            fpr,
            "a design by target rate chooses m and k itself",
            "--fpr, or --bits-per-key/--m/--k, not both",
        ));
    }
    Ok(Some(Rate { fpr, design_n }))
}

/// m and k for n keys at ε by the classic sizing.
pub fn shape(n: u64, fpr: f64) -> (u64, u32) {
    let m = ((n as f64 * bits_per_key_for_fpr(fpr)).ceil() as u64).max(1);
    (m, whole_optimal_k(n, m))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 10^6 keys at 1%: 9,585,059 bits and k = 7 (the textbook 9.59 bits per key).
    #[test]
    fn one_percent_is_the_textbook_shape() {
        assert_eq!(shape(1_000_000, 0.01), (9_585_059, 7));
    }
}
