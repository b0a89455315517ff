//! Bit-array storage: zeroed u64 words starting on a 64-byte cache line, so that a 512-bit
//! block is exactly one line; arrays of [`HUGE_PAGE_BYTES`] and more are advised onto huge
//! pages. And the prefetch hint of the batched paths.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ops::{Deref, DerefMut};
use std::ptr::NonNull;

use crate::error::{Error, Result};

/// Bytes in a cache line: the alignment of every [`Words`].
pub const LINE_BYTES: usize = 64;
/// u64 words in a cache line.
pub const LINE_WORDS: usize = LINE_BYTES / 8;
/// Arrays at least this large are advised onto huge pages (`madvise(MADV_HUGEPAGE)`, Linux;
/// a refusal is ignored): one TLB entry then covers 2 MiB rather than 4 KiB.
pub const HUGE_PAGE_BYTES: usize = 1 << 30;

/// `len` zeroed u64 words whose first word starts a cache line.
///
/// Invariant: `ptr` points `offset` bytes into an allocation of `layout`, `ptr` is 64-byte
/// aligned, and `len` words from it lie inside the allocation.
pub struct Words {
    ptr: NonNull<u64>,
    len: usize,
    base: NonNull<u8>,
    layout: Layout,
}

// SAFETY: `Words` owns its allocation like a `Vec<u64>`.
unsafe impl Send for Words {}
// SAFETY: shared access only reads.
unsafe impl Sync for Words {}

impl Words {
    /// `ceil(bits / 64)` zeroed words, or an error (not an abort) when they cannot be
    /// allocated. The allocation is a zeroed one (fresh pages for large arrays, touched only
    /// when written), one line longer than needed so that the words can start on a line.
    pub fn zeroed(bits: u64) -> Result<Self> {
        let len = bits.div_ceil(64) as usize;
        let refuse = || {
            Error::invalid(
                "m",
                bits,
                format!("cannot allocate {} bytes", len.saturating_mul(8)),
                "a bit array that fits in memory",
            )
        };
        let size = len
            .checked_mul(8)
            .and_then(|bytes| bytes.checked_add(LINE_BYTES))
            .ok_or_else(refuse)?;
        let layout = Layout::from_size_align(size, 8).map_err(|_| refuse())?;
        // SAFETY: the layout has a non-zero size.
        let base = NonNull::new(unsafe { alloc_zeroed(layout) }).ok_or_else(refuse)?;
        let offset = base.as_ptr().align_offset(LINE_BYTES);
        // SAFETY: `offset < LINE_BYTES`, so the words lie inside the allocation.
        let ptr = unsafe { base.add(offset) }.cast::<u64>();
        let words = Words {
            ptr,
            len,
            base,
            layout,
        };
        if len * 8 >= HUGE_PAGE_BYTES {
            words.advise_huge_pages();
        }
        Ok(words)
    }

    /// Asks the kernel to back the whole pages of the array with huge pages.
    fn advise_huge_pages(&self) {
        #[cfg(target_os = "linux")]
        {
            const PAGE: usize = 4096;
            let start = self.ptr.as_ptr() as usize;
            let aligned = start.next_multiple_of(PAGE);
            let end = (start + self.len * 8) / PAGE * PAGE;
            if end > aligned {
                // SAFETY: the range lies inside this allocation; the advice changes no
                // contents. Its result is ignored: huge pages are an optimisation.
                unsafe {
                    libc::madvise(
                        aligned as *mut libc::c_void,
                        end - aligned,
                        libc::MADV_HUGEPAGE,
                    )
                };
            }
        }
    }
}

impl Drop for Words {
    fn drop(&mut self) {
        // SAFETY: `base` was allocated with `layout` and is freed once.
        unsafe { dealloc(self.base.as_ptr(), self.layout) }
    }
}

impl Deref for Words {
    type Target = [u64];
    fn deref(&self) -> &[u64] {
        // SAFETY: `len` initialised (zeroed) words from `ptr` lie inside the allocation.
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
}

impl DerefMut for Words {
    fn deref_mut(&mut self) -> &mut [u64] {
        // SAFETY: as for `deref`, and `&mut self` makes the access exclusive.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl std::fmt::Debug for Words {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Words({} words)", self.len)
    }
}

/// Arrays smaller than this (the L2 cache here) are served from cache: the batched paths
/// skip prefetching them.
pub const PREFETCH_BYTES: usize = 1 << 20;

/// Whether prefetching the probe lines of `words` can hide misses ([`PREFETCH_BYTES`]).
#[inline]
pub fn prefetch_pays(words: &[u64]) -> bool {
    words.len() * 8 >= PREFETCH_BYTES
}

/// Hints the CPU to bring the line holding `word` into cache; no effect off x86-64. A batch
/// issues one per probe line before testing any, so that the misses overlap.
#[inline(always)]
pub fn prefetch(word: &u64) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch never faults, and `word` is a valid reference anyway.
    unsafe {
        use std::arch::x86_64::{_MM_HINT_T0, _mm_prefetch};
        _mm_prefetch::<_MM_HINT_T0>((word as *const u64).cast::<i8>())
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = word;
}
