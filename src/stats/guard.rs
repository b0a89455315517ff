//! Exact one-sided guards of a measured rate against a bound, both ways: is the rate above
//! `R·ε` (a filter that breaks its promise), or below it (a filter that loses keys, or
//! answers "absent" more often than its own bits allow)?
//!
//! With `X ~ Binomial(q, p)` the count of false positives among q absent queries, the guard
//! "above b" has the p-value `P(X ≥ c | b)` and the guard "below b" `P(X ≤ c | b)`; each
//! raises its alarm when the p-value is under its level α. For every true rate on the
//! innocent side (p ≤ b for "above", p ≥ b for "below") the alarm's probability is at most α:
//! the tail is monotone in p, and at p = b the discrete p-value is stochastically at least
//! uniform. The tests below check that statement by simulation over many seeds.
//!
//! At α = 0.025 the guards are the 95% Clopper–Pearson interval's own ends: "below b" fires
//! exactly when the upper bound is under b, "above b" when the lower bound is over it.

use super::{binomial_lower_tail, binomial_upper_tail};

/// The level of the audit's guards: one side of the 95% Clopper–Pearson interval.
pub const GUARD_ALPHA: f64 = 0.025;

/// The p-value of "the rate is below `bound`": `P(X ≤ count | bound)`.
pub fn below_p_value(count: u64, queries: u64, bound: f64) -> f64 {
    binomial_lower_tail(count, queries, bound.clamp(0.0, 1.0))
}

/// The p-value of "the rate is above `bound`": `P(X ≥ count | bound)`.
pub fn above_p_value(count: u64, queries: u64, bound: f64) -> f64 {
    binomial_upper_tail(count, queries, bound.clamp(0.0, 1.0))
}

/// One exact draw of `Binomial(trials, p)`, for the simulations of the tests: the successes
/// are counted by geometric waiting times `⌊ln U / ln(1 - p)⌋` between them, so a draw costs
/// about `trials·p` steps.
#[cfg(test)]
pub(crate) fn binomial_draw(rng: &mut impl rand::Rng, trials: u64, p: f64) -> u64 {
    use rand::RngExt;
    if p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return trials;
    }
    let log_q = (-p).ln_1p();
    let (mut at, mut successes) = (0u64, 0u64);
    loop {
        let u = 1.0 - rng.random::<f64>();
        let gap = (u.ln() / log_q).floor();
        if gap >= (trials - at) as f64 {
            return successes;
        }
        at += gap as u64 + 1;
        successes += 1;
        if at >= trials {
            return successes;
        }
    }
}

#[cfg(test)]
mod tests {
    use rand::SeedableRng;

    use super::*;

    /// The share of `draws` binomial counts at the bound itself (the worst innocent rate)
    /// that raise the alarm `p_value(count) < alpha`.
    fn alarms(
        seed: u64,
        draws: u64,
        (queries, bound): (u64, f64),
        alpha: f64,
        p_value: fn(u64, u64, f64) -> f64,
    ) -> u64 {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..draws)
            .filter(|_| p_value(binomial_draw(&mut rng, queries, bound), queries, bound) < alpha)
            .count() as u64
    }

    /// The stated false-alarm rate α holds: the alarms counted over the draws are not
    /// significantly more than α of them (exact binomial tail above 10^-4: this test itself
    /// fails a correct guard with probability at most 10^-4 per case; fixed seeds).
    fn holds_its_level(alpha: f64, cases: &[(u64, f64)], p_value: fn(u64, u64, f64) -> f64) {
        let draws = 20_000;
        for (seed, &case) in cases.iter().enumerate() {
            let fired = alarms(seed as u64, draws, case, alpha, p_value);
            let tail = binomial_upper_tail(fired, draws, alpha);
            assert!(
                tail > 1e-4,
                "{case:?}: {fired} of {draws} alarms at α = {alpha}"
            );
        }
    }

    /// Rates and queries as the audit meets them: a promise of 1% and 0.1% at a tenth (the
    /// default "far below" flag) and at the promise itself (`--fail-below 1`).
    #[test]
    fn the_below_guard_fires_at_most_at_its_level() {
        let cases = [
            (94_000, 0.001),
            (94_000, 0.01),
            (20_000, 0.0001),
            (3_000, 0.01),
        ];
        holds_its_level(GUARD_ALPHA, &cases, below_p_value);
    }

    #[test]
    fn the_above_guard_fires_at_most_at_its_level() {
        let cases = [(94_000, 0.012), (20_000, 0.02), (3_000, 0.05)];
        holds_its_level(GUARD_ALPHA, &cases, above_p_value);
        // conform's guard: twice the promise at 10^-3.
        holds_its_level(1e-3, &[(20_000, 0.02), (20_000, 0.2)], above_p_value);
    }

    /// And the guards see what they are for: half the keys lost at a 1% promise reads as a
    /// rate far below a tenth of it; a rate of 100% is far above twice it.
    #[test]
    fn the_guards_fire_on_the_faults_they_are_for() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
        let lost = binomial_draw(&mut rng, 94_000, 0.0002);
        assert!(below_p_value(lost, 94_000, 0.001) < GUARD_ALPHA, "{lost}");
        assert!(above_p_value(20_000, 20_000, 0.02) < 1e-3);
    }

    /// The draws have the binomial's mean and variance (within 5 standard errors; fixed seed).
    #[test]
    fn draws_are_binomial() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
        let (trials, p, draws) = (5_000u64, 0.01, 20_000);
        let xs: Vec<f64> = (0..draws)
            .map(|_| binomial_draw(&mut rng, trials, p) as f64)
            .collect();
        let mean = xs.iter().sum::<f64>() / draws as f64;
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (draws - 1) as f64;
        let (mu, sigma2) = (trials as f64 * p, trials as f64 * p * (1.0 - p));
        assert!(
            (mean - mu).abs() < 5.0 * (sigma2 / draws as f64).sqrt(),
            "{mean}"
        );
        // Var of the sample variance ≈ 2σ⁴/(draws-1) for a near-normal count.
        assert!(
            (var - sigma2).abs() < 5.0 * sigma2 * (2.0 / draws as f64).sqrt(),
            "{var}"
        );
    }
}
