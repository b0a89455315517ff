//! `--filter exec:COMMAND` against the protocol fixture (`examples/exec_fixture.rs`): a round
//! trip that measures what the fixture's own shape predicts, and every failure mode, each with
//! its message, exit status 1 and nothing written to `--out`.

use std::process::Output;

use assert_cmd::Command;

mod common;

use common::exec_fixture as fixture;

fn bloomlab(args: &[&str], timeout: &str) -> Output {
    Command::cargo_bin("bloomlab")
        .unwrap()
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
    fails_with(&["--no-such-flag"], "closed its output", "60");
}
