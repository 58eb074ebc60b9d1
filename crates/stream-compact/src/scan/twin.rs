//! CPU twins of `compact/scan_tile.wgsl`, the entry points of the `SCAN_U32_*` and
//! `SCAN_F32_*` shaders: the single pass (`scan`) and the first and last passes of
//! reduce-then-scan (`reduce`, `scan_from_prefixes`), and what `compact/lookback.wgsl`
//! leaves in its state words (the ticket counter, and each tile's published aggregate and
//! inclusive prefix). Elements of type `T` are 4 bytes (`u32` or `f32`); `f32` scans sum in
//! another order than the GPU's, so they agree to rounding.
//!
//! A twin takes the entry point's uniform and the buffers it binds, as slices in binding
//! order (read-only as `&[T]`, written as `&mut [T]`), and computes what one dispatch
//! computes, every workgroup tile by tile; reads past a slice's end give zero and writes
//! past it are dropped, as robust buffer access allows on the GPU.

use std::ops::Range;

use lumbre_gpu::stages::{get, put};

use crate::scan::{SCAN_TILE, ScanElem, ScanKind, scan_serial};

/// The uniform of `compact/scan_tile.wgsl` (`ScanParams`): one piece of a scan.
///
/// ```
/// let p = lumbre_compact::twin::scan::ScanParams { n: 5000, num_tiles: 2, ..Default::default() };
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
#[cfg(feature = "gpu")]
const _: () = assert!(
    size_of::<ScanParams>() == lumbre_shaders::compact::SCAN_U32_PLAIN_SCAN_PARAMS_SIZE
        && size_of::<ScanParams>() == lumbre_shaders::compact::SCAN_F32_PLAIN_SCAN_PARAMS_SIZE
);

/// Ready flag of a published half word.
const READY: u32 = 0x10000;

/// Publishes `bits` in slot pair `k` of `tile` (0: aggregate, 2: inclusive prefix).
fn publish(state: &mut [u32], tile: usize, k: usize, bits: u32) {
    let slot = 4 + 4 * tile + k;
    put(state, slot, READY | (bits & 0xffff));
    put(state, slot + 1, READY | (bits >> 16));
}

/// Records what tile `tile` publishes: tile 0 its inclusive prefix only, the others their
/// aggregate and, unless bit 31 of `tuning` asks every tile to walk to tile 0, their
/// inclusive prefix (values as bits).
pub(crate) fn publish_tile(state: &mut [u32], tile: usize, aggregate: u32, inclusive: u32, tuning: u32) {
    if tile == 0 {
        publish(state, 0, 2, inclusive);
        return;
    }
    publish(state, tile, 0, aggregate);
    if tuning >> 31 == 0 {
        publish(state, tile, 2, inclusive);
    }
}

/// Counts `tiles` tickets taken from the counter in word 0.
pub(crate) fn take_tickets(state: &mut [u32], tiles: u32) {
    if let Some(t) = state.first_mut() {
        *t = t.wrapping_add(tiles);
    }
}

/// Elements of tile `t` in a piece of `n`.
fn tile(t: usize, n: usize) -> Range<usize> {
    (t * SCAN_TILE).min(n)..((t + 1) * SCAN_TILE).min(n)
}

fn kind(p: &ScanParams) -> ScanKind {
    if p.inclusive != 0 { ScanKind::Inclusive } else { ScanKind::Exclusive }
}

fn bits<T: ScanElem>(v: T) -> u32 {
    bytemuck::cast(v)
}

/// The sum of tile `t`'s input.
fn tile_total<T: ScanElem>(src: &[T], t: usize, n: usize) -> T {
    src[tile(t, n)].iter().fold(T::default(), |a, &x| a.add(x))
}

/// Scans tile `t` of `src` into `dst`, every result preceded by `before`; returns the tile's
/// total.
fn scan_tile<T: ScanElem>(p: &ScanParams, src: &[T], dst: &mut [T], t: usize, before: T) -> T {
    let r = tile(t, p.n as usize);
    scan_serial(&src[r.clone()], &mut dst[r], kind(p), before)
}

