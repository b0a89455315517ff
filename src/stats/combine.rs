//! Combining seeds: Stouffer's z over per-seed z-scores, and a goodness-of-fit test of
//! per-seed counts against the distribution they must follow across filters.

use statrs::distribution::{ChiSquared, ContinuousCDF};

use super::normal_two_sided_p;

/// Stouffer's combined z of S independent z-scores and its two-sided p:
/// `Z = Σ z_i / √S`, `P = 2·(1 - Φ(|Z|))`. Signs count: a shift of every seed in one
/// direction adds up, where a sum of squares would spread it over S degrees of freedom.
/// `(0, 1)` for no scores.
pub fn stouffer(zs: &[f64]) -> (f64, f64) {
    if zs.is_empty() {
        return (0.0, 1.0);
    }
    let z = zs.iter().sum::<f64>() / (zs.len() as f64).sqrt();
    (z, normal_two_sided_p(z))
}

/// Rate variances below this fraction of the squared mean rate are treated as a normal rate
/// (excess kurtosis 0): beneath it the fourth central moment from raw moments has lost its
/// digits to cancellation, and the fill is normal to O(1/m) there anyway.
const NORMAL_RATE_BELOW: f64 = 1e-6;

/// The distribution of a count `C` of false positives in q queries over filters whose rate r
/// varies: given r, `C ~ Binomial(q, r)`, so C is a mixture of binomials. Described by its
/// mean, variance and excess kurtosis.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CountDistribution {
    pub mean: f64,
    pub variance: f64,
    /// `E[(C-μ)⁴]/σ⁴ - 3`.
    pub excess_kurtosis: f64,
}

impl CountDistribution {
    /// From the raw moments `[E r, E r², E r³, E r⁴]` of the rate
    /// ([`crate::theory::fpr_moments`]). With `C = B + q r`, `E[B | r] = 0`:
    /// `μ = q E r`, `σ² = q E[r(1-r)] + q² Var r`, and with `u = r - E r`
    /// `E(C-μ)⁴ = E[B⁴] + 4q E[B³ u] + 6q² E[B² u²] + q⁴ E[u⁴]`, where given r
    /// `E[B²] = qs`, `E[B³] = qs(1-2r)`, `E[B⁴] = 3q²s² + qs(1-6s)`, `s = r(1-r)`.
    pub fn from_rate_moments(queries: u64, moments: [f64; 4]) -> Self {
        let q = queries as f64;
        let [e1, e2, e3, e4] = moments;
        let var_rate = (e2 - e1 * e1).max(0.0);
        let spread = e1 - e2; // E[r(1-r)]
        let spread_sq = e2 - 2.0 * e3 + e4; // E[(r(1-r))²]
        let b4 = 3.0 * q * q * spread_sq + q * (spread - 6.0 * spread_sq);
        // E[r(1-r)(1-2r)·u] and E[r(1-r)·u²], u = r - e1.
        let b3u = (e2 - 3.0 * e3 + 2.0 * e4) - e1 * (e1 - 3.0 * e2 + 2.0 * e3);
        let b2u2 = (e3 - e4) - 2.0 * e1 * (e2 - e3) + e1 * e1 * (e1 - e2);
        let u4 = if var_rate < NORMAL_RATE_BELOW * e1 * e1 {
            3.0 * var_rate * var_rate
        } else {
            e4 - 4.0 * e1 * e3 + 6.0 * e1 * e1 * e2 - 3.0 * e1.powi(4)
        };
        let variance = q * spread + q * q * var_rate;
        let fourth = b4 + 4.0 * q * q * b3u + 6.0 * q.powi(3) * b2u2 + q.powi(4) * u4;
        CountDistribution {
            mean: q * e1,
            variance,
            excess_kurtosis: fourth / (variance * variance) - 3.0,
        }
    }

    /// A count conditional on a known rate r: `Binomial(q, r)`.
    pub fn binomial(queries: u64, rate: f64) -> Self {
        Self::from_rate_moments(queries, [1, 2, 3, 4].map(|j| rate.powi(j)))
    }

    /// `(c - μ) / σ`.
    pub fn z(&self, count: u64) -> f64 {
        (count as f64 - self.mean) / self.variance.sqrt()
    }
}

/// A goodness-of-fit test of S counts against one [`CountDistribution`].
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GoodnessOfFit {
    /// `T = Σ (c_i - μ)² / σ²`.
    pub statistic: f64,
    /// Scale a of the matched `a·χ²_ν`.
    pub scale: f64,
    /// Degrees of freedom ν of the matched `a·χ²_ν` (S when the counts are normal).
    pub df: f64,
    /// `P(T ≥ t)`: small when the counts scatter more than (or away from) the model.
    pub p_over: f64,
    /// `P(T ≤ t)`: small when they scatter less than it, too regular.
    pub p_under: f64,
}

/// Goodness of fit of per-seed `counts` (independent filters, S of them) to `model`: the
/// statistic `T = Σ (c_i - μ)²/σ²` against `a·χ²_ν` matched to T's mean and variance,
/// `E T = S` and `Var T = S(2 + γ₂)` with γ₂ the count's excess kurtosis, so that
/// `a = 1 + γ₂/2` and `ν = S/a` (Satterthwaite). With normal counts (γ₂ = 0) this is the
/// plain χ² with S degrees of freedom; at few expected false positives the match keeps the
/// heavier tail of the counts from raising the false-alarm rate.
pub fn count_goodness_of_fit(counts: &[u64], model: &CountDistribution) -> GoodnessOfFit {
    let seeds = counts.len() as f64;
    let statistic: f64 = counts.iter().map(|&c| model.z(c).powi(2)).sum();
    let scale = 1.0 + model.excess_kurtosis.max(-1.9) / 2.0;
    let df = seeds / scale;
    let (p_over, p_under) = match ChiSquared::new(df) {
        Ok(chi) => (chi.sf(statistic / scale), chi.cdf(statistic / scale)),
        Err(_) => (f64::NAN, f64::NAN),
    };
    GoodnessOfFit {
        statistic,
        scale,
        df,
        p_over,
        p_under,
    }
}
