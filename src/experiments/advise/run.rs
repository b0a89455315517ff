//! An advise run, step by step: the cost of the work, the time model, the contenders
//! measured, each priced, the choice, and the workload run end to end.

use std::time::Instant;

use indicatif::ProgressBar;
use rayon::prelude::*;

use super::candidates::Config;
use super::cost::{Bounded, CostInputs, INPUT_CONFIDENCE, TIMED_PASSES, cost};
use super::flags::{AdvisePlan, WorkCost};
use super::measure::{self, Keyed};
use super::model::{self, Reference, TimeModel};
use super::priced::{self, Contender, PLOT_WORK_NS, Priced, Resolved};
use super::report;
use super::skyline::{self, Point};
use super::steps::Steps;
use super::validate::{self, Checked, MODEL_FIRST, Work};
use crate::error::Result;
use crate::experiments::Outcome;
use crate::hash::HashScheme;
use crate::pipeline::measurement::Measurement;
use crate::stats::clopper_pearson;
use crate::structures::Spec;

/// Bytes of the buffer a cache miss reads in: four times the 32 MiB last-level cache here.
pub const MISS_BYTES: u64 = 1 << 27;

/// Keys per timing pass of a contender: n/2, within 10^4 and 4·10^4.
fn timed_keys(n: u64) -> u64 {
    (n / 2).clamp(10_000, 40_000)
}

/// Keys per timing pass of a reference (the model needs less precision).
const REFERENCE_KEYS: u64 = 30_000;

/// Work per validation pass without a filter, in ns.
const VALIDATION_BUDGET_NS: f64 = 2e8;

/// Validation rounds: each contender runs once per round, in turn.
const VALIDATION_ROUNDS: u32 = 5;

/// Share of the run's time target (`--target-seconds`, a minute by default, which a run at
/// n = 10^6 should keep) that the contenders' measurements may take together, each an
/// equal part; the rest is the time model's references, the work's calibration and the
/// workload end to end.
const MEASURING_SHARE: f64 = 0.5;

/// ns the contenders' measurements may take together.
pub fn measuring_budget_ns(plan: &AdvisePlan) -> f64 {
    plan.target_seconds as f64 * 1e9 * MEASURING_SHARE
}

/// Measures a cache miss, or calibrates a busy loop to the nominal cost.
fn resolve_work(plan: &AdvisePlan) -> Result<Resolved> {
    match plan.work {
        WorkCost::CacheMiss => {
            let work = Work::miss(MISS_BYTES)?;
            let Work::Miss { buffer, .. } = &work else {
                unreachable!("a miss was asked for")
            };
            let p = measure::dependent_read_ns(buffer, 200_000, TIMED_PASSES);
            Ok(Resolved {
                t_work: p,
                how: format!(
                    "t_w = cache-miss: a dependent random read in 128 MiB, measured {:.1} ns [{:.1}, {:.1}]",
                    p.value, p.low, p.high
                ),
                work,
            })
        }
        WorkCost::Nanos(ns) | WorkCost::Preset(_, ns) => {
            let work = Work::spin(ns);
            let Work::Spin { iterations, .. } = work else {
                unreachable!("a busy loop was asked for")
            };
            let named = match plan.work {
                WorkCost::Preset(name, _) => format!("{name} preset, "),
                _ => String::new(),
            };
            Ok(Resolved {
                t_work: Bounded::exact(ns),
                work,
                how: format!(
                    "t_w = {ns} ns ({named}a busy loop of {iterations} steps, calibrated)"
                ),
            })
        }
    }
}

/// The configuration's filter at the plan's n, holding the plan's keys.
fn shape(plan: &AdvisePlan, c: &Config) -> Keyed {
    Keyed {
        spec: Spec::shape(c.kind.clone(), c.m, c.k)
            .hashed(HashScheme::MultiplyShift, plan.hash_seed),
        n: plan.n,
        seed: plan.seed,
        keys: plan.keys.clone(),
    }
}

/// The time model: one reference per structure built (its wall time per key) and timed,
/// line reads per size.
fn calibrate(plan: &AdvisePlan, steps: &Steps) -> Result<TimeModel> {
    let refs = model::references(&plan.configs);
    let mut measured = Vec::new();
    let count = refs.len();
    for (i, config) in refs.into_iter().enumerate() {
        steps.show(format!(
            "advise: time model, structure {} of {count} ({})",
            i + 1,
            config.kind
        ));
        let s = shape(plan, &config);
        let started = Instant::now();
        let mut filter = measure::filled(&s)?;
        let insert_ns = started.elapsed().as_nanos() as f64 / plan.n as f64;
        steps.bar.inc(plan.n);
        let times = measure::lookups(&mut *filter, &s, plan.batched, REFERENCE_KEYS, 3)?;
        measured.push(Reference {
            config,
            ns: times.absent.value,
            insert_ns,
        });
    }
    TimeModel::calibrate(&plan.configs, &measured, |bytes| {
        measure::independent_line_ns(bytes, 200_000, 3)
    })
}

