//! reproduce and check against hostile folders (issue 43), with the real binary: an
//! experiment named like a file reproduce writes itself, a broken experiment file beside a
//! sub-suite, an experiment whose every filter is skipped in a fresh results folder, a
//! results file that is a FIFO, committed values that are not numbers under `--reseed`, and
//! a run ended by a signal.

#![cfg(unix)]

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::BIN;
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A small definition (five rows, milliseconds).
const SMALL: &str = "command = \"sweep-size\"\n[params]\nn = 500\nk = 4\nbits_per_key = \"4..12:2\"\nqueries = 5000\n";

fn suite(command: &str, experiments: &Path, results: &Path, extra: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.arg(command)
        .arg("--experiments")
        .arg(experiments)
        .arg("--results")
        .arg(results)
        .arg("--quiet")
        .args(extra);
    cmd
}

fn output(mut cmd: Command) -> Output {
    cmd.output().unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A scratch folder with an `experiments` folder holding `files` (name, text).
fn folder(files: &[(&str, &str)]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let experiments = dir.path().join("experiments");
    for (name, text) in files {
        let path = experiments.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let results = dir.path().join("results");
    (dir, experiments, results)
}

#[test]
fn an_experiment_named_like_a_file_of_the_whole_run_is_refused_before_work() {
    for name in ["claims.toml", "index.toml"] {
        let (_dir, experiments, results) = folder(&[(name, SMALL)]);
        let out = output(suite("reproduce", &experiments, &results, &[]));
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{said}");
        assert!(said.contains("would write over"), "{said}");
        assert!(!results.exists(), "{name}: results written");
    }
}

#[test]
fn a_broken_experiment_file_leaves_the_results_folder_untouched() {
    let (_dir, experiments, results) = folder(&[
        ("small.toml", SMALL),
        (
            "broken.toml",
            "command = \"sweep-size\"\n[params]\nn = \"many\"\n",
        ),
        ("wild/small.toml", SMALL),
    ]);
    let out = output(suite("reproduce", &experiments, &results, &[]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        !results.exists(),
        "the results folder (or wild/) was created"
    );
}

#[test]
fn files_never_written_are_not_said_to_be_kept() {
    // An audit of an adapters folder without `list`: every filter skipped.
    let (dir, experiments, results) = folder(&[("small.toml", SMALL)]);
    let adapters = dir.path().join("adapters");
    fs::create_dir(&adapters).unwrap();
    let audit = format!(
        "command = \"audit\"\n[params]\naudited = \"adapters\"\nadapters = \"{}\"\nn = 1000\n",
        adapters.display()
    );
    fs::write(experiments.join("adapters.toml"), audit).unwrap();
    let out = output(suite("reproduce", &experiments, &results, &[]));
    let said = stderr(&out);
    assert!(!said.contains("kept"), "{said}");
    assert!(said.contains("wrote no"), "{said}");
    assert!(!results.join("adapters.csv").exists());
}

/// Runs `cmd` for at most 60 s; None when it had to be killed.
fn within_a_minute(mut cmd: Command) -> Option<Output> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while started.elapsed() < Duration::from_secs(60) {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

#[test]
fn a_results_file_that_is_a_fifo_is_refused_not_waited_on() {
    let (_dir, experiments, results) = folder(&[("small.toml", SMALL)]);
    let out = output(suite("reproduce", &experiments, &results, &[]));
    assert!(out.status.success(), "{}", stderr(&out));
    let md = results.join("small.md");
    fs::remove_file(&md).unwrap();
    let made = Command::new("mkfifo").arg(&md).status().unwrap();
    assert!(made.success());
    let out = within_a_minute(suite("check", &experiments, &results, &[])).expect("check hung");
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("not a regular file"), "{said}");
}

#[test]
fn a_committed_value_that_is_not_a_number_fails_the_reseeded_check() {
    let (_dir, experiments, results) = folder(&[("small.toml", SMALL)]);
    let out = output(suite("reproduce", &experiments, &results, &[]));
    assert!(out.status.success(), "{}", stderr(&out));
    let reseed = ["--reseed", "--reseed-seed", "3"];
    let out = output(suite("check", &experiments, &results, &reseed));
    assert!(out.status.success(), "{}", stderr(&out));
    let csv = results.join("small.csv");
    let text = fs::read_to_string(&csv).unwrap();
    let header: Vec<&str> = text.lines().next().unwrap().split(',').collect();
    let at = header.iter().position(|h| *h == "fpr_measured").unwrap();
    let edit = |cell: &str| -> String {
        let mut lines: Vec<String> = text.lines().map(String::from).collect();
        let mut fields: Vec<String> = lines[2].split(',').map(String::from).collect();
        fields[at] = cell.to_string();
        lines[2] = fields.join(",");
        lines.join("\n") + "\n"
    };
    for cell in ["NaN", "x"] {
        fs::write(&csv, edit(cell)).unwrap();
        let out = output(suite("check", &experiments, &results, &reseed));
        let said = stderr(&out);
        assert_eq!(out.status.code(), Some(1), "{cell}: {said}");
        assert!(said.contains("is not a number"), "{cell}: {said}");
    }
    // A column the run does not write, in the header and every row.
    let extra: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{line},{}", if i == 0 { "extra" } else { "1" }))
        .collect();
    fs::write(&csv, extra.join("\n") + "\n").unwrap();
    let out = output(suite("check", &experiments, &results, &reseed));
    let said = stderr(&out);
    assert_eq!(out.status.code(), Some(1), "{said}");
    assert!(said.contains("committed columns"), "{said}");
}

/// Names under `results`, hidden ones included, sub-folders' too.
fn names(results: &Path) -> Vec<String> {
    let mut found = Vec::new();
    if let Ok(entries) = fs::read_dir(results) {
        for entry in entries.flatten() {
            found.push(entry.file_name().to_string_lossy().into_owned());
            found.extend(names(&entry.path()));
        }
    }
    found
}

fn ended_by(signal: libc::c_int) {
    let compare = fs::read_to_string(Path::new(ROOT).join("experiments/compare.toml")).unwrap();
    let (_dir, experiments, results) = folder(&[("compare.toml", &compare)]);
    let mut child = suite("reproduce", &experiments, &results, &[])
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let staging = |results: &Path| names(results).iter().any(|n| n.starts_with(".staging"));
    while !(results.join(".reproduce.lock").exists() && staging(&results)) {
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "no lock or staging"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // SAFETY: kill(2) takes no pointers.
    unsafe {
        libc::kill(child.id() as i32, signal);
    }
    let status = child.wait().unwrap();
    assert!(!status.success(), "{signal}: {status:?}");
    let left = names(&results);
    assert!(
        !left
            .iter()
            .any(|n| n == ".reproduce.lock" || n.starts_with(".staging")),
        "signal {signal} left {left:?}"
    );
}

#[test]
fn a_signal_during_reproduce_removes_the_lock_and_the_staging_folder() {
    for signal in [libc::SIGTERM, libc::SIGINT, libc::SIGHUP] {
        ended_by(signal);
    }
}
