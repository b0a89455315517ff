//! The audit both ways: a filter can break its contract by answering "present" too often (the
//! promise) or too seldom (keys it holds answered absent). At every load a sample of the
//! inserted keys is asked as well as the absent ones:
//!
//! - any inserted key answered absent is a false negative, which fails the run naming the key
//!   (a correct filter has none, so the check never fails one: its false-alarm rate is 0). With
//!   s keys asked uniformly at random from those inserted, a filter that loses a fraction d of
//!   them is caught with probability `1 - (1 - d)^s`: 99.995% at d = 0.1% for s = 10^4;
//! - a rate whose 95% upper bound is under a tenth of the promise ([`FAR_BELOW`]), or whose
//!   count is far below the rate its own reported fill gives (`fill^k`, the bits check's level
//!   one-sided), is flagged in a note: a filter that answers absent for keys it holds, or one
//!   sized far beyond its promise. `--fail-below R` fails a row at a load of at most 1 whose
//!   95% upper bound is under `R·ε`. Both are the exact one-sided tests of
//!   [`crate::stats::below_p_value`]: a filter whose rate is at least the bound is flagged
//!   with probability at most 2.5% per row.

use super::keys::{AuditKeys, Shown};
use super::{AuditRow, notes::label};
use crate::error::Result;
use crate::experiments::Verdict;
use crate::hash::splitmix64;
use crate::params::require;
use crate::pipeline::measurement::BITS_CHECK_ALPHA;
use crate::report::percent;
use crate::stats::{GUARD_ALPHA, above_p_value, below_p_value};
use crate::structures::{BATCH, Filter, for_each_batch};

/// Inserted keys asked per row (all of them when fewer were inserted).
pub const INSERTED_SAMPLE: u64 = 10_000;
/// A rate whose 95% upper bound is under this share of the promise is flagged.
pub const FAR_BELOW: f64 = 0.1;
/// Domain tag of the sample's counters, so that they are unrelated to the keys' own stream.
const SAMPLE_DOMAIN: u64 = 0x696e_7365_7274_6564;

/// What asking inserted keys found: how many were asked, how many answered absent, and the
/// first of those (its key and its place in the insertion order, from 1).
#[derive(Default)]
pub struct Asked {
    pub asked: u64,
    pub lost: u64,
    pub first_lost: Option<(Shown, u64)>,
}

/// The counters of the inserted keys asked when `inserted` are in: all of them up to
/// [`INSERTED_SAMPLE`], else that many drawn uniformly (with replacement) from `0..inserted`,
/// a pure function of the seed and `inserted` (so a row does not depend on the other loads).
fn sampled_counter(seed: u64, inserted: u64, i: u64) -> u64 {
    if inserted <= INSERTED_SAMPLE {
        return i;
    }
    let draw = splitmix64(splitmix64(seed ^ SAMPLE_DOMAIN).wrapping_add(i));
    ((u128::from(draw) * u128::from(inserted)) >> 64) as u64
}

/// Asks `filter` for the sample of the `inserted` keys of counters `0..inserted`.
pub fn ask_inserted(
    filter: &dyn Filter,
    keys: &AuditKeys,
    inserted: u64,
    seed: u64,
) -> Result<Asked> {
    let asked = inserted.min(INSERTED_SAMPLE);
    let counter = |i| sampled_counter(seed, inserted, i);
    let mut found = Asked {
        asked,
        ..Asked::default()
    };
    let mut answers = vec![false; BATCH];
    for_each_batch(0..asked, counter, |batch| {
        let answers = &mut answers[..batch.len()];
        keys.ask_inserted(filter, batch, answers)?;
        for (i, _) in answers.iter().enumerate().filter(|(_, present)| !**present) {
            found.lost += 1;
            if found.first_lost.is_none() {
                found.first_lost = Some((keys.shown(batch[i])?, batch[i] + 1));
            }
        }
        Ok(())
    })?;
    Ok(found)
}

/// Sets the row's two-way columns from what asking its inserted keys found.
pub fn mark(row: &mut AuditRow, asked: Asked) {
    row.inserted_asked = asked.asked;
    row.false_negatives = asked.lost;
    if let Some((key, number)) = asked.first_lost {
        match key {
            Shown::Int(key) => row.false_negative_key = Some(key),
            Shown::Text(text) => row.false_negative_text = Some(text),
        }
        row.false_negative_number = Some(number);
    }
    row.far_below = below_promise(row) || below_fill(row).is_some();
}

/// Whether the row's 95% upper bound is under [`FAR_BELOW`] times its promise. Not judged
/// when keys repeat: the filter then holds fewer distinct keys than its load, and a rate
/// below the promise is what it should have.
fn below_promise(row: &AuditRow) -> bool {
    let m = &row.measurement;
    m.duplicate_keys.unwrap_or(0) == 0
        && below_p_value(m.false_positives, m.queries, FAR_BELOW * row.fpr_configured) < GUARD_ALPHA
}

/// The rate the row's own reported fill gives (`fill^k`; the structure's own rate from its
/// bits where bloomlab reads them), when its count is far below it: the exact one-sided test
/// at the bits check's level.
fn below_fill(row: &AuditRow) -> Option<f64> {
    let m = &row.measurement;
    let from_fill = match m.fpr_from_fill.is_finite() {
        true => m.fpr_from_fill,
        false => m.fill_measured.powi(m.k as i32),
    };
    let known = from_fill.is_finite() && m.k > 0 && from_fill > 0.0;
    (known && below_p_value(m.false_positives, m.queries, from_fill) < BITS_CHECK_ALPHA)
        .then_some(from_fill)
}

