//! Interval and test statistics against known values.

use bloomlab::stats::*;

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
