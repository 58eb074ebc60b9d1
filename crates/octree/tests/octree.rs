//! The CPU octree: build against brute force, the thesis's dense counters, update against
//! rebuild, traversal against brute force.

use std::collections::BTreeMap;

use lumbre_morton::{NodeKey32, NodeKey64};
use lumbre_octree::*;
use proptest::prelude::*;

fn cloud(n: usize, seed: u32) -> (Vec<[f32; 3]>, Vec<Attrs>) {
    let mut rng = lumbre_gpu::testing::Rng::new(seed);
    let mut r = move || rng.f32();
    let pts: Vec<[f32; 3]> = (0..n).map(|_| [r(), r() * 0.5, r() * r()]).collect();
    let attrs = (0..n)
        .map(|i| Attrs { rgb: [i as u8, (i * 7) as u8, 255], reflection: (i % 3) as u8 * 100, refraction: 3 })
        .collect();
    (pts, attrs)
}

/// Every node's count and sums, from each point's ancestors directly.
fn brute_force(tree: &Octree, points: &[[f32; 3]], attrs: &[Attrs]) -> BTreeMap<u64, (u32, [u32; 5])> {
    let cells = (1u32 << tree.depth) as f32;
    let mut m: BTreeMap<u64, (u32, [u32; 5])> = BTreeMap::new();
    for (p, a) in points.iter().zip(attrs) {
        if !p.iter().all(|c| c.is_finite()) {
            continue;
        }
        let scale = cells / tree.root.size;
        let cell: [u32; 3] =
            std::array::from_fn(|k| (((p[k] - tree.root.min[k]) * scale) as u32).min(cells as u32 - 1));
        let leaf = if tree.depth == 0 { NodeKey64::ROOT } else { NodeKey64::from_cell(tree.depth, cell).unwrap() };
        for l in 0..=tree.depth {
            let e = m.entry(leaf.ancestor(l).unwrap().0).or_default();
            e.0 += 1;
            for (s, c) in e.1.iter_mut().zip(a.channels()) {
                *s += c;
            }
        }
    }
    m
}

fn check_structure(tree: &Octree) {
    assert_eq!(tree.levels.len() as u32, tree.depth + 2);
    let keys: Vec<u64> = (0..=tree.depth).flat_map(|l| tree.level_keys(l)).collect();
    assert_eq!(keys.len(), tree.nodes.len());
    for l in 0..=tree.depth {
        let level = tree.level(l);
        let start = tree.levels[l as usize] as usize;
        let level_keys = &keys[start..start + level.len()];
        assert!(level_keys.windows(2).all(|w| w[0] < w[1]), "level {l} sorted and unique");
        for (k, n) in level.iter().enumerate() {
            let key = NodeKey64(level_keys[k]);
            assert_eq!(key.level(), l);
            let i = start + k;
            // Spot checks of the key of one node and of the search by key.
            if k % 97 == 0 {
                assert_eq!(tree.key(i), key);
                assert_eq!(tree.find(key), Some(i));
            }
            if l == tree.depth {
                assert_eq!((n.first_child, n.child_mask), (NO_CHILD, 0));
                continue;
            }
            assert_ne!(n.child_mask, 0, "interior node {i} has children");
            let mut count = 0;
            let mut sum = [0u32; 5];
            for o in 0..8 {
                if let Some(c) = n.child(o) {
                    let child = &tree.nodes[c as usize];
                    assert_eq!(NodeKey64(keys[c as usize]).parent(), Some(key));
                    assert_eq!(NodeKey64(keys[c as usize]).octant(), o);
                    count += child.count;
                    for (s, x) in sum.iter_mut().zip(child.sum) {
                        *s += x;
                    }
                }
            }
            assert_eq!((count, sum), (n.count, n.sum), "node {i} sums its children");
        }
    }
}

#[test]
fn build_equals_brute_force_ancestor_counts() {
    for (n, depth) in [(1, 0), (1, 3), (10, 1), (1000, 4), (5000, 7), (3000, 10), (3000, 11), (2000, 16), (2000, 21)] {
        let (pts, attrs) = cloud(n, n as u32);
        let (tree, report) = Octree::build(&pts, &attrs, depth).unwrap();
        assert_eq!(report.points, n);
        check_structure(&tree);
        let packed = tree.pack();
        assert_eq!(packed.unpack(), tree, "n={n} depth={depth}: pack, unpack");
        assert_eq!(packed.points() as usize, n);
        let want = brute_force(&tree, &pts, &attrs);
        let keys = (0..=depth).flat_map(|l| tree.level_keys(l));
        let got: BTreeMap<u64, (u32, [u32; 5])> = keys.zip(&tree.nodes).map(|(k, n)| (k, (n.count, n.sum))).collect();
        assert_eq!(got, want, "n={n} depth={depth}");
    }
}

