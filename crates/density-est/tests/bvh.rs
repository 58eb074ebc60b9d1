//! The BVH over the disks: the CPU path against brute force, the GPU path against the CPU.

mod common;

use lumbre_density::{Density, Method};
use lumbre_gpu::testing::test_gpu;
use lumbre_gpu::{Compute, Tolerance, conformance};

fn bvh() -> Density {
    Density { method: Method::Bvh, ..Default::default() }
}

#[test]
fn cpu_bvh_equals_brute_force() {
    let brute = Density { method: Method::BruteForce, ..Default::default() };
    for (s, d, r, seed) in
        [(500, 400, 0.05, 1), (2000, 300, 0.2, 2), (100, 1000, 0.01, 3), (50, 1, 0.5, 4), (50, 2, 0.5, 5)]
    {
        let p = common::uniform(s, d, r, seed);
        let want = brute.cpu(&p).unwrap();
        let (got, report) = bvh().cpu_reported(&p, &()).unwrap();
        assert_eq!(got, want, "{s} x {d}");
        assert!(report.get("pairs tested").unwrap() <= (s * d) as f64);
    }
}

#[test]
fn gpu_bvh_equals_cpu() {
    let Some(gpu) = test_gpu(lumbre_gpu::wgpu::Features::empty()) else { return };
    for (s, d, r, seed) in
        [(500, 400, 0.05, 1), (2000, 300, 0.2, 2), (50, 1, 0.5, 4), (50, 2, 0.5, 5), (3000, 3000, 0.02, 6)]
    {
        let p = common::uniform(s, d, r, seed);
        conformance(&bvh(), &gpu, &p, Tolerance::EXACT).unwrap_or_else(|e| panic!("{s}x{d}: {e}"));
        let (_, cpu_report) = bvh().cpu_reported(&p, &()).unwrap();
        let (_, gpu_report) = bvh().run_reported(&lumbre_gpu::Backend::Gpu(gpu.clone()), &p, &()).unwrap();
        // The CPU walks the tree four-wide, so its node visits differ; the boxes, hence the
        // disks tested, are the same.
        assert!(cpu_report.get("bvh node visits (four-wide)").is_some() && gpu_report.get("bvh node visits").is_some());
        for stat in ["pairs tested", "pairs found"] {
            assert_eq!(cpu_report.get(stat), gpu_report.get(stat), "{stat}: {cpu_report} vs {gpu_report}");
        }
    }
}
