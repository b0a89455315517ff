//! Output formats, written once for every experiment: typed rows become a [`Table`] of
//! serialised records, which an [`Exporter`] shows as a terminal table, CSV, JSON or Markdown.
//!
//! A format is one file holding its exporter and one line of [`FORMATS`]. Measurement knows
//! nothing of formats: a row type documents each field once, on the field (the legend reads
//! those comments), and names the columns of the human views ([`Record::columns`]).

mod cells;
mod csv;
pub mod files;
mod json;
mod legend;
mod markdown;
mod progress;
mod table;

use std::fmt;
use std::str::FromStr;

use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::{Error, Result};
pub use crate::report::files::write_atomic;

pub use cells::{Cell, percent, significant, times};
pub use legend::{LegendEntry, fields, legend};
pub use progress::progress_bar;

/// A column of the terminal and Markdown views.
#[derive(Clone, Copy, Debug)]
pub struct Column {
    pub header: &'static str,
    pub cell: Cell,
    /// Whether the narrow view shows the column (the wide view shows every column).
    pub narrow: bool,
    /// For a verdict column (a check each row passes or fails, a flag), the cell text that
    /// flags the row: the HTML page badges the cell and lists flagged rows first.
    pub flagged_when: Option<&'static str>,
    /// Prose that the terminal table wraps so that the grid fits the terminal
    /// ([`table::width_limit`]).
    pub wraps: bool,
}

/// A column that both views show.
pub const fn col(header: &'static str, cell: Cell) -> Column {
    Column {
        header,
        cell,
        narrow: true,
        flagged_when: None,
        wraps: false,
    }
}

impl Column {
    /// The same column, shown by the wide view only.
    pub const fn wide_only(self) -> Column {
        Column {
            narrow: false,
            ..self
        }
    }

    /// The same column as a verdict: a row whose cell reads `text` is flagged.
    pub const fn flags_when(self, text: &'static str) -> Column {
        Column {
            flagged_when: Some(text),
            ..self
        }
    }

    /// The same column as prose, wrapped in the terminal to fit its width.
    pub const fn wrapped(self) -> Column {
        Column {
            wraps: true,
            ..self
        }
    }

    /// Whether this column flags `record`.
    pub fn flags(&self, record: &Map<String, Value>) -> bool {
        self.flagged_when
            .is_some_and(|text| self.cell.show(record) == text)
    }
}

/// A row type that the reporter can show: every field goes to CSV and JSON, the `columns`
/// to the terminal and Markdown views. Each field's doc comment is its meaning in the legend.
pub trait Record: Serialize + JsonSchema {
    /// Listed with [`crate::columns!`], which has the compiler check every field they read.
    fn columns() -> Vec<Column>;
}

/// Which columns the human views show; CSV and JSON always carry every field.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum View {
    /// The columns marked [`Column::narrow`]: the setting, the measured rate with its
    /// interval, the prediction that matters, z and the verdict.
    #[default]
    Narrow,
    /// Every column.
    Wide,
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
    /// The meaning of every serialised field of the row type, in order.
    pub legend: Vec<LegendEntry>,
}

impl Table {
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
            legend: legend::<R>(),
        })
    }

    /// The same table without the fields `dropped` holds: nor the columns that show one,
    /// nor their legend entries.
    pub fn without_fields(&self, dropped: impl Fn(&str) -> bool) -> Table {
        let mut table = self.clone();
        for record in &mut table.records {
            record.retain(|field, _| !dropped(field));
        }
        table
            .columns
            .retain(|c| !c.cell.fields().into_iter().any(&dropped));
        table.legend.retain(|e| !dropped(&e.field));
        table
    }

    pub fn columns_in(&self, view: View) -> impl Iterator<Item = &Column> {
        self.columns
            .iter()
            .filter(move |c| view == View::Wide || c.narrow)
    }

    /// Width in terminal columns of the grid the terminal table draws for a view (title,
    /// preamble and notes excluded: they are prose and may wrap).
    pub fn width(&self, view: View) -> usize {
        table::grid(self, view).total_width()
    }

    /// Whether a verdict column ([`Column::flagged_when`]) flags `record`.
    pub fn is_flagged(&self, record: &Map<String, Value>) -> bool {
        self.columns.iter().any(|c| c.flags(record))
    }

    /// How many rows the verdict columns flag, each column's count in brackets:
    /// `1 of 5 rows flagged (bits = fail: 1, uniform = fail: 0)`; `None` without a verdict
    /// column.
    pub fn verdict_line(&self) -> Option<String> {
        let counts: Vec<String> = self
            .columns
            .iter()
            .filter_map(|c| {
                let text = c.flagged_when?;
                let count = self.records.iter().filter(|r| c.flags(r)).count();
                Some(format!("{} = {text}: {count}", c.header))
            })
            .collect();
        if counts.is_empty() {
            return None;
        }
        let flagged = self.records.iter().filter(|r| self.is_flagged(r)).count();
        Some(format!(
            "{flagged} of {} rows flagged ({})",
            self.records.len(),
            counts.join(", ")
        ))
    }

    /// The legend as a table of its own, to show in any format.
    pub fn legend_table(&self) -> Result<Table> {
        Table::from_rows(format!("columns of {}", self.title), &self.legend)
    }
}

