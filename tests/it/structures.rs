//! The blocked structures behind the filter interface: no false negatives, and each measured
//! rate within 4 binomial standard errors of its own predictions (fixed seeds).

use bloomlab::HashScheme;
use bloomlab::KeySource;
use bloomlab::pipeline::measure;
use bloomlab::pipeline::measurement::Setup;
use bloomlab::structures::{FilterKind, Spec};
use proptest::prelude::*;

/// A registered structure by name.
fn named(name: &str) -> FilterKind {
    FilterKind::named(name).unwrap()
}

proptest! {
    #[test]
    fn no_false_negatives(
        n in 1u64..1_500,
        m in 1u64..40_000,
        k in 1u32..=16,
        seed in any::<u64>(),
        hash_seed in any::<u64>(),
        blocked in any::<bool>(),
    ) {
        let (kind, k) = match (blocked, k % 4) {
            (true, _) => (named("blocked"), k),
            (false, 0) => (named("cuckoo"), 4 + (k * 7) % 29),
            (false, 1) => (named("binary-fuse"), [8, 16, 32][(k % 3) as usize]),
            (false, 3) => (named("quotient"), k),
            (false, _) => (named("split-block"), 8),
        };
        let m = kind.layout(m, k).unwrap();
        let mut filter = kind.build(n, m, k, HashScheme::MultiplyShift, hash_seed).unwrap();
        let keys = KeySource::new(seed);
        keys.inserted(n).for_each(|key| filter.insert(key));
        // A full cuckoo filter refuses keys and counts them; every other key is found.
        let missing = keys.inserted(n).filter(|&key| !filter.contains(key)).count() as u64;
        prop_assert!(missing <= filter.failed_inserts().unwrap_or(0));
    }
}

fn setup(filter: FilterKind, n: u64, m: u64, k: u32) -> Setup {
    let m = filter.layout(m, k).unwrap();
    Setup::new(
        Spec::shape(filter, m, k).hashed(HashScheme::MultiplyShift, 22),
        n,
        60_000,
        21,
    )
}

#[test]
fn blocked_structures_match_their_own_predictions() {
    for (filter, k) in [
        (named("blocked"), 4),
        (named("blocked"), 7),
        (named("blocked"), 12),
        (named("split-block"), 8),
    ] {
        for bits in [6, 10, 16] {
            let row = measure("test", &setup(filter.clone(), 4_000, 4_000 * bits, k)).unwrap();
            assert!(
                row.z_exact.abs() <= 4.0 && row.bits_ok(),
                "{filter} k={k} {bits} bits/key: z_exact {} z_from_fill {}",
                row.z_exact,
                row.z_from_fill
            );
        }
    }
}

#[test]
fn cuckoo_matches_its_fingerprint_prediction() {
    // k is the fingerprint size; loads from 60% to 92% of the slots.
    for (k, bits) in [(8, 10), (8, 14), (12, 13), (12, 20), (16, 20)] {
        let row = measure("test", &setup(named("cuckoo"), 4_000, 4_000 * bits, k)).unwrap();
        assert!(
            row.z_exact.abs() <= 4.0 && row.bits_ok(),
            "cuckoo f={k} {bits} bits/key: z_exact {} z_from_fill {}",
            row.z_exact,
            row.z_from_fill
        );
    }
}

#[test]
fn quotient_matches_its_remainder_prediction() {
    // k is the remainder size; 8 to 12 bits per key put 87% to 92% of the keys per quotient.
    for (k, bits) in [(4, 8), (6, 10), (8, 12)] {
        let row = measure("test", &setup(named("quotient"), 4_000, 4_000 * bits, k)).unwrap();
        assert!(
            row.z_exact.abs() <= 4.0 && row.bits_ok(),
            "quotient r={k} {bits} bits/key: z_exact {} z_from_fill {}",
            row.z_exact,
            row.z_from_fill
        );
    }
}

#[test]
fn blocking_costs_rate_at_equal_space() {
    // At 16 bits per key and k = 11 the blocked filter's exact rate is well above the classic.
    let classic = FilterKind::CLASSIC.fpr_exact(4_000, 64_000, 11);
    let blocked = named("blocked").fpr_exact(4_000, 64_000, 11);
    assert!(blocked > 1.2 * classic, "{blocked} vs {classic}");
    // 240,000 queries: the expected z against the classic formula is about 10.
    let more_queries = Setup {
        queries: 240_000,
        ..setup(named("blocked"), 4_000, 64_000, 11)
    };
    let row = measure("test", &more_queries).unwrap();
    assert!(
        row.z_classic > 4.0,
        "the classic formula must miss it: z {}",
        row.z_classic
    );
}

