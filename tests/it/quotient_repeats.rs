//! A quotient filter fed keys that repeat (issue 43): each insert re-lays a stretch as long
//! as a key's run, n/distinct slots, so the work grows as n²; the estimate charges it and
//! refuses, before work, a run that would take past its limit, naming --n and --keys.

use crate::common::{bloomlab, text};

/// 2^62: `strided:2^62` has 4 distinct keys.
const STRIDE: &str = "strided:4611686018427387904";

fn sweep(keys: &str, extra: &[&str]) -> std::process::Output {
    let base = ["sweep-size", "--filter", "quotient", "--n", "1000000"];
    let rest = ["--bits-per-elem", "10", "--k", "4", "--queries", "10000"];
    let keys = ["--keys", keys, "--query-keys", "random", "--format", "csv"];
    bloomlab(&[&base[..], &rest, &keys, extra].concat())
}

#[test]
fn a_quotient_filter_of_four_distinct_keys_at_a_million_is_refused_before_work() {
    let out = sweep(STRIDE, &[]);
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--keys") && stderr.contains("--n"),
        "{stderr}"
    );
    assert!(out.stdout.is_empty());
    // The same run of random keys is estimated at seconds, as before.
    let estimate = sweep("random", &["--estimate"]);
    let json: serde_json::Value = serde_json::from_slice(&estimate.stdout).unwrap();
    let seconds = json["seconds"].as_f64().unwrap();
    assert!(seconds < 60.0, "{json}");
    let repeated = sweep(STRIDE, &["--estimate"]);
    let json: serde_json::Value = serde_json::from_slice(&repeated.stdout).unwrap();
    assert!(
        json["seconds"].as_f64().unwrap() > 100.0 * seconds,
        "{json}"
    );
}
