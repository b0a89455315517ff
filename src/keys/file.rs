//! `file:PATH`: one key per line, taken as bytes (a trailing `\r` dropped).
//!
//! The file is read exactly once, on first use: that one pass counts its lines, counts the
//! lines that repeat an earlier one, and keeps every line for the trials that insert and
//! query them, in memory up to [`MEMORY_STORE_BYTES`] and in an unnamed temporary file
//! beyond (a file of 10^8 keys is never held in memory). So a pipe (`file:<(seq 1000)`,
//! `/dev/fd/N`) or a FIFO works as a regular file does, and a file changed during the run
//! cannot change its keys between trials.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::os::unix::fs::{FileExt, FileTypeExt};
use std::path::PathBuf;
use std::sync::OnceLock;

use super::strings::MAX_KEY_BYTES;
use super::{Argument, Registration, Source};
use crate::error::{Error, Result};

pub static SOURCE: Registration = Registration {
    name: "file",
    argument: Some(Argument {
        name: "PATH",
        example: "file:keys.txt",
    }),
    help: "one key per line, as bytes, read once (a file, pipe or FIFO); n is the number of lines unless --n takes fewer",
    build: |_, path| Ok(std::sync::Arc::new(KeyFile::new(path))),
};

impl Source for KeyFile {
    fn spec(&self) -> String {
        format!("{}:{}", SOURCE.name, self.path.display())
    }

    fn for_each_bytes(
        &self,
        name: &'static str,
        first: u64,
        count: u64,
        each: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut line = 0;
        self.for_each(name, first.saturating_add(count), |key| {
            line += 1;
            match line > first {
                true => each(key),
                false => Ok(()),
            }
        })
    }

    /// Its lines may repeat one another.
    fn injective_below(&self, _limit: u64) -> bool {
        false
    }

    fn available(&self, name: &'static str) -> Result<Option<u64>> {
        self.lines(name).map(Some)
    }

    fn exhausted_by_inserts(&self) -> bool {
        true
    }

    fn duplicates(&self, name: &'static str, n: u64) -> Result<Option<u64>> {
        KeyFile::duplicates(self, name, n)
    }
}

/// A key file, read once (on first use) into a [`Store`].
#[derive(Debug)]
pub struct KeyFile {
    path: PathBuf,
    scan: OnceLock<std::result::Result<Scan, String>>,
}

/// Keys up to which [`KeyFile::duplicates`] counts: its set holds 8 bytes (plus the table's
/// slack) per distinct key, at most about 200 MB here.
pub const MAX_COUNTED_KEYS: u64 = 10_000_000;

/// Bytes of keys (plus 4 per key) held in memory; a larger file's keys go to a temporary file.
pub const MEMORY_STORE_BYTES: usize = 256 << 20;

/// What the one pass over the file found.
#[derive(Debug)]
struct Scan {
    lines: u64,
    /// The line numbers (from 0), among the first [`MAX_COUNTED_KEYS`], of the lines that
    /// repeat an earlier line; ascending.
    repeats: Vec<u64>,
    store: Store,
}

/// Every line as a 4-byte little-endian length and its bytes: a key may hold any byte but
/// `\n`, a trailing `\r` included once the line's own was dropped.
#[derive(Debug)]
enum Store {
    Memory(Vec<u8>),
    Spool(File),
}

impl Store {
    fn reader(&self) -> Box<dyn Read + '_> {
        match self {
            Store::Memory(bytes) => Box::new(bytes.as_slice()),
            Store::Spool(file) => Box::new(BufReader::with_capacity(
                1 << 16,
                Positional { file, at: 0 },
            )),
        }
    }
}

/// Reads a shared file from its own offset, so that trials on several threads read it at once.
struct Positional<'a> {
    file: &'a File,
    at: u64,
}

impl Read for Positional<'_> {
    fn read(&mut self, buffer: &mut [u8]) -> std::io::Result<usize> {
        let read = self.file.read_at(buffer, self.at)?;
        self.at += read as u64;
        Ok(read)
    }
}

/// Reads the next line into `line` (cleared first), without its `\n` or `\r\n`; false at
/// the end. Reads at most `MAX_KEY_BYTES + 2` bytes, and refuses a longer line.
fn next_line(reader: &mut impl BufRead, line: &mut Vec<u8>) -> std::result::Result<bool, String> {
    line.clear();
    let limit = MAX_KEY_BYTES as u64 + 2;
    let read = reader
        .by_ref()
        .take(limit)
        .read_until(b'\n', line)
        .map_err(|e| e.to_string())?;
    if read == 0 {
        return Ok(false);
    }
    if line.last() == Some(&b'\n') {
        line.pop();
    }
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    if line.len() > MAX_KEY_BYTES {
        return Err("a line is longer than 64 KiB (65536 bytes)".into());
    }
    Ok(true)
}

/// Where the lines are written during the pass: memory, then a temporary file once
/// [`MEMORY_STORE_BYTES`] is passed.
enum Sink {
    /// The bytes so far and the most it may hold.
    Memory(Vec<u8>, usize),
    Spool(BufWriter<File>),
}

