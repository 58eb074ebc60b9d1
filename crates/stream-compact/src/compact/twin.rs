//! CPU twins of `compact/compact.wgsl` (`COMPACT_PLAIN` and `COMPACT_SUBGROUPS`, which
//! compute the same): the single pass (`compact`) and the two passes around a scan of the
//! tiles' counts (`count`, `compact_from_prefixes`).
//!
//! A twin takes the entry point's uniform and the buffers it binds, as slices in binding
//! order (read-only as `&[T]`, written as `&mut [T]`), and computes what one dispatch
//! computes, every workgroup tile by tile; reads past a slice's end give zero and writes
//! past it are dropped, as robust buffer access allows on the GPU.

use std::ops::Range;

use lumbre_gpu::stages::{get, put};

use crate::compact::COMPACT_TILE;
use crate::scan::twin::{publish_tile, take_tickets};

/// The uniform of `compact/compact.wgsl` (`CompactParams`): one piece of a compaction.
///
/// ```
/// let p = lumbre_compact::twin::compact::CompactParams { n: 10, num_tiles: 1, mode: 2, ..Default::default() };
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
    /// The look-back's tuning word (see [`ScanParams::lookback`](crate::twin::scan::ScanParams::lookback)).
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
#[cfg(feature = "gpu")]
const _: () = assert!(size_of::<CompactParams>() == lumbre_shaders::compact::COMPACT_PLAIN_COMPACT_PARAMS_SIZE);

/// Keep-bit words per tile in the two-pass compaction: one per thread of the workgroup
/// (`WG` in the shader).
pub(crate) const TILE_WORDS: usize = 256;

/// Elements of a tile's stripe: a thread holds one vec4 of each of the four stripes.
const STRIPE: usize = COMPACT_TILE / 4;

fn tile(t: usize) -> Range<usize> {
    t * COMPACT_TILE..(t + 1) * COMPACT_TILE
}

/// The predicate of `params.op` on `v`.
fn holds(p: &CompactParams, v: u32) -> bool {
    let x = p.operand;
    match p.op {
        0 => v != 0,
        1 => v == x,
        2 => v != x,
        3 => v < x,
        4 => v <= x,
        5 => v > x,
        6 => v >= x,
        _ => v & x != 0,
    }
}

/// Whether element `e` of the piece is kept (never past `n`).
fn keep(p: &CompactParams, values: &[u32], flags: &[u32], e: usize) -> bool {
    if e >= p.n as usize {
        return false;
    }
    if p.mode & 1 != 0 { holds(p, get(values, e)) } else { get(flags, e) != 0 }
}

/// What is written for kept element `e`: its index or its value (zero in the last vec4's
/// lanes past `n`, which only a keep bit set there would write).
fn output(p: &CompactParams, values: &[u32], e: usize) -> u32 {
    if p.mode & 2 != 0 {
        p.index_base.wrapping_add(e as u32)
    } else if e / 4 * 4 < p.n as usize {
        get(values, e)
    } else {
        0
    }
}

/// Keep bit of element `i` of a tile: bit `4 s + c` of word `r` for element
/// `1024 s + 4 r + c` (stripe `s`, thread `r`, lane `c`).
fn bit_of(i: usize) -> (usize, u32) {
    let (s, r, c) = (i / STRIPE, i % STRIPE / 4, i % 4);
    (r, (4 * s + c) as u32)
}

/// Writes the kept elements of tile `t` from output position `at` on (the bound `out` starts
/// at `out_base`); returns the position after them.
fn write_tile(
    p: &CompactParams,
    values: &[u32],
    out: &mut [u32],
    t: usize,
    mut at: u32,
    keep: impl Fn(usize) -> bool,
) -> u32 {
    for e in tile(t) {
        if keep(e) {
            put(out, at.wrapping_sub(p.out_base) as usize, output(p, values, e));
            at = at.wrapping_add(1);
        }
    }
    at
}

/// Twin of `compact`: every tile's kept elements after those of the earlier pieces
/// (`carry[piece]`) and tiles, the look-back state each tile publishes, and the count after
/// the piece in `carry[piece + 1]`.
///
/// ```
/// use lumbre_compact::twin::compact::{self, CompactParams};
/// let p = CompactParams { n: 4, num_tiles: 1, ..Default::default() };
/// let (mut state, mut carry, mut out) = ([0u32; 8], [0u32; 2], [0u32; 4]);
/// compact::compact(&p, &[5, 6, 7, 8], &[1, 0, 0, 1], &mut state, &mut carry, &mut out);
/// assert_eq!((out, carry[1]), ([5, 8, 0, 0], 2));
/// ```
pub fn compact(
    p: &CompactParams,
    values: &[u32],
    flags: &[u32],
    state: &mut [u32],
    carry: &mut [u32],
    out: &mut [u32],
) {
    let piece = p.piece as usize;
    let mut prefix = get(carry, piece);
    for t in 0..p.num_tiles as usize {
        let end = write_tile(p, values, out, t, prefix, |e| keep(p, values, flags, e));
        publish_tile(state, t, end.wrapping_sub(prefix), end, p.lookback);
        prefix = end;
    }
    take_tickets(state, p.num_tiles);
    if p.num_tiles > 0 {
        put(carry, piece + 1, prefix);
    }
}

