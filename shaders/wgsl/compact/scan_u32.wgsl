//! variants plain, subgroups
//! import compact/lanes_{variant}
//! import compact/block_scan_{variant}
//! import compact/lookback
//! import compact/scan_tile
// Prefix scan of u32; the kernel is compact/scan_tile.wgsl.
alias Val = u32;
