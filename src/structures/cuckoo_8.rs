//! A cuckoo filter of 8 slots a bucket: a higher load, 98%, at twice the compared entries
//! (rate about 16α/2^f) (Fan et al. 2014, section 5.1).

use super::cuckoo::descriptor;
use super::interface::Structure;

pub static STRUCTURE: Structure = descriptor::<8>(
    "cuckoo-8",
    "a cuckoo filter: buckets of 8 fingerprints of k bits (k = 4..=32), with delete, sized at 98% load",
);
