//! `exec:COMMAND`: any program speaking the exec protocol ([`crate::program`]) as a
//! structure like the others. The structure's bits are the program's own: bloomlab cannot
//! predict its rate from them, so `fpr_from_bits` and `fpr_exact` are NaN (the bits check
//! reads n/a) unless the program reports the bits it addresses and its k, and its set bits
//! are unknown unless `stats` reports `set_bits` (the fill column is then blank, not 0).

use super::interface::{Argument, Filter, FilterKind, Membership, Origin, Rate, Shape, Structure};
use crate::error::Result;
use crate::hash::AppliedHash;
use crate::program::{KeyForm, Program, Size};
use crate::structures::bloom::check_shape;

pub static STRUCTURE: Structure = Structure {
    origin: Origin::Program,
    argument: Some(Argument {
        name: "COMMAND",
        help: "the program's command line, run through sh -c",
        optional: false,
        check: |command| match command.trim().is_empty() {
            true => Err("exec: needs a command line, and this one is blank".into()),
            false => Ok(()),
        },
        fpr_exact: None,
    }),
    layout: |m, k| check_shape(m, k).map(|()| m),
    for_rate: Some(for_rate),
    lines_per_query: None,
    // The program's structure is unknown to bloomlab.
    fpr_exact: |_, _, _| f64::NAN,
    ..Structure::new(
        "exec",
        "exec:COMMAND, any program speaking the exec protocol (docs/PROTOCOL.md), run by sh -c",
        build,
    )
};

fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
    let size = Size::Shape {
        m: shape.m,
        k: shape.k,
    };
    let mut filter = ProgramFilter::start(&shape.kind, shape.n, shape.hash_seed, size)?;
    filter.k.get_or_insert(shape.k);
    Ok(Box::new(filter))
}

fn for_rate(kind: &FilterKind, rate: Rate, hash_seed: u64) -> Result<Box<dyn Filter>> {
    let size = Size::Rate { fpr: rate.fpr };
    Ok(Box::new(ProgramFilter::start(kind, rate.n, hash_seed, size)?))
}

/// A filter kept by a program behind the exec protocol.
struct ProgramFilter {
    kind: FilterKind,
    program: Program,
    /// The program's k, else the shape's.
    k: Option<u32>,
}

impl ProgramFilter {
    /// The program `kind` names, started with its options for n keys.
    fn start(kind: &FilterKind, n: u64, seed: u64, size: Size) -> Result<Self> {
        let command = kind.arg().unwrap_or_default();
        let program = Program::start(command, &kind.program(), n, seed, size)?;
        Ok(ProgramFilter {
            kind: kind.clone(),
            k: program.k(),
            program,
        })
    }

    /// String keys as the program reads them: none in `text` form (they go as text lines),
    /// else their xxh3 pre-hash.
    fn prehashed(&self, keys: &[&[u8]]) -> Option<Vec<u64>> {
        (self.program.key_form() != KeyForm::Text)
            .then(|| keys.iter().map(|key| crate::hash::prehash(key)).collect())
    }
}

impl Membership for ProgramFilter {
    /// One key as a batch of one; a failure is kept and returned by the next batched call.
    fn insert(&mut self, key: u64) {
        let _ = self.insert_many(&[key]);
    }

    /// One key as a batch of one; false on a failure, which the next batched call returns.
    fn contains(&self, key: u64) -> bool {
        let mut answer = [false];
        self.contains_many(&[key], &mut answer).is_ok() && answer[0]
    }

    fn insert_many(&mut self, keys: &[u64]) -> Result<()> {
        self.program.insert_ints(keys)
    }

    /// Asks `stats` first after inserts, so that the memory reported is the filled one.
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        super::interface::check_answers(keys, answers)?;
        self.program.query_ints(keys, answers)
    }

    /// One key as a batch of one, as [`Membership::insert`].
    fn insert_bytes(&mut self, key: &[u8]) {
        let _ = self.insert_bytes_many(&[key]);
    }

    /// One key as a batch of one, as [`Membership::contains`].
    fn contains_bytes(&self, key: &[u8]) -> bool {
        let mut answer = [false];
        self.contains_bytes_many(&[key], &mut answer).is_ok() && answer[0]
    }

    /// String keys reach the program as text lines in `text` form; in `int` and `bytes`
    /// form, whose lines are integers, as their xxh3 pre-hash (which the row's hash names).
    fn hashes_bytes(&self) -> bool {
        self.program.key_form() == KeyForm::Text
    }

    fn insert_bytes_many(&mut self, keys: &[&[u8]]) -> Result<()> {
        match self.prehashed(keys) {
            Some(keys) => self.program.insert_ints(&keys),
            None => self.program.insert_text(keys),
        }
    }

    fn contains_bytes_many(&self, keys: &[&[u8]], answers: &mut [bool]) -> Result<()> {
        super::interface::check_answers(keys, answers)?;
        match self.prehashed(keys) {
            Some(keys) => self.program.query_ints(&keys, answers),
            None => self.program.query_text(keys, answers),
        }
    }
}

impl Filter for ProgramFilter {
    /// Ends the program ([`Program::finish`]).
    fn finish(&mut self) -> Result<()> {
        self.program.finish()
    }
    /// The program's last reported `set_bits`; 0 when it reports none ([`Filter::knows_set_bits`]).
    fn set_bits(&self) -> u64 {
        self.program.set_bits().unwrap_or(0)
    }
    fn knows_set_bits(&self) -> bool {
        self.program.set_bits().is_some()
    }
    /// NaN: bloomlab cannot read the program's bits.
    fn fpr_from_bits(&self) -> f64 {
        f64::NAN
    }
    /// A plain bit array's exact rate `E[(X/m)^k]` when the program reports the bits it
    /// addresses and its k; NaN otherwise.
    fn fpr_exact(&self, n: u64) -> f64 {
        match (self.program.addressed_bits(), self.k) {
            (Some(m), Some(k)) if m > 0 && k > 0 => crate::theory::fpr_exact(n, m, k),
            _ => f64::NAN,
        }
    }
    /// The bits the program reports its probes address, else [`Filter::memory_bits`].
    fn addressable_bits(&self) -> u64 {
        self.program
            .addressed_bits()
            .unwrap_or_else(|| self.memory_bits())
    }
    /// The last `memory_bits` the program reported (hello, then `stats`); 0 when it does not.
    fn memory_bits(&self) -> u64 {
        self.program.memory_bits().unwrap_or(0)
    }
    /// The program's k, else the shape's; 0 when neither is known.
    fn hashes(&self) -> u32 {
        self.k.unwrap_or(0)
    }
    fn kind(&self) -> FilterKind {
        self.kind.clone()
    }
    /// The program's own name from its hello reply, with the key form when it is not text.
    fn hash_name(&self) -> AppliedHash {
        let name = self.program.name();
        AppliedHash::Own(
            match self.program.key_form() {
                KeyForm::Text => name.to_string(),
                form => format!("{name}, {form} keys"),
            }
            .into(),
        )
    }
    fn program(&self) -> Option<&Program> {
        Some(&self.program)
    }
}
