//! Tree queries against brute force on real meshes (Suzanne and a quarter of the teapot,
//! copied into tests/data), with rays chosen to hit the hard cases: origins on split
//! planes, rays parallel to and lying in split planes, rays grazing vertices and edges,
//! rays starting inside the scene or on its surface, misses and bounded intervals.

mod common;

use common::{Query, check_all, check_families, load};
use glam::Vec3;
use lumbre_kdtree::{BuildOptions, KdTree, Ray};

fn option_sets() -> [(&'static str, BuildOptions); 3] {
    [
        ("default", BuildOptions::default()),
        // Deep trees with many empty leaves and thin cells: the traversal's hard cases.
        ("deep", BuildOptions { intersection_cost: 8.0, max_leaf_size: 0, ..Default::default() }),
        ("shallow", BuildOptions { max_depth: Some(4), ..Default::default() }),
    ]
}

#[test]
fn obj_reader_handles_quads_ngons_slashes_and_negative_indices() {
    let text = "# c\nv 0 0 0\nv 1 0 0\nv 1 1 0\nv 0 1 0\nv 0 0 1\nvn 0 0 1\n\
                f 1//1 2//1 3//1 4//1\nf 1/1/1 2/2/1 -1\nf 1 2 3 4 5\n";
    let tris = common::obj::parse_obj(text);
    assert_eq!(tris.len(), 2 + 1 + 3);
    assert_eq!(tris[1], [Vec3::ZERO, Vec3::new(1.0, 1.0, 0.0), Vec3::new(0.0, 1.0, 0.0)]);
    assert_eq!(tris[2][2], Vec3::Z);
}

#[test]
fn suzanne_agrees_with_brute_force() {
    let tris = load("suzanne.obj");
    assert_eq!(tris.len(), 968);
    for (label, opts) in option_sets() {
        let tree = KdTree::build(&tris, &opts);
        assert_eq!(tree.skipped(), 0);
        check_families(&format!("suzanne/{label}"), &tree, &tris, 1, 600, true);
    }
}

#[test]
fn suzanne_symmetry_plane() {
    // Suzanne is symmetric about x = -2.494062 and has 35 vertices there: rays lying in
    // that plane cross the mesh exactly along shared edges and through vertices.
    const X_MID: f32 = -2.494062;
    let tris = load("suzanne.obj");
    assert!(tris.iter().flatten().filter(|v| v.x == X_MID).count() > 100, "vertex references on the plane");
    for (label, opts) in option_sets() {
        let tree = KdTree::build(&tris, &opts);
        let mut rng = common::Rng::new(7);
        let queries: Vec<Query> = (0..800)
            .map(|_| {
                let o = Vec3::new(X_MID, rng.range(-1.0, 3.5), rng.range(1.5, 6.5));
                let target = Vec3::new(X_MID, rng.range(0.3, 2.2), rng.range(3.3, 4.9));
                Query::new(Ray::new(o, target - o))
            })
            .collect();
        let hits = check_all(&format!("suzanne/{label} x = 0"), &tree, &tris, &queries);
        assert!(hits > 200, "{hits}");
    }
}

#[test]
fn teapot_agrees_with_brute_force() {
    let tris = load("teapot-quarter.obj");
    assert_eq!(tris.len(), 1580);
    for (label, opts) in option_sets() {
        let tree = KdTree::build(&tris, &opts);
        check_families(&format!("teapot/{label}"), &tree, &tris, 2, 400, true);
    }
}

#[test]
fn batch_queries_match_single_queries() {
    let tris = load("suzanne.obj");
    let tree = KdTree::build(&tris, &BuildOptions::default());
    let center = (tree.bounds.min + tree.bounds.max) * 0.5;
    let rays = lumbre_kdtree::scenes::camera_rays(center + Vec3::new(0.5, 0.8, 5.0), center, 0.8, 64, 48);
    for traversal in common::TRAVERSALS {
        for test in common::TESTS {
            let opts = lumbre_kdtree::QueryOptions { traversal, test };
            let hits = tree.closest_hits(&tris, &rays, 0.0, f32::INFINITY, &opts);
            let any = tree.any_hits(&tris, &rays, 0.0, f32::INFINITY, &opts);
            for (i, ray) in rays.iter().enumerate() {
                assert_eq!(hits[i], tree.closest_hit(&tris, ray, 0.0, f32::INFINITY, &opts));
                assert_eq!(any[i], hits[i].is_some());
            }
            let n = hits.iter().filter(|h| h.is_some()).count();
            assert!(n > rays.len() / 10 && n < rays.len(), "{n} of {} camera rays hit", rays.len());
        }
    }
}
