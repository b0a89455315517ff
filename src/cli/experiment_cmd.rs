//! Every registered experiment as a subcommand: its own flags, then the flags every
//! experiment takes ([`RunArgs`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Args};

use bloomlab::Result;
use bloomlab::console;
use bloomlab::experiments::{Prepared, Registered, Units};
use bloomlab::params::preflight;
use bloomlab::report::progress_bar;
use bloomlab::shard::merge::Parts;
use bloomlab::shard::{self, Shard};

use super::command::{Command, exit_code, parsed, unsharded};
use super::output::{OutputArgs, emit, parse_plot_path};

const EXPERIMENT_HELP: &str = "\
Exit status: 0 when every check passes, 1 when a check fails (with --strict, the bits check
of any row), 2 for bad input.

The bits check: a row fails when the exact binomial p-value of its count against
fill_measured^k, the prediction from the filter's own bits, is below 6.334e-5 (bits_p).";

/// The flags every experiment subcommand takes beside its own parameters: where and how
/// the result is written, what fails the run, and the share of it this process counts.
#[derive(Args, Debug)]
pub(super) struct RunArgs {
    /// Exit 1 when any row fails the bits check
    #[arg(long)]
    strict: bool,
    /// Draw the plate to FILE.svg (measured points with 95% intervals, predicted curves)
    #[arg(long, value_name = "FILE.svg", value_parser = parse_plot_path)]
    pub(super) plot: Option<PathBuf>,
    /// Run even when the estimate says the run exceeds 10 minutes or the memory available
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    shards: ShardArgs,
    #[command(flatten)]
    pub(super) output: OutputArgs,
}

/// The flags of a command whose run is cut into units of work (docs/SHARDING.md).
#[derive(Args, Debug)]
pub(super) struct ShardArgs {
    /// Count only shard I (from 0) of N of the run's units of work into --partial FILE;
    /// `bloomlab merge` adds the N parts up into this command's output (docs/SHARDING.md)
    #[arg(long, value_name = "I/N", requires = "partial")]
    shard: Option<Shard>,
    /// The partial file --shard writes (JSON)
    #[arg(long, value_name = "FILE", requires = "shard")]
    partial: Option<PathBuf>,
    /// Print the run's units of work, its estimated seconds and this build as JSON, and
    /// run nothing (what a driver sizes its shards by)
    #[arg(long)]
    estimate: bool,
}

impl ShardArgs {
    /// Whether `--estimate` or `--shard` was given: the run is not run whole.
    pub(super) fn given(&self) -> bool {
        self.estimate || self.shard.is_some()
    }
}

/// A registered experiment as a subcommand.
impl Command for &'static dyn Registered {
    fn name(&self) -> &'static str {
        Registered::name(*self)
    }

    fn command(&self) -> clap::Command {
        let sub = Registered::command(*self);
        let help = sub
            .get_after_help()
            .map(|h| format!("{h}\n\n{EXPERIMENT_HELP}"))
            .unwrap_or_else(|| EXPERIMENT_HELP.to_string());
        // RunArgs's own doc comment would replace the experiment's `about`: set it last.
        RunArgs::augment_args(sub.after_help(help)).about(self.about())
    }

    fn run(&self, matches: &ArgMatches) -> Result<ExitCode> {
        run_experiment(*self, matches)
    }

    fn merge(&self, matches: &ArgMatches, parts: &Parts) -> Result<ExitCode> {
        merge_experiment(*self, matches, parts)
    }
}

/// Runs a registered experiment from its subcommand's matches: whole, one shard of it, or
/// only its estimate.
fn run_experiment(experiment: &dyn Registered, matches: &ArgMatches) -> Result<ExitCode> {
    let args: RunArgs = parsed(matches)?;
    if args.shards.given() {
        let mut prepared = experiment.prepare_matches(matches)?;
        let units = prepared.units();
        return sharded(
            experiment.name(),
            units,
            &args.shards,
            args.yes,
            args.output.quiet,
        );
    }
    experiment.planning_cost(matches)?.check(args.yes)?;
    check_outputs(&args)?;
    let prepared = experiment.prepare_matches(matches)?;
    run_prepared(experiment.name(), prepared, &args)
}

