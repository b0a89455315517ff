//! What the static structures (Ribbon, binary fuse and xor, the perfect-hash table, the
//! ribbon-filter crate) share behind the one-key-at-a-time interface: inserts collect the
//! keys, and the first query after an insert builds the table from all of them. The key list is the construction's
//! input, not part of the filter a user would keep, so no memory figure counts it.

use std::sync::OnceLock;

/// The keys inserted so far, and the table built from them on first use after an insert.
pub struct StaticKeys<T> {
    keys: Vec<u64>,
    built: OnceLock<T>,
}

impl<T> Default for StaticKeys<T> {
    fn default() -> Self {
        StaticKeys {
            keys: Vec::new(),
            built: OnceLock::new(),
        }
    }
}

impl<T> StaticKeys<T> {
    /// Adds a key; the next [`StaticKeys::built`] builds again.
    pub fn insert(&mut self, key: u64) {
        self.keys.push(key);
        self.built = OnceLock::new();
    }

    /// Adds keys; the next [`StaticKeys::built`] builds again.
    pub fn insert_many(&mut self, keys: &[u64]) {
        self.keys.extend_from_slice(keys);
        self.built = OnceLock::new();
    }

    /// The table of the keys as inserted (repeats included), built by `build` once.
    pub fn built(&self, build: impl FnOnce(&[u64]) -> T) -> &T {
        self.built.get_or_init(|| build(&self.keys))
    }

    /// The table of the distinct keys, in ascending order, built by `build` once: for a
    /// construction that fails on a repeated key.
    pub fn built_distinct(&self, build: impl FnOnce(&[u64]) -> T) -> &T {
        self.built.get_or_init(|| {
            let mut keys = self.keys.clone();
            keys.sort_unstable();
            keys.dedup();
            build(&keys)
        })
    }
}
