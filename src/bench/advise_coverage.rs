//! `bloomlab bench --advise-coverage R`: advise's question (`--n`, the σ = 0.95 and
//! an SSD read of 100 µs behind each query that passes, `--target-seconds 60`) run R times
//! in this process; for the choice, the runner-up and no filter of each run, whether the
//! cost per query measured end to end fell in the interval its run predicted, and in those
//! the other runs predicted for the same configuration (the variation between runs),
//! against the stated [`COST_CONFIDENCE`]. A check by repetition on this machine, not a
//! test: a test of it would be timed.

use indicatif::ProgressBar;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::error::Result;
use crate::experiments::advise::cost::COST_CONFIDENCE;
use crate::report::{Cell, Column, Record, Table, col};

/// One configuration run end to end in one run of advise.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct CoverageRow {
    /// Which run of advise, from 1.
    pub run: u32,
    /// chosen, runner-up or no filter.
    pub role: String,
    pub structure: String,
    pub k: u32,
    pub bits_per_key: f64,
    /// The predicted cost per query and its interval, ns.
    pub cost_ns: f64,
    pub cost_low: f64,
    pub cost_high: f64,
    /// The cost per query measured end to end, ns.
    pub ns_end_to_end: f64,
    /// The end-to-end cost lies within the run's own interval.
    pub within: bool,
    /// Of the other runs that priced this configuration, how many intervals hold it.
    pub within_others: String,
}

impl Record for CoverageRow {
    fn columns() -> Vec<Column> {
        vec![
            col("run", Cell::Plain("run")),
            col("role", Cell::Plain("role")),
            col("structure", Cell::Plain("structure")),
            col("k", Cell::Plain("k")),
            col("bits/key", Cell::Fixed("bits_per_key", 2)),
            col("cost ns", Cell::Fixed("cost_ns", 1)),
            col("low", Cell::Fixed("cost_low", 1)),
            col("high", Cell::Fixed("cost_high", 1)),
            col("end to end", Cell::Fixed("ns_end_to_end", 1)),
            col("within", Cell::Plain("within")).flags_when("false"),
            col("other runs", Cell::Plain("within_others")),
        ]
    }
}

/// advise's experiment keys for the question at `n` keys.
fn question(n: u64) -> String {
    format!("n = {n}\nnegative_share = 0.95\nwork_ns = \"ssd\"\ntarget_seconds = 60\n")
}

fn f(record: &Map<String, Value>, key: &str) -> f64 {
    record[key].as_f64().unwrap_or(f64::NAN)
}

fn same(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    ["structure", "m", "k"].iter().all(|key| a[*key] == b[*key])
}

fn within(record: &Map<String, Value>, ns: f64) -> bool {
    f(record, "cost_low") <= ns && ns <= f(record, "cost_high")
}

/// The rows of one run's configurations run end to end, set against every run's records,
/// each with how many of the other runs' intervals held it and of how many.
fn rows(
    run: usize,
    records: &[Map<String, Value>],
    all: &[Vec<Map<String, Value>>],
) -> Vec<(CoverageRow, usize, usize)> {
    let checked = records.iter().filter(|r| r["ns_end_to_end"].is_number());
    checked
        .map(|r| {
            let ns = f(r, "ns_end_to_end");
            let others: Vec<bool> = (all.iter().enumerate())
                .filter(|(j, _)| *j != run)
                .filter_map(|(_, records)| records.iter().find(|o| same(o, r)))
                .map(|o| within(o, ns))
                .collect();
            let role = match (r["chosen"] == true, r["runner_up"] == true) {
                _ if r["structure"] == "no filter" => "no filter",
                (true, _) => "chosen",
                _ => "runner-up",
            };
            let hits = others.iter().filter(|&&w| w).count();
            let row = CoverageRow {
                run: run as u32 + 1,
                role: role.into(),
                structure: r["structure"].as_str().unwrap_or_default().into(),
                k: r["k"].as_u64().unwrap_or(0) as u32,
                bits_per_key: f(r, "bits_per_key"),
                cost_ns: f(r, "cost_ns"),
                cost_low: f(r, "cost_low"),
                cost_high: f(r, "cost_high"),
                ns_end_to_end: ns,
                within: within(r, ns),
                within_others: format!("{hits} of {}", others.len()),
            };
            (row, hits, others.len())
        })
        .collect()
}

/// Runs the question `runs` times at `n` keys and tabulates the coverage.
pub fn table(runs: u32, n: u64, bar: &ProgressBar) -> Result<Table> {
    let keys: toml::Table = toml::from_str(&question(n)).expect("the question parses");
    let advise = crate::experiments::find("advise").expect("advise is registered");
    let mut all = Vec::new();
    for run in 1..=runs {
        bar.set_message(format!("advise run {run} of {runs}"));
        all.push(advise.prepare_table(&keys)?.run(bar)?.table.records);
    }
    let counted: Vec<_> = (0..all.len())
        .flat_map(|r| rows(r, &all[r], &all))
        .collect();
    let share = |hits: usize, of: usize| {
        format!(
            "{hits} of {of} ({:.0}%)",
            100.0 * hits as f64 / of.max(1) as f64
        )
    };
    let hits = counted.iter().map(|(_, h, _)| h).sum();
    let of = counted.iter().map(|(_, _, o)| o).sum();
    let rows: Vec<CoverageRow> = counted.into_iter().map(|(row, _, _)| row).collect();
    let own = rows.iter().filter(|r| r.within).count();
    let mut table = Table::from_rows(
        format!(
            "advise's cost interval against its end-to-end cost, {runs} runs of `bloomlab advise --n {n} --negative-share 0.95 --work-ns ssd --target-seconds 60` ({})",
            crate::pipeline::timing::machine()
        ),
        &rows,
    )?;
    table.notes = vec![
        format!(
            "within the other runs' intervals for the same configuration: {1} (the check); within its own run's interval: {0} (by construction for these: a run widens its intervals by its end-to-end run's worst miss); stated: {2:.0}%",
            share(own, rows.len()),
            share(hits, of),
            100.0 * COST_CONFIDENCE
        ),
        "a shared machine's other load counts as the runs' variation".into(),
    ];
    Ok(table)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(
        structure: &str,
        interval: (f64, f64),
        end_to_end: Option<f64>,
    ) -> Map<String, Value> {
        let value = serde_json::json!({
            "structure": structure, "m": 8, "k": 3, "bits_per_key": 8.0, "cost_ns": 5.0,
            "cost_low": interval.0, "cost_high": interval.1, "ns_end_to_end": end_to_end,
            "chosen": structure == "blocked", "runner_up": false,
        });
        value.as_object().cloned().unwrap()
    }

    /// Each end-to-end cost is held against its own run's interval and against the other
    /// runs' intervals for the same configuration, never another's.
    #[test]
    fn coverage_counts_own_and_other_runs_intervals() {
        let all = vec![
            vec![record("blocked", (4.0, 6.0), Some(5.5))],
            vec![record("blocked", (3.0, 5.0), Some(6.5))],
            vec![record("cuckoo", (0.0, 9.0), None)],
        ];
        let first = rows(0, &all[0], &all);
        assert_eq!(first.len(), 1);
        assert!(first[0].0.within && first[0].0.role == "chosen");
        assert_eq!((first[0].1, first[0].2), (0, 1));
        let second = rows(1, &all[1], &all);
        assert!(!second[0].0.within);
        assert_eq!((second[0].1, second[0].2), (0, 1));
        assert!(rows(2, &all[2], &all).is_empty());
    }
}
