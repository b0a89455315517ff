//! The Dask route (distributed/, `bloomlab-dask`) against a real `dask scheduler` and two
//! `dask worker` processes on 127.0.0.1: the driver prints the single run byte for byte (also
//! with an `exec:` program, and with a worker SIGKILLed mid-run), a worker whose bloomlab is
//! another build or lacks a file the command names is refused before any task counts,
//! Ctrl-C leaves no bloomlab behind, and no process is left whatever the outcome.
//!
//! Dask comes from `distributed/install` (distributed/.venv), else from PATH; without it the
//! tests say so and pass, except with CI=true, where a missing Dask fails.

use std::io::{BufRead, BufReader};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::common;

use common::{exec_fixture, text};

/// Longest any driver run of these tests may take.
const DEADLINE: Duration = Duration::from_secs(240);

fn bloomlab_bin() -> PathBuf {
    PathBuf::from(env!("CARGO_BIN_EXE_bloomlab"))
}

/// The folder holding `dask` and `bloomlab-dask`, or None (a failure under CI=true).
fn dask_bin() -> Option<PathBuf> {
    let venv = Path::new(env!("CARGO_MANIFEST_DIR")).join("distributed/.venv/bin");
    let on_path = std::env::var_os("PATH").and_then(|path| {
        std::env::split_paths(&path)
            .find(|d| d.join("dask").exists() && d.join("bloomlab-dask").exists())
    });
    let found = [Some(venv), on_path]
        .into_iter()
        .flatten()
        .find(|d| d.join("dask").exists() && d.join("bloomlab-dask").exists());
    if found.is_none() {
        let ci = std::env::var("CI").is_ok_and(|v| v == "true");
        assert!(!ci, "CI=true: Dask is missing; run distributed/install");
        eprintln!("skipped: no dask and bloomlab-dask (run distributed/install)");
    }
    found
}

/// Processes started by a test, killed with their process groups when it ends, however it
/// ends.
#[derive(Default)]
struct Group(Vec<Child>);

impl Group {
    fn spawn(&mut self, command: &mut Command) -> usize {
        let child = command.process_group(0).spawn().expect("spawn");
        self.0.push(child);
        self.0.len() - 1
    }

    fn kill(&mut self, i: usize) {
        let pid = self.0[i].id() as i32;
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let _ = self.0[i].wait();
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        for i in 0..self.0.len() {
            self.kill(i);
        }
    }
}

/// A port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A scheduler and two workers; `path_of(w)` is worker w's PATH (where it finds bloomlab).
struct Cluster {
    group: Group,
    address: String,
    workers: Vec<usize>,
    _cwd: tempfile::TempDir,
}

fn path_with(first: &Path) -> String {
    let rest = std::env::var("PATH").unwrap_or_default();
    format!("{}:{rest}", first.display())
}

fn start_cluster(dask: &Path, path_of: impl Fn(usize) -> String) -> Cluster {
    let mut group = Group::default();
    let port = free_port();
    let address = format!("tcp://127.0.0.1:{port}");
    let cwd = tempfile::tempdir().unwrap();
    group.spawn(
        Command::new(dask.join("dask"))
            .args([
                "scheduler",
                "--host",
                "127.0.0.1",
                "--port",
                &port.to_string(),
            ])
            .args(["--no-dashboard"])
            .current_dir(cwd.path())
            .stdout(Stdio::null())
            .stderr(Stdio::null()),
    );
    let workers = (0..2)
        .map(|w| {
            group.spawn(
                Command::new(dask.join("dask"))
                    .args(["worker", &address, "--nthreads", "1", "--no-nanny"])
                    .args([
                        "--no-dashboard",
                        "--host",
                        "127.0.0.1",
                        "--name",
                        &format!("w{w}"),
                    ])
                    .env("PATH", path_of(w))
                    .current_dir(cwd.path())
                    .stdout(Stdio::null())
                    .stderr(Stdio::null()),
            )
        })
        .collect();
    Cluster {
        group,
        address,
        workers,
        _cwd: cwd,
    }
}

