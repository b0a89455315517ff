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
}

/// Seconds per key operation assumed by the estimate: about 100 ns each on one core of this
/// kind of machine out of cache, shared by two cores. Rough on purpose: it only decides
/// whether to ask for `--yes`.
pub const SECONDS_PER_KEY_OPERATION: f64 = 50e-9;
/// The weight of one insert or query of `filter` with k hashes in m bits, in units of
/// [`SECONDS_PER_KEY_OPERATION`]: each cache line a key touches costs about 12 ns out of
/// cache on top of 20 ns (bloomlab's classic filter, `bloomlab bench`, December 2026:
/// 31.8 ns at k = 1, 162 ns at k = 12, m = 2^30), and a twentieth of that within 1 MiB
/// (3.5 to 12.3 ns at m = 40000). A program behind `exec:` (no line count) weighs 20: a
/// key crosses two pipes as text.
pub fn operation_weight(filter: crate::structures::FilterKind, k: u32, m: u64) -> f64 {
    let Some(lines) = filter.structure().lines_per_query else {
        return 20.0;
    };
    let ns = 20e-9 + 12e-9 * f64::from(lines(k));
    let in_cache = m <= 8 << 20;
    ns / if in_cache { 20.0 } else { 1.0 } / SECONDS_PER_KEY_OPERATION
}

/// A run expected to take longer than this asks for `--yes`.
pub const MAX_SECONDS: f64 = 600.0;

impl Cost {
    /// The sum of two costs run one after the other (the peak is the larger).
    pub fn then(self, other: Cost) -> Cost {
        Cost {
            key_operations: self.key_operations + other.key_operations,
            peak_bytes: self.peak_bytes.max(other.peak_bytes),
        }
    }

    /// Estimated seconds.
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
        if self.seconds() > MAX_SECONDS {
            return Err(Error::invalid(
                "yes",
                "not given",
                format!(
                    "the run is estimated at {:.0} minutes ({:.2e} key operations of 50 ns: each insert and query weighed by the cache lines it touches)",
                    self.seconds() / 60.0,
                    self.key_operations
                ),
                "fewer keys or queries, or --yes to run it anyway",
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
