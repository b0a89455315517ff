//! `check`: re-run every definition and compare it with the committed results.
//!
//! With the same seeds a run is deterministic, so it must reproduce its committed CSV
//! exactly: the fresh outcome is rendered by the same CSV exporter, and every column but the
//! timings (`ns_*`, and what advise computes from them) must match as text, cell by cell; any difference fails, printed as
//! `<experiment>: row R: column C was X, now Y`. With `--reseed` the values move, and every
//! comparison joins one [`Comparisons`] judged at one family-wise false-alarm rate.

use std::fs;
use std::path::Path;

use indicatif::ProgressBar;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::Serialize;

use super::check_files::{
    CsvText, SHAPE_COLUMNS, compare_files, differences, read_regular, regular,
};
use super::definition::{Definition, Expectation};
use super::family::{Comparison, Comparisons, bits_check_p_value};
use super::summary::{Found, Run};
use super::{RESULT_EXTENSIONS, result_name};
use crate::error::Result;
use crate::experiments::{Outcome, is_timing};
use crate::pipeline::measurement::Measurement;
use crate::report::{Column, Record};
use crate::stats::{normal_two_sided_p, two_sample_z};
use crate::theory::fill_variance;

/// A re-seeded check: the seed its key and hash seeds are drawn from, and the family-wise
/// false-alarm rate of its comparisons.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Reseed {
    pub seed: u64,
    pub family_alpha: f64,
}

/// Key and hash seeds for a re-seeded check, a pure function of `reseed_seed`.
/// Each below 2^63, so that an experiment file (TOML integers are i64) can hold it too.
pub fn reseed_seeds(reseed_seed: u64) -> (u64, u64) {
    let mut rng = Pcg64::seed_from_u64(reseed_seed);
    (rng.next_u64() >> 1, rng.next_u64() >> 1)
}

/// A line of the `check` summary.
#[derive(Clone, Debug, PartialEq, Serialize, schemars::JsonSchema)]
pub struct CheckRow {
    /// The experiment file's name.
    pub experiment: String,
    /// Rows the fresh run produced.
    pub rows: usize,
    /// Same seeds: cells compared as text. Reseeded: the experiment's members of the family.
    pub compared: usize,
    /// Reseeded: comparisons identical to one an earlier experiment made (the same setup
    /// with the same seeds), counted there.
    pub shared: usize,
    /// Cells that differ, or members the family rejects.
    pub failed: usize,
    /// Committed rows not compared: those of filters this machine cannot run (an adapter
    /// that is not installed), each said in a `SKIP` line with the reason.
    pub skipped: usize,
    /// Reseeded: the smallest p-value of the experiment's comparisons (two significant
    /// digits); empty with the same seeds.
    pub smallest_p: String,
    /// The bits check of the fresh run and what the file expects of it.
    pub bits_check: String,
    /// `ok`, or `FAIL` when any cell differs or any member is rejected.
    pub verdict: String,
}

impl Record for CheckRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "experiment" => Plain(experiment),
            "rows" => Plain(rows),
            "compared" => Plain(compared),
            "shared" => Plain(shared).wide_only(),
            "failed" => Plain(failed),
            "skipped" => Plain(skipped),
            "smallest p" => Plain(smallest_p),
            "bits check" => Plain(bits_check),
            "verdict" => Plain(verdict),
        ]
    }
}

/// The outcome of `check`.
#[derive(Clone, Debug)]
pub struct CheckReport {
    pub rows: Vec<CheckRow>,
    /// One line per failure, naming the experiment, the row and the column.
    pub failures: Vec<String>,
    /// One line per filter whose committed rows were not compared, with the reason.
    pub skips: Vec<String>,
    /// How the runs were compared, for the title.
    pub method: String,
    /// The key and hash seeds used with `--reseed`.
    pub seeds: Option<(u64, u64)>,
    /// What the run found, for the page of the suite this one is a sub-suite of.
    pub found: Found,
}

