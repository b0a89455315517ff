//! `bloomlab bench`: its flags and the glue from them to [`bloomlab::bench`].

use std::process::ExitCode;

use clap::Args;

use bloomlab::Result;
use bloomlab::bench::{self, tables, tables::BenchRequest};
use bloomlab::hash::Simd;
use bloomlab::params::preflight;
use bloomlab::report::{Table, progress_bar};

use super::command::{Fixed, exit_code};
use super::output::{OutputArgs, emit};

/// `bloomlab bench`.
pub(super) static BENCH: Fixed<BenchArgs> = Fixed {
    name: "bench",
    about: "Time insert and query against the peer crates, or time against rate across k",
    after_help: "Each bloomlab design (classic, blocked, split-block, blocked-1024, reg-blocked,\ncache-sector; cache-sector at the next even k) is timed key by key and batched\n(insert_many/contains_many) on multiply-shift, and classic and blocked also on\ndouble-hashing (one hash pair per key, the derivation fastbloom uses), beside the peer\ncrates of its design at equal m and k on the same keys, each peer on its fastest hasher\n(fastbloom on foldhash; bloomfilter takes only SipHash-1-3; sbbf-rs, the split-block\ndesign, takes hashes: bloomlab's multiply-shift, timed with it; no Rust crate implements\nthe other designs); the `peers` feature, on by default. The memory\nlimit is measured in the same run: random cache-line reads, dependent and independent,\nin a buffer of each size.\n\nTimes are CPU ns per key of the bench thread, the median of --passes passes with the\nfastest and slowest. A design's contenders take their passes in turn, with a pass of the\nline reads in each round, so that the machine's other load slows them alike (out of cache\nthe design's filters are held at once: classic three of 128 MiB, four with --full).\nIn cache each pass times a copy of the filter of its own (its own allocation), so\nthat where one copy lies does not decide a run's median (docs/PERFORMANCE.md).\nSizes: in-cache m = 40000, out-of-cache m = 2^30 bits, each filled to --bits-per-key;\ninserts time the keys again into the filled filter.\n\nThe title and every row name the CPU and the vector path that computed the probes\n(--simd forces one, to time a path this CPU would not choose); the notes say when other\nprocesses shared the machine or the line-limit passes spread widely: then the figures are\nnot to be trusted.\n\nExamples:\n  bloomlab bench\n  bloomlab bench --size in-cache --k 4,7\n  bloomlab bench --full --format csv\n  bloomlab bench --simd avx2 --format csv --out avx2.csv\n  bloomlab bench --sweep-k --format csv\n  bloomlab bench --workloads\n  bloomlab bench --advise-coverage 10",
    run: run_bench,
    merge: None,
};

