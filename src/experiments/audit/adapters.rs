//! The shipped adapters as the audit finds them: `DIR/list --manifest` (written by
//! `adapters/install`) says which adapter is ready, and why each other one was skipped.
//!
//! An adapter's filter is `exec:DIR/COMMAND`, with COMMAND as `adapters.toml` has it and DIR as
//! the audit was given it (default `adapters`, relative to the working directory), so that the
//! `filter` column of its rows is the same on every machine.

use std::path::Path;
use std::process::Command;

use crate::experiments::Skipped;
use crate::program::shell_word;
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
/// working `list` is one skipped entry covering every filter under it.
pub fn find(folder: &Path) -> Found {
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
        return whole(format!(
            "no {} here (run from the repository, or give --adapters DIR)",
            list.display()
        ));
    }
    let output = match Command::new(&list).arg("--manifest").output() {
        Ok(output) if output.status.success() => output,
        Ok(output) => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            return whole(format!("{} failed: {}", list.display(), stderr.trim()));
        }
        Err(e) => return whole(format!("cannot run {}: {e}", list.display())),
    };
    let mut found = Found::default();
    for line in String::from_utf8_lossy(&output.stdout).lines() {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_folder_is_one_skip_covering_all_of_it() {
        let found = find(Path::new("/no/such/folder"));
        assert!(found.ready.is_empty());
        let skipped = &found.skipped[0].skipped;
        assert!(skipped.covers("exec:/no/such/folder/python/run rbloom"));
        assert!(!skipped.covers("exec:/elsewhere/run"));
        assert!(skipped.reason.contains("--adapters"), "{}", skipped.reason);
    }
}
