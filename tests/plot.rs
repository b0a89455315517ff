//! The plates: well-formed SVG, one circle per measured point, byte-identical for equal seeds.

use bloomlab::experiments::{Experiment, Rows};
use bloomlab::params::{Params, ValueList};
use bloomlab::plot::render_svg;
use indicatif::ProgressBar;

fn params(hash_seed: u64) -> Params {
    Params {
        queries: Some(4_000),
        hash_seed: Some(hash_seed),
        ..Params::default()
    }
}

fn circles(svg: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == "circle")
        .count()
}

#[test]
fn each_plate_has_one_point_per_measured_row() {
    for experiment in Experiment::ALL {
        let outcome = experiment.run(&params(2), &ProgressBar::hidden()).unwrap();
        let expected = match &outcome.rows {
            Rows::SeedCheck(rows) => rows.iter().filter(|r| r.check == "hash-seed").count(),
            _ => outcome.measurements().len(),
        };
        let svg = render_svg(&outcome).unwrap();
        assert_eq!(circles(&svg), expected, "{experiment}");
        assert!(
            svg.contains("false-positive rate"),
            "{experiment}: y axis label"
        );
    }
}

#[test]
fn the_curve_at_three_settings_has_a_legend_entry_per_k() {
    let p = Params {
        k: Some(ValueList(vec![4.0, 6.0, 8.0])),
        bits_per_key: Some(ValueList((2..=16).map(f64::from).collect())),
        ..params(2)
    };
    let outcome = Experiment::SweepSize
        .run(&p, &ProgressBar::hidden())
        .unwrap();
    let svg = render_svg(&outcome).unwrap();
    assert_eq!(circles(&svg), 45);
    for k in [4, 6, 8] {
        assert!(
            svg.contains(&format!("k = {k}: classic")),
            "legend for k = {k}"
        );
    }
}

#[test]
fn plates_are_byte_identical_for_equal_seeds() {
    let run = |hash_seed| {
        let outcome = Experiment::SweepK
            .run(&params(hash_seed), &ProgressBar::hidden())
            .unwrap();
        render_svg(&outcome).unwrap()
    };
    assert_eq!(run(2), run(2));
    assert_ne!(run(2), run(3));
}
