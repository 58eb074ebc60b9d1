//! CPU twins of `octree/build.wgsl` (both variants: keys of one word up to depth 10, of two
//! beyond, as `params.depth` says). Levels are word planes: word `f` of node `j` at
//! `f * capacity + j`, the key's words first, then first child, child mask, count and the
//! five sums.
//!
//! A twin takes the entry point's uniform and the buffers it binds, as slices in binding
//! order (read-only as `&[T]`, written as `&mut [T]`), and computes what one dispatch
//! computes, bit for bit; reads past a slice's end give zero and writes past it are
//! dropped, as robust buffer access allows on the GPU.

use lumbre_gpu::stages::{get, put, threads};

use crate::node::NO_CHILD;

/// The uniform of `octree/build.wgsl` (`Params`).
///
/// ```
/// let p = lumbre_octree::twin::build::BuildParams { n: 10, depth: 4, level: 4, out_cap: 10 };
/// assert_eq!(p.level, p.depth); // the leaf stages
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct BuildParams {
    /// Sorted codes (leaf stages) or child nodes' capacity (parent stages: the stride of the
    /// children's word planes).
    pub n: u32,
    /// Depth of the tree; above 10 keys take two words (the `BUILD_KEY64` variant).
    pub depth: u32,
    /// The level being built.
    pub level: u32,
    /// Capacity of the level being built: the stride of its word planes.
    pub out_cap: u32,
}
#[cfg(feature = "gpu")]
const _: () = assert!(
    size_of::<BuildParams>() == lumbre_shaders::octree::BUILD_KEY32_PARAMS_SIZE
        && size_of::<BuildParams>() == lumbre_shaders::octree::BUILD_KEY64_PARAMS_SIZE
);

/// Words of the key planes at `depth` (the variant the GPU build picks).
fn key_words(p: &BuildParams) -> usize {
    if p.depth > lumbre_morton::NodeKey32::MAX_LEVEL { 2 } else { 1 }
}

/// Sorted leaf code `i` (one or two words each).
fn code(p: &BuildParams, codes: &[u32], i: usize) -> u64 {
    match key_words(p) {
        1 => get(codes, i) as u64,
        _ => get(codes, 2 * i) as u64 | (get(codes, 2 * i + 1) as u64) << 32,
    }
}

/// The key of child `k` from the children's planes (stride `n`).
fn child_key(p: &BuildParams, children: &[u32], k: usize) -> u64 {
    let n = p.n as usize;
    let lo = get(children, k) as u64;
    if key_words(p) == 1 { lo } else { lo | (get(children, n + k) as u64) << 32 }
}

fn child_word(p: &BuildParams, children: &[u32], k: usize, w: usize) -> u32 {
    get(children, w * p.n as usize + k)
}

/// Writes node `j` of the level being built: key, first child, child mask, count, sums.
fn put_node(p: &BuildParams, nodes: &mut [u32], j: usize, key: u64, words: [u32; 8]) {
    let (kw, cap) = (key_words(p), p.out_cap as usize);
    put(nodes, j, key as u32);
    if kw == 2 {
        put(nodes, cap + j, (key >> 32) as u32);
    }
    for (f, w) in words.into_iter().enumerate() {
        put(nodes, (kw + f) * cap + j, w);
    }
}

/// The end of run `j` of `runs` (its start is `starts[j]`): the next run's start, or `end`.
fn run_end(starts: &[u32], j: usize, runs: usize, end: u32) -> u32 {
    if j + 1 < runs { get(starts, j + 1) } else { end }
}

/// Twin of `leaf_flags`: 1 where a run of equal sorted codes starts.
///
/// ```
/// use lumbre_octree::twin::build::{self, BuildParams};
/// let mut flags = [0u32; 4];
/// build::leaf_flags(&BuildParams { n: 4, depth: 2, level: 2, out_cap: 4 }, &[1, 1, 5, 6], &mut flags);
/// assert_eq!(flags, [1, 0, 1, 1]);
/// ```
pub fn leaf_flags(p: &BuildParams, codes: &[u32], flags: &mut [u32]) {
    for i in 0..p.n as usize {
        put(flags, i, (i == 0 || code(p, codes, i) != code(p, codes, i - 1)) as u32);
    }
}

