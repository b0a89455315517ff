//! What `check` says about files, beside the cells of the experiments' tables: committed
//! rows aligned with fresh ones (so one deleted row is "row N missing", not a column-by-column
//! failure of every row after it), and every file a whole run writes (each experiment's
//! Markdown and plate, the claims ledger, the page) staged afresh and compared with its
//! committed copy.

use std::fs;
use std::path::Path;

use super::reproduce::{skipped_whole, write_run, write_summaries};
use super::summary::{Found, Run};
use crate::error::{Error, Result};
use crate::experiments::Outcome;
use crate::report::files::Staging;
use crate::report::{self, Format};

/// The bytes of a committed results file, none when it does not exist; one that is not a
/// regular file (a FIFO would hang the read, a folder cannot be one) is refused.
pub(super) fn read_regular(path: &Path) -> Result<Option<Vec<u8>>> {
    match regular(path)? {
        false => Ok(None),
        true => fs::read(path).map(Some).map_err(|e| Error::io(path, e)),
    }
}

/// Whether the results file `path` exists; an error naming `--results` when it is not a
/// regular file (through a symbolic link, its target).
pub(super) fn regular(path: &Path) -> Result<bool> {
    match fs::metadata(path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(Error::io(path, e)),
        Ok(meta) if !meta.is_file() => Err(Error::invalid(
            "results",
            path.display(),
            "is not a regular file (a FIFO, a device or a folder)",
            "a results folder of regular files, as reproduce writes them",
        )),
        Ok(_) => Ok(true),
    }
}

/// The columns that fix a row's setup, which stay put when only the seeds change.
pub(super) const SHAPE_COLUMNS: [&str; 7] =
    ["experiment", "filter", "hash", "n", "m", "k", "queries"];

/// A results table as CSV text: its header and records.
#[derive(Clone, Debug, Default)]
pub(super) struct CsvText {
    pub(super) header: Vec<String>,
    pub(super) records: Vec<Vec<String>>,
}

impl CsvText {
    pub(super) fn parse(text: &[u8], path: &Path) -> Result<Self> {
        let failed = |e: csv::Error| Error::Results {
            path: path.to_path_buf(),
            message: e.to_string(),
        };
        let mut reader = csv::Reader::from_reader(text);
        let header = reader.headers().map_err(failed)?.iter().map(String::from);
        let header = header.collect();
        let records = reader
            .records()
            .map(|r| r.map(|r| r.iter().map(String::from).collect()))
            .collect::<std::result::Result<_, _>>()
            .map_err(failed)?;
        Ok(CsvText { header, records })
    }

    /// The committed part of the outcome as the CSV exporter writes it.
    pub(super) fn of(outcome: &Outcome, name: &str) -> Result<Self> {
        let text = report::render(outcome.committed().0, Format::CSV)?;
        CsvText::parse(text.as_bytes(), Path::new(name))
    }

    pub(super) fn get(&self, row: usize, column: &str) -> Option<&str> {
        let at = self.header.iter().position(|h| h == column)?;
        self.records.get(row)?.get(at).map(String::as_str)
    }
}

/// Cells compared and the lines of those that differ between the committed table and the
/// fresh one, over the columns that `compared` admits.
pub(super) fn differences(
    experiment: &str,
    committed: &CsvText,
    fresh: &CsvText,
    compared: impl Fn(&str) -> bool,
) -> (usize, Vec<String>) {
    let mut lines = Vec::new();
    // A table without rows has no columns either (they come from its rows): nothing to say
    // about columns beyond the rows that were, or are, missing.
    if !committed.records.is_empty() && !fresh.records.is_empty() {
        for (from, to, change) in [
            (committed, fresh, "was committed, now absent"),
            (fresh, committed, "was absent, now present"),
        ] {
            let gone = (from.header.iter()).filter(|c| compared(c) && !to.header.contains(c));
            lines.extend(gone.map(|column| format!("{experiment}: column {column} {change}")));
        }
    }
    let shared: Vec<&String> = (fresh.header.iter())
        .filter(|c| compared(c) && committed.header.contains(c))
        .collect();
    let (cells, rows) = row_differences(experiment, committed, fresh, &shared);
    lines.extend(rows);
    (cells, lines)
}

