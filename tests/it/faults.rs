//! Faults a careless or hostile user meets, reproduced with real processes: closed pipes,
//! full devices, FIFOs, concurrent runs.

#![cfg(unix)]

use std::fs;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::BIN;

const SMALL: &str = "command = \"sweep-size\"\n[params]\nn = 500\nk = 4\nbits_per_key = \"4..12:2\"\nqueries = 5000\n";

/// Runs `script` in bash with `$B` the bloomlab binary; the script echoes the statuses it wants.
fn bash(script: &str, dir: &Path) -> Output {
    Command::new("bash")
        .arg("-c")
        .arg(script)
        .env("B", BIN)
        .current_dir(dir)
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// An experiments folder holding a small sweep, and a results folder beside it.
fn small_suite() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    fs::create_dir_all(dir.path().join("experiments")).unwrap();
    fs::write(dir.path().join("experiments/small.toml"), SMALL).unwrap();
    dir
}

#[test]
fn a_closed_stdout_ends_quietly_with_the_status_reached() {
    let dir = tempfile::tempdir().unwrap();
    for command in [
        "\"$B\" sweep-size --queries 2000 | head -c 0",
        "\"$B\" conform --filter classic --n 1000 --queries 2000 | head -c 0",
        "\"$B\" size --n 1000 --fpr 0.01 | head -c 0",
    ] {
        let out = bash(
            &format!("{command}; echo \"status ${{PIPESTATUS[0]}}\" >&2"),
            dir.path(),
        );
        let stderr = text(&out.stderr);
        assert!(stderr.contains("status 0"), "{command}: {stderr}");
        assert!(!stderr.contains("panicked"), "{command}: {stderr}");
    }
}

#[test]
fn a_full_stdout_keeps_the_status_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = bash(
        "\"$B\" sweep-size --queries 2000 --plot p.svg >/dev/full; echo \"status $?\" >&2",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("status 0"), "{stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(stderr.matches("stdout:").count(), 1, "{stderr}");
    assert!(
        dir.path().join("p.svg").exists(),
        "the plot was not written"
    );
}

#[test]
fn reproduce_into_a_closed_stderr_loses_nothing() {
    let dir = small_suite();
    let out = bash(
        "\"$B\" reproduce --experiments experiments --results results 2>&1 | head -c 0; \
         echo \"status ${PIPESTATUS[0]}\"",
        dir.path(),
    );
    assert!(
        text(&out.stdout).contains("status 0"),
        "{}",
        text(&out.stdout)
    );
    for ext in ["csv", "md", "svg"] {
        assert!(dir.path().join(format!("results/small.{ext}")).exists());
    }
}

/// Runs bloomlab in `dir`, expecting exit 2 with every one of `messages` on stderr.
fn refused(dir: &Path, args: &[&str], messages: &[&str]) {
    let out = Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    for message in messages {
        assert!(stderr.contains(message), "{args:?}: {message}: {stderr}");
    }
    assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
}

#[test]
fn a_key_file_that_is_a_fifo_or_pipe_is_read_once_and_a_device_refused() {
    let dir = tempfile::tempdir().unwrap();
    // Before, the FIFO hung (a second open waits for a writer gone) and the pipe said "the
    // file became shorter"; both are now read once, like the regular file of the same lines.
    let run =
        "timeout 20 \"$B\" sweep-size --n 1000 --bits-per-key 8 --queries 2000 --format csv --keys";
    let out = bash(
        &format!(
            "seq 1000 > keys.txt; {run} file:keys.txt > file.csv; echo \"status $?\" >&2; \
             mkfifo keys.fifo; seq 1000 > keys.fifo & \
             {run} file:keys.fifo > fifo.csv; echo \"status $?\" >&2; wait; \
             {run} file:<(seq 1000) > pipe.csv; echo \"status $?\" >&2; \
             timeout 20 \"$B\" sweep-size --keys file:/dev/zero; echo \"status $?\" >&2"
        ),
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert_eq!(stderr.matches("status 0").count(), 3, "{stderr}");
    assert!(!stderr.contains("shorter"), "{stderr}");
    let file = fs::read_to_string(dir.path().join("file.csv")).unwrap();
    assert!(file.lines().count() > 1, "{file}");
    for copy in ["fifo.csv", "pipe.csv"] {
        let got = fs::read_to_string(dir.path().join(copy)).unwrap();
        // The same keys give the same rows, but for the source's name.
        let strip = |text: &str| {
            text.replace("file:keys.txt", "")
                .replace("file:keys.fifo", "")
        };
        let got = without_fd_names(&strip(&got));
        assert_eq!(got, strip(&file), "{copy}");
    }
    assert!(stderr.contains("status 2"), "{stderr}");
    assert!(
        stderr.contains("not a regular file, pipe or FIFO"),
        "{stderr}"
    );
}

/// `text` with every `file:/dev/fd/N` taken out (a pipe's name varies).
fn without_fd_names(text: &str) -> String {
    text.split(',')
        .map(|field| {
            if field.starts_with("file:/dev/fd/") {
                ""
            } else {
                field
            }
        })
        .collect::<Vec<_>>()
        .join(",")
}

#[test]
fn out_into_a_fifo_writes_through_it() {
    let dir = tempfile::tempdir().unwrap();
    let out = bash(
        "mkfifo out.fifo; cat out.fifo > got.csv & \
         timeout 20 \"$B\" sweep-size --queries 1000 --format csv --out out.fifo --quiet; \
         echo \"status $?\" >&2; wait; test -p out.fifo && echo still-a-fifo >&2",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("status 0"), "{stderr}");
    assert!(stderr.contains("still-a-fifo"), "{stderr}");
    let got = fs::read_to_string(dir.path().join("got.csv")).unwrap();
    assert!(got.starts_with("experiment,"), "{got}");
}

#[test]
fn refusals_name_the_right_flag_with_exit_2() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path();
    refused(
        d,
        &[
            "sweep-size",
            "--out",
            "x.svg",
            "--plot",
            "x.svg",
            "--queries",
            "1000",
        ],
        &["--plot x.svg", "--out"],
    );
    assert!(!d.join("x.svg").exists());
    refused(
        d,
        &["reproduce", "--experiments", "/nonexistent"],
        &["--experiments /nonexistent"],
    );
    refused(
        d,
        &["check", "--experiments", "/nonexistent"],
        &["--experiments /nonexistent"],
    );
    refused(
        d,
        &[
            "audit",
            "--audited",
            "adapters",
            "--adapters",
            "/nonexistent",
            "--n",
            "1000",
        ],
        &["--adapters /nonexistent", "not a folder"],
    );
    for bits in ["NaN", "-1", "0"] {
        refused(
            d,
            &["conform", "--filter", "classic", "--bits-per-key", bits],
            &["--bits-per-key", "(allowed:"],
        );
    }
    refused(
        d,
        &["conform", "--filter", "classic", "--fpr", "0"],
        &["--fpr 0"],
    );
    refused(
        d,
        &["size", "--n", "1e30", "--fpr", "0.01"],
        &["out of range"],
    );
    refused(
        d,
        &["conform", "--filter", "classic", "--n", "0"],
        &["--n 0", "1..="],
    );
}

