//! reproduce and check against copies of experiments/ and results/: the exact same-seed
//! check, the reseeded family and its false-alarm rate, and definitions refused before work.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::common::copy_dir;
use assert_cmd::Command;
use bloomlab::suite::{self, Comparisons, Reseed, holm_rejections, normal_two_sided_p};
use indicatif::ProgressBar;
use predicates::prelude::*;
use rand::{RngExt, SeedableRng};
use rand_pcg::Pcg64;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// A small definition (five rows, milliseconds) for the tests that only need one to run.
const SMALL: &str = "command = \"sweep-size\"\n[params]\nn = 500\nk = 4\nbits_per_key = \"4..12:2\"\nqueries = 5000\n";

/// A scratch copy of the checked-in experiments named (all when empty) and their results.
fn scratch_of(names: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let experiments = dir.path().join("experiments");
    let results = dir.path().join("results");
    copy_dir(&Path::new(ROOT).join("experiments"), &experiments, names);
    copy_dir(&Path::new(ROOT).join("results"), &results, names);
    (dir, experiments, results)
}

/// [`scratch_of`], its results reproduced: the files the run of those experiments alone
/// writes (its own claims ledger and page among them), which `check` compares.
fn reproduced_of(names: &[&str]) -> (tempfile::TempDir, PathBuf, PathBuf) {
    let (dir, experiments, results) = scratch_of(names);
    run("reproduce", &experiments, &results)
        .arg("--quiet")
        .assert()
        .success();
    (dir, experiments, results)
}

fn run(command: &str, experiments: &Path, results: &Path) -> Command {
    let mut cmd = crate::common::command();
    cmd.arg(command)
        .arg("--experiments")
        .arg(experiments)
        .arg("--results")
        .arg(results);
    cmd
}

fn check(experiments: &Path, results: &Path) -> Command {
    run("check", experiments, results)
}

/// Every file under `dir`, hidden ones included, with its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut files = BTreeMap::new();
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files.extend(snapshot(&path));
        } else {
            files.insert(path.clone(), fs::read(&path).unwrap());
        }
    }
    files
}

/// Replaces the field `column` of data row `row` (from 1) of a CSV file; returns the old value.
fn edit_csv(path: &Path, row: usize, column: &str, edit: impl Fn(&str) -> String) -> String {
    let text = fs::read_to_string(path).unwrap();
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let at = lines[0].split(',').position(|h| h == column).unwrap();
    let mut fields: Vec<String> = lines[row].split(',').map(String::from).collect();
    let old = fields[at].clone();
    fields[at] = edit(&old);
    lines[row] = fields.join(",");
    fs::write(path, lines.join("\n") + "\n").unwrap();
    old
}

/// The reseeded check passes on committed results and says its seed and family-wise rate.
/// On one experiment: the whole suite is checked with fresh seeds by `.ci/run`
/// (`check --reseed`), and with the same seeds by
/// [`reproduce_regenerates_the_committed_results_byte_for_byte`].
#[test]
fn committed_results_pass_reseeded() {
    let (_dir, experiments, results) = reproduced_of(&["sweep-k"]);
    check(&experiments, &results)
        .args(["--reseed", "--reseed-seed", "3"])
        .assert()
        .success()
        .stdout(predicate::str::contains("reseeded: --reseed-seed 3"))
        .stdout(predicate::str::contains(
            "family-wise false-alarm rate 0.001",
        ));
}

