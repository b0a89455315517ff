//! The program protocol (`docs/PROTOCOL.md`): bloomlab driving a filter kept by another
//! process over a pipe, as `--filter exec:COMMAND` names it.

pub mod child_groups;
pub mod flags;
pub mod lines;
pub mod memory;
pub mod options;
pub mod reply;
pub mod session;
pub mod sizing;
pub mod timeout;

use std::sync::Mutex;

/// Most keys in one `insert` or `query` request (the protocol's bound).
pub const EXEC_BATCH: usize = 65_536;
/// Seconds bloomlab waits for a reply, unless `BLOOMLAB_EXEC_TIMEOUT` says otherwise.
pub const DEFAULT_EXEC_TIMEOUT: f64 = 60.0;
/// The environment variable holding the timeout in seconds.
pub const EXEC_TIMEOUT_VAR: &str = "BLOOMLAB_EXEC_TIMEOUT";
/// Longest reply line bloomlab reads: a query reply has at most [`EXEC_BATCH`] characters, a
/// JSON reply (hello, stats, error) at most this; a longer line is a failure, not memory.
pub const MAX_REPLY_BYTES: usize = 1 << 20;

/// The lock, also after a panic elsewhere (the session records its own failures).
pub fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}
