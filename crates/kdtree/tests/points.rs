//! The point kd-tree against brute force (proptest), with duplicate points, ties in
//! distance, k larger than the number of points, and non-finite input.

use glam::Vec3;
use lumbre_kdtree::PointKdTree;
use proptest::prelude::*;

fn d2(p: Vec3, q: Vec3) -> f32 {
    (p - q).length_squared()
}

/// All finite points sorted by (squared distance, index).
fn brute_sorted(points: &[Vec3], q: Vec3) -> Vec<(u32, f32)> {
    let mut all: Vec<(u32, f32)> =
        points.iter().enumerate().filter(|(_, p)| p.is_finite()).map(|(i, &p)| (i as u32, d2(p, q))).collect();
    all.sort_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)));
    all
}

fn check(points: &[Vec3], tree: &PointKdTree, q: Vec3, k: usize, r: f32) -> Result<(), TestCaseError> {
    let sorted = brute_sorted(points, q);
    prop_assert_eq!(tree.nearest(q), sorted.first().copied());
    prop_assert_eq!(tree.k_nearest(q, k), sorted.iter().take(k).copied().collect::<Vec<_>>());
    let mut within: Vec<u32> = sorted.iter().filter(|&&(_, d)| d <= r * r).map(|&(i, _)| i).collect();
    within.sort_unstable();
    prop_assert_eq!(tree.within_radius(q, r), within);
    Ok(())
}

fn coord() -> impl Strategy<Value = f32> {
    // A coarse lattice makes duplicates and exact ties in distance common.
    prop_oneof![3 => (-3i32..=3).prop_map(|i| i as f32), 2 => -3.0f32..3.0]
}

fn point() -> impl Strategy<Value = Vec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 200, ..ProptestConfig::default() })]

    #[test]
    fn queries_equal_brute_force(
        points in prop::collection::vec(point(), 0..300),
        queries in prop::collection::vec((point(), 0usize..40, 0.0f32..3.0), 16),
    ) {
        let tree = PointKdTree::build(&points);
        prop_assert_eq!(tree.len(), points.len());
        for (q, k, r) in queries {
            check(&points, &tree, q, k, r)?;
        }
    }

    #[test]
    fn non_finite_points_are_skipped(
        points in prop::collection::vec(prop_oneof![4 => point(), 1 => Just(Vec3::NAN), 1 => Just(Vec3::new(0.0, f32::INFINITY, 1.0))], 0..100),
        q in point(),
    ) {
        let tree = PointKdTree::build(&points);
        let finite = points.iter().filter(|p| p.is_finite()).count();
        prop_assert_eq!((tree.len(), tree.skipped()), (finite, points.len() - finite));
        check(&points, &tree, q, 5, 1.5)?;
        check(&points, &tree, q, points.len() + 3, f32::INFINITY)?;
    }
}

#[test]
fn many_duplicates_and_k_beyond_n() {
    let mut points = vec![Vec3::ONE; 500];
    points.extend((0..500).map(|i| Vec3::new((i % 7) as f32, (i % 3) as f32, 0.0)));
    let tree = PointKdTree::build(&points);
    for q in [Vec3::ONE, Vec3::ZERO, Vec3::new(3.0, 1.0, 0.0), Vec3::splat(100.0)] {
        check(&points, &tree, q, 1, 0.0).unwrap();
        check(&points, &tree, q, 600, 1.0).unwrap();
        check(&points, &tree, q, 5000, 2.5).unwrap();
    }
    // The 500 copies tie at distance 0 from (1, 1, 1): the lowest indices win.
    let k = tree.k_nearest(Vec3::ONE, 3);
    assert_eq!(k, [(0, 0.0), (1, 0.0), (2, 0.0)]);
}

#[test]
fn large_random_cloud_uses_the_parallel_build_and_agrees() {
    // More points than the parallel threshold, from a deterministic generator.
    let mut s = 0x1234_5678u64;
    let mut next = || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 40) as f32 / (1u64 << 24) as f32
    };
    let points: Vec<Vec3> = (0..40_000).map(|_| Vec3::new(next(), next(), next()) * 10.0).collect();
    let tree = PointKdTree::build(&points);
    for i in 0..200 {
        let q = Vec3::new(next(), next(), next()) * 12.0 - Vec3::ONE;
        check(&points, &tree, q, 1 + i % 20, 0.3 + (i % 5) as f32 * 0.2).unwrap();
    }
    assert_eq!(PointKdTree::build(&points), tree, "the parallel build is deterministic");
}
