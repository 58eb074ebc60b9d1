//! Every method on both paths against brute force on the CPU, by proptest over generated
//! segments and disks: coordinates on a dyadic grid (so disks sit on cell boundaries and
//! segments run along cell faces) or anywhere, zero-length segments, axis-aligned or random
//! normals, disks larger than a leaf. Counts must agree exactly, and so must power: sums are
//! fixed-point integers, the same whatever the order (see `Estimate`).

mod common;

use glam::Vec3;
use lumbre_density::{Density, Disk, Filter, Method, OctreeOptions, Problem, Segment};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Gpu, GpuOptions, Tolerance, conformance};
use proptest::prelude::*;

/// A coordinate: on the grid of eighths of the unit cube, or anywhere in it.
fn coord() -> impl Strategy<Value = f32> {
    prop_oneof![(0u32..=8).prop_map(|k| k as f32 / 8.0), 0.0f32..1.0]
}

fn point() -> impl Strategy<Value = Vec3> {
    (coord(), coord(), coord()).prop_map(|(x, y, z)| Vec3::new(x, y, z))
}

fn normal() -> impl Strategy<Value = Vec3> {
    prop_oneof![
        (0usize..6).prop_map(|k| {
            let mut n = Vec3::ZERO;
            n[k % 3] = if k < 3 { 1.0 } else { -1.0 };
            n
        }),
        (-1.0f32..1.0, -1.0f32..1.0, -1.0f32..1.0)
            .prop_filter("non-zero", |(x, y, z)| x * x + y * y + z * z > 1e-3)
            .prop_map(|(x, y, z)| Vec3::new(x, y, z)),
    ]
}

fn segment() -> impl Strategy<Value = Segment> {
    (point(), point(), any::<bool>(), 0.0f32..2.0, 0u32..4).prop_map(|(a, b, zero, p, bounce)| Segment {
        start: a,
        end: if zero { a } else { b },
        power: [p, 1.0, 0.25],
        bounce,
    })
}

fn disk() -> impl Strategy<Value = Disk> {
    let radius = prop_oneof![(1u32..=5).prop_map(|k| [0.0625, 0.125, 0.25, 0.5, 0.75][k as usize - 1]), 0.01f32..0.3];
    (point(), normal(), radius).prop_map(|(centre, normal, radius)| Disk { centre, normal, radius })
}

fn problem() -> impl Strategy<Value = Problem> {
    (prop::collection::vec(segment(), 0..80), prop::collection::vec(disk(), 0..40))
        .prop_map(|(segments, disks)| Problem { segments, disks })
}

/// The methods under test: brute force, octrees of several shapes and both filters, the BVH.
fn methods() -> Vec<Density> {
    let mut out = vec![Density { method: Method::BruteForce, ..Default::default() }];
    for (max_depth, leaf_pairs, filter) in
        [(0, 1, Filter::Compact), (2, 0, Filter::HistoPyramid), (4, 4, Filter::Compact), (6, 16, Filter::Compact)]
    {
        let mut d = Density { method: Method::Octree, ..Default::default() };
        d.octree = OctreeOptions { max_depth, leaf_pairs, filter };
        out.push(d);
    }
    out.push(Density { method: Method::Bvh, ..Default::default() });
    out
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn cpu_methods_equal_brute_force(p in problem()) {
        let want = Density { method: Method::BruteForce, ..Default::default() }.cpu(&p).unwrap();
        for alg in methods() {
            let got = alg.cpu(&p).unwrap();
            prop_assert_eq!(&got, &want, "{:?}", alg);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(16))]
    #[test]
    fn gpu_methods_equal_cpu(p in problem()) {
        let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return Ok(()) };
        let want = Density { method: Method::BruteForce, ..Default::default() }.cpu(&p).unwrap();
        for alg in methods() {
            let got = conformance(&alg, &gpu, &p, Tolerance::EXACT).map_err(|e| TestCaseError::fail(format!("{alg:?}: {e}")))?;
            prop_assert_eq!(&got, &want, "{:?}", alg);
        }
    }
}

/// Larger random inputs, where every method finds many pairs.
#[test]
fn gpu_methods_equal_cpu_on_larger_inputs() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    for (s, d, r, seed) in [(4000, 2000, 0.03, 11), (1500, 3000, 0.1, 12)] {
        let p = common::uniform(s, d, r, seed);
        let want = Density { method: Method::Bvh, ..Default::default() }.cpu(&p).unwrap();
        assert!(want.pairs() > 1000);
        for alg in methods() {
            let got = conformance(&alg, &gpu, &p, Tolerance::EXACT).unwrap_or_else(|e| panic!("{alg:?}: {e}"));
            assert_eq!(got, want, "{alg:?}");
        }
    }
}