/// The whole suite, run once, writes exactly the committed files, byte for byte, and meets
/// every expectation (`reproduce` fails otherwise). That is also what `check` with the same
/// seeds asks of the committed results (the same exporter renders what it compares, every
/// file on both sides, the expectations): running it over the suite would repeat this run.
#[test]
fn reproduce_regenerates_the_committed_results_byte_for_byte() {
    let dir = tempfile::tempdir().unwrap();
    run(
        "reproduce",
        &Path::new(ROOT).join("experiments"),
        dir.path(),
    )
    .assert()
    .success()
    .stderr(predicate::str::contains("sweep-k"));
    let adapters = std::process::Command::new(Path::new(ROOT).join("adapters/list"))
        .arg("--manifest")
        .output()
        .unwrap();
    let manifest = String::from_utf8_lossy(&adapters.stdout);
    let all_ready = adapters.status.success()
        && manifest
            .lines()
            .all(|line| line.split('\t').nth(1) == Some("ready"));
    if !all_ready {
        eprintln!(
            "SKIPPED: results/audit-adapters.* and index.html not compared: not every adapter is installed \
             (run adapters/install, as .ci/run does):\n{manifest}"
        );
    }
    // The suite and each sub-suite (`results/wild/`), each in its own folder.
    for sub in std::iter::once("").chain(suite::SUB_SUITES) {
        let committed_dir = Path::new(ROOT).join("results").join(sub);
        let fresh_dir = dir.path().join(sub);
        for entry in fs::read_dir(&committed_dir).unwrap() {
            let committed = entry.unwrap().path();
            let name = committed
                .file_name()
                .unwrap()
                .to_string_lossy()
                .into_owned();
            // Every committed file, advise's too: its timings are not among them.
            if !committed.is_file()
                || (!all_ready && (name.starts_with("audit-adapters.") || name == "index.html"))
            {
                continue;
            }
            assert_eq!(
                fs::read(&committed).unwrap(),
                fs::read(fresh_dir.join(&name)).unwrap(),
                "{}",
                committed.display()
            );
        }
        // And no file the run writes is missing from the committed results (but the lock it
        // held, hidden and ignored by git).
        for entry in fs::read_dir(&fresh_dir).unwrap() {
            let fresh = entry.unwrap().path();
            let name = fresh.file_name().unwrap();
            assert!(
                !fresh.is_file()
                    || name.to_string_lossy().starts_with('.')
                    || committed_dir.join(name).is_file(),
                "{} is written but not committed",
                fresh.display()
            );
        }
    }
    // advise's timings and what is made of them: in full, in the folder git ignores, on a
    // page naming the CPU.
    let timings = dir.path().join("timings");
    for ext in ["csv", "md", "svg"] {
        assert!(timings.join(format!("advise.{ext}")).is_file(), "{ext}");
    }
    let full = fs::read_to_string(timings.join("advise.csv")).unwrap();
    assert!(full.lines().next().unwrap().contains("cost_ns"));
    let page = fs::read_to_string(timings.join("index.html")).unwrap();
    assert!(page.contains("bloomlab timings on ") && page.contains("vector path"));
    let ignored = fs::read_to_string(Path::new(ROOT).join(".gitignore")).unwrap();
    assert!(ignored.lines().any(|l| l == "/results/timings/"));
    let staging = fs::read_dir(dir.path()).unwrap().any(|e| {
        e.unwrap()
            .file_name()
            .to_string_lossy()
            .starts_with(".staging")
    });
    assert!(!staging, "the staging folder is removed");
}

#[test]
fn an_edited_count_fails_the_same_seed_check_with_was_and_now() {
    let (_dir, experiments, results) = reproduced_of(&["sweep-k"]);
    check(&experiments, &results).assert().success();
    let path = results.join("sweep-k.csv");
    let count = edit_csv(&path, 7, "false_positives", |v| {
        (v.parse::<u64>().unwrap() + 1).to_string()
    });
    let edited = count.parse::<u64>().unwrap() + 1;
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(format!(
            "sweep-k: row 7: column false_positives was {edited}, now {count}"
        )));
}

#[test]
fn a_rate_moved_by_a_quarter_fails_the_same_seed_check() {
    // Statistically a 28% change of one rate is within tolerance; with the same seeds it is
    // a different result.
    let (_dir, experiments, results) = reproduced_of(&["sweep-k"]);
    let path = results.join("sweep-k.csv");
    let rate = edit_csv(&path, 1, "fpr_measured", |v| {
        format!("{}", v.parse::<f64>().unwrap() * 1.28)
    });
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "sweep-k: row 1: column fpr_measured was ",
        ))
        .stderr(predicate::str::contains(format!(", now {rate}")));
}

