//! The keys and index arithmetic of a measurement: `--keys`, `--query-keys`, `--probes`,
//! `--reduce`, `--index-bits`, `--m-round`, flags and experiment-file keys alike.

use clap::{Args, ValueEnum};
use serde::Deserialize;

use super::require;
use crate::error::{Error, Result};
use crate::hash::{HashScheme, INDEX_BITS, IndexMath, Probes, Reduce};
use crate::keys::{self, KeySpec};
use crate::pipeline::keying::Keying;
use crate::program::{KeyForm, check_text_keys};
use crate::structures::bloom::MAX_BITS;
use crate::structures::{FilterKind, Sizing, Spec};

/// How the size is rounded before the filter is built, as some libraries do; k stays the
/// one chosen for the requested m.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum MRound {
    /// m as asked.
    #[default]
    None,
    /// The largest power of two at most m.
    Pow2Down,
    /// The smallest power of two at least m.
    Pow2Up,
}

impl MRound {
    /// The rounded size, refused above 2^36 bits.
    pub fn apply(self, m: u64) -> Result<u64> {
        let rounded = match self {
            MRound::None => m,
            MRound::Pow2Down => 1u64 << (63 - m.leading_zeros()),
            MRound::Pow2Up => m.next_power_of_two(),
        };
        let reason = format!("m = {m} rounds up to {rounded} bits");
        let allowed = format!("a size that rounds to at most {MAX_BITS} bits");
        require("m_round", "pow2-up", rounded <= MAX_BITS, reason, allowed)?;
        Ok(rounded)
    }
}

/// The key sources, `--keys` and `--query-keys`: the experiments' (in [`KeyParams`]) and
/// the audit's.
#[derive(Args, Clone, Debug, Default, PartialEq, Deserialize)]
pub struct KeySources {
    /// Inserted keys [default random]
    #[arg(long, value_name = "SOURCE", long_help = source_help("Inserted keys [default random]:"))]
    pub keys: Option<KeySpec>,
    /// Query keys [default: the inserted source past the keys inserted; random for a file]
    #[arg(long, value_name = "SOURCE")]
    pub query_keys: Option<KeySpec>,
}

/// The keys and the index arithmetic.
#[derive(Args, Clone, Debug, Default, PartialEq, Deserialize)]
pub struct KeyParams {
    #[command(flatten)]
    #[serde(flatten)]
    pub sources: KeySources,
    /// Probe scheme: independent, double, enhanced-double [default: the hash's own]
    #[arg(long)]
    pub probes: Option<Probes>,
    /// Index reduction: multiply-high, modulo, mask (power-of-two m) [default: the hash's own]
    #[arg(long)]
    pub reduce: Option<Reduce>,
    /// Width W of the index arithmetic: at most 2^W bits are addressed [8..=64, default 64]
    #[arg(long, allow_hyphen_values = true)]
    pub index_bits: Option<i64>,
    /// Size rounding before the build, k kept for the requested m [default none]
    #[arg(long, value_enum)]
    pub m_round: Option<MRound>,
}

fn source_help(first: &str) -> String {
    format!("{first}{}", keys::help())
}

impl KeySources {
    /// The sources as a measurement takes them.
    pub fn keying(&self) -> Keying {
        Keying {
            keys: self.keys(),
            query_keys: self.query_keys.clone(),
        }
    }

    /// The inserted source.
    pub fn keys(&self) -> KeySpec {
        self.keys.clone().unwrap_or_default()
    }

    /// n: `--n` when given (refused above a key file's lines), else the key file's lines,
    /// else `default`.
    pub fn n_or(&self, given: Option<u64>, default: u64) -> Result<u64> {
        let lines = self.keys().available("keys")?;
        match (given, lines) {
            (Some(n), Some(lines)) if n > lines => Err(Error::invalid(
                "n",
                n,
                format!("the key file {} has {lines} lines", self.keys()),
                format!("1..={lines}"),
            )),
            (Some(n), _) => Ok(n),
            (None, Some(lines)) => Ok(lines),
            (None, None) => Ok(default),
        }
    }

