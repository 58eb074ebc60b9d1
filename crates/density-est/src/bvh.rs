//! Our index: a bounding volume hierarchy over the disks, traversed by every segment like a
//! ray (segments are long and disks small, so a hierarchy over the disks prunes far better
//! than one over segment boxes, which span much of the scene). The hierarchy is a linear BVH
//! (Karras 2012): disk centres in Morton order (`lumbre_morton`), a stable radix sort
//! (`lumbre_compact`), the radix tree of the sorted codes, boxes bottom-up, then nodes that
//! hold both children's boxes. Crossings add to per-disk fixed-point sums, so the
//! segments' order of arrival does not matter. Every stage has a twin entry point in
//! `density/bvh.wgsl`; the trees are identical (integer topology, boxes by min and max).

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

use glam::Vec3;
use lumbre_compact::radix_sort_cpu;
use lumbre_gpu::Progress;
use lumbre_morton::encode_u32;
use rayon::prelude::*;

use crate::boxes::SegRay;
use crate::crossing::crossing;
use crate::fixed::{Acc, pow2, quantize3};
use crate::problem::{Aabb, Prepared, Segment};

/// A child reference that is a disk (its index in the low 31 bits).
pub(crate) const LEAF_BIT: u32 = 1 << 31;
/// No child (the one-disk tree's second child; the root's parent).
pub(crate) const NONE: u32 = u32::MAX;
/// The traversal stack's size: radix trees of 30-bit codes with index tie-breaks are at
/// most 62 deep.
pub(crate) const STACK: usize = 64;

/// An inner node as the GPU stores it (four vec4s): each child's box, with the child
/// references in the first two boxes' fourth words.
#[repr(C, align(64))]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub(crate) struct BvhNode {
    pub lo_a: [f32; 3],
    pub left: u32,
    pub hi_a: [f32; 3],
    pub right: u32,
    pub lo_b: [f32; 3],
    pub _pad0: u32,
    pub hi_b: [f32; 3],
    pub _pad1: u32,
}

