//! bloomlab: a laboratory for Bloom filters.
//!
//! One shared core (the [`structures`], their [`hash`] families and the [`keys`]) is measured
//! by the [`pipeline`] and compared with [`theory`] using [`stats`]; the [`experiments`] turn
//! parameters into typed rows, which [`report`] formats. Your own filter is measured the
//! same way by [`measure`] once it implements [`Membership`] ([`pipeline::membership`]).

/// `Display` and `FromStr` for an enum with an `ALL` list and a `name()`: it shows as its
/// name, and parsing accepts exactly the names, listing them when it does not.
macro_rules! named_enum {
    ($ty:ty, $what:literal) => {
        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl std::str::FromStr for $ty {
            type Err = String;
            fn from_str(s: &str) -> std::result::Result<Self, String> {
                <$ty>::ALL
                    .into_iter()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| {
                        let names: Vec<&str> = <$ty>::ALL.iter().map(|v| v.name()).collect();
                        format!("unknown {} '{s}' (allowed: {})", $what, names.join(", "))
                    })
            }
        }
    };
}

/// The serialised name of the field `$field` of `$ty`, checked by the compiler: renaming the
/// field fails the build instead of leaving a column that reads nothing.
#[macro_export]
macro_rules! field {
    ($ty:ty, $field:ident) => {{
        let _ = |row: &$ty| {
            let _ = &row.$field;
        };
        stringify!($field)
    }};
}

pub mod bench;
pub mod console;
pub mod error;
pub mod experiments;
pub mod hash;
pub mod keys;
pub mod params;
pub mod pipeline;
pub mod plot;
pub mod program;
pub mod report;
pub mod shard;
pub mod signals;
pub mod stats;
pub mod structures;
pub mod suite;
pub mod theory;
pub mod words;

pub use error::{Error, Result};
pub use hash::{HashFamily, HashScheme};
pub use keys::KeySource;
pub use pipeline::membership::{FilterMeasurement, measure};
pub use structures::bloom::BloomFilter;
pub use structures::{Filter, Membership};
