//! The timing harness: every contender is the filter it claims to be (its measured rate
//! agrees with its design's exact rate within 4 binomial standard errors at fixed seeds), and
//! every row carries its ratios. Speed is reported by `bloomlab bench` and `cargo bench`,
//! never asserted here.

use bloomlab::bench::{BenchConfig, BenchSize, contenders, run};
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
    };
    let (rows, limits) = run(&config, &ProgressBar::hidden()).unwrap();
    let all = contenders(false);
    let peers_built = all.iter().any(|c| c.peer != "bloomlab");
    // Three operations; bloomlab's twice (key by key and batched); split-block (k = 8) once.
    let per_k = |c: &bloomlab::bench::Contender| if c.peer == "bloomlab" { 6 } else { 3 };
    let expected: usize = all
        .iter()
        .map(|c| per_k(c) * if c.structure == "split-block" { 1 } else { 2 })
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
        let has_peer = row.structure == "classic" && peers_built;
        assert_eq!(row.ratio_to_fastest_peer.is_some(), has_peer, "{row:?}");
        assert!(row.ratio_to_limit > 0.0 && row.lines_per_key >= 1.0);
    }
}
