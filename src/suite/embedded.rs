//! The checked-in experiment files, built into the binary, so that an installed `bloomlab`
//! (`cargo install --path .`) runs `reproduce` and `check` from any folder. A test keeps this
//! list equal to `experiments/`.

use std::path::Path;

use super::definition::{Definition, load_definitions};
use crate::error::{Error, Result};

/// The folder name the embedded files are reported under.
pub const EMBEDDED_FOLDER: &str = "experiments (built in)";

/// `(file name, text)` of each file named, from `experiments/`.
macro_rules! embedded {
    ($($name:literal),* $(,)?) => {
        [$(($name, include_str!(concat!("../../experiments/", $name)))),*]
    };
}

/// `(file name, text)` of every file of `experiments/`, by name.
pub const EMBEDDED: [(&str, &str); 14] = embedded![
    "advise.toml",
    "audit-adapters.toml",
    "audit.toml",
    "compare.toml",
    "curve-three-settings.toml",
    "flawed-hash.toml",
    "overfill-blocked.toml",
    "overfill-partitioned.toml",
    "overfill-scalable.toml",
    "overfill-strict.toml",
    "overfill.toml",
    "seed-check.toml",
    "sweep-k.toml",
    "sweep-size.toml",
];

/// The embedded definitions, each validated as a file of `experiments/` would be.
pub fn embedded_definitions() -> Result<Vec<Definition>> {
    EMBEDDED
        .iter()
        .map(|(name, text)| {
            Definition::from_bytes(&Path::new(EMBEDDED_FOLDER).join(name), text.as_bytes())
        })
        .collect()
}

/// The definitions of `experiments`; without it, `./experiments` when it exists, else the
/// files built into the binary (an installed binary run anywhere, said on stderr unless
/// `quiet`). Returns them with the folder's name for messages.
pub fn load_suite(experiments: Option<&Path>, quiet: bool) -> Result<(Vec<Definition>, String)> {
    let (definitions, folder) = load_any(experiments, quiet)?;
    refuse_summary_names(&definitions)?;
    Ok((definitions, folder))
}

/// Refuses, before any work, an experiment named as a file `reproduce` writes from the whole
/// run (`claims`, `index`): its results would overwrite that file, or it theirs.
fn refuse_summary_names(definitions: &[Definition]) -> Result<()> {
    let summary_files = super::SUMMARIES.iter().flat_map(|s| s.file_names().iter());
    for file in summary_files {
        let stem = file.rsplit_once('.').map_or(*file, |(stem, _)| stem);
        if let Some(clash) = definitions.iter().find(|d| d.name == stem) {
            return Err(Error::Definition {
                path: clash.path.clone(),
                message: format!(
                    "an experiment named `{stem}` would write over `{file}`, which reproduce writes from the whole run: rename the file"
                ),
            });
        }
    }
    Ok(())
}

fn load_any(experiments: Option<&Path>, quiet: bool) -> Result<(Vec<Definition>, String)> {
    let default = Path::new("experiments");
    match experiments {
        Some(dir) => Ok((load_definitions(dir)?, dir.display().to_string())),
        None if default.is_dir() => Ok((load_definitions(default)?, "experiments".into())),
        None => {
            if !quiet {
                crate::console::note(&format!(
                    "no ./experiments here: using the {} experiment files built into bloomlab \
                     (--experiments DIR for others)",
                    EMBEDDED.len()
                ));
            }
            Ok((embedded_definitions()?, EMBEDDED_FOLDER.into()))
        }
    }
}
