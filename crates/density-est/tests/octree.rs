//! The paper's octree: the CPU path against brute force, the GPU path against the CPU path.

mod common;

use lumbre_density::{Density, Filter, Method, OctreeOptions};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};

fn octree(max_depth: u32, leaf_pairs: u32, filter: Filter) -> Density {
    let mut alg = Density { method: Method::Octree, ..Default::default() };
    alg.octree = OctreeOptions { max_depth, leaf_pairs, filter };
    alg
}

#[test]
fn cpu_octree_equals_brute_force() {
    let brute = Density { method: Method::BruteForce, ..Default::default() };
    for (s, d, r, seed) in [(500, 400, 0.05, 1), (2000, 300, 0.2, 2), (100, 1000, 0.01, 3)] {
        let p = common::uniform(s, d, r, seed);
        let want = brute.cpu(&p).unwrap();
        assert!(want.pairs() > 0);
        for (depth, leaf) in [(0, 1), (3, 64), (6, 1), (10, 0)] {
            let (got, report) = octree(depth, leaf, Filter::Compact).cpu_reported(&p, &()).unwrap();
            assert_eq!(got, want, "depth {depth} leaf {leaf}");
            if depth > 0 && leaf < 100 {
                assert!(report.get("octree level 1 nodes").unwrap() > 0.0, "{report}");
            }
        }
    }
}

#[test]
fn gpu_octree_equals_cpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    for (s, d, r, seed) in [(500, 400, 0.05, 1), (2000, 300, 0.2, 2)] {
        let p = common::uniform(s, d, r, seed);
        for filter in [Filter::Compact, Filter::HistoPyramid] {
            for (depth, leaf) in [(0, 1), (3, 64), (6, 1)] {
                let alg = octree(depth, leaf, filter);
                conformance(&alg, &gpu, &p, Tolerance::EXACT)
                    .unwrap_or_else(|e| panic!("{s}x{d} depth {depth} leaf {leaf} {filter:?}: {e}"));
            }
        }
    }
}

/// A deep octree without a leaf size would multiply entries level after level: the build
/// stops with an error naming the level instead of exhausting memory.
#[test]
fn runaway_octree_is_refused() {
    let p = common::uniform(2000, 500, 0.3, 9);
    let e = octree(16, 0, Filter::Compact).cpu(&p).unwrap_err().to_string();
    assert!(e.contains("octree level") && e.contains("max_depth"), "{e}");
}
