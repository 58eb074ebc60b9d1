//! The BVH's build on the CPU, stage by stage as `density/bvh.wgsl` runs it: `morton`, a
//! stable radix sort, the radix tree of `lumbre_morton`, `refit`, `gather`, `pack`.

use glam::Vec3;
use lumbre_compact::radix_sort_cpu;
use lumbre_kdtree::Aabb;
use lumbre_morton::{NO_PARENT, RadixTree, encode_u32};
use rayon::prelude::*;

use crate::bvh::node::{Bvh, BvhNode, LEAF_BIT, NONE, QuantGrid};
use crate::ordered::{decode_box, encode_box};
use crate::problem::{DiskData, Prepared};

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

/// Each inner node's children as the packed nodes name them: an inner node by its index, a
/// disk by `LEAF_BIT | sorted position` (`pack`'s `child_ref` on the GPU).
pub(crate) fn children(tree: &RadixTree) -> Vec<[u32; 2]> {
    let child = |c: u32| tree.leaf(c).map_or(c, |k| LEAF_BIT | k as u32);
    tree.nodes.par_iter().map(|node| [child(node.left), child(node.right)]).collect()
}

/// Stage `refit` (after `empty_boxes` on the GPU): inner boxes (six order-preserving words
/// each, [`encode_box`]), each leaf's box carried up until an ancestor already holds it (the
/// GPU does the same with atomic min and max; the result is the same whatever the order).
pub(crate) fn refit(order: &[u32], tree: &RadixTree, disk_boxes: &[Aabb]) -> Vec<[u32; 6]> {
    let mut boxes = vec![[u32::MAX, u32::MAX, u32::MAX, 0, 0, 0]; tree.nodes.len()];
    for (p, &d) in order.iter().enumerate() {
        let b = encode_box(&disk_boxes[d as usize]);
        let mut node = tree.leaf_parents[p];
        while node != NO_PARENT {
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
            node = tree.nodes[node as usize].parent;
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
            grid.encode(&decode_box(&boxes[c as usize]))
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
        let tree = RadixTree::build(&codes);
        let boxes = refit(&order, &tree, &prep.disk_boxes);
        pack(&children(&tree), &boxes, &order, &prep.disk_boxes, &grid)
    };
    Bvh { nodes, disks, order, grid: Some(grid) }
}
