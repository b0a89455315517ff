//! Inputs a careless user gives, each reproduced with the real binary: a size request
//! missing its n, a structure whose k is fixed, overfill at a design too small to round s
//! into whole keys, a query file shorter than the default queries, a key file of repeats.

use std::fs;
use std::process::Output;

use crate::common::run_in as bloomlab;

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The values of `column` in a CSV output.
fn column(out: &Output, column: &str) -> Vec<String> {
    let text = String::from_utf8_lossy(&out.stdout);
    let mut lines = text.lines();
    let at = lines
        .next()
        .unwrap()
        .split(',')
        .position(|h| h == column)
        .unwrap_or_else(|| panic!("no column {column}: {text}"));
    lines
        .map(|line| line.split(',').nth(at).unwrap().to_string())
        .collect()
}

#[test]
fn size_with_a_rate_and_no_n_names_n() {
    let dir = tempfile::tempdir().unwrap();
    for args in [["size", "--fpr", "0.01"], ["size", "--bits-per-key", "10"]] {
        let out = bloomlab(dir.path(), &args);
        assert_eq!(out.status.code(), Some(2), "{out:?}");
        let said = stderr(&out);
        assert!(said.contains("error: --n missing: "), "{said}");
        assert!(!said.contains("of --n, --fpr"), "{said}");
    }
    let out = bloomlab(dir.path(), &["size", "--n", "1000"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("error: --fpr missing: "), "{out:?}");
}

#[test]
fn conform_on_split_block_takes_the_k_it_fixes() {
    let dir = tempfile::tempdir().unwrap();
    let base = ["conform", "--filter", "split-block", "--n", "2000"];
    let out = bloomlab(dir.path(), &[&base[..], &["--queries", "5000"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    let out = bloomlab(dir.path(), &[&base[..], &["--k", "7"]].concat());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("--k 7: "), "{}", stderr(&out));
}

#[test]
fn overfill_predicts_for_the_keys_really_inserted() {
    let dir = tempfile::tempdir().unwrap();
    let out = bloomlab(
        dir.path(),
        &[
            "overfill",
            "--design-n",
            "3",
            "--factors",
            "1.1,2",
            "--k",
            "2",
            "--queries",
            "2000",
            "--format",
            "csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(column(&out, "n"), ["3", "6"]);
    // round(1.1 · 3) = 3 keys: s = 1, fill 1 - 2^-1; 2 · 3 = 6 keys: s = 2 as asked.
    assert_eq!(column(&out, "overfill_factor"), ["1.0", "2.0"]);
    assert_eq!(column(&out, "fill_closed_form")[0], "0.5");
}

#[test]
fn a_query_file_shorter_than_the_default_queries_gives_its_lines() {
    let dir = tempfile::tempdir().unwrap();
    let lines: String = (0..5000).map(|i| format!("query-{i}\n")).collect();
    fs::write(dir.path().join("q.txt"), lines).unwrap();
    let args = ["sweep-size", "--n", "500", "--query-keys", "file:q.txt"];
    let out = bloomlab(dir.path(), &[&args[..], &["--format", "csv"]].concat());
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        column(&out, "queries").iter().all(|q| q == "5000"),
        "{out:?}"
    );
    // Asked for more than the file holds: refused, naming --queries.
    let out = bloomlab(dir.path(), &[&args[..], &["--queries", "6000"]].concat());
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert!(stderr(&out).contains("--queries 6000"), "{}", stderr(&out));
}

#[test]
fn duplicate_keys_of_a_key_file_are_counted_and_said() {
    let dir = tempfile::tempdir().unwrap();
    fs::write(dir.path().join("same.txt"), "same key\n".repeat(3000)).unwrap();
    let out = bloomlab(
        dir.path(),
        &[
            "sweep-size",
            "--keys",
            "file:same.txt",
            "--bits-per-key",
            "10",
            "--format",
            "csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let said = stderr(&out);
    assert!(said.contains("duplicate_keys = 2999 of n = 3000"), "{said}");
    assert!(said.contains("holds 1 distinct keys"), "{said}");
    // Before, the predictions were for 3000 keys: 0 false positives gave z = -19.9 and
    // "pass". Made for the one distinct key, the rate predicted is below 1e-9 (k probes
    // among m = 30000 bits), and 0 of the queries agrees with it.
    assert!(column(&out, "duplicate_keys").iter().all(|d| d == "2999"));
    for z in column(&out, "z_exact") {
        let z: f64 = z.parse().unwrap();
        assert!(z.abs() < 1.0, "z_exact {z}");
    }
    for p in column(&out, "fpr_exact") {
        assert!(p.parse::<f64>().unwrap() < 1e-9, "fpr_exact {p}");
    }
    // A file without repeats says nothing of them.
    let lines: String = (0..3000).map(|i| format!("key-{i}\n")).collect();
    fs::write(dir.path().join("distinct.txt"), lines).unwrap();
    let out = bloomlab(
        dir.path(),
        &[
            "sweep-size",
            "--keys",
            "file:distinct.txt",
            "--bits-per-key",
            "10",
            "--format",
            "csv",
        ],
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("duplicate_keys"), "{}", stderr(&out));
    assert!(column(&out, "duplicate_keys").iter().all(|d| d == "0"));
}
