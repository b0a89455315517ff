//! Interval and test statistics against known values.

use bloomlab::stats::*;
use rand::{RngExt, SeedableRng};
use statrs::function::gamma::ln_gamma;

#[test]
fn wilson_interval_known_value() {
    // 10 of 100 at 95%: [0.05523, 0.17437] (Wilson 1927; Newcombe 1998, table I).
    let (lo, hi) = wilson_interval(10, 100, Z95);
    assert!((lo - 0.05523).abs() < 5e-5, "{lo}");
    assert!((hi - 0.17437).abs() < 5e-5, "{hi}");
    let (lo, hi) = wilson_interval(0, 60_000, Z95);
    assert_eq!(lo, 0.0);
    assert!(hi > 0.0 && hi < 1e-4);
}

#[test]
fn z_score_uses_the_predicted_rate() {
    // 600 of 60000 against 1%: exactly zero; 700 against 1%: 100 / sqrt(594) ≈ 4.10.
    assert_eq!(z_score(0.01, 0.01, 60_000), 0.0);
    assert!((z_score(700.0 / 60_000.0, 0.01, 60_000) - 4.1030).abs() < 1e-3);
}

#[test]
fn chi_square_tail() {
    // P(χ²_4 ≥ 9.4877) = 0.05
    assert!((chi_square_sf(9.4877, 4.0) - 0.05).abs() < 1e-4);
}

#[test]
fn pmf_sums_to_one_and_matches_the_direct_product() {
    let (n, p) = (40u64, 0.3);
    let total: f64 = (0..=n).map(|x| binomial_pmf(x, n, p)).sum();
    assert!((total - 1.0).abs() < 1e-14, "{total}");
    let direct =
        (ln_gamma(41.0) - ln_gamma(13.0) - ln_gamma(29.0) + 12.0 * p.ln() + 28.0 * (1.0 - p).ln())
            .exp();
    assert!((binomial_pmf(12, n, p) / direct - 1.0).abs() < 1e-12);
}

#[test]
fn tails_agree_with_thirty_digit_sums_at_ten_billion_trials() {
    // Reference values: Σ_{j≥x} C(n,j) p^j (1-p)^{n-j} in mpmath at 30 digits.
    let cases = [
        (100_000_000, 1e-3, 100_500, 0.057_103_570_863_686_955),
        (10_000_000_000, 1e-4, 1_001_000, 0.158_764_124_039_145_93),
        (10_000_000_000, 1e-6, 10_200, 0.023_290_877_061_190_977),
        (10_000_000_000, 1e-2, 100_100_000, 4.654_983_626_833_425e-24),
    ];
    for (n, p, x, reference) in cases {
        let upper = binomial_upper_tail(x, n, p);
        assert!(
            (upper / reference - 1.0).abs() < 1e-10,
            "{n} {p} {x}: {upper}"
        );
    }
}

#[test]
fn clopper_pearson_and_the_two_sided_p_match_exact_sums() {
    // References from 30-digit mpmath sums and roots.
    let (low, high) = clopper_pearson(10, 100, 0.95);
    assert!(
        (low / 0.049_004_689_221_485_96 - 1.0).abs() < 1e-10,
        "{low}"
    );
    assert!(
        (high / 0.176_222_597_740_022_7 - 1.0).abs() < 1e-10,
        "{high}"
    );
    let p = binomial_two_sided_p(10, 100, 0.05);
    assert!((p / 0.056_376_588_326_832_2 - 1.0).abs() < 1e-12, "{p}");
    let p = binomial_two_sided_p(1, 200, 0.02);
    assert!((p / 0.178_750_967_543_864_07 - 1.0).abs() < 1e-12, "{p}");
    // Zero successes: the upper bound is 1 - (α/2)^{1/n}.
    let (low, high) = clopper_pearson(0, 60_000, 0.95);
    assert_eq!(low, 0.0);
    assert!((high / -(0.025f64.ln() / 60_000.0).exp_m1() - 1.0).abs() < 1e-14);
}

#[test]
fn clopper_pearson_bounds_put_alpha_over_two_in_each_tail_at_large_trials() {
    let (count, trials) = (1_234_567, 10_000_000_000);
    let (low, high) = clopper_pearson(count, trials, 0.99);
    assert!((binomial_upper_tail(count, trials, low) / 0.005 - 1.0).abs() < 1e-8);
    assert!((binomial_lower_tail(count, trials, high) / 0.005 - 1.0).abs() < 1e-8);
}

#[test]
fn a_p_value_below_alpha_fails_and_nan_is_not_applicable() {
    assert_eq!(Check::at(0.001, 0.01), Check::Fail);
    assert_eq!(Check::at(0.01, 0.01), Check::Pass);
    assert_eq!(Check::at(f64::NAN, 0.01), Check::NotApplicable);
    assert_eq!(
        serde_json::to_string(&Check::NotApplicable).unwrap(),
        "\"n/a\""
    );
}

