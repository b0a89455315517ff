//! The fingerprint-table peers (qfilter, cuckoofilter, ribbon-filter): each rate within 4
//! binomial standard errors (z bound 4, fixed seeds) of the rate its own state predicts, at
//! the load its README configures; the space each spends against what its crate documents;
//! and their refusals said in words, never a lost key. cuckoofilter relocates keys with an
//! unseeded generator, so its count varies between runs; its rate's distribution does not,
//! and the bound holds for every run with probability above 0.9999.
#![cfg(feature = "peers")]

use bloomlab::KeySource;
use bloomlab::error::Error;
use bloomlab::pipeline::count_parallel;
use bloomlab::structures::{Filter, FilterKind, Spec};

/// The crate's filter built by its own constructor for n keys at ε.
fn for_rate(name: &str, n: u64, fpr: f64, hash_seed: u64) -> Box<dyn Filter> {
    let spec = Spec::rate(named(name), n, fpr);
    Spec { hash_seed, ..spec }.build(n).unwrap()
}

fn named(name: &str) -> FilterKind {
    FilterKind::named(name).unwrap()
}

/// z of the absent keys `2^40..2^40 + queries` counted present against the filter's own
/// prediction at n keys.
fn z_of(filter: &dyn Filter, keys: &KeySource, n: u64, queries: u64) -> (f64, f64, f64) {
    let absent = 1u64 << 40;
    let present =
        count_parallel(filter, absent..absent + queries, |c| keys.key(c), &|_| {}).unwrap();
    let measured = present as f64 / queries as f64;
    let predicted = filter.fpr_exact(n);
    let se = (predicted * (1.0 - predicted) / queries as f64).sqrt();
    ((measured - predicted) / se, measured, predicted)
}

fn filled(mut filter: Box<dyn Filter>, keys: &KeySource, n: u64) -> Box<dyn Filter> {
    keys.inserted(n).for_each(|key| filter.insert(key));
    filter
}

/// qfilter by rate, as its README: at ε = 2^-10 and n = 10^5 it holds `2^17` slots of 10-bit
/// remainders at `r + 2.125` bits each (its README's table: 12.125 bits per item at 2^-10
/// when full; here the slots are 76% full), and its rate is `1-(1-2^-(q+r))^n`.
#[test]
fn qfilter_matches_its_fingerprint_prediction_and_space() {
    let keys = KeySource::new(7);
    let n = 100_000;
    let filter = filled(for_rate("qfilter", n, 0.001, 0), &keys, n);
    let (z, measured, predicted) = z_of(&*filter, &keys, n, 4_000_000);
    assert!(
        z.abs() <= 4.0,
        "measured {measured}, predicted {predicted}, z {z}"
    );
    assert_eq!(filter.hashes(), 10);
    let bits_per_slot = filter.memory_bits() as f64 / (1 << 17) as f64;
    assert!((bits_per_slot - 12.125).abs() < 0.01, "{bits_per_slot}");
    assert_eq!(filter.failed_inserts(), Some(0));
}

/// Past 95% of its slots qfilter refuses inserts: counted, never a lost key in silence.
#[test]
fn qfilter_full_refuses_and_counts() {
    let keys = KeySource::new(8);
    let filter = filled(for_rate("qfilter", 1_000, 0.01, 0), &keys, 2_000);
    // 1000 keys take 2048 slots (1024 hold 973), 1946 of them usable; a key whose 18-bit
    // fingerprint is already stored (about 2000²/2^19 = 8) takes none.
    let failed = filter.failed_inserts().unwrap();
    assert!(
        (2_000 - 1_946 - 30..=2_000 - 1_946).contains(&failed),
        "{failed}"
    );
    assert_eq!(filter.memory_bits(), (2048 / 64 * (17 + 8 * 7) + 8) * 8);
}

/// cuckoofilter near full (124000 keys in 2^17 one-byte slots, 94.6%, where it relocates):
/// within 4 SE of its prediction, about 8·0.946/255 = 2.9%, what its README calls its use,
/// "applications that require low false positive rates (< 3%)".
#[test]
fn cuckoofilter_matches_its_prediction_near_full() {
    let keys = KeySource::new(9);
    let kind = named("cuckoofilter");
    let m = kind.layout(1 << 20, 8).unwrap();
    assert_eq!(m, 1 << 20, "2^17 one-byte slots");
    let n = 124_000;
    let filter = filled(
        kind.build(n, m, 8, bloomlab::HashScheme::MultiplyShift, 0)
            .unwrap(),
        &keys,
        n,
    );
    let (z, measured, predicted) = z_of(&*filter, &keys, n, 2_000_000);
    assert!(
        z.abs() <= 4.0,
        "measured {measured}, predicted {predicted}, z {z}"
    );
    assert!((0.028..0.030).contains(&predicted), "{predicted}");
}

/// ribbon-filter as its README configures it (3n rows, band width 16): its rate is `2^-r`
/// within 4 SE, and its rows take a whole 64-bit word each, 192 bits per key whatever r.
#[test]
fn ribbon_filter_keeps_2_to_the_minus_r_in_64_bit_rows() {
    let keys = KeySource::new(10);
    let n = 50_000;
    let filter = filled(for_rate("ribbon-filter", n, 0.01, 3), &keys, n);
    let (z, measured, predicted) = z_of(&*filter, &keys, n, 2_000_000);
    assert_eq!(predicted, 0.5f64.powi(7));
    assert!(
        z.abs() <= 4.0,
        "measured {measured}, predicted {predicted}, z {z}"
    );
    assert!(keys.inserted(n).all(|key| filter.contains(key)));
    let bits_per_key = filter.memory_bits() as f64 / n as f64;
    assert!(
        (192.0..=192.0 * 17.0 / 16.0).contains(&bits_per_key),
        "{bits_per_key}"
    );
}

/// At 3·10^5 keys the README's configuration cannot be built (band width 16): a query says
/// so, with the crate's message, as a refusal.
#[test]
fn ribbon_filter_at_scale_is_refused_in_words() {
    let keys = KeySource::new(11);
    let n = 300_000;
    let filter = filled(for_rate("ribbon-filter", n, 0.01, 2), &keys, n);
    let error = count_parallel(&*filter, 0..10, |c| keys.key(c), &|_| {}).unwrap_err();
    assert!(
        matches!(&error, Error::Refused { message, .. } if message.contains("construction failed")),
        "{error}"
    );
}
