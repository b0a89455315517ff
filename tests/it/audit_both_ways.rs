//! The audit both ways, on the protocol fixture broken as a user's filter breaks: one that
//! drops every second insert (false negatives, and a rate far below its promise) and one that
//! answers present to everything; and the same seeds giving the same row whatever the loads.

use std::process::Output;

use crate::common;

use common::exec_fixture as fixture;
use common::{bloomlab, text};

fn audit(filter: &str, extra: &[&str]) -> Output {
    let base = ["audit", "--filter", filter, "--n", "3000", "--quiet"];
    bloomlab(&[&base[..], extra].concat())
}

#[test]
fn a_filter_that_drops_inserts_fails_with_its_first_lost_key() {
    let dropping = format!("exec:{} --break drop-half", fixture());
    // The CI step of README.md and docs/GUIDE.md: --fail-above alone, which the lost keys' low rate passes.
    let out = audit(&dropping, &["--loads", "1", "--fail-above", "1.2"]);
    let (stdout, stderr) = (text(&out.stdout), text(&out.stderr));
    assert_eq!(out.status.code(), Some(1), "{stdout}{stderr}");
    // 3000 keys inserted, all asked; the fixture drops the 2nd, 4th, ...
    assert!(
        stderr.contains(
            "check failed: no false negatives: exec_fixture (text keys) at 1.00n: 1500 of 3000 \
             inserted keys answered absent, the first key "
        ),
        "{stderr}"
    );
    assert!(stderr.contains("(inserted as number 2)"), "{stderr}");
    assert!(stdout.contains("LOSES KEYS"), "{stdout}");
    assert!(!stdout.contains("keeps its promise"), "{stdout}");
    assert!(stdout.contains("FAR BELOW its promise"), "{stdout}");
    // Without any flag the false negatives still fail the run.
    assert_eq!(audit(&dropping, &["--loads", "1"]).status.code(), Some(1));
}

#[test]
fn fail_below_fails_a_rate_far_under_the_promise_and_passes_a_good_filter() {
    let good = format!("exec:{}", fixture());
    let out = audit(&good, &["--loads", "1", "--fail-below", "0.5"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let said = text(&out.stdout);
    assert!(
        said.contains("both ways: up to 10000 inserted keys asked"),
        "{said}"
    );
    assert!(
        !said.contains("LOSES KEYS") && !said.contains("FAR BELOW"),
        "{said}"
    );
    // The drop-half filter holds half its keys: its absent keys meet a filter half as full
    // as planned, whose rate is far below half the promise.
    let dropping = format!("exec:{} --break drop-half", fixture());
    let out = audit(&dropping, &["--loads", "1", "--fail-below", "0.5"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("check failed: --fail-below 0.5: exec_fixture"),
        "{stderr}"
    );
    assert!(stderr.contains(" is below 0.5 x "), "{stderr}");
    for bad in ["0", "1.5", "-1", "x"] {
        let out = audit(&good, &["--fail-below", bad]);
        let stderr = text(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{bad}: {stderr}");
        assert!(stderr.contains("--fail-below"), "{bad}: {stderr}");
    }
}

#[test]
fn a_filter_that_answers_present_to_everything_fails_the_ci_step() {
    let everything = format!("exec:{} --break all-present", fixture());
    let out = audit(&everything, &["--loads", "1", "--fail-above", "1.2"]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("check failed: --fail-above 1.2: exec_fixture"),
        "{stderr}"
    );
    assert!(!stderr.contains("no false negatives"), "{stderr}");
}

/// The JSON rows of an audit of the fixture at `loads`.
fn rows(loads: &str) -> Vec<serde_json::Value> {
    let good = format!("exec:{}", fixture());
    let out = audit(&good, &["--loads", loads, "--format", "json"]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    rows.as_array().unwrap().clone()
}

#[test]
fn a_row_does_not_depend_on_the_other_loads() {
    let alone = rows("1");
    let among = rows("1,1.5,2");
    assert_eq!(among.len(), 3);
    for field in [
        "false_positives",
        "queries",
        "inserted_asked",
        "false_negatives",
        "n",
    ] {
        assert_eq!(alone[0][field], among[0][field], "{field}");
    }
    // The counts differ between loads: the rows are not all the same one.
    assert_ne!(among[0]["false_positives"], among[2]["false_positives"]);
}
