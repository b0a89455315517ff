//! The estimate behind `--yes` for every entry point: it weighs each key by the cache lines
//! its structure touches with k hashes (so a k of 64 costs more than a k of 1), runs for
//! `conform` and for experiment files too, and refuses before any work.

use std::fs;
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_bloomlab");

fn bloomlab(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn refused_with_the_estimate(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("estimated at"), "{stderr}");
    assert!(out.stdout.is_empty(), "refused before any work");
}

#[test]
fn a_large_k_weighs_in_the_estimate() {
    // 10^9 keys at 50 ns each were 50 s; 64 cache lines each make them about 13 minutes.
    let dir = tempfile::tempdir().unwrap();
    let out = bloomlab(
        dir.path(),
        &[
            "sweep-size",
            "--n",
            "1e9",
            "--bits-per-key",
            "1",
            "--k",
            "64",
            "--queries",
            "1000",
        ],
    );
    refused_with_the_estimate(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("--yes"));
}

#[test]
fn conform_runs_the_estimate() {
    let dir = tempfile::tempdir().unwrap();
    let out = bloomlab(
        dir.path(),
        // Two filters of 10^8 bits (out of cache), each asked 10^10 queries twice.
        &[
            "conform",
            "--filter",
            "classic",
            "--n",
            "1e7",
            "--queries",
            "1e10",
        ],
    );
    refused_with_the_estimate(&out);
}

#[test]
fn an_experiment_file_runs_the_estimate_when_it_is_read() {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir(dir.path().join("experiments")).unwrap();
    fs::write(
        dir.path().join("experiments/huge.toml"),
        "command = \"sweep-size\"\n[params]\nn = 20000000\nqueries = 10000000000\n",
    )
    .unwrap();
    let out = bloomlab(
        dir.path(),
        &[
            "reproduce",
            "--experiments",
            "experiments",
            "--results",
            "results",
            "--quiet",
        ],
    );
    refused_with_the_estimate(&out);
    assert!(String::from_utf8_lossy(&out.stderr).contains("huge.toml"));
    assert!(!dir.path().join("results/huge.csv").exists());
}
