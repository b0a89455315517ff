//! What a command line tells a program behind `exec:` beside its size: how it hands each key
//! to its library (`--key-form`) and its constructor options (`--param KEY=VALUE`). They are
//! part of the filter asked for, so they travel on its [`crate::structures::FilterKind`]
//! ([`crate::structures::FilterKind::with_program`]) from the flags to the program's header.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// How the program hands a key line to its library (the header's `key_form`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KeyForm {
    /// The line as the language's string.
    #[default]
    Text,
    /// The line parsed to the language's native integer.
    Int,
    /// The parsed integer as 8 little-endian bytes.
    Bytes,
}

impl KeyForm {
    pub const ALL: [KeyForm; 3] = [KeyForm::Text, KeyForm::Int, KeyForm::Bytes];

    pub fn name(self) -> &'static str {
        match self {
            KeyForm::Text => "text",
            KeyForm::Int => "int",
            KeyForm::Bytes => "bytes",
        }
    }
}

named_enum!(KeyForm, "key form");

/// The options a program is started with: `text` keys and no constructor options unless the
/// command line says otherwise.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ProgramOptions {
    pub key_form: KeyForm,
    /// `--param KEY=VALUE`, added to the header in order (checked by
    /// [`super::sizing::parse_param`]).
    pub params: Vec<(String, Value)>,
}
