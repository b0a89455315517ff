//! The exporters: CSV that the csv crate reads back, JSON that parses, Markdown with its
//! header row, and the terminal table's views; and the legend, which every field of every
//! row type must have.

use bloomlab::experiments::sweep_k::{SweepK, SweepKParams};
use bloomlab::experiments::{Experiment, Outcome};
use bloomlab::params::Count;
use bloomlab::report::{self, Cell, Column, Format, LegendEntry, Record, Table, View, col, legend};
use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::Serialize;

/// A row with the awkward cases: a comma, a quote and a pipe in a string, a missing value.
#[derive(Serialize, JsonSchema)]
struct Row {
    /// A label.
    name: String,
    /// A fraction.
    rate: f64,
    /// A multiple, sometimes missing.
    ratio: Option<f64>,
}

impl Record for Row {
    fn columns() -> Vec<Column> {
        vec![
            col("name", Cell::Plain("name")),
            col("rate", Cell::Percent("rate")),
            col("× floor", Cell::Times("ratio")).wide_only(),
        ]
    }
}

fn sample() -> Table {
    let rows = [
        Row {
            name: "a, \"quoted\" | piped".into(),
            rate: 0.011416,
            ratio: Some(2.2222),
        },
        Row {
            name: "plain".into(),
            rate: 0.0,
            ratio: None,
        },
    ];
    let mut table = Table::from_rows("sample", &rows).expect("rows serialise");
    table.preamble.push("before".into());
    table.notes.push("after".into());
    table
}

#[test]
fn csv_round_trips_through_the_csv_crate() {
    let table = sample();
    let text = report::render(&table, Format::CSV).unwrap();
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers = reader.headers().unwrap().clone();
    assert_eq!(
        headers.iter().collect::<Vec<_>>(),
        ["name", "rate", "ratio"]
    );
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(rows.len(), 2);
    assert_eq!(&rows[0][0], "a, \"quoted\" | piped");
    assert_eq!(rows[0][1].parse::<f64>().unwrap(), 0.011416);
    assert_eq!(rows[0][2].parse::<f64>().unwrap(), 2.2222);
    assert_eq!(&rows[1][2], "", "a missing value is an empty field");
    assert!(!text.contains("after"), "notes are not data");
}

#[test]
fn json_parses_to_the_records() {
    let table = sample();
    let text = report::render(&table, Format::JSON).unwrap();
    let parsed: serde_json::Value = serde_json::from_str(&text).unwrap();
    let records = parsed.as_array().expect("an array of records");
    assert_eq!(records.len(), 2);
    assert_eq!(records[0]["name"], "a, \"quoted\" | piped");
    assert_eq!(records[0]["rate"], 0.011416);
    assert!(records[1]["ratio"].is_null());
    let keys: Vec<&String> = records[0].as_object().unwrap().keys().collect();
    assert_eq!(
        keys,
        ["name", "rate", "ratio"],
        "the row type's field order"
    );
}

#[test]
fn markdown_has_a_title_a_header_row_and_escaped_pipes() {
    let table = sample();
    let text = report::render(&table, Format::MARKDOWN).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines[0], "### sample");
    assert_eq!(lines[2], "before  ");
    let header = lines[4];
    let cells: Vec<&str> = header.split('|').map(str::trim).collect();
    assert_eq!(
        cells,
        ["", "name", "rate", "× floor", ""],
        "wide by default"
    );
    assert!(lines[5].starts_with("|--"), "{}", lines[5]);
    assert!(lines[6].contains("a, \"quoted\" \\| piped"), "{}", lines[6]);
    assert!(lines[6].contains("| 1.14% ") && lines[6].contains("| 2.22x "));
    assert_eq!(*lines.last().unwrap(), "- after");
}

#[test]
fn the_terminal_table_is_narrow_by_default_and_measures_its_width() {
    let table = sample();
    let narrow = report::render(&table, Format::TABLE).unwrap();
    let wide = Format::TABLE.render(&table, View::Wide).unwrap();
    assert!(!narrow.contains("× floor") && wide.contains("× floor"));
    for (text, view) in [(narrow, View::Narrow), (wide, View::Wide)] {
        let grid_width = text
            .lines()
            .filter(|l| l.starts_with(['┌', '│', '├', '└']))
            .map(|l| l.chars().count())
            .max()
            .unwrap();
        assert_eq!(table.width(view), grid_width);
        assert!(text.starts_with("sample\nbefore\n") && text.ends_with("after\n"));
    }
}

