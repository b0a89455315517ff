//! A plain bit-array Bloom filter speaking the exec protocol of `docs/PROTOCOL.md`, for tests.
//!
//! Sized from the header: `fpr` gives m = ⌈−n·ln ε / (ln 2)²⌉ and k = max(1, round(m/n · ln 2));
//! `m` and `k` are taken as given. Key i probes bits (h₁ + i·h₂) mod m, where h₁ and h₂ come from
//! a seeded FNV-1a of the key's bytes (the line in `text` form, the 8 little-endian bytes of the
//! parsed integer in `int` and `bytes` form) through the splitmix64 finaliser.
//!
//! `--break MODE [--at STAGE]` misbehaves on purpose, once, at the first command of STAGE
//! (default `query`), so that tests can check how bloomlab reports each failure.
//!
//! Build: `cargo build --release --example exec_fixture`.

use std::collections::hash_map::RandomState;
use std::hash::BuildHasher;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::process::ExitCode;

use clap::{Parser, ValueEnum};
use serde_json::{Value, json};

/// Largest batch the protocol allows.
const MAX_BATCH: usize = 65_536;
/// Largest table the fixture allocates: 2³⁵ bits (4 GiB).
const MAX_BITS: u64 = 1 << 35;

#[derive(Parser)]
#[command(about = "A trivial Bloom filter speaking bloomlab's exec protocol, breakable on purpose")]
struct Args {
    /// Misbehave on purpose.
    #[arg(long = "break", value_enum)]
    breakage: Option<Breakage>,
    /// The stage whose first command triggers the breakage.
    #[arg(long, value_enum, default_value = "query")]
    at: Stage,
    /// Report `set_bits` in `stats`, so that bloomlab shows the fill.
    #[arg(long)]
    report_set_bits: bool,
    /// Size itself from `fpr` only and refuse `m` and `k`, as a library whose constructor
    /// takes a capacity and an error rate does (rbloom).
    #[arg(long)]
    sizes_itself: bool,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Breakage {
    /// Answer 0 for the first key ever inserted, whenever it is queried (query stage only).
    FalseNegative,
    /// Answer one character fewer than the batch has keys (query stage only).
    ShortAnswer,
    /// Answer a line that is no valid reply.
    Garbage,
    /// Exit with status 3 instead of answering.
    ExitEarly,
    /// Read the command, then never answer and never exit.
    Silent,
    /// Answer the protocol's error reply.
    Refuse,
    /// Hash with a per-process random key, so that the same seed gives different answers.
    Nondeterministic,
    /// Report in `stats` a memory_bits that differs from the hello reply (stats stage only).
    StatsMismatch,
    /// Size itself by `fpr` for half of n, so that its rate at n exceeds the promise
    /// (every stage: it is how the filter is built).
    Undersized,
    /// Drop every second key inserted (the 2nd, 4th, ...): false negatives for half the keys,
    /// and a rate far below the promise (every stage).
    DropHalf,
    /// Answer present to every key queried: a rate of 100% (every stage).
    AllPresent,
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Stage {
    Hello,
    Insert,
    Query,
    Stats,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum KeyForm {
    Text,
    Int,
    Bytes,
}

/// The filter: m bits, k probes, a hash seed, and the first key inserted (for `false-negative`).
struct Filter {
    bits: Vec<u64>,
    m: u64,
    k: u32,
    seed: u64,
    key_form: KeyForm,
    first_key: Option<Vec<u8>>,
    inserted: u64,
    /// `--break`, for the breakages that are how the filter behaves throughout.
    breakage: Option<Breakage>,
}

/// What the session does next after a command.
enum Flow {
    Continue,
    End,
    /// Exit at once with this status (`exit-early`).
    Exit(u8),
}

/// A protocol violation by the peer, or a read/write failure: reported on stderr, exit 1.
type Fatal = String;

fn main() -> ExitCode {
    let args = Args::parse();
    let stdin = io::stdin();
    let mut input = BufReader::with_capacity(1 << 16, stdin.lock());
    let mut output = BufWriter::with_capacity(1 << 16, io::stdout().lock());
    match run(&args, &mut input, &mut output) {
        Ok(Flow::Exit(status)) => ExitCode::from(status),
        Ok(_) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("exec_fixture: {message}");
            ExitCode::FAILURE
        }
    }
}

/// Sessions are: the header, then commands until `end` or end of input.
fn run(args: &Args, input: &mut impl BufRead, output: &mut impl Write) -> Result<Flow, Fatal> {
    let mut session = Session {
        args,
        breakage_spent: false,
    };
    let mut line = Vec::new();
    if !read_line(input, &mut line)? {
        return Ok(Flow::End);
    }
    let mut filter = match session.hello(&line, output)? {
        Ok(filter) => filter,
        Err(Flow::Exit(status)) => return Ok(Flow::Exit(status)),
        Err(_) => return wait_for_end(input, &mut line),
    };
    let mut keys = Batch::default();
    while read_line(input, &mut line)? {
        let flow = session.command(&line, &mut filter, &mut keys, input, output)?;
        match flow {
            Flow::Continue => continue,
            Flow::End => return wait_for_end(input, &mut line),
            exit => return Ok(exit),
        }
    }
    Ok(Flow::End)
}

/// After an error reply the session is over: read (and ignore) lines until `end` or EOF.
fn wait_for_end(input: &mut impl BufRead, line: &mut Vec<u8>) -> Result<Flow, Fatal> {
    while read_line(input, line)? {
        if line == b"end" {
            break;
        }
    }
    Ok(Flow::End)
}

struct Session<'a> {
    args: &'a Args,
    breakage_spent: bool,
}

impl Session<'_> {
    /// The breakage to apply at this command of `stage`, at most once per session.
    fn breakage_at(&mut self, stage: Stage) -> Option<Breakage> {
        let breakage = self.args.breakage?;
        let stage_bound = match breakage {
            Breakage::FalseNegative | Breakage::ShortAnswer => Some(Stage::Query),
            Breakage::StatsMismatch => Some(Stage::Stats),
            Breakage::Nondeterministic
            | Breakage::Undersized
            | Breakage::DropHalf
            | Breakage::AllPresent => None,
            _ => Some(self.args.at),
        };
        if self.breakage_spent || stage_bound != Some(stage) {
            return None;
        }
        if breakage != Breakage::FalseNegative {
            self.breakage_spent = true;
        }
        Some(breakage)
    }

