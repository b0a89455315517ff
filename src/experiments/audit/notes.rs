//! What the audit says in words and draws: a verdict per filter with its interval, the upper
//! bound and the excess the run could detect; refusals, skipped adapters, unresolved and zero
//! rows; the `--fail-above` checks; one panel per configured rate.

use super::{AuditPlan, AuditRow, AuditRun, FLAG_Z, MIN_EXPECTED_FALSE_POSITIVES};
use crate::experiments::{distinct, grouped};
use crate::plot::{Axis, Colour, Mark, Panel, Plate, Series, extent};
use crate::report::{percent, times};
use crate::stats::{DETECTION_LEVEL, DETECTION_POWER};

/// How notes and the plate name a row's filter: the library, with a program's key form.
pub fn label(row: &AuditRow) -> String {
    match row.key_form {
        Some(form) => format!("{} ({form} keys)", row.library),
        None => row.library.clone(),
    }
}

/// `0.98x [0.92x, 1.04x]`.
fn ratio_text(row: &AuditRow) -> String {
    format!(
        "{} [{}, {}]",
        times(row.ratio_configured),
        times(row.ratio_configured_low),
        times(row.ratio_configured_high)
    )
}

/// A filter's verdict at its planned n, and its rate at the largest load.
fn verdict(own: &[&AuditRow]) -> Option<String> {
    let at_n = own.iter().find(|r| r.load <= 1.0);
    let last = own.last()?;
    let mut text = match at_n {
        Some(r) => {
            let m = &r.measurement;
            let measured = format!(
                "{} [{}, {}], {} the configured",
                percent(m.fpr_measured),
                percent(m.ci_low),
                percent(m.ci_high),
                ratio_text(r)
            );
            let (name, load, z) = (label(r), r.load, r.z_configured);
            if r.false_negatives > 0 || r.far_below {
                let fault = match r.false_negatives {
                    0 => "FAR BELOW its promise".to_string(),
                    lost => format!("LOSES KEYS ({lost} of {} asked)", r.inserted_asked),
                };
                format!("{name}: {fault} at {load:.2}n, a broken filter: {measured}")
            } else if r.above_configured {
                format!("{name}: ABOVE its promise at {load:.2}n (z {z:.1}): {measured}")
            } else if m.ci_low > r.fpr_configured {
                format!(
                    "{name}: above its promise at {load:.2}n, under the flag (z {z:.1} <= {FLAG_Z}): {measured}"
                )
            } else {
                format!(
                    "{name}: keeps its promise at {load:.2}n: {measured}; the rate is at most {} (95% upper bound), and an excess of {} over the promise would have been detected",
                    percent(m.ci_high),
                    percent(r.detectable_excess)
                )
            }
        }
        None => format!("{}: no row at a load of at most 1", label(last)),
    };
    if last.load > 1.0 {
        text.push_str(&format!(
            "; at {:.2}n {}, {} the promise",
            last.load,
            percent(last.measurement.fpr_measured),
            ratio_text(last)
        ));
    }
    Some(text)
}

/// The reader's summary: per configured rate, the power of its queries and each filter's
/// verdict; then refusals, skipped adapters, and every unresolved or zero row in words.
pub fn notes(plan: &AuditPlan, audit: &AuditRun) -> Vec<String> {
    let rows = &audit.rows;
    let mut notes = Vec::new();
    for (fpr, group) in grouped(rows, |r| r.fpr_configured) {
        let first = group[0];
        notes.push(format!(
            "configured {} for n = {}: {} queries per row detect an excess of {} or more over it (exact one-sided binomial test at level {DETECTION_LEVEL}, power {DETECTION_POWER})",
            percent(fpr),
            first.n_planned,
            first.measurement.queries,
            percent(first.detectable_excess)
        ));
        for (_, own) in grouped(group, |r| label(r)) {
            notes.extend(verdict(&own));
        }
    }
    for refusal in &audit.refusals {
        notes.push(format!(
            "{} at {}: refused at {:.2}n (no rows from there on): {}",
            refusal.label,
            percent(refusal.fpr),
            refusal.load,
            refusal.message
        ));
    }
    for missing in &plan.skipped {
        notes.push(format!(
            "skipped adapter {}: {}",
            missing.name, missing.skipped.reason
        ));
    }
    notes.extend(small_counts(rows));
    let unseeded = distinct(rows.iter().filter(|r| r.seeded == Some(false)).map(label));
    if !unseeded.is_empty() {
        notes.push(format!(
            "not seeded: {} (its hash is fixed: runs repeat exactly and --hash-seed changes nothing)",
            unseeded.join(", ")
        ));
    }
    notes
}

/// Rows without a false positive, and the first unresolved row.
fn small_counts(rows: &[AuditRow]) -> Vec<String> {
    let mut notes = Vec::new();
    for r in rows {
        let m = &r.measurement;
        if m.false_positives == 0 {
            notes.push(format!(
                "{} at {:.2}n, configured {}: no false positive in {} queries; the rate is below {} (95% upper bound), not 0",
                label(r),
                r.load,
                percent(r.fpr_configured),
                m.queries,
                percent(m.ci_high)
            ));
        }
    }
    if let Some(r) = rows.iter().find(|r| !r.resolved) {
        notes.push(format!(
            "unresolved: {} queries at {} expect {:.0} false positives (< {MIN_EXPECTED_FALSE_POSITIVES}); raise --queries to at least {:.0}",
            r.measurement.queries,
            percent(r.fpr_configured),
            r.expected_false_positives,
            (MIN_EXPECTED_FALSE_POSITIVES / r.fpr_configured).ceil()
        ));
    }
    notes
}

/// One panel per configured rate: each filter's measured rate (with its interval) against
/// the load, its own predicted rate dashed where known, and the promise in black.
pub fn plate(rows: &[AuditRow]) -> Plate {
    let panels = grouped(rows, |r| r.fpr_configured)
        .into_iter()
        .map(|(fpr, group)| {
            let span = extent(group.iter().map(|r| r.load));
            let mut series = vec![Series::level(
                Some(format!("configured {}", percent(fpr))),
                Colour::Black,
                Mark::Line(2),
                fpr,
                span,
            )];
            let names = grouped(&group, |r| label(r));
            for (i, (name, own)) in names.iter().enumerate() {
                let c = Colour::Palette(i);
                // Filters configured alike sit on the same points: spread them a little in x.
                let offset =
                    (i as f64 - (names.len() as f64 - 1.0) / 2.0) * (span.1 - span.0) * 0.008;
                if own.iter().all(|r| r.measurement.fpr_exact.is_finite()) {
                    series.push(Series::new(
                        None,
                        c,
                        Mark::Dashed(1),
                        own.iter()
                            .map(|r| (r.load + offset, r.measurement.fpr_exact)),
                    ));
                }
                series.push(Series::measured(
                    Some(format!("{name}: measured, dashed predicted")),
                    c,
                    own.iter().map(|r| (r.load + offset, &r.measurement)),
                ));
            }
            Panel {
                title: format!(
                    "Configured {} for n = {}: measured against the promise, {} queries",
                    percent(fpr),
                    group[0].n_planned,
                    group[0].measurement.queries
                ),
                x: Axis::linear("load: keys inserted / n planned"),
                y: Axis::rate(),
                series,
            }
        })
        .collect();
    Plate { panels }
}
