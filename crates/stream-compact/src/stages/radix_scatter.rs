//! CPU twin of `compact/radix_scatter.wgsl` (`RADIX_SCATTER_PLAIN` and
//! `RADIX_SCATTER_SUBGROUPS`, which compute the same).

use super::radix_hist::{digit, tiles};
use lumbre_gpu::stages::{get, put};

use super::SortParams;
use crate::SORT_TILE;

/// Twin of `scatter`: each tile of the piece sorted stably by the pass's digit, its keys (and
/// values) written to their digit's output position for the tile (`offsets`) plus their rank
/// within the tile's digit, where that lies inside the output window
/// `out_base .. out_base + out_len` (positions relative to `out_base`).
///
/// As on the GPU, a key's rank within its digit is its position in the sorted tile less the
/// tile's count of smaller digits in `hist`.
///
/// ```
/// use lumbre_compact::stages::{SortParams, radix_scatter};
/// let p = SortParams { n: 3, key_words: 1, num_tiles: 1, has_values: 1, out_len: 3, ..Default::default() };
/// let mut hist = [0u32; 256];
/// (hist[1], hist[2]) = (2, 1);
/// let mut offsets = [0u32; 256];
/// (offsets[1], offsets[2]) = (0, 2);
/// let (mut keys, mut vals) = ([0u32; 3], [0u32; 3]);
/// radix_scatter::scatter(&p, &[2, 1, 1], &[7, 8, 9], &offsets, &mut keys, &mut vals, &hist);
/// assert_eq!((keys, vals), ([1, 1, 2], [8, 9, 7]));
/// ```
pub fn scatter(
    p: &SortParams,
    keys_in: &[u32],
    vals_in: &[u32],
    offsets: &[u32],
    keys_out: &mut [u32],
    vals_out: &mut [u32],
    hist: &[u32],
) {
    let n = p.n as usize;
    for t in 0..tiles(p) {
        let base = t * SORT_TILE;
        let row = (p.tile_base as usize + t) * 256;
        let keys = base..(base + SORT_TILE).min(n);
        // Where each digit starts in the sorted tile: by the keys (the tile's own sort) and
        // by `hist` (which the GPU subtracts from the digit's output position).
        let mut local = [0u32; 256];
        for g in keys.clone() {
            local[digit(p, keys_in, g)] += 1;
        }
        let (mut next, mut in_hist) = ([0u32; 256], [0u32; 256]);
        let (mut a, mut b) = (0u32, 0u32);
        for d in 0..256 {
            (next[d], in_hist[d]) = (a, b);
            a += local[d];
            b = b.wrapping_add(get(hist, row + d));
        }
        for g in keys {
            let d = digit(p, keys_in, g);
            let sorted = next[d];
            next[d] += 1;
            let global = get(offsets, row + d).wrapping_sub(in_hist[d]).wrapping_add(sorted);
            let dst = global.wrapping_sub(p.out_base);
            if global < p.out_base || dst >= p.out_len {
                continue;
            }
            let (dst, src) = (dst as usize, g);
            if p.key_words == 1 {
                put(keys_out, dst, get(keys_in, src));
            } else {
                put(keys_out, 2 * dst, get(keys_in, 2 * src));
                put(keys_out, 2 * dst + 1, get(keys_in, 2 * src + 1));
            }
            if p.has_values != 0 {
                put(vals_out, dst, get(vals_in, src));
            }
        }
    }
}
