//! An advise run, step by step, each phase within what is left of `--target-seconds`: the
//! cost of the work, the time model, the contenders measured in order of priority while
//! each one's predicted time fits, the work timed again between them (its drift over the
//! run widens every timed interval), each priced, the choice, and the workload run end to
//! end.

use std::time::Instant;

use indicatif::ProgressBar;

use super::candidates::{self, Config};
use super::cost::{self, Bounded, TIMED_PASSES};
use super::flags::AdvisePlan;
use super::measure::{self, Keyed};
use super::model::{self, Reference, TimeModel};
use super::priced::{self, Contender, KEPT_BYTES, PLOT_WORK_NS, Priced, Resolved};
use super::report;
use super::skyline::{self, Point};
use super::spread::{self, WorkloadShape};
use super::steps::Steps;
use super::validate::{self, Checked, MODEL_FIRST, Probes};
use super::work::{MISS_BYTES, resolve_work};
use crate::error::Result;
use crate::experiments::Outcome;
use crate::hash::HashScheme;
use crate::pipeline::timing::Passes;
use crate::structures::Spec;

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

/// Share of `--target-seconds` kept for the end-to-end run (its filters' builds and its
/// rounds): the contenders are measured while each one's predicted time fits in what is
/// left of the target less this share.
const VALIDATION_SHARE: f64 = 0.25;

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
        measure::independent_line_ns(bytes.min(MISS_BYTES), 200_000, 3)
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
    plan.queries + 2 * timed_keys(plan.n) * u64::from(TIMED_PASSES)
}

/// The configurations to measure in order of priority: all with `--measure-all` (no time
/// model, no cap), else the time model's contenders ([`model::contenders`]) and the model.
fn pick(plan: &AdvisePlan, steps: &Steps, t_w: f64) -> Result<(Vec<Config>, Option<TimeModel>)> {
    if plan.measure_all {
        return Ok((plan.configs.clone(), None));
    }
    let model = calibrate(plan, steps)?;
    let ends = [t_w, PLOT_WORK_NS.0, PLOT_WORK_NS.1];
    let limits = (plan.contenders, plan.tolerance);
    let picked = model::contenders(&plan.configs, &model, plan.negative_share, &ends, limits);
    Ok((picked, Some(model)))
}

/// One run of advise: its plan and progress, the work with its passes spread over the run,
/// and the notes so far.
struct Run<'a> {
    plan: &'a AdvisePlan,
    steps: Steps<'a>,
    resolved: Resolved,
    probes: Probes,
    notes: Vec<String>,
    /// The wall ns and the process's CPU seconds when the run's work began.
    began: (f64, f64),
}