/// Special cases: everything crossing nothing, segments in a disk's plane, disks larger
/// than the scene.
#[test]
fn special_cases_agree() {
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty());
    let seg = |a: Vec3, b: Vec3| Segment { start: a, end: b, power: [1.0; 3], bounce: 0 };
    let disk = |c: Vec3, n: Vec3, r: f32| Disk { centre: c, normal: n, radius: r };
    let cases = [
        // No disk is crossed: segments far above the disks, moving sideways.
        Problem {
            segments: (0..50)
                .map(|i| seg(Vec3::new(i as f32, 5.0, 0.0), Vec3::new(i as f32 + 0.5, 5.0, 1.0)))
                .collect(),
            disks: (0..20).map(|i| disk(Vec3::new(i as f32, 0.0, 0.0), Vec3::Y, 0.4)).collect(),
        },
        // Segments lying in the disks' plane (a cell face at y = 0.5) cross nothing.
        Problem {
            segments: (0..8)
                .map(|i| seg(Vec3::new(0.0, 0.5, i as f32 / 8.0), Vec3::new(1.0, 0.5, i as f32 / 8.0)))
                .collect(),
            disks: vec![disk(Vec3::splat(0.5), Vec3::Y, 0.25), disk(Vec3::new(0.5, 0.5, 0.25), Vec3::NEG_Y, 0.25)],
        },
        // A disk larger than the whole scene, crossed by everything from above.
        Problem {
            segments: (0..30).map(|i| seg(Vec3::new(i as f32 / 30.0, 1.0, 0.3), Vec3::new(0.5, 0.0, 0.5))).collect(),
            disks: vec![disk(Vec3::new(0.5, 0.5, 0.5), Vec3::Y, 10.0)],
        },
    ];
    let expected_pairs = [0, 0, 30];
    for (p, pairs) in cases.iter().zip(expected_pairs) {
        let want = Density { method: Method::BruteForce, ..Default::default() }.cpu(p).unwrap();
        assert_eq!(want.pairs(), pairs);
        for alg in methods() {
            assert_eq!(alg.cpu(p).unwrap(), want, "{alg:?}");
            if let Some(gpu) = &gpu {
                assert_eq!(alg.gpu(gpu, p).unwrap(), want, "{alg:?} on the GPU");
            }
        }
    }
}

/// The back side of a disk receives nothing; the front receives what crosses it.
#[test]
fn back_side_gets_nothing() {
    let seg = |a: Vec3, b: Vec3| Segment { start: a, end: b, power: [1.0; 3], bounce: 0 };
    let down = seg(Vec3::new(0.1, 1.0, 0.0), Vec3::new(0.1, -1.0, 0.0));
    let up = seg(Vec3::new(-0.1, -1.0, 0.0), Vec3::new(-0.1, 1.0, 0.0));
    let disks = vec![
        Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: 0.5 },
        Disk { centre: Vec3::ZERO, normal: Vec3::NEG_Y, radius: 0.5 },
    ];
    let p = Problem { segments: vec![down, up], disks };
    for alg in methods() {
        let est = alg.cpu(&p).unwrap();
        assert_eq!(est.count, vec![1, 1], "{alg:?}");
    }
}

/// A segment ending on a disk's plane counts at its end (also when rounding leaves the end a
/// hair in front or behind), and the segment leaving from there does not.
#[test]
fn ends_on_the_surface_count_once() {
    let n = Vec3::new(0.3, 0.8, -0.2).normalize();
    let c = Vec3::new(0.4, 0.6, 0.2);
    let (t, b) = lumbre_raytrace::sampling::orthonormal_basis(n);
    let hit = c + t * 0.03 - b * 0.02;
    let mut segments = Vec::new();
    for k in -2i32..=2 {
        // The end point moved by a few ulps along the normal.
        let end = hit + n * (k as f32 * 1e-7);
        segments.push(Segment { start: hit + n * 0.5 + t * 0.1, end, power: [1.0; 3], bounce: 0 });
        segments.push(Segment { start: end, end: end + n * 0.4 - b * 0.3, power: [10.0; 3], bounce: 1 });
    }
    let p = Problem { segments, disks: vec![Disk { centre: c, normal: n, radius: 0.1 }] };
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty());
    for alg in methods() {
        let est = alg.cpu(&p).unwrap();
        assert_eq!(est.count, vec![5], "{alg:?}");
        assert_eq!(est.power, vec![[5.0; 3]], "{alg:?}");
        if let Some(gpu) = &gpu {
            assert_eq!(alg.gpu(gpu, &p).unwrap(), est, "{alg:?} on the GPU");
        }
    }
}

/// Segment lists longer than one storage binding: brute force and the BVH take them in
/// pieces; the octree, which binds them whole, refuses with the limit's name.
#[test]
fn inputs_longer_than_one_binding() {
    let Some(shared) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    let opts = GpuOptions {
        adapter: Some(shared.adapter_choice().to_string()),
        max_binding_size: Some(64 << 10),
        ..Default::default()
    };
    let gpu = Gpu::with_options(&opts).unwrap();
    // 5000 segments: 160 KB of geometry, three 64 KiB bindings.
    let p = common::uniform(5000, 300, 0.05, 21);
    let want = Density { method: Method::Bvh, ..Default::default() }.cpu(&p).unwrap();
    assert!(want.pairs() > 100);
    for method in [Method::BruteForce, Method::Bvh] {
        let alg = Density { method, ..Default::default() };
        assert_eq!(alg.gpu(&gpu, &p).unwrap(), want, "{method:?}");
    }
    let e = Density { method: Method::Octree, ..Default::default() }.gpu(&gpu, &p).unwrap_err().to_string();
    assert!(e.contains("max_storage_buffer_binding_size"), "{e}");
}

/// A comparison that must fail does: one disk's power changed by one unit of the last place.
#[test]
fn a_wrong_estimate_is_caught() {
    use lumbre_gpu::Agree;
    let p = common::uniform(300, 200, 0.1, 5);
    let est = Density::default().cpu(&p).unwrap();
    let mut bad = est.clone();
    let k = est.count.iter().position(|&c| c > 0).unwrap();
    bad.power[k][0] = f32::from_bits(bad.power[k][0].to_bits() + 1);
    assert!(est.disagreement(&bad, Tolerance::EXACT).is_some());
    let mut bad = est.clone();
    bad.count[k] += 1;
    assert!(est.disagreement(&bad, Tolerance::relative(1.0)).is_some());
}
