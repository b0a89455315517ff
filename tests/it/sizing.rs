//! The essay's sizing figures, computed by the code under test.

use bloomlab::experiments::size::{SizeRequest, plan};
use bloomlab::theory::*;

fn round_to(x: f64, decimals: i32) -> f64 {
    let scale = 10f64.powi(decimals);
    (x * scale).round() / scale
}

#[test]
fn bits_per_key_at_each_rate() {
    assert_eq!(round_to(bits_per_key_for_fpr(0.01), 2), 9.59);
    assert_eq!(round_to(bits_per_key_for_fpr(0.001), 2), 14.38);
    assert_eq!(round_to(bits_per_key_for_fpr(0.0001), 2), 19.17);
    assert_eq!(round_to(bits_per_key_for_fpr(1e-6), 1), 28.8);
    let per_decade = bits_per_key_for_fpr(0.001) - bits_per_key_for_fpr(0.01);
    assert_eq!(round_to(per_decade, 2), 4.79);
}

#[test]
fn optimum_and_its_rate() {
    assert_eq!(round_to(optimal_k(10.0), 2), 6.93);
    assert_eq!(format!("{:.3}%", 2f64.powi(-7) * 100.0), "0.781%");
    assert_eq!(round_to(fpr_closed_form(1.0, 7) * 100.0, 3), 0.781);
    // At the real optimum the rate is 2^-k and the overhead 1/ln 2 at every rate.
    for eps in [0.01, 0.001, 1e-6] {
        let bits = bits_per_key_for_fpr(eps);
        assert!((fpr_at_optimum(bits) - eps).abs() < 1e-12 * eps.max(1e-12) * 1e3);
        assert!((bits / information_floor(eps) - 1.0 / std::f64::consts::LN_2).abs() < 1e-12);
    }
}

#[test]
fn the_overfill_cliff_in_closed_form() {
    assert_eq!(round_to(fill_closed_form(1.5), 4), 0.6464);
    assert_eq!(round_to(fpr_closed_form(1.5, 7) * 100.0, 2), 4.72);
    assert_eq!(round_to(fill_closed_form(2.0), 4), 0.75);
    assert_eq!(round_to(fpr_closed_form(2.0, 7) * 100.0, 2), 13.35);
    let ratio_14 = fpr_closed_form(2.0, 14) / fpr_closed_form(1.0, 14);
    assert_eq!(ratio_14.round(), 292.0);
    assert_eq!(round_to(overfill_sensitivity(7.0), 2), 4.85);
}

#[test]
fn plan_from_each_consistent_pair() {
    let by_rate = plan(&SizeRequest {
        n: Some(4000),
        fpr: Some(0.01),
        ..Default::default()
    })
    .unwrap();
    let design = &by_rate[0];
    assert_eq!(design.m, 38_341);
    assert_eq!(design.k, 7);
    assert!((design.fill_at_optimum - 0.5).abs() < 1e-4);
    assert_eq!(format!("{:.4}", design.overhead_ratio), "1.4427");
    assert_eq!(by_rate.len(), 5);
    assert!(by_rate.windows(2).all(|w| w[1].fpr > w[0].fpr));
    let by_space = plan(&SizeRequest {
        m: Some(40_000),
        bits_per_key: Some(10.0),
        ..Default::default()
    })
    .unwrap();
    assert_eq!(by_space[0].n_design, 4000);
    assert!(plan(&SizeRequest::default()).is_err());
}

#[test]
fn every_structure_that_sizes_itself_is_listed_above_the_floor() {
    use bloomlab::experiments::size::structures;
    use bloomlab::structures::FilterKind;
    let (rows, notes) = structures(100_000, 0.001, None).unwrap();
    let sizes_itself = FilterKind::all().into_iter().filter(|kind| {
        let s = kind.structure();
        kind.require_built().is_ok() && (s.design.is_some() || s.for_rate.is_some())
    });
    assert_eq!(rows.len() + notes.len(), sizes_itself.count(), "{notes:?}");
    for row in &rows {
        // log2(1/ε) bits per key is a lower bound for any structure at rate ε.
        assert!(
            row.ratio_to_floor >= 1.0,
            "{} below the floor",
            row.structure
        );
        assert!(row.fpr_design <= 0.001 * 1.05, "{} misses ε", row.structure);
        assert!(row.k > 0 && row.memory_bits > 0);
    }
    // A cuckoo filter reaches 1e-6 with 23-bit fingerprints, and nothing below 8/2^32: left
    // out there, with a note.
    let (rows, _) = structures(10_000, 1e-6, None).unwrap();
    let cuckoo = rows.iter().find(|r| r.structure == "cuckoo").unwrap();
    assert_eq!(cuckoo.k, 23);
    let (rows, notes) = structures(10_000, 1e-10, None).unwrap();
    assert!(rows.iter().all(|r| r.structure != "cuckoo"));
    assert!(notes.iter().any(|n| n.contains("cuckoo")), "{notes:?}");
}

#[test]
fn measured_structures_match_their_design_rates() {
    use bloomlab::experiments::size::{Measuring, structures};
    // Fixed seeds; 200,000 queries at ε = 1% (2,000 expected false positives): each z within
    // 4 binomial standard errors of the design rate.
    let how = Measuring {
        queries: 200_000,
        seed: 5,
    };
    let (rows, _) = structures(20_000, 0.01, Some(&how.plan(20_000, 0.01))).unwrap();
    for row in &rows {
        let z = row.z_design.unwrap();
        assert!(z.abs() <= 4.0, "{}: z {z}", row.structure);
        let (low, high) = (row.ci_low.unwrap(), row.ci_high.unwrap());
        assert!(low <= row.fpr_measured.unwrap() && row.fpr_measured.unwrap() <= high);
    }
}
