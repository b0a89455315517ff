//! The power of a one-sided rate test: the smallest excess a run could have detected, and the
//! queries that make an excess detectable.

use super::binomial::solve_rate;
use super::{binomial_upper_tail, normal_quantile};

/// One-sided level of the test "the rate exceeds ε".
pub const DETECTION_LEVEL: f64 = 0.05;
/// Power at which an excess counts as detectable.
pub const DETECTION_POWER: f64 = 0.8;

/// The smallest count `c*` with `P(X ≥ c* | ε) ≤ DETECTION_LEVEL`, `X ~ Binomial(q, ε)`: the
/// exact one-sided test rejects "rate ≤ ε" when the count reaches it.
fn critical_count(queries: u64, eps: f64) -> u64 {
    let (mut lo, mut hi) = (0u64, queries + 1);
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        if binomial_upper_tail(mid, queries, eps) <= DETECTION_LEVEL {
            hi = mid;
        } else {
            lo = mid + 1;
        }
    }
    lo
}

/// The smallest relative excess δ that q queries detect against a promised rate ε with the
/// exact one-sided binomial test at level 5% and power 80%: with `c*` the critical count,
/// `δ = ε₁/ε - 1` where `P(X ≥ c* | ε₁) = 0.8`. ∞ when even a rate of one is not detected
/// (too few queries), NaN for ε outside (0, 1).
pub fn detectable_excess(queries: u64, eps: f64) -> f64 {
    if !(eps > 0.0 && eps < 1.0) {
        return f64::NAN;
    }
    let critical = critical_count(queries, eps);
    if critical > queries {
        return f64::INFINITY;
    }
    let rate = solve_rate(
        |p| binomial_upper_tail(critical, queries, p),
        DETECTION_POWER,
    );
    rate / eps - 1.0
}

/// The queries q at which [`detectable_excess`]`(q, ε) ≤ excess`: from the normal form
/// `q₀ = ((z_{0.95}·√(ε(1-ε)) + z_{0.8}·√(ε₁(1-ε₁))) / (ε₁ - ε))²`, `ε₁ = ε(1 + excess)`,
/// up in steps of 1% until the exact test reaches its power. None when `ε₁` is not in
/// (ε, 1).
pub fn queries_to_detect(excess: f64, eps: f64) -> Option<u64> {
    let raised = eps * (1.0 + excess);
    if !(eps > 0.0 && raised > eps && raised < 1.0) {
        return None;
    }
    let spread = normal_quantile(1.0 - DETECTION_LEVEL) * (eps * (1.0 - eps)).sqrt()
        + normal_quantile(DETECTION_POWER) * (raised * (1.0 - raised)).sqrt();
    let mut queries = (spread / (raised - eps)).powi(2).ceil().max(1.0) as u64;
    for _ in 0..10_000 {
        if detectable_excess(queries, eps) <= excess {
            return Some(queries);
        }
        queries += (queries / 100).max(1);
    }
    None
}

/// The factor F by which a sample (filters and the queries on each, together) must grow for
/// a two-sided interval at `confidence` to end on one side of a boundary that lies
/// `distance` from the estimate, with probability [`DETECTION_POWER`], when its standard
/// error is now `se` (on the interval's scale) and falls as `se/√F`:
/// `F = ((z_{(1+confidence)/2} + z_{power})·se / distance)²`, the estimate taken as the
/// truth. The claims ledger's "sample that would decide it". ∞ at distance 0.
pub fn sample_factor_to_decide(se: f64, distance: f64, confidence: f64) -> f64 {
    let z = normal_quantile(0.5 + confidence / 2.0) + normal_quantile(DETECTION_POWER);
    if distance.abs() == 0.0 {
        return f64::INFINITY;
    }
    (z * se / distance.abs()).powi(2)
}