/// One output format's renderer.
pub trait Exporter: Send + Sync {
    /// The table in this format. The human formats show the columns of `view`; the machine
    /// formats every serialised field whatever the view.
    fn render(&self, table: &Table, view: View) -> Result<String>;

    /// The view shown when none is asked for.
    fn default_view(&self) -> View {
        View::Wide
    }
}

/// An entry of the format registry.
pub struct FormatSpec {
    /// The name `--format` takes.
    pub name: &'static str,
    /// Other names `--format` accepts.
    pub aliases: &'static [&'static str],
    /// True for the formats a program parses: preamble and notes then go to stderr.
    pub is_machine: bool,
    pub exporter: &'static dyn Exporter,
}

impl FormatSpec {
    /// A format people read.
    pub const fn human(
        name: &'static str,
        aliases: &'static [&'static str],
        exporter: &'static dyn Exporter,
    ) -> Self {
        FormatSpec {
            name,
            aliases,
            is_machine: false,
            exporter,
        }
    }

    /// A format programs parse.
    pub const fn machine(
        name: &'static str,
        aliases: &'static [&'static str],
        exporter: &'static dyn Exporter,
    ) -> Self {
        FormatSpec {
            is_machine: true,
            ..FormatSpec::human(name, aliases, exporter)
        }
    }
}

/// The formats, in the order `--format` lists them. Adding one is a file and a line here.
pub static FORMATS: &[FormatSpec] = &[
    FormatSpec::human("table", &[], &table::Terminal),
    FormatSpec::machine("csv", &[], &csv::Csv),
    FormatSpec::machine("json", &[], &json::Json),
    FormatSpec::human("markdown", &["md"], &markdown::Markdown),
];

/// An output format: a handle on an entry of [`FORMATS`], parsed from its name or an alias.
#[derive(Clone, Copy)]
pub struct Format(&'static FormatSpec);

/// Each constant indexes [`FORMATS`] (a test holds that it is the format of its name).
impl Format {
    pub const TABLE: Format = Format(&FORMATS[0]);
    pub const CSV: Format = Format(&FORMATS[1]);
    pub const JSON: Format = Format(&FORMATS[2]);
    pub const MARKDOWN: Format = Format(&FORMATS[3]);

    /// Every registered format, in order.
    pub fn all() -> impl Iterator<Item = Format> {
        FORMATS.iter().map(Format)
    }

    /// The names accepted by `--format` (aliases excluded).
    pub fn names() -> Vec<&'static str> {
        FORMATS.iter().map(|spec| spec.name).collect()
    }

    pub fn name(self) -> &'static str {
        self.0.name
    }

    /// True for the formats a program parses (notes then go to stderr).
    pub fn is_machine(self) -> bool {
        self.0.is_machine
    }

    /// The view the format shows when none is asked for: narrow for the terminal table.
    pub fn default_view(self) -> View {
        self.0.exporter.default_view()
    }

    pub fn render(self, table: &Table, view: View) -> Result<String> {
        self.0.exporter.render(table, view)
    }
}

impl PartialEq for Format {
    fn eq(&self, other: &Format) -> bool {
        self.name() == other.name()
    }
}

impl Eq for Format {}

impl fmt::Debug for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Format({})", self.name())
    }
}

impl fmt::Display for Format {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        FORMATS
            .iter()
            .find(|spec| spec.name == s || spec.aliases.contains(&s))
            .map(Format)
            .ok_or_else(|| {
                format!(
                    "unknown format '{s}' (allowed: {})",
                    Format::names().join(", ")
                )
            })
    }
}

/// Renders a table in a format, in the format's default view.
pub fn render(table: &Table, format: Format) -> Result<String> {
    format.render(table, format.default_view())
}

/// Text safe in HTML or SVG content and in double- or single-quoted attributes.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}
