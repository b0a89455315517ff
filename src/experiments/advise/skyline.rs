//! The Pareto skyline of memory against cost, and the choice among the configurations:
//! those whose central cost is within a practical tolerance of the best one's are tied
//! (equivalent for the user), and among them the least memory is chosen, so that where the
//! costs cannot be told apart the smaller filter is chosen (an expensive `t_w` would
//! otherwise drift to the most precise configuration the space allows).

use super::cost::Bounded;

/// What the choice needs of a candidate: its memory and its cost with the interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub memory_bytes: u64,
    pub cost: Bounded,
}

/// Within how many ns of the best cost a configuration is tied with it (`--tolerance`):
/// `max(share · best, ns)`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    /// Share of the best cost.
    pub share: f64,
    /// ns.
    pub ns: f64,
}

impl Default for Tolerance {
    /// 1% of the best cost, or 1 ns, whichever is larger.
    fn default() -> Self {
        Tolerance {
            share: 0.01,
            ns: 1.0,
        }
    }
}

impl Tolerance {
    /// The tolerance in ns at a best cost of `best` ns.
    pub fn width(self, best: f64) -> f64 {
        (self.share * best).max(self.ns)
    }

    /// How the tolerance was set, for the decision's lines.
    pub fn describe(self) -> String {
        match (self.share > 0.0, self.ns > 0.0) {
            (true, true) => format!(
                "{}% of the best cost or {} ns, the larger",
                100.0 * self.share,
                self.ns
            ),
            (true, false) => format!("{}% of the best cost", 100.0 * self.share),
            _ => format!("{} ns", self.ns),
        }
    }
}

/// `on[i]`: no other point has at most the memory and at most the cost (central values),
/// one of them strictly less.
pub fn skyline(points: &[Point]) -> Vec<bool> {
    let dominates = |a: &Point, b: &Point| {
        a.memory_bytes <= b.memory_bytes
            && a.cost.value <= b.cost.value
            && (a.memory_bytes < b.memory_bytes || a.cost.value < b.cost.value)
    };
    points
        .iter()
        .map(|p| !points.iter().any(|q| dominates(q, p)))
        .collect()
}

/// The index of the lowest central cost (the first of equals); `None` for no points.
pub fn best(points: &[Point]) -> Option<usize> {
    (0..points.len()).min_by(|&a, &b| points[a].cost.value.total_cmp(&points[b].cost.value))
}

/// The choice: the best point, the points tied with it (central cost at most
/// `best + width`, the best among them) and the chosen one, the least memory among the
/// tied, then the first in the order given (a fixed order, never the noise of a cost).
#[derive(Clone, Debug, PartialEq)]
pub struct Choice {
    pub best: usize,
    pub tied: Vec<usize>,
    pub chosen: usize,
    /// The tolerance in ns at the best cost.
    pub width: f64,
    /// The points of at most the chosen one's memory whose cost interval holds the limit
    /// `best + width`: within their noise each may be tied or not, so that another run may
    /// choose otherwise.
    pub noise: Vec<usize>,
}

/// The choice among `points` at `tolerance`; `None` for no points.
pub fn choose(points: &[Point], tolerance: Tolerance) -> Option<Choice> {
    let best = best(points)?;
    let width = tolerance.width(points[best].cost.value);
    let limit = points[best].cost.value + width;
    let tied: Vec<usize> = (0..points.len())
        .filter(|&i| points[i].cost.value <= limit)
        .collect();
    let chosen = *tied.iter().min_by_key(|&&i| (points[i].memory_bytes, i))?;
    let choice = Choice {
        best,
        tied,
        chosen,
        width,
        noise: Vec::new(),
    };
    Some(choice.within_intervals(points))
}

impl Choice {
    /// The choice with its [`Choice::noise`] taken from the intervals of `points` (the same
    /// central costs, their intervals widened since the choice was made).
    pub fn within_intervals(self, points: &[Point]) -> Choice {
        let limit = points[self.best].cost.value + self.width;
        let noise = (0..points.len())
            .filter(|&i| points[i].memory_bytes <= points[self.chosen].memory_bytes)
            .filter(|&i| points[i].cost.low <= limit && limit < points[i].cost.high)
            .collect();
        Choice { noise, ..self }
    }
}

