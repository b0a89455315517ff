//! The filters an audit runs: `--filter` alone, or the Rust crates and the ready adapters
//! (each program once per key form), and how each is built for n keys at a target rate.

use std::path::PathBuf;

use super::{AuditParams, Audited, DEFAULT_ADAPTERS, Missing, audited, find};
use crate::error::{Error, Result};
use crate::hash::HashScheme;
use crate::program::{KeyForm, Memory, ProgramOptions};
use crate::structures::{Filter, FilterKind, Spec};

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

    /// What is built for n keys at ε: the structure by its own constructor, a program with
    /// its key form.
    pub(super) fn spec(&self, n: u64, fpr: f64, hash_seed: u64) -> Spec {
        let kind = match self.key_form {
            Some(key_form) => self.kind.clone().with_program(ProgramOptions {
                key_form,
                ..self.kind.program()
            }),
            None => self.kind.clone(),
        };
        Spec::rate(kind, n, fpr).hashed(HashScheme::MultiplyShift, hash_seed)
    }

    /// An empty filter for n keys at ε, what it is (the structure's name, or the name and
    /// version the program reports), and whether the seed reaches its hashing (None: the
    /// program does not say).
    pub(super) fn build(&self, n: u64, fpr: f64, hash_seed: u64) -> Result<Built> {
        let filter = self.spec(n, fpr, hash_seed).build(n)?;
        let program = filter.program();
        Ok(Built {
            library: program.map_or_else(|| self.kind.to_string(), |p| p.name().to_string()),
            seeded: program.map_or(Some(self.kind.accepts_seed()), |p| p.seeded()),
            memory: program.map(|p| p.memory()),
            filter,
        })
    }
}

/// A filter built for an entry.
pub(super) struct Built {
    pub filter: Box<dyn Filter>,
    pub library: String,
    pub seeded: Option<bool>,
    /// A program's memory as bloomlab reads it, and the bits it addresses.
    pub memory: Option<Memory>,
}

/// The filters of `params`: the `--filter`s alone, or with `--audited` beside the crates and
/// the ready adapters of that set (programs once per key form, adapters from every
/// `--adapters` folder in order), and the adapters skipped.
pub(super) fn entries(params: &AuditParams) -> Result<(Vec<Entry>, Vec<Missing>)> {
    if let (Some(forms), Some(form)) = (&params.key_forms, params.program.key_form) {
        let forms: Vec<&str> = forms.iter().map(|f| f.name()).collect();
        return Err(Error::invalid(
            "key_form",
            form,
            format!(
                "--key-forms {} already chooses the key forms",
                forms.join(",")
            ),
            "--key-forms or --key-form, not both",
        ));
    }
    let forms = params
        .key_forms
        .clone()
        .unwrap_or_else(|| vec![params.program.key_form()]);
    let program = |kind: FilterKind, adapter: Option<String>| {
        let kind = kind.with_program(params.program.options());
        forms.iter().map(move |&form| Entry {
            kind: kind.clone(),
            key_form: Some(form),
            adapter: adapter.clone(),
        })
    };
    let crate_entry = |kind: FilterKind| Entry {
        kind,
        key_form: None,
        adapter: None,
    };
    let mut entries: Vec<Entry> = Vec::new();
    let mut skipped = Vec::new();
    let set = match (params.audited, params.filter.is_empty()) {
        (Some(set), _) => Some(set),
        (None, true) => Some(Audited::default()),
        (None, false) => None,
    };
    if let Some(set) = set {
        if set != Audited::Adapters {
            for kind in audited() {
                Spec::rate(kind.clone(), 1, 0.5).build(1)?;
                entries.push(crate_entry(kind));
            }
        }
        if set != Audited::Crates {
            for folder in adapter_folders(params)? {
                let found = find(&folder)?;
                for adapter in found.ready {
                    entries.extend(program(adapter.kind.clone(), Some(adapter.name)));
                }
                skipped.extend(found.skipped);
            }
        }
    }
    for kind in &params.filter {
        if kind.structure().for_rate.is_none() {
            return Err(Error::invalid(
                "filter",
                kind,
                "audit configures each filter by target rate and n, as its crate's README does",
                FilterKind::names_where(|s| s.for_rate.is_some()),
            ));
        }
        let added: Vec<Entry> = match kind.is_program() {
            true => program(kind.clone(), None).collect(),
            false => {
                Spec::rate(kind.clone(), 1, 0.5).build(1)?;
                vec![crate_entry(kind.clone())]
            }
        };
        for entry in added {
            if !entries.contains(&entry) {
                entries.push(entry);
            }
        }
    }
    Ok((entries, skipped))
}

/// The `--adapters` folders, each checked to be one, [`DEFAULT_ADAPTERS`] when none is given.
fn adapter_folders(params: &AuditParams) -> Result<Vec<PathBuf>> {
    if let Some(folder) = params.adapters.iter().find(|f| !f.is_dir()) {
        return Err(Error::invalid(
            "adapters",
            folder.display(),
            "is not a folder",
            "a folder of adapters with its `list` (such as the repository's adapters)",
        ));
    }
    let canonical = |f: &PathBuf| f.canonicalize().unwrap_or_else(|_| f.clone());
    for (i, folder) in params.adapters.iter().enumerate() {
        if params.adapters[..i]
            .iter()
            .any(|f| canonical(f) == canonical(folder))
        {
            return Err(Error::invalid(
                "adapters",
                folder.display(),
                "is given twice: its adapters would be audited twice",
                "each folder once",
            ));
        }
    }
    Ok(match params.adapters.is_empty() {
        true => vec![PathBuf::from(DEFAULT_ADAPTERS)],
        false => params.adapters.clone(),
    })
}

/// A file key holding one value or a list of them (`filter = "x"` or `filter = ["x", "y"]`).
pub(super) fn one_or_many<'de, D, T>(deserializer: D) -> std::result::Result<Vec<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    #[derive(serde::Deserialize)]
    #[serde(untagged)]
    enum Input<T> {
        One(T),
        Many(Vec<T>),
    }
    Ok(match serde::Deserialize::deserialize(deserializer)? {
        Input::One(value) => vec![value],
        Input::Many(values) => values,
    })
}
