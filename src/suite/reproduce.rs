//! `reproduce`: run every definition and replace the results with what they produce, all
//! together or not at all.

use std::path::Path;
use std::time::{Duration, Instant};

use indicatif::ProgressBar;

use super::definition::Definition;
use super::result_name;
use super::summary::{Run, SUMMARIES};
use crate::error::Result;
use crate::experiments::Outcome;
use crate::files::Staging;
use crate::report::{self, Format};

/// Runs every definition and writes `results/<name>.csv`, `.md` and `.svg`, then every
/// [`SUMMARIES`] file of the whole run; `on_done` sees each outcome with its wall time.
/// Returns the unmet expectations.
///
/// Every file is first written into a staging folder inside `results` and moved into place
/// only once every experiment has run: an experiment that fails, or a run that is killed,
/// before that leaves `results` exactly as it was; the renames at the end (one per file, no
/// data copied) are the only window in which it holds part of the old set and part of the
/// new (see [`Staging`]).
pub fn reproduce(
    definitions: &[Definition],
    results: &Path,
    progress: &ProgressBar,
    mut on_done: impl FnMut(&Definition, &Outcome, Duration),
) -> Result<Vec<String>> {
    let mut staging = Staging::new(results)?;
    let mut unmet = Vec::new();
    let mut runs = Vec::with_capacity(definitions.len());
    for definition in definitions {
        let started = Instant::now();
        progress.set_message(definition.name.clone());
        let outcome = definition.run(None, progress)?;
        for (ext, format) in [("csv", Format::CSV), ("md", Format::MARKDOWN)] {
            let text = report::render(&outcome.table, format)?;
            staging.write(&result_name(definition, ext), text.as_bytes())?;
        }
        let svg = result_name(definition, "svg");
        crate::plot::write_plot(&outcome.plate, &staging.path(&svg))
            .map_err(|e| staging.named(&svg, e))?;
        unmet.extend(definition.unmet(&outcome));
        let elapsed = started.elapsed();
        on_done(definition, &outcome, elapsed);
        runs.push(Run {
            definition,
            outcome,
            elapsed,
        });
    }
    for summary in SUMMARIES {
        unmet.extend(summary.write(&runs, &mut staging)?);
    }
    staging.commit()?;
    Ok(unmet)
}
