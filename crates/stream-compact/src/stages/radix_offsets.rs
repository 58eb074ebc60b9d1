//! CPU twins of `compact/radix_offsets.wgsl`: the tiles' output positions from their digit
//! counts, by chunks of tiles (`chunk_sums`, then the host's scan of the sums, then
//! `chunk_offsets`).

use lumbre_gpu::stages::{get, put};

use super::SortParams;

/// Tiles per chunk, `CHUNK` in the shader.
const CHUNK: usize = 32;

fn chunks(p: &SortParams) -> usize {
    (p.num_tiles as usize).div_ceil(CHUNK)
}

/// Tiles of chunk `c` that exist.
fn chunk_tiles(p: &SortParams, c: usize) -> std::ops::Range<usize> {
    let n = p.num_tiles as usize;
    (c * CHUNK).min(n)..((c + 1) * CHUNK).min(n)
}

/// Twin of `chunk_sums`: for each chunk of 32 tiles and digit `d`, the sum of the tiles'
/// counts of `d` into `sums[d * chunks + chunk]` (digit-major).
///
/// ```
/// use lumbre_compact::stages::{SortParams, radix_offsets};
/// let mut hist = vec![0u32; 2 * 256];
/// (hist[5], hist[256 + 5]) = (2, 3);
/// let mut sums = vec![0u32; 256];
/// radix_offsets::chunk_sums(&SortParams { num_tiles: 2, ..Default::default() }, &hist, &mut sums);
/// assert_eq!(sums[5], 5);
/// ```
pub fn chunk_sums(p: &SortParams, hist: &[u32], sums: &mut [u32]) {
    let chunks = chunks(p);
    for c in 0..chunks {
        for d in 0..256 {
            let total = chunk_tiles(p, c).fold(0u32, |a, t| a.wrapping_add(get(hist, t * 256 + d)));
            put(sums, d * chunks + c, total);
        }
    }
}

/// Twin of `chunk_offsets`: each tile's first output position for each digit, walking the
/// chunk's tiles from the chunk's start in `starts` (the exclusive scan of the sums).
///
/// ```
/// use lumbre_compact::stages::{SortParams, radix_offsets};
/// let mut hist = vec![0u32; 2 * 256];
/// (hist[5], hist[256 + 5]) = (2, 3);
/// let mut starts = vec![0u32; 256];
/// starts[5] = 10;
/// let mut offsets = vec![0u32; 2 * 256];
/// radix_offsets::chunk_offsets(&SortParams { num_tiles: 2, ..Default::default() }, &hist, &starts, &mut offsets);
/// assert_eq!((offsets[5], offsets[256 + 5]), (10, 12));
/// ```
pub fn chunk_offsets(p: &SortParams, hist: &[u32], starts: &[u32], offsets: &mut [u32]) {
    let chunks = chunks(p);
    for c in 0..chunks {
        for d in 0..256 {
            let mut at = get(starts, d * chunks + c);
            for t in chunk_tiles(p, c) {
                put(offsets, t * 256 + d, at);
                at = at.wrapping_add(get(hist, t * 256 + d));
            }
        }
    }
}
