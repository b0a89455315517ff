//! bloomlab ended by a signal takes its exec programs with it: each program runs in a
//! process group of its own (the terminal's SIGINT never reaches it), so bloomlab kills
//! those groups before it dies. Reproduced with a real program that starts a child and never
//! replies, and real signals.

#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::BIN;

/// Reads the header, starts a sleeper in its own group, writes the sleeper's id and waits.
const STRAGGLER: &str = "read -r header\nsleep 300 &\necho $! > \"$1\"\nwait\n";

fn alive(pid: i32) -> bool {
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    unsafe { libc::kill(pid, 0) == 0 }
}

/// Polls `done` for up to 10 s.
fn within_10s(mut done: impl FnMut() -> bool) -> bool {
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(10) {
        if done() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

fn killed_by(signal: libc::c_int, dir: &Path) {
    let script = dir.join("straggler.sh");
    let pidfile = dir.join(format!("sleeper-{signal}"));
    fs::write(&script, STRAGGLER).unwrap();
    let filter = format!("exec:bash {} {}", script.display(), pidfile.display());
    let mut bloomlab = Command::new(BIN)
        .args([
            "sweep-size",
            "--filter",
            &filter,
            "--n",
            "200",
            "--m",
            "2000",
        ])
        .args(["--queries", "1000", "--quiet"])
        .env("BLOOMLAB_EXEC_TIMEOUT", "120")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    assert!(
        within_10s(|| fs::read_to_string(&pidfile).is_ok_and(|t| t.ends_with('\n'))),
        "the program never started"
    );
    let sleeper: i32 = fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(sleeper));
    // SAFETY: kill(2) takes no pointers.
    unsafe {
        libc::kill(bloomlab.id() as i32, signal);
    }
    let status = bloomlab.wait().unwrap();
    assert!(!status.success(), "{status:?}");
    assert!(
        within_10s(|| !alive(sleeper) || zombie(sleeper)),
        "the program's child {sleeper} outlived bloomlab ended by signal {signal}"
    );
}

/// A killed process whose parent (the program's shell, also killed) is not yet reaped.
fn zombie(pid: i32) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| {
            stat.rsplit(')')
                .next()
                .unwrap_or("")
                .trim_start()
                .starts_with('Z')
        })
        .unwrap_or(false)
}

#[test]
fn sigint_ends_the_exec_programs_group_too() {
    let dir = tempfile::tempdir().unwrap();
    killed_by(libc::SIGINT, dir.path());
}

#[test]
fn sigterm_ends_the_exec_programs_group_too() {
    let dir = tempfile::tempdir().unwrap();
    killed_by(libc::SIGTERM, dir.path());
}
