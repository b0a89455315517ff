//! The protocol's text: how a reply line is read and shown in a failure message, how an error
//! reply reads, and how an integer key is written.

use std::io::{BufRead, Read};

use serde_json::{Map, Value};

/// A JSON object line, or the error reply's reason.
pub(super) fn object(line: &[u8]) -> std::result::Result<Map<String, Value>, String> {
    match serde_json::from_slice::<Value>(line) {
        Ok(Value::Object(map)) => match map.get("error") {
            Some(reason) => Err(refusal(reason)),
            None => Ok(map),
        },
        _ => Err(format!("got {}, not a JSON object", shown(line))),
    }
}

/// The counts a hello or `stats` reply may carry (`docs/PROTOCOL.md`), each checked: a
/// count that cannot be is a protocol error, never a fill above 1 or an m of 0 in a table.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub(super) struct Counts {
    pub allocated_bits: Option<u64>,
    pub memory_bits: Option<u64>,
    pub addressed_bits: Option<u64>,
    pub set_bits: Option<u64>,
    pub k: Option<u32>,
}

/// Largest k a reply may give.
const MAX_REPLY_K: u64 = 1 << 16;

impl Counts {
    /// The reply's counts: each present one a whole number (`addressed_bits` and `k` at least
    /// 1), and `set_bits` at most the bits addressed (this reply's, else `addressed_before`).
    pub(super) fn of(
        reply: &Map<String, Value>,
        addressed_before: Option<u64>,
    ) -> std::result::Result<Counts, String> {
        let count = |name: &str, low: u64, high: u64| match reply.get(name) {
            None => Ok(None),
            Some(value) => match value.as_u64() {
                Some(v) if (low..=high).contains(&v) => Ok(Some(v)),
                _ => Err(format!(
                    "`{name}` is {value}: it must be a whole number from {low} to {high}"
                )),
            },
        };
        let counts = Counts {
            allocated_bits: count("allocated_bits", 0, u64::MAX)?,
            memory_bits: count("memory_bits", 0, u64::MAX)?,
            addressed_bits: count("addressed_bits", 1, u64::MAX)?,
            set_bits: count("set_bits", 0, u64::MAX)?,
            k: count("k", 1, MAX_REPLY_K)?.map(|k| k as u32),
        };
        if let (Some(set), Some(addressed)) =
            (counts.set_bits, counts.addressed().or(addressed_before))
            && set > addressed
        {
            return Err(format!(
                "`set_bits` is {set}, above the {addressed} bits the structure addresses"
            ));
        }
        Ok(counts)
    }

    /// The bits the program says it allocates: `allocated_bits`, else `memory_bits` (protocol
    /// 1's first name for them), else `addressed_bits`.
    pub(super) fn allocated(&self) -> Option<u64> {
        (self.allocated_bits)
            .or(self.memory_bits)
            .or(self.addressed_bits)
    }

    /// The bits the program's probes address (the m of its predictions): `addressed_bits`,
    /// else `memory_bits` (at least 1).
    pub(super) fn addressed(&self) -> Option<u64> {
        (self.addressed_bits).or(self.memory_bits.filter(|&m| m > 0))
    }
}

/// How a failure message of an error reply begins.
pub(super) const REFUSED: &str = "refused: ";

fn refusal(reason: &Value) -> String {
    let reason = reason
        .as_str()
        .map_or_else(|| reason.to_string(), str::to_string);
    format!("{REFUSED}{reason}")
}

/// A reply as a failure message shows it: quoted, at most 80 characters.
pub(super) fn shown(line: &[u8]) -> String {
    quoted(&String::from_utf8_lossy(line))
}

/// `text` quoted, at most 80 characters, `…` after a cut.
pub(super) fn quoted(text: &str) -> String {
    let short: String = text.chars().take(80).collect();
    let ellipsis = if short.len() < text.len() { "…" } else { "" };
    format!("{short:?}{ellipsis}")
}

/// Appends `key` in decimal and an LF.
pub(super) fn push_key(buffer: &mut Vec<u8>, mut key: u64) {
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

/// Reads one reply line without its `\n`, at most `limit` bytes: `None` at the end of the
/// output, an error for a longer line (what is left of it is never read).
pub fn read_reply(output: &mut impl BufRead, limit: usize) -> std::io::Result<Option<Vec<u8>>> {
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

#[cfg(test)]
mod tests {
    use std::io::Cursor;

    use proptest::prelude::*;

    use super::read_reply;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

        /// Bound: on any bytes tried, every line read is within the limit and holds no
        /// newline, and only a line longer than the limit is refused.
        #[test]
        fn the_reply_reader_keeps_within_its_limit(
            bytes in prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'0'), any::<u8>()], 0..400),
            limit in 1usize..64,
        ) {
            let mut reader = Cursor::new(bytes.clone());
            let mut consumed = 0usize;
            loop {
                match read_reply(&mut reader, limit) {
                    Ok(Some(line)) => {
                        prop_assert!(line.len() <= limit);
                        prop_assert!(!line.contains(&b'\n'));
                        consumed += line.len() + 1;
                    }
                    Ok(None) => {
                        prop_assert!(consumed >= bytes.len());
                        break;
                    }
                    Err(_) => {
                        // Only a line longer than the limit is refused.
                        let rest = &bytes[consumed.min(bytes.len())..];
                        let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
                        prop_assert!(line.len() > limit);
                        break;
                    }
                }
            }
        }
    }
}
