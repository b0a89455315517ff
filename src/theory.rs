//! Predictions: the classic formula, the exact expectation, and the sizing discipline.
//!
//! Throughout, n keys are inserted into m bits with k hashes, so `t = k·n` bit writes.

use std::f64::consts::LN_2;

/// Classic approximation `(1 - e^{-kn/m})^k`.
pub fn fpr_classic(n: u64, m: u64, k: u32) -> f64 {
    let load = k as f64 * n as f64 / m as f64;
    (-(-load).exp_m1()).powi(k as i32)
}

/// Expected fill `E[X/m] = 1 - (1 - 1/m)^{kn}`, X the number of set bits.
pub fn fill_expected(n: u64, m: u64, k: u32) -> f64 {
    let writes = k as f64 * n as f64;
    -(writes * (-1.0 / m as f64).ln_1p()).exp_m1()
}

/// The independence prediction from a fill f: `f^k`.
pub fn fpr_from_fill(fill: f64, k: u32) -> f64 {
    fill.powi(k as i32)
}

/// `Var(X/m)` for X the number of occupied bins after `writes` uniform writes into m bins:
/// `Var(E) = m(m-1)(1-2/m)^t + m(1-1/m)^t - m²(1-1/m)^{2t}` for E = m - X, written so that
/// the difference of near-equal powers is taken with `expm1`.
pub fn fill_variance(m: u64, writes: f64) -> f64 {
    let mf = m as f64;
    if m <= 2 {
        let a = (1.0 - 1.0 / mf).powf(writes);
        let b = (1.0 - 2.0 / mf).max(0.0).powf(writes);
        let var = mf * (mf - 1.0) * b + mf * a - mf * mf * a * a;
        return (var / (mf * mf)).max(0.0);
    }
    let x = 1.0 / mf;
    // g(x) = 2 ln(1-x) - ln(1-2x) = Σ_{j≥2} (2^j - 2) x^j / j, so (1-2/m)^t = a² e^{-t g}.
    let g = if x < 1e-3 {
        (2..=8)
            .map(|j| ((1u64 << j) - 2) as f64 * x.powi(j) / j as f64)
            .sum::<f64>()
    } else {
        2.0 * (-x).ln_1p() - (-2.0 * x).ln_1p()
    };
    let ln_a = writes * (-x).ln_1p();
    let a = ln_a.exp();
    let b = (writes * (-2.0 * x).ln_1p()).exp();
    let var = mf * (a - b) + mf * mf * a * a * (-writes * g).exp_m1();
    (var / (mf * mf)).max(0.0)
}

/// Largest binomial window (in writes landing on the probed bits) evaluated exactly before
/// [`occupancy_moment`] falls back to its second-order asymptotic form.
const EXACT_WINDOW_LIMIT: f64 = 2.0e6;

/// Exact false-positive rate `E[(X/m)^k]` (Bose et al. 2008), X the number of set bits after
/// `t = kn` uniform writes: [`occupancy_moment`]`(kn, m, k)`.
pub fn fpr_exact(n: u64, m: u64, k: u32) -> f64 {
    occupancy_moment((k as u64).saturating_mul(n), m, k)
}

/// The r-th moment `E[(X/m)^r]` of the fraction of occupied bins, X the number of bins of m
/// hit by `throws` uniform throws.
///
/// Computed as the probability that r uniform probes all land on occupied bins: with D the
/// number of distinct bins among the r probes (`P(D=j)` by the occupancy recursion) and `A_j`
/// the probability that j given bins are all hit, `E[(X/m)^r] = Σ_j P(D=j)·A_j`, where
/// `A_j = Σ_L Bin(t, j/m)(L) · c_j(L)` and `c_j(L)` is the chance that L throws into j bins
/// cover them all. Every term is positive, so the sum is stable at any m and t; its cost grows
/// with `r²·t/m`, not with m. When the binomial window exceeds two million throws it falls
/// back to `p^r (1 + C(r,2)·Var(X/m)/p²)` with `p = E[X/m]`, whose error is `O(m^{-2})`.
pub fn occupancy_moment(throws: u64, m: u64, power: u32) -> f64 {
    if power == 0 {
        return 1.0;
    }
    let writes = throws as f64;
    let mf = m as f64;
    if exact_window_exceeded(throws, m, power) {
        return occupancy_moment_asymptotic(writes, m, power);
    }
    let r = power as usize;
    // P(D = j) for j distinct bins among r uniform probes.
    let mut distinct = vec![0.0f64; r + 1];
    distinct[0] = 1.0;
    (0..r).for_each(|_| throw_once(&mut distinct, mf));
    (1..=r)
        .filter(|&j| distinct[j] > 0.0)
        .map(|j| distinct[j] * all_bits_written(writes, j, mf))
        .sum()
}

