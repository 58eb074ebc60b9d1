//! Trees from degenerate input: nothing, one triangle, coplanar axis-aligned grids, many
//! copies of one triangle, NaN and zero-area triangles, extreme scales.

mod common;

use common::{Query, Rng, RngVec, TESTS, TRAVERSALS, check_all, check_families};
use glam::Vec3;
use lumbre_kdtree::{BuildOptions, KdNode, KdTree, QueryOptions, Ray, brute_force_any, scenes::generated_scene};

fn all_queries_miss(tree: &KdTree, tris: &[[Vec3; 3]], rays: &[Ray]) {
    for ray in rays {
        for traversal in TRAVERSALS {
            for test in TESTS {
                let opts = QueryOptions { traversal, test };
                assert_eq!(tree.closest_hit(tris, ray, 0.0, f32::INFINITY, &opts), None, "{ray:?}");
                assert!(!tree.any_hit(tris, ray, -f32::INFINITY, f32::INFINITY, &opts), "{ray:?}");
            }
        }
    }
}

fn some_rays() -> Vec<Ray> {
    let mut rng = Rng::new(3);
    let mut rays = vec![
        Ray::new(Vec3::new(0.0, 0.0, -1.0), Vec3::Z), // through the origin, where the empty tree's box sits
        Ray::new(Vec3::ZERO, Vec3::X),
        Ray::new(Vec3::ZERO, Vec3::ZERO),
    ];
    rays.extend((0..100).map(|_| Ray::new(rng.unit() * 3.0, rng.unit())));
    rays
}

#[test]
fn empty_input_builds_one_empty_leaf_and_everything_misses() {
    let tree = KdTree::build(&[], &BuildOptions::default());
    assert_eq!(tree.nodes, [KdNode::leaf(0, 0)]);
    assert!(tree.prim_indices.is_empty() && tree.is_empty());
    assert_eq!(tree.skipped(), 0);
    let s = tree.stats();
    assert_eq!((s.nodes, s.leaves, s.empty_leaves, s.max_depth, s.prim_refs, s.sah_cost), (1, 1, 1, 0, 0, 0.0));
    all_queries_miss(&tree, &[], &some_rays());

    // Only invalid triangles: the same tree, everything counted as skipped.
    let bad = [[Vec3::NAN; 3], [Vec3::ONE; 3], [Vec3::ZERO, Vec3::X, Vec3::X * 2.0]];
    let tree = KdTree::build(&bad, &BuildOptions::default());
    assert_eq!(tree.nodes, [KdNode::leaf(0, 0)]);
    assert_eq!(tree.skipped(), 3);
    all_queries_miss(&tree, &bad, &some_rays());
}

#[test]
fn one_triangle() {
    let tris = [[Vec3::new(0.1, 0.2, 0.3), Vec3::new(1.3, 0.1, 0.4), Vec3::new(0.4, 1.1, 0.9)]];
    for opts in [BuildOptions::default(), BuildOptions { max_leaf_size: 0, ..Default::default() }] {
        let tree = KdTree::build(&tris, &opts);
        // Candidate planes come from the triangles' clipped extents, which all lie on the
        // root cell's faces here: one leaf, whatever the options.
        assert_eq!(
            (tree.nodes.as_slice(), tree.prim_indices.as_slice()),
            ([KdNode::leaf(0, 1)].as_slice(), [0].as_slice())
        );
        check_families(&format!("one triangle, max_leaf_size {}", opts.max_leaf_size), &tree, &tris, 4, 300, false);
    }
    // The one triangle hit inside and missed beside it.
    let tree = KdTree::build(&tris, &BuildOptions::default());
    let centroid = (tris[0][0] + tris[0][1] + tris[0][2]) / 3.0;
    for (target, hit) in [(centroid, true), (Vec3::new(1.4, 0.1, 0.4), false)] {
        let ray = Ray::new(target - Vec3::new(0.1, 0.2, 3.0), Vec3::new(0.1, 0.2, 3.0));
        for traversal in TRAVERSALS {
            for test in TESTS {
                let opts = QueryOptions { traversal, test };
                assert_eq!(tree.closest_hit(&tris, &ray, 0.0, 2.0, &opts).is_some(), hit, "{target} {opts:?}");
            }
        }
    }
}

