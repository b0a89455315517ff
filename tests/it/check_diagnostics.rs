//! What `check` says of a results folder that differs from a fresh run: each missing file
//! once as `missing: FILE`, a deleted or extra row as one line, every file a run writes
//! (the ledger and the page included) compared, exit 1 on any difference and 2 only for a
//! folder that does not exist, refused before work.

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

/// Named after an essay source, so that the run writes the claims ledger too.
const SMALL: &str = "command = \"sweep-size\"\n[params]\nn = 500\nk = 4\nbits_per_key = \"4..12:2\"\nqueries = 5000\n";

fn bloomlab(dir: &Path, command: &str, results: &str) -> Output {
    Command::new(BIN)
        .args([
            command,
            "--experiments",
            "experiments",
            "--results",
            results,
        ])
        .current_dir(dir)
        .output()
        .unwrap()
}

/// A small suite reproduced into `results/`.
fn reproduced() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("experiments")).unwrap();
    fs::write(dir.path().join("experiments/sweep-size.toml"), SMALL).unwrap();
    let out = bloomlab(dir.path(), "reproduce", "results");
    assert!(out.status.success(), "{out:?}");
    for name in ["claims.csv", "claims.md", "index.html", "sweep-size.csv"] {
        assert!(dir.path().join("results").join(name).is_file(), "{name}");
    }
    dir
}

fn fails(dir: &Path) -> Vec<String> {
    let out = bloomlab(dir, "check", "results");
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let lines = stderr.lines().filter(|l| l.starts_with("FAIL "));
    lines.map(String::from).collect()
}

#[test]
fn a_fresh_reproduction_passes() {
    let dir = reproduced();
    let out = bloomlab(dir.path(), "check", "results");
    assert!(out.status.success(), "{out:?}");
}

#[test]
fn an_empty_results_folder_is_every_file_missing_once() {
    let dir = reproduced();
    fs::remove_dir_all(dir.path().join("results")).unwrap();
    fs::create_dir(dir.path().join("results")).unwrap();
    let lines = fails(dir.path());
    for name in [
        "sweep-size.csv",
        "sweep-size.md",
        "sweep-size.svg",
        "claims.csv",
    ] {
        let said = lines
            .iter()
            .filter(|l| l.ends_with(&format!("missing: results/{name}")));
        assert_eq!(said.count(), 1, "{name}: {lines:#?}");
    }
    assert!(
        lines
            .iter()
            .any(|l| l.ends_with("missing: results/index.html"))
    );
    assert_eq!(lines.len(), 6, "nothing but the missing files: {lines:#?}");
}

#[test]
fn a_deleted_row_is_one_line_and_an_extra_row_another() {
    let dir = reproduced();
    let path = dir.path().join("results/sweep-size.csv");
    let text = fs::read_to_string(&path).unwrap();
    let mut rows: Vec<&str> = text.lines().collect();
    let second = rows.remove(2);
    fs::write(&path, rows.join("\n") + "\n").unwrap();
    assert_eq!(fails(dir.path()), ["FAIL sweep-size: row 2 missing"]);
    rows.insert(2, second);
    rows.push(second);
    fs::write(&path, rows.join("\n") + "\n").unwrap();
    assert_eq!(fails(dir.path()), ["FAIL sweep-size: row 6 added"]);
}

#[test]
fn the_whole_run_files_are_checked_too() {
    let dir = reproduced();
    let results = dir.path().join("results");
    fs::remove_file(results.join("claims.csv")).unwrap();
    fs::remove_file(results.join("index.html")).unwrap();
    let md = results.join("claims.md");
    let edited = fs::read_to_string(&md)
        .unwrap()
        .replacen("supported", "refuted", 1);
    fs::write(&md, edited).unwrap();
    let lines = fails(dir.path());
    assert!(lines.contains(&"FAIL missing: results/claims.csv".to_string()));
    assert!(lines.contains(&"FAIL missing: results/index.html".to_string()));
    assert!(
        lines
            .iter()
            .any(|l| l.starts_with("FAIL results/claims.md: line ")),
        "{lines:#?}"
    );
}

#[test]
fn a_results_folder_that_does_not_exist_is_refused_before_work() {
    let dir = reproduced();
    let out = bloomlab(dir.path(), "check", "nowhere");
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(out.stdout.is_empty(), "refused before any work");
    assert!(String::from_utf8_lossy(&out.stderr).contains("--results nowhere"));
}
