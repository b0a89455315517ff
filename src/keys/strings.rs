//! `strings:FORMAT`: the counter written into a text template, `user:{:06}` → `user:000042`
//! (user names, URLs, e-mail addresses), hashed as its bytes.

use std::sync::Arc;

use super::{Argument, Registration, Source};
use crate::error::{Error, Result};

pub static SOURCE: Registration = Registration {
    name: "strings",
    argument: Some(Argument {
        name: "FORMAT",
        example: "strings:user:{:06}",
    }),
    help: "the counter in a template, hashed as bytes: strings:user:{:06}",
    build: |name, format| {
        Ok(Arc::new(Strings {
            text: format.to_string(),
            format: StringFormat::parse(name, format)?,
        }))
    },
};

/// The counter written into the template `text`.
#[derive(Debug)]
struct Strings {
    text: String,
    format: StringFormat,
}

impl Source for Strings {
    fn spec(&self) -> String {
        format!("{}:{}", SOURCE.name, self.text)
    }

    fn write_key(&self, counter: u64, out: &mut Vec<u8>) -> bool {
        self.format.write(counter, out);
        true
    }

    fn for_each_bytes(
        &self,
        _name: &'static str,
        first: u64,
        count: u64,
        each: &mut dyn FnMut(&[u8]) -> Result<()>,
    ) -> Result<()> {
        let mut buffer = Vec::new();
        for counter in first..first.saturating_add(count) {
            self.format.write(counter, &mut buffer);
            each(&buffer)?;
        }
        Ok(())
    }
}

/// Longest key accepted, from any source: 64 KiB.
pub const MAX_KEY_BYTES: usize = 1 << 16;

/// A template with exactly one placeholder: `{}`, `{:N}` (space padded), `{:0N}` (zero
/// padded), or either with a trailing `x` (lower-case hexadecimal).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StringFormat {
    prefix: String,
    suffix: String,
    width: usize,
    zero: bool,
    hex: bool,
}

fn refuse(name: &'static str, text: &str, reason: &str) -> Error {
    Error::invalid(
        name,
        format!("strings:{text}"),
        reason.to_string(),
        "strings:FORMAT with one placeholder {}, {:N}, {:0N}, {:x} or {:0Nx} (e.g. user:{:06})",
    )
}

impl StringFormat {
    /// Parses FORMAT; `name` names the parameter in the error.
    pub fn parse(name: &'static str, text: &str) -> Result<Self> {
        let (prefix, rest) = text
            .split_once('{')
            .ok_or_else(|| refuse(name, text, "FORMAT has no placeholder"))?;
        let (spec, suffix) = rest
            .split_once('}')
            .ok_or_else(|| refuse(name, text, "FORMAT has an unclosed placeholder"))?;
        if suffix.contains('{') || suffix.contains('}') || prefix.contains('}') {
            return Err(refuse(name, text, "FORMAT has more than one placeholder"));
        }
        let spec = spec.strip_prefix(':').unwrap_or(spec);
        let (spec, hex) = match spec.strip_suffix('x') {
            Some(digits) => (digits, true),
            None => (spec, false),
        };
        let zero = spec.starts_with('0') && spec.len() > 1;
        let width = match spec {
            "" => 0,
            digits => digits
                .parse::<usize>()
                .map_err(|_| refuse(name, text, "the placeholder is not {}, {:N} or {:0N}"))?,
        };
        if prefix.len() + suffix.len() + width.max(20) > MAX_KEY_BYTES {
            return Err(refuse(name, text, "a key would be longer than 64 KiB"));
        }
        Ok(StringFormat {
            prefix: prefix.to_string(),
            suffix: suffix.to_string(),
            width,
            zero,
            hex,
        })
    }

    /// Writes the key of counter c into `out` (cleared first). Distinct counters give
    /// distinct keys: padding never drops a digit.
    pub fn write(&self, counter: u64, out: &mut Vec<u8>) {
        use std::io::Write;
        out.clear();
        out.extend_from_slice(self.prefix.as_bytes());
        let width = self.width;
        // Writing into a Vec cannot fail.
        let _ = match (self.zero, self.hex) {
            (true, true) => write!(out, "{counter:0width$x}"),
            (true, false) => write!(out, "{counter:0width$}"),
            (false, true) => write!(out, "{counter:width$x}"),
            (false, false) => write!(out, "{counter:width$}"),
        };
        out.extend_from_slice(self.suffix.as_bytes());
    }
}
