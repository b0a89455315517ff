//! JSON: the records as a pretty-printed array of objects; every field whatever the view.

use super::{Exporter, Table, View};
use crate::error::{Error, Result};

/// A JSON array of objects, one per record, keys in the row type's field order.
pub struct Json;

impl Exporter for Json {
    fn render(&self, table: &Table, _view: View) -> Result<String> {
        serde_json::to_string_pretty(&table.records)
            .map(|s| s + "\n")
            .map_err(|e| Error::Output(e.to_string()))
    }
}
