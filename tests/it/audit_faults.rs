//! Wrong answers of the audit (issue 43), each reproduced with the real binary: every query
//! key inserted, loads given out of order or too small to insert a key, and key files with
//! repeats.

use std::process::Output;

use crate::common;

use common::{bloomlab, text};

/// A small audit of bloomlab's classic filter alone, as CSV.
fn audit(extra: &[&str]) -> Output {
    let base = [
        "audit",
        "--filter",
        "classic",
        "--n",
        "2000",
        "--fpr",
        "0.01",
        "--queries",
        "20000",
        "--no-memory",
        "--format",
        "csv",
    ];
    bloomlab(&[&base[..], extra].concat())
}

/// The values of `column` in a CSV output, one per row.
fn column(out: &Output, column: &str) -> Vec<String> {
    let stdout = text(&out.stdout);
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap_or_default().split(',').collect();
    let at = (header.iter().position(|h| *h == column))
        .unwrap_or_else(|| panic!("no column {column}: {stdout}"));
    lines
        .map(|line| line.split(',').nth(at).unwrap().to_string())
        .collect()
}

fn refused(out: &Output, flag: &str) {
    let said = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains(flag) && !said.contains("panicked"), "{said}");
}

#[test]
fn an_audit_whose_every_query_key_is_inserted_is_refused_before_work() {
    for keys in ["strided:9223372036854775808", "strided:4611686018427387904"] {
        refused(&audit(&["--keys", keys]), "--keys");
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.txt");
    let lines: Vec<String> = (0..20_000).map(|i| format!("key-{i}")).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let source = format!("file:{}", file.display());
    // The largest load inserts all 20000 lines, which are the 20000 queries.
    let out = audit(&[
        "--keys",
        &source,
        "--query-keys",
        &source,
        "--loads",
        "1,10",
    ]);
    refused(&out, "--query-keys");
}

#[test]
fn loads_are_measured_in_increasing_order_whatever_the_order_given() {
    let alone = audit(&["--loads", "1"]);
    assert!(alone.status.success(), "{}", text(&alone.stderr));
    let reversed = audit(&["--loads", "2,1"]);
    assert!(reversed.status.success(), "{}", text(&reversed.stderr));
    assert_eq!(column(&reversed, "load"), ["1.0", "2.0"]);
    assert_eq!(
        column(&reversed, "false_positives")[0],
        column(&alone, "false_positives")[0]
    );
    refused(&audit(&["--loads", "1e-9"]), "--loads");
}

#[test]
fn repeated_keys_of_a_key_file_are_counted_and_noted() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.txt");
    // 2000 lines, each key twice: 1000 distinct keys.
    let lines: Vec<String> = (0..2000).map(|i| format!("key-{}", i / 2)).collect();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let out = audit(&[
        "--keys",
        &format!("file:{}", file.display()),
        "--loads",
        "1",
    ]);
    let said = text(&out.stderr);
    assert!(out.status.success(), "{said}");
    assert_eq!(column(&out, "duplicate_keys"), ["1000"]);
    assert_eq!(column(&out, "far_below"), ["false"]);
    assert!(said.contains("duplicate_keys = 1000 of n = 2000"), "{said}");
    assert!(!said.contains("FAR BELOW"), "{said}");
}
