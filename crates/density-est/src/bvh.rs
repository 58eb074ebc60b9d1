//! Our index: a bounding volume hierarchy over the disks, traversed by every segment like a
//! ray (segments are long and disks small, so a hierarchy over the disks prunes far better
//! than one over segment boxes, which span much of the scene). The hierarchy is a linear BVH
//! (Karras 2012): disk centres in Morton order (`lumbre_morton`), a stable radix sort
//! (`lumbre_compact`), the radix tree of the sorted codes, boxes bottom-up, then nodes that
//! hold both children's boxes, quantized to 16 bits per coordinate in the root box (32-byte
//! nodes: a million disks' tree fits a GPU's L2), and the disks copied in tree order.
//! Segments traverse in the Morton order of their midpoints (neighbouring threads, and
//! consecutive segments of a CPU thread, visit the same nodes). Crossings add to per-disk
//! fixed-point sums in tree order, so the order of arrival does not matter, and a last stage
//! puts the sums back in the disks' order. Every stage has a twin entry point in
//! `density/bvh.wgsl`; the trees are identical (integer topology, boxes by min and max,
//! the same quantization). The CPU walks the tree four-wide ([`crate::wide`]) over the same
//! boxes, so it tests the same disks.

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use glam::Vec3;
use lumbre_compact::radix_sort_cpu;
use lumbre_gpu::Progress;
use lumbre_kdtree::Aabb;
use lumbre_morton::encode_u32;
use rayon::prelude::*;

use crate::boxes::SegRay;
use crate::crossing::crossing;
use crate::fixed::{Acc, pow2, quantize3};
use crate::problem::{DiskData, Prepared, Segment};
use crate::wide::{WideNode, hit_lanes, widen};

/// A child reference that is a disk (its sorted position in the low 31 bits).
pub(crate) const LEAF_BIT: u32 = 1 << 31;
/// The disks a tree can hold (2^31: leaf references keep 31 bits).
pub(crate) const MAX_DISKS: usize = 1 << 31;
/// No child (the one-disk tree's second child; the root's parent).
pub(crate) const NONE: u32 = u32::MAX;
/// The traversal stack's size: radix trees of 30-bit codes with index tie-breaks are at
/// most 62 deep.
pub(crate) const STACK: usize = 64;

/// An inner node as the GPU stores it (two vec4<u32>): both children's boxes as 16-bit
/// coordinates in the [`QuantGrid`] (three words per box: lo.x | lo.y << 16,
/// lo.z | hi.x << 16, hi.y | hi.z << 16), and the child references.
#[repr(C, align(32))]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct BvhNode {
    pub boxes: [u32; 6],
    pub left: u32,
    pub right: u32,
}

/// The root box cut in 65535 steps per axis, in which node boxes are stored.
#[derive(Clone, Copy, Debug)]
pub(crate) struct QuantGrid {
    pub lo: Vec3,
    pub step: Vec3,
    pub inv: Vec3,
}

impl QuantGrid {
    pub fn new(prep: &Prepared) -> QuantGrid {
        QuantGrid::of_root(&prep.root)
    }

    /// The grid of a root box.
    pub fn of_root(root: &Aabb) -> QuantGrid {
        let size = root.max - root.min;
        QuantGrid { lo: root.min, step: size / 65535.0, inv: Vec3::splat(65535.0) / size }
    }

    /// Three words holding `b` rounded outwards by one step more than needed (so the decoded
    /// box holds `b` whatever the rounding of the decoding).
    pub fn encode(&self, b: &Aabb) -> [u32; 3] {
        let max = Vec3::splat(65535.0);
        let lo = ((b.min - self.lo) * self.inv).floor() - Vec3::ONE;
        let hi = ((b.max - self.lo) * self.inv).ceil() + Vec3::ONE;
        let lo = lo.clamp(Vec3::ZERO, max).as_uvec3();
        let hi = hi.clamp(Vec3::ZERO, max).as_uvec3();
        [lo.x | lo.y << 16, lo.z | hi.x << 16, hi.y | hi.z << 16]
    }

    /// The box of three words.
    pub fn decode(&self, w: &[u32]) -> Aabb {
        let lo = Vec3::new((w[0] & 0xffff) as f32, (w[0] >> 16) as f32, (w[1] & 0xffff) as f32);
        let hi = Vec3::new((w[1] >> 16) as f32, (w[2] & 0xffff) as f32, (w[2] >> 16) as f32);
        Aabb::new(self.lo + lo * self.step, self.lo + hi * self.step)
    }
}