#[test]
fn timings_are_not_compared() {
    let (_dir, experiments, results) = reproduced_of(&["sweep-k"]);
    let path = results.join("sweep-k.csv");
    let text = fs::read_to_string(&path).unwrap();
    let timed: Vec<String> = text
        .lines()
        .enumerate()
        .map(|(i, line)| format!("{line},{}", if i == 0 { "ns_query" } else { "12.5" }))
        .collect();
    fs::write(&path, timed.join("\n") + "\n").unwrap();
    check(&experiments, &results).assert().success();
}

#[test]
fn a_missing_or_extra_results_file_fails() {
    let (_dir, experiments, results) = reproduced_of(&["overfill"]);
    fs::remove_file(results.join("overfill.csv")).unwrap();
    check(&experiments, &results)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("overfill: missing: "));
    let (_dir, experiments, results) = reproduced_of(&["overfill"]);
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
    let (_dir, experiments, results) = reproduced_of(&["flawed-hash"]);
    check(&experiments, &results)
        .assert()
        .success()
        .stdout(predicate::str::contains("fail (expected fail)"));
    check(&experiments, &results)
        .args(["--reseed", "--reseed-seed", "5"])
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
    check(&experiments, &results)
        .args(["--reseed", "--reseed-seed", "5"])
        .assert()
        .code(1)
        .stderr(predicate::str::contains("lost its teeth"));
}

/// `check` on a folder holding the sweep-size definition edited by `edit`: it must exit 2
/// with every one of `expected` in its error.
fn refused(edit: impl Fn(&str) -> String, expected: &[&str]) {
    let (_dir, experiments, results) = scratch_of(&["sweep-size"]);
    let path = experiments.join("sweep-size.toml");
    let text = fs::read_to_string(&path).unwrap();
    fs::write(&path, edit(&text)).unwrap();
    let mut assert = check(&experiments, &results).assert().code(2);
    for part in expected {
        assert = assert.stderr(predicate::str::contains(*part));
    }
}

#[test]
fn malformed_definitions_name_file_line_key_and_expected_type() {
    refused(
        |t| t.replace("queries = 60000", "querys = 60000"),
        &["sweep-size.toml: line 8: key `querys`", "unknown key"],
    );
    refused(
        |t| t.replace("\nk = 4\n", "\nk = 0\n"),
        &["sweep-size.toml: line 6: key `k` = 0", "allowed: 1..=64"],
    );
    refused(
        |t| t.replace("\nk = 4\n", "\nk = \"4,,6\"\n"),
        &["sweep-size.toml: line 6: key `k` = \"4,,6\"", "empty item"],
    );
    refused(
        |t| t.replace("\nk = 4\n", "\nk = true\n"),
        &["sweep-size.toml: line 6: key `k` = true: expected a number"],
    );
    refused(
        |t| t.replace("\nn = 4000\n", "\nn = \"many\"\n"),
        &[
            "line 5: key `n` = \"many\"",
            "is not a whole non-negative number",
        ],
    );
    refused(
        |t| t.replace("sweep-size\"", "sweep-sise\""),
        &["line 1: key `command`", "unknown experiment 'sweep-sise'"],
    );
}

#[test]
fn a_file_that_is_not_utf8_is_named_with_its_line() {
    let (_dir, experiments, results) = scratch_of(&["sweep-size"]);
    let path = experiments.join("sweep-size.toml");
    let mut bytes = fs::read(&path).unwrap();
    let second_line = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    bytes.insert(second_line + 3, 0xE9);
    fs::write(&path, bytes).unwrap();
    check(&experiments, &results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "sweep-size.toml: line 2: not UTF-8 text (byte 0xE9 at column 4)",
        ));
}

#[test]
fn every_invalid_file_is_listed_before_anything_runs() {
    let (_dir, experiments, results) = scratch_of(&["sweep-size", "sweep-k", "overfill"]);
    fs::write(
        experiments.join("zz-one.toml"),
        "command = \"sweep-k\"\n[params]\nk = true\n",
    )
    .unwrap();
    fs::write(
        experiments.join("zz-two.toml"),
        "command = \"overfill\"\nquerys = 3\n",
    )
    .unwrap();
    let before = snapshot(&results);
    run("reproduce", &experiments, &results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("2 experiment files are invalid"))
        .stderr(predicate::str::contains(
            "zz-one.toml: line 3: key `k` = true",
        ))
        .stderr(predicate::str::contains(
            "zz-two.toml: line 2: key `querys`",
        ))
        // Nothing ran: reproduce prints a line per experiment run.
        .stderr(predicate::str::contains("rows").not());
    assert_eq!(snapshot(&results), before);
}

