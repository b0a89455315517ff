//! The filters an audit runs: `--filter` alone, or the Rust crates and the ready adapters
//! (each program once per key form), and how each is built for n keys at a target rate.

use std::path::PathBuf;

use super::{AuditParams, Audited, DEFAULT_ADAPTERS, Missing, audited, find};
use crate::error::{Error, Result};
use crate::structures::exec::{self, KeyForm};
use crate::structures::{Filter, FilterKind, Target};

/// One filter as the audit runs it: a structure, and for a program its key form and the
/// adapter's name.
#[derive(Clone, Debug, PartialEq)]
pub struct Entry {
    pub kind: FilterKind,
    /// The key form sent to a program behind `exec:`; None for the Rust structures.
    pub key_form: Option<KeyForm>,
    /// The adapter's name, for a shipped adapter.
    pub adapter: Option<String>,
}

impl Entry {
    /// How notes name it: the adapter or the structure, with a program's key form.
    pub fn label(&self) -> String {
        let name = self
            .adapter
            .clone()
            .unwrap_or_else(|| self.kind.to_string());
        match self.key_form {
            Some(form) => format!("{name} ({form} keys)"),
            None => name,
        }
    }

    /// An empty filter for n keys at ε, what it is (the structure's name, or the name and
    /// version the program reports), and whether the seed reaches its hashing (None: the
    /// program does not say).
    pub(super) fn build(&self, n: u64, fpr: f64, hash_seed: u64) -> Result<Built> {
        match self.key_form {
            None => Ok(Built {
                filter: self.kind.for_rate(n, fpr, hash_seed)?,
                library: self.kind.to_string(),
                seeded: Some(self.kind.accepts_seed()),
                memory: None,
            }),
            Some(form) => {
                let target = Target {
                    kind: self.kind,
                    n,
                    fpr,
                    hash_seed,
                };
                let filter = exec::for_rate_with(&target, form)?;
                Ok(Built {
                    library: filter.program_name().to_string(),
                    seeded: filter.seeded(),
                    memory: Some(filter.memory()),
                    filter: Box::new(filter),
                })
            }
        }
    }
}

/// A filter built for an entry.
pub(super) struct Built {
    pub filter: Box<dyn Filter>,
    pub library: String,
    pub seeded: Option<bool>,
    /// A program's memory as bloomlab reads it, and the bits it addresses.
    pub memory: Option<exec::memory::Shared>,
}

/// The filters of `params`: `--filter` alone, else the crates and the ready adapters of the
/// audited set (programs once per key form), and the adapters skipped.
pub(super) fn entries(params: &AuditParams) -> Result<(Vec<Entry>, Vec<Missing>)> {
    let forms = params
        .key_forms
        .clone()
        .unwrap_or_else(|| vec![exec::key_form()]);
    let program = |kind: FilterKind, adapter: Option<String>| {
        forms.iter().map(move |&form| Entry {
            kind,
            key_form: Some(form),
            adapter: adapter.clone(),
        })
    };
    let crate_entry = |kind: FilterKind| Entry {
        kind,
        key_form: None,
        adapter: None,
    };
    if let Some(kind) = params.filter {
        if params.audited.is_some() {
            return Err(Error::invalid(
                "audited",
                params.audited.unwrap_or_default(),
                "--filter audits one filter only",
                "--filter or --audited, not both",
            ));
        }
        if kind.structure().for_rate.is_none() {
            return Err(Error::invalid(
                "filter",
                kind,
                "audit configures each filter by target rate and n, as its crate's README does",
                FilterKind::names_where(|s| s.for_rate.is_some()),
            ));
        }
        return Ok(match kind.arg() {
            Some(_) => (program(kind, None).collect(), Vec::new()),
            None => {
                kind.for_rate(1, 0.5, 0)?;
                (vec![crate_entry(kind)], Vec::new())
            }
        });
    }
    let set = params.audited.unwrap_or_default();
    let mut entries: Vec<Entry> = Vec::new();
    if set != Audited::Adapters {
        for kind in audited() {
            kind.for_rate(1, 0.5, 0)?;
            entries.push(crate_entry(kind));
        }
    }
    let mut skipped = Vec::new();
    if set != Audited::Crates {
        if let Some(folder) = params.adapters.as_ref().filter(|f| !f.is_dir()) {
            return Err(crate::error::Error::invalid(
                "adapters",
                folder.display(),
                "is not a folder",
                "a folder of adapters with its `list` (such as the repository's adapters)",
            ));
        }
        let folder = params
            .adapters
            .clone()
            .unwrap_or_else(|| PathBuf::from(DEFAULT_ADAPTERS));
        let found = find(&folder);
        for adapter in found.ready {
            entries.extend(program(adapter.kind, Some(adapter.name)));
        }
        skipped = found.skipped;
    }
    Ok((entries, skipped))
}