/// Twin of `scan`: every tile scanned after the carry of earlier pieces and the earlier
/// tiles (found by the look-back on the GPU), the look-back state each tile publishes, and
/// the piece's total after the carry in `carry[piece + 1]`.
///
/// ```
/// use lumbre_compact::twin::scan::{self, ScanParams};
/// let p = ScanParams { n: 3, piece: 1, num_tiles: 1, ..Default::default() };
/// let (mut dst, mut state, mut carry) = ([0u32; 3], [0u32; 8], [0u32, 10, 0]);
/// scan::scan(&p, &[1, 2, 3], &mut dst, &mut state, &mut carry);
/// assert_eq!((dst, carry[2]), ([10, 11, 13], 16));
/// ```
pub fn scan<T: ScanElem>(p: &ScanParams, src: &[T], dst: &mut [T], state: &mut [u32], carry: &mut [T]) {
    let piece = p.piece as usize;
    let mut prefix = get(carry, piece);
    for t in 0..p.num_tiles as usize {
        let total = scan_tile(p, src, dst, t, prefix);
        publish_tile(state, t, bits(total), bits(prefix.add(total)), p.lookback);
        prefix = prefix.add(total);
    }
    take_tickets(state, p.num_tiles);
    if p.num_tiles > 0 {
        put(carry, piece + 1, prefix);
    }
}

/// Twin of `reduce`: every tile's total into `tile_values`.
///
/// ```
/// use lumbre_compact::twin::scan::{self, ScanParams};
/// let src = vec![1u32; 5000];
/// let mut totals = [0u32; 2];
/// scan::reduce(&ScanParams { n: 5000, num_tiles: 2, ..Default::default() }, &src, &mut totals);
/// assert_eq!(totals, [4096, 904]);
/// ```
pub fn reduce<T: ScanElem>(p: &ScanParams, src: &[T], tile_values: &mut [T]) {
    for t in 0..p.num_tiles as usize {
        put(tile_values, t, tile_total(src, t, p.n as usize));
    }
}

/// Twin of `scan_from_prefixes`: every tile scanned after its prefix in `tile_values`.
///
/// ```
/// use lumbre_compact::twin::scan::{self, ScanParams};
/// let p = ScanParams { n: 3, num_tiles: 1, inclusive: 1, ..Default::default() };
/// let mut dst = [0u32; 3];
/// scan::scan_from_prefixes(&p, &[1, 2, 3], &mut dst, &[100]);
/// assert_eq!(dst, [101, 103, 106]);
/// ```
pub fn scan_from_prefixes<T: ScanElem>(p: &ScanParams, src: &[T], dst: &mut [T], tile_values: &[T]) {
    for t in 0..p.num_tiles as usize {
        scan_tile(p, src, dst, t, get(tile_values, t));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_single_pass_publishes_what_the_lookback_does() {
        // Two tiles of ones after a carry of 7: tile 0 publishes only its inclusive prefix,
        // tile 1 its aggregate and inclusive prefix; without them with the walk bit.
        let src = vec![1u32; SCAN_TILE + 5];
        let mut dst = vec![0u32; src.len()];
        for (tuning, publishes_inclusive) in [(0u32, true), (1 << 31, false)] {
            let p = ScanParams { n: src.len() as u32, piece: 0, inclusive: 0, num_tiles: 2, lookback: tuning };
            let (mut state, mut carry) = (vec![0u32; 12], vec![7u32, 0]);
            scan(&p, &src, &mut dst, &mut state, &mut carry);
            let half = |v: u32| [0x10000 | (v & 0xffff), 0x10000 | (v >> 16)];
            let inc1 = if publishes_inclusive { half(7 + 4096 + 5) } else { [0, 0] };
            let want = [
                [2, 0, 0, 0],
                [0, 0, half(7 + 4096)[0], half(7 + 4096)[1]],
                [half(5)[0], half(5)[1], inc1[0], inc1[1]],
            ];
            assert_eq!(state, want.concat());
            assert_eq!(carry, [7, 7 + 4096 + 5]);
            assert_eq!((dst[0], dst[4096], dst[4100]), (7, 7 + 4096, 7 + 4100));
        }
    }

    #[test]
    fn reduce_then_scan_equals_the_single_pass() {
        let n = 3 * SCAN_TILE + 11;
        let src: Vec<u32> = (0..n as u32).map(|i| i.wrapping_mul(0x9e37_79b9)).collect();
        let p = ScanParams { n: n as u32, piece: 0, inclusive: 1, num_tiles: 4, lookback: 0 };
        let (mut single, mut state, mut carry) = (vec![0; n], vec![0; 20], vec![0; 2]);
        scan(&p, &src, &mut single, &mut state, &mut carry);
        let mut totals = vec![0u32; 4];
        reduce(&p, &src, &mut totals);
        let prefixes: Vec<u32> =
            totals.iter().scan(0u32, |a, &t| Some(std::mem::replace(a, a.wrapping_add(t)))).collect();
        let mut two = vec![0; n];
        scan_from_prefixes(&p, &src, &mut two, &prefixes);
        assert_eq!(single, two);
        assert_eq!(carry[1], totals.iter().fold(0u32, |a, &t| a.wrapping_add(t)));
    }
}