proptest! {
    #[test]
    fn deleting_what_was_inserted_never_loses_the_rest(
        n in 1u64..1_500,
        m in 64u64..20_000,
        k in 1u32..=12,
        seed in any::<u64>(),
        hash_seed in any::<u64>(),
        stride in 2u64..5,
    ) {
        let (kind, k) = match k % 3 {
            0 => (named("counting"), k),
            1 => (named("cuckoo"), 4 + 2 * k),
            _ => (named("quotient"), k),
        };
        let mut filter = kind
            .build(n, kind.layout(m, k).unwrap(), k, HashScheme::MultiplyShift, hash_seed)
            .unwrap();
        let keys = KeySource::new(seed);
        keys.inserted(n).for_each(|key| filter.insert(key));
        // Deleting a key a full cuckoo or quotient filter refused could remove another's
        // fingerprint.
        prop_assume!(filter.failed_inserts().unwrap_or(0) == 0);
        for c in (0..n).step_by(stride as usize) {
            filter.delete(keys.key(c)).unwrap();
        }
        for c in (0..n).filter(|c| c % stride != 0) {
            prop_assert!(filter.contains(keys.key(c)));
        }
    }
}

#[test]
fn saturated_counters_stick_and_are_counted() {
    use bloomlab::structures::{CountingFilter, Filter, Membership};
    let mut filter = CountingFilter::new(1_000, 3, HashScheme::MultiplyShift, 1).unwrap();
    for _ in 0..20 {
        filter.insert(42);
    }
    assert_eq!(
        filter.overflows(),
        3 * 5,
        "each of 3 counters overflowed 5 times"
    );
    for _ in 0..20 {
        filter.delete(42).unwrap();
    }
    assert!(
        filter.contains(42),
        "a saturated counter is never decremented"
    );
    assert_eq!(filter.set_bits(), 3);
}

#[test]
fn structures_without_counts_refuse_to_delete() {
    for kind in [FilterKind::CLASSIC, named("blocked"), named("split-block")] {
        let k = if kind == named("split-block") { 8 } else { 4 };
        let mut filter = kind
            .build(
                1,
                kind.layout(4_096, k).unwrap(),
                k,
                HashScheme::MultiplyShift,
                1,
            )
            .unwrap();
        filter.insert(7);
        let error = filter.delete(7).unwrap_err().to_string();
        assert!(error.contains("cannot delete"), "{error}");
        assert!(filter.contains(7));
    }
}

#[test]
fn compare_sizes_every_structure_for_the_target() {
    let hidden = indicatif::ProgressBar::hidden();
    let sizes = bloomlab::experiments::compare::rows::TimingSizes {
        in_cache: 40_000,
        out_of_cache: Some(1 << 20),
    };
    let rows = bloomlab::experiments::compare::rows::compare(
        20_000,
        &[0.01],
        60_000,
        1,
        2,
        Some(sizes),
        &hidden,
    )
    .unwrap();
    assert_eq!(
        rows.len(),
        bloomlab::experiments::compare::rows::designed().len()
    );
    for row in &rows {
        let m = &row.measurement;
        assert!(
            m.z_exact.abs() <= 4.0 && m.bits_ok(),
            "{}: z {}",
            m.filter,
            m.z_exact
        );
        assert!(m.fpr_exact <= 0.0101, "{}: sized above target", m.filter);
        assert!(row.ns_insert_in_cache.is_some() && row.ns_query_out_of_cache.is_some());
        assert_eq!(
            row.supports_delete,
            ["counting", "cuckoo", "cuckoo-2", "cuckoo-8", "quotient"].contains(&m.filter.name())
        );
    }
    let ratio = |kind| {
        rows.iter()
            .find(|r| r.measurement.filter == kind)
            .unwrap()
            .ratio_to_floor
    };
    assert_eq!(format!("{:.3}", ratio(FilterKind::CLASSIC)), "1.443");
    assert!(ratio(named("counting")) > 5.5, "four bits per counter");
}

