//! The timing harness: every contender is the filter it claims to be (its measured rate
//! agrees with its design's exact rate within 4 binomial standard errors at fixed seeds), and
//! every row carries its ratios. Speed is reported by `bloomlab bench` and `cargo bench`,
//! never asserted here.

use bloomlab::bench::{BenchConfig, BenchSize, bench_k, contenders, run};
use bloomlab::stats::z_score;
use bloomlab::structures::FilterKind;
use indicatif::ProgressBar;

#[test]
fn every_contender_measures_the_rate_of_its_design_and_is_compared_like_with_like() {
    let config = BenchConfig {
        sizes: vec![BenchSize {
            label: "in-cache",
            m: 40_000,
        }],
        ks: vec![4, 7],
        bits_per_key: 10.0,
        queries: 60_000,
        passes: 1,
        seed: 1,
        full: false,
        simd: None,
    };
    let (rows, limits) = run(&config, &ProgressBar::hidden()).unwrap();
    let all = contenders();
    let peers_built = all.iter().any(|c| c.peer != "bloomlab");
    // Three operations, bloomlab's twice (key by key and batched), at each distinct k a
    // design takes for 4 and 7 (split-block 8 alone, cache-sector 4 and 8).
    let per_k = |c: &bloomlab::bench::Contender| if c.peer == "bloomlab" { 6 } else { 3 };
    let expected: usize = all
        .iter()
        .map(|c| {
            let (four, seven) = (bench_k(&c.design, 4), bench_k(&c.design, 7));
            per_k(c) * if four == seven { 1 } else { 2 }
        })
        .sum();
    assert_eq!(rows.len(), expected);
    assert_eq!(limits.len(), 1);
    for row in &rows {
        let kind = FilterKind::named(&row.structure).unwrap();
        let predicted = kind.fpr_exact(row.n, row.m, row.k);
        let z = z_score(row.fpr_measured, predicted, config.queries);
        assert!(
            z.abs() <= 4.0,
            "{} {}: k={} z={z}",
            row.structure,
            row.peer,
            row.k
        );
        assert!(
            row.ns_per_key > 0.0 && row.ns_min <= row.ns_per_key && row.ns_per_key <= row.ns_max
        );
        let has_peer = ["classic", "split-block"].contains(&row.structure.as_str()) && peers_built;
        assert_eq!(row.ratio_to_fastest_peer.is_some(), has_peer, "{row:?}");
        assert!(row.ratio_to_limit > 0.0 && row.lines_per_key >= 1.0);
    }
}

/// The workload runner: one row per mix, size, access and mode (key by key, batched, for
/// one filter and for many); every present query found;
/// the absent share as the mix says and the measured rate that of the design (each within
/// 4 binomial standard errors at seed 1). Times are reported, never asserted.
#[test]
fn workloads_find_every_present_key_and_measure_the_designs_rate() {
    use bloomlab::bench::workloads::{ACCESS, MIXES, STRUCTURES, WorkloadConfig, run};
    let config = WorkloadConfig {
        mix_sizes: vec![BenchSize {
            label: "in-cache",
            m: 40_000,
        }],
        working_set_bytes: 80_000,
        keys_per_small_filter: 1_000,
        k: 7,
        bits_per_key: 10.0,
        queries: 40_000,
        passes: 1,
        seed: 1,
    };
    let rows = run(&config, &ProgressBar::hidden()).unwrap();
    let per_structure = (MIXES.len() + ACCESS.len()) * 2;
    assert_eq!(rows.len(), STRUCTURES.len() * per_structure);
    let q = config.queries as f64;
    for row in &rows {
        assert_eq!(row.present_missed, 0, "{row:?}");
        let share_absent = if row.workload.ends_with("95% present") {
            0.05
        } else {
            0.95
        };
        let sd = (q * share_absent * (1.0 - share_absent)).sqrt();
        assert!(
            (row.queries_absent as f64 - q * share_absent).abs() <= 4.0 * sd,
            "{row:?}"
        );
        let kind = FilterKind::named(&row.structure).unwrap();
        let predicted = kind.fpr_exact(row.n, row.m, row.k);
        let z = z_score(row.fpr_measured, predicted, row.queries_absent);
        assert!(z.abs() <= 4.0, "{row:?}: z={z}");
        assert!(row.ns_gross > 0.0 && row.ns_net.is_finite(), "{row:?}");
    }
    let working_set: Vec<_> = rows.iter().filter(|r| r.filters > 1).collect();
    assert_eq!(working_set.len(), STRUCTURES.len() * ACCESS.len() * 2);
    assert!(working_set.iter().all(|r| r.filters == 64));
    assert_eq!(
        working_set.iter().filter(|r| r.batched).count(),
        working_set.len() / 2
    );
}

/// The notes that flag a shared machine.
mod trust {
    use bloomlab::bench::machine::{Machine, trust_notes};
    use bloomlab::pipeline::sharing::Shared;
    use bloomlab::pipeline::timing::LineRate;

    /// A busy neighbour or a wide spread of line passes is flagged; a quiet run is not.
    #[test]
    fn the_notes_flag_a_shared_machine_and_a_wide_spread() {
        let limit = |spread| LineRate {
            bytes: 5000,
            dependent_ns: 1.0,
            independent_ns: 1.0,
            independent_spread: spread,
        };
        let shared = |others| Shared {
            others: Some(others),
            load: (Some(1.0), Some(1.1)),
        };
        let flagged = |notes: Vec<String>| notes.iter().filter(|n| n.starts_with("NOT")).count();
        assert_eq!(flagged(trust_notes(&shared(0.1), &[limit(1.1)], 2)), 0);
        assert_eq!(flagged(trust_notes(&shared(0.9), &[limit(1.1)], 2)), 1);
        assert_eq!(flagged(trust_notes(&shared(0.1), &[limit(1.8)], 2)), 1);
        assert!(!Machine::here().model.is_empty());
    }
}

/// Where `bench --full --out` writes the workloads.
mod workloads_beside {
    use std::path::Path;

    use bloomlab::bench::workloads::beside;

    #[test]
    fn the_workloads_of_a_full_bench_go_beside_its_output() {
        assert_eq!(
            beside(Path::new("out/bench.csv")),
            Path::new("out/bench.workloads.csv")
        );
        assert_eq!(beside(Path::new("bench")), Path::new("bench.workloads"));
    }
}
