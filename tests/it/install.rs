//! An installed binary run outside the checkout: with no `./experiments` it uses the files
//! built into it, and says so and how to point elsewhere.

use predicates::prelude::*;

#[test]
fn outside_the_checkout_the_built_in_experiment_files_are_used() {
    let dir = tempfile::tempdir().unwrap();
    crate::common::command()
        .current_dir(dir.path())
        .arg("check")
        .assert()
        .code(2)
        .stderr(predicate::str::contains(
            "experiment files built into bloomlab",
        ))
        .stderr(predicate::str::contains("--experiments DIR"))
        .stderr(predicate::str::contains("run it first"));
}
