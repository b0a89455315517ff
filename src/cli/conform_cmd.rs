//! `bloomlab conform`: its flags and the glue from them to [`bloomlab::experiments::conform`].

use std::process::ExitCode;

use clap::Args;

use bloomlab::Result;
use bloomlab::console;
use bloomlab::experiments::size as sizing;
use bloomlab::params::{Count, MAX_COUNT, ProgramParams, check_count, preflight};
use bloomlab::theory;

use super::command::Fixed;

/// `bloomlab conform`.
pub(super) static CONFORM: Fixed<ConformArgs> = Fixed {
    name: "conform",
    about: "Check a structure against the filter contract: no false negatives, the same answers for the same seed, batches answered as single keys, steady memory",
    after_help: "Exit status 0 with a one-line summary, 1 naming the first violation and its key.\n\nExamples:\n  bloomlab conform --filter cuckoo\n  bloomlab conform --filter exec:'python3 my_adapter.py'",
    run: run_conform,
    merge: None,
};

#[derive(Args, Debug)]
pub(super) struct ConformArgs {
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
    #[arg(long, allow_hyphen_values = true, value_parser = bloomlab::params::parse_number)]
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
    #[command(flatten)]
    program: ProgramParams,
    /// Run even when the estimate says the run exceeds 10 minutes or the memory available
    #[arg(long)]
    yes: bool,
}

fn run_conform(args: &ConformArgs) -> Result<ExitCode> {
    use bloomlab::experiments::conform::{ConformRequest, Conformance, conform};
    use bloomlab::structures::{Sizing, Spec};
    args.program.check(args.filter.is_program())?;
    let filter = args.filter.clone().with_program(args.program.options());
    let n = check_count("n", args.n.0, 1, MAX_COUNT)?;
    let queries = check_count("queries", args.queries.0, 1, MAX_COUNT)?;
    let sizing = sizing_of(args, &filter, n)?;
    // Two filters of n keys, each asked the queries twice (batched and one by one).
    let k = match sizing {
        Sizing::Shape { k, .. } => k,
        Sizing::Rate(_) => 7,
    };
    let bits = theory::bits_at(n, args.bits_per_key.unwrap_or(10.0));
    let operations = 2.0 * (n as f64 + 2.0 * queries as f64);
    let key_operations = preflight::weighted_operations(filter.clone(), k, bits, operations);
    preflight::Cost::new(key_operations, 2.0 * bits as f64 / 8.0).check(args.yes)?;
    let spec = Spec {
        filter,
        sizing,
        ..Spec::default()
    };
    let request = ConformRequest {
        spec: spec.hashed(bloomlab::HashScheme::MultiplyShift, args.seed),
        n,
        queries,
        seed: args.seed,
    };
    match conform(&request)? {
        Conformance::Conforms(summary) => {
            console::out_line(&summary);
            Ok(ExitCode::SUCCESS)
        }
        Conformance::Violation(violation) => {
            console::note(&format!("conform {}: {violation}", args.filter));
            Ok(ExitCode::FAILURE)
        }
    }
}

/// How the structure is sized: by its constructor for a rate where it has one and no shape
/// is asked, else by `--bits-per-key` and `--k`.
fn sizing_of(
    args: &ConformArgs,
    filter: &bloomlab::structures::FilterKind,
    n: u64,
) -> Result<bloomlab::structures::Sizing> {
    use bloomlab::structures::{Rate, Sizing};
    let by_shape = args.bits_per_key.is_some() || args.k.is_some();
    Ok(match filter.structure().for_rate {
        Some(_) if !by_shape => Sizing::Rate(Rate {
            fpr: sizing::check_fpr(args.fpr)?,
            n,
        }),
        _ => Sizing::Shape {
            m: theory::bits_at(
                n,
                sizing::check_bits_per_key(args.bits_per_key.unwrap_or(10.0))?,
            ),
            k: args
                .k
                .unwrap_or_else(|| fixed_k(filter.clone(), n, args.fpr).unwrap_or(7)),
        },
    })
}

/// The k a structure fixes (a split-block filter sets one bit in each of its 8 words): its
/// design's k when it refuses the default 7; `None` for a structure that takes any k.
fn fixed_k(filter: bloomlab::structures::FilterKind, n: u64, fpr: f64) -> Option<u32> {
    let structure = filter.structure();
    let fixed = (structure.layout)(1 << 16, 7).is_err();
    let design = structure.design.filter(|_| fixed)?;
    design(n, fpr.clamp(1e-9, 0.5)).ok().map(|(_, k)| k)
}
