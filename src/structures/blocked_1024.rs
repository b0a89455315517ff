//! A blocked filter with 1024-bit blocks (two cache lines): its k probes spread over twice the
//! bits of a 512-bit block, so it loses less to uneven block loads, at one more cache miss.

use super::blocked::descriptor;
use super::interface::Structure;

pub static STRUCTURE: Structure = descriptor::<1024>(
    "blocked-1024",
    "all k probes of a key in one 1024-bit block (two cache lines) chosen by a further hash",
);
