//! Statistics of a measured rate: intervals, z-scores, exact tests, ratios, combined seeds,
//! the set of possible minima and the power of a run.
//!
//! Two kinds of z appear and must not be confused. Conditional on a filter (its bits are
//! known, so is its rate r), the count of false positives among q absent queries is
//! `Binomial(q, r)`: [`z_score`] against the rate from the filter's own bits uses
//! `r(1-r)/q`. A prediction that averages over filters (classic, `E[fill]^k`, exact) is the
//! mean `E r` of a rate that varies between filters; [`z_averaged`] adds that variance.

/// The "filter matches its bits" bound: a row fails the bits check when the exact two-sided
/// binomial p-value of its count against `fpr_from_fill` ([`Measurement::bits_p`]) is below
/// it. It is the two-sided normal tail at [`BITS_CHECK_Z`], `2(1 - Φ(4)) = 6.334e-5`, the
/// bound the check had as a z; exact, its false-alarm rate is at most this at every rate.
pub const BITS_CHECK_ALPHA: f64 = 6.334e-5;

/// The normal deviate whose two-sided tail is [`BITS_CHECK_ALPHA`].
pub const BITS_CHECK_Z: f64 = 4.0;

mod binomial;
mod check;
mod combine;
mod guard;
mod minimum;
mod power;
mod ratio;

pub use binomial::{
    binomial_lower_tail, binomial_pmf, binomial_two_sided_p, binomial_upper_tail, clopper_pearson,
};
pub use check::Check;
pub use combine::{CountDistribution, GoodnessOfFit, count_goodness_of_fit, stouffer};
pub use guard::{GUARD_ALPHA, above_p_value, below_p_value};
pub use minimum::{min_set, min_set_at, replicates_to_order};
pub use power::{
    DETECTION_LEVEL, DETECTION_POWER, detectable_excess, queries_to_detect, sample_factor_to_decide,
};
pub use ratio::{
    Ratio, averaged_ratio_to_constant, log_rate, paired_ratio_interval, ratio_interval,
    ratio_to_constant,
};

use statrs::distribution::{ChiSquared, ContinuousCDF, Normal};

/// The two-sided 95% normal quantile.
pub const Z95: f64 = 1.959_963_984_540_054;

/// Wilson score interval for `successes` out of `trials` at normal quantile z:
/// `(p̂ + z²/2N ± z·sqrt(p̂(1-p̂)/N + z²/4N²)) / (1 + z²/N)`.
///
/// It under-covers (about 91 to 93% for a nominal 95%) when fewer than about 1.5 successes
/// are expected: [`clopper_pearson`] is the interval to print.
pub fn wilson_interval(successes: u64, trials: u64, z: f64) -> (f64, f64) {
    let n = trials as f64;
    let p = successes as f64 / n;
    let z2 = z * z;
    let centre = p + z2 / (2.0 * n);
    let half = z * (p * (1.0 - p) / n + z2 / (4.0 * n * n)).sqrt();
    let denom = 1.0 + z2 / n;
    // At 0 and N successes the bounds are exactly 0 and 1; rounding would say otherwise.
    let low = if successes == 0 {
        0.0
    } else {
        ((centre - half) / denom).max(0.0)
    };
    let high = if successes == trials {
        1.0
    } else {
        ((centre + half) / denom).min(1.0)
    };
    (low, high)
}

/// The mean and the sample variance (divisor T - 1; NaN below two values) of `xs`.
pub fn mean_and_variance(xs: &[f64]) -> (f64, f64) {
    let t = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / t;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (t - 1.0);
    (mean, var)
}

/// Binomial standard error of a rate over `trials`, with the rate clamped to
/// `[0.5/N, 1 - 0.5/N]` so that a predicted 0 or 1 still gives a finite z.
pub fn binomial_se(rate: f64, trials: u64) -> f64 {
    let n = trials as f64;
    let p = rate.clamp(0.5 / n, 1.0 - 0.5 / n);
    (p * (1.0 - p) / n).sqrt()
}

