//! `--shard I/N --partial FILE` and `bloomlab merge`: the N parts of a run, merged, print
//! and exit exactly as the single run (N = 1, 3, 7, and more shards than rows); merge
//! refuses, before work and naming the file, a part missing, given twice, of another
//! command or build, or whose filter was built differently.

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common;

use common::{bloomlab, text};

/// 3 blocks of queries per row, so that shards cut rows too.
const QUERIES: &str = "2500000";

/// Runs `command` whole once, then in each count of `shards` parts merged; asserts the same
/// stdout (CSV) and exit status for each, and returns the merged outputs.
fn merged_equals_single(command: &[&str], shards: &[u64], dir: &Path) -> Vec<Output> {
    let single = bloomlab(&[command, &["-q", "--format", "csv"]].concat());
    assert!(!single.stdout.is_empty());
    let merged_in = |shards: u64| {
        let folder = dir.join(format!("parts-{shards}"));
        std::fs::create_dir_all(&folder).unwrap();
        for i in 0..shards {
            let shard = format!("{i}/{shards}");
            let part = folder.join(format!("{i}.json"));
            let args = [command, &["-q", "--format", "csv", "--shard", &shard]].concat();
            let out = bloomlab(&[&args[..], &["--partial", part.to_str().unwrap()]].concat());
            assert!(out.status.success(), "{shard}: {}", text(&out.stderr));
            assert!(out.stdout.is_empty(), "a shard prints nothing");
        }
        let merged = bloomlab(&["merge", "-q", folder.to_str().unwrap()]);
        assert_eq!(
            text(&merged.stdout),
            text(&single.stdout),
            "{command:?} in {shards} shards: {}",
            text(&merged.stderr)
        );
        assert_eq!(merged.status.code(), single.status.code());
        merged
    };
    shards.iter().map(|&n| merged_in(n)).collect()
}

/// 1, 3 and 7 shards, and more shards than the run has rows (some shards hold nothing).
fn each_shard_count(command: &[&str], rows: u64) {
    let dir = tempfile::tempdir().unwrap();
    merged_equals_single(command, &[1, 3, 7, rows + 5], dir.path());
}

/// 2 blocks of queries per row: the smallest run whose rows the shards cut.
const TWO_BLOCKS: &str = "1100000";

#[test]
fn compare_merged_is_the_single_run() {
    let command = [
        "compare",
        "--n",
        "2000",
        "--fpr",
        "0.01",
        "--queries",
        TWO_BLOCKS,
    ];
    let rows = text(&bloomlab(&[&command[..], &["--estimate"]].concat()).stdout);
    let rows: serde_json::Value = serde_json::from_str(&rows).unwrap();
    each_shard_count(&command, rows["rows"].as_u64().unwrap());
}

#[test]
fn size_measure_merged_is_the_single_run_in_every_format() {
    let command = ["size", "--n", "2000", "--fpr", "0.01", "--measure"];
    let command = [&command[..], &["--queries", TWO_BLOCKS]].concat();
    let estimate = text(&bloomlab(&[&command[..], &["--estimate"]].concat()).stdout);
    let estimate: serde_json::Value = serde_json::from_str(&estimate).unwrap();
    let rows = estimate["rows"].as_u64().unwrap();
    assert_eq!(estimate["units"].as_u64(), Some(2 * rows));
    let dir = tempfile::tempdir().unwrap();
    merged_equals_single(&command, &[1, 3, 7, rows + 5], dir.path());
    // The terminal's view: the sizing plan above the structures.
    let merged = bloomlab(
        &["merge", "-q", "--format", "table"]
            .iter()
            .copied()
            .chain([dir.path().join("parts-3").to_str().unwrap()])
            .collect::<Vec<_>>(),
    );
    let single = bloomlab(&[&command[..], &["-q"]].concat());
    assert_eq!(text(&merged.stdout), text(&single.stdout));
    assert!(text(&single.stdout).contains("sizing order"));
}