proptest! {
    /// `min + (max - min)` rounds below `max` for some pairs (found by the GPU build
    /// property test: min z 0.10476446, max x 2.999347); the root must hold every point anyway.
    #[test]
    fn the_root_around_points_contains_them(a in prop::array::uniform3(-1e4f32..1e4), b in prop::array::uniform3(-1e4f32..1e4)) {
        let root = Root::around(&[a, b]).unwrap();
        prop_assert!(root.contains(a) && root.contains(b), "{root:?}");
    }
}

#[test]
fn non_finite_points_are_dropped_and_counted() {
    let pts = [[0.0, 0.0, 0.0], [f32::NAN, 0.0, 0.0], [1.0, f32::INFINITY, 0.0], [1.0, 1.0, 1.0]];
    let (tree, report) = Octree::build(&pts, &[Attrs::default(); 4], 3).unwrap();
    assert_eq!((tree.points(), report.dropped_non_finite), (2, 2));
    assert_eq!(Octree::build(&[[f32::NAN; 3]], &[Attrs::default()], 3), Err(OctreeError::Empty));
    assert_eq!(
        Octree::build(&pts, &[Attrs::default(); 3], 3).unwrap_err(),
        OctreeError::Lengths { points: 4, attrs: 3 }
    );
    assert_eq!(Octree::build(&pts, &[Attrs::default(); 4], 22).unwrap_err(), OctreeError::Depth(22));
    let root = Root { min: [0.0; 3], size: 0.5 };
    assert!(matches!(
        Octree::build_in(&pts, &[Attrs::default(); 4], 3, root),
        Err(OctreeError::Outside { index: 3, .. })
    ));
}

#[test]
fn a_tree_of_no_points_has_no_nodes_keys_or_hits() {
    let root = Root { min: [0.0; 3], size: 1.0 };
    let (tree, report) = Octree::build_in(&[[f32::NAN; 3]], &[Attrs::default()], 3, root).unwrap();
    assert_eq!((tree.nodes.len(), report.points, report.dropped_non_finite), (0, 0, 1));
    assert!((0..=3).all(|l| tree.level_keys(l).is_empty()));
    assert_eq!(tree.find(NodeKey64::ROOT), None);
    for level in 0..=3 {
        assert_eq!(tree.trace([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0], 0.0, f32::INFINITY, level), None);
        assert_eq!(tree.trace_brute_force([-1.0, 0.5, 0.5], [1.0, 0.0, 0.0], 0.0, f32::INFINITY, level), None);
    }
    let packed = tree.pack();
    assert_eq!((packed.points(), packed.payloads.len()), (0, 0));
    assert_eq!(packed.unpack(), tree);
}

#[test]
fn dense_counters_agree_with_the_sparse_tree() {
    let (pts, attrs) = cloud(4000, 9);
    for depth in [0, 1, 3, 5] {
        let (tree, _) = Octree::build(&pts, &attrs, depth).unwrap();
        let dense = dense_counts(&pts, tree.root, depth).unwrap();
        assert_eq!(dense.len() as u64 * 4, dense_bytes(depth));
        let mut nonzero = 0;
        for (i, &c) in dense.iter().enumerate() {
            let key = NodeKey32::from_index(i as u64).unwrap();
            match tree.find(NodeKey64(key.0 as u64)) {
                Some(n) => assert_eq!(tree.nodes[n].count, c),
                None => assert_eq!(c, 0, "dense counter {i} without a sparse node"),
            }
            nonzero += (c > 0) as usize;
        }
        assert_eq!(nonzero, tree.nodes.len());
    }
    assert!(dense_counts(&pts, Root::around(&pts).unwrap(), 9).is_err());
}

fn rays(n: usize) -> Vec<([f32; 3], [f32; 3])> {
    let (a, _) = cloud(2 * n, 77);
    let mut out: Vec<([f32; 3], [f32; 3])> = (0..n)
        .map(|i| {
            let o = [a[i][0] * 3.0 - 1.0, a[i][1] * 3.0 - 1.0, -1.0];
            let t = a[n + i];
            ([o[0], o[1], o[2]], [t[0] - o[0], t[1] * 0.5 - o[1], t[2] - o[2]])
        })
        .collect();
    // Axis-parallel rays, rays starting inside, rays missing everything.
    out.push(([-1.0, 0.25, 0.1], [1.0, 0.0, 0.0]));
    out.push(([0.5, 0.25, 0.25], [0.0, 0.0, 1.0]));
    out.push(([0.5, 0.25, 0.25], [0.0, -1.0, 0.0]));
    out.push(([5.0, 5.0, 5.0], [1.0, 1.0, 1.0]));
    out.push(([0.5, 0.5, -1.0], [0.0, 0.0, -1.0]));
    out
}

