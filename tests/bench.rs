//! The timing harness: every contender is the filter it claims to be (its measured rate
//! agrees with the classic formula within 4 binomial standard errors at fixed seeds). Speed is
//! reported by `bloomlab bench` and `cargo bench`, never asserted here.

use bloomlab::bench::{BenchConfig, BenchSize, contenders, run};
use bloomlab::stats::z_score;
use bloomlab::theory::fpr_classic;
use indicatif::ProgressBar;

#[test]
fn every_contender_measures_the_rate_of_its_m_and_k() {
    let config = BenchConfig {
        sizes: vec![BenchSize {
            label: "in-cache",
            m: 40_000,
        }],
        ks: vec![4, 7],
        bits_per_key: 10.0,
        queries: 60_000,
        repeats: 1,
        seed: 1,
    };
    let rows = run(&config, &ProgressBar::hidden()).unwrap();
    assert_eq!(rows.len(), 2 * contenders().len());
    for row in &rows {
        let predicted = fpr_classic(row.n, row.m, row.k);
        let z = z_score(row.fpr_measured, predicted, config.queries);
        assert!(z.abs() <= 4.0, "{}: k={} z={z}", row.filter, row.k);
        assert!(row.ns_insert > 0.0 && row.ns_query_absent > 0.0);
        assert_eq!(row.ratio_insert.is_some(), contenders().len() > 1);
    }
}
