//! CPU twins of the GPU stages: one function per WGSL entry point, named like it, in a module
//! named like its shader file. A twin takes the entry point's uniform (the `*Params` structs
//! here, the Rust mirrors of the WGSL structs) and the buffers the entry point binds, as
//! slices in binding order (read-only as `&[T]`, written as `&mut [T]`), and computes what
//! one dispatch of it computes: every workgroup, tile by tile. Integer results are
//! bit-identical to the GPU's; `f32` scans sum in another order, so they agree to rounding.
//!
//! Reads past the end of a slice give zero and writes past it are dropped, as robust buffer
//! access allows on the GPU; a pipeline that stays in bounds never meets either.
//!
//! Each pipeline of this crate is written once against [`lumbre_gpu::stages::Stages`] and
//! gives every dispatch its twin ([`Scan::record_stages`](crate::Scan::record_stages),
//! [`Compact::record_stages`](crate::Compact::record_stages),
//! [`record_sort_stages`](crate::record_sort_stages),
//! [`HistoPyramid::record_stages`](crate::HistoPyramid::record_stages)): recorded for the
//! GPU, or run stage by stage with any stage as its twin, to find a wrong one.
//!
//! ```
//! use lumbre_compact::{Scan, ScanKind};
//! use lumbre_gpu::stages::Stages;
//! let mut s = Stages::cpu();
//! let (src, dst) = (s.upload(&[3u32, 1, 4, 1, 5])?, s.zeroed::<u32>(5)?);
//! Scan::<u32>::new(ScanKind::Exclusive).record_stages(&mut s, src, dst)?;
//! assert_eq!(s.read(dst)?, vec![0, 3, 4, 8, 9]);
//! # Ok::<(), lumbre_gpu::Error>(())
//! ```

pub mod compact;
pub mod hpyramid;
mod lookback;
pub mod radix_hist;
pub mod radix_offsets;
pub mod radix_scatter;
pub mod scan_tile;

/// The uniform of `compact/scan_tile.wgsl` (`ScanParams`): one piece of a scan.
///
/// ```
/// let p = lumbre_compact::stages::ScanParams { n: 5000, num_tiles: 2, ..Default::default() };
/// assert_eq!(p.inclusive, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct ScanParams {
    /// Elements in this piece.
    pub n: u32,
    /// The piece's number: `carry[piece]` precedes it and its last tile writes
    /// `carry[piece + 1]`.
    pub piece: u32,
    /// 1 for an inclusive scan, 0 for an exclusive one.
    pub inclusive: u32,
    /// Tiles of [`SCAN_TILE`](crate::SCAN_TILE) elements in the piece (one workgroup each).
    pub num_tiles: u32,
    /// The look-back's tuning word: spin limit in bits 0-30, "walk to tile zero" in bit 31
    /// (see [`Lookback`](crate::Lookback)).
    pub lookback: u32,
}
const _: () = assert!(
    size_of::<ScanParams>() == lumbre_shaders::compact::SCAN_U32_PLAIN_SCAN_PARAMS_SIZE
        && size_of::<ScanParams>() == lumbre_shaders::compact::SCAN_F32_PLAIN_SCAN_PARAMS_SIZE
);

/// The uniform of `compact/compact.wgsl` (`CompactParams`): one piece of a compaction.
///
/// ```
/// let p = lumbre_compact::stages::CompactParams { n: 10, num_tiles: 1, mode: 2, ..Default::default() };
/// assert_eq!(p.out_base, 0);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CompactParams {
    /// Elements in this piece.
    pub n: u32,
    /// The piece's number: `carry[piece]` counts what earlier pieces kept.
    pub piece: u32,
    /// Tiles of [`COMPACT_TILE`](crate::COMPACT_TILE) elements in the piece.
    pub num_tiles: u32,
    /// The look-back's tuning word (see [`ScanParams::lookback`]).
    pub lookback: u32,
    /// Bit 0: keep by the predicate on the value (else by flag); bit 1: write indices (else
    /// values).
    pub mode: u32,
    /// The predicate: 0 `v != 0`, 1 `v == x`, 2 `v != x`, 3 `v < x`, 4 `v <= x`, 5 `v > x`,
    /// 6 `v >= x`, otherwise `v & x != 0` (`x` is the operand).
    pub op: u32,
    /// The predicate's operand.
    pub operand: u32,
    /// Index of the piece's first element (what written indices start from).
    pub index_base: u32,
    /// Output position where the bound `out` starts.
    pub out_base: u32,
}
const _: () = assert!(size_of::<CompactParams>() == lumbre_shaders::compact::COMPACT_PLAIN_COMPACT_PARAMS_SIZE);

/// The uniform of the radix sort's kernels (`compact/radix_params.wgsl`): one pass over one
/// piece of keys (and, for the scatter, one window of the output).
///
/// ```
/// let p = lumbre_compact::stages::SortParams { n: 100, key_words: 1, num_tiles: 1, ..Default::default() };
/// assert_eq!(p.shift, 0); // the first pass sorts by the lowest byte
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct SortParams {
    /// Keys in this piece.
    pub n: u32,
    /// Bit offset of the pass's 8-bit digit within its word (0, 8, 16 or 24).
    pub shift: u32,
    /// Which 32-bit word of a key holds the digit (0 low, 1 high).
    pub word: u32,
    /// Words per key (1 for `u32`, 2 for `u64`).
    pub key_words: u32,
    /// Tiles of [`SORT_TILE`](crate::SORT_TILE) keys in the whole input.
    pub num_tiles: u32,
    /// 1 if values move with the keys.
    pub has_values: u32,
    /// The piece's first tile.
    pub tile_base: u32,
    /// First output position of the scatter's window (the bound output starts there).
    pub out_base: u32,
    /// Length of the scatter's window: destinations outside it are not written.
    pub out_len: u32,
}
const _: () = assert!(
    size_of::<SortParams>() == lumbre_shaders::compact::RADIX_HIST_SORT_PARAMS_SIZE
        && size_of::<SortParams>() == lumbre_shaders::compact::RADIX_OFFSETS_SORT_PARAMS_SIZE
        && size_of::<SortParams>() == lumbre_shaders::compact::RADIX_SCATTER_PLAIN_SORT_PARAMS_SIZE
);

/// The uniform of `compact/hpyramid.wgsl` (`HpParams`).
///
/// ```
/// let p = lumbre_compact::stages::HpParams { n: 8, level: 1, count: 2, ..Default::default() };
/// assert_eq!(p.offsets, [0; 16]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct HpParams {
    /// Elements of the input.
    pub n: u32,
    /// The level being built (`reduce`), or the top level (`traverse`).
    pub level: u32,
    /// Added to written indices.
    pub index_base: u32,
    /// Zero (padding).
    pub _pad: u32,
    /// Where each level starts in the pyramid, in tuples of four; level 0 is the input.
    pub offsets: [u32; 16],
    /// Entries of the level being built (`base`, `reduce`), or the input's length
    /// (`traverse`, one thread per possible output).
    pub count: u32,
    /// Bit 0: keep by `value != 0` (else by flag); bit 1: write indices (else values).
    pub mode: u32,
    /// Zero (padding).
    pub _pad2: [u32; 2],
}
const _: () = assert!(size_of::<HpParams>() == lumbre_shaders::compact::HPYRAMID_HP_PARAMS_SIZE);
