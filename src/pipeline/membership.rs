//! Measuring a filter of your own, in Rust, with no process in between: implement
//! [`Membership`] (insert and contains on u64 keys) for your type and call [`measure`].
//!
//! ```
//! use bloomlab::{Membership, measure};
//!
//! /// A filter that answers "present" for everything: rate 1, never a false negative.
//! struct Everything;
//! impl Membership for Everything {
//!     fn insert(&mut self, _key: u64) {}
//!     fn contains(&self, _key: u64) -> bool { true }
//! }
//!
//! let measured = measure(&mut Everything, 1000, 10_000, 1).unwrap();
//! assert_eq!(measured.false_negatives, 0);
//! assert_eq!(measured.fpr_measured, 1.0);
//! ```

use crate::error::{Error, Result};
use crate::keys::KeySource;
use crate::pipeline::measurement::CONFIDENCE;
use crate::stats::{binomial_two_sided_p, clopper_pearson, z_score};
use crate::structures::Membership;

/// What a filter measured: n keys inserted, then every inserted key and `queries` absent keys
/// asked, all from bloomlab's key source for `seed` (keys `0..n` inserted, `n..n+queries`
/// absent, as in every experiment).
#[derive(Clone, Debug, PartialEq)]
pub struct FilterMeasurement {
    pub n: u64,
    pub queries: u64,
    pub seed: u64,
    /// Inserted keys the filter answered absent: 0 for a filter that keeps its contract.
    pub false_negatives: u64,
    /// Absent keys the filter answered present.
    pub false_positives: u64,
    /// `false_positives / queries`.
    pub fpr_measured: f64,
    /// The 95% Clopper–Pearson (exact) interval of the rate, for this filter.
    pub ci_low: f64,
    pub ci_high: f64,
    /// The rate it was compared with ([`FilterMeasurement::against`]), if any.
    pub predicted: Option<f64>,
    /// `(p̂ - p) / sqrt(p(1-p)/q)` against `predicted`: binomial, so conditional on the filter.
    pub z: Option<f64>,
    /// The exact two-sided binomial p-value of the count against `predicted`.
    pub p_value: Option<f64>,
}

impl FilterMeasurement {
    /// The same measurement compared with a predicted rate p in `[0, 1]` (the rate the
    /// filter's design promises, or [`crate::theory::fpr_exact`] for its m and k).
    pub fn against(mut self, predicted: f64) -> Result<Self> {
        if !(0.0..=1.0).contains(&predicted) {
            return Err(Error::invalid(
                "predicted",
                predicted,
                "a false-positive rate",
                "0..=1",
            ));
        }
        self.predicted = Some(predicted);
        self.z = Some(z_score(self.fpr_measured, predicted, self.queries));
        self.p_value = Some(binomial_two_sided_p(
            self.false_positives,
            self.queries,
            predicted,
        ));
        Ok(self)
    }
}

/// Inserts n keys into `filter`, asks it every one of them (counting false negatives) and
/// `queries` absent keys (counting false positives), a batch at a time through
/// [`Membership::insert_many`] and [`Membership::contains_many`].
pub fn measure<F: Membership + ?Sized>(
    filter: &mut F,
    n: u64,
    queries: u64,
    seed: u64,
) -> Result<FilterMeasurement> {
    if queries == 0 {
        return Err(Error::invalid(
            "queries",
            queries,
            "at least one absent key",
            "1..",
        ));
    }
    let keys = KeySource::new(seed);
    let (false_negatives, false_positives) =
        crate::pipeline::insert_and_check(filter, n, queries, |c| keys.key(c))?;
    let (ci_low, ci_high) = clopper_pearson(false_positives, queries, CONFIDENCE);
    Ok(FilterMeasurement {
        n,
        queries,
        seed,
        false_negatives,
        false_positives,
        fpr_measured: false_positives as f64 / queries as f64,
        ci_low,
        ci_high,
        predicted: None,
        z: None,
        p_value: None,
    })
}
