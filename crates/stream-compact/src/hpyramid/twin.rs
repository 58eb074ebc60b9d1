//! CPU twins of `compact/hpyramid.wgsl`: the histogram pyramid's base level (`base`), each
//! level above it (`reduce`) and the descent that writes the output (`traverse`).
//!
//! A twin takes the entry point's uniform and the buffers it binds, as slices in binding
//! order (read-only as `&[T]`, written as `&mut [T]`), and computes what one dispatch
//! computes, every workgroup tile by tile; reads past a slice's end give zero and writes
//! past it are dropped, as robust buffer access allows on the GPU.

use lumbre_gpu::stages::{get, put};

/// The uniform of `compact/hpyramid.wgsl` (`HpParams`).
///
/// ```
/// let p = lumbre_compact::twin::hpyramid::HpParams { n: 8, level: 1, count: 2, ..Default::default() };
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
#[cfg(feature = "gpu")]
const _: () = assert!(size_of::<HpParams>() == lumbre_shaders::compact::HPYRAMID_HP_PARAMS_SIZE);

/// Threads per workgroup of the pyramid's kernels.
const WG: usize = 256;

/// Where level `l` starts in the pyramid (in tuples).
fn level_offset(p: &HpParams, l: u32) -> usize {
    get(&p.offsets, l as usize) as usize
}

/// 1 if element `g` is kept (0 past `n`).
fn keep(p: &HpParams, values: &[u32], flags: &[u32], g: usize) -> u32 {
    if g >= p.n as usize {
        return 0;
    }
    let x = if p.mode & 1 != 0 { get(values, g) } else { get(flags, g) };
    (x != 0) as u32
}

/// Sets the count of node `i` of the level starting at tuple `at`.
fn put_count(pyramid: &mut [[u32; 4]], at: usize, i: usize, c: u32) {
    if let Some(t) = pyramid.get_mut(at + i / 4) {
        t[i % 4] = c;
    }
}

/// Twin of `base`: level 1, node `i` counting the kept elements among `4i .. 4i + 3`.
///
/// ```
/// use lumbre_compact::twin::hpyramid::{self, HpParams};
/// let p = HpParams { n: 6, count: 2, ..Default::default() };
/// let mut pyramid = [[0u32; 4]; 1];
/// hpyramid::base(&p, &[], &[1, 1, 0, 1, 0, 1], &mut pyramid);
/// assert_eq!(pyramid, [[3, 1, 0, 0]]);
/// ```
pub fn base(p: &HpParams, values: &[u32], flags: &[u32], pyramid: &mut [[u32; 4]]) {
    let at = level_offset(p, 1);
    for i in 0..p.count as usize {
        let c = (0..4).map(|k| keep(p, values, flags, 4 * i + k)).sum();
        put_count(pyramid, at, i, c);
    }
}

/// Twin of `reduce`: level `params.level`, node `i` summing the tuple of its four children.
///
/// ```
/// use lumbre_compact::twin::hpyramid::{self, HpParams};
/// let mut offsets = [0; 16];
/// offsets[2] = 1;
/// let p = HpParams { level: 2, count: 1, offsets, ..Default::default() };
/// let mut pyramid = [[3, 1, 0, 0], [0; 4]];
/// hpyramid::reduce(&p, &mut pyramid);
/// assert_eq!(pyramid[1], [4, 0, 0, 0]);
/// ```
pub fn reduce(p: &HpParams, pyramid: &mut [[u32; 4]]) {
    let (below, at) = (level_offset(p, p.level.wrapping_sub(1)), level_offset(p, p.level));
    for i in 0..p.count as usize {
        let c = get(pyramid, below + i);
        put_count(pyramid, at, i, c[0] + c[1] + c[2] + c[3]);
    }
}

/// Twin of `traverse`: output `k` (below the total at the top, and one per thread of the
/// dispatch for `count` outputs) found by descending from the top, at each level into the
/// child whose range of kept elements holds it.
///
/// ```
/// use lumbre_compact::twin::hpyramid::{self, HpParams};
/// let mut offsets = [0; 16];
/// offsets[2] = 1; // level 1 in tuple 0, the top (level 2) in tuple 1
/// let p = HpParams { n: 6, level: 2, count: 6, mode: 2, offsets, ..Default::default() };
/// let mut out = [0u32; 6];
/// hpyramid::traverse(&p, &[], &[1, 1, 0, 1, 0, 1], &[[3, 1, 0, 0], [4, 0, 0, 0]], &mut out);
/// assert_eq!(out, [0, 1, 3, 5, 0, 0]);
/// ```
pub fn traverse(p: &HpParams, values: &[u32], flags: &[u32], pyramid: &[[u32; 4]], out: &mut [u32]) {
    let top = p.level;
    let total = get(pyramid, level_offset(p, top))[0] as usize;
    let threads = (p.count as usize).div_ceil(WG) * WG;
    for k in 0..total.min(threads) {
        let mut node = 0;
        let mut rest = k as u32;
        for l in (1..=top).rev() {
            let c = get(pyramid, level_offset(p, l) + node);
            let mut child = 0;
            while child < 3 && rest >= c[child] {
                rest -= c[child];
                child += 1;
            }
            node = 4 * node + child;
        }
        // `node` is a level-1 entry: the `rest`-th kept element among its four.
        let mut g = 4 * node;
        for e in 4 * node..4 * node + 4 {
            if keep(p, values, flags, e) == 1 {
                if rest == 0 {
                    g = e;
                    break;
                }
                rest -= 1;
            }
        }
        let v = if p.mode & 2 != 0 { p.index_base.wrapping_add(g as u32) } else { get(values, g) };
        put(out, k, v);
    }
}
