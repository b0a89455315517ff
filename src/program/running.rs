//! A running program behind `exec:` (`docs/PROTOCOL.md`, version 1), run through
//! `sh -c COMMAND`. bloomlab sends the header (n, seed, `key_form`, `--param` options, and
//! `m`, `k` by shape or `fpr` by target rate), then keys in batches of at most [`EXEC_BATCH`]
//! (integer keys as decimal text, string keys in `text` form as their own bytes), and reads
//! one reply per request.
//!
//! Every failure of the program (exit, closed output, a reply of the wrong form, silence past
//! the timeout) is an [`Error::Exec`] naming the command line, the request and what came back;
//! the program is then killed. An error reply is the same error with `refused` set.

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};

use super::lines::Lines;
use super::options::{KeyForm, ProgramOptions};
use super::reply::{Counts, object};
use super::session::{Session, exec_timeout};
use super::{EXEC_BATCH, lock, memory};
use crate::error::{Error, Result};

/// How the header sizes the program: by shape (`m`, `k`) or by target rate (`fpr`, with n).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Size {
    Shape { m: u64, k: u32 },
    Rate { fpr: f64 },
}

/// A program behind the exec protocol, started and answering.
pub struct Program {
    /// The command line, run through `sh -c`.
    command: String,
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

impl Program {
    /// Spawns `sh -c COMMAND` and exchanges the header (protocol, n, seed, key form, the
    /// options' `--param`s, then `size`) for the hello reply.
    pub fn start(
        command: &str,
        options: &ProgramOptions,
        n: u64,
        seed: u64,
        size: Size,
    ) -> Result<Self> {
        let key_form = options.key_form;
        let fields = match size {
            Size::Shape { m, k } => json!({"m": m, "k": k}),
            Size::Rate { fpr } => json!({"fpr": fpr}),
        };
        let fail = |message: String| Error::Exec {
            command: command.to_string(),
            message,
            refused: false,
        };
        let timeout = exec_timeout()?;
        let mut session = Session::spawn(command, timeout).map_err(fail)?;
        let mut header = json!({"protocol": 1, "n": n, "seed": seed, "key_form": key_form.name()});
        if let (Some(header), Some(fields)) = (header.as_object_mut(), fields.as_object()) {
            header.extend(options.params.iter().cloned());
            header.extend(fields.clone());
        }
        let request = header.to_string();
        let before = memory::read_quiet(session.child.id());
        session.buffer = format!("{request}\n").into_bytes();
        let hello = session.exchange().and_then(|line| object(&line));
        let hello = hello.map_err(|message| session.fail(&request, message))?;
        let name = match hello.get("name").and_then(Value::as_str) {
            Some(name) => printable(name),
            None => return Err(session.fail(&request, "a hello reply without `name`".into())),
        };
        let counts = Counts::of(&hello, None).map_err(|message| session.fail(&request, message))?;
        Ok(Program {
            command: command.to_string(),
            name,
            key_form,
            seeded: hello.get("seeded").and_then(Value::as_bool),
            memory_bits: Mutex::new(counts.allocated()),
            memory: Arc::new(Mutex::new(memory::Readings {
                addressed_bits: counts.addressed(),
                before,
                after: None,
            })),
            set_bits: Mutex::new(counts.set_bits),
            k: counts.k,
            session: Mutex::new(session),
        })
    }

    /// The hello reply's `name`: what is measured, with its version.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The program's memory as bloomlab reads it, and the `addressed_bits` it reports.
    pub fn memory(&self) -> Memory {
        Memory(Arc::clone(&self.memory))
    }

    pub fn key_form(&self) -> KeyForm {
        self.key_form
    }

    /// The hello reply's `seeded`: `Some(false)` when the program says the header's seed does
    /// not reach its hashing, None when it does not say.
    pub fn seeded(&self) -> Option<bool> {
        self.seeded
    }

