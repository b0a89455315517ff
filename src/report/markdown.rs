//! Markdown: a `###` title, the verdict line in bold (how many rows the verdict columns flag),
//! the preamble as lines, a pipe table, the notes as a list; every column by default, since
//! these are the committed result files.

use tabled::settings::Style;

use super::table::cell_grid;
use super::{Exporter, Table, View};
use crate::error::Result;

/// GitHub-flavoured Markdown.
pub struct Markdown;

impl Exporter for Markdown {
    fn render(&self, table: &Table, view: View) -> Result<String> {
        let mut grid = cell_grid(table, view, |text| text.replace('|', "\\|"));
        grid.with(Style::markdown());
        let mut out = format!("### {}\n\n", table.title);
        if let Some(verdict) = table.verdict_line() {
            out.push_str(&format!("**{verdict}**\n\n"));
        }
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
        Ok(out)
    }
}