/// The box of the disk centres, for Morton codes: `(min, 1024 / size)`, sizes at least the
/// box padding (so the scale stays finite).
pub(crate) fn centre_grid(prep: &Prepared) -> (Vec3, Vec3) {
    let mut b = Aabb::new(Vec3::ZERO, Vec3::ZERO);
    if let Some(first) = prep.disks.first() {
        b = Aabb::new(first.centre.into(), first.centre.into());
    }
    for d in &prep.disks {
        b = b.grow(d.centre.into());
    }
    centre_grid_of(&b, prep.pad)
}

/// [`centre_grid`] of the box of the centres `b` (the zero box without disks).
pub(crate) fn centre_grid_of(b: &Aabb, pad: f32) -> (Vec3, Vec3) {
    (b.min, Vec3::splat(1024.0) / (b.max - b.min).max(Vec3::splat(pad)))
}

/// Stage `morton`: 30-bit codes of the disk centres.
pub(crate) fn morton(prep: &Prepared, lo: Vec3, inv: Vec3) -> Vec<u32> {
    prep.disks
        .par_iter()
        .map(|d| {
            let cell = ((Vec3::from(d.centre) - lo) * inv).floor().clamp(Vec3::ZERO, Vec3::splat(1023.0)).as_uvec3();
            encode_u32(cell.to_array())
        })
        .collect()
}

/// The length of the common prefix of sorted keys `i` and `j` (codes, then positions), or
/// -1 out of range.
fn delta(codes: &[u32], i: i64, j: i64) -> i64 {
    if j < 0 || j >= codes.len() as i64 {
        return -1;
    }
    let (a, b) = (codes[i as usize], codes[j as usize]);
    if a != b { (a ^ b).leading_zeros() as i64 } else { 32 + ((i ^ j) as u32).leading_zeros() as i64 }
}

/// Inner node `i` of the radix tree over sorted `codes`: its children (inner index, or
/// `LEAF_BIT | sorted position`).
pub(crate) fn inner_node(codes: &[u32], i: usize) -> [u32; 2] {
    let i = i as i64;
    let d = if delta(codes, i, i + 1) > delta(codes, i, i - 1) { 1 } else { -1 };
    let min = delta(codes, i, i - d);
    let mut lmax = 2;
    while delta(codes, i, i + lmax * d) > min {
        lmax *= 2;
    }
    let mut l = 0;
    let mut t = lmax / 2;
    while t >= 1 {
        if delta(codes, i, i + (l + t) * d) > min {
            l += t;
        }
        t /= 2;
    }
    let j = i + l * d;
    let node = delta(codes, i, j);
    let mut s = 0;
    let mut div = 2;
    loop {
        let t = (l + div - 1) / div;
        if delta(codes, i, i + (s + t) * d) > node {
            s += t;
        }
        if t == 1 {
            break;
        }
        div *= 2;
    }
    let split = i + s * d + d.min(0);
    let left = if split == i.min(j) { LEAF_BIT | split as u32 } else { split as u32 };
    let right = if split + 1 == i.max(j) { LEAF_BIT | (split + 1) as u32 } else { (split + 1) as u32 };
    [left, right]
}

/// Stage `hierarchy`: every inner node's children, and the parents of inner nodes and of
/// leaves (the root's is [`NONE`]).
pub(crate) fn hierarchy(codes: &[u32]) -> (Vec<[u32; 2]>, Vec<u32>, Vec<u32>) {
    let n = codes.len();
    let children: Vec<[u32; 2]> = (0..n.saturating_sub(1)).into_par_iter().map(|i| inner_node(codes, i)).collect();
    let mut inner_parent = vec![NONE; n.saturating_sub(1)];
    let mut leaf_parent = vec![NONE; n];
    for (i, ch) in children.iter().enumerate() {
        for &c in ch {
            if c & LEAF_BIT != 0 {
                leaf_parent[(c & !LEAF_BIT) as usize] = i as u32;
            } else {
                inner_parent[c as usize] = i as u32;
            }
        }
    }
    (children, inner_parent, leaf_parent)
}

/// f32 -> u32 preserving order (for boxes by integer min and max).
pub(crate) fn encode(f: f32) -> u32 {
    let b = f.to_bits();
    if b & 0x8000_0000 == 0 { b | 0x8000_0000 } else { !b }
}

/// The inverse of [`encode`].
pub(crate) fn decode(u: u32) -> f32 {
    f32::from_bits(if u & 0x8000_0000 != 0 { u & 0x7fff_ffff } else { !u })
}

