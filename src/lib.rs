//! bloomlab: a laboratory for Bloom filters.
//!
//! One shared core (the [`filter`], its [`hash`] families and the [`keys`]) is measured by
//! [`measure`] and compared with [`theory`] using [`stats`]; the [`experiments`] turn
//! parameters into typed rows, which [`report`] formats.

pub mod bench;
pub mod compare;
pub mod error;
pub mod experiments;
pub mod filter;
pub mod hash;
pub mod keys;
pub mod measure;
pub mod params;
pub mod plot;
pub mod report;
pub mod sizing;
pub mod stats;
pub mod structures;
pub mod suite;
pub mod theory;

pub use error::{Error, Result};
pub use filter::BloomFilter;
pub use hash::{HashFamily, HashScheme};
pub use keys::KeySource;
