//! The inserts into a 512-bit block that every path shares: the probes set one word at a
//! time ([`set_octet`]), and the vector paths' entry ([`set512!`]); the inserts into a
//! 1024-bit block ([`set1024`]).

use crate::hash::Lanes;

/// Sets bits `bits[..live]` (indexes below 512) of a 512-bit block, one word at a time.
/// Every path inserts this way: faster than a mask assembled in vector registers and
/// written at once, on every path tried (docs/PERFORMANCE.md).
#[inline(always)]
pub(super) fn set_octet(block: &mut [u64], bits: &[u64; 8], live: usize) {
    let block = &mut block[..8];
    for (i, &bit) in bits.iter().enumerate() {
        if i < live {
            block[(bit >> 6) as usize & 7] |= 1 << (bit & 63);
        }
    }
}

/// Sets probes `0..k` of the key whose [`Lanes::key`] is `key` in a 1024-bit block, one
/// by one from the lanes' scalar index: every path inserts into a 1024-bit block this way.
#[inline(always)]
pub(super) fn set1024(lanes: &Lanes, k: usize, key: (u64, u64), block: &mut [u64]) {
    let block = &mut block[..16];
    for i in 0..k {
        let bit = lanes.index(i, key);
        block[(bit >> 6) as usize & 15] |= 1 << (bit & 63);
    }
}

/// A vector path's `set512_of(kernel, k, key, block)`, of the key's `Lanes::key`, compiled
/// with the path's features (`$attr`): the indexes in vector lanes, set one by one
/// ([`set_octet`]), lanes 0..8 in line and the rest (k > 8, rare) out of line, so that the
/// common case has no chunk loop.
/// The path's module defines `set_chunk(kernel, k, c, key, block)`, which sets the probes of
/// lanes `8c..8c + 8` (those below k).
macro_rules! set512 {
    ($(#[$attr:meta])*) => {
        #[inline(always)]
        unsafe fn set512_of(kernel: &Kernel, k: usize, key: (u64, u64), block: &mut [u64]) {
            // SAFETY: the caller is compiled with the path's features.
            unsafe { set_chunk(kernel, k, 0, key, block) };
            if k > 8 {
                // SAFETY: compiled with the same features as this caller.
                unsafe { set512_beyond(kernel, k, key, block) }
            }
        }

        /// Lanes 8 and beyond of [`set512_of`].
        $(#[$attr])*
        #[inline(never)]
        fn set512_beyond(kernel: &Kernel, k: usize, key: (u64, u64), block: &mut [u64]) {
            // SAFETY: compiled with the path's features.
            (1..k.div_ceil(8)).for_each(|c| unsafe { set_chunk(kernel, k, c, key, block) })
        }
    };
}
