//! The shipped adapters as the audit finds them: `DIR/list --manifest` (written by
//! `adapters/install`) says which adapter is ready, and why each other one was skipped.
//!
//! An adapter's filter is `exec:DIR/COMMAND`, with COMMAND as `adapters.toml` has it and DIR as
//! the audit was given it (default `adapters`, relative to the working directory), so that the
//! `filter` column of its rows is the same on every machine.

use std::path::Path;
use std::process::Command;

use crate::error::{Error, Result};
use crate::experiments::Skipped;
use crate::program::{exec_timeout, run_within, shell_word};
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
/// killed with its process group: [`run_within`]), or prints no adapter line, is an error
/// naming the folder.
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
    let run = run_within(Command::new(&list).arg("--manifest"), exec_timeout()?);
    let output = match run.map_err(refused)? {
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
