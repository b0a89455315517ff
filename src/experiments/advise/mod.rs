//! `advise`: which filter makes a workload fastest, measured on this machine. It searches
//! every in-process structure over its parameters ([`candidates`]), prunes by closed-form
//! rate and a measured time model ([`model`]), measures the contenders at the real n (rate
//! with its interval, absent and present lookup times with their spread), prices each by
//! the cost model of Lang et al. 2019 ([`cost`]), chooses on the skyline of memory against
//! cost ([`skyline`]), and checks the choice end to end ([`validate`]).

pub mod candidates;
pub mod cost;
mod decision;
mod flags;
mod measure;
pub mod model;
mod priced;
mod report;
mod report_checks;
mod run;
pub mod skyline;
mod spread;
mod steps;
pub mod validate;
mod work;

use clap::Args;
use indicatif::ProgressBar;
use serde::Deserialize;

pub use flags::{AdvisePlan, WorkCost};
pub use report::AdviceRow;

use crate::error::Result;
use crate::experiments::{Experiment, Outcome};
use crate::params::preflight::Cost;
use crate::params::{Count, SeedParams};

/// The `advise` subcommand and experiment.
pub struct Advise;

/// Flags and file keys of advise.
#[derive(Args, Clone, Debug, Default, Deserialize)]
pub struct AdviseParams {
    /// Keys the filter holds [1000..=10^8, default 10^6]
    #[arg(long, allow_hyphen_values = true)]
    pub n: Option<Count>,
    /// Share σ of queries whose key is absent, in [0, 1] [default 0.9]
    #[arg(long, allow_hyphen_values = true)]
    pub negative_share: Option<f64>,
    /// ns of work a query that passes the filter does, in (0, 10^9]; or cache-miss (a
    /// dependent random read, measured in the run), ssd (100000) or network (500000)
    /// [default cache-miss]
    #[arg(long, allow_hyphen_values = true)]
    pub work_ns: Option<String>,
    /// Budget: most bytes the filter may hold [1..=2^36]
    #[arg(long, allow_hyphen_values = true, conflicts_with = "bits_per_key")]
    pub memory: Option<Count>,
    /// Budget: most bits per key the filter may hold [> 0, <= 10000]
    #[arg(long, allow_hyphen_values = true)]
    pub bits_per_key: Option<f64>,
    /// Highest false-positive rate allowed (closed form of each configuration), in (0, 1)
    #[arg(long, allow_hyphen_values = true)]
    pub max_fpr: Option<f64>,
    /// What the filter must do: insert (default), delete, grow, static-ok (a set known at
    /// build time: the static structures too)
    #[arg(long)]
    pub needs: Option<String>,
    /// The application looks keys up in batches: time and run the workload batched
    #[arg(long)]
    #[serde(default)]
    pub batched: bool,
    /// Source of the keys (random, sequential, strided:STEP, strings:FORMAT, file:PATH)
    #[arg(long)]
    pub keys: Option<String>,
    /// Absent keys asked per contender for its rate [1000..=10^8, default 10^6]
    #[arg(long, allow_hyphen_values = true)]
    pub queries: Option<Count>,
    /// Most configurations measured (each structure's best is always measured) [1..=500,
    /// default 24]
    #[arg(long, allow_hyphen_values = true)]
    pub contenders: Option<Count>,
    /// Measure every configuration within the needs and limits instead of pruning by the
    /// time model (the set measured is then fixed by the flags alone, as `reproduce` needs)
    #[arg(long)]
    #[serde(default)]
    pub measure_all: bool,
    /// Costs within this of the best are tied, and the least memory among them is chosen:
    /// ns in (0, 10^9], or a share of the best cost as N% in (0, 100] [default: 1% of the
    /// best cost or 1 ns, the larger]
    #[arg(long, allow_hyphen_values = true)]
    pub tolerance: Option<String>,
    /// Wall seconds the run keeps within: each phase takes what is left of them, a run
    /// whose least work cannot fit is refused unless --yes [10..=3600, default 60]
    #[arg(long, allow_hyphen_values = true)]
    pub target_seconds: Option<Count>,
    #[command(flatten)]
    #[serde(flatten)]
    pub seeds: SeedParams,
}

impl Experiment for Advise {
    type Params = AdviseParams;
    type Plan = AdvisePlan;
    const NAME: &'static str = "advise";
    const ABOUT: &'static str = "Which filter makes a workload fastest: every structure priced by its measured cost per query";
    const AFTER_HELP: &'static str = "\
Cost per query (Lang, Neumann, Kemper and Boncz, PVLDB 12(5), 2019):
  σ·t_a + (1 - σ)·t_p + (σ·ε + (1 - σ))·t_w, against t_w without a filter,
with t_a and t_p the measured absent and present lookup times, ε the measured rate, and
intervals that hold together with 95% confidence, the times' widened by their drift over
the run (the work's; the lookups' by the larger of the work's and the memory's). Configurations whose cost is within --tolerance of the best are tied, and
the least memory among them is chosen; the choice, the runner-up and no filter are then
run end to end in front of a simulated lookup of cost t_w, and only a runner-up faster
there by more than the tolerance in every round replaces the choice.

Named costs: cache-miss (a dependent random read in 128 MiB, measured in the run), ssd
(100000 ns, a random NVMe read), network (500000 ns, a round trip in a data centre).

Examples:
  bloomlab advise --n 1000000 --negative-share 0.9 --work-ns 20
  bloomlab advise --n 1000000 --work-ns ssd --bits-per-key 12
  bloomlab advise --n 1000000 --work-ns cache-miss --plot advise.svg --out advise.csv --format csv";

    fn plan(params: &AdviseParams) -> Result<AdvisePlan> {
        flags::plan(params)
    }

    fn run(plan: &AdvisePlan, progress: &ProgressBar) -> Result<Outcome> {
        run::run(plan, progress)
    }

    fn cost(plan: &AdvisePlan) -> Cost {
        plan.cost()
    }

    fn planning_cost(params: &AdviseParams) -> Result<Cost> {
        flags::planning_cost(params)
    }
}
