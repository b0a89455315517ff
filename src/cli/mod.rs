//! Command-line arguments and the glue from them to the library: one file per command, one
//! list of commands ([`commands`]): a new command is one file and one line there.

use std::process::ExitCode;

use clap::ArgMatches;

use bloomlab::Result;
use bloomlab::experiments;

use command::Command;

mod bench_cmd;
mod command;
mod conform_cmd;
mod experiment_cmd;
mod merge_cmd;
mod output;
mod size_cmd;
mod suite_cmd;

const EXAMPLES: &str = "\
Examples:
  bloomlab sweep-size
  bloomlab sweep-k --bits-per-elem 10
  bloomlab overfill --k 7,14 --format markdown
  bloomlab seed-check --hash low-bits --m 32768 --k 4
  bloomlab size --n 4000 --fpr 0.01
  bloomlab compare --n 100000 --fpr 0.01,0.001
  bloomlab audit --n 1000000 --fpr 0.01
  bloomlab sweep-size --filter fastbloom";

/// The whole command line: every command of [`commands`] with its own flags.
pub fn command() -> clap::Command {
    let top = clap::Command::new("bloomlab")
        .version(bloomlab::shard::VERSION)
        .about(
            "A laboratory for Bloom filters: measured false-positive rates beside every prediction",
        )
        .after_help(EXAMPLES)
        .subcommand_required(true)
        .arg_required_else_help(true);
    commands()
        .into_iter()
        .fold(top, |top, command| top.subcommand(command.command()))
}

/// Runs the subcommand the command line names.
pub fn run(matches: &ArgMatches) -> Result<ExitCode> {
    bloomlab::program::exec_timeout()?;
    let (name, sub) = matches
        .subcommand()
        .ok_or_else(|| bloomlab::Error::Output("no subcommand given".into()))?;
    let command = commands()
        .into_iter()
        .find(|c| c.name() == name)
        .ok_or_else(|| bloomlab::Error::Output(format!("no command `{name}`")))?;
    command.run(sub)
}

/// Every subcommand, in the order `--help` lists them: the fixed commands, then the
/// experiments in their registry's order.
fn commands() -> Vec<&'static dyn Command> {
    let fixed: [&'static dyn Command; 6] = [
        &size_cmd::SIZE,
        &suite_cmd::REPRODUCE,
        &suite_cmd::CHECK,
        &bench_cmd::BENCH,
        &conform_cmd::CONFORM,
        &merge_cmd::MERGE,
    ];
    let experiments = experiments::registry()
        .iter()
        .map(|e| e as &'static dyn Command);
    fixed.into_iter().chain(experiments).collect()
}