/// Refuses, before any work, a results file that the run compares and that is not a regular
/// file ([`regular`]).
fn refuse_irregular(definitions: &[Definition], results: &Path) -> Result<()> {
    let own = definitions
        .iter()
        .flat_map(|d| RESULT_EXTENSIONS.map(|ext| result_name(d, ext)));
    let whole_run =
        (super::SUMMARIES.iter()).flat_map(|s| s.file_names().iter().map(|n| n.to_string()));
    for name in own.chain(whole_run) {
        regular(&results.join(name))?;
    }
    Ok(())
}

/// One line per results file in `results` that no definition writes.
fn orphans(definitions: &[Definition], results: &Path) -> Vec<String> {
    let Ok(entries) = fs::read_dir(results) else {
        return Vec::new();
    };
    let mut lines: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_file())
        .filter(|p| {
            p.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| RESULT_EXTENSIONS.contains(&e))
        })
        .filter(|p| {
            let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            !definitions.iter().any(|d| d.name == stem)
        })
        .filter(|p| {
            let name = p.file_name().and_then(|s| s.to_str()).unwrap_or_default();
            !super::SUMMARIES
                .iter()
                .any(|s| s.file_names().contains(&name))
        })
        .map(|p| {
            format!(
                "{}: results file without an experiment definition",
                p.display()
            )
        })
        .collect();
    lines.sort();
    lines
}

/// The committed CSV of `definition` (empty when missing), and a line for each of its
/// results files that is missing.
fn committed(definition: &Definition, results: &Path) -> Result<(CsvText, Vec<String>)> {
    let mut missing = Vec::new();
    for ext in RESULT_EXTENSIONS {
        let path = results.join(result_name(definition, ext));
        if !path.exists() {
            missing.push(format!("{}: missing: {}", definition.name, path.display()));
        }
    }
    let path = results.join(result_name(definition, "csv"));
    let table = match read_regular(&path)? {
        Some(bytes) => CsvText::parse(&bytes, &path)?,
        None => CsvText::default(),
    };
    Ok((table, missing))
}

/// Removes from `committed` the rows of the filters the fresh run skipped (its
/// [`Outcome::skipped`]); returns how many, and one line per skipped filter with the reason.
/// The fresh run has no rows for them, so the rest compare row for row; a committed row of
/// a filter that is neither run nor skipped still fails as a missing row.
fn leave_out_skipped(
    experiment: &str,
    committed: &mut CsvText,
    outcome: &Outcome,
) -> (usize, Vec<String>) {
    let Some(at) = committed.header.iter().position(|h| h == "filter") else {
        return (0, Vec::new());
    };
    let mut lines = Vec::new();
    let before = committed.records.len();
    for skipped in &outcome.skipped {
        let covered = |record: &Vec<String>| record.get(at).is_some_and(|f| skipped.covers(f));
        let count = committed.records.iter().filter(|r| covered(r)).count();
        committed.records.retain(|r| !covered(r));
        lines.push(format!(
            "{experiment}: {count} committed rows of {} not compared: {}",
            skipped.filter, skipped.reason
        ));
    }
    (before - committed.records.len(), lines)
}

/// What one experiment contributed to the check.
struct Compared {
    compared: usize,
    /// Reseeded: comparisons that an earlier experiment made already (the same setup).
    shared: usize,
    lines: Vec<String>,
}

/// The summary line of one experiment; `counts` are the fresh rows, the committed rows
/// skipped and the failure lines.
fn summary_row(
    definition: &Definition,
    outcome: &Outcome,
    compared: &Compared,
    (rows, skipped, failed): (usize, usize, usize),
) -> CheckRow {
    CheckRow {
        experiment: definition.name.clone(),
        rows,
        compared: compared.compared,
        shared: compared.shared,
        failed,
        skipped,
        smallest_p: String::new(),
        bits_check: bits_summary(
            outcome.bits_failures().is_empty(),
            definition.expect_bits_check,
        ),
        verdict: if failed == 0 { "ok" } else { "FAIL" }.into(),
    }
}

