//! The legend: what each serialised field of a row type means, read from the doc comments on
//! the row type (through its JSON schema), and which human column shows it. The same text
//! serves `--legend`; docs/OUTPUT.md lists the fields by name.

use schemars::JsonSchema;
use schemars::generate::SchemaSettings;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Column, Record};

/// One serialised field of a row type.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct LegendEntry {
    /// The field's name, as CSV headers and JSON keys spell it.
    pub field: String,
    /// The headers of the terminal and Markdown columns that show the field, joined by
    /// ` / `; empty when only CSV and JSON carry it.
    pub header: String,
    /// True when a column of the narrow (default terminal) view shows the field.
    pub narrow: bool,
    /// What the field is: the first paragraph of its doc comment.
    pub meaning: String,
}

impl Record for LegendEntry {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "field" => Plain(field),
            "column" => Plain(header),
            "meaning" => Plain(meaning).wrapped(),
        ]
    }
}

/// Every serialised field of `R`, in serialisation order (flattened fields in place), with
/// its meaning and the columns of [`Record::columns`] that show it.
pub fn legend<R: Record>() -> Vec<LegendEntry> {
    let columns = R::columns();
    fields::<R>()
        .into_iter()
        .map(|(field, meaning)| {
            let showing: Vec<&Column> = columns
                .iter()
                .filter(|c| c.cell.fields().contains(&field.as_str()))
                .collect();
            LegendEntry {
                header: showing
                    .iter()
                    .map(|c| c.header)
                    .collect::<Vec<_>>()
                    .join(" / "),
                narrow: showing.iter().any(|c| c.narrow),
                meaning,
                field,
            }
        })
        .collect()
}

/// The serialised fields of `T` with the first paragraph of each one's doc comment (empty
/// when it has none), from its schema for serialisation.
pub fn fields<T: JsonSchema>() -> Vec<(String, String)> {
    let schema = SchemaSettings::default()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<T>();
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return Vec::new();
    };
    properties
        .iter()
        .map(|(name, property)| {
            let doc = property
                .get("description")
                .and_then(Value::as_str)
                .unwrap_or_default();
            (name.clone(), first_paragraph(doc))
        })
        .collect()
}

/// The text up to the first blank line, its lines joined by spaces, intra-doc links
/// (``[`X`]``) read as code (`` `X` ``).
fn first_paragraph(doc: &str) -> String {
    doc.lines()
        .map(str::trim)
        .take_while(|line| !line.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
        .replace("[`", "`")
        .replace("`]", "`")
}
