//! What advise knows of each candidate once measured, and of the work: shared by the run
//! that measures and prices them and the report that prints them.

use super::candidates::Config;
use super::cost::{Bounded, CostInputs, INPUT_CONFIDENCE, cost, cost_at};
use super::measure::Lookups;
use super::skyline::{Choice, Point};
use super::spread::Shaped;
use super::validate::Work;
use crate::pipeline::measurement::Measurement;
use crate::stats::clopper_pearson;
use crate::structures::Filter;

/// The ends of the plot's `t_w` axis, in ns.
pub const PLOT_WORK_NS: (f64, f64) = (10.0, 1e6);

/// The work of a query and its cost with its interval.
pub struct Resolved {
    pub t_work: Bounded,
    pub work: Work,
    /// How the cost was obtained, for the notes.
    pub how: String,
}

/// A contender measured: its rate at the real n and its lookup times.
pub struct Contender {
    pub config: Config,
    pub rate: Measurement,
    /// `t_a` and `t_p` beside the work ([`super::validate::FilterPart`]); the separate
    /// lookups' until [`Contender::timed`].
    pub lookups: Lookups,
    /// ns per query of its lookups alone in the workload's shape, without the work.
    pub alone_ns: f64,
    /// ns its filter took to build at n.
    pub build_ns: f64,
    /// Its filter, kept for the end-to-end run while the filters kept hold at most
    /// [`KEPT_BYTES`] (the run then rebuilds it, priced by `build_ns`).
    pub filter: Option<Box<dyn Filter>>,
}

impl Contender {
    /// Its cost with its interval: the rate's Clopper–Pearson interval and the times'
    /// order-statistic intervals, each at [`INPUT_CONFIDENCE`], the lookups widened by their
    /// `drift` over the run ([`super::validate::Probes::lookup_drift`]).
    pub fn cost(&self, negative_share: f64, t_work: Bounded, drift: f64) -> Bounded {
        let r = &self.rate;
        let (low, high) = clopper_pearson(r.false_positives, r.queries, INPUT_CONFIDENCE);
        cost(&CostInputs {
            negative_share,
            fpr: Bounded {
                value: r.fpr_measured,
                low,
                high,
            },
            t_absent: self.lookups.absent.widened(drift),
            t_present: self.lookups.present.widened(drift),
            t_work,
        })
    }

    /// Its lookups as the workload's shape timed them ([`super::spread::WorkloadShape`]).
    pub fn timed(&mut self, shaped: Shaped) {
        self.lookups = shaped.lookups;
        self.alone_ns = shaped.alone_ns;
    }
}

/// Most bytes of contenders' filters kept for the end-to-end run.
pub const KEPT_BYTES: u64 = 1 << 30;

/// A contender, or no filter, priced.
#[derive(Clone, Debug)]
pub struct Priced {
    /// None for no filter.
    pub config: Option<Config>,
    pub rate: Option<Measurement>,
    pub absent: Option<Bounded>,
    pub present: Option<Bounded>,
    /// ns per query of the lookups alone ([`Contender::alone_ns`]).
    pub alone_ns: Option<f64>,
    pub cost: Bounded,
    pub on_skyline: bool,
    /// ns its filter took to build at n (0 for no filter).
    pub build_ns: f64,
}

impl Priced {
    pub fn filter(c: &Contender, cost: Bounded) -> Self {
        Priced {
            config: Some(c.config.clone()),
            rate: Some(c.rate.clone()),
            absent: Some(c.lookups.absent),
            present: Some(c.lookups.present),
            alone_ns: Some(c.alone_ns),
            cost,
            on_skyline: false,
            build_ns: c.build_ns,
        }
    }

    pub fn none(t_work: Bounded) -> Self {
        Priced {
            config: None,
            rate: None,
            absent: None,
            present: None,
            alone_ns: None,
            cost: super::cost::cost_without_filter(t_work),
            on_skyline: false,
            build_ns: 0.0,
        }
    }

    pub fn point(&self) -> Point {
        Point {
            memory_bytes: self.config.as_ref().map_or(0, |c| c.memory_bytes),
            cost: self.cost,
        }
    }

    /// The structure's name, or `no filter`.
    pub fn family(&self) -> String {
        self.config
            .as_ref()
            .map_or_else(|| "no filter".to_string(), |c| c.kind.to_string())
    }