/// Twin of `count`: every tile's count of kept elements into `tile_values` and its keep bits
/// into `keep_bits` (256 words per tile; see [`compact_from_prefixes`]).
///
/// ```
/// use lumbre_compact::twin::compact::{self, CompactParams};
/// let p = CompactParams { n: 6, num_tiles: 1, ..Default::default() };
/// let (mut counts, mut bits) = ([0u32; 1], [0u32; 256]);
/// compact::count(&p, &[], &[1, 0, 0, 1, 1, 0], &mut counts, &mut bits);
/// // Elements 0-3 are thread 0's first vec4, elements 4-7 thread 1's.
/// assert_eq!((counts[0], bits[0], bits[1]), (3, 0b1001, 0b0001));
/// ```
pub fn count(p: &CompactParams, values: &[u32], flags: &[u32], tile_values: &mut [u32], keep_bits: &mut [u32]) {
    for t in 0..p.num_tiles as usize {
        let mut words = [0u32; TILE_WORDS];
        let mut kept = 0;
        for (i, e) in tile(t).enumerate() {
            if keep(p, values, flags, e) {
                let (r, bit) = bit_of(i);
                words[r] |= 1 << bit;
                kept += 1;
            }
        }
        for (r, &w) in words.iter().enumerate() {
            put(keep_bits, t * TILE_WORDS + r, w);
        }
        put(tile_values, t, kept);
    }
}

/// Twin of `compact_from_prefixes`: every tile's kept elements, by its keep bits, from its
/// prefix in `tile_values` on.
///
/// ```
/// use lumbre_compact::twin::compact::{self, CompactParams};
/// let p = CompactParams { n: 6, num_tiles: 1, ..Default::default() };
/// let mut bits = [0u32; 256];
/// (bits[0], bits[1]) = (0b1001, 0b0001);
/// let mut out = [0u32; 5];
/// compact::compact_from_prefixes(&p, &[10, 11, 12, 13, 14, 15], &mut out, &[2], &bits);
/// assert_eq!(out, [0, 0, 10, 13, 14]);
/// ```
pub fn compact_from_prefixes(
    p: &CompactParams,
    values: &[u32],
    out: &mut [u32],
    tile_values: &[u32],
    keep_bits: &[u32],
) {
    for t in 0..p.num_tiles as usize {
        let start = tile(t).start;
        let kept = |e: usize| {
            let (r, bit) = bit_of(e - start);
            get(keep_bits, t * TILE_WORDS + r) >> bit & 1 != 0
        };
        write_tile(p, values, out, t, get(tile_values, t), kept);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keep_bits_follow_the_stripes() {
        // Element 1024 s + 4 r + c of a tile is bit 4 s + c of word r.
        assert_eq!(bit_of(0), (0, 0));
        assert_eq!(bit_of(7), (1, 3));
        assert_eq!(bit_of(1024), (0, 4));
        assert_eq!(bit_of(3 * 1024 + 4 * 255 + 3), (255, 15));
    }

    #[test]
    fn two_passes_equal_one() {
        // Two pieces' worth of state: the second piece starts after 5 kept elements and
        // writes into a window that starts at output position 4.
        let n = COMPACT_TILE + 300;
        let values: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(2654435761)).collect();
        for (mode, op) in [(0, 0), (1, 3), (3, 7)] {
            let p = CompactParams {
                n: n as u32,
                piece: 1,
                num_tiles: 2,
                lookback: 0,
                mode,
                op,
                operand: 1 << 31,
                index_base: 1000,
                out_base: 4,
            };
            let flags: Vec<u32> = values.iter().map(|v| v >> 30 & 1).collect();
            let (mut state, mut carry, mut one) = (vec![0; 12], vec![0, 5, 0], vec![0; n + 1]);
            compact(&p, &values, &flags, &mut state, &mut carry, &mut one);
            let (mut counts, mut bits) = (vec![0; 2], vec![0; 512]);
            count(&p, &values, &flags, &mut counts, &mut bits);
            let mut two = vec![0; n + 1];
            compact_from_prefixes(&p, &values, &mut two, &[5, 5 + counts[0]], &bits);
            assert_eq!(one, two, "mode {mode}");
            assert_eq!(carry[2], 5 + counts[0] + counts[1]);
            let kept: Vec<usize> = (0..n).filter(|&e| keep(&p, &values, &flags, e)).collect();
            assert_eq!(kept.len() as u32, counts[0] + counts[1]);
            assert_eq!(one[1], output(&p, &values, kept[0]), "the first kept element lands at 5 - 4");
        }
    }
}
