//! CPU twins of `octree/packed.wgsl`: which nodes own a payload, the level offsets, each
//! chain's shared payload index, and the gathers into the packed arrays. A level's nodes
//! are word planes of stride `params.n`: the key's `key_words` planes, then first child,
//! child mask, count and five sums.
//!
//! A twin takes the entry point's uniform and the buffers it binds, as slices in binding
//! order (read-only as `&[T]`, written as `&mut [T]`), and computes what one dispatch
//! computes, bit for bit; reads past a slice's end give zero and writes past it are
//! dropped, as robust buffer access allows on the GPU.

use lumbre_gpu::stages::{get, put, threads};

use crate::packed::{Inner, Payload};

/// The uniform of `octree/packed.wgsl` (`Params`).
///
/// ```
/// let p = lumbre_octree::twin::packed::PackedParams { n: 8, depth: 3, level: 3, key_words: 1, ..Default::default() };
/// assert_eq!(p._pad, [0; 2]);
/// ```
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct PackedParams {
    /// Capacity of the level: the stride of its word planes.
    pub n: u32,
    /// Depth of the tree.
    pub depth: u32,
    /// The level.
    pub level: u32,
    /// Words of the key planes that lead each level's planes (1 or 2).
    pub key_words: u32,
    /// Where the level's flags start in `owner` (and `payload_of`).
    pub seg: u32,
    /// Where the next deeper level's flags start.
    pub seg_below: u32,
    /// Zero (padding).
    pub _pad: [u32; 2],
}
#[cfg(feature = "gpu")]
const _: () = assert!(size_of::<PackedParams>() == lumbre_shaders::octree::PACKED_PARAMS_SIZE);

/// Word `f` after the key of node `j` of the level.
fn word(p: &PackedParams, level: &[u32], j: usize, f: usize) -> u32 {
    get(level, (p.key_words as usize + f) * p.n as usize + j)
}

/// Nodes of the level, and no more than the dispatch's threads.
fn nodes_of(p: &PackedParams, counts: &[u32]) -> usize {
    (get(counts, p.level as usize) as usize).min(threads(p.n as usize, 256))
}

/// Twin of `owner_flags`: 1 for each node of the level that owns a payload (a leaf, or a
/// node without exactly one child), 0 past the level's length, at `owner[seg..seg + n]`.
///
/// ```
/// use lumbre_octree::twin::packed::{self, PackedParams};
/// let p = PackedParams { n: 3, depth: 2, level: 1, key_words: 1, seg: 1, ..Default::default() };
/// let level = [0, 0, 0, /* first */ 0, 1, 0, /* mask */ 0b1, 0b110, 0];
/// let mut owner = [7u32; 4];
/// packed::owner_flags(&p, &[1, 2, 5], &level, &mut owner);
/// assert_eq!(owner, [7, 0, 1, 0]);
/// ```
pub fn owner_flags(p: &PackedParams, counts: &[u32], level: &[u32], owner: &mut [u32]) {
    let count = get(counts, p.level as usize) as usize;
    for j in 0..p.n as usize {
        let own = j < count && (p.level == p.depth || word(p, level, j, 1).count_ones() != 1);
        put(owner, p.seg as usize + j, own as u32);
    }
}

/// Twin of `level_offsets` (one thread): the interior levels' offsets, the interior node
/// count, and the payload count (the scan of `owner` at the root, `params.seg`, plus the
/// root's own flag).
///
/// ```
/// use lumbre_octree::twin::packed::{self, PackedParams};
/// let p = PackedParams { depth: 2, seg: 4, ..Default::default() };
/// let mut offsets = [0u32; 4];
/// packed::level_offsets(&p, &[1, 2, 3], &mut offsets, &[1, 1, 1, 1, 1], &[0, 1, 2, 3, 3]);
/// assert_eq!(offsets, [0, 1, 3, 4]);
/// ```
pub fn level_offsets(p: &PackedParams, counts: &[u32], offsets: &mut [u32], owner: &[u32], payload_of: &[u32]) {
    let mut at = 0u32;
    for l in 0..p.depth as usize {
        put(offsets, l, at);
        at = at.wrapping_add(get(counts, l));
    }
    put(offsets, p.depth as usize, at);
    let seg = p.seg as usize;
    put(offsets, p.depth as usize + 1, get(payload_of, seg).wrapping_add(get(owner, seg)));
}

