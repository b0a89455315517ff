//! One running program: spawned in its own process group, written a request and read its one
//! reply (silence times out), killed on a failure, and sent `end` when it is finished
//! ([`Session::end`]) or dropped.

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, ErrorKind, Read, Write};
use std::os::fd::AsRawFd;
use std::process::{Child, ChildStdin, Command, ExitStatus, Output, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::{Map, Value};

use super::lines::{Lines, shown_key};
use super::reply::{REFUSED, object, read_reply, shown};
use super::{MAX_REPLY_BYTES, lock};
use crate::error::{Error, Result};

/// Seconds bloomlab waits for a reply, unless [`EXEC_TIMEOUT_VAR`] says otherwise.
const DEFAULT_EXEC_TIMEOUT: f64 = 60.0;
/// The environment variable holding the timeout in seconds.
const EXEC_TIMEOUT_VAR: &str = "BLOOMLAB_EXEC_TIMEOUT";
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

/// Lines of the program's standard error kept for failure messages.
const STDERR_TAIL: usize = 5;

/// Starts `command` in a process group of its own, which the signals that end bloomlab kill
/// ([`crate::signals`]), its output piped.
fn spawn_group(command: &mut Command, stdin: Stdio) -> std::io::Result<Child> {
    use std::os::unix::process::CommandExt;
    let child = (command.process_group(0).stdin(stdin))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()?;
    crate::signals::register(child.id() as i32);
    Ok(child)
}

/// Runs `command` to its end (its input closed) in a process group of its own
/// ([`spawn_group`]), its output read as it comes; the inner error is one of starting it,
/// the outer a run past `timeout`, after which its group is killed and reaped.
pub fn run_within(
    command: &mut Command,
    timeout: Duration,
) -> std::result::Result<std::io::Result<Output>, String> {
    let mut child = match spawn_group(command, Stdio::null()) {
        Ok(child) => child,
        Err(e) => return Ok(Err(e)),
    };
    let read_all = |pipe: Option<Box<dyn Read + Send>>| {
        thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.map(|mut pipe| pipe.read_to_end(&mut bytes));
            bytes
        })
    };
    let stdout = read_all(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = read_all(child.stderr.take().map(|p| Box::new(p) as _));
    let status = wait_until(&mut child, Instant::now() + timeout);
    kill_group(&child);
    crate::signals::unregister(child.id() as i32);
    let Some(status) = status else {
        let _ = child.wait();
        let args = command.get_args().map(|a| a.to_string_lossy());
        let shown = std::iter::once(command.get_program().to_string_lossy()).chain(args);
        return Err(format!(
            "{} did not finish within {} s (BLOOMLAB_EXEC_TIMEOUT): it was killed",
            shown.collect::<Vec<_>>().join(" "),
            timeout.as_secs_f64()
        ));
    };
    let (stdout, stderr) = (stdout.join(), stderr.join());
    let (stdout, stderr) = (stdout.unwrap_or_default(), stderr.unwrap_or_default());
    Ok(Ok(Output {
        status,
        stdout,
        stderr,
    }))
}

/// Kills a child's process group (the program, its shell and anything they started).
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
pub(super) struct Session {
    command: String,
    pub(super) child: Child,
    input: Option<ChildStdin>,
    lines: Receiver<std::io::Result<Vec<u8>>>,
    stderr: Arc<Mutex<VecDeque<String>>>,
    timeout: Duration,
    failure: Option<String>,
    /// Inserts since the last `stats`, which the next query batch asks for first.
    pub(super) stale_stats: bool,
    pub(super) buffer: Vec<u8>,
}

