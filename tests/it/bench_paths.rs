//! `bloomlab bench --simd`: a path forced onto every filter with vector code and named on
//! each row beside the CPU, and a path this CPU lacks refused before any work. Real runs of
//! the binary; times are reported, never asserted.

use std::collections::HashMap;
use std::process::{Command, Output};

use bloomlab::bench::machine::Machine;
use bloomlab::hash::Simd;

use crate::common::BIN;

fn bench(extra: &[&str]) -> Output {
    let args = [
        "bench",
        "--size",
        "in-cache",
        "--queries",
        "2000",
        "--passes",
        "1",
    ];
    Command::new(BIN)
        .args(args)
        .args(["--format", "csv", "--quiet"])
        .args(extra)
        .output()
        .unwrap()
}

/// The rows of a CSV output, each as column -> value.
fn rows(out: &Output) -> Vec<HashMap<String, String>> {
    let mut reader = csv::Reader::from_reader(&out.stdout[..]);
    let header = reader.headers().unwrap().clone();
    reader
        .records()
        .map(|r| {
            let r = r.unwrap();
            header
                .iter()
                .map(String::from)
                .zip(r.iter().map(String::from))
                .collect()
        })
        .collect()
}

/// Forced onto each path this CPU runs, every bloomlab row of a design with vector code
/// (blocked, blocked-1024 and split-block on either hashing, classic on multiply-shift, the
/// reg-blocked and cache-sector batches) names that path,
/// the others `scalar`, peers their crate's; every row names this machine, and the notes
/// say whether other processes shared it.
#[test]
fn a_forced_path_is_the_path_of_every_vector_row_and_the_rows_name_the_cpu() {
    let cpu = Machine::here().describe();
    for simd in Simd::available() {
        let out = bench(&["--simd", simd.name()]);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let rows = rows(&out);
        assert!(!rows.is_empty());
        for row in &rows {
            let vector = match row["structure"].as_str() {
                "classic" => row["hash"] == "multiply-shift",
                _ => true,
            };
            let expected = match (row["peer"].as_str(), vector) {
                ("bloomlab", true) => simd.name(),
                ("bloomlab", false) => "scalar",
                _ => "the crate's",
            };
            assert_eq!(row["path"], expected, "{simd}: {row:?}");
            assert_eq!(row["cpu"], cpu);
        }
        let notes = String::from_utf8_lossy(&out.stderr);
        assert!(notes.contains("CPUs busy on average"), "{notes}");
    }
}

/// An unknown path, and each path this CPU lacks, exit 2 naming the flag, with no table.
#[test]
fn a_path_this_cpu_lacks_is_refused_before_any_work() {
    let lacking = Simd::ALL
        .into_iter()
        .filter(|s| !s.runs_here())
        .map(|s| s.name());
    for name in lacking.chain(["neon"]) {
        let out = bench(&["--simd", name]);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{name}: {stderr}");
        assert!(stderr.contains("--simd"), "{name}: {stderr}");
        assert!(out.stdout.is_empty(), "{name}");
    }
}
