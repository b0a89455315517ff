//! The tables of the page: an experiment's narrow table (the view the terminal prints) with
//! its full table folded beneath, and a summary's CSV; verdict cells badged, flagged rows
//! first.

use crate::error::{Error, Result};
use crate::plot::Plate;
use crate::report::{Table, View, escape};

const STYLE: &str = include_str!("style.css");

/// A page's head under `title` (escaped), up to its opened body: no script, and no request
/// leaves it (its Content-Security-Policy forbids everything but the inline styles).
pub(super) fn head(title: &str) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <title>{}</title>\n<style>\n{STYLE}</style>\n</head>\n<body>\n",
        escape(title)
    )
}

/// A plate as a `<figure>` with `attributes` (each with its leading space) and `caption`, or
/// a line saying why there is none.
pub(super) fn figure(plate: &Plate, attributes: &str, caption: &str) -> String {
    match crate::plot::render_svg(plate) {
        Ok(svg) => format!(
            "<figure{attributes}>\n{}\n<figcaption>{}</figcaption>\n</figure>\n",
            svg.trim(),
            escape(caption)
        ),
        Err(e) => format!("<p>No plate: {}</p>\n", escape(&e.to_string())),
    }
}

/// A row of a grid: its cells as HTML, and whether a verdict flags it (`Some` with the
/// badge class of the verdict, `no` or `maybe`).
pub(super) struct Row {
    pub cells: Vec<String>,
    pub flagged: Option<&'static str>,
}

/// An experiment's tables: the preamble, the narrow table, the notes, then every column
/// folded in a `<details>` whose table scrolls in its own box with its first column fixed.
/// Both list the flagged rows first (in their order), then the others.
pub(super) fn experiment_tables(table: &Table, name: &str) -> String {
    let mut out = String::new();
    for line in &table.preamble {
        out.push_str(&format!("<p>{}</p>\n", escape(line)));
    }
    if let Some(verdict) = table.verdict_line() {
        let flagged = table.records.iter().any(|r| table.is_flagged(r));
        out.push_str(&format!(
            "<p>{} {}{}</p>\n",
            badge(if flagged { "no" } else { "ok" }, "verdict"),
            escape(&verdict),
            if flagged { ", listed first" } else { "" }
        ));
    }
    out.push_str(&format!(
        "<div class=\"scroll\">{}</div>\n",
        grid(
            &format!("data-table=\"{}\"", escape(name)),
            &table.title,
            &headers(table, View::Narrow),
            &rows(table, View::Narrow),
        )
    ));
    out.push_str(&notes(&table.notes));
    let wide = headers(table, View::Wide);
    out.push_str(&format!(
        "<details><summary>Every column ({})</summary>\n<div class=\"scroll wide\">{}</div></details>\n",
        wide.len(),
        grid(
            &format!("data-wide=\"{}\"", escape(name)),
            &table.title,
            &wide,
            &rows(table, View::Wide)
        )
    ));
    out
}

fn headers(table: &Table, view: View) -> Vec<String> {
    table
        .columns_in(view)
        .map(|c| c.header.to_string())
        .collect()
}

/// The rows of a view, flagged ones first; a verdict cell is a badge.
fn rows(table: &Table, view: View) -> Vec<Row> {
    let mut rows: Vec<Row> = table
        .records
        .iter()
        .map(|record| Row {
            cells: table
                .columns_in(view)
                .map(|c| {
                    let text = escape(&c.cell.show(record));
                    match c.flagged_when {
                        Some(_) if text.is_empty() => "<td class=\"verdict\"></td>".to_string(),
                        Some(_) => format!(
                            "<td class=\"verdict\">{}</td>",
                            badge(if c.flags(record) { "no" } else { "ok" }, &text)
                        ),
                        None => format!("<td>{text}</td>"),
                    }
                })
                .collect(),
            flagged: table.is_flagged(record).then_some("no"),
        })
        .collect();
    rows.sort_by_key(|row| row.flagged.is_none());
    rows
}

/// A badge: `class` is `ok`, `maybe` or `no`; the text says what colour alone would not.
pub(super) fn badge(class: &str, html: &str) -> String {
    format!("<span class=\"badge {class}\">{html}</span>")
}

/// A `<table>` with `attributes`, a caption, a header row and rows of ready cells.
pub(super) fn grid(attributes: &str, caption: &str, headers: &[String], rows: &[Row]) -> String {
    let mut out = format!(
        "<table {attributes}>\n<caption>{}</caption>\n<thead><tr>",
        escape(caption)
    );
    for header in headers {
        out.push_str(&format!("<th>{}</th>", escape(header)));
    }
    out.push_str("</tr></thead>\n<tbody>\n");
    for row in rows {
        match row.flagged {
            Some(class) => out.push_str(&format!("<tr class=\"flagged flagged-{class}\">")),
            None => out.push_str("<tr>"),
        }
        for cell in &row.cells {
            out.push_str(cell);
        }
        out.push_str("</tr>\n");
    }
    out.push_str("</tbody>\n</table>");
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

/// A staged CSV (a summary's table): every column, as written, in a box of its own that
/// scrolls with its first column fixed.
pub(super) fn csv_table(name: &str, text: &str) -> Result<String> {
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
        .map(|record| {
            Ok(Row {
                cells: record
                    .map_err(invalid)?
                    .iter()
                    .map(|field| format!("<td>{}</td>", escape(&readable(field))))
                    .collect(),
                flagged: None,
            })
        })
        .collect::<Result<Vec<Row>>>()?;
    let stem = name.trim_end_matches(".csv");
    Ok(format!(
        "<div class=\"scroll wide\">{}</div>\n",
        grid(
            &format!("data-table=\"{}\" class=\"csv\"", escape(stem)),
            name,
            &headers,
            &rows
        )
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::{Cell, col};
    use serde_json::json;

    #[test]
    fn a_csv_table_escapes_its_cells() {
        let table = csv_table("claims.csv", "claim,verdict\n\"<x> & y\",pass\n").unwrap();
        assert!(table.contains("<td>&lt;x&gt; &amp; y</td>"), "{table}");
        assert!(table.contains("data-table=\"claims\""), "{table}");
    }

    #[test]
    fn flagged_rows_come_first_with_their_verdict_badged() {
        let record = |name: &str, check: &str| {
            json!({"name": name, "check": check})
                .as_object()
                .unwrap()
                .clone()
        };
        let table = Table {
            title: "t".into(),
            columns: vec![
                col("name", Cell::Plain("name")),
                col("check", Cell::Plain("check")).flags_when("fail"),
            ],
            records: vec![
                record("a", "pass"),
                record("b", "fail"),
                record("c", "pass"),
            ],
            ..Table::default()
        };
        let html = experiment_tables(&table, "t");
        let order: Vec<usize> = ["<td>b</td>", "<td>a</td>", "<td>c</td>"]
            .iter()
            .map(|cell| html.find(cell).unwrap())
            .collect();
        assert!(order[0] < order[1] && order[1] < order[2], "{html}");
        assert!(html.contains("<tr class=\"flagged flagged-no\"><td>b</td><td class=\"verdict\"><span class=\"badge no\">fail</span>"), "{html}");
        assert!(
            html.contains("1 of 3 rows flagged (check = fail: 1), listed first"),
            "{html}"
        );
    }
}
