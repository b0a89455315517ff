//! The verdict of a test at a fixed false-alarm rate, as the tables print it.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// A p-value judged at a level alpha: `fail` below it, `pass` at or above it, `n/a` when
/// the test could not be made (no p-value, NaN).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub enum Check {
    #[serde(rename = "pass")]
    Pass,
    #[serde(rename = "fail")]
    Fail,
    #[serde(rename = "n/a")]
    NotApplicable,
}

impl Check {
    /// `p` judged at `alpha`.
    pub fn at(p: f64, alpha: f64) -> Self {
        if p.is_nan() {
            Check::NotApplicable
        } else if p < alpha {
            Check::Fail
        } else {
            Check::Pass
        }
    }
}
