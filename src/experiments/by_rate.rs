//! `--fpr` for the experiments built on shapes (overfill, seed-check): the filter is designed
//! by a target rate ε instead of m and k, as most libraries are. bloomlab's structures get the
//! classic sizing for it, m = ⌈n·(-ln ε)/(ln 2)²⌉ bits and k = round((m/n)·ln 2) (SPEC's
//! sizing discipline, [`crate::theory::bits_per_key_for_fpr`]); a program behind `exec:` is
//! sent `(n, fpr)` and sizes itself, so that a library whose constructor takes no m and k
//! (rbloom, pybloom-live, pyprobables, Guava) runs too.

use crate::error::{Error, Result};
use crate::params::ShapeParams;
use crate::pipeline::measurement::Setup;
use crate::structures::FilterKind;
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

/// `setup`, a program in it sized by `rate` (by shape when None).
pub fn sized(mut setup: Setup, rate: Option<Rate>) -> Setup {
    setup.keying.rate = rate;
    setup
}

/// Keys, bits and k of the shape a program is asked to take by [`sizes_itself`].
const PROBE: (u64, u64, u32) = (1_000, 10_000, 7);

/// What a program behind `exec:` that sizes itself said: one that refuses a header's m and
/// k (as rbloom, pybloom-live, pyprobables and Guava do) and takes `(n, fpr)`, found before
/// work by two sessions of [`PROBE`]'s size. None for bloomlab's structures and for a
/// program that takes m and k (or refuses both: the run then reports its refusal).
pub fn sizes_itself(filter: FilterKind) -> Result<Option<String>> {
    if !filter.is_program() {
        return Ok(None);
    }
    let (n, m, k) = PROBE;
    let refusal = match filter.build(n, m, k, Default::default(), 0) {
        Ok(mut built) => return built.finish().map(|()| None),
        Err(Error::Exec {
            refused: true,
            message,
            ..
        }) => message,
        Err(other) => return Err(other),
    };
    match filter.for_rate(n, 0.01, 0) {
        Ok(mut built) => {
            built.finish()?;
            let reason = refusal
                .split_once("refused: ")
                .map_or(&*refusal, |(_, r)| r);
            Ok(Some(reason.to_string()))
        }
        Err(Error::Exec { refused: true, .. }) => Ok(None),
        Err(other) => Err(other),
    }
}

/// The refusal, before work, of an experiment whose axis `axis` (a flag) a program that
/// sizes itself cannot take: naming the axis, the program and its own words.
pub fn axis_refused(
    axis: &'static str,
    value: impl ToString,
    experiment: &str,
    filter: FilterKind,
    said: &str,
) -> Error {
    Error::invalid(
        axis,
        value,
        format!(
            "{experiment} sets k on its axis --{axis}, and {filter} sizes itself from (n, fpr) \
             with a k of its own: it refused m and k (\"{said}\")"
        ),
        format!(
            "a --filter that takes m and k{}",
            match axis {
                "k" if experiment == "sweep-size" =>
                    ", or no --k: sweep-size then sends each bits per key as the rate of the classic optimum, e^(-(m/n) ln² 2)",
                _ => " (bloomlab's structures, or a program that accepts the header's m and k)",
            }
        ),
    )
}

/// The rate of the classic optimum at `bits_per_key`: ε = e^{-(m/n)(ln 2)²}, the inverse of
/// [`bits_per_key_for_fpr`]; what sweep-size sends a program that sizes itself.
pub fn fpr_for_bits_per_key(bits_per_key: f64) -> f64 {
    (-bits_per_key * std::f64::consts::LN_2.powi(2)).exp()
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
        assert!((fpr_for_bits_per_key(bits_per_key_for_fpr(0.01)) - 0.01).abs() < 1e-12);
    }
}
