//! `bloomlab merge`: the parts of a sharded run checked against each other and against the
//! run they were cut from, before any work, then their counts carried into the rows
//! ([`Work::carried`]) so that the run itself, counting nothing, prints the single run's
//! output.

use std::collections::BTreeMap;
use std::path::PathBuf;

use super::{BuildId, Part, QUERY_BLOCK, describe, units};
use crate::error::{Error, Result};
use crate::pipeline::measurement::{Setup, Work};
use crate::pipeline::run::{Counts, blocks_of};

/// Missing units named in a refusal before "and N more".
const SHOWN: usize = 5;

/// The parts of one run, each with the file it came from.
pub struct Parts(pub Vec<(PathBuf, Part)>);

impl Parts {
    /// The command every part was cut from; refuses parts of other builds or commands.
    pub fn command(&self) -> Result<Vec<String>> {
        let Some((first_path, first)) = self.0.first() else {
            return Err(Error::invalid(
                "parts",
                "none",
                "no partial file given",
                "partial files, or a folder of them",
            ));
        };
        let this = BuildId::this();
        for (path, part) in &self.0 {
            if part.build != this {
                return Err(refuse(
                    path,
                    format!("written by bloomlab {}, this is {this}", part.build),
                ));
            }
            if part.command != first.command || part.block != QUERY_BLOCK {
                return Err(refuse(
                    path,
                    format!(
                        "counted for `{}`, {} for `{}`",
                        part.command.join(" "),
                        first_path.display(),
                        first.command.join(" ")
                    ),
                ));
            }
        }
        Ok(first.command.clone())
    }

    /// The work of each row of the run: no block counted here, the parts' counts carried.
    /// Refuses a part whose rows are not the run's (other parameters, seeds or key files),
    /// two parts that built one row's filter differently, a unit given twice, a unit
    /// missing.
    pub fn carried(&self, rows: &[Setup]) -> Result<Vec<Work>> {
        let described: Vec<String> = rows.iter().map(describe).collect();
        let mut by_unit: BTreeMap<(usize, u64), (usize, Counts)> = BTreeMap::new();
        let mut digests: BTreeMap<usize, (usize, u64)> = BTreeMap::new();
        for (p, (path, part)) in self.0.iter().enumerate() {
            if part.rows != described || part.units != units(rows) {
                return Err(refuse(
                    path,
                    "its rows (parameters, seeds, keys) are not those of the command here",
                ));
            }
            for row in &part.counted {
                if row.row >= rows.len() {
                    return Err(refuse(path, format!("no row {} in the run", row.row)));
                }
                let parsed = u64::from_str_radix(&row.digest, 16);
                let digest =
                    parsed.map_err(|_| refuse(path, format!("digest {:?}", row.digest)))?;
                let (first, theirs) = *digests.entry(row.row).or_insert((p, digest));
                if theirs != digest {
                    return Err(refuse(
                        path,
                        format!(
                            "built row {}'s filter with digest {digest:016x}, {} with {theirs:016x}",
                            row.row,
                            self.0[first].0.display(),
                        ),
                    ));
                }
                for (block, counts) in row.units() {
                    if let Some((other, _)) = by_unit.insert((row.row, block), (p, counts)) {
                        return Err(refuse(
                            path,
                            format!(
                                "gives row {} block {block}, which {} gives too",
                                row.row,
                                self.0[other].0.display()
                            ),
                        ));
                    }
                }
            }
        }
        self.check_complete(rows, &by_unit)?;
        let mut work = vec![
            Work {
                blocks: Some(0..0),
                ..Work::default()
            };
            rows.len()
        ];
        for ((row, _), (_, counts)) in by_unit {
            work[row].carried = work[row].carried + counts;
        }
        for (row, (p, digest)) in digests {
            work[row].digest = Some((digest, self.0[p].0.clone()));
        }
        Ok(work)
    }

    /// Refuses parts that leave a unit of the run uncounted, naming the first ones.
    fn check_complete(
        &self,
        rows: &[Setup],
        by_unit: &BTreeMap<(usize, u64), (usize, Counts)>,
    ) -> Result<()> {
        let missing: Vec<String> = (rows.iter().enumerate())
            .flat_map(|(r, row)| (0..blocks_of(row.queries)).map(move |b| (r, b)))
            .filter(|unit| !by_unit.contains_key(unit))
            .map(|(r, b)| format!("row {r} block {b}"))
            .collect();
        if missing.is_empty() {
            return Ok(());
        }
        let more = match missing.len() > SHOWN {
            true => format!(" and {} more", missing.len() - SHOWN),
            false => String::new(),
        };
        Err(Error::invalid(
            "parts",
            format!("{} files", self.0.len()),
            format!(
                "{} of {} units missing: {}{more} (a shard's part not given?)",
                missing.len(),
                units(rows),
                missing[..missing.len().min(SHOWN)].join(", ")
            ),
            "the parts of every shard of the run",
        ))
    }
}

fn refuse(path: &std::path::Path, message: impl Into<String>) -> Error {
    Error::Part {
        path: path.to_path_buf(),
        message: message.into(),
    }
}