/// The driver's command on the scheduler at `address`, from `cwd`.
fn driver(dask: &Path, address: &str, cwd: &Path, flags: &[&str], command: &[&str]) -> Command {
    let mut driver = Command::new(dask.join("bloomlab-dask"));
    driver
        .args(["--scheduler", address])
        .args(flags)
        .arg("--")
        .args(command)
        .env("PATH", path_with(bloomlab_bin().parent().unwrap()))
        .env("BLOOMLAB_EXEC_TIMEOUT", "60")
        .current_dir(cwd)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    driver
}

/// Runs the driver to its end; `on_line` sees each stderr line as it comes.
fn run_driver(
    group: &mut Group,
    mut driver: Command,
    on_line: impl Fn(&str, &mut Group, u32),
) -> Output {
    let i = group.spawn(&mut driver);
    let stderr = group.0[i].stderr.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(|l| l.ok()) {
            let _ = tx.send(line);
        }
    });
    let start = Instant::now();
    let (mut lines, mut seen) = (Vec::new(), 0);
    loop {
        while let Ok(line) = rx.try_recv() {
            seen += 1;
            on_line(&line, group, seen);
            lines.push(line);
        }
        if let Some(status) = group.0[i].try_wait().unwrap() {
            let mut stdout = Vec::new();
            std::io::Read::read_to_end(group.0[i].stdout.as_mut().unwrap(), &mut stdout).unwrap();
            std::thread::sleep(Duration::from_millis(100));
            lines.extend(rx.try_iter());
            return Output {
                status,
                stdout,
                stderr: lines.join("\n").into_bytes(),
            };
        }
        assert!(
            start.elapsed() < DEADLINE,
            "the driver took too long: {}",
            lines.join("\n")
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn single(command: &[&str]) -> Output {
    common::bloomlab(command)
}

/// bloomlab processes counting a shard of a command with key seed `seed`.
fn shards_left(seed: &str) -> Vec<String> {
    let bin = bloomlab_bin().display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("cmdline")).ok())
        .map(|c| {
            c.split(|&b| b == 0)
                .map(|w| String::from_utf8_lossy(w).into_owned())
                .collect::<Vec<_>>()
        })
        .filter(|words| {
            words.first().is_some_and(|w| *w == bin)
                && words.iter().any(|w| w == "--shard")
                && words.windows(2).any(|p| p[0] == "--seed" && p[1] == seed)
        })
        .map(|words| words.join(" "))
        .collect()
}

fn assert_none_left(seed: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while !shards_left(seed).is_empty() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(
        shards_left(seed),
        Vec::<String>::new(),
        "bloomlab processes left"
    );
}

fn same_as_single(out: &Output, command: &[&str]) {
    let single = single(command);
    assert_eq!(
        out.status.code(),
        single.status.code(),
        "{}",
        text(&out.stderr)
    );
    assert_eq!(
        text(&out.stdout),
        text(&single.stdout),
        "{}",
        text(&out.stderr)
    );
    assert!(!single.stdout.is_empty());
}

#[test]
fn the_driver_prints_the_single_run_also_with_an_exec_program() {
    let Some(dask) = dask_bin() else { return };
    let bin_dir = bloomlab_bin().parent().unwrap().to_path_buf();
    let mut cluster = start_cluster(&dask, |_| path_with(&bin_dir));
    let cwd = tempfile::tempdir().unwrap();
    let plain = [
        "sweep-size",
        "--seed",
        "11",
        "--queries",
        "3000000",
        "--format",
        "csv",
        "-q",
    ];
    let flags = ["--shard-seconds", "0.01", "--min-workers", "2"];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &plain),
        |_, _, _| {},
    );
    same_as_single(&out, &plain);
    assert!(text(&out.stderr).contains("shards"), "progress on stderr");
    let filter = format!("exec:{}", exec_fixture());
    let exec = [
        "sweep-size",
        "--seed",
        "12",
        "--filter",
        &filter,
        "--n",
        "20000",
        "--queries",
        "2200000",
        "-q",
    ];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &exec),
        |_, _, _| {},
    );
    same_as_single(&out, &exec);
    drop(cluster);
    assert_none_left("11");
    assert_none_left("12");
}

