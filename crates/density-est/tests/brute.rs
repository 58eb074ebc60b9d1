//! Brute force: the CPU path against hand-made cases, the GPU path against the CPU path.

mod common;

use glam::Vec3;
use lumbre_density::{Density, Disk, Method, Problem, Segment};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Tolerance, conformance};

fn brute() -> Density {
    Density { method: Method::BruteForce, ..Default::default() }
}

#[test]
fn gpu_brute_force_equals_cpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    for (s, d, r, seed) in [(0, 5, 0.1, 1), (7, 0, 0.1, 2), (300, 200, 0.2, 3), (1000, 700, 0.05, 4)] {
        let p = common::uniform(s, d, r, seed);
        let est = conformance(&brute(), &gpu, &p, Tolerance::EXACT).unwrap_or_else(|e| panic!("{s}x{d}: {e}"));
        if s * d > 10_000 {
            assert!(est.pairs() > 0, "the case must find crossings to test anything");
        }
    }
}

#[test]
fn end_on_surface_counts_leaving_does_not() {
    let disk = Disk { centre: Vec3::new(0.3, 0.0, 0.2), normal: Vec3::Y, radius: 0.1 };
    let hit = Vec3::new(0.32, 0.0, 0.21);
    let seg = |a: Vec3, b: Vec3| Segment { start: a, end: b, power: [1.0; 3], bounce: 0 };
    let p = Problem {
        segments: vec![seg(Vec3::new(0.9, 0.7, 0.4), hit), seg(hit, Vec3::new(0.0, 0.5, 0.9))],
        disks: vec![disk],
    };
    let est = brute().cpu(&p).unwrap();
    assert_eq!(est.count, vec![1]);
}
