//! The work a query does where the filter passes: a cache miss measured, or a busy loop
//! calibrated to the nominal cost.

use super::cost::{Bounded, TIMED_PASSES};
use super::flags::{AdvisePlan, WorkCost};
use super::measure::dependent_read_ns;
use super::priced::Resolved;
use super::validate::{self, Work};
use crate::error::Result;
use crate::pipeline::timing::LineBuffer;

/// Bytes of the buffer a cache miss reads in: four times the 32 MiB last-level cache here.
/// The time model prices a larger table's line reads as this buffer's (all miss the cache).
pub const MISS_BYTES: u64 = 1 << 27;

/// Measures a cache miss, or calibrates a busy loop to the nominal cost.
pub fn resolve_work(plan: &AdvisePlan) -> Result<Resolved> {
    let ns = match plan.work {
        WorkCost::CacheMiss => {
            let buffer = LineBuffer::new(MISS_BYTES, 11)?;
            let p = dependent_read_ns(&buffer, 200_000, TIMED_PASSES);
            return Ok(Resolved {
                t_work: p,
                how: format!(
                    "t_w = cache-miss: a dependent random read in 128 MiB, measured {:.1} ns [{:.1}, {:.1}]",
                    p.value, p.low, p.high
                ),
                work: Work::Miss { buffer, line: 0 },
            });
        }
        WorkCost::Nanos(ns) | WorkCost::Preset(_, ns) => ns,
    };
    let iterations = validate::spin_steps(ns);
    let named = match plan.work {
        WorkCost::Preset(name, _) => format!("{name} preset, "),
        _ => String::new(),
    };
    Ok(Resolved {
        t_work: Bounded::exact(ns),
        work: Work::Spin {
            iterations,
            last: 0,
        },
        how: format!("t_w = {ns} ns ({named}a busy loop of {iterations} steps, calibrated)"),
    })
}