impl Sink {
    fn push(&mut self, line: &[u8]) -> std::io::Result<()> {
        let length = (line.len() as u32).to_le_bytes();
        if let Sink::Memory(bytes, limit) = self {
            if bytes.len() + line.len() + 4 <= *limit {
                bytes.extend_from_slice(&length);
                bytes.extend_from_slice(line);
                return Ok(());
            }
            let mut spool = BufWriter::with_capacity(1 << 16, tempfile::tempfile()?);
            spool.write_all(bytes)?;
            *self = Sink::Spool(spool);
        }
        let Sink::Spool(spool) = self else {
            unreachable!("a full memory sink became a spool above")
        };
        spool.write_all(&length)?;
        spool.write_all(line)
    }

    fn finish(self) -> std::io::Result<Store> {
        match self {
            Sink::Memory(bytes, _) => Ok(Store::Memory(bytes)),
            Sink::Spool(spool) => Ok(Store::Spool(spool.into_inner()?)),
        }
    }
}

impl KeyFile {
    pub fn new(path: &str) -> Self {
        KeyFile {
            path: PathBuf::from(path),
            scan: OnceLock::new(),
        }
    }

    fn scanned(&self, name: &'static str) -> Result<&Scan> {
        self.scan
            .get_or_init(|| self.scan())
            .as_ref()
            .map_err(|reason| {
                Error::invalid(
                    name,
                    format!("file:{}", self.path.display()),
                    reason.clone(),
                    "a readable file, pipe or FIFO of one key per line, at least one line, each at most 64 KiB",
                )
            })
    }

    /// The number of lines (keys), at least 1; refuses, naming parameter `name`, a file
    /// that is missing, unreadable, a device or a socket, empty, or has a line longer than
    /// 64 KiB.
    pub fn lines(&self, name: &'static str) -> Result<u64> {
        self.scanned(name).map(|scan| scan.lines)
    }

    /// The one pass: counts, hashes and keeps every line.
    fn scan(&self) -> std::result::Result<Scan, String> {
        let meta = std::fs::metadata(&self.path).map_err(|e| format!("cannot read it: {e}"))?;
        if !meta.is_file() && !meta.file_type().is_fifo() {
            return Err("not a regular file, pipe or FIFO (a device or socket has no end)".into());
        }
        let file = File::open(&self.path).map_err(|e| format!("cannot read it: {e}"))?;
        let mut reader = BufReader::with_capacity(1 << 16, file);
        let mut sink = Sink::Memory(Vec::new(), MEMORY_STORE_BYTES);
        let mut seen = HashSet::new();
        let mut repeats = Vec::new();
        let mut line = Vec::new();
        let mut lines = 0u64;
        let spool_error = |e: std::io::Error| format!("cannot keep its keys aside: {e}");
        while next_line(&mut reader, &mut line).map_err(|e| format!("line {}: {e}", lines + 1))? {
            if lines < MAX_COUNTED_KEYS && !seen.insert(xxhash_rust::xxh3::xxh3_64(&line)) {
                repeats.push(lines);
            }
            sink.push(&line).map_err(spool_error)?;
            lines += 1;
        }
        if lines == 0 {
            return Err("the file is empty".into());
        }
        Ok(Scan {
            lines,
            repeats,
            store: sink.finish().map_err(spool_error)?,
        })
    }

    /// Calls `each` on the first `count` lines in order.
    pub fn for_each(
        &self,
        name: &'static str,
        count: u64,
        mut each: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let scan = self.scanned(name)?;
        if count > scan.lines {
            return Err(Error::invalid(
                name,
                format!("file:{}", self.path.display()),
                format!("{count} keys asked of a file of {} lines", scan.lines),
                format!("at most {} keys", scan.lines),
            ));
        }
        let refuse = |e: std::io::Error| {
            Error::invalid(
                name,
                format!("file:{}", self.path.display()),
                format!("its keys, kept aside, could not be read back: {e}"),
                "a temporary folder that stays readable during the run",
            )
        };
        let mut reader = scan.store.reader();
        let mut line = Vec::new();
        for _ in 0..count {
            let mut length = [0u8; 4];
            reader.read_exact(&mut length).map_err(refuse)?;
            line.resize(u32::from_le_bytes(length) as usize, 0);
            reader.read_exact(&mut line).map_err(refuse)?;
            each(&line)?;
        }
        Ok(())
    }

    /// How many of the first `n` lines repeat an earlier one (a repeated key sets no new
    /// bit: the filter holds `n - duplicates` distinct keys); `None` above
    /// [`MAX_COUNTED_KEYS`]. Lines are compared by their 64-bit XXH3 hash: two different
    /// lines among 10^7 collide with probability below 3·10^-6 (n²/2^65).
    pub fn duplicates(&self, name: &'static str, n: u64) -> Result<Option<u64>> {
        let scan = self.scanned(name)?;
        Ok((n <= MAX_COUNTED_KEYS).then(|| scan.repeats.partition_point(|&at| at < n) as u64))
    }
}

impl PartialEq for KeyFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for KeyFile {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_past_the_memory_store_are_read_back_from_the_spool() {
        let mut sink = Sink::Memory(Vec::new(), 100);
        let count = 40u64;
        for i in 0..count {
            sink.push(&i.to_le_bytes()[..(i % 9) as usize]).unwrap();
        }
        let store = sink.finish().unwrap();
        assert!(matches!(store, Store::Spool(_)));
        let mut reader = store.reader();
        for i in 0..count {
            let mut length = [0u8; 4];
            reader.read_exact(&mut length).unwrap();
            let mut key = vec![0; u32::from_le_bytes(length) as usize];
            reader.read_exact(&mut key).unwrap();
            assert_eq!(key, i.to_le_bytes()[..(i % 9) as usize]);
        }
    }
}
