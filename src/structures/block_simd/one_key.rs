//! One key's entries of a [`Kernel`], chosen once by path, design and hashing (and k, for
//! 512-bit inserts), so that a call jumps straight to code with no branch on any of them.

use super::{Blocks, Design, Kernel, scalar};
#[cfg(target_arch = "x86_64")]
use super::{avx2, avx512};
use crate::hash::Simd;

/// [`Kernel`]'s `test_one`: whether every probe of the key is set.
type TestOne = unsafe fn(&Kernel, &Blocks, u64) -> bool;
/// [`Kernel`]'s `set_one`: sets every probe of the key.
type SetOne = unsafe fn(&Kernel, &mut Blocks, u64);

/// The one-key entries of `design` on `simd`; 512-bit inserts stepped if `stepped`
/// ([`super::set512_stepped`]), each specialised to double hashing's lanes if `pairs`
/// ([`crate::hash::Lanes::key_of`]).
pub(super) fn one_key_entries(
    simd: Simd,
    design: Design,
    stepped: bool,
    pairs: bool,
    k: usize,
) -> (TestOne, SetOne) {
    match design {
        Design::Blocked512 if pairs => blocked::<true>(simd, stepped, k),
        Design::Blocked512 => blocked::<false>(simd, stepped, k),
        Design::Blocked1024 if pairs => blocked1024::<true>(simd),
        Design::Blocked1024 => blocked1024::<false>(simd),
        Design::Split256 if pairs => split::<true>(simd),
        Design::Split256 => split::<false>(simd),
    }
}

/// The 512-bit entries on `simd` for lanes of double hashing (`PAIR`) or multiply-shift,
/// inserts stepped if `stepped` and specialised to k up to 8.
fn blocked<const PAIR: bool>(simd: Simd, stepped: bool, k: usize) -> (TestOne, SetOne) {
    let test: TestOne = match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => avx512::test_one512::<PAIR>,
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => avx2::test_one512::<PAIR>,
        _ => scalar::test_one512::<PAIR>,
    };
    let set = match k {
        1 => set512::<PAIR, 1>(simd, stepped),
        2 => set512::<PAIR, 2>(simd, stepped),
        3 => set512::<PAIR, 3>(simd, stepped),
        4 => set512::<PAIR, 4>(simd, stepped),
        5 => set512::<PAIR, 5>(simd, stepped),
        6 => set512::<PAIR, 6>(simd, stepped),
        7 => set512::<PAIR, 7>(simd, stepped),
        8 => set512::<PAIR, 8>(simd, stepped),
        _ => set512::<PAIR, 0>(simd, stepped),
    };
    (test, set)
}

/// The 512-bit insert on `simd` for k = `K` (any k if 0).
fn set512<const PAIR: bool, const K: usize>(simd: Simd, stepped: bool) -> SetOne {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 if stepped => avx512::set_one512::<true, PAIR, K>,
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => avx512::set_one512::<false, PAIR, K>,
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 if stepped => avx2::set_one512::<true, PAIR, K>,
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => avx2::set_one512::<false, PAIR, K>,
        _ => scalar::set_one512::<false, PAIR, K>,
    }
}

/// The 1024-bit entries on `simd` for lanes of double hashing (`PAIR`) or multiply-shift.
fn blocked1024<const PAIR: bool>(simd: Simd) -> (TestOne, SetOne) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => (avx512::test_one1024::<PAIR>, avx512::set_one1024::<PAIR>),
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => (avx2::test_one1024::<PAIR>, avx2::set_one1024::<PAIR>),
        _ => (scalar::test_one1024::<PAIR>, scalar::set_one1024::<PAIR>),
    }
}

/// The split-block entries on `simd` for lanes of double hashing (`PAIR`) or multiply-shift.
fn split<const PAIR: bool>(simd: Simd) -> (TestOne, SetOne) {
    match simd {
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => (avx512::test_one256::<PAIR>, avx512::set_one256::<PAIR>),
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => (avx2::test_one256::<PAIR>, avx2::set_one256::<PAIR>),
        _ => (scalar::test_one256::<PAIR>, scalar::set_one256::<PAIR>),
    }
}

impl Kernel {
    /// [`Kernel::block`] for one key, with no bounds check on the pick but a test of the
    /// block count that does not wait for it: for any 64-bit h and n ≥ 1 blocks the pick
    /// `(h · n) >> 64` is below n. A filter's blocks are never empty ([`Blocks`]); empty
    /// ones panic, as the bounds check did.
    #[inline(always)]
    pub(super) fn block_one<'a, const W: usize>(&self, words: &'a [u64], key: u64) -> &'a [u64; W] {
        let blocks = words.as_chunks::<W>().0;
        let at = self.pick(key, nonzero(blocks.len()));
        // SAFETY: `at < blocks.len()`, as above.
        unsafe { blocks.get_unchecked(at) }
    }

    /// [`Kernel::block_one`], to set bits in.
    #[inline(always)]
    pub(super) fn block_one_mut<'a, const W: usize>(
        &self,
        words: &'a mut [u64],
        key: u64,
    ) -> &'a mut [u64; W] {
        let blocks = words.as_chunks_mut::<W>().0;
        let at = self.pick(key, nonzero(blocks.len()));
        // SAFETY: as above.
        unsafe { blocks.get_unchecked_mut(at) }
    }
}

/// `n`, which must be at least 1.
#[inline(always)]
fn nonzero(n: usize) -> usize {
    if n == 0 {
        no_blocks()
    }
    n
}

#[cold]
#[inline(never)]
fn no_blocks() -> ! {
    panic!("a filter with no whole block")
}