/// The box of the disk centres, for Morton codes: `(min, 1024 / size)`, sizes at least the
/// box padding (so the scale stays finite).
pub(crate) fn centre_grid(prep: &Prepared) -> (Vec3, Vec3) {
    let mut b = Aabb { lo: Vec3::ZERO, hi: Vec3::ZERO };
    if let Some(first) = prep.disks.first() {
        b = Aabb { lo: first.centre.into(), hi: first.centre.into() };
    }
    for d in &prep.disks {
        let c = Vec3::from(d.centre);
        b = b.union(Aabb { lo: c, hi: c });
    }
    (b.lo, Vec3::splat(1024.0) / (b.hi - b.lo).max(Vec3::splat(prep.pad)))
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
    [encode(b.lo.x), encode(b.lo.y), encode(b.lo.z), encode(b.hi.x), encode(b.hi.y), encode(b.hi.z)]
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

/// Stage `pack`: inner nodes with both children's boxes, leaves referring to disk indices.
pub(crate) fn pack(children: &[[u32; 2]], boxes: &[[u32; 6]], order: &[u32], disk_boxes: &[Aabb]) -> Vec<BvhNode> {
    let child = |c: u32| -> (Aabb, u32) {
        if c == NONE {
            (Aabb { lo: Vec3::ZERO, hi: Vec3::ZERO }, NONE)
        } else if c & LEAF_BIT != 0 {
            let d = order[(c & !LEAF_BIT) as usize];
            (disk_boxes[d as usize], LEAF_BIT | d)
        } else {
            let w = boxes[c as usize];
            let lo = Vec3::new(decode(w[0]), decode(w[1]), decode(w[2]));
            let hi = Vec3::new(decode(w[3]), decode(w[4]), decode(w[5]));
            (Aabb { lo, hi }, c)
        }
    };
    children
        .par_iter()
        .map(|&[l, r]| {
            let ((a, left), (b, right)) = (child(l), child(r));
            BvhNode {
                lo_a: a.lo.into(),
                left,
                hi_a: a.hi.into(),
                right,
                lo_b: b.lo.into(),
                hi_b: b.hi.into(),
                ..BvhNode::default()
            }
        })
        .collect()
}

/// The whole build: inner nodes (the root first); a one-disk tree is one node whose second
/// child is [`NONE`]; no disk, no node.
pub(crate) fn build(prep: &Prepared) -> Vec<BvhNode> {
    let n = prep.disks.len();
    let (lo, inv) = centre_grid(prep);
    let mut codes = morton(prep, lo, inv);
    let mut order: Vec<u32> = (0..n as u32).collect();
    radix_sort_cpu(&mut codes, Some(&mut order));
    if n == 1 {
        return pack(&[[LEAF_BIT, NONE]], &[], &order, &prep.disk_boxes);
    }
    let (children, inner_parent, leaf_parent) = hierarchy(&codes);
    let boxes = refit(&order, &inner_parent, &leaf_parent, &prep.disk_boxes);
    pack(&children, &boxes, &order, &prep.disk_boxes)
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

/// One segment through the tree: every disk it crosses gets its power. Returns (inner
/// nodes visited, disks tested).
pub(crate) fn traverse_one(
    nodes: &[BvhNode],
    prep: &Prepared,
    s: &Segment,
    scale: f32,
    out: &AtomicAccs,
) -> (u64, u64) {
    if nodes.is_empty() {
        return (0, 0);
    }
    let ray = SegRay::new(s.start, s.end, prep.pad * 0.5);
    let mut stack = [0u32; STACK];
    let mut sp = 1usize;
    let (mut visited, mut tested) = (0u64, 0u64);
    while sp > 0 {
        sp -= 1;
        let node = &nodes[stack[sp] as usize];
        visited += 1;
        let kids = [
            (node.left, Aabb { lo: node.lo_a.into(), hi: node.hi_a.into() }),
            (node.right, Aabb { lo: node.lo_b.into(), hi: node.hi_b.into() }),
        ];
        for (c, b) in kids {
            if c == NONE || !ray.hits(&b) {
                continue;
            }
            if c & LEAF_BIT != 0 {
                let d = (c & !LEAF_BIT) as usize;
                tested += 1;
                if crossing(s.start, s.end, &prep.disks[d]).is_some() {
                    out.add(d, quantize3(s.power, scale));
                }
            } else {
                stack[sp] = c;
                sp += 1;
            }
        }
    }
    (visited, tested)
}

/// The order in which the CPU traverses the segments: by the Morton code of their
/// midpoints in the root box, so that consecutive segments of a thread visit nearby nodes
/// (the traversal is bound by memory latency; this halved its time on 1e5 x 1e5).
fn coherent_order(segments: &[Segment], prep: &Prepared) -> Vec<u32> {
    let lo = prep.root.lo;
    let inv = Vec3::splat(1024.0) / (prep.root.hi - prep.root.lo);
    let mut keys: Vec<u32> = segments
        .par_iter()
        .map(|s| {
            let m = (s.start + s.end) * 0.5;
            encode_u32(((m - lo) * inv).floor().clamp(Vec3::ZERO, Vec3::splat(1023.0)).as_uvec3().to_array())
        })
        .collect();
    let mut order: Vec<u32> = (0..segments.len() as u32).collect();
    radix_sort_cpu(&mut keys, Some(&mut order));
    order
}

/// Stage `traverse`: every segment through the tree (rayon over segments, in
/// [`coherent_order`]; sums by atomic integer addition). Returns the sums, node visits and
/// disks tested.
pub(crate) fn traverse(
    nodes: &[BvhNode],
    segments: &[Segment],
    prep: &Prepared,
    progress: &dyn Progress,
) -> (Vec<Acc>, u64, u64) {
    let scale = pow2(prep.scale_exp);
    let out = AtomicAccs::new(prep.disks.len());
    let done = AtomicU64::new(0);
    const CHUNK: usize = 4096;
    let order = coherent_order(segments, prep);
    let (visited, tested) = order
        .par_chunks(CHUNK)
        .map(|chunk| {
            let mut sum = (0, 0);
            for &i in chunk {
                let s = &segments[i as usize];
                let (v, t) = traverse_one(nodes, prep, s, scale, &out);
                sum = (sum.0 + v, sum.1 + t);
            }
            let d = done.fetch_add(chunk.len() as u64, Ordering::Relaxed) + chunk.len() as u64;
            progress.update("gather", d, segments.len() as u64);
            sum
        })
        .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1));
    (out.into_accs(), visited, tested)
}
