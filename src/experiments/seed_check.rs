//! seed-check: the two checks behind the essay's plate.
//!
//! (a) Scale n and m together at fixed m/n and k: the rates must agree. Test: Cochran's Q
//! over the rows, each with variance `p(1-p)/q + (k p / f)² Var(X/m)` (query noise plus the
//! fill's own spread), against χ² with S-1 degrees of freedom; fails when `P < 0.001`.
//! (b) Re-draw only the hash seed: each filter's count must be binomial around its own
//! `fill^k`. Test: `Σ z_i²` of the `z_from_fill` against χ² with S degrees of freedom; fails
//! when `P < 0.001` (over-dispersed: correlated probes) or `P > 0.999` (too regular).

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use super::{Experiment, Outcome, Rows, Verdict, measure_all, measurement_columns, setup_caption};
use crate::error::{Error, Result};
use crate::measure::{Measurement, Setup, Spread};
use crate::params::{MAX_COUNT, Params, bits_for, check_count};
use crate::report::{Cell, Column, Record, col};
use crate::stats::{chi_square_sf, cochran_q};

pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_BITS_PER_KEY: [f64; 1] = [10.0];
pub const DEFAULT_K: [u32; 1] = [7];
pub const DEFAULT_SEEDS: u64 = 8;
pub const DEFAULT_SCALES: [f64; 5] = [0.25, 0.5, 1.0, 2.0, 4.0];
/// Significance level of both checks.
pub const ALPHA: f64 = 0.001;

/// A seed-check row: which check it belongs to and its z within that check.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct SeedCheckRow {
    #[serde(flatten)]
    pub measurement: Measurement,
    /// "scale" or "hash-seed".
    pub check: String,
    /// scale: `(x_i - x̄) / sd_i` against the weighted mean; hash-seed: `z_from_fill`.
    pub z_check: f64,
}

impl Record for SeedCheckRow {
    fn columns() -> Vec<Column> {
        let mut columns = vec![
            col("check", Cell::Plain("check")),
            col("hash seed", Cell::Plain("hash_seed")),
        ];
        columns.extend(measurement_columns());
        columns.push(col("z check", Cell::Fixed("z_check", 2)));
        columns
    }
}

pub fn run(params: &Params, progress: &ProgressBar) -> Result<Outcome> {
    let n = params.n_or(DEFAULT_N)?;
    let k = Params::single("k", &params.k_list_or(&DEFAULT_K)?)?;
    let m = params.size_or(n, &DEFAULT_BITS_PER_KEY)?;
    let scales = params.scales_or(&DEFAULT_SCALES)?;
    if scales.len() < 2 {
        return Err(Error::invalid(
            "scales",
            scales.len(),
            "the scale check needs at least two scales",
            "a list of 2 or more factors",
        ));
    }
    let seeds = params.seeds_or(DEFAULT_SEEDS)?;
    let base = params.setup(n, m, k)?;
    let mut setups = Vec::new();
    for &s in &scales {
        let scaled_n = check_count("scales", (n as f64 * s).round() as u64, 1, MAX_COUNT)?;
        let scaled_m = bits_for(scaled_n, m as f64 / n as f64)?;
        setups.push(Setup {
            n: scaled_n,
            m: scaled_m,
            ..base
        });
    }
    for j in 0..seeds {
        setups.push(Setup {
            hash_seed: base.hash_seed.wrapping_add(j),
            ..base
        });
    }
    let measurements = measure_all(Experiment::SeedCheck, params, &setups, progress)?;
    let (scaled, reseeded) = measurements.split_at(scales.len());

    let estimates: Vec<(f64, f64)> = scaled
        .iter()
        .map(|r| (r.fpr_measured, r.fpr_variance()))
        .collect();
    let (q, pooled) = cochran_q(&estimates);
    let scale_p = chi_square_sf(q, (scales.len() - 1) as f64);
    let dispersion: f64 = reseeded.iter().map(|r| r.z_from_fill.powi(2)).sum();
    let seed_p = chi_square_sf(dispersion, seeds as f64);

    let mut rows: Vec<SeedCheckRow> = scaled
        .iter()
        .zip(&estimates)
        .map(|(r, (x, v))| SeedCheckRow {
            measurement: r.clone(),
            check: "scale".into(),
            z_check: (x - pooled) / v.sqrt(),
        })
        .collect();
    rows.extend(reseeded.iter().map(|r| SeedCheckRow {
        measurement: r.clone(),
        check: "hash-seed".into(),
        z_check: r.z_from_fill,
    }));

    let verdict = |ok: bool| if ok { "pass" } else { "FAIL" };
    let scale_ok = scale_p >= ALPHA;
    let seed_ok = (ALPHA..=1.0 - ALPHA).contains(&seed_p);
    let scale_line = format!(
        "scale check: {} (Cochran's Q = {q:.2}, df = {}, P = {scale_p:.3}; fail below {ALPHA})",
        verdict(scale_ok),
        scales.len() - 1
    );
    let seed_line = format!(
        "hash-seed check: {} (Σz² = {dispersion:.2} against fill^k, df = {seeds}, P = {seed_p:.3}; fail outside [{ALPHA}, {}])",
        verdict(seed_ok),
        1.0 - ALPHA
    );
    // The dispersion check is two-sided: P < α or P > 1 - α is 2·min(P, 1 - P) < 2α.
    let verdicts = vec![
        Verdict {
            check: scale_line.clone(),
            p_value: scale_p,
            alpha: ALPHA,
        },
        Verdict {
            check: seed_line.clone(),
            p_value: 2.0 * seed_p.min(1.0 - seed_p),
            alpha: 2.0 * ALPHA,
        },
    ];
    let spread = Spread::of(&reseeded.iter().collect::<Vec<_>>());
    let notes = vec![
        scale_line,
        seed_line,
        format!(
            "across hash seeds: mean {}, sd {} (binomial and fill noise predict {})",
            crate::report::percent(spread.mean),
            crate::report::percent(spread.sd),
            crate::report::percent(spread.expected_sd)
        ),
    ];
    Ok(Outcome {
        title: format!(
            "seed-check: n = {n}, m = {m}, k = {k}, {}",
            setup_caption(params)?
        ),
        rows: Rows::SeedCheck(rows),
        notes,
        verdicts,
    })
}
