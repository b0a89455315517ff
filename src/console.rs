//! The one place that writes what a run prints: results to stdout, notes and progress to
//! stderr. Invariant: a closed or full stream never panics and never changes what a run
//! writes to files or the status it exits with (the exit-status contract of docs/GUIDE.md).
//!
//! - stdout: the first failed write (a closed pipe, `EPIPE`; a full device, `ENOSPC`; any
//!   other) closes stdout for the rest of the run; a closed pipe says nothing (its reader
//!   asked for no more), any other error says so once on stderr.
//! - stderr: notes are best effort; a failed write is dropped.

use std::io::{ErrorKind, Write};
use std::sync::atomic::{AtomicBool, Ordering};

static STDOUT_CLOSED: AtomicBool = AtomicBool::new(false);

/// Writes `text` to stdout and flushes it, unless stdout has failed before.
pub fn out(text: &str) {
    if STDOUT_CLOSED.load(Ordering::Relaxed) {
        return;
    }
    let mut stdout = std::io::stdout().lock();
    if let Err(error) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
    {
        STDOUT_CLOSED.store(true, Ordering::Relaxed);
        if error.kind() != ErrorKind::BrokenPipe {
            note(&format!(
                "stdout: {error}; the rest of the output is dropped"
            ));
        }
    }
}

/// [`out`] with a newline.
pub fn out_line(text: &str) {
    out(&format!("{text}\n"));
}

/// Writes one line to stderr, best effort.
pub fn note(text: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{text}");
}
