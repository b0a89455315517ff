//! The shipped adapters as the audit finds them: `DIR/list --manifest` (written by
//! `adapters/install`) says which adapter is ready, and why each other one was skipped.
//!
//! An adapter's filter is `exec:DIR/COMMAND`, with COMMAND as `adapters.toml` has it and DIR as
//! the audit was given it (default `adapters`, relative to the working directory), so that the
//! `filter` column of its rows is the same on every machine.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};
use crate::experiments::Skipped;
use crate::program::{exec_timeout, kill_group, shell_word, wait_until};
use crate::structures::FilterKind;

/// An adapter that `adapters/install` checked and recorded as ready.
#[derive(Clone, Debug, PartialEq)]
pub struct Adapter {
    /// Its name in `adapters.toml`: `rbloom`.
    pub name: String,
    /// `exec:DIR/COMMAND`.
    pub kind: FilterKind,
}

/// An adapter that will not run here: its name, and the rows it would have had.
#[derive(Clone, Debug, PartialEq)]
pub struct Missing {
    pub name: String,
    pub skipped: Skipped,
}

/// The ready adapters, and the skipped ones with their reasons.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Found {
    pub ready: Vec<Adapter>,
    pub skipped: Vec<Missing>,
}

/// The adapters of `folder`, as its `list --manifest` reports them. A folder without a
/// `list` is one skipped entry covering every filter under it; a `list` that fails is the
/// same, with its message. A `list` that runs past the exec timeout ([`exec_timeout`]; it is
/// killed with its process group), or prints no adapter line, is an error naming the folder.
pub fn find(folder: &Path) -> Result<Found> {
    let shown = folder.display().to_string();
    let prefix = format!("exec:{}/", shell_word(&shown));
    let whole = |reason: String| Found {
        ready: Vec::new(),
        skipped: vec![Missing {
            name: format!("{shown}/*"),
            skipped: Skipped {
                filter: prefix.clone(),
                reason,
            },
        }],
    };
    let list = folder.join("list");
    if !list.is_file() {
        return Ok(whole(format!(
            "no {} here (run from the repository, or give --adapters DIR)",
            list.display()
        )));
    }
    let refused = |reason: String| {
        Error::invalid(
            "adapters",
            &shown,
            reason,
            "a folder whose `list --manifest` prints one line per adapter: NAME, STATUS, COMMAND and DETAIL, tab-separated",
        )
    };
    let output = match run_list(&list, exec_timeout()?).map_err(refused)? {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return Ok(whole(format!(
                "{} failed: {}",
                list.display(),
                stderr.trim()
            )));
        }
        Err(e) => return Ok(whole(format!("cannot run {}: {e}", list.display()))),
    };
    let found = manifest(&String::from_utf8_lossy(&output.stdout), &prefix);
    if found.ready.is_empty() && found.skipped.is_empty() {
        return Err(refused(format!(
            "{} --manifest printed no adapter line",
            list.display()
        )));
    }
    Ok(found)
}

/// Runs `list --manifest` in a process group of its own (killed by the signals that end
/// bloomlab), its output read as it comes; the inner error is one of starting it, the
/// outer a run past the exec timeout, after which its group is killed and reaped.
fn run_list(
    list: &Path,
    timeout: Duration,
) -> std::result::Result<std::io::Result<Output>, String> {
    use std::os::unix::process::CommandExt;
    let child = Command::new(list)
        .arg("--manifest")
        .process_group(0)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match child {
        Ok(child) => child,
        Err(e) => return Ok(Err(e)),
    };
    let pid = child.id() as i32;
    crate::signals::register(pid);
    let stdout = read_all(child.stdout.take());
    let stderr = read_all(child.stderr.take());
    let status = wait_until(&mut child, Instant::now() + timeout);
    kill_group(&child);
    crate::signals::unregister(pid);
    let Some(status) = status else {
        let _ = child.wait();
        return Err(format!(
            "{} --manifest did not finish within {} s (BLOOMLAB_EXEC_TIMEOUT): it was killed",
            list.display(),
            timeout.as_secs_f64()
        ));
    };
    let (stdout, stderr) = (
        stdout.join().unwrap_or_default(),
        stderr.join().unwrap_or_default(),
    );
    Ok(Ok(Output {
        status,
        stdout,
        stderr,
    }))
}

/// Everything `pipe` gives until it closes, read on a thread of its own.
fn read_all<R: Read + Send + 'static>(pipe: Option<R>) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        if let Some(mut pipe) = pipe {
            let _ = pipe.read_to_end(&mut bytes);
        }
        bytes
    })
}

/// The adapters of a `list --manifest` output: one line per adapter, NAME, STATUS, COMMAND
/// and DETAIL tab-separated; other lines are passed over.
fn manifest(text: &str, prefix: &str) -> Found {
    let mut found = Found::default();
    for line in text.lines() {
        let fields: Vec<&str> = line.splitn(4, '\t').collect();
        let [name, status, command, detail] = fields[..] else {
            continue;
        };
        let filter = format!("{prefix}{command}");
        let name = name.to_string();
        let reason = match (status, FilterKind::named(&filter)) {
            ("ready", Ok(kind)) => {
                found.ready.push(Adapter { name, kind });
                continue;
            }
            (_, Err(reason)) => reason,
            _ => detail.to_string(),
        };
        let skipped = Skipped { filter, reason };
        found.skipped.push(Missing { name, skipped });
    }
    found
}
