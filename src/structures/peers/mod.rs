//! Adapters for the Bloom-filter crates people ship, behind the same filter interface as
//! bloomlab's own structures ([`crate::structures::interface`], the one module they depend
//! on). Each crate's descriptor exists in every build; its adapter only with the feature
//! `peers`, so that a build without it refuses the crate by name. Each is built two ways: by shape (m bits, k
//! hashes), for the experiments' `--filter NAME`, and by target rate and n, the way its README
//! tells a user to, for `audit`.

use crate::structures::interface::{Origin, PeerCrate};

pub mod bloomfilter;
pub mod cuckoofilter;
pub mod fastbloom;
pub mod growable;
#[cfg(feature = "peers")]
mod inspector;
pub mod qfilter;
pub mod ribbon_filter;
pub mod sbbf;

#[cfg(feature = "peers")]
pub use bloomfilter::Bloomfilter;
#[cfg(feature = "peers")]
pub use fastbloom::Fastbloom;
#[cfg(feature = "peers")]
pub use growable::{GROWABLE_GROWTH, GROWABLE_TIGHTENING, Growable, SubFilter};
#[cfg(feature = "peers")]
pub use inspector::InspectedSub;
#[cfg(feature = "peers")]
pub use sbbf::Sbbf;

/// Every peer's origin: the feature that brings the crates, and whether this build has it.
const ORIGIN: Origin = Origin::Peer {
    feature: "peers",
    built: cfg!(feature = "peers"),
    about: None,
};

/// [`ORIGIN`] with what bloomlab knows of the crate.
const fn origin(about: &'static PeerCrate) -> Origin {
    match ORIGIN {
        Origin::Peer { feature, built, .. } => Origin::Peer {
            feature,
            built,
            about: Some(about),
        },
        other => other,
    }
}

/// The crate's seed from bloomlab's: the u64 in the first eight bytes.
#[cfg(feature = "peers")]
fn seed_bytes<const N: usize>(seed: u64) -> [u8; N] {
    let mut bytes = [0u8; N];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    bytes
}

/// A peer's functions in a build without its crate. [`crate::structures::FilterKind`] refuses
/// an unbuilt peer before calling any, so these only answer a direct call of a descriptor's
/// function.
#[cfg(not(feature = "peers"))]
mod unbuilt {
    use crate::error::{Error, Result};
    use crate::structures::interface::{Filter, FilterKind, Rate, Shape};

    fn not_built<T>() -> Result<T> {
        Err(Error::NotBuilt {
            filter: "a peer crate",
            feature: "peers",
        })
    }

    pub fn layout(_: u64, _: u32) -> Result<u64> {
        not_built()
    }

    pub fn build(_: &Shape) -> Result<Box<dyn Filter>> {
        not_built()
    }

    pub fn for_rate(_: &FilterKind, _: Rate, _: u64) -> Result<Box<dyn Filter>> {
        not_built()
    }

    pub fn fpr_exact(_: u64, _: u64, _: u32) -> f64 {
        f64::NAN
    }
}
