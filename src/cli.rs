//! Command-line arguments and the glue from them to the library.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, Parser, Subcommand};
use indicatif::{ProgressBar, ProgressStyle};

use bloomlab::bench;
use bloomlab::compare;
use bloomlab::experiments::{Experiment, Outcome};
use bloomlab::params::{Params, ValueList};
use bloomlab::report::{self, Format, Table};
use bloomlab::sizing::{self, SizeRequest};
use bloomlab::structures::FilterKind;
use bloomlab::suite;
use bloomlab::{HashScheme, Result};
use rand::Rng;

const EXPERIMENT_HELP: &str = "\
Exit status: 0 when every check passes, 1 when a check fails (with --strict, the bits check
of any row), 2 for bad input.

The bits check: a row fails when its measured rate is more than 4 binomial standard errors
from fill_measured^k, the prediction from the filter's own bits.";

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
    /// Rate and fill against bits per key (the space), for one or several k.
    #[command(after_help = format!("Examples:\n  bloomlab sweep-size\n  bloomlab sweep-size --k 4,6,8 --bits-per-key 2..16 --format csv --out curve.csv\n  bloomlab sweep-size --hash low-bits --m 32768 --k 4 --strict\n\n{EXPERIMENT_HELP}"))]
    SweepSize(ExperimentArgs),
    /// Rate against the number of hashes k at fixed space; marks (m/n) ln 2 and the minimum.
    #[command(after_help = format!("Examples:\n  bloomlab sweep-k --bits-per-elem 10\n  bloomlab sweep-k --bits-per-elem 8,12 --k 1..20\n\n{EXPERIMENT_HELP}"))]
    SweepK(ExperimentArgs),
    /// A filter designed for --design-n keys receiving s times as many.
    #[command(after_help = format!("Examples:\n  bloomlab overfill\n  bloomlab overfill --k 14 --factors 1,1.5,2\n\n{EXPERIMENT_HELP}"))]
    Overfill(OverfillArgs),
    /// Scale n and m together, then re-draw only the hash seed; prints a verdict.
    #[command(after_help = format!("Examples:\n  bloomlab seed-check\n  bloomlab seed-check --hash low-bits --m 32768 --k 4\n\nTests (each at significance 0.001):\n  scale:     Cochran's Q of the rates, each with variance p(1-p)/q + (k p/f)^2 Var(fill),\n             against chi-square with S-1 degrees of freedom;\n  hash-seed: sum of z^2 of each count against its own fill^k, against chi-square with\n             S degrees of freedom, failing in either tail.\n\n{EXPERIMENT_HELP}"))]
    SeedCheck(SeedCheckArgs),
    /// Size a filter: the rate first, then space, then k, then the warning about n.
    #[command(
        after_help = "Give exactly two of --n, --fpr, --bits-per-key, --m (not --fpr with --bits-per-key).\n\nExamples:\n  bloomlab size --n 4000 --fpr 0.01\n  bloomlab size --n 1000000 --bits-per-key 10\n  bloomlab size --m 8388608 --fpr 0.001 --format json"
    )]
    Size(SizeArgs),
    /// Run every experiment in --experiments and write results/<name>.csv, .md and .svg.
    #[command(
        after_help = "Examples:\n  bloomlab reproduce\n  bloomlab reproduce --experiments experiments --results /tmp/results\n\nExit status 1 when an experiment misses its expected bits check."
    )]
    Reproduce(SuiteArgs),
    /// Re-run every experiment and compare it with the committed results.
    #[command(
        after_help = "Each rate and fill is compared with its committed value as two samples,\nz = (new - old) / sqrt(2 var), with the rate's variance p(1-p)/q + (k p/f)^2 Var(fill)\nand the fill's exact occupancy variance; a row fails beyond --z-bound (default 4).\nWith --reseed the key and hash seeds are fresh and the bound is raised to the\nBonferroni bound for a family-wise false-alarm rate of 0.001.\n\nExamples:\n  bloomlab check\n  bloomlab check --reseed\n  bloomlab check --reseed --reseed-seed 7\n\nExit status 1 naming every drifting experiment, row and column."
    )]
    Check(CheckArgs),
    /// Time insert and query against the peer crates, or time against rate across k.
    #[command(
        after_help = "Peers (fastbloom, bloomfilter) are timed beside bloomlab's classic filter at equal m and k\n(the `peers` feature, on by default).\n\nTimes are the best of --repeats single-threaded passes, in ns per key. Sizes:\nin-cache m = 40000, out-of-cache m = 2^30 bits, each filled to --bits-per-key.\n\nExamples:\n  bloomlab bench --size in-cache --k 4,7\n  bloomlab bench --sweep-k --format csv"
    )]
    Bench(BenchArgs),
    /// Every structure sized for the same n and rate: space against the floor, rate, speed.
    #[command(
        after_help = "Structures: classic, blocked (512-bit blocks), split-block (k = 8), counting\n(4-bit counters), cuckoo (buckets of 4 fingerprints at 95% load) and binary-fuse (static,\nbuilt from all keys at the first query; 8, 16 or 32-bit fingerprints). Each is sized for\nthe target by its own formula, then measured with at least 100 expected false positives. Each design (its bits per\nkey and k) is also timed, single-threaded, in a 40,000-bit table (in cache) and a\n2^30-bit one (out of cache); --untimed leaves that out.\n\nExamples:\n  bloomlab compare --n 100000 --fpr 0.01\n  bloomlab compare --n 20000 --fpr 0.05,0.01,0.002 --untimed\n  bloomlab compare --n 1000000 --fpr 0.001 --format markdown"
    )]
    Compare(CompareArgs),
    /// Each shipped crate configured by target rate and n, measured at n, 1.1n, 1.5n and 2n.
    #[command(
        after_help = "Crates: bloomlab's classic filter, fastbloom, bloomfilter and growable-bloom-filter,\neach configured the way its README shows (target rate and n):\n  fastbloom              BloomFilter::with_false_pos(eps).seed(s).expected_items(n)\n  bloomfilter            Bloom::new_for_fp_rate_with_seed(n, eps, seed)\n  growable-bloom-filter  GrowableBloom::new(eps, n)   (takes no seed)\n\nQueries default to 200/eps (at least 10^5, at most 2*10^8), so that 100 or more false\npositives are expected at the promise; fewer are reported as unresolved. A row whose\nrate is more than 4 standard errors above the configured rate is flagged (a finding:\nthe exit status stays 0).\n\nExamples:\n  bloomlab audit --n 1000000 --fpr 0.01\n  bloomlab audit --n 100000000 --fpr 0.000001 --format markdown\n  bloomlab audit --n 10000 --fpr 0.01 --filter growable-bloom-filter --loads 1,2,4,8"
    )]
    Audit(AuditArgs),
}

