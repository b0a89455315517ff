//! advise's faults, each reproduced by a real process: a contender sized over full, a run
//! that showed no progress when stderr is not a terminal, and a run too large for the `--yes`
//! estimate that planned before it was refused.

use crate::common::command as bloomlab;

/// At n = 1007 the classic design for ε = 2^-5 has m = 7264 bits, which a quotient filter
/// lays out alike for k = 7 and k = 8; advise took that for a structure whose table does not
/// depend on k and gave the quotient filter the classic (m, k = 5): 908 slots for 1007 keys,
/// so its build refused keys and the contender was dropped (at n = 10^6 the same mistake,
/// load 1.11, made each insert near full decode the whole table: the run did not finish).
/// Every configuration measured here is within the budget and bound, so none may refuse keys.
#[test]
fn no_contender_is_sized_over_full() {
    let output = bloomlab()
        .args([
            "advise",
            "--n",
            "1007",
            "--work-ns",
            "20",
            "--needs",
            "delete",
            "--measure-all",
            "--max-fpr",
            "0.04",
            "--bits-per-key",
            "12",
            "--queries",
            "1000",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(0));
    let text = String::from_utf8_lossy(&output.stdout);
    assert!(text.contains("quotient"), "{text}");
    assert!(!text.contains("keys refused"), "{text}");
}

/// With stderr a pipe the bar is not drawn; advise then prints its phases and each
/// contender as plain lines, and nothing of them under `--quiet`.
#[test]
fn progress_shows_as_lines_when_stderr_is_not_a_terminal() {
    let run = |quiet: bool| {
        let mut command = bloomlab();
        command.args([
            "advise",
            "--n",
            "1000",
            "--work-ns",
            "20",
            "--needs",
            "delete",
            "--contenders",
            "2",
            "--queries",
            "1000",
        ]);
        if quiet {
            command.arg("--quiet");
        }
        let output = command.output().unwrap();
        assert_eq!(output.status.code(), Some(0));
        String::from_utf8_lossy(&output.stderr).into_owned()
    };
    let shown = run(false);
    for phase in [
        "advise: time model, structure 1 of",
        "advise: contender 1 of",
        "advise: the workload end to end",
    ] {
        assert!(shown.contains(phase), "{phase} missing from {shown}");
    }
    assert!(!run(true).contains("advise: "));
}

/// `advise --n 1e8` went on to plan (an empty filter of every configuration built at n to
/// read its memory: 10 minutes here under load) before the `--yes` estimate refused it. The
/// estimate of its least work (the references, one contender and the end-to-end filters at
/// n) from the sizing flags alone now comes first, held against `--target-seconds`: exit 2
/// naming it and the estimate, before any filter is built. The timeout is a hang guard (the
/// refusal takes milliseconds; the planning it replaces, over a minute on an idle machine),
/// not a speed target.
#[test]
fn a_run_estimated_past_the_limit_is_refused_before_planning() {
    let output = bloomlab()
        .args([
            "advise",
            "--n",
            "1e8",
            "--work-ns",
            "20",
            "--target-seconds",
            "10",
        ])
        .timeout(std::time::Duration::from_secs(30))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stderr);
    assert_eq!(output.status.code(), Some(2), "{text}");
    assert!(text.contains("more than --target-seconds 10"), "{text}");
    assert!(
        text.contains("estimated at") && text.contains("--yes"),
        "{text}"
    );
}

/// Refusals that only the flags decide come before any filter is built: a budget no filter
/// meets (`--memory 1`, at 10^8 keys: 83 s and 1.4 GB of empty filters read for their
/// memory before the refusal), a rate bound none reaches (`--max-fpr 1e-9`), and an output
/// path whose folder does not exist (refused after planning, where sweep-size refuses it
/// at once). Each at n = 10^8 with `--yes`, where planning alone is more than a minute:
/// the timeout is a hang guard against that, not a speed target.
#[test]
fn refusals_come_before_any_filter_is_built() {
    let cases: [(&[&str], &str); 3] = [
        (&["--memory", "1"], "--memory"),
        (&["--max-fpr", "1e-9"], "--max-fpr"),
        (&["--out", "/nonexistent/dir/x.csv"], "--out"),
    ];
    for (flags, names) in cases {
        let output = bloomlab()
            .args(["advise", "--n", "1e8", "--yes", "--work-ns", "20"])
            .args(flags)
            .timeout(std::time::Duration::from_secs(30))
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&output.stderr);
        assert_eq!(output.status.code(), Some(2), "{flags:?}: {text}");
        assert!(text.contains(names), "{flags:?}: {text}");
    }
}

/// `--contenders 500 --target-seconds 10` measured no contender and recommended no filter:
/// the measuring budget was shared equally among 500 (10 ms each), less than any
/// measurement takes. The budget is now granted in order of priority, each structure's
/// best first.
#[test]
fn many_contenders_on_a_short_target_measure_some() {
    let output = bloomlab()
        .args([
            "advise",
            "--n",
            "10000",
            "--queries",
            "1000",
            "--contenders",
            "500",
            "--work-ns",
            "cache-miss",
            "--target-seconds",
            "10",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    let measured = text
        .split("; measured ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|t| t.parse::<u32>().ok());
    assert!(measured.is_some_and(|m| m > 0), "{text}");
}

/// `--work-ns 1e9` ran past 120 s against a 10 s target: the end-to-end run did 500
/// queries a pass whatever each cost (500 s a pass of no filter), and calibrating the busy
/// loop timed calls of its full length. The end-to-end run now takes at most its share of
/// the target, or is left out with a note saying why; the timeout is a hang guard.
#[test]
fn dear_work_keeps_within_the_target() {
    let output = bloomlab()
        .args([
            "advise",
            "--n",
            "1000",
            "--queries",
            "1000",
            "--needs",
            "delete",
            "--contenders",
            "2",
            "--work-ns",
            "1e9",
            "--target-seconds",
            "10",
        ])
        .timeout(std::time::Duration::from_secs(60))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(text.contains("end to end not run"), "{text}");
}

/// A key file whose lines repeat was advised on in silence: `duplicate_keys` was not counted
/// and nothing said that each filter held half the keys its closed forms assumed. advise now
/// counts them as sweep-size does and says so in a note.
#[test]
fn duplicate_keys_in_a_key_file_are_counted_and_said() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("keys.txt");
    let lines: String = (0..2)
        .flat_map(|_| 1..=2000)
        .map(|i| format!("{i}\n"))
        .collect();
    std::fs::write(&file, lines).unwrap();
    let keys = format!("file:{}", file.display());
    let output = bloomlab()
        .args([
            "advise",
            "--keys",
            &keys,
            "--n",
            "4000",
            "--queries",
            "2000",
        ])
        .args([
            "--negative-share",
            "0.9",
            "--work-ns",
            "20",
            "--target-seconds",
            "10",
        ])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(0), "{text}");
    assert!(
        text.contains("duplicate_keys = 2000 of n = 4000") && text.contains("2000 distinct keys"),
        "{text}"
    );
}
