//! Refusals before work: output paths that cannot be written, and runs too large for this
//! machine, are refused (exit 2) before anything is measured.

use std::path::Path;

use crate::error::{Error, Result};

/// Refuses an output path whose folder does not exist or cannot be written, or that names a
/// folder. `flag` is the parameter's name (`out`, `plot`, `results`).
pub fn check_output(flag: &'static str, path: &Path) -> Result<()> {
    let special = std::fs::metadata(path).is_ok_and(|m| !m.is_file() && !m.is_dir());
    if special {
        // A FIFO or device is written into, not replaced: its folder need not be writable.
        return Ok(());
    }
    if path.is_dir() {
        return Err(Error::invalid(
            flag,
            path.display(),
            "is a folder",
            "a file path in a writable folder",
        ));
    }
    let folder = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        _ => Path::new("."),
    };
    if !folder.is_dir() {
        return Err(Error::invalid(
            flag,
            path.display(),
            format!("the folder {} does not exist", folder.display()),
            "a file path in a writable folder",
        ));
    }
    check_folder(flag, folder)
}

/// Refuses two outputs that name one file (through links too): the second would silently
/// replace the first.
pub fn check_distinct(first: (&'static str, &Path), second: (&'static str, &Path)) -> Result<()> {
    let land = |path: &Path| {
        crate::report::files::resolve_links(path)
            .ok()
            .and_then(|p| std::path::absolute(p).ok())
    };
    match (land(first.1), land(second.1)) {
        (Some(a), Some(b)) if a == b => Err(Error::invalid(
            second.0,
            second.1.display(),
            format!("is the file {} writes", crate::error::flag_name(first.0)),
            format!("a file other than {}'s", crate::error::flag_name(first.0)),
        )),
        _ => Ok(()),
    }
}

/// Refuses a folder that cannot be written, or that does not exist and cannot be created
/// (its nearest existing ancestor cannot be written).
pub fn check_folder(flag: &'static str, folder: &Path) -> Result<()> {
    let refuse = |reason: String| {
        Err(Error::invalid(
            flag,
            folder.display(),
            reason,
            "a folder that exists and can be written",
        ))
    };
    // The folder itself, or the nearest ancestor that exists: the one a create would write in.
    let existing = folder
        .ancestors()
        .map(|a| {
            if a.as_os_str().is_empty() {
                Path::new(".")
            } else {
                a
            }
        })
        .find(|a| a.exists())
        .unwrap_or(Path::new("."));
    if !existing.is_dir() {
        return refuse(format!("{} is not a folder", existing.display()));
    }
    // Writability is what the system says when asked to create a file there.
    match tempfile::tempfile_in(existing) {
        Ok(_) => Ok(()),
        Err(e) => refuse(format!("cannot be written ({})", e.kind())),
    }
}

/// What a run is expected to spend: key operations (inserts plus queries) and the largest
/// memory held at once.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cost {
    pub key_operations: f64,
    pub peak_bytes: f64,
    /// The seconds a run's own flag gives it, with the flag (advise's `--target-seconds`):
    /// a run whose least work is estimated beyond them asks for `--yes`.
    pub target: Option<(&'static str, u64)>,
}

/// The unit of [`Cost::key_operations`]: one key operation of this many seconds. The
/// estimate itself is [`operations_seconds`]; it only decides whether to ask for `--yes`,
/// and `bloomlab bench --estimates` checks it within a factor of 2 of the real time.
pub const SECONDS_PER_KEY_OPERATION: f64 = 50e-9;

/// Seconds one insert or query takes beyond its cache lines, and each cache line it touches,
/// by where a table of `bytes` lives: within L2 (2 MiB here), within L3 (32 MiB), or in
/// memory. Fitted to the CPU time of whole measurements of bloomlab's classic filter at
/// k = 7 and k = 40 and of the blocked design (`bloomlab bench --estimates`; the figures
/// are in docs/PERFORMANCE.md). Those lines are the k of an insert; an absent query reads
/// fewer, so a classic filter at its optimum costs a little less than this says.
fn line_cost(bytes: f64) -> (f64, f64) {
    if bytes <= f64::from(2u32 << 20) {
        (6e-9, 3.0e-9)
    } else if bytes <= f64::from(32u32 << 20) {
        (6e-9, 3.6e-9)
    } else {
        (6e-9, 9e-9)
    }
}

