//! `reproduce`: run every definition and replace the results with what they produce, all
//! together or not at all.

use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::definition::Definition;
use super::result_name;
use super::summary::{Run, Summary};
use crate::error::Result;
use crate::experiments::Outcome;
use crate::report::files::Staging;
use crate::report::{self, Format};

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
}

impl Staged {
    /// Moves every staged file into the results folder.
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
    let staged = stage(definitions, results, progress, on_done)?;
    let unmet = staged.unmet.clone();
    staged.commit()?;
    Ok(unmet)
}

/// True when every filter of the experiment was skipped (adapters not installed): it measured
/// nothing, and its committed files are kept rather than replaced by empty ones.
fn skipped_whole(outcome: &Outcome) -> bool {
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
/// page (which shows every run) is kept too; [`Staged::kept`] says which and why.
pub fn stage(
    definitions: &[Definition],
    results: &Path,
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
        let elapsed = started.elapsed();
        on_done(definition, &outcome, elapsed);
        if skipped_whole(&outcome) {
            kept.push(format!(
                "{}: kept {}/{}.{{csv,md,svg}} as they were: every filter was skipped",
                definition.name,
                results.display(),
                definition.name
            ));
            continue;
        }
        for (ext, format) in [("csv", Format::CSV), ("md", Format::MARKDOWN)] {
            let text = report::render(&outcome.table, format)?;
            staging.write(&result_name(definition, ext), text.as_bytes())?;
        }
        let svg = result_name(definition, "svg");
        crate::plot::write_plot(&outcome.plate, &staging.path(&svg))
            .map_err(|e| staging.named(&svg, e))?;
        unmet.extend(definition.unmet(&outcome));
        runs.push(Run {
            definition,
            outcome,
            elapsed,
        });
    }
    for summary in SUMMARIES {
        let page = summary.file_names().contains(&super::html::PAGE);
        if page && !kept.is_empty() {
            kept.push(format!(
                "kept {}/{} as it was: it shows every run, and the ones above were skipped",
                results.display(),
                super::html::PAGE
            ));
            continue;
        }
        unmet.extend(summary.write(&runs, &mut staging)?);
    }
    Ok(Staged {
        staging,
        unmet,
        kept,
    })
}