#[test]
fn the_driver_audits_an_exec_program_as_the_single_run() {
    let Some(dask) = dask_bin() else { return };
    let bin_dir = bloomlab_bin().parent().unwrap().to_path_buf();
    let mut cluster = start_cluster(&dask, |_| path_with(&bin_dir));
    let cwd = tempfile::tempdir().unwrap();
    // A program that loses keys: the driver's run names the first lost key and exits 1, as
    // the single run does. Its measured memory differs from run to run: left out.
    let filter = format!("exec:{} --break drop-half", exec_fixture());
    let audit = [
        "audit",
        "--seed",
        "13",
        "--filter",
        &filter,
        "--n",
        "5000",
        "--loads",
        "1,2",
        "--queries",
        "2200000",
        "--no-memory",
        "-q",
    ];
    let flags = ["--shard-seconds", "0.01", "--min-workers", "2"];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &audit),
        |_, _, _| {},
    );
    same_as_single(&out, &audit);
    assert_eq!(out.status.code(), Some(1));
    assert!(
        text(&out.stdout).contains("LOSES KEYS"),
        "{}",
        text(&out.stdout)
    );
    drop(cluster);
    assert_none_left("13");
}

#[test]
fn a_worker_killed_mid_run_leaves_the_result_exact() {
    let Some(dask) = dask_bin() else { return };
    let bin_dir = bloomlab_bin().parent().unwrap().to_path_buf();
    let mut cluster = start_cluster(&dask, |_| path_with(&bin_dir));
    let cwd = tempfile::tempdir().unwrap();
    let command = [
        "sweep-size",
        "--seed",
        "21",
        "--queries",
        "12000000",
        "--format",
        "csv",
        "-q",
    ];
    let flags = ["--shard-seconds", "0.01", "--min-workers", "2"];
    let victim = cluster.workers[0];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &command),
        |line, group, _| {
            // After the first shard is in, one worker dies with the tasks it runs.
            if line.contains("1/") && line.contains("shards,") {
                group.kill(victim);
            }
        },
    );
    same_as_single(&out, &command);
    drop(cluster);
    assert_none_left("21");
}

#[test]
fn ctrl_c_cancels_and_leaves_no_bloomlab_and_a_consistent_resume_folder() {
    let Some(dask) = dask_bin() else { return };
    let bin_dir = bloomlab_bin().parent().unwrap().to_path_buf();
    let mut cluster = start_cluster(&dask, |_| path_with(&bin_dir));
    let cwd = tempfile::tempdir().unwrap();
    let resume = cwd.path().join("resume");
    let command = [
        "sweep-size",
        "--seed",
        "31",
        "--queries",
        "40000000",
        "--format",
        "csv",
        "-q",
    ];
    let flags = [
        "--shard-seconds",
        "0.01",
        "--resume",
        resume.to_str().unwrap(),
    ];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &command),
        |line, group, _| {
            if line.contains("1/") && line.contains("shards,") {
                let driver = group.0.last().unwrap().id() as i32;
                unsafe { libc::kill(driver, libc::SIGINT) };
            }
        },
    );
    assert_eq!(out.status.code(), Some(130), "{}", text(&out.stderr));
    assert!(out.stdout.is_empty());
    assert_none_left("31");
    // The parts kept are whole, and the same command resumes from them to the single run.
    let kept = std::fs::read_dir(&resume).unwrap().count();
    assert!(kept >= 2, "the plan and at least one part");
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &command),
        |_, _, _| {},
    );
    assert!(
        text(&out.stderr).contains("already done"),
        "{}",
        text(&out.stderr)
    );
    same_as_single(&out, &command);
    drop(cluster);
    assert_none_left("31");
}