#[test]
fn binary_fuse_spends_near_the_floor_at_its_own_rate() {
    // 2^-8: 8-bit fingerprints in about 1.13-1.2 n slots, against the floor of 8 bits.
    let hidden = indicatif::ProgressBar::hidden();
    let rows = bloomlab::experiments::compare::rows::compare(
        100_000,
        &[1.0 / 256.0],
        200_000,
        3,
        4,
        None,
        &hidden,
    )
    .unwrap();
    let fuse = rows
        .iter()
        .find(|r| r.measurement.filter == named("binary-fuse"))
        .unwrap();
    let m = &fuse.measurement;
    assert_eq!(m.k, 8);
    // A static structure's row reports the table it built, and xorf's own hash.
    assert_eq!(m.m, m.memory_bits);
    assert_eq!(m.bits_per_key, m.memory_bits as f64 / m.n as f64);
    assert_eq!(m.fill_measured, 1.0);
    assert_eq!(m.hash.to_string(), "murmur3-fmix64");
    assert!(
        m.z_exact.abs() <= 4.0,
        "rate {} z {}",
        m.fpr_measured,
        m.z_exact
    );
    assert!(
        (1.05..=1.2).contains(&fuse.ratio_to_floor),
        "ratio {}",
        fuse.ratio_to_floor
    );
    assert!(!fuse.supports_delete);
}

#[test]
fn a_cuckoo_filter_is_not_sized_beyond_its_fingerprints() {
    let hidden = indicatif::ProgressBar::hidden();
    // 32-bit fingerprints reach 8/2^32 = 1.9e-9 and no lower: sized at 1e-3, not at 1e-10
    // (whose notes say so without measuring anything).
    let rows =
        bloomlab::experiments::compare::rows::compare(2_000, &[1e-3], 1_000, 3, 4, None, &hidden)
            .unwrap();
    assert!(rows.iter().any(|r| r.measurement.filter == named("cuckoo")));
    // The classic sizing formula is asymptotic: at n = 2000 it lands within 1% of ε.
    assert!(rows.iter().all(|r| r.measurement.fpr_exact <= 1.01e-3));
    let rates = [1e-10];
    let notes = bloomlab::experiments::compare::rows::notes(2_000, &rates, &rows);
    assert!(
        notes
            .iter()
            .any(|n| n.contains("not sized: the cuckoo filter"))
    );
}

#[test]
fn every_registered_structure_parses_from_its_own_name() {
    let all = FilterKind::all();
    assert_eq!(
        all.len(),
        FilterKind::own().len() + FilterKind::peers().len()
    );
    for kind in &all {
        let text = kind.to_string();
        assert_eq!(text.parse::<FilterKind>().unwrap(), *kind);
        let json = serde_json::to_string(kind).unwrap();
        assert_eq!(json, format!("\"{text}\""));
        assert_eq!(serde_json::from_str::<FilterKind>(&json).unwrap(), *kind);
    }
    assert_eq!(FilterKind::default(), FilterKind::CLASSIC);
    assert_eq!(all[0], FilterKind::CLASSIC);
}

#[test]
fn unknown_names_and_stray_arguments_are_refused_with_the_allowed_names() {
    let error = "bloomed".parse::<FilterKind>().unwrap_err();
    for kind in FilterKind::all() {
        assert!(error.contains(kind.name()), "{error}");
    }
    let error = "classic:7".parse::<FilterKind>().unwrap_err();
    assert!(error.contains("takes no argument"), "{error}");
}

#[test]
fn compare_sizes_exactly_the_structures_with_a_design() {
    let designed = bloomlab::experiments::compare::rows::designed();
    for kind in FilterKind::all() {
        let has_design = kind.structure().design.is_some() && !kind.is_peer();
        assert_eq!(designed.contains(&kind), has_design, "{kind}");
        let (m, k) = match kind.design(10_000, 0.01) {
            Ok(shape) => shape,
            Err(_) => continue,
        };
        assert_eq!(
            kind.layout(m, k).unwrap(),
            m,
            "{kind}: designs are laid out"
        );
    }
}

#[test]
#[cfg(not(feature = "peers"))]
fn a_peer_left_out_of_the_build_is_refused_by_name() {
    for peer in FilterKind::peers() {
        let error = peer
            .build(100, 1_000, 7, HashScheme::MultiplyShift, 1)
            .err()
            .unwrap();
        assert!(error.is_usage(), "{error}");
        assert!(error.to_string().contains("`peers` feature"), "{error}");
        assert!(peer.fpr_exact(100, 1_000, 7).is_nan());
    }
    crate::common::command()
        .args(["sweep-size", "--filter", "fastbloom", "--n", "1000"])
        .assert()
        .code(2)
        .stderr(predicates::str::contains("`peers` feature"));
}

