//! A standard Ribbon filter of band width 64: ribbon's rows in 64-bit bands, cheaper to band
//! and to query, at more slots per key (RocksDB's sizing, [`super::ribbon::slots_for`]).

use super::interface::Structure;
use super::ribbon::descriptor;

pub static STRUCTURE: Structure = descriptor::<64>(
    "ribbon-64",
    "a standard Ribbon filter: static, r = 1..=32 result bits, band width 64",
);
