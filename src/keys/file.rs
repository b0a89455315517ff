//! `file:PATH`: one key per line, taken as bytes (a trailing `\r` dropped), streamed a line
//! at a time: a file of 10^8 keys is never held in memory.

use std::collections::HashSet;
use std::fs::File;
use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use super::strings::MAX_KEY_BYTES;
use crate::error::{Error, Result};

/// A key file, scanned once (on first use) for its number of lines and its longest line.
#[derive(Debug)]
pub struct KeyFile {
    path: PathBuf,
    lines: OnceLock<std::result::Result<u64, String>>,
    /// `(n, duplicates among the first n lines)` counted so far.
    duplicates: Mutex<Vec<(u64, u64)>>,
}

/// Keys up to which [`KeyFile::duplicates`] counts: its set holds 8 bytes (plus the table's
/// slack) per distinct key, at most about 200 MB here.
pub const MAX_COUNTED_KEYS: u64 = 10_000_000;

fn open(path: &Path) -> std::io::Result<BufReader<File>> {
    Ok(BufReader::with_capacity(1 << 16, File::open(path)?))
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

impl KeyFile {
    pub fn new(path: &str) -> Self {
        KeyFile {
            path: PathBuf::from(path),
            lines: OnceLock::new(),
            duplicates: Mutex::new(Vec::new()),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The number of lines (keys), at least 1; refuses, naming parameter `name`, a file
    /// that is missing, unreadable, empty, or has a line longer than 64 KiB.
    pub fn lines(&self, name: &'static str) -> Result<u64> {
        self.lines
            .get_or_init(|| self.scan())
            .clone()
            .map_err(|reason| {
                Error::invalid(
                    name,
                    format!("file:{}", self.path.display()),
                    reason,
                    "a readable file of one key per line, at least one line, each at most 64 KiB",
                )
            })
    }

    fn scan(&self) -> std::result::Result<u64, String> {
        // A FIFO or a pipe would block the open or be drained by this first reading.
        let meta = std::fs::metadata(&self.path).map_err(|e| format!("cannot read it: {e}"))?;
        if !meta.is_file() {
            return Err("not a regular file (a pipe, FIFO or device cannot be read twice)".into());
        }
        let mut reader = open(&self.path).map_err(|e| format!("cannot read it: {e}"))?;
        let mut line = Vec::new();
        let mut lines = 0u64;
        while next_line(&mut reader, &mut line).map_err(|e| format!("line {}: {e}", lines + 1))? {
            lines += 1;
        }
        if lines == 0 {
            return Err("the file is empty".into());
        }
        Ok(lines)
    }

    /// Calls `each` on the first `count` lines in order.
    pub fn for_each(
        &self,
        name: &'static str,
        count: u64,
        mut each: impl FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let refuse = |reason: String| {
            Error::invalid(
                name,
                format!("file:{}", self.path.display()),
                reason,
                "a file that stays readable and unchanged while it is measured",
            )
        };
        let mut reader = open(&self.path).map_err(|e| refuse(e.to_string()))?;
        let mut line = Vec::new();
        for _ in 0..count {
            if !next_line(&mut reader, &mut line).map_err(refuse)? {
                return Err(refuse("the file became shorter".into()));
            }
            each(&line)?;
        }
        Ok(())
    }
}

impl KeyFile {
    /// How many of the first `n` lines repeat an earlier one (a repeated key sets no new
    /// bit: the filter holds `n - duplicates` distinct keys); `None` above
    /// [`MAX_COUNTED_KEYS`]. Lines are compared by their 64-bit XXH3 hash: two different
    /// lines among 10^7 collide with probability below 3·10^-6 (n²/2^65).
    pub fn duplicates(&self, name: &'static str, n: u64) -> Result<Option<u64>> {
        if n > MAX_COUNTED_KEYS {
            return Ok(None);
        }
        let mut counted = self.duplicates.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(&(_, d)) = counted.iter().find(|(at, _)| *at == n) {
            return Ok(Some(d));
        }
        let mut seen = HashSet::with_capacity(n as usize);
        let mut repeats = 0;
        self.for_each(name, n, |line| {
            repeats += u64::from(!seen.insert(xxhash_rust::xxh3::xxh3_64(line)));
            Ok(())
        })?;
        counted.push((n, repeats));
        Ok(Some(repeats))
    }
}

impl PartialEq for KeyFile {
    fn eq(&self, other: &Self) -> bool {
        self.path == other.path
    }
}

impl Eq for KeyFile {}