#[derive(Args, Debug)]
struct AuditArgs {
    /// Keys each filter is configured for [1..=10^8, default 10^6]
    #[arg(long, allow_hyphen_values = true)]
    n: Option<u64>,
    /// Configured false-positive rates: a fraction in (0, 1), or a list [default 0.01]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    fpr: Option<String>,
    /// Loads: keys inserted over n, a list [> 0, <= 100, default 1,1.1,1.5,2]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    loads: Option<String>,
    /// Absent queries per row [1..=10^10, default 200/fpr within 10^5..=2*10^8]
    #[arg(long, allow_hyphen_values = true)]
    queries: Option<u64>,
    /// One crate only: classic, fastbloom, bloomfilter, growable-bloom-filter
    #[arg(long, value_parser = parse_filter)]
    filter: Option<FilterKind>,
    /// Seed of the key generator [default 1]
    #[arg(long, allow_hyphen_values = true)]
    seed: Option<u64>,
    /// Seed given to the crates that accept one [default 2]
    #[arg(long, allow_hyphen_values = true)]
    hash_seed: Option<u64>,
    /// Draw the plate to FILE.svg (rate against load per crate, the promise as a line)
    #[arg(long, value_name = "FILE.svg", value_parser = parse_plot_path)]
    plot: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct CompareArgs {
    /// Keys [1..=10^8]
    #[arg(long, allow_hyphen_values = true)]
    n: u64,
    /// Target false-positive rates: a fraction in (0, 1), or a list
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    fpr: String,
    /// Least number of absent queries [1..=10^8]
    #[arg(long, default_value_t = 60_000)]
    queries: u64,
    /// Seed of the key generator
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Seed of the hash parameters
    #[arg(long, default_value_t = 2)]
    hash_seed: u64,
    /// Leave out the timings (each design is timed in a 40,000-bit table and a 2^30-bit one,
    /// which takes about 30 s per structure and rate: the large table holds 10^8 keys)
    #[arg(long)]
    untimed: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct BenchArgs {
    /// Numbers of hashes: a list or range [1..=64]
    #[arg(long, default_value = "1..16", allow_hyphen_values = true)]
    k: String,
    /// Which sizes: in-cache, out-of-cache or both
    #[arg(long, default_value = "both", value_parser = ["in-cache", "out-of-cache", "both"])]
    size: String,
    /// Bits per key the filters are filled to (> 0, <= 10000)
    #[arg(
        long = "bits-per-key",
        visible_alias = "bits-per-elem",
        default_value_t = 10.0
    )]
    bits_per_key: f64,
    /// Query keys per timing pass [1..=10^8]
    #[arg(long, default_value_t = 1_000_000)]
    queries: u64,
    /// Passes per figure; the best is kept [1..=100]
    #[arg(long, default_value_t = 3)]
    repeats: u32,
    /// Instead: ns per absent query beside the measured rate for each k, out of cache
    #[arg(long)]
    sweep_k: bool,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct SuiteArgs {
    /// Folder of experiment definitions (*.toml)
    #[arg(long, default_value = "experiments")]
    experiments: PathBuf,
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
    n: Option<u64>,
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
    m: Option<u64>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct ExperimentArgs {
    /// Number of inserted keys [1..=10^10]
    #[arg(long, allow_hyphen_values = true)]
    n: Option<u64>,
    /// Bits per key: a number, a list (4,6,8) or a range (2..16, 2..16:2) [> 0, <= 10000]
    #[arg(
        long = "bits-per-elem",
        visible_alias = "bits-per-key",
        value_name = "LIST",
        allow_hyphen_values = true
    )]
    bits_per_key: Option<String>,
    /// Bits in the filter; overrides --bits-per-elem [1..=2^36]
    #[arg(long, allow_hyphen_values = true)]
    m: Option<u64>,
    /// Number of hashes: a number, a list or a range [1..=64]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    k: Option<String>,
    /// Absent-key queries per row [1..=10^10, default 60000]
    #[arg(long, allow_hyphen_values = true)]
    queries: Option<u64>,
    /// Seed of the key generator [default 1]
    #[arg(long, allow_hyphen_values = true)]
    seed: Option<u64>,
    /// Seed of the hash parameters [default 2]
    #[arg(long, allow_hyphen_values = true)]
    hash_seed: Option<u64>,
    /// Hash family: multiply-shift (default), low-bits (flawed), double-hashing
    #[arg(long, value_parser = parse_hash)]
    hash: Option<HashScheme>,
    /// Structure: classic (default), blocked (512-bit blocks), split-block (k = 8), counting
    /// (4-bit counters), cuckoo (k = fingerprint bits, 4..=16); the crates fastbloom,
    /// bloomfilter and growable-bloom-filter (built by m and k; the last grows past m once n
    /// exceeds about m ln 2 / k, and takes no seed)
    #[arg(long, value_parser = parse_filter)]
    filter: Option<FilterKind>,
    /// Independent trials per row, with hash seeds hash-seed + t; prints a summary [1..=1000]
    #[arg(long, allow_hyphen_values = true)]
    trials: Option<u64>,
    /// Exit 1 when any row fails the bits check
    #[arg(long)]
    strict: bool,
    /// Draw the plate to FILE.svg (measured points with 95% intervals, predicted curves)
    #[arg(long, value_name = "FILE.svg", value_parser = parse_plot_path)]
    plot: Option<PathBuf>,
    #[command(flatten)]
    output: OutputArgs,
}