/// A `n` x `n` grid of unit quads (two triangles each) in the plane `z = z0`.
fn grid(n: usize, z0: f32) -> Vec<[Vec3; 3]> {
    let mut tris = Vec::new();
    for i in 0..n {
        for j in 0..n {
            let p = |di: usize, dj: usize| Vec3::new((i + di) as f32, (j + dj) as f32, z0);
            tris.push([p(0, 0), p(1, 0), p(1, 1)]);
            tris.push([p(0, 0), p(1, 1), p(0, 1)]);
        }
    }
    tris
}

#[test]
fn coplanar_axis_aligned_grid() {
    let tris = grid(10, 0.5);
    let tree = KdTree::build(&tris, &BuildOptions::default());
    assert_eq!(tree.bounds.min.z, 0.5);
    assert_eq!(tree.bounds.max.z, 0.5, "the root cell is flat");
    assert!(tree.nodes.len() > 1, "the grid is split in x and y");
    let mut rng = Rng::new(5);

    // Head-on, from both sides, at random points and exactly at grid vertices and lines.
    let mut head_on = Vec::new();
    for k in 0..400 {
        let (x, y) = match k % 4 {
            0 => (rng.below(11) as f32, rng.below(11) as f32),
            1 => (rng.below(11) as f32, rng.range(0.0, 10.0)),
            2 => (rng.range(0.0, 10.0), rng.below(11) as f32),
            _ => (rng.range(0.0, 10.0), rng.range(0.0, 10.0)),
        };
        let up = k % 8 < 4;
        let o = Vec3::new(x, y, if up { -1.0 } else { 2.0 });
        head_on.push(Query::new(Ray::new(o, if up { Vec3::Z } else { -Vec3::Z * 3.0 })));
    }
    let hits = check_all("grid head-on", &tree, &tris, &head_on);
    assert_eq!(hits, head_on.len(), "every head-on ray within the grid hits it");

    // Edge-on: in the plane of the grid (a ray in a triangle's plane misses it) and just above.
    let mut edge_on = Vec::new();
    for k in 0..200 {
        let z = if k % 2 == 0 { 0.5 } else { 0.5f32.next_up() };
        let o = Vec3::new(rng.range(-1.0, 11.0), rng.range(-1.0, 11.0), z);
        let mut d = rng.unit();
        d.z = 0.0;
        if k % 3 == 0 {
            d = Vec3::new(1.0, 0.0, 0.0); // along the grid lines
        }
        edge_on.push(Query::new(Ray::new(o, d)));
    }
    assert_eq!(check_all("grid edge-on", &tree, &tris, &edge_on), 0);

    check_families("grid", &tree, &tris, 6, 300, false);
}

#[test]
fn closed_box_of_planar_faces_with_an_inner_wall() {
    // The six faces of the unit cube as 4x4 grids, plus a wall at x = 0.5 inside: triangles
    // lying in candidate planes, where the sweep chooses their side.
    let mut tris = Vec::new();
    let face = |axis: usize, at: f32, tris: &mut Vec<[Vec3; 3]>| {
        for t in grid(4, 0.0) {
            tris.push(t.map(|v| {
                let mut p = Vec3::ZERO;
                p[axis] = at;
                p[(axis + 1) % 3] = v.x / 4.0;
                p[(axis + 2) % 3] = v.y / 4.0;
                p
            }));
        }
    };
    for axis in 0..3 {
        face(axis, 0.0, &mut tris);
        face(axis, 1.0, &mut tris);
    }
    face(0, 0.5, &mut tris);
    for (label, opts) in [
        ("default", BuildOptions::default()),
        ("deep", BuildOptions { intersection_cost: 8.0, max_leaf_size: 0, ..Default::default() }),
    ] {
        let tree = KdTree::build(&tris, &opts);
        // The wall is cut off: a split twice the margin (2^-20 of the scene) beside it.
        assert!(common::split_planes(&tree).iter().any(|&(_, axis, split)| axis == 0 && (split - 0.5).abs() < 1e-3));
        check_families(&format!("box of planar faces/{label}"), &tree, &tris, 8, 300, true);
        // From inside, every ray hits a wall.
        let mut rng = Rng::new(9);
        let inside: Vec<Query> =
            (0..300).map(|_| Query::new(Ray::new(Vec3::new(rng.f32(), rng.f32(), rng.f32()), rng.unit()))).collect();
        assert_eq!(check_all(&format!("box/{label} from inside"), &tree, &tris, &inside), inside.len());
    }
}

