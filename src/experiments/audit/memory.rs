//! The audit's memory, reported and measured. A filter reports two numbers: the bits its
//! probes address (`addressed_bits`, the m of its fill and of its predictions) and the bits it
//! allocates (`allocated_bits`, protocol 1's `memory_bits`). For a program, bloomlab also
//! measures what it holds: the growth of its process group's resident (RSS) and proportional
//! (PSS) set size between the header and the end of the inserts
//! ([`crate::program::Memory`]). Bits per key are per planned key n throughout.
//!
//! The measurement holds more than the table: the interpreter's allocations for the batches
//! and page rounding. Measured at n = 10^6 and ε = 1% (a 1.2 MB table, 9.59 bits per key
//! addressed and allocated), the shipped Python adapters' RSS grew by 13.7 (pyprobables
//! 0.7.0), 14.1 (pybloom-live 4.0.0) and 15.4 (rbloom 1.5.4) bits per key: 0.5 to 0.7 MB of
//! their own, 1.4x to 1.6x the table. Their PSS grew by 13.5 to 35.1 bits per key: PSS
//! moves as pages stop being shared (the shell that started the program exits), so the
//! ratio and the note use the RSS. A row is noted when its RSS grew by more than
//! [`MEASURED_SLACK`] times the addressed bits and by more than [`MEASURED_SLACK_BYTES`]
//! beyond them: a library that stores 32 bits in each 64-bit word reads about 2x.

use super::AuditRow;
use crate::program::Memory;

/// Measured (RSS) over addressed bits above which a row may be noted.
pub const MEASURED_SLACK: f64 = 1.25;
/// Bytes measured beyond the addressed bits above which a row may be noted: more than the
/// shipped Python adapters' own allocations at n = 10^6 (0.5 to 0.7 MB, module docs).
pub const MEASURED_SLACK_BYTES: f64 = 1_048_576.0;

/// An experiment file leaves the measured memory out unless it says `no_memory = false`:
/// it differs from run to run, and a file's results regenerate byte for byte.
pub fn left_out_of_files() -> bool {
    true
}

/// The m of a row's predictions: the bits a program says its probes address, else what the
/// filter reports it holds.
pub fn addressed(memory: Option<&Memory>, reported: u64) -> u64 {
    memory.and_then(Memory::addressed_bits).unwrap_or(reported)
}

/// Sets the row's memory columns: addressed bits per key, and for a program the measured ones.
pub fn mark(row: &mut AuditRow, memory: Option<&Memory>) {
    let per_key = |bits: f64| bits / row.n_planned as f64;
    row.bits_per_key_addressed = per_key(row.measurement.m as f64);
    let Some((rss, pss)) = memory.and_then(Memory::grown) else {
        return;
    };
    row.bits_per_key_rss = Some(per_key(8.0 * rss as f64));
    row.bits_per_key_measured = Some(per_key(8.0 * pss as f64));
    row.measured_over_addressed = Some(8.0 * rss as f64 / row.measurement.m.max(1) as f64);
}

/// A note per filter whose measured memory is more than [`MEASURED_SLACK`] times what it
/// addresses, at its first row.
pub fn notes(rows: &[AuditRow]) -> Vec<String> {
    let mut notes = Vec::new();
    let mut said: Vec<String> = Vec::new();
    for r in rows {
        let (Some(ratio), Some(rss)) = (r.measured_over_addressed, r.bits_per_key_rss) else {
            continue;
        };
        let name = super::notes::label(r);
        let excess_bytes = (rss - r.bits_per_key_addressed) * r.n_planned as f64 / 8.0;
        if !beyond_slack(ratio, excess_bytes) || said.contains(&name) {
            continue;
        }
        notes.push(format!(
            "MEMORY: {name} holds {ratio:.2}x the bits it addresses: its resident set grew by {rss:.1} bits per key (PSS {:.1}) where its m gives {:.1} and it reports {:.1} allocated (tolerance {MEASURED_SLACK}x and 1 MiB, for the interpreter's own allocations and page rounding)",
            r.bits_per_key_measured.unwrap_or(f64::NAN),
            r.bits_per_key_addressed,
            r.bits_per_key_allocated
        ));
        said.push(name);
    }
    notes
}

/// Whether a row measured at `ratio` times its addressed bits, `excess_bytes` beyond them, is
/// past both tolerances.
fn beyond_slack(ratio: f64, excess_bytes: f64) -> bool {
    ratio > MEASURED_SLACK && excess_bytes > MEASURED_SLACK_BYTES
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The shipped adapters at n = 10^6 (1.4x to 1.6x, 0.7 MB at most) pass; the doubled table
    /// of the issue (19.2 bits per key where m gives 9.59, plus the interpreter's) does not.
    #[test]
    fn the_tolerance_passes_the_adapters_and_not_a_doubling() {
        let bytes = |bits_per_key: f64| bits_per_key * 1e6 / 8.0;
        assert!(!beyond_slack(15.4 / 9.59, bytes(15.4 - 9.59)));
        assert!(!beyond_slack(13.7 / 9.59, bytes(13.7 - 9.59)));
        assert!(beyond_slack(24.0 / 9.59, bytes(24.0 - 9.59)));
    }
}
