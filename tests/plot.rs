//! The plates: well-formed SVG, one circle per measured point, byte-identical for equal seeds.

use bloomlab::experiments::{Outcome, find, registry};
use bloomlab::plot::render_svg;
use indicatif::ProgressBar;

/// Runs a registered experiment with parameters given as an experiment file's `[params]`.
fn run(name: &str, params: &str) -> Outcome {
    let table: toml::Table = toml::from_str(params).unwrap();
    find(name)
        .unwrap()
        .prepare_table(&table)
        .unwrap()
        .run(&ProgressBar::hidden())
        .unwrap()
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
    for experiment in registry() {
        let name = experiment.name();
        let params = match name {
            "audit" => "n = 2000\nfpr = 0.05\nqueries = 4000\naudited = \"crates\"",
            "compare" => "n = 2000\nqueries = 4000",
            _ => "queries = 4000\nhash_seed = 2",
        };
        let outcome = run(name, params);
        // seed-check draws only its re-seeded rows.
        let expected = match name {
            "seed-check" => outcome
                .table
                .records
                .iter()
                .filter(|r| r["check"] == "hash-seed")
                .count(),
            _ => outcome.measurements.len(),
        };
        let svg = render_svg(&outcome.plate).unwrap();
        assert_eq!(circles(&svg), expected, "{name}");
        assert!(svg.contains("false-positive rate"), "{name}: y axis label");
    }
}

#[test]
fn the_curve_at_three_settings_has_a_legend_entry_per_k() {
    let outcome = run(
        "sweep-size",
        "k = [4, 6, 8]\nbits_per_key = \"2..16\"\nqueries = 4000",
    );
    let svg = render_svg(&outcome.plate).unwrap();
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
    let svg = |hash_seed: u64| {
        let outcome = run(
            "sweep-k",
            &format!("queries = 4000\nhash_seed = {hash_seed}"),
        );
        render_svg(&outcome.plate).unwrap()
    };
    assert_eq!(svg(2), svg(2));
    assert_ne!(svg(2), svg(3));
}
