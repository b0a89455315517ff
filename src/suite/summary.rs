//! Files written from a whole `reproduce` run, after every experiment has run: one file per
//! summary (the claims ledger, the HTML report) plus one line in
//! [`crate::suite::reproduce::SUMMARIES`].

use super::definition::Definition;
use crate::error::Result;
use crate::experiments::Outcome;
use crate::report::files::Staging;

/// One experiment of the run: its definition and what it produced.
pub struct Run<'a> {
    pub definition: &'a Definition,
    pub outcome: Outcome,
}

/// What a suite's run found, shown on the page of the suite it sits in: its results folder's
/// name, and how many of its experiments met their expectation, of how many ran.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Found {
    pub name: String,
    pub met: usize,
    pub total: usize,
}

impl Found {
    pub fn of(results: &std::path::Path, runs: &[Run]) -> Found {
        let name = results
            .file_name()
            .map(|n| n.to_string_lossy().into_owned());
        Found {
            name: name.unwrap_or_default(),
            met: (runs.iter())
                .filter(|run| run.definition.unmet(&run.outcome).is_empty())
                .count(),
            total: runs.len(),
        }
    }
}

/// A file (or files) derived from every run of a `reproduce`, written into the same staging
/// folder as the experiments' results, so that it is swapped in with them or not at all.
pub trait Summary: Sync {
    /// The names of the files it writes in the results folder, which `check` therefore
    /// does not count as orphans.
    fn file_names(&self) -> &'static [&'static str];
    /// Writes the summary's files of `runs` into `staging`, with what the sub-suites staged
    /// before found; returns unmet expectations.
    fn write(&self, runs: &[Run], found: &[Found], staging: &mut Staging) -> Result<Vec<String>>;
}
