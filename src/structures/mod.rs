//! The structures bloomlab measures, and the registry that names them: bloomlab's classic
//! filter, a blocked filter (Putze, Sanders and Singler 2007), a split-block filter (as in
//! Parquet), a counting filter, a cuckoo filter, a quotient filter and a binary fuse filter, then the peer crates
//! ([`peers`]). Each states the rate its own bits predict and its exact expected rate.
//!
//! Adding a structure is one file (a [`Structure`] named `STRUCTURE` and its [`Filter`]) and
//! one line in [`registry!`] below; nothing else in the crate matches on structures.

use crate::error::{Error, Result};

mod block_paths;
mod block_simd;
mod blocks;
pub mod bloom;
mod bloom_simd;
mod descriptor_parts;
pub mod interface;
mod packed;
pub mod peers;
mod probe_groups;
pub mod spec;
mod static_keys;

pub use binary_fuse::{BINARY_FUSE_BITS, BinaryFuseFilter};
pub use blocked::{BLOCK_BITS, BlockedFilter};
pub use counting::{COUNTER_MAX, CountingFilter};
pub use cuckoo::{CUCKOO_LOAD, CUCKOO_MAX_KICKS, CUCKOO_SLOTS, CuckooFilter};
pub use interface::{
    ACROSS_GROUP, Argument, BATCH, CACHE_LINE_BITS, Family, Filter, FilterKind, Membership, Origin,
    PeerCrate, Rate, Shape, Structure, contains_across, count_present, for_each_batch,
};
pub use spec::{Sizing, Spec};
pub use split_block::{SPLIT_BLOCK_BITS, SPLIT_WORDS, SplitBlockFilter};

/// Declares each own structure's module and lists every descriptor in [`REGISTRY`]: one line
/// per structure. `own NAME;` is `src/structures/NAME.rs`, `peer NAME;` is
/// `src/structures/peers/NAME.rs`; each holds a `STRUCTURE`. The order is that of tables and plots.
macro_rules! registry {
    ($(own $own:ident;)* $(peer $peer:ident;)*) => {
        $(pub mod $own;)*
        /// Every structure: bloomlab's own, then the peer crates.
        pub static REGISTRY: &[&Structure] = &[
            $(&$own::STRUCTURE,)*
            $(&crate::structures::peers::$peer::STRUCTURE,)*
        ];
    };
}

registry! {
    own classic;
    own blocked;
    own blocked_1024;
    own split_block;
    own counting;
    own cuckoo;
    own cuckoo_2;
    own cuckoo_8;
    own quotient;
    own binary_fuse;
    own partitioned;
    own scalable;
    own register_blocked;
    own sectorized;
    own xor;
    own ribbon;
    own ribbon_64;
    own ribbon_32;
    own perfect_hash;
    own program_filter;
    peer fastbloom;
    peer bloomfilter;
    peer growable;
    peer sbbf;
    peer qfilter;
    peer cuckoofilter;
    peer ribbon_filter;
}

impl FilterKind {
    /// bloomlab's classic filter, the default.
    pub const CLASSIC: FilterKind = FilterKind::of(&classic::STRUCTURE);

    /// Every registered structure that needs no argument (not `exec:COMMAND`), in registry
    /// order: those a list of rows can build by name alone (with their registered
    /// parameters, where the argument is optional).
    pub fn all() -> Vec<FilterKind> {
        REGISTRY
            .iter()
            .filter(|s| s.argument.is_none_or(|a| a.optional))
            .map(|&s| FilterKind::of(s))
            .collect()
    }

    /// bloomlab's own structures.
    pub fn own() -> Vec<FilterKind> {
        Self::all().into_iter().filter(|k| !k.is_peer()).collect()
    }

    /// The crates people ship, behind adapters ([`peers`]).
    pub fn peers() -> Vec<FilterKind> {
        Self::all().into_iter().filter(|k| k.is_peer()).collect()
    }

