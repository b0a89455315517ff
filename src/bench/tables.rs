//! What `bloomlab bench` is asked, validated once, and the tables it prints: the bench of
//! every design beside its peers, or time against rate across k.

use indicatif::ProgressBar;

use crate::error::{Error, Result};
use crate::hash::Simd;
use crate::params::{ShapeParams, ValueList, check_count};
use crate::report::Table;

use super::machine::{Machine, trust_notes};
use super::{BenchConfig, contenders, default_sizes, notes, run, time_versus_rate};
use crate::pipeline::sharing::Sharing;

/// The bench's flags as the user gives them.
#[derive(Clone, Debug)]
pub struct BenchRequest<'a> {
    /// Numbers of hashes, a list or range (default 7, with `full` 1..16).
    pub k: Option<&'a str>,
    /// The long sweep.
    pub full: bool,
    /// `in-cache`, `out-of-cache` or `both`.
    pub size: &'a str,
    pub bits_per_key: f64,
    pub queries: u64,
    pub passes: u32,
    /// Time against rate across k instead.
    pub sweep_k: bool,
    /// The vector path to force bloomlab's filters onto (`--simd`); none: the widest here.
    pub simd: Option<Simd>,
}

impl BenchRequest<'_> {
    /// The configuration, every flag checked before any work: k in 1..=64, bits per key in
    /// (0, 10000], queries in 1..=10^8, passes in 1..=100, a `--simd` path this CPU runs.
    pub fn config(&self) -> Result<BenchConfig> {
        if let Some(simd) = self.simd.filter(|s| !s.runs_here()) {
            let available: Vec<&str> = Simd::available().iter().map(|s| s.name()).collect();
            let reason = format!("this CPU ({}) lacks it", Machine::here().describe());
            return Err(Error::invalid("simd", simd, reason, available.join(", ")));
        }
        let probe = ShapeParams {
            k: Some(ValueList::parse(
                "k",
                self.k.unwrap_or(if self.full { "1..16" } else { "7" }),
            )?),
            bits_per_key: Some(ValueList(vec![self.bits_per_key])),
            ..ShapeParams::default()
        };
        let ks = probe.k_list_or(&[])?;
        probe.bits_per_key_or(&[])?;
        check_count("queries", self.queries, 1, 100_000_000)?;
        check_count("passes", u64::from(self.passes), 1, 100)?;
        let sizes = default_sizes()
            .into_iter()
            .filter(|s| self.size == "both" || self.size == s.label || self.sweep_k)
            .collect();
        Ok(BenchConfig {
            sizes,
            ks,
            bits_per_key: self.bits_per_key,
            queries: self.queries,
            passes: self.passes,
            seed: 1,
            full: self.full,
            simd: self.simd,
        })
    }

    /// The k the workloads run at: the first of `--k` when given, else 7.
    pub fn workload_k(&self, config: &BenchConfig) -> u32 {
        config
            .ks
            .first()
            .copied()
            .filter(|_| self.k.is_some())
            .unwrap_or(7)
    }
}

/// The bench's table: every design and peer timed, with its notes; the title names the
/// machine and the vector path, the notes say when other processes or a wide spread of the
/// line-limit passes make the figures untrustworthy ([`trust_notes`]).
pub fn bench_table(config: &BenchConfig, progress: &ProgressBar) -> Result<Table> {
    let sharing = Sharing::start();
    let (rows, limits) = run(config, progress)?;
    let shared = sharing.since();
    let machine = Machine::here();
    let path = match config.simd {
        Some(simd) => format!("{simd}, forced (--simd)"),
        None => format!("{}, the widest this CPU runs", Simd::best()),
    };
    let title = format!(
        "bench: CPU ns per key, single thread, on {}; bloomlab's vector path {path}",
        machine.describe()
    );
    let mut table = Table::from_rows(title, &rows)?;
    table.notes = trust_notes(&shared, &limits, machine.cpus);
    table.notes.extend(notes(&rows, &limits, config));
    if contenders().iter().all(|c| c.peer == "bloomlab") {
        table.notes.push(
            "peers not built: this build left out the `peers` feature (on by default)".into(),
        );
    }
    Ok(table)
}

/// Time against rate across k, with the k of the fastest query and of the lowest rate.
pub fn sweep_k_table(config: &BenchConfig, progress: &ProgressBar) -> Result<Table> {
    let rows = time_versus_rate(config, progress)?;
    let mut table = Table::from_rows(
        format!(
            "time against rate across k: m = {} bits, n = {}",
            rows.first().map_or(0, |r| r.m),
            rows.first().map_or(0, |r| r.n)
        ),
        &rows,
    )?;
    let notes = &mut table.notes;
    for row in &rows {
        if row.fastest {
            notes.push(format!("fastest absent query at k = {}", row.k));
        }
        if row.lowest_rate {
            notes.push(format!("lowest measured rate at k = {}", row.k));
        }
    }
    Ok(table)
}
