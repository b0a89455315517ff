//! The peer-crate adapters and the audit: no false negatives, each adapter's rate within 4
//! binomial standard errors (z bound 4, fixed seeds) of the rate its own layout predicts, the
//! audit of bloomlab's classic filter agreeing with its configured rate, and determinism
//! where the crate takes a seed.
#![cfg(feature = "peers")]

use bloomlab::HashScheme;
use bloomlab::KeySource;
use bloomlab::experiments::Experiment;
use bloomlab::experiments::audit::{Audit, AuditParams, AuditPlan, Audited, run};
use bloomlab::params::{Count, SeedParams, ValueList};
use bloomlab::pipeline::measure;
use bloomlab::pipeline::measurement::Setup;
use bloomlab::structures::peers::{Growable, SubFilter};
use bloomlab::structures::{Family, Filter, FilterKind, Membership, Spec};
use indicatif::ProgressBar;
use proptest::prelude::*;

/// A registered structure by name.
fn named(name: &str) -> FilterKind {
    FilterKind::named(name).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Built by shape or by rate, every key inserted tests present: also for a growable
    /// filter filled far past its planned n.
    #[test]
    fn no_false_negatives(
        n in 1u64..3_000,
        bits_per_key in 2u64..24,
        k in 1u32..=12,
        which in 0usize..3,
        by_rate in any::<bool>(),
        seed in any::<u64>(),
        hash_seed in any::<u64>(),
    ) {
        let kind = &FilterKind::peers()[which];
        let filter: Option<Box<dyn Filter>> = if by_rate {
            let fpr = 0.5f64.powi((bits_per_key / 2).max(1) as i32);
            let n = (n / 4).max(1);
            let spec = Spec::rate(kind.clone(), n, fpr).hashed(HashScheme::MultiplyShift, hash_seed);
            Some(spec.build(n).unwrap())
        } else {
            kind.layout(n * bits_per_key, k)
                .ok()
                .map(|m| kind.build(n, m, k, HashScheme::MultiplyShift, hash_seed).unwrap())
        };
        if let Some(mut filter) = filter {
            let keys = KeySource::new(seed);
            keys.inserted(n).for_each(|key| filter.insert(key));
            prop_assert!(keys.inserted(n).all(|key| filter.contains(key)));
        }
    }
}

fn setup(filter: FilterKind, n: u64, bits_per_key: u64, k: u32, hash_seed: u64) -> Setup {
    let m = filter.layout(n * bits_per_key, k).unwrap();
    Setup::new(
        Spec::shape(filter, m, k).hashed(HashScheme::MultiplyShift, hash_seed),
        n,
        200_000,
        31,
    )
}

#[test]
fn adapters_match_their_own_predictions() {
    // A static peer (ribbon-filter) spends 64 bits a row: tests/peer_tables.rs sizes it.
    for kind in FilterKind::peers().into_iter().filter(|k| !k.is_static()) {
        for (bits, k) in [(8, 5), (10, 7), (16, 11)] {
            // A structure that fixes k (a split-block filter: a bit in each of 8 words) takes its own.
            let k = kind.k_for(k);
            let row = measure("test", &setup(kind.clone(), 20_000, bits, k, 32)).unwrap();
            assert!(
                row.z_exact.abs() <= 4.0 && row.bits_ok(),
                "{kind} {bits} bits/key k={k}: measured {} exact {} (z {}), z_from_fill {}",
                row.fpr_measured,
                row.fpr_exact,
                row.z_exact,
                row.z_from_fill
            );
            // Each crate hashes with its own function (sbbf-rs takes hashes: bloomlab's
            // multiply-shift), and its row says which.
            let own_hash = match kind.name() {
                "growable-bloom-filter" => "xxh3",
                "sbbf" => "multiply-shift",
                "qfilter" => "foldhash-portable",
                _ => "siphash-1-3",
            };
            assert_eq!(row.hash.to_string(), own_hash, "{kind}");
        }
    }
}

#[test]
fn growable_prediction_follows_its_growth() {
    // By shape the first sub-filter holds about m ln2 / k keys; 4000 keys at 4 bits per key
    // and k = 7 overflow it, and the rate is that of two sub-filters.
    let row = measure(
        "test",
        &setup(named("growable-bloom-filter"), 4_000, 4, 7, 0),
    )
    .unwrap();
    assert!(
        row.fill_measured > 1.0,
        "it grew past m: fill {}",
        row.fill_measured
    );
    assert!(row.z_exact.abs() <= 4.0, "z_exact {}", row.z_exact);
}

#[test]
fn growable_layout_is_read_from_the_crate_itself() {
    let mut filter = Growable::by_rate(1_000, 0.01);
    let keys = KeySource::new(5);
    keys.inserted(2_500).for_each(|key| filter.insert(key));
    let subs = filter.sub_filters();
    assert_eq!(subs.len(), 2, "1000 + 2000 keys of capacity hold 2500");
    for (j, sub) in subs.iter().enumerate() {
        let planned = SubFilter::planned(1_000, 0.01, j as u32);
        assert_eq!((sub.bytes, sub.slices), (planned.bytes, planned.slices));
        assert_eq!(sub.slice_bits, planned.slice_bits);
    }
    // The same bits counted independently, from the crate's JSON form.
    let json = serde_json::to_value(filter.inner()).unwrap();
    let set: u64 = json["b"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|b| b["b"].as_array().unwrap().iter())
        .map(|byte| u64::from((byte.as_u64().unwrap() as u8).count_ones()))
        .sum();
    assert_eq!(filter.set_bits(), set);
    assert_eq!(
        filter.memory_bits(),
        subs.iter().map(|s| 8 * s.bytes).sum::<u64>()
    );
}

