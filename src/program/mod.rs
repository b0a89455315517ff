//! The program protocol (`docs/PROTOCOL.md`, version 1): bloomlab driving a filter kept by
//! another process over a pipe, as `--filter exec:COMMAND` names it. Each program runs in a
//! process group of its own (`crate::signals`), answers one reply per request (`session`,
//! `reply`, keys as the protocol's lines in `lines`), silence times out (`timeout`), its
//! header carries its size and `--param` options (`sizing`), and its memory is read from
//! /proc (`memory`). The structure `exec` ([`crate::structures`]) is a [`Program`] behind
//! the filter interface; this module's items below are all the rest of bloomlab sees.

mod flags;
mod lines;
mod memory;
mod options;
mod probe;
mod reply;
mod running;
mod session;
mod sizing;
mod timeout;

use std::sync::Mutex;

pub use flags::ProgramParams;
pub use lines::check_text_keys;
pub use options::{KeyForm, ProgramOptions};
pub use probe::{
    EXEC_SECONDS_PER_KEY, cpu_seconds, operations_seconds, probed_seconds_per_key, sizes_itself,
};
pub use running::{Memory, Program, Size};
pub use session::{kill_group, wait_until};
pub use timeout::exec_timeout;

/// Most keys in one `insert` or `query` request (the protocol's bound).
const EXEC_BATCH: usize = 65_536;
/// Seconds bloomlab waits for a reply, unless `BLOOMLAB_EXEC_TIMEOUT` says otherwise.
const DEFAULT_EXEC_TIMEOUT: f64 = 60.0;
/// The environment variable holding the timeout in seconds.
const EXEC_TIMEOUT_VAR: &str = "BLOOMLAB_EXEC_TIMEOUT";
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_are_quoted_only_when_they_must_be() {
        assert_eq!(shell_word("adapters"), "adapters");
        assert_eq!(shell_word("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_word("my adapters"), "'my adapters'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("0.01,0.001"), "0.01,0.001");
        assert_eq!(shell_word("2..16:2"), "2..16:2");
    }
}
