//! The audit's memory, reported and measured. A filter reports two numbers: the bits its
//! probes address (`addressed_bits`, the m of its fill and of its predictions) and the bits it
//! allocates (`allocated_bits`, protocol 1's `memory_bits`). For a program, bloomlab also
//! measures what it holds: the growth of its process group's resident (RSS) and proportional
//! (PSS) set size between the header and the end of the inserts
//! ([`crate::structures::exec::memory`]). Bits per key are per planned key n throughout.
//!
//! The measurement holds more than the table: the interpreter's allocations for the batches
//! and page rounding. [`MEASURED_SLACK`] is how much more is not remarked on: a row whose
//! measured bits exceed the addressed ones by more is noted, with the ratio (a library that
//! stores 32 bits in each 64-bit word reads about 2x).

use super::AuditRow;
use crate::structures::exec::memory::{Readings, Shared};

/// Measured over addressed bits above which a row is noted: the tolerance of the measurement
/// (at n = 10^6 and ε = 1%, a Python program's own allocations for its batches and page
/// rounding add under 25% to a 1.2 MB table; see the adapters' README).
pub const MEASURED_SLACK: f64 = 1.25;

/// An experiment file leaves the measured memory out unless it says `no_memory = false`:
/// it differs from run to run, and a file's results regenerate byte for byte.
pub fn left_out_of_files() -> bool {
    true
}

/// The m of a row's predictions: the bits a program says its probes address, else what the
/// filter reports it holds.
pub fn addressed(memory: Option<&Shared>, reported: u64) -> u64 {
    let readings = memory.map(|m| *m.lock().unwrap_or_else(|p| p.into_inner()));
    readings.and_then(|r| r.addressed_bits).unwrap_or(reported)
}

/// Sets the row's memory columns: addressed bits per key, and for a program the measured ones.
pub fn mark(row: &mut AuditRow, memory: Option<&Shared>) {
    let per_key = |bits: f64| bits / row.n_planned as f64;
    row.bits_per_key_addressed = per_key(row.measurement.m as f64);
    let readings: Option<Readings> = memory.map(|m| *m.lock().unwrap_or_else(|p| p.into_inner()));
    let Some((rss, pss)) = readings.and_then(|r| r.grown()) else {
        return;
    };
    row.bits_per_key_rss = Some(per_key(8.0 * rss as f64));
    row.bits_per_key_measured = Some(per_key(8.0 * pss as f64));
    row.measured_over_addressed = Some(8.0 * pss as f64 / row.measurement.m.max(1) as f64);
}

/// A note per filter whose measured memory is more than [`MEASURED_SLACK`] times what it
/// addresses, at its first row.
pub fn notes(rows: &[AuditRow]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut said: Vec<String> = Vec::new();
    for r in rows {
        let Some(ratio) = r.measured_over_addressed else {
            continue;
        };
        let name = super::notes::label(r);
        if ratio <= MEASURED_SLACK || said.contains(&name) {
            continue;
        }
        notes.push(format!(
            "MEMORY: {name} holds {ratio:.2}x the bits it addresses: measured {:.1} bits per key (PSS; RSS {:.1}) where its m gives {:.1} and it reports {:.1} allocated (tolerance {MEASURED_SLACK}x for the interpreter's own allocations and page rounding)",
            r.bits_per_key_measured.unwrap_or(f64::NAN),
            r.bits_per_key_rss.unwrap_or(f64::NAN),
            r.bits_per_key_addressed,
            r.bits_per_key_allocated
        ));
        said.push(name);
    }
    notes
}
