//! `bloomlab reproduce` and `bloomlab check`: the whole suite of experiment files.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use rand::Rng;

use bloomlab::Result;
use bloomlab::console;
use bloomlab::params::preflight;
use bloomlab::report::{Format, Table, progress_bar};
use bloomlab::suite;

use super::command::{Fixed, exit_code};
use super::output::{OutputArgs, emit, parse_format};

/// `bloomlab reproduce`.
pub(super) static REPRODUCE: Fixed<SuiteArgs> = Fixed {
    name: "reproduce",
    about: "Run every experiment in --experiments and write results/<name>.csv, .md and .svg",
    after_help: "Examples:\n  bloomlab reproduce\n  bloomlab reproduce --experiments experiments --results /tmp/results\n\nExit status 1 when an experiment misses its expected bits check.",
    run: run_reproduce,
    merge: None,
};

/// `bloomlab check`.
pub(super) static CHECK: Fixed<CheckArgs> = Fixed {
    name: "check",
    about: "Re-run every experiment and compare it with the committed results",
    after_help: "With the committed seeds a run must repeat exactly: every column but the timings (ns_*)\nis compared as text, and any difference fails as \"was X, now Y\". With --reseed the key\nand hash seeds are fresh and every comparison of the run (rate and fill of each row\nagainst its committed value, each bits check, each seed-check verdict) is one family,\njudged with Holm's method at --family-alpha (default 0.001). Rows of an adapter that is\nnot installed are left out with a SKIP line.\n\nExamples:\n  bloomlab check\n  bloomlab check --reseed\n  bloomlab check --reseed --reseed-seed 7\n\nExit status 1 naming every drifting experiment, row and column.",
    run: run_check,
    merge: None,
};

#[derive(Args, Debug)]
pub(super) struct SuiteArgs {
    /// Folder of experiment definitions (*.toml) [default: ./experiments when it exists,
    /// else the files built into this binary]
    #[arg(long, value_name = "DIR")]
    experiments: Option<PathBuf>,
    /// Folder of results
    #[arg(long, default_value = "results")]
    results: PathBuf,
    /// No progress bar or progress lines
    #[arg(long, short)]
    quiet: bool,
}

#[derive(Args, Debug)]
pub(super) struct CheckArgs {
    #[command(flatten)]
    suite: SuiteArgs,
    /// Use fresh key and hash seeds, so that the comparison is purely statistical
    #[arg(long)]
    reseed: bool,
    /// Seed from which --reseed draws its seeds (default: from the operating system)
    #[arg(long, requires = "reseed")]
    reseed_seed: Option<u64>,
    /// Family-wise false-alarm rate of --reseed over all its comparisons, in (0, 0.5]
    #[arg(long, default_value_t = suite::DEFAULT_FAMILY_ALPHA, value_parser = parse_family_alpha)]
    family_alpha: f64,
    /// Format of the summary: table, csv, json, markdown
    #[arg(long, default_value = "table", value_parser = parse_format)]
    format: Format,
}

fn parse_family_alpha(s: &str) -> std::result::Result<f64, String> {
    match s.parse::<f64>() {
        Ok(alpha) if alpha > 0.0 && alpha <= 0.5 => Ok(alpha),
        _ => Err(format!(
            "'{s}' is not a rate in (0, 0.5] (allowed: e.g. 0.001)"
        )),
    }
}

/// Refuses an `--experiments` that is not a folder, before any work.
fn check_experiments(args: &SuiteArgs) -> Result<()> {
    match args.experiments.as_ref().filter(|f| !f.is_dir()) {
        Some(folder) => Err(bloomlab::Error::invalid(
            "experiments",
            folder.display(),
            "is not a folder",
            "a folder of experiment files (*.toml)",
        )),
        None => Ok(()),
    }
}

/// Runs `each` on each sub-suite of the suite ([`suite::suite_folders`]), then on the suite
/// itself (whose page shows what its sub-suites found), and returns what each gave.
/// Without a folder (neither `--experiments` nor `./experiments`), the files built into the
/// binary alone.
fn each_suite<T>(
    args: &SuiteArgs,
    mut each: impl FnMut(&SuiteArgs) -> Result<T>,
) -> Result<Vec<T>> {
    check_experiments(args)?;
    let default = PathBuf::from("experiments");
    let Some(root) = args
        .experiments
        .clone()
        .or(default.is_dir().then_some(default))
    else {
        return Ok(vec![each(args)?]);
    };
    suite::suite_folders(&root, &args.results)
        .into_iter()
        .rev()
        .map(|(experiments, results)| {
            each(&SuiteArgs {
                experiments: Some(experiments),
                results,
                quiet: args.quiet,
            })
        })
        .collect()
}

/// Failure when any suite failed.
fn worst(codes: Vec<ExitCode>) -> ExitCode {
    exit_code(codes.iter().any(|c| *c != ExitCode::SUCCESS))
}

