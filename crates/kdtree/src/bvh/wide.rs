//! The CPU's form of the BVH: the binary tree collapsed into eight-wide nodes (a node holds up
//! to eight of its descendants' boxes), so two SIMD slab tests decide eight boxes and a ray
//! visits fewer nodes, and each leaf's triangles copied in blocks of four for the watertight
//! test on four at once. The boxes and leaves are the binary tree's, so the triangles a ray
//! tests, and its hits, are the same.

use glam::{Vec3, Vec4};

use super::BvhNode;
use crate::aabb::Aabb;

/// Children a wide node holds.
pub(crate) const LANES: usize = 8;
/// `Vec4`s a bound of one axis takes.
const QUADS: usize = LANES / 4;

/// [`LANES`] children: their boxes by axis and bound (lane `k` is child `k`, in `Vec4`
/// `k / 4`; an absent child has an empty box, which no ray enters), their references (a wide
/// node's index, or a leaf's first entry of `prim_indices`), triangle counts (0: a node) and
/// a leaf's first block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WideNode {
    pub lo: [[Vec4; QUADS]; 3],
    pub hi: [[Vec4; QUADS]; 3],
    pub child: [u32; LANES],
    pub count: [u32; LANES],
    pub block: [u32; LANES],
}

impl WideNode {
    const EMPTY: WideNode = WideNode {
        lo: [[Vec4::INFINITY; QUADS]; 3],
        hi: [[Vec4::NEG_INFINITY; QUADS]; 3],
        child: [0; LANES],
        count: [0; LANES],
        block: [0; LANES],
    };
}

/// Four of a leaf's triangles: vertex `i`'s coordinate `axis` of lane `k` at `v[i][axis][k]`,
/// and the triangles' indices. A leaf's last block is filled with NaN lanes, which never hit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct TriBlock {
    pub v: [[Vec4; 3]; 3],
    pub tri: [u32; 4],
}

/// The blocks of the leaf `prims` (indices into `tris`).
fn blocks(prims: &[u32], tris: &[[Vec3; 3]], out: &mut Vec<TriBlock>) {
    for chunk in prims.chunks(4) {
        let mut b = TriBlock { v: [[Vec4::NAN; 3]; 3], tri: [u32::MAX; 4] };
        for (k, &i) in chunk.iter().enumerate() {
            for (vertex, p) in tris[i as usize].iter().enumerate() {
                for axis in 0..3 {
                    b.v[vertex][axis][k] = p[axis];
                }
            }
            b.tri[k] = i;
        }
        out.push(b);
    }
}

/// The binary `nodes` (root first) as wide nodes (root first): of a node's children, the inner
/// one of largest surface area is replaced by its two children while there is room; a leaf
/// stays a leaf, its triangles (`prim_indices` into `tris`) copied into blocks.
pub(crate) fn widen(nodes: &[BvhNode], prim_indices: &[u32], tris: &[[Vec3; 3]]) -> (Vec<WideNode>, Vec<TriBlock>) {
    let mut wide = vec![WideNode::EMPTY];
    let mut leaf_blocks = Vec::new();
    // (binary node, the wide node it becomes)
    let mut todo = vec![(0usize, 0usize)];
    while let Some((b, w)) = todo.pop() {
        // The binary node's children; then, while there is room, the inner child of largest
        // surface area replaced by its children.
        let mut lanes: Vec<(Aabb, u32, u32)> = (0..2).map(|i| nodes[b].child(i)).filter(|c| !c.0.is_empty()).collect();
        while lanes.len() < LANES {
            let widest = (0..lanes.len())
                .filter(|&i| lanes[i].2 == 0)
                .max_by(|&i, &j| lanes[i].0.surface_area().total_cmp(&lanes[j].0.surface_area()));
            let Some(i) = widest else { break };
            let inner = lanes.remove(i).1 as usize;
            lanes.extend((0..2).map(|g| nodes[inner].child(g)).filter(|c| !c.0.is_empty()));
        }
        let mut out = WideNode::EMPTY;
        for (k, (bx, child, count)) in lanes.into_iter().enumerate() {
            for axis in 0..3 {
                out.lo[axis][k / 4][k % 4] = bx.min[axis];
                out.hi[axis][k / 4][k % 4] = bx.max[axis];
            }
            out.count[k] = count;
            out.block[k] = leaf_blocks.len() as u32;
            if count > 0 {
                blocks(&prim_indices[child as usize..(child + count) as usize], tris, &mut leaf_blocks);
            }
            out.child[k] = if count > 0 {
                child
            } else {
                wide.push(WideNode::EMPTY);
                todo.push((child as usize, wide.len() - 1));
                (wide.len() - 1) as u32
            };
        }
        wide[w] = out;
    }
    (wide, leaf_blocks)
}

