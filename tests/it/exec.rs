//! `--filter exec:COMMAND` against the protocol fixture (`examples/exec_fixture.rs`): a round
//! trip that measures what the fixture's own shape predicts, and every failure mode, each with
//! its message, exit status 1 and nothing written to `--out`.

use std::process::Output;

use crate::common;

use common::exec_fixture as fixture;

fn bloomlab(args: &[&str], timeout: &str) -> Output {
    crate::common::command()
        .env("BLOOMLAB_EXEC_TIMEOUT", timeout)
        .args(args)
        .output()
        .unwrap()
}

#[test]
fn the_fixture_measures_what_its_shape_predicts() {
    let filter = format!("exec:{}", fixture());
    let args = [
        "sweep-size",
        "--filter",
        &filter,
        "--n",
        "20000",
        "--queries",
        "100000",
        "--format",
        "json",
    ];
    let out = bloomlab(&args, "60");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 5);
    for row in rows {
        // The fixture is a plain bit array of the header's m and k: its rate is the classic
        // one within 4 binomial standard errors (fixed seeds; fill noise at n = 20000 is
        // small beside the binomial term at 10^5 queries).
        let z = row["z_classic"].as_f64().unwrap();
        assert!(z.abs() <= 4.0, "{row}");
        assert_eq!(row["hash"], "exec_fixture", "{row}");
        assert_eq!(row["bits_check"], "n/a", "{row}");
        assert_eq!(row["memory_bits"], row["m"], "{row}");
    }
}

