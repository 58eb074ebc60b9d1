//! The CPU's form of the BVH: the binary tree collapsed into four-wide nodes (a node holds its
//! grandchildren's boxes), so one SIMD slab test decides four boxes and a ray visits about
//! half as many nodes, and each leaf's triangles copied in blocks of four for the watertight
//! test on four at once. The boxes and leaves are the binary tree's, so the triangles a ray
//! tests, and its hits, are the same.

use glam::{Vec3, Vec4};

use super::BvhNode;

/// Four children: their boxes by bound and axis (lane `k` is child `k`; an absent child has
/// an empty box, which no ray enters), their references (a wide node's index, or a leaf's
/// first entry of `prim_indices`), triangle counts (0: a node) and a leaf's first block.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct WideNode {
    pub lo: [Vec4; 3],
    pub hi: [Vec4; 3],
    pub child: [u32; 4],
    pub count: [u32; 4],
    pub block: [u32; 4],
}

impl WideNode {
    const EMPTY: WideNode =
        WideNode { lo: [Vec4::INFINITY; 3], hi: [Vec4::NEG_INFINITY; 3], child: [0; 4], count: [0; 4], block: [0; 4] };
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

/// The binary `nodes` (root first) as four-wide nodes (root first): a binary child that is a
/// node is replaced by its two children; a leaf stays a leaf, its triangles (`prim_indices`
/// into `tris`) copied into blocks.
pub(crate) fn widen(nodes: &[BvhNode], prim_indices: &[u32], tris: &[[Vec3; 3]]) -> (Vec<WideNode>, Vec<TriBlock>) {
    let mut wide = vec![WideNode::EMPTY];
    let mut leaf_blocks = Vec::new();
    // (binary node, the wide node it becomes)
    let mut todo = vec![(0usize, 0usize)];
    while let Some((b, w)) = todo.pop() {
        let mut lanes = Vec::with_capacity(4);
        for i in 0..2 {
            let (bx, child, count) = nodes[b].child(i);
            if bx.is_empty() {
                continue;
            }
            if count > 0 {
                lanes.push((bx.min, bx.max, child, count));
                continue;
            }
            for g in 0..2 {
                let (gb, grand, count) = nodes[child as usize].child(g);
                if !gb.is_empty() {
                    lanes.push((gb.min, gb.max, grand, count));
                }
            }
        }
        let mut out = WideNode::EMPTY;
        for (k, (lo, hi, child, count)) in lanes.into_iter().enumerate() {
            for axis in 0..3 {
                out.lo[axis][k] = lo[axis];
                out.hi[axis][k] = hi[axis];
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

/// Where a ray enters each of a node's four boxes within `[t0, t1]` (`f32::INFINITY`: it
/// does not): the binary walk's slab test (`enter`), lane by lane. `near[k]` says whether
/// axis `k`'s near plane is the box's low one (`inv[k] >= 0`).
#[inline]
pub(crate) fn enter4(n: &WideNode, o: Vec3, inv: Vec3, near_lo: [bool; 3], t0: f32, t1: f32, slack: f32) -> Vec4 {
    let mut tn = Vec4::splat(t0);
    let mut tf = Vec4::splat(t1);
    for k in 0..3 {
        let (near, far) = if near_lo[k] { (n.lo[k], n.hi[k]) } else { (n.hi[k], n.lo[k]) };
        let (ok, ik) = (Vec4::splat(o[k]), Vec4::splat(inv[k]));
        tn = tn.max((near - ok) * ik);
        tf = tf.min((far - ok) * ik);
    }
    let pos_n = tn.cmpgt(Vec4::ZERO);
    let pos_f = tf.cmpgt(Vec4::ZERO);
    let tn = tn * Vec4::select(pos_n, Vec4::splat(1.0 - slack), Vec4::splat(1.0 + slack));
    let tf = tf * Vec4::select(pos_f, Vec4::splat(1.0 + slack), Vec4::splat(1.0 - slack));
    Vec4::select(tn.cmple(tf), tn, Vec4::INFINITY)
}
