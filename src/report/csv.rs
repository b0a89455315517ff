//! CSV: a header of field names, then one line per record; every field whatever the view.

use serde_json::Value;

use super::{Exporter, Table, View};
use crate::error::{Error, Result};

/// Comma-separated values, as the `csv` crate writes them.
pub struct Csv;

impl Exporter for Csv {
    fn render(&self, table: &Table, _view: View) -> Result<String> {
        let failed = |e: ::csv::Error| Error::Output(e.to_string());
        let mut writer = ::csv::Writer::from_writer(Vec::new());
        let header = header(table);
        if !table.records.is_empty() {
            writer.write_record(&header).map_err(failed)?;
        }
        for record in &table.records {
            let cells = header.iter().map(|k| record.get(*k).map(field));
            writer
                .write_record(cells.map(Option::unwrap_or_default))
                .map_err(failed)?;
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| Error::Output(e.to_string()))?;
        String::from_utf8(bytes).map_err(|e| Error::Output(e.to_string()))
    }
}

/// Every field of every record, each where it first appears: after the field that precedes
/// it in its record (the crates' audit rows have no `key_form`, the programs' rows do), so
/// that records of different shapes share one header, and a field a record lacks is blank.
fn header(table: &Table) -> Vec<&str> {
    let mut header: Vec<&str> = Vec::new();
    for record in &table.records {
        let mut at = 0;
        for key in record.keys() {
            match header.iter().position(|h| h == key) {
                Some(p) => at = p + 1,
                None => {
                    header.insert(at, key);
                    at += 1;
                }
            }
        }
    }
    header
}

/// A value as a CSV field: strings bare, null empty, numbers and booleans as JSON spells them.
fn field(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
