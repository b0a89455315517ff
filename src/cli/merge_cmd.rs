//! `bloomlab merge`: the parts of a sharded run added up into exactly the output, files and
//! exit status of the single run (docs/SHARDING.md).

use std::ffi::OsString;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

use bloomlab::report::Format;
use bloomlab::shard::merge::Parts;
use bloomlab::shard::read_part;
use bloomlab::{Error, Result};

use super::command::Fixed;
use super::output::{parse_format, parse_plot_path};

/// `bloomlab merge`.
pub(super) static MERGE: Fixed<MergeArgs> = Fixed {
    name: "merge",
    about: "Add up the partial files of a run sharded with --shard I/N into its output",
    after_help:
        "The parts must come from one build and one command, and cover every unit of work once:
anything else is refused (exit 2) before work. The command's own --format, --out, --plot,
--strict apply, unless given here; the exit status is the single run's.

Examples:
  bloomlab sweep-size --queries 1e9 --shard 0/2 --partial parts/0.json
  bloomlab sweep-size --queries 1e9 --shard 1/2 --partial parts/1.json
  bloomlab merge parts/",
    run: run_merge,
    merge: None,
};

#[derive(Args, Debug)]
pub(super) struct MergeArgs {
    /// Partial files, or folders of them (every *.json file inside)
    #[arg(required = true, value_name = "PART")]
    parts: Vec<PathBuf>,
    /// Output format, instead of the command's: table, csv, json, markdown
    #[arg(long, value_parser = parse_format)]
    format: Option<Format>,
    /// Write the output to FILE (atomically), instead of the command's --out
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Draw the plate to FILE.svg, instead of the command's --plot
    #[arg(long, value_name = "FILE.svg", value_parser = parse_plot_path)]
    plot: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    quiet: bool,
}

/// The files of `parts`: each file given, and the `*.json` files of each folder, sorted.
fn part_files(parts: &[PathBuf]) -> Result<Vec<PathBuf>> {
    let mut files = Vec::new();
    for path in parts {
        if !path.is_dir() {
            files.push(path.clone());
            continue;
        }
        let entries = std::fs::read_dir(path).map_err(|e| Error::Part {
            path: path.clone(),
            message: format!("cannot be read ({e})"),
        })?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|x| x == "json") && p.is_file())
            .collect();
        found.sort();
        files.extend(found);
    }
    Ok(files)
}

fn run_merge(args: &MergeArgs) -> Result<ExitCode> {
    let files = part_files(&args.parts)?;
    let parts = Parts(
        (files.into_iter())
            .map(|path| Ok((path.clone(), read_part(&path)?)))
            .collect::<Result<_>>()?,
    );
    let command = parts.command()?;
    let first = parts.0[0].0.clone();
    let unreadable = |message: String| Error::Part {
        path: first.clone(),
        message,
    };
    let name = command.first().cloned().unwrap_or_default();
    let found = (super::commands().into_iter())
        .find(|c| c.name() == name)
        .ok_or_else(|| unreadable(format!("`{name}` is not a command of this build")))?;
    // Merge's output flags after the command's own, which they override.
    let mut line: Vec<OsString> = vec!["bloomlab".into()];
    line.extend(command.into_iter().map(OsString::from));
    let format = args.format.map(|f| OsString::from(f.name()));
    let out = args.out.clone().map(OsString::from);
    let plot = args.plot.clone().map(OsString::from);
    for (flag, value) in [("--format", format), ("--out", out), ("--plot", plot)] {
        line.extend(
            value
                .map(|value| [flag.into(), value])
                .into_iter()
                .flatten(),
        );
    }
    line.extend(args.quiet.then(|| "--quiet".into()));
    let matches = (super::command().mut_subcommand(&name, |s| s.args_override_self(true)))
        .try_get_matches_from(line)
        .map_err(|e| {
            unreadable(format!(
                "its command, with merge's output flags, does not parse here: {e}"
            ))
        })?;
    let (_, sub) = matches
        .subcommand()
        .ok_or_else(|| unreadable("its command names no subcommand".into()))?;
    found.merge(sub, &parts)
}
