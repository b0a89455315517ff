//! How a query tests its k probes: in groups, exiting after a group that fails. Shared by
//! the classic filter's scalar and vector paths and the blocked designs.

use std::ops::Range;

/// Probes a query tests between exits ([`every_group`]).
pub(crate) const PROBE_GROUP: usize = 4;

/// True when `set(group)` holds for every group of probes `0..k`, [`PROBE_GROUP`] probes to a
/// group (the last one shorter): a query tests a group without a branch, a constant length
/// that unrolls, and exits after each group that fails. An absent key at half fill leaves the
/// first group 15 times in 16, a well-predicted branch, having computed 4 probes rather than
/// k, and a group's loads are independent, so their misses overlap.
#[inline(always)]
pub(crate) fn every_group(k: usize, set: impl Fn(Range<usize>) -> bool) -> bool {
    let mut start = 0;
    while start + PROBE_GROUP <= k {
        if !set(start..start + PROBE_GROUP) {
            return false;
        }
        start += PROBE_GROUP;
    }
    set(start..k)
}
