//! The process groups of the programs bloomlab runs (`exec:`), killed when SIGINT, SIGTERM
//! or SIGHUP ends bloomlab. Each program runs in a group of its own, so the terminal's
//! SIGINT never reaches it, and no destructor runs when a signal ends a process: without
//! this, a program (and whatever it started) would outlive bloomlab.
//!
//! The handler only reads atomics and calls kill(2), signal(2) and raise(3), all
//! async-signal-safe; it then ends bloomlab by the same signal, with its default action.
//! At most [`SLOTS`] groups are covered at once (a run holds one per live program).

use std::sync::Once;
use std::sync::atomic::{AtomicI32, Ordering};

/// Live groups covered at once.
pub const SLOTS: usize = 256;

static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static INSTALL: Once = Once::new();

/// The signals that end bloomlab and its programs' groups with it.
const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Covers the group led by `pid` (a child started with `process_group(0)`).
pub fn register(pid: i32) {
    INSTALL.call_once(install);
    for slot in &GROUPS {
        if slot
            .compare_exchange(0, pid, Ordering::SeqCst, Ordering::SeqCst)
            .is_ok()
        {
            return;
        }
    }
}

/// Stops covering the group led by `pid` (it has been killed and reaped).
pub fn unregister(pid: i32) {
    for slot in &GROUPS {
        let _ = slot.compare_exchange(pid, 0, Ordering::SeqCst, Ordering::SeqCst);
    }
}

fn install() {
    for signal in SIGNALS {
        // SAFETY: `on_signal` is an `extern "C" fn(c_int)` that stays valid for the whole
        // process and does only async-signal-safe work.
        unsafe {
            libc::signal(
                signal,
                on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t,
            );
        }
    }
}

extern "C" fn on_signal(signal: libc::c_int) {
    for slot in &GROUPS {
        let pid = slot.load(Ordering::SeqCst);
        if pid > 0 {
            // SAFETY: kill(2) takes no pointers; a group already gone is ESRCH, ignored.
            unsafe {
                libc::kill(-pid, libc::SIGKILL);
            }
        }
    }
    // SAFETY: restores the default action and re-raises: the signal is blocked while its
    // handler runs, so it ends the process as soon as the handler returns.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
