//! The notes under the bench's table: the limit at each size, bloomlab against the fastest
//! peer, each design's fastest absent query beside its rate, and how the figures were taken.

use super::placement::placements;
use super::{BenchConfig, BenchRow, NO_BLOCKED_PEER, contenders};
use crate::pipeline::timing::LineRate;

/// The reader's summary: the limit at each size, and for each design a peer implements,
/// bloomlab's best time over the fastest peer's.
pub(super) fn notes(rows: &[BenchRow], limits: &[LineRate], config: &BenchConfig) -> Vec<String> {
    let full = config.full;
    let mut notes: Vec<String> = limits
        .iter()
        .map(|l| {
            format!(
                "limit in a {}-byte buffer: a dependent random line read {:.1} ns, independent (prefetched) {:.1} ns",
                l.bytes, l.dependent_ns, l.independent_ns
            )
        })
        .collect();
    for row in rows.iter().filter(|r| r.peer == "bloomlab" && r.batched) {
        if let Some(ratio) = row.ratio_to_fastest_peer {
            notes.push(format!(
                "{} {} {} k={}: bloomlab on {} batched {:.2}x the fastest peer, {:.2}x the limit",
                row.structure, row.operation, row.size, row.k, row.hash, ratio, row.ratio_to_limit
            ));
        }
    }
    notes.extend(design_rates(rows));
    let blocked = crate::structures::blocked::STRUCTURE.name;
    if rows.iter().any(|r| r.structure == blocked) {
        notes.push(NO_BLOCKED_PEER.into());
    }
    let hashes = |name: &str| rows.iter().any(|r| r.peer == "bloomlab" && r.hash == name);
    if hashes("multiply-shift") && hashes("double-hashing") {
        notes.push("multiply-shift computes k independent functions (the essay's hash: per probe a multiplication, and a second one unless m is a power of two); double-hashing derives the k from one pair per key, as fastbloom does: like against like".into());
    }
    notes.push("CPU time of the bench thread; medians of the passes, min and max beside. The machine's other load still moves them: compare rows within one run".into());
    if rows.iter().any(|r| placements(r.m, config.passes) > 1) {
        notes.push("in cache each pass times its own copy of the filter (its own allocation), since where a filter lies can move an in-cache insert by up to 2x: a max far above the median may be one placement's".into());
    }
    if !full {
        for contender in contenders() {
            if let Some(why) = contender.in_cache_only {
                let peer = contender.peer;
                notes.push(format!("{peer} ({why}) is timed out of cache with --full"));
            }
        }
    }
    notes
}

/// For each size, k and design, bloomlab's fastest batched absent query beside the rate it
/// measured: what a faster design costs in accuracy at the same bits per key.
fn design_rates(rows: &[BenchRow]) -> Vec<String> {
    let absent = |r: &&BenchRow| r.peer == "bloomlab" && r.batched && r.operation == "absent";
    let mut notes = Vec::new();
    for row in rows.iter().filter(absent) {
        let same =
            |r: &&BenchRow| (&r.structure, &r.size, r.k) == (&row.structure, &row.size, row.k);
        let fastest = rows
            .iter()
            .filter(absent)
            .filter(same)
            .min_by(|a, b| a.ns_per_key.total_cmp(&b.ns_per_key));
        if fastest.is_some_and(|f| std::ptr::eq(f, row)) {
            notes.push(format!(
                "{} {} k={}: {:.2} ns per absent query batched ({}) at a rate of {:.3}%",
                row.structure,
                row.size,
                row.k,
                row.ns_per_key,
                row.hash,
                100.0 * row.fpr_measured
            ));
        }
    }
    notes
}
