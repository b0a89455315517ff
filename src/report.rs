//! Output formats, written once for every experiment: typed rows become a [`Table`] of
//! serialised records, which is then shown as a terminal table, CSV, JSON or Markdown.

use std::str::FromStr;

use serde::Serialize;
use serde_json::{Map, Value};
use tabled::builder::Builder;
use tabled::settings::Style;

use crate::error::{Error, Result};
pub use crate::files::write_atomic;

/// How a column of the human-readable views shows its field.
#[derive(Clone, Copy, Debug)]
pub enum Cell {
    /// The field as it is.
    Plain(&'static str),
    /// A fraction shown as a percentage with three significant figures.
    Percent(&'static str),
    /// A number with a fixed count of decimals.
    Fixed(&'static str, usize),
    /// Two fraction fields shown as a percentage interval `[lo, hi]`.
    Interval(&'static str, &'static str),
    /// `a / b` of two fields, e.g. false positives over queries.
    Ratio(&'static str, &'static str),
}

/// A column of the terminal and Markdown views.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub header: &'static str,
    pub cell: Cell,
}

/// Shorthand for a [`Column`].
pub const fn col(header: &'static str, cell: Cell) -> Column {
    Column { header, cell }
}

/// A row type that the reporter can show: every field goes to CSV and JSON, the `columns`
/// to the terminal and Markdown views.
pub trait Record: Serialize {
    fn columns() -> Vec<Column>;
}

/// Rows ready for any format: records keep the field order of the row type.
#[derive(Clone, Debug, Default)]
pub struct Table {
    pub title: String,
    pub columns: Vec<Column>,
    pub records: Vec<Map<String, Value>>,
    /// Lines printed before the human views (and to stderr beside CSV and JSON).
    pub preamble: Vec<String>,
    /// Lines printed after the human views (and to stderr beside CSV and JSON).
    pub notes: Vec<String>,
}

impl Table {
    /// Serialises typed rows.
    pub fn from_rows<R: Record>(title: impl Into<String>, rows: &[R]) -> Result<Self> {
        let records = rows
            .iter()
            .map(|row| match serde_json::to_value(row) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err(Error::Output("a row must serialise to an object".into())),
                Err(e) => Err(Error::Output(e.to_string())),
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Table {
            title: title.into(),
            columns: R::columns(),
            records,
            preamble: Vec::new(),
            notes: Vec::new(),
        })
    }
}

/// The output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Table,
    Csv,
    Json,
    Markdown,
}

impl Format {
    /// Names accepted by `--format`.
    pub const NAMES: [&'static str; 4] = ["table", "csv", "json", "markdown"];

    /// True for the formats a program parses (notes then go to stderr).
    pub fn is_machine(self) -> bool {
        matches!(self, Format::Csv | Format::Json)
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "table" => Ok(Format::Table),
            "csv" => Ok(Format::Csv),
            "json" => Ok(Format::Json),
            "markdown" | "md" => Ok(Format::Markdown),
            _ => Err(format!(
                "unknown format '{s}' (allowed: {})",
                Format::NAMES.join(", ")
            )),
        }
    }
}

/// A fraction as a percentage with three significant figures: 0.011416 → "1.14%".
pub fn percent(x: f64) -> String {
    let pct = x * 100.0;
    if pct == 0.0 {
        return "0%".to_string();
    }
    let decimals = (2 - pct.abs().log10().floor() as i64).clamp(0, 8) as usize;
    format!("{pct:.decimals$}%")
}

fn plain(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(x)) => match x.as_f64() {
            Some(f) if x.is_f64() => {
                let digits = if f.abs() >= 100.0 { 1 } else { 3 };
                format!("{f:.digits$}")
            }
            _ => x.to_string(),
        },
        Some(other) => other.to_string(),
    }
}

fn number(record: &Map<String, Value>, key: &str) -> f64 {
    record.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN)
}

fn show(record: &Map<String, Value>, cell: Cell) -> String {
    let absent = |key: &str| matches!(record.get(key), None | Some(Value::Null));
    match cell {
        Cell::Percent(key) | Cell::Fixed(key, _) if absent(key) => String::new(),
        Cell::Plain(key) => plain(record.get(key)),
        Cell::Percent(key) => percent(number(record, key)),
        Cell::Fixed(key, decimals) => format!("{:.decimals$}", number(record, key)),
        Cell::Interval(lo, hi) => {
            format!(
                "[{}, {}]",
                percent(number(record, lo)),
                percent(number(record, hi))
            )
        }
        Cell::Ratio(a, b) => format!("{}/{}", plain(record.get(a)), plain(record.get(b))),
    }
}

fn csv_field(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Renders a table in a format.
pub fn render(table: &Table, format: Format) -> Result<String> {
    match format {
        Format::Json => serde_json::to_string_pretty(&table.records)
            .map(|s| s + "\n")
            .map_err(|e| Error::Output(e.to_string())),
        Format::Csv => {
            let mut writer = csv::Writer::from_writer(Vec::new());
            if let Some(first) = table.records.first() {
                writer
                    .write_record(first.keys())
                    .map_err(|e| Error::Output(e.to_string()))?;
            }
            for record in &table.records {
                writer
                    .write_record(record.values().map(csv_field))
                    .map_err(|e| Error::Output(e.to_string()))?;
            }
            let bytes = writer
                .into_inner()
                .map_err(|e| Error::Output(e.to_string()))?;
            String::from_utf8(bytes).map_err(|e| Error::Output(e.to_string()))
        }
        Format::Table | Format::Markdown => {
            let mut builder = Builder::default();
            builder.push_record(table.columns.iter().map(|c| c.header.to_string()));
            for record in &table.records {
                builder.push_record(table.columns.iter().map(|c| show(record, c.cell)));
            }
            let mut grid = builder.build();
            let mut out = String::new();
            if format == Format::Markdown {
                grid.with(Style::markdown());
                out.push_str(&format!("### {}\n\n", table.title));
                for line in &table.preamble {
                    out.push_str(&format!("{line}  \n"));
                }
                if !table.preamble.is_empty() {
                    out.push('\n');
                }
                out.push_str(&format!("{grid}\n"));
                if !table.notes.is_empty() {
                    out.push('\n');
                    for note in &table.notes {
                        out.push_str(&format!("- {note}\n"));
                    }
                }
            } else {
                grid.with(Style::sharp());
                out.push_str(&format!("{}\n", table.title));
                for line in &table.preamble {
                    out.push_str(&format!("{line}\n"));
                }
                out.push_str(&format!("{grid}\n"));
                for note in &table.notes {
                    out.push_str(&format!("{note}\n"));
                }
            }
            Ok(out)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_keeps_three_figures() {
        assert_eq!(percent(0.011416), "1.14%");
        assert_eq!(percent(0.00819), "0.819%");
        assert_eq!(percent(0.1334), "13.3%");
        assert_eq!(percent(0.000012345), "0.00123%");
    }
}
