//! The memory a program behind `exec:` really holds, measured rather than reported: the
//! resident set size (RSS) and the proportional set size (PSS, shared pages divided among the
//! processes sharing them) of its whole process group, summed over its processes, from
//! `/proc/PID/smaps_rollup` (`Rss:`, `Pss:`), or `/proc/PID/status` (`VmRSS:`, for both) where
//! the kernel has no rollup.
//!
//! Two readings bracket the structure: one before the header, once the program has started
//! and gone quiet (every process of the group asleep and the RSS unchanged over
//! [`QUIET_READS`] readings [`QUIET_STEP`] apart: the interpreter and the library loaded,
//! waiting for the header), and one after the inserts (at the `stats` that follows them, the
//! program blocked on its input). Their difference is what the structure and the handling of
//! its keys allocated. It holds more than the table: the interpreter's own allocations
//! for the batches (in Python, the last batch's strings and lists where the allocator keeps
//! them) and page rounding (4 KiB per mapping). The adapters' README states how large that is
//! at n = 10^6.

use std::fs;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// Readings apart while waiting for the program to go quiet.
pub const QUIET_STEP: Duration = Duration::from_millis(20);
/// Equal readings in a row that count as quiet.
pub const QUIET_READS: usize = 3;
/// Longest wait for quiet before the reading is taken as it is.
pub const QUIET_LIMIT: Duration = Duration::from_secs(10);

/// Bytes resident in a process group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Resident {
    pub rss: u64,
    pub pss: u64,
}

/// The readings of one session, shared between the filter and whoever audits it, with the
/// `addressed_bits` the program reports (the m its rate depends on).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Readings {
    /// The last `addressed_bits` reported (hello, then `stats`).
    pub addressed_bits: Option<u64>,
    /// Before the header, the program quiet.
    pub before: Option<Resident>,
    /// After the inserts.
    pub after: Option<Resident>,
}

impl Readings {
    /// Bytes the session added between the two readings: (RSS, PSS), each at least 0.
    pub fn grown(&self) -> Option<(u64, u64)> {
        let (before, after) = (self.before?, self.after?);
        Some((
            after.rss.saturating_sub(before.rss),
            after.pss.saturating_sub(before.pss),
        ))
    }
}

/// A handle on a session's readings.
pub type Shared = Arc<Mutex<Readings>>;

/// The pids of process group `group`: every `/proc/PID/stat` whose fifth field is it.
fn members(group: u32) -> Vec<u32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|&pid| stat(pid).is_some_and(|(_, pgrp)| pgrp == group))
        .collect()
}

/// A process's state letter and process group, from `/proc/PID/stat` (after the command
/// name, which may hold spaces and parentheses: the last `)` ends it).
fn stat(pid: u32) -> Option<(char, u32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let pgrp = fields.nth(1)?.parse().ok()?;
    Some((state, pgrp))
}

/// The value in kB of the line `name:` of a /proc file, in bytes.
fn field(text: &str, name: &str) -> Option<u64> {
    let line = text.lines().find(|l| l.starts_with(name))?;
    let kb: u64 = line[name.len()..].split_whitespace().next()?.parse().ok()?;
    Some(kb * 1024)
}

/// One process's RSS and PSS.
fn process(pid: u32) -> Option<Resident> {
    if let Ok(rollup) = fs::read_to_string(format!("/proc/{pid}/smaps_rollup"))
        && let (Some(rss), Some(pss)) = (field(&rollup, "Rss:"), field(&rollup, "Pss:"))
    {
        return Some(Resident { rss, pss });
    }
    let status = fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let rss = field(&status, "VmRSS:")?;
    Some(Resident { rss, pss: rss })
}

/// The group's memory, summed over its processes; None when none can be read (no /proc, or
/// the group has ended).
pub fn read(group: u32) -> Option<Resident> {
    let mut total: Option<Resident> = None;
    for pid in members(group) {
        if let Some(one) = process(pid) {
            let sum = total.get_or_insert_default();
            sum.rss += one.rss;
            sum.pss += one.pss;
        }
    }
    total
}

/// The group's memory once it is quiet (module documentation), or as it is after
/// [`QUIET_LIMIT`].
pub fn read_quiet(group: u32) -> Option<Resident> {
    let start = Instant::now();
    let mut last = None;
    let mut equal = 0;
    loop {
        let states: Vec<char> = (members(group).iter())
            .filter_map(|&pid| stat(pid).map(|(state, _)| state))
            .collect();
        // A program that has already ended will not go quiet: nothing to wait for.
        if states.iter().all(|&state| state == 'Z' || state == 'X') {
            return None;
        }
        let asleep = states.iter().all(|&state| state == 'S');
        let now = read(group);
        equal = if asleep && now.is_some() && now == last {
            equal + 1
        } else {
            0
        };
        last = now;
        if equal + 1 >= QUIET_READS || start.elapsed() >= QUIET_LIMIT {
            return last;
        }
        thread::sleep(QUIET_STEP);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fields_are_read_in_bytes() {
        let text = "Rss:                2048 kB\nPss:                1024 kB\n";
        assert_eq!(field(text, "Rss:"), Some(2048 * 1024));
        assert_eq!(field(text, "Pss:"), Some(1024 * 1024));
        assert_eq!(field(text, "VmRSS:"), None);
    }

    #[test]
    fn this_process_is_resident() {
        let me = process(std::process::id()).unwrap();
        assert!(me.rss > 0 && me.pss > 0 && me.pss <= me.rss, "{me:?}");
    }
}
