//! CPU twins of the radix sort's kernels: each tile's digit counts (`hist_tiles`,
//! `compact/sort_hist.wgsl`), the tiles' output positions from them by chunks of tiles
//! (`chunk_sums`, then the scan of the sums, then `chunk_offsets`,
//! `compact/sort_offsets.wgsl`), and the scatter (`scatter`, `compact/sort_scatter.wgsl`,
//! both variants of which compute the same); and the one-sweep sort's every digit count
//! (`count_digits`), their scan per pass (`digit_starts`, both `compact/sort_counts.wgsl`)
//! and its passes (`sweep`, `compact/sort_sweep.wgsl`).
//!
//! A twin takes the entry point's uniform and the buffers it binds, as slices in binding
//! order (read-only as `&[T]`, written as `&mut [T]`), and computes what one dispatch
//! computes, every workgroup tile by tile; reads past a slice's end give zero and writes
//! past it are dropped, as robust buffer access allows on the GPU.

use lumbre_gpu::stages::{get, put};

use crate::sort::{SORT_TILE, SWEEP_TILE};

/// The uniform of the radix sort's kernels (`compact/radix_params.wgsl`): one pass over one
/// piece of keys (and, for the scatter, one window of the output).
///
/// ```
/// let p = lumbre_compact::twin::sort::SortParams { n: 100, key_words: 1, num_tiles: 1, ..Default::default() };
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
    /// One-sweep sort: this pass (its row of digit starts and its ticket).
    pub digit_pass: u32,
    /// One-sweep sort: the passes of the whole sort (rows of digit counts).
    pub passes: u32,
    /// One-sweep sort: tiles each `count_digits` workgroup reads.
    pub tiles_per_group: u32,
    /// One-sweep sort: the look-back tuning word ([`Lookback`](crate::Lookback)).
    pub lookback: u32,
}
#[cfg(feature = "gpu")]
const _: () = assert!(
    size_of::<SortParams>() == lumbre_shaders::compact::SORT_HIST_SORT_PARAMS_SIZE
        && size_of::<SortParams>() == lumbre_shaders::compact::SORT_OFFSETS_SORT_PARAMS_SIZE
        && size_of::<SortParams>() == lumbre_shaders::compact::SORT_SCATTER_PLAIN_SORT_PARAMS_SIZE
        && size_of::<SortParams>() == lumbre_shaders::compact::SORT_COUNTS_SORT_PARAMS_SIZE
        && size_of::<SortParams>() == lumbre_shaders::compact::SORT_SWEEP_SORT_PARAMS_SIZE
);

/// Digit of the pass for key `g` of the piece (`keys` holds `key_words` words per key).
fn digit(p: &SortParams, keys: &[u32], g: usize) -> usize {
    let word = if p.key_words == 1 { get(keys, g) } else { get(keys, 2 * g + (p.word == 1) as usize) };
    (word.wrapping_shr(p.shift) & 0xff) as usize
}

/// Tiles of the piece (one workgroup each).
fn tiles(p: &SortParams) -> usize {
    (p.n as usize).div_ceil(SORT_TILE)
}

/// Twin of `hist_tiles`: row `tile_base + t` of `hist` (256 counts, tile-major) for each
/// tile `t` of the piece, skipping rows past `num_tiles`.
///
/// ```
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let p = SortParams { n: 3, key_words: 1, num_tiles: 1, shift: 8, ..Default::default() };
/// let mut hist = [0u32; 256];
/// sort::hist_tiles(&p, &[0x100, 0x1ff, 0x300], &mut hist);
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

/// Tiles per chunk when the tiles' digit counts become output positions, `CHUNK` in
/// `compact/sort_offsets.wgsl`.
pub(crate) const CHUNK: usize = 32;

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
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let mut hist = vec![0u32; 2 * 256];
/// (hist[5], hist[256 + 5]) = (2, 3);
/// let mut sums = vec![0u32; 256];
/// sort::chunk_sums(&SortParams { num_tiles: 2, ..Default::default() }, &hist, &mut sums);
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
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let mut hist = vec![0u32; 2 * 256];
/// (hist[5], hist[256 + 5]) = (2, 3);
/// let mut starts = vec![0u32; 256];
/// starts[5] = 10;
/// let mut offsets = vec![0u32; 2 * 256];
/// sort::chunk_offsets(&SortParams { num_tiles: 2, ..Default::default() }, &hist, &starts, &mut offsets);
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

