//! The output flags every table-printing command takes, and the one place a table is printed.

use std::path::PathBuf;

use clap::Args;

use bloomlab::Result;
use bloomlab::console;
use bloomlab::report::{self, Format, Table, View};

#[derive(Args, Clone, Debug)]
pub struct OutputArgs {
    /// Output format: table, csv, json, markdown
    #[arg(long, default_value = "table", value_parser = parse_format)]
    pub(super) format: Format,
    /// Write the output to FILE (atomically) instead of stdout
    #[arg(long, value_name = "FILE")]
    pub(super) out: Option<PathBuf>,
    /// Show every column in the terminal table (the default shows the setting, the measured
    /// rate with its interval, the prediction that matters, z and the verdict)
    #[arg(long)]
    pub(super) wide: bool,
    /// Print each column's name and meaning after the table
    #[arg(long)]
    pub(super) legend: bool,
    /// No progress bar
    #[arg(long, short)]
    pub(super) quiet: bool,
}

pub(super) fn parse_plot_path(s: &str) -> std::result::Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
    {
        Ok(path)
    } else {
        Err("plots are written as SVG: give a file name ending in .svg (PNG would need system font libraries)".into())
    }
}

pub(super) fn parse_format(s: &str) -> std::result::Result<Format, String> {
    s.parse()
}

/// Prints or writes a table; notes go to stderr beside machine formats.
pub fn emit(table: &Table, output: &OutputArgs) -> Result<()> {
    let view = if output.wide {
        View::Wide
    } else {
        output.format.default_view()
    };
    let mut text = output.format.render(table, view)?;
    if output.legend {
        text.push_str(&output.format.render(&table.legend_table()?, View::Wide)?);
    }
    match &output.out {
        Some(path) => report::write_atomic(path, text.as_bytes())?,
        None => console::out(&text),
    }
    if output.format.is_machine() || output.out.is_some() {
        for note in table.preamble.iter().chain(&table.notes) {
            console::note(note);
        }
    }
    Ok(())
}