    /// Answers the header: the filter, or how the session goes on without one.
    fn hello(
        &mut self,
        line: &[u8],
        output: &mut impl Write,
    ) -> Result<Result<Filter, Flow>, Fatal> {
        let broken = self.breakage_at(Stage::Hello);
        if let Some(flow) = misbehave(broken, output)? {
            return Ok(Err(flow));
        }
        let nondeterministic = self.args.breakage == Some(Breakage::Nondeterministic);
        let undersized = self.args.breakage == Some(Breakage::Undersized);
        let refused = refused_header(line, self.args.sizes_itself);
        match refused.and(Filter::from_header(line, nondeterministic, undersized)) {
            Ok(mut filter) => {
                filter.breakage = self.args.breakage;
                let reply = json!({
                    "name": "exec_fixture",
                    "memory_bits": filter.m,
                    "k": filter.k,
                    "seeded": true,
                });
                reply_line(output, reply.to_string().as_bytes())?;
                Ok(Ok(filter))
            }
            Err(reason) => {
                reply_error(output, &reason)?;
                Ok(Err(Flow::End))
            }
        }
    }

    /// Runs one command line (reading its batch, if any) and answers it.
    fn command(
        &mut self,
        line: &[u8],
        filter: &mut Filter,
        keys: &mut Batch,
        input: &mut impl BufRead,
        output: &mut impl Write,
    ) -> Result<Flow, Fatal> {
        let text = String::from_utf8_lossy(line);
        let (verb, count) = match text.split_once(' ') {
            Some((verb, count)) => (verb, Some(count)),
            None => (text.as_ref(), None),
        };
        match (verb, count) {
            ("end", None) => Ok(Flow::Exit(0)),
            ("insert", Some(count)) => {
                keys.read(input, parse_count(count)?)?;
                let broken = self.breakage_at(Stage::Insert);
                self.insert(broken, filter, keys, output)
            }
            ("query", Some(count)) => {
                keys.read(input, parse_count(count)?)?;
                let broken = self.breakage_at(Stage::Query);
                self.query(broken, filter, keys, output)
            }
            ("stats", None) => {
                let broken = self.breakage_at(Stage::Stats);
                self.stats(broken, filter, output)
            }
            _ => {
                reply_error(output, &format!("unknown command {text:?}"))?;
                Ok(Flow::End)
            }
        }
    }