fn audit_params(filter: Option<FilterKind>, hash_seed: u64) -> AuditParams {
    AuditParams {
        n: Some(Count(20_000)),
        fpr: Some(ValueList(vec![0.01])),
        loads: Some(ValueList(vec![1.0, 2.0])),
        audited: filter.is_none().then_some(Audited::Crates),
        filter: filter.into_iter().collect(),
        seeds: SeedParams {
            seed: None,
            hash_seed: Some(hash_seed),
        },
        ..AuditParams::default()
    }
}

#[test]
fn audit_of_the_classic_filter_agrees_with_its_configured_rate() {
    let plan = AuditPlan::of(&audit_params(Some(FilterKind::CLASSIC), 2)).unwrap();
    let rows = run(&plan, &ProgressBar::hidden()).unwrap();
    let at_n = &rows[0];
    assert_eq!(at_n.load, 1.0);
    assert!(at_n.resolved && at_n.detectable_excess <= 0.10);
    assert!(
        at_n.z_configured.abs() <= 4.0 && !at_n.above_configured,
        "z {}",
        at_n.z_configured
    );
    // At twice the planned n the cliff is flagged.
    assert!(rows[1].above_configured && rows[1].measurement.fpr_measured > 10.0 * 0.01);
}

#[test]
fn seeded_adapters_repeat_and_the_unseeded_one_is_said() {
    let rates = |hash_seed| -> Vec<(FilterKind, u64, bool)> {
        let plan = AuditPlan::of(&audit_params(None, hash_seed)).unwrap();
        run(&plan, &ProgressBar::hidden())
            .unwrap()
            .iter()
            .map(|r| {
                (
                    r.measurement.filter.clone(),
                    r.measurement.false_positives,
                    r.seeded == Some(true),
                )
            })
            .collect()
    };
    let (first, again, reseeded) = (rates(2), rates(2), rates(3));
    assert_eq!(first, again, "same seeds, same counts");
    for ((kind, count, seeded), (_, other, _)) in first.iter().zip(&reseeded) {
        assert_eq!(*seeded, kind.accepts_seed());
        if !seeded {
            assert_eq!(
                count, other,
                "{kind} takes no seed: a new hash seed changes nothing"
            );
        }
    }
    assert!(
        first.iter().zip(&reseeded).any(|(a, b)| a.2 && a.1 != b.1),
        "a new hash seed changes the seeded crates' counts"
    );
    let plan = Audit::plan(&audit_params(None, 2)).unwrap();
    let outcome = Audit::run(&plan, &ProgressBar::hidden()).unwrap();
    assert!(
        outcome
            .table
            .notes
            .iter()
            .any(|n| n.starts_with("not seeded: growable-bloom-filter"))
    );
}

#[test]
fn too_few_queries_and_zero_counts_are_said_not_hidden() {
    let params = AuditParams {
        queries: Some(Count(1_000)),
        fpr: Some(ValueList(vec![0.0001])),
        loads: Some(ValueList(vec![1.0])),
        ..audit_params(Some(FilterKind::CLASSIC), 2)
    };
    let outcome = Audit::run(&Audit::plan(&params).unwrap(), &ProgressBar::hidden()).unwrap();
    assert!(
        outcome
            .table
            .notes
            .iter()
            .any(|n| n.starts_with("unresolved:"))
    );
    assert!(outcome.table.notes.iter().any(|n| n.contains("not 0")));
}

/// Every peer is paired with bloomlab's own structure of its design, the one `bench` times it
/// beside ([`FilterKind::of_family`]): the pairs below are read off each adapter's crate
/// (its README's design), so a peer registered with the wrong family, or a new peer nobody
/// paired, fails here; a peer of no shared design pairs with nothing.
#[test]
fn every_peer_is_paired_with_the_own_structure_of_its_design() {
    let designs = [
        ("fastbloom", Some("classic")),
        ("bloomfilter", Some("classic")),
        ("growable-bloom-filter", Some("scalable")),
        ("sbbf", Some("split-block")),
        ("qfilter", Some("quotient")),
        ("cuckoofilter", Some("cuckoo")),
        ("ribbon-filter", Some("ribbon")),
    ];
    assert!(FilterKind::of_family(Family::Alone).is_none());
    let peers = FilterKind::peers();
    assert_eq!(peers.len(), designs.len(), "a peer without a stated design");
    for peer in peers {
        let (_, own) = designs
            .iter()
            .find(|(name, _)| *name == peer.name())
            .unwrap_or_else(|| panic!("{} has no stated design", peer.name()));
        let paired = FilterKind::of_family(peer.family());
        assert_eq!(
            paired.as_ref().map(FilterKind::name),
            *own,
            "{}",
            peer.name()
        );
        if let Some(paired) = paired {
            assert!(!paired.is_peer() && paired.family() == peer.family());
        }
    }
}
