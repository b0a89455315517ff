//! `results/index.html`: one self-contained page of the whole `reproduce` run. Every table,
//! every plate (inline SVG), every other table a summary staged as CSV (the claims ledger),
//! and beside each the command that regenerates it. No script, and no request leaves the
//! page: its Content-Security-Policy forbids everything but the inline styles.

use std::fmt::Write as _;

use super::definition::Definition;
use super::result_name;
use super::summary::{Run, Summary};
use crate::error::{Error, Result};
use crate::files::Staging;
use crate::report::{Table, View, escape};
use crate::structures::exec::shell_word;

/// The page's file name in the results folder.
pub const PAGE: &str = "index.html";

/// Writes [`PAGE`]; registered after every summary whose CSV it shows.
pub struct HtmlReport;

impl Summary for HtmlReport {
    fn file_names(&self) -> &'static [&'static str] {
        &[PAGE]
    }

    fn write(&self, runs: &[Run], staging: &mut Staging) -> Result<Vec<String>> {
        let page = page(runs, staging)?;
        staging.write(PAGE, page.as_bytes())?;
        Ok(Vec::new())
    }
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;margin:2em auto;max-width:75em;\
padding:0 1em;color:#222}table{border-collapse:collapse;font-size:.85em;margin:.5em 0}\
th,td{border:1px solid #ccc;padding:.2em .5em;text-align:right;white-space:nowrap}th{background:#f3f3f3}\
td:first-child,th:first-child{text-align:left}caption{text-align:left;font-weight:bold;\
padding:.3em 0}.scroll{overflow-x:auto}code{background:#f3f3f3;padding:.1em .3em}\
figure{margin:1em 0}svg{max-width:100%;height:auto}section{margin-bottom:3em}";

/// The page: a header, a contents list, the summaries' tables, then one section per run.
fn page(runs: &[Run], staging: &Staging) -> Result<String> {
    let extra = extra_tables(runs, staging);
    let mut out = String::from("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n");
    out.push_str("<meta charset=\"utf-8\">\n");
    out.push_str(
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n",
    );
    out.push_str("<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n");
    out.push_str("<title>bloomlab results</title>\n");
    writeln!(out, "<style>{STYLE}</style>\n</head>\n<body>").map_err(format_error)?;
    out.push_str("<h1>bloomlab results</h1>\n");
    out.push_str(
        "<p>Every table and plate below is regenerated, with this page, by \
         <code>bloomlab reproduce</code>; each section gives the command that regenerates \
         its table alone.</p>\n<nav><ul>\n",
    );
    for (name, _) in &extra {
        link(&mut out, &format!("table-{}", anchor(name)), name);
    }
    for run in runs {
        link(&mut out, &section_id(run.definition), &run.definition.name);
    }
    out.push_str("</ul></nav>\n");
    for (name, csv) in &extra {
        out.push_str(&csv_section(name, csv)?);
    }
    for run in runs {
        out.push_str(&run_section(run)?);
    }
    out.push_str("</body>\n</html>\n");
    Ok(out)
}

fn link(out: &mut String, id: &str, text: &str) {
    out.push_str(&format!(
        "<li><a href=\"#{}\">{}</a></li>\n",
        escape(id),
        escape(text)
    ));
}

fn format_error(e: std::fmt::Error) -> Error {
    Error::Output(format!("html: {e}"))
}

/// The CSV files staged beside the experiments' own (the claims ledger's), by name.
fn extra_tables(runs: &[Run], staging: &Staging) -> Vec<(String, String)> {
    let own: Vec<String> = runs
        .iter()
        .map(|run| result_name(run.definition, "csv"))
        .collect();
    staging
        .names()
        .iter()
        .filter(|name| name.ends_with(".csv") && !own.contains(name))
        .filter_map(|name| {
            let text = String::from_utf8(staging.read(name)?).ok()?;
            Some((name.clone(), text))
        })
        .collect()
}

fn section_id(definition: &Definition) -> String {
    format!("experiment-{}", anchor(&definition.name))
}

/// An id fragment: letters, digits, `-` and `_` kept, anything else `-`.
fn anchor(name: &str) -> String {
    name.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect()
}

/// One experiment: its description, the command that regenerates it, its table (every
/// column), its notes and its plate.
fn run_section(run: &Run) -> Result<String> {
    let definition = run.definition;
    let table = &run.outcome.table;
    let mut out = format!(
        "<section id=\"{}\">\n<h2>{}</h2>\n",
        escape(&section_id(definition)),
        escape(&definition.name)
    );
    if !definition.description.is_empty() {
        out.push_str(&format!("<p>{}</p>\n", escape(&definition.description)));
    }
    out.push_str(&format!(
        "<p>Regenerate: <code>{}</code> (the experiment file <code>{}</code>; expected bits check: {})</p>\n",
        escape(&command_line(definition)),
        escape(&result_name(definition, "toml")),
        definition.expect_bits_check.name()
    ));
    out.push_str(&html_table(table, &definition.name));
    out.push_str(&notes(&table.notes));
    match crate::plot::render_svg(&run.outcome.plate) {
        Ok(svg) => out.push_str(&format!(
            "<figure data-plate=\"{}\">\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
            escape(&definition.name),
            svg.trim(),
            escape(&result_name(definition, "svg"))
        )),
        Err(e) => out.push_str(&format!("<p>No plate: {}</p>\n", escape(&e.to_string()))),
    }
    out.push_str("</section>\n");
    Ok(out)
}

/// A table in the wide view: the title as caption, the preamble above, every column.
fn html_table(table: &Table, name: &str) -> String {
    let mut out = String::new();
    for line in &table.preamble {
        out.push_str(&format!("<p>{}</p>\n", escape(line)));
    }
    let headers: Vec<String> = table
        .columns_in(View::Wide)
        .map(|c| c.header.to_string())
        .collect();
    let rows: Vec<Vec<String>> = table
        .records
        .iter()
        .map(|record| {
            table
                .columns_in(View::Wide)
                .map(|c| c.cell.show(record))
                .collect()
        })
        .collect();
    out.push_str(&grid(name, &table.title, &headers, &rows));
    out
}

/// `<table>` of a header row and rows, every cell escaped, in a scrolling box.
fn grid(name: &str, caption: &str, headers: &[String], rows: &[Vec<String>]) -> String {
    let mut out = format!(
        "<div class=\"scroll\"><table data-table=\"{}\">\n<caption>{}</caption>\n<thead><tr>",
        escape(name),
        escape(caption)
    );
    for header in headers {
        out.push_str(&format!("<th>{}</th>", escape(header)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        out.push_str("<tr>");
        for cell in row {
            out.push_str(&format!("<td>{}</td>", escape(cell)));
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table></div>\n");
    out
}

fn notes(lines: &[String]) -> String {
    if lines.is_empty() {
        return String::new();
    }
    let items: String = lines
        .iter()
        .map(|line| format!("<li>{}</li>\n", escape(line)))
        .collect();
    format!("<ul class=\"notes\">\n{items}</ul>\n")
}

/// A staged CSV (a summary's table) as a section: every column, as written.
fn csv_section(name: &str, text: &str) -> Result<String> {
    let invalid = |e: csv::Error| Error::Output(format!("html: {name}: {e}"));
    let mut reader = csv::Reader::from_reader(text.as_bytes());
    let headers: Vec<String> = reader
        .headers()
        .map_err(invalid)?
        .iter()
        .map(String::from)
        .collect();
    let rows = reader
        .records()
        .map(|record| Ok(record.map_err(invalid)?.iter().map(readable).collect()))
        .collect::<Result<Vec<Vec<String>>>>()?;
    let stem = name.trim_end_matches(".csv");
    Ok(format!(
        "<section id=\"table-{}\">\n<h2>{}</h2>\n<p>Regenerate: <code>bloomlab reproduce</code> \
         (written from the whole run as <code>{}</code>)</p>\n{}</section>\n",
        escape(&anchor(name)),
        escape(stem),
        escape(name),
        grid(stem, name, &headers, &rows)
    ))
}

/// A CSV field as the page shows it: a number with a fraction in significant figures
/// (`1.3705602888445152` reads `1.37`), anything else as it is.
fn readable(field: &str) -> String {
    match field.parse::<f64>() {
        Ok(x) if field.contains('.') || field.contains('e') => crate::report::significant(x),
        _ => field.to_string(),
    }
}

/// The command line that measures what the definition's `[params]` say: each key is the
/// flag of the same name (`bits_per_key` is `--bits-per-key`), a list is comma-separated, a
/// true flag stands alone.
pub fn command_line(definition: &Definition) -> String {
    let mut words = vec!["bloomlab".to_string(), definition.command.clone()];
    for (key, value) in &definition.params {
        let flag = format!("--{}", key.replace('_', "-"));
        match value {
            toml::Value::Boolean(true) => words.push(flag),
            toml::Value::Boolean(false) => {}
            other => {
                words.push(flag);
                words.push(shell_word(&flag_value(other)));
            }
        }
    }
    words.join(" ")
}

fn flag_value(value: &toml::Value) -> String {
    match value {
        toml::Value::String(text) => text.clone(),
        toml::Value::Array(items) => items.iter().map(flag_value).collect::<Vec<_>>().join(","),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markup_in_text_is_escaped() {
        assert_eq!(
            escape("<b>\"a\" & 'b'</b>"),
            "&lt;b&gt;&quot;a&quot; &amp; &#39;b&#39;&lt;/b&gt;"
        );
    }

    #[test]
    fn shell_words_are_quoted_only_when_needed() {
        assert_eq!(shell_word("0.01,0.001"), "0.01,0.001");
        assert_eq!(shell_word("2..16:2"), "2..16:2");
        assert_eq!(shell_word("a b"), "'a b'");
        assert_eq!(shell_word("it's"), "'it'\\''s'");
    }

    #[test]
    fn a_csv_section_escapes_its_cells() {
        let section = csv_section("claims.csv", "claim,verdict\n\"<x> & y\",pass\n").unwrap();
        assert!(section.contains("<td>&lt;x&gt; &amp; y</td>"), "{section}");
        assert!(section.contains("data-table=\"claims\""), "{section}");
    }
}
