//! The command line: every subcommand and format, determinism, atomic output, bad input.

use predicates::prelude::*;

use crate::common::command as bloomlab;

const REQUIRED_FIELDS: [&str; 16] = [
    "experiment",
    "n",
    "m",
    "k",
    "bits_per_key",
    "queries",
    "false_positives",
    "fpr_measured",
    "ci_low",
    "ci_high",
    "fill_measured",
    "fill_expected",
    "fpr_classic",
    "fpr_from_fill",
    "z_classic",
    "z_from_fill",
];

/// Stdout of a run that must succeed.
fn stdout_of(args: &[&str]) -> String {
    let out = bloomlab().args(args).output().unwrap();
    assert!(
        out.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn csv_of(args: &[&str]) -> String {
    stdout_of(&[args, &["--format", "csv", "--queries", "5000"]].concat())
}

#[test]
fn every_experiment_in_every_format() {
    for experiment in ["sweep-size", "sweep-k", "overfill", "seed-check"] {
        for format in ["table", "csv", "json", "markdown"] {
            bloomlab()
                .args([experiment, "--format", format, "--queries", "3000"])
                .assert()
                .success()
                .stdout(predicate::str::is_empty().not());
        }
        let csv = csv_of(&[experiment]);
        let header = csv.lines().next().unwrap();
        for field in REQUIRED_FIELDS {
            assert!(
                header.split(',').any(|h| h == field),
                "{experiment}: no {field}"
            );
        }
    }
}

#[test]
fn json_is_an_array_of_records_with_fractions() {
    let out = stdout_of(&["sweep-size", "--format", "json", "--queries", "5000"]);
    let rows: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for row in rows {
        let rate = row["fpr_measured"].as_f64().unwrap();
        assert!(rate > 0.0 && rate < 1.0);
        assert!(row["ci_low"].as_f64().unwrap() <= rate);
    }
}

#[test]
fn overfill_and_seed_check_carry_their_own_fields() {
    let header = csv_of(&["overfill"]).lines().next().unwrap().to_string();
    for field in [
        "design_n",
        "overfill_factor",
        "fill_closed_form",
        "fpr_closed_form",
        "ratio_to_design",
    ] {
        assert!(header.contains(field), "overfill: no {field}");
    }
    let header = csv_of(&["seed-check"]).lines().next().unwrap().to_string();
    assert!(header.contains("hash_seed") && header.contains("check"));
}

#[test]
fn markdown_is_a_github_table() {
    let text = stdout_of(&["sweep-k", "--format", "markdown", "--queries", "2000"]);
    assert!(text.lines().any(|l| l.starts_with("|---")), "{text}");
}

#[test]
fn sweep_k_prints_the_essay_table() {
    let text = stdout_of(&["sweep-k", "--bits-per-elem", "10", "--format", "csv"]);
    assert_eq!(text.lines().count(), 17, "header + k = 1..16");
    let mut lines = text.lines().map(|line| line.split(',').collect::<Vec<_>>());
    let header = lines.next().unwrap();
    let first = lines.next().unwrap();
    let field = |name: &str| first[header.iter().position(|h| *h == name).unwrap()];
    assert_eq!((field("n"), field("m"), field("k")), ("4000", "40000", "1"));
}

#[test]
fn same_seeds_same_bytes_other_hash_seed_other_bytes() {
    let a = csv_of(&["sweep-size", "--seed", "5", "--hash-seed", "6"]);
    let b = csv_of(&["sweep-size", "--seed", "5", "--hash-seed", "6"]);
    let c = csv_of(&["sweep-size", "--seed", "5", "--hash-seed", "7"]);
    assert_eq!(a, b);
    assert_ne!(a, c);
}

#[test]
fn out_writes_the_file_and_a_failed_run_leaves_none() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rows.csv");
    bloomlab()
        .args([
            "sweep-size",
            "--format",
            "csv",
            "--queries",
            "2000",
            "--out",
        ])
        .arg(&path)
        .assert()
        .success()
        .stdout("");
    let written = std::fs::read_to_string(&path).unwrap();
    assert!(written.starts_with("experiment,"));
    let failed = dir.path().join("failed.csv");
    bloomlab()
        .args(["sweep-size", "--k", "0", "--format", "csv", "--out"])
        .arg(&failed)
        .assert()
        .code(2);
    assert!(!failed.exists());
    assert_eq!(
        std::fs::read_dir(dir.path()).unwrap().count(),
        1,
        "no temp files left"
    );
}

#[test]
fn bad_input_exits_2_naming_the_flag() {
    let cases: &[(&[&str], &str)] = &[
        (&["sweep-size", "--n", "0"], "--n"),
        (&["sweep-size", "--n", "-5"], "--n"),
        (&["sweep-size", "--m", "0"], "--m"),
        (&["sweep-size", "--m", "1099511627776"], "--m"),
        (&["sweep-size", "--k", "0"], "--k"),
        (&["sweep-size", "--k", "65"], "--k"),
        (&["sweep-size", "--k", "2.5"], "--k"),
        (&["sweep-size", "--queries", "0"], "--queries"),
        (&["sweep-size", "--bits-per-key", "0"], "--bits-per-key"),
        (&["sweep-size", "--bits-per-key", "-3"], "--bits-per-key"),
        (&["sweep-size", "--bits-per-key", "4,,6"], "--bits-per-key"),
        (&["sweep-size", "--bits-per-key", "6..2"], "--bits-per-key"),
        (&["sweep-size", "--bits-per-key", "x..4"], "--bits-per-key"),
        (&["sweep-k", "--k", "1..99"], "--k"),
        (&["overfill", "--factors", "0,1"], "--factors"),
        (&["overfill", "--factors", "-1"], "--factors"),
        (&["overfill", "--design-n", "0"], "--design-n"),
        (
            &["sweep-size", "--n", "10000000000", "--bits-per-key", "100"],
            "--bits-per-key",
        ),
        (&["seed-check", "--seeds", "1"], "--seeds"),
        (&["seed-check", "--k", "4,6"], "--k"),
        (&["sweep-size", "--hash", "md5"], "--hash"),
        (&["sweep-size", "--format", "xml"], "--format"),
        (&["sweep-size", "--plot", "plate.png"], "--plot"),
        (&["size", "--n", "4000", "--fpr", "1.5"], "--fpr"),
        (&["size", "--n", "4000", "--fpr", "0"], "--fpr"),
        (&["size", "--n", "0", "--fpr", "0.01"], "--n"),
        (&["size", "--n", "4000"], "--fpr"),
        (&["size", "--fpr", "0.01", "--bits-per-key", "9"], "--n"),
        (&["audit", "--n", "0"], "--n"),
        (&["audit", "--n", "1000000000"], "--n"),
        (&["audit", "--fpr", "1.5"], "--fpr"),
        (&["audit", "--loads", "0"], "--loads"),
        (&["audit", "--queries", "0"], "--queries"),
        (&["audit", "--filter", "blocked"], "--filter"),
        (&["audit", "--filter", "nope"], "--filter"),
        (
            &["sweep-size", "--filter", "fastbloom", "--hash", "low-bits"],
            "--hash",
        ),
        (
            &["seed-check", "--filter", "growable-bloom-filter"],
            "--filter",
        ),
        (
            &[
                "sweep-size",
                "--filter",
                "growable-bloom-filter",
                "--trials",
                "3",
            ],
            "--filter",
        ),
    ];
    for (args, flag) in cases {
        let out = bloomlab().args(*args).output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        let first = stderr.lines().next().unwrap_or_default();
        assert!(
            first.starts_with("error:") && first.contains(flag),
            "{args:?}: {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}: printed a table");
    }
}

/// The essay's flawed first version: low bits of a power-of-two m.
const FLAWED: [&str; 6] = ["--hash", "low-bits", "--m", "32768", "--k", "4"];

#[test]
fn strict_catches_the_flawed_hash_and_passes_the_default() {
    bloomlab()
        .arg("sweep-size")
        .args(FLAWED)
        .arg("--strict")
        .assert()
        .code(1)
        .stderr(predicate::str::contains(
            "row 1 (n=4000, m=32768, k=4, hash=low-bits)",
        ));
    for experiment in ["sweep-size", "sweep-k", "overfill"] {
        bloomlab().args([experiment, "--strict"]).assert().success();
    }
    bloomlab()
        .args(["overfill", "--k", "14", "--strict"])
        .assert()
        .success();
}

#[test]
fn seed_check_verdicts() {
    bloomlab()
        .args(["seed-check"])
        .assert()
        .success()
        .stdout(predicate::str::contains("scale check: pass"))
        .stdout(predicate::str::contains("hash-seed check: pass"));
    bloomlab()
        .arg("seed-check")
        .args(FLAWED)
        .assert()
        .code(1)
        .stderr(predicate::str::contains("hash-seed check: FAIL"));
}

#[test]
fn help_shows_examples() {
    for sub in [
        "sweep-size",
        "sweep-k",
        "overfill",
        "seed-check",
        "size",
        "reproduce",
        "check",
        "compare",
        "audit",
    ] {
        bloomlab()
            .args([sub, "--help"])
            .assert()
            .success()
            .stdout(predicate::str::contains("Examples:"))
            .stdout(predicate::str::contains(format!("bloomlab {sub}")));
    }
}

#[test]
fn size_prints_the_plan() {
    bloomlab()
        .args(["size", "--n", "4000", "--fpr", "0.01"])
        .assert()
        .success()
        .stdout(predicate::str::contains("9.59 bits per key"))
        .stdout(predicate::str::contains("1.4427 times"));
    let out = bloomlab()
        .args([
            "size",
            "--n",
            "4000",
            "--bits-per-key",
            "10",
            "--format",
            "json",
        ])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["m"], 40_000);
    assert!((rows[0]["k_optimal"].as_f64().unwrap() - 6.931).abs() < 1e-3);
}

