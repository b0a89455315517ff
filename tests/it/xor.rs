//! The xor filter (Graf and Lemire 2020): no false negatives, its space against the published
//! `1.23 n + 32` slots (9.84 bits per key at 8-bit fingerprints), its rate against `2^-f`.

use bloomlab::HashScheme;
use bloomlab::KeySource;
use bloomlab::structures::FilterKind;

#[test]
fn every_inserted_key_is_found_and_the_table_has_the_published_size() {
    let xor = FilterKind::named("xor").unwrap();
    let keys = KeySource::new(4);
    for (n, f) in [(1, 8), (1_000, 16), (30_011, 32), (100_000, 8)] {
        let mut filter = xor.build(n, 1, f, HashScheme::MultiplyShift, 1).unwrap();
        keys.inserted(n).for_each(|key| filter.insert(key));
        keys.inserted(n.min(10)).for_each(|key| filter.insert(key));
        let missing = keys
            .inserted(n)
            .filter(|&key| !filter.contains(key))
            .count();
        assert_eq!(missing, 0, "n {n} f {f}");
        // Graf and Lemire's capacity 32 + 1.23 n, rounded to three equal blocks.
        let slots = filter.memory_bits() / u64::from(f);
        let published = 32.0 + 1.23 * n as f64;
        assert!(
            (slots as f64 - published).abs() <= 3.0,
            "{slots} slots for {n} keys"
        );
    }
    assert!(xor.build(10, 1, 12, HashScheme::MultiplyShift, 1).is_err());
}

/// At n = 10^5 and 2^-8: 8-bit fingerprints, 9.84 bits per key (1.23 times the floor of 8),
/// the measured rate within 4 standard errors of 2^-8.
#[test]
fn the_xor_filter_measures_two_to_the_minus_f_at_1_23_times_the_floor() {
    let hidden = indicatif::ProgressBar::hidden();
    let rows = bloomlab::experiments::compare::rows::compare(
        100_000,
        &[1.0 / 256.0],
        200_000,
        7,
        8,
        None,
        &hidden,
    )
    .unwrap();
    let row = rows
        .iter()
        .find(|r| r.measurement.filter.name() == "xor")
        .unwrap();
    assert_eq!(row.measurement.k, 8);
    assert!(
        row.measurement.z_exact.abs() <= 4.0,
        "z {}",
        row.measurement.z_exact
    );
    assert!(
        (row.ratio_to_floor - 1.2304).abs() < 0.001,
        "{}",
        row.ratio_to_floor
    );
}
