//! Predictions against hand-computed values, an exact big-integer Stirling sum, and Monte Carlo.

use bloomlab::theory::*;
use num_bigint::BigUint;
use num_traits::{ToPrimitive, Zero};
use rand::{Rng, SeedableRng};

fn close(a: f64, b: f64, rel: f64) -> bool {
    ((a - b) / b).abs() <= rel
}

#[test]
fn classic_formula_at_ten_bits_per_key() {
    // (1 - e^{-0.7})^7 = 0.5034146962^7
    let fpr = fpr_classic(4_000, 40_000, 7);
    assert!(close(fpr, 0.008_193_6, 1e-3), "{fpr}");
    assert_eq!(format!("{:.3}%", fpr * 100.0), "0.819%");
}

#[test]
fn expected_fill_is_one_minus_the_empty_probability() {
    // m = 2, one write: exactly half the bits set.
    assert!((fill_expected(1, 2, 1) - 0.5).abs() < 1e-15);
    // 1 - (1 - 1/40000)^16000
    let fill = fill_expected(4_000, 40_000, 4);
    assert!(close(
        fill,
        1.0 - (1.0f64 - 1.0 / 40_000.0).powf(16_000.0),
        1e-10
    ));
    assert!((fill_expected(4_000, 16_000, 4) - 0.632).abs() < 1e-3);
    assert!((fill_expected(4_000, 48_000, 4) - 0.283).abs() < 1e-3);
}

fn binomial(n: u64, r: u64) -> BigUint {
    (0..r).fold(BigUint::from(1u32), |acc, i| acc * (n - i) / (i + 1))
}

/// `E[(X/m)^k]` with `P(X = x) = C(m,x) · Σ_i (-1)^i C(x,i) (x-i)^t / m^t`, in exact integers.
fn exact_by_stirling_sum(n: u64, m: u64, k: u32) -> f64 {
    let t = (k as u64 * n) as u32;
    let mut numerator = BigUint::zero();
    for x in 1..=m {
        // x! S(t, x) = Σ_i (-1)^i C(x,i) (x-i)^t, summed as positive and negative parts.
        let (mut plus, mut minus) = (BigUint::zero(), BigUint::zero());
        for i in 0..=x {
            let term = binomial(x, i) * BigUint::from(x - i).pow(t);
            if i % 2 == 0 {
                plus += term;
            } else {
                minus += term;
            }
        }
        let surjections = plus - minus;
        numerator += binomial(m, x) * surjections * BigUint::from(x).pow(k);
    }
    let denominator = BigUint::from(m).pow(t + k);
    // Scale to keep 30 significant digits through the conversion.
    let scale = BigUint::from(10u32).pow(30);
    (numerator * &scale / denominator).to_f64().unwrap() / 1e30
}

#[test]
fn exact_rate_matches_the_stirling_sum_at_small_m() {
    for &(n, m, k) in &[
        (1, 1, 1),
        (3, 8, 2),
        (4, 16, 3),
        (6, 32, 4),
        (5, 64, 7),
        (10, 64, 3),
        (20, 48, 5),
    ] {
        let want = exact_by_stirling_sum(n, m, k);
        let got = fpr_exact(n, m, k);
        assert!(
            close(got, want, 1e-10),
            "n={n} m={m} k={k}: {got} vs {want}"
        );
    }
}

#[test]
fn exact_rate_matches_monte_carlo() {
    // Average of (X/m)^k over simulated fills; tolerance 4 standard errors of the mean.
    let (n, m, k) = (12u64, 40u64, 3u32);
    let trials = 200_000;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let (mut sum, mut sum_sq) = (0.0, 0.0);
    for _ in 0..trials {
        let mut bits = 0u64;
        for _ in 0..n * k as u64 {
            bits |= 1 << (rng.next_u64() % m);
        }
        let value = (bits.count_ones() as f64 / m as f64).powi(k as i32);
        sum += value;
        sum_sq += value * value;
    }
    let mean = sum / trials as f64;
    let se = ((sum_sq / trials as f64 - mean * mean) / trials as f64).sqrt();
    let exact = fpr_exact(n, m, k);
    assert!(
        (mean - exact).abs() < 4.0 * se,
        "{mean} vs {exact} (se {se})"
    );
}