    fn insert(
        &self,
        broken: Option<Breakage>,
        filter: &mut Filter,
        keys: &Batch,
        output: &mut impl Write,
    ) -> Result<Flow, Fatal> {
        if let Some(flow) = misbehave(broken, output)? {
            return Ok(flow);
        }
        for key in keys.iter() {
            if let Err(reason) = filter.insert(key) {
                reply_error(output, &reason)?;
                return Ok(Flow::End);
            }
        }
        reply_line(output, b"ok")?;
        Ok(Flow::Continue)
    }

    fn query(
        &self,
        broken: Option<Breakage>,
        filter: &Filter,
        keys: &Batch,
        output: &mut impl Write,
    ) -> Result<Flow, Fatal> {
        if let Some(flow) = misbehave(broken, output)? {
            return Ok(flow);
        }
        let mut answer = Vec::with_capacity(keys.len() + 1);
        for key in keys.iter() {
            let forgotten =
                broken == Some(Breakage::FalseNegative) && filter.first_key.as_deref() == Some(key);
            match filter.contains(key) {
                Ok(present) => answer.push(if present && !forgotten { b'1' } else { b'0' }),
                Err(reason) => {
                    reply_error(output, &reason)?;
                    return Ok(Flow::End);
                }
            }
        }
        if broken == Some(Breakage::ShortAnswer) {
            answer.pop();
        }
        reply_line(output, &answer)?;
        Ok(Flow::Continue)
    }

    fn stats(
        &self,
        broken: Option<Breakage>,
        filter: &Filter,
        output: &mut impl Write,
    ) -> Result<Flow, Fatal> {
        if let Some(flow) = misbehave(broken, output)? {
            return Ok(flow);
        }
        let reported_bits = match broken {
            Some(Breakage::StatsMismatch) => filter.m + 64,
            _ => filter.m,
        };
        let mut reply =
            json!({"memory_bits": reported_bits, "k": filter.k, "inserted": filter.inserted});
        if self.args.report_set_bits {
            let set: u32 = filter.bits.iter().map(|w| w.count_ones()).sum();
            reply["set_bits"] = json!(set);
        }
        reply_line(output, reply.to_string().as_bytes())?;
        Ok(Flow::Continue)
    }
}

/// The breakages that replace the answer itself: `Some(flow)` when one applied.
fn misbehave(broken: Option<Breakage>, output: &mut impl Write) -> Result<Option<Flow>, Fatal> {
    match broken {
        Some(Breakage::Garbage) => {
            reply_line(output, b"#!garbage")?;
            Ok(Some(Flow::Continue))
        }
        Some(Breakage::ExitEarly) => Ok(Some(Flow::Exit(3))),
        Some(Breakage::Silent) => loop {
            std::thread::sleep(std::time::Duration::from_secs(3600));
        },
        Some(Breakage::Refuse) => {
            reply_error(output, "refused on purpose (--break refuse)")?;
            Ok(Some(Flow::End))
        }
        _ => Ok(None),
    }
}

