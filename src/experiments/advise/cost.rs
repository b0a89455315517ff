//! The cost of a query behind a filter (Lang, Neumann, Kemper and Boncz, "Performance-Optimal
//! Filtering: Bloom Overtakes Cuckoo at High Throughput", PVLDB 12(5), 2019, §2): with a share
//! σ of negative queries, an absent lookup of `t_a`, a present one of `t_p`, a false-positive
//! rate ε and work `t_w` per query that passes the filter,
//!
//! `cost = σ·t_a + (1 - σ)·t_p + (σ·ε + (1 - σ))·t_w`, against `t_w` without a filter.
//!
//! The cost rises with each of `t_a`, `t_p`, ε and `t_w`, so the box of their intervals maps
//! onto `[cost(lows), cost(highs)]`: the cost interval covers whenever every input interval
//! does, and by Bonferroni with at least `1 - Σ αᵢ` when input i misses with at most αᵢ.

use crate::pipeline::timing::Passes;

/// Joint confidence of every cost interval.
pub const COST_CONFIDENCE: f64 = 0.95;

/// Inputs given an interval each: ε, `t_a`, `t_p` (and `t_w` where it is measured).
pub const INTERVAL_INPUTS: u32 = 4;

/// Confidence of each input's interval, so that all hold at once with [`COST_CONFIDENCE`]
/// (Bonferroni): `1 - 0.05/4 = 0.9875`.
pub const INPUT_CONFIDENCE: f64 = 1.0 - (1.0 - COST_CONFIDENCE) / INTERVAL_INPUTS as f64;

/// A value with its interval `low <= value <= high`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bounded {
    pub value: f64,
    pub low: f64,
    pub high: f64,
}

impl Bounded {
    /// A value known exactly.
    pub fn exact(value: f64) -> Self {
        Bounded {
            value,
            low: value,
            high: value,
        }
    }

    /// The interval widened by `factor` at each end: `[low / factor, high · factor]`.
    pub fn widened(self, factor: f64) -> Bounded {
        Bounded {
            low: self.low / factor,
            high: self.high * factor,
            ..self
        }
    }
}

/// The factor `e^{z·s}` by which a time measured at one moment of a run may differ at
/// another: `s` the standard deviation of the logs of passes of the work spread over the
/// run, `z` the two-sided normal quantile of [`INPUT_CONFIDENCE`]; 1 for fewer than three.
pub fn drift(ns: &[f64]) -> f64 {
    if ns.len() < 3 {
        return 1.0;
    }
    let logs: Vec<f64> = ns.iter().map(|x| x.ln()).collect();
    let mean = logs.iter().sum::<f64>() / logs.len() as f64;
    let variance = logs.iter().map(|l| (l - mean).powi(2)).sum::<f64>() / (logs.len() - 1) as f64;
    let z = crate::stats::normal_quantile(1.0 - (1.0 - INPUT_CONFIDENCE) / 2.0);
    (z * variance.sqrt()).exp()
}

/// What a query costs behind one configuration, each input with its interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CostInputs {
    /// σ, the share of queries whose key is absent (exact: the workload's).
    pub negative_share: f64,
    /// ε, the false-positive rate.
    pub fpr: Bounded,
    /// ns per absent lookup.
    pub t_absent: Bounded,
    /// ns per present lookup.
    pub t_present: Bounded,
    /// ns of work per query that passes.
    pub t_work: Bounded,
}

/// `σ·t_a + (1 - σ)·t_p + (σ·ε + (1 - σ))·t_w` at the given inputs.
pub fn cost_at(sigma: f64, fpr: f64, t_absent: f64, t_present: f64, t_work: f64) -> f64 {
    sigma * t_absent + (1.0 - sigma) * t_present + (sigma * fpr + (1.0 - sigma)) * t_work
}

/// The cost with its interval: the formula at the values, at every low and at every high.
pub fn cost(inputs: &CostInputs) -> Bounded {
    let s = inputs.negative_share;
    let at = |pick: fn(&Bounded) -> f64| {
        cost_at(
            s,
            pick(&inputs.fpr),
            pick(&inputs.t_absent),
            pick(&inputs.t_present),
            pick(&inputs.t_work),
        )
    };
    Bounded {
        value: at(|b| b.value),
        low: at(|b| b.low),
        high: at(|b| b.high),
    }
}

/// The cost without a filter: every query does the work.
pub fn cost_without_filter(t_work: Bounded) -> Bounded {
    t_work
}

/// `t_w / cost`: how many times faster the workload runs behind the filter.
pub fn speedup(t_work: f64, cost: f64) -> f64 {
    t_work / cost
}

/// Passes per timed figure: enough that an order-statistic interval for the median holds
/// with [`INPUT_CONFIDENCE`] without the fastest and slowest few ([`median_interval`]).
pub const TIMED_PASSES: u32 = 20;

/// The median of the passes `ns` with its distribution-free interval at `confidence`
/// ([`Passes::within`]).
pub fn median_interval(ns: Vec<f64>, confidence: f64) -> Bounded {
    let passes = Passes::within(ns, confidence);
    Bounded {
        value: passes.median,
        low: passes.low,
        high: passes.high,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cost_is_the_papers_formula_and_no_filter_is_t_w() {
        // σ = 0.9, t_a = 10, t_p = 20, ε = 0.01, t_w = 100:
        // 9 + 2 + (0.009 + 0.1)·100 = 21.9.
        let c = cost_at(0.9, 0.01, 10.0, 20.0, 100.0);
        assert!((c - 21.9).abs() < 1e-12, "{c}");
        // A filter that answers every query "present" at no cost does all the work.
        assert_eq!(cost_at(0.9, 1.0, 0.0, 0.0, 100.0), 100.0);
        assert_eq!(cost_without_filter(Bounded::exact(7.0)).value, 7.0);
    }

    /// Passes of e^{±0.01} about 100 have logs of standard deviation 0.01 (n - 1 = 3):
    /// z = 2.50 at 98.75% widens by e^{0.025}.
    #[test]
    fn drift_widens_by_the_spread_of_the_logs() {
        let e = 0.01f64.exp();
        let f = drift(&[100.0 * e, 100.0 / e, 100.0 * e, 100.0 / e]);
        let s = (4.0 * 0.01f64.powi(2) / 3.0).sqrt();
        assert!((f.ln() - 2.4977 * s).abs() < 1e-4, "{f}");
        assert_eq!(drift(&[1.0, 2.0]), 1.0);
        let b = Bounded::exact(10.0).widened(2.0);
        assert_eq!((b.low, b.value, b.high), (5.0, 10.0, 20.0));
    }

    #[test]
    fn median_interval_drops_the_extremes_it_can_spare() {
        // 20 passes: P(X <= 4) = 0.0059 <= 0.00625 and P(X <= 5) = 0.0207: j = 5.
        let ns: Vec<f64> = (1..=20).map(f64::from).collect();
        let b = median_interval(ns, INPUT_CONFIDENCE);
        assert_eq!((b.low, b.value, b.high), (5.0, 11.0, 16.0));
        assert!(Passes::coverage(TIMED_PASSES, INPUT_CONFIDENCE) >= INPUT_CONFIDENCE);
        // Three passes can only bracket the median by their extremes (coverage 0.75).
        let b = median_interval(vec![3.0, 1.0, 2.0], INPUT_CONFIDENCE);
        assert_eq!((b.low, b.value, b.high), (1.0, 2.0, 3.0));
    }
}
