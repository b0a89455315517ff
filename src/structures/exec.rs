//! `exec:COMMAND`: any program speaking the exec protocol (`docs/PROTOCOL.md`, version 1),
//! run through `sh -c COMMAND`, as a structure like the others. bloomlab sends the header
//! (n, seed, `key_form`, and `m`, `k` by shape or `fpr` by target rate), then keys in batches
//! of at most [`EXEC_BATCH`] (integer keys as decimal text, string keys in `text` form as
//! their own bytes, [`lines`]), and reads one reply per request.
//!
//! Every failure of the program (exit, closed output, a reply of the wrong form, silence past
//! the timeout) is an [`Error::Exec`] naming the command line, the request and what came back;
//! the program is then killed. An error reply is the same error with `refused` set. The
//! structure's bits are the program's own: bloomlab cannot predict its rate from them, so
//! `fpr_from_bits` and `fpr_exact` are NaN (the bits check reads n/a), and its set bits are
//! unknown unless `stats` reports `set_bits` (the fill column is then blank, not 0).

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

pub use crate::program::lines::check_text_keys;
pub use crate::program::reply::read_reply;
pub use crate::program::timeout::{MAX_EXEC_TIMEOUT, exec_timeout};
use crate::program::lines::Lines;
use crate::program::reply::object;
use crate::program::session::Session;
use crate::program::{memory, sizing};
pub use crate::program::{
    DEFAULT_EXEC_TIMEOUT, EXEC_BATCH, EXEC_TIMEOUT_VAR, MAX_REPLY_BYTES, lock,
};

pub use crate::program::options::{KeyForm, ProgramOptions};
use super::interface::{
    Argument, Filter, FilterKind, Membership, Origin, Rate, Shape, Structure,
};
use crate::hash::AppliedHash;
use crate::error::{Error, Result};
use crate::structures::bloom::check_shape;

pub static STRUCTURE: Structure = Structure {
    name: "exec",
    help: "exec:COMMAND, any program speaking the exec protocol (docs/PROTOCOL.md), run by sh -c",
    origin: Origin::Program,
    supports_delete: false,
    is_static: false,
    accepts_seed: true,
    argument: Some(Argument {
        name: "COMMAND",
        help: "the program's command line, run through sh -c",
        optional: false,
        check: |_| Ok(()),
        fpr_exact: None,
    }),
    layout: |m, k| check_shape(m, k).map(|()| m),
    build,
    for_rate: Some(for_rate),
    design: None,
    lines_per_query: None,
    ks: &[],
    takes_math: false,
    family: super::interface::Family::Alone,
    // The program's structure is unknown to bloomlab.
    fpr_exact: |_, _, _| f64::NAN,
};

fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
    let header = sizing::shape_fields(shape);
    let key_form = shape.kind.program().key_form;
    let mut filter = ExecFilter::start(shape.kind.clone(), shape.n, shape.hash_seed, header, key_form)?;
    filter.k.get_or_insert(shape.k);
    Ok(Box::new(filter))
}

fn for_rate(kind: &FilterKind, rate: Rate, hash_seed: u64) -> Result<Box<dyn Filter>> {
    Ok(Box::new(for_rate_with(kind, rate, hash_seed, kind.program().key_form)?))
}

/// The program sized by the rate, sent keys in `key_form`.
pub fn for_rate_with(
    kind: &FilterKind,
    rate: Rate,
    hash_seed: u64,
    key_form: KeyForm,
) -> Result<ExecFilter> {
    let header = json!({"fpr": rate.fpr});
    ExecFilter::start(kind.clone(), rate.n, hash_seed, header, key_form)
}

/// A filter kept by a program behind the exec protocol.
pub struct ExecFilter {
    kind: FilterKind,
    /// The hello reply's `name`.
    name: String,
    key_form: KeyForm,
    /// The hello reply's `seeded`: whether the seed reaches the program's hashing.
    seeded: Option<bool>,
    memory_bits: Mutex<Option<u64>>,
    /// The program's memory as bloomlab reads it, and the `addressed_bits` it reports.
    memory: memory::Shared,
    /// The last `set_bits` the program reported (hello, then `stats`).
    set_bits: Mutex<Option<u64>>,
    k: Option<u32>,
    session: Mutex<Session>,
}

