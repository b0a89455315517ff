//! reproduce and check against copies of experiments/ and results/.

use std::fs;
use std::path::{Path, PathBuf};

use assert_cmd::Command;
use predicates::prelude::*;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

fn copy_dir(from: &Path, to: &Path) {
    fs::create_dir_all(to).unwrap();
    for entry in fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            fs::copy(&path, to.join(path.file_name().unwrap())).unwrap();
        }
    }
}

/// A scratch copy of the checked-in experiments and committed results.
fn scratch() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let experiments = dir.path().join("experiments");
    let results = dir.path().join("results");
    copy_dir(&Path::new(ROOT).join("experiments"), &experiments);
    copy_dir(&Path::new(ROOT).join("results"), &results);
    (dir, experiments, results)
}

fn check(experiments: &Path, results: &Path) -> Command {
    let mut cmd = Command::cargo_bin("bloomlab").unwrap();
    cmd.arg("check")
        .arg("--experiments")
        .arg(experiments)
        .arg("--results")
        .arg(results);
    cmd
}

#[test]
fn committed_results_pass_as_they_are_and_reseeded() {
    let (_dir, experiments, results) = scratch();
    check(&experiments, &results).assert().success();
    check(&experiments, &results)
        .args(["--reseed", "--reseed-seed", "3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("reseeded: --reseed-seed 3"));
}

#[test]
fn reproduce_regenerates_the_committed_results_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    Command::cargo_bin("bloomlab")
        .unwrap()
        .args(["reproduce", "--experiments"])
        .arg(Path::new(ROOT).join("experiments"))
        .arg("--results")
        .arg(dir.path())
        .assert()
        .success()
        .stderr(predicate::str::contains("sweep-k"));
    for entry in fs::read_dir(Path::new(ROOT).join("results")).unwrap() {
        let committed = entry.unwrap().path();
        if !committed.is_file() {
            continue;
        }
        let fresh = dir.path().join(committed.file_name().unwrap());
        assert_eq!(
            fs::read(&committed).unwrap(),
            fs::read(&fresh).unwrap(),
            "{}",
            committed.display()
        );
    }
}

#[test]
fn a_shifted_rate_is_named() {
    let (_dir, experiments, results) = scratch();
    let path = results.join("sweep-k.csv");
    let text = fs::read_to_string(&path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let header: Vec<&str> = lines[0].split(',').collect();
    let column = header.iter().position(|h| *h == "fpr_measured").unwrap();
    // Row 7 (k = 7): about 0.82% with a standard error near 0.04%; add 1% (25 standard errors).
    let mut fields: Vec<String> = lines[7].split(',').map(String::from).collect();
    let rate: f64 = fields[column].parse().unwrap();
    fields[column] = format!("{}", rate + 0.01);
    lines[7] = fields.join(",");
    fs::write(&path, lines.join("\n") + "\n").unwrap();
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "sweep-k: row 7: column fpr_measured drifted",
        ));
}

#[test]
fn a_missing_or_extra_results_file_fails() {
    let (_dir, experiments, results) = scratch();
    fs::remove_file(results.join("overfill.csv")).unwrap();
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("overfill: missing results file"));
    let (_dir, experiments, results) = scratch();
    fs::write(results.join("stale.csv"), "experiment\n").unwrap();
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "stale.csv: results file without an experiment",
        ));
}

#[test]
fn the_flawed_hash_must_keep_failing() {
    let (_dir, experiments, results) = scratch();
    check(&experiments, &results)
        .assert()
        .success()
        .stdout(predicate::str::contains("fail (expected fail)"));
    // Mend the flaw: the check has lost its teeth, and that is a failure.
    let path = experiments.join("flawed-hash.toml");
    let text = fs::read_to_string(&path)
        .unwrap()
        .replace("\"low-bits\"", "\"multiply-shift\"");
    fs::write(&path, text).unwrap();
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("lost its teeth"));
}

#[test]
fn malformed_definitions_name_file_line_and_field() {
    let (_dir, experiments, results) = scratch();
    let path = experiments.join("sweep-size.toml");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, text.replace("queries = 60000", "querys = 60000")).unwrap();
    check(&experiments, &results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("sweep-size.toml: line 8"))
        .stderr(predicate::str::contains("querys"));
    fs::write(&path, text.replace("\nk = 4\n", "\nk = 0\n")).unwrap();
    check(&experiments, &results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "sweep-size.toml: line 6: field `k`",
        ));
    fs::write(&path, text.replace("\nk = 4\n", "\nk = \"4,,6\"\n")).unwrap();
    check(&experiments, &results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "sweep-size.toml: line 6: field `k`",
        ));
}