/// `bloomlab merge` of a registered experiment's parts: its rows' counts carried in.
fn merge_experiment(
    experiment: &dyn Registered,
    matches: &ArgMatches,
    parts: &Parts,
) -> Result<ExitCode> {
    let run: RunArgs = parsed(matches)?;
    check_outputs(&run)?;
    let mut prepared = experiment.prepare_matches(matches)?;
    let units = prepared
        .units()
        .ok_or_else(|| unsharded(experiment.name(), "parts"))?;
    let rows = units.rows();
    units.set_work(&parts.carried(&rows)?);
    run_prepared(experiment.name(), prepared, &run)
}

/// `--out` and `--plot` writable and distinct: checked before planning, which for some
/// experiments (advise) is itself work.
pub(super) fn check_outputs(args: &RunArgs) -> Result<()> {
    if let Some(path) = &args.output.out {
        preflight::check_output("out", path)?;
    }
    if let Some(path) = &args.plot {
        preflight::check_output("plot", path)?;
        if let Some(out) = &args.output.out {
            preflight::check_distinct(("out", out), ("plot", path))?;
        }
    }
    Ok(())
}

/// `--estimate` (the units of the whole run, its estimated seconds and this build, as
/// JSON) or `--shard I/N --partial FILE` (the shard's units counted and written; the output
/// flags are recorded for `merge`, not used here) of a run cut into `units`.
pub(super) fn sharded(
    name: &str,
    units: Option<&mut dyn Units>,
    args: &ShardArgs,
    yes: bool,
    quiet: bool,
) -> Result<ExitCode> {
    let flag = if args.estimate { "estimate" } else { "shard" };
    let units = units.ok_or_else(|| unsharded(name, flag))?;
    let rows = units.rows();
    if args.estimate {
        let text = serde_json::json!({
            "build": shard::BuildId::this(),
            "units": shard::units(&rows),
            "rows": rows.len(),
            "seconds": units.cost().seconds(),
        });
        console::out(&format!("{text}\n"));
        return Ok(ExitCode::SUCCESS);
    }
    let (Some(shard), Some(partial)) = (args.shard, &args.partial) else {
        return Err(unsharded(name, flag));
    };
    preflight::check_output("partial", partial)?;
    units.set_work(&shard::share(&rows, shard));
    units.cost().check(yes)?;
    let bar = progress_bar(quiet, "keys");
    bar.set_message(format!("{name} shard {shard}"));
    let part = shard::count_share(command_line(), units, shard, &bar)?;
    bar.finish_and_clear();
    shard::write_part(partial, &part)?;
    Ok(ExitCode::SUCCESS)
}

/// This process's command line after `bloomlab`, less `--shard` and `--partial` and their
/// values: the command a part records.
fn command_line() -> Vec<String> {
    let mut words = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--shard" | "--partial" => {
                args.next();
            }
            a if a.starts_with("--shard=") || a.starts_with("--partial=") => {}
            _ => words.push(arg),
        }
    }
    words
}

/// Runs a validated experiment, its outputs checked ([`check_outputs`]), and prints, writes and exits as its flags say (also what
/// `merge` runs, its counts carried in).
pub(super) fn run_prepared(
    name: &str,
    prepared: Box<dyn Prepared>,
    args: &RunArgs,
) -> Result<ExitCode> {
    prepared.cost().check(args.yes)?;
    let bar = progress_bar(args.output.quiet, "keys");
    bar.set_message(name.to_string());
    let outcome = prepared.run(&bar)?;
    bar.finish_and_clear();
    emit(&outcome.table, &args.output)?;
    if let Some(path) = &args.plot {
        bloomlab::plot::write_plot(&outcome.plate, path)?;
    }
    let mut failed = false;
    let bits_failures = outcome.bits_failures();
    if args.strict && !bits_failures.is_empty() {
        console::note(&format!(
            "bits check failed ({} rows; measured rate beyond 4 standard errors of the rate its bits predict):",
            bits_failures.len()
        ));
        for line in bits_failures {
            console::note(&format!("  {line}"));
        }
        failed = true;
    }
    for line in &outcome.failures() {
        console::note(&format!("check failed: {line}"));
        failed = true;
    }
    Ok(exit_code(failed))
}
