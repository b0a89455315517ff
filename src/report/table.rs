//! The terminal table: a box-drawn grid between the title and preamble above and the notes
//! below; narrow by default.

use tabled::builder::Builder;
use tabled::settings::object::Columns;
use tabled::settings::{Modify, Style, Width};

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

/// The width a terminal table's prose columns are wrapped to fit: `COLUMNS` when the shell
/// exports it, else 100 (the width the tables are designed for).
pub fn width_limit() -> usize {
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .filter(|&c: &usize| c >= 40)
        .unwrap_or(100)
}

/// The box-drawn grid of a view: a header row, then one row per record. Where it is wider
/// than [`width_limit`], each prose column ([`super::Column::wraps`]) is wrapped at word
/// boundaries to take what the other columns leave.
pub(super) fn grid(table: &Table, view: View) -> tabled::Table {
    let mut grid = cell_grid(table, view, |text| text);
    grid.with(Style::sharp());
    let limit = width_limit();
    let prose: Vec<usize> = table
        .columns_in(view)
        .enumerate()
        .filter(|(_, c)| c.wraps)
        .map(|(i, _)| i)
        .collect();
    let total = grid.total_width();
    if total > limit && !prose.is_empty() {
        let share = (total - limit).div_ceil(prose.len());
        let columns: Vec<_> = table.columns_in(view).collect();
        for i in prose {
            let widest = table
                .records
                .iter()
                .map(|r| columns[i].cell.show(r).chars().count())
                .chain([columns[i].header.chars().count()])
                .max()
                .unwrap_or(0);
            let width = widest.saturating_sub(share).max(20);
            grid.with(Modify::new(Columns::new(i..=i)).with(Width::wrap(width).keep_words(true)));
        }
    }
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

#[cfg(test)]
mod tests {
    use serde::Serialize;

    use super::super::{Column, Record, Table};
    use super::*;

    #[derive(Serialize, schemars::JsonSchema)]
    struct Prose {
        name: String,
        meaning: String,
    }

    impl Record for Prose {
        fn columns() -> Vec<Column> {
            crate::columns![Self;
                "name" => Plain(name),
                "meaning" => Plain(meaning).wrapped(),
            ]
        }
    }

    /// A legend of long meanings fits the width: its prose wraps at words, nothing is cut.
    #[test]
    fn prose_columns_wrap_to_the_width_and_keep_every_word() {
        let meaning = "a long meaning of many words ".repeat(12);
        let rows = [Prose {
            name: "field".into(),
            meaning: meaning.trim().into(),
        }];
        let table = Table::from_rows("t", &rows).expect("a table");
        let text = grid(&table, View::Wide).to_string();
        let limit = width_limit();
        assert!(text.lines().all(|l| l.chars().count() <= limit), "{text}");
        let words = text.matches("meaning").count();
        assert_eq!(words, 12 + 1, "every word kept, the header too: {text}");
    }
}
