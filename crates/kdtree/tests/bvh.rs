//! The BVH against brute force and against the kd-tree: the kd-tree's hard ray families
//! (split planes, vertices, edges, bounded intervals) on the fan, the star polygon, meshes
//! and degenerate scenes; random soups (proptest); the layout's invariants.

mod common;

use common::{Query, RngVec, Structure, check_all, check_families_of, check_query_aimed, close, load};
use glam::Vec3;
use lumbre_kdtree::{
    Aabb, BVH_MAX_DEPTH, BuildOptions, Bvh, BvhOptions, KdTree, QueryOptions, Ray, is_valid_triangle, scenes,
};
use proptest::prelude::*;

/// Every valid triangle in at least one leaf (at most 8: its parts), every child box inside
/// its parent's; the recorded depth bounds every leaf's.
fn check_layout(bvh: &Bvh, tris: &[[Vec3; 3]]) {
    let mut seen = vec![0u32; tris.len()];
    let mut stack = vec![(0u32, Aabb::new(Vec3::splat(f32::NEG_INFINITY), Vec3::splat(f32::INFINITY)), 0u32)];
    while let Some((node, outer, depth)) = stack.pop() {
        assert!(depth <= bvh.depth && bvh.depth < BVH_MAX_DEPTH);
        let n = bvh.nodes[node as usize];
        for i in 0..2 {
            let (b, r, count) = n.child(i);
            if b.is_empty() {
                continue;
            }
            assert!(b.min.cmpge(outer.min).all() && b.max.cmple(outer.max).all(), "child box outside its parent's");
            if count == 0 {
                assert!(r as usize > node as usize && (r as usize) < bvh.nodes.len());
                stack.push((r, b, depth + 1));
            } else {
                for &t in &bvh.prim_indices[r as usize..(r + count) as usize] {
                    seen[t as usize] += 1;
                    let own = Aabb::from_points(tris[t as usize]);
                    assert!(own.overlaps(&b), "triangle {t} away from its leaf");
                }
            }
        }
    }
    // Every valid triangle is listed, a long thin one possibly several times (in parts).
    for (i, t) in tris.iter().enumerate() {
        assert_eq!(seen[i] > 0, is_valid_triangle(t), "triangle {i}");
        assert!(seen[i] <= 8, "triangle {i} listed {} times", seen[i]);
    }
}

#[test]
fn fans_star_polygons_and_meshes_agree_with_brute_force() {
    let scenes: Vec<(&str, Vec<[Vec3; 3]>, bool, usize)> = vec![
        ("fan of 20000", scenes::fan(20_000), false, 40),
        ("star polygon of 5000", scenes::star_polygon(5000), false, 40),
        ("fan of 300", scenes::fan(300), false, 150),
        ("star polygon of 300", scenes::star_polygon(300), false, 150),
        ("suzanne", load("suzanne.obj"), true, 300),
        ("teapot", load("teapot-quarter.obj"), true, 200),
        ("generated", scenes::generated_scene(5000), false, 100),
    ];
    for (name, tris, surface, n) in &scenes {
        let tree = KdTree::build(tris, &BuildOptions::default());
        for opts in [BvhOptions::default(), BvhOptions { leaf_size: 1, ..Default::default() }] {
            let bvh = Bvh::build(tris, &opts);
            check_layout(&bvh, tris);
            check_families_of(&format!("bvh, {name}, {opts:?}"), &tree, &bvh, tris, 21, *n, *surface);
        }
    }
}

#[test]
fn the_bvh_and_the_kd_tree_give_the_same_hits_on_fans_and_star_polygons() {
    for (name, tris) in [("fan", scenes::fan(2000)), ("star polygon", scenes::star_polygon(2000))] {
        let tree = KdTree::build(&tris, &BuildOptions::default());
        let bvh = Bvh::build(&tris, &BvhOptions::default());
        let b = tree.bounds;
        let c = (b.min + b.max) * 0.5;
        let r = b.size().length();
        let mut hits = 0;
        for eye in
            [c + Vec3::new(0.3, 0.2, 1.0) * r, c - Vec3::new(0.1, 0.5, 1.0) * r, c + Vec3::new(2.0, 0.01, 0.0) * r]
        {
            for ray in scenes::camera_rays(eye, c, 0.9, 64, 64) {
                let opts = QueryOptions::default();
                let k = tree.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &opts);
                let v = bvh.closest_hit(&tris, &ray, 0.0, f32::INFINITY, &opts);
                match (k, v) {
                    (None, None) => {}
                    (Some(k), Some(v)) => {
                        assert!(k == v || (k.tri != v.tri && close(k.t, v.t)), "{name} {ray:?}: kd {k:?} bvh {v:?}");
                        hits += 1;
                    }
                    _ => panic!("{name} {ray:?}: kd {k:?} bvh {v:?}"),
                }
                assert_eq!(
                    tree.any_hit(&tris, &ray, 0.0, f32::INFINITY, &opts),
                    bvh.any_hit(&tris, &ray, 0.0, f32::INFINITY, &opts)
                );
            }
        }
        assert!(hits > 1000, "{name}: {hits} hits");
    }
}