#[test]
fn plot_writes_an_svg() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("plate.svg");
    bloomlab()
        .args(["overfill", "--queries", "3000", "--plot"])
        .arg(&path)
        .assert()
        .success();
    let svg = std::fs::read_to_string(&path).unwrap();
    assert!(svg.starts_with("<svg") && svg.contains("overfill factor"));
}

#[test]
fn trials_give_one_row_each_and_a_summary() {
    let out = bloomlab()
        .args([
            "sweep-size",
            "--trials",
            "3",
            "--format",
            "csv",
            "--queries",
            "3000",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 1 + 5 * 3);
    let stderr = String::from_utf8(out.stderr).unwrap();
    assert_eq!(stderr.matches("3 trials").count(), 5, "{stderr}");
    bloomlab()
        .args(["seed-check", "--trials", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--trials"));
}

#[test]
fn filter_flag_selects_the_structure() {
    let csv = csv_of(&["sweep-size", "--filter", "blocked", "--strict"]);
    assert!(
        csv.lines()
            .nth(1)
            .unwrap()
            .starts_with("sweep-size,blocked,")
    );
    bloomlab()
        .args(["sweep-size", "--filter", "split-block", "--k", "4"])
        .assert()
        .code(2)
        .stderr(predicate::str::starts_with("error: --k 4"));
    bloomlab()
        .args(["sweep-size", "--filter", "no-such-filter"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--filter"));
}

#[test]
fn compare_prints_every_structure() {
    let csv = stdout_of(&["compare", "--n", "5000", "--fpr", "0.02", "--format", "csv"]);
    assert_eq!(
        csv.lines().count(),
        1 + bloomlab::experiments::compare::rows::designed().len()
    );
    bloomlab()
        .args(["compare", "--n", "5000", "--fpr", "2"])
        .assert()
        .code(2)
        .stderr(predicate::str::contains("--fpr"));
}

#[test]
#[cfg(feature = "peers")]
fn filter_flag_takes_the_peer_crates() {
    for peer in ["fastbloom", "bloomfilter", "growable-bloom-filter"] {
        let csv = csv_of(&["sweep-size", "--filter", peer, "--n", "2000"]);
        assert!(
            csv.lines()
                .nth(1)
                .unwrap()
                .starts_with(&format!("sweep-size,{peer},")),
            "{csv}"
        );
    }
}

#[test]
#[cfg(feature = "peers")]
fn audit_prints_every_crate_at_every_load() {
    let csv = stdout_of(&[
        "audit",
        "--n",
        "5000",
        "--fpr",
        "0.02",
        "--format",
        "csv",
        "--quiet",
        "--timed",
        "--audited",
        "crates",
    ]);
    // Four Bloom crates at four loads; qfilter (8192 slots, 7783 usable) refuses at 2n, and
    // ribbon-filter is static, audited at load 1 only.
    assert_eq!(csv.lines().count(), 1 + 4 * 4 + 3 + 1);
    for (crate_name, rows) in [("qfilter", 3), ("ribbon-filter", 1)] {
        let prefix = format!("audit,{crate_name},");
        assert_eq!(csv.lines().filter(|l| l.starts_with(&prefix)).count(), rows);
    }
    let header = csv.lines().next().unwrap();
    for field in [
        "fpr_configured",
        "z_configured",
        "above_configured",
        "seeded",
        "ns_query",
    ] {
        assert!(header.split(',').any(|h| h == field), "no {field}");
    }
    for crate_name in [
        "classic",
        "fastbloom",
        "bloomfilter",
        "growable-bloom-filter",
    ] {
        assert_eq!(
            csv.lines()
                .filter(|l| l.starts_with(&format!("audit,{crate_name},")))
                .count(),
            4
        );
    }
}
