//! Flags that named the wrong value or the wrong flag (issue 43), with the real binary: n
//! from a key file given as a pipe, a rate the classic reference cannot reach named as the
//! rate, and values quoted as typed.

use std::process::{Command, Output};

use crate::common::BIN;

fn bloomlab(args: &[&str]) -> Output {
    Command::new(BIN).args(args).output().unwrap()
}

fn refused(out: &Output, words: &[&str]) {
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    for word in words {
        assert!(said.contains(word), "{word}: {said}");
    }
}

#[test]
fn audit_takes_n_from_a_piped_key_file() {
    let out = Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{BIN} audit --filter classic --keys file:<(seq 5000) --loads 1,2 --queries 20000 --no-memory --format csv --quiet"
        ))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // 5000 lines at a largest load of 2: n = 2500.
    assert!(
        stdout.lines().skip(1).all(|l| l.contains(",2500,")),
        "{stdout}"
    );
}

#[test]
fn a_rate_the_classic_reference_cannot_reach_names_fpr() {
    let out = bloomlab(&["compare", "--n", "1000", "--fpr", "1e-300"]);
    refused(&out, &["--fpr 1e-300"]);
    assert!(!String::from_utf8_lossy(&out.stderr).contains("--k"));
}

#[test]
fn values_are_quoted_as_typed() {
    refused(
        &bloomlab(&["sweep-size", "--n", "18446744073709551616"]),
        &["18446744073709551616"],
    );
    for flag in ["--fail-above", "--fail-below"] {
        let out = bloomlab(&["audit", "--filter", "classic", flag, "1e400"]);
        refused(&out, &["1e400"]);
        assert!(!String::from_utf8_lossy(&out.stderr).contains(&format!("{flag} inf")));
    }
    refused(
        &bloomlab(&["size", "--n", "1000", "--fpr", "1e-400"]),
        &["1e-400"],
    );
}

#[test]
fn program_options_that_would_do_nothing_are_refused() {
    let base = ["sweep-size", "--n", "1000", "--queries", "1000"];
    let with = |extra: &[&str]| bloomlab(&[&base[..], extra].concat());
    refused(&with(&["--param", "scale=2"]), &["--param", "exec:"]);
    refused(&with(&["--key-form", "int"]), &["--key-form", "exec:"]);
    let program = ["--filter", "exec:true", "--param", "a=1", "--param", "a=2"];
    refused(&with(&program), &["--param", "twice"]);
    let out = bloomlab(&[
        "audit",
        "--filter",
        "exec:true",
        "--key-forms",
        "text,int",
        "--key-form",
        "int",
    ]);
    refused(&out, &["--key-form", "--key-forms"]);
}
