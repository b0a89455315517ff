//! conform's check of the rate against the configuration's own promise: a structure whose
//! absent keys come back "present" far more often than it was configured for breaks the
//! contract as surely as one that loses keys (a program answering "present" to everything has
//! no false negatives and is deterministic).
//!
//! The promise is ε for a structure sized by rate, and for one sized by shape its own exact
//! rate at n keys, or the classic `(1 - e^{-kn/m})^k` for a program (whose structure bloomlab
//! cannot see). The check is the exact one-sided binomial test of "rate ≤
//! [`PROMISE_FACTOR`]·promise" at level [`PROMISE_ALPHA`]: a structure whose true rate is at
//! most twice its promise fails it with probability at most 10^-3 (`crate::stats` checks that
//! level by simulation).

use crate::report::percent;
use crate::stats::above_p_value;
use crate::structures::{Filter, Sizing};
use crate::theory::fpr_classic;

/// The rate checked is `PROMISE_FACTOR` times the promise.
pub const PROMISE_FACTOR: f64 = 2.0;
/// The level of the check: its false-alarm rate for a structure within the factor.
pub const PROMISE_ALPHA: f64 = 1e-3;

/// The rate the configuration promises for n keys in `filter`.
pub fn promised(filter: &dyn Filter, sizing: Sizing, n: u64) -> f64 {
    match sizing {
        Sizing::Rate(rate) => rate.fpr,
        Sizing::Shape { m, k } => {
            let exact = filter.fpr_exact(n);
            match exact.is_finite() {
                true => exact,
                false => fpr_classic(n, m, k),
            }
        }
    }
}

/// The violation when `false_positives` of `queries` absent keys are far above `promise`.
pub fn far_above(false_positives: u64, queries: u64, promise: f64) -> Option<String> {
    let bound = PROMISE_FACTOR * promise;
    let p_value = above_p_value(false_positives, queries, bound);
    (p_value < PROMISE_ALPHA).then(|| {
        format!(
            "false-positive rate far above the promise: {false_positives} of {queries} absent \
             keys answered present ({}), configured for {}; the exact one-sided binomial test \
             of a rate of at most {PROMISE_FACTOR} x {} = {} gives p = {p_value:.3e} < \
             {PROMISE_ALPHA} (a structure within {PROMISE_FACTOR}x of its promise fails this \
             with probability at most {PROMISE_ALPHA})",
            percent(false_positives as f64 / queries as f64),
            percent(promise),
            percent(promise),
            percent(bound.min(1.0))
        )
    })
}