/// One more uniform throw into `bins` bins: `covered[c]`, the chance that c distinct bins
/// are hit, stays with chance `c/bins` and moves to c + 1 with chance `(bins - c)/bins`.
fn throw_once(covered: &mut [f64], bins: f64) {
    for c in (0..covered.len()).rev() {
        let stay = covered[c] * (c as f64 / bins);
        let grow = if c > 0 {
            covered[c - 1] * ((bins - (c - 1) as f64).max(0.0) / bins)
        } else {
            0.0
        };
        covered[c] = stay + grow;
    }
}

/// True when [`occupancy_moment`] of this order would need a binomial window wider than
/// [`EXACT_WINDOW_LIMIT`] and takes its asymptotic form instead.
fn exact_window_exceeded(throws: u64, m: u64, power: u32) -> bool {
    let widest = throws as f64 / m as f64 * power.min(m.min(u32::MAX as u64) as u32) as f64;
    widest + 40.0 * widest.sqrt() + 64.0 > EXACT_WINDOW_LIMIT
}

/// Second-order form `p^r (1 + C(r,2)·Var(X/m)/p²)`, `p = E[X/m]`.
fn occupancy_moment_asymptotic(writes: f64, m: u64, power: u32) -> f64 {
    let p = -(writes * (-1.0 / m as f64).ln_1p()).exp_m1();
    let var = fill_variance(m, writes);
    let pairs = power as f64 * (power as f64 - 1.0) / 2.0;
    (p.powi(power as i32) * (1.0 + pairs * var / (p * p))).min(1.0)
}

/// Variance between filters of the false-positive rate `r = (X/m)^k` of a filter of m bits
/// holding n keys with k independent uniform probes:
/// `Var(r) = E[(X/m)^{2k}] - E[(X/m)^k]²`, both moments from [`occupancy_moment`] with
/// `t = kn` throws. Beyond the exact window it takes the delta form
/// `k² p^{2k-2} Var(X/m)`, `p = E[X/m]`, the leading term of the same difference.
///
/// This is the spread of the rate that a prediction averaging over filters (`fpr_classic`,
/// `E[fill]^k`, `fpr_exact`) cannot know; the rate from a filter's own bits has none.
pub fn fpr_between_filter_variance(n: u64, m: u64, k: u32) -> f64 {
    let throws = (k as u64).saturating_mul(n);
    if exact_window_exceeded(throws, m, 2 * k) {
        let p = fill_expected(n, m, k);
        let slope = k as f64 * p.powi(k as i32 - 1);
        return slope * slope * fill_variance(m, throws as f64);
    }
    let mean = occupancy_moment(throws, m, k);
    (occupancy_moment(throws, m, 2 * k) - mean * mean).max(0.0)
}

/// The first four raw moments `[E r, E r², E r³, E r⁴]` of the rate `r = (X/m)^k` of a filter
/// over the draw of its hashes: `E r^j = E[(X/m)^{jk}]` with `t = kn` throws.
pub fn fpr_moments(n: u64, m: u64, k: u32) -> [f64; 4] {
    let throws = (k as u64).saturating_mul(n);
    [1, 2, 3, 4].map(|j| occupancy_moment(throws, m, j * k))
}

/// `A_j`: probability that j given bins of m are all hit by `writes` uniform writes.
fn all_bits_written(writes: f64, j: usize, m: f64) -> f64 {
    let p = (j as f64 / m).min(1.0);
    let weights = binomial_window(writes, p);
    let (first, ref probs) = weights;
    // c_j(L) by the coupon-collector chain: state = bins covered so far.
    let mut covered = vec![0.0f64; j + 1];
    covered[0] = 1.0;
    let mut total = 0.0;
    let last = first + probs.len() as u64;
    for throws in 0..last {
        if throws >= first {
            total += probs[(throws - first) as usize] * covered[j];
        }
        throw_once(&mut covered, j as f64);
    }
    total
}

/// The Binomial(t, p) probabilities over `mean ± 40 sd` (clipped to `[0, t]`), normalised
/// from the mode outwards so that nothing underflows; returns the first L and the weights.
fn binomial_window(trials: f64, p: f64) -> (u64, Vec<f64>) {
    if p >= 1.0 {
        return (trials as u64, vec![1.0]);
    }
    let mean = trials * p;
    let sd = (trials * p * (1.0 - p)).sqrt();
    let low = (mean - 40.0 * sd - 10.0).floor().max(0.0) as u64;
    let high = ((mean + 40.0 * sd + 10.0).ceil()).min(trials) as u64;
    let mode = (((trials + 1.0) * p).floor() as u64).clamp(low, high);
    let odds = p / (1.0 - p);
    let mut weights = vec![0.0f64; (high - low + 1) as usize];
    weights[(mode - low) as usize] = 1.0;
    for l in mode..high {
        let i = (l - low) as usize;
        weights[i + 1] = weights[i] * (trials - l as f64) / (l as f64 + 1.0) * odds;
    }
    for l in (low + 1..=mode).rev() {
        let i = (l - low) as usize;
        weights[i - 1] = weights[i] * l as f64 / ((trials - l as f64 + 1.0) * odds);
    }
    let sum: f64 = weights.iter().sum();
    weights.iter_mut().for_each(|w| *w /= sum);
    (low, weights)
}