    /// The structure and its parameters, as the recommendation names them.
    pub fn describe(&self, n: u64) -> String {
        match (&self.config, &self.rate) {
            (Some(c), Some(r)) => format!(
                "{} (m = {} bits, k = {}, {:.2} bits per key, {} bytes; rate {:.3e})",
                c.kind,
                c.m,
                c.k,
                c.memory_bytes as f64 * 8.0 / n as f64,
                c.memory_bytes,
                r.fpr_measured
            ),
            _ => "no filter".into(),
        }
    }

    /// ε as measured; 1 for no filter, which lets every absent key through to the work.
    pub fn fpr(&self) -> f64 {
        self.rate.as_ref().map_or(1.0, |r| r.fpr_measured)
    }

    /// The cost per query at σ and `t_w` from the central values (`t_w` without a filter).
    pub fn cost_at_work(&self, sigma: f64, t_w: f64) -> f64 {
        let time = |t: Option<Bounded>| t.map_or(0.0, |t| t.value);
        cost_at(
            sigma,
            self.fpr(),
            time(self.absent),
            time(self.present),
            t_w,
        )
    }

    /// The cost per query at σ and `t_w` with lookups of `lookup_ns` per query (`σ·t_a + (1 -
    /// σ)·t_p` timed elsewhere) and the measured rate.
    pub fn cost_with_lookups(&self, sigma: f64, t_w: f64, lookup_ns: f64) -> f64 {
        self.cost_at_work(sigma, t_w) - self.lookup_ns(sigma) + lookup_ns
    }

    /// The cost per query at σ and another `t_w` than the run's: the lookups alone, their
    /// overlap with the run's work not carried to another.
    pub fn cost_at_other_work(&self, sigma: f64, t_w: f64) -> f64 {
        match self.alone_ns {
            Some(alone) => self.cost_with_lookups(sigma, t_w, alone),
            None => self.cost_at_work(sigma, t_w),
        }
    }

    /// ns per query of the lookups: `σ·t_a + (1 - σ)·t_p`.
    pub fn lookup_ns(&self, sigma: f64) -> f64 {
        match (self.absent, self.present) {
            (Some(a), Some(p)) => sigma * a.value + (1.0 - sigma) * p.value,
            _ => 0.0,
        }
    }
}

/// What the choice is checked against end to end: of the other structures (no filter
/// counting as one), the least memory among the tied, else the best.
pub fn runner_up(priced: &[Priced], choice: &Choice) -> Option<usize> {
    let family = priced[choice.chosen].family();
    let others = || (0..priced.len()).filter(|&i| priced[i].family() != family);
    (others().filter(|i| choice.tied.contains(i)))
        .min_by_key(|&i| (priced[i].point().memory_bytes, i))
        .or_else(|| others().min_by(|&a, &b| priced[a].cost.value.total_cmp(&priced[b].cost.value)))
}

/// The points the noise is read from ([`Choice::within_intervals`]), at this run's
/// `t_w`: another run's `t_w` moves a filter's cost against the best's only by
/// `σ·|ε - ε_best|·Δt_w` (no filter's by `σ·(1 - ε_best)·Δt_w`), so each interval is its rate's
/// and lookups' (the lookups widened by the end-to-end `miss` too) and that much for `Δt_w`
/// the largest distance of `t_w`'s interval from its value.
pub fn at_this_t_w(
    (contenders, priced): (&[Contender], &[Priced]),
    (best, negative_share): (usize, f64),
    (t_w, drift, miss): (Bounded, f64, f64),
) -> Vec<Point> {
    let swing = (t_w.high - t_w.value).max(t_w.value - t_w.low);
    let exact = Bounded::exact(t_w.value);
    let at_t_w = (contenders.iter())
        .map(|c| c.cost(negative_share, exact, drift * miss))
        .chain([exact]);
    (priced.iter().zip(at_t_w))
        .map(|(p, cost)| {
            let apart = negative_share * (p.fpr() - priced[best].fpr()).abs() * swing;
            Point {
                cost: Bounded {
                    low: cost.low - apart,
                    high: cost.high + apart,
                    ..cost
                },
                ..p.point()
            }
        })
        .collect()
}