/// Queries per pass of a contender timed in the workload's shape: the validation's own
/// count at `t_w`, at most [`WORKLOAD_KEYS`].
fn workload_keys(t_w: f64) -> u64 {
    validate::query_count(t_w, VALIDATION_BUDGET_NS).min(WORKLOAD_KEYS)
}

/// Most queries per pass of a contender timed in the workload's shape.
const WORKLOAD_KEYS: u64 = 200_000;

/// Lookups a contender's measurement makes: its rate's queries and its timing passes.
fn lookups_measured(plan: &AdvisePlan) -> u64 {
    plan.queries + (2 * timed_keys(plan.n) + WORKLOAD_KEYS) * u64::from(TIMED_PASSES)
}

/// The configurations to measure: all with `--measure-all` (no time model, no cap), else
/// the time model's contenders at `t_w` and at the plot's ends, less those whose predicted
/// measurement ([`TimeModel::measuring_ns`]) exceeds their share of [`measuring_budget_ns`],
/// each named in a note.
fn pick(
    plan: &AdvisePlan,
    steps: &Steps,
    t_w: f64,
    notes: &mut Vec<String>,
) -> Result<Vec<Config>> {
    if plan.measure_all {
        return Ok(plan.configs.clone());
    }
    let model = calibrate(plan, steps)?;
    let ends = [t_w, PLOT_WORK_NS.0, PLOT_WORK_NS.1];
    let sigma = plan.negative_share;
    let picked = model::contenders(&plan.configs, &model, sigma, &ends, plan.contenders);
    let share = measuring_budget_ns(plan) / picked.len().max(1) as f64;
    let (kept, dear): (Vec<Config>, Vec<Config>) = picked
        .into_iter()
        .partition(|c| model.measuring_ns(c, plan.n, lookups_measured(plan)) <= share);
    for c in dear {
        notes.push(format!(
            "not measured: {} (m = {}, k = {}): predicted {:.1} s to build and time ({:.0} ns per insert), over its share of the run's {} s target ({:.1} s)",
            c.kind,
            c.m,
            c.k,
            model.measuring_ns(&c, plan.n, lookups_measured(plan)) / 1e9,
            model.insert_ns(&c),
            plan.target_seconds,
            share / 1e9
        ));
    }
    Ok(kept)
}

/// Rates two at a time (on both cores), then times one at a time (alone, so that no other
/// contender shares the cache). A configuration that refused keys is dropped with a note.
fn measure_contenders(
    plan: &AdvisePlan,
    picked: &[Config],
    (steps, t_w): (&Steps, f64),
    notes: &mut Vec<String>,
) -> Result<Vec<Contender>> {
    let count = picked.len();
    let workload = workload_keys(t_w);
    let rates: Vec<Measurement> = picked
        .par_iter()
        .enumerate()
        .map(|(i, c)| {
            steps.show(format!(
                "advise: rate of contender {} of {count} ({}, k = {})",
                i + 1,
                c.kind,
                c.k
            ));
            measure::rate(&shape(plan, c), plan.queries, &|keys| steps.bar.inc(keys))
        })
        .collect::<Result<_>>()?;
    let mut contenders = Vec::new();
    for (i, (config, rate)) in picked.iter().zip(rates).enumerate() {
        steps.show(format!(
            "advise: lookup times of contender {} of {count} ({}, k = {})",
            i + 1,
            config.kind,
            config.k
        ));
        if let Some(failed) = rate.failed_inserts.filter(|&f| f > 0) {
            notes.push(format!(
                "dropped {} (m = {}, k = {}): {failed} keys refused",
                config.kind, config.m, config.k
            ));
            continue;
        }
        let s = shape(plan, config);
        let mut filter = measure::filled(&s)?;
        let separate = measure::lookups(
            &mut *filter,
            &s,
            plan.batched,
            timed_keys(plan.n),
            TIMED_PASSES,
        )?;
        let lookups = validate::in_workload_shape(
            &*filter,
            &s,
            separate,
            plan.negative_share,
            plan.batched,
            (workload, TIMED_PASSES),
        )?;
        steps
            .bar
            .inc(plan.n + (2 * timed_keys(plan.n) + workload) * TIMED_PASSES as u64);
        contenders.push(Contender {
            config: config.clone(),
            rate,
            lookups,
        });
    }
    Ok(contenders)
}

