//! Keys as the protocol's key lines (`docs/PROTOCOL.md`, "Keys"): an integer key as its
//! decimal digits, a string key (`--keys file:`, `strings:`) as its own bytes in `text` form.
//! A line ends at LF and a `text` line is UTF-8, so a string key holding an LF byte or
//! invalid UTF-8 cannot be sent: [`check_text_keys`] refuses it before work, naming it.

use super::reply::{push_key, quoted};
use crate::error::{Error, Result};
use crate::keys::{Key, KeySpec};

/// One batch of keys, as lines.
#[derive(Clone, Copy)]
pub(super) enum Lines<'a> {
    Ints(&'a [u64]),
    Text(&'a [&'a [u8]]),
}

impl Lines<'_> {
    pub(super) fn len(&self) -> usize {
        match self {
            Lines::Ints(keys) => keys.len(),
            Lines::Text(keys) => keys.len(),
        }
    }

    pub(super) fn write(&self, buffer: &mut Vec<u8>) {
        match self {
            Lines::Ints(keys) => keys.iter().for_each(|&key| push_key(buffer, key)),
            Lines::Text(keys) => {
                for key in *keys {
                    buffer.extend_from_slice(key);
                    buffer.push(b'\n');
                }
            }
        }
    }

    /// The first key a `text` line cannot carry, with the reason.
    pub(super) fn uncarried(&self) -> Option<(usize, &'static str)> {
        match self {
            Lines::Ints(_) => None,
            Lines::Text(keys) => keys
                .iter()
                .enumerate()
                .find_map(|(i, key)| uncarried(key).map(|why| (i, why))),
        }
    }
}

/// Why a `text` line cannot carry `key`, if it cannot.
fn uncarried(key: &[u8]) -> Option<&'static str> {
    if key.contains(&b'\n') {
        Some("holds an LF byte, which would end its line")
    } else if std::str::from_utf8(key).is_err() {
        Some("is not valid UTF-8, which a text line must be")
    } else {
        None
    }
}

/// `key` as an error message shows it: quoted, invalid bytes escaped, at most 80 characters.
pub(super) fn shown_key(key: &[u8]) -> String {
    let text: String = key.utf8_chunks().fold(String::new(), |mut text, chunk| {
        text.push_str(chunk.valid());
        chunk
            .invalid()
            .iter()
            .for_each(|b| text.push_str(&format!("\\x{b:02x}")));
        text
    });
    quoted(&text)
}

/// Refuses, before work, a string source (`name`: `keys` or `query_keys`) holding a key that
/// a text line cannot carry, naming the key and its line of a file (from 1). Integer
/// sources always pass; a generated source of byte keys (a `strings:` template) is checked
/// on its first key, since a counter's digits add no LF and no invalid byte.
pub fn check_text_keys(spec: KeySpec, name: &'static str) -> Result<()> {
    if spec.ints(0).is_some() {
        return Ok(());
    }
    let lines = spec.available(name)?;
    let count = lines.unwrap_or(1);
    let mut line = 0u64;
    spec.for_each(name, 0, 0, count, |key| {
        line += 1;
        let Key::Bytes(bytes) = key else {
            return Ok(());
        };
        match uncarried(bytes) {
            None => Ok(()),
            Some(why) => Err(Error::invalid(
                name,
                &spec,
                match lines {
                    Some(_) => format!("line {line}, {}, {why}", shown_key(bytes)),
                    None => format!("the key {}, {why}", shown_key(bytes)),
                },
                "keys an exec program can read as text lines: no LF byte, valid UTF-8",
            )),
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_with_an_lf_or_invalid_utf8_is_not_carried() {
        assert_eq!(uncarried(b"user:42\r"), None);
        assert_eq!(uncarried(b""), None);
        assert!(uncarried(b"a\nb").unwrap().contains("LF"));
        assert!(uncarried(b"caf\xe9").unwrap().contains("UTF-8"));
        assert_eq!(shown_key(b"caf\xe9"), "\"caf\\\\xe9\"");
        let mut buffer = Vec::new();
        Lines::Text(&[b"x".as_slice(), b""]).write(&mut buffer);
        Lines::Ints(&[7, 0]).write(&mut buffer);
        assert_eq!(buffer, b"x\n\n7\n0\n");
    }
}