#[derive(Args, Debug)]
struct OverfillArgs {
    #[command(flatten)]
    common: ExperimentArgs,
    /// Keys the filter is designed for (m = design-n x bits per key) [default 4000]
    #[arg(long, allow_hyphen_values = true)]
    design_n: Option<u64>,
    /// Overfill factors s: keys inserted = s x design-n [> 0, <= 100]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    factors: Option<String>,
}

#[derive(Args, Debug)]
struct SeedCheckArgs {
    #[command(flatten)]
    common: ExperimentArgs,
    /// Number of hash seeds for the re-seeding check [2..=1000, default 8]
    #[arg(long, allow_hyphen_values = true)]
    seeds: Option<u64>,
    /// Factors by which n and m are scaled together [> 0, <= 1000]
    #[arg(long, value_name = "LIST", allow_hyphen_values = true)]
    scales: Option<String>,
}

#[derive(Args, Debug)]
pub struct OutputArgs {
    /// Output format: table, csv, json, markdown
    #[arg(long, default_value = "table", value_parser = parse_format)]
    format: Format,
    /// Write the output to FILE (atomically) instead of stdout
    #[arg(long, value_name = "FILE")]
    out: Option<PathBuf>,
    /// No progress bar
    #[arg(long, short)]
    quiet: bool,
}

