//! Sharded runs: a run's work cut into units that do not depend on how many shards share
//! them, counted by `--shard I/N` into a partial file ([`Part`], docs/SHARDING.md), and added
//! up by `bloomlab merge` ([`merge`]) into exactly the single run's rows.
//!
//! A unit is one block of [`QUERY_BLOCK`] absent queries of one row (a setup and trial):
//! block b of a row of n keys asks the query counters `n + b·QUERY_BLOCK ..`, keys by index,
//! so no unit generates another's keys. The units of a run, row after row, are cut into N
//! contiguous ranges ([`share`]): a shard builds each row it touches once, from the row's
//! seeds, and counts its blocks of it through the one loop ([`crate::pipeline::run`]).

pub mod merge;

use std::fmt;
use std::path::Path;
use std::str::FromStr;

use indicatif::ProgressBar;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::experiments::{Counted, Units};
use crate::pipeline::measurement::{Setup, Work};
use crate::pipeline::run::{Counts, QUERY_BLOCK, blocks_of};

/// The format name every partial file starts with.
pub const FORMAT: &str = "bloomlab-partial/1";

/// Most shards a run may be cut into.
pub const MAX_SHARDS: u64 = 1_000_000;

/// The build a binary came from: only parts of one build are merged, since another build
/// may count differently.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct BuildId {
    /// The crate version.
    pub version: String,
    /// The git commit built, or "unknown" outside git.
    pub commit: String,
    /// "clean", "dirty" (tracked files differed from the commit) or "unknown".
    pub dirty: String,
}

impl BuildId {
    /// This binary's.
    pub fn this() -> Self {
        BuildId {
            version: env!("CARGO_PKG_VERSION").into(),
            commit: env!("BLOOMLAB_COMMIT").into(),
            dirty: env!("BLOOMLAB_DIRTY").into(),
        }
    }
}

impl fmt::Display for BuildId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({}, {})", self.version, self.commit, self.dirty)
    }
}

/// `bloomlab --version`: the version, commit and dirty flag of [`BuildId::this`].
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (",
    env!("BLOOMLAB_COMMIT"),
    ", ",
    env!("BLOOMLAB_DIRTY"),
    ")"
);

/// `--shard I/N`: shard I (from 0) of N.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Shard {
    pub index: u64,
    pub count: u64,
}

impl FromStr for Shard {
    type Err = String;
    fn from_str(text: &str) -> std::result::Result<Self, String> {
        let allowed = format!("allowed: I/N with N in 1..={MAX_SHARDS} and I in 0..N");
        let parsed = text
            .split_once('/')
            .and_then(|(i, n)| Some((i.trim().parse::<u64>().ok()?, n.trim().parse().ok()?)));
        match parsed {
            Some((index, count)) if (1..=MAX_SHARDS).contains(&count) && index < count => {
                Ok(Shard { index, count })
            }
            Some((_, count)) if (1..=MAX_SHARDS).contains(&count) => Err(format!(
                "'{text}': the index is 0..={} ({allowed})",
                count - 1
            )),
            _ => Err(format!("'{text}' is not a shard ({allowed})")),
        }
    }
}

impl fmt::Display for Shard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}/{}", self.index, self.count)
    }
}

/// A partial file: what one shard counted, and what it was counted for.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Part {
    /// [`FORMAT`].
    pub format: String,
    pub build: BuildId,
    /// The command line after `bloomlab`, less `--shard` and `--partial`.
    pub command: Vec<String>,
    /// Every row of the run, resolved: its parameters and seeds ([`describe`]).
    pub rows: Vec<String>,
    /// Queries per unit ([`QUERY_BLOCK`]).
    pub block: u64,
    pub shard: Shard,
    /// Units of the whole run.
    pub units: u64,
    /// What this shard counted, row by row.
    pub counted: Vec<RowPart>,
}

/// The units one shard counted of one row: blocks `first_block..` in order, with the digest
/// of the filter it built for them. Only counts that add: no rate, no statistic.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct RowPart {
    /// The row's index in [`Part::rows`].
    pub row: usize,
    pub first_block: u64,
    /// [`crate::pipeline::measurement::filter_digest`] of the filter built, in hex.
    pub digest: String,
    /// The filter's set bits; None when it does not know them.
    pub set_bits: Option<u64>,
    /// Per block: queries asked, reported present, that had been inserted.
    pub queries: Vec<u64>,
    pub present: Vec<u64>,
    pub overlap: Vec<u64>,
    /// Per block, where the command asks inserted keys back: those asked, those answered
    /// absent (absent from the file: none asked).
    #[serde(default, skip_serializing_if = "none_asked")]
    pub checked: Vec<u64>,
    #[serde(default, skip_serializing_if = "none_asked")]
    pub missed: Vec<u64>,
}