impl Run<'_> {
    /// ns left of `--target-seconds`.
    fn left_ns(&self) -> f64 {
        self.plan.target_seconds as f64 * 1e9 - self.steps.elapsed_ns()
    }

    /// `t_w` as the work's passes spread over the run measured it ([`Probes::t_work`]), and
    /// the lookups' drift ([`Probes::lookup_drift`]), said in notes.
    fn t_work(&mut self) -> (Bounded, f64) {
        let (t_w, drift) = (
            self.probes.t_work(self.resolved.t_work),
            self.probes.lookup_drift(),
        );
        self.resolved.t_work = t_w;
        self.notes.push(format!(
            "{}; timed again in {} passes spread over the run: {:.1} ns [{:.1}, {:.1}], widened by their drift, x{:.3}",
            self.resolved.how,
            self.probes.ns.len(),
            t_w.value,
            t_w.low,
            t_w.high,
            cost::drift(&self.probes.ns)
        ));
        let lines = &self.probes.line_ns;
        if !lines.is_empty() {
            let range = Passes::of(lines.clone());
            self.notes.push(format!(
                "the memory timed in {} passes spread over the run: {:.1}-{:.1} ns a line read; every lookup's interval widened by the larger drift of the work's and the memory's, x{drift:.3}",
                lines.len(),
                range.low,
                range.high
            ));
        }
        (t_w, drift)
    }

    /// Wall time over CPU time since the work began, at least 1: what the machine's other
    /// load makes of a time measured in CPU ns.
    fn slowdown(&self) -> f64 {
        let cpu = (crate::program::cpu_seconds() - self.began.1) * 1e9;
        ((self.steps.elapsed_ns() - self.began.0) / cpu).max(1.0)
    }

    /// Measures `picked` in order, each whose time predicted by the model (scaled by what
    /// the measured ones took against their predictions, at first by the slowdown) fits in
    /// what is left of the target less [`VALIDATION_SHARE`]; where none has been measured,
    /// the quickest of those whose predicted cost is within the tolerance of the best
    /// predicted (one that can decide the choice; `--measure-all`: every one); each but the
    /// first measured stopped while building where its build, priced as it goes, would not fit
    /// ([`Run::measure_one`]); the work timed again after each. Those left out and those
    /// stopped are named in notes. Returned in the order of the plan's configurations.
    fn measure_contenders(
        &mut self,
        picked: &[Config],
        model: Option<&TimeModel>,
    ) -> Result<Vec<Contender>> {
        let (plan, count) = (self.plan, picked.len());
        let deadline = match model {
            Some(_) => plan.target_seconds as f64 * 1e9 * (1.0 - VALIDATION_SHARE),
            None => f64::INFINITY,
        };
        let (mut predicted, mut spent) = (0.0, 0.0);
        let (mut contenders, mut left_out, mut kept) = (Vec::new(), 0, 0);
        // ns reserved for the deferred contenders' rounds ([`spread::Pending`]).
        let (mut pending, mut deferred) = (spread::Pending::default(), 0.0);
        let lookups = lookups_measured(plan);
        let t_w = self.resolved.t_work.value;
        let part_ns = validate::part_work_ns(t_w, TIMED_PASSES + spread::ROUNDS - 1);
        // A contender's passes in the workload's shape, the work and the lookups (beside the
        // work, and alone, where the work is short), as the model prices them.
        let shape_ns = |c: &Config| {
            let subjects = 1 + u64::from(validate::part_beside_work(t_w));
            let lookups = subjects * workload_keys(t_w) * u64::from(TIMED_PASSES + spread::ROUNDS);
            part_ns + model.map_or(0.0, |m| m.lookup_ns(c) * lookups as f64)
        };
        let guesses: Vec<Option<f64>> = (picked.iter())
            .map(|c| model.map(|m| m.measuring_ns(c, plan.n, lookups) + shape_ns(c)))
            .collect();
        let predicted_cost = |c: &Config| {
            model.map_or(0.0, |m| {
                m.cost(c, plan.negative_share, self.resolved.t_work.value)
            })
        };
        let best = picked
            .iter()
            .map(predicted_cost)
            .fold(f64::INFINITY, f64::min);
        let limit = best + plan.tolerance.width(best);
        let cheapest = (0..count)
            .filter(|&i| predicted_cost(&picked[i]) <= limit)
            .min_by(|&a, &b| {
                guesses[a]
                    .partial_cmp(&guesses[b])
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        for (i, (config, &guess)) in picked.iter().zip(&guesses).enumerate() {
            let ratio = match predicted > 0.0 {
                true => spent / predicted,
                false => self.slowdown(),
            };
            let first = contenders.is_empty() && cheapest == Some(i);
            let left = deadline - deferred - self.steps.elapsed_ns();
            if guess.is_some_and(|g| !first && g * ratio > left) {
                left_out += 1;
                continue;
            }
            self.steps.show(format!(
                "advise: contender {} of {count} ({}, k = {})",
                i + 1,
                config.kind,
                config.k
            ));
            let started = self.steps.elapsed_ns();
            let lookups_ns = (model.map_or(0.0, |m| m.lookup_ns(config) * lookups as f64)
                + shape_ns(config))
                * ratio;
            // A choice needs one measured: the first is never stopped.
            let until = match contenders.is_empty() {
                true => f64::INFINITY,
                false => deadline - deferred,
            };
            if let Some((mut measured, mut shape)) = self.measure_one(config, until, lookups_ns)? {
                match kept + measured.config.memory_bytes <= KEPT_BYTES {
                    true => {
                        kept += measured.config.memory_bytes;
                        pending.defer(contenders.len(), shape);
                        deferred += shape_ns(config) * ratio;
                        // Spent in the rounds, after the loop: out of what this one took.
                        predicted -= guess.map_or(0.0, |_| shape_ns(config));
                    }
                    false => {
                        let filter = measured.filter.take().expect("a contender is filled");
                        let work = &mut self.resolved.work;
                        shape.time(&*filter, plan.batched, work, TIMED_PASSES)?;
                        measured.timed(shape.shaped());
                    }
                }
                contenders.push(measured);
            }
            spent += self.steps.elapsed_ns() - started;
            predicted += guess.unwrap_or(0.0);
            self.probes.take(&mut self.resolved.work)?;
        }
        let (work, probes) = (&mut self.resolved.work, &mut self.probes);
        let filter = |i: usize| {
            contenders[i]
                .filter
                .as_deref()
                .expect("a deferred filter is kept")
        };
        let shaped = pending.time(filter, (plan.batched, work), (probes, &self.steps))?;
        shaped.into_iter().for_each(|(i, s)| contenders[i].timed(s));
        if left_out > 0 {
            self.notes.push(format!(
                "not measured: {left_out} of {count} contenders, their predicted measurements (the time model's, scaled by what the measured ones took) beyond what --target-seconds {} left them less a quarter for the end-to-end run: raise --target-seconds, or lower --contenders",
                plan.target_seconds
            ));
        }
        self.notes.push(format!(
            "searched {} configurations, {} within the needs and limits; measured {} contenders ({})",
            plan.space,
            plan.configs.len(),
            contenders.len(),
            match plan.measure_all {
                true => "all of them",
                false => "pruned by the closed-form rate and the measured time model",
            }
        ));
        let position = |c: &Contender| {
            let same = |p: &&Config| {
                (p.kind.name(), p.m, p.k) == (c.config.kind.name(), c.config.m, c.config.k)
            };
            plan.configs.iter().position(|p| same(&p))
        };
        contenders.sort_by_key(position);
        Ok(contenders)
    }

    /// One contender: its filter built at n in pieces, stopped (with a note) where the rest
    /// of the build, the rate's own build where the keys need one ([`measure::rate_of`]),
    /// and `lookups_ns` of lookups would end past `deadline` (ns since the run began); its
    /// lookups timed apart; then its rate; and its lookups in the workload's shape, to be
    /// timed. `None`, with a note, where it was stopped or its filter refused keys.
    fn measure_one(
        &mut self,
        config: &Config,
        deadline: f64,
        lookups_ns: f64,
    ) -> Result<Option<(Contender, WorkloadShape)>> {
        let (plan, bar, t_w) = (self.plan, self.steps.bar, self.resolved.t_work.value);
        let s = shape(plan, config);
        let again = f64::from(u8::from(!plan.keys.is_default()));
        let steps = &self.steps;
        let fits = |rest: f64, took: f64| {
            steps.elapsed_ns() + rest * (1.0 + again) + took * again + lookups_ns <= deadline
        };
        let what = format!("{} (m = {}, k = {})", config.kind, config.m, config.k);
        let (mut filter, build_ns) = match measure::filled_within(&s, &fits)? {
            measure::Built::Filled(filter, ns) => (filter, ns),
            measure::Built::Stopped(keys, ns) => {
                self.notes.push(format!(
                    "cut for time: {what} stopped after {keys} of its {} keys ({:.1} s), its build priced as it went past what --target-seconds {} left it",
                    plan.n,
                    ns / 1e9,
                    plan.target_seconds
                ));
                return Ok(None);
            }
        };
        if let Some(failed) = filter.failed_inserts().filter(|&f| f > 0) {
            self.notes
                .push(format!("dropped {what}: {failed} keys refused"));
            return Ok(None);
        }
        let (timed, workload) = (timed_keys(plan.n), workload_keys(t_w));
        let separate = measure::lookups(&mut *filter, &s, plan.batched, timed, TIMED_PASSES)?;
        let shape = WorkloadShape::new(
            &*filter,
            &s,
            (separate, plan.negative_share),
            (plan.batched, t_w),
            workload,
        )?;
        let rate = match measure::rate_of(&*filter, &s, plan.queries)? {
            Some(rate) => rate,
            None => measure::rate(&s, plan.queries, &|_| {})?,
        };
        bar.inc(2 * plan.n + (2 * timed + workload) * u64::from(TIMED_PASSES));
        let contender = Contender {
            config: candidates::exact(config, plan.n),
            rate,
            lookups: separate,
            alone_ns: 0.0,
            build_ns,
            filter: Some(filter),
        };
        Ok(Some((contender, shape)))
    }
}

/// Measures, prices and chooses, then runs the workload for the choice, the runner-up and
/// no filter.
pub fn run(plan: &AdvisePlan, progress: &ProgressBar) -> Result<Outcome> {
    let sharing = crate::pipeline::sharing::Sharing::start();
    let steps = Steps::new(progress, plan.started);
    let budget = super::flags::budget_line(plan, VALIDATION_SHARE);
    steps.show(format!("advise: {budget}"));
    steps.show("advise: the cost of the work".into());
    let resolved = resolve_work(plan)?;
    let mut run = Run {
        plan,
        steps,
        probes: Probes::new(resolved.t_work.value),
        resolved,
        notes: vec![budget],
        began: (0.0, crate::program::cpu_seconds()),
    };
    run.began.0 = run.steps.elapsed_ns();
    for _ in 0..2 {
        run.probes.take(&mut run.resolved.work)?;
    }
    let (picked, model) = pick(plan, &run.steps, run.resolved.t_work.value)?;
    let largest = picked.iter().map(|c| c.memory_bytes).max().unwrap_or(0);
    run.probes.watch_memory(largest)?;
    let contenders = run.measure_contenders(&picked, model.as_ref())?;
    let (t_w, drift) = run.t_work();
    let mut priced: Vec<Priced> = (contenders.iter())
        .map(|c| Priced::filter(c, c.cost(plan.negative_share, t_w, drift)))
        .chain([Priced::none(t_w)])
        .collect();
    let points: Vec<Point> = priced.iter().map(Priced::point).collect();
    for (p, on) in priced.iter_mut().zip(skyline::skyline(&points)) {
        p.on_skyline = on;
    }
    let choice = skyline::choose(&points, plan.tolerance).expect("no filter is always priced");
    let runner_up = priced::runner_up(&priced, &choice);
    run.steps.show("advise: the workload end to end".into());
    let checked = run.validate_choice(&priced, &contenders, &[Some(choice.chosen), runner_up])?;
    let miss = super::report_checks::miss(&priced, &checked);
    priced
        .iter_mut()
        .for_each(|p| p.cost = p.cost.widened(miss));
    run.notes.push(format!(
        "every cost interval widened by the end-to-end run's worst miss of its prediction, x{miss:.3}"
    ));
    let at = (choice.best, plan.negative_share);
    let points = priced::at_this_t_w((&contenders, &priced), at, (t_w, drift, miss));
    let choice = choice.within_intervals(&points);
    let cpus = std::thread::available_parallelism().map_or(1, |n| n.get());
    run.notes.push(sharing.since().note(cpus, "they slow the lookups, the work and the end-to-end run unevenly, so that the costs, their intervals and the choice move with them: run again on a quiet machine"));
    report::outcome(
        plan,
        &run.resolved,
        priced,
        (&choice, runner_up),
        checked,
        run.notes,
    )
}

/// Fewest queries per pass of an end-to-end run worth its time.
const MIN_VALIDATION_QUERIES: u64 = 100;

/// Most queries per pass of the end-to-end run.
const MAX_VALIDATION_QUERIES: u64 = 1_000_000;

impl Run<'_> {
    /// Queries per pass of the end-to-end run: as many as fit what is left of the target
    /// (at most [`VALIDATION_SHARE`] of it) less `builds_ns` over its rounds and its warming
    /// pass, each running every one of `runs` (their predicted costs per query, no filter's
    /// `t_w` among them, times the [`Run::slowdown`]), at most [`MAX_VALIDATION_QUERIES`]: behind dear work a false
    /// positive costs the run `t_w / count` a query, so the count bounds how finely the
    /// end-to-end run can tell two filters apart (at 100 µs, 2000 queries made one false
    /// positive 50 ns, the whole default tolerance of a 5000 ns cost). `Err` with the
    /// seconds the builds and passes of [`MIN_VALIDATION_QUERIES`] would take where even
    /// those do not fit.
    fn validation_count(&self, runs: &[f64], builds_ns: f64) -> std::result::Result<u64, f64> {
        let per_query = self.per_query(runs);
        let share = self.plan.target_seconds as f64 * 1e9 * VALIDATION_SHARE;
        let budget = self.left_ns().min(share) - builds_ns;
        let fit = (budget / per_query).floor().max(0.0) as u64;
        match fit >= MIN_VALIDATION_QUERIES {
            true => Ok(fit.min(MAX_VALIDATION_QUERIES)),
            false => Err((builds_ns + per_query * MIN_VALIDATION_QUERIES as f64) / 1e9),
        }
    }

    /// Predicted ns per query of the end-to-end run's passes: each of `runs` (predicted
    /// costs per query) in each round and the warming pass, times the [`Run::slowdown`].
    fn per_query(&self, runs: &[f64]) -> f64 {
        runs.iter().sum::<f64>() * f64::from(VALIDATION_ROUNDS + 1) * self.slowdown()
    }

    /// The filters of `rebuilt` (indexes into `contenders`) built anew, each stopped where it
    /// would end later than `passes_ns` before the target; `None`, with a note, where one was.
    fn rebuilt(
        &mut self,
        contenders: &[Contender],
        rebuilt: &[usize],
        passes_ns: f64,
    ) -> Result<Option<Vec<Box<dyn crate::structures::Filter>>>> {
        let (plan, target) = (self.plan, self.plan.target_seconds as f64 * 1e9);
        let fits = |rest: f64, _: f64| self.steps.elapsed_ns() + rest + passes_ns <= target;
        let mut built = Vec::new();
        for &i in rebuilt {
            let config = &contenders[i].config;
            match measure::filled_within(&shape(plan, config), &fits)? {
                measure::Built::Filled(filter, _) => built.push(filter),
                measure::Built::Stopped(keys, _) => {
                    self.notes.push(format!(
                        "cut for time: end to end not run, the build of {} (k = {}) stopped after {keys} of its {} keys, past what --target-seconds {} left it",
                        config.kind, config.k, plan.n, plan.target_seconds
                    ));
                    return Ok(None);
                }
            }
        }
        Ok(Some(built))
    }

    /// The end-to-end run: for each of `which` (indexes into `priced`, and of the filters
    /// into `contenders`) and for no filter, ns per query, median and spread, and each
    /// filter's lookups timed beside it, on the contenders' kept filters or filters built
    /// anew; none, with a note, where its builds and rounds would not fit
    /// ([`Run::validation_count`]) or a build was stopped for time.
    fn validate_choice(
        &mut self,
        priced: &[Priced],
        contenders: &[Contender],
        which: &[Option<usize>],
    ) -> Result<Vec<(usize, Checked)>> {
        let (plan, none) = (self.plan, priced.len() - 1);
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
        let rebuilt: Vec<usize> = (indexes.iter().copied())
            .filter(|&i| contenders[i].filter.is_none())
            .collect();
        let builds: f64 = rebuilt.iter().map(|&i| priced[i].build_ns).sum();
        let count = match self.validation_count(&costs, builds) {
            Ok(count) => count,
            Err(seconds) => {
                self.notes.push(format!(
                    "end to end not run: its filters' builds and {} rounds of {MIN_VALIDATION_QUERIES} queries would take about {seconds:.0} s, more than --target-seconds {} left it",
                    VALIDATION_ROUNDS + 1,
                    plan.target_seconds
                ));
                return Ok(Vec::new());
            }
        };
        let passes_ns = count as f64 * self.per_query(&costs);
        let Some(built) = self.rebuilt(contenders, &rebuilt, passes_ns)? else {
            return Ok(Vec::new());
        };
        let mut built = built.iter();
        let mut runs: Vec<Option<&dyn crate::structures::Filter>> = (indexes.iter())
            .map(|&i| contenders[i].filter.as_ref().or_else(|| built.next()))
            .map(|f| f.map(|f| &**f))
            .collect();
        runs.push(None);
        indexes.push(none);
        let queries = validate::queries(&s, sigma, count, plan.seed, 0);
        let model = |count| validate::queries(&s, sigma, count, s.seed ^ 0x5EED, MODEL_FIRST);
        let passes = self.rounds(&runs, (&queries, (workload_keys(t_w), &model)))?;
        Ok(indexes.into_iter().zip(passes).collect())
    }

    /// The end-to-end run's rounds ([`validate::run`]) while the next fits in the target; a
    /// note where fewer than [`VALIDATION_ROUNDS`] did.
    fn rounds(
        &mut self,
        runs: &[Option<&dyn crate::structures::Filter>],
        (queries, model): (&[u64], validate::MakeQueries),
    ) -> Result<Vec<Checked>> {
        let (plan, target) = (self.plan, self.plan.target_seconds as f64 * 1e9);
        let (steps, rounds) = (&self.steps, std::cell::Cell::new(0));
        let another = |round: f64| {
            rounds.set(rounds.get() + 1);
            steps.elapsed_ns() + round <= target
        };
        let passes = validate::run(
            runs,
            (queries, model),
            plan.batched,
            (&mut self.resolved.work, self.resolved.t_work.value),
            (VALIDATION_ROUNDS, &another),
        )?;
        let rounds = rounds.get();
        if rounds < VALIDATION_ROUNDS {
            self.notes.push(format!(
                "cut for time: end to end ran {rounds} of its {VALIDATION_ROUNDS} rounds, the next past --target-seconds {}",
                plan.target_seconds
            ));
        }
        Ok(passes)
    }
}
