//! Hash families: k index functions from a u64 key to a bit position in `[0, m)`.

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;
use serde::{Deserialize, Serialize};

mod applied;
mod index;
mod lanes;
pub(crate) mod vector;

pub use applied::AppliedHash;
pub use index::{INDEX_BITS, IndexMath, Probes, Reduce, Reducer, addressable_bits};
pub use lanes::{AffineLanes, LIMB_LANES, Lanes, Limbs, Simd};

/// A hash of bytes with a 64-bit seed, as a shipped library applies it to a key. An integer
/// key is hashed as its 8 little-endian bytes.
pub trait ByteHash {
    /// The `--hash` name of the family.
    const NAME: &'static str;
    /// The probe scheme and reduction of the libraries that ship the hash (the index
    /// arithmetic its users meet, [`HashScheme::default_math`]).
    const MATH: (Probes, Reduce);
    /// The 64-bit hash of `bytes` under `seed`.
    fn hash(seed: u64, bytes: &[u8]) -> u64;
    /// The pair `(a, b)` double hashing starts from: by default both from one 64-bit hash
    /// h, `(h, h rotated by 32)`, so that with a 32-bit index `g_i = lo(h) + i·hi(h)` as in
    /// Guava's `MURMUR128_MITZ_32`.
    #[inline(always)]
    fn pair(seed: u64, bytes: &[u8]) -> (u64, u64) {
        let h = Self::hash(seed, bytes);
        (h, h.rotate_left(32))
    }
}

