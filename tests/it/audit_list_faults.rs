//! Adapters folders and programs that misbehave before any measurement (issue 43), with real
//! processes: a `list` that hangs (timed out, its group killed, and killed by SIGTERM too), a
//! `list` that prints nothing or garbage, the same folder twice, a run too long refused
//! before any adapter is started, and programs that cannot run refused in seconds.

#![cfg(unix)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::BIN;

/// An adapters folder whose `list` runs `script` (sh).
fn adapters(dir: &Path, script: &str) -> String {
    let folder = dir.join("adapters");
    fs::create_dir_all(&folder).unwrap();
    let list = folder.join("list");
    fs::write(&list, format!("#!/bin/sh\n{script}\n")).unwrap();
    fs::set_permissions(&list, fs::Permissions::from_mode(0o755)).unwrap();
    folder.display().to_string()
}

fn audit(folder: &str, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(["audit", "--audited", "adapters", "--adapters", folder])
        .args(["--n", "1000", "--no-memory", "--quiet"])
        .args(extra)
        .env("BLOOMLAB_EXEC_TIMEOUT", "1");
    cmd
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// True while `pid` runs (a zombie has ended).
fn running(pid: &str) -> bool {
    fs::read_to_string(format!("/proc/{}/stat", pid.trim())).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

fn refused_naming(out: &Output, words: &[&str]) {
    let said = stderr(out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    for word in words {
        assert!(said.contains(word), "{word}: {said}");
    }
}

#[test]
fn a_hanging_list_is_timed_out_and_its_group_killed() {
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    let folder = adapters(
        dir.path(),
        &format!("sleep 300 & echo $! > {}\nwait", pid.display()),
    );
    let out = audit(&folder, &[]).output().unwrap();
    refused_naming(&out, &[&folder, "did not finish within 1 s"]);
    // On a loaded machine the list may be killed before it starts its child: then there is
    // none to survive. A killed child is reaped by init a moment after the group's kill.
    let child = fs::read_to_string(&pid).unwrap_or_default();
    let started = Instant::now();
    while !child.trim().is_empty() && running(&child) && started.elapsed() < Duration::from_secs(10)
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        child.trim().is_empty() || !running(&child),
        "the list's child {child} survived"
    );
}

#[test]
fn sigterm_during_a_hanging_list_ends_its_group_too() {
    let dir = tempfile::tempdir().unwrap();
    let pid = dir.path().join("pid");
    let folder = adapters(
        dir.path(),
        &format!("sleep 300 & echo $! > {}\nwait", pid.display()),
    );
    let mut bloomlab = audit(&folder, &[])
        .env("BLOOMLAB_EXEC_TIMEOUT", "120")
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while fs::read_to_string(&pid).map_or(true, |p| p.trim().is_empty()) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "list never ran"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) takes no pointers.
    unsafe {
        libc::kill(bloomlab.id() as i32, libc::SIGTERM);
    }
    bloomlab.wait().unwrap();
    let child = fs::read_to_string(&pid).unwrap();
    let started = Instant::now();
    while running(&child) && started.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        !running(&child),
        "the list's child {child} survived SIGTERM"
    );
}

#[test]
fn a_list_that_prints_nothing_or_garbage_is_an_error_naming_the_folder() {
    for script in ["exit 0", "echo 'no tabs here'"] {
        let dir = tempfile::tempdir().unwrap();
        let folder = adapters(dir.path(), script);
        let out = audit(&folder, &[]).output().unwrap();
        refused_naming(&out, &[&folder, "printed no adapter line"]);
    }
}

#[test]
fn the_same_adapters_folder_twice_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let folder = adapters(dir.path(), "exit 0");
    let out = audit(&folder, &["--adapters", &format!("{folder}/.")])
        .output()
        .unwrap();
    refused_naming(&out, &["--adapters", "twice"]);
}

#[test]
fn a_run_too_long_is_refused_before_any_adapter_starts() {
    let dir = tempfile::tempdir().unwrap();
    let started = dir.path().join("started");
    let folder = adapters(dir.path(), "printf 'fake\\tready\\trun\\tok\\n'");
    let run = Path::new(&folder).join("run");
    fs::write(
        &run,
        format!("#!/bin/sh\ntouch {}\nexit 1\n", started.display()),
    )
    .unwrap();
    fs::set_permissions(&run, fs::Permissions::from_mode(0o755)).unwrap();
    let out = audit(&folder, &["--fpr", "1e-300"]).output().unwrap();
    refused_naming(&out, &["--yes"]);
    assert!(
        !started.exists(),
        "an adapter was started before the refusal"
    );
}

/// A run of `args` that must end within `seconds` (a program that cannot run is refused at
/// once; it waited 10 s for the program to go quiet).
fn ends_within(args: &[&str], seconds: u64) -> Output {
    let mut child = Command::new(BIN)
        .args(args)
        .env("BLOOMLAB_EXEC_TIMEOUT", "60")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while child.try_wait().unwrap().is_none() {
        if started.elapsed() > Duration::from_secs(seconds) {
            let _ = child.kill();
            panic!("{args:?} still running after {seconds} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_program_that_cannot_run_is_refused_in_seconds() {
    for filter in ["exec:/nonexistent/prog", "exec:true"] {
        let out = ends_within(&["sweep-size", "--filter", filter, "--n", "1000"], 5);
        assert!(!out.status.success(), "{filter}");
        assert!(stderr(&out).contains("exec program"), "{}", stderr(&out));
    }
    let out = ends_within(&["sweep-size", "--filter", "exec: ", "--n", "1000"], 5);
    refused_naming(&out, &["blank"]);
}
