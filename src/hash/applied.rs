//! The hash a structure applies to keys, as a row records it: one of bloomlab's families,
//! or a function bloomlab does not choose (a crate's, a program's), written at the edge as
//! the `hash` column shows it.

use std::borrow::Cow;
use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::HashScheme;

/// What [`AppliedHash::PreHashed`] adds to the name of the hash under it.
const PRE_HASH: &str = " (xxh3 pre-hash of byte keys)";
/// What [`AppliedHash::Fingerprint`] adds to the name of its scheme.
const FINGERPRINT: &str = " fingerprint; ";

/// The hash a structure applies to keys ([`crate::structures::Filter::hash_name`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AppliedHash {
    /// One of bloomlab's families (`--hash`).
    Scheme(HashScheme),
    /// A function the structure brings itself: a crate's (`siphash-1-3`), a fixed one of a
    /// structure's design (`splitmix64`), or a program's, by its name.
    Own(Cow<'static, str>),
    /// Fingerprints from a scheme, beside another function that places them (`multiply-shift
    /// fingerprint; ph perfect hash`).
    Fingerprint {
        scheme: HashScheme,
        placed_by: Cow<'static, str>,
    },
    /// Byte keys reduced to a u64 by xxh3 before the hash under it, for a structure that
    /// takes u64 keys only.
    PreHashed(Box<AppliedHash>),
}

impl AppliedHash {
    /// A function the structure brings itself, by a fixed name.
    pub const fn own(name: &'static str) -> Self {
        AppliedHash::Own(Cow::Borrowed(name))
    }

    /// True when the hash is bloomlab's `scheme`, applied to the keys as given.
    pub fn is(&self, scheme: HashScheme) -> bool {
        *self == AppliedHash::Scheme(scheme)
    }
}

impl Default for AppliedHash {
    fn default() -> Self {
        AppliedHash::Scheme(HashScheme::default())
    }
}

impl From<HashScheme> for AppliedHash {
    fn from(scheme: HashScheme) -> Self {
        AppliedHash::Scheme(scheme)
    }
}

impl fmt::Display for AppliedHash {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AppliedHash::Scheme(scheme) => f.write_str(scheme.name()),
            AppliedHash::Own(name) => f.write_str(name),
            AppliedHash::Fingerprint { scheme, placed_by } => {
                write!(f, "{}{FINGERPRINT}{placed_by}", scheme.name())
            }
            AppliedHash::PreHashed(under) => write!(f, "{under}{PRE_HASH}"),
        }
    }
}

/// Reads back what [`fmt::Display`] writes: a name that is no scheme is a structure's own.
impl FromStr for AppliedHash {
    type Err = std::convert::Infallible;
    fn from_str(text: &str) -> Result<Self, Self::Err> {
        if let Some(under) = text.strip_suffix(PRE_HASH) {
            return Ok(AppliedHash::PreHashed(Box::new(under.parse()?)));
        }
        if let Some((scheme, placed_by)) = text.split_once(FINGERPRINT)
            && let Ok(scheme) = scheme.parse::<HashScheme>()
        {
            return Ok(AppliedHash::Fingerprint {
                scheme,
                placed_by: Cow::Owned(placed_by.to_string()),
            });
        }
        Ok(match text.parse::<HashScheme>() {
            Ok(scheme) => AppliedHash::Scheme(scheme),
            Err(_) => AppliedHash::Own(Cow::Owned(text.to_string())),
        })
    }
}

impl Serialize for AppliedHash {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for AppliedHash {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Ok(text.parse().unwrap_or_else(|never| match never {}))
    }
}
