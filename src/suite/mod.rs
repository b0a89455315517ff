//! The checked-in experiment definitions: regenerate the essay's tables into results/, and
//! check fresh runs against the committed results.

mod check;
mod definition;
mod embedded;
mod family;
mod html;
mod reproduce;
mod summary;

pub use check::{CheckReport, CheckRow, Reseed, check, reseed_seeds};
pub use definition::{Definition, Expectation, load_definitions};
pub use embedded::{EMBEDDED, EMBEDDED_FOLDER, embedded_definitions, load_suite};
pub use family::{
    Comparison, DEFAULT_FAMILY_ALPHA, Family, bits_check_p_value, holm_rejections,
    normal_two_sided_p,
};
pub use html::{HtmlReport, command_line};
pub use reproduce::reproduce;
pub use summary::{Run, SUMMARIES, Summary};

/// The files `reproduce` writes for a definition, by extension.
pub const RESULT_EXTENSIONS: [&str; 3] = ["csv", "md", "svg"];

/// The name of the results file of `definition` with extension `ext`.
pub fn result_name(definition: &Definition, ext: &str) -> String {
    format!("{}.{ext}", definition.name)
}