#[derive(Args, Debug)]
pub(super) struct BenchArgs {
    /// Numbers of hashes: a list or range [1..=64, default 7, with --full 1..16]
    #[arg(long, allow_hyphen_values = true)]
    k: Option<String>,
    /// The long sweep: k 1..16 unless --k says, and every peer out of cache
    #[arg(long)]
    full: bool,
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
    /// Passes per figure; the median is reported, with the fastest and slowest [1..=100]
    #[arg(long, visible_alias = "repeats", default_value_t = 5)]
    passes: u32,
    /// Instead: ns per absent query beside the measured rate for each k, out of cache
    #[arg(long)]
    sweep_k: bool,
    /// The vector path bloomlab's filters compute their probes on: avx512, avx2 or scalar
    /// (refused where this CPU lacks it) [default: the widest this CPU runs]
    #[arg(long, value_parser = clap::value_parser!(Simd))]
    simd: Option<Simd>,
    /// Instead: RocksDB filter_bench's workloads (95% absent / 95% present mixes, net of a
    /// dry run, many small filters under skewed access); --full runs them after the bench,
    /// into OUT.workloads.EXT with --out
    #[arg(long, conflicts_with = "sweep_k")]
    workloads: bool,
    /// Instead: the estimate behind --yes against the real time of measurements of a few
    /// shapes at --queries keys each; exit 1 when a ratio is outside [0.5, 2]
    #[arg(long, conflicts_with_all = ["sweep_k", "workloads"])]
    estimates: bool,
    /// Instead: advise's question at n = 10^6 (σ 0.95, --work-ns ssd, --target-seconds 60)
    /// run R times, and how often the cost measured end to end fell in the predicted
    /// interval, its own run's and the others' [1..=100]
    #[arg(long, value_name = "R", conflicts_with_all = ["sweep_k", "workloads", "estimates"])]
    advise_coverage: Option<u64>,
    /// With --estimates: also the program behind exec:COMMAND
    #[arg(long, requires = "estimates", value_name = "COMMAND")]
    exec: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

fn run_bench(args: &BenchArgs) -> Result<ExitCode> {
    if let Some(path) = &args.output.out {
        preflight::check_output("out", path)?;
    }
    let request = args.request();
    let config = request.config()?;
    let with_workloads = args.full && !args.sweep_k;
    let workloads_output = OutputArgs {
        out: args.output.out.as_deref().map(bench::workloads::beside),
        ..args.output.clone()
    };
    if let Some(path) = workloads_output.out.as_ref().filter(|_| with_workloads) {
        preflight::check_output("out", path)?;
    }
    let k = request.workload_k(&config);
    if args.workloads {
        return emit_workloads(args, k, &args.output);
    }
    if args.estimates {
        return emit_estimates(args);
    }
    if let Some(runs) = args.advise_coverage {
        let runs = bloomlab::params::check_count("advise-coverage", runs, 1, 100)?;
        let bar = progress_bar(args.output.quiet, "runs");
        let table = bench::advise_coverage::table(runs as u32, 1_000_000, &bar)?;
        bar.finish_and_clear();
        emit(&table, &args.output)?;
        return Ok(ExitCode::SUCCESS);
    }
    let bar = progress_bar(args.output.quiet, "timings");
    bar.set_message("bench");
    let table = if args.sweep_k {
        tables::sweep_k_table(&config, &bar)?
    } else {
        tables::bench_table(&config, &bar)?
    };
    bar.finish_and_clear();
    emit(&table, &args.output)?;
    if with_workloads {
        return emit_workloads(args, k, &workloads_output);
    }
    Ok(ExitCode::SUCCESS)
}

impl BenchArgs {
    fn request(&self) -> BenchRequest<'_> {
        BenchRequest {
            k: self.k.as_deref(),
            full: self.full,
            size: &self.size,
            bits_per_key: self.bits_per_key,
            queries: self.queries,
            passes: self.passes,
            sweep_k: self.sweep_k,
            simd: self.simd,
        }
    }
}

/// Runs the workloads of `bench --workloads` (and `bench --full`) and writes their table.
fn emit_workloads(args: &BenchArgs, k: u32, output: &OutputArgs) -> Result<ExitCode> {
    let (full, size) = (args.full, args.size.as_str());
    let config = bench::workloads::WorkloadConfig::for_bench(full, size, k, args.bits_per_key)
        .with_passes(args.queries, args.passes);
    let bar = progress_bar(output.quiet, "workloads");
    let table = bench::workloads::table(&config, &bar)?;
    bar.finish_and_clear();
    emit(&table, output)?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `bench --estimates` and writes its table; exit 1 when a shape's ratio fails.
fn emit_estimates(args: &BenchArgs) -> Result<ExitCode> {
    let exec = args
        .exec
        .as_ref()
        .map(|command| {
            bloomlab::structures::FilterKind::named(&format!("exec:{command}")).map_err(|reason| {
                bloomlab::Error::invalid("exec", command, reason, "a program to run")
            })
        })
        .transpose()?;
    let shapes = bench::estimates::shapes(args.queries, exec)?;
    let bar = progress_bar(args.output.quiet, "shapes");
    let rows = bench::estimates::check(&shapes, &bar)?;
    bar.finish_and_clear();
    let mut table = Table::from_rows(
        "the estimate behind --yes against the real time of whole measurements",
        &rows,
    )?;
    let failed = rows.iter().filter(|r| r.check == "fail").count();
    table.notes.push(format!(
        "{failed} of {} shapes outside [0.5, 2] (ratio = estimated / measured)",
        rows.len()
    ));
    emit(&table, &args.output)?;
    Ok(exit_code(failed > 0))
}