/// `--fail-below R` is a share of the promise in (0, 1].
pub fn check_fail_below(ratio: Option<f64>) -> Result<Option<f64>> {
    if let Some(r) = ratio {
        let reason = "a share of the configured rate: a 95% upper bound under it fails";
        require("fail_below", r, r > 0.0 && r <= 1.0, reason, "(0, 1]")?;
    }
    Ok(ratio)
}

/// One failed check per row with a false negative, and with `--fail-below R` one check per
/// row at a load of at most 1 (the 95% upper bound against `R·ε`).
pub fn verdicts(rows: &[AuditRow], fail_below: Option<f64>) -> Vec<Verdict> {
    let mut verdicts: Vec<Verdict> = rows
        .iter()
        .filter(|r| r.false_negatives > 0)
        .map(|r| Verdict {
            check: format!("no false negatives: {}", lost_keys(r)),
            p_value: 0.0,
            alpha: GUARD_ALPHA,
        })
        .collect();
    verdicts.extend(fail_below.map_or(Vec::new(), |ratio| guard(rows, ratio, false, GUARD_ALPHA)));
    verdicts
}

/// `--fail-above R` (`above`) or `--fail-below R`: one check per row at a load of at most 1,
/// the row's 95% bound on that side (lower for above, upper for below) against `R·ε`. The
/// check's p-value is the exact one-sided tail at `R·ε` ([`above_p_value`],
/// [`below_p_value`]), its α `alpha`: at one side of the 95% interval, the tail is under α
/// exactly when the bound is past `R·ε`.
pub fn guard(rows: &[AuditRow], ratio: f64, above: bool, alpha: f64) -> Vec<Verdict> {
    let tail = if above { above_p_value } else { below_p_value };
    rows.iter()
        .filter(|r| r.load <= 1.0)
        .map(|r| {
            let m = &r.measurement;
            let bound = (ratio * r.fpr_configured).min(1.0);
            let p_value = tail(m.false_positives, m.queries, bound);
            let (side, end, ci) = match above {
                true => ("above", "lower", m.ci_low),
                false => ("below", "upper", m.ci_high),
            };
            let not = if p_value < alpha { "" } else { "not " };
            Verdict {
                check: format!(
                    "--fail-{side} {ratio}: {} at {:.2}n, configured {}: 95% {end} bound {} is \
                     {not}{side} {ratio} x {} = {}",
                    label(r),
                    r.load,
                    percent(r.fpr_configured),
                    percent(ci),
                    percent(r.fpr_configured),
                    percent(bound)
                ),
                p_value,
                alpha,
            }
        })
        .collect()
}

/// `rbloom (text keys) at 1.00n: 5000 of 10000 inserted keys answered absent, the first key
/// 123 (inserted as number 2)`.
fn lost_keys(r: &AuditRow) -> String {
    let key =
        (r.false_negative_key.map(|key| key.to_string())).or_else(|| r.false_negative_text.clone());
    let first = match (key, r.false_negative_number) {
        (Some(key), Some(number)) => format!(", the first key {key} (inserted as number {number})"),
        _ => String::new(),
    };
    format!(
        "{} at {:.2}n: {} of {} inserted keys answered absent{first}",
        label(r),
        r.load,
        r.false_negatives,
        r.inserted_asked
    )
}

/// What the checks of inserted keys and of a rate too low say: how they work, once, then
/// every row that loses keys or sits far below its promise or its fill.
pub fn notes(rows: &[AuditRow]) -> Vec<String> {
    let Some(first) = rows.first() else {
        return Vec::new();
    };
    let mut notes = vec![format!(
        "both ways: up to {} inserted keys asked per row (all {} here at the first row; a \
         filter losing a share d of its keys is caught with probability 1 - (1 - d)^{}, 99.995% \
         at d = 0.1%); a rate whose 95% upper bound is under {FAR_BELOW} x the promise is \
         flagged far below (a filter at that rate or above is flagged with probability at most \
         2.5% per row)",
        INSERTED_SAMPLE, first.inserted_asked, INSERTED_SAMPLE
    )];
    for r in rows {
        if r.false_negatives > 0 {
            notes.push(format!(
                "LOSES KEYS: {}: a false negative breaks the filter contract (the run fails)",
                lost_keys(r)
            ));
        }
        let m = &r.measurement;
        if below_promise(r) {
            notes.push(format!(
                "FAR BELOW its promise: {} at {:.2}n: {} [{}, {}], 95% upper bound under {FAR_BELOW} x {}: a filter that answers absent for keys it holds, or one sized far beyond its promise (memory it need not spend); --fail-below R fails the run on it",
                label(r),
                r.load,
                percent(m.fpr_measured),
                percent(m.ci_low),
                percent(m.ci_high),
                percent(r.fpr_configured)
            ));
        }
        if let Some(from_fill) = below_fill(r) {
            notes.push(format!(
                "BELOW ITS OWN FILL: {} at {:.2}n: {} against {} from the fill it reports (fill^k, exact one-sided test at {BITS_CHECK_ALPHA}): it answers absent more often than its bits allow",
                label(r),
                r.load,
                percent(m.fpr_measured),
                percent(from_fill)
            ));
        }
    }
    notes
}
