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
//!   keys only or with `u32` values;
//! - [`stages`]: a CPU twin of every GPU stage; each pipeline, written once, runs recorded
//!   for the GPU or stage by stage with any stage on the CPU, to find a wrong one.
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

mod compact;
mod hpyramid;
mod pieces;
mod scan;
mod sort;
pub mod stages;

pub use compact::{
    COMPACT_TILE, COMPACT_TWO_PASS_MIN, Compact, Emit, GpuCompacted, GpuStream, Predicate, Select, Stream, compact_cpu,
};
pub use hpyramid::HistoPyramid;
pub use scan::{
    Lookback, REDUCE_THEN_SCAN_MIN, SCAN_TILE, Scan, ScanElem, ScanKind, ScanMethod, ScanScratch, record_scan,
    record_scan_with, scan_cpu,
};
pub use sort::{
    RadixSort, RadixSortPairs, SORT_TILE, SortKey, radix_sort_cpu, record_sort, record_sort_bits, record_sort_stages,
};