    /// bloomlab's own structure of a design shared with peers, the first the registry lists
    /// (`cuckoo` before `cuckoo-2`, `ribbon` before `ribbon-64`), if it has one; none for
    /// [`Family::Alone`], a design no two structures share.
    pub fn of_family(family: Family) -> Option<FilterKind> {
        if family == Family::Alone {
            return None;
        }
        Self::own().into_iter().find(|k| k.family() == family)
    }

    /// The names of the structures with a capability, comma-separated.
    pub fn names_where(capable: impl Fn(&Structure) -> bool) -> String {
        let names: Vec<&str> = REGISTRY
            .iter()
            .filter(|s| capable(s))
            .map(|s| s.name)
            .collect();
        names.join(", ")
    }

    /// `NAME` or `NAME:ARG`, for a structure that takes an argument exactly when one is
    /// given.
    pub fn named(text: &str) -> std::result::Result<FilterKind, String> {
        let (name, arg) = match text.split_once(':') {
            Some((name, arg)) => (name, Some(arg)),
            None => (text, None),
        };
        let structure = REGISTRY.iter().find(|s| s.name == name).ok_or_else(|| {
            let names = Self::names_where(|_| true);
            format!("unknown filter '{text}' (allowed: {names})")
        })?;
        match (structure.argument, arg) {
            (None, None) => Ok(FilterKind::of(structure)),
            (Some(argument), None) if argument.optional => Ok(FilterKind::of(structure)),
            (Some(argument), Some(arg)) if !arg.is_empty() => {
                (argument.check)(arg).map_err(|why| format!("filter '{text}': {why}"))?;
                Ok(FilterKind::with_arg(structure, Some(arg)))
            }
            (Some(argument), _) => Err(format!(
                "filter '{name}' takes an argument: {name}:{} ({})",
                argument.name, argument.help
            )),
            (None, Some(_)) => Err(format!("filter '{name}' takes no argument after ':'")),
        }
    }

    /// `(m, k)` of the structure sized for n keys at rate ε, m as laid out: each
    /// structure's sizing is stated on its descriptor. Refuses the structures without one.
    pub fn design(&self, n: u64, fpr: f64) -> Result<(u64, u32)> {
        self.require_built()?;
        let design = self.structure().design.ok_or_else(|| Error::Unsupported {
            filter: self.name(),
            operation: "be designed by compare (audit configures the crates as they ship)",
            supported: Self::names_where(|s| s.design.is_some()),
        })?;
        if self.arg().is_some() {
            // The design is the registered parameters'; an argument that changes the rate
            // would be sized for the wrong one. (A program has no design: refused above.)
            return Err(Error::Unsupported {
                filter: self.name(),
                operation: "be designed with an argument (its design is that of its registered parameters)",
                supported: Self::names_where(|s| s.design.is_some()),
            });
        }
        let (m, k) = design(n, fpr)?;
        Ok((self.layout(m, k)?, k))
    }

    /// `(keys, m, k)`: the structure's design ([`FilterKind::design`]) at rate ε for as many
    /// keys as `memory` bits hold at `bits_per_key` ([`crate::theory::keys_at`]): the same
    /// design at another table size.
    pub fn design_in(&self, memory: u64, bits_per_key: f64, fpr: f64) -> Result<(u64, u64, u32)> {
        let keys = crate::theory::keys_at(memory, bits_per_key);
        let (m, k) = self.design(keys, fpr)?;
        Ok((keys, m, k))
    }
}

impl Default for FilterKind {
    fn default() -> Self {
        FilterKind::CLASSIC
    }
}

impl std::str::FromStr for FilterKind {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        FilterKind::named(s)
    }
}

impl<'de> serde::Deserialize<'de> for FilterKind {
    fn deserialize<D: serde::Deserializer<'de>>(
        deserializer: D,
    ) -> std::result::Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        FilterKind::named(&text).map_err(serde::de::Error::custom)
    }
}
