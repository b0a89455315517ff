//! What a command line tells a program behind `exec:` beside its size: how it hands each key
//! to its library (`--key-form`) and its constructor options (`--param KEY=VALUE`), as flags
//! and file keys ([`ProgramParams`]). They are part of the filter asked for, so they travel
//! on its [`crate::structures::FilterKind`] ([`crate::structures::FilterKind::with_program`])
//! from the flags to the program's header.

use clap::Args;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::Value;

use crate::error::{Error, Result};

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
    /// `--param KEY=VALUE`, added to the header in order (checked by [`parse_param`]).
    pub params: Vec<(String, Value)>,
}

/// The header fields bloomlab writes itself, which `--param` may not set.
pub const PROTOCOL_FIELDS: [&str; 7] = ["protocol", "n", "seed", "key_form", "fpr", "m", "k"];

/// `KEY=VALUE` of `--param`: VALUE as JSON when it reads as JSON (`0.5`, `true`, `"x"`,
/// `[1,2]`), else as a string; KEY any name but the protocol's own fields.
pub fn parse_param(text: &str) -> std::result::Result<(String, Value), String> {
    let Some((key, value)) = text.split_once('=') else {
        return Err(format!("{text:?} is not KEY=VALUE"));
    };
    if key.is_empty() || PROTOCOL_FIELDS.contains(&key) {
        return Err(format!(
            "{key:?} is not a name --param may set (any but empty and {})",
            PROTOCOL_FIELDS.join(", ")
        ));
    }
    let value = serde_json::from_str(value).unwrap_or_else(|_| Value::String(value.into()));
    Ok((key.to_string(), value))
}

/// `--key-form` and `--param`, for an experiment that may measure a program.
#[derive(Args, Clone, Debug, Default, PartialEq, Deserialize)]
pub struct ProgramParams {
    /// How an exec: program hands keys to its library: text, int or bytes (docs/PROTOCOL.md)
    /// [default text]
    #[arg(long)]
    pub key_form: Option<KeyForm>,
    /// An option for an exec: program's constructor, sent in its header (any KEY but the
    /// protocol's own fields; VALUE read as JSON, else as text); may be repeated. In a file:
    /// a list of "KEY=VALUE"
    #[arg(long = "param", value_name = "KEY=VALUE", value_parser = parse_param)]
    #[serde(default, deserialize_with = "params_from_file")]
    pub params: Vec<(String, Value)>,
}

impl ProgramParams {
    /// The key form, text unless asked.
    pub fn key_form(&self) -> KeyForm {
        self.key_form.unwrap_or_default()
    }

    /// Refuses options that would do nothing: any given when no filter of the run is a
    /// program (`any_program` false), and a `--param` key given twice.
    pub fn check(&self, any_program: bool) -> Result<()> {
        if !any_program {
            let given = match (self.key_form, self.params.first()) {
                (Some(form), _) => Some(("key_form", form.to_string())),
                (None, Some((key, value))) => Some(("param", format!("{key}={value}"))),
                (None, None) => None,
            };
            if let Some((flag, value)) = given {
                return Err(Error::invalid(
                    flag,
                    value,
                    "only a program behind exec: takes it, and no filter of this run is one",
                    "with --filter exec:COMMAND (or the adapters)",
                ));
            }
        }
        for (i, (key, _)) in self.params.iter().enumerate() {
            if self.params[..i].iter().any(|(earlier, _)| earlier == key) {
                return Err(Error::invalid(
                    "param",
                    key,
                    "is given twice: the program would see one value only",
                    "each KEY once",
                ));
            }
        }
        Ok(())
    }

    /// The options a program is started with ([`crate::structures::FilterKind::with_program`]).
    pub fn options(&self) -> ProgramOptions {
        ProgramOptions {
            key_form: self.key_form(),
            params: self.params.clone(),
        }
    }
}

/// `params = ["KEY=VALUE", ...]` in an experiment file, each checked as `--param` is.
fn params_from_file<'de, D: Deserializer<'de>>(
    deserializer: D,
) -> std::result::Result<Vec<(String, Value)>, D::Error> {
    let texts = Vec::<String>::deserialize(deserializer)?;
    texts
        .iter()
        .map(|text| parse_param(text).map_err(serde::de::Error::custom))
        .collect()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::structures::FilterKind;

    #[test]
    fn values_read_as_json_else_as_text() {
        assert_eq!(parse_param("scale=0.5"), Ok(("scale".into(), json!(0.5))));
        assert_eq!(parse_param("mode=fast"), Ok(("mode".into(), json!("fast"))));
        assert_eq!(parse_param("on=true"), Ok(("on".into(), json!(true))));
        assert_eq!(parse_param("eq=a=b"), Ok(("eq".into(), json!("a=b"))));
        assert!(parse_param("fpr=0.1").unwrap_err().contains("fpr"));
        assert!(parse_param("novalue").is_err());
        assert!(parse_param("=1").is_err());
    }

    #[test]
    fn a_file_names_its_options_as_the_flag_does() {
        let table: ProgramParams =
            toml::from_str("key_form = \"int\"\nparams = [\"scale=0.5\", \"mode=fast\"]").unwrap();
        assert_eq!(table.key_form(), KeyForm::Int);
        assert_eq!(
            table.params,
            vec![
                ("scale".to_string(), serde_json::json!(0.5)),
                ("mode".to_string(), serde_json::json!("fast")),
            ]
        );
        let refused = toml::from_str::<ProgramParams>("params = [\"fpr=0.5\"]");
        assert!(refused.unwrap_err().to_string().contains("fpr"));
    }

    #[test]
    fn the_options_travel_on_a_program_and_leave_a_structure_alone() {
        let flags = ProgramParams {
            key_form: Some(KeyForm::Bytes),
            params: vec![("scale".into(), serde_json::json!(2))],
        };
        let program = FilterKind::named("exec:true")
            .unwrap()
            .with_program(flags.options());
        assert_eq!(program.program().key_form, KeyForm::Bytes);
        assert_eq!(program.program().params, flags.params);
        let classic = FilterKind::default().with_program(flags.options());
        assert_eq!(classic.program(), ProgramOptions::default());
    }
}