impl ExecFilter {
    /// Spawns `sh -c COMMAND` and exchanges the header, `fields` (the shape or the rate)
    /// added to protocol, n, seed and key form, for the hello reply.
    pub fn start(
        kind: FilterKind,
        n: u64,
        seed: u64,
        fields: Value,
        key_form: KeyForm,
    ) -> Result<Self> {
        let command = kind.arg().unwrap_or_default().to_string();
        let fail = |message: String| Error::Exec {
            command: command.to_string(),
            message,
            refused: false,
        };
        let timeout = exec_timeout()?;
        let mut session = Session::spawn(&command, timeout).map_err(fail)?;
        let mut header =
            json!({"protocol": 1, "n": n, "seed": seed, "key_form": key_form.name()});
        if let (Some(header), Some(fields)) = (header.as_object_mut(), fields.as_object()) {
            sizing::add_params(header, &kind.program().params);
            header.extend(fields.clone());
        }
        let request = header.to_string();
        let before = memory::read_quiet(session.child.id());
        session.buffer = format!("{request}\n").into_bytes();
        let hello = session.exchange().and_then(|line| object(&line));
        let hello = hello.map_err(|message| session.fail(&request, message))?;
        let name = match hello.get("name").and_then(Value::as_str) {
            Some(name) => name.to_string(),
            None => return Err(session.fail(&request, "a hello reply without `name`".into())),
        };
        Ok(ExecFilter {
            kind,
            name,
            key_form,
            seeded: hello.get("seeded").and_then(Value::as_bool),
            memory_bits: Mutex::new(allocated_bits(&hello)),
            memory: Arc::new(Mutex::new(memory::Readings {
                addressed_bits: addressed_bits(&hello),
                before,
                after: None,
            })),
            set_bits: Mutex::new(hello.get("set_bits").and_then(Value::as_u64)),
            k: hello.get("k").and_then(Value::as_u64).map(|k| k as u32),
            session: Mutex::new(session),
        })
    }

    /// The hello reply's `name`: what is measured, with its version.
    pub fn program_name(&self) -> &str {
        &self.name
    }

    /// The program's memory as bloomlab reads it, and the `addressed_bits` it reports.
    pub fn memory(&self) -> memory::Shared {
        Arc::clone(&self.memory)
    }

    /// The key form the program was sent.
    pub fn key_form(&self) -> KeyForm {
        self.key_form
    }

    /// The hello reply's `seeded`: `Some(false)` when the program says the header's seed does
    /// not reach its hashing, None when it does not say.
    pub fn seeded(&self) -> Option<bool> {
        self.seeded
    }

    /// The `stats` reply, as the program sends it.
    pub fn stats(&self) -> Result<Map<String, Value>> {
        let (stats, after) = self.with_session(|session| {
            let stats = session.stats()?;
            Ok((stats, memory::read(session.child.id())))
        })?;
        if let Some(bits) = allocated_bits(&stats) {
            *lock(&self.memory_bits) = Some(bits);
        }
        let mut readings = lock(&self.memory);
        readings.addressed_bits = addressed_bits(&stats).or(readings.addressed_bits);
        readings.after = after.or(readings.after);
        if let Some(bits) = stats.get("set_bits").and_then(Value::as_u64) {
            *lock(&self.set_bits) = Some(bits);
        }
        Ok(stats)
    }

    fn with_session<T>(
        &self,
        request: impl FnOnce(&mut Session) -> std::result::Result<T, Error>,
    ) -> Result<T> {
        request(&mut lock(&self.session))
    }
}

/// The bits the program says it allocates: `allocated_bits`, else `memory_bits` (protocol 1's
/// first name for them), else `addressed_bits`.
fn allocated_bits(reply: &Map<String, Value>) -> Option<u64> {
    let field = |name| reply.get(name).and_then(Value::as_u64);
    field("allocated_bits")
        .or(field("memory_bits"))
        .or(field("addressed_bits"))
}

/// The bits the program's probes address (the m of its predictions): `addressed_bits`, else
/// `memory_bits`.
fn addressed_bits(reply: &Map<String, Value>) -> Option<u64> {
    let field = |name| reply.get(name).and_then(Value::as_u64);
    field("addressed_bits").or(field("memory_bits"))
}

/// `word` as one word of a `sh -c` command line: as it is when it holds only letters,
/// digits and `._,:=/+-`, else single-quoted (a `'` inside written `'\''`).
pub fn shell_word(word: &str) -> String {
    let safe = |c: char| c.is_ascii_alphanumeric() || "._,:=/+-".contains(c);
    if !word.is_empty() && word.chars().all(safe) {
        word.to_string()
    } else {
        format!("'{}'", word.replace('\'', "'\\''"))
    }
}

