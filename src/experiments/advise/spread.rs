//! The contenders' lookups in the workload's shape timed in rounds spread over the run: one
//! contender after another within a round, so that a burst of the host's memory traffic,
//! which lasts longer than one contender's passes, slows each contender's passes in some
//! rounds rather than all of one contender's; each contender's median is then of passes
//! from every stretch of the rounds.

use super::cost::{Bounded, INPUT_CONFIDENCE, TIMED_PASSES, median_interval};
use super::measure::{Keyed, Lookups};
use super::steps::Steps;
use super::validate::{FilterPart, MODEL_FIRST, Probes, Work, queries};
use crate::error::Result;
use crate::pipeline::timing::{Passes, interleave};
use crate::structures::Filter;

/// A contender's lookups as the workload asks them ([`WorkloadShape`]).
pub struct Shaped {
    /// `t_a` and `t_p` beside the work.
    pub lookups: Lookups,
    /// ns per query of the lookups alone, in the workload's shape without the work: what
    /// they cost beside another work.
    pub alone_ns: f64,
}

/// The lookups in the workload's own shape: ns per query of the filter's part of the
/// workload ([`FilterPart`]: σ absent keys shuffled among present ones, a branch on each
/// answer, beside the work), over passes of at most `count` queries; then `t_a` and `t_p`
/// scaled alike so that `σ·t_a + (1 - σ)·t_p` is that time (at least 0), its interval the
/// median's ([`median_interval`]). Separate passes of absent and of present keys let
/// independent misses overlap and predict every branch; the workload does neither, and the
/// cost model prices the workload.
pub struct WorkloadShape {
    part: FilterPart,
    separate: Lookups,
    negative_share: f64,
    /// ns per query of each pass: of the part, and where it runs beside the work, of the
    /// lookups alone.
    ns: Vec<Vec<f64>>,
}

impl WorkloadShape {
    /// The part of `filter` at `t_w`, its passes still to be timed; `separate` are the
    /// lookups timed apart, whose ratio `t_a / t_p` the shape keeps.
    pub fn new(
        filter: &dyn Filter,
        keyed: &Keyed,
        (separate, negative_share): (Lookups, f64),
        (batched, t_w): (bool, f64),
        count: u64,
    ) -> Result<WorkloadShape> {
        let make = |count| {
            queries(
                keyed,
                negative_share,
                count,
                keyed.seed ^ 0x5EED,
                MODEL_FIRST,
            )
        };
        let part = FilterPart::new(filter, batched, t_w, (count, &make))?;
        let subjects = 1 + usize::from(part.beside_work());
        Ok(WorkloadShape {
            part,
            separate,
            negative_share,
            ns: vec![Vec::new(); subjects],
        })
    }

    /// A warming pass, then `passes` passes of the part (and of the lookups alone, where
    /// it runs beside the work) in turn.
    pub fn time(
        &mut self,
        filter: &dyn Filter,
        batched: bool,
        work: &mut Work,
        passes: u32,
    ) -> Result<()> {
        let part = &self.part;
        part.ns(filter, batched, work)?;
        let ns = interleave(passes, self.ns.len(), |i| match i {
            0 => part.ns(filter, batched, work),
            _ => part.alone(filter, batched),
        })?;
        self.ns
            .iter_mut()
            .zip(ns)
            .for_each(|(all, new)| all.extend(new));
        Ok(())
    }

    /// The lookups as the passes timed so far measured them.
    pub fn shaped(&self) -> Shaped {
        // The last subject's passes time the lookups alone (the only subject's, without work).
        let alone_ns = Passes::of(self.ns.last().cloned().unwrap_or_default()).median;
        let mixed = median_interval(self.ns[0].clone(), INPUT_CONFIDENCE);
        let (lookups, s) = (self.separate, self.negative_share);
        let separate = s * lookups.absent.value + (1.0 - s) * lookups.present.value;
        // The value scaled by each end of the workload's interval, so that the weighted sum
        // of the two is the workload's time with its interval.
        let scaled = |b: Bounded| Bounded {
            value: b.value * mixed.value.max(0.0) / separate,
            low: b.value * mixed.low.max(0.0) / separate,
            high: b.value * mixed.high.max(0.0) / separate,
        };
        let lookups = Lookups {
            absent: scaled(lookups.absent),
            present: scaled(lookups.present),
        };
        Shaped { lookups, alone_ns }
    }
}

/// Rounds the kept contenders' passes are spread over; [`TIMED_PASSES`] in all, each round
/// a warming pass and `TIMED_PASSES / ROUNDS` timed ones per contender.
pub const ROUNDS: u32 = 4;

/// The contenders whose shapes wait to be timed, by their index among the contenders.
#[derive(Default)]
pub struct Pending(Vec<(usize, WorkloadShape)>);

