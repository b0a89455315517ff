//! `bloomlab conform` on structures that keep the contract and on a fixture broken each way.

use predicates::prelude::*;

use crate::common;

use common::exec_fixture as fixture;

fn conform(filter: &str, extra: &[&str]) -> assert_cmd::assert::Assert {
    crate::common::command()
        .env("BLOOMLAB_EXEC_TIMEOUT", "10")
        .args([
            "conform",
            "--filter",
            filter,
            "--n",
            "2000",
            "--queries",
            "20000",
        ])
        .args(extra)
        .assert()
}

#[test]
fn good_structures_conform_with_a_one_line_summary() {
    let exec = format!("exec:{}", fixture());
    for (filter, extra) in [
        ("classic", &[][..]),
        ("cuckoo", &[][..]),
        ("binary-fuse", &["--k", "8"][..]),
        ("xor", &["--k", "8"][..]),
        ("ribbon", &["--k", "7"][..]),
        ("ribbon-32", &["--k", "13"][..]),
        (&exec, &[][..]),
        (&exec, &["--bits-per-key", "8", "--k", "5"][..]),
        (&exec, &["--key-form", "int"][..]),
        (&exec, &["--key-form", "bytes"][..]),
    ] {
        conform(filter, extra)
            .code(0)
            .stdout(predicate::str::contains(
                "conforms: 2000 inserted keys all present",
            ))
            .stdout(predicate::function(|s: &str| s.lines().count() == 1));
    }
}

#[test]
fn each_broken_fixture_is_named_by_its_first_violation() {
    let cases = [
        ("--break false-negative", "false negative: key "),
        (
            "--break nondeterministic",
            "the same seed gave different answers: absent key ",
        ),
        (
            "--break stats-mismatch --at stats",
            "memory_bits changed from ",
        ),
        ("--break short-answer", "got 1999 characters for 2000 keys"),
        // Every second key dropped: the second key inserted is the first one lost.
        (
            "--break drop-half",
            "(inserted as number 2 of 2000) answered absent",
        ),
        // Present to everything: no false negative, deterministic, and a rate of 100%.
        (
            "--break all-present",
            "false-positive rate far above the promise: 20000 of 20000 absent keys",
        ),
    ];
    for (breakage, message) in cases {
        let filter = format!("exec:{} {breakage}", fixture());
        conform(&filter, &[])
            .code(1)
            .stderr(predicate::str::contains(message))
            .stderr(predicate::str::contains("panicked").not());
    }
}
