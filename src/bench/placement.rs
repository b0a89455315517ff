//! How many copies of a filter the bench times its passes on.

/// The bytes a contender's copies may take together ([`placements`]).
pub const PLACEMENT_BUDGET_BYTES: u64 = 64 << 20;

/// How many copies of a filter of m bits to time `rounds` passes on: one per pass while they
/// fit in [`PLACEMENT_BUDGET_BYTES`] (every in-cache filter), else one. Where a filter's words
/// lie moves its in-cache insert time by up to 2x on some machines (docs/PERFORMANCE.md), so a run
/// that timed one copy would report one placement's time; over a copy per pass the median is
/// the typical placement's and the spread shows the rest.
pub fn placements(m: u64, rounds: u32) -> usize {
    let rounds = rounds.max(1) as u64;
    if (m / 8).saturating_mul(rounds) <= PLACEMENT_BUDGET_BYTES {
        rounds as usize
    } else {
        1
    }
}
