//! `bloomlab bench`: its flags and the glue from them to [`bloomlab::bench`].

use std::process::ExitCode;

use clap::Args;

use bloomlab::bench;
use bloomlab::params::ValueList;

use super::*;

#[derive(Args, Debug)]
pub(super) struct BenchArgs {
    /// Numbers of hashes: a list or range [1..=64, default 7, with --full 1..16]
    #[arg(long, allow_hyphen_values = true)]
    k: Option<String>,
    /// The long sweep: k 1..16 unless --k says, the 1024-bit blocked design, and every peer
    /// out of cache
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
    /// Instead: RocksDB filter_bench's workloads (95% absent / 95% present mixes, net of a
    /// dry run, many small filters under skewed access); --full runs them after the bench,
    /// into OUT.workloads.EXT with --out
    #[arg(long, conflicts_with = "sweep_k")]
    workloads: bool,
    /// Instead: the estimate behind --yes against the real time of measurements of a few
    /// shapes at --queries keys each; exit 1 when a ratio is outside [0.5, 2]
    #[arg(long, conflicts_with_all = ["sweep_k", "workloads"])]
    estimates: bool,
    /// With --estimates: also the program behind exec:COMMAND
    #[arg(long, requires = "estimates", value_name = "COMMAND")]
    exec: Option<String>,
    #[command(flatten)]
    output: OutputArgs,
}

pub(super) fn run_bench(args: &BenchArgs) -> Result<ExitCode> {
    if let Some(path) = &args.output.out {
        preflight::check_output("out", path)?;
    }
    let probe = ShapeParams {
        k: Some(ValueList::parse(
            "k",
            args.k
                .as_deref()
                .unwrap_or(if args.full { "1..16" } else { "7" }),
        )?),
        bits_per_key: Some(ValueList(vec![args.bits_per_key])),
        ..ShapeParams::default()
    };
    let ks = probe.k_list_or(&[])?;
    probe.bits_per_key_or(&[])?;
    bloomlab::params::check_count("queries", args.queries, 1, 100_000_000)?;
    bloomlab::params::check_count("passes", u64::from(args.passes), 1, 100)?;
    let sizes = bench::default_sizes()
        .into_iter()
        .filter(|s| args.size == "both" || args.size == s.label || args.sweep_k)
        .collect();
    let config = bench::BenchConfig {
        sizes,
        ks,
        bits_per_key: args.bits_per_key,
        queries: args.queries,
        passes: args.passes,
        seed: 1,
        full: args.full,
    };
    let with_workloads = args.full && !args.sweep_k;
    let workloads_output = OutputArgs {
        out: args.output.out.as_deref().map(bench::workloads::beside),
        ..args.output.clone()
    };
    if let Some(path) = workloads_output.out.as_ref().filter(|_| with_workloads) {
        preflight::check_output("out", path)?;
    }
    let k = config
        .ks
        .first()
        .copied()
        .filter(|_| args.k.is_some())
        .unwrap_or(7);
    if args.workloads {
        return emit_workloads(args, k, &args.output);
    }
    if args.estimates {
        return emit_estimates(args);
    }
    let bar = progress_bar(args.output.quiet, "timings");
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
        let (rows, limits) = bench::run(&config, &bar)?;
        let mut table = Table::from_rows("bench: CPU ns per key, single thread", &rows)?;
        table.notes = bench::notes(&rows, &limits, args.full);
        if bench::contenders(args.full)
            .iter()
            .all(|c| c.peer == "bloomlab")
        {
            table.notes.push(
                "peers not built: this build left out the `peers` feature (on by default)".into(),
            );
        }
        table
    };
    bar.finish_and_clear();
    emit(&table, &args.output)?;
    if with_workloads {
        return emit_workloads(args, k, &workloads_output);
    }
    Ok(ExitCode::SUCCESS)
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
    Ok(if failed > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}
