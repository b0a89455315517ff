//! What to build ([`Spec`]): a structure, how it is sized ([`Sizing`]), its hash, index
//! arithmetic and hash seed. Every command states what it builds as a `Spec`, and
//! [`Spec::build`] is the one place a `Spec` becomes a filter, programs included.

use crate::error::{Error, Result};
use crate::hash::{HashScheme, IndexMath};
use crate::structures::interface::{Filter, FilterKind, Rate, Shape};
use crate::theory;

/// How a filter is sized.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Sizing {
    /// m cells (bits of a bit array, counters, slots times fingerprint bits), as
    /// [`FilterKind::layout`] lays them out, and k hashes.
    Shape { m: u64, k: u32 },
    /// n keys at rate ε: by the structure's design ([`FilterKind::design`]) where it states
    /// one, else by its own constructor for a rate (a peer crate's as it ships, a program's
    /// own sizing: [`crate::structures::Structure::for_rate`]).
    Rate(Rate),
}

impl Default for Sizing {
    fn default() -> Self {
        Sizing::Shape { m: 0, k: 0 }
    }
}

/// What to build: the structure (with its argument and a program's options), its size, the
/// hash and index arithmetic of a structure that takes them, and the hash seed.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Spec {
    pub filter: FilterKind,
    pub sizing: Sizing,
    /// bloomlab's hash scheme (a peer crate or a program hashes keys its own way).
    pub hash: HashScheme,
    /// Probe scheme, reduction and index width of a structure that takes them; None: the
    /// scheme's own ([`HashScheme::default_math`]).
    pub math: Option<IndexMath>,
    pub hash_seed: u64,
}

impl Spec {
    /// `filter` of m cells and k hashes, on the default hash, hash seed 0.
    pub fn shape(filter: FilterKind, m: u64, k: u32) -> Spec {
        Spec {
            filter,
            sizing: Sizing::Shape { m, k },
            ..Spec::default()
        }
    }

    /// `filter` for n keys at rate ε, on the default hash, hash seed 0.
    pub fn rate(filter: FilterKind, n: u64, fpr: f64) -> Spec {
        Spec {
            filter,
            sizing: Sizing::Rate(Rate { fpr, n }),
            ..Spec::default()
        }
    }

    pub fn hashed(self, hash: HashScheme, hash_seed: u64) -> Spec {
        Spec {
            hash,
            hash_seed,
            ..self
        }
    }

    /// The spec with a rate turned into the structure's design, laid out (a `Shape`); a
    /// structure sized by its own constructor keeps its rate. Refuses a structure sized
    /// neither way.
    pub fn designed(self) -> Result<Spec> {
        let Sizing::Rate(rate) = self.sizing else {
            return Ok(self);
        };
        let structure = self.filter.structure();
        match (structure.design, structure.for_rate) {
            (None, Some(_)) => return Ok(self),
            (None, None) => return Err(not_by_rate(&self.filter)),
            (Some(_), _) => {}
        }
        let (m, k) = self.filter.design(rate.n, rate.fpr)?;
        Ok(Spec {
            sizing: Sizing::Shape { m, k },
            ..self
        })
    }

    /// m and k as planned: a shape's, a rate's design ([`Spec::designed`]), or for a
    /// structure that sizes itself the classic design's ([`theory::classic_design`]), which
    /// the cost estimates weigh and its row shows until it reports its own.
    pub fn nominal(&self) -> (u64, u32) {
        match self.clone().designed().map(|spec| spec.sizing) {
            Ok(Sizing::Shape { m, k }) => (m, k),
            _ => match self.sizing {
                Sizing::Shape { m, k } => (m, k),
                Sizing::Rate(rate) => theory::classic_design(rate.n, rate.fpr),
            },
        }
    }

    /// True when the structure sizes itself for a rate: its m and k are those the built
    /// filter reports ([`Spec::designed`] leaves it a rate).
    pub fn sizes_itself(&self) -> bool {
        matches!(self.sizing, Sizing::Rate(_))
            && self.filter.structure().design.is_none()
            && self.filter.structure().for_rate.is_some()
    }

    /// The empty filter for n keys: a shape laid out and built with the spec's hash, index
    /// arithmetic and seed; a rate by the structure's design ([`Spec::designed`]), else by
    /// its own constructor for the rate's n.
    pub fn build(&self, n: u64) -> Result<Box<dyn Filter>> {
        let kind = &self.filter;
        kind.require_built()?;
        match self.clone().designed()?.sizing {
            Sizing::Shape { m, k } => (kind.structure().build)(&Shape {
                kind: kind.clone(),
                n,
                m: kind.layout(m, k)?,
                k,
                hash: self.hash,
                math: self.math,
                hash_seed: self.hash_seed,
            }),
            Sizing::Rate(rate) => match kind.structure().for_rate {
                Some(build) => build(kind, rate, self.hash_seed),
                None => Err(not_by_rate(kind)),
            },
        }
    }
}

/// The refusal of a rate by a structure with neither a design nor a constructor for one.
fn not_by_rate(kind: &FilterKind) -> Error {
    Error::Unsupported {
        filter: kind.name(),
        operation: "be sized by target rate",
        supported: FilterKind::names_where(|s| s.design.is_some() || s.for_rate.is_some()),
    }
}

impl FilterKind {
    /// An empty filter for n keys of m bits and k hashes ([`Spec::build`] of the shape).
    pub fn build(
        &self,
        n: u64,
        m: u64,
        k: u32,
        hash: HashScheme,
        hash_seed: u64,
    ) -> Result<Box<dyn Filter>> {
        Spec::shape(self.clone(), m, k)
            .hashed(hash, hash_seed)
            .build(n)
    }
}
