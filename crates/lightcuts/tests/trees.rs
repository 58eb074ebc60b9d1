//! Light trees on the CPU: invariants, the greedy build against brute-force greedy
//! clustering, Karras's tree against its definition, and bad input.

use glam::Vec3;
use lumbre_lightcuts::{ClusterMetric, GreedyTree, LightNode, LightTree, MortonTree, Vpl};
use proptest::prelude::*;

/// `n` lights from a xorshift stream: on a few planes (as VPLs on walls are), with colours.
fn lights(n: usize, seed: u32) -> Vec<Vpl> {
    let mut rng = lumbre_gpu::testing::Rng::new(seed);
    let mut r = move || rng.f32();
    (0..n)
        .map(|_| {
            let (u, v, w) = (r(), r(), r());
            let (position, normal) = match (r() * 4.0) as u32 {
                0 => (Vec3::new(u, 0.0, v), Vec3::Y),
                1 => (Vec3::new(0.0, u, v), Vec3::X),
                2 => (Vec3::new(u, v, 1.0), -Vec3::Z),
                _ => (Vec3::new(u, v, w), Vec3::new(u - 0.5, v - 0.5, w - 0.5).normalize_or(Vec3::Y)),
            };
            let intensity = Vec3::new(r(), r() * 0.5, r() * 0.2) * (1.0 + 4.0 * r());
            Vpl { position, normal, intensity }
        })
        .collect()
}

