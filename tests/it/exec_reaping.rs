//! Killed exec programs are reaped at once (issue 43): bloomlab, still running after it killed
//! a program, has no zombie child; and a program that stops reading its input is killed
//! after the exec timeout instead of blocking bloomlab's write forever.

#![cfg(unix)]

use std::collections::HashMap;
use std::fs;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::text;

/// Says hello, then neither reads nor replies: the sizing probe's `end` goes unread (killed
/// after the timeout), and the speed probe's first insert fills the pipe.
const DEAF: &str = "read -r header\necho '{\"name\":\"deaf\"}'\nsleep 300\n";

/// The children of `pid` that are zombies (state Z), read from /proc.
fn zombie_children(pid: u32) -> Vec<u32> {
    let Ok(tasks) = fs::read_dir(format!("/proc/{pid}/task")) else {
        return Vec::new();
    };
    let children = tasks
        .flatten()
        .filter_map(|task| fs::read_to_string(task.path().join("children")).ok())
        .flat_map(|list| {
            let pids: Vec<u32> = list.split_whitespace().flat_map(str::parse).collect();
            pids
        });
    children
        .filter(|child| {
            let stat = fs::read_to_string(format!("/proc/{child}/stat")).unwrap_or_default();
            // The state follows the command name, which is in parentheses.
            stat.rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .collect()
}

/// Waits for `child` to exit, failing when a child of it stays a zombie for 500 ms or when it
/// runs past `limit` (a hang: it is then killed).
fn wait_without_zombies(mut child: Child, limit: Duration) -> std::process::Output {
    let start = Instant::now();
    let mut seen: HashMap<u32, Instant> = HashMap::new();
    while child.try_wait().unwrap().is_none() {
        for zombie in zombie_children(child.id()) {
            let since = *seen.entry(zombie).or_insert_with(Instant::now);
            assert!(
                since.elapsed() < Duration::from_millis(500),
                "child {zombie} of bloomlab is a zombie while bloomlab runs"
            );
        }
        if start.elapsed() > limit {
            child.kill().unwrap();
            panic!("bloomlab still running after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    child.wait_with_output().unwrap()
}

#[test]
fn a_program_that_stops_reading_is_killed_and_reaped_while_bloomlab_goes_on() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("deaf.sh");
    fs::write(&script, DEAF).unwrap();
    let filter = format!("exec:bash {}", script.display());
    let child = Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .args(["audit", "--filter", &filter, "--filter", "classic"])
        .args([
            "--n",
            "20000",
            "--queries",
            "20000",
            "--no-memory",
            "--format",
            "csv",
        ])
        .env("BLOOMLAB_EXEC_TIMEOUT", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let out = wait_without_zombies(child, Duration::from_secs(60));
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("did not read its request within 1 s"),
        "{stderr}"
    );
}
