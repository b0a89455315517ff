//! Brief property fuzzing of the two readers of untrusted text: the experiment-file parser
//! and the exec reply reader. Bound: neither panics on any input tried, and each answers
//! within its contract (a definition or a typed error; a line within its limit or an error).

use std::io::Cursor;
use std::path::Path;

use bloomlab::program::read_reply;
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

    #[test]
    fn the_reply_reader_keeps_within_its_limit(
        bytes in prop::collection::vec(prop_oneof![Just(b'\n'), Just(b'0'), any::<u8>()], 0..400),
        limit in 1usize..64,
    ) {
        let mut reader = Cursor::new(bytes.clone());
        let mut consumed = 0usize;
        loop {
            match read_reply(&mut reader, limit) {
                Ok(Some(line)) => {
                    prop_assert!(line.len() <= limit);
                    prop_assert!(!line.contains(&b'\n'));
                    consumed += line.len() + 1;
                }
                Ok(None) => {
                    prop_assert!(consumed >= bytes.len());
                    break;
                }
                Err(_) => {
                    // Only a line longer than the limit is refused.
                    let rest = &bytes[consumed.min(bytes.len())..];
                    let line = rest.split(|&b| b == b'\n').next().unwrap_or_default();
                    prop_assert!(line.len() > limit);
                    break;
                }
            }
        }
    }
}
