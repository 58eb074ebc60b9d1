//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
//! import shared/lookback
//! import shared/scan_tile
// Prefix scan of f32; the kernel is shared/scan_tile.wgsl.
alias Val = f32;