/// How the committed rows differ from the fresh ones, said of the committed file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum RowChange {
    /// Fresh row `now` (from 0) is missing from the committed file.
    Missing(usize),
    /// Committed row `was` (from 0) was added: the fresh run has no such row.
    Added(usize),
    /// Committed row `was` stands where fresh row `now` stands, with other values.
    Changed(usize, usize),
}

/// Aligns the committed rows' keys with the fresh ones by their longest common subsequence
/// (equal rows matched in order); between two matches, the rows left on both sides pair up
/// in order as changed, and the rest are missing or added.
pub(super) fn align(was: &[String], now: &[String]) -> Vec<RowChange> {
    let (a, b) = (was.len(), now.len());
    // common[i][j]: the longest common subsequence of was[i..] and now[j..].
    let mut common = vec![vec![0u32; b + 1]; a + 1];
    for i in (0..a).rev() {
        for j in (0..b).rev() {
            common[i][j] = if was[i] == now[j] {
                common[i + 1][j + 1] + 1
            } else {
                common[i + 1][j].max(common[i][j + 1])
            };
        }
    }
    let (mut i, mut j) = (0, 0);
    let mut changes = Vec::new();
    let mut gap = (Vec::new(), Vec::new());
    while i < a || j < b {
        if i < a && j < b && was[i] == now[j] && common[i][j] == common[i + 1][j + 1] + 1 {
            close_gap(&mut gap, &mut changes);
            (i, j) = (i + 1, j + 1);
        } else if j == b || (i < a && common[i + 1][j] >= common[i][j + 1]) {
            gap.0.push(i);
            i += 1;
        } else {
            gap.1.push(j);
            j += 1;
        }
    }
    close_gap(&mut gap, &mut changes);
    changes
}

fn close_gap(gap: &mut (Vec<usize>, Vec<usize>), changes: &mut Vec<RowChange>) {
    let (was, now) = (std::mem::take(&mut gap.0), std::mem::take(&mut gap.1));
    let paired = was.len().min(now.len());
    changes.extend((0..paired).map(|p| RowChange::Changed(was[p], now[p])));
    changes.extend(was[paired..].iter().map(|&w| RowChange::Added(w)));
    changes.extend(now[paired..].iter().map(|&n| RowChange::Missing(n)));
}

/// Cells compared and the lines of the rows that differ, over the `shared` columns: the
/// rows aligned first ([`align`]), so a deleted row is one line.
pub(super) fn row_differences(
    experiment: &str,
    committed: &CsvText,
    fresh: &CsvText,
    shared: &[&String],
) -> (usize, Vec<String>) {
    let mut lines = Vec::new();
    let keys = |table: &CsvText| -> Vec<String> {
        (0..table.records.len())
            .map(|row| {
                let cells = shared.iter().map(|c| table.get(row, c).unwrap_or_default());
                cells.collect::<Vec<_>>().join("\u{1f}")
            })
            .collect()
    };
    let changes = align(&keys(committed), &keys(fresh));
    let unchanged = committed.records.len()
        - (changes.iter())
            .filter(|c| !matches!(c, RowChange::Missing(_)))
            .count();
    let mut cells = unchanged * shared.len();
    for change in changes {
        match change {
            RowChange::Missing(now) => lines.push(format!("{experiment}: row {} missing", now + 1)),
            RowChange::Added(was) => lines.push(format!("{experiment}: row {} added", was + 1)),
            RowChange::Changed(was, now) => {
                let row = if was == now {
                    format!("row {}", was + 1)
                } else {
                    format!("row {} (now row {})", was + 1, now + 1)
                };
                for column in shared {
                    cells += 1;
                    let (a, b) = (committed.get(was, column), fresh.get(now, column));
                    if a != b {
                        lines.push(format!(
                            "{experiment}: {row}: column {column} was {}, now {}",
                            a.unwrap_or_default(),
                            b.unwrap_or_default()
                        ));
                    }
                }
            }
        }
    }
    (cells, lines)
}