    /// The lines of a query file (`--query-keys file:PATH`); `None` for a generated source.
    pub fn query_lines(&self) -> Result<Option<u64>> {
        let lines = self.query_keys.as_ref().map(|q| q.available("query_keys"));
        Ok(lines.transpose()?.flatten())
    }

    /// [`KeySources::query_lines`], refusing (before work) a query file shorter than the
    /// `queries` asked of it.
    pub fn query_lines_for(&self, queries: u64) -> Result<Option<u64>> {
        let lines = self.query_lines()?;
        if let Some(lines) = lines
            && lines < queries
        {
            return Err(Error::invalid(
                "queries",
                queries,
                format!("the query file has {lines} lines"),
                format!("1..={lines}"),
            ));
        }
        Ok(lines)
    }

    /// The query source: `--query-keys`, else the inserted one's default
    /// ([`KeySpec::default_queries`]).
    pub fn query_keys(&self) -> KeySpec {
        self.keying().query_keys()
    }

    /// Refuses, before work, string keys that a program behind `exec:` cannot read as text
    /// lines ([`check_text_keys`]).
    pub fn check_for(&self, filter: FilterKind, key_form: KeyForm) -> Result<()> {
        if filter.structure().name == "exec" && key_form == KeyForm::Text {
            check_text_keys(self.keys(), "keys")?;
            check_text_keys(self.query_keys(), "query_keys")?;
        }
        Ok(())
    }
}

impl std::ops::Deref for KeyParams {
    type Target = KeySources;
    fn deref(&self) -> &KeySources {
        &self.sources
    }
}

impl KeyParams {
    /// The index arithmetic, when any of its flags is given: the hash's own for the others.
    fn math(&self, hash: HashScheme) -> Result<Option<IndexMath>> {
        if self.probes.is_none() && self.reduce.is_none() && self.index_bits.is_none() {
            return Ok(None);
        }
        let own = hash.default_math();
        let index_bits = match self.index_bits {
            None => own.index_bits,
            Some(w) => {
                let allowed = format!("{}..={}", INDEX_BITS.start(), INDEX_BITS.end());
                let ok = (8..=64).contains(&w);
                require("index_bits", w, ok, "index width out of range", allowed)? as u32
            }
        };
        Ok(Some(IndexMath {
            probes: self.probes.unwrap_or(own.probes),
            reduce: self.reduce.unwrap_or(own.reduce),
            index_bits,
        }))
    }

    /// The keying of one measurement of n keys and `queries` queries of `spec`, whose index
    /// arithmetic it sets and whose shape's m it rounds (`--m-round`), with the m asked for
    /// when rounding changed it: every refusal (a key file shorter than n or than the
    /// queries, index options on a structure other than classic, `--reduce mask` with a size
    /// that is not a power of two) comes here, before any work.
    pub fn keying(
        &self,
        spec: &mut Spec,
        (n, queries): (u64, u64),
    ) -> Result<(Keying, Option<u64>)> {
        self.n_or(Some(n), n)?;
        self.query_lines_for(queries)?;
        let filter = spec.filter.clone();
        self.check_for(filter.clone(), filter.program().key_form)?;
        let math = self.math(spec.hash)?;
        if math.is_some() && !filter.takes_math() {
            let takers = FilterKind::names_where(|s| s.takes_math);
            return Err(Error::invalid(
                "filter",
                filter,
                format!(
                    "--probes, --reduce and --index-bits set the {takers} filter's index arithmetic"
                ),
                format!("{takers}, or none of those flags"),
            ));
        }
        spec.math = math;
        let mut m_requested = None;
        if let Sizing::Shape { m, k } = spec.sizing {
            let table = self.m_round.unwrap_or_default().apply(m)?;
            let reduce = math.map_or(spec.hash.default_math().reduce, |math| math.reduce);
            if reduce == Reduce::Mask && !table.is_power_of_two() {
                return Err(Error::invalid(
                    "reduce",
                    "mask",
                    format!("m = {table} is not a power of two, so m - 1 is not a mask"),
                    "a power-of-two m (or --m-round pow2-down/pow2-up), or --reduce multiply-high/modulo",
                ));
            }
            spec.sizing = Sizing::Shape { m: table, k };
            m_requested = (table != m).then_some(m);
        }
        Ok((self.sources.keying(), m_requested))
    }
}