    /// The `stats` reply, as the program sends it.
    fn stats(&self) -> Result<Map<String, Value>> {
        let addressed_before = lock(&self.memory).addressed_bits;
        let (stats, counts, after) = {
            let session = &mut *lock(&self.session);
            let stats = session.stats()?;
            let counts = Counts::of(&stats, addressed_before)
                .map_err(|message| session.fail("stats", message))?;
            (stats, counts, memory::read(session.child.id()))
        };
        if let Some(bits) = counts.allocated() {
            *lock(&self.memory_bits) = Some(bits);
        }
        let mut readings = lock(&self.memory);
        readings.addressed_bits = counts.addressed().or(readings.addressed_bits);
        readings.after = after.or(readings.after);
        if let Some(bits) = counts.set_bits {
            *lock(&self.set_bits) = Some(bits);
        }
        Ok(stats)
    }

    /// Inserts integer keys, in batches of at most [`EXEC_BATCH`].
    pub fn insert_ints(&mut self, keys: &[u64]) -> Result<()> {
        let session = self.session.get_mut().unwrap_or_else(|p| p.into_inner());
        keys.chunks(EXEC_BATCH)
            .try_for_each(|batch| session.insert(Lines::Ints(batch)))
    }

    /// Inserts string keys as text lines, in batches of at most [`EXEC_BATCH`].
    pub fn insert_text(&mut self, keys: &[&[u8]]) -> Result<()> {
        let session = self.session.get_mut().unwrap_or_else(|p| p.into_inner());
        keys.chunks(EXEC_BATCH)
            .try_for_each(|batch| session.insert(Lines::Text(batch)))
    }

    /// Queries integer keys, their answers in `answers` (as long as `keys`).
    pub fn query_ints(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        self.query_lines(keys.chunks(EXEC_BATCH).map(Lines::Ints), answers)
    }

    /// Queries string keys as text lines, their answers in `answers` (as long as `keys`).
    pub fn query_text(&self, keys: &[&[u8]], answers: &mut [bool]) -> Result<()> {
        self.query_lines(keys.chunks(EXEC_BATCH).map(Lines::Text), answers)
    }

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
        let session = &mut *lock(&self.session);
        batches
            .zip(answers.chunks_mut(EXEC_BATCH))
            .try_for_each(|(batch, answers)| session.query(batch, answers))
    }

    /// Ends the program ([`Session::end`]): one that lingers past the timeout or writes after
    /// `end` has failed; so has one whose failure only a key-by-key call met, which could
    /// not return it.
    pub fn finish(&mut self) -> Result<()> {
        let session = self.session.get_mut().unwrap_or_else(|p| p.into_inner());
        let kept = session
            .failure()
            .map(|f| format!("an earlier request failed: {f}"));
        match kept.or_else(|| session.end()) {
            Some(message) => Err(Error::Exec {
                command: self.command.clone(),
                message,
                refused: false,
            }),
            None => Ok(()),
        }
    }

    /// The last `set_bits` the program reported (hello, then `stats`).
    pub fn set_bits(&self) -> Option<u64> {
        *lock(&self.set_bits)
    }

    /// The bits the program says its probes address (the m of its predictions).
    pub fn addressed_bits(&self) -> Option<u64> {
        lock(&self.memory).addressed_bits
    }

    /// The last bits the program said it allocates (hello, then `stats`).
    pub fn memory_bits(&self) -> Option<u64> {
        *lock(&self.memory_bits)
    }

    /// The hello reply's `k`.
    pub fn k(&self) -> Option<u32> {
        self.k
    }
}

/// A program's `name` as every output shows it: control characters (a newline that would
/// break a Markdown row, an escape code that would reach the terminal) written as escapes.
fn printable(name: &str) -> String {
    name.chars()
        .map(|c| match c.is_control() {
            true => c.escape_default().to_string(),
            false => c.to_string(),
        })
        .collect()
}

/// A program's memory as bloomlab reads it (its process group's resident set before the
/// header and after the inserts) and the `addressed_bits` it reports; shared with the
/// running program, which updates it.
#[derive(Clone, Debug, Default)]
pub struct Memory(memory::Shared);

impl Memory {
    /// The last `addressed_bits` reported.
    pub fn addressed_bits(&self) -> Option<u64> {
        lock(&self.0).addressed_bits
    }

    /// Bytes the program's group grew by between the header and the end of the inserts:
    /// (RSS, PSS), each at least 0; None when either was not read.
    pub fn grown(&self) -> Option<(u64, u64)> {
        lock(&self.0).grown()
    }
}