#[test]
fn jensen_bound_and_convergence_to_classic() {
    for &(n, m, k) in &[
        (4_000, 40_000, 7),
        (100, 300, 5),
        (4_000, 16_000, 4),
        (50, 64, 16),
    ] {
        let exact = fpr_exact(n, m, k);
        assert!(exact >= fill_expected(n, m, k).powi(k as i32) * (1.0 - 1e-12));
    }
    // At large m the exact rate and the classic formula agree to many digits.
    let exact = fpr_exact(10_000_000, 100_000_000, 7);
    assert!(close(exact, fpr_classic(10_000_000, 100_000_000, 7), 1e-5));
}

#[test]
fn exact_rate_is_finite_at_the_largest_sizes() {
    // m = 10^8, kn = 10^9 (exact window), and far beyond (asymptotic form).
    for &(n, m, k) in &[(100_000_000, 100_000_000, 10), (1_000_000_000, 1_000, 64)] {
        let exact = fpr_exact(n, m, k);
        assert!(exact.is_finite() && exact > 0.0 && exact <= 1.0, "{exact}");
    }
}

#[test]
fn fill_variance_matches_the_direct_formula() {
    let (m, t) = (50u64, 80.0f64);
    let mf = m as f64;
    let a = (1.0 - 1.0 / mf).powf(t);
    let b = (1.0 - 2.0 / mf).powf(t);
    let direct = (mf * (mf - 1.0) * b + mf * a - mf * mf * a * a) / (mf * mf);
    assert!(close(fill_variance(m, t), direct, 1e-9));
    assert!(fill_variance(1_000_000_000, 7e8) > 0.0);
}

/// `P(X = x)` after `throws` uniform throws into m bins, by `P_{t+1}(x) = P_t(x)·x/m +
/// P_t(x-1)·(m-x+1)/m`: the brute-force reference for `occupancy_moment`.
fn occupancy_distribution(throws: u64, m: u64) -> Vec<f64> {
    let mf = m as f64;
    let mut dist = vec![0.0f64; m as usize + 1];
    dist[0] = 1.0;
    for _ in 0..throws {
        for x in (0..=m as usize).rev() {
            let grow = if x > 0 {
                dist[x - 1] * (mf - (x - 1) as f64) / mf
            } else {
                0.0
            };
            dist[x] = dist[x] * x as f64 / mf + grow;
        }
    }
    dist
}

fn brute_moment(dist: &[f64], power: u32) -> f64 {
    let m = (dist.len() - 1) as f64;
    dist.iter()
        .enumerate()
        .map(|(x, p)| p * (x as f64 / m).powi(power as i32))
        .sum()
}

#[test]
fn occupancy_moment_matches_the_occupancy_distribution() {
    for (throws, m) in [
        (0, 10),
        (1, 1),
        (7, 3),
        (100, 50),
        (400, 97),
        (3_000, 1_000),
    ] {
        let dist = occupancy_distribution(throws, m);
        for power in [1, 2, 4, 7, 8, 14, 28] {
            let exact = occupancy_moment(throws, m, power);
            let brute = brute_moment(&dist, power);
            assert!(
                (exact - brute).abs() <= 1e-12 * brute.max(1e-300),
                "t={throws} m={m} r={power}: {exact} vs {brute}"
            );
        }
    }
}

#[test]
fn between_filter_variance_matches_the_occupancy_distribution() {
    for (n, m, k) in [(500, 1_000, 4), (500, 5_000, 7), (100, 320, 3)] {
        let dist = occupancy_distribution(k as u64 * n, m);
        let mean = brute_moment(&dist, k);
        let brute = brute_moment(&dist, 2 * k) - mean * mean;
        let var = fpr_between_filter_variance(n, m, k);
        assert!(
            ((var - brute) / brute).abs() < 1e-9,
            "{n} {m} {k}: {var} {brute}"
        );
    }
}

#[test]
fn between_filter_variance_meets_its_delta_form_at_large_m() {
    // The delta form k² p^{2k-2} Var(X/m) has relative error O(1/m); the exact difference
    // of moments must stay positive and close to it even at 2^36 bits.
    for m in [1u64 << 20, 1 << 28, 1 << 36] {
        let (n, k) = (m / 10, 7);
        let p = fill_expected(n, m, k);
        let delta =
            (k as f64 * p.powi(k as i32 - 1)).powi(2) * fill_variance(m, (k as u64 * n) as f64);
        let var = fpr_between_filter_variance(n, m, k);
        assert!(
            ((var - delta) / delta).abs() < 1e-3,
            "m={m}: {var} vs {delta}"
        );
    }
}
