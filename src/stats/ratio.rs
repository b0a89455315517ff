//! Ratios of measured rates with their intervals.
//!
//! Which one applies:
//! - Two rates from independent filters (different hash seeds or key sets), each estimating
//!   its setup's rate averaged over filters (e.g. "k = 1 is 11 times the minimum" as a
//!   statement about the design, "1.5 times the keys costs 6 times"): [`ratio_interval`] with
//!   each rate's between-filter variance.
//! - The same two rates as statements about these two filters only: [`ratio_interval`] with
//!   both variances zero (query noise only).
//! - Rates that share keys or hash functions (rows of one sweep-k, nested overfill loads)
//!   correlate positively; the independent form then overstates the variance of the log
//!   ratio (`Var(ln a - ln b) = V_a + V_b - 2 Cov`), so its interval is conservative.
//! - A measured rate over a constant (an audit's configured rate, a prediction):
//!   [`ratio_to_constant`], exact, about this filter; [`averaged_ratio_to_constant`] about
//!   the design, with the between-filter variance (overfill's "1.5 times the keys costs 6
//!   times the design rate").
//! - Mean rates of two settings over replicates that pair them (sweep-k's replicate sweeps):
//!   [`paired_ratio_interval`].

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::{clopper_pearson, normal_quantile};

/// A ratio of rates and its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Ratio {
    /// The measured ratio (0 or ∞ when a count is zero, NaN when both are).
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

/// Interval for the ratio `a/b` of the rates of two independent samples, `count_a` false
/// positives in `queries_a` and `count_b` in `queries_b`, by the delta method on the log
/// ratio (Katz et al. 1978), with between-filter variances `V_a`, `V_b` of the two rates:
/// `ln(p̂_a/p̂_b) ± z·sqrt(Σ_i [(1-p̂_i)/c_i + V_i/p̂_i²])`, `z = Φ^{-1}((1+confidence)/2)`.
/// `(1-p̂)/c = p̂(1-p̂)/q / p̂²` is the binomial variance of `ln p̂`, `V/p̂²` that of the
/// filter's rate. A zero count is taken as 1/2 (Haldane) in the interval only.
pub fn ratio_interval(
    count_a: u64,
    queries_a: u64,
    count_b: u64,
    queries_b: u64,
    var_between_a: f64,
    var_between_b: f64,
    confidence: f64,
) -> Ratio {
    let value = (count_a as f64 / queries_a as f64) / (count_b as f64 / queries_b as f64);
    let (log_a, var_a) = log_rate(count_a, queries_a, var_between_a);
    let (log_b, var_b) = log_rate(count_b, queries_b, var_between_b);
    let half = normal_quantile(0.5 + confidence / 2.0) * (var_a + var_b).sqrt();
    let centre = log_a - log_b;
    Ratio {
        value,
        low: (centre - half).exp(),
        high: (centre + half).exp(),
    }
}

/// `(ln p̃, Var(ln p̂))` of a rate from `count` in `queries` as an estimate of its design's
/// rate, with `p̃ = max(c, 1/2)/q` and `Var = (1-p̃)/max(c, 1/2) + V/p̃²`, V the rate's
/// between-filter variance (the delta method; a zero count taken as 1/2, Haldane).
pub fn log_rate(count: u64, queries: u64, var_between: f64) -> (f64, f64) {
    let c = (count as f64).max(0.5);
    let p = c / queries as f64;
    (p.ln(), (1.0 - p) / c + var_between.max(0.0) / (p * p))
}

/// Interval for a measured rate over a constant ε (not itself measured):
/// `[p_L/ε, p_U/ε]` from the Clopper–Pearson interval of `count` in `queries`. Exact, and
/// conditional on the filter measured: a statement about this filter's rate.
pub fn ratio_to_constant(count: u64, queries: u64, constant: f64, confidence: f64) -> Ratio {
    let (low, high) = clopper_pearson(count, queries, confidence);
    Ratio {
        value: count as f64 / queries as f64 / constant,
        low: low / constant,
        high: high / constant,
    }
}

/// Interval for a measured rate over a constant ε as a statement about the design (the rate
/// averaged over filters, not this filter's): `ln(p̃/ε) ± z·sqrt((1-p̃)/c̃ + V/p̃²)`,
/// `c̃ = max(c, 1/2)`, `p̃ = c̃/q`, V the rate's between-filter variance, by the delta method
/// on the log rate as in [`ratio_interval`]; the lower end is 0 at a zero count. With V = 0
/// it is a normal-theory version of [`ratio_to_constant`].
pub fn averaged_ratio_to_constant(
    count: u64,
    queries: u64,
    var_between: f64,
    constant: f64,
    confidence: f64,
) -> Ratio {
    let (log_p, var) = log_rate(count, queries, var_between);
    let half = normal_quantile(0.5 + confidence / 2.0) * var.sqrt();
    let low = if count == 0 {
        0.0
    } else {
        (log_p - half).exp() / constant
    };
    Ratio {
        value: count as f64 / queries as f64 / constant,
        low,
        high: (log_p + half).exp() / constant,
    }
}

/// Interval for the ratio of mean rates `ā/b̄` of two settings measured in the same T
/// replicates (`a[t]`, `b[t]` share replicate t's keys and hashes; replicates share nothing),
/// by the ratio estimator: `R = ā/b̄`, `d_t = a_t - R·b_t`, `se(R) = s_d/(√T·b̄)` with
/// `s_d² = Σ d_t²/(T-1)`, and `ln R ± t_{T-1}·se(R)/R`, `t_{T-1}` the Student quantile at
/// `(1+confidence)/2`. Pairing removes what the settings share (sweep-k's rows share hash
/// prefixes), and the replicates' scatter carries the between-filter variance. NaN bounds
/// with fewer than two replicates or a zero mean.
pub fn paired_ratio_interval(a: &[f64], b: &[f64], confidence: f64) -> Ratio {
    let count = a.len().min(b.len());
    let t = count as f64;
    let (mean_a, mean_b) = (
        a[..count].iter().sum::<f64>() / t,
        b[..count].iter().sum::<f64>() / t,
    );
    let value = mean_a / mean_b;
    let nan = Ratio {
        value,
        low: f64::NAN,
        high: f64::NAN,
    };
    let Ok(student) = StudentsT::new(0.0, 1.0, t - 1.0) else {
        return nan;
    };
    if count < 2 || !(mean_a > 0.0 && mean_b > 0.0) {
        return nan;
    }
    let residuals = a[..count]
        .iter()
        .zip(&b[..count])
        .map(|(x, y)| x - value * y);
    let s_d = (residuals.map(|d| d * d).sum::<f64>() / (t - 1.0)).sqrt();
    let half = student.inverse_cdf(0.5 + confidence / 2.0) * s_d / (t.sqrt() * mean_b) / value;
    Ratio {
        value,
        low: value * (-half).exp(),
        high: value * half.exp(),
    }
}
