//! What every subcommand is: one trait for the experiments of
//! [`bloomlab::experiments::registry`] and the commands that are not experiments alike.

use std::process::ExitCode;

use clap::{ArgMatches, Args, FromArgMatches};

use bloomlab::Result;
use bloomlab::shard::merge::Parts;

/// One subcommand: its flags and help, and what it runs.
pub(super) trait Command: Sync {
    fn name(&self) -> &'static str;
    /// The subcommand with its name, about line, flags and help.
    fn command(&self) -> clap::Command;
    /// Runs it on the subcommand's parsed flags.
    fn run(&self, matches: &ArgMatches) -> Result<ExitCode>;
    /// Runs it with the counts of `parts` carried in (`bloomlab merge`).
    fn merge(&self, _matches: &ArgMatches, _parts: &Parts) -> Result<ExitCode> {
        Err(unsharded(self.name(), "parts"))
    }
}

/// A command that is not an experiment: its typed flags `A` and the function they go to.
pub(super) struct Fixed<A: 'static> {
    pub(super) name: &'static str,
    pub(super) about: &'static str,
    pub(super) after_help: &'static str,
    pub(super) run: fn(&A) -> Result<ExitCode>,
    /// What `merge` runs, for a command cut into units of work.
    pub(super) merge: Option<fn(&A, &Parts) -> Result<ExitCode>>,
}

impl<A: Args + FromArgMatches + Sync + 'static> Command for Fixed<A> {
    fn name(&self) -> &'static str {
        self.name
    }

    fn command(&self) -> clap::Command {
        // After the flags: a flattened struct's doc comment would otherwise be the about line.
        A::augment_args(clap::Command::new(self.name))
            .about(self.about)
            .long_about(None)
            .after_help(self.after_help)
    }

    fn run(&self, matches: &ArgMatches) -> Result<ExitCode> {
        (self.run)(&parsed(matches)?)
    }

    fn merge(&self, matches: &ArgMatches, parts: &Parts) -> Result<ExitCode> {
        let merge = self.merge.ok_or_else(|| unsharded(self.name, "parts"))?;
        merge(&parsed(matches)?, parts)
    }
}

/// The typed flags `A` of a subcommand's matches.
pub(super) fn parsed<A: FromArgMatches>(matches: &ArgMatches) -> Result<A> {
    A::from_arg_matches(matches).map_err(|e| bloomlab::Error::Output(e.to_string()))
}

/// Exit status 1 when a check failed, else 0.
pub(super) fn exit_code(failed: bool) -> ExitCode {
    ExitCode::from(u8::from(failed))
}

/// The refusal of `flag` for a command that is not cut into units of work.
pub(super) fn unsharded(name: &str, flag: &'static str) -> bloomlab::Error {
    bloomlab::Error::invalid(
        flag,
        name,
        format!("{name} is not cut into units of work"),
        "sweep-size, sweep-k, overfill, seed-check, compare, audit, size --measure",
    )
}
