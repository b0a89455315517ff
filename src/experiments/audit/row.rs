//! One row of the audit: a filter at one load against its configured rate, the columns the
//! table shows of it, and how a measurement becomes one.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::entries::Built;
use super::{AuditPlan, Entry, FLAG_Z, MIN_EXPECTED_FALSE_POSITIVES};
use crate::pipeline::measurement::Measurement;
use crate::program::KeyForm;
use crate::report::{Column, Record};
use crate::stats::{detectable_excess, ratio_to_constant, z_score};

/// One filter at one load.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct AuditRow {
    /// `n` is the keys inserted, `m` the bits allocated at that point, `k` the hashes.
    #[serde(flatten)]
    pub measurement: Measurement,
    /// The filter's short name, as the narrow table shows it: the crate, the adapter, or a
    /// program's own name.
    pub name: String,
    /// What is measured: the structure's name, or the name and version a program reports.
    pub library: String,
    /// The key form a program was sent (blank for the Rust structures, which take u64 keys).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub key_form: Option<KeyForm>,
    /// The n the filter was configured for.
    pub n_planned: u64,
    /// `n / n_planned`.
    pub load: f64,
    /// The ε the filter was configured for.
    pub fpr_configured: f64,
    /// Bits allocated per planned key, as the filter reports them.
    pub bits_per_key_allocated: f64,
    /// Bits its probes address per planned key: the m of its fill and predictions.
    pub bits_per_key_addressed: f64,
    /// For a program: the growth of its resident set size from the header to the end of the
    /// inserts, in bits per planned key ([`memory`](super::memory)).
    pub bits_per_key_rss: Option<f64>,
    /// The same from its proportional set size.
    pub bits_per_key_measured: Option<f64>,
    /// `bits_per_key_rss / bits_per_key_addressed` (the RSS: PSS moves as pages stop being
    /// shared).
    pub measured_over_addressed: Option<f64>,
    /// `queries · ε`.
    pub expected_false_positives: f64,
    /// `expected_false_positives >= 100` ([`MIN_EXPECTED_FALSE_POSITIVES`]): enough to
    /// resolve the rate.
    pub resolved: bool,
    /// `p̂ / ε`.
    pub ratio_configured: f64,
    /// Lower end of `[p_L/ε, p_U/ε]`, from the 95% Clopper–Pearson interval
    /// ([`ratio_to_constant`]): exact, for this filter.
    pub ratio_configured_low: f64,
    /// Upper end of `[p_L/ε, p_U/ε]`.
    pub ratio_configured_high: f64,
    /// The smallest relative excess over ε these queries detect (exact one-sided test, 5%
    /// level, 80% power; [`detectable_excess`]).
    pub detectable_excess: f64,
    /// `(p̂ - ε) / sqrt(ε(1-ε)/q)`.
    pub z_configured: f64,
    /// `z_configured > 4`.
    pub above_configured: bool,
    /// Inserted keys asked ([`both_ways::INSERTED_SAMPLE`](super::both_ways::INSERTED_SAMPLE), or all of them when fewer).
    pub inserted_asked: u64,
    /// Inserted keys asked that the filter answered absent: any fails the run.
    pub false_negatives: u64,
    /// The first inserted key answered absent.
    pub false_negative_key: Option<u64>,
    /// The first inserted string key answered absent, quoted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub false_negative_text: Option<String>,
    /// Its place in the insertion order, from 1.
    pub false_negative_number: Option<u64>,
    /// The rate's 95% upper bound is under a tenth of ε, or the count is far below the rate
    /// of the filter's own reported fill ([`both_ways`](super::both_ways)).
    pub far_below: bool,
    /// Whether the seed reaches the filter's hashing (those that take one are run with
    /// `--hash-seed`); blank when a program does not say.
    pub seeded: Option<bool>,
    /// Single-threaded ns per absent query (only when timed).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ns_query: Option<f64>,
}

