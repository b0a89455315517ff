//! The program protocol (`docs/PROTOCOL.md`, version 1): bloomlab driving a filter kept by
//! another process over a pipe, as `--filter exec:COMMAND` names it. Each program runs in a
//! process group of its own (`crate::signals`), answers one reply per request (`session`,
//! `reply`, keys as the protocol's lines in `lines`), silence times out (`session`), its
//! header carries its size and `--param` options (`options`), and its memory is read from
//! /proc (`memory`). The structure `exec` ([`crate::structures`]) is a [`Program`] behind
//! the filter interface; this module's items below are all the rest of bloomlab sees.

mod lines;
mod memory;
mod options;
mod probe;
mod reply;
mod running;
mod session;

use std::sync::Mutex;

pub use lines::check_text_keys;
pub use options::{KeyForm, ProgramOptions, ProgramParams};
pub use probe::{
    EXEC_SECONDS_PER_KEY, cpu_seconds, operations_seconds, own_cpu_seconds, probed_seconds_per_key,
    sizes_itself,
};
pub use running::{Memory, Program, Size};
pub use session::{exec_timeout, run_within};

/// Most keys in one `insert` or `query` request (the protocol's bound).
const EXEC_BATCH: usize = 65_536;
/// Longest reply line bloomlab reads: a query reply has at most [`EXEC_BATCH`] characters, a
/// JSON reply (hello, stats, error) at most this; a longer line is a failure, not memory.
const MAX_REPLY_BYTES: usize = 1 << 20;

/// The lock, also after a panic elsewhere (the session records its own failures).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// `word` as one word of a `sh -c` command line: as it is when it holds only letters,
/// digits and `._,:=/+-`, else single-quoted (a `'` inside written `'\''`).
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "._,:=/+-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}