impl Filter {
    /// The filter the header asks for, or the reason to refuse it (sent as the error reply).
    fn from_header(
        line: &[u8],
        nondeterministic: bool,
        undersized: bool,
    ) -> Result<Filter, String> {
        let header: Value =
            serde_json::from_slice(line).map_err(|e| format!("header is not JSON: {e}"))?;
        if header.get("protocol").and_then(Value::as_u64) != Some(1) {
            return Err(format!(
                "unsupported protocol {} (this program speaks 1)",
                header.get("protocol").unwrap_or(&Value::Null)
            ));
        }
        let field = |name: &str| header.get(name).and_then(Value::as_u64);
        let n = field("n")
            .filter(|&n| n >= 1)
            .ok_or("n must be an integer ≥ 1")?;
        let mut seed = field("seed").ok_or("seed must be an integer in 0..2^64")?;
        if nondeterministic {
            seed ^= RandomState::new().hash_one(0u8);
        }
        let (m, k) = shape(&header, if undersized { n.div_ceil(2) } else { n })?;
        let words = usize::try_from(m.div_ceil(64)).map_err(|_| "m too large".to_string())?;
        Ok(Filter {
            bits: vec![0; words],
            m,
            k,
            seed,
            key_form: key_form(&header)?,
            first_key: None,
            inserted: 0,
            breakage: None,
        })
    }

    fn insert(&mut self, key: &[u8]) -> Result<(), String> {
        let (h1, h2) = self.hashes(key)?;
        self.inserted += 1;
        if self.breakage == Some(Breakage::DropHalf) && self.inserted.is_multiple_of(2) {
            return Ok(());
        }
        for i in 0..u64::from(self.k) {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % self.m;
            self.bits[(bit / 64) as usize] |= 1 << (bit % 64);
        }
        if self.first_key.is_none() {
            self.first_key = Some(key.to_vec());
        }
        Ok(())
    }

    fn contains(&self, key: &[u8]) -> Result<bool, String> {
        let (h1, h2) = self.hashes(key)?;
        if self.breakage == Some(Breakage::AllPresent) {
            return Ok(true);
        }
        Ok((0..u64::from(self.k)).all(|i| {
            let bit = h1.wrapping_add(i.wrapping_mul(h2)) % self.m;
            self.bits[(bit / 64) as usize] & (1 << (bit % 64)) != 0
        }))
    }

    /// (h₁, h₂) for a key line, read in the header's key form.
    fn hashes(&self, line: &[u8]) -> Result<(u64, u64), String> {
        let hashed = match self.key_form {
            KeyForm::Text => fnv1a(self.seed, line),
            KeyForm::Int | KeyForm::Bytes => fnv1a(self.seed, &parse_u64(line)?.to_le_bytes()),
        };
        let h1 = splitmix64(hashed);
        Ok((h1, splitmix64(h1 ^ 0x9e37_79b9_7f4a_7c15) | 1))
    }
}

/// (m, k) from `fpr`, or from `m` and `k` as given.
fn shape(header: &Value, n: u64) -> Result<(u64, u32), String> {
    let k_field = header.get("k").and_then(Value::as_u64);
    let (m, k) = match (header.get("fpr"), header.get("m"), k_field) {
        (Some(fpr), None, None) => {
            let fpr = fpr.as_f64().filter(|e| *e > 0.0 && *e < 1.0);
            let fpr = fpr.ok_or("fpr must be a number in (0, 1)")?;
            let ln2 = std::f64::consts::LN_2;
            let m = (-(n as f64) * fpr.ln() / (ln2 * ln2)).ceil();
            let k = (m / n as f64 * ln2).round().max(1.0);
            (m as u64, k as u64)
        }
        (None, Some(m), Some(k)) => (m.as_u64().ok_or("m must be an integer ≥ 1")?, k),
        _ => return Err("the header needs either fpr, or m and k".to_string()),
    };
    if !(1..=MAX_BITS).contains(&m) {
        return Err(format!("m = {m} is outside 1..=2^35"));
    }
    let k = u32::try_from(k).ok().filter(|k| (1..=64).contains(k));
    Ok((m, k.ok_or("k must be in 1..=64")?))
}