impl Membership for ExecFilter {
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
        let session = self.session.get_mut().unwrap_or_else(|p| p.into_inner());
        keys.chunks(EXEC_BATCH)
            .try_for_each(|batch| session.insert(Lines::Ints(batch)))
    }

    /// Asks `stats` first after inserts, so that the memory reported is the filled one.
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        super::interface::check_answers(keys, answers)?;
        self.query_lines(keys.chunks(EXEC_BATCH).map(Lines::Ints), answers)
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
        self.key_form == KeyForm::Text
    }

    /// The keys as text lines, in batches of at most [`EXEC_BATCH`] (see
    /// [`Membership::hashes_bytes`] for the other forms).
    fn insert_bytes_many(&mut self, keys: &[&[u8]]) -> Result<()> {
        if self.key_form != KeyForm::Text {
            let keys: Vec<u64> = keys.iter().map(|key| crate::hash::prehash(key)).collect();
            return self.insert_many(&keys);
        }
        let session = self.session.get_mut().unwrap_or_else(|p| p.into_inner());
        keys.chunks(EXEC_BATCH)
            .try_for_each(|batch| session.insert(Lines::Text(batch)))
    }

    fn contains_bytes_many(&self, keys: &[&[u8]], answers: &mut [bool]) -> Result<()> {
        super::interface::check_answers(keys, answers)?;
        if self.key_form != KeyForm::Text {
            let keys: Vec<u64> = keys.iter().map(|key| crate::hash::prehash(key)).collect();
            return self.contains_many(&keys, answers);
        }
        self.query_lines(keys.chunks(EXEC_BATCH).map(Lines::Text), answers)
    }
}

impl ExecFilter {
    /// Queries the batches in turn, their answers in `answers`; `stats` first after inserts,
    /// so that the memory reported is the filled one.
    fn query_lines<'a>(
        &self,
        batches: impl Iterator<Item = Lines<'a>>,
        answers: &mut [bool],
    ) -> Result<()> {
        if lock(&self.session).stale_stats {
            self.stats()?;
        }
        self.with_session(|session| {
            batches
                .zip(answers.chunks_mut(EXEC_BATCH))
                .try_for_each(|(batch, answers)| session.query(batch, answers))
        })
    }
}

impl Filter for ExecFilter {
    /// Ends the program ([`Session::end`]): one that lingers past the timeout or writes after
    /// `end` has failed, and the run with it; so has one whose failure only a key-by-key call
    /// met, which could not return it.
    fn finish(&mut self) -> Result<()> {
        let command = self.kind.arg().unwrap_or_default().to_string();
        let session = self.session.get_mut().unwrap_or_else(|p| p.into_inner());
        let kept = session.failure().map(|f| format!("an earlier request failed: {f}"));
        match kept.or_else(|| session.end()) {
            Some(message) => Err(Error::Exec {
                command,
                message,
                refused: false,
            }),
            None => Ok(()),
        }
    }
    /// The program's last reported `set_bits`; 0 when it reports none ([`Filter::knows_set_bits`]).
    fn set_bits(&self) -> u64 {
        lock(&self.set_bits).unwrap_or(0)
    }
    fn knows_set_bits(&self) -> bool {
        lock(&self.set_bits).is_some()
    }
    /// NaN: bloomlab cannot read the program's bits.
    fn fpr_from_bits(&self) -> f64 {
        f64::NAN
    }
    /// A plain bit array's exact rate `E[(X/m)^k]` when the program reports the bits it
    /// addresses and its k; NaN otherwise.
    fn fpr_exact(&self, n: u64) -> f64 {
        match (lock(&self.memory).addressed_bits, self.k) {
            (Some(m), Some(k)) if m > 0 && k > 0 => crate::theory::fpr_exact(n, m, k),
            _ => f64::NAN,
        }
    }
    /// The bits the program reports its probes address, else [`Filter::memory_bits`].
    fn addressable_bits(&self) -> u64 {
        lock(&self.memory)
            .addressed_bits
            .unwrap_or_else(|| self.memory_bits())
    }
    /// The last `memory_bits` the program reported (hello, then `stats`); 0 when it does not.
    fn memory_bits(&self) -> u64 {
        lock(&self.memory_bits).unwrap_or(0)
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
        AppliedHash::Own(
            match self.key_form {
                KeyForm::Text => self.name.clone(),
                form => format!("{}, {form} keys", self.name),
            }
            .into(),
        )
    }
}
