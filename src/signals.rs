//! What SIGINT, SIGTERM or SIGHUP must undo before bloomlab ends, since no destructor runs
//! when a signal ends a process: the process groups of the programs it runs (`exec:`) are
//! killed, and the paths a run holds (a results folder's lock and staging folder) removed.
//! Each program runs in a group of its own, so the terminal's SIGINT never reaches it:
//! without this, a program (and whatever it started) would outlive bloomlab.
//!
//! The handler only reads atomics and calls kill(2), write(2), signal(2) and raise(3), all
//! async-signal-safe. Paths are removed by a thread that the first [`remove_on_signal`]
//! starts, which the handler wakes through a pipe; that thread then ends bloomlab by the same
//! signal, with its default action (the handler does so itself when there is no such thread).
//! At most [`SLOTS`] groups are covered at once (a run holds one per live program).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicI32, Ordering};
use std::sync::{Mutex, Once};

/// Live groups covered at once.
pub const SLOTS: usize = 256;

static GROUPS: [AtomicI32; SLOTS] = [const { AtomicI32::new(0) }; SLOTS];
static INSTALL: Once = Once::new();
/// The paths removed on a signal, each a file or a folder.
static PATHS: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());
/// The write end of the pipe that wakes the thread removing [`PATHS`]; -1 before it runs.
static WAKE: AtomicI32 = AtomicI32::new(-1);
static START_REMOVER: Once = Once::new();

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

/// Removes `path` (a file, or a folder with everything in it) if a signal ends bloomlab
/// before [`keep`] is called with it.
pub fn remove_on_signal(path: &Path) {
    INSTALL.call_once(install);
    START_REMOVER.call_once(start_remover);
    paths().push(path.to_path_buf());
}

/// Stops covering `path` (its owner removes it, or keeps it).
pub fn keep(path: &Path) {
    paths().retain(|p| p != path);
}

fn paths() -> std::sync::MutexGuard<'static, Vec<PathBuf>> {
    PATHS
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The thread that removes [`PATHS`] when the handler writes a signal's number to its pipe,
/// then ends the process by that signal.
fn start_remover() {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe(2) writes two descriptors into the array it is given.
    if unsafe { libc::pipe(fds.as_mut_ptr()) } != 0 {
        return;
    }
    let [read, write] = fds;
    let spawned = std::thread::Builder::new()
        .name("signal-cleanup".into())
        .spawn(move || {
            let mut signal: libc::c_int = 0;
            let size = std::mem::size_of::<libc::c_int>();
            // SAFETY: read(2) into a c_int this thread owns, at most its size.
            let got = unsafe { libc::read(read, (&raw mut signal).cast(), size) };
            if got != size as isize {
                return;
            }
            for path in paths().iter() {
                if std::fs::remove_dir_all(path).is_err() {
                    let _ = std::fs::remove_file(path);
                }
            }
            end_by(signal);
        });
    if spawned.is_ok() {
        WAKE.store(write, Ordering::SeqCst);
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
    let wake = WAKE.load(Ordering::SeqCst);
    let size = std::mem::size_of::<libc::c_int>();
    // SAFETY: write(2) of the handler's own argument, at most its size.
    if wake >= 0 && unsafe { libc::write(wake, (&raw const signal).cast(), size) } == size as isize
    {
        return;
    }
    end_by(signal);
}

/// Restores the default action of `signal` and raises it: it ends the process (in the
/// handler, as soon as the handler returns, the signal being blocked while it runs).
fn end_by(signal: libc::c_int) {
    // SAFETY: signal(2) and raise(3) take no pointers.
    unsafe {
        libc::signal(signal, libc::SIG_DFL);
        libc::raise(signal);
    }
}
