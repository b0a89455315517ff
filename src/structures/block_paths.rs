//! The vector path of a filter over [`super::blocks::Blocks`]: choosing its kernel's path,
//! and the accessors the blocked and split-block filters share. Apart from `blocks.rs`, which
//! the kernels themselves import, so that the two do not import each other.

use super::block_simd::Kernel;
use crate::error::{Error, Result};
use crate::hash::Simd;

/// `kernel` on path `simd`, or why not.
pub(super) fn on_path(kernel: Option<&Kernel>, simd: Simd) -> Result<Kernel> {
    let kernel = kernel.ok_or_else(|| {
        Error::invalid(
            "simd",
            simd,
            "no vector kernel for this hash or block",
            "a blocked (512 or 1024 bits) or a split-block filter on multiply-shift or double-hashing",
        )
    })?;
    kernel.on(simd).ok_or_else(|| {
        let available: Vec<&str> = Simd::available().iter().map(|s| s.name()).collect();
        Error::invalid("simd", simd, "this CPU lacks it", available.join(", "))
    })
}

/// The accessors every filter over [`Blocks`] with an optional vector [`Kernel`] (fields
/// `blocks` and `kernel`) carries: its path, the same filter on another path, its words.
macro_rules! vector_paths {
    ($filter:ty) => {
        impl $filter {
            /// The same filter computing its probes on another vector path; refused when
            /// this CPU lacks it or the filter has no kernel (a byte hash, or a block size
            /// without one).
            pub fn on(mut self, simd: $crate::hash::Simd) -> $crate::error::Result<Self> {
                self.kernel = Some(super::block_paths::on_path(self.kernel.as_ref(), simd)?);
                Ok(self)
            }

            /// The filter on `simd` ([`crate::structures::Filter::take_path`]) where it has a kernel and this
            /// CPU runs the path; else unchanged.
            fn set_path(&mut self, simd: $crate::hash::Simd) {
                if let Some(kernel) = self.kernel.as_ref().and_then(|k| k.on(simd)) {
                    self.kernel = Some(kernel);
                }
            }

            /// The vector path of the probes, if the filter has a kernel.
            pub fn simd(&self) -> Option<$crate::hash::Simd> {
                self.kernel.as_ref().map(super::block_simd::Kernel::simd)
            }

            /// The bit array, block after block.
            pub fn words(&self) -> &[u64] {
                &self.blocks.words
            }
        }
    };
}
pub(super) use vector_paths;