/// A named tree builder.
type Builder = (&'static str, Box<dyn Fn(&[Vpl]) -> lumbre_gpu::Result<LightTree>>);

fn builders() -> Vec<Builder> {
    let mut b: Vec<Builder> = Vec::new();
    for metric in [
        ClusterMetric::Walter,
        ClusterMetric::Similarity { color: false, direction: false },
        ClusterMetric::Similarity { color: true, direction: false },
        ClusterMetric::Similarity { color: false, direction: true },
        ClusterMetric::PAPER,
    ] {
        b.push((metric.name(), Box::new(move |v: &[Vpl]| GreedyTree { metric, seed: 3, diagonal: None }.build(v))));
    }
    for direction_bits in [0, 3] {
        b.push(("morton", Box::new(move |v: &[Vpl]| MortonTree { direction_bits, seed: 3, bounds: None }.build(v))));
    }
    b
}

/// The leaves (light indices) under each node.
fn leaf_sets(tree: &LightTree) -> Vec<Vec<u32>> {
    fn under(t: &LightTree, i: u32, out: &mut Vec<Vec<u32>>) -> Vec<u32> {
        let n = t.nodes[i as usize];
        let mut s = if n.is_leaf() {
            vec![n.rep]
        } else {
            let mut a = under(t, n.left, out);
            a.extend(under(t, n.right, out));
            a
        };
        s.sort_unstable();
        out[i as usize] = s.clone();
        s
    }
    let mut out = vec![Vec::new(); tree.nodes.len()];
    under(tree, 0, &mut out);
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn every_builder_makes_a_valid_tree(n in 1usize..300, seed in any::<u32>()) {
        let vpls = lights(n, seed);
        let total = vpls.iter().fold(Vec3::ZERO, |s, v| s + v.intensity);
        for (name, build) in builders() {
            let tree = build(&vpls).unwrap();
            prop_assert!(tree.validate().is_ok(), "{}: {:?}", name, tree.validate());
            let root = tree.nodes[0];
            prop_assert!((root.intensity - total).abs().max_element() <= 1e-4 * total.max_element(), "{}", name);
            // Every light's normal lies in the root's cone.
            for v in &vpls {
                prop_assert!(v.normal.dot(root.axis) >= root.cos - 1e-5, "{}: {} outside {:?}", name, v.normal, root.cone());
            }
        }
    }
}

/// Greedy clustering by brute force: merge the globally closest pair each step.
fn brute_force_greedy(vpls: &[Vpl], metric: ClusterMetric) -> Vec<Vec<u32>> {
    let (lo, hi) =
        vpls.iter().fold((vpls[0].position, vpls[0].position), |(l, h), v| (l.min(v.position), h.max(v.position)));
    let diag = (hi - lo).length();
    // Reuse the tree builder on two lights to evaluate the metric of a merged pair: the
    // root of a greedy tree of 2 "lights" is their merge. Instead compute it directly with
    // the public building blocks.
    let size = |a: &LightNode, b: &LightNode| -> f32 {
        let alpha = (a.hi.max(b.hi) - a.lo.min(b.lo)).length();
        match metric {
            ClusterMetric::Walter => {
                let cone = lumbre_lightcuts::Cone::union(a.cone(), b.cone());
                let k = diag * (1.0 - cone.cos);
                (a.weight() + b.weight()) * (alpha * alpha + k * k)
            }
            ClusterMetric::Similarity { .. } => alpha / diag,
        }
    };
    let mut clusters: Vec<(LightNode, Vec<u32>)> =
        vpls.iter().enumerate().map(|(i, v)| (LightNode::leaf(v, i as u32), vec![i as u32])).collect();
    let mut sets = Vec::new();
    while clusters.len() > 1 {
        let mut best = (f32::INFINITY, 0, 0);
        for i in 0..clusters.len() {
            for j in i + 1..clusters.len() {
                let s = size(&clusters[i].0, &clusters[j].0);
                if s < best.0 {
                    best = (s, i, j);
                }
            }
        }
        let (_, i, j) = best;
        let (b, bs) = clusters.remove(j);
        let (a, mut as_) = clusters.remove(i);
        as_.extend(bs);
        as_.sort_unstable();
        sets.push(as_.clone());
        clusters.push((LightNode::merge(&a, 0, &b, 0, 0, 0), as_));
    }
    sets.sort();
    sets
}

#[test]
fn greedy_equals_brute_force_greedy() {
    for seed in 0..12 {
        let vpls = lights(40, seed);
        for metric in [ClusterMetric::Walter, ClusterMetric::Similarity { color: false, direction: false }] {
            let tree = GreedyTree { metric, seed: 0, diagonal: None }.build(&vpls).unwrap();
            let mut got: Vec<Vec<u32>> =
                leaf_sets(&tree).into_iter().enumerate().filter(|(i, _)| *i < vpls.len() - 1).map(|(_, s)| s).collect();
            got.sort();
            assert_eq!(got, brute_force_greedy(&vpls, metric), "seed {seed} {metric:?}");
        }
    }
}

#[test]
fn morton_clusters_are_runs_of_the_sorted_lights() {
    let vpls = lights(500, 7);
    let tree = MortonTree::default().build(&vpls).unwrap();
    // The leaves in tree order are the lights sorted by key; every cluster is a run of them.
    let n = vpls.len();
    let order: Vec<u32> = tree.nodes[n - 1..].iter().map(|l| l.rep).collect();
    let position: Vec<usize> = {
        let mut p = vec![0; n];
        for (k, &i) in order.iter().enumerate() {
            p[i as usize] = k;
        }
        p
    };
    for set in leaf_sets(&tree) {
        let mut at: Vec<usize> = set.iter().map(|&i| position[i as usize]).collect();
        at.sort_unstable();
        assert_eq!(at.last().unwrap() - at[0] + 1, at.len(), "a cluster is not a run");
    }
    // Direction bits split lights at one position by their normals.
    let twins: Vec<Vpl> = (0..8)
        .map(|i| Vpl {
            position: Vec3::splat(0.5),
            normal: if i % 2 == 0 { Vec3::Y } else { -Vec3::Y },
            intensity: Vec3::ONE,
        })
        .chain(lights(50, 1))
        .collect();
    let with_dirs = MortonTree { direction_bits: 2, ..Default::default() }.build(&twins).unwrap();
    let sets = leaf_sets(&with_dirs);
    assert!(sets.contains(&vec![0, 2, 4, 6]) && sets.contains(&vec![1, 3, 5, 7]), "normals were not separated");
}

#[test]
fn representatives_follow_intensity() {
    // Two lights, one 9 times brighter: over many seeds it represents the pair about 90% of the time.
    let vpls = [
        Vpl { position: Vec3::ZERO, normal: Vec3::Y, intensity: Vec3::splat(9.0) },
        Vpl { position: Vec3::X, normal: Vec3::Y, intensity: Vec3::ONE },
    ];
    let bright = (0..2000)
        .filter(|&seed| GreedyTree { seed, ..Default::default() }.build(&vpls).unwrap().nodes[0].rep == 0)
        .count();
    assert!((1700..1900).contains(&bright), "{bright} of 2000");
    let dark = [vpls[0], Vpl { intensity: Vec3::ZERO, ..vpls[1] }];
    assert!((0..200).all(|seed| MortonTree { seed, ..Default::default() }.build(&dark).unwrap().nodes[0].rep == 0));
}

#[test]
fn bad_lights_are_errors() {
    let ok = lights(10, 1);
    for (name, build) in builders() {
        let e = build(&[]).unwrap_err().to_string();
        assert!(e.contains("no VPLs"), "{name}: {e}");
        let mut bad = ok.clone();
        bad[4].intensity.y = f32::NAN;
        assert!(build(&bad).unwrap_err().to_string().contains("VPL 4"), "{name}");
        let mut bad = ok.clone();
        bad[2].normal = Vec3::ZERO;
        assert!(build(&bad).unwrap_err().to_string().contains("VPL 2"), "{name}");
        let mut bad = ok.clone();
        bad[9].position.z = f32::INFINITY;
        assert!(build(&bad).unwrap_err().to_string().contains("VPL 9"), "{name}");
        let mut bad = ok.clone();
        bad[0].intensity.x = -1.0;
        assert!(build(&bad).is_err(), "{name}");
    }
    assert!(MortonTree { direction_bits: 6, ..Default::default() }.build(&ok).is_err());
    let same = vec![ok[0]; 5];
    assert!(GreedyTree::default().build(&same).is_err(), "one point needs a given diagonal");
    assert!(GreedyTree { diagonal: Some(1.0), ..Default::default() }.build(&same).unwrap().validate().is_ok());
}