/// Stages every suite, then moves all their files in together: all or nothing for the whole
/// run, under a lock on the results folder that a second run is refused by.
fn run_reproduce(args: &SuiteArgs) -> Result<ExitCode> {
    check_experiments(args)?;
    // Every suite's files read first: a bad one leaves the results folder as it was.
    each_suite(args, |suite| {
        suite::load_suite(suite.experiments.as_deref(), true).map(drop)
    })?;
    preflight::check_folder("results", &args.results)?;
    let _lock = bloomlab::report::files::FolderLock::take("results", &args.results)?;
    let mut found = Vec::new();
    let staged = each_suite(args, |suite| {
        let staged = reproduce_folder(suite, &found)?;
        found.push(staged.found.clone());
        Ok(staged)
    })?;
    let mut unmet = Vec::new();
    for suite in &staged {
        for line in &suite.kept {
            console::note(line);
        }
        unmet.extend(suite.unmet.iter().cloned());
    }
    for suite in staged {
        suite.commit()?;
    }
    for line in &unmet {
        console::note(&format!("expectation not met: {line}"));
    }
    Ok(exit_code(!unmet.is_empty()))
}

fn reproduce_folder(args: &SuiteArgs, found: &[suite::Found]) -> Result<suite::Staged> {
    let (definitions, _) = suite::load_suite(args.experiments.as_deref(), args.quiet)?;
    preflight::check_folder("results", &args.results)?;
    let bar = progress_bar(args.quiet, "keys");
    let started = std::time::Instant::now();
    let staged = suite::stage(
        &definitions,
        &args.results,
        found,
        &bar,
        |definition, outcome, time| {
            if !args.quiet {
                bar.suspend(|| {
                    console::note(&format!(
                        "{:<24} {:>3} rows  {:>7.3} s  -> {}/{}.{{csv,md,svg}}",
                        definition.name,
                        outcome.measurements.len(),
                        time.as_secs_f64(),
                        args.results.display(),
                        definition.name
                    ))
                });
            }
            for skipped in &outcome.skipped {
                bar.suspend(|| {
                    console::note(&format!(
                        "{}: skipped {}: {}",
                        definition.name, skipped.filter, skipped.reason
                    ))
                });
            }
        },
    )?;
    bar.finish_and_clear();
    if !args.quiet {
        console::note(&format!(
            "{} experiments in {:.3} s",
            definitions.len(),
            started.elapsed().as_secs_f64()
        ));
    }
    Ok(staged)
}

/// Refuses a results folder that does not exist, before any work; a sub-suite's folder that
/// does not exist is every file of it missing.
fn run_check(args: &CheckArgs) -> Result<ExitCode> {
    check_experiments(&args.suite)?;
    if !args.suite.results.is_dir() {
        // Read first, so that a bad file or the built-in files are said too; nothing runs.
        suite::load_suite(args.suite.experiments.as_deref(), args.suite.quiet)?;
        return Err(bloomlab::Error::invalid(
            "results",
            args.suite.results.display(),
            "no results folder to check against",
            "a folder `bloomlab reproduce --results DIR` wrote (run it first)",
        ));
    }
    let mut found = Vec::new();
    each_suite(&args.suite, |suite| {
        let (code, sub) = check_folder(args, suite, &found)?;
        found.push(sub);
        Ok(code)
    })
    .map(worst)
}

fn check_folder(
    args: &CheckArgs,
    suite: &SuiteArgs,
    found: &[suite::Found],
) -> Result<(ExitCode, suite::Found)> {
    let (definitions, folder) = suite::load_suite(suite.experiments.as_deref(), suite.quiet)?;
    let bar = progress_bar(suite.quiet, "keys");
    let reseed = args.reseed.then(|| suite::Reseed {
        seed: args.reseed_seed.unwrap_or_else(|| rand::rng().next_u64()),
        family_alpha: args.family_alpha,
    });
    let report = suite::check(&definitions, &suite.results, reseed, found, &bar)?;
    bar.finish_and_clear();
    let mut table = Table::from_rows(
        format!(
            "check: {} against {} ({})",
            folder,
            suite.results.display(),
            report.method
        ),
        &report.rows,
    )?;
    if let (Some(suite::Reseed { seed, .. }), Some((key_seed, hash_seed))) = (reseed, report.seeds)
    {
        table.preamble.push(format!(
            "reseeded: --reseed-seed {seed} (key seed {key_seed}, hash seed {hash_seed})"
        ));
    }
    let output = OutputArgs {
        format: args.format,
        out: None,
        wide: false,
        legend: false,
        quiet: suite.quiet,
    };
    emit(&table, &output)?;
    for line in &report.skips {
        console::note(&format!("SKIP {line}"));
    }
    for line in &report.failures {
        console::note(&format!("FAIL {line}"));
    }
    Ok((exit_code(!report.failures.is_empty()), report.found))
}