/// Twin of `scatter`: each tile of the piece sorted stably by the pass's digit, its keys (and
/// values) written to their digit's output position for the tile (`offsets`) plus their rank
/// within the tile's digit, where that lies inside the output window
/// `out_base .. out_base + out_len` (positions relative to `out_base`).
///
/// As on the GPU, a key's rank within its digit is its position in the sorted tile less the
/// tile's count of smaller digits in `hist`.
///
/// ```
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let p = SortParams { n: 3, key_words: 1, num_tiles: 1, has_values: 1, out_len: 3, ..Default::default() };
/// let mut hist = [0u32; 256];
/// (hist[1], hist[2]) = (2, 1);
/// let mut offsets = [0u32; 256];
/// (offsets[1], offsets[2]) = (0, 2);
/// let (mut keys, mut vals) = ([0u32; 3], [0u32; 3]);
/// sort::scatter(&p, &[2, 1, 1], &[7, 8, 9], &offsets, &mut keys, &mut vals, &hist);
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

/// The pass's digit of key `g` for pass `pass` of a one-sweep sort.
fn pass_digit(p: &SortParams, keys: &[u32], g: usize, pass: u32) -> usize {
    digit(&SortParams { shift: 8 * (pass % 4), word: pass / 4, ..*p }, keys, g)
}

/// Twin of `count_digits`: adds the count of every digit of every pass over the `n` keys to
/// `counts[pass * 256 + digit]` (the GPU splits the keys among its workgroups).
///
/// ```
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let p = SortParams { n: 2, key_words: 1, passes: 2, ..Default::default() };
/// let mut counts = vec![0u32; 2 * 256];
/// sort::count_digits(&p, &[0x0102, 0x0302], &mut counts);
/// assert_eq!((counts[2], counts[256 + 1], counts[256 + 3]), (2, 1, 1));
/// ```
pub fn count_digits(p: &SortParams, keys: &[u32], counts: &mut [u32]) {
    for g in 0..p.n as usize {
        for pass in 0..p.passes {
            let at = pass as usize * 256 + pass_digit(p, keys, g, pass);
            put(counts, at, get(counts, at).wrapping_add(1));
        }
    }
}

/// Twin of `digit_starts`: each pass's 256 counts replaced by their exclusive scan.
///
/// ```
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let mut counts = vec![0u32; 256];
/// (counts[0], counts[1], counts[5]) = (2, 3, 1);
/// sort::digit_starts(&SortParams { passes: 1, ..Default::default() }, &mut counts);
/// assert_eq!((counts[0], counts[1], counts[2], counts[5], counts[6]), (0, 2, 5, 5, 6));
/// ```
pub fn digit_starts(p: &SortParams, counts: &mut [u32]) {
    for pass in 0..p.passes as usize {
        let mut at = 0u32;
        for d in 0..256 {
            let c = get(counts, pass * 256 + d);
            put(counts, pass * 256 + d, at);
            at = at.wrapping_add(c);
        }
    }
}

/// State words before the tiles' in the one-sweep look-back: one ticket per pass.
const TICKETS: usize = 8;
/// Flag of a tile's published count that includes every tile before it.
const INC: u32 = 0x8000_0000;

/// Twin of `sweep`: one stable counting pass over all the keys, each digit's keys from its
/// start in `starts` (row `pass`), tile by tile in order; `state` ends with every tile's
/// inclusive count per digit, flagged as the GPU's look-back leaves it.
///
/// ```
/// use lumbre_compact::twin::sort::{self, SortParams};
/// let p = SortParams { n: 3, key_words: 1, num_tiles: 1, has_values: 1, passes: 1, ..Default::default() };
/// let mut starts = [0u32; 256];
/// (starts[1], starts[2]) = (0, 2);
/// let (mut keys, mut vals, mut state) = ([0u32; 3], [0u32; 3], vec![0u32; 8 + 256]);
/// sort::sweep(&p, &[2, 1, 1], &[7, 8, 9], &starts, &mut state, &mut keys, &mut vals);
/// assert_eq!((keys, vals), ([1, 1, 2], [8, 9, 7]));
/// ```
pub fn sweep(
    p: &SortParams,
    keys_in: &[u32],
    vals_in: &[u32],
    starts: &[u32],
    state: &mut [u32],
    keys_out: &mut [u32],
    vals_out: &mut [u32],
) {
    let (n, w) = (p.n as usize, p.key_words as usize);
    let row = p.digit_pass as usize * 256;
    let mut at: Vec<u32> = (0..256).map(|d| get(starts, row + d)).collect();
    let mut inclusive = [0u32; 256];
    for t in 0..p.num_tiles as usize {
        for g in t * SWEEP_TILE..((t + 1) * SWEEP_TILE).min(n) {
            let d = digit(p, keys_in, g);
            let dst = at[d] as usize;
            at[d] = at[d].wrapping_add(1);
            inclusive[d] += 1;
            for i in 0..w {
                put(keys_out, dst * w + i, get(keys_in, g * w + i));
            }
            if p.has_values != 0 {
                put(vals_out, dst, get(vals_in, g));
            }
        }
        for (d, &c) in inclusive.iter().enumerate() {
            put(state, TICKETS + t * 256 + d, INC | c);
        }
    }
    let ticket = p.digit_pass as usize;
    put(state, ticket, get(state, ticket).wrapping_add(p.num_tiles));
}
