//! The checked-in experiment definitions: regenerate the essay's tables into results/, and
//! check fresh runs against the committed results.

mod check;
mod check_files;
mod claims;
mod definition;
mod embedded;
mod family;
mod html;
mod reproduce;
mod summary;

use std::path::{Path, PathBuf};

pub use crate::stats::normal_two_sided_p;
pub use check::{CheckReport, CheckRow, Reseed, check, reseed_seeds};
pub use claims::{ClaimRow, Claims, ledger};
pub use definition::{Definition, Expectation, load_definitions};
pub use embedded::{EMBEDDED, EMBEDDED_FOLDER, embedded_definitions, load_suite};
pub use family::{
    Comparison, Comparisons, DEFAULT_FAMILY_ALPHA, bits_check_p_value, holm_rejections,
};
pub use html::{HtmlReport, command_line};
pub use reproduce::{SUMMARIES, Staged, reproduce, stage};
pub use summary::{Found, Run, Summary};

/// Sub-folders of the experiments folder that are suites of their own, each with its results
/// in the same sub-folder of the results folder: `experiments/wild/` → `results/wild/`.
pub const SUB_SUITES: [&str; 1] = ["wild"];

/// The `(experiments, results)` folder pairs of a suite: the folders given, then each of
/// [`SUB_SUITES`] that the experiments folder has.
pub fn suite_folders(experiments: &Path, results: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut folders = vec![(experiments.to_path_buf(), results.to_path_buf())];
    folders.extend(
        SUB_SUITES
            .iter()
            .filter(|sub| experiments.join(sub).is_dir())
            .map(|sub| (experiments.join(sub), results.join(sub))),
    );
    folders
}

/// The files `reproduce` writes for a definition, by extension.
pub const RESULT_EXTENSIONS: [&str; 3] = ["csv", "md", "svg"];

/// The name of the results file of `definition` with extension `ext`.
pub fn result_name(definition: &Definition, ext: &str) -> String {
    format!("{}.{ext}", definition.name)
}
