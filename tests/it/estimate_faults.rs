//! The estimate behind `--yes` for every entry point: it weighs each key by the cache lines
//! its structure touches with k hashes (so a k of 64 costs more than a k of 1), runs for
//! `conform` and for experiment files too, and refuses before any work; `bench --estimates`
//! sets it against real runs.

use std::fs;
use std::process::Output;

use crate::common::run_in as bloomlab;

fn refused_with_the_estimate(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("estimated at"), "{stderr}");
    assert!(out.stdout.is_empty(), "refused before any work");
}

#[test]
fn a_large_k_weighs_in_the_estimate() {
    // 2·10^9 keys at 50 ns each were 100 s; 64 cache lines each out of cache (6 + 64 · 9
    // ns) make them about 19 minutes.
    let dir = tempfile::tempdir().unwrap();
    let out = bloomlab(
        dir.path(),
        &[
            "sweep-size",
            "--n",
            "2e9",
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

use crate::common;

/// `bench --estimates` runs every shape and reports estimate, CPU and wall seconds and a
/// verdict. On tiny shapes only that it works: the ratio of a run of milliseconds on a
/// shared machine is noise (the check is meant at `--queries 1000000` and more).
#[test]
fn bench_estimates_sets_the_estimate_beside_real_runs() {
    let dir = tempfile::tempdir().unwrap();
    let fixture = common::exec_fixture();
    let out = bloomlab(
        dir.path(),
        &[
            "bench",
            "--estimates",
            "--queries",
            "2000",
            "--exec",
            &fixture,
            "--format",
            "csv",
            "--quiet",
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(matches!(out.status.code(), Some(0 | 1)), "{stderr}");
    let mut lines = stdout.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = |name: &str| header.iter().position(|h| *h == name).unwrap();
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 5, "{stdout}");
    let mut failed = 0;
    for row in &rows {
        for column in ["estimated_seconds", "cpu_seconds", "wall_seconds", "ratio"] {
            let value: f64 = row[at(column)].parse().unwrap();
            assert!(value.is_finite() && value >= 0.0, "{column}: {stdout}");
        }
        let ratio: f64 = row[at("ratio")].parse().unwrap();
        let verdict = if (0.5..=2.0).contains(&ratio) {
            "pass"
        } else {
            "fail"
        };
        assert_eq!(row[at("check")], verdict, "{stdout}");
        failed += usize::from(verdict == "fail");
    }
    assert_eq!(out.status.code(), Some(i32::from(failed > 0)), "{stderr}");
    assert!(rows[4][at("filter")].starts_with("exec:"), "{stdout}");
}

/// A program's speed is measured by a timed probe before the work (exact default speed
/// would mean the probe did not run).
#[test]
fn a_program_is_timed_by_a_probe() {
    use bloomlab::params::preflight::operations_seconds;
    use bloomlab::program::EXEC_SECONDS_PER_KEY;
    let program =
        bloomlab::structures::FilterKind::named(&format!("exec:{}", common::exec_fixture()))
            .unwrap();
    let per_key = program.seconds_per_key();
    assert!(per_key > 0.0 && per_key < 1e-3, "{per_key}");
    assert_ne!(per_key, EXEC_SECONDS_PER_KEY);
    // A run large enough to need it uses the probed speed.
    assert_eq!(operations_seconds(program, 7, 1000, 1e7), 1e7 * per_key);
}

fn named(name: &str) -> bloomlab::structures::FilterKind {
    bloomlab::structures::FilterKind::named(name).unwrap()
}

/// The estimate follows the structure, k, the table's size and the peer's speed.
#[test]
fn the_estimate_weighs_structure_k_size_and_peer() {
    use bloomlab::params::preflight::operations_seconds;
    let seconds = |name: &str, k: u32, m: u64| operations_seconds(named(name), k, m, 1e6);
    let (l2, memory) = (1 << 20, 1 << 30);
    assert!(seconds("classic", 40, l2) > 4.0 * seconds("classic", 7, l2));
    assert!(seconds("classic", 7, memory) > 2.0 * seconds("classic", 7, l2));
    assert!(seconds("blocked", 7, memory) < seconds("classic", 7, memory) / 3.0);
    assert!(seconds("bloomfilter", 7, l2) > 2.5 * seconds("classic", 7, l2));
    // 10^6 operations of a classic filter at k = 7 in memory: 69 ms.
    assert!((seconds("classic", 7, memory) - 0.069).abs() < 1e-9);
}

/// A program is probed only where the run could reach the limit at its slowest.
#[test]
fn a_small_run_of_a_program_is_not_probed() {
    use bloomlab::params::preflight::operations_seconds;
    use bloomlab::program::EXEC_SECONDS_PER_KEY;
    let program = named("exec:/nonexistent/program");
    let small = operations_seconds(program.clone(), 7, 1000, 1e5);
    assert_eq!(small, 1e5 * EXEC_SECONDS_PER_KEY);
    // Probed, the program cannot start: the default speed, and no error.
    let large = operations_seconds(program, 7, 1000, 1e7);
    assert_eq!(large, 1e7 * EXEC_SECONDS_PER_KEY);
}