/// Twin of `payload_index`: each node of the level without a payload of its own takes its
/// only child's payload index (levels run deepest first).
///
/// ```
/// use lumbre_octree::twin::packed::{self, PackedParams};
/// let p = PackedParams { n: 1, depth: 2, level: 0, key_words: 1, seg: 2, seg_below: 0, ..Default::default() };
/// let level = [0, /* first */ 1, /* mask */ 0b100];
/// let mut payload_of = [4u32, 5, 0];
/// packed::payload_index(&p, &[1, 2, 2], &level, &[1, 1, 0], &mut payload_of);
/// assert_eq!(payload_of[2], 5);
/// ```
pub fn payload_index(p: &PackedParams, counts: &[u32], level: &[u32], owner: &[u32], payload_of: &mut [u32]) {
    let (seg, below) = (p.seg as usize, p.seg_below as usize);
    for j in 0..nodes_of(p, counts) {
        if get(owner, seg + j) == 0 {
            let child = get(payload_of, below + word(p, level, j, 0) as usize);
            put(payload_of, seg + j, child);
        }
    }
}

/// Twin of `gather_nodes`: the level's interior nodes at `offsets[level]`, child indices made
/// global (except one level above the leaves, whose children are the first payloads).
///
/// ```
/// use lumbre_octree::twin::packed::{self, PackedParams};
/// use lumbre_octree::Inner;
/// let p = PackedParams { n: 1, depth: 2, level: 0, key_words: 1, seg: 2, ..Default::default() };
/// let mut nodes = [Inner::default(); 2];
/// packed::gather_nodes(&p, &[1, 1, 2], &[0, 1, 2, 3], &[0, 0, 0b11], &mut nodes, &[0, 1, 2]);
/// assert_eq!(nodes[0], Inner { first_child: 1, child_mask: 0b11, payload: 2 });
/// ```
pub fn gather_nodes(
    p: &PackedParams,
    counts: &[u32],
    offsets: &[u32],
    level: &[u32],
    nodes: &mut [Inner],
    payload_of: &[u32],
) {
    let l = p.level as usize;
    let shift = if p.level + 1 < p.depth { get(offsets, l + 1) } else { 0 };
    for j in 0..nodes_of(p, counts) {
        let node = Inner {
            first_child: word(p, level, j, 0).wrapping_add(shift),
            child_mask: word(p, level, j, 1),
            payload: get(payload_of, p.seg as usize + j),
        };
        put(nodes, get(offsets, l).wrapping_add(j as u32) as usize, node);
    }
}

/// Twin of `gather_payloads`: the payload (count and sums) of each node of the level that
/// owns one, at its payload index.
///
/// ```
/// use lumbre_octree::twin::packed::{self, PackedParams};
/// use lumbre_octree::Payload;
/// let p = PackedParams { n: 1, depth: 1, level: 1, key_words: 1, ..Default::default() };
/// let level = [9, !0, 0, 3, 1, 2, 3, 4, 5];
/// let mut payloads = [Payload::default(); 1];
/// packed::gather_payloads(&p, &[1, 1], &level, &[1], &[0], &mut payloads);
/// assert_eq!(payloads[0], Payload { count: 3, sum: [1, 2, 3, 4, 5] });
/// ```
pub fn gather_payloads(
    p: &PackedParams,
    counts: &[u32],
    level: &[u32],
    owner: &[u32],
    payload_of: &[u32],
    payloads: &mut [Payload],
) {
    let seg = p.seg as usize;
    for j in 0..nodes_of(p, counts) {
        if get(owner, seg + j) != 0 {
            let w = |f| word(p, level, j, f);
            let payload = Payload { count: w(2), sum: [w(3), w(4), w(5), w(6), w(7)] };
            put(payloads, get(payload_of, seg + j) as usize, payload);
        }
    }
}
