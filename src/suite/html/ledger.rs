//! The claims ledger on the page: verdict first (a badge with its word), worst first, the
//! claim with its source, the measured value with its interval, the tolerance and the sample
//! that would decide an undetermined claim; every column of `claims.csv` folded beneath.

use super::tables::{Row, badge, csv_table, grid};
use crate::error::Result;
use crate::report::escape;
use crate::suite::claims::{ClaimRow, worst_first};

/// The file the ledger is staged as, whose full table the section folds.
pub(super) const CSV: &str = "claims.csv";

pub(super) fn class(verdict: &str) -> &'static str {
    match verdict {
        "supported" => "ok",
        "not supported" => "no",
        _ => "maybe",
    }
}

/// The ledger's section; `csv` is the staged `claims.csv`, when there is one.
pub(super) fn section(rows: &[ClaimRow], csv: Option<&str>) -> Result<String> {
    let headers = [
        "verdict",
        "claim",
        "measured [95% interval]",
        "tolerance",
        "to decide",
    ]
    .map(String::from);
    let cells: Vec<Row> = worst_first(rows)
        .into_iter()
        .map(|r| Row {
            cells: vec![
                format!(
                    "<td class=\"verdict\">{}</td>",
                    badge(class(&r.verdict), &escape(&r.verdict))
                ),
                format!(
                    "<td>{}<span class=\"source\">{}</span></td>",
                    escape(&r.claim),
                    escape(&r.source)
                ),
                format!("<td class=\"number\">{}</td>", escape(&r.measured_text())),
                format!("<td>{}</td>", escape(&r.tolerance)),
                format!("<td>{}</td>", escape(&r.to_decide)),
            ],
            flagged: Some(class(&r.verdict)).filter(|c| *c != "ok"),
        })
        .collect();
    let mut out = format!(
        "<section id=\"claims\">\n<h2>The essay's claims</h2>\n{}\n<p>Each claim's tolerance \
         was fixed before measuring. <b>supported</b>: the 95% interval lies inside it; <b>not \
         supported</b>: wholly outside; <b>undetermined</b>: across an edge, with the sample \
         that would decide it (80% power). Worst verdict first.</p>\n",
        grid(
            "data-table=\"claims-ledger\" class=\"ledger\"",
            "claims: the essay's quantitative claims against this run",
            &headers,
            &cells
        )
    );
    if let Some(text) = csv {
        out.push_str(&format!(
            "<details><summary>Every column of {CSV}, with the basis of each value</summary>\n{}</details>\n",
            csv_table(CSV, text)?
        ));
    }
    out.push_str(&format!(
        "<p>Regenerate: <code>bloomlab reproduce</code> (written from the whole run as \
         <code>{CSV}</code> and <code>claims.md</code>)</p>\n</section>\n"
    ));
    Ok(out)
}
