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
        if let Some(first) = table.records.first() {
            writer.write_record(first.keys()).map_err(failed)?;
        }
        for record in &table.records {
            writer
                .write_record(record.values().map(field))
                .map_err(failed)?;
        }
        let bytes = writer
            .into_inner()
            .map_err(|e| Error::Output(e.to_string()))?;
        String::from_utf8(bytes).map_err(|e| Error::Output(e.to_string()))
    }
}

/// A value as a CSV field: strings bare, null empty, numbers and booleans as JSON spells them.
fn field(value: &Value) -> String {
    match value {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}
