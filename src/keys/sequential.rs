//! `sequential`: the counter itself, 0, 1, 2, ... (database ids, row numbers).

use std::sync::Arc;

use super::{IntKeys, Registration, Source};

pub static SOURCE: Registration = Registration {
    name: "sequential",
    argument: None,
    help: "0, 1, 2, ... as u64",
    build: |_, _| Ok(Arc::new(Sequential)),
};

/// The key of counter c is c.
#[derive(Debug)]
struct Sequential;

impl Source for Sequential {
    fn spec(&self) -> String {
        SOURCE.name.to_string()
    }

    fn ints(&self, _seed: u64) -> Option<IntKeys> {
        Some(IntKeys::new(|c| c))
    }
}