/// Stages every file the run of `runs` writes into a scratch folder and compares each with
/// the committed one in `results`: a missing one is `missing: FILE`; a CSV file no experiment
/// owns (the ledger's) row by row, with `exact` every column but the timings, else its shape
/// columns; any other file byte for byte, with `exact` only (a reseeded run changes them).
/// The files of an experiment that skipped a filter are not compared, nor then the
/// whole-run files, which show it; the experiments' CSV files are compared elsewhere.
pub(super) fn compare_files(
    runs: Vec<Run>,
    found: &[Found],
    results: &Path,
    exact: bool,
) -> Result<Vec<String>> {
    let scratch = tempfile::tempdir().map_err(|e| Error::io(std::env::temp_dir(), e))?;
    let mut staging = Staging::new(scratch.path())?;
    let names: Vec<String> = runs.iter().map(|r| r.definition.name.clone()).collect();
    let (kept, written): (Vec<Run>, Vec<Run>) =
        runs.into_iter().partition(|r| skipped_whole(&r.outcome));
    let mut partial = Vec::new();
    for run in &written {
        write_run(run.definition, &run.outcome, &mut staging)?;
        if !run.outcome.skipped.is_empty() {
            partial.push(run.definition.name.clone());
        }
    }
    let mut whole: Vec<String> = kept.iter().map(|r| r.definition.name.clone()).collect();
    write_summaries(&written, found, &mut staging, &mut whole, results)?;
    let own = |name: &str| names.iter().any(|n| name.starts_with(&format!("{n}.")));
    let mut lines = Vec::new();
    for name in staging.names() {
        let path = results.join(name);
        let Some(committed) = read_regular(&path)? else {
            // An experiment's own missing files are said with its name (`committed`).
            if !own(name) {
                lines.push(format!("missing: {}", path.display()));
            }
            continue;
        };
        let stem = name.rsplit_once('.').map_or(name.as_str(), |(s, _)| s);
        let compared = if own(name) {
            !partial.iter().any(|p| p == stem) && !name.ends_with(".csv")
        } else {
            partial.is_empty() && kept.is_empty()
        };
        let fresh = staging.read(name).unwrap_or_default();
        if compared && committed != fresh {
            lines.extend(file_differences(name, &path, &committed, &fresh, exact)?);
        }
    }
    Ok(lines)
}

/// How a staged file differs from the committed one: a CSV file row by row (every column
/// with `exact`, else its shape columns), any other file by its first differing line, with
/// `exact` only.
fn file_differences(
    name: &str,
    path: &Path,
    committed: &[u8],
    fresh: &[u8],
    exact: bool,
) -> Result<Vec<String>> {
    if name.ends_with(".csv") {
        let was = CsvText::parse(committed, path)?;
        let now = CsvText::parse(fresh, path)?;
        let (_, diff) = differences(name, &was, &now, |c| exact || SHAPE_COLUMNS.contains(&c));
        Ok(diff)
    } else if exact {
        Ok(vec![first_difference(path, committed, fresh)])
    } else {
        Ok(Vec::new())
    }
}

/// `FILE: line L was X, now Y` for the first line that differs.
fn first_difference(path: &Path, was: &[u8], now: &[u8]) -> String {
    let (was, now) = (String::from_utf8_lossy(was), String::from_utf8_lossy(now));
    let (mut a, mut b) = (was.lines(), now.lines());
    let mut line = 1;
    loop {
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => line += 1,
            (x, y) => {
                let short = |s: Option<&str>| {
                    let s = s.unwrap_or("(end of file)");
                    let cut: String = s.chars().take(80).collect();
                    if cut.len() < s.len() {
                        format!("{cut}...")
                    } else {
                        cut
                    }
                };
                return format!(
                    "{}: line {line} was {:?}, now {:?}",
                    path.display(),
                    short(x),
                    short(y)
                );
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::RowChange::*;
    use super::*;

    fn keys(text: &str) -> Vec<String> {
        text.chars().map(String::from).collect()
    }

    #[test]
    fn one_deleted_row_is_one_missing_row_and_one_extra_is_added() {
        assert_eq!(align(&keys("abcde"), &keys("abde")), vec![Added(2)]);
        assert_eq!(align(&keys("abde"), &keys("abcde")), vec![Missing(2)]);
    }

    #[test]
    fn a_row_with_other_values_is_changed_in_place() {
        assert_eq!(align(&keys("abcd"), &keys("abxd")), vec![Changed(2, 2)]);
        assert_eq!(align(&keys("ab"), &keys("")), vec![Added(0), Added(1)]);
        assert!(align(&keys("abc"), &keys("abc")).is_empty());
    }
}
