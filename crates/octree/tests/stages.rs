//! The GPU build stage by stage: with any stage of `octree/build.wgsl` or `octree/packed.wgsl`
//! run as its CPU twin it builds what the GPU build builds, and with every stage (sort and
//! compactions included) on the CPU what the CPU build builds, bit for bit.

use lumbre_gpu::Compute;
use lumbre_gpu::stages::Stages;
use lumbre_gpu::testing::test_gpu;

use lumbre_octree::{Attrs, GpuBuild, Points};
use lumbre_shaders::Shader;
use lumbre_shaders::octree::{BUILD_KEY32, PACKED};
use proptest::prelude::*;

mod common;
use common::cloud;

/// Every entry point of the build's own shaders (`octree/build`, whose key variants have the
/// same ones, and `octree/packed`), as the shader crate lists them.
fn stages() -> Vec<(&'static str, &'static str)> {
    let base = |s: &'static Shader| s.name.split(':').next().unwrap_or(s.name);
    [&BUILD_KEY32, &PACKED].into_iter().flat_map(|s| s.entry_points.iter().map(move |&e| (base(s), e))).collect()
}

fn is(stage: (&str, &str), shader: &str, entry: &str) -> bool {
    shader.split(':').next() == Some(stage.0) && entry == stage.1
}

#[test]
fn any_stage_on_the_cpu_builds_what_the_gpu_builds() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    // Depth 11 takes two-word keys (the BUILD_KEY64 variant).
    for (n, depth) in [(3000, 6), (2000, 11)] {
        let c = cloud(n, n as u32, 2.0);
        let want = GpuBuild::new(depth).gpu(&gpu, &c).unwrap();
        for stage in std::iter::once(("", "")).chain(stages()) {
            let mut r = Stages::staged(&gpu, move |s, e| is(stage, s, e));
            let got = GpuBuild::new(depth).run_stages(&mut r, &c).unwrap();
            assert_eq!(got, want, "n={n} depth={depth}: {stage:?} on the CPU");
            let on_cpu: Vec<_> = r.history().iter().filter(|s| s.on_cpu).collect();
            assert!(on_cpu.iter().all(|s| is(stage, s.shader, s.entry)), "{on_cpu:?}");
            assert_eq!(on_cpu.is_empty(), stage.0.is_empty(), "n={n} depth={depth}: {stage:?} did not run");
        }
    }
}

#[test]
fn every_stage_on_the_cpu_builds_what_the_cpu_builds() {
    let mut dense = cloud(3000, 3, 1.0);
    for i in 0..1000 {
        dense.positions[i] = [0.25, 0.5, 0.125]; // many points in one leaf
    }
    dense.positions[1500] = [f32::NAN, 0.0, 0.0];
    let clouds = [(1, 0), (1, 1), (2, 10), (100, 3), (5000, 6), (3000, 11), (2000, 21)]
        .map(|(n, depth)| (cloud(n, n as u32, 2.0), depth))
        .into_iter()
        .chain([5, 11].map(|depth| (dense.clone(), depth)));
    for (c, depth) in clouds {
        let want = GpuBuild::new(depth).cpu(&c).unwrap();
        let mut r = Stages::cpu();
        assert_eq!(GpuBuild::new(depth).run_stages(&mut r, &c).unwrap(), want, "depth {depth}");
        assert!(r.history().iter().all(|s| s.on_cpu));
    }
    // Pieces as on a device with 64 KiB bindings: the sort and the compactions run piece by piece.
    let c = cloud(40_000, 7, 3.0);
    let mut r = Stages::cpu_with_binding_limit(64 << 10);
    assert_eq!(GpuBuild::new(9).run_stages(&mut r, &c).unwrap(), GpuBuild::new(9).cpu(&c).unwrap());
}

#[test]
fn bad_clouds_are_the_same_errors() {
    let c = cloud(10, 1, 1.0);
    let mut r = Stages::cpu();
    assert!(GpuBuild::new(22).run_stages(&mut r, &c).is_err());
    let empty = Points { positions: vec![[f32::NAN; 3]], attrs: vec![Attrs::default()] };
    assert!(GpuBuild::new(4).run_stages(&mut r, &empty).is_err());
    let short = Points { positions: c.positions.clone(), attrs: vec![Attrs::default()] };
    assert!(GpuBuild::new(4).run_stages(&mut r, &short).is_err());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn generated_clouds_through_the_twins_build_identically(
        n in 1usize..3000,
        seed in any::<u32>(),
        depth in 0u32..=21,
        flat in any::<bool>(),
    ) {
        let c = cloud(n, seed, if flat { 0.0 } else { 3.0 });
        let got = GpuBuild::new(depth).run_stages(&mut Stages::cpu(), &c).unwrap();
        prop_assert_eq!(got, GpuBuild::new(depth).cpu(&c).unwrap());
    }
}
