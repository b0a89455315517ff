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

/// Formats by name and alias, the views and the verdict line.
mod formats {
    use bloomlab::report::{Cell, Format, Table, View, col};

    #[test]
    fn formats_parse_by_name_and_alias() {
        assert_eq!("table".parse::<Format>(), Ok(Format::TABLE));
        assert_eq!("csv".parse::<Format>(), Ok(Format::CSV));
        assert_eq!("json".parse::<Format>(), Ok(Format::JSON));
        assert_eq!("markdown".parse::<Format>(), Ok(Format::MARKDOWN));
        assert_eq!("md".parse::<Format>(), Ok(Format::MARKDOWN));
        let refused = "html".parse::<Format>().expect_err("not a format");
        assert!(refused.contains("table, csv, json, markdown"), "{refused}");
    }

    #[test]
    fn only_csv_and_json_are_for_programs() {
        let machine: Vec<&str> = Format::all()
            .filter(|f| f.is_machine())
            .map(Format::name)
            .collect();
        assert_eq!(machine, ["csv", "json"]);
        assert_eq!(Format::TABLE.default_view(), View::Narrow);
        assert_eq!(Format::MARKDOWN.default_view(), View::Wide);
    }

    #[test]
    fn the_narrow_view_leaves_out_wide_only_columns() {
        let table = Table {
            columns: vec![
                col("a", Cell::Plain("a")),
                col("b", Cell::Plain("b")).wide_only(),
            ],
            ..Table::default()
        };
        let headers = |view| table.columns_in(view).map(|c| c.header).collect::<Vec<_>>();
        assert_eq!(headers(View::Narrow), ["a"]);
        assert_eq!(headers(View::Wide), ["a", "b"]);
        assert!(table.width(View::Narrow) < table.width(View::Wide));
    }

    #[test]
    fn the_verdict_line_counts_the_rows_each_verdict_column_flags() {
        let record = |a: &str, b: &str| {
            serde_json::json!({"a": a, "b": b})
                .as_object()
                .unwrap()
                .clone()
        };
        let mut table = Table {
            columns: vec![
                col("a", Cell::Plain("a")).flags_when("fail"),
                col("b", Cell::Plain("b")).flags_when("true"),
            ],
            records: vec![
                record("fail", "true"),
                record("pass", "true"),
                record("pass", "false"),
            ],
            ..Table::default()
        };
        assert_eq!(
            table.verdict_line().as_deref(),
            Some("2 of 3 rows flagged (a = fail: 1, b = true: 2)")
        );
        let markdown = Format::MARKDOWN.render(&table, View::Wide).unwrap();
        assert!(
            markdown.starts_with("### \n\n**2 of 3 rows flagged"),
            "{markdown}"
        );
        table.columns = vec![col("a", Cell::Plain("a"))];
        assert_eq!(table.verdict_line(), None);
    }
}

/// How a cell shows its fields: three significant figures, multiples, blanks.
mod cells {
    use bloomlab::report::{Cell, percent, times};

    #[test]
    fn percent_keeps_three_figures() {
        assert_eq!(percent(0.011416), "1.14%");
        assert_eq!(percent(0.00819), "0.819%");
        assert_eq!(percent(0.1334), "13.3%");
        assert_eq!(percent(0.000012345), "0.00123%");
    }

    #[test]
    fn percent_of_zero_and_one() {
        assert_eq!(percent(0.0), "0%");
        assert_eq!(percent(1.0), "100%");
        assert_eq!(percent(0.5), "50.0%");
    }

    #[test]
    fn tiny_rates_keep_their_figures() {
        // 1.234e-5 is 1.234e-3 %: the last fixed-notation magnitude, five decimals.
        assert_eq!(percent(1.234e-5), "0.00123%");
        assert_eq!(percent(1.234e-6), "1.23e-4%");
        assert_eq!(percent(4.56e-15), "4.56e-13%");
        for exponent in 6..300 {
            let text = percent(1.5 * 10f64.powi(-exponent));
            assert!(text.starts_with("1.50e-"), "{text}");
        }
    }

    #[test]
    fn rounding_into_the_next_decade_drops_a_decimal() {
        assert_eq!(percent(0.99996), "100%");
        assert_eq!(percent(0.0009996), "0.100%");
        assert_eq!(times(9.996), "10.0x");
    }

    #[test]
    fn ratios_read_as_multiples() {
        assert_eq!(times(0.04501), "0.0450x");
        assert_eq!(times(11.04), "11.0x");
        assert_eq!(times(1234.4), "1234x");
        assert_eq!(times(0.0), "0x");
        let record = serde_json::json!({"lo": 10.12, "hi": 12.44});
        let record = record.as_object().expect("an object");
        assert_eq!(
            Cell::TimesInterval("lo", "hi").show(record),
            "[10.1x, 12.4x]"
        );
        assert_eq!(Cell::Times("absent").show(record), "");
    }

    #[test]
    fn a_column_that_would_repeat_another_is_blank() {
        let same = serde_json::json!({"name": "fastbloom", "library": "fastbloom"});
        let other = serde_json::json!({"name": "rbloom", "library": "rbloom 1.5.4 Bloom"});
        let cell = Cell::PlainUnlessSame("library", "name");
        assert_eq!(cell.show(same.as_object().expect("an object")), "");
        assert_eq!(
            cell.show(other.as_object().expect("an object")),
            "rbloom 1.5.4 Bloom"
        );
    }
}