/// The experiment's tables compared: with the same seeds every column but the timings
/// exactly, and the experiment's own expectation; else into the reseeded `family`. A missing
/// committed table (`tables.2` false) is said once, as missing, not as every row missing.
fn compare(
    definition: &Definition,
    outcome: &Outcome,
    (committed, fresh, exists): (&CsvText, &CsvText, bool),
    family: Option<&mut Comparisons>,
) -> Compared {
    match family {
        _ if !exists => Compared {
            compared: 0,
            shared: 0,
            lines: definition.unmet(outcome),
        },
        None => {
            let (compared, mut lines) =
                differences(&definition.name, committed, fresh, |c| !is_timing(c));
            lines.extend(definition.unmet(outcome));
            Compared {
                compared,
                shared: 0,
                lines,
            }
        }
        Some(family) => add_to_family(definition, outcome, committed, fresh, family),
    }
}

/// The identity of a comparison: the fresh row's setup and values and the committed value,
/// so that the same setup measured twice with the same seeds is one comparison.
fn comparison_key(quantity: &str, row: &Measurement, committed: Option<&str>) -> String {
    format!(
        "{quantity} {} {} n={} m={} k={} q={} seeds {} {}: {} {} / {}",
        row.filter,
        row.hash,
        row.n,
        row.m,
        row.k,
        row.queries,
        row.seed,
        row.hash_seed,
        row.false_positives,
        row.fill_measured,
        committed.unwrap_or("-")
    )
}

/// The two-sample comparisons of one row with its committed values, as (column, z): the
/// rate with variance [`Measurement::fpr_variance`] and the fill with the exact occupancy
/// variance `Var(X/m)`, each sample carrying it, `z = (now - was) / sqrt(2 var)`.
fn drift(row: &Measurement, committed: &CsvText, index: usize) -> Vec<(&'static str, Drift)> {
    drift_quantities(row)
        .into_iter()
        .map(|(column, now, var)| {
            let cell = committed.get(index, column).unwrap_or_default();
            let was = cell.parse::<f64>().ok().filter(|was| was.is_finite());
            let carried = committed.header.iter().any(|h| h == column);
            let drift = match (now.is_nan() || !carried, was) {
                (true, _) => Drift::Blank,
                (false, None) => Drift::Unread(cell.to_string()),
                (false, Some(was)) => Drift::Z(two_sample_z(now, var, was, var)),
            };
            (column, drift)
        })
        .collect()
}

/// One quantity of a row against its committed value.
enum Drift {
    /// Blank now (a column the structure leaves blank: an exec program's fill), or a column
    /// the experiment's table does not carry (advise's rows have no fill).
    Blank,
    /// A committed value that is not a number (NaN, blank, text, a shifted column): a
    /// failure, never a row skipped.
    Unread(String),
    Z(f64),
}

