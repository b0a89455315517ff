//! Helpers shared by the test binaries that drive the exec protocol.

use std::path::PathBuf;

/// The protocol fixture's binary (`examples/exec_fixture.rs`), built when this test binary's
/// build did not build it.
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