#[test]
fn a_failing_later_experiment_leaves_the_results_untouched() {
    let (_dir, experiments, results) = scratch_of(&["sweep-size", "sweep-k"]);
    fs::write(experiments.join("aa-small.toml"), SMALL).unwrap();
    // Each value in range, but seed-check takes one k: the plan refuses it when the files are
    // read, before the valid experiments before it run.
    fs::write(
        experiments.join("zz-fails.toml"),
        "command = \"seed-check\"\n[params]\nn = 500\nk = [4, 6]\n",
    )
    .unwrap();
    let before = snapshot(&results);
    run("reproduce", &experiments, &results)
        .assert()
        .code(2)
        .stderr(predicate::str::contains("zz-fails.toml: line 4: key `k`"))
        .stderr(predicate::str::contains("rows").not());
    assert_eq!(snapshot(&results), before, "results/ changed");
    let leftovers: Vec<_> = fs::read_dir(&results)
        .unwrap()
        .flatten()
        .filter(|e| e.path().is_dir())
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// A folder holding [`SMALL`] alone, and an empty results folder beside it.
fn small() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let experiments = dir.path().join("experiments");
    let results = dir.path().join("results");
    fs::create_dir_all(&experiments).unwrap();
    fs::create_dir_all(&results).unwrap();
    fs::write(experiments.join("small.toml"), SMALL).unwrap();
    (dir, experiments, results)
}

#[cfg(unix)]
#[test]
fn results_are_created_with_the_users_umask() {
    use std::os::unix::fs::PermissionsExt;
    for (umask, mode) in [("022", 0o644), ("077", 0o600), ("002", 0o664)] {
        let (_dir, experiments, results) = small();
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("umask {umask} && exec \"$0\" \"$@\""))
            .arg(assert_cmd::cargo::cargo_bin("bloomlab"))
            .args(["reproduce", "--quiet", "--experiments"])
            .arg(&experiments)
            .arg("--results")
            .arg(&results)
            .status()
            .unwrap();
        assert!(status.success());
        for ext in ["csv", "md", "svg"] {
            let meta = fs::metadata(results.join(format!("small.{ext}"))).unwrap();
            assert_eq!(
                meta.permissions().mode() & 0o777,
                mode,
                "umask {umask}, .{ext}"
            );
        }
    }
}