/// Declares each shipped library's hash, `src/hash/MODULE.rs` holding the [`ByteHash`] type
/// `Variant`, and makes it a [`HashScheme`]: one line per family. bloomlab's own three
/// schemes (affine, taking the u64 itself) come first.
macro_rules! byte_hashes {
    ($($(#[$doc:meta])* $variant:ident = $module:ident;)*) => {
        $(pub mod $module;)*

        /// Which family of index functions a filter uses: bloomlab's own (the first three) or
        /// the hash of a shipped library (the rest, one file each in this folder).
        #[derive(
            Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
        )]
        #[serde(rename_all = "kebab-case")]
        pub enum HashScheme {
            /// `h_i = a_i·x + b_i` (wrapping, `a_i` odd), index `= (h_i · m) >> 64`: the high
            /// bits of the product, uniform for any m.
            #[default]
            MultiplyShift,
            /// `h_i = a_i·x + b_i`, index `= h_i mod m`. Deliberately flawed: with a
            /// power-of-two m the index depends only on the low bits of the key, so the k
            /// probes are correlated.
            LowBits,
            /// Kirsch–Mitzenmacher double hashing: `g_i = h_0 + i·h_1` (h_1 forced odd), index
            /// by the high bits of `g_i · m`. Two multiplications per key instead of k.
            DoubleHashing,
            $($(#[$doc])* $variant,)*
        }

        impl HashScheme {
            /// Every scheme, by its command-line name.
            pub const ALL: [HashScheme; 3 + [$(stringify!($variant)),*].len()] = [
                HashScheme::MultiplyShift,
                HashScheme::LowBits,
                HashScheme::DoubleHashing,
                $(HashScheme::$variant,)*
            ];

            /// The command-line and file name of the scheme.
            pub fn name(self) -> &'static str {
                match self {
                    HashScheme::MultiplyShift => "multiply-shift",
                    HashScheme::LowBits => "low-bits",
                    HashScheme::DoubleHashing => "double-hashing",
                    $(HashScheme::$variant => <$module::$variant as ByteHash>::NAME,)*
                }
            }

            /// The index arithmetic the family's users meet, 64 bits wide: bloomlab's own
            /// schemes' as named; a shipped library's as the libraries that ship it use it
            /// ([`ByteHash::MATH`]).
            pub fn default_math(self) -> IndexMath {
                let (probes, reduce) = match self {
                    HashScheme::MultiplyShift => (Probes::Independent, Reduce::MultiplyHigh),
                    HashScheme::LowBits => (Probes::Independent, Reduce::Modulo),
                    HashScheme::DoubleHashing => (Probes::Double, Reduce::MultiplyHigh),
                    $(HashScheme::$variant => <$module::$variant as ByteHash>::MATH,)*
                };
                IndexMath {
                    probes,
                    reduce,
                    index_bits: 64,
                }
            }
        }

        impl HashFamily {
            /// [`HashFamily::general`] for this family's hash, chosen per call: the one index
            /// function of every family and arithmetic but bloomlab's own schemes' loops.
            #[inline(never)]
            pub fn general_any(&self, i: usize, x: u64) -> u64 {
                match self.scheme {
                    HashScheme::MultiplyShift | HashScheme::LowBits | HashScheme::DoubleHashing => {
                        self.general::<Affine>(i, x)
                    }
                    $(HashScheme::$variant => self.general::<$module::$variant>(i, x),)*
                }
            }

            /// Calls `each` with the k indexes of a byte key, hashing it once for the double
            /// schemes. A family that takes integers hashes the bytes' pre-hash ([`prehash`]).
            #[inline]
            pub fn for_each_index_bytes(&self, k: u32, bytes: &[u8], each: impl FnMut(u64)) {
                match self.scheme {
                    HashScheme::MultiplyShift | HashScheme::LowBits | HashScheme::DoubleHashing => {
                        self.indexes_bytes::<Affine>(k, bytes, each)
                    }
                    $(HashScheme::$variant => self.indexes_bytes::<$module::$variant>(k, bytes, each),)*
                }
            }
        }
    };
}

byte_hashes! {
    /// SipHash-1-3 ([`siphash`]), Rust's `DefaultHasher`.
    Siphash = siphash;
    /// XXH3-64 ([`xxh3`]).
    Xxh3 = xxh3;
    /// FNV-1a 64 ([`fnv1a`]).
    Fnv1a = fnv1a;
    /// MurmurHash3 x64-128 ([`murmur3`]).
    Murmur3 = murmur3;
    /// foldhash ([`foldhash`]), hashbrown's default.
    Foldhash = foldhash;
    /// rapidhash V3 ([`rapidhash`]).
    Rapidhash = rapidhash;
}

impl HashScheme {
    /// Whether the family hashes bytes (a shipped library's hash) rather than taking the u64.
    pub fn hashes_bytes(self) -> bool {
        !matches!(
            self,
            HashScheme::MultiplyShift | HashScheme::LowBits | HashScheme::DoubleHashing
        )
    }

    /// The `--hash` help: every family by name.
    pub fn help() -> String {
        let shipped: Vec<&str> = Self::ALL
            .iter()
            .filter(|s| s.hashes_bytes())
            .map(|s| s.name())
            .collect();
        format!(
            "Hash family: multiply-shift (default), low-bits (flawed), double-hashing, or a shipped library's: {}",
            shipped.join(", ")
        )
    }
}

named_enum!(HashScheme, "hash");

/// bloomlab's affine family as a [`KeyHash`]: it takes the u64 directly, and a byte key
/// through its XXH3-64 pre-hash (seed 0), [`prehash`].
pub struct Affine;

/// The u64 a byte key becomes for a hash that takes integers: `xxh3_64(bytes)`, seed 0.
#[inline]
pub fn prehash(bytes: &[u8]) -> u64 {
    xxhash_rust::xxh3::xxh3_64(bytes)
}

/// `splitmix64` (Steele, Lea and Flood 2014): a bijective mix of 64 bits.
#[inline(always)]
pub fn splitmix64(mut x: u64) -> u64 {
    x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    x = (x ^ (x >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    x ^ (x >> 31)
}

/// The 64-bit values a family draws for a key, `j` numbering the seeded functions.
pub trait KeyHash {
    fn of_u64(family: &HashFamily, j: usize, x: u64) -> u64;
    fn of_bytes(family: &HashFamily, j: usize, bytes: &[u8]) -> u64;
    /// The pair double hashing starts from, `b` not yet forced odd.
    fn pair_u64(family: &HashFamily, x: u64) -> (u64, u64);
    fn pair_bytes(family: &HashFamily, bytes: &[u8]) -> (u64, u64);
}

impl KeyHash for Affine {
    #[inline(always)]
    fn of_u64(family: &HashFamily, j: usize, x: u64) -> u64 {
        family.affine(j, x)
    }
    #[inline(always)]
    fn of_bytes(family: &HashFamily, j: usize, bytes: &[u8]) -> u64 {
        family.affine(j, prehash(bytes))
    }
    /// `(h_0(x), h_1(x))`, as [`HashScheme::DoubleHashing`] has always drawn it.
    #[inline(always)]
    fn pair_u64(family: &HashFamily, x: u64) -> (u64, u64) {
        (family.affine(0, x), family.affine(1, x))
    }
    #[inline(always)]
    fn pair_bytes(family: &HashFamily, bytes: &[u8]) -> (u64, u64) {
        Self::pair_u64(family, prehash(bytes))
    }
}

impl<H: ByteHash> KeyHash for H {
    #[inline(always)]
    fn of_u64(family: &HashFamily, j: usize, x: u64) -> u64 {
        H::hash(family.multiplier(j), &x.to_le_bytes())
    }
    #[inline(always)]
    fn of_bytes(family: &HashFamily, j: usize, bytes: &[u8]) -> u64 {
        H::hash(family.multiplier(j), bytes)
    }
    #[inline(always)]
    fn pair_u64(family: &HashFamily, x: u64) -> (u64, u64) {
        H::pair(family.multiplier(0), &x.to_le_bytes())
    }
    #[inline(always)]
    fn pair_bytes(family: &HashFamily, bytes: &[u8]) -> (u64, u64) {
        H::pair(family.multiplier(0), bytes)
    }
}

/// Largest number of hash functions accepted (every shape is checked against it).
pub const MAX_K: u32 = 64;

/// Slots in a family's table of parameters: [`MAX_K`], a power of two.
const SLOTS: usize = MAX_K as usize;
const _: () = assert!(SLOTS.is_power_of_two());

/// k seeded index functions over `[0, m)`.
///
/// Invariant: `index(i, x) < m` for every `i < k` and every `x` (below `min(m, 2^W)`, W the
/// index width); the parameters are a pure function of `(scheme, math, k, m, seed)`.
#[derive(Clone, Debug)]
pub struct HashFamily {
    scheme: HashScheme,
    m: u64,
    /// `[a_i, b_i]` in slot i < max(k, 2), zero beyond. A fixed table indexed by
    /// `i mod SLOTS` needs no bounds check in the probe loops, and keeps `a_i` and `b_i`
    /// on one line.
    params: [[u64; 2]; SLOTS],
    math: IndexMath,
    reducer: Reducer,
    path: IndexPath,
    /// `64 - log2(m)` when m is a power of two of at least 2, for the shift paths.
    shift: u32,
}

/// `(h · m) >> 64`: maps a uniform u64 to a uniform index in `[0, m)`.
#[inline]
fn high_bits(h: u64, m: u64) -> u64 {
    ((h as u128 * m as u128) >> 64) as u64
}

/// Which code computes the indexes: a loop of its own for each of bloomlab's schemes with its
/// own arithmetic (five: multiply-shift and double hashing each with a power-of-two variant,
/// and low-bits), or the general one. When m is a power
/// of two, `(h · m) >> 64` is exactly `h >> (64 - log2 m)`, and multiply-shift and double
/// hashing take a shift instead of a multiplication (the same indexes, one multiplier use
/// less per probe: a blocked filter's in-block probes are such).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum IndexPath {
    MultiplyShift,
    MultiplyShiftPow2,
    LowBits,
    DoubleHashing,
    DoubleHashingPow2,
    General,
}

impl HashFamily {
    /// Draws k odd multipliers `a_i` and k offsets `b_i` from `Pcg64::seed_from_u64(seed)`
    /// (the byte hashes take `a_j` as the seed of function j), with the scheme's own index
    /// arithmetic ([`HashScheme::default_math`]).
    pub fn new(scheme: HashScheme, k: u32, m: u64, seed: u64) -> Self {
        Self::with_math(scheme, scheme.default_math(), k, m, seed)
    }

    /// [`HashFamily::new`] with another index arithmetic.
    ///
    /// Panics when k exceeds [`MAX_K`], which every shape is checked against.
    pub fn with_math(scheme: HashScheme, math: IndexMath, k: u32, m: u64, seed: u64) -> Self {
        assert!(
            k as usize <= SLOTS,
            "k = {k} exceeds {SLOTS} hash functions"
        );
        let mut rng = Pcg64::seed_from_u64(seed);
        let mut params = [[0u64; 2]; SLOTS];
        for slot in &mut params[..k.max(2) as usize] {
            *slot = [rng.next_u64() | 1, rng.next_u64()];
        }
        HashFamily {
            scheme,
            m,
            params,
            math,
            reducer: Reducer::new(math.reduce, m, math.index_bits),
            path: Self::path_of(scheme, math, m),
            shift: 64 - m.max(1).trailing_zeros(),
        }
    }

    pub fn scheme(&self) -> HashScheme {
        self.scheme
    }

    pub fn math(&self) -> IndexMath {
        self.math
    }

    /// How many bit positions the indexes can reach, `min(m, 2^W)`.
    pub fn addressable_bits(&self) -> u64 {
        self.reducer.addressable()
    }

    /// Which code computes the indexes, fixed at construction.
    #[inline(always)]
    pub fn path(&self) -> IndexPath {
        self.path
    }

    /// The original loop when the scheme runs with its own arithmetic, else the general one.
    fn path_of(scheme: HashScheme, math: IndexMath, m: u64) -> IndexPath {
        if math != scheme.default_math() {
            return IndexPath::General;
        }
        let power_of_two = m >= 2 && m.is_power_of_two();
        match (scheme, power_of_two) {
            (HashScheme::MultiplyShift, false) => IndexPath::MultiplyShift,
            (HashScheme::MultiplyShift, true) => IndexPath::MultiplyShiftPow2,
            (HashScheme::LowBits, _) => IndexPath::LowBits,
            (HashScheme::DoubleHashing, false) => IndexPath::DoubleHashing,
            (HashScheme::DoubleHashing, true) => IndexPath::DoubleHashingPow2,
            _ => IndexPath::General,
        }
    }

    /// Index of key `x` under hash function `i`.
    #[inline]
    pub fn index(&self, i: usize, x: u64) -> u64 {
        with_index!(self, index => index(self, i, x))
    }

    /// `a_i`, the multiplier of function i (a byte hash's seed).
    #[inline(always)]
    fn multiplier(&self, i: usize) -> u64 {
        self.params[i % SLOTS][0]
    }

    #[inline(always)]
    fn affine(&self, i: usize, x: u64) -> u64 {
        let [a, b] = self.params[i % SLOTS];
        a.wrapping_mul(x).wrapping_add(b)
    }

    /// `(a_i·x + b_i) · m >> 64`.
    #[inline(always)]
    pub fn multiply_shift(&self, i: usize, x: u64) -> u64 {
        high_bits(self.affine(i, x), self.m)
    }

    /// [`HashFamily::multiply_shift`] for m a power of two: `(a_i·x + b_i) >> (64 - log2 m)`.
    #[inline(always)]
    pub fn multiply_shift_pow2(&self, i: usize, x: u64) -> u64 {
        self.affine(i, x) >> self.shift
    }

    /// `(a_i·x + b_i) mod m`.
    #[inline(always)]
    pub fn low_bits(&self, i: usize, x: u64) -> u64 {
        self.affine(i, x) % self.m
    }

    /// Double hashing's probe value `g_i = h_0 + i·h_1` (wrapping), `h_j = a_j·x + b_j`,
    /// `h_1` forced odd.
    #[inline(always)]
    fn double_hash(&self, i: usize, x: u64) -> u64 {
        let h0 = self.affine(0, x);
        let h1 = self.affine(1, x) | 1;
        h0.wrapping_add((i as u64).wrapping_mul(h1))
    }

    /// `(h_0 + i·h_1) · m >> 64`, `h_1` forced odd.
    #[inline(always)]
    pub fn double_hashing(&self, i: usize, x: u64) -> u64 {
        high_bits(self.double_hash(i, x), self.m)
    }

    /// [`HashFamily::double_hashing`] for m a power of two: `(h_0 + i·h_1) >> (64 - log2 m)`.
    #[inline(always)]
    pub fn double_hashing_pow2(&self, i: usize, x: u64) -> u64 {
        self.double_hash(i, x) >> self.shift
    }

    /// Any family with any arithmetic: probe value `g_i` by the probe scheme, then reduced
    /// in W bits ([`Reducer::index`]).
    #[inline(always)]
    pub fn general<H: KeyHash>(&self, i: usize, x: u64) -> u64 {
        let g = match self.math.probes {
            Probes::Independent => H::of_u64(self, i, x),
            probes => {
                let (a, b) = H::pair_u64(self, x);
                probes.from_pair(i as u64, a, b | 1)
            }
        };
        self.reducer.index(g)
    }

    #[inline(always)]
    fn indexes_bytes<H: KeyHash>(&self, k: u32, bytes: &[u8], mut each: impl FnMut(u64)) {
        match self.math.probes {
            Probes::Independent => {
                (0..k as usize).for_each(|i| each(self.reducer.index(H::of_bytes(self, i, bytes))))
            }
            probes => {
                let (a, b) = H::pair_bytes(self, bytes);
                (0..k as u64).for_each(|i| each(self.reducer.index(probes.from_pair(i, a, b | 1))))
            }
        }
    }
}

/// Evaluates `$body` with `$index` bound to `$family`'s index function
/// (`fn(&HashFamily, usize, u64) -> u64`), chosen once: each of bloomlab's own schemes'
/// paths ([`IndexPath`]) is compiled for its scheme, with no per-probe dispatch; every other
/// family and arithmetic shares one arm, whose index function ([`HashFamily::general_any`])
/// is kept out of line so that the other loops stay small.
macro_rules! with_index {
    ($family:expr, $index:ident => $body:expr) => {
        $crate::hash::with_index!(@paths $family, $index => $body;
            MultiplyShift: multiply_shift, MultiplyShiftPow2: multiply_shift_pow2,
            LowBits: low_bits, DoubleHashingPow2: double_hashing_pow2,
            DoubleHashing: double_hashing, General: general_any)
    };
    (@paths $family:expr, $index:ident => $body:expr; $($path:ident: $function:ident),*) => {
        match $family.path() {
            $($crate::hash::IndexPath::$path => {
                let $index = $crate::hash::HashFamily::$function;
                $body
            })*
        }
    };
}
pub(crate) use with_index;
