//! The bits check at the essay's settings, with fixed seeds.
//!
//! Bound: a measured rate agrees with `fill^k` when `|z| <= 4`, z from the binomial standard
//! error `sqrt(p(1-p)/q)`; with fixed seeds these tests are deterministic.

use bloomlab::HashScheme;
use bloomlab::pipeline::measure;
use bloomlab::pipeline::measurement::{BITS_CHECK_Z, Setup};
use bloomlab::structures::{FilterKind, Spec};

fn setup(n: u64, m: u64, k: u32, hash: HashScheme) -> Setup {
    Setup::new(
        Spec::shape(FilterKind::CLASSIC, m, k).hashed(hash, 12),
        n,
        60_000,
        11,
    )
}

#[test]
fn default_hash_matches_its_bits_at_every_essay_setting() {
    let mut settings = Vec::new();
    for bits in [4, 6, 8, 10, 12] {
        settings.push((4_000, 4_000 * bits, 4));
    }
    for k in 1..=16 {
        settings.push((4_000, 40_000, k));
    }
    for n in [2_000, 3_000, 4_000, 5_000, 6_000, 7_000, 8_000] {
        settings.push((n, 40_000, 7));
        settings.push((n, 40_000, 14));
    }
    for (n, m, k) in settings {
        let row = measure("test", &setup(n, m, k, HashScheme::MultiplyShift)).unwrap();
        assert!(
            row.z_from_fill.abs() <= BITS_CHECK_Z && row.z_exact.abs() <= BITS_CHECK_Z,
            "n={n} m={m} k={k}: z_from_fill {} z_exact {}",
            row.z_from_fill,
            row.z_exact
        );
        assert!(row.bits_ok());
    }
}

#[test]
fn double_hashing_matches_its_bits() {
    let row = measure("test", &setup(4_000, 40_000, 7, HashScheme::DoubleHashing)).unwrap();
    assert!(row.bits_ok(), "z {}", row.z_from_fill);
}

#[test]
fn low_bits_hash_fails_the_bits_check_at_a_power_of_two() {
    let row = measure("test", &setup(4_000, 32_768, 4, HashScheme::LowBits)).unwrap();
    assert!(!row.bits_ok());
    assert!(row.fpr_measured > 3.0 * row.fpr_from_fill, "{row:?}");
}