/// A box as six encoded words: lo then hi.
fn encoded(b: &Aabb) -> [u32; 6] {
    [encode(b.min.x), encode(b.min.y), encode(b.min.z), encode(b.max.x), encode(b.max.y), encode(b.max.z)]
}

/// Stage `refit`: inner boxes (six encoded words each), each leaf's box carried up until an
/// ancestor already holds it (the GPU does the same with atomic min and max; the result is
/// the same whatever the order).
pub(crate) fn refit(order: &[u32], inner_parent: &[u32], leaf_parent: &[u32], disk_boxes: &[Aabb]) -> Vec<[u32; 6]> {
    let mut boxes = vec![[u32::MAX, u32::MAX, u32::MAX, 0, 0, 0]; inner_parent.len()];
    for (p, &d) in order.iter().enumerate() {
        let b = encoded(&disk_boxes[d as usize]);
        let mut node = leaf_parent[p];
        while node != NONE {
            let words = &mut boxes[node as usize];
            let mut changed = false;
            for k in 0..3 {
                changed |= b[k] < words[k];
                words[k] = words[k].min(b[k]);
                changed |= b[k + 3] > words[k + 3];
                words[k + 3] = words[k + 3].max(b[k + 3]);
            }
            if !changed {
                break;
            }
            node = inner_parent[node as usize];
        }
    }
    boxes
}

/// Stage `pack`: inner nodes with both children's boxes (quantized), leaves referring to
/// sorted positions (`LEAF_BIT | p`; the disk is `order[p]`).
pub(crate) fn pack(
    children: &[[u32; 2]],
    boxes: &[[u32; 6]],
    order: &[u32],
    disk_boxes: &[Aabb],
    grid: &QuantGrid,
) -> Vec<BvhNode> {
    let child = |c: u32| -> [u32; 3] {
        if c == NONE {
            [0; 3]
        } else if c & LEAF_BIT != 0 {
            grid.encode(&disk_boxes[order[(c & !LEAF_BIT) as usize] as usize])
        } else {
            let w = boxes[c as usize];
            let lo = Vec3::new(decode(w[0]), decode(w[1]), decode(w[2]));
            let hi = Vec3::new(decode(w[3]), decode(w[4]), decode(w[5]));
            grid.encode(&Aabb::new(lo, hi))
        }
    };
    children
        .par_iter()
        .map(|&[l, r]| {
            let (a, b) = (child(l), child(r));
            BvhNode { boxes: [a[0], a[1], a[2], b[0], b[1], b[2]], left: l, right: r }
        })
        .collect()
}

/// The tree: inner nodes (the root first; a one-disk tree is one node whose second child is
/// [`NONE`]; no disk, no node), the disks in tree order, and `order` (sorted position ->
/// disk).
#[derive(Clone, Debug, Default)]
pub(crate) struct Bvh {
    pub nodes: Vec<BvhNode>,
    pub disks: Vec<DiskData>,
    pub order: Vec<u32>,
    pub grid: Option<QuantGrid>,
}

/// Stage `gather`: the disks in tree order.
pub(crate) fn gather(prep: &Prepared, order: &[u32]) -> Vec<DiskData> {
    order.par_iter().map(|&d| prep.disks[d as usize]).collect()
}

/// The whole build.
pub(crate) fn build(prep: &Prepared) -> Bvh {
    let n = prep.disks.len();
    if n == 0 {
        return Bvh::default();
    }
    let grid = QuantGrid::new(prep);
    let (lo, inv) = centre_grid(prep);
    let mut codes = morton(prep, lo, inv);
    let mut order: Vec<u32> = (0..n as u32).collect();
    radix_sort_cpu(&mut codes, Some(&mut order));
    let disks = gather(prep, &order);
    let nodes = if n == 1 {
        pack(&[[LEAF_BIT, NONE]], &[], &order, &prep.disk_boxes, &grid)
    } else {
        let (children, inner_parent, leaf_parent) = hierarchy(&codes);
        let boxes = refit(&order, &inner_parent, &leaf_parent, &prep.disk_boxes);
        pack(&children, &boxes, &order, &prep.disk_boxes, &grid)
    };
    Bvh { nodes, disks, order, grid: Some(grid) }
}

/// Per-disk sums shared by the traversal's threads.
pub(crate) struct AtomicAccs {
    count: Vec<AtomicU32>,
    power: Vec<[AtomicU64; 3]>,
}

