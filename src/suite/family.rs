//! One family of comparisons under one family-wise false-alarm bound.
//!
//! Every comparison of `check --reseed` (the rate and the fill of each row against their
//! committed values, the bits check of each row, each verdict of an experiment) is one member
//! of a single family, counted once, and the family is judged by Holm's step-down procedure
//! at family-wise level α: order the N p-values `p_(1) ≤ … ≤ p_(N)`, find the first rank `i`
//! with `p_(i) > α / (N - i + 1)`, and reject the members ranked before it. Whatever the
//! dependence between the comparisons, a build for which every hypothesis holds has some
//! member rejected with probability at most α (Holm 1979); the family fails exactly when
//! Bonferroni's `min p ≤ α / N` does, and Holm only adds members to the list of failures.

use std::collections::HashSet;

use crate::pipeline::measurement::Measurement;

/// Family-wise false-alarm rate of `check --reseed` unless asked otherwise.
pub const DEFAULT_FAMILY_ALPHA: f64 = 0.001;

/// One comparison of the family: a p-value under the hypothesis that nothing changed.
#[derive(Clone, Debug, PartialEq)]
pub struct Comparison {
    pub experiment: String,
    /// The row compared (from 1), none for a verdict of the whole experiment.
    pub row: Option<usize>,
    /// The column compared, `bits_check`, or the verdict's line.
    pub quantity: String,
    pub p_value: f64,
    /// The statistic behind the p-value, for the reader: `z = 1.23`.
    pub detail: String,
}

/// The comparisons of one check and their family-wise bound.
#[derive(Clone, Debug)]
pub struct Comparisons {
    pub alpha: f64,
    members: Vec<Comparison>,
    keys: HashSet<String>,
}

impl Comparisons {
    pub fn new(alpha: f64) -> Self {
        Comparisons {
            alpha,
            members: Vec::new(),
            keys: HashSet::new(),
        }
    }

    /// Adds a comparison unless the same one (the same `key`) is in already: one setup
    /// measured by two experiments with the same seeds gives the same values, and comparing
    /// them twice would count one comparison as two. Returns whether it was added.
    pub fn add(&mut self, key: String, comparison: Comparison) -> bool {
        let added = self.keys.insert(key);
        if added {
            self.members.push(comparison);
        }
        added
    }

    pub fn members(&self) -> &[Comparison] {
        &self.members
    }

    pub fn len(&self) -> usize {
        self.members.len()
    }

    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Whether Holm rejects each member, in the order they were added.
    pub fn rejected(&self) -> Vec<bool> {
        let p: Vec<f64> = self.members.iter().map(|c| c.p_value).collect();
        holm_rejections(&p, self.alpha)
    }

    /// The per-comparison bound of the first Holm step (Bonferroni's): `α / N`.
    pub fn first_bound(&self) -> f64 {
        self.alpha / self.members.len().max(1) as f64
    }
}

/// Holm's step-down rejections at family-wise level `alpha` (see the module). A p-value that
/// is NaN (a comparison that could not be made) counts as 0: it is rejected.
pub fn holm_rejections(p_values: &[f64], alpha: f64) -> Vec<bool> {
    let p = |i: usize| {
        if p_values[i].is_nan() {
            0.0
        } else {
            p_values[i]
        }
    };
    let count = p_values.len();
    let mut order: Vec<usize> = (0..count).collect();
    order.sort_by(|&a, &b| p(a).total_cmp(&p(b)));
    let mut rejected = vec![false; count];
    for (rank, &i) in order.iter().enumerate() {
        if p(i) > alpha / (count - rank) as f64 {
            break;
        }
        rejected[i] = true;
    }
    rejected
}

/// p-value of a row's bits check: whether its count of false positives is binomial over its
/// queries at the rate its own bits predict, `fpr_from_fill`.
///
/// The exact two-sided binomial tail `binomial_two_sided_p(false_positives, queries,
/// fpr_from_fill)` ([`Measurement::bits_p`]), recomputed so that a row read back from a
/// table is judged the same way. A structure without a rate from its bits gives NaN, counted
/// as rejected by [`holm_rejections`] only if it was ever compared.
pub fn bits_check_p_value(row: &Measurement) -> f64 {
    if row.fpr_from_fill.is_nan() {
        return f64::NAN;
    }
    crate::stats::binomial_two_sided_p(row.false_positives, row.queries, row.fpr_from_fill)
}