#[test]
fn an_experiment_exports_every_row_in_every_format() {
    let outcome = small_sweep_k();
    let table = outcome.table;
    let rows = outcome.measurements.len();
    let csv_text = report::render(&table, Format::CSV).unwrap();
    let mut reader = csv::Reader::from_reader(csv_text.as_bytes());
    assert_eq!(reader.records().count(), rows);
    let json: serde_json::Value =
        serde_json::from_str(&report::render(&table, Format::JSON).unwrap()).unwrap();
    assert_eq!(json.as_array().unwrap().len(), rows);
    let markdown = report::render(&table, Format::MARKDOWN).unwrap();
    let table_lines = markdown.lines().filter(|l| l.starts_with('|')).count();
    assert_eq!(table_lines, rows + 2, "header, separator, one line per row");
}

/// The legend of every row type the tree reports: a field without a doc comment fails here.
fn every_legend() -> Vec<(&'static str, Vec<LegendEntry>)> {
    vec![
        (
            "Measurement",
            legend::<bloomlab::pipeline::measurement::Measurement>(),
        ),
        (
            "AuditRow",
            legend::<bloomlab::experiments::audit::AuditRow>(),
        ),
        (
            "OverfillRow",
            legend::<bloomlab::experiments::overfill::OverfillRow>(),
        ),
        (
            "SeedCheckRow",
            legend::<bloomlab::experiments::seed_check::SeedCheckRow>(),
        ),
        (
            "SweepKRow",
            legend::<bloomlab::experiments::sweep_k::SweepKRow>(),
        ),
        (
            "CompareRow",
            legend::<bloomlab::experiments::compare::rows::CompareRow>(),
        ),
        ("BenchRow", legend::<bloomlab::bench::BenchRow>()),
        ("TimeRateRow", legend::<bloomlab::bench::TimeRateRow>()),
        ("SizeRow", legend::<bloomlab::experiments::size::SizeRow>()),
        ("CheckRow", legend::<bloomlab::suite::CheckRow>()),
        ("LegendEntry", legend::<LegendEntry>()),
    ]
}

#[test]
fn every_field_of_every_row_type_says_what_it_is() {
    for (row_type, entries) in every_legend() {
        assert!(!entries.is_empty(), "{row_type} has no fields");
        for entry in entries {
            assert!(
                !entry.meaning.trim().is_empty(),
                "{row_type}.{} has no doc comment",
                entry.field
            );
        }
    }
}

#[test]
fn the_legend_follows_the_serialised_fields_in_order() {
    let outcome = small_sweep_k();
    let table = outcome.table;
    let fields: Vec<&str> = table.legend.iter().map(|e| e.field.as_str()).collect();
    let keys: Vec<&str> = table.records[0].keys().map(String::as_str).collect();
    assert_eq!(
        fields, keys,
        "flattened Measurement first, then the sweep-k fields"
    );
    let fpr = table
        .legend
        .iter()
        .find(|e| e.field == "fpr_measured")
        .unwrap();
    assert_eq!(fpr.header, "measured");
    assert!(
        fpr.meaning.contains("false_positives / queries"),
        "{}",
        fpr.meaning
    );
    let ci_low = table.legend.iter().find(|e| e.field == "ci_low").unwrap();
    assert_eq!(ci_low.header, "95% CI");
    let seed = table.legend.iter().find(|e| e.field == "seed").unwrap();
    assert_eq!(seed.header, "", "shown by CSV and JSON only");
}

#[test]
fn the_legend_is_a_table_in_every_format() {
    let legend = sample().legend_table().unwrap();
    let markdown = report::render(&legend, Format::MARKDOWN).unwrap();
    assert!(
        markdown.contains("| rate  | rate    | A fraction."),
        "{markdown}"
    );
    let csv_text = report::render(&legend, Format::CSV).unwrap();
    assert!(
        csv_text.starts_with("field,header,narrow,meaning\n"),
        "{csv_text}"
    );
}

/// sweep-k at its defaults with 2000 queries per row.
fn small_sweep_k() -> Outcome {
    let mut params = SweepKParams::default();
    params.measure.queries = Some(Count(2_000));
    SweepK::run(&SweepK::plan(&params).unwrap(), &ProgressBar::hidden()).unwrap()
}