#[test]
fn a_thousand_copies_of_one_triangle() {
    let t = [Vec3::new(0.2, 0.1, 0.0), Vec3::new(1.0, 0.3, 0.5), Vec3::new(0.1, 0.9, 0.2)];
    let tris = vec![t; 1000];
    let start = std::time::Instant::now();
    let tree = KdTree::build(&tris, &BuildOptions::default());
    assert!(start.elapsed().as_secs_f32() < 5.0);
    // No plane lies strictly inside the copies' common box: one leaf with all of them.
    assert_eq!(tree.nodes.len(), 1);
    assert_eq!(tree.prim_indices, (0..1000).collect::<Vec<u32>>());
    // Any copy may answer (they tie); the checks accept ties only at equal t.
    check_families("1000 copies", &tree, &tris, 10, 200, false);
    // With the copies inside a larger scene the SAH still terminates and stays small.
    let mut mixed = generated_scene(2000);
    mixed.extend(std::iter::repeat_n(t, 1000));
    let tree = KdTree::build(&mixed, &BuildOptions::default());
    assert!(tree.prim_indices.len() < 20 * mixed.len());
    check_families("1000 copies in a scene", &tree, &mixed, 11, 200, true);
}

#[test]
fn nan_and_zero_area_triangles_are_skipped_and_counted() {
    let good = generated_scene(600);
    let p = Vec3::new(0.3, 0.2, 0.1);
    let bad = [
        [Vec3::new(f32::NAN, 0.0, 0.0), Vec3::X, Vec3::Y],
        [Vec3::ZERO, Vec3::new(0.0, f32::INFINITY, 0.0), Vec3::Y],
        [Vec3::ZERO, Vec3::X, Vec3::new(0.0, 0.0, f32::NEG_INFINITY)],
        [p, p, p],                                    // a point
        [p, p, Vec3::ONE],                            // two equal vertices
        [Vec3::ZERO, Vec3::splat(0.5), Vec3::ONE],    // collinear
        [Vec3::X * -1.0, Vec3::ZERO, Vec3::X * 0.25], // collinear along an axis
    ];
    let mut tris = Vec::new();
    let mut bad_ids = Vec::new();
    for (i, t) in good.iter().enumerate() {
        tris.push(*t);
        if i % 5 == 0 {
            bad_ids.push(tris.len() as u32);
            tris.push(bad[(i / 5) % bad.len()]);
        }
    }
    let tree = KdTree::build(&tris, &BuildOptions::default());
    assert_eq!(tree.skipped(), bad_ids.len());
    assert!(tree.prim_indices.iter().all(|i| !bad_ids.contains(i)));
    for id in 0..tris.len() as u32 {
        if !bad_ids.contains(&id) {
            assert!(tree.prim_indices.contains(&id), "valid triangle {id} is in the tree");
        }
    }
    check_families("scene with NaN and zero-area triangles", &tree, &tris, 12, 300, true);
    // Rays straight at a degenerate triangle: brute force skips it too.
    let ray = Ray::new(Vec3::new(0.3, 0.2, -5.0), Vec3::Z);
    for test in TESTS {
        assert!(!brute_force_any(&[[p, p, Vec3::ONE]], &ray, 0.0, 10.0, test));
    }
}

#[test]
fn extreme_scales_build_and_agree() {
    for scale in [1e-15f32, 1e-4, 1e4, 1e15] {
        let tris: Vec<[Vec3; 3]> = generated_scene(1500).iter().map(|t| t.map(|v| (v + Vec3::X) * scale)).collect();
        let tree = KdTree::build(&tris, &BuildOptions::default());
        assert_eq!(tree.skipped(), 0, "scale {scale}");
        assert!(tree.nodes.len() > 100, "scale {scale}: the tree is split");
        let s = tree.stats();
        assert!(s.sah_cost.is_finite() && s.sah_cost > 0.0 && s.sah_cost < 1.5 * 1500.0, "scale {scale}: {s:?}");
        // The f32 triangle tests themselves under- or overflow at 1e-15 and 1e15 (products of
        // three coordinates), so agreement is only checked where they are meaningful.
        if (1e-4..=1e4).contains(&scale) {
            check_families(&format!("scale {scale}"), &tree, &tris, 13, 150, true);
        }
    }
}
