//! Exec programs that misbehave after the protocol's happy path: stragglers left running,
//! output after `end`, no exit after `end`, endless reply lines, extra reply lines, and a
//! timeout variable out of range. Each program is a tiny bash script written by the test.

#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

/// A protocol speaker in bash answering every query key absent, broken by its first
/// argument: `straggler PIDFILE` (starts a child, never replies), `linger` (never exits after
/// `end`), `extra` (answers each query twice), `endless` (a hello line without end).
const SPEAKER: &str = r#"mode=$1
read -r header
case $mode in
  straggler) sleep 300 & echo $! > "$2"; wait; exit 0;;
  endless) tr -d '\n' < /dev/zero; exit 0;;
esac
echo '{"name":"shell speaker"}'
while read -r cmd count; do
  case $cmd in
    insert) for ((i = 0; i < count; i++)); do read -r k; done; echo ok;;
    query) for ((i = 0; i < count; i++)); do read -r k; done
           line=$(printf '0%.0s' $(seq "$count")); echo "$line"
           [ "$mode" = extra ] && echo "$line";;
    stats) echo '{}';;
    end) [ "$mode" = linger ] && sleep 300; exit 0;;
  esac
done
"#;

fn sweep(dir: &Path, program: &str, timeout: &str) -> Output {
    let script = dir.join("speaker.sh");
    fs::write(&script, SPEAKER).unwrap();
    let filter = format!("exec:bash {} {program}", script.display());
    Command::new(BIN)
        .args([
            "sweep-size",
            "--filter",
            &filter,
            "--n",
            "200",
            "--m",
            "2000",
        ])
        .args(["--queries", "1000", "--format", "csv", "--quiet"])
        .env("BLOOMLAB_EXEC_TIMEOUT", timeout)
        .output()
        .unwrap()
}

fn fails_with(out: &Output, messages: &[&str]) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("exec program"), "{stderr}");
    assert!(
        messages.iter().any(|m| stderr.contains(m)),
        "{messages:?}: {stderr}"
    );
    assert!(!stderr.contains("panicked"), "{stderr}");
}

/// True while `pid` runs (a zombie has ended).
fn running(pid: &str) -> bool {
    fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit(')')
            .next()
            .is_some_and(|s| !s.trim_start().starts_with('Z'))
    })
}

#[test]
fn a_timed_out_program_dies_with_everything_it_started() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let program = format!("straggler {}", pid_file.display());
    let out = sweep(dir.path(), &program, "0.5");
    fails_with(&out, &["no reply within 0.5 s"]);
    let pid = fs::read_to_string(&pid_file).unwrap();
    let pid = pid.trim();
    std::thread::sleep(std::time::Duration::from_millis(200));
    assert!(!running(pid), "the program's child {pid} outlived bloomlab");
}

#[test]
fn a_program_still_running_after_end_fails_the_run() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(
        &sweep(dir.path(), "linger", "0.5"),
        &["still running 0.5 s after `end`"],
    );
}

/// A command that runs a program outside the experiments' pipeline ends it and hears its
/// late failure too: audit, which sizes it by target rate. (The speaker answers every key
/// absent, which conform reports as a violation before it ends the programs.)
#[test]
fn a_program_still_running_after_end_fails_the_audit() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("speaker.sh");
    fs::write(&script, SPEAKER).unwrap();
    let filter = format!("exec:bash {} linger", script.display());
    let runs: [&[&str]; 1] = [&[
        "audit",
        "--n",
        "200",
        "--loads",
        "1",
        "--queries",
        "1000",
        "--quiet",
    ]];
    for args in runs {
        let out = Command::new(BIN)
            .args(&args[..1])
            .args(["--filter", &filter])
            .args(&args[1..])
            .env("BLOOMLAB_EXEC_TIMEOUT", "0.5")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert!(
            stderr.contains("still running 0.5 s after `end`"),
            "{args:?}: {stderr}"
        );
    }
}

#[test]
fn an_extra_reply_line_is_an_error_not_a_shift() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(
        &sweep(dir.path(), "extra", "10"),
        &["a line no request asked for", "after `end`"],
    );
}

#[test]
fn an_endless_reply_line_is_refused_at_its_bound() {
    let dir = tempfile::tempdir().unwrap();
    fails_with(
        &sweep(dir.path(), "endless", "10"),
        &["longer than 1048576 bytes"],
    );
}

#[test]
fn the_timeout_variable_is_refused_like_a_flag() {
    for value in ["1e30", "0", "NaN", "abc", "-1"] {
        let out = Command::new(BIN)
            .args(["sweep-size", "--filter", "exec:true", "--queries", "1000"])
            .env("BLOOMLAB_EXEC_TIMEOUT", value)
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{value}: {stderr}");
        assert!(
            stderr.contains("BLOOMLAB_EXEC_TIMEOUT"),
            "{value}: {stderr}"
        );
        assert!(stderr.contains("(0, 86400]"), "{value}: {stderr}");
        assert!(!stderr.contains("panicked"), "{value}: {stderr}");
    }
}

/// A failure only a key-by-key call met (it returns nothing) is not lost: ending the filter
/// returns it. The program answers the header, then exits at the first insert.
#[test]
fn a_failure_met_key_by_key_is_returned_when_the_filter_ends() {
    use bloomlab::hash::HashScheme;
    use bloomlab::structures::FilterKind;
    let kind: FilterKind = "exec:read -r h; echo '{\"name\":\"quitter\"}'; read -r cmd; exit 3"
        .parse()
        .unwrap();
    let mut filter = kind
        .build(10, 100, 3, HashScheme::MultiplyShift, 1)
        .unwrap();
    filter.insert(7);
    let error = filter.finish().unwrap_err().to_string();
    assert!(error.contains("an earlier request failed"), "{error}");
}
