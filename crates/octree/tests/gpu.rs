//! GPU octree build against the CPU build, bit for bit.

use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};
use lumbre_octree::{Attrs, DenseCounts, GpuBuild, Points, Root};
use proptest::prelude::*;

mod common;
use common::cloud;

#[test]
fn gpu_build_equals_cpu_build() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    // Depths above 10 take two-word keys.
    for (n, depth) in [
        (1, 0),
        (1, 1),
        (2, 10),
        (100, 3),
        (5000, 6),
        (20_000, 10),
        (70_000, 8),
        (2, 11),
        (20_000, 11),
        (5000, 17),
        (20_000, 21),
    ] {
        let c = cloud(n, n as u32, 2.0);
        conformance(&GpuBuild::new(depth), &gpu, &c, Tolerance::EXACT)
            .unwrap_or_else(|e| panic!("n={n} depth={depth}: {e}"));
    }
}

#[test]
fn duplicates_and_non_finite_points() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let mut c = cloud(3000, 3, 1.0);
    for i in 0..1000 {
        c.positions[i] = [0.25, 0.5, 0.125]; // many points in one leaf
    }
    c.positions[1500] = [f32::NAN, 0.0, 0.0];
    c.positions[1501] = [0.0, f32::INFINITY, 0.0];
    for depth in [1, 5, 10, 11, 21] {
        let tree = conformance(&GpuBuild::new(depth), &gpu, &c, Tolerance::EXACT).unwrap();
        assert_eq!(tree.points(), 2998);
    }
    assert!(GpuBuild::new(22).gpu(&gpu, &c).is_err());
    let empty = Points { positions: vec![[f32::NAN; 3]], attrs: vec![Attrs::default()] };
    assert!(GpuBuild::new(4).gpu(&gpu, &empty).is_err());
}

#[test]
fn dense_counters_on_the_gpu_equal_the_cpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let c = cloud(20_000, 4, 1.0);
    let root = Root::around(&c.positions).unwrap();
    for depth in [0, 1, 4, 7] {
        conformance(&DenseCounts { depth, root }, &gpu, &c, Tolerance::EXACT)
            .unwrap_or_else(|e| panic!("depth {depth}: {e}"));
    }
    assert!(DenseCounts { depth: 9, root }.gpu(&gpu, &c).is_err());
}

#[test]
fn rebuilding_in_the_old_root_equals_the_cpu_update() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let c = cloud(10_000, 8, 1.0);
    for (depth, shift) in [(6, 0.001f32), (10, 0.003), (8, 0.7), (16, 0.002)] {
        let (mut tree, _) = lumbre_octree::Octree::build(&c.positions, &c.attrs, depth).unwrap();
        let old_root = tree.root;
        // Every point moves; with the large shift some leave the root.
        let moved: Vec<[f32; 3]> = c.positions.iter().map(|p| [p[0] + shift, p[1] - shift * 0.5, p[2]]).collect();
        tree.update(&c.positions, &moved, &c.attrs).unwrap();
        let next = Points { positions: moved, attrs: c.attrs.clone() };
        let on_gpu = GpuBuild { depth, root: Some(old_root) }.gpu(&gpu, &next).unwrap();
        assert_eq!(on_gpu, tree.pack(), "depth {depth} shift {shift}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(12))]
    #[test]
    fn generated_clouds_build_identically(n in 1usize..4000, seed in any::<u32>(), depth in 0u32..=21, flat in any::<bool>()) {
        let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return Ok(()) };
        let c = cloud(n, seed, if flat { 0.0 } else { 3.0 });
        conformance(&GpuBuild::new(depth), &gpu, &c, Tolerance::EXACT).map_err(|e| TestCaseError::fail(e.to_string()))?;
    }
}