/// The plateau of one structure's points `(bits per key, tied)`: the fewest bits per key
/// from which, at every bits per key measured with as many or more, some point is tied
/// (of points at one memory, fewer hashes among them, the user takes the best); `None` when
/// none at the most bits per key is tied (or there are none).
pub fn plateau(points: &[(f64, bool)]) -> Option<f64> {
    let mut sorted = points.to_vec();
    sorted.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut levels: Vec<(f64, bool)> = Vec::new();
    for (bits, tied) in sorted {
        match levels.last_mut() {
            Some(level) if level.0 == bits => level.1 |= tied,
            _ => levels.push((bits, tied)),
        }
    }
    levels
        .iter()
        .take_while(|(_, tied)| *tied)
        .last()
        .map(|&(bits, _)| bits)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(memory_bytes: u64, value: f64, half: f64) -> Point {
        Point {
            memory_bytes,
            cost: Bounded {
                value,
                low: value - half,
                high: value + half,
            },
        }
    }

    #[test]
    fn skyline_keeps_exactly_the_undominated() {
        let points = [
            point(0, 100.0, 0.0), // no filter: least memory
            point(10, 20.0, 1.0),
            point(20, 30.0, 1.0), // more memory and dearer than the one before
            point(30, 10.0, 1.0),
            point(30, 12.0, 1.0), // same memory, dearer
        ];
        assert_eq!(skyline(&points), [true, true, false, true, false]);
    }

    #[test]
    fn choice_is_least_memory_among_the_tied() {
        // Best is 10 (40 bytes); within 2 ns: 11.5 (20 bytes), chosen; 13 is not tied.
        let points = [
            point(40, 10.0, 1.0),
            point(20, 11.5, 1.0),
            point(10, 13.0, 0.5),
        ];
        let two = Tolerance {
            share: 0.0,
            ns: 2.0,
        };
        let choice = choose(&points, two).unwrap();
        assert_eq!((choice.best, choice.chosen), (0, 1));
        assert_eq!(choice.tied, [0, 1]);
        // The limit 12 ns lies within the chosen one's interval [10.5, 12.5]: within noise;
        // not within [12.5, 13.5] of the point of less memory.
        assert_eq!(choice.noise, [1]);
        // At equal memory the first in the order given, whatever the noise in their costs.
        let equal = [point(20, 10.0, 1.0), point(20, 9.0, 1.0)];
        assert_eq!(choose(&equal, two).unwrap().chosen, 0);
        // The default: 1% of 10 ns is below 1 ns, so 1 ns: nothing else is tied.
        assert_eq!(choose(&points, Tolerance::default()).unwrap().chosen, 0);
        assert_eq!(choose(&[], two), None);
        // 1% of a 5000 ns cost is 50 ns.
        assert_eq!(Tolerance::default().width(5000.0), 50.0);
    }

    /// The end-to-end run widens every interval after the choice: the noise is then read
    /// from the widened intervals, the choice itself (central costs) unchanged.
    #[test]
    fn the_noise_is_read_from_the_intervals_as_widened() {
        let points = [point(40, 10.0, 0.5), point(20, 13.0, 0.5)];
        let choice = choose(&points, Tolerance::default()).unwrap();
        assert_eq!((choice.chosen, choice.noise.clone()), (0, vec![]));
        let widened = [point(40, 10.0, 0.5), point(20, 13.0, 2.5)];
        let choice = choice.within_intervals(&widened);
        assert_eq!((choice.chosen, choice.noise), (0, vec![1]));
    }

    #[test]
    fn no_filter_wins_a_tie() {
        let points = [point(0, 20.0, 0.0), point(1000, 19.5, 1.0)];
        assert_eq!(choose(&points, Tolerance::default()).unwrap().chosen, 0);
        let strict = Tolerance {
            share: 0.0,
            ns: 0.1,
        };
        assert_eq!(choose(&points, strict).unwrap().chosen, 1);
    }

    #[test]
    fn the_plateau_starts_where_every_larger_point_is_tied() {
        assert_eq!(
            plateau(&[(8.0, false), (16.0, true), (12.0, true)]),
            Some(12.0)
        );
        // A point out of the tolerance above the plateau's start ends it there.
        assert_eq!(
            plateau(&[(8.0, true), (12.0, false), (16.0, true)]),
            Some(16.0)
        );
        assert_eq!(plateau(&[(8.0, true), (16.0, false)]), None);
        // At one memory, one tied point (the best k) ties the level.
        assert_eq!(
            plateau(&[(8.0, false), (8.0, true), (16.0, true)]),
            Some(8.0)
        );
        assert_eq!(plateau(&[]), None);
    }

    /// The paper's regimes, on fixed times: a fast filter of few bits at 1% against a slow
    /// one of many bits at 10^-6 (σ = 0.9). At t_w = 20 ns the fast one costs 5.2 ns a query
    /// and the precise one 22 ns; at 1 ms the 1% of wasted work (9,000 ns) outweighs 17 ns of
    /// lookup and the precise one wins.
    #[test]
    fn cheap_work_picks_the_fast_filter_and_dear_work_the_precise_one() {
        use super::super::cost::cost_at;
        let choose_at = |t_w: f64| {
            let fast = cost_at(0.9, 0.01, 3.0, 3.0, t_w);
            let precise = cost_at(0.9, 1e-6, 20.0, 20.0, t_w);
            let points = [point(10_000, fast, 0.5), point(30_000, precise, 0.5)];
            choose(&points, Tolerance::default()).map(|c| c.chosen)
        };
        assert_eq!(choose_at(20.0), Some(0));
        assert_eq!(choose_at(1e6), Some(1));
    }
}
