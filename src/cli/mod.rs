//! Command-line arguments and the glue from them to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{ArgMatches, Args, CommandFactory, FromArgMatches, Parser, Subcommand};

use bloomlab::Result;
use bloomlab::console;
use bloomlab::experiments::size::{self as sizing, SizeRequest};
use bloomlab::experiments::{self, Registered};
use bloomlab::params::preflight;
use bloomlab::params::{Count, MAX_COUNT, ShapeParams, check_count};
use bloomlab::report::{self, Format, Table, View, progress_bar};
use bloomlab::structures::exec::{self as exec_filter, KeyForm};
use bloomlab::suite;
use rand::Rng;

mod bench_cmd;
use bench_cmd::{BenchArgs, run_bench};

const EXPERIMENT_HELP: &str = "\
Exit status: 0 when every check passes, 1 when a check fails (with --strict, the bits check
of any row), 2 for bad input.

The bits check: a row fails when the exact binomial p-value of its count against
fill_measured^k, the prediction from the filter's own bits, is below 6.334e-5 (bits_p).";

#[derive(Parser, Debug)]
#[command(
    name = "bloomlab",
    version,
    about = "A laboratory for Bloom filters: measured false-positive rates beside every prediction",
    after_help = "Examples:\n  bloomlab sweep-size\n  bloomlab sweep-k --bits-per-elem 10\n  bloomlab overfill --k 7,14 --format markdown\n  bloomlab seed-check --hash low-bits --m 32768 --k 4\n  bloomlab size --n 4000 --fpr 0.01\n  bloomlab compare --n 100000 --fpr 0.01,0.001\n  bloomlab audit --n 1000000 --fpr 0.01\n  bloomlab sweep-size --filter fastbloom"
)]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Size a filter: the rate first, then space, then k, then the warning about n.
    #[command(
        after_help = "Give exactly two of --n, --fpr, --bits-per-key, --m (not --fpr with --bits-per-key).\nWith --n and --fpr, every structure is sized for them too (--measure checks each).\n\nExamples:\n  bloomlab size --n 4000 --fpr 0.01\n  bloomlab size --n 1000000 --fpr 0.001 --measure\n  bloomlab size --n 1000000 --bits-per-key 10\n  bloomlab size --m 8388608 --fpr 0.001 --format json"
    )]
    Size(SizeArgs),
    /// Run every experiment in --experiments and write results/<name>.csv, .md and .svg.
    #[command(
        after_help = "Examples:\n  bloomlab reproduce\n  bloomlab reproduce --experiments experiments --results /tmp/results\n\nExit status 1 when an experiment misses its expected bits check."
    )]
    Reproduce(SuiteArgs),
    /// Re-run every experiment and compare it with the committed results.
    #[command(
        after_help = "With the committed seeds a run must repeat exactly: every column but the timings (ns_*)\nis compared as text, and any difference fails as \"was X, now Y\". With --reseed the key\nand hash seeds are fresh and every comparison of the run (rate and fill of each row\nagainst its committed value, each bits check, each seed-check verdict) is one family,\njudged with Holm's method at --family-alpha (default 0.001). Rows of an adapter that is\nnot installed are left out with a SKIP line.\n\nExamples:\n  bloomlab check\n  bloomlab check --reseed\n  bloomlab check --reseed --reseed-seed 7\n\nExit status 1 naming every drifting experiment, row and column."
    )]
    Check(CheckArgs),
    /// Time insert and query against the peer crates, or time against rate across k.
    #[command(
        after_help = "Each bloomlab design (classic, blocked, split-block) is timed key by key and batched\n(insert_many/contains_many) on multiply-shift, and classic and blocked also on\ndouble-hashing (one hash pair per key, the derivation fastbloom uses), beside the peer\ncrates of its design at equal m and k on the same keys, each peer on its fastest hasher\n(fastbloom on foldhash; bloomfilter takes only SipHash-1-3; sbbf-rs, the split-block\ndesign, takes hashes: bloomlab's multiply-shift, timed with it; no Rust crate implements\nthe 512-bit blocked design); the `peers` feature, on by default. The memory\nlimit is measured in the same run: random cache-line reads, dependent and independent,\nin a buffer of each size.\n\nTimes are CPU ns per key of the bench thread, the median of --passes passes with the\nfastest and slowest. A design's contenders take their passes in turn, with a pass of the\nline reads in each round, so that the machine's other load slows them alike (out of cache\nthe design's filters are held at once: classic three of 128 MiB, four with --full).\nSizes: in-cache m = 40000, out-of-cache m = 2^30 bits, each filled to --bits-per-key;\ninserts time the keys again into the filled filter.\n\nExamples:\n  bloomlab bench\n  bloomlab bench --size in-cache --k 4,7\n  bloomlab bench --full --format csv\n  bloomlab bench --sweep-k --format csv\n  bloomlab bench --workloads"
    )]
    Bench(BenchArgs),
    /// Check a structure against the filter contract: no false negatives, the same answers
    /// for the same seed, batches answered as single keys, steady memory.
    #[command(
        after_help = "Exit status 0 with a one-line summary, 1 naming the first violation and its key.\n\nExamples:\n  bloomlab conform --filter cuckoo\n  bloomlab conform --filter exec:'python3 my_adapter.py'"
    )]
    Conform(ConformArgs),
}

