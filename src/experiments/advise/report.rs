//! advise's rows, its recommendation and the regime map it draws.

use schemars::JsonSchema;
use serde::Serialize;

use super::cost::speedup;
use super::decision::{self, EndToEnd};
use super::flags::AdvisePlan;
use super::priced::{PLOT_WORK_NS, Priced, Resolved};
use super::skyline::Choice;
use super::validate::Checked;
use crate::error::Result;
use crate::experiments::{Outcome, Repeatable, TIMINGS_FOLDER, is_timing};
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Scale, Series, Ticks};
use crate::report::{Column, Record, Table};

/// One configuration priced, as every output carries it.
#[derive(Clone, Debug, PartialEq, Serialize, JsonSchema)]
pub struct AdviceRow {
    /// The structure, or `no filter`.
    pub structure: String,
    /// Bits of its table as laid out.
    pub m: u64,
    /// Hashes per key; the fingerprint or result bits of the fingerprint filters.
    pub k: u32,
    /// Memory per key: `8 · memory_bytes / n`.
    pub bits_per_key: f64,
    /// Bytes the structure holds for n keys.
    pub memory_bytes: u64,
    /// The structure's exact expected rate at n keys (closed form).
    pub fpr_closed_form: f64,
    /// Absent keys asked.
    pub queries: u64,
    pub false_positives: u64,
    /// The measured rate ε.
    pub fpr_measured: f64,
    /// 95% Clopper–Pearson interval of ε (the cost uses the 98.75% one).
    pub ci_low: f64,
    pub ci_high: f64,
    /// Single-threaded CPU ns per absent lookup, the median of 20 passes.
    pub ns_lookup_absent: Option<f64>,
    /// ns per present lookup, the median of 20 passes.
    pub ns_lookup_present: Option<f64>,
    /// The cost per query `σ·t_a + (1 - σ)·t_p + (σ·ε + (1 - σ))·t_w`, in ns.
    pub cost_ns: f64,
    /// The cost at every input's low end; `[cost_low, cost_high]` holds with 95%, its
    /// times widened by their drift over the run.
    pub cost_low: f64,
    pub cost_high: f64,
    /// `t_w / cost_ns`.
    pub speedup: f64,
    /// No other configuration has at most its memory and its cost.
    pub on_skyline: bool,
    /// The recommendation: the least memory among the configurations whose cost is within
    /// the tolerance of the best, unless end to end the runner-up beat it by more than the
    /// tolerance.
    pub chosen: bool,
    /// What the choice is checked against end to end: the least memory tied of another
    /// structure, else its best (or the model's choice, where the end-to-end run overturned
    /// it).
    pub runner_up: bool,
    /// End to end: measured ns per query of the workload (chosen, runner-up, no filter).
    pub ns_end_to_end: Option<f64>,
}

impl Record for AdviceRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "structure" => Plain(structure),
            "m" => Plain(m).wide_only(),
            "k" => Plain(k),
            "bits/key" => Fixed(bits_per_key, 2),
            "bytes" => Plain(memory_bytes).wide_only(),
            "closed form" => Percent(fpr_closed_form).wide_only(),
            "FP/queries" => Ratio(false_positives, queries).wide_only(),
            "measured" => Percent(fpr_measured),
            "95% CI" => Interval(ci_low, ci_high).wide_only(),
            "ns absent" => Fixed(ns_lookup_absent, 1),
            "ns present" => Fixed(ns_lookup_present, 1).wide_only(),
            "cost ns" => Fixed(cost_ns, 1),
            "low" => Fixed(cost_low, 1),
            "high" => Fixed(cost_high, 1),
            "speedup" => Times(speedup).wide_only(),
            "skyline" => Plain(on_skyline).wide_only(),
            "chosen" => Plain(chosen).flags_when("true"),
            "runner-up" => Plain(runner_up).wide_only(),
            "ns end to end" => Fixed(ns_end_to_end, 1).wide_only(),
        ]
    }
}

fn row(p: &Priced, n: u64, t_w: f64) -> AdviceRow {
    let r = p.rate.as_ref();
    let c = p.config.as_ref();
    AdviceRow {
        structure: p.family(),
        m: c.map_or(0, |c| c.m),
        k: c.map_or(0, |c| c.k),
        bits_per_key: c.map_or(0.0, |c| c.memory_bytes as f64 * 8.0 / n as f64),
        memory_bytes: c.map_or(0, |c| c.memory_bytes),
        fpr_closed_form: c.map_or(1.0, |c| c.fpr_closed_form),
        queries: r.map_or(0, |r| r.queries),
        false_positives: r.map_or(0, |r| r.false_positives),
        fpr_measured: p.fpr(),
        ci_low: r.map_or(1.0, |r| r.ci_low),
        ci_high: r.map_or(1.0, |r| r.ci_high),
        ns_lookup_absent: p.absent.map(|t| t.value),
        ns_lookup_present: p.present.map(|t| t.value),
        cost_ns: p.cost.value,
        cost_low: p.cost.low,
        cost_high: p.cost.high,
        speedup: speedup(t_w, p.cost.value),
        on_skyline: p.on_skyline,
        chosen: false,
        runner_up: false,
        ns_end_to_end: None,
    }
}