#[test]
fn batches_answer_as_single_keys_do() {
    use bloomlab::pipeline::fill;
    use bloomlab::structures::{BATCH, count_present};
    let keys = KeySource::new(5);
    let n = 3 * BATCH as u64 + 17;
    for kind in FilterKind::all()
        .into_iter()
        .filter(|k| k.require_built().is_ok())
    {
        let k = kind.k_for(6);
        // ribbon-filter stores a row in a 64-bit word and needs about 3 rows a key.
        let m = match kind.name() {
            "ribbon-filter" => 4 * 64 * n,
            _ => 12 * n,
        };
        let build = || kind.build(n, m, k, HashScheme::MultiplyShift, 9).unwrap();
        let (mut one_by_one, mut batched) = (build(), build());
        keys.inserted(n).for_each(|key| one_by_one.insert(key));
        fill(&mut *batched, 0..n, |c| keys.key(c), false, &|_| {}).unwrap();
        let absent: Vec<u64> = keys.absent(n, 2 * n).collect();
        let single = absent
            .iter()
            .filter(|&&key| one_by_one.contains(key))
            .count() as u64;
        assert_eq!(count_present(&*batched, &absent).unwrap(), single, "{kind}");
        assert_eq!(batched.set_bits(), one_by_one.set_bits(), "{kind}");
        let mut answers = vec![false; 3];
        assert!(batched.contains_many(&absent[..4], &mut answers).is_err());
    }
}

#[test]
fn a_1024_bit_blocked_filter_sits_between_the_classic_and_the_512_bit_one() {
    let wide = named("blocked-1024");
    assert_eq!(
        wide.layout(64_001, 7).unwrap(),
        63 * 1024,
        "whole 1024-bit blocks"
    );
    let (n, m, k) = (4_000, 64_512, 9);
    let classic = FilterKind::CLASSIC.fpr_exact(n, m, k);
    let blocked = named("blocked").fpr_exact(n, m, k);
    let between = wide.fpr_exact(n, m, k);
    assert!(
        classic < between && between < blocked,
        "{classic} {between} {blocked}"
    );
    for bits in [8, 12] {
        let row = measure("test", &setup(wide.clone(), n, n * bits, k)).unwrap();
        assert!(
            row.z_exact.abs() <= 4.0 && row.bits_ok(),
            "{bits} bits/key: z_exact {} z_from_fill {}",
            row.z_exact,
            row.z_from_fill
        );
        assert_eq!(row.filter, wide);
    }
}

/// What a `Spec` builds from a rate.
mod spec {
    use bloomlab::structures::{FilterKind, REGISTRY, Sizing, Spec, Structure};
    use bloomlab::{Error, HashScheme};

    fn named(name: &str) -> FilterKind {
        FilterKind::named(name).unwrap()
    }

    /// A rate is the structure's design where it states one (10^4 keys at 1%: 95,851 bits
    /// and k = 7 for the classic filter), and the filter built by rate is the one built by
    /// that shape.
    #[test]
    fn a_rate_is_the_design_where_the_structure_states_one() {
        let spec =
            Spec::rate(FilterKind::CLASSIC, 10_000, 0.01).hashed(HashScheme::MultiplyShift, 3);
        let designed = spec.clone().designed().unwrap();
        assert_eq!(designed.sizing, Sizing::Shape { m: 95_851, k: 7 });
        assert!(!spec.sizes_itself());
        assert_eq!(spec.nominal(), (95_851, 7));
        let (mut by_rate, mut by_shape) =
            (spec.build(10_000).unwrap(), designed.build(10_000).unwrap());
        for key in 0..1_000 {
            by_rate.insert(key);
            by_shape.insert(key);
        }
        assert_eq!(by_rate.set_bits(), by_shape.set_bits());
        let blocked = Spec::rate(named("blocked"), 10_000, 0.01)
            .designed()
            .unwrap();
        let (m, k) = named("blocked").design(10_000, 0.01).unwrap();
        assert_eq!(blocked.sizing, Sizing::Shape { m, k });
    }

    /// A structure without a design keeps its rate and sizes itself by its own constructor;
    /// one sized neither way is refused by name.
    #[test]
    fn a_structure_without_a_design_sizes_itself_or_is_refused() {
        let built = |s: &&&'static Structure| FilterKind::of(s).require_built().is_ok();
        for structure in REGISTRY.iter().filter(built).filter(|s| s.design.is_none()) {
            let spec = Spec::rate(FilterKind::of(structure), 1_000, 0.01);
            match structure.for_rate {
                Some(_) => {
                    assert!(spec.sizes_itself(), "{}", structure.name);
                    assert_eq!(spec.clone().designed().unwrap(), spec);
                }
                None => assert!(
                    matches!(spec.build(1_000), Err(Error::Unsupported { .. })),
                    "{}",
                    structure.name
                ),
            }
        }
    }
}