#[derive(Args, Debug)]
struct ConformArgs {
    /// The structure checked, as --filter of the experiments names it
    #[arg(long)]
    filter: bloomlab::structures::FilterKind,
    /// Keys inserted (the capacity the structure is built for) [1..=10^10]
    #[arg(long, default_value = "10000")]
    n: Count,
    /// Target rate of the structure's own constructor (where it has one and no shape is
    /// given), in (0, 1)
    #[arg(long, default_value_t = 0.01, allow_hyphen_values = true)]
    fpr: f64,
    /// Build by shape instead, with m = this many bits per key (default 10) [> 0, <= 10000]
    #[arg(long, allow_hyphen_values = true)]
    bits_per_key: Option<f64>,
    /// Build by shape instead, with k hashes (default 7)
    #[arg(long)]
    k: Option<u32>,
    /// Absent keys asked of the two filters [1..=10^10]
    #[arg(long, default_value = "100000")]
    queries: Count,
    /// Seed of the keys and the hashes
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// How an exec: program hands keys to its library: text, int or bytes (docs/PROTOCOL.md)
    #[arg(long, default_value = "text")]
    key_form: KeyForm,
    /// Run even when the estimate says the run exceeds 10 minutes or the memory available
    #[arg(long)]
    yes: bool,
}

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
    /// How an exec: program hands keys to its library: text, int or bytes (docs/PROTOCOL.md)
    #[arg(long, default_value = "text")]
    key_form: KeyForm,
    /// An option for an exec: program's constructor, sent in its header (any KEY but the
    /// protocol's own fields; VALUE read as JSON, else as text); may be repeated
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = exec_filter::sizing::parse_param)]
    params: Vec<(String, serde_json::Value)>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct SuiteArgs {
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
struct CheckArgs {
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

#[derive(Args, Debug)]
struct SizeArgs {
    /// Keys the filter must hold [1..=10^10]
    #[arg(long, allow_hyphen_values = true)]
    n: Option<Count>,
    /// Target false-positive rate, a fraction in (0, 1)
    #[arg(long, allow_hyphen_values = true)]
    fpr: Option<f64>,
    /// Bits per key, instead of --fpr [> 0, <= 10000]
    #[arg(
        long = "bits-per-key",
        visible_alias = "bits-per-elem",
        allow_hyphen_values = true
    )]
    bits_per_key: Option<f64>,
    /// Bits in the filter [1..=2^36]
    #[arg(long, allow_hyphen_values = true)]
    m: Option<Count>,
    /// With --n and --fpr: only the table of every structure sized for them (CSV and JSON
    /// show the plan otherwise; the terminal shows both)
    #[arg(long)]
    structures: bool,
    /// With --n and --fpr: build every structure, insert n keys and measure its rate
    #[arg(long)]
    measure: bool,
    /// Absent keys --measure queries per structure [1..=10^9, default 1000/ε within 10^5..10^7]
    #[arg(long, requires = "measure")]
    queries: Option<Count>,
    /// Run even when the estimate says the run exceeds 10 minutes or the memory available
    #[arg(long)]
    yes: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Clone, Debug)]
pub struct OutputArgs {
    /// Output format: table, csv, json, markdown
    #[arg(long, default_value = "table", value_parser = parse_format)]
    format: Format,
    /// Write the output to FILE (atomically) instead of stdout
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// Show every column in the terminal table (the default shows the setting, the measured
    /// rate with its interval, the prediction that matters, z and the verdict)
    #[arg(long)]
    wide: bool,
    /// Print each column's name and meaning after the table
    #[arg(long)]
    legend: bool,
    /// No progress bar
    #[arg(long, short)]
    quiet: bool,
}