/// Each contender's cost with its interval: the rate's Clopper–Pearson interval and the
/// times' `[min, max]`, each at [`INPUT_CONFIDENCE`].
fn price(plan: &AdvisePlan, contender: &Contender, t_work: Bounded) -> Bounded {
    let r = &contender.rate;
    let (low, high) = clopper_pearson(r.false_positives, r.queries, INPUT_CONFIDENCE);
    cost(&CostInputs {
        negative_share: plan.negative_share,
        fpr: Bounded {
            value: r.fpr_measured,
            low,
            high,
        },
        t_absent: contender.lookups.absent,
        t_present: contender.lookups.present,
        t_work,
    })
}

/// Measures, prices and chooses, then runs the workload for the choice, the runner-up and
/// no filter.
pub fn run(plan: &AdvisePlan, progress: &ProgressBar) -> Result<Outcome> {
    let mut notes = Vec::new();
    let steps = Steps::new(progress);
    steps.show("advise: the cost of the work".into());
    let mut resolved = resolve_work(plan)?;
    let t_w = resolved.t_work;
    let mut capped = Vec::new();
    let picked = pick(plan, &steps, t_w.value, &mut capped)?;
    notes.push(format!(
        "searched {} configurations, {} within the needs and limits; measured {} contenders ({})",
        plan.space,
        plan.configs.len(),
        picked.len(),
        match plan.measure_all {
            true => "all of them",
            false => "pruned by the closed-form rate and the measured time model",
        }
    ));
    notes.append(&mut capped);
    notes.push(resolved.how.clone());
    let contenders = measure_contenders(plan, &picked, (&steps, t_w.value), &mut notes)?;
    let mut priced: Vec<Priced> = contenders
        .iter()
        .map(|c| Priced::filter(c, price(plan, c, t_w)))
        .collect();
    priced.push(Priced::none(t_w));
    let points: Vec<Point> = priced.iter().map(Priced::point).collect();
    for (p, on) in priced.iter_mut().zip(skyline::skyline(&points)) {
        p.on_skyline = on;
    }
    let chosen = skyline::choose(&points).unwrap_or(priced.len() - 1);
    let runner_up = priced::runner_up(&priced, chosen);
    steps.show("advise: the workload end to end".into());
    let checked = validate_choice(
        plan,
        &priced,
        &[Some(chosen), runner_up],
        &mut resolved.work,
    )?;
    report::outcome(plan, &resolved, priced, chosen, runner_up, checked, notes)
}

/// The end-to-end run: for each of `which` (indexes into `priced`) and for no filter, ns per
/// query, median and spread, and each filter's lookups timed beside it.
fn validate_choice(
    plan: &AdvisePlan,
    priced: &[Priced],
    which: &[Option<usize>],
    work: &mut Work,
) -> Result<Vec<(usize, Checked)>> {
    let none = priced.len() - 1;
    let mut indexes: Vec<usize> = which
        .iter()
        .flatten()
        .copied()
        .filter(|&i| i != none)
        .collect();
    indexes.dedup();
    let filters = indexes
        .iter()
        .map(|&i| measure::filled(&shape(plan, priced[i].config.as_ref().expect("a filter"))))
        .collect::<Result<Vec<_>>>()?;
    let mut runs: Vec<Option<&dyn crate::structures::Filter>> =
        filters.iter().map(|f| Some(&**f)).collect();
    runs.push(None);
    indexes.push(none);
    let any = priced.iter().find_map(|p| p.config.as_ref()).cloned();
    let Some(any) = any else {
        return Ok(Vec::new());
    };
    let (s, t_w, sigma) = (
        shape(plan, &any),
        priced[none].cost.value,
        plan.negative_share,
    );
    let count = validate::query_count(t_w, VALIDATION_BUDGET_NS);
    let queries = validate::queries(&s, sigma, count, plan.seed, 0);
    let model = validate::queries(&s, sigma, workload_keys(t_w), s.seed ^ 0x5EED, MODEL_FIRST);
    let passes = validate::run(
        &runs,
        (&queries, &model),
        plan.batched,
        work,
        VALIDATION_ROUNDS,
    )?;
    Ok(indexes.into_iter().zip(passes).collect())
}
