//! What a structure's descriptor says of where it comes from, the argument it takes and the
//! design it implements: the parts of [`crate::structures::Structure`] that need nothing else
//! of the interface.

/// Where a structure comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// One of bloomlab's own.
    Own,
    /// A crate people ship, behind an adapter compiled only with `feature`; `built` says
    /// whether this build has it. Its descriptor exists in every build, so that asking for it
    /// without the feature is refused by name ([`crate::error::Error::NotBuilt`]).
    Peer {
        feature: &'static str,
        built: bool,
        /// What bloomlab knows of the crate beyond its interface, where it says.
        about: Option<&'static PeerCrate>,
    },
    /// A separate program behind the exec protocol, which hashes keys its own way.
    Program,
}

impl Origin {
    /// What bloomlab knows of a peer crate ([`PeerCrate`]); `None` for its own structures,
    /// a program, and a peer that says nothing.
    pub fn about(self) -> Option<&'static PeerCrate> {
        match self {
            Origin::Peer { about, .. } => about,
            _ => None,
        }
    }
}

/// n keys at a target false-positive rate ε.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Rate {
    pub fpr: f64,
    pub n: u64,
}

/// A peer crate as the bench, the cost estimate and advise name and use it.
#[derive(Debug)]
pub struct PeerCrate {
    /// The crate's name, as the bench labels its rows: `sbbf-rs`.
    pub name: &'static str,
    /// How much slower it runs than bloomlab's structure of its design, per key (inserts and
    /// absent queries together, at k = 7), in percent: the cost estimate's factor
    /// (`params::preflight::operations_seconds`), each peer's figure and source beside it.
    pub slowdown_percent: u32,
    /// The Rust call that builds the crate's filter of m bits and k hashes as its adapter
    /// does, for advise to print.
    pub constructor: Option<fn(m: u64, k: u32) -> String>,
}

/// One crate is one name (a constructor, a function pointer, has no meaningful equality).
impl PartialEq for PeerCrate {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for PeerCrate {}

/// The exact expected rate of n keys in m bits with k hashes under an argument:
/// `(argument, n, m, k) -> rate`.
pub type RateOfArgument = fn(&str, u64, u64, u32) -> f64;

/// The argument a structure takes after its name, as in `NAME:ARG`.
#[derive(Clone, Copy, Debug)]
pub struct Argument {
    /// What the argument is, in capitals as usage lines show it: `COMMAND`.
    pub name: &'static str,
    /// One line on what it does.
    pub help: &'static str,
    /// True when the structure also builds without one (`NAME` alone, its registered
    /// parameters): it is then listed with the structures a row builds by name.
    pub optional: bool,
    /// Refuses an argument the structure cannot take, saying what it can, when the flag is
    /// read (before any work).
    pub check: fn(&str) -> std::result::Result<(), String>,
    /// The exact expected rate of n keys in m bits with k hashes under this argument, for a
    /// structure whose rate depends on it ([`crate::structures::Structure::fpr_exact`] otherwise).
    pub fpr_exact: Option<RateOfArgument>,
}

/// A filter design, as bloomlab's own structures and the peer crates implement it: what
/// pairs a design with its peers. Only the designs two implementations share are named;
/// every other structure is its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Family {
    /// k probes anywhere in one bit array (Bloom 1970).
    Classic,
    /// One bit in each 32-bit word of a 256-bit block (Parquet's split-block design).
    SplitBlock,
    /// A growing chain of sub-filters (Almeida et al. 2007).
    Scalable,
    /// A quotient filter: each key's hash split into a quotient (its slot) and a stored
    /// remainder (Bender et al., "Don't thrash: how to cache your hash on flash", PVLDB 2012;
    /// the rank-and-select layout of Pandey et al., "A General-Purpose Counting Filter",
    /// SIGMOD 2017).
    Quotient,
    /// A cuckoo filter: fingerprints in one of two buckets by partial-key cuckoo hashing (Fan,
    /// Andersen, Kaminsky and Mitzenmacher, "Cuckoo Filter: Practically Better Than Bloom",
    /// CoNEXT 2014).
    Cuckoo,
    /// A standard Ribbon filter: a banded linear system over GF(2) solved for r result bits a
    /// slot (Dillinger and Walzer, "Ribbon filter: practically smaller than Bloom and Xor",
    /// 2021).
    Ribbon,
    /// A design no other registered structure shares.
    Alone,
}
