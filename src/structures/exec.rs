//! `exec:COMMAND`: any program speaking the exec protocol (`docs/PROTOCOL.md`, version 1),
//! run through `sh -c COMMAND`, as a structure like the others. bloomlab sends the header
//! (n, seed, `key_form`, and `m`, `k` by shape or `fpr` by target rate), then integer keys as
//! decimal text in batches of at most [`EXEC_BATCH`], and reads one reply per request.
//!
//! Every failure of the program (exit, closed output, a reply of the wrong form, silence past
//! the timeout) is an [`Error::Exec`] naming the command line, the request and what came back;
//! the program is then killed. An error reply is the same error with `refused` set. The
//! structure's bits are the program's own: bloomlab cannot predict its rate from them, so
//! `fpr_from_bits` and `fpr_exact` are NaN (the bits check reads n/a), and its set bits are
//! unknown unless `stats` reports `set_bits` (the fill column is then blank, not 0).

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

pub mod memory;
pub mod sizing;

use super::interface::{
    Argument, Filter, FilterKind, Membership, Origin, Shape, Structure, Target,
};
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

/// Most keys in one `insert` or `query` request (the protocol's bound).
pub const EXEC_BATCH: usize = 65_536;
/// Seconds bloomlab waits for a reply, unless `BLOOMLAB_EXEC_TIMEOUT` says otherwise.
pub const DEFAULT_EXEC_TIMEOUT: f64 = 60.0;
/// The environment variable holding the timeout in seconds.
pub const EXEC_TIMEOUT_VAR: &str = "BLOOMLAB_EXEC_TIMEOUT";
/// Longest reply line bloomlab reads: a query reply has at most [`EXEC_BATCH`] characters, a
/// JSON reply (hello, stats, error) at most this; a longer line is a failure, not memory.
pub const MAX_REPLY_BYTES: usize = 1 << 20;
/// Lines of the program's standard error kept for failure messages.
const STDERR_TAIL: usize = 5;

/// How the program hands a key line to its library (the header's `key_form`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KeyForm {
    /// The line as the language's string.
    #[default]
    Text,
    /// The line parsed to the language's native integer.
    Int,
    /// The parsed integer as 8 little-endian bytes.
    Bytes,
}

impl KeyForm {
    pub const ALL: [KeyForm; 3] = [KeyForm::Text, KeyForm::Int, KeyForm::Bytes];

    pub fn name(self) -> &'static str {
        match self {
            KeyForm::Text => "text",
            KeyForm::Int => "int",
            KeyForm::Bytes => "bytes",
        }
    }
}

named_enum!(KeyForm, "key form");

/// The key form of exec filters built through the registry (`--key-form`), as its index in
/// [`KeyForm::ALL`].
static KEY_FORM: AtomicU8 = AtomicU8::new(0);

/// Sets the key form every exec filter built afterwards through the registry sends
/// (`--key-form`); the audit chooses its own per row ([`for_rate_with`]).
pub fn set_key_form(form: KeyForm) {
    let index = KeyForm::ALL.iter().position(|&f| f == form).unwrap_or(0);
    KEY_FORM.store(index as u8, Ordering::Relaxed);
}

/// The key form of [`set_key_form`], `text` unless set.
pub fn key_form() -> KeyForm {
    KeyForm::ALL[usize::from(KEY_FORM.load(Ordering::Relaxed)) % KeyForm::ALL.len()]
}

fn build(shape: &Shape) -> Result<Box<dyn Filter>> {
    let header = sizing::shape_fields(shape);
    let mut filter = ExecFilter::start(shape.kind, shape.n, shape.hash_seed, header, key_form())?;
    filter.k.get_or_insert(shape.k);
    Ok(Box::new(filter))
}

fn for_rate(target: &Target) -> Result<Box<dyn Filter>> {
    Ok(Box::new(for_rate_with(target, key_form())?))
}

/// The program sized by `fpr`, sent keys in `key_form`.
pub fn for_rate_with(target: &Target, key_form: KeyForm) -> Result<ExecFilter> {
    let header = json!({"fpr": target.fpr});
    ExecFilter::start(target.kind, target.n, target.hash_seed, header, key_form)
}

/// The longest timeout [`EXEC_TIMEOUT_VAR`] may ask for: a day.
pub const MAX_EXEC_TIMEOUT: f64 = 86_400.0;

