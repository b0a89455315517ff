//! Every registered experiment as a subcommand: its own flags, then the flags every
//! experiment takes ([`RunArgs`]).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Args, FromArgMatches};

use bloomlab::Result;
use bloomlab::console;
use bloomlab::experiments::Registered;
use bloomlab::params::preflight;
use bloomlab::report::progress_bar;

use super::command::Command;
use super::output::{OutputArgs, emit, parse_plot_path};

const EXPERIMENT_HELP: &str = "\
Exit status: 0 when every check passes, 1 when a check fails (with --strict, the bits check
of any row), 2 for bad input.

The bits check: a row fails when the exact binomial p-value of its count against
fill_measured^k, the prediction from the filter's own bits, is below 6.334e-5 (bits_p).";

/// The flags every experiment subcommand takes beside its own parameters: where and how
/// the result is written, and what fails the run.
#[derive(Args, Debug)]
struct RunArgs {
    /// Exit 1 when any row fails the bits check
    #[arg(long)]
    strict: bool,
    /// Draw the plate to FILE.svg (measured points with 95% intervals, predicted curves)
    #[arg(long, value_name = "FILE.svg", value_parser = parse_plot_path)]
    plot: Option<PathBuf>,
    /// Run even when the estimate says the run exceeds 10 minutes or the memory available
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    output: OutputArgs,
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
}

/// Runs a registered experiment from its subcommand's matches.
fn run_experiment(experiment: &dyn Registered, matches: &ArgMatches) -> Result<ExitCode> {
    let args =
        RunArgs::from_arg_matches(matches).map_err(|e| bloomlab::Error::Output(e.to_string()))?;
    experiment.planning_cost(matches)?.check(args.yes)?;
    // The output paths before planning, which for some experiments (advise) is itself work.
    if let Some(path) = &args.output.out {
        preflight::check_output("out", path)?;
    }
    if let Some(path) = &args.plot {
        preflight::check_output("plot", path)?;
        if let Some(out) = &args.output.out {
            preflight::check_distinct(("out", out), ("plot", path))?;
        }
    }
    let prepared = experiment.prepare_matches(matches)?;
    prepared.cost().check(args.yes)?;
    let bar = progress_bar(args.output.quiet, "keys");
    bar.set_message(experiment.name());
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
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}