impl Session {
    pub(super) fn spawn(command: &str, timeout: Duration) -> std::result::Result<Self, String> {
        let mut child = spawn_group(Command::new("sh").args(["-c", command]), Stdio::piped())
            .map_err(|e| format!("cannot start sh -c: {e}"))?;
        if let Some(input) = &child.stdin {
            non_blocking(input);
        }
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
            command: command.to_string(),
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
    pub(super) fn exchange(&mut self) -> std::result::Result<Vec<u8>, String> {
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
        if let Err(e) = write_within(input, &self.buffer, self.timeout) {
            if e.kind() == ErrorKind::TimedOut {
                return Err(format!(
                    "did not read its request within {} s (BLOOMLAB_EXEC_TIMEOUT){}",
                    self.timeout.as_secs_f64(),
                    self.stderr_lines()
                ));
            }
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
    pub(super) fn fail(&mut self, request: &str, message: String) -> Error {
        let refused = message.starts_with(REFUSED);
        let message = format!("after `{request}`: {message}");
        self.kill();
        self.input = None;
        self.failure = Some(message.clone());
        Error::Exec {
            command: self.command.to_string(),
            message,
            refused,
        }
    }

    /// A request of `keys`, its reply checked by `check`; a key a line cannot carry is
    /// refused before anything is written.
    fn batch(
        &mut self,
        verb: &str,
        keys: Lines<'_>,
        check: impl FnOnce(&[u8]) -> std::result::Result<(), String>,
    ) -> Result<()> {
        if let (Some((i, why)), Lines::Text(text)) = (keys.uncarried(), keys) {
            return Err(Error::invalid(
                "keys",
                shown_key(text[i]),
                format!("the key {why}"),
                "keys an exec program can read as text lines: no LF byte, valid UTF-8",
            ));
        }
        let request = format!("{verb} {}", keys.len());
        self.buffer.clear();
        self.buffer.extend_from_slice(request.as_bytes());
        self.buffer.push(b'\n');
        keys.write(&mut self.buffer);
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

    pub(super) fn insert(&mut self, keys: Lines<'_>) -> Result<()> {
        self.stale_stats = true;
        self.batch("insert", keys, |line| match line {
            b"ok" => Ok(()),
            _ => Err(format!("got {}, not `ok`", shown(line))),
        })
    }

    pub(super) fn query(&mut self, keys: Lines<'_>, answers: &mut [bool]) -> Result<()> {
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

    pub(super) fn stats(&mut self) -> Result<Map<String, Value>> {
        self.buffer = b"stats\n".to_vec();
        let reply = self.exchange().and_then(|line| object(&line));
        self.stale_stats = false;
        reply.map_err(|message| self.fail("stats", message))
    }

    /// Kills the program's process group and reaps the program.
    fn kill(&mut self) {
        kill_group(&self.child);
        let _ = self.child.wait();
        crate::signals::unregister(self.child.id() as i32);
    }

    /// How the program ended, when it has: its status and the tail of its standard error.
    fn ended(&mut self) -> String {
        let status = self.wait_for_exit(Duration::from_millis(500));
        let status = status.map_or_else(String::new, |s| format!("; it exited with {s}"));
        format!("{status}{}", self.stderr_lines())
    }

    fn wait_for_exit(&mut self, limit: Duration) -> Option<ExitStatus> {
        wait_until(&mut self.child, Instant::now() + limit)
    }

    fn stderr_lines(&self) -> String {
        let tail = lock(&self.stderr);
        match tail.is_empty() {
            true => String::new(),
            false => format!(
                "; its standard error ends: {}",
                Vec::from(tail.clone()).join(" | ")
            ),
        }
    }
}

/// Makes the program's input non-blocking, so that [`write_within`] can give up on a
/// program that stops reading (a blocking write would wait for it forever).
fn non_blocking(input: &ChildStdin) {
    let fd = input.as_raw_fd();
    // SAFETY: fcntl(2) on a descriptor this process owns; it takes no pointers.
    unsafe {
        let flags = libc::fcntl(fd, libc::F_GETFL);
        if flags >= 0 {
            libc::fcntl(fd, libc::F_SETFL, flags | libc::O_NONBLOCK);
        }
    }
}

/// Writes all of `bytes` to the program's (non-blocking) input, waiting at most `timeout` in
/// all for the program to read them: past it, an error of kind `TimedOut`.
fn write_within(input: &mut ChildStdin, bytes: &[u8], timeout: Duration) -> std::io::Result<()> {
    let deadline = Instant::now() + timeout;
    let mut rest = bytes;
    while !rest.is_empty() {
        match input.write(rest) {
            Ok(0) => return Err(ErrorKind::WriteZero.into()),
            Ok(written) => rest = &rest[written..],
            Err(e) if e.kind() == ErrorKind::Interrupted => {}
            Err(e) if e.kind() == ErrorKind::WouldBlock => {
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() {
                    return Err(ErrorKind::TimedOut.into());
                }
                let mut ready = libc::pollfd {
                    fd: input.as_raw_fd(),
                    events: libc::POLLOUT,
                    revents: 0,
                };
                let millis = left.as_millis().clamp(1, i32::MAX as u128) as i32;
                // SAFETY: poll(2) reads and writes the one pollfd it is given.
                unsafe { libc::poll(&mut ready, 1, millis) };
            }
            Err(e) => return Err(e),
        }
    }
    Ok(())
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

impl Session {
    /// The first failure of this session, kept after it was returned (a key-by-key call,
    /// which returns nothing, leaves it for the next batched call or [`Filter::finish`]).
    ///
    /// [`Filter::finish`]: crate::structures::Filter::finish
    pub fn failure(&self) -> Option<&str> {
        self.failure.as_deref()
    }

    /// Sends `end`, closes the input and waits for the exit, then kills the program's process
    /// group (whatever it left running). A program still running after the timeout, or one
    /// that wrote anything after its last reply, has failed late: what it did is returned.
    /// Ending an ended session does nothing.
    pub fn end(&mut self) -> Option<String> {
        // A failed or ended session has already been killed and waited for.
        let mut input = self.input.take()?;
        let _ = write_within(&mut input, b"end\n", self.timeout);
        drop(input);
        let exited = self.wait_for_exit(self.timeout).is_some();
        self.kill();
        if !exited {
            return Some(format!(
                "still running {} s after `end` (BLOOMLAB_EXEC_TIMEOUT)",
                self.timeout.as_secs_f64()
            ));
        }
        match self.lines.recv_timeout(Duration::from_secs(1)) {
            Ok(Ok(line)) => Some(format!("wrote {} after `end`", shown(&line))),
            Ok(Err(e)) => Some(format!("its output after `end`: {e}")),
            Err(_) => None,
        }
    }
}

impl Drop for Session {
    /// Ends a session nobody ended ([`Session::end`]): the run it belonged to has already
    /// failed, or it was a probe, so a late failure has nobody to go to.
    fn drop(&mut self) {
        self.end();
    }
}

/// The child's exit status, or none when it is still running at `deadline`.
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => thread::sleep(Duration::from_millis(5)),
            _ => return None,
        }
    }
}