impl Record for AuditRow {
    fn columns() -> Vec<Column> {
        crate::columns![Self;
            "filter" => Plain(name),
            "library" => PlainUnlessSame(library, name).wide_only(),
            "spec" => PlainUnlessSame(measurement.filter, name).wide_only(),
            "keys" => Plain(key_form),
            "promise" => Percent(fpr_configured),
            "load" => Fixed(load, 2),
            "n" => Plain(measurement.n).wide_only(),
            "bits/key" => Fixed(bits_per_key_allocated, 2).wide_only(),
            "addressed" => Fixed(bits_per_key_addressed, 2).wide_only(),
            "mem/key" => Fixed(bits_per_key_measured, 1).wide_only(),
            "RSS b/key" => Fixed(bits_per_key_rss, 1).wide_only(),
            "x addressed" => Times(measured_over_addressed).wide_only(),
            "hashes" => Plain(measurement.k).wide_only(),
            "FP/queries" => Ratio(measurement.false_positives, measurement.queries).wide_only(),
            "measured" => Percent(measurement.fpr_measured),
            "95% CI" => Interval(measurement.ci_low, measurement.ci_high),
            // Wide only, with its interval: the notes say each filter's ratio with its own.
            "x promise" => Times(ratio_configured).wide_only(),
            "95% CI x" => TimesInterval(ratio_configured_low, ratio_configured_high).wide_only(),
            "detects" => Percent(detectable_excess).wide_only(),
            "z config" => Fixed(z_configured, 1).wide_only(),
            "flag" => Plain(above_configured).flags_when("true"),
            "lost" => Plain(false_negatives),
            "of" => Plain(inserted_asked).wide_only(),
            "low" => Plain(far_below).wide_only().flags_when("true"),
            "predicted" => Percent(measurement.fpr_exact).wide_only(),
            "z predicted" => Fixed(measurement.z_exact, 2).wide_only(),
            "resolved" => Plain(resolved).wide_only(),
            "seeded" => Plain(seeded).wide_only(),
            "ns query" => Fixed(ns_query, 1).wide_only(),
        ]
    }
}

/// The row of one measurement of `built` at one load against its configured rate ε.
pub(super) fn row(
    plan: &AuditPlan,
    entry: &Entry,
    fpr: f64,
    built: &Built,
    load: f64,
    ns_query: Option<f64>,
    measurement: Measurement,
) -> AuditRow {
    let library = built.library.clone();
    let (count, queries) = (measurement.false_positives, measurement.queries);
    let z_configured = z_score(measurement.fpr_measured, fpr, queries);
    let expected = queries as f64 * fpr;
    let ratio = ratio_to_constant(
        count,
        queries,
        fpr,
        crate::pipeline::measurement::CONFIDENCE,
    );
    let name = match (&entry.adapter, entry.key_form) {
        (Some(adapter), _) => adapter.clone(),
        (None, Some(_)) => library.clone(),
        (None, None) => entry.kind.to_string(),
    };
    AuditRow {
        name,
        library,
        key_form: entry.key_form,
        n_planned: plan.n,
        load,
        fpr_configured: fpr,
        bits_per_key_allocated: measurement.memory_bits as f64 / plan.n as f64,
        bits_per_key_addressed: f64::NAN,
        bits_per_key_rss: None,
        bits_per_key_measured: None,
        measured_over_addressed: None,
        expected_false_positives: expected,
        resolved: expected >= MIN_EXPECTED_FALSE_POSITIVES,
        ratio_configured: ratio.value,
        ratio_configured_low: ratio.low,
        ratio_configured_high: ratio.high,
        detectable_excess: detectable_excess(queries, fpr),
        z_configured,
        above_configured: z_configured > FLAG_Z,
        seeded: built.seeded,
        ns_query,
        inserted_asked: 0,
        false_negatives: 0,
        false_negative_key: None,
        false_negative_text: None,
        false_negative_number: None,
        far_below: false,
        measurement,
    }
}
