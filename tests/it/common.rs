//! Helpers shared by the test binaries that drive the exec protocol (each takes what it
//! needs, so every helper allows being unused in a binary).

use std::path::PathBuf;
use std::process::{Command, Output};

/// The protocol fixture's binary (`examples/exec_fixture.rs`), built when this test binary's
/// build did not build it.
#[allow(dead_code)]
pub fn exec_fixture() -> String {
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_bloomlab"));
    let path = bin.with_file_name("examples").join("exec_fixture");
    if !path.exists() {
        let status = std::process::Command::new(env!("CARGO"))
            .args(["build", "--release", "--example", "exec_fixture"])
            .status()
            .unwrap();
        assert!(status.success(), "cargo build --example exec_fixture");
    }
    path.display().to_string()
}

/// bloomlab run to its end with `args`, an exec program given 60 s for each reply (stated,
/// so that the default cannot change what a test waits for).
#[allow(dead_code)]
pub fn bloomlab(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bloomlab"))
        .env("BLOOMLAB_EXEC_TIMEOUT", "60")
        .args(args)
        .output()
        .unwrap()
}

/// Output bytes as text, invalid UTF-8 replaced.
#[allow(dead_code)]
pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// The bloomlab binary this build made.
pub const BIN: &str = env!("CARGO_BIN_EXE_bloomlab");

/// bloomlab as an `assert_cmd` command, to be given its arguments.
pub fn command() -> assert_cmd::Command {
    assert_cmd::Command::new(BIN)
}

/// bloomlab run to its end in `dir` with `args`.
pub fn run_in(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(BIN)
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap()
}

/// Copies the files of `from` whose stem is in `names` (every file and sub-folder when
/// `names` is empty).
pub fn copy_dir(from: &std::path::Path, to: &std::path::Path, names: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let path = entry.unwrap().path();
        let stem = path.file_stem().unwrap().to_str().unwrap();
        let to = to.join(path.file_name().unwrap());
        if path.is_file() && (names.is_empty() || names.contains(&stem)) {
            std::fs::copy(&path, to).unwrap();
        } else if path.is_dir() && names.is_empty() {
            copy_dir(&path, &to, names);
        }
    }
}