impl AtomicAccs {
    pub fn new(n: usize) -> Self {
        AtomicAccs {
            count: (0..n).map(|_| AtomicU32::new(0)).collect(),
            power: (0..n).map(|_| [AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0)]).collect(),
        }
    }

    fn add(&self, d: usize, q: [u64; 3]) {
        self.count[d].fetch_add(1, Ordering::Relaxed);
        for (s, v) in self.power[d].iter().zip(q) {
            if v != 0 {
                s.fetch_add(v, Ordering::Relaxed);
            }
        }
    }

    pub fn into_accs(self) -> Vec<Acc> {
        self.count
            .into_iter()
            .zip(self.power)
            .map(|(c, p)| Acc { count: c.into_inner(), power: p.map(|s| s.into_inner()) })
            .collect()
    }
}

/// One segment through the tree: every disk it crosses gets its power (at its sorted
/// position). Returns (inner nodes visited, disks tested).
#[inline]
pub(crate) fn traverse_one(
    bvh: &Bvh,
    nodes: &[WideNode],
    tau: f32,
    s: &Segment,
    scale: f32,
    out: &AtomicAccs,
) -> (u64, u64) {
    let ray = SegRay::new(s.start, s.end, tau);
    // Four-wide nodes are at most 31 deep and leave at most 3 siblings pending per level.
    let mut stack = [0u32; 3 * STACK / 2];
    let mut sp = 1usize;
    let (mut visited, mut tested) = (0u64, 0u64);
    while sp > 0 {
        sp -= 1;
        let node = &nodes[stack[sp] as usize];
        visited += 1;
        let mut lanes = hit_lanes(&ray, node);
        while lanes != 0 {
            let c = node.child[lanes.trailing_zeros() as usize];
            lanes &= lanes - 1;
            if c & LEAF_BIT != 0 {
                let p = (c & !LEAF_BIT) as usize;
                tested += 1;
                if crossing(s.start, s.end, &bvh.disks[p]).is_some() {
                    out.add(p, quantize3(s.power, scale));
                }
            } else {
                stack[sp] = c;
                sp += 1;
            }
        }
    }
    (visited, tested)
}

/// Stage `segment_keys`: the Morton code of each segment's midpoint in the root box (10
/// bits per axis); the traversal takes segments in the order of these codes.
pub(crate) fn segment_keys(segments: &[Segment], prep: &Prepared) -> Vec<u32> {
    let lo = prep.root.min;
    let inv = Vec3::splat(1024.0) / (prep.root.max - prep.root.min);
    segments
        .par_iter()
        .map(|s| {
            let m = (s.start + s.end) * 0.5;
            encode_u32(((m - lo) * inv).floor().clamp(Vec3::ZERO, Vec3::splat(1023.0)).as_uvec3().to_array())
        })
        .collect()
}

/// Stage `traverse`: every segment through the tree, in the order of [`segment_keys`]
/// (rayon over chunks of that order; sums by atomic integer addition), then stage
/// `unsort`: the sums back in the disks' order. Returns the sums, node visits and disks
/// tested.
pub(crate) fn traverse(
    bvh: &Bvh,
    segments: &[Segment],
    prep: &Prepared,
    progress: &dyn Progress,
) -> (Vec<Acc>, u64, u64) {
    let scale = pow2(prep.scale_exp);
    let Some(grid) = bvh.grid else {
        return (vec![Acc::default(); prep.disks.len()], 0, 0);
    };
    let out = AtomicAccs::new(prep.disks.len());
    let nodes = widen(&bvh.nodes, &grid);
    let done = AtomicU64::new(0);
    let mut keys = segment_keys(segments, prep);
    let mut order: Vec<u32> = (0..segments.len() as u32).collect();
    radix_sort_cpu(&mut keys, Some(&mut order));
    const CHUNK: usize = 4096;
    let tau = prep.pad * 0.5;
    let (visited, tested) = order
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut sum = (0, 0);
            for &i in chunk {
                let (v, t) = traverse_one(bvh, &nodes, tau, &segments[i as usize], scale, &out);
                sum = (sum.0 + v, sum.1 + t);
            }
            let d = done.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
            progress.update("gather", d, segments.len() as u64);
            sum
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (unsort(&out.into_accs(), &bvh.order), visited, tested)
}

/// Stage `unsort`: sums at sorted positions back at their disks.
pub(crate) fn unsort(sorted: &[Acc], order: &[u32]) -> Vec<Acc> {
    let mut out = vec![Acc::default(); sorted.len()];
    for (a, &d) in sorted.iter().zip(order) {
        out[d as usize] = *a;
    }
    out
}
