//! The Pareto skyline of memory against cost, and the choice among the configurations: the
//! least memory among those whose cost interval overlaps the best one's, so that where the
//! measurements cannot tell costs apart the smaller filter is chosen (an expensive `t_w`
//! would otherwise drift to the most precise configuration the space allows).

use super::cost::Bounded;

/// What the choice needs of a candidate: its memory and its cost with the interval.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Point {
    pub memory_bytes: u64,
    pub cost: Bounded,
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

/// The chosen index: among the points whose cost interval overlaps the best one's, the least
/// memory, then the lower cost.
pub fn choose(points: &[Point]) -> Option<usize> {
    let best = &points[best(points)?];
    (0..points.len())
        .filter(|&i| points[i].cost.overlaps(&best.cost))
        .min_by(|&a, &b| {
            let (a, b) = (&points[a], &points[b]);
            a.memory_bytes
                .cmp(&b.memory_bytes)
                .then(a.cost.value.total_cmp(&b.cost.value))
        })
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
    fn choice_is_least_memory_among_overlapping_the_best() {
        // Best is 10 ± 1 (30 bytes); 11.5 ± 1 overlaps it with 20 bytes: chosen.
        let points = [
            point(40, 10.0, 1.0),
            point(20, 11.5, 1.0),
            point(10, 13.0, 0.5), // [12.5, 13.5] misses [9, 11]
        ];
        assert_eq!(best(&points), Some(0));
        assert_eq!(choose(&points), Some(1));
        // With tight intervals nothing overlaps: the best stands.
        let tight = [point(40, 10.0, 0.1), point(20, 11.5, 0.1)];
        assert_eq!(choose(&tight), Some(0));
        assert_eq!(choose(&[]), None);
    }

    #[test]
    fn no_filter_wins_a_tie_it_cannot_be_told_from() {
        let points = [point(0, 20.0, 0.0), point(1000, 19.5, 1.0)];
        assert_eq!(choose(&points), Some(0));
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
            choose(&[point(10_000, fast, 0.5), point(30_000, precise, 0.5)])
        };
        assert_eq!(choose_at(20.0), Some(0));
        assert_eq!(choose_at(1e6), Some(1));
    }
}