fn none_asked(counts: &[u64]) -> bool {
    counts.iter().all(|&c| c == 0)
}

impl RowPart {
    /// A row's counted units.
    fn of(row: &Counted) -> Self {
        let each = |f: fn(&Counts) -> u64| row.units.iter().map(|u| f(&u.counts)).collect();
        RowPart {
            row: row.row,
            first_block: row.units.first().map_or(0, |u| u.block),
            digest: format!("{:016x}", row.digest),
            set_bits: row.set_bits,
            queries: each(|c| c.queries),
            present: each(|c| c.present),
            overlap: each(|c| c.overlap),
            checked: each(|c| c.checked),
            missed: each(|c| c.missed),
        }
    }

    /// Block `first_block + i` and its counts.
    pub fn units(&self) -> impl Iterator<Item = (u64, Counts)> + '_ {
        (0..self.queries.len()).map(|i| {
            let at = |counts: &[u64]| counts.get(i).copied().unwrap_or(0);
            let counts = Counts {
                queries: self.queries[i],
                present: at(&self.present),
                overlap: at(&self.overlap),
                checked: at(&self.checked),
                missed: at(&self.missed),
            };
            (self.first_block + i as u64, counts)
        })
    }
}

/// A row's parameters and seeds as a partial file records them (its work left out).
pub fn describe(row: &Setup) -> String {
    let plain = Setup {
        work: Work::default(),
        ..row.clone()
    };
    format!("{plain:?}")
}

/// The units of a run: the blocks of every row.
pub fn units(rows: &[Setup]) -> u64 {
    rows.iter().map(|r| blocks_of(r.queries)).sum()
}

/// The work of each row for shard `shard`: units `[I·U/N, (I+1)·U/N)` of the U units taken
/// row after row, so that a shard touches few rows and counts several blocks of each.
pub fn share(rows: &[Setup], shard: Shard) -> Vec<Work> {
    let total = units(rows) as u128;
    let cut = |i: u64| (u128::from(i) * total / u128::from(shard.count)) as u64;
    let (start, end) = (cut(shard.index), cut(shard.index + 1));
    let mut offset = 0;
    rows.iter()
        .map(|row| {
            let blocks = blocks_of(row.queries);
            let first = start.clamp(offset, offset + blocks) - offset;
            let last = end.clamp(offset, offset + blocks) - offset;
            offset += blocks;
            Work {
                blocks: Some(first..last),
                ..Work::default()
            }
        })
        .collect()
}

/// Counts the share of every row that has one ([`Units::count`]), and the part that
/// records it.
pub fn count_share(
    command: Vec<String>,
    units: &mut dyn Units,
    shard: Shard,
    progress: &ProgressBar,
) -> Result<Part> {
    let rows = units.rows();
    let counted = units.count(progress)?.iter().map(RowPart::of).collect();
    Ok(Part {
        format: FORMAT.into(),
        build: BuildId::this(),
        command,
        rows: rows.iter().map(describe).collect(),
        block: QUERY_BLOCK,
        shard,
        units: self::units(&rows),
        counted,
    })
}

/// Writes a part as JSON, atomically.
pub fn write_part(path: &Path, part: &Part) -> Result<()> {
    let text = serde_json::to_string_pretty(part).map_err(|e| Error::Output(e.to_string()))?;
    crate::report::write_atomic(path, format!("{text}\n").as_bytes())
}

/// Reads a part; one that does not parse, or of another format, is refused naming its file.
pub fn read_part(path: &Path) -> Result<Part> {
    let text = std::fs::read_to_string(path).map_err(|e| Error::io(path, e))?;
    let refuse = |message: String| Error::Part {
        path: path.to_path_buf(),
        message,
    };
    let part: Part = serde_json::from_str(&text)
        .map_err(|e| refuse(format!("not a partial file of {FORMAT}: {e}")))?;
    match part.format == FORMAT {
        true => Ok(part),
        false => Err(refuse(format!(
            "format {}, where this build reads {FORMAT}",
            part.format
        ))),
    }
}
