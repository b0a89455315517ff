//! `bloomlab size`: its flags and the glue from them to [`bloomlab::experiments::size`].

use std::process::ExitCode;

use clap::Args;

use bloomlab::Result;
use bloomlab::console;
use bloomlab::experiments::size::{self as sizing, SizeRequest};
use bloomlab::params::Count;
use bloomlab::report::Table;

use bloomlab::experiments::Units;
use bloomlab::shard::merge::Parts;

use super::command::Fixed;
use super::experiment_cmd::{ShardArgs, sharded};
use super::output::{OutputArgs, emit};

/// `bloomlab size`.
pub(super) static SIZE: Fixed<SizeArgs> = Fixed {
    name: "size",
    about: "Size a filter: the rate first, then space, then k, then the warning about n",
    after_help: "Give exactly two of --n, --fpr, --bits-per-key, --m (not --fpr with --bits-per-key).\nWith --n and --fpr, every structure is sized for them too (--measure checks each).\n\nExamples:\n  bloomlab size --n 4000 --fpr 0.01\n  bloomlab size --n 1000000 --fpr 0.001 --measure\n  bloomlab size --n 1000000 --bits-per-key 10\n  bloomlab size --m 8388608 --fpr 0.001 --format json",
    run: |args| size_with(args, None),
    merge: Some(size_with_parts),
};

#[derive(Args, Debug)]
pub(super) struct SizeArgs {
    /// Keys the filter must hold [1..=10^10]
    #[arg(long, allow_hyphen_values = true)]
    n: Option<Count>,
    /// Target false-positive rate, a fraction in (0, 1)
    #[arg(long, allow_hyphen_values = true, value_parser = bloomlab::params::parse_number)]
    fpr: Option<f64>,
    /// Bits per key, instead of --fpr [> 0, <= 10000]
    #[arg(
        long = "bits-per-key",
        visible_alias = "bits-per-elem",
        allow_hyphen_values = true
    , value_parser = bloomlab::params::parse_number)]
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
    /// With --measure: the run cut into units of work
    #[command(flatten)]
    shards: ShardArgs,
    #[command(flatten)]
    output: OutputArgs,
}

/// `size`, whole, sharded (`--shard`, `--estimate`) or merged from `parts`.
fn size_with(args: &SizeArgs, parts: Option<&Parts>) -> Result<ExitCode> {
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
    let queries = (args.queries).map_or_else(|| sizing::default_queries(fpr), |c| c.0);
    if args.measure {
        bloomlab::params::check_count("queries", queries, 1, 1_000_000_000)?;
    }
    // Unmeasured, no query: each structure is only built empty.
    let queries = if args.measure { queries } else { 0 };
    let mut measured = sizing::Measuring { queries, seed: 1 }.plan(n, fpr);
    if args.shards.given() {
        let units = args.measure.then_some(&mut measured as &mut dyn Units);
        return sharded("size", units, &args.shards, args.yes, args.output.quiet);
    }
    if let Some(parts) = parts {
        measured.work = parts.carried(&measured.rows())?;
    }
    let mut cost = measured.cost();
    if !args.measure {
        cost.key_operations = 0.0;
    }
    cost.check(args.yes)?;
    let (structures, notes) = sizing::structures(n, fpr, args.measure.then_some(&measured))?;
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

/// `bloomlab merge` of `size --measure`'s parts.
fn size_with_parts(args: &SizeArgs, parts: &Parts) -> Result<ExitCode> {
    match args.measure {
        true => size_with(args, Some(parts)),
        false => Err(super::command::unsharded("size", "parts")),
    }
}
