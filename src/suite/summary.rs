//! Files written from a whole `reproduce` run, after every experiment has run: one file per
//! summary (the claims ledger, the HTML report) plus one line in
//! [`crate::suite::reproduce::SUMMARIES`].

use std::time::Duration;

use super::definition::Definition;
use crate::error::Result;
use crate::experiments::Outcome;
use crate::report::files::Staging;

/// One experiment of the run: its definition, what it produced and how long it took.
pub struct Run<'a> {
    pub definition: &'a Definition,
    pub outcome: Outcome,
    pub elapsed: Duration,
}

/// A file (or files) derived from every run of a `reproduce`, written into the same staging
/// folder as the experiments' results, so that it is swapped in with them or not at all.
pub trait Summary: Sync {
    /// The names of the files it writes in the results folder, which `check` therefore
    /// does not count as orphans.
    fn file_names(&self) -> &'static [&'static str];
    /// Writes the summary's files of `runs` into `staging`; returns unmet expectations.
    fn write(&self, runs: &[Run], staging: &mut Staging) -> Result<Vec<String>>;
}