/// One CSV header for records of different shapes.
mod csv_header {
    use bloomlab::report::{Format, Table};
    use serde_json::Value;

    #[test]
    fn records_of_different_shapes_share_one_header() {
        let row = |json: &str| match serde_json::from_str(json).unwrap() {
            Value::Object(map) => map,
            _ => unreachable!(),
        };
        let table = Table {
            records: vec![
                row(r#"{"name":"crate","n":1}"#),
                row(r#"{"name":"program","key_form":"text","n":2}"#),
            ],
            ..Table::default()
        };
        let text = bloomlab::report::render(&table, Format::CSV).unwrap();
        assert_eq!(text, "name,key_form,n\ncrate,,1\nprogram,text,2\n");
    }
}

/// The legend reads the first paragraph of a field's doc comment.
mod legend_docs {
    use bloomlab::report::{Column, Record, legend};
    use schemars::JsonSchema;
    use serde::Serialize;

    /// A row whose first field is documented over two paragraphs and whose second is not.
    #[derive(Serialize, JsonSchema)]
    struct Sample {
        /// Keys inserted:
        /// the n of [`Sample`].
        ///
        /// Not part of the legend.
        n: u64,
        rate: f64,
    }

    impl Record for Sample {
        fn columns() -> Vec<Column> {
            bloomlab::columns![Self; "keys" => Plain(n).wide_only()]
        }
    }

    #[test]
    fn the_legend_reads_the_first_paragraph_and_the_headers() {
        let entries = legend::<Sample>();
        assert_eq!(entries.len(), 2);
        assert_eq!(entries[0].field, "n");
        assert_eq!(entries[0].meaning, "Keys inserted: the n of `Sample`.");
        assert_eq!(entries[0].header, "keys");
        assert!(!entries[0].narrow);
        assert_eq!(entries[1].field, "rate");
        assert_eq!(entries[1].meaning, "");
        assert_eq!(entries[1].header, "");
    }
}

/// Atomic writes through links, and staging moved in together or not at all.
mod files {
    use std::fs;

    use bloomlab::report::files::{Staging, write_atomic};

    #[cfg(unix)]
    #[test]
    fn a_link_is_written_through_and_kept() {
        let dir = tempfile::tempdir().unwrap();
        let elsewhere = dir.path().join("elsewhere");
        fs::create_dir(&elsewhere).unwrap();
        fs::write(elsewhere.join("target.csv"), "old").unwrap();
        let link = dir.path().join("link.csv");
        std::os::unix::fs::symlink("elsewhere/target.csv", &link).unwrap();
        write_atomic(&link, b"new").unwrap();
        assert!(
            fs::symlink_metadata(&link)
                .unwrap()
                .file_type()
                .is_symlink()
        );
        assert_eq!(
            fs::read_to_string(elsewhere.join("target.csv")).unwrap(),
            "new"
        );
        // A dangling link creates its target.
        let dangling = dir.path().join("dangling.csv");
        std::os::unix::fs::symlink("elsewhere/created.csv", &dangling).unwrap();
        write_atomic(&dangling, b"made").unwrap();
        assert_eq!(
            fs::read_to_string(elsewhere.join("created.csv")).unwrap(),
            "made"
        );
    }

    #[cfg(unix)]
    #[test]
    fn a_loop_of_links_is_an_error_naming_the_path() {
        let dir = tempfile::tempdir().unwrap();
        let a = dir.path().join("a");
        std::os::unix::fs::symlink("b", &a).unwrap();
        std::os::unix::fs::symlink("a", dir.path().join("b")).unwrap();
        let error = write_atomic(&a, b"x").unwrap_err().to_string();
        assert!(error.contains(&a.display().to_string()), "{error}");
    }

    #[test]
    fn staged_files_appear_only_on_commit() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.csv"), "old a").unwrap();
        let mut staging = Staging::new(dir.path()).unwrap();
        staging.write("a.csv", b"new a").unwrap();
        staging.write("b.csv", b"new b").unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("a.csv")).unwrap(),
            "old a"
        );
        assert!(!dir.path().join("b.csv").exists());
        staging.commit().unwrap();
        assert_eq!(
            fs::read_to_string(dir.path().join("a.csv")).unwrap(),
            "new a"
        );
        assert_eq!(
            fs::read_to_string(dir.path().join("b.csv")).unwrap(),
            "new b"
        );
        let left: Vec<_> = fs::read_dir(dir.path()).unwrap().collect();
        assert_eq!(left.len(), 2, "the staging folder is removed");
    }

    #[test]
    fn an_abandoned_staging_leaves_the_destination_as_it_was() {
        let dir = tempfile::tempdir().unwrap();
        fs::write(dir.path().join("a.csv"), "old a").unwrap();
        let mut staging = Staging::new(dir.path()).unwrap();
        staging.write("a.csv", b"new a").unwrap();
        drop(staging);
        assert_eq!(
            fs::read_to_string(dir.path().join("a.csv")).unwrap(),
            "old a"
        );
        assert_eq!(fs::read_dir(dir.path()).unwrap().count(), 1);
    }
}
