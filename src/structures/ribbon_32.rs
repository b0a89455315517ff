//! A standard Ribbon filter of band width 32: ribbon's rows in 32-bit bands, cheaper to band
//! and to query, at more slots per key (sized by bloomlab's
//! measured occupancies, [`super::ribbon::slots_for`]).

use super::interface::Structure;
use super::ribbon::descriptor;

pub static STRUCTURE: Structure = descriptor::<32>(
    "ribbon-32",
    "a standard Ribbon filter: static, r = 1..=32 result bits, band width 32",
);
