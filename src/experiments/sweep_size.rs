//! sweep-size: the rate against the space, at one or several k.

use indicatif::ProgressBar;

use super::{Experiment, Outcome, Rows, measure_all, setup_caption};
use crate::error::Result;
use crate::measure::Setup;
use crate::params::Params;
use crate::report::percent;

/// Essay defaults: n = 4000, k = 4, 4..12 bits per key in steps of 2.
pub const DEFAULT_N: u64 = 4_000;
pub const DEFAULT_K: [u32; 1] = [4];
pub const DEFAULT_BITS_PER_KEY: [f64; 5] = [4.0, 6.0, 8.0, 10.0, 12.0];

/// The setups, k-major; `--m` replaces the bits-per-key list with one size.
pub fn setups(params: &Params) -> Result<Vec<Setup>> {
    let n = params.n_or(DEFAULT_N)?;
    let sizes = params.sizes_or(n, &DEFAULT_BITS_PER_KEY)?;
    let mut setups = Vec::new();
    for k in params.k_list_or(&DEFAULT_K)? {
        for &m in &sizes {
            setups.push(params.setup(n, m, k)?);
        }
    }
    Ok(setups)
}

pub fn run(params: &Params, progress: &ProgressBar) -> Result<Outcome> {
    let rows = measure_all(Experiment::SweepSize, params, &setups(params)?, progress)?;
    let mut notes = Vec::new();
    if let (Some(first), Some(last)) = (rows.first(), rows.last())
        && rows.len() > 1
    {
        notes.push(format!(
            "fill {} at {:.2} bits/key, {} at {:.2}; rate {} → {}",
            percent(first.fill_measured),
            first.bits_per_key,
            percent(last.fill_measured),
            last.bits_per_key,
            percent(first.fpr_measured),
            percent(last.fpr_measured)
        ));
    }
    Ok(Outcome {
        title: format!(
            "sweep-size: n = {}, {}",
            params.n_or(DEFAULT_N)?,
            setup_caption(params)?
        ),
        rows: Rows::SweepSize(rows),
        notes,
        verdicts: Vec::new(),
    })
}