fn parse_plot_path(s: &str) -> std::result::Result<PathBuf, String> {
    let path = PathBuf::from(s);
    if path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("svg"))
    {
        Ok(path)
    } else {
        Err("plots are written as SVG: give a file name ending in .svg (PNG would need system font libraries)".into())
    }
}

fn parse_format(s: &str) -> std::result::Result<Format, String> {
    s.parse()
}

/// Prints or writes a table; notes go to stderr beside machine formats.
pub fn emit(table: &Table, output: &OutputArgs) -> Result<()> {
    let view = if output.wide {
        View::Wide
    } else {
        output.format.default_view()
    };
    let mut text = output.format.render(table, view)?;
    if output.legend {
        text.push_str(&output.format.render(&table.legend_table()?, View::Wide)?);
    }
    match &output.out {
        Some(path) => report::write_atomic(path, text.as_bytes())?,
        None => console::out(&text),
    }
    if output.format.is_machine() || output.out.is_some() {
        for note in table.preamble.iter().chain(&table.notes) {
            console::note(note);
        }
    }
    Ok(())
}

/// Runs a registered experiment from its subcommand's matches.
fn run_experiment(experiment: &dyn Registered, matches: &ArgMatches) -> Result<ExitCode> {
    let args =
        RunArgs::from_arg_matches(matches).map_err(|e| bloomlab::Error::Output(e.to_string()))?;
    exec_filter::set_key_form(args.key_form);
    exec_filter::sizing::set_params(args.params.clone());
    let prepared = experiment.prepare_matches(matches)?;
    if let Some(path) = &args.output.out {
        preflight::check_output("out", path)?;
    }
    if let Some(path) = &args.plot {
        preflight::check_output("plot", path)?;
        if let Some(out) = &args.output.out {
            preflight::check_distinct(("out", out), ("plot", path))?;
        }
    }
    prepared.cost().check(args.yes)?;
    let bar = progress_bar(args.output.quiet, "keys");
    bar.set_message(experiment.name());
    let outcome = prepared.run(&bar)?;
    bar.finish_and_clear();
    if let Some(error) = exec_filter::take_late_failure() {
        return Err(error);
    }
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

fn run_size(args: &SizeArgs) -> Result<ExitCode> {
    let (n, m) = (args.n.map(|c| c.0), args.m.map(|c| c.0));
    let request = SizeRequest {
        n,
        fpr: args.fpr,
        bits_per_key: args.bits_per_key,
        m,
    };
    let rows = sizing::plan(&request)?;
    let mut plan = Table::from_rows("size: the essay's sizing order", &rows)?;
    plan.preamble = sizing::plan_notes(&rows);
    let (Some(n), Some(fpr)) = (n, args.fpr) else {
        if args.structures || args.measure {
            return Err(bloomlab::Error::invalid(
                "structures",
                "without --n and --fpr",
                "every structure is sized for n keys at a rate",
                "--n N --fpr E",
            ));
        }
        emit(&plan, &args.output)?;
        return Ok(ExitCode::SUCCESS);
    };
    let measuring = args.measure.then(|| sizing::Measuring {
        queries: args
            .queries
            .map_or_else(|| sizing::default_queries(fpr), |c| c.0),
        seed: 1,
    });
    if let Some(how) = measuring {
        bloomlab::params::check_count("queries", how.queries, 1, 1_000_000_000)?;
    }
    sizing::structures_cost(n, fpr, measuring).check(args.yes)?;
    let (structures, notes) = sizing::structures(n, fpr, measuring)?;
    let mut table = sizing::structures_table(n, fpr, &structures)?;
    table.notes = notes;
    let machine = args.output.format.is_machine() || args.output.out.is_some();
    if machine && !(args.structures || args.measure) {
        emit(&plan, &args.output)?;
        console::note("(the table of every structure sized for n and ε: add --structures)");
        return Ok(ExitCode::SUCCESS);
    }
    if !machine && !args.structures {
        emit(&plan, &args.output)?;
        console::out_line("");
    }
    emit(&table, &args.output)?;
    Ok(ExitCode::SUCCESS)
}

fn run_conform(args: &ConformArgs) -> Result<ExitCode> {
    use bloomlab::experiments::conform::{ConformRequest, Conformance, Sizing, conform};
    exec_filter::set_key_form(args.key_form);
    let n = check_count("n", args.n.0, 1, MAX_COUNT)?;
    let queries = check_count("queries", args.queries.0, 1, MAX_COUNT)?;
    let by_shape = args.bits_per_key.is_some() || args.k.is_some();
    let sizing = match args.filter.structure().for_rate {
        Some(_) if !by_shape => Sizing::Rate(sizing::check_fpr(args.fpr)?),
        _ => Sizing::Shape {
            bits_per_key: sizing::check_bits_per_key(args.bits_per_key.unwrap_or(10.0))?,
            k: args
                .k
                .unwrap_or_else(|| fixed_k(args.filter, n, args.fpr).unwrap_or(7)),
        },
    };
    // Two filters of n keys, each asked the queries twice (batched and one by one).
    let k = match sizing {
        Sizing::Shape { k, .. } => k,
        Sizing::Rate(_) => 7,
    };
    let bits = ((n as f64 * args.bits_per_key.unwrap_or(10.0)).ceil()) as u64;
    let operations = 2.0 * (n as f64 + 2.0 * queries as f64);
    bloomlab::params::preflight::Cost {
        key_operations: preflight::weighted_operations(args.filter, k, bits, operations),
        peak_bytes: 2.0 * bits as f64 / 8.0,
    }
    .check(args.yes)?;
    let request = ConformRequest {
        filter: args.filter,
        n,
        sizing,
        queries,
        seed: args.seed,
    };
    match conform(&request)? {
        Conformance::Conforms(summary) => {
            console::out_line(&summary.to_string());
            Ok(ExitCode::SUCCESS)
        }
        Conformance::Violation(violation) => {
            console::note(&format!("conform {}: {violation}", args.filter));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// The k a structure fixes (a split-block filter sets one bit in each of its 8 words): its
/// design's k when it refuses the default 7; `None` for a structure that takes any k.
fn fixed_k(filter: bloomlab::structures::FilterKind, n: u64, fpr: f64) -> Option<u32> {
    let structure = filter.structure();
    let fixed = (structure.layout)(1 << 16, 7).is_err();
    let design = structure.design.filter(|_| fixed)?;
    design(n, fpr.clamp(1e-9, 0.5)).ok().map(|(_, k)| k)
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
    match codes.iter().all(|c| *c == ExitCode::SUCCESS) {
        true => ExitCode::SUCCESS,
        false => ExitCode::FAILURE,
    }
}

/// Stages every suite, then moves all their files in together: all or nothing for the whole
/// run, under a lock on the results folder that a second run is refused by.
fn run_reproduce(args: &SuiteArgs) -> Result<ExitCode> {
    check_experiments(args)?;
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
    Ok(if unmet.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
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
    let code = if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    };
    Ok((code, report.found))
}

/// The whole command line: the fixed commands, then one subcommand per registered
/// experiment with its own flags and the output flags.
pub fn command() -> clap::Command {
    let mut command = Cli::command();
    for experiment in experiments::registry() {
        let sub = experiment.command();
        let help = sub
            .get_after_help()
            .map(|h| format!("{h}\n\n{EXPERIMENT_HELP}"))
            .unwrap_or_else(|| EXPERIMENT_HELP.to_string());
        // RunArgs's own doc comment would replace the experiment's `about`: set it last.
        let sub = RunArgs::augment_args(sub.after_help(help)).about(experiment.about());
        command = command.subcommand(sub);
    }
    command
}

/// Parses the command line and runs what it asks.
pub fn run(matches: &ArgMatches) -> Result<ExitCode> {
    exec_filter::exec_timeout()?;
    let code = run_command(matches)?;
    match exec_filter::take_late_failure() {
        Some(error) => Err(error),
        None => Ok(code),
    }
}

fn run_command(matches: &ArgMatches) -> Result<ExitCode> {
    if let Some((name, sub)) = matches.subcommand()
        && let Some(experiment) = experiments::find(name)
    {
        return run_experiment(experiment, sub);
    }
    let cli = Cli::from_arg_matches(matches).map_err(|e| bloomlab::Error::Output(e.to_string()))?;
    match cli.command {
        Command::Bench(args) => run_bench(&args),
        Command::Reproduce(args) => run_reproduce(&args),
        Command::Check(args) => run_check(&args),
        Command::Size(args) => run_size(&args),
        Command::Conform(args) => run_conform(&args),
    }
}
