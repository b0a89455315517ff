//! Where the minimum of a noisy curve may be: the set of k that may minimise the rate, from
//! replicate filters, and the replicates it takes to order two of them.

use statrs::distribution::{ContinuousCDF, StudentsT};

use super::normal_quantile;

/// [`min_set_at`] at 95%.
pub fn min_set(replicates: &[Vec<f64>]) -> Vec<bool> {
    min_set_at(replicates, 0.95)
}

/// The set of settings that may have the smallest mean rate, at `confidence`.
///
/// `replicates[i][t]` is the rate of setting i (a k) in replicate t; the settings of one
/// replicate may share keys and hashes, replicates share nothing. Setting i is left out when,
/// for some rival j, a one-sided paired t-test of `d_t = r_{i,t} - r_{j,t}` finds
/// `mean(d) > 0`: `t = d̄ / (s_d/√T)` against Student's t with T - 1 degrees of freedom, at
/// level `α/(K-1)`, `α = 1 - confidence` (multiple comparisons with the best, Bonferroni
/// over the K-1 rivals of the true minimum). The true minimum is left out only if one of its
/// K-1 comparisons, each true-null, rejects: probability at most α, whatever the
/// correlations. Replicates are paired by index over the shortest row; with fewer than two
/// every setting stays in.
pub fn min_set_at(replicates: &[Vec<f64>], confidence: f64) -> Vec<bool> {
    let settings = replicates.len();
    let count = replicates.iter().map(Vec::len).min().unwrap_or(0);
    if settings < 2 || count < 2 {
        return vec![true; settings];
    }
    let level = (1.0 - confidence) / (settings - 1) as f64;
    let Ok(student) = StudentsT::new(0.0, 1.0, (count - 1) as f64) else {
        return vec![true; settings];
    };
    (0..settings)
        .map(|i| {
            (0..settings).filter(|&j| j != i).all(|j| {
                let t = paired_t(&replicates[i][..count], &replicates[j][..count]);
                student.sf(t) >= level
            })
        })
        .collect()
}

/// The paired t statistic `d̄ / (s_d/√T)` of `d_t = a_t - b_t`; ±∞ (or 0) when the
/// differences do not vary.
fn paired_t(a: &[f64], b: &[f64]) -> f64 {
    let diffs: Vec<f64> = a.iter().zip(b).map(|(x, y)| x - y).collect();
    let (mean, var) = super::mean_and_variance(&diffs);
    if var > 0.0 {
        mean / (var / diffs.len() as f64).sqrt()
    } else if mean == 0.0 {
        0.0
    } else {
        f64::INFINITY.copysign(mean)
    }
}

/// Replicates T needed for a one-sided paired test at `confidence` to find two settings in
/// order with probability `power`, when their rates differ by `mean_difference` on average
/// with per-replicate standard deviation `sd_difference` of the paired difference: the
/// smallest T ≥ 2 with `(t_{T-1}(confidence) + t_{T-1}(power))·σ_d/√T ≤ |δ|`, starting from
/// the normal form `T = ((z_c + z_p)·σ_d/δ)²`. To order within a family of K settings, pass
/// the Bonferroni confidence `1 - α/(K-1)`. None when δ is zero or not finite.
pub fn replicates_to_order(
    mean_difference: f64,
    sd_difference: f64,
    confidence: f64,
    power: f64,
) -> Option<u64> {
    let delta = mean_difference.abs();
    if delta == 0.0 || !delta.is_finite() || !sd_difference.is_finite() {
        return None;
    }
    let ratio = sd_difference.abs() / delta;
    let normal = (normal_quantile(confidence) + normal_quantile(power)) * ratio;
    let start = (normal * normal).ceil().max(2.0) as u64;
    for t in start..start + 10_000 {
        let student = StudentsT::new(0.0, 1.0, (t - 1) as f64).ok()?;
        let needed = (student.inverse_cdf(confidence) + student.inverse_cdf(power)) * ratio;
        if needed <= (t as f64).sqrt() {
            return Some(t);
        }
    }
    None
}
