//! The essay's claims about the Bloom variants that answer the overfill cliff: the scalable
//! filter (Almeida, Baquero, Preguiça and Hutchison 2007) and its building block, the
//! partitioned filter.

use super::{ClaimRow, Estimate, Sample, averaged_ratio_to_constant, judge, run};
use crate::pipeline::measurement::{CONFIDENCE, Measurement};
use crate::report;
use crate::suite::claims::Band;
use crate::suite::summary::Run;

/// The overfill row of factor s at k = 7: its index, its measurement and its record's
/// `ratio_to_design` with interval. Read from the record's fields rather than as a typed
/// row: a structure's row carries NaN (no uniformity diagnostic), which JSON keeps as null.
fn row_at(runs: &[Run], name: &str, s: f64) -> Result<(usize, Measurement, [f64; 4]), String> {
    let run = run(runs, name)?;
    let field = |r: &serde_json::Map<String, serde_json::Value>, key: &str| {
        r.get(key)
            .and_then(serde_json::Value::as_f64)
            .unwrap_or(f64::NAN)
    };
    let records = run.outcome.table.records.iter();
    records
        .zip(&run.outcome.measurements)
        .enumerate()
        .find(|(_, (r, m))| m.k == 7 && (field(r, "overfill_factor") - s).abs() < 1e-9)
        .map(|(i, (r, m))| {
            let keys = [
                "ratio_to_design",
                "ratio_to_design_low",
                "ratio_to_design_high",
            ];
            let [value, low, high] = keys.map(|key| field(r, key));
            (i, m.clone(), [value, low, high, field(r, "fpr_design")])
        })
        .ok_or_else(|| format!("{name}: no row at s = {s}, k = 7"))
}

/// "The scalable variant exists for exactly this": at 8 times its first sub-filter's keys its
/// rate over its bound `P0/(1 - r)` (Almeida et al. 2007), which must be at most 1.
pub(super) fn scalable_promise(runs: &[Run]) -> ClaimRow {
    let name = "overfill-scalable";
    let measured = row_at(runs, name, 8.0).map(|(i, m, _)| {
        let bound =
            crate::structures::scalable::Schedule::of(m.m, m.k).map_or(f64::NAN, |s| s.bound());
        let ratio = averaged_ratio_to_constant(
            m.false_positives,
            m.queries,
            m.fpr_between_filter_variance,
            bound,
            CONFIDENCE,
        );
        Estimate {
            value: ratio.value,
            low: ratio.low,
            high: ratio.high,
            log: true,
            sample: Sample::Filters(1, m.queries),
            basis: format!(
                "measured rate over the bound P0/(1-r) = {} of its growth schedule",
                report::percent(bound)
            ),
            source: format!("{name} row {} (s = 8, k = 7)", i + 1),
        }
    });
    let band = Band {
        low: 0.0,
        high: 1.0,
        words: "at most 1: the rate stays under its bound".into(),
    };
    judge(
        "the scalable variant keeps its promise at 8 times the keys",
        band,
        measured,
    )
}

/// "... where the plain one falls off the cliff": the partitioned filter (the scalable one's
/// building block, not growing) at 4 times the keys, over its design rate, at least 10.
pub(super) fn partitioned_cliff(runs: &[Run]) -> ClaimRow {
    let name = "overfill-partitioned";
    let measured = row_at(runs, name, 4.0).map(|(i, m, [value, low, high, design])| Estimate {
        value,
        low,
        high,
        log: true,
        sample: Sample::Filters(1, m.queries),
        basis: format!(
            "measured rate over the exact rate at the design n ({})",
            report::percent(design)
        ),
        source: format!("{name} row {} (s = 4, k = 7)", i + 1),
    });
    let band = Band {
        low: 10.0,
        high: f64::INFINITY,
        words: "at least 10 times the design rate".into(),
    };
    judge(
        "where the plain one falls off the cliff (partitioned, 4 times the keys)",
        band,
        measured,
    )
}