/// Seconds `operations` inserts and queries of `filter` with k hashes in a table of m bits
/// are expected to take on one core: `(base + lines · per line) · peer factor`, the lines
/// those its descriptor declares ([`crate::structures::Structure::lines_per_query`]),
/// base and per line by where the table lives ([`line_cost`]), the factor of a peer crate
/// from its descriptor ([`crate::structures::PeerCrate::slowdown_percent`]). A program behind
/// `exec:` has no line count: [`crate::program::operations_seconds`].
pub fn operations_seconds(
    filter: crate::structures::FilterKind,
    k: u32,
    m: u64,
    operations: f64,
) -> f64 {
    let Some(lines) = filter.structure().lines_per_query else {
        return crate::program::operations_seconds(operations, || filter.seconds_per_key());
    };
    let (base, per_line) = line_cost(m as f64 / 8.0);
    let factor = (filter.structure().origin.about())
        .map_or(1.0, |peer| f64::from(peer.slowdown_percent) / 100.0);
    operations * (base + per_line * f64::from(lines(k))) * factor
}

/// [`operations_seconds`] in units of [`SECONDS_PER_KEY_OPERATION`], for
/// [`Cost::key_operations`].
pub fn weighted_operations(
    filter: crate::structures::FilterKind,
    k: u32,
    m: u64,
    operations: f64,
) -> f64 {
    operations_seconds(filter, k, m, operations) / SECONDS_PER_KEY_OPERATION
}

/// [`weighted_operations`] of a filter fed the first n keys of a source, with what keys that
/// repeat add to a quotient filter ([`quotient::repeated_keys_seconds`]).
///
/// [`quotient::repeated_keys_seconds`]: crate::structures::quotient::repeated_keys_seconds
pub fn keyed_operations(
    (filter, keys, n): (&crate::structures::FilterKind, &crate::keys::KeySpec, u64),
    k: u32,
    m: u64,
    operations: f64,
) -> f64 {
    let repeats = crate::structures::quotient::repeated_keys_seconds(filter, keys, n, operations);
    weighted_operations(filter.clone(), k, m, operations) + repeats / SECONDS_PER_KEY_OPERATION
}

/// A run expected to take longer than this asks for `--yes`.
pub const MAX_SECONDS: f64 = 600.0;

impl Cost {
    /// A cost with no target of its own.
    pub fn new(key_operations: f64, peak_bytes: f64) -> Cost {
        Cost {
            key_operations,
            peak_bytes,
            target: None,
        }
    }

    /// The sum of two costs run one after the other (the peak is the larger).
    pub fn then(self, other: Cost) -> Cost {
        Cost {
            key_operations: self.key_operations + other.key_operations,
            peak_bytes: self.peak_bytes.max(other.peak_bytes),
            target: self.target.or(other.target),
        }
    }

    pub fn seconds(&self) -> f64 {
        self.key_operations * SECONDS_PER_KEY_OPERATION
    }

    /// Refuses (unless `yes`) a run expected to exceed [`MAX_SECONDS`] or the memory this
    /// machine has available, printing the estimate.
    pub fn check(&self, yes: bool) -> Result<()> {
        if yes {
            return Ok(());
        }
        let available = available_memory_bytes();
        if let Some(available) = available.filter(|&a| self.peak_bytes > a) {
            return Err(Error::invalid(
                "yes",
                "not given",
                format!(
                    "the run would hold about {:.1} GB at once, more than the {:.1} GB available",
                    self.peak_bytes / 1e9,
                    available / 1e9
                ),
                "smaller sizes, or --yes to try anyway",
            ));
        }
        if let Some((flag, target)) = self.target.filter(|&(_, t)| self.seconds() > t as f64) {
            return Err(Error::invalid(
                flag,
                target,
                format!(
                    "its least work is estimated at {:.0} s, more than --{flag} {target}",
                    self.seconds()
                ),
                format!(
                    "--{flag} {:.0} or more, fewer keys (--n), or --yes to run it anyway",
                    self.seconds().ceil()
                ),
            ));
        }
        if self.seconds() > MAX_SECONDS {
            return Err(Error::invalid(
                "yes",
                "not given",
                format!(
                    "the run is estimated at {:.0} minutes (each insert and query weighed by the structure, its k, where its table lives, the keys that repeat and, for a peer crate or a program, its measured speed)",
                    self.seconds() / 60.0,
                ),
                "fewer keys (--n) or queries, more distinct keys (--keys), or --yes to run it anyway",
            ));
        }
        Ok(())
    }
}

/// `MemAvailable` from /proc/meminfo, where the system offers it.
fn available_memory_bytes() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}