/// The rows, notes, plate and measurements of the run.
pub fn outcome(
    plan: &AdvisePlan,
    resolved: &Resolved,
    priced: Vec<Priced>,
    (choice, runner_up): (&Choice, Option<usize>),
    checked: Vec<(usize, Checked)>,
    mut notes: Vec<String>,
) -> Result<Outcome> {
    let t_w = resolved.t_work.value;
    let (pick, end_to_end): (usize, EndToEnd) = decision::decide(choice, runner_up, &checked);
    let mut rows: Vec<AdviceRow> = priced.iter().map(|p| row(p, plan.n, t_w)).collect();
    rows[pick].chosen = true;
    if let Some(r) = runner_up.filter(|&r| r != pick) {
        rows[r].runner_up = true;
    }
    if pick != choice.chosen {
        rows[choice.chosen].runner_up = true;
    }
    for (i, passes) in &checked {
        rows[*i].ns_end_to_end = Some(passes.workload.median);
    }
    notes.extend(super::report_checks::lines(
        plan,
        &priced,
        choice.chosen,
        &checked,
        t_w,
    ));
    notes.extend(crate::keys::duplicate_note(
        &plan.keys,
        plan.n,
        "the measured rates, which decide, are theirs; the closed forms that prune the search are for n",
    ));
    let preamble = decision::lines(plan, &priced, choice, runner_up, (pick, end_to_end), t_w);
    let title = format!(
        "advise: n = {}, σ = {}, t_w = {t_w:.1} ns{}: cost per query of each contender",
        plan.n,
        plan.negative_share,
        if plan.batched { ", batched" } else { "" }
    );
    let mut table = Table::from_rows(title, &rows)?;
    table.notes = notes;
    table.preamble = preamble;
    let repeatable = repeatable(plan, &table, &priced);
    Ok(Outcome {
        table,
        measurements: priced.iter().filter_map(|p| p.rate.clone()).collect(),
        verdicts: Vec::new(),
        plate: plate(plan, &priced),
        skipped: Vec::new(),
        repeatable: Some(Box::new(repeatable)),
    })
}

/// The rates of the contenders without the timings and what is made of them (the costs,
/// the skyline, the choice, the regime map), under a title and notes that hold none.
fn repeatable(plan: &AdvisePlan, table: &Table, priced: &[Priced]) -> Repeatable {
    let mut rates_only = table.without_fields(is_timing);
    rates_only.title = format!(
        "advise: n = {}, σ = {}: the rate of each contender",
        plan.n, plan.negative_share
    );
    rates_only.preamble = Vec::new();
    rates_only.notes = vec![format!(
        "the timings, the costs, the skyline and the choice are this machine's: `reproduce` writes them to {TIMINGS_FOLDER}/ beside this file, which git ignores"
    )];
    Repeatable {
        table: rates_only,
        plate: Plate {
            panels: vec![rates(plan, priced)],
        },
    }
}

/// The regime map: cost per query against `t_w` from 10 ns to 1 ms, the best measured
/// configuration of each structure at each `t_w`, beside no filter (`cost = t_w`).
fn plate(plan: &AdvisePlan, priced: &[Priced]) -> Plate {
    let s = plan.negative_share;
    let grid: Vec<f64> = (0..=50)
        .map(|j| PLOT_WORK_NS.0 * (PLOT_WORK_NS.1 / PLOT_WORK_NS.0).powf(j as f64 / 50.0))
        .collect();
    let mut families: Vec<String> = Vec::new();
    for p in priced.iter().filter(|p| p.config.is_some()) {
        if !families.contains(&p.family()) {
            families.push(p.family());
        }
    }
    let mut series: Vec<Series> = families
        .iter()
        .enumerate()
        .map(|(i, family)| {
            let members: Vec<&Priced> = priced.iter().filter(|p| &p.family() == family).collect();
            let best = |t_w: f64| {
                members
                    .iter()
                    .map(|p| p.cost_at_other_work(s, t_w))
                    .fold(f64::INFINITY, f64::min)
            };
            Series::new(
                Some(family.clone()),
                Colour::Palette(i),
                Mark::Line(2),
                grid.iter().map(|&t| (t, best(t))),
            )
        })
        .collect();
    series.push(Series::new(
        Some("no filter".into()),
        Colour::Black,
        Mark::Dashed(2),
        grid.iter().map(|&t| (t, t)),
    ));
    Plate {
        panels: vec![regimes(plan, series), rates(plan, priced)],
    }
}

/// The measured rate of every contender with its interval against its bits per key, one
/// series per structure.
fn rates(plan: &AdvisePlan, priced: &[Priced]) -> Panel {
    let mut families: Vec<String> = Vec::new();
    for p in priced.iter().filter(|p| p.rate.is_some()) {
        if !families.contains(&p.family()) {
            families.push(p.family());
        }
    }
    let series = families
        .iter()
        .enumerate()
        .map(|(i, family)| {
            let points = priced
                .iter()
                .filter(|p| &p.family() == family)
                .filter_map(|p| {
                    Some((
                        p.point().memory_bytes as f64 * 8.0 / plan.n as f64,
                        p.rate.as_ref()?,
                    ))
                });
            Series::measured(Some(family.clone()), Colour::Palette(i), points)
        })
        .collect();
    Panel {
        title: format!(
            "the rate each contender measured at n = {}, with its 95% interval",
            plan.n
        ),
        x: Axis::linear("bits per key"),
        y: Axis::rate(),
        series,
    }
}

/// The regime map's panel.
fn regimes(plan: &AdvisePlan, series: Vec<Series>) -> Panel {
    let s = plan.negative_share;
    let log = |label: &str| Axis {
        label: label.into(),
        scale: Scale::Log,
        ticks: Ticks::Decimal,
        range: None,
    };
    Panel {
        title: format!(
            "cost per query against the work it saves (n = {}, σ = {}): best configuration of each structure",
            plan.n, s
        ),
        x: log("t_w, ns of work per query that passes"),
        y: log("cost per query, ns"),
        series,
    }
}