#[cfg(unix)]
#[test]
fn a_result_that_is_a_symbolic_link_stays_one() {
    let (dir, experiments, results) = small();
    let elsewhere = dir.path().join("elsewhere");
    fs::create_dir(&elsewhere).unwrap();
    fs::write(elsewhere.join("small.csv"), "old\n").unwrap();
    let link = results.join("small.csv");
    std::os::unix::fs::symlink("../elsewhere/small.csv", &link).unwrap();
    run("reproduce", &experiments, &results)
        .arg("--quiet")
        .assert()
        .success();
    assert!(
        fs::symlink_metadata(&link)
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let written = fs::read_to_string(elsewhere.join("small.csv")).unwrap();
    assert!(written.starts_with("experiment,"), "{written}");
    check(&experiments, &results).assert().success();
}

/// The family-wise false-alarm rate of Holm's procedure over an artificial family shaped like
/// `check --reseed`'s (per row a rate and a fill that correlate at 0.5 and a bits check, and
/// two verdicts; 92 comparisons at α = 0.001, 404 at 0.05 as in `check --reseed`), all
/// hypotheses true, measured over many families.
/// Bound: the rate is at most α plus three of its binomial standard errors over the families.
#[test]
fn the_reseeded_family_keeps_its_family_wise_bound() {
    let mut rng = Pcg64::seed_from_u64(14);
    let mut normal = move || {
        // Box-Muller from two uniforms in (0, 1].
        let (u, v) = (1.0 - rng.random::<f64>(), rng.random::<f64>());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    };
    // At the default α the family is smaller, so that enough families fit in a fast test.
    for (alpha, rows, families) in [(0.001, 30, 100_000), (0.05, 134, 4_000)] {
        let (mut alarms, mut uncorrected) = (0, 0);
        for _ in 0..families {
            let mut p = Vec::with_capacity(3 * rows + 2);
            for _ in 0..rows {
                let rate = normal();
                let fill = 0.5 * rate + 0.75f64.sqrt() * normal();
                p.extend([rate, fill, normal()].map(normal_two_sided_p));
            }
            p.extend([normal(), normal()].map(normal_two_sided_p));
            alarms += holm_rejections(&p, alpha).contains(&true) as u32;
            uncorrected += p.iter().any(|&p| p < alpha) as u32;
        }
        let rate = alarms as f64 / families as f64;
        let tolerance = 3.0 * (alpha * (1.0 - alpha) / families as f64).sqrt();
        eprintln!(
            "α = {alpha}, {} comparisons: family-wise false alarms {alarms} / {families} = {rate:.5}",
            3 * rows + 2
        );
        assert!(rate <= alpha + tolerance, "α = {alpha}: measured {rate}");
        // The simulation can see an excess: without the correction nearly every family fails.
        assert!(uncorrected as f64 / families as f64 > 10.0 * alpha);
    }
}

/// The same with real runs: a small sweep committed at one pair of seeds and checked with
/// fresh ones, many times, through `reproduce` and `check --reseed` themselves, at α = 0.1
/// (where a few hundred runs can measure the rate). Bound as above.
#[test]
fn real_reseeded_checks_keep_their_family_wise_bound() {
    let (_dir, experiments, results) = small();
    let (alpha, runs) = (0.1, 300);
    let progress = ProgressBar::hidden();
    let mut alarms = 0;
    let mut members = 0;
    for run in 0..runs {
        let text = format!(
            "{SMALL}seed = {}\nhash_seed = {}\n",
            1000 + 2 * run,
            1001 + 2 * run
        );
        fs::write(experiments.join("small.toml"), text).unwrap();
        let definitions = suite::load_definitions(&experiments).unwrap();
        suite::reproduce(&definitions, &results, &progress, |_, _, _| {}).unwrap();
        let reseed = Reseed {
            seed: run,
            family_alpha: alpha,
        };
        let report = suite::check(&definitions, &results, Some(reseed), &[], &progress).unwrap();
        members = report.rows[0].compared;
        alarms += !report.failures.is_empty() as u32;
    }
    let rate = alarms as f64 / runs as f64;
    let tolerance = 3.0 * (alpha * (1.0 - alpha) / runs as f64).sqrt();
    eprintln!("α = {alpha}, {members} comparisons: false alarms {alarms} / {runs} = {rate:.3}");
    assert_eq!(members, 15, "a rate, a fill and a bits check per row");
    assert!(rate <= alpha + tolerance, "measured {rate}");
}

#[test]
fn a_family_of_one_is_a_plain_test() {
    let mut family = Comparisons::new(0.05);
    family.add(
        "one".into(),
        suite::Comparison {
            experiment: "x".into(),
            row: Some(1),
            quantity: "fpr_measured".into(),
            p_value: 0.04,
            detail: String::new(),
        },
    );
    assert_eq!(family.rejected(), vec![true]);
    assert_eq!(family.first_bound(), 0.05);
}

/// The experiment files built into the binary are the checked-in ones.
mod embedded {
    use std::path::Path;

    use bloomlab::suite::{EMBEDDED, embedded_definitions};

    #[test]
    fn the_embedded_files_are_the_checked_in_ones() {
        let folder = Path::new(env!("CARGO_MANIFEST_DIR")).join("experiments");
        let mut names: Vec<String> = std::fs::read_dir(&folder)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|name| name.ends_with(".toml"))
            .collect();
        names.sort();
        let embedded: Vec<&str> = EMBEDDED.iter().map(|(name, _)| *name).collect();
        assert_eq!(names, embedded, "add the new file to EMBEDDED");
        for (name, text) in EMBEDDED {
            assert_eq!(std::fs::read_to_string(folder.join(name)).unwrap(), text);
        }
        assert_eq!(embedded_definitions().unwrap().len(), EMBEDDED.len());
    }
}