/// The static perfect-hash table and the cuckoo filter at their limits.
mod fingerprints {
    use bloomlab::structures::CuckooFilter;
    use bloomlab::structures::perfect_hash::{PUBLISHED_HASH_BITS, PerfectHashFilter};
    use bloomlab::{Filter, HashScheme, KeySource, Membership};

    fn filled(n: u64, r: u32, seed: u64) -> PerfectHashFilter {
        let keys = KeySource::new(seed);
        let mut filter = PerfectHashFilter::new(r, HashScheme::MultiplyShift, seed).unwrap();
        let batch: Vec<u64> = (0..n).map(|c| keys.key(c)).collect();
        filter.insert_many(&batch).unwrap();
        filter
    }

    /// Every inserted key is found, and the rate on 2·10^6 absent keys lies within 4
    /// standard errors of 2^-r at r = 4 and r = 8 (binomial, fixed seeds).
    #[test]
    fn no_false_negative_and_the_rate_is_two_to_the_minus_r() {
        let n = 20_000;
        for (r, seed) in [(4u32, 1u64), (8, 2)] {
            let filter = filled(n, r, seed);
            let keys = KeySource::new(seed);
            assert!((0..n).all(|c| filter.contains(keys.key(c))), "r = {r}");
            let queries = 2_000_000u64;
            let hits = (n..n + queries)
                .filter(|&c| filter.contains(keys.key(c)))
                .count();
            let p = 0.5f64.powi(r as i32);
            let se = (p * (1.0 - p) / queries as f64).sqrt();
            let z = (hits as f64 / queries as f64 - p) / se;
            assert!(z.abs() < 4.0, "r = {r}: z = {z}");
        }
    }

    /// The perfect hash's own space lies within 10% of the published 2.1 bits per key
    /// (Beling 2023; the `ph` README), and the whole table is that plus r bits per key.
    #[test]
    fn its_space_is_the_published_bits_per_key() {
        let n = 100_000;
        let filter = filled(n, 8, 3);
        let hash_bits = filter.perfect_hash_bits().unwrap() as f64 / n as f64;
        assert!(
            (hash_bits - PUBLISHED_HASH_BITS).abs() <= 0.1 * PUBLISHED_HASH_BITS,
            "{hash_bits} bits per key against {PUBLISHED_HASH_BITS}"
        );
        let total = filter.memory_bits() as f64 / n as f64;
        assert!((total - 8.0 - hash_bits).abs() < 1e-9, "{total}");
    }

    /// The same keys build the same table: results regenerate byte for byte.
    #[test]
    fn the_build_is_deterministic() {
        let a = filled(50_000, 6, 4);
        let b = filled(50_000, 6, 4);
        assert_eq!(a.memory_bits(), b.memory_bits());
        let keys = KeySource::new(9);
        assert!((0..10_000).all(|c| a.contains(keys.key(c)) == b.contains(keys.key(c))));
    }

    /// Twice the keys a table holds at full load: the inserts beyond it fail, are counted,
    /// and every key whose insert succeeded is still found.
    #[test]
    fn an_overfilled_filter_refuses_and_counts_but_loses_no_stored_key() {
        let k = 8;
        let capacity = 4_000;
        let m = capacity * u64::from(k);
        let mut filter = CuckooFilter::new(m, k, HashScheme::MultiplyShift, 7).unwrap();
        let keys = KeySource::new(3);
        let stored: Vec<u64> = (0..2 * capacity)
            .map(|c| keys.key(c))
            .filter(|&key| filter.try_insert(key))
            .collect();
        let failed = filter.failed_inserts();
        assert!(failed > 0, "twice the capacity must overflow");
        assert_eq!(stored.len() as u64 + failed, 2 * capacity);
        assert_eq!(Filter::failed_inserts(&filter), Some(failed));
        let fill = filter.set_bits() as f64 / filter.memory_bits() as f64;
        assert!(fill <= 1.0, "fill {fill}");
        let missing = stored.iter().filter(|&&key| !filter.contains(key)).count();
        assert_eq!(missing, 0, "false negatives among stored keys");
    }
}