#[test]
fn binomial_counts_have_the_binomial_moments() {
    // Binomial(q, r): σ² = qr(1-r), γ₂ = (1 - 6r(1-r)) / (qr(1-r)).
    let (q, r) = (200u64, 0.03);
    let d = CountDistribution::binomial(q, r);
    let s = q as f64 * r * (1.0 - r);
    assert!((d.mean - 6.0).abs() < 1e-12);
    assert!((d.variance / s - 1.0).abs() < 1e-12);
    let gamma = (1.0 - 6.0 * r * (1.0 - r)) / s;
    assert!((d.excess_kurtosis / gamma - 1.0).abs() < 1e-9, "{d:?}");
}

#[test]
fn a_two_point_rate_mixture_has_its_moments() {
    // r = 0.1 or 0.3 with equal chance, q = 10: moments by direct enumeration.
    let q = 10u64;
    let pmf = |c: u64, r: f64| {
        let choose = (0..c).fold(1.0, |acc, i| acc * (q - i) as f64 / (i + 1) as f64);
        choose * r.powi(c as i32) * (1.0 - r).powi((q - c) as i32)
    };
    let mix = |c| 0.5 * pmf(c, 0.1) + 0.5 * pmf(c, 0.3);
    let mean: f64 = (0..=q).map(|c| c as f64 * mix(c)).sum();
    let central = |j| {
        (0..=q)
            .map(|c| (c as f64 - mean).powi(j) * mix(c))
            .sum::<f64>()
    };
    let moments = [1, 2, 3, 4].map(|j| 0.5 * 0.1f64.powi(j) + 0.5 * 0.3f64.powi(j));
    let d = CountDistribution::from_rate_moments(q, moments);
    assert!((d.mean - mean).abs() < 1e-12);
    assert!((d.variance - central(2)).abs() < 1e-12);
    let kurtosis = central(4) / central(2).powi(2) - 3.0;
    assert!(
        (d.excess_kurtosis - kurtosis).abs() < 1e-9,
        "{d:?} {kurtosis}"
    );
}

#[test]
fn stouffer_adds_signs() {
    let (z, p) = stouffer(&[1.0, 1.0, 1.0, 1.0]);
    assert!((z - 2.0).abs() < 1e-12);
    assert!((p - 0.045_500_263_896_358_4).abs() < 1e-9, "{p}");
    assert_eq!(stouffer(&[1.0, -1.0]).0, 0.0);
}

#[test]
fn z95_is_the_normal_quantile() {
    assert!((bonferroni_z(0.05, 1) - Z95).abs() < 1e-9);
}

/// At F times the sample the interval ends below an edge `distance` above the truth in
/// 80% of 40,000 normal draws: within ±0.006 (3 binomial standard errors of 0.002).
#[test]
fn the_factor_to_decide_gives_its_power() {
    let (se, distance) = (0.3, 0.1);
    let factor = sample_factor_to_decide(se, distance, 0.95);
    let scaled = se / factor.sqrt();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let draws = 40_000;
    let decided = (0..draws)
        .filter(|_| {
            let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
            let z = (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos();
            z * scaled + Z95 * scaled < distance
        })
        .count() as f64
        / draws as f64;
    assert!((decided - DETECTION_POWER).abs() < 0.006, "{decided}");
    assert_eq!(sample_factor_to_decide(se, 0.0, 0.95), f64::INFINITY);
}

#[test]
fn a_zero_count_gives_a_finite_log_rate_and_an_interval_from_zero() {
    let (centre, var) = log_rate(0, 60_000, 0.0);
    assert!((centre - (0.5f64 / 60_000.0).ln()).abs() < 1e-12);
    assert!((var - (1.0 - 0.5 / 60_000.0) / 0.5).abs() < 1e-12);
    let r = averaged_ratio_to_constant(0, 60_000, 0.0, 1e-4, 0.95);
    assert_eq!((r.value, r.low), (0.0, 0.0));
    assert!(r.high.is_finite() && r.high > 0.0);
}

#[test]
fn the_paired_ratio_of_proportional_replicates_has_no_width() {
    let b = [0.01, 0.02, 0.015];
    let a: Vec<f64> = b.iter().map(|x| 3.0 * x).collect();
    let r = paired_ratio_interval(&a, &b, 0.95);
    assert!((r.value - 3.0).abs() < 1e-12);
    assert!((r.low - 3.0).abs() < 1e-9 && (r.high - 3.0).abs() < 1e-9);
    assert!(paired_ratio_interval(&a[..1], &b[..1], 0.95).low.is_nan());
}
