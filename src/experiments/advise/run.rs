//! An advise run, step by step: the cost of the work, the time model, the contenders
//! measured, each priced, the choice, and the workload run end to end.

use std::time::Instant;

use indicatif::ProgressBar;
use rayon::prelude::*;

use super::candidates::{self, Config};
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
/// n = 10^6 should keep) that the contenders' measurements may take together, granted in
/// order of priority; the rest is the time model's references, the work's calibration and
/// the workload end to end ([`VALIDATION_SHARE`]).
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
/// at most [`model::REFERENCE_KEYS_MAX`] keys each, and line reads per size.
fn calibrate(plan: &AdvisePlan, steps: &Steps) -> Result<TimeModel> {
    let keys = plan.n.min(model::REFERENCE_KEYS_MAX);
    let refs = model::references(&plan.configs);
    let mut measured = Vec::new();
    let count = refs.len();
    for (i, config) in refs.into_iter().enumerate() {
        steps.show(format!(
            "advise: time model, structure {} of {count} ({})",
            i + 1,
            config.kind
        ));
        let config = model::scaled(&config, plan.n, keys);
        let mut s = shape(plan, &config);
        s.n = keys;
        let started = Instant::now();
        let mut filter = measure::filled(&s)?;
        let insert_ns = started.elapsed().as_nanos() as f64 / keys as f64;
        steps.bar.inc(keys);
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
/// the time model's contenders at `t_w` and at the plot's ends, as many as their predicted
/// measurements ([`TimeModel::measuring_ns`]) fit in [`measuring_budget_ns`], granted in
/// order of priority ([`model::by_priority`], [`model::within_budget`]), and returned in that
/// order; those left out are named in a note.
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
    let order = model::by_priority(&picked, &model, sigma, t_w);
    let predicted = |c: &Config| model.measuring_ns(c, plan.n, lookups_measured(plan));
    let costs: Vec<f64> = order.iter().map(|&i| predicted(&picked[i])).collect();
    let budget = measuring_budget_ns(plan);
    let fits = model::within_budget(&costs, budget);
    let mut kept = vec![false; picked.len()];
    for (&i, &fit) in order.iter().zip(&fits) {
        kept[i] = fit;
    }
    let left_out: Vec<&Config> = (0..picked.len())
        .filter(|&i| !kept[i])
        .map(|i| &picked[i])
        .collect();
    if !left_out.is_empty() {
        let all: f64 = costs.iter().sum();
        notes.push(format!(
            "not measured: {} of {} contenders ({}), predicted over the {:.0} s the contenders may take (half of --target-seconds {}); all of them would take about {:.0} s: raise --target-seconds to about {:.0}, or lower --contenders",
            left_out.len(),
            picked.len(),
            by_structure(&left_out),
            budget / 1e9,
            plan.target_seconds,
            all / 1e9,
            (all / 1e9 / MEASURING_SHARE).ceil()
        ));
    }
    Ok(order
        .into_iter()
        .filter(|&i| kept[i])
        .map(|i| picked[i].clone())
        .collect())
}

/// How many of `configs` each structure has: `blocked 3, cuckoo 1`.
fn by_structure(configs: &[&Config]) -> String {
    let mut counts: Vec<(String, usize)> = Vec::new();
    for c in configs {
        let name = c.kind.to_string();
        match counts.iter_mut().find(|(n, _)| *n == name) {
            Some((_, count)) => *count += 1,
            None => counts.push((name, 1)),
        }
    }
    let parts: Vec<String> = counts.iter().map(|(n, c)| format!("{n} {c}")).collect();
    parts.join(", ")
}

/// Rates two at a time (on both cores), then times one at a time (alone, so that no other
/// contender shares the cache), in the order given; once the measurements have taken
/// [`measuring_budget_ns`] (the time model predicts them only roughly), the contenders left
/// are named in a note and not measured (`--measure-all` measures every one). A
/// configuration that refused keys is dropped with a note. Returned in the order of the
/// plan's configurations.
fn measure_contenders(
    plan: &AdvisePlan,
    picked: &[Config],
    (steps, t_w): (&Steps, f64),
    notes: &mut Vec<String>,
) -> Result<Vec<Contender>> {
    let count = picked.len();
    let workload = workload_keys(t_w);
    let started = Instant::now();
    let mut contenders = Vec::new();
    for (pair, configs) in picked.chunks(2).enumerate() {
        let spent = started.elapsed().as_nanos() as f64;
        if !plan.measure_all && !contenders.is_empty() && spent > measuring_budget_ns(plan) {
            let left: Vec<&Config> = picked[2 * pair..].iter().collect();
            notes.push(format!(
                "not measured: {} more contenders, the measurements having taken the {:.0} s they may (half of --target-seconds {}): {}",
                left.len(),
                spent / 1e9,
                plan.target_seconds,
                by_structure(&left)
            ));
            break;
        }
        let rates: Vec<Measurement> = configs
            .par_iter()
            .enumerate()
            .map(|(j, c)| {
                steps.show(format!(
                    "advise: rate of contender {} of {count} ({}, k = {})",
                    2 * pair + j + 1,
                    c.kind,
                    c.k
                ));
                measure::rate(&shape(plan, c), plan.queries, &|keys| steps.bar.inc(keys))
            })
            .collect::<Result<_>>()?;
        for (j, (config, rate)) in configs.iter().zip(rates).enumerate() {
            steps.show(format!(
                "advise: lookup times of contender {} of {count} ({}, k = {})",
                2 * pair + j + 1,
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
            let config = candidates::exact(config, plan.n);
            contenders.push(Contender {
                config,
                rate,
                lookups,
            });
        }
    }
    let position = |c: &Contender| {
        let same = |p: &&Config| {
            (p.kind.name(), p.m, p.k) == (c.config.kind.name(), c.config.m, c.config.k)
        };
        plan.configs.iter().position(|p| same(&p))
    };
    contenders.sort_by_key(position);
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

/// How the run keeps to `--target-seconds`, said before any work.
fn budget_line(plan: &AdvisePlan) -> String {
    let t = plan.target_seconds as f64;
    let contenders = match plan.measure_all {
        true => {
            "every configuration measured (--measure-all: not bounded by the target)".to_string()
        }
        false => format!(
            "references of at most {} keys for the time model, then the contenders measured within {:.0} s, granted in order of priority",
            plan.n.min(model::REFERENCE_KEYS_MAX),
            t * MEASURING_SHARE
        ),
    };
    format!(
        "time: --target-seconds {}: {contenders}; the end-to-end run within {:.0} s",
        plan.target_seconds,
        t * VALIDATION_SHARE
    )
}

/// Measures, prices and chooses, then runs the workload for the choice, the runner-up and
/// no filter.
pub fn run(plan: &AdvisePlan, progress: &ProgressBar) -> Result<Outcome> {
    let steps = Steps::new(progress);
    let mut notes = vec![budget_line(plan)];
    steps.show(format!("advise: {}", notes[0]));
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
    let choice = skyline::choose(&points, plan.tolerance).expect("no filter is always priced");
    let runner_up = priced::runner_up(&priced, choice.chosen);
    steps.show("advise: the workload end to end".into());
    let checked = validate_choice(
        plan,
        &priced,
        &[Some(choice.chosen), runner_up],
        (&mut resolved.work, &mut notes),
    )?;
    report::outcome(
        plan,
        &resolved,
        priced,
        (&choice, runner_up),
        checked,
        notes,
    )
}

/// Share of `--target-seconds` the end-to-end run may take.
const VALIDATION_SHARE: f64 = 0.25;

/// Fewest queries per pass of an end-to-end run worth its time.
const MIN_VALIDATION_QUERIES: u64 = 100;

/// Most queries per pass of the end-to-end run.
const MAX_VALIDATION_QUERIES: u64 = 1_000_000;

/// Queries per pass of the end-to-end run: as many as fit [`VALIDATION_SHARE`] of the
/// target over its rounds and its warming pass, each running every one of `runs` (their
/// predicted costs per query, no filter's `t_w` among them), at most
/// [`MAX_VALIDATION_QUERIES`]: behind dear work a false positive costs the run `t_w / count`
/// a query, so the count bounds how finely the end-to-end run can tell two filters apart
/// (at 100 µs, 2000 queries made one false positive 50 ns, the whole default tolerance of
/// a 5000 ns cost). `Err` with the seconds the passes of [`MIN_VALIDATION_QUERIES`] would
/// take where even those do not fit.
fn validation_count(plan: &AdvisePlan, runs: &[f64]) -> std::result::Result<u64, f64> {
    let per_query: f64 = runs.iter().sum::<f64>() * f64::from(VALIDATION_ROUNDS + 1);
    let budget = plan.target_seconds as f64 * 1e9 * VALIDATION_SHARE;
    let fit = (budget / per_query).floor() as u64;
    match fit >= MIN_VALIDATION_QUERIES {
        true => Ok(fit.min(MAX_VALIDATION_QUERIES)),
        false => Err(per_query * MIN_VALIDATION_QUERIES as f64 / 1e9),
    }
}

/// The end-to-end run: for each of `which` (indexes into `priced`) and for no filter, ns per
/// query, median and spread, and each filter's lookups timed beside it; none, with a note,
/// where it would not fit its share of the target ([`validation_count`]).
fn validate_choice(
    plan: &AdvisePlan,
    priced: &[Priced],
    which: &[Option<usize>],
    (work, notes): (&mut Work, &mut Vec<String>),
) -> Result<Vec<(usize, Checked)>> {
    let none = priced.len() - 1;
    let mut indexes: Vec<usize> = which.iter().flatten().copied().collect();
    indexes.retain(|&i| i != none);
    indexes.dedup();
    let Some(any) = priced.iter().find_map(|p| p.config.as_ref()).cloned() else {
        return Ok(Vec::new());
    };
    let (s, t_w, sigma) = (
        shape(plan, &any),
        priced[none].cost.value,
        plan.negative_share,
    );
    let costs: Vec<f64> = indexes
        .iter()
        .chain([&none])
        .map(|&i| priced[i].cost.value)
        .collect();
    let count = match validation_count(plan, &costs) {
        Ok(count) => count,
        Err(seconds) => {
            notes.push(format!(
                "end to end not run: {} rounds of {MIN_VALIDATION_QUERIES} queries would take about {seconds:.0} s, over a quarter of --target-seconds {}",
                VALIDATION_ROUNDS + 1,
                plan.target_seconds
            ));
            return Ok(Vec::new());
        }
    };
    let filters = indexes
        .iter()
        .map(|&i| measure::filled(&shape(plan, priced[i].config.as_ref().expect("a filter"))))
        .collect::<Result<Vec<_>>>()?;
    let mut runs: Vec<Option<&dyn crate::structures::Filter>> =
        filters.iter().map(|f| Some(&**f)).collect();
    runs.push(None);
    indexes.push(none);
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
