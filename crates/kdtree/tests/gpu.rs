//! GPU kd-tree and BVH queries against the CPU ones: both traversals, both triangle tests,
//! closest and any hit, on meshes, fans, star polygons and random soups.

mod common;

use common::{Rng, RngVec, TESTS, TRAVERSALS, load};
use glam::Vec3;
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Tolerance, conformance};
use lumbre_kdtree::{
    Aabb, BuildOptions, Bvh, BvhBatch, BvhOptions, BvhQuery, KdTree, QueryBatch, QueryOptions, Ray, RayQuery, scenes,
};

/// Rays of several kinds: from outside towards the mesh, from inside, axis-aligned (parallel
/// to every split plane of two axes), next to vertices, and away from everything.
fn rays(tris: &[[Vec3; 3]], tree: &KdTree, n: usize, seed: u64) -> Vec<Ray> {
    let mut rng = Rng::new(seed as u32);
    let b = tree.bounds;
    let c = (b.min + b.max) * 0.5;
    let r = b.size().length();
    // Origins "inside" come from the bounds grown by 1% of their diagonal: in a flat scene
    // the bounds are the triangles' plane, and whether a ray starting exactly on a triangle
    // hits it at t ~ 1e-8 or misses is decided by rounding (57 of 500 flipped on an H200).
    let grown = Aabb { min: b.min - Vec3::splat(0.01 * r), max: b.max + Vec3::splat(0.01 * r) };
    let mut out = Vec::new();
    for _ in 0..n {
        let eye = c + rng.unit() * r * 1.5;
        out.push(Ray::new(eye, rng.in_box(&b) - eye));
        out.push(Ray::new(rng.in_box(&grown), rng.unit()));
        let axis = [Vec3::X, Vec3::Y, Vec3::Z, -Vec3::X, -Vec3::Y, -Vec3::Z][rng.below(6)];
        out.push(Ray::new(rng.in_box(&grown), axis));
        // Just inside a triangle next to a vertex. Not exactly at it: there the hit is decided
        // by rounding, and GPUs that fuse multiply-adds (NVIDIA: about half of 500 such rays
        // on an H100) round differently from the CPU. The CPU tests keep exact vertex rays.
        let (t, k) = (tris[rng.below(tris.len())], rng.below(3));
        let v = t[k] * 0.998 + t[(k + 1) % 3] * 0.001 + t[(k + 2) % 3] * 0.001;
        out.push(Ray::new(eye, v - eye));
    }
    out.push(Ray::new(c + Vec3::splat(r * 3.0), Vec3::ONE));
    out
}

/// Hit distances agree to 1e-4 relative, and to 1e-6 absolute for hits right at the
/// origin (rays that start on a triangle's plane hit at t ~ 1e-8, where fused and unfused
/// arithmetic differ by a few percent: seen on an H200).
const T_TOLERANCE: Tolerance = Tolerance::within(1e-6, 1e-4);

fn check(tris: Vec<[Vec3; 3]>, name: &str) {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let tree = KdTree::build(&tris, &BuildOptions::default());
    let rays = rays(&tris, &tree, 500, tris.len() as u64);
    let batch = QueryBatch { tris, tree, rays, t_min: 0.0, t_max: f32::INFINITY };
    for traversal in TRAVERSALS {
        for test in TESTS {
            for (any_hit, tiny_stack) in [(false, false), (true, false), (false, true)] {
                let q = RayQuery { opts: QueryOptions { traversal, test }, any_hit, tiny_stack };
                conformance(&q, &gpu, &batch, T_TOLERANCE)
                    .unwrap_or_else(|e| panic!("{name} {traversal:?} {test:?} any={any_hit} tiny={tiny_stack}: {e}"));
            }
        }
    }
    // The BVH on the same rays, and both structures on a bounded interval (shadow rays to a
    // point at t = 0.5).
    let bvh = BvhBatch {
        bvh: Bvh::build(&batch.tris, &BvhOptions::default()),
        tris: batch.tris.clone(),
        rays: batch.rays.clone(),
        t_min: 0.0,
        t_max: f32::INFINITY,
    };
    for test in TESTS {
        for any_hit in [false, true] {
            conformance(&BvhQuery { test, any_hit }, &gpu, &bvh, T_TOLERANCE)
                .unwrap_or_else(|e| panic!("{name} bvh {test:?} any={any_hit}: {e}"));
        }
    }
    let short = QueryBatch { t_max: 0.5, ..batch };
    conformance(&RayQuery { any_hit: true, ..Default::default() }, &gpu, &short, T_TOLERANCE).unwrap();
    let short = BvhBatch { t_max: 0.5, ..bvh };
    conformance(&BvhQuery { any_hit: true, ..Default::default() }, &gpu, &short, T_TOLERANCE).unwrap();
}

#[test]
fn fan_and_star_polygon() {
    check(scenes::fan(2000), "fan");
    check(scenes::star_polygon(1000), "star polygon");
}

#[test]
fn suzanne() {
    check(load("suzanne.obj"), "suzanne");
}

#[test]
fn teapot_quarter() {
    check(load("teapot-quarter.obj"), "teapot");
}

#[test]
fn generated_sphere_and_soup() {
    check(scenes::generated_scene(20_000), "sphere");
    let mut rng = Rng::new(5);
    let soup: Vec<[Vec3; 3]> = (0..3000)
        .map(|_| {
            let p = rng.unit() * 4.0;
            [p, p + rng.unit() * 0.3, p + rng.unit() * 0.3]
        })
        .collect();
    check(soup, "soup");
}

#[test]
fn degenerate_trees_on_the_gpu() {
    check(vec![[Vec3::ZERO, Vec3::X, Vec3::Y]], "one triangle");
    let grid: Vec<[Vec3; 3]> = (0..100)
        .flat_map(|i| {
            let (x, y) = ((i % 10) as f32, (i / 10) as f32);
            let z = 0.5;
            [
                [Vec3::new(x, y, z), Vec3::new(x + 1.0, y, z), Vec3::new(x, y + 1.0, z)],
                [Vec3::new(x + 1.0, y, z), Vec3::new(x + 1.0, y + 1.0, z), Vec3::new(x, y + 1.0, z)],
            ]
        })
        .collect();
    check(grid, "coplanar grid");
    let same = vec![[Vec3::new(0.0, 0.0, 1.0), Vec3::new(1.0, 0.0, 1.0), Vec3::new(0.0, 1.0, 1.0)]; 500];
    check(same, "identical triangles");
}

#[test]
fn an_empty_tree_misses_on_the_gpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let tree = KdTree::build(&[], &BuildOptions::default());
    let batch = QueryBatch { tris: vec![], tree, rays: vec![Ray::new(Vec3::ZERO, Vec3::X)], t_min: 0.0, t_max: 1.0 };
    let hits = conformance(&RayQuery::default(), &gpu, &batch, Tolerance::EXACT).unwrap();
    assert_eq!(hits.0, vec![None]);
    let bvh = Bvh::build(&[], &BvhOptions::default());
    let batch = BvhBatch { tris: vec![], bvh, rays: batch.rays, t_min: 0.0, t_max: 1.0 };
    let hits = conformance(&BvhQuery::default(), &gpu, &batch, Tolerance::EXACT).unwrap();
    assert_eq!(hits.0, vec![None]);
}
