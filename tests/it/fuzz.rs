//! Brief property fuzzing of the experiment-file parser, a reader of untrusted text (the exec
//! reply reader's is a unit test of `program/reply.rs`). Bound: it does not panic on any
//! input tried, and answers within its contract (a definition or a typed error).

use std::path::Path;

use bloomlab::suite::Definition;
use proptest::prelude::*;

const KEYS: &[&str] = &[
    "command",
    "[params]",
    "n",
    "k",
    "m",
    "fpr",
    "queries",
    "bits_per_key",
    "seed",
    "loads",
    "filter",
    "hash",
    "keys",
    "description",
    "expect",
];

/// Experiment-file-like text: known keys with random values, and random bytes.
fn definition_text() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        prop::collection::vec((prop::sample::select(KEYS), "[ -~]{0,12}"), 0..8).prop_map(
            |lines| {
                let mut text = String::from("command = \"sweep-size\"\n[params]\n");
                for (key, value) in lines {
                    text.push_str(&format!("{key} = {value}\n"));
                }
                text.into_bytes()
            }
        ),
        prop::collection::vec(any::<u8>(), 0..200),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    #[test]
    fn the_definition_parser_never_panics(bytes in definition_text()) {
        let _ = Definition::from_bytes(Path::new("fuzz.toml"), &bytes);
    }
}