impl Pending {
    /// The contender at `index` (its filter kept) timed later, in the rounds.
    pub fn defer(&mut self, index: usize, shape: WorkloadShape) {
        self.0.push((index, shape));
    }

    /// Every deferred contender's shape timed in [`ROUNDS`] rounds (`filter(i)` the filter
    /// of the contender at index i), the work and memory probed after each round: each
    /// contender's lookups from all its passes, by its index.
    pub fn time<'f>(
        mut self,
        filter: impl Fn(usize) -> &'f dyn Filter,
        (batched, work): (bool, &mut Work),
        (probes, steps): (&mut Probes, &Steps),
    ) -> Result<Vec<(usize, Shaped)>> {
        if self.0.is_empty() {
            return Ok(Vec::new());
        }
        for round in 1..=ROUNDS {
            steps.show(format!(
                "advise: the contenders' lookups in the workload's shape, round {round} of {ROUNDS}"
            ));
            for (i, shape) in &mut self.0 {
                shape.time(filter(*i), batched, work, TIMED_PASSES / ROUNDS)?;
            }
            probes.take(work)?;
        }
        Ok(self
            .0
            .into_iter()
            .map(|(i, shape)| (i, shape.shaped()))
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::experiments::advise::measure::{self, Keyed};
    use crate::structures::{FilterKind, Spec};

    /// Beside a short work and alone behind a long one, the shaped lookups are those of a
    /// filter that was timed: positive and finite, `t_a` and `t_p` in the proportion of the
    /// separate passes.
    #[test]
    fn the_shaped_lookups_are_timed_beside_a_short_work_and_alone_behind_a_long_one() {
        let keyed = Keyed {
            spec: Spec::shape(FilterKind::named("classic").unwrap(), 20_000, 3),
            n: 2000,
            seed: 7,
            keys: crate::keys::KeySpec::default(),
        };
        let mut filter = super::super::measure::filled(&keyed).unwrap();
        let separate =
            super::super::measure::lookups(&mut *filter, &keyed, false, 2000, 3).unwrap();
        for t_w in [20.0, 1e5] {
            let mut work = Work::Spin {
                iterations: 2,
                last: 0,
            };
            let mut shape =
                WorkloadShape::new(&*filter, &keyed, (separate, 0.9), (false, t_w), 2000).unwrap();
            shape.time(&*filter, false, &mut work, 3).unwrap();
            let shaped = shape.shaped();
            let (a, p) = (shaped.lookups.absent, shaped.lookups.present);
            assert!(
                a.value > 0.0 && a.value.is_finite() && shaped.alone_ns > 0.0,
                "{t_w}"
            );
            assert!(a.low <= a.value && a.value <= a.high);
            let ratio = |x: f64, y: f64| x / y;
            let expected = ratio(separate.absent.value, separate.present.value);
            assert!((ratio(a.value, p.value) - expected).abs() < 1e-9 * expected);
        }
    }

    /// Each deferred contender is timed and answered by its index; the work and the memory
    /// are probed after each of the rounds.
    #[test]
    fn every_deferred_contender_is_timed_in_every_round() {
        let keyed = |m| Keyed {
            spec: Spec::shape(FilterKind::named("classic").unwrap(), m, 3),
            n: 2000,
            seed: 7,
            keys: crate::keys::KeySpec::default(),
        };
        let (a, b) = (keyed(20_000), keyed(40_000));
        let mut filters = [measure::filled(&a).unwrap(), measure::filled(&b).unwrap()];
        let mut pending = Pending::default();
        for (i, keyed) in [a, b].iter().enumerate() {
            let separate = measure::lookups(&mut *filters[i], keyed, false, 2000, 3).unwrap();
            let shape =
                WorkloadShape::new(&*filters[i], keyed, (separate, 0.9), (false, 20.0), 2000);
            pending.defer(3 * i + 1, shape.unwrap());
        }
        let mut work = Work::Spin {
            iterations: 2,
            last: 0,
        };
        let mut probes = Probes::new(20.0);
        probes.watch_memory(1 << 16).unwrap();
        let bar = indicatif::ProgressBar::hidden();
        let steps = Steps::new(&bar, std::time::Instant::now());
        let filter = |i: usize| &*filters[i / 3];
        let shaped = pending.time(filter, (false, &mut work), (&mut probes, &steps));
        let shaped = shaped.unwrap();
        assert_eq!(shaped.iter().map(|(i, _)| *i).collect::<Vec<_>>(), [1, 4]);
        for (_, s) in &shaped {
            assert!(s.alone_ns > 0.0 && s.lookups.absent.value.is_finite());
        }
        assert_eq!((probes.ns.len(), probes.line_ns.len()), (4, 4));
    }
}
