//! The core without the peer crates: the modules of `tests/it` that `.ci/run` runs with
//! `--no-default-features`, compiled alone (`test = false` in Cargo.toml, so that plain
//! `cargo test` leaves it to `tests/it`, which holds the same modules). Building all of
//! `tests/it` to run two of its modules cost most of that phase.

#[allow(dead_code)]
#[path = "../it/common.rs"]
mod common;

#[path = "../it/cli.rs"]
mod cli;
#[path = "../it/structures.rs"]
mod structures;