#[test]
fn a_worker_of_another_build_or_without_a_key_file_is_refused_before_work() {
    let Some(dask) = dask_bin() else { return };
    let bin_dir = bloomlab_bin().parent().unwrap().to_path_buf();
    // Worker 1 finds a bloomlab of another build first on its PATH.
    let other = tempfile::tempdir().unwrap();
    let fake = other.path().join("bloomlab");
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = --version ] && {{ echo 'bloomlab 0.0.0 (another, clean)'; exit 0; }}\nexec {} \"$@\"\n",
        bloomlab_bin().display()
    );
    std::fs::write(&fake, script).unwrap();
    std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let fake_dir = other.path().to_path_buf();
    let mut cluster = start_cluster(&dask, |w| {
        path_with(if w == 1 { &fake_dir } else { &bin_dir })
    });
    let cwd = tempfile::tempdir().unwrap();
    let resume = cwd.path().join("resume");
    let command = ["sweep-size", "--seed", "41", "--queries", "3000000", "-q"];
    let flags = ["--min-workers", "2", "--resume", resume.to_str().unwrap()];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &command),
        |_, _, _| {},
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("refused before work") && stderr.contains("another"),
        "{stderr}"
    );
    assert!(stderr.contains("127.0.0.1"), "names the worker: {stderr}");
    assert!(!resume.exists(), "nothing counted");
    drop(cluster);
    // A key file the driver sees (a path relative to its folder) that the workers do not.
    let mut cluster = start_cluster(&dask, |_| path_with(&bin_dir));
    std::fs::write(cwd.path().join("keys.txt"), "a\nb\nc\nd\n").unwrap();
    let command = [
        "sweep-size",
        "--seed",
        "42",
        "--keys",
        "file:keys.txt",
        "-q",
    ];
    let out = run_driver(
        &mut cluster.group,
        driver(&dask, &cluster.address, cwd.path(), &flags, &command),
        |_, _, _| {},
    );
    let stderr = text(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("keys.txt does not exist"), "{stderr}");
    assert!(!resume.exists(), "nothing counted");
    drop(cluster);
    assert_none_left("41");
    assert_none_left("42");
}

/// Whether process `pid` still runs (a zombie waiting for its reaper does not).
fn alive(pid: &str) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rsplit_once(") ")
            .is_some_and(|(_, rest)| !rest.starts_with('Z'))
    })
}

#[test]
fn a_task_past_the_timeout_is_killed_with_its_program_and_retried() {
    let Some(dask) = dask_bin() else { return };
    let bin_dir = bloomlab_bin().parent().unwrap().to_path_buf();
    let mut cluster = start_cluster(&dask, |_| path_with(&bin_dir));
    let cwd = tempfile::tempdir().unwrap();
    // The program hangs on its first start in a task (the driver's own runs, which size the
    // run, carry HANG_NOT), and answers from then on.
    let marker = cwd.path().join("hung");
    let program = cwd.path().join("hangs-once.sh");
    let script = format!(
        "#!/bin/sh\nif [ -z \"$HANG_NOT\" ] && mkdir '{m}' 2>/dev/null; then\n  echo $$ > '{m}/pid'\n  exec sleep 600\nfi\nexec {} \"$@\"\n",
        exec_fixture(),
        m = marker.display()
    );
    std::fs::write(&program, script).unwrap();
    std::fs::set_permissions(
        &program,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let filter = format!("exec:{}", program.display());
    let command = [
        "sweep-size",
        "--seed",
        "51",
        "--filter",
        &filter,
        "--n",
        "2000",
        "--queries",
        "1100000",
        "-q",
    ];
    let flags = [
        "--shard-seconds",
        "0.01",
        "--min-workers",
        "2",
        "--task-timeout",
        "10",
    ];
    let mut run = driver(&dask, &cluster.address, cwd.path(), &flags, &command);
    run.env("HANG_NOT", "1");
    let out = run_driver(&mut cluster.group, run, |_, _, _| {});
    let pid = std::fs::read_to_string(marker.join("pid")).expect("a task hung");
    let deadline = Instant::now() + Duration::from_secs(10);
    while alive(pid.trim()) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
    }
    let left = alive(pid.trim());
    if left {
        unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGKILL) };
    }
    assert!(!left, "the hung program was left behind");
    same_as_single(&out, &command);
    drop(cluster);
    assert_none_left("51");
}
