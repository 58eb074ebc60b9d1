//! The flat layout: node encoding, depth-first order, leaf ranges, valid primitive
//! indices, and coverage (every triangle is in every leaf whose cell holds one of its
//! vertices).

mod common;

use std::collections::HashSet;

use common::{leaves, load};
use glam::Vec3;
use lumbre_kdtree::{Aabb, BuildOptions, KdNode, KdTree, is_valid_triangle, scenes::generated_scene};
use proptest::prelude::*;

proptest! {
    #[test]
    fn node_encoding_round_trips(axis in 0u32..3, bits in any::<u32>(), above in 0u32..(1 << 30), offset in any::<u32>(), count in 0u32..(1 << 30)) {
        let split = f32::from_bits(bits);
        let n = KdNode::interior(axis, split, above);
        prop_assert!(!n.is_leaf());
        prop_assert_eq!((n.axis(), n.split().to_bits(), n.above_child()), (axis, bits, above));
        let words: [u32; 2] = bytemuck::cast(n);
        prop_assert_eq!(words, [bits, axis | above << 2]);
        let l = KdNode::leaf(offset, count);
        prop_assert!(l.is_leaf());
        prop_assert_eq!((l.prim_offset(), l.prim_count(), l.axis()), (offset, count, 3));
    }
}

/// Checks the structure of `tree` over `tris` and returns the number of leaves.
fn check_structure(tree: &KdTree, tris: &[[Vec3; 3]], opts: &BuildOptions) -> usize {
    let n = tree.nodes.len();
    // Depth-first: walking below-then-above visits nodes 0, 1, 2, ... in order, leaves'
    // primitive ranges follow each other, and each subtree is one contiguous block.
    let mut next_node = 0usize;
    let mut next_prim = 0usize;
    let mut leaf_count = 0;
    let max_depth = opts.effective_max_depth(tris.len() - tree.skipped());
    // (node, cell, depth)
    let mut stack = vec![(0usize, tree.bounds, 0u32)];
    while let Some((i, cell, depth)) = stack.pop() {
        assert_eq!(i, next_node, "nodes are stored depth first, below child first");
        next_node += 1;
        assert!(depth <= max_depth, "depth {depth} beyond the cap {max_depth}");
        let node = tree.nodes[i];
        // Leaves also list the triangles within the build's margin (2^-20 of the scene's
        // size) of their cell; a little more for the rounding of the grown cell.
        let margin = Vec3::splat(margin(tree) * 1.001);
        let grown = Aabb::new(cell.min - margin, cell.max + margin);
        if node.is_leaf() {
            leaf_count += 1;
            assert_eq!(node.prim_offset() as usize, next_prim, "leaf ranges are contiguous");
            next_prim += node.prim_count() as usize;
            let prims = &tree.prim_indices[node.prim_offset() as usize..next_prim];
            let unique: HashSet<u32> = prims.iter().copied().collect();
            assert_eq!(unique.len(), prims.len(), "a leaf lists a triangle once");
            for &p in prims {
                let tri = &tris[p as usize];
                assert!(is_valid_triangle(tri), "leaf lists invalid triangle {p}");
                assert!(Aabb::from_points(*tri).overlaps(&grown), "triangle {p} is listed in a leaf it does not reach");
            }
            continue;
        }
        let (axis, split) = (node.axis() as usize, node.split());
        assert!(cell.min[axis] < split && split < cell.max[axis], "split {split} strictly inside the cell {cell:?}");
        let above = node.above_child() as usize;
        assert!(above > i + 1 && above < n);
        let (mut below_cell, mut above_cell) = (cell, cell);
        below_cell.max[axis] = split;
        above_cell.min[axis] = split;
        stack.push((above, above_cell, depth + 1));
        stack.push((i + 1, below_cell, depth + 1));
    }
    assert_eq!(next_node, n, "every node is reachable exactly once");
    assert_eq!(next_prim, tree.prim_indices.len(), "leaf ranges cover prim_indices exactly");
    leaf_count
}

/// Every valid triangle is listed in every leaf whose cell, grown by the build's margin,
/// contains one of its vertices. This is what makes rays through (or within rounding of)
/// vertices and edges find their triangle wherever the traversal switches cells.
fn check_coverage(tree: &KdTree, tris: &[[Vec3; 3]]) {
    let mut listed = vec![0usize; tris.len()];
    for &p in &tree.prim_indices {
        listed[p as usize] += 1;
    }
    for (i, tri) in tris.iter().enumerate() {
        if !is_valid_triangle(tri) {
            assert_eq!(listed[i], 0);
            continue;
        }
        assert!(listed[i] > 0, "triangle {i} is in no leaf");
        for v in tri {
            let holders = leaves_near(tree, *v, 0.99 * margin(tree));
            assert!(!holders.is_empty(), "vertex {v} of triangle {i} is in no leaf cell");
            let lists = |leaf: usize| {
                let n = tree.nodes[leaf];
                tree.prim_indices[n.prim_offset() as usize..][..n.prim_count() as usize].contains(&(i as u32))
            };
            for &l in &holders {
                assert!(lists(l), "triangle {i}: leaf {l} holds its vertex {v} but not it");
            }
        }
    }
}

