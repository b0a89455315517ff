//! A cuckoo filter of 2 slots a bucket: less space per fingerprint's chances (rate about
//! 4α/2^f) but a lower load, 84% (Fan et al. 2014, section 5.1).

use super::cuckoo::descriptor;
use super::interface::Structure;

pub static STRUCTURE: Structure = descriptor::<2>(
    "cuckoo-2",
    "a cuckoo filter: buckets of 2 fingerprints of k bits (k = 4..=32), with delete, sized at 84% load",
);