#[test]
fn audit_merged_is_the_single_run() {
    let command = [
        "audit",
        "--audited",
        "crates",
        "--n",
        "2000",
        "--loads",
        "1,2",
    ];
    each_shard_count(&[&command[..], &["--queries", TWO_BLOCKS]].concat(), 10);
}

#[test]
fn audit_of_a_filter_that_fills_up_merged_is_the_single_run() {
    // qfilter refuses inserts past about 1.9n: its rows at 2n and 4n are never made, and the
    // shards that hold their units count nothing of them.
    let command = [
        "audit", "--filter", "qfilter", "--n", "2000", "--loads", "1,2,4",
    ];
    let command = [&command[..], &["--queries", TWO_BLOCKS]].concat();
    let dir = tempfile::tempdir().unwrap();
    merged_equals_single(&command, &[1, 3, 7], dir.path());
    let folder = dir.path().join("parts-7");
    let merged = bloomlab(&["merge", "-q", "--format", "table", folder.to_str().unwrap()]);
    let said = text(&merged.stdout);
    assert!(
        said.contains("refused at 2.00n (no rows from there on)"),
        "{said}"
    );
}

#[test]
fn audit_of_an_exec_program_merged_is_the_single_run_and_fails_as_it() {
    // A program that drops every second insert: the merged run names its first lost key and
    // exits 1, as the single run does. Its measured memory differs from run to run: left out.
    let program = format!("exec:{} --break drop-half", common::exec_fixture());
    let command = [
        "audit", "--filter", &program, "--n", "2000", "--loads", "1,1.5",
    ];
    let command = [&command[..], &["--no-memory", "--queries", TWO_BLOCKS]].concat();
    let dir = tempfile::tempdir().unwrap();
    for merged in merged_equals_single(&command, &[1, 3, 7], dir.path()) {
        assert_eq!(merged.status.code(), Some(1));
        let stderr = text(&merged.stderr);
        assert!(
            stderr.contains("1000 of 2000 inserted keys answered absent"),
            "{stderr}"
        );
        assert!(stderr.contains("(inserted as number 2)"), "{stderr}");
    }
}

#[test]
fn sweep_size_merged_is_the_single_run() {
    each_shard_count(&["sweep-size", "--queries", QUERIES], 5);
}

#[test]
fn sweep_k_merged_is_the_single_run() {
    let command = [
        "sweep-k",
        "--n",
        "2000",
        "--k",
        "2..6",
        "--bits-per-key",
        "8",
    ];
    each_shard_count(&[&command[..], &["--queries", QUERIES]].concat(), 5);
}

#[test]
fn overfill_merged_is_the_single_run() {
    let command = ["overfill", "--n", "2000", "--queries", QUERIES];
    each_shard_count(&command, 12);
}

#[test]
fn seed_check_merged_is_the_single_run_and_exits_as_it() {
    let command = [
        "seed-check",
        "--hash",
        "low-bits",
        "--m",
        "32768",
        "--k",
        "4",
        "--queries",
        "200000",
    ];
    let dir = tempfile::tempdir().unwrap();
    merged_equals_single(&command, &[1, 3, 7, 40], dir.path());
}

/// The parts of `sweep-size` in 3 shards, with `extra` flags, in `dir`.
fn parts(dir: &Path, extra: &[&str]) -> Vec<PathBuf> {
    (0..3)
        .map(|i| {
            let part = dir.join(format!("{i}.json"));
            let shard = format!("{i}/3");
            let args = ["sweep-size", "-q", "--queries", QUERIES, "--shard", &shard];
            let args = [&args[..], extra, &["--partial", part.to_str().unwrap()]].concat();
            let out = bloomlab(&args);
            assert!(out.status.success(), "{}", text(&out.stderr));
            part
        })
        .collect()
}

fn merge(parts: &[&Path]) -> Output {
    let paths: Vec<&str> = parts.iter().map(|p| p.to_str().unwrap()).collect();
    bloomlab(&[&["merge", "-q"][..], &paths].concat())
}

