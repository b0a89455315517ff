//! Faults a careless or hostile user meets, reproduced with real processes: closed pipes,
//! full devices, FIFOs, concurrent runs.

#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_bloomlab");

const SMALL: &str = "command = \"sweep-size\"\n[params]\nn = 500\nk = 4\nbits_per_key = \"4..12:2\"\nqueries = 5000\n";

/// Runs `script` in bash with `$B` the bloomlab binary; the script echoes the statuses it wants.
fn bash(script: &str, dir: &Path) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("B", BIN)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An experiments folder holding a small sweep, and a results folder beside it.
fn small_suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("experiments")).unwrap();
    fs::write(dir.path().join("experiments/small.toml"), SMALL).unwrap();
    dir
}

#[test]
fn a_closed_stdout_ends_quietly_with_the_status_reached() {
    let dir = tempfile::tempdir().unwrap();
    for command in [
        "\"$B\" sweep-size --queries 2000 | head -c 0",
        "\"$B\" conform --filter classic --n 1000 --queries 2000 | head -c 0",
        "\"$B\" size --n 1000 --fpr 0.01 | head -c 0",
    ] {
        let out = bash(
            &format!("{command}; echo \"status ${{PIPESTATUS[0]}}\" >&2"),
            dir.path(),
        );
        let stderr = text(&out.stderr);
        assert!(stderr.contains("status 0"), "{command}: {stderr}");
        assert!(!stderr.contains("panicked"), "{command}: {stderr}");
    }
}

#[test]
fn a_full_stdout_keeps_the_status_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = bash(
        "\"$B\" sweep-size --queries 2000 --plot p.svg >/dev/full; echo \"status $?\" >&2",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("status 0"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.matches("stdout:").count(), 1, "{stderr}");
    assert!(
        dir.path().join("p.svg").exists(),
        "the plot was not written"
    );
}

#[test]
fn reproduce_into_a_closed_stderr_loses_nothing() {
    let dir = small_suite();
    let out = bash(
        "\"$B\" reproduce --experiments experiments --results results 2>&1 | head -c 0; \
         echo \"status ${PIPESTATUS[0]}\"",
        dir.path(),
    );
    assert!(
        text(&out.stdout).contains("status 0"),
        "{}",
        text(&out.stdout)
    );
    for ext in ["csv", "md", "svg"] {
        assert!(dir.path().join(format!("results/small.{ext}")).exists());
    }
}