/// z-score of a measured rate against a predicted one: `(p̂ - p) / sqrt(p(1-p)/N)`.
///
/// Conditional on the filter: right against the rate from the filter's own bits
/// (`z_from_fill`), too narrow against a prediction averaged over filters (see
/// [`z_averaged`]).
pub fn z_score(measured: f64, predicted: f64, trials: u64) -> f64 {
    (measured - predicted) / binomial_se(predicted, trials)
}

/// Variance of a measured rate `p̂ = C/q` about a prediction `p = E r` averaged over filters,
/// when the filter's rate r varies between filters with `Var(r) = var_between`. Given the
/// filter the count is `Binomial(q, r)`, so
/// `Var(p̂) = E[r(1-r)]/q + Var(r) = (E r - E r²)/q + Var(r) = p(1-p)/q + Var(r)(1 - 1/q)`,
/// with p clamped to `[0.5/q, 1 - 0.5/q]` as in [`binomial_se`].
pub fn averaged_rate_variance(mean_rate: f64, var_between: f64, queries: u64) -> f64 {
    let q = queries as f64;
    binomial_se(mean_rate, queries).powi(2) + var_between.max(0.0) * (1.0 - 1.0 / q)
}

/// z of `count` false positives in `queries` against a prediction that averages over
/// filters: `(p̂ - p) / sqrt(p(1-p)/q + Var(r)(1 - 1/q))` ([`averaged_rate_variance`]), with
/// `var_between` the variance of the rate between filters
/// ([`crate::theory::fpr_between_filter_variance`] for the classic filter).
pub fn z_averaged(count: u64, queries: u64, mean_rate: f64, var_between: f64) -> f64 {
    let measured = count as f64 / queries as f64;
    (measured - mean_rate) / averaged_rate_variance(mean_rate, var_between, queries).sqrt()
}

/// Two-sided normal p-value of a z-score: `P(|Z| ≥ |z|) = erfc(|z| / √2)`, which keeps its
/// precision far in the tail, where `2(1 - Φ(|z|))` rounds to 0. NaN stays NaN.
pub fn normal_two_sided_p(z: f64) -> f64 {
    statrs::function::erf::erfc(z.abs() / std::f64::consts::SQRT_2)
}

/// The standard normal quantile `Φ^{-1}(probability)`.
pub fn normal_quantile(probability: f64) -> f64 {
    Normal::standard().inverse_cdf(probability)
}

/// z of the difference of two estimates with independent variances.
pub fn two_sample_z(a: f64, var_a: f64, b: f64, var_b: f64) -> f64 {
    let var = var_a + var_b;
    if var <= 0.0 {
        if a == b {
            0.0
        } else {
            f64::INFINITY.copysign(a - b)
        }
    } else {
        (a - b) / var.sqrt()
    }
}

/// Upper-tail probability `P(χ²_df ≥ x)`.
pub fn chi_square_sf(x: f64, df: f64) -> f64 {
    match ChiSquared::new(df) {
        Ok(dist) => 1.0 - dist.cdf(x),
        Err(_) => f64::NAN,
    }
}

/// Two-sided normal bound for a family of `comparisons` tests at family-wise error `alpha`
/// (Bonferroni): `Φ^{-1}(1 - alpha / (2·comparisons))`.
pub fn bonferroni_z(alpha: f64, comparisons: usize) -> f64 {
    normal_quantile(1.0 - alpha / (2.0 * comparisons.max(1) as f64))
}

/// Cochran's Q: heterogeneity of estimates `x_i` with variances `v_i` around their
/// inverse-variance weighted mean; returns `(Q, mean)`. Under homogeneity `Q ~ χ²_{S-1}`.
pub fn cochran_q(values: &[(f64, f64)]) -> (f64, f64) {
    let weight_sum: f64 = values.iter().map(|(_, v)| 1.0 / v).sum();
    let mean = values.iter().map(|(x, v)| x / v).sum::<f64>() / weight_sum;
    let q = values.iter().map(|(x, v)| (x - mean).powi(2) / v).sum();
    (q, mean)
}
