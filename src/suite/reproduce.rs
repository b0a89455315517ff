//! `reproduce`: run every definition and replace the results with what they produce, all
//! together or not at all.

use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::definition::Definition;
use super::summary::{Found, Run, Summary};
use super::{RESULT_EXTENSIONS, result_name};
use crate::error::Result;
use crate::experiments::{Outcome, TIMINGS_FOLDER};
use crate::plot::Plate;
use crate::report::files::Staging;
use crate::report::{self, Format, Table};

/// Every summary `reproduce` writes, in order. The HTML report stays last: it shows the CSV
/// files the summaries before it staged.
pub static SUMMARIES: &[&dyn Summary] = &[&super::claims::Claims, &super::html::HtmlReport];

/// A suite run whose files wait in their staging folder: [`Staged::commit`] moves them in.
pub struct Staged {
    staging: Staging,
    /// Expectations the run did not meet.
    pub unmet: Vec<String>,
    /// One line per file left as it was, and why.
    pub kept: Vec<String>,
    /// What the run found, for the page of the suite it is a sub-suite of.
    pub found: Found,
}

impl Staged {
    pub fn commit(self) -> Result<()> {
        self.staging.commit()
    }
}

/// [`stage`], then [`Staged::commit`]: returns the unmet expectations.
pub fn reproduce(
    definitions: &[Definition],
    results: &Path,
    progress: &ProgressBar,
    on_done: impl FnMut(&Definition, &Outcome, Duration),
) -> Result<Vec<String>> {
    let staged = stage(definitions, results, &[], progress, on_done)?;
    let unmet = staged.unmet.clone();
    staged.commit()?;
    Ok(unmet)
}

/// True when every filter of the experiment was skipped (adapters not installed): it measured
/// nothing, and its committed files are kept rather than replaced by empty ones.
pub(super) fn skipped_whole(outcome: &Outcome) -> bool {
    outcome.measurements.is_empty() && !outcome.skipped.is_empty()
}

/// Runs every definition and stages `results/<name>.csv`, `.md` and `.svg`, then every
/// [`SUMMARIES`] file of the whole run; `on_done` sees each outcome with its wall time.
///
/// Every file is written into a staging folder inside `results`, moved into place only by
/// [`Staged::commit`], which the caller runs once every suite of the run has been staged:
/// an experiment that fails, or a run that is killed, before that leaves `results` exactly as
/// it was; the renames at the end (one per file, no data copied) are the only window in which
/// it holds part of the old set and part of the new (see [`Staging`]).
///
/// An experiment whose every filter was skipped keeps its committed files, and then the HTML
/// page (which shows every run) is kept too; [`Staged::kept`] says which and why. `found`
/// holds what the sub-suites staged before this one found, for its page.
pub fn stage(
    definitions: &[Definition],
    results: &Path,
    found: &[Found],
    progress: &ProgressBar,
    mut on_done: impl FnMut(&Definition, &Outcome, Duration),
) -> Result<Staged> {
    let mut staging = Staging::new(results)?;
    let mut unmet = Vec::new();
    let mut kept = Vec::new();
    let mut runs = Vec::with_capacity(definitions.len());
    for definition in definitions {
        let started = Instant::now();
        progress.set_message(definition.name.clone());
        let outcome = definition.run(None, progress)?;
        on_done(definition, &outcome, started.elapsed());
        if skipped_whole(&outcome) {
            kept.push(format!(
                "{}: {}: every filter was skipped",
                definition.name,
                kept_or_none(results, &result_name(definition, "{csv,md,svg}"), |ext| {
                    result_name(definition, ext)
                })
            ));
            continue;
        }
        write_run(definition, &outcome, &mut staging)?;
        write_timings(definition, &outcome, &mut staging)?;
        unmet.extend(definition.unmet(&outcome));
        runs.push(Run {
            definition,
            outcome,
        });
    }
    unmet.extend(write_summaries(
        &runs,
        found,
        &mut staging,
        &mut kept,
        results,
    )?);
    if let Some(page) = super::html::timings_page(&runs) {
        staging.write(
            &format!("{TIMINGS_FOLDER}/{}", super::html::PAGE),
            page.as_bytes(),
        )?;
    }
    Ok(Staged {
        staging,
        unmet,
        kept,
        found: Found::of(results, &runs),
    })
}

/// `kept results/NAME as it was` when the files `file_of(ext)` of [`RESULT_EXTENSIONS`]
/// exist, else `wrote no results/NAME`: a run that skips an experiment says of its files only
/// what is so.
fn kept_or_none(results: &Path, name: &str, file_of: impl Fn(&str) -> String) -> String {
    let all_there = RESULT_EXTENSIONS
        .iter()
        .all(|ext| results.join(file_of(ext)).is_file());
    match all_there {
        true => format!("kept {}/{name} as it was", results.display()),
        false => format!("wrote no {}/{name}", results.display()),
    }
}

/// Stages the experiment's `results/<name>.csv`, `.md` and `.svg`: the part of its outcome
/// that repeats ([`Outcome::committed`]).
pub(crate) fn write_run(
    definition: &Definition,
    outcome: &Outcome,
    staging: &mut Staging,
) -> Result<()> {
    let (table, plate) = outcome.committed();
    write_files(&result_name(definition, ""), table, plate, staging)
}

/// Stages the whole outcome of an experiment with timings as
/// `results/timings/<name>.csv`, `.md` and `.svg` ([`TIMINGS_FOLDER`], git-ignored).
fn write_timings(definition: &Definition, outcome: &Outcome, staging: &mut Staging) -> Result<()> {
    if outcome.repeatable.is_none() {
        return Ok(());
    }
    let stem = format!("{TIMINGS_FOLDER}/{}", result_name(definition, ""));
    write_files(&stem, &outcome.table, &outcome.plate, staging)
}

/// Stages `<stem>csv`, `<stem>md` and `<stem>svg`.
fn write_files(stem: &str, table: &Table, plate: &Plate, staging: &mut Staging) -> Result<()> {
    for (ext, format) in [("csv", Format::CSV), ("md", Format::MARKDOWN)] {
        let text = report::render(table, format)?;
        staging.write(&format!("{stem}{ext}"), text.as_bytes())?;
    }
    let svg = format!("{stem}svg");
    crate::plot::write_plot(plate, &staging.path(&svg)).map_err(|e| staging.named(&svg, e))
}

/// Stages every [`SUMMARIES`] file of the whole run, but the page when `kept` already holds
/// experiments whose files were kept (it shows every run); returns the unmet expectations.
pub(crate) fn write_summaries(
    runs: &[Run],
    found: &[Found],
    staging: &mut Staging,
    kept: &mut Vec<String>,
    results: &Path,
) -> Result<Vec<String>> {
    let mut unmet = Vec::new();
    for summary in SUMMARIES {
        let page = summary.file_names().contains(&super::html::PAGE);
        if page && !kept.is_empty() {
            kept.push(format!(
                "{}: it shows every run, and the ones above were skipped",
                kept_or_none(results, super::html::PAGE, |_| super::html::PAGE
                    .to_string())
            ));
            continue;
        }
        unmet.extend(summary.write(runs, found, staging)?);
    }
    Ok(unmet)
}