/// The timeout from [`EXEC_TIMEOUT_VAR`], [`DEFAULT_EXEC_TIMEOUT`] when unset; refused like a
/// flag (exit 2, with its range) outside (0, [`MAX_EXEC_TIMEOUT`]] seconds.
pub fn exec_timeout() -> Result<Duration> {
    let Ok(text) = std::env::var(EXEC_TIMEOUT_VAR) else {
        return Ok(Duration::from_secs_f64(DEFAULT_EXEC_TIMEOUT));
    };
    let refuse = |reason: &str| Error::InvalidEnv {
        name: EXEC_TIMEOUT_VAR,
        value: text.clone(),
        reason: reason.into(),
        allowed: format!("seconds in (0, {MAX_EXEC_TIMEOUT}], such as 0.5"),
    };
    match text.trim().parse::<f64>() {
        Ok(seconds) if seconds > 0.0 && seconds <= MAX_EXEC_TIMEOUT => {
            Ok(Duration::from_secs_f64(seconds))
        }
        Ok(_) => Err(refuse("out of range")),
        Err(_) => Err(refuse("not a number of seconds")),
    }
}

/// Failures found when a session ended (output after `end`, no exit after it), which no
/// request could return: the run takes them with [`take_late_failure`].
/// Each is the command line and what went wrong.
static LATE_FAILURES: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

/// The failures of sessions that have ended since the last call, as one error naming the
/// first program.
pub fn take_late_failure() -> Option<Error> {
    let failures = std::mem::take(&mut *lock(&LATE_FAILURES));
    let command = failures.first()?.0.clone();
    let messages: Vec<String> = failures.into_iter().map(|(_, message)| message).collect();
    Some(Error::Exec {
        command,
        message: messages.join("; "),
        refused: false,
    })
}

