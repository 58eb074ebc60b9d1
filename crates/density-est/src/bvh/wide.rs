//! The CPU's traversal of the disks' BVH: the binary tree collapsed into four-wide nodes
//! (each holds its grandchildren's boxes, decoded once from the quantized boxes the GPU
//! reads), so one SIMD slab test decides four boxes at once and a segment visits about half
//! as many nodes. The boxes are the binary tree's, so the disks tested are the same.

use glam::{Vec3, Vec4};

use crate::boxes::SegRay;
use crate::bvh::node::{BvhNode, LEAF_BIT, NONE, QuantGrid};

/// Four children: their boxes by bound and axis (lane `k` is child `k`), and their
/// references (a wide node's index, `LEAF_BIT | sorted position`, or [`NONE`]).
#[derive(Clone, Copy, Debug)]
pub(crate) struct WideNode {
    lo: [Vec4; 3],
    hi: [Vec4; 3],
    pub child: [u32; 4],
}

/// Stage `widen` (CPU only): the binary `nodes` (root first) as four-wide nodes (root
/// first). A binary child that is an inner node is replaced by its two children; a disk or
/// an empty slot stays (an empty lane has an empty box).
pub(crate) fn widen(nodes: &[BvhNode], grid: &QuantGrid) -> Vec<WideNode> {
    if nodes.is_empty() {
        return Vec::new();
    }
    let mut wide = Vec::with_capacity(nodes.len() / 2 + 1);
    // (binary inner node, the wide node it becomes)
    let mut todo = vec![(0u32, 0u32)];
    wide.push(empty());
    while let Some((b, w)) = todo.pop() {
        let node = &nodes[b as usize];
        let mut lanes: Vec<(u32, [Vec3; 2])> = Vec::with_capacity(4);
        for (c, words) in [(node.left, &node.boxes[..3]), (node.right, &node.boxes[3..])] {
            if c == NONE {
                continue;
            }
            if c & LEAF_BIT != 0 {
                let bx = grid.decode(words);
                lanes.push((c, [bx.min, bx.max]));
                continue;
            }
            let inner = &nodes[c as usize];
            for (g, words) in [(inner.left, &inner.boxes[..3]), (inner.right, &inner.boxes[3..])] {
                if g != NONE {
                    let bx = grid.decode(words);
                    lanes.push((g, [bx.min, bx.max]));
                }
            }
        }
        let mut out = empty();
        for (k, (c, [lo, hi])) in lanes.into_iter().enumerate() {
            let child = if c & LEAF_BIT != 0 {
                c
            } else {
                wide.push(empty());
                let index = wide.len() as u32 - 1;
                todo.push((c, index));
                index
            };
            out.child[k] = child;
            for a in 0..3 {
                out.lo[a][k] = lo[a];
                out.hi[a][k] = hi[a];
            }
        }
        wide[w as usize] = out;
    }
    wide
}

/// A node with four empty lanes: boxes at infinity, which no segment meets (their slab
/// parameters are all +inf or all -inf, never NaN).
fn empty() -> WideNode {
    WideNode { lo: [Vec4::splat(f32::INFINITY); 3], hi: [Vec4::splat(f32::INFINITY); 3], child: [NONE; 4] }
}

/// The lanes of `node` whose boxes `ray` meets, as bits (lane `k` is bit `k`): the test of
/// [`SegRay::hits`] on four boxes.
#[inline]
pub(crate) fn hit_lanes(ray: &SegRay, node: &WideNode) -> u32 {
    let (a, inv, flat) = (ray.a.to_array(), ray.inv.to_array(), ray.flat.bitmask());
    let mut near = Vec4::ZERO;
    let mut far = Vec4::ONE;
    let mut inside = Vec4::ONE.cmpge(Vec4::ZERO);
    for axis in 0..3 {
        let (lo, hi) = (node.lo[axis], node.hi[axis]);
        if flat & (1 << axis) != 0 {
            let p = Vec4::splat(a[axis]);
            inside &= p.cmpge(lo) & p.cmple(hi);
        } else {
            let (p, s) = (Vec4::splat(a[axis]), Vec4::splat(inv[axis]));
            let t0 = (lo - p) * s;
            let t1 = (hi - p) * s;
            near = near.max(t0.min(t1));
            far = far.min(t0.max(t1));
        }
    }
    (inside & near.cmple(far)).bitmask()
}

#[cfg(test)]
mod tests {
    use super::*;
    use lumbre_kdtree::Aabb;

    #[test]
    fn four_lanes_agree_with_the_single_box_test() {
        let boxes = [
            Aabb::new(Vec3::ZERO, Vec3::ONE),
            Aabb::new(Vec3::splat(2.0), Vec3::splat(3.0)),
            Aabb::new(Vec3::new(0.0, 0.4, 0.4), Vec3::new(0.1, 0.6, 0.6)),
            Aabb::new(Vec3::splat(0.5), Vec3::splat(0.5)),
        ];
        let mut node = empty();
        for (k, b) in boxes.iter().enumerate() {
            for a in 0..3 {
                node.lo[a][k] = b.min[a];
                node.hi[a][k] = b.max[a];
            }
        }
        let segments = [
            (Vec3::splat(-1.0), Vec3::splat(4.0)),
            (Vec3::new(-1.0, 0.5, 0.5), Vec3::new(0.05, 0.5, 0.5)),
            (Vec3::new(0.5, 0.5, -1.0), Vec3::new(0.5, 0.5, 2.0)),
            (Vec3::new(0.05, 0.5, 0.5), Vec3::new(0.05, 0.5, 0.5)),
            (Vec3::splat(1.5), Vec3::splat(1.8)),
        ];
        for (a, b) in segments {
            let ray = SegRay::new(a, b, 1e-3);
            let single = boxes.iter().enumerate().fold(0, |m, (k, bx)| m | (ray.hits(bx) as u32) << k);
            assert_eq!(hit_lanes(&ray, &node), single, "{a} -> {b}");
        }
        // Empty lanes are never met.
        assert_eq!(hit_lanes(&SegRay::new(Vec3::splat(-9.0), Vec3::splat(9.0), 1e-3), &empty()), 0);
    }
}
