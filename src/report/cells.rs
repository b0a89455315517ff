//! How one cell of the human views shows its fields: percentages and ratios with three
//! significant figures, intervals, counts over counts.

use serde_json::{Map, Value};

/// Significant figures of percentages and ratios.
const FIGURES: i32 = 3;

/// Below this magnitude a percentage or ratio is written in scientific notation
/// (`1.23e-7`), so that no figure is lost to a run of zeros.
const SMALLEST_FIXED: f64 = 1e-3;

/// How a column of the human views shows its field.
#[derive(Clone, Copy, Debug)]
pub enum Cell {
    /// The field as it is.
    Plain(&'static str),
    /// A fraction shown as a percentage with three significant figures ([`percent`]).
    Percent(&'static str),
    /// A number with a fixed count of decimals.
    Fixed(&'static str, usize),
    /// Two fraction fields shown as a percentage interval `[lo, hi]`.
    Interval(&'static str, &'static str),
    /// `a / b` of two fields, e.g. false positives over queries.
    Ratio(&'static str, &'static str),
    /// A ratio shown as a multiple with three significant figures: `0.0450x` ([`times`]).
    Times(&'static str),
    /// Two ratio fields shown as an interval of multiples: `[10.1x, 12.4x]`.
    TimesInterval(&'static str, &'static str),
    /// The first field as it is, blank where it reads the same as the second: a column that
    /// would only repeat another says nothing.
    PlainUnlessSame(&'static str, &'static str),
}

impl Cell {
    /// The serialised fields the cell reads, in the order it shows them.
    pub fn fields(self) -> Vec<&'static str> {
        match self {
            Cell::Plain(key) | Cell::Percent(key) | Cell::Fixed(key, _) | Cell::Times(key) => {
                vec![key]
            }
            Cell::Interval(a, b)
            | Cell::Ratio(a, b)
            | Cell::TimesInterval(a, b)
            | Cell::PlainUnlessSame(a, b) => vec![a, b],
        }
    }

    /// The cell's text for one record; empty when a single field is absent or null.
    pub fn show(self, record: &Map<String, Value>) -> String {
        let absent = |key: &str| matches!(record.get(key), None | Some(Value::Null));
        let number = |key: &str| record.get(key).and_then(Value::as_f64).unwrap_or(f64::NAN);
        match self {
            Cell::Percent(key) | Cell::Fixed(key, _) | Cell::Times(key) if absent(key) => {
                String::new()
            }
            Cell::Plain(key) => plain(record.get(key)),
            Cell::Percent(key) => percent(number(key)),
            Cell::Fixed(key, decimals) => format!("{:.decimals$}", number(key)),
            Cell::Times(key) => times(number(key)),
            Cell::Interval(lo, hi) => format!("[{}, {}]", percent(number(lo)), percent(number(hi))),
            Cell::TimesInterval(lo, hi) => {
                format!("[{}, {}]", times(number(lo)), times(number(hi)))
            }
            Cell::Ratio(a, b) => format!("{}/{}", plain(record.get(a)), plain(record.get(b))),
            Cell::PlainUnlessSame(a, b) if record.get(a) == record.get(b) => String::new(),
            Cell::PlainUnlessSame(a, _) => plain(record.get(a)),
        }
    }
}

/// A fraction as a percentage with three significant figures: 0.011416 → `1.14%`,
/// 1.234e-9 → `1.23e-7%`, 0 → `0%`.
pub fn percent(x: f64) -> String {
    format!("{}%", significant(x * 100.0))
}

/// A ratio as a multiple with three significant figures: 0.04501 → `0.0450x`, 11.04 → `11.0x`.
pub fn times(x: f64) -> String {
    format!("{}x", significant(x))
}

/// `x` with [`FIGURES`] significant figures: fixed notation with as many decimals as that
/// takes (none from 100 up, so large numbers keep every integer digit), scientific notation
/// below [`SMALLEST_FIXED`], and `0` for zero.
pub fn significant(x: f64) -> String {
    if x == 0.0 {
        return "0".to_string();
    }
    if !x.is_finite() {
        return x.to_string();
    }
    if x.abs() < SMALLEST_FIXED {
        let decimals = (FIGURES - 1) as usize;
        return format!("{x:.decimals$e}");
    }
    let decimals = decimals_for(x);
    let text = format!("{x:.decimals$}");
    // Rounding can carry into the next power of ten (99.96 → 100.0): one decimal fewer then.
    match text.parse::<f64>() {
        Ok(rounded) if decimals > 0 && decimals_for(rounded) < decimals => {
            let decimals = decimals - 1;
            format!("{x:.decimals$}")
        }
        _ => text,
    }
}

/// Decimals that leave [`FIGURES`] significant figures: `FIGURES - 1 - floor(log10 |x|)`,
/// at least 0.
fn decimals_for(x: f64) -> usize {
    let magnitude = x.abs().log10().floor() as i32;
    (FIGURES - 1 - magnitude).max(0) as usize
}

/// A field as it is: strings bare, floats with 3 decimals (1 from 100 up), null as nothing.
fn plain(value: Option<&Value>) -> String {
    match value {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Number(x)) => match x.as_f64() {
            Some(f) if x.is_f64() => {
                let digits = if f.abs() >= 100.0 { 1 } else { 3 };
                format!("{f:.digits$}")
            }
            _ => x.to_string(),
        },
        Some(other) => other.to_string(),
    }
}
