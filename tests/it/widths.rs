//! Every narrow terminal table fits in 100 columns: each registered experiment at small sizes,
//! and `size`. The wide view and the files carry every column.

use bloomlab::experiments::registry;
use bloomlab::report::View;
use indicatif::ProgressBar;

/// The widest a default (narrow) terminal table may be.
const NARROW_LIMIT: usize = 100;

/// Small settings for any experiment that takes the key: fast, with the default shapes.
fn small_params(keys: &[String]) -> toml::Table {
    let small = [
        ("n", 20_000),
        ("design_n", 4_000),
        ("queries", 20_000),
        ("seeds", 8),
    ];
    let has = |key: &str| keys.iter().any(|k| k == key);
    small
        .into_iter()
        .filter(|(key, _)| has(key) && !(*key == "n" && has("design_n")))
        .map(|(key, value)| (key.to_string(), toml::Value::Integer(value)))
        .collect()
}

#[test]
fn every_experiments_narrow_table_fits_in_100_columns() {
    let mut too_wide = Vec::new();
    for experiment in registry() {
        let params = small_params(&experiment.keys());
        let outcome = experiment
            .prepare_table(&params)
            .and_then(|prepared| prepared.run(&ProgressBar::hidden()))
            .unwrap_or_else(|e| panic!("{}: {e}", experiment.name()));
        let width = outcome.table.width(View::Narrow);
        if width > NARROW_LIMIT {
            too_wide.push(format!("{} is {width} columns", experiment.name()));
        }
    }
    assert!(too_wide.is_empty(), "{}", too_wide.join("; "));
}

#[test]
fn the_sizing_table_fits_in_100_columns() {
    let request = bloomlab::experiments::size::SizeRequest {
        n: Some(1_000_000),
        fpr: Some(0.001),
        bits_per_key: None,
        m: None,
    };
    let rows = bloomlab::experiments::size::plan(&request).unwrap();
    let table = bloomlab::report::Table::from_rows("size", &rows).unwrap();
    assert!(table.width(View::Narrow) <= NARROW_LIMIT);
}

#[test]
fn the_table_of_every_structure_fits_in_100_columns_measured_or_not() {
    use bloomlab::experiments::size::{Measuring, structures, structures_table};
    let how = Measuring {
        queries: 100_000,
        seed: 1,
    };
    for measuring in [None, Some(how)] {
        let measured = measuring.map(|how| how.plan(20_000, 0.0001));
        let (rows, _) = structures(20_000, 0.0001, measured.as_ref()).unwrap();
        let table = structures_table(20_000, 0.0001, &rows).unwrap();
        let width = table.width(View::Narrow);
        assert!(
            width <= NARROW_LIMIT,
            "{width} columns, measured: {}",
            measuring.is_some()
        );
    }
}
