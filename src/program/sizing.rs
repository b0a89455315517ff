//! What a program's header carries beside the protocol's own fields and its size
//! ([`super::Size`]): the constructor options of `--param KEY=VALUE`, which travel on the
//! filter's kind ([`super::ProgramOptions`]), as `--key-form` does.

use serde_json::{Map, Value};

/// The header fields bloomlab writes itself, which `--param` may not set.
pub const PROTOCOL_FIELDS: [&str; 7] = ["protocol", "n", "seed", "key_form", "fpr", "m", "k"];

/// `KEY=VALUE` of `--param`: VALUE as JSON when it reads as JSON (`0.5`, `true`, `"x"`,
/// `[1,2]`), else as a string; KEY any name but the protocol's own fields.
pub fn parse_param(text: &str) -> Result<(String, Value), String> {
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

/// Adds a program's `--param` options to its header.
pub fn add_params(header: &mut Map<String, Value>, params: &[(String, Value)]) {
    for (key, value) in params {
        header.insert(key.clone(), value.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
}
