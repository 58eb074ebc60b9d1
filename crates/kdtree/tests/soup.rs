//! Random triangle soups (proptest): tree queries equal brute force for both traversals and
//! both triangle tests. Coordinates are drawn partly from a coarse lattice, so that soups are
//! full of shared vertices, touching and coplanar triangles, axis-aligned triangles lying in
//! split planes, duplicates and degenerate triangles; rays start on lattice points and have
//! zero direction components.

mod common;

use std::sync::atomic::{AtomicUsize, Ordering};

use common::{Query, check_query_aimed};
use glam::Vec3;
use lumbre_kdtree::{BuildOptions, KdTree, Ray};
use proptest::prelude::*;

fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![
        3 => (-4i32..=4).prop_map(|i| i as f32 * 0.25),
        2 => -1.2f32..1.2,
    ]
}

fn point() -> impl Strategy<Value = Vec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn direction() -> impl Strategy<Value = Vec3> {
    let c = prop_oneof![2 => Just(0.0f32), 1 => Just(1.0), 1 => Just(-1.0), 3 => -1.0f32..1.0];
    (c.clone(), c.clone(), c).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn options() -> impl Strategy<Value = BuildOptions> {
    (0u32..3, prop_oneof![Just(1.5f32), Just(8.0)], proptest::option::of(0u32..6), any::<bool>()).prop_map(
        |(max_leaf_size, intersection_cost, max_depth, parallel)| BuildOptions {
            max_leaf_size,
            intersection_cost,
            max_depth,
            parallel,
            ..Default::default()
        },
    )
}

static QUERIES: AtomicUsize = AtomicUsize::new(0);
static RELAXED: AtomicUsize = AtomicUsize::new(0);

/// Checks a query, counting those that needed the relaxed comparison.
fn check(tree: &KdTree, tris: &[[Vec3; 3]], q: &Query, exact_aim: bool) -> Result<(), TestCaseError> {
    let outcome = check_query_aimed(tree, tris, q, exact_aim).map_err(TestCaseError::fail)?;
    let n = QUERIES.fetch_add(1, Ordering::Relaxed) + 1;
    let relaxed = RELAXED.fetch_add(outcome.relaxed as usize, Ordering::Relaxed) + outcome.relaxed as usize;
    // Differences explained by unreliable hits must stay rare over the run.
    let rare = lumbre_gpu::Tolerance::EXACT.beyond(0.01);
    prop_assert!(n < 500 || rare.allows(relaxed, n), "{relaxed} of {n} queries needed the relaxed check");
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn soups_agree_with_brute_force(
        tris in prop::collection::vec((point(), point(), point()).prop_map(|(a, b, c)| [a, b, c]), 1..48),
        rays in prop::collection::vec((point(), direction(), -0.5f32..0.5, prop_oneof![Just(f32::INFINITY), 0.0f32..4.0]), 24),
        opts in options(),
    ) {
        let tree = KdTree::build(&tris, &opts);
        let valid = tris.iter().filter(|t| lumbre_kdtree::is_valid_triangle(t)).count();
        prop_assert_eq!(tree.skipped(), tris.len() - valid);
        for (origin, dir, t_min, t_max) in rays {
            check(&tree, &tris, &Query { ray: Ray::new(origin, dir), t_min, t_max }, false)?;
            // Rays from outside aimed at each triangle's centroid.
            let c = tris[(origin.x.to_bits() as usize) % tris.len()];
            let target = (c[0] + c[1] + c[2]) / 3.0;
            let from = origin * 3.0 + Vec3::splat(2.0);
            check(&tree, &tris, &Query::new(Ray::new(from, target - from)), false)?;
            // Aimed at a vertex: with lattice coordinates `vertex - origin` is exact, so the
            // ray passes exactly through the vertex, often on a split plane or cell corner.
            let vertex = c[(origin.y.to_bits() as usize) % 3];
            let on_lattice = |v: Vec3| (v * 4.0).round() == v * 4.0;
            check(&tree, &tris, &Query::new(Ray::new(from, vertex - from)), on_lattice(vertex) && on_lattice(from))?;
        }
    }
}
