//! `bloomlab bench --estimates`: the estimate behind `--yes`
//! ([`crate::params::preflight::operations_seconds`]) set against the real time of whole
//! measurements of a few shapes: the classic filter at k = 7 and at a high k, the blocked
//! design, a peer crate, and a program behind `exec:` when one is named. A ratio of the
//! estimate to the real time outside [[`LOW`], [`HIGH`]] fails the check (exit 1).
//!
//! The check lives in the bench, not in a test: a timed assertion on a shared machine
//! would fail on load alone. The suite runs it on tiny shapes only to see it work.
//!
//! The real time is the CPU time the run spent (bloomlab's threads and the programs it
//! started, user and system, [`cpu_seconds`]): the estimate is of the work on one core, and
//! the wall clock of a shared machine measures the other processes' load as much as the
//! run. On an idle machine a structure with a parallel path finishes in less wall time than
//! CPU time, so the estimate errs long there, not short. The wall clock is shown beside.

use std::time::Instant;

use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::Result;
use crate::hash::HashScheme;
use crate::params::preflight::operations_seconds;
use crate::pipeline::measurement::Setup;
use crate::program::cpu_seconds;
use crate::report::{Column, Record};
use crate::structures::{FilterKind, Spec};

/// The lowest ratio of estimate to real time that passes.
pub const LOW: f64 = 0.5;
/// The highest ratio of estimate to real time that passes.
pub const HIGH: f64 = 2.0;

/// One shape: its estimate beside the time it took.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct EstimateRow {
    /// What the shape stands for: classic k = 7, a high k, blocked, a peer, a program.
    pub shape: String,
    /// The structure measured.
    pub filter: String,
    /// Keys inserted.
    pub n: u64,
    /// Bits of the table.
    pub m: u64,
    /// Hashes per key.
    pub k: u32,
    /// Absent keys queried.
    pub queries: u64,
    /// Seconds the estimate behind `--yes` gives the measurement.
    pub estimated_seconds: f64,
    /// CPU seconds the measurement took (build, inserts, queries, predictions), bloomlab's
    /// and its programs'.
    pub cpu_seconds: f64,
    /// Wall-clock seconds it took.
    pub wall_seconds: f64,
    /// `estimated_seconds / cpu_seconds`.
    pub ratio: f64,
    /// "pass" when the ratio is within [0.5, 2], else "fail".
    pub check: String,
}

impl Record for EstimateRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "shape" => Plain(shape),
            "filter" => Plain(filter),
            "n" => Plain(n),
            "m" => Plain(m),
            "k" => Plain(k),
            "queries" => Plain(queries),
            "estimated s" => Fixed(estimated_seconds, 3),
            "CPU s" => Fixed(cpu_seconds, 3),
            "wall s" => Fixed(wall_seconds, 3),
            "ratio" => Fixed(ratio, 2),
            "check" => Plain(check).flags_when("fail"),
        ]
    }
}

/// The shapes at `keys` inserted keys (and as many queries), 10 bits a key; the program
/// `exec` (an `exec:COMMAND` structure) also. A program is probed for its speed only in a
/// run of 600,000 key operations or more ([`crate::params::preflight::operations_seconds`]).
pub fn shapes(keys: u64, exec: Option<FilterKind>) -> Result<Vec<(String, Setup)>> {
    use crate::structures::{blocked, classic, peers::fastbloom};
    let setup = |filter: FilterKind, n: u64, k: u32| {
        let spec = Spec::shape(filter, 10 * n, k).hashed(HashScheme::MultiplyShift, 2);
        Setup::new(spec, n, n, 1)
    };
    let classic = FilterKind::of(&classic::STRUCTURE);
    let blocked = FilterKind::of(&blocked::STRUCTURE);
    let mut shapes = vec![
        (format!("{classic} k 7"), setup(classic.clone(), keys, 7)),
        (format!("{classic} k 40"), setup(classic, keys, 40)),
        (format!("{blocked} k 7"), setup(blocked, keys, 7)),
    ];
    let peer = FilterKind::of(&fastbloom::STRUCTURE);
    if peer.require_built().is_ok() {
        shapes.push((format!("peer {peer} k 7"), setup(peer, keys, 7)));
    }
    if let Some(program) = exec {
        shapes.push(("program (exec) k 7".to_string(), setup(program, keys, 7)));
    }
    Ok(shapes)
}

/// Measures every shape once, timing it, beside its estimate.
pub fn check(shapes: &[(String, Setup)], progress: &ProgressBar) -> Result<Vec<EstimateRow>> {
    progress.set_length(shapes.len() as u64);
    shapes
        .iter()
        .map(|(shape, setup)| {
            let operations = (setup.n + setup.queries) as f64;
            let (m, k) = setup.spec.nominal();
            let estimated = operations_seconds(setup.filter().clone(), k, m, operations);
            let (start, cpu) = (Instant::now(), cpu_seconds());
            crate::pipeline::measure("estimates", setup)?;
            let (wall, cpu) = (start.elapsed().as_secs_f64(), cpu_seconds() - cpu);
            progress.inc(1);
            let ratio = estimated / cpu;
            Ok(EstimateRow {
                shape: shape.clone(),
                filter: setup.filter().to_string(),
                n: setup.n,
                m,
                k,
                queries: setup.queries,
                estimated_seconds: estimated,
                cpu_seconds: cpu,
                wall_seconds: wall,
                ratio,
                check: if (LOW..=HIGH).contains(&ratio) {
                    "pass"
                } else {
                    "fail"
                }
                .to_string(),
            })
        })
        .collect()
}
