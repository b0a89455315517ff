//! `--fpr` for the experiments built on shapes (overfill, seed-check): the filter is designed
//! by a target rate ε instead of m and k, as most libraries are: a [`crate::structures::Sizing::Rate`], which
//! sizes each structure by its design (the classic one's is SPEC's sizing discipline,
//! [`crate::theory::classic_design`]) and a peer crate or a program behind `exec:` by its own
//! constructor, so that a library whose constructor takes no m and k (rbloom, pybloom-live,
//! pyprobables, Guava) runs too.

use crate::error::{Error, Result};
use crate::params::{ShapeParams, require};
use crate::structures::FilterKind;

/// The rate of `--fpr`, refused outside (0, 1) or beside a shape flag.
pub fn rate(fpr: Option<f64>, shape: &ShapeParams) -> Result<Option<f64>> {
    let Some(fpr) = fpr else {
        return Ok(None);
    };
    let reason = "the target false-positive rate the filter is designed for";
    require("fpr", fpr, fpr > 0.0 && fpr < 1.0, reason, "(0, 1)")?;
    let shaped = shape.bits_per_key.is_some() || shape.m.is_some() || shape.k.is_some();
    let reason = "a design by target rate chooses m and k itself";
    let allowed = "--fpr, or --bits-per-key/--m/--k, not both";
    require("fpr", fpr, !shaped, reason, allowed).map(Some)
}

/// The refusal, before work, of an experiment's `--k` (the values `ks`) by a program that
/// sizes itself: naming the program and its own words.
pub fn k_refused<K: ToString>(ks: &[K], experiment: &str, filter: FilterKind, said: &str) -> Error {
    let ks: Vec<String> = ks.iter().map(K::to_string).collect();
    Error::invalid(
        "k",
        ks.join(","),
        format!(
            "{experiment} sets k on its axis --k, and {filter} sizes itself from (n, fpr) \
             with a k of its own: it refused m and k (\"{said}\")"
        ),
        format!(
            "a --filter that takes m and k{}",
            match experiment {
                "sweep-size" =>
                    ", or no --k: sweep-size then sends each bits per key as the rate of the classic optimum, e^(-(m/n) ln² 2)",
                _ => " (bloomlab's structures, or a program that accepts the header's m and k)",
            }
        ),
    )
}