#[test]
fn degenerate_scenes() {
    let q = |o: Vec3, d: Vec3| Query::new(Ray::new(o, d));
    // No triangles, only invalid ones, one triangle, a thousand copies of one.
    let one = [Vec3::ZERO, Vec3::X, Vec3::Y];
    let nan = [Vec3::ZERO, Vec3::X, Vec3::new(f32::NAN, 0.0, 0.0)];
    let flat = [Vec3::ZERO, Vec3::X, Vec3::X * 2.0];
    for (name, tris) in [
        ("empty", vec![]),
        ("invalid only", vec![nan, flat]),
        ("one", vec![one]),
        ("one among invalid", vec![nan, one, flat]),
        ("1000 copies", vec![one; 1000]),
    ] {
        let bvh = Bvh::build(&tris, &BvhOptions::default());
        check_layout(&bvh, &tris);
        let mut rng = common::Rng::new(3);
        let queries: Vec<Query> = (0..300)
            .map(|i| match i % 3 {
                0 => q(Vec3::new(rng.range(-0.5, 1.0), rng.range(-0.5, 1.0), 1.0), -Vec3::Z),
                1 => q(Vec3::new(0.25, 0.25, -1.0) + rng.unit() * 0.01, Vec3::Z),
                _ => q(rng.unit() * 2.0, rng.unit()),
            })
            .collect();
        let hits = check_all(&format!("bvh, {name}"), &bvh, &tris, &queries);
        assert_eq!(hits > 0, tris.iter().any(is_valid_triangle), "{name}");
    }
}

#[test]
fn coincident_centroids_and_a_deep_chain_stay_within_the_depth_cap() {
    // Nested triangles sharing a centroid, and triangles halving in size: the build must
    // end in leaves, not recurse without end.
    let nested: Vec<[Vec3; 3]> = (1..500)
        .map(|i| {
            [
                Vec3::new(-(i as f32), -(i as f32), 0.0),
                Vec3::new(i as f32 * 2.0, -(i as f32), 0.0),
                Vec3::new(-(i as f32), i as f32 * 2.0, 0.0),
            ]
        })
        .collect();
    let chain: Vec<[Vec3; 3]> = (0..120)
        .map(|i| {
            let s = 0.5f32.powi(i);
            [Vec3::new(s, 0.0, 0.0), Vec3::new(2.0 * s, 0.0, 0.0), Vec3::new(s, s, 1.0)]
        })
        .collect();
    for (name, tris) in [("nested", nested), ("chain", chain)] {
        let bvh = Bvh::build(&tris, &BvhOptions { leaf_size: 1, ..Default::default() });
        check_layout(&bvh, &tris);
        let mut rng = common::Rng::new(5);
        let queries: Vec<Query> = (0..300)
            .map(|_| Query::new(Ray::new(rng.unit() * 4.0, rng.in_box(&bvh.bounds) - rng.unit() * 4.0)))
            .collect();
        check_all(&format!("bvh, {name}"), &bvh, &tris, &queries);
    }
}

fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![3 => (-4i32..=4).prop_map(|i| i as f32 * 0.25), 2 => -1.2f32..1.2]
}

fn point() -> impl Strategy<Value = Vec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn direction() -> impl Strategy<Value = Vec3> {
    let c = prop_oneof![2 => Just(0.0f32), 1 => Just(1.0), 1 => Just(-1.0), 3 => -1.0f32..1.0];
    (c.clone(), c.clone(), c).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    /// Soups full of shared vertices, coplanar and axis-aligned triangles and duplicates;
    /// rays from lattice points with zero direction components.
    #[test]
    fn soups_agree_with_brute_force(
        tris in proptest::collection::vec((point(), point(), point()).prop_map(|(a, b, c)| [a, b, c]), 0..60),
        rays in proptest::collection::vec((point(), direction()), 1..40),
        leaf_size in 1u32..6,
    ) {
        let bvh = Bvh::build(&tris, &BvhOptions { leaf_size, ..Default::default() });
        check_layout(&bvh, &tris);
        for (o, d) in rays {
            check_query_aimed(&bvh as &dyn Structure, &tris, &Query::new(Ray::new(o, d)), false).map_err(TestCaseError::fail)?;
        }
    }
}
