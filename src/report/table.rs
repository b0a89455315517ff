//! The terminal table: a box-drawn grid between the title and preamble above and the notes
//! below; narrow by default.

use tabled::builder::Builder;
use tabled::settings::Style;

use super::{Exporter, Table, View};
use crate::error::Result;

/// The terminal table.
pub struct Terminal;

impl Exporter for Terminal {
    fn render(&self, table: &Table, view: View) -> Result<String> {
        let mut out = format!("{}\n", table.title);
        for line in &table.preamble {
            out.push_str(&format!("{line}\n"));
        }
        out.push_str(&format!("{}\n", grid(table, view)));
        for note in &table.notes {
            out.push_str(&format!("{note}\n"));
        }
        Ok(out)
    }

    fn default_view(&self) -> View {
        View::Narrow
    }
}

/// The box-drawn grid of a view: a header row, then one row per record.
pub(super) fn grid(table: &Table, view: View) -> tabled::Table {
    let mut grid = cell_grid(table, view, |text| text);
    grid.with(Style::sharp());
    grid
}

/// The unstyled grid of a view, each cell's text passed through `escape`.
pub(super) fn cell_grid(
    table: &Table,
    view: View,
    escape: impl Fn(String) -> String,
) -> tabled::Table {
    let mut builder = Builder::default();
    builder.push_record(table.columns_in(view).map(|c| escape(c.header.to_string())));
    for record in &table.records {
        builder.push_record(table.columns_in(view).map(|c| escape(c.cell.show(record))));
    }
    builder.build()
}