/// `ln(n!)`, by `statrs`' log-gamma.
pub fn ln_factorial(n: u64) -> f64 {
    statrs::function::gamma::ln_gamma(n as f64 + 1.0)
}

/// Bits per key that minimise the rate for a target ε: `m/n = log2(1/ε) / ln 2`.
pub fn bits_per_key_for_fpr(fpr: f64) -> f64 {
    information_floor(fpr) / LN_2
}

/// The optimal number of hashes `k = (m/n) ln 2`.
pub fn optimal_k(bits_per_key: f64) -> f64 {
    bits_per_key * LN_2
}

/// The whole k nearest the optimum for n keys in m bits: `round((m/n) ln 2)`, in 1..=64.
pub fn whole_optimal_k(n: u64, m: u64) -> u32 {
    (optimal_k(m as f64 / n as f64).round() as u32).clamp(1, crate::hash::MAX_K)
}

/// The classic filter for n keys at rate ε: `m = ceil(n·log2(1/ε)/ln 2)`, `k = round((m/n) ln 2)`.
pub fn classic_design(n: u64, fpr: f64) -> (u64, u32) {
    let m = (n as f64 * bits_per_key_for_fpr(fpr)).ceil() as u64;
    (m, whole_optimal_k(n, m))
}

/// Bits of a table of n keys at `bits_per_key`: `max(1, ceil(n·bits_per_key))`.
pub fn bits_at(n: u64, bits_per_key: f64) -> u64 {
    ((n as f64 * bits_per_key).ceil() as u64).max(1)
}

/// Bits of n keys at `bits_per_key`, to the nearest: `round(n·bits_per_key)`.
pub fn bits_nearest(n: u64, bits_per_key: f64) -> u64 {
    (n as f64 * bits_per_key).round() as u64
}

/// Keys a table of `bits` holds at `bits_per_key`: `max(1, round(bits / bits_per_key))`.
pub fn keys_at(bits: u64, bits_per_key: f64) -> u64 {
    ((bits as f64 / bits_per_key).round() as u64).max(1)
}

/// Whole keys that fit in `bits` at `bits_per_key`: `floor(bits / bits_per_key)`.
pub fn keys_within(bits: u64, bits_per_key: f64) -> u64 {
    (bits as f64 / bits_per_key).floor() as u64
}

/// The information floor `log2(1/ε)` bits per key.
pub fn information_floor(fpr: f64) -> f64 {
    -fpr.log2()
}

/// The classic rate at the real-valued optimum: the fill is one half, so the rate is `2^{-k}`.
pub fn fpr_at_optimum(bits_per_key: f64) -> f64 {
    (-optimal_k(bits_per_key)).exp2()
}

/// Fill after s times the design load of a filter built at its optimum: `1 - 2^{-s}`.
pub fn fill_closed_form(overfill_factor: f64) -> f64 {
    1.0 - (-overfill_factor).exp2()
}

/// Rate after s times the design load of a filter built at its optimum: `(1 - 2^{-s})^k`.
pub fn fpr_closed_form(overfill_factor: f64, k: u32) -> f64 {
    fill_closed_form(overfill_factor).powi(k as i32)
}

/// Relative change of the rate per unit of fractional overfill at the optimum: `k ln 2`.
pub fn overfill_sensitivity(k: f64) -> f64 {
    k * LN_2
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binomial_window_sums_to_one_and_has_the_mean() {
        let (first, w) = binomial_window(1e9, 3e-7);
        let mean: f64 = w
            .iter()
            .enumerate()
            .map(|(i, p)| (first + i as u64) as f64 * p)
            .sum();
        assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-12);
        assert!((mean - 300.0).abs() < 1e-6, "{mean}");
    }

    #[test]
    fn exact_falls_back_smoothly() {
        let exact = fpr_exact(200_000, 2_000_000, 7);
        let asym = occupancy_moment_asymptotic(7.0 * 200_000.0, 2_000_000, 7);
        assert!(((exact - asym) / exact).abs() < 1e-6, "{exact} {asym}");
    }
}