#[test]
fn traversal_equals_brute_force_over_leaf_boxes() {
    let (pts, attrs) = cloud(3000, 5);
    for depth in [0, 2, 5, 8, 21] {
        let (tree, _) = Octree::build(&pts, &attrs, depth).unwrap();
        let step = if depth > 10 { 7 } else { 1 };
        for level in (0..=depth).step_by(step) {
            for (o, d) in rays(300) {
                let a = tree.trace(o, d, 0.0, f32::INFINITY, level);
                let b = tree.trace_brute_force(o, d, 0.0, f32::INFINITY, level);
                match (a, b) {
                    (None, None) => {}
                    (Some(a), Some(b)) => {
                        assert_eq!(a.t, b.t, "depth {depth} level {level} ray {o:?} {d:?}");
                        if a.node != b.node {
                            // A tie on a shared face: the other voxel is entered at the same t.
                            let (lo, hi) = tree.bounds(a.node as usize);
                            let inv = d.map(|x| 1.0 / x);
                            assert_eq!(slab(o, inv, lo, hi, 0.0, f32::INFINITY).map(|s| s.0), Some(b.t));
                        }
                    }
                    (a, b) => panic!("depth {depth} level {level} ray {o:?} {d:?}: {a:?} vs {b:?}"),
                }
            }
        }
    }
}

fn moved(points: &[[f32; 3]], seed: u32, scale: f32, fraction: f32) -> Vec<[f32; 3]> {
    let (r, _) = cloud(points.len(), seed);
    points
        .iter()
        .zip(&r)
        .map(|(p, d)| if d[0] < fraction { std::array::from_fn(|k| p[k] + (d[k] - 0.5) * scale) } else { *p })
        .collect()
}

#[test]
fn update_equals_rebuild_when_every_point_moves() {
    let (pts, attrs) = cloud(5000, 3);
    for depth in [1, 4, 8, 10, 13, 21] {
        let (mut tree, _) = Octree::build(&pts, &attrs, depth).unwrap();
        let new = moved(&pts, 11, 0.01, 1.0);
        // Keep them in the box: this case is about moving, not growing.
        let new: Vec<[f32; 3]> =
            new.iter().map(|p| std::array::from_fn(|k| p[k].clamp(tree.root.min[k], tree.root.max()[k]))).collect();
        let mut chosen = tree.clone();
        let report = tree.update_in_place(&pts, &new, &attrs).unwrap();
        assert_eq!(report.root_growths, 0);
        assert!(!report.rebuilt);
        let rebuilt = chosen.update(&pts, &new, &attrs).unwrap().rebuilt;
        assert_eq!(rebuilt, report.moved as f64 > REBUILD_FRACTION * pts.len() as f64, "depth {depth}");
        assert_eq!(chosen, tree);
        let (fresh, _) = Octree::build_in(&new, &attrs, depth, tree.root).unwrap();
        assert_eq!(tree, fresh, "depth {depth}");
        assert!(report.moved > 0);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]
    #[test]
    fn update_equals_rebuild_for_random_moves(
        n in 1usize..600,
        seed in any::<u32>(),
        depth in 0u32..=21,
        scale in prop_oneof![Just(0.001f32), Just(0.05), Just(0.5), Just(3.0)],
        fraction in prop_oneof![Just(0.1f32), Just(1.0)],
        nan in any::<bool>(),
    ) {
        let (pts, attrs) = cloud(n, seed);
        let (mut tree, _) = Octree::build(&pts, &attrs, depth).unwrap();
        let mut new = moved(&pts, seed ^ 0xabcd, scale, fraction);
        if nan && n > 1 {
            new[0] = [f32::NAN, 0.0, 0.0]; // a point that vanishes
        }
        let mut chosen = tree.clone();
        tree.update_in_place(&pts, &new, &attrs).unwrap();
        chosen.update(&pts, &new, &attrs).unwrap();
        prop_assert_eq!(&chosen, &tree);
        let (fresh, _) = Octree::build_in(&new, &attrs, depth, tree.root).unwrap();
        prop_assert_eq!(&tree, &fresh);
        prop_assert_eq!(&tree.pack().unpack(), &tree);
        // Every new point is inside the (possibly grown) root.
        for p in new.iter().filter(|p| p.iter().all(|c| c.is_finite())) {
            prop_assert!(tree.root.contains(*p));
        }
    }
}
