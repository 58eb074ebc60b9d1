//! CPU twin of `compact/radix_hist.wgsl`: each tile's digit counts.

use lumbre_gpu::stages::{get, put};

use super::SortParams;
use crate::SORT_TILE;

/// Digit of the pass for key `g` of the piece (`keys` holds `key_words` words per key).
pub(super) fn digit(p: &SortParams, keys: &[u32], g: usize) -> usize {
    let word = if p.key_words == 1 { get(keys, g) } else { get(keys, 2 * g + (p.word == 1) as usize) };
    (word.wrapping_shr(p.shift) & 0xff) as usize
}

/// Tiles of the piece (one workgroup each).
pub(super) fn tiles(p: &SortParams) -> usize {
    (p.n as usize).div_ceil(SORT_TILE)
}

/// Twin of `hist_tiles`: row `tile_base + t` of `hist` (256 counts, tile-major) for each
/// tile `t` of the piece, skipping rows past `num_tiles`.
///
/// ```
/// use lumbre_compact::stages::{SortParams, radix_hist};
/// let p = SortParams { n: 3, key_words: 1, num_tiles: 1, shift: 8, ..Default::default() };
/// let mut hist = [0u32; 256];
/// radix_hist::hist_tiles(&p, &[0x100, 0x1ff, 0x300], &mut hist);
/// assert_eq!((hist[1], hist[3]), (2, 1));
/// ```
pub fn hist_tiles(p: &SortParams, keys: &[u32], hist: &mut [u32]) {
    let n = p.n as usize;
    for t in 0..tiles(p) {
        let row = p.tile_base as usize + t;
        if row >= p.num_tiles as usize {
            continue;
        }
        let mut counts = [0u32; 256];
        for g in t * SORT_TILE..((t + 1) * SORT_TILE).min(n) {
            counts[digit(p, keys, g)] += 1;
        }
        for (d, &c) in counts.iter().enumerate() {
            put(hist, row * 256 + d, c);
        }
    }
}