/// Twin of `leaf_nodes`: one leaf per run of equal codes (`starts[..count[0]]`), with its
/// key, point count and the sums of its points' attributes (`attrs[order[k]]`).
///
/// ```
/// use lumbre_octree::twin::build::{self, BuildParams};
/// let p = BuildParams { n: 3, depth: 1, level: 1, out_cap: 2 };
/// let attrs = [[10, 0], [20, 1], [30, 0]]; // red 10, 20, 30; refraction 0, 1, 0
/// let mut nodes = [0u32; 2 * 9];
/// build::leaf_nodes(&p, &[1, 1, 5], &[0, 1, 2], &attrs, &[0, 2], &[2], &mut nodes);
/// assert_eq!((nodes[0], nodes[1]), (0b1001, 0b1101)); // keys: marker bit 3 above the codes
/// assert_eq!((nodes[3 * 2], nodes[4 * 2], nodes[8 * 2]), (2, 30, 1)); // count, red sum, refraction sum
/// ```
pub fn leaf_nodes(
    p: &BuildParams,
    codes: &[u32],
    order: &[u32],
    attrs: &[[u32; 2]],
    starts: &[u32],
    count: &[u32],
    nodes: &mut [u32],
) {
    let runs = get(count, 0) as usize;
    for j in 0..runs.min(threads(p.out_cap as usize, 256)) {
        let (start, end) = (get(starts, j), run_end(starts, j, runs, p.n));
        let mut sums = [0u32; 5];
        for k in start..end {
            let [rgbr, refr] = get(attrs, get(order, k as usize) as usize);
            for (c, s) in sums[..4].iter_mut().enumerate() {
                *s = s.wrapping_add(rgbr >> (8 * c) & 0xff);
            }
            sums[4] = sums[4].wrapping_add(refr);
        }
        let key = code(p, codes, start as usize) | 1u64 << (3 * p.depth);
        let [r, g, b, refl, refr] = sums;
        put_node(p, nodes, j, key, [NO_CHILD, 0, end.wrapping_sub(start), r, g, b, refl, refr]);
    }
}

/// Twin of `parent_flags`: 1 where the parent of the children (`child_count[0]` of them, in
/// planes of stride `n`) changes, 0 past the children.
///
/// ```
/// use lumbre_octree::twin::build::{self, BuildParams};
/// let p = BuildParams { n: 4, depth: 2, level: 1, out_cap: 4 };
/// let children = [0o100, 0o101, 0o112, 0, 0, 0, 0, 0]; // keys (then other planes)
/// let mut flags = [9u32; 4];
/// build::parent_flags(&p, &children, &[3], &mut flags);
/// assert_eq!(flags, [1, 0, 1, 0]);
/// ```
pub fn parent_flags(p: &BuildParams, children: &[u32], child_count: &[u32], flags: &mut [u32]) {
    let count = get(child_count, 0) as usize;
    for j in 0..p.n as usize {
        let starts = j < count && (j == 0 || child_key(p, children, j) >> 3 != child_key(p, children, j - 1) >> 3);
        put(flags, j, starts as u32);
    }
}

/// Twin of `parent_nodes`: one parent per run of children (`starts[..count[0]]`), with its
/// key, first child (within the children's level), child mask, count and sums.
///
/// ```
/// use lumbre_octree::twin::build::{self, BuildParams};
/// let p = BuildParams { n: 2, depth: 1, level: 0, out_cap: 1 };
/// // Two leaves (keys 0o10 and 0o17), planes of stride 2: key, first, mask, count, 5 sums.
/// let children = [0o10, 0o17, !0, !0, 0, 0, 1, 2, 5, 6, 0, 0, 0, 0, 0, 0, 0, 0];
/// let mut parent = [0u32; 9];
/// build::parent_nodes(&p, &[0], &[1], &children, &[2], &mut parent);
/// assert_eq!(parent, [1, 0, 0b1000_0001, 3, 11, 0, 0, 0, 0]);
/// ```
pub fn parent_nodes(
    p: &BuildParams,
    starts: &[u32],
    count: &[u32],
    children: &[u32],
    child_count: &[u32],
    nodes: &mut [u32],
) {
    let (runs, kw) = (get(count, 0) as usize, key_words(p));
    for j in 0..runs.min(threads(p.out_cap as usize, 256)) {
        let (start, end) = (get(starts, j), run_end(starts, j, runs, get(child_count, 0)));
        let (mut points, mut mask, mut sums) = (0u32, 0u32, [0u32; 5]);
        for k in start as usize..end as usize {
            points = points.wrapping_add(child_word(p, children, k, kw + 2));
            mask |= 1 << (child_key(p, children, k) & 7);
            for (c, s) in sums.iter_mut().enumerate() {
                *s = s.wrapping_add(child_word(p, children, k, kw + 3 + c));
            }
        }
        let key = child_key(p, children, start as usize) >> 3;
        let [r, g, b, refl, refr] = sums;
        put_node(p, nodes, j, key, [start, mask, points, r, g, b, refl, refr]);
    }
}