fn refused(out: &Output, names: &[&Path], says: &str) {
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    for name in names {
        let name = name.display().to_string();
        assert!(stderr.contains(&name), "names {name}: {stderr}");
    }
    assert!(stderr.contains(says), "says {says}: {stderr}");
}

#[test]
fn merge_refuses_a_missing_a_duplicated_and_a_foreign_part() {
    let dir = tempfile::tempdir().unwrap();
    let p = parts(dir.path(), &[]);
    refused(&merge(&[&p[0], &p[2]]), &[], "units missing");
    refused(&merge(&[&p[0], &p[1], &p[1], &p[2]]), &[&p[1]], "gives too");
    let other = tempfile::tempdir().unwrap();
    let foreign = parts(other.path(), &["--seed", "7"]);
    refused(
        &merge(&[&p[0], &p[1], &foreign[2]]),
        &[&foreign[2]],
        "counted for",
    );
    // A part whose filter digest or build differs.
    let edited = dir.path().join("edited.json");
    let original = std::fs::read_to_string(&p[2]).unwrap();
    let digest = original.split("\"digest\": \"").nth(1).unwrap()[..16].to_string();
    std::fs::write(&edited, original.replace(&digest, "0123456789abcdef")).unwrap();
    // Shard 1 counts the first block of row 3, shard 2 its others: both built its filter.
    assert!(std::fs::read_to_string(&p[1]).unwrap().contains(&digest));
    refused(&merge(&[&p[0], &p[1], &edited]), &[&edited], "digest");
    // The digest of a row only one part counted: the parts agree, the filter merge builds
    // does not.
    let first = std::fs::read_to_string(&p[0]).unwrap();
    let digest = first.split("\"digest\": \"").nth(1).unwrap()[..16].to_string();
    assert!(!original.contains(&digest) && !text(&std::fs::read(&p[1]).unwrap()).contains(&digest));
    let lone = dir.path().join("lone.json");
    std::fs::write(&lone, first.replacen(&digest, "0123456789abcdef", 1)).unwrap();
    refused(&merge(&[&lone, &p[1], &p[2]]), &[&lone], "built here");
    let commit = original.split("\"commit\": \"").nth(1).unwrap();
    let commit = &commit[..commit.find('"').unwrap()];
    std::fs::write(&edited, original.replace(commit, "another-build")).unwrap();
    refused(
        &merge(&[&p[0], &p[1], &edited]),
        &[&edited],
        "written by bloomlab",
    );
}

#[test]
fn a_shard_out_of_range_is_refused_before_work() {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("p.json");
    for shard in ["3/3", "0/0", "a/b"] {
        let out = bloomlab(&[
            "sweep-size",
            "--shard",
            shard,
            "--partial",
            part.to_str().unwrap(),
        ]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{stderr}");
        assert!(
            stderr.contains("--shard") && stderr.contains("0..N"),
            "{stderr}"
        );
        assert!(!part.exists());
    }
    // size shards only what it measures.
    let size = ["size", "--n", "4000", "--fpr", "0.01", "--shard", "0/2"];
    let out = bloomlab(&[&size[..], &["--partial", part.to_str().unwrap()]].concat());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        text(&out.stderr).contains("--shard"),
        "{}",
        text(&out.stderr)
    );
    assert!(!part.exists());
}

#[test]
fn the_estimate_counts_the_units_and_names_the_build_the_version_prints() {
    let out = bloomlab(&["sweep-size", "--queries", QUERIES, "--estimate"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let estimate: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // 5 rows (4..12 bits per key) of 3 blocks of 2^20 queries.
    assert_eq!(estimate["units"], 15);
    assert_eq!(estimate["rows"], 5);
    assert!(estimate["seconds"].as_f64().unwrap() > 0.0);
    let version = text(&bloomlab(&["--version"]).stdout);
    let build = &estimate["build"];
    let commit = build["commit"].as_str().unwrap();
    assert!(version.contains(commit) && version.contains(build["dirty"].as_str().unwrap()));
    assert!(commit.len() == 40 || commit == "unknown", "{commit}");
}