/// The most entries the wide walk's stack can hold on `wide`: a node pushes at most all its
/// inner children but one, then walks one of them (children come after their parent).
pub(crate) fn stack_need(wide: &[WideNode]) -> usize {
    let mut need = vec![0usize; wide.len()];
    for w in (0..wide.len()).rev() {
        let n = &wide[w];
        let inner: Vec<usize> = (0..LANES)
            .filter(|&k| n.count[k] == 0 && n.lo[0][k / 4][k % 4] <= n.hi[0][k / 4][k % 4])
            .map(|k| n.child[k] as usize)
            .collect();
        need[w] = match inner.iter().map(|&c| need[c]).max() {
            Some(deepest) => inner.len() - 1 + deepest,
            None => 0,
        };
    }
    need.first().copied().unwrap_or(0)
}

/// Where a ray enters each of a node's boxes within `[t0, t1]` (`f32::INFINITY`: it does
/// not): the binary walk's slab test, lane by lane. `near_lo[k]` says whether axis `k`'s near
/// plane is the box's low one (`inv[k] >= 0`).
#[inline]
pub(crate) fn enter(
    n: &WideNode,
    o: Vec3,
    inv: Vec3,
    near_lo: [bool; 3],
    t0: f32,
    t1: f32,
    slack: f32,
) -> [f32; LANES] {
    let mut out = [0.0; LANES];
    for q in 0..QUADS {
        let mut tn = Vec4::splat(t0);
        let mut tf = Vec4::splat(t1);
        for k in 0..3 {
            let (near, far) = if near_lo[k] { (n.lo[k][q], n.hi[k][q]) } else { (n.hi[k][q], n.lo[k][q]) };
            let (ok, ik) = (Vec4::splat(o[k]), Vec4::splat(inv[k]));
            tn = tn.max((near - ok) * ik);
            tf = tf.min((far - ok) * ik);
        }
        let pos_n = tn.cmpgt(Vec4::ZERO);
        let pos_f = tf.cmpgt(Vec4::ZERO);
        let tn = tn * Vec4::select(pos_n, Vec4::splat(1.0 - slack), Vec4::splat(1.0 + slack));
        let tf = tf * Vec4::select(pos_f, Vec4::splat(1.0 + slack), Vec4::splat(1.0 - slack));
        out[4 * q..4 * q + 4].copy_from_slice(&Vec4::select(tn.cmple(tf), tn, Vec4::INFINITY).to_array());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bvh::{Bvh, BvhOptions};
    use crate::scenes;

    /// Generated scenes of every size need a short stack, and the build stores the bound.
    #[test]
    fn the_stack_bound_is_small_on_real_trees() {
        for n in [1, 10, 1000, 100_000] {
            let tris = scenes::generated_scene(n);
            let bvh = Bvh::build(&tris, &BvhOptions::default());
            assert!(bvh.stack_need <= 64, "{n} triangles: {}", bvh.stack_need);
            assert_eq!(bvh.stack_need, stack_need(&bvh.wide));
        }
        let empty = Bvh::build(&[], &BvhOptions::default());
        assert_eq!(empty.stack_need, 0);
    }
}
