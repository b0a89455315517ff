//! The plates: well-formed SVG, a point per measured row, one marker per point in a shape of
//! its series, the legend beside the data, byte-identical for equal seeds.

use bloomlab::experiments::{Outcome, find, registry};
use bloomlab::plot::{Axis, Colour, LEGEND_WIDTH, Mark, PANEL, Panel, Plate, Series, render_svg};
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

/// The elements of each tag in the SVG, which must be well-formed.
fn count(svg: &str, tag: &str) -> usize {
    let doc = roxmltree::Document::parse(svg).expect("well-formed SVG");
    assert_eq!(doc.root_element().tag_name().name(), "svg");
    doc.descendants()
        .filter(|n| n.tag_name().name() == tag)
        .count()
}

/// The measured points a plate draws.
fn measured_points(plate: &Plate) -> usize {
    plate
        .panels
        .iter()
        .flat_map(|p| &p.series)
        .filter(|s| s.mark == Mark::Measured)
        .map(|s| s.points.len())
        .sum()
}

#[test]
fn each_plate_has_one_point_per_measured_row() {
    for experiment in registry() {
        let name = experiment.name();
        let params = match name {
            "audit" => "n = 2000\nfpr = 0.05\nqueries = 4000\naudited = \"crates\"",
            "compare" => "n = 2000\nfpr = [0.05, 0.01, 0.002]\nqueries = 4000",
            "advise" => {
                "n = 10000\nqueries = 4000\nwork_ns = \"20\"\nbits_per_key = 10\nmax_fpr = 0.05"
            }
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
        assert_eq!(measured_points(&outcome.plate), expected, "{name}");
        let svg = render_svg(&outcome.plate).unwrap();
        assert!(count(&svg, "text") > 0, "{name}: well-formed, with text");
        assert!(svg.contains("false-positive rate"), "{name}: y axis label");
    }
}

#[test]
fn the_curve_at_three_settings_has_a_legend_entry_per_k() {
    let outcome = run(
        "sweep-size",
        "k = [4, 6, 8]\nbits_per_key = \"2..16\"\nqueries = 4000",
    );
    assert_eq!(measured_points(&outcome.plate), 45);
    let svg = render_svg(&outcome.plate).unwrap();
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

/// Three measured series of three points each, labelled, in the first three palette colours.
fn three_series() -> Plate {
    let series = (0..3)
        .map(|i| Series {
            label: Some(format!("series {i}")),
            colour: Colour::Palette(i),
            mark: Mark::Measured,
            points: (1..=3)
                .map(|x| bloomlab::plot::Point {
                    x: f64::from(x),
                    y: 0.01 * f64::from(x) * (i + 1) as f64,
                    interval: Some((0.008 * f64::from(x), 0.012 * f64::from(x) * 3.0)),
                })
                .collect(),
        })
        .collect();
    Plate {
        panels: vec![Panel {
            title: "three".into(),
            x: Axis::linear("x"),
            y: Axis::rate(),
            series,
        }],
    }
}

#[test]
fn each_series_has_a_shape_of_its_own_one_marker_per_point_and_one_in_the_legend() {
    let svg = render_svg(&three_series()).unwrap();
    // Palette 0 is a circle, 1 a square, 2 a triangle: three points and a legend entry each.
    assert_eq!(count(&svg, "circle"), 4, "{svg}");
    assert_eq!(count(&svg, "polygon"), 4, "{svg}");
    // The squares, and the white background.
    assert_eq!(count(&svg, "rect"), 5, "{svg}");
}

#[test]
fn the_legend_stands_beside_the_data_never_over_it() {
    let svg = render_svg(&three_series()).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    let edge = f64::from(PANEL.0 - LEGEND_WIDTH);
    let number = |n: &roxmltree::Node, key: &str| n.attribute(key).unwrap().parse::<f64>().unwrap();
    let mut legend = 0;
    for node in doc.descendants() {
        match node.tag_name().name() {
            "text" if node.text().is_some_and(|t| t.trim().starts_with("series ")) => {
                assert!(
                    number(&node, "x") >= edge,
                    "label left of the legend column"
                );
                legend += 1;
            }
            "circle" if number(&node, "cx") < edge => {}
            "circle" => legend += 1,
            _ => {}
        }
    }
    // Three labels and the circle series' legend marker, the only circle right of the edge.
    assert_eq!(legend, 4);
}

#[test]
fn compare_puts_the_counting_filter_on_a_panel_of_its_own() {
    let outcome = run(
        "compare",
        "n = 2000\nfpr = [0.05, 0.01, 0.002]\nqueries = 4000",
    );
    let labels = |panel: &Panel| -> Vec<String> {
        panel
            .series
            .iter()
            .filter(|s| s.mark == Mark::Measured)
            .filter_map(|s| s.label.clone())
            .collect()
    };
    let panels = &outcome.plate.panels;
    assert_eq!(
        panels.len(),
        2,
        "{:?}",
        panels.iter().map(labels).collect::<Vec<_>>()
    );
    assert_eq!(labels(&panels[1]), ["counting"]);
    assert!(labels(&panels[0]).contains(&"classic".to_string()));
    assert!(!labels(&panels[0]).contains(&"counting".to_string()));
}