#[test]
fn counts_take_exponents_everywhere() {
    let dir = tempfile::tempdir().unwrap();
    for args in [
        ["size", "--n", "1e6", "--fpr", "0.01", "--format", "csv"].as_slice(),
        &[
            "conform",
            "--filter",
            "classic",
            "--n",
            "2e3",
            "--queries",
            "1e4",
        ],
    ] {
        let out = Command::new(BIN)
            .args(args)
            .current_dir(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "{args:?}: {}", text(&out.stderr));
    }
}

#[test]
fn a_second_reproduce_into_a_locked_folder_is_refused_naming_the_holder() {
    let dir = small_suite();
    fs::create_dir_all(dir.path().join("results")).unwrap();
    let out = bash(
        "exec 9>results/.reproduce.lock; flock -n 9; echo $$ >&9; \
         \"$B\" reproduce --experiments experiments --results results --quiet; \
         echo \"status $? holder $$\" >&2",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    let holder = stderr.rsplit("holder ").next().unwrap().trim();
    assert!(stderr.contains("status 2"), "{stderr}");
    assert!(stderr.contains(&format!("(process {holder})")), "{stderr}");
    assert!(!dir.path().join("results/small.csv").exists());
}

#[test]
fn a_failing_sub_suite_leaves_every_suite_untouched() {
    let dir = small_suite();
    fs::create_dir_all(dir.path().join("experiments/wild")).unwrap();
    fs::write(
        dir.path().join("experiments/wild/bad.toml"),
        "command = \"sweep-size\"\n[params]\nk = 0\n",
    )
    .unwrap();
    let out = bash(
        "\"$B\" reproduce --experiments experiments --results results --quiet; echo \"status $?\" >&2",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("status 2"), "{stderr}");
    assert!(
        !dir.path().join("results/small.csv").exists(),
        "the first suite was committed alone"
    );
}

#[test]
fn an_experiment_whose_every_filter_is_skipped_keeps_its_files() {
    let dir = small_suite();
    let d = dir.path();
    fs::create_dir_all(d.join("no-adapters")).unwrap();
    fs::create_dir_all(d.join("results")).unwrap();
    fs::write(
        d.join("experiments/adapters.toml"),
        "command = \"audit\"\n[params]\naudited = \"adapters\"\nadapters = \"no-adapters\"\nn = 1000\nfpr = 0.05\n",
    )
    .unwrap();
    for name in ["adapters.csv", "adapters.md", "adapters.svg", "index.html"] {
        fs::write(d.join("results").join(name), "committed").unwrap();
    }
    let out = bash(
        "\"$B\" reproduce --experiments experiments --results results --quiet; echo \"status $?\" >&2",
        d,
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("status 0"), "{stderr}");
    assert!(stderr.contains("adapters: kept"), "{stderr}");
    for name in ["adapters.csv", "adapters.md", "adapters.svg", "index.html"] {
        assert_eq!(
            fs::read_to_string(d.join("results").join(name)).unwrap(),
            "committed",
            "{name}"
        );
    }
    assert!(d.join("results/small.csv").exists());
}

/// A write refused mid-way (here a file-size limit, as a full disk refuses it) names the
/// file asked for, never the temporary file it is staged in, and leaves nothing behind.
#[test]
fn a_refused_write_names_the_file_asked_for() {
    let dir = tempfile::tempdir().unwrap();
    let out = bash(
        "trap '' XFSZ; ulimit -f 4; \"$B\" sweep-k --format csv --out big.csv --quiet; \
         echo \"status $?\" >&2; ls -A",
        dir.path(),
    );
    let stderr = text(&out.stderr);
    assert!(stderr.contains("status 1"), "{stderr}");
    assert!(stderr.contains("error: big.csv: "), "{stderr}");
    assert!(!stderr.contains(".tmp"), "{stderr}");
    assert_eq!(
        text(&out.stdout).trim(),
        "",
        "left behind: {}",
        text(&out.stdout)
    );
}