/// Kills the program's process group (the program, its shell and anything they started).
fn kill_group(child: &Child) {
    if let Ok(pid) = i32::try_from(child.id()) {
        // SAFETY: kill(2) takes no pointers; a group already gone is ESRCH, ignored.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

/// A running program: its input, its output lines (read by a thread, so that silence can
/// time out), the tail of its standard error, and the first failure, after which every
/// request is refused with it.
struct Session {
    command: &'static str,
    child: Child,
    input: Option<ChildStdin>,
    lines: Receiver<std::io::Result<Vec<u8>>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    timeout: Duration,
    failure: Option<String>,
    /// Inserts since the last `stats`, which the next query batch asks for first.
    stale_stats: bool,
    buffer: Vec<u8>,
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
        let command = kind.arg().unwrap_or_default();
        let fail = |message: String| Error::Exec {
            command: command.to_string(),
            message,
            refused: false,
        };
        let timeout = exec_timeout()?;
        let mut session = Session::spawn(command, timeout).map_err(fail)?;
        let mut header =
            json!({"protocol": 1, "n": n, "seed": seed, "key_form": key_form.name()});
        if let (Some(header), Some(fields)) = (header.as_object_mut(), fields.as_object()) {
            sizing::add_params(header);
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

/// The lock, also after a panic elsewhere (the session records its own failures).
fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A JSON object line, or the error reply's reason.
fn object(line: &[u8]) -> std::result::Result<Map<String, Value>, String> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(map)) => match map.get("error") {
            Some(reason) => Err(refusal(reason)),
            None => Ok(map),
        },
        _ => Err(format!("got {}, not a JSON object", shown(line))),
    }
}

/// How a failure message of an error reply begins.
const REFUSED: &str = "refused: ";

fn refusal(reason: &Value) -> String {
    let reason = reason.as_str().map_or_else(|| reason.to_string(), str::to_string);
    format!("{REFUSED}{reason}")
}

/// A reply as a failure message shows it: quoted, at most 80 characters.
fn shown(line: &[u8]) -> String {
    let text = String::from_utf8_lossy(line);
    let short: String = text.chars().take(80).collect();
    let ellipsis = if short.len() < text.len() { "…" } else { "" };
    format!("{short:?}{ellipsis}")
}

/// Appends `key` in decimal and an LF.
fn push_key(buffer: &mut Vec<u8>, mut key: u64) {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    loop {
        start -= 1;
        digits[start] = b'0' + (key % 10) as u8;
        key /= 10;
        if key == 0 {
            break;
        }
    }
    buffer.extend_from_slice(&digits[start..]);
    buffer.push(b'\n');
}

impl Session {
    fn spawn(command: &'static str, timeout: Duration) -> std::result::Result<Self, String> {
        use std::os::unix::process::CommandExt;
        let mut child = Command::new("sh")
            .args(["-c", command])
            .process_group(0)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot start sh -c: {e}"))?;
        crate::structures::child_groups::register(child.id() as i32);
        let (output, errors) = match (child.stdout.take(), child.stderr.take()) {
            (Some(output), Some(errors)) => (output, errors),
            _ => return Err("no pipes to the program".into()),
        };
        let (send, lines) = channel();
        thread::spawn(move || {
            let mut output = BufReader::with_capacity(1 << 16, output);
            loop {
                let line = read_reply(&mut output, MAX_REPLY_BYTES);
                let last = !matches!(line, Ok(Some(_)));
                if let Some(line) = line.transpose()
                    && send.send(line).is_err()
                {
                    break;
                }
                if last {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(VecDeque::new()));
        let tail = Arc::clone(&stderr);
        thread::spawn(move || keep_tail(errors, &tail));
        Ok(Session {
            command,
            input: child.stdin.take(),
            child,
            lines,
            stderr,
            timeout,
            failure: None,
            stale_stats: false,
            buffer: Vec::new(),
        })
    }

    /// Writes `buffer` (a request and its keys) and reads the one reply line.
    fn exchange(&mut self) -> std::result::Result<Vec<u8>, String> {
        if let Some(failure) = &self.failure {
            return Err(format!("an earlier request failed: {failure}"));
        }
        match self.lines.try_recv() {
            Ok(Ok(line)) => {
                return Err(format!(
                    "wrote {}, a line no request asked for",
                    shown(&line)
                ));
            }
            Ok(Err(e)) => return Err(format!("its output could not be read: {e}")),
            Err(_) => {}
        }
        let input = self.input.as_mut().ok_or("its input is closed")?;
        if let Err(e) = input.write_all(&self.buffer).and_then(|()| input.flush()) {
            return Err(format!(
                "closed its input while bloomlab wrote the request ({e}){}",
                self.ended()
            ));
        }
        match self.lines.recv_timeout(self.timeout) {
            Ok(Ok(line)) => Ok(line),
            Ok(Err(e)) => Err(format!("its output could not be read: {e}")),
            Err(RecvTimeoutError::Timeout) => Err(format!(
                "no reply within {} s (BLOOMLAB_EXEC_TIMEOUT){}",
                self.timeout.as_secs_f64(),
                self.stderr_lines()
            )),
            Err(RecvTimeoutError::Disconnected) => {
                Err(format!("closed its output before replying{}", self.ended()))
            }
        }
    }

    /// Records the failure of `request`, kills the program, and returns the error: a refusal
    /// when the program answered the error reply.
    fn fail(&mut self, request: &str, message: String) -> Error {
        let refused = message.starts_with(REFUSED);
        let message = format!("after `{request}`: {message}");
        kill_group(&self.child);
        let _ = self.child.wait();
        crate::structures::child_groups::unregister(self.child.id() as i32);
        self.input = None;
        self.failure = Some(message.clone());
        Error::Exec {
            command: self.command.to_string(),
            message,
            refused,
        }
    }

    /// A request of `keys`, its reply checked by `check`.
    fn batch(
        &mut self,
        verb: &str,
        keys: &[u64],
        check: impl FnOnce(&[u8]) -> std::result::Result<(), String>,
    ) -> Result<()> {
        let request = format!("{verb} {}", keys.len());
        self.buffer.clear();
        self.buffer.extend_from_slice(request.as_bytes());
        self.buffer.push(b'\n');
        for &key in keys {
            push_key(&mut self.buffer, key);
        }
        let reply = self.exchange();
        reply
            .and_then(|line| match line.first() {
                Some(b'{') => Err(object(&line).err().unwrap_or_else(|| {
                    format!("got {}, a JSON object in place of the reply", shown(&line))
                })),
                _ => check(&line),
            })
            .map_err(|message| self.fail(&request, message))
    }

    fn insert(&mut self, keys: &[u64]) -> Result<()> {
        self.stale_stats = true;
        self.batch("insert", keys, |line| match line {
            b"ok" => Ok(()),
            _ => Err(format!("got {}, not `ok`", shown(line))),
        })
    }

    fn query(&mut self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        self.batch("query", keys, |line| {
            if line.len() != keys.len() {
                return Err(format!(
                    "got {} characters for {} keys: {}",
                    line.len(),
                    keys.len(),
                    shown(line)
                ));
            }
            for (answer, &c) in answers.iter_mut().zip(line) {
                *answer = match c {
                    b'1' => true,
                    b'0' => false,
                    _ => return Err(format!("got {}, not only 0 and 1", shown(line))),
                };
            }
            Ok(())
        })
    }

    fn stats(&mut self) -> Result<Map<String, Value>> {
        self.buffer = b"stats\n".to_vec();
        let reply = self.exchange().and_then(|line| object(&line));
        self.stale_stats = false;
        reply.map_err(|message| self.fail("stats", message))
    }

    /// How the program ended, when it has: its status and the tail of its standard error.
    fn ended(&mut self) -> String {
        let status = self.wait_for_exit(Duration::from_millis(500));
        let status = status.map_or_else(String::new, |s| format!("; it exited with {s}"));
        format!("{status}{}", self.stderr_lines())
    }

    fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        let start = Instant::now();
        loop {
            match self.child.try_wait() {
                Ok(Some(status)) => return Some(status),
                Ok(None) if start.elapsed() < limit => thread::sleep(Duration::from_millis(5)),
                _ => return None,
            }
        }
    }

    fn stderr_lines(&self) -> String {
        let tail = lock(&self.stderr);
        match tail.is_empty() {
            true => String::new(),
            false => format!("; its standard error ends: {}", Vec::from(tail.clone()).join(" | ")),
        }
    }
}

/// Reads one reply line without its `\n`, at most `limit` bytes: `None` at the end of the
/// output, an error for a longer line (what is left of it is never read).
pub fn read_reply(
    output: &mut impl BufRead,
    limit: usize,
) -> std::io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    output
        .by_ref()
        .take(limit as u64 + 1)
        .read_until(b'\n', &mut line)?;
    if line.is_empty() {
        return Ok(None);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    } else if line.len() > limit {
        return Err(std::io::Error::other(format!(
            "a reply line longer than {limit} bytes, more than any request allows"
        )));
    }
    Ok(Some(line))
}

/// Keeps the last [`STDERR_TAIL`] lines of the program's standard error.
fn keep_tail(errors: impl Read, tail: &Mutex<VecDeque<String>>) {
    for line in BufReader::new(errors).lines() {
        let Ok(line) = line else { break };
        let mut tail = lock(tail);
        if tail.len() == STDERR_TAIL {
            tail.pop_front();
        }
        tail.push_back(line);
    }
}

impl Drop for Session {
    /// Sends `end`, closes the input and waits for the exit, then kills the program's process
    /// group (whatever it left running). A program still running after the timeout, or one
    /// that wrote anything after its last reply, is a late failure ([`take_late_failure`]).
    fn drop(&mut self) {
        let Some(mut input) = self.input.take() else {
            kill_group(&self.child);
            crate::structures::child_groups::unregister(self.child.id() as i32);
            return;
        };
        let _ = input.write_all(b"end\n").and_then(|()| input.flush());
        drop(input);
        let exited = self.wait_for_exit(self.timeout).is_some();
        kill_group(&self.child);
        let _ = self.child.wait();
        crate::structures::child_groups::unregister(self.child.id() as i32);
        let late = if !exited {
            Some(format!(
                "still running {} s after `end` (BLOOMLAB_EXEC_TIMEOUT)",
                self.timeout.as_secs_f64()
            ))
        } else {
            match self.lines.recv_timeout(Duration::from_secs(1)) {
                Ok(Ok(line)) => Some(format!("wrote {} after `end`", shown(&line))),
                Ok(Err(e)) => Some(format!("its output after `end`: {e}")),
                Err(_) => None,
            }
        };
        if let Some(late) = late {
            lock(&LATE_FAILURES).push((self.command.to_string(), late));
        }
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
            .try_for_each(|batch| session.insert(batch))
    }

    /// Asks `stats` first after inserts, so that the memory reported is the filled one.
    fn contains_many(&self, keys: &[u64], answers: &mut [bool]) -> Result<()> {
        super::interface::check_answers(keys, answers)?;
        if lock(&self.session).stale_stats {
            self.stats()?;
        }
        self.with_session(|session| {
            keys.chunks(EXEC_BATCH)
                .zip(answers.chunks_mut(EXEC_BATCH))
                .try_for_each(|(batch, answers)| session.query(batch, answers))
        })
    }
}

impl Filter for ExecFilter {
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
        self.kind
    }
    /// The program's own name from its hello reply, with the key form when it is not text.
    fn hash_name(&self) -> String {
        match self.key_form {
            KeyForm::Text => self.name.clone(),
            form => format!("{}, {form} keys", self.name),
        }
    }
}