/// Runs sweep-size on the fixture broken by `breakage`, expecting exit 1 with `message`
/// and no `--out` file.
fn fails_with(breakage: &[&str], message: &str, timeout: &str) {
    let dir = tempfile::tempdir().unwrap();
    let out_path = dir.path().join("rows.csv");
    let filter = format!("exec:{} {}", fixture(), breakage.join(" "));
    let out_arg = out_path.display().to_string();
    let args = [
        "sweep-size",
        "--filter",
        &filter,
        "--n",
        "500",
        "--queries",
        "2000",
        "--m",
        "5000",
        "--format",
        "csv",
        "--out",
        &out_arg,
    ];
    let out = bloomlab(&args, timeout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{breakage:?}: {stderr}");
    assert!(stderr.contains(message), "{breakage:?}: {stderr}");
    assert!(stderr.contains("exec program"), "{breakage:?}: {stderr}");
    assert!(stderr.contains("exec_fixture"), "{breakage:?}: {stderr}");
    assert!(!stderr.contains("panicked"), "{breakage:?}: {stderr}");
    assert!(!out_path.exists(), "{breakage:?} wrote --out");
}

#[test]
fn every_failure_mode_ends_the_run_with_its_message() {
    let cases: [(&[&str], &str); 8] = [
        (&["--break", "short-answer"], "characters for"),
        (&["--break", "garbage"], "characters for"),
        (&["--break", "garbage", "--at", "insert"], "not `ok`"),
        (
            &["--break", "garbage", "--at", "hello"],
            "not a JSON object",
        ),
        (&["--break", "exit-early"], "exited with exit status: 3"),
        (
            &["--break", "exit-early", "--at", "insert"],
            "after `insert",
        ),
        (&["--break", "refuse", "--at", "hello"], "refused:"),
        (&["--break", "refuse"], "after `query"),
    ];
    for (breakage, message) in cases {
        fails_with(breakage, message, "60");
    }
}

#[test]
fn a_silent_program_times_out() {
    fails_with(&["--break", "silent"], "no reply within 0.5 s", "0.5");
    fails_with(
        &["--break", "silent", "--at", "hello"],
        "no reply within 0.5 s",
        "0.5",
    );
}

#[test]
fn a_program_that_cannot_start_is_an_error_not_a_panic() {
    fails_with(&["< /dev/null; exit 7"], "exited with exit status: 7", "60");
    fails_with(&["--no-such-flag"], "exited with exit status: 2", "60");
}

/// The rows of `args` as JSON, asserting success.
fn json_rows(args: &[&str]) -> Vec<serde_json::Value> {
    let out = bloomlab(args, "60");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{args:?}: {stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    rows.as_array().unwrap().clone()
}

fn sweep(filter: &str, extra: &[&str]) -> Vec<serde_json::Value> {
    let mut args = vec![
        "sweep-size",
        "--filter",
        filter,
        "--n",
        "2000",
        "--bits-per-key",
        "10",
        "--queries",
        "20000",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    json_rows(&args)
}

#[test]
fn the_key_form_reaches_the_program_and_is_recorded() {
    let filter = format!("exec:{}", fixture());
    let text = sweep(&filter, &[]);
    let int = sweep(&filter, &["--key-form", "int"]);
    assert_eq!(text[0]["hash"], "exec_fixture");
    assert_eq!(int[0]["hash"], "exec_fixture, int keys");
    // The fixture hashes the line's bytes for text keys and the integer's 8 bytes for int
    // keys: different filters, so (fixed seeds) different counts.
    assert_ne!(text[0]["false_positives"], int[0]["false_positives"]);
    let out = bloomlab(
        &["sweep-size", "--filter", &filter, "--key-form", "hex"],
        "60",
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--key-form"));
}

#[test]
fn a_hash_family_is_refused_for_a_program_that_hashes_itself() {
    let filter = format!("exec:{}", fixture());
    let out = bloomlab(
        &["sweep-size", "--filter", &filter, "--hash", "low-bits"],
        "60",
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("--hash"), "{stderr}");
}

#[test]
fn the_fill_is_blank_unless_the_program_reports_its_set_bits() {
    let silent = sweep(&format!("exec:{}", fixture()), &[]);
    assert!(silent[0]["fill_measured"].is_null(), "{}", silent[0]);
    let reporting = sweep(&format!("exec:{} --report-set-bits", fixture()), &[]);
    let (fill, expected) = (
        reporting[0]["fill_measured"].as_f64().unwrap(),
        reporting[0]["fill_expected"].as_f64().unwrap(),
    );
    // m = 20000, k = 7: the fill's standard deviation is about 0.0035 (fixed seeds).
    assert!((fill - expected).abs() < 0.02, "{fill} vs {expected}");
}

fn audit(filter: &str, extra: &[&str]) -> Output {
    let mut args = vec![
        "audit", "--filter", filter, "--n", "3000", "--loads", "1", "--quiet",
    ];
    args.extend_from_slice(extra);
    bloomlab(&args, "60")
}

#[test]
fn fail_above_fails_a_filter_whose_lower_bound_exceeds_the_ratio() {
    let good = format!("exec:{}", fixture());
    let out = audit(&good, &["--fail-above", "1.2"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // "Keeps its promise" comes with the upper bound and the excess the run could detect.
    let said = String::from_utf8_lossy(&out.stdout);
    for words in [
        "keeps its promise at 1.00n",
        "(95% upper bound)",
        "would have been detected",
        "queries per row detect an excess of",
    ] {
        assert!(said.contains(words), "{words}: {said}");
    }
    let undersized = format!("exec:{} --break undersized", fixture());
    let out = audit(&undersized, &["--fail-above", "1.2"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("check failed: --fail-above 1.2"),
        "{stderr}"
    );
    // Without the flag the same finding is flagged, not failed.
    assert!(audit(&undersized, &[]).status.success());
    for bad in ["0.5", "2e6", "x"] {
        let out = audit(&good, &["--fail-above", bad]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("--fail-above"), "{bad}: {stderr}");
    }
}

#[test]
fn the_audit_runs_each_key_form() {
    let filter = format!("exec:{}", fixture());
    let rows = json_rows(&[
        "audit",
        "--filter",
        &filter,
        "--n",
        "2000",
        "--loads",
        "1,2",
        "--key-forms",
        "text,int,bytes",
        "--format",
        "json",
        "--quiet",
    ]);
    let forms: Vec<&str> = rows
        .iter()
        .map(|r| r["key_form"].as_str().unwrap())
        .collect();
    assert_eq!(forms, ["text", "text", "int", "int", "bytes", "bytes"]);
    for row in &rows {
        let (low, high) = (
            row["ratio_configured_low"].as_f64(),
            row["ratio_configured_high"].as_f64(),
        );
        assert!(
            low.unwrap() <= row["ratio_configured"].as_f64().unwrap(),
            "{row}"
        );
        assert!(
            high.unwrap() >= row["ratio_configured"].as_f64().unwrap(),
            "{row}"
        );
        assert_eq!(row["library"], "exec_fixture", "{row}");
    }
    // int and bytes keys are the same 8 bytes to the fixture's hash.
    assert_eq!(rows[2]["false_positives"], rows[4]["false_positives"]);
}

/// A word of a `sh -c` command line, quoted only when it must be.
mod words {
    use bloomlab::program::shell_word;

    #[test]
    fn words_are_quoted_only_when_they_must_be() {
        assert_eq!(shell_word("adapters"), "adapters");
        assert_eq!(shell_word("/a/b-c_d.e"), "/a/b-c_d.e");
        assert_eq!(shell_word("my adapters"), "'my adapters'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word("0.01,0.001"), "0.01,0.001");
        assert_eq!(shell_word("2..16:2"), "2..16:2");
    }
}