/// The build's margin: 2^-20 of the scene's largest extent, at least 4 ulps of its largest
/// coordinate.
fn margin(tree: &KdTree) -> f32 {
    margin_of(&tree.bounds)
}

fn margin_of(b: &Aabb) -> f32 {
    let largest = b.min.abs().max(b.max.abs()).max_element();
    (b.size().max_element() / 1048576.0).max(largest * 4.0 * f32::EPSILON)
}

/// The leaves whose cell grown by `m` contains `p`.
fn leaves_near(tree: &KdTree, p: Vec3, m: f32) -> Vec<usize> {
    let mut out = Vec::new();
    let mut stack = vec![0usize];
    while let Some(i) = stack.pop() {
        let n = tree.nodes[i];
        if n.is_leaf() {
            out.push(i);
            continue;
        }
        // In f64: `split + m` rounded to f32 could land on `c` itself.
        let (c, split, m) = (p[n.axis() as usize] as f64, n.split() as f64, m as f64);
        if c <= split + m {
            stack.push(i + 1);
        }
        if c >= split - m {
            stack.push(n.above_child() as usize);
        }
    }
    out
}

fn scenes() -> Vec<(&'static str, Vec<[Vec3; 3]>)> {
    let mut grid_and_box = Vec::new();
    for i in 0..8 {
        for j in 0..8 {
            let p = |di: i32, dj: i32| Vec3::new((i + di) as f32, (j + dj) as f32, 0.5);
            grid_and_box.push([p(0, 0), p(1, 0), p(1, 1)]);
            grid_and_box.push([p(0, 0), p(1, 1), p(0, 1)]);
        }
    }
    grid_and_box.extend(generated_scene(500).iter().map(|t| t.map(|v| v * 2.0 + Vec3::splat(4.0))));
    // A mesh and a copy shifted by 1.5 margins: the copy's vertices lie within the margin of
    // the planes placed two margins beside the original's.
    let mesh = generated_scene(3000);
    let shift = Vec3::splat(1.5 * margin_of(&Aabb::from_points(mesh.iter().flatten().copied())));
    let mut near_copies = mesh.clone();
    near_copies.extend(mesh.iter().map(|t| t.map(|v| v + shift)));
    let mut with_bad = generated_scene(800);
    with_bad.insert(3, [Vec3::NAN; 3]);
    with_bad.insert(10, [Vec3::ONE; 3]);
    vec![
        ("suzanne", load("suzanne.obj")),
        ("teapot", load("teapot-quarter.obj")),
        ("generated", generated_scene(20_000)),
        ("grid and sphere", grid_and_box),
        ("with invalid triangles", with_bad),
        ("near copies", near_copies),
    ]
}

#[test]
fn layout_is_depth_first_with_valid_indices_and_full_coverage() {
    for (name, tris) in scenes() {
        for opts in [
            BuildOptions::default(),
            BuildOptions { intersection_cost: 8.0, max_leaf_size: 0, ..Default::default() },
            BuildOptions { max_depth: Some(5), parallel: false, ..Default::default() },
        ] {
            let tree = KdTree::build(&tris, &opts);
            let leaves = check_structure(&tree, &tris, &opts);
            assert!(leaves > 1, "{name}: the tree is split");
            assert_eq!(tree.stats().leaves, leaves);
            check_coverage(&tree, &tris);
        }
    }
}

#[test]
fn stats_add_up() {
    let tris = load("teapot-quarter.obj");
    let tree = KdTree::build(&tris, &BuildOptions::default());
    let s = tree.stats();
    let leaves = leaves(&tree);
    assert_eq!(s.nodes, tree.nodes.len());
    assert_eq!(s.leaves, leaves.len());
    assert_eq!(s.nodes, 2 * s.leaves - 1, "a full binary tree");
    assert_eq!(s.empty_leaves, leaves.iter().filter(|(_, p)| p.is_empty()).count());
    assert_eq!(s.prim_refs, tree.prim_indices.len());
    assert!(s.prim_refs >= tris.len());
    let full = (s.leaves - s.empty_leaves) as f32;
    assert!((s.avg_prims_per_leaf - s.prim_refs as f32 / full).abs() < 1e-4);
    assert_eq!(s.bytes, 8 * s.nodes + 4 * s.prim_refs);
    // The SAH cost recomputed from the leaves and interior cells.
    let root = tree.bounds.surface_area() as f64;
    let leaf_cost: f64 = leaves.iter().map(|(c, p)| 1.5 * p.len() as f64 * c.surface_area() as f64 / root).sum();
    let inner_cost: f64 = common::split_planes(&tree).iter().map(|(c, _, _)| c.surface_area() as f64 / root).sum();
    assert!(
        ((leaf_cost + inner_cost) as f32 - s.sah_cost).abs() < 1e-3 * s.sah_cost,
        "{} vs {}",
        leaf_cost + inner_cost,
        s.sah_cost
    );
    assert!(s.sah_cost < 0.1 * 1.5 * tris.len() as f32, "far cheaper than one leaf: {s:?}");
}