/// The quantities [`drift`] compares, as (column, value now, its variance): columns named
/// through the compiler ([`crate::field`]), and a test holds that the results write them.
fn drift_quantities(row: &Measurement) -> [(&'static str, f64, f64); 2] {
    let fill_var = fill_variance(row.m, row.k as f64 * row.n as f64);
    [
        (
            crate::field!(Measurement, fpr_measured),
            row.fpr_measured,
            row.fpr_variance(),
        ),
        (
            crate::field!(Measurement, fill_measured),
            row.fill_measured,
            fill_var,
        ),
    ]
}

/// The comparisons of one experiment under reseeding, each with its identity: the rate and
/// fill of every row of an experiment expected to pass (a flawed hash is not binomial across
/// seeds), the bits check of every row, and every verdict of an experiment expected to pass.
fn candidates(
    definition: &Definition,
    outcome: &Outcome,
    committed: &CsvText,
) -> Vec<(String, Comparison)> {
    let member = |row: Option<usize>, quantity: &str, p_value: f64, detail: String| Comparison {
        experiment: definition.name.clone(),
        row,
        quantity: quantity.to_string(),
        p_value,
        detail,
    };
    let compares_values = definition.expect_bits_check == Expectation::Pass;
    let mut candidates = Vec::new();
    for (i, row) in outcome.measurements.iter().enumerate() {
        if compares_values && i < committed.records.len() {
            for (column, drift) in drift(row, committed, i) {
                let (p, detail) = match drift {
                    Drift::Blank => continue,
                    Drift::Unread(cell) => {
                        (0.0, format!("committed value {cell:?} is not a number"))
                    }
                    Drift::Z(z) => (normal_two_sided_p(z), format!("z = {z:.2}")),
                };
                let key = comparison_key(column, row, committed.get(i, column));
                candidates.push((key, member(Some(i + 1), column, p, detail)));
            }
        }
        // A row without a prediction from its bits (`exec:`) has no bits check to fail.
        if row.z_from_fill.is_nan() {
            continue;
        }
        let key = comparison_key("bits_check", row, None);
        let detail = format!("z_from_fill = {:.2}", row.z_from_fill);
        let p = bits_check_p_value(row);
        candidates.push((key, member(Some(i + 1), "bits_check", p, detail)));
    }
    if compares_values {
        for verdict in &outcome.verdicts {
            let key = format!("verdict {}: {}", definition.command, verdict.check);
            let detail = format!("{} at its own level {}", verdict.check, verdict.alpha);
            candidates.push((key, member(None, "verdict", verdict.p_value, detail)));
        }
    }
    candidates
}

/// Reseeded: the shape columns exactly, and the experiment's comparisons into the family.
fn add_to_family(
    definition: &Definition,
    outcome: &Outcome,
    committed: &CsvText,
    fresh: &CsvText,
    family: &mut Comparisons,
) -> Compared {
    let shape = |c: &str| SHAPE_COLUMNS.contains(&c);
    let (_, mut lines) = differences(&definition.name, committed, fresh, shape);
    let columns = |csv: &CsvText| -> Vec<String> {
        (csv.header.iter().filter(|c| !is_timing(c)).cloned()).collect()
    };
    // A run whose every row was skipped (an adapter not installed) writes its schema's
    // columns, not those its rows would: nothing to hold the committed ones to.
    if !fresh.records.is_empty() && columns(committed) != columns(fresh) {
        lines.push(format!(
            "{}: the committed columns are not those a run writes: {} against {}",
            definition.name,
            columns(committed).join(","),
            columns(fresh).join(",")
        ));
    }
    let (mut compared, mut shared) = (0, 0);
    for (key, comparison) in candidates(definition, outcome, committed) {
        if family.add(key, comparison) {
            compared += 1;
        } else {
            shared += 1;
        }
    }
    Compared {
        compared,
        shared,
        lines,
    }
}

/// The line of a member the family rejects.
fn rejection_line(member: &Comparison, family: &Comparisons) -> String {
    let row = member.row.map(|r| format!("row {r}: ")).unwrap_or_default();
    format!(
        "{}: {row}{}: p = {:.2e} ({}), rejected at family-wise α = {} over {} comparisons",
        member.experiment,
        member.quantity,
        member.p_value,
        member.detail,
        family.alpha,
        family.len()
    )
}

/// Applies the family's rejections to the summary: every rejected member of an experiment
/// expected to pass fails it; an experiment expected to fail its bits check fails when none
/// of its bits checks is rejected.
fn judge(family: &Comparisons, definitions: &[Definition], report: &mut CheckReport) {
    let rejected = family.rejected();
    for (definition, row) in definitions.iter().zip(&mut report.rows) {
        let members: Vec<(&Comparison, bool)> = (family.members().iter().zip(&rejected))
            .filter(|(c, _)| c.experiment == definition.name)
            .map(|(c, &r)| (c, r))
            .collect();
        let bits_failed = members
            .iter()
            .any(|(c, r)| *r && c.quantity == "bits_check");
        let expected = definition.expect_bits_check;
        let lines: Vec<String> = match expected {
            Expectation::Pass => (members.iter().filter(|(_, r)| *r))
                .map(|(c, _)| rejection_line(c, family))
                .collect(),
            Expectation::Fail if !bits_failed => vec![format!(
                "{}: expected to fail the bits check, but no row's bits check is rejected at family-wise α = {}: the check has lost its teeth",
                definition.name, family.alpha
            )],
            Expectation::Fail | Expectation::SeedDependent => Vec::new(),
        };
        row.smallest_p = (members.iter().map(|(c, _)| c.p_value))
            .reduce(f64::min)
            .map(format_p)
            .unwrap_or_default();
        row.bits_check = bits_summary(!bits_failed, expected);
        row.failed += lines.len();
        if !lines.is_empty() {
            row.verdict = "FAIL".into();
        }
        report.failures.extend(lines);
    }
}

/// A p-value with two significant digits; 0 when it is below what a double can hold.
fn format_p(p: f64) -> String {
    if p == 0.0 {
        "0".into()
    } else {
        format!("{p:.1e}")
    }
}

fn bits_summary(passed: bool, expected: Expectation) -> String {
    let state = if passed { "pass" } else { "fail" };
    format!("{state} (expected {})", expected.name())
}

/// Re-runs every definition and compares it with the committed results in `results`: with
/// the same seeds exactly, with `reseed` as one family at its family-wise false-alarm rate
/// (see the module), and every other file the run writes ([`compare_files`]). Orphan and
/// missing results files fail either way; `found` is what the sub-suites checked before found.
pub fn check(
    definitions: &[Definition],
    results: &Path,
    reseed: Option<Reseed>,
    found: &[Found],
    progress: &ProgressBar,
) -> Result<CheckReport> {
    let seeds = reseed.map(|r| reseed_seeds(r.seed));
    let mut family = reseed.map(|r| Comparisons::new(r.family_alpha));
    let mut report = CheckReport {
        rows: Vec::new(),
        failures: orphans(definitions, results),
        skips: Vec::new(),
        method: String::new(),
        seeds,
        found: Found::default(),
    };
    refuse_irregular(definitions, results)?;
    let mut runs = Vec::with_capacity(definitions.len());
    for definition in definitions {
        let outcome = definition.run(seeds, progress)?;
        let fresh = CsvText::of(&outcome, &definition.name)?;
        let (mut committed, mut lines) = committed(definition, results)?;
        let (skipped, skips) = leave_out_skipped(&definition.name, &mut committed, &outcome);
        report.skips.extend(skips);
        let csv = results.join(result_name(definition, "csv"));
        let tables = (&committed, &fresh, csv.exists());
        let compared = compare(definition, &outcome, tables, family.as_mut());
        lines.extend(compared.lines.iter().cloned());
        let counts = (fresh.records.len(), skipped, lines.len());
        report
            .rows
            .push(summary_row(definition, &outcome, &compared, counts));
        report.failures.extend(lines);
        runs.push(Run {
            definition,
            outcome,
        });
    }
    report.found = Found::of(results, &runs);
    let exact = family.is_none();
    report
        .failures
        .extend(compare_files(runs, found, results, exact)?);
    report.method = match &family {
        None => "same seeds: every column but the timings (ns_*) must match exactly".into(),
        Some(family) => {
            judge(family, definitions, &mut report);
            format!(
                "reseeded: {} comparisons at family-wise false-alarm rate {} (Holm; first bound p < {:.1e})",
                family.len(),
                family.alpha,
                family.first_bound()
            )
        }
    };
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::drift_quantities;
    use crate::pipeline::measure;
    use crate::pipeline::measurement::Setup;
    use crate::structures::Spec;

    /// A compared column the results do not write would make the reseeded check compare
    /// nothing, silently (its NaN is dropped): every one must be a written column.
    #[test]
    fn every_compared_column_is_one_the_results_write() {
        let spec = Spec::shape(Default::default(), 10_000, 7);
        let setup = Setup {
            spec,
            n: 1_000,
            queries: 1_000,
            ..Setup::default()
        };
        let row = measure("drift", &setup).unwrap();
        let written = serde_json::to_value(&row).unwrap();
        for (column, now, _) in drift_quantities(&row) {
            assert!(written.get(column).is_some(), "{column} is not written");
            assert!(!now.is_nan(), "{column} of a classic filter");
        }
    }
}
