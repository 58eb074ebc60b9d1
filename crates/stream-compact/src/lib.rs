//! Parallel primitives on the CPU (rayon) and the GPU (WGSL through wgpu), bit-exact with
//! each other for integers:
//!
//! - [`Scan`]: exclusive and inclusive prefix scans of `u32` and `f32`, a single GPU pass
//!   with decoupled look-back and fallback, or reduce-then-scan for large inputs;
//! - [`Compact`]: stable stream compaction by flag or predicate, to values or indices, in
//!   one GPU pass, or for large inputs in two around a scan of the tiles' counts (the first
//!   leaves one keep bit per element for the second); [`HistoPyramid`]: the same by the
//!   density paper's histogram pyramid;
//! - [`RadixSort`] and [`RadixSortPairs`]: stable LSD radix sort of `u32` and `u64` keys,
//!   keys only or with `u32` values, on the GPU by several kernels per digit or in one
//!   sweep per digit ([`SortMethod`]);
//! - [`twin`]: a CPU twin of every GPU stage. Each pipeline is written once and runs
//!   recorded for the GPU or stage by stage with any stage on the CPU, to find a wrong one.
//!
//! Every operation accepts any length up to the device's buffer limit: inputs longer than
//! one storage binding are processed in binding-sized pieces.
//!
//! ```
//! use lumbre_compact::{Scan, ScanKind};
//! use lumbre_gpu::{Backend, Compute};
//! let out = Scan::<u32>::new(ScanKind::Exclusive).run(&Backend::Cpu, &[3, 1, 4]).unwrap();
//! assert_eq!(out, vec![0, 3, 4]);
//! ```

#![cfg_attr(docsrs, feature(doc_cfg))]

mod compact;
#[cfg(feature = "gpu")]
mod gpu;
mod hpyramid;
mod pieces;
mod scan;
mod sort;

pub use compact::{COMPACT_TILE, COMPACT_TWO_PASS_MIN, Compact, Emit, Predicate, Select, Stream, compact_cpu};
#[cfg(feature = "gpu")]
pub use gpu::compact::{GpuCompacted, GpuStream};
#[cfg(feature = "gpu")]
pub use gpu::scan::{ScanScratch, record_scan, record_scan_with};
#[cfg(feature = "gpu")]
pub use gpu::sort::{record_sort, record_sort_bits, record_sort_stages, record_sort_with};
pub use hpyramid::HistoPyramid;
pub use scan::{Lookback, REDUCE_THEN_SCAN_MIN, SCAN_TILE, Scan, ScanElem, ScanKind, ScanMethod, scan_cpu};
pub use sort::{RadixSort, RadixSortPairs, SORT_TILE, SWEEP_TILE, SortKey, SortMethod, radix_sort_cpu};

/// CPU twins of the GPU stages, one module per stage: a function per WGSL entry point, named
/// like it, and the `*Params` structs that mirror the kernels' uniforms. A twin computes
/// what one dispatch computes, integers bit for bit. Every pipeline gives each dispatch its
/// twin ([`Scan::record_stages`], [`Compact::record_stages`], [`record_sort_stages`],
/// [`HistoPyramid::record_stages`]), so that, run on [`lumbre_gpu::stages::Stages`], any
/// stage can run on the CPU.
///
/// ```
/// use lumbre_compact::{Scan, ScanKind};
/// use lumbre_gpu::stages::Stages;
/// let mut s = Stages::cpu();
/// let (src, dst) = (s.upload(&[3u32, 1, 4, 1, 5])?, s.zeroed::<u32>(5)?);
/// Scan::<u32>::new(ScanKind::Exclusive).record_stages(&mut s, src, dst)?;
/// assert_eq!(s.read(dst)?, vec![0, 3, 4, 8, 9]);
/// # Ok::<(), lumbre_gpu::Error>(())
/// ```
pub mod twin {
    pub use crate::compact::twin as compact;
    pub use crate::hpyramid::twin as hpyramid;
    pub use crate::scan::twin as scan;
    pub use crate::sort::twin as sort;
}
