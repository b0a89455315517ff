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

/// The serialised name of the field `$path` of `$ty`, checked by the compiler: renaming the
/// field fails the build instead of leaving a column that reads nothing. A path `a.b` names
/// the field `b` of a field `a` that serde flattens.
#[macro_export]
macro_rules! field {
    (@last $last:ident) => { stringify!($last) };
    (@last $first:ident . $($rest:ident).+) => { $crate::field!(@last $($rest).+) };
    ($ty:ty, $($path:ident).+) => {{
        let _ = |row: &$ty| {
            let _ = &row.$($path).+;
        };
        $crate::field!(@last $($path).+)
    }};
}

/// The columns of `$row`'s human views, each `"header" => Cell(field, ...)` and then any of
/// [`report::Column`]'s modifiers; every field is a [`field!`] of `$row`, so that a misspelt
/// or removed one fails the build:
///
/// ```compile_fail,E0609
/// #[derive(serde::Serialize)]
/// struct Row { rate: f64 }
/// let _ = bloomlab::columns![Row; "rate" => Percent(rte).wide_only()];
/// ```
#[macro_export]
macro_rules! columns {
    (@cell $row:ty, Fixed($($f:ident).+, $digits:literal)) => {
        $crate::report::Cell::Fixed($crate::field!($row, $($f).+), $digits)
    };
    (@cell $row:ty, $cell:ident($($a:ident).+ $(, $($b:ident).+)?)) => {
        $crate::report::Cell::$cell($crate::field!($row, $($a).+) $(, $crate::field!($row, $($b).+))?)
    };
    ($row:ty; $($header:literal => $cell:ident $args:tt $(.$m:ident $margs:tt)*),* $(,)?) => {
        vec![$($crate::report::col($header, $crate::columns!(@cell $row, $cell $args))$(.$m $margs)*),*]
    };
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