/// Why the fixture refuses a header before reading its size: `m` and `k` under
/// `--sizes-itself`, and an option `refuse_me` (which shows that `--param` reached it).
fn refused_header(line: &[u8], sizes_itself: bool) -> Result<(), String> {
    let header: Value = serde_json::from_slice(line).unwrap_or(Value::Null);
    if let Some(value) = header.get("refuse_me") {
        return Err(format!(
            "header option refuse_me = {value} refused on purpose"
        ));
    }
    if sizes_itself && header.get("m").is_some() {
        return Err("exec_fixture --sizes-itself sizes itself from a capacity and an error rate: it takes no m and k (send fpr instead)".into());
    }
    Ok(())
}

fn key_form(header: &Value) -> Result<KeyForm, String> {
    match header.get("key_form").map(Value::as_str) {
        None | Some(Some("text")) => Ok(KeyForm::Text),
        Some(Some("int")) => Ok(KeyForm::Int),
        Some(Some("bytes")) => Ok(KeyForm::Bytes),
        Some(other) => Err(format!(
            "key_form {} is none of text, int, bytes",
            other.unwrap_or("(not a string)")
        )),
    }
}

fn parse_u64(line: &[u8]) -> Result<u64, String> {
    std::str::from_utf8(line)
        .ok()
        .and_then(|text| text.parse().ok())
        .ok_or_else(|| {
            let shown = String::from_utf8_lossy(line);
            format!("key {shown:?} is no decimal integer in 0..2^64")
        })
}

/// FNV-1a over the bytes, its offset basis perturbed by the seed.
fn fnv1a(seed: u64, bytes: &[u8]) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325 ^ splitmix64(seed);
    for &byte in bytes {
        hash = (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3);
    }
    hash
}

/// The splitmix64 finaliser: a bijection of u64 that mixes every input bit into every output bit.
fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

fn parse_count(text: &str) -> Result<usize, Fatal> {
    text.parse()
        .ok()
        .filter(|&count| count <= MAX_BATCH)
        .ok_or_else(|| format!("batch size {text:?} is not an integer in 0..=65536"))
}

/// One batch of key lines, stored back to back in one buffer.
#[derive(Default)]
struct Batch {
    bytes: Vec<u8>,
    ends: Vec<usize>,
}

impl Batch {
    fn read(&mut self, input: &mut impl BufRead, count: usize) -> Result<(), Fatal> {
        self.bytes.clear();
        self.ends.clear();
        for read in 0..count {
            let got = input
                .read_until(b'\n', &mut self.bytes)
                .map_err(|e| format!("reading key {} of {count}: {e}", read + 1))?;
            if got == 0 || self.bytes.pop() != Some(b'\n') {
                return Err(format!("input ended after {read} of {count} keys"));
            }
            self.ends.push(self.bytes.len());
        }
        Ok(())
    }

    fn len(&self) -> usize {
        self.ends.len()
    }

    fn iter(&self) -> impl Iterator<Item = &[u8]> {
        let starts = std::iter::once(0).chain(self.ends.iter().copied());
        starts
            .zip(&self.ends)
            .map(|(start, &end)| &self.bytes[start..end])
    }
}

/// Reads one line without its `\n`; false at end of input.
fn read_line(input: &mut impl BufRead, line: &mut Vec<u8>) -> Result<bool, Fatal> {
    line.clear();
    let read = input
        .read_until(b'\n', line)
        .map_err(|e| format!("reading a command: {e}"))?;
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    Ok(read > 0)
}

fn reply_line(output: &mut impl Write, reply: &[u8]) -> Result<(), Fatal> {
    output
        .write_all(reply)
        .and_then(|()| output.write_all(b"\n"))
        .and_then(|()| output.flush())
        .map_err(|e| format!("writing a reply: {e}"))
}

fn reply_error(output: &mut impl Write, reason: &str) -> Result<(), Fatal> {
    reply_line(output, json!({ "error": reason }).to_string().as_bytes())
}
