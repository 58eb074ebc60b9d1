//! variants plain, subgroups
//! import shared/lanes_{variant}
//! import shared/block_scan_{variant}
//! import shared/lookback
//! import shared/lookback_walk_{variant}
//! import shared/scan_tile
// Prefix scan of u32; the kernel is shared/scan_tile.wgsl.
alias Elem = u32;
