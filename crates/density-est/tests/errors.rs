//! Bad input is an error naming the index and the rule, on both paths; empty input is fine.

use glam::Vec3;
use lumbre_density::{Density, Disk, Problem, Segment};
use lumbre_gpu::Compute;
use lumbre_gpu::testing::test_gpu;

fn seg(a: Vec3, b: Vec3) -> Segment {
    Segment { start: a, end: b, power: [1.0; 3], bounce: 0 }
}

fn disk(r: f32) -> Disk {
    Disk { centre: Vec3::ZERO, normal: Vec3::Y, radius: r }
}

fn ok_problem() -> Problem {
    Problem { segments: vec![seg(Vec3::Y, Vec3::ZERO); 3], disks: vec![disk(0.5); 3] }
}

/// Each broken problem, and words its error must contain.
fn broken() -> Vec<(Problem, &'static str, &'static str)> {
    let mut cases = Vec::new();
    let mut p = ok_problem();
    p.segments[2].start.x = f32::NAN;
    cases.push((p, "segment 2", "start"));
    let mut p = ok_problem();
    p.segments[1].end.z = f32::INFINITY;
    cases.push((p, "segment 1", "end"));
    let mut p = ok_problem();
    p.segments[0].power[1] = f32::NAN;
    cases.push((p, "segment 0", "power"));
    let mut p = ok_problem();
    p.segments[2].power[0] = -1.0;
    cases.push((p, "segment 2", "non-negative"));
    let mut p = ok_problem();
    p.segments[1].start.y = 1e30;
    cases.push((p, "segment 1", "coordinate limit"));
    let mut p = ok_problem();
    p.disks[1].radius = 0.0;
    cases.push((p, "disk 1", "radius"));
    let mut p = ok_problem();
    p.disks[2].radius = -0.5;
    cases.push((p, "disk 2", "radius"));
    let mut p = ok_problem();
    p.disks[0].radius = f32::NAN;
    cases.push((p, "disk 0", "radius"));
    let mut p = ok_problem();
    p.disks[1].normal = Vec3::ZERO;
    cases.push((p, "disk 1", "normal"));
    let mut p = ok_problem();
    p.disks[2].normal = Vec3::new(f32::NAN, 1.0, 0.0);
    cases.push((p, "disk 2", "normal"));
    let mut p = ok_problem();
    p.disks[0].centre = Vec3::new(0.0, f32::NEG_INFINITY, 0.0);
    cases.push((p, "disk 0", "centre"));
    cases
}

#[test]
fn bad_input_names_the_index_on_both_paths() {
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty());
    for method in Density::METHODS {
        let alg = Density { method, ..Default::default() };
        for (p, index, what) in broken() {
            let e = alg.cpu(&p).expect_err(index).to_string();
            assert!(e.contains(index) && e.contains(what), "{method:?}: {e}");
            if let Some(gpu) = &gpu {
                let e = alg.gpu(gpu, &p).expect_err(index).to_string();
                assert!(e.contains(index) && e.contains(what), "{method:?} on the GPU: {e}");
            }
        }
    }
}

#[test]
fn empty_inputs_are_fine() {
    let gpu = test_gpu(lumbre_gpu::wgpu::Features::empty());
    let cases = [
        Problem::default(),
        Problem { segments: vec![], disks: vec![disk(1.0); 4] },
        Problem { segments: vec![seg(Vec3::Y, Vec3::ZERO); 4], disks: vec![] },
    ];
    for method in Density::METHODS {
        let alg = Density { method, ..Default::default() };
        for p in &cases {
            let est = alg.cpu(p).unwrap();
            assert_eq!(est.count, vec![0; p.disks.len()]);
            assert_eq!(est.power, vec![[0.0; 3]; p.disks.len()]);
            if let Some(gpu) = &gpu {
                assert_eq!(alg.gpu(gpu, p).unwrap(), est, "{method:?}");
            }
        }
    }
}
