//! The audit's adapters as `adapters/list --manifest` reports them, with a stand-in folder whose
//! one ready adapter is the protocol fixture: ready adapters are measured, missing ones are
//! skipped with their reason, and `check` leaves a skipped adapter's committed rows out with a
//! SKIP line rather than passing them silently or failing the run.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use assert_cmd::Command;

use crate::common;

use common::exec_fixture as fixture;

/// Writes an executable shell script.
fn script(path: &Path, body: &str) {
    fs::write(path, format!("#!/bin/sh\n{body}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

/// A stand-in adapters folder: `run` starts the fixture, and `list --manifest` reports the
/// adapter `fake` as ready (or skipped, when `ready` is false) and `gone` as skipped.
fn adapters(dir: &Path, ready: bool) {
    script(&dir.join("run"), &format!("exec '{}' \"$@\"", fixture()));
    let fake = match ready {
        true => "fake\tready\trun\texec_fixture",
        false => "fake\tskipped\trun\tnode not found",
    };
    script(
        &dir.join("list"),
        &format!("printf '%s\\n' '{fake}' 'gone\tskipped\tnowhere/run\tno JDK here'"),
    );
}

fn bloomlab() -> Command {
    let mut command = crate::common::command();
    command.env("BLOOMLAB_EXEC_TIMEOUT", "60");
    command
}

#[test]
fn ready_adapters_are_audited_and_missing_ones_said() {
    let dir = tempfile::tempdir().unwrap();
    adapters(dir.path(), true);
    let folder = dir.path().display().to_string();
    let out = bloomlab()
        .args(["audit", "--audited", "adapters", "--adapters", &folder])
        .args(["--n", "2000", "--loads", "1", "--key-forms", "text,int"])
        .args(["--format", "json", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0]["filter"], format!("exec:{folder}/run"));
    assert!(
        stderr.contains("skipped adapter gone: no JDK here"),
        "{stderr}"
    );

    let out = bloomlab()
        .args([
            "audit",
            "--audited",
            "adapters",
            "--adapters",
            "/no/such/dir",
        ])
        .args(["--n", "2000", "--loads", "1", "--quiet"])
        .output()
        .unwrap();
    // A folder given that does not exist is bad input, refused before work: a CI job with
    // --fail-above must not pass having measured nothing.
    let said = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{said}");
    assert!(said.contains("--adapters /no/such/dir"), "{said}");
}

#[test]
fn check_leaves_out_a_missing_adapter_with_a_skip_line() {
    let dir = tempfile::tempdir().unwrap();
    let (folder, experiments, results) = (
        dir.path().join("adapters"),
        dir.path().join("experiments"),
        dir.path().join("results"),
    );
    fs::create_dir_all(&folder).unwrap();
    fs::create_dir_all(&experiments).unwrap();
    adapters(&folder, true);
    fs::write(
        experiments.join("adapters.toml"),
        format!(
            "command = \"audit\"\ndescription = \"the fixture as an adapter\"\n\n[params]\naudited = \"adapters\"\nadapters = \"{}\"\nn = 2000\nfpr = 0.05\nloads = [1.0, 2.0]\n",
            folder.display()
        ),
    )
    .unwrap();
    let suite = |command: &str| {
        let mut cmd = bloomlab();
        cmd.args([command, "--quiet", "--experiments"])
            .arg(&experiments)
            .arg("--results")
            .arg(&results);
        cmd.output().unwrap()
    };
    let out = suite("reproduce");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = suite("check");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    adapters(&folder, false);
    let out = suite("check");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("SKIP adapters: 2 committed rows of exec:"),
        "{stderr}"
    );
    assert!(stderr.contains("not compared: node not found"), "{stderr}");
    assert!(!stderr.contains("FAIL"), "{stderr}");
}

#[test]
fn several_adapter_folders_and_filters_join_one_audit() {
    let (first, second) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    adapters(first.path(), true);
    adapters(second.path(), true);
    let (a, b) = (
        first.path().display().to_string(),
        second.path().display().to_string(),
    );
    let own = format!("exec:{} --sizes-itself", fixture());
    let out = bloomlab()
        .args(["audit", "--audited", "adapters", "--adapters", &a])
        .args(["--adapters", &b, "--filter", &own, "--filter", "classic"])
        .args(["--n", "2000", "--loads", "1", "--format", "json", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let filters: Vec<&str> = (rows.as_array().unwrap().iter())
        .map(|r| r["filter"].as_str().unwrap())
        .collect();
    let expected = [
        format!("exec:{a}/run"),
        format!("exec:{b}/run"),
        own,
        "classic".into(),
    ];
    assert_eq!(filters, expected, "{stderr}");
    // Without --audited, the filters alone.
    let out = bloomlab()
        .args(["audit", "--filter", "classic", "--filter", "fastbloom"])
        .args(["--n", "2000", "--loads", "1", "--format", "json", "--quiet"])
        .output()
        .unwrap();
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows.as_array().map(Vec::len), Some(2), "{rows}");
}

/// `pip install ./adapters/python` installs the helper (offline: into a folder, with the
/// adapters' own setuptools, from a copy so that nothing is built in the checkout), and an
/// adapter outside the checkout imports it and joins an audit. Skipped without the adapters'
/// virtual environment (`adapters/install python`).
#[test]
fn the_python_helper_installs_as_a_package() {
    let python = Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/.venv/bin/python");
    if !python.is_file() {
        eprintln!("skipped: no adapters/.venv (adapters/install python)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (source, site) = (dir.path().join("source"), dir.path().join("site"));
    fs::create_dir_all(&source).unwrap();
    let shipped = Path::new(env!("CARGO_MANIFEST_DIR")).join("adapters/python");
    for file in ["pyproject.toml", "bloomlab_adapter.py"] {
        fs::copy(shipped.join(file), source.join(file)).unwrap();
    }
    let out = std::process::Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--no-build-isolation",
            "--no-deps",
        ])
        .args(["--disable-pip-version-check", "--no-index", "--target"])
        .args([&site, &source])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // A library of one's own: a Python set, which never answers a false positive.
    let adapter = dir.path().join("set_adapter.py");
    fs::write(
        &adapter,
        "from bloomlab_adapter import serve\n\
         class Exact:\n\
         \x20   def __init__(self, header): self.keys = set()\n\
         \x20   def hello(self): return {\"name\": \"python set\"}\n\
         \x20   def insert(self, keys): self.keys.update(keys)\n\
         \x20   def query(self, keys): return [key in self.keys for key in keys]\n\
         \x20   def stats(self): return {}\n\
         raise SystemExit(serve(Exact))\n",
    )
    .unwrap();
    let filter = format!("exec:{} {}", python.display(), adapter.display());
    let out = bloomlab()
        .current_dir(dir.path())
        .env("PYTHONPATH", &site)
        .args(["audit", "--filter", &filter, "--n", "1000", "--loads", "1"])
        .args(["--queries", "10000", "--format", "json", "--quiet"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let rows: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(rows[0]["library"], "python set", "{rows}");
    assert_eq!(rows[0]["false_negatives"], 0, "{rows}");
}

#[test]
fn a_missing_folder_is_one_skip_covering_all_of_it() {
    let found = bloomlab::experiments::audit::find(Path::new("/no/such/folder")).unwrap();
    assert!(found.ready.is_empty());
    let skipped = &found.skipped[0].skipped;
    assert!(skipped.covers("exec:/no/such/folder/python/run rbloom"));
    assert!(!skipped.covers("exec:/elsewhere/run"));
    assert!(skipped.reason.contains("--adapters"), "{}", skipped.reason);
}