fn parse_hash(s: &str) -> std::result::Result<HashScheme, String> {
    s.parse()
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

fn parse_filter(s: &str) -> std::result::Result<FilterKind, String> {
    s.parse()
}

fn parse_format(s: &str) -> std::result::Result<Format, String> {
    s.parse()
}

fn list(name: &'static str, text: &Option<String>) -> Result<Option<ValueList>> {
    text.as_deref()
        .map(|t| ValueList::parse(name, t))
        .transpose()
}

impl ExperimentArgs {
    fn params(&self) -> Result<Params> {
        Ok(Params {
            n: self.n,
            bits_per_key: list("bits_per_key", &self.bits_per_key)?,
            m: self.m,
            k: list("k", &self.k)?,
            queries: self.queries,
            seed: self.seed,
            hash_seed: self.hash_seed,
            hash: self.hash,
            trials: self.trials,
            filter: self.filter,
            ..Params::default()
        })
    }
}

/// A progress bar on stderr, drawn only when stderr is a terminal and not `--quiet`.
pub fn progress_bar(quiet: bool) -> ProgressBar {
    if quiet {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(0);
    if let Ok(style) = ProgressStyle::with_template("{spinner} {msg} [{bar:30}] {pos}/{len} rows") {
        bar.set_style(style.progress_chars("=> "));
    }
    bar
}

/// Prints or writes a table; notes go to stderr beside machine formats.
pub fn emit(table: &Table, output: &OutputArgs) -> Result<()> {
    let text = report::render(table, output.format)?;
    match &output.out {
        Some(path) => report::write_atomic(path, text.as_bytes())?,
        None => print!("{text}"),
    }
    if output.format.is_machine() || output.out.is_some() {
        for note in table.preamble.iter().chain(&table.notes) {
            eprintln!("{note}");
        }
    }
    Ok(())
}

fn run_experiment(
    experiment: Experiment,
    params: &Params,
    common: &ExperimentArgs,
) -> Result<ExitCode> {
    let bar = progress_bar(common.output.quiet);
    bar.set_message(experiment.name());
    let outcome: Outcome = experiment.run(params, &bar)?;
    bar.finish_and_clear();
    emit(&outcome.table()?, &common.output)?;
    if let Some(path) = &common.plot {
        bloomlab::plot::write_plot(&outcome, path)?;
    }
    let mut failed = false;
    let bits_failures = outcome.bits_failures();
    if common.strict && !bits_failures.is_empty() {
        eprintln!(
            "bits check failed ({} rows; measured rate beyond 4 standard errors of fill^k):",
            bits_failures.len()
        );
        for line in bits_failures {
            eprintln!("  {line}");
        }
        failed = true;
    }
    for line in &outcome.failures() {
        eprintln!("check failed: {line}");
        failed = true;
    }
    Ok(if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn run_size(args: &SizeArgs) -> Result<ExitCode> {
    let request = SizeRequest {
        n: args.n,
        fpr: args.fpr,
        bits_per_key: args.bits_per_key,
        m: args.m,
    };
    let rows = sizing::plan(&request)?;
    let mut table = Table::from_rows("size: the essay's sizing order", &rows)?;
    table.preamble = sizing::plan_notes(&rows);
    emit(&table, &args.output)?;
    Ok(ExitCode::SUCCESS)
}

fn run_reproduce(args: &SuiteArgs) -> Result<ExitCode> {
    let definitions = suite::load_definitions(&args.experiments)?;
    let bar = progress_bar(args.quiet);
    let started = std::time::Instant::now();
    let unmet = suite::reproduce(
        &definitions,
        &args.results,
        &bar,
        |definition, outcome, time| {
            if !args.quiet {
                bar.suspend(|| {
                    eprintln!(
                        "{:<24} {:>3} rows  {:>7.3} s  -> {}/{}.{{csv,md,svg}}",
                        definition.name,
                        outcome.measurements().len(),
                        time.as_secs_f64(),
                        args.results.display(),
                        definition.name
                    )
                });
            }
        },
    )?;
    bar.finish_and_clear();
    if !args.quiet {
        eprintln!(
            "{} experiments in {:.3} s",
            definitions.len(),
            started.elapsed().as_secs_f64()
        );
    }
    for line in &unmet {
        eprintln!("expectation not met: {line}");
    }
    Ok(if unmet.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn run_check(args: &CheckArgs) -> Result<ExitCode> {
    let definitions = suite::load_definitions(&args.suite.experiments)?;
    let bar = progress_bar(args.suite.quiet);
    let reseed = args.reseed.then(|| suite::Reseed {
        seed: args.reseed_seed.unwrap_or_else(|| rand::rng().next_u64()),
        family_alpha: args.family_alpha,
    });
    let report = suite::check(&definitions, &args.suite.results, reseed, &bar)?;
    bar.finish_and_clear();
    let mut table = Table::from_rows(
        format!(
            "check: {} against {} ({})",
            args.suite.experiments.display(),
            args.suite.results.display(),
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
        quiet: args.suite.quiet,
    };
    emit(&table, &output)?;
    for line in &report.failures {
        eprintln!("FAIL {line}");
    }
    Ok(if report.failures.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    })
}

fn run_bench(args: &BenchArgs) -> Result<ExitCode> {
    let probe = Params {
        k: Some(ValueList::parse("k", &args.k)?),
        bits_per_key: Some(ValueList(vec![args.bits_per_key])),
        ..Params::default()
    };
    let ks = probe.k_list_or(&[])?;
    probe.bits_per_key_or(&[])?;
    bloomlab::params::check_count("queries", args.queries, 1, 100_000_000)?;
    bloomlab::params::check_count("repeats", u64::from(args.repeats), 1, 100)?;
    let sizes = bench::default_sizes()
        .into_iter()
        .filter(|s| args.size == "both" || args.size == s.label || args.sweep_k)
        .collect();
    let config = bench::BenchConfig {
        sizes,
        ks,
        bits_per_key: args.bits_per_key,
        queries: args.queries,
        repeats: args.repeats,
        seed: 1,
    };
    let bar = progress_bar(args.output.quiet);
    bar.set_message("bench");
    let table = if args.sweep_k {
        let rows = bench::time_versus_rate(&config, &bar)?;
        let mut table = Table::from_rows(
            format!(
                "time against rate across k: m = {} bits, n = {}",
                rows.first().map_or(0, |r| r.m),
                rows.first().map_or(0, |r| r.n)
            ),
            &rows,
        )?;
        for row in &rows {
            if row.fastest {
                table
                    .notes
                    .push(format!("fastest absent query at k = {}", row.k));
            }
            if row.lowest_rate {
                table
                    .notes
                    .push(format!("lowest measured rate at k = {}", row.k));
            }
        }
        table
    } else {
        let rows = bench::run(&config, &bar)?;
        let mut table = Table::from_rows("bench: ns per key, single thread", &rows)?;
        if bench::contenders().len() == 1 {
            table.notes.push(
                "peers not built: this build left out the `peers` feature (on by default)".into(),
            );
        }
        table
    };
    bar.finish_and_clear();
    emit(&table, &args.output)?;
    Ok(ExitCode::SUCCESS)
}

fn run_compare(args: &CompareArgs) -> Result<ExitCode> {
    bloomlab::params::check_count("n", args.n, 1, 100_000_000)?;
    bloomlab::params::check_count("queries", args.queries, 1, 100_000_000)?;
    let bar = progress_bar(args.output.quiet);
    bar.set_message("compare");
    let rates = ValueList::parse("fpr", &args.fpr)?.0;
    let rows = compare::compare(
        args.n,
        &rates,
        args.queries,
        args.seed,
        args.hash_seed,
        (!args.untimed).then(compare::TimingSizes::default),
        &bar,
    )?;
    bar.finish_and_clear();
    let mut table = Table::from_rows(format!("compare: n = {}", args.n), &rows)?;
    table.notes = compare::notes(args.n, &rates, &rows);
    table.notes.push(
        "bits/key counts the structure's memory (4 bits per counter, the built table of binary-fuse); ns are single-threaded, for the same design in a 40,000-bit table (cache) and a 2^30-bit one (RAM)".into(),
    );
    emit(&table, &args.output)?;
    Ok(ExitCode::SUCCESS)
}

fn run_audit(args: &AuditArgs) -> Result<ExitCode> {
    let params = Params {
        n: args.n,
        rates: list("fpr", &args.fpr)?,
        factors: list("loads", &args.loads)?,
        queries: args.queries,
        seed: args.seed,
        hash_seed: args.hash_seed,
        filter: args.filter,
        ..Params::default()
    };
    let bar = progress_bar(args.output.quiet);
    bar.set_message("audit");
    // The library names the fields as experiment files do; the user typed --fpr and --loads.
    let outcome = bloomlab::experiments::run_audit(&params, true, &bar).map_err(|e| match e {
        bloomlab::Error::InvalidParam {
            name,
            value,
            reason,
            allowed,
        } => bloomlab::Error::InvalidParam {
            name: match name {
                "rates" => "fpr",
                "factors" => "loads",
                other => other,
            },
            value,
            reason,
            allowed,
        },
        other => other,
    })?;
    bar.finish_and_clear();
    emit(&outcome.table()?, &args.output)?;
    if let Some(path) = &args.plot {
        bloomlab::plot::write_plot(&outcome, path)?;
    }
    Ok(ExitCode::SUCCESS)
}

pub fn run(cli: Cli) -> Result<ExitCode> {
    match cli.command {
        Command::Audit(args) => run_audit(&args),
        Command::Compare(args) => run_compare(&args),
        Command::Bench(args) => run_bench(&args),
        Command::Reproduce(args) => run_reproduce(&args),
        Command::Check(args) => run_check(&args),
        Command::Size(args) => run_size(&args),
        Command::SweepSize(args) => run_experiment(Experiment::SweepSize, &args.params()?, &args),
        Command::SweepK(args) => run_experiment(Experiment::SweepK, &args.params()?, &args),
        Command::Overfill(args) => {
            let params = Params {
                design_n: args.design_n,
                factors: list("factors", &args.factors)?,
                ..args.common.params()?
            };
            run_experiment(Experiment::Overfill, &params, &args.common)
        }
        Command::SeedCheck(args) => {
            let params = Params {
                seeds: args.seeds,
                scales: list("scales", &args.scales)?,
                ..args.common.params()?
            };
            run_experiment(Experiment::SeedCheck, &params, &args.common)
        }
    }
}
