//! `--fpr` for the experiments built on shapes (overfill, seed-check): the filter is designed
//! by a target rate ε instead of m and k, as most libraries are: a [`crate::structures::Sizing::Rate`], which
//! sizes each structure by its design (the classic one's is SPEC's sizing discipline,
//! [`crate::theory::classic_design`]) and a peer crate or a program behind `exec:` by its own
//! constructor, so that a library whose constructor takes no m and k (rbloom, pybloom-live,
//! pyprobables, Guava) runs too.

use crate::error::{Error, Result};
use crate::params::ShapeParams;
use crate::structures::FilterKind;

/// The rate of `--fpr`, refused outside (0, 1) or beside a shape flag.
pub fn rate(fpr: Option<f64>, shape: &ShapeParams) -> Result<Option<f64>> {
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
    Ok(Some(fpr))
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
